/* passes_interp_random.c: kernels made up from a seed keep their meaning through every pass,
 * checked on the interpreter as passes_interp_loops.c checks the tutorials' loops. Each seed
 * writes a small .tri kernel whose shape it draws:
 * - the operands' element type (fp16, bf16, fp8 e4m3 / e5m2, the two fp8 formats mixed);
 * - block sizes (16 to 128), K (a masked tail or none, a loop of no iteration), rows masked off
 *   at the end, 1 to 16 warps;
 * - the loop's bounds (from 0 or a block on, up to K or growing with program_id) and its
 *   tl.range arguments (num_stages, warp_specialize);
 * - loads masked or not, B row-major, column-major or loaded transposed (`.T`), addresses
 *   computed from the counter or pointers the loop carries and moves on, block pointers it
 *   advances (bounds-checked) or tensor descriptors, a row of scales;
 * - what the body does with them: a dot in its forms (accumulating or added, fp8's with
 *   max_num_imprecise_acc or not; scaled, in fp32 on FMA, through tl.where, with a scaled
 *   operand), no dot, or attention's online softmax (two dots, the running max and sum
 *   carried); the accumulator stored every iteration too;
 * - an `if` on the counter, a row statistic carried beside the accumulator, and a second loop
 *   continuing the first's range, mostly with the same body (fuse_loops' shape);
 * - ops between the loops and the store (random_kernels.h random_epilogue);
 * - the passes' options: persistent, stream-K, p @ v an iteration late (overlap_dots), ping-pong
 *   consumer groups, TMA stores.
 * The kernel is lowered once and run; then, for sm_80 and sm_90a and num_stages 1 to 4, taken
 * through the passes one at a time, the interpreter running it after each: every output must be
 * bit-identical to the pass before's (close to the lowered kernel's after canonicalize). The
 * interpreter checks the pipeline's discipline as it runs.
 *
 * ctest runs seeds 1 to SEEDS and checks that they reach every schedule (pipelined, TMA, wgmma,
 * a producer, a loop split). `unit_passes_interp_random FIRST COUNT [-v]` runs COUNT seeds from
 * FIRST (a longer search, by hand: docs/passes.md says how far it went); each failure
 * prints its seed and the kernel's source (-v: every seed's). */
#include "exec_test.h"
#include "interp_passes.h"
#include "random_kernels.h"

#include <stdlib.h>
#include <string.h>

enum { SEEDS = 100, NBUF = RANDOM_NBUF, OUT = RANDOM_OUT };

typedef struct Run {
    const Gen *g;
    void *init[NBUF];
    size_t elems[NBUF];
} Run;

static bool run_kernel(const IrFunc *f, const void *ctx, void *out, StrBuf *err)
{
    const Run *r = ctx;
    void *bufs[NBUF];
    InterpArg args[NBUF + 2];
    InterpBuffer ib[NBUF];
    for (int i = 0; i < NBUF; i++) {
        size_t bytes = r->elems[i] * random_elem_size(r->g, i);
        bufs[i] = malloc(bytes);
        memcpy(bufs[i], r->init[i], bytes);
        args[i].ptr = (uint64_t)(uintptr_t)bufs[i];
        ib[i] = (InterpBuffer){(uint64_t)(uintptr_t)bufs[i], bytes};
    }
    args[NBUF].i = r->g->n;
    args[NBUF + 1].i = r->g->k;
    InterpLaunch l = {.grid = {r->g->programs, 1, 1},
                      .args = args,
                      .nargs = NBUF + 2,
                      .buffers = ib,
                      .nbuffers = NBUF};
    bool ok = interp_run(f, &l, err);
    memcpy(out, bufs[OUT], r->elems[OUT] * random_elem_size(r->g, OUT));
    for (int i = 0; i < NBUF; i++)
        free(bufs[i]);
    return ok;
}

/* Every element within 2e-2 (relative to max(1, |want|)) of want's. */
static bool close_enough(const void *want, const void *got, const void *ctx)
{
    const Run *r = ctx;
    const float *w = want, *g = got;
    for (size_t i = 0; i < r->elems[OUT]; i++)
        if (!(fabsf(w[i] - g[i]) <= 2e-2f * fmaxf(1.0f, fabsf(w[i]))) &&
            !(isnan(w[i]) && isnan(g[i])))
            return false;
    return true;
}

/* What the passes made of the kernels, after the last pass (shared_alloc), over every seed, arch
 * and stage count: so that the seeds are known to reach the schedules they are meant to check. */
static struct {
    int configs, pipelined, tma, wgmma, producer, split, deferred;
} seen;

/* loops the pipeline marked for unroll_loops (a promoted fp8 dot's sums added a step late) */
static int marked_loops(const IrRegion *r)
{
    int n = 0;
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        n += op->code == OP_FOR && op->attr[3] == 2;
        for (int k = 0; k < op->nregions; k++)
            n += marked_loops(&op->regions[k]);
    }
    return n;
}

static void tally(const IrFunc *f, const char *pass, const char *arch, bool arch_specific,
                  int stages, const void *ctx)
{
    (void)arch, (void)arch_specific, (void)stages;
    const Run *r = ctx;
    if (!strcmp(pass, "pipeline"))
        seen.deferred += marked_loops(&f->body) > 0;
    if (strcmp(pass, "shared_alloc"))
        return;
    seen.configs++;
    int copies = count_ops(&f->body, OP_ASYNC_COPY), tma = count_ops(&f->body, OP_TMA_LOAD);
    seen.pipelined += copies + tma > 0;
    seen.tma += tma > 0;
    seen.wgmma += count_ops(&f->body, OP_WGMMA) > 0;
    seen.producer += f->ws.producer_warps > 0;
    /* more loops than written (and the loop over tiles a persistent kernel adds) */
    seen.split += count_ops(&f->body, OP_FOR) > r->g->loops + (f->persistent.on ? 1 : 0);
}

/* Seed's kernel through the passes; false (with its source printed) when a check failed. */
static bool run_seed(unsigned seed, bool verbose)
{
    int failures_before = test_failures;
    Gen g = {0};
    generate(&g, seed);
    char name[32];
    snprintf(name, sizeof name, "seed %u", seed);
    RandomDefines defs;
    random_defines(&g, &defs);
    Lowered low;
    bool ok = interp_passes_lower_source(&low, (SrcFile){name, strdup(g.src.data), g.src.len},
                                         "kern", g.signature, defs.list, g.warps);

    Run r = {.g = &g};
    buffer_sizes(&g, r.elems);
    random_inputs(&g, seed, r.elems, r.init);
    size_t out_bytes = r.elems[OUT] * random_elem_size(&g, OUT);
    void *want = malloc(out_bytes);
    StrBuf err = {0};
    if (ok) {
        ok = run_kernel(low.res.ir, &r, want, &err);
        CHECK(ok, "%s as lowered: %s", name, err.data ? err.data : "");
    }
    PassCheck pc = {.kernel = name,
                    .num_warps = g.warps,
                    .max_stages = 4,
                    .first_arch = g.overlap_dots ? 1 : 0, /* (wgmma: sm_90a) */
                    .persistent = g.persistent,
                    .overlap_dots = g.overlap_dots,
                    .stream_k = g.stream_k,
                    .pingpong = g.pingpong,
                    .tma_store = g.tma_store,
                    .out_bytes = out_bytes,
                    .want = want,
                    .ctx = &r,
                    .run = run_kernel,
                    .close = close_enough,
                    .after_pass = tally};
    if (ok)
        interp_passes_check(low.res.ir, &pc);
    bool passed = test_failures == failures_before;
    if (!passed || verbose)
        printf("%s: BM=%d BN=%d BK=%d K=%d n=%d programs=%d num_warps=%d signature=%s%s%s%s%s%s\n"
               "%s\n",
               name, g.bm, g.bn, g.bk, g.k, g.n, g.programs, g.warps, g.signature,
               g.persistent ? " persistent" : "", g.overlap_dots ? " overlap_dots" : "",
               g.stream_k ? " stream_k" : "", g.pingpong ? " pingpong" : "",
               g.tma_store ? " tma_store" : "", g.src.data);
    strbuf_free(&err);
    free(want);
    for (int i = 0; i < NBUF; i++)
        free(r.init[i]);
    interp_passes_lowered_free(&low);
    strbuf_free(&g.src);
    return passed;
}

int main(int argc, char **argv)
{
    unsigned first = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1;
    unsigned count = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : SEEDS;
    int failed = 0;
    for (unsigned s = first; s < first + count; s++)
        failed += !run_seed(s, argc > 3 && !strcmp(argv[3], "-v"));
    printf(
        "passes_interp_random: %u seeds, %d failed (%d checks); of %d compiles (seed, arch, "
        "num_stages) %d pipelined, %d through TMA, %d on wgmma, %d with a producer, %d with more "
        "loops than written, %d with promoted sums added a step late\n",
        count, failed, test_failures, seen.configs, seen.pipelined, seen.tma, seen.wgmma,
        seen.producer, seen.split, seen.deferred);
    /* ctest's seeds reach every schedule */
    if (argc <= 1)
        CHECK(seen.pipelined && seen.tma && seen.wgmma && seen.producer && seen.split,
              "the seeds no longer reach every schedule: widen SEEDS or the choices");
    return test_failures ? 1 : 0;
}
