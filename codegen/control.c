/* control.c: for, if and while as LLVM basic blocks with phis for the loop-carried and yielded
 * registers, and assert as a trap. docs/codegen.md "Control flow". */
#include "codegen/internal.h"

bool cg_lower_for(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    LVal *lo = cg_value(c, op->operands[0]), *hi = cg_value(c, op->operands[1]),
         *step = cg_value(c, op->operands[2]);
    if (c->failed)
        return false;
    DType ivt = ir_type(c->f, op->operands[0]).dtype;
    bool sgn = dtype_is_signed(ivt);
    const IrRegion *body = &op->regions[0];
    int niter = op->noperands - 3;
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
    LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "for.head");
    LLVMBasicBlockRef bodyb = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "for.body");
    LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "for.exit");
    LLVMBuildBr(b, head);
    LLVMPositionBuilderAtEnd(b, head);
    LLVMValueRef iv = LLVMBuildPhi(b, cg_elem_type(c, ivt), "iv");
    /* the accumulator of a wgmma op of the memory pipeline (its group stays in flight across
     * the back edge), whose initial registers are pinned (below) */
    /* (not where the producer of a warp-specialized function carries the accumulator
     * placeholder: nothing reads it there) */
    int pin_iter = c->partition == PARTITION_PRODUCER ? -1 : cg_wgmma_acc_iter(c, op);
    cg_set_value(c, body->args[0], cg_regs(c, 1), 1, 0);
    c->vals[body->args[0]].el[0] = iv;
    LVal **phis = arena_alloc(c->arena, sizeof(LVal *) * (size_t)imax(niter, 1));
    for (int i = 0; i < niter; i++) {
        LVal *init = cg_value(c, op->operands[3 + i]);
        if (c->failed)
            return false;
        if (i == pin_iter && init->n > 0) {
            /* The accumulator's initial registers are defined before the loop's zero-trip test,
             * through an empty asm: else LLVM sinks the constant into the path that skips the
             * loop, and ptxas, seeing those moves define the accumulator on a path into the
             * final wait_group, serializes every wgmma (its C7515 note). */
            LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(pre));
            LLVMValueRef *pinned = cg_regs(c, init->n);
            for (int e = 0; e < init->n; e++)
                pinned[e] = cg_at(init, e);
            pinned = cg_asm_tie_f32(c, "// wgmma accumulator init", pinned, init->n);
            LLVMPositionBuilderAtEnd(b, head);
            LLVMValueRef *el = cg_regs(c, init->n);
            for (int e = 0; e < init->n; e++) {
                el[e] = LLVMBuildPhi(b, c->l->f32, "");
                LLVMAddIncoming(el[e], &pinned[e], &pre, 1);
            }
            cg_set_value(c, body->args[1 + i], el, init->n, init->layout);
            phis[i] = &c->vals[body->args[1 + i]];
            continue;
        }
        LLVMValueRef *el = cg_regs(c, init->n);
        for (int e = 0; e < init->n; e++)
            el[e] = LLVMBuildPhi(b, LLVMTypeOf(init->el[e]), "");
        cg_set_value(c, body->args[1 + i], el, init->n, init->layout);
        phis[i] = &c->vals[body->args[1 + i]];
    }
    /* range(lo, hi, step): continue while iv < hi (iv > hi for a negative step). */
    LLVMValueRef s = step->el[0], cond;
    LLVMValueRef up = LLVMBuildICmp(b, sgn ? LLVMIntSLT : LLVMIntULT, iv, hi->el[0], "");
    if (LLVMIsAConstantInt(s) && sgn && LLVMConstIntGetSExtValue(s) < 0)
        cond = LLVMBuildICmp(b, LLVMIntSGT, iv, hi->el[0], "");
    else if (LLVMIsAConstantInt(s) || !sgn)
        cond = up;
    else {
        LLVMValueRef down = LLVMBuildICmp(b, LLVMIntSGT, iv, hi->el[0], "");
        LLVMValueRef pos = LLVMBuildICmp(b, LLVMIntSGT, s, LLVMConstInt(LLVMTypeOf(s), 0, 0), "");
        cond = LLVMBuildSelect(b, pos, up, down, "");
    }
    LLVMBuildCondBr(b, cond, bodyb, exit);
    LLVMPositionBuilderAtEnd(b, bodyb);
    if (!cg_lower_region(c, body))
        return false;
    const IrOp *y = c->term;
    if (!y || y->code != OP_YIELD || y->noperands != niter)
        FAIL(c, "for body does not end in a yield of %d values", niter);
    if (!cg_keep_wgmma_a_live(c, op))
        return false;
    LLVMValueRef next = cg_add(b, iv, s, "");
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
    for (int i = 0; i < niter; i++) {
        LVal *yv = cg_value(c, y->operands[i]);
        LVal *init = cg_value(c, op->operands[3 + i]);
        if (c->failed)
            return false;
        if (yv->n != phis[i]->n && yv->n != 1)
            FAIL(c, "for: iter arg %d changes layout across the loop", i);
        for (int e = 0; e < phis[i]->n; e++) {
            LLVMValueRef in = cg_at(init, e), out = cg_at(yv, e);
            if (!(i == pin_iter && init->n > 0)) /* else added with the pinned init */
                LLVMAddIncoming(phis[i]->el[e], &in, &pre, 1);
            LLVMAddIncoming(phis[i]->el[e], &out, &latch, 1);
        }
    }
    LLVMAddIncoming(iv, &lo->el[0], &pre, 1);
    LLVMAddIncoming(iv, &next, &latch, 1);
    LLVMBuildBr(b, head);
    LLVMPositionBuilderAtEnd(b, exit);
    for (int i = 0; i < niter && i < op->nresults; i++)
        cg_set_value(c, op->results[i], phis[i]->el, phis[i]->n, phis[i]->layout);
    return true;
}

bool cg_lower_if(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    LVal *cond = cg_value(c, op->operands[0]);
    if (c->failed)
        return false;
    LLVMBasicBlockRef bb[2] = {LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "if.then"),
                               LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "if.else")};
    LLVMBasicBlockRef merge = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "if.end");
    LLVMBuildCondBr(b, cond->el[0], bb[0], bb[1]);
    const IrOp *ys[2] = {0};
    LLVMBasicBlockRef ends[2];
    for (int i = 0; i < 2; i++) {
        LLVMPositionBuilderAtEnd(b, bb[i]);
        c->term = NULL;
        if (i < op->nregions && !cg_lower_region(c, &op->regions[i]))
            return false;
        ys[i] = c->term;
        ends[i] = LLVMGetInsertBlock(b);
        LLVMBuildBr(b, merge);
    }
    LLVMPositionBuilderAtEnd(b, merge);
    for (int r = 0; r < op->nresults; r++) {
        if (!ys[0] || !ys[1] || ys[0]->noperands <= r || ys[1]->noperands <= r)
            FAIL(c, "if: a branch does not yield result %d", r);
        LVal *v0 = cg_value(c, ys[0]->operands[r]), *v1 = cg_value(c, ys[1]->operands[r]);
        if (c->failed)
            return false;
        int n = imax(v0->n, v1->n);
        LLVMValueRef *el = cg_regs(c, n);
        for (int e = 0; e < n; e++) {
            LLVMValueRef in[2] = {cg_at(v0, e), cg_at(v1, e)};
            el[e] = LLVMBuildPhi(b, LLVMTypeOf(in[0]), "");
            LLVMAddIncoming(el[e], in, ends, 2);
        }
        cg_set_value(c, op->results[r], el, n, v0->n >= v1->n ? v0->layout : v1->layout);
    }
    return true;
}

bool cg_lower_while(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    const IrRegion *before = &op->regions[0], *after = &op->regions[1];
    int nin = op->noperands;
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
    LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "while.before");
    LLVMBasicBlockRef bodyb = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "while.after");
    LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "while.exit");
    LLVMBuildBr(b, head);
    LLVMPositionBuilderAtEnd(b, head);
    for (int i = 0; i < nin; i++) {
        LVal *init = cg_value(c, op->operands[i]);
        if (c->failed)
            return false;
        LLVMValueRef *el = cg_regs(c, init->n);
        for (int e = 0; e < init->n; e++) {
            el[e] = LLVMBuildPhi(b, LLVMTypeOf(init->el[e]), "");
            LLVMAddIncoming(el[e], &init->el[e], &pre, 1);
        }
        cg_set_value(c, before->args[i], el, init->n, init->layout);
    }
    if (!cg_lower_region(c, before))
        return false;
    const IrOp *cond = c->term;
    if (!cond || cond->code != OP_CONDITION)
        FAIL(c, "while: region 0 does not end in condition");
    LVal *cv = cg_value(c, cond->operands[0]);
    if (c->failed)
        return false;
    LLVMBuildCondBr(b, cv->el[0], bodyb, exit);
    LLVMPositionBuilderAtEnd(b, bodyb);
    for (int i = 1; i < cond->noperands && i - 1 < after->nargs; i++)
        c->vals[after->args[i - 1]] = *cg_value(c, cond->operands[i]);
    if (!cg_lower_region(c, after))
        return false;
    const IrOp *y = c->term;
    if (!y || y->code != OP_YIELD || y->noperands != nin)
        FAIL(c, "while: region 1 does not yield %d values", nin);
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
    for (int i = 0; i < nin; i++) {
        LVal *ph = &c->vals[before->args[i]], *yv = cg_value(c, y->operands[i]);
        if (c->failed)
            return false;
        for (int e = 0; e < ph->n; e++) {
            LLVMValueRef v = cg_at(yv, e);
            LLVMAddIncoming(ph->el[e], &v, &latch, 1);
        }
    }
    LLVMBuildBr(b, head);
    LLVMPositionBuilderAtEnd(b, exit);
    for (int i = 0; i < op->nresults && i + 1 < cond->noperands; i++)
        c->vals[op->results[i]] = *cg_value(c, cond->operands[i + 1]);
    return true;
}

/* assert: a thread that holds a false element traps (llvm.trap -> PTX trap); the launch then
 * fails with an error. The message is not printed on the GPU (the interpreter prints it). */
bool cg_lower_assert(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    LVal *v = cg_value(c, op->operands[0]);
    if (c->failed)
        return false;
    LLVMValueRef bad = NULL;
    for (int e = 0; e < v->n; e++) {
        LLVMValueRef x = v->el[e];
        if (LLVMTypeOf(x) != c->l->i1)
            x = LLVMBuildICmp(b, LLVMIntNE, x, LLVMConstNull(LLVMTypeOf(x)), "");
        LLVMValueRef nx = LLVMBuildNot(b, x, "");
        bad = bad ? LLVMBuildOr(b, bad, nx, "") : nx;
    }
    LLVMBasicBlockRef trap = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "assert.fail");
    LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "assert.ok");
    LLVMBuildCondBr(b, bad, trap, cont);
    LLVMPositionBuilderAtEnd(b, trap);
    cg_call(c->l, "llvm.trap", c->l->void_t, NULL, 0);
    LLVMBuildUnreachable(b);
    LLVMPositionBuilderAtEnd(b, cont);
    return true;
}

/* gdc_wait / gdc_launch_dependents: programmatic dependent launch, griddepcontrol.wait and
 * griddepcontrol.launch_dependents (PTX ISA 9.7.13.x "griddepcontrol", sm_90+), each thread's
 * own. Below sm_90 nothing: no grid can be launched to depend on this one there, so the wait has
 * nothing to wait for and the hint nothing to start. */
bool cg_lower_grid_dep(Cg *c, const IrOp *op)
{
    if (c->o->sm >= 90)
        cg_asm_void(c, op->code == OP_GDC_WAIT ? "griddepcontrol.wait;"
                                               : "griddepcontrol.launch_dependents;");
    return true;
}
