/* scan.c: the combine function of tl.associative_scan and tl.reduce, recognized.
 *
 * Triton inlines the @jit combine function into the scan's region and runs it on pairs of
 * elements. tric's scan op (ir.h OP_SCAN) carries one binary op instead, so it accepts the
 * combine functions that are one: `return a + b` and the like, which is what kernels write
 * (prefix sums, products, running max/min, bitwise prefix). Anything else is an error at the
 * function naming what is accepted. */
#include "frontend/frontend.h"

#include <string.h>

static bool is_param(const Expr *e, const FuncDef *f, int i)
{
    return e && e->kind == EX_NAME && f->params[i].name && !strcmp(e->str, f->params[i].name);
}

/* (x, y) are the function's two parameters, in either order */
static bool both_params(const Expr *x, const Expr *y, const FuncDef *f)
{
    return (is_param(x, f, 0) && is_param(y, f, 1)) || (is_param(x, f, 1) && is_param(y, f, 0));
}

bool scan_combine_of(const FuncDef *f, ScanCombine *out, SrcLoc *where, const char **why)
{
    *where = f->loc;
    if (f->nparams != 2) {
        *why = "a combine function takes two parameters (a tuple input's combine function, of "
               "2n parameters, is not supported)";
        return false;
    }
    const Stmt *ret = NULL;
    for (int i = 0; i < f->body.n; i++) {
        const Stmt *st = f->body.stmts[i];
        if (!ret && st->kind == ST_EXPR && st->expr.value->kind == EX_STR)
            continue; /* docstring */
        if (ret || st->kind != ST_RETURN || !st->ret.value) {
            *where = st->loc;
            *why = "the combine function's body must be one `return` of a + b, a * b, a & b, "
                   "a | b, a ^ b, tl.maximum(a, b) or tl.minimum(a, b)";
            return false;
        }
        ret = st;
    }
    if (!ret) {
        *why = "the combine function returns nothing";
        return false;
    }
    const Expr *e = ret->ret.value;
    *where = e->loc;
    if (e->kind == EX_BINARY && both_params(e->bin.lhs, e->bin.rhs, f)) {
        switch (e->bin.op) {
        case BIN_ADD: *out = SCAN_ADD; return true;
        case BIN_MUL: *out = SCAN_MUL; return true;
        case BIN_BITAND: *out = SCAN_AND; return true;
        case BIN_BITOR: *out = SCAN_OR; return true;
        case BIN_BITXOR: *out = SCAN_XOR; return true;
        /* Triton's `a and b` on blocks is logical_and: on int1 the same as a & b (sema checks the
         * input is int1, scan_combine_is_logical) */
        case BIN_AND: *out = SCAN_AND; return true;
        case BIN_OR: *out = SCAN_OR; return true;
        default: break;
        }
    }
    if (e->kind == EX_CALL && e->call.nargs == 2 && e->call.nkwargs == 0 &&
        both_params(e->call.args[0], e->call.args[1], f)) {
        const Expr *fn = e->call.fn;
        const char *name = fn->kind == EX_NAME ? fn->str : fn->kind == EX_ATTR ? fn->attr.name : "";
        if (!strcmp(name, "maximum")) {
            *out = SCAN_MAX;
            return true;
        }
        if (!strcmp(name, "minimum")) {
            *out = SCAN_MIN;
            return true;
        }
    }
    *why = "tric takes combine functions that return a + b, a * b, a & b, a | b, a ^ b, "
           "tl.maximum(a, b) or tl.minimum(a, b) of their two parameters";
    return false;
}

bool scan_combine_is_logical(const FuncDef *f)
{
    for (int i = 0; i < f->body.n; i++) {
        const Stmt *st = f->body.stmts[i];
        if (st->kind == ST_RETURN && st->ret.value && st->ret.value->kind == EX_BINARY)
            return st->ret.value->bin.op == BIN_AND || st->ret.value->bin.op == BIN_OR;
    }
    return false;
}
