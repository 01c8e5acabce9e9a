/* sema_const.c: constexpr values. Constant folding with Python's semantics (floor // and %, /
 * gives a float; Triton's constexpr.__add__ and friends), and calls of
 * @triton.constexpr_function helpers, evaluated at compile time on constexpr arguments. */
#include "frontend/sema_internal.h"

#include <math.h>

/* ---- constexpr folding (Python semantics) ---------------------------------------------------- */

double const_as_float(const ConstVal *cv)
{
    return cv->kind == CV_FLOAT ? cv->f : cv->kind == CV_INT ? (double)cv->i : (double)cv->b;
}

/* An int or bool constexpr as an int. Only for those two kinds: a float's union member is not an
 * int (reading .b of a float is undefined behaviour, which UBSan reports), so callers that may
 * see a float test for it first, as fold_binary does. */
int64_t const_as_int(const ConstVal *cv)
{
    return cv->kind == CV_INT ? cv->i : cv->kind == CV_BOOL ? (int64_t)cv->b : 0;
}

int64_t py_floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

PyIntStatus py_int_binary(BinOp op, int64_t a, int64_t b, int64_t *out)
{
    int64_t v = 0;
    bool overflow = false;
    switch (op) {
    case BIN_ADD: overflow = __builtin_add_overflow(a, b, &v); break;
    case BIN_SUB: overflow = __builtin_sub_overflow(a, b, &v); break;
    case BIN_MUL: overflow = __builtin_mul_overflow(a, b, &v); break;
    case BIN_FLOORDIV:
    case BIN_MOD:
        if (b == 0)
            return PY_INT_DIV_ZERO;
        overflow = a == INT64_MIN && b == -1;
        if (!overflow) {
            int64_t q = a / b, r = a % b;
            if (r != 0 && ((r < 0) != (b < 0))) /* Python rounds the quotient down */
                q--, r += b;
            v = op == BIN_FLOORDIV ? q : r;
        }
        break;
    case BIN_POW:
        if (b < 0)
            return PY_INT_NEGATIVE_POW;
        v = 1; /* by squaring: 1 ** (10 ** 18) takes 60 steps */
        for (int64_t base = a, k = b; k > 0 && !overflow; k >>= 1) {
            if (k & 1)
                overflow = __builtin_mul_overflow(v, base, &v);
            if (k > 1 && !overflow)
                overflow = __builtin_mul_overflow(base, base, &base);
        }
        break;
    case BIN_BITAND: v = a & b; break;
    case BIN_BITOR: v = a | b; break;
    case BIN_BITXOR: v = a ^ b; break;
    case BIN_SHL:
    case BIN_SHR:
        if (b < 0 || b > 62)
            return PY_INT_SHIFT_RANGE;
        v = op == BIN_SHR ? a >> b : (int64_t)((uint64_t)a << b);
        overflow = op == BIN_SHL && (v >> b) != a;
        break;
    default: return PY_INT_NOT_ARITHMETIC;
    }
    if (overflow)
        return PY_INT_OVERFLOW;
    *out = v;
    return PY_INT_OK;
}

static int64_t py_mod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

Sem fold_binary(Sema *s, SrcLoc loc, BinOp op, ConstVal x, ConstVal y)
{
    if (op == BIN_IS || op == BIN_IS_NOT) {
        bool same = const_equal(&x, &y);
        return sem_bool(op == BIN_IS ? same : !same);
    }
    if (op == BIN_EQ || op == BIN_NE) {
        bool eq;
        if (const_is_number(&x) && const_is_number(&y))
            eq = const_as_float(&x) == const_as_float(&y) &&
                 (x.kind == CV_FLOAT || y.kind == CV_FLOAT || const_as_int(&x) == const_as_int(&y));
        else
            eq = const_equal(&x, &y);
        return sem_bool(op == BIN_EQ ? eq : !eq);
    }
    if (op == BIN_AND)
        return sem_const(const_truthy(&x) ? y : x);
    if (op == BIN_OR)
        return sem_const(const_truthy(&x) ? x : y);
    if (!const_is_number(&x) || !const_is_number(&y)) {
        StrBuf a = {0}, b = {0};
        const_print(&a, &x);
        const_print(&b, &y);
        diag_error(s->diag, loc, "unsupported operand types for %s: %s and %s", binop_str(op),
                   a.data, b.data);
        strbuf_free(&a);
        strbuf_free(&b);
        return sem_error();
    }
    bool fl = x.kind == CV_FLOAT || y.kind == CV_FLOAT;
    bool both_bool = x.kind == CV_BOOL && y.kind == CV_BOOL;
    double fx = const_as_float(&x), fy = const_as_float(&y);
    /* The int view only when neither is a float (a float compares as a float: `SCALE > 0` with
     * -D SCALE=0.1). */
    int64_t ix = fl ? 0 : const_as_int(&x), iy = fl ? 0 : const_as_int(&y);
    switch (op) {
    case BIN_LT: return sem_bool(fl ? fx < fy : ix < iy);
    case BIN_LE: return sem_bool(fl ? fx <= fy : ix <= iy);
    case BIN_GT: return sem_bool(fl ? fx > fy : ix > iy);
    case BIN_GE: return sem_bool(fl ? fx >= fy : ix >= iy);
    case BIN_ADD: return fl ? sem_float(fx + fy) : sem_int((int64_t)((uint64_t)ix + (uint64_t)iy));
    case BIN_SUB: return fl ? sem_float(fx - fy) : sem_int((int64_t)((uint64_t)ix - (uint64_t)iy));
    case BIN_MUL: return fl ? sem_float(fx * fy) : sem_int((int64_t)((uint64_t)ix * (uint64_t)iy));
    case BIN_DIV:
        if (fy == 0.0) {
            diag_error(s->diag, loc, "division by zero in a constexpr expression");
            return sem_error();
        }
        return sem_float(fx / fy);
    case BIN_FLOORDIV:
    case BIN_MOD:
        if (fl ? fy == 0.0 : iy == 0) {
            diag_error(s->diag, loc, "%s by zero in a constexpr expression",
                       op == BIN_MOD ? "modulo" : "integer division");
            return sem_error();
        }
        if (fl) /* Python: floor division and modulo of floats */
            return op == BIN_MOD ? sem_float(fx - floor(fx / fy) * fy) : sem_float(floor(fx / fy));
        if (ix == INT64_MIN && iy == -1)
            return op == BIN_MOD ? sem_int(0) : sem_int(INT64_MIN);
        return op == BIN_MOD ? sem_int(py_mod(ix, iy)) : sem_int(py_floordiv(ix, iy));
    case BIN_BITAND:
    case BIN_BITOR:
    case BIN_BITXOR:
    case BIN_SHL:
    case BIN_SHR:
        if (fl) {
            diag_error(s->diag, loc, "unsupported operand types for %s: float (it needs ints)",
                       binop_str(op));
            return sem_error();
        }
        if (op == BIN_BITAND)
            return both_bool ? sem_bool(ix & iy) : sem_int(ix & iy);
        if (op == BIN_BITOR)
            return both_bool ? sem_bool(ix | iy) : sem_int(ix | iy);
        if (op == BIN_BITXOR)
            return both_bool ? sem_bool(ix ^ iy) : sem_int(ix ^ iy);
        if (iy < 0) {
            diag_error(s->diag, loc, "negative shift count in a constexpr expression");
            return sem_error();
        }
        if (op == BIN_SHL)
            return sem_int(iy >= 63 ? 0 : (int64_t)((uint64_t)ix << iy));
        return sem_int(iy >= 63 ? (ix < 0 ? -1 : 0) : ix >> iy);
    case BIN_MATMUL:
        diag_error(s->diag, loc, "the '@' operator is not supported; use tl.dot(a, b)");
        return sem_error();
    case BIN_POW:
        /* Python: an int to a non-negative int power is an int (wrapping here at 64 bits, so
         * -1 * 2 ** 63 still gives INT64_MIN); any other power is a float. */
        if (!fl && iy >= 0) {
            uint64_t r = 1, b = (uint64_t)ix;
            for (int64_t e = iy; e > 0; e >>= 1, b *= b)
                if (e & 1)
                    r *= b;
            return sem_int((int64_t)r);
        }
        if (fx == 0.0 && fy < 0.0) {
            diag_error(s->diag, loc, "0 cannot be raised to a negative power");
            return sem_error();
        }
        return sem_float(pow(fx, fy));
    default: break;
    }
    TRIC_INTERNAL(s->diag, "fold_binary: unhandled operator %s", binop_str(op));
    return sem_error();
}

/* ---- constexpr functions: @triton.constexpr_function helpers, run at compile time ----------- */

/* Triton calls such a helper in Python on the unwrapped constexpr arguments. tric evaluates the
 * subset real kernels use: assignments, `op=`, if/elif/else and return, over expressions that
 * sema folds on constexprs (arithmetic, comparisons, `x if c else y`, min/max,
 * triton.next_power_of_2, triton.cdiv, int.bit_length()); anything else is an error at it. */
typedef struct CxCall {
    const char *name;
    bool returned;
    Sem ret;
} CxCall;

static bool cx_value(Sema *s, const CxCall *cc, Expr *e, Sem *out)
{
    Sem v = expr(s, e);
    if (is_error(v))
        return false;
    if (v.kind != SEM_CONST) {
        diag_error(s->diag, expr_start(e),
                   "constexpr function '%s' computes only on constexprs; "
                   "this is %s",
                   cc->name, sem_describe(s, v));
        return false;
    }
    *out = v;
    return true;
}

static bool cx_block(Sema *s, CxCall *cc, Block *b);

static bool cx_stmt(Sema *s, CxCall *cc, Stmt *st)
{
    const char *what = "this statement";
    switch (st->kind) {
    case ST_PASS: return true;
    case ST_EXPR:
        if (st->expr.value && st->expr.value->kind == EX_STR)
            return true; /* a string statement: a comment */
        what = "an expression statement";
        break;
    case ST_RETURN:
        cc->ret = sem_const((ConstVal){.kind = CV_NONE});
        if (st->ret.value && !cx_value(s, cc, st->ret.value, &cc->ret))
            return false;
        cc->returned = true;
        return true;
    case ST_ASSIGN: {
        Sem v;
        if (!cx_value(s, cc, st->assign.value, &v))
            return false;
        for (int k = 0; k < st->assign.ntargets; k++) {
            Expr *t = st->assign.targets[k];
            if (t->kind != EX_NAME) {
                diag_error(s->diag, expr_start(t),
                           "constexpr function '%s' assigns only to "
                           "names",
                           cc->name);
                return false;
            }
            t->sem = v;
            env_set(s, &s->fn->env, t->str, v, t->loc);
        }
        return true;
    }
    case ST_AUGASSIGN: {
        Sem cur, v;
        if (st->aug.target->kind != EX_NAME) {
            diag_error(s->diag, expr_start(st->aug.target),
                       "constexpr function '%s' assigns only "
                       "to names",
                       cc->name);
            return false;
        }
        if (!cx_value(s, cc, st->aug.target, &cur) || !cx_value(s, cc, st->aug.value, &v))
            return false;
        Sem r = fold_binary(s, st->loc, st->aug.op, cur.cv, v.cv);
        if (is_error(r))
            return false;
        env_set(s, &s->fn->env, st->aug.target->str, r, st->aug.target->loc);
        return true;
    }
    case ST_IF: {
        Sem c;
        if (!cx_value(s, cc, st->if_.cond, &c))
            return false;
        st->if_.static_taken = const_truthy(&c.cv);
        return cx_block(s, cc, st->if_.static_taken ? &st->if_.then : &st->if_.els);
    }
    case ST_FOR: what = "a 'for' loop"; break;
    case ST_WHILE: what = "a 'while' loop"; break;
    case ST_ASSERT: what = "an assert"; break;
    case ST_RAISE: what = "a 'raise' it reaches"; break;
    case ST_DEF: what = "a nested def"; break;
    case ST_IMPORT: what = "an import"; break;
    default: break;
    }
    diag_error(s->diag, st->loc,
               "constexpr function '%s': %s is not supported (tric evaluates "
               "assignments, if/else and return on constexprs)",
               cc->name, what);
    return false;
}

static bool cx_block(Sema *s, CxCall *cc, Block *b)
{
    for (int i = 0; i < b->n && !cc->returned; i++)
        if (!cx_stmt(s, cc, b->stmts[i]))
            return false;
    return true;
}

/* A call of a constexpr function: every argument a constexpr; the result, a constexpr (None when
 * the body returns nothing, as in Python). */
Sem constexpr_call(Sema *s, Expr *call, FuncDef *callee, SrcLoc cloc)
{
    const char *name = callee->name ? callee->name : "?";
    for (int i = 0; i < s->inline_depth; i++)
        if (s->inline_stack[i] == callee) {
            diag_error(s->diag, cloc, "recursive call of constexpr function '%s' is not supported",
                       name);
            return sem_error();
        }
    if (!expand(s, cloc))
        return sem_error();
    if (s->inline_depth >= MAX_INLINE_DEPTH) {
        diag_error(s->diag, cloc, "helpers nest more than %d deep", MAX_INLINE_DEPTH);
        return sem_error();
    }
    const char *shown = arena_printf(s->a, "%s()", name);
    Expr **bound = bind_call_args(s, call, callee, shown, cloc);
    if (!bound)
        return sem_error();
    FuncDef *clone = ast_clone_func(s->a, callee);
    FuncCtx ctx = {.func = clone, .is_kernel = false};
    for (int i = 0; i < clone->nparams; i++) {
        Param *p = &clone->params[i];
        if (!bind_default(s, bound, i, p, shown, cloc))
            return sem_error();
        Sem v = bound[i]->sem;
        if (is_error(v))
            return sem_error();
        if (v.kind != SEM_CONST) {
            diag_error(s->diag, expr_start(bound[i]),
                       "'%s' is a constexpr function: argument "
                       "'%s' must be a constexpr, got %s",
                       name, p->name, sem_describe(s, v));
            return sem_error();
        }
        p->is_constexpr = true;
        p->sem = v;
        env_set(s, &ctx.env, p->name, v, p->loc);
    }
    CxCall cc = {.name = name};
    s->inline_stack[s->inline_depth++] = callee;
    FuncCtx *saved = s->fn;
    s->fn = &ctx;
    bool ok = cx_block(s, &cc, &clone->body);
    s->fn = saved;
    s->inline_depth--;
    if (!ok)
        return sem_error();
    return cc.returned ? cc.ret : sem_const((ConstVal){.kind = CV_NONE});
}
