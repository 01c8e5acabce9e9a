/* bench_seed2_report [--quick] [--sizes=A,B,...] [OPTIONS]: seed 2's report, in C. The seed's
 * author swept M = N = K = 1024 i (i = 1..32) with kernel_matmul autotuned over its 16 configs
 * (key M, N, K) at GROUP_SIZE_M 0, 8 and 16, beside torch.matmul, and charted TFLOPS. This runs the
 * same sweep on cuda:0 through tric's runtime: examples/matmul.tri's kernel_matmul under its
 * @triton.autotune decorator, compiled once per GROUP_SIZE_M with no block sizes and no signature
 * (where the runtime wants one for unannotated parameters: the plain one, without hints, saying
 * so; the launches specialize either way), launched with the seed's grid lambda
 * (tric_launch_grid), beside cuBLAS (cublasGemmEx, fp16 in and out, fp32 compute, loaded with
 * dlopen: cublas_dl.h). Each GROUP_SIZE_M is its own module, so each is tuned on its own.
 *
 * For each size: A[M,K] and B[K,N] random fp16 in [0, 1) (as torch.rand), row-major; then for each
 * GROUP_SIZE_M the first launch, which tunes (timed by the wall clock, synchronized: tune_ms; at
 * the first size it also counts the module's compile of every config, as Triton's first call
 * compiles its configs), a check of C, and the tuned kernel timed; then cuBLAS the same way.
 *   - check: 64 sampled elements of C against a double-precision dot at every size; every element
 *     at the first size when it is at most 2048 (an O(n^3) CPU reference beyond that is too slow);
 *   - timing, as triton.testing.do_bench does (Triton's numbers come from it:
 *     scripts/triton_seed2_report.py): bench_rest (TRIC_BENCH_REST_MS), one launch to estimate,
 *     warm-up launches for about 25 ms, then launches for about --time-ms (default 100; at least
 *     3, at most 1000), each between two CUDA events with L2 flushed before it (a 256 MiB memset,
 *     as do_bench's cache.zero_()), and the median; TFLOPS = 2 M N K / t.
 * Prints one line per size and provider (with the config the tuner chose) and, with --csv, writes
 * provider,M,N,K,ms,tflops,config,tune_ms (providers tric_gm_0, tric_gm_8, tric_gm_16, cublas),
 * which scripts/seed2_report.py charts beside scripts/triton_seed2_report.py's CSV.
 *
 * Options:
 *   --quick              M = N = K = 1024, 4096, 8192 (default: 1024 i for i = 1..32)
 *   --sizes=A,B,...      these sizes (multiples of 256: the seed's kernel has no masks)
 *   --groups=0,8,16      the GROUP_SIZE_M values (default 0, 8, 16)
 *   --csv=FILE           the CSV (default: the table on stdout only)
 *   --time-ms=T          timed launches per measurement: about T ms of kernel time (default 100)
 *   --no-cublas          leave cuBLAS out; --no-tric leaves tric out
 *   --no-flush           do not flush L2 between timed launches
 *   --stream-k=auto      compile with TRIC_STREAM_K_AUTO (each config tuned as written and with
 *                        stream_k; providers tric_sk_gm_0/8/16); --stream-k=on: every config
 *                        with stream_k
 *   --deep-pipeline=auto compile with TRIC_DEEP_PIPELINE_AUTO (each config tuned as written and
 *                        with as many stages as fit, up to twice its own; providers
 *                        tric_dp_gm_0/8/16, tric_sk_dp_gm_* with --stream-k=auto)
 * Exit status: 0, 1 when a check failed or a launch failed, 77 when no GPU can be opened. Where
 * libcublas cannot be loaded the cuBLAS line is skipped with the reason. */
#include "bench_util.h"
#include "cublas_dl.h"

#define MAX_SIZES  64
#define MAX_GROUPS 8
#define SAMPLES    64

/* ---- options ----------------------------------------------------------------------------------- */

static int sizes[MAX_SIZES], nsizes;
static int groups[MAX_GROUPS] = {0, 8, 16}, ngroups = 3;
static const char *csv_path;
static double time_ms_opt = 100; /* do_bench's rep= */
static int use_cublas = 1, use_tric = 1, flush = 1;
static int stream_k = TRIC_STREAM_K_OFF;
static int deep_pipeline = TRIC_DEEP_PIPELINE_OFF;

/* Parses "A,B,C" of positive ints into out (at most max); the count, or -1 on bad text. */
static int parse_list(const char *text, int *out, int max, int allow_zero)
{
    int n = 0;
    for (const char *p = text; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < (allow_zero ? 0 : 1) || v > (1 << 20) || n == max ||
            (*end && *end != ','))
            return -1;
        out[n++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return n;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_seed2_report [--quick] [--sizes=A,B,...] [--groups=0,8,16] "
                    "[--csv=FILE] [--time-ms=T] [--no-cublas] [--no-tric] [--no-flush] "
                    "[--stream-k=auto|on] [--deep-pipeline=auto]\n");
}

/* ---- inputs and checks ------------------------------------------------------------------------- */

/* unit_f16[k] = k / 2048 as fp16, exact (11 significant bits), so a random fp16 in [0, 1) costs a
 * table read: the 32768 inputs (2 x 2^30 elements) fill in seconds, not a minute. */
static uint16_t unit_f16[2048];

static void fill_random(uint16_t *p, size_t n, uint64_t seed)
{
    ExRng rng = {seed * 0x9e3779b97f4a7c15ULL + 1};
    size_t i = 0;
    while (i < n) {
        uint64_t r = ex_rng_next(&rng);
        for (int j = 0; j < 5 && i < n; j++) /* five 11-bit values from the top 55 bits */
            p[i++] = unit_f16[(r >> (53 - 11 * j)) & 2047];
    }
}

/* C's element (i, j) in double, from the fp16 inputs. */
static double dot_ref(const uint16_t *a, const uint16_t *b, int64_t K, int64_t N, int64_t i,
                      int64_t j)
{
    double sum = 0;
    for (int64_t k = 0; k < K; k++)
        sum += (double)tric_f16_to_f32(a[i * K + k]) * tric_f16_to_f32(b[k * N + j]);
    return sum;
}

/* fp16 output of a sum of K products in [0, 1): rounding to fp16 is 2^-11 relative; the rest is
 * room for a different fp32 summation order. NaN (the 0xFF poison: an element not written)
 * fails. */
static int close_enough(double got, double want)
{
    return fabs(got - want) <= 0.01 * fabs(want) + 0.05;
}

typedef struct Inputs {
    int64_t M, N, K;
    uint16_t *a, *b; /* host copies */
    float *ref;      /* every element of C, or NULL (sampled checks only) */
    int64_t si[SAMPLES], sj[SAMPLES];
    double swant[SAMPLES];
    tric_buffer da, db, dc, dflush;
} Inputs;

/* Checks C (on the device) against the reference: the samples, and every element when in->ref.
 * Prints a line on a mismatch; 0 when C matches. */
static int check_c(const Inputs *in, const char *provider)
{
    int bad = 0;
    for (int s = 0; s < SAMPLES; s++) {
        uint16_t v = 0xffff;
        size_t off = (size_t)(in->si[s] * in->N + in->sj[s]) * 2;
        if (tric_copy_to_host(&v, in->dc, off, 2, NULL) != TRIC_SUCCESS) {
            printf("error: %s: reading C: %s\n", provider, tric_last_error());
            return 1;
        }
        double got = tric_f16_to_f32(v);
        if (!close_enough(got, in->swant[s])) {
            if (!bad)
                printf("# %s M=%lld: MISMATCH at (%lld, %lld): got %g, want %g\n", provider,
                       (long long)in->M, (long long)in->si[s], (long long)in->sj[s], got,
                       in->swant[s]);
            bad++;
        }
    }
    if (in->ref) {
        size_t n = (size_t)(in->M * in->N);
        uint16_t *c = malloc(n * 2);
        if (!c || tric_copy_to_host(c, in->dc, 0, n * 2, NULL) != TRIC_SUCCESS) {
            printf("error: %s: reading C: %s\n", provider, c ? tric_last_error() : "no memory");
            free(c);
            return 1;
        }
        for (size_t i = 0; i < n; i++)
            if (!close_enough(tric_f16_to_f32(c[i]), in->ref[i])) {
                if (!bad)
                    printf("# %s M=%lld: MISMATCH at (%lld, %lld): got %g, want %g\n", provider,
                           (long long)in->M, (long long)(i / (size_t)in->N),
                           (long long)(i % (size_t)in->N), tric_f16_to_f32(c[i]), in->ref[i]);
                bad++;
            }
        free(c);
    }
    if (bad)
        printf("# %s M=%lld: %d elements wrong (%s)\n", provider, (long long)in->M, bad,
               in->ref ? "every element checked" : "64 sampled");
    return bad != 0;
}

/* Every element of C in float, by rows (i-k-j: B is read along its rows), double accumulation. */
static float *reference(const uint16_t *a, const uint16_t *b, int64_t M, int64_t N, int64_t K)
{
    float *ref = malloc(sizeof(float) * (size_t)(M * N));
    double *row = malloc(sizeof(double) * (size_t)N);
    float *bf = malloc(sizeof(float) * (size_t)(K * N));
    if (!ref || !row || !bf) {
        free(ref), free(row), free(bf);
        return NULL;
    }
    for (int64_t i = 0; i < K * N; i++)
        bf[i] = tric_f16_to_f32(b[i]);
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++)
            row[j] = 0;
        for (int64_t k = 0; k < K; k++) {
            double aik = tric_f16_to_f32(a[i * K + k]);
            const float *bk = bf + k * N;
            for (int64_t j = 0; j < N; j++)
                row[j] += aik * bk[j];
        }
        for (int64_t j = 0; j < N; j++)
            ref[i * N + j] = (float)row[j];
    }
    free(row);
    free(bf);
    return ref;
}

/* ---- timing ------------------------------------------------------------------------------------ */

/* ---- tric -------------------------------------------------------------------------------------- */

typedef struct TricLaunch {
    tric_kernel k;
    tric_arg args[12];
} TricLaunch;

static int tric_launch_fn(void *ctx)
{
    TricLaunch *t = ctx;
    if (tric_launch_grid(t->k, ex_seed2_grid, NULL, t->args, 12, NULL) != TRIC_SUCCESS) {
        printf("error: tric_launch_grid: %s\n", tric_last_error());
        return 1;
    }
    return 0;
}

/* ---- cuBLAS ------------------------------------------------------------------------------------ */

typedef struct CublasLaunch {
    const CublasApi *api;
    uint64_t a, b, c;
    int M, N, K;
} CublasLaunch;

static int cublas_launch_fn(void *ctx)
{
    CublasLaunch *t = ctx;
    cublasStatus_t st = cublas_dl_hgemm_rowmajor(t->api, t->a, t->b, t->c, t->M, t->N, t->K);
    if (st != CUBLAS_STATUS_SUCCESS) {
        printf("error: cublasGemmEx: %s\n", cublas_dl_status(t->api, st));
        return 1;
    }
    return 0;
}

/* ---- output ------------------------------------------------------------------------------------ */

static void report(FILE *csv, const char *provider, const Inputs *in, double ms, int reps,
                   double tune_ms, int bad, const char *config)
{
    printf("%-11s %6lld %10.3f %8.1f %5d %10.1f %-5s %s\n", provider, (long long)in->M, ms,
           bench_tflops(in->M, in->N, in->K, ms), reps, tune_ms, bad ? "FAIL" : "ok", config);
    fflush(stdout);
    if (csv) {
        fprintf(csv, "%s,%lld,%lld,%lld,%.4f,%.3f,\"%s\",%.1f\n", provider, (long long)in->M,
                (long long)in->N, (long long)in->K, ms, bench_tflops(in->M, in->N, in->K, ms),
                config, tune_ms);
        fflush(csv);
    }
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--quick")) {
            nsizes = 3, sizes[0] = 1024, sizes[1] = 4096, sizes[2] = 8192;
        } else if (!strncmp(a, "--sizes=", 8)) {
            nsizes = parse_list(a + 8, sizes, MAX_SIZES, 0);
            for (int j = 0; j < nsizes; j++)
                if (sizes[j] % 256) {
                    fprintf(stderr,
                            "bench_seed2_report: %d: sizes must be multiples of 256 (the "
                            "seed's kernel reads and writes whole blocks, unmasked)\n",
                            sizes[j]);
                    return 2;
                }
            if (nsizes <= 0) {
                usage();
                return 2;
            }
        } else if (!strncmp(a, "--groups=", 9)) {
            ngroups = parse_list(a + 9, groups, MAX_GROUPS, 1);
            if (ngroups <= 0) {
                usage();
                return 2;
            }
        } else if (!strncmp(a, "--csv=", 6) && a[6]) {
            csv_path = a + 6;
        } else if (!strncmp(a, "--time-ms=", 10) && atof(a + 10) > 0) {
            time_ms_opt = atof(a + 10);
        } else if (!strcmp(a, "--no-cublas")) {
            use_cublas = 0;
        } else if (!strcmp(a, "--no-tric")) {
            use_tric = 0;
        } else if (!strcmp(a, "--no-flush")) {
            flush = 0;
        } else if (!strcmp(a, "--stream-k=auto")) {
            stream_k = TRIC_STREAM_K_AUTO;
        } else if (!strcmp(a, "--stream-k=on")) {
            stream_k = TRIC_STREAM_K_ON;
        } else if (!strcmp(a, "--deep-pipeline=auto")) {
            deep_pipeline = TRIC_DEEP_PIPELINE_AUTO;
        } else {
            usage();
            return 2;
        }
    }
    if (!nsizes)
        for (nsizes = 0; nsizes < 32; nsizes++)
            sizes[nsizes] = 1024 * (nsizes + 1);
    for (int k = 0; k < 2048; k++)
        unit_f16[k] = tric_f32_to_f16((float)k / 2048.0f);

    tric_device dev = bench_open();
    if (!dev)
        return 77;
    char path[4096];
    const char *tri = ex_tri_path("matmul.tri", path, sizeof path);
    printf("# seed 2 kernel_matmul (%s), autotuned over its decorator's configs, key M, N, K; "
           "fp16 A, B, C, fp32 accumulation\n",
           tri);
    CublasApi cublas = {0};
    char why[512];
    if (use_cublas) {
        if (cublas_dl_open(&cublas, why, sizeof why)) {
            printf("# cublas: %s, version %d, cublasGemmEx fp16 in/out, CUBLAS_COMPUTE_32F, "
                   "CUBLAS_GEMM_DEFAULT\n",
                   cublas.soname, cublas_dl_version(&cublas));
        } else {
            printf("# cublas: skipped: %s\n", why);
            use_cublas = 0;
        }
    }
    const char *rest = getenv("TRIC_BENCH_REST_MS");
    printf("# timing: rest %s ms, warm-up ~%.0f ms, ~%.0f ms of launches (3..1000), median of CUDA "
           "events, L2 %s\n",
           rest && *rest ? rest : "0", BENCH_WARMUP_MS, time_ms_opt,
           flush ? "flushed (256 MiB memset) before each" : "not flushed");
    FILE *csv = NULL;
    if (csv_path) {
        csv = fopen(csv_path, "w");
        if (!csv) {
            fprintf(stderr, "cannot write %s\n", csv_path);
            return 2;
        }
        fputs("provider,M,N,K,ms,tflops,config,tune_ms\n", csv);
    }

    tric_module mods[MAX_GROUPS] = {0};
    tric_kernel kernels[MAX_GROUPS] = {0};
    int compiled[MAX_GROUPS] = {0}; /* 1 compiled, -1 failed */
    int failed = 0;
    printf("%-11s %6s %10s %8s %5s %10s %-5s %s\n", "# provider", "M=N=K", "ms", "TFLOPS", "reps",
           "tune_ms", "check", "config");
    for (int si = 0; si < nsizes; si++) {
        Inputs in = {.M = sizes[si], .N = sizes[si], .K = sizes[si]};
        size_t na = (size_t)(in.M * in.K), nb = (size_t)(in.K * in.N), nc = (size_t)(in.M * in.N);
        in.a = malloc(na * 2);
        in.b = malloc(nb * 2);
        if (!in.a || !in.b) {
            fprintf(stderr, "out of host memory at %d\n", sizes[si]);
            return 1;
        }
        double t0 = bench_now_us();
        fill_random(in.a, na, 2 * (uint64_t)sizes[si] + 1);
        fill_random(in.b, nb, 2 * (uint64_t)sizes[si] + 2);
        ExRng rng = {(uint64_t)sizes[si] * 7919 + 3407};
        for (int s = 0; s < SAMPLES; s++) {
            in.si[s] = (int64_t)(ex_rng_next(&rng) % (uint64_t)in.M);
            in.sj[s] = (int64_t)(ex_rng_next(&rng) % (uint64_t)in.N);
            in.swant[s] = dot_ref(in.a, in.b, in.K, in.N, in.si[s], in.sj[s]);
        }
        if (si == 0 && sizes[si] <= 2048)
            in.ref = reference(in.a, in.b, in.M, in.N, in.K);
        EX_CHECK(tric_buffer_alloc(dev, na * 2, &in.da));
        EX_CHECK(tric_buffer_alloc(dev, nb * 2, &in.db));
        EX_CHECK(tric_buffer_alloc(dev, nc * 2, &in.dc));
        if (flush)
            EX_CHECK(tric_buffer_alloc(dev, BENCH_FLUSH_BYTES, &in.dflush));
        EX_CHECK(tric_copy_to_device(in.da, 0, in.a, na * 2, NULL));
        EX_CHECK(tric_copy_to_device(in.db, 0, in.b, nb * 2, NULL));
        printf("# M=N=K=%d: inputs ready in %.0f ms (check: %s)\n", sizes[si],
               (bench_now_us() - t0) / 1e3,
               in.ref ? "every element and 64 sampled" : "64 sampled elements");

        for (int g = 0; use_tric && g < ngroups; g++) {
            char provider[32];
            snprintf(provider, sizeof provider, "tric_%s%sgm_%d",
                     stream_k == TRIC_STREAM_K_AUTO ? "sk_"
                     : stream_k == TRIC_STREAM_K_ON ? "skon_"
                                                    : "",
                     deep_pipeline == TRIC_DEEP_PIPELINE_AUTO ? "dp_" : "", groups[g]);
            double compile_ms = 0;
            if (!compiled[g]) {
                t0 = bench_now_us();
                if (ex_compile_seed2_tuned_sk(dev, tri, groups[g], stream_k, deep_pipeline,
                                              &mods[g], &kernels[g]) != TRIC_SUCCESS) {
                    printf("# %s: compile failed: %s\n", provider, tric_last_error());
                    compiled[g] = -1;
                    failed = 1;
                } else {
                    compiled[g] = 1;
                    compile_ms = (bench_now_us() - t0) / 1e3;
                    printf("# %s: module compiled (%d configs) in %.1f ms\n", provider,
                           tric_kernel_num_configs(kernels[g]), compile_ms);
                }
            }
            if (compiled[g] < 0)
                continue;
            TricLaunch t = {.k = kernels[g],
                            .args = {TRIC_ARG_BUF(in.da), TRIC_ARG_BUF(in.db), TRIC_ARG_BUF(in.dc),
                                     TRIC_ARG_I32((int32_t)in.M), TRIC_ARG_I32((int32_t)in.N),
                                     TRIC_ARG_I32((int32_t)in.K), TRIC_ARG_I32((int32_t)in.K),
                                     TRIC_ARG_I32(1), TRIC_ARG_I32((int32_t)in.N), TRIC_ARG_I32(1),
                                     TRIC_ARG_I32((int32_t)in.N), TRIC_ARG_I32(1)}};
            /* Poisoned (NaN) so an element no program writes fails the check. */
            EX_CHECK(tric_memset(in.dc, 0, 0xff, nc * 2, NULL));
            EX_CHECK(tric_device_synchronize(dev));
            t0 = bench_now_us();
            tric_status st = tric_launch_grid(t.k, ex_seed2_grid, NULL, t.args, 12, NULL);
            if (st == TRIC_SUCCESS)
                st = tric_device_synchronize(dev);
            double first_ms = (bench_now_us() - t0) / 1e3;
            int chosen = -1;
            tric_kernel ck = NULL;
            if (st == TRIC_SUCCESS)
                st = tric_kernel_tune(t.k, ex_seed2_grid, NULL, t.args, 12, NULL, &chosen);
            if (st == TRIC_SUCCESS)
                st = tric_kernel_config(t.k, chosen, &ck);
            if (st != TRIC_SUCCESS) {
                printf("error: %s at %d: the tuning launch failed: %s\n", provider, sizes[si],
                       tric_last_error());
                report(csv, provider, &in, 0, 0, first_ms + compile_ms, 1, "-");
                failed = 1;
                continue;
            }
            if (compile_ms > 0)
                printf("# %s M=%d: first launch (tuning) %.1f ms + module compile %.1f ms\n",
                       provider, sizes[si], first_ms, compile_ms);
            int bad = check_c(&in, provider);
            int reps = 0;
            double ms = bench_do_bench_ms(tric_launch_fn, &t, in.dflush, time_ms_opt,
                                          bench_tric_stream(dev), &reps);
            failed |= bad || ms <= 0;
            char config[192];
            snprintf(config, sizeof config, "%d: %s", chosen, tric_kernel_config_text(ck));
            report(csv, provider, &in, ms, reps, first_ms + compile_ms, bad, config);
        }

        if (use_cublas) {
            CublasLaunch t = {&cublas,
                              tric_buffer_address(in.da),
                              tric_buffer_address(in.db),
                              tric_buffer_address(in.dc),
                              (int)in.M,
                              (int)in.N,
                              (int)in.K};
            EX_CHECK(tric_memset(in.dc, 0, 0xff, nc * 2, NULL));
            EX_CHECK(tric_device_synchronize(dev));
            t0 = bench_now_us();
            int err = cublas_launch_fn(&t);
            tric_status st = tric_device_synchronize(dev);
            double first_ms = (bench_now_us() - t0) / 1e3;
            if (err || st != TRIC_SUCCESS) {
                if (st != TRIC_SUCCESS)
                    printf("error: cublas at %d: %s\n", sizes[si], tric_last_error());
                report(csv, "cublas", &in, 0, 0, first_ms, 1, "-");
                failed = 1;
            } else {
                int bad = check_c(&in, "cublas");
                int reps = 0;
                double ms =
                    bench_do_bench_ms(cublas_launch_fn, &t, in.dflush, time_ms_opt, NULL, &reps);
                failed |= bad || ms <= 0;
                report(csv, "cublas", &in, ms, reps, first_ms, bad,
                       "cublasGemmEx CUBLAS_GEMM_DEFAULT");
            }
        }
        tric_buffer_free(in.da);
        tric_buffer_free(in.db);
        tric_buffer_free(in.dc);
        if (in.dflush)
            tric_buffer_free(in.dflush);
        free(in.a);
        free(in.b);
        free(in.ref);
    }
    if (csv)
        fclose(csv);
    if (failed)
        printf("# WARNING: a check or a launch failed (see above)\n");
    cublas_dl_close(&cublas);
    for (int g = 0; g < ngroups; g++)
        if (compiled[g] > 0)
            tric_module_destroy(mods[g]);
    tric_device_close(dev);
    return failed;
}
