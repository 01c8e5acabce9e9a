/* api.c: the public entry points of include/tric/tric.h. They check their arguments, then hand the
 * work to the device's file (cpu.c or cuda.c). Errors: rt_fail sets a thread-local message;
 * warnings (rt_warn) go to the caller's handler, once per process each, and never to stderr. */
#include "runtime/runtime.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors and warnings ---------------------------------------------------------------------- */

/* This thread's last error and last warning. Each pointer is also kept under a pthread key, whose
 * destructor frees it when the thread exits (a _Thread_local pointer alone would leak each exited
 * thread's last message). */
static _Thread_local char *last_error, *last_warning;
static pthread_key_t last_error_key, last_warning_key;
static pthread_once_t message_keys_once = PTHREAD_ONCE_INIT;

static void make_message_keys(void) {
    pthread_key_create(&last_error_key, free);
    pthread_key_create(&last_warning_key, free);
}

/* Makes text (malloc'd) this thread's message in *slot, freeing the one it replaces. */
static void set_thread_message(char **slot, pthread_key_t *key, char *text) {
    free(*slot);
    *slot = text;
    pthread_once(&message_keys_once, make_message_keys);
    pthread_setspecific(*key, text);
}

const char *tric_last_error(void) { return last_error ? last_error : ""; }

tric_status rt_fail(tric_status status, const char *fmt, ...) {
    StrBuf sb = {0};
    va_list ap;
    va_start(ap, fmt);
    strbuf_vprintf(&sb, fmt, ap);
    va_end(ap);
    set_thread_message(&last_error, &last_error_key, strbuf_take(&sb));
    return status;
}

/* Process-wide: the caller's handler, and the hashes of the warnings given so far (each is given
 * once: a refused cache directory would otherwise warn at every compile). */
static pthread_mutex_t warning_lock = PTHREAD_MUTEX_INITIALIZER;
static tric_warning_fn warning_handler;
static void *warning_user;
static uint64_t *warned;
static size_t nwarned, warned_cap;

const char *tric_last_warning(void) { return last_warning ? last_warning : ""; }

void tric_set_warning_handler(tric_warning_fn fn, void *user) {
    pthread_mutex_lock(&warning_lock);
    warning_handler = fn;
    warning_user = user;
    pthread_mutex_unlock(&warning_lock);
}

/* Whether a warning with this hash was given before; remembers it when not (a table that cannot
 * grow forgets, so that warning may come again: better than losing it). warning_lock held. */
static bool warned_before(uint64_t hash) {
    for (size_t i = 0; i < nwarned; i++)
        if (warned[i] == hash)
            return true;
    if (nwarned == warned_cap) {
        size_t cap = warned_cap ? 2 * warned_cap : 16;
        uint64_t *grown = realloc(warned, cap * sizeof *grown);
        if (!grown)
            return false;
        warned = grown;
        warned_cap = cap;
    }
    warned[nwarned++] = hash;
    return false;
}

void rt_warn(const char *fmt, ...) {
    StrBuf sb = {0};
    va_list ap;
    va_start(ap, fmt);
    strbuf_vprintf(&sb, fmt, ap);
    va_end(ap);
    if (!sb.data)
        return;
    pthread_mutex_lock(&warning_lock);
    bool again = warned_before(rt_fnv1a(RT_FNV_OFFSET, sb.data, sb.len));
    tric_warning_fn fn = warning_handler;
    void *user = warning_user;
    pthread_mutex_unlock(&warning_lock);
    if (again) {
        strbuf_free(&sb);
        return;
    }
    char *text = strbuf_take(&sb);
    set_thread_message(&last_warning, &last_warning_key, text);
    if (!fn)
        return;
    /* Outside the lock, and on a copy: a handler may call tric again, even something that warns
     * on this thread and so frees the thread's message. */
    char *copy = strdup(text);
    fn(copy ? copy : text, user);
    free(copy);
}

tric_status rt_capture_error(const char *what) {
    return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                   "%s cannot be done on a stream that is being captured into a CUDA graph (it "
                   "would invalidate the capture): launch each kernel once with the same kind of "
                   "arguments before capturing, and use the _async copies",
                   what);
}

/* ---- live objects ----------------------------------------------------------------------------- */

static void list_init(RtLink *head) { head->prev = head->next = head; }

void rt_link_add(struct tric_device_s *dev, RtLink *list, RtLink *node) {
    pthread_mutex_lock(&dev->objects_lock);
    node->next = list;
    node->prev = list->prev;
    list->prev->next = node;
    list->prev = node;
    pthread_mutex_unlock(&dev->objects_lock);
}

void rt_link_remove(struct tric_device_s *dev, RtLink *node) {
    if (!node->next)
        return; /* never linked (an internal object) */
    pthread_mutex_lock(&dev->objects_lock);
    node->prev->next = node->next;
    node->next->prev = node->prev;
    node->prev = node->next = NULL;
    pthread_mutex_unlock(&dev->objects_lock);
}

/* The first object of a device list, NULL when it is empty. */
static RtLink *list_first(struct tric_device_s *dev, RtLink *head) {
    pthread_mutex_lock(&dev->objects_lock);
    RtLink *first = head->next != head ? head->next : NULL;
    pthread_mutex_unlock(&dev->objects_lock);
    return first;
}

#define RT_CONTAINER(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

tric_status tric_set_error(tric_status status, const char *format, ...) {
    StrBuf sb = {0};
    va_list ap;
    va_start(ap, format);
    strbuf_vprintf(&sb, format ? format : "", ap);
    va_end(ap);
    rt_fail(status, "%s", sb.data ? sb.data : "");
    strbuf_free(&sb);
    return status;
}

const char *tric_status_name(tric_status status) {
    switch (status) {
    case TRIC_SUCCESS: return "TRIC_SUCCESS";
    case TRIC_ERROR_INVALID_ARGUMENT: return "TRIC_ERROR_INVALID_ARGUMENT";
    case TRIC_ERROR_NO_DEVICE: return "TRIC_ERROR_NO_DEVICE";
    case TRIC_ERROR_COMPILE: return "TRIC_ERROR_COMPILE";
    case TRIC_ERROR_NOT_FOUND: return "TRIC_ERROR_NOT_FOUND";
    case TRIC_ERROR_OUT_OF_MEMORY: return "TRIC_ERROR_OUT_OF_MEMORY";
    case TRIC_ERROR_LAUNCH: return "TRIC_ERROR_LAUNCH";
    case TRIC_ERROR_DRIVER: return "TRIC_ERROR_DRIVER";
    case TRIC_ERROR_IO: return "TRIC_ERROR_IO";
    case TRIC_ERROR_UNSUPPORTED: return "TRIC_ERROR_UNSUPPORTED";
    }
    return "TRIC_ERROR_UNKNOWN";
}

/* ---- devices ---------------------------------------------------------------------------------- */

/* "cuda" or "cuda:N" -> N; -1 when spec is not of that form. */
static int cuda_ordinal(const char *spec) {
    if (strcmp(spec, "cuda") == 0)
        return 0;
    if (strncmp(spec, "cuda:", 5) != 0 || !spec[5])
        return -1;
    char *end;
    long n = strtol(spec + 5, &end, 10);
    if (*end || n < 0 || n > 1024)
        return -1;
    return (int)n;
}

tric_status tric_device_open(const char *spec, tric_device *out) {
    if (!out)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "tric_device_open: out is NULL");
    *out = NULL;
    if (!spec || strcmp(spec, "auto") == 0) {
        const char *env = getenv("TRIC_DEVICE");
        if (env && *env && strcmp(env, "auto") != 0)
            spec = env;
        else
            spec = rt_cuda_available() ? "cuda:0" : "cpu";
    }
    int ordinal = cuda_ordinal(spec);
    if (strcmp(spec, "cpu") != 0 && ordinal < 0)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                       "unknown device '%s' (expected cpu, cuda, cuda:N or auto)", spec);
    struct tric_device_s *dev = calloc(1, sizeof *dev);
    if (!dev)
        return rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
    pthread_mutex_init(&dev->lock, NULL);
    pthread_mutex_init(&dev->objects_lock, NULL);
    list_init(&dev->modules);
    list_init(&dev->buffers);
    list_init(&dev->streams);
    tric_status st = ordinal < 0 ? rt_cpu_open(dev) : rt_cuda_open(dev, ordinal);
    if (st != TRIC_SUCCESS) {
        pthread_mutex_destroy(&dev->objects_lock);
        pthread_mutex_destroy(&dev->lock);
        free(dev);
        return st;
    }
    dev->model_id = rt_fnv1a(RT_FNV_OFFSET, dev->model, strlen(dev->model));
    dev->own_stream = (struct tric_stream_s){.device = dev, .cu_stream = dev->cu_stream};
    dev->own_stream.wrapped = true; /* the device's: closed with it, never by a stream destroy */
    *out = dev;
    return TRIC_SUCCESS;
}

void tric_device_close(tric_device dev) {
    if (!dev)
        return;
    /* What the caller left: work in flight finishes first (a fault it reports is dropped, there
     * is no one left to tell), then modules, streams and buffers go, each as its destroy call
     * would do it. */
    dev->ops->synchronize(dev);
    for (RtLink *l; (l = list_first(dev, &dev->modules));)
        tric_module_destroy(RT_CONTAINER(l, struct tric_module_s, link));
    for (RtLink *l; (l = list_first(dev, &dev->streams));)
        tric_stream_destroy(RT_CONTAINER(l, struct tric_stream_s, link));
    for (RtLink *l; (l = list_first(dev, &dev->buffers));)
        tric_buffer_free(RT_CONTAINER(l, struct tric_buffer_s, link));
    dev->ops->close(dev);
    pthread_mutex_destroy(&dev->objects_lock);
    free(dev->live);
    free(dev->live_owner);
    pthread_mutex_destroy(&dev->lock);
    free(dev);
}

tric_device_kind tric_device_get_kind(tric_device dev) { return dev ? dev->kind : TRIC_DEVICE_CPU; }
const char *tric_device_name(tric_device dev) { return dev ? dev->name : "(null device)"; }
const char *tric_device_arch(tric_device dev) { return dev ? dev->arch : ""; }

tric_status tric_device_synchronize(tric_device dev) {
    if (!dev)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "tric_device_synchronize: device is NULL");
    return dev->ops->synchronize(dev);
}

/* NULL on a device without CUDA (never set there). */
void *tric_device_native_context(tric_device dev) { return dev ? dev->cu_context : NULL; }
void *tric_device_native_stream(tric_device dev) { return dev ? dev->cu_stream : NULL; }

/* ---- streams ---------------------------------------------------------------------------------- */

tric_status tric_stream_create(tric_device dev, tric_stream *out) {
    if (!dev || !out)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "tric_stream_create: NULL device or out");
    struct tric_stream_s *s = calloc(1, sizeof *s);
    if (!s)
        return rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
    s->device = dev;
    tric_status st = dev->ops->stream_create(dev, s);
    if (st != TRIC_SUCCESS) {
        free(s);
        return st;
    }
    rt_link_add(dev, &dev->streams, &s->link);
    *out = s;
    return TRIC_SUCCESS;
}

tric_status tric_stream_wrap(tric_device dev, void *cu_stream, tric_stream *out) {
    if (!dev || !out)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "tric_stream_wrap: NULL device or out");
    *out = NULL;
    struct tric_stream_s *s = calloc(1, sizeof *s);
    if (!s)
        return rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
    s->device = dev;
    tric_status st = dev->ops->stream_wrap(dev, cu_stream, s);
    if (st != TRIC_SUCCESS) {
        free(s);
        return st;
    }
    rt_link_add(dev, &dev->streams, &s->link);
    *out = s;
    return TRIC_SUCCESS;
}

void *tric_stream_native(tric_stream s) { return s ? s->cu_stream : NULL; }

void tric_stream_destroy(tric_stream s) {
    if (!s)
        return;
    rt_link_remove(s->device, &s->link);
    s->device->ops->stream_destroy(s);
    free(s);
}

tric_status tric_stream_synchronize(tric_stream s) {
    if (!s)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                       "tric_stream_synchronize: stream is NULL (use tric_device_synchronize)");
    return s->device->ops->stream_synchronize(s);
}

/* ---- modules ---------------------------------------------------------------------------------- */

tric_compile_options tric_compile_options_default(void) {
    tric_compile_options o;
    memset(&o, 0, sizeof o);
    return o;
}

/* The environment's compile switches (TRIC_NO_TMA, TRIC_LLVM_PIPELINE, TRIC_LLVM_ARGS,
 * TRIC_PIPELINE_REMARKS, TRIC_CODEGEN_TIMES: driver_env_switches), read once per process, at the
 * first compile, and kept (the texts copied): every compile of the process, and its cache key, sees
 * the same ones. */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static CompileOptions env_switches;

static void read_env_switches(void) {
    driver_env_switches(&env_switches);
    env_switches.llvm_passes = env_switches.llvm_passes ? strdup(env_switches.llvm_passes) : NULL;
    env_switches.llvm_args = env_switches.llvm_args ? strdup(env_switches.llvm_args) : NULL;
}

/* The switches a compile with opt runs with: opt's, else the environment's. */
static void switches(const tric_compile_options *opt, CompileOptions *out) {
    pthread_once(&env_once, read_env_switches);
    out->no_tma = (opt && opt->no_tma) || env_switches.no_tma;
    out->llvm_passes = opt && opt->llvm_passes ? opt->llvm_passes : env_switches.llvm_passes;
    out->llvm_args = opt && opt->llvm_args ? opt->llvm_args : env_switches.llvm_args;
    out->remarks = env_switches.remarks;
    out->codegen_times = env_switches.codegen_times;
}

/* "NAME=VALUE" entries (constexprs, host_env) split into Defines in arena; false with the error
 * set when one is not of that form. */
static bool split_pairs(const char *const *texts, int n, const char *what, Arena *arena,
                        const Define **out) {
    if (n < 0 || (n > 0 && !texts)) {
        rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "compile options: bad %s list", what);
        return false;
    }
    Define *defs = arena_alloc(arena, sizeof(Define) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        const char *text = texts[i];
        const char *eq = text ? strchr(text, '=') : NULL;
        if (!eq || eq == text) {
            rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "%s '%s' is not of the form NAME=VALUE", what,
                    text ? text : "(null)");
            return false;
        }
        defs[i].name = arena_strndup(arena, text, (size_t)(eq - text));
        defs[i].value = arena_strdup(arena, eq + 1);
    }
    *out = defs;
    return true;
}

/* A switch of three values, PREFIX_OFF 0, PREFIX_ON 1 and PREFIX_AUTO 2 (stream_k, deep_pipeline):
 * false, with the error set, for any other. */
static bool off_on_auto(int value, const char *name, const char *prefix) {
    if (value >= 0 && value <= 2)
        return true;
    rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "compile options: %s %d (%s_OFF 0, %s_ON 1, %s_AUTO 2)",
            name, value, prefix, prefix, prefix);
    return false;
}

tric_status rt_compile_options(const tric_compile_options *opt, const struct tric_module_s *mod,
                               Arena *arena, CompileOptions *out) {
    memset(out, 0, sizeof *out);
    out->opt_level = 3;
    switches(opt, out);
    /* The runtime compiles one kernel per call: configs one by one (runtime/tune.c). */
    out->no_tune = true;
    out->fit_stages = mod && mod->is_config;
    out->spec.from_c_api = true; /* messages speak of opt.constexprs, not -D */
    if (mod && mod->nlaunch_hints > 0) {
        out->spec.launch_hints = mod->launch_hints;
        out->spec.nlaunch_hints = mod->nlaunch_hints;
    }
    if (!opt)
        return TRIC_SUCCESS;
    out->spec.kernel_name = opt->kernel;
    out->spec.signature = opt->signature;
    out->num_warps = opt->num_warps;
    out->num_stages = opt->num_stages;
    out->arch = opt->arch;
    out->no_fp_fusion = opt->no_fp_fusion != 0;
    out->no_heavy_first = opt->no_heavy_first != 0;
    out->no_fuse_loops = opt->no_fuse_loops != 0;
    out->no_auto_ws = opt->no_auto_warp_specialize != 0;
    out->pingpong = opt->pingpong != 0;
    out->tma_store = opt->tma_store != 0;
    out->persistent = opt->persistent != 0;
    out->no_auto_persistent = opt->no_auto_persistent != 0;
    out->overlap_dots = opt->overlap_dots != 0;
    if (!off_on_auto(opt->stream_k, "stream_k", "TRIC_STREAM_K") ||
        !off_on_auto(opt->deep_pipeline, "deep_pipeline", "TRIC_DEEP_PIPELINE"))
        return TRIC_ERROR_INVALID_ARGUMENT;
    /* AUTO: the tuner compiles each config both ways (tune.c); the module itself as written */
    out->stream_k = opt->stream_k == TRIC_STREAM_K_ON;
    out->deep_pipeline = opt->deep_pipeline == TRIC_DEEP_PIPELINE_ON;
    if (opt->nconstexprs < 0 || (opt->nconstexprs > 0 && !opt->constexprs))
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "compile options: bad constexprs list");
    if (!split_pairs(opt->constexprs, opt->nconstexprs, "constexpr", arena, &out->spec.defines))
        return TRIC_ERROR_INVALID_ARGUMENT;
    out->spec.ndefines = opt->nconstexprs;
    const Define *host_env;
    if (!split_pairs(opt->host_env, opt->nhost_env, "host_env", arena, &host_env))
        return TRIC_ERROR_INVALID_ARGUMENT;
    out->spec.host_env = (HostEnv){.vars = host_env, .n = opt->nhost_env};
    if (opt->ninclude_dirs < 0 || (opt->ninclude_dirs > 0 && !opt->include_dirs))
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "compile options: bad include_dirs list");
    out->include_dirs = opt->include_dirs;
    out->ninclude_dirs = opt->ninclude_dirs;
    return TRIC_SUCCESS;
}

void rt_options_key(StrBuf *sb, const tric_compile_options *opt, const struct tric_module_s *mod) {
    tric_compile_options none = tric_compile_options_default();
    if (!opt)
        opt = &none;
        /* Lengths before strings, so that no two option sets give the same text. */
#define KEY_STR(label, s)                                                                          \
    strbuf_printf(sb, "%s %zu:%s\n", label, (s) ? strlen(s) : (size_t)0, (s) ? (s) : "")
    KEY_STR("kernel", opt->kernel);
    KEY_STR("signature", opt->signature);
    strbuf_printf(sb, "constexprs %d\n", opt->nconstexprs);
    for (int i = 0; i < opt->nconstexprs; i++)
        KEY_STR("constexpr", opt->constexprs[i]);
    strbuf_printf(sb, "num_warps %d\nnum_stages %d\n", opt->num_warps, opt->num_stages);
    /* what the source's host Python reads from os.environ: it can change the configs */
    strbuf_printf(sb, "host_env %d\n", opt->nhost_env > 0 ? opt->nhost_env : 0);
    for (int i = 0; opt->host_env && i < opt->nhost_env; i++)
        KEY_STR("host_env", opt->host_env[i]);
    if (opt->no_fp_fusion)
        strbuf_printf(sb, "no_fp_fusion\n");
    if (opt->no_heavy_first)
        strbuf_printf(sb, "no_heavy_first\n");
    if (opt->no_fuse_loops)
        strbuf_printf(sb, "no_fuse_loops\n");
    if (opt->no_auto_warp_specialize)
        strbuf_printf(sb, "no_auto_warp_specialize\n");
    if (opt->pingpong)
        strbuf_printf(sb, "pingpong\n");
    if (opt->tma_store)
        strbuf_printf(sb, "tma_store\n");
    if (opt->persistent)
        strbuf_printf(sb, "persistent\n");
    if (opt->no_auto_persistent)
        strbuf_printf(sb, "no_auto_persistent\n");
    if (opt->overlap_dots)
        strbuf_printf(sb, "overlap_dots\n");
    if (opt->stream_k == TRIC_STREAM_K_ON)
        strbuf_printf(sb, "stream_k\n");
    else if (opt->stream_k)
        strbuf_printf(sb, "stream_k %d\n", opt->stream_k);
    if (opt->deep_pipeline)
        strbuf_printf(sb, "deep_pipeline %d\n", opt->deep_pipeline);
    /* The code switches as the compile will see them (the environment's included): a process
     * with TRIC_NO_TMA=1 must not leave its cp.async kernel where one without finds it. remarks and
     * codegen_times are left out: they change what is printed, not the code. */
    CompileOptions sw = {0};
    switches(opt, &sw);
    if (sw.no_tma)
        strbuf_printf(sb, "no_tma\n");
    if (sw.llvm_passes && *sw.llvm_passes)
        KEY_STR("llvm_passes", sw.llvm_passes);
    if (sw.llvm_args && *sw.llvm_args)
        KEY_STR("llvm_args", sw.llvm_args);
    if (mod && mod->is_config)
        strbuf_printf(sb, "fit_stages\n");
    strbuf_printf(sb, "include_dirs %d\n", opt->ninclude_dirs > 0 ? opt->ninclude_dirs : 0);
    for (int i = 0; opt->include_dirs && i < opt->ninclude_dirs; i++)
        KEY_STR("include_dir", opt->include_dirs[i]);
    /* The files the source imports are part of what the code is compiled from. */
    if (mod && rt_has_compiler) {
        Arena *a = arena_new();
        const Define *vars = NULL;
        HostEnv env = {0};
        if (split_pairs(opt->host_env, opt->nhost_env, "host_env", a, &vars))
            env = (HostEnv){.vars = vars, .n = opt->nhost_env > 0 ? opt->nhost_env : 0};
        driver_import_key(sb, &mod->source, opt->include_dirs,
                          opt->include_dirs ? opt->ninclude_dirs : 0, &env);
        arena_free(a);
    }
    if (mod && mod->nlaunch_hints > 0) {
        strbuf_printf(sb, "launch_hints %d:", mod->nlaunch_hints);
        for (int i = 0; i < mod->nlaunch_hints; i++)
            strbuf_printf(sb, " %d", mod->launch_hints[i]);
        strbuf_printf(sb, "\n");
    }
#undef KEY_STR
}

struct tric_module_s *rt_module_new(struct tric_device_s *dev) {
    struct tric_module_s *mod = calloc(1, sizeof *mod);
    if (mod) {
        mod->device = dev;
        mod->kernel.module = mod;
        pthread_mutex_init(&mod->variants_lock, NULL);
        pthread_mutex_init(&mod->load_lock, NULL);
    }
    return mod;
}

void rt_module_free(struct tric_module_s *mod) {
    for (int i = 0; i < mod->nvariants; i++) {
        if (mod->variants[i].module)
            rt_module_free(mod->variants[i].module);
        free(mod->variants[i].signature);
        free(mod->variants[i].error);
    }
    free(mod->variants);
    rt_heuristics_free(mod->heuristics);
    if (mod->tuner)
        rt_tuner_free(mod->tuner);
    for (int i = 0; i < mod->nmembers; i++)
        rt_module_free(mod->members[i]);
    free(mod->members);
    free(mod->kernel.param_names);
    free(mod->kernel.constexprs);
    free(mod->kernel.config_text);
    if (mod->options_arena)
        arena_free(mod->options_arena);
    pthread_mutex_destroy(&mod->variants_lock);
    pthread_mutex_destroy(&mod->load_lock);
    mod->device->ops->unload(mod);
    if (mod->has_result)
        compile_result_free(&mod->result);
    free(mod->code);
    free(mod->source_name);
    free(mod->source_text);
    free(mod);
}

/* ---- launch specialization ---------------------------------------------------------------------
 * Triton's JIT specializes every launch on its arguments: an int equal to 1 becomes the constant,
 * an int divisible by 16 and a 16-byte-aligned pointer get ':16' (so loads vectorize and
 * pipeline). A tric kernel compiled with parameters left open does the same, one step further (a
 * value divisible by 8, 4 or 2 gets that hint, so a row of 4100 fp16 still moves in 8-byte
 * copies): the launch computes the hints its values allow, and the first launch with a new
 * combination compiles that variant (from the source and options kept here; on cuda through the
 * disk cache), later ones find it. */

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* Which parameters can be specialized, and a copy of the options to compile variants with. */
tric_status rt_prepare_specialization(struct tric_module_s *mod, const tric_compile_options *opt) {
    const struct tric_kernel_s *k = &mod->kernel;
    /* Tile IR (.tir) is compiled as written: its parameters carry their hints already. */
    if ((opt && opt->no_specialize) || !mod->source.name || ends_with(mod->source.name, ".tir"))
        return TRIC_SUCCESS;
    for (int i = 0; i < k->nparams; i++) {
        RtParamKind kind = (RtParamKind)k->param_kind[i];
        bool flag = !k->param_types[i].is_ptr && k->param_types[i].dtype == DT_I1;
        if ((kind == RT_PARAM_PTR || kind == RT_PARAM_I32 || kind == RT_PARAM_I64) && !flag &&
            k->param_divisibility[i] == 1 && !k->param_equal_to_1[i])
            mod->open_params[mod->nopen++] = (uint8_t)i;
    }
    if (mod->nopen == 0)
        return TRIC_SUCCESS;
    /* Every slot up front: a launch reads the list without the lock (see launch_kernel). */
    mod->variants = calloc(RT_MAX_VARIANTS, sizeof *mod->variants);
    Arena *a = mod->options_arena = arena_new();
    if (!a || !mod->variants)
        return rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
    tric_compile_options *copy = &mod->options;
    *copy = opt ? *opt : tric_compile_options_default();
    copy->kernel = copy->kernel ? arena_strdup(a, copy->kernel) : NULL;
    copy->signature = copy->signature ? arena_strdup(a, copy->signature) : NULL;
    copy->arch = copy->arch ? arena_strdup(a, copy->arch) : NULL;
    if (copy->nconstexprs > 0) {
        const char **defs = arena_alloc(a, sizeof *defs * (size_t)copy->nconstexprs);
        for (int i = 0; i < copy->nconstexprs; i++)
            defs[i] = arena_strdup(a, opt->constexprs[i]);
        copy->constexprs = defs;
    }
    return TRIC_SUCCESS;
}

/* The hints the launch's values allow on the open parameters (0 elsewhere); false when none. */
static bool launch_hints_of(const struct tric_kernel_s *k, const tric_arg *args,
                            unsigned char *hints) {
    const struct tric_module_s *mod = k->module;
    memset(hints, 0, (size_t)k->nparams);
    bool any = false;
    for (int j = 0; j < mod->nopen; j++) {
        int i = mod->open_params[j];
        uint64_t bits = rt_arg_bits(&args[i]);
        /* The largest power of two up to 16 dividing the value (0 counts as 16); 1 is no hint. */
        unsigned char h = 16;
        while (h > 1 && bits % h != 0)
            h /= 2;
        if (k->param_kind[i] != RT_PARAM_PTR && bits == 1)
            h = 1; /* equal to 1 */
        else if (h == 1)
            h = 0;
        hints[i] = h;
        any |= h != 0;
    }
    return any;
}

/* "*fp32:16,*fp32:16,i32:1": the kernel's signature with the variant's hints added. */
static char *variant_signature(const struct tric_kernel_s *k, const unsigned char *hints) {
    StrBuf sb = {0};
    for (int i = 0; i < k->nparams; i++) {
        bool eq1 = k->param_equal_to_1[i] || hints[i] == 1;
        unsigned div = eq1 ? 1 : hints[i] > 1 ? hints[i] : k->param_divisibility[i];
        strbuf_printf(&sb, "%s%s", i ? "," : "", k->param_type_str[i]);
        if (eq1)
            strbuf_printf(&sb, ":1");
        else if (div > 1)
            strbuf_printf(&sb, ":%u", div);
    }
    if (!sb.data)
        strbuf_append(&sb, "");
    return strbuf_take(&sb);
}

/* The module of one variant, or NULL with *error set when it does not compile. */
static struct tric_module_s *variant_module(struct tric_module_s *mod, const unsigned char *hints,
                                            char **error) {
    struct tric_module_s *vm = rt_module_new(mod->device);
    if (!vm)
        return NULL;
    /* The generic module's source: it outlives its variants (module_free frees them first), and
     * the cpu IR's locations point into it. */
    vm->source = mod->source;
    /* A config's variant fits its stages to shared memory as the config's generic kernel did:
     * without it a config whose num_stages overflows (seed 2's 128x256x128 on fp16) failed here,
     * and its launches all ran the generic kernel (no tensor maps: 12x the time on an H200). */
    vm->is_config = mod->is_config;
    memcpy(vm->launch_hints, hints, (size_t)mod->kernel.nparams);
    vm->nlaunch_hints = mod->kernel.nparams;
    /* The thread's last error is the caller's: a variant that fails leaves it as it was. */
    char *saved = strdup(tric_last_error());
    tric_status st = mod->device->ops->compile(mod->device, &vm->source, &mod->options, vm);
    if (st != TRIC_SUCCESS) {
        *error = strdup(tric_last_error());
        rt_module_free(vm);
        vm = NULL;
    }
    if (saved) {
        rt_fail(TRIC_SUCCESS, "%s", saved);
        free(saved);
    }
    return vm;
}

/* Compiles the variant for hints and publishes it (mod->variants_lock held). A failed compile is
 * remembered as a variant without a module: the generic kernel runs those launches, correctly,
 * tric_kernel_variant reports it, and launch_kernel warns (warn_failed_variant). */
static RtVariant *variant_compile(struct tric_module_s *mod, const unsigned char *hints) {
    if (mod->nvariants == RT_MAX_VARIANTS)
        return NULL;
    RtVariant *v = &mod->variants[mod->nvariants];
    memset(v, 0, sizeof *v);
    memcpy(v->hints, hints, (size_t)mod->kernel.nparams);
    v->signature = variant_signature(&mod->kernel, hints);
    if (!v->signature)
        return NULL;
    v->module = variant_module(mod, hints, &v->error);
    /* Release: a launch that sees the new count sees the whole entry. */
    __atomic_store_n(&mod->nvariants, mod->nvariants + 1, __ATOMIC_RELEASE);
    return v;
}

/* A variant that did not compile: its launches are correct but maybe far slower (no vector
 * accesses, no tensor maps), so the caller hears of it once. */
static void warn_failed_variant(const struct tric_module_s *mod, const RtVariant *v) {
    const char *config = mod->kernel.config_text;
    bool is_config = config && *config;
    rt_warn("tric: kernel %s%s%s%s: its variant for arguments %s did not compile, so those "
            "launches run the generic kernel: %s",
            mod->kernel.name, is_config ? " (" : "", is_config ? config : "", is_config ? ")" : "",
            v->signature, v->error ? v->error : "out of host memory");
}

static const RtVariant *find_variant(const struct tric_module_s *mod, int n,
                                     const unsigned char *hints) {
    for (int i = 0; i < n; i++)
        if (!memcmp(mod->variants[i].hints, hints, (size_t)mod->kernel.nparams))
            return &mod->variants[i];
    return NULL;
}

/* The kernel that runs this launch: k itself, or the variant for the arguments' values. Entries
 * are written once, under the lock, before the count that covers them is published, so a launch
 * that finds its variant takes no lock; only a miss does, to compile it -- unless the launch's
 * stream (stream given) is being captured into a CUDA graph: then NULL with *st set, since
 * loading the new code would break the capture. */
static struct tric_kernel_s *launch_kernel(struct tric_kernel_s *k, const tric_arg *args,
                                           struct tric_stream_s *stream, tric_status *st) {
    struct tric_module_s *mod = k->module;
    unsigned char hints[RT_MAX_PARAMS];
    if (!launch_hints_of(k, args, hints))
        return k;
    const RtVariant *v =
        find_variant(mod, __atomic_load_n(&mod->nvariants, __ATOMIC_ACQUIRE), hints);
    if (!v && mod->device->ops->capturing(mod->device, stream)) {
        *st = rt_capture_error("compiling a new specialization of the kernel at its launch");
        return NULL;
    }
    if (!v) {
        bool compiled = false;
        pthread_mutex_lock(&mod->variants_lock);
        v = find_variant(mod, mod->nvariants, hints);
        if (!v) {
            v = variant_compile(mod, hints);
            compiled = true;
        }
        pthread_mutex_unlock(&mod->variants_lock);
        /* outside the lock: the caller's handler may launch this kernel again */
        if (compiled && v && !v->module)
            warn_failed_variant(mod, v);
    }
    return v && v->module ? &v->module->kernel : k;
}

/* mod's one kernel from its source: autotuned (runtime/tune.c) or as asked. */
static tric_status compile_one(struct tric_module_s *mod, const tric_compile_options *opt) {
    bool tuned = false;
    tric_status st = rt_tune_compile(mod, opt, &tuned);
    if (st != TRIC_SUCCESS || tuned)
        return st;
    tric_compile_options probe;
    st = rt_heuristics_prepare(mod, opt, &probe);
    if (st != TRIC_SUCCESS)
        return st;
    if (mod->heuristics) /* launches run the heuristics' variants, specialized there */
        return mod->device->ops->compile(mod->device, &mod->source, &probe, mod);
    st = mod->device->ops->compile(mod->device, &mod->source, opt, mod);
    return st == TRIC_SUCCESS ? rt_prepare_specialization(mod, opt) : st;
}

/* A source with several kernels and no opt->kernel: each kernel a member module, compiled with
 * the constexprs that name its parameters (*several false: one kernel, compile it as usual). */
static tric_status compile_file_kernels(struct tric_module_s *mod, const tric_compile_options *opt,
                                        bool *several) {
    *several = false;
    size_t nlen = strlen(mod->source.name);
    if ((opt && opt->kernel) || (nlen > 4 && !strcmp(mod->source.name + nlen - 4, ".tir")))
        return TRIC_SUCCESS;
    Arena *a = arena_new();
    DriverKernelInfo *entries = NULL;
    int n = driver_file_kernels(&mod->source, &entries, a);
    if (n < 2) {
        arena_free(a);
        return TRIC_SUCCESS;
    }
    *several = true;
    tric_status st = TRIC_SUCCESS;
    if (opt && (opt->signature || opt->tune_configs))
        st = rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                     "%s has %d kernels: a signature or tune configs "
                     "describe one; name it in tric_compile_options.kernel",
                     mod->source.name, n);
    for (int i = 0; st == TRIC_SUCCESS && opt && i < opt->nconstexprs; i++) {
        size_t len = strcspn(opt->constexprs[i], "=");
        bool used = false;
        for (int k = 0; k < n && !used; k++)
            for (int p = 0; p < entries[k].nparams && !used; p++)
                used = strlen(entries[k].params[p]) == len &&
                       !strncmp(entries[k].params[p], opt->constexprs[i], len);
        if (!used)
            st = rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                         "constexpr %s: no kernel of %s has a "
                         "parameter '%.*s'",
                         opt->constexprs[i], mod->source.name, (int)len, opt->constexprs[i]);
    }
    mod->members = st == TRIC_SUCCESS ? calloc((size_t)n, sizeof *mod->members) : NULL;
    if (st == TRIC_SUCCESS && !mod->members)
        st = rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int i = 0; st == TRIC_SUCCESS && i < n; i++) {
        tric_compile_options mopt = opt ? *opt : tric_compile_options_default();
        mopt.kernel = entries[i].name;
        const char **defs = arena_alloc(a, sizeof(char *) * (size_t)(mopt.nconstexprs + 1));
        mopt.nconstexprs = 0;
        for (int d = 0; opt && d < opt->nconstexprs; d++) {
            size_t len = strcspn(opt->constexprs[d], "=");
            for (int p = 0; p < entries[i].nparams; p++)
                if (strlen(entries[i].params[p]) == len &&
                    !strncmp(entries[i].params[p], opt->constexprs[d], len)) {
                    defs[mopt.nconstexprs++] = opt->constexprs[d];
                    break;
                }
        }
        mopt.constexprs = defs;
        struct tric_module_s *member = rt_module_new(mod->device);
        if (!member) {
            st = rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
            break;
        }
        member->source = mod->source; /* borrowed: the container outlives its members */
        mod->members[mod->nmembers++] = member;
        st = compile_one(member, &mopt);
    }
    arena_free(a);
    return st;
}

tric_status tric_module_compile(tric_device dev, const char *source, const char *filename,
                                const tric_compile_options *options, tric_module *out) {
    if (!dev || !source || !out)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                       "tric_module_compile: NULL device, source or out");
    *out = NULL;
    if (options && options->num_warps != 0 &&
        (options->num_warps < 1 || options->num_warps > 32 ||
         (options->num_warps & (options->num_warps - 1))))
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                       "num_warps must be a power of two in 1..32, got %d", options->num_warps);
    if (options && (options->num_stages < 0 || options->num_stages > 16))
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "num_stages must be in 1..16, got %d",
                       options->num_stages);
    if (!rt_has_compiler) {
        /* libtric_runtime: only tile IR on the interpreter needs no code generator. */
        const char *name = filename ? filename : "<source>";
        size_t len = strlen(name);
        bool tir = len > 4 && !strcmp(name + len - 4, ".tir");
        if (!tir || !dev->ops->interprets_ir)
            return rt_fail(TRIC_ERROR_UNSUPPORTED,
                           "%s: this runtime was built without the compiler; link tric::tric "
                           "(libtric) to compile %s, or load the %s that `tric` writes",
                           name, tir ? "tile IR for cuda" : ".tri source",
                           dev->ops->ahead_of_time_form);
    }
    struct tric_module_s *mod = rt_module_new(dev);
    if (!mod)
        return rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
    mod->source_name = strdup(filename ? filename : "<source>");
    mod->source_text = strdup(source);
    if (!mod->source_name || !mod->source_text) {
        rt_module_free(mod);
        return rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    mod->source = (SrcFile){mod->source_name, mod->source_text, strlen(source)};
    bool several = false;
    /* An allocation that failed anywhere in the compile (support.h) makes it out of memory. */
    unsigned long failures = support_alloc_failures();
    tric_status st = compile_file_kernels(mod, options, &several);
    if (st == TRIC_SUCCESS && !several)
        st = compile_one(mod, options);
    if (support_alloc_failures() != failures && st != TRIC_ERROR_OUT_OF_MEMORY)
        st = rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "%s: out of host memory while compiling",
                     mod->source_name);
    if (st != TRIC_SUCCESS) {
        rt_module_free(mod);
        return st;
    }
    rt_link_add(dev, &dev->modules, &mod->link);
    *out = mod;
    return TRIC_SUCCESS;
}

/* The whole file, NUL-terminated, malloc'd into *out. */
static tric_status read_file(const char *path, char **out) {
    *out = NULL;
    StrBuf sb = {0};
    errno = 0;
    bool read = strbuf_read_file(&sb, path);
    if (!read && !sb.data && errno) {
        strbuf_free(&sb);
        return rt_fail(errno == ENOENT ? TRIC_ERROR_NOT_FOUND : TRIC_ERROR_IO, "%s: %s", path,
                       strerror(errno));
    }
    bool bad = !read;
    if (bad || sb.failed) {
        strbuf_free(&sb);
        return bad ? rt_fail(TRIC_ERROR_IO, "%s: read error", path)
                   : rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "%s: out of host memory reading it", path);
    }
    if (!sb.data)
        strbuf_append(&sb, "");
    *out = strbuf_take(&sb);
    return TRIC_SUCCESS;
}

tric_status tric_module_compile_file(tric_device dev, const char *path,
                                     const tric_compile_options *options, tric_module *out) {
    if (!path)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "tric_module_compile_file: path is NULL");
    if (out)
        *out = NULL;
    char *text;
    tric_status st = read_file(path, &text);
    if (st != TRIC_SUCCESS)
        return st;
    st = tric_module_compile(dev, text, path, options, out);
    free(text);
    return st;
}

tric_status tric_module_load_ptx(tric_device dev, const char *ptx, tric_module *out) {
    if (!dev || !ptx || !out)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                       "tric_module_load_ptx: NULL device, ptx or out");
    *out = NULL;
    struct tric_module_s *mod = rt_module_new(dev);
    if (!mod || !(mod->code = strdup(ptx))) {
        free(mod);
        return rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    tric_status st = dev->ops->load_ptx(dev, mod);
    if (st != TRIC_SUCCESS) {
        rt_module_free(mod);
        return st;
    }
    rt_link_add(dev, &dev->modules, &mod->link);
    *out = mod;
    return TRIC_SUCCESS;
}

tric_status tric_module_load_file(tric_device dev, const char *path, tric_module *out) {
    if (!path)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "tric_module_load_file: path is NULL");
    if (out)
        *out = NULL;
    char *text;
    tric_status st = read_file(path, &text);
    if (st != TRIC_SUCCESS)
        return st;
    /* A .tir file is tile IR as `tric --emit=ir` writes it: the interpreter runs it on cpu, and
     * on cuda it goes through the passes and code generator like compiled source. */
    size_t len = strlen(path);
    if (len > 4 && !strcmp(path + len - 4, ".tir"))
        st = tric_module_compile(dev, text, path, NULL, out);
    else
        st = tric_module_load_ptx(dev, text, out);
    free(text);
    if (st != TRIC_SUCCESS) {
        /* Name the file in the message: the text alone does not say where it came from. */
        char *msg = strdup(tric_last_error());
        rt_fail(st, "%s: %s", path, msg ? msg : "");
        free(msg);
    }
    return st;
}

const char *tric_module_code(tric_module mod) { return mod && mod->code ? mod->code : ""; }

void tric_module_destroy(tric_module mod) {
    if (!mod)
        return;
    rt_link_remove(mod->device, &mod->link);
    rt_module_free(mod);
}

/* ---- kernels ---------------------------------------------------------------------------------- */

tric_status tric_module_get_kernel(tric_module mod, const char *name, tric_kernel *out) {
    if (!mod || !out)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "tric_module_get_kernel: NULL module or out");
    if (mod->nmembers > 0) {
        for (int i = 0; i < mod->nmembers; i++)
            if (!name || !strcmp(name, mod->members[i]->kernel.name)) {
                *out = &mod->members[i]->kernel;
                return TRIC_SUCCESS;
            }
        StrBuf names = {0};
        for (int i = 0; i < mod->nmembers; i++)
            strbuf_printf(&names, "%s%s", i ? ", " : "", mod->members[i]->kernel.name);
        *out = NULL;
        tric_status st =
            rt_fail(TRIC_ERROR_NOT_FOUND, "no kernel '%s' in this module (it holds %s)", name,
                    names.data ? names.data : "none");
        strbuf_free(&names);
        return st;
    }
    if (name && strcmp(name, mod->kernel.name) != 0) {
        *out = NULL;
        return rt_fail(TRIC_ERROR_NOT_FOUND, "no kernel '%s' in this module (it holds '%s')", name,
                       mod->kernel.name);
    }
    *out = &mod->kernel;
    return TRIC_SUCCESS;
}

const char *tric_kernel_name(tric_kernel k) { return k ? k->name : ""; }
int tric_kernel_num_params(tric_kernel k) { return k ? k->nparams : 0; }
const char *tric_kernel_param_type(tric_kernel k, int i) {
    return k && i >= 0 && i < k->nparams ? k->param_type_str[i] : NULL;
}
int tric_kernel_threads(tric_kernel k) { return k ? k->threads : 0; }
int tric_kernel_shared_bytes(tric_kernel k) { return k ? k->shared_bytes : 0; }

tric_status tric_kernel_attributes(tric_kernel k, tric_kernel_attrs *out) {
    if (!k || !out)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "tric_kernel_attributes: NULL kernel or out");
    memset(out, 0, sizeof *out);
    out->threads = k->threads;
    out->dynamic_shared_bytes = k->shared_bytes;
    if (k->module->tuner)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                       "%s is autotuned: its configs are different "
                       "code; query one config's kernel (tric_kernel_config)",
                       k->name);
    return k->module->device->ops->kernel_attributes(k, out);
}

int tric_kernel_num_variants(tric_kernel k) {
    return k ? __atomic_load_n(&k->module->nvariants, __ATOMIC_ACQUIRE) : 0;
}

tric_status tric_kernel_variant(tric_kernel k, int index, const char **signature,
                                const char **code) {
    if (!k)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "tric_kernel_variant: kernel is NULL");
    struct tric_module_s *mod = k->module;
    int n = __atomic_load_n(&mod->nvariants, __ATOMIC_ACQUIRE);
    const RtVariant *v = index >= 0 && index < n ? &mod->variants[index] : NULL;
    if (v) {
        if (signature)
            *signature = v->signature;
        if (code)
            *code = v->module ? v->module->code : NULL;
    }
    if (!v)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "%s: no variant %d (it has %d)", k->name, index,
                       n);
    if (!v->module)
        return rt_fail(TRIC_ERROR_COMPILE, "%s, specialized as %s: %s", k->name, v->signature,
                       v->error ? v->error : "the compile failed");
    return TRIC_SUCCESS;
}

tric_status rt_kernel_set_params(struct tric_kernel_s *k, const Type *types, int n) {
    if (n > RT_MAX_PARAMS)
        return rt_fail(TRIC_ERROR_UNSUPPORTED, "%s: %d parameters (at most %d are supported)",
                       k->name, n, RT_MAX_PARAMS);
    k->nparams = n;
    for (int i = 0; i < n; i++) {
        Type t = types[i];
        k->param_types[i] = t;
        k->param_divisibility[i] = 1;
        k->param_equal_to_1[i] = false;
        StrBuf sb = {0};
        type_print(&sb, type_elem(t));
        snprintf(k->param_type_str[i], sizeof k->param_type_str[i], "%s", sb.data ? sb.data : "?");
        strbuf_free(&sb);
        RtParamKind kind;
        if (!t.is_ptr && dtype_is_fp8(t.dtype))
            return rt_fail(TRIC_ERROR_UNSUPPORTED,
                           "%s: parameter %d is a scalar %s; fp8 is passed "
                           "only in memory (a *%s pointer)",
                           k->name, i + 1, dtype_sig_name(t.dtype), dtype_sig_name(t.dtype));
        if (t.is_ptr)
            kind = RT_PARAM_PTR;
        else if (t.dtype == DT_F16)
            kind = RT_PARAM_F16;
        else if (t.dtype == DT_BF16)
            kind = RT_PARAM_BF16;
        else if (t.dtype == DT_F32)
            kind = RT_PARAM_F32;
        else if (t.dtype == DT_F64)
            kind = RT_PARAM_F64;
        else if (dtype_bits(t.dtype) == 64)
            kind = RT_PARAM_I64;
        else
            kind = RT_PARAM_I32;
        k->param_kind[i] = (uint8_t)kind;
    }
    return TRIC_SUCCESS;
}

/* ---- argument checking ------------------------------------------------------------------------ */

static const char *arg_kind_text(tric_arg_kind kind) {
    switch (kind) {
    case TRIC_ARG_BUFFER: return "a buffer";
    case TRIC_ARG_ADDRESS: return "an address";
    case TRIC_ARG_I32: return "an int";
    case TRIC_ARG_I64: return "an int64";
    case TRIC_ARG_F32: return "a float";
    case TRIC_ARG_F64: return "a double";
    }
    return "an argument of unknown kind";
}

void rt_kernel_set_hint(struct tric_kernel_s *k, int index, int divisibility, bool equal_to_1) {
    if (index < 0 || index >= k->nparams)
        return;
    /* Only powers of two are specialized on (Triton's :16); anything else is not checked. */
    k->param_divisibility[index] =
        divisibility > 1 && (divisibility & (divisibility - 1)) == 0 ? (uint32_t)divisibility : 1;
    k->param_equal_to_1[index] = equal_to_1;
}

/* *field = a copy of value ("" clears it); NULL leaves it. */
static void set_text(char **field, const char *value) {
    if (!value)
        return;
    free(*field);
    *field = *value ? strdup(value) : NULL;
}

void rt_kernel_set_names(struct tric_kernel_s *k, const char *param_names, const char *constexprs,
                         const char *config_text) {
    set_text(&k->param_names, param_names);
    set_text(&k->constexprs, constexprs);
    set_text(&k->config_text, config_text);
}

int rt_kernel_param_index(const struct tric_kernel_s *k, const char *name) {
    const char *p = k->param_names;
    size_t n = strlen(name);
    for (int i = 0; p && *p && i < k->nparams; i++) {
        size_t len = strcspn(p, " ");
        if (len == n && !strncmp(p, name, n))
            return i;
        p += len;
        p += *p == ' ';
    }
    return -1;
}

/* The integer an argument passes: an address for pointers, the value for ints. */
uint64_t rt_arg_bits(const tric_arg *a) {
    switch (a->kind) {
    case TRIC_ARG_BUFFER: return a->v.buf.buffer->addr + a->v.buf.offset;
    case TRIC_ARG_ADDRESS: return a->v.address;
    case TRIC_ARG_I32: return (uint64_t)(int64_t)a->v.i32;
    case TRIC_ARG_I64: return (uint64_t)a->v.i64;
    default: return 0;
    }
}

/* Does the argument (already of the right kind) meet the kernel's specialization? */
static bool arg_meets_hints(const struct tric_kernel_s *k, int i, const tric_arg *a) {
    if (k->param_equal_to_1[i])
        return rt_arg_bits(a) == 1;
    return (rt_arg_bits(a) & (k->param_divisibility[i] - 1)) == 0;
}

static const char *param_kind_text(RtParamKind kind) {
    switch (kind) {
    case RT_PARAM_PTR: return "a pointer";
    case RT_PARAM_I32: return "an int";
    case RT_PARAM_I64: return "an int64";
    case RT_PARAM_F16:
    case RT_PARAM_BF16:
    case RT_PARAM_F32: return "a float";
    case RT_PARAM_F64: return "a double";
    }
    return "?";
}

static bool arg_fits(RtParamKind param, tric_arg_kind arg) {
    switch (param) {
    case RT_PARAM_PTR: return arg == TRIC_ARG_BUFFER || arg == TRIC_ARG_ADDRESS;
    case RT_PARAM_I32: return arg == TRIC_ARG_I32;
    case RT_PARAM_I64: return arg == TRIC_ARG_I64;
    case RT_PARAM_F16:
    case RT_PARAM_BF16:
    case RT_PARAM_F32: return arg == TRIC_ARG_F32;
    case RT_PARAM_F64: return arg == TRIC_ARG_F64;
    }
    return false;
}

/* "argument 2 (b_ptr)": the position a C caller counts and the name the kernel gives it (from
 * the IR on cpu, the PTX metadata's names on cuda); the position alone where no name is known. */
static const char *arg_label(const struct tric_kernel_s *k, int index, char *buf, size_t size) {
    const char *p = k->param_names;
    for (int i = 0; p && *p && i <= index; i++) {
        size_t len = strcspn(p, " ");
        if (i == index && len > 0 && !(len == 1 && *p == '_')) {
            snprintf(buf, size, "argument %d (%.*s)", index + 1, (int)len, p);
            return buf;
        }
        p += len;
        p += *p == ' ';
    }
    snprintf(buf, size, "argument %d", index + 1);
    return buf;
}

/* The device the buffer arguments must be on: the first buffer's when the kernel's device kind
 * launches on other devices and it is of that kind (several GPUs: the launch runs there), else
 * the kernel's own. */
static struct tric_device_s *buffers_device(const struct tric_kernel_s *k, const tric_arg *args,
                                            int nargs) {
    struct tric_device_s *home = k->module->device;
    if (!home->ops->launches_on_other_devices)
        return home;
    for (int i = 0; i < nargs; i++)
        if (args[i].kind == TRIC_ARG_BUFFER && args[i].v.buf.buffer)
            return args[i].v.buf.buffer->device->ops == home->ops ? args[i].v.buf.buffer->device
                                                                  : home;
    return home;
}

/* The slow path: find the first problem and say it the way a C compiler would. */
static tric_status args_error(const struct tric_kernel_s *k, const tric_arg *args, int nargs) {
    char label[96];
    if (nargs != k->nparams) {
        StrBuf types = {0};
        for (int i = 0; i < k->nparams; i++)
            strbuf_printf(&types, "%s%s", i ? ", " : "", k->param_type_str[i]);
        tric_status st = rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "%s takes %d argument%s (%s), got %d",
                                 k->name, k->nparams, k->nparams == 1 ? "" : "s",
                                 types.data ? types.data : "none", nargs);
        strbuf_free(&types);
        return st;
    }
    for (int i = 0; i < nargs; i++) {
        RtParamKind pk = (RtParamKind)k->param_kind[i];
        const char *arg = arg_label(k, i, label, sizeof label);
        if (!arg_fits(pk, args[i].kind))
            return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "%s of %s: expected %s (%s), got %s", arg,
                           k->name, param_kind_text(pk), k->param_type_str[i],
                           arg_kind_text(args[i].kind));
        if (args[i].kind == TRIC_ARG_BUFFER) {
            const struct tric_buffer_s *b = args[i].v.buf.buffer;
            if (!b)
                return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "%s of %s: NULL buffer", arg, k->name);
            const struct tric_device_s *on = buffers_device(k, args, nargs);
            bool elsewhere = on != k->module->device ||
                             (b->device->ops == on->ops && on->ops->launches_on_other_devices);
            if (b->device != on && !elsewhere)
                return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                               "%s of %s: the buffer belongs to %s, the kernel to %s", arg, k->name,
                               b->device->name, k->module->device->name);
            if (b->device != on)
                return rt_fail(
                    TRIC_ERROR_INVALID_ARGUMENT,
                    "%s of %s: the buffer belongs to %s, the launch's first buffer to %s "
                    "(a launch runs on one device)",
                    arg, k->name, b->device->name, on->name);
            if (args[i].v.buf.offset > b->bytes)
                return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                               "%s of %s: offset %zu is past the buffer's end (%zu bytes)", arg,
                               k->name, args[i].v.buf.offset, b->bytes);
        }
        if (!arg_meets_hints(k, i, &args[i])) {
            long long got = (long long)rt_arg_bits(&args[i]);
            if (k->param_equal_to_1[i])
                return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                               "%s of %s: the kernel was compiled for the value 1 (%s:1), "
                               "got %lld",
                               arg, k->name, k->param_type_str[i], got);
            if (pk == RT_PARAM_PTR)
                return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                               "%s of %s: the kernel was compiled for addresses divisible "
                               "by %u (%s:%u), got 0x%llx",
                               arg, k->name, (unsigned)k->param_divisibility[i],
                               k->param_type_str[i], (unsigned)k->param_divisibility[i],
                               (unsigned long long)got);
            return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                           "%s of %s: the kernel was compiled for values divisible by %u "
                           "(%s:%u), got %lld",
                           arg, k->name, (unsigned)k->param_divisibility[i], k->param_type_str[i],
                           (unsigned)k->param_divisibility[i], got);
        }
    }
    return TRIC_SUCCESS;
}

tric_status rt_check_args(const struct tric_kernel_s *k, const tric_arg *args, int nargs) {
    if (nargs != k->nparams || (nargs > 0 && !args))
        return nargs > 0 && !args
                   ? rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "%s: args is NULL", k->name)
                   : args_error(k, args, nargs);
    /* The fast path: one comparison per argument. */
    const struct tric_device_s *on = buffers_device(k, args, nargs);
    for (int i = 0; i < nargs; i++) {
        tric_arg_kind a = args[i].kind;
        if (!arg_fits((RtParamKind)k->param_kind[i], a) ||
            (a == TRIC_ARG_BUFFER && (!args[i].v.buf.buffer || args[i].v.buf.buffer->device != on ||
                                      args[i].v.buf.offset > args[i].v.buf.buffer->bytes)) ||
            !arg_meets_hints(k, i, &args[i]))
            return args_error(k, args, nargs);
    }
    return TRIC_SUCCESS;
}

/* ---- launch ----------------------------------------------------------------------------------- */

tric_status tric_launch(tric_kernel k, tric_dim3 grid, const tric_arg *args, int nargs,
                        tric_stream stream) {
    if (!k)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "tric_launch: kernel is NULL");
    if (k->module->tuner)
        return rt_tuned_launch(k, NULL, NULL, grid, args, nargs, stream, NULL);
    return rt_launch(k, grid, args, nargs, stream, NULL);
}

tric_status tric_launch_ex(tric_kernel k, tric_dim3 grid, const tric_arg *args, int nargs,
                           tric_stream stream, const tric_launch_options *options) {
    if (!k)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "tric_launch_ex: kernel is NULL");
    tric_grid_fn fn = options ? options->grid_fn : NULL;
    void *user = options ? options->grid_user : NULL;
    if (k->module->tuner)
        return rt_tuned_launch(k, fn, user, grid, args, nargs, stream, options);
    if (fn)
        return rt_launch_grid_fn(k, fn, user, args, nargs, stream, options);
    return rt_launch(k, grid, args, nargs, stream, options);
}

tric_status rt_launch(struct tric_kernel_s *k, tric_dim3 grid, const tric_arg *args, int nargs,
                      struct tric_stream_s *stream, const tric_launch_options *options) {
    tric_status st = rt_check_args(k, args, nargs);
    if (st != TRIC_SUCCESS)
        return st;
    return rt_launch_checked(k, grid, args, stream, options);
}

struct tric_kernel_s *rt_launch_variant(struct tric_kernel_s *k, const tric_arg *args) {
    tric_status st = TRIC_SUCCESS;
    return k->module->nopen > 0 ? launch_kernel(k, args, NULL, &st) : k;
}

tric_status rt_launch_target(const struct tric_kernel_s *k, const tric_arg *args, int nargs,
                             struct tric_stream_s **stream) {
    struct tric_device_s *home = k->module->device, *on = buffers_device(k, args, nargs);
    struct tric_stream_s *s = *stream;
    if (!s) {
        if (on != home)
            *stream = &on->own_stream;
        return TRIC_SUCCESS;
    }
    if (s->device == home && on == home)
        return TRIC_SUCCESS; /* one device: the common case */
    if (s->device != home && (!home->ops->launches_on_other_devices || s->device->ops != home->ops))
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                       "%s: the stream belongs to %s, the kernel to %s", k->name, s->device->name,
                       home->name);
    for (int i = 0; i < nargs; i++)
        if (args[i].kind == TRIC_ARG_BUFFER && args[i].v.buf.buffer->device != s->device)
            return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                           "%s: the stream belongs to %s, the buffers to %s (a launch runs on one "
                           "device)",
                           k->name, s->device->name, args[i].v.buf.buffer->device->name);
    return TRIC_SUCCESS;
}

tric_status rt_launch_checked(struct tric_kernel_s *k, tric_dim3 grid, const tric_arg *args,
                              struct tric_stream_s *stream, const tric_launch_options *options) {
    tric_status target = rt_launch_target(k, args, k->nparams, &stream);
    if (target != TRIC_SUCCESS)
        return target;
    struct tric_device_s *dev = rt_launch_device(k, stream);
    /* An empty grid has no programs to run (and cuLaunchKernel would refuse it). */
    if (grid.x == 0 || grid.y == 0 || grid.z == 0)
        return TRIC_SUCCESS;
    if (k->module->heuristics) {
        tric_status st = rt_heuristics_kernel(k, args, &k);
        if (st != TRIC_SUCCESS)
            return st;
    }
    if (k->module->nopen > 0) {
        tric_status st = TRIC_SUCCESS;
        k = launch_kernel(k, args, stream, &st);
        if (!k)
            return st;
    }
    return dev->ops->launch(k, grid, args, stream, options);
}

/* ---- buffers ---------------------------------------------------------------------------------- */

tric_status tric_buffer_alloc(tric_device dev, size_t bytes, tric_buffer *out) {
    if (!dev || !out)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "tric_buffer_alloc: NULL device or out");
    *out = NULL;
    struct tric_buffer_s *buf = calloc(1, sizeof *buf);
    if (!buf)
        return rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
    buf->device = dev;
    buf->bytes = bytes;
    tric_status st = dev->ops->alloc(dev, buf, bytes);
    if (st != TRIC_SUCCESS) {
        free(buf);
        return st;
    }
    rt_link_add(dev, &dev->buffers, &buf->link);
    *out = buf;
    return TRIC_SUCCESS;
}

void tric_buffer_free(tric_buffer buf) {
    if (!buf)
        return;
    rt_link_remove(buf->device, &buf->link);
    buf->device->ops->free(buf);
    free(buf);
}

size_t tric_buffer_size(tric_buffer buf) { return buf ? buf->bytes : 0; }
tric_device tric_buffer_device(tric_buffer buf) { return buf ? buf->device : NULL; }
uint64_t tric_buffer_address(tric_buffer buf) { return buf ? buf->addr : 0; }

static tric_status check_range(const char *what, tric_buffer b, size_t off, size_t n) {
    if (!b)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "%s: buffer is NULL", what);
    if (off > b->bytes || n > b->bytes - off)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                       "%s: bytes [%zu, %zu) are outside the buffer (%zu bytes)", what, off,
                       off + n, b->bytes);
    return TRIC_SUCCESS;
}

static tric_status check_stream(const char *what, tric_buffer b, tric_stream s) {
    if (s && s->device != b->device)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "%s: the stream belongs to another device",
                       what);
    return TRIC_SUCCESS;
}

tric_status tric_copy_to_device(tric_buffer dst, size_t off, const void *src, size_t n,
                                tric_stream s) {
    tric_status st = check_range("tric_copy_to_device", dst, off, n);
    if (st == TRIC_SUCCESS)
        st = check_stream("tric_copy_to_device", dst, s);
    if (st != TRIC_SUCCESS || n == 0)
        return st;
    if (!src)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "tric_copy_to_device: src is NULL");
    return dst->device->ops->copy_to_device(dst, off, src, n, s);
}

tric_status tric_copy_to_host(void *dst, tric_buffer src, size_t off, size_t n, tric_stream s) {
    tric_status st = check_range("tric_copy_to_host", src, off, n);
    if (st == TRIC_SUCCESS)
        st = check_stream("tric_copy_to_host", src, s);
    if (st != TRIC_SUCCESS || n == 0)
        return st;
    if (!dst)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "tric_copy_to_host: dst is NULL");
    return src->device->ops->copy_to_host(dst, src, off, n, s);
}

tric_status tric_copy_to_device_async(tric_buffer dst, size_t off, const void *src, size_t n,
                                      tric_stream s) {
    tric_status st = check_range("tric_copy_to_device_async", dst, off, n);
    if (st == TRIC_SUCCESS)
        st = check_stream("tric_copy_to_device_async", dst, s);
    if (st != TRIC_SUCCESS || n == 0)
        return st;
    if (!src)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "tric_copy_to_device_async: src is NULL");
    return dst->device->ops->copy_to_device_async(dst, off, src, n, s);
}

tric_status tric_copy_to_host_async(void *dst, tric_buffer src, size_t off, size_t n,
                                    tric_stream s) {
    tric_status st = check_range("tric_copy_to_host_async", src, off, n);
    if (st == TRIC_SUCCESS)
        st = check_stream("tric_copy_to_host_async", src, s);
    if (st != TRIC_SUCCESS || n == 0)
        return st;
    if (!dst)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "tric_copy_to_host_async: dst is NULL");
    return src->device->ops->copy_to_host_async(dst, src, off, n, s);
}

tric_status tric_copy_device(tric_buffer dst, size_t doff, tric_buffer src, size_t soff, size_t n,
                             tric_stream s) {
    tric_status st = check_range("tric_copy_device (dst)", dst, doff, n);
    if (st == TRIC_SUCCESS)
        st = check_range("tric_copy_device (src)", src, soff, n);
    if (st == TRIC_SUCCESS)
        st = check_stream("tric_copy_device", dst, s);
    if (st != TRIC_SUCCESS || n == 0)
        return st;
    if (dst->device != src->device)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                       "tric_copy_device: the buffers belong to different devices (%s, %s)",
                       dst->device->name, src->device->name);
    return dst->device->ops->copy_device(dst, doff, src, soff, n, s);
}

tric_status tric_memset(tric_buffer dst, size_t off, int value, size_t n, tric_stream s) {
    tric_status st = check_range("tric_memset", dst, off, n);
    if (st == TRIC_SUCCESS)
        st = check_stream("tric_memset", dst, s);
    if (st != TRIC_SUCCESS || n == 0)
        return st;
    return dst->device->ops->memset(dst, off, value, n, s);
}
