/* random_kernels.h: the kernels unit/passes_interp_random (every pass on the interpreter) and
 * unit/codegen_gpu_random (the GPU against the interpreter) make up from seeds: one signature
 * (x, y of one drawn element type -- fp16, bf16, fp8 e4m3 or e5m2, the two fp8 formats possibly
 * mixed -- v fp16, w fp32, out fp32, n, K; constexprs BM, BN, BK), a shape drawn per seed
 * (passes_interp_random.c's header lists what is drawn), the buffers' sizes and their inputs.
 * Header-only, so that each test stays one executable. */
#ifndef TRIC_UNIT_RANDOM_KERNELS_H
#define TRIC_UNIT_RANDOM_KERNELS_H

#include "support/support.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RANDOM_NBUF = 5, RANDOM_OUT = 4 }; /* buffers x, y, v, w, out */

/* The element types x and y may have (v is fp16, w and out fp32): the signature's name, the
 * language's, bytes, and the format's exponent bias and stored mantissa bits. */
typedef enum { RT_FP16, RT_BF16, RT_FP8E4, RT_FP8E5, RT_FP32 } RandomType;
static const struct {
    const char *sig, *lang;
    int bytes, bias, mantissa;
} random_types[] = {{"fp16", "tl.float16", 2, 15, 10},
                    {"bf16", "tl.bfloat16", 2, 127, 7},
                    {"fp8e4nv", "tl.float8e4nv", 1, 7, 3},
                    {"fp8e5", "tl.float8e5", 1, 15, 2},
                    {"fp32", "tl.float32", 4, 127, 23}};

typedef struct Gen {
    uint64_t state;
    int bm, bn, bk, k, n, warps;
    int scale;         /* every size doubled (2) or as first drawn (1) */
    RandomType xt, yt; /* x's and y's element types */
    int epilogue[3];   /* random_epilogue's ops after the loops, 0 for none */
    /* a and b loaded through pointers (0), block pointers (1) or descriptors (2); the last
     * store through pointers (0), then an atomic add (1), a block pointer (2), a descriptor (3) */
    int tiles_form, store_form;
    /* fp8: the accumulating dots' max_num_imprecise_acc (wgmma's partial sums): "" none, else
     * the argument's text */
    const char *imprecise;
    char signature[80];
    int tiles;    /* row tiles of BM: grid programs, or the tiles a nested kernel's programs walk */
    int programs; /* the launch's programs */
    int loops;    /* loops written: 1 or 2 */
    bool persistent, overlap_dots, stream_k; /* PassOptions the passes run with */
    bool pingpong, tma_store;                /* ... and these, from widen's stream */
    StrBuf src;
} Gen;

/* A draw in [0, n): splitmix64, so that neighbouring seeds draw unrelated kernels. */
static inline unsigned pick(Gen *g, unsigned n)
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

static inline Body draw_body(Gen *g, bool row)
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
static inline void emit_body(Gen *g, const Body *body, bool row, bool advance)
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
        NULL, NULL}; /* 8, 9: a scaled operand, below */
    static const char *const b_forms[] = {"(k + rk)[:, None] * BN + rn[None, :]",
                                          "(k + rk)[:, None] + rn[None, :] * (K + BK)"};
    if (g->tiles_form == 1) { /* block pointers, bounds-checked, moved on below */
        strbuf_append(&g->src, "        a = tl.load(a_bp, boundary_check=(0, 1), "
                               "padding_option=\"zero\")\n");
        strbuf_printf(
            &g->src,
            "        b = tl.load(b_bp, boundary_check=(0, 1), padding_option=\"zero\")%s\n",
            body->b_form == 2 ? ".T" : "");
    } else if (g->tiles_form == 2) { /* descriptors: out of bounds reads zero */
        strbuf_append(&g->src, "        a = a_desc.load([pid * BM, k])\n");
        strbuf_append(&g->src, body->b_form == 0 ? "        b = b_desc.load([k, 0])\n"
                                                 : "        b = b_desc.load([0, k]).T\n");
    } else if (advance)
        strbuf_printf(&g->src, "        a = tl.load(a_ptrs%s)\n", a_masks[body->a_mask]);
    else
        strbuf_printf(&g->src,
                      "        a = tl.load(x_ptr + rm[:, None] * K + (k + rk)[None, :]%s)\n",
                      a_masks[body->a_mask]);
    if (g->tiles_form) {          /* (b loaded with a, above) */
    } else if (body->b_form == 2) /* a [BN, BK] tile, transposed */
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
    bool fp8 = random_types[g->xt].bytes == 1;
    if (body->op == 2 && fp8) /* (fp8 has no arithmetic in tric: the scale moves to acc) */
        strbuf_append(&g->src, "        acc = tl.dot(a, b, acc * 2.0) * 0.5\n");
    else if (body->op == 6 && fp8)
        strbuf_append(
            &g->src,
            "        acc = tl.dot(tl.where(rm[:, None] < n, a, tl.zeros_like(a)), b, acc)\n");
    else if ((body->op == 0 || body->op == 1) && g->imprecise[0])
        strbuf_printf(&g->src,
                      body->op == 0 ? "        acc = tl.dot(a, b, acc, max_num_imprecise_acc=%s)\n"
                                    : "        acc += tl.dot(a, b, max_num_imprecise_acc=%s)\n",
                      g->imprecise);
    else if (body->op == 8 || body->op == 9) /* a scaled operand, rounded to its own type */
        strbuf_printf(&g->src,
                      body->op == 8 ? "        acc += tl.dot((a * w[None, :]).to(%s), b) * 0.5\n"
                                    : "        acc = tl.dot(a, (b * w[:, None]).to(%s), acc)\n",
                      random_types[body->op == 8 ? g->xt : g->yt].lang);
    else
        strbuf_append(&g->src, ops[body->op]);
    if (body->store)
        strbuf_append(&g->src, "        tl.store(out_ptr + rm[:, None] * BN + rn[None, :], acc, "
                               "mask=rm[:, None] < n)\n");
    if (advance)
        strbuf_printf(&g->src, "        a_ptrs += BK\n        b_ptrs += %s\n",
                      body->b_form == 1 ? "BK" : "BK * BN");
    if (g->tiles_form == 1)
        strbuf_printf(
            &g->src,
            "        a_bp = tl.advance(a_bp, (0, BK))\n        b_bp = tl.advance(b_bp, %s)\n",
            body->b_form == 2 ? "(0, BK)" : "(BK, 0)");
}

/* The block pointers (tiles_form 1) a loop from lo moves on, or the descriptors (2) it loads
 * through: x as [n, K] (rows past n and columns past K read zero), y as [K, BN] row-major or
 * column-major, or as [BN, K] whose tiles are transposed (a descriptor's last stride is 1, so
 * column-major B is always read that way through one). */
static inline void emit_tiles(Gen *g, const Body *body, const char *lo)
{
    if (g->tiles_form == 1) {
        strbuf_printf(&g->src,
                      "    a_bp = tl.make_block_ptr(x_ptr, shape=(n, K), strides=(K, 1), "
                      "offsets=(pid * BM, %s), block_shape=(BM, BK), order=(1, 0))\n",
                      lo);
        static const char *const b_bps[] = {
            "shape=(K, BN), strides=(BN, 1), offsets=(%s, 0), block_shape=(BK, BN), order=(1, 0)",
            "shape=(K, BN), strides=(1, K + BK), offsets=(%s, 0), block_shape=(BK, BN), order=(0, "
            "1)",
            "shape=(BN, K), strides=(K + BK, 1), offsets=(0, %s), block_shape=(BN, BK), order=(1, "
            "0)"};
        strbuf_append(&g->src, "    b_bp = tl.make_block_ptr(y_ptr, ");
        strbuf_printf(&g->src, b_bps[body->b_form], lo);
        strbuf_append(&g->src, ")\n");
    } else if (g->tiles_form == 2) {
        strbuf_append(&g->src, "    a_desc = tl.make_tensor_descriptor(x_ptr, shape=[n, K], "
                               "strides=[K, 1], block_shape=[BM, BK])\n");
        strbuf_append(&g->src, body->b_form == 0
                                   ? "    b_desc = tl.make_tensor_descriptor(y_ptr, shape=[K, BN], "
                                     "strides=[BN, 1], block_shape=[BK, BN])\n"
                                   : "    b_desc = tl.make_tensor_descriptor(y_ptr, shape=[BN, K], "
                                     "strides=[K + BK, 1], block_shape=[BN, BK])\n");
    }
}

/* The pointers a loop from lo carries when it advances them (emit_body). */
static inline void emit_pointers(Gen *g, const Body *body, const char *lo)
{
    strbuf_printf(&g->src, "    a_ptrs = x_ptr + rm[:, None] * K + (%s + rk)[None, :]\n", lo);
    strbuf_printf(&g->src, "    b_ptrs = y_ptr + (%s + rk)[:, None] %s\n", lo,
                  body->b_form == 1 ? "+ rn[None, :] * (K + BK)" : "* BN + rn[None, :]");
}

/* The kernel as a loop over its row tiles, tutorial 09's persistent form: fewer programs than
 * tiles each take every programs-th tile from its program id (the nested loop flattened into
 * one when flatten). Every line from rm's on moves into the loop, program_id's uses reading the
 * tile instead. */
static inline void nest(Gen *g, bool flatten)
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

/* What the kernel may do with acc between its loops and its store, beyond adding the row
 * statistics: a scan and reductions along either axis in acc's own layout, an argmax (ties to
 * the lowest index), tutorial 09's epilogue split (halves of each row swapped through reshape,
 * permute, split and join), a round trip through fp16, a select, a transpose's round trip; then
 * an integer count, pairs swapped through split and interleave, a clamp beside an argmin, a
 * reversed scan. */
enum { RANDOM_EPILOGUES_FIRST = 9, RANDOM_EPILOGUES = 13 }; /* (the first nine drawn first) */
static const char *const random_epilogue[RANDOM_EPILOGUES] = {
    "",
    "    acc = tl.cumsum(acc, 1)\n",
    "    acc = tl.cumsum(acc, 0) * 0.25\n",
    "    acc = acc - tl.max(acc, 0)[None, :]\n",
    "    acc += tl.argmax(acc, 1).to(tl.float32)[:, None]\n",
    "    c0, c1 = tl.split(acc.reshape(BM, 2, BN // 2).permute(0, 2, 1))\n"
    "    acc = tl.join(c1, c0).permute(0, 2, 1).reshape(BM, BN)\n",
    "    acc = acc.to(tl.float16).to(tl.float32)\n",
    "    acc = tl.where(acc > 0, acc, acc * 0.25) + tl.min(acc, 1)[:, None]\n",
    "    acc = tl.trans(tl.trans(acc) * 0.5)\n",
    "    acc += tl.sum((acc > 0).to(tl.int32), 1).to(tl.float32)[:, None]\n",
    "    c0, c1 = tl.split(acc.reshape(BM, BN // 2, 2))\n"
    "    acc = tl.interleave(c1, c0)\n",
    "    acc = tl.clamp(acc, -1.5, 1.5) + tl.argmin(acc, 0).to(tl.float32)[None, :]\n",
    "    acc = tl.cumsum(acc, 0, reverse=True)\n"};

/* The kernel's last store, of acc and the row statistics, in g's store_form: rows past n are
 * left alone in each (the mask, the block pointer's and the descriptor's bounds). The atomic
 * add comes after a barrier, since its threads need not be the ones that stored each element. */
static inline void emit_store(Gen *g)
{
    static const char *const stores[] = {
        "",
        "    tl.store(out_ptr + rm[:, None] * BN + rn[None, :], acc, mask=rm[:, None] < n)\n"
        "    tl.debug_barrier()\n"
        "    tl.atomic_add(out_ptr + rm[:, None] * BN + rn[None, :], acc * 0.5, mask=rm[:, None] < "
        "n)\n",
        "    o_bp = tl.make_block_ptr(out_ptr, shape=(n, BN), strides=(BN, 1), offsets=(pid * BM, "
        "0), block_shape=(BM, BN), order=(1, 0))\n"
        "    tl.store(o_bp, acc, boundary_check=(0, 1))\n",
        "    o_desc = tl.make_tensor_descriptor(out_ptr, shape=[n, BN], strides=[BN, 1], "
        "block_shape=[BM, BN])\n"
        "    o_desc.store([pid * BM, 0], acc)\n"};
    if (g->store_form == 0) { /* (the text seeds wrote before store_form) */
        strbuf_append(&g->src, "    tl.store(out_ptr + rm[:, None] * BN + rn[None, :], acc + s[:, "
                               "None] + l_i[:, None], mask=rm[:, None] < n)\n");
        return;
    }
    strbuf_append(&g->src, "    acc = acc + s[:, None] + l_i[:, None]\n");
    strbuf_append(&g->src, stores[g->store_form]);
}

/* What a second stream of draws adds to the first's shape, so that a seed whose second draws
 * are the defaults (fp16, sizes as drawn, no epilogue) writes the kernel it wrote before they
 * existed: x's and y's element type, every size doubled (blocks up to 128 x 64 and 64 x 128, BK
 * 64), 1, 2, 8 or 16 warps where the blocks allow them, the epilogue's ops, a and b through
 * block pointers or descriptors, the last store's form, fp8 dots' max_num_imprecise_acc, and the
 * passes' --pingpong and --tma-store. */
static inline void widen(Gen *g, unsigned seed)
{
    Gen w = {.state = (uint64_t)seed * 0x2545f4914f6cdd1dull + 0x632be59bd9b4e019ull};
    int type = (int)pick(&w, 8);
    g->xt = g->yt = type < 5 ? RT_FP16 : type < 6 ? RT_BF16 : RT_FP8E4;
    if (type == 7) { /* the two fp8 formats, as they come */
        g->xt = pick(&w, 2) ? RT_FP8E5 : RT_FP8E4;
        g->yt = pick(&w, 2) ? RT_FP8E5 : RT_FP8E4;
    }
    g->scale = pick(&w, 4) == 0 ? 2 : 1;
    g->bm *= g->scale;
    g->bn *= g->scale;
    g->bk *= g->scale;
    g->k *= g->scale;
    int warps = (int)pick(&w, 10);
    if (warps < 2 && g->bm * g->bn <= 64 * 64)
        g->warps = warps + 1; /* 1 or 2 */
    else if (warps == 2 && g->bm >= 64)
        g->warps = 8;
    else if (warps == 3 && g->bm == 128)
        g->warps = 16;
    /* the epilogue's ops on acc (random_epilogue), up to two, mostly none */
    for (int i = 0; i < 2; i++)
        g->epilogue[i] = pick(&w, 3) ? 0 : 1 + (int)pick(&w, RANDOM_EPILOGUES_FIRST - 1);
    g->tiles_form = pick(&w, 4) ? 0 : 1 + (int)pick(&w, 2);
    g->epilogue[2] = pick(&w, 4) ? 0
                                 : RANDOM_EPILOGUES_FIRST +
                                       (int)pick(&w, RANDOM_EPILOGUES - RANDOM_EPILOGUES_FIRST);
    g->store_form = pick(&w, 4) ? 0 : 1 + (int)pick(&w, 3);
    static const char *const imprecise[] = {"", "", "", "BK", "16"};
    g->imprecise = random_types[g->xt].bytes == 1 ? imprecise[pick(&w, 5)] : "";
    g->pingpong = pick(&w, 6) == 0;
    g->tma_store = pick(&w, 6) == 0;
    snprintf(g->signature, sizeof g->signature,
             "*%s:16,*%s:16,*fp16:16,*fp32:16,*fp32:16,i32,i32:16", random_types[g->xt].sig,
             random_types[g->yt].sig);
}

/* The kernel of g's seed, its sizes in g. */
static inline void generate(Gen *g, unsigned seed)
{
    g->state = seed;
    static const int blocks[][2] = {{16, 16}, {16, 64}, {32, 32}, {64, 16}, {64, 32}, {32, 64}};
    int b = (int)pick(g, 6);
    g->bm = blocks[b][0];
    g->bn = blocks[b][1];
    g->bk = pick(g, 2) ? 32 : 16;
    g->k = 16 * (1 + (int)pick(g, 6)); /* 16 .. 96, a tail when BK = 32 does not divide it */
    g->tiles = 1 + (int)pick(g, 3);
    int cut = (int)pick(g, (unsigned)g->bm); /* the last rows masked off */
    g->warps = g->bm == 64 && pick(g, 4) == 0 ? 8 : 4;
    widen(g, seed);
    g->n = g->tiles * g->bm - cut * g->scale;
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
    if (g->tiles_form)
        advance = false; /* (a and b through block pointers or descriptors instead) */
    if (advance)
        emit_pointers(g, &first, lo);
    emit_tiles(g, &first, lo);
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
        emit_tiles(g, &next, "hi");
        strbuf_printf(&g->src, "    for k in tl.range(hi, tl.minimum(K, hi + %s), BK%s):\n",
                      pick(g, 2) ? "BK" : "2 * BK", range);
        emit_body(g, &next, row, advance);
        strbuf_append(&g->src, "        acc = acc * 0.5\n");
    }
    for (int i = 0; i < 3; i++)
        strbuf_append(&g->src, random_epilogue[g->epilogue[i]]);
    emit_store(g);
    g->programs = g->tiles;
    if (pick(g, 4) == 0)
        nest(g, pick(g, 2));
}

/* The buffers' element counts: x [grid BM, K] with a block of slack (an unmasked load past K
 * reads on into the next row, or the slack), y [K + BK, BN] (or its transpose), v [K + 64, BN]
 * (attention's rows k .. k + BN; 64 doubled with the sizes), w [K + BK], out [grid BM, BN]. */
static inline void buffer_sizes(const Gen *g, size_t *elems)
{
    elems[0] = (size_t)(g->tiles * g->bm * g->k + g->bk);
    elems[1] = (size_t)((g->k + g->bk) * g->bn);
    elems[2] = (size_t)((g->k + 64 * g->scale) * g->bn);
    elems[3] = (size_t)(g->k + g->bk);
    elems[RANDOM_OUT] = (size_t)(g->tiles * g->bm * g->bn);
}

/* Buffer i's element type in g's kernel. */
static inline RandomType random_buffer_type(const Gen *g, int i)
{
    static const RandomType fixed[RANDOM_NBUF] = {RT_FP16, RT_FP16, RT_FP16, RT_FP32, RT_FP32};
    return i == 0 ? g->xt : i == 1 ? g->yt : fixed[i];
}

static inline size_t random_elem_size(const Gen *g, int i)
{
    return (size_t)random_types[random_buffer_type(g, i)].bytes;
}

/* x's bits in type t, x a normal number of magnitude 2^-4 .. 1 with at most 8 significant bits:
 * exact in fp16 and bf16; fp8 keeps the leading 3 (e4m3) or 2 (e5m2) of them. */
static inline uint32_t random_encode(RandomType t, float x)
{
    uint32_t b;
    memcpy(&b, &x, 4);
    if (t == RT_FP32)
        return b;
    int bits = 8 * random_types[t].bytes, mantissa = random_types[t].mantissa;
    uint32_t sign = (b >> 31) << (bits - 1);
    uint32_t e = (uint32_t)((int)((b >> 23) & 255) - 127 + random_types[t].bias);
    return sign | e << mantissa | ((b & 0x7fffff) >> (23 - mantissa));
}

/* Seed's inputs in init[i] (malloc'd, elems[i] elements of random_elem_size(g, i) bytes):
 * values of magnitude 1/16 .. 1 that their type holds exactly; out all NaN (rows the kernel
 * masks off stay so). */
static inline void random_inputs(const Gen *g, unsigned seed, const size_t *elems, void **init)
{
    uint32_t bits = seed * 2654435761u + 7;
    for (int i = 0; i < RANDOM_NBUF; i++) {
        size_t size = random_elem_size(g, i);
        init[i] = malloc(elems[i] * size);
        for (size_t j = 0; j < elems[i]; j++) {
            bits = bits * 1664525u + 1013904223u;
            float v = (float)(16 + (bits >> 24) % 241) / 256.0f * ((bits >> 20) & 1 ? -1.0f : 1.0f);
            uint32_t x = random_encode(random_buffer_type(g, i), i == RANDOM_OUT ? NAN : v);
            memcpy((char *)init[i] + j * size, &x, size); /* (little-endian: the low bytes) */
        }
    }
}

/* The constexprs of g's kernel ("BM=64", ...) in text, and a NULL-terminated list of them. */
typedef struct RandomDefines {
    char text[3][32];
    const char *list[4];
} RandomDefines;

static inline void random_defines(const Gen *g, RandomDefines *d)
{
    const char *const names[3] = {"BM", "BN", "BK"};
    const int values[3] = {g->bm, g->bn, g->bk};
    for (int i = 0; i < 3; i++) {
        snprintf(d->text[i], sizeof d->text[i], "%s=%d", names[i], values[i]);
        d->list[i] = d->text[i];
    }
    d->list[3] = NULL;
}

#endif
