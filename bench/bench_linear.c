/* bench_linear [SIZE...] [OPTIONS]: the linear layer y = relu(x @ w.T + b) (examples/linear.tri,
 * linear_kernel) on cuda:0, fp16 and bf16, M = N = K = 4096, 8192 and 4100 by default.
 *   x [M, K] in two orientations: row-major (strides K, 1) and column-major (strides 1, M);
 *   w [N, K] row-major (the dot's B, [BLOCK_K, BLOCK_N], contiguous along K); b [N]; y [M, N]
 *   row-major, all four of the same dtype (y rounded from the fp32 accumulator, as torch's
 *   F.linear gives it).
 * The signature is what Triton's JIT would specialize the launch to: pointers :16, ints equal to 1
 * ":1", ints divisible by 16 ":16", others plain i32 -- so 4096 and 8192 run the ":16" kernel
 * (16-byte loads, pipelined) and 4100 the open one (M, N, K and the strides that are not
 * multiples of 16 plain i32 -- which tric_launch's own specialization then finds divisible by 4,
 * so tric runs it with 8-byte copies where Triton cannot). Grid: (cdiv(M, BLOCK_M),
 * cdiv(N, BLOCK_N)).
 *
 * Every (dtype, orientation, config) is checked first against C (float accumulation from the same
 * rounded inputs; y poisoned with NaN before the launch) at 200 x 136 x 104 (open signature) and
 * at 256 x 144 x 320 (the ":16" one): relative error ||y - ref|| / ||ref|| < 1e-2, no NaN. Then
 * each is timed (3 warm-up launches, the median of --reps=10 by CUDA events) and the best config
 * per case is printed: orientation, dtype, M=N=K, signature kind, best config, us, TFLOPS
 * (2 M N K / t).
 *
 * Options:
 *   --config BMxBNxBK,WARPS,STAGES  a config to try (repeatable; default 128x128x64,4,4)
 *   --arch=ARCH                     tric_compile_options.arch (e.g. sm_80); default the device's
 *   --dtype=fp16|bf16|both          (default both)
 *   --orient=row|col|both           x's orientation (default both)
 *   --csv=FILE                      one row per case (best config); with --all one per config
 *   --all                           print (and write) every config's time
 *   --no-check / --check-only       skip the checks / only run them
 *   --reps=N                        timed launches per config (default 10)
 *   --plain-signature               compile with no hints at all ("*fp16,...,i32") and let the
 *                                   runtime specialize each launch on its values (tric_launch); the
 *                                   signature column then reads "plain->:16" / "plain->open"
 *   --device=DEV                    default cuda:0; "cpu" runs the checks on the interpreter
 *                                   (implies --check-only) */
#include "bench_util.h"

#define MAX_CONFIGS 16

static ExMatmulConfig configs[MAX_CONFIGS] = {{128, 128, 64, 4, 4}};
static int nconfigs = 1;
static const char *arch_opt = NULL;
static int reps = 10;
static int plain_signature = 0;

typedef struct Dtype {
    const char *name; /* signature element type */
    uint16_t (*from_f32)(float);
    float (*to_f32)(uint16_t);
} Dtype;

static const Dtype dtypes[2] = {
    {"fp16", tric_f32_to_f16, tric_f16_to_f32},
    {"bf16", tric_f32_to_bf16, tric_bf16_to_f32},
};

static const char *orient_names[2] = {"x_row", "x_col"};

/* The launch's integer arguments: M N K stride_xm stride_xk stride_wn stride_wk stride_ym
 * stride_yn. */
static void linear_ints(int64_t v[9], int M, int N, int K, int xcol)
{
    v[0] = M, v[1] = N, v[2] = K;
    v[3] = xcol ? 1 : K;
    v[4] = xcol ? M : 1;
    v[5] = K, v[6] = 1;
    v[7] = N, v[8] = 1;
}

static const char *sig_kind(int M, int N, int K)
{
    if (M % 16 == 0 && N % 16 == 0 && K % 16 == 0)
        return plain_signature ? "plain->:16" : ":16";
    return plain_signature ? "plain->open" : "open";
}

static void linear_signature(char *out, size_t len, const char *t, const int64_t v[9])
{
    const char *p16 = plain_signature ? "" : ":16";
    int n = snprintf(out, len, "*%s%s,*%s%s,*%s%s,*%s%s", t, p16, t, p16, t, p16, t, p16);
    for (int i = 0; i < 9 && n > 0 && (size_t)n < len; i++)
        n += snprintf(out + n, len - (size_t)n, ",%s",
                      plain_signature  ? "i32"
                      : v[i] == 1      ? "i32:1"
                      : v[i] % 16 == 0 ? "i32:16"
                                       : "i32");
}

static tric_status compile_linear(tric_device dev, const char *tri, const char *signature,
                                  const ExMatmulConfig *cfg, tric_module *mod, tric_kernel *kernel)
{
    char bm[32], bn[32], bk[32];
    snprintf(bm, sizeof bm, "BLOCK_M=%d", cfg->block_m);
    snprintf(bn, sizeof bn, "BLOCK_N=%d", cfg->block_n);
    snprintf(bk, sizeof bk, "BLOCK_K=%d", cfg->block_k);
    const char *constexprs[] = {bm, bn, bk};
    tric_compile_options opt = tric_compile_options_default();
    opt.kernel = "linear_kernel";
    opt.signature = signature;
    opt.constexprs = constexprs;
    opt.nconstexprs = 3;
    opt.num_warps = cfg->num_warps;
    opt.num_stages = cfg->num_stages;
    opt.arch = arch_opt;
    tric_status st = tric_module_compile_file(dev, tri, &opt, mod);
    return st != TRIC_SUCCESS ? st : tric_module_get_kernel(*mod, opt.kernel, kernel);
}

static void linear_args(tric_arg args[13], tric_buffer x, tric_buffer w, tric_buffer b,
                        tric_buffer y, const int64_t v[9])
{
    args[0] = TRIC_ARG_BUF(x);
    args[1] = TRIC_ARG_BUF(w);
    args[2] = TRIC_ARG_BUF(b);
    args[3] = TRIC_ARG_BUF(y);
    for (int i = 0; i < 9; i++)
        args[4 + i] = TRIC_ARG_I32((int32_t)v[i]);
}

static tric_dim3 linear_grid(int M, int N, const ExMatmulConfig *cfg)
{
    return (tric_dim3){(unsigned)((M + cfg->block_m - 1) / cfg->block_m),
                       (unsigned)((N + cfg->block_n - 1) / cfg->block_n), 1};
}

/* Checks one (dtype, orientation, config) at M x N x K against C; 0 when it matches, 1 when not,
 * -1 when the config does not compile (the skip line printed). */
static int check_linear(tric_device dev, const char *tri, const Dtype *dt, int xcol, int M, int N,
                        int K, const ExMatmulConfig *cfg, uint64_t seed)
{
    int64_t v[9];
    linear_ints(v, M, N, K, xcol);
    char signature[256], name[64], what[96];
    linear_signature(signature, sizeof signature, dt->name, v);
    bench_config_name(name, sizeof name, cfg);
    snprintf(what, sizeof what, "linear_kernel %s %s %dx%dx%d", orient_names[xcol], dt->name, M, N,
             K);
    tric_module mod;
    tric_kernel k;
    if (compile_linear(dev, tri, signature, cfg, &mod, &k) != TRIC_SUCCESS) {
        bench_print_skip(what, name);
        return -1;
    }
    size_t nx = (size_t)M * K, nw = (size_t)N * K, ny = (size_t)M * N;
    uint16_t *hx = malloc(nx * 2), *hw = malloc(nw * 2), *hb = malloc((size_t)N * 2);
    uint16_t *hy = malloc(ny * 2);
    float *fx = malloc(nx * 4), *fw = malloc(nw * 4), *fb = malloc((size_t)N * 4);
    if (!hx || !hw || !hb || !hy || !fx || !fw || !fb) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    ExRng rng = {seed * 0x9e3779b97f4a7c15ULL + 3};
    /* fx is x row-major whatever the device layout; hx is in the device layout. */
    for (int i = 0; i < M; i++)
        for (int kk = 0; kk < K; kk++) {
            uint16_t h = dt->from_f32(ex_rng_float(&rng));
            hx[xcol ? (size_t)kk * M + i : (size_t)i * K + kk] = h;
            fx[(size_t)i * K + kk] = dt->to_f32(h);
        }
    for (size_t i = 0; i < nw; i++) {
        hw[i] = dt->from_f32(ex_rng_float(&rng));
        fw[i] = dt->to_f32(hw[i]);
    }
    for (int j = 0; j < N; j++) {
        hb[j] = dt->from_f32(ex_rng_float(&rng));
        fb[j] = dt->to_f32(hb[j]);
    }
    tric_buffer dx, dw, db, dy;
    EX_CHECK(tric_buffer_alloc(dev, nx * 2, &dx));
    EX_CHECK(tric_buffer_alloc(dev, nw * 2, &dw));
    EX_CHECK(tric_buffer_alloc(dev, (size_t)N * 2, &db));
    EX_CHECK(tric_buffer_alloc(dev, ny * 2, &dy));
    EX_CHECK(tric_copy_to_device(dx, 0, hx, nx * 2, NULL));
    EX_CHECK(tric_copy_to_device(dw, 0, hw, nw * 2, NULL));
    EX_CHECK(tric_copy_to_device(db, 0, hb, (size_t)N * 2, NULL));
    EX_CHECK(tric_memset(dy, 0, 0xff, ny * 2, NULL)); /* NaN in fp16 and bf16 */
    tric_arg args[13];
    linear_args(args, dx, dw, db, dy, v);
    EX_CHECK(tric_launch(k, linear_grid(M, N, cfg), args, 13, NULL));
    EX_CHECK(tric_device_synchronize(dev));
    EX_CHECK(tric_copy_to_host(hy, dy, 0, ny * 2, NULL));

    double diff2 = 0, ref2 = 0, max_err = 0;
    int bad_i = -1, bad_j = -1;
    float bad_got = 0, bad_want = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0;
            for (int kk = 0; kk < K; kk++)
                acc += fx[(size_t)i * K + kk] * fw[(size_t)j * K + kk];
            float want = acc + fb[j];
            want = want > 0 ? want : 0;
            float got = dt->to_f32(hy[(size_t)i * N + j]);
            double err = fabs((double)got - want);
            if (isnan(err))
                err = INFINITY;
            if (err > max_err)
                max_err = err;
            if (bad_i < 0 && !(err <= 0.05 * (1 + fabs(want)))) {
                bad_i = i, bad_j = j;
                bad_got = got, bad_want = want;
            }
            diff2 += err * err;
            ref2 += (double)want * want;
        }
    double rel = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
    int bad = !(rel < 1e-2) || bad_i >= 0;
    printf("%-52s %-20s rel error %-10.3g max abs %-10.3g %s\n", what, name, rel, max_err,
           bad ? "MISMATCH" : "OK");
    if (bad_i >= 0)
        printf("  first bad element [%d, %d]: got %g, want %g\n", bad_i, bad_j, bad_got, bad_want);
    fflush(stdout);
    tric_buffer_free(dx);
    tric_buffer_free(dw);
    tric_buffer_free(db);
    tric_buffer_free(dy);
    tric_module_destroy(mod);
    free(hx), free(hw), free(hb), free(hy), free(fx), free(fw), free(fb);
    return bad;
}

/* Median milliseconds of one config, or 0 when it does not compile or run. */
static double time_linear(tric_device dev, const char *tri, const Dtype *dt, int xcol, int s,
                          const ExMatmulConfig *cfg, tric_buffer x, tric_buffer w, tric_buffer b,
                          tric_buffer y)
{
    int64_t v[9];
    linear_ints(v, s, s, s, xcol);
    char signature[256], name[64], what[96];
    linear_signature(signature, sizeof signature, dt->name, v);
    tric_module mod;
    tric_kernel k;
    if (compile_linear(dev, tri, signature, cfg, &mod, &k) != TRIC_SUCCESS) {
        bench_config_name(name, sizeof name, cfg);
        snprintf(what, sizeof what, "linear_kernel %s %s %d", orient_names[xcol], dt->name, s);
        bench_print_skip(what, name);
        return 0;
    }
    tric_arg args[13];
    linear_args(args, x, w, b, y, v);
    double ms = bench_kernel_ms(k, linear_grid(s, s, cfg), args, 13, 3, reps);
    tric_module_destroy(mod);
    return ms;
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [SIZE...] [--config BMxBNxBK,WARPS,STAGES]... [--arch=ARCH] "
            "[--dtype=fp16|bf16|both] [--orient=row|col|both] [--csv=FILE] [--all] "
            "[--no-check|--check-only] [--reps=N] [--plain-signature] [--device=DEV]\n",
            argv0);
}

int main(int argc, char **argv)
{
    BenchOptions o = {.configs = configs,
                      .max_configs = MAX_CONFIGS,
                      .check = 1,
                      .reps = reps,
                      .sizes = {4096, 8192, 4100}};
    int dtype_mask = 3, orient_mask = 3, check_only = 0;
    const char *device = "cuda:0";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (bench_shared_option(&o, argc, argv, &i)) {
            continue;
        } else if (!strcmp(a, "--dtype=fp16") || !strcmp(a, "--dtype=bf16") ||
                   !strcmp(a, "--dtype=both")) {
            dtype_mask = a[8] == 'f' ? 1 : a[8] == 'b' && a[9] == 'f' ? 2 : 3;
        } else if (!strcmp(a, "--orient=row") || !strcmp(a, "--orient=col") ||
                   !strcmp(a, "--orient=both")) {
            orient_mask = a[9] == 'r' ? 1 : a[9] == 'c' ? 2 : 3;
        } else if (!strcmp(a, "--check-only")) {
            check_only = 1;
        } else if (!strcmp(a, "--plain-signature")) {
            plain_signature = 1;
        } else if (!strncmp(a, "--device=", 9) && a[9]) {
            device = a + 9;
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
        nsizes = 3;
    if (user_configs)
        nconfigs = user_configs;

    tric_device dev;
    if (tric_device_open(device, &dev) != TRIC_SUCCESS) {
        printf("SKIP: %s\n", tric_last_error());
        return 77;
    }
    printf("# device: %s\n", tric_device_name(dev));
    if (tric_device_get_kind(dev) != TRIC_DEVICE_CUDA) {
        check_only = 1; /* no CUDA events: timings need a GPU */
        check = 1;
    }
    const char *arch =
        tric_device_get_kind(dev) == TRIC_DEVICE_CUDA ? bench_arch_label(dev, arch_opt) : "interp";
    printf("# arch: %s\n", arch);
    char path[4096];
    const char *tri = ex_tri_path("linear.tri", path, sizeof path);

    /* usable[d][o][c]: 0 when the config does not compile for that dtype/orientation. */
    int usable[2][2][MAX_CONFIGS];
    int failed = 0;
    for (int d = 0; d < 2; d++)
        for (int o = 0; o < 2; o++)
            for (int c = 0; c < nconfigs; c++) {
                usable[d][o][c] = (dtype_mask >> d & 1) && (orient_mask >> o & 1);
                if (!usable[d][o][c] || !check)
                    continue;
                uint64_t seed = (uint64_t)(d * 2 + o) * 100 + (uint64_t)c;
                int r1 = check_linear(dev, tri, &dtypes[d], o, 200, 136, 104, &configs[c], seed);
                int r2 = r1 < 0 ? -1
                                : check_linear(dev, tri, &dtypes[d], o, 256, 144, 320, &configs[c],
                                               seed + 7);
                if (r1 < 0 || r2 < 0)
                    usable[d][o][c] = 0;
                failed |= r1 > 0 || r2 > 0;
            }
    if (!check)
        printf("# correctness checks skipped (--no-check)\n");
    else if (failed)
        printf("# WARNING: a correctness check failed (see above); timings follow anyway\n");
    if (check_only) {
        tric_device_close(dev);
        return failed;
    }

    FILE *csv = bench_csv_open(csv_path);
    printf("%-9s %-8s %-5s %6s %-5s %22s %10s %8s\n", "# provider", "orient", "dtype", "M=N=K",
           "sig", "best config", "time_us", "TFLOPS");
    for (int si = 0; si < nsizes; si++) {
        int s = sizes[si];
        size_t n = (size_t)s * s;
        const char *sig = sig_kind(s, s, s);
        for (int d = 0; d < 2; d++) {
            if (!(dtype_mask >> d & 1))
                continue;
            const Dtype *dt = &dtypes[d];
            /* One random matrix serves as x (either orientation: only the strides differ) and w;
             * the bias is its first row. */
            uint16_t *host = malloc(n * 2);
            if (!host) {
                fprintf(stderr, "out of host memory\n");
                return 1;
            }
            ExRng rng = {(uint64_t)s * 131 + (uint64_t)d + 1};
            for (size_t i = 0; i < n; i++)
                host[i] = dt->from_f32(ex_rng_float(&rng));
            tric_buffer x, w, b, y;
            EX_CHECK(tric_buffer_alloc(dev, n * 2, &x));
            EX_CHECK(tric_buffer_alloc(dev, n * 2, &w));
            EX_CHECK(tric_buffer_alloc(dev, (size_t)s * 2, &b));
            EX_CHECK(tric_buffer_alloc(dev, n * 2, &y));
            EX_CHECK(tric_copy_to_device(x, 0, host, n * 2, NULL));
            EX_CHECK(tric_copy_to_device(w, 0, host, n * 2, NULL));
            EX_CHECK(tric_copy_to_device(b, 0, host, (size_t)s * 2, NULL));
            free(host);
            for (int o = 0; o < 2; o++) {
                if (!(orient_mask >> o & 1))
                    continue;
                double best = 0;
                int best_i = -1;
                char name[64];
                for (int c = 0; c < nconfigs; c++) {
                    if (!usable[d][o][c])
                        continue;
                    double ms = time_linear(dev, tri, dt, o, s, &configs[c], x, w, b, y);
                    if (ms > 0 && (best_i < 0 || ms < best))
                        best = ms, best_i = c;
                    if (all && ms > 0) { /* a skipped config said why already */
                        bench_config_name(name, sizeof name, &configs[c]);
                        printf("#   tric    %-8s %-5s %6d %-5s %22s %10.1f %8.1f\n",
                               orient_names[o], dt->name, s, sig, name, ms * 1000,
                               bench_tflops(s, s, s, ms));
                        bench_csv_row(csv, "linear", "linear_kernel", arch, orient_names[o], sig,
                                      dt->name, s, s, s, name, ms, "config");
                    }
                }
                snprintf(name, sizeof name, "-");
                if (best_i >= 0)
                    bench_config_name(name, sizeof name, &configs[best_i]);
                printf("%-10s %-8s %-5s %6d %-5s %22s %10.1f %8.1f\n", "tric", orient_names[o],
                       dt->name, s, sig, name, best * 1000, bench_tflops(s, s, s, best));
                fflush(stdout);
                bench_csv_row(csv, "linear", "linear_kernel", arch, orient_names[o], sig, dt->name,
                              s, s, s, name, best, "best");
            }
            tric_buffer_free(x);
            tric_buffer_free(w);
            tric_buffer_free(b);
            tric_buffer_free(y);
        }
    }
    if (csv)
        fclose(csv);
    tric_device_close(dev);
    return failed;
}
