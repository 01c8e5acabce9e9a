/* bench_norms [OPTIONS]: issue 10's tutorial bars on cuda:0, tric's side (scripts/triton_norms.py
 * times the same .tri files with Triton; scripts/norms_report.sh runs both and prints the
 * ratios). Kernels and launch parameters: examples/norms_kernels.h.
 *   - softmax (examples/softmax.tri, tutorial 02): fp32 and fp16, 4096 x {2048, 8192, 32768};
 *     GB/s = 2 M N element size / t (one read, one write), as the tutorial counts;
 *   - layer_norm (examples/layer_norm.tri, tutorial 05 forward): the same shapes, GB/s likewise;
 *   - attention (examples/attention.tri, tutorial 06 forward): fp16, head dim 64 and 128, causal
 *     and not, N_CTX 1024 and 4096 with Z x H = 4 x 8, 16384 with 1 x 8; TFLOPS = 4 Z H N^2 D / t
 *     (two matmuls), halved when causal, as the tutorial counts. Every config of a small list
 *     (tutorial 06's autotune space, Hopper-sized) is timed and the best reported.
 * Each measurement is do_bench's: one launch to estimate, warm-up launches for 25 ms, then enough
 * launches for about --time-ms (default 100) of kernel time (3 to 1000), each between two CUDA
 * events with the L2 flushed before it (a 256 MiB memset outside the events); the median.
 * Checks first (every element, against C in double): softmax and layer norm at the timed shapes
 * (the first 512 rows), attention at N_CTX 256, Z x H = 1 x 2 with every config. A failed check
 * prints a warning and the exit status is 1; timings follow anyway.
 *
 * Options:
 *   --quick             4096 x 8192 only; attention N_CTX 1024 and 4096
 *   --only=LIST         softmax,layer_norm,attention (comma-separated; default all)
 *   --arch=ARCH         tric_compile_options.arch (default sm_90a on sm_90 devices: wgmma)
 *   --csv=FILE          one row per measurement: provider,bench,dtype,M,N,head,causal,config,
 *                       time_us,value,unit,row (row: best, or config with --all)
 *   --all               also print every attention config's time
 *   --no-check          skip the checks
 *   --time-ms=T         kernel time per measurement (default 100)
 * Exits 77 when cuda:0 cannot be opened. */
#include "bench_util.h"
#include "examples/norms_kernels.h"

#include <math.h>

#define CHECK_ROWS 512 /* softmax and layer norm: rows checked against C */
#define CHECK_CTX  256 /* attention: the check's N_CTX (Z x H = 1 x 2) */

static double time_ms_opt = 100;
static tric_buffer flush_buf;

static int norms_launch_fn(void *ctx)
{
    const NkRun *r = ctx;
    if (tric_launch(r->kernel, r->grid, r->args, r->nargs, NULL) != TRIC_SUCCESS) {
        printf("error: %s\n", tric_last_error());
        return 1;
    }
    return 0;
}

/* Milliseconds per launch of r (see the header comment), 0 on an error (printed). */
static double time_run(const NkRun *r)
{
    int reps = 0;
    return bench_do_bench_ms(norms_launch_fn, (void *)r, flush_buf, time_ms_opt,
                             bench_tric_stream(r->kernel->module->device), &reps);
}

static FILE *csv;

static void report(const char *bench, const char *dtype, int M, int N, int head, int causal,
                   const char *config, double ms, double value, const char *unit, const char *row)
{
    char shape[64];
    if (head)
        snprintf(shape, sizeof shape, "ZH=%d N=%d D=%d %s", M, N, head, causal ? "causal" : "full");
    else
        snprintf(shape, sizeof shape, "%dx%d", M, N);
    printf("%s%-11s %-5s %-26s %-14s %10.1f %8.1f %s\n", strcmp(row, "best") ? "#   " : "", bench,
           dtype, shape, config, ms * 1000, value, unit);
    fflush(stdout);
    if (csv) {
        fprintf(csv, "tric,%s,%s,%d,%d,%d,%d,\"%s\",%.3f,%.3f,%s,%s\n", bench, dtype, M, N, head,
                causal, config, ms * 1000, value, unit, row);
        fflush(csv);
    }
}

static const NkAttnConfig attn_configs[] = {
    {128, 64, 8, 3, 0}, {128, 64, 4, 3, 0}, {128, 128, 8, 2, 0}, {128, 128, 8, 3, 0},
    {64, 64, 4, 3, 0},  {128, 64, 8, 3, 1}, {128, 128, 8, 3, 1},
};
enum { NATTN = sizeof attn_configs / sizeof attn_configs[0] };

static void attn_config_name(char *out, size_t len, const NkAttnConfig *c)
{
    snprintf(out, len, "%dx%d,w%d,s%d%s", c->block_m, c->block_n, c->num_warps, c->num_stages,
             c->warp_specialize ? ",ws" : "");
}

int main(int argc, char **argv)
{
    const char *arch = NULL, *csv_path = NULL, *only = "softmax,layer_norm,attention";
    int quick = 0, check = 1, all = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--quick"))
            quick = 1;
        else if (!strncmp(a, "--only=", 7))
            only = a + 7;
        else if (!strncmp(a, "--arch=", 7) && a[7])
            arch = a + 7;
        else if (!strncmp(a, "--csv=", 6) && a[6])
            csv_path = a + 6;
        else if (!strcmp(a, "--all"))
            all = 1;
        else if (!strcmp(a, "--no-check"))
            check = 0;
        else if (!strncmp(a, "--time-ms=", 10) && atof(a + 10) > 0)
            time_ms_opt = atof(a + 10);
        else {
            fprintf(stderr,
                    "usage: %s [--quick] [--only=softmax,layer_norm,attention] [--arch=ARCH] "
                    "[--csv=FILE] [--all] [--no-check] [--time-ms=T]\n",
                    argv[0]);
            return 2;
        }
    }
    tric_device dev = bench_open();
    if (!dev)
        return 77;
    if (!arch && !strcmp(tric_device_arch(dev), "sm_90"))
        arch = "sm_90a"; /* wgmma, as Triton uses on Hopper */
    printf("# arch: %s\n", bench_arch_label(dev, arch));
    if (csv_path) {
        csv = fopen(csv_path, "w");
        if (!csv) {
            fprintf(stderr, "cannot write %s\n", csv_path);
            return 2;
        }
        fputs("provider,bench,dtype,M,N,head,causal,config,time_us,value,unit,row\n", csv);
    }
    if (tric_buffer_alloc(dev, BENCH_FLUSH_BYTES, &flush_buf) != TRIC_SUCCESS)
        flush_buf = NULL;
    char path_sm[4096], path_ln[4096], path_at[4096];
    const char *tri_sm = ex_tri_path("softmax.tri", path_sm, sizeof path_sm);
    const char *tri_ln = ex_tri_path("layer_norm.tri", path_ln, sizeof path_ln);
    const char *tri_at = ex_tri_path("attention.tri", path_at, sizeof path_at);
    int failed = 0;
    printf("%-15s %-5s %-26s %-14s %10s %8s\n", "# kernel", "dtype", "shape", "config", "time_us",
           "value");

    static const int cols_all[] = {2048, 8192, 32768}, cols_quick[] = {8192};
    const int *cols = quick ? cols_quick : cols_all;
    int ncols = quick ? 1 : 3, rows = 4096;
    for (int which = 0; which < 2; which++) {
        const char *name = which ? "layer_norm" : "softmax";
        if (!strstr(only, name))
            continue;
        for (int fp16 = 0; fp16 <= 1; fp16++)
            for (int ci = 0; ci < ncols; ci++) {
                NkRun r;
                uint64_t seed = 100 + (uint64_t)(ci * 2 + fp16);
                int bad =
                    which
                        ? nk_layer_norm_setup(&r, dev, tri_ln, fp16, rows, cols[ci], arch, 0, seed)
                        : nk_softmax_setup(&r, dev, tri_sm, fp16, rows, cols[ci], arch, seed);
                if (bad) {
                    printf("# %s %dx%d: setup failed\n", name, rows, cols[ci]);
                    nk_run_free(&r);
                    failed = 1;
                    continue;
                }
                if (check) {
                    if (tric_launch(r.kernel, r.grid, r.args, r.nargs, NULL) != TRIC_SUCCESS ||
                        tric_device_synchronize(dev) != TRIC_SUCCESS) {
                        printf("# %s: %s\n", name, tric_last_error());
                        bad = 1;
                    } else {
                        /* the first rows only: the host reference of 4096 x 32768 would take
                                         * longer than the GPU part of the whole benchmark */
                        int vrows = rows < CHECK_ROWS ? rows : CHECK_ROWS;
                        bad = which ? nk_layer_norm_verify(&r, fp16, vrows, cols[ci], seed)
                                    : nk_softmax_verify(&r, fp16, vrows, cols[ci], seed);
                    }
                    if (bad)
                        printf("# WARNING: %s %s %dx%d: the check failed (see stderr)\n", name,
                               fp16 ? "fp16" : "fp32", rows, cols[ci]);
                    failed |= bad;
                }
                double ms = time_run(&r);
                double gbps =
                    ms > 0 ? 2.0 * rows * cols[ci] * (fp16 ? 2 : 4) / (ms * 1e-3) / 1e9 : 0;
                char config[48];
                snprintf(config, sizeof config, "grid=%u,w%d", r.grid.x,
                         tric_kernel_threads(r.kernel) / 32);
                report(name, fp16 ? "fp16" : "fp32", rows, cols[ci], 0, 0, config, ms, gbps, "GB/s",
                       "best");
                nk_run_free(&r);
            }
    }

    if (strstr(only, "attention")) {
        static const int ctx_all[] = {1024, 4096, 16384};
        int nctx = quick ? 2 : 3;
        for (int head = 64; head <= 128; head *= 2) {
            /* Each config compiled once per (head, causal): the kernel does not depend on the
             * shape (norms_kernels.h); the inputs are set up once per shape for all of them. */
            NkRun mods[2][NATTN];
            int usable[2][NATTN];
            NkRun chk;
            memset(&chk, 0, sizeof chk);
            int chk_ok = !check || !nk_attention_alloc(&chk, dev, 1, 2, CHECK_CTX, head, 7);
            for (int causal = 0; causal <= 1; causal++)
                for (int c = 0; c < NATTN; c++) {
                    char name[48];
                    attn_config_name(name, sizeof name, &attn_configs[c]);
                    memset(&mods[causal][c], 0, sizeof mods[causal][c]);
                    usable[causal][c] = attn_configs[c].block_n <= head; /* static_assert */
                    if (!usable[causal][c])
                        continue;
                    if (nk_attention_compile(&mods[causal][c], dev, tri_at, head, causal,
                                             &attn_configs[c], arch)) {
                        bench_print_skip("attention", name);
                        usable[causal][c] = 0;
                        continue;
                    }
                    if (!check || !chk_ok)
                        continue;
                    /* poisoned again: a config that wrote nothing must not pass on another's */
                    tric_memset(chk.buf[3], 0, 0xff, (size_t)2 * CHECK_CTX * 4, NULL);
                    tric_memset(chk.buf[4], 0, 0xff, (size_t)2 * CHECK_CTX * head * 2, NULL);
                    if (tric_launch(mods[causal][c].kernel,
                                    nk_attention_grid(1, 2, CHECK_CTX, &attn_configs[c]), chk.args,
                                    chk.nargs, NULL) != TRIC_SUCCESS ||
                        tric_device_synchronize(dev) != TRIC_SUCCESS) {
                        bench_print_skip("attention", name);
                        usable[causal][c] = 0;
                    } else if (nk_attention_verify(&chk, 1, 2, CHECK_CTX, head, causal, 7)) {
                        printf("# WARNING: attention D=%d %s %s: the check failed\n", head,
                               causal ? "causal" : "full", name);
                        failed = 1;
                    }
                }
            if (!chk_ok) {
                printf("# WARNING: attention D=%d: the check's inputs could not be set up\n", head);
                failed = 1;
            }
            nk_run_free(&chk);
            for (int ni = 0; ni < nctx; ni++) {
                int n_ctx = ctx_all[ni], Z = n_ctx >= 16384 ? 1 : 4, H = 8;
                NkRun data;
                memset(&data, 0, sizeof data);
                if (nk_attention_alloc(&data, dev, Z, H, n_ctx, head, 9)) {
                    printf("# attention D=%d N_CTX=%d: setup failed\n", head, n_ctx);
                    nk_run_free(&data);
                    failed = 1;
                    continue;
                }
                for (int causal = 0; causal <= 1; causal++) {
                    double best = 0, flops = 4.0 * Z * H * (double)n_ctx * n_ctx * head;
                    if (causal)
                        flops *= 0.5;
                    char best_name[48] = "-", name[48];
                    for (int c = 0; c < NATTN; c++) {
                        if (!usable[causal][c])
                            continue;
                        attn_config_name(name, sizeof name, &attn_configs[c]);
                        data.kernel = mods[causal][c].kernel;
                        data.grid = nk_attention_grid(Z, H, n_ctx, &attn_configs[c]);
                        double ms = time_run(&data);
                        if (ms > 0 && (best == 0 || ms < best)) {
                            best = ms;
                            snprintf(best_name, sizeof best_name, "%s", name);
                        }
                        if (all && ms > 0)
                            report("attention", "fp16", Z * H, n_ctx, head, causal, name, ms,
                                   flops / (ms * 1e-3) / 1e12, "TFLOPS", "config");
                    }
                    report("attention", "fp16", Z * H, n_ctx, head, causal, best_name, best,
                           best > 0 ? flops / (best * 1e-3) / 1e12 : 0, "TFLOPS", "best");
                }
                data.kernel = NULL;
                nk_run_free(&data);
            }
            for (int causal = 0; causal <= 1; causal++)
                for (int c = 0; c < NATTN; c++)
                    nk_run_free(&mods[causal][c]);
        }
    }
    if (csv)
        fclose(csv);
    if (flush_buf)
        tric_buffer_free(flush_buf);
    tric_device_close(dev);
    return failed;
}
