/* heuristics.c: @triton.heuristics({...}) evaluated at compile time.
 *
 * Triton calls each lambda of the decorator's dict at launch with a dict of the launch's
 * arguments (parameter name -> value, constexprs included, earlier heuristics' results too) and
 * passes the result as that constexpr argument. tric has no Python: it evaluates the subset of
 * Python that real kernels write in these lambdas -- int/float/bool arithmetic, comparisons,
 * and/or/not, `x if c else y`, args["NAME"], min/max/abs/int/bool/float, triton.next_power_of_2
 * and triton.cdiv -- on the values sema knows when it specializes the kernel (-D values,
 * autotune configs, signature constants, defaults). A lambda that reads a run-time argument is
 * an error there, naming the argument (docs/language.md, "Heuristics"). */
#include "frontend/frontend.h"

#include <math.h>
#include <string.h>

/* The local names of a plain def a heuristic runs (its parameters and assignments). */
enum { HEUR_MAX_LOCALS = 32, HEUR_MAX_DEPTH = 16 };
typedef struct HeurFrame {
    const char *names[HEUR_MAX_LOCALS];
    ConstVal vals[HEUR_MAX_LOCALS];
    int n;
} HeurFrame;

typedef struct HeurEval {
    const Heuristic *h;
    const Expr *param; /* the name that reads the launch's arguments (`args`) where t runs now */
    HeurLookup lookup;
    void *ctx;
    Diag *d;
    HeurFrame *frame; /* the locals of the def running now; NULL in the lambda */
    int depth;        /* defs entered */
} HeurEval;

static bool is_name(const Expr *e, const char *name)
{
    return e && e->kind == EX_NAME && !strcmp(e->str, name);
}

/* triton.X, or X alone (from triton import X) */
static bool is_triton_fn(const Expr *fn, const char *name)
{
    if (is_name(fn, name))
        return true;
    return fn && fn->kind == EX_ATTR && !strcmp(fn->attr.name, name) &&
           (is_name(fn->attr.obj, "triton") ||
            (fn->attr.obj->kind == EX_ATTR && !strcmp(fn->attr.obj->attr.name, "runtime")));
}

static const Expr *heuristics_decorator(const Expr *d)
{
    if (d->kind != EX_CALL)
        return NULL;
    const Expr *fn = d->call.fn;
    if (is_name(fn, "heuristics") || (fn->kind == EX_ATTR && !strcmp(fn->attr.name, "heuristics") &&
                                      is_name(fn->attr.obj, "triton")))
        return d;
    return NULL;
}

/* name = lambda args: ... at module level */
static const Expr *global_lambda(const Module *m, const char *name)
{
    for (int i = m->nglobals - 1; i >= 0; i--) {
        const Stmt *st = m->globals[i];
        if (!st || st->kind != ST_ASSIGN)
            continue;
        for (int k = 0; k < st->assign.ntargets; k++)
            if (is_name(st->assign.targets[k], name))
                return st->assign.value;
    }
    return NULL;
}

/* A def of the module that is neither @jit nor a constexpr function: Triton calls whatever
 * callable the dict holds (FlagGems' `"BLOCK_K": flash_fwd_kernel_heur_block_k`, attorch's
 * `BLOCK_SIZE_BATCH_heuristic`), and a lambda may call such a def (`is_even_mn(args["M"], ...)`). */
static const FuncDef *plain_def(const Module *m, const char *name)
{
    for (int i = 0; m && i < m->nfuncs; i++) {
        const FuncDef *f = m->funcs[i];
        if (!f->is_jit && !f->is_constexpr_fn && !strcmp(f->name, name))
            return f;
    }
    return NULL;
}

/* `lambda args: name(args)` for a dict value naming a plain def, at the value. */
static const Expr *lambda_calling(Arena *a, const Expr *name)
{
    Expr *param = ast_expr(a, EX_NAME, name->loc);
    param->str = "args";
    Expr *call = ast_expr(a, EX_CALL, name->loc);
    call->call.fn = (Expr *)name;
    call->call.args = arena_alloc(a, sizeof *call->call.args);
    call->call.args[0] = param;
    call->call.nargs = 1;
    Expr *lam = ast_expr(a, EX_LAMBDA, name->loc);
    lam->lambda.params = arena_alloc(a, sizeof *lam->lambda.params);
    lam->lambda.params[0] = param;
    lam->lambda.nparams = 1;
    lam->lambda.body = call;
    return lam;
}

static bool read_dict(const Module *m, const FuncDef *f, const Expr *dict, Heuristics *out,
                      Arena *a, Diag *d)
{
    if (dict->kind != EX_DICT) {
        diag_error(d, dict->loc, "heuristics: expected a dict {\"NAME\": lambda args: ...}");
        out->dict_unread = dict->kind == EX_CALL || dict->kind == EX_NAME || dict->kind == EX_ATTR;
        return false;
    }
    Heuristic *items = arena_alloc(a, sizeof *items * (size_t)(out->n + dict->dict.n + 1));
    if (out->n)
        memcpy(items, out->items, sizeof *items * (size_t)out->n);
    out->items = items;
    for (int i = 0; i < dict->dict.n; i++) {
        const Expr *k = dict->dict.keys[i];
        const Expr *v = dict->dict.vals[i];
        if (!k || k->kind != EX_STR) {
            diag_error(d, k ? k->loc : dict->loc,
                       "heuristics: a key is a parameter name as a string");
            return false;
        }
        int p = -1;
        for (int j = 0; j < f->nparams; j++)
            if (!strcmp(f->params[j].name, k->str))
                p = j;
        if (p < 0) {
            diag_error(d, k->loc, "heuristics: '%s' is not a parameter of %s", k->str, f->name);
            return false;
        }
        const Expr *fn = v;
        if (fn->kind == EX_NAME) {
            const Expr *bound = global_lambda(m, fn->str);
            if (bound && bound->kind == EX_LAMBDA)
                fn = bound;
            else if (plain_def(m, fn->str))
                fn = lambda_calling(a, fn);
        }
        if (fn->kind != EX_LAMBDA) {
            diag_error(d, v->loc,
                       "heuristics: the value for '%s' must be a lambda of one "
                       "argument (lambda args: ...)",
                       k->str);
            return false;
        }
        if (fn->lambda.nparams != 1) {
            diag_error(d, fn->loc,
                       "heuristics: the lambda for '%s' must take exactly one "
                       "argument (the dict of launch arguments)",
                       k->str);
            return false;
        }
        out->items[out->n++] =
            (Heuristic){.name = k->str, .fn = fn, .param = p, .loc = k->loc, .module = m};
    }
    return true;
}

bool heuristics_read(const Module *m, const FuncDef *f, Heuristics *out, Arena *a, Diag *d)
{
    memset(out, 0, sizeof *out);
    /* Decorators apply bottom-up, so at a call the topmost heuristics run first. */
    for (int i = 0; i < f->ndecorators; i++) {
        const Expr *dec = heuristics_decorator(f->decorators[i]);
        if (!dec)
            continue;
        const Expr *dict = NULL;
        if (dec->call.nargs == 1 && dec->call.nkwargs == 0)
            dict = dec->call.args[0];
        else if (dec->call.nargs == 0 && dec->call.nkwargs == 1 &&
                 !strcmp(dec->call.kwnames[0], "values"))
            dict = dec->call.kwargs[0];
        if (!dict) {
            diag_error(d, dec->loc, "heuristics: takes one dict, positionally or as values=");
            return false;
        }
        if (!read_dict(m, f, dict, out, a, d))
            return false;
    }
    return true;
}

/* ---- the evaluator -------------------------------------------------------------------------- */

static bool eval(HeurEval *t, const Expr *e, ConstVal *out);

static bool is_number(const ConstVal *v)
{
    return v->kind == CV_INT || v->kind == CV_FLOAT || v->kind == CV_BOOL;
}

/* bool is an int in Python arithmetic */
static int64_t as_int(const ConstVal *v) { return v->kind == CV_BOOL ? v->b : v->i; }
static double as_float(const ConstVal *v) { return v->kind == CV_FLOAT ? v->f : (double)as_int(v); }

static bool truth(const ConstVal *v)
{
    switch (v->kind) {
    case CV_NONE: return false;
    case CV_INT: return v->i != 0;
    case CV_FLOAT: return v->f != 0.0;
    case CV_BOOL: return v->b;
    case CV_STR: return v->s && *v->s;
    case CV_TUPLE: return v->tuple.n != 0;
    default: return true;
    }
}

static ConstVal cv_int(int64_t i) { return (ConstVal){.kind = CV_INT, .i = i}; }
static ConstVal cv_float(double f) { return (ConstVal){.kind = CV_FLOAT, .f = f}; }
static ConstVal cv_bool(bool b) { return (ConstVal){.kind = CV_BOOL, .b = b}; }

static bool unsupported(HeurEval *t, const Expr *e, const char *what)
{
    diag_error(t->d, e->loc,
               "heuristics: %s is not evaluated in a heuristic (tric evaluates "
               "arithmetic, comparisons, and/or/not, x if c else y, args[\"NAME\"], "
               "min, max, abs, int, bool, float, triton.next_power_of_2, triton.cdiv)",
               what);
    return false;
}

static bool need_numbers(HeurEval *t, const Expr *e, const ConstVal *l, const ConstVal *r)
{
    if (is_number(l) && (!r || is_number(r)))
        return true;
    diag_error(t->d, e->loc, "heuristics: '%s' needs numbers here", binop_str(e->bin.op));
    return false;
}

static bool overflow(HeurEval *t, const Expr *e)
{
    diag_error(t->d, e->loc, "heuristics: integer overflow (tric's heuristic integers are 64-bit)");
    return false;
}

static bool compare(HeurEval *t, const Expr *e, const ConstVal *l, const ConstVal *r, ConstVal *out)
{
    BinOp op = e->bin.op;
    if (op == BIN_IS || op == BIN_IS_NOT) {
        bool same =
            l->kind == r->kind && (l->kind == CV_NONE || (l->kind == CV_BOOL && l->b == r->b));
        *out = cv_bool(op == BIN_IS ? same : !same);
        return true;
    }
    if ((op == BIN_EQ || op == BIN_NE) && (!is_number(l) || !is_number(r))) {
        bool eq = l->kind == r->kind &&
                  (l->kind == CV_NONE || (l->kind == CV_STR && !strcmp(l->s, r->s)) ||
                   (l->kind == CV_DTYPE && l->dtype == r->dtype));
        *out = cv_bool(op == BIN_EQ ? eq : !eq);
        return true;
    }
    if (!need_numbers(t, e, l, r))
        return false;
    int c;
    if (l->kind == CV_FLOAT || r->kind == CV_FLOAT) {
        double a = as_float(l), b = as_float(r);
        c = a < b ? -1 : a > b ? 1 : a == b ? 0 : 2; /* 2: NaN, unordered */
    } else {
        int64_t a = as_int(l), b = as_int(r);
        c = a < b ? -1 : a > b;
    }
    bool v;
    switch (op) {
    case BIN_LT: v = c == -1; break;
    case BIN_LE: v = c == -1 || c == 0; break;
    case BIN_GT: v = c == 1; break;
    case BIN_GE: v = c == 1 || c == 0; break;
    case BIN_EQ: v = c == 0; break;
    default: v = c != 0; break; /* BIN_NE */
    }
    *out = cv_bool(v);
    return true;
}

static bool binary(HeurEval *t, const Expr *e, ConstVal *out)
{
    ConstVal l, r;
    if (!eval(t, e->bin.lhs, &l))
        return false;
    /* and/or short-circuit and yield an operand, as in Python */
    if (e->bin.op == BIN_AND || e->bin.op == BIN_OR) {
        if (truth(&l) == (e->bin.op == BIN_OR)) {
            *out = l;
            return true;
        }
        return eval(t, e->bin.rhs, out);
    }
    if (!eval(t, e->bin.rhs, &r))
        return false;
    BinOp op = e->bin.op;
    if (op >= BIN_EQ && op <= BIN_IS_NOT)
        return compare(t, e, &l, &r, out);
    if (!need_numbers(t, e, &l, &r))
        return false;
    bool fl = l.kind == CV_FLOAT || r.kind == CV_FLOAT;
    if (op == BIN_DIV || (fl && (op == BIN_ADD || op == BIN_SUB || op == BIN_MUL ||
                                 op == BIN_FLOORDIV || op == BIN_MOD || op == BIN_POW))) {
        double a = as_float(&l), b = as_float(&r);
        if ((op == BIN_DIV || op == BIN_FLOORDIV || op == BIN_MOD) && b == 0.0) {
            diag_error(t->d, e->loc, "heuristics: division by zero");
            return false;
        }
        switch (op) {
        case BIN_ADD: *out = cv_float(a + b); return true;
        case BIN_SUB: *out = cv_float(a - b); return true;
        case BIN_MUL: *out = cv_float(a * b); return true;
        case BIN_DIV: *out = cv_float(a / b); return true;
        case BIN_FLOORDIV: *out = cv_float(floor(a / b)); return true;
        case BIN_POW: *out = cv_float(pow(a, b)); return true;
        default: {
            double m = fmod(a, b);
            if (m != 0 && ((m < 0) != (b < 0)))
                m += b;
            *out = cv_float(m);
            return true;
        }
        }
    }
    int64_t a = as_int(&l), b = as_int(&r), v = 0;
    switch (py_int_binary(op, a, b, &v)) {
    case PY_INT_OK: break;
    case PY_INT_DIV_ZERO: diag_error(t->d, e->loc, "heuristics: division by zero"); return false;
    case PY_INT_OVERFLOW: return overflow(t, e);
    case PY_INT_SHIFT_RANGE:
        diag_error(t->d, e->loc, "heuristics: shift count out of range");
        return false;
    case PY_INT_NEGATIVE_POW: /* an int to a negative power is a float (2 ** -1) */
        *out = cv_float(pow((double)a, (double)b));
        return true;
    case PY_INT_NOT_ARITHMETIC: return unsupported(t, e, "this operator");
    }
    /* True & True is a bool in Python; keep it one */
    if (l.kind == CV_BOOL && r.kind == CV_BOOL &&
        (op == BIN_BITAND || op == BIN_BITOR || op == BIN_BITXOR))
        *out = cv_bool(v != 0);
    else
        *out = cv_int(v);
    return true;
}

static bool unary(HeurEval *t, const Expr *e, ConstVal *out)
{
    ConstVal v;
    if (!eval(t, e->un.operand, &v))
        return false;
    if (e->un.op == UN_NOT) {
        *out = cv_bool(!truth(&v));
        return true;
    }
    if (!is_number(&v)) {
        diag_error(t->d, e->loc, "heuristics: '%s' needs a number",
                   e->un.op == UN_NEG    ? "-"
                   : e->un.op == UN_PLUS ? "+"
                                         : "~");
        return false;
    }
    if (v.kind == CV_FLOAT) {
        if (e->un.op == UN_INVERT)
            return unsupported(t, e, "'~' on a float");
        *out = cv_float(e->un.op == UN_NEG ? -v.f : v.f);
        return true;
    }
    int64_t i = as_int(&v);
    if (e->un.op == UN_NEG && i == INT64_MIN)
        return overflow(t, e);
    *out = cv_int(e->un.op == UN_NEG ? -i : e->un.op == UN_INVERT ? ~i : i);
    return true;
}

/* args["NAME"] */
static bool subscript(HeurEval *t, const Expr *e, ConstVal *out)
{
    if (!is_name(e->sub.obj, t->param->str))
        return unsupported(t, e, "this subscript");
    if (e->sub.nidx != 1 || e->sub.idx[0]->kind != EX_STR) {
        diag_error(t->d, e->loc,
                   "heuristics: index %s with a parameter name as a string, "
                   "%s[\"N\"]",
                   t->param->str, t->param->str);
        return false;
    }
    const char *name = e->sub.idx[0]->str;
    const char *why = NULL;
    if (t->lookup(t->ctx, name, out, &why))
        return true;
    diag_error(t->d, e->loc, "heuristics: '%s' reads %s[\"%s\"], %s", t->h->name, t->param->str,
               name, why ? why : "which has no value here");
    return false;
}

/* ---- plain defs: a heuristic's def, or one a lambda calls ------------------------------------ */

static bool local(HeurEval *t, const char *name, ConstVal *out)
{
    for (int i = t->frame ? t->frame->n - 1 : -1; i >= 0; i--)
        if (!strcmp(t->frame->names[i], name)) {
            *out = t->frame->vals[i];
            return true;
        }
    return false;
}

static bool bind_local(HeurEval *t, const Expr *target, const ConstVal *v)
{
    HeurFrame *fr = t->frame;
    for (int i = 0; i < fr->n; i++)
        if (!strcmp(fr->names[i], target->str)) {
            fr->vals[i] = *v;
            return true;
        }
    if (fr->n == HEUR_MAX_LOCALS) {
        diag_error(t->d, target->loc, "heuristics: a def has more than %d local names",
                   HEUR_MAX_LOCALS);
        return false;
    }
    fr->names[fr->n] = target->str;
    fr->vals[fr->n++] = *v;
    return true;
}

typedef enum { RUN_FELL_OFF, RUN_RETURNED, RUN_ERROR } RunEnd;

/* Runs a def's statements the way Python does, for the forms heuristics' defs are written in:
 * a docstring, `name = expr`, if/elif/else, return. */
static RunEnd run_block(HeurEval *t, const Block *b, ConstVal *ret)
{
    for (int i = 0; i < b->n; i++) {
        const Stmt *st = b->stmts[i];
        ConstVal v;
        switch (st->kind) {
        case ST_PASS: continue;
        case ST_EXPR:
            if (st->expr.value->kind == EX_STR) /* the docstring */
                continue;
            break;
        case ST_ASSIGN:
            if (st->assign.ntargets != 1 || st->assign.targets[0]->kind != EX_NAME)
                break;
            if (!eval(t, st->assign.value, &v) || !bind_local(t, st->assign.targets[0], &v))
                return RUN_ERROR;
            continue;
        case ST_IF: {
            if (!eval(t, st->if_.cond, &v))
                return RUN_ERROR;
            RunEnd r = run_block(t, truth(&v) ? &st->if_.then : &st->if_.els, ret);
            if (r != RUN_FELL_OFF)
                return r;
            continue;
        }
        case ST_RETURN:
            if (!st->ret.value)
                ret->kind = CV_NONE;
            else if (!eval(t, st->ret.value, ret))
                return RUN_ERROR;
            return RUN_RETURNED;
        default: break;
        }
        diag_error(t->d, st->loc,
                   "heuristics: this statement is not run in a heuristic's def (tric runs "
                   "assignments to names, if/elif/else and return)");
        return RUN_ERROR;
    }
    return RUN_FELL_OFF;
}

/* def(args...) with its parameters bound positionally; an argument that is the launch's
 * arguments dict (`args`) makes that parameter the name that reads them in the def. */
static bool call_def(HeurEval *t, const FuncDef *f, const Expr *e, ConstVal *out)
{
    if (e->call.nargs != f->nparams) {
        diag_error(t->d, e->loc, "heuristics: %s() takes %d argument%s, got %d", f->name,
                   f->nparams, f->nparams == 1 ? "" : "s", e->call.nargs);
        return false;
    }
    if (t->depth >= HEUR_MAX_DEPTH || f->nparams > HEUR_MAX_LOCALS) {
        diag_error(t->d, e->loc, "heuristics: calls nest deeper than %d", HEUR_MAX_DEPTH);
        return false;
    }
    HeurFrame frame = {0};
    Expr alias = {.kind = EX_NAME};
    const Expr *args_name = t->param;
    for (int i = 0; i < e->call.nargs; i++) {
        const Expr *a = e->call.args[i];
        ConstVal probe;
        if (is_name(a, t->param->str) && !local(t, a->str, &probe)) {
            alias.loc = f->loc;
            alias.str = f->params[i].name;
            args_name = &alias;
            continue;
        }
        if (!eval(t, a, &frame.vals[frame.n]))
            return false;
        frame.names[frame.n++] = f->params[i].name;
    }
    HeurFrame *saved_frame = t->frame;
    const Expr *saved_param = t->param;
    t->frame = &frame;
    t->param = args_name;
    t->depth++;
    out->kind = CV_NONE; /* a def that falls off its end returns None */
    RunEnd r = run_block(t, &f->body, out);
    t->depth--;
    t->param = saved_param;
    t->frame = saved_frame;
    return r != RUN_ERROR;
}

static bool call(HeurEval *t, const Expr *e, ConstVal *out)
{
    const Expr *fn = e->call.fn;
    int n = e->call.nargs;
    if (e->call.nkwargs)
        return unsupported(t, e->call.kwargs[0], "a keyword argument");
    const char *name = fn->kind == EX_NAME ? fn->str : fn->kind == EX_ATTR ? fn->attr.name : "?";
    bool builtin = fn->kind == EX_NAME;
    static const char *const python_fns[] = {"min", "max", "int", "bool", "float", "abs"};
    bool known = is_triton_fn(fn, "next_power_of_2") || is_triton_fn(fn, "cdiv");
    for (size_t i = 0; builtin && i < sizeof python_fns / sizeof *python_fns; i++)
        known |= !strcmp(name, python_fns[i]);
    const FuncDef *def = builtin && !known ? plain_def(t->h->module, name) : NULL;
    if (def)
        return call_def(t, def, e, out);
    if (!known)
        return unsupported(t, e, "this call");
    ConstVal args[8];
    if (n > 8)
        return unsupported(t, e, "a call with more than 8 arguments");
    for (int i = 0; i < n; i++)
        if (!eval(t, e->call.args[i], &args[i]))
            return false;
    if (is_triton_fn(fn, "next_power_of_2") || is_triton_fn(fn, "cdiv")) {
        bool cdiv = !strcmp(name, "cdiv");
        if (n != (cdiv ? 2 : 1)) {
            diag_error(t->d, e->loc, "heuristics: triton.%s takes %d argument%s", name,
                       cdiv ? 2 : 1, cdiv ? "s" : "");
            return false;
        }
        for (int i = 0; i < n; i++)
            if (args[i].kind != CV_INT && args[i].kind != CV_BOOL) {
                diag_error(t->d, e->call.args[i]->loc, "heuristics: triton.%s takes integers",
                           name);
                return false;
            }
        int64_t a = as_int(&args[0]);
        if (cdiv) {
            int64_t b = as_int(&args[1]);
            /* -((-a) // b), Python's ceiling division */
            int64_t q = 0;
            PyIntStatus st =
                a == INT64_MIN ? PY_INT_OVERFLOW : py_int_binary(BIN_FLOORDIV, -a, b, &q);
            if (st == PY_INT_DIV_ZERO) {
                diag_error(t->d, e->loc, "heuristics: division by zero");
                return false;
            }
            if (st != PY_INT_OK)
                return overflow(t, e);
            *out = cv_int(-q);
            return true;
        }
        /* Triton's next_power_of_2: the smallest power of two >= n (1 for n <= 1). */
        int64_t p = 1;
        while (p < a) {
            if (p > INT64_MAX / 2)
                return overflow(t, e);
            p *= 2;
        }
        *out = cv_int(p);
        return true;
    }
    if (builtin && (!strcmp(name, "min") || !strcmp(name, "max"))) {
        if (n < 2)
            return unsupported(t, e, "min/max of fewer than two arguments");
        bool want_max = !strcmp(name, "max");
        *out = args[0];
        for (int i = 1; i < n; i++) {
            if (!is_number(&args[i]) || !is_number(out)) {
                diag_error(t->d, e->loc, "heuristics: %s needs numbers", name);
                return false;
            }
            bool fl = out->kind == CV_FLOAT || args[i].kind == CV_FLOAT;
            bool greater = fl ? as_float(&args[i]) > as_float(out) : as_int(&args[i]) > as_int(out);
            bool less = fl ? as_float(&args[i]) < as_float(out) : as_int(&args[i]) < as_int(out);
            if (want_max ? greater : less)
                *out = args[i];
        }
        return true;
    }
    if (builtin && (!strcmp(name, "int") || !strcmp(name, "bool") || !strcmp(name, "float") ||
                    !strcmp(name, "abs"))) {
        if (n != 1) {
            diag_error(t->d, e->loc, "heuristics: %s takes one argument", name);
            return false;
        }
        if (!strcmp(name, "bool")) {
            *out = cv_bool(truth(&args[0]));
            return true;
        }
        if (!is_number(&args[0])) {
            diag_error(t->d, e->loc, "heuristics: %s needs a number", name);
            return false;
        }
        if (!strcmp(name, "float")) {
            *out = cv_float(as_float(&args[0]));
        } else if (!strcmp(name, "int")) {
            if (args[0].kind == CV_FLOAT) {
                double tr = trunc(args[0].f);
                if (!(tr >= -9.2e18 && tr <= 9.2e18))
                    return overflow(t, e);
                *out = cv_int((int64_t)tr);
            } else {
                *out = cv_int(as_int(&args[0]));
            }
        } else if (args[0].kind == CV_FLOAT) {
            *out = cv_float(fabs(args[0].f));
        } else {
            int64_t i = as_int(&args[0]);
            if (i == INT64_MIN)
                return overflow(t, e);
            *out = cv_int(i < 0 ? -i : i);
        }
        return true;
    }
    return unsupported(t, e, "this call");
}

static bool eval(HeurEval *t, const Expr *e, ConstVal *out)
{
    memset(out, 0, sizeof *out);
    switch (e->kind) {
    case EX_INT: *out = cv_int(e->ival); return true;
    case EX_FLOAT: *out = cv_float(e->fval); return true;
    case EX_BOOL: *out = cv_bool(e->bval); return true;
    case EX_NONE: out->kind = CV_NONE; return true;
    case EX_STR:
        out->kind = CV_STR;
        out->s = e->str;
        return true;
    case EX_BINARY: return binary(t, e, out);
    case EX_UNARY: return unary(t, e, out);
    case EX_TERNARY: {
        ConstVal c;
        if (!eval(t, e->ternary.cond, &c))
            return false;
        return eval(t, truth(&c) ? e->ternary.then : e->ternary.els, out);
    }
    case EX_SUBSCRIPT: return subscript(t, e, out);
    case EX_CALL: return call(t, e, out);
    case EX_NAME:
        if (local(t, e->str, out))
            return true;
        if (is_name(e, t->param->str)) {
            diag_error(t->d, e->loc, "heuristics: use %s[\"NAME\"] to read one argument",
                       t->param->str);
            return false;
        }
        diag_error(t->d, e->loc,
                   "heuristics: '%s' is not defined in this lambda (read "
                   "arguments as %s[\"%s\"])",
                   e->str, t->param->str, e->str);
        return false;
    case EX_ATTR: {
        Expr at = *e;
        at.loc = e->attr.name_loc; /* the caret under the attribute's name */
        return unsupported(t, &at, "this attribute");
    }
    case EX_LAMBDA: return unsupported(t, e, "a nested lambda");
    default: return unsupported(t, e, "this expression");
    }
}

bool heuristic_eval(const Heuristic *h, HeurLookup lookup, void *ctx, ConstVal *out, Diag *d)
{
    HeurEval t = {.h = h, .param = h->fn->lambda.params[0], .lookup = lookup, .ctx = ctx, .d = d};
    if (!eval(&t, h->fn->lambda.body, out))
        return false;
    if (out->kind != CV_INT && out->kind != CV_FLOAT && out->kind != CV_BOOL &&
        out->kind != CV_NONE) {
        diag_error(d, h->fn->lambda.body->loc,
                   "heuristics: '%s' must evaluate to an int, a "
                   "float, a bool or None",
                   h->name);
        return false;
    }
    return true;
}
