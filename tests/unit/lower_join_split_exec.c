/* lower_join_split_exec.c: tl.join, tl.split and tl.interleave compiled from .tri source by
 * driver_compile and run by the CPU interpreter against C references: a complex multiply of
 * interleaved (re, im) pairs with a masked tail (load [N, 2], split, compute, join, store), a
 * rotary embedding on the interleaved pairs of each row written back with interleave, re/im planes
 * swapped (pairs N apart), and the corner forms: a 3-D join and split of ints, a block joined with
 * a scalar, two scalars joined into a [2] block and a [2] block split into two scalars. Data are
 * small integers, so that every float result is exact. */
#include "driver/driver.h"
#include "exec_test.h"

#include <stdio.h>
#include <string.h>

#define HEADER "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"

/* out = x * y on complex numbers stored as (re, im) pairs; rows past n are left alone. */
static void test_complex_multiply(void)
{
    const char *src = HEADER "def cmul(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
                             "    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                             "    offs = rows[:, None] * 2 + tl.arange(0, 2)[None, :]\n"
                             "    mask = rows[:, None] < n\n"
                             "    x = tl.load(x_ptr + offs, mask=mask, other=0.0)\n"
                             "    y = tl.load(y_ptr + offs, mask=mask, other=0.0)\n"
                             "    xr, xi = tl.split(x)\n"
                             "    yr, yi = y.split()\n"
                             "    out = tl.join(xr * yr - xi * yi, xr * yi + xi * yr)\n"
                             "    tl.store(out_ptr + offs, out, mask=mask)\n";
    Compiled c;
    Define defs[] = {{"BLOCK", "64"}};
    if (!exec_compile(&c, "cmul.tri", src, NULL, "*fp32,*fp32,*fp32,i32", defs, 1))
        return;
    CHECK(count_ops(&c.ir->body, OP_SPLIT) == 4, "two splits per tl.split");
    CHECK(count_ops(&c.ir->body, OP_JOIN) == 1, "one join");
    enum { N = 300, G = 5 };
    static float x[G * 64 * 2], y[G * 64 * 2], out[G * 64 * 2];
    for (int i = 0; i < G * 64 * 2; i++) {
        x[i] = (float)((i * 7) % 23 - 11);
        y[i] = (float)((i * 5) % 19 - 9);
        out[i] = -1000.0f;
    }
    InterpArg args[] = {P(x), P(y), P(out), I(N)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(y, sizeof y), B(out, sizeof out)};
    if (!run(c.ir, G, args, 4, bufs, 3))
        return;
    for (int r = 0; r < G * 64; r++) {
        float re = x[2 * r] * y[2 * r] - x[2 * r + 1] * y[2 * r + 1];
        float im = x[2 * r] * y[2 * r + 1] + x[2 * r + 1] * y[2 * r];
        float want_re = r < N ? re : -1000.0f, want_im = r < N ? im : -1000.0f;
        CHECK(out[2 * r] == want_re && out[2 * r + 1] == want_im, "row %d: (%g, %g), want (%g, %g)",
              r, out[2 * r], out[2 * r + 1], want_re, want_im);
    }
    compile_result_free(&c.res);
}

/* Rotary embedding: (x[2i], x[2i+1]) of each row of D rotated by (cos, sin)[row, i], as
 * [BLOCK, D/2, 2] pairs, written back with interleave as rows of D. */
static void test_rotary(void)
{
    const char *src = HEADER
        "def rotary(x_ptr, cos_ptr, sin_ptr, out_ptr, seq, D: tl.constexpr, "
        "BLOCK: tl.constexpr):\n"
        "    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    half = tl.arange(0, D // 2)\n"
        "    pairs = rows[:, None, None] * D + half[None, :, None] * 2 + tl.arange(0, 2)[None, "
        "None, :]\n"
        "    x = tl.load(x_ptr + pairs, mask=rows[:, None, None] < seq, other=0.0)\n"
        "    x0, x1 = tl.split(x)\n"
        "    cs = rows[:, None] * (D // 2) + half[None, :]\n"
        "    c = tl.load(cos_ptr + cs, mask=rows[:, None] < seq, other=0.0)\n"
        "    s = tl.load(sin_ptr + cs, mask=rows[:, None] < seq, other=0.0)\n"
        "    out = tl.interleave(x0 * c - x1 * s, x0 * s + x1 * c)\n"
        "    flat = rows[:, None] * D + tl.arange(0, D)[None, :]\n"
        "    tl.store(out_ptr + flat, out, mask=rows[:, None] < seq)\n";
    Compiled c;
    Define defs[] = {{"D", "16"}, {"BLOCK", "8"}};
    if (!exec_compile(&c, "rotary.tri", src, NULL, "*fp32,*fp32,*fp32,*fp32,i32", defs, 2))
        return;
    CHECK(count_ops(&c.ir->body, OP_RESHAPE) == 1, "interleave is a join and one reshape");
    enum { SEQ = 20, G = 3, D = 16 };
    static float x[G * 8 * D], cs[G * 8 * D / 2], sn[G * 8 * D / 2], out[G * 8 * D];
    for (int i = 0; i < G * 8 * D; i++) {
        x[i] = (float)(i % 13 - 6);
        out[i] = 99.0f;
    }
    for (int i = 0; i < G * 8 * D / 2; i++) {
        cs[i] = (float)(i % 3 - 1);
        sn[i] = (float)(i % 5 - 2);
    }
    InterpArg args[] = {P(x), P(cs), P(sn), P(out), I(SEQ)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(cs, sizeof cs), B(sn, sizeof sn), B(out, sizeof out)};
    if (!run(c.ir, G, args, 5, bufs, 4))
        return;
    for (int r = 0; r < G * 8; r++)
        for (int i = 0; i < D / 2; i++) {
            float x0 = x[r * D + 2 * i], x1 = x[r * D + 2 * i + 1];
            float co = cs[r * D / 2 + i], si = sn[r * D / 2 + i];
            float w0 = r < SEQ ? x0 * co - x1 * si : 99.0f;
            float w1 = r < SEQ ? x0 * si + x1 * co : 99.0f;
            CHECK(out[r * D + 2 * i] == w0 && out[r * D + 2 * i + 1] == w1,
                  "row %d pair %d: (%g, %g), want (%g, %g)", r, i, out[r * D + 2 * i],
                  out[r * D + 2 * i + 1], w0, w1);
        }
    compile_result_free(&c.res);
}

/* re and im planes [2, N]: each pair's halves are N apart; the kernel swaps the planes. */
static void test_planes(void)
{
    const char *src = HEADER "def planar(x_ptr, out_ptr, N: tl.constexpr):\n"
                             "    offs = tl.arange(0, 2)[None, :] * N + tl.arange(0, N)[:, None]\n"
                             "    re, im = tl.split(tl.load(x_ptr + offs))\n"
                             "    tl.store(out_ptr + offs, tl.join(im, re))\n";
    Compiled c;
    Define defs[] = {{"N", "128"}};
    if (!exec_compile(&c, "planar.tri", src, NULL, "*i32,*i32", defs, 1))
        return;
    static int32_t x[256], out[256];
    for (int i = 0; i < 256; i++)
        x[i] = i * 3 + 1;
    InterpArg args[] = {P(x), P(out)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(out, sizeof out)};
    if (!run(c.ir, 1, args, 2, bufs, 2))
        return;
    for (int i = 0; i < 128; i++)
        CHECK(out[i] == x[128 + i] && out[128 + i] == x[i], "column %d: (%d, %d), want (%d, %d)", i,
              out[i], out[128 + i], x[128 + i], x[i]);
    compile_result_free(&c.res);
}

/* A 3-D join and split of ints, a block joined with a scalar (broadcast), two scalars joined and
 * split, and interleave of two scalars (a [2] block). */
static void test_corner_forms(void)
{
    const char *src =
        HEADER "def pairs(x_ptr, out_ptr, i_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):\n"
               "    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]\n"
               "    v = tl.load(i_ptr + offs)\n"
               "    lo, hi = tl.split(tl.join(v, v + 1))\n"
               "    w = tl.join(lo * 10 + hi, 7)\n"
               "    tl.store(o_ptr + offs[:, :, None] * 2 + tl.arange(0, 2)[None, None, :], w)\n"
               "    a = tl.load(x_ptr)\n"
               "    b = tl.load(x_ptr + 1)\n"
               "    p, q = tl.split(tl.join(a * 2.0, b))\n"
               "    tl.store(out_ptr + tl.arange(0, 2), tl.interleave(q, p))\n"
               "    tl.store(out_ptr + 2 + tl.arange(0, 2), tl.join(p, -q))\n";
    Compiled c;
    Define defs[] = {{"M", "4"}, {"N", "8"}};
    if (!exec_compile(&c, "pairs.tri", src, NULL, "*fp32,*fp32,*i32,*i32", defs, 2))
        return;
    static int32_t iv[32], ov[64];
    static float xs[2] = {1.5f, -4.0f}, os[4];
    for (int i = 0; i < 32; i++)
        iv[i] = i * i - 40;
    InterpArg args[] = {P(xs), P(os), P(iv), P(ov)};
    InterpBuffer bufs[] = {B(xs, sizeof xs), B(os, sizeof os), B(iv, sizeof iv), B(ov, sizeof ov)};
    if (!run(c.ir, 1, args, 4, bufs, 4))
        return;
    for (int i = 0; i < 32; i++)
        CHECK(ov[2 * i] == iv[i] * 10 + iv[i] + 1 && ov[2 * i + 1] == 7, "pair %d: (%d, %d)", i,
              ov[2 * i], ov[2 * i + 1]);
    CHECK(os[0] == -4.0f && os[1] == 3.0f && os[2] == 3.0f && os[3] == 4.0f,
          "scalars: %g %g %g %g, want -4 3 3 4", os[0], os[1], os[2], os[3]);
    compile_result_free(&c.res);
}

int main(void)
{
    test_complex_multiply();
    test_rotary();
    test_planes();
    test_corner_forms();
    if (test_failures) {
        printf("%d test_failures\n", test_failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
