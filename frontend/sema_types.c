/* sema_types.c: Triton's typing rules (python/triton/language/semantic.py): the computation type
 * of a binary operation (computation_type_impl, with weakly typed Python scalars),
 * integer_promote_impl, numpy-like broadcasting, and the binary and unary operators built on
 * them. These rules live here only: frontend/build_ir.c builds ops in the types recorded here. */
#include "frontend/sema_internal.h"

#include <math.h>

/* ---- Triton's typing rules ------------------------------------------------------------------- */

/* Python-scalar kinds for weak typing: bool < uint < int < float (semantic.py,
 * computation_type_impl step 0). */
static int dtype_kind_rank(DType t)
{
    if (t == DT_I1)
        return 0;
    switch (dtype_kind(t)) {
    case DK_UINT: return 1;
    case DK_INT: return 2;
    case DK_FLOAT: return 3;
    }
    return 2;
}

/* integer_promote_impl: C's usual arithmetic conversions on widths and signedness. */
static DType integer_promote(DType a, DType b)
{
    bool ua = dtype_kind(a) == DK_UINT, ub = dtype_kind(b) == DK_UINT;
    int ra = dtype_bits(a), rb = dtype_bits(b);
    if (ua == ub)
        return ra > rb ? a : b;
    if (ua)
        return ra >= rb ? a : b;
    return rb >= ra ? b : a;
}

/* fp8 values are loaded, stored, converted and fed to tl.dot; arithmetic goes through a wider
 * float, as the message says. */
#define FP8_NO_ARITHMETIC                                                                          \
    "fp8 has no arithmetic in tric; convert with .to(tl.float16) or .to(tl.float32) first"

/* An error at loc when t is an fp8 value used by an operation that computes on it. */
bool reject_fp8(Sema *s, SrcLoc loc, const char *what, Type t)
{
    if (t.is_ptr || !dtype_is_fp8(t.dtype))
        return true;
    diag_error(s->diag, loc, "%s of %s: %s", what, dtype_name(t.dtype), FP8_NO_ARITHMETIC);
    return false;
}

/* computation_type_impl. a_weak / b_weak: the operand is a Python scalar (constexpr). Returns
 * false with *why set when the types do not combine. */
bool computation_type(DType a, bool a_weak, DType b, bool b_weak, bool div_or_mod, DType *out,
                      const char **why)
{
    if (a_weak != b_weak) {
        DType scalar = a_weak ? a : b, block = a_weak ? b : a;
        if (dtype_is_fp8(block)) {
            *why = FP8_NO_ARITHMETIC;
            return false;
        }
        if (dtype_kind_rank(scalar) <= dtype_kind_rank(block)) {
            *out = (div_or_mod && (block == DT_F16 || block == DT_BF16)) ? DT_F32 : block;
            return true;
        }
    }
    if (a == DT_F64 || b == DT_F64)
        return *out = DT_F64, true;
    if (a == DT_F32 || b == DT_F32)
        return *out = DT_F32, true;
    /* fp16 wins over bf16 here, as in Triton (step 3 is checked before step 4). */
    if (a == DT_F16 || b == DT_F16)
        return *out = div_or_mod ? DT_F32 : DT_F16, true;
    if (a == DT_BF16 || b == DT_BF16)
        return *out = (div_or_mod || a != b) ? DT_F32 : DT_BF16, true;
    /* Step 5 would compute fp8 with fp8 in fp8 (or fp16 for two formats); tric keeps fp8 a
     * storage type: with a wider float above the fp8 operand is converted exactly. */
    if (dtype_is_fp8(a) || dtype_is_fp8(b)) {
        *why = FP8_NO_ARITHMETIC;
        return false;
    }
    if (div_or_mod && dtype_is_signed(a) != dtype_is_signed(b) && a != DT_I1 && b != DT_I1) {
        *why = "they have different signedness; cast them to the same signedness";
        return false;
    }
    *out = integer_promote(a, b);
    return true;
}

/* Numpy-like broadcasting, right-aligned (Triton's broadcast_impl_value). Reports at loc. */
bool broadcast(Sema *s, SrcLoc loc, Type a, Type b, Type *out)
{
    int rank = a.rank > b.rank ? a.rank : b.rank;
    Type r = {.rank = (uint8_t)rank};
    for (int i = 0; i < rank; i++) {
        int ai = a.rank - rank + i, bi = b.rank - rank + i;
        int32_t da = ai >= 0 ? a.shape[ai] : 1, db = bi >= 0 ? b.shape[bi] : 1;
        r.shape[i] = da;
        if (da == 1)
            r.shape[i] = db;
        else if (db != 1 && da != db)
            goto mismatch;
    }
    *out = r;
    return true;
mismatch:
    /* Report the first mismatching dimension from the right, as numpy does. */
    for (int i = rank - 1; i >= 0; i--) {
        int ai = a.rank - rank + i, bi = b.rank - rank + i;
        int32_t da = ai >= 0 ? a.shape[ai] : 1, db = bi >= 0 ? b.shape[bi] : 1;
        if (da != 1 && db != 1 && da != db) {
            diag_error(s->diag, loc, "cannot broadcast %s and %s: dimension %d is %d vs %d",
                       shape_str(s, a), shape_str(s, b), i, da, db);
            break;
        }
    }
    return false;
}

/* Can `from` be broadcast to exactly `to` (a mask/value to a pointer's shape)? */
bool broadcasts_to(Type from, Type to)
{
    if (from.rank > to.rank)
        return false;
    for (int i = 0; i < from.rank; i++) {
        int32_t d = from.shape[from.rank - 1 - i], t = to.shape[to.rank - 1 - i];
        if (d != 1 && d != t)
            return false;
    }
    return true;
}

Type with_shape(DType dt, bool is_ptr, Type shape)
{
    Type t = shape;
    t.dtype = dt;
    t.is_ptr = is_ptr;
    return t;
}

static const char *elem_str(Sema *s, Type t) { return tstr(s, type_elem(t)); }

/* The type of `l op r` where at least one side is a run-time value (Triton semantic.py: add,
 * sub, mul, truediv, floordiv, mod, bitwise ops, shifts, comparisons). */
static Sem binary_values(Sema *s, SrcLoc loc, BinOp op, Sem l, Sem r)
{
    Type lt, rt;
    if (!operand_type(l, &lt) || !operand_type(r, &rt)) {
        Sem bad = operand_type(l, &lt) ? r : l;
        diag_error(s->diag, loc, "unsupported operand for %s: %s", binop_str(op),
                   sem_describe(s, bad));
        return sem_error();
    }
    bool lw = l.kind == SEM_CONST, rw = r.kind == SEM_CONST;
    Type shape;
    if (!broadcast(s, loc, lt, rt, &shape))
        return sem_error();
    const char *opname = binop_str(op);

    if (op == BIN_MATMUL) {
        diag_error(s->diag, loc, "the '@' operator is not supported; use tl.dot(a, b)");
        return sem_error();
    }
    if (op == BIN_AND || op == BIN_OR || op == BIN_IS || op == BIN_IS_NOT) {
        if (op == BIN_IS || op == BIN_IS_NOT) {
            /* A run-time value is never None nor any constexpr: `x is None` is False. */
            return sem_bool(op == BIN_IS_NOT);
        }
        /* Triton 3 maps and/or on run-time values to logical_and/logical_or: both sides as
         * int1, broadcast, no short-circuit (FlagGems writes `mask = row_mask and col_mask`). */
        return sem_value(with_shape(DT_I1, false, shape));
    }

    /* Pointer arithmetic: ptr + int, int + ptr, ptr - int (semantic.py check_ptr_type_impl). */
    if (lt.is_ptr || rt.is_ptr) {
        if (op == BIN_EQ || op == BIN_NE) {
            if (lt.is_ptr && rt.is_ptr && lt.dtype == rt.dtype) {
                Sem v = sem_value(with_shape(DT_I1, false, shape));
                v.compute_dtype = DT_I64;
                return v;
            }
        }
        if (lt.is_ptr && rt.is_ptr) {
            diag_error(s->diag, loc, "cannot %s pointers (%s and %s)",
                       op == BIN_ADD   ? "add two"
                       : op == BIN_SUB ? "subtract two"
                                       : "combine",
                       elem_str(s, lt), elem_str(s, rt));
            return sem_error();
        }
        Type pt = lt.is_ptr ? lt : rt, it = lt.is_ptr ? rt : lt;
        if (op != BIN_ADD && !(op == BIN_SUB && lt.is_ptr)) {
            diag_error(s->diag, loc,
                       "'%s' is not defined on pointers (%s %s %s); pointer "
                       "arithmetic is ptr + int and ptr - int",
                       opname, elem_str(s, lt), opname, elem_str(s, rt));
            return sem_error();
        }
        if (!dtype_is_int(it.dtype)) {
            diag_error(s->diag, loc, "cannot %s %s %s a pointer (%s): offsets must be integers",
                       op == BIN_ADD ? "add" : "subtract", elem_str(s, it),
                       op == BIN_ADD ? "to" : "from", elem_str(s, pt));
            return sem_error();
        }
        Sem v = sem_value(with_shape(pt.dtype, true, shape));
        v.compute_dtype = it.dtype;
        return v;
    }

    DType ct;
    const char *why = NULL;
    switch (op) {
    case BIN_BITAND:
    case BIN_BITOR:
    case BIN_BITXOR:
    case BIN_SHL:
    case BIN_SHR:
        /* bitwise_op_type_checking_impl: integers only, integer_promote_impl, no weak typing. */
        if (!dtype_is_int(lt.dtype) || !dtype_is_int(rt.dtype)) {
            diag_error(s->diag, loc, "'%s' needs integer operands, got %s and %s", opname,
                       elem_str(s, lt), elem_str(s, rt));
            return sem_error();
        }
        /* bitwise_op_type_checking_impl: the arithmetic check first (weak Python scalars, so
         * x_i8 << 1 stays int8), then integers only, then integer_promote_impl. */
        if (!computation_type(lt.dtype, lw, rt.dtype, rw, false, &ct, &why) || !dtype_is_int(ct)) {
            diag_error(s->diag, loc, "'%s' needs integer operands, got %s and %s", opname,
                       elem_str(s, lt), elem_str(s, rt));
            return sem_error();
        }
        {
            Sem v = sem_value(with_shape(ct, false, shape));
            v.compute_dtype = ct;
            return v;
        }
    case BIN_FLOORDIV:
        if (!dtype_is_int(lt.dtype) || !dtype_is_int(rt.dtype)) {
            diag_error(s->diag, loc,
                       "'//' needs integer operands, got %s and %s (use / for "
                       "floats)",
                       elem_str(s, lt), elem_str(s, rt));
            return sem_error();
        }
        break;
    default: break;
    }
    bool div_or_mod = op == BIN_DIV || op == BIN_MOD || op == BIN_FLOORDIV;
    bool compare = op == BIN_EQ || op == BIN_NE || op == BIN_LT || op == BIN_LE || op == BIN_GT ||
                   op == BIN_GE;
    /* Two fp8 values compare in fp16, which holds both formats exactly (Triton: in the fp8
     * type, or fp16 for two formats; the same answers). */
    if (compare && !lw && !rw && !lt.is_ptr && !rt.is_ptr && dtype_is_fp8(lt.dtype) &&
        dtype_is_fp8(rt.dtype)) {
        Sem v = sem_value(with_shape(DT_I1, false, shape));
        v.compute_dtype = DT_F16;
        return v;
    }
    if (!computation_type(lt.dtype, lw, rt.dtype, rw, div_or_mod, &ct, &why)) {
        diag_error(s->diag, loc, "cannot use '%s' with %s and %s: %s", opname, elem_str(s, lt),
                   elem_str(s, rt), why);
        return sem_error();
    }
    /* A negative Python scalar with an unsigned computation type (semantic.py raises too). */
    if (dtype_kind(ct) == DK_UINT &&
        ((lw && l.cv.kind == CV_INT && l.cv.i < 0) || (rw && r.cv.kind == CV_INT && r.cv.i < 0))) {
        diag_error(s->diag, loc,
                   "cannot combine an unsigned %s with a negative constant; cast "
                   "one of them explicitly",
                   dtype_name(ct));
        return sem_error();
    }
    DType result = ct;
    switch (op) {
    case BIN_EQ:
    case BIN_NE:
    case BIN_LT:
    case BIN_LE:
    case BIN_GT:
    case BIN_GE: result = DT_I1; break;
    case BIN_DIV:
        if (dtype_is_int(ct))
            ct = DT_F32; /* truediv: int / int is computed in fp32 */
        result = ct;
        break;
    default: break;
    }
    Sem v = sem_value(with_shape(result, false, shape));
    v.compute_dtype = ct;
    return v;
}

Sem binary_sems(Sema *s, SrcLoc loc, BinOp op, Sem l, Sem r)
{
    if (is_error(l) || is_error(r))
        return sem_error();
    if (op == BIN_MATMUL) {
        diag_error(s->diag, loc, "the '@' operator is not supported; use tl.dot(a, b)");
        return sem_error();
    }
    if (op == BIN_IN || op == BIN_NOT_IN) {
        diag_error(s->diag, loc, "membership tests ('%s') are not supported in kernels",
                   binop_str(op));
        return sem_error();
    }
    if (l.kind == SEM_CONST && r.kind == SEM_CONST)
        return fold_binary(s, loc, op, l.cv, r.cv);
    if (op == BIN_POW) {
        diag_error(s->diag, loc,
                   "'**' is only supported on constexprs; multiply explicitly "
                   "(x * x) or use tl.exp2 and tl.log2");
        return sem_error();
    }
    if ((op == BIN_IS || op == BIN_IS_NOT || op == BIN_EQ || op == BIN_NE) &&
        ((l.kind == SEM_CONST && !const_is_number(&l.cv)) ||
         (r.kind == SEM_CONST && !const_is_number(&r.cv))) &&
        (l.kind == SEM_VALUE || r.kind == SEM_VALUE))
        return sem_bool(op == BIN_IS_NOT || op == BIN_NE); /* a value vs None / a dtype */
    if ((op == BIN_AND || op == BIN_OR) && l.kind == SEM_CONST) {
        /* Python short-circuit with a constexpr left side. */
        bool t = const_truthy(&l.cv);
        if ((op == BIN_AND && !t) || (op == BIN_OR && t))
            return l;
    }
    return binary_values(s, loc, op, l, r);
}

Sem binary_expr(Sema *s, Expr *e)
{
    Sem l = expr(s, e->bin.lhs);
    Sem r = expr(s, e->bin.rhs);
    return binary_sems(s, e->loc, e->bin.op, l, r);
}

Sem unary_expr(Sema *s, Expr *e)
{
    Sem x = expr(s, e->un.operand);
    if (is_error(x))
        return x;
    UnOp op = e->un.op;
    static const char *const names[] = {"-", "+", "~", "not"};
    const char *opname = (unsigned)op < 4 ? names[op] : "?";
    if (x.kind == SEM_CONST) {
        if (op == UN_NOT)
            return sem_bool(!const_truthy(&x.cv));
        if (!const_is_number(&x.cv)) {
            diag_error(s->diag, e->loc, "bad operand for unary %s: %s", opname, sem_describe(s, x));
            return sem_error();
        }
        if (op == UN_PLUS)
            return x.cv.kind == CV_BOOL ? sem_int(x.cv.b) : x;
        if (op == UN_NEG)
            return x.cv.kind == CV_FLOAT ? sem_float(-x.cv.f)
                                         : sem_int((int64_t)(0 - (uint64_t)const_as_int(&x.cv)));
        if (x.cv.kind == CV_FLOAT) {
            diag_error(s->diag, e->loc, "'~' needs an integer operand, got a float");
            return sem_error();
        }
        return sem_int(~const_as_int(&x.cv));
    }
    if (x.kind != SEM_VALUE) {
        diag_error(s->diag, e->loc, "bad operand for unary %s: %s", opname, sem_describe(s, x));
        return sem_error();
    }
    Type t = x.type;
    switch (op) {
    case UN_NOT:
        /* Triton's tensor.__not__ (semantic.not_) inverts an int1 block; another block it
         * bitcasts to int1, which fails unless the width is 1 */
        if (t.rank && (t.is_ptr || t.dtype != DT_I1)) {
            diag_error(s->diag, e->loc,
                       "'not' on a block needs an int1 block (as in Triton), got %s; use '== 0'",
                       tstr(s, t));
            return sem_error();
        }
        t.dtype = DT_I1; /* a scalar's truth value, or the int1 block inverted */
        return sem_value(t);
    case UN_NEG:
    case UN_PLUS:
        if (!reject_fp8(s, e->loc, op == UN_NEG ? "unary -" : "unary +", t))
            return sem_error();
        if (t.is_ptr) {
            diag_error(s->diag, e->loc, "bad operand for unary %s: a pointer (%s)", opname,
                       tstr(s, t));
            return sem_error();
        }
        return sem_value(t);
    case UN_INVERT:
        if (t.is_ptr || !dtype_is_int(t.dtype)) {
            diag_error(s->diag, e->loc, "'~' needs an integer operand, got %s", tstr(s, t));
            return sem_error();
        }
        return sem_value(t);
    }
    return sem_error();
}
