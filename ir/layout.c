/* layout.c: the layout algebra. Layouts are attributes of the IR (IrValue.layout, Layout), and
 * the rules that read them -- how wide a memory access may be, which layout conversions only
 * relabel registers, where each element of a tile sits in shared memory -- belong to the IR too.
 * The passes decide with these functions (passes/layouts.c picks layouts, passes/swizzle.c
 * #shared layouts, passes/shared_alloc.c each op's scratch, written in its scratch record);
 * codegen reads the decisions off the IR and uses only the arithmetic here that turns a layout
 * into addresses (shared_swizzled_offset, shared_slot_bytes, axis_vector_width, the relabel
 * tests), so the two cannot disagree. docs/layouts.md describes the rules. */
#include "ir/ir.h"

#include <string.h>

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* ---- the vector width of a memory access ----------------------------------------------------- */

static int64_t pow2_floor(int64_t x)
{
    int64_t p = 1;
    while (p * 2 <= x)
        p *= 2;
    return p;
}

/* axis_vector_width, the mask's constancy counted or not */
static int vector_width(const IrFunc *f, const IrOp *op, bool with_mask)
{
    /* the pointer operand: 0 of load and store, 1 of async_copy (operand 0 is the view) */
    int ptr_index = op->code == OP_ASYNC_COPY ? 1 : 0;
    if ((op->code != OP_LOAD && op->code != OP_STORE && op->code != OP_ASYNC_COPY &&
         op->code != OP_PREFETCH) ||
        op->noperands <= ptr_index)
        return 1;
    ValueId ptr = op->operands[ptr_index];
    Type t = ir_type(f, ptr);
    const IrValue *pv = ir_value(f, ptr);
    if (t.rank == 0 || !pv->axis || pv->layout <= 0 || pv->layout >= f->nlayouts)
        return 1;
    const Layout *l = &f->layouts[pv->layout];
    if (l->kind != LAYOUT_BLOCKED)
        return 1;
    int d0 = l->blocked.order[0];
    int64_t eb = dtype_bytes(t.dtype);
    int64_t w = l->blocked.size_per_thread[d0];
    w = min64(w, pv->axis->contiguity[d0]);
    w = min64(w, max64(1, pv->axis->divisibility[d0] / eb));
    w = min64(w, max64(1, 16 / eb));
    int mask_index = op->code == OP_LOAD ? 1 : 2; /* store and async_copy: 2 */
    if (with_mask && op->code != OP_PREFETCH && op->noperands > mask_index &&
        op->operands[mask_index] > 0) {
        const IrValue *mv = ir_value(f, op->operands[mask_index]);
        w = mv->axis && mv->type.rank == t.rank ? min64(w, mv->axis->constancy[d0]) : 1;
    }
    return (int)pow2_floor(w < 1 ? 1 : w);
}

int axis_vector_width(const IrFunc *f, const IrOp *op) { return vector_width(f, op, true); }

int axis_vector_width_unmasked(const IrFunc *f, const IrOp *op)
{
    return vector_width(f, op, false);
}

/* ---- register relabels ----------------------------------------------------------------------- */

bool layout_holds_pair(const IrFunc *f, int l, int rank)
{
    if (l <= 0 || l >= f->nlayouts || rank < 1)
        return false;
    const Layout *L = &f->layouts[l];
    int d = rank - 1;
    return L->kind == LAYOUT_BLOCKED && L->rank == rank && L->blocked.size_per_thread[d] >= 2 &&
           L->blocked.threads_per_warp[d] == 1 && L->blocked.warps_per_cta[d] == 1;
}

bool reshape_merges_pair(const IrFunc *f, const IrOp *op)
{
    if (op->code != OP_RESHAPE)
        return false;
    Type a = ir_type(f, op->operands[0]), r = ir_type(f, op->results[0]);
    if (a.rank < 2 || r.rank != a.rank - 1 || a.shape[a.rank - 1] != 2)
        return false;
    for (int i = 0; i + 1 < r.rank; i++)
        if (r.shape[i] != a.shape[i])
            return false;
    return r.shape[r.rank - 1] == 2 * a.shape[a.rank - 2];
}

void merged_pair_layout(const Layout *src, Layout *out)
{
    int d = src->rank - 1;
    *out = *src;
    out->rank = d;
    out->blocked.size_per_thread[d - 1] *= 2;
    out->blocked.size_per_thread[d] = out->blocked.threads_per_warp[d] = 0;
    out->blocked.warps_per_cta[d] = 0;
    for (int k = 0, j = 0; k < src->rank; k++)
        if (src->blocked.order[k] != d)
            out->blocked.order[j++] = src->blocked.order[k];
    out->blocked.order[d] = 0;
}

bool layout_reshape_is_relabel(const IrFunc *f, const IrOp *op)
{
    if (!reshape_merges_pair(f, op))
        return false;
    int la = f->values[op->operands[0]].layout, lr = f->values[op->results[0]].layout;
    if (!layout_holds_pair(f, la, ir_type(f, op->operands[0]).rank) || lr <= 0 || lr >= f->nlayouts)
        return false;
    Layout m;
    merged_pair_layout(&f->layouts[la], &m);
    const Layout *r = &f->layouts[lr];
    if (r->kind != LAYOUT_BLOCKED || r->rank != m.rank)
        return false;
    for (int i = 0; i < m.rank; i++)
        if (r->blocked.size_per_thread[i] != m.blocked.size_per_thread[i] ||
            r->blocked.threads_per_warp[i] != m.blocked.threads_per_warp[i] ||
            r->blocked.warps_per_cta[i] != m.blocked.warps_per_cta[i] ||
            r->blocked.order[i] != m.blocked.order[i])
            return false;
    return true;
}

bool layout_subtile_keeps(const IrFunc *f, int l, Type tile, Type block, const int64_t *offsets)
{
    if (l <= 0 || l >= f->nlayouts || tile.rank != block.rank || tile.rank == 0)
        return false;
    const Layout *L = &f->layouts[l];
    int64_t period[TRIC_MAX_RANK];
    if (L->kind == LAYOUT_MMA) {
        /* codegen/distribution.c dist_mma's pattern: v2, or v3 with warps [W, 1] */
        if (tile.rank != 2 || L->rank != 2 ||
            (L->mma.version != 2 && (L->mma.version != 3 || L->mma.warps_per_cta[1] != 1)))
            return false;
        period[0] = 16 * L->mma.warps_per_cta[0];
        period[1] = 8 * L->mma.warps_per_cta[1];
    } else if (L->kind == LAYOUT_BLOCKED && L->rank == tile.rank) {
        for (int d = 0; d < tile.rank; d++)
            period[d] = (int64_t)L->blocked.size_per_thread[d] * L->blocked.threads_per_warp[d] *
                        L->blocked.warps_per_cta[d];
    } else {
        return false;
    }
    for (int d = 0; d < tile.rank; d++) {
        bool whole = offsets[d] == 0 && block.shape[d] == tile.shape[d];
        if (!whole && (period[d] <= 0 || block.shape[d] % period[d] || offsets[d] % period[d]))
            return false;
    }
    return true;
}

bool layout_subtile_is_relabel(const IrFunc *f, const IrOp *op)
{
    int la = f->values[op->operands[0]].layout, lr = f->values[op->results[0]].layout;
    return op->code == OP_SUBTILE && la == lr &&
           layout_subtile_keeps(f, la, ir_type(f, op->operands[0]), ir_type(f, op->results[0]),
                                op->attr);
}

/* Two #mma layouts whose threads hold the same elements of any tile: the fragment pattern
 * (codegen/distribution.c dist_mma) depends on the warps alone, not on the instruction shape, and
 * v3 with warps [W, 1] has v2's pattern. */
static bool mma_fragments_alike(const IrFunc *f, int a, int b)
{
    if (a <= 0 || b <= 0 || a >= f->nlayouts || b >= f->nlayouts)
        return false;
    const Layout *x = &f->layouts[a], *y = &f->layouts[b];
    return x->kind == LAYOUT_MMA && y->kind == LAYOUT_MMA &&
           (x->mma.version == 2 || x->mma.version == 3) &&
           (y->mma.version == 2 || y->mma.version == 3) &&
           x->mma.warps_per_cta[0] == y->mma.warps_per_cta[0] &&
           x->mma.warps_per_cta[1] == y->mma.warps_per_cta[1];
}

bool layout_convert_is_relabel(const IrFunc *f, int from, int to)
{
    if (from <= 0 || to <= 0 || from >= f->nlayouts || to >= f->nlayouts)
        return false;
    const Layout *a = &f->layouts[from], *d = &f->layouts[to];
    if (a->kind == LAYOUT_SLICE && d->kind == LAYOUT_SLICE)
        return a->slice.dim == d->slice.dim &&
               mma_fragments_alike(f, a->slice.parent, d->slice.parent);
    if (a->kind == LAYOUT_MMA && d->kind == LAYOUT_MMA)
        return mma_fragments_alike(f, from, to);
    if (a->kind != LAYOUT_MMA || d->kind != LAYOUT_DOT_OPERAND || d->dot_operand.op_idx != 0 ||
        d->dot_operand.k_width != 2)
        return false;
    return mma_fragments_alike(f, from, d->dot_operand.parent) && a->mma.warps_per_cta[1] == 1;
}

bool layout_holds(const IrFunc *f, int l, Type t)
{
    /* the root's extents: a 1 inserted for every sliced dim (codegen/distribution.c layout_root) */
    int32_t extent[TRIC_MAX_RANK + 8];
    int rank = t.rank;
    for (int i = 0; i < rank; i++)
        extent[i] = t.shape[i];
    while (l > 0 && l < f->nlayouts && f->layouts[l].kind == LAYOUT_SLICE &&
           rank < TRIC_MAX_RANK + 7) {
        int dim = f->layouts[l].slice.dim;
        if (dim > rank)
            return true; /* (malformed: the verifier's to say) */
        memmove(&extent[dim + 1], &extent[dim], sizeof *extent * (size_t)(rank - dim));
        extent[dim] = 1;
        rank++;
        l = f->layouts[l].slice.parent;
    }
    if (l <= 0 || l >= f->nlayouts || f->layouts[l].kind != LAYOUT_MMA || rank != 2)
        return true;
    const int tile[2] = {16 * f->layouts[l].mma.warps_per_cta[0],
                         8 * f->layouts[l].mma.warps_per_cta[1]};
    for (int k = 0; k < 2; k++)
        if (extent[k] != 1 && extent[k] % tile[k])
            return false;
    return true;
}

/* ---- shared-memory scratch ------------------------------------------------------------------- */

int shared_elem_bytes(Type t) { return t.is_ptr ? 8 : dtype_bytes(t.dtype); }

/* An mma dot's staging area: operand i (0 = A, 1 = B) at the strides of the convert_layout that
 * feeds it (shared_scratch_strides: padded rows), A first, B at A's bytes rounded up to 16. 0 for
 * an operand that no convert_layout feeds. */
bool shared_dot_staging_swizzle(const IrFunc *f, const IrOp *dot, Layout *la, Layout *lb)
{
    Layout *out[2] = {la, lb};
    for (int i = 0; i < 2; i++) {
        ValueId v = dot->operands[i];
        const IrOp *def = f->values[v].def;
        Type t = ir_type(f, v);
        if (!def || def->code != OP_CONVERT_LAYOUT || t.rank != 2 || dtype_bytes(t.dtype) != 2)
            return false;
        int order[TRIC_MAX_RANK];
        shared_scratch_order(f, def, 2, order);
        /* Both tiles contiguous along dim 1 (A's k, B's n), as the staging's ldmatrix reads. */
        if (order[0] != 1 || !shared_layout_for(out[i], t, 1))
            return false;
    }
    return true;
}

void shared_dot_staging(const IrFunc *f, const IrOp *dot, int64_t *a_bytes, int64_t *b_bytes)
{
    Layout la, lb;
    if (shared_dot_staging_swizzle(f, dot, &la, &lb)) {
        /* swizzled tiles: exactly their bytes */
        Type ta = ir_type(f, dot->operands[0]), tb = ir_type(f, dot->operands[1]);
        *a_bytes = (type_numel(ta) * 2 + 15) / 16 * 16;
        *b_bytes = (type_numel(tb) * 2 + 15) / 16 * 16;
        return;
    }
    int64_t *out[2] = {a_bytes, b_bytes};
    for (int i = 0; i < 2; i++) {
        *out[i] = 0;
        ValueId v = dot->operands[i];
        const IrOp *def = f->values[v].def;
        if (!def || def->code != OP_CONVERT_LAYOUT)
            continue;
        Type t = ir_type(f, v);
        int64_t st[TRIC_MAX_RANK], span = 1;
        shared_scratch_strides(f, def, st);
        for (int d = 0; d < t.rank; d++)
            span += (int64_t)(t.shape[d] - 1) * st[d];
        *out[i] = (span * shared_elem_bytes(t) + 15) / 16 * 16;
    }
}

/* The operand's blocked order first: its stores to shared memory are then contiguous per
 * thread. */
void shared_scratch_order(const IrFunc *f, const IrOp *op, int rank, int order[TRIC_MAX_RANK])
{
    for (int k = 0; k < rank; k++)
        order[k] = rank - 1 - k;
    int cands[2] = {f->values[op->operands[0]].layout, f->values[op->results[0]].layout};
    for (int i = 0; i < 2; i++) {
        int l = cands[i];
        if (l > 0 && l < f->nlayouts && f->layouts[l].kind == LAYOUT_BLOCKED &&
            f->layouts[l].rank == rank) {
            for (int k = 0; k < rank; k++)
                order[k] = f->layouts[l].blocked.order[k];
            return;
        }
    }
}

void shared_scratch_strides(const IrFunc *f, const IrOp *op, int64_t strides[TRIC_MAX_RANK])
{
    Type t = ir_type(f, op->operands[0]);
    int rank = t.rank;
    for (int d = 0; d < TRIC_MAX_RANK; d++)
        strides[d] = 0;
    if (rank == 0)
        return;
    if (op->code == OP_RESHAPE) { /* plain row-major: the reshape is a row-major relabeling */
        int64_t s = 1;
        for (int d = rank - 1; d >= 0; d--) {
            strides[d] = s;
            s *= t.shape[d];
        }
        return;
    }
    int order[TRIC_MAX_RANK];
    shared_scratch_order(f, op, rank, order);
    int eb = shared_elem_bytes(t);
    strides[order[0]] = 1;
    if (rank >= 2) {
        /* 16 bytes of padding per row: 16-byte vectors stay aligned and row x+1 starts 4 banks
         * after row x, so threads reading down a column hit different banks. */
        int64_t pad = 16 / eb > 0 ? 16 / eb : 1;
        strides[order[1]] = t.shape[order[0]] + pad;
        for (int k = 2; k < rank; k++)
            strides[order[k]] = strides[order[k - 1]] * t.shape[order[k - 1]];
    }
}

/* ---- swizzled tiles -------------------------------------------------------------------------- */

/* NVMMA's swizzled #shared layout (shared_layout_for; passes/swizzle.c says why it is the one every
 * tile kept in shared memory across ops gets) and the rules of the scratch that lives inside one
 * op in that layout: a convert_layout's tile (shared_scratch_swizzle), a non-pipelined wgmma's
 * staging (shared_wgmma_staging) and a reduction's cross-warp partials (shared_reduce_scratch). */

int64_t shared_slot_bytes(Type t, bool buffer)
{
    int64_t n = 1;
    for (int d = buffer ? 1 : 0; d < t.rank; d++)
        n *= t.shape[d];
    if (n == 1 && t.dtype == DT_I64)
        return 8; /* an mbarrier (passes/tma.c): 8-byte aligned, no swizzle period */
    return (n * dtype_bytes(t.dtype) + 1023) / 1024 * 1024;
}

bool shared_layout_for(Layout *l, Type tile, int contig)
{
    if (tile.rank != 2 || contig < 0 || contig > 1)
        return false;
    int eb = dtype_bytes(tile.dtype);
    int64_t bytes = (int64_t)tile.shape[contig] * eb;
    int sw = bytes % 128 == 0 ? 128 : bytes % 64 == 0 ? 64 : bytes % 32 == 0 ? 32 : 0;
    if (!sw || eb > 16)
        return false;
    *l = (Layout){.kind = LAYOUT_SHARED, .rank = 2};
    l->shared.swizzle = sw;
    l->shared.vec = 16 / eb;
    l->shared.per_phase = 128 / sw;
    l->shared.max_phase = sw / 16;
    l->shared.order[0] = contig;
    l->shared.order[1] = 1 - contig;
    return true;
}

bool shared_scratch_swizzle(const IrFunc *f, const IrOp *op, Layout *l)
{
    if (op->code != OP_CONVERT_LAYOUT)
        return false;
    Type t = ir_type(f, op->operands[0]);
    int lo = f->values[op->operands[0]].layout, lr = f->values[op->results[0]].layout;
    if (t.rank != 2 || t.is_ptr || t.dtype == DT_I1 || lo == lr)
        return false;
    if (lr > 0 && lr < f->nlayouts && f->layouts[lr].kind == LAYOUT_DOT_OPERAND)
        return false;
    /* a copy inside warps (layout_copy_stays_in_warps) keeps padded rows: every such copy then
     * lays rows out alike, so they can share scratch warp by warp (IrScratch.warp_private), and a
     * thread's consecutive rows sit at one base and immediate offsets, where a swizzle would give
     * each row its own address register */
    if (layout_copy_stays_in_warps(f, lo, lr, t))
        return false;
    int order[TRIC_MAX_RANK];
    shared_scratch_order(f, op, t.rank, order);
    if (!shared_layout_for(l, t, order[0]))
        return false;
    if (lo > 0 && lo < f->nlayouts && f->layouts[lo].kind == LAYOUT_MMA && order[0] == 1)
        shared_accumulator_swizzle(l, t);
    return true;
}

void shared_accumulator_swizzle(Layout *l, Type tile)
{
    /* An #mma accumulator's writer (v2 and v3 alike): a warp's 8-byte store puts lanes g = 0..7
     * (rows r + g) x t = 0..3 (columns 8j + 2t) of one n8 piece down; the hardware serves 8-byte
     * accesses by half-warps, rows g = 0..3. In 16-byte chunks XORed with the row, rows g and
     * g ^ 1 trade the piece's two chunks and collide in 4 of the 8 positions: two wavefronts per
     * half-warp (measured by ncu on seed 1's fp32 epilogue: 131072 excess store wavefronts, half
     * of them). In 32-byte units (the n8 piece) XORed with row % 4, four rows put the piece in
     * four distinct units of the 128-byte row: 32 distinct banks. Readers stay free of conflicts:
     * a 16-byte access never leaves its unit, and 8 lanes reading 128 bytes of one row get the
     * row's 4 units in some order. Only where the element is 4 bytes and the rows are whole
     * 128-byte atoms; 16-bit accumulators go with stmatrix, whose 16-byte rows the chunks fit. */
    int eb = dtype_bytes(tile.dtype);
    if (eb != 4 || l->shared.swizzle != 128)
        return;
    l->shared.vec = 32 / eb;
    l->shared.per_phase = 1;
    l->shared.max_phase = 4;
}

/* The parent's type of a value of type t in slice layout `slice` (size 1 at the sliced dim), and
 * in *parent_dim the parent's dim that t's dim maps to. */
static Type slice_parent_type(const Layout *slice, Type t, int dim, int *parent_dim)
{
    Type pt = t;
    pt.rank = (uint8_t)(t.rank + 1);
    for (int d = 0, s = 0; d < pt.rank; d++)
        pt.shape[d] = d == slice->slice.dim ? 1 : t.shape[s++];
    *parent_dim = dim < slice->slice.dim ? dim : dim + 1;
    return pt;
}

/* The warp that holds element idx of a value of type t in layout `layout` (the warp index
 * codegen/distribution.c's formulas use), or -1 when more than one warp holds it (warps wrap over
 * a dim smaller than their tile, or a dim the warps split is sliced away or is a dot operand's
 * broadcast dim) or the layout is not one of these. Blocked: along dim k the warp coordinate is
 * (i mod spt tpw wpc) / (spt tpw), the coordinates linearized in the layout's order; #mma (v2, or
 * v3 with warps [W, 1]): wm = (row / 16) mod Wm, wn = (column / 8) mod Wn, warp wm Wn + wn; a dot
 * operand of an #mma: A its parent's row warp (one warp along N), B its column warp (one along
 * M); a slice: its parent's at index 0 of the sliced dim, when one warp spans that dim. */
int layout_element_warp(const IrFunc *f, int layout, Type t, const int32_t *idx)
{
    if (layout <= 0 || layout >= f->nlayouts || t.rank == 0)
        return -1;
    const Layout *l = &f->layouts[layout];
    switch (l->kind) {
    case LAYOUT_BLOCKED: {
        int warp = 0, stride = 1;
        for (int j = 0; j < l->rank && j < t.rank; j++) {
            int k = l->blocked.order[j];
            int64_t spt = l->blocked.size_per_thread[k] < t.shape[k] ? l->blocked.size_per_thread[k]
                                                                     : t.shape[k];
            int64_t tpw = l->blocked.threads_per_warp[k], wpc = l->blocked.warps_per_cta[k];
            if (wpc > 1 && t.shape[k] / (spt * tpw) < wpc)
                return -1; /* warps wrap: copies in several warps */
            int64_t w = (idx[k] % (spt * tpw * wpc)) / (spt * tpw);
            warp += (int)w * stride;
            stride *= (int)wpc;
        }
        return warp;
    }
    case LAYOUT_MMA: {
        if (t.rank != 2 || (l->mma.version != 2 && l->mma.version != 3))
            return -1;
        int wm = l->mma.warps_per_cta[0], wn = l->mma.warps_per_cta[1];
        return (idx[0] / 16) % wm * wn + (idx[1] / 8) % wn;
    }
    case LAYOUT_DOT_OPERAND: {
        int parent = l->dot_operand.parent;
        if (t.rank != 2 || parent <= 0 || parent >= f->nlayouts ||
            f->layouts[parent].kind != LAYOUT_MMA)
            return -1;
        const Layout *P = &f->layouts[parent];
        int wm = P->mma.warps_per_cta[0], wn = P->mma.warps_per_cta[1];
        if (l->dot_operand.op_idx == 0)
            return wn == 1 ? (idx[0] / 16) % wm : -1;
        return wm == 1 ? (idx[1] / 8) % wn : -1;
    }
    case LAYOUT_SLICE: {
        int pd;
        Type pt = slice_parent_type(l, t, 0, &pd);
        if (layout_warps_along(f, l->slice.parent, pt, l->slice.dim) > 1)
            return -1;
        int32_t pidx[TRIC_MAX_RANK];
        for (int d = 0, s = 0; d < pt.rank; d++)
            pidx[d] = d == l->slice.dim ? 0 : idx[s++];
        return layout_element_warp(f, l->slice.parent, pt, pidx);
    }
    case LAYOUT_SHARED:
    case LAYOUT_NONE: return -1;
    }
    return -1;
}

bool layout_copy_stays_in_warps(const IrFunc *f, int from, int to, Type t)
{
    int64_t numel = type_numel(t);
    if (t.rank == 0 || from <= 0 || to <= 0)
        return false;
    for (int64_t e = 0; e < numel; e++) {
        int32_t idx[TRIC_MAX_RANK];
        int64_t rem = e;
        for (int d = t.rank - 1; d >= 0; d--) {
            idx[d] = (int32_t)(rem % t.shape[d]);
            rem /= t.shape[d];
        }
        int w = layout_element_warp(f, from, t, idx);
        if (w < 0 || layout_element_warp(f, to, t, idx) != w)
            return false;
    }
    return true;
}

int layout_warps_along(const IrFunc *f, int layout, Type t, int dim)
{
    if (layout <= 0 || layout >= f->nlayouts || t.rank == 0)
        return 1;
    const Layout *l = &f->layouts[layout];
    switch (l->kind) {
    case LAYOUT_BLOCKED: {
        int64_t per_warp =
            (int64_t)l->blocked.size_per_thread[dim] * l->blocked.threads_per_warp[dim];
        int64_t distinct = (t.shape[dim] + per_warp - 1) / per_warp;
        return (int)(distinct < l->blocked.warps_per_cta[dim] ? distinct
                                                              : l->blocked.warps_per_cta[dim]);
    }
    case LAYOUT_SLICE: {
        int pd;
        Type pt = slice_parent_type(l, t, dim, &pd);
        return layout_warps_along(f, l->slice.parent, pt, pd);
    }
    case LAYOUT_MMA: return l->mma.warps_per_cta[dim];
    case LAYOUT_DOT_OPERAND:
    case LAYOUT_SHARED:
    case LAYOUT_NONE: return 1;
    }
    return 1;
}

/* How many lanes of a warp hold distinct elements along dim of a value of type t in layout l
 * (codegen/distribution.c's Dist.lanes): blocked, min(tpw, shape / spt); a slice, its parent's
 * along the mapped dim; #mma, 8 along the rows (groupID) and 4 along the columns. */
static int lanes_along(const IrFunc *f, int l, Type t, int dim)
{
    if (l <= 0 || l >= f->nlayouts || dim < 0 || dim >= t.rank)
        return 1;
    const Layout *L = &f->layouts[l];
    switch (L->kind) {
    case LAYOUT_BLOCKED: {
        int64_t n = t.shape[dim], spt = L->blocked.size_per_thread[dim];
        int64_t runs = spt < 1 ? 1 : n / (spt < n ? spt : n);
        int64_t tpw = L->blocked.threads_per_warp[dim];
        return (int)(runs < 1 ? 1 : runs < tpw ? runs : tpw);
    }
    case LAYOUT_SLICE: {
        int pd;
        Type pt = slice_parent_type(L, t, dim, &pd);
        return lanes_along(f, L->slice.parent, pt, pd);
    }
    case LAYOUT_MMA: return dim == 0 ? 8 : 4;
    default: return 1;
    }
}

ScratchCombine shared_reduce_scratch(const IrFunc *f, const IrOp *op, int64_t *row_stride,
                                     int64_t *warp_stride)
{
    *row_stride = 1;
    *warp_stride = type_numel(ir_type(f, op->results[0]));
    /* Instructions per output element. serial: W loads (16-byte vectors when one output's W
     * partials are contiguous, a single output) and W - 1 combines. shuffle, in groups of
     * G = min(lanes, W): W / G loads, log2(G) shuffles and combines, and about 2 to find the
     * lane's first partial. Shuffle where it is cheaper: 32 warps reducing one row, 1 + 10 + 2
     * against 8 + 31; 4 warps keep their one 16-byte load and 3 combines. */
    const IrValue *in = &f->values[op->operands[0]];
    int axis = (int)op->attr[0];
    int64_t W = layout_warps_along(f, in->layout, in->type, axis);
    int64_t L = lanes_along(f, in->layout, in->type, axis), G = L < W ? L : W;
    int64_t eb = shared_elem_bytes(ir_type(f, op->results[0]));
    int64_t serial = (*warp_stride == 1 ? (W * eb + 15) / 16 : W) + W - 1;
    int64_t shuffle = W / G + 2;
    for (int64_t g = G; g > 1; g /= 2)
        shuffle += 2;
    return G > 1 && shuffle < serial ? SCRATCH_COMBINE_SHUFFLE : SCRATCH_COMBINE_SERIAL;
}

/* Whether blocked layout l covers dim `axis` of t exactly once (codegen/distribution.c's counts:
 * each thread one run of spt elements along it, all tpw lanes and wpc warps holding distinct
 * runs); *warps: the warps along it. */
static bool covers_axis_once(const IrFunc *f, int l, Type t, int axis, int *warps)
{
    if (l <= 0 || l >= f->nlayouts || f->layouts[l].kind != LAYOUT_BLOCKED ||
        f->layouts[l].rank != t.rank || axis < 0 || axis >= t.rank)
        return false;
    const Layout *L = &f->layouts[l];
    int64_t n = t.shape[axis];
    int64_t spt = L->blocked.size_per_thread[axis] < n ? L->blocked.size_per_thread[axis] : n;
    int64_t tpw = L->blocked.threads_per_warp[axis], wpc = L->blocked.warps_per_cta[axis];
    if (spt < 1 || tpw < 1 || wpc < 1) /* not a layout (the verifier says so) */
        return false;
    int64_t lanes = n / spt < 1 ? 1 : n / spt, w = n / (spt * tpw) < 1 ? 1 : n / (spt * tpw);
    int64_t reps = n / (spt * tpw * wpc) < 1 ? 1 : n / (spt * tpw * wpc);
    *warps = (int)wpc;
    return (lanes < tpw ? lanes : tpw) == tpw && (w < wpc ? w : wpc) == wpc && reps == 1;
}

ScratchCombine shared_scan_scratch(const IrFunc *f, const IrOp *op, int64_t strides[TRIC_MAX_RANK],
                                   Type *tile)
{
    Type t = ir_type(f, op->results[0]);
    int axis = (int)op->attr[0], warps = 1;
    *tile = t;
    if (covers_axis_once(f, f->values[op->operands[0]].layout, t, axis, &warps)) {
        /* [row][warp]: the warps' totals of one row side by side */
        tile->rank = 2;
        tile->shape[0] = (int32_t)(type_numel(t) / (t.shape[axis] > 0 ? t.shape[axis] : 1));
        tile->shape[1] = warps;
        strides[0] = warps;
        strides[1] = 1;
        return SCRATCH_COMBINE_SHUFFLE;
    }
    int64_t s = 1;
    for (int d = t.rank - 1; d >= 0; d--) {
        strides[d] = s;
        s *= t.shape[d];
    }
    return SCRATCH_COMBINE_STEPS;
}

int64_t shared_swizzled_offset(const Layout *l, Type tile, const int64_t *c)
{
    int cd = l->shared.order[0], rd = l->shared.order[1];
    int eb = dtype_bytes(tile.dtype), sw = l->shared.swizzle;
    int64_t rows = tile.shape[rd], atom_elems = sw / eb;
    int64_t col = c[cd], row = c[rd];
    int64_t atom = col / atom_elems, in_atom = (col % atom_elems) * eb;
    int64_t unit = shared_swizzle_unit_bytes(l, tile);
    int64_t chunk = (in_atom / unit) ^ ((row / l->shared.per_phase) % l->shared.max_phase);
    return atom * rows * sw + row * sw + chunk * unit + in_atom % unit;
}

int64_t shared_swizzle_unit_bytes(const Layout *l, Type tile)
{
    int64_t unit = (int64_t)l->shared.vec * dtype_bytes(tile.dtype);
    return unit >= 16 && unit <= l->shared.swizzle ? unit : 16;
}

/* The contiguous dim of the registers that feed dot operand `which`: the blocked order[0] of the
 * value its convert_layout converts; -1 when unknown. */
static int operand_register_contig(const IrFunc *f, const IrOp *dot, int which)
{
    const IrOp *cv = f->values[dot->operands[which]].def;
    if (!cv || cv->code != OP_CONVERT_LAYOUT)
        return -1;
    int l = f->values[cv->operands[0]].layout;
    return l > 0 && l < f->nlayouts && f->layouts[l].kind == LAYOUT_BLOCKED
               ? f->layouts[l].blocked.order[0]
               : -1;
}

int64_t shared_wgmma_staging(const IrFunc *f, const IrOp *dot, Layout *la, Layout *lb,
                             int64_t *b_offset)
{
    Type a = ir_type(f, dot->operands[0]), b = ir_type(f, dot->operands[1]);
    if (a.rank != 2 || b.rank != 2)
        return 0;
    /* Each tile contiguous along the dim its registers run along, so a thread's runs go out as
     * 16-byte stores: A along K or M, B along K or N. MN-major is wgmma's transposed form, for
     * 16-bit types only (tf32 must be K-major), and an instruction's n piece must start a B atom. */
    bool sixteen = dtype_bytes(a.dtype) == 2;
    int a_contig = sixteen && operand_register_contig(f, dot, 0) == 0 ? 0 : 1;
    int b_contig = sixteen && operand_register_contig(f, dot, 1) == 1 ? 1 : 0;
    if (!shared_layout_for(la, a, a_contig) || !shared_layout_for(lb, b, b_contig))
        return 0;
    if (b_contig == 1) {
        int acc = f->values[dot->results[0]].layout;
        int ni = acc > 0 && acc < f->nlayouts ? f->layouts[acc].mma.instr_shape[1] : b.shape[1];
        int atom = lb->shared.swizzle / dtype_bytes(b.dtype);
        if (ni % atom && b.shape[1] > ni && !shared_layout_for(lb, b, 0))
            return 0;
    }
    *b_offset = shared_slot_bytes(a, false);
    return *b_offset + shared_slot_bytes(b, false);
}
