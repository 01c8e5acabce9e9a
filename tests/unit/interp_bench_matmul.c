/* interp_bench_matmul.c: how long the CPU interpreter takes for seed 2 (kernel_matmul of
 * examples/matmul.tri) at M = N = K = 256 with 64x64x32 blocks, fp16 in, fp32 accumulation, fp16
 * out. Prints the seconds; fails only on a wrong result (the time is a benchmark, not a test:
 * the target, well under 1 s on a 2-core machine with -O2, is in docs/interpreter.md). */
#include "driver/driver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { SIZE = 256 };

static float half_to_float(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0    ? ldexpf((float)m, -24)
              : e == 31 ? (m ? NAN : INFINITY)
                        : ldexpf((float)(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* k / 64 for k in [-64, 64): exact in fp16 */
static uint16_t half_of_small(int q, float *value)
{
    *value = (float)q / 64.0f;
    if (q == 0)
        return 0;
    int e;
    float m = frexpf(fabsf(*value), &e);
    return (uint16_t)((q < 0 ? 0x8000 : 0) | (e - 1 + 15) << 10 |
                      (uint16_t)((m * 2.0f - 1.0f) * 1024.0f));
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/examples/matmul.tri", TRIC_SOURCE_DIR);
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        printf("cannot open %s\n", path);
        return 1;
    }
    static char text[1 << 16];
    size_t len = fread(text, 1, sizeof text - 1, fp);
    fclose(fp);
    SrcFile file = {.name = "matmul.tri", .text = text, .len = len};
    Define defs[6] = {{"BLOCK_SIZE_M", "64"}, {"BLOCK_SIZE_N", "64"}, {"BLOCK_SIZE_K", "32"},
                      {"GROUP_SIZE_M", "8"},  {"T_C", "tl.float16"},  {"T_ACC", "tl.float32"}};
    CompileOptions opt = {
        .spec = {.kernel_name = "kernel_matmul",
                 .signature = "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32,i32,i32,i32,i32,i32",
                 .defines = defs,
                 .ndefines = 6},
        .emit = EMIT_IR};
    Diag diag = {0};
    CompileResult res;
    if (!driver_compile(&file, &opt, &res, &diag)) {
        printf("kernel_matmul does not compile:\n%s\n", diag.text.data ? diag.text.data : "");
        diag_free(&diag);
        compile_result_free(&res);
        return 1;
    }
    diag_free(&diag);

    int n = SIZE;
    uint16_t *a = malloc((size_t)n * n * 2), *b = malloc((size_t)n * n * 2),
             *c = malloc((size_t)n * n * 2);
    float *af = malloc((size_t)n * n * 4), *bf = malloc((size_t)n * n * 4);
    uint32_t seed = 7;
    for (int i = 0; i < n * n; i++) {
        seed = seed * 1664525u + 1013904223u;
        a[i] = half_of_small((int)((seed >> 8) % 128) - 64, &af[i]);
        seed = seed * 1664525u + 1013904223u;
        b[i] = half_of_small((int)((seed >> 8) % 128) - 64, &bf[i]);
    }
    InterpArg args[12] = {{.ptr = (uintptr_t)a},
                          {.ptr = (uintptr_t)b},
                          {.ptr = (uintptr_t)c},
                          {.i = n},
                          {.i = n},
                          {.i = n},
                          {.i = n},
                          {.i = 1},
                          {.i = n},
                          {.i = 1},
                          {.i = n},
                          {.i = 1}};
    InterpBuffer bufs[3] = {{(uintptr_t)a, (size_t)n * n * 2},
                            {(uintptr_t)b, (size_t)n * n * 2},
                            {(uintptr_t)c, (size_t)n * n * 2}};
    InterpLaunch launch = {.grid = {(n / 64) * (n / 64), 1, 1},
                           .args = args,
                           .nargs = 12,
                           .buffers = bufs,
                           .nbuffers = 3};
    StrBuf err = {0};
    double t0 = now();
    bool ok = interp_run(res.ir, &launch, &err);
    double secs = now() - t0;
    if (!ok) {
        printf("interp_run failed: %s\n", err.data);
        return 1;
    }
    /* The data are multiples of 1/64 below 1: every fp32 partial sum is exact, so the only
     * error is the final fp16 rounding (half an ulp). */
    int bad = 0;
    for (int i = 0; i < n && bad < 10; i++)
        for (int j = 0; j < n; j++) {
            double ref = 0;
            for (int k = 0; k < n; k++)
                ref += (double)af[i * n + k] * bf[k * n + j];
            double got = half_to_float(c[i * n + j]);
            if (fabs(got - ref) > ldexp(fabs(ref), -11) + 1e-7) {
                if (bad++ < 5)
                    printf("C[%d][%d] = %g, want %g\n", i, j, got, ref);
            }
        }
    printf(
        "interp seed-2 matmul %dx%dx%d, blocks 64x64x32, fp16 -> fp32 acc -> fp16: %.3f s (%s)\n",
        n, n, n, secs, bad ? "WRONG" : "correct");
    strbuf_free(&err);
    free(a);
    free(b);
    free(c);
    free(af);
    free(bf);
    compile_result_free(&res);
    return bad ? 1 : 0;
}
