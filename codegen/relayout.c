/* relayout.c: a value in another layout. broadcast, expand_dims and trans relabel the registers a
 * thread already holds when the layouts place the elements alike (docs/layouts.md); convert_layout,
 * reshape and a trans whose registers cannot be relabelled go through shared memory
 * (docs/codegen.md "convert_layout, reshape, trans through shared memory"). */
#include "codegen/internal.h"

#include <stdlib.h>
#include <string.h>

/* Moves a value between layouts through shared memory (convert_layout, reshape, and trans where
 * registers cannot be relabelled): barrier (earlier readers of the scratch are done), every thread
 * stores what it holds, barrier, every thread loads what the result layout gives it. Where each
 * element goes is the op's scratch record (passes/shared_alloc.c, docs/layouts.md): a
 * convert_layout's tile in a swizzled #shared layout or at strides (padded rows), written and
 * read alike; a reshape's at row-major strides in the operand's shape, read row-major in the
 * result's; a trans's at the record's strides per operand dim, read with result dim i at operand
 * dim perm[i]'s stride (perm: result dim i is operand dim perm[i]). */
static bool convert_through_smem(Cg *c, const IrOp *op, const LVal *src, const Dist *ds,
                                 ValueId result, const int *perm)
{
    Type rt = ir_type(c->f, result);
    Dist *dd = cg_dist_of(c, result);
    if (!ds || !dd)
        FAIL(c, "%s of a scalar through shared memory", op_name(op->code));
    DType dt = rt.is_ptr ? DT_I64 : rt.dtype;
    int eb = shared_elem_bytes(rt);
    const IrScratch *s = &op->scratch;
    /* a warp-private copy (shared_alloc): each warp writes and reads only its own bytes */
    void (*sync)(CgLlvm *) = s->warp_private ? cg_warp_barrier : cg_barrier;
    /* a strided record has one stride per operand dim (a reshape's operand has its own rank) */
    int operand_rank = ir_type(c->f, op->operands[0]).rank;
    if (s->ntiles != 1 || (s->tile[0].layout <= 0 && s->tile[0].nstrides != operand_rank))
        FAIL(c, "%s through shared memory without a scratch record (shared_alloc)",
             op_name(op->code));
    if (op->code == OP_TRANS && s->tile[0].layout > 0)
        FAIL(c, "trans: a scratch record with a #shared layout (shared_alloc records strides)");
    if (s->tile[0].layout > 0) {
        /* A swizzled #shared layout (ir/layout.c): 16-byte chunks XOR-permuted per row, so
         * a warp's vector accesses down a column land in distinct banks. */
        const Layout *swizzled = &c->f->layouts[s->tile[0].layout];
        if (!cg_smem_check(c, op, type_numel(rt) * eb, op_name(op->code)))
            return false;
        sync(c->l);
        cg_smem_store_swizzled(c, src, ds, rt, swizzled, cg_scratch_offset(c, op->smem_offset));
        sync(c->l);
        LLVMValueRef *el =
            cg_smem_load_swizzled(c, dd, rt, swizzled, cg_scratch_offset(c, op->smem_offset));
        cg_set_value(c, result, el, dd->nelems, ir_value(c->f, result)->layout);
        return true;
    }
    int64_t st_in[TRIC_MAX_RANK], st_out[TRIC_MAX_RANK];
    if (op->code == OP_RESHAPE) {
        memcpy(st_in, s->tile[0].strides, sizeof st_in);
        cg_row_major_strides(rt, st_out);
    } else if (op->code == OP_TRANS) {
        memcpy(st_in, s->tile[0].strides, sizeof st_in);
        for (int i = 0; i < rt.rank; i++)
            st_out[i] = st_in[perm[i]];
    } else {
        memcpy(st_in, s->tile[0].strides, sizeof st_in);
        memcpy(st_out, st_in, sizeof st_in);
    }
    int64_t span = 1;
    for (int d = 0; d < rt.rank; d++)
        if (rt.shape[d] > 1)
            span += (int64_t)(rt.shape[d] - 1) * st_out[d];
    if (!cg_smem_check(c, op, span * eb, op_name(op->code)))
        return false;
    LVal tmp = *src;
    if (rt.is_ptr) { /* pointers travel as i64 */
        tmp.el = cg_regs(c, src->n);
        for (int i = 0; i < src->n; i++)
            tmp.el[i] = LLVMBuildPtrToInt(c->l->b, src->el[i], c->l->i64, "");
    }
    sync(c->l);
    cg_smem_store_all(c, &tmp, ds, dt, eb, cg_scratch_offset(c, op->smem_offset), st_in);
    sync(c->l);
    LLVMValueRef *el =
        cg_smem_load_all(c, dd, dt, eb, cg_scratch_offset(c, op->smem_offset), st_out);
    if (rt.is_ptr)
        for (int i = 0; i < dd->nelems; i++)
            el[i] = LLVMBuildIntToPtr(c->l->b, el[i], c->l->gptr, "");
    cg_set_value(c, result, el, dd->nelems, ir_value(c->f, result)->layout);
    return true;
}

/* Registers of dst gathered from src of the same thread without moving data: dst element e is the
 * src element whose offsets are src_off(e) (computed by the caller into want[]). Valid when each
 * src dim's base equals the matching dst dim's base (checked by the caller). Returns false when
 * some element is not held by the thread. */
static bool relabel(Cg *c, const LVal *src, const Dist *ds, const Dist *dd, const int *dim_from,
                    const int64_t *shift, LLVMValueRef *out)
{
    /* dim_from[i] = the dst dim that src dim i comes from, or -1 (src dim is size 1: offset 0);
     * shift (or NULL): src dim i's offset of dst's origin (a subtile's offsets) */
    int64_t numel = type_numel(ds->type);
    int32_t *where = malloc(sizeof(int32_t) * (size_t)numel);
    if (!where)
        return false;
    for (int64_t i = 0; i < numel; i++)
        where[i] = -1;
    for (int e = 0; e < ds->nelems; e++) {
        int64_t k = 0;
        for (int i = 0; i < ds->rank; i++)
            k = k * ds->type.shape[i] + ds->off[e * ds->rank + i];
        where[k] = e;
    }
    bool ok = true;
    for (int e = 0; e < dd->nelems && ok; e++) {
        int64_t k = 0;
        for (int i = 0; i < ds->rank; i++) {
            int64_t o = (dim_from[i] < 0 ? 0 : dd->off[e * dd->rank + dim_from[i]]) +
                        (shift ? shift[i] : 0);
            if (o < 0 || o >= ds->type.shape[i]) {
                ok = false;
                break;
            }
            k = k * ds->type.shape[i] + o;
        }
        if (ok && where[k] < 0)
            ok = false;
        if (ok)
            out[e] = src->el[where[k]];
    }
    free(where);
    return ok;
}

/* Do the bases of src dim i and dst dim dim_from[i] agree (the same cached value)? */
static bool bases_agree(const Dist *ds, const Dist *dd, const int *dim_from)
{
    for (int i = 0; i < ds->rank; i++) {
        if (dim_from[i] < 0) {
            if (ds->type.shape[i] != 1)
                return false;
            continue;
        }
        if (ds->base[i] != dd->base[dim_from[i]] && ds->type.shape[i] != 1)
            return false;
    }
    return true;
}

/* broadcast, expand_dims, trans, reshape: relabelled registers when the bases agree, else (reshape,
 * trans) through shared memory. dr and n are the result's distribution and register count. */
bool cg_lower_relayout(Cg *c, const IrOp *op, Dist *dr, int n)
{
    ValueId r = op->results[0];
    Type rt = ir_type(c->f, r);
    int rlayout = ir_value(c->f, r)->layout;
    LLVMValueRef *el;
    ValueId av = op->operands[0];
    LVal *a = cg_value(c, av);
    if (c->failed)
        return false;
    Type at_ = ir_type(c->f, av);
    if (at_.rank == 0) { /* a scalar: every element is it */
        el = cg_regs(c, n);
        for (int e = 0; e < n; e++)
            el[e] = a->el[0];
        cg_set_value(c, r, el, n, rlayout);
        return true;
    }
    Dist *da = cg_dist(c, a->layout, at_);
    if (!da)
        return false;
    int from[TRIC_MAX_RANK];
    bool can = op->code != OP_RESHAPE;
    for (int i = 0; i < at_.rank; i++) {
        if (op->code == OP_BROADCAST)
            from[i] = at_.shape[i] == 1 && rt.shape[i] != 1 ? -1 : i;
        else if (op->code == OP_EXPAND_DIMS)
            from[i] = i < op->attr[0] ? i : i + 1;
        else
            from[i] = -1;
    }
    int perm[TRIC_MAX_RANK];
    if (op->code == OP_TRANS)
        for (int i = 0; i < rt.rank; i++) {
            perm[i] = (int)op->attr[i];
            from[perm[i]] = i;
        }
    /* A trans with a scratch record goes through it (shared_alloc found no relabelling); one
     * without relabels. */
    if (op->code == OP_RESHAPE || (op->code == OP_TRANS && op->scratch.ntiles > 0))
        return convert_through_smem(c, op, a, da, r, perm);
    el = cg_regs(c, n);
    if (can && bases_agree(da, dr, from) && relabel(c, a, da, dr, from, NULL, el)) {
        cg_set_value(c, r, el, n, rlayout);
        return true;
    }
    if (op->code == OP_TRANS)
        FAIL(c, "trans: the registers cannot be relabelled and shared_alloc gave it no scratch "
                "record");
    FAIL(c,
         "%s: the result layout is not the operand's with the dim %s; the layout pass must "
         "give them matching layouts",
         op_name(op->code), op->code == OP_BROADCAST ? "stretched" : "inserted");
}

/* convert_layout: the same registers when the layout does not change, none when the result is a
 * dot operand that its dot stages itself (c->lazy_operand), relabelled registers from an #mma
 * accumulator to the #dot_op A of a chained dot (layout_convert_is_relabel), else through shared
 * memory. */
bool cg_lower_convert_layout(Cg *c, const IrOp *op)
{
    ValueId r = op->results[0];
    int rlayout = ir_value(c->f, r)->layout;
    ValueId av = op->operands[0];
    LVal *a = cg_value(c, av);
    if (c->failed)
        return false;
    Type at_ = ir_type(c->f, av);
    if (at_.rank == 0 || a->layout == rlayout) {
        c->vals[r] = *a;
        return true;
    }
    const Layout *L = &c->f->layouts[rlayout];
    if (L->kind == LAYOUT_DOT_OPERAND && c->lazy_operand[r]) {
        /* Not materialized: the FMA dot stages its operands in shared memory itself. */
        c->vals[r] = *a;
        return true;
    }
    Dist *da = cg_dist(c, a->layout, at_);
    if (!da)
        return false;
    if (layout_convert_is_relabel(c->f, a->layout, rlayout)) {
        /* #mma layouts alike, or an accumulator as the next dot's A: the same threads hold the
         * same elements (the offsets agree relative to the shared row and tig*2 bases; passes.h) */
        Dist *dd = cg_dist_of(c, r);
        int from[TRIC_MAX_RANK];
        for (int i = 0; i < TRIC_MAX_RANK; i++)
            from[i] = i;
        LLVMValueRef *el = dd ? cg_regs(c, dd->nelems) : NULL;
        if (el && a->n == 1 && da->nelems > 1) { /* one register serves every element */
            for (int e = 0; e < dd->nelems; e++)
                el[e] = a->el[0];
        } else if (!el || !relabel(c, a, da, dd, from, NULL, el))
            FAIL(c, "convert_layout: the registers do not hold the result layout's elements");
        cg_set_value(c, r, el, dd->nelems, rlayout);
        return true;
    }
    return convert_through_smem(c, op, a, da, r, NULL);
}

/* subtile: the block's registers picked from the tile's where shared_alloc gave it no scratch
 * (layout_subtile_is_relabel: the same layout, repeating at the offsets); else the tile goes to
 * its scratch at the record's row-major strides and each thread reads the block's elements it
 * holds, at the offsets. */
bool cg_lower_subtile(Cg *c, const IrOp *op)
{
    ValueId r = op->results[0], av = op->operands[0];
    LVal *a = cg_value(c, av);
    if (c->failed)
        return false;
    Type at = ir_type(c->f, av), rt = ir_type(c->f, r);
    if (at.is_ptr)
        FAIL(c, "subtile of a pointer tile is not lowered");
    Dist *da = cg_dist(c, a->layout, at), *dd = cg_dist_of(c, r);
    if (!da || !dd)
        return false;
    LLVMValueRef *el = cg_regs(c, dd->nelems);
    const IrScratch *s = &op->scratch;
    if (s->ntiles == 0) {
        int from[TRIC_MAX_RANK];
        for (int i = 0; i < TRIC_MAX_RANK; i++)
            from[i] = i;
        if (!bases_agree(da, dd, from) || !relabel(c, a, da, dd, from, op->attr, el))
            FAIL(c, "subtile: the tile's registers do not hold the block (and shared_alloc gave "
                    "it no scratch)");
        cg_set_value(c, r, el, dd->nelems, ir_value(c->f, r)->layout);
        return true;
    }
    if (s->ntiles != 1 || s->tile[0].layout > 0 || s->tile[0].nstrides != at.rank)
        FAIL(c, "subtile through shared memory without a strided scratch record (shared_alloc)");
    int eb = shared_elem_bytes(at);
    int64_t span = 1, shift = 0;
    for (int d = 0; d < at.rank; d++) {
        span += (int64_t)(at.shape[d] - 1) * s->tile[0].strides[d];
        shift += op->attr[d] * s->tile[0].strides[d];
    }
    if (!cg_smem_check(c, op, span * eb, "subtile"))
        return false;
    cg_barrier(c->l);
    cg_smem_store_all(c, a, da, at.dtype, eb, cg_scratch_offset(c, op->smem_offset),
                      s->tile[0].strides);
    cg_barrier(c->l);
    el = cg_smem_load_all(c, dd, rt.dtype, eb, cg_scratch_offset(c, op->smem_offset + shift * eb),
                          s->tile[0].strides);
    cg_set_value(c, r, el, dd->nelems, ir_value(c->f, r)->layout);
    return true;
}
