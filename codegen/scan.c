/* scan.c: the inclusive scan (tl.cumsum, tl.cumprod, tl.associative_scan) along an axis.
 * docs/codegen.md "Scans".
 *
 * The op's scratch record says which of two ways (shared_scan_scratch chose; docs/ir.md "Scratch
 * records"). `shuffle`, for a blocked layout that covers the axis exactly once (checked here), is
 * Triton's way (scan_by_shuffles):
 * in each thread along its run, across lanes with shfl.sync.up/down, across warps through shared
 * memory. `steps`, for any other layout, goes through shared memory with Hillis and Steele's scan
 * ("Data Parallel Algorithms", CACM 29(12), 1986; scan_through_smem): after step k every element
 * holds the combination of the 2^k elements ending at it, so log2(len) steps finish. Each step
 * stores every value a thread holds, bar.sync (PTX ISA §9.7.13.1), loads the value d places
 * earlier along the axis (later when reversed), combines, and bar.sync again before the next step
 * overwrites the scratch: independent of the layout (blocked, sliced, #mma) and of element
 * replication, since a thread reads whatever element it needs by its coordinates. Neither order
 * is the interpreter's left-to-right one, so float sums may differ in rounding (integers and
 * max/min are exact). Where each value sits in the scratch is the op's scratch record
 * (passes/shared_alloc.c, shared_scan_scratch: the block row-major, or [row][warp] totals). */
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
        const IrScratch *s = &op->scratch;
        if (s->ntiles != 1 || s->tile[0].layout > 0 || s->tile[0].nstrides != t.rank)
            FAIL(c,
                 "scan through shared memory without a scratch record of the block's %d "
                 "strides (shared_alloc)",
                 t.rank);
        const int64_t *rm = s->tile[0].strides; /* row-major (shared_alloc) */
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
            cg_smem_store_all(c, &cur, da, t.dtype, eb, cg_scratch_offset(c, op->smem_offset), rm);
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
                                           cg_i32(c->l, cg_scratch_offset(c, op->smem_offset)), "");
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

/* scan_by_shuffles' state, shared by its steps. A group is the thread's elements with the same
 * coordinates off the axis; slot j of a group is the element j along the run (the local index
 * along the axis). */
typedef struct {
    Cg *c;
    const IrOp *op;
    const LVal *a;
    Dist *da;
    int axis;
    OpCode comb;
    bool reverse;
    Type t;
    int n, run, lanes, W; /* elements per thread; run, lanes and warps along the axis */
    int ngroups;
    int *member;         /* [group * run + j]: the element at slot j of the group */
    int *first;          /* [group]: its first element */
    LLVMValueRef *acc;   /* [element]: its scan so far */
    LLVMValueRef *total; /* [group]: the total of its run (of the lanes' runs after step 2) */
    LLVMValueRef lane_a; /* the lane's index along the axis (lanes > 1) */
    LLVMValueRef *lane_prefix, has_lane_prefix;  /* the earlier lanes' total, per group */
    LLVMValueRef *warp_prefix, *has_warp_prefix; /* the earlier warps' total, per group */
} ShflScan;

/* Sorts the thread's elements into groups (ShflScan.member, .first). */
static bool group_elements(ShflScan *S)
{
    Cg *c = S->c;
    const Dist *da = S->da;
    int run = S->run, ngroups = S->ngroups;
    S->member = arena_alloc(c->arena, sizeof(int) * (size_t)S->n);
    S->first = arena_alloc(c->arena, sizeof(int) * (size_t)ngroups);
    int nfound = 0;
    for (int e = 0; e < S->n; e++) {
        int g = -1;
        for (int k = 0; k < nfound && g < 0; k++) {
            bool same = true;
            for (int d = 0; d < da->rank && same; d++)
                same = d == S->axis ||
                       da->idx[S->first[k] * da->rank + d] == da->idx[e * da->rank + d];
            if (same)
                g = k;
        }
        if (g < 0) {
            if (nfound == ngroups)
                FAIL(c, "scan: more groups than %d", ngroups);
            g = nfound++;
            S->first[g] = e;
        }
        int j = da->idx[e * da->rank + S->axis];
        if (j < 0 || j >= run)
            FAIL(c, "scan: element %d at run index %d", e, j);
        S->member[g * run + j] = e;
    }
    if (nfound != ngroups)
        FAIL(c, "scan: %d groups, expected %d", nfound, ngroups);
    return true;
}

/* Step 1: along each thread's run, in scan order. */
static bool scan_runs(ShflScan *S)
{
    Cg *c = S->c;
    DType dt = S->t.dtype;
    int run = S->run;
    S->acc = cg_regs(c, S->n);
    S->total = cg_regs(c, S->ngroups);
    for (int g = 0; g < S->ngroups; g++) {
        LLVMValueRef prev = NULL;
        for (int s = 0; s < run; s++) {
            int e = S->member[g * run + (S->reverse ? run - 1 - s : s)];
            LLVMValueRef v = cg_at(S->a, e);
            if (prev && !(v = cg_binary(c, S->comb, dt, prev, v)))
                FAIL(c, "scan: no %s on %s", op_name(S->comb), dtype_name(dt));
            S->acc[e] = prev = v;
        }
        S->total[g] = prev;
    }
    return true;
}

/* Step 2: across the lanes along the axis (lanes > 1), Kogge-Stone on the run totals. */
static void scan_lanes(ShflScan *S)
{
    Cg *c = S->c;
    LLVMBuilderRef b = c->l->b;
    DType dt = S->t.dtype;
    int lanes = S->lanes, stride = S->da->lane_stride[S->axis];
    bool reverse = S->reverse;
    S->lane_a = cg_urem(b, cg_udiv(b, c->lane, cg_i32(c->l, stride), ""), cg_i32(c->l, lanes), "");
    for (int d = 1; d < lanes; d *= 2) {
        LLVMValueRef ok = reverse
                              ? LLVMBuildICmp(b, LLVMIntULT, S->lane_a, cg_i32(c->l, lanes - d), "")
                              : LLVMBuildICmp(b, LLVMIntUGE, S->lane_a, cg_i32(c->l, d), "");
        for (int g = 0; g < S->ngroups; g++) {
            LLVMValueRef y =
                cg_shuffle(c, S->total[g], reverse ? CG_SHFL_DOWN : CG_SHFL_UP, d * stride);
            S->total[g] =
                LLVMBuildSelect(b, ok, cg_binary(c, S->comb, dt, y, S->total[g]), S->total[g], "");
        }
    }
    /* The lanes before this one (after it, reversed): the inclusive total one lane back. */
    S->lane_prefix = cg_regs(c, S->ngroups);
    S->has_lane_prefix = reverse
                             ? LLVMBuildICmp(b, LLVMIntULT, S->lane_a, cg_i32(c->l, lanes - 1), "")
                             : LLVMBuildICmp(b, LLVMIntUGE, S->lane_a, cg_i32(c->l, 1), "");
    for (int g = 0; g < S->ngroups; g++)
        S->lane_prefix[g] = cg_shuffle(c, S->total[g], reverse ? CG_SHFL_DOWN : CG_SHFL_UP, stride);
}

/* Each group's row in the scratch of step 3: its row-major index with the axis removed. */
static LLVMValueRef *group_rows(ShflScan *S)
{
    Cg *c = S->c;
    LLVMBuilderRef b = c->l->b;
    const Dist *da = S->da;
    int64_t rstride[TRIC_MAX_RANK];
    for (int d = da->rank - 1, s = 1; d >= 0; d--) {
        rstride[d] = d == S->axis ? 0 : s;
        s *= d == S->axis ? 1 : S->t.shape[d];
    }
    LLVMValueRef *row = cg_regs(c, S->ngroups);
    for (int g = 0; g < S->ngroups; g++) {
        LLVMValueRef idx = cg_i32(c->l, 0);
        for (int d = 0; d < da->rank; d++)
            if (d != S->axis && S->t.shape[d] > 1)
                idx = cg_add(
                    b, idx,
                    cg_mul(b, cg_coord(c, S->da, S->first[g], d), cg_i32(c->l, rstride[d]), ""),
                    "");
        row[g] = idx;
    }
    return row;
}

/* The byte offset in shared memory of the scratch slot [row][warp] of step 3, at the strides of
 * the op's scratch record. */
static LLVMValueRef warp_slot_offset(ShflScan *S, LLVMValueRef row, LLVMValueRef warp)
{
    Cg *c = S->c;
    LLVMBuilderRef b = c->l->b;
    const int64_t *st = S->op->scratch.tile[0].strides;
    LLVMValueRef at_warp = st[1] == 1 ? warp : cg_mul(b, warp, cg_i32(c->l, st[1]), "");
    LLVMValueRef slot = cg_add(b, cg_mul(b, row, cg_i32(c->l, st[0]), ""), at_warp, "");
    return cg_add(b, cg_mul(b, slot, cg_i32(c->l, dtype_bytes(S->t.dtype)), ""),
                  cg_i32(c->l, cg_scratch_offset(c, S->op->smem_offset)), "");
}

/* Step 3a: the last lane of each warp along the axis (the first, reversed) writes its warp's
 * totals to slot [row][warp], between two bar.syncs. */
static void store_warp_totals(ShflScan *S, LLVMValueRef *row, LLVMValueRef warp)
{
    Cg *c = S->c;
    LLVMBuilderRef b = c->l->b;
    int eb = dtype_bytes(S->t.dtype);
    LLVMValueRef last_lane = S->lanes > 1
                                 ? LLVMBuildICmp(b, LLVMIntEQ, S->lane_a,
                                                 cg_i32(c->l, S->reverse ? 0 : S->lanes - 1), "")
                                 : LLVMConstInt(c->l->i1, 1, 0);
    cg_barrier(c->l);
    LLVMBasicBlockRef store_bb = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "scan.totals");
    LLVMBasicBlockRef join_bb = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "scan.join");
    LLVMBuildCondBr(b, last_lane, store_bb, join_bb);
    LLVMPositionBuilderAtEnd(b, store_bb);
    for (int g = 0; g < S->ngroups; g++) {
        LLVMValueRef at = warp_slot_offset(S, row[g], warp);
        LLVMValueRef st =
            LLVMBuildStore(b, cg_to_mem(c, S->t.dtype, S->total[g]), cg_smem_addr(c, at));
        LLVMSetAlignment(st, (unsigned)eb);
    }
    LLVMBuildBr(b, join_bb);
    LLVMPositionBuilderAtEnd(b, join_bb);
    cg_barrier(c->l);
}

/* Step 3b: each thread combines, in scan order, the totals of the warps before its own. */
static void load_warp_prefixes(ShflScan *S, LLVMValueRef *row, LLVMValueRef warp)
{
    Cg *c = S->c;
    LLVMBuilderRef b = c->l->b;
    DType dt = S->t.dtype;
    int W = S->W;
    LLVMTypeRef mt = cg_mem_type(c, dt);
    S->warp_prefix = cg_regs(c, S->ngroups);
    S->has_warp_prefix = cg_regs(c, S->ngroups);
    for (int g = 0; g < S->ngroups; g++) {
        LLVMValueRef p = NULL, have = LLVMConstInt(c->l->i1, 0, 0);
        for (int s = 0; s < W; s++) {
            int w = S->reverse ? W - 1 - s : s;
            LLVMValueRef at = warp_slot_offset(S, row[g], cg_i32(c->l, w));
            LLVMValueRef ld = LLVMBuildLoad2(b, mt, cg_smem_addr(c, at), "");
            LLVMSetAlignment(ld, (unsigned)dtype_bytes(dt));
            LLVMValueRef x = cg_from_mem(c, dt, ld);
            /* warp w comes before this thread's warp in scan order */
            LLVMValueRef before = S->reverse
                                      ? LLVMBuildICmp(b, LLVMIntUGT, cg_i32(c->l, w), warp, "")
                                      : LLVMBuildICmp(b, LLVMIntULT, cg_i32(c->l, w), warp, "");
            LLVMValueRef next =
                p ? LLVMBuildSelect(b, have, cg_binary(c, S->comb, dt, p, x), x, "") : x;
            p = p ? LLVMBuildSelect(b, before, next, p, "") : next;
            have = LLVMBuildOr(b, have, before, "");
        }
        S->warp_prefix[g] = p;
        S->has_warp_prefix[g] = have;
    }
}

/* Step 3: across the warps along the axis (W > 1), through the scratch. */
static bool scan_warps(ShflScan *S)
{
    Cg *c = S->c;
    int64_t rows = type_numel(S->t) / S->t.shape[S->axis];
    if (!cg_smem_check(c, S->op, rows * S->W * dtype_bytes(S->t.dtype), "scan"))
        return false;
    const IrScratch *s = &S->op->scratch;
    if (s->ntiles != 1 || s->tile[0].layout > 0 || s->tile[0].nstrides != 2)
        FAIL(c, "scan across warps without a scratch record of [row][warp] strides "
                "(shared_alloc)");
    LLVMValueRef warp = cg_urem(c->l->b, S->da->warp_id[S->axis], cg_i32(c->l, S->W), "");
    LLVMValueRef *row = group_rows(S);
    store_warp_totals(S, row, warp);
    load_warp_prefixes(S, row, warp);
    return true;
}

/* Step 4: each element combines the earlier warps' total, the earlier lanes' total and its run's
 * prefix. */
static void add_prefixes(ShflScan *S)
{
    Cg *c = S->c;
    LLVMBuilderRef b = c->l->b;
    DType dt = S->t.dtype;
    for (int g = 0; g < S->ngroups; g++) {
        LLVMValueRef prefix = NULL, has = NULL;
        if (S->lane_prefix) {
            prefix = S->lane_prefix[g];
            has = S->has_lane_prefix;
        }
        if (S->warp_prefix) {
            LLVMValueRef wp = S->warp_prefix[g], has_wp = S->has_warp_prefix[g];
            if (prefix) {
                LLVMValueRef both = cg_binary(c, S->comb, dt, wp, prefix);
                prefix =
                    LLVMBuildSelect(b, has_wp, LLVMBuildSelect(b, has, both, wp, ""), prefix, "");
                has = LLVMBuildOr(b, has, has_wp, "");
            } else {
                prefix = wp;
                has = has_wp;
            }
        }
        if (!prefix)
            continue;
        for (int j = 0; j < S->run; j++) {
            int e = S->member[g * S->run + j];
            S->acc[e] = LLVMBuildSelect(b, has, cg_binary(c, S->comb, dt, prefix, S->acc[e]),
                                        S->acc[e], "");
        }
    }
}

/* Triton's scan on a blocked layout: in each thread along its run, across the lanes along the
 * axis (Kogge-Stone with shfl.up, shfl.down reversed), across the warps along it through the
 * scratch (the last lane of each warp writes its warp's total per row, bar.sync, each thread
 * combines the totals of the warps before its own). Each element then combines, in scan order,
 * the earlier warps' total, the earlier lanes' total and its run's prefix. */
static bool scan_by_shuffles(Cg *c, const IrOp *op, const LVal *a, Dist *da)
{
    ValueId r = op->results[0];
    int axis = (int)op->attr[0];
    ShflScan S = {
        .c = c,
        .op = op,
        .a = a,
        .da = da,
        .axis = axis,
        .comb = (OpCode)op->attr[1],
        .reverse = op->attr[2] != 0,
        .t = ir_type(c->f, r),
        .n = da->nelems,
        .run = da->run[axis],
        .lanes = da->lanes[axis],
        .W = da->warps[axis],
    };
    S.ngroups = S.n / S.run;
    if (!group_elements(&S) || !scan_runs(&S))
        return false;
    if (S.lanes > 1)
        scan_lanes(&S);
    if (S.W > 1 && !scan_warps(&S))
        return false;
    add_prefixes(&S);
    cg_set_value(c, r, S.acc, S.n, ir_value(c->f, r)->layout);
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
    /* The record says which (shared_scan_scratch chose); the layout is checked, not consulted */
    switch (op->scratch.combine) {
    case SCRATCH_COMBINE_SHUFFLE:
        if (!axis_is_plain(c, a, da, axis))
            FAIL(c, "scan by shuffles of a layout that does not cover its axis once");
        return scan_by_shuffles(c, op, a, da);
    case SCRATCH_COMBINE_STEPS: return scan_through_smem(c, op, a, da);
    default: FAIL(c, "scan without a scratch record saying how it combines (shared_alloc)");
    }
}
