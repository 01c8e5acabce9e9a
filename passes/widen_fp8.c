/* widen_fp8.c: fp8 dots the tensor cores cannot take as fp8 become fp16 dots.
 *
 * Requires: nothing beyond well-formed regions (runs before axis info and layouts).
 * Guarantees: a dot with an fp8 operand is left only where layouts.c will give it an #mma v3
 * accumulator for wgmma's .e4m3/.e5m2 form (layouts_fp8_dot_takes_wgmma: sm_90a, K a multiple of
 * 32, ...); every other fp8 operand goes through a cast to fp16 right before its dot. fp16 holds
 * every e4m3 and e5m2 value exactly, so the products and their fp32 sum are those of the fp8 dot:
 * what Triton does before Hopper, and what tric does for mma.sync and the FMA dot. A widened
 * dot keeps its max_num_imprecise_acc (attr[2]): codegen's fp32 sums need no promotion, and the
 * interpreter, which sums in the attribute's runs, gives the same bits before and after. */
#include "passes/passes.h"

static void widen_region(IrFunc *f, const PassOptions *o, IrRegion *r)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            widen_region(f, o, &op->regions[k]);
        if (op->code != OP_DOT || layouts_fp8_dot_takes_wgmma(f, o, op))
            continue;
        for (int j = 0; j < 2 && j < op->noperands; j++) {
            Type t = ir_type(f, op->operands[j]);
            if (t.is_ptr || !dtype_is_fp8(t.dtype))
                continue;
            IrBuilder b = {f, r, i};
            t.dtype = DT_F16;
            op->operands[j] = ir_build_unary(&b, OP_CAST, op->loc, t, op->operands[j]);
            i++; /* the cast went in before the dot */
        }
    }
}

bool pass_widen_fp8(IrFunc *f, const PassOptions *o, Diag *d)
{
    (void)d;
    widen_region(f, o, &f->body);
    return true;
}
