/* bench_matmul [SIZE...] [--config BMxBNxBK,WARPS,STAGES]...: the seed matmuls on cuda:0, fp16
 * inputs, M = N = K = 1024, 2048, 4096, 8192 by default. For each size and kernel, every config
 * (default: five of seed 2's autotune list) is compiled in process and timed (3 warm-up launches,
 * then the median of 10 by CUDA events); the best is reported in TFLOPS = 2 M N K / t.
 *   - matmul_kernel (seed 1): fp16 A, B; fp32 C;
 *   - kernel_matmul (seed 2): fp16 A, B, C; T_ACC fp32; GROUP_SIZE_M = 8.
 * Both are first checked against C at an odd size (333 x 517 x 259) with every config. */
#include "bench_util.h"

#define MAX_CONFIGS 16

static ExMatmulConfig configs[MAX_CONFIGS] = {
    {128, 256, 64, 8, 3}, {128, 128, 64, 4, 4}, {128, 128, 32, 4, 4},
    {64, 256, 32, 4, 4},  {128, 64, 64, 4, 4},
};
static int nconfigs = 5;

static void config_name(char *out, size_t len, const ExMatmulConfig *c) {
    snprintf(out, len, "%dx%dx%d,w%d,s%d", c->block_m, c->block_n, c->block_k, c->num_warps,
             c->num_stages);
}

/* Median milliseconds of one config at size s, or 0 when it does not compile or run. */
static double time_config(tric_device dev, const char *tri, int seed2, int s,
                          const ExMatmulConfig *cfg, tric_buffer a, tric_buffer b, tric_buffer c) {
    int64_t v[9] = {s, s, s, s, 1, s, 1, s, 1};
    char signature[256], name[64];
    ex_matmul_signature(signature, sizeof signature, seed2, v);
    config_name(name, sizeof name, cfg);
    tric_module mod;
    tric_kernel k;
    if (ex_compile_matmul(dev, tri, seed2, 8, cfg, signature, &mod, &k) != TRIC_SUCCESS) {
        printf("# %s %s: does not compile: %.200s\n", seed2 ? "kernel_matmul" : "matmul_kernel",
               name, tric_last_error());
        return 0;
    }
    tric_arg args[12] = {TRIC_ARG_BUF(a), TRIC_ARG_BUF(b), TRIC_ARG_BUF(c)};
    for (int i = 0; i < 9; i++)
        args[3 + i] = TRIC_ARG_I32((int32_t)v[i]);
    unsigned programs = (unsigned)(((s + cfg->block_m - 1) / cfg->block_m) *
                                   ((s + cfg->block_n - 1) / cfg->block_n));
    double ms = bench_kernel_ms(k, (tric_dim3){programs, 1, 1}, args, 12, 3, 10);
    tric_module_destroy(mod);
    return ms;
}

int main(int argc, char **argv) {
    int sizes[16] = {1024, 2048, 4096, 8192}, nsizes = 0, user_configs = 0;
    for (int i = 1; i < argc; i++) {
        ExMatmulConfig c;
        if (!strcmp(argv[i], "--config") && i + 1 < argc && user_configs < MAX_CONFIGS &&
            sscanf(argv[i + 1], "%dx%dx%d,%d,%d", &c.block_m, &c.block_n, &c.block_k,
                   &c.num_warps, &c.num_stages) == 5) {
            configs[user_configs++] = c;
            i++;
        } else if (atoi(argv[i]) > 0 && nsizes < 16) {
            sizes[nsizes++] = atoi(argv[i]);
        } else {
            fprintf(stderr, "usage: %s [SIZE...] [--config BMxBNxBK,WARPS,STAGES]...\n", argv[0]);
            return 2;
        }
    }
    if (!nsizes)
        nsizes = 4;
    if (user_configs)
        nconfigs = user_configs;
    tric_device dev = bench_open();
    if (!dev)
        return 77;
    char path[4096];
    const char *tri = ex_tri_path("matmul.tri", path, sizeof path);

    int failed = 0;
    for (int i = 0; i < nconfigs; i++) {
        failed |= ex_matmul(dev, tri, 0, 0, 333, 517, 259, &configs[i], 11);
        failed |= ex_matmul(dev, tri, 1, 8, 333, 517, 259, &configs[i], 12);
    }
    if (failed)
        printf("# WARNING: a correctness check failed (see above); timings follow anyway\n");

    printf("%-16s %6s %22s %10s %10s\n", "# kernel", "M=N=K", "best config", "time_us", "TFLOPS");
    for (int si = 0; si < nsizes; si++) {
        int s = sizes[si];
        size_t n = (size_t)s * s;
        uint16_t *host = malloc(n * 2);
        ExRng rng = {(uint64_t)s * 77 + 1};
        for (size_t i = 0; i < n; i++)
            host[i] = tric_f32_to_f16(ex_rng_float(&rng));
        tric_buffer a, b, c;
        EX_CHECK(tric_buffer_alloc(dev, n * 2, &a));
        EX_CHECK(tric_buffer_alloc(dev, n * 2, &b));
        EX_CHECK(tric_buffer_alloc(dev, n * 4, &c));
        EX_CHECK(tric_copy_to_device(a, 0, host, n * 2, NULL));
        EX_CHECK(tric_copy_to_device(b, 0, host, n * 2, NULL));
        free(host);
        for (int seed2 = 0; seed2 <= 1; seed2++) {
            double best = 0;
            int best_i = -1;
            for (int ci = 0; ci < nconfigs; ci++) {
                double ms = time_config(dev, tri, seed2, s, &configs[ci], a, b, c);
                if (ms > 0 && (best_i < 0 || ms < best))
                    best = ms, best_i = ci;
            }
            char name[64] = "-";
            if (best_i >= 0)
                config_name(name, sizeof name, &configs[best_i]);
            printf("%-16s %6d %22s %10.1f %10.1f\n", seed2 ? "kernel_matmul" : "matmul_kernel", s,
                   name, best * 1000, best > 0 ? 2.0 * s * s * (double)s / (best * 1e-3) / 1e12 : 0);
            fflush(stdout);
        }
        tric_buffer_free(a);
        tric_buffer_free(b);
        tric_buffer_free(c);
    }
    tric_device_close(dev);
    return failed;
}
