/* interp_seeds.c: the seed kernels end to end on the CPU: examples/vector_add.tri and both kernels
 * of examples/matmul.tri compiled by driver_compile (the lowered IR) and run by the interpreter
 * against plain C references. Sizes cover single elements, partial blocks (seed 1's masks) and
 * seed 2's grouped program order. */
#include "driver/driver.h"
#include "test_source.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* Compiles one kernel to lowered IR; NULL (and the diagnostics printed) on failure. */
static IrFunc *compile(const SrcFile *file, const char *kernel, const char *signature,
                       const Define *defs, int ndefs, CompileResult *res)
{
    CompileOptions opt = {
        .spec = {.kernel_name = kernel, .signature = signature, .defines = defs, .ndefines = ndefs},
        .emit = EMIT_IR};
    Diag diag = {0};
    bool ok = file->text && driver_compile(file, &opt, res, &diag);
    if (!ok || !res->ir) {
        printf("compiling %s (%s) failed:\n%s\n", kernel, signature,
               diag.text.data ? diag.text.data : "");
        diag_free(&diag);
        return NULL;
    }
    diag_free(&diag);
    return res->ir;
}

static InterpArg P(const void *p) { return (InterpArg){.ptr = (uint64_t)(uintptr_t)p}; }
static InterpArg I(int64_t v) { return (InterpArg){.i = v}; }
static InterpBuffer B(const void *p, size_t bytes)
{
    return (InterpBuffer){(uint64_t)(uintptr_t)p, bytes};
}

static uint32_t rng_state = 2024;
static uint32_t rng(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

/* fp16 helpers for test data and references (independent of the interpreter). */
static float half_to_float(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0    ? ldexpf((float)m, -24)
              : e == 31 ? (m ? NAN : INFINITY)
                        : ldexpf((float)(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* A random fp16 in [-2, 2) with 8 significant bits (so the data is varied but sane). */
static uint16_t random_half(float *value)
{
    int q = (int)(rng() % 512) - 256; /* q / 128 */
    float v = (float)q / 128.0f;
    *value = v;
    /* encode exactly: v has at most 9 significant bits, fp16 has 11 */
    if (v == 0)
        return 0;
    uint16_t sign = v < 0 ? 0x8000 : 0;
    float a = fabsf(v);
    int e;
    float m = frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    int biased = e - 1 + 15;
    uint16_t mant = (uint16_t)((m * 2.0f - 1.0f) * 1024.0f);
    return (uint16_t)(sign | biased << 10 | mant);
}

static void test_vector_add(const SrcFile *file)
{
    Define defs[1] = {{"BLOCK_SIZE", "1024"}};
    CompileResult res;
    IrFunc *f = compile(file, "vector_add_kernel", "*fp32:16,*fp32:16,*fp32:16,i32", defs, 1, &res);
    CHECK(f, "vector_add compiles");
    if (!f) {
        compile_result_free(&res);
        return;
    }
    int sizes[3] = {1, 1000, 98437};
    for (int s = 0; s < 3; s++) {
        int n = sizes[s];
        float *x = malloc(n * 4), *y = malloc(n * 4), *out = malloc(n * 4);
        for (int i = 0; i < n; i++) {
            x[i] = (float)(rng() % 10000) / 100.0f;
            y[i] = (float)(rng() % 10000) / 7.0f;
            out[i] = NAN;
        }
        InterpArg args[4] = {P(x), P(y), P(out), I(n)};
        InterpBuffer bufs[3] = {B(x, n * 4), B(y, n * 4), B(out, n * 4)};
        InterpLaunch l = {.grid = {(n + 1023) / 1024, 1, 1},
                          .args = args,
                          .nargs = 4,
                          .buffers = bufs,
                          .nbuffers = 3};
        StrBuf err = {0};
        bool ok = interp_run(f, &l, &err);
        CHECK(ok, "vector_add n=%d: %s", n, err.data);
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += out[i] != x[i] + y[i];
        CHECK(bad == 0, "vector_add n=%d: %d wrong", n, bad);
        printf("vector_add n=%d: %s\n", n, ok && !bad ? "ok" : "WRONG");
        strbuf_free(&err);
        free(x);
        free(y);
        free(out);
    }
    /* The launch says n = 1000 but the output holds 999 floats: the store of element 999 is
     * caught at the .tri line of tl.store, and what programs stored before is undone. */
    {
        int n = 1000;
        float *x = calloc(n, 4), *y = calloc(n, 4), *out = malloc((n - 1) * 4);
        for (int i = 0; i < n - 1; i++)
            out[i] = -3.0f;
        InterpArg args[4] = {P(x), P(y), P(out), I(n)};
        InterpBuffer bufs[3] = {B(x, n * 4), B(y, n * 4), B(out, (n - 1) * 4)};
        InterpLaunch l = {.grid = {(n + 1023) / 1024, 1, 1},
                          .args = args,
                          .nargs = 4,
                          .buffers = bufs,
                          .nbuffers = 3};
        StrBuf err = {0};
        CHECK(!interp_run(f, &l, &err), "vector_add into a short buffer must fail");
        CHECK(err.data &&
                  strstr(err.data, "vector_add.tri:31: out-of-bounds store in program (0, 0, 0): "
                                   "element 999 (index [999]) writes address"),
              "message: %s", err.data ? err.data : "(none)");
        printf("vector_add into a short buffer: %s\n", err.data ? err.data : "(no error)");
        int changed = 0;
        for (int i = 0; i < n - 1; i++)
            changed += out[i] != -3.0f;
        CHECK(changed == 0, "%d elements stay changed after the failed launch", changed);
        strbuf_free(&err);
        free(x);
        free(y);
        free(out);
    }
    compile_result_free(&res);
}

/* C = A @ B with A <MxK>, B <KxN> fp16 row-major; the reference sums in double. Tolerance: the
 * interpreter sums fp16 products in fp32, so |err| <= K * 2^-24 * sum |a||b| (with margin). */
typedef struct Matmul {
    int M, N, K;
    uint16_t *a, *b;
    double *ref, *mag; /* the exact sum and sum |a||b| per element */
} Matmul;

static Matmul matmul_data(int M, int N, int K)
{
    Matmul mm = {M,
                 N,
                 K,
                 malloc((size_t)M * K * 2),
                 malloc((size_t)K * N * 2),
                 malloc((size_t)M * N * sizeof(double)),
                 malloc((size_t)M * N * sizeof(double))};
    float *af = malloc((size_t)M * K * 4), *bf = malloc((size_t)K * N * 4);
    for (int i = 0; i < M * K; i++)
        mm.a[i] = random_half(&af[i]);
    for (int i = 0; i < K * N; i++)
        mm.b[i] = random_half(&bf[i]);
    for (int i = 0; i < M * K; i++)
        if (half_to_float(mm.a[i]) != af[i])
            printf("test bug: fp16 encoding of %g\n", af[i]);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double s = 0, g = 0;
            for (int k = 0; k < K; k++) {
                s += (double)af[m * K + k] * bf[k * N + n];
                g += fabs((double)af[m * K + k] * bf[k * N + n]);
            }
            mm.ref[m * N + n] = s;
            mm.mag[m * N + n] = g;
        }
    free(af);
    free(bf);
    return mm;
}

static void matmul_free(Matmul *mm)
{
    free(mm->a);
    free(mm->b);
    free(mm->ref);
    free(mm->mag);
}

/* Seed 1: matmul_kernel, masked, fp16 inputs, fp32 output, 32x32x32 blocks. */
static void test_matmul_seed1(const SrcFile *file)
{
    Define defs[3] = {{"BLOCK_SIZE_M", "32"}, {"BLOCK_SIZE_N", "32"}, {"BLOCK_SIZE_K", "32"}};
    CompileResult res;
    IrFunc *f = compile(file, "matmul_kernel",
                        "*fp16,*fp16,*fp32,i32,i32,i32,i32,i32,i32,i32,i32,i32", defs, 3, &res);
    CHECK(f, "matmul_kernel compiles");
    if (!f) {
        compile_result_free(&res);
        return;
    }
    int sizes[4][3] = {{1, 1, 1}, {33, 65, 17}, {128, 96, 80}, {257, 129, 100}};
    for (int s = 0; s < 4; s++) {
        int M = sizes[s][0], N = sizes[s][1], K = sizes[s][2];
        Matmul mm = matmul_data(M, N, K);
        float *c = malloc((size_t)M * N * 4);
        for (int i = 0; i < M * N; i++)
            c[i] = NAN;
        InterpArg args[12] = {P(mm.a), P(mm.b), P(c), I(M), I(N), I(K),
                              I(K),    I(1),    I(N), I(1), I(N), I(1)};
        InterpBuffer bufs[3] = {B(mm.a, (size_t)M * K * 2), B(mm.b, (size_t)K * N * 2),
                                B(c, (size_t)M * N * 4)};
        int grid = ((M + 31) / 32) * ((N + 31) / 32);
        InterpLaunch l = {
            .grid = {grid, 1, 1}, .args = args, .nargs = 12, .buffers = bufs, .nbuffers = 3};
        StrBuf err = {0};
        bool ok = interp_run(f, &l, &err);
        CHECK(ok, "matmul_kernel %dx%dx%d: %s", M, N, K, err.data);
        int bad = 0;
        double worst = 0;
        for (int i = 0; i < M * N; i++) {
            double d = fabs(c[i] - mm.ref[i]), tol = 4.0 * K * ldexp(1, -24) * mm.mag[i] + 1e-30;
            if (!(d <= tol))
                bad++;
            if (d > worst)
                worst = d;
        }
        CHECK(bad == 0, "matmul_kernel %dx%dx%d: %d wrong (worst error %g)", M, N, K, bad, worst);
        printf("matmul_kernel (seed 1) M=%d N=%d K=%d: %s (worst abs error %.3g)\n", M, N, K,
               ok && !bad ? "ok" : "WRONG", worst);
        strbuf_free(&err);
        free(c);
        matmul_free(&mm);
    }
    compile_result_free(&res);
}

/* Seed 2: kernel_matmul, no masks, sizes multiples of the blocks, T_C = fp16, T_ACC = fp32. */
static void test_matmul_seed2(const SrcFile *file)
{
    const char *groups[2] = {"0", "8"};
    int blocks[2][3] = {{32, 32, 32}, {64, 32, 16}};
    int sizes[2][3] = {{64, 96, 128}, {256, 128, 64}};
    for (int g = 0; g < 2; g++)
        for (int s = 0; s < 2; s++) {
            char bm[16], bn[16], bk[16];
            snprintf(bm, sizeof bm, "%d", blocks[s][0]);
            snprintf(bn, sizeof bn, "%d", blocks[s][1]);
            snprintf(bk, sizeof bk, "%d", blocks[s][2]);
            Define defs[6] = {{"BLOCK_SIZE_M", bm},  {"BLOCK_SIZE_N", bn},
                              {"BLOCK_SIZE_K", bk},  {"GROUP_SIZE_M", groups[g]},
                              {"T_C", "tl.float16"}, {"T_ACC", "tl.float32"}};
            CompileResult res;
            IrFunc *f = compile(file, "kernel_matmul",
                                "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32,i32,i32,i32,i32,i32",
                                defs, 6, &res);
            CHECK(f, "kernel_matmul compiles (GROUP_SIZE_M=%s)", groups[g]);
            if (!f) {
                compile_result_free(&res);
                continue;
            }
            int M = sizes[s][0], N = sizes[s][1], K = sizes[s][2];
            Matmul mm = matmul_data(M, N, K);
            uint16_t *c = malloc((size_t)M * N * 2);
            memset(c, 0xff, (size_t)M * N * 2);
            InterpArg args[12] = {P(mm.a), P(mm.b), P(c), I(M), I(N), I(K),
                                  I(K),    I(1),    I(N), I(1), I(N), I(1)};
            InterpBuffer bufs[3] = {B(mm.a, (size_t)M * K * 2), B(mm.b, (size_t)K * N * 2),
                                    B(c, (size_t)M * N * 2)};
            int grid = (M / blocks[s][0]) * (N / blocks[s][1]);
            InterpLaunch l = {
                .grid = {grid, 1, 1}, .args = args, .nargs = 12, .buffers = bufs, .nbuffers = 3};
            StrBuf err = {0};
            bool ok = interp_run(f, &l, &err);
            CHECK(ok, "kernel_matmul %dx%dx%d G=%s: %s", M, N, K, groups[g], err.data);
            int bad = 0;
            double worst = 0;
            for (int i = 0; i < M * N; i++) {
                double got = half_to_float(c[i]);
                /* fp32 sum error, then one fp16 rounding (half an ulp: 2^-11 relative) */
                double tol = 4.0 * K * ldexp(1, -24) * mm.mag[i] + ldexp(fabs(mm.ref[i]), -10) +
                             ldexp(1, -24);
                double d = fabs(got - mm.ref[i]);
                if (!(d <= tol))
                    bad++;
                if (d > worst)
                    worst = d;
            }
            CHECK(bad == 0, "kernel_matmul %dx%dx%d G=%s: %d wrong (worst %g)", M, N, K, groups[g],
                  bad, worst);
            printf("kernel_matmul (seed 2) M=%d N=%d K=%d blocks %sx%sx%s GROUP_SIZE_M=%s: %s "
                   "(worst abs error %.3g)\n",
                   M, N, K, bm, bn, bk, groups[g], ok && !bad ? "ok" : "WRONG", worst);
            strbuf_free(&err);
            free(c);
            matmul_free(&mm);
            compile_result_free(&res);
        }
}

int main(void)
{
    SrcFile va = test_load_source("examples/vector_add.tri", "vector_add.tri");
    SrcFile mm = test_load_source("examples/matmul.tri", "matmul.tri");
    test_vector_add(&va);
    test_matmul_seed1(&mm);
    test_matmul_seed2(&mm);
    free((char *)va.text);
    free((char *)mm.text);
    if (failures) {
        printf("%d check(s) failed\n", failures);
        return 1;
    }
    printf("interp_seeds: all checks passed\n");
    return 0;
}
