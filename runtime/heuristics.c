/* heuristics.c: @triton.heuristics whose lambdas read run-time arguments, evaluated at launch.
 *
 * Triton runs the lambdas at every launch on the launch's arguments. A kernel compiled from source
 * whose heuristics read a run-time parameter (args["K"] with K an i32) cannot be specialized when
 * it is compiled, so the runtime keeps the parsed decorator and, at each launch, evaluates the
 * lambdas (frontend/heuristics.c) on the argument values, the compile options' constexprs and the
 * parameters' literal defaults; the results, as "NAME=VALUE" constexprs, select a variant
 * compiled from the source with them (a value given for a heuristic's parameter wins over its
 * lambda, so the variant's own compile does not evaluate it again). Variants are cached by those
 * values. The module's own kernel -- its parameters, what tric_module_get_kernel returns -- is
 * compiled with run-time arguments read as 1 (16, 1024 where the lambdas fail on 1); launches
 * never run it. docs/runtime.md
 * "Heuristics". */
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

#define RT_MAX_HEUR_VARIANTS 64

typedef struct RtHeurVariant {
    char *key; /* "EVEN_K=True BLOCK_N=128" */
    struct tric_module_s *module;
    char *error;
} RtHeurVariant;

struct RtHeuristics {
    Arena *arena;
    Module *m;
    const FuncDef *f;
    Heuristics hs;
    int runtime_index[RT_MAX_PARAMS]; /* per FuncDef parameter: its launch argument, or -1 */
    bool given[RT_MAX_PARAMS];        /* a heuristic target the options give a value */
    tric_compile_options options;     /* as given at compile, deep-copied into arena */
    pthread_mutex_t lock;
    RtHeurVariant variants[RT_MAX_HEUR_VARIANTS];
    int nvariants;
};

static bool is_constexpr_annotation(const Expr *a) {
    if (!a)
        return false;
    if (a->kind == EX_NAME)
        return !strcmp(a->str, "constexpr");
    return a->kind == EX_ATTR && !strcmp(a->attr.name, "constexpr");
}

/* Does e read args["P"] for a run-time parameter P? */
static bool reads_runtime(const Expr *e, const FuncDef *f, int depth) {
    if (!e || depth > 200)
        return false;
    switch (e->kind) {
    case EX_SUBSCRIPT:
        if (e->sub.nidx == 1 && e->sub.idx[0]->kind == EX_STR)
            for (int i = 0; i < f->nparams; i++)
                if (!strcmp(f->params[i].name, e->sub.idx[0]->str) &&
                    !is_constexpr_annotation(f->params[i].annotation))
                    return true;
        return reads_runtime(e->sub.obj, f, depth + 1);
    case EX_BINARY:
        return reads_runtime(e->bin.lhs, f, depth + 1) || reads_runtime(e->bin.rhs, f, depth + 1);
    case EX_UNARY: return reads_runtime(e->un.operand, f, depth + 1);
    case EX_TERNARY:
        return reads_runtime(e->ternary.cond, f, depth + 1) ||
               reads_runtime(e->ternary.then, f, depth + 1) ||
               reads_runtime(e->ternary.els, f, depth + 1);
    case EX_CALL:
        for (int i = 0; i < e->call.nargs; i++)
            if (reads_runtime(e->call.args[i], f, depth + 1))
                return true;
        return false;
    case EX_ATTR: return reads_runtime(e->attr.obj, f, depth + 1);
    default: return false;
    }
}

/* What args["name"] is at one launch. */
typedef struct LaunchLookup {
    const struct RtHeuristics *h;
    const struct tric_kernel_s *k; /* NULL: the probe, run-time arguments read as probe_value */
    int64_t probe_value;
    const tric_arg *args;
    const tric_compile_options *opt;
    ConstVal *results; /* per parameter: a heuristic's result so far */
    bool *have;
    Arena *a;
} LaunchLookup;

static bool literal_default(const Expr *e, ConstVal *out) {
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

static bool launch_arg(void *ctx, const char *name, ConstVal *out, const char **why) {
    LaunchLookup *l = ctx;
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
    for (int i = l->opt ? l->opt->nconstexprs - 1 : -1; i >= 0; i--) {
        const char *d = l->opt->constexprs[i];
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
    if (!l->k) { /* the probe */
        *out = (ConstVal){.kind = CV_INT, .i = l->probe_value};
        return true;
    }
    if (ri >= l->k->nparams) {
        *why = "which the launch does not pass";
        return false;
    }
    Type t = l->k->param_types[ri];
    const tric_arg *a = &l->args[ri];
    if (t.is_ptr) {
        *why = "a pointer; tric's heuristics read numbers";
        return false;
    }
    /* rt_check_args has matched the argument's kind to the parameter's type. */
    switch (a->kind) {
    case TRIC_ARG_F32: *out = (ConstVal){.kind = CV_FLOAT, .f = a->v.f32}; return true;
    case TRIC_ARG_F64: *out = (ConstVal){.kind = CV_FLOAT, .f = a->v.f64}; return true;
    case TRIC_ARG_I32:
    case TRIC_ARG_I64: {
        uint64_t bits = rt_arg_bits(a);
        switch (t.dtype) {
        case DT_I1: *out = (ConstVal){.kind = CV_BOOL, .b = (bits & 1) != 0}; return true;
        case DT_I8: *out = (ConstVal){.kind = CV_INT, .i = (int8_t)bits}; return true;
        case DT_I16: *out = (ConstVal){.kind = CV_INT, .i = (int16_t)bits}; return true;
        case DT_I32: *out = (ConstVal){.kind = CV_INT, .i = (int32_t)bits}; return true;
        case DT_U8: *out = (ConstVal){.kind = CV_INT, .i = (uint8_t)bits}; return true;
        case DT_U16: *out = (ConstVal){.kind = CV_INT, .i = (uint16_t)bits}; return true;
        case DT_U32: *out = (ConstVal){.kind = CV_INT, .i = (uint32_t)bits}; return true;
        default: *out = (ConstVal){.kind = CV_INT, .i = (int64_t)bits}; return true;
        }
    }
    default: *why = "an argument of a kind tric's heuristics do not read"; return false;
    }
}

/* The heuristics' values for one launch (k NULL: the probe) as "A=1 B=True"; NULL with the
 * message in *error. */
static char *evaluate(const struct RtHeuristics *h, const struct tric_kernel_s *k,
                      const tric_arg *args, const tric_compile_options *opt, int64_t probe_value,
                      char **error) {
    Arena *a = arena_new();
    ConstVal results[RT_MAX_PARAMS];
    bool have[RT_MAX_PARAMS] = {0};
    LaunchLookup l = {.h = h,
                      .k = k,
                      .probe_value = probe_value,
                      .args = args,
                      .opt = opt,
                      .results = results,
                      .have = have,
                      .a = a};
    Diag diag = {0};
    StrBuf key = {0};
    bool ok = true;
    for (int i = 0; ok && i < h->hs.n; i++) {
        const Heuristic *hh = &h->hs.items[i];
        if (h->given[hh->param])
            continue;
        ok = heuristic_eval(hh, launch_arg, &l, &results[hh->param], &diag);
        if (!ok)
            break;
        have[hh->param] = true;
        strbuf_printf(&key, "%s%s=", key.len ? " " : "", hh->name);
        const_print(&key, &results[hh->param]);
    }
    char *r = NULL;
    if (ok)
        r = strdup(key.data ? key.data : "");
    else
        *error = strdup(diag.text.data ? diag.text.data : "heuristics: evaluation failed");
    strbuf_free(&key);
    diag_free(&diag);
    arena_free(a);
    return r;
}

/* opt's constexprs followed by the key's "A=1 B=True" entries, in arena a. */
static tric_compile_options with_values(const tric_compile_options *opt, const char *key,
                                        Arena *a) {
    tric_compile_options o = opt ? *opt : tric_compile_options_default();
    int n = o.nconstexprs, extra = 0;
    for (const char *p = key; *p; p++)
        extra += *p == ' ';
    extra += *key != 0;
    const char **defs = arena_alloc(a, sizeof *defs * (size_t)(n + extra + 1));
    for (int i = 0; i < n; i++)
        defs[i] = o.constexprs[i];
    for (const char *p = key; *p;) {
        size_t len = strcspn(p, " ");
        defs[n++] = arena_strndup(a, p, len);
        p += len;
        p += *p == ' ';
    }
    o.constexprs = defs;
    o.nconstexprs = n;
    return o;
}

void rt_heuristics_free(struct RtHeuristics *h) {
    if (!h)
        return;
    for (int i = 0; i < h->nvariants; i++) {
        if (h->variants[i].module)
            rt_module_free(h->variants[i].module);
        free(h->variants[i].key);
        free(h->variants[i].error);
    }
    pthread_mutex_destroy(&h->lock);
    arena_free(h->arena);
    free(h);
}

tric_status rt_heuristics_prepare(struct tric_module_s *mod, const tric_compile_options *opt,
                                  tric_compile_options *probe) {
    size_t nlen = strlen(mod->source.name);
    if (nlen > 4 && !strcmp(mod->source.name + nlen - 4, ".tir"))
        return TRIC_SUCCESS;
    struct RtHeuristics *h = calloc(1, sizeof *h);
    if (!h)
        return rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
    h->arena = arena_new();
    Diag quiet = {0};
    h->m = parse_module(&mod->source, h->arena, &quiet);
    h->f = h->m ? sema_find_kernel(h->m, opt ? opt->kernel : NULL, h->arena, &quiet) : NULL;
    bool runtime = false;
    if (h->f && h->f->nparams <= RT_MAX_PARAMS &&
        heuristics_read(h->m, h->f, &h->hs, h->arena, &quiet)) {
        for (int i = 0, ri = 0; i < h->f->nparams; i++)
            h->runtime_index[i] = is_constexpr_annotation(h->f->params[i].annotation) ? -1 : ri++;
        for (int i = 0; i < h->hs.n; i++) {
            const char *name = h->hs.items[i].name;
            size_t n = strlen(name);
            for (int d = 0; opt && d < opt->nconstexprs; d++)
                if (opt->constexprs[d] && !strncmp(opt->constexprs[d], name, n) &&
                    opt->constexprs[d][n] == '=')
                    h->given[h->hs.items[i].param] = true;
            if (!h->given[h->hs.items[i].param] &&
                reads_runtime(h->hs.items[i].fn->lambda.body, h->f, 0))
                runtime = true;
        }
    }
    diag_free(&quiet);
    if (!runtime) { /* compiled as usual (errors, if any, come from the compile) */
        arena_free(h->arena);
        free(h);
        return TRIC_SUCCESS;
    }
    /* Run-time arguments read as 1, else 16, else 1024: the first that the lambdas evaluate on
     * (64 // (n - 1) divides by zero at 1). */
    char *error = NULL, *key = NULL;
    static const int64_t probes[] = {1, 16, 1024};
    for (int i = 0; !key && i < 3; i++) {
        if (error)
            free(error);
        error = NULL;
        key = evaluate(h, NULL, NULL, opt, probes[i], &error);
    }
    if (!key) {
        tric_status st = rt_fail(TRIC_ERROR_COMPILE,
                                 "%s (the module's own kernel is compiled "
                                 "with run-time arguments read as 1, 16 or 1024)\n%s",
                                 h->f->name, error);
        free(error);
        arena_free(h->arena);
        free(h);
        return st;
    }
    *probe = with_values(opt, key, h->arena);
    free(key);
    /* The options, for the variants' compiles: the caller's may not outlive this call. */
    tric_compile_options *copy = &h->options;
    *copy = opt ? *opt : tric_compile_options_default();
    copy->kernel = copy->kernel ? arena_strdup(h->arena, copy->kernel) : NULL;
    copy->signature = copy->signature ? arena_strdup(h->arena, copy->signature) : NULL;
    copy->arch = copy->arch ? arena_strdup(h->arena, copy->arch) : NULL;
    if (copy->nconstexprs > 0) {
        const char **defs = arena_alloc(h->arena, sizeof *defs * (size_t)copy->nconstexprs);
        for (int i = 0; i < copy->nconstexprs; i++)
            defs[i] = arena_strdup(h->arena, opt->constexprs[i] ? opt->constexprs[i] : "");
        copy->constexprs = defs;
    }
    pthread_mutex_init(&h->lock, NULL);
    mod->heuristics = h;
    return TRIC_SUCCESS;
}

/* The published variant for key, or NULL. Lock-free: a variant is filled in before nvariants
 * counts it (release, in variant_for), so what a reader sees under the count is complete. */
static RtHeurVariant *published_variant(struct RtHeuristics *h, const char *key) {
    int n = __atomic_load_n(&h->nvariants, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (!strcmp(h->variants[i].key, key))
            return &h->variants[i];
    return NULL;
}

/* The variant for key, compiled on first use (h->lock held: one writer at a time); NULL when
 * RT_MAX_HEUR_VARIANTS are made already, or out of host memory. */
static RtHeurVariant *variant_for(struct tric_module_s *mod, const char *key) {
    struct RtHeuristics *h = mod->heuristics;
    RtHeurVariant *found = published_variant(h, key);
    if (found)
        return found;
    if (h->nvariants == RT_MAX_HEUR_VARIANTS)
        return NULL;
    RtHeurVariant *v = &h->variants[h->nvariants];
    memset(v, 0, sizeof *v);
    struct tric_module_s *vm = rt_module_new(mod->device);
    v->key = strdup(key);
    if (!vm || !v->key) { /* nothing published: a later launch tries again */
        free(v->key);
        v->key = NULL;
        if (vm)
            rt_module_free(vm);
        return NULL;
    }
    vm->source = mod->source;
    tric_compile_options vopt = with_values(&h->options, key, h->arena);
    char *saved = strdup(tric_last_error());
    tric_status st = mod->device->kind == TRIC_DEVICE_CUDA
                         ? rt_cuda_compile(mod->device, &vm->source, &vopt, vm)
                         : rt_cpu_compile(mod->device, &vm->source, &vopt, vm);
    if (st == TRIC_SUCCESS)
        st = rt_prepare_specialization(vm, &vopt);
    if (st != TRIC_SUCCESS) {
        v->error = strdup(tric_last_error());
        rt_module_free(vm);
        vm = NULL;
    }
    if (saved) {
        rt_fail(TRIC_SUCCESS, "%s", saved);
        free(saved);
    }
    v->module = vm;
    __atomic_store_n(&h->nvariants, h->nvariants + 1, __ATOMIC_RELEASE);
    return v;
}

tric_status rt_heuristics_kernel(struct tric_kernel_s *k, const tric_arg *args,
                                 struct tric_kernel_s **out) {
    struct tric_module_s *mod = k->module;
    struct RtHeuristics *h = mod->heuristics;
    *out = k;
    if (!h)
        return TRIC_SUCCESS;
    char *error = NULL;
    char *key = evaluate(h, k, args, &h->options, 0, &error);
    if (!key) {
        tric_status st =
            rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "%s: at this launch, %s", k->name, error);
        free(error);
        return st;
    }
    /* After a key's first launch its variant is found without the lock. */
    RtHeurVariant *v = published_variant(h, key);
    if (!v) {
        pthread_mutex_lock(&h->lock);
        v = variant_for(mod, key);
        pthread_mutex_unlock(&h->lock);
    }
    tric_status st = TRIC_SUCCESS;
    if (!v && __atomic_load_n(&h->nvariants, __ATOMIC_ACQUIRE) == RT_MAX_HEUR_VARIANTS)
        st = rt_fail(TRIC_ERROR_COMPILE, "%s: more than %d heuristic variants", k->name,
                     RT_MAX_HEUR_VARIANTS);
    else if (!v)
        st = rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
    else if (!v->module)
        st = rt_fail(TRIC_ERROR_COMPILE, "%s, with heuristics %s: %s", k->name, key, v->error);
    else
        *out = &v->module->kernel;
    free(key);
    return st;
}
