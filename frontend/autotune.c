/* autotune.c: @triton.autotune(...) evaluated at compile time.
 *
 * Triton runs the decorator's arguments as Python when the module is imported; tric evaluates
 * the same text in the subset kernel files build their config lists in: triton.Config calls,
 * lists and tuples (joined with +), comprehensions, range / len / min / max / zip / list and
 * itertools.product, int and float arithmetic, comparisons, and/or/not, ternaries, module-level
 * names, and calls of the file's own functions (seed 2's get_cuda_autotune_config, a helper that
 * loops and appends), whose bodies run statement by statement on the arguments' values. An if
 * on the backend (`if is_cuda():`) is decided as host_skip.c decides a module-level one. What is
 * outside the subset is an error at it (the driver may then set the decorator aside when -D
 * gives every constexpr). The runtime (runtime/tune.c) and the CLI (driver/driver.c) compile one
 * kernel per config and choose among them. */
#include "frontend/frontend.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A value met while evaluating: a config, a list (or tuple) of values, a string, None, or a
 * constant (int, float, bool, or a dtype's text). */
typedef enum TuneValKind { TV_CONFIG, TV_LIST, TV_STRING, TV_SCALAR, TV_NONE } TuneValKind;

typedef enum TuneNum { TN_NONE, TN_INT, TN_FLOAT, TN_BOOL } TuneNum;

typedef struct TuneVal {
    TuneValKind kind;
    SrcLoc loc;
    TuneConfig config;     /* TV_CONFIG */
    struct TuneVal *elems; /* TV_LIST */
    int n, cap;
    const char *text; /* TV_STRING: the string; TV_SCALAR: a -D value ("128", "tl.float16") */
    TuneNum num;      /* TV_SCALAR: TN_NONE for a dtype */
    int64_t ival;     /* TN_INT, TN_BOOL */
    double fval;      /* TN_FLOAT */
} TuneVal;

/* A helper's local names and a comprehension's variables, innermost first. */
typedef struct TuneVar {
    const char *name;
    TuneVal val;
    struct TuneVar *next;
} TuneVar;

typedef struct TuneEval {
    const Module *m;
    Arena *a;
    Diag *d;
    int depth;          /* helper calls and module names being evaluated: recursion stops here */
    long steps;         /* statements and list elements made: a runaway helper stops at a bound */
    bool warned_hook;   /* pre_hook's warning is given once */
    bool in_condition;  /* evaluating an if's condition: a helper's return is one too */
    SrcLoc decorator;   /* module names are read as bound when the decorator runs, above it */
    const HostEnv *env; /* the host values the configs look up (SpecOptions.host_env) */
} TuneEval;

/* Enough for the largest config spaces real files enumerate (FlagGems' reach a few hundred). */
#define MAX_TUNE_STEPS 1000000
#define MAX_TUNE_LIST  65536

static bool eval(TuneEval *t, const Expr *e, TuneVar **env, TuneVal *out);
static bool condition(TuneEval *t, const Expr *cond, TuneVar **env, bool *holds);

static bool is_name(const Expr *e, const char *name)
{
    return e && e->kind == EX_NAME && !strcmp(e->str, name);
}

/* triton.Config / Config */
static bool is_config_callee(const Expr *fn)
{
    if (is_name(fn, "Config"))
        return true;
    return fn && fn->kind == EX_ATTR && !strcmp(fn->attr.name, "Config") &&
           is_name(fn->attr.obj, "triton");
}

static bool step(TuneEval *t, SrcLoc loc)
{
    if (++t->steps <= MAX_TUNE_STEPS)
        return true;
    if (t->steps == MAX_TUNE_STEPS + 1)
        diag_error(t->d, loc,
                   "autotune: evaluating the configs takes too long (more than %d steps)",
                   MAX_TUNE_STEPS);
    return false;
}

/* ---- values --------------------------------------------------------------------------------- */

static TuneVal tv_int(Arena *a, SrcLoc loc, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    return (TuneVal){
        .kind = TV_SCALAR, .loc = loc, .num = TN_INT, .ival = v, .text = arena_strdup(a, buf)};
}

static TuneVal tv_float(Arena *a, SrcLoc loc, double v)
{
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", v);
    return (TuneVal){
        .kind = TV_SCALAR, .loc = loc, .num = TN_FLOAT, .fval = v, .text = arena_strdup(a, buf)};
}

static TuneVal tv_bool(SrcLoc loc, bool v)
{
    return (TuneVal){
        .kind = TV_SCALAR, .loc = loc, .num = TN_BOOL, .ival = v, .text = v ? "True" : "False"};
}

static TuneVal tv_list(SrcLoc loc) { return (TuneVal){.kind = TV_LIST, .loc = loc}; }

static bool list_push(TuneEval *t, TuneVal *list, const TuneVal *v)
{
    if (list->n >= MAX_TUNE_LIST) {
        diag_error(t->d, v->loc, "autotune: a list of more than %d values", MAX_TUNE_LIST);
        return false;
    }
    if (list->n == list->cap) {
        int cap = list->cap ? 2 * list->cap : 8;
        TuneVal *elems = arena_alloc(t->a, sizeof(TuneVal) * (size_t)cap);
        if (list->n)
            memcpy(elems, list->elems, sizeof(TuneVal) * (size_t)list->n);
        list->elems = elems;
        list->cap = cap;
    }
    list->elems[list->n++] = *v;
    return step(t, v->loc);
}

static bool is_number(const TuneVal *v) { return v->kind == TV_SCALAR && v->num != TN_NONE; }

static bool truth(const TuneVal *v)
{
    switch (v->kind) {
    case TV_LIST: return v->n > 0;
    case TV_STRING: return v->text[0] != 0;
    case TV_NONE: return false;
    case TV_SCALAR: return v->num == TN_FLOAT ? v->fval != 0 : v->num == TN_NONE || v->ival != 0;
    default: return true;
    }
}

static bool values_equal(const TuneVal *x, const TuneVal *y)
{
    if (is_number(x) && is_number(y))
        return (x->num == TN_FLOAT ? x->fval : (double)x->ival) ==
               (y->num == TN_FLOAT ? y->fval : (double)y->ival);
    if (x->kind != y->kind)
        return false;
    if (x->kind == TV_NONE)
        return true;
    if (x->kind == TV_STRING || x->kind == TV_SCALAR)
        return !strcmp(x->text, y->text);
    return false;
}

/* ---- names ---------------------------------------------------------------------------------- */

static TuneVar *var_find(TuneVar *env, const char *name)
{
    for (TuneVar *v = env; v; v = v->next)
        if (!strcmp(v->name, name))
            return v;
    return NULL;
}

/* Binds name in env: the innermost binding changes, or (fresh: a comprehension's variable,
 * which shadows the caller's) a new one is made. */
static void bind(TuneEval *t, TuneVar **env, const char *name, const TuneVal *val, bool fresh)
{
    TuneVar *v = fresh ? NULL : var_find(*env, name);
    if (!v) {
        v = arena_alloc(t->a, sizeof *v);
        *v = (TuneVar){.name = name, .next = *env};
        *env = v;
    }
    v->val = *val;
}

/* for a, (b, c) in ...: a target name or a tuple of them takes the value apart. */
static bool assign_target(TuneEval *t, const Expr *target, const TuneVal *val, TuneVar **env,
                          bool fresh)
{
    if (target->kind == EX_NAME) {
        bind(t, env, target->str, val, fresh);
        return true;
    }
    if (target->kind == EX_TUPLE || target->kind == EX_LIST) {
        if (val->kind != TV_LIST || val->n != target->list.n) {
            diag_error(t->d, target->loc, "autotune: cannot unpack this value into %d names",
                       target->list.n);
            return false;
        }
        for (int i = 0; i < target->list.n; i++)
            if (!assign_target(t, target->list.elts[i], &val->elems[i], env, fresh))
                return false;
        return true;
    }
    diag_error(t->d, target->loc, "autotune: only names and tuples of names are assigned here");
    return false;
}

/* The value assigned to name at module level by its last assignment above the decorator:
 * Python runs the decorator when it reaches the def, so a later `configs = []` (tutorial 06
 * rebinds configs for its benchmark) is not yet made. An imported module's are all made. */
static const Expr *module_value(const TuneEval *t, const char *name)
{
    for (int i = t->m->nglobals - 1; i >= 0; i--) {
        const Stmt *st = t->m->globals[i];
        if (!st || st->kind != ST_ASSIGN)
            continue;
        if (st->loc.file == t->decorator.file && st->loc.line > t->decorator.line)
            continue;
        for (int k = 0; k < st->assign.ntargets; k++)
            if (is_name(st->assign.targets[k], name))
                return st->assign.value;
    }
    return NULL;
}

static const FuncDef *module_func(const TuneEval *t, const char *name)
{
    const FuncDef *f = NULL;
    for (int i = 0; i < t->m->nfuncs; i++)
        if (t->m->funcs[i] && t->m->funcs[i]->name && !strcmp(t->m->funcs[i]->name, name))
            f = t->m->funcs[i];
    return f;
}

static bool name_value(TuneEval *t, const Expr *e, TuneVar **env, TuneVal *out)
{
    TuneVar *v = var_find(*env, e->str);
    if (v) {
        *out = v->val;
        return true;
    }
    const Expr *value = module_value(t, e->str);
    if (!value) {
        /* host_skip.c sets aside a binding tric cannot read (a call of a host function) */
        diag_error(t->d, e->loc,
                   "autotune: '%s' is not defined in this file, or only by host Python tric "
                   "does not run (a call of a host function, a class)",
                   e->str);
        return false;
    }
    if (t->depth >= 64) {
        diag_error(t->d, e->loc, "autotune: '%s' is defined in terms of itself", e->str);
        return false;
    }
    TuneVar *module_env = NULL;
    t->depth++;
    bool ok = eval(t, value, &module_env, out);
    t->depth--;
    return ok;
}

/* ---- constants and operators ---------------------------------------------------------------- */

/* "tl.float16", "triton.language.float16": the dotted text of an attribute chain. */
static bool dotted(StrBuf *sb, const Expr *e)
{
    if (e->kind == EX_NAME) {
        strbuf_append(sb, e->str);
        return true;
    }
    if (e->kind != EX_ATTR || !dotted(sb, e->attr.obj))
        return false;
    strbuf_printf(sb, ".%s", e->attr.name);
    return true;
}

static bool dtype_value(TuneEval *t, const Expr *e, TuneVal *out)
{
    StrBuf sb = {0};
    if (!dotted(&sb, e)) {
        strbuf_free(&sb);
        diag_error(t->d, e->loc,
                   "autotune: this value is computed by host Python tric does not run; expected "
                   "a constant or a dtype (tl.float16) here");
        return false;
    }
    *out = (TuneVal){.kind = TV_SCALAR, .loc = e->loc, .text = arena_strdup(t->a, sb.data)};
    strbuf_free(&sb);
    return true;
}

static bool list_concat(TuneEval *t, const TuneVal *l, const TuneVal *r, TuneVal *out)
{
    *out = tv_list(l->loc);
    for (int i = 0; i < l->n; i++)
        if (!list_push(t, out, &l->elems[i]))
            return false;
    for (int i = 0; i < r->n; i++)
        if (!list_push(t, out, &r->elems[i]))
            return false;
    return true;
}

static bool compare(TuneEval *t, const Expr *e, const TuneVal *l, const TuneVal *r, TuneVal *out)
{
    BinOp op = e->bin.op;
    if (op == BIN_IN || op == BIN_NOT_IN) { /* x in (a, b); "0" in "01" */
        bool in = false;
        if (r->kind == TV_LIST)
            for (int i = 0; i < r->n && !in; i++)
                in = values_equal(l, &r->elems[i]);
        else if (r->kind == TV_STRING && l->kind == TV_STRING)
            in = strstr(r->text, l->text) != NULL;
        else {
            diag_error(t->d, e->loc, "autotune: 'in' tests a list, a tuple or a string here");
            return false;
        }
        *out = tv_bool(e->loc, (op == BIN_IN) == in);
        return true;
    }
    if (op == BIN_EQ || op == BIN_NE || op == BIN_IS || op == BIN_IS_NOT) {
        bool eq = values_equal(l, r);
        *out = tv_bool(e->loc, (op == BIN_EQ || op == BIN_IS) ? eq : !eq);
        return true;
    }
    if (!is_number(l) || !is_number(r)) {
        diag_error(t->d, e->loc, "autotune: this comparison needs two numbers");
        return false;
    }
    double a = l->num == TN_FLOAT ? l->fval : (double)l->ival;
    double b = r->num == TN_FLOAT ? r->fval : (double)r->ival;
    bool v = op == BIN_LT ? a < b : op == BIN_LE ? a <= b : op == BIN_GT ? a > b : a >= b;
    *out = tv_bool(e->loc, v);
    return true;
}

/* Python's int arithmetic (py_int_binary), 64 bits with an overflow error. */
static bool int_arith(TuneEval *t, const Expr *e, int64_t a, int64_t b, TuneVal *out)
{
    int64_t v = 0;
    const char *why = NULL;
    switch (py_int_binary(e->bin.op, a, b, &v)) {
    case PY_INT_OK: *out = tv_int(t->a, e->loc, v); return true;
    case PY_INT_DIV_ZERO: why = "division by zero"; break;
    case PY_INT_OVERFLOW: why = "integer overflow (64-bit)"; break;
    case PY_INT_SHIFT_RANGE: why = "shift count out of range"; break;
    case PY_INT_NEGATIVE_POW: why = "a negative exponent is not evaluated here"; break;
    case PY_INT_NOT_ARITHMETIC: why = "this operator is not evaluated here"; break;
    }
    diag_error(t->d, e->loc, "autotune: %s", why);
    return false;
}

static bool float_arith(TuneEval *t, const Expr *e, double a, double b, TuneVal *out)
{
    switch (e->bin.op) {
    case BIN_ADD: *out = tv_float(t->a, e->loc, a + b); return true;
    case BIN_SUB: *out = tv_float(t->a, e->loc, a - b); return true;
    case BIN_MUL: *out = tv_float(t->a, e->loc, a * b); return true;
    case BIN_DIV:
        if (b == 0) {
            diag_error(t->d, e->loc, "autotune: division by zero");
            return false;
        }
        *out = tv_float(t->a, e->loc, a / b);
        return true;
    default:
        diag_error(t->d, e->loc, "autotune: this operator is not evaluated on floats here");
        return false;
    }
}

static bool binary(TuneEval *t, const Expr *e, TuneVar **env, TuneVal *out)
{
    TuneVal l, r;
    if (!eval(t, e->bin.lhs, env, &l))
        return false;
    if (e->bin.op == BIN_AND || e->bin.op == BIN_OR) { /* an operand, short-circuit */
        if (truth(&l) == (e->bin.op == BIN_OR)) {
            *out = l;
            return true;
        }
        return eval(t, e->bin.rhs, env, out);
    }
    if (!eval(t, e->bin.rhs, env, &r))
        return false;
    if ((e->bin.op >= BIN_EQ && e->bin.op <= BIN_IS_NOT) || e->bin.op == BIN_IN ||
        e->bin.op == BIN_NOT_IN)
        return compare(t, e, &l, &r, out);
    if (e->bin.op == BIN_ADD && l.kind == TV_LIST && r.kind == TV_LIST)
        return list_concat(t, &l, &r, out);
    if (!is_number(&l) || !is_number(&r)) {
        diag_error(t->d, e->loc,
                   "autotune: '%s' is evaluated here on numbers, and + also joins two lists",
                   e->bin.op == BIN_ADD ? "+" : "this operator");
        return false;
    }
    if (l.num == TN_FLOAT || r.num == TN_FLOAT || e->bin.op == BIN_DIV)
        return float_arith(t, e, l.num == TN_FLOAT ? l.fval : (double)l.ival,
                           r.num == TN_FLOAT ? r.fval : (double)r.ival, out);
    return int_arith(t, e, l.ival, r.ival, out);
}

static bool unary(TuneEval *t, const Expr *e, TuneVar **env, TuneVal *out)
{
    TuneVal v;
    if (!eval(t, e->un.operand, env, &v))
        return false;
    if (e->un.op == UN_NOT) {
        *out = tv_bool(e->loc, !truth(&v));
        return true;
    }
    if (!is_number(&v) || (v.num == TN_FLOAT && e->un.op == UN_INVERT)) {
        diag_error(t->d, e->loc, "autotune: expected a constant here");
        return false;
    }
    if (v.num == TN_FLOAT) {
        *out = tv_float(t->a, e->loc, e->un.op == UN_NEG ? -v.fval : v.fval);
        return true;
    }
    if (e->un.op == UN_NEG && v.ival == INT64_MIN) {
        diag_error(t->d, e->loc, "autotune: integer overflow (64-bit)");
        return false;
    }
    *out = tv_int(t->a, e->loc,
                  e->un.op == UN_NEG      ? -v.ival
                  : e->un.op == UN_INVERT ? ~v.ival
                                          : v.ival);
    return true;
}

/* ---- comprehensions ------------------------------------------------------------------------- */

/* Clause i of comprehension e and those after it, for every value of its target; the elements
 * go to out. The variables live in env above the caller's names, and are gone after. */
static bool comp_clause(TuneEval *t, const Expr *e, int i, TuneVar **env, TuneVal *out)
{
    if (i == e->comp.n) {
        TuneVal v;
        return eval(t, e->comp.elt, env, &v) && list_push(t, out, &v);
    }
    TuneVal it;
    if (!eval(t, e->comp.iters[i], env, &it))
        return false;
    if (!e->comp.targets[i]) /* an `if` clause */
        return !truth(&it) || comp_clause(t, e, i + 1, env, out);
    if (it.kind != TV_LIST) {
        diag_error(t->d, e->comp.iters[i]->loc,
                   "autotune: a comprehension iterates over a list, a tuple, range(...) or "
                   "itertools.product(...) here");
        return false;
    }
    for (int k = 0; k < it.n; k++) {
        TuneVar *inner = *env;
        if (!assign_target(t, e->comp.targets[i], &it.elems[k], &inner, true) ||
            !comp_clause(t, e, i + 1, &inner, out))
            return false;
    }
    return true;
}

/* The comprehension's variables shadow the caller's names and are gone after it (Python 3). */
static bool comprehension(TuneEval *t, const Expr *e, TuneVar **env, TuneVal *out)
{
    *out = tv_list(e->loc);
    TuneVar *scope = *env;
    return comp_clause(t, e, 0, &scope, out);
}

/* ---- triton.Config -------------------------------------------------------------------------- */

/* num_warps=8: a positive int constant. */
static bool int_kwarg(TuneEval *t, const Expr *e, TuneVar **env, const char *what, int *out)
{
    TuneVal v;
    if (!eval(t, e, env, &v))
        return false;
    if (v.kind != TV_SCALAR || v.num != TN_INT || v.ival < 1 || v.ival > 1024) {
        diag_error(t->d, e->loc, "autotune: %s must be a positive integer", what);
        return false;
    }
    *out = (int)v.ival;
    return true;
}

static bool config_values(TuneEval *t, const Expr *e, TuneVar **env, TuneConfig *c)
{
    if (e->call.nargs != 1 || e->call.args[0]->kind != EX_DICT) {
        diag_error(t->d, e->loc,
                   "autotune: triton.Config takes one dict of constexpr values, "
                   "{\"BLOCK_SIZE\": 128}, then keywords");
        return false;
    }
    const Expr *dict = e->call.args[0];
    c->defines = arena_alloc(t->a, sizeof(Define) * (size_t)(dict->dict.n + 1));
    for (int i = 0; i < dict->dict.n; i++) {
        const Expr *k = dict->dict.keys[i];
        if (!k || k->kind != EX_STR) {
            diag_error(t->d, k ? k->loc : e->loc,
                       "autotune: a config's keys are parameter names as strings");
            return false;
        }
        for (int j = 0; j < c->ndefines; j++)
            if (!strcmp(c->defines[j].name, k->str)) {
                diag_error(t->d, k->loc, "autotune: '%s' is set twice in this config", k->str);
                return false;
            }
        TuneVal v;
        if (!eval(t, dict->dict.vals[i], env, &v))
            return false;
        if (v.kind != TV_SCALAR) {
            diag_error(t->d, dict->dict.vals[i]->loc,
                       "autotune: a config's value must be a constant (int, float, bool, dtype)");
            return false;
        }
        c->defines[c->ndefines++] = (Define){k->str, v.text};
    }
    return true;
}

/* pre_hook=fn: Triton calls fn(nargs) before each launch of this config, with the launch's
 * arguments (to zero an output, say). tric runs no Python at launch: the hook is not run, and
 * a warning (once per decorator) points at reset_to_zero=, which does the common case. */
static void pre_hook(TuneEval *t, const Expr *v)
{
    if (v->kind == EX_NONE || t->warned_hook)
        return;
    t->warned_hook = true;
    diag_warning(t->d, v->loc,
                 "autotune: Config's pre_hook is not run: tric runs no Python at launch (to zero "
                 "outputs before each timed run, name them in reset_to_zero=[...])");
}

static bool config_call(TuneEval *t, const Expr *e, TuneVar **env, TuneVal *out)
{
    memset(out, 0, sizeof *out);
    out->kind = TV_CONFIG;
    out->loc = e->loc;
    TuneConfig *c = &out->config;
    c->loc = e->loc;
    if (!config_values(t, e, env, c))
        return false;
    for (int i = 0; i < e->call.nkwargs; i++) {
        const char *kw = e->call.kwnames[i];
        const Expr *v = e->call.kwargs[i];
        if (!strcmp(kw, "num_warps")) {
            if (!int_kwarg(t, v, env, "num_warps", &c->num_warps))
                return false;
            if (c->num_warps > 32 || (c->num_warps & (c->num_warps - 1))) {
                diag_error(t->d, v->loc, "autotune: num_warps must be a power of two in 1..32");
                return false;
            }
        } else if (!strcmp(kw, "num_stages")) {
            if (!int_kwarg(t, v, env, "num_stages", &c->num_stages))
                return false;
            if (c->num_stages > 16) {
                diag_error(t->d, v->loc, "autotune: num_stages must be in 1..16");
                return false;
            }
        } else if (!strcmp(kw, "num_ctas")) {
            int ctas = 0;
            if (!int_kwarg(t, v, env, "num_ctas", &ctas))
                return false;
            if (ctas != 1) {
                diag_error(t->d, v->loc,
                           "autotune: num_ctas other than 1 (thread-block clusters) "
                           "is not supported");
                return false;
            }
        } else if (!strcmp(kw, "pre_hook")) {
            pre_hook(t, v);
        } else if (!strcmp(kw, "maxnreg")) {
            if (v->kind != EX_NONE) {
                diag_error(t->d, v->loc, "autotune: Config's maxnreg is not supported");
                return false;
            }
        } else {
            diag_error(t->d, v->loc,
                       "autotune: triton.Config has no keyword '%s' (num_warps, "
                       "num_stages, num_ctas, pre_hook)",
                       kw);
            return false;
        }
    }
    return true;
}

/* ---- Python's builtins and itertools.product ------------------------------------------------ */

/* range(stop), range(start, stop[, step]) */
static bool range_call(TuneEval *t, const Expr *e, const TuneVal *args, int n, TuneVal *out)
{
    int64_t v[3] = {0, 0, 1};
    for (int i = 0; i < n; i++)
        if (args[i].kind != TV_SCALAR || args[i].num != TN_INT) {
            diag_error(t->d, args[i].loc, "autotune: range takes integers");
            return false;
        }
    if (n < 1 || n > 3 || (n == 3 && args[2].ival == 0)) {
        diag_error(t->d, e->loc, "autotune: range takes 1 to 3 integers, the step not 0");
        return false;
    }
    for (int i = 0; i < n; i++)
        v[n == 1 ? 1 : i] = args[i].ival;
    *out = tv_list(e->loc);
    for (int64_t i = v[0]; v[2] > 0 ? i < v[1] : i > v[1]; i += v[2]) {
        TuneVal x = tv_int(t->a, e->loc, i);
        if (!list_push(t, out, &x))
            return false;
    }
    return true;
}

/* itertools.product(a, b, ..., repeat=r): every tuple, the last list varying fastest. */
static bool product_call(TuneEval *t, const Expr *e, const TuneVal *args, int n, int repeat,
                         TuneVal *out)
{
    int total = n * repeat;
    *out = tv_list(e->loc);
    if (total > 16) {
        diag_error(t->d, e->loc, "autotune: itertools.product of more than 16 lists");
        return false;
    }
    int idx[16] = {0};
    for (int i = 0; i < total; i++)
        if (args[i % n].n == 0)
            return true;
    for (;;) {
        TuneVal tuple = tv_list(e->loc);
        for (int i = 0; i < total; i++)
            if (!list_push(t, &tuple, &args[i % n].elems[idx[i]]))
                return false;
        if (!list_push(t, out, &tuple))
            return false;
        int i = total - 1;
        while (i >= 0 && ++idx[i] == args[i % n].n)
            idx[i--] = 0;
        if (i < 0)
            return true;
    }
}

/* zip(a, b, ...): tuples up to the shortest list. */
static bool zip_call(TuneEval *t, const Expr *e, const TuneVal *args, int n, TuneVal *out)
{
    *out = tv_list(e->loc);
    int len = n ? args[0].n : 0;
    for (int i = 1; i < n; i++)
        len = args[i].n < len ? args[i].n : len;
    for (int k = 0; k < len; k++) {
        TuneVal tuple = tv_list(e->loc);
        for (int i = 0; i < n; i++)
            if (!list_push(t, &tuple, &args[i].elems[k]))
                return false;
        if (!list_push(t, out, &tuple))
            return false;
    }
    return true;
}

/* min(a, b, ...) or min(list); max likewise */
static bool min_max_call(TuneEval *t, const Expr *e, const TuneVal *args, int n, bool max,
                         TuneVal *out)
{
    const TuneVal *items = n == 1 && args[0].kind == TV_LIST ? args[0].elems : args;
    int count = n == 1 && args[0].kind == TV_LIST ? args[0].n : n;
    if (count == 0) {
        diag_error(t->d, e->loc, "autotune: %s of nothing", max ? "max" : "min");
        return false;
    }
    *out = items[0];
    for (int i = 0; i < count; i++) {
        if (!is_number(&items[i])) {
            diag_error(t->d, items[i].loc, "autotune: %s compares numbers", max ? "max" : "min");
            return false;
        }
        double a = items[i].num == TN_FLOAT ? items[i].fval : (double)items[i].ival;
        double b = out->num == TN_FLOAT ? out->fval : (double)out->ival;
        if (max ? a > b : a < b)
            *out = items[i];
    }
    return true;
}

typedef enum PyFn {
    PY_NONE,
    PY_RANGE,
    PY_PRODUCT,
    PY_ZIP,
    PY_LIST,
    PY_LEN,
    PY_MIN,
    PY_MAX,
    PY_STR,
    PY_INT
} PyFn;

/* The builtin a call names: range, list, tuple, len, min, max, zip, and itertools.product (or
 * product imported from itertools). */
static PyFn py_fn(const Expr *fn)
{
    if (fn->kind == EX_ATTR && !strcmp(fn->attr.name, "product") &&
        is_name(fn->attr.obj, "itertools"))
        return PY_PRODUCT;
    if (fn->kind != EX_NAME)
        return PY_NONE;
    static const struct {
        const char *name;
        PyFn fn;
    } fns[] = {{"range", PY_RANGE}, {"product", PY_PRODUCT}, {"zip", PY_ZIP}, {"list", PY_LIST},
               {"tuple", PY_LIST},  {"len", PY_LEN},         {"min", PY_MIN}, {"max", PY_MAX},
               {"str", PY_STR},     {"int", PY_INT}};
    for (size_t i = 0; i < sizeof fns / sizeof *fns; i++)
        if (!strcmp(fn->str, fns[i].name))
            return fns[i].fn;
    return PY_NONE;
}

static bool py_call(TuneEval *t, const Expr *e, PyFn fn, TuneVar **env, TuneVal *out)
{
    int n = e->call.nargs, repeat = 1;
    for (int i = 0; i < e->call.nkwargs; i++) {
        TuneVal r;
        if (fn != PY_PRODUCT || strcmp(e->call.kwnames[i], "repeat") ||
            !eval(t, e->call.kwargs[i], env, &r) || r.num != TN_INT || r.ival < 1 || r.ival > 16) {
            diag_error(t->d, e->call.kwargs[i]->loc,
                       "autotune: this keyword is not evaluated here (itertools.product's "
                       "repeat=N is)");
            return false;
        }
        repeat = (int)r.ival;
    }
    TuneVal *args = arena_alloc(t->a, sizeof(TuneVal) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        if (!eval(t, e->call.args[i], env, &args[i]))
            return false;
        bool list = args[i].kind == TV_LIST;
        if ((fn == PY_PRODUCT || fn == PY_ZIP || fn == PY_LIST || fn == PY_LEN) && !list) {
            diag_error(t->d, e->call.args[i]->loc, "autotune: expected a list or a tuple here");
            return false;
        }
    }
    if ((fn == PY_LIST || fn == PY_LEN) && n != 1) {
        diag_error(t->d, e->loc, "autotune: %s takes one list", fn == PY_LEN ? "len" : "list");
        return false;
    }
    if ((fn == PY_STR || fn == PY_INT) &&
        (n != 1 || args[0].kind != TV_SCALAR || (fn == PY_INT && args[0].num == TN_NONE))) {
        diag_error(t->d, e->loc, "autotune: %s takes one number here",
                   fn == PY_STR ? "str" : "int");
        return false;
    }
    switch (fn) {
    case PY_RANGE: return range_call(t, e, args, n, out);
    case PY_PRODUCT: return product_call(t, e, args, n, repeat, out);
    case PY_ZIP: return zip_call(t, e, args, n, out);
    case PY_LIST: *out = args[0]; return true;
    case PY_LEN: *out = tv_int(t->a, e->loc, args[0].n); return true;
    case PY_STR:
        *out = (TuneVal){.kind = TV_STRING, .loc = e->loc, .text = args[0].text};
        return true;
    case PY_INT:
        *out = tv_int(t->a, e->loc, args[0].num == TN_FLOAT ? (int64_t)args[0].fval : args[0].ival);
        return true;
    case PY_MIN:
    case PY_MAX: return min_max_call(t, e, args, n, fn == PY_MAX, out);
    default: return false;
    }
}

/* ---- configs helpers ------------------------------------------------------------------------ */

/* The words of a condition, as host_skip.c reads a module-level one. */
static void condition_words(const Expr *e, HostCondition *c, int depth)
{
    if (!e || depth > 64)
        return;
    switch (e->kind) {
    case EX_NAME: host_condition_word(c, e->str, strlen(e->str)); break;
    case EX_STR: host_condition_word(c, e->str, strlen(e->str)); break;
    case EX_ATTR:
        host_condition_word(c, e->attr.name, strlen(e->attr.name));
        condition_words(e->attr.obj, c, depth + 1);
        break;
    case EX_CALL:
        condition_words(e->call.fn, c, depth + 1);
        for (int i = 0; i < e->call.nargs; i++)
            condition_words(e->call.args[i], c, depth + 1);
        break;
    case EX_SUBSCRIPT:
        condition_words(e->sub.obj, c, depth + 1);
        for (int i = 0; i < e->sub.nidx; i++)
            condition_words(e->sub.idx[i], c, depth + 1);
        break;
    case EX_UNARY:
        c->negated |= e->un.op == UN_NOT;
        condition_words(e->un.operand, c, depth + 1);
        break;
    case EX_BINARY:
        c->negated |= e->bin.op == BIN_NE || e->bin.op == BIN_IS_NOT;
        c->less |= e->bin.op == BIN_LT || e->bin.op == BIN_LE;
        condition_words(e->bin.lhs, c, depth + 1);
        condition_words(e->bin.rhs, c, depth + 1);
        break;
    default: break;
    }
}

/* An if's condition: one that tests the backend or a version (`if is_cuda():`, tutorial 03's
 * choice between its CUDA and HIP lists) is decided as host_skip.c decides a module-level one,
 * for an NVIDIA GPU under the newest Triton, without running it; any other is evaluated. */
static bool condition(TuneEval *t, const Expr *cond, TuneVar **env, bool *holds)
{
    /* `HAS_DESC and is_cuda() and BLOCK_M * BLOCK_N < 128 * 128`: each operand on its own */
    if (cond->kind == EX_BINARY && (cond->bin.op == BIN_AND || cond->bin.op == BIN_OR)) {
        if (!condition(t, cond->bin.lhs, env, holds))
            return false;
        if (*holds == (cond->bin.op == BIN_OR))
            return true;
        return condition(t, cond->bin.rhs, env, holds);
    }
    if (cond->kind == EX_UNARY && cond->un.op == UN_NOT) {
        if (!condition(t, cond->un.operand, env, holds))
            return false;
        *holds = !*holds;
        return true;
    }
    HostCondition c = {0};
    condition_words(cond, &c, 0);
    int decided = host_condition_holds(&c);
    if (decided >= 0) {
        *holds = decided;
        return true;
    }
    TuneVal v;
    bool was = t->in_condition;
    t->in_condition = true; /* supports_tma() returns `... and is_cuda() and ...` */
    bool ok = eval(t, cond, env, &v);
    t->in_condition = was;
    *holds = ok && truth(&v);
    return ok;
}

typedef enum Flow { FLOW_NEXT, FLOW_RETURN, FLOW_BREAK, FLOW_CONTINUE, FLOW_ERROR } Flow;

static Flow exec_block(TuneEval *t, const FuncDef *f, const Block *b, TuneVar **env, TuneVal *ret);

/* configs.append(x) / configs.extend(xs) on a list the helper bound. */
static Flow list_method(TuneEval *t, const Expr *call, TuneVar **env)
{
    const Expr *fn = call->call.fn;
    const char *m = fn->attr.name;
    TuneVar *v = fn->attr.obj->kind == EX_NAME ? var_find(*env, fn->attr.obj->str) : NULL;
    if (!v || v->val.kind != TV_LIST || (strcmp(m, "append") && strcmp(m, "extend")) ||
        call->call.nargs != 1 || call->call.nkwargs) {
        diag_error(t->d, call->loc,
                   "autotune: this call is not evaluated in a configs helper (append and "
                   "extend on a list the helper made are)");
        return FLOW_ERROR;
    }
    TuneVal x;
    if (!eval(t, call->call.args[0], env, &x))
        return FLOW_ERROR;
    if (!strcmp(m, "append"))
        return list_push(t, &v->val, &x) ? FLOW_NEXT : FLOW_ERROR;
    if (x.kind != TV_LIST) {
        diag_error(t->d, call->call.args[0]->loc, "autotune: extend takes a list");
        return FLOW_ERROR;
    }
    for (int i = 0; i < x.n; i++)
        if (!list_push(t, &v->val, &x.elems[i]))
            return FLOW_ERROR;
    return FLOW_NEXT;
}

static Flow exec_for(TuneEval *t, const FuncDef *f, const Stmt *st, TuneVar **env, TuneVal *ret)
{
    TuneVal it;
    if (!eval(t, st->for_.iter, env, &it))
        return FLOW_ERROR;
    if (it.kind != TV_LIST) {
        diag_error(t->d, st->for_.iter->loc,
                   "autotune: a loop iterates over a list, a tuple, range(...) or "
                   "itertools.product(...) here");
        return FLOW_ERROR;
    }
    for (int k = 0; k < it.n; k++) {
        if (!assign_target(t, st->for_.target, &it.elems[k], env, false))
            return FLOW_ERROR;
        Flow fl = exec_block(t, f, &st->for_.body, env, ret);
        if (fl == FLOW_BREAK)
            break;
        if (fl == FLOW_RETURN || fl == FLOW_ERROR)
            return fl;
    }
    return FLOW_NEXT;
}

static const char *stmt_what(StmtKind k)
{
    switch (k) {
    case ST_WHILE: return "'while' loops are";
    case ST_DEF: return "nested defs are";
    case ST_IMPORT: return "imports are";
    default: return "this statement is";
    }
}

static Flow exec_stmt(TuneEval *t, const FuncDef *f, const Stmt *st, TuneVar **env, TuneVal *ret)
{
    if (!step(t, st->loc))
        return FLOW_ERROR;
    TuneVal v;
    switch (st->kind) {
    case ST_PASS:
    case ST_ASSERT: return FLOW_NEXT; /* a host check on the config space; nothing to choose */
    case ST_BREAK: return FLOW_BREAK;
    case ST_CONTINUE: return FLOW_CONTINUE;
    case ST_RETURN:
        if (!st->ret.value) {
            *ret = (TuneVal){.kind = TV_NONE, .loc = st->loc};
            return FLOW_RETURN;
        }
        if (t->in_condition) {
            bool holds;
            if (!condition(t, st->ret.value, env, &holds))
                return FLOW_ERROR;
            *ret = tv_bool(st->loc, holds);
            return FLOW_RETURN;
        }
        return eval(t, st->ret.value, env, ret) ? FLOW_RETURN : FLOW_ERROR;
    case ST_ASSIGN:
        if (!eval(t, st->assign.value, env, &v))
            return FLOW_ERROR;
        for (int k = 0; k < st->assign.ntargets; k++)
            if (!assign_target(t, st->assign.targets[k], &v, env, false))
                return FLOW_ERROR;
        return FLOW_NEXT;
    case ST_AUGASSIGN: {
        /* configs += [...], n *= 2: the binary operator on the name's value */
        Expr op = {
            .kind = EX_BINARY, .loc = st->loc, .bin = {st->aug.op, st->aug.target, st->aug.value}};
        if (!eval(t, &op, env, &v))
            return FLOW_ERROR;
        return assign_target(t, st->aug.target, &v, env, false) ? FLOW_NEXT : FLOW_ERROR;
    }
    case ST_EXPR: {
        const Expr *x = st->expr.value;
        if (x->kind == EX_STR)
            return FLOW_NEXT;
        if (x->kind == EX_CALL && x->call.fn->kind == EX_ATTR)
            return list_method(t, x, env);
        diag_error(t->d, st->loc,
                   "autotune: this expression statement is not evaluated in a configs helper");
        return FLOW_ERROR;
    }
    case ST_IF: {
        bool holds;
        if (!condition(t, st->if_.cond, env, &holds))
            return FLOW_ERROR;
        return exec_block(t, f, holds ? &st->if_.then : &st->if_.els, env, ret);
    }
    case ST_FOR: return exec_for(t, f, st, env, ret);
    default:
        diag_error(t->d, st->loc,
                   "autotune: %s not evaluated in the configs helper '%s' (assignments, for, if, "
                   "append/extend and return are)",
                   stmt_what(st->kind), f->name);
        return FLOW_ERROR;
    }
}

static Flow exec_block(TuneEval *t, const FuncDef *f, const Block *b, TuneVar **env, TuneVal *ret)
{
    for (int i = 0; i < b->n; i++) {
        Flow fl = exec_stmt(t, f, b->stmts[i], env, ret);
        if (fl != FLOW_NEXT)
            return fl;
    }
    return FLOW_NEXT;
}

/* The parameters of f bound to a call's arguments (positional, keyword, defaults); nvals
 * values already evaluated (filter's element) come first. */
static bool bind_params(TuneEval *t, const Expr *e, const FuncDef *f, const TuneVal *vals,
                        int nvals, TuneVar **caller, TuneVar **frame)
{
    int nargs = nvals + (e->kind == EX_CALL && !vals ? e->call.nargs : 0);
    if (nargs > f->npositional) {
        diag_error(t->d, e->loc, "autotune: '%s' takes %d positional arguments", f->name,
                   f->npositional);
        return false;
    }
    for (int p = 0; p < f->nparams; p++) {
        const Expr *arg = !vals && p < nargs ? e->call.args[p] : NULL;
        for (int k = 0; !vals && !arg && k < e->call.nkwargs; k++)
            if (!strcmp(e->call.kwnames[k], f->params[p].name))
                arg = e->call.kwargs[k];
        TuneVal v;
        TuneVar *module_env = NULL;
        bool ok = true;
        if (vals && p < nvals)
            v = vals[p];
        else if (arg)
            ok = eval(t, arg, caller, &v);
        else if (f->params[p].default_value)
            ok = eval(t, f->params[p].default_value, &module_env, &v);
        else {
            diag_error(t->d, e->loc, "autotune: '%s' needs a value for its parameter '%s'", f->name,
                       f->params[p].name);
            ok = false;
        }
        if (!ok)
            return false;
        bind(t, frame, f->params[p].name, &v, true);
    }
    return true;
}

/* f's body run on its arguments (assignments, for, if, append/extend, return): the value of its
 * return, None without one. */
static bool run_function(TuneEval *t, const Expr *e, const FuncDef *f, const TuneVal *vals,
                         int nvals, TuneVar **env, TuneVal *out)
{
    if (t->depth >= 32) {
        diag_error(t->d, e->loc, "autotune: helpers nest too deeply (recursion?)");
        return false;
    }
    TuneVar *frame = NULL;
    if (!bind_params(t, e, f, vals, nvals, env, &frame))
        return false;
    t->depth++;
    *out = (TuneVal){.kind = TV_NONE, .loc = e->loc};
    Flow fl = exec_block(t, f, &f->body, &frame, out);
    t->depth--;
    return fl != FLOW_ERROR;
}

/* A call of a module-level function of this file. */
static bool helper_call(TuneEval *t, const Expr *e, TuneVar **env, TuneVal *out)
{
    const FuncDef *f = e->call.fn->kind == EX_NAME ? module_func(t, e->call.fn->str) : NULL;
    if (!f && e->call.fn->kind == EX_NAME) {
        /* host_skip.c sets aside a helper tric cannot read (one with a `with` block) */
        diag_error(t->d, e->loc,
                   "autotune: '%s' is not a function of this file tric reads (host Python it "
                   "does not parse is set aside); expected triton.Config(...) or a call of a "
                   "function that returns a list of them",
                   e->call.fn->str);
        return false;
    }
    if (!f) {
        diag_error(t->d, e->loc,
                   "autotune: expected triton.Config(...) or a call of a function "
                   "of this file that returns a list of them");
        return false;
    }
    return run_function(t, e, f, NULL, 0, env, out);
}

/* filter(keep, configs) (tutorial 06): the elements for which keep, a function of this file or
 * a lambda, returns a true value. */
static bool filter_call(TuneEval *t, const Expr *e, TuneVar **env, TuneVal *out)
{
    const Expr *fn = e->call.nargs == 2 && !e->call.nkwargs ? e->call.args[0] : NULL;
    const FuncDef *f = fn && fn->kind == EX_NAME ? module_func(t, fn->str) : NULL;
    bool lambda = fn && fn->kind == EX_LAMBDA && fn->lambda.nparams == 1;
    if (!f && !lambda) {
        diag_error(t->d, e->loc,
                   "autotune: filter takes a function of this file or a one-parameter lambda, "
                   "then a list");
        return false;
    }
    TuneVal list;
    if (!eval(t, e->call.args[1], env, &list))
        return false;
    if (list.kind != TV_LIST) {
        diag_error(t->d, e->call.args[1]->loc, "autotune: expected a list or a tuple here");
        return false;
    }
    *out = tv_list(e->loc);
    for (int i = 0; i < list.n; i++) {
        TuneVal keep;
        TuneVar *scope = *env;
        if (lambda)
            bind(t, &scope, fn->lambda.params[0]->str, &list.elems[i], true);
        bool ok = lambda ? eval(t, fn->lambda.body, &scope, &keep)
                         : run_function(t, fn, f, &list.elems[i], 1, env, &keep);
        if (!ok)
            return false;
        if (truth(&keep) && !list_push(t, out, &list.elems[i]))
            return false;
    }
    return true;
}

/* ---- host values and strings ------------------------------------------------------------------ */

/* READER(K, default), READER one of the host value readers the driver names (HostEnv.readers):
 * the value the caller gave K (SpecOptions.host_env, part of every cache key), else the default
 * (None without one), what Python gives where nobody set K. Liger pins its MoE configs with such
 * a lookup: `READER("LIGER_FUSED_MOE_AUTOTUNE", "1").lower() in ("0", ...)`. */
static bool is_host_env_read(const TuneEval *t, const Expr *fn)
{
    StrBuf sb = {0};
    bool reader =
        dotted(&sb, fn) && host_env_reader_at(t->env, sb.data, sb.len) == sb.len && sb.len > 0;
    strbuf_free(&sb);
    return reader;
}

static bool host_env_read(TuneEval *t, const Expr *e, TuneVar **env, TuneVal *out)
{
    if (e->call.nargs < 1 || e->call.nargs > 2 || e->call.nkwargs) {
        diag_error(t->d, e->loc, "autotune: expected a host value lookup (NAME, default)");
        return false;
    }
    TuneVal name;
    if (!eval(t, e->call.args[0], env, &name))
        return false;
    if (name.kind != TV_STRING) {
        diag_error(t->d, e->call.args[0]->loc,
                   "autotune: an environment variable's name must be a string");
        return false;
    }
    const char *given = host_env_value(t->env, name.text, strlen(name.text));
    if (given) {
        *out = (TuneVal){.kind = TV_STRING, .text = given, .loc = e->loc};
        return true;
    }
    if (e->call.nargs == 1) {
        *out = (TuneVal){.kind = TV_NONE, .loc = e->loc};
        return true;
    }
    return eval(t, e->call.args[1], env, out);
}

/* "1".lower(), s.upper(), s.strip(): a string's methods that config switches use */
static bool string_method(TuneEval *t, const Expr *e, TuneVar **env, TuneVal *out)
{
    const char *m = e->call.fn->attr.name;
    bool lower = !strcmp(m, "lower"), upper = !strcmp(m, "upper"), strip = !strcmp(m, "strip");
    TuneVal v;
    if (!eval(t, e->call.fn->attr.obj, env, &v))
        return false;
    if (v.kind != TV_STRING || e->call.nargs || e->call.nkwargs || !(lower || upper || strip)) {
        diag_error(t->d, e->loc,
                   "autotune: this method call is not evaluated here (a string's lower, upper "
                   "and strip are)");
        return false;
    }
    size_t n = strlen(v.text), from = 0;
    if (strip) {
        while (from < n && (v.text[from] == ' ' || v.text[from] == '\t' || v.text[from] == '\n'))
            from++;
        while (n > from && (v.text[n - 1] == ' ' || v.text[n - 1] == '\t' || v.text[n - 1] == '\n'))
            n--;
    }
    char *r = arena_strndup(t->a, v.text + from, n - from);
    for (char *c = r; *c && !strip; c++)
        if (lower && *c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
        else if (upper && *c >= 'a' && *c <= 'z')
            *c = (char)(*c - 'a' + 'A');
    *out = (TuneVal){.kind = TV_STRING, .loc = e->loc, .text = r};
    return true;
}

/* ---- a config's fields ---------------------------------------------------------------------- */

/* The value a config's define holds, from its text: "128", "0.5", "True", "tl.float16". */
static TuneVal define_value(TuneEval *t, SrcLoc loc, const char *text)
{
    char *end;
    long long i = strtoll(text, &end, 10);
    if (*text && !*end)
        return tv_int(t->a, loc, i);
    double f = strtod(text, &end);
    if (*text && !*end)
        return tv_float(t->a, loc, f);
    if (!strcmp(text, "True") || !strcmp(text, "False"))
        return tv_bool(loc, text[0] == 'T');
    return (TuneVal){.kind = TV_SCALAR, .loc = loc, .text = text};
}

/* conf.num_warps, conf.num_stages, conf.num_ctas (Triton's defaults where not given: 4, 3, 1) */
static bool config_field(TuneEval *t, const Expr *e, const TuneConfig *c, TuneVal *out)
{
    const char *name = e->attr.name;
    if (!strcmp(name, "num_warps"))
        *out = tv_int(t->a, e->loc, c->num_warps ? c->num_warps : 4);
    else if (!strcmp(name, "num_stages"))
        *out = tv_int(t->a, e->loc, c->num_stages ? c->num_stages : 3);
    else if (!strcmp(name, "num_ctas"))
        *out = tv_int(t->a, e->loc, 1);
    else {
        diag_error(t->d, e->loc,
                   "autotune: a config's '%s' is not read here (kwargs[\"NAME\"], num_warps, "
                   "num_stages, num_ctas are)",
                   name);
        return false;
    }
    return true;
}

/* The name an attribute chain starts from (`conf` of conf.kwargs), NULL when it starts from
 * something else. */
static const char *chain_root(const Expr *e)
{
    while (e->kind == EX_ATTR)
        e = e->attr.obj;
    return e->kind == EX_NAME ? e->str : NULL;
}

/* obj.name: a config's field when obj is a name the helper bound; else a dtype (tl.float16). */
static bool attr_value(TuneEval *t, const Expr *e, TuneVar **env, TuneVal *out)
{
    const char *root = chain_root(e);
    if (!root || !var_find(*env, root) || !strcmp(e->attr.name, "kwargs"))
        return dtype_value(t, e, out);
    TuneVal obj;
    if (!eval(t, e->attr.obj, env, &obj))
        return false;
    if (obj.kind != TV_CONFIG) {
        diag_error(t->d, e->loc, "autotune: only a config's fields are read here");
        return false;
    }
    return config_field(t, e, &obj.config, out);
}

/* conf.kwargs["BLOCK_M"] (a config's value), xs[i] (a list's element, i < 0 from the end) */
static bool subscript_value(TuneEval *t, const Expr *e, TuneVar **env, TuneVal *out)
{
    const Expr *obj = e->sub.obj;
    bool kwargs = obj->kind == EX_ATTR && !strcmp(obj->attr.name, "kwargs");
    TuneVal base, idx;
    if (e->sub.nidx != 1) {
        diag_error(t->d, e->loc, "autotune: one index is read here");
        return false;
    }
    if (!eval(t, kwargs ? obj->attr.obj : obj, env, &base) || !eval(t, e->sub.idx[0], env, &idx))
        return false;
    if (kwargs && base.kind == TV_CONFIG && idx.kind == TV_STRING) {
        for (int i = 0; i < base.config.ndefines; i++)
            if (!strcmp(base.config.defines[i].name, idx.text)) {
                *out = define_value(t, e->loc, base.config.defines[i].value);
                return true;
            }
        diag_error(t->d, e->loc, "autotune: this config sets no '%s'", idx.text);
        return false;
    }
    if (!kwargs && base.kind == TV_LIST && idx.kind == TV_SCALAR && idx.num == TN_INT) {
        int64_t i = idx.ival < 0 ? idx.ival + base.n : idx.ival;
        if (i >= 0 && i < base.n) {
            *out = base.elems[i];
            return true;
        }
        diag_error(t->d, e->loc, "autotune: index %lld is out of range (%d elements)",
                   (long long)idx.ival, base.n);
        return false;
    }
    diag_error(t->d, e->loc,
               "autotune: this subscript is not evaluated here (a config's kwargs[\"NAME\"] and "
               "a list's [i] are)");
    return false;
}

static bool eval(TuneEval *t, const Expr *e, TuneVar **env, TuneVal *out)
{
    memset(out, 0, sizeof *out);
    out->loc = e->loc;
    switch (e->kind) {
    case EX_LIST:
    case EX_TUPLE:
        *out = tv_list(e->loc);
        for (int i = 0; i < e->list.n; i++) {
            TuneVal v;
            if (!eval(t, e->list.elts[i], env, &v) || !list_push(t, out, &v))
                return false;
        }
        return true;
    case EX_STR:
        out->kind = TV_STRING;
        out->text = e->str;
        return true;
    case EX_INT: *out = tv_int(t->a, e->loc, e->ival); return true;
    case EX_FLOAT: *out = tv_float(t->a, e->loc, e->fval); return true;
    case EX_BOOL: *out = tv_bool(e->loc, e->bval); return true;
    case EX_NONE: out->kind = TV_NONE; return true;
    case EX_ATTR: return attr_value(t, e, env, out);
    case EX_SUBSCRIPT: return subscript_value(t, e, env, out);
    case EX_NAME: return name_value(t, e, env, out);
    case EX_COMP: return comprehension(t, e, env, out);
    case EX_BINARY: return binary(t, e, env, out);
    case EX_UNARY: return unary(t, e, env, out);
    case EX_TERNARY: {
        bool holds;
        return condition(t, e->ternary.cond, env, &holds) &&
               eval(t, holds ? e->ternary.then : e->ternary.els, env, out);
    }
    case EX_CALL:
        if (is_config_callee(e->call.fn))
            return config_call(t, e, env, out);
        if (is_name(e->call.fn, "filter") && !module_func(t, "filter"))
            return filter_call(t, e, env, out);
        if (is_host_env_read(t, e->call.fn))
            return host_env_read(t, e, env, out);
        if (e->call.fn->kind == EX_ATTR &&
            (e->call.fn->attr.obj->kind == EX_CALL || e->call.fn->attr.obj->kind == EX_STR ||
             (chain_root(e->call.fn) && var_find(*env, chain_root(e->call.fn)))))
            return string_method(t, e, env, out);
        if (py_fn(e->call.fn) != PY_NONE &&
            !(e->call.fn->kind == EX_NAME && module_func(t, e->call.fn->str)))
            return py_call(t, e, py_fn(e->call.fn), env, out);
        return helper_call(t, e, env, out);
    default: diag_error(t->d, e->loc, "autotune: expected a constant here"); return false;
    }
}

static int param_index(const FuncDef *f, const char *name)
{
    for (int i = 0; i < f->nparams; i++)
        if (!strcmp(f->params[i].name, name))
            return i;
    return -1;
}

/* key=["M", "N"]: a list of strings, each a parameter of f. */
static bool name_list(TuneEval *t, const FuncDef *f, const char *what, const Expr *e,
                      const char ***names, int *n)
{
    TuneVal v;
    TuneVar *env = NULL;
    if (!eval(t, e, &env, &v))
        return false;
    if (v.kind != TV_LIST) {
        diag_error(t->d, e->loc, "autotune: %s must be a list of parameter names", what);
        return false;
    }
    *names = arena_alloc(t->a, sizeof(char *) * (size_t)(v.n + 1));
    *n = 0;
    for (int i = 0; i < v.n; i++) {
        if (v.elems[i].kind != TV_STRING) {
            diag_error(t->d, v.elems[i].loc,
                       "autotune: %s must be a list of parameter names "
                       "as strings",
                       what);
            return false;
        }
        if (param_index(f, v.elems[i].text) < 0) {
            diag_error(t->d, v.elems[i].loc,
                       "autotune: %s names '%s', which is not a parameter "
                       "of %s",
                       what, v.elems[i].text, f->name);
            return false;
        }
        (*names)[(*n)++] = v.elems[i].text;
    }
    return true;
}

static const Expr *autotune_decorator(const FuncDef *f)
{
    for (int i = 0; i < f->ndecorators; i++) {
        const Expr *d = f->decorators[i];
        if (d->kind != EX_CALL)
            continue;
        const Expr *fn = d->call.fn;
        if (is_name(fn, "autotune") || (fn->kind == EX_ATTR && !strcmp(fn->attr.name, "autotune") &&
                                        is_name(fn->attr.obj, "triton")))
            return d;
    }
    return NULL;
}

bool autotune_read(const Module *m, const FuncDef *f, const SpecOptions *spec, Autotune *out,
                   Arena *a, Diag *d)
{
    memset(out, 0, sizeof *out);
    const Expr *dec = autotune_decorator(f);
    if (!dec)
        return true;
    out->loc = dec->loc;
    TuneEval t = {
        .m = m, .a = a, .d = d, .decorator = dec->loc, .env = spec ? &spec->host_env : NULL};
    const Expr *configs = NULL;
    bool has_key = false;
    /* Triton's signature is autotune(configs, key, prune_configs_by=None, ...): the first two
     * may come positionally (tutorial 06 and 08 pass them so). */
    if (dec->call.nargs > 2) {
        diag_error(d, dec->call.args[2]->loc,
                   "autotune: only configs and key may be passed "
                   "positionally; pass the others by keyword");
        return false;
    }
    int nargs = dec->call.nargs + dec->call.nkwargs;
    for (int i = 0; i < nargs; i++) {
        bool positional = i < dec->call.nargs;
        const char *kw =
            positional ? (i == 0 ? "configs" : "key") : dec->call.kwnames[i - dec->call.nargs];
        const Expr *v = positional ? dec->call.args[i] : dec->call.kwargs[i - dec->call.nargs];
        if (!strcmp(kw, "configs"))
            configs = v;
        else if (!strcmp(kw, "key")) {
            has_key = true;
            if (!name_list(&t, f, "key", v, &out->key, &out->nkey))
                return false;
        } else if (!strcmp(kw, "restore_value")) {
            if (!name_list(&t, f, "restore_value", v, &out->restore_value, &out->nrestore))
                return false;
        } else if (!strcmp(kw, "reset_to_zero")) {
            if (!name_list(&t, f, "reset_to_zero", v, &out->reset_to_zero, &out->nreset))
                return false;
        } else if (!strcmp(kw, "prune_configs_by")) {
            /* Its early_config_prune and perf_model are Python functions; tric runs no Python. */
            if (v->kind != EX_DICT && v->kind != EX_NONE) {
                diag_error(d, v->loc,
                           "autotune: prune_configs_by must be a dict "
                           "({'early_config_prune': fn, 'perf_model': fn, 'top_k': n})");
                return false;
            }
            if (v->kind == EX_DICT)
                diag_warning(d, v->loc,
                             "autotune: prune_configs_by is ignored: tric runs no Python "
                             "pruning or performance model and times every config");
        } else if (!strcmp(kw, "warmup") || !strcmp(kw, "rep") || !strcmp(kw, "cache_results") ||
                   !strcmp(kw, "use_cuda_graph")) {
            /* Timing knobs of Triton's do_bench: tric times its own way (docs/runtime.md). */
        } else if (!strcmp(kw, "**")) {
            /* FLA's `**autotune_cache_kwargs`: host Python holding those knobs (cache_results) */
            diag_warning(d, v->loc,
                         "autotune: '**' arguments are host Python tric does not read (Triton's "
                         "timing and cache options); the configs and key decide");
        } else {
            diag_error(d, v->loc,
                       "autotune: keyword '%s' is not supported (configs, key, "
                       "restore_value, reset_to_zero)",
                       kw);
            return false;
        }
    }
    if (!configs) {
        diag_error(d, dec->loc, "autotune: configs= is missing");
        return false;
    }
    if (!has_key) {
        diag_error(d, dec->loc,
                   "autotune: key= is missing (the parameters whose values select "
                   "a tuning, e.g. key=[\"M\", \"N\", \"K\"])");
        return false;
    }
    TuneVal list;
    TuneVar *env = NULL;
    if (!eval(&t, configs, &env, &list)) {
        out->configs_unevaluated = true;
        return false;
    }
    if (list.kind != TV_LIST || list.n == 0) {
        diag_error(d, configs->loc,
                   list.kind == TV_LIST ? "autotune: the config list is empty"
                                        : "autotune: configs must be a list of "
                                          "triton.Config");
        return false;
    }
    out->configs = arena_alloc(a, sizeof(TuneConfig) * (size_t)list.n);
    for (int i = 0; i < list.n; i++) {
        if (list.elems[i].kind != TV_CONFIG) {
            diag_error(d, list.elems[i].loc, "autotune: configs must be a list of triton.Config");
            return false;
        }
        TuneConfig *c = &list.elems[i].config;
        for (int k = 0; k < c->ndefines; k++) {
            int p = param_index(f, c->defines[k].name);
            if (p < 0) {
                diag_error(d, c->loc,
                           "autotune: this config sets '%s', which is not a parameter "
                           "of %s",
                           c->defines[k].name, f->name);
                return false;
            }
        }
        out->configs[out->nconfigs++] = *c;
    }
    return true;
}

void autotune_config_text(StrBuf *sb, const TuneConfig *c)
{
    const char *sep = "";
    for (int i = 0; i < c->ndefines; i++, sep = ", ")
        strbuf_printf(sb, "%s%s=%s", sep, c->defines[i].name, c->defines[i].value);
    if (c->num_warps)
        strbuf_printf(sb, "%snum_warps=%d", sep, c->num_warps), sep = ", ";
    if (c->num_stages)
        strbuf_printf(sb, "%snum_stages=%d", sep, c->num_stages);
}
