/* join_split.c: join and split as register relabels. The layout pass (passes/layouts.c,
 * assign_join / assign_split) gives the size-2 dim of join's result and split's operand to each
 * thread (sizePerThread 2, one lane, one warp) and places the other dims as in the rank-lower side,
 * so a thread holds both halves of every pair it holds, and nothing moves: Triton lowers tt.join
 * and tt.split the same way (JoinOpConversion / SplitOpConversion in its TritonGPUToLLVM). The
 * reshape of tl.interleave ([..., N, 2] -> [..., 2N]) is one too when the layout pass folded the
 * pair into dim N (layout_reshape_is_relabel, ir/layout.c). */
#include "codegen/internal.h"

#include <stdlib.h>

/* The register of ds holding the element at row-major index k of ds's shape, -1 where the thread
 * holds none: where[k]. */
static int32_t *register_of_index(Cg *c, const Dist *ds)
{
    int64_t numel = type_numel(ds->type);
    int32_t *where = arena_alloc(c->arena, sizeof(int32_t) * (size_t)numel);
    for (int64_t i = 0; i < numel; i++)
        where[i] = -1;
    for (int e = ds->nelems - 1; e >= 0; e--) {
        int64_t k = 0;
        for (int i = 0; i < ds->rank; i++)
            k = k * ds->type.shape[i] + ds->off[e * ds->rank + i];
        where[k] = e;
    }
    return where;
}

/* Whether the first `rank` dims of the two distributions start at the same coordinate in every
 * thread: their bases are the same cached value (distribution.c keys them by formula), or the
 * dim has one element. */
static bool leading_bases_agree(const Dist *x, const Dist *y, int rank)
{
    for (int i = 0; i < rank; i++)
        if (x->type.shape[i] != 1 && x->base[i] != y->base[i])
            return false;
    return true;
}

/* The registers of the rank-(r+1) distribution wide picked from the rank-r distribution narrow:
 * element e of wide is element (wide's coordinates 0..r-1) of half[last coordinate]. When
 * narrow_is_result, wide is the source instead (split): element e of narrow is element (narrow's
 * coordinates, half) of the source. */
static bool relabel_pairs(Cg *c, const IrOp *op, const Dist *narrow, const Dist *wide,
                          LVal *const *halves, bool narrow_is_result, int split_half,
                          LLVMValueRef *out)
{
    int r = narrow->rank;
    if (wide->rank != r + 1 || !leading_bases_agree(narrow, wide, r))
        FAIL(c,
             "%s: the layouts of the pair and of its halves do not place the leading dims alike; "
             "the layout pass must give them layouts that hold the size-2 dim in each thread",
             op_name(op->code));
    if (narrow_is_result) {
        int32_t *where = register_of_index(c, wide);
        for (int e = 0; e < narrow->nelems; e++) {
            int64_t k = 0;
            for (int i = 0; i < r; i++)
                k = k * narrow->type.shape[i] + narrow->off[e * r + i];
            k = k * 2 + split_half;
            if (where[k] < 0)
                FAIL(c, "split: a thread does not hold both halves of its pairs");
            out[e] = cg_at(halves[0], where[k]);
        }
        return true;
    }
    int32_t *where = register_of_index(c, narrow);
    for (int e = 0; e < wide->nelems; e++) {
        int64_t k = 0;
        for (int i = 0; i < r; i++)
            k = k * narrow->type.shape[i] + wide->off[e * (r + 1) + i];
        int half = wide->off[e * (r + 1) + r];
        if (half < 0 || half > 1 || where[k] < 0)
            FAIL(c, "join: a thread does not hold the operands' elements of its pairs");
        out[e] = cg_at(halves[half], where[k]);
    }
    return true;
}

/* The registers of op's operand 0 and their distribution (dr: the result's, checked too). */
static bool operand_dist(Cg *c, const IrOp *op, const Dist *dr, LVal **a, Dist **da)
{
    *a = cg_value(c, op->operands[0]);
    if (c->failed)
        return false;
    *da = cg_dist(c, (*a)->layout, ir_type(c->f, op->operands[0]));
    if (!*da || !dr)
        FAIL(c, "%s of values without a layout", op_name(op->code));
    return true;
}

bool cg_lower_join_split(Cg *c, const IrOp *op, Dist *dr, int n)
{
    LVal *a;
    Dist *da;
    if (!operand_dist(c, op, dr, &a, &da))
        return false;
    LLVMValueRef *el = cg_regs(c, n);
    if (op->code == OP_JOIN) {
        LVal *b = cg_value(c, op->operands[1]);
        if (c->failed)
            return false;
        if (a->layout != b->layout)
            FAIL(c, "join: operands in different layouts; the layout pass must give them one");
        LVal *halves[2] = {a, b};
        if (!relabel_pairs(c, op, da, dr, halves, false, 0, el))
            return false;
    } else {
        LVal *halves[1] = {a};
        if (!relabel_pairs(c, op, dr, da, halves, true, (int)op->attr[0], el))
            return false;
    }
    cg_set_value(c, op->results[0], el, n, ir_value(c->f, op->results[0])->layout);
    return true;
}

/* interleave's reshape: result element 2n + k (offset o from a base twice the operand's along the
 * merged dim, since its sizePerThread is twice) is operand element (n, k) = (o / 2, o % 2) from
 * the operand's base; the leading dims' bases are the same values. */
bool cg_lower_merge_pairs(Cg *c, const IrOp *op, Dist *dr, int n)
{
    LVal *a;
    Dist *da;
    if (!operand_dist(c, op, dr, &a, &da))
        return false;
    int r = dr->rank;
    if (!leading_bases_agree(dr, da, r - 1))
        FAIL(c, "reshape: the pairs' leading dims are placed unlike the result's");
    int32_t *where = register_of_index(c, da);
    LLVMValueRef *el = cg_regs(c, n);
    for (int e = 0; e < dr->nelems; e++) {
        int64_t k = 0;
        for (int i = 0; i + 1 < r; i++)
            k = k * da->type.shape[i] + dr->off[e * r + i];
        int o = dr->off[e * r + r - 1];
        k = (k * da->type.shape[r - 1] + o / 2) * 2 + o % 2;
        if (where[k] < 0)
            FAIL(c, "reshape: a thread does not hold the pairs of its elements");
        el[e] = cg_at(a, where[k]);
    }
    cg_set_value(c, op->results[0], el, n, ir_value(c->f, op->results[0])->layout);
    return true;
}
