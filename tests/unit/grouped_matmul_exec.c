/* grouped_matmul_exec.c: Triton's tutorial 08 grouped GEMM (examples/grouped_matmul.tri) as
 * written, on the interpreter after every pass (interp_passes.h), for sm_80 and sm_90a and
 * num_stages 1 to 4: three matmuls of different sizes in one launch of 3 programs, their A, B and
 * C reached through tables of host addresses, sizes and leading dimensions through int32 tables.
 * The inputs are small integers, so every sum is exact and C is checked bit for bit. The
 * tutorial marks its K loop's pointers with `tl.multiple_of(a_ptrs, [16, 16])` as a statement
 * (Triton sets the hint on the value itself): with num_stages >= 2 the pipeline must then have
 * taken that loop, its copies 16 bytes wide. */
#include "exec_test.h"
#include "interp_passes.h"

#include <stdlib.h>

enum { GROUPS = 3, PROGRAMS = 3, BM = 32, BN = 32, BK = 16 };

/* (M, N, K) of each problem: 2, 3 and 6 tiles of 32 x 32, 11 over 3 programs */
static const int SIZES[GROUPS][3] = {{64, 32, 48}, {32, 96, 16}, {96, 64, 32}};

/* The fp16 bits of an integer of magnitude under 2048 (exact). */
static uint16_t int_to_half(int v)
{
    uint16_t sign = v < 0 ? 0x8000 : 0;
    unsigned m = (unsigned)(v < 0 ? -v : v);
    if (m == 0)
        return sign;
    int e = 0;
    while ((m >> (e + 1)) != 0)
        e++;
    return (uint16_t)(sign | (unsigned)(e + 15) << 10 | ((m << (10 - e)) & 0x3ff));
}

static int a_at(int g, int i, int k) { return (i * 3 + k * 5 + g) % 7 - 3; }
static int b_at(int g, int k, int j) { return (k * 2 + j * 7 + 3 * g) % 5 - 2; }

static size_t c_elems(void)
{
    size_t n = 0;
    for (int g = 0; g < GROUPS; g++)
        n += (size_t)SIZES[g][0] * SIZES[g][1];
    return n;
}

/* One launch on fresh inputs; every C, problem after problem, into out. */
static bool run_grouped(const IrFunc *f, const void *ctx, void *out, StrBuf *err)
{
    (void)ctx;
    uint16_t *a[GROUPS], *b[GROUPS], *c[GROUPS];
    uint64_t a_table[GROUPS], b_table[GROUPS], c_table[GROUPS];
    int32_t sizes[GROUPS * 3], lds[GROUPS * 3];
    InterpBuffer bufs[5 + 3 * GROUPS];
    int nbufs = 0;
    for (int g = 0; g < GROUPS; g++) {
        int m = SIZES[g][0], n = SIZES[g][1], k = SIZES[g][2];
        a[g] = malloc(sizeof(uint16_t) * (size_t)(m * k));
        b[g] = malloc(sizeof(uint16_t) * (size_t)(k * n));
        c[g] = malloc(sizeof(uint16_t) * (size_t)(m * n));
        for (int i = 0; i < m * k; i++)
            a[g][i] = int_to_half(a_at(g, i / k, i % k));
        for (int i = 0; i < k * n; i++)
            b[g][i] = int_to_half(b_at(g, i / n, i % n));
        memset(c[g], 0xff, sizeof(uint16_t) * (size_t)(m * n));
        a_table[g] = (uint64_t)(uintptr_t)a[g];
        b_table[g] = (uint64_t)(uintptr_t)b[g];
        c_table[g] = (uint64_t)(uintptr_t)c[g];
        sizes[3 * g] = m, sizes[3 * g + 1] = n, sizes[3 * g + 2] = k;
        lds[3 * g] = k, lds[3 * g + 1] = n, lds[3 * g + 2] = n; /* row-major A, B and C */
        bufs[nbufs++] = B(a[g], sizeof(uint16_t) * (size_t)(m * k));
        bufs[nbufs++] = B(b[g], sizeof(uint16_t) * (size_t)(k * n));
        bufs[nbufs++] = B(c[g], sizeof(uint16_t) * (size_t)(m * n));
    }
    bufs[nbufs++] = B(a_table, sizeof a_table);
    bufs[nbufs++] = B(b_table, sizeof b_table);
    bufs[nbufs++] = B(c_table, sizeof c_table);
    bufs[nbufs++] = B(sizes, sizeof sizes);
    bufs[nbufs++] = B(lds, sizeof lds);
    InterpArg args[] = {P(a_table), P(b_table), P(c_table), P(sizes), P(lds), I(GROUPS)};
    InterpLaunch l = {
        .grid = {PROGRAMS, 1, 1}, .args = args, .nargs = 6, .buffers = bufs, .nbuffers = nbufs};
    bool ok = interp_run(f, &l, err);
    uint16_t *o = out;
    for (int g = 0; g < GROUPS; g++) {
        size_t n = (size_t)SIZES[g][0] * SIZES[g][1];
        memcpy(o, c[g], n * sizeof(uint16_t));
        o += n;
        free(a[g]), free(b[g]), free(c[g]);
    }
    return ok;
}

static bool same_bits(const void *want, const void *got, const void *ctx)
{
    (void)ctx;
    return memcmp(want, got, c_elems() * sizeof(uint16_t)) == 0;
}

/* After the pipeline pass, with 2 stages or more: the K loop's A and B copies made asynchronous
 * (the statement-form hint proved them 16-byte aligned). */
static void after_pass(const IrFunc *f, const char *pass, const char *arch, bool arch_specific,
                       int stages, const void *ctx)
{
    (void)arch_specific, (void)ctx;
    if (!strcmp(pass, "pipeline") && stages >= 2)
        CHECK(count_ops(&f->body, OP_ASYNC_COPY) >= 2,
              "grouped_matmul_kernel %s stages %d: %d async copies (the K loop not pipelined)",
              arch, stages, count_ops(&f->body, OP_ASYNC_COPY));
}

int main(void)
{
    static const char *const defs[] = {"NUM_SM=3", "BLOCK_SIZE_M=32", "BLOCK_SIZE_N=32",
                                       "BLOCK_SIZE_K=16", NULL};
    Lowered low;
    if (!interp_passes_lower(&low, "examples/grouped_matmul.tri", "grouped_matmul_kernel",
                             "*u64:16,*u64:16,*u64:16,*i32:16,*i32:16,i32", defs, 4))
        return 1;
    size_t n = c_elems();
    uint16_t *want = malloc(n * sizeof(uint16_t)), *w = want;
    for (int g = 0; g < GROUPS; g++) {
        int m = SIZES[g][0], nn = SIZES[g][1], k = SIZES[g][2];
        for (int i = 0; i < m; i++)
            for (int j = 0; j < nn; j++) {
                int sum = 0;
                for (int kk = 0; kk < k; kk++)
                    sum += a_at(g, i, kk) * b_at(g, kk, j);
                *w++ = int_to_half(sum);
            }
    }
    /* the kernel as lowered first: every C exact */
    uint16_t *got = malloc(n * sizeof(uint16_t));
    StrBuf err = {0};
    bool ran = run_grouped(low.res.ir, NULL, got, &err);
    CHECK(ran, "grouped_matmul_kernel as lowered: %s", err.data ? err.data : "");
    if (ran)
        CHECK(same_bits(want, got, NULL), "grouped_matmul_kernel as lowered: C differs from C's");
    strbuf_free(&err);
    PassCheck pc = {.kernel = "grouped_matmul_kernel",
                    .max_stages = 4,
                    .out_bytes = n * sizeof(uint16_t),
                    .want = want,
                    .run = run_grouped,
                    .close = same_bits,
                    .after_pass = after_pass};
    interp_passes_check(low.res.ir, &pc);
    free(got);
    free(want);
    interp_passes_lowered_free(&low);
    if (test_failures)
        printf("%d failures\n", test_failures);
    else
        printf("grouped_matmul_exec: tutorial 08's three matmuls exact after every pass\n");
    return test_failures ? 1 : 0;
}
