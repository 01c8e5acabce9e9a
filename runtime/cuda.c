/* cuda.c: the cuda device through the CUDA Driver API (CUDA Driver API reference, "Initialization",
 * "Primary Context Management", "Module Management", "Execution Control"). libcuda.so.1 is loaded
 * at run time, so libtric builds and runs (on cpu) where no driver or toolkit is installed. api.c
 * reaches it through rt_cuda_ops, the table at the end. */
#include "runtime/cuda_api.h"
#include "runtime/runtime.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- loading libcuda -------------------------------------------------------------------------- */

static pthread_once_t api_once = PTHREAD_ONCE_INIT;
static RtCudaApi api;
static bool api_ok;
static char api_error[512];

/* cuGetProcAddress_v2 (CUDA 12.0+): symbol, pfn, cudaVersion, flags, symbolStatus. */
typedef CUresult (*GetProcAddressFn)(const char *symbol, void **pfn, int cuda_version,
                                     uint64_t flags, int *status);

/* name's entry point: at CUDA 12.0, else at the driver's own version; NULL when absent. */
static void *proc_address(GetProcAddressFn get_proc, const char *name, int version) {
    void *fn = NULL;
    int status = 0;
    if (get_proc(name, &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS || !fn)
        get_proc(name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    return fn;
}

static void api_load(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(api_error, sizeof api_error,
                 "libcuda.so.1 not found (no NVIDIA driver on this machine)");
        return;
    }
    GetProcAddressFn get_proc = (GetProcAddressFn)dlsym(lib, "cuGetProcAddress_v2");
    CUresult (*driver_version)(int *) = (CUresult(*)(int *))dlsym(lib, "cuDriverGetVersion");
    if (!get_proc || !driver_version) {
        snprintf(
            api_error, sizeof api_error,
            "the NVIDIA driver is too old: libcuda.so.1 has no cuGetProcAddress_v2 (tric needs "
            "a driver for CUDA 12.0 or newer)");
        return;
    }
    int version = 0;
    driver_version(&version);
    /* Ask for each entry point at CUDA 12.0, the ABI the prototypes in cuda_api.h have; a symbol a
     * newer driver only has in a later version (cuEventElapsedTime_v2 in 13.0, same prototype) is
     * asked for at the driver's own version. An optional one may be missing (its member NULL). */
#define X(name, params)                                                                            \
    {                                                                                              \
        void *fn = proc_address(get_proc, #name, version);                                         \
        if (!fn) {                                                                                 \
            snprintf(api_error, sizeof api_error, "libcuda.so.1 (driver CUDA %d.%d) has no %s",    \
                     version / 1000, version % 1000 / 10, #name);                                  \
            return;                                                                                \
        }                                                                                          \
        memcpy(&api.name, &fn, sizeof fn);                                                         \
    }
    TRIC_CUDA_FUNCS(X)
#undef X
#define X(name, params)                                                                            \
    {                                                                                              \
        void *fn = proc_address(get_proc, #name, version);                                         \
        memcpy(&api.name, &fn, sizeof fn);                                                         \
    }
    TRIC_CUDA_OPTIONAL_FUNCS(X)
#undef X
    CUresult r = api.cuInit(0);
    if (r != CUDA_SUCCESS) {
        char text[256];
        snprintf(api_error, sizeof api_error, "cuInit failed: %s",
                 rt_cuda_error_text(r, text, sizeof text));
        return;
    }
    api_ok = true;
}

const RtCudaApi *rt_cuda_api(void) {
    pthread_once(&api_once, api_load);
    return api_ok ? &api : NULL;
}

const char *rt_cuda_api_error(void) {
    pthread_once(&api_once, api_load);
    return api_ok ? "" : api_error;
}

const char *rt_cuda_error_text(CUresult r, char *buf, size_t len) {
    const char *name = NULL, *text = NULL;
    if (api.cuGetErrorName)
        api.cuGetErrorName(r, &name);
    if (api.cuGetErrorString)
        api.cuGetErrorString(r, &text);
    snprintf(buf, len, "%s (%s)", name ? name : "CUDA error", text ? text : "no description");
    if (!name) /* an unknown code: at least print the number */
        snprintf(buf, len, "CUDA error %d", r);
    return buf;
}

/* Errors after which the context is unusable until the process exits (CUDA Driver API,
 * CUresult: "the process must be terminated and relaunched"). */
static bool error_is_sticky(CUresult r) { return r == 700 || r == 710 || (r >= 714 && r <= 719); }

static tric_status cuda_fail(const struct tric_device_s *dev, CUresult r, const char *what) {
    char text[256];
    rt_cuda_error_text(r, text, sizeof text);
    tric_status st = r == 2 ? TRIC_ERROR_OUT_OF_MEMORY
                     : (r == 700 || r == 701 || r == 702 || (r >= 710 && r <= 719))
                         ? TRIC_ERROR_LAUNCH
                         : TRIC_ERROR_DRIVER;
    return rt_fail(st, "%s: %s failed: %s%s", dev->name, what, text,
                   error_is_sticky(r) ? "; this error is sticky: the GPU context is unusable until "
                                        "the process exits"
                                      : "");
}

/* The device's primary context must be current on the calling thread. A thread-local cache makes
 * this a compare on the launch path (a program that switches contexts itself behind tric's back
 * must call tric_device_synchronize first, which resets it). */
static _Thread_local CUcontext current_context;

/* The current context is the calling thread's own (CUDA Driver API, "Context Management"), so
 * threads driving different GPUs at once never race on it: each sets its launch's device's. */
static CUresult make_context_current(CUcontext ctx) {
    if (current_context == ctx)
        return CUDA_SUCCESS;
    CUresult r = api.cuCtxSetCurrent(ctx);
    if (r == CUDA_SUCCESS)
        current_context = ctx;
    return r;
}

static CUresult make_current(const struct tric_device_s *dev) {
    return make_context_current(dev->cu_context);
}

#define CU_CHECK(dev, call, what)                                                                  \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS)                                                                    \
            return cuda_fail((dev), r_, (what));                                                   \
    } while (0)

/* ---- devices ---------------------------------------------------------------------------------- */

bool rt_cuda_available(void) {
    int count = 0;
    return rt_cuda_api() && api.cuDeviceGetCount(&count) == CUDA_SUCCESS && count > 0;
}

tric_status rt_cuda_open(struct tric_device_s *dev, int ordinal) {
    dev->kind = TRIC_DEVICE_CUDA;
    dev->ops = &rt_cuda_ops;
    dev->ordinal = ordinal;
    snprintf(dev->name, sizeof dev->name, "cuda:%d", ordinal);
    if (!rt_cuda_api())
        return rt_fail(TRIC_ERROR_NO_DEVICE, "cuda:%d: %s", ordinal, rt_cuda_api_error());
    int count = 0;
    CU_CHECK(dev, api.cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (ordinal >= count)
        return rt_fail(TRIC_ERROR_NO_DEVICE, "cuda:%d: no such device (this machine has %d)",
                       ordinal, count);
    CUdevice cu_dev;
    CU_CHECK(dev, api.cuDeviceGet(&cu_dev, ordinal), "cuDeviceGet");
    char name[200] = "";
    int major = 0, minor = 0;
    CU_CHECK(dev, api.cuDeviceGetName(name, (int)sizeof name - 1, cu_dev), "cuDeviceGetName");
    CU_CHECK(dev,
             api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cu_dev),
             "cuDeviceGetAttribute(compute capability major)");
    CU_CHECK(dev,
             api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cu_dev),
             "cuDeviceGetAttribute(compute capability minor)");
    /* The shared memory a block may use without and with opting in (CUDA C Programming Guide,
     * "Shared Memory" for compute capability 7.0+: above the first, a function must set
     * CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, up to the second). */
    int sms = 0, shared = 0, shared_optin = 0;
    CU_CHECK(dev, api.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cu_dev),
             "cuDeviceGetAttribute(multiprocessor count)");
    CU_CHECK(
        dev,
        api.cuDeviceGetAttribute(&shared, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, cu_dev),
        "cuDeviceGetAttribute(max shared memory per block)");
    CU_CHECK(dev,
             api.cuDeviceGetAttribute(
                 &shared_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, cu_dev),
             "cuDeviceGetAttribute(max shared memory per block, opt-in)");
    dev->multiprocessors = sms;
    dev->max_shared_default = shared;
    dev->max_shared_optin = shared_optin > shared ? shared_optin : shared;
    dev->cu_device = cu_dev;
    dev->sm = major * 10 + minor;
    /* The JIT compiles for exactly this GPU, so on Hopper (9.0) it may use the arch-specific
     * features (wgmma, TMA: PTX ISA "sm_90a"), as Triton does. */
    snprintf(dev->arch, sizeof dev->arch, "sm_%d%s", dev->sm, major == 9 ? "a" : "");
    CUcontext ctx;
    CU_CHECK(dev, api.cuDevicePrimaryCtxRetain(&ctx, cu_dev), "cuDevicePrimaryCtxRetain");
    dev->cu_context = ctx;
    /* A primary context released to zero and retained again can come back with the same handle:
     * never trust this thread's cache across an open. */
    current_context = NULL;
    CUresult r = make_current(dev);
    if (r != CUDA_SUCCESS) {
        api.cuDevicePrimaryCtxRelease(cu_dev);
        return cuda_fail(dev, r, "cuCtxSetCurrent");
    }
    CUstream stream;
    r = api.cuStreamCreate(&stream, CU_STREAM_DEFAULT);
    if (r != CUDA_SUCCESS) {
        api.cuDevicePrimaryCtxRelease(cu_dev);
        return cuda_fail(dev, r, "cuStreamCreate");
    }
    dev->cu_stream = stream;
    snprintf(dev->name, sizeof dev->name, "cuda:%d (%s, sm_%d)", ordinal, name, dev->sm);
    snprintf(dev->model, sizeof dev->model, "%s, sm_%d, %d SMs", name, dev->sm, sms);
    return TRIC_SUCCESS;
}

static void free_workspaces(struct tric_stream_s *s, CUstream stream);

static void cuda_close(struct tric_device_s *dev) {
    if (!dev->cu_context)
        return;
    free_workspaces(&dev->own_stream, (CUstream)dev->cu_stream);
    if (dev->cu_stream && make_current(dev) == CUDA_SUCCESS)
        api.cuStreamDestroy((CUstream)dev->cu_stream);
    dev->cu_stream = NULL;
    if (current_context == dev->cu_context)
        current_context = NULL;
    api.cuDevicePrimaryCtxRelease(dev->cu_device);
    dev->cu_context = NULL;
}

static tric_status cuda_synchronize(struct tric_device_s *dev) {
    /* Set the context unconditionally: this is also the documented way to resync the cache. */
    current_context = NULL;
    CU_CHECK(dev, make_current(dev), "cuCtxSetCurrent");
    CU_CHECK(dev, api.cuCtxSynchronize(), "cuCtxSynchronize");
    return TRIC_SUCCESS;
}

/* ---- memory ----------------------------------------------------------------------------------- */

static tric_status cuda_alloc(struct tric_device_s *dev, struct tric_buffer_s *buf, size_t bytes) {
    CU_CHECK(dev, make_current(dev), "cuCtxSetCurrent");
    CUdeviceptr p = 0;
    CUresult r = api.cuMemAlloc(&p, bytes ? bytes : 256); /* a 0-byte request is an error there */
    if (r != CUDA_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "cuMemAlloc of %zu bytes", bytes);
        return cuda_fail(dev, r, what);
    }
    buf->addr = p;
    return TRIC_SUCCESS;
}

static void cuda_free(struct tric_buffer_s *buf) {
    if (make_current(buf->device) == CUDA_SUCCESS)
        api.cuMemFree(buf->addr);
}

/* The CUstream for an API stream: NULL means the device's own stream. */
static CUstream stream_of(struct tric_device_s *dev, struct tric_stream_s *s) {
    return (CUstream)(s ? s->cu_stream : dev->cu_stream);
}

void *rt_cuda_stream_of(struct tric_device_s *dev, struct tric_stream_s *s) {
    return stream_of(dev, s);
}

static bool cuda_capturing(struct tric_device_s *dev, struct tric_stream_s *s) {
    int status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (s)
        dev = s->device; /* a launch on another GPU than its module's (rt_launch_target) */
    /* An error here (a sticky fault) shows at the operation itself. */
    if (make_current(dev) != CUDA_SUCCESS ||
        api.cuStreamIsCapturing(stream_of(dev, s), &status) != CUDA_SUCCESS)
        return false;
    return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* Copies and memsets are issued on the stream and waited for, so that they complete before the
 * call returns whatever the direction (a plain cuMemcpyDtoD would not wait). */
static tric_status finish_on(struct tric_device_s *dev, CUresult r, struct tric_stream_s *s,
                             const char *what) {
    if (r != CUDA_SUCCESS)
        return cuda_fail(dev, r, what);
    r = api.cuStreamSynchronize(stream_of(dev, s));
    if (r != CUDA_SUCCESS)
        return cuda_fail(dev, r, "cuStreamSynchronize");
    return TRIC_SUCCESS;
}

static tric_status cuda_copy_h2d(struct tric_buffer_s *dst, size_t off, const void *src, size_t n,
                                 struct tric_stream_s *s) {
    CU_CHECK(dst->device, make_current(dst->device), "cuCtxSetCurrent");
    if (cuda_capturing(dst->device, s))
        return rt_capture_error("tric_copy_to_device (it waits for the copy)");
    CUstream cs = stream_of(dst->device, s);
    return finish_on(dst->device, api.cuMemcpyHtoDAsync(dst->addr + off, src, n, cs), s,
                     "cuMemcpyHtoDAsync");
}

static tric_status cuda_copy_d2h(void *dst, struct tric_buffer_s *src, size_t off, size_t n,
                                 struct tric_stream_s *s) {
    CU_CHECK(src->device, make_current(src->device), "cuCtxSetCurrent");
    if (cuda_capturing(src->device, s))
        return rt_capture_error("tric_copy_to_host (it waits for the copy)");
    CUstream cs = stream_of(src->device, s);
    return finish_on(src->device, api.cuMemcpyDtoHAsync(dst, src->addr + off, n, cs), s,
                     "cuMemcpyDtoHAsync");
}

static tric_status cuda_copy_h2d_async(struct tric_buffer_s *dst, size_t off, const void *src,
                                       size_t n, struct tric_stream_s *s) {
    CU_CHECK(dst->device, make_current(dst->device), "cuCtxSetCurrent");
    CU_CHECK(dst->device, api.cuMemcpyHtoDAsync(dst->addr + off, src, n, stream_of(dst->device, s)),
             "cuMemcpyHtoDAsync");
    return TRIC_SUCCESS;
}

static tric_status cuda_copy_d2h_async(void *dst, struct tric_buffer_s *src, size_t off, size_t n,
                                       struct tric_stream_s *s) {
    CU_CHECK(src->device, make_current(src->device), "cuCtxSetCurrent");
    CU_CHECK(src->device, api.cuMemcpyDtoHAsync(dst, src->addr + off, n, stream_of(src->device, s)),
             "cuMemcpyDtoHAsync");
    return TRIC_SUCCESS;
}

static tric_status cuda_copy_d2d(struct tric_buffer_s *dst, size_t doff, struct tric_buffer_s *src,
                                 size_t soff, size_t n, struct tric_stream_s *s) {
    CU_CHECK(dst->device, make_current(dst->device), "cuCtxSetCurrent");
    if (cuda_capturing(dst->device, s))
        return rt_capture_error("tric_copy_device (it waits for the copy)");
    CUstream cs = stream_of(dst->device, s);
    return finish_on(dst->device, api.cuMemcpyDtoDAsync(dst->addr + doff, src->addr + soff, n, cs),
                     s, "cuMemcpyDtoDAsync");
}

static tric_status cuda_memset(struct tric_buffer_s *dst, size_t off, int value, size_t n,
                               struct tric_stream_s *s) {
    CU_CHECK(dst->device, make_current(dst->device), "cuCtxSetCurrent");
    if (cuda_capturing(dst->device, s))
        return rt_capture_error("tric_memset (it waits for the copy)");
    CUstream cs = stream_of(dst->device, s);
    return finish_on(dst->device, api.cuMemsetD8Async(dst->addr + off, (unsigned char)value, n, cs),
                     s, "cuMemsetD8Async");
}

/* ---- streams ---------------------------------------------------------------------------------- */

static tric_status cuda_stream_create(struct tric_device_s *dev, struct tric_stream_s *s) {
    CU_CHECK(dev, make_current(dev), "cuCtxSetCurrent");
    CUstream cs = NULL;
    CU_CHECK(dev, api.cuStreamCreate(&cs, CU_STREAM_DEFAULT), "cuStreamCreate");
    s->cu_stream = cs;
    return TRIC_SUCCESS;
}

/* The legacy and per-thread default streams (cuda.h: CU_STREAM_LEGACY, CU_STREAM_PER_THREAD):
 * handles that stand for "the current context's", not objects of one context. */
static bool is_special_stream(void *cu_stream) { return (uintptr_t)cu_stream <= 2; }

static tric_status cuda_stream_wrap(struct tric_device_s *dev, void *cu_stream,
                                    struct tric_stream_s *s) {
    CU_CHECK(dev, make_current(dev), "cuCtxSetCurrent");
    if (!is_special_stream(cu_stream)) {
        CUcontext ctx = NULL;
        CU_CHECK(dev, api.cuStreamGetCtx((CUstream)cu_stream, &ctx), "cuStreamGetCtx");
        if (ctx != (CUcontext)dev->cu_context)
            return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                           "tric_stream_wrap: the CUstream belongs to another context than %s's "
                           "primary context (make it after cuCtxSetCurrent("
                           "tric_device_native_context(dev)))",
                           dev->name);
    }
    s->cu_stream = cu_stream;
    s->wrapped = true;
    return TRIC_SUCCESS;
}

/* Frees the workspaces of persistent kernels launched on s, once its work is done. */
static void free_workspaces(struct tric_stream_s *s, CUstream stream) {
    if (!s->workspace && !s->nretired_workspaces)
        return;
    if (make_current(s->device) == CUDA_SUCCESS) {
        api.cuStreamSynchronize(stream);
        if (s->workspace)
            api.cuMemFree(s->workspace);
        for (int i = 0; i < s->nretired_workspaces; i++)
            api.cuMemFree(s->retired_workspaces[i]);
    }
    free(s->retired_workspaces);
    s->retired_workspaces = NULL;
    s->nretired_workspaces = 0;
    s->workspace = 0;
    s->workspace_bytes = 0;
}

static void cuda_stream_destroy(struct tric_stream_s *s) {
    free_workspaces(s, (CUstream)s->cu_stream);
    if (s->wrapped)
        return; /* the caller's CUstream */
    if (s->cu_stream && make_current(s->device) == CUDA_SUCCESS)
        api.cuStreamDestroy((CUstream)s->cu_stream);
}

static tric_status cuda_stream_synchronize(struct tric_stream_s *s) {
    CU_CHECK(s->device, make_current(s->device), "cuCtxSetCurrent");
    CU_CHECK(s->device, api.cuStreamSynchronize((CUstream)s->cu_stream), "cuStreamSynchronize");
    return TRIC_SUCCESS;
}

/* ---- modules ---------------------------------------------------------------------------------- */

static tric_status cuda_load(struct tric_device_s *dev, struct tric_module_s *mod);
static void cuda_unload(struct tric_module_s *mod);
static tric_status cuda_ensure_loaded(struct tric_kernel_s *k);

/* The cache key material: everything the PTX depends on. */
static void key_material(StrBuf *sb, const struct tric_device_s *dev, const SrcFile *file,
                         const tric_compile_options *opt, const char *arch,
                         const struct tric_module_s *mod) {
    const char *libdevice = getenv("TRIC_LIBDEVICE");
    strbuf_append(sb, "tric-jit\n");
    rt_build_key(sb, libdevice && *libdevice ? libdevice : NULL);
    strbuf_printf(sb, "target %s\nfile %zu:%s\n", arch, strlen(file->name), file->name);
    rt_options_key(sb, opt, mod);
    strbuf_printf(sb, "source %zu:", file->len);
    strbuf_append_n(sb, file->text, file->len);
}

static tric_status compile_ptx(struct tric_device_s *dev, const SrcFile *file,
                               const tric_compile_options *opt, const char *arch,
                               struct tric_module_s *mod) {
    Arena *arena = arena_new();
    CompileOptions copt;
    tric_status st = rt_compile_options(opt, mod, arena, &copt);
    if (st != TRIC_SUCCESS) {
        arena_free(arena);
        return st;
    }
    copt.emit = EMIT_PTX;
    copt.arch = arch;
    const char *libdevice = getenv("TRIC_LIBDEVICE");
    if (libdevice && *libdevice)
        copt.libdevice_path = libdevice;
    Diag diag = {0};
    CompileResult res;
    memset(&res, 0, sizeof res);
    unsigned long failures = support_alloc_failures();
    bool ok = driver_compile(file, &copt, &res, &diag);
    arena_free(arena);
    if (support_alloc_failures() != failures) {
        st =
            rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "%s: out of host memory while compiling", file->name);
    } else if (!ok) {
        st = rt_fail(TRIC_ERROR_COMPILE, "%s",
                     diag.text.len ? diag.text.data : "compilation failed (no diagnostic)");
    } else {
        mod->code = strbuf_take(&res.output);
        if (!mod->code)
            st = rt_fail(TRIC_ERROR_COMPILE, "%s: the compiler produced no PTX", file->name);
        /* The library prints nothing, except what the environment asked for
         * (TRIC_PIPELINE_REMARKS): a successful compile's remarks go to stderr; a failed one's
         * are in its error message. */
        if (copt.remarks && diag.text.len)
            fputs(diag.text.data, stderr);
    }
    diag_free(&diag);
    compile_result_free(&res);
    return st;
}

static tric_status cuda_compile(struct tric_device_s *dev, const SrcFile *file,
                                const tric_compile_options *opt, struct tric_module_s *mod) {
    /* TRIC_ARCH overrides the device's own target (e.g. sm_90 instead of sm_90a), for A/B runs. */
    const char *env_arch = getenv("TRIC_ARCH");
    const char *arch = opt && opt->arch ? opt->arch : env_arch && *env_arch ? env_arch : dev->arch;
    char *dir = opt && opt->no_cache ? NULL : rt_cache_dir();
    StrBuf key = {0};
    if (dir) {
        key_material(&key, dev, file, opt, arch, mod);
        StrBuf payload = {0}, why = {0};
        if (rt_cache_lookup(dir, key.data, key.len, &payload, &why)) {
            mod->code = strbuf_take(&payload);
            mod->from_cache = true;
            /* A stale-but-intact entry that the driver rejects is recompiled below, never
             * trusted. */
            if (cuda_load(dev, mod) == TRIC_SUCCESS) {
                strbuf_free(&why);
                strbuf_free(&key);
                free(dir);
                return TRIC_SUCCESS;
            }
            cuda_unload(mod);
            free(mod->code);
            mod->code = NULL;
            mod->from_cache = false;
        }
        strbuf_free(&payload);
        strbuf_free(&why);
    }
    tric_status st = compile_ptx(dev, file, opt, arch, mod);
    if (st == TRIC_SUCCESS && dir) {
        StrBuf why = {0};
        rt_cache_store(dir, key.data, key.len, mod->code, strlen(mod->code), &why);
        strbuf_free(&why); /* a cache that cannot be written is not an error */
    }
    strbuf_free(&key);
    free(dir);
    if (st != TRIC_SUCCESS)
        return st;
    return cuda_load(dev, mod);
}

static tric_status find_function(struct tric_device_s *dev, void *cu_module, const KernelMeta *meta,
                                 struct tric_kernel_s *k);

/* Fills k from its metadata block and finds its function in the loaded CUmodule (cu_module NULL:
 * the parameters only). */
tric_status rt_cuda_bind_kernel(struct tric_device_s *dev, void *cu_module, const KernelMeta *meta,
                                struct tric_kernel_s *k) {
    snprintf(k->name, sizeof k->name, "%s", meta->name);
    Type types[RT_MAX_PARAMS];
    int n = meta->nparams < RT_MAX_PARAMS ? meta->nparams : RT_MAX_PARAMS;
    for (int i = 0; i < n; i++)
        types[i] = meta->params[i].type;
    tric_status st = rt_kernel_set_params(k, types, meta->nparams);
    if (st != TRIC_SUCCESS)
        return st;
    for (int i = 0; i < n; i++)
        rt_kernel_set_hint(k, i, meta->params[i].divisibility, meta->params[i].equal_to_1);
    k->threads = meta->threads ? meta->threads : 32 * (meta->num_warps ? meta->num_warps : 4);
    k->shared_bytes = meta->shared_bytes;
    /* kernel_meta_read checked the maps against the parameters. */
    k->ntmaps = meta->ntmaps;
    memcpy(k->tmaps, meta->tmaps, sizeof k->tmaps);
    k->persistent = meta->persistent;
    k->persistent_axes = meta->persistent_axes > 1 ? meta->persistent_axes : 1;
    k->workspace_bytes = meta->workspace_bytes;
    k->stages_raised_from = meta->stages_raised_from;
    StrBuf names = {0};
    for (int i = 0; i < meta->nparams && meta->params[0].name[0]; i++)
        strbuf_printf(&names, "%s%s", i ? " " : "", meta->params[i].name);
    rt_kernel_set_names(k, names.data ? names.data : "", meta->constexprs,
                        meta->config[0] ? meta->config : NULL);
    strbuf_free(&names);
    if (!cu_module)
        return TRIC_SUCCESS; /* a lazy module: the function is found at its first launch */
    return find_function(dev, cu_module, meta, k);
}

/* k's CUfunction in cu_module, loaded in dev's context (current), with the shared memory it needs
 * opted into. */
static tric_status function_in(struct tric_device_s *dev, void *cu_module,
                               const struct tric_kernel_s *k, CUfunction *out) {
    CUfunction fn = NULL;
    CUresult r = api.cuModuleGetFunction(&fn, (CUmodule)cu_module, k->name);
    if (r != CUDA_SUCCESS) {
        char what[200];
        snprintf(what, sizeof what, "cuModuleGetFunction(%s)", k->name);
        return cuda_fail(dev, r, what);
    }
    /* More dynamic shared memory than the device gives any block (48 KB so far) must be opted
     * into per function, up to the device's opt-in limit (CUDA C Programming Guide, "Shared
     * Memory", compute capability 7.0+). */
    if (k->shared_bytes > dev->max_shared_optin)
        return rt_fail(TRIC_ERROR_LAUNCH,
                       "%s: kernel %s needs %d bytes of shared memory per program; the device "
                       "allows at most %d (lower num_stages or the block sizes)",
                       dev->name, k->name, k->shared_bytes, dev->max_shared_optin);
    if (k->shared_bytes > dev->max_shared_default)
        CU_CHECK(dev,
                 api.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        k->shared_bytes),
                 "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    *out = fn;
    return TRIC_SUCCESS;
}

/* k's CUfunction in the loaded module, published with release (a lazy module's launches read it
 * without a lock). rt_cuda_bind_kernel has named k after meta. */
static tric_status find_function(struct tric_device_s *dev, void *cu_module, const KernelMeta *meta,
                                 struct tric_kernel_s *k) {
    (void)meta;
    CUfunction fn = NULL;
    tric_status st = function_in(dev, cu_module, k, &fn);
    if (st == TRIC_SUCCESS)
        __atomic_store_n(&k->cu_function, (void *)fn, __ATOMIC_RELEASE);
    return st;
}

/* Loads code into a CUmodule in dev's context; the kernel and target name it in messages. */
static tric_status load_module(struct tric_device_s *dev, const char *code, const char *kernel,
                               const char *target, CUmodule *out) {
    CU_CHECK(dev, make_current(dev), "cuCtxSetCurrent");
    /* The JIT's own messages (ptxas errors) come back in the error log (CUDA Driver API,
     * CUjit_option: CU_JIT_ERROR_LOG_BUFFER, size in/out). */
    static const size_t log_size = 16384;
    char *log = calloc(1, log_size);
    if (!log)
        return rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
    int opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[2] = {log, (void *)(uintptr_t)log_size};
    CUmodule cm = NULL;
    CUresult r = api.cuModuleLoadDataEx(&cm, code, 2, opts, vals);
    if (r != CUDA_SUCCESS) {
        char text[256];
        tric_status st = rt_fail(r == 2 ? TRIC_ERROR_OUT_OF_MEMORY : TRIC_ERROR_DRIVER,
                                 "%s: cuModuleLoadDataEx failed for kernel %s (target %s): %s%s%s",
                                 dev->name, kernel, target,
                                 rt_cuda_error_text(r, text, sizeof text), log[0] ? "\n" : "", log);
        free(log);
        return st;
    }
    free(log);
    *out = cm;
    return TRIC_SUCCESS;
}

/* Loads mod->code into mod->cu_module, in dev's context. */
static tric_status cuda_load_code(struct tric_device_s *dev, struct tric_module_s *mod,
                                  const KernelMeta *meta) {
    CUmodule cm = NULL;
    tric_status st = load_module(dev, mod->code, meta->name, meta->target, &cm);
    if (st == TRIC_SUCCESS)
        mod->cu_module = cm;
    return st;
}

/* The error for a PTX without a valid metadata block (why says what is wrong; freed). */
static tric_status not_tric_ptx(StrBuf *why) {
    tric_status st = rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                             "not a tric PTX module (no valid tric metadata block): %s",
                             why->len ? why->data : "");
    strbuf_free(why);
    return st;
}

static tric_status cuda_load(struct tric_device_s *dev, struct tric_module_s *mod) {
    KernelMeta meta;
    StrBuf err = {0};
    memset(&meta, 0, sizeof meta);
    if (!kernel_meta_read(mod->code, &meta, &err))
        return not_tric_ptx(&err);
    strbuf_free(&err);
    if (mod->lazy_load)
        return rt_cuda_bind_kernel(dev, NULL, &meta, &mod->kernel);
    tric_status st = cuda_load_code(dev, mod, &meta);
    if (st != TRIC_SUCCESS)
        return st;
    return rt_cuda_bind_kernel(dev, mod->cu_module, &meta, &mod->kernel);
}

/* A PTX from `tric`: one kernel (the module's own), or several -- an autotuned kernel's configs
 * -- each a member module sharing mod's CUmodule, with a tuned member per tuning group. */
static tric_status cuda_load_ptx(struct tric_device_s *dev, struct tric_module_s *mod) {
    KernelMeta *metas = NULL;
    StrBuf err = {0};
    int n = kernel_meta_read_all(mod->code, &metas, &err);
    if (n < 0)
        return not_tric_ptx(&err);
    strbuf_free(&err);
    tric_status st = cuda_load_code(dev, mod, &metas[0]);
    if (st == TRIC_SUCCESS && n == 1 && !metas[0].tune_name[0]) {
        st = rt_cuda_bind_kernel(dev, mod->cu_module, &metas[0], &mod->kernel);
        free(metas);
        return st;
    }
    mod->members = st == TRIC_SUCCESS ? calloc((size_t)n + 8, sizeof *mod->members) : NULL;
    if (st == TRIC_SUCCESS && !mod->members)
        st = rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
    for (int i = 0; st == TRIC_SUCCESS && i < n; i++) {
        struct tric_module_s *m = rt_module_new(dev);
        if (!m) {
            st = rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "out of host memory");
            break;
        }
        m->shares_cu_module = true;
        m->container = mod;
        mod->members[mod->nmembers++] = m;
        st = rt_cuda_bind_kernel(dev, mod->cu_module, &metas[i], &m->kernel);
    }
    if (st == TRIC_SUCCESS)
        st = rt_tune_groups(mod, metas, n);
    free(metas);
    return st;
}

/* A lazy module's first launch: the driver's JIT loads the PTX now, once. */
static tric_status load_lazily(struct tric_kernel_s *k) {
    struct tric_module_s *mod = k->module;
    struct tric_device_s *dev = mod->device;
    tric_status st = TRIC_SUCCESS;
    pthread_mutex_lock(&mod->load_lock);
    if (!k->cu_function) {
        KernelMeta meta;
        StrBuf err = {0};
        if (!kernel_meta_read(mod->code, &meta, &err))
            st = rt_fail(TRIC_ERROR_INVALID_ARGUMENT, "%s: %s", k->name, err.data ? err.data : "");
        strbuf_free(&err);
        if (st == TRIC_SUCCESS)
            st = cuda_load_code(dev, mod, &meta);
        if (st == TRIC_SUCCESS)
            st = find_function(dev, mod->cu_module, &meta, k);
    }
    pthread_mutex_unlock(&mod->load_lock);
    return st;
}

static void cuda_unload(struct tric_module_s *mod) {
    if (mod->cu_module && make_current(mod->device) == CUDA_SUCCESS)
        api.cuModuleUnload((CUmodule)mod->cu_module);
    mod->cu_module = NULL;
    for (int i = 0; i < RT_MAX_DEVICES; i++) {
        RtDeviceLoad *l = &mod->loaded_on[i];
        if (!l->cu_context)
            continue;
        if (l->cu_module && make_context_current((CUcontext)l->cu_context) == CUDA_SUCCESS)
            api.cuModuleUnload((CUmodule)l->cu_module);
        /* The release may destroy the context (no tric_device holds it any more): never trust
         * this thread's cache of it afterwards. */
        if (current_context == (CUcontext)l->cu_context)
            current_context = NULL;
        api.cuDevicePrimaryCtxRelease(l->cu_device);
        *l = (RtDeviceLoad){0};
    }
}

/* ---- several GPUs ----------------------------------------------------------------------------
 * A module is compiled (to PTX) once, for its own device, and loaded there. Its first launch on
 * another GPU loads the same PTX into that GPU's primary context (the module holding the code --
 * a member's container -- keeps that CUmodule by ordinal, and retains the context while it does)
 * and finds the kernel's function there (kept by ordinal in the kernel). Both are filled under the
 * holder's load_lock and the function published with release, so later launches on that GPU, from
 * any thread, read it without a lock. docs/runtime.md "Several GPUs". */

/* holder's code in dev's context: loaded now if it is not yet (holder->load_lock held). */
static tric_status module_on(struct tric_device_s *dev, struct tric_module_s *holder,
                             const struct tric_kernel_s *k, CUmodule *out) {
    RtDeviceLoad *l = &holder->loaded_on[dev->ordinal];
    if (l->cu_module) {
        *out = (CUmodule)l->cu_module;
        return TRIC_SUCCESS;
    }
    if (!holder->code)
        return rt_fail(TRIC_ERROR_LAUNCH, "%s: kernel %s has no code to load on this device",
                       dev->name, k->name);
    KernelMeta meta;
    memset(&meta, 0, sizeof meta);
    StrBuf err = {0};
    bool ok = kernel_meta_read(holder->code, &meta, &err);
    strbuf_free(&err);
    CUcontext ctx = NULL;
    CU_CHECK(dev, api.cuDevicePrimaryCtxRetain(&ctx, dev->cu_device), "cuDevicePrimaryCtxRetain");
    CUmodule cm = NULL;
    tric_status st = load_module(dev, holder->code, k->name, ok ? meta.target : "?", &cm);
    if (st != TRIC_SUCCESS) {
        api.cuDevicePrimaryCtxRelease(dev->cu_device);
        return st;
    }
    *l = (RtDeviceLoad){.cu_device = dev->cu_device, .cu_context = ctx, .cu_module = cm};
    *out = cm;
    return TRIC_SUCCESS;
}

/* k's function on dev, another GPU than its module's: loaded there at the first launch. */
static tric_status function_on(struct tric_device_s *dev, struct tric_kernel_s *k,
                               struct tric_stream_s *s, CUfunction *out) {
    if (dev->ordinal < 0 || dev->ordinal >= RT_MAX_DEVICES)
        return rt_fail(TRIC_ERROR_UNSUPPORTED,
                       "%s: tric launches a module made on another device only on cuda:0 to "
                       "cuda:%d (compile %s on this device instead)",
                       dev->name, RT_MAX_DEVICES - 1, k->name);
    void **slot = &k->cu_function_on[dev->ordinal];
    *out = (CUfunction)__atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (*out)
        return TRIC_SUCCESS;
    /* Loading a module while the stream is captured would break the capture. */
    if (cuda_capturing(dev, s))
        return rt_capture_error("loading the kernel's code at its first launch on this device");
    struct tric_module_s *holder =
        k->module->shares_cu_module && k->module->container ? k->module->container : k->module;
    pthread_mutex_lock(&holder->load_lock);
    tric_status st = TRIC_SUCCESS;
    if (!*slot) {
        CUmodule cm = NULL;
        CUfunction fn = NULL;
        st = module_on(dev, holder, k, &cm);
        CUresult r = st == TRIC_SUCCESS ? make_current(dev) : CUDA_SUCCESS;
        if (r != CUDA_SUCCESS)
            st = cuda_fail(dev, r, "cuCtxSetCurrent");
        if (st == TRIC_SUCCESS)
            st = function_in(dev, cm, k, &fn);
        if (st == TRIC_SUCCESS)
            __atomic_store_n(slot, (void *)fn, __ATOMIC_RELEASE);
    }
    *out = (CUfunction)*slot;
    pthread_mutex_unlock(&holder->load_lock);
    return st;
}

/* ---- timing (autotuning) ------------------------------------------------------------------ */

static tric_status cuda_kernel_attributes(struct tric_kernel_s *k, tric_kernel_attrs *out) {
    struct tric_device_s *dev = k->module->device;
    tric_status st = cuda_ensure_loaded(k);
    if (st != TRIC_SUCCESS)
        return st;
    CU_CHECK(dev, make_current(dev), "cuCtxSetCurrent");
    CUfunction fn = (CUfunction)k->cu_function;
    static const struct {
        int attribute;
        size_t field;
        const char *what;
    } attrs[] = {
        {CU_FUNC_ATTRIBUTE_NUM_REGS, offsetof(tric_kernel_attrs, registers), "NUM_REGS"},
        {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, offsetof(tric_kernel_attrs, spill_bytes),
         "LOCAL_SIZE_BYTES"},
        {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, offsetof(tric_kernel_attrs, static_shared_bytes),
         "SHARED_SIZE_BYTES"},
        {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
         offsetof(tric_kernel_attrs, max_threads_per_block), "MAX_THREADS_PER_BLOCK"},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        char what[80];
        snprintf(what, sizeof what, "cuFuncGetAttribute(%s)", attrs[i].what);
        CU_CHECK(
            dev,
            api.cuFuncGetAttribute((int *)((char *)out + attrs[i].field), attrs[i].attribute, fn),
            what);
    }
    CU_CHECK(dev,
             api.cuOccupancyMaxActiveBlocksPerMultiprocessor(&out->active_blocks_per_sm, fn,
                                                             k->threads, (size_t)k->shared_bytes),
             "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    out->multiprocessors = dev->multiprocessors;
    return TRIC_SUCCESS;
}

static tric_status cuda_ensure_loaded(struct tric_kernel_s *k) {
    return __atomic_load_n(&k->cu_function, __ATOMIC_ACQUIRE) ? TRIC_SUCCESS : load_lazily(k);
}

/* run(ctx) between the events start and end, after zeroing flush (outside them) when given. */
static tric_status timed_run(struct tric_device_s *dev, CUstream stream,
                             const struct tric_buffer_s *flush, tric_status (*run)(void *ctx),
                             void *ctx, CUevent start, CUevent end) {
    CUresult r;
    if (flush && (r = api.cuMemsetD8Async(flush->addr, 0, flush->bytes, stream)) != CUDA_SUCCESS)
        return cuda_fail(dev, r, "cuMemsetD8Async (the L2 flush)");
    if ((r = api.cuEventRecord(start, stream)) != CUDA_SUCCESS)
        return cuda_fail(dev, r, "cuEventRecord");
    tric_status st = run(ctx);
    if (st == TRIC_SUCCESS && (r = api.cuEventRecord(end, stream)) != CUDA_SUCCESS)
        st = cuda_fail(dev, r, "cuEventRecord");
    return st;
}

/* One timed_run on its own, waited for: its time in *ms. */
static tric_status timed_once(struct tric_device_s *dev, CUstream stream,
                              const struct tric_buffer_s *flush, tric_status (*run)(void *ctx),
                              void *ctx, CUevent start, CUevent end, float *ms) {
    tric_status st = timed_run(dev, stream, flush, run, ctx, start, end);
    CUresult r;
    if (st == TRIC_SUCCESS && ((r = api.cuEventSynchronize(end)) != CUDA_SUCCESS ||
                               (r = api.cuEventElapsedTime(ms, start, end)) != CUDA_SUCCESS))
        st = cuda_fail(dev, r, "timing a config (cuEvent*)");
    return st;
}

static tric_status cuda_time(struct tric_device_s *dev, struct tric_stream_s *s,
                             tric_status (*run)(void *ctx), void *ctx, double warmup_ms,
                             double rep_ms, double give_up_ms, const struct tric_buffer_s *flush,
                             double *median_ms) {
    enum { MAX_REPS = 100 };
    if (s)
        dev = s->device; /* tuning a module made on another GPU (rt_launch_target) */
    CUstream stream = stream_of(dev, s);
    CUevent ev[2 * MAX_REPS]; /* run i between ev[2 i] and ev[2 i + 1] */
    int nev = 0;
    tric_status st = TRIC_SUCCESS;
    CUresult r = make_current(dev);
    for (; r == CUDA_SUCCESS && nev < 2 * MAX_REPS; nev++)
        r = api.cuEventCreate(&ev[nev], CU_EVENT_DEFAULT);
    if (r != CUDA_SUCCESS)
        st = cuda_fail(dev, r, "cuEventCreate");
    /* One timed run estimates (the caller has compiled and loaded what it runs). */
    float est = 0;
    if (st == TRIC_SUCCESS)
        st = timed_once(dev, stream, flush, run, ctx, ev[0], ev[1], &est);
    if (st == TRIC_SUCCESS && give_up_ms > 0 && est > give_up_ms) {
        /* A first launch can carry what only it pays (a persistent kernel's workspace allocated,
         * tensor maps encoded: host time between the events), so a second run says whether it
         * is really far slower. */
        float again = 0;
        st = timed_once(dev, stream, flush, run, ctx, ev[0], ev[1], &again);
        est = again < est ? again : est;
    }
    if (st == TRIC_SUCCESS && give_up_ms > 0 && est > give_up_ms) {
        /* Far slower than the best so far: two runs say enough (a 32768^3 matmul with a poor
         * config takes seconds per launch). */
        for (int i = 0; i < nev; i++)
            api.cuEventDestroy(ev[i]);
        *median_ms = est;
        return TRIC_SUCCESS;
    }
    double each = est > 1e-4 ? est : 1e-4;
    int warm = (int)(warmup_ms / each), reps = (int)(rep_ms / each);
    warm = warm < 0 ? 0 : warm > 1000 ? 1000 : warm;
    reps = reps < 1 ? 1 : reps > MAX_REPS ? MAX_REPS : reps;
    for (int i = 0; st == TRIC_SUCCESS && i < warm; i++)
        st = run(ctx);
    for (int i = 0; st == TRIC_SUCCESS && i < reps; i++)
        st = timed_run(dev, stream, flush, run, ctx, ev[2 * i], ev[2 * i + 1]);
    if (st == TRIC_SUCCESS && (r = api.cuEventSynchronize(ev[2 * reps - 1])) != CUDA_SUCCESS)
        st = cuda_fail(dev, r, "timing a config (cuEventSynchronize)");
    double ms[MAX_REPS];
    for (int i = 0; st == TRIC_SUCCESS && i < reps; i++) {
        float t = 0;
        if ((r = api.cuEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1])) != CUDA_SUCCESS)
            st = cuda_fail(dev, r, "cuEventElapsedTime");
        ms[i] = t;
    }
    for (int i = 0; i < nev; i++)
        api.cuEventDestroy(ev[i]);
    if (st != TRIC_SUCCESS)
        return st;
    /* The median: insertion sort, at most 100 values. */
    for (int i = 1; i < reps; i++)
        for (int j = i; j > 0 && ms[j] < ms[j - 1]; j--) {
            double t = ms[j];
            ms[j] = ms[j - 1];
            ms[j - 1] = t;
        }
    *median_ms = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
    return TRIC_SUCCESS;
}

/* ---- launch ----------------------------------------------------------------------------------- */

/* Encodes k's tensor map i from a (rt_tensor_map_args checked it first, so a bad value is named
 * instead of the driver's CUDA_ERROR_INVALID_VALUE); rt_tensor_maps_make calls it on a cache miss. */
static tric_status encode_tensor_map(const struct tric_kernel_s *k, int i, const RtTensorMapArgs *a,
                                     CUtensorMap *map) {
    struct tric_device_s *dev = k->module->device;
    if (!api.cuTensorMapEncodeTiled) {
        int version = 0;
        api.cuDriverGetVersion(&version);
        return rt_fail(TRIC_ERROR_UNSUPPORTED,
                       "%s: kernel %s reads through TMA tensor maps, but libcuda.so.1 (driver CUDA "
                       "%d.%d) has no cuTensorMapEncodeTiled",
                       dev->name, k->name, version / 1000, version % 1000 / 10);
    }
    /* a->strides is passed even for a rank-1 map, which has no stride to give: the driver refuses
     * a NULL globalStrides there (CUDA_ERROR_INVALID_VALUE, seen on driver 580). */
    CUresult r = api.cuTensorMapEncodeTiled(
        map, a->data_type, a->rank, (void *)(uintptr_t)a->address, a->dims, a->strides, a->box,
        a->element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, a->swizzle, a->l2_promotion,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        char what[200];
        snprintf(what, sizeof what, "cuTensorMapEncodeTiled(%s, tensor map %d)", k->name, i);
        return cuda_fail(dev, r, what);
    }
    return TRIC_SUCCESS;
}

/* ---- persistent kernels ------------------------------------------------------------------------
 * A kernel made persistent (passes/stream_k.c, passes/persistent.c; docs/runtime.md "Persistent
 * kernels") runs as many programs as the GPU holds at once -- its SMs times the kernel's blocks per
 * SM, the occupancy cuOccupancyMaxActiveBlocksPerMultiprocessor gives for its threads, registers
 * and shared memory (a 128x128x32 tile in 64 KB runs three programs an SM, as its grid would) -- at
 * most the grid's tiles, x y z, all along x. The launch passes the grid's x (an i32) and a
 * workspace (a pointer) after the tensor maps, then the grid's y (an i32) when the kernel takes 2
 * or 3 axes (KernelMeta.persistent_axes) and its z (an i32) when 3; an axis the kernel does not
 * take must be 1. The workspace holds TRIC_WORKSPACE_FLAGS i32 flags per program, zero at every
 * launch's start (zeroed when allocated; every launch leaves its flags zero), then, from the next
 * 256-byte boundary, workspace_bytes per program. One per stream, since launches on one stream run
 * one after another; sized for that many programs, so any launch of the kernel fits. A kernel
 * that reads none (workspace_bytes -1, `workspace=none`: a grid made persistent) is passed a null
 * pointer, and its launches allocate nothing. */

/* The workspace for k's launches on s (NULL: the device's own stream), at least `bytes`. */
static tric_status stream_workspace(struct tric_device_s *dev, struct tric_stream_s *s,
                                    size_t bytes, uint64_t *out) {
    struct tric_stream_s *owner = s ? s : &dev->own_stream;
    pthread_mutex_lock(&dev->lock);
    tric_status st = TRIC_SUCCESS;
    if (owner->workspace_bytes < bytes) {
        uint64_t *retired = NULL;
        CUdeviceptr p = 0;
        CUresult r = CUDA_SUCCESS;
        if (cuda_capturing(dev, s))
            st = rt_capture_error("allocating a persistent kernel's workspace at its first launch "
                                  "on the stream");
        else if (owner->workspace &&
                 !(retired = realloc(owner->retired_workspaces,
                                     sizeof *retired * (size_t)(owner->nretired_workspaces + 1))))
            st = rt_fail(TRIC_ERROR_OUT_OF_MEMORY, "%s: out of host memory", dev->name);
        else if ((r = api.cuMemAlloc(&p, bytes)) != CUDA_SUCCESS ||
                 (r = api.cuMemsetD8(p, 0, bytes)) != CUDA_SUCCESS) {
            if (p)
                api.cuMemFree(p);
            char what[96];
            snprintf(what, sizeof what, "a persistent kernel's workspace of %zu bytes", bytes);
            st = cuda_fail(dev, r, what);
        }
        if (retired)
            owner->retired_workspaces = retired;
        if (st == TRIC_SUCCESS) {
            if (owner->workspace)
                owner->retired_workspaces[owner->nretired_workspaces++] = owner->workspace;
            owner->workspace = p;
            owner->workspace_bytes = bytes;
        }
    }
    *out = owner->workspace;
    pthread_mutex_unlock(&dev->lock);
    return st;
}

/* A persistent kernel's launch: the programs it runs (*grid becomes (them, 1, 1)), and its extra
 * parameters' values: tiles[0] the grid's x, tiles[1] and tiles[2] its y and z (passed as the
 * kernel's axes ask). */
static tric_status persistent_launch(struct tric_kernel_s *k, struct tric_device_s *dev,
                                     struct tric_stream_s *s, CUfunction fn, tric_dim3 *grid,
                                     uint64_t tiles[3], uint64_t *workspace) {
    int axes = k->persistent_axes;
    if ((grid->y != 1 && axes < 2) || (grid->z != 1 && axes < 3))
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                       "%s: kernel %s is persistent, so its grid is one tile per program along %s; "
                       "got (%u, %u, %u)",
                       dev->name, k->name, axes == 2 ? "x and y" : "x", grid->x, grid->y, grid->z);
    /* the kernel counts its tiles in an i32 (tile_count) */
    uint64_t count = (uint64_t)grid->x * grid->y * grid->z;
    if (count > (uint64_t)INT32_MAX)
        return rt_fail(TRIC_ERROR_INVALID_ARGUMENT,
                       "%s: kernel %s is persistent and its grid (%u, %u, %u) has %llu tiles; "
                       "at most %d",
                       dev->name, k->name, grid->x, grid->y, grid->z, (unsigned long long)count,
                       INT32_MAX);
    int blocks = __atomic_load_n(&k->blocks_per_sm, __ATOMIC_ACQUIRE);
    if (blocks <= 0) {
        CU_CHECK(dev,
                 api.cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, k->threads,
                                                                 (size_t)k->shared_bytes),
                 "cuOccupancyMaxActiveBlocksPerMultiprocessor");
        blocks = blocks > 0 ? blocks : 1;
        __atomic_store_n(&k->blocks_per_sm, blocks, __ATOMIC_RELEASE);
    }
    size_t programs =
        (size_t)(dev->multiprocessors > 0 ? dev->multiprocessors : 1) * (size_t)blocks;
    size_t flags = (size_t)workspace_scratch_offset(programs);
    *workspace = 0; /* workspace=none: the kernel reads none, so none is made (nor refused) */
    tric_status st =
        k->workspace_bytes < 0
            ? TRIC_SUCCESS
            : stream_workspace(dev, s, flags + programs * (size_t)k->workspace_bytes, workspace);
    if (st != TRIC_SUCCESS)
        return st;
    tiles[0] = grid->x, tiles[1] = grid->y, tiles[2] = grid->z;
    grid->x = (unsigned)(count < programs ? count : programs);
    grid->y = grid->z = 1;
    return TRIC_SUCCESS;
}

/* A programmatic dependent launch (tric_launch_options.programmatic_dependent on sm_90+): the
 * kernel may begin once every program of the one before it on the stream has run
 * griddepcontrol.launch_dependents or exited, and its griddepcontrol.wait waits for that one's
 * completion (PTX ISA 9.7.13.11 griddepcontrol; CUDA Driver API cuLaunchKernelEx with
 * CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION). */
static CUresult launch_dependent(const struct tric_kernel_s *k, CUfunction fn, tric_dim3 grid,
                                 CUstream stream, void **params) {
    CUlaunchAttribute attr = {.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION};
    attr.value.programmatic_stream_serialization_allowed = 1;
    CUlaunchConfig config = {
        .grid_x = grid.x,
        .grid_y = grid.y,
        .grid_z = grid.z,
        .block_x = (unsigned)k->threads,
        .block_y = 1,
        .block_z = 1,
        .shared_bytes = (unsigned)k->shared_bytes,
        .stream = stream,
        .attrs = &attr,
        .nattrs = 1,
    };
    return api.cuLaunchKernelEx(&config, fn, params, NULL);
}

static tric_status cuda_launch(struct tric_kernel_s *k, tric_dim3 grid, const tric_arg *args,
                               struct tric_stream_s *s, const tric_launch_options *options) {
    /* cuLaunchKernel copies every parameter out of the slots before it returns (CUDA Driver API,
     * cuLaunchKernel: kernelParams), so the slots live on this stack frame. Each parameter is read
     * with its declared PTX size from the start of its slot: little-endian, so an int slot works
     * for .u8/.u16/.u32 parameters alike. */
    uint64_t slots[RT_MAX_PARAMS];
    void *params[RT_MAX_PARAMS + TRIC_MAX_TENSOR_MAPS + 4];
    for (int i = 0; i < k->nparams; i++) {
        const tric_arg *a = &args[i];
        uint64_t v = 0;
        switch ((RtParamKind)k->param_kind[i]) {
        case RT_PARAM_PTR:
            v = a->kind == TRIC_ARG_BUFFER ? a->v.buf.buffer->addr + a->v.buf.offset : a->v.address;
            break;
        case RT_PARAM_I32: v = (uint32_t)a->v.i32; break;
        case RT_PARAM_I64: v = (uint64_t)a->v.i64; break;
        case RT_PARAM_F16: v = tric_f32_to_f16(a->v.f32); break;
        case RT_PARAM_BF16: v = tric_f32_to_bf16(a->v.f32); break;
        case RT_PARAM_F32: memcpy(&v, &a->v.f32, 4); break;
        case RT_PARAM_F64: memcpy(&v, &a->v.f64, 8); break;
        }
        slots[i] = v;
        params[i] = &slots[i];
    }
    struct tric_device_s *dev = s ? s->device : k->module->device;
    /* not a kernel with a workspace: the stream's is shared with the kernel before it, and no
     * gdc_wait of the kernel's orders tric's use of it; refused before any work when the driver
     * cannot launch so */
    bool dependent = options && options->programmatic_dependent && dev->sm >= 90 &&
                     !(k->persistent && k->workspace_bytes >= 0);
    if (dependent && !api.cuLaunchKernelEx)
        return rt_fail(TRIC_ERROR_UNSUPPORTED,
                       "%s: a programmatic dependent launch of %s needs cuLaunchKernelEx, which "
                       "this driver does not have (CUDA 12.0 or later)",
                       dev->name, k->name);
    void *fn = NULL;
    if (dev->cu_context != k->module->device->cu_context) {
        /* Another GPU than the module's (rt_launch_target). */
        CUfunction f = NULL;
        tric_status st = function_on(dev, k, s, &f);
        if (st != TRIC_SUCCESS)
            return st;
        fn = f;
    } else if (!(fn = __atomic_load_n(&k->cu_function, __ATOMIC_ACQUIRE))) {
        /* Loading a module while the stream is captured would break the capture. */
        if (cuda_capturing(dev, s))
            return rt_capture_error("loading the kernel's code at its first launch");
        tric_status st = load_lazily(k);
        if (st != TRIC_SUCCESS)
            return st;
        fn = k->cu_function;
    }
    CUresult r = make_current(dev);
    /* The tensor maps follow the run-time parameters (docs/ptx-metadata.md, "tensor_map"). Each
     * lives in this frame like the slots (cuLaunchKernel copies it), 64-byte aligned as
     * cuTensorMapEncodeTiled requires. */
    CUtensorMap maps[TRIC_MAX_TENSOR_MAPS];
    if (r == CUDA_SUCCESS && k->ntmaps) {
        tric_status st = rt_tensor_maps_make(k, args, encode_tensor_map, maps);
        if (st != TRIC_SUCCESS)
            return st;
        for (int i = 0; i < k->ntmaps; i++)
            params[k->nparams + i] = &maps[i];
    }
    uint64_t tiles[3] = {0}; /* each read as the .u32 it is declared, like the slots */
    uint64_t workspace = 0;
    if (r == CUDA_SUCCESS && k->persistent) {
        tric_status st = persistent_launch(k, dev, s, (CUfunction)fn, &grid, tiles, &workspace);
        if (st != TRIC_SUCCESS)
            return st;
        /* x, the workspace, then y and z as the kernel's axes ask (docs/ptx-metadata.md) */
        void **extra = &params[k->nparams + k->ntmaps];
        extra[0] = &tiles[0];
        extra[1] = &workspace;
        for (int a = 1; a < k->persistent_axes; a++)
            extra[1 + a] = &tiles[a];
    }
    if (r == CUDA_SUCCESS)
        r = dependent ? launch_dependent(k, (CUfunction)fn, grid, stream_of(dev, s), params)
                      : api.cuLaunchKernel((CUfunction)fn, grid.x, grid.y, grid.z,
                                           (unsigned)k->threads, 1, 1, (unsigned)k->shared_bytes,
                                           stream_of(dev, s), params, NULL);
    if (r != CUDA_SUCCESS) {
        char what[320];
        snprintf(what, sizeof what, "%s(%s, grid (%u, %u, %u), %d threads, %d bytes shared%s)",
                 dependent ? "cuLaunchKernelEx" : "cuLaunchKernel", k->name, grid.x, grid.y, grid.z,
                 k->threads, k->shared_bytes,
                 dependent ? ", programmatic stream serialization" : "");
        return cuda_fail(dev, r, what);
    }
    return TRIC_SUCCESS;
}

const RtDeviceOps rt_cuda_ops = {
    .interprets_ir = false,
    .ahead_of_time_form = "PTX",
    .launches_on_other_devices = true,
    .synchronize = cuda_synchronize,
    .close = cuda_close,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy_to_device = cuda_copy_h2d,
    .copy_to_host = cuda_copy_d2h,
    .copy_to_device_async = cuda_copy_h2d_async,
    .copy_to_host_async = cuda_copy_d2h_async,
    .copy_device = cuda_copy_d2d,
    .memset = cuda_memset,
    .stream_create = cuda_stream_create,
    .stream_wrap = cuda_stream_wrap,
    .stream_destroy = cuda_stream_destroy,
    .stream_synchronize = cuda_stream_synchronize,
    .capturing = cuda_capturing,
    .compile = cuda_compile,
    .load_ptx = cuda_load_ptx,
    .unload = cuda_unload,
    .ensure_loaded = cuda_ensure_loaded,
    .kernel_attributes = cuda_kernel_attributes,
    .launch = cuda_launch,
    .time = cuda_time,
};
