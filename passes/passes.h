/* passes.h: transformations of the tile IR, one file each. The pipeline is the straight list in
 * passes_run (pipeline.c); the verifier runs after each pass when PassOptions.verify is set, and
 * dump_after prints the IR after the named pass ("all" for every one).
 *
 * Each pass states at the top of its file what it requires and what it guarantees. */
#ifndef TRIC_PASSES_H
#define TRIC_PASSES_H

#include "ir/ir.h"

typedef struct PassOptions {
    int num_warps;          /* threads per program = 32 * num_warps */
    int num_stages;         /* software-pipelining depth for loops that feed a dot */
    int sm;                 /* target compute capability: 80, 86, 89, 90 */
    bool verify;            /* run ir_verify after every pass */
    const char *dump_after; /* NULL, a pass name, or "all" */
    FILE *dump;             /* where dumps go (stderr when NULL) */
    bool mma;               /* layouts.c: fp16/bf16 dots with an fp32 result on sm >= 80 get #mma
                               v2 (tensor cores, docs/layouts.md); the driver sets it */
    bool wgmma;             /* layouts.c: with mma, on sm_90a (sm 90 and arch_specific), such dots
                               whose tiles fit get #mma v3 (wgmma.mma_async, docs/layouts.md) */
    bool arch_specific;     /* the target is sm_90a (arch-specific instructions allowed) */
} PassOptions;

/* canonicalize.c: constant folding, algebraic simplification (x+0, x*1), splat/broadcast of
 * constants folded; requires nothing; guarantees no op with all-constant operands remains foldable. */
bool pass_canonicalize(IrFunc *f, const PassOptions *o, Diag *d);
/* cse.c: common subexpressions of pure ops merged within a region and its nested regions. */
bool pass_cse(IrFunc *f, const PassOptions *o, Diag *d);
/* dce.c: ops whose results are unused and that have no effect removed. */
bool pass_dce(IrFunc *f, const PassOptions *o, Diag *d);
/* widen_fp8.c: every fp8 dot that wgmma's fp8 form will not take (layouts_fp8_dot_takes_wgmma)
 * gets its operands converted to fp16 (exact), so later passes and codegen see an fp16 dot; the
 * others keep fp8 operands. Requires nothing; guarantees an fp8 dot operand only where wgmma's
 * .e4m3/.e5m2 form runs it. */
bool pass_widen_fp8(IrFunc *f, const PassOptions *o, Diag *d);
/* axis_info.c: IrValue.axis for every int and pointer value (contiguity, divisibility,
 * constancy), seeded by param divisibility hints, make_range, multiple_of/max_contiguous. */
bool pass_axis_info(IrFunc *f, const PassOptions *o, Diag *d);
/* layouts.c: a distributed layout for every block value (blocked for memory ops, chosen from axis
 * info so accesses are coalesced and as wide as proven; slice for reductions and expand_dims);
 * convert_layout inserted where producer and consumer disagree. Requires axis info. */
bool pass_layouts(IrFunc *f, const PassOptions *o, Diag *d);
/* shared_alloc.c: a shared-memory offset for every stage buffer (local_alloc) and every op that
 * needs scratch (convert_layout, cross-warp reductions, dot operand staging);
 * IrFunc.shared_bytes, within the target's limit. Requires layouts and swizzle. */
bool pass_shared_alloc(IrFunc *f, const PassOptions *o, Diag *d);

/* ---- axis info helpers (axis_info.c) --------------------------------------------------------- */

/* The widest vector, in elements (a power of two >= 1), that the load, store or async_copy mem_op may use for
 * one thread's run along its layout's fastest dim: min(size_per_thread, pointer contiguity,
 * pointer byte divisibility / element bytes, 16 bytes / element bytes, mask constancy). 1 when
 * axis info or the blocked layout is missing. docs/layouts.md; codegen must use exactly this. */
int axis_vector_width(const IrFunc *f, const IrOp *mem_op);
/* The integer constant v holds (through splat, broadcast, expand_dims, convert_layout). */
bool passes_const_int(const IrFunc *f, ValueId v, int64_t *out);
/* The largest power of two dividing v (v == 0: the cap, 2^30), capped at 2^30. */
int64_t axis_pow2_divisor(int64_t v);

/* ---- layout helpers (layouts.c) --------------------------------------------------------------- */

/* Triton's BlockedEncodingAttr builder: threads then warps filled along order, limited by the
 * shape; the last dim in order takes what is left. size_per_thread NULL means all 1; order NULL
 * means row-major (rank-1 .. 0). */
void layout_blocked_build(Layout *out, int rank, const int32_t *shape, const int *size_per_thread,
                          const int *order, int num_warps);
/* How many warps hold distinct data along dim of a value of type t in layout index layout
 * (blocked: min(wpc[dim], ceil(shape / (spt*tpw))); slice: its parent's along the mapped dim;
 * mma: its wpc). Used by shared_alloc and codegen for cross-warp reductions. */
int layout_warps_along(const IrFunc *f, int layout, Type t, int dim);
/* Whether layouts.c gives this dot of two fp8 operands an #mma v3 accumulator: sm_90a with wgmma,
 * whole warpgroups, M a multiple of 16 * num_warps, N of 8, K of 32 (wgmma's k32 fp8 form). */
bool layouts_fp8_dot_takes_wgmma(const IrFunc *f, const PassOptions *o, const IrOp *dot);

/* Whether several threads hold the same element of a value of type t in layout index layout
 * (codegen's Dist.owner is then set): a scalar, a blocked layout whose threads or warps wrap
 * around a smaller shape, or a layout not blocked (conservatively). */
bool layout_replicates(const IrFunc *f, int layout, Type t);
/* Whether reshape op merges the last two dims of a [..., N, 2] operand whose pairs each thread
 * holds into [..., 2N] (tl.interleave's reshape) with the result in the operand's layout, the pair
 * folded into dim N's sizePerThread: a register relabel in codegen, with no scratch. */
bool layout_reshape_is_relabel(const IrFunc *f, const IrOp *op);

/* ---- shared-memory helpers (shared_alloc.c) ---------------------------------------------------- */

/* The element strides (in elements) of a convert_layout's or reshape's scratch copy of its operand:
 * element c is at byte smem_offset + elem_bytes * sum(c[d] * strides[d]). docs/layouts.md. */
void shared_scratch_strides(const IrFunc *f, const IrOp *op, int64_t strides[TRIC_MAX_RANK]);
/* The dims of a convert_layout's or reshape's scratch copy, fastest first: the operand's blocked
 * order, else the result's, else row-major. */
void shared_scratch_order(const IrFunc *f, const IrOp *op, int rank, int order[TRIC_MAX_RANK]);
/* An mma dot's operand staging (docs/layouts.md): bytes of A's and of B's tiles (0 when no
 * convert_layout feeds one); A at the dot's smem_offset, B right after A. The dot's smem_bytes is
 * their sum (0 when either is 0). The tiles are swizzled when shared_dot_staging_swizzle says so,
 * else at the strides of the convert_layout feeding each (padded rows). */
void shared_dot_staging(const IrFunc *f, const IrOp *dot, int64_t *a_bytes, int64_t *b_bytes);
/* The swizzle pass's layouts for an mma dot's staged A and B (16-bit, fed by convert_layouts whose
 * scratch order runs along dim 1, i.e. A's k and B's n): NVMMA-swizzled, contiguous along dim 1,
 * so ldmatrix's eight row addresses hit eight bank groups. false: both keep padded rows. */
bool shared_dot_staging_swizzle(const IrFunc *f, const IrOp *dot, Layout *la, Layout *lb);
/* Bytes one element takes in scratch: dtype_bytes, 8 for pointers. */
int shared_elem_bytes(Type t);
/* The per-block shared memory an sm allows (opt-in maximum): 232448 for sm_90, 166912 for sm_80,
 * 101376 for sm_86/sm_89. */
int shared_limit_bytes(int sm);
/* pipeline_loops.c: software pipelining (docs/passes.md "pipeline"). For a for loop whose dots
 * read tiles loaded in the same iteration, with S = the loop's num_stages (tl.range), else the
 * function's, S >= 2: the loads become async_copy ops into S-slot local_alloc buffers, issued
 * S - 1 iterations ahead (a prologue of S - 1 predicated iterations before the loop), each
 * iteration waits (async_wait) for its own tile, reads it through a slot view (local_load into
 * the dot operand's layout, or a wgmma reading shared memory directly with one wgmma left in
 * flight), and the loop carries the insert and extract slot indices. Requires layouts; leaves
 * local_alloc buffers without a shared layout (swizzle.c gives them one). A loop it cannot
 * pipeline is left as it is. */
bool pass_pipeline(IrFunc *f, const PassOptions *o, Diag *d);
/* swizzle.c: a #shared layout for every local_alloc (and its slot views): the contiguous dim is
 * the one the copies into it run along, the swizzle the widest of 128, 64, 32 bytes that divides
 * that dim's bytes (so ldmatrix, wgmma and 16-byte copies are free of bank conflicts). Requires
 * pipeline. */
bool pass_swizzle(IrFunc *f, const PassOptions *o, Diag *d);
/* tma.c: on sm_90a, when every async_copy of the function is a tile of launch-known affine
 * addresses in a pipelined loop (docs/passes.md "tma"), the copies become tma_load ops of tensor
 * maps the runtime makes at launch (IrFunc.tmaps), each commit group an mbar_expect on its slot's
 * mbarrier and each loop's async_wait an mbar_wait. Requires pipeline and swizzle; otherwise (or
 * with TRIC_NO_TMA set) the function stays as it is. */
bool pass_tma(IrFunc *f, const PassOptions *o, Diag *d);

/* ---- shared-memory tiles (swizzle.c) ------------------------------------------------------- */

/* Bytes one slot of a local_alloc buffer (or one slot view) takes: the tile's bytes rounded up to
 * 1024, so every slot starts on the swizzle pattern's period. t is the buffer's type (dim 0 =
 * slots) when buffer, else a view's. */
int64_t shared_slot_bytes(Type t, bool buffer);
/* The byte offset, inside one slot, of tile element (c[0], c[1]) under shared layout l (rank 2;
 * docs/layouts.md "Shared layouts"). The reference formula codegen builds in LLVM IR. */
int64_t shared_swizzled_offset(const Layout *l, Type tile, const int64_t *c);
/* The bytes of the unit the swizzle permutes: vec elements (16 bytes in every tile layout, the
 * chunk wgmma and TMA read; 32 in an fp32 accumulator's scratch, shared_accumulator_swizzle). */
int64_t shared_swizzle_unit_bytes(const Layout *l, Type tile);
/* Fills l with the swizzled layout for a rank-2 tile of dtype dt whose contiguous dim is
 * contig: false when that dim's bytes are not a multiple of 32 (no wgmma swizzle applies). */
bool shared_layout_for(Layout *l, Type tile, int contig);
/* The scratch of a convert_layout in a swizzled #shared layout (the swizzle pass's choice for
 * tiles that pass through shared memory inside one op): a rank-2 value of a numeric dtype whose
 * scratch order's fastest dim has a multiple of 32 bytes, converted to a layout that is not a
 * dot operand's (those are staged for ldmatrix at padded strides, shared_dot_staging). Fills l
 * (contiguous along the scratch order's fastest dim); false: the scratch keeps padded rows
 * (shared_scratch_strides). The scratch then takes exactly the tile's bytes. */
bool shared_scratch_swizzle(const IrFunc *f, const IrOp *op, Layout *l);
/* Turns shared_layout_for's layout of a scratch that an #mma accumulator of 4-byte elements is
 * written into (columns contiguous, 128-byte swizzle) into one of 32-byte units XORed with
 * row % 4, free of bank conflicts for the accumulator's 8-byte stores; leaves others alone. */
void shared_accumulator_swizzle(Layout *l, Type tile);
/* The cross-warp scratch of a reduction (reduce_*, argmax, argmin) whose axis spans W > 1 warps:
 * the slot of output element `row` (row-major over the result) written by warp `w` along the axis
 * is row * *row_stride + w * *warp_stride (elements of the value's scratch dtype; argmax/argmin put
 * their i32 indices at the same slots of a second array right after the values). The swizzle
 * pass's choice: warp-major, outputs contiguous, so the lanes of one warp, which hold distinct
 * consecutive outputs, write and read consecutive words (no bank conflict; rows at stride W would
 * give a W-way conflict). */
void shared_reduce_scratch(const IrFunc *f, const IrOp *op, int64_t *row_stride,
                           int64_t *warp_stride);
/* Does a convert_layout from layout `from` to `to` only relabel the registers each thread holds?
 * True between #mma layouts with the same warps (and slices of them along the same dim): the
 * fragment pattern does not depend on the instruction shape, so two dots of different n (an
 * attention's BLOCK_N and HEAD_DIM) give layouts that place elements alike. True from an #mma
 * accumulator (v2, or v3 with warps [W, 1]) to the #dot_op<idx=0, k_width=2>
 * of an #mma parent with the same warps, both with one warp along N: the accumulator's element
 * (m, n) and the A fragment's element (m, k = n) sit in the same register slot pattern (rows
 * rm*16*W + wm*16 + groupID + 8h, columns tig*2 + j + 8*piece; PTX ISA 9.7.14.5.8 and
 * 9.7.15.5.1.1), so a chained dot (attention's P @ V) takes the first dot's result as its A
 * without shared memory. Such a convert needs no scratch (shared_alloc) and codegen relabels. */
bool layout_convert_is_relabel(const IrFunc *f, int from, int to);
/* The staging area of a wgmma (#mma v3) dot the pipeline did not take: A [M, K] and B [K, N] in
 * the swizzled layouts *la and *lb, each contiguous along the dim the registers feeding it run
 * along (M or K for A, K or N for B; K for tf32, which wgmma takes K-major only), A at the area's
 * start, B at *b_offset (1024-aligned). Returns the area's bytes (its start must be
 * 1024-aligned), 0 when a tile has no swizzled form. */
int64_t shared_wgmma_staging(const IrFunc *f, const IrOp *dot, Layout *la, Layout *lb,
                             int64_t *b_offset);

/* The whole pipeline, in order (pipeline.c). */
bool passes_run(IrFunc *f, const PassOptions *o, Diag *d);
/* The same as a table, for tools and tests that run the passes one by one (the interpreter
 * before and after each, say): passes_prepare (num_warps, num_stages from the options), then
 * passes_run_one for i = 0 .. passes_count - 1, each verified and dumped as passes_run does. */
typedef bool (*PassFn)(IrFunc *f, const PassOptions *o, Diag *d);
typedef struct PassInfo {
    const char *name;
    PassFn run;
} PassInfo;
extern const PassInfo passes_list[];
extern const int passes_count;
void passes_prepare(IrFunc *f, const PassOptions *o);
bool passes_run_one(IrFunc *f, const PassOptions *o, Diag *d, int i);

#endif
