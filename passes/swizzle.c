/* swizzle.c: the shared layout of every tile that lives in shared memory across ops (the
 * local_alloc buffers of the pipelining pass and their slot views), and the rule for the
 * staging area of a wgmma dot the pipeline did not take (shared_wgmma_staging: codegen stores the
 * operands there in exactly these layouts).
 *
 * Requires: pipeline (pass_pipeline), layouts. Guarantees: every local_alloc result and every
 * slot view has a #shared layout; a view's layout is its buffer's.
 *
 * The layout is NVMMA's (PTX ISA 9.7.15.5.1.2 "Shared memory matrix layout", the 128/64/32-byte
 * swizzle modes; CUTLASS's Swizzle<3,4,3>, <2,4,3>, <1,4,3>): the contiguous dim is cut into
 * atoms of `swizzle` bytes; inside an atom, row r is `swizzle` bytes at r * swizzle and its
 * 16-byte chunk j sits at chunk j ^ ((r / per_phase) % max_phase). Eight consecutive rows then
 * put a given chunk in eight distinct 16-byte bank groups (128-byte mode), so the eight row
 * addresses of an ldmatrix, the 16-byte cp.async writes of eight threads along one column and
 * wgmma's own reads are free of bank conflicts, and wgmma reads the tile through a descriptor
 * without any copy. The widest mode whose atom divides the contiguous extent is chosen (Triton's
 * NVMMASharedEncoding rule).
 *
 * Scratch that lives inside one op follows rules defined here too: convert_layout's tiles
 * (shared_scratch_swizzle), a non-pipelined wgmma's staging (shared_wgmma_staging) and a
 * reduction's cross-warp partials (shared_reduce_scratch); shared_alloc sizes them and codegen
 * addresses them by these rules. */
#include "passes/passes.h"

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

void shared_reduce_scratch(const IrFunc *f, const IrOp *op, int64_t *row_stride,
                           int64_t *warp_stride)
{
    *row_stride = 1;
    *warp_stride = type_numel(ir_type(f, op->results[0]));
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
 * order their copies run in: A's dim 1, B's dim 0 (PTX ISA 9.7.15.5.1: the transposed, MN-major
 * form is for 16-bit types only). */
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
                contig[buf] = which == 0 ? 1 : 0;
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
