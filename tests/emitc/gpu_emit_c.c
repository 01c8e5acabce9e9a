/* gpu_emit_c (label gpu): the launchers `tric --emit=c` wrote at build time (vector_add.c/.h for
 * examples/vector_add.tri, matmul_seed2.c/.h for seed 2's kernel_matmul with a full signature and
 * -D block sizes), run on cuda:0 from the embedded PTX alone (no .tri file, no compiler at run
 * time), outputs poisoned, every element checked against a host reference:
 *   - vector_add through vector_add_load(NULL) (the launcher's own cuda:0), then through a launch
 *     with nothing loaded (it loads on its buffers' device), then from 8 threads launching at
 *     once with nothing loaded (one loads, all run), then through vector_add_kernel_launch_ex as
 *     a programmatic dependent launch (on the stand-in libcuda: it reaches cuLaunchKernelEx with
 *     the attribute);
 *   - kernel_matmul (fp16, padded to the block sizes, checked in the M x N corner), and its
 *     stride check refusing a bad leading stride without launching.
 * Skips (exit 77) when cuda:0 cannot be opened. With --vector-add-only (the ctest test
 * emitc/vector_add_on_mock, against tests/gpu/mock's stand-in libcuda) only vector_add runs. */
#include "matmul_seed2.h"
#include "vector_add.h"

#include "example_host.h"

#include "mock_state.h"

#include <pthread.h>
#include <stdatomic.h>

static atomic_int failures;
/* When set, run_vector_add waits here first, so that threads launch together. */
static pthread_barrier_t *launch_together;

#define GPU_CHECK(call)                                                                            \
    do {                                                                                           \
        tric_status st_ = (call);                                                                  \
        if (st_ != TRIC_SUCCESS) {                                                                 \
            printf("FAIL %s:%d: %s: %s\n%s\n", __FILE__, __LINE__, #call, tric_status_name(st_),   \
                   tric_last_error());                                                             \
            failures++;                                                                            \
            return;                                                                                \
        }                                                                                          \
    } while (0)

/* The block sizes matmul_seed2.c was compiled with (tests/CMakeLists.txt). */
enum { BM = 64, BN = 64, BK = 32 };

/* n elements on dev, launched through vector_add_kernel_launch (through _launch_ex with options
 * when given); every element must be exact. */
static void run_vector_add_with(tric_device dev, int n, uint64_t seed,
                                const tric_launch_options *options)
{
    /* Before anything that can fail, so no thread is left waiting; the launches follow within
     * microseconds, while the first load (milliseconds) is still running. */
    if (launch_together)
        pthread_barrier_wait(launch_together);
    size_t bytes = (size_t)n * sizeof(float);
    float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes);
    if (!x || !y || !out) {
        printf("FAIL: out of host memory\n");
        failures++;
        return;
    }
    ExRng rng = {seed * 0x9e3779b97f4a7c15ULL + 1};
    for (int i = 0; i < n; i++) {
        x[i] = ex_rng_float(&rng) * 100.0f;
        y[i] = ex_rng_float(&rng) * 100.0f;
    }
    tric_buffer dx, dy, dout;
    GPU_CHECK(tric_buffer_alloc(dev, bytes, &dx));
    GPU_CHECK(tric_buffer_alloc(dev, bytes, &dy));
    GPU_CHECK(tric_buffer_alloc(dev, bytes, &dout));
    GPU_CHECK(tric_copy_to_device(dx, 0, x, bytes, NULL));
    GPU_CHECK(tric_copy_to_device(dy, 0, y, bytes, NULL));
    GPU_CHECK(tric_memset(dout, 0, 0xff, bytes, NULL));
    tric_dim3 grid = {(unsigned)((n + 1023) / 1024), 1, 1};
    if (options)
        GPU_CHECK(vector_add_kernel_launch_ex(NULL, grid, options, dx, dy, dout, n));
    else
        GPU_CHECK(vector_add_kernel_launch(NULL, grid, dx, dy, dout, n));
    GPU_CHECK(tric_device_synchronize(dev));
    GPU_CHECK(tric_copy_to_host(out, dout, 0, bytes, NULL));
    int bad = -1;
    for (int i = 0; i < n; i++)
        if (bad < 0 && !(out[i] == x[i] + y[i]))
            bad = i;
    printf("vector_add_kernel_launch%s  n=%-8d %s\n", options ? "_ex" : "", n,
           bad < 0 ? "OK" : "MISMATCH");
    if (bad >= 0) {
        printf("  first mismatch at %d: got %g, want %g\n", bad, out[bad], x[bad] + y[bad]);
        failures++;
    }
    tric_buffer_free(dx);
    tric_buffer_free(dy);
    tric_buffer_free(dout);
    free(x);
    free(y);
    free(out);
}

static void run_vector_add(tric_device dev, int n, uint64_t seed)
{
    run_vector_add_with(dev, n, seed, NULL);
}

/* vector_add_kernel_launch_ex as a programmatic dependent launch. On the stand-in libcuda
 * (mock_state, found through dlsym) it must reach cuLaunchKernelEx with the attribute once; on a
 * GPU the elements are checked (vector_add has no gdc_wait, and nothing before it on the stream
 * writes what it reads). */
static void run_vector_add_dependent(tric_device dev)
{
    const MockState *ms = mock_state_loaded();
    int dependent = ms ? ms->dependent_launches : 0;
    tric_launch_options options = {.programmatic_dependent = 1};
    run_vector_add_with(dev, 65536, 6, &options);
    if (ms && ms->dependent_launches != dependent + 1) {
        printf("FAIL: vector_add_kernel_launch_ex made %d programmatic dependent launches, not 1\n",
               ms->dependent_launches - dependent);
        failures++;
    }
}

enum { NTHREADS = 8 };

static tric_device thread_device;

static void *vector_add_thread(void *arg)
{
    run_vector_add(thread_device, 4096 * (1 + (int)(intptr_t)arg), 10 + (uint64_t)(intptr_t)arg);
    return NULL;
}

/* NTHREADS threads launch at once with nothing loaded: one loads, every launch runs. */
static void run_vector_add_threads(tric_device dev)
{
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, NTHREADS);
    launch_together = &barrier;
    thread_device = dev;
    pthread_t threads[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&threads[i], NULL, vector_add_thread, (void *)(intptr_t)i);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(threads[i], NULL);
    launch_together = NULL;
    pthread_barrier_destroy(&barrier);
    if (vector_add_device() != dev) {
        printf("FAIL: the threads' first launches did not load on their buffers' device\n");
        failures++;
    }
}

/* C = A B in fp16 (fp32 accumulation) through kernel_matmul_launch. kernel_matmul does not mask:
 * the matrices are padded to the block sizes with zeros, and the M x N corner is checked. */
static void run_matmul(tric_device dev, int M, int N, int K, uint64_t seed)
{
    size_t Mp = ex_round_up((size_t)M, BM), Np = ex_round_up((size_t)N, BN);
    size_t Kp = ex_round_up((size_t)K, BK);
    uint16_t *a = calloc(Mp * Kp, 2), *b = calloc(Kp * Np, 2), *c = malloc(Mp * Np * 2);
    float *af = malloc(sizeof(float) * (size_t)M * K); /* fp16 values: exact in float */
    float *bt = malloc(sizeof(float) * (size_t)K * N);
    if (!a || !b || !c || !af || !bt) {
        printf("FAIL: out of host memory\n");
        failures++;
        return;
    }
    ex_matmul_inputs(seed, M, N, K, Kp, Np, a, b, af, bt);
    tric_buffer da, db, dc;
    GPU_CHECK(tric_buffer_alloc(dev, Mp * Kp * 2, &da));
    GPU_CHECK(tric_buffer_alloc(dev, Kp * Np * 2, &db));
    GPU_CHECK(tric_buffer_alloc(dev, Mp * Np * 2, &dc));
    GPU_CHECK(tric_copy_to_device(da, 0, a, Mp * Kp * 2, NULL));
    GPU_CHECK(tric_copy_to_device(db, 0, b, Kp * Np * 2, NULL));
    GPU_CHECK(tric_memset(dc, 0, 0xff, Mp * Np * 2, NULL));
    tric_dim3 grid = {(unsigned)((Mp / BM) * (Np / BN)), 1, 1};

    /* A leading stride off the ':16' the kernel was compiled for: refused, nothing launched. */
    tric_status st = kernel_matmul_launch(NULL, grid, da, db, dc, M, N, K, (int32_t)Kp + 8,
                                          (int32_t)Np, (int32_t)Np);
    if (st != TRIC_ERROR_INVALID_ARGUMENT || !strstr(tric_last_error(), "stride_am")) {
        printf("FAIL: a bad stride_am gave %s (%s)\n", tric_status_name(st), tric_last_error());
        failures++;
    }

    /* stride_ak, stride_bn, stride_cn were compiled as 1 (':1'): no arguments. */
    GPU_CHECK(kernel_matmul_launch(NULL, grid, da, db, dc, M, N, K, (int32_t)Kp, (int32_t)Np,
                                   (int32_t)Np));
    GPU_CHECK(tric_device_synchronize(dev));
    GPU_CHECK(tric_copy_to_host(c, dc, 0, Mp * Np * 2, NULL));

    ExMatmulError e = ex_matmul_error(af, bt, c, NULL, M, N, K, Np); /* as ex_matmul's check */
    printf("kernel_matmul_launch      M=%d N=%d K=%d  max abs error %-10g %s\n", M, N, K, e.max_err,
           e.bad_i < 0 ? "OK" : "MISMATCH");
    if (e.bad_i >= 0) {
        printf("  first mismatch at [%d, %d]: got %g\n", e.bad_i, e.bad_j, e.bad_got);
        failures++;
    }
    tric_buffer_free(da);
    tric_buffer_free(db);
    tric_buffer_free(dc);
    free(a);
    free(b);
    free(c);
    free(af);
    free(bt);
}

int main(int argc, char **argv)
{
    /* --vector-add-only: for the stand-in libcuda (tests/gpu/mock), which computes vector_add
     * from the launch's parameters but runs no other kernel. */
    bool vector_add_only = argc > 1 && !strcmp(argv[1], "--vector-add-only");
    tric_device probe;
    if (tric_device_open("cuda:0", &probe) != TRIC_SUCCESS) {
        printf("SKIP: no GPU (%s)\n", tric_last_error());
        return 77;
    }
    tric_device_close(probe);

    /* 1. The module's own device: vector_add_load(NULL) opens cuda:0, vector_add_device() gives
     * it for the buffers, vector_add_unload() closes it. */
    if (vector_add_load(NULL) != TRIC_SUCCESS) {
        printf("FAIL: vector_add_load(NULL): %s\n", tric_last_error());
        return 1;
    }
    tric_device own = vector_add_device();
    printf("vector_add loaded on %s\n", tric_device_name(own));
    run_vector_add(own, 1 << 20, 1);
    run_vector_add(own, 16, 2);
    vector_add_unload();

    /* 2. The caller's device, nothing loaded: the first launch loads on its buffers' device. */
    tric_device dev;
    if (tric_device_open("cuda:0", &dev) != TRIC_SUCCESS) {
        printf("FAIL: reopening cuda:0: %s\n", tric_last_error());
        return 1;
    }
    run_vector_add(dev, 1000000, 3);
    if (vector_add_device() != dev) {
        printf("FAIL: the launch did not load on its buffers' device\n");
        failures++;
    }
    /* 2b. The same with threads racing to the first launch. */
    vector_add_unload();
    run_vector_add_threads(dev);
    /* 2c. A programmatic dependent launch through vector_add_kernel_launch_ex. */
    run_vector_add_dependent(dev);

    /* 3. kernel_matmul, loaded explicitly. */
    if (vector_add_only) {
    } else if (matmul_seed2_load(dev) != TRIC_SUCCESS) {
        printf("FAIL: matmul_seed2_load: %s\n", tric_last_error());
        failures++;
    } else {
        run_matmul(dev, 200, 136, 100, 4);
        run_matmul(dev, 512, 512, 512, 5);
    }
    vector_add_unload();
    matmul_seed2_unload();
    tric_device_close(dev);
    if (failures) {
        printf("gpu_emit_c: %d failure(s)\n", (int)failures);
        return 1;
    }
    printf("gpu_emit_c: OK\n");
    return 0;
}
