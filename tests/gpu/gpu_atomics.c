/* gpu_atomics (label gpu): tl.atomic_* on cuda:0 against the cpu interpreter (and C references)
 * with the same inputs. Checked exactly where the outcome does not depend on the order the
 * lanes' atomics land in: a histogram with collisions (the bins; each bin's old values are a
 * permutation of 0..count-1), in a layout with one element per thread and in a block smaller
 * than the CTA (replicated: one issuing thread, old values through shared memory), a scalar
 * counter per program (its old values a permutation of the programs), atomic_max/min on int32,
 * uint32 and fp32 of both signs, a cas spin lock around a load-add-store, xchg (old values and
 * the last value a permutation of the inputs), and/or/xor on uint64, fp16, bf16 and fp32 adds of
 * exactly representable sums, sem/scope variants, a split-K matmul adding dot tiles. Skips (exit 77) when cuda:0 cannot be
 * opened. */
#include "tests/runtime_check.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

enum { MAXBUF = 8 };

typedef struct Pair {
    tric_device gpu, cpu;
} Pair;

/* Compiles src on both devices, launches it on each with fresh copies of the inputs, and copies
 * every buffer back: out[0][i] from the GPU, out[1][i] from the interpreter. */
static bool run_both(Pair *p, const char *src, const char *sig, const char *block, int num_warps,
                     void *const *inputs, const size_t *bytes, int nbufs, const tric_arg *scalars,
                     int nscalars, unsigned grid, void *out[2][MAXBUF])
{
    tric_device devs[2] = {p->gpu, p->cpu};
    char def[64];
    snprintf(def, sizeof def, "BLOCK=%s", block);
    const char *defs[1] = {def};
    for (int d = 0; d < 2; d++) {
        tric_compile_options opt = tric_compile_options_default();
        opt.signature = sig;
        opt.constexprs = defs;
        opt.nconstexprs = 1;
        opt.num_warps = num_warps;
        opt.no_cache = 1;
        tric_module mod;
        tric_kernel k;
        if (tric_module_compile(devs[d], src, "atomics.tri", &opt, &mod) != TRIC_SUCCESS) {
            fprintf(stderr, "compile on %s failed: %s\n%s\n", d ? "cpu" : "cuda", tric_last_error(),
                    src);
            failures++;
            return false;
        }
        CHECK(tric_module_get_kernel(mod, "k", &k) == TRIC_SUCCESS);
        tric_buffer bufs[MAXBUF];
        tric_arg args[MAXBUF + 4];
        for (int i = 0; i < nbufs; i++) {
            CHECK(tric_buffer_alloc(devs[d], bytes[i], &bufs[i]) == TRIC_SUCCESS);
            CHECK(tric_copy_to_device(bufs[i], 0, inputs[i], bytes[i], NULL) == TRIC_SUCCESS);
            args[i] = TRIC_ARG_BUF(bufs[i]);
        }
        for (int i = 0; i < nscalars; i++)
            args[nbufs + i] = scalars[i];
        CHECK(tric_launch(k, (tric_dim3){grid, 1, 1}, args, nbufs + nscalars, NULL) ==
              TRIC_SUCCESS);
        CHECK(tric_device_synchronize(devs[d]) == TRIC_SUCCESS);
        for (int i = 0; i < nbufs; i++) {
            CHECK(tric_copy_to_host(out[d][i], bufs[i], 0, bytes[i], NULL) == TRIC_SUCCESS);
            tric_buffer_free(bufs[i]);
        }
        tric_module_destroy(mod);
    }
    return true;
}

static void **alloc_outs(void *out[2][MAXBUF], const size_t *bytes, int n)
{
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < n; i++)
            out[d][i] = calloc(1, bytes[i]);
    return NULL;
}

static void free_outs(void *out[2][MAXBUF], int n)
{
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < n; i++)
            free(out[d][i]);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

#define HEADER "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"

/* Histogram of x % 16: bins exact on both; every bin's old values 0..count-1 in some order. */
static void test_histogram(Pair *p, const char *block, int num_warps)
{
    const char *src = HEADER "def k(x_ptr, bins_ptr, old_ptr, n, BLOCK: tl.constexpr):\n"
                             "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                             "    m = offs < n\n"
                             "    x = tl.load(x_ptr + offs, mask=m, other=0)\n"
                             "    old = tl.atomic_add(bins_ptr + x % 16, 1, mask=m)\n"
                             "    tl.store(old_ptr + offs, old, mask=m)\n";
    enum { N = 1000, NP = 1024 };
    int blk = atoi(block);
    static int32_t x[NP], bins[16], old[NP], want[16];
    memset(want, 0, sizeof want);
    for (int i = 0; i < NP; i++) {
        x[i] = (i * 7 + i / 5) % 37;
        old[i] = -1;
        if (i < N)
            want[x[i] % 16]++;
    }
    memset(bins, 0, sizeof bins);
    void *in[3] = {x, bins, old};
    size_t bytes[3] = {sizeof x, sizeof bins, sizeof old};
    void *out[2][MAXBUF];
    alloc_outs(out, bytes, 3);
    tric_arg n = TRIC_ARG_I32(N);
    if (run_both(p, src, "*i32,*i32,*i32,i32", block, num_warps, in, bytes, 3, &n, 1,
                 (NP + blk - 1) / blk, out)) {
        for (int d = 0; d < 2; d++) {
            int32_t *b = out[d][1], *o = out[d][2];
            for (int k = 0; k < 16; k++)
                if (b[k] != want[k]) {
                    fprintf(stderr, "histogram BLOCK=%s (%s): bin %d = %d, want %d\n", block,
                            d ? "cpu" : "gpu", k, b[k], want[k]);
                    failures++;
                }
            for (int k = 0; k < 16; k++) {
                int32_t seen[NP];
                int cnt = 0;
                for (int i = 0; i < N; i++)
                    if (x[i] % 16 == k)
                        seen[cnt++] = o[i];
                qsort(seen, (size_t)cnt, sizeof *seen, cmp_i32);
                for (int j = 0; j < cnt; j++)
                    if (seen[j] != j) {
                        fprintf(stderr,
                                "histogram BLOCK=%s (%s): bin %d's old values are not 0..%d\n",
                                block, d ? "cpu" : "gpu", k, cnt - 1);
                        failures++;
                        break;
                    }
            }
        }
    }
    free_outs(out, 3);
}

/* A scalar counter per program and a masked per-lane counter; max/min on int32, uint32, fp32. */
static void test_counter_minmax(Pair *p)
{
    const char *src = HEADER
        "def k(cnt_ptr, before_ptr, i_ptr, u_ptr, f_ptr, g_ptr, v_ptr, n, BLOCK: tl.constexpr):\n"
        "    pid = tl.program_id(0)\n"
        "    before = tl.atomic_add(cnt_ptr, 1, sem=\"relaxed\")\n"
        "    tl.store(before_ptr + pid, before)\n"
        "    offs = pid * BLOCK + tl.arange(0, BLOCK)\n"
        "    m = offs < n\n"
        "    tl.atomic_add(cnt_ptr + 1 + offs * 0, 3, mask=m, scope=\"gpu\")\n"
        "    v = tl.load(v_ptr + offs)\n"
        "    slot = offs % 4\n"
        "    tl.atomic_max(i_ptr + slot, v, mask=m, sem=\"acq_rel\", scope=\"sys\")\n"
        "    tl.atomic_min(u_ptr + slot, v.to(tl.uint32, bitcast=True), mask=m)\n"
        "    fv = v.to(tl.float32) * 0.125\n"
        "    tl.atomic_max(f_ptr + slot, fv, mask=m, sem=\"release\")\n"
        "    tl.atomic_min(g_ptr + slot, fv, mask=m, sem=\"acquire\", scope=\"cta\")\n";
    enum { G = 40, B = 64, NV = G * B };
    static int32_t cnt[2], before[G], iv[4], v[NV];
    static uint32_t uv[4];
    static float fv[4], gv[4];
    for (int i = 0; i < NV; i++)
        v[i] = (int32_t)((uint32_t)i * 2654435761u % 20001u) - 10000;
    for (int s = 0; s < 4; s++) {
        iv[s] = INT32_MIN;
        uv[s] = UINT32_MAX;
        fv[s] = -INFINITY;
        gv[s] = INFINITY;
    }
    cnt[0] = cnt[1] = 0;
    void *in[7] = {cnt, before, iv, uv, fv, gv, v};
    size_t bytes[7] = {sizeof cnt, sizeof before, sizeof iv, sizeof uv,
                       sizeof fv,  sizeof gv,     sizeof v};
    void *out[2][MAXBUF];
    alloc_outs(out, bytes, 7);
    tric_arg n = TRIC_ARG_I32(NV - 50);
    if (run_both(p, src, "*i32,*i32,*i32,*u32,*fp32,*fp32,*i32,i32", "64", 4, in, bytes, 7, &n, 1,
                 G, out)) {
        for (int d = 0; d < 2; d++) {
            const char *dn = d ? "cpu" : "gpu";
            int32_t *c = out[d][0], *bf = out[d][1];
            if (c[0] != G || c[1] != 3 * (NV - 50)) {
                fprintf(stderr, "counter (%s): %d %d, want %d %d\n", dn, c[0], c[1], G,
                        3 * (NV - 50));
                failures++;
            }
            int32_t sorted[G];
            memcpy(sorted, bf, sizeof sorted);
            qsort(sorted, G, sizeof *sorted, cmp_i32);
            for (int i = 0; i < G; i++)
                if (sorted[i] != i) {
                    fprintf(stderr, "counter (%s): the programs' old values are not 0..%d\n", dn,
                            G - 1);
                    failures++;
                    break;
                }
        }
        for (int i = 2; i <= 5; i++)
            if (memcmp(out[0][i], out[1][i], 16) != 0) {
                fprintf(stderr, "max/min buffer %d: gpu and interpreter differ\n", i);
                failures++;
            }
        int32_t want_i[4] = {INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN};
        for (int i = 0; i < NV - 50; i++)
            if (v[i] > want_i[i % 4])
                want_i[i % 4] = v[i];
        if (memcmp(out[1][2], want_i, 16) != 0) {
            fprintf(stderr, "int max (cpu) differs from C\n");
            failures++;
        }
    }
    free_outs(out, 7);
}

/* A cas spin lock (acquire) around a load-add-store, released by xchg (release); per-lane xchg
 * chains; and/or/xor on uint64; fp16, bf16 and fp32 adds whose sums are exact in any order. */
static void test_lock_xchg_bits(Pair *p)
{
    const char *src = HEADER "def k(lock_ptr, total_ptr, x_ptr, old_ptr, b_ptr, h_ptr, f_ptr, "
                             "bf_ptr, BLOCK: tl.constexpr):\n"
                             "    pid = tl.program_id(0)\n"
                             "    while tl.atomic_cas(lock_ptr, 0, 1, sem=\"acquire\") == 1:\n"
                             "        pass\n"
                             "    t = tl.load(total_ptr, volatile=True)\n"
                             "    tl.store(total_ptr, t + pid + 1)\n"
                             "    tl.atomic_xchg(lock_ptr, 0, sem=\"release\")\n"
                             "    offs = pid * BLOCK + tl.arange(0, BLOCK)\n"
                             "    old = tl.atomic_xchg(x_ptr + offs * 0, offs)\n"
                             "    tl.store(old_ptr + offs, old)\n"
                             "    one = tl.full([BLOCK], 1, tl.uint64)\n"
                             "    bit = one << (offs % 64).to(tl.uint64)\n"
                             "    tl.atomic_or(b_ptr + offs * 0, bit)\n"
                             "    tl.atomic_and(b_ptr + 1 + offs * 0, ~bit)\n"
                             "    tl.atomic_xor(b_ptr + 2 + offs % 2, offs.to(tl.uint64))\n"
                             "    tl.atomic_add(h_ptr + offs % 2, 0.25)\n"
                             "    tl.atomic_add(bf_ptr + offs % 2, 0.5, sem=\"relaxed\")\n"
                             "    tl.atomic_add(f_ptr + offs % 3, offs.to(tl.float32))\n";
    enum { G = 16, B = 32, NV = G * B };
    static int32_t lock[1], total[1], x[1], old[NV];
    static uint64_t bits[4];
    static uint16_t h[2];
    static float f[3];
    static uint16_t bf[2];
    lock[0] = 0;
    total[0] = 0;
    x[0] = -1;
    bits[0] = 0;
    bits[1] = ~0ull;
    bits[2] = bits[3] = 0;
    h[0] = h[1] = 0;
    f[0] = f[1] = f[2] = 0;
    bf[0] = bf[1] = 0;
    void *in[8] = {lock, total, x, old, bits, h, f, bf};
    size_t bytes[8] = {sizeof lock, sizeof total, sizeof x, sizeof old,
                       sizeof bits, sizeof h,     sizeof f, sizeof bf};
    void *out[2][MAXBUF];
    alloc_outs(out, bytes, 8);
    if (run_both(p, src, "*i32,*i32,*i32,*i32,*u64,*fp16,*fp32,*bf16", "32", 4, in, bytes, 8, NULL,
                 0, G, out)) {
        for (int d = 0; d < 2; d++) {
            const char *dn = d ? "cpu" : "gpu";
            int32_t *lk = out[d][0], *tt = out[d][1], *xx = out[d][2], *ol = out[d][3];
            if (lk[0] != 0 || tt[0] != G * (G + 1) / 2) {
                fprintf(stderr, "lock (%s): lock %d, total %d (want 0, %d)\n", dn, lk[0], tt[0],
                        G * (G + 1) / 2);
                failures++;
            }
            /* xchg: the old values and the last value are -1 and every offset, once each */
            static int32_t all[NV + 1];
            memcpy(all, ol, NV * sizeof(int32_t));
            all[NV] = xx[0];
            qsort(all, NV + 1, sizeof *all, cmp_i32);
            for (int i = 0; i <= NV; i++)
                if (all[i] != i - 1) {
                    fprintf(stderr, "xchg (%s): the old values are not a permutation\n", dn);
                    failures++;
                    break;
                }
        }
        if (memcmp(out[0][4], out[1][4], sizeof bits) != 0 ||
            memcmp(out[0][5], out[1][5], sizeof h) != 0 ||
            memcmp(out[0][6], out[1][6], sizeof f) != 0 ||
            memcmp(out[0][7], out[1][7], sizeof bf) != 0) {
            fprintf(stderr, "bits / fp16 / fp32 / bf16 adds: gpu and interpreter differ\n");
            failures++;
        }
        uint16_t *hh = out[1][5];
        if (hh[0] != 0x5400 || hh[1] != 0x5400) { /* 256 * 0.25 = 64.0 */
            fprintf(stderr, "fp16 add (cpu): 0x%04x 0x%04x, want 0x5400\n", hh[0], hh[1]);
            failures++;
        }
        uint16_t *bb = out[1][7];
        if (bb[0] != 0x4300 || bb[1] != 0x4300) { /* 256 * 0.5 = 128.0 */
            fprintf(stderr, "bf16 add (cpu): 0x%04x 0x%04x, want 0x4300\n", bb[0], bb[1]);
            failures++;
        }
    }
    free_outs(out, 8);
}

/* Split-K matmul: every program adds its K-slice's tile (a dot's accumulator) into C with a
 * relaxed 2-D atomic_add (red); small integers, so the sums are exact in any order. */
static void test_split_k(Pair *p)
{
    const char *src =
        HEADER "def k(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr):\n"
               "    pid_m = tl.program_id(0) // 4\n"
               "    pid_k = tl.program_id(0) % 4\n"
               "    rm = pid_m * BLOCK + tl.arange(0, BLOCK)\n"
               "    rn = tl.arange(0, BLOCK)\n"
               "    rk = pid_k * 32 + tl.arange(0, 32)\n"
               "    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)\n"
               "    for k in range(0, K, 4 * 32):\n"
               "        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])\n"
               "        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])\n"
               "        acc += tl.dot(a, b)\n"
               "    tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], acc, sem=\"relaxed\")\n";
    enum { M = 128, N = 64, K = 512 };
    static uint16_t a[M * K], b[K * N];
    static float cm[M * N], want[M * N];
    /* fp16 bits of small integers -2..2 and -3..3 */
    static const uint16_t half_of[7] = {0xc200, 0xc000, 0xbc00, 0x0000, 0x3c00, 0x4000, 0x4200};
    for (int i = 0; i < M * K; i++)
        a[i] = half_of[(i * 7) % 5 - 2 + 3];
    for (int i = 0; i < K * N; i++)
        b[i] = half_of[(i * 3) % 7 - 3 + 3];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float sum = 0.0f;
            for (int k = 0; k < K; k++)
                sum += (float)((((i * K + k) * 7) % 5) - 2) * (float)((((k * N + j) * 3) % 7) - 3);
            want[i * N + j] = sum;
            cm[i * N + j] = 0.0f;
        }
    void *in[3] = {a, b, cm};
    size_t bytes[3] = {sizeof a, sizeof b, sizeof cm};
    void *out[2][MAXBUF];
    alloc_outs(out, bytes, 3);
    tric_arg sc[3] = {TRIC_ARG_I32(M), TRIC_ARG_I32(N), TRIC_ARG_I32(K)};
    if (run_both(p, src, "*fp16,*fp16,*fp32,i32,i32,i32", "64", 4, in, bytes, 3, sc, 3,
                 4 * (M / 64), out)) {
        for (int d = 0; d < 2; d++) {
            float *c = out[d][2];
            for (int i = 0; i < M * N; i++)
                if (c[i] != want[i]) {
                    fprintf(stderr, "split-k (%s): C[%d] = %g, want %g\n", d ? "cpu" : "gpu", i,
                            c[i], want[i]);
                    failures++;
                    break;
                }
        }
    }
    free_outs(out, 3);
}

int main(void)
{
    Pair p;
    if (tric_device_open("cuda:0", &p.gpu) != TRIC_SUCCESS) {
        printf("SKIP: %s\n", tric_last_error());
        return 77;
    }
    CHECK(tric_device_open("cpu", &p.cpu) == TRIC_SUCCESS);
    printf("device: %s (arch %s)\n", tric_device_name(p.gpu), tric_device_arch(p.gpu));
    test_histogram(&p, "128", 4);
    test_histogram(&p, "32", 4); /* replicated: 32 elements over 128 threads */
    test_histogram(&p, "256", 8);
    test_counter_minmax(&p);
    test_lock_xchg_bits(&p);
    test_split_k(&p);
    tric_device_close(p.cpu);
    tric_device_close(p.gpu);
    if (failures) {
        printf("FAIL: %d\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
