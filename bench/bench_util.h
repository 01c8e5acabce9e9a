/* bench_util.h: timing for the GPU benchmarks. Kernel time comes from CUDA events (cuEventRecord
 * before each launch and after the last, cuEventElapsedTime between neighbours) through the
 * libcuda tric already loaded (runtime/cuda_api.h); host time from CLOCK_MONOTONIC. */
#ifndef TRIC_BENCH_UTIL_H
#define TRIC_BENCH_UTIL_H

#include "examples/example_kernels.h"
#include "runtime/cuda_api.h"
#include "runtime/runtime.h"

#include <math.h>
#include <time.h>

static inline double bench_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Opens cuda:0 or explains why not (the caller exits 77). */
static inline tric_device bench_open(void)
{
    tric_device dev;
    if (tric_device_open("cuda:0", &dev) != TRIC_SUCCESS) {
        printf("SKIP: %s\n", tric_last_error());
        return NULL;
    }
    printf("# device: %s\n", tric_device_name(dev));
    return dev;
}

/* TRIC_BENCH_REST_MS (environment): milliseconds the GPU idles before each timed kernel. The H100
 * runs a kernel measurably slower right after seconds of full load than after a rest (seed 2 at
 * 8192: 561 against 676 TFLOPS, docs/performance.md), so a sweep that times configs back to back
 * under-reports its late ones; scripts/gpu_perf.sh gives tric's benchmarks and the Triton scripts
 * the same rest. */
static inline void bench_rest(void)
{
    const char *env = getenv("TRIC_BENCH_REST_MS");
    long ms = env ? atol(env) : 0;
    if (ms > 0) {
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* The CUstream tric launches on when a launch names no stream: the device's own, a blocking
 * stream made when the device opened (runtime/cuda.c). The timing events (and do_bench's L2
 * flushes) go on it too: on the legacy stream they would bracket the kernel with two cross-stream
 * waits, which the H100 took 10-15 us over (seed 2 at 4096: 222 us a launch against 206). */
static inline CUstream bench_tric_stream(tric_device dev)
{
    return (CUstream)rt_cuda_stream_of(dev, NULL);
}

/* warmup launches, then reps launches each between two events on tric's stream; the median
 * kernel time in milliseconds (0 with the message printed on an error). */
static inline double bench_kernel_ms(tric_kernel k, tric_dim3 grid, const tric_arg *args, int nargs,
                                     int warmup, int reps)
{
    const RtCudaApi *cu = rt_cuda_api();
    if (!cu) {
        printf("error: %s\n", rt_cuda_api_error());
        return 0;
    }
    CUstream stream = bench_tric_stream(k->module->device);
    bench_rest(); /* the previous timing ended in cuEventSynchronize: the GPU is idle now */
    for (int i = 0; i < warmup; i++)
        if (tric_launch(k, grid, args, nargs, NULL) != TRIC_SUCCESS) {
            printf("error: %s\n", tric_last_error());
            return 0;
        }
    CUevent *ev = calloc((size_t)reps + 1, sizeof *ev);
    double *ms = calloc((size_t)reps, sizeof *ms);
    for (int i = 0; i <= reps; i++)
        cu->cuEventCreate(&ev[i], CU_EVENT_DEFAULT);
    for (int i = 0; i < reps; i++) {
        cu->cuEventRecord(ev[i], stream);
        if (tric_launch(k, grid, args, nargs, NULL) != TRIC_SUCCESS) {
            printf("error: %s\n", tric_last_error());
            return 0;
        }
    }
    cu->cuEventRecord(ev[reps], stream);
    CUresult r = cu->cuEventSynchronize(ev[reps]);
    double result = 0;
    if (r != CUDA_SUCCESS) {
        char text[256];
        printf("error: the kernel failed: %s\n", rt_cuda_error_text(r, text, sizeof text));
    } else {
        for (int i = 0; i < reps; i++) {
            float t = 0;
            cu->cuEventElapsedTime(&t, ev[i], ev[i + 1]);
            ms[i] = t;
        }
        result = bench_median(ms, reps);
    }
    for (int i = 0; i <= reps; i++)
        cu->cuEventDestroy(ev[i]);
    free(ev);
    free(ms);
    return result;
}

#define BENCH_FLUSH_BYTES ((size_t)256 << 20) /* do_bench's L2 flush buffer: 256 MiB */
#define BENCH_WARMUP_MS   25.0                /* do_bench's warmup= */

/* One launch of what is timed, on the stream given to bench_do_bench_ms (tric's: bench_tric_stream;
 * cuBLAS's: the legacy stream, NULL); 0 on success. */
typedef int (*BenchLaunchFn)(void *ctx);

/* Milliseconds per launch, as triton.testing.do_bench measures: rest, one launch to estimate,
 * warm-up launches for BENCH_WARMUP_MS, then reps launches (about rep_ms of kernel time, 3 to
 * 1000), each between two events with the L2 flushed before (outside) them when flush_buf is
 * given (BENCH_FLUSH_BYTES, as do_bench's cache.zero_()); the median. 0 on an error (printed). */
static inline double bench_do_bench_ms(BenchLaunchFn fn, void *ctx, tric_buffer flush_buf,
                                       double rep_ms, CUstream stream, int *reps_out)
{
    const RtCudaApi *cu = rt_cuda_api();
    if (!cu) {
        printf("error: %s\n", rt_cuda_api_error());
        return 0;
    }
    CUdeviceptr fl = flush_buf ? (CUdeviceptr)tric_buffer_address(flush_buf) : 0;
    bench_rest(); /* the previous step ended synchronized: the GPU idles now */
    CUevent e0, e1;
    cu->cuEventCreate(&e0, CU_EVENT_DEFAULT);
    cu->cuEventCreate(&e1, CU_EVENT_DEFAULT);
    float est = 0;
    cu->cuEventRecord(e0, stream);
    int err = fn(ctx);
    cu->cuEventRecord(e1, stream);
    CUresult r = cu->cuEventSynchronize(e1);
    cu->cuEventElapsedTime(&est, e0, e1);
    cu->cuEventDestroy(e0);
    cu->cuEventDestroy(e1);
    if (err || r != CUDA_SUCCESS) {
        char text[256];
        if (r != CUDA_SUCCESS)
            printf("error: the kernel failed: %s\n", rt_cuda_error_text(r, text, sizeof text));
        return 0;
    }
    if (est <= 0)
        est = 1e-3f;
    int warmup = (int)ceil(BENCH_WARMUP_MS / est), reps = (int)ceil(rep_ms / est);
    warmup = warmup < 1 ? 1 : warmup > 1000 ? 1000 : warmup;
    reps = reps < 3 ? 3 : reps > 1000 ? 1000 : reps;
    for (int i = 0; i < warmup; i++)
        if (fn(ctx))
            return 0;
    CUevent *ev = calloc(2 * (size_t)reps, sizeof *ev);
    double *ms = calloc((size_t)reps, sizeof *ms);
    for (int i = 0; i < 2 * reps; i++)
        cu->cuEventCreate(&ev[i], CU_EVENT_DEFAULT);
    for (int i = 0; i < reps && !err; i++) {
        if (fl)
            cu->cuMemsetD8Async(fl, 0, BENCH_FLUSH_BYTES, stream);
        cu->cuEventRecord(ev[2 * i], stream);
        err = fn(ctx);
        cu->cuEventRecord(ev[2 * i + 1], stream);
    }
    r = cu->cuEventSynchronize(ev[2 * reps - 1]);
    double result = 0;
    if (r != CUDA_SUCCESS) {
        char text[256];
        printf("error: the kernel failed: %s\n", rt_cuda_error_text(r, text, sizeof text));
    } else if (!err) {
        for (int i = 0; i < reps; i++) {
            float t = 0;
            cu->cuEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]);
            ms[i] = t;
        }
        result = bench_median(ms, reps);
    }
    for (int i = 0; i < 2 * reps; i++)
        cu->cuEventDestroy(ev[i]);
    free(ev);
    free(ms);
    *reps_out = reps;
    return result;
}

/* ---- shared by bench_matmul and bench_linear ---------------------------------------------------- */

/* "128x128x64,w4,s4": a config's name in tables and CSV files. */
static inline void bench_config_name(char *out, size_t len, const ExMatmulConfig *c)
{
    snprintf(out, len, "%dx%dx%d,w%d,s%d", c->block_m, c->block_n, c->block_k, c->num_warps,
             c->num_stages);
}

/* Parses "BMxBNxBK,WARPS,STAGES" (the --config argument); 1 on success. */
static inline int bench_parse_config(const char *text, ExMatmulConfig *c)
{
    char tail;
    return sscanf(text, "%dx%dx%d,%d,%d%c", &c->block_m, &c->block_n, &c->block_k, &c->num_warps,
                  &c->num_stages, &tail) == 5 &&
           c->block_m > 0 && c->block_n > 0 && c->block_k > 0 && c->num_warps > 0 &&
           c->num_stages > 0;
}

/* The options bench_matmul and bench_linear share: --config BMxBNxBK,WARPS,STAGES (or
 * --config=...) into configs[] up to max_configs, --arch=, --csv=, --all, --no-check, --reps=N
 * and bare sizes (up to 16). The caller sets the defaults first. */
typedef struct BenchOptions {
    ExMatmulConfig *configs;
    int max_configs, nconfigs;
    const char *arch, *csv;
    int all, check, reps;
    int sizes[16], nsizes;
} BenchOptions;

/* Takes argv[*i] (and its value, advancing *i) when it is a shared option; 0 when it is not. */
static inline int bench_shared_option(BenchOptions *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (!strcmp(a, "--config") && *i + 1 < argc && o->nconfigs < o->max_configs &&
        bench_parse_config(argv[*i + 1], &o->configs[o->nconfigs])) {
        o->nconfigs++;
        (*i)++;
    } else if (!strncmp(a, "--config=", 9) && o->nconfigs < o->max_configs &&
               bench_parse_config(a + 9, &o->configs[o->nconfigs])) {
        o->nconfigs++;
    } else if (!strncmp(a, "--arch=", 7) && a[7]) {
        o->arch = a + 7;
    } else if (!strncmp(a, "--csv=", 6) && a[6]) {
        o->csv = a + 6;
    } else if (!strcmp(a, "--all")) {
        o->all = 1;
    } else if (!strcmp(a, "--no-check")) {
        o->check = 0;
    } else if (!strncmp(a, "--reps=", 7) && atoi(a + 7) > 0) {
        o->reps = atoi(a + 7);
    } else if (atoi(a) > 0 && o->nsizes < 16) {
        o->sizes[o->nsizes++] = atoi(a);
    } else {
        return 0;
    }
    return 1;
}

/* Prints "# WHAT CONFIG: skipped: WHY" on one line for a config that did not compile or load,
 * WHY being tric's last error, its first line, and "shared memory does not fit" when the driver
 * refused the kernel's dynamic shared memory (more than the device's opt-in maximum: the runtime
 * asks for it with cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) when loading). */
static inline void bench_print_skip(const char *what, const char *config)
{
    const char *err = tric_last_error();
    char line[240];
    size_t n = 0;
    for (const char *p = err ? err : ""; *p && *p != '\n' && n + 1 < sizeof line; p++)
        line[n++] = *p == '\r' || *p == '\t' ? ' ' : *p;
    line[n] = 0;
    int smem = err && (strstr(err, "MAX_DYNAMIC_SHARED") || strstr(err, "shared memory") ||
                       strstr(err, "OUT_OF_RESOURCES") || strstr(err, "too much shared"));
    printf("# %s %s: skipped: %s: %s\n", what, config,
           smem ? "shared memory does not fit" : "does not compile", line);
    fflush(stdout);
}

/* The target a compile with options.arch = arch gets (runtime/cuda.c: the option, else
 * $TRIC_ARCH, else the device's own). */
static inline const char *bench_arch_label(tric_device dev, const char *arch)
{
    const char *env = getenv("TRIC_ARCH");
    return arch && *arch ? arch : env && *env ? env : tric_device_arch(dev);
}

/* CSV files (--csv=FILE): one header, then one row per measurement; the same columns as
 * scripts/triton_linear.py writes, read by scripts/perf_table.py. row is "best" (the best config
 * of a size/kernel) or "config" (one config's time, with --all). time_us and tflops are 0 where
 * nothing ran. */
#define BENCH_CSV_HEADER                                                                           \
    "provider,bench,kernel,arch,orient,sig,dtype,M,N,K,config,time_us,tflops,row\n"

static inline FILE *bench_csv_open(const char *path)
{
    if (!path)
        return NULL;
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
    fputs(BENCH_CSV_HEADER, f);
    return f;
}

static inline double bench_tflops(int64_t M, int64_t N, int64_t K, double ms)
{
    return ms > 0 ? 2.0 * (double)M * (double)N * (double)K / (ms * 1e-3) / 1e12 : 0;
}

static inline void bench_csv_row(FILE *f, const char *bench, const char *kernel, const char *arch,
                                 const char *orient, const char *sig, const char *dtype, int64_t M,
                                 int64_t N, int64_t K, const char *config, double ms,
                                 const char *row)
{
    if (!f)
        return;
    fprintf(f, "tric,%s,%s,%s,%s,%s,%s,%lld,%lld,%lld,\"%s\",%.3f,%.3f,%s\n", bench, kernel, arch,
            orient, sig, dtype, (long long)M, (long long)N, (long long)K, config, ms * 1000,
            bench_tflops(M, N, K, ms), row);
    fflush(f);
}

#endif
