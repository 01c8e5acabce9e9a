/* defer_promotion.c: the pipeline's form of a promoted fp8 dot (max_num_imprecise_acc), whose
 * partial sum is added into the fp32 accumulator an iteration late, under the next iteration's
 * wgmma.
 *
 * A loop `acc = tl.dot(a, b, acc, max_num_imprecise_acc=N)` whose K tile fits in one promotion
 * run (K <= ir_promotion_run(N)) sums each iteration's K from zero and adds that partial into
 * acc (the dot's meaning in ir.h). As one wgmma op that add waits for its own wgmma
 * (`wgmma.wait_group 0`, codegen/dot_wgmma.c), so the tensor cores idle while the warpgroups
 * add: promotion cost 26-30% of seed 2's fp8 speed (docs/performance.md, "fp8 with its sums
 * promoted"). Written as the sum it is, with the add one iteration behind,
 *
 *     acc, part = for ..., iter acc = acc0, iter part = -0.0 {
 *         p = dot a, b, 0             -- the partial, left in flight (pipeline: carried_dot)
 *         s = add acc, part           -- the previous iteration's partial, retired by p's wait 1
 *         yield s, p
 *     }
 *     acc_out = add acc, part
 *
 * the pipeline leaves p in flight across the back edge as it does attention's p @ v, and the
 * add of iteration i - 1's partial runs while iteration i's wgmma computes (what cuBLAS's fp8
 * GEMM does without fast accumulation). Every sum is the same, bit for bit: acc + (-0.0) is acc
 * for every acc, -0.0 and NaN included, and each partial is added in its iteration's order (the
 * interpreter sums a promoted dot so, ir/interp.c dot_compute).
 *
 * The price is a second partial's registers: the accumulator's, the partial in flight and the
 * one being added. pipeline_defer_promotion takes a tile only where the three fit a thread's
 * registers beside the addresses (an accumulator of at most 64 floats a thread: 128 x 128 on 8
 * warps, 64 x 128 or 128 x 64 on 4); a larger tile keeps the dot's own runs. */
#include "passes/passes.h"

/* fp32 accumulators a thread may hold for the deferred form: three sets of them (the sum and
 * two partials) in 192 registers, below the 232-255 a consumer thread gets */
#define DEFER_MAX_ACC_PER_THREAD 64

/* The dot's iter arg (0-based) if the loop can take the deferred form, else -1: a loop
 * unroll_loops can unroll, an fp8 dot with an #mma v3 fp32 sum, promoted in one run, its c the
 * iter arg's block argument used by it alone, its result yielded alone at that arg. */
static int deferrable_iter(const IrFunc *f, const IrOp *loop, const IrOp *dot)
{
    const IrRegion *body = &loop->regions[0];
    int64_t step;
    if (dot->code != OP_DOT || dot->noperands != 3 || dot->attr[2] <= 0 ||
        !unroll_loops_takes(f, loop, &step)) /* (rolled, the form is serialized: see there) */
        return -1;
    Type at = ir_type(f, dot->operands[0]), bt = ir_type(f, dot->operands[1]);
    Type rt = ir_type(f, dot->results[0]);
    int acc = f->values[dot->results[0]].layout;
    if (!dtype_is_fp8(at.dtype) || !dtype_is_fp8(bt.dtype) || rt.rank != 2 || rt.dtype != DT_F32 ||
        at.rank != 2 || at.shape[1] > ir_promotion_run(dot->attr[2]) || acc <= 0 ||
        f->layouts[acc].kind != LAYOUT_MMA || f->layouts[acc].mma.version != 3)
        return -1;
    int64_t threads = 32LL * ir_func_consumer_warps(f);
    if ((int64_t)rt.shape[0] * rt.shape[1] > DEFER_MAX_ACC_PER_THREAD * threads)
        return -1;
    const IrOp *y = body->ops[body->nops - 1];
    int it = -1;
    for (int k = 0; k < y->noperands; k++)
        if (y->operands[k] == dot->results[0])
            it = it < 0 ? k : -2;
    if (it < 0 || ir_region_use_count(body, dot->results[0]) != 1 ||
        body->args[1 + it] != dot->operands[2] || ir_region_use_count(body, dot->operands[2]) != 1)
        return -1;
    return it;
}

/* A float constant of v's type and layout, built at b. */
static ValueId float_like(IrFunc *f, IrBuilder *b, SrcLoc loc, ValueId v, double x)
{
    ValueId r = ir_build_const_float(b, loc, ir_type(f, v), x);
    f->values[r].layout = f->values[v].layout;
    return r;
}

bool pipeline_defer_promotion(IrFunc *f, IrRegion *parent, IrOp *loop, IrOp *dot)
{
    int it = deferrable_iter(f, loop, dot);
    if (it < 0)
        return false;
    IrRegion *body = &loop->regions[0];
    ValueId d = dot->results[0], acc_arg = dot->operands[2], acc_out = loop->results[it];
    SrcLoc loc = dot->loc;
    int at = ir_region_index(parent, loop);
    IrBuilder pre = {.func = f, .region = parent, .pos = at};
    ValueId neg_zero = float_like(f, &pre, loc, d, -0.0);
    ValueId zero = float_like(f, &pre, loc, d, 0.0);
    /* the partial: dot's own sum from zero, one run, no promotion left to do */
    ValueId part = passes_add_iter_arg(f, loop, neg_zero, ir_type(f, d), "partial");
    ValueId part_out = loop->results[loop->nresults - 1];
    f->values[part].layout = f->values[part_out].layout = f->values[d].layout;
    dot->operands[2] = zero;
    dot->attr[2] = 0;
    const char *acc_name = f->values[d].name;
    f->values[d].name = "partial";
    IrBuilder in = {.func = f, .region = body, .pos = ir_region_index(body, dot) + 1};
    ValueId sum = ir_build_binary(&in, OP_ADD, loc, ir_type(f, d), acc_arg, part);
    f->values[sum].layout = f->values[d].layout;
    f->values[sum].name = acc_name;
    IrOp *y = body->ops[body->nops - 1];
    y->operands[it] = sum;
    y->operands[y->noperands - 1] = d;
    /* after the loop, the last partial */
    IrBuilder post = {.func = f, .region = parent, .pos = ir_region_index(parent, loop) + 1};
    ValueId out = ir_build_binary(&post, OP_ADD, loc, ir_type(f, d), acc_out, part_out);
    f->values[out].layout = f->values[acc_out].layout;
    f->values[out].name = f->values[acc_out].name;
    IrOp *add = f->values[out].def;
    ir_replace_all_uses(f, acc_out, out);
    add->operands[0] = acc_out;
    return true;
}
