/* autotune.c: @triton.autotune(...) evaluated at compile time.
 *
 * Triton runs the decorator's arguments as Python when the module is imported; tric reads the
 * same text and accepts the forms kernel files use: a list of triton.Config calls, written out or
 * returned by a module-level helper function (seed 2's get_cuda_autotune_config), lists joined
 * with +, and names bound in that helper or at module level. The runtime (runtime/tune.c) and the
 * CLI (driver/driver.c) compile one kernel per config and choose among them. */
#include "frontend/frontend.h"

#include <string.h>

/* A value met while evaluating: a config, a list of values, or a constant's text. */
typedef enum TuneValKind { TV_CONFIG, TV_LIST, TV_STRING, TV_SCALAR } TuneValKind;

typedef struct TuneVal {
    TuneValKind kind;
    SrcLoc loc;
    TuneConfig config;     /* TV_CONFIG */
    struct TuneVal *elems; /* TV_LIST */
    int n;
    const char *text; /* TV_STRING: the string; TV_SCALAR: a -D value ("128", "tl.float16") */
    int64_t ival;     /* TV_SCALAR holding an int */
    bool is_int;
} TuneVal;

/* Names bound by assignments in a helper's body (innermost first) and at module level. */
typedef struct TuneScope {
    const Block *body;
    int upto; /* statements of body before this index are visible */
    const struct TuneScope *outer;
} TuneScope;

typedef struct TuneEval {
    const Module *m;
    Arena *a;
    Diag *d;
    int depth; /* helper calls in progress: a recursive helper stops here */
} TuneEval;

static bool eval(TuneEval *t, const Expr *e, const TuneScope *scope, TuneVal *out);

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

/* The value assigned to name by the last `name = value` before scope->upto, innermost scope
 * first, then module level. */
static const Expr *lookup(const TuneEval *t, const TuneScope *scope, const char *name,
                          const TuneScope **found_in)
{
    for (const TuneScope *sc = scope; sc; sc = sc->outer) {
        for (int i = sc->upto - 1; i >= 0; i--) {
            const Stmt *st = sc->body->stmts[i];
            if (!st || st->kind != ST_ASSIGN)
                continue;
            for (int k = 0; k < st->assign.ntargets; k++)
                if (is_name(st->assign.targets[k], name)) {
                    *found_in = sc;
                    return st->assign.value;
                }
        }
    }
    for (int i = t->m->nglobals - 1; i >= 0; i--) {
        const Stmt *st = t->m->globals[i];
        if (!st || st->kind != ST_ASSIGN)
            continue;
        for (int k = 0; k < st->assign.ntargets; k++)
            if (is_name(st->assign.targets[k], name)) {
                *found_in = NULL;
                return st->assign.value;
            }
    }
    return NULL;
}

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

static bool scalar(TuneEval *t, const Expr *e, TuneVal *out)
{
    StrBuf sb = {0};
    out->kind = TV_SCALAR;
    out->loc = e->loc;
    switch (e->kind) {
    case EX_INT:
        strbuf_printf(&sb, "%lld", (long long)e->ival);
        out->ival = e->ival;
        out->is_int = true;
        break;
    case EX_FLOAT: strbuf_printf(&sb, "%.17g", e->fval); break;
    case EX_BOOL: strbuf_append(&sb, e->bval ? "True" : "False"); break;
    case EX_UNARY:
        if (e->un.op == UN_NEG && e->un.operand->kind == EX_INT) {
            strbuf_printf(&sb, "%lld", -(long long)e->un.operand->ival);
            out->ival = -e->un.operand->ival;
            out->is_int = true;
            break;
        }
        diag_error(t->d, e->loc, "autotune: expected a constant here");
        return false;
    case EX_ATTR:
        if (!dotted(&sb, e)) {
            strbuf_free(&sb);
            diag_error(t->d, e->loc, "autotune: expected a constant or a dtype (tl.float16) here");
            return false;
        }
        break;
    default: diag_error(t->d, e->loc, "autotune: expected a constant here"); return false;
    }
    out->text = arena_strdup(t->a, sb.data ? sb.data : "");
    strbuf_free(&sb);
    return true;
}

/* num_warps=8: a positive int constant. */
static bool int_kwarg(TuneEval *t, const Expr *e, const TuneScope *scope, const char *what,
                      int *out)
{
    TuneVal v;
    if (!eval(t, e, scope, &v))
        return false;
    if (v.kind != TV_SCALAR || !v.is_int || v.ival < 1 || v.ival > 1024) {
        diag_error(t->d, e->loc, "autotune: %s must be a positive integer", what);
        return false;
    }
    *out = (int)v.ival;
    return true;
}

static bool config_call(TuneEval *t, const Expr *e, const TuneScope *scope, TuneVal *out)
{
    memset(out, 0, sizeof *out);
    out->kind = TV_CONFIG;
    out->loc = e->loc;
    TuneConfig *c = &out->config;
    c->loc = e->loc;
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
        if (!eval(t, dict->dict.vals[i], scope, &v))
            return false;
        if (v.kind != TV_SCALAR) {
            diag_error(t->d, dict->dict.vals[i]->loc,
                       "autotune: a config's value must be a constant (int, float, bool, dtype)");
            return false;
        }
        c->defines[c->ndefines++] = (Define){k->str, v.text};
    }
    for (int i = 0; i < e->call.nkwargs; i++) {
        const char *kw = e->call.kwnames[i];
        const Expr *v = e->call.kwargs[i];
        if (!strcmp(kw, "num_warps")) {
            if (!int_kwarg(t, v, scope, "num_warps", &c->num_warps))
                return false;
            if (c->num_warps > 32 || (c->num_warps & (c->num_warps - 1))) {
                diag_error(t->d, v->loc, "autotune: num_warps must be a power of two in 1..32");
                return false;
            }
        } else if (!strcmp(kw, "num_stages")) {
            if (!int_kwarg(t, v, scope, "num_stages", &c->num_stages))
                return false;
            if (c->num_stages > 16) {
                diag_error(t->d, v->loc, "autotune: num_stages must be in 1..16");
                return false;
            }
        } else if (!strcmp(kw, "num_ctas")) {
            int ctas = 0;
            if (!int_kwarg(t, v, scope, "num_ctas", &ctas))
                return false;
            if (ctas != 1) {
                diag_error(t->d, v->loc,
                           "autotune: num_ctas other than 1 (thread-block clusters) "
                           "is not supported");
                return false;
            }
        } else if (!strcmp(kw, "maxnreg") || !strcmp(kw, "pre_hook")) {
            if (v->kind != EX_NONE) {
                diag_error(t->d, v->loc, "autotune: Config's %s is not supported", kw);
                return false;
            }
        } else {
            diag_error(t->d, v->loc,
                       "autotune: triton.Config has no keyword '%s' (num_warps, "
                       "num_stages, num_ctas)",
                       kw);
            return false;
        }
    }
    return true;
}

/* A call of a module-level helper with no parameters: the value of its `return`. */
static bool helper_call(TuneEval *t, const Expr *e, const TuneScope *scope, TuneVal *out)
{
    (void)scope;
    const FuncDef *f = NULL;
    for (int i = 0; i < t->m->nfuncs; i++)
        if (t->m->funcs[i] && t->m->funcs[i]->name && is_name(e->call.fn, t->m->funcs[i]->name))
            f = t->m->funcs[i];
    if (!f && e->call.fn->kind == EX_NAME) {
        /* host_skip.c sets aside a helper tric cannot read (one returning a comprehension) */
        diag_error(t->d, e->loc,
                   "autotune: '%s' is not a function of this file tric reads (host Python "
                   "such as a comprehension is set aside); expected triton.Config(...) or a "
                   "call of a function that returns a list of them",
                   e->call.fn->str);
        return false;
    }
    if (!f) {
        diag_error(t->d, e->loc,
                   "autotune: expected triton.Config(...) or a call of a function "
                   "of this file that returns a list of them");
        return false;
    }
    if (e->call.nargs || e->call.nkwargs || f->nparams) {
        diag_error(t->d, e->loc,
                   "autotune: the configs helper '%s' is called with no arguments "
                   "here and must take none",
                   f->name);
        return false;
    }
    if (t->depth >= 8) {
        diag_error(t->d, e->loc, "autotune: helpers nest too deeply (recursion?)");
        return false;
    }
    for (int i = 0; i < f->body.n; i++) {
        const Stmt *st = f->body.stmts[i];
        if (st->kind == ST_RETURN) {
            if (!st->ret.value)
                break;
            TuneScope inner = {.body = &f->body, .upto = i, .outer = NULL};
            t->depth++;
            bool ok = eval(t, st->ret.value, &inner, out);
            t->depth--;
            return ok;
        }
        if (st->kind != ST_ASSIGN && st->kind != ST_PASS && st->kind != ST_EXPR) {
            diag_error(t->d, st->loc,
                       "autotune: the configs helper '%s' may only assign names "
                       "and return (no control flow)",
                       f->name);
            return false;
        }
    }
    diag_error(t->d, f->loc, "autotune: the configs helper '%s' returns nothing", f->name);
    return false;
}

static bool eval(TuneEval *t, const Expr *e, const TuneScope *scope, TuneVal *out)
{
    memset(out, 0, sizeof *out);
    out->loc = e->loc;
    switch (e->kind) {
    case EX_LIST:
    case EX_TUPLE:
        out->kind = TV_LIST;
        out->elems = arena_alloc(t->a, sizeof(TuneVal) * (size_t)(e->list.n + 1));
        for (int i = 0; i < e->list.n; i++)
            if (!eval(t, e->list.elts[i], scope, &out->elems[out->n++]))
                return false;
        return true;
    case EX_STR:
        out->kind = TV_STRING;
        out->text = e->str;
        return true;
    case EX_CALL:
        if (is_config_callee(e->call.fn))
            return config_call(t, e, scope, out);
        return helper_call(t, e, scope, out);
    case EX_BINARY: {
        TuneVal l, r;
        if (e->bin.op != BIN_ADD) {
            diag_error(t->d, e->loc, "autotune: only + (joining lists) is evaluated here");
            return false;
        }
        if (!eval(t, e->bin.lhs, scope, &l) || !eval(t, e->bin.rhs, scope, &r))
            return false;
        if (l.kind != TV_LIST || r.kind != TV_LIST) {
            diag_error(t->d, e->loc, "autotune: + joins two lists here");
            return false;
        }
        out->kind = TV_LIST;
        out->n = l.n + r.n;
        out->elems = arena_alloc(t->a, sizeof(TuneVal) * (size_t)(out->n + 1));
        memcpy(out->elems, l.elems, sizeof(TuneVal) * (size_t)l.n);
        memcpy(out->elems + l.n, r.elems, sizeof(TuneVal) * (size_t)r.n);
        return true;
    }
    case EX_NAME: {
        const TuneScope *in = NULL;
        const Expr *v = lookup(t, scope, e->str, &in);
        if (!v) {
            /* host_skip.c sets aside a binding tric cannot read (a comprehension) */
            diag_error(t->d, e->loc,
                       "autotune: '%s' is not defined in this file, or only by host Python tric "
                       "does not run (a comprehension, a call of a host function)",
                       e->str);
            return false;
        }
        if (t->depth >= 64) {
            diag_error(t->d, e->loc, "autotune: '%s' is defined in terms of itself", e->str);
            return false;
        }
        /* The binding's own scope: statements before it. */
        TuneScope sc = {0};
        if (in) {
            sc = *in;
            for (int i = 0; i < in->upto; i++)
                if (in->body->stmts[i]->kind == ST_ASSIGN && in->body->stmts[i]->assign.value == v)
                    sc.upto = i;
        }
        t->depth++;
        bool ok = eval(t, v, in ? &sc : NULL, out);
        t->depth--;
        return ok;
    }
    default: return scalar(t, e, out);
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
    if (!eval(t, e, NULL, &v))
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

bool autotune_read(const Module *m, const FuncDef *f, Autotune *out, Arena *a, Diag *d)
{
    memset(out, 0, sizeof *out);
    const Expr *dec = autotune_decorator(f);
    if (!dec)
        return true;
    out->loc = dec->loc;
    TuneEval t = {.m = m, .a = a, .d = d};
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
    if (!eval(&t, configs, NULL, &list)) {
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
