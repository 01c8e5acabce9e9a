/* layer_norm_bwd_exec.c: Triton's tutorial 05 layer norm backward (examples/layer_norm_bwd.tri)
 * as written, on the interpreter after every pass (interp_passes.h), sm_80 and sm_90a, against
 * a C reference: _layer_norm_bwd_dx_fused over 6 rows of 40 (a block of 64, the tail masked)
 * with 4 partial rows, so rows 0 and 4 (1 and 5) take one lock in turn: the first writes its
 * partial dw / db and sets the row's count, the second adds to them; then _layer_norm_bwd_dwdb
 * sums the 4 partial rows into dw and db. The interpreter runs programs one after another, so
 * each finds its lock free; the GPU's contention is scripts/bench_layer_norm_bwd.py's. */
#include "exec_test.h"
#include "interp_passes.h"

#include <math.h>
#include <stdlib.h>

enum { M = 6, N = 40, BLOCK = 64, GROUP = 4 };

static float half_to_float(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0 ? ldexpf((float)m, -24) : ldexpf((float)(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* float -> half, round to nearest even, for normal magnitudes (the inputs here) */
static uint16_t float_to_half(float f)
{
    if (f == 0.0f)
        return 0;
    uint16_t sign = f < 0 ? 0x8000 : 0;
    int e;
    float m = frexpf(fabsf(f), &e); /* |f| = m 2^e, m in [0.5, 1) */
    int mant = (int)rintf((m * 2.0f - 1.0f) * 1024.0f), he = e - 1 + 15;
    if (mant == 1024)
        mant = 0, he++;
    return (uint16_t)(sign | he << 10 | mant);
}

static float x_at(int i, int j) { return (float)((i * 5 + j * 3) % 9 - 4) * 0.25f; }
static float dy_at(int i, int j) { return (float)((i + 2 * j) % 5 - 2) * 0.125f; }
static float w_at(int j) { return 0.5f + (float)(j % 3) * 0.25f; }

static float mean_of(int i)
{
    float s = 0;
    for (int j = 0; j < N; j++)
        s += half_to_float(float_to_half(x_at(i, j)));
    return s / N;
}

static float rstd_of(int i)
{
    float mu = mean_of(i), s = 0;
    for (int j = 0; j < N; j++) {
        float d = half_to_float(float_to_half(x_at(i, j))) - mu;
        s += d * d;
    }
    return 1.0f / sqrtf(s / N + 1e-5f);
}

/* ---- dx and the partial rows ---------------------------------------------------------------- */

enum { DX_OUT = M * N + 2 * GROUP * N }; /* dx, then the partial dw rows, then the db rows */

static bool run_dx(const IrFunc *f, const void *ctx, void *out, StrBuf *err)
{
    (void)ctx;
    uint16_t x[M * N], dy[M * N], w[N], dx[M * N], pdw[GROUP * N], pdb[GROUP * N];
    float mean[M], rstd[M];
    int32_t locks[2 * GROUP] = {0};
    for (int i = 0; i < M; i++) {
        mean[i] = mean_of(i), rstd[i] = rstd_of(i);
        for (int j = 0; j < N; j++) {
            x[i * N + j] = float_to_half(x_at(i, j));
            dy[i * N + j] = float_to_half(dy_at(i, j));
        }
    }
    for (int j = 0; j < N; j++)
        w[j] = float_to_half(w_at(j));
    memset(dx, 0xff, sizeof dx);
    memset(pdw, 0xff, sizeof pdw); /* a row's first writer must not read them */
    memset(pdb, 0xff, sizeof pdb);
    InterpArg args[] = {P(dx),   P(dy),   P(pdw),   P(pdb), P(x), P(w),
                        P(mean), P(rstd), P(locks), I(N),   I(N)};
    InterpBuffer bufs[] = {B(dx, sizeof dx),     B(dy, sizeof dy),     B(pdw, sizeof pdw),
                           B(pdb, sizeof pdb),   B(x, sizeof x),       B(w, sizeof w),
                           B(mean, sizeof mean), B(rstd, sizeof rstd), B(locks, sizeof locks)};
    InterpLaunch l = {.grid = {M, 1, 1}, .args = args, .nargs = 11, .buffers = bufs, .nbuffers = 9};
    bool ok = interp_run(f, &l, err);
    uint16_t *o = out;
    memcpy(o, dx, sizeof dx);
    memcpy(o + M * N, pdw, sizeof pdw);
    memcpy(o + M * N + GROUP * N, pdb, sizeof pdb);
    for (int g = 0; ok && g < GROUP; g++)
        CHECK(locks[g] == 0 && locks[GROUP + g] == 1,
              "dx: lock %d left %d, its count %d (want 0 and 1)", g, locks[g], locks[GROUP + g]);
    return ok;
}

/* The reference: dx, and per partial row g the sums over the rows i = g mod GROUP of dy xhat
 * and dy. */
static void dx_reference(float *want)
{
    memset(want, 0, sizeof(float) * DX_OUT);
    for (int i = 0; i < M; i++) {
        float mu = mean_of(i), rs = rstd_of(i), c1 = 0, c2 = 0, xhat[N], wdy[N];
        for (int j = 0; j < N; j++) {
            float xv = half_to_float(float_to_half(x_at(i, j)));
            float dyv = half_to_float(float_to_half(dy_at(i, j)));
            xhat[j] = (xv - mu) * rs;
            wdy[j] = half_to_float(float_to_half(w_at(j))) * dyv;
            c1 += xhat[j] * wdy[j];
            c2 += wdy[j];
            want[M * N + (i % GROUP) * N + j] += dyv * xhat[j];
            want[M * N + GROUP * N + (i % GROUP) * N + j] += dyv;
        }
        c1 /= N, c2 /= N;
        for (int j = 0; j < N; j++)
            want[i * N + j] = (wdy[j] - (xhat[j] * c1 + c2)) * rs;
    }
}

/* fp16 results against fp32 references: the partial rows are fp16 sums of two rows */
static bool close_halves(const float *want, const uint16_t *got, int n)
{
    for (int i = 0; i < n; i++)
        if (!(fabsf(half_to_float(got[i]) - want[i]) <= 4e-3f + 4e-3f * fabsf(want[i]))) {
            printf("  element %d: %g, want %g\n", i, half_to_float(got[i]), want[i]);
            return false;
        }
    return true;
}

static bool close_dx(const void *want, const void *got, const void *ctx)
{
    (void)ctx;
    return close_halves(want, got, DX_OUT);
}

/* ---- the partial rows summed ---------------------------------------------------------------- */

static bool run_dwdb(const IrFunc *f, const void *ctx, void *out, StrBuf *err)
{
    (void)ctx;
    uint16_t pdw[GROUP * N], pdb[GROUP * N], dw[N], db[N];
    for (int i = 0; i < GROUP * N; i++) {
        pdw[i] = float_to_half((float)(i % 11 - 5) * 0.5f);
        pdb[i] = float_to_half((float)(i % 7 - 3) * 0.25f);
    }
    memset(dw, 0xff, sizeof dw);
    memset(db, 0xff, sizeof db);
    InterpArg args[] = {P(pdw), P(pdb), P(dw), P(db), I(GROUP), I(N)};
    InterpBuffer bufs[] = {B(pdw, sizeof pdw), B(pdb, sizeof pdb), B(dw, sizeof dw),
                           B(db, sizeof db)};
    InterpLaunch l = {.grid = {1, 1, 1}, .args = args, .nargs = 6, .buffers = bufs, .nbuffers = 4};
    bool ok = interp_run(f, &l, err);
    memcpy(out, dw, sizeof dw);
    memcpy((uint16_t *)out + N, db, sizeof db);
    return ok;
}

static bool close_dwdb(const void *want, const void *got, const void *ctx)
{
    (void)ctx;
    return close_halves(want, got, 2 * N);
}

int main(void)
{
    static const char *const dx_defs[] = {"GROUP_SIZE_M=4", "BLOCK_SIZE_N=64", NULL};
    static const char *const dwdb_defs[] = {"BLOCK_SIZE_M=2", "BLOCK_SIZE_N=64", NULL};
    Lowered low;
    if (interp_passes_lower(&low, "examples/layer_norm_bwd.tri", "_layer_norm_bwd_dx_fused",
                            "*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,"
                            "*fp32:16,*i32:16,i32,i32",
                            dx_defs, 4)) {
        static float want[DX_OUT];
        dx_reference(want);
        PassCheck pc = {.kernel = "_layer_norm_bwd_dx_fused",
                        .max_stages = 2,
                        .out_bytes = DX_OUT * sizeof(uint16_t),
                        .want = want,
                        .run = run_dx,
                        .close = close_dx};
        interp_passes_check(low.res.ir, &pc);
        interp_passes_lowered_free(&low);
    }
    if (interp_passes_lower(&low, "examples/layer_norm_bwd.tri", "_layer_norm_bwd_dwdb",
                            "*fp16:16,*fp16:16,*fp16:16,*fp16:16,i32,i32", dwdb_defs, 4)) {
        static float want[2 * N];
        for (int j = 0; j < N; j++)
            for (int g = 0; g < GROUP; g++) {
                want[j] += (float)((g * N + j) % 11 - 5) * 0.5f;
                want[N + j] += (float)((g * N + j) % 7 - 3) * 0.25f;
            }
        PassCheck pc = {.kernel = "_layer_norm_bwd_dwdb",
                        .max_stages = 3,
                        .out_bytes = 2 * N * sizeof(uint16_t),
                        .want = want,
                        .run = run_dwdb,
                        .close = close_dwdb};
        interp_passes_check(low.res.ir, &pc);
        interp_passes_lowered_free(&low);
    }
    if (test_failures)
        printf("%d failures\n", test_failures);
    else
        printf("layer_norm_bwd_exec: tutorial 05's backward kernels right after every pass\n");
    return test_failures ? 1 : 0;
}
