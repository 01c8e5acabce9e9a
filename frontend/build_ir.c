/* build_ir.c: the typed, specialized AST (sema's Kernel) -> tile IR (ir.h). ("Lowering" is
 * codegen's word, for tile IR -> LLVM IR.)
 *
 * Requires: sema ran; every reachable Expr has sem (SEM_VALUE with a Type, SEM_CONST with a
 * ConstVal), constexpr ifs are decided, static_range loops unrolled, helper calls inlined.
 * Guarantees: an IrFunc in which every elementwise op has operands of one shape and (for
 * arithmetic) one dtype, every op carries the SrcLoc of the .tri expression it came from, and
 * control flow is structured (for / if / while regions ending in yield / condition).
 *
 * Every type comes from sema: Triton's typing rules (computation_type_impl, integer_promote_impl,
 * broadcasting, the dtypes of reductions and dot) live in sema only (sema_types.c,
 * sema_builtins.c), and building the IR converts operands to the types sema recorded (Expr.sem: the
 * result type, Sem.compute_dtype). What a builtin call does comes from sema too: its
 * ResolvedCall (Expr.call.resolved) holds the normalised axes and permutation, the combine op,
 * the dtype the operation runs in and the constexpr arguments, and each builtin's IR builder (its
 * row of TRIC_BUILTINS) reads them. This file decides only how to build them
 * (python/triton/language/semantic.py and code_generator.py): implicit conversions cast then
 * broadcast (leading dims added with expand_dims, size-1 dims stretched), `//` and `%` on ints
 * truncate as in C, a run-time if yields the live-in variables either branch reassigns plus those
 * both branches define, and a loop carries the live-in variables its body reassigns. Sema
 * reports every error in the user's kernel; what cannot be built here is a bug in tric
 * (build_internal: an internal error naming the .tri position). */
#include "frontend/frontend.h"
#include "ir/ir.h"

#include <math.h>
#include <string.h>

/* ---- what an expression builds to --------------------------------------------------------- */

typedef enum LValKind {
    LV_NONE,  /* nothing (a store, a static_assert, None) */
    LV_VALUE, /* id: a run-time scalar or block */
    LV_CONST, /* csem: a constexpr, materialized only where a run-time value is needed */
    LV_TUPLE, /* elems, n: a tuple of the above (helper returns, `a, b = b, a`) */
} LValKind;

typedef struct LVal {
    LValKind kind;
    ValueId id;
    const Sem *csem;
    struct LVal *elems;
    int n;
} LVal;

/* One Python variable in scope. Scopes are copies: a region builds with a copy of its parent's
 * bindings, and what changed in the copy decides the region's results. */
typedef struct Binding {
    const char *name;
    LVal val;
} Binding;

typedef struct Env {
    Binding *items;
    int n, cap;
} Env;

/* What runs after the statement being built: the rest of its block, then the rest of the
 * enclosing blocks, up to the end of the kernel. A run-time `if` that returns from the kernel
 * builds this continuation into its branches (our IR has no early exit). */
typedef struct Cont {
    const Block *block;
    int start;
    const struct Cont *next;
} Cont;

typedef struct AstToIr {
    IrFunc *f;
    Arena *arena;
    Diag *diag;
    IrBuilder b; /* where ops go now */
    Env *env;    /* the variables in scope now */
    /* The function whose body is being built (kernel or inlined helper): its return value,
     * whether a return was met (the rest of the body is then skipped), and how many run-time
     * regions deep we are inside it (a return there cannot be expressed). */
    LVal ret;
    bool returned;
    int region_depth;
    int helper_depth; /* inlined helpers we are inside; 0: the kernel's own body */
    const Cont *cont; /* the continuation of the statement being built (kernel level only) */
    bool failed;
} AstToIr;

static LVal build_expr(AstToIr *bld, const Expr *e);
static void build_block(AstToIr *bld, const Block *b);

/* Something sema rules out reached IR building: a bug in tric, not in the kernel. Reported as an
 * internal error (build_ir.c's file and line) that also names the .tri position it was building. */
#define build_internal(bld, loc, ...)                                                              \
    build_internal_at((bld), __FILE__, __LINE__, (loc), __VA_ARGS__)
static void build_internal_at(AstToIr *bld, const char *file, int line, SrcLoc loc, const char *fmt,
                              ...) TRIC_PRINTF(5, 6);
static void build_internal_at(AstToIr *bld, const char *file, int line, SrcLoc loc, const char *fmt,
                              ...)
{
    StrBuf msg = {0};
    va_list ap;
    va_start(ap, fmt);
    strbuf_vprintf(&msg, fmt, ap);
    va_end(ap);
    diag_internal(bld->diag, file, line, "%s (building the IR of %s:%d:%d)",
                  msg.data ? msg.data : "", loc.file ? loc.file->name : "?", loc.line, loc.col);
    strbuf_free(&msg);
    bld->failed = true;
}

static LVal lv_none(void) { return (LVal){.kind = LV_NONE}; }
static LVal lv_value(ValueId id) { return (LVal){.kind = LV_VALUE, .id = id}; }
static LVal lv_const(const Sem *s) { return (LVal){.kind = LV_CONST, .csem = s}; }

static bool lval_equal(const LVal *a, const LVal *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case LV_NONE: return true;
    case LV_VALUE: return a->id == b->id;
    case LV_CONST: return a->csem == b->csem;
    case LV_TUPLE:
        if (a->n != b->n)
            return false;
        for (int i = 0; i < a->n; i++)
            if (!lval_equal(&a->elems[i], &b->elems[i]))
                return false;
        return true;
    }
    return false;
}

/* ---- environments ---------------------------------------------------------------------------- */

static Env *env_new(AstToIr *bld) { return arena_alloc(bld->arena, sizeof(Env)); }

static Env *env_copy(AstToIr *bld, const Env *from)
{
    Env *e = env_new(bld);
    for (int i = 0; i < from->n; i++)
        ARENA_PUSH(bld->arena, e->items, e->n, e->cap, from->items[i]);
    return e;
}

static Binding *env_find(const Env *env, const char *name)
{
    for (int i = 0; i < env->n; i++)
        if (strcmp(env->items[i].name, name) == 0)
            return &env->items[i];
    return NULL;
}

static void env_set(AstToIr *bld, Env *env, const char *name, LVal v)
{
    Binding *b = env_find(env, name);
    if (b) {
        b->val = v;
        return;
    }
    Binding nb = {.name = name, .val = v};
    ARENA_PUSH(bld->arena, env->items, env->n, env->cap, nb);
}

/* Names the IR value after the variable it is bound to, the first time it is bound. */
static void name_value(AstToIr *bld, ValueId id, const char *name)
{
    if (id > 0 && !ir_value(bld->f, id)->name)
        ir_value(bld->f, id)->name = name;
}

/* ---- types ------------------------------------------------------------------------------------- */

static Type with_dtype(Type t, DType d)
{
    t.dtype = d;
    t.is_ptr = false;
    return t;
}

/* elem's element type in shape's shape. */
static Type with_shape(Type elem, Type shape)
{
    shape.dtype = elem.dtype;
    shape.is_ptr = elem.is_ptr;
    return shape;
}

static bool same_elem(Type a, Type b) { return a.dtype == b.dtype && a.is_ptr == b.is_ptr; }

static bool const_is_numeric(const Sem *s)
{
    return s->kind == SEM_CONST &&
           (s->cv.kind == CV_INT || s->cv.kind == CV_FLOAT || s->cv.kind == CV_BOOL);
}

/* The scalar type a numeric constant takes as a run-time value: the one sema recorded with it
 * (sema.c sem_const: Triton's to_tensor types; or the parameter's type for a ':1' argument). */
static Type const_type(const Sem *s) { return type_elem(s->type); }

/* ---- emitting ops ------------------------------------------------------------------------------ */

static IrOp *emit(AstToIr *bld, OpCode code, SrcLoc loc, const ValueId *ops, int nops,
                  const Type *results, int nresults, int nregions)
{
    return ir_build(&bld->b, code, loc, ops, nops, results, nresults, nregions);
}

static ValueId emit1(AstToIr *bld, OpCode code, SrcLoc loc, Type t, ValueId a)
{
    return ir_build_unary(&bld->b, code, loc, t, a);
}

static ValueId emit2(AstToIr *bld, OpCode code, SrcLoc loc, Type t, ValueId a, ValueId b)
{
    return ir_build_binary(&bld->b, code, loc, t, a, b);
}

static ValueId emit3(AstToIr *bld, OpCode code, SrcLoc loc, Type t, ValueId a, ValueId b, ValueId c)
{
    ValueId ops[3] = {a, b, c};
    return emit(bld, code, loc, ops, 3, &t, 1, 0)->results[0];
}

static Type vtype(AstToIr *bld, ValueId v) { return ir_type(bld->f, v); }

/* A constant of type t (scalar or block: OP_CONST splats) holding the numeric constexpr cv. */
static ValueId emit_const_cv(AstToIr *bld, SrcLoc loc, Type t, const ConstVal *cv)
{
    double fv = cv->kind == CV_FLOAT  ? cv->f
                : cv->kind == CV_BOOL ? (cv->b ? 1.0 : 0.0)
                                      : (double)cv->i;
    int64_t iv = cv->kind == CV_FLOAT  ? (int64_t)cv->f
                 : cv->kind == CV_BOOL ? (int64_t)cv->b
                                       : cv->i;
    if (t.is_ptr) {
        build_internal(bld, loc, "a constant cannot be used as a pointer");
        t = with_dtype(t, DT_I64);
    }
    if (dtype_is_float(t.dtype))
        return ir_build_const_float(&bld->b, loc, t, fv);
    if (t.dtype == DT_I1)
        iv = cv->kind == CV_FLOAT ? (cv->f != 0.0) : (iv != 0);
    return ir_build_const_int(&bld->b, loc, t, iv);
}

static ValueId emit_zero(AstToIr *bld, SrcLoc loc, Type t)
{
    if (dtype_is_float(t.dtype))
        return ir_build_const_float(&bld->b, loc, t, 0.0);
    return ir_build_const_int(&bld->b, loc, t, 0);
}

static ValueId emit_int(AstToIr *bld, SrcLoc loc, Type t, int64_t v)
{
    if (dtype_is_float(t.dtype))
        return ir_build_const_float(&bld->b, loc, t, (double)v);
    return ir_build_const_int(&bld->b, loc, t, v);
}

/* Element conversion, same shape: semantic.cast. Casting to int1 is `!= 0` there (an int cast
 * would keep the low bit); pointers convert through i64 (ptr_to_int / int_to_ptr / bitcast). */
static ValueId cast_elems(AstToIr *bld, ValueId v, Type to, SrcLoc loc)
{
    Type from = vtype(bld, v);
    if (same_elem(from, to))
        return v;
    /* A pointer of another pointee size goes through int64, so that no fact of the axis
     * analysis (contiguity counts elements) crosses the change of element size. */
    if (from.is_ptr && to.is_ptr && dtype_bits(from.dtype) == dtype_bits(to.dtype))
        return emit1(bld, OP_BITCAST, loc, to, v);
    if (from.is_ptr) {
        ValueId i = emit1(bld, OP_BITCAST, loc, with_dtype(from, DT_I64), v);
        return cast_elems(bld, i, to, loc);
    }
    if (to.is_ptr) {
        ValueId i = cast_elems(bld, v, with_dtype(from, DT_I64), loc);
        return emit1(bld, OP_BITCAST, loc, to, i);
    }
    if (to.dtype == DT_I1)
        return emit2(bld, OP_CMP_NE, loc, to, v, emit_zero(bld, loc, from));
    return emit1(bld, OP_CAST, loc, to, v);
}

/* Shape conversion, same element type: splat a scalar, add leading dims (expand_dims at 0, as
 * broadcast_impl_value does), stretch size-1 dims. */
static ValueId broadcast_value(AstToIr *bld, ValueId v, Type to, SrcLoc loc)
{
    Type from = vtype(bld, v);
    to = with_shape(from, to);
    if (type_equal(from, to))
        return v;
    if (from.rank == 0)
        return emit1(bld, OP_SPLAT, loc, to, v);
    if (from.rank > to.rank) {
        build_internal(bld, loc, "cannot broadcast %s to %s", type_str(bld->arena, from),
                       type_str(bld->arena, to));
        return v;
    }
    while (from.rank < to.rank) {
        Type e = from;
        e.rank++;
        for (int i = e.rank - 1; i > 0; i--)
            e.shape[i] = e.shape[i - 1];
        e.shape[0] = 1;
        IrOp *op = emit(bld, OP_EXPAND_DIMS, loc, &v, 1, &e, 1, 0);
        op->attr[0] = 0;
        v = op->results[0];
        from = e;
    }
    for (int i = 0; i < to.rank; i++) {
        if (from.shape[i] != to.shape[i] && from.shape[i] != 1) {
            build_internal(bld, loc, "cannot broadcast %s to %s", type_str(bld->arena, from),
                           type_str(bld->arena, to));
            return v;
        }
    }
    if (type_equal(from, to))
        return v;
    return emit1(bld, OP_BROADCAST, loc, to, v);
}

/* v converted to type `to` (dtype, then shape: casting the smaller value is cheaper). */
static ValueId convert(AstToIr *bld, ValueId v, Type to, SrcLoc loc)
{
    if (v <= 0)
        return v;
    Type from = vtype(bld, v);
    if (type_equal(from, to))
        return v;
    if (!same_elem(from, to))
        v = cast_elems(bld, v, with_shape(to, from), loc);
    return broadcast_value(bld, v, to, loc);
}

/* An LVal as one run-time value of type want (NULL: its own type). */
static ValueId lval_value(AstToIr *bld, LVal v, const Type *want, SrcLoc loc)
{
    switch (v.kind) {
    case LV_VALUE: return want ? convert(bld, v.id, *want, loc) : v.id;
    case LV_CONST:
        if (!const_is_numeric(v.csem)) {
            build_internal(bld, loc, "this constexpr has no run-time value");
            return 0;
        }
        return emit_const_cv(bld, loc, want ? *want : const_type(v.csem), &v.csem->cv);
    case LV_TUPLE: build_internal(bld, loc, "a tuple cannot be used as a single value"); return 0;
    case LV_NONE: build_internal(bld, loc, "this expression has no value"); return 0;
    }
    return 0;
}

/* e's position, or none for a missing expression (building then stops at an internal error). */
static SrcLoc loc_of(const Expr *e) { return e ? e->loc : (SrcLoc){0}; }

static ValueId build_value(AstToIr *bld, const Expr *e)
{
    return lval_value(bld, build_expr(bld, e), NULL, loc_of(e));
}

/* e as a value of type want; a constant is made directly in that type. */
static ValueId build_as(AstToIr *bld, const Expr *e, Type want)
{
    return lval_value(bld, build_expr(bld, e), &want, loc_of(e));
}

/* ---- operands of binary ops ------------------------------------------------------------------ */

/* A built operand: its value or constant, the type it has, and whether Triton sees it as a
 * Python number (a constexpr), which changes promotion (computation_type_impl rule 0). */
typedef struct Operand {
    LVal lv;
    Type type;
    bool pyconst;
    SrcLoc loc;
} Operand;

static Operand operand_from_lval(AstToIr *bld, LVal lv, const Sem *sem, SrcLoc loc)
{
    Operand o = {.lv = lv, .loc = loc};
    if (lv.kind == LV_CONST && const_is_numeric(lv.csem)) {
        o.pyconst = !sem || sem->kind == SEM_CONST;
        o.type = (sem && sem->kind == SEM_VALUE) ? sem->type : const_type(lv.csem);
    } else if (lv.kind == LV_VALUE) {
        o.type = vtype(bld, lv.id);
    } else {
        build_internal(bld, loc, "this operand has no run-time value");
        o.lv = lv_none();
        o.type = type_scalar(DT_I32);
    }
    return o;
}

static Operand operand_from_expr(AstToIr *bld, const Expr *e)
{
    return operand_from_lval(bld, build_expr(bld, e), e ? &e->sem : NULL, loc_of(e));
}

static ValueId operand_as(AstToIr *bld, const Operand *o, Type want)
{
    if (o->lv.kind == LV_NONE)
        return emit_zero(bld, o->loc, want);
    return lval_value(bld, o->lv, &want, o->loc);
}

/* ---- binary and unary operators ------------------------------------------------------------- */

static bool binop_is_compare(BinOp op)
{
    return op == BIN_EQ || op == BIN_NE || op == BIN_LT || op == BIN_LE || op == BIN_GT ||
           op == BIN_GE;
}

static OpCode compare_opcode(BinOp op)
{
    switch (op) {
    case BIN_EQ: return OP_CMP_EQ;
    case BIN_NE: return OP_CMP_NE;
    case BIN_LT: return OP_CMP_LT;
    case BIN_LE: return OP_CMP_LE;
    case BIN_GT: return OP_CMP_GT;
    default: return OP_CMP_GE;
    }
}

/* `a op b` with sema's result type r and computation dtype cdt (Sem.compute_dtype: the type a
 * comparison happens in, the offset's type for pointer arithmetic). */
static ValueId build_binary_operands(AstToIr *bld, BinOp op, const Operand *a, const Operand *b,
                                     Type r, DType cdt, SrcLoc loc)
{
    if (binop_is_compare(op)) {
        /* The operands meet in their computation type, in the result's shape. */
        Type ct;
        if (a->type.is_ptr || b->type.is_ptr)
            ct = with_shape(a->type.is_ptr ? a->type : b->type, r);
        else
            ct = with_dtype(r, cdt);
        ValueId x = operand_as(bld, a, ct), y = operand_as(bld, b, ct);
        return emit2(bld, compare_opcode(op), loc, with_dtype(r, DT_I1), x, y);
    }
    if (op == BIN_AND || op == BIN_OR) {
        /* Python's and/or on run-time scalars: both sides are evaluated (Triton's
         * logical_and/logical_or do not short-circuit tensors), as booleans. */
        Type bt = with_dtype(r, DT_I1);
        ValueId x = operand_as(bld, a, bt), y = operand_as(bld, b, bt);
        return emit2(bld, op == BIN_AND ? OP_AND : OP_OR, loc, bt, x, y);
    }
    if (r.is_ptr || a->type.is_ptr || b->type.is_ptr) {
        /* Pointer arithmetic: ptr + int, int + ptr, ptr - int -> addptr (semantic.add/sub). */
        const Operand *p = a->type.is_ptr ? a : b, *off = a->type.is_ptr ? b : a;
        if ((op != BIN_ADD && op != BIN_SUB) || !r.is_ptr || off->type.is_ptr ||
            (op == BIN_SUB && p != a) || !dtype_is_int(cdt)) {
            build_internal(bld, loc, "'%s' on a pointer was not typed as pointer arithmetic",
                           binop_str(op));
            return 0;
        }
        ValueId pv = operand_as(bld, p, r);
        Type ot = with_dtype(r, cdt);
        /* addptr treats offsets as signed: zero-extend unsigned ones first (semantic.add). */
        if (dtype_kind(ot.dtype) == DK_UINT && dtype_bits(ot.dtype) < 64)
            ot = with_dtype(ot, DT_I64);
        if (ot.dtype == DT_I1)
            ot = with_dtype(ot, DT_I32);
        ValueId ov = operand_as(bld, off, ot);
        if (op == BIN_SUB)
            ov = emit1(bld, OP_NEG, loc, ot, ov);
        return emit2(bld, OP_ADDPTR, loc, r, pv, ov);
    }
    /* Arithmetic and bitwise ops: both operands in the result type. */
    ValueId x = operand_as(bld, a, r), y = operand_as(bld, b, r);
    bool is_float = dtype_is_float(r.dtype);
    switch (op) {
    case BIN_ADD: return emit2(bld, OP_ADD, loc, r, x, y);
    case BIN_SUB: return emit2(bld, OP_SUB, loc, r, x, y);
    case BIN_MUL: return emit2(bld, OP_MUL, loc, r, x, y);
    case BIN_DIV: return emit2(bld, OP_DIV, loc, r, x, y);
    case BIN_FLOORDIV: {
        /* Triton: ints divide truncating toward zero (sdiv/udiv). Floats are rejected by Triton;
         * should sema let one through, Python's floor(a / b) is the meaning. */
        ValueId q = emit2(bld, OP_DIV, loc, r, x, y);
        return is_float ? emit1(bld, OP_FLOOR, loc, r, q) : q;
    }
    case BIN_MOD: return emit2(bld, OP_REM, loc, r, x, y); /* srem/urem/frem, as semantic.mod */
    case BIN_BITAND: return emit2(bld, OP_AND, loc, r, x, y);
    case BIN_BITOR: return emit2(bld, OP_OR, loc, r, x, y);
    case BIN_BITXOR: return emit2(bld, OP_XOR, loc, r, x, y);
    case BIN_SHL: return emit2(bld, OP_SHL, loc, r, x, y);
    case BIN_SHR: return emit2(bld, OP_SHR, loc, r, x, y);
    default: build_internal(bld, loc, "operator '%s' has no IR op", binop_str(op)); return 0;
    }
}

static LVal build_binary(AstToIr *bld, const Expr *e)
{
    BinOp op = e->bin.op;
    if (op == BIN_IS || op == BIN_IS_NOT || op == BIN_MATMUL || e->sem.kind != SEM_VALUE) {
        build_internal(bld, e->loc, "operator '%s' reached IR building without a run-time type",
                       binop_str(op));
        return lv_none();
    }
    Operand a = operand_from_expr(bld, e->bin.lhs);
    Operand b = operand_from_expr(bld, e->bin.rhs);
    return lv_value(
        build_binary_operands(bld, op, &a, &b, e->sem.type, e->sem.compute_dtype, e->loc));
}

static LVal build_unary(AstToIr *bld, const Expr *e)
{
    const Expr *x = e->un.operand;
    ValueId v = build_value(bld, x);
    if (!v)
        return lv_none();
    Type t = vtype(bld, v);
    if (e->sem.kind != SEM_VALUE) {
        build_internal(bld, e->loc, "a unary operator reached IR building without a run-time type");
        return lv_none();
    }
    Type r = e->sem.type;
    switch (e->un.op) {
    case UN_PLUS: return lv_value(convert(bld, v, r, e->loc));
    case UN_NEG:
        if (t.is_ptr) {
            build_internal(bld, e->loc, "wrong type argument to unary minus (a pointer)");
            return lv_none();
        }
        return lv_value(emit1(bld, OP_NEG, e->loc, r, convert(bld, v, r, e->loc)));
    case UN_INVERT:
        if (t.is_ptr || dtype_is_float(t.dtype)) {
            build_internal(bld, e->loc, "wrong type argument to unary invert");
            return lv_none();
        }
        return lv_value(emit1(bld, OP_NOT, e->loc, r, convert(bld, v, r, e->loc)));
    case UN_NOT: {
        /* not x: x converted to a boolean (x != 0), then inverted. */
        Type bt = with_dtype(t, DT_I1);
        ValueId bv = convert(bld, v, bt, e->loc);
        return lv_value(
            convert(bld, emit1(bld, OP_NOT, e->loc, bt, bv), with_dtype(r, DT_I1), e->loc));
    }
    }
    return lv_none();
}

/* ---- subscripts and attributes ------------------------------------------------------------------ */

static ValueId expand_dims(AstToIr *bld, ValueId v, int axis, SrcLoc loc)
{
    Type t = vtype(bld, v);
    if (t.rank == 0) {
        /* semantic.expand_dims: a scalar becomes a one-element block. */
        Type r = t;
        r.rank = 1;
        r.shape[0] = 1;
        return emit1(bld, OP_SPLAT, loc, r, v);
    }
    if (t.rank >= TRIC_MAX_RANK) {
        build_internal(bld, loc, "blocks have at most %d dims", TRIC_MAX_RANK);
        return v;
    }
    Type r = t;
    r.rank++;
    for (int i = r.rank - 1; i > axis; i--)
        r.shape[i] = r.shape[i - 1];
    r.shape[axis] = 1;
    IrOp *op = emit(bld, OP_EXPAND_DIMS, loc, &v, 1, &r, 1, 0);
    op->attr[0] = axis;
    return op->results[0];
}

/* None (sema also gives a ':' slice a None Sem: test for slices first). */
static bool expr_is_none(const Expr *e)
{
    return e->kind == EX_NONE ||
           (e->kind != EX_SLICE && e->sem.kind == SEM_CONST && e->sem.cv.kind == CV_NONE);
}

static bool expr_const_int(const Expr *e, int64_t *out)
{
    if (!e || e->sem.kind != SEM_CONST)
        return false;
    if (e->sem.cv.kind == CV_INT) {
        *out = e->sem.cv.i;
        return true;
    }
    if (e->sem.cv.kind == CV_BOOL) {
        *out = e->sem.cv.b;
        return true;
    }
    return false;
}

/* x[:, None], x[None, :], x[None]: tensor.__getitem__ inserts a dim for each None and keeps a
 * dim for each bare `:`; t[i] picks an element of a tuple. */
static LVal build_subscript(AstToIr *bld, const Expr *e)
{
    LVal obj = build_expr(bld, e->sub.obj);
    if (obj.kind == LV_TUPLE) {
        int64_t i;
        if (e->sub.nidx == 1 && expr_const_int(e->sub.idx[0], &i)) {
            if (i < 0)
                i += obj.n;
            if (i >= 0 && i < obj.n)
                return obj.elems[i];
        }
        build_internal(bld, e->loc, "a tuple index must be a constant within the tuple");
        return lv_none();
    }
    ValueId v = lval_value(bld, obj, NULL, e->sub.obj->loc);
    if (!v)
        return lv_none();
    int dim = 0;
    for (int i = 0; i < e->sub.nidx; i++) {
        const Expr *ix = e->sub.idx[i];
        if (expr_is_none(ix)) {
            v = expand_dims(bld, v, dim, e->loc);
            dim++;
        } else if (ix->kind == EX_SLICE && !ix->slice.lo && !ix->slice.hi && !ix->slice.step) {
            dim++;
        } else {
            build_internal(bld, ix->loc, "unsupported tensor index: only None and ':' are allowed");
            return lv_none();
        }
    }
    return lv_value(v);
}

static ValueId emit_trans(AstToIr *bld, ValueId v, const int64_t *perm, int n, SrcLoc loc)
{
    Type t = vtype(bld, v);
    if (n != t.rank) {
        build_internal(bld, loc, "permute dims must have the same length as the input's shape");
        return v;
    }
    Type r = t;
    bool identity = true;
    for (int i = 0; i < n; i++) {
        if (perm[i] < 0 || perm[i] >= n) {
            build_internal(bld, loc, "permute dims must be a permutation of 0..%d", n - 1);
            return v;
        }
        r.shape[i] = t.shape[perm[i]];
        identity &= perm[i] == i;
    }
    if (identity)
        return v;
    IrOp *op = emit(bld, OP_TRANS, loc, &v, 1, &r, 1, 0);
    for (int i = 0; i < n; i++)
        op->attr[i] = perm[i];
    return op->results[0];
}

static LVal build_attr(AstToIr *bld, const Expr *e)
{
    if (strcmp(e->attr.name, "T") == 0) {
        ValueId v = build_value(bld, e->attr.obj);
        if (!v)
            return lv_none();
        int64_t perm[2] = {1, 0};
        if (vtype(bld, v).rank != 2) {
            build_internal(bld, e->loc, ".T needs a 2-D block");
            return lv_none();
        }
        return lv_value(emit_trans(bld, v, perm, 2, e->loc));
    }
    build_internal(bld, e->loc, "attribute '%s' has no run-time value", e->attr.name);
    return lv_none();
}

/* ---- builtin calls ---------------------------------------------------------------------------------- */

/* The arguments of a builtin call in the builtin's parameter order. */
typedef struct Args {
    const Expr *a[16];
    int n;
} Args;

/* A builtin's IR builder, named by its row of TRIC_BUILTINS: e is the call, a its arguments as sema
 * bound them. */
typedef LVal BuiltinBuild(AstToIr *bld, const Expr *e, Builtin bi, const Args *a);
#define X(e, name, params, sema_rule, build, doc) static BuiltinBuild build;
TRIC_BUILTINS(X)
#undef X
static LVal untyped(AstToIr *bld, const Expr *e, Builtin bi);

/* sema's call.bound: the arguments in the builtin's parameter order (method receivers first). */
static bool bind_args(AstToIr *bld, const Expr *call, Builtin bi, Args *out)
{
    memset(out, 0, sizeof *out);
    if (!call->call.bound || call->call.nbound > 16) {
        build_internal(bld, call->loc, "a call of %s reached IR building with no bound arguments",
                       builtin_name(bi));
        return false;
    }
    out->n = call->call.nbound;
    for (int i = 0; i < out->n; i++)
        out->a[i] = call->call.bound[i];
    return true;
}

static const Expr *arg(const Args *a, int i)
{
    const Expr *e = i < a->n ? a->a[i] : NULL;
    return (e && expr_is_none(e)) ? NULL : e;
}

static const char *arg_const_str(const Args *a, int i)
{
    const Expr *e = arg(a, i);
    if (e && e->sem.kind == SEM_CONST && e->sem.cv.kind == CV_STR)
        return e->sem.cv.s;
    return NULL;
}

/* The type sema gave the call, when it gave a run-time one. */
static bool sem_value_type(const Expr *e, Type *out)
{
    if (e->sem.kind != SEM_VALUE)
        return false;
    *out = e->sem.type;
    return true;
}

static Type shape_type(Type elem, const int64_t *dims, int n)
{
    Type t = type_elem(elem);
    t.rank = (uint8_t)n;
    for (int i = 0; i < n && i < TRIC_MAX_RANK; i++)
        t.shape[i] = (int32_t)dims[i];
    return t;
}

/* make_range start..end: <end - start x i32>. */
static ValueId emit_range(AstToIr *bld, int64_t start, int64_t end, SrcLoc loc)
{
    int64_t n = end - start;
    Type t = shape_type(type_scalar(DT_I32), &n, 1);
    IrOp *op = emit(bld, OP_MAKE_RANGE, loc, NULL, 0, &t, 1, 0);
    op->attr[0] = start;
    op->attr[1] = end;
    return op->results[0];
}

/* A 1-D value as dim d of a rank-`rank` block: size-1 dims inserted before and after it. */
static ValueId on_axis(AstToIr *bld, ValueId v, int d, int rank, SrcLoc loc)
{
    for (int k = 0; k < d; k++)
        v = expand_dims(bld, v, 0, loc);
    for (int k = d + 1; k < rank; k++)
        v = expand_dims(bld, v, k, loc);
    return v;
}

/* reduce / argmax over axis (NULL: all elements, as semantic.reduction: flatten first). */
/* The scan op of each combine function sema recognised (ResolvedCall.combine). */
static const OpCode scan_opcode[] = {
    [SCAN_ADD] = OP_ADD, [SCAN_MUL] = OP_MUL, [SCAN_MAX] = OP_MAX, [SCAN_MIN] = OP_MIN,
    [SCAN_AND] = OP_AND, [SCAN_OR] = OP_OR,   [SCAN_XOR] = OP_XOR};

/* cumsum, cumprod, associative_scan: one scan op along sema's axis, with its combine op, in the
 * result dtype sema chose. */
static LVal build_scan(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    SrcLoc loc = e->loc;
    const ResolvedCall *rc = e->call.resolved;
    Type r;
    if (!sem_value_type(e, &r))
        return untyped(bld, e, bi);
    ValueId x = build_value(bld, arg(a, 0));
    if (!x)
        return lv_none();
    Type rt = with_dtype(vtype(bld, x), r.dtype);
    x = convert(bld, x, rt, loc);
    IrOp *op = emit(bld, OP_SCAN, loc, &x, 1, &rt, 1, 0);
    op->attr[0] = rc->axis;
    op->attr[1] = scan_opcode[rc->combine];
    op->attr[2] = rc->reverse;
    return lv_value(op->results[0]);
}

/* A reduction of the block x along axis (AXIS_ALL: every element, as semantic.reduction:
 * flattened first) in dtype rdt; keep_dims keeps the reduced dims as 1s. */
static ValueId emit_reduce(AstToIr *bld, OpCode code, ValueId x, int axis, bool keep_dims,
                           DType rdt, SrcLoc loc)
{
    Type t = vtype(bld, x);
    int in_rank = t.rank;
    bool all = axis == AXIS_ALL;
    if (t.rank == 0) {
        build_internal(bld, loc, "a reduction of a scalar reached IR building");
        return 0;
    }
    if (all) {
        if (t.rank > 1) {
            int64_t n = type_numel(t);
            x = emit1(bld, OP_RESHAPE, loc, shape_type(t, &n, 1), x);
            t = vtype(bld, x);
        }
        axis = 0;
    }
    Type r = t;
    r.dtype = rdt;
    r.is_ptr = false;
    for (int i = axis; i + 1 < r.rank; i++)
        r.shape[i] = r.shape[i + 1];
    r.rank--;
    IrOp *op = emit(bld, code, loc, &x, 1, &r, 1, 0);
    op->attr[0] = axis;
    ValueId v = op->results[0];
    if (keep_dims) {
        if (!all) {
            v = expand_dims(bld, v, axis, loc);
        } else {
            int64_t ones[TRIC_MAX_RANK] = {1, 1, 1, 1};
            v = emit1(bld, OP_SPLAT, loc, shape_type(r, ones, in_rank), v);
        }
    }
    return v;
}

/* tl.reduce with a combine function tric has no reduce op for (a * b, &, |, ^; sema rewrote +,
 * maximum and minimum into tl.sum / tl.max / tl.min), and tl.xor_sum: the inclusive scan along
 * the axis (a flattened block for axis=None) holds the reduction in its last element; every
 * other element is replaced by the sum's identity (0, or -0.0 for floats: x + -0.0 is x for
 * every x, zeros and NaNs included) and the line summed, which gives that element exactly. */
static LVal build_reduce_by_scan(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    SrcLoc loc = e->loc;
    const ResolvedCall *rc = e->call.resolved;
    Type r;
    if (!sem_value_type(e, &r))
        return untyped(bld, e, bi);
    ValueId x = build_value(bld, arg(a, 0));
    if (!x)
        return lv_none();
    Type t = vtype(bld, x);
    bool all = rc->axis == AXIS_ALL;
    int axis = all ? 0 : rc->axis;
    if (all) { /* every element, in row-major order */
        int64_t n = type_numel(t);
        if (t.rank > 1)
            x = emit1(bld, OP_RESHAPE, loc, shape_type(t, &n, 1), x);
        t = vtype(bld, x);
    }
    IrOp *scan = emit(bld, OP_SCAN, loc, &x, 1, &t, 1, 0);
    scan->attr[0] = axis;
    scan->attr[1] = scan_opcode[rc->combine];
    scan->attr[2] = 0;
    /* the index along the axis, broadcast to the block */
    int64_t n = t.shape[axis];
    ValueId idx = on_axis(bld, emit_range(bld, 0, n, loc), axis, t.rank, loc);
    Type idx_t = with_dtype(t, DT_I32);
    idx_t.is_ptr = false;
    idx = broadcast_value(bld, idx, idx_t, loc);
    ValueId last_i = ir_build_const_int(&bld->b, loc, idx_t, n - 1);
    ValueId last = emit2(bld, OP_CMP_EQ, loc, with_dtype(idx_t, DT_I1), idx, last_i);
    ValueId identity = dtype_is_float(t.dtype) ? ir_build_const_float(&bld->b, loc, t, -0.0)
                                               : ir_build_const_int(&bld->b, loc, t, 0);
    ValueId kept = emit3(bld, OP_SELECT, loc, t, last, scan->results[0], identity);
    ValueId v =
        emit_reduce(bld, OP_REDUCE_SUM, kept, rc->axis, rc->keep_dims && !all, t.dtype, loc);
    if (v && !type_equal(vtype(bld, v), r)) /* axis=None, keep_dims=True: sema's all-ones shape */
        v = emit1(bld, vtype(bld, v).rank == 0 ? OP_SPLAT : OP_RESHAPE, loc, r, v);
    return v ? lv_value(v) : lv_none();
}

static OpCode math_opcode(Builtin bi)
{
    switch (bi) {
    case BI_EXP: return OP_EXP;
    case BI_EXP2: return OP_EXP2;
    case BI_LOG: return OP_LOG;
    case BI_LOG2: return OP_LOG2;
    case BI_SQRT: return OP_SQRT;
    case BI_RSQRT: return OP_RSQRT;
    case BI_ABS: return OP_ABS;
    case BI_SIN: return OP_SIN;
    case BI_COS: return OP_COS;
    case BI_FLOOR: return OP_FLOOR;
    default: return OP_CEIL;
    }
}

/* exp, log, sqrt, ... of x in the dtype sema chose to compute in, op_dtype (fp16 and bf16 widened
 * to fp32 where Triton does), converted to the result type r. */
static ValueId emit_math(AstToIr *bld, OpCode code, ValueId x, DType op_dtype, Type r, SrcLoc loc)
{
    Type wide = with_dtype(vtype(bld, x), op_dtype);
    ValueId w = emit1(bld, code, loc, wide, convert(bld, x, wide, loc));
    return convert(bld, w, with_shape(r, wide), loc);
}

/* tl.swizzle2d(i, j, size_i, size_j, size_g), Triton's standard.py formula: programs are
 * grouped size_g rows at a time so that neighbours share tiles in L2. */
static LVal build_swizzle2d(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    /* sema typed the formula step by step (swizzle2d_builtin); both results have the type of
     * the last step, new_j = in_group // rows, which every operand converts to. */
    if (e->sem.kind != SEM_TUPLE || e->sem.nelems != 2 || e->sem.elems[1].kind != SEM_VALUE) {
        build_internal(bld, e->loc, "swizzle2d reached IR building without run-time types");
        return lv_none();
    }
    Type t = e->sem.elems[1].type;
    Operand o[5];
    for (int i = 0; i < 5; i++) {
        const Expr *x = arg(a, i);
        if (!x) {
            build_internal(bld, e->loc, "swizzle2d needs five arguments");
            return lv_none();
        }
        o[i] = operand_from_expr(bld, x);
    }
    SrcLoc loc = e->loc;
    ValueId i = operand_as(bld, &o[0], t), j = operand_as(bld, &o[1], t);
    ValueId size_i = operand_as(bld, &o[2], t), size_j = operand_as(bld, &o[3], t);
    ValueId size_g = operand_as(bld, &o[4], t);
    ValueId ij = emit2(bld, OP_ADD, loc, t, emit2(bld, OP_MUL, loc, t, i, size_j), j);
    ValueId size_gj = emit2(bld, OP_MUL, loc, t, size_g, size_j);
    ValueId group_id = emit2(bld, OP_DIV, loc, t, ij, size_gj);
    ValueId off_i = emit2(bld, OP_MUL, loc, t, group_id, size_g);
    ValueId rows = emit2(bld, OP_MIN, loc, t, emit2(bld, OP_SUB, loc, t, size_i, off_i), size_g);
    ValueId in_group = emit2(bld, OP_REM, loc, t, ij, size_gj);
    ValueId new_i = emit2(bld, OP_ADD, loc, t, off_i, emit2(bld, OP_REM, loc, t, in_group, rows));
    ValueId new_j = emit2(bld, OP_DIV, loc, t, in_group, rows);
    LVal r = {.kind = LV_TUPLE, .n = 2};
    r.elems = arena_alloc(bld->arena, 2 * sizeof *r.elems);
    r.elems[0] = lv_value(new_i);
    r.elems[1] = lv_value(new_j);
    return r;
}

/* PropagateNan.ALL for a float min/max (Triton's llvm.minimum/maximum): where an input is a
 * NaN the result is that NaN; r is the minnum/maxnum result, which skips NaNs. */
static ValueId propagate_nans(AstToIr *bld, SrcLoc loc, ValueId r, const ValueId *inputs, int n)
{
    Type t = vtype(bld, r);
    if (!dtype_is_float(t.dtype))
        return r;
    for (int i = n - 1; i >= 0; i--) {
        ValueId is_nan = emit2(bld, OP_CMP_NE, loc, with_dtype(t, DT_I1), inputs[i], inputs[i]);
        r = emit3(bld, OP_SELECT, loc, t, is_nan, inputs[i], r);
    }
    return r;
}

/* tl.clamp(x, min, max, propagate_nan=): min(max(x, min), max) in the type sema computed
 * (Triton's ClampFOp lowering: maxnum then minnum; maximum then minimum for ALL). */
static LVal build_clamp(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    SrcLoc loc = e->loc;
    Type r;
    if (!sem_value_type(e, &r))
        return untyped(bld, e, bi);
    ValueId in[3] = {build_as(bld, arg(a, 0), r), build_as(bld, arg(a, 1), r),
                     build_as(bld, arg(a, 2), r)};
    if (!in[0] || !in[1] || !in[2])
        return lv_none();
    ValueId v = emit2(bld, OP_MIN, loc, r, emit2(bld, OP_MAX, loc, r, in[0], in[1]), in[2]);
    if (e->call.resolved->propagate_nan)
        v = propagate_nans(bld, loc, v, in, 3);
    return lv_value(v);
}

/* libdevice function fn on in (of type t, a float type) computed in op_dtype (sema's: fp16 and
 * bf16 in fp32, as Triton's math ops), as a value of type r. */
static ValueId emit_libdevice(AstToIr *bld, LibdeviceFn fn, ValueId *in, Type t, DType op_dtype,
                              Type r, SrcLoc loc)
{
    const LibdeviceInfo *info = libdevice_info(fn);
    Type wide = with_dtype(t, op_dtype);
    ValueId w[2] = {0, 0};
    for (int i = 0; i < info->nargs; i++)
        if (!(w[i] = convert(bld, in[i], wide, loc)))
            return 0;
    Type out = with_dtype(wide, info->result == LDR_PRED ? DT_I1 : wide.dtype);
    IrOp *op = emit(bld, OP_LIBDEVICE, loc, w, info->nargs, &out, 1, 0);
    op->attr[0] = fn;
    return convert(bld, op->results[0], r, loc);
}

/* libdevice.NAME(x[, y]): one OP_LIBDEVICE, the arguments converted to their float type (sema's
 * compute_dtype) and computed in sema's op_dtype. */
static LVal build_libdevice(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    SrcLoc loc = e->loc;
    LibdeviceFn fn = (LibdeviceFn)e->call.fn->sem.libdevice_fn;
    const LibdeviceInfo *info = libdevice_info(fn);
    DType cd = e->sem.compute_dtype;
    Type r;
    if (!info || !sem_value_type(e, &r) || !dtype_is_float(cd)) {
        build_internal(bld, loc, "a libdevice call reached IR building untyped");
        return lv_none();
    }
    ValueId in[2] = {0, 0};
    for (int i = 0; i < info->nargs; i++) {
        in[i] = build_as(bld, arg(a, i), with_dtype(r, cd));
        if (!in[i])
            return lv_none();
    }
    ValueId v = emit_libdevice(bld, fn, in, with_dtype(r, cd), e->call.resolved->op_dtype, r, loc);
    return v ? lv_value(v) : lv_none();
}

/* ---- block pointers (tl.make_block_ptr, tl.advance, and loads and stores through them) --------- */

/* A block pointer builds to a run-time tuple (sema's Sem.block_ptr): the base pointer, then r
 * shapes (i64), r strides (i64) and r offsets (i32); loops carry it leaf by leaf. A load or store
 * through it computes the block of addresses and, for the dims of boundary_check, the mask of
 * the elements inside the tensor, and is an ordinary masked load or store from there on. */

/* Element k of a tuple argument (run-time or constexpr) as a scalar of type t. */
static ValueId tuple_elem_value(AstToIr *bld, LVal tup, int k, Type t, SrcLoc loc)
{
    if (tup.kind == LV_TUPLE && k < tup.n)
        return lval_value(bld, tup.elems[k], &t, loc);
    if (tup.kind == LV_CONST && tup.csem->cv.kind == CV_TUPLE && k < tup.csem->cv.tuple.n)
        return emit_const_cv(bld, loc, t, &tup.csem->cv.tuple.elems[k]);
    build_internal(bld, loc, "element %d of a tuple of ints is missing", k);
    return 0;
}

/* The leaves of a block pointer or tensor descriptor Sem (sema's block_ptr_sem and
 * make_tensor_desc_builtin chose their types), or false with an internal error. */
static bool tile_leaves_typed(AstToIr *bld, const Expr *e, int n)
{
    if (e->sem.kind == SEM_TUPLE && e->sem.nelems == n)
        return true;
    build_internal(bld, e->loc, "a block pointer or tensor descriptor has no typed leaves");
    return false;
}

static LVal build_make_block_ptr(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    int r = e->sem.type.rank;
    LVal bp = {.kind = LV_TUPLE, .n = 1 + 3 * r};
    if (!tile_leaves_typed(bld, e, bp.n))
        return lv_none();
    bp.elems = arena_alloc(bld->arena, (size_t)bp.n * sizeof *bp.elems);
    bp.elems[0] = lv_value(build_value(bld, arg(a, 0)));
    for (int i = 0; i < 3; i++) {
        LVal part = build_expr(bld, arg(a, 1 + i));
        for (int d = 0; d < r; d++) {
            Type t = e->sem.elems[1 + i * r + d].type; /* shapes and strides i64, offsets i32 */
            bp.elems[1 + i * r + d] = lv_value(tuple_elem_value(bld, part, d, t, e->loc));
        }
    }
    return bp;
}

static LVal build_advance(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    int r = e->sem.type.rank;
    LVal from = build_expr(bld, arg(a, 0)), by = build_expr(bld, arg(a, 1));
    if (from.kind != LV_TUPLE || from.n != 1 + 3 * r) {
        build_internal(bld, e->loc, "tl.advance of something that is not a block pointer");
        return lv_none();
    }
    if (!tile_leaves_typed(bld, e, from.n))
        return lv_none();
    LVal bp = from;
    bp.elems = arena_alloc(bld->arena, (size_t)bp.n * sizeof *bp.elems);
    memcpy(bp.elems, from.elems, (size_t)bp.n * sizeof *bp.elems);
    for (int d = 0; d < r; d++) {
        LVal *off = &bp.elems[1 + 2 * r + d];
        Type ot = e->sem.elems[1 + 2 * r + d].type;
        *off = lv_value(emit2(bld, OP_ADD, e->loc, ot, lval_value(bld, *off, &ot, e->loc),
                              tuple_elem_value(bld, by, d, ot, e->loc)));
    }
    return bp;
}

/* The addresses of the tile of block pointer or tensor descriptor bp (whose Sem type is the
 * block bt; leaves base, shapes, strides) at offsets off[] (i32 scalars): element
 * (i_0, ..., i_{r-1}) at base + sum_d (off_d + i_d) * stride_d, in int64 as Triton computes
 * them; *mask (0 when no dim is checked) is true where 0 <= off_d + i_d < shape_d for every
 * checked dim. */
static ValueId tile_addresses(AstToIr *bld, Type bt, LVal bp, const ValueId *off_of,
                              unsigned checked, ValueId *mask, SrcLoc loc)
{
    Type i64 = type_scalar(DT_I64);
    int r = bt.rank;
    Type offs_t = with_dtype(bt, DT_I64), mask_t = with_dtype(bt, DT_I1);
    ValueId offs = 0;
    *mask = 0;
    if (bp.kind != LV_TUPLE || bp.n < 1 + 2 * r) {
        build_internal(bld, loc, "not a block pointer or tensor descriptor");
        return 0;
    }
    for (int d = 0; d < r; d++) {
        ValueId range = emit_range(bld, 0, bt.shape[d], loc);
        Type range_t = vtype(bld, range);
        ValueId idx =
            emit2(bld, OP_ADD, loc, range_t, range, broadcast_value(bld, off_of[d], range_t, loc));
        idx = on_axis(bld, idx, d, r, loc);
        Type idx_t = with_dtype(vtype(bld, idx), DT_I64);
        idx = cast_elems(bld, idx, idx_t, loc);
        ValueId stride = lval_value(bld, bp.elems[1 + r + d], &i64, loc);
        ValueId term =
            emit2(bld, OP_MUL, loc, idx_t, idx, broadcast_value(bld, stride, idx_t, loc));
        term = broadcast_value(bld, term, offs_t, loc);
        offs = offs ? emit2(bld, OP_ADD, loc, offs_t, offs, term) : term;
        if (checked & (1u << d)) {
            Type in_t = with_dtype(idx_t, DT_I1);
            ValueId extent = lval_value(bld, bp.elems[1 + d], &i64, loc);
            ValueId lo = emit2(bld, OP_CMP_GE, loc, in_t, idx, emit_zero(bld, loc, idx_t));
            ValueId hi =
                emit2(bld, OP_CMP_LT, loc, in_t, idx, broadcast_value(bld, extent, idx_t, loc));
            ValueId in = broadcast_value(bld, emit2(bld, OP_AND, loc, in_t, lo, hi), mask_t, loc);
            *mask = *mask ? emit2(bld, OP_AND, loc, mask_t, *mask, in) : in;
        }
    }
    ValueId base = broadcast_value(bld, lval_value(bld, bp.elems[0], NULL, loc), bt, loc);
    return emit2(bld, OP_ADDPTR, loc, bt, base, offs);
}

/* A block pointer's tile (its offsets are its last r leaves). */
static ValueId block_ptr_addresses(AstToIr *bld, const Sem *bs, LVal bp, unsigned checked,
                                   ValueId *mask, SrcLoc loc)
{
    int r = bs->type.rank;
    Type i32 = type_scalar(DT_I32);
    ValueId off[TRIC_MAX_RANK] = {0};
    if (bp.kind != LV_TUPLE || bp.n != 1 + 3 * r) {
        build_internal(bld, loc, "not a block pointer");
        *mask = 0;
        return 0;
    }
    for (int d = 0; d < r; d++)
        off[d] = lval_value(bld, bp.elems[1 + 2 * r + d], &i32, loc);
    return tile_addresses(bld, bs->type, bp, off, checked, mask, loc);
}

/* The load of a tile (addresses ptrs, mask or 0) of type rt: outside the mask zero, or NaN when
 * pad_nan. */
static LVal load_tile(AstToIr *bld, ValueId ptrs, ValueId mask, Type rt, bool pad_nan, SrcLoc loc)
{
    ValueId ops[3] = {ptrs, mask, 0};
    if (mask)
        ops[2] = pad_nan ? ir_build_const_float(&bld->b, loc, rt, NAN) : emit_zero(bld, loc, rt);
    return lv_value(emit(bld, OP_LOAD, loc, ops, 3, &rt, 1, 0)->results[0]);
}

static LVal build_make_tensor_desc(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    int r = e->sem.type.rank;
    LVal d = {.kind = LV_TUPLE, .n = 1 + 2 * r};
    if (!tile_leaves_typed(bld, e, d.n))
        return lv_none();
    d.elems = arena_alloc(bld->arena, (size_t)d.n * sizeof *d.elems);
    d.elems[0] = lv_value(build_value(bld, arg(a, 0)));
    for (int i = 0; i < 2; i++) {
        LVal part = build_expr(bld, arg(a, 1 + i));
        for (int k = 0; k < r; k++) {
            Type t = e->sem.elems[1 + i * r + k].type; /* shapes and strides, i64 */
            d.elems[1 + i * r + k] = lv_value(tuple_elem_value(bld, part, k, t, e->loc));
        }
    }
    return d;
}

/* desc.load(offsets) / desc.store(offsets, value): every dim checked, as TMA does. */
static LVal build_desc_access(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    const Expr *de = arg(a, 0);
    Type bt = de->sem.type, i32 = type_scalar(DT_I32);
    LVal desc = build_expr(bld, de), offs = build_expr(bld, arg(a, 1));
    ValueId off[TRIC_MAX_RANK] = {0}, mask;
    for (int d = 0; d < bt.rank; d++)
        off[d] = tuple_elem_value(bld, offs, d, i32, e->loc);
    ValueId ptrs = tile_addresses(bld, bt, desc, off, (1u << bt.rank) - 1, &mask, e->loc);
    if (!ptrs)
        return lv_none();
    Type vt = with_dtype(bt, bt.dtype);
    if (bi == BI_DESC_LOAD)
        return load_tile(bld, ptrs, mask, vt,
                         de->sem.cv.kind == CV_STR && !strcmp(de->sem.cv.s, "nan"), e->loc);
    Operand v = operand_from_expr(bld, arg(a, 2));
    ValueId ops[3] = {ptrs, operand_as(bld, &v, vt), mask};
    emit(bld, OP_STORE, e->loc, ops, 3, NULL, 0, 0);
    return lv_none();
}

static LVal build_block_ptr_load(AstToIr *bld, const Expr *e, const Args *a)
{
    const Expr *p = arg(a, 0);
    ValueId mask;
    const ResolvedCall *rc = e->call.resolved;
    ValueId ptrs =
        block_ptr_addresses(bld, &p->sem, build_expr(bld, p), rc->boundary_dims, &mask, e->loc);
    if (!ptrs)
        return lv_none();
    /* Elements outside the tensor read as zero, or NaN with padding_option="nan". */
    return load_tile(bld, ptrs, mask, with_dtype(p->sem.type, p->sem.type.dtype), rc->pad_nan,
                     e->loc);
}

static LVal build_block_ptr_store(AstToIr *bld, const Expr *e, const Args *a)
{
    const Expr *p = arg(a, 0);
    ValueId mask;
    ValueId ptrs = block_ptr_addresses(bld, &p->sem, build_expr(bld, p),
                                       e->call.resolved->boundary_dims, &mask, e->loc);
    if (!ptrs)
        return lv_none();
    Operand v = operand_from_expr(bld, arg(a, 1));
    ValueId ops[3] = {ptrs, operand_as(bld, &v, with_dtype(p->sem.type, p->sem.type.dtype)), mask};
    emit(bld, OP_STORE, e->loc, ops, 3, NULL, 0, 0);
    return lv_none();
}

static LVal build_load(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    if (arg(a, 0) && arg(a, 0)->sem.kind == SEM_TUPLE && arg(a, 0)->sem.block_ptr)
        return build_block_ptr_load(bld, e, a);
    Type r = {0};
    bool have_r = sem_value_type(e, &r);
    SrcLoc loc = e->loc;
    /* semantic._load_legacy: pointer, mask and other broadcast together; other cast to the
     * pointee. Operands: (ptr, mask or 0, other or 0). */
    ValueId p = build_value(bld, arg(a, 0));
    ValueId m = arg(a, 1) ? build_value(bld, arg(a, 1)) : 0;
    if (!p)
        return lv_none();
    Type pt = vtype(bld, p);
    if (!pt.is_ptr) {
        build_internal(bld, arg(a, 0)->loc, "tl.load needs a pointer, not %s",
                       type_str(bld->arena, pt));
        return lv_none();
    }
    /* sema checked that mask and other broadcast to the pointer's shape, the result's. */
    if (!have_r) {
        build_internal(bld, loc, "tl.load reached IR building without a run-time type");
        return lv_none();
    }
    Operand other = {0};
    if (arg(a, 2))
        other = operand_from_expr(bld, arg(a, 2));
    Type rt = with_dtype(r, pt.dtype);
    ValueId ops[3] = {convert(bld, p, with_shape(pt, r), loc),
                      m ? convert(bld, m, with_dtype(r, DT_I1), loc) : 0,
                      arg(a, 2) ? operand_as(bld, &other, rt) : 0};
    return lv_value(emit(bld, OP_LOAD, loc, ops, 3, &rt, 1, 0)->results[0]);
}

static LVal build_store(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    if (arg(a, 0) && arg(a, 0)->sem.kind == SEM_TUPLE && arg(a, 0)->sem.block_ptr)
        return build_block_ptr_store(bld, e, a);
    SrcLoc loc = e->loc;
    /* semantic._store_legacy: value and mask broadcast to the pointer's shape; the value is
     * cast to the pointee. Operands: (ptr, value, mask or 0). */
    ValueId p = build_value(bld, arg(a, 0));
    Operand v = operand_from_expr(bld, arg(a, 1));
    ValueId m = arg(a, 2) ? build_value(bld, arg(a, 2)) : 0;
    if (!p)
        return lv_none();
    Type pt = vtype(bld, p);
    if (!pt.is_ptr) {
        build_internal(bld, arg(a, 0)->loc, "tl.store needs a pointer, not %s",
                       type_str(bld->arena, pt));
        return lv_none();
    }
    /* sema checked that value and mask broadcast to the pointer's shape. */
    Type shape = pt;
    ValueId ops[3] = {convert(bld, p, with_shape(pt, shape), loc),
                      operand_as(bld, &v, with_dtype(shape, pt.dtype)),
                      m ? convert(bld, m, with_dtype(shape, DT_I1), loc) : 0};
    emit(bld, OP_STORE, loc, ops, 3, NULL, 0, 0);
    return lv_none();
}

/* One atomic_rmw (ptr, val, mask) of kind with sem and scope: the old values. */
static ValueId emit_atomic_rmw(AstToIr *bld, SrcLoc loc, AtomicKind kind, MemSem sem,
                               MemScope scope, ValueId p, ValueId v, ValueId m)
{
    Type pt = vtype(bld, p);
    Type rt = with_dtype(pt, pt.dtype);
    ValueId ops[3] = {p, v, m};
    IrOp *op = emit(bld, OP_ATOMIC_RMW, loc, ops, m ? 3 : 2, &rt, 1, 0);
    op->attr[0] = kind;
    op->attr[1] = sem;
    op->attr[2] = scope;
    return op->results[0];
}

/* Float atomic_max/min as Triton builds them (semantic.atomic_max): on the bits, a non-negative
 * val (sign bit clear) takes signed max (min) as an int, a negative one unsigned min (max) -- the
 * IEEE order of floats of one sign is the order of their bits, reversed for negatives -- and the
 * old value comes from whichever of the two ran for the lane. */
static ValueId emit_float_minmax(AstToIr *bld, SrcLoc loc, bool is_max, MemSem sem, MemScope scope,
                                 ValueId p, ValueId v, ValueId m)
{
    Type pt = vtype(bld, p), vt = vtype(bld, v);
    bool f64 = pt.dtype == DT_F64;
    DType it = f64 ? DT_I64 : DT_I32, ut = f64 ? DT_U64 : DT_U32;
    Type ipt = pt, upt = pt;
    ipt.dtype = it;
    upt.dtype = ut;
    ValueId ip = emit1(bld, OP_BITCAST, loc, ipt, p), up = emit1(bld, OP_BITCAST, loc, upt, p);
    ValueId iv = emit1(bld, OP_BITCAST, loc, with_dtype(vt, it), v);
    ValueId uv = emit1(bld, OP_BITCAST, loc, with_dtype(vt, ut), v);
    ValueId shift = emit_int(bld, loc, with_dtype(vt, ut), f64 ? 63 : 31);
    ValueId sign = emit2(bld, OP_SHR, loc, with_dtype(vt, ut), uv, shift);
    ValueId neg = emit2(bld, OP_CMP_NE, loc, with_dtype(vt, DT_I1), sign,
                        emit_zero(bld, loc, with_dtype(vt, ut)));
    ValueId pos = emit1(bld, OP_NOT, loc, with_dtype(vt, DT_I1), neg);
    ValueId mpos = m ? emit2(bld, OP_AND, loc, with_dtype(vt, DT_I1), m, pos) : pos;
    ValueId mneg = m ? emit2(bld, OP_AND, loc, with_dtype(vt, DT_I1), m, neg) : neg;
    ValueId pos_old =
        emit_atomic_rmw(bld, loc, is_max ? ATOMIC_MAX : ATOMIC_MIN, sem, scope, ip, iv, mpos);
    ValueId neg_old =
        emit_atomic_rmw(bld, loc, is_max ? ATOMIC_MIN : ATOMIC_MAX, sem, scope, up, uv, mneg);
    ValueId neg_bits = emit1(bld, OP_BITCAST, loc, with_dtype(vt, it), neg_old);
    ValueId old = emit3(bld, OP_SELECT, loc, with_dtype(vt, it), pos, pos_old, neg_bits);
    return emit1(bld, OP_BITCAST, loc, vt, old);
}

/* tl.atomic_*: semantic.atom_red_typechecking_impl (val and mask broadcast to the pointer's
 * shape, val cast to the pointee), then one atomic_rmw (float max/min: two), or an atomic_cas. */
static LVal build_atomic(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    SrcLoc loc = e->loc;
    bool cas = bi == BI_ATOMIC_CAS;
    ValueId p = build_value(bld, arg(a, 0));
    if (!p)
        return lv_none();
    Type pt = vtype(bld, p);
    if (!pt.is_ptr) {
        build_internal(bld, arg(a, 0)->loc, "tl.%s needs a pointer, not %s", builtin_name(bi),
                       type_str(bld->arena, pt));
        return lv_none();
    }
    Type vt = with_dtype(pt, pt.dtype);
    MemSem sem = (MemSem)e->call.resolved->mem_sem;
    MemScope scope = (MemScope)e->call.resolved->mem_scope;
    Operand v = operand_from_expr(bld, arg(a, cas ? 2 : 1));
    ValueId val = operand_as(bld, &v, vt);
    if (cas) {
        Operand c = operand_from_expr(bld, arg(a, 1));
        ValueId cmp = operand_as(bld, &c, vt);
        ValueId ops[3] = {p, cmp, val};
        IrOp *op = emit(bld, OP_ATOMIC_CAS, loc, ops, 3, &vt, 1, 0);
        op->attr[1] = sem;
        op->attr[2] = scope;
        return lv_value(op->results[0]);
    }
    ValueId m = arg(a, 2) ? build_value(bld, arg(a, 2)) : 0;
    if (arg(a, 2) && !m)
        return lv_none();
    if (m)
        m = convert(bld, m, with_dtype(pt, DT_I1), loc);
    if (!val || (arg(a, 2) && !m))
        return lv_none();
    bool float_minmax = dtype_is_float(pt.dtype) && (bi == BI_ATOMIC_MAX || bi == BI_ATOMIC_MIN);
    if (float_minmax)
        return lv_value(emit_float_minmax(bld, loc, bi == BI_ATOMIC_MAX, sem, scope, p, val, m));
    static const AtomicKind kinds[] = {ATOMIC_ADD, ATOMIC_MAX, ATOMIC_MIN, ATOMIC_AND,
                                       ATOMIC_OR,  ATOMIC_XOR, ATOMIC_XCHG};
    return lv_value(emit_atomic_rmw(bld, loc, kinds[bi - BI_ATOMIC_ADD], sem, scope, p, val, m));
}

/* tl.dot: semantic.dot. */
static LVal build_dot(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    Type r = {0};
    bool have_r = sem_value_type(e, &r);
    SrcLoc loc = e->loc;
    ValueId x = build_value(bld, arg(a, 0)), y = build_value(bld, arg(a, 1));
    if (!x || !y)
        return lv_none();
    /* trans_a= / trans_b=: the operand transposed (its last two dims), as tl.trans would. */
    for (int i = 0; i < 2; i++) {
        ValueId *v = i ? &y : &x;
        int rank = vtype(bld, *v).rank;
        if (!e->call.resolved->trans[i] || rank < 2)
            continue;
        int64_t perm[TRIC_MAX_RANK];
        for (int d = 0; d < rank; d++)
            perm[d] = d;
        perm[rank - 2] = rank - 1;
        perm[rank - 1] = rank - 2;
        *v = emit_trans(bld, *v, perm, rank, arg(a, i)->loc);
    }
    Type xt = vtype(bld, x), yt = vtype(bld, y);
    /* sema's dot_builtin typed the result (semantic.dot's accumulator dtype and shape). */
    if (xt.rank < 2 || xt.rank != yt.rank || !have_r || r.rank != xt.rank) {
        build_internal(bld, loc,
                       "tl.dot reached IR building without two typed 2-D (or 3-D) blocks");
        return lv_none();
    }
    ValueId acc = arg(a, 2) ? build_as(bld, arg(a, 2), r) : emit_zero(bld, loc, r);
    /* fp8 operands stay fp8 here (e4m3 and e5m2 may meet); passes/widen_fp8.c widens them to
     * fp16 wherever wgmma's fp8 form does not run the dot. */
    ValueId ops[3] = {x, y, acc};
    IrOp *op = emit(bld, OP_DOT, loc, ops, 3, &r, 1, 0);
    op->attr[0] = e->call.resolved->tf32; /* sema's: fp32 operands, input_precision "tf32" */
    op->attr[2] = e->call.resolved->imprecise_acc;
    return lv_value(op->results[0]);
}

/* tl.cast / x.to(dtype): semantic.cast and semantic.bitcast. */
static LVal build_cast(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    Type r = {0};
    bool have_r = sem_value_type(e, &r);
    SrcLoc loc = e->loc;
    if (!have_r) {
        build_internal(bld, loc, "a cast reached IR building without a run-time type");
        return lv_none();
    }
    LVal in = build_expr(bld, arg(a, 0));
    if (in.kind == LV_CONST)
        return lv_value(lval_value(bld, in, &r, loc));
    ValueId x = lval_value(bld, in, NULL, arg(a, 0)->loc);
    if (!x)
        return lv_none();
    Type t = vtype(bld, x);
    r = with_shape(r, t);
    if (same_elem(t, r))
        return lv_value(x);
    /* semantic.bitcast: one width (sema checked); pointers go through cast. */
    if (e->call.resolved->bitcast && !t.is_ptr && !r.is_ptr)
        return lv_value(emit1(bld, OP_BITCAST, loc, r, x));
    return lv_value(cast_elems(bld, x, r, loc));
}

/* A builtin whose value sema did not type: a bug in tric. */
static LVal untyped(AstToIr *bld, const Expr *e, Builtin bi)
{
    build_internal(bld, e->loc, "tl.%s reached IR building without a run-time type",
                   builtin_name(bi));
    return lv_none();
}

/* ---- the builtins' IR builders, one per row of TRIC_BUILTINS (or shared by rows) -------------- */

static LVal build_program_id(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    Type t = type_scalar(DT_I32);
    IrOp *op =
        emit(bld, bi == BI_PROGRAM_ID ? OP_PROGRAM_ID : OP_NUM_PROGRAMS, e->loc, NULL, 0, &t, 1, 0);
    op->attr[0] = e->call.resolved->axis;
    return lv_value(op->results[0]);
}

static LVal build_arange(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    const ResolvedCall *rc = e->call.resolved;
    return lv_value(emit_range(bld, rc->start, rc->end, e->loc));
}

/* tl.zeros, tl.zeros_like, tl.full. */
static LVal build_full(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    Type r;
    if (!sem_value_type(e, &r))
        return untyped(bld, e, bi);
    if (bi != BI_FULL)
        return lv_value(emit_zero(bld, e->loc, r));
    const Expr *v = arg(a, 1);
    if (!v) {
        build_internal(bld, e->loc, "full needs a value");
        return lv_none();
    }
    return lv_value(build_as(bld, v, r));
}

/* Triton's cdiv is the jit function (x + div - 1) // div. */
static LVal build_cdiv(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    SrcLoc loc = e->loc;
    Type r;
    if (!sem_value_type(e, &r))
        return untyped(bld, e, bi);
    Operand x = operand_from_expr(bld, arg(a, 0)), d = operand_from_expr(bld, arg(a, 1));
    ValueId xv = operand_as(bld, &x, r), dv = operand_as(bld, &d, r);
    ValueId dm1;
    if (d.lv.kind == LV_CONST && d.lv.csem->cv.kind == CV_INT)
        dm1 = emit_int(bld, loc, r, d.lv.csem->cv.i - 1);
    else
        dm1 = emit2(bld, OP_SUB, loc, r, dv, emit_int(bld, loc, r, 1));
    ValueId sum = emit2(bld, OP_ADD, loc, r, xv, dm1);
    return lv_value(emit2(bld, OP_DIV, loc, r, sum, dv));
}

/* `/` (div.full.f32 on the GPU, as Triton's DivFOp), or with ieee_rounding libdevice's div_rn
 * (PreciseDivFOp) in sema's op_dtype (fp16/bf16 in fp32, as the other libdevice calls). */
static LVal build_fdiv(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    SrcLoc loc = e->loc;
    const ResolvedCall *rc = e->call.resolved;
    Type r;
    if (!sem_value_type(e, &r))
        return untyped(bld, e, bi);
    Operand x = operand_from_expr(bld, arg(a, 0)), y = operand_from_expr(bld, arg(a, 1));
    ValueId in[2] = {operand_as(bld, &x, r), operand_as(bld, &y, r)};
    LibdeviceFn div_rn;
    if (!rc->ieee_rounding)
        return lv_value(emit2(bld, OP_DIV, loc, r, in[0], in[1]));
    if (!libdevice_from_name("div_rn", &div_rn)) {
        build_internal(bld, loc, "libdevice has no div_rn");
        return lv_none();
    }
    ValueId q = emit_libdevice(bld, div_rn, in, r, rc->op_dtype, r, loc);
    return q ? lv_value(q) : lv_none();
}

/* tl.minimum, tl.maximum (and Python's min / max on run-time values, which sema made them),
 * tl.umulhi: one op on the two operands in the type sema computed. */
static LVal build_minmax(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    Type r;
    if (!sem_value_type(e, &r))
        return untyped(bld, e, bi);
    Operand x = operand_from_expr(bld, arg(a, 0)), y = operand_from_expr(bld, arg(a, 1));
    OpCode code = (bi == BI_MINIMUM || bi == BI_MIN_PY) ? OP_MIN
                  : bi == BI_UMULHI                     ? OP_UMULHI
                                                        : OP_MAX;
    ValueId in[2] = {operand_as(bld, &x, r), operand_as(bld, &y, r)};
    ValueId v = emit2(bld, code, e->loc, r, in[0], in[1]);
    if (e->call.resolved->propagate_nan)
        v = propagate_nans(bld, e->loc, v, in, 2);
    return lv_value(v);
}

static LVal build_where(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    Type r;
    if (!sem_value_type(e, &r))
        return untyped(bld, e, bi);
    ValueId c = build_value(bld, arg(a, 0));
    Operand x = operand_from_expr(bld, arg(a, 1)), y = operand_from_expr(bld, arg(a, 2));
    if (!c)
        return lv_none();
    c = convert(bld, c, with_dtype(r, DT_I1), e->loc);
    return lv_value(
        emit3(bld, OP_SELECT, e->loc, r, c, operand_as(bld, &x, r), operand_as(bld, &y, r)));
}

/* Builtins that build nothing: constexpr-only ones sema folded (static_assert, tl.constexpr,
 * len(), ...), types (tl.tensor_descriptor, isinstance), prints tric does not make, and
 * tl.assume, whose promise is dropped (sema checked the condition). */
static LVal build_folded(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    return lv_none();
}

static LVal build_to_tensor(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    Type r;
    if (!sem_value_type(e, &r))
        return untyped(bld, e, bi);
    return lv_value(build_as(bld, arg(a, 0), r));
}

/* tl.sum, tl.max, tl.min, tl.argmax, tl.argmin along sema's axis. The input is converted to the
 * reduction's dtype, the result's, which sema chose (standard.sum's _pick_sum_dtype,
 * standard.max/min's widening, which the values of return_indices=True skip); an arg reduction
 * keeps the input's. (return_indices=True never gets here: sema rewrote the call into
 * (tl.max(...), tl.argmax(...)).) */
static LVal build_reduce(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    const ResolvedCall *rc = e->call.resolved;
    Type r;
    if (!sem_value_type(e, &r))
        return untyped(bld, e, bi);
    ValueId x = build_value(bld, arg(a, 0));
    if (!x)
        return lv_none();
    static const OpCode codes[] = {[BI_SUM] = OP_REDUCE_SUM,
                                   [BI_MAX] = OP_REDUCE_MAX,
                                   [BI_MIN] = OP_REDUCE_MIN,
                                   [BI_ARGMAX] = OP_ARGMAX,
                                   [BI_ARGMIN] = OP_ARGMIN};
    if (bi != BI_ARGMAX && bi != BI_ARGMIN)
        x = convert(bld, x, with_dtype(vtype(bld, x), r.dtype), e->loc);
    return lv_value(emit_reduce(bld, codes[bi], x, rc->axis, rc->keep_dims, r.dtype, e->loc));
}

/* exp, exp2, log, log2, sqrt, rsqrt, abs, sin, cos, floor, ceil. */
static LVal build_math(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    ValueId x = build_value(bld, arg(a, 0));
    if (!x)
        return lv_none();
    Type r;
    if (!sem_value_type(e, &r))
        return untyped(bld, e, bi);
    return lv_value(emit_math(bld, math_opcode(bi), x, e->call.resolved->op_dtype, r, e->loc));
}

/* standard.sigmoid is the jit function 1 / (1 + exp(-x)), computed in sema's op_dtype (Triton
 * only takes fp32/fp64 there, math.exp's dtype check; fp16/bf16 inputs, which sema accepts, are
 * computed in fp32 and rounded once at the end, as the other transcendental functions). */
static LVal build_sigmoid(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    SrcLoc loc = e->loc;
    ValueId x = build_value(bld, arg(a, 0));
    if (!x)
        return lv_none();
    Type r;
    if (!sem_value_type(e, &r))
        return untyped(bld, e, bi);
    Type w = with_dtype(vtype(bld, x), e->call.resolved->op_dtype);
    x = convert(bld, x, w, loc);
    ValueId ex = emit1(bld, OP_EXP, loc, w, emit1(bld, OP_NEG, loc, w, x));
    ValueId den = emit2(bld, OP_ADD, loc, w, emit_int(bld, loc, w, 1), ex);
    ValueId sig = emit2(bld, OP_DIV, loc, w, emit_int(bld, loc, w, 1), den);
    return lv_value(convert(bld, sig, r, loc));
}

static LVal build_fma(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    Operand x = operand_from_expr(bld, arg(a, 0)), y = operand_from_expr(bld, arg(a, 1));
    Operand z = operand_from_expr(bld, arg(a, 2));
    Type r;
    if (!sem_value_type(e, &r))
        return untyped(bld, e, bi);
    return lv_value(emit3(bld, OP_FMA, e->loc, r, operand_as(bld, &x, r), operand_as(bld, &y, r),
                          operand_as(bld, &z, r)));
}

static LVal build_broadcast_to(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    ValueId x = build_value(bld, arg(a, 0));
    if (!x)
        return lv_none();
    Type r;
    if (!sem_value_type(e, &r))
        return untyped(bld, e, bi);
    return lv_value(broadcast_value(bld, x, r, e->loc));
}

static LVal build_expand_dims(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    ValueId x = build_value(bld, arg(a, 0));
    return x ? lv_value(expand_dims(bld, x, e->call.resolved->axis, e->loc)) : lv_none();
}

/* tl.reshape, tl.ravel, tl.view. */
static LVal build_reshape(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    SrcLoc loc = e->loc;
    ValueId x = build_value(bld, arg(a, 0));
    if (!x)
        return lv_none();
    Type t = vtype(bld, x);
    Type r;
    if (!sem_value_type(e, &r))
        return untyped(bld, e, bi);
    r = with_shape(t, r);
    if (type_equal(t, r))
        return lv_value(x);
    if (type_numel(t) != type_numel(r)) {
        build_internal(bld, loc, "reshape cannot change the number of elements (%lld to %lld)",
                       (long long)type_numel(t), (long long)type_numel(r));
        return lv_none();
    }
    return lv_value(emit1(bld, t.rank == 0 ? OP_SPLAT : OP_RESHAPE, loc, r, x));
}

/* tl.trans, tl.permute: sema's permutation (core.trans with no dims: (1, 0)). */
static LVal build_permute(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    ValueId x = build_value(bld, arg(a, 0));
    if (!x)
        return lv_none();
    return lv_value(emit_trans(bld, x, e->call.resolved->perm, vtype(bld, x).rank, e->loc));
}

/* tl.multiple_of, tl.max_contiguous: the input with the hint op axis analysis reads, one value
 * per dim (sema checked the count). */
static LVal build_hint(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    const ResolvedCall *rc = e->call.resolved;
    ValueId x = build_value(bld, arg(a, 0));
    if (!x)
        return lv_none();
    Type t = vtype(bld, x);
    IrOp *op = emit(bld, bi == BI_MULTIPLE_OF ? OP_MULTIPLE_OF : OP_MAX_CONTIGUOUS, e->loc, &x, 1,
                    &t, 1, 0);
    for (int i = 0; i < rc->nhints; i++)
        op->attr[i] = rc->hints[i];
    return lv_value(op->results[0]);
}

/* tl.max_constancy: a hint tric's axis analysis does not take: the input itself. */
static LVal build_max_constancy(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    return arg(a, 0) ? lv_value(build_value(bld, arg(a, 0))) : lv_none();
}

static LVal build_device_assert(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    const Expr *c = arg(a, 0);
    if (!c || c->sem.kind == SEM_CONST)
        return lv_none(); /* a constant condition was checked by sema */
    ValueId cv = build_value(bld, c);
    if (!cv)
        return lv_none();
    cv = convert(bld, cv, with_dtype(vtype(bld, cv), DT_I1), e->loc);
    IrOp *op = emit(bld, OP_ASSERT, e->loc, &cv, 1, NULL, 0, 0);
    const char *msg = arg_const_str(a, 1);
    op->sattr = msg ? msg : "";
    return lv_none();
}

/* tl.debug_barrier: gpu.barrier in Triton, bar.sync 0 in PTX (codegen's OP_BARRIER). */
static LVal build_debug_barrier(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    emit(bld, OP_BARRIER, e->loc, NULL, 0, NULL, 0, 0);
    return lv_none();
}

/* tl.extra.cuda.gdc_wait / gdc_launch_dependents: griddepcontrol in PTX (codegen). */
static LVal build_grid_dep(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    emit(bld, bi == BI_GDC_WAIT ? OP_GDC_WAIT : OP_GDC_LAUNCH_DEPENDENTS, e->loc, NULL, 0, NULL, 0,
         0);
    return lv_none();
}

/* range / tl.static_range outside a for loop's iterable: sema rejects them. */
static LVal build_range(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    build_internal(bld, e->loc, "%s can only be iterated over by a for loop", builtin_name(bi));
    return lv_none();
}

/* The IR builder of each builtin, from its row of TRIC_BUILTINS. */
static BuiltinBuild *const builtin_builds[BI_COUNT] = {
#define X(e, name, params, sema_rule, build, doc) [e] = build,
    TRIC_BUILTINS(X)
#undef X
};

static LVal build_builtin(AstToIr *bld, const Expr *e, Builtin bi)
{
    Args a;
    if ((int)bi < 0 || bi >= BI_COUNT) {
        build_internal(bld, e->loc, "no builtin %d", (int)bi);
        return lv_none();
    }
    if (!bind_args(bld, e, bi, &a))
        return lv_none();
    if (!e->call.resolved) {
        build_internal(bld, e->loc, "a call of %s reached IR building unresolved",
                       builtin_name(bi));
        return lv_none();
    }
    return builtin_builds[bi](bld, e, bi, &a);
}

/* ---- helper calls (inlined) -------------------------------------------------------------------- */

static const Expr *helper_arg(const Expr *call, const FuncDef *g, int i)
{
    if (call->call.bound && i < call->call.nbound)
        return call->call.bound[i]; /* sema: positional, keywords and defaults, in param order */
    if (i < call->call.nargs)
        return call->call.args[i];
    for (int k = 0; k < call->call.nkwargs; k++)
        if (strcmp(call->call.kwnames[k], g->params[i].name) == 0)
            return call->call.kwargs[k];
    return g->params[i].default_value;
}

/* A user @jit helper: its typed clone's body, built in a scope of its own where its params are
 * bound to the built arguments; the value of its return is the call's value. */
static LVal build_inlined(AstToIr *bld, const Expr *e)
{
    const FuncDef *g = e->call.inlined;
    Env *scope = env_new(bld);
    for (int i = 0; i < g->nparams; i++) {
        const Param *p = &g->params[i];
        const Expr *ae = helper_arg(e, g, i);
        if (!ae) {
            if (!p->is_constexpr)
                build_internal(bld, e->loc, "missing argument '%s' of '%s'", p->name, g->name);
            continue;
        }
        LVal v = build_expr(bld, ae); /* in the caller's scope */
        if (v.kind == LV_VALUE)
            name_value(bld, v.id, p->name);
        env_set(bld, scope, p->name, v);
    }
    Env *saved_env = bld->env;
    LVal saved_ret = bld->ret;
    bool saved_returned = bld->returned;
    int saved_depth = bld->region_depth;
    const Cont *saved_cont = bld->cont;
    bld->env = scope;
    bld->ret = lv_none();
    bld->returned = false;
    bld->region_depth = 0;
    bld->cont = NULL;
    bld->helper_depth++;
    build_block(bld, &g->body);
    LVal result = bld->ret;
    bld->helper_depth--;
    bld->env = saved_env;
    bld->ret = saved_ret;
    bld->returned = saved_returned;
    bld->region_depth = saved_depth;
    bld->cont = saved_cont;
    return result;
}

static LVal build_call(AstToIr *bld, const Expr *e)
{
    if (e->call.inlined)
        return build_inlined(bld, e);
    const Sem *fs = &e->call.fn->sem;
    if (fs->kind == SEM_BUILTIN)
        return build_builtin(bld, e, (Builtin)fs->builtin);
    build_internal(bld, e->loc, "no IR for this call (not a builtin or an inlined @jit function)");
    return lv_none();
}

/* ---- ternaries --------------------------------------------------------------------------------- */

/* Whether pred holds for e or for any expression inside it (a call's callee, arguments and
 * keyword arguments included). */
static bool expr_any(const Expr *e, bool (*pred)(const Expr *))
{
    if (!e)
        return false;
    if (pred(e))
        return true;
    switch (e->kind) {
    case EX_CALL:
        for (int i = 0; i < e->call.nargs; i++)
            if (expr_any(e->call.args[i], pred))
                return true;
        for (int i = 0; i < e->call.nkwargs; i++)
            if (expr_any(e->call.kwargs[i], pred))
                return true;
        return expr_any(e->call.fn, pred);
    case EX_ATTR: return expr_any(e->attr.obj, pred);
    case EX_SUBSCRIPT:
        for (int i = 0; i < e->sub.nidx; i++)
            if (expr_any(e->sub.idx[i], pred))
                return true;
        return expr_any(e->sub.obj, pred);
    case EX_TUPLE:
    case EX_LIST:
        for (int i = 0; i < e->list.n; i++)
            if (expr_any(e->list.elts[i], pred))
                return true;
        return false;
    case EX_BINARY: return expr_any(e->bin.lhs, pred) || expr_any(e->bin.rhs, pred);
    case EX_UNARY: return expr_any(e->un.operand, pred);
    case EX_TERNARY:
        return expr_any(e->ternary.cond, pred) || expr_any(e->ternary.then, pred) ||
               expr_any(e->ternary.els, pred);
    default: return false;
    }
}

static bool is_call(const Expr *e) { return e->kind == EX_CALL; }

static bool expr_has_call(const Expr *e) { return expr_any(e, is_call); }

/* Regions are built detached and copied into their op once its results are known. */
typedef struct RegionCtx {
    IrBuilder saved_b;
    Env *saved_env;
    const Cont *saved_cont;
} RegionCtx;

/* Makes ops go to region r (a fresh one when NULL) with scope env, until region_leave. */
static IrRegion *region_enter(AstToIr *bld, IrRegion *r, Env *env, RegionCtx *ctx)
{
    if (!r)
        r = arena_alloc(bld->arena, sizeof *r);
    ctx->saved_b = bld->b;
    ctx->saved_env = bld->env;
    ctx->saved_cont = bld->cont;
    bld->cont = NULL;
    bld->b.region = r;
    bld->b.pos = -1;
    bld->env = env;
    bld->region_depth++;
    return r;
}

static void region_leave(AstToIr *bld, RegionCtx *ctx)
{
    bld->b = ctx->saved_b;
    bld->env = ctx->saved_env;
    bld->cont = ctx->saved_cont;
    bld->region_depth--;
}

static void emit_yield(AstToIr *bld, OpCode code, SrcLoc loc, const ValueId *vals, int n)
{
    emit(bld, code, loc, vals, n, NULL, 0, 0);
}

/* A call that may touch memory, stop the program or synchronize it: loads (a masked-off side
 * must not fault), stores, asserts, debug barriers, grid dependences, helper bodies. Other
 * builtins are pure. */
static bool is_effectful_call(const Expr *e)
{
    if (e->kind != EX_CALL)
        return false;
    if (e->call.inlined)
        return true;
    const Sem *fs = &e->call.fn->sem;
    return fs->kind != SEM_BUILTIN || fs->builtin == BI_LOAD || fs->builtin == BI_STORE ||
           (fs->builtin >= BI_ATOMIC_ADD && fs->builtin <= BI_ATOMIC_CAS) ||
           fs->builtin == BI_DEVICE_ASSERT || fs->builtin == BI_DEBUG_BARRIER ||
           fs->builtin == BI_GDC_WAIT || fs->builtin == BI_GDC_LAUNCH_DEPENDENTS;
}

/* Whether evaluating e may touch memory or stop the program. */
static bool expr_has_effects(const Expr *e) { return expr_any(e, is_effectful_call); }

/* `a if c else b` with a run-time c: a select when both sides are pure, else an if whose
 * branches compute one side each (code_generator.visit_IfExp). */
static LVal build_ternary(AstToIr *bld, const Expr *e)
{
    const Expr *c = e->ternary.cond;
    if (c->sem.kind == SEM_CONST) {
        int64_t t;
        bool taken = expr_const_int(c, &t) ? t != 0 : !expr_is_none(c);
        return build_expr(bld, taken ? e->ternary.then : e->ternary.els);
    }
    ValueId cv = build_value(bld, c);
    if (!cv)
        return lv_none();
    Type ct = vtype(bld, cv);
    if (ct.rank != 0) {
        build_internal(
            bld, c->loc,
            "the condition of a conditional expression must be a scalar; use tl.where for blocks");
        return lv_none();
    }
    cv = convert(bld, cv, type_scalar(DT_I1), c->loc);
    Type r;
    if (!sem_value_type(e, &r)) {
        build_internal(bld, e->loc, "conditional expression has no type");
        return lv_none();
    }
    if (!expr_has_effects(e->ternary.then) && !expr_has_effects(e->ternary.els)) {
        ValueId x = build_as(bld, e->ternary.then, r), y = build_as(bld, e->ternary.els, r);
        return lv_value(
            emit3(bld, OP_SELECT, e->loc, r, convert(bld, cv, with_dtype(r, DT_I1), e->loc), x, y));
    }
    RegionCtx ctx;
    IrRegion *then_r = region_enter(bld, NULL, bld->env, &ctx);
    ValueId x = build_as(bld, e->ternary.then, r);
    emit_yield(bld, OP_YIELD, e->loc, &x, 1);
    region_leave(bld, &ctx);
    IrRegion *else_r = region_enter(bld, NULL, bld->env, &ctx);
    ValueId y = build_as(bld, e->ternary.els, r);
    emit_yield(bld, OP_YIELD, e->loc, &y, 1);
    region_leave(bld, &ctx);
    IrOp *op = emit(bld, OP_IF, e->loc, &cv, 1, &r, 1, 2);
    op->regions[0] = *then_r;
    op->regions[1] = *else_r;
    return lv_value(op->results[0]);
}

/* ---- expressions --------------------------------------------------------------------------------- */

static LVal build_tuple(AstToIr *bld, const Expr *e)
{
    LVal t = {.kind = LV_TUPLE, .n = e->list.n};
    t.elems = arena_alloc(bld->arena, (size_t)(e->list.n + 1) * sizeof *t.elems);
    for (int i = 0; i < e->list.n; i++)
        t.elems[i] = build_expr(bld, e->list.elts[i]);
    return t;
}

static LVal build_expr(AstToIr *bld, const Expr *e)
{
    if (!e)
        return lv_none();
    switch (e->sem.kind) {
    case SEM_CONST:
        /* A helper call sema folded may still store: build its body for the effects. */
        if (e->kind == EX_CALL && e->call.inlined)
            build_inlined(bld, e);
        return lv_const(&e->sem);
    case SEM_MODULE:
    case SEM_BUILTIN:
    case SEM_FUNC: return lv_none();
    case SEM_VOID:
        if (e->kind == EX_CALL)
            build_call(bld, e);
        return lv_none();
    case SEM_VALUE:
    case SEM_TUPLE: /* run-time tuples: EX_TUPLE, a name bound to one, a helper's return */
    case SEM_UNSET: break;
    }
    switch (e->kind) {
    case EX_NAME: {
        Binding *b = env_find(bld->env, e->str);
        if (!b) {
            build_internal(bld, e->loc, "no value for '%s' at this point", e->str);
            return lv_none();
        }
        return b->val;
    }
    case EX_NONE: return lv_none();
    case EX_BINARY: return build_binary(bld, e);
    case EX_UNARY: return build_unary(bld, e);
    case EX_TERNARY: return build_ternary(bld, e);
    case EX_SUBSCRIPT: return build_subscript(bld, e);
    case EX_ATTR: return build_attr(bld, e);
    case EX_CALL: return build_call(bld, e);
    case EX_TUPLE:
    case EX_LIST: return build_tuple(bld, e);
    default: build_internal(bld, e->loc, "no IR for this expression"); return lv_none();
    }
}

/* ---- statements -------------------------------------------------------------------------------- */

/* The variables a block may assign (run-time branches both ways, constexpr ones as decided),
 * the way Triton's dry run over a loop body finds its local_defs. */
typedef struct NameSet {
    const char **names;
    int n, cap;
} NameSet;

static void nameset_add(AstToIr *bld, NameSet *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0)
            return;
    ARENA_PUSH(bld->arena, s->names, s->n, s->cap, name);
}

static void collect_target_names(AstToIr *bld, const Expr *t, NameSet *s)
{
    if (t->kind == EX_NAME)
        nameset_add(bld, s, t->str);
    else if (t->kind == EX_TUPLE || t->kind == EX_LIST)
        for (int i = 0; i < t->list.n; i++)
            collect_target_names(bld, t->list.elts[i], s);
}

static bool for_is_static(const Stmt *s);

static void collect_assigned(AstToIr *bld, const Block *b, NameSet *s)
{
    for (int i = 0; i < b->n; i++) {
        const Stmt *st = b->stmts[i];
        switch (st->kind) {
        case ST_ASSIGN:
            for (int k = 0; k < st->assign.ntargets; k++)
                collect_target_names(bld, st->assign.targets[k], s);
            break;
        case ST_AUGASSIGN: collect_target_names(bld, st->aug.target, s); break;
        case ST_IF:
            if (st->if_.static_taken != 0)
                collect_assigned(bld, &st->if_.then, s);
            if (st->if_.static_taken != 1)
                collect_assigned(bld, &st->if_.els, s);
            break;
        case ST_FOR:
            if (for_is_static(st)) {
                for (int k = 0; k < st->for_.nunrolled; k++)
                    collect_assigned(bld, &st->for_.unrolled[k], s);
            } else {
                collect_target_names(bld, st->for_.target, s);
                collect_assigned(bld, &st->for_.body, s);
            }
            break;
        case ST_WHILE: collect_assigned(bld, &st->while_.body, s); break;
        default: break;
        }
    }
}

static void bind_target(AstToIr *bld, const Expr *t, LVal v, SrcLoc loc)
{
    switch (t->kind) {
    case EX_NAME:
        if (v.kind == LV_VALUE)
            name_value(bld, v.id, t->str);
        env_set(bld, bld->env, t->str, v);
        return;
    case EX_TUPLE:
    case EX_LIST:
        if (v.kind == LV_CONST && v.csem->cv.kind == CV_TUPLE) {
            /* (a, b) = (BLOCK_M, BLOCK_N): one constexpr per target. */
            if (v.csem->cv.tuple.n != t->list.n)
                break;
            for (int i = 0; i < t->list.n; i++) {
                const Expr *ti = t->list.elts[i];
                if (ti->sem.kind != SEM_CONST) { /* sema's assign_target typed each element */
                    build_internal(bld, ti->loc, "an unpacked constexpr has no type");
                    return;
                }
                bind_target(bld, ti, lv_const(&ti->sem), loc);
            }
            return;
        }
        if (v.kind != LV_TUPLE || v.n != t->list.n)
            break;
        for (int i = 0; i < t->list.n; i++)
            bind_target(bld, t->list.elts[i], v.elems[i], loc);
        return;
    default:
        build_internal(bld, t->loc, "only names and tuples of names can be assigned to");
        return;
    }
    build_internal(bld, loc, "cannot unpack this value into %d targets", t->list.n);
}

static void build_assign(AstToIr *bld, const Stmt *s)
{
    LVal v = build_expr(bld, s->assign.value);
    for (int i = 0; i < s->assign.ntargets; i++)
        bind_target(bld, s->assign.targets[i], v, s->loc);
}

/* x op= v is x = x op v (code_generator.visit_AugAssign). */
static void build_augassign(AstToIr *bld, const Stmt *s)
{
    const Expr *t = s->aug.target;
    if (t->kind != EX_NAME) {
        build_internal(bld, t->loc, "only names can be the target of an augmented assignment");
        return;
    }
    /* sema gives the target the new binding's Sem: a folded constexpr, or the result's type
     * and computation dtype. */
    if (t->sem.kind == SEM_CONST) {
        env_set(bld, bld->env, t->str, lv_const(&t->sem));
        return;
    }
    Binding *b = env_find(bld->env, t->str);
    if (!b) {
        build_internal(bld, t->loc, "no value for '%s' at this point", t->str);
        return;
    }
    Sem lhs_sem = {.kind = SEM_VALUE};
    if (b->val.kind == LV_CONST)
        lhs_sem.type = const_type(b->val.csem);
    Operand lhs = operand_from_lval(bld, b->val, &lhs_sem, t->loc);
    Operand rhs = operand_from_expr(bld, s->aug.value);
    if (t->sem.kind != SEM_VALUE) {
        build_internal(bld, s->loc, "'%s=' reached IR building without a run-time type",
                       binop_str(s->aug.op));
        return;
    }
    ValueId v = build_binary_operands(bld, s->aug.op, &lhs, &rhs, t->sem.type, t->sem.compute_dtype,
                                      s->loc);
    if (v) {
        name_value(bld, v, t->str);
        env_set(bld, bld->env, t->str, lv_value(v));
    }
}

static ValueId scalar_condition(AstToIr *bld, const Expr *c, const char *what)
{
    ValueId v = build_value(bld, c);
    if (!v)
        return 0;
    if (vtype(bld, v).rank != 0) {
        build_internal(bld, c->loc, "the condition of %s must be a scalar, not %s", what,
                       type_str(bld->arena, vtype(bld, v)));
        return 0;
    }
    return convert(bld, v, type_scalar(DT_I1), c->loc);
}

/* The type a variable carried out of a region has: its value's, or its constant's. */
static bool lval_carried_type(AstToIr *bld, const LVal *v, Type *out)
{
    if (v->kind == LV_VALUE) {
        *out = vtype(bld, v->id);
        return true;
    }
    if (v->kind == LV_CONST && const_is_numeric(v->csem)) {
        *out = const_type(v->csem);
        return true;
    }
    return false;
}

/* ---- variables carried out of regions -------------------------------------------------------- */

/* The variables an if yields or a loop carries. A variable may hold a tuple (a helper's
 * `return a, b`): each of its scalar/block leaves is one slot (one yielded value, one iter arg);
 * leaves that are not run-time values (None, strings) stay as they are. */
typedef struct CarryVar {
    const char *name;
    LVal shape;   /* the binding whose structure the results take */
    int first, n; /* its slots */
} CarryVar;

typedef struct CarrySet {
    CarryVar *vars;
    int nvars, vars_cap;
    Type *types; /* per slot */
    int *leaf;   /* per slot: which leaf of its variable */
    int nslots, slots_cap, leaf_cap;
} CarrySet;

static void lval_leaves(AstToIr *bld, const LVal *v, LVal **out, int *n, int *cap)
{
    if (v->kind == LV_TUPLE) {
        for (int i = 0; i < v->n; i++)
            lval_leaves(bld, &v->elems[i], out, n, cap);
        return;
    }
    ARENA_PUSH(bld->arena, *out, *n, *cap, *v);
}

/* shape with leaf i replaced by values[i] where values[i] is set. */
static LVal lval_replace_leaves(AstToIr *bld, const LVal *shape, const ValueId *values, int *pos)
{
    if (shape->kind == LV_TUPLE) {
        LVal t = *shape;
        t.elems = arena_alloc(bld->arena, (size_t)(shape->n + 1) * sizeof *t.elems);
        for (int i = 0; i < shape->n; i++)
            t.elems[i] = lval_replace_leaves(bld, &shape->elems[i], values, pos);
        return t;
    }
    ValueId v = values[(*pos)++];
    return v ? lv_value(v) : *shape;
}

/* Adds a variable; its slots' types come from shape's leaves, or other's where shape's leaf is a
 * constant and other's a value (a constexpr in one branch, a value in the other). */
static void carry_add(AstToIr *bld, CarrySet *cs, const char *name, const LVal *shape,
                      const LVal *other)
{
    LVal *ls = NULL, *lo = NULL;
    int ns = 0, cs_cap = 0, no = 0, co = 0;
    lval_leaves(bld, shape, &ls, &ns, &cs_cap);
    if (other)
        lval_leaves(bld, other, &lo, &no, &co);
    CarryVar v = {.name = name, .shape = *shape, .first = cs->nslots};
    for (int i = 0; i < ns; i++) {
        Type t;
        const LVal *o = (other && i < no) ? &lo[i] : NULL;
        if (o && o->kind == LV_VALUE && ls[i].kind != LV_VALUE)
            t = vtype(bld, o->id);
        else if (!lval_carried_type(bld, &ls[i], &t) && !(o && lval_carried_type(bld, o, &t)))
            continue;
        int slot = cs->nslots;
        ARENA_PUSH(bld->arena, cs->types, cs->nslots, cs->slots_cap, t);
        int nl = slot, lcap = cs->leaf_cap;
        ARENA_PUSH(bld->arena, cs->leaf, nl, lcap, i);
        cs->leaf_cap = lcap;
        v.n++;
    }
    ARENA_PUSH(bld->arena, cs->vars, cs->nvars, cs->vars_cap, v);
}

/* The slot values of variable k as bound in binding, converted to the slot types (constants are
 * made here, in the current region). */
static void carry_values(AstToIr *bld, const CarrySet *cs, int k, const LVal *binding, ValueId *out,
                         SrcLoc loc)
{
    const CarryVar *v = &cs->vars[k];
    LVal *leaves = NULL;
    int n = 0, cap = 0;
    lval_leaves(bld, binding, &leaves, &n, &cap);
    for (int i = 0; i < v->n; i++) {
        int slot = v->first + i, leaf = cs->leaf[slot];
        if (leaf >= n) {
            build_internal(bld, loc, "'%s' changes its tuple shape here", v->name);
            out[slot] = 0;
            continue;
        }
        out[slot] = lval_value(bld, leaves[leaf], &cs->types[slot], loc);
    }
}

/* What a slot's value is called: the variable, or `t[1]` for a leaf of a tuple. */
static const char *carry_slot_name(AstToIr *bld, const CarrySet *cs, int k, int i)
{
    const CarryVar *v = &cs->vars[k];
    if (v->shape.kind != LV_TUPLE)
        return v->name;
    return arena_printf(bld->arena, "%s[%d]", v->name, cs->leaf[v->first + i]);
}

/* Binds every variable of cs in env to its slots' values (region args or op results). */
static void carry_bind(AstToIr *bld, const CarrySet *cs, Env *env, const ValueId *values)
{
    for (int k = 0; k < cs->nvars; k++) {
        const CarryVar *v = &cs->vars[k];
        LVal *leaves = NULL;
        int n = 0, cap = 0;
        lval_leaves(bld, &v->shape, &leaves, &n, &cap);
        ValueId *by_leaf = arena_alloc(bld->arena, (size_t)(n + 1) * sizeof *by_leaf);
        for (int i = 0; i < v->n; i++) {
            ValueId id = values[v->first + i];
            by_leaf[cs->leaf[v->first + i]] = id;
            name_value(bld, id, carry_slot_name(bld, cs, k, i));
        }
        int pos = 0;
        env_set(bld, env, v->name, lval_replace_leaves(bld, &v->shape, by_leaf, &pos));
    }
}

/* Every slot's value as bound in env (a yield's operands). */
static ValueId *carry_env_values(AstToIr *bld, const CarrySet *cs, Env *env, SrcLoc loc)
{
    ValueId *vals = arena_alloc(bld->arena, (size_t)(cs->nslots + 1) * sizeof *vals);
    for (int k = 0; k < cs->nvars; k++) {
        const Binding *b = env_find(env, cs->vars[k].name);
        carry_values(bld, cs, k, b ? &b->val : &cs->vars[k].shape, vals, loc);
    }
    return vals;
}

static void build_block_in_region(AstToIr *bld, const Block *b)
{
    build_block(bld, b);
    if (bld->returned) {
        build_internal(bld, b->n ? b->stmts[b->n - 1]->loc : (SrcLoc){0},
                       "a return inside run-time control flow is not supported");
        bld->returned = false;
    }
}

static bool block_returns(const Block *b);

static bool stmt_returns(const Stmt *s)
{
    switch (s->kind) {
    case ST_RETURN: return true;
    case ST_IF:
        return (s->if_.static_taken != 0 && block_returns(&s->if_.then)) ||
               (s->if_.static_taken != 1 && block_returns(&s->if_.els));
    default: return false; /* sema rejects return inside loops */
    }
}

/* Whether a block may return (from the kernel: helpers are separate scopes). */
static bool block_returns(const Block *b)
{
    for (int i = 0; i < b->n; i++)
        if (stmt_returns(b->stmts[i]))
            return true;
    return false;
}

static void build_cont(AstToIr *bld, const Cont *k);

/* `if c: ... return ...` in the kernel's body (Triton allows a return outside loops: its CFG
 * ends the block there). Structured, the rest of the kernel moves into the branches: each runs
 * its own statements then, unless it returned, the continuation. The if has no results: nothing
 * after it is left to build. */
static void build_if_returning(AstToIr *bld, const Stmt *s, ValueId c)
{
    const Cont *rest = bld->cont;
    RegionCtx ctx;
    IrRegion *branches[2];
    const Block *blocks[2] = {&s->if_.then, &s->if_.els};
    for (int i = 0; i < 2; i++) {
        branches[i] = region_enter(bld, NULL, env_copy(bld, bld->env), &ctx);
        bld->region_depth--; /* the branch continues the kernel's body: returns stay allowed */
        Cont k = {.block = blocks[i], .start = 0, .next = rest};
        build_cont(bld, &k);
        bld->returned = false;
        emit_yield(bld, OP_YIELD, s->loc, NULL, 0);
        bld->region_depth++;
        region_leave(bld, &ctx);
    }
    IrOp *op = emit(bld, OP_IF, s->loc, &c, 1, NULL, 0, 2);
    op->regions[0] = *branches[0];
    op->regions[1] = *branches[1];
    bld->returned = true;
}

/* A run-time if (code_generator.visit_then_else_blocks): the results are the live-in variables
 * either branch reassigns, then the new variables both branches define. */
static void build_if_runtime(AstToIr *bld, const Stmt *s)
{
    ValueId c = scalar_condition(bld, s->if_.cond, "an if");
    if (!c)
        return;
    if (bld->helper_depth == 0 && bld->region_depth == 0 && stmt_returns(s)) {
        build_if_returning(bld, s, c);
        return;
    }
    Env *outer = bld->env;
    RegionCtx ctx;
    Env *then_env = env_copy(bld, outer);
    IrRegion *then_r = region_enter(bld, NULL, then_env, &ctx);
    build_block_in_region(bld, &s->if_.then);
    region_leave(bld, &ctx);
    Env *else_env = env_copy(bld, outer);
    IrRegion *else_r = region_enter(bld, NULL, else_env, &ctx);
    build_block_in_region(bld, &s->if_.els);
    region_leave(bld, &ctx);

    /* Live-in variables either branch changed, then new ones both branches define. */
    CarrySet cs = {0};
    for (int i = 0; i < outer->n; i++) {
        const Binding *o = &outer->items[i];
        const Binding *tb = env_find(then_env, o->name), *eb = env_find(else_env, o->name);
        if (!lval_equal(&tb->val, &o->val) || !lval_equal(&eb->val, &o->val))
            carry_add(bld, &cs, o->name, &tb->val, &eb->val);
    }
    for (int i = 0; i < then_env->n; i++) {
        const Binding *tb = &then_env->items[i];
        const Binding *eb = env_find(else_env, tb->name);
        if (!env_find(outer, tb->name) && eb)
            carry_add(bld, &cs, tb->name, &tb->val, &eb->val);
    }
    region_enter(bld, then_r, then_env, &ctx);
    ValueId *then_vals = carry_env_values(bld, &cs, then_env, s->loc);
    emit_yield(bld, OP_YIELD, s->loc, then_vals, cs.nslots);
    region_leave(bld, &ctx);
    region_enter(bld, else_r, else_env, &ctx);
    ValueId *else_vals = carry_env_values(bld, &cs, else_env, s->loc);
    emit_yield(bld, OP_YIELD, s->loc, else_vals, cs.nslots);
    region_leave(bld, &ctx);

    IrOp *op = emit(bld, OP_IF, s->loc, &c, 1, cs.types, cs.nslots, 2);
    op->regions[0] = *then_r;
    op->regions[1] = *else_r;
    carry_bind(bld, &cs, outer, op->results);
}

static void build_if(AstToIr *bld, const Stmt *s)
{
    int taken = s->if_.static_taken;
    if (taken < 0 && s->if_.cond->sem.kind == SEM_CONST) {
        int64_t v;
        taken = expr_const_int(s->if_.cond, &v) ? v != 0 : !expr_is_none(s->if_.cond);
    }
    if (taken == 1)
        build_block(bld, &s->if_.then); /* a constexpr if: the taken branch, in this scope */
    else if (taken == 0)
        build_block(bld, &s->if_.els);
    else
        build_if_runtime(bld, s);
}

/* The iterator's builtin: range / tl.range / tl.static_range, or -1. */
static int for_iter_builtin(const Stmt *s)
{
    const Expr *it = s->for_.iter;
    if (!it || it->kind != EX_CALL)
        return -1;
    const Expr *fn = it->call.fn;
    if (fn->sem.kind == SEM_BUILTIN)
        return fn->sem.builtin;
    const char *name = fn->kind == EX_NAME ? fn->str : fn->kind == EX_ATTR ? fn->attr.name : "";
    if (strcmp(name, "range") == 0)
        return BI_RANGE;
    if (strcmp(name, "static_range") == 0)
        return BI_STATIC_RANGE;
    return -1;
}

static bool for_is_static(const Stmt *s)
{
    return s->for_.unrolled || for_iter_builtin(s) == BI_STATIC_RANGE;
}

/* The live-in variables a loop body may reassign: what the loop carries; inits gets their
 * values before the loop. */
static void loop_carried(AstToIr *bld, const Block *body, const char *skip, CarrySet *cs,
                         ValueId **inits, SrcLoc loc)
{
    NameSet assigned = {0};
    collect_assigned(bld, body, &assigned);
    for (int i = 0; i < bld->env->n; i++) {
        const Binding *b = &bld->env->items[i];
        if (skip && strcmp(b->name, skip) == 0)
            continue;
        for (int k = 0; k < assigned.n; k++)
            if (strcmp(assigned.names[k], b->name) == 0) {
                carry_add(bld, cs, b->name, &b->val, NULL);
                break;
            }
    }
    *inits = carry_env_values(bld, cs, bld->env, loc);
    for (int k = 0; k < cs->nvars; k++)
        for (int i = 0; i < cs->vars[k].n; i++)
            name_value(bld, (*inits)[cs->vars[k].first + i], carry_slot_name(bld, cs, k, i));
}

/* A region arg per slot, bound in the current scope. */
static ValueId *carry_region_args(AstToIr *bld, const CarrySet *cs, IrRegion *r)
{
    ValueId *args = arena_alloc(bld->arena, (size_t)(cs->nslots + 1) * sizeof *args);
    for (int k = 0; k < cs->nvars; k++)
        for (int i = 0; i < cs->vars[k].n; i++) {
            int slot = cs->vars[k].first + i;
            args[slot] =
                ir_region_add_arg(bld->f, r, cs->types[slot], carry_slot_name(bld, cs, k, i));
        }
    carry_bind(bld, cs, bld->env, args);
    return args;
}

static void build_for(AstToIr *bld, const Stmt *s)
{
    int bi = for_iter_builtin(s);
    if (for_is_static(s)) {
        /* tl.static_range: sema unrolled it; each copy has the index as a constexpr. */
        for (int i = 0; i < s->for_.nunrolled && !bld->returned; i++)
            build_block(bld, &s->for_.unrolled[i]);
        return;
    }
    if (bi != BI_RANGE) {
        build_internal(bld, s->for_.iter->loc,
                       "a for loop must iterate over range, tl.range or tl.static_range");
        return;
    }
    const Expr *call = s->for_.iter;
    Args a;
    if (!bind_args(bld, call, BI_RANGE, &a))
        return;
    const Expr *lo_e = arg(&a, 0), *hi_e = arg(&a, 1), *step_e = arg(&a, 2);
    if (!hi_e) {
        hi_e = lo_e;
        lo_e = NULL;
    }
    if (!hi_e) {
        build_internal(bld, call->loc, "range needs an upper bound");
        return;
    }
    Operand lo = {0}, hi = operand_from_expr(bld, hi_e), step = {0};
    static const Sem zero_sem = {
        .kind = SEM_CONST, .cv = {.kind = CV_INT, .i = 0}, .type = {.dtype = DT_I32}};
    static const Sem one_sem = {
        .kind = SEM_CONST, .cv = {.kind = CV_INT, .i = 1}, .type = {.dtype = DT_I32}};
    lo = lo_e ? operand_from_expr(bld, lo_e)
              : operand_from_lval(bld, lv_const(&zero_sem), &zero_sem, call->loc);
    step = step_e ? operand_from_expr(bld, step_e)
                  : operand_from_lval(bld, lv_const(&one_sem), &one_sem, call->loc);
    if (lo.lv.kind == LV_NONE || hi.lv.kind == LV_NONE || step.lv.kind == LV_NONE)
        return;
    /* The induction variable's type is sema's (for_stmt), which typed the body's uses. */
    if (s->for_.target->sem.kind != SEM_VALUE) {
        build_internal(bld, call->loc, "a range loop reached IR building without a typed index");
        return;
    }
    Type ivt = s->for_.target->sem.type;
    /* A constant negative step: iterate the mirrored range upward and map the index back
     * (code_generator.visit_For does the same, scf.for needing a positive step). */
    bool negative =
        step.lv.kind == LV_CONST && step.lv.csem->cv.kind == CV_INT && step.lv.csem->cv.i < 0;
    ValueId lov = operand_as(bld, &lo, ivt), hiv = operand_as(bld, &hi, ivt);
    ValueId stepv;
    if (negative) {
        stepv = emit_int(bld, call->loc, ivt, -step.lv.csem->cv.i);
        ValueId tmp = lov;
        lov = hiv;
        hiv = tmp;
    } else {
        stepv = operand_as(bld, &step, ivt);
    }
    const char *iv_name = s->for_.target->kind == EX_NAME ? s->for_.target->str : NULL;
    if (!iv_name) {
        build_internal(bld, s->for_.target->loc, "a for loop's target must be a name");
        return;
    }

    CarrySet cs = {0};
    ValueId *inits;
    loop_carried(bld, &s->for_.body, iv_name, &cs, &inits, s->loc);
    int n = cs.nslots;

    Env *outer = bld->env;
    RegionCtx ctx;
    IrRegion *body = region_enter(bld, NULL, env_copy(bld, outer), &ctx);
    ValueId iv = ir_region_add_arg(bld->f, body, ivt, iv_name);
    carry_region_args(bld, &cs, body);
    if (negative) /* index = (original lo) + (original hi) - mirrored index */
        iv = emit2(bld, OP_ADD, s->loc, ivt, emit2(bld, OP_SUB, s->loc, ivt, hiv, iv), lov);
    env_set(bld, bld->env, iv_name, lv_value(iv));
    build_block_in_region(bld, &s->for_.body);
    emit_yield(bld, OP_YIELD, s->loc, carry_env_values(bld, &cs, bld->env, s->loc), n);
    region_leave(bld, &ctx);

    ValueId *ops = arena_alloc(bld->arena, (size_t)(n + 3) * sizeof *ops);
    ops[0] = lov;
    ops[1] = hiv;
    ops[2] = stepv;
    for (int i = 0; i < n; i++)
        ops[3 + i] = inits[i];
    IrOp *op = emit(bld, OP_FOR, s->loc, ops, n + 3, cs.types, n, 1);
    op->regions[0] = *body;
    /* tl.range(..., num_stages=S): this loop's pipelining depth (attr[0]; 0 = the function's).
     * warp_specialize=True and flatten=True (attr[1], attr[2]) are recorded so that the pipeline
     * pass can say, in a remark, that it does not apply them. */
    int64_t stages, asked;
    if (expr_const_int(arg(&a, 3), &stages) && stages > 0)
        op->attr[0] = stages;
    if (expr_const_int(arg(&a, 5), &asked) && asked)
        op->attr[1] = 1;
    if (expr_const_int(arg(&a, 6), &asked) && asked)
        op->attr[2] = 1;
    carry_bind(bld, &cs, outer, op->results);
}

/* while cond: body (code_generator.visit_While): region 0 recomputes the condition from the
 * carried values, region 1 is the body. */
static void build_while(AstToIr *bld, const Stmt *s)
{
    int64_t cv;
    if (expr_const_int(s->while_.cond, &cv) && !cv)
        return; /* while False: nothing runs */
    CarrySet cs = {0};
    ValueId *inits;
    loop_carried(bld, &s->while_.body, NULL, &cs, &inits, s->loc);
    int n = cs.nslots;
    Env *outer = bld->env;
    RegionCtx ctx;

    IrRegion *before = region_enter(bld, NULL, env_copy(bld, outer), &ctx);
    ValueId *args = carry_region_args(bld, &cs, before);
    ValueId c = scalar_condition(bld, s->while_.cond, "a while loop");
    if (!c) {
        region_leave(bld, &ctx);
        return;
    }
    ValueId *cond_ops = arena_alloc(bld->arena, (size_t)(n + 1) * sizeof *cond_ops);
    cond_ops[0] = c;
    for (int i = 0; i < n; i++)
        cond_ops[1 + i] = args[i];
    emit_yield(bld, OP_CONDITION, s->while_.cond->loc, cond_ops, n + 1);
    region_leave(bld, &ctx);

    IrRegion *after = region_enter(bld, NULL, env_copy(bld, outer), &ctx);
    carry_region_args(bld, &cs, after);
    build_block_in_region(bld, &s->while_.body);
    emit_yield(bld, OP_YIELD, s->loc, carry_env_values(bld, &cs, bld->env, s->loc), n);
    region_leave(bld, &ctx);

    IrOp *op = emit(bld, OP_WHILE, s->loc, inits, n, cs.types, n, 2);
    op->regions[0] = *before;
    op->regions[1] = *after;
    carry_bind(bld, &cs, outer, op->results);
}

/* The source text from loc to the end of its line, comment and trailing blanks cut; NULL when
 * the text is not at hand. */
static const char *source_line_from(AstToIr *bld, SrcLoc loc)
{
    const SrcFile *file = loc.file;
    if (!file || !file->text || loc.line <= 0)
        return NULL;
    const char *p = file->text, *end = file->text + file->len;
    for (int line = 1; line < loc.line && p < end; p++)
        if (*p == '\n')
            line++;
    for (int col = 1; col < loc.col && p < end && *p != '\n'; col++)
        p++;
    const char *q = p;
    while (q < end && *q != '\n' && *q != '#')
        q++;
    while (q > p && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\r'))
        q--;
    return q > p ? arena_strndup(bld->arena, p, (size_t)(q - p)) : NULL;
}

/* `assert cond, msg` is tl.device_assert(cond, msg) (code_generator.visit_Assert). Without a
 * message the statement's source text is the message, as C's assert prints it. */
static void build_assert(AstToIr *bld, const Stmt *s)
{
    const Expr *c = s->assert_.cond;
    if (!c || c->sem.kind == SEM_CONST)
        return;
    ValueId v = build_value(bld, c);
    if (!v)
        return;
    v = convert(bld, v, with_dtype(vtype(bld, v), DT_I1), c->loc);
    IrOp *op = emit(bld, OP_ASSERT, s->loc, &v, 1, NULL, 0, 0);
    const Expr *m = s->assert_.msg;
    if (m && m->sem.kind == SEM_CONST && m->sem.cv.kind == CV_STR) {
        op->sattr = m->sem.cv.s;
    } else if (m && m->kind == EX_STR) {
        op->sattr = m->str;
    } else {
        const char *text = source_line_from(bld, s->loc);
        op->sattr = text ? text : "assertion failed";
    }
}

static void build_stmt(AstToIr *bld, const Stmt *s)
{
    switch (s->kind) {
    case ST_EXPR:
        /* Docstrings and other constants are dropped; calls run for their effects. */
        if (expr_has_call(s->expr.value))
            build_expr(bld, s->expr.value);
        return;
    case ST_ASSIGN: build_assign(bld, s); return;
    case ST_AUGASSIGN: build_augassign(bld, s); return;
    case ST_IF: build_if(bld, s); return;
    case ST_FOR: build_for(bld, s); return;
    case ST_WHILE: build_while(bld, s); return;
    case ST_RETURN:
        bld->ret = s->ret.value ? build_expr(bld, s->ret.value) : lv_none();
        bld->returned = true;
        return;
    case ST_ASSERT: build_assert(bld, s); return;
    case ST_PASS:
    case ST_IMPORT: return;
    case ST_BREAK:
    case ST_CONTINUE:
        build_internal(bld, s->loc, "'%s' is not supported (Triton has no break/continue)",
                       s->kind == ST_BREAK ? "break" : "continue");
        return;
    case ST_DEF:
        build_internal(bld, s->loc, "nested function definitions are not supported");
        return;
    case ST_RAISE: build_internal(bld, s->loc, "'raise' reached the IR (sema rejects it)"); return;
    }
}

/* Statements start.. of b; `after` is what follows b. */
static void build_seq(AstToIr *bld, const Block *b, int start, const Cont *after)
{
    const Cont *saved = bld->cont;
    for (int i = start; i < b->n && !bld->returned; i++) {
        Cont k = {.block = b, .start = i + 1, .next = after};
        bld->cont = &k;
        build_stmt(bld, b->stmts[i]);
    }
    bld->cont = saved;
}

static void build_block(AstToIr *bld, const Block *b) { build_seq(bld, b, 0, bld->cont); }

static void build_cont(AstToIr *bld, const Cont *k)
{
    for (; k && !bld->returned; k = k->next)
        build_seq(bld, k->block, k->start, k->next);
}

/* ---- the kernel ----------------------------------------------------------------------------------- */

/* A host tensor descriptor parameter (sema.c, "tensordesc<fp16[64, 64]>"): the parameters a
 * launch passes for it, as Triton passes a descriptor it does not lower to TMA (its
 * backends/nvidia/driver.py): the base pointer, rank i32 shapes and rank i64 strides, the last
 * stride equal to 1 (Triton's TensorDescriptor asserts it) and so a constant, as a ":1" int is.
 * The descriptor is then what tl.make_tensor_descriptor(base, shape, strides, block) gives. */
static LVal build_desc_param(AstToIr *bld, const Param *p)
{
    IrFunc *f = bld->f;
    int r = p->desc_block.rank;
    LVal d = {.kind = LV_TUPLE, .n = 1 + 2 * r};
    d.elems = arena_alloc(bld->arena, (size_t)d.n * sizeof *d.elems);
    d.elems[0] = lv_value(ir_param_add(f, type_ptr(p->desc_block.dtype), p->name, 16));
    Type i64 = type_scalar(DT_I64);
    for (int k = 0; k < r; k++) {
        const char *name = arena_printf(bld->arena, "%s_shape%d", p->name, k);
        ValueId v = ir_param_add(f, type_scalar(DT_I32), name, 1);
        d.elems[1 + k] = lv_value(convert(bld, v, i64, p->loc));
    }
    /* Triton's TensorDescriptor asserts every stride but the last 16-byte aligned (TMA's rule):
     * the launch checks that divisibility, and the tma pass relies on it */
    int eb = dtype_bytes(p->desc_block.dtype);
    int stride_div = eb > 0 && eb < 16 ? 16 / eb : 1;
    for (int k = 0; k < r; k++) {
        const char *name = arena_printf(bld->arena, "%s_stride%d", p->name, k);
        ValueId v = ir_param_add(f, i64, name, k < r - 1 ? stride_div : 1);
        if (k < r - 1) {
            d.elems[1 + r + k] = lv_value(v);
            continue;
        }
        f->params[f->nparams - 1].equal_to_1 = true;
        Sem *one = arena_alloc(bld->arena, sizeof *one);
        *one = (Sem){.kind = SEM_CONST, .cv = {.kind = CV_INT, .i = 1}, .type = i64};
        d.elems[1 + r + k] = lv_const(one);
    }
    return d;
}

IrFunc *build_ir(const Kernel *k, Arena *arena, Diag *diag)
{
    if (!k || !k->func) {
        TRIC_INTERNAL(diag, "build_ir called without a kernel");
        return NULL;
    }
    IrFunc *f = ir_func_new(arena, k->func->name);
    AstToIr bld = {.f = f, .arena = arena, .diag = diag};
    bld.b = (IrBuilder){.func = f, .region = &f->body, .pos = -1};
    bld.env = env_new(&bld);
    for (int i = 0; i < k->nargs; i++) {
        const Param *p = k->args[i];
        if (p->desc_block.rank > 0) {
            env_set(&bld, bld.env, p->name, build_desc_param(&bld, p));
            continue;
        }
        Type t = p->sem.type;
        ValueId v = ir_param_add(f, t, p->name, p->divisibility);
        if (p->equal_to_1) {
            /* ":1": the argument is always 1; its uses see the constant (Triton's equal_to_1
             * specialization), while a launch still passes it. */
            f->params[f->nparams - 1].equal_to_1 = true;
            Sem *one = arena_alloc(arena, sizeof *one);
            one->kind = SEM_CONST;
            one->cv.kind = CV_INT;
            one->cv.i = 1;
            one->type = t;
            env_set(&bld, bld.env, p->name, lv_const(one));
        } else {
            env_set(&bld, bld.env, p->name, lv_value(v));
        }
    }
    /* Constexpr parameters: their uses are constants, but a body may rebind one (in a loop that
     * makes it a run-time value), so they are variables in scope like the others. */
    for (int i = 0; i < k->func->nparams; i++) {
        const Param *p = &k->func->params[i];
        if (p->sem.kind == SEM_CONST && !env_find(bld.env, p->name))
            env_set(&bld, bld.env, p->name, lv_const(&p->sem));
    }
    build_block(&bld, &k->func->body);
    if (bld.failed)
        return NULL;
#ifndef NDEBUG
    /* Debug builds check what was built; a failure here is a bug in build_ir.c. */
    if (!ir_verify(f, "build_ir", diag))
        return NULL;
#endif
    return f;
}

/* ---- tl.join, tl.split, tl.interleave --------------------------------------------------------- */

/* tl.split(a): one split op per half. A [2] block is split as Triton's core.split does: expanded to
 * [1, 2], split, and each [1] half reduced to its one element. */
static LVal build_split(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    SrcLoc loc = e->loc;
    ValueId x = arg(a, 0) ? build_value(bld, arg(a, 0)) : 0;
    if (!x)
        return lv_none();
    bool to_scalars = vtype(bld, x).rank == 1;
    if (to_scalars)
        x = expand_dims(bld, x, 0, loc);
    Type half = vtype(bld, x);
    half.shape[--half.rank] = 0;
    LVal pair = {.kind = LV_TUPLE, .n = 2};
    pair.elems = arena_alloc(bld->arena, 2 * sizeof *pair.elems);
    for (int k = 0; k < 2; k++) {
        IrOp *op = emit(bld, OP_SPLIT, loc, &x, 1, &half, 1, 0);
        op->attr[0] = k;
        ValueId v = op->results[0];
        if (to_scalars)
            v = emit_reduce(bld, OP_REDUCE_MAX, v, AXIS_ALL, false, half.dtype, loc);
        pair.elems[k] = lv_value(v);
    }
    return pair;
}

/* tl.join(a, b) and tl.interleave(a, b) (Triton's semantic.join and standard.interleave): both
 * broadcast to one shape, joined along a new last dim of 2; two scalars go through [1] blocks and
 * give a [2] block; interleave then merges the last two dims (a row-major reshape). r is the type
 * sema gave the call. */
static LVal build_join(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    SrcLoc loc = e->loc;
    Type r;
    if (!sem_value_type(e, &r))
        return untyped(bld, e, bi);
    ValueId x = arg(a, 0) ? build_value(bld, arg(a, 0)) : 0;
    ValueId y = x && arg(a, 1) ? build_value(bld, arg(a, 1)) : 0;
    if (!y)
        return lv_none();
    /* the operands' common shape, from sema's result type: join's without its last dim (2),
     * interleave's with its last dim halved; two scalars stay scalars */
    Type shape = r;
    if (vtype(bld, x).rank == 0 && vtype(bld, y).rank == 0)
        shape.rank = 0;
    else if (bi == BI_INTERLEAVE)
        shape.shape[shape.rank - 1] /= 2;
    else
        shape.rank--;
    for (int i = shape.rank; i < TRIC_MAX_RANK; i++)
        shape.shape[i] = 0;
    x = convert(bld, x, shape, loc);
    y = convert(bld, y, shape, loc);
    bool scalars = shape.rank == 0;
    if (scalars) {
        x = expand_dims(bld, x, 0, loc);
        y = expand_dims(bld, y, 0, loc);
    }
    Type pair = vtype(bld, x);
    pair.shape[pair.rank++] = 2;
    ValueId v = emit2(bld, OP_JOIN, loc, pair, x, y);
    if (scalars || bi == BI_INTERLEAVE) {
        Type flat = pair;
        if (scalars)
            flat.shape[0] = 2;
        else
            flat.shape[flat.rank - 2] *= 2;
        flat.shape[--flat.rank] = 0;
        v = emit1(bld, OP_RESHAPE, loc, flat, v);
    }
    return lv_value(v);
}

/* ---- tl.dot_scaled: decomposed as Triton does where no scaled MMA exists ----------------------
 *
 * Triton's DecomposeScaledBlocked (sm_90 and older): each operand is upcast to the compute type
 * (fp16 when either format is fp16, else bf16), multiplied by its e8m0 scale 2^(s - 127)
 * repeated over each group of K elements (NaN where s = 0xFF unless fast_math), and the two meet
 * in an ordinary dot with fp32 accumulation. Here the same steps are existing IR ops, so the
 * interpreter, the layouts and the tensor-core dot paths apply unchanged. */

/* v with each element repeated n times along axis (shape[axis] * n): expand_dims after axis,
 * broadcast it to n, reshape the two dims into one (Triton's broadcastScale). */
static ValueId repeat_along(AstToIr *bld, ValueId v, int axis, int n, SrcLoc loc)
{
    Type merged = vtype(bld, v);
    merged.shape[axis] *= n;
    ValueId x = expand_dims(bld, v, axis + 1, loc);
    Type wide = vtype(bld, x);
    wide.shape[axis + 1] = n;
    x = broadcast_value(bld, x, wide, loc);
    return emit1(bld, OP_RESHAPE, loc, merged, x);
}

/* lo and hi (one shape) interleaved along axis: lo[0], hi[0], lo[1], hi[1], ... An iota of size
 * 2 on a new dim after axis picks lo at 0 and hi at 1; a reshape merges the two dims (tl.join
 * followed by a reshape, built from ops that exist today). */
static ValueId interleave(AstToIr *bld, ValueId lo, ValueId hi, int axis, SrcLoc loc)
{
    Type merged = vtype(bld, lo);
    merged.shape[axis] *= 2;
    ValueId l = expand_dims(bld, lo, axis + 1, loc), h = expand_dims(bld, hi, axis + 1, loc);
    Type wide = vtype(bld, l);
    wide.shape[axis + 1] = 2;
    l = broadcast_value(bld, l, wide, loc);
    h = broadcast_value(bld, h, wide, loc);
    ValueId iota = on_axis(bld, emit_range(bld, 0, 2, loc), axis + 1, wide.rank, loc);
    Type iota_t = vtype(bld, iota);
    ValueId first =
        emit2(bld, OP_CMP_EQ, loc, with_dtype(iota_t, DT_I1), iota, emit_int(bld, loc, iota_t, 0));
    first = broadcast_value(bld, first, with_dtype(wide, DT_I1), loc);
    ValueId both = emit3(bld, OP_SELECT, loc, wide, first, l, h);
    return emit1(bld, OP_RESHAPE, loc, merged, both);
}

/* e2m1 values packed two per uint8 along axis (low nibble first, as Triton's Fp4ToFpOp) as the
 * 16-bit float ct. An e2m1 nibble is sign, 2 exponent bits (bias 1), 1 mantissa bit (OCP MX
 * spec 5.3.3): magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6. For exponent > 0 the float's bits are the
 * nibble's exponent and mantissa moved up with the bias changed, (m << (mant - 1)) + (bias - 1
 * << mant); magnitudes 0 and 1 (0 and 0.5) are the subnormals, 0.5 is the float bias - 1. */
static ValueId decode_e2m1(AstToIr *bld, ValueId packed, int axis, DType ct, SrcLoc loc)
{
    Type pt = vtype(bld, packed);
    ValueId lo = emit2(bld, OP_AND, loc, pt, packed, emit_int(bld, loc, pt, 15));
    ValueId hi = emit2(bld, OP_SHR, loc, pt, packed, emit_int(bld, loc, pt, 4));
    ValueId both = interleave(bld, lo, hi, axis, loc);
    ValueId nib = cast_elems(bld, both, with_dtype(vtype(bld, both), DT_U16), loc);
    Type t = vtype(bld, nib);
    int mant = ct == DT_F16 ? 10 : 7, bias = ct == DT_F16 ? 15 : 127;
    int64_t half = (int64_t)(bias - 1) << mant;
    ValueId mag = emit2(bld, OP_AND, loc, t, nib, emit_int(bld, loc, t, 7));
    ValueId sign =
        emit2(bld, OP_SHL, loc, t, emit2(bld, OP_AND, loc, t, nib, emit_int(bld, loc, t, 8)),
              emit_int(bld, loc, t, 12));
    ValueId normal =
        emit2(bld, OP_ADD, loc, t, emit2(bld, OP_SHL, loc, t, mag, emit_int(bld, loc, t, mant - 1)),
              emit_int(bld, loc, t, half));
    ValueId small = emit2(bld, OP_MUL, loc, t, mag, emit_int(bld, loc, t, half));
    ValueId is_normal =
        emit2(bld, OP_CMP_GE, loc, with_dtype(t, DT_I1), mag, emit_int(bld, loc, t, 2));
    ValueId bits =
        emit2(bld, OP_OR, loc, t, emit3(bld, OP_SELECT, loc, t, is_normal, normal, small), sign);
    return emit1(bld, OP_BITCAST, loc, with_dtype(t, ct), bits);
}

/* One operand of tl.dot_scaled as ct [B,] M x K or K x N: e2m1 unpacked along K (or, without
 * k_pack, along M / N); other formats bitcast from uint8 / uint16 to their float type, then cast
 * (semantic._bitcast_to_fp_type, then FpToFpOp). */
static ValueId scaled_operand_value(AstToIr *bld, const Expr *x, const char *format, bool k_pack,
                                    bool is_rhs, DType ct, SrcLoc loc)
{
    ValueId v = build_value(bld, x);
    if (!v)
        return 0;
    Type t = vtype(bld, v);
    int r = t.rank, k_dim = is_rhs ? r - 2 : r - 1, mn_dim = is_rhs ? r - 1 : r - 2;
    if (!strcmp(format, "e2m1"))
        return decode_e2m1(bld, v, k_pack ? k_dim : mn_dim, ct, loc);
    DType fmt = !strcmp(format, "e4m3")   ? DT_F8E4NV
                : !strcmp(format, "e5m2") ? DT_F8E5
                : !strcmp(format, "bf16") ? DT_BF16
                                          : DT_F16;
    if (t.dtype != fmt)
        v = emit1(bld, OP_BITCAST, loc, with_dtype(t, fmt), v);
    return cast_elems(bld, v, with_dtype(t, ct), loc);
}

/* v (ct, [B,] M x K for the lhs, K x N for the rhs) times 2^(s - 127) for its uint8 scale s
 * ([B,] M x K/G, or N x K/G for the rhs: transposed first, as Triton's extendAndBroadcastScale).
 * The scale's float is its bits moved into an exponent field (scaleTo16: bf16 directly; for fp16
 * through fp32, then rounded); 0xFF is NaN unless fast_math (maskNan). */
static ValueId apply_scale(AstToIr *bld, ValueId v, const Expr *scale, bool is_rhs, bool fast_math,
                           DType ct, SrcLoc loc)
{
    ValueId s = build_value(bld, scale);
    if (!v || !s)
        return 0;
    int r = vtype(bld, s).rank, k_dim = is_rhs ? r - 2 : r - 1;
    if (is_rhs) {
        int64_t perm[TRIC_MAX_RANK];
        for (int i = 0; i < r; i++)
            perm[i] = i;
        perm[r - 2] = r - 1;
        perm[r - 1] = r - 2;
        s = emit_trans(bld, s, perm, r, loc);
    }
    Type vt = vtype(bld, v);
    int group = vt.shape[k_dim] / vtype(bld, s).shape[k_dim];
    s = repeat_along(bld, s, k_dim, group, loc);
    Type st = vtype(bld, s);
    DType wide = ct == DT_F16 ? DT_U32 : DT_U16;
    ValueId bits = cast_elems(bld, s, with_dtype(st, wide), loc);
    bits = emit2(bld, OP_SHL, loc, with_dtype(st, wide), bits,
                 emit_int(bld, loc, with_dtype(st, wide), ct == DT_F16 ? 23 : 7));
    ValueId factor =
        emit1(bld, OP_BITCAST, loc, with_dtype(st, ct == DT_F16 ? DT_F32 : DT_BF16), bits);
    factor = cast_elems(bld, factor, vt, loc);
    ValueId scaled = emit2(bld, OP_MUL, loc, vt, v, factor);
    if (fast_math)
        return scaled;
    ValueId is_nan =
        emit2(bld, OP_CMP_EQ, loc, with_dtype(st, DT_I1), s, emit_int(bld, loc, st, 255));
    return emit3(bld, OP_SELECT, loc, vt, is_nan, ir_build_const_float(&bld->b, loc, vt, NAN),
                 scaled);
}

/* tl.dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc, fast_math,
 * lhs_k_pack, rhs_k_pack, out_dtype): sema checked the arguments; r is the fp32 product. */
static LVal build_dot_scaled(AstToIr *bld, const Expr *e, Builtin bi, const Args *a)
{
    Type r = {0};
    bool have_r = sem_value_type(e, &r);
    SrcLoc loc = e->loc;
    const char *lf = arg_const_str(a, 2), *rf = arg_const_str(a, 5);
    if (!arg(a, 0) || !arg(a, 3) || !lf || !rf || !have_r) {
        build_internal(bld, loc,
                       "dot_scaled reached IR building without its operands and constexpr formats");
        return lv_none();
    }
    DType ct = e->call.resolved->op_dtype;
    const ResolvedCall *rc = e->call.resolved;
    bool fast_math = rc->fast_math;
    ValueId x = scaled_operand_value(bld, arg(a, 0), lf, rc->k_pack[0], false, ct, loc);
    ValueId y = scaled_operand_value(bld, arg(a, 3), rf, rc->k_pack[1], true, ct, loc);
    if (arg(a, 1))
        x = apply_scale(bld, x, arg(a, 1), false, fast_math, ct, loc);
    if (arg(a, 4))
        y = apply_scale(bld, y, arg(a, 4), true, fast_math, ct, loc);
    if (!x || !y)
        return lv_none();
    ValueId acc = arg(a, 6) ? build_as(bld, arg(a, 6), r) : emit_zero(bld, loc, r);
    ValueId ops[3] = {x, y, acc};
    IrOp *op = emit(bld, OP_DOT, loc, ops, 3, &r, 1, 0);
    op->attr[0] = 0;
    return lv_value(op->results[0]);
}
