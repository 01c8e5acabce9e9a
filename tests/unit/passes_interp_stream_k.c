/* passes_interp_stream_k.c: stream_k (passes/stream_k.c) keeps the seeds' matmuls what they were,
 * on the interpreter after every pass (interp_passes.h), for sm_80 and sm_90a and num_stages 1 to
 * 5 (4 and 5: the stage counts --deep-pipeline gives a stream_k twin, rings deeper than the
 * shortest K loops), with persistent launches of several program counts over one grid of tiles: every tile whole
 * (programs dividing the tiles), rounds of whole tiles then the last round and one more split
 * along K between programs, every tile split, more programs than tiles, and short K loops.
 *   - seed 2 (kernel_matmul: fp16 C, nothing masked, addresses from k): K = 0 to 5 steps;
 *   - seed 1 (matmul_kernel, tutorial 03's: fp32 C, a_ptrs and b_ptrs advanced every iteration,
 *     so a piece starting k0 steps in starts its pointers k0 steps on; M, N and K off the blocks,
 *     the K tail masked, the rows wrapped by % M and the stores masked);
 *   - seed 2 with its K loop warp-specialized (ws_matmul): on sm_90a from 4 stages a producer
 *     warpgroup runs the loop over units, its ring of slots going on across whole tiles and
 *     pieces alike (passes/warp_specialize.c; on fewer slots a loop of one wgmma keeps none).
 * The inputs are small integers, so every fp32 partial sum is exact and the split tiles' sums are
 * bit-identical to the unsplit loop's. The pass must have made each kernel persistent. */
#include "exec_test.h"
#include "interp_passes.h"

#include <stdlib.h>
#include <string.h>

enum { BM = 64, BN = 32, BK = 16, MAXM = 3 * BM, MAXN = 3 * BN, MAXK = 5 * BK };

/* One seed kernel's shapes: both take (a, b, c, M, N, K, strides of A, B, C). */
typedef struct Seed {
    const char *file;
    const char *kernel;
    const char *signature;
    const char *defs[7];
    int m, n;              /* C's rows and columns */
    int c_bytes;           /* C's element bytes */
    bool warp_specialized; /* its K loop asks warp_specialize=True: on sm_90a from 4 stages the
                              producer runs the loop over units (passes/warp_specialize.c) */
} Seed;

typedef struct Case {
    const Seed *seed;
    int k;        /* K */
    int programs; /* InterpLaunch.persistent_programs */
} Case;

static uint16_t a_init[MAXM * MAXK], b_init[MAXK * MAXN];

/* An fp16 small integer -3 .. 3 (exact products and sums in fp32). */
static uint16_t small_int_half(int v)
{
    static const uint16_t halves[7] = {0xc200, 0xc000, 0xbc00, 0x0000, 0x3c00, 0x4000, 0x4200};
    return halves[v + 3];
}

static size_t c_size(const Seed *s) { return (size_t)s->m * s->n * s->c_bytes; }

static bool run_seed(const IrFunc *f, const void *ctx, void *out, StrBuf *err)
{
    const Case *c = ctx;
    const Seed *s = c->seed;
    uint16_t *a = malloc(sizeof a_init), *b = malloc(sizeof b_init);
    memcpy(a, a_init, sizeof a_init);
    memcpy(b, b_init, sizeof b_init);
    memset(out, 0xff, c_size(s));
    InterpArg args[12] = {
        {.ptr = (uint64_t)(uintptr_t)a},
        {.ptr = (uint64_t)(uintptr_t)b},
        {.ptr = (uint64_t)(uintptr_t)out},
        {.i = s->m},
        {.i = s->n},
        {.i = c->k},
        {.i = c->k}, /* stride_am */
        {.i = 1},
        {.i = s->n}, /* stride_bk */
        {.i = 1},
        {.i = s->n}, /* stride_cm */
        {.i = 1},
    };
    InterpBuffer bufs[3] = {{(uint64_t)(uintptr_t)a, sizeof a_init},
                            {(uint64_t)(uintptr_t)b, sizeof b_init},
                            {(uint64_t)(uintptr_t)out, c_size(s)}};
    InterpLaunch l = {.grid = {((s->m + BM - 1) / BM) * ((s->n + BN - 1) / BN), 1, 1},
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
    const Case *c = ctx;
    return memcmp(want, got, c_size(c->seed)) == 0;
}

/* After stream_k the kernel is persistent, with one fp32 partial a program. */
static void after_pass(const IrFunc *f, const char *pass, const char *arch, bool arch_specific,
                       int stages, const void *ctx)
{
    const Case *c = ctx;
    if (!strcmp(pass, "warp_specialize") && c->seed->warp_specialized && arch_specific)
        CHECK(f->ws.producer_warps == (stages >= 4 ? 4 : 0),
              "%s, K = %d, %d programs, %s, %d stages: %d producer warps (a producer from 4 "
              "slots)",
              c->seed->kernel, c->k, c->programs, arch, stages, f->ws.producer_warps);
    if (!strcmp(pass, "stream_k"))
        CHECK(f->persistent.on && f->persistent.workspace_bytes == 4 * BM * BN,
              "%s, K = %d, %d programs, %s, %d stages: stream_k left the kernel not persistent "
              "(workspace %lld bytes)",
              c->seed->kernel, c->k, c->programs, arch, stages,
              (long long)f->persistent.workspace_bytes);
}

static void check_seed(const Seed *seed, const Case *cases, size_t ncases)
{
    Lowered low;
    if (!interp_passes_lower(&low, seed->file, seed->kernel, seed->signature, seed->defs, 4))
        return;
    void *want = malloc(c_size(seed));
    for (size_t i = 0; i < ncases; i++) {
        StrBuf err = {0};
        bool ok = run_seed(low.res.ir, &cases[i], want, &err);
        CHECK(ok, "%s as lowered, K = %d: %s", seed->kernel, cases[i].k, err.data ? err.data : "");
        strbuf_free(&err);
        if (!ok)
            continue;
        char name[96];
        snprintf(name, sizeof name, "%s K = %d, %d programs", seed->kernel, cases[i].k,
                 cases[i].programs);
        PassCheck pc = {.kernel = name,
                        .max_stages = 5,
                        .stream_k = true,
                        .out_bytes = c_size(seed),
                        .want = want,
                        .ctx = &cases[i],
                        .run = run_seed,
                        .close = same,
                        .after_pass = after_pass};
        interp_passes_check(low.res.ir, &pc);
    }
    free(want);
    interp_passes_lowered_free(&low);
}

int main(void)
{
    uint32_t rng = 5;
    for (size_t i = 0; i < sizeof a_init / 2; i++) {
        rng = rng * 1664525u + 1013904223u;
        a_init[i] = small_int_half((int)((rng >> 16) % 7) - 3);
    }
    for (size_t i = 0; i < sizeof b_init / 2; i++) {
        rng = rng * 1664525u + 1013904223u;
        b_init[i] = small_int_half((int)((rng >> 16) % 7) - 3);
    }
    /* seed 2: 9 tiles of 5 K steps. 3 programs run 3 whole tiles each; 4 run one round of whole
     * tiles, then split the last tile and one more round (5 tiles, 25 steps, 7/7/7/4: tile 4
     * between programs 0 and 1, ...); 8 split all 9 tiles' 45 steps 6 a program; 9 and more run a
     * tile each; 5 and 7 leave more than a quarter of their last round busy, so they run whole
     * tiles only; 1 runs them all; K = 0, one K step and two */
    static const Seed seed2 = {
        "examples/matmul.tri",
        "kernel_matmul",
        "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
        {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=32", "BLOCK_SIZE_K=16", "GROUP_SIZE_M=2",
         "T_C=tl.float16", "T_ACC=tl.float32", NULL},
        MAXM,
        MAXN,
        2,
        false};
    const Case seed2_cases[] = {{&seed2, 5 * BK, 3}, {&seed2, 5 * BK, 4},  {&seed2, 5 * BK, 8},
                                {&seed2, 5 * BK, 9}, {&seed2, 5 * BK, 12}, {&seed2, 5 * BK, 5},
                                {&seed2, 5 * BK, 7}, {&seed2, 5 * BK, 1},  {&seed2, 0, 4},
                                {&seed2, BK, 4},     {&seed2, 2 * BK, 4},  {&seed2, 2 * BK, 8}};
    check_seed(&seed2, seed2_cases, sizeof seed2_cases / sizeof seed2_cases[0]);
    /* seed 2 with its K loop warp-specialized (tests/lit/codegen/warp_specialize.tri's
     * ws_matmul): on sm_90a the producer runs the loop over units, its ring of slots going on
     * from unit to unit, whole tiles and pieces alike */
    static const Seed ws_seed2 = {
        "tests/lit/codegen/warp_specialize.tri",
        "ws_matmul",
        "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
        {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=32", "BLOCK_SIZE_K=16", "GROUP_SIZE_M=2", NULL},
        MAXM,
        MAXN,
        2,
        true};
    Case ws_cases[sizeof seed2_cases / sizeof seed2_cases[0]];
    for (size_t i = 0; i < sizeof ws_cases / sizeof ws_cases[0]; i++)
        ws_cases[i] = (Case){&ws_seed2, seed2_cases[i].k, seed2_cases[i].programs};
    check_seed(&ws_seed2, ws_cases, sizeof ws_cases / sizeof ws_cases[0]);
    /* seed 1: C [150, 90] (3 x 3 tiles, the last row and column of tiles partly outside), K = 77
     * (5 steps, the last 13 wide) and 16 (one step) */
    static const Seed seed1 = {
        "examples/matmul.tri",
        "matmul_kernel",
        "*fp16:16,*fp16:16,*fp32:16,i32,i32,i32,i32,i32:1,i32,i32:1,i32,i32:1",
        {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=32", "BLOCK_SIZE_K=16", NULL},
        150,
        90,
        4,
        false};
    const Case seed1_cases[] = {{&seed1, 77, 4}, {&seed1, 77, 8}, {&seed1, 77, 3}, {&seed1, 16, 8}};
    check_seed(&seed1, seed1_cases, sizeof seed1_cases / sizeof seed1_cases[0]);
    if (test_failures)
        printf("%d failures\n", test_failures);
    else
        printf("passes_interp_stream_k: every pass kept the seeds' results, split or whole\n");
    return test_failures ? 1 : 0;
}
