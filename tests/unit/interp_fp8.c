/* interp_fp8.c: the fp8 types tl.float8e4nv (e4m3fn) and tl.float8e5 (e5m2).
 *  1. support/float8.c's decoder and encoder against references written here: the decoder
 *     against the formats' definitions, the encoder (round to nearest even, saturate, NaN) against
 *     a brute-force search for the nearest of all 256 codes, over every fp8 value, the midpoints
 *     between neighbours (ties), their float neighbours, overflow, infinities, NaN and a sweep.
 *  2. Kernels compiled from .tri source and run by the interpreter: fp32/fp16/bf16 -> fp8 -> fp32,
 *     e4m3 <-> e5m2, bitcast to and from uint8, a masked load with other=, comparisons and
 *     tl.where, and an fp8 matmul
 *     (tl.dot of e4m3 x e4m3, e5m2 x e5m2 and e4m3 x e5m2) against a C matmul of the decoded
 *     inputs. */
#include "driver/driver.h"
#include "exec_test.h"
#include "tric/tric.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- 1. the codec against references ------------------------------------------------------- */

typedef struct Fmt {
    DType t;
    const char *name;
    int ebits, mbits, bias;
    bool ieee; /* e5m2 */
} Fmt;

static const Fmt fmts[2] = {{DT_F8E4NV, "e4m3", 4, 3, 7, false}, {DT_F8E5, "e5m2", 5, 2, 15, true}};

/* The definition: (-1)^s 2^(e-bias) 1.m, subnormals 2^(1-bias) 0.m; e4m3fn's only special is
 * S.1111.111 (NaN), e5m2's all-ones exponent is inf (m = 0) or NaN. */
static double ref_decode(const Fmt *f, unsigned code)
{
    unsigned s = code >> 7, e = (code >> f->mbits) & ((1u << f->ebits) - 1),
             m = code & ((1u << f->mbits) - 1);
    double v;
    if (!f->ieee && (code & 0x7f) == 0x7f)
        return NAN;
    if (f->ieee && e == (1u << f->ebits) - 1)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = m * pow(2.0, 1 - f->bias) / (1 << f->mbits);
    else
        v = (1.0 + (double)m / (1 << f->mbits)) * pow(2.0, (int)e - f->bias);
    return s ? -v : v;
}

/* Nearest finite code by search; a tie goes to the even code (even mantissa); beyond the largest
 * finite magnitude (or infinite) saturates to it; NaN -> NaN. */
static bool ref_encode(const Fmt *f, double x, unsigned *out)
{
    if (isnan(x))
        return false; /* the caller checks NaN-ness */
    double ax = fabs(x), best_d = INFINITY;
    unsigned best = 0, maxc = 0;
    for (unsigned c = 0; c < 128; c++) {
        double v = ref_decode(f, c);
        if (!isfinite(v))
            continue;
        if (v > ref_decode(f, maxc))
            maxc = c;
        double d = fabs(v - ax);
        if (d < best_d || (d == best_d && (c & 1) == 0)) {
            best_d = d;
            best = c;
        }
    }
    if (ax >= ref_decode(f, maxc))
        best = maxc;
    *out = best | (signbit(x) ? 0x80u : 0);
    return true;
}

static void check_encode(const Fmt *f, double x)
{
    uint8_t got = fp8_from_double(x, f->t);
    unsigned want;
    if (!ref_encode(f, x, &want)) {
        CHECK(isnan(fp8_to_double(got, f->t)), "%s: NaN encodes to 0x%02x, not a NaN", f->name,
              got);
        return;
    }
    CHECK(got == want, "%s: %.17g encodes to 0x%02x, expected 0x%02x", f->name, x, got, want);
    /* The host helpers (tric.h) are the same rule, for inputs that are floats. */
    if ((double)(float)x == x) {
        uint8_t h = f->t == DT_F8E5 ? tric_f32_to_fp8e5((float)x) : tric_f32_to_fp8e4nv((float)x);
        CHECK(h == want, "%s: tric_f32_to_fp8(%.9g) = 0x%02x, expected 0x%02x", f->name, x, h,
              want);
    }
}

static void test_codec(const Fmt *f)
{
    for (unsigned c = 0; c < 256; c++) {
        double want = ref_decode(f, c), got = fp8_to_double((uint8_t)c, f->t);
        CHECK((isnan(want) && isnan(got)) || (want == got && signbit(want) == signbit(got)),
              "%s: 0x%02x decodes to %.17g, expected %.17g", f->name, c, got, want);
        float h = f->t == DT_F8E5 ? tric_fp8e5_to_f32((uint8_t)c) : tric_fp8e4nv_to_f32((uint8_t)c);
        CHECK((isnan(want) && isnan(h)) || want == (double)h, "%s: host decode of 0x%02x", f->name,
              c);
        /* Every non-NaN code round-trips (e5m2 inf saturates, as .satfinite does). */
        if (!isnan(want) && !isinf(want))
            CHECK(fp8_from_double(want, f->t) == c, "%s: 0x%02x does not round-trip", f->name, c);
        check_encode(f, want);
    }
    /* Midpoints between neighbours (ties to even) and their double and float neighbours. */
    for (unsigned c = 0; c < 127; c++) {
        double a = ref_decode(f, c), b = ref_decode(f, c + 1);
        if (!isfinite(a) || !isfinite(b))
            continue;
        double mid = (a + b) / 2;
        double probes[] = {mid, nextafter(mid, 0), nextafter(mid, INFINITY),
                           (double)nextafterf((float)mid, 0),
                           (double)nextafterf((float)mid, INFINITY)};
        for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
            check_encode(f, probes[i]);
            check_encode(f, -probes[i]);
        }
    }
    /* Known values, written out. */
    if (f->t == DT_F8E4NV) {
        CHECK(fp8_from_double(448, f->t) == 0x7e, "e4m3 448");
        CHECK(fp8_from_double(464, f->t) == 0x7e, "e4m3 464 (tie between 448 and 480) saturates");
        CHECK(fp8_from_double(1e9, f->t) == 0x7e, "e4m3 overflow saturates");
        CHECK(fp8_from_double(-INFINITY, f->t) == 0xfe, "e4m3 -inf saturates to -448");
        CHECK(fp8_from_double(NAN, f->t) == 0x7f, "e4m3 NaN is 0x7f");
        CHECK(fp8_from_double(0x1p-9, f->t) == 0x01, "e4m3 smallest subnormal");
        CHECK(fp8_from_double(0x1p-10, f->t) == 0x00, "e4m3 half the smallest subnormal ties to 0");
        CHECK(fp8_from_double(0x1.8p-10, f->t) == 0x01, "e4m3 above the tie");
        CHECK(fp8_from_double(-0.0, f->t) == 0x80, "e4m3 -0");
        CHECK(fp8_from_double(0x1.ep-7, f->t) == 0x08, "e4m3 rounding up to the smallest normal");
    } else {
        CHECK(fp8_from_double(57344, f->t) == 0x7b, "e5m2 57344");
        CHECK(fp8_from_double(INFINITY, f->t) == 0x7b, "e5m2 inf saturates");
        CHECK(fp8_from_double(-1e30, f->t) == 0xfb, "e5m2 overflow saturates");
        CHECK(isnan(fp8_to_double(0x7d, f->t)) && isinf(fp8_to_double(0x7c, f->t)),
              "e5m2 specials");
        CHECK(fp8_from_double(0x1p-16, f->t) == 0x01, "e5m2 smallest subnormal");
        CHECK(fp8_from_double(0x1p-17, f->t) == 0x00, "e5m2 tie to 0");
        CHECK(fp8_from_double(1.125, f->t) == 0x3c, "e5m2 1.125 ties to 1.0");
        CHECK(fp8_from_double(1.375, f->t) == 0x3e, "e5m2 1.375 ties to 1.5");
    }
    /* A sweep of floats over the whole range and beyond. */
    uint32_t seed = 12345;
    for (int i = 0; i < 20000; i++) {
        seed = seed * 1664525u + 1013904223u;
        double x = ldexp((double)(seed >> 8) / (1 << 24), (int)(seed % 60) - 30);
        check_encode(f, (double)(float)((seed & 1) ? -x : x));
    }
}

/* ---- 2. kernels on the interpreter --------------------------------------------------------- */

static IrFunc *compile(CompileResult *res, const char *src, const char *signature,
                       const char *block)
{
    Define d[] = {{"BLOCK", block}, {"M", "32"}, {"N", "32"}, {"K", "64"}};
    bool mm = strstr(src, "def mm(") != NULL; /* the matmul also takes M, N, K */
    Compiled c;
    bool ok = exec_compile(&c, "fp8.tri", src, NULL, signature, d, mm ? 4 : 1);
    *res = c.res;
    return ok ? c.ir : NULL;
}

static const char *convert_src = "import triton\n"
                                 "import triton.language as tl\n"
                                 "@triton.jit\n"
                                 "def convert(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):\n"
                                 "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                                 "    m = offs < n\n"
                                 "    x = tl.load(x_ptr + offs, mask=m)\n"
                                 "    y = x.to(y_ptr.dtype.element_ty)\n"
                                 "    tl.store(y_ptr + offs, y, mask=m)\n"
                                 "    tl.store(z_ptr + offs, y.to(tl.float32), mask=m)\n";

enum { NV = 4096 };

/* Inputs: every value of both fp8 formats, their midpoints, overflow, specials, a sweep. */
static int conversion_inputs(float *x)
{
    int n = 0;
    for (int fi = 0; fi < 2; fi++)
        for (unsigned c = 0; c < 256; c++) {
            double a = fp8_to_double((uint8_t)c, fmts[fi].t),
                   b = fp8_to_double((uint8_t)(c + 1), fmts[fi].t);
            x[n++] = (float)a;
            if (c != 127 && c != 255 && isfinite(a) && isfinite(b))
                x[n++] = (float)((a + b) / 2);
        }
    float specials[] = {INFINITY, -INFINITY, NAN,   1e10f, -1e10f,   449,       465,
                        480,      57344,     61440, 65504, 0x1p-20f, -0x1p-20f, 0x1p-126f};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        x[n++] = specials[i];
    uint32_t seed = 99;
    while (n < NV) {
        seed = seed * 1664525u + 1013904223u;
        x[n++] =
            ldexpf((float)(seed >> 8) / (1 << 24), (int)(seed % 40) - 20) * ((seed & 1) ? -1 : 1);
    }
    return n;
}

/* fp32/fp16/bf16 -> fp8 -> fp32, each element against the codec of part 1. */
static void test_convert_kernel(const char *src_sig, const Fmt *f)
{
    char sig[64];
    snprintf(sig, sizeof sig, "*%s,*fp8%s,*fp32,i32", src_sig, f->t == DT_F8E5 ? "e5" : "e4nv");
    CompileResult res;
    IrFunc *k = compile(&res, convert_src, sig, "256");
    if (!k)
        return;
    static float x[NV], z[NV];
    static uint16_t xh[NV];
    static uint8_t y[NV];
    int n = conversion_inputs(x);
    bool f16 = !strcmp(src_sig, "fp16"), bf16 = !strcmp(src_sig, "bf16");
    for (int i = 0; i < n; i++) {
        if (f16)
            xh[i] = tric_f32_to_f16(x[i]), x[i] = tric_f16_to_f32(xh[i]);
        if (bf16)
            xh[i] = tric_f32_to_bf16(x[i]), x[i] = tric_bf16_to_f32(xh[i]);
    }
    const void *in = f16 || bf16 ? (const void *)xh : (const void *)x;
    size_t inb = f16 || bf16 ? sizeof xh : sizeof x;
    memset(y, 0xa5, sizeof y);
    InterpArg args[] = {P(in), P(y), P(z), I(n)};
    InterpBuffer bufs[] = {B(in, inb), B(y, sizeof y), B(z, sizeof z)};
    if (run(k, NV / 256, args, 4, bufs, 3)) {
        int bad = 0;
        for (int i = 0; i < n && bad < 5; i++) {
            unsigned want;
            bool ok;
            if (!ref_encode(f, x[i], &want))
                ok = isnan(fp8_to_double(y[i], f->t)) && isnan(z[i]);
            else
                ok = y[i] == want && z[i] == (float)ref_decode(f, want);
            if (!ok) {
                bad++;
                CHECK(0, "%s -> %s: x[%d] = %.9g gave 0x%02x (%.9g), expected 0x%02x", src_sig,
                      f->name, i, x[i], y[i], z[i], want);
            }
        }
    }
    compile_result_free(&res);
}

static const char *recode_src =
    "import triton\n"
    "import triton.language as tl\n"
    "@triton.jit\n"
    "def recode(a_ptr, b_ptr, u_ptr, v_ptr, BLOCK: tl.constexpr):\n"
    "    offs = tl.arange(0, BLOCK)\n"
    "    a = tl.load(a_ptr + offs)\n"
    "    tl.store(b_ptr + offs, a.to(tl.float8e5))\n"
    "    u = a.to(tl.uint8, bitcast=True)\n"
    "    tl.store(u_ptr + offs, u)\n"
    "    tl.store(v_ptr + offs, (u ^ 0x80).to(tl.uint8).to(tl.float8e4nv, bitcast=True))\n"
    "    tl.store(v_ptr + BLOCK + offs, tl.load(a_ptr + BLOCK + offs, mask=offs < 8, other=1.5))\n";

/* e4m3 -> e5m2 (one rounding), bitcasts both ways, a masked load's other= as an fp8 constant. */
static void test_recode(void)
{
    CompileResult res;
    IrFunc *k = compile(&res, recode_src, "*fp8e4nv,*fp8e5,*u8,*fp8e4nv", "256");
    if (!k)
        return;
    uint8_t a[512], b[256], u[256], v[512];
    for (int i = 0; i < 512; i++)
        a[i] = (uint8_t)i;
    InterpArg args[] = {P(a), P(b), P(u), P(v)};
    InterpBuffer bufs[] = {B(a, sizeof a), B(b, sizeof b), B(u, sizeof u), B(v, sizeof v)};
    if (run(k, 1, args, 4, bufs, 4)) {
        for (int i = 0; i < 256; i++) {
            double x = fp8_to_double((uint8_t)i, DT_F8E4NV);
            unsigned want;
            if (ref_encode(&fmts[1], x, &want))
                CHECK(b[i] == want, "e4m3 0x%02x -> e5m2 0x%02x, expected 0x%02x", i, b[i], want);
            else
                CHECK(isnan(fp8_to_double(b[i], DT_F8E5)), "e4m3 NaN 0x%02x -> e5m2 0x%02x", i,
                      b[i]);
            CHECK(u[i] == i, "bitcast to uint8: 0x%02x gave 0x%02x", i, u[i]);
            CHECK(v[i] == (i ^ 0x80), "bitcast from uint8: 0x%02x gave 0x%02x", i ^ 0x80, v[i]);
            CHECK(v[256 + i] == (i < 8 ? i : 0x3c), "load other=1.5: [%d] = 0x%02x", i, v[256 + i]);
        }
    }
    compile_result_free(&res);
}

static const char *select_src =
    "import triton\n"
    "import triton.language as tl\n"
    "@triton.jit\n"
    "def sel(a_ptr, b_ptr, c_ptr, m_ptr, BLOCK: tl.constexpr):\n"
    "    o = tl.arange(0, BLOCK)\n"
    "    a = tl.load(a_ptr + o)\n"
    "    b = tl.load(b_ptr + o)\n"
    "    c = tl.load(c_ptr + o)\n"
    "    lt = a < b\n"
    "    tl.store(m_ptr + o, lt.to(tl.int8) + 2 * (a == c).to(tl.int8))\n"
    "    tl.store(c_ptr + BLOCK + o, tl.where(lt, a, c))\n";

/* Comparisons of two fp8 values (in fp16: exact; e4m3 with e5m2 too) and tl.where of one format
 * (the bytes move unchanged, NaNs included). */
static void test_select(void)
{
    CompileResult res;
    IrFunc *k = compile(&res, select_src, "*fp8e4nv,*fp8e5,*fp8e4nv,*i8", "256");
    if (!k)
        return;
    uint8_t a[256], b[256], c[512];
    int8_t m[256];
    for (int i = 0; i < 256; i++) {
        a[i] = (uint8_t)i;
        b[i] = (uint8_t)(i * 37 + 11);
        c[i] = (uint8_t)(i * 91 + 5);
    }
    InterpArg args[] = {P(a), P(b), P(c), P(m)};
    InterpBuffer bufs[] = {B(a, sizeof a), B(b, sizeof b), B(c, sizeof c), B(m, sizeof m)};
    if (run(k, 1, args, 4, bufs, 4)) {
        for (int i = 0; i < 256; i++) {
            double x = fp8_to_double(a[i], DT_F8E4NV), y = fp8_to_double(b[i], DT_F8E5);
            double z = fp8_to_double(c[i], DT_F8E4NV);
            int want = (x < y) + 2 * (x == z);
            CHECK(m[i] == want, "compare [%d]: %g < %g, %g == %g gave %d", i, x, y, x, z, m[i]);
            CHECK(c[256 + i] == (x < y ? a[i] : c[i]), "where [%d]: 0x%02x", i, c[256 + i]);
        }
    }
    compile_result_free(&res);
}

static const char *matmul_src = "import triton\n"
                                "import triton.language as tl\n"
                                "@triton.jit\n"
                                "def mm(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: "
                                "tl.constexpr, BLOCK: tl.constexpr):\n"
                                "    rm = tl.arange(0, M)\n"
                                "    rn = tl.arange(0, N)\n"
                                "    acc = tl.zeros((M, N), dtype=tl.float32)\n"
                                "    for k0 in range(0, K, BLOCK):\n"
                                "        rk = k0 + tl.arange(0, BLOCK)\n"
                                "        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])\n"
                                "        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])\n"
                                "        acc += tl.dot(a, b)\n"
                                "    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)\n";

enum { MM = 32, MN = 32, MK = 64 };

/* An fp8 matmul against C on the decoded inputs (products exact, sums in fp64 then compared
 * within a small relative bound: the interpreter sums in fp32). */
static void test_matmul(const char *ta, const char *tb)
{
    char sig[96];
    snprintf(sig, sizeof sig, "*%s,*%s,*fp32", ta, tb);
    CompileResult res;
    IrFunc *k = compile(&res, matmul_src, sig, "32");
    if (!k)
        return;
    DType da = !strcmp(ta, "fp8e5") ? DT_F8E5 : DT_F8E4NV,
          db = !strcmp(tb, "fp8e5") ? DT_F8E5 : DT_F8E4NV;
    static uint8_t a[MM * MK], b[MK * MN];
    static float c[MM * MN];
    uint32_t seed = 7;
    for (int i = 0; i < MM * MK; i++) {
        seed = seed * 1664525u + 1013904223u;
        a[i] = fp8_from_double(((int)(seed >> 16) % 200 - 100) / 16.0, da);
    }
    for (int i = 0; i < MK * MN; i++) {
        seed = seed * 1664525u + 1013904223u;
        b[i] = fp8_from_double(((int)(seed >> 16) % 200 - 100) / 32.0, db);
    }
    InterpArg args[] = {P(a), P(b), P(c)};
    InterpBuffer bufs[] = {B(a, sizeof a), B(b, sizeof b), B(c, sizeof c)};
    if (run(k, 1, args, 3, bufs, 3)) {
        int bad = 0;
        for (int i = 0; i < MM && bad < 5; i++)
            for (int j = 0; j < MN && bad < 5; j++) {
                double want = 0, mag = 0;
                for (int kk = 0; kk < MK; kk++) {
                    double p =
                        fp8_to_double(a[i * MK + kk], da) * fp8_to_double(b[kk * MN + j], db);
                    want += p;
                    mag += fabs(p);
                }
                double got = c[i * MN + j];
                if (fabs(got - want) > 1e-6 * mag + 1e-30) {
                    bad++;
                    CHECK(0, "mm %s x %s: c[%d][%d] = %.9g, expected %.9g", ta, tb, i, j, got,
                          want);
                }
            }
    }
    compile_result_free(&res);
}

int main(void)
{
    for (int i = 0; i < 2; i++)
        test_codec(&fmts[i]);
    for (int i = 0; i < 2; i++) {
        test_convert_kernel("fp32", &fmts[i]);
        test_convert_kernel("fp16", &fmts[i]);
        test_convert_kernel("bf16", &fmts[i]);
    }
    test_recode();
    test_select();
    test_matmul("fp8e4nv", "fp8e4nv");
    test_matmul("fp8e5", "fp8e5");
    test_matmul("fp8e4nv", "fp8e5");
    if (test_failures) {
        printf("%d failure(s)\n", test_failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
