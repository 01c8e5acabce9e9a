/* layouts.c: a distributed layout for every block value, and convert_layout where a producer and a
 * consumer disagree (Triton's ConvertTritonToTritonGPU + Coalesce + a simple
 * RemoveLayoutConversions, in one pass).
 *
 * Requires: axis info (pass_axis_info), for the pointers of loads and stores.
 * Guarantees: the list in docs/layouts.md ("What the layout pass guarantees"): every block value
 * has a layout, every scalar none; elementwise ops, loads and stores see one layout on all their
 * block operands and result; expand_dims, broadcast, reductions, dot, trans, join, split and
 * loop-carried values follow Triton's rules; converts sit right after the value they convert (so a value
 * defined outside a loop is converted outside it).
 *
 * How: 1. anchors: each load and store gets the blocked layout Triton's Coalesce pass would give it
 * (order by the pointer's contiguity, size_per_thread = the provable vector width), each dot a
 * blocked accumulator layout (the FMA path); 2. wants: those layouts flow backward, to a fixed
 * point, through the ops whose operand layout follows from the result's (elementwise, broadcast,
 * expand_dims -> slice, reductions, loop-carried values), so free values (make_range, const,
 * splat) are born in the layout their consumers need; 3. assignment: in program order every result
 * takes its layout (fixed by the op, or its want, or its operand's), and operands that differ are
 * converted. */
#include "passes/passes.h"

#include <string.h>

typedef struct ConvertEntry {
    ValueId from;
    int layout;
    ValueId to;
    const IrRegion *where; /* the region the convert sits in: a later use elsewhere takes it only
                              when it sits where `from` is defined (it dominates every use) */
} ConvertEntry;

typedef struct LayCtx {
    IrFunc *f;
    const PassOptions *o;
    Diag *diag;
    int num_warps;
    int32_t *want; /* per value id below nwant: the layout its consumers would like, 0 if none */
    int nwant;
    bool changed;
    ConvertEntry *converts;
    int nconverts, converts_cap;
    int partial; /* the layout of the function's partial tiles (partial_layout), -1 until found */
} LayCtx;

static int clampi(int x, int lo, int hi) { return x < lo ? lo : (x > hi ? hi : x); }
static int maxi(int a, int b) { return a > b ? a : b; }

/* ---- building layouts ------------------------------------------------------------------------- */

void layout_blocked_build(Layout *out, int rank, const int32_t *shape, const int *size_per_thread,
                          const int *order, int num_warps)
{
    memset(out, 0, sizeof *out);
    out->kind = LAYOUT_BLOCKED;
    out->rank = rank;
    if (num_warps < 1)
        num_warps = 1;
    for (int d = 0; d < rank; d++) {
        out->blocked.size_per_thread[d] = size_per_thread ? maxi(1, size_per_thread[d]) : 1;
        out->blocked.order[d] = order ? order[d] : rank - 1 - d;
    }
    /* Triton's BlockedEncodingAttr builder (TritonGPUAttrDefs.td, "get(shape, sizePerThread,
     * order, numWarps, threadsPerWarp, numCTAs)"): lanes then warps go to the fastest dims first,
     * as many as the dim has elements left after size_per_thread; the slowest dim takes the rest,
     * replicating when the shape is too small. */
    int rem_lanes = 32, rem_threads = 32 * num_warps, rem_warps = num_warps;
    int prev_lanes = 1, prev_warps = 1;
    for (int k = 0; k < rank - 1; k++) {
        int d = out->blocked.order[k];
        int threads = clampi(rem_threads, 1, maxi(1, shape[d] / out->blocked.size_per_thread[d]));
        int tpw = clampi(threads, 1, rem_lanes);
        int wpc = clampi(threads / tpw, 1, rem_warps);
        out->blocked.threads_per_warp[d] = tpw;
        out->blocked.warps_per_cta[d] = wpc;
        rem_warps /= wpc;
        rem_lanes /= tpw;
        rem_threads /= threads;
        prev_lanes *= tpw;
        prev_warps *= wpc;
    }
    if (rank > 0) {
        int last = out->blocked.order[rank - 1];
        out->blocked.threads_per_warp[last] = 32 / prev_lanes;
        out->blocked.warps_per_cta[last] = maxi(1, num_warps / prev_warps);
    }
}

static int layout_default(LayCtx *c, Type t)
{
    Layout l;
    layout_blocked_build(&l, t.rank, t.shape, NULL, NULL, c->num_warps);
    return ir_layout_intern(c->f, &l);
}

static int layout_slice(LayCtx *c, int dim, int parent)
{
    Layout l;
    memset(&l, 0, sizeof l);
    l.kind = LAYOUT_SLICE;
    l.rank = c->f->layouts[parent].rank - 1;
    l.slice.dim = dim;
    l.slice.parent = parent;
    return ir_layout_intern(c->f, &l);
}

static int layout_dot_operand(LayCtx *c, int op_idx, int parent, int k_width)
{
    Layout l;
    memset(&l, 0, sizeof l);
    l.kind = LAYOUT_DOT_OPERAND;
    l.rank = 2;
    l.dot_operand.parent = parent;
    l.dot_operand.op_idx = op_idx;
    l.dot_operand.k_width = k_width; /* 0 for a blocked parent (the FMA path) */
    return ir_layout_intern(c->f, &l);
}

/* trans: result dim i is operand dim perm[i]. inverse: the operand's layout from the result's. */
static int layout_permute(LayCtx *c, int layout, const int64_t *perm, int rank, bool inverse)
{
    const Layout *src = &c->f->layouts[layout];
    if (src->kind != LAYOUT_BLOCKED || src->rank != rank)
        return 0;
    int inv[TRIC_MAX_RANK];
    for (int i = 0; i < rank; i++)
        inv[perm[i]] = i;
    Layout l = *src;
    for (int i = 0; i < rank; i++) {
        int from = inverse ? inv[i] : (int)perm[i]; /* the source dim that lands on dim i */
        l.blocked.size_per_thread[i] = src->blocked.size_per_thread[from];
        l.blocked.threads_per_warp[i] = src->blocked.threads_per_warp[from];
        l.blocked.warps_per_cta[i] = src->blocked.warps_per_cta[from];
        int o = src->blocked.order[i];
        l.blocked.order[i] = inverse ? (int)perm[o] : inv[o];
    }
    return ir_layout_intern(c->f, &l);
}

/* join's result layout from its operands' blocked layout l: a new last dim of 2 elements, held by
 * each thread and fastest in its registers; the other dims are placed as in l. */
static int layout_join_of(LayCtx *c, int l)
{
    const Layout *src = &c->f->layouts[l];
    if (src->kind != LAYOUT_BLOCKED || src->rank + 1 > TRIC_MAX_RANK)
        return 0;
    Layout r = *src;
    int d = src->rank;
    r.rank = d + 1;
    r.blocked.size_per_thread[d] = 2;
    r.blocked.threads_per_warp[d] = 1;
    r.blocked.warps_per_cta[d] = 1;
    r.blocked.order[0] = d;
    for (int k = 0; k < src->rank; k++)
        r.blocked.order[k + 1] = src->blocked.order[k];
    return ir_layout_intern(c->f, &r);
}

/* split's result layout from its operand's layout l (layout_holds_pair): l without its last dim. */
static int layout_split_of(LayCtx *c, int l)
{
    const Layout *src = &c->f->layouts[l];
    int d = src->rank - 1;
    Layout r = *src;
    r.rank = d;
    r.blocked.size_per_thread[d] = r.blocked.threads_per_warp[d] = r.blocked.warps_per_cta[d] = 0;
    for (int k = 0, j = 0; k < src->rank; k++)
        if (src->blocked.order[k] != d)
            r.blocked.order[j++] = src->blocked.order[k];
    r.blocked.order[d] = 0;
    return ir_layout_intern(c->f, &r);
}

/* The pair layout whose merge (merged_pair_layout) is w, for the operand of an interleave's
 * reshape whose result wants w; 0 when w's last dim holds no even run per thread. */
static int layout_unmerge_pair(LayCtx *c, int w)
{
    const Layout *src = &c->f->layouts[w];
    int d = src->rank;
    if (src->kind != LAYOUT_BLOCKED || d < 1 || d + 1 > TRIC_MAX_RANK ||
        src->blocked.size_per_thread[d - 1] % 2)
        return 0;
    Layout r = *src;
    r.blocked.size_per_thread[d - 1] /= 2;
    r.rank = d + 1;
    r.blocked.size_per_thread[d] = 2;
    r.blocked.threads_per_warp[d] = 1;
    r.blocked.warps_per_cta[d] = 1;
    r.blocked.order[0] = d;
    for (int k = 0; k < d; k++)
        r.blocked.order[k + 1] = src->blocked.order[k];
    return ir_layout_intern(c->f, &r);
}

bool layout_replicates(const IrFunc *f, int layout, Type t)
{
    if (t.rank == 0 || layout <= 0 || layout >= f->nlayouts ||
        f->layouts[layout].kind != LAYOUT_BLOCKED)
        return true;
    const Layout *l = &f->layouts[layout];
    int wpc_total = 1;
    /* codegen/distribution.c cg_dist: lanes or warps along a dim wrap when the shape is smaller
     * than size_per_thread * threads (* warps) there. */
    for (int d = 0; d < l->rank && d < t.rank; d++) {
        int64_t spt =
            l->blocked.size_per_thread[d] < t.shape[d] ? l->blocked.size_per_thread[d] : t.shape[d];
        int64_t tpw = l->blocked.threads_per_warp[d], wpc = l->blocked.warps_per_cta[d];
        int64_t lanes = t.shape[d] / spt < 1 ? 1 : t.shape[d] / spt;
        int64_t warps = t.shape[d] / (spt * tpw) < 1 ? 1 : t.shape[d] / (spt * tpw);
        if (lanes < tpw || warps < wpc)
            return true;
        wpc_total *= (int)wpc;
    }
    return wpc_total < f->num_warps;
}

/* The blocked layout of a load or store (Triton's Coalesce pass): order by the pointer's
 * contiguity, largest first (ties keep row-major order); size_per_thread along the fastest dim =
 * the widest access the pointer's alignment proves (<= 128 bits), but no more than the tile gives
 * each thread. */
static int layout_anchor(LayCtx *c, const IrOp *op)
{
    IrFunc *f = c->f;
    if (op->noperands < 1)
        return 0;
    ValueId ptr = op->operands[0];
    Type t = ir_type(f, ptr);
    int rank = t.rank;
    if (rank == 0)
        return 0;
    const AxisInfo *ax = f->values[ptr].axis;
    int order[TRIC_MAX_RANK];
    for (int k = 0; k < rank; k++)
        order[k] = rank - 1 - k;
    if (ax) { /* stable insertion sort, descending contiguity */
        for (int i = 1; i < rank; i++)
            for (int j = i; j > 0 && ax->contiguity[order[j]] > ax->contiguity[order[j - 1]]; j--) {
                int tmp = order[j];
                order[j] = order[j - 1];
                order[j - 1] = tmp;
            }
    }
    int d0 = order[0];
    int64_t eb = dtype_bytes(t.dtype);
    int64_t vec = 1;
    if (ax) {
        vec = ax->contiguity[d0];
        int64_t aligned = ax->divisibility[d0] / eb;
        if (aligned < vec)
            vec = aligned;
        if (16 / eb < vec)
            vec = 16 / eb;
        if (vec < 1)
            vec = 1;
    }
    int64_t per_thread = type_numel(t) / (32 * c->num_warps);
    if (per_thread < vec)
        vec = per_thread < 1 ? 1 : per_thread;
    if (vec > t.shape[d0])
        vec = t.shape[d0];
    int64_t p = 1;
    while (p * 2 <= vec)
        p *= 2;
    int spt[TRIC_MAX_RANK];
    for (int d = 0; d < rank; d++)
        spt[d] = 1;
    /* Atomics take one element per access (there are no vector atom forms for most kinds):
     * one element per thread spreads them over the most threads. */
    if (op->code == OP_ATOMIC_RMW || op->code == OP_ATOMIC_CAS)
        p = 1;
    spt[d0] = (int)p;
    Layout l;
    layout_blocked_build(&l, rank, t.shape, spt, order, c->num_warps);
    return ir_layout_intern(f, &l);
}

/* Triton's warpsPerTileV2 (AccelerateMatmul.cpp) for an [M, N] accumulator: double the warps along
 * whichever dim has more 16x8 pieces left per warp, M first on ties (M only while wm < M/16). */
static void mma_v2_warps(int num_warps, int M, int N, int *wm_out, int *wn_out)
{
    int wm = 1, wn = 1;
    while (wm * wn < num_warps) {
        if (M / 16 / wm >= N / (8 * wn)) {
            if (wm < M / 16)
                wm *= 2;
            else
                wn *= 2;
        } else {
            wn *= 2;
        }
    }
    *wm_out = wm;
    *wn_out = wn;
}

/* Whether a dot goes to the tensor cores: mma.sync m16n8k16 (PTX ISA 9.7.14.5.8) takes fp16 or
 * bf16 A and B and accumulates in fp32, from sm_80 on; the tile must hold whole 16x8x16 pieces
 * in every warp (M a multiple of 16 Wm, N of 8 Wn: codegen's mma layouts hold no copies), else
 * the FMA path takes it. */
/* An fp32 dot that may use tf32 (tl.dot's default input_precision; attr[0]): on sm_90a it runs
 * on the tensor cores through wgmma's .tf32 form (m64nNk8); elsewhere it stays on FMA (mma.sync's
 * tf32 form is not built). */
static bool dot_is_tf32(const LayCtx *c, const IrOp *op)
{
    Type a = ir_type(c->f, op->operands[0]), b = ir_type(c->f, op->operands[1]);
    return op->attr[0] != 0 && a.dtype == DT_F32 && b.dtype == DT_F32 && !a.is_ptr && !b.is_ptr;
}

static bool dot_uses_wgmma(const LayCtx *c, const IrOp *op);

static bool dot_is_fp8(const IrFunc *f, const IrOp *op)
{
    Type a = ir_type(f, op->operands[0]), b = ir_type(f, op->operands[1]);
    return !a.is_ptr && !b.is_ptr && dtype_is_fp8(a.dtype) && dtype_is_fp8(b.dtype);
}

static bool dot_uses_mma(const LayCtx *c, const IrOp *op)
{
    /* fp8 dots reach here only where wgmma takes them (widen_fp8.c widened the others) */
    if (dot_is_tf32(c, op) || dot_is_fp8(c->f, op))
        return dot_uses_wgmma(c, op);
    if (!c->o || !c->o->mma || c->o->sm < 80)
        return false;
    Type a = ir_type(c->f, op->operands[0]), b = ir_type(c->f, op->operands[1]);
    Type r = ir_type(c->f, op->results[0]);
    if (a.rank != 2 || b.rank != 2 || r.rank != 2 || a.dtype != b.dtype || r.dtype != DT_F32 ||
        (a.dtype != DT_F16 && a.dtype != DT_BF16))
        return false;
    int wm, wn;
    mma_v2_warps(c->num_warps, r.shape[0], r.shape[1], &wm, &wn);
    return r.shape[0] % (16 * wm) == 0 && r.shape[1] % (8 * wn) == 0 && a.shape[1] % 16 == 0;
}

/* #mma v2 for an [M, N] accumulator, warps from mma_v2_warps. */
static int layout_mma_v2(LayCtx *c, int M, int N)
{
    int wm, wn;
    mma_v2_warps(c->num_warps, M, N, &wm, &wn);
    Layout l;
    memset(&l, 0, sizeof l);
    l.kind = LAYOUT_MMA;
    l.rank = 2;
    l.mma.version = 2;
    l.mma.warps_per_cta[0] = wm;
    l.mma.warps_per_cta[1] = wn;
    l.mma.instr_shape[0] = 16;
    l.mma.instr_shape[1] = 8;
    l.mma.instr_shape[2] = 16;
    return ir_layout_intern(c->f, &l);
}

/* Whether a dot goes to Hopper's warpgroup MMA (wgmma.mma_async.m64nNk16, PTX ISA 9.7.15): only
 * when PassOptions.wgmma is set and the target is sm_90a (wgmma is arch-specific), for fp16/bf16
 * A and B (or two fp8 operands, the k32 .e4m3/.e5m2 forms, K a multiple of 32) with an fp32 result, 4, 8, ... warps (whole warpgroups), warpgroups stacked along M
 * (Triton's warpsPerTileV3 splits M by 64 per warpgroup first) so M must be a multiple of
 * 16 * num_warps, N a multiple of 8 (one instruction per N <= 256, else 256-wide pieces), K of
 * 16, and both operands arriving through convert_layouts (codegen stages them). */
static bool dot_fits_wgmma(const IrFunc *f, const PassOptions *o, int num_warps, const IrOp *op,
                           bool tf32)
{
    if (!o || !o->wgmma || !o->arch_specific || o->sm != 90 || num_warps % 4)
        return false;
    Type a = ir_type(f, op->operands[0]), b = ir_type(f, op->operands[1]);
    Type r = ir_type(f, op->results[0]);
    bool fp8 = dot_is_fp8(f, op);
    if (a.rank != 2 || b.rank != 2 || r.rank != 2 || (a.dtype != b.dtype && !fp8) ||
        r.dtype != DT_F32 || (a.dtype != DT_F16 && a.dtype != DT_BF16 && !tf32 && !fp8))
        return false;
    /* k per instruction: 32 bytes of K (k8 tf32, k16 fp16/bf16, k32 fp8) */
    int M = r.shape[0], N = r.shape[1], K = a.shape[1];
    return M % (16 * num_warps) == 0 && N % 8 == 0 && (N <= 256 || N % 256 == 0) &&
           K % (tf32  ? 8
                : fp8 ? 32
                      : 16) ==
               0;
}

static bool dot_uses_wgmma(const LayCtx *c, const IrOp *op)
{
    return dot_fits_wgmma(c->f, c->o, c->num_warps, op, dot_is_tf32(c, op));
}

bool layouts_fp8_dot_takes_wgmma(const IrFunc *f, const PassOptions *o, const IrOp *dot)
{
    int num_warps = f->num_warps > 0 ? f->num_warps : (o && o->num_warps > 0 ? o->num_warps : 4);
    return dot_is_fp8(f, dot) && dot_fits_wgmma(f, o, num_warps, dot, false);
}

/* #mma v3 for an [M, N] accumulator: warps [num_warps, 1] (warpgroup g = warp / 4 owns rows
 * g*64 + 64*num_warps/4*rm ..., each warp 16 of them: the m16n8 pattern of v2 with Wm = num_warps,
 * Wn = 1, docs/layouts.md), instr_shape [64, n, 16] with n = N up to 256. */
static int layout_mma_v3(LayCtx *c, int M, int N, int K_instr)
{
    (void)M;
    Layout l;
    memset(&l, 0, sizeof l);
    l.kind = LAYOUT_MMA;
    l.rank = 2;
    l.mma.version = 3;
    l.mma.warps_per_cta[0] = c->num_warps;
    l.mma.warps_per_cta[1] = 1;
    l.mma.instr_shape[0] = 64;
    l.mma.instr_shape[1] = N <= 256 ? N : 256;
    l.mma.instr_shape[2] = K_instr; /* 16 for fp16/bf16, 8 for tf32, 32 for fp8 */
    return ir_layout_intern(c->f, &l);
}

/* The accumulator layout of a dot: #mma v2 when it goes to the tensor cores, else (FMA) a blocked
 * layout. For FMA, Triton's default (spt [1, 1], all lanes
 * along N) would make each thread hold whole columns of A for a 128-wide tile; instead each thread
 * gets a 4x4 block (smaller for small tiles), lanes 4 x 8 and warps along M first, so a thread
 * needs few rows of A and few columns of B per k (docs/layouts.md, "FMA dot"). */
static int layout_dot_acc(LayCtx *c, const IrOp *op)
{
    Type t = ir_type(c->f, op->results[0]);
    if (t.rank != 2)
        return layout_default(c, t);
    if (dot_uses_mma(c, op) && dot_uses_wgmma(c, op))
        return layout_mma_v3(c, t.shape[0], t.shape[1],
                             dot_is_tf32(c, op)     ? 8
                             : dot_is_fp8(c->f, op) ? 32
                                                    : 16);
    if (dot_uses_mma(c, op))
        return layout_mma_v2(c, t.shape[0], t.shape[1]);
    int M = t.shape[0], N = t.shape[1], W = c->num_warps;
    int sm = M < 4 ? M : 4, sn = N < 4 ? N : 4;
    while ((int64_t)sm * sn * 32 * W > (int64_t)M * N && (sm > 1 || sn > 1)) {
        if (sm >= sn)
            sm /= 2;
        else
            sn /= 2;
    }
    Layout l;
    memset(&l, 0, sizeof l);
    l.kind = LAYOUT_BLOCKED;
    l.rank = 2;
    l.blocked.size_per_thread[0] = sm;
    l.blocked.size_per_thread[1] = sn;
    l.blocked.threads_per_warp[1] = clampi(N / sn, 1, 8);
    l.blocked.threads_per_warp[0] = 32 / l.blocked.threads_per_warp[1];
    l.blocked.warps_per_cta[0] = clampi(M / (sm * l.blocked.threads_per_warp[0]), 1, W);
    l.blocked.warps_per_cta[1] = W / l.blocked.warps_per_cta[0];
    l.blocked.order[0] = 1;
    l.blocked.order[1] = 0;
    return ir_layout_intern(c->f, &l);
}

static IrOp *region_terminator(IrRegion *r) { return r->nops ? r->ops[r->nops - 1] : NULL; }

/* The one layout of a function's partial tiles (partial_store and partial_add: their memory order
 * follows it, so both must agree): the accumulator layout of the dot whose sum a partial_store
 * stores (through the loops that carry it), so the accumulator goes to memory as it is (stream-K's
 * partials: no convert through shared memory); 0 (the default) when no dot makes it. */
static int partial_layout(LayCtx *c)
{
    if (c->partial >= 0)
        return c->partial;
    const IrFunc *f = c->f;
    const IrOp *st = ir_region_find(&f->body, (const OpCode[]){OP_PARTIAL_STORE}, 1);
    c->partial = 0;
    ValueId v = st ? st->operands[2] : 0;
    for (int depth = 0; v > 0 && depth < 16; depth++) {
        const IrOp *def = f->values[v].def;
        if (!def)
            break;
        if (def->code == OP_DOT) {
            c->partial = layout_dot_acc(c, def);
            break;
        }
        int k = 0;
        while (k < def->nresults && def->results[k] != v)
            k++;
        if (def->code != OP_FOR || def->nregions != 1 || k == def->nresults)
            break;
        const IrOp *y = region_terminator((IrRegion *)&def->regions[0]);
        v = y && y->code == OP_YIELD && k < y->noperands ? y->operands[k] : 0;
    }
    if (!c->partial && st)
        c->partial = layout_default(c, ir_type(f, st->operands[2]));
    return c->partial;
}

/* ---- wants: layouts flowing backward from anchors --------------------------------------------- */

static int want_of(const LayCtx *c, ValueId v) { return v > 0 && v < c->nwant ? c->want[v] : 0; }

static void want_set(LayCtx *c, ValueId v, int layout)
{
    if (v <= 0 || v >= c->nwant || layout <= 0 || c->want[v])
        return;
    Type t = ir_type(c->f, v);
    if (t.rank == 0 || c->f->layouts[layout].rank != t.rank || !layout_holds(c->f, layout, t))
        return; /* (a reduction's operand smaller than its result's #mma tile keeps its own) */
    c->want[v] = layout;
    c->changed = true;
}

static bool is_reduction(OpCode code)
{
    return code == OP_REDUCE_SUM || code == OP_REDUCE_MAX || code == OP_REDUCE_MIN ||
           code == OP_ARGMAX || code == OP_ARGMIN;
}

static void want_anchors(LayCtx *c, IrRegion *r)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            want_anchors(c, &op->regions[k]);
        if (op->code == OP_LOAD || op->code == OP_STORE || op->code == OP_ATOMIC_RMW ||
            op->code == OP_ATOMIC_CAS) {
            int l = layout_anchor(c, op);
            for (int j = 0; j < op->noperands; j++)
                want_set(c, op->operands[j], l);
            if (op->nresults)
                want_set(c, op->results[0], l);
        } else if (op->code == OP_DOT) {
            int l = layout_dot_acc(c, op);
            want_set(c, op->operands[2], l);
            want_set(c, op->results[0], l);
        } else if (op->code == OP_PARTIAL_STORE || op->code == OP_PARTIAL_ADD) {
            int l = partial_layout(c);
            want_set(c, op->operands[2], l);
            if (op->nresults)
                want_set(c, op->results[0], l);
        }
    }
}

static void want_loop_value(LayCtx *c, ValueId *vals, int n)
{
    int l = 0;
    for (int i = 0; i < n && !l; i++)
        l = want_of(c, vals[i]);
    for (int i = 0; i < n; i++)
        want_set(c, vals[i], l);
}

/* One sweep, last op first. Backward: a result's want becomes its operands' (per the op's rule).
 * Forward: a result nobody downstream wants a layout for takes the one its operands imply (a
 * reduction of a loaded tile: the slice of the tile's layout), so a loop-carried sum stays in the
 * layout the reduction makes. exits: whether the wants of a loop's or if's results (what the code
 * after it needs) may flow in; they are let in only after everything inside has spoken, so that
 * a convert lands after the loop, not in every iteration. */
/* The layout a result gets from its operands' wants, for a result nobody downstream asked about. */
static void want_forward(LayCtx *c, IrOp *op, ValueId res)
{
    if (op->noperands < 1)
        return;
    int ow = want_of(c, op->operands[0]);
    if (is_reduction(op->code)) {
        if (ow)
            want_set(c, res, layout_slice(c, (int)op->attr[0], ow));
    } else if (op->code == OP_EXPAND_DIMS) {
        const Layout *l = &c->f->layouts[ow];
        if (ow && l->kind == LAYOUT_SLICE && l->slice.dim == op->attr[0])
            want_set(c, res, l->slice.parent);
    } else if (op->code == OP_TRANS) {
        if (ow)
            want_set(c, res, layout_permute(c, ow, op->attr, ir_type(c->f, res).rank, false));
    } else if (op->code == OP_JOIN) {
        if (ow)
            want_set(c, res, layout_join_of(c, ow));
    } else if (op->code == OP_SPLIT) {
        if (layout_holds_pair(c->f, ow, ir_type(c->f, op->operands[0]).rank))
            want_set(c, res, layout_split_of(c, ow));
    } else if (op_has(op->code, OPT_ELEMENTWISE) || op->code == OP_BROADCAST ||
               op->code == OP_MULTIPLE_OF || op->code == OP_MAX_CONTIGUOUS) {
        for (int j = 0; j < op->noperands; j++)
            if (ir_type(c->f, op->operands[j]).rank > 0 && want_of(c, op->operands[j])) {
                want_set(c, res, want_of(c, op->operands[j]));
                break;
            }
    }
}

static void want_region(LayCtx *c, IrRegion *r, bool exits)
{
    for (int i = r->nops - 1; i >= 0; i--) {
        IrOp *op = r->ops[i];
        ValueId res = op->nresults ? op->results[0] : 0;
        int w = want_of(c, res);
        if (op->code == OP_FOR && op->nregions == 1) {
            IrRegion *body = &op->regions[0];
            IrOp *y = region_terminator(body);
            for (int k = 0; k < op->nresults; k++) {
                /* The body's wants first (a dot's accumulator), then the exit's, then the init's:
                 * a convert after the loop is cheaper than one per iteration. */
                ValueId group[4] = {
                    1 + k < body->nargs ? body->args[1 + k] : 0,
                    y && y->code == OP_YIELD && k < y->noperands ? y->operands[k] : 0,
                    3 + k < op->noperands ? op->operands[3 + k] : 0, exits ? op->results[k] : 0};
                want_loop_value(c, group, 4);
            }
        } else if (op->code == OP_IF) {
            for (int k = 0; k < op->nresults; k++) {
                ValueId group[3] = {0, 0, exits ? op->results[k] : 0};
                for (int j = 0; j < op->nregions && j < 2; j++) {
                    IrOp *y = region_terminator(&op->regions[j]);
                    group[j] = y && y->code == OP_YIELD && k < y->noperands ? y->operands[k] : 0;
                }
                want_loop_value(c, group, 3);
            }
        } else if (op->code == OP_WHILE && op->nregions == 2) {
            IrRegion *r0 = &op->regions[0], *r1 = &op->regions[1];
            IrOp *cond = region_terminator(r0), *y = region_terminator(r1);
            for (int k = 0; k < op->noperands; k++) {
                ValueId group[3] = {op->operands[k], k < r0->nargs ? r0->args[k] : 0,
                                    y && y->code == OP_YIELD && k < y->noperands ? y->operands[k]
                                                                                 : 0};
                want_loop_value(c, group, 3);
            }
            for (int k = 0; k < op->nresults; k++) {
                ValueId group[3] = {k < r1->nargs ? r1->args[k] : 0,
                                    cond && cond->code == OP_CONDITION && 1 + k < cond->noperands
                                        ? cond->operands[1 + k]
                                        : 0,
                                    exits ? op->results[k] : 0};
                want_loop_value(c, group, 3);
            }
        } else if (w) {
            if (op_has(op->code, OPT_ELEMENTWISE) || op->code == OP_BROADCAST ||
                op->code == OP_MULTIPLE_OF || op->code == OP_MAX_CONTIGUOUS) {
                for (int j = 0; j < op->noperands; j++)
                    want_set(c, op->operands[j], w);
            } else if (op->code == OP_EXPAND_DIMS) {
                want_set(c, op->operands[0], layout_slice(c, (int)op->attr[0], w));
            } else if (is_reduction(op->code)) {
                const Layout *l = &c->f->layouts[w];
                if (l->kind == LAYOUT_SLICE && l->slice.dim == op->attr[0])
                    want_set(c, op->operands[0], l->slice.parent);
            } else if (op->code == OP_TRANS) {
                want_set(c, op->operands[0],
                         layout_permute(c, w, op->attr, ir_type(c->f, res).rank, true));
            } else if (op->code == OP_JOIN) {
                if (layout_holds_pair(c->f, w, ir_type(c->f, res).rank))
                    for (int j = 0; j < 2; j++)
                        want_set(c, op->operands[j], layout_split_of(c, w));
            } else if (op->code == OP_SPLIT) {
                want_set(c, op->operands[0], layout_join_of(c, w));
            } else if (reshape_merges_pair(c->f, op)) {
                want_set(c, op->operands[0], layout_unmerge_pair(c, w));
            }
        } else if (res && ir_type(c->f, res).rank > 0) {
            want_forward(c, op, res);
        }
        for (int k = op->nregions - 1; k >= 0; k--)
            want_region(c, &op->regions[k], exits);
    }
}

/* ---- assignment and converts ------------------------------------------------------------------ */

static bool find_value_home(IrRegion *r, ValueId v, const IrOp *def, IrRegion **home, int *pos)
{
    if (!def) {
        for (int i = 0; i < r->nargs; i++)
            if (r->args[i] == v) {
                *home = r;
                *pos = 0;
                return true;
            }
    }
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        if (def && op == def) {
            *home = r;
            *pos = i + 1;
            return true;
        }
        for (int k = 0; k < op->nregions; k++)
            if (find_value_home(&op->regions[k], v, def, home, pos))
                return true;
    }
    return false;
}

static void set_layout(LayCtx *c, ValueId v, int layout)
{
    if (v > 0 && ir_type(c->f, v).rank > 0)
        c->f->values[v].layout = layout;
}

static ValueId convert_to(LayCtx *c, ValueId v, int layout, SrcLoc loc);

/* The chain of regions from r down to the one holding target: regs[k] and, in it, the index
 * idx[k] of the op that is or holds target. Its length in *n; false when target is not in r. */
static bool op_path(IrRegion *r, const IrOp *target, IrRegion **regs, int *idx, int depth, int max,
                    int *n)
{
    if (depth >= max)
        return false;
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        regs[depth] = r;
        idx[depth] = i;
        if (op == target) {
            *n = depth + 1;
            return true;
        }
        for (int k = 0; k < op->nregions; k++)
            if (op_path(&op->regions[k], target, regs, idx, depth + 1, max, n))
                return true;
    }
    return false;
}

/* Where a convert of a value defined in region home goes for its use by user: right after the
 * definition (every later use shares it), unless user sits inside an `if` below home with no
 * loop between -- then inside that `if`'s branch, before what holds user, so that the convert
 * (a shared-memory round trip) runs only when the branch does: a flattened persistent loop's
 * epilogue under `if ki == k_tiles - 1` converts its accumulator once per tile, not once per K
 * step. False: at home. */
static bool convert_in_branch(IrFunc *f, IrRegion *home, const IrOp *user, IrRegion **where,
                              int *pos)
{
    enum { MAX_DEPTH = 32 };
    IrRegion *regs[MAX_DEPTH];
    int idx[MAX_DEPTH], n = 0, h = -1;
    if (!user || !op_path(&f->body, user, regs, idx, 0, MAX_DEPTH, &n))
        return false;
    for (int k = 0; k < n && h < 0; k++)
        if (regs[k] == home)
            h = k;
    for (int k = h < 0 ? n : h; k + 1 < n; k++) {
        const IrOp *enclosing = regs[k]->ops[idx[k]];
        if (enclosing->code != OP_IF)
            return false; /* a loop: hoisted out of it, at home */
        *where = regs[k + 1];
        *pos = idx[k + 1];
        return true;
    }
    return false;
}

/* Whether op sits in the body of a loop (at any depth). */
static bool in_loop(const IrFunc *f, const IrOp *op)
{
    enum { MAX_DEPTH = 32 };
    IrRegion *regs[MAX_DEPTH];
    int idx[MAX_DEPTH], n = 0;
    if (!op_path((IrRegion *)&f->body, op, regs, idx, 0, MAX_DEPTH, &n))
        return false;
    for (int k = 0; k + 1 < n; k++) {
        OpCode code = regs[k]->ops[idx[k]]->code;
        if (code == OP_FOR || code == OP_WHILE)
            return true;
    }
    return false;
}

/* Cheap to recompute in another layout: a chain (at most depth ops deep) of make_range, const,
 * splat, broadcast, expand_dims and elementwise integer/pointer ops, with no load in it. Triton's
 * RemoveLayoutConversions rematerializes such slices instead of converting them, since a convert
 * costs a shared-memory round trip and two barriers. */
static bool can_remat(const IrFunc *f, ValueId v, int depth)
{
    const IrOp *def = f->values[v].def;
    if (!def || depth <= 0 || def->nresults != 1 || def->nregions)
        return false;
    switch (def->code) {
    case OP_CONST:
    case OP_UNDEF:
    case OP_MAKE_RANGE:
    case OP_SPLAT: return true;
    case OP_BROADCAST:
    case OP_EXPAND_DIMS: return can_remat(f, def->operands[0], depth - 1);
    case OP_LOAD: {
        /* a load in a loop of no more elements than the program has threads (attention
         * backward's row statistics m and Delta, 32 floats per iteration): loaded again in the
         * layout its user wants, each element by the threads that hold it there, at the same
         * point (nothing stores in between), rather than a convert through shared memory and its
         * two barriers every iteration. Triton's RemoveLayoutConversions counts such a load as
         * cheap to rematerialize. Outside loops (a bias row, once per program) the convert
         * stays. */
        Type t = ir_type(f, v);
        if (t.is_ptr || type_numel(t) > 32 * (int64_t)(f->num_warps > 0 ? f->num_warps : 4) ||
            !in_loop(f, def))
            return false;
        for (int j = 0; j < def->noperands; j++)
            if (def->operands[j] > 0 && ir_type(f, def->operands[j]).rank > 0 &&
                !can_remat(f, def->operands[j], depth - 1))
                return false;
        return true;
    }
    default: break;
    }
    if (!op_has(def->code, OPT_ELEMENTWISE))
        return false;
    for (int j = 0; j < def->noperands; j++)
        if (ir_type(f, def->operands[j]).rank > 0 && !can_remat(f, def->operands[j], depth - 1))
            return false;
    return true;
}

/* A copy of v's defining op, right after it, computing v in the given layout (its block operands
 * brought to the layouts the op's rule asks for, recursively). */
static ValueId remat(LayCtx *c, ValueId v, int layout)
{
    IrFunc *f = c->f;
    IrOp *def = f->values[v].def;
    ValueId ops[8];
    int n = def->noperands < 8 ? def->noperands : 8;
    for (int j = 0; j < n; j++) {
        ValueId o = def->operands[j];
        int want = layout;
        if (def->code == OP_EXPAND_DIMS)
            want = layout_slice(c, (int)def->attr[0], layout);
        ops[j] = ir_type(f, o).rank > 0 ? convert_to(c, o, want, def->loc) : o;
    }
    IrRegion *home = NULL;
    int pos = 0;
    if (!find_value_home(&f->body, v, def, &home, &pos))
        return 0;
    Type t = ir_type(f, v);
    IrBuilder b = {.func = f, .region = home, .pos = pos};
    IrOp *copy = ir_build(&b, def->code, def->loc, ops, n, &t, 1, 0);
    for (int k = 0; k < TRIC_MAX_RANK; k++)
        copy->attr[k] = def->attr[k];
    copy->fattr = def->fattr;
    copy->sattr = def->sattr;
    ValueId out = copy->results[0];
    f->values[out].layout = layout;
    f->values[out].axis = f->values[v].axis;
    f->values[out].name = f->values[v].name;
    return out;
}

/* v in layout `layout` for its use by user (NULL: any use after v's definition): v itself, a
 * rematerialized copy of a cheap v, or a convert_layout placed right after v's definition (at the
 * start of its region for a region argument; inside an `if` for a use only there:
 * convert_in_branch); either way shared by every consumer that needs it there. */
static ValueId convert_for(LayCtx *c, ValueId v, int layout, SrcLoc loc, const IrOp *user)
{
    IrFunc *f = c->f;
    if (v <= 0 || layout <= 0 || ir_type(f, v).rank == 0 || f->values[v].layout == layout)
        return v;
    IrRegion *home = NULL, *where = NULL;
    int pos = 0, wpos = 0;
    if (!find_value_home(&f->body, v, f->values[v].def, &home, &pos)) {
        home = &f->body;
        pos = 0;
    }
    bool in_branch = convert_in_branch(f, home, user, &where, &wpos);
    for (int i = 0; i < c->nconverts; i++)
        if (c->converts[i].from == v && c->converts[i].layout == layout &&
            (c->converts[i].where == home || (in_branch && c->converts[i].where == where)))
            return c->converts[i].to;
    /* Rematerialize only into distributed blocked, slice and #mma layouts: a dot operand
     * arrives through a convert, the one path codegen has for those layouts. (A row index
     * expand_dims'd to #mma, causal attention's offs_m[:, None] in its mask, is rebuilt from its
     * range in #mma's row slice rather than converted through shared memory.) */
    int kind = f->layouts[layout].kind;
    /* A constant is born in any distributed layout (the zero accumulator of a matmul in its #mma
     * layout, instead of a whole tile's round trip through shared memory per program). */
    const IrOp *vdef = f->values[v].def;
    bool constant = vdef && (vdef->code == OP_CONST || vdef->code == OP_UNDEF) &&
                    kind != LAYOUT_DOT_OPERAND && kind != LAYOUT_SHARED;
    if ((constant || kind == LAYOUT_BLOCKED || kind == LAYOUT_SLICE || kind == LAYOUT_MMA) &&
        can_remat(f, v, 8)) {
        ValueId copy = remat(c, v, layout);
        if (copy) {
            ConvertEntry e = {.from = v, .layout = layout, .to = copy, .where = home};
            ARENA_PUSH(f->arena, c->converts, c->nconverts, c->converts_cap, e);
            return copy;
        }
    }
    if (in_branch) {
        home = where;
        pos = wpos;
    }
    if (f->values[v].def)
        loc = f->values[v].def->loc;
    Type t = ir_type(f, v);
    IrBuilder b = {.func = f, .region = home, .pos = pos};
    IrOp *cv = ir_build(&b, OP_CONVERT_LAYOUT, loc, &v, 1, &t, 1, 0);
    ValueId out = cv->results[0];
    f->values[out].layout = layout;
    f->values[out].axis = f->values[v].axis;
    f->values[out].name = f->values[v].name;
    ConvertEntry e = {.from = v, .layout = layout, .to = out, .where = home};
    ARENA_PUSH(f->arena, c->converts, c->nconverts, c->converts_cap, e);
    return out;
}

static ValueId convert_to(LayCtx *c, ValueId v, int layout, SrcLoc loc)
{
    return convert_for(c, v, layout, loc, NULL);
}

static void convert_operand(LayCtx *c, IrOp *op, int j, int layout)
{
    if (j < op->noperands)
        op->operands[j] = convert_for(c, op->operands[j], layout, op->loc, op);
}

static int layout_of(const LayCtx *c, ValueId v) { return v > 0 ? c->f->values[v].layout : 0; }

static void assign_region(LayCtx *c, IrRegion *r);

/* Loop-carried values: the init's layout (or what the body wants), the same on entry, on every
 * yield and on exit. */
static int carried_layout(LayCtx *c, ValueId arg, ValueId init)
{
    if (ir_type(c->f, arg).rank == 0)
        return 0;
    int l = want_of(c, arg);
    if (!l)
        l = layout_of(c, init);
    if (!l)
        l = layout_default(c, ir_type(c->f, arg));
    return l;
}

static void assign_for(LayCtx *c, IrOp *op)
{
    IrRegion *body = &op->regions[0];
    int niters = op->noperands - 3;
    int lay[64] = {0};
    for (int k = 0; k < niters && k < 64 && 1 + k < body->nargs; k++) {
        lay[k] = carried_layout(c, body->args[1 + k], op->operands[3 + k]);
        convert_operand(c, op, 3 + k, lay[k]);
        set_layout(c, body->args[1 + k], lay[k]);
        if (k < op->nresults)
            set_layout(c, op->results[k], lay[k]);
    }
    assign_region(c, body);
    IrOp *y = region_terminator(body);
    if (y && y->code == OP_YIELD)
        for (int k = 0; k < y->noperands && k < 64; k++)
            convert_operand(c, y, k, lay[k]);
}

static void assign_if(LayCtx *c, IrOp *op)
{
    for (int j = 0; j < op->nregions; j++)
        assign_region(c, &op->regions[j]);
    for (int k = 0; k < op->nresults; k++) {
        ValueId res = op->results[k];
        if (ir_type(c->f, res).rank == 0)
            continue;
        int l = want_of(c, res);
        for (int j = 0; j < op->nregions && !l; j++) {
            IrOp *y = region_terminator(&op->regions[j]);
            if (y && y->code == OP_YIELD && k < y->noperands)
                l = layout_of(c, y->operands[k]);
        }
        if (!l)
            l = layout_default(c, ir_type(c->f, res));
        set_layout(c, res, l);
        for (int j = 0; j < op->nregions; j++) {
            IrOp *y = region_terminator(&op->regions[j]);
            if (y && y->code == OP_YIELD)
                convert_operand(c, y, k, l);
        }
    }
}

static void assign_while(LayCtx *c, IrOp *op)
{
    IrRegion *r0 = &op->regions[0], *r1 = &op->regions[1];
    int in_lay[64] = {0}, out_lay[64] = {0};
    for (int k = 0; k < op->noperands && k < 64 && k < r0->nargs; k++) {
        in_lay[k] = carried_layout(c, r0->args[k], op->operands[k]);
        convert_operand(c, op, k, in_lay[k]);
        set_layout(c, r0->args[k], in_lay[k]);
    }
    assign_region(c, r0);
    IrOp *cond = region_terminator(r0);
    for (int k = 0; k < op->nresults && k < 64; k++) {
        ValueId passed = cond && cond->code == OP_CONDITION && 1 + k < cond->noperands
                             ? cond->operands[1 + k]
                             : 0;
        out_lay[k] = passed ? carried_layout(c, op->results[k], passed) : 0;
        if (passed)
            convert_operand(c, cond, 1 + k, out_lay[k]);
        set_layout(c, op->results[k], out_lay[k]);
        if (k < r1->nargs)
            set_layout(c, r1->args[k], out_lay[k]);
    }
    assign_region(c, r1);
    IrOp *y = region_terminator(r1);
    if (y && y->code == OP_YIELD)
        for (int k = 0; k < y->noperands && k < 64; k++)
            convert_operand(c, y, k, in_lay[k]);
}

/* The layout for a result no rule fixes: its want, else the given fallback, else the default. */
static int free_layout(LayCtx *c, ValueId res, int fallback)
{
    int l = want_of(c, res);
    if (!l)
        l = fallback;
    if (!l)
        l = layout_default(c, ir_type(c->f, res));
    return l;
}

/* join: both operands in one blocked layout A (the result's want split back, else a's layout,
 * else b's, else the default) and the result in layout_join_of(A), so codegen only relabels. */
static void assign_join(LayCtx *c, IrOp *op)
{
    IrFunc *f = c->f;
    ValueId res = op->results[0];
    int w = want_of(c, res), a = 0;
    if (layout_holds_pair(f, w, ir_type(f, res).rank))
        a = layout_split_of(c, w);
    for (int j = 0; j < 2 && !a; j++) {
        int l = layout_of(c, op->operands[j]);
        if (l && f->layouts[l].kind == LAYOUT_BLOCKED)
            a = l;
    }
    if (!a)
        a = layout_default(c, ir_type(f, op->operands[0]));
    convert_operand(c, op, 0, a);
    convert_operand(c, op, 1, a);
    set_layout(c, res, layout_join_of(c, a));
}

/* split: the operand in a layout holding the pair in each thread (as it is, else converted to
 * layout_join_of of the result's want or default layout); the result in that layout without its
 * last dim. */
static void assign_split(LayCtx *c, IrOp *op)
{
    IrFunc *f = c->f;
    ValueId res = op->results[0];
    int src = layout_of(c, op->operands[0]);
    if (!layout_holds_pair(f, src, ir_type(f, op->operands[0]).rank)) {
        int r = want_of(c, res);
        if (!r || f->layouts[r].kind != LAYOUT_BLOCKED)
            r = layout_default(c, ir_type(f, res));
        src = layout_join_of(c, r);
        convert_operand(c, op, 0, src);
    }
    set_layout(c, res, layout_split_of(c, src));
}

/* subtile: the block stays in the tile's registers where the layout repeats at its offsets (an
 * accumulator's half: ir/layout.c layout_subtile_keeps), else it goes through scratch into the
 * layout its users want. */
static void assign_subtile(LayCtx *c, IrOp *op)
{
    IrFunc *f = c->f;
    ValueId res = op->results[0];
    int src = layout_of(c, op->operands[0]);
    if (!src) {
        src = layout_default(c, ir_type(f, op->operands[0]));
        convert_operand(c, op, 0, src);
    }
    bool keeps =
        layout_subtile_keeps(f, src, ir_type(f, op->operands[0]), ir_type(f, res), op->attr);
    set_layout(c, res, keeps ? src : free_layout(c, res, 0));
}

static void assign_op(LayCtx *c, IrOp *op)
{
    IrFunc *f = c->f;
    switch (op->code) {
    case OP_FOR: assign_for(c, op); return;
    case OP_IF: assign_if(c, op); return;
    case OP_WHILE:
        if (op->nregions == 2)
            assign_while(c, op);
        return;
    case OP_YIELD:
    case OP_CONDITION: return; /* their parents convert their operands */
    default: break;
    }
    for (int k = 0; k < op->nregions; k++)
        assign_region(c, &op->regions[k]);
    ValueId res = op->nresults ? op->results[0] : 0;
    bool block_res = res && ir_type(f, res).rank > 0;
    switch (op->code) {
    case OP_LOAD:
    case OP_STORE:
    case OP_ATOMIC_RMW: /* each thread does its own elements' atomics, as it loads them */
    case OP_ATOMIC_CAS: {
        int l = layout_anchor(c, op);
        if (!l)
            return; /* scalar access */
        for (int j = 0; j < op->noperands; j++)
            convert_operand(c, op, j, l);
        if (block_res)
            set_layout(c, res, l);
        return;
    }
    case OP_DOT: {
        int acc = layout_dot_acc(c, op);
        /* k_width: consecutive k elements per thread in one register, 32 bits' worth for mma
         * (Triton's kWidth: 2 for fp16/bf16); 0 for FMA. */
        int k_width = f->layouts[acc].kind == LAYOUT_MMA
                          ? 4 / dtype_bytes(ir_type(f, op->operands[0]).dtype)
                          : 0;
        convert_operand(c, op, 0, layout_dot_operand(c, 0, acc, k_width));
        convert_operand(c, op, 1, layout_dot_operand(c, 1, acc, k_width));
        convert_operand(c, op, 2, acc);
        set_layout(c, res, acc);
        return;
    }
    case OP_EXPAND_DIMS: {
        if (!block_res)
            return;
        int axis = (int)op->attr[0];
        int src = layout_of(c, op->operands[0]);
        const Layout *sl = &f->layouts[src];
        int l;
        if (src && sl->kind == LAYOUT_SLICE && sl->slice.dim == axis) {
            l = sl->slice.parent;
        } else {
            l = free_layout(c, res, 0);
            convert_operand(c, op, 0, layout_slice(c, axis, l));
        }
        set_layout(c, res, l);
        return;
    }
    case OP_SCAN: {
        /* The scan goes through shared memory in codegen: any layout works; keep the operand's. */
        int src = layout_of(c, op->operands[0]);
        if (!src) {
            src = layout_default(c, ir_type(f, op->operands[0]));
            convert_operand(c, op, 0, src);
        }
        if (block_res)
            set_layout(c, res, src);
        return;
    }
    case OP_REDUCE_SUM:
    case OP_REDUCE_MAX:
    case OP_REDUCE_MIN:
    case OP_ARGMAX:
    case OP_ARGMIN: {
        int src = layout_of(c, op->operands[0]);
        if (!src) {
            src = layout_default(c, ir_type(f, op->operands[0]));
            convert_operand(c, op, 0, src);
        }
        if (block_res)
            set_layout(c, res, layout_slice(c, (int)op->attr[0], src));
        return;
    }
    case OP_TRANS: {
        if (!block_res)
            return;
        int src = layout_of(c, op->operands[0]);
        if (!src || f->layouts[src].kind != LAYOUT_BLOCKED) {
            src = layout_default(c, ir_type(f, op->operands[0]));
            convert_operand(c, op, 0, src);
        }
        set_layout(c, res, layout_permute(c, src, op->attr, ir_type(f, res).rank, false));
        return;
    }
    case OP_JOIN: assign_join(c, op); return;
    case OP_SPLIT: assign_split(c, op); return;
    case OP_SUBTILE: assign_subtile(c, op); return;
    case OP_RESHAPE:
    case OP_CONVERT_LAYOUT:
        if (block_res && reshape_merges_pair(f, op) &&
            layout_holds_pair(f, layout_of(c, op->operands[0]), ir_type(f, op->operands[0]).rank)) {
            /* interleave's reshape of pairs held in-thread: a relabel (Triton infers the
             * reshape's encoding the same way). */
            Layout m;
            merged_pair_layout(&f->layouts[layout_of(c, op->operands[0])], &m);
            set_layout(c, res, ir_layout_intern(f, &m));
            return;
        }
        /* Both move data through scratch in codegen; the operand keeps its layout. */
        if (block_res)
            set_layout(
                c, res,
                free_layout(c, res,
                            op->code == OP_CONVERT_LAYOUT ? layout_of(c, op->operands[0]) : 0));
        return;
    case OP_ASSERT: return;
    case OP_PARTIAL_STORE:
    case OP_PARTIAL_ADD: {
        int l = partial_layout(c);
        convert_operand(c, op, 2, l);
        if (block_res)
            set_layout(c, res, l);
        return;
    }
    default: break;
    }
    if (!block_res)
        return;
    if (op_has(op->code, OPT_ELEMENTWISE) || op->code == OP_BROADCAST ||
        op->code == OP_MULTIPLE_OF || op->code == OP_MAX_CONTIGUOUS) {
        int first = 0;
        for (int j = 0; j < op->noperands && !first; j++)
            if (ir_type(f, op->operands[j]).rank > 0)
                first = layout_of(c, op->operands[j]);
        int l = free_layout(c, res, first);
        for (int j = 0; j < op->noperands; j++)
            convert_operand(c, op, j, l);
        set_layout(c, res, l);
        return;
    }
    /* const, make_range, splat and anything else that makes a block from scalars. */
    for (int i = 0; i < op->nresults; i++)
        if (ir_type(f, op->results[i]).rank > 0)
            set_layout(c, op->results[i], free_layout(c, op->results[i], 0));
}

static void assign_region(LayCtx *c, IrRegion *r)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        assign_op(c, op);
        i = ir_region_index(r, op); /* converts may have been inserted before it */
    }
}

/* Uses of v anywhere in r (nested regions too); *user is the last user seen. */
static int count_uses(IrRegion *r, ValueId v, IrOp **user)
{
    int n = 0;
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->noperands; k++)
            if (op->operands[k] == v) {
                n++;
                *user = op;
            }
        for (int k = 0; k < op->nregions; k++)
            n += count_uses(&op->regions[k], v, user);
    }
    return n;
}

/* o in layout `layout` for an op u being moved into it, cheaply: a convert's operand where that
 * is in `layout` already (two converts from one layout meeting at u: attention's m_i +
 * log2(l_i) before its store, one convert of the sum instead of one of each), a constant or
 * splat copied, a broadcast of a small value rebuilt from that value converted (the bias row of
 * a matmul epilogue: 1 x N converted, not M x N); 0 when o has no cheap form there. New ops go
 * right before u in r. */
static ValueId operand_in(LayCtx *c, IrRegion *r, const IrOp *u, ValueId o, int layout)
{
    IrFunc *f = c->f;
    if (f->values[o].layout == layout || ir_type(f, o).rank == 0)
        return o;
    IrOp *def = f->values[o].def;
    if (!def || def->nregions)
        return 0;
    if (def->code == OP_CONVERT_LAYOUT && f->values[def->operands[0]].layout == layout)
        return def->operands[0];
    Type t = ir_type(f, o);
    ValueId out = 0;
    if (def->code == OP_CONST || def->code == OP_UNDEF ||
        (def->code == OP_SPLAT && ir_type(f, def->operands[0]).rank == 0)) {
        IrBuilder b = {.func = f, .region = r, .pos = ir_region_index(r, u)};
        IrOp *copy = ir_build(&b, def->code, def->loc, def->operands, def->noperands, &t, 1, 0);
        memcpy(copy->attr, def->attr, sizeof copy->attr);
        copy->fattr = def->fattr;
        out = copy->results[0];
    } else if (def->code == OP_BROADCAST && ir_type(f, def->operands[0]).rank == t.rank &&
               type_numel(ir_type(f, def->operands[0])) * 8 <= type_numel(t)) {
        ValueId small = convert_to(c, def->operands[0], layout, def->loc); /* may insert before u */
        IrBuilder b = {.func = f, .region = r, .pos = ir_region_index(r, u)};
        out = ir_build_unary(&b, OP_BROADCAST, def->loc, t, small);
    } else {
        return 0;
    }
    f->values[out].layout = layout;
    f->values[out].axis = f->values[o].axis;
    return out;
}

/* A convert whose only use is an elementwise op (a cast to a narrower or same-size dtype, or
 * arithmetic whose other operands have a cheap form in the convert's source layout) moves below
 * that op, again and again: the matmul epilogue (bias add, activation, cast to the output dtype)
 * then runs in the accumulator's #mma layout and a single convert, of the narrow result, goes
 * through shared memory just before the store (Triton's RemoveLayoutConversions does the same).
 * Returns whether anything moved. */
static bool sink_converts(LayCtx *c, IrRegion *r)
{
    IrFunc *f = c->f;
    bool moved = false;
    for (int i = 0; i < r->nops; i++) {
        IrOp *cv = r->ops[i];
        int at = i;
        bool sunk = false;
        for (int k = 0; k < cv->nregions; k++)
            moved |= sink_converts(c, &cv->regions[k]);
        while (cv->code == OP_CONVERT_LAYOUT && cv->nresults == 1) {
            ValueId y = cv->results[0], x = cv->operands[0];
            int from = f->values[x].layout, to = f->values[y].layout;
            IrOp *u = NULL;
            if (from <= 0 || count_uses(&f->body, y, &u) != 1 || ir_region_index(r, u) < 0 ||
                u->nresults != 1 || u->nregions || !op_has(u->code, OPT_ELEMENTWISE) ||
                u->code == OP_ADDPTR)
                break;
            Type ty = ir_type(f, y), tu = ir_type(f, u->results[0]);
            if (tu.is_ptr || ty.is_ptr || dtype_bytes(tu.dtype) > dtype_bytes(ty.dtype) ||
                !type_same_shape(tu, ty) || f->values[u->results[0]].layout != to)
                break;
            /* u's operands in the source layout */
            ValueId ops[3];
            bool ok = u->noperands <= 3;
            for (int k = 0; ok && k < u->noperands; k++) {
                ops[k] = u->operands[k] == y ? x : operand_in(c, r, u, u->operands[k], from);
                ok = ops[k] != 0;
            }
            if (!ok)
                break;
            IrBuilder b = {.func = f, .region = r, .pos = ir_region_index(r, u)};
            IrOp *nu = ir_build(&b, u->code, u->loc, ops, u->noperands, &tu, 1, 0);
            memcpy(nu->attr, u->attr, sizeof nu->attr);
            nu->fattr = u->fattr;
            /* the same values in another layout: u's axis facts hold for both (a mask's
             * constancy there decides its load's vector width) */
            f->values[nu->results[0]].layout = from;
            f->values[nu->results[0]].name = f->values[u->results[0]].name;
            f->values[nu->results[0]].axis = f->values[u->results[0]].axis;
            ValueId nx = nu->results[0];
            IrOp *ncv = ir_build(&b, OP_CONVERT_LAYOUT, cv->loc, &nx, 1, &tu, 1, 0);
            f->values[ncv->results[0]].layout = to;
            f->values[ncv->results[0]].name = f->values[u->results[0]].name;
            f->values[ncv->results[0]].axis = f->values[u->results[0]].axis;
            ir_replace_all_uses(f, u->results[0], ncv->results[0]);
            ir_region_remove(r, ir_region_index(r, u));
            ir_region_remove(r, ir_region_index(r, cv));
            moved = sunk = true;
            cv = ncv;
        }
        if (sunk)
            i = at - 1; /* cv went below u: the ops that followed it moved up, not yet seen */
    }
    return moved;
}

/* A convert whose operand is a convert from the layout it converts to (x to L and back: the
 * wants of a store and of a broadcast met at an expand_dims, attention's l_i[:, None] in its
 * epilogue) reads x itself: the round trip through shared memory, its scratch and four barriers
 * go (dce). Returns whether any did. */
static bool fold_round_trips(IrFunc *f, IrRegion *r)
{
    bool folded = false;
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            folded |= fold_round_trips(f, &op->regions[k]);
        if (op->code != OP_CONVERT_LAYOUT || op->nresults != 1)
            continue;
        const IrOp *inner = f->values[op->operands[0]].def;
        if (!inner || inner->code != OP_CONVERT_LAYOUT)
            continue;
        ValueId x = inner->operands[0];
        if (f->values[x].layout > 0 && f->values[x].layout == f->values[op->results[0]].layout) {
            ir_replace_all_uses(f, op->results[0], x);
            folded = true;
        }
    }
    return folded;
}

/* ---- rows aligned with an accumulator's warps ------------------------------------------------ */

/* Blocked layout `blocked` with more of dim 0 per thread, so that each warp holds the rows the
 * #mma layout `acc` (or its dot operand) gives it: spt[0] the smallest power of two that makes the
 * two layouts put every element in the same warp, the other dims' vector and order kept (a row's
 * accesses stay as wide and as coalesced). 0 when none does. */
static int rows_of_accumulator_warps(LayCtx *c, int blocked, int acc, Type t)
{
    IrFunc *f = c->f;
    const Layout *b = &f->layouts[blocked];
    if (b->kind != LAYOUT_BLOCKED || t.rank != 2 || t.is_ptr)
        return 0;
    for (int spt0 = b->blocked.size_per_thread[0] * 2; spt0 <= t.shape[0]; spt0 *= 2) {
        int spt[2] = {spt0, b->blocked.size_per_thread[1]},
            order[2] = {b->blocked.order[0], b->blocked.order[1]};
        Layout l;
        layout_blocked_build(&l, 2, t.shape, spt, order, c->num_warps);
        int id = ir_layout_intern(f, &l);
        if (layout_copy_stays_in_warps(f, id, acc, t))
            return id;
    }
    return 0;
}

/* Is layout l an #mma, or a dot operand of one? */
static bool is_accumulator_side(const IrFunc *f, int l)
{
    if (l <= 0 || l >= f->nlayouts)
        return false;
    const Layout *x = &f->layouts[l];
    if (x->kind == LAYOUT_DOT_OPERAND)
        return x->dot_operand.parent > 0 && f->layouts[x->dot_operand.parent].kind == LAYOUT_MMA;
    return x->kind == LAYOUT_MMA;
}

/* The block operands of mem_op but operand `skip` (a load's pointer, mask and other; a store's
 * pointer and mask) rebuilt in `layout` (can_remat: cheap index arithmetic); false, and nothing
 * changed, when one of them is not cheap to rebuild. */
static bool relayout_operands(LayCtx *c, IrOp *mem_op, int skip, int layout)
{
    IrFunc *f = c->f;
    for (int j = 0; j < mem_op->noperands; j++) {
        ValueId o = mem_op->operands[j];
        if (j != skip && o > 0 && ir_type(f, o).rank > 0 && !can_remat(f, o, 8))
            return false;
    }
    for (int j = 0; j < mem_op->noperands; j++)
        if (j != skip && mem_op->operands[j] > 0 && ir_type(f, mem_op->operands[j]).rank > 0)
            mem_op->operands[j] = convert_to(c, mem_op->operands[j], layout, mem_op->loc);
    return true;
}

/* A load whose only use is a convert to an #mma's dot operand, or a store of a convert from an
 * #mma, gets a blocked layout whose warps hold the rows the #mma gives them (attention's q before
 * its dot, its output after the last): the convert then moves data only inside warps, so
 * shared_alloc can make its copy warp-private (no block barriers tying the warpgroups together).
 * The access's pointers (and mask) are rebuilt in the new layout. A load in the same loop body as
 * the dot stays: the pipeline turns those into copies to shared memory. `stores` picks the
 * stores (and the small stores of an accumulator's row statistics, below), else the loads.
 * Returns whether anything changed. */
static bool align_rows_to_accumulator(LayCtx *c, IrRegion *r, bool stores)
{
    IrFunc *f = c->f;
    bool changed = false;
    for (int i = 0; i < r->nops; i++) {
        IrOp *cv = r->ops[i];
        for (int k = 0; k < cv->nregions; k++)
            changed |= align_rows_to_accumulator(c, &cv->regions[k], stores);
        if (cv->code != OP_CONVERT_LAYOUT || cv->nresults != 1)
            continue;
        ValueId x = cv->operands[0], y = cv->results[0];
        Type t = ir_type(f, x);
        int from = f->values[x].layout, to = f->values[y].layout;
        IrOp *def = f->values[x].def, *user = NULL;
        if (!stores && def && def->code == OP_LOAD && is_accumulator_side(f, to) &&
            count_uses(&f->body, x, &user) == 1 && ir_region_index(r, def) >= 0) {
            IrOp *dot_user = NULL;
            count_uses(&f->body, y, &dot_user);
            if (!dot_user || (in_loop(f, def) && ir_region_index(r, dot_user) >= 0))
                continue; /* the pipeline's load */
            int l = rows_of_accumulator_warps(c, from, to, t);
            if (!l || !relayout_operands(c, def, -1, l))
                continue;
            f->values[x].layout = l;
            changed = true;
        } else if (stores && from > 0 && f->layouts[from].kind == LAYOUT_SLICE &&
                   is_accumulator_side(f, f->layouts[from].slice.parent) &&
                   type_numel(t) <= 32 * (int64_t)c->num_warps &&
                   count_uses(&f->body, y, &user) == 1 && user->code == OP_STORE &&
                   user->noperands >= 2 && user->operands[1] == y) {
            /* a row of an accumulator's statistics (attention's m_i): at most an element a
             * thread, stored from where it is (no coalescing to win) rather than copied through
             * shared memory between two block barriers */
            if (!relayout_operands(c, user, 1, from))
                continue;
            user->operands[1] = x;
            changed = true;
        } else if (stores && is_accumulator_side(f, from) && count_uses(&f->body, y, &user) == 1 &&
                   user->code == OP_STORE && user->noperands >= 2 && user->operands[1] == y) {
            int l = rows_of_accumulator_warps(c, to, from, t);
            if (!l || !relayout_operands(c, user, 1, l))
                continue;
            f->values[y].layout = l;
            changed = true;
        }
        i = ir_region_index(r, cv);
    }
    return changed;
}

static void clear_layouts(IrFunc *f)
{
    for (ValueId v = 1; v < f->nvalues; v++)
        f->values[v].layout = 0;
}

/* Whether op is one only the passes that schedule the memory pipeline make (IR read back from
 * text after the pipeline ran); a barrier is not, tl.debug_barrier makes one. */
static bool pipeline_op(const IrOp *op, const void *ctx)
{
    (void)ctx;
    return op_has(op->code, OPT_SCHEDULED);
}

/* --remarks: each global load or store whose mask holds it to narrower accesses than its
 * pointers allow. The mask is then constant over fewer elements than the pointers are contiguous:
 * a bound of unknown divisibility (`cols < N` with N an `i32`, where Triton's launcher would have
 * specialized an N divisible by 16) splits every vector. */
static void remark_mask_widths(const IrFunc *f, const IrRegion *r, Diag *d)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            remark_mask_widths(f, &op->regions[k], d);
        if (op->code != OP_LOAD && op->code != OP_STORE)
            continue;
        int masked = axis_vector_width(f, op), pointers = axis_vector_width_unmasked(f, op);
        if (masked >= pointers)
            continue;
        int eb = dtype_bytes(ir_type(f, op->operands[0]).dtype);
        diag_remark(d, op->loc,
                    "this %s moves %d byte%s an access where its pointers allow %d: its mask is "
                    "constant over only %d element%s (a bound it compares with that is divisible "
                    "by 16, `i32:16` in the signature, would let it take %d)",
                    op_name(op->code), masked * eb, masked * eb == 1 ? "" : "s", pointers * eb,
                    masked, masked == 1 ? "" : "s", pointers);
    }
}

bool pass_layouts(IrFunc *f, const PassOptions *o, Diag *d)
{
    /* IR that already holds the memory pipeline (a .tir printed after the pipeline pass) keeps
     * its layouts: the schedule was built on them (wgmma's #mma v3, local_load's operand
     * layouts), and deciding them again would undo it. Such a file must carry every layout. */
    if (ir_region_find_if(&f->body, pipeline_op, NULL))
        return true;
    LayCtx c = {.f = f, .o = o, .diag = d, .partial = -1};
    c.num_warps = f->num_warps > 0 ? f->num_warps : (o && o->num_warps > 0 ? o->num_warps : 4);
    if (c.num_warps > 32 || (c.num_warps & (c.num_warps - 1)) != 0) {
        diag_plain_error(d, "num_warps must be a power of two from 1 to 32, not %d", c.num_warps);
        return false;
    }
    clear_layouts(f);
    c.nwant = f->nvalues;
    c.want = arena_alloc(f->arena, sizeof *c.want * (size_t)(c.nwant + 1));
    want_anchors(&c, &f->body);
    /* To a fixed point (each want is set once, so it ends): a loop's body can want a layout for a
     * value its init feeds. First without, then with what the code after loops wants. */
    for (int exits = 0; exits < 2; exits++) {
        for (int round = 0; round <= f->nvalues; round++) {
            c.changed = false;
            want_region(&c, &f->body, exits);
            if (!c.changed)
                break;
        }
    }
    assign_region(&c, &f->body);
    /* Anything no rule reached (a block region arg of an op we do not know, say). */
    for (ValueId v = 1; v < f->nvalues; v++)
        if (f->values[v].type.rank > 0 && f->values[v].layout == 0)
            f->values[v].layout = layout_default(&c, f->values[v].type);
    /* the operands the moved ops no longer read (the old broadcast of the bias, say) */
    bool sunk = sink_converts(&c, &f->body);
    bool folded = fold_round_trips(f, &f->body);
    /* Stores follow only where a load did: a dot taking its A from registers loaded outside its
     * loop (attention's q) leaves each warpgroup on its own rows, and there the copies' block
     * barriers are what ties the warpgroups together. A matmul's warps meet at every K step's
     * shared slots anyway; its epilogue keeps its swizzled, block-synchronized copy (measured
     * no better aligned; docs/performance.md). */
    if (align_rows_to_accumulator(&c, &f->body, false)) {
        align_rows_to_accumulator(&c, &f->body, true);
        folded = true;
    }
    if ((folded || sunk) && !pass_dce(f, o, d))
        return false;
    if (o && o->remarks)
        remark_mask_widths(f, &f->body, d);
    return true;
}
