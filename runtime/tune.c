/* tune.c: autotuning, as @triton.autotune does it, in the runtime.
 *
 * A tuned kernel stands for several configs, each a module of its own: compiled from the source
 * with the config's constexprs, warps and stages (tric_module_compile), or one kernel of a PTX that
 * `tric` wrote with a kernel per config (tric_module_load_ptx). A launch reads the key parameters'
 * values; the first launch with new values times every config on the GPU (the device's time: warm-up,
 * then the median of CUDA-event timings), keeps the fastest in a table that later launches read
 * without a lock, and in the disk cache, so a later process skips the timing. Trial launches run
 * on the caller's buffers: the parameters named in restore_value are saved before and restored
 * after, those in reset_to_zero zeroed before every trial. On cpu the first config that compiled
 * runs, untimed. docs/runtime.md "Autotuning". */
#include "runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RT_MAX_TUNE_KEY 16
#define RT_MAX_TUNINGS  1024 /* key values remembered per kernel; past it, launches re-tune */

typedef struct RtTuning {
    int64_t key[RT_MAX_TUNE_KEY];
    uint64_t model; /* the device model tuned on (tric_device_s.model_id): shared by its GPUs */
    int chosen;
} RtTuning;

struct RtTuner {
    int nconfigs;
    struct tric_module_s **configs; /* NULL where a config was left out */
    char **why;                     /* why config i was left out */
    char **texts;                   /* config i's text ("BLOCK_SIZE_M=128, ..., num_stages=3") */
    bool owns_configs;              /* compiled here (a loaded PTX's configs are its members) */
    ConfigForm forms[DRIVER_MAX_FORMS]; /* compiled here: config f n + i is config i in form
                                           forms[f] (driver_config_forms) */
    int nforms;
    int key[RT_MAX_TUNE_KEY], nkey; /* parameter indices */
    int restore[RT_MAX_PARAMS], nrestore;
    int reset[RT_MAX_PARAMS], nreset;
    char *cache_material; /* key material before the key values; NULL: no disk cache */
    pthread_mutex_t lock; /* held to tune and add a tuning; launches only read */
    RtTuning *tunings;    /* RT_MAX_TUNINGS slots, the first ntunings filled */
    int ntunings;         /* published with release, read with acquire */
};

static RtTuner *tuner_new(int nconfigs) {
    RtTuner *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->nconfigs = nconfigs;
    t->nforms = 1;
    t->configs = calloc((size_t)nconfigs, sizeof *t->configs);
    t->why = calloc((size_t)nconfigs, sizeof *t->why);
    t->texts = calloc((size_t)nconfigs, sizeof *t->texts);
    t->tunings = calloc(RT_MAX_TUNINGS, sizeof *t->tunings);
    pthread_mutex_init(&t->lock, NULL);
    if (!t->configs || !t->why || !t->texts || !t->tunings) {
        rt_tuner_free(t);
        return NULL;
    }
    return t;
}

void rt_tuner_free(RtTuner *t) {
    for (int i = 0; i < t->nconfigs; i++) {
        if (t->owns_configs && t->configs && t->configs[i])
            rt_module_free(t->configs[i]);
        if (t->why)
            free(t->why[i]);
        if (t->texts)
            free(t->texts[i]);
    }
    free(t->configs);
    free(t->why);
    free(t->texts);
    free(t->tunings);
    free(t->cache_material);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* ---- which parameters: key, restore_value, reset_to_zero -------------------------------------- */

/* Resolves parameter names against k (whose params have names); pointers_only for the lists of
 * buffers. */
static tric_status resolve_names(const struct tric_kernel_s *k, const char *what,
                                 const char *const *names, int n, bool pointers_only, int *out,
                                 int *nout, int max) {
    *nout = 0;
    for (int i = 0; i < n; i++) {
        int p = rt_kernel_param_index(k, names[i]);
        if (p < 0)
            return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                           "%s: %s names '%s', which is not a run-time parameter (they are: %s)",
                           k->name, what, names[i], k->param_names ? k->param_names : "unknown");
        if (pointers_only && k->param_kind[p] != RT_PARAM_PTR)
            return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "%s: %s names '%s', which is not a pointer",
                           k->name, what, names[i]);
        if (*nout == max)
            return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "%s: %s names more than %d parameters",
                           k->name, what, max);
        out[(*nout)++] = p;
    }
    return TRIC_SUCCESS;
}

/* "M,N,K" -> names, in a's memory. */
static int split_names(const char *list, const char ***out, Arena *a) {
    int n = 0;
    *out = arena_alloc(a, sizeof(char *) * (strlen(list) + 1));
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len)
            (*out)[n++] = arena_strndup(a, p, len);
        p += len;
        p += *p == ',';
    }
    return n;
}

/* The tuned kernel's own face: config `first`'s parameters under the kernel's name. */
static void tuned_kernel_from(struct tric_kernel_s *k, const struct tric_kernel_s *first,
                              const char *name) {
    snprintf(k->name, sizeof k->name, "%s", name);
    k->nparams = first->nparams;
    memcpy(k->param_types, first->param_types, sizeof k->param_types);
    memcpy(k->param_kind, first->param_kind, sizeof k->param_kind);
    memcpy(k->param_type_str, first->param_type_str, sizeof k->param_type_str);
    memcpy(k->param_divisibility, first->param_divisibility, sizeof k->param_divisibility);
    memcpy(k->param_equal_to_1, first->param_equal_to_1, sizeof k->param_equal_to_1);
    k->threads = first->threads;
    k->shared_bytes = first->shared_bytes;
    rt_kernel_set_names(k, first->param_names ? first->param_names : "", "", "");
}

/* The MiB zeroed before each timed trial to flush L2 (TRIC_TUNE_FLUSH_MB; 256 as do_bench's
 * buffer; 0: none). Part of the tuning's cache key: a choice timed with L2 warm is not one timed
 * from memory. */
static double tune_flush_mb(void) {
    const char *v = getenv("TRIC_TUNE_FLUSH_MB");
    double mb = v && *v ? atof(v) : 256;
    return mb > 0 ? mb : 0;
}

/* The disk cache's key material up to the key values: what makes a tuning valid. */
static char *cache_material(const struct tric_device_s *dev, const char *code, size_t len,
                            const char *options, const RtTuner *t, const char *name) {
    StrBuf sb = {0};
    /* The device tuned on is named by its model in key_text, not here: a choice holds on every
     * GPU of the model (several GPUs), and a tuner launches on any of them. */
    strbuf_printf(&sb, "tric-autotune %s\narch %s\nkernel %s\n", TRIC_VERSION, dev->arch, name);
    strbuf_printf(&sb, "code %016llx %zu\n", (unsigned long long)rt_fnv1a(RT_FNV_OFFSET, code, len),
                  len);
    strbuf_printf(&sb, "flush %g MiB\n", tune_flush_mb());
    if (options)
        strbuf_append(&sb, options);
    for (int i = 0; i < t->nconfigs; i++)
        strbuf_printf(&sb, "config %d %s: %s\n", i, t->configs[i] ? "ok" : "left out",
                      t->texts[i] ? t->texts[i] : "");
    strbuf_append(&sb, "key parameters");
    for (int i = 0; i < t->nkey; i++)
        strbuf_printf(&sb, " %d", t->key[i]);
    strbuf_putc(&sb, '\n');
    return strbuf_take(&sb);
}

/* ---- compiling the configs of a .tri kernel --------------------------------------------------- */

/* A config's options: the caller's, with the config's constexprs (replacing a caller's of the
 * same name), warps and stages; allocated in a. */
static tric_compile_options config_options(const tric_compile_options *base, const Define *defs,
                                           int ndefs, int num_warps, int num_stages, Arena *a) {
    tric_compile_options o = base ? *base : tric_compile_options_default();
    const char **list = arena_alloc(a, sizeof(char *) * (size_t)(o.nconstexprs + ndefs + 1));
    int n = 0;
    for (int i = 0; i < o.nconstexprs; i++) {
        const char *eq = strchr(o.constexprs[i], '=');
        size_t len = eq ? (size_t)(eq - o.constexprs[i]) : strlen(o.constexprs[i]);
        bool replaced = false;
        for (int k = 0; k < ndefs; k++)
            replaced |= strlen(defs[k].name) == len && !strncmp(defs[k].name, o.constexprs[i], len);
        if (!replaced)
            list[n++] = o.constexprs[i];
    }
    for (int k = 0; k < ndefs; k++) {
        StrBuf sb = {0};
        strbuf_printf(&sb, "%s=%s", defs[k].name, defs[k].value);
        list[n++] = arena_strdup(a, sb.data);
        strbuf_free(&sb);
    }
    o.constexprs = list;
    o.nconstexprs = n;
    if (num_warps)
        o.num_warps = num_warps;
    if (num_stages)
        o.num_stages = num_stages;
    o.tune_configs = NULL;
    o.ntune_configs = 0;
    return o;
}

/* The configs to tune over: the caller's (tune_configs), else the decorator's as the driver
 * filters them by the -D values given; nconfigs 0 when the kernel is not tuned. */
static tric_status read_configs(struct tric_module_s *mod, const tric_compile_options *opt,
                                Autotune *at, Arena *a) {
    memset(at, 0, sizeof *at);
    CompileOptions copt;
    tric_status st = rt_compile_options(opt, mod, a, &copt);
    if (st != TRIC_SUCCESS)
        return st;
    Diag diag = {0};
    bool parsed;
    if (!driver_file_tune_configs(&mod->source, &copt.spec, at, &parsed, a, &diag)) {
        st = rt_fail(TRIC_ERROR_COMPILE, "%s", diag.text.data ? diag.text.data : "autotune failed");
        diag_free(&diag);
        return st;
    }
    diag_free(&diag);
    if (!parsed) /* the syntax errors are the compile's to report */
        return TRIC_SUCCESS;
    if (!opt || opt->ntune_configs <= 0)
        return TRIC_SUCCESS;
    /* The caller's configs replace the decorator's; its key and lists too, where given. */
    at->configs = arena_alloc(a, sizeof(TuneConfig) * (size_t)opt->ntune_configs);
    at->nconfigs = opt->ntune_configs;
    for (int i = 0; i < opt->ntune_configs; i++) {
        const tric_tune_config *c = &opt->tune_configs[i];
        TuneConfig *tc = &at->configs[i];
        memset(tc, 0, sizeof *tc);
        tc->num_warps = c->num_warps;
        tc->num_stages = c->num_stages;
        tc->defines = arena_alloc(a, sizeof(Define) * (size_t)(c->nconstexprs + 1));
        for (int k = 0; k < c->nconstexprs; k++) {
            const char *text = c->constexprs ? c->constexprs[k] : NULL;
            const char *eq = text ? strchr(text, '=') : NULL;
            if (!eq || eq == text)
                return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                               "tune config %d: constexpr '%s' is not "
                               "of the form NAME=VALUE",
                               i, text ? text : "(null)");
            tc->defines[tc->ndefines++] =
                (Define){arena_strndup(a, text, (size_t)(eq - text)), arena_strdup(a, eq + 1)};
        }
    }
    return TRIC_SUCCESS;
}

/* Compiles config i into its own module (NULL with *why set when it does not compile); the
 * caller's last error is left as it was. */
static struct tric_module_s *compile_config(struct tric_module_s *mod,
                                            const tric_compile_options *copt, const char *text,
                                            char **why) {
    struct tric_module_s *cm = rt_module_new(mod->device);
    if (!cm) {
        *why = strdup("out of host memory");
        return NULL;
    }
    cm->source = mod->source; /* borrowed: the tuned module outlives its configs */
    cm->is_config = true;
    cm->lazy_load = true;
    char *saved = strdup(tric_last_error());
    tric_status st = mod->device->ops->compile(mod->device, &cm->source, copt, cm);
    if (st == TRIC_SUCCESS)
        st = rt_prepare_specialization(cm, copt);
    if (st != TRIC_SUCCESS) {
        *why = strdup(tric_last_error());
        rt_module_free(cm);
        cm = NULL;
    } else {
        rt_kernel_set_names(&cm->kernel, NULL, NULL, text);
    }
    if (saved) {
        rt_fail(TRIC_SUCCESS, "%s", saved);
        free(saved);
    }
    return cm;
}

/* ---- work on every config at once --------------------------------------------------------------
 * Compiling a config (LLVM, then the driver's JIT of the PTX) takes tens to hundreds of
 * milliseconds on one core and touches nothing another config's compile does, so the configs of
 * a kernel compile on as many threads as the machine has cores, as Triton's autotuner does not. */

typedef struct ParallelWork {
    void (*fn)(void *item);
    char *items;
    size_t size;
    int n;
    int next; /* the next item to take, atomically */
} ParallelWork;

static void *parallel_worker(void *arg) {
    ParallelWork *w = arg;
    for (int i; (i = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED)) < w->n;)
        w->fn(w->items + (size_t)i * w->size);
    return NULL;
}

/* fn on each of n items (each size bytes), on up to one thread per core; returns when all ran. */
static void run_parallel(void (*fn)(void *item), void *items, size_t size, int n) {
    ParallelWork w = {fn, items, size, n, 0};
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const char *env = getenv("TRIC_COMPILE_THREADS");
    if (env && atoi(env) > 0)
        cores = atoi(env);
    int nthreads = (int)(cores < 1 ? 1 : cores > 32 ? 32 : cores);
    if (nthreads > n)
        nthreads = n;
    pthread_t threads[32];
    int started = 0;
    for (; started < nthreads - 1; started++)
        if (pthread_create(&threads[started], NULL, parallel_worker, &w) != 0)
            break;
    parallel_worker(&w); /* this thread works too (and alone when no thread could start) */
    for (int i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
}

typedef struct ConfigJob {
    struct tric_module_s *mod;
    RtTuner *t;
    int index;
    tric_compile_options options;
} ConfigJob;

static void compile_job(void *item) {
    ConfigJob *j = item;
    j->t->configs[j->index] =
        compile_config(j->mod, &j->options, j->t->texts[j->index], &j->t->why[j->index]);
}

tric_status rt_tune_compile(struct tric_module_s *mod, const tric_compile_options *opt,
                            bool *tuned) {
    *tuned = false;
    /* Tile IR is one kernel as written. */
    size_t nlen = strlen(mod->source.name);
    if (nlen > 4 && !strcmp(mod->source.name + nlen - 4, ".tir"))
        return TRIC_SUCCESS;
    Arena *a = arena_new();
    Autotune at;
    tric_status st = read_configs(mod, opt, &at, a);
    if (st != TRIC_SUCCESS || at.nconfigs == 0) {
        arena_free(a);
        return st;
    }
    *tuned = true;
    /* TRIC_STREAM_K_AUTO, TRIC_DEEP_PIPELINE_AUTO: config f n + i is config i in form forms[f]
     * (stream_k: persistent, the last round split along K; deep_pipeline: more stages; both),
     * the tuning keeping the fastest at each key */
    ConfigForm forms[DRIVER_MAX_FORMS];
    int n = at.nconfigs,
        total =
            n * driver_config_forms(opt && opt->stream_k == TRIC_STREAM_K_AUTO,
                                    opt && opt->deep_pipeline == TRIC_DEEP_PIPELINE_AUTO, forms);
    RtTuner *t = mod->tuner = tuner_new(total);
    if (!t) {
        arena_free(a);
        return rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    t->owns_configs = true;
    ConfigJob *jobs = arena_alloc(a, sizeof *jobs * (size_t)total);
    for (int i = 0; i < total; i++) {
        const TuneConfig *c = &at.configs[i % n];
        ConfigForm form = forms[i / n];
        StrBuf text = {0};
        driver_config_text(&text, c);
        strbuf_append(&text, driver_form_suffix(form));
        t->texts[i] = strbuf_take(&text);
        if (!t->texts[i])
            t->texts[i] = strdup("");
        jobs[i] = (ConfigJob){
            mod, t, i,
            config_options(opt, c->defines, c->ndefines, c->num_warps, c->num_stages, a)};
        if (opt && opt->stream_k == TRIC_STREAM_K_AUTO)
            jobs[i].options.stream_k = form & FORM_STREAM_K ? TRIC_STREAM_K_ON : TRIC_STREAM_K_OFF;
        if (opt && opt->deep_pipeline == TRIC_DEEP_PIPELINE_AUTO)
            jobs[i].options.deep_pipeline =
                form & FORM_DEEP_PIPELINE ? TRIC_DEEP_PIPELINE_ON : TRIC_DEEP_PIPELINE_OFF;
    }
    run_parallel(compile_job, jobs, sizeof *jobs, total);
    t->nforms = total / n;
    memcpy(t->forms, forms, sizeof forms[0] * (size_t)t->nforms);
    /* a twin a switch left as written would only time the config it was applied to again. A
     * deep twin that launches specialize (seed 2 without a signature's hints) is kept: its
     * kernel as compiled here pipelines nothing (no alignment known), each launch's variant
     * may, and time_configs leaves out a variant that did not deepen. */
    for (int i = n; i < total; i++) {
        ConfigForm form = forms[i / n];
        const struct tric_module_s *cm = t->configs[i];
        const struct tric_kernel_s *k = cm ? &cm->kernel : NULL;
        bool varies = cm && cm->nopen > 0 && !mod->device->ops->interprets_ir;
        bool not_split = (form & FORM_STREAM_K) && k && !k->persistent;
        if (!k ||
            (!not_split && (!(form & FORM_DEEP_PIPELINE) || k->stages_raised_from > 0 || varies)))
            continue;
        rt_module_free(t->configs[i]);
        t->configs[i] = NULL;
        StrBuf why = {0};
        strbuf_printf(&why,
                      "%s left it as written, as config %d (the %s, or the device runs kernels "
                      "as written: cpu)",
                      not_split ? "stream_k" : "deep_pipeline",
                      not_split ? i % n : driver_form_base(forms, n, i),
                      not_split ? "pass does not take the kernel"
                                : "stages cannot grow in shared memory");
        t->why[i] = strbuf_take(&why);
    }
    int first = -1;
    bool same_failure = true;
    for (int i = 0; i < total; i++) {
        if (t->configs[i] && first < 0)
            first = i;
        if (!t->configs[i] && t->why[0] && t->why[i] && strcmp(t->why[0], t->why[i]))
            same_failure = false;
    }
    if (first < 0) {
        /* Every config failed: the same way (an error in the kernel itself) is that error, once;
         * otherwise each config and its reason. */
        if (same_failure)
            st = rt_fail(TRIC_ERROR_COMPILE, "%s", t->why[0] ? t->why[0] : "compile failed");
        else {
            StrBuf sb = {0};
            strbuf_printf(&sb, "autotune: none of the %d configs compiles:", total);
            for (int i = 0; i < total; i++)
                strbuf_printf(&sb, "\n  config %d (%s): %s", i, t->texts[i],
                              t->why[i] ? t->why[i] : "?");
            st = rt_fail(TRIC_ERROR_COMPILE, "%s", sb.data);
            strbuf_free(&sb);
        }
        arena_free(a);
        return st;
    }
    struct tric_kernel_s *k = &mod->kernel;
    tuned_kernel_from(k, &t->configs[first]->kernel, t->configs[first]->kernel.name);
    /* The key and the buffer lists: the caller's where given, else the decorator's. */
    const char *const *key = opt && opt->tune_key ? opt->tune_key : at.key;
    int nkey = opt && opt->tune_key ? opt->ntune_key : at.nkey;
    const char *const *restore = opt && opt->tune_restore ? opt->tune_restore : at.restore_value;
    int nrestore = opt && opt->tune_restore ? opt->ntune_restore : at.nrestore;
    const char *const *reset = opt && opt->tune_reset ? opt->tune_reset : at.reset_to_zero;
    int nreset = opt && opt->tune_reset ? opt->ntune_reset : at.nreset;
    st = resolve_names(k, "key", key, nkey, false, t->key, &t->nkey, RT_MAX_TUNE_KEY);
    if (st == TRIC_SUCCESS)
        st = resolve_names(k, "restore_value", restore, nrestore, true, t->restore, &t->nrestore,
                           RT_MAX_PARAMS);
    if (st == TRIC_SUCCESS)
        st = resolve_names(k, "reset_to_zero", reset, nreset, true, t->reset, &t->nreset,
                           RT_MAX_PARAMS);
    if (st == TRIC_SUCCESS && !(opt && opt->no_cache)) {
        StrBuf options = {0};
        rt_options_key(&options, opt, NULL);
        t->cache_material = cache_material(mod->device, mod->source.text, mod->source.len,
                                           options.data, t, k->name);
        strbuf_free(&options);
    }
    arena_free(a);
    return st;
}

/* ---- a loaded PTX's tuning groups ------------------------------------------------------------- */

static void free_modules(struct tric_module_s **mods, int n) {
    for (int i = 0; i < n; i++)
        rt_module_free(mods[i]);
}

tric_status rt_tune_groups(struct tric_module_s *mod, const KernelMeta *metas, int n) {
    /* Group by name, in the order the groups first appear; the tuned members go first. */
    struct tric_module_s *tuned[8];
    int ntuned = 0;
    for (int i = 0; i < n; i++) {
        if (!metas[i].tune_name[0])
            continue;
        bool seen = false;
        for (int g = 0; g < ntuned; g++)
            seen |= !strcmp(tuned[g]->kernel.name, metas[i].tune_name);
        if (seen)
            continue;
        if (ntuned == 8) {
            free_modules(tuned, ntuned);
            return rt_fail(TRIC_ERROR_UNSUPPORTED, "a PTX module may hold at most 8 tuned kernels");
        }
        int count = 0;
        for (int j = i; j < n; j++)
            count += !strcmp(metas[j].tune_name, metas[i].tune_name);
        struct tric_module_s *tm = rt_module_new(mod->device);
        RtTuner *t = tm ? tuner_new(count) : NULL;
        if (!t) {
            if (tm)
                rt_module_free(tm);
            free_modules(tuned, ntuned);
            return rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
        }
        tm->tuner = t;
        tm->shares_cu_module = true;
        tuned[ntuned++] = tm;
        int c = 0;
        for (int j = i; j < n; j++) {
            if (strcmp(metas[j].tune_name, metas[i].tune_name))
                continue;
            t->configs[c] = mod->members[j];
            t->texts[c] = strdup(metas[j].config);
            c++;
        }
        tuned_kernel_from(&tm->kernel, &mod->members[i]->kernel, metas[i].tune_name);
        Arena *a = arena_new();
        const char **names;
        int k;
        k = split_names(metas[i].tune_key, &names, a);
        tric_status st =
            resolve_names(&tm->kernel, "key", names, k, false, t->key, &t->nkey, RT_MAX_TUNE_KEY);
        k = split_names(metas[i].tune_restore, &names, a);
        if (st == TRIC_SUCCESS)
            st = resolve_names(&tm->kernel, "restore_value", names, k, true, t->restore,
                               &t->nrestore, RT_MAX_PARAMS);
        k = split_names(metas[i].tune_reset, &names, a);
        if (st == TRIC_SUCCESS)
            st = resolve_names(&tm->kernel, "reset_to_zero", names, k, true, t->reset, &t->nreset,
                               RT_MAX_PARAMS);
        arena_free(a);
        if (st != TRIC_SUCCESS) {
            free_modules(tuned, ntuned);
            return st;
        }
        t->cache_material =
            cache_material(mod->device, mod->code, strlen(mod->code), NULL, t, tm->kernel.name);
    }
    /* mod->members has room for 8 more (cuda.c's cuda_load_ptx). */
    memmove(mod->members + ntuned, mod->members, sizeof *mod->members * (size_t)mod->nmembers);
    memcpy(mod->members, tuned, sizeof *tuned * (size_t)ntuned);
    mod->nmembers += ntuned;
    return TRIC_SUCCESS;
}

/* ---- choosing a config ------------------------------------------------------------------------ */

/* The key's values (the first t->nkey entries; the others are never read). */
static void key_of(const RtTuner *t, const struct tric_kernel_s *k, const tric_arg *args,
                   int64_t *key) {
    /* A pointer in the key selects by dtype in Triton, and a tric kernel has one: it adds
     * nothing. */
    for (int i = 0; i < t->nkey; i++)
        key[i] =
            k->param_kind[t->key[i]] == RT_PARAM_PTR ? 0 : (int64_t)rt_arg_bits(&args[t->key[i]]);
}

/* The launch path's lookup: a linear scan comparing nkey values per entry (a kernel sees few
 * distinct keys). */
static int find_tuning(const RtTuner *t, int n, uint64_t model, const int64_t *key) {
    for (int i = 0; i < n; i++) {
        if (t->tunings[i].model != model)
            continue;
        int j = 0;
        while (j < t->nkey && t->tunings[i].key[j] == key[j])
            j++;
        if (j == t->nkey)
            return t->tunings[i].chosen;
    }
    return -1;
}

static void key_text(StrBuf *sb, const RtTuner *t, const struct tric_device_s *dev,
                     const int64_t *key) {
    strbuf_printf(sb, "device %s\nkey", dev->model);
    for (int i = 0; i < t->nkey; i++)
        strbuf_printf(sb, " %lld", (long long)key[i]);
    strbuf_putc(sb, '\n');
}

/* The tuning stored on disk for this key, or -1. */
static int disk_lookup(const RtTuner *t, const struct tric_device_s *dev, const int64_t *key) {
    char *dir = t->cache_material ? rt_cache_dir() : NULL;
    if (!dir)
        return -1;
    StrBuf material = {0}, payload = {0}, why = {0};
    strbuf_append(&material, t->cache_material);
    key_text(&material, t, dev, key);
    int chosen = -1;
    if (rt_cache_lookup(dir, material.data, material.len, &payload, &why) && payload.data) {
        int index = -1, off = 0;
        if (sscanf(payload.data, "config %d %n", &index, &off) == 1 && index >= 0 &&
            index < t->nconfigs && t->configs[index] && t->texts[index] &&
            !strncmp(payload.data + off, t->texts[index], strlen(t->texts[index])))
            chosen = index;
    }
    strbuf_free(&material);
    strbuf_free(&payload);
    strbuf_free(&why);
    free(dir);
    return chosen;
}

static void disk_store(const RtTuner *t, const struct tric_device_s *dev, const int64_t *key,
                       int chosen) {
    char *dir = t->cache_material ? rt_cache_dir() : NULL;
    if (!dir)
        return;
    StrBuf material = {0}, payload = {0}, why = {0};
    strbuf_append(&material, t->cache_material);
    key_text(&material, t, dev, key);
    strbuf_printf(&payload, "config %d %s\n", chosen, t->texts[chosen]);
    rt_cache_store(dir, material.data, material.len, payload.data, payload.len, &why);
    strbuf_free(&material);
    strbuf_free(&payload);
    strbuf_free(&why); /* a cache that cannot be written is not an error */
    free(dir);
}

/* One trial launch: the reset_to_zero buffers zeroed, then the config. */
typedef struct Trial {
    const RtTuner *t;
    struct tric_kernel_s *k;
    tric_dim3 grid;
    const tric_arg *args;
    int nargs;
    struct tric_stream_s *stream;
} Trial;

static tric_status zero_buffers(const RtTuner *t, const tric_arg *args, struct tric_stream_s *s) {
    for (int i = 0; i < t->nreset; i++) {
        const tric_arg *a = &args[t->reset[i]];
        tric_status st = tric_memset(a->v.buf.buffer, a->v.buf.offset, 0,
                                     a->v.buf.buffer->bytes - a->v.buf.offset, s);
        if (st != TRIC_SUCCESS)
            return st;
    }
    return TRIC_SUCCESS;
}

static tric_status run_trial(void *ctx) {
    Trial *tr = ctx;
    tric_status st = zero_buffers(tr->t, tr->args, tr->stream);
    return st != TRIC_SUCCESS ? st
                              : rt_launch(tr->k, tr->grid, tr->args, tr->nargs, tr->stream, NULL);
}

static double env_ms(const char *name, double fallback) {
    const char *v = getenv(name);
    double ms = v && *v ? atof(v) : fallback;
    return ms > 0 ? ms : fallback;
}

static tric_dim3 grid_of(struct tric_kernel_s *ck, tric_grid_fn fn, void *user, tric_dim3 grid,
                         const tric_arg *args, int nargs) {
    return fn ? fn(ck, args, nargs, user) : grid;
}

typedef struct VariantJob {
    struct tric_kernel_s *k;
    const tric_arg *args;
} VariantJob;

static void variant_job(void *item) {
    VariantJob *j = item;
    /* A failure here shows again, with its message, at the config's trial launch. */
    struct tric_kernel_s *k = rt_launch_variant(j->k, j->args);
    k->module->device->ops->ensure_loaded(k);
}

#define RT_MAX_CONFIGS_PARALLEL 64

/* The first deep_pipeline twin (TRIC_DEEP_PIPELINE_AUTO): the forms with it come last
 * (driver_config_forms); nconfigs when there are none. */
static int first_deep_twin(const RtTuner *t) {
    for (int f = 0; f < t->nforms; f++)
        if (t->forms[f] & FORM_DEEP_PIPELINE)
            return f * (t->nconfigs / t->nforms);
    return t->nconfigs;
}

/* Config i is a deep twin that this launch does not time. A deep pipeline pays with occupancy,
 * so a twin is timed only where it runs as many programs at once as the config it deepens: where
 * the launch has no more programs than dev has SMs, or where that config's shared memory already
 * held each SM to one program (two would need more than an SM has: a block may take all but the
 * 1 KB each block reserves). There the memory a second program would take is idle. The variant
 * of the config it deepens is compiled first (time_configs). */
static bool deep_twin_idle(const RtTuner *t, int i, const struct tric_device_s *dev,
                           tric_grid_fn fn, void *user, tric_dim3 grid, const tric_arg *args,
                           int nargs) {
    if (i < first_deep_twin(t))
        return false;
    tric_dim3 g = grid_of(&t->configs[i]->kernel, fn, user, grid, args, nargs);
    if ((int64_t)g.x * g.y * g.z <= dev->multiprocessors)
        return false;
    struct tric_module_s *base = t->configs[driver_form_base(t->forms, t->nconfigs / t->nforms, i)];
    if (!base)
        return true;
    int64_t shared = rt_launch_variant(&base->kernel, args)->shared_bytes;
    return 2 * (shared + 1024) <= (int64_t)dev->max_shared_optin + 1024;
}

/* Times every config (t->lock held) and returns the fastest's index, or -1 with the error set. */
static int time_configs(RtTuner *t, struct tric_kernel_s *k, tric_grid_fn fn, void *user,
                        tric_dim3 grid, const tric_arg *args, int nargs,
                        struct tric_stream_s *stream) {
    struct tric_device_s *dev = rt_launch_device(k, stream);
    /* restore_value: a copy of each buffer (from the argument's offset to its end). */
    tric_buffer saved[RT_MAX_PARAMS] = {0};
    tric_status st = TRIC_SUCCESS;
    for (int i = 0; i < t->nrestore && st == TRIC_SUCCESS; i++) {
        const tric_arg *a = &args[t->restore[i]];
        size_t n = a->v.buf.buffer->bytes - a->v.buf.offset;
        st = tric_buffer_alloc(dev, n ? n : 1, &saved[i]);
        if (st == TRIC_SUCCESS && n)
            st = tric_copy_device(saved[i], 0, a->v.buf.buffer, a->v.buf.offset, n, stream);
    }
    /* Each config's variant for these arguments, compiled on every core before any timing: the
     * configs deep twins deepen first, then the deep twins that will be timed. */
    VariantJob jobs[RT_MAX_CONFIGS_PARALLEL];
    int deep = first_deep_twin(t);
    bool *idle_twins = calloc((size_t)t->nconfigs, sizeof *idle_twins);
    if (!idle_twins)
        st = rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int first = 0, end; first < t->nconfigs && st == TRIC_SUCCESS; first = end) {
        end = first + RT_MAX_CONFIGS_PARALLEL; /* a batch never spans the first deep twin */
        if (first < deep && end > deep)
            end = deep;
        if (end > t->nconfigs)
            end = t->nconfigs;
        int n = 0;
        for (int i = first; i < end; i++) {
            if (!t->configs[i])
                continue;
            idle_twins[i] = deep_twin_idle(t, i, dev, fn, user, grid, args, nargs);
            if (!idle_twins[i])
                jobs[n++] = (VariantJob){&t->configs[i]->kernel, args};
        }
        run_parallel(variant_job, jobs, sizeof *jobs, n);
    }
    double warmup = env_ms("TRIC_TUNE_WARMUP_MS", 10), rep = env_ms("TRIC_TUNE_REP_MS", 40);
    /* Each timed run reads its data from memory, not from the L2 the run before left warm: a
     * buffer the size of Triton's do_bench's (tune_flush_mb) is zeroed before it, as do_bench
     * does for Triton's autotuner. With L2 warm the configs whose deeper pipelines hide memory
     * latency (a one-wave launch) looked no faster than the others. A device short of memory
     * tunes without it. */
    double flush_mb = tune_flush_mb();
    tric_buffer flush = NULL;
    if (flush_mb > 0 && st == TRIC_SUCCESS &&
        tric_buffer_alloc(dev, (size_t)(flush_mb * 1048576.0), &flush) != TRIC_SUCCESS)
        flush = NULL;
    int best = -1;
    double best_ms = 0;
    StrBuf reasons = {0};
    /* TRIC_PRINT_AUTOTUNING (Triton's TRITON_PRINT_AUTOTUNING): each config's time, or why it
     * was not timed, and the choice, on stderr */
    const char *print_env = getenv("TRIC_PRINT_AUTOTUNING");
    bool print = print_env && *print_env && strcmp(print_env, "0");
    for (int i = 0; i < t->nconfigs && st == TRIC_SUCCESS; i++) {
        if (!t->configs[i])
            continue;
        /* a deep twin whose variant for these arguments could not deepen is the config it
         * deepens again */
        bool idle = idle_twins[i];
        if (idle || (i >= deep &&
                     rt_launch_variant(&t->configs[i]->kernel, args)->stages_raised_from == 0)) {
            if (print)
                fprintf(stderr, "tric autotune %s: config %d (%s): not timed: %s\n", k->name, i,
                        t->texts[i],
                        idle ? "a deep twin costing occupancy here"
                             : "its variant for these arguments did not deepen");
            continue;
        }
        Trial tr = {t, &t->configs[i]->kernel, {0, 0, 0}, args, nargs, stream};
        tr.grid = grid_of(tr.k, fn, user, grid, args, nargs);
        double ms = 0;
        /* A config over twice the best time so far is timed at most twice (dev->ops->time). */
        tric_status ts = dev->ops->time(dev, stream, run_trial, &tr, warmup, rep,
                                        best < 0 ? 0 : 2 * best_ms, flush, &ms);
        if (print && ts == TRIC_SUCCESS)
            fprintf(stderr, "tric autotune %s: config %d (%s): %.4f ms\n", k->name, i, t->texts[i],
                    ms);
        if (ts == TRIC_SUCCESS && (best < 0 || ms < best_ms)) {
            best = i;
            best_ms = ms;
        } else if (ts != TRIC_SUCCESS) {
            /* A config that cannot launch (too many registers, say) is left out of this tuning;
             * a fault is sticky and ends it. */
            strbuf_printf(&reasons, "\n  config %d (%s): %s", i, t->texts[i], tric_last_error());
            if (ts == TRIC_ERROR_LAUNCH)
                st = ts;
        }
    }
    if (flush)
        tric_buffer_free(flush);
    free(idle_twins);
    for (int i = 0; i < t->nrestore; i++) {
        const tric_arg *a = &args[t->restore[i]];
        size_t n = a->v.buf.buffer->bytes - a->v.buf.offset;
        if (saved[i] && st == TRIC_SUCCESS && n)
            st = tric_copy_device(a->v.buf.buffer, a->v.buf.offset, saved[i], 0, n, stream);
        if (saved[i])
            tric_buffer_free(saved[i]);
    }
    if (print && st == TRIC_SUCCESS && best >= 0)
        fprintf(stderr, "tric autotune %s: chose config %d (%s): %.4f ms\n", k->name, best,
                t->texts[best], best_ms);
    if (st == TRIC_SUCCESS && best < 0)
        rt_fail(TRIC_ERROR_LAUNCH, "%s: autotune: no config could be launched:%s", k->name,
                reasons.data ? reasons.data : "");
    else if (st != TRIC_SUCCESS)
        best = -1;
    strbuf_free(&reasons);
    return best;
}

/* The config for these arguments: from memory, the disk, or a tuning now. -1 with the error set. */
static int choose(struct tric_kernel_s *k, tric_grid_fn fn, void *user, tric_dim3 grid,
                  const tric_arg *args, int nargs, struct tric_stream_s *stream) {
    RtTuner *t = k->module->tuner;
    struct tric_device_s *dev = rt_launch_device(k, stream);
    int64_t key[RT_MAX_TUNE_KEY];
    key_of(t, k, args, key);
    int chosen =
        find_tuning(t, __atomic_load_n(&t->ntunings, __ATOMIC_ACQUIRE), dev->model_id, key);
    if (chosen >= 0)
        return chosen;
    pthread_mutex_lock(&t->lock);
    chosen = find_tuning(t, t->ntunings, dev->model_id, key);
    if (chosen < 0)
        chosen = disk_lookup(t, dev, key);
    bool from_disk = chosen >= 0;
    if (chosen < 0 && !dev->ops->time) {
        /* The interpreter's speed says nothing about the GPU's: the first config that compiled. */
        for (int i = 0; i < t->nconfigs && chosen < 0; i++)
            if (t->configs[i])
                chosen = i;
        from_disk = true; /* nothing to store */
    } else if (chosen < 0) {
        for (int i = 0; i < t->nrestore + t->nreset; i++) {
            int p = i < t->nrestore ? t->restore[i] : t->reset[i - t->nrestore];
            if (args[p].kind != TRIC_ARG_BUFFER) {
                pthread_mutex_unlock(&t->lock);
                rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                        "%s: argument %d is named in %s, so tuning "
                        "must save or zero it: pass a buffer (TRIC_ARG_BUF), not an address",
                        k->name, p, i < t->nrestore ? "restore_value" : "reset_to_zero");
                return -1;
            }
        }
        if (dev->ops->capturing(dev, stream)) {
            pthread_mutex_unlock(&t->lock);
            rt_capture_error("autotuning (timing every config) at the first launch with these "
                             "key values (tune first: tric_kernel_tune)");
            return -1;
        }
        chosen = time_configs(t, k, fn, user, grid, args, nargs, stream);
    }
    if (chosen >= 0 && t->ntunings < RT_MAX_TUNINGS) {
        RtTuning *e = &t->tunings[t->ntunings];
        memcpy(e->key, key, sizeof(int64_t) * (size_t)t->nkey);
        e->model = dev->model_id;
        e->chosen = chosen;
        /* Release: a launch that sees the new count sees the whole entry. */
        __atomic_store_n(&t->ntunings, t->ntunings + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&t->lock);
    if (chosen >= 0 && !from_disk)
        disk_store(t, dev, key, chosen);
    return chosen;
}

/* ---- the API ---------------------------------------------------------------------------------- */

tric_status rt_tuned_launch(struct tric_kernel_s *k, tric_grid_fn fn, void *user, tric_dim3 grid,
                            const tric_arg *args, int nargs, struct tric_stream_s *stream,
                            const tric_launch_options *options) {
    tric_status st = rt_check_args(k, args, nargs);
    if (st != TRIC_SUCCESS)
        return st;
    if ((st = rt_launch_target(k, args, nargs, &stream)) != TRIC_SUCCESS)
        return st;
    /* An empty grid: nothing to run, nothing to tune for (timing empty launches would pick a
     * config at random). With a grid function, the first config's grid decides: a grid is empty
     * when the problem is (M = 0), whatever the block sizes. */
    tric_dim3 g = grid;
    for (int i = 0; fn && i < k->module->tuner->nconfigs; i++)
        if (k->module->tuner->configs[i]) {
            g = grid_of(&k->module->tuner->configs[i]->kernel, fn, user, grid, args, nargs);
            break;
        }
    if (g.x == 0 || g.y == 0 || g.z == 0)
        return TRIC_SUCCESS;
    int chosen = choose(k, fn, user, grid, args, nargs, stream);
    if (chosen < 0)
        return rt_fail(TRIC_ERROR_LAUNCH, "%s", tric_last_error());
    /* Every config has the tuned kernel's parameters: the arguments are checked already. */
    struct tric_kernel_s *ck = &k->module->tuner->configs[chosen]->kernel;
    return rt_launch_checked(ck, grid_of(ck, fn, user, grid, args, nargs), args, stream, options);
}

tric_status tric_launch_grid(tric_kernel k, tric_grid_fn grid, void *user, const tric_arg *args,
                             int nargs, tric_stream stream) {
    if (!k || !grid)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                       "tric_launch_grid: NULL kernel or grid function");
    if (k->module->tuner)
        return rt_tuned_launch(k, grid, user, (tric_dim3){1, 1, 1}, args, nargs, stream, NULL);
    return rt_launch_grid_fn(k, grid, user, args, nargs, stream, NULL);
}

tric_status rt_launch_grid_fn(struct tric_kernel_s *k, tric_grid_fn grid, void *user,
                              const tric_arg *args, int nargs, struct tric_stream_s *stream,
                              const tric_launch_options *options) {
    tric_status st = rt_check_args(k, args, nargs);
    if (st != TRIC_SUCCESS)
        return st;
    /* The grid function reads the constexprs of the kernel that runs: with heuristics evaluated
     * at launch, the variant for these values. */
    if (k->module->heuristics && (st = rt_heuristics_kernel(k, args, &k)) != TRIC_SUCCESS)
        return st;
    return rt_launch(k, grid(k, args, nargs, user), args, nargs, stream, options);
}

tric_status tric_kernel_tune(tric_kernel k, tric_grid_fn grid, void *user, const tric_arg *args,
                             int nargs, tric_stream stream, int *chosen) {
    if (!k || !chosen)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "tric_kernel_tune: NULL kernel or chosen");
    *chosen = 0;
    if (!k->module->tuner)
        return TRIC_SUCCESS;
    tric_status st = rt_check_args(k, args, nargs);
    if (st == TRIC_SUCCESS)
        st = rt_launch_target(k, args, nargs, &stream);
    if (st != TRIC_SUCCESS)
        return st;
    int c = choose(k, grid, user, (tric_dim3){1, 1, 1}, args, nargs, stream);
    if (c < 0)
        return rt_fail(TRIC_ERROR_LAUNCH, "%s", tric_last_error());
    *chosen = c;
    return TRIC_SUCCESS;
}

int tric_kernel_num_configs(tric_kernel k) {
    return k && k->module->tuner ? k->module->tuner->nconfigs : 0;
}

tric_status tric_kernel_config(tric_kernel k, int index, tric_kernel *config) {
    if (!k || !config)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "tric_kernel_config: NULL kernel or config");
    *config = NULL;
    const RtTuner *t = k->module->tuner;
    if (!t || index < 0 || index >= t->nconfigs)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "%s: no config %d (it has %d)", k->name, index,
                       t ? t->nconfigs : 0);
    if (!t->configs[index])
        return rt_fail(TRIC_ERROR_COMPILE, "%s: config %d (%s) was left out: %s", k->name, index,
                       t->texts[index], t->why[index] ? t->why[index] : "?");
    *config = &t->configs[index]->kernel;
    return TRIC_SUCCESS;
}

const char *tric_kernel_config_text(tric_kernel k) {
    return k && k->config_text ? k->config_text : "";
}

tric_status tric_kernel_constexpr(tric_kernel k, const char *name, int64_t *value) {
    if (!k || !name || !value)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "tric_kernel_constexpr: NULL argument");
    size_t n = strlen(name);
    /* "A=1 B=tl.float16": find NAME= at the start of an entry. */
    for (const char *p = k->constexprs; p && *p;) {
        size_t len = strcspn(p, " ");
        if (len > n && !strncmp(p, name, n) && p[n] == '=') {
            char *end;
            long long v = strtoll(p + n + 1, &end, 0);
            if (end == p + len && end != p + n + 1) {
                *value = v;
                return TRIC_SUCCESS;
            }
            if (!strncmp(p + n + 1, "True", 4) || !strncmp(p + n + 1, "False", 5)) {
                *value = p[n + 1] == 'T';
                return TRIC_SUCCESS;
            }
            return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "%s: constexpr %s is %.*s, not an integer",
                           k->name, name, (int)(len - n - 1), p + n + 1);
        }
        p += len;
        p += *p == ' ';
    }
    return rt_fail(TRIC_ERROR_NOT_FOUND, "%s: no constexpr named %s (%s)", k->name, name,
                   k->constexprs ? k->constexprs : "it has none recorded");
}
