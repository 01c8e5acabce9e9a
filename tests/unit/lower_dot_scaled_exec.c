/* lower_dot_scaled_exec.c: tl.dot_scaled, lowered by frontend/build_ir.c into upcasts, scale
 * multiplies and a dot, run on the interpreter against a C reference that decodes the formats
 * itself: e2m1 (two per byte, low nibble first), e4m3 (e4m3fn), e5m2, bf16 and fp16 elements,
 * e8m0 scales 2^(s - 127) per 32 elements of K, 0xFF as NaN (unless fast_math), None scales, e2m1
 * packed along M / N (lhs_k_pack / rhs_k_pack False), an acc, and tests/lit/codegen/mx_matmul.tri
 * (the tutorial-10 form: a K loop over several programs). The scaled values are exact in the
 * compute type (bf16, or fp16 when a format is fp16), so the products are exact and only the fp32
 * sum order differs. */
#include "exec_test.h"
#include "test_source.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the reference's decoders (OCP Microscaling Formats v1.0, section 5) --------------------- */

/* e2m1: sign, 2 exponent bits (bias 1), 1 mantissa bit; exponent 0 is subnormal (0 or 0.5). */
static double decode_e2m1(unsigned nibble)
{
    unsigned e = (nibble >> 1) & 3, m = nibble & 1;
    double v = e ? ldexp(1.0 + m / 2.0, (int)e - 1) : m * 0.5;
    return nibble & 8 ? -v : v;
}

/* A float of ebits exponent bits (bias) and mbits mantissa bits; e4m3fn has no infinities and
 * S.1111.111 is NaN; the others have IEEE specials. */
static double decode_float(unsigned code, int ebits, int mbits, int bias, bool fn)
{
    unsigned s = code >> (ebits + mbits), e = (code >> mbits) & ((1u << ebits) - 1),
             m = code & ((1u << mbits) - 1);
    double v;
    if (fn && e == (1u << ebits) - 1 && m == (1u << mbits) - 1)
        return NAN;
    if (!fn && e == (1u << ebits) - 1)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp((double)m, 1 - bias - mbits);
    else
        v = ldexp(1.0 + (double)m / (1 << mbits), (int)e - bias);
    return s ? -v : v;
}

typedef enum Fmt { E2M1, E4M3, E5M2, BF16, FP16 } Fmt;
static const char *const fmt_name[] = {"e2m1", "e4m3", "e5m2", "bf16", "fp16"};
/* the signature's element type the test passes each format as */
static const char *const fmt_sig[] = {"u8", "fp8e4nv", "u8", "bf16", "u16"};
static int fmt_bytes(Fmt f) { return f == BF16 || f == FP16 ? 2 : 1; }

static double decode(Fmt f, unsigned code)
{
    switch (f) {
    case E2M1: return decode_e2m1(code);
    case E4M3: return decode_float(code, 4, 3, 7, true);
    case E5M2: return decode_float(code, 5, 2, 15, false);
    case BF16: return decode_float(code, 8, 7, 127, false);
    case FP16: return decode_float(code, 5, 10, 15, false);
    }
    return NAN;
}

static double decode_e8m0(uint8_t s) { return s == 0xFF ? NAN : ldexp(1.0, (int)s - 127); }

static uint32_t seed = 2024;
static uint32_t rnd(void)
{
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
}

/* A random code of format f whose value is finite and at most 8 in magnitude (so that, scaled by
 * at most 2^3, it stays exact and finite in fp16 too). */
static unsigned random_code(Fmt f)
{
    for (;;) {
        unsigned c = f == E2M1 ? rnd() & 15 : fmt_bytes(f) == 1 ? rnd() & 0xFF : rnd() & 0xFFFF;
        if (f == BF16 || f == FP16) /* few mantissa bits, as an fp8 value has */
            c &= f == BF16 ? 0xFFF0 : 0xFF80;
        double v = decode(f, c);
        if (isfinite(v) && fabs(v) <= 8 && (v == 0 || fabs(v) >= 0x1p-6))
            return c;
    }
}

/* ---- one operand: logical values (rows x cols, row-major) and their packed bytes ------------ */

typedef struct Operand {
    Fmt fmt;
    int rows, cols;       /* logical: M x K for lhs, K x N for rhs */
    bool pack_rows;       /* e2m1 packed along rows (lhs without k_pack: M; rhs with k_pack: K) */
    unsigned code[16384]; /* logical codes */
    uint8_t bytes[32768]; /* what the kernel loads */
} Operand;

static void make_operand(Operand *o, Fmt f, int rows, int cols, bool pack_rows)
{
    o->fmt = f;
    o->rows = rows;
    o->cols = cols;
    o->pack_rows = pack_rows;
    memset(o->bytes, 0, sizeof o->bytes);
    for (int i = 0; i < rows * cols; i++)
        o->code[i] = random_code(f);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            unsigned code = o->code[r * cols + c];
            if (f == E2M1) {
                /* element (r, c) is nibble (index & 1) of byte index / 2 along the packed dim */
                int pr = pack_rows ? r / 2 : r, pc = pack_rows ? c : c / 2;
                int pcols = pack_rows ? cols : cols / 2, hi = pack_rows ? r & 1 : c & 1;
                o->bytes[pr * pcols + pc] |= (uint8_t)(code << (hi ? 4 : 0));
            } else if (fmt_bytes(f) == 1) {
                o->bytes[r * cols + c] = (uint8_t)code;
            } else {
                uint16_t h = (uint16_t)code;
                memcpy(o->bytes + 2 * (r * cols + c), &h, 2);
            }
        }
}

/* ---- the kernel: one program, Triton's test_scaled_dot form ------------------------------- */

/* %s: lhs format, rhs format; the packed tile shapes are the kernel's constexprs. */
static const char *kernel_fmt =
    "import triton\n"
    "import triton.language as tl\n"
    "@triton.jit\n"
    "def mx(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr, AR: tl.constexpr, AC: tl.constexpr,\n"
    "       BR: tl.constexpr, BC: tl.constexpr, SM: tl.constexpr, SN: tl.constexpr,\n"
    "       SK: tl.constexpr, M: tl.constexpr, N: tl.constexpr):\n"
    "    a = tl.load(a_ptr + tl.arange(0, AR)[:, None] * AC + tl.arange(0, AC)[None, :])\n"
    "    b = tl.load(b_ptr + tl.arange(0, BR)[:, None] * BC + tl.arange(0, BC)[None, :])\n"
    "    sa = tl.load(sa_ptr + tl.arange(0, SM)[:, None] * SK + tl.arange(0, SK)[None, :])\n"
    "    sb = tl.load(sb_ptr + tl.arange(0, SN)[:, None] * SK + tl.arange(0, SK)[None, :])\n"
    "    acc = tl.load(c_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])\n"
    "    c = tl.dot_scaled(a, %s, \"%s\", b, %s, \"%s\", %s, fast_math=%s, lhs_k_pack=%s,\n"
    "                      rhs_k_pack=%s)\n"
    "    tl.store(c_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], c)\n";

typedef struct Pair {
    Fmt a, b;
    bool a_scale, b_scale, use_acc, fast_math, a_k_pack, b_k_pack;
    bool nan_scale; /* one lhs scale is 0xFF */
} Pair;

enum { TM = 32, TN = 32, TK = 64 };

static void test_pair(const Pair *p)
{
    static Operand a, b;
    make_operand(&a, p->a, TM, TK, !p->a_k_pack);
    make_operand(&b, p->b, TK, TN, p->b_k_pack);
    static uint8_t sa[TM * TK / 32], sb[TN * TK / 32];
    for (size_t i = 0; i < sizeof sa; i++)
        sa[i] = (uint8_t)(124 + rnd() % 7); /* 2^-3 .. 2^3 */
    for (size_t i = 0; i < sizeof sb; i++)
        sb[i] = (uint8_t)(124 + rnd() % 7);
    if (p->nan_scale)
        sa[5] = 0xFF; /* row 2 (K/32 = 2 scales a row), second group */
    static float c[TM * TN];
    for (int i = 0; i < TM * TN; i++)
        c[i] = p->use_acc ? (float)((int)(rnd() % 9) - 4) : 0.0f;
    /* reference, from the logical codes */
    static double want[TM * TN], mag[TM * TN];
    for (int i = 0; i < TM; i++)
        for (int j = 0; j < TN; j++) {
            double s = c[i * TN + j], m = fabs(s);
            for (int k = 0; k < TK; k++) {
                double x = decode(p->a, a.code[i * TK + k]), y = decode(p->b, b.code[k * TN + j]);
                if (p->a_scale) {
                    uint8_t e = sa[i * (TK / 32) + k / 32];
                    x = e == 0xFF && p->fast_math ? x * INFINITY : x * decode_e8m0(e);
                }
                if (p->b_scale)
                    y *= decode_e8m0(sb[j * (TK / 32) + k / 32]);
                s += x * y;
                m += fabs(x * y);
            }
            want[i * TN + j] = s;
            mag[i * TN + j] = m;
        }
    /* the kernel, its tiles' packed shapes as constexprs */
    int ar = a.pack_rows && p->a == E2M1 ? TM / 2 : TM,
        ac = p->a == E2M1 && !a.pack_rows ? TK / 2 : TK;
    int br = b.pack_rows && p->b == E2M1 ? TK / 2 : TK,
        bc = p->b == E2M1 && !b.pack_rows ? TN / 2 : TN;
    char src[2048], sig[128];
    snprintf(src, sizeof src, kernel_fmt, p->a_scale ? "sa" : "None", fmt_name[p->a],
             p->b_scale ? "sb" : "None", fmt_name[p->b], p->use_acc ? "acc" : "None",
             p->fast_math ? "True" : "False", p->a_k_pack ? "True" : "False",
             p->b_k_pack ? "True" : "False");
    snprintf(sig, sizeof sig, "*%s,*u8,*%s,*u8,*fp32", fmt_sig[p->a], fmt_sig[p->b]);
    char d[9][24];
    int vals[9] = {ar, ac, br, bc, TM, TN, TK / 32, TM, TN};
    const char *names[9] = {"AR", "AC", "BR", "BC", "SM", "SN", "SK", "M", "N"};
    Define defs[9];
    for (int i = 0; i < 9; i++) {
        snprintf(d[i], sizeof d[i], "%d", vals[i]);
        defs[i] = (Define){names[i], d[i]};
    }
    char what[96];
    snprintf(what, sizeof what, "%s%s x %s%s%s%s%s%s", fmt_name[p->a],
             p->a_scale ? "" : "(no scale)", fmt_name[p->b], p->b_scale ? "" : "(no scale)",
             p->use_acc ? " +acc" : "", p->fast_math ? " fast_math" : "",
             p->a_k_pack ? "" : " lhs_k_pack=False", p->nan_scale ? " NaN scale" : "");
    Compiled k;
    if (!exec_compile(&k, "dot_scaled.tri", src, NULL, sig, defs, 9))
        return;
    CHECK(count_ops(&k.ir->body, OP_DOT) == 1, "%s: one dot", what);
    InterpArg args[] = {P(a.bytes), P(sa), P(b.bytes), P(sb), P(c)};
    InterpBuffer bufs[] = {B(a.bytes, sizeof a.bytes), B(sa, sizeof sa), B(b.bytes, sizeof b.bytes),
                           B(sb, sizeof sb), B(c, sizeof c)};
    if (run(k.ir, 1, args, 5, bufs, 5)) {
        int bad = 0;
        for (int i = 0; i < TM * TN && bad < 5; i++) {
            double got = c[i], w = want[i];
            /* a NaN or infinite sum (a 0xFF scale) is that, whatever the order */
            bool ok = isnan(w)   ? isnan(got)
                      : isinf(w) ? got == w
                                 : fabs(got - w) <= 1e-6 * mag[i] + 1e-30;
            if (!ok) {
                bad++;
                CHECK(0, "%s: c[%d][%d] = %.9g, expected %.9g", what, i / TN, i % TN, got, w);
            }
        }
    }
    compile_result_free(&k.res);
}

/* ---- mx_matmul.tri: the tutorial form, several programs, a K loop, masked edges ------------- */

enum { MMM = 40, MMN = 72, MMK = 128 };

static void test_mx_matmul(Fmt fa, Fmt fb)
{
    SrcFile file = test_load_source("tests/lit/codegen/mx_matmul.tri", "mx_matmul.tri");
    CHECK(file.text != NULL, "read mx_matmul.tri");
    if (!file.text)
        return;
    char *src = (char *)file.text;
    /* A is M x K, B is N x K: as operands A and B^T */
    static Operand a, bt;
    make_operand(&a, fa, MMM, MMK, false);
    make_operand(&bt, fb, MMN, MMK, false);
    static uint8_t sa[MMM * MMK / 32], sb[MMN * MMK / 32];
    for (size_t i = 0; i < sizeof sa; i++)
        sa[i] = (uint8_t)(122 + rnd() % 10);
    for (size_t i = 0; i < sizeof sb; i++)
        sb[i] = (uint8_t)(122 + rnd() % 10);
    static float c[MMM * MMN];
    char sig[128], fa_def[16], fb_def[16];
    snprintf(sig, sizeof sig, "*%s,*u8,*%s,*u8,*fp32,i32,i32,i32", fmt_sig[fa], fmt_sig[fb]);
    snprintf(fa_def, sizeof fa_def, "\"%s\"", fmt_name[fa]);
    snprintf(fb_def, sizeof fb_def, "\"%s\"", fmt_name[fb]);
    Define defs[] = {{"BLOCK_M", "32"},
                     {"BLOCK_N", "32"},
                     {"BLOCK_K", "64"},
                     {"A_FORMAT", fa_def},
                     {"B_FORMAT", fb_def}};
    Compiled k;
    if (!exec_compile(&k, "mx_matmul.tri", src, NULL, sig, defs, 5)) {
        free(src);
        return;
    }
    InterpArg args[] = {P(a.bytes), P(sa), P(bt.bytes), P(sb), P(c), I(MMM), I(MMN), I(MMK)};
    InterpBuffer bufs[] = {B(a.bytes, (size_t)MMM * MMK * fmt_bytes(fa)), B(sa, sizeof sa),
                           B(bt.bytes, (size_t)MMN * MMK * fmt_bytes(fb)), B(sb, sizeof sb),
                           B(c, sizeof c)};
    InterpLaunch l = {.grid = {(MMM + 31) / 32, (MMN + 31) / 32, 1},
                      .args = args,
                      .nargs = 8,
                      .buffers = bufs,
                      .nbuffers = 5};
    StrBuf err = {0};
    bool ok = interp_run(k.ir, &l, &err);
    CHECK(ok, "mx_matmul %s x %s: %s", fmt_name[fa], fmt_name[fb], err.data ? err.data : "");
    strbuf_free(&err);
    int bad = 0;
    for (int i = 0; ok && i < MMM && bad < 5; i++)
        for (int j = 0; j < MMN && bad < 5; j++) {
            double s = 0, m = 0;
            for (int kk = 0; kk < MMK; kk++) {
                double p =
                    decode(fa, a.code[i * MMK + kk]) * decode_e8m0(sa[i * (MMK / 32) + kk / 32]) *
                    decode(fb, bt.code[j * MMK + kk]) * decode_e8m0(sb[j * (MMK / 32) + kk / 32]);
                s += p;
                m += fabs(p);
            }
            if (fabs(c[i * MMN + j] - s) > 1e-6 * m + 1e-30) {
                bad++;
                CHECK(0, "mx_matmul %s x %s: c[%d][%d] = %.9g, expected %.9g", fmt_name[fa],
                      fmt_name[fb], i, j, c[i * MMN + j], s);
            }
        }
    compile_result_free(&k.res);
    free(src);
}

int main(void)
{
    const Pair pairs[] = {
        {E4M3, E4M3, true, true, false, false, true, true, false},
        {E5M2, E5M2, true, true, false, false, true, true, false},
        {E4M3, E5M2, true, true, true, false, true, true, false},
        {E2M1, E2M1, true, true, false, false, true, true, false},
        {E2M1, E4M3, true, true, false, false, true, true, false},
        {E5M2, E2M1, true, true, true, false, true, true, false},
        {BF16, E2M1, false, true, false, false, true, true, false},
        {E4M3, BF16, true, false, false, false, true, true, false},
        {FP16, E4M3, false, true, false, false, true, true, false}, /* computed in fp16 */
        {E2M1, FP16, true, false, true, false, true, true, false},
        {BF16, BF16, false, false, false, false, true, true, false},
        {E4M3, E2M1, false, false, false, false, true, true, false},
        {E2M1, E2M1, true, true, false, false, false, false, false}, /* packed along M and N */
        {E4M3, E4M3, true, true, false, false, true, true, true},    /* NaN scale */
        {E4M3, E4M3, true, true, false, true, true, true, true},     /* ... with fast_math */
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        test_pair(&pairs[i]);
    test_mx_matmul(E4M3, E4M3);
    test_mx_matmul(E2M1, E2M1);
    test_mx_matmul(E5M2, E2M1);
    if (test_failures) {
        printf("%d failure(s)\n", test_failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
