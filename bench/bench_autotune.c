/* bench_autotune [SIZE] [--group=G] [--no-all] [--ptx=FILE]: seed 2 autotuned by the runtime on cuda:0, as
 * its author runs it: examples/matmul.tri's kernel_matmul under its @triton.autotune decorator
 * (16 configs, key M, N, K), compiled with no block sizes and no signature (launches specialize),
 * launched through tric_launch_grid with the seed's grid lambda. M = N = K = SIZE (default 4096),
 * fp16, GROUP_SIZE_M = G (default 8). Prints:
 *   - the module compile time (every config) and the first launch's wall time (the tuning: every
 *     config timed, then the launch), both cold when TRIC_CACHE_DIR is a fresh directory; a second
 *     run with the same TRIC_CACHE_DIR shows the tuning read back from disk (milliseconds);
 *   - the config the tuner chose and its TFLOPS, and (unless --no-all) every config timed the way
 *     bench_matmul times (rest, 3 warm-up launches, median of 40 by CUDA events): the pick's time
 *     against the best one's (the bar: within 3%);
 *   - a correctness check of the tuned launch against C on 64 sampled elements.
 * With --ptx=FILE the kernel comes from a PTX that `tric` wrote ahead of time with a kernel per
 * config (tric examples/matmul.tri --kernel=kernel_matmul -D GROUP_SIZE_M=8 ... -o FILE): the same
 * tuning, over the PTX's kernels. TFLOPS = 2 M N K / t. */
#include "bench_util.h"

int main(int argc, char **argv)
{
    int size = 4096, group = 8, all = 1;
    const char *ptx = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--ptx=", 6))
            ptx = argv[i] + 6;
        else if (!strncmp(argv[i], "--group=", 8))
            group = atoi(argv[i] + 8);
        else if (!strcmp(argv[i], "--no-all"))
            all = 0;
        else if (atoi(argv[i]) > 0)
            size = atoi(argv[i]);
        else {
            fprintf(stderr, "usage: bench_autotune [SIZE] [--group=G] [--no-all] [--ptx=FILE]\n");
            return 2;
        }
    }
    tric_device dev = bench_open();
    if (!dev)
        return 77;
    char path[4096];
    const char *tri = ex_tri_path("matmul.tri", path, sizeof path);
    tric_module mod;
    tric_kernel k;
    double t0 = bench_now_us();
    if (ptx) {
        EX_CHECK(tric_module_load_file(dev, ptx, &mod));
        EX_CHECK(tric_module_get_kernel(mod, "kernel_matmul", &k));
    } else {
        EX_CHECK(ex_compile_seed2_tuned(dev, tri, group, &mod, &k));
    }
    double compile_ms = (bench_now_us() - t0) / 1e3;

    int64_t M = size, N = size, K = size;
    size_t na = (size_t)(M * K), nb = (size_t)(K * N), nc = (size_t)(M * N);
    uint16_t *ha = malloc(2 * na), *hb = malloc(2 * nb), *hc = malloc(2 * nc);
    uint32_t seed = 3407;
    for (size_t i = 0; i < na; i++)
        ha[i] = tric_f32_to_f16((float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f);
    for (size_t i = 0; i < nb; i++)
        hb[i] = tric_f32_to_f16((float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f);
    tric_buffer a, b, c;
    EX_CHECK(tric_buffer_alloc(dev, 2 * na, &a));
    EX_CHECK(tric_buffer_alloc(dev, 2 * nb, &b));
    EX_CHECK(tric_buffer_alloc(dev, 2 * nc, &c));
    EX_CHECK(tric_copy_to_device(a, 0, ha, 2 * na, NULL));
    EX_CHECK(tric_copy_to_device(b, 0, hb, 2 * nb, NULL));
    EX_CHECK(tric_memset(c, 0, 0xff, 2 * nc, NULL)); /* poisoned: NaN where nothing is written */
    tric_arg args[] = {TRIC_ARG_BUF(a),      TRIC_ARG_BUF(b),      TRIC_ARG_BUF(c),
                       TRIC_ARG_I32((int)M), TRIC_ARG_I32((int)N), TRIC_ARG_I32((int)K),
                       TRIC_ARG_I32((int)K), TRIC_ARG_I32(1),      TRIC_ARG_I32((int)N),
                       TRIC_ARG_I32(1),      TRIC_ARG_I32((int)N), TRIC_ARG_I32(1)};
    t0 = bench_now_us();
    EX_CHECK(tric_launch_grid(k, ex_seed2_grid, NULL, args, 12, NULL));
    EX_CHECK(tric_device_synchronize(dev));
    double first_ms = (bench_now_us() - t0) / 1e3;
    int chosen = -1;
    EX_CHECK(tric_kernel_tune(k, ex_seed2_grid, NULL, args, 12, NULL, &chosen));
    tric_kernel ck;
    EX_CHECK(tric_kernel_config(k, chosen, &ck));

    /* The tuned launch's output, 64 sampled elements against C. */
    EX_CHECK(tric_copy_to_host(hc, c, 0, 2 * nc, NULL));
    int bad = 0;
    for (int s = 0; s < 64; s++) {
        int64_t i = (int64_t)((seed = seed * 1664525u + 1013904223u) % (uint32_t)M);
        int64_t j = (int64_t)((seed = seed * 1664525u + 1013904223u) % (uint32_t)N);
        double want = 0;
        for (int64_t kk = 0; kk < K; kk++)
            want += (double)tric_f16_to_f32(ha[i * K + kk]) * tric_f16_to_f32(hb[kk * N + j]);
        double got = tric_f16_to_f32(hc[i * N + j]);
        bad += !(fabs(got - want) <= 0.01 * fabs(want) + 0.05);
    }
    printf("# seed 2 autotuned, M=N=K=%d, GROUP_SIZE_M=%d, %d configs\n", size, group,
           tric_kernel_num_configs(k));
    printf("check: %s (64 sampled elements against C)\n", bad ? "FAILED" : "ok");
    printf("%s: %.1f ms\n", ptx ? "module load (PTX)" : "module compile (every config)",
           compile_ms);
    printf("first launch (tuning + launch, synchronized): %.1f ms\n", first_ms);
    printf("chosen: config %d (%s)\n", chosen, tric_kernel_config_text(ck));

    tric_dim3 grid = ex_seed2_grid(ck, args, 12, NULL);
    double tuned_ms = bench_kernel_ms(k, grid, args, 12, 3, 40);
    printf("%-64s %8.3f ms %7.1f TFLOPS\n", "tuned kernel (tric_launch)", tuned_ms,
           bench_tflops(M, N, K, tuned_ms));
    if (all) {
        double best_ms = 0, pick_ms = 0;
        int best = -1;
        for (int i = 0; i < tric_kernel_num_configs(k); i++) {
            tric_kernel ci;
            if (tric_kernel_config(k, i, &ci) != TRIC_SUCCESS) {
                printf("config %2d: left out: %s\n", i, tric_last_error());
                continue;
            }
            double ms = bench_kernel_ms(ci, ex_seed2_grid(ci, args, 12, NULL), args, 12, 3, 40);
            printf("config %2d %-54s %8.3f ms %7.1f TFLOPS%s\n", i, tric_kernel_config_text(ci), ms,
                   bench_tflops(M, N, K, ms), i == chosen ? "  <- chosen" : "");
            if (ms > 0 && (best < 0 || ms < best_ms))
                best = i, best_ms = ms;
            if (i == chosen)
                pick_ms = ms;
        }
        if (best >= 0 && pick_ms > 0)
            printf("pick / best (time): %.3f (best: config %d; bar: <= 1.03)\n", pick_ms / best_ms,
                   best);
    }
    tric_buffer_free(a);
    tric_buffer_free(b);
    tric_buffer_free(c);
    free(ha);
    free(hb);
    free(hc);
    tric_module_destroy(mod);
    tric_device_close(dev);
    return bad ? 1 : 0;
}
