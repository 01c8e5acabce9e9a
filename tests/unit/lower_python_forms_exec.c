/* lower_python_forms_exec.c: Python forms of real kernels, compiled from .tri source by
 * driver_compile and run by the CPU interpreter against C: `kernel = triton.jit(kernel_impl)`
 * applied by call (the kernel takes the assignment's name, and a helper made that way is
 * inlined); integer <-> pointer casts (a table of int64 addresses gathered through, pointers
 * written as int64, a pointer to int1 and to a pointer of another element size); constexpr
 * functions (@triton.constexpr_function) choosing a kernel's block and scale; block pointers and tensor descriptors. */
#include "driver/driver.h"
#include "exec_test.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool compile(Compiled *c, const char *src, const char *kernel, const char *signature,
                    const Define *defs, int ndefs)
{
    return exec_compile(c, "forms.tri", src, kernel, signature, defs, ndefs);
}

/* The kernel and its helper are made by calling triton.jit; the kernel is found without
 * --kernel (the helper is called, so it is no kernel) and named after the assignment. */
static void check_jit_by_call(void)
{
    const char *src = "import triton\n"
                      "import triton.language as tl\n"
                      "from triton import jit\n"
                      "\n"
                      "def scale_impl(x, factor):\n"
                      "    return x * factor + 1.0\n"
                      "\n"
                      "def kernel_impl(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
                      "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                      "    mask = offs < n\n"
                      "    x = tl.load(x_ptr + offs, mask=mask)\n"
                      "    tl.store(y_ptr + offs, scale(x, 3.0), mask=mask)\n"
                      "\n"
                      "scale = jit(scale_impl)\n"
                      "kernel = triton.jit(kernel_impl, do_not_specialize=['n'])\n";
    Define d = {"BLOCK", "32"};
    Compiled c;
    if (!compile(&c, src, NULL, "*fp32,*fp32,i32", &d, 1))
        return;
    CHECK(!strcmp(c.ir->name, "kernel"), "the kernel is named '%s', not 'kernel'", c.ir->name);
    enum { N = 100 };
    float x[N], y[N + 4];
    for (int i = 0; i < N; i++)
        x[i] = (float)i * 0.25f - 7.0f;
    for (int i = 0; i < N + 4; i++)
        y[i] = -1.0f;
    InterpArg args[] = {P(x), P(y), I(N)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(y, sizeof y)};
    if (run(c.ir, (N + 31) / 32, args, 3, bufs, 2)) {
        for (int i = 0; i < N; i++)
            CHECK(y[i] == x[i] * 3.0f + 1.0f, "jit by call %d: %g", i, y[i]);
        for (int i = N; i < N + 4; i++)
            CHECK(y[i] == -1.0f, "jit by call wrote past n at %d", i);
    }
    compile_result_free(&c.res);
}

/* The kernel of tests/lit/codegen/pointer_casts.tri, run: the addresses are the host's own. */
static void check_pointer_casts(void)
{
    const char *src =
        "import triton\n"
        "import triton.language as tl\n"
        "\n"
        "@triton.jit\n"
        "def pointer_casts(x_ptr: '*fp32', table_ptr: '*i64', addr_ptr: '*i64', y_ptr: '*fp32',\n"
        "                  flag_ptr: '*i32', h_ptr: '*fp16', BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    addr = (x_ptr + offs).to(tl.int64)\n"
        "    tl.store(addr_ptr + offs, addr)\n"
        "    src = tl.load(table_ptr + offs).to(tl.pointer_type(tl.float32))\n"
        "    base = y_ptr.to(tl.int64)\n"
        "    out = base.to(tl.pointer_type(tl.float32))\n"
        "    tl.store(out + offs, tl.load(src) + 1.0)\n"
        "    nonnull = x_ptr.to(tl.int1)\n"
        "    tl.store(flag_ptr, nonnull.to(tl.int32))\n"
        "    halves = (x_ptr + offs).to(tl.pointer_type(tl.float16))\n"
        "    tl.store(h_ptr + offs, tl.load(halves))\n";
    enum { BLOCK = 16 };
    Define d = {"BLOCK", "16"};
    Compiled c;
    if (!compile(&c, src, NULL, NULL, &d, 1))
        return;
    float x[BLOCK], y[BLOCK];
    int64_t table[BLOCK], addr[BLOCK];
    int32_t flag = -1;
    uint16_t h[BLOCK];
    for (int i = 0; i < BLOCK; i++) {
        x[i] = 1.5f * (float)i - 4.0f;
        table[i] = (int64_t)(uintptr_t)&x[(i * 5 + 3) % BLOCK]; /* a permutation */
    }
    InterpArg args[] = {P(x), P(table), P(addr), P(y), P(&flag), P(h)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(table, sizeof table), B(addr, sizeof addr),
                           B(y, sizeof y), B(&flag, sizeof flag),  B(h, sizeof h)};
    if (run(c.ir, 1, args, 6, bufs, 6)) {
        for (int i = 0; i < BLOCK; i++) {
            CHECK(addr[i] == (int64_t)(uintptr_t)&x[i], "ptr->int64 %d: %lld", i,
                  (long long)addr[i]);
            CHECK(y[i] == x[(i * 5 + 3) % BLOCK] + 1.0f, "int64->ptr gather %d: %g", i, y[i]);
            uint32_t bits;
            memcpy(&bits, &x[i], 4);
            /* *fp16 at x + 4i: the low half of x[i] (little endian) */
            CHECK(h[i] == (uint16_t)bits, "ptr->ptr %d: %04x", i, h[i]);
        }
        CHECK(flag == 1, "ptr->int1: %d", flag);
    }
    compile_result_free(&c.res);
}

/* A constexpr function picks the block (a power of two >= n, as real kernels size a row); the
 * kernel covers n elements in one program and scales them by another's result. */
static void check_constexpr_function(void)
{
    const char *src = "import triton\n"
                      "import triton.language as tl\n"
                      "\n"
                      "@triton.constexpr_function\n"
                      "def row_block(n):\n"
                      "    b = 1 << (n - 1).bit_length()\n"
                      "    if b < 16:\n"
                      "        return 16\n"
                      "    return b\n"
                      "\n"
                      "@tl.constexpr_function\n"
                      "def scale(block, n):\n"
                      "    return block / n if n > 0 else 0.0\n"
                      "\n"
                      "@triton.jit\n"
                      "def kernel(x_ptr: '*fp32', y_ptr: '*fp32', N: tl.constexpr):\n"
                      "    BLOCK: tl.constexpr = row_block(N)\n"
                      "    offs = tl.arange(0, BLOCK)\n"
                      "    x = tl.load(x_ptr + offs, mask=offs < N, other=0.0)\n"
                      "    tl.store(y_ptr + offs, x * scale(BLOCK, N), mask=offs < N)\n";
    Define d = {"N", "100"};
    Compiled c;
    if (!compile(&c, src, NULL, NULL, &d, 1))
        return;
    enum { N = 100 };
    float x[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)i - 50.0f;
        y[i] = 0.0f;
    }
    InterpArg args[] = {P(x), P(y)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(y, sizeof y)};
    if (run(c.ir, 1, args, 2, bufs, 2))
        for (int i = 0; i < N; i++)
            CHECK(y[i] == x[i] * (float)(128.0 / 100.0), "constexpr function %d: %g", i, y[i]);
    compile_result_free(&c.res);
}

/* Block pointers (tl.make_block_ptr, tl.advance, boundary_check, padding_option): a matmul
 * whose tiles run past every edge (sizes no block divides, B column-major), and a copy that pads
 * with NaN and stores only inside the tensor. */
static const char *block_ptr_src =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.jit\n"
    "def bp_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,\n"
    "              stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,\n"
    "              BLOCK_K: tl.constexpr):\n"
    "    pid = tl.program_id(0)\n"
    "    num_n = tl.cdiv(N, BLOCK_N)\n"
    "    pid_m = pid // num_n\n"
    "    pid_n = pid % num_n\n"
    "    a_bp = tl.make_block_ptr(base=a_ptr, shape=(M, K), strides=(stride_am, stride_ak),\n"
    "                             offsets=(pid_m * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_K),\n"
    "                             order=(1, 0))\n"
    "    b_bp = tl.make_block_ptr(b_ptr, (K, N), (stride_bk, stride_bn), (0, pid_n * BLOCK_N),\n"
    "                             (BLOCK_K, BLOCK_N), (0, 1))\n"
    "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n"
    "    for k in range(0, K, BLOCK_K):\n"
    "        a = tl.load(a_bp, boundary_check=(0, 1))\n"
    "        b = tl.load(b_bp, boundary_check=(1, 0), padding_option='zero')\n"
    "        acc += tl.dot(a, b, input_precision='ieee')\n"
    "        a_bp = tl.advance(a_bp, (0, BLOCK_K))\n"
    "        b_bp = tl.advance(b_bp, [BLOCK_K, 0])\n"
    "    c_bp = tl.make_block_ptr(base=c_ptr, shape=(M, N), strides=(stride_cm, stride_cn),\n"
    "                             offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N),\n"
    "                             block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))\n"
    "    tl.store(c_bp, acc, boundary_check=(0, 1))\n"
    "\n"
    "@triton.jit\n"
    "def bp_pad(x_ptr, y_ptr, R, C, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):\n"
    "    x_bp = tl.make_block_ptr(x_ptr, (R, C), (C, 1), (-1, 0), (BLOCK_R, BLOCK_C), (1, 0))\n"
    "    x = tl.load(x_bp, boundary_check=(0, 1), padding_option='nan')\n"
    "    y_bp = tl.make_block_ptr(y_ptr, (BLOCK_R, BLOCK_C), (BLOCK_C, 1), (0, 0),\n"
    "                             (BLOCK_R, BLOCK_C), (1, 0))\n"
    "    tl.store(y_bp, x)\n"
    "    tl.store(tl.advance(x_bp, (1, 0)), x + 100.0, boundary_check=(0, 1))\n";

static void check_block_pointers(void)
{
    Define d[3] = {{"BLOCK_M", "16"}, {"BLOCK_N", "16"}, {"BLOCK_K", "16"}};
    Compiled c;
    if (compile(&c, block_ptr_src, "bp_matmul",
                "*fp32,*fp32,*fp32,i32,i32,i32,i32,i32,i32,i32,i32,i32", d, 3)) {
        enum { M = 37, N = 45, K = 70 };
        static float a[M * K], b[K * N], cm[M * N + 8];
        for (int i = 0; i < M * K; i++)
            a[i] = (float)((i * 7) % 13) - 6.0f;
        for (int i = 0; i < K * N; i++) /* column-major: b[k + n*K] */
            b[i] = (float)((i * 5) % 11) * 0.5f - 2.0f;
        for (int i = 0; i < M * N + 8; i++)
            cm[i] = -99.0f;
        InterpArg args[] = {P(a), P(b), P(cm), I(M), I(N), I(K),
                            I(K), I(1), I(1),  I(K), I(N), I(1)};
        InterpBuffer bufs[] = {B(a, sizeof a), B(b, sizeof b), B(cm, sizeof cm)};
        if (run(c.ir, ((M + 15) / 16) * ((N + 15) / 16), args, 12, bufs, 3)) {
            int bad = 0;
            for (int m = 0; m < M; m++)
                for (int n = 0; n < N; n++) {
                    double ref = 0;
                    for (int k = 0; k < K; k++)
                        ref += (double)a[m * K + k] * b[k + n * K];
                    if (cm[m * N + n] != (float)ref && bad++ < 5)
                        CHECK(0, "block-pointer matmul [%d, %d]: %g, want %g", m, n, cm[m * N + n],
                              ref);
                }
            for (int i = M * N; i < M * N + 8; i++)
                CHECK(cm[i] == -99.0f, "block-pointer store wrote past the tensor at %d", i);
        }
        compile_result_free(&c.res);
    }
    Define dp[2] = {{"BLOCK_R", "8"}, {"BLOCK_C", "8"}};
    if (compile(&c, block_ptr_src, "bp_pad", "*fp32,*fp32,i32,i32", dp, 2)) {
        enum { R = 5, C = 6 };
        float x[R * C + 4], y[64];
        for (int i = 0; i < R * C + 4; i++)
            x[i] = i < R * C ? (float)i : -7.0f;
        InterpArg args[] = {P(x), P(y), I(R), I(C)};
        InterpBuffer bufs[] = {B(x, sizeof x), B(y, sizeof y)};
        if (run(c.ir, 1, args, 4, bufs, 2)) {
            for (int r = 0; r < 8; r++)
                for (int col = 0; col < 8; col++) {
                    int row = r - 1; /* offsets (-1, 0): row -1 is outside */
                    bool inside = row >= 0 && row < R && col < C;
                    float got = y[r * 8 + col];
                    if (inside)
                        CHECK(got == (float)(row * C + col), "bp_pad [%d, %d]: %g", r, col, got);
                    else
                        CHECK(got != got, "bp_pad [%d, %d]: %g, want NaN padding", r, col, got);
                }
            /* The store at offsets (0, 0) wrote x + 100 (block row r holds row r - 1) inside. */
            for (int row = 0; row < R; row++)
                for (int col = 0; col < C; col++) {
                    float want = row == 0 ? NAN : (float)((row - 1) * C + col) + 100.0f;
                    float got = x[row * C + col];
                    CHECK(row == 0 ? got != got : got == want, "bp_pad store [%d, %d]: %g", row,
                          col, got);
                }
            for (int i = R * C; i < R * C + 4; i++)
                CHECK(x[i] == -7.0f, "bp_pad stored past the tensor at %d: %g", i, x[i]);
        }
        compile_result_free(&c.res);
    }
}

/* c (M x N, then 8 sentinels of -99) against the double-precision product of a (M x K, row
 * stride lda) and b (K x N): exact, as the products and sums of these small values are. */
/* The descriptor matmuls' inputs: small exact values in A (na floats) and B (nb), C (nc, tail
 * included) poisoned with -99. */
static void matmul_inputs(float *a, int na, float *b, int nb, float *cm, int nc)
{
    for (int i = 0; i < na; i++)
        a[i] = (float)((i * 3) % 7) - 3.0f;
    for (int i = 0; i < nb; i++)
        b[i] = (float)((i * 5) % 9) * 0.25f - 1.0f;
    for (int i = 0; i < nc; i++)
        cm[i] = -99.0f;
}

static void check_matmul(const char *what, const float *a, int lda, const float *b, const float *c,
                         int M, int N, int K)
{
    int bad = 0;
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double ref = 0;
            for (int k = 0; k < K; k++)
                ref += (double)a[m * lda + k] * b[k * N + n];
            if (c[m * N + n] != (float)ref && bad++ < 5)
                CHECK(0, "%s [%d, %d]: %g, want %g", what, m, n, c[m * N + n], ref);
        }
    for (int i = M * N; i < M * N + 8; i++)
        CHECK(c[i] == -99.0f, "%s stored past the tensor at %d", what, i);
}

/* Tensor descriptors as tutorial 06 makes them (a helper returning the parameter when it already
 * is a descriptor, isinstance folded at compile time), desc.load / desc.store with every dim
 * bounds-checked, tl.range's warp_specialize hint accepted: a matmul at sizes no block divides. */
static void check_tensor_descriptors(void)
{
    const char *src =
        "import triton\n"
        "import triton.language as tl\n"
        "\n"
        "@triton.jit\n"
        "def _maybe_make_tensor_desc(desc_or_ptr, shape, strides, block_shape):\n"
        "    if isinstance(desc_or_ptr, tl.tensor_descriptor):\n"
        "        return desc_or_ptr\n"
        "    else:\n"
        "        return tl.make_tensor_descriptor(desc_or_ptr, shape, strides, block_shape)\n"
        "\n"
        "@triton.jit\n"
        "def td_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: "
        "tl.constexpr,\n"
        "              BLOCK_K: tl.constexpr):\n"
        "    pid = tl.program_id(0)\n"
        "    num_n = tl.cdiv(N, BLOCK_N)\n"
        "    off_m = (pid // num_n) * BLOCK_M\n"
        "    off_n = (pid % num_n) * BLOCK_N\n"
        "    a_desc = _maybe_make_tensor_desc(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])\n"
        "    b_desc = _maybe_make_tensor_desc(b_ptr, shape=[K, N], strides=[N, 1],\n"
        "                                     block_shape=[BLOCK_K, BLOCK_N])\n"
        "    b_desc = _maybe_make_tensor_desc(b_desc, [K, N], [N, 1], [BLOCK_K, BLOCK_N])\n"
        "    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])\n"
        "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n"
        "    for k in tl.range(0, K, BLOCK_K, warp_specialize=True):\n"
        "        a = a_desc.load([off_m, k])\n"
        "        b = tl.load_tensor_descriptor(b_desc, [k, off_n])\n"
        "        acc = tl.dot(a, b, acc, input_precision='ieee')\n"
        "    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))\n";
    Define d[3] = {{"BLOCK_M", "16"}, {"BLOCK_N", "16"}, {"BLOCK_K", "16"}};
    Compiled c;
    if (!compile(&c, src, "td_matmul", "*fp32,*fp32,*fp32,i32,i32,i32", d, 3))
        return;
    enum { M = 29, N = 35, K = 41 };
    static float a[M * K], b[K * N], cm[M * N + 8];
    matmul_inputs(a, M * K, b, K * N, cm, M * N + 8);
    InterpArg args[] = {P(a), P(b), P(cm), I(M), I(N), I(K)};
    InterpBuffer bufs[] = {B(a, sizeof a), B(b, sizeof b), B(cm, sizeof cm)};
    if (run(c.ir, ((M + 15) / 16) * ((N + 15) / 16), args, 6, bufs, 3))
        check_matmul("descriptor matmul", a, K, b, cm, M, N, K);
    compile_result_free(&c.res);
}

/* Host tensor descriptors (tutorials 06 and 09 pass TensorDescriptor objects; the signature
 * entry is Triton's "tensordesc<fp32[16, 16]>"): each is launched as its base pointer, i32
 * shapes and i64 strides (the last one equal to 1, never read), and the kernel sees what
 * tl.make_tensor_descriptor would make of them. A matmul whose A is a column window of a wider
 * matrix (row stride 50, not K) at sizes no block divides, every dim bounds-checked. */
static void check_host_tensor_descriptors(void)
{
    const char *src =
        "import triton\n"
        "import triton.language as tl\n"
        "\n"
        "@triton.jit\n"
        "def _maybe_make_tensor_desc(desc_or_ptr, shape, strides, block_shape):\n"
        "    if isinstance(desc_or_ptr, tl.tensor_descriptor):\n"
        "        return desc_or_ptr\n"
        "    else:\n"
        "        return tl.make_tensor_descriptor(desc_or_ptr, shape, strides, block_shape)\n"
        "\n"
        "@triton.jit\n"
        "def td_host(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr,\n"
        "            BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):\n"
        "    pid = tl.program_id(0)\n"
        "    num_n = tl.cdiv(N, BLOCK_N)\n"
        "    off_m = (pid // num_n) * BLOCK_M\n"
        "    off_n = (pid % num_n) * BLOCK_N\n"
        "    a_desc = _maybe_make_tensor_desc(a_desc, [M, K], [K, 1], [BLOCK_M, BLOCK_K])\n"
        "    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)\n"
        "    for k in range(0, K, BLOCK_K):\n"
        "        a = a_desc.load([off_m, k])\n"
        "        b = b_desc.load([k, off_n])\n"
        "        acc = tl.dot(a, b, acc, input_precision='ieee')\n"
        "    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))\n";
    Define d[3] = {{"BLOCK_M", "16"}, {"BLOCK_N", "16"}, {"BLOCK_K", "16"}};
    Compiled c;
    if (!compile(&c, src, "td_host",
                 "tensordesc<fp32[16, 16]>, tensordesc<fp32[16, 16]>, tensordesc<fp32[16, 16]>, "
                 "i32, i32, i32",
                 d, 3))
        return;
    enum { M = 29, N = 35, K = 41, LDA = 50 };
    static float a[M * LDA], b[K * N], cm[M * N + 8];
    matmul_inputs(a, M * LDA, b, K * N, cm, M * N + 8);
    /* each descriptor: base, shape0, shape1, stride0, stride1 (1, unread: pass a wrong one) */
    InterpArg args[] = {P(a), I(M),  I(K), I(LDA), I(7), P(b), I(K), I(N), I(N),
                        I(7), P(cm), I(M), I(N),   I(N), I(7), I(M), I(N), I(K)};
    InterpBuffer bufs[] = {B(a, sizeof a), B(b, sizeof b), B(cm, sizeof cm)};
    CHECK(c.ir->nparams == 18, "td_host has %d parameters, want 18", c.ir->nparams);
    if (run(c.ir, ((M + 15) / 16) * ((N + 15) / 16), args, 18, bufs, 3))
        check_matmul("host descriptor matmul", a, LDA, b, cm, M, N, K);
    compile_result_free(&c.res);
}

/* Five-dimensional blocks, as tutorial 10 reads its block scales: packed (A, B, 32, 4, 4) scale
 * factors loaded either as 2-D rows reshaped to 5-D, or through 5-D offsets (`[:, None, None, None,
 * None]`), then permuted with x.trans(0, 3, 2, 1, 4) and reshaped to the (A*128, B*4) layout
 * tl.dot_scaled takes. out[(a*4 + d)*32 + c][b*4 + e] = in[a][b][c][d][e]. */
static void check_rank5_scale_layout(void)
{
    const char *src =
        "import triton\n"
        "import triton.language as tl\n"
        "\n"
        "@triton.jit\n"
        "def scale_layout(s_ptr, o_ptr, USE_2D: tl.constexpr):\n"
        "    if USE_2D:\n"
        "        offs = tl.arange(0, 2)[:, None] * 1024 + tl.arange(0, 1024)[None, :]\n"
        "        s = tl.load(s_ptr + offs)\n"
        "        s = s.reshape(2, 2, 32, 4, 4)\n"
        "    else:\n"
        "        a = tl.arange(0, 2)\n"
        "        c = tl.arange(0, 32)\n"
        "        d = tl.arange(0, 4)\n"
        "        offs = (a[:, None, None, None, None] * 1024 + a[None, :, None, None, None] * 512 "
        "+\n"
        "                c[None, None, :, None, None] * 16 + d[None, None, None, :, None] * 4 +\n"
        "                d[None, None, None, None, :])\n"
        "        s = tl.load(s_ptr + offs) + 0\n"
        "    s = s.trans(0, 3, 2, 1, 4).reshape(256, 8)\n"
        "    o = tl.arange(0, 256)[:, None] * 8 + tl.arange(0, 8)[None, :]\n"
        "    tl.store(o_ptr + o, s)\n";
    static int32_t in[2 * 2 * 32 * 4 * 4], out[256 * 8];
    for (int i = 0; i < 2048; i++)
        in[i] = i * 7 + 3;
    for (int use_2d = 0; use_2d < 2; use_2d++) {
        Define d[1] = {{"USE_2D", use_2d ? "True" : "False"}};
        Compiled c;
        if (!compile(&c, src, "scale_layout", "*i32,*i32", d, 1))
            return;
        memset(out, 0, sizeof out);
        InterpArg args[] = {P(in), P(out)};
        InterpBuffer bufs[] = {B(in, sizeof in), B(out, sizeof out)};
        if (run(c.ir, 1, args, 2, bufs, 2)) {
            int bad = 0;
            for (int a = 0; a < 2; a++)
                for (int b = 0; b < 2; b++)
                    for (int cc = 0; cc < 32; cc++)
                        for (int dd = 0; dd < 4; dd++)
                            for (int e = 0; e < 4; e++) {
                                int32_t want = in[(((a * 2 + b) * 32 + cc) * 4 + dd) * 4 + e];
                                int32_t got = out[((a * 4 + dd) * 32 + cc) * 8 + b * 4 + e];
                                if (got != want && bad++ < 5)
                                    CHECK(0,
                                          "rank-5 scale layout (USE_2D=%d) [%d,%d,%d,%d,%d]: %d, "
                                          "want %d",
                                          use_2d, a, b, cc, dd, e, got, want);
                            }
        }
        compile_result_free(&c.res);
    }
}

/* A helper's keyword-only parameters (after a bare `*`) given by keyword and left to defaults;
 * Triton 3's tl.erf, tl.sqrt_rn, tl.div_rn, tl.fdiv (language/math.py), tl.zeros_like (standard.py) and
 * tl.device_print, which tric accepts and which prints nothing. */
static void check_math_forms(void)
{
    const char *src = "import triton\n"
                      "import triton.language as tl\n"
                      "\n"
                      "@triton.jit\n"
                      "def scaled(x, *, scale=2.0, bias=0.0):\n"
                      "    return x * scale + bias\n"
                      "\n"
                      "@triton.jit\n"
                      "def math_forms(x_ptr, y_ptr, BLOCK: tl.constexpr):\n"
                      "    offs = tl.arange(0, BLOCK)\n"
                      "    x = tl.load(x_ptr + offs)\n"
                      "    tl.device_print(\"x = \", x, offs, hex=False)\n"
                      "    acc = tl.zeros_like(x)\n"
                      "    acc += tl.erf(x) + tl.sqrt_rn(x * x) + tl.div_rn(x, 3.0)\n"
                      "    acc += tl.fdiv(x, 5.0) + tl.fdiv(x, 7.0, ieee_rounding=True)\n"
                      "    acc += scaled(x, bias=0.5) + scaled(x, scale=3.0)\n"
                      "    tl.store(y_ptr + offs, acc)\n";
    Define d[1] = {{"BLOCK", "64"}};
    Compiled c;
    if (!compile(&c, src, "math_forms", "*fp32,*fp32", d, 1))
        return;
    static float x[64], y[64];
    for (int i = 0; i < 64; i++)
        x[i] = (float)(i - 32) * 0.125f;
    InterpArg args[] = {P(x), P(y)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(y, sizeof y)};
    if (run(c.ir, 1, args, 2, bufs, 2)) {
        int bad = 0;
        for (int i = 0; i < 64; i++) {
            double want = erf((double)x[i]) + fabs((double)x[i]) + (double)x[i] / 3.0 +
                          (double)x[i] / 5.0 + (double)x[i] / 7.0 + (x[i] * 2.0 + 0.5) + x[i] * 3.0;
            if (fabs(y[i] - want) > 1e-5 * (1 + fabs(want)) && bad++ < 5)
                CHECK(0, "math forms [%d]: %g, want %g", i, (double)y[i], want);
        }
    }
    compile_result_free(&c.res);
}

/* Forms real kernels use that Triton 3 accepts: `and`/`or` between blocks (FlagGems' `mask =
 * row_mask and col_mask`: logical and/or, broadcast, an int block read as != 0), `**` on
 * constexprs (FlagGems' get_dtype_min: `-1 * 2 ** (width - 1)`, here with width 64, which wraps
 * to INT64_MIN as Triton's int64 would hold it), and a helper parameter annotated tl.constexpr
 * given a run-time block (tutorial 06's offs_m). */
static void check_real_kernel_forms(void)
{
    const char *src =
        "import triton\n"
        "import triton.language as tl\n"
        "\n"
        "@triton.jit\n"
        "def masked_add(x, offs: tl.constexpr, N: tl.constexpr):\n"
        "    return tl.where(offs < N, x + offs, -1)\n"
        "\n"
        "@triton.jit\n"
        "def kernel(x_ptr, y_ptr, lo_ptr, n, R: tl.constexpr, C: tl.constexpr):\n"
        "    rows = tl.arange(0, R)[:, None]\n"
        "    cols = tl.arange(0, C)[None, :]\n"
        "    row_mask = rows < n\n"
        "    odd = cols % 2\n"
        "    both = row_mask and cols > 1\n"
        "    either = (rows == 0) or odd\n"
        "    offs = rows * C + cols\n"
        "    x = tl.load(x_ptr + offs)\n"
        "    width: tl.constexpr = 64\n"
        "    lo: tl.constexpr = -1 * 2 ** (width - 1)\n"
        "    half: tl.constexpr = 2.0 ** -1\n"
        "    y = tl.where(both, x, 0) + tl.where(either, 100, 0) + 2 ** 3 + half * 2\n"
        "    tl.store(y_ptr + offs, masked_add(y, offs, n * C))\n"
        "    tl.store(lo_ptr, lo)\n";
    Define d[] = {{"R", "4"}, {"C", "8"}};
    Compiled c;
    if (!compile(&c, src, "kernel", "*i32,*i32,*i64,i32", d, 2))
        return;
    enum { R = 4, C = 8, N = 3 };
    int32_t x[R * C], y[R * C];
    int64_t lo = 0;
    for (int i = 0; i < R * C; i++)
        x[i] = 1000 + i, y[i] = -7;
    InterpArg args[] = {P(x), P(y), P(&lo), I(N)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(y, sizeof y), B(&lo, sizeof lo)};
    if (run(c.ir, 1, args, 4, bufs, 3)) {
        for (int r = 0; r < R; r++)
            for (int k = 0; k < C; k++) {
                int i = r * C + k;
                int both = r < N && k > 1, either = r == 0 || (k % 2) != 0;
                int v = (both ? x[i] : 0) + (either ? 100 : 0) + 8 + 1;
                int want = i < N * C ? v + i : -1;
                CHECK(y[i] == want, "and/or/** at (%d,%d): %d, want %d", r, k, y[i], want);
            }
        CHECK(lo == INT64_MIN, "-1 * 2 ** 63 folded to %lld", (long long)lo);
    }
    compile_result_free(&c.res);
}

/* More of FlagGems' forms: a helper choosing its result by dtype predicates on a constexpr's
 * .value, returning early from a compile-time `if` (its get_dtype_min), `.int_bitwidth`,
 * tl.max(..., return_indices=True) (and the method form of min) giving (values, indices), and
 * a @triton.heuristics dict only host Python builds, set aside when -D gives every constexpr. */
static void check_flaggems_forms(void)
{
    const char *src =
        "import triton\n"
        "import triton.language as tl\n"
        "\n"
        "@triton.jit\n"
        "def lowest(dtype):\n"
        "    dtype_ = dtype.value\n"
        "    if dtype_.is_floating():\n"
        "        value: tl.constexpr = float('-inf')\n"
        "        return value\n"
        "    if dtype_.is_int_signed():\n"
        "        width: tl.constexpr = dtype_.int_bitwidth\n"
        "        value: tl.constexpr = -1 * 2 ** (width - 1)\n"
        "        return value\n"
        "    if dtype_.is_int_unsigned():\n"
        "        value: tl.constexpr = 0\n"
        "        return value\n"
        "\n"
        "@triton.heuristics(runtime.get_heuristic_config('rowmax'))\n"
        "@triton.jit\n"
        "def rowmax(x_ptr, v_ptr, i_ptr, j_ptr, n, R: tl.constexpr, C: tl.constexpr):\n"
        "    rows = tl.arange(0, R)\n"
        "    cols = tl.arange(0, C)\n"
        "    mask = rows[:, None] < R and cols[None, :] < n\n"
        "    lo = lowest(x_ptr.dtype.element_ty)\n"
        "    x = tl.load(x_ptr + rows[:, None] * C + cols[None, :], mask=mask, other=lo)\n"
        "    v, i = tl.max(x, 1, return_indices=True, return_indices_tie_break_left=True)\n"
        "    w, j = x.min(axis=1, return_indices=True)\n"
        "    tl.store(v_ptr + rows, v)\n"
        "    tl.store(i_ptr + rows, i)\n"
        "    tl.store(j_ptr + rows, j + 0 * w)\n";
    Define d[] = {{"R", "4"}, {"C", "8"}};
    Compiled c;
    if (!compile(&c, src, "rowmax", "*i16,*i16,*i32,*i32,i32", d, 2))
        return;
    enum { R = 4, C = 8, N = 6 };
    int16_t x[R * C], v[R];
    int32_t idx[R], jdx[R];
    for (int i = 0; i < R * C; i++)
        x[i] = (int16_t)((i * 37) % 23 - 11);
    x[1 * C + 2] = x[1 * C + 4] = 50; /* a tie: the first index wins */
    InterpArg args[] = {P(x), P(v), P(idx), P(jdx), I(N)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(v, sizeof v), B(idx, sizeof idx), B(jdx, sizeof jdx)};
    if (run(c.ir, 1, args, 5, bufs, 4)) {
        for (int r = 0; r < R; r++) {
            /* masked-off columns read as lowest(int16) = -32768: never the max, always the min */
            int best = 0, worst = N;
            for (int k = 1; k < N; k++)
                if (x[r * C + k] > x[r * C + best])
                    best = k;
            CHECK(v[r] == x[r * C + best] && idx[r] == best, "row %d max %d at %d, want %d at %d",
                  r, v[r], idx[r], x[r * C + best], best);
            CHECK(jdx[r] == worst, "row %d min at %d, want %d (the masked -32768)", r, jdx[r],
                  worst);
        }
    }
    compile_result_free(&c.res);
}

/* `if ptr:` on a run-time pointer tests it against NULL (FlagGems' `if dW:` for an optional
 * output): the store runs for a real buffer and is skipped for a NULL one. */
static void check_pointer_condition(void)
{
    const char *src = "import triton\n"
                      "import triton.language as tl\n"
                      "\n"
                      "@triton.jit\n"
                      "def k(x_ptr, opt_ptr, BLOCK: tl.constexpr):\n"
                      "    offs = tl.arange(0, BLOCK)\n"
                      "    tl.store(x_ptr + offs, 1.0)\n"
                      "    if opt_ptr:\n"
                      "        tl.store(opt_ptr + offs, 2.0)\n"
                      "    flag = 3.0 if opt_ptr else 4.0\n"
                      "    tl.store(x_ptr + offs, flag)\n";
    Define d = {"BLOCK", "8"};
    Compiled c;
    if (!compile(&c, src, "k", "*fp32,*fp32", &d, 1))
        return;
    float x[8], opt[8];
    for (int i = 0; i < 8; i++)
        x[i] = opt[i] = -1.0f;
    InterpBuffer bufs[] = {B(x, sizeof x), B(opt, sizeof opt)};
    InterpArg with[] = {P(x), P(opt)};
    if (run(c.ir, 1, with, 2, bufs, 2))
        for (int i = 0; i < 8; i++)
            CHECK(opt[i] == 2.0f && x[i] == 3.0f, "with a buffer at %d: %g %g", i, opt[i], x[i]);
    InterpArg without[] = {P(x), P(NULL)};
    if (run(c.ir, 1, without, 2, bufs, 1))
        for (int i = 0; i < 8; i++)
            CHECK(x[i] == 4.0f, "with NULL at %d: %g", i, x[i]);
    compile_result_free(&c.res);
}

int main(void)
{
    check_jit_by_call();
    check_pointer_casts();
    check_constexpr_function();
    check_block_pointers();
    check_tensor_descriptors();
    check_host_tensor_descriptors();
    check_rank5_scale_layout();
    check_math_forms();
    check_real_kernel_forms();
    check_flaggems_forms();
    check_pointer_condition();
    if (test_failures) {
        printf("%d failure(s)\n", test_failures);
        return 1;
    }
    printf("lower_python_forms_exec: ok\n");
    return 0;
}
