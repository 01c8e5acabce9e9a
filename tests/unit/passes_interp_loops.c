/* passes_interp_loops.c: the loop shapes of the general software pipeline keep their kernels'
 * meaning, checked on the interpreter (as passes_interp_diff.c does for the matmul loops, with any
 * number of buffers, outputs and scalar arguments). Each kernel is lowered once and run; then
 * taken through the passes one at a time for sm_80 and sm_90a and num_stages 1 to 4, and after
 * every pass the interpreter runs it again on the same inputs: every output must be
 * bit-identical to the pass before (close to the lowered kernel's after canonicalize, which may
 * reassociate `acc + dot`). The interpreter checks the pipeline's discipline as it runs (no read of
 * a slot before its copy was waited for, no copy into a slot an in-flight wgmma reads). With
 * num_stages >= 2 the pipeline must have pipelined the loops the case names.
 *
 * The kernels: tutorial 06's attention backward as written (examples/attention_bwd.tri: loaded
 * tiles feeding two dots each, one through `.T`; four loops; the row statistics m and Delta of
 * the dK/dV loops, loads feeding no dot, copied ahead as rank-1 tiles), tutorial 09's flattened persistent
 * matmul (examples/persistent_matmul.tri: the tile switch and the epilogue are `if`s in the loop,
 * the epilogue stores), seed 1's fp32 matmul (examples/matmul.tri: an FMA dot reading its fp32
 * tiles from their slots, or read back whole), and tests/lit/codegen/pipe_shapes.tri (a running offset read by the rest of
 * the body and after the loop; run-time steps of either sign; a zero-trip loop; a row of scales
 * and a 2-D tile beside a dot; 2-D tiles in a dotless tl.range with a masked last block and no
 * iteration). */
#include "exec_test.h"
#include "interp_passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

enum { MAX_ARGS = 21 };

/* One kernel parameter: a buffer (its dtype and element count), an integer or an fp32 scalar. */
typedef enum {
    ARG_INT,
    ARG_F32,
    ARG_BUF_F16,
    ARG_BUF_F32,
    ARG_BUF_F8, /* fp8 e4m3 */
    ARG_OUT_F16,
    ARG_OUT_F32
} ArgKind;

typedef struct Arg {
    ArgKind kind;
    int64_t value; /* ARG_INT; elements for a buffer */
    double f;      /* ARG_F32 */
    double scale;  /* inputs: random values of magnitude 0.25..1 times this (0: 1) */
} Arg;

typedef struct Case {
    const char *file;
    const char *kernel;
    const char *signature;
    const char *defs[10];
    int grid[3];
    int num_warps;
    Arg args[MAX_ARGS];
    int nargs;
    int loops;      /* loops the pipeline must take at num_stages >= 2 */
    int rows;       /* ... and buffers of rank-1 tiles it must make (loads feeding no dot) */
    bool sm90_only; /* buffers too large for sm_80's shared memory */
    int tiles[2];   /* ... and buffers of 2-D tiles only whole local_loads read (an FMA dot's
                       operands, tiles feeding no dot, a dot operand through another chain), for
                       sm_80 and sm_90a */
    bool asks;      /* its loop's tl.range(..., num_stages=3) asks: pipelined at any num_stages */
    bool ws;        /* warp-specialized on sm_90a when pipelined (tl.range(..., warp_specialize)) */
    int ws_stages;  /* ... only from this num_stages (0: whenever pipelined): a loop of one wgmma
                       keeps its producer from 4 slots (warp_specialize.c lookahead_enough) */
    bool chosen;    /* no loop asks, but on sm_90a the pass gives one a producer (two wgmma ops an
                       iteration, 8 warps, one program an SM: warp_specialize.c's chosen_loop) */
    bool flat; /* its loop nest asks tl.range(..., flatten=True): one loop after flatten_loops */
    bool pingpong;   /* compiled with PassOptions.pingpong: two consumer groups take its tiles */
    int tma_stores;  /* compiled with PassOptions.tma_store: the tile stores on sm_90a that become
                       tma_store ops (0: the option off) */
    bool no_fuse;    /* compiled with PassOptions.no_fuse_loops: causal attention's two loops
                        stay two */
    bool persistent; /* compiled with PassOptions.persistent: the grid's tiles walked by
                        INTERP_PERSISTENT_PROGRAMS programs */
    int wgmma_unrolled; /* wgmma ops on sm_90a once pipelined, after unroll_loops (0: not
                           checked): a promoted fp8 dot's deferred form has three (two in the
                           loop unrolled by two, one in its odd last iteration), its own form one */
} Case;

static uint32_t rng_state = 11;
static float random_value(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    uint32_t r = rng_state >> 8;
    float v = ldexpf((float)(1024 + (r & 1023)), -12 + (int)((r >> 10) & 1)); /* 0.25 .. 1 */
    return (r >> 11) & 1 ? -v : v;
}

static uint16_t to_half(float x)
{
    /* the values here are normal fp16 numbers: round to nearest, ties away (exact for the
     * 11-bit mantissas random_value makes) */
    uint32_t b;
    memcpy(&b, &x, 4);
    uint32_t sign = (b >> 16) & 0x8000;
    int e = (int)((b >> 23) & 255) - 127 + 15;
    uint32_t m = (b >> 13) & 1023;
    if (e <= 0)
        return (uint16_t)sign;
    return (uint16_t)(sign | ((uint32_t)e << 10) | m);
}

static bool is_buffer(ArgKind k) { return k != ARG_INT && k != ARG_F32; }
static bool is_output(ArgKind k) { return k == ARG_OUT_F16 || k == ARG_OUT_F32; }
static size_t elem_bytes(ArgKind k)
{
    return k == ARG_BUF_F8 ? 1 : k == ARG_BUF_F16 || k == ARG_OUT_F16 ? 2 : 4;
}

/* Runs f on fresh copies of init; each output's bytes are appended to out. */
static bool run_kernel(const IrFunc *f, const Case *c, void *const *init, unsigned char *out,
                       StrBuf *err)
{
    void *bufs[MAX_ARGS] = {0};
    InterpArg args[MAX_ARGS];
    InterpBuffer ib[MAX_ARGS];
    int nb = 0;
    for (int i = 0; i < c->nargs; i++) {
        const Arg *a = &c->args[i];
        if (a->kind == ARG_INT) {
            args[i].i = a->value;
            continue;
        }
        if (a->kind == ARG_F32) {
            args[i].f = a->f;
            continue;
        }
        size_t bytes = (size_t)a->value * elem_bytes(a->kind);
        bufs[i] = malloc(bytes);
        memcpy(bufs[i], init[i], bytes);
        args[i].ptr = (uint64_t)(uintptr_t)bufs[i];
        ib[nb++] = (InterpBuffer){(uint64_t)(uintptr_t)bufs[i], bytes};
    }
    InterpLaunch l = {
        .grid = {c->grid[0], c->grid[1] ? c->grid[1] : 1, c->grid[2] ? c->grid[2] : 1},
        .args = args,
        .nargs = c->nargs,
        .buffers = ib,
        .nbuffers = nb};
    bool ok = interp_run(f, &l, err);
    size_t at = 0;
    for (int i = 0; i < c->nargs; i++) {
        if (!is_buffer(c->args[i].kind))
            continue;
        size_t bytes = (size_t)c->args[i].value * elem_bytes(c->args[i].kind);
        if (is_output(c->args[i].kind)) {
            memcpy(out + at, bufs[i], bytes);
            at += bytes;
        }
        free(bufs[i]);
    }
    return ok;
}

static size_t output_bytes(const Case *c)
{
    size_t n = 0;
    for (int i = 0; i < c->nargs; i++)
        if (is_output(c->args[i].kind))
            n += (size_t)c->args[i].value * elem_bytes(c->args[i].kind);
    return n;
}

/* Every output element within 2e-2 (relative to max(1, |want|)) of want's. */
static bool close_enough(const unsigned char *want, const unsigned char *got, const Case *c)
{
    size_t at = 0;
    for (int i = 0; i < c->nargs; i++) {
        ArgKind k = c->args[i].kind;
        if (!is_output(k))
            continue;
        for (int64_t j = 0; j < c->args[i].value; j++) {
            float w, g;
            if (k == ARG_OUT_F16) {
                uint16_t hw, hg;
                memcpy(&hw, want + at, 2);
                memcpy(&hg, got + at, 2);
                w = half_value(hw), g = half_value(hg);
            } else {
                memcpy(&w, want + at, 4);
                memcpy(&g, got + at, 4);
            }
            at += elem_bytes(k);
            if (!(fabsf(w - g) <= 2e-2f * fmaxf(1.0f, fabsf(w))))
                return false;
        }
    }
    return true;
}

/* Loops of r (nested too) whose body holds an async_copy or tma_load: the pipelined ones. A loop
 * whose copies are a pipelined nested loop's (its prologue runs in the outer body) is not one. */
static int pipelined_loops(const IrRegion *r)
{
    int n = 0;
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        int inner = 0;
        for (int k = 0; k < op->nregions; k++)
            inner += pipelined_loops(&op->regions[k]);
        n += inner;
        if (op->code == OP_FOR && inner == 0 &&
            (count_ops(&op->regions[0], OP_ASYNC_COPY) > 0 ||
             count_ops(&op->regions[0], OP_TMA_LOAD) > 0))
            n++;
    }
    return n;
}

/* Loops of r (nested regions too) whose body holds a loop among its own ops. */
static int nests(const IrRegion *r)
{
    int n = 0;
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            n += nests(&op->regions[k]);
        if (op->code == OP_FOR && count_ops(&op->regions[0], OP_FOR) > 0)
            n++;
    }
    return n;
}

/* Buffers of rank-1 tiles (local_alloc !smem<S x N>) in r: loads feeding no dot, copied ahead. */
static int row_buffers(const IrFunc *f, const IrRegion *r)
{
    int n = 0;
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        if (op->code == OP_LOCAL_ALLOC) {
            Type t = ir_type(f, op->results[0]);
            n += t.rank == 2 && !type_is_mbarriers(t);
        }
        for (int k = 0; k < op->nregions; k++)
            n += row_buffers(f, &op->regions[k]);
    }
    return n;
}

/* Whether every use of v (a slot view) in r is an async_copy into it, a tma_load into it or a
 * local_load in a blocked layout: the tile is read back whole only. *reads counts the loads. */
static bool whole_reads_only(const IrFunc *f, const IrRegion *r, ValueId v, int *reads)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int k = 0; k < op->noperands; k++) {
            if (op->operands[k] != v)
                continue;
            int l = op->code == OP_LOCAL_LOAD ? f->values[op->results[0]].layout : 0;
            if (l > 0 && f->layouts[l].kind == LAYOUT_BLOCKED)
                (*reads)++;
            else if (!((op->code == OP_ASYNC_COPY || op->code == OP_TMA_LOAD) && k == 0))
                return false;
        }
        for (int k = 0; k < op->nregions; k++)
            if (!whole_reads_only(f, &op->regions[k], v, reads))
                return false;
    }
    return true;
}

/* The slot views of buffer buf in r, each checked with whole_reads_only against all of f. */
static bool buffer_whole_only(const IrFunc *f, const IrRegion *r, ValueId buf, int *reads)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        if (op->code == OP_SLOT && op->operands[0] == buf &&
            !whole_reads_only(f, &f->body, op->results[0], reads))
            return false;
        for (int k = 0; k < op->nregions; k++)
            if (!buffer_whole_only(f, &op->regions[k], buf, reads))
                return false;
    }
    return true;
}

/* Buffers of 2-D tiles (local_alloc !smem<S x M x N>, in r or a region nested in it: a loop over
 * tiles makes its K loop's) in f that only whole local_loads read. */
static int whole_tile_buffers_in(const IrFunc *f, const IrRegion *r)
{
    int n = 0;
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            n += whole_tile_buffers_in(f, &op->regions[k]);
        if (op->code != OP_LOCAL_ALLOC || ir_type(f, op->results[0]).rank != 3)
            continue;
        int reads = 0;
        n += buffer_whole_only(f, &f->body, op->results[0], &reads) && reads > 0;
    }
    return n;
}

static int whole_tile_buffers(const IrFunc *f) { return whole_tile_buffers_in(f, &f->body); }

/* The callbacks of interp_passes_check (interp_passes.h): the case and its inputs. */
typedef struct RunCtx {
    const Case *c;
    void *const *init;
    bool overlap; /* compiled with PassOptions.overlap_dots */
} RunCtx;

static bool run_ctx(const IrFunc *f, const void *ctx, void *out, StrBuf *err)
{
    const RunCtx *r = ctx;
    return run_kernel(f, r->c, r->init, out, err);
}

static bool close_ctx(const void *want, const void *got, const void *ctx)
{
    return close_enough(want, got, ((const RunCtx *)ctx)->c);
}

/* With num_stages >= 2 the pipeline must have taken the loops and copied the rows and the
 * whole-read tiles the case names. */
/* wgmma ops with a guard: the late dots overlap_dots issued (the loop's and the one after it) */
static int guarded_wgmma(const IrRegion *r)
{
    int n = 0;
    for (int i = 0; i < r->nops; i++) {
        n += r->ops[i]->code == OP_WGMMA && r->ops[i]->noperands == 4;
        for (int k = 0; k < r->ops[i]->nregions; k++)
            n += guarded_wgmma(&r->ops[i]->regions[k]);
    }
    return n;
}

static void check_pipeline(const IrFunc *f, const char *pass, const char *arch, bool arch_specific,
                           int stages, const void *ctx)
{
    const Case *c = ((const RunCtx *)ctx)->c;
    bool overlap = ((const RunCtx *)ctx)->overlap;
    if (!strcmp(pass, "flatten_loops")) {
        CHECK(nests(&f->body) == (c->flat ? 0 : nests(&f->body)), "%s %s: %d loop nests left",
              c->kernel, arch, nests(&f->body));
        return;
    }
    if (!strcmp(pass, "tma") && c->tma_stores) {
        int want = arch_specific ? c->tma_stores : 0;
        CHECK(count_ops(&f->body, OP_TMA_STORE) == want,
              "%s %s stages %d: %d tma_store ops, want %d", c->kernel, arch, stages,
              count_ops(&f->body, OP_TMA_STORE), want);
        return;
    }
    if (!strcmp(pass, "warp_specialize")) {
        bool pipelined = c->ws_stages ? stages >= c->ws_stages : stages >= 2 || c->asks;
        bool ws = pipelined && (c->ws || c->chosen) && arch_specific;
        CHECK(f->ws.producer_warps == (ws ? 4 : 0), "%s %s stages %d: %d producer warps", c->kernel,
              arch, stages, f->ws.producer_warps);
        CHECK(f->ws.consumer_groups == (ws && c->pingpong ? 2 : 0),
              "%s %s stages %d: %d consumer groups", c->kernel, arch, stages,
              f->ws.consumer_groups);
        return;
    }
    if (!strcmp(pass, "overlap_dots")) {
        /* with the option, attention forward's loops (two wgmma ops, p @ v carried) issue p @ v
         * late: a guarded wgmma in the loop and one after it; nothing else changes */
        bool on = stages >= 2 || c->asks;
        int want = overlap && arch_specific && on ? 2 * c->loops : 0;
        CHECK(guarded_wgmma(&f->body) == want, "%s %s stages %d: %d late wgmma ops, want %d",
              c->kernel, arch, stages, guarded_wgmma(&f->body), want);
        return;
    }
    if (!strcmp(pass, "unroll_loops") && c->wgmma_unrolled) {
        bool on = stages >= 2 || c->asks;
        int want = arch_specific && on ? c->wgmma_unrolled : 0;
        CHECK(count_ops(&f->body, OP_WGMMA) == want, "%s %s stages %d: %d wgmma ops, want %d",
              c->kernel, arch, stages, count_ops(&f->body, OP_WGMMA), want);
        return;
    }
    if (strcmp(pass, "pipeline"))
        return;
    bool on = stages >= 2 || c->asks;
    int want_loops = on ? c->loops : 0, want_rows = on ? c->rows : 0;
    CHECK(pipelined_loops(&f->body) == want_loops, "%s %s stages %d: %d loops pipelined, want %d",
          c->kernel, arch, stages, pipelined_loops(&f->body), want_loops);
    CHECK(row_buffers(f, &f->body) == want_rows,
          "%s %s stages %d: %d rank-1 tiles copied ahead, want %d", c->kernel, arch, stages,
          row_buffers(f, &f->body), want_rows);
    int want_tiles = on ? c->tiles[arch_specific] : 0;
    CHECK(whole_tile_buffers(f) == want_tiles,
          "%s %s stages %d: %d 2-D tiles copied ahead and read back whole, want %d", c->kernel,
          arch, stages, whole_tile_buffers(f), want_tiles);
}

/* [Z, H, N_CTX, D] strides of one attention tensor, Z = H = 1, N_CTX = 256, D = 128. */
#define ATTN_STRIDES I(256 * 128), I(256 * 128), I(128)

/* examples/attention.tri, D = 128, blocks of 128 x BLOCK_N on 8 warps, 2 programs over N_CTX =
 * 256 for each of HEADS heads (Z = 1): STAGE, num_stages, warp_specialize (True or False), the
 * loops pipelined, the tiles sm_80 reads whole; its loops' tl.range(..., num_stages=) asks. Its
 * buffers hold one program an SM, so on sm_90a a loop not asking warp_specialize on 3 stages gets
 * the producer anyway (the pass chooses it); ATTN_FWD_ON's last argument: sm_90a only;
 * ATTN_FWD_GRID's: compiled with PassOptions.persistent (the grid's tiles walked by 3 programs);
 * ATTN_FWD_GRID_IN's FILE: a kernel with attn_fwd's parameters; ATTN_FWD_CASE's NO_FUSE: compiled
 * with PassOptions.no_fuse_loops. */
#define ATTN_FWD_CASE(FILE, STAGE, BLOCK_N, STAGES, WS, LOOPS, SM80_TILES, HEADS, SM90_ONLY,       \
                      PERSISTENT, NO_FUSE)                                                         \
    {                                                                                              \
        FILE, "attn_fwd",                                                                          \
            "*fp16:16,*fp16:16,*fp16:16,fp32,*fp32:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,"       \
            "i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32,i32:16",                  \
            {"HEAD_DIM=128",  "BLOCK_M=128",         "BLOCK_N=" #BLOCK_N,                          \
             "STAGE=" #STAGE, "num_stages=" #STAGES, "warp_specialize=" #WS},                      \
            {2, HEADS}, 8,                                                                         \
            {F16(HEADS * 256 * 128, 0.5),                                                          \
             F16(HEADS * 256 * 128, 0.5),                                                          \
             F16(HEADS * 256 * 128, 0.5),                                                          \
             SCALAR(0.088),                                                                        \
             OUT32(HEADS * 256),                                                                   \
             OUT16(HEADS * 256 * 128),                                                             \
             ATTN_STRIDES,                                                                         \
             ATTN_STRIDES,                                                                         \
             ATTN_STRIDES,                                                                         \
             ATTN_STRIDES,                                                                         \
             I(HEADS),                                                                             \
             I(256)},                                                                              \
            20, LOOPS, .tiles = {SM80_TILES, 0}, .sm90_only = SM90_ONLY, .asks = true,             \
                       .ws = PY_BOOL_##WS, .chosen = !PY_BOOL_##WS && (STAGES) >= 3,               \
                       .persistent = PERSISTENT, .no_fuse = NO_FUSE                                \
    }
#define ATTN_FWD_GRID_IN(FILE, STAGE, BLOCK_N, STAGES, WS, LOOPS, SM80_TILES, HEADS, SM90_ONLY,    \
                         PERSISTENT)                                                               \
    ATTN_FWD_CASE(FILE, STAGE, BLOCK_N, STAGES, WS, LOOPS, SM80_TILES, HEADS, SM90_ONLY,           \
                  PERSISTENT, false)
#define ATTN_FWD_GRID(STAGE, BLOCK_N, STAGES, WS, LOOPS, SM80_TILES, HEADS, SM90_ONLY, PERSISTENT) \
    ATTN_FWD_GRID_IN("examples/attention.tri", STAGE, BLOCK_N, STAGES, WS, LOOPS, SM80_TILES,      \
                     HEADS, SM90_ONLY, PERSISTENT)
/* ... causal on 64 x 64 blocks and 4 warps, 3 stages, made persistent (3 programs over 4 query
 * blocks of 2 heads): q in a slot of its own, read by the fused loop's wgmma ops */
#define ATTN_FWD_W4_PERSISTENT                                                                     \
    {                                                                                              \
        "examples/attention.tri", "attn_fwd",                                                      \
            "*fp16:16,*fp16:16,*fp16:16,fp32,*fp32:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,"       \
            "i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32,i32:16",                  \
            {"HEAD_DIM=128", "BLOCK_M=64", "BLOCK_N=64", "STAGE=3", "num_stages=3"}, {4, 2}, 4,    \
            {F16(2 * 256 * 128, 0.5),                                                              \
             F16(2 * 256 * 128, 0.5),                                                              \
             F16(2 * 256 * 128, 0.5),                                                              \
             SCALAR(0.088),                                                                        \
             OUT32(2 * 256),                                                                       \
             OUT16(2 * 256 * 128),                                                                 \
             ATTN_STRIDES,                                                                         \
             ATTN_STRIDES,                                                                         \
             ATTN_STRIDES,                                                                         \
             ATTN_STRIDES,                                                                         \
             I(2),                                                                                 \
             I(256)},                                                                              \
            20, 1, .tiles = {2, 0}, .asks = true, .persistent = true                               \
    }
#define ATTN_FWD_ON(STAGE, BLOCK_N, STAGES, WS, LOOPS, SM80_TILES, HEADS, SM90_ONLY)               \
    ATTN_FWD_GRID(STAGE, BLOCK_N, STAGES, WS, LOOPS, SM80_TILES, HEADS, SM90_ONLY, false)
#define ATTN_FWD_HEADS(STAGE, BLOCK_N, STAGES, WS, LOOPS, SM80_TILES, HEADS)                       \
    ATTN_FWD_ON(STAGE, BLOCK_N, STAGES, WS, LOOPS, SM80_TILES, HEADS, false)
#define ATTN_FWD(STAGE, BLOCK_N, STAGES, WS, LOOPS, SM80_TILES)                                    \
    ATTN_FWD_HEADS(STAGE, BLOCK_N, STAGES, WS, LOOPS, SM80_TILES, 1)
/* ... compiled with PassOptions.no_fuse_loops: the causal kernel's two loops as written */
#define ATTN_FWD_TWO_LOOPS_ON(STAGE, BLOCK_N, STAGES, WS, LOOPS, SM80_TILES, HEADS, SM90_ONLY)     \
    ATTN_FWD_CASE("examples/attention.tri", STAGE, BLOCK_N, STAGES, WS, LOOPS, SM80_TILES, HEADS,  \
                  SM90_ONLY, false, true)
#define ATTN_FWD_TWO_LOOPS(STAGE, BLOCK_N, STAGES, WS, LOOPS, SM80_TILES)                          \
    ATTN_FWD_TWO_LOOPS_ON(STAGE, BLOCK_N, STAGES, WS, LOOPS, SM80_TILES, 1, false)

/* tests/lit/passes/Inputs/split_loops.tri's branch_forms, comparison FORM, 8 programs */
#define BRANCH_FORM(FORM)                                                                          \
    {                                                                                              \
        "tests/lit/passes/Inputs/split_loops.tri", "branch_forms", "*fp32:16,*fp32:16",            \
            {"BLOCK=32", "FORM=" #FORM}, {8}, 4, {F32(256, 0), OUT32(8 * 32)}, 2, 1, 1,            \
            .asks = true                                                                           \
    }

/* examples/attention_persistent.tri (tutorial 06's forward, not causal, as a persistent kernel),
 * head dim D, blocks of 128 x BN on 8 warps, 3 stages, Z = 1, H = 2, N_CTX = 256: 4 tiles (2 query
 * blocks of 2 heads) walked by 3 programs, the first taking tiles 0 and 3; its loop over tiles
 * asking warp_specialize (WS). Q, K, V, sm_scale, M, Out, the strides of q, k, v, o, Z, H, N_CTX.
 * Not asking, on sm_90a each tile's q is copied into a slot of its own, refilled every tile. */
#define ATTN_P_STRIDES(D) I(2 * 256 * (D)), I(256 * (D)), I(D)
#define ATTN_PERSISTENT_D(D, BN, WS)                                                               \
    {                                                                                              \
        "examples/attention_persistent.tri", "attn_fwd_persistent",                                \
            "*fp16:16,*fp16:16,*fp16:16,fp32,*fp32:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,"       \
            "i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32,i32,i32:16",              \
            {"HEAD_DIM=" #D, "BLOCK_M=128", "BLOCK_N=" #BN,                                        \
             "num_stages=3", "NUM_SMS=3",   "warp_specialize=" #WS},                               \
            {3}, 8,                                                                                \
            {F16(2 * 256 * (D), 0.5),                                                              \
             F16(2 * 256 * (D), 0.5),                                                              \
             F16(2 * 256 * (D), 0.5),                                                              \
             SCALAR(0.125),                                                                        \
             OUT32(2 * 256),                                                                       \
             OUT16(2 * 256 * (D)),                                                                 \
             ATTN_P_STRIDES(D),                                                                    \
             ATTN_P_STRIDES(D),                                                                    \
             ATTN_P_STRIDES(D),                                                                    \
             ATTN_P_STRIDES(D),                                                                    \
             I(1),                                                                                 \
             I(2),                                                                                 \
             I(256)},                                                                              \
            21, 1, .tiles = {2, 0}, .asks = true, .ws = PY_BOOL_##WS                               \
    }
#define ATTN_PERSISTENT(WS) ATTN_PERSISTENT_D(64, 64, WS)

/* examples/persistent_desc_matmul.tri, 80 x 160 x k, 3 programs: warp-specialized (WS True), with
 * two consumer groups taking its tiles in turn too (PP True, PassOptions.pingpong), C stored whole
 * or in two halves (EPILOGUE_SUBTILE), or its nest flattened (FLAT True, flatten_loops.c). */
#define PY_BOOL_True  true
#define PY_BOOL_False false
#define PERSISTENT_DESC_AS(k, WS, SUBTILE, FLAT, PP, TMA_STORES)                                   \
    {                                                                                              \
        "examples/persistent_desc_matmul.tri", "matmul_kernel_descriptor_persistent",              \
            "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16",                                     \
            {"BLOCK_SIZE_M=64",                                                                    \
             "BLOCK_SIZE_N=64",                                                                    \
             "BLOCK_SIZE_K=32",                                                                    \
             "GROUP_SIZE_M=2",                                                                     \
             "NUM_SMS=3",                                                                          \
             "WARP_SPECIALIZE=" #WS,                                                               \
             "EPILOGUE_SUBTILE=" #SUBTILE,                                                         \
             "FLATTEN=" #FLAT},                                                                    \
            {3}, 4, {F16(80 * ((k) + 1), 0),                                                       \
                     F16(160 * ((k) + 1), 0),                                                      \
                     OUT16(80 * 160),                                                              \
                     I(80),                                                                        \
                     I(160),                                                                       \
                     I(k)},                                                                        \
            6, 1, .tiles = {2, 0}, .ws = PY_BOOL_##WS, .ws_stages = 4, .flat = PY_BOOL_##FLAT,     \
                  .pingpong = PY_BOOL_##PP, .tma_stores = TMA_STORES                               \
    }
#define PERSISTENT_DESC(k, WS, SUBTILE, FLAT) PERSISTENT_DESC_AS(k, WS, SUBTILE, FLAT, False, 0)
/* ... with PassOptions.tma_store: C's tile (or each half) through a tma_store, M and N clipping
 * the edge tiles */
#define PERSISTENT_DESC_TMA_STORE(k, WS, SUBTILE, PP)                                              \
    PERSISTENT_DESC_AS(k, WS, SUBTILE, False, PP, PY_BOOL_##SUBTILE ? 2 : 1)
#define PERSISTENT_DESC_WS(k, SUBTILE) PERSISTENT_DESC(k, True, SUBTILE, False)
#define PERSISTENT_DESC_PP(k, SUBTILE) PERSISTENT_DESC_AS(k, True, SUBTILE, False, True, 0)
/* ... in fp8 e4m3 or fp32 through tf32 (B through its `.T`: the [N, K] tile as loaded, K-major,
 * is the B of wgmma's fp8 and tf32 forms), blocks of 64 x 64 x BK, warp-specialized (WS), with
 * two consumer groups too (PP); sm_90a only (on sm_80 fp8 is widened for mma.sync and not
 * pipelined through a `.T`, and fp32's mma.sync reads such a B back whole: other checks) */
#define PERSISTENT_DESC_K_MAJOR(SIG, A, B, C, BK, k, WS, PP)                                       \
    {                                                                                              \
        "examples/persistent_desc_matmul.tri", "matmul_kernel_descriptor_persistent",              \
            SIG, {"BLOCK_SIZE_M=64",        "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=" #BK,                \
                  "GROUP_SIZE_M=2",         "NUM_SMS=3",       "WARP_SPECIALIZE=" #WS,             \
                  "EPILOGUE_SUBTILE=False", "FLATTEN=False"},                                      \
            {3}, 4, {A, B, C, I(80), I(160), I(k)}, 6, 1,                                          \
            .ws = PY_BOOL_##WS, .ws_stages = 4, .pingpong = PY_BOOL_##PP, .sm90_only = true        \
    }
#define PERSISTENT_DESC_FP8(k, WS, PP)                                                             \
    PERSISTENT_DESC_K_MAJOR("*fp8e4nv:16,*fp8e4nv:16,*fp16:16,i32:16,i32:16,i32:16", F8(80 * (k)), \
                            F8(160 * (k)), OUT16(80 * 160), 32, k, WS, PP)
#define PERSISTENT_DESC_TF32(k, WS, PP)                                                            \
    PERSISTENT_DESC_K_MAJOR("*fp32:16,*fp32:16,*fp32:16,i32:16,i32:16,i32:16", F32(80 * (k), 0),   \
                            F32(160 * (k), 0), OUT32(80 * 160), 16, k, WS, PP)

static void run_case(const Case *c, bool overlap)
{
    Lowered low;
    bool ok = interp_passes_lower(&low, c->file, c->kernel, c->signature, c->defs, c->num_warps);
    if (!ok) {
        interp_passes_lowered_free(&low);
        return;
    }

    void *init[MAX_ARGS] = {0};
    for (int i = 0; i < c->nargs; i++) {
        const Arg *a = &c->args[i];
        if (!is_buffer(a->kind))
            continue;
        size_t n = (size_t)a->value;
        init[i] = malloc(n * elem_bytes(a->kind));
        if (is_output(a->kind)) {
            memset(init[i], 0x7f, n * elem_bytes(a->kind)); /* poison: every element written */
            continue;
        }
        double scale = a->scale > 0 ? a->scale : 1;
        for (size_t j = 0; j < n; j++) {
            float v = (float)(random_value() * scale);
            if (a->kind == ARG_BUF_F16)
                ((uint16_t *)init[i])[j] = to_half(v);
            else if (a->kind == ARG_BUF_F8) /* e4m3 bits: sign, exponent 4..9, any mantissa */
                ((uint8_t *)init[i])[j] =
                    (uint8_t)((v < 0 ? 0x80 : 0) | (0x20 + (int)(fabsf(v) * 47.0f) % 48));
            else
                ((float *)init[i])[j] = v;
        }
    }
    size_t out_bytes = output_bytes(c);
    unsigned char *want = malloc(out_bytes);
    StrBuf err = {0};
    ok = run_kernel(low.res.ir, c, init, want, &err);
    CHECK(ok, "%s as lowered: %s", c->kernel, err.data ? err.data : "");

    RunCtx ctx = {c, init, overlap};
    PassCheck pc = {.kernel = c->kernel,
                    .num_warps = c->num_warps,
                    .max_stages = 4,
                    .first_arch = c->sm90_only || overlap ? 1 : 0, /* (wgmma: sm_90a) */
                    .pingpong = c->pingpong,
                    .tma_store = c->tma_stores > 0,
                    .persistent = c->persistent,
                    .no_fuse_loops = c->no_fuse,
                    .overlap_dots = overlap,
                    .out_bytes = out_bytes,
                    .want = want,
                    .ctx = &ctx,
                    .run = run_ctx,
                    .close = close_ctx,
                    .after_pass = check_pipeline};
    if (ok)
        interp_passes_check(low.res.ir, &pc);
    strbuf_free(&err);
    free(want);
    for (int i = 0; i < c->nargs; i++)
        free(init[i]);
    interp_passes_lowered_free(&low);
}

#define I(v)                                                                                       \
    {                                                                                              \
        ARG_INT, (v)                                                                               \
    }
#define F16(n, s)                                                                                  \
    {                                                                                              \
        ARG_BUF_F16, (n), 0, (s)                                                                   \
    }
#define F8(n)                                                                                      \
    {                                                                                              \
        ARG_BUF_F8, (n)                                                                            \
    }
#define F32(n, s)                                                                                  \
    {                                                                                              \
        ARG_BUF_F32, (n), 0, (s)                                                                   \
    }
#define OUT16(n)                                                                                   \
    {                                                                                              \
        ARG_OUT_F16, (n)                                                                           \
    }
#define OUT32(n)                                                                                   \
    {                                                                                              \
        ARG_OUT_F32, (n)                                                                           \
    }
/* The arguments of a matmul.tri-shaped kernel (warp_specialize.tri's too) on row-major A [m, k]
 * and B [k, n] made by in (F16 or F32), C [m, n] by out (OUT16 or OUT32): buffers, m, n, k and
 * the strides k, 1, n, 1, n, 1; then their count. */
#define ROWMAJOR_MATMUL_ARGS(in, out, m, n, k)                                                     \
    {in((m) * (k), 0),                                                                             \
     in((k) * (n), 0),                                                                             \
     out((m) * (n)),                                                                               \
     I(m),                                                                                         \
     I(n),                                                                                         \
     I(k),                                                                                         \
     I(k),                                                                                         \
     I(1),                                                                                         \
     I(n),                                                                                         \
     I(1),                                                                                         \
     I(n),                                                                                         \
     I(1)},                                                                                        \
        12
#define SCALAR(x)                                                                                  \
    {                                                                                              \
        ARG_F32, 0, (x)                                                                            \
    }

/* pipe_shapes.tri's running_offset over K = 112 (a masked tail) from lo to hi by step. */
#define RUNNING_OFFSET(lo, hi, step)                                                               \
    {                                                                                              \
        "tests/lit/codegen/pipe_shapes.tri", "running_offset",                                     \
            "*fp16:16,*fp16:16,*fp32:16,i32:16,i32,i32,i32",                                       \
            {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32"}, {1}, 4,                                    \
            {F16(64 * 112, 0), F16(112 * 64, 0), OUT32(64 * 64), I(112), I(lo), I(hi), I(step)},   \
            7, 1                                                                                   \
    }

/* examples/persistent_nested_matmul.tri: `programs` programs walk 2 x 2 tiles of 64 x 64 over K
 * = k (M and N off the blocks, the epilogue's stores masked) */
#define PERSISTENT_NESTED(k, programs)                                                             \
    {                                                                                              \
        "examples/persistent_nested_matmul.tri", "matmul_kernel_persistent",                       \
            "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,"    \
            "i32:1",                                                                               \
            {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=32", "GROUP_SIZE_M=2",            \
             "NUM_SMS=" #programs},                                                                \
            {programs}, 4,                                                                         \
            {F16(80 * ((k) + 1), 0),                                                               \
             F16(((k) + 1) * 96, 0),                                                               \
             OUT16(80 * 96),                                                                       \
             I(80),                                                                                \
             I(96),                                                                                \
             I(k),                                                                                 \
             I(k),                                                                                 \
             I(1),                                                                                 \
             I(96),                                                                                \
             I(1),                                                                                 \
             I(96),                                                                                \
             I(1)},                                                                                \
            12, 1, .flat = true                                                                    \
    }

/* pipe_shapes.tri's flat_pointers: 3 programs over the 4 row tiles of C [100, 32], K = k */
#define FLAT_POINTERS(k)                                                                           \
    {                                                                                              \
        "tests/lit/codegen/pipe_shapes.tri", "flat_pointers",                                      \
            "*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32,i32:16",                                      \
            {"BLOCK_M=32", "BLOCK_N=32", "BLOCK_K=32", "PROGRAMS=3"}, {3}, 4,                      \
            {F16(100 * ((k) + 1), 0),                                                              \
             F16(((k) + 1) * 32, 0),                                                               \
             OUT32(100 * 32),                                                                      \
             OUT32(3 * 32),                                                                        \
             I(100),                                                                               \
             I(k)},                                                                                \
            6, 1, .flat = true                                                                     \
    }

/* seed 2 with its K loop warp-specialized (warp_specialize.tri's ws_matmul), 2 x 2 tiles of 64,
 * K = 160; TMA_STORES: PassOptions.tma_store's stores (Case.tma_stores) */
#define WS_MATMUL(TMA_STORES)                                                                      \
    {                                                                                              \
        "tests/lit/codegen/warp_specialize.tri", "ws_matmul",                                      \
            "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,"    \
            "i32:1",                                                                               \
            {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=32", "GROUP_SIZE_M=2"}, {4}, 4,   \
            ROWMAJOR_MATMUL_ARGS(F16, OUT16, 128, 128, 160), 1, .ws = true, .ws_stages = 4,        \
                                                                .tma_stores = TMA_STORES           \
    }

#define NESTED_TILES_AS(programs, step, TMA_STORES)                                                \
    {                                                                                              \
        "tests/lit/codegen/pipe_shapes.tri", "nested_tiles",                                       \
            "*fp16:16,*fp16:16,*fp32:16,i32,i32:16,i32",                                           \
            {"BLOCK_M=32", "BLOCK_N=32", "BLOCK_K=32"}, {programs}, 4,                             \
            {F16(100 * 80, 0), F16(80 * 32, 0), OUT32(100 * 32), I(100), I(80), I(step)}, 6, 1,    \
            .tma_stores = TMA_STORES                                                               \
    }
#define NESTED_TILES(programs, step) NESTED_TILES_AS(programs, step, 0)

/* pipe_shapes.tri's fma_shapes (BT = BK = 16), K = 40: W, X, Y made by in (F16 or F32) */
#define FMA_SHAPES(sig, in)                                                                        \
    {                                                                                              \
        "tests/lit/codegen/pipe_shapes.tri", "fma_shapes", sig, {"BT=16", "BK=16"}, {1},           \
            4, {in(16 * 16, 0), in(16 * 40, 0), in(16 * 40, 0),                                    \
                OUT32(16 * 40), OUT32(16 * 16), I(40)},                                            \
            6, 1, .tiles = {                                                                       \
                1,                                                                                 \
                1                                                                                  \
            }                                                                                      \
    }

/* bench/fp8_promoted.tri (seed 2 with max_num_imprecise_acc = LIMIT), 64 x 64 x BK blocks on 4
 * warps, C [128, 128], K = k (B stored [N, K]); WGMMA: Case.wgmma_unrolled. LIMIT = BK: the
 * partial sums added an iteration late (defer_promotion.c) in a loop unrolled by two */
#define FP8_PROMOTED(k, BK, LIMIT, WGMMA)                                                          \
    {                                                                                              \
        "bench/fp8_promoted.tri", "kernel_matmul_promoted",                                        \
            "*fp8e4nv:16,*fp8e4nv:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:1,i32:16,"     \
            "i32:16,i32:1",                                                                        \
            {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=" #BK, "GROUP_SIZE_M=2",          \
             "MAX_IMPRECISE=" #LIMIT},                                                             \
            {4}, 4,                                                                                \
            {F8(128 * (k)), F8(128 * (k)), OUT16(128 * 128), I(128), I(128), I(k), I(k), I(1),     \
             I(1),          I(k),          I(128),           I(1)},                                \
            12, 1, .sm90_only = true, .wgmma_unrolled = WGMMA                                      \
    }

/* dot_imprecise_acc.tri's mm_ws: the same deferred form in a loop asking warp_specialize, one
 * program, C [64, 64], K = k; a producer from 4 slots (one wgmma an iteration) */
#define FP8_PROMOTED_WS(k)                                                                         \
    {                                                                                              \
        "tests/lit/codegen/dot_imprecise_acc.tri", "mm_ws",                                        \
            "*fp8e4nv:16,*fp8e4nv:16,*fp32:16,i32:16", {"BM=64", "BN=64", "BK=64", "LIMIT=64"},    \
            {1}, 4, {F8(64 * (k)), F8(64 * (k)), OUT32(64 * 64), I(k)}, 4, 1,                      \
            .sm90_only = true, .ws = true, .ws_stages = 4, .wgmma_unrolled = 3                     \
    }

int main(void)
{
    enum { N_CTX = 128, D = 32, T = N_CTX * D };
    const Case cases[] = {
        /* attention backward, tutorial 06's kernel and launch shape scaled down: causal, the
         * dK/dV loop over 16-row then 32-row query blocks, the dQ loop over 16- then 32-column
         * key blocks. Inputs small enough that exp2(qk - m) stays near 1. */
        {"examples/attention_bwd.tri",
         "_attn_bwd",
         "*fp16:16,*fp16:16,*fp16:16,fp32,*fp16:16,*fp16:16,*fp16:16,*fp16:16,*fp32:16,*fp32:16,"
         "i32:16,i32:16,i32:16,i32:1,i32,i32:16",
         {"BLOCK_M1=32", "BLOCK_N1=64", "BLOCK_M2=64", "BLOCK_N2=32", "BLK_SLICE_FACTOR=2",
          "HEAD_DIM=32"},
         {N_CTX / 64, 1, 1},
         4,
         {F16(T, 0.125), F16(T, 0.125), F16(T, 0.5), SCALAR(0.5), F16(T, 0.5), OUT16(T), OUT16(T),
          OUT16(T), F32(N_CTX, 0.5), F32(N_CTX, 0.25), I(T), I(T), I(D), I(1), I(1), I(N_CTX)},
         16,
         4,
         4,
         /* on sm_80 each loop's two tiles are read back whole (the dots' other operands are
          * in registers, and mma.sync reads slots only in pairs); on sm_90a the wgmma ops read
          * the slots */
         .tiles = {8, 0}},
        /* tutorial 09's persistent matmul: 3 programs walk 2 x 2 tiles of 64 x 64 over K = 112
         * (the K tail masked; M and N off the blocks, the epilogue's stores masked) */
        {"examples/persistent_matmul.tri",
         "matmul_kernel_persistent",
         "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
         {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=32", "GROUP_SIZE_M=2", "NUM_SMS=3"},
         {3},
         4,
         {F16(80 * 112, 0), F16(112 * 96, 0), OUT16(80 * 96), I(80), I(96), I(112), I(112), I(1),
          I(96), I(1), I(96), I(1)},
         12,
         1},
        /* ... as Triton 3.6 writes it: the K loop nested in a loop over tiles that asks
         * flatten=True; flattened, then pipelined as the one above */
        PERSISTENT_NESTED(112, 3),
        PERSISTENT_NESTED(112, 5), /* more programs than tiles: the last has none */
        PERSISTENT_NESTED(32, 3),  /* one K step a tile: every step starts and ends one */
        PERSISTENT_NESTED(0, 3),   /* no K step: the nest without its inner loop stores zeros */
        /* a flattened nest whose K loop advances pointers set up by the prologue, with an
         * outer iter arg; K's tail masked; and no K step */
        FLAT_POINTERS(80),
        FLAT_POINTERS(0),
        RUNNING_OFFSET(0, 4, 1),
        RUNNING_OFFSET(0, 4, 2),
        RUNNING_OFFSET(3, -1, -1), /* a negative step */
        RUNNING_OFFSET(2, 2, 1),   /* no iteration: the copies read nothing, k0 stays lo */
        /* seed 1's fp32 matmul: its dot runs on FMA units; its fp32 tiles are copied ahead and
         * the dot reads both slots itself (on sm_90a through tensor maps into unswizzled slots);
         * M, N off the blocks (modulo-wrapped rows) and K = 40, a masked tail */
        {"examples/matmul.tri",
         "matmul_kernel",
         "*fp32:16,*fp32:16,*fp32:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
         {"BLOCK_SIZE_M=32", "BLOCK_SIZE_N=32", "BLOCK_SIZE_K=16"},
         {4, 1, 1},
         4,
         ROWMAJOR_MATMUL_ARGS(F32, OUT32, 48, 48, 40),
         1},
        /* ... in fp16 at 16 x 16 x 16 (FMA: too small for mma.sync's pieces in 4 warps): A
         * [M][K] slots read in runs along K; K = 40 (:8), a masked tail whose masks are constant
         * over 8 elements (16-byte copies); M, N :16 keep the wrapped rows contiguous */
        {"examples/matmul.tri",
         "matmul_kernel",
         "*fp16:16,*fp16:16,*fp32:16,i32:16,i32:16,i32:8,i32:8,i32:1,i32:16,i32:1,i32:16,i32:1",
         {"BLOCK_SIZE_M=16", "BLOCK_SIZE_N=16", "BLOCK_SIZE_K=16"},
         {9, 1, 1},
         4,
         ROWMAJOR_MATMUL_ARGS(F16, OUT32, 48, 48, 40),
         1},
        /* seed 2 in fp16 at 16 x 16 x 16, sizes :16 (on sm_90a through tensor maps into
         * unswizzled slots) */
        {"examples/matmul.tri",
         "kernel_matmul",
         "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
         {"BLOCK_SIZE_M=16", "BLOCK_SIZE_N=16", "BLOCK_SIZE_K=16", "GROUP_SIZE_M=2",
          "T_C=tl.float16", "T_ACC=tl.float32"},
         {9, 1, 1},
         4,
         ROWMAJOR_MATMUL_ARGS(F16, OUT16, 48, 48, 64),
         1},
        /* 2-D tiles feeding no dot (elementwise math, a store, column sums) in a dotless
         * tl.range(..., num_stages=3): 80 rows in blocks of 32, the last one masked; fp32 and
         * fp16 */
        {"tests/lit/codegen/pipe_shapes.tri",
         "tile_rows",
         "*fp32:16,*fp32:16,*fp32:16,i32,i32,i32",
         {"BLOCK_M=32", "BLOCK_N=64"},
         {1},
         4,
         {F32(80 * 64, 0), OUT32(80 * 64), OUT32(64), I(80), I(0), I(3)},
         6,
         1,
         .tiles = {1, 1},
         .asks = true},
        {"tests/lit/codegen/pipe_shapes.tri",
         "tile_rows",
         "*fp16:16,*fp16:16,*fp32:16,i32,i32,i32",
         {"BLOCK_M=32", "BLOCK_N=64"},
         {1},
         4,
         {F16(80 * 64, 0), OUT16(80 * 64), OUT32(64), I(80), I(0), I(3)},
         6,
         1,
         .tiles = {1, 1},
         .asks = true},
        /* ... and no iteration (lo = hi): the copies read nothing, Y keeps its poison, Z is 0 */
        {"tests/lit/codegen/pipe_shapes.tri",
         "tile_rows",
         "*fp32:16,*fp32:16,*fp32:16,i32,i32,i32",
         {"BLOCK_M=32", "BLOCK_N=64"},
         {1},
         4,
         {F32(80 * 64, 0), OUT32(80 * 64), OUT32(64), I(80), I(2), I(2)},
         6,
         1,
         .tiles = {1, 1},
         .asks = true},
        /* a 2-D fp32 tile added to a dot's accumulator each K block, copied ahead with A, B */
        {"tests/lit/codegen/pipe_shapes.tri",
         "tile_beside_dot",
         "*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32:16",
         {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32"},
         {1},
         4,
         {F16(64 * 128, 0), F16(128 * 64, 0), F32(4 * 64 * 64, 0), OUT32(64 * 64), I(128)},
         5,
         1,
         .tiles = {1, 1}},
        /* nested loops: programs walk C's row tiles by a run-time step, each running a K loop
         * (K = 80: a masked tail; M = 100: the last tile masked); the inner loop is pipelined
         * inside the outer one. With 5 programs and step 5, program 4 has no tile at all. */
        NESTED_TILES(2, 2),
        NESTED_TILES(5, 5),
        /* ... with PassOptions.tma_store: C's fp32 tile through a tma_store in the loop over
         * tiles, the map's dim bounded at M (the last tile's 28 rows past M not written) */
        NESTED_TILES_AS(2, 2, 1),
        /* dot operands widened to fp32 after their loads (cast_operands): copied ahead and read
         * back whole, the casts after the reads; K = 80, a masked tail */
        {"tests/lit/codegen/pipe_shapes.tri",
         "cast_operands",
         "*fp16:16,*fp16:16,*fp32:16,i32:16",
         {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32"},
         {1},
         4,
         {F16(64 * 80, 0), F16(80 * 64, 0), OUT32(64 * 64), I(80)},
         4,
         1,
         .tiles = {2, 2}},
        /* seed 2 with its K loop warp-specialized (warp_specialize.tri): on sm_90a a producer
         * warpgroup's copies, the consumers' arrivals on the empty mbarriers (run in program
         * order here: every wait finds its phase complete); 2 x 2 tiles of 64, K = 160 */
        WS_MATMUL(0),
        /* ... with PassOptions.tma_store: the consumers' C tile through a tma_store (the mask's
         * bounds on M and N become the map's dims) */
        WS_MATMUL(1),
        /* tutorial 06's attention forward (examples/attention.tri), causal (STAGE 3: the loop
         * left of the diagonal, then the diagonal's, made one loop by fuse_loops, the mask under
         * an `if`), D = 128, blocks of 128 on 8 warps: 2 programs over N_CTX = 256, the first
         * running only the diagonal's block. The epilogue's normalization and cast run in the
         * accumulator's layout (layouts' sink_converts); on sm_80 K and V are read back whole
         * (the dots' other operands are in registers). Then as written (PassOptions.no_fuse_loops:
         * two loops, q loaded once for both, on sm_90a through TMA, its mbarrier retired after
         * the first) */
        ATTN_FWD(3, 128, 2, False, 1, 2),
        ATTN_FWD_TWO_LOOPS(3, 128, 2, False, 2, 4),
        /* ... on 3 stages (sm_90a: the slots exceed sm_80's shared memory), not causal and
         * causal: the loop gets a producer warpgroup its tl.range does not ask for, chosen by the
         * pass (two wgmma ops an iteration on 3 slots, one program an SM); causal as written,
         * the first loop gets it */
        ATTN_FWD_ON(1, 128, 3, False, 1, 0, 1, true),
        ATTN_FWD_ON(3, 128, 3, False, 1, 0, 1, true),
        ATTN_FWD_TWO_LOOPS_ON(3, 128, 3, False, 2, 0, 1, true),
        /* the same over 10 heads: heavy_first reads start_m and off_hz back from the launch
         * index, the longest programs first, 8 heads at a time (a group of 8, then one of 2) */
        ATTN_FWD_HEADS(3, 128, 2, False, 1, 2, 10),
        /* the same, its loop asking warp_specialize=True (Triton 3.6's spelling): on sm_90a a
         * producer warpgroup issues K and V's copies (q's mbarrier, set up after the loop's,
         * too, before the partitions split); blocks of 64 along N_CTX = 256, so a program runs
         * up to 4 iterations on 3 slots, the ring wrapping. Not causal (STAGE 1: one loop, K
         * and V read back whole on sm_80), causal (STAGE 3, the loops fused: the producer issues
         * the copies of both ranges, 1 for the first program and 3 for the second), and causal
         * as written (the producer issues the first loop's copies, none for the first program
         * and 2 for the second; the consumers then run the diagonal's loop as it was, its copies
         * included, into the same memory) */
        ATTN_FWD(1, 64, 3, True, 1, 2),
        ATTN_FWD(3, 64, 3, True, 1, 2),
        ATTN_FWD_TWO_LOOPS(3, 64, 3, True, 2, 4),
        /* tutorial 06's forward made persistent (passes/persistent.c): 3 programs walk the
         * (query block, head) tiles, program_id(0) and (1) computed from the tile: 4 tiles of
         * 2 heads, the first program taking two. Not causal on 3 stages (sm_90a: the loop over
         * tiles offered to warp_specialize, which gives it the producer, the ring going on
         * across tiles); its loop asking warp_specialize (the ask moved to the loop over tiles);
         * causal (heavy_first's launch order read back from the tile; 2 stages, so no
         * producer) */
        ATTN_FWD_GRID(1, 128, 3, False, 1, 0, 2, true, true),
        ATTN_FWD_GRID(1, 64, 3, True, 1, 2, 2, false, true),
        ATTN_FWD_GRID(3, 128, 2, False, 1, 2, 2, false, true),
        ATTN_FWD_W4_PERSISTENT,
        /* the causal kernel as one loop, its mask under an `if` in the body
         * (tests/lit/codegen/Inputs/attention_branch.tri), made persistent: on sm_90a the loop
         * gets the producer the pass chooses, q goes to registers before it; p @ v stays in
         * flight into the next iteration (p depends on q @ k through both branches), and with
         * overlap_dots it is issued an iteration late. split_loops then makes it two loops at
         * the diagonal, neither with the `if`, the pipeline's state going from the first to the
         * second; with no_fuse_loops the `if` stays in the consumers' loop */
        ATTN_FWD_GRID_IN("tests/lit/codegen/Inputs/attention_branch.tri", 3, 128, 3, False, 1, 0, 2,
                         true, true),
        ATTN_FWD_CASE("tests/lit/codegen/Inputs/attention_branch.tri", 3, 128, 3, False, 1, 0, 2,
                      true, true, true),
        /* tutorial 06's forward as a persistent kernel (examples/attention_persistent.tri), its
         * loop over tiles asking warp_specialize: on sm_90a the producer runs its own copy of
         * that loop, K and V's ring going on across tiles, the consumers loading each tile's q
         * with their own loads; as written (WS False) too */
        ATTN_PERSISTENT(True),
        ATTN_PERSISTENT(False),
        ATTN_PERSISTENT_D(128, 128, True),
        ATTN_PERSISTENT_D(128, 128, False),
        /* tutorial 09's persistent matmul through descriptors, its loop over tiles
         * warp-specialized: on sm_90a the producer's ring of slots goes on across tiles (3
         * programs walk 2 x 3 tiles of 64, M and N off the blocks; K = 112 with a tail, K = 32
         * (fewer K steps than prologue copies) and K = 0 (no K step: the tiles store zeros); C
         * stored in two halves too (reshape, permute, split of the accumulator) */
        PERSISTENT_DESC_WS(112, False),
        PERSISTENT_DESC_WS(32, False),
        PERSISTENT_DESC_WS(0, False),
        PERSISTENT_DESC_WS(112, True),
        /* ... with --pingpong: a second consumer group takes every other tile (the tiles' work
         * under consumer_turn, the groups' K loops in turn, each group freeing its own slots) */
        PERSISTENT_DESC_PP(112, False),
        PERSISTENT_DESC_PP(32, False),
        PERSISTENT_DESC_PP(0, False),
        PERSISTENT_DESC_PP(112, True),
        /* ... with PassOptions.tma_store: each tile's C through a tma_store, as written,
         * warp-specialized (the consumers' stores), in two halves, with two consumer groups
         * (each group's scratch its own) */
        PERSISTENT_DESC_TMA_STORE(112, False, False, False),
        PERSISTENT_DESC_TMA_STORE(112, True, False, False),
        PERSISTENT_DESC_TMA_STORE(112, True, True, False),
        PERSISTENT_DESC_TMA_STORE(32, True, False, True),
        FP8_PROMOTED(192, 64, 64, 3), /* three iterations: one pair and the odd one */
        FP8_PROMOTED(256, 64, 64, 3), /* two pairs */
        FP8_PROMOTED(64, 64, 64, 3),  /* the odd iteration alone */
        FP8_PROMOTED(256, 64, 32, 1), /* two runs an iteration: the dot's own form */
        FP8_PROMOTED_WS(320),
        FP8_PROMOTED_WS(256),
        PERSISTENT_DESC_FP8(96, False, False),
        PERSISTENT_DESC_FP8(96, True, False),
        PERSISTENT_DESC_FP8(96, True, True),
        PERSISTENT_DESC_TF32(48, False, False),
        PERSISTENT_DESC_TF32(40, True, True),
        PERSISTENT_DESC(112, False, False, True),
        PERSISTENT_DESC(0, False, False, True),
        /* FMA dots reading slots operand by operand (fma_shapes): U = W @ X with W in registers
         * and X from its slot; Acc = X @ Y^T with X from the same slot and Y read back whole;
         * K = 40, a masked tail; fp16 and fp32 */
        FMA_SHAPES("*fp16:16,*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32:8", F16),
        FMA_SHAPES("*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32:8", F32),
        /* a row of scales per K block feeding no dot, copied ahead as a rank-1 tile */
        {"tests/lit/codegen/pipe_shapes.tri",
         "row_scales",
         "*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32:16",
         {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32"},
         {1},
         4,
         {F16(64 * 128, 0), F16(128 * 64, 0), F32(4 * 64, 0), OUT32(64 * 64), I(128)},
         5,
         1,
         1},
        /* two loops that fuse_loops makes one (tests/lit/passes/Inputs/fuse_loops.tri, CASE 0):
         * program p sums 2 p blocks of 32, then one block doubled under the fused loop's `if`;
         * program 0's first loop runs no iteration, so the fused loop starts in the second's
         * range. Both ask num_stages=3: the fused loop's load is copied ahead as a rank-1 tile */
        {"tests/lit/passes/Inputs/fuse_loops.tri",
         "split_sum",
         "*fp32:16,*fp32:16,*fp32:16",
         {"BLOCK=32", "SPAN=64", "CASE=0"},
         {3},
         4,
         {F32(160, 0), F32(160, 0), OUT32(96)},
         3,
         1,
         1,
         .asks = true},
        /* a loop's `if` on its counter k against x = pid * 40 - 40 (below the range, at a
         * counter value, between two, past it), each comparison form (FORM 0-7: k >= x, k < x,
         * k > x, k <= x, x <= k, x > k, x < k, x >= k; tests/lit/passes/Inputs/split_loops.tri):
         * split_loops makes it two loops at the first counter value on the >= side, every
         * program's sum bit-identical */
        BRANCH_FORM(0),
        BRANCH_FORM(1),
        BRANCH_FORM(2),
        BRANCH_FORM(3),
        BRANCH_FORM(4),
        BRANCH_FORM(5),
        BRANCH_FORM(6),
        BRANCH_FORM(7),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_case(&cases[i], false);
        /* attention forward again with PassOptions.overlap_dots: p @ v issued an iteration late
         * (guarded off in the first), bit-identical after every pass, zero-trip loops included
         * (the causal kernel's first program) */
        if (!strncmp(cases[i].kernel, "attn_fwd", 8))
            run_case(&cases[i], true);
    }
    if (test_failures)
        printf("%d failures\n", test_failures);
    else
        printf("passes_interp_loops: every pass kept every kernel's results\n");
    return test_failures ? 1 : 0;
}
