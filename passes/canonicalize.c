/* canonicalize.c: constant folding and algebraic simplification.
 *
 * Requires: nothing (runs on IR straight from lowering or parsing; ops that do not have the
 * operand and result types the verifier asks for are left alone).
 * Guarantees: no arithmetic, compare, cast or select op whose operands are all constants (scalar
 * or splat) is left when it can be folded exactly: integer ops wrap to their dtype's width (and
 * use its signedness); fp32 and fp64 add, sub, mul, div, rem, neg, abs, floor, ceil and compares
 * are exact in double then rounded once (double has more than 2p+2 bits, so for these ops the
 * double rounding is harmless). Not folded, on purpose: transcendental functions and sqrt (the GPU
 * may use approximations), fp16/bf16 results, int division by zero, shifts by the width or more,
 * casts to i1, float-to-int casts out of range.
 * Also: x+0, 0+x, x-0, x|0, x^0, x<<0, x>>0 and x*0 = 0 (ints); x*1, 1*x, x/1 (ints and floats;
 * x-0.0 for floats); select of a constant condition; splat, broadcast, expand_dims, reshape and
 * trans of a constant become a constant of the result's shape; broadcast, reshape, convert_layout
 * to the same type (and layout), trans by the identity permutation; split(join(x, y)) -> x or y;
 * split(trans(reshape(x))) taking a half of x's last dim -> subtile(x);
 * addptr(p, 0) -> p; and the dot-accumulator fold add(dot(a, b, 0), x) -> dot(a, b, x) when the
 * dot has no other use (Triton's combine pass: lowering writes `acc += tl.dot(a, b)` as a dot with
 * a zero accumulator and an add).
 * Loops: an iter arg of a for that the body yields unchanged (`yield ..., %arg, ...` for its own
 * block argument) holds its init value on every iteration, so its block argument and the loop's
 * result become the init value (loop-invariant; the front end carries a block pointer's base,
 * shapes and strides this way, and axis info and the pipeline see through them only then). The
 * iter arg itself stays, unused, carrying the init value.
 * Replacing a value by another happens only when their types and layouts are equal.
 * Leaves the ops it makes unused in place: dce removes them. */
#include "passes/passes.h"

#include <math.h>
#include <string.h>

typedef struct Canon {
    IrFunc *f;
    int32_t *uses; /* per ValueId, kept current through every rewrite */
    ValueId *repl; /* per ValueId: the value that replaces it (itself when none) */
    bool changed;
} Canon;

/* ---- uses ---------------------------------------------------------------------------------- */

static void count_uses(const IrRegion *r, int32_t *uses, int nvalues)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int j = 0; j < op->noperands; j++)
            if (op->operands[j] >= 0 && op->operands[j] < nvalues)
                uses[op->operands[j]]++;
        for (int j = 0; j < op->nregions; j++)
            count_uses(&op->regions[j], uses, nvalues);
    }
}

static bool same_type_and_layout(const IrFunc *f, ValueId a, ValueId b)
{
    return type_equal(f->values[a].type, f->values[b].type) &&
           f->values[a].layout == f->values[b].layout;
}

/* Every use of op's result 0 becomes `to`. */
static bool replace_result(Canon *c, IrOp *op, ValueId to)
{
    ValueId from = op->results[0];
    if (from == to || !same_type_and_layout(c->f, from, to))
        return false;
    /* Every use comes after the definition in walk order (dominance), so the walk rewrites
     * them as it reaches them: one pass over the function, not one per replacement. */
    c->repl[from] = to;
    c->uses[to] += c->uses[from];
    c->uses[from] = 0;
    c->changed = true;
    return true;
}

/* ---- constants ----------------------------------------------------------------------------- */

typedef struct Const {
    bool is_float;
    int64_t i; /* normalized to the dtype: sign- or zero-extended from its width */
    double f;
} Const;

static bool is_float_type(Type t) { return !t.is_ptr && dtype_is_float(t.dtype); }

/* v wrapped to dtype's width: sign-extended for signed dtypes, zero-extended otherwise. */
static int64_t normalize_int(DType dt, int64_t v)
{
    int bits = dtype_bits(dt);
    if (bits >= 64)
        return v;
    uint64_t mask = (UINT64_C(1) << bits) - 1;
    uint64_t u = (uint64_t)v & mask;
    if (dtype_is_signed(dt) && (u >> (bits - 1)) & 1)
        u |= ~mask;
    return (int64_t)u;
}

static bool const_of(const IrFunc *f, ValueId v, Const *out)
{
    if (v <= 0 || v >= f->nvalues)
        return false;
    const IrOp *def = f->values[v].def;
    if (!def || def->code != OP_CONST || def->nresults != 1)
        return false;
    Type t = f->values[v].type;
    if (t.is_ptr)
        return false;
    out->is_float = is_float_type(t);
    /* A const's fattr is the value as written; the op means it rounded to the dtype. fp8 rounds
     * here exactly (support/float8.c); fp16/bf16 are left unrounded, so the folds that read one
     * as a value (casts, compares) refuse those dtypes. */
    out->f = dtype_is_fp8(t.dtype) ? fp8_round(def->fattr, t.dtype) : def->fattr;
    out->i = out->is_float ? 0 : normalize_int(t.dtype, def->attr[0]);
    return true;
}

static bool const_is(const IrFunc *f, ValueId v, double x)
{
    Const k;
    if (!const_of(f, v, &k))
        return false;
    return k.is_float ? k.f == x : (double)k.i == x;
}

/* Turns op, in place, into `const` of its result type (the result keeps its id and uses). */
static void become_const(Canon *c, IrOp *op, Const k)
{
    for (int i = 0; i < op->noperands; i++)
        c->uses[op->operands[i]]--;
    op->code = OP_CONST;
    op->noperands = 0;
    op->operands = NULL;
    memset(op->attr, 0, sizeof op->attr);
    op->fattr = 0;
    Type t = c->f->values[op->results[0]].type;
    if (k.is_float)
        op->fattr = k.f;
    else
        op->attr[0] = normalize_int(t.dtype, k.i);
    c->changed = true;
}

/* A double rounded to dtype, when tric can do that exactly here (fp32, fp64). */
static bool round_float(DType dt, double x, double *out)
{
    if (dt == DT_F64) {
        *out = x;
        return true;
    }
    if (dt == DT_F32) {
        *out = (double)(float)x;
        return true;
    }
    return false;
}

static uint64_t zext(DType dt, int64_t v)
{
    int bits = dtype_bits(dt);
    return bits >= 64 ? (uint64_t)v : (uint64_t)v & ((UINT64_C(1) << bits) - 1);
}

/* Integer arithmetic with the dtype's width and signedness. */
static bool fold_int_binary(OpCode code, DType dt, int64_t a, int64_t b, int64_t *r)
{
    bool is_signed = dtype_is_signed(dt);
    uint64_t ua = zext(dt, a), ub = zext(dt, b);
    int bits = dtype_bits(dt);
    switch (code) {
    case OP_ADD: *r = (int64_t)((uint64_t)a + (uint64_t)b); break;
    case OP_SUB: *r = (int64_t)((uint64_t)a - (uint64_t)b); break;
    case OP_MUL: *r = (int64_t)((uint64_t)a * (uint64_t)b); break;
    case OP_DIV:
    case OP_REM:
        if (b == 0)
            return false;
        if (is_signed) {
            if (a == INT64_MIN && b == -1) /* only reachable for 64-bit: wraps */
                *r = code == OP_DIV ? INT64_MIN : 0;
            else
                *r = code == OP_DIV ? a / b : a % b; /* C truncation, the table's rule */
        } else {
            *r = (int64_t)(code == OP_DIV ? ua / ub : ua % ub);
        }
        break;
    case OP_MIN: *r = is_signed ? (a < b ? a : b) : (int64_t)(ua < ub ? ua : ub); break;
    case OP_MAX: *r = is_signed ? (a > b ? a : b) : (int64_t)(ua > ub ? ua : ub); break;
    case OP_AND: *r = a & b; break;
    case OP_OR: *r = a | b; break;
    case OP_XOR: *r = a ^ b; break;
    case OP_SHL:
    case OP_SHR:
        if (ub >= (uint64_t)bits) /* PTX clamps, C is undefined: leave it to run time */
            return false;
        if (code == OP_SHL)
            *r = (int64_t)(ua << ub);
        else
            *r = is_signed ? (a >> ub) : (int64_t)(ua >> ub);
        break;
    case OP_UMULHI:
        if (bits == 64)
            *r = (int64_t)(uint64_t)(((unsigned __int128)ua * ub) >> 64);
        else
            *r = (int64_t)((ua * ub) >> bits);
        break;
    default: return false;
    }
    *r = normalize_int(dt, *r);
    return true;
}

static bool fold_float_binary(OpCode code, double a, double b, double *r)
{
    switch (code) {
    case OP_ADD: *r = a + b; return true;
    case OP_SUB: *r = a - b; return true;
    case OP_MUL: *r = a * b; return true;
    case OP_DIV: *r = a / b; return true;
    case OP_REM: *r = fmod(a, b); return true;
    case OP_MIN:
    case OP_MAX:
        /* NaNs and signed zeros differ between minnum and IEEE minimum: leave those. */
        if (isnan(a) || isnan(b) || (a == 0 && b == 0))
            return false;
        *r = (code == OP_MIN) == (a < b) ? a : b;
        return true;
    default: return false;
    }
}

static bool fold_compare(OpCode code, Const a, Const b, DType dt, bool *r)
{
    if (a.is_float) {
        double x = a.f, y = b.f;
        switch (code) {
        case OP_CMP_EQ: *r = x == y; break;
        case OP_CMP_NE: *r = !(x == y); break; /* true for NaN, as the table says */
        case OP_CMP_LT: *r = x < y; break;
        case OP_CMP_LE: *r = x <= y; break;
        case OP_CMP_GT: *r = x > y; break;
        case OP_CMP_GE: *r = x >= y; break;
        default: return false;
        }
        return true;
    }
    bool s = dtype_is_signed(dt);
    uint64_t ux = zext(dt, a.i), uy = zext(dt, b.i);
    int64_t x = a.i, y = b.i;
    switch (code) {
    case OP_CMP_EQ: *r = x == y; break;
    case OP_CMP_NE: *r = x != y; break;
    case OP_CMP_LT: *r = s ? x < y : ux < uy; break;
    case OP_CMP_LE: *r = s ? x <= y : ux <= uy; break;
    case OP_CMP_GT: *r = s ? x > y : ux > uy; break;
    case OP_CMP_GE: *r = s ? x >= y : ux >= uy; break;
    default: return false;
    }
    return true;
}

/* cast: float->float rounds to nearest even, float->int truncates, int->int wraps or extends by
 * the source's signedness (the table's rules). */
static bool fold_cast(Type from, Type to, Const a, Const *r)
{
    if (to.dtype == DT_I1)
        return false; /* int1 conversions are `!= 0` in Triton; leave them to lowering */
    r->is_float = is_float_type(to);
    if (a.is_float && (from.dtype == DT_F16 || from.dtype == DT_BF16))
        return false; /* the operand's value is not rounded to its dtype here (const_of) */
    if (a.is_float && r->is_float)
        return round_float(to.dtype, from.dtype == DT_F32 ? (double)(float)a.f : a.f, &r->f);
    if (a.is_float) {
        double t = trunc(a.f);
        int bits = dtype_bits(to.dtype);
        double lo = dtype_is_signed(to.dtype) ? -ldexp(1, bits - 1) : 0;
        double hi = dtype_is_signed(to.dtype) ? ldexp(1, bits - 1) : ldexp(1, bits);
        if (isnan(t) || t < lo || t >= hi)
            return false;
        r->i = dtype_is_signed(to.dtype) ? (int64_t)t : (int64_t)(uint64_t)t;
        return true;
    }
    /* a.i is already sign- or zero-extended by the source dtype. */
    if (r->is_float) {
        double x = dtype_is_signed(from.dtype) ? (double)a.i : (double)zext(from.dtype, a.i);
        return round_float(to.dtype, x, &r->f);
    }
    r->i = a.i;
    return true;
}

static bool fold_unary(OpCode code, Type t, Const a, Const *r)
{
    r->is_float = a.is_float;
    if (a.is_float) {
        double x = t.dtype == DT_F32 ? (double)(float)a.f : a.f, y;
        switch (code) {
        case OP_NEG: y = -x; break;
        case OP_ABS: y = fabs(x); break;
        case OP_FLOOR: y = floor(x); break;
        case OP_CEIL: y = ceil(x); break;
        default: return false;
        }
        return round_float(t.dtype, y, &r->f);
    }
    switch (code) {
    case OP_NEG: r->i = (int64_t)(0 - (uint64_t)a.i); break;
    case OP_NOT: r->i = ~a.i; break;
    case OP_ABS: /* unsigned values are their own absolute value, even at 2^63 and above */
        r->i = (dtype_is_signed(t.dtype) && a.i < 0) ? (int64_t)(0 - (uint64_t)a.i) : a.i;
        break;
    default: return false;
    }
    r->i = normalize_int(t.dtype, r->i);
    return true;
}

/* ---- rewrites ------------------------------------------------------------------------------ */

static bool is_shape_op(OpCode c)
{
    return c == OP_SPLAT || c == OP_BROADCAST || c == OP_EXPAND_DIMS || c == OP_RESHAPE ||
           c == OP_TRANS;
}

/* Folds op when all its operands are constants. */
static bool try_fold_constants(Canon *c, IrOp *op)
{
    IrFunc *f = c->f;
    if (op->nresults != 1 || op->noperands == 0 || op->noperands > 3 || op->nregions)
        return false;
    Const k[3];
    for (int i = 0; i < op->noperands; i++)
        if (!const_of(f, op->operands[i], &k[i]))
            return false;
    Type rt = f->values[op->results[0]].type;
    if (rt.is_ptr)
        return false;
    Type at = f->values[op->operands[0]].type;
    Const r = {0};
    OpCode code = op->code;
    if (is_shape_op(code) || code == OP_CONVERT_LAYOUT || code == OP_MULTIPLE_OF ||
        code == OP_MAX_CONTIGUOUS) {
        if (code == OP_CONVERT_LAYOUT || code == OP_MULTIPLE_OF || code == OP_MAX_CONTIGUOUS)
            return false; /* layouts and hints are the point of these ops */
        if (at.dtype != rt.dtype)
            return false;
        become_const(c, op, k[0]); /* a constant is the same value everywhere */
        return true;
    }
    if (op->noperands == 2 && (code >= OP_ADD && code <= OP_UMULHI)) {
        if (!type_equal(at, rt) || !type_equal(f->values[op->operands[1]].type, rt))
            return false;
        r.is_float = k[0].is_float;
        if (r.is_float) {
            if (code >= OP_AND)
                return false;
            double x = rt.dtype == DT_F32 ? (double)(float)k[0].f : k[0].f;
            double y = rt.dtype == DT_F32 ? (double)(float)k[1].f : k[1].f;
            double z;
            if (!fold_float_binary(code, x, y, &z) || !round_float(rt.dtype, z, &r.f))
                return false;
        } else if (!fold_int_binary(code, rt.dtype, k[0].i, k[1].i, &r.i)) {
            return false;
        }
        become_const(c, op, r);
        return true;
    }
    if (code >= OP_CMP_EQ && code <= OP_CMP_GE) {
        bool b;
        if (rt.dtype != DT_I1 || k[0].is_float != k[1].is_float ||
            !type_equal(at, f->values[op->operands[1]].type))
            return false;
        if (k[0].is_float && (at.dtype == DT_F16 || at.dtype == DT_BF16))
            return false; /* unrounded operands (const_of) */
        if (k[0].is_float && at.dtype == DT_F32) {
            k[0].f = (double)(float)k[0].f;
            k[1].f = (double)(float)k[1].f;
        }
        if (!fold_compare(code, k[0], k[1], at.dtype, &b))
            return false;
        become_const(c, op, (Const){.i = b});
        return true;
    }
    if (code == OP_CAST) {
        if (!type_same_shape(at, rt) || at.is_ptr || !fold_cast(at, rt, k[0], &r))
            return false;
        become_const(c, op, r);
        return true;
    }
    if (op->noperands == 1 && (code == OP_NEG || code == OP_NOT || code == OP_ABS ||
                               code == OP_FLOOR || code == OP_CEIL)) {
        if (!type_equal(at, rt) || !fold_unary(code, rt, k[0], &r))
            return false;
        become_const(c, op, r);
        return true;
    }
    return false;
}

static bool is_zero(const IrFunc *f, ValueId v) { return const_is(f, v, 0.0); }
static bool is_one(const IrFunc *f, ValueId v) { return const_is(f, v, 1.0); }

/* split(trans(reshape(x, [..., 2, N/2]), [..., R-1, R-2]), h) -> subtile(x, [0, ..., h N/2]):
 * Triton's way of cutting a tile in two halves of its last dim (tutorial 09's EPILOGUE_SUBTILE)
 * takes one of them; rewritten in place, before layouts (no layout on any of the three), so the
 * layout pass can keep the half in the tile's own registers. */
static bool split_to_subtile(Canon *c, IrOp *op)
{
    IrFunc *f = c->f;
    ValueId t = op->operands[0];
    const IrOp *trans = f->values[t].def;
    if (!trans || trans->code != OP_TRANS || (op->attr[0] != 0 && op->attr[0] != 1))
        return false;
    ValueId r = trans->operands[0];
    const IrOp *reshape = f->values[r].def;
    if (!reshape || reshape->code != OP_RESHAPE)
        return false;
    ValueId x = reshape->operands[0];
    Type xt = f->values[x].type, rt = f->values[r].type;
    int R = rt.rank;
    if (xt.is_ptr || R < 2 || xt.rank != R - 1 || rt.shape[R - 2] != 2 ||
        xt.shape[R - 2] != 2 * rt.shape[R - 1] || f->values[x].layout || f->values[r].layout ||
        f->values[t].layout || f->values[op->results[0]].layout)
        return false;
    for (int d = 0; d < R - 2; d++)
        if (xt.shape[d] != rt.shape[d] || trans->attr[d] != d)
            return false;
    if (trans->attr[R - 2] != R - 1 || trans->attr[R - 1] != R - 2)
        return false;
    c->uses[t]--;
    c->uses[x]++;
    op->code = OP_SUBTILE;
    op->operands[0] = x;
    int64_t half = op->attr[0];
    memset(op->attr, 0, sizeof op->attr);
    op->attr[R - 2] = half * rt.shape[R - 1];
    return true;
}

/* Identities that leave an operand (or a constant operand) as the result. */
static bool try_identities(Canon *c, IrOp *op)
{
    IrFunc *f = c->f;
    if (op->nresults != 1 || op->nregions)
        return false;
    Type rt = f->values[op->results[0]].type;
    bool is_int = !rt.is_ptr && dtype_is_int(rt.dtype);
    bool is_float = is_float_type(rt);
    ValueId a = op->noperands > 0 ? op->operands[0] : 0;
    ValueId b = op->noperands > 1 ? op->operands[1] : 0;
    switch (op->code) {
    case OP_ADD:
    case OP_OR:
    case OP_XOR:
        if (!is_int)
            return false;
        if (is_zero(f, b))
            return replace_result(c, op, a);
        if (is_zero(f, a))
            return replace_result(c, op, b);
        return false;
    case OP_SUB:
    case OP_SHL:
    case OP_SHR:
        /* x - 0.0 is x for every x (-0.0 - 0.0 = -0.0); x + 0.0 is not (-0.0 + 0.0 = +0.0). */
        if ((is_int || (is_float && op->code == OP_SUB)) && is_zero(f, b))
            return replace_result(c, op, a);
        return false;
    case OP_MUL:
        if (!is_int && !is_float)
            return false;
        if (is_one(f, b))
            return replace_result(c, op, a);
        if (is_one(f, a))
            return replace_result(c, op, b);
        /* x * 0 = 0 for ints only: for floats NaN * 0 and inf * 0 are NaN, -x * 0 is -0. */
        if (is_int && is_zero(f, b))
            return replace_result(c, op, b);
        if (is_int && is_zero(f, a))
            return replace_result(c, op, a);
        return false;
    case OP_DIV:
        if ((is_int || is_float) && is_one(f, b))
            return replace_result(c, op, a);
        return false;
    case OP_SELECT: {
        Const k;
        if (!const_of(f, a, &k) || k.is_float)
            return false;
        return replace_result(c, op, k.i ? b : op->operands[2]);
    }
    case OP_BROADCAST:
    case OP_RESHAPE:
    case OP_CONVERT_LAYOUT:
        return replace_result(c, op, a); /* only when type and layout are the same */
    case OP_TRANS:
        for (int i = 0; i < rt.rank; i++)
            if (op->attr[i] != i)
                return false;
        return replace_result(c, op, a);
    case OP_SPLIT: { /* split(join(x, y)) is x or y */
        const IrOp *def = f->values[a].def;
        if (def && def->code == OP_JOIN && (op->attr[0] == 0 || op->attr[0] == 1))
            return replace_result(c, op, def->operands[op->attr[0]]);
        return split_to_subtile(c, op);
    }
    case OP_ADDPTR:
        if (is_zero(f, b))
            return replace_result(c, op, a);
        return false;
    default: return false;
    }
}

/* add(dot(a, b, 0), x) -> dot(a, b, x), rewriting the add in place (so x, which may be defined
 * after the dot, is still defined before its use); the old dot loses its only use. */
static bool try_dot_accumulate(Canon *c, IrOp *op)
{
    IrFunc *f = c->f;
    if (op->code != OP_ADD || op->noperands != 2 || op->nresults != 1)
        return false;
    Type rt = f->values[op->results[0]].type;
    if (rt.rank != 2 || rt.is_ptr)
        return false;
    for (int side = 0; side < 2; side++) {
        ValueId d = op->operands[side], x = op->operands[1 - side];
        IrOp *dot = f->values[d].def;
        if (!dot || dot->code != OP_DOT || dot->noperands != 3 || c->uses[d] != 1)
            continue;
        if (!is_zero(f, dot->operands[2]) || !type_equal(f->values[d].type, rt) ||
            !type_equal(f->values[x].type, rt) ||
            (f->values[d].layout != f->values[op->results[0]].layout) ||
            f->values[x].layout != f->values[op->results[0]].layout)
            continue;
        ValueId *ops = arena_alloc(f->arena, 3 * sizeof *ops);
        ops[0] = dot->operands[0];
        ops[1] = dot->operands[1];
        ops[2] = x;
        c->uses[d]--;
        c->uses[ops[0]]++;
        c->uses[ops[1]]++;
        op->code = OP_DOT;
        op->operands = ops;
        op->noperands = 3;
        memset(op->attr, 0, sizeof op->attr);
        op->attr[0] = dot->attr[0];
        op->attr[2] = dot->attr[2]; /* (its partial sums are added into x as into zero) */
        if (dot->loc.file)
            op->loc = dot->loc;
        c->changed = true;
        return true;
    }
    return false;
}

static ValueId resolve(Canon *c, ValueId v)
{
    while (c->repl[v] != v)
        v = c->repl[v] = c->repl[c->repl[v]];
    return v;
}

/* The block argument of each iter arg the body yields unchanged, and the loop's result, become the
 * init value. Their uses inside the body were already walked: the next sweep rewrites them. */
static void try_invariant_iter_args(Canon *c, IrOp *op)
{
    if (op->code != OP_FOR || op->nregions < 1)
        return;
    IrRegion *body = &op->regions[0];
    IrOp *y = body->nops ? body->ops[body->nops - 1] : NULL;
    if (!y || y->code != OP_YIELD)
        return;
    for (int a = 0; a + 1 < body->nargs && 3 + a < op->noperands && a < y->noperands; a++) {
        ValueId arg = body->args[1 + a], init = resolve(c, op->operands[3 + a]);
        if (resolve(c, y->operands[a]) != arg || init == arg ||
            !same_type_and_layout(c->f, arg, init))
            continue;
        c->repl[arg] = init;
        c->uses[init] += c->uses[arg];
        c->uses[arg] = 0;
        if (a < op->nresults && same_type_and_layout(c->f, op->results[a], init)) {
            c->repl[op->results[a]] = init;
            c->uses[init] += c->uses[op->results[a]];
            c->uses[op->results[a]] = 0;
        }
        c->changed = true;
    }
}

static void canon_region(Canon *c, IrRegion *r)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int j = 0; j < op->noperands; j++)
            if (op->operands[j] > 0 && op->operands[j] < c->f->nvalues)
                op->operands[j] = resolve(c, op->operands[j]);
        for (int j = 0; j < op->nregions; j++)
            canon_region(c, &op->regions[j]);
        try_invariant_iter_args(c, op);
        if (try_fold_constants(c, op) || try_identities(c, op) || try_dot_accumulate(c, op))
            continue;
    }
}

bool pass_canonicalize(IrFunc *f, const PassOptions *o, Diag *d)
{
    (void)o;
    (void)d;
    Canon c = {.f = f};
    c.uses = arena_alloc(f->arena, (size_t)(f->nvalues + 1) * sizeof *c.uses);
    c.repl = arena_alloc(f->arena, (size_t)(f->nvalues + 1) * sizeof *c.repl);
    for (int i = 0; i <= f->nvalues; i++)
        c.repl[i] = i;
    count_uses(&f->body, c.uses, f->nvalues);
    /* Each sweep folds what the last one exposed; a chain of n foldable ops needs n sweeps at
     * worst only when it runs backwards through regions, so a small bound is plenty. */
    for (int sweep = 0; sweep < 16; sweep++) {
        c.changed = false;
        canon_region(&c, &f->body);
        if (!c.changed)
            break;
    }
    return true;
}
