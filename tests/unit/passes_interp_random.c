/* passes_interp_random.c: kernels made up from a seed keep their meaning through every pass,
 * checked on the interpreter as passes_interp_loops.c checks the tutorials' loops. Each seed
 * writes a small .tri kernel of one fixed signature whose shape it draws:
 * - block sizes, K (a masked tail or none, a loop of no iteration), rows masked off at the end;
 * - the loop's bounds (from 0 or a block on, up to K or growing with program_id) and its
 *   tl.range arguments (num_stages, warp_specialize);
 * - loads masked or not, B row-major, column-major or loaded transposed (`.T`), addresses
 *   computed from the counter or pointers the loop carries and moves on, a row of scales;
 * - what the body does with them: a dot in its forms (accumulating, added, scaled, in fp32 on
 *   FMA, through tl.where, with a scaled operand), no dot, or attention's online softmax (two
 *   dots, the running max and sum carried); the accumulator stored every iteration too;
 * - an `if` on the counter, a row statistic carried beside the accumulator, and a second loop
 *   continuing the first's range, mostly with the same body (fuse_loops' shape);
 * - the passes' options: persistent, stream-K, p @ v an iteration late (overlap_dots).
 * The kernel is lowered once and run; then, for sm_80 and sm_90a and num_stages 1 to 4, taken
 * through the passes one at a time, the interpreter running it after each: every output must be
 * bit-identical to the pass before's (close to the lowered kernel's after canonicalize). The
 * interpreter checks the pipeline's discipline as it runs.
 *
 * ctest runs seeds 1 to SEEDS and checks that they reach every schedule (pipelined, TMA, wgmma,
 * a producer, a loop split). `unit_passes_interp_random FIRST COUNT [-v]` runs COUNT seeds from
 * FIRST (a longer search, by hand: seeds 1 to 8000 passed when it was written); each failure
 * prints its seed and the kernel's source (-v: every seed's). */
#include "exec_test.h"
#include "interp_passes.h"

#include <stdlib.h>
#include <string.h>

enum { SEEDS = 100, NBUF = 5, OUT = 4 }; /* buffers x, y, v, w, out */

typedef struct Gen {
    uint64_t state;
    int bm, bn, bk, k, n, warps;
    int tiles;    /* row tiles of BM: grid programs, or the tiles a nested kernel's programs walk */
    int programs; /* the launch's programs */
    int loops;    /* loops written: 1 or 2 */
    bool persistent, overlap_dots, stream_k; /* PassOptions the passes run with */
    StrBuf src;
} Gen;

/* A draw in [0, n): splitmix64, so that neighbouring seeds draw unrelated kernels. */
static unsigned pick(Gen *g, unsigned n)
{
    uint64_t z = (g->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (unsigned)((z ^ (z >> 31)) % n);
}

/* One loop's body as drawn: its loads' masks and what it does with them. */
typedef struct Body {
    int a_mask, b_mask, w_mask, b_form, op;
    bool store; /* the accumulator stored every iteration too */
} Body;

static Body draw_body(Gen *g, bool row)
{
    return (Body){.a_mask = (int)pick(g, 3),
                  .b_mask = (int)pick(g, 2),
                  .w_mask = (int)pick(g, 2),
                  .b_form = (int)pick(g, 3),
                  .op = (int)pick(g, row ? 10 : 8),
                  .store = pick(g, 8) == 0};
}

/* The loads of one iteration at counter k -- a [BM, BK] of x, b [BK, BN] of y (fp16: y row-major
 * [K + BK, BN], or column-major [BN, K + BK] read as it is or as a transposed [BN, BK] tile),
 * and, when row, w [BK] of the fp32 scales -- and what the iteration does with them. advance:
 * a and b through pointers the loop carries (a_ptrs, b_ptrs), moved on at the iteration's end. */
static void emit_body(Gen *g, const Body *body, bool row, bool advance)
{
    static const char *const a_masks[] = {
        "", ", mask=(k + rk)[None, :] < K, other=0.0",
        ", mask=(rm[:, None] < n) & ((k + rk)[None, :] < K), other=0.0"};
    static const char *const b_masks[] = {"", ", mask=(k + rk)[:, None] < K, other=0.0"};
    static const char *const ops[] = {
        "        acc = tl.dot(a, b, acc)\n", "        acc += tl.dot(a, b)\n",
        "        acc = tl.dot(a * 0.5, b, acc)\n",
        "        p = tl.dot(a, b)\n        acc = acc * 0.75 + p\n",
        "        acc += tl.sum(a.to(tl.float32), 1)[:, None] + tl.sum(b.to(tl.float32), 0)[None, "
        ":]\n",
        "        acc += tl.dot(a.to(tl.float32), b.to(tl.float32), input_precision=\"ieee\")\n",
        "        acc = tl.dot(tl.where(rm[:, None] < n, a, 0.0), b, acc)\n",
        /* attention's online softmax: two dots, the running max and sum carried */
        "        qk = tl.dot(a, b)\n"
        "        m_new = tl.maximum(m_i, tl.max(qk, 1))\n"
        "        pr = tl.exp2(qk - m_new[:, None])\n"
        "        alpha = tl.exp2(m_i - m_new)\n"
        "        l_i = l_i * alpha + tl.sum(pr, 1)\n"
        "        vv = tl.load(v_ptr + (k + rn)[:, None] * BN + rn[None, :])\n"
        "        acc = acc * alpha[:, None]\n"
        "        acc = tl.dot(pr.to(tl.float16), vv, acc)\n"
        "        m_i = m_new\n",
        "        acc += tl.dot((a * w[None, :]).to(tl.float16), b) * 0.5\n",
        "        acc = tl.dot(a, (b * w[:, None]).to(tl.float16), acc)\n"};
    static const char *const b_forms[] = {"(k + rk)[:, None] * BN + rn[None, :]",
                                          "(k + rk)[:, None] + rn[None, :] * (K + BK)"};
    if (advance)
        strbuf_printf(&g->src, "        a = tl.load(a_ptrs%s)\n", a_masks[body->a_mask]);
    else
        strbuf_printf(&g->src,
                      "        a = tl.load(x_ptr + rm[:, None] * K + (k + rk)[None, :]%s)\n",
                      a_masks[body->a_mask]);
    if (body->b_form == 2) /* a [BN, BK] tile, transposed */
        strbuf_printf(
            &g->src,
            "        b = tl.load(y_ptr + rn[:, None] * (K + BK) + (k + rk)[None, :]%s).T\n",
            body->b_mask ? ", mask=(k + rk)[None, :] < K, other=0.0" : "");
    else if (advance)
        strbuf_printf(&g->src, "        b = tl.load(b_ptrs%s)\n", b_masks[body->b_mask]);
    else
        strbuf_printf(&g->src, "        b = tl.load(y_ptr + %s%s)\n", b_forms[body->b_form],
                      b_masks[body->b_mask]);
    if (row)
        strbuf_printf(&g->src, "        w = tl.load(w_ptr + k + rk%s)\n",
                      body->w_mask ? ", mask=k + rk < K, other=1.0" : "");
    strbuf_append(&g->src, ops[body->op]);
    if (body->store)
        strbuf_append(&g->src, "        tl.store(out_ptr + rm[:, None] * BN + rn[None, :], acc, "
                               "mask=rm[:, None] < n)\n");
    if (advance)
        strbuf_printf(&g->src, "        a_ptrs += BK\n        b_ptrs += %s\n",
                      body->b_form == 1 ? "BK" : "BK * BN");
}

/* The pointers a loop from lo carries when it advances them (emit_body). */
static void emit_pointers(Gen *g, const Body *body, const char *lo)
{
    strbuf_printf(&g->src, "    a_ptrs = x_ptr + rm[:, None] * K + (%s + rk)[None, :]\n", lo);
    strbuf_printf(&g->src, "    b_ptrs = y_ptr + (%s + rk)[:, None] %s\n", lo,
                  body->b_form == 1 ? "+ rn[None, :] * (K + BK)" : "* BN + rn[None, :]");
}

/* The kernel as a loop over its row tiles, tutorial 09's persistent form: fewer programs than
 * tiles each take every programs-th tile from its program id (the nested loop flattened into
 * one when flatten). Every line from rm's on moves into the loop, program_id's uses reading the
 * tile instead. */
static void nest(Gen *g, bool flatten)
{
    const char *body = strstr(g->src.data, "    rm = pid * BM");
    StrBuf out = {0};
    strbuf_printf(&out, "%.*s", (int)(body - g->src.data), g->src.data);
    strbuf_printf(&out, "    for tile in tl.range(pid, tl.cdiv(n, BM), tl.num_programs(0)%s):\n",
                  flatten ? ", flatten=True" : "");
    for (const char *line = body; *line;) {
        size_t len = strcspn(line, "\n");
        strbuf_append(&out, "    ");
        for (size_t i = 0; i < len; i++)
            if (!strncmp(line + i, "pid", 3)) {
                strbuf_append(&out, "tile");
                i += 2;
            } else
                strbuf_printf(&out, "%c", line[i]);
        strbuf_append(&out, "\n");
        line += len + (line[len] == '\n');
    }
    strbuf_free(&g->src);
    g->src = out;
    g->programs = 1 + (int)pick(g, (unsigned)g->tiles);
    g->loops++; /* (flattened, one less after flatten_loops) */
}

/* The kernel of g's seed, its sizes in g. */
static void generate(Gen *g, unsigned seed)
{
    g->state = seed;
    static const int blocks[][2] = {{16, 16}, {16, 64}, {32, 32}, {64, 16}, {64, 32}, {32, 64}};
    int b = (int)pick(g, 6);
    g->bm = blocks[b][0];
    g->bn = blocks[b][1];
    g->bk = pick(g, 2) ? 32 : 16;
    g->k = 16 * (1 + (int)pick(g, 6)); /* 16 .. 96, a tail when BK = 32 does not divide it */
    g->tiles = 1 + (int)pick(g, 3);
    g->n = g->tiles * g->bm - (int)pick(g, (unsigned)g->bm); /* the last rows masked off */
    g->warps = g->bm == 64 && pick(g, 4) == 0 ? 8 : 4;
    g->persistent = pick(g, 6) == 0;
    g->overlap_dots = pick(g, 8) == 0;
    g->stream_k = pick(g, 8) == 0;
    bool row = pick(g, 2), stat = pick(g, 3) == 0, branch = pick(g, 3) == 0;
    static const char *const his[] = {"K", "tl.minimum(K, (pid + 1) * BK)",
                                      "tl.maximum(K - BK, 0)"};
    int hi = (int)pick(g, 3);
    const char *lo = hi == 0 && pick(g, 3) == 0 ? "BK" : "0";
    static const char *const ranges[] = {
        "", "", ", num_stages=2", ", num_stages=3", ", warp_specialize=True", ", num_stages=4"};
    const char *range = ranges[pick(g, 6)];
    bool second = hi != 0 && pick(g, 2); /* a second loop from where the first ends */
    g->loops = second ? 2 : 1;
    Body first = draw_body(g, row);
    /* the second loop's body: mostly the first's (then the loops differ in pure arithmetic
     * only, fuse_loops' shape), else one of its own */
    Body next = pick(g, 3) ? first : draw_body(g, row);
    bool advance = pick(g, 3) == 0; /* the loops carry their pointers */

    strbuf_clear(&g->src);
    strbuf_append(&g->src,
                  "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                  "def kern(x_ptr, y_ptr, v_ptr, w_ptr, out_ptr, n, K, BM: tl.constexpr, BN: "
                  "tl.constexpr, BK: tl.constexpr):\n"
                  "    pid = tl.program_id(0)\n"
                  "    rm = pid * BM + tl.arange(0, BM)\n"
                  "    rn = tl.arange(0, BN)\n"
                  "    rk = tl.arange(0, BK)\n"
                  "    acc = tl.zeros((BM, BN), dtype=tl.float32)\n"
                  "    s = tl.zeros((BM,), dtype=tl.float32)\n"
                  "    m_i = tl.zeros((BM,), dtype=tl.float32) - float(\"inf\")\n"
                  "    l_i = tl.zeros((BM,), dtype=tl.float32)\n");
    strbuf_printf(&g->src, "    hi = %s\n", his[hi]);
    if (advance)
        emit_pointers(g, &first, lo);
    strbuf_printf(&g->src, "    for k in tl.range(%s, hi, BK%s):\n", lo, range);
    emit_body(g, &first, row, advance);
    if (branch) {
        static const char *const conds[] = {"k >= BK", "k < K // 2", "k > hi - 2 * BK", "k <= BK"};
        strbuf_printf(&g->src,
                      "        if %s:\n            acc = acc + 1.0\n        else:\n"
                      "            acc = acc - 0.5\n",
                      conds[pick(g, 4)]);
    }
    if (stat)
        strbuf_append(&g->src, "        s += tl.max(a.to(tl.float32), 1)\n");
    if (second) {
        if (advance)
            emit_pointers(g, &next, "hi");
        strbuf_printf(&g->src, "    for k in tl.range(hi, tl.minimum(K, hi + %s), BK%s):\n",
                      pick(g, 2) ? "BK" : "2 * BK", range);
        emit_body(g, &next, row, advance);
        strbuf_append(&g->src, "        acc = acc * 0.5\n");
    }
    strbuf_append(&g->src, "    tl.store(out_ptr + rm[:, None] * BN + rn[None, :], acc + s[:, "
                           "None] + l_i[:, None], mask=rm[:, None] < n)\n");
    g->programs = g->tiles;
    if (pick(g, 4) == 0)
        nest(g, pick(g, 2));
}

/* The buffers' element counts: x [grid BM, K] with a block of slack (an unmasked load past K
 * reads on into the next row, or the slack), y [K + BK, BN] (or its transpose), v [K + 64, BN]
 * (attention's rows k .. k + BN), w [K + BK], out [grid BM, BN]. */
static void buffer_sizes(const Gen *g, size_t *elems)
{
    elems[0] = (size_t)(g->tiles * g->bm * g->k + g->bk);
    elems[1] = (size_t)((g->k + g->bk) * g->bn);
    elems[2] = (size_t)((g->k + 64) * g->bn);
    elems[3] = (size_t)(g->k + g->bk);
    elems[OUT] = (size_t)(g->tiles * g->bm * g->bn);
}

typedef struct Run {
    const Gen *g;
    void *init[NBUF];
    size_t elems[NBUF];
} Run;

static const size_t elem_size[NBUF] = {2, 2, 2, 4, 4};

/* The fp16 bits of x, a normal fp16 number with at most 11 significant bits (exact). */
static uint16_t half_bits(float x)
{
    uint32_t b;
    memcpy(&b, &x, 4);
    uint32_t sign = (b >> 16) & 0x8000;
    int e = (int)((b >> 23) & 255) - 127 + 15;
    return (uint16_t)(sign | ((uint32_t)e << 10) | ((b >> 13) & 1023));
}

static bool run_kernel(const IrFunc *f, const void *ctx, void *out, StrBuf *err)
{
    const Run *r = ctx;
    void *bufs[NBUF];
    InterpArg args[NBUF + 2];
    InterpBuffer ib[NBUF];
    for (int i = 0; i < NBUF; i++) {
        size_t bytes = r->elems[i] * elem_size[i];
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
    memcpy(out, bufs[OUT], r->elems[OUT] * elem_size[OUT]);
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
    int configs, pipelined, tma, wgmma, producer, split;
} seen;

static void tally(const IrFunc *f, const char *pass, const char *arch, bool arch_specific,
                  int stages, const void *ctx)
{
    (void)arch, (void)arch_specific, (void)stages;
    const Run *r = ctx;
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
    char defs[3][32];
    snprintf(defs[0], sizeof defs[0], "BM=%d", g.bm);
    snprintf(defs[1], sizeof defs[1], "BN=%d", g.bn);
    snprintf(defs[2], sizeof defs[2], "BK=%d", g.bk);
    Lowered low = {.file = {name, strdup(g.src.data), g.src.len}, .ndefs = 3};
    for (int i = 0; i < 3; i++) {
        char *eq = strchr(defs[i], '=');
        low.defs[i] = (Define){.name = strndup(defs[i], (size_t)(eq - defs[i])), .value = eq + 1};
    }
    CompileOptions opt = {
        .spec = {.kernel_name = "kern",
                 .signature = "*fp16:16,*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32,i32:16",
                 .defines = low.defs,
                 .ndefines = low.ndefs},
        .emit = EMIT_IR,
        .num_warps = g.warps};
    Diag diag = {0};
    bool ok = driver_compile(&low.file, &opt, &low.res, &diag) && low.res.ir;
    CHECK(ok, "%s does not compile: %s", name, diag.text.data ? diag.text.data : "");
    diag_free(&diag);

    Run r = {.g = &g};
    buffer_sizes(&g, r.elems);
    uint32_t bits = seed * 2654435761u + 7;
    for (int i = 0; i < NBUF; i++) {
        r.init[i] = malloc(r.elems[i] * elem_size[i]);
        for (size_t j = 0; j < r.elems[i]; j++) {
            bits = bits * 1664525u + 1013904223u;
            /* values of magnitude 1/16 .. 1 in steps fp16 holds exactly */
            float v = (float)(16 + (bits >> 24) % 241) / 256.0f * ((bits >> 20) & 1 ? -1.0f : 1.0f);
            if (i == OUT)
                ((float *)r.init[i])[j] = NAN; /* poison: the masked rows stay NaN */
            else if (elem_size[i] == 4)
                ((float *)r.init[i])[j] = v;
            else
                ((uint16_t *)r.init[i])[j] = half_bits(v);
        }
    }
    size_t out_bytes = r.elems[OUT] * elem_size[OUT];
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
        printf("%s: BM=%d BN=%d BK=%d K=%d n=%d programs=%d num_warps=%d%s%s%s\n%s\n", name, g.bm,
               g.bn, g.bk, g.k, g.n, g.programs, g.warps, g.persistent ? " persistent" : "",
               g.overlap_dots ? " overlap_dots" : "", g.stream_k ? " stream_k" : "", g.src.data);
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
        "loops than written\n",
        count, failed, test_failures, seen.configs, seen.pipelined, seen.tma, seen.wgmma,
        seen.producer, seen.split);
    /* ctest's seeds reach every schedule */
    if (argc <= 1)
        CHECK(seen.pipelined && seen.tma && seen.wgmma && seen.producer && seen.split,
              "the seeds no longer reach every schedule: widen SEEDS or the choices");
    return test_failures ? 1 : 0;
}
