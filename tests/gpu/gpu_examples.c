/* gpu_examples (label gpu): the seed kernels on cuda:0 against the C reference, at odd sizes,
 * with fresh random inputs and the outputs poisoned (0xFF bytes) before every run; every element
 * is checked. Then the disk cache: a second compile is a hit and gives the same PTX. (Error paths
 * are in gpu_errors.c: a sticky fault would spoil this process's context.)
 * Skips (exit 77) with the reason when cuda:0 cannot be opened. */
#include "examples/example_kernels.h"
#include "tests/runtime_check.h"

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
