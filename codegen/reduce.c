/* reduce.c: reduce_sum, reduce_max, reduce_min, argmax and argmin along an axis: in each thread,
 * across lanes by butterfly shuffles, across warps through shared memory (each thread reading
 * every partial, or the lanes sharing the reads and shuffling, as the op's scratch record says).
 * docs/codegen.md "Reductions". */
#include "codegen/internal.h"

#include <stdlib.h>

typedef struct RedVal {
    LLVMValueRef v, i; /* value, and index along the axis for argmax/argmin */
} RedVal;

static RedVal combine(Cg *c, OpCode op, DType t, RedVal a, RedVal x)
{
    LLVMBuilderRef b = c->l->b;
    RedVal r = a;
    switch (op) {
    case OP_REDUCE_SUM: r.v = cg_binary(c, OP_ADD, t, a.v, x.v); break;
    case OP_REDUCE_MAX: r.v = cg_binary(c, OP_MAX, t, a.v, x.v); break;
    case OP_REDUCE_MIN: r.v = cg_binary(c, OP_MIN, t, a.v, x.v); break;
    default: {
        /* The first extreme wins: take x when strictly better, or equal with a smaller index.
         * NaNs are skipped (the interpreter's rule): a non-NaN beats a NaN, and two NaNs tie, so
         * an all-NaN row gives index 0. */
        Type st = type_scalar(t);
        LLVMValueRef better = cg_compare(c, op == OP_ARGMAX ? OP_CMP_GT : OP_CMP_LT, st, x.v, a.v);
        LLVMValueRef same = cg_compare(c, OP_CMP_EQ, st, x.v, a.v);
        if (dtype_is_float(t)) {
            LLVMValueRef a_nan =
                LLVMBuildFCmp(b, LLVMRealUNO, cg_widen(c, a.v), cg_widen(c, a.v), "");
            LLVMValueRef x_nan =
                LLVMBuildFCmp(b, LLVMRealUNO, cg_widen(c, x.v), cg_widen(c, x.v), "");
            better =
                LLVMBuildOr(b, better, LLVMBuildAnd(b, a_nan, LLVMBuildNot(b, x_nan, ""), ""), "");
            same = LLVMBuildOr(b, same, LLVMBuildAnd(b, a_nan, x_nan, ""), "");
        }
        LLVMValueRef tie = LLVMBuildAnd(b, same, LLVMBuildICmp(b, LLVMIntSLT, x.i, a.i, ""), "");
        LLVMValueRef take = LLVMBuildOr(b, better, tie, "");
        r.v = LLVMBuildSelect(b, take, x.v, a.v, "");
        r.i = LLVMBuildSelect(b, take, x.i, a.i, "");
        break;
    }
    }
    return r;
}

/* shfl.sync (PTX ISA §9.7.8.6) of any scalar, through i32 (64-bit values in two halves):
 * mode CG_SHFL_BFLY reads lane ^ arg, CG_SHFL_UP lane - arg (clamp 0: lanes below arg keep their
 * own value), CG_SHFL_DOWN lane + arg (clamp 31). */
LLVMValueRef cg_shuffle(Cg *c, LLVMValueRef v, CgShuffle mode, int arg)
{
    static const char *const intrinsic[] = {[CG_SHFL_BFLY] = "llvm.nvvm.shfl.sync.bfly.i32",
                                            [CG_SHFL_UP] = "llvm.nvvm.shfl.sync.up.i32",
                                            [CG_SHFL_DOWN] = "llvm.nvvm.shfl.sync.down.i32"};
    LLVMBuilderRef b = c->l->b;
    LLVMTypeRef ty = LLVMTypeOf(v);
    LLVMTypeKind kind = LLVMGetTypeKind(ty);
    unsigned bits = kind == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(ty)
                    : ty == c->l->f64           ? 64
                    : ty == c->l->f32           ? 32
                                                : 16;
    LLVMTypeRef ity = LLVMIntTypeInContext(c->l->ctx, bits);
    LLVMValueRef x = kind == LLVMIntegerTypeKind ? v : LLVMBuildBitCast(b, v, ity, "");
    LLVMValueRef halves[2];
    int nh = bits == 64 ? 2 : 1;
    for (int h = 0; h < nh; h++) {
        LLVMValueRef part =
            bits == 64  ? LLVMBuildTrunc(b, LLVMBuildLShr(b, x, LLVMConstInt(ity, 32 * h, 0), ""),
                                         c->l->i32, "")
            : bits < 32 ? LLVMBuildZExt(b, x, c->l->i32, "")
                        : x;
        LLVMValueRef args[4] = {cg_i32(c->l, -1), part, cg_i32(c->l, arg),
                                cg_i32(c->l, mode == CG_SHFL_UP ? 0 : 0x1f)};
        halves[h] = cg_call(c->l, intrinsic[mode], c->l->i32, args, 4);
    }
    LLVMValueRef r;
    if (bits == 64)
        r = LLVMBuildOr(
            b, LLVMBuildZExt(b, halves[0], ity, ""),
            LLVMBuildShl(b, LLVMBuildZExt(b, halves[1], ity, ""), LLVMConstInt(ity, 32, 0), ""),
            "");
    else if (bits < 32)
        r = LLVMBuildTrunc(b, halves[0], ity, "");
    else
        r = halves[0];
    return kind == LLVMIntegerTypeKind ? r : LLVMBuildBitCast(b, r, ty, "");
}

/* Byte address in shared memory of slot `s` (an i32 element index) of a reduction's partials:
 * the values at the op's offset, argmax/argmin's indices in a second array after them. */
static LLVMValueRef partial_addr(Cg *c, const IrOp *op, LLVMValueRef s, int eb, int64_t base)
{
    LLVMBuilderRef b = c->l->b;
    return cg_smem_addr(c, cg_add(b, cg_mul(b, s, cg_i32(c->l, eb), ""),
                                  cg_i32(c->l, cg_scratch_offset(c, op->smem_offset) + (int)base),
                                  ""));
}

/* Reads partial slot s (value, and index for argmax/argmin). */
static RedVal load_partial(Cg *c, const IrOp *op, LLVMValueRef s, DType vt, int64_t vbytes)
{
    LLVMBuilderRef b = c->l->b;
    int eb = dtype_bytes(vt);
    LLVMValueRef ld = LLVMBuildLoad2(b, cg_mem_type(c, vt), partial_addr(c, op, s, eb, 0), "");
    LLVMSetAlignment(ld, (unsigned)eb);
    RedVal x = {cg_from_mem(c, vt, ld), NULL};
    if (op->code == OP_ARGMAX || op->code == OP_ARGMIN) {
        x.i = LLVMBuildLoad2(b, c->l->i32, partial_addr(c, op, s, 4, vbytes), "");
        LLVMSetAlignment(x.i, 4);
    }
    return x;
}

/* Across the W warps along the axis, through the op's scratch (its record: strides [per output
 * element, per warp]): each warp stores its partial of every output element it holds, then the
 * partials are combined as the record says. serial: every thread reads all W partials of each of
 * its outputs. shuffle: the L lanes along the axis, which hold the same outputs, share the reads,
 * G = min(L, W) of them in a group: lane j reads partials j % G, j % G + G, ... (W / G each),
 * then log2(G) butterfly shuffles combine the group, which leaves every lane of it the same value
 * (each level combines the same two halves, in either order: exact for commutative ops). Per
 * output, W / G loads and log2(G) shuffles in place of W loads: Triton's way, and what a block
 * of 32 warps reducing one row needs (Liger's cross-entropy: 1 load and 5 shuffles instead of
 * 8 16-byte loads and 31 combines in every thread, twice per loop iteration). */
static bool reduce_across_warps(Cg *c, const IrOp *op, Dist *da, Dist *dr, RedVal *acc, int nr,
                                DType vt)
{
    LLVMBuilderRef b = c->l->b;
    int axis = (int)op->attr[0], W = da->warps[axis];
    bool arg = op->code == OP_ARGMAX || op->code == OP_ARGMIN;
    Type rt = ir_type(c->f, op->results[0]);
    int eb = dtype_bytes(vt);
    int64_t rnumel = type_numel(rt), vbytes = rnumel * W * eb;
    if (!cg_smem_check(c, op, vbytes + (arg ? rnumel * W * 4 : 0), op_name(op->code)))
        return false;
    const IrScratch *rec = &op->scratch;
    if (rec->ntiles != 1 || rec->tile[0].nstrides != 2 ||
        (rec->combine != SCRATCH_COMBINE_SERIAL && rec->combine != SCRATCH_COMBINE_SHUFFLE))
        FAIL(c, "%s across warps without a scratch record (shared_alloc)", op_name(op->code));
    int64_t row_stride = rec->tile[0].strides[0], warp_stride = rec->tile[0].strides[1];
    int L = da->lanes[axis], ls = da->lane_stride[axis];
    int G = rec->combine == SCRATCH_COMBINE_SERIAL ? 1 : L < W ? L : W;
    LLVMValueRef warp = cg_urem(b, da->warp_id[axis], cg_i32(c->l, W), "");
    cg_barrier(c->l);
    LLVMValueRef *rows = cg_regs(c, nr);
    int64_t rm[TRIC_MAX_RANK];
    cg_row_major_strides(rt, rm);
    for (int d = 0; d < rt.rank; d++)
        rm[d] *= row_stride;
    LLVMValueRef warp_base = cg_mul(b, warp, cg_i32(c->l, (int)warp_stride), "");
    for (int re = 0; re < nr; re++) {
        rows[re] = dr ? cg_strided_index(c, dr, re, rm) : cg_i32(c->l, 0);
        LLVMValueRef s = cg_add(b, rows[re], warp_base, "");
        LLVMValueRef st =
            LLVMBuildStore(b, cg_to_mem(c, vt, acc[re].v), partial_addr(c, op, s, eb, 0));
        LLVMSetAlignment(st, (unsigned)eb);
        if (arg) {
            st = LLVMBuildStore(b, acc[re].i, partial_addr(c, op, s, 4, vbytes));
            LLVMSetAlignment(st, 4);
        }
    }
    cg_barrier(c->l);
    /* this lane's first partial in its group: (lane / ls) % G, at warp stride */
    LLVMValueRef first = cg_i32(c->l, 0);
    if (G > 1)
        first = cg_mul(
            b, LLVMBuildAnd(b, cg_udiv(b, c->lane, cg_i32(c->l, ls), ""), cg_i32(c->l, G - 1), ""),
            cg_i32(c->l, (int)warp_stride), "");
    for (int re = 0; re < nr; re++) {
        LLVMValueRef own = cg_add(b, rows[re], first, "");
        for (int w = 0; w < W; w += G) {
            LLVMValueRef s = cg_add(b, own, cg_i32(c->l, (int)(w * warp_stride)), "");
            RedVal x = load_partial(c, op, s, vt, vbytes);
            acc[re] = w == 0 ? x : combine(c, op->code, vt, acc[re], x);
        }
    }
    for (int m = 1; m < G; m *= 2)
        for (int re = 0; re < nr; re++) {
            RedVal x = {cg_shuffle(c, acc[re].v, CG_SHFL_BFLY, m * ls), NULL};
            if (arg)
                x.i = cg_shuffle(c, acc[re].i, CG_SHFL_BFLY, m * ls);
            acc[re] = combine(c, op->code, vt, acc[re], x);
        }
    return true;
}

/* reduce/argmax along an axis: within each thread, then across the lanes that hold distinct
 * elements along the axis (butterfly shuffles), then across warps through shared memory (one slot
 * per warp per output element, at the strides of the op's scratch record). */
bool cg_lower_reduce(Cg *c, const IrOp *op)
{
    ValueId av = op->operands[0], r = op->results[0];
    int axis = (int)op->attr[0];
    Type at_ = ir_type(c->f, av), rt = ir_type(c->f, r);
    LVal *a = cg_value(c, av);
    if (c->failed)
        return false;
    Dist *da = cg_dist(c, a->layout, at_);
    Dist *dr = cg_dist_of(c, r);
    if (!da)
        FAIL(c, "reduction of a scalar");
    bool arg = op->code == OP_ARGMAX || op->code == OP_ARGMIN;
    DType vt = arg ? at_.dtype : rt.dtype;
    int nr = dr ? dr->nelems : 1;
    /* Output element of each input element, by its offsets with the axis removed. */
    int64_t rnumel = type_numel(rt);
    int32_t *slot = malloc(sizeof(int32_t) * (size_t)(rnumel > 0 ? rnumel : 1));
    for (int64_t i = 0; i < rnumel; i++)
        slot[i] = -1;
    for (int e = 0; e < nr; e++) {
        int64_t k = 0;
        for (int i = 0; dr && i < dr->rank; i++)
            k = k * rt.shape[i] + dr->off[e * dr->rank + i];
        slot[k] = e;
    }
    RedVal *acc = arena_alloc(c->arena, sizeof(RedVal) * (size_t)nr);
    bool *have = arena_alloc(c->arena, sizeof(bool) * (size_t)nr);
    for (int e = 0; e < da->nelems; e++) {
        int64_t k = 0;
        for (int i = 0, j = 0; i < da->rank; i++)
            if (i != axis)
                k = k * rt.shape[j++] + da->off[e * da->rank + i];
        int re = k < rnumel ? slot[k] : -1;
        if (re < 0) {
            free(slot);
            FAIL(c, "%s: the result layout does not hold input element %d's output",
                 op_name(op->code), e);
        }
        RedVal x = {cg_at(a, e), NULL};
        if (arg)
            x.i = cg_coord(c, da, e, axis);
        else
            x.v = cg_cast(c, at_.dtype, rt.dtype, x.v);
        acc[re] = have[re] ? combine(c, op->code, vt, acc[re], x) : x;
        have[re] = true;
    }
    free(slot);
    for (int re = 0; re < nr; re++)
        if (!have[re])
            FAIL(c, "%s: output element %d has no input in this thread", op_name(op->code), re);
    for (int m = 1; m < da->lanes[axis]; m *= 2)
        for (int re = 0; re < nr; re++) {
            RedVal x = {cg_shuffle(c, acc[re].v, CG_SHFL_BFLY, m * da->lane_stride[axis]), NULL};
            if (arg)
                x.i = cg_shuffle(c, acc[re].i, CG_SHFL_BFLY, m * da->lane_stride[axis]);
            acc[re] = combine(c, op->code, vt, acc[re], x);
        }
    if (da->warps[axis] > 1 && !reduce_across_warps(c, op, da, dr, acc, nr, vt))
        return false;
    LLVMValueRef *el = cg_regs(c, nr);
    for (int re = 0; re < nr; re++)
        el[re] = arg ? acc[re].i : acc[re].v;
    cg_set_value(c, r, el, nr, ir_value(c->f, r)->layout);
    return true;
}
