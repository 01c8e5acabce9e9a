/* scan.c: the inclusive scan (tl.cumsum, tl.cumprod, tl.associative_scan) along an axis.
 * docs/codegen.md "Scans".
 *
 * A blocked layout that covers the axis exactly once is scanned Triton's way (scan_by_shuffles):
 * in each thread along its run, across lanes with shfl.sync.up/down, across warps through shared
 * memory. Any other layout goes through shared memory with Hillis and Steele's data-parallel scan
 * ("Data Parallel Algorithms", CACM 29(12), 1986; scan_through_smem): after step k every element
 * holds the combination of the 2^k elements ending at it, so log2(len) steps finish. Each step
 * stores every value a thread holds, bar.sync (PTX ISA §9.7.13.1), loads the value d places
 * earlier along the axis (later when reversed), combines, and bar.sync again before the next step
 * overwrites the scratch: independent of the layout (blocked, sliced, #mma) and of element
 * replication, since a thread reads whatever element it needs by its coordinates. Neither order
 * is the interpreter's left-to-right one, so float sums may differ in rounding (integers and
 * max/min are exact). */
#include "codegen/internal.h"

/* Any layout: Hillis-Steele steps through the scratch. */
static bool scan_through_smem(Cg *c, const IrOp *op, const LVal *a, Dist *da)
{
    LLVMBuilderRef b = c->l->b;
    ValueId r = op->results[0];
    int axis = (int)op->attr[0];
    OpCode comb = (OpCode)op->attr[1];
    bool reverse = op->attr[2] != 0;
    Type t = ir_type(c->f, r);
    int n = da->nelems, len = t.shape[axis];
    LLVMValueRef *acc = cg_regs(c, n);
    for (int e = 0; e < n; e++)
        acc[e] = cg_at(a, e);
    if (len > 1) {
        int eb = dtype_bytes(t.dtype);
        if (!cg_smem_check(c, op, type_numel(t) * eb, "scan"))
            return false;
        int64_t rm[TRIC_MAX_RANK];
        cg_row_major_strides(t, rm);
        LLVMTypeRef mt = cg_mem_type(c, t.dtype);
        LLVMValueRef *index = cg_regs(c, n), *coord = cg_regs(c, n);
        for (int e = 0; e < n; e++) {
            index[e] = cg_strided_index(c, da, e, rm);
            coord[e] = cg_coord(c, da, e, axis);
        }
        LVal cur = {.el = acc, .n = n, .layout = a->layout};
        for (int d = 1; d < len; d *= 2) {
            /* The scratch may still be read by an earlier op or step. */
            cg_barrier(c->l);
            cg_smem_store_all(c, &cur, da, t.dtype, eb, op->smem_offset, rm);
            cg_barrier(c->l);
            LLVMValueRef *next = cg_regs(c, n);
            for (int e = 0; e < n; e++) {
                /* The partner d places before (after) along the axis, where there is one. */
                LLVMValueRef has =
                    reverse ? LLVMBuildICmp(b, LLVMIntSLT, coord[e], cg_i32(c->l, len - d), "")
                            : LLVMBuildICmp(b, LLVMIntSGE, coord[e], cg_i32(c->l, d), "");
                LLVMValueRef delta = cg_i32(c->l, (reverse ? 1 : -1) * (int64_t)d * rm[axis]);
                LLVMValueRef at =
                    LLVMBuildSelect(b, has, cg_add(b, index[e], delta, ""), index[e], "");
                LLVMValueRef byte = cg_add(b, cg_mul(b, at, cg_i32(c->l, eb), ""),
                                           cg_i32(c->l, op->smem_offset), "");
                LLVMValueRef ld = LLVMBuildLoad2(b, mt, cg_smem_addr(c, byte), "");
                LLVMSetAlignment(ld, (unsigned)eb);
                LLVMValueRef partner = cg_from_mem(c, t.dtype, ld);
                LLVMValueRef v = reverse ? cg_binary(c, comb, t.dtype, cur.el[e], partner)
                                         : cg_binary(c, comb, t.dtype, partner, cur.el[e]);
                if (!v)
                    FAIL(c, "scan: no %s on %s", op_name(comb), dtype_name(t.dtype));
                next[e] = LLVMBuildSelect(b, has, v, cur.el[e], "");
            }
            cur.el = next;
        }
        acc = cur.el;
    }
    cg_set_value(c, r, acc, n, ir_value(c->f, r)->layout);
    return true;
}

/* A blocked layout that covers the axis exactly once: each thread holds one run of spt
 * consecutive elements along it, lanes and warps follow (coordinate = (warp * tpw + lane) * spt
 * + j, docs/layouts.md). */
static bool axis_is_plain(Cg *c, const LVal *a, const Dist *da, int axis)
{
    if (a->layout <= 0 || a->layout >= c->f->nlayouts)
        return false;
    const Layout *L = &c->f->layouts[a->layout];
    if (L->kind != LAYOUT_BLOCKED || L->rank != da->rank)
        return false;
    return da->lanes[axis] == L->blocked.threads_per_warp[axis] &&
           da->warps[axis] == L->blocked.warps_per_cta[axis] && da->count[axis] == da->run[axis];
}

/* Triton's scan on a blocked layout: in each thread along its run, across the lanes along the
 * axis (Kogge-Stone with shfl.up, shfl.down reversed), across the warps along it through the
 * scratch (the last lane of each warp writes its warp's total per row, bar.sync, each thread
 * combines the totals of the warps before its own). Each element then combines, in scan order,
 * the earlier warps' total, the earlier lanes' total and its run's prefix. */
static bool scan_by_shuffles(Cg *c, const IrOp *op, const LVal *a, Dist *da)
{
    LLVMBuilderRef b = c->l->b;
    ValueId r = op->results[0];
    int axis = (int)op->attr[0];
    OpCode comb = (OpCode)op->attr[1];
    bool reverse = op->attr[2] != 0;
    Type t = ir_type(c->f, r);
    DType dt = t.dtype;
    int n = da->nelems, run = da->run[axis], lanes = da->lanes[axis], W = da->warps[axis];
    /* Groups: the thread's elements with the same coordinates off the axis; slot j of a group is
     * the element j along the run (the local index along the axis). */
    int ngroups = n / run;
    int *member = arena_alloc(c->arena, sizeof(int) * (size_t)n);
    int *first = arena_alloc(c->arena, sizeof(int) * (size_t)ngroups);
    int nfound = 0;
    for (int e = 0; e < n; e++) {
        int g = -1;
        for (int k = 0; k < nfound && g < 0; k++) {
            bool same = true;
            for (int d = 0; d < da->rank && same; d++)
                same = d == axis || da->idx[first[k] * da->rank + d] == da->idx[e * da->rank + d];
            if (same)
                g = k;
        }
        if (g < 0) {
            if (nfound == ngroups)
                FAIL(c, "scan: more groups than %d", ngroups);
            g = nfound++;
            first[g] = e;
        }
        int j = da->idx[e * da->rank + axis];
        if (j < 0 || j >= run)
            FAIL(c, "scan: element %d at run index %d", e, j);
        member[g * run + j] = e;
    }
    if (nfound != ngroups)
        FAIL(c, "scan: %d groups, expected %d", nfound, ngroups);
    LLVMValueRef *acc = cg_regs(c, n), *total = cg_regs(c, ngroups);
    /* 1. Along each thread's run, in scan order. */
    for (int g = 0; g < ngroups; g++) {
        LLVMValueRef prev = NULL;
        for (int s = 0; s < run; s++) {
            int e = member[g * run + (reverse ? run - 1 - s : s)];
            LLVMValueRef v = cg_at(a, e);
            if (prev && !(v = cg_binary(c, comb, dt, prev, v)))
                FAIL(c, "scan: no %s on %s", op_name(comb), dtype_name(dt));
            acc[e] = prev = v;
        }
        total[g] = prev;
    }
    /* 2. Across the lanes along the axis. */
    LLVMValueRef lane_a = NULL, *lane_prefix = NULL, has_lane_prefix = NULL;
    if (lanes > 1) {
        int stride = da->lane_stride[axis];
        lane_a = cg_urem(b, cg_udiv(b, c->lane, cg_i32(c->l, stride), ""), cg_i32(c->l, lanes), "");
        for (int d = 1; d < lanes; d *= 2) {
            LLVMValueRef ok =
                reverse ? LLVMBuildICmp(b, LLVMIntULT, lane_a, cg_i32(c->l, lanes - d), "")
                        : LLVMBuildICmp(b, LLVMIntUGE, lane_a, cg_i32(c->l, d), "");
            for (int g = 0; g < ngroups; g++) {
                LLVMValueRef y =
                    cg_shuffle(c, total[g], reverse ? CG_SHFL_DOWN : CG_SHFL_UP, d * stride);
                total[g] =
                    LLVMBuildSelect(b, ok, cg_binary(c, comb, dt, y, total[g]), total[g], "");
            }
        }
        /* The lanes before this one (after it, reversed): the inclusive total one lane back. */
        lane_prefix = cg_regs(c, ngroups);
        has_lane_prefix = reverse
                              ? LLVMBuildICmp(b, LLVMIntULT, lane_a, cg_i32(c->l, lanes - 1), "")
                              : LLVMBuildICmp(b, LLVMIntUGE, lane_a, cg_i32(c->l, 1), "");
        for (int g = 0; g < ngroups; g++)
            lane_prefix[g] = cg_shuffle(c, total[g], reverse ? CG_SHFL_DOWN : CG_SHFL_UP, stride);
    }
    /* 3. Across the warps along the axis: slot [row][warp], row the group's row-major index
     * with the axis removed. */
    LLVMValueRef *warp_prefix = NULL, *has_warp_prefix = NULL;
    if (W > 1) {
        int eb = dtype_bytes(dt);
        int64_t rows = type_numel(t) / t.shape[axis];
        if (!cg_smem_check(c, op, rows * W * eb, "scan"))
            return false;
        LLVMTypeRef mt = cg_mem_type(c, dt);
        LLVMValueRef warp = cg_urem(b, da->warp_id[axis], cg_i32(c->l, W), "");
        int64_t rstride[TRIC_MAX_RANK];
        for (int d = da->rank - 1, s = 1; d >= 0; d--) {
            rstride[d] = d == axis ? 0 : s;
            s *= d == axis ? 1 : t.shape[d];
        }
        LLVMValueRef *row = cg_regs(c, ngroups);
        for (int g = 0; g < ngroups; g++) {
            LLVMValueRef idx = cg_i32(c->l, 0);
            for (int d = 0; d < da->rank; d++)
                if (d != axis && t.shape[d] > 1)
                    idx = cg_add(
                        b, idx,
                        cg_mul(b, cg_coord(c, da, first[g], d), cg_i32(c->l, rstride[d]), ""), "");
            row[g] = idx;
        }
        LLVMValueRef last_lane =
            lanes > 1
                ? LLVMBuildICmp(b, LLVMIntEQ, lane_a, cg_i32(c->l, reverse ? 0 : lanes - 1), "")
                : LLVMConstInt(c->l->i1, 1, 0);
        cg_barrier(c->l);
        LLVMBasicBlockRef store_bb = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "scan.totals");
        LLVMBasicBlockRef join_bb = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "scan.join");
        LLVMBuildCondBr(b, last_lane, store_bb, join_bb);
        LLVMPositionBuilderAtEnd(b, store_bb);
        for (int g = 0; g < ngroups; g++) {
            LLVMValueRef slot = cg_add(b, cg_mul(b, row[g], cg_i32(c->l, W), ""), warp, "");
            LLVMValueRef at =
                cg_add(b, cg_mul(b, slot, cg_i32(c->l, eb), ""), cg_i32(c->l, op->smem_offset), "");
            LLVMValueRef st = LLVMBuildStore(b, cg_to_mem(c, dt, total[g]), cg_smem_addr(c, at));
            LLVMSetAlignment(st, (unsigned)eb);
        }
        LLVMBuildBr(b, join_bb);
        LLVMPositionBuilderAtEnd(b, join_bb);
        cg_barrier(c->l);
        warp_prefix = cg_regs(c, ngroups);
        has_warp_prefix = cg_regs(c, ngroups);
        for (int g = 0; g < ngroups; g++) {
            LLVMValueRef p = NULL, have = LLVMConstInt(c->l->i1, 0, 0);
            for (int s = 0; s < W; s++) {
                int w = reverse ? W - 1 - s : s;
                LLVMValueRef slot =
                    cg_add(b, cg_mul(b, row[g], cg_i32(c->l, W), ""), cg_i32(c->l, w), "");
                LLVMValueRef at = cg_add(b, cg_mul(b, slot, cg_i32(c->l, eb), ""),
                                         cg_i32(c->l, op->smem_offset), "");
                LLVMValueRef ld = LLVMBuildLoad2(b, mt, cg_smem_addr(c, at), "");
                LLVMSetAlignment(ld, (unsigned)eb);
                LLVMValueRef x = cg_from_mem(c, dt, ld);
                /* warp w comes before this thread's warp in scan order */
                LLVMValueRef before = reverse
                                          ? LLVMBuildICmp(b, LLVMIntUGT, cg_i32(c->l, w), warp, "")
                                          : LLVMBuildICmp(b, LLVMIntULT, cg_i32(c->l, w), warp, "");
                LLVMValueRef next =
                    p ? LLVMBuildSelect(b, have, cg_binary(c, comb, dt, p, x), x, "") : x;
                p = p ? LLVMBuildSelect(b, before, next, p, "") : next;
                have = LLVMBuildOr(b, have, before, "");
            }
            warp_prefix[g] = p;
            has_warp_prefix[g] = have;
        }
    }
    /* 4. Each element: earlier warps, earlier lanes, its run's prefix. */
    for (int g = 0; g < ngroups; g++) {
        LLVMValueRef prefix = NULL, has = NULL;
        if (lane_prefix) {
            prefix = lane_prefix[g];
            has = has_lane_prefix;
        }
        if (warp_prefix) {
            if (prefix) {
                LLVMValueRef both = cg_binary(c, comb, dt, warp_prefix[g], prefix);
                prefix =
                    LLVMBuildSelect(b, has_warp_prefix[g],
                                    LLVMBuildSelect(b, has, both, warp_prefix[g], ""), prefix, "");
                has = LLVMBuildOr(b, has, has_warp_prefix[g], "");
            } else {
                prefix = warp_prefix[g];
                has = has_warp_prefix[g];
            }
        }
        if (!prefix)
            continue;
        for (int j = 0; j < run; j++) {
            int e = member[g * run + j];
            acc[e] = LLVMBuildSelect(b, has, cg_binary(c, comb, dt, prefix, acc[e]), acc[e], "");
        }
    }
    cg_set_value(c, r, acc, n, ir_value(c->f, r)->layout);
    return true;
}

bool cg_lower_scan(Cg *c, const IrOp *op)
{
    ValueId av = op->operands[0], r = op->results[0];
    int axis = (int)op->attr[0];
    LVal *a = cg_value(c, av);
    if (c->failed)
        return false;
    Dist *da = cg_dist(c, a->layout, ir_type(c->f, av));
    if (!da)
        FAIL(c, "scan of a scalar");
    /* The layout pass gives the result its operand's layout: the registers carry over. */
    if (ir_value(c->f, r)->layout != a->layout)
        FAIL(c, "scan: the result's layout differs from its operand's");
    if (axis_is_plain(c, a, da, axis))
        return scan_by_shuffles(c, op, a, da);
    return scan_through_smem(c, op, a, da);
}
