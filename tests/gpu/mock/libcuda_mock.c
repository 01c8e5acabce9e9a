/* libcuda_mock.c: a stand-in libcuda.so.1 for testing tric's cuda device on machines with no GPU.
 * It implements the entry points runtime/cuda_api.h lists, behind cuGetProcAddress_v2, with host
 * memory as "device" memory. Kernels are not run, except one the tests know: vector_add_kernel
 * (seed 1) is computed in C from the packed parameters, so a wrong packing shows as wrong sums.
 * Every launch's raw parameter bytes are recorded for the tests (mock_state, found with dlsym).
 * Faults: a vector_add whose pointer is below 4096 makes CUDA_ERROR_ILLEGAL_ADDRESS, sticky like
 * the real one; PTX containing "this is not ptx" is rejected with a JIT log.
 * Several GPUs: mock_state.devices (or TRIC_MOCK_DEVICES in the environment; default 1) devices,
 * each with its own primary context; a module belongs to the context current when it was loaded,
 * and launching its function with another context current fails as on a real driver
 * (CUDA_ERROR_INVALID_HANDLE). Launches are counted per device. Thread-safe where tric calls it
 * from several threads at once (launches, loads, retains). */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock_state.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

typedef struct MockFunction {
    char name[128];
    int max_dynamic_shared;
    int device;   /* its module's */
    int launches; /* run so far */
} MockFunction;

typedef struct MockModule {
    char *image;
    MockFunction functions[8];
    int nfunctions;
    int device; /* the device whose context was current at the load */
} MockModule;

MockState mock_state;

/* Serializes what tric may call from several threads at once. */
static pthread_mutex_t mock_lock = PTHREAD_MUTEX_INITIALIZER;
/* The device whose primary context is current on this thread (-1: none), as a real driver keeps
 * the current context per thread. */
static _Thread_local int current_device = -1;

static int device_count(void)
{
    if (mock_state.devices <= 0) {
        const char *env = getenv("TRIC_MOCK_DEVICES");
        mock_state.devices = env && atoi(env) > 0 ? atoi(env) : 1;
        if (mock_state.devices > MOCK_MAX_DEVICES)
            mock_state.devices = MOCK_MAX_DEVICES;
    }
    return mock_state.devices;
}

enum {
    OK = 0,
    INVALID_VALUE = 1,
    OUT_OF_MEMORY = 2,
    INVALID_PTX = 218,
    INVALID_HANDLE = 400,
    NOT_FOUND = 500,
    ILLEGAL_ADDRESS = 700
};

static CUresult sticky_or(CUresult r) { return mock_state.sticky ? mock_state.sticky : r; }

static CUresult cuInit(unsigned flags) { return OK; }
CUresult cuDriverGetVersion(int *v)
{
    *v = 12080;
    return OK;
} /* exported, like cuGetProcAddress_v2 */

static CUresult cuGetErrorName(CUresult e, const char **s)
{
    switch (e) {
    case OK: *s = "CUDA_SUCCESS"; return OK;
    case INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; return OK;
    case OUT_OF_MEMORY: *s = "CUDA_ERROR_OUT_OF_MEMORY"; return OK;
    case INVALID_PTX: *s = "CUDA_ERROR_INVALID_PTX"; return OK;
    case NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; return OK;
    case INVALID_HANDLE: *s = "CUDA_ERROR_INVALID_HANDLE"; return OK;
    case ILLEGAL_ADDRESS: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; return OK;
    }
    *s = NULL;
    return INVALID_VALUE;
}

static CUresult cuGetErrorString(CUresult e, const char **s)
{
    switch (e) {
    case OK: *s = "no error"; return OK;
    case INVALID_VALUE: *s = "invalid argument"; return OK;
    case OUT_OF_MEMORY: *s = "out of memory"; return OK;
    case INVALID_PTX: *s = "a PTX JIT compilation failed"; return OK;
    case NOT_FOUND: *s = "named symbol not found"; return OK;
    case INVALID_HANDLE: *s = "invalid resource handle"; return OK;
    case ILLEGAL_ADDRESS: *s = "an illegal memory access was encountered"; return OK;
    }
    *s = NULL;
    return INVALID_VALUE;
}

static CUresult cuDeviceGetCount(int *n)
{
    *n = device_count();
    return OK;
}
static CUresult cuDeviceGet(int *d, int ordinal)
{
    *d = ordinal;
    return ordinal >= 0 && ordinal < device_count() ? OK : 101;
}
static CUresult cuDeviceGetName(char *name, int len, int dev)
{
    snprintf(name, (size_t)len, "tric mock GPU");
    return OK;
}
static CUresult cuDeviceGetAttribute(int *v, int attr, int dev)
{
    /* An H100's: sm_90, 132 SMs, 48 KB of shared memory per block, 227 KB when opted into. */
    int sms = dev >= 0 && dev < MOCK_MAX_DEVICES && mock_state.device_sms[dev]
                  ? mock_state.device_sms[dev]
                  : 132;
    *v = attr == 75   ? 9
         : attr == 76 ? 0
         : attr == 16 ? sms
         : attr == 8  ? 49152
         : attr == 97 ? 232448
                      : 0;
    return OK;
}
static int contexts[MOCK_MAX_DEVICES]; /* each device's primary context: &contexts[device] */
static CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
    if (dev < 0 || dev >= device_count())
        return 101; /* CUDA_ERROR_INVALID_DEVICE */
    *ctx = &contexts[dev];
    __atomic_add_fetch(&mock_state.live_retains[dev], 1, __ATOMIC_RELAXED);
    return OK;
}
static CUresult cuDevicePrimaryCtxRelease(int dev)
{
    if (dev < 0 || dev >= device_count())
        return 101;
    __atomic_sub_fetch(&mock_state.live_retains[dev], 1, __ATOMIC_RELAXED);
    return OK;
}
static CUresult cuCtxSetCurrent(void *ctx)
{
    __atomic_add_fetch(&mock_state.ctx_set_current_calls, 1, __ATOMIC_RELAXED);
    int *c = ctx;
    current_device = c >= contexts && c < contexts + MOCK_MAX_DEVICES ? (int)(c - contexts) : -1;
    return OK;
}
static CUresult cuCtxSynchronize(void) { return sticky_or(OK); }

static CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *opts,
                                   void **vals)
{
    if (mock_state.sticky)
        return mock_state.sticky;
    const char *text = image;
    if (strstr(text, "this is not ptx")) {
        for (unsigned i = 0; i < n; i++)
            if (opts[i] == 5) /* CU_JIT_ERROR_LOG_BUFFER */
                snprintf(vals[i], 64,
                         "ptxas application ptx input, line 12; error: mock syntax error");
        return INVALID_PTX;
    }
    MockModule *m = calloc(1, sizeof *m);
    m->image = strdup(text);
    m->device = current_device < 0 ? 0 : current_device;
    *mod = m;
    pthread_mutex_lock(&mock_lock);
    mock_state.module_loads++;
    mock_state.module_loads_on[m->device]++;
    mock_state.live_modules++;
    pthread_mutex_unlock(&mock_lock);
    return OK;
}

static CUresult cuModuleUnload(void *mod)
{
    MockModule *m = mod;
    pthread_mutex_lock(&mock_lock);
    mock_state.live_modules--;
    pthread_mutex_unlock(&mock_lock);
    free(m->image);
    free(m);
    return OK;
}

static CUresult cuModuleGetFunction(void **fn, void *mod, const char *name)
{
    MockModule *m = mod;
    char pattern[160];
    snprintf(pattern, sizeof pattern, ".entry %s(", name);
    if (!strstr(m->image, pattern) || m->nfunctions == 8)
        return NOT_FOUND;
    MockFunction *f = &m->functions[m->nfunctions++];
    snprintf(f->name, sizeof f->name, "%s", name);
    f->device = m->device;
    *fn = f;
    return OK;
}

static CUresult cuFuncSetAttribute(void *fn, int attr, int value)
{
    if (attr == 8) {
        ((MockFunction *)fn)->max_dynamic_shared = value;
        mock_state.max_dynamic_shared_set = value;
    }
    return OK;
}

/* Fixed figures for the attribute queries: 40 registers, 16 bytes of local memory, 1 KB of static
 * shared memory, 1024 threads; occupancy: 65536 registers / (40 * threads), at most 32. */
static CUresult cuFuncGetAttribute(int *v, int attr, void *fn)
{
    switch (attr) {
    case 0: *v = 1024; return OK;
    case 1: *v = 1024; return OK;
    case 3: *v = 16; return OK;
    case 4: *v = 40; return OK;
    }
    return INVALID_VALUE;
}
static CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, void *fn, int threads,
                                                            size_t shared)
{
    if (threads <= 0)
        return INVALID_VALUE;
    *blocks = 65536 / (40 * threads);
    if (*blocks > 32)
        *blocks = 32;
    if (shared > 0 && (size_t)*blocks > 232448 / shared) /* an H100's shared memory an SM */
        *blocks = (int)(232448 / shared);
    return OK;
}

/* Stream capture into a graph: launches on any stream while a capture is on are recorded (with
 * their parameter bytes) instead of run; a graph launch runs them in order. */
typedef struct MockNode {
    void *fn;
    unsigned grid[3], block[3], shared;
    unsigned char params[16][8];
} MockNode;
typedef struct MockGraph {
    MockNode nodes[256];
    int n;
    bool broken; /* a launch could not be recorded */
} MockGraph;
static MockGraph *capture;

static CUresult run_launch(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                           unsigned by, unsigned bz, unsigned shared, void **params);

static CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                               unsigned by, unsigned bz, unsigned shared, void *stream,
                               void **params, void **extra)
{
    int current = current_device < 0 ? 0 : current_device;
    if (((MockFunction *)fn)->device != current) {
        __atomic_add_fetch(&mock_state.wrong_context_launches, 1, __ATOMIC_RELAXED);
        return INVALID_HANDLE; /* a function of another context than the current one */
    }
    if (!capture) {
        pthread_mutex_lock(&mock_lock);
        mock_state.launches_on[current]++;
        CUresult r = run_launch(fn, gx, gy, gz, bx, by, bz, shared, params);
        pthread_mutex_unlock(&mock_lock);
        return r;
    }
    if (capture->n == 256) {
        capture->broken = true;
        return INVALID_VALUE;
    }
    MockNode *node = &capture->nodes[capture->n++];
    *node = (MockNode){fn, {gx, gy, gz}, {bx, by, bz}, shared, {{0}}};
    bool vector_add = !strncmp(((MockFunction *)fn)->name, "vector_add_kernel", 17);
    for (int i = 0; vector_add && i < 4; i++)
        memcpy(node->params[i], params[i], 8);
    return OK;
}

/* cuda.h's CUlaunchConfig and CUlaunchAttribute (runtime/cuda_api.h declares tric's side) */
typedef struct MockLaunchAttribute {
    int id;
    char pad[4];
    union {
        char bytes[64];
        uint64_t align;
        int value;
    } value;
} MockLaunchAttribute;
typedef struct MockLaunchConfig {
    unsigned grid[3], block[3], shared;
    void *stream;
    MockLaunchAttribute *attrs;
    unsigned nattrs;
} MockLaunchConfig;

static CUresult cuLaunchKernelEx(const MockLaunchConfig *c, void *fn, void **params, void **extra)
{
    __atomic_add_fetch(&mock_state.ex_launches, 1, __ATOMIC_RELAXED);
    for (unsigned i = 0; i < c->nattrs; i++) {
        if (c->attrs[i].id != 6) /* CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION */
            return INVALID_VALUE;
        if (c->attrs[i].value.value)
            __atomic_add_fetch(&mock_state.dependent_launches, 1, __ATOMIC_RELAXED);
    }
    return cuLaunchKernel(fn, c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1],
                          c->block[2], c->shared, c->stream, params, extra);
}

static CUresult cuStreamBeginCapture(void *s, int mode)
{
    if (capture)
        return INVALID_VALUE;
    capture = calloc(1, sizeof *capture);
    mock_state.capturing = 1;
    return OK;
}
static CUresult cuStreamEndCapture(void *s, void **graph)
{
    if (!capture)
        return INVALID_VALUE;
    MockGraph *g = capture;
    capture = NULL;
    mock_state.capturing = 0;
    if (g->broken) {
        free(g);
        return 901; /* CUDA_ERROR_STREAM_CAPTURE_INVALIDATED */
    }
    *graph = g;
    return OK;
}
static CUresult cuGraphGetNodes(void *graph, void **nodes, size_t *count)
{
    *count = (size_t)((MockGraph *)graph)->n;
    return OK;
}
static CUresult cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags)
{
    *exec = graph;
    return OK;
}
static CUresult cuGraphLaunch(void *exec, void *s)
{
    MockGraph *g = exec;
    for (int i = 0; i < g->n; i++) {
        MockNode *node = &g->nodes[i];
        void *params[16];
        for (int p = 0; p < 16; p++)
            params[p] = node->params[p];
        CUresult r =
            run_launch(node->fn, node->grid[0], node->grid[1], node->grid[2], node->block[0],
                       node->block[1], node->block[2], node->shared, params);
        if (r != OK)
            return r;
    }
    return OK;
}
static CUresult cuGraphExecDestroy(void *exec) { return OK; }
static CUresult cuGraphDestroy(void *graph)
{
    free(graph);
    return OK;
}

static CUresult run_launch(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                           unsigned by, unsigned bz, unsigned shared, void **params)
{
    if (mock_state.sticky)
        return mock_state.sticky;
    MockFunction *f = fn;
    mock_state.launches++;
    mock_state.last_launch_first = f->launches++ == 0;
    mock_state.grid[0] = gx, mock_state.grid[1] = gy, mock_state.grid[2] = gz;
    mock_state.block[0] = bx, mock_state.block[1] = by, mock_state.block[2] = bz;
    mock_state.shared = shared;
    int shape = 0;
    while (shape < mock_state.nshapes &&
           (mock_state.shapes[shape][0] != bx || mock_state.shapes[shape][1] != shared ||
            mock_state.shapes[shape][2] != gx))
        shape++;
    if (shape == mock_state.nshapes && shape < 32) {
        mock_state.shapes[shape][0] = bx, mock_state.shapes[shape][1] = shared;
        mock_state.shapes[shape][2] = gx;
        mock_state.nshapes++;
    }
    if (shared > 48 * 1024 && (int)shared > f->max_dynamic_shared)
        return INVALID_VALUE; /* the real driver refuses too without the attribute */
    /* Parameter counts the tests use: vector_add has 4; "probe" kernels 6; sk_probe 4,
     * sk_probe_xy 5, sk_probe_xyz 6. */
    /* vector_add_kernel_c<i>: an autotuned PTX's configs of it. */
    bool vector_add = !strncmp(f->name, "vector_add_kernel", 17);
    int n = vector_add ? 4 : !strncmp(f->name, "probe", 5) ? 6 : 0;
    if (!strcmp(f->name, "sk_probe"))
        n = 4; /* *fp32, i32, then a persistent kernel's tile count and workspace */
    if (!strcmp(f->name, "sk_probe_xy") || !strcmp(f->name, "sk_probe_xyz"))
        n = f->name[11] ? 6 : 5; /* then the grid's y, and z for 3 axes */
    if (!strcmp(f->name, "tma_probe")) {
        n = 2; /* *fp16, i32, then two 128-byte tensor maps */
        for (int i = 0; i < 2; i++)
            memcpy(mock_state.maps_seen[i], params[n + i], 128);
    }
    mock_state.nparams_seen = n;
    for (int i = 0; i < n; i++)
        memcpy(mock_state.params[i], params[i], 8);
    if (vector_add) {
        float *x, *y, *out;
        int32_t count;
        memcpy(&x, params[0], 8);
        memcpy(&y, params[1], 8);
        memcpy(&out, params[2], 8);
        memcpy(&count, params[3], 4);
        if ((uintptr_t)x < 4096 || (uintptr_t)y < 4096 || (uintptr_t)out < 4096) {
            mock_state.sticky = ILLEGAL_ADDRESS; /* reported asynchronously, like a real fault */
            return OK;
        }
        for (unsigned pid = 0; pid < gx; pid++)
            for (int i = 0; i < 1024; i++) {
                int64_t at = (int64_t)pid * 1024 + i;
                if (at < count)
                    out[at] = x[at] + y[at];
            }
    }
    return OK;
}

/* Records its arguments; the map it writes holds the address, then "tricmap" and the call's
 * number, so a test sees which map reached which launch parameter. The real driver's checks on
 * the map's alignment, the rank and a non-NULL strides array are made. */
static CUresult cuTensorMapEncodeTiled(void *map, int data_type, uint32_t rank, void *address,
                                       const uint64_t *dims, const uint64_t *strides,
                                       const uint32_t *box, const uint32_t *element_strides,
                                       int interleave, int swizzle, int l2, int oob)
{
    if ((uintptr_t)map % 64 != 0 || rank < 1 || rank > 5 || !strides)
        return INVALID_VALUE; /* a real driver refuses NULL strides even at rank 1 */
    MockState *m = &mock_state;
    m->tmap_encodes++;
    m->tmap_data_type = data_type, m->tmap_rank = (int)rank, m->tmap_interleave = interleave;
    m->tmap_swizzle = swizzle, m->tmap_l2 = l2, m->tmap_oob = oob;
    m->tmap_address = (uint64_t)(uintptr_t)address;
    memset(m->tmap_dims, 0, sizeof m->tmap_dims);
    memset(m->tmap_strides, 0, sizeof m->tmap_strides);
    memcpy(m->tmap_dims, dims, sizeof(uint64_t) * rank);
    memcpy(m->tmap_strides, strides, sizeof(uint64_t) * (rank - 1));
    memcpy(m->tmap_box, box, sizeof(uint32_t) * rank);
    memcpy(m->tmap_element_strides, element_strides, sizeof(uint32_t) * rank);
    unsigned char *bytes = map;
    memset(bytes, 0, 128);
    memcpy(bytes, &m->tmap_address, 8);
    memcpy(bytes + 8, "tricmap", 8);
    memcpy(bytes + 16, &m->tmap_encodes, sizeof(int));
    return OK;
}

static CUresult cuMemAlloc(CUdeviceptr *p, size_t n)
{
    if (n == 0)
        return INVALID_VALUE;
    void *m = aligned_alloc(256, (n + 255) / 256 * 256);
    if (!m)
        return OUT_OF_MEMORY;
    *p = (CUdeviceptr)(uintptr_t)m;
    mock_state.live_allocs++;
    return OK;
}
static CUresult cuMemFree(CUdeviceptr p)
{
    mock_state.live_allocs--;
    free((void *)(uintptr_t)p);
    return OK;
}
static CUresult cuMemcpyHtoD(CUdeviceptr d, const void *s, size_t n)
{
    memcpy((void *)(uintptr_t)d, s, n);
    return sticky_or(OK);
}
static CUresult cuMemcpyDtoH(void *d, CUdeviceptr s, size_t n)
{
    memcpy(d, (void *)(uintptr_t)s, n);
    return sticky_or(OK);
}
static CUresult cuMemcpyDtoD(CUdeviceptr d, CUdeviceptr s, size_t n)
{
    memmove((void *)(uintptr_t)d, (void *)(uintptr_t)s, n);
    return sticky_or(OK);
}
static CUresult cuMemcpyHtoDAsync(CUdeviceptr d, const void *s, size_t n, void *st)
{
    return cuMemcpyHtoD(d, s, n);
}
static CUresult cuMemcpyDtoHAsync(void *d, CUdeviceptr s, size_t n, void *st)
{
    return cuMemcpyDtoH(d, s, n);
}
static CUresult cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, void *st)
{
    return cuMemcpyDtoD(d, s, n);
}
static CUresult cuMemsetD8(CUdeviceptr d, unsigned char v, size_t n)
{
    memset((void *)(uintptr_t)d, v, n);
    return sticky_or(OK);
}
static CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, void *st)
{
    return cuMemsetD8(d, v, n);
}
static int a_stream[MOCK_MAX_DEVICES], an_event; /* the streams made in each device's context */
static CUresult cuStreamCreate(void **s, unsigned flags)
{
    *s = &a_stream[current_device < 0 ? 0 : current_device];
    __atomic_add_fetch(&mock_state.live_streams, 1, __ATOMIC_RELAXED);
    return OK;
}
static CUresult cuStreamDestroy(void *s)
{
    __atomic_sub_fetch(&mock_state.live_streams, 1, __ATOMIC_RELAXED);
    return OK;
}
/* A stream "of another context": any handle but the mock's own (a test passes a made-up one). */
static int other_context;
static CUresult cuStreamGetCtx(void *s, void **ctx)
{
    int *st = s;
    *ctx = st >= a_stream && st < a_stream + MOCK_MAX_DEVICES ? (void *)&contexts[st - a_stream]
                                                              : (void *)&other_context;
    return OK;
}
static CUresult cuStreamIsCapturing(void *s, int *status)
{
    *status = mock_state.capturing;
    return OK;
}
static CUresult cuStreamSynchronize(void *s) { return sticky_or(OK); }
static CUresult cuEventCreate(void **e, unsigned flags)
{
    *e = &an_event;
    return OK;
}
static CUresult cuEventDestroy(void *e) { return OK; }
static CUresult cuEventRecord(void *e, void *s) { return sticky_or(OK); }
static CUresult cuEventSynchronize(void *e) { return sticky_or(OK); }
/* Time that autotuning can tell apart: the last launch's threads / 128 ms, so fewer warps win. */
static CUresult cuEventElapsedTime(float *ms, void *a, void *b)
{
    *ms = mock_state.block[0] ? (float)mock_state.block[0] / 128.0f : 1.0f;
    if (mock_state.last_launch_first)
        *ms += mock_state.first_launch_extra_ms;
    return OK;
}

#define ENTRY(name)                                                                                \
    {                                                                                              \
#name, (void *)name                                                                        \
    }
static const struct {
    const char *name;
    void *fn;
} entries[] = {
    ENTRY(cuInit),
    ENTRY(cuDriverGetVersion),
    ENTRY(cuGetErrorName),
    ENTRY(cuGetErrorString),
    ENTRY(cuDeviceGetCount),
    ENTRY(cuDeviceGet),
    ENTRY(cuDeviceGetName),
    ENTRY(cuDeviceGetAttribute),
    ENTRY(cuDevicePrimaryCtxRetain),
    ENTRY(cuDevicePrimaryCtxRelease),
    ENTRY(cuCtxSetCurrent),
    ENTRY(cuCtxSynchronize),
    ENTRY(cuModuleLoadDataEx),
    ENTRY(cuModuleUnload),
    ENTRY(cuModuleGetFunction),
    ENTRY(cuFuncSetAttribute),
    ENTRY(cuLaunchKernel),
    ENTRY(cuMemAlloc),
    ENTRY(cuMemFree),
    ENTRY(cuMemcpyHtoD),
    ENTRY(cuMemcpyDtoH),
    ENTRY(cuMemcpyDtoD),
    ENTRY(cuMemcpyHtoDAsync),
    ENTRY(cuMemcpyDtoHAsync),
    ENTRY(cuMemcpyDtoDAsync),
    ENTRY(cuMemsetD8),
    ENTRY(cuMemsetD8Async),
    ENTRY(cuStreamCreate),
    ENTRY(cuStreamDestroy),
    ENTRY(cuStreamSynchronize),
    ENTRY(cuEventCreate),
    ENTRY(cuEventDestroy),
    ENTRY(cuEventRecord),
    ENTRY(cuEventSynchronize),
    ENTRY(cuEventElapsedTime),
    ENTRY(cuStreamGetCtx),
    ENTRY(cuStreamIsCapturing),
    ENTRY(cuFuncGetAttribute),
    ENTRY(cuOccupancyMaxActiveBlocksPerMultiprocessor),
    ENTRY(cuTensorMapEncodeTiled),
    ENTRY(cuLaunchKernelEx),
    /* Not used by tric: for tests that capture graphs themselves (tests/gpu/gpu_graph.c). */
    ENTRY(cuStreamBeginCapture),
    ENTRY(cuStreamEndCapture),
    ENTRY(cuGraphGetNodes),
    ENTRY(cuGraphInstantiateWithFlags),
    ENTRY(cuGraphLaunch),
    ENTRY(cuGraphExecDestroy),
    ENTRY(cuGraphDestroy),
};

/* Exported by name (with cuDriverGetVersion and mock_state): the bootstrap tric dlsym()s. */
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags,
                             int *status)
{
    mock_state.proc_version_asked = version;
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
        if (!strcmp(entries[i].name, symbol)) {
            *pfn = entries[i].fn;
            if (status)
                *status = 0;
            return OK;
        }
    *pfn = NULL;
    if (status)
        *status = 1;
    return NOT_FOUND;
}
