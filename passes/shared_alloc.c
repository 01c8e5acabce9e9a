/* shared_alloc.c: shared memory for the ops that need it (Triton's Allocation analysis): the
 * software pipeline's stage buffers and every op's scratch, and how each op uses its scratch.
 *
 * Requires: layouts (pass_layouts), swizzle (the buffers' layouts). Guarantees:
 * IrOp.smem_offset/smem_bytes for every local_alloc (its whole buffer, 1024-aligned), and for
 * convert_layout, reshape, atomics whose result is read and replicated, cross-warp reductions,
 * FMA dots that do not read the pipeline's slots, mma dots that were not pipelined (operand
 * staging) and trans ops that are not a
 * relabelling of registers; 0/0 for every other op; IrOp.scratch, the scratch record (docs/ir.md
 * "Scratch records"), for every convert_layout, reshape, trans, scan, atomic and cross-warp
 * reduction given scratch (its #shared layout or strides) and every dot (its staging tiles, placed, and where A and B
 * come from); IrFunc.shared_bytes = what a launch must ask for, within the target's per-block
 * limit (else an error naming the bytes and the limit, and num_stages when the stage buffers are
 * the cause). Codegen reads the records and decides none of it again.
 *
 * The stage buffers sit one after the other from offset 0 (a buffer made after another's last
 * use shares its memory) and are live from their local_alloc to the end of the loop that reads
 * them (and the waits right after it). Scratch is live only
 * while its op runs (codegen writes, bar.sync, reads, and puts a bar.sync before the next op's
 * writes), so no two scratch buffers are ever live together: each starts right after the stage
 * buffers live while it runs, else at offset 0 (over them: the epilogue's convert reuses the
 * pipeline's memory), and the kernel needs the largest end. The layout of the data
 * inside each scratch is in docs/layouts.md ("Shared-memory scratch"): the rules of ir/layout.c
 * choose it, this file writes it in the op's record and sizes the scratch by it, and codegen
 * addresses the record, so the two cannot disagree. */
#include "passes/passes.h"

int shared_limit_bytes(int sm)
{
    /* CUDA C Programming Guide, "Technical Specifications per Compute Capability": maximum shared
     * memory per thread block (opt-in): 8.0: 163 KB, 8.6/8.9: 99 KB, 9.0: 227 KB. */
    if (sm >= 90)
        return 232448;
    if (sm == 80 || sm == 87)
        return 166912;
    if (sm >= 86)
        return 101376;
    return 49152;
}

/* Whether result layout lr is operand layout la with its dims permuted by perm (result dim i is
 * operand dim perm[i]), both blocked. */
static bool trans_is_relabel(const IrFunc *f, int la, int lr, const int64_t *perm, int rank)
{
    if (la <= 0 || lr <= 0 || la >= f->nlayouts || lr >= f->nlayouts)
        return false;
    const Layout *a = &f->layouts[la], *r = &f->layouts[lr];
    if (a->kind != LAYOUT_BLOCKED || r->kind != LAYOUT_BLOCKED || a->rank != rank ||
        r->rank != rank)
        return false;
    for (int i = 0; i < rank; i++) {
        int p = (int)perm[i];
        if (p < 0 || p >= rank || r->blocked.size_per_thread[i] != a->blocked.size_per_thread[p] ||
            r->blocked.threads_per_warp[i] != a->blocked.threads_per_warp[p] ||
            r->blocked.warps_per_cta[i] != a->blocked.warps_per_cta[p] ||
            (int)perm[r->blocked.order[i]] != a->blocked.order[i])
            return false;
    }
    return true;
}

/* ---- scratch records: how each op lays out its scratch (docs/ir.md "Scratch records") ------- */

/* A tile at the given element strides, rank dims. */
static IrScratchTile strided_tile(int32_t offset, const int64_t *strides, int rank)
{
    IrScratchTile t = {.offset = offset, .nstrides = rank};
    for (int d = 0; d < rank; d++)
        t.strides[d] = strides[d];
    return t;
}

/* The row-major element strides of a value of type t (the last dim at stride 1). */
static void row_major_strides(Type t, int64_t strides[TRIC_MAX_RANK])
{
    int64_t s = 1;
    for (int d = t.rank - 1; d >= 0; d--) {
        strides[d] = s;
        s *= t.shape[d];
    }
}

/* Bytes of tile t (at offset 0) holding a value of type v. */
static int64_t tile_bytes(const IrScratchTile *t, Type v)
{
    if (t->layout > 0)
        return type_numel(v) * shared_elem_bytes(v);
    int64_t last = 0;
    for (int d = 0; d < v.rank; d++)
        last += (v.shape[d] - 1) * t->strides[d];
    return (last + 1) * shared_elem_bytes(v);
}

/* The copy of a convert_layout or reshape: the swizzled #shared layout of
 * shared_scratch_swizzle, else shared_scratch_strides (padded rows; reshape row-major). */
static void record_copy(IrFunc *f, IrOp *op)
{
    Layout l;
    op->scratch.ntiles = 1;
    if (shared_scratch_swizzle(f, op, &l)) {
        op->scratch.tile[0].layout = ir_layout_intern(f, &l);
        return;
    }
    int64_t strides[TRIC_MAX_RANK];
    shared_scratch_strides(f, op, strides);
    op->scratch.tile[0] = strided_tile(0, strides, ir_type(f, op->operands[0]).rank);
}

/* An mma dot's staging tiles (shared_dot_staging), offsets from the dot's: A at 0 and B after it,
 * swizzled when shared_dot_staging_swizzle says so, else at the strides of the convert_layout
 * feeding each. Returns their bytes, 0 (no record) when an operand has no convert. Whether the
 * dot uses them is plan_dot_operands's choice. */
static int64_t record_mma_staging(IrFunc *f, IrOp *op)
{
    int64_t a_bytes, b_bytes;
    shared_dot_staging(f, op, &a_bytes, &b_bytes);
    if (!a_bytes || !b_bytes)
        return 0;
    IrScratch *s = &op->scratch;
    s->ntiles = 2;
    s->tile[1].offset = (int32_t)a_bytes;
    Layout la, lb;
    if (shared_dot_staging_swizzle(f, op, &la, &lb)) {
        s->tile[0].layout = ir_layout_intern(f, &la);
        s->tile[1].layout = ir_layout_intern(f, &lb);
    } else {
        for (int i = 0; i < 2; i++) {
            int64_t st[TRIC_MAX_RANK];
            shared_scratch_strides(f, f->values[op->operands[i]].def, st);
            s->tile[i] = strided_tile(s->tile[i].offset, st, 2);
        }
    }
    return a_bytes + b_bytes;
}

/* A wgmma dot's staging area (shared_wgmma_staging): A and B in swizzled layouts, B at a
 * 1024-aligned offset from A. Its bytes; 0 (no record) when a tile has no swizzled form. */
static int64_t record_wgmma_staging(IrFunc *f, IrOp *op)
{
    Layout la, lb;
    int64_t b_off, area = shared_wgmma_staging(f, op, &la, &lb, &b_off);
    if (!area)
        return 0;
    IrScratch *s = &op->scratch;
    s->ntiles = 2;
    s->tile[0].layout = ir_layout_intern(f, &la);
    s->tile[1].layout = ir_layout_intern(f, &lb);
    s->tile[1].offset = (int32_t)b_off;
    return area;
}

/* The scratch op needs, its record written (tile offsets relative to the op's scratch until
 * alloc_region places it). */

/* Whether an FMA dot's operand v is the pipeline's local_load in its #dot_op layout: the dot
 * reads that slot itself (passes/pipeline_loops.c, choose_fma_readers). */
static bool fma_operand_slot(const IrFunc *f, ValueId v)
{
    const IrOp *def = f->values[v].def;
    int l = f->values[v].layout;
    return def && def->code == OP_LOCAL_LOAD && l > 0 && l < f->nlayouts &&
           f->layouts[l].kind == LAYOUT_DOT_OPERAND;
}

/* An FMA dot that reads both its operands' slots: nothing to stage. */
static bool fma_reads_slots(const IrFunc *f, const IrOp *op)
{
    return fma_operand_slot(f, op->operands[0]) && fma_operand_slot(f, op->operands[1]);
}
/* A one-tile record of t at row-major strides; returns its bytes. */
static int64_t record_row_major(IrOp *op, Type t)
{
    int64_t strides[TRIC_MAX_RANK];
    row_major_strides(t, strides);
    op->scratch.ntiles = 1;
    op->scratch.tile[0] = strided_tile(0, strides, t.rank);
    return type_numel(t) * shared_elem_bytes(t);
}

static int64_t scratch_bytes(IrFunc *f, IrOp *op)
{
    op->scratch = (IrScratch){0};
    switch (op->code) {
    case OP_CONVERT_LAYOUT:
    case OP_RESHAPE: {
        Type t = ir_type(f, op->operands[0]);
        if (t.rank == 0)
            return 0;
        if (op->code == OP_CONVERT_LAYOUT &&
            f->values[op->operands[0]].layout == f->values[op->results[0]].layout)
            return 0; /* a no-op convert */
        if (op->code == OP_CONVERT_LAYOUT &&
            layout_convert_is_relabel(f, f->values[op->operands[0]].layout,
                                      f->values[op->results[0]].layout))
            return 0; /* registers relabelled (a chained dot's A) */
        if (layout_reshape_is_relabel(f, op))
            return 0; /* interleave's pairs folded in place (codegen/join_split.c) */
        record_copy(f, op);
        return tile_bytes(&op->scratch.tile[0], t);
    }
    case OP_TMA_STORE: {
        /* the tile in the #shared layout of the map's swizzle (the one a tma_load's slot gets),
         * its contiguous dim the map's dim 0: the copy reads it box by box */
        Type t = ir_type(f, op->operands[0]);
        Layout l;
        if (!shared_layout_for(&l, t, (int)op->attr[1]))
            return 0; /* the verifier's and codegen's to report: the pass makes only such tiles */
        op->scratch.ntiles = 1;
        op->scratch.tile[0].layout = ir_layout_intern(f, &l);
        return type_numel(t) * shared_elem_bytes(t);
    }
    case OP_SUBTILE: {
        /* kept in the tile's registers, else the tile at row-major strides, read at the
         * block's offsets */
        if (layout_subtile_is_relabel(f, op))
            return 0;
        return record_row_major(op, ir_type(f, op->operands[0]));
    }
    case OP_SCAN: {
        /* the whole block (Hillis-Steele steps), or the warps' totals when codegen scans by
         * shuffles (which need fewer bytes; the block's are kept either way) */
        Type t = ir_type(f, op->results[0]), tile;
        int64_t strides[TRIC_MAX_RANK];
        op->scratch.combine = shared_scan_scratch(f, op, strides, &tile);
        op->scratch.ntiles = 1;
        op->scratch.tile[0] = strided_tile(0, strides, tile.rank);
        return type_numel(t) * shared_elem_bytes(t);
    }
    case OP_REDUCE_SUM:
    case OP_REDUCE_MAX:
    case OP_REDUCE_MIN:
    case OP_ARGMAX:
    case OP_ARGMIN: {
        Type in = ir_type(f, op->operands[0]);
        int axis = (int)op->attr[0];
        int warps = layout_warps_along(f, f->values[op->operands[0]].layout, in, axis);
        if (warps <= 1)
            return 0;
        int nw = f->num_warps > 0 ? f->num_warps : 1;
        int64_t n_out = type_numel(ir_type(f, op->results[0]));
        bool arg = op->code == OP_ARGMAX || op->code == OP_ARGMIN;
        Type out = ir_type(f, op->results[0]);
        int eb = shared_elem_bytes(in);
        if (!arg && shared_elem_bytes(out) > eb) /* a sum kept in a wider dtype */
            eb = shared_elem_bytes(out);
        int64_t slot = eb + (arg ? 4 : 0);
        int64_t strides[2];
        op->scratch.combine = shared_reduce_scratch(f, op, &strides[0], &strides[1]);
        op->scratch.ntiles = 1;
        op->scratch.tile[0] = strided_tile(0, strides, 2);
        return n_out * nw * slot;
    }
    case OP_ATOMIC_RMW:
    case OP_ATOMIC_CAS: {
        /* A result read by someone, of a layout whose elements several threads hold (or a
         * scalar), goes from the one thread that did each atomic to the others through scratch
         * (codegen/atomic.c), at the record's strides: row-major in the result. */
        ValueId r = op->results[0];
        Type t = ir_type(f, r);
        if (!ir_region_uses(&f->body, r) || !layout_replicates(f, f->values[r].layout, t))
            return 0;
        return record_row_major(op, t);
    }
    case OP_TRANS: {
        /* A blocked layout permuted with the dims is a relabelling of registers (what the layout
         * pass produces): no scratch, no record. Anything else moves through scratch, row-major
         * in the result: operand dim perm[i] at the result's row-major stride i. */
        Type t = ir_type(f, op->results[0]);
        int la = f->values[op->operands[0]].layout, lr = f->values[op->results[0]].layout;
        if (t.rank == 0 || trans_is_relabel(f, la, lr, op->attr, t.rank))
            return 0;
        int64_t rm[TRIC_MAX_RANK], strides[TRIC_MAX_RANK];
        row_major_strides(t, rm);
        for (int i = 0; i < t.rank; i++)
            strides[(int)op->attr[i]] = rm[i];
        op->scratch.ntiles = 1;
        op->scratch.tile[0] = strided_tile(0, strides, t.rank);
        return type_numel(t) * shared_elem_bytes(t);
    }
    case OP_DOT: {
        int acc = f->values[op->results[0]].layout;
        if (acc <= 0 || acc >= f->nlayouts)
            return 0;
        if (f->layouts[acc].kind == LAYOUT_MMA && f->layouts[acc].mma.version == 3)
            return record_wgmma_staging(f, op);
        if (f->layouts[acc].kind == LAYOUT_MMA)
            return record_mma_staging(f, op);
        if (f->layouts[acc].kind != LAYOUT_BLOCKED)
            return 0;
        /* FMA dot (blocked accumulator): A^T, then B, unpadded (plan_dot_operands places them:
         * here, or elsewhere when they do not fit), read per k by the rows and columns each
         * thread needs (docs/layouts.md); none when both come from the pipeline's slots */
        if (fma_reads_slots(f, op))
            return 0;
        Type a = ir_type(f, op->operands[0]), b = ir_type(f, op->operands[1]);
        return type_numel(a) * dtype_bytes(a.dtype) + type_numel(b) * dtype_bytes(b.dtype);
    }
    default: return 0;
    }
}

static bool is_wgmma_dot(const IrFunc *f, const IrOp *op)
{
    int acc = f->values[op->results[0]].layout;
    return acc > 0 && acc < f->nlayouts && f->layouts[acc].kind == LAYOUT_MMA &&
           f->layouts[acc].mma.version == 3;
}

/* ---- the pipeline's buffers ----------------------------------------------------------------- */

/* The last op of r during which the buffer of local_alloc r->ops[a] is live: the last op of r
 * that uses it or a slot view of it made in r (a use nested in a loop makes the whole loop live:
 * a loop-invariant A's one slot is viewed before the loops that read it), and on through the
 * async_wait / wgmma_wait ops right after (an in-flight wgmma still reads the buffer). */
static int buffer_live_end(const IrRegion *r, int a)
{
    ValueId buf = r->ops[a]->results[0];
    int end = a;
    for (int i = a + 1; i < r->nops; i++) {
        bool uses = ir_op_uses(r->ops[i], buf);
        for (int j = a + 1; !uses && j < i; j++)
            uses = r->ops[j]->code == OP_SLOT && r->ops[j]->operands[0] == buf &&
                   ir_op_uses(r->ops[i], r->ops[j]->results[0]);
        if (uses)
            end = i;
    }
    while (end + 1 < r->nops &&
           (r->ops[end + 1]->code == OP_ASYNC_WAIT || r->ops[end + 1]->code == OP_WGMMA_WAIT))
        end++;
    return end;
}

int64_t shared_peak_buffer_bytes(const IrFunc *f, const IrRegion *r)
{
    int64_t *live = arena_alloc(f->arena, sizeof(int64_t) * (size_t)(r->nops + 1));
    int64_t peak = 0;
    for (int a = 0; a < r->nops; a++) {
        if (r->ops[a]->code != OP_LOCAL_ALLOC)
            continue;
        Type t = ir_type(f, r->ops[a]->results[0]);
        int64_t bytes = (int64_t)t.shape[0] * shared_slot_bytes(t, true);
        for (int i = a, last = buffer_live_end(r, a); i <= last; i++) {
            live[i] += bytes;
            peak = live[i] > peak ? live[i] : peak;
        }
    }
    return peak;
}

/* live_end[i] = the end of the highest buffer of r live while op i of r runs (buffer_live_end;
 * place_buffers placed them), 0 when none is. */
static void buffer_liveness(const IrRegion *r, int64_t *live_end)
{
    for (int a = 0; a < r->nops; a++) {
        const IrOp *alloc = r->ops[a];
        if (alloc->code != OP_LOCAL_ALLOC)
            continue;
        int64_t end = (int64_t)alloc->smem_offset + alloc->smem_bytes;
        int last = buffer_live_end(r, a);
        for (int i = a; i <= last; i++)
            live_end[i] = end > live_end[i] ? end : live_end[i];
    }
}

/* Places the local_alloc buffers of r from *next, each on a 1024-byte boundary (the swizzle
 * pattern's period; mbarriers on 8 bytes): a buffer shares memory with an earlier one of r whose live range ended
 * before its local_alloc (two pipelined loops one after the other, as a causal attention's two
 * passes), else goes after it. Codegen puts a barrier at every local_alloc, so the earlier
 * buffer's last readers, and any scratch placed over the buffers before it, are done before the
 * new buffer's first copies. Buffers of nested regions go after all of r's. */
static void place_buffers(IrFunc *f, IrRegion *r, int64_t *next)
{
    int64_t base = (*next + 1023) / 1024 * 1024, end_all = base;
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        if (op->code != OP_LOCAL_ALLOC)
            continue;
        Type t = ir_type(f, op->results[0]);
        int64_t bytes = (int64_t)t.shape[0] * shared_slot_bytes(t, true), at = base;
        /* mbarriers (tma.c) need 8-byte alignment only (PTX ISA 9.7.13.15.1) */
        int64_t align = type_is_mbarriers(t) ? 8 : 1024;
        for (bool moved = true; moved;) {
            moved = false;
            for (int j = 0; j < i; j++) {
                const IrOp *prev = r->ops[j];
                if (prev->code != OP_LOCAL_ALLOC || buffer_live_end(r, j) < i)
                    continue; /* dead before this buffer is made: its memory is free */
                int64_t p0 = prev->smem_offset, p1 = p0 + prev->smem_bytes;
                if (at < p1 && p0 < at + bytes) {
                    at = (p1 + align - 1) / align * align;
                    moved = true;
                }
            }
        }
        op->smem_offset = (int32_t)(at > INT32_MAX ? INT32_MAX : at);
        op->smem_bytes = (int32_t)(bytes > INT32_MAX ? INT32_MAX : bytes);
        if (at + bytes > end_all)
            end_all = at + bytes;
    }
    *next = end_all;
    for (int i = 0; i < r->nops; i++)
        for (int k = 0; k < r->ops[i]->nregions; k++)
            place_buffers(f, &r->ops[i]->regions[k], next);
}

/* Returns the largest scratch end in r; *biggest is the op that needs it (for the error's
 * location). Scratch of an op goes after the pipeline buffers live while it runs (those of r and
 * in_end, the end of those of the regions around r), else at 0, over them: a buffer made later
 * (q and the slots of an attention, after the mask's convert) may take its memory then. */
static int64_t alloc_region(IrFunc *f, IrRegion *r, const IrOp **biggest, int64_t in_end)
{
    int64_t most = 0;
    int64_t *live_end = arena_alloc(f->arena, sizeof(int64_t) * (size_t)(r->nops + 1));
    buffer_liveness(r, live_end);
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        int64_t op_end = in_end > live_end[i] ? in_end : live_end[i];
        if (op->code == OP_LOCAL_ALLOC)
            continue; /* placed by place_buffers */
        for (int k = 0; k < op->nregions; k++) {
            const IrOp *inner_op = NULL;
            int64_t inner = alloc_region(f, &op->regions[k], &inner_op, op_end);
            if (inner > most) {
                most = inner;
                *biggest = inner_op;
            }
        }
        int64_t bytes = scratch_bytes(f, op);
        /* after live stage buffers: 16-byte aligned, 1024 for a wgmma staging area or a
         * tma_store's tile (its swizzle pattern's period) */
        int64_t align =
            (op->code == OP_DOT && is_wgmma_dot(f, op)) || op->code == OP_TMA_STORE ? 1024 : 16;
        int64_t base = op_end > 0 && bytes > 0 ? (op_end + align - 1) / align * align : 0;
        op->smem_offset = (int32_t)(base > INT32_MAX ? INT32_MAX : base);
        op->smem_bytes = (int32_t)(bytes > INT32_MAX ? INT32_MAX : bytes);
        for (int t = 0; t < op->scratch.ntiles; t++) /* the record's tiles, placed with the op */
            op->scratch.tile[t].offset += op->smem_offset;
        if (base + bytes > most) {
            most = base + bytes;
            *biggest = op;
        }
    }
    return most;
}

/* ---- where each dot takes its operands from ------------------------------------------------ */

/* What plan_dot_operands needs about the whole function. */
typedef struct DotPlan {
    int32_t *uses, *dot_uses; /* per value: its uses, and its uses as a dot's a or b */
    bool *unmaterialized;     /* per value: a dot operand its dot reads from elsewhere */
    int64_t scratch_floor;    /* the lowest nonzero smem_offset of any op (shared_bytes if none) */
} DotPlan;

static void count_uses(const IrRegion *r, DotPlan *p)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int k = 0; k < op->noperands; k++)
            if (op->operands[k] > 0) {
                p->uses[op->operands[k]]++;
                if (op->code == OP_DOT && k < 2)
                    p->dot_uses[op->operands[k]]++;
            }
        if (op->smem_bytes > 0 && op->smem_offset > 0 && op->smem_offset < p->scratch_floor)
            p->scratch_floor = op->smem_offset;
        for (int k = 0; k < op->nregions; k++)
            count_uses(&op->regions[k], p);
    }
}

static const IrOp *operand_convert(const IrFunc *f, ValueId v)
{
    const IrOp *def = f->values[v].def;
    return def && def->code == OP_CONVERT_LAYOUT ? def : NULL;
}

/* Where an FMA dot stages A^T [K][M] and B [K][N] (strides [1, M] and [N, 1]): its own scratch
 * when it holds both with B 16-byte aligned; else its operands' converts' scratch when disjoint;
 * else offset 0 when the kernel's shared memory is large enough (every scratch region is live
 * only during its op, docs/layouts.md) and nothing is allocated at a nonzero offset below the
 * end of the staging area (a buffer that outlives its op would live there). No record: nowhere. */
static void place_fma_staging(const IrFunc *f, IrOp *op, const DotPlan *p)
{
    Type ta = ir_type(f, op->operands[0]), tb = ir_type(f, op->operands[1]);
    int64_t need_a = type_numel(ta) * dtype_bytes(ta.dtype);
    int64_t need_b = type_numel(tb) * dtype_bytes(tb.dtype);
    const IrOp *ca = operand_convert(f, op->operands[0]), *cb = operand_convert(f, op->operands[1]);
    int64_t at_b = (need_a + 15) / 16 * 16; /* B 16-byte aligned for its vector accesses */
    int64_t off_a, off_b;
    if (op->smem_bytes >= at_b + need_b && op->smem_offset >= 0) {
        off_a = op->smem_offset;
        off_b = op->smem_offset + at_b;
    } else if (ca && cb && ca->smem_bytes >= need_a && cb->smem_bytes >= need_b &&
               (ca->smem_offset + need_a <= cb->smem_offset ||
                cb->smem_offset + need_b <= ca->smem_offset)) {
        off_a = ca->smem_offset;
        off_b = cb->smem_offset;
    } else if (f->shared_bytes >= at_b + need_b && p->scratch_floor >= at_b + need_b) {
        off_a = 0;
        off_b = at_b;
    } else {
        return;
    }
    int64_t st_a[2] = {1, ta.shape[0]}, st_b[2] = {tb.shape[1], 1};
    op->scratch.ntiles = 2;
    op->scratch.tile[0] = strided_tile((int32_t)off_a, st_a, 2);
    op->scratch.tile[1] = strided_tile((int32_t)off_b, st_b, 2);
}

/* Can this mma dot stage its operands itself and read them back with ldmatrix? Its staging tiles
 * are recorded (both operands come from convert_layouts), A is not the previous dot's registers
 * relabelled, and the tiles are swizzled or their strides put A's k and B's n at stride 1 with
 * 16-byte rows of 16-bit elements (ldmatrix rows are 16 bytes at 16-byte-aligned addresses, PTX
 * ISA 9.7.9.24). */
static bool mma_can_stage(const IrFunc *f, const IrOp *op)
{
    const IrOp *ca = operand_convert(f, op->operands[0]);
    if (ca && layout_convert_is_relabel(f, f->values[ca->operands[0]].layout,
                                        f->values[ca->results[0]].layout))
        return false; /* A is the previous dot's registers, relabelled: nothing to stage */
    if (op->scratch.ntiles != 2)
        return false;
    for (int i = 0; i < 2; i++) {
        const IrScratchTile *t = &op->scratch.tile[i];
        Type ty = ir_type(f, op->operands[i]);
        if (t->layout > 0)
            continue;
        if (ty.rank != 2 || dtype_bytes(ty.dtype) != 2 || t->strides[1] != 1 ||
            (t->strides[0] * 2) % 16)
            return false;
    }
    return true;
}

static bool is_local_load(const IrFunc *f, ValueId v)
{
    const IrOp *def = f->values[v].def;
    return def && def->code == OP_LOCAL_LOAD && dtype_bytes(ir_type(f, v).dtype) == 2;
}

/* Marks the dot operands left unmaterialized: a convert (or the pipeline's local_load) whose
 * every use is such a dot, and that dot reads the operand from elsewhere: a wgmma stages from
 * whatever registers each operand is in; an mma.sync dot reads the pipeline's slots step by
 * step, or stages both operands itself (mma_can_stage); an FMA dot reads the pipeline's slots
 * in its k loop (fma_reads_slots), or stages what it was given a place for. A thread would otherwise hold whole rows of A times K in registers. */
static void mark_unmaterialized(IrFunc *f, IrRegion *r, DotPlan *p)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            mark_unmaterialized(f, &op->regions[k], p);
        if (op->code != OP_DOT)
            continue;
        int acc = f->values[op->results[0]].layout;
        if (acc <= 0 || acc >= f->nlayouts)
            continue;
        bool mma = f->layouts[acc].kind == LAYOUT_MMA;
        bool v3 = mma && f->layouts[acc].mma.version == 3;
        ValueId a = op->operands[0], b = op->operands[1];
        bool only_dots = p->uses[a] == p->dot_uses[a] && p->uses[b] == p->dot_uses[b];
        if (!mma && only_dots && fma_reads_slots(f, op)) {
            p->unmaterialized[a] = p->unmaterialized[b] = true;
            continue;
        }
        if (!mma)
            place_fma_staging(f, op, p);
        /* with its tiles placed, an FMA dot stages the converts' sources and reads the
         * pipeline's slots (fma_operand_slot) itself, operand by operand */
        bool each = v3 || (!mma && op->scratch.ntiles == 2);
        for (int k = 0; each && k < 2; k++) {
            ValueId v = op->operands[k];
            if ((operand_convert(f, v) || (!mma && fma_operand_slot(f, v))) &&
                p->uses[v] == p->dot_uses[v])
                p->unmaterialized[v] = true;
        }
        bool slots = mma && !v3 && is_local_load(f, a) && is_local_load(f, b);
        if (mma && !v3 && only_dots && (slots || mma_can_stage(f, op)))
            p->unmaterialized[a] = p->unmaterialized[b] = true;
    }
}

/* Writes each dot's from[]: the unmaterialized operands come from their convert's source
 * registers or their slot; an mma.sync dot keeps its tiles only when it stages both. */
static void record_dot_operands(IrFunc *f, IrRegion *r, const DotPlan *p)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            record_dot_operands(f, &op->regions[k], p);
        if (op->code != OP_DOT)
            continue;
        for (int k = 0; k < 2; k++) {
            ValueId v = op->operands[k];
            op->scratch.from[k] = !p->unmaterialized[v]                     ? DOT_FROM_REGISTERS
                                  : f->values[v].def->code == OP_LOCAL_LOAD ? DOT_FROM_SLOT
                                                                            : DOT_FROM_SOURCE;
        }
        int acc = f->values[op->results[0]].layout;
        bool v2 = acc > 0 && acc < f->nlayouts && f->layouts[acc].kind == LAYOUT_MMA &&
                  f->layouts[acc].mma.version == 2;
        if (v2 &&
            (op->scratch.from[0] != DOT_FROM_SOURCE || op->scratch.from[1] != DOT_FROM_SOURCE))
            op->scratch.ntiles = 0; /* not staged: the tiles stay unused */
    }
}

/* After every op is placed (the FMA dot's fallbacks read the kernel's shared_bytes): each dot's
 * staging and the sources of its operands, in its scratch record. */
static void plan_dot_operands(IrFunc *f)
{
    size_t n = (size_t)(f->nvalues + 1);
    DotPlan p = {.uses = arena_alloc(f->arena, sizeof(int32_t) * n),
                 .dot_uses = arena_alloc(f->arena, sizeof(int32_t) * n),
                 .unmaterialized = arena_alloc(f->arena, sizeof(bool) * n),
                 .scratch_floor = f->shared_bytes};
    count_uses(&f->body, &p);
    mark_unmaterialized(f, &f->body, &p);
    record_dot_operands(f, &f->body, &p);
}

/* The extent [*lo, *hi) of the consumers' scratch in r (their ops' smem ranges). */
static void consumer_scratch(const IrRegion *r, int64_t *lo, int64_t *hi)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        if (op->partition == PARTITION_CONSUMER && op->code != OP_LOCAL_ALLOC &&
            op->smem_bytes > 0) {
            *lo = op->smem_offset < *lo ? op->smem_offset : *lo;
            int64_t end = (int64_t)op->smem_offset + op->smem_bytes;
            *hi = end > *hi ? end : *hi;
        }
        for (int k = 0; k < op->nregions; k++)
            consumer_scratch(&op->regions[k], lo, hi);
    }
}

/* Ping-pong (IrFunc.ws.consumer_groups > 1): consumer group g's scratch lies g scratch_stride
 * past where the ops were placed, past everything else, the stride a multiple of 1024 so that
 * swizzled tiles keep their alignment; returns the bytes the kernel then needs. */
static int64_t place_group_scratch(IrFunc *f, int64_t most)
{
    int64_t lo = INT64_MAX, hi = 0;
    consumer_scratch(&f->body, &lo, &hi);
    if (hi == 0)
        return most;
    int64_t stride = (most - lo + 1023) / 1024 * 1024;
    f->ws.scratch_stride = (int)stride;
    int64_t end = hi + stride * (f->ws.consumer_groups - 1);
    return end > most ? (end + 15) / 16 * 16 : most;
}

/* ---- warp-private copies ------------------------------------------------------------------- */

/* A convert_layout's copy whose every element is held by one warp before and after (the q of an
 * attention loaded in a blocked layout whose warps own the rows the #mma gives them) moves data
 * only inside warps: each warp writes and reads its own bytes. Its copy then needs no block
 * barrier, only the warp's (bar.warp.sync orders the lanes' shared-memory accesses, PTX ISA
 * 9.7.13.2), provided no other warp touches those bytes in any op whose scratch overlaps it
 * (scratch is reused by every op: a block-synchronized copy's readers, another warp's, could
 * still be reading when this warp writes). IrScratch.warp_private records it; the two barriers of
 * each copy, which tie together warps that otherwise run apart (two consumer warpgroups), go. */

typedef struct ScratchUser {
    IrOp *op;
    int8_t *warp_of_byte; /* per byte of [smem_offset, +smem_bytes): its warp, -1 untouched; NULL
                             when the op is not (or no longer) a warp-private copy */
} ScratchUser;

/* Fills map (bytes of op's scratch) with the warp of each byte; false when the copy does not stay
 * inside warps (layout_copy_stays_in_warps). */
static bool copy_bytes_by_warp(const IrFunc *f, const IrOp *op, int8_t *map)
{
    const IrScratchTile *tile = &op->scratch.tile[0];
    Type t = ir_type(f, op->operands[0]);
    int from = f->values[op->operands[0]].layout, to = f->values[op->results[0]].layout;
    int64_t numel = type_numel(t), eb = shared_elem_bytes(t);
    const Layout *swizzled = tile->layout > 0 ? &f->layouts[tile->layout] : NULL;
    if (t.rank == 0 || (!swizzled && tile->nstrides != t.rank) || (swizzled && t.rank != 2) ||
        !layout_copy_stays_in_warps(f, from, to, t))
        return false;
    for (int64_t b = 0; b < op->smem_bytes; b++)
        map[b] = -1;
    for (int64_t e = 0; e < numel; e++) {
        int32_t idx[TRIC_MAX_RANK];
        int64_t c[TRIC_MAX_RANK], rem = e;
        for (int d = t.rank - 1; d >= 0; d--) {
            idx[d] = (int32_t)(rem % t.shape[d]);
            c[d] = idx[d];
            rem /= t.shape[d];
        }
        int w = layout_element_warp(f, from, t, idx);
        if (w > 127)
            return false;
        int64_t at = tile->offset - op->smem_offset;
        if (swizzled) {
            at += shared_swizzled_offset(swizzled, t, c);
        } else {
            for (int d = 0; d < t.rank; d++)
                at += c[d] * tile->strides[d] * eb;
        }
        if (at < 0 || at + eb > op->smem_bytes)
            return false;
        for (int64_t b = at; b < at + eb; b++) {
            if (map[b] >= 0 && map[b] != w)
                return false;
            map[b] = (int8_t)w;
        }
    }
    return true;
}

static void collect_scratch_users(IrFunc *f, IrRegion *r, ScratchUser **users, int *n, int *cap)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            collect_scratch_users(f, &op->regions[k], users, n, cap);
        if (op->smem_bytes <= 0)
            continue;
        ScratchUser u = {op, NULL};
        if (op->code == OP_CONVERT_LAYOUT && op->scratch.ntiles == 1) {
            u.warp_of_byte = arena_alloc(f->arena, (size_t)op->smem_bytes);
            if (!copy_bytes_by_warp(f, op, u.warp_of_byte))
                u.warp_of_byte = NULL;
        }
        ARENA_PUSH(f->arena, *users, *n, *cap, u);
    }
}

/* Whether a and b, both warp-private copies, give every byte they both touch to one warp. */
static bool bytes_agree(const ScratchUser *a, const ScratchUser *b)
{
    int64_t lo = a->op->smem_offset > b->op->smem_offset ? a->op->smem_offset : b->op->smem_offset;
    int64_t ea = (int64_t)a->op->smem_offset + a->op->smem_bytes,
            eb = (int64_t)b->op->smem_offset + b->op->smem_bytes;
    for (int64_t x = lo; x < (ea < eb ? ea : eb); x++) {
        int wa = a->warp_of_byte[x - a->op->smem_offset],
            wb = b->warp_of_byte[x - b->op->smem_offset];
        if (wa >= 0 && wb >= 0 && wa != wb)
            return false;
    }
    return true;
}

/* Marks the warp-private copies: those whose every overlapping scratch user is one too, agreeing
 * byte by byte; to a fixed point, since a copy that falls back to block barriers takes its
 * neighbours with it. */
static void mark_warp_private(IrFunc *f)
{
    ScratchUser *users = NULL;
    int n = 0, cap = 0;
    collect_scratch_users(f, &f->body, &users, &n, &cap);
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < n; i++) {
            if (!users[i].warp_of_byte)
                continue;
            const IrOp *a = users[i].op;
            for (int j = 0; j < n; j++) {
                const IrOp *b = users[j].op;
                bool overlap = j != i && a->smem_offset < b->smem_offset + b->smem_bytes &&
                               b->smem_offset < a->smem_offset + a->smem_bytes;
                if (overlap && (!users[j].warp_of_byte || !bytes_agree(&users[i], &users[j]))) {
                    users[i].warp_of_byte = NULL;
                    changed = true;
                    break;
                }
            }
        }
    }
    for (int i = 0; i < n; i++)
        users[i].op->scratch.warp_private = users[i].warp_of_byte != NULL;
}

/* The biggest stage buffer (a local_alloc not of mbarriers) of r and its nested regions, or
 * NULL: the one an overflow's error points at, with its slot count (the stage count of the loop
 * it feeds, which tl.range's num_stages may have set apart from the function's). */
static const IrOp *biggest_stage_buffer(const IrFunc *f, const IrRegion *r, const IrOp *best)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            best = biggest_stage_buffer(f, &op->regions[k], best);
        if (op->code == OP_LOCAL_ALLOC && !type_is_mbarriers(ir_type(f, op->results[0])) &&
            (!best || op->smem_bytes > best->smem_bytes))
            best = op;
    }
    return best;
}

bool pass_shared_alloc(IrFunc *f, const PassOptions *o, Diag *d)
{
    const IrOp *biggest = NULL;
    int64_t buffers_end = 0;
    place_buffers(f, &f->body, &buffers_end);
    int64_t most = alloc_region(f, &f->body, &biggest, 0);
    most = (most + 15) / 16 * 16;
    if (buffers_end > most)
        most = (buffers_end + 15) / 16 * 16;
    if (f->ws.consumer_groups > 1)
        most = place_group_scratch(f, most);
    int sm = o && o->sm > 0 ? o->sm : 90;
    int limit = shared_limit_bytes(sm);
    if (buffers_end > 0 && most > limit) {
        f->stages_overflow = most;
        const IrOp *biggest_buffer = biggest_stage_buffer(f, &f->body, NULL);
        SrcLoc loc = biggest_buffer ? biggest_buffer->loc : (SrcLoc){0};
        int stages =
            biggest_buffer ? ir_type(f, biggest_buffer->results[0]).shape[0] : f->num_stages;
        const char *msg =
            "software pipelining with num_stages=%d needs %lld bytes of shared memory "
            "(%lld for the stage buffers); sm_%d allows %d: lower num_stages or the "
            "block sizes";
        if (loc.file)
            diag_error(d, loc, msg, stages, (long long)most, (long long)buffers_end, sm, limit);
        else
            diag_plain_error(d, msg, stages, (long long)most, (long long)buffers_end, sm, limit);
        return false;
    }
    if (most > limit) {
        if (biggest && biggest->loc.file)
            diag_error(d, biggest->loc, "kernel needs %lld bytes of shared memory; sm_%d allows %d",
                       (long long)most, sm, limit);
        else
            diag_plain_error(d, "kernel needs %lld bytes of shared memory; sm_%d allows %d",
                             (long long)most, sm, limit);
        return false;
    }
    f->shared_bytes = (int)most;
    plan_dot_operands(f);
    mark_warp_private(f);
    return true;
}
