/* swizzle.c: the shared layout of every tile that lives in shared memory across ops (the
 * local_alloc buffers of the pipelining pass and their slot views).
 *
 * Requires: pipeline (pass_pipeline), layouts. Guarantees: every local_alloc result and every
 * slot view has a #shared layout; a view's layout is its buffer's. A buffer the pipeline gave a
 * layout already keeps it (unswizzled: an FMA dot's A^T or B slot, or a tile that only whole
 * local_loads read, copied in pieces under 16 bytes: pipeline_loops.c, plain_slot_layout).
 *
 * The layout is NVMMA's (PTX ISA 9.7.15.5.1.2 "Shared memory matrix layout", the 128/64/32-byte
 * swizzle modes; CUTLASS's Swizzle<3,4,3>, <2,4,3>, <1,4,3>): the contiguous dim is cut into
 * atoms of `swizzle` bytes; inside an atom, row r is `swizzle` bytes at r * swizzle and its
 * 16-byte chunk j sits at chunk j ^ ((r / per_phase) % max_phase). Eight consecutive rows then
 * put a given chunk in eight distinct 16-byte bank groups (128-byte mode), so the eight row
 * addresses of an ldmatrix, the 16-byte cp.async writes of eight threads along one column and
 * wgmma's own reads are free of bank conflicts, and wgmma reads the tile through a descriptor
 * without any copy. The widest mode whose atom divides the contiguous extent is chosen (Triton's
 * NVMMASharedEncoding rule); shared_layout_for (ir/layout.c) builds it.
 *
 * Scratch that lives inside one op follows rules of the same layout algebra (ir/layout.c):
 * convert_layout's tiles (shared_scratch_swizzle), a non-pipelined mma or wgmma dot's staging
 * (shared_dot_staging_swizzle, shared_wgmma_staging) and a reduction's cross-warp partials
 * (shared_reduce_scratch); shared_alloc.c applies them, writes the choice in each op's scratch
 * record (docs/ir.md "Scratch records") and sizes the scratch by it, and codegen addresses
 * what the record says. */
#include "passes/passes.h"

/* The contiguous dim of the tile an async_copy writes: its pointers' blocked order[0]. */
static int copy_contig_dim(const IrFunc *f, const IrOp *copy)
{
    int l = f->values[copy->operands[1]].layout;
    if (l > 0 && l < f->nlayouts && f->layouts[l].kind == LAYOUT_BLOCKED)
        return f->layouts[l].blocked.order[0];
    return ir_type(f, copy->operands[1]).rank - 1;
}

/* The contiguous dim chosen for each buffer not fixed already: the order of its first
 * async_copy. Found by walking every region; views are mapped back to their buffer through the
 * slot op. */
static void find_copies(IrFunc *f, IrRegion *r, int *contig)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            find_copies(f, &op->regions[k], contig);
        if (op->code != OP_ASYNC_COPY)
            continue;
        const IrOp *view = f->values[op->operands[0]].def;
        if (!view || view->code != OP_SLOT)
            continue;
        ValueId buf = view->operands[0];
        if (contig[buf] < 0)
            contig[buf] = copy_contig_dim(f, op);
    }
}

/* The buffer behind a wgmma operand (a slot view of it), or 0. */
static ValueId operand_buffer(const IrFunc *f, ValueId operand)
{
    const IrOp *view = f->values[operand].def;
    return view && view->code == OP_SLOT ? view->operands[0] : 0;
}

/* fp32 and fp8 buffers that wgmma reads (its tf32 and .e4m3/.e5m2 forms) are K-major whatever
 * order their copies run in: A's dim 1, B's dim 0, or dim 1 of a B read as B^T (trans_b: the
 * slot holds [N, K]) (PTX ISA 9.7.15.5.1: the transposed, MN-major form is for 16-bit types
 * only). */
static void find_tf32_operands(IrFunc *f, IrRegion *r, int *contig)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            find_tf32_operands(f, &op->regions[k], contig);
        if (op->code != OP_WGMMA)
            continue;
        for (int which = 0; which < 2; which++) {
            ValueId buf = operand_buffer(f, op->operands[which]);
            DType dt = ir_type(f, op->operands[which]).dtype;
            if (buf && (dt == DT_F32 || dtype_is_fp8(dt)))
                contig[buf] = which == 0 || op->attr[1] ? 1 : 0;
        }
    }
}

/* Gives every local_alloc its layout (contig[] chosen, else the last dim) and every slot view
 * its buffer's. Returns false with an error when a tile has no swizzled form. */
static bool assign(IrFunc *f, IrRegion *r, const int *contig, Diag *d)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            if (!assign(f, &op->regions[k], contig, d))
                return false;
        if (op->code == OP_LOCAL_ALLOC) {
            ValueId buf = op->results[0];
            Type t = ir_type(f, buf), tile = t;
            if (type_is_mbarriers(t))
                continue; /* mbarriers (tma.c): no tile, no layout */
            int have = f->values[buf].layout;
            if (have > 0 && have < f->nlayouts && f->layouts[have].kind == LAYOUT_SHARED)
                continue; /* chosen by the pipeline: an unswizzled tile read back whole only */
            tile.rank = (uint8_t)(t.rank - 1);
            for (int k = 0; k + 1 < t.rank; k++)
                tile.shape[k] = t.shape[k + 1];
            tile.is_smem = true;
            Layout l;
            int cd = contig[buf] >= 0 ? contig[buf] : tile.rank - 1;
            if (tile.rank == 1) {
                /* a row of elements (pipeline_loops.c: a load feeding no dot, read back whole):
                 * element i at byte i * its size; no reader walks it in 16-byte chunks by rows,
                 * so there is nothing to swizzle (swizzle 0) */
                l = (Layout){.kind = LAYOUT_SHARED, .rank = 1};
                l.shared.vec = 1;
                l.shared.per_phase = 1;
                l.shared.max_phase = 1;
                f->values[buf].layout = ir_layout_intern(f, &l);
                continue;
            }
            if (!shared_layout_for(&l, tile, cd)) {
                TRIC_INTERNAL(d,
                              "swizzle: no swizzled layout for a %s tile contiguous along dim %d",
                              type_str(f->arena, tile), cd);
                return false;
            }
            f->values[buf].layout = ir_layout_intern(f, &l);
        } else if (op->code == OP_SLOT) {
            f->values[op->results[0]].layout = f->values[op->operands[0]].layout;
        }
    }
    return true;
}

bool pass_swizzle(IrFunc *f, const PassOptions *o, Diag *d)
{
    (void)o;
    int *contig = arena_alloc(f->arena, sizeof(int) * (size_t)(f->nvalues > 0 ? f->nvalues : 1));
    for (int v = 0; v < f->nvalues; v++)
        contig[v] = -1;
    find_tf32_operands(f, &f->body, contig);
    find_copies(f, &f->body, contig);
    return assign(f, &f->body, contig, d);
}
