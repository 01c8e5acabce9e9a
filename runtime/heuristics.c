/* heuristics.c: @triton.heuristics whose lambdas read run-time arguments, evaluated at launch.
 *
 * When it runs: twice in a module's life.
 *   - At compile (tric_module_compile, through api.c's compile_one, before the kernel compiles):
 *     rt_heuristics_prepare asks the driver (driver_heuristics_read, driver/entry.c) whether the
 *     kernel has heuristics that read a run-time parameter (args["K"] with K an i32) and that the
 *     options give no value; if not, nothing here runs again for the module. If so, the kernel
 *     cannot be specialized at compile: the driver keeps the parsed decorator, and the module's
 *     own kernel -- its parameters, what tric_module_get_kernel returns -- is compiled with
 *     run-time arguments read as 1 (16, 1024 where the lambdas fail on 1); launches never run it.
 *   - At every launch (rt_launch_checked, once the arguments are checked, before launch
 *     specialization): rt_heuristics_kernel has the driver evaluate the lambdas
 *     (driver_heuristics_eval) on the argument values handed over here as plain numbers, the
 *     compile options' constexprs and the parameters' literal defaults, as Triton runs them at
 *     every launch. The results, as "NAME=VALUE" constexprs, select a variant compiled from the
 *     source with them on first use (a value given for a heuristic's parameter wins over its
 *     lambda, so the variant's own compile does not evaluate it again); variants are cached by
 *     those values.
 * No AST here: the runtime calls no front-end function (tests/layering.sh). docs/runtime.md
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
    Arena *arena;                 /* the options' copy, and the probe's */
    DriverHeuristics *parsed;     /* the decorator, kept by the driver */
    tric_compile_options options; /* as given at compile, deep-copied into arena */
    pthread_mutex_t lock;
    RtHeurVariant variants[RT_MAX_HEUR_VARIANTS];
    int nvariants;
};

/* The run-time arguments of one evaluation, for the driver's lookups. */
typedef struct LaunchArgs {
    const struct tric_kernel_s *k; /* NULL: the probe, run-time arguments read as probe_value */
    int64_t probe_value;
    const tric_arg *args;
} LaunchArgs;

/* Run-time argument ri as a heuristic reads it. */
static bool launch_arg(void *ctx, int ri, DriverValue *out, const char **why) {
    const LaunchArgs *l = ctx;
    if (!l->k) { /* the probe */
        *out = (DriverValue){.kind = DRIVER_VALUE_INT, .i = l->probe_value};
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
    case TRIC_ARG_F32: *out = (DriverValue){.kind = DRIVER_VALUE_FLOAT, .f = a->v.f32}; return true;
    case TRIC_ARG_F64: *out = (DriverValue){.kind = DRIVER_VALUE_FLOAT, .f = a->v.f64}; return true;
    case TRIC_ARG_I32:
    case TRIC_ARG_I64: {
        uint64_t bits = rt_arg_bits(a);
        int64_t i;
        switch (t.dtype) {
        case DT_I1:
            *out = (DriverValue){.kind = DRIVER_VALUE_BOOL, .b = (bits & 1) != 0};
            return true;
        case DT_I8: i = (int8_t)bits; break;
        case DT_I16: i = (int16_t)bits; break;
        case DT_I32: i = (int32_t)bits; break;
        case DT_U8: i = (uint8_t)bits; break;
        case DT_U16: i = (uint16_t)bits; break;
        case DT_U32: i = (uint32_t)bits; break;
        default: i = (int64_t)bits; break;
        }
        *out = (DriverValue){.kind = DRIVER_VALUE_INT, .i = i};
        return true;
    }
    default: *why = "an argument of a kind tric's heuristics do not read"; return false;
    }
}

/* The heuristics' values for one launch (k NULL: the probe) as "A=1 B=True"; NULL with the
 * message in *error. */
static char *evaluate(const struct RtHeuristics *h, const struct tric_kernel_s *k,
                      const tric_arg *args, const tric_compile_options *opt, int64_t probe_value,
                      char **error) {
    LaunchArgs l = {.k = k, .probe_value = probe_value, .args = args};
    StrBuf key = {0}, why = {0};
    char *r = NULL;
    if (driver_heuristics_eval(h->parsed, opt ? opt->constexprs : NULL, opt ? opt->nconstexprs : 0,
                               launch_arg, &l, &key, &why))
        r = strdup(key.data ? key.data : "");
    else
        *error = strdup(why.data ? why.data : "heuristics: evaluation failed");
    strbuf_free(&key);
    strbuf_free(&why);
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
    driver_heuristics_free(h->parsed);
    arena_free(h->arena);
    free(h);
}

tric_status rt_heuristics_prepare(struct tric_module_s *mod, const tric_compile_options *opt,
                                  tric_compile_options *probe) {
    size_t nlen = strlen(mod->source.name);
    if (nlen > 4 && !strcmp(mod->source.name + nlen - 4, ".tir"))
        return TRIC_SUCCESS;
    DriverHeuristics *parsed =
        driver_heuristics_read(&mod->source, opt ? opt->kernel : NULL, opt ? opt->constexprs : NULL,
                               opt ? opt->nconstexprs : 0, RT_MAX_PARAMS);
    if (!parsed) /* compiled as usual (errors, if any, come from the compile) */
        return TRIC_SUCCESS;
    struct RtHeuristics *h = calloc(1, sizeof *h);
    if (!h) {
        driver_heuristics_free(parsed);
        return rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    h->arena = arena_new();
    h->parsed = parsed;
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
                                 driver_heuristics_kernel(h->parsed), error);
        free(error);
        driver_heuristics_free(h->parsed);
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
    tric_status st = mod->device->ops->compile(mod->device, &vm->source, &vopt, vm);
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
