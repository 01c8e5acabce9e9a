/* emitc_tuned: the launchers `tric --emit=c` writes for autotuned kernels (tests/CMakeLists.txt
 * generates them at build time), run on cuda:0 from the embedded PTX alone:
 *   - vector_add_tuned.c (tests/emitc/vector_add_tuned.tri, three configs of different block
 *     sizes, key n_elements): each size tunes at its first launch, the grid function gets the
 *     chosen config's BLOCK_SIZE, every element is checked; then 8 threads choose at once with
 *     nothing loaded (one loads, each key is tuned once); vector_add_kernel_launch_ex tunes a
 *     new size and launches its choice as a programmatic dependent launch (on the stand-in
 *     libcuda: the attribute on that launch alone, not on the trials);
 *   - vab.c, the same with tests/emitc/vector_add_tuned.table baked in (--tuned,
 *     --prefix-launchers): the table's key values take the table's configs without tuning, any
 *     other tunes, and vab_write_tuned writes the table back with the tuned one added;
 *   - mm_tuned.c (seed 2's kernel_matmul over its 16 configs, --prefix-launchers) at several
 *     sizes, fp16, every element of C checked against a host reference (GPU only).
 * With --mock (ctest emitc/tuned_on_mock, against tests/gpu/mock's stand-in libcuda, which times
 * a launch by its threads and computes vector_add_kernel* as 1024 elements per program) the
 * choices are known: a tuning picks config 1 (two warps, BLOCK_SIZE 1024). Skips (exit 77) when
 * cuda:0 cannot be opened. The ctest gpu/emit_c_tuned runs it on a GPU. */
#include "mm_tuned.h"
#include "vab.h"
#include "vector_add_tuned.h"

#include "example_host.h"

#include "mock_state.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>

static atomic_int failures;
static bool on_mock;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL %s:%d: %s (last error: %s)\n", __FILE__, __LINE__, #cond,                 \
                   tric_last_error());                                                             \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

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

/* ---- vector_add ----------------------------------------------------------------------------- */

/* The grid functions: Triton's `grid = lambda META: (triton.cdiv(n, META['BLOCK_SIZE']),)`, the
 * size in grid_ctx. The meta pointers seen are kept to check they are the configs' entries. */
static _Thread_local const void *last_meta;

static tric_dim3 tuned_grid(const vector_add_kernel_config *meta, void *grid_ctx)
{
    int n = *(const int *)grid_ctx;
    last_meta = meta;
    return (tric_dim3){(unsigned)((n + meta->BLOCK_SIZE - 1) / meta->BLOCK_SIZE), 1, 1};
}

/* vab.h was written with --prefix-launchers: its types and launchers are named vab_KERNEL_... */
static tric_dim3 baked_grid(const vab_vector_add_kernel_config *meta, void *grid_ctx)
{
    int n = *(const int *)grid_ctx;
    last_meta = meta;
    return (tric_dim3){(unsigned)((n + meta->BLOCK_SIZE - 1) / meta->BLOCK_SIZE), 1, 1};
}

typedef struct VaBuffers {
    tric_buffer x, y, out;
    float *hx, *hy, *hout;
    int n;
} VaBuffers;

static bool va_alloc(tric_device dev, int n, uint64_t seed, VaBuffers *b)
{
    size_t bytes = (size_t)(n ? n : 1) * sizeof(float);
    memset(b, 0, sizeof *b);
    b->n = n;
    b->hx = malloc(bytes), b->hy = malloc(bytes), b->hout = malloc(bytes);
    if (!b->hx || !b->hy || !b->hout)
        return false;
    ExRng rng = {seed * 0x9e3779b97f4a7c15ULL + 1};
    for (int i = 0; i < n; i++) {
        b->hx[i] = ex_rng_float(&rng) * 100.0f;
        b->hy[i] = ex_rng_float(&rng) * 100.0f;
    }
    return tric_buffer_alloc(dev, bytes, &b->x) == TRIC_SUCCESS &&
           tric_buffer_alloc(dev, bytes, &b->y) == TRIC_SUCCESS &&
           tric_buffer_alloc(dev, bytes, &b->out) == TRIC_SUCCESS &&
           tric_copy_to_device(b->x, 0, b->hx, bytes, NULL) == TRIC_SUCCESS &&
           tric_copy_to_device(b->y, 0, b->hy, bytes, NULL) == TRIC_SUCCESS &&
           tric_memset(b->out, 0, 0xff, bytes, NULL) == TRIC_SUCCESS;
}

static void va_free(VaBuffers *b)
{
    tric_buffer_free(b->x);
    tric_buffer_free(b->y);
    tric_buffer_free(b->out);
    free(b->hx);
    free(b->hy);
    free(b->hout);
}

/* Every element of out must be exactly x + y. */
static void va_check(tric_device dev, VaBuffers *b, const char *what, int config)
{
    GPU_CHECK(tric_device_synchronize(dev));
    GPU_CHECK(tric_copy_to_host(b->hout, b->out, 0, (size_t)b->n * sizeof(float), NULL));
    int bad = -1;
    for (int i = 0; i < b->n && bad < 0; i++)
        if (!(b->hout[i] == b->hx[i] + b->hy[i]))
            bad = i;
    printf("%-24s n=%-8d config %d  %s\n", what, b->n, config, bad < 0 ? "OK" : "MISMATCH");
    if (bad >= 0) {
        printf("  first mismatch at %d: got %g, want %g\n", bad, b->hout[bad],
               b->hx[bad] + b->hy[bad]);
        failures++;
    }
}

/* vector_add_tuned: a tuning per size at its first call; the launch runs the config _tune chose
 * (its grid function's last call was given that config's entry). */
static void run_tuned(tric_device dev, int n, uint64_t seed)
{
    VaBuffers b;
    if (!va_alloc(dev, n, seed, &b)) {
        CHECK(!"vector_add buffers");
        va_free(&b);
        return;
    }
    int chosen = -1;
    GPU_CHECK(vector_add_kernel_tune(NULL, tuned_grid, &n, b.x, b.y, b.out, n, &chosen));
    CHECK(chosen >= 0 && chosen < 3);
    GPU_CHECK(vector_add_kernel_launch(NULL, tuned_grid, &n, b.x, b.y, b.out, n));
    CHECK(chosen >= 0 && chosen < 3 && last_meta == &vector_add_kernel_configs[chosen]);
    if (on_mock)
        CHECK(chosen == 1); /* the mock's fastest: two warps */
    va_check(dev, &b, "vector_add_kernel_launch", chosen);
    va_free(&b);
}

/* vector_add_kernel_launch_ex at a new key value, as a programmatic dependent launch: it tunes,
 * then launches the chosen config. On the stand-in libcuda (mock_state, through dlsym) only that
 * launch carries the attribute, none of the trials. */
static void run_tuned_dependent(tric_device dev, int n, uint64_t seed)
{
    const MockState *ms = mock_state_loaded();
    int dependent = ms ? ms->dependent_launches : 0, launches = ms ? ms->launches : 0;
    VaBuffers b;
    if (!va_alloc(dev, n, seed, &b)) {
        CHECK(!"vector_add buffers");
    } else {
        tric_launch_options options = {.programmatic_dependent = 1};
        tric_status st =
            vector_add_kernel_launch_ex(NULL, tuned_grid, &n, &options, b.x, b.y, b.out, n);
        CHECK(st == TRIC_SUCCESS);
        int chosen = -1;
        for (int i = 0; i < 3; i++)
            if (last_meta == &vector_add_kernel_configs[i])
                chosen = i;
        CHECK(chosen >= 0);
        if (ms) {
            CHECK(chosen == 1);                             /* the mock's fastest: two warps */
            CHECK(ms->launches > launches + 1);             /* trials, then the launch */
            CHECK(ms->dependent_launches == dependent + 1); /* the launch alone */
        }
        if (st == TRIC_SUCCESS)
            va_check(dev, &b, "vector_add_kernel_launch_ex", chosen);
    }
    va_free(&b);
}

enum { NTHREADS = 8 };

static tric_device thread_device;

/* Four sizes, two threads each: the same new key chosen from two threads at once. Only
 * vector_add_kernel_tune runs in the threads (the mock's timing reads its last launch, so a
 * launch from another thread during a tuning would change what the tuning measures). */
static void *tuned_thread(void *arg)
{
    int n = 2000 + 1000 * ((int)(intptr_t)arg % 4), chosen = -1;
    VaBuffers b;
    if (va_alloc(thread_device, n, 40, &b)) {
        tric_status st = vector_add_kernel_tune(NULL, tuned_grid, &n, b.x, b.y, b.out, n, &chosen);
        CHECK(st == TRIC_SUCCESS && chosen >= 0 && chosen < 3);
        if (on_mock)
            CHECK(chosen == 1);
    } else {
        CHECK(!"vector_add buffers");
    }
    va_free(&b);
    return NULL;
}

/* NTHREADS threads choose configs at once, nothing loaded, most keys new: one loads, the runtime
 * tunes each key once; then each size launches on the choice made and is checked. */
static void run_tuned_threads(tric_device dev)
{
    vector_add_tuned_unload();
    thread_device = dev;
    pthread_t threads[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&threads[i], NULL, tuned_thread, (void *)(intptr_t)i);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(threads[i], NULL);
    for (int i = 0; i < 4; i++)
        run_tuned(dev, 2000 + 1000 * i, 50 + (uint64_t)i);
}

/* vab: the table's choice for its key values (no tuning: on the mock a tuning would
 * pick config 1), a tuning for any other. */
static void run_baked(tric_device dev, int n, int want, uint64_t seed)
{
    VaBuffers b;
    if (!va_alloc(dev, n, seed, &b)) {
        CHECK(!"vector_add buffers");
        va_free(&b);
        return;
    }
    int chosen = -1;
    GPU_CHECK(vab_vector_add_kernel_tune(NULL, baked_grid, &n, b.x, b.y, b.out, n, &chosen));
    if (want >= 0 && chosen != want) {
        printf("FAIL: n=%d chose config %d, the table says %d\n", n, chosen, want);
        failures++;
    }
    if (want < 0 && on_mock && chosen != 1) {
        printf("FAIL: n=%d (not in the table) chose config %d, a tuning on the mock 1\n", n,
               chosen);
        failures++;
    }
    /* The mock runs 1024 elements per program whatever the config: launch what it computes. */
    if (!on_mock || chosen == 1) {
        GPU_CHECK(vab_vector_add_kernel_launch(NULL, baked_grid, &n, b.x, b.y, b.out, n));
        CHECK(last_meta == &vab_vector_add_kernel_configs[chosen]);
        va_check(dev, &b, "vab_..._launch (baked)", chosen);
    }
    va_free(&b);
}

/* A grid function for launch options; the tuned launchers refuse it before calling it. */
static tric_dim3 never_called_grid_fn(tric_kernel config, const tric_arg *args, int nargs,
                                      void *user)
{
    (void)config, (void)args, (void)nargs, (void)user;
    CHECK(!"a launcher called options->grid_fn");
    return (tric_dim3){1, 1, 1};
}

/* The errors a tuned launcher gives before anything runs, and an empty problem. */
static void run_errors(tric_device dev)
{
    VaBuffers b;
    int n = 64, zero = 0, chosen = 7;
    if (!va_alloc(dev, n, 3, &b)) {
        CHECK(!"vector_add buffers");
        va_free(&b);
        return;
    }
    CHECK(vector_add_kernel_launch(NULL, NULL, &n, b.x, b.y, b.out, n) ==
              TRIC_ERROR_INVALID_ARGUMENT &&
          strstr(tric_last_error(), "grid function is NULL"));
    CHECK(vector_add_kernel_launch(NULL, tuned_grid, &n, NULL, b.y, b.out, n) ==
              TRIC_ERROR_INVALID_ARGUMENT &&
          strstr(tric_last_error(), "vector_add_kernel_launch: x_ptr is NULL"));
    tric_launch_options with_grid_fn = {.grid_fn = never_called_grid_fn};
    CHECK(vector_add_kernel_launch_ex(NULL, tuned_grid, &n, &with_grid_fn, b.x, b.y, b.out, n) ==
              TRIC_ERROR_INVALID_ARGUMENT &&
          strstr(tric_last_error(), "vector_add_kernel_launch_ex: options->grid_fn is set"));
    CHECK(vector_add_kernel_tune(NULL, tuned_grid, &n, b.x, b.y, b.out, n, NULL) ==
              TRIC_ERROR_INVALID_ARGUMENT &&
          strstr(tric_last_error(), "vector_add_kernel_tune: chosen is NULL"));
    /* n = 0: the grid is empty for every config; nothing runs, nothing is tuned. */
    CHECK(vector_add_kernel_launch(NULL, tuned_grid, &zero, b.x, b.y, b.out, 0) == TRIC_SUCCESS);
    CHECK(vector_add_kernel_tune(NULL, tuned_grid, &zero, b.x, b.y, b.out, 0, &chosen) ==
              TRIC_SUCCESS &&
          chosen == -1);
    CHECK(vector_add_tuned_write_tuned("/nonexistent-dir/t.table") == TRIC_ERROR_IO);
    va_free(&b);
}

/* vab_write_tuned writes the baked choices and the tuned ones, as --tuned reads them. */
static void check_written_table(int tuned_n, int tuned_config)
{
    const char *path = "emitc_tuned.table"; /* in the working directory (ctest's: the build's) */
    CHECK(vab_write_tuned(path) == TRIC_SUCCESS);
    static char text[8192];
    FILE *f = fopen(path, "r");
    size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[len] = 0;
    if (f)
        fclose(f);
    remove(path);
    char want[256];
    snprintf(want, sizeof want, "vector_add_kernel n_elements=%d config %d: %s\n", tuned_n,
             tuned_config, vab_vector_add_kernel_configs[tuned_config].text);
    CHECK(strstr(text, "vector_add_kernel n_elements=5000 config 2: BLOCK_SIZE=2048, "
                       "num_warps=8\n"));
    CHECK(strstr(text, "vector_add_kernel n_elements=100000 config 0: BLOCK_SIZE=512, "
                       "num_warps=4\n"));
    CHECK(strstr(text, want));
    printf("vab_write_tuned:\n%s", text);
}

/* ---- kernel_matmul over its 16 configs (GPU only) ------------------------------------------ */

typedef struct MmShape {
    int M, N;
} MmShape;

/* grid = lambda META: (cdiv(M, META['BLOCK_SIZE_M']) * cdiv(N, META['BLOCK_SIZE_N']),) */
static tric_dim3 mm_grid(const mm_tuned_kernel_matmul_config *meta, void *grid_ctx)
{
    const MmShape *s = grid_ctx;
    int64_t m = (s->M + meta->BLOCK_SIZE_M - 1) / meta->BLOCK_SIZE_M;
    int64_t n = (s->N + meta->BLOCK_SIZE_N - 1) / meta->BLOCK_SIZE_N;
    return (tric_dim3){(unsigned)(m * n), 1, 1};
}

/* C = A B in fp16 (fp32 accumulation). kernel_matmul does not mask, and a tuning runs every
 * config on these buffers: they are padded with zeros to the largest block sizes (256 in M and
 * N, 128 in K), and the M x N corner is checked, every element. */
static void run_matmul(tric_device dev, int M, int N, int K, uint64_t seed)
{
    size_t Mp = ex_round_up((size_t)M, 256), Np = ex_round_up((size_t)N, 256);
    size_t Kp = ex_round_up((size_t)K, 128);
    uint16_t *a = calloc(Mp * Kp, 2), *b = calloc(Kp * Np, 2), *c = malloc(Mp * Np * 2);
    float *af = malloc(sizeof(float) * (size_t)M * K); /* fp16 values: exact in float */
    float *bt = malloc(sizeof(float) * (size_t)K * N);
    if (!a || !b || !c || !af || !bt) {
        CHECK(!"out of host memory");
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
    MmShape shape = {M, N};
    /* stride_ak, stride_bn, stride_cn were compiled as 1 (':1'): no arguments. */
    GPU_CHECK(mm_tuned_kernel_matmul_launch(NULL, mm_grid, &shape, da, db, dc, M, N, K, (int32_t)Kp,
                                            (int32_t)Np, (int32_t)Np));
    int chosen = -1;
    GPU_CHECK(mm_tuned_kernel_matmul_tune(NULL, mm_grid, &shape, da, db, dc, M, N, K, (int32_t)Kp,
                                          (int32_t)Np, (int32_t)Np, &chosen));
    GPU_CHECK(tric_device_synchronize(dev));
    GPU_CHECK(tric_copy_to_host(c, dc, 0, Mp * Np * 2, NULL));
    ExMatmulError e = ex_matmul_error(af, bt, c, NULL, M, N, K, Np); /* as ex_matmul's check */
    printf("mm_tuned_kernel_matmul    M=%d N=%d K=%d  config %d (%s)  max abs error %g %s\n", M, N,
           K, chosen, chosen >= 0 ? mm_tuned_kernel_matmul_configs[chosen].text : "?", e.max_err,
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
    on_mock = argc > 1 && !strcmp(argv[1], "--mock");
    tric_device dev;
    if (tric_device_open("cuda:0", &dev) != TRIC_SUCCESS) {
        printf("SKIP: no GPU (%s)\n", tric_last_error());
        return 77;
    }
    run_errors(dev);
    static const int sizes[] = {1000, 5000, 65536, 1000003};
    for (int i = 0; i < 4; i++)
        run_tuned(dev, sizes[i], (uint64_t)i + 1);
    run_tuned(dev, 5000, 9); /* the same key again: the choice made before */
    run_tuned_dependent(dev, 8192, 15);
    run_tuned_threads(dev);
    run_baked(dev, 5000, 2, 11);
    run_baked(dev, 100000, 0, 12);
    run_baked(dev, 777, -1, 13);
    int chosen = -1, n = 777;
    VaBuffers b;
    if (va_alloc(dev, n, 14, &b) && vab_vector_add_kernel_tune(NULL, baked_grid, &n, b.x, b.y,
                                                               b.out, n, &chosen) == TRIC_SUCCESS)
        check_written_table(777, chosen);
    else
        CHECK(!"vab_vector_add_kernel_tune n=777");
    va_free(&b);
    if (!on_mock) {
        static const int shapes[][3] = {
            {200, 136, 100}, {512, 512, 512}, {1000, 520, 264}, {64, 1024, 4096}};
        for (int i = 0; i < 4; i++)
            run_matmul(dev, shapes[i][0], shapes[i][1], shapes[i][2], (uint64_t)i + 20);
        run_matmul(dev, 512, 512, 512, 30); /* the same key again */
    }
    vector_add_tuned_unload();
    vab_unload();
    mm_tuned_unload();
    tric_device_close(dev);
    if (failures) {
        printf("emitc_tuned: %d failure(s)\n", (int)failures);
        return 1;
    }
    printf("emitc_tuned: OK\n");
    return 0;
}
