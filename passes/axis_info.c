/* axis_info.c: Triton's AxisInfoAnalysis (lib/Analysis/AxisInfo.cpp), simplified.
 *
 * Requires: nothing (runs on any verified IR). Guarantees: IrValue.axis is set for every int (i1
 * included) and pointer value, scalar or block; floats keep NULL. Scalars use index 0.
 *
 * Per dim d (docs/layouts.md has the contract codegen relies on):
 *   contiguity[d]   the value splits along d into aligned groups of this many elements (groups start
 *                   at multiples of it) whose consecutive elements increase by one;
 *   divisibility[d] the largest power of two dividing the first element of every such group; for
 *                   pointers, of the address in bytes (Triton's convention: `tt.divisibility = 16`
 *                   on a pointer argument means a 16-byte aligned address);
 *   constancy[d]    aligned groups of this many elements are equal.
 * Like Triton we reason as if integer arithmetic did not overflow and divisions saw non-negative
 * operands: the facts feed vector widths, where the kernels that matter index with offsets >= 0. */
#include "passes/passes.h"

#include <string.h>

#define DIV_CAP ((int64_t)1 << 30)

typedef struct AxisCtx {
    IrFunc *f;
    Diag *diag;
} AxisCtx;

static int64_t gcd64(int64_t a, int64_t b)
{
    if (a < 0)
        a = -a;
    if (b < 0)
        b = -b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

int64_t axis_pow2_divisor(int64_t v)
{
    if (v == 0)
        return DIV_CAP;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    int64_t p = (int64_t)(u & (~u + 1));
    return p > DIV_CAP || p <= 0 ? DIV_CAP : p;
}

static bool is_tracked(Type t) { return t.is_ptr || dtype_is_int(t.dtype); }

/* Scalars keep their facts in index 0, as a block of one element would. */
static int info_rank(Type t) { return t.rank ? t.rank : 1; }
static int64_t dim_size(Type t, int d) { return t.rank ? t.shape[d] : 1; }

/* Nothing known: every group has one element, every element divisible by 1 only. */
static AxisInfo info_worst(Type t)
{
    AxisInfo a;
    memset(&a, 0, sizeof a);
    for (int d = 0; d < info_rank(t); d++)
        a.contiguity[d] = a.divisibility[d] = a.constancy[d] = 1;
    return a;
}

/* The facts of v, or the worst case when v is untracked or not yet seen. */
static AxisInfo info_of(const AxisCtx *c, ValueId v, Type want)
{
    if (v > 0 && v < c->f->nvalues && c->f->values[v].axis)
        return *c->f->values[v].axis;
    return info_worst(want);
}

/* Clamps every field to the value's shape (no group is longer than its dim) and to >= 1. */
static void info_set(AxisCtx *c, ValueId v, AxisInfo a)
{
    IrValue *val = &c->f->values[v];
    if (!is_tracked(val->type))
        return;
    for (int d = 0; d < info_rank(val->type); d++) {
        int64_t n = dim_size(val->type, d);
        a.contiguity[d] = a.contiguity[d] < 1 ? 1 : min64(a.contiguity[d], n);
        a.constancy[d] = a.constancy[d] < 1 ? 1 : min64(a.constancy[d], n);
        a.divisibility[d] = a.divisibility[d] < 1 ? 1 : min64(a.divisibility[d], DIV_CAP);
    }
    if (!val->axis)
        val->axis = arena_alloc(c->f->arena, sizeof *val->axis);
    *val->axis = a;
}

/* Triton's join: what holds on both paths. */
static AxisInfo info_meet(AxisInfo a, AxisInfo b, int rank)
{
    for (int d = 0; d < rank; d++) {
        a.contiguity[d] = gcd64(a.contiguity[d], b.contiguity[d]);
        a.divisibility[d] = gcd64(a.divisibility[d], b.divisibility[d]);
        a.constancy[d] = gcd64(a.constancy[d], b.constancy[d]);
    }
    return a;
}

ValueId passes_const_i32(IrBuilder *b, SrcLoc loc, int64_t v)
{
    return ir_build_const_int(b, loc, type_scalar(DT_I32), v);
}

ValueId passes_binary(IrBuilder *b, SrcLoc loc, OpCode code, ValueId a, ValueId c)
{
    Type t = code >= OP_CMP_EQ && code <= OP_CMP_GE ? type_scalar(DT_I1) : ir_type(b->func, a);
    return ir_build_binary(b, code, loc, t, a, c);
}

ValueId passes_trip_count(IrBuilder *b, SrcLoc loc, const IrOp *loop, int64_t step)
{
    Type i32 = type_scalar(DT_I32);
    ValueId span = ir_build_binary(b, OP_SUB, loc, i32, loop->operands[1], loop->operands[0]);
    ValueId up = ir_build_binary(b, OP_ADD, loc, i32, span, passes_const_i32(b, loc, step - 1));
    ValueId trips = ir_build_binary(b, OP_DIV, loc, i32, up, loop->operands[2]);
    return ir_build_binary(b, OP_MAX, loc, i32, trips, passes_const_i32(b, loc, 0));
}

bool passes_i32_counter(const IrFunc *f, const IrOp *loop)
{
    const IrRegion *r = &loop->regions[0];
    if (r->nargs < 1)
        return false;
    Type t = ir_type(f, r->args[0]);
    return t.rank == 0 && !t.is_ptr && t.dtype == DT_I32;
}

const IrOp *passes_only_loop(const IrRegion *r)
{
    const IrOp *found = NULL;
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        if (op->code == OP_WHILE || (op->code == OP_FOR && found))
            return NULL;
        if (op->code == OP_FOR)
            found = op;
    }
    return found;
}

/* ids with v appended (n of them before), in a new array of the arena */
static ValueId *append_id(IrFunc *f, const ValueId *ids, int n, ValueId v)
{
    ValueId *out = arena_alloc(f->arena, sizeof(ValueId) * (size_t)(n + 1));
    if (n > 0)
        memcpy(out, ids, sizeof(ValueId) * (size_t)n);
    out[n] = v;
    return out;
}

ValueId passes_add_iter_arg(IrFunc *f, IrOp *loop, ValueId init, Type t, const char *name)
{
    loop->operands = append_id(f, loop->operands, loop->noperands++, init);
    ValueId r = ir_value_new(f, t, name);
    f->values[r].def = loop;
    f->values[r].index = loop->nresults;
    loop->results = append_id(f, loop->results, loop->nresults++, r);
    IrRegion *body = &loop->regions[0];
    IrOp *y = body->ops[body->nops - 1];
    y->operands = append_id(f, y->operands, y->noperands++, 0);
    return ir_region_add_arg(f, body, t, name);
}

bool passes_holds_loop(const IrOp *loop)
{
    const IrRegion *body = &loop->regions[0];
    for (int i = 0; i < body->nops; i++)
        if (body->ops[i]->code == OP_FOR || body->ops[i]->code == OP_WHILE)
            return true;
    return false;
}

static bool info_equal(const AxisInfo *a, const AxisInfo *b, int rank)
{
    for (int d = 0; d < rank; d++)
        if (a->contiguity[d] != b->contiguity[d] || a->divisibility[d] != b->divisibility[d] ||
            a->constancy[d] != b->constancy[d])
            return false;
    return true;
}

/* The integer every element of v equals, when the IR says so (a const, possibly splatted,
 * broadcast, expanded or converted). */
bool passes_const_int(const IrFunc *f, ValueId v, int64_t *out)
{
    for (int guard = 0; guard < 16 && v > 0; guard++) {
        const IrOp *def = f->values[v].def;
        if (!def)
            return false;
        switch (def->code) {
        case OP_CONST:
            if (dtype_is_float(f->values[v].type.dtype) || f->values[v].type.is_ptr)
                return false;
            *out = def->attr[0];
            return true;
        case OP_SPLAT:
        case OP_BROADCAST:
        case OP_EXPAND_DIMS:
        case OP_CONVERT_LAYOUT: v = def->operands[0]; break;
        default: return false;
        }
    }
    return false;
}

/* ---- transfer functions ----------------------------------------------------------------------- */

/* add, sub and addptr (Triton's AddSubOpAxisInfoVisitor). elem_bytes scales the right side's
 * divisibility for addptr (pointer divisibility is in bytes); 0 for plain integers. */
static AxisInfo visit_add(AxisInfo l, AxisInfo r, int rank, bool is_sub, int elem_bytes)
{
    AxisInfo a = info_worst((Type){0});
    for (int d = 0; d < rank; d++) {
        int64_t c = gcd64(l.contiguity[d], r.constancy[d]);
        if (!is_sub)
            c = max64(c, gcd64(l.constancy[d], r.contiguity[d]));
        a.contiguity[d] = c;
        int64_t rdiv =
            elem_bytes ? min64(r.divisibility[d] * elem_bytes, DIV_CAP) : r.divisibility[d];
        a.divisibility[d] = gcd64(l.divisibility[d], rdiv);
        a.constancy[d] = gcd64(l.constancy[d], r.constancy[d]);
    }
    return a;
}

/* mul (Triton's MulIOpAxisInfoVisitor): a contiguous run multiplied by anything but 1 is no longer
 * contiguous, and only its first element carries the divisibility, so it counts as 1. */
static AxisInfo visit_mul(AxisInfo l, AxisInfo r, int rank, bool l_is_1, bool r_is_1)
{
    AxisInfo a = info_worst((Type){0});
    for (int d = 0; d < rank; d++) {
        a.contiguity[d] = r_is_1 ? l.contiguity[d] : (l_is_1 ? r.contiguity[d] : 1);
        int64_t ld = (l.contiguity[d] > 1 && !r_is_1) ? 1 : l.divisibility[d];
        int64_t rd = (r.contiguity[d] > 1 && !l_is_1) ? 1 : r.divisibility[d];
        a.divisibility[d] = min64(ld * rd, DIV_CAP);
        a.constancy[d] = gcd64(l.constancy[d], r.constancy[d]);
    }
    return a;
}

/* Integer division by a constant c: a contiguous run starting at a multiple of g (g | c) gives
 * equal quotients over aligned groups of g (Triton's DivOpAxisInfoVisitor). */
static AxisInfo visit_div(AxisInfo l, AxisInfo r, int rank, bool r_known, int64_t c)
{
    AxisInfo a = info_worst((Type){0});
    for (int d = 0; d < rank; d++) {
        a.constancy[d] = gcd64(l.constancy[d], r.constancy[d]);
        if (r_known && c == 1) {
            a = l;
            break;
        }
        if (r_known && c > 0) {
            int64_t g = gcd64(l.contiguity[d], gcd64(l.divisibility[d], axis_pow2_divisor(c)));
            a.constancy[d] = max64(a.constancy[d], g);
            int64_t p = axis_pow2_divisor(c);
            if (p == c && l.contiguity[d] == 1 && l.divisibility[d] >= c)
                a.divisibility[d] = l.divisibility[d] / c;
        }
    }
    return a;
}

/* rem (Triton's RemOpAxisInfoVisitor): x % m keeps runs of x that do not cross a multiple of m;
 * with m divisible by p and runs aligned to multiples of their length, runs of gcd(len, p). */
static AxisInfo visit_rem(AxisInfo l, AxisInfo r, int rank, const int32_t *shape, int srank)
{
    AxisInfo a = info_worst((Type){0});
    for (int d = 0; d < rank; d++) {
        int64_t n = srank ? shape[d] : 1;
        bool r_const = r.constancy[d] >= n;
        a.contiguity[d] = r_const ? gcd64(l.contiguity[d], r.divisibility[d]) : 1;
        a.divisibility[d] = gcd64(l.divisibility[d], r.divisibility[d]);
        a.constancy[d] = gcd64(l.constancy[d], r.constancy[d]);
    }
    return a;
}

/* Comparisons (Triton's CmpOpAxisInfoVisitor): x < n with x contiguous from a multiple of g and n
 * a multiple of g is constant over aligned groups of g. That is what lets a masked access be
 * vectorized when n_elements carries a :16 hint. */
static AxisInfo visit_cmp(AxisInfo l, AxisInfo r, int rank, const int32_t *shape, int srank)
{
    AxisInfo a = info_worst((Type){0});
    for (int d = 0; d < rank; d++) {
        int64_t n = srank ? shape[d] : 1;
        int64_t k = gcd64(l.constancy[d], r.constancy[d]);
        if (l.contiguity[d] > 1 && r.constancy[d] >= n)
            k = max64(k, gcd64(l.contiguity[d], gcd64(l.divisibility[d], r.divisibility[d])));
        if (r.contiguity[d] > 1 && l.constancy[d] >= n)
            k = max64(k, gcd64(r.contiguity[d], gcd64(r.divisibility[d], l.divisibility[d])));
        a.constancy[d] = k;
    }
    return a;
}

/* Any other elementwise op: equal inputs give equal outputs, nothing more. */
static AxisInfo visit_generic(const AxisInfo *ins, int nins, int rank)
{
    AxisInfo a = info_worst((Type){0});
    for (int d = 0; d < rank; d++) {
        int64_t k = ins[0].constancy[d];
        for (int i = 1; i < nins; i++)
            k = gcd64(k, ins[i].constancy[d]);
        a.constancy[d] = k;
    }
    return a;
}

/* The divisibility every single element has (not just the first of a run): along a dim where
 * runs have length 1 the run's first element is every element. */
static int64_t every_element_div(AxisInfo a, Type t)
{
    int64_t best = 1;
    for (int d = 0; d < info_rank(t); d++)
        if (a.contiguity[d] == 1 || dim_size(t, d) == 1)
            best = max64(best, a.divisibility[d]);
    return best;
}

static void visit_region(AxisCtx *c, IrRegion *r);

/* A for, if or while: region args from the inits, met with what the body yields, until nothing
 * changes (gcd only goes down, so this ends; a guard falls back to the worst case). */
static void visit_for(AxisCtx *c, IrOp *op)
{
    IrFunc *f = c->f;
    IrRegion *body = &op->regions[0];
    int niters = op->noperands - 3;
    /* The induction variable lo + i*step: divisible by what divides both. */
    if (body->nargs > 0) {
        ValueId iv = body->args[0];
        Type t = ir_type(f, iv);
        AxisInfo lo = info_of(c, op->operands[0], t), step = info_of(c, op->operands[2], t);
        AxisInfo a = info_worst(t);
        a.divisibility[0] = gcd64(lo.divisibility[0], step.divisibility[0]);
        info_set(c, iv, a);
    }
    for (int i = 0; i < niters && 1 + i < body->nargs; i++) {
        ValueId arg = body->args[1 + i];
        info_set(c, arg, info_of(c, op->operands[3 + i], ir_type(f, arg)));
    }
    bool stable = false;
    for (int round = 0; round < 8 && !stable; round++) {
        visit_region(c, body);
        stable = true;
        IrOp *yield = body->nops ? body->ops[body->nops - 1] : NULL;
        if (!yield || yield->code != OP_YIELD)
            break;
        for (int i = 0; i < niters && i < yield->noperands && 1 + i < body->nargs; i++) {
            ValueId arg = body->args[1 + i];
            Type t = ir_type(f, arg);
            if (!is_tracked(t))
                continue;
            AxisInfo old = info_of(c, arg, t);
            AxisInfo met = info_meet(old, info_of(c, yield->operands[i], t), info_rank(t));
            if (!info_equal(&old, &met, info_rank(t))) {
                info_set(c, arg, round == 7 ? info_worst(t) : met);
                stable = false;
            }
        }
    }
    if (!stable)
        visit_region(c, body);
    for (int i = 0; i < op->nresults && 1 + i < body->nargs; i++)
        info_set(c, op->results[i], info_of(c, body->args[1 + i], ir_type(f, op->results[i])));
}

static void visit_if(AxisCtx *c, IrOp *op)
{
    for (int k = 0; k < op->nregions; k++)
        visit_region(c, &op->regions[k]);
    for (int i = 0; i < op->nresults; i++) {
        Type t = ir_type(c->f, op->results[i]);
        AxisInfo a = info_worst(t);
        bool first = true;
        for (int k = 0; k < op->nregions; k++) {
            IrRegion *r = &op->regions[k];
            IrOp *y = r->nops ? r->ops[r->nops - 1] : NULL;
            AxisInfo yi = (y && y->code == OP_YIELD && i < y->noperands)
                              ? info_of(c, y->operands[i], t)
                              : info_worst(t);
            a = first ? yi : info_meet(a, yi, info_rank(t));
            first = false;
        }
        info_set(c, op->results[i], first ? info_worst(t) : a);
    }
}

/* while: the worst case for its region args and results (loops of unknown trip structure rarely
 * carry the pointers of wide accesses). */
static void visit_while(AxisCtx *c, IrOp *op)
{
    for (int k = 0; k < op->nregions; k++) {
        IrRegion *r = &op->regions[k];
        for (int i = 0; i < r->nargs; i++)
            info_set(c, r->args[i], info_worst(ir_type(c->f, r->args[i])));
        visit_region(c, r);
    }
    for (int i = 0; i < op->nresults; i++)
        info_set(c, op->results[i], info_worst(ir_type(c->f, op->results[i])));
}

/* The axis info of an op that makes a block, moves its elements or states a hint about them
 * (const, make_range, splat, broadcast, expand_dims, trans, reshape, convert_layout,
 * multiple_of, max_contiguous) into *a, which holds the worst case; false for any other op. */
static bool shape_op_info(AxisCtx *c, const IrOp *op, Type t, const AxisInfo *in, AxisInfo *a)
{
    IrFunc *f = c->f;
    int rank = info_rank(t);
    switch (op->code) {
    case OP_CONST:
        for (int d = 0; d < rank; d++) {
            a->divisibility[d] = axis_pow2_divisor(op->attr[0]);
            a->constancy[d] = dim_size(t, d);
        }
        break;
    case OP_UNDEF:
        /* the join's identity: nothing reads it on a path that runs, so what the other paths
         * into a phi prove holds (a flattened loop's carried tile offsets stay contiguous) */
        for (int d = 0; d < rank; d++) {
            a->contiguity[d] = dim_size(t, d);
            a->divisibility[d] = DIV_CAP;
            a->constancy[d] = dim_size(t, d);
        }
        break;
    case OP_MAKE_RANGE:
        a->contiguity[0] = op->attr[1] - op->attr[0];
        a->divisibility[0] = axis_pow2_divisor(op->attr[0]);
        break;
    case OP_WORKSPACE:
        /* cuMemAlloc's 256-byte alignment; the scratch starts at a 256-byte boundary (the
         * runtime's layout, docs/runtime.md "Persistent kernels") */
        a->divisibility[0] = 256;
        break;
    case OP_SPLAT:
        for (int d = 0; d < rank; d++) {
            a->divisibility[d] = in[0].divisibility[0];
            a->constancy[d] = dim_size(t, d);
        }
        break;
    case OP_BROADCAST: {
        Type ot = ir_type(f, op->operands[0]);
        for (int d = 0; d < rank; d++) {
            if (ot.rank == t.rank && ot.shape[d] == 1 && t.shape[d] > 1) {
                a->contiguity[d] = 1;
                a->divisibility[d] = every_element_div(in[0], ot);
                a->constancy[d] = t.shape[d];
            } else if (ot.rank == t.rank) {
                a->contiguity[d] = in[0].contiguity[d];
                a->divisibility[d] = in[0].divisibility[d];
                a->constancy[d] = in[0].constancy[d];
            }
        }
        break;
    }
    case OP_EXPAND_DIMS: {
        Type ot = ir_type(f, op->operands[0]);
        int axis = (int)op->attr[0];
        int src = 0;
        for (int d = 0; d < rank; d++) {
            if (d == axis) {
                a->divisibility[d] = every_element_div(in[0], ot);
                continue;
            }
            a->contiguity[d] = in[0].contiguity[src];
            a->divisibility[d] = in[0].divisibility[src];
            a->constancy[d] = in[0].constancy[src];
            src++;
        }
        break;
    }
    case OP_TRANS:
        for (int d = 0; d < rank; d++) {
            int s = (int)op->attr[d];
            a->contiguity[d] = in[0].contiguity[s];
            a->divisibility[d] = in[0].divisibility[s];
            a->constancy[d] = in[0].constancy[s];
        }
        break;
    case OP_RESHAPE: {
        Type ot = ir_type(f, op->operands[0]);
        bool all_const = true;
        for (int d = 0; d < info_rank(ot); d++)
            all_const = all_const && in[0].constancy[d] >= dim_size(ot, d);
        for (int d = 0; d < rank; d++) {
            a->divisibility[d] = every_element_div(in[0], ot);
            if (all_const)
                a->constancy[d] = dim_size(t, d);
        }
        break;
    }
    case OP_CONVERT_LAYOUT: *a = in[0]; break;
    case OP_MULTIPLE_OF:
        *a = in[0];
        for (int d = 0; d < rank; d++)
            if (op->attr[d] > 0)
                a->divisibility[d] = max64(a->divisibility[d], axis_pow2_divisor(op->attr[d]));
        break;
    case OP_MAX_CONTIGUOUS:
        *a = in[0];
        for (int d = 0; d < rank; d++)
            if (op->attr[d] > 0)
                a->contiguity[d] = max64(a->contiguity[d], op->attr[d]);
        break;
    default: return false;
    }
    return true;
}

/* The axis info of an arithmetic, comparison or select op into *a, which holds the worst case
 * (and keeps it for the ops nothing is known of: program_id, num_programs, load, reductions,
 * argmax, dot). */
static void arith_op_info(AxisCtx *c, const IrOp *op, Type t, const AxisInfo *in, AxisInfo *a)
{
    IrFunc *f = c->f;
    int rank = info_rank(t);
    int64_t k1;
    switch (op->code) {
    case OP_ADD: *a = visit_add(in[0], in[1], rank, false, 0); break;
    case OP_SUB: *a = visit_add(in[0], in[1], rank, true, 0); break;
    case OP_ADDPTR: *a = visit_add(in[0], in[1], rank, false, dtype_bytes(t.dtype)); break;
    case OP_MUL: {
        int64_t lv = 0, rv = 0;
        bool l1 = passes_const_int(f, op->operands[0], &lv) && lv == 1;
        bool r1 = passes_const_int(f, op->operands[1], &rv) && rv == 1;
        *a = visit_mul(in[0], in[1], rank, l1, r1);
        break;
    }
    case OP_DIV: {
        bool known = passes_const_int(f, op->operands[1], &k1);
        *a = visit_div(in[0], in[1], rank, known, known ? k1 : 0);
        break;
    }
    case OP_REM: *a = visit_rem(in[0], in[1], rank, t.shape, t.rank); break;
    case OP_SHL:
        *a = visit_generic(in, 2, rank);
        if (passes_const_int(f, op->operands[1], &k1) && k1 >= 0 && k1 < 31)
            for (int d = 0; d < rank; d++)
                a->divisibility[d] =
                    min64((in[0].contiguity[d] > 1 ? 1 : in[0].divisibility[d]) << k1, DIV_CAP);
        break;
    case OP_MIN:
    case OP_MAX:
        *a = visit_generic(in, 2, rank);
        for (int d = 0; d < rank; d++)
            a->divisibility[d] = gcd64(every_element_div(in[0], t), every_element_div(in[1], t));
        break;
    case OP_CMP_EQ:
    case OP_CMP_NE:
    case OP_CMP_LT:
    case OP_CMP_LE:
    case OP_CMP_GT:
    case OP_CMP_GE: {
        Type ot = ir_type(f, op->operands[0]);
        *a = visit_cmp(in[0], in[1], rank, ot.shape, ot.rank);
        break;
    }
    case OP_SELECT:
        for (int d = 0; d < rank; d++) {
            a->contiguity[d] =
                gcd64(in[0].constancy[d], gcd64(in[1].contiguity[d], in[2].contiguity[d]));
            a->divisibility[d] = gcd64(in[1].divisibility[d], in[2].divisibility[d]);
            a->constancy[d] =
                gcd64(in[0].constancy[d], gcd64(in[1].constancy[d], in[2].constancy[d]));
        }
        break;
    case OP_NEG:
    case OP_ABS:
        *a = visit_generic(in, 1, rank);
        for (int d = 0; d < rank; d++)
            a->divisibility[d] = every_element_div(in[0], t);
        break;
    case OP_CAST:
    case OP_BITCAST: {
        Type ot = ir_type(f, op->operands[0]);
        /* int -> int (and pointer -> pointer of the same pointee size) keep their facts. */
        if (is_tracked(ot) && ot.is_ptr == t.is_ptr && info_rank(ot) == rank)
            *a = in[0];
        break;
    }
    case OP_AND:
    case OP_OR:
    case OP_XOR:
    case OP_SHR:
    case OP_UMULHI:
    case OP_NOT:
    case OP_FMA: *a = visit_generic(in, op->noperands < 3 ? op->noperands : 3, rank); break;
    default:
        /* program_id, num_programs, load, reductions, argmax, dot: nothing known (Triton gives
         * program_id divisibility 1 too). */
        break;
    }
}

/* One op: its regions first, then its first result's facts from its operands' (the others get
 * the worst case). */
static void visit_op(AxisCtx *c, IrOp *op)
{
    IrFunc *f = c->f;
    switch (op->code) {
    case OP_FOR: visit_for(c, op); return;
    case OP_IF: visit_if(c, op); return;
    case OP_WHILE: visit_while(c, op); return;
    default: break;
    }
    for (int k = 0; k < op->nregions; k++)
        visit_region(c, &op->regions[k]);
    if (op->nresults < 1)
        return;
    ValueId res = op->results[0];
    Type t = ir_type(f, res);
    if (!is_tracked(t)) {
        for (int i = 0; i < op->nresults; i++)
            if (is_tracked(ir_type(f, op->results[i])))
                info_set(c, op->results[i], info_worst(ir_type(f, op->results[i])));
        return;
    }
    AxisInfo in[3];
    for (int i = 0; i < op->noperands && i < 3; i++) {
        ValueId v = op->operands[i];
        Type ot = v > 0 ? ir_type(f, v) : t;
        in[i] = info_of(c, v, ot);
    }
    AxisInfo a = info_worst(t);
    if (!shape_op_info(c, op, t, in, &a))
        arith_op_info(c, op, t, in, &a);
    info_set(c, res, a);
    for (int i = 1; i < op->nresults; i++)
        if (is_tracked(ir_type(f, op->results[i])))
            info_set(c, op->results[i], info_worst(ir_type(f, op->results[i])));
}

static void visit_region(AxisCtx *c, IrRegion *r)
{
    for (int i = 0; i < r->nargs; i++)
        if (!c->f->values[r->args[i]].axis && is_tracked(ir_type(c->f, r->args[i])))
            info_set(c, r->args[i], info_worst(ir_type(c->f, r->args[i])));
    for (int i = 0; i < r->nops; i++)
        visit_op(c, r->ops[i]);
}

bool pass_axis_info(IrFunc *f, const PassOptions *o, Diag *d)
{
    (void)o;
    AxisCtx c = {.f = f, .diag = d};
    for (ValueId v = 1; v < f->nvalues; v++)
        f->values[v].axis = NULL;
    /* Seeds: a ":16" hint on a pointer says its address is 16-byte aligned; on an int that the
     * value is a multiple of 16. No hint: an int is divisible by 1; a pointer by its element size,
     * the natural alignment every access through it already needs (C11 6.2.8; PTX ISA 5.4.2: a
     * ld/st address must be aligned to the access size). */
    for (int i = 0; i < f->nparams; i++) {
        const IrParam *p = &f->params[i];
        Type t = ir_type(f, p->value);
        if (!is_tracked(t))
            continue;
        AxisInfo a = info_worst(t);
        a.divisibility[0] = p->divisibility > 0 ? axis_pow2_divisor(p->divisibility) : 1;
        if (t.is_ptr && a.divisibility[0] < dtype_bytes(t.dtype))
            a.divisibility[0] = dtype_bytes(t.dtype);
        info_set(&c, p->value, a);
    }
    visit_region(&c, &f->body);
    return true;
}
