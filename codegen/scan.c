/* scan.c: the inclusive scan (tl.cumsum, tl.cumprod, tl.associative_scan) along an axis.
 *
 * Hillis and Steele's data-parallel scan ("Data Parallel Algorithms", CACM 29(12), 1986): after
 * step k every element holds the combination of the 2^k elements ending at it, so log2(len)
 * steps finish. Each step goes through the op's shared-memory scratch (the whole block,
 * row-major): every thread stores the values it holds, bar.sync (PTX ISA §9.7.13.1), loads the
 * value d places earlier along the axis (later when reversed), combines, bar.sync again before
 * the next step overwrites the scratch. Going through shared memory makes the scan independent
 * of the value's layout (blocked, sliced, #mma) and of element replication: a thread reads
 * whatever element it needs by its coordinates. The combine order is not the interpreter's
 * left-to-right one, so float sums may differ in rounding (integers and max/min are exact). */
#include "codegen/internal.h"

bool cg_lower_scan(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    ValueId av = op->operands[0], r = op->results[0];
    int axis = (int)op->attr[0];
    OpCode comb = (OpCode)op->attr[1];
    bool reverse = op->attr[2] != 0;
    Type t = ir_type(c->f, r);
    LVal *a = cg_value(c, av);
    if (c->failed)
        return false;
    Dist *da = cg_dist(c, a->layout, ir_type(c->f, av));
    if (!da)
        FAIL(c, "scan of a scalar");
    /* The layout pass gives the result its operand's layout: the registers carry over. */
    if (ir_value(c->f, r)->layout != a->layout)
        FAIL(c, "scan: the result's layout differs from its operand's");
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
                LLVMValueRef has = reverse
                    ? LLVMBuildICmp(b, LLVMIntSLT, coord[e], cg_i32(c->l, len - d), "")
                    : LLVMBuildICmp(b, LLVMIntSGE, coord[e], cg_i32(c->l, d), "");
                LLVMValueRef delta = cg_i32(c->l, (reverse ? 1 : -1) * (int64_t)d * rm[axis]);
                LLVMValueRef at = LLVMBuildSelect(b, has, LLVMBuildAdd(b, index[e], delta, ""),
                                                  index[e], "");
                LLVMValueRef byte = LLVMBuildAdd(b, LLVMBuildMul(b, at, cg_i32(c->l, eb), ""),
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
