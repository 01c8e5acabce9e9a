/* entry.c: the runtime's one entry into the compiler besides driver_compile. runtime/ includes no
 * header of frontend/ and calls none of its functions (tests/layering.sh); what it must know of a
 * source file before compiling it, or at a launch, it asks here in plain values:
 *   - the kernels a file holds and their parameters' names (tric_module_compile of a file with
 *     several kernels compiles each),
 *   - the @triton.autotune configs a compile tunes over, and a config's text,
 *   - the @triton.heuristics that read run-time arguments: read once when the module compiles,
 *     the parsed source kept here, and evaluated at every launch on the argument values the
 *     runtime hands over (docs/runtime.md "Heuristics").
 * The AST never leaves this file. */
#include "driver/driver.h"

#include <stdlib.h>
#include <string.h>

/* ---- kernels and autotune configs ------------------------------------------------------------- */

/* Python's readers of the process environment, which a kernel file's host code calls to pick its
 * configs or helpers (Liger, FLA): the frontend evaluates them on HostEnv's pairs. */
static const char *const host_env_readers[] = {"os.environ.get", "os.getenv", NULL};

HostEnv driver_host_env(const HostEnv *given)
{
    HostEnv env = given ? *given : (HostEnv){0};
    env.readers = host_env_readers;
    return env;
}

int driver_file_kernels(const SrcFile *file, DriverKernelInfo **out, Arena *a)
{
    *out = NULL;
    Diag diag = {0};
    HostEnv env = driver_host_env(NULL);
    Module *m = parse_module(file, &env, a, &diag);
    diag_free(&diag); /* syntax errors: the compile reports them */
    const FuncDef **entries = NULL;
    int n = m ? sema_entry_kernels(m, &entries, a) : 0;
    if (n <= 0)
        return 0;
    DriverKernelInfo *k = arena_alloc(a, sizeof *k * (size_t)n);
    for (int i = 0; i < n; i++) {
        k[i].name = entries[i]->name;
        k[i].nparams = entries[i]->nparams;
        k[i].params = arena_alloc(a, sizeof *k[i].params * (size_t)(entries[i]->nparams + 1));
        for (int p = 0; p < entries[i]->nparams; p++)
            k[i].params[p] = entries[i]->params[p].name;
    }
    *out = k;
    return n;
}

bool driver_file_tune_configs(const SrcFile *file, const SpecOptions *spec, Autotune *out,
                              bool *parsed, Arena *a, Diag *d)
{
    memset(out, 0, sizeof *out);
    HostEnv env = driver_host_env(spec ? &spec->host_env : NULL);
    Module *m = parse_module(file, &env, a, d);
    *parsed = m != NULL;
    if (!m) {
        /* The syntax errors are the compile's to report. */
        diag_free(d);
        return true;
    }
    return driver_tune_configs(m, spec, out, a, d);
}

void driver_config_text(StrBuf *sb, const TuneConfig *c) { autotune_config_text(sb, c); }

int driver_config_forms(bool stream_k_twins, bool deep_pipeline_twins,
                        ConfigForm forms[DRIVER_MAX_FORMS])
{
    int n = 0;
    forms[n++] = FORM_AS_WRITTEN;
    if (stream_k_twins)
        forms[n++] = FORM_STREAM_K;
    if (deep_pipeline_twins)
        forms[n++] = FORM_DEEP_PIPELINE;
    if (stream_k_twins && deep_pipeline_twins)
        forms[n++] = FORM_STREAM_K_DEEP;
    return n;
}

const char *driver_form_suffix(ConfigForm form)
{
    switch (form) {
    case FORM_STREAM_K: return ", stream_k";
    case FORM_DEEP_PIPELINE: return ", deep_pipeline";
    case FORM_STREAM_K_DEEP: return ", stream_k, deep_pipeline";
    default: return "";
    }
}

int driver_form_base(const ConfigForm *forms, int n, int i)
{
    /* stream_k is forms[1] whenever a stream_k form exists */
    return (forms[i / n] == FORM_STREAM_K_DEEP ? n : 0) + i % n;
}

/* ---- heuristics evaluated at launch ------------------------------------------------------------ */

struct DriverHeuristics {
    Arena *arena; /* the parsed source, and the tables below (arena_alloc zeroes them) */
    const FuncDef *f;
    Heuristics hs;
    int *runtime_index; /* per parameter of f: its index among the run-time parameters, or -1 */
    bool *given;        /* per parameter of f: a heuristic's target the constexprs give */
};

/* Does e read args["P"] for a run-time parameter P (h->runtime_index filled)? */
static bool reads_runtime(const Expr *e, const DriverHeuristics *h, int depth)
{
    if (!e || depth > 200)
        return false;
    const FuncDef *f = h->f;
    switch (e->kind) {
    case EX_SUBSCRIPT:
        if (e->sub.nidx == 1 && e->sub.idx[0]->kind == EX_STR)
            for (int i = 0; i < f->nparams; i++)
                if (!strcmp(f->params[i].name, e->sub.idx[0]->str) && h->runtime_index[i] >= 0)
                    return true;
        return reads_runtime(e->sub.obj, h, depth + 1);
    case EX_BINARY:
        return reads_runtime(e->bin.lhs, h, depth + 1) || reads_runtime(e->bin.rhs, h, depth + 1);
    case EX_UNARY: return reads_runtime(e->un.operand, h, depth + 1);
    case EX_TERNARY:
        return reads_runtime(e->ternary.cond, h, depth + 1) ||
               reads_runtime(e->ternary.then, h, depth + 1) ||
               reads_runtime(e->ternary.els, h, depth + 1);
    case EX_CALL:
        for (int i = 0; i < e->call.nargs; i++)
            if (reads_runtime(e->call.args[i], h, depth + 1))
                return true;
        return false;
    case EX_ATTR: return reads_runtime(e->attr.obj, h, depth + 1);
    default: return false;
    }
}

/* Whether constexprs ("NAME=VALUE") give name a value. */
static bool gives(const char *const *constexprs, int n, const char *name)
{
    size_t len = strlen(name);
    for (int d = 0; constexprs && d < n; d++)
        if (constexprs[d] && !strncmp(constexprs[d], name, len) && constexprs[d][len] == '=')
            return true;
    return false;
}

void driver_heuristics_free(DriverHeuristics *h)
{
    if (!h)
        return;
    arena_free(h->arena);
    free(h);
}

DriverHeuristics *driver_heuristics_read(const SrcFile *file, const char *kernel,
                                         const char *const *constexprs, int nconstexprs,
                                         int max_params)
{
    DriverHeuristics *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->arena = arena_new();
    Diag quiet = {0};
    HostEnv env = driver_host_env(NULL);
    Module *m = parse_module(file, &env, h->arena, &quiet);
    h->f = m ? sema_find_kernel(m, kernel, h->arena, &quiet) : NULL;
    bool runtime = false;
    if (h->f && h->f->nparams <= max_params && heuristics_read(m, h->f, &h->hs, h->arena, &quiet)) {
        int n = h->f->nparams;
        h->runtime_index = arena_alloc(h->arena, sizeof *h->runtime_index * (size_t)(n + 1));
        h->given = arena_alloc(h->arena, sizeof *h->given * (size_t)(n + 1));
        /* the run-time parameters are those sema does not make constexprs (whatever name the
         * annotation uses: `C` of `from triton.language import constexpr as C` too), in the
         * order the launch passes them */
        bool *is_constexpr = arena_alloc(h->arena, sizeof *is_constexpr * (size_t)(n + 1));
        sema_constexpr_params(m, h->f, is_constexpr, h->arena);
        for (int i = 0, ri = 0; i < n; i++)
            h->runtime_index[i] = is_constexpr[i] ? -1 : ri++;
        for (int i = 0; i < h->hs.n; i++) {
            const Heuristic *hh = &h->hs.items[i];
            if (gives(constexprs, nconstexprs, hh->name))
                h->given[hh->param] = true;
            if (!h->given[hh->param] && reads_runtime(hh->fn->lambda.body, h, 0))
                runtime = true;
        }
    }
    diag_free(&quiet);
    if (!runtime) { /* compiled as usual (errors, if any, come from the compile) */
        driver_heuristics_free(h);
        return NULL;
    }
    return h;
}

const char *driver_heuristics_kernel(const DriverHeuristics *h) { return h->f->name; }

/* What args["name"] is at one evaluation. */
typedef struct HeurLaunch {
    const DriverHeuristics *h;
    const char *const *constexprs;
    int nconstexprs;
    DriverArgFn arg;
    void *arg_ctx;
    ConstVal *results; /* per parameter: a heuristic's result so far */
    bool *have;
    Arena *a;
} HeurLaunch;

static bool literal_default(const Expr *e, ConstVal *out)
{
    if (!e)
        return false;
    switch (e->kind) {
    case EX_INT: *out = (ConstVal){.kind = CV_INT, .i = e->ival}; return true;
    case EX_FLOAT: *out = (ConstVal){.kind = CV_FLOAT, .f = e->fval}; return true;
    case EX_BOOL: *out = (ConstVal){.kind = CV_BOOL, .b = e->bval}; return true;
    case EX_NONE: *out = (ConstVal){.kind = CV_NONE}; return true;
    case EX_UNARY:
        if (e->un.op == UN_NEG && e->un.operand->kind == EX_INT) {
            *out = (ConstVal){.kind = CV_INT, .i = -e->un.operand->ival};
            return true;
        }
        return false;
    default: return false;
    }
}

/* In order: an earlier heuristic's result, the constexprs (the last value given wins), a
 * constexpr's literal default, the run-time argument the caller hands over. */
static bool launch_lookup(void *ctx, const char *name, ConstVal *out, const char **why)
{
    HeurLaunch *l = ctx;
    const FuncDef *f = l->h->f;
    int p = -1;
    for (int i = 0; i < f->nparams; i++)
        if (!strcmp(f->params[i].name, name))
            p = i;
    if (p < 0) {
        *why = arena_printf(l->a, "but '%s' is not a parameter of %s", name, f->name);
        return false;
    }
    if (l->have[p]) {
        *out = l->results[p];
        return true;
    }
    size_t n = strlen(name);
    for (int i = l->nconstexprs - 1; i >= 0; i--) {
        const char *d = l->constexprs[i];
        if (d && !strncmp(d, name, n) && d[n] == '=' && const_from_string(d + n + 1, out, l->a))
            return true;
    }
    int ri = l->h->runtime_index[p];
    if (ri < 0) {
        if (literal_default(f->params[p].default_value, out))
            return true;
        *why = arena_printf(l->a, "which has no value: pass it in constexprs (\"%s=...\")", name);
        return false;
    }
    DriverValue v;
    if (!l->arg(l->arg_ctx, ri, &v, why))
        return false;
    switch (v.kind) {
    case DRIVER_VALUE_INT: *out = (ConstVal){.kind = CV_INT, .i = v.i}; break;
    case DRIVER_VALUE_FLOAT: *out = (ConstVal){.kind = CV_FLOAT, .f = v.f}; break;
    case DRIVER_VALUE_BOOL: *out = (ConstVal){.kind = CV_BOOL, .b = v.b}; break;
    }
    return true;
}

bool driver_heuristics_eval(const DriverHeuristics *h, const char *const *constexprs,
                            int nconstexprs, DriverArgFn arg, void *arg_ctx, StrBuf *key,
                            StrBuf *error)
{
    Arena *a = arena_new();
    ConstVal *results = arena_alloc(a, sizeof *results * (size_t)(h->f->nparams + 1));
    bool *have = arena_alloc(a, sizeof *have * (size_t)(h->f->nparams + 1));
    HeurLaunch l = {.h = h,
                    .constexprs = constexprs,
                    .nconstexprs = constexprs ? nconstexprs : 0,
                    .arg = arg,
                    .arg_ctx = arg_ctx,
                    .results = results,
                    .have = have,
                    .a = a};
    Diag diag = {0};
    bool ok = true;
    for (int i = 0; ok && i < h->hs.n; i++) {
        const Heuristic *hh = &h->hs.items[i];
        if (h->given[hh->param])
            continue;
        ok = heuristic_eval(hh, launch_lookup, &l, &results[hh->param], &diag);
        if (!ok)
            break;
        have[hh->param] = true;
        strbuf_printf(key, "%s%s=", key->len ? " " : "", hh->name);
        const_print(key, &results[hh->param]);
    }
    if (!ok)
        strbuf_append(error, diag.text.data ? diag.text.data : "heuristics: evaluation failed");
    diag_free(&diag);
    arena_free(a);
    return ok;
}
