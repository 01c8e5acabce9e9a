/* passes_interp_stream_k.c: stream_k (passes/stream_k.c) keeps seed 2's matmul what it was, on
 * the interpreter after every pass (interp_passes.h), for sm_80 and sm_90a and num_stages 1 to 3,
 * with persistent launches of several program counts over one grid of tiles: every tile whole
 * (programs dividing the tiles), rounds of whole tiles then the last round and one more split
 * along K between programs, every tile split, more programs than tiles, and K = 0, one K step
 * and two. The
 * inputs are small integers, so every fp32 partial sum is exact and the split tiles' sums are
 * bit-identical to the unsplit loop's. The pass must have made the kernel persistent. */
#include "exec_test.h"
#include "interp_passes.h"

#include <stdlib.h>
#include <string.h>

enum { BM = 64, BN = 32, BK = 16, M = 3 * BM, N = 3 * BN, KMAX = 5 * BK };

typedef struct Case {
    int k;        /* K: a multiple of BK (seed 2 masks nothing) */
    int programs; /* InterpLaunch.persistent_programs */
} Case;

static uint16_t a_init[M * KMAX], b_init[KMAX * N];

/* An fp16 small integer -3 .. 3 (exact products and sums in fp32). */
static uint16_t small_int_half(int v)
{
    static const uint16_t halves[7] = {0xc200, 0xc000, 0xbc00, 0x0000, 0x3c00, 0x4000, 0x4200};
    return halves[v + 3];
}

static bool run_seed2(const IrFunc *f, const void *ctx, void *out, StrBuf *err)
{
    const Case *c = ctx;
    uint16_t *a = malloc(sizeof a_init), *b = malloc(sizeof b_init);
    memcpy(a, a_init, sizeof a_init);
    memcpy(b, b_init, sizeof b_init);
    memset(out, 0xff, (size_t)M * N * 2);
    InterpArg args[12] = {
        {.ptr = (uint64_t)(uintptr_t)a},
        {.ptr = (uint64_t)(uintptr_t)b},
        {.ptr = (uint64_t)(uintptr_t)out},
        {.i = M},
        {.i = N},
        {.i = c->k},
        {.i = c->k}, /* stride_am */
        {.i = 1},
        {.i = N}, /* stride_bk */
        {.i = 1},
        {.i = N}, /* stride_cm */
        {.i = 1},
    };
    InterpBuffer bufs[3] = {{(uint64_t)(uintptr_t)a, sizeof a_init},
                            {(uint64_t)(uintptr_t)b, sizeof b_init},
                            {(uint64_t)(uintptr_t)out, (size_t)M * N * 2}};
    InterpLaunch l = {.grid = {(M / BM) * (N / BN), 1, 1},
                      .args = args,
                      .nargs = 12,
                      .buffers = bufs,
                      .nbuffers = 3,
                      .persistent_programs = c->programs};
    bool ok = interp_run(f, &l, err);
    free(a);
    free(b);
    return ok;
}

static bool same(const void *want, const void *got, const void *ctx)
{
    (void)ctx;
    return memcmp(want, got, (size_t)M * N * 2) == 0;
}

/* After stream_k the kernel is persistent. */
static void after_pass(const IrFunc *f, const char *pass, const char *arch, bool arch_specific,
                       int stages, const void *ctx)
{
    (void)arch_specific;
    const Case *c = ctx;
    if (!strcmp(pass, "stream_k"))
        CHECK(f->persistent.on && f->persistent.workspace_bytes == 4 * BM * BN,
              "K = %d, %d programs, %s, %d stages: stream_k left the kernel not persistent "
              "(workspace %lld bytes)",
              c->k, c->programs, arch, stages, (long long)f->persistent.workspace_bytes);
}

int main(void)
{
    uint32_t seed = 5;
    for (size_t i = 0; i < sizeof a_init / 2; i++) {
        seed = seed * 1664525u + 1013904223u;
        a_init[i] = small_int_half((int)((seed >> 16) % 7) - 3);
    }
    for (size_t i = 0; i < sizeof b_init / 2; i++) {
        seed = seed * 1664525u + 1013904223u;
        b_init[i] = small_int_half((int)((seed >> 16) % 7) - 3);
    }
    const char *defs[] = {"BLOCK_SIZE_M=64",
                          "BLOCK_SIZE_N=32",
                          "BLOCK_SIZE_K=16",
                          "GROUP_SIZE_M=2",
                          "T_C=tl.float16",
                          "T_ACC=tl.float32",
                          NULL};
    Lowered low;
    if (!interp_passes_lower(&low, "examples/matmul.tri", "kernel_matmul",
                             "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,"
                             "i32:1,i32:16,i32:1",
                             defs, 4))
        return 1;
    /* 9 tiles of 5 K steps: 3 programs run 3 whole tiles each; 4 run one round of whole tiles,
     * then split the last tile and one more round (5 tiles, 25 steps, 7/7/7/4: tile 4 between
     * programs 0 and 1, ...); 8 split all 9 tiles' 45 steps 6 a program (the last 3); 9 and more
     * run a tile each; 5 and 7 leave more than a quarter of their last round busy, so they run
     * whole tiles only; 1 runs them all; K = 0, one K step and two */
    const Case cases[] = {{5 * BK, 3},  {5 * BK, 4}, {5 * BK, 8}, {5 * BK, 9},
                          {5 * BK, 12}, {5 * BK, 5}, {5 * BK, 7}, {5 * BK, 1},
                          {0, 4},       {BK, 4},     {2 * BK, 4}, {2 * BK, 8}};
    uint16_t *want = malloc((size_t)M * N * 2);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        StrBuf err = {0};
        bool ok = run_seed2(low.res.ir, &cases[i], want, &err);
        CHECK(ok, "lowered kernel, K = %d: %s", cases[i].k, err.data ? err.data : "");
        strbuf_free(&err);
        if (!ok)
            continue;
        char name[64];
        snprintf(name, sizeof name, "kernel_matmul K = %d, %d programs", cases[i].k,
                 cases[i].programs);
        PassCheck pc = {.kernel = name,
                        .max_stages = 3,
                        .stream_k = true,
                        .out_bytes = (size_t)M * N * 2,
                        .want = want,
                        .ctx = &cases[i],
                        .run = run_seed2,
                        .close = same,
                        .after_pass = after_pass};
        interp_passes_check(low.res.ir, &pc);
    }
    free(want);
    interp_passes_lowered_free(&low);
    if (test_failures)
        printf("%d failures\n", test_failures);
    else
        printf("passes_interp_stream_k: every pass kept seed 2's results, split or whole\n");
    return test_failures ? 1 : 0;
}
