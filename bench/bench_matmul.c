/* bench_matmul [SIZE...] [OPTIONS]: the seed matmuls on cuda:0, fp16 inputs, M = N = K = 1024,
 * 2048, 4096, 8192 by default. For each size and kernel, every config (default: five of seed 2's
 * autotune list) is compiled in process and timed (3 warm-up launches, then the median of 10 by
 * CUDA events); the best is reported in TFLOPS = 2 M N K / t.
 *   - matmul_kernel (seed 1): fp16 A, B; fp32 C;
 *   - kernel_matmul (seed 2): fp16 A, B, C; T_ACC fp32; GROUP_SIZE_M = 8.
 * Both are first checked against C at an odd size (333 x 517 x 259) with every config.
 *
 * Options:
 *   --config BMxBNxBK,WARPS,STAGES  a config to time (repeatable; replaces the default five)
 *   --seed-configs                  all 13 configs of seed 2's autotune list, in its order
 *                                   (scripts/triton_anchor.py's cfgs()); --config adds to them
 *   --arch=ARCH                     tric_compile_options.arch (e.g. sm_80: cp.async + ldmatrix +
 *                                   mma.sync on a Hopper GPU); default: the device's own
 *   --kernel=seed1|seed2|both       which kernels (default both)
 *   --csv=FILE                      one row per size/kernel (the best config); with --all also
 *                                   one row per config (columns: bench_util.h, BENCH_CSV_HEADER)
 *   --all                           print (and write) every config's time, not only the best
 *   --no-check                      skip the correctness checks (long sweeps)
 *   --reps=N                        timed launches per config (default 10)
 *   --inputs=signed|rand            A and B uniform in [-1, 1) (default) or in [0, 1) as the seed's
 *                                   torch.rand: the data changes the time at the H100's power
 *                                   limit (Triton's kernel at 4096: 658 against 679 TFLOPS), so a
 *                                   comparison gives both sides the same
 *                                   (scripts/triton_seed2_configs.py --inputs=)
 *   --do-bench                      time as triton.testing.do_bench (and bench_seed2_report) do
 *                                   instead: ~25 ms of warm-up, ~100 ms of launches, L2 flushed
 *                                   (a 256 MiB memset) before each, the median; what Triton's
 *                                   scripts time with, so back-to-back launches of large sizes
 *                                   (which run hotter, at lower clocks) do not skew tric's side
 * A config that does not compile, or whose shared memory does not fit, is skipped with a
 * one-line message. */
#include "bench_util.h"

#define MAX_CONFIGS 32

static ExMatmulConfig configs[MAX_CONFIGS] = {
    {128, 256, 64, 8, 3}, {128, 128, 64, 4, 4}, {128, 128, 32, 4, 4},
    {64, 256, 32, 4, 4},  {128, 64, 64, 4, 4},
};
static int nconfigs = 5;

/* Seed 2's autotune configs, as scripts/triton_anchor.py's cfgs() lists them:
 * {BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, num_warps, num_stages}. */
static const ExMatmulConfig seed_configs[13] = {
    {128, 256, 64, 8, 3}, {64, 256, 32, 4, 4},  {128, 128, 32, 4, 4},  {128, 64, 32, 4, 4},
    {64, 128, 32, 4, 4},  {128, 32, 32, 4, 4},  {128, 256, 128, 8, 3}, {256, 128, 128, 8, 3},
    {256, 64, 128, 4, 4}, {64, 256, 128, 4, 4}, {128, 128, 128, 4, 4}, {128, 128, 64, 4, 4},
    {128, 256, 64, 8, 4},
};

static const char *arch_opt = NULL; /* --arch */
static int reps = 10;

static const char *kernel_name(int seed2) { return seed2 ? "kernel_matmul" : "matmul_kernel"; }

/* ex_compile_matmul with the target set (--arch). */
static tric_status compile_matmul(tric_device dev, const char *tri, int seed2,
                                  const ExMatmulConfig *cfg, const char *signature,
                                  tric_module *mod, tric_kernel *kernel)
{
    char bm[32], bn[32], bk[32];
    snprintf(bm, sizeof bm, "BLOCK_SIZE_M=%d", cfg->block_m);
    snprintf(bn, sizeof bn, "BLOCK_SIZE_N=%d", cfg->block_n);
    snprintf(bk, sizeof bk, "BLOCK_SIZE_K=%d", cfg->block_k);
    const char *constexprs[] = {bm, bn, bk, "GROUP_SIZE_M=8", "T_C=tl.float16", "T_ACC=tl.float32"};
    tric_compile_options opt = tric_compile_options_default();
    opt.kernel = kernel_name(seed2);
    opt.signature = signature;
    opt.constexprs = constexprs;
    opt.nconstexprs = seed2 ? 6 : 3;
    opt.num_warps = cfg->num_warps;
    opt.num_stages = cfg->num_stages;
    opt.arch = arch_opt;
    tric_status st = tric_module_compile_file(dev, tri, &opt, mod);
    return st != TRIC_SUCCESS ? st : tric_module_get_kernel(*mod, opt.kernel, kernel);
}

/* Whether a config compiles (and loads) for square size s; prints the skip line when not. */
static int config_usable(tric_device dev, const char *tri, int seed2, int s,
                         const ExMatmulConfig *cfg)
{
    int64_t v[9] = {s, s, s, s, 1, s, 1, s, 1};
    char signature[256], name[64];
    ex_matmul_signature(signature, sizeof signature, seed2, v);
    tric_module mod;
    tric_kernel k;
    if (compile_matmul(dev, tri, seed2, cfg, signature, &mod, &k) != TRIC_SUCCESS) {
        bench_config_name(name, sizeof name, cfg);
        bench_print_skip(kernel_name(seed2), name);
        return 0;
    }
    tric_module_destroy(mod);
    return 1;
}

/* Median milliseconds of one config at size s, or 0 when it does not compile or run. */
typedef struct MatmulLaunch {
    tric_kernel k;
    tric_dim3 grid;
    tric_arg args[12];
} MatmulLaunch;

static int matmul_launch_fn(void *ctx)
{
    MatmulLaunch *t = ctx;
    if (tric_launch(t->k, t->grid, t->args, 12, NULL) != TRIC_SUCCESS) {
        printf("error: %s\n", tric_last_error());
        return 1;
    }
    return 0;
}

/* flush: with --do-bench, the L2 flush buffer (bench_do_bench_ms); NULL: bench_kernel_ms. */
static double time_config(tric_device dev, const char *tri, int seed2, int s,
                          const ExMatmulConfig *cfg, tric_buffer a, tric_buffer b, tric_buffer c,
                          tric_buffer flush)
{
    int64_t v[9] = {s, s, s, s, 1, s, 1, s, 1};
    char signature[256], name[64];
    ex_matmul_signature(signature, sizeof signature, seed2, v);
    bench_config_name(name, sizeof name, cfg);
    tric_module mod;
    tric_kernel k;
    if (compile_matmul(dev, tri, seed2, cfg, signature, &mod, &k) != TRIC_SUCCESS) {
        bench_print_skip(kernel_name(seed2), name);
        return 0;
    }
    tric_arg args[12] = {TRIC_ARG_BUF(a), TRIC_ARG_BUF(b), TRIC_ARG_BUF(c)};
    for (int i = 0; i < 9; i++)
        args[3 + i] = TRIC_ARG_I32((int32_t)v[i]);
    unsigned programs = (unsigned)(((s + cfg->block_m - 1) / cfg->block_m) *
                                   ((s + cfg->block_n - 1) / cfg->block_n));
    double ms;
    if (flush) {
        MatmulLaunch t = {.k = k, .grid = {programs, 1, 1}};
        memcpy(t.args, args, sizeof args);
        int timed = 0;
        ms = bench_do_bench_ms(matmul_launch_fn, &t, flush, 100.0, bench_tric_stream(dev), &timed);
    } else {
        ms = bench_kernel_ms(k, (tric_dim3){programs, 1, 1}, args, 12, 3, reps);
    }
    tric_module_destroy(mod);
    return ms;
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [SIZE...] [--config BMxBNxBK,WARPS,STAGES]... [--seed-configs] "
            "[--arch=ARCH] [--kernel=seed1|seed2|both] [--csv=FILE] [--all] [--no-check] "
            "[--reps=N] [--do-bench] [--inputs=signed|rand]\n",
            argv0);
}

int main(int argc, char **argv)
{
    ExMatmulConfig extra[MAX_CONFIGS];
    BenchOptions o = {.configs = extra,
                      .max_configs = MAX_CONFIGS - 13,
                      .check = 1,
                      .reps = reps,
                      .sizes = {1024, 2048, 4096, 8192}};
    /* kernels: bit 0 seed 1, bit 1 seed 2 */
    int seed_cfgs = 0, kernels = 3, do_bench = 0, unsigned_inputs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (bench_shared_option(&o, argc, argv, &i)) {
            continue;
        } else if (!strcmp(a, "--seed-configs")) {
            seed_cfgs = 1;
        } else if (!strcmp(a, "--do-bench")) {
            do_bench = 1;
        } else if (!strcmp(a, "--inputs=signed") || !strcmp(a, "--inputs=rand")) {
            unsigned_inputs = !strcmp(a, "--inputs=rand");
        } else if (!strcmp(a, "--kernel=seed1")) {
            kernels = 1;
        } else if (!strcmp(a, "--kernel=seed2")) {
            kernels = 2;
        } else if (!strcmp(a, "--kernel=both")) {
            kernels = 3;
        } else {
            usage(argv[0]);
            return 2;
        }
    }
    int *sizes = o.sizes, nsizes = o.nsizes, user_configs = o.nconfigs, all = o.all,
        check = o.check;
    const char *csv_path = o.csv;
    arch_opt = o.arch;
    reps = o.reps;
    if (!nsizes)
        nsizes = 4;
    if (seed_cfgs || user_configs) {
        nconfigs = 0;
        if (seed_cfgs)
            for (int i = 0; i < 13; i++)
                configs[nconfigs++] = seed_configs[i];
        for (int i = 0; i < user_configs; i++)
            configs[nconfigs++] = extra[i];
    }
    tric_device dev = bench_open();
    if (!dev)
        return 77;
    const char *arch = bench_arch_label(dev, arch_opt);
    printf("# arch: %s\n", arch);
    printf("# inputs: %s\n", unsigned_inputs ? "uniform in [0, 1)" : "uniform in [-1, 1)");
    printf("# timing: %s\n", do_bench
                                 ? "as do_bench: L2 flushed before each launch, ~100 ms, median"
                                 : "back to back, median of --reps");
    char path[4096];
    const char *tri = ex_tri_path("matmul.tri", path, sizeof path);
    /* The correctness check goes through ex_matmul (example_kernels.h), which compiles with the
     * default options: $TRIC_ARCH carries --arch to it (runtime/cuda.c reads it). */
    if (arch_opt)
        setenv("TRIC_ARCH", arch_opt, 1);
    FILE *csv = bench_csv_open(csv_path);
    tric_buffer flush = NULL;
    if (do_bench)
        EX_CHECK(tric_buffer_alloc(dev, BENCH_FLUSH_BYTES, &flush));

    /* usable[seed2][ci]: the config compiles and loads at the first size (shared memory fits). */
    int usable[2][MAX_CONFIGS];
    for (int seed2 = 0; seed2 <= 1; seed2++)
        for (int ci = 0; ci < nconfigs; ci++)
            usable[seed2][ci] =
                (kernels >> seed2 & 1) && config_usable(dev, tri, seed2, sizes[0], &configs[ci]);

    int failed = 0;
    if (check) {
        for (int ci = 0; ci < nconfigs; ci++) {
            char name[64];
            bench_config_name(name, sizeof name, &configs[ci]);
            if (usable[0][ci] || usable[1][ci])
                printf("# check %s\n", name);
            if (usable[0][ci])
                failed |= ex_matmul(dev, tri, 0, 0, 333, 517, 259, &configs[ci], 11);
            if (usable[1][ci])
                failed |= ex_matmul(dev, tri, 1, 8, 333, 517, 259, &configs[ci], 12);
        }
        if (failed)
            printf("# WARNING: a correctness check failed (see above); timings follow anyway\n");
    } else {
        printf("# correctness checks skipped (--no-check)\n");
    }

    printf("%-16s %6s %22s %10s %10s\n", "# kernel", "M=N=K", "best config", "time_us", "TFLOPS");
    for (int si = 0; si < nsizes; si++) {
        int s = sizes[si];
        size_t n = (size_t)s * s;
        uint16_t *host = malloc(n * 2);
        if (!host) {
            fprintf(stderr, "out of host memory\n");
            return 1;
        }
        ExRng rng = {(uint64_t)s * 77 + 1};
        for (size_t i = 0; i < n; i++) {
            float x = ex_rng_float(&rng); /* [-1, 1) */
            host[i] = tric_f32_to_f16(unsigned_inputs ? 0.5f * (x + 1.0f) : x);
        }
        tric_buffer a, b, c;
        EX_CHECK(tric_buffer_alloc(dev, n * 2, &a));
        EX_CHECK(tric_buffer_alloc(dev, n * 2, &b));
        EX_CHECK(tric_buffer_alloc(dev, n * 4, &c));
        EX_CHECK(tric_copy_to_device(a, 0, host, n * 2, NULL));
        EX_CHECK(tric_copy_to_device(b, 0, host, n * 2, NULL));
        free(host);
        const char *sig = s % 16 == 0 ? ":16" : "open";
        for (int seed2 = 0; seed2 <= 1; seed2++) {
            if (!(kernels >> seed2 & 1))
                continue;
            double best = 0;
            int best_i = -1;
            char name[64];
            for (int ci = 0; ci < nconfigs; ci++) {
                if (!usable[seed2][ci])
                    continue;
                double ms = time_config(dev, tri, seed2, s, &configs[ci], a, b, c, flush);
                if (ms > 0 && (best_i < 0 || ms < best))
                    best = ms, best_i = ci;
                if (all && ms > 0) { /* a skipped config said why already */
                    bench_config_name(name, sizeof name, &configs[ci]);
                    printf("#   %-14s %6d %22s %10.1f %10.1f\n", kernel_name(seed2), s, name,
                           ms * 1000, bench_tflops(s, s, s, ms));
                    bench_csv_row(csv, "matmul", kernel_name(seed2), arch, "row", sig, "fp16", s, s,
                                  s, name, ms, "config");
                }
            }
            snprintf(name, sizeof name, "-");
            if (best_i >= 0)
                bench_config_name(name, sizeof name, &configs[best_i]);
            printf("%-16s %6d %22s %10.1f %10.1f\n", kernel_name(seed2), s, name, best * 1000,
                   bench_tflops(s, s, s, best));
            fflush(stdout);
            bench_csv_row(csv, "matmul", kernel_name(seed2), arch, "row", sig, "fp16", s, s, s,
                          name, best, "best");
        }
        tric_buffer_free(a);
        tric_buffer_free(b);
        tric_buffer_free(c);
    }
    if (flush)
        tric_buffer_free(flush);
    if (csv)
        fclose(csv);
    tric_device_close(dev);
    return failed;
}
