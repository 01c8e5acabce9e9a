/* codegen_gpu_diff.c: the codegen test kernels (the .tri files of tests/lit/codegen) run on cuda:0 and on the
 * CPU interpreter with the same random inputs; every output element must agree (exactly for
 * integers and data movement, within a tolerance for float math). This is what checks the
 * generated PTX computes what the IR means: reductions across lanes and warps, convert_layout and
 * trans through registers or shared memory, control flow, integer semantics, libdevice math.
 * Output buffers are poisoned (0xFF bytes) before each launch, so an element the GPU never wrote
 * fails. Skips (exit 77) with the reason when cuda:0 cannot be opened. */
#include "gpu_pair.h"
#include "tric/tric.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The case tables list only the fields a case needs; the rest (stages, grid y) are 0. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

/* pipe_shapes.tri's running_offset over K = 112 (a masked tail) from lo to hi by step. */
#define RUNNING_OFFSET(lo, hi, step)                                                               \
    {                                                                                              \
        "pipe_shapes.tri", "running_offset", "*fp16:16,*fp16:16,*fp32:16,i32:16,i32,i32,i32",      \
            {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32"}, 3, 1,                                      \
            {{E_F16, 64 * 112, FILL_UNIFORM, 0},                                                   \
             {E_F16, 112 * 64, FILL_UNIFORM, 0},                                                   \
             {E_F32, 64 * 64, FILL_POISON, 1e-3}},                                                 \
            3, {112, lo, hi, step}, 4, 4                                                           \
    }

/* pipe_shapes.tri's tile_rows: ROWS rows of BLOCK_N elements of type ELEM (E_F32 or E_F16) in
 * blocks of BLOCK_M, from block lo to hi; Y's and Z's tolerances. */
#define TILE_ROWS(sig, bm, bn, elem, rows, ytol, ztol, lo, hi)                                     \
    {                                                                                              \
        "pipe_shapes.tri", "tile_rows", sig, {"BLOCK_M=" #bm, "BLOCK_N=" #bn}, 2, 1,               \
            {{elem, (rows) * (bn), FILL_UNIFORM, 0},                                               \
             {elem, (rows) * (bn), FILL_POISON, ytol},                                             \
             {E_F32, bn, FILL_POISON, ztol}},                                                      \
            3, {rows, lo, hi}, 3                                                                   \
    }

/* pipe_shapes.tri's fma_shapes (BT = BK = 16, K = 40): W, X, Y of elem, U and Acc fp32 */
#define FMA_SHAPES(sig, elem, tol)                                                                 \
    {                                                                                              \
        "pipe_shapes.tri", "fma_shapes", sig, {"BT=16", "BK=16"}, 2, 1,                            \
            {{elem, 16 * 16, FILL_UNIFORM, 0},                                                     \
             {elem, 16 * 40, FILL_UNIFORM, 0},                                                     \
             {elem, 16 * 40, FILL_UNIFORM, 0},                                                     \
             {E_F32, 16 * 40, FILL_POISON, tol},                                                   \
             {E_F32, 16 * 16, FILL_POISON, tol}},                                                  \
            5, {40}, 1                                                                             \
    }

static int failures;

/* One buffer argument: element type, count, and how to fill it. */
/* FILL_BYTES: any uint8 (packed e2m1 pairs); FILL_E8M0: uint8 scales 124..130, 2^-3..2^3 */
typedef enum Fill {
    FILL_POISON,
    FILL_UNIFORM,
    FILL_POSITIVE,
    FILL_INT,
    FILL_NONZERO_INT,
    FILL_BYTES,
    FILL_E8M0
} Fill;
typedef enum Elem { E_F32, E_F16, E_I32, E_I8, E_BF16, E_F8E4, E_F8E5, E_U8 } Elem;

typedef struct BufSpec {
    Elem elem;
    size_t count;
    Fill fill;
    double tol; /* relative tolerance for float outputs; 0 = exact */
} BufSpec;

typedef struct Case {
    const char *file; /* in tests/lit/codegen */
    const char *kernel;
    const char *signature;
    const char *defs[8];
    int ndefs;
    unsigned grid;
    BufSpec bufs[5];
    int nbufs;
    int32_t ints[16]; /* scalar i32 args after the buffers */
    int nints;
    int num_warps;   /* 0 = 4 */
    int num_stages;  /* 0 = the default (3) */
    unsigned grid_y; /* 0 = 1 */
    int stream_k;    /* tric_compile_options.stream_k on the GPU (the interpreter runs the
                        kernel as written) */
    int f32_at;      /* > 0: an fp32 scalar, f32, goes before buffer f32_at (attention's
                        sm_scale) */
    float f32;
    int pingpong;      /* tric_compile_options.pingpong on the GPU */
    int tma_store;     /* tric_compile_options.tma_store on the GPU */
    int persistent;    /* tric_compile_options.persistent on the GPU (last: cases fill the rest in
                       order) */
    int overlap_dots;  /* tric_compile_options.overlap_dots on the GPU */
    int no_fuse_loops; /* tric_compile_options.no_fuse_loops on the GPU */
} Case;

/* Tutorial 06's attention forward (examples/attention.tri) with warp_specialize=True, D = 64,
 * blocks of 128 x 64 on 8 warps, 3 stages, Z = H = 1, N_CTX = 256 (2 programs): a producer
 * warpgroup for the loop's K and V; STAGE 3 (causal): the two loops fused into one
 * (passes/fuse_loops.c), the producer copying the diagonal's blocks too, the mask under an `if`.
 * Q, K, V, M, Out; the strides of q, k, v, o, then H and N_CTX. */
#define ATTN_FWD_WS(STAGE)                                                                         \
    {                                                                                              \
        "../../../examples/attention.tri", "attn_fwd",                                             \
            "*fp16:16,*fp16:16,*fp16:16,fp32,*fp32:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,"       \
            "i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32,i32:16",                  \
            {"HEAD_DIM=64",   "BLOCK_M=128",  "BLOCK_N=64",                                        \
             "STAGE=" #STAGE, "num_stages=3", "warp_specialize=True"},                             \
            6, 2,                                                                                  \
            {{E_F16, 256 * 64, FILL_UNIFORM, 0},                                                   \
             {E_F16, 256 * 64, FILL_UNIFORM, 0},                                                   \
             {E_F16, 256 * 64, FILL_UNIFORM, 0},                                                   \
             {E_F32, 256, FILL_POISON, 1e-3},                                                      \
             {E_F16, 256 * 64, FILL_POISON, 1e-2}},                                                \
            5, {256 * 64, 256 * 64, 64,       256 * 64, 256 * 64, 64, 256 * 64,                    \
                256 * 64, 64,       256 * 64, 256 * 64, 64,       1,  256},                        \
            14, 8, 3, 0, 0, 3, 0.125f                                                              \
    }

/* Tutorial 06's attention forward (examples/attention.tri) made persistent (--persistent), head
 * dim D, blocks of BM x BN on WARPS warps, STAGES stages, Z = 1, H heads, N_CTX = 256: (256 / BM)
 * H tiles walked by the programs the GPU holds at once. On an H200: D = 128, 128 x 128 blocks on
 * 8 warps over 70 heads, 140 tiles on 132 programs; STAGE 1 on 3 stages, the producer the pass
 * chooses runs into the next tile; STAGE 3 (causal) on 2, its loops fused, no producer, its tiles
 * in pairs (the first 8 programs run query blocks 0 and 1 of a head), and on 3 (the form tric
 * gives the causal kernel unasked: the pairs and the producer). D = 64, causal, 128 x 64 on 4 warps, 3 stages over
 * 250 heads: 500 tiles on 396 programs (three an SM), q in a slot of its own refilled every tile
 * over memory the tile before wrote as scratch (the copies' async proxy fenced after it). FILE: a
 * kernel with attn_fwd's parameters (ATTN_GRID_PERSISTENT_OPT: examples/attention.tri). */
#define ATTN_GRID_PERSISTENT_AS(FILE, D, BM, BN, WARPS, STAGE, STAGES, H, OVERLAP, NO_FUSE)        \
    {                                                                                              \
        FILE, "attn_fwd",                                                                          \
            "*fp16:16,*fp16:16,*fp16:16,fp32,*fp32:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,"       \
            "i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32,i32:16",                  \
            {"HEAD_DIM=" #D, "BLOCK_M=" #BM, "BLOCK_N=" #BN, "STAGE=" #STAGE,                      \
             "num_stages=" #STAGES},                                                               \
            5, 256 / (BM),                                                                         \
            {{E_F16, (H)*256 * (D), FILL_UNIFORM, 0},                                              \
             {E_F16, (H)*256 * (D), FILL_UNIFORM, 0},                                              \
             {E_F16, (H)*256 * (D), FILL_UNIFORM, 0},                                              \
             {E_F32, (H)*256, FILL_POISON, 1e-3},                                                  \
             {E_F16, (H)*256 * (D), FILL_POISON, 1e-2}},                                           \
            5,                                                                                     \
            {(H)*256 * (D),                                                                        \
             256 * (D),                                                                            \
             D,                                                                                    \
             (H)*256 * (D),                                                                        \
             256 * (D),                                                                            \
             D,                                                                                    \
             (H)*256 * (D),                                                                        \
             256 * (D),                                                                            \
             D,                                                                                    \
             (H)*256 * (D),                                                                        \
             256 * (D),                                                                            \
             D,                                                                                    \
             H,                                                                                    \
             256},                                                                                 \
            14, WARPS, STAGES, H, 0, 3, 0.125f, .persistent = 1, .overlap_dots = OVERLAP,          \
                                                .no_fuse_loops = NO_FUSE                           \
    }
#define ATTN_GRID_PERSISTENT_IN(FILE, D, BM, BN, WARPS, STAGE, STAGES, H, OVERLAP)                 \
    ATTN_GRID_PERSISTENT_AS(FILE, D, BM, BN, WARPS, STAGE, STAGES, H, OVERLAP, 0)
#define ATTN_GRID_PERSISTENT_OPT(D, BM, BN, WARPS, STAGE, STAGES, H, OVERLAP)                      \
    ATTN_GRID_PERSISTENT_IN("../../../examples/attention.tri", D, BM, BN, WARPS, STAGE, STAGES, H, \
                            OVERLAP)
#define ATTN_GRID_PERSISTENT(D, BM, BN, WARPS, STAGE, STAGES, H)                                   \
    ATTN_GRID_PERSISTENT_OPT(D, BM, BN, WARPS, STAGE, STAGES, H, 0)

/* examples/attention_persistent.tri (tutorial 06's forward as a persistent kernel): head dim D,
 * blocks of 128 x BN on 8 warps, 3 stages, Z = 1, H = 2, N_CTX = 256: 4 tiles walked by 3
 * programs (the first takes tiles 0 and 3). Its loop over tiles asking warp_specialize (WS True),
 * the producer copies tile 3's first K and V blocks while the consumers finish tile 0; not asking,
 * each tile's q is a tensor-map copy into a slot of its own, refilled every tile. */
#define ATTN_PERSISTENT_CASE(D, BN, WS)                                                            \
    {                                                                                              \
        "../../../examples/attention_persistent.tri", "attn_fwd_persistent",                       \
            "*fp16:16,*fp16:16,*fp16:16,fp32,*fp32:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,"       \
            "i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32,i32,i32:16",              \
            {"HEAD_DIM=" #D, "BLOCK_M=128", "BLOCK_N=" #BN,                                        \
             "num_stages=3", "NUM_SMS=3",   "warp_specialize=" #WS},                               \
            6, 3,                                                                                  \
            {{E_F16, 2 * 256 * (D), FILL_UNIFORM, 0},                                              \
             {E_F16, 2 * 256 * (D), FILL_UNIFORM, 0},                                              \
             {E_F16, 2 * 256 * (D), FILL_UNIFORM, 0},                                              \
             {E_F32, 2 * 256, FILL_POISON, 1e-3},                                                  \
             {E_F16, 2 * 256 * (D), FILL_POISON, 1e-2}},                                           \
            5,                                                                                     \
            {2 * 256 * (D),                                                                        \
             256 * (D),                                                                            \
             D,                                                                                    \
             2 * 256 * (D),                                                                        \
             256 * (D),                                                                            \
             D,                                                                                    \
             2 * 256 * (D),                                                                        \
             256 * (D),                                                                            \
             D,                                                                                    \
             2 * 256 * (D),                                                                        \
             256 * (D),                                                                            \
             D,                                                                                    \
             1,                                                                                    \
             2,                                                                                    \
             256},                                                                                 \
            15, 8, 3, 0, 0, 3, 0.125f                                                              \
    }

/* Seed 2 fp16 with --stream-k: C [M, N] = A [M, 256] B in BM x BN x BK tiles, 144 tiles either
 * way: SEED2_STREAM_K, 64 x 64 x 32 tiles of 8 K steps on min(144, SMs x blocks per SM) programs
 * (on an H200 several programs an SM: a program a tile, nothing split); SEED2_STREAM_K_WIDE,
 * 128 x 256 x 64 tiles (8 warps, 3 stages: 144 KB, one program an SM) of 4 K steps on min(144,
 * SMs) programs (on 132 SMs every tile split between two programs, each program's share 5 steps:
 * partials through the workspace, each summed by its tile's first piece). */
#define SEED2_STREAM_K_CASE(BM, BN, BK, M, N, WARPS, STAGES)                                       \
    {                                                                                              \
        "../../../examples/matmul.tri", "kernel_matmul",                                           \
            "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,"    \
            "i32:1",                                                                               \
            {"BLOCK_SIZE_M=" #BM, "BLOCK_SIZE_N=" #BN, "BLOCK_SIZE_K=" #BK,                        \
             "GROUP_SIZE_M=8",    "T_C=tl.float16",    "T_ACC=tl.float32"},                        \
            6, 144,                                                                                \
            {{E_F16, (M)*256, FILL_UNIFORM, 0},                                                    \
             {E_F16, 256 * (N), FILL_UNIFORM, 0},                                                  \
             {E_F16, (M) * (N), FILL_POISON, 1e-2}},                                               \
            3, {M, N, 256, 256, 1, N, 1, N, 1}, 9, WARPS, STAGES, 0, 1                             \
    }
/* ... seed 2 with its K loop warp-specialized (warp_specialize.tri's ws_matmul) and --stream-k,
 * 128 x 128 on 8 warps and 4 stages (a loop of one wgmma keeps its producer from 4 slots): the
 * producer warpgroup runs the loop over units (on the device's arch only) */
#define WS_STREAM_K_WIDE                                                                           \
    {                                                                                              \
        "warp_specialize.tri", "ws_matmul",                                                        \
            "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,"    \
            "i32:1",                                                                               \
            {"BLOCK_SIZE_M=128", "BLOCK_SIZE_N=128", "BLOCK_SIZE_K=64", "GROUP_SIZE_M=8"}, 4, 144, \
            {{E_F16, 1536 * 256, FILL_UNIFORM, 0},                                                 \
             {E_F16, 256 * 3072, FILL_UNIFORM, 0},                                                 \
             {E_F16, 1536 * 3072, FILL_POISON, 1e-2}},                                             \
            3, {1536, 3072, 256, 256, 1, 3072, 1, 3072, 1}, 9, 8, 4, 0, 1                          \
    }
#define SEED2_STREAM_K(WARPS, STAGES) SEED2_STREAM_K_CASE(64, 64, 32, 768, 768, WARPS, STAGES)
#define SEED2_STREAM_K_WIDE           SEED2_STREAM_K_CASE(128, 256, 64, 1536, 3072, 8, 3)

/* pipe_shapes.tri's nested_tiles: 2 programs walk C's 4 row tiles by 2, each running a pipelined
 * K loop with a masked tail (K = 80); C [100, 32] fp32, the last tile masked. */
#define NESTED_TILES                                                                               \
    {                                                                                              \
        "pipe_shapes.tri", "nested_tiles", "*fp16:16,*fp16:16,*fp32:16,i32,i32:16,i32",            \
            {"BLOCK_M=32", "BLOCK_N=32", "BLOCK_K=32"}, 3, 2,                                      \
            {{E_F16, 100 * 80, FILL_UNIFORM, 0},                                                   \
             {E_F16, 80 * 32, FILL_UNIFORM, 0},                                                    \
             {E_F32, 100 * 32, FILL_POISON, 1e-3}},                                                \
            3, {100, 80, 2}, 3                                                                     \
    }

/* Tutorial 09's persistent matmul (examples/FILE): C [200, 272] fp16 = A [200, K] B, 128 x 128 x
 * 64 tiles, 5 programs over the 2 x 3 tiles. */
#define PERSISTENT_MATMUL(FILE, K)                                                                 \
    {                                                                                              \
        "../../../examples/" FILE, "matmul_kernel_persistent",                                     \
            "*fp16:16,*fp16:16,*fp16:16,i32,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1", \
            {"BLOCK_SIZE_M=128", "BLOCK_SIZE_N=128", "BLOCK_SIZE_K=64", "GROUP_SIZE_M=2",          \
             "NUM_SMS=5"},                                                                         \
            5, 5,                                                                                  \
            {{E_F16, 200 * ((K) + 16), FILL_UNIFORM, 0},                                           \
             {E_F16, ((K) + 16) * 272, FILL_UNIFORM, 0},                                           \
             {E_F16, 200 * 272, FILL_POISON, 1e-2}},                                               \
            3, {200, 272, K, K, 1, 272, 1, 272, 1}, 9, 4, 3                                        \
    }

/* examples/persistent_desc_matmul.tri warp-specialized (WS True; PP 1: with --pingpong) or its
 * nest flattened (FLAT True): C [200, 272] fp16 = A [200, 336] B^T, B [272, 336], blocks of 128 x
 * BN x 64, PROGRAMS programs (5 unless named). */
#define PERSISTENT_DESC_ON(BN, WARPS, STAGES, WS, FLAT, PROGRAMS, PP)                              \
    {                                                                                              \
        "../../../examples/persistent_desc_matmul.tri", "matmul_kernel_descriptor_persistent",     \
            "*fp16:16,*fp16:16,*fp16:16,i32,i32:16,i32:16",                                        \
            {"BLOCK_SIZE_M=128",   "BLOCK_SIZE_N=" #BN,    "BLOCK_SIZE_K=64", "GROUP_SIZE_M=8",    \
             "NUM_SMS=" #PROGRAMS, "WARP_SPECIALIZE=" #WS, "FLATTEN=" #FLAT},                      \
            7, PROGRAMS,                                                                           \
            {{E_F16, 200 * 336, FILL_UNIFORM, 0},                                                  \
             {E_F16, 272 * 336, FILL_UNIFORM, 0},                                                  \
             {E_F16, 200 * 272, FILL_POISON, 2e-2}},                                               \
            3, {200, 272, 336}, 3, WARPS, STAGES, .pingpong = PP                                   \
    }
#define PERSISTENT_DESC(BN, WARPS, STAGES, WS, FLAT)                                               \
    PERSISTENT_DESC_ON(BN, WARPS, STAGES, WS, FLAT, 5, 0)
#define PERSISTENT_DESC_WS(BN, WARPS, STAGES) PERSISTENT_DESC(BN, WARPS, STAGES, True, False)
/* subtile.tri's sums_halves: the row sums of A [16, 96] and the column sums of B [96, N], halves
 * of each row swapped (a #blocked accumulator's halves kept in its registers) */
#define SUMS_HALVES(N, WARPS)                                                                      \
    {                                                                                              \
        "subtile.tri", "sums_halves", "*fp16:16,*fp16:16,*fp32:16",                                \
            {"M=16", "N=" #N, "K=96", "BK=32"}, 4, 1,                                              \
            {{E_F16, 16 * 96, FILL_UNIFORM, 0},                                                    \
             {E_F16, 96 * (N), FILL_UNIFORM, 0},                                                   \
             {E_F32, 16 * (N), FILL_POISON, 1e-5}},                                                \
            3, .num_warps = WARPS                                                                  \
    }
/* ... in fp8 e4m3 or fp32 through tf32 (B read through its `.T`: the [N, K] tile as loaded is
 * the K-major B that wgmma's fp8 and tf32 forms take), 128 x 128 x BK blocks on 4 warps, 4
 * stages, K = 336 (a tail) */
#define PERSISTENT_DESC_K_MAJOR(SIG, EIN, EOUT, TOL, BK, WS, PROGRAMS, PP)                         \
    {                                                                                              \
        "../../../examples/persistent_desc_matmul.tri", "matmul_kernel_descriptor_persistent",     \
            SIG,                                                                                   \
            {"BLOCK_SIZE_M=128",   "BLOCK_SIZE_N=128",     "BLOCK_SIZE_K=" #BK, "GROUP_SIZE_M=8",  \
             "NUM_SMS=" #PROGRAMS, "WARP_SPECIALIZE=" #WS, "FLATTEN=False"},                       \
            7, PROGRAMS,                                                                           \
            {{EIN, 200 * 336, FILL_UNIFORM, 0},                                                    \
             {EIN, 272 * 336, FILL_UNIFORM, 0},                                                    \
             {EOUT, 200 * 272, FILL_POISON, TOL}},                                                 \
            3, {200, 272, 336}, 3, 4, 4, .pingpong = PP                                            \
    }
#define PERSISTENT_DESC_FP8(WS, PROGRAMS, PP)                                                      \
    PERSISTENT_DESC_K_MAJOR("*fp8e4nv:16,*fp8e4nv:16,*fp16:16,i32,i32:16,i32:16", E_F8E4, E_F16,   \
                            2e-2, 128, WS, PROGRAMS, PP)
#define PERSISTENT_DESC_TF32(WS, PROGRAMS, PP)                                                     \
    PERSISTENT_DESC_K_MAJOR("*fp32:16,*fp32:16,*fp32:16,i32,i32:16,i32:16", E_F32, E_F32, 1e-2,    \
                            32, WS, PROGRAMS, PP)

/* fp8 sums promoted every BLOCK_K (max_num_imprecise_acc = BLOCK_K) and added an iteration late
 * (passes/defer_promotion.c, in a loop unrolled by two: unroll_loops.c), K = 640 (5 blocks of
 * 128: a pair twice and the odd last one): dot_imprecise_acc.tri's mm (64 x 64, one program) and
 * mm_ws (its loop asking warp_specialize, 4 stages: a producer), bench/fp8_promoted.tri at 128 x
 * 128 on 8 warps, 4 stages (C [256, 256], 4 programs) */
#define FP8_PROMOTED_MM(KERNEL, STAGES)                                                            \
    {                                                                                              \
        "dot_imprecise_acc.tri", KERNEL, "*fp8e4nv:16,*fp8e4nv:16,*fp32:16,i32:16",                \
            {"BM=64", "BN=64", "BK=128", "LIMIT=128"}, 4, 1,                                       \
            {{E_F8E4, 64 * 640, FILL_UNIFORM, 0},                                                  \
             {E_F8E4, 64 * 640, FILL_UNIFORM, 0},                                                  \
             {E_F32, 64 * 64, FILL_POISON, 2e-2}},                                                 \
            3, {640}, 1, 4, STAGES                                                                 \
    }
#define FP8_PROMOTED_SEED2_AS(M, N, PROGRAMS, STREAM_K)                                            \
    {                                                                                              \
        "../../../bench/fp8_promoted.tri", "kernel_matmul_promoted",                               \
            "*fp8e4nv:16,*fp8e4nv:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:1,i32:16,"     \
            "i32:16,i32:1",                                                                        \
            {"BLOCK_SIZE_M=128", "BLOCK_SIZE_N=128", "BLOCK_SIZE_K=128", "GROUP_SIZE_M=8",         \
             "MAX_IMPRECISE=128"},                                                                 \
            5, PROGRAMS,                                                                           \
            {{E_F8E4, (M)*640, FILL_UNIFORM, 0},                                                   \
             {E_F8E4, (N)*640, FILL_UNIFORM, 0},                                                   \
             {E_F16, (M) * (N), FILL_POISON, 2e-2}},                                               \
            3, {M, N, 640, 640, 1, 1, 640, N, 1}, 9, 8, 4, 0, STREAM_K                             \
    }
/* ... and with --stream-k over 144 tiles (1536 x 1536): on 132 SMs the last round's tiles split
 * between programs, each unit's K loop in the deferred form */
#define FP8_PROMOTED_SEED2    FP8_PROMOTED_SEED2_AS(256, 256, 4, 0)
#define FP8_PROMOTED_SEED2_SK FP8_PROMOTED_SEED2_AS(1536, 1536, 144, 1)

static size_t elem_bytes(Elem e)
{
    return e == E_I8 || e == E_F8E4 || e == E_F8E5 || e == E_U8 ? 1
           : e == E_F16 || e == E_BF16                          ? 2
                                                                : 4;
}

/* A kernel of examples/matmul.tri's shape (or warp_specialize.tri's) on row-major A [m, k] and
 * B [k, n] of `in`, C [m, n] fp32 or `out` (strides k, 1, n, 1, n, 1 after m, n, k), one program
 * a bm x bn tile of C, 4 warps, 3 stages: head's file, kernel, signature and defs with the
 * buffers, grid and scalars filled in. */
/* c compiled with tric_compile_options.tma_store on the GPU (its tile stores through TMA copies
 * on sm_90a). */
static Case with_tma_store(Case c)
{
    c.tma_store = 1;
    return c;
}

static Case with_stages(Case c, int stages)
{
    c.num_stages = stages;
    return c;
}

static Case rowmajor_matmul(Case head, int bm, int bn, Elem in, Elem out, int m, int n, int k,
                            double tol)
{
    Case c = head;
    c.grid = (unsigned)(((m + bm - 1) / bm) * ((n + bn - 1) / bn));
    c.bufs[0] = (BufSpec){in, (size_t)m * k, FILL_UNIFORM, 0};
    c.bufs[1] = (BufSpec){in, (size_t)k * n, FILL_UNIFORM, 0};
    c.bufs[2] = (BufSpec){out, (size_t)m * n, FILL_POISON, tol};
    c.nbufs = 3;
    const int32_t ints[9] = {m, n, k, k, 1, n, 1, n, 1};
    memcpy(c.ints, ints, sizeof ints);
    c.nints = 9;
    c.num_warps = 4;
    c.num_stages = 3;
    return c;
}

static uint64_t rng_state;
static uint32_t rng(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33);
}

static uint16_t f32_to_f16(float f)
{
    /* Inputs are small normal numbers: truncating the mantissa is enough for test data. */
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    int exp = (int)((x >> 23) & 0xff) - 127 + 15;
    if (exp <= 0)
        return (uint16_t)sign;
    return (uint16_t)(sign | (uint32_t)exp << 10 | ((x >> 13) & 0x3ff));
}

static float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, x;
    if (exp == 0)
        x = sign; /* flush subnormals: tests never make them */
    else if (exp == 31)
        x = sign | 0x7f800000 | man << 13;
    else
        x = sign | (exp - 15 + 127) << 23 | man << 13;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static void fill(void *data, const BufSpec *b)
{
    for (size_t i = 0; i < b->count; i++) {
        double u = (rng() & 0xffffff) / (double)0x1000000;
        switch (b->fill) {
        case FILL_POISON:
            memset((char *)data + i * elem_bytes(b->elem), 0xff, elem_bytes(b->elem));
            continue;
        case FILL_UNIFORM: u = u * 2 - 1; break;
        case FILL_POSITIVE: u = 0.25 + u * 4; break;
        case FILL_INT:
        case FILL_NONZERO_INT: break;
        case FILL_BYTES: ((uint8_t *)data)[i] = (uint8_t)rng(); continue;
        case FILL_E8M0: ((uint8_t *)data)[i] = (uint8_t)(124 + rng() % 7); continue;
        }
        if (b->elem == E_F32)
            ((float *)data)[i] = (float)u;
        else if (b->elem == E_F16)
            ((uint16_t *)data)[i] = f32_to_f16((float)u);
        else if (b->elem == E_BF16) { /* bf16 is the top half of an fp32 (truncated) */
            float f = (float)u;
            uint32_t x;
            memcpy(&x, &f, 4);
            ((uint16_t *)data)[i] = (uint16_t)(x >> 16);
        } else if (b->elem == E_I8)
            ((int8_t *)data)[i] = (int8_t)((int)(rng() % 17) - 8);
        else if (b->elem == E_F8E4) /* tric.h's rounding, the kernels' own */
            ((uint8_t *)data)[i] = tric_f32_to_fp8e4nv((float)u);
        else if (b->elem == E_F8E5)
            ((uint8_t *)data)[i] = tric_f32_to_fp8e5((float)u);
        else {
            int32_t v = (int32_t)(rng() % 20001) - 10000;
            if (b->fill == FILL_NONZERO_INT && v == 0)
                v = 7;
            ((int32_t *)data)[i] = v;
        }
    }
}

static double value(const void *data, Elem e, size_t i)
{
    switch (e) {
    case E_F32: return ((const float *)data)[i];
    case E_F16: return f16_to_f32(((const uint16_t *)data)[i]);
    case E_I8: return ((const int8_t *)data)[i];
    case E_U8: return ((const uint8_t *)data)[i];
    case E_F8E4: return tric_fp8e4nv_to_f32(((const uint8_t *)data)[i]);
    case E_F8E5: return tric_fp8e5_to_f32(((const uint8_t *)data)[i]);
    case E_BF16: {
        uint32_t x = (uint32_t)((const uint16_t *)data)[i] << 16;
        float f;
        memcpy(&f, &x, 4);
        return f;
    }
    default: return ((const int32_t *)data)[i];
    }
}

/* The arch GPU compiles use: NULL for the device's own (sm_90a on an H100: wgmma), or the same
 * without its arch-specific suffix (sm_90: mma.sync) to check that path too. */
static const char *gpu_arch;

/* Compiles and runs c on dev with the given initial buffer contents; outputs land in out[]. */
static bool run_on(tric_device dev, const Case *c, void *const *init, void **out)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/lit/codegen/%s", TRIC_SOURCE_DIR, c->file);
    FILE *probe = fopen(path, "r");
    if (probe)
        fclose(probe);
    else /* carried to another machine: run from the repository root */
        snprintf(path, sizeof path, "tests/lit/codegen/%s", c->file);
    tric_compile_options opt = tric_compile_options_default();
    opt.kernel = c->kernel;
    opt.signature = c->signature;
    opt.constexprs = c->defs;
    opt.nconstexprs = c->ndefs;
    opt.no_cache = 1;
    opt.num_warps = c->num_warps;
    opt.num_stages = c->num_stages;
    if (tric_device_get_kind(dev) == TRIC_DEVICE_CUDA) {
        opt.arch = gpu_arch;
        opt.stream_k = c->stream_k;
        opt.pingpong = c->pingpong;
        opt.tma_store = c->tma_store;
        opt.persistent = c->persistent;
        opt.overlap_dots = c->overlap_dots;
        opt.no_fuse_loops = c->no_fuse_loops;
    }
    tric_module mod = NULL;
    tric_kernel k = NULL;
    tric_buffer bufs[5] = {0};
    tric_arg args[24];
    int at = 0; /* the next argument */
    bool ok = tric_module_compile_file(dev, path, &opt, &mod) == TRIC_SUCCESS &&
              tric_module_get_kernel(mod, NULL, &k) == TRIC_SUCCESS;
    for (int i = 0; ok && i < c->nbufs; i++) {
        size_t bytes = c->bufs[i].count * elem_bytes(c->bufs[i].elem);
        ok = tric_buffer_alloc(dev, bytes, &bufs[i]) == TRIC_SUCCESS &&
             tric_copy_to_device(bufs[i], 0, init[i], bytes, NULL) == TRIC_SUCCESS;
        if (c->f32_at > 0 && i == c->f32_at)
            args[at++] = TRIC_ARG_F32(c->f32);
        args[at++] = TRIC_ARG_BUF(bufs[i]);
    }
    for (int i = 0; i < c->nints; i++)
        args[at++] = TRIC_ARG_I32(c->ints[i]);
    if (ok)
        ok = tric_launch(k, (tric_dim3){c->grid, c->grid_y ? c->grid_y : 1, 1}, args, at, NULL) ==
                 TRIC_SUCCESS &&
             tric_device_synchronize(dev) == TRIC_SUCCESS;
    for (int i = 0; ok && i < c->nbufs; i++)
        ok = tric_copy_to_host(out[i], bufs[i], 0, c->bufs[i].count * elem_bytes(c->bufs[i].elem),
                               NULL) == TRIC_SUCCESS;
    if (!ok)
        printf("FAIL %s on %s: %s\n", c->kernel, tric_device_name(dev), tric_last_error());
    for (int i = 0; i < c->nbufs; i++)
        if (bufs[i])
            tric_buffer_free(bufs[i]);
    if (mod)
        tric_module_destroy(mod);
    return ok;
}

static void run_case(tric_device gpu, tric_device cpu, const Case *c)
{
    /* CODEGEN_DIFF_ONLY=desc_: only the kernels whose name contains it (under a sanitizer) */
    const char *only = getenv("CODEGEN_DIFF_ONLY");
    if (only && !strstr(c->kernel, only))
        return;
    void *init[5], *got[5], *want[5];
    for (int i = 0; i < c->nbufs; i++) {
        size_t bytes = c->bufs[i].count * elem_bytes(c->bufs[i].elem);
        init[i] = malloc(bytes);
        got[i] = malloc(bytes);
        want[i] = malloc(bytes);
        fill(init[i], &c->bufs[i]);
    }
    if (!run_on(cpu, c, init, want) || !run_on(gpu, c, init, got)) {
        failures++;
    } else {
        for (int i = 0; i < c->nbufs; i++) {
            int bad = 0;
            for (size_t j = 0; j < c->bufs[i].count; j++) {
                double w = value(want[i], c->bufs[i].elem, j),
                       g = value(got[i], c->bufs[i].elem, j);
                double tol = c->bufs[i].tol * fmax(1.0, fabs(w));
                bool same = (isnan(w) && isnan(g)) || fabs(w - g) <= tol;
                if (!same && bad++ < 5)
                    printf("FAIL %s: buffer %d element %zu: gpu %.9g, interpreter %.9g\n",
                           c->kernel, i, j, g, w);
            }
            if (bad) {
                printf("FAIL %s: buffer %d: %d of %zu elements differ\n", c->kernel, i, bad,
                       c->bufs[i].count);
                failures++;
            }
        }
        printf("%s", c->kernel);
        for (int i = 0; i < c->ndefs; i++)
            printf(" %s", c->defs[i]);
        if (c->num_stages)
            printf(" s%d", c->num_stages);
        printf(" w%d (%s): compared%s\n", c->num_warps ? c->num_warps : 4,
               gpu_arch ? gpu_arch : "the device's arch", failures ? " (failures so far)" : "");
    }
    for (int i = 0; i < c->nbufs; i++) {
        free(init[i]);
        free(got[i]);
        free(want[i]);
    }
}

int main(void)
{
    tric_device gpu, cpu;
    /* CODEGEN_DIFF_DEVICE=cpu checks the harness itself on a machine without a GPU. */
    const char *spec = getenv("CODEGEN_DIFF_DEVICE") ? getenv("CODEGEN_DIFF_DEVICE") : "cuda:0";
    /* First every case compiled without the arch-specific suffix (sm_90a -> sm_90: mma.sync, no
     * wgmma), then the tensor-core cases for the device's own arch (below). */
    static char generic_arch[16];
    int status = gpu_pair_open(spec, &gpu, &cpu, generic_arch, sizeof generic_arch);
    if (status)
        return status;
    rng_state = 12345;
    gpu_arch = tric_device_get_kind(gpu) == TRIC_DEVICE_CUDA ? generic_arch : NULL;
#define MMA_CASE(sig, t, e, m, n, k, w)                                                            \
    {                                                                                              \
        "dots.tri", "dots", sig, {t, "ACC=tl.float32", "M=" #m, "N=" #n, "K=" #k}, 5, 1,           \
            {{e, (m) * (k), FILL_UNIFORM, 0},                                                      \
             {e, (k) * (n), FILL_UNIFORM, 0},                                                      \
             {E_F32, (m) * (n), FILL_POISON, 1e-3}},                                               \
            3, {0}, 0, w                                                                           \
    }
    /* A K loop around the dot (dot_loop.tri: the accumulator the loop's only carried chain, the
     * K tail masked): on sm_90a the pipelined wgmma schedule (two staging buffers, wait_group 1
     * in the loop, docs/codegen.md "Pipelined wgmma"); K gives the trip count. */
#define LOOP_CASE(sig, t, e, m, n, bk, k, w)                                                       \
    {                                                                                              \
        "dot_loop.tri", "dot_loop", sig, {t, "M=" #m, "N=" #n, "BK=" #bk}, 4, 1,                   \
            {{e, (m) * (k), FILL_UNIFORM, 0},                                                      \
             {e, (k) * (n), FILL_UNIFORM, 0},                                                      \
             {E_F32, (m) * (n), FILL_POISON, 1e-3}},                                               \
            3, {k}, 1, w                                                                           \
    }
    /* tl.dot_scaled in mx_matmul.tri (tutorial 10's form): A M x K and B N x K in formats fa / fb
     * (buffers ba / bb: fp8 values, or bytes of packed e2m1 pairs), uint8 e8m0 scales per 32 K,
     * a grid of BM x BN tiles with masked edges, a K loop: the upcast, scale and NaN mask of
     * frontend/build_ir.c and then the dot path of the arch. */
#define MX_CASE(fa, sa, ba, fb, sb, bb, m, n, k, bm, bn, bk, w)                                    \
    {                                                                                              \
        "mx_matmul.tri", "mx_matmul",                                                              \
            "*" sa ":16,*u8:16,*" sb ":16,*u8:16,*fp32:16,i32,i32,i32:16",                         \
            {"BLOCK_M=" #bm, "BLOCK_N=" #bn, "BLOCK_K=" #bk, "A_FORMAT=\"" fa "\"",                \
             "B_FORMAT=\"" fb "\""},                                                               \
            5, ((m) + (bm)-1) / (bm),                                                              \
            {ba,                                                                                   \
             {E_U8, (m) * (k) / 32, FILL_E8M0, 0},                                                 \
             bb,                                                                                   \
             {E_U8, (n) * (k) / 32, FILL_E8M0, 0},                                                 \
             {E_F32, (m) * (n), FILL_POISON, 1e-3}},                                               \
            5, {m, n, k}, 3, w, 0, ((n) + (bn)-1) / (bn)                                           \
    }
#define MX_FP8(e, count)                                                                           \
    {                                                                                              \
        e, count, FILL_UNIFORM, 0                                                                  \
    }
#define MX_FP4(count)                                                                              \
    {                                                                                              \
        E_U8, (count) / 2, FILL_BYTES, 0                                                           \
    }
    const Case cases[] = {
        {"reduce.tri",
         "row_reduce",
         "*fp32:16,*fp32:16,*i32:16",
         {"M=64", "N=128"},
         2,
         1,
         {{E_F32, 64 * 128, FILL_UNIFORM, 0},
          {E_F32, 64 + 128 + 1, FILL_POISON, 1e-4},
          {E_I32, 64, FILL_POISON, 0}},
         3,
         {0},
         0,
         0},
        {"reduce.tri",
         "row_reduce",
         "*fp32:16,*fp32:16,*i32:16",
         {"M=16", "N=32"},
         2,
         1,
         {{E_F32, 16 * 32, FILL_UNIFORM, 0},
          {E_F32, 16 + 32 + 1, FILL_POISON, 1e-4},
          {E_I32, 16, FILL_POISON, 0}},
         3,
         {0},
         0,
         0},
        {"reduce.tri",
         "row_reduce",
         "*fp32:16,*fp32:16,*i32:16",
         {"M=8", "N=16"},
         2,
         1,
         {{E_F32, 8 * 16, FILL_UNIFORM, 0},
          {E_F32, 8 + 16 + 1, FILL_POISON, 1e-4},
          {E_I32, 8, FILL_POISON, 0}},
         3,
         {0},
         0,
         0},
#define WARP_REDUCE(r, c, warps)                                                                   \
    {"reduce_warps.tri",                                                                           \
     "warp_reduce",                                                                                \
     "*fp32:16,*fp32:16,*i32:16",                                                                  \
     {"R=" #r, "C=" #c},                                                                           \
     2,                                                                                            \
     1,                                                                                            \
     {{E_F32, (r) * (c), FILL_UNIFORM, 0},                                                         \
      {E_F32, 2 + (r) + (c), FILL_POISON, 1e-4},                                                   \
      {E_I32, 2 + (c), FILL_POISON, 0}},                                                           \
     3,                                                                                            \
     {0},                                                                                          \
     0,                                                                                            \
     warps}
        /* the warps' partials combined by shuffles (shared_reduce_scratch's `shuffle`): one per
         * lane (32 and 16 warps along a row), and two per lane where 8 lanes and 16 warps hold
         * the axis; argmax/argmin shuffle their indices too */
        WARP_REDUCE(8, 4096, 32),
        WARP_REDUCE(4, 1024, 16),
        WARP_REDUCE(256, 16, 16),
#undef WARP_REDUCE
        {"math.tri",
         "math_kernel",
         "*fp32:16,*fp32:16,*fp16:16,i32",
         {"BLOCK=256"},
         1,
         4,
         {{E_F32, 1000, FILL_POSITIVE, 0},
          {E_F32, 1000, FILL_POISON, 1e-3},
          {E_F16, 1000, FILL_POISON, 2e-3}},
         3,
         {1000},
         1,
         0},
        /* Block pointers: a 100x130x75 fp16 matmul, B column-major, every edge and the K tail
         * through boundary_check (block_ptr.tri). */
        {"block_ptr.tri",
         "bp_matmul",
         "*fp16:16,*fp16:16,*fp32:16,i32,i32,i32,i32,i32,i32,i32,i32,i32",
         {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32"},
         3,
         6,
         {{E_F16, 100 * 75, FILL_UNIFORM, 0},
          {E_F16, 75 * 130, FILL_UNIFORM, 0},
          {E_F32, 100 * 130, FILL_POISON, 1e-3}},
         3,
         {100, 130, 75, 75, 1, 1, 75, 130, 1},
         9,
         0},
        /* ... with K and the strides specialized (M, N odd): the pipeline takes the loop, its
         * carried offsets run ahead with the cp.async copies (3 stages); and the same through
         * tensor descriptors (desc_matmul.tri, addresses from the induction variable) */
        {"block_ptr.tri",
         "bp_matmul",
         "*fp16:16,*fp16:16,*fp32:16,i32,i32,i32:16,i32:16,i32:1,i32:1,i32:16,i32,i32:1",
         {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32"},
         3,
         6,
         {{E_F16, 100 * 112, FILL_UNIFORM, 0},
          {E_F16, 112 * 130, FILL_UNIFORM, 0},
          {E_F32, 100 * 130, FILL_POISON, 1e-3}},
         3,
         {100, 130, 112, 112, 1, 1, 112, 130, 1},
         9,
         0,
         3},
        {"desc_matmul.tri",
         "desc_matmul",
         "*fp16:16,*fp16:16,*fp32:16,i32,i32:16,i32:16",
         {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32"},
         3,
         6,
         {{E_F16, 100 * 112, FILL_UNIFORM, 0},
          {E_F16, 112 * 144, FILL_UNIFORM, 0},
          {E_F32, 100 * 144, FILL_POISON, 1e-3}},
         3,
         {100, 144, 112},
         3,
         0,
         4},
        /* a persistent matmul through descriptors: 5 programs walk the 2 x 3 tiles (on the
         * device's arch, below, through TMA with the K loop's mbarriers set up per tile) */
        {"desc_persistent.tri",
         "desc_persistent",
         "*fp16:16,*fp16:16,*fp32:16,i32,i32:16,i32:16",
         {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32", "NUM_PROGS=5"},
         4,
         5,
         {{E_F16, 100 * 112, FILL_UNIFORM, 0},
          {E_F16, 112 * 144, FILL_UNIFORM, 0},
          {E_F32, 100 * 144, FILL_POISON, 1e-3}},
         3,
         {100, 144, 112},
         3,
         0,
         4},
        /* tutorial 06's attention loop through descriptors (two dots, exp2, row max and sum): K
         * and V copied ahead alone (q and p are not loaded in the loop) and read back whole */
        {"desc_attention.tri",
         "desc_attention",
         "*fp16:16,*fp16:16,*fp16:16,*fp32:16,i32:16",
         {"BLOCK_M=64", "BLOCK_N=32", "HEAD_DIM=64"},
         3,
         2,
         {{E_F16, 112 * 64, FILL_UNIFORM, 0},
          {E_F16, 112 * 64, FILL_UNIFORM, 0},
          {E_F16, 112 * 64, FILL_UNIFORM, 0},
          {E_F32, 112 * 64, FILL_POISON, 1e-2}},
         4,
         {112},
         1,
         4},
        {"control.tri",
         "control",
         "*fp32:16,*fp32:16,i32,i32",
         {"BLOCK=512"},
         1,
         2,
         {{E_F32, 512 * 5, FILL_UNIFORM, 0}, {E_F32, 512 * 2, FILL_POISON, 1e-5}},
         2,
         {3, 2},
         2,
         0},
        {"control.tri",
         "control",
         "*fp32:16,*fp32:16,i32,i32",
         {"BLOCK=512"},
         1,
         2,
         {{E_F32, 512 * 5, FILL_UNIFORM, 0}, {E_F32, 512 * 2, FILL_POISON, 1e-5}},
         2,
         {3, -1},
         2,
         0},
        {"ints.tri",
         "ints",
         "*i32:16,*i32:16,*i32:16",
         {"M=32", "N=64"},
         2,
         1,
         {{E_I32, 32 * 64, FILL_INT, 0},
          {E_I32, 32 * 64, FILL_NONZERO_INT, 0},
          {E_I32, 32 * 64, FILL_POISON, 0}},
         3,
         {0},
         0,
         0},
        {"dots.tri",
         "dots",
         "*i8:16,*i8:16,*i32:16",
         {"T=tl.int8", "ACC=tl.int32", "M=32", "N=32", "K=32"},
         5,
         1,
         {{E_I8, 32 * 32, FILL_INT, 0},
          {E_I8, 32 * 32, FILL_INT, 0},
          {E_I32, 32 * 32, FILL_POISON, 0}},
         3,
         {0},
         0,
         0},
        {"dots.tri",
         "dots",
         "*fp32:16,*fp32:16,*fp32:16",
         {"T=tl.float32", "ACC=tl.float32", "M=32", "N=64", "K=32"},
         5,
         1,
         {{E_F32, 32 * 32, FILL_UNIFORM, 0},
          {E_F32, 32 * 64, FILL_UNIFORM, 0},
          {E_F32, 32 * 64, FILL_POISON, 1e-5}},
         3,
         {0},
         0,
         0},
        {"dots.tri",
         "dots",
         "*fp16:16,*fp16:16,*fp16:16",
         {"T=tl.float16", "ACC=tl.float16", "M=64", "N=32", "K=32"},
         5,
         1,
         {{E_F16, 64 * 32, FILL_UNIFORM, 0},
          {E_F16, 32 * 32, FILL_UNIFORM, 0},
          {E_F16, 64 * 32, FILL_POISON, 2e-3}},
         3,
         {0},
         0,
         0},
        /* fp16/bf16 dots with an fp32 accumulator: the tensor-core path (mma.sync m16n8k16) on
         * sm_80+, over several tile shapes and warp counts (warps [Wm, Wn] from 1x1 to 2x4 and 8x1),
         * including the seed matmul tiles 128x128x32 (4 warps) and 128x256x64 (8 warps). */
        MMA_CASE("*fp16:16,*fp16:16,*fp32:16", "T=tl.float16", E_F16, 16, 16, 16, 1),
        MMA_CASE("*fp16:16,*fp16:16,*fp32:16", "T=tl.float16", E_F16, 64, 64, 32, 4),
        MMA_CASE("*fp16:16,*fp16:16,*fp32:16", "T=tl.float16", E_F16, 32, 64, 64, 2),
        MMA_CASE("*fp16:16,*fp16:16,*fp32:16", "T=tl.float16", E_F16, 128, 128, 32, 4),
        MMA_CASE("*fp16:16,*fp16:16,*fp32:16", "T=tl.float16", E_F16, 128, 256, 64, 8),
        MMA_CASE("*fp16:16,*fp16:16,*fp32:16", "T=tl.float16", E_F16, 128, 64, 16, 8),
        MMA_CASE("*bf16:16,*bf16:16,*fp32:16", "T=tl.bfloat16", E_BF16, 64, 32, 32, 4),
        MMA_CASE("*bf16:16,*bf16:16,*fp32:16", "T=tl.bfloat16", E_BF16, 128, 128, 64, 8),
        MMA_CASE("*bf16:16,*bf16:16,*fp32:16", "T=tl.bfloat16", E_BF16, 32, 16, 64, 1),
        /* Column-major operands (no ldmatrix: #dot_op registers through shared memory) and an
         * epilogue that reduces the mma accumulator along N (a slice of #mma, expand_dims). */
        {"dots_t.tri",
         "dots_t",
         "*fp16:16,*fp16:16,*fp32:16",
         {"T=tl.float16", "M=64", "N=32", "K=32"},
         4,
         1,
         {{E_F16, 64 * 32, FILL_UNIFORM, 0},
          {E_F16, 32 * 32, FILL_UNIFORM, 0},
          {E_F32, 64 * 32, FILL_POISON, 1e-3}},
         3,
         {0},
         0,
         4},
        {"dots_t.tri",
         "dots_t",
         "*bf16:16,*bf16:16,*fp32:16",
         {"T=tl.bfloat16", "M=32", "N=64", "K=16"},
         4,
         1,
         {{E_BF16, 32 * 16, FILL_UNIFORM, 0},
          {E_BF16, 16 * 64, FILL_UNIFORM, 0},
          {E_F32, 32 * 64, FILL_POISON, 1e-3}},
         3,
         {0},
         0,
         2},
        /* join / split / interleave: register relabels, converts of planes, interleave's
         * reshape, the 3-D and scalar forms (tests/lit/codegen/join_split.tri). */
        /* programmatic dependent launch's griddepcontrol.wait and .launch_dependents (Triton's
         * tutorial 11, examples/pdl_add.tri), launched without the attribute: the wait returns at
         * once (tests/gpu/gpu_examples.c launches a chain with it) */
        {"../../../examples/pdl_add.tri",
         "add_kernel",
         "*fp32:16,*fp32:16,*fp32:16,i32:16",
         {"BLOCK_SIZE=1024", "USE_GDC=True"},
         2,
         4,
         {{E_F32, 4000, FILL_UNIFORM, 0},
          {E_F32, 4000, FILL_UNIFORM, 0},
          {E_F32, 4000, FILL_POISON, 1e-6}},
         3,
         {4000},
         1,
         0},
        {"join_split.tri",
         "cmul",
         "*fp32:16,*fp32:16,*fp32:16,i32",
         {"BLOCK=128"},
         1,
         8,
         {{E_F32, 2 * 1024, FILL_UNIFORM, 0},
          {E_F32, 2 * 1024, FILL_UNIFORM, 0},
          {E_F32, 2 * 1024, FILL_POISON, 1e-5}},
         3,
         {1000},
         1,
         0},
        {"join_split.tri",
         "rotary",
         "*fp16:16,*fp32:16,*fp32:16,*fp16:16,i32",
         {"D=64", "BLOCK=32"},
         2,
         4,
         {{E_F16, 128 * 64, FILL_UNIFORM, 0},
          {E_F32, 128 * 32, FILL_UNIFORM, 0},
          {E_F32, 128 * 32, FILL_UNIFORM, 0},
          {E_F16, 128 * 64, FILL_POISON, 2e-3}},
         4,
         {100},
         1,
         0},
        {"join_split.tri",
         "planar",
         "*fp32:16,*fp32:16",
         {"N=128"},
         1,
         1,
         {{E_F32, 256, FILL_UNIFORM, 0}, {E_F32, 256, FILL_POISON, 0}},
         2,
         {0},
         0,
         0},
        {"join_split.tri",
         "pairs",
         "*fp32:16,*fp32:16,*i32:16,*i32:16",
         {"M=16", "N=32"},
         2,
         1,
         {{E_F32, 2, FILL_UNIFORM, 0},
          {E_F32, 4, FILL_POISON, 0},
          {E_I32, 16 * 32, FILL_INT, 0},
          {E_I32, 2 * 16 * 32, FILL_POISON, 0}},
         4,
         {0},
         0,
         0},
        {"join_split.tri",
         "loop",
         "*fp32:16,*fp32:16,i32",
         {"BLOCK=128"},
         1,
         1,
         {{E_F32, 5 * 128, FILL_UNIFORM, 0}, {E_F32, 3 * 128, FILL_POISON, 1e-5}},
         2,
         {5},
         1,
         0},
        {"shapes.tri",
         "transpose",
         "*fp16:16,*fp16:16",
         {"M=32", "N=64"},
         2,
         1,
         {{E_F16, 32 * 64, FILL_UNIFORM, 0}, {E_F16, 2 * 32 * 64, FILL_POISON, 0}},
         2,
         {0},
         0,
         0},
        LOOP_CASE("*fp16:16,*fp16:16,*fp32:16,i32:16", "T=tl.float16", E_F16, 128, 128, 64, 208, 4),
        LOOP_CASE("*fp16:16,*fp16:16,*fp32:16,i32", "T=tl.float16", E_F16, 64, 64, 32, 77, 4),
        /* fp8 operands (widened to fp16 by cvt.rn.f16x2.{e4m3x2,e5m2x2}, then mma.sync) */
        MMA_CASE("*fp8e4nv:16,*fp8e4nv:16,*fp32:16", "T=tl.float8e4nv", E_F8E4, 64, 64, 32, 4),
        MMA_CASE("*fp8e5:16,*fp8e5:16,*fp32:16", "T=tl.float8e5", E_F8E5, 128, 128, 64, 8),
        LOOP_CASE("*fp8e4nv:16,*fp8e4nv:16,*fp32:16,i32:16", "T=tl.float8e4nv", E_F8E4, 128, 128,
                  64, 208,
                  4), /* tl.dot_scaled: e4m3 x e4m3, e2m1 x e2m1, e5m2 x e2m1 (bf16 mma.sync) */
        MX_CASE("e4m3", "fp8e4nv", MX_FP8(E_F8E4, 100 * 128), "e4m3", "fp8e4nv",
                MX_FP8(E_F8E4, 72 * 128), 100, 72, 128, 64, 64, 64, 4),
        MX_CASE("e2m1", "u8", MX_FP4(100 * 128), "e2m1", "u8", MX_FP4(72 * 128), 100, 72, 128, 64,
                64, 64, 4),
        MX_CASE("e5m2", "fp8e5", MX_FP8(E_F8E5, 64 * 256), "e2m1", "u8", MX_FP4(128 * 256), 64, 128,
                256, 64, 128, 128, 4),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(gpu, cpu, &cases[i]);
    /* The tensor-core cases again for the device's arch (wgmma when the runtime compiles for
     * sm_90a, i.e. on an H100, and the tile has whole warpgroups stacked
     * along M: #mma v3, docs/codegen.md "wgmma"): 128-byte-swizzled and no-swizzle operand
     * layouts (K = 64 vs 16/32; N = 32), one and two warpgroups, m64 tiles repeated along M,
     * n from 32 to 256, bf16, the seed tiles 128x128x64 on 4 warps, 128x256x64 on 8 and
     * 64x256x32 on 4, and column-major operands (staged element by element). */
    const Case wg_cases[] = {
        /* tl.dot_scaled through wgmma (bf16 operands upcast in registers) */
        MX_CASE("e4m3", "fp8e4nv", MX_FP8(E_F8E4, 200 * 256), "e4m3", "fp8e4nv",
                MX_FP8(E_F8E4, 136 * 256), 200, 136, 256, 128, 128, 128, 4),
        MX_CASE("e2m1", "u8", MX_FP4(128 * 256), "e2m1", "u8", MX_FP4(256 * 256), 128, 256, 256,
                128, 128, 128, 8),
        MMA_CASE("*fp16:16,*fp16:16,*fp32:16", "T=tl.float16", E_F16, 64, 64, 32, 4),
        MMA_CASE("*fp16:16,*fp16:16,*fp32:16", "T=tl.float16", E_F16, 128, 128, 32, 4),
        MMA_CASE("*fp16:16,*fp16:16,*fp32:16", "T=tl.float16", E_F16, 128, 128, 64, 4),
        MMA_CASE("*fp16:16,*fp16:16,*fp32:16", "T=tl.float16", E_F16, 128, 256, 64, 8),
        MMA_CASE("*fp16:16,*fp16:16,*fp32:16", "T=tl.float16", E_F16, 64, 256, 32, 4),
        MMA_CASE("*fp16:16,*fp16:16,*fp32:16", "T=tl.float16", E_F16, 128, 64, 16, 8),
        MMA_CASE("*fp16:16,*fp16:16,*fp32:16", "T=tl.float16", E_F16, 256, 128, 64, 8),
        MMA_CASE("*bf16:16,*bf16:16,*fp32:16", "T=tl.bfloat16", E_BF16, 64, 32, 32, 4),
        MMA_CASE("*bf16:16,*bf16:16,*fp32:16", "T=tl.bfloat16", E_BF16, 128, 128, 64, 8),
        /* the persistent matmul warp-specialized with two consumer warpgroups (8 warps),
         * 128 x 128 tiles, 4 stages (a loop of one wgmma keeps its producer from 4 slots; 128 x
         * 256's 4 slots and its 64 KB of scratch do not fit together), and with one on 4 warps:
         * as is, with --pingpong (5 programs, one of them two tiles, and 2, 3 tiles each), and
         * through TMA stores (on 3 stages, below, the loop keeps no producer; sm_80's shared
         * memory is smaller than these slots) */
        PERSISTENT_DESC_WS(128, 8, 4),
        PERSISTENT_DESC_WS(128, 4, 4),
        PERSISTENT_DESC_ON(128, 4, 4, True, False, 5, 1),
        PERSISTENT_DESC_ON(128, 4, 4, True, False, 2, 1),
        with_tma_store((Case)PERSISTENT_DESC_WS(128, 4, 4)),
        with_tma_store((Case)PERSISTENT_DESC_ON(128, 4, 4, True, False, 2, 1)),
        PERSISTENT_DESC(256, 8, 3, False, True),
        /* ... in fp8 e4m3 (wgmma's fp8 form, so the device's arch only): as written, with a
         * producer warpgroup, and with two consumer groups (--pingpong) over 2 programs */
        PERSISTENT_DESC_FP8(False, 5, 0),
        PERSISTENT_DESC_FP8(True, 5, 0),
        PERSISTENT_DESC_FP8(True, 2, 1),
        FP8_PROMOTED_MM("mm", 3),
        FP8_PROMOTED_MM("mm_ws", 4),
        FP8_PROMOTED_SEED2,
        FP8_PROMOTED_SEED2_SK,
        /* ... in fp32 through tf32, as written and with two consumer groups */
        PERSISTENT_DESC_TF32(False, 5, 0),
        PERSISTENT_DESC_TF32(True, 2, 1),
        /* seed 2 with --stream-k, two launches in a row (the workspace's flags left zero) */
        SEED2_STREAM_K(4, 3),
        SEED2_STREAM_K(4, 3),
        SEED2_STREAM_K_WIDE,
        WS_STREAM_K_WIDE,
        /* seed 1 (tutorial 03: pointers advanced every iteration, K's tail masked, C's edges
         * masked) with --stream-k: C [760, 760] fp32 = A [760, 200] B, 64 x 64 x 32 tiles: 144
         * tiles of 7 K steps, every one split on 132 programs (more programs an SM: whole) */
        {"../../../examples/matmul.tri",
         "matmul_kernel",
         "*fp16:16,*fp16:16,*fp32:16,i32,i32,i32,i32,i32:1,i32,i32:1,i32,i32:1",
         {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=32"},
         3,
         144,
         {{E_F16, 760 * 200, FILL_UNIFORM, 0},
          {E_F16, 200 * 760, FILL_UNIFORM, 0},
          {E_F32, 760 * 760, FILL_POISON, 1e-3}},
         3,
         {760, 760, 200, 200, 1, 760, 1, 760, 1},
         9,
         4,
         3,
         0,
         1},
        /* an odd K: A's rows cannot be copied ahead (pieces under 4 bytes), B's can: the wgmma
         * reads B's slot and takes A from registers (dot_loop.tri, ODD) */
        {"dot_loop.tri",
         "dot_loop",
         "*bf16:16,*bf16:16,*fp32:16,i32",
         {"T=tl.bfloat16", "M=128", "N=256", "BK=32"},
         4,
         1,
         {{E_BF16, 128 * 203, FILL_UNIFORM, 0},
          {E_BF16, 203 * 256, FILL_UNIFORM, 0},
          {E_F32, 128 * 256, FILL_POISON, 1e-2}},
         3,
         {203},
         1,
         8},
        {"dot_loop.tri",
         "dot_loop",
         "*fp16:16,*fp16:16,*fp32:16,i32",
         {"T=tl.float16", "M=64", "N=64", "BK=32"},
         4,
         1,
         {{E_F16, 64 * 77, FILL_UNIFORM, 0},
          {E_F16, 77 * 64, FILL_UNIFORM, 0},
          {E_F32, 64 * 64, FILL_POISON, 1e-2}},
         3,
         {77},
         1,
         4},
        {"dots_t.tri",
         "dots_t",
         "*fp16:16,*fp16:16,*fp32:16",
         {"T=tl.float16", "M=64", "N=32", "K=32"},
         4,
         1,
         {{E_F16, 64 * 32, FILL_UNIFORM, 0},
          {E_F16, 32 * 32, FILL_UNIFORM, 0},
          {E_F32, 64 * 32, FILL_POISON, 1e-3}},
         3,
         {0},
         0,
         4},
        {"dots_t.tri",
         "dots_t",
         "*fp16:16,*fp16:16,*fp32:16",
         {"T=tl.float16", "M=128", "N=128", "K=64"},
         4,
         1,
         {{E_F16, 128 * 64, FILL_UNIFORM, 0},
          {E_F16, 64 * 128, FILL_UNIFORM, 0},
          {E_F32, 128 * 128, FILL_POISON, 1e-3}},
         3,
         {0},
         0,
         4},
        /* K loops: 16 iterations; 4 with a masked tail; 3 (odd) with a masked tail; odd K (no
         * divisibility: A in the no-swizzle layout, element-wise masks); two warpgroups, bf16,
         * n 256; 6 iterations on 8 warps; a single iteration. */
        LOOP_CASE("*fp16:16,*fp16:16,*fp32:16,i32:16", "T=tl.float16", E_F16, 128, 128, 64, 1024,
                  4),
        LOOP_CASE("*fp16:16,*fp16:16,*fp32:16,i32:16", "T=tl.float16", E_F16, 128, 128, 64, 208, 4),
        LOOP_CASE("*fp16:16,*fp16:16,*fp32:16,i32:16", "T=tl.float16", E_F16, 128, 128, 64, 144, 4),
        LOOP_CASE("*fp16:16,*fp16:16,*fp32:16,i32", "T=tl.float16", E_F16, 64, 64, 32, 77, 4),
        LOOP_CASE("*bf16:16,*bf16:16,*fp32:16,i32", "T=tl.bfloat16", E_BF16, 128, 256, 32, 100, 8),
        LOOP_CASE("*fp16:16,*fp16:16,*fp32:16,i32:16", "T=tl.float16", E_F16, 128, 256, 64, 336, 8),
        LOOP_CASE("*fp16:16,*fp16:16,*fp32:16,i32:16", "T=tl.float16", E_F16, 64, 256, 32, 16, 4),
        /* block pointers and tensor descriptors, pipelined: wgmma reading the slots the carried
         * offsets' (or the induction variable's) copies fill, M and N odd; 3 and 4 stages */
        {"block_ptr.tri",
         "bp_matmul",
         "*fp16:16,*fp16:16,*fp32:16,i32,i32,i32:16,i32:16,i32:1,i32:1,i32:16,i32,i32:1",
         {"BLOCK_M=128", "BLOCK_N=128", "BLOCK_K=64"},
         3,
         6,
         {{E_F16, 200 * 336, FILL_UNIFORM, 0},
          {E_F16, 336 * 260, FILL_UNIFORM, 0},
          {E_F32, 200 * 260, FILL_POISON, 1e-3}},
         3,
         {200, 260, 336, 336, 1, 1, 336, 260, 1},
         9,
         4,
         3},
        {"desc_matmul.tri",
         "desc_matmul",
         "*fp16:16,*fp16:16,*fp32:16,i32,i32:16,i32:16",
         {"BLOCK_M=128", "BLOCK_N=128", "BLOCK_K=64"},
         3,
         6,
         {{E_F16, 200 * 336, FILL_UNIFORM, 0},
          {E_F16, 336 * 272, FILL_UNIFORM, 0},
          {E_F32, 200 * 272, FILL_POISON, 1e-3}},
         3,
         {200, 272, 336},
         3,
         4,
         4},
        /* persistent, through TMA: 5 programs walk the 2 x 3 tiles of 128 x 128 */
        {"desc_persistent.tri",
         "desc_persistent",
         "*fp16:16,*fp16:16,*fp32:16,i32,i32:16,i32:16",
         {"BLOCK_M=128", "BLOCK_N=128", "BLOCK_K=64", "NUM_PROGS=5"},
         4,
         5,
         {{E_F16, 200 * 336, FILL_UNIFORM, 0},
          {E_F16, 336 * 272, FILL_UNIFORM, 0},
          {E_F32, 200 * 272, FILL_POISON, 1e-3}},
         3,
         {200, 272, 336},
         3,
         4,
         4},
        ATTN_FWD_WS(1),
        ATTN_FWD_WS(3),
        ATTN_PERSISTENT_CASE(64, 64, True),
        ATTN_PERSISTENT_CASE(128, 128, True),
        ATTN_PERSISTENT_CASE(64, 64, False),
        ATTN_PERSISTENT_CASE(128, 128, False),
        ATTN_GRID_PERSISTENT(128, 128, 128, 8, 1, 3, 70),
        ATTN_GRID_PERSISTENT(128, 128, 128, 8, 3, 2, 70),
        ATTN_GRID_PERSISTENT(128, 128, 128, 8, 3, 3, 70),
        ATTN_GRID_PERSISTENT(64, 128, 64, 4, 3, 3, 250),
        /* the first two with --overlap-dots: p @ v issued an iteration late (guarded off in each
         * loop's first iteration, the causal kernel's first loop running no iteration in some
         * tiles), against the interpreter running the kernel as written */
        ATTN_GRID_PERSISTENT_OPT(128, 128, 128, 8, 1, 3, 70, 1),
        ATTN_GRID_PERSISTENT_OPT(128, 128, 128, 8, 3, 2, 70, 1),
        /* the causal kernel as one loop, its mask under an `if` (Inputs/attention_branch.tri) on
         * 3 stages, with a producer and q in A registers before the loop: split at the diagonal
         * into two loops (split_loops), the ring, phases and p @ v in flight going from the first
         * to the second; and as written (no_fuse_loops), q's registers kept live across the
         * branch to the loop's latch (ptxas 13.0 gave them to p: the next q @ k read p) */
        ATTN_GRID_PERSISTENT_IN("Inputs/attention_branch.tri", 128, 128, 128, 8, 3, 3, 70, 0),
        ATTN_GRID_PERSISTENT_AS("Inputs/attention_branch.tri", 128, 128, 128, 8, 3, 3, 70, 0, 1),
        {"desc_attention.tri",
         "desc_attention",
         "*fp16:16,*fp16:16,*fp16:16,*fp32:16,i32:16",
         {"BLOCK_M=64", "BLOCK_N=32", "HEAD_DIM=64"},
         3,
         2,
         {{E_F16, 112 * 64, FILL_UNIFORM, 0},
          {E_F16, 112 * 64, FILL_UNIFORM, 0},
          {E_F16, 112 * 64, FILL_UNIFORM, 0},
          {E_F32, 112 * 64, FILL_POISON, 1e-2}},
         4,
         {112},
         1,
         4},
        /* tutorial 09's flattened persistent matmul as written: 5 programs walk the 2 x 3 tiles of
         * 128 x 128 (M, N off the blocks, K's tail masked), the tile switch and the epilogue
         * (stores under `if`) inside the pipelined loop */
        PERSISTENT_MATMUL("persistent_matmul.tri", 336),
        /* ... as Triton 3.6 writes it (persistent_nested_matmul.tri): the K loop nested in a
         * loop over tiles asking flatten=True, flattened (flatten_loops.c), then pipelined; and
         * with K = 0, the nest without its K loop (C all zeros) */
        PERSISTENT_MATMUL("persistent_nested_matmul.tri", 336),
        PERSISTENT_MATMUL("persistent_nested_matmul.tri", 0),
        /* a flattened nest (flatten_loops.c) whose K loop advances pointers the prologue sets,
         * with a running column sum carried over the program's tiles */
        {"pipe_shapes.tri",
         "flat_pointers",
         "*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32,i32:16",
         {"BLOCK_M=32", "BLOCK_N=32", "BLOCK_K=32", "PROGRAMS=3"},
         4,
         3,
         {{E_F16, 100 * 80, FILL_UNIFORM, 0},
          {E_F16, 80 * 32, FILL_UNIFORM, 0},
          {E_F32, 100 * 32, FILL_POISON, 1e-3},
          {E_F32, 3 * 32, FILL_POISON, 1e-3}},
         4,
         {100, 80},
         2,
         4},
        /* the general pipeline's loop shapes (pipe_shapes.tri): a running offset the rest of
         * the body and the store after the loop read, run-time steps of either sign, no trip */
        RUNNING_OFFSET(0, 4, 1),
        RUNNING_OFFSET(3, -1, -1),
        RUNNING_OFFSET(2, 2, 1),
        /* a row of scales per K block feeding no dot, copied ahead as a rank-1 tile by one
         * thread per element and read back in the #mma layout's slice */
        {"pipe_shapes.tri",
         "row_scales",
         "*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32:16",
         {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32"},
         3,
         1,
         {{E_F16, 64 * 128, FILL_UNIFORM, 0},
          {E_F16, 128 * 64, FILL_UNIFORM, 0},
          {E_F32, 4 * 64, FILL_UNIFORM, 0},
          {E_F32, 64 * 64, FILL_POISON, 1e-3}},
         4,
         {128},
         1,
         4},
    };
    gpu_arch = NULL;
    for (size_t i = 0; i < sizeof wg_cases / sizeof wg_cases[0]; i++)
        run_case(gpu, cpu, &wg_cases[i]);
        /* fp8 dots through wgmma's fp8 form (m64nNk32 .e4m3/.e5m2, both operands staged K-major, B
     * byte by byte): Hopper's fp8 tensor cores accumulate with fewer bits than fp32, so the
     * tolerance is 1e-2 (of max(1, |value|)); a K loop's tail masked with other=0.0 (an fp8
     * constant). */
#define FP8_CASE(sig, t, e, m, n, k, w)                                                            \
    {                                                                                              \
        "dots.tri", "dots", sig, {t, "ACC=tl.float32", "M=" #m, "N=" #n, "K=" #k}, 5, 1,           \
            {{e, (m) * (k), FILL_UNIFORM, 0},                                                      \
             {e, (k) * (n), FILL_UNIFORM, 0},                                                      \
             {E_F32, (m) * (n), FILL_POISON, 1e-2}},                                               \
            3, {0}, 0, w                                                                           \
    }
#define FP8_LOOP_CASE(sig, t, e, m, n, bk, k, w)                                                   \
    {                                                                                              \
        "dot_loop.tri", "dot_loop", sig, {t, "M=" #m, "N=" #n, "BK=" #bk}, 4, 1,                   \
            {{e, (m) * (k), FILL_UNIFORM, 0},                                                      \
             {e, (k) * (n), FILL_UNIFORM, 0},                                                      \
             {E_F32, (m) * (n), FILL_POISON, 1e-2}},                                               \
            3, {k}, 1, w                                                                           \
    }
    const Case fp8_cases[] = {
        FP8_CASE("*fp8e4nv:16,*fp8e4nv:16,*fp32:16", "T=tl.float8e4nv", E_F8E4, 128, 128, 64, 4),
        FP8_CASE("*fp8e5:16,*fp8e5:16,*fp32:16", "T=tl.float8e5", E_F8E5, 64, 128, 32, 4),
        FP8_CASE("*fp8e4nv:16,*fp8e4nv:16,*fp32:16", "T=tl.float8e4nv", E_F8E4, 128, 256, 128, 8),
        FP8_LOOP_CASE("*fp8e4nv:16,*fp8e4nv:16,*fp32:16,i32:16", "T=tl.float8e4nv", E_F8E4, 128,
                      128, 64, 208, 4),
        FP8_LOOP_CASE("*fp8e5:16,*fp8e5:16,*fp32:16,i32:16", "T=tl.float8e5", E_F8E5, 128, 256, 64,
                      336, 8),
        /* the linear layer in fp8: both tiles run along K, so the pipeline copies them (16-byte
         * cp.async) into K-major slots that wgmma's fp8 form reads; 4 and 8 warps */
        {"../../../examples/linear.tri",
         "linear_kernel",
         "*fp8e4nv:16,*fp8e4nv:16,*fp8e4nv:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,"
         "i32:1,i32:16,i32:1",
         {"BLOCK_M=128", "BLOCK_N=128", "BLOCK_K=64"},
         3,
         2,
         {{E_F8E4, 208 * 336, FILL_UNIFORM, 0},
          {E_F8E4, 144 * 336, FILL_UNIFORM, 0},
          {E_F8E4, 144, FILL_UNIFORM, 0},
          {E_F32, 208 * 144, FILL_POISON, 1e-2}},
         4,
         {208, 144, 336, 336, 1, 336, 1, 144, 1},
         9,
         4,
         3,
         2},
        {"../../../examples/linear.tri",
         "linear_kernel",
         "*fp8e5:16,*fp8e5:16,*fp8e5:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,"
         "i32:16,i32:1",
         {"BLOCK_M=128", "BLOCK_N=256", "BLOCK_K=128"},
         3,
         2,
         {{E_F8E5, 208 * 384, FILL_UNIFORM, 0},
          {E_F8E5, 144 * 384, FILL_UNIFORM, 0},
          {E_F8E5, 144, FILL_UNIFORM, 0},
          {E_F32, 208 * 144, FILL_POISON, 1e-2}},
         4,
         {208, 144, 384, 384, 1, 384, 1, 144, 1},
         9,
         8,
         3,
         1},
    };
    for (size_t i = 0; i < sizeof fp8_cases / sizeof fp8_cases[0]; i++)
        run_case(gpu, cpu, &fp8_cases[i]);
    /* fp32 dots on the tensor cores through tf32 (tl.dot's default; wgmma m64nNk8 .tf32 on
     * sm_90a, registers staged K-major): tf32 keeps 10 mantissa bits, so against the
     * interpreter's fp32 products the tolerance is 1e-2 (of max(1, |value|)). A dot outside a
     * loop, and a K loop with a masked tail (fp32 loads are not pipelined: the serial schedule). */
    const Case tf32_cases[] = {
        {"dots.tri",
         "dots",
         "*fp32:16,*fp32:16,*fp32:16",
         {"T=tl.float32", "ACC=tl.float32", "M=64", "N=64", "K=32"},
         5,
         1,
         {{E_F32, 64 * 32, FILL_UNIFORM, 0},
          {E_F32, 32 * 64, FILL_UNIFORM, 0},
          {E_F32, 64 * 64, FILL_POISON, 1e-2}},
         3,
         {0},
         0,
         4},
        {"dots.tri",
         "dots",
         "*fp32:16,*fp32:16,*fp32:16",
         {"T=tl.float32", "ACC=tl.float32", "M=128", "N=128", "K=64"},
         5,
         1,
         {{E_F32, 128 * 64, FILL_UNIFORM, 0},
          {E_F32, 64 * 128, FILL_UNIFORM, 0},
          {E_F32, 128 * 128, FILL_POISON, 1e-2}},
         3,
         {0},
         0,
         8},
        {"dot_loop.tri",
         "dot_loop",
         "*fp32:16,*fp32:16,*fp32:16,i32:16",
         {"T=tl.float32", "M=128", "N=128", "BK=32"},
         4,
         1,
         {{E_F32, 128 * 208, FILL_UNIFORM, 0},
          {E_F32, 208 * 128, FILL_UNIFORM, 0},
          {E_F32, 128 * 128, FILL_POISON, 1e-2}},
         3,
         {208},
         1,
         4},
        /* the linear layer in fp32: both tiles run along K, so the pipeline copies them and
         * wgmma's tf32 form reads the slots (K-major) */
        {"../../../examples/linear.tri",
         "linear_kernel",
         "*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:"
         "16,i32:1",
         {"BLOCK_M=128", "BLOCK_N=128", "BLOCK_K=32"},
         3,
         2,
         {{E_F32, 208 * 336, FILL_UNIFORM, 0},
          {E_F32, 144 * 336, FILL_UNIFORM, 0},
          {E_F32, 144, FILL_UNIFORM, 0},
          {E_F32, 208 * 144, FILL_POISON, 1e-2}},
         4,
         {208, 144, 336, 336, 1, 336, 1, 144, 1},
         9,
         4,
         3,
         2},
        /* seed 1 and seed 2 in fp32: B runs along N, its K-major slots are filled element by
         * element (4-byte cp.async); seed 1 masked, 4 stages */
        {"../../../examples/matmul.tri",
         "matmul_kernel",
         "*fp32:16,*fp32:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
         {"BLOCK_SIZE_M=128", "BLOCK_SIZE_N=128", "BLOCK_SIZE_K=32"},
         3,
         2 * 2,
         {{E_F32, 208 * 336, FILL_UNIFORM, 0},
          {E_F32, 336 * 144, FILL_UNIFORM, 0},
          {E_F32, 208 * 144, FILL_POISON, 1e-2}},
         3,
         {208, 144, 336, 336, 1, 144, 1, 144, 1},
         9,
         4,
         4,
         0},
        {"../../../examples/matmul.tri",
         "kernel_matmul",
         "*fp32:16,*fp32:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
         {"BLOCK_SIZE_M=128", "BLOCK_SIZE_N=128", "BLOCK_SIZE_K=32", "GROUP_SIZE_M=8",
          "T_C=tl.float32", "T_ACC=tl.float32"},
         6,
         2 * 2,
         {{E_F32, 256 * 320, FILL_UNIFORM, 0},
          {E_F32, 320 * 256, FILL_UNIFORM, 0},
          {E_F32, 256 * 256, FILL_POISON, 1e-2}},
         3,
         {256, 256, 320, 320, 1, 256, 1, 256, 1},
         9,
         4,
         3,
         0},
    };
    for (size_t i = 0; i < sizeof tf32_cases / sizeof tf32_cases[0]; i++)
        run_case(gpu, cpu, &tf32_cases[i]);
        /* The software pipeline (passes/pipeline_loops.c): async copies into num_stages-slot
     * swizzled buffers, for num_stages 1 to 5, K tails masked, every operand orientation (seed 1
     * with A column-major and B transposed, the linear layer's K-contiguous B), fp16 and bf16,
     * one and two warpgroups; on the device's arch (wgmma reading shared memory), on sm_90 and
     * on sm_80 (cp.async + ldmatrix + mma.sync, run on this GPU). */
#define STAGE_CASE(sig, t, e, m, n, bk, k, w, s)                                                   \
    {                                                                                              \
        "dot_loop.tri", "dot_loop", sig, {t, "M=" #m, "N=" #n, "BK=" #bk}, 4, 1,                   \
            {{e, (m) * (k), FILL_UNIFORM, 0},                                                      \
             {e, (k) * (n), FILL_UNIFORM, 0},                                                      \
             {E_F32, (m) * (n), FILL_POISON, 1e-3}},                                               \
            3, {k}, 1, w, s, 0                                                                     \
    }
#define SEED1_CASE(sig, m, n, k, sam, sak, sbk, sbn, s)                                            \
    {                                                                                              \
        "../../../examples/matmul.tri", "matmul_kernel", sig,                                      \
            {"BLOCK_SIZE_M=128", "BLOCK_SIZE_N=128", "BLOCK_SIZE_K=64"}, 3,                        \
            ((m) + 127) / 128 * (((n) + 127) / 128),                                               \
            {{E_F16, (m) * (k), FILL_UNIFORM, 0},                                                  \
             {E_F16, (k) * (n), FILL_UNIFORM, 0},                                                  \
             {E_F32, (m) * (n), FILL_POISON, 1e-3}},                                               \
            3, {m, n, k, sam, sak, sbk, sbn, n, 1}, 9, 4, s, 0                                     \
    }
    const char *s1 =
        "*fp16:16,*fp16:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1";
    const char *s1t =
        "*fp16:16,*fp16:16,*fp32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:16,i32:1";
    const char *f32_plain =
        "*fp32:16,*fp32:16,*fp32:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1";
    const char *f32_seed2 =
        "*fp32:16,*fp32:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1";
    const char *s2_f16 =
        "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1";
    const char *lin = "*fp16:16,*fp16:16,*fp16:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:"
                      "16,i32:1,i32:16,i32:1";
    const char *lin4 =
        "*fp16:16,*fp16:16,*fp16:16,*fp32:16,i32:4,i32:4,i32:4,i32:4,i32:1,i32:4,i32:1,i32:4,i32:1";
    const Case pipe_cases[] = {
        STAGE_CASE("*fp16:16,*fp16:16,*fp32:16,i32:16", "T=tl.float16", E_F16, 128, 128, 64, 208, 4,
                   1),
        STAGE_CASE("*fp16:16,*fp16:16,*fp32:16,i32:16", "T=tl.float16", E_F16, 128, 128, 64, 208, 4,
                   2),
        STAGE_CASE("*fp16:16,*fp16:16,*fp32:16,i32:16", "T=tl.float16", E_F16, 128, 128, 64, 208, 4,
                   3),
        STAGE_CASE("*fp16:16,*fp16:16,*fp32:16,i32:16", "T=tl.float16", E_F16, 128, 128, 64, 1040,
                   4, 4),
        STAGE_CASE("*fp16:16,*fp16:16,*fp32:16,i32:16", "T=tl.float16", E_F16, 128, 128, 32, 48, 4,
                   5),
        STAGE_CASE("*bf16:16,*bf16:16,*fp32:16,i32:16", "T=tl.bfloat16", E_BF16, 128, 256, 64, 336,
                   8, 3),
        STAGE_CASE("*fp16:16,*fp16:16,*fp32:16,i32:16", "T=tl.float16", E_F16, 64, 256, 32, 16, 4,
                   4),
        STAGE_CASE("*fp16:16,*fp16:16,*fp32:16,i32:16", "T=tl.float16", E_F16, 64, 64, 32, 96, 4,
                   3),
        /* a non-zero `other` on A (masked-off groups stored, their copies predicated off) */
        {"dot_other.tri",
         "dot_other",
         "*fp16:16,*fp16:16,*fp32:16,i32:16",
         {"M=128", "N=128", "BK=64"},
         3,
         1,
         {{E_F16, 128 * 208, FILL_UNIFORM, 0},
          {E_F16, 208 * 128, FILL_UNIFORM, 0},
          {E_F32, 128 * 128, FILL_POISON, 1e-3}},
         3,
         {208},
         1,
         4,
         3,
         0},
        SEED1_CASE(s1, 208, 144, 336, 336, 1, 144, 1, 3),
        SEED1_CASE(s1t, 208, 144, 336, 1, 208, 1, 336, 4),
        {"../../../examples/linear.tri",
         "linear_kernel",
         lin,
         {"BLOCK_M=128", "BLOCK_N=128", "BLOCK_K=64"},
         3,
         2,
         {{E_F16, 208 * 336, FILL_UNIFORM, 0},
          {E_F16, 144 * 336, FILL_UNIFORM, 0},
          {E_F16, 144, FILL_UNIFORM, 0},
          {E_F32, 208 * 144, FILL_POISON, 1e-3}},
         4,
         {208, 144, 336, 336, 1, 336, 1, 144, 1},
         9,
         4,
         3,
         2},
        /* sizes only divisible by 4 (what launch specialization finds in 4100): 8-byte copies */
        {"../../../examples/linear.tri",
         "linear_kernel",
         lin4,
         {"BLOCK_M=128", "BLOCK_N=128", "BLOCK_K=64"},
         3,
         2,
         {{E_F16, 204 * 332, FILL_UNIFORM, 0},
          {E_F16, 140 * 332, FILL_UNIFORM, 0},
          {E_F16, 140, FILL_UNIFORM, 0},
          {E_F32, 204 * 140, FILL_POISON, 1e-3}},
         4,
         {204, 140, 332, 332, 1, 332, 1, 140, 1},
         9,
         4,
         3,
         2},
        /* seed 1 in fp32 at 64 x 64 x 32, K = 112 a plain i32 (its masks not provably constant:
         * 4-byte copies): on sm_90 and sm_80 an FMA dot whose k loop reads its tiles straight from
         * unswizzled A^T and B slots; on sm_90a tf32 wgmma */
        rowmajor_matmul((Case){"../../../examples/matmul.tri",
                               "matmul_kernel",
                               f32_plain,
                               {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=32"},
                               3},
                        64, 64, E_F32, E_F32, 200, 144, 112, 1e-2),
        /* seed 1 in fp32 at 32 x 32 x 16 (M under a warpgroup's 64 rows: an FMA dot on every
         * arch), K = 112 a plain i32: 4-byte copies; the dot reads unswizzled slots, on sm_90a
         * in the loads' order (A [M][K], B [K][N]), filled through tensor maps */
        rowmajor_matmul((Case){"../../../examples/matmul.tri",
                               "matmul_kernel",
                               f32_plain,
                               {"BLOCK_SIZE_M=32", "BLOCK_SIZE_N=32", "BLOCK_SIZE_K=16"},
                               3},
                        32, 32, E_F32, E_F32, 200, 144, 112, 1e-2),
        /* ... in fp16 at 16 x 16 x 16 (too small for mma.sync's pieces in 4 warps: FMA), K = 112
         * :16: 16-byte copies along K into an A [M][K] slot the dot reads in runs along K */
        rowmajor_matmul((Case){"../../../examples/matmul.tri",
                               "matmul_kernel",
                               s1,
                               {"BLOCK_SIZE_M=16", "BLOCK_SIZE_N=16", "BLOCK_SIZE_K=16"},
                               3},
                        16, 16, E_F16, E_F32, 208, 144, 112, 1e-3),
        /* seed 2 in fp32 at 64 x 64 x 32, sizes :16: A copied 16 bytes along K into an A [M][K]
         * slot (sm_90 and sm_80: FMA; sm_90a: tf32 wgmma) */
        rowmajor_matmul((Case){"../../../examples/matmul.tri",
                               "kernel_matmul",
                               f32_seed2,
                               {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=32",
                                "GROUP_SIZE_M=8", "T_C=tl.float32", "T_ACC=tl.float32"},
                               6},
                        64, 64, E_F32, E_F32, 256, 192, 160, 1e-2),
        /* 2-D tiles feeding no dot in a dotless tl.range(..., num_stages=3) (pipe_shapes.tri's
         * tile_rows): 80 rows in blocks of 32, the last one masked; fp32 16-byte copies, fp32
         * 4-byte copies (pointers only 4-byte aligned: unswizzled slots), fp16; and no iteration
         * (lo = hi: Y keeps its poison, Z is 0) */
        TILE_ROWS("*fp32:16,*fp32:16,*fp32:16,i32,i32,i32", 32, 64, E_F32, 80, 1e-6, 1e-4, 0, 3),
        TILE_ROWS("*fp32,*fp32,*fp32,i32,i32,i32", 32, 64, E_F32, 80, 1e-6, 1e-4, 0, 3),
        TILE_ROWS("*fp16:16,*fp16:16,*fp32:16,i32,i32,i32", 32, 64, E_F16, 80, 1e-3, 1e-3, 0, 3),
        TILE_ROWS("*fp32:16,*fp32:16,*fp32:16,i32,i32,i32", 32, 64, E_F32, 80, 0, 0, 2, 2),
        /* rows of 16 bytes (BLOCK_N = 4 fp32): no swizzled layout fits, an unswizzled slot off
         * sm_90a (there the loop stays as it is); 200 rows in blocks of 128 */
        TILE_ROWS("*fp32:16,*fp32:16,*fp32:16,i32,i32,i32", 128, 4, E_F32, 200, 1e-6, 1e-4, 0, 2),
        /* nested loops (nested_tiles): 2 programs walk C's 4 row tiles by 2, each running a
         * pipelined K loop with a masked tail */
        NESTED_TILES,
        /* dot operands widened to fp32 after their loads (cast_operands), read back whole */
        {"pipe_shapes.tri",
         "cast_operands",
         "*fp16:16,*fp16:16,*fp32:16,i32:16",
         {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32"},
         3,
         1,
         {{E_F16, 64 * 80, FILL_UNIFORM, 0},
          {E_F16, 80 * 64, FILL_UNIFORM, 0},
          {E_F32, 64 * 64, FILL_POISON, 1e-2}},
         3,
         {80},
         1},
        /* FMA dots reading slots operand by operand (fma_shapes: W in registers and X's slot;
         * X's slot again and Y read back whole through `.T`), K = 40 a masked tail; fp16, fp32 */
        /* seed 2 with its K loop warp-specialized (warp_specialize.tri; on the device's arch a
         * producer warpgroup, from 4 stages, elsewhere the loop as usual): 2 x 2 tiles of 128
         * (the kernel loads unmasked: M and N multiples of the block), K = 320 */
        with_stages(rowmajor_matmul((Case){"warp_specialize.tri",
                                           "ws_matmul",
                                           s2_f16,
                                           {"BLOCK_SIZE_M=128", "BLOCK_SIZE_N=128",
                                            "BLOCK_SIZE_K=64", "GROUP_SIZE_M=8"},
                                           4},
                                    128, 128, E_F16, E_F16, 256, 256, 320, 2e-2),
                    4),
        /* halves of a tile (subtile.tri): an accumulator's kept in its #mma registers, a
         * loaded tile's through scratch */
        {"subtile.tri",
         "acc_halves",
         "*fp16:16,*fp16:16,*fp32:16",
         {"M=128", "N=128", "K=64"},
         3,
         1,
         {{E_F16, 128 * 64, FILL_UNIFORM, 0},
          {E_F16, 64 * 128, FILL_UNIFORM, 0},
          {E_F32, 128 * 128, FILL_POISON, 1e-3}},
         3},
        {"subtile.tri",
         "tile_halves",
         "*fp16:16,*fp32:16",
         {"M=64", "N=32"},
         2,
         1,
         {{E_F16, 64 * 32, FILL_UNIFORM, 0}, {E_F32, 64 * 16, FILL_POISON, 1e-6}},
         2},
        /* a #blocked accumulator's halves kept in its registers, on 4 and 2 warps */
        SUMS_HALVES(64, 4),
        SUMS_HALVES(128, 2),
        /* tutorial 09's persistent matmul through descriptors with its loop over tiles
         * warp-specialized (on sm_90a the producer's ring goes on across tiles, elsewhere the
         * loops as usual): 5 programs walk the 2 x 3 tiles of 128 x 128; K = 336, a tail */
        PERSISTENT_DESC_WS(128, 4, 3),
        /* ... with --pingpong, 5 programs (one of them two tiles) and 2 (3 tiles each): on
         * sm_90a two consumer groups take the tiles in turn, group 0 the first and third, group
         * 1 the second, the ring going on */
        PERSISTENT_DESC_ON(128, 4, 3, True, False, 5, 1),
        PERSISTENT_DESC_ON(128, 4, 3, True, False, 2, 1),
        /* C through TMA stores (tma_store; on sm_90a each tile written into shared memory and
         * copied out by one thread): seed 2 at 128 x 128 (2 x 2 tiles); nested_tiles' fp32 C,
         * the last tile clipped at M = 100; the persistent kernel as written (200 x 272 in
         * tiles of 128: the edge tiles clipped), warp-specialized, and with --pingpong (each
         * group's scratch its own) */
        with_tma_store(
            rowmajor_matmul((Case){"../../../examples/matmul.tri",
                                   "kernel_matmul",
                                   s2_f16,
                                   {"BLOCK_SIZE_M=128", "BLOCK_SIZE_N=128", "BLOCK_SIZE_K=64",
                                    "GROUP_SIZE_M=8", "T_C=tl.float16", "T_ACC=tl.float32"},
                                   6},
                            128, 128, E_F16, E_F16, 256, 256, 320, 2e-2)),
        with_tma_store((Case)NESTED_TILES),
        with_tma_store((Case)PERSISTENT_DESC(128, 4, 3, False, False)),
        with_tma_store((Case)PERSISTENT_DESC_WS(128, 4, 3)),
        with_tma_store((Case)PERSISTENT_DESC_ON(128, 4, 3, True, False, 2, 1)),
        FMA_SHAPES("*fp16:16,*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32:8", E_F16, 1e-3),
        FMA_SHAPES("*fp32:16,*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32:8", E_F32, 1e-4),
        /* a 2-D fp32 tile added to the accumulator each K block (tile_beside_dot), copied ahead
         * with the dot's A and B and read back whole */
        {"pipe_shapes.tri",
         "tile_beside_dot",
         "*fp16:16,*fp16:16,*fp32:16,*fp32:16,i32:16",
         {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32"},
         3,
         1,
         {{E_F16, 64 * 128, FILL_UNIFORM, 0},
          {E_F16, 128 * 64, FILL_UNIFORM, 0},
          {E_F32, 4 * 64 * 64, FILL_UNIFORM, 0},
          {E_F32, 64 * 64, FILL_POISON, 1e-3}},
         4,
         {128},
         1},
    };
    static const char *const pipe_arches[] = {NULL, "sm_90", "sm_80"};
    for (int a = 0; a < 3; a++) {
        gpu_arch = tric_device_get_kind(gpu) == TRIC_DEVICE_CUDA ? pipe_arches[a] : NULL;
        for (size_t i = 0; i < sizeof pipe_cases / sizeof pipe_cases[0]; i++)
            run_case(gpu, cpu, &pipe_cases[i]);
    }
    tric_device_close(cpu);
    tric_device_close(gpu);
    if (failures) {
        printf("%d failure(s)\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
