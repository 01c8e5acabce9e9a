/* lower_builtins_exec.c: tl.clamp, tl.swizzle2d, tl.debug_barrier and the libdevice functions
 * (libdevice.NAME, tl.extra.cuda.libdevice.NAME, module-level aliases, tl.math.NAME), compiled
 * from .tri source by driver_compile and run by the CPU interpreter against C references. Every
 * function of ir.h's TRIC_LIBDEVICE_FNS table is run on a block of values (specials included) in
 * fp32, fp64 and fp16 (computed in fp32, rounded back). Also .dtype /
 * .type / .element_ty of pointers choosing types in a kernel, tl.assume, tl.max_constancy and
 * tl.ravel. */
#include "driver/driver.h"
#include "exec_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 64 };

static bool compile(Compiled *c, const char *src, const char *signature, const Define *defs,
                    int ndefs)
{
    return exec_compile(c, "builtins.tri", src, NULL, signature, defs, ndefs);
}

/* Equal as numbers, or both NaN. */
static bool same(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

/* ---- libdevice --------------------------------------------------------------------------------- */

/* The C reference of each function, in double (written here, independently of ir/interp.c). */
static double reference(LibdeviceFn fn, double x, double y)
{
    switch (fn) {
    case LD_ERF: return erf(x);
    case LD_ERFC: return erfc(x);
    case LD_TANH: return tanh(x);
    case LD_SINH: return sinh(x);
    case LD_COSH: return cosh(x);
    case LD_TAN: return tan(x);
    case LD_ASIN: return asin(x);
    case LD_ACOS: return acos(x);
    case LD_ATAN: return atan(x);
    case LD_ASINH: return asinh(x);
    case LD_ACOSH: return acosh(x);
    case LD_ATANH: return atanh(x);
    case LD_SIN: return sin(x);
    case LD_COS: return cos(x);
    case LD_EXP: return exp(x);
    case LD_EXP2: return exp2(x);
    case LD_EXP10: return pow(10, x);
    case LD_EXPM1: return expm1(x);
    case LD_LOG: return log(x);
    case LD_LOG2: return log2(x);
    case LD_LOG10: return log10(x);
    case LD_LOG1P: return log1p(x);
    case LD_CBRT: return cbrt(x);
    case LD_SQRT: return sqrt(x);
    case LD_RSQRT: return 1 / sqrt(x);
    case LD_FABS: return fabs(x);
    case LD_FLOOR: return floor(x);
    case LD_CEIL: return ceil(x);
    case LD_TRUNC: return trunc(x);
    case LD_ROUND: return round(x);
    case LD_RINT: return rint(x);
    case LD_NEARBYINT: return nearbyint(x);
    case LD_LGAMMA: return lgamma(x);
    case LD_TGAMMA: return tgamma(x);
    case LD_ISNAN: return isnan(x) != 0;
    case LD_ISINF: return isinf(x) != 0;
    case LD_SIGNBIT: return signbit(x) != 0;
    case LD_POW: return pow(x, y);
    case LD_ATAN2: return atan2(x, y);
    case LD_FMOD: return fmod(x, y);
    case LD_REMAINDER: return remainder(x, y);
    case LD_FMAX: return fmax(x, y);
    case LD_FMIN: return fmin(x, y);
    case LD_FDIM: return fdim(x, y);
    case LD_HYPOT: return hypot(x, y);
    case LD_COPYSIGN: return copysign(x, y);
    case LD_NEXTAFTER: return nextafter(x, y);
    case LD_DIV_RN: return x / y;
    case LD_COUNT: break;
    }
    return NAN;
}

/* Inputs: specials, then a sweep over [-6, 6) that hits halves (round, rint) and the domain
 * edges of asin, acosh, atanh, log. */
static void inputs(double *x, double *y)
{
    static const double special[] = {0.0,      -0.0,      1.0, -1.0,  0.5, -0.5, 2.5,   -2.5,
                                     INFINITY, -INFINITY, NAN, 1e-30, 3.0, 0.25, 100.0, -7.5};
    int ns = (int)(sizeof special / sizeof *special);
    for (int i = 0; i < N; i++) {
        x[i] = i < ns ? special[i] : -6.0 + 12.0 * (i - ns) / (N - ns);
        y[i] = i < ns ? special[(i + 5) % ns] : 0.75 + 0.125 * (i % 9) - (i % 2 ? 2.0 : 0.0);
    }
}

static const char *const libdevice_src = "import triton\n"
                                         "import triton.language as tl\n"
                                         "from triton.language.extra import libdevice\n"
                                         "\n"
                                         "\n"
                                         "@triton.jit\n"
                                         "def k(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):\n"
                                         "    o = tl.arange(0, BLOCK)\n"
                                         "    x = tl.load(x_ptr + o)\n"
                                         "    y = tl.load(y_ptr + o)\n"
                                         "    tl.store(out_ptr + o, %s)\n";

static double half_value(uint16_t bits)
{
    _Float16 h;
    memcpy(&h, &bits, 2);
    return (double)h;
}

/* One function at one dtype ("fp32", "fp64", "fp16"): the interpreter's results against C. */
static void check_libdevice(LibdeviceFn fn, const char *dt)
{
    const LibdeviceInfo *info = libdevice_info(fn);
    char call[128], src[1024], sig[64];
    snprintf(call, sizeof call, info->nargs == 2 ? "libdevice.%s(x, y)" : "libdevice.%s(x)",
             info->name);
    if (info->result == LDR_PRED)
        strcat(call, ".to(tl.int32)");
    snprintf(src, sizeof src, libdevice_src, call);
    snprintf(sig, sizeof sig, "*%s,*%s,*%s", dt, dt, info->result == LDR_PRED ? "i32" : dt);
    Define d = {"BLOCK", "64"};
    Compiled c;
    if (!compile(&c, src, sig, &d, 1))
        return;
    CHECK(count_ops(&c.ir->body, OP_LIBDEVICE) == 1, "%s %s: one libdevice op", info->name, dt);
    double x[N], y[N];
    inputs(x, y);
    float xf[N], yf[N], rf[N];
    double rd[N];
    uint16_t xh[N], yh[N], rh[N];
    int32_t ri[N];
    bool f64 = !strcmp(dt, "fp64"), f16 = !strcmp(dt, "fp16");
    for (int i = 0; i < N; i++) {
        xf[i] = (float)x[i];
        yf[i] = (float)y[i];
        /* fp16 inputs and references through C's _Float16 (IEEE binary16, nearest even). */
        _Float16 hx = (_Float16)xf[i], hy = (_Float16)yf[i];
        memcpy(&xh[i], &hx, 2);
        memcpy(&yh[i], &hy, 2);
    }
    const void *xp = f64 ? (const void *)x : f16 ? (const void *)xh : (const void *)xf;
    const void *yp = f64 ? (const void *)y : f16 ? (const void *)yh : (const void *)yf;
    size_t esz = f64 ? 8 : f16 ? 2 : 4;
    void *rp = info->result == LDR_PRED ? (void *)ri
               : f64                    ? (void *)rd
               : f16                    ? (void *)rh
                                        : (void *)rf;
    size_t rsz = info->result == LDR_PRED ? 4 : esz;
    InterpArg args[] = {P(xp), P(yp), P(rp)};
    InterpBuffer bufs[] = {B(xp, N * esz), B(yp, N * esz), B(rp, N * rsz)};
    if (!run(c.ir, 1, args, 3, bufs, 3)) {
        compile_result_free(&c.res);
        return;
    }
    for (int i = 0; i < N; i++) {
        double a = f64 ? x[i] : f16 ? half_value(xh[i]) : (double)xf[i];
        double b = f64 ? y[i] : f16 ? half_value(yh[i]) : (double)yf[i];
        if (info->result == LDR_PRED) {
            CHECK(ri[i] == (int32_t)reference(fn, a, b), "%s %s(%g) = %d", dt, info->name, a,
                  ri[i]);
            continue;
        }
        if (f64) {
            CHECK(same(rd[i], reference(fn, a, b)), "%s %s(%g, %g) = %.17g, want %.17g", dt,
                  info->name, a, b, rd[i], reference(fn, a, b));
        } else if (!f16) {
            /* fp32: the double result rounded once; nextafter steps in fp32's own spacing. */
            float want =
                fn == LD_NEXTAFTER ? nextafterf((float)a, (float)b) : (float)reference(fn, a, b);
            CHECK(same(rf[i], want), "%s %s(%g, %g) = %.9g, want %.9g", dt, info->name, a, b,
                  (double)rf[i], (double)want);
        } else {
            /* fp16: computed in fp32 and rounded to fp16. */
            float wide =
                fn == LD_NEXTAFTER ? nextafterf((float)a, (float)b) : (float)reference(fn, a, b);
            _Float16 want = (_Float16)wide;
            _Float16 got;
            memcpy(&got, &rh[i], 2);
            CHECK(same((double)got, (double)want), "%s %s(%g, %g) = %g, want %g", dt, info->name, a,
                  b, (double)got, (double)want);
        }
    }
    compile_result_free(&c.res);
}

/* The ways a kernel names libdevice: imported module, full path, aliases, tl.math. */
static void check_spellings(void)
{
    const char *src =
        "import triton\n"
        "import triton.language as tl\n"
        "from triton.language.extra.cuda import libdevice as ld\n"
        "from triton.language.extra import libdevice\n"
        "\n"
        "tanh = libdevice.tanh\n"
        "erf = tl.extra.cuda.libdevice.erf\n"
        "\n"
        "\n"
        "@triton.jit\n"
        "def k(x_ptr, out_ptr, BLOCK: tl.constexpr):\n"
        "    o = tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + o)\n"
        "    a = tanh(x) + erf(x) + ld.asin(x * 0.1)\n"
        "    b = tl.extra.cuda.libdevice.pow(x, 2.0) + tl.math.atan(x) + libdevice.erfc(x)\n"
        "    tl.store(out_ptr + o, a + b)\n";
    Define d = {"BLOCK", "64"};
    Compiled c;
    if (!compile(&c, src, "*fp32,*fp32", &d, 1))
        return;
    CHECK(count_ops(&c.ir->body, OP_LIBDEVICE) == 6, "six libdevice ops");
    float x[N], r[N];
    for (int i = 0; i < N; i++)
        x[i] = -3.0f + 6.0f * i / N;
    InterpArg args[] = {P(x), P(r)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(r, sizeof r)};
    if (run(c.ir, 1, args, 2, bufs, 2)) {
        for (int i = 0; i < N; i++) {
            float v = x[i];
            float a = (float)tanh(v) + (float)erf(v);
            a = a + (float)asin((double)(v * 0.1f));
            float b = (float)pow(v, 2.0) + (float)atan(v);
            b = b + (float)erfc(v);
            CHECK(r[i] == a + b, "spellings at %g: %.9g, want %.9g", (double)v, (double)r[i],
                  (double)(a + b));
        }
    }
    compile_result_free(&c.res);
}

/* ---- clamp, swizzle2d, debug_barrier ---------------------------------------------------------- */

static void check_clamp(void)
{
    const char *src =
        "import triton\n"
        "import triton.language as tl\n"
        "\n"
        "\n"
        "@triton.jit\n"
        "def k(x_ptr, lo_ptr, hi_ptr, out_ptr, all_ptr, s_ptr, BLOCK: tl.constexpr):\n"
        "    o = tl.arange(0, BLOCK)\n"
        "    x = tl.load(x_ptr + o)\n"
        "    lo = tl.load(lo_ptr + o)\n"
        "    hi = tl.load(hi_ptr + o)\n"
        "    tl.store(out_ptr + o, tl.clamp(x, lo, hi))\n"
        "    tl.store(all_ptr + o, tl.clamp(x, lo, hi, propagate_nan=tl.PropagateNan.ALL))\n"
        "    tl.store(s_ptr + o, tl.clamp(x, -1.5, 2))\n";
    Define d = {"BLOCK", "64"};
    Compiled c;
    if (!compile(&c, src, "*fp32,*fp32,*fp32,*fp32,*fp32,*fp32", &d, 1))
        return;
    float x[N], lo[N], hi[N], r[N], ra[N], rs[N];
    for (int i = 0; i < N; i++) {
        x[i] = -4.0f + 8.0f * i / N;
        lo[i] = (float)(i % 5) - 3.0f;
        hi[i] = lo[i] + (float)(i % 3);
    }
    x[3] = NAN;
    lo[7] = NAN;
    hi[9] = NAN;
    x[11] = INFINITY;
    lo[13] = NAN, hi[13] = NAN;
    InterpArg args[] = {P(x), P(lo), P(hi), P(r), P(ra), P(rs)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(lo, sizeof lo), B(hi, sizeof hi),
                           B(r, sizeof r), B(ra, sizeof ra), B(rs, sizeof rs)};
    if (run(c.ir, 1, args, 6, bufs, 6)) {
        for (int i = 0; i < N; i++) {
            float none = fminf(fmaxf(x[i], lo[i]), hi[i]);
            float all = (isnan(x[i]) || isnan(lo[i]) || isnan(hi[i])) ? NAN : none;
            CHECK(same(r[i], none), "clamp %d: %g, want %g", i, (double)r[i], (double)none);
            CHECK(same(ra[i], all), "clamp ALL %d: %g, want %g", i, (double)ra[i], (double)all);
            float sc = fminf(fmaxf(x[i], -1.5f), 2.0f);
            CHECK(same(rs[i], sc), "clamp scalars %d: %g, want %g", i, (double)rs[i], (double)sc);
        }
    }
    compile_result_free(&c.res);
}

/* Triton's swizzle2d in C (standard.py), on non-negative ints. */
static void swizzle_ref(int i, int j, int size_i, int size_j, int size_g, int *ni, int *nj)
{
    int ij = i * size_j + j;
    int size_gj = size_g * size_j;
    int group_id = ij / size_gj;
    int off_i = group_id * size_g;
    int rows = size_i - off_i < size_g ? size_i - off_i : size_g;
    ij = ij % size_gj;
    *ni = off_i + ij % rows;
    *nj = ij / rows;
}

static void check_swizzle2d(void)
{
    const char *src = "import triton\n"
                      "import triton.language as tl\n"
                      "\n"
                      "\n"
                      "@triton.jit\n"
                      "def k(out_ptr, M, N, G):\n"
                      "    pid = tl.program_id(0)\n"
                      "    i = pid // N\n"
                      "    j = pid % N\n"
                      "    ni, nj = tl.swizzle2d(i, j, M, N, G)\n"
                      "    tl.store(out_ptr + 2 * pid, ni)\n"
                      "    tl.store(out_ptr + 2 * pid + 1, nj)\n"
                      "    a, b = tl.swizzle2d(5, 3, 7, 4, 3)\n"
                      "    tl.store(out_ptr + 2 * M * N + pid * 0, a * 100 + b)\n";
    Compiled c;
    if (!compile(&c, src, "*i32,i32,i32,i32", NULL, 0))
        return;
    static const int shapes[][3] = {{8, 8, 4}, {7, 5, 3}, {5, 9, 8}, {1, 4, 1}, {6, 6, 1}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int m = shapes[s][0], n = shapes[s][1], g = shapes[s][2];
        int32_t *out = calloc((size_t)(2 * m * n + 1), sizeof *out);
        InterpArg args[] = {P(out), I(m), I(n), I(g)};
        InterpBuffer bufs[] = {B(out, (size_t)(2 * m * n + 1) * sizeof *out)};
        if (run(c.ir, m * n, args, 4, bufs, 1)) {
            bool hit[256] = {0};
            for (int p = 0; p < m * n; p++) {
                int ni, nj;
                swizzle_ref(p / n, p % n, m, n, g, &ni, &nj);
                CHECK(out[2 * p] == ni && out[2 * p + 1] == nj,
                      "swizzle2d (%d,%d,%d) pid %d: (%d, %d), want (%d, %d)", m, n, g, p,
                      out[2 * p], out[2 * p + 1], ni, nj);
                if (ni >= 0 && ni < m && nj >= 0 && nj < n)
                    hit[ni * n + nj] = true;
            }
            for (int p = 0; p < m * n; p++)
                CHECK(hit[p], "swizzle2d (%d,%d,%d) is not a permutation: (%d, %d) missing", m, n,
                      g, p / n, p % n);
            int a, b;
            swizzle_ref(5, 3, 7, 4, 3, &a, &b);
            CHECK(out[2 * m * n] == a * 100 + b, "constexpr swizzle2d: %d, want %d", out[2 * m * n],
                  a * 100 + b);
        }
        free(out);
    }
    compile_result_free(&c.res);
}

static void check_debug_barrier(void)
{
    const char *src = "import triton\n"
                      "import triton.language as tl\n"
                      "\n"
                      "\n"
                      "@triton.jit\n"
                      "def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
                      "    o = tl.arange(0, BLOCK)\n"
                      "    acc = tl.zeros((BLOCK,), dtype=tl.float32)\n"
                      "    for i in range(0, n):\n"
                      "        acc += tl.load(x_ptr + i * BLOCK + o)\n"
                      "        tl.debug_barrier()\n"
                      "    tl.debug_barrier()\n"
                      "    tl.store(out_ptr + o, acc)\n";
    Define d = {"BLOCK", "32"};
    Compiled c;
    if (!compile(&c, src, "*fp32,*fp32,i32", &d, 1))
        return;
    CHECK(count_ops(&c.ir->body, OP_BARRIER) == 2, "two barriers, got %d",
          count_ops(&c.ir->body, OP_BARRIER));
    float x[3 * 32], r[32];
    for (int i = 0; i < 3 * 32; i++)
        x[i] = (float)i;
    InterpArg args[] = {P(x), P(r), I(3)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(r, sizeof r)};
    if (run(c.ir, 1, args, 3, bufs, 2))
        for (int i = 0; i < 32; i++)
            CHECK(r[i] == x[i] + x[32 + i] + x[64 + i], "debug_barrier kernel %d: %g", i,
                  (double)r[i]);
    compile_result_free(&c.res);
}

/* tl.assume (Triton 3.3's tutorial matmul: `tl.assume(pid_m >= 0)`, `tl.assume(stride > 0)`)
 * and tl.max_constancy are hints tric drops: no op in the IR, the values unchanged; tl.ravel and
 * x.ravel() are a reshape to 1-D in row-major order. */
static void check_hints_and_ravel(void)
{
    const char *src = "import triton\n"
                      "import triton.language as tl\n"
                      "\n"
                      "\n"
                      "@triton.jit\n"
                      "def k(x_ptr, out_ptr, stride, R: tl.constexpr, C: tl.constexpr):\n"
                      "    pid = tl.program_id(0)\n"
                      "    tl.assume(pid >= 0)\n"
                      "    tl.assume(stride > 0)\n"
                      "    rows = tl.max_constancy(tl.arange(0, R), 1)\n"
                      "    m = tl.load(x_ptr + rows[:, None] * stride + tl.arange(0, C)[None, :])\n"
                      "    o = tl.arange(0, R * C)\n"
                      "    tl.store(out_ptr + o, tl.ravel(m))\n"
                      "    tl.store(out_ptr + R * C + o, m.ravel(can_reorder=False) * 2)\n";
    Define d[] = {{"R", "4"}, {"C", "8"}};
    Compiled c;
    if (!compile(&c, src, "*i32,*i32,i32", d, 2))
        return;
    CHECK(count_ops(&c.ir->body, OP_RESHAPE) == 2, "two reshapes, got %d",
          count_ops(&c.ir->body, OP_RESHAPE));
    int32_t x[4 * 16], r[2 * 32];
    for (int i = 0; i < 4 * 16; i++)
        x[i] = i * 3 - 50;
    InterpArg args[] = {P(x), P(r), I(16)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(r, sizeof r)};
    if (run(c.ir, 1, args, 3, bufs, 2))
        for (int i = 0; i < 32; i++) {
            int32_t want = x[(i / 8) * 16 + i % 8];
            CHECK(r[i] == want && r[32 + i] == 2 * want, "ravel %d: %d %d, want %d", i, r[i],
                  r[32 + i], want);
        }
    compile_result_free(&c.res);
}

/* .dtype.element_ty and .type.element_ty of pointers pick the accumulator's type and a
 * constexpr branch, as Triton kernels write them. */
static void check_type_attributes(void)
{
    const char *src = "import triton\n"
                      "import triton.language as tl\n"
                      "\n"
                      "\n"
                      "@triton.jit\n"
                      "def k(x_ptr, y_ptr, BLOCK: tl.constexpr):\n"
                      "    o = tl.arange(0, BLOCK)\n"
                      "    x = tl.load(x_ptr + o)\n"
                      "    acc = tl.zeros((BLOCK,), dtype=y_ptr.dtype.element_ty)\n"
                      "    if x_ptr.type.element_ty == tl.float16:\n"
                      "        acc += x.to(y_ptr.type.element_ty) * 2\n"
                      "    else:\n"
                      "        acc += x.to(acc.dtype)\n"
                      "    tl.store(y_ptr + o, acc)\n";
    Define d = {"BLOCK", "16"};
    Compiled c;
    if (!compile(&c, src, "*fp16,*fp64", &d, 1))
        return;
    uint16_t x[16];
    double y[16];
    for (int i = 0; i < 16; i++) {
        _Float16 h = (_Float16)(i * 0.5f - 3.0f);
        memcpy(&x[i], &h, 2);
    }
    InterpArg args[] = {P(x), P(y)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(y, sizeof y)};
    if (run(c.ir, 1, args, 2, bufs, 2))
        for (int i = 0; i < 16; i++)
            CHECK(y[i] == 2 * (i * 0.5 - 3.0), "type attributes %d: %g", i, y[i]);
    compile_result_free(&c.res);
}

/* tl.max of fp16 is fp32 (standard.max widens inputs narrower than 32 bits), so x - tl.max(x, 0)
 * subtracts in fp32: 0.5 - 2048 is -2047.5, which fp16 would round to -2048. The values of
 * return_indices=True keep fp16. */
static void check_max_widens(void)
{
    const char *src = "import triton\n"
                      "import triton.language as tl\n"
                      "\n"
                      "\n"
                      "@triton.jit\n"
                      "def k(x_ptr, d_ptr, v_ptr):\n"
                      "    offs = tl.arange(0, 64)\n"
                      "    x = tl.load(x_ptr + offs)\n"
                      "    tl.store(d_ptr + offs, x - tl.max(x, 0))\n"
                      "    v, i = tl.max(tl.reshape(x, (4, 16)), 1, return_indices=True)\n"
                      "    tl.store(v_ptr + tl.arange(0, 4), v)\n";
    Compiled c;
    if (!compile(&c, src, "*fp16,*fp32,*fp16", NULL, 0))
        return;
    /* x[i] is value pick(i) of these fp16 numbers; element 21 is 2048 too (a second row's max). */
    static const uint16_t bits[4] = {0x6800, 0x3800, 0x3E00, 0xC280};
    static const float vals[4] = {2048.0f, 0.5f, 1.5f, -3.25f};
    int pick[64];
    uint16_t x[64], v[4];
    float d[64];
    for (int i = 0; i < 64; i++) {
        pick[i] = i == 21 ? 0 : (i * 3 + i / 16) % 4;
        x[i] = bits[pick[i]];
    }
    InterpArg args[] = {P(x), P(d), P(v)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(d, sizeof d), B(v, sizeof v)};
    if (run(c.ir, 1, args, 3, bufs, 3)) {
        for (int i = 0; i < 64; i++) {
            float want = vals[pick[i]] - 2048.0f;
            CHECK(d[i] == want, "x - tl.max(x): d[%d] = %g, want %g (in fp32)", i, d[i], want);
        }
        for (int r = 0; r < 4; r++) {
            int best = pick[r * 16];
            for (int k = 1; k < 16; k++)
                if (vals[pick[r * 16 + k]] > vals[best])
                    best = pick[r * 16 + k];
            CHECK(v[r] == bits[best], "values of return_indices, row %d: 0x%04x, want 0x%04x", r,
                  v[r], bits[best]);
        }
    }
    compile_result_free(&c.res);
}

int main(void)
{
    for (int fn = 0; fn < LD_COUNT; fn++) {
        check_libdevice((LibdeviceFn)fn, "fp32");
        check_libdevice((LibdeviceFn)fn, "fp64");
        check_libdevice((LibdeviceFn)fn, "fp16");
    }
    check_spellings();
    check_clamp();
    check_swizzle2d();
    check_debug_barrier();
    check_hints_and_ravel();
    check_type_attributes();
    check_max_widens();
    if (test_failures) {
        printf("%d failure(s)\n", test_failures);
        return 1;
    }
    printf("lower_builtins_exec: ok (%d libdevice functions in fp32, fp64, fp16)\n", LD_COUNT);
    return 0;
}
