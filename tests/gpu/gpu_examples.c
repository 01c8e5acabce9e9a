/* gpu_examples (label gpu): the seed kernels on cuda:0 against the C reference, at odd sizes,
 * with fresh random inputs and the outputs poisoned (0xFF bytes) before every run; every element
 * is checked. Tutorial 11's programmatic dependent launch: a chain of launches with and without
 * it. Then the disk cache: a second compile is a hit and gives the same PTX. (Error paths
 * are in gpu_errors.c: a sticky fault would spoil this process's context.)
 * Skips (exit 77) with the reason when cuda:0 cannot be opened. */
#include "examples/example_kernels.h"
#include "tests/runtime_check.h"

#include <time.h>
#include <unistd.h>

static void test_kernels(tric_device dev)
{
    const char *va = TRIC_SOURCE_DIR "/examples/vector_add.tri";
    const char *mm = TRIC_SOURCE_DIR "/examples/matmul.tri";
    char p1[4096], p2[4096];
    if (access(va, R_OK) != 0) /* carried to another machine: run from the repo root */
        va = ex_tri_path("vector_add.tri", p1, sizeof p1);
    if (access(mm, R_OK) != 0)
        mm = ex_tri_path("matmul.tri", p2, sizeof p2);

    static const int vsizes[] = {1, 1000, 98437, 1 << 20, (1 << 22) + 3};
    for (int i = 0; i < 5; i++)
        failures += ex_vector_add(dev, va, vsizes[i], (uint64_t)(100 + i));

    static const int msizes[][3] = {
        {257, 129, 100}, {1, 1, 1}, {64, 64, 32}, {333, 517, 259}, {1000, 77, 1024}};
    static const ExMatmulConfig big = {128, 128, 64, 4, 3};
    for (int i = 0; i < 5; i++) {
        int M = msizes[i][0], N = msizes[i][1], K = msizes[i][2];
        failures += ex_matmul(dev, mm, 0, 0, M, N, K, &EX_MATMUL_SMALL, (uint64_t)(200 + i));
        failures += ex_matmul(dev, mm, 1, 0, M, N, K, &EX_MATMUL_SMALL, (uint64_t)(300 + i));
        failures += ex_matmul(dev, mm, 1, 8, M, N, K, &EX_MATMUL_SMALL, (uint64_t)(400 + i));
        failures += ex_matmul(dev, mm, 1, 8, M, N, K, &big, (uint64_t)(500 + i));
    }
}

/* examples/pdl_add.tri (Triton's tutorial 11) in a chain of CHAIN launches on one stream, each
 * adding y to the output of the one before (out_i = out_{i-1} + y, out_0 = x + y), with
 * tric_launch_ex's programmatic_dependent (each launch may begin while the one before finishes;
 * its gdc_wait orders its loads after that one's stores) and without: the last output equals the
 * C chain's bit for bit both ways, at odd sizes. */
static void test_pdl_chain(tric_device dev)
{
    enum { CHAIN = 8 };
    char p1[4096];
    const char *path = TRIC_SOURCE_DIR "/examples/pdl_add.tri";
    if (access(path, R_OK) != 0)
        path = ex_tri_path("pdl_add.tri", p1, sizeof p1);
    static const char *defs[] = {"BLOCK_SIZE=1024", "USE_GDC=True"};
    tric_compile_options opt = tric_compile_options_default();
    opt.kernel = "add_kernel";
    opt.signature = "*fp32:16,*fp32:16,*fp32:16,i32";
    opt.constexprs = defs;
    opt.nconstexprs = 2;
    tric_module mod;
    tric_kernel k;
    if (tric_module_compile_file(dev, path, &opt, &mod) != TRIC_SUCCESS ||
        tric_module_get_kernel(mod, "add_kernel", &k) != TRIC_SUCCESS) {
        printf("FAIL: pdl_add.tri: %s\n", tric_last_error());
        failures++;
        return;
    }
    tric_stream s;
    CHECK(tric_stream_create(dev, &s) == TRIC_SUCCESS);
    static const int sizes[] = {1000, 1 << 16, (1 << 22) + 3};
    for (int si = 0; si < 3; si++) {
        int n = sizes[si];
        size_t bytes = (size_t)n * sizeof(float);
        float *x = malloc(bytes), *y = malloc(bytes), *want = malloc(bytes), *got = malloc(bytes);
        tric_buffer dx, dy, out[CHAIN];
        ExRng rng = {0x5eedULL + (uint64_t)si};
        for (int i = 0; i < n; i++) {
            x[i] = ex_rng_float(&rng) * 10.0f;
            y[i] = ex_rng_float(&rng);
            want[i] = x[i];
            for (int c = 0; c < CHAIN; c++)
                want[i] = want[i] + y[i];
        }
        CHECK(tric_buffer_alloc(dev, bytes, &dx) == TRIC_SUCCESS);
        CHECK(tric_buffer_alloc(dev, bytes, &dy) == TRIC_SUCCESS);
        for (int c = 0; c < CHAIN; c++)
            CHECK(tric_buffer_alloc(dev, bytes, &out[c]) == TRIC_SUCCESS);
        CHECK(tric_copy_to_device(dx, 0, x, bytes, NULL) == TRIC_SUCCESS);
        CHECK(tric_copy_to_device(dy, 0, y, bytes, NULL) == TRIC_SUCCESS);
        for (int dependent = 0; dependent < 2; dependent++) {
            for (int c = 0; c < CHAIN; c++)
                CHECK(tric_memset(out[c], 0, 0xff, bytes, NULL) == TRIC_SUCCESS);
            tric_launch_options lo = {.programmatic_dependent = dependent};
            tric_dim3 grid = {(unsigned)((n + 1023) / 1024), 1, 1};
            for (int c = 0; c < CHAIN; c++) {
                tric_arg args[] = {TRIC_ARG_BUF(c ? out[c - 1] : dx), TRIC_ARG_BUF(dy),
                                   TRIC_ARG_BUF(out[c]), TRIC_ARG_I32(n)};
                CHECK(tric_launch_ex(k, grid, args, 4, s, &lo) == TRIC_SUCCESS);
            }
            CHECK(tric_stream_synchronize(s) == TRIC_SUCCESS);
            CHECK(tric_copy_to_host(got, out[CHAIN - 1], 0, bytes, NULL) == TRIC_SUCCESS);
            int bad = 0;
            for (int i = 0; i < n; i++)
                bad += memcmp(&got[i], &want[i], sizeof(float)) != 0;
            if (bad)
                printf("FAIL: pdl_add chain n=%d, programmatic_dependent=%d: %d of %d wrong\n", n,
                       dependent, bad, n);
            CHECK(bad == 0);
        }
        /* what the overlap is worth (printed, not checked): REPS launches in a chain, each
         * reading the one before, host wall time to the last one's end, plain and dependent,
         * twice each in turn */
        enum { REPS = 400 };
        double us[2] = {1e30, 1e30};
        for (int round = 0; round < 4; round++) {
            int dependent = round % 2;
            tric_launch_options lo = {.programmatic_dependent = dependent};
            tric_dim3 grid = {(unsigned)((n + 1023) / 1024), 1, 1};
            struct timespec t0, t1;
            CHECK(tric_stream_synchronize(s) == TRIC_SUCCESS);
            clock_gettime(CLOCK_MONOTONIC, &t0);
            for (int r = 0; r < REPS; r++) {
                tric_arg args[] = {TRIC_ARG_BUF(out[r % 2]), TRIC_ARG_BUF(dy),
                                   TRIC_ARG_BUF(out[1 - r % 2]), TRIC_ARG_I32(n)};
                CHECK(tric_launch_ex(k, grid, args, 4, s, &lo) == TRIC_SUCCESS);
            }
            CHECK(tric_stream_synchronize(s) == TRIC_SUCCESS);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            double t = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
                       1e3 / REPS;
            us[dependent] = t < us[dependent] ? t : us[dependent];
        }
        printf("pdl_add: n=%d, a chain of %d launches: %.2f us a launch plain, %.2f us "
               "programmatic dependent (%.3fx)\n",
               n, REPS, us[0], us[1], us[0] / us[1]);
        tric_buffer_free(dx);
        tric_buffer_free(dy);
        for (int c = 0; c < CHAIN; c++)
            tric_buffer_free(out[c]);
        free(x);
        free(y);
        free(want);
        free(got);
    }
    tric_stream_destroy(s);
    tric_module_destroy(mod);
}

/* Compile twice with a fresh cache directory: the second compile is a hit with identical PTX. */
static void test_cache(tric_device dev, const char *va)
{
    char tmp[] = "/tmp/tric-gpu-cache-XXXXXX";
    if (!mkdtemp(tmp)) {
        CHECK(!"mkdtemp");
        return;
    }
    setenv("TRIC_CACHE_DIR", tmp, 1);
    /* This test is about the cache: it runs with caching on whatever the caller's environment. */
    const char *no_cache = getenv("TRIC_NO_CACHE");
    char *saved_no_cache = no_cache ? strdup(no_cache) : NULL;
    unsetenv("TRIC_NO_CACHE");
    tric_module m1, m2;
    tric_kernel k;
    CHECK(ex_compile_vector_add(dev, va, &m1, &k) == TRIC_SUCCESS);
    CHECK(ex_compile_vector_add(dev, va, &m2, &k) == TRIC_SUCCESS);
    CHECK(strcmp(tric_module_code(m1), tric_module_code(m2)) == 0);
    tric_module_destroy(m1);
    tric_module_destroy(m2);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "ls %s/*.ptx >/dev/null 2>&1", tmp);
    CHECK(system(cmd) == 0); /* an entry was written */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "note: could not remove %s\n", tmp);
    unsetenv("TRIC_CACHE_DIR");
    if (saved_no_cache) {
        setenv("TRIC_NO_CACHE", saved_no_cache, 1);
        free(saved_no_cache);
    }
}

int main(void)
{
    tric_device dev;
    if (tric_device_open("cuda:0", &dev) != TRIC_SUCCESS) {
        printf("SKIP: %s\n", tric_last_error());
        return 77;
    }
    printf("device: %s (arch %s)\n", tric_device_name(dev), tric_device_arch(dev));
    test_kernels(dev);
    test_pdl_chain(dev);
    char p1[4096];
    const char *va = TRIC_SOURCE_DIR "/examples/vector_add.tri";
    if (access(va, R_OK) != 0)
        va = ex_tri_path("vector_add.tri", p1, sizeof p1);
    test_cache(dev, va);
    CHECK(tric_device_synchronize(dev) == TRIC_SUCCESS);
    tric_device_close(dev);
    if (failures) {
        printf("FAIL: %d\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
