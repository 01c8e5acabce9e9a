/* dot_fma.c: the dot on the FMA units, for a blocked accumulator (any dtype: fp16/bf16/fp32 in
 * fp32, fp64, int8 in int32). docs/codegen.md "dot (FMA)". */
#include "codegen/internal.h"

#include <stdio.h>

/* The byte offset (i32) of the slot an FMA dot reads operand `which` from: the view its
 * local_load reads, unswizzled (the pipeline's plain_slot_layout), in either order: M (A) or N
 * (B) contiguous, A^T [K][M] and B [K][N] as the staged copies are; or K contiguous, A [M][K] and
 * B^T [N][K], the order the tile was loaded in (*k_major). */
static bool fma_slot_base(Cg *c, ValueId operand, int which, LLVMValueRef *base, bool *k_major)
{
    const IrOp *ld = ir_value(c->f, operand)->def;
    ValueId view = ld && ld->code == OP_LOCAL_LOAD ? ld->operands[0] : 0;
    int l = view ? ir_value(c->f, view)->layout : 0;
    const Layout *sl = l > 0 && l < c->f->nlayouts ? &c->f->layouts[l] : NULL;
    if (!sl || sl->kind != LAYOUT_SHARED || sl->rank != 2 || sl->shared.swizzle != 0 ||
        sl->shared.max_phase > 1)
        FAIL(c, "dot (FMA): %s's slot is not unswizzled", which ? "B" : "A");
    /* A's K is dim 1, B's dim 0 */
    *k_major = sl->shared.order[0] == (which == 0 ? 1 : 0);
    LVal *v = cg_value(c, view);
    if (c->failed)
        return false;
    *base = v->el[0];
    return true;
}

/* Elements of K each step of the k loop takes: one, unless an operand's slot runs along K, whose
 * rows are then read in runs of up to 16 bytes (a power of two dividing K). */
static int fma_k_step(int K, const bool k_major[2], const int eb[2])
{
    int kw = 1;
    for (int pass = 0; pass < 2; pass++) {
        if (!k_major[pass])
            continue;
        int w = 16 / eb[pass];
        while (w > 1 && (K % w || (kw > 1 && w > kw)))
            w /= 2;
        kw = w;
    }
    return kw;
}

/* One step of the k loop reads operand `pass` (0: A, 1: B) for k .. k + kw - 1: out[kk * cnt + i]
 * is element k + kk of this thread's row (A) or column (B) i, from the slot or scratch at base_off
 * (ext: M or N). K-contiguous: each row's kw elements in one run; else, per k, this thread's
 * positions along M or N in runs. */
static void fma_read_step(Cg *c, const Dist *dr, int pass, DType dt, DType acc_dt,
                          LLVMValueRef base_off, bool k_major, int ext, int K, LLVMValueRef k,
                          int kw, LLVMValueRef *out)
{
    LLVMBuilderRef b = c->l->b;
    int cnt = dr->count[pass], run = dr->run[pass], eb = dtype_bytes(dt);
    LLVMTypeRef mt = cg_mem_type(c, dt);
    if (k_major) {
        for (int i = 0; i < cnt; i++) {
            LLVMValueRef x = cg_add(b, dr->base[pass], cg_i32(c->l, dr->dim_off[pass][i]), "");
            LLVMValueRef idx = cg_add(b, cg_mul(b, x, cg_i32(c->l, K), ""), k, "");
            LLVMValueRef p =
                cg_smem_addr(c, cg_add(b, cg_mul(b, idx, cg_i32(c->l, eb), ""), base_off, ""));
            LLVMValueRef got[16];
            cg_load_run(c, mt, p, kw, eb, got);
            for (int kk = 0; kk < kw; kk++)
                out[kk * cnt + i] = cg_cast(c, dt, acc_dt, got[kk]);
        }
        return;
    }
    int w = imin(run, 16 / eb);
    if (w < 1)
        w = 1;
    for (int kk = 0; kk < kw; kk++) {
        LLVMValueRef kx = kk ? cg_add(b, k, cg_i32(c->l, kk), "") : k;
        LLVMValueRef row = cg_mul(b, kx, cg_i32(c->l, ext), "");
        for (int i = 0; i < cnt; i += w) {
            LLVMValueRef idx = cg_add(
                b, row, cg_add(b, dr->base[pass], cg_i32(c->l, dr->dim_off[pass][i]), ""), "");
            LLVMValueRef p =
                cg_smem_addr(c, cg_add(b, cg_mul(b, idx, cg_i32(c->l, eb), ""), base_off, ""));
            LLVMValueRef got[16];
            cg_load_run(c, mt, p, w, eb, got);
            for (int j = 0; j < w; j++)
                out[kk * cnt + i + j] = cg_cast(c, dt, acc_dt, got[j]);
        }
    }
}

/* r = a @ b + c with FMAs: each thread computes its own elements of C (a blocked layout). The
 * operands go to shared memory K-major (A^T [K][M], B [K][N]) from whatever registers they are in;
 * a loop over k then reads, per k, the A rows and B columns this thread needs, so no thread holds
 * a whole operand in registers. The accumulation is fp32 for fp16/bf16/fp32 operands, fp64 for
 * fp64, int32 for int8. A dot with an #mma result goes to cg_lower_dot_mma or cg_lower_dot_wgmma
 * (tensor cores) instead (cg_lower_dot). */
bool cg_lower_dot_fma(Cg *c, const IrOp *op, LVal *A, LVal *B, LVal *C, Dist *da, Dist *db,
                      Dist *dr)
{
    LLVMBuilderRef b = c->l->b;
    ValueId r = op->results[0];
    Type ta = ir_type(c->f, op->operands[0]), tb = ir_type(c->f, op->operands[1]);
    Type tr = ir_type(c->f, r);
    int M = ta.shape[0], K = ta.shape[1], N = tb.shape[1];
    int eba = dtype_bytes(ta.dtype), ebb = dtype_bytes(tb.dtype);
    bool is_int = !dtype_is_float(ta.dtype);
    LLVMTypeRef acc_ty = is_int ? c->l->i32 : (ta.dtype == DT_F64 ? c->l->f64 : c->l->f32);
    DType acc_dt = is_int ? DT_I32 : (ta.dtype == DT_F64 ? DT_F64 : DT_F32);
    char fma_name[32];
    snprintf(fma_name, sizeof fma_name, "llvm.fma.%s", acc_dt == DT_F64 ? "f64" : "f32");
    int n = dr->nelems;
    const Layout *la = &c->f->layouts[A->layout], *lb = &c->f->layouts[B->layout];
    bool slot[2] = {op->scratch.from[0] == DOT_FROM_SLOT, op->scratch.from[1] == DOT_FROM_SLOT};
    if (la->kind == LAYOUT_DOT_OPERAND && lb->kind == LAYOUT_DOT_OPERAND && !slot[0] && !slot[1]) {
        /* Operands materialized in dot-operand registers: A[i][k] and B[k][j] are this thread's. */
        int cols = dr->count[1];
        LLVMValueRef *el = cg_regs(c, n);
        for (int e = 0; e < n; e++) {
            int i = dr->idx[e * 2], j = dr->idx[e * 2 + 1];
            LLVMValueRef acc = cg_cast(c, tr.dtype, acc_dt, cg_at(C, e));
            for (int k = 0; k < K; k++) {
                LLVMValueRef x = cg_cast(c, ta.dtype, acc_dt, A->el[i * K + k]);
                LLVMValueRef y = cg_cast(c, tb.dtype, acc_dt, B->el[k * cols + j]);
                if (is_int)
                    acc = cg_add(b, cg_mul(b, x, y, ""), acc, "");
                else {
                    LLVMValueRef args[3] = {x, y, acc};
                    acc = cg_call(c->l, fma_name, acc_ty, args, 3);
                }
            }
            el[e] = cg_cast(c, acc_dt, tr.dtype, acc);
        }
        cg_set_value(c, r, el, n, ir_value(c->f, r)->layout);
        return true;
    }
    /* A^T [K][M] and B [K][N] (strides [1, M] and [N, 1]) where the scratch record stages them;
     * or, operand by operand, the pipeline's unswizzled slots (either order, fma_slot_base), which
     * the loop's async_wait and barrier have published (local_loads left unmaterialized); a slot
     * operand's staging tile stays unused */
    const IrScratch *s = &op->scratch;
    LLVMValueRef base[2];
    bool k_major[2] = {false, false};
    for (int k = 0; k < 2; k++)
        if (slot[k] && !fma_slot_base(c, op->operands[k], k, &base[k], &k_major[k]))
            return false;
    if (!slot[0] || !slot[1]) {
        if (s->ntiles != 2 || s->tile[0].layout || s->tile[1].layout)
            FAIL(c, "dot (FMA) needs %lld bytes of shared memory to stage its operands",
                 (long long)M * K * eba + (long long)K * N * ebb);
        if (s->tile[0].strides[0] != 1 || s->tile[0].strides[1] != M ||
            s->tile[1].strides[0] != N || s->tile[1].strides[1] != 1)
            FAIL(c, "dot (FMA): its scratch record's tiles are not A^T [K][M] and B [K][N]");
        cg_barrier(c->l);
        if (!slot[0])
            cg_smem_store_all(c, A, da, ta.dtype, eba, cg_scratch_offset(c, s->tile[0].offset),
                              s->tile[0].strides);
        if (!slot[1])
            cg_smem_store_all(c, B, db, tb.dtype, ebb, cg_scratch_offset(c, s->tile[1].offset),
                              s->tile[1].strides);
        cg_barrier(c->l);
        for (int k = 0; k < 2; k++)
            if (!slot[k])
                base[k] = cg_i32(c->l, cg_scratch_offset(c, s->tile[k].offset));
    }
    int kw = fma_k_step(K, k_major, (int[2]){eba, ebb});

    LLVMValueRef *init = cg_regs(c, n);
    for (int e = 0; e < n; e++)
        init[e] = cg_cast(c, tr.dtype, acc_dt, cg_at(C, e));

    LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
    LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "dot.k");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "dot.done");
    LLVMBuildBr(b, loop);
    LLVMPositionBuilderAtEnd(b, loop);
    LLVMValueRef k = LLVMBuildPhi(b, c->l->i32, "k");
    LLVMValueRef *acc = cg_regs(c, n);
    for (int e = 0; e < n; e++)
        acc[e] = LLVMBuildPhi(b, acc_ty, "");
    int rows = dr->count[0], cols = dr->count[1];
    /* av_k[kk * rows + i]: A[row i][k + kk]; bv_k[kk * cols + j]: B[k + kk][column j] */
    LLVMValueRef *av_k = cg_regs(c, rows * kw), *bv_k = cg_regs(c, cols * kw);
    for (int pass = 0; pass < 2; pass++)
        fma_read_step(c, dr, pass, pass ? tb.dtype : ta.dtype, acc_dt, base[pass], k_major[pass],
                      pass ? N : M, K, k, kw, pass ? bv_k : av_k);
    LLVMValueRef *next = cg_regs(c, n);
    for (int e = 0; e < n; e++)
        next[e] = acc[e];
    for (int kk = 0; kk < kw; kk++) {
        for (int e = 0; e < n; e++) {
            LLVMValueRef x = av_k[kk * rows + dr->idx[e * 2 + 0]];
            LLVMValueRef y = bv_k[kk * cols + dr->idx[e * 2 + 1]];
            if (is_int)
                next[e] = cg_add(b, cg_mul(b, x, y, ""), next[e], "");
            else {
                LLVMValueRef args[3] = {x, y, next[e]};
                next[e] = cg_call(c->l, fma_name, acc_ty, args, 3);
            }
        }
    }
    LLVMValueRef k1 = cg_add(b, k, cg_i32(c->l, kw), "");
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, k1, cg_i32(c->l, K), ""), loop, done);
    LLVMValueRef zero = cg_i32(c->l, 0);
    LLVMAddIncoming(k, &zero, &pre, 1);
    LLVMAddIncoming(k, &k1, &latch, 1);
    for (int e = 0; e < n; e++) {
        LLVMAddIncoming(acc[e], &init[e], &pre, 1);
        LLVMAddIncoming(acc[e], &next[e], &latch, 1);
    }
    LLVMPositionBuilderAtEnd(b, done);
    LLVMValueRef *el = cg_regs(c, n);
    for (int e = 0; e < n; e++)
        el[e] = cg_cast(c, acc_dt, tr.dtype, next[e]);
    cg_set_value(c, r, el, n, ir_value(c->f, r)->layout);
    return true;
}
