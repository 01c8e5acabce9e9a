/* lower_atomics_exec.c: tl.atomic_* compiled from .tri source by driver_compile and run by the
 * CPU interpreter (which runs every program's lanes one after the other, in row-major order)
 * against C references: a histogram with collisions (counts and the old values each lane got),
 * a masked counter, a cas spin lock guarding a read-modify-write, atomic_max/min on ints and on
 * floats of both signs (Triton's signed-max / unsigned-min construction: the non-negative lanes'
 * atomics first, then the negative ones'), xchg, and/or/xor,
 * fp16 add, a split-K matmul adding 2-D tiles; the IR has one atomic_rmw per call (two for float
 * max/min). */
#include "driver/driver.h"
#include "exec_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool compile(Compiled *c, const char *src, const char *signature, const char *block)
{
    Define defs[1] = {{"BLOCK", block}};
    return exec_compile(c, "atomics.tri", src, NULL, signature, defs, 1);
}

#define HEADER "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"

/* A histogram of x % 16 with collisions inside and across programs; old gets each lane's count
 * before its own increment, which the serial order makes exact. Lanes past n are masked off and
 * read 0. */
static void test_histogram(void)
{
    const char *src = HEADER "def hist(x_ptr, bins_ptr, old_ptr, n, BLOCK: tl.constexpr):\n"
                             "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                             "    m = offs < n\n"
                             "    x = tl.load(x_ptr + offs, mask=m, other=0)\n"
                             "    old = tl.atomic_add(bins_ptr + x % 16, 1, mask=m)\n"
                             "    tl.store(old_ptr + offs, old)\n";
    Compiled c;
    if (!compile(&c, src, "*i32,*i32,*i32,i32", "64"))
        return;
    CHECK(count_ops(&c.ir->body, OP_ATOMIC_RMW) == 1, "one atomic_rmw");
    enum { N = 200, G = 4 };
    static int32_t x[G * 64], bins[16], old[G * 64], want_bins[16], want_old[G * 64];
    for (int i = 0; i < G * 64; i++) {
        x[i] = (i * 7 + i / 5) % 37;
        old[i] = -1;
        if (i < N) {
            want_old[i] = want_bins[x[i] % 16]++;
        } else {
            want_old[i] = 0;
        }
    }
    InterpArg args[] = {P(x), P(bins), P(old), I(N)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(bins, sizeof bins), B(old, sizeof old)};
    if (!run(c.ir, G, args, 4, bufs, 3))
        return;
    for (int b = 0; b < 16; b++)
        CHECK(bins[b] == want_bins[b], "bin %d: %d, want %d", b, bins[b], want_bins[b]);
    for (int i = 0; i < G * 64; i++)
        CHECK(old[i] == want_old[i], "old[%d] = %d, want %d", i, old[i], want_old[i]);
    compile_result_free(&c.res);
}

/* A scalar counter bumped once per program and, per lane, only under a mask; sem and scope
 * spelled out; the scalar result is the counter before the program's add. */
static void test_counter(void)
{
    const char *src =
        HEADER "def count(cnt_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
               "    pid = tl.program_id(0)\n"
               "    before = tl.atomic_add(cnt_ptr, 1, sem=\"relaxed\", scope=\"gpu\")\n"
               "    offs = pid * BLOCK + tl.arange(0, BLOCK)\n"
               "    tl.atomic_add(cnt_ptr + 1 + offs * 0, 2, mask=offs < n, sem=\"release\", "
               "scope=\"cta\")\n"
               "    tl.store(out_ptr + pid, before)\n";
    Compiled c;
    if (!compile(&c, src, "*i64,*i64,i32", "32"))
        return;
    static int64_t cnt[2], out[5];
    InterpArg args[] = {P(cnt), P(out), I(100)};
    InterpBuffer bufs[] = {B(cnt, sizeof cnt), B(out, sizeof out)};
    if (!run(c.ir, 5, args, 3, bufs, 2))
        return;
    CHECK(cnt[0] == 5 && cnt[1] == 200, "counters %lld %lld, want 5 200", (long long)cnt[0],
          (long long)cnt[1]);
    for (int p = 0; p < 5; p++)
        CHECK(out[p] == p, "program %d saw %lld", p, (long long)out[p]);
    compile_result_free(&c.res);
}

/* A cas spin lock around a load-add-store of a shared total; xchg releases it and returns the 1
 * the lock held. */
static void test_lock(void)
{
    const char *src = HEADER "def locked(lock_ptr, total_ptr, rel_ptr, BLOCK: tl.constexpr):\n"
                             "    pid = tl.program_id(0)\n"
                             "    while tl.atomic_cas(lock_ptr, 0, 1, sem=\"acquire\") == 1:\n"
                             "        pass\n"
                             "    t = tl.load(total_ptr)\n"
                             "    tl.store(total_ptr, t + pid + 1)\n"
                             "    was = tl.atomic_xchg(lock_ptr, 0, sem=\"release\")\n"
                             "    tl.store(rel_ptr + pid, was)\n";
    Compiled c;
    if (!compile(&c, src, "*i32,*i32,*i32", "32"))
        return;
    static int32_t lock[1], total[1], rel[8];
    InterpArg args[] = {P(lock), P(total), P(rel)};
    InterpBuffer bufs[] = {B(lock, sizeof lock), B(total, sizeof total), B(rel, sizeof rel)};
    if (!run(c.ir, 8, args, 3, bufs, 3))
        return;
    CHECK(lock[0] == 0 && total[0] == 36, "lock %d, total %d (want 0, 36)", lock[0], total[0]);
    for (int p = 0; p < 8; p++)
        CHECK(rel[p] == 1, "program %d released %d", p, rel[p]);
    compile_result_free(&c.res);
}

/* atomic_max and atomic_min on int32, uint32 and fp32 (values of both signs, -0.0, ties), with
 * the old values; float max/min are two atomic_rmw (signed on the bits, unsigned on the bits). */
static void test_minmax(void)
{
    const char *src = HEADER "def mm(i_ptr, u_ptr, f_ptr, g_ptr, iv_ptr, fv_ptr, old_ptr, "
                             "fold_ptr, BLOCK: tl.constexpr):\n"
                             "    offs = tl.arange(0, BLOCK)\n"
                             "    slot = offs % 4\n"
                             "    iv = tl.load(iv_ptr + offs)\n"
                             "    fv = tl.load(fv_ptr + offs)\n"
                             "    o = tl.atomic_max(i_ptr + slot, iv)\n"
                             "    tl.atomic_min(u_ptr + slot, iv.to(tl.uint32, bitcast=True))\n"
                             "    fo = tl.atomic_max(f_ptr + slot, fv)\n"
                             "    tl.atomic_min(g_ptr + slot, fv, mask=offs < BLOCK - 4)\n"
                             "    tl.store(old_ptr + offs, o)\n"
                             "    tl.store(fold_ptr + offs, fo)\n";
    Compiled c;
    if (!compile(&c, src, "*i32,*u32,*fp32,*fp32,*i32,*fp32,*i32,*fp32", "32"))
        return;
    CHECK(count_ops(&c.ir->body, OP_ATOMIC_RMW) == 6, "6 atomic_rmw, got %d",
          count_ops(&c.ir->body, OP_ATOMIC_RMW));
    enum { N = 32 };
    static int32_t im[4], iv[N], old[N], wi[4], wold[N];
    static uint32_t um[4], wu[4];
    static float fm[4], gm[4], fv[N], fold[N], wf[4], wg[4], wfold[N];
    for (int s = 0; s < 4; s++) {
        wi[s] = im[s] = -1000 + s;
        wu[s] = um[s] = 0x80000000u + (uint32_t)s;
        wf[s] = fm[s] = s == 0 ? -INFINITY : -5.0f + (float)s;
        wg[s] = gm[s] = s == 3 ? 0.0f : 5.0f - (float)s;
    }
    for (int i = 0; i < N; i++) {
        iv[i] = (i * 37 % 23) - 11 - (i % 3 == 0 ? 2000 : 0);
        fv[i] = (float)((i * 13 % 17) - 8) * 0.75f;
        if (i == 5)
            fv[i] = -0.0f;
        if (i == 9)
            fv[i] = -1e30f;
    }
    for (int i = 0; i < N; i++) {
        int s = i % 4;
        wold[i] = wi[s];
        if (iv[i] > wi[s])
            wi[s] = iv[i];
        if ((uint32_t)iv[i] < wu[s])
            wu[s] = (uint32_t)iv[i];
        if (i < N - 4 &&
            (fv[i] < wg[s] || (fv[i] == 0 && wg[s] == 0 && signbit(fv[i]) && !signbit(wg[s]))))
            wg[s] = fv[i];
    }
    /* Float max runs as two atomics, one after the other over all lanes: first every lane
     * with a non-negative value (sign bit clear), then every negative one. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < N; i++) {
            int s = i % 4;
            if ((signbit(fv[i]) != 0) != pass)
                continue;
            wfold[i] = wf[s];
            if (fv[i] > wf[s] || (fv[i] == 0 && wf[s] == 0 && !signbit(fv[i]) && signbit(wf[s])))
                wf[s] = fv[i];
        }
    InterpArg args[] = {P(im), P(um), P(fm), P(gm), P(iv), P(fv), P(old), P(fold)};
    InterpBuffer bufs[] = {B(im, sizeof im),   B(um, sizeof um),    B(fm, sizeof fm),
                           B(gm, sizeof gm),   B(iv, sizeof iv),    B(fv, sizeof fv),
                           B(old, sizeof old), B(fold, sizeof fold)};
    if (!run(c.ir, 1, args, 8, bufs, 8))
        return;
    for (int s = 0; s < 4; s++) {
        CHECK(im[s] == wi[s], "int max slot %d: %d, want %d", s, im[s], wi[s]);
        CHECK(um[s] == wu[s], "uint min slot %d: %u, want %u", s, um[s], wu[s]);
        CHECK(memcmp(&fm[s], &wf[s], 4) == 0, "float max slot %d: %g, want %g", s, fm[s], wf[s]);
        CHECK(memcmp(&gm[s], &wg[s], 4) == 0, "float min slot %d: %g, want %g", s, gm[s], wg[s]);
    }
    for (int i = 0; i < N; i++) {
        CHECK(old[i] == wold[i], "int old[%d] = %d, want %d", i, old[i], wold[i]);
        CHECK(memcmp(&fold[i], &wfold[i], 4) == 0, "float old[%d] = %g, want %g", i, fold[i],
              wfold[i]);
    }
    compile_result_free(&c.res);
}

/* xchg (old values chain through the lanes), and/or/xor on uint64, fp16 add. */
static void test_bits_xchg_half(void)
{
    const char *src =
        HEADER "def bits(x_ptr, b_ptr, h_ptr, old_ptr, BLOCK: tl.constexpr):\n"
               "    offs = tl.arange(0, BLOCK)\n"
               "    old = tl.atomic_xchg(x_ptr + offs * 0, offs)\n"
               "    tl.store(old_ptr + offs, old)\n"
               "    one = tl.full([BLOCK], 1, tl.uint64)\n"
               "    tl.atomic_or(b_ptr + offs * 0, one << offs.to(tl.uint64))\n"
               "    tl.atomic_and(b_ptr + 1 + offs * 0, ~(one << offs.to(tl.uint64)))\n"
               "    tl.atomic_xor(b_ptr + 2 + offs * 0, offs.to(tl.uint64) * 3)\n"
               "    (h_ptr + offs * 0).atomic_add(0.25 + offs * 0)\n";
    Compiled c;
    if (!compile(&c, src, "*i32,*u64,*fp16,*i32", "16"))
        return;
    static int32_t x[1] = {-7}, old[16];
    static uint64_t b[3] = {0, ~0ull, 0};
    static uint16_t h[1] = {0x3c00}; /* 1.0 */
    InterpArg args[] = {P(x), P(b), P(h), P(old)};
    InterpBuffer bufs[] = {B(x, sizeof x), B(b, sizeof b), B(h, sizeof h), B(old, sizeof old)};
    if (!run(c.ir, 1, args, 4, bufs, 4))
        return;
    CHECK(x[0] == 15, "xchg left %d", x[0]);
    for (int i = 0; i < 16; i++)
        CHECK(old[i] == (i ? i - 1 : -7), "xchg old[%d] = %d", i, old[i]);
    uint64_t xr = 0;
    for (int i = 0; i < 16; i++)
        xr ^= (uint64_t)i * 3;
    CHECK(b[0] == 0xffff && b[1] == ~0xffffull && b[2] == xr, "or/and/xor: %llx %llx %llx",
          (unsigned long long)b[0], (unsigned long long)b[1], (unsigned long long)b[2]);
    CHECK(h[0] == 0x4500, "fp16 1 + 16 * 0.25 = 5.0 (0x4500), got 0x%04x", h[0]);
    compile_result_free(&c.res);
}

/* Split-K matmul: each program adds its K-slice's partial tile into C with a relaxed 2-D
 * atomic_add (small integers: the fp32 sums are exact in any order). */
static void test_split_k(void)
{
    const char *src =
        HEADER "def splitk(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr):\n"
               "    pid_m = tl.program_id(0) // 2\n"
               "    pid_k = tl.program_id(0) % 2\n"
               "    rm = pid_m * BLOCK + tl.arange(0, BLOCK)\n"
               "    rn = tl.arange(0, BLOCK)\n"
               "    rk = pid_k * BLOCK + tl.arange(0, BLOCK)\n"
               "    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)\n"
               "    for k in range(0, K, 2 * BLOCK):\n"
               "        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])\n"
               "        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])\n"
               "        acc += tl.dot(a, b)\n"
               "    tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], acc, sem=\"relaxed\")\n";
    Compiled c;
    if (!compile(&c, src, "*fp32,*fp32,*fp32,i32,i32,i32", "16"))
        return;
    enum { M = 32, N = 16, K = 128 };
    static float a[M * K], b[K * N], cm[M * N], want[M * N];
    for (int i = 0; i < M * K; i++)
        a[i] = (float)((i * 7) % 5 - 2);
    for (int i = 0; i < K * N; i++)
        b[i] = (float)((i * 3) % 7 - 3);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float sum = 1.0f; /* C starts at 1 */
            for (int k = 0; k < K; k++)
                sum += a[i * K + k] * b[k * N + j];
            want[i * N + j] = sum;
            cm[i * N + j] = 1.0f;
        }
    InterpArg args[] = {P(a), P(b), P(cm), I(M), I(N), I(K)};
    InterpBuffer bufs[] = {B(a, sizeof a), B(b, sizeof b), B(cm, sizeof cm)};
    if (!run(c.ir, 2 * (M / 16), args, 6, bufs, 3))
        return;
    for (int i = 0; i < M * N; i++)
        CHECK(cm[i] == want[i], "split-k C[%d] = %g, want %g", i, cm[i], want[i]);
    compile_result_free(&c.res);
}

int main(void)
{
    test_split_k();
    test_histogram();
    test_counter();
    test_lock();
    test_minmax();
    test_bits_xchg_half();
    if (test_failures) {
        printf("%d test_failures\n", test_failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
