/* gpu_graph (label gpu): tric launches captured into a CUDA graph. The test makes its own CUstream
 * with the driver API (libcuda through dlopen, as the runtime does, in the context
 * tric_device_native_context gives), wraps it (tric_stream_wrap), launches vector_add once to load
 * its specialized variant, then captures 100 launches z = z + x (cuStreamBeginCapture in the
 * strict global mode; cuStreamEndCapture fails if anything tric did broke the capture), checks
 * that tric refuses what would break a capture (a synchronous copy; a launch needing a new
 * specialization) without breaking it, instantiates and replays the graph, and checks every
 * element. Then it times a graph replay per launch against 100 tric_launch calls (CUDA events on
 * the stream, warm-up, median of 11 repetitions), prints both, and requires the replay to be
 * faster. Skips (exit 77) when cuda:0 cannot be opened. */
#include "examples/example_kernels.h"
#include "runtime/cuda_api.h"
#include "tests/runtime_check.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>

typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraphNode_st *CUgraphNode;

enum { CU_STREAM_CAPTURE_MODE_GLOBAL = 0 };

/* The driver entry points this test uses itself, fetched as the runtime fetches its own. */
/* clang-format off */
#define GRAPH_FUNCS(X)                                                                             \
    X(cuCtxSetCurrent, (CUcontext ctx))                                                            \
    X(cuStreamCreate, (CUstream * s, unsigned flags))                                              \
    X(cuStreamDestroy, (CUstream s))                                                               \
    X(cuStreamSynchronize, (CUstream s))                                                           \
    X(cuStreamBeginCapture, (CUstream s, int mode))                                                \
    X(cuStreamEndCapture, (CUstream s, CUgraph * graph))                                           \
    X(cuGraphGetNodes, (CUgraph graph, CUgraphNode * nodes, size_t * count))                      \
    X(cuGraphInstantiateWithFlags, (CUgraphExec * exec, CUgraph graph, unsigned long long flags)) \
    X(cuGraphLaunch, (CUgraphExec exec, CUstream s))                                               \
    X(cuGraphExecDestroy, (CUgraphExec exec))                                                      \
    X(cuGraphDestroy, (CUgraph graph))                                                             \
    X(cuEventCreate, (CUevent * e, unsigned flags))                                                \
    X(cuEventDestroy, (CUevent e))                                                                 \
    X(cuEventRecord, (CUevent e, CUstream s))                                                      \
    X(cuEventSynchronize, (CUevent e))                                                             \
    X(cuEventElapsedTime, (float *ms, CUevent start, CUevent end))
/* clang-format on */

static struct {
#define X(name, params) CUresult(*name) params;
    GRAPH_FUNCS(X)
#undef X
} cu;

typedef CUresult (*GetProcAddressFn)(const char *symbol, void **pfn, int cuda_version,
                                     uint64_t flags, int *status);

static bool load_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    GetProcAddressFn get_proc = lib ? (GetProcAddressFn)dlsym(lib, "cuGetProcAddress_v2") : NULL;
    CUresult (*driver_version)(int *) =
        lib ? (CUresult(*)(int *))dlsym(lib, "cuDriverGetVersion") : NULL;
    if (!get_proc || !driver_version) {
        fprintf(stderr, "libcuda.so.1 or cuGetProcAddress_v2 not found\n");
        return false;
    }
    int version = 0;
    driver_version(&version);
    /* The CUDA 12.0 ABI of each name (cuStreamBeginCapture_v2, cuStreamDestroy_v2, ...), or the
     * driver's own version for a symbol a newer driver renamed with the same prototype. */
#define X(name, params)                                                                            \
    {                                                                                              \
        void *fn = NULL;                                                                           \
        int status = 0;                                                                            \
        if (get_proc(#name, &fn, 12000, 0, &status) != CUDA_SUCCESS || !fn)                        \
            get_proc(#name, &fn, version, 0, &status);                                             \
        if (!fn) {                                                                                 \
            fprintf(stderr, "libcuda.so.1 has no %s\n", #name);                                    \
            return false;                                                                          \
        }                                                                                          \
        memcpy(&cu.name, &fn, sizeof fn);                                                          \
    }
    GRAPH_FUNCS(X)
#undef X
    return true;
}

#define CU_OK(call)                                                                                \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            fprintf(stderr, "%s:%d: %s failed: CUDA error %d\n", __FILE__, __LINE__, #call, r_);   \
            failures++;                                                                            \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

enum { N = 4096, LAUNCHES = 100, REPS = 11, WARMUP = 3 };

static int compare_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* z holds z0 + applied * x in every element? (small integers: exact in fp32) */
static int check_z(tric_buffer dz, const float *z0, const float *x, int applied, float *host)
{
    if (tric_copy_to_host(host, dz, 0, sizeof(float) * N, NULL) != TRIC_SUCCESS) {
        fprintf(stderr, "copy back: %s\n", tric_last_error());
        return N;
    }
    int wrong = 0;
    for (int i = 0; i < N; i++)
        if (host[i] != z0[i] + (float)applied * x[i]) {
            if (wrong++ < 5)
                fprintf(stderr, "z[%d] = %g, expected %g (%d launches applied)\n", i, host[i],
                        z0[i] + (float)applied * x[i], applied);
        }
    return wrong;
}

int main(void)
{
    tric_device dev;
    if (tric_device_open("cuda:0", &dev) != TRIC_SUCCESS) {
        printf("SKIP: %s\n", tric_last_error());
        return 77;
    }
    if (!load_driver()) {
        tric_device_close(dev);
        printf("FAIL: the driver API could not be loaded\n");
        return 1;
    }
    static float z0[N], x[N], host[N];
    for (int i = 0; i < N; i++) {
        z0[i] = (float)(i % 5);
        x[i] = (float)(i % 7 + 1);
    }
    CUstream cs = NULL;
    CUgraph graph = NULL;
    CUgraphExec exec = NULL;
    CUevent ev[2] = {NULL, NULL};
    tric_stream ts = NULL;
    tric_module mod = NULL;
    tric_kernel k;
    tric_buffer dz = NULL, dx = NULL;
    int applied = 0;
    float graph_ms[REPS], launch_ms[REPS];

    CU_OK(cu.cuCtxSetCurrent((CUcontext)tric_device_native_context(dev)));
    CU_OK(cu.cuStreamCreate(&cs, CU_STREAM_NON_BLOCKING)); /* capture needs a non-legacy stream */
    CHECK(tric_stream_wrap(dev, cs, &ts) == TRIC_SUCCESS);
    CHECK(tric_stream_native(ts) == cs);
    CHECK(ex_compile_vector_add(dev, TRIC_SOURCE_DIR "/examples/vector_add.tri", &mod, &k) ==
          TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, sizeof z0, &dz) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, sizeof x, &dx) == TRIC_SUCCESS);
    if (failures)
        goto done;
    CHECK(tric_copy_to_device(dz, 0, z0, sizeof z0, ts) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(dx, 0, x, sizeof x, ts) == TRIC_SUCCESS);
    tric_arg args[4] = {TRIC_ARG_BUF(dz), TRIC_ARG_BUF(dx), TRIC_ARG_BUF(dz), TRIC_ARG_I32(N)};
    tric_dim3 grid = {N / 1024, 1, 1};

    /* One launch outside the capture compiles and loads the variant for these arguments
     * (i32:16); the captured launches then make no driver call but cuLaunchKernel. */
    CHECK(tric_launch(k, grid, args, 4, ts) == TRIC_SUCCESS);
    applied++;
    CHECK(tric_stream_synchronize(ts) == TRIC_SUCCESS);

    CU_OK(cu.cuStreamBeginCapture(cs, CU_STREAM_CAPTURE_MODE_GLOBAL));
    /* Refused, and the capture survives: a synchronous copy, a launch needing a new variant. */
    CHECK(tric_copy_to_host(host, dz, 0, 16, ts) == TRIC_ERROR_INVALID_ARGUMENT);
    args[3] = TRIC_ARG_I32(N - 8); /* divisible by 8, not 16: another variant (i32:8) */
    CHECK(tric_launch(k, grid, args, 4, ts) == TRIC_ERROR_INVALID_ARGUMENT);
    args[3] = TRIC_ARG_I32(N);
    for (int i = 0; i < LAUNCHES; i++)
        if (tric_launch(k, grid, args, 4, ts) != TRIC_SUCCESS) {
            CHECK(!"a launch during capture failed");
            break;
        }
    CU_OK(cu.cuStreamEndCapture(cs, &graph));
    size_t nodes = 0;
    CU_OK(cu.cuGraphGetNodes(graph, NULL, &nodes));
    CHECK(nodes == LAUNCHES);
    CU_OK(cu.cuGraphInstantiateWithFlags(&exec, graph, 0));
    /* Captured, not run. */
    CHECK(check_z(dz, z0, x, applied, host) == 0);

    CU_OK(cu.cuGraphLaunch(exec, cs));
    CU_OK(cu.cuStreamSynchronize(cs));
    applied += LAUNCHES;
    CHECK(check_z(dz, z0, x, applied, host) == 0);

    /* Timing: GPU time between two events on the stream, per launch. */
    CU_OK(cu.cuEventCreate(&ev[0], CU_EVENT_DEFAULT));
    CU_OK(cu.cuEventCreate(&ev[1], CU_EVENT_DEFAULT));
    for (int i = 0; i < WARMUP; i++)
        CU_OK(cu.cuGraphLaunch(exec, cs));
    applied += WARMUP * LAUNCHES;
    for (int r = 0; r < REPS; r++) {
        CU_OK(cu.cuEventRecord(ev[0], cs));
        CU_OK(cu.cuGraphLaunch(exec, cs));
        CU_OK(cu.cuEventRecord(ev[1], cs));
        CU_OK(cu.cuEventSynchronize(ev[1]));
        CU_OK(cu.cuEventElapsedTime(&graph_ms[r], ev[0], ev[1]));
        applied += LAUNCHES;
    }
    for (int i = 0; i < WARMUP * LAUNCHES; i++)
        CHECK(tric_launch(k, grid, args, 4, ts) == TRIC_SUCCESS);
    applied += WARMUP * LAUNCHES;
    for (int r = 0; r < REPS; r++) {
        CU_OK(cu.cuEventRecord(ev[0], cs));
        for (int i = 0; i < LAUNCHES; i++)
            if (tric_launch(k, grid, args, 4, ts) != TRIC_SUCCESS) {
                CHECK(!"tric_launch failed while timing");
                goto done;
            }
        CU_OK(cu.cuEventRecord(ev[1], cs));
        CU_OK(cu.cuEventSynchronize(ev[1]));
        CU_OK(cu.cuEventElapsedTime(&launch_ms[r], ev[0], ev[1]));
        applied += LAUNCHES;
    }
    CHECK(check_z(dz, z0, x, applied, host) == 0);
    qsort(graph_ms, REPS, sizeof(float), compare_float);
    qsort(launch_ms, REPS, sizeof(float), compare_float);
    double graph_us = graph_ms[REPS / 2] * 1000.0 / LAUNCHES;
    double launch_us = launch_ms[REPS / 2] * 1000.0 / LAUNCHES;
    printf("%s: vector_add n=%d, %d launches per repetition, median of %d:\n",
           tric_device_name(dev), N, LAUNCHES, REPS);
    printf("  graph replay   %8.3f us per launch\n", graph_us);
    printf("  tric_launch    %8.3f us per launch\n", launch_us);
    printf("  ratio          %8.2fx\n", launch_us / graph_us);
    /* The stand-in libcuda (tests/gpu/mock) has no clock: its figures mean nothing. */
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (lib && dlsym(lib, "mock_state"))
        printf("  (mock driver: the timing is not checked)\n");
    else
        CHECK(graph_us < launch_us);

done:
    if (exec)
        cu.cuGraphExecDestroy(exec);
    if (graph)
        cu.cuGraphDestroy(graph);
    for (int i = 0; i < 2; i++)
        if (ev[i])
            cu.cuEventDestroy(ev[i]);
    tric_stream_destroy(ts); /* the wrapper only: the CUstream is this test's */
    if (cs)
        cu.cuStreamDestroy(cs);
    tric_buffer_free(dz);
    tric_buffer_free(dx);
    tric_module_destroy(mod);
    tric_device_close(dev);
    if (failures) {
        printf("FAIL: %d check(s)\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
