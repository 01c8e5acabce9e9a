/* passes.h: transformations of the tile IR, one file each. The pass list is the straight list in
 * passes_run (pass_list.c); the verifier runs after each pass when PassOptions.verify is set, and
 * dump_after prints the IR after the named pass ("all" for every one).
 *
 * Each pass states at the top of its file what it requires and what it guarantees.
 *
 * The rules the passes decide with and codegen must follow (vector widths, register relabels,
 * where a tile or scratch element sits in shared memory) are the IR's layout algebra (ir/ir.h,
 * ir/layout.c); nothing declared here is for codegen. */
#ifndef TRIC_PASSES_H
#define TRIC_PASSES_H

#include "ir/ir.h"

typedef struct PassOptions {
    int num_warps;           /* threads per program = 32 * num_warps */
    int num_stages;          /* software-pipelining depth for loops that feed a dot */
    int sm;                  /* target compute capability: 80, 86, 89, 90 */
    bool verify;             /* run ir_verify after every pass */
    const char *dump_after;  /* NULL, a pass name, or "all" */
    FILE *dump;              /* where dumps go (stderr when NULL) */
    bool mma;                /* layouts.c: fp16/bf16 dots with an fp32 result on sm >= 80 get #mma
                               v2 (tensor cores, docs/layouts.md); the driver sets it */
    bool wgmma;              /* layouts.c: with mma, on sm_90a (sm 90 and arch_specific), such dots
                               whose tiles fit get #mma v3 (wgmma.mma_async, docs/layouts.md) */
    bool arch_specific;      /* the target is sm_90a (arch-specific instructions allowed) */
    bool no_tma;             /* tma.c does nothing: every copy stays cp.async (--no-tma) */
    bool no_heavy_first;     /* heavy_first.c does nothing: programs keep their launch order
                               (--no-heavy-first) */
    bool no_fuse_loops;      /* fuse_loops.c and split_loops.c do nothing: loops as written, two
                               one after the other stay two, one branching on its counter one
                               (--no-fuse-loops) */
    bool no_auto_ws;         /* warp_specialize.c gives a producer only to the loop that asks
                               (--no-auto-warp-specialize), never to one it chooses */
    bool pingpong;           /* warp_specialize.c: a persistent kernel's one consumer warpgroup
                               becomes two that take its tiles in turn (--pingpong) */
    bool tma_store;          /* tma.c: on sm_90a, a 2-d tile store whose addresses a tensor map
                               covers goes through shared memory and one TMA copy (--tma-store) */
    bool stream_k;           /* stream_k.c makes a matmul-shaped kernel persistent, its last
                               round of tiles split along K (--stream-k) */
    bool persistent;         /* persistent.c makes a grid persistent, its programs walking the
                               grid's tiles (--persistent) */
    bool no_auto_persistent; /* persistent.c leaves a grid as written unless asked: by default
                                it makes attention's persistent where its loop gets a producer
                                (--no-auto-persistent) */
    bool overlap_dots;       /* overlap_dots.c issues a loop's carried last wgmma an iteration
                                late (--overlap-dots); off, the pass does nothing */
    bool remarks;            /* pipeline_loops.c and tma.c say, as a remark in the Diag, why a loop
                               or a kernel's copies were left as they were (--remarks); changes no
                               code, so no cache key holds it */
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
/* fuse_loops.c: two loops one after the other whose ranges continue one another and whose bodies
 * differ only in pure arithmetic (not in loads or dots) become one loop over both ranges, the
 * differing ops under an `if` on the counter (tutorial 06's causal attention: the diagonal's
 * block in the same loop as those left of it; docs/passes.md "fuse_loops"). Elsewhere the loops
 * stay as written (a remark under --remarks where the bodies match but the ranges or iter args
 * cannot be shown to continue). */
bool pass_fuse_loops(IrFunc *f, const PassOptions *o, Diag *d);
/* flatten_loops.c: a loop asking tl.range(..., flatten=True) whose body holds one loop (and any
 * ops before and after it) becomes one loop over every inner iteration, the ops before the inner
 * loop in an `if` on its first iteration and those after it in an `if` on its last (Triton's
 * FuseNestedLoops; docs/passes.md "flatten_loops"). Elsewhere the loop stays as written, with a
 * remark under --remarks saying why. */
bool pass_flatten_loops(IrFunc *f, const PassOptions *o, Diag *d);
/* heavy_first.c: along an axis where some loop's trip count grows with program_id(axis) (and
 * none shrinks or depends on it otherwise), program_id(axis) reads num_programs(axis) - 1 -
 * program_id(axis), so the longest programs launch first (causal attention; along axis 0 with
 * program_id(1) read too, both come from the launch index, 8 values of axis 1 at a time); not
 * in a kernel with atomics or flag waits, a persistent one, or with PassOptions.no_heavy_first. */
bool pass_heavy_first(IrFunc *f, const PassOptions *o, Diag *d);
/* Whether heavy_first's rule holds along axis: some loop's trip count grows with
 * program_id(axis), none shrinks or depends on it otherwise, and no program waits for another (no
 * atomic, no flag wait). persistent pairs such a grid's tiles (its balanced turns). */
bool passes_programs_grow(const IrFunc *f, int axis);
/* stream_k.c: with PassOptions.stream_k, a kernel of one K loop accumulating dots into zeros
 * (effects only after it) becomes persistent (IrFunc.persistent): each program runs whole tiles,
 * then its share of the split tiles' K iterations (an underfull last round and one more), a split
 * tile summed from the others' fp32 partials in the workspace by the program that runs its first
 * piece (docs/passes.md "stream_k"). Elsewhere the
 * function stays as it is, with a warning saying why. */
bool pass_stream_k(IrFunc *f, const PassOptions *o, Diag *d);
/* persistent.c: with PassOptions.persistent, a grid kernel (one that reads program_id and shares
 * no tiles itself) becomes persistent (IrFunc.persistent, from_grid): its body a loop over the
 * grid's tiles from program_id(0) by num_programs(0), program_id(a) computed from the tile
 * (docs/passes.md "persistent"). Elsewhere the function stays as it is, with a warning saying
 * why. */
bool pass_persistent(IrFunc *f, const PassOptions *o, Diag *d);
/* prefetch_tiles.c: in a persistent kernel's loop over tiles (a for of the body around another
 * loop, a positive constant step), each unmasked tile load of its body whose addresses depend on
 * the tile also prefetches the next tile's: into L2 right after it, into L1 after the inner loop
 * (prefetch ops, its pointers computed again from counter + step, on while that is below the
 * bound). */
bool pass_prefetch_tiles(IrFunc *f, const PassOptions *o, Diag *d);
/* overlap_dots.c: with PassOptions.overlap_dots, on sm_90a, a pipelined loop of two wgmma ops
 * whose second one's result the loop carries (attention's p @ v) issues that one an iteration
 * late, right after the next iteration's first, so the ops between them may run under it
 * (docs/passes.md "overlap_dots"). Requires pipeline's schedule; before shared_alloc. */
bool pass_overlap_dots(IrFunc *f, const PassOptions *o, Diag *d);
/* split_loops.c: a loop whose body holds an `if` on its counter crossing a loop-invariant bound
 * (fuse_loops' `if`) runs as two loops, one each side of the bound, each with that branch's ops
 * inlined, the second from the first's results (docs/passes.md "split_loops"). Requires the
 * passes that schedule a loop (pipeline through overlap_dots); before shared_alloc. */
bool pass_split_loops(IrFunc *f, const PassOptions *o, Diag *d);
/* unroll_loops.c: a `for` with attr[3] = 2 (the pipeline's loop of a deferred promotion) runs its
 * body twice an iteration and an odd last iteration after it, in an `if` whose branches retire
 * the wgmma tiles they yield; the same values in the same order. Requires a constant positive
 * step and an i32 counter (else the loop stays as it is). */
bool pass_unroll_loops(IrFunc *f, const PassOptions *o, Diag *d);
/* Whether unroll_loops can unroll loop (a for with a constant positive step, *step, and an i32
 * counter): what the pipeline asks before it writes a loop that must be unrolled. */
bool unroll_loops_takes(const IrFunc *f, const IrOp *loop, int64_t *step);
/* shared_alloc.c: a shared-memory offset for every stage buffer (local_alloc) and every op that
 * needs scratch (convert_layout, cross-warp reductions, dot operand staging);
 * IrFunc.shared_bytes, within the target's limit. Requires layouts and swizzle. */
bool pass_shared_alloc(IrFunc *f, const PassOptions *o, Diag *d);

/* ---- axis info helpers (axis_info.c) --------------------------------------------------------- */

/* The integer constant v holds (through splat, broadcast, expand_dims, convert_layout). */
bool passes_const_int(const IrFunc *f, ValueId v, int64_t *out);
/* An i32 scalar constant built at b. */
ValueId passes_const_i32(IrBuilder *b, SrcLoc loc, int64_t v);
/* a CODE c built at b: an i1 for a comparison, else a's type (the schedules stream_k and
 * flatten_loops build from scalars). */
ValueId passes_binary(IrBuilder *b, SrcLoc loc, OpCode code, ValueId a, ValueId c);
/* The iterations of for loop `loop` whose step is the positive constant step, built at b as i32:
 * max(0, (hi - lo + step - 1) / step) (warp_specialize's ring, stream_k's schedule). */
ValueId passes_trip_count(IrBuilder *b, SrcLoc loc, const IrOp *loop, int64_t step);
/* Whether for loop `loop` counts an i32 scalar (flatten_loops, fuse_loops). */
bool passes_i32_counter(const IrFunc *f, const IrOp *loop);
/* The one for loop directly in region r, with no while loop beside it; NULL when none or two
 * (a persistent kernel's K loop in its loop over tiles: warp_specialize, persistent). */
const IrOp *passes_only_loop(const IrRegion *r);
/* Whether a for or while loop lies directly in loop's body (a loop over tiles: prefetch_tiles,
 * persistent). */
bool passes_holds_loop(const IrOp *loop);
/* A new iter arg of for loop `loop`, from init, whose value after an iteration the caller sets as
 * the yield's last operand (0 until then); returns the body's argument (warp_specialize's ring,
 * prefetch_tiles' next tile). */
ValueId passes_add_iter_arg(IrFunc *f, IrOp *loop, ValueId init, Type t, const char *name);
/* The largest power of two dividing v (v == 0: the cap, 2^30), capped at 2^30. */
int64_t axis_pow2_divisor(int64_t v);

/* ---- layout helpers (layouts.c) --------------------------------------------------------------- */

/* Triton's BlockedEncodingAttr builder: threads then warps filled along order, limited by the
 * shape; the last dim in order takes what is left. size_per_thread NULL means all 1; order NULL
 * means row-major (rank-1 .. 0). */
void layout_blocked_build(Layout *out, int rank, const int32_t *shape, const int *size_per_thread,
                          const int *order, int num_warps);
/* Whether layouts.c gives this dot of two fp8 operands an #mma v3 accumulator: sm_90a with wgmma,
 * whole warpgroups, M a multiple of 16 * num_warps, N of 8, K of 32 (wgmma's k32 fp8 form). */
bool layouts_fp8_dot_takes_wgmma(const IrFunc *f, const PassOptions *o, const IrOp *dot);

/* Whether several threads hold the same element of a value of type t in layout index layout
 * (codegen's Dist.owner is then set): a scalar, a blocked layout whose threads or warps wrap
 * around a smaller shape, or a layout not blocked (conservatively). */
bool layout_replicates(const IrFunc *f, int layout, Type t);

/* ---- shared-memory helpers (shared_alloc.c) ---------------------------------------------------- */

/* The per-block shared memory an sm allows (opt-in maximum): 232448 for sm_90, 166912 for sm_80,
 * 101376 for sm_86/sm_89. */
int shared_limit_bytes(int sm);
/* The most bytes r's buffers (its local_alloc ops) take at once, each live from its local_alloc
 * to its last use as place_buffers overlays them (two loops one after the other: causal
 * attention's passes), before alignment. */
int64_t shared_peak_buffer_bytes(const IrFunc *f, const IrRegion *r);
/* pipeline_loops.c: software pipelining (docs/passes.md "pipeline"). For a for loop with S = the
 * loop's num_stages (tl.range), else the function's, S >= 2: the loads whose tiles feed its mma
 * dots (whatever else reads them), and the rows of elements beside them (or, in a loop with no
 * dot, when its own tl.range asks), become async_copy ops into S-slot local_alloc buffers, issued
 * S - 1 iterations ahead (a prologue of S - 1 predicated iterations before the loop); each
 * iteration waits (async_wait) for its own tiles and reads them through slot views (local_load
 * into a dot operand's layout or the load's own, or a wgmma reading shared memory directly,
 * left in flight where the loop allows); what the rest of the body needs of the ops that run
 * ahead is computed again there. The loop carries the insert and extract slot indices. Requires
 * layouts; leaves local_alloc buffers without a shared layout (swizzle.c gives them one). A loop
 * it cannot pipeline is left as it is, with a remark saying why. */
bool pass_pipeline(IrFunc *f, const PassOptions *o, Diag *d);
/* defer_promotion.c: the pipeline's loop (in parent) whose in-flight wgmma dot is a promoted fp8
 * dot of one run rewritten so that its partial sum is added into the accumulator an iteration
 * late (the loop carries the partial; every sum the same, bit for bit). False, and nothing
 * changed, where the dot or its tile does not allow it. */
bool pipeline_defer_promotion(IrFunc *f, IrRegion *parent, IrOp *loop, IrOp *dot);
/* swizzle.c: a #shared layout for every local_alloc (and its slot views): the contiguous dim is
 * the one the copies into it run along, the swizzle the widest of 128, 64, 32 bytes that divides
 * that dim's bytes (so ldmatrix, wgmma and 16-byte copies are free of bank conflicts). Requires
 * pipeline. */
bool pass_swizzle(IrFunc *f, const PassOptions *o, Diag *d);
/* tma.c: on sm_90a, when every async_copy of the function is a tile of launch-known affine
 * addresses in a pipelined loop (docs/passes.md "tma"), the copies become tma_load ops of tensor
 * maps the runtime makes at launch (IrFunc.tmaps), each commit group an mbar_expect on its slot's
 * mbarrier and each loop's async_wait an mbar_wait. Requires pipeline and swizzle; otherwise (or
 * with PassOptions.no_tma) the function stays as it is. */
bool pass_tma(IrFunc *f, const PassOptions *o, Diag *d);
/* The view of mbarrier `slot` of buffer bars (!smem<1 x i64>), built at b (tma.c). */
ValueId passes_mbarrier_view(IrBuilder *b, SrcLoc loc, ValueId bars, ValueId slot);

/* warp_specialize.c: on sm_90a, the kernel-body loop that asks (tl.range(..., warp_specialize=True))
 * and whose copies tma made gets a producer warpgroup issuing them, the consumers freeing slots
 * with mbarrier arrivals (IrFunc.ws, IrOp.partition; docs/passes.md "warp_specialize"). Requires
 * tma; otherwise the function stays as it is, with a remark. */
bool pass_warp_specialize(IrFunc *f, const PassOptions *o, Diag *d);

/* Every pass, in order: the pass list (pass_list.c). */
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
