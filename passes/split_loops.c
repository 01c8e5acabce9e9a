/* split_loops.c: a loop whose body branches on its counter crossing a loop-invariant bound runs as
 * two loops, one each side of the bound, each with its branch's ops inlined (docs/passes.md
 * "split_loops").
 *
 * fuse_loops makes tutorial 06's two causal loops one, the diagonal's mask under an `if` on the
 * counter, so that the pipeline runs the diagonal's copies ahead in the first loop's ring. The
 * `if` then costs every iteration: the softmax, the wgmma issues and the waits sit in different
 * blocks, which ptxas schedules apart (ncu: the same instructions, 6.5% more cycles on the
 * 128 x 64 kernel at N_CTX 16384). Split after the pipeline, the two loops run one straight block
 * each, and the pipeline's state (slots, phases, the wgmma in flight, the copies issued ahead)
 * goes from the first to the second through the loop's carried values, as it goes from one
 * iteration to the next.
 *
 * Requires the passes that schedule a loop (pipeline, tma, warp_specialize, overlap_dots): it runs
 * after them, before shared_alloc. Takes a `for` with a positive constant step and an `if`
 * directly in its body on a comparison of its i32 counter with an i32 X made outside the loop,
 * either way round: iv >= X or iv < X, and iv > X or iv <= X as iv >= X + 1 or iv < X + 1 (X
 * below then stands for X + 1). Guarantees, with mid = lo + ceil((max(X, lo) - lo) / step) * step
 * (the first counter value >= X, or lo), the loop becomes
 *
 *     for iv in range(lo, min(mid, hi), step): body, the if replaced by its iv < X branch
 *     for iv in range(mid, hi, step):          body, the if replaced by its iv >= X branch
 *
 * the second from the first's results, its results standing for the loop's. Every op keeps its
 * operands (the bounds the pipeline's predicates and phases read are the same values), so each
 * iteration runs the ops it ran; the clone's values keep their layouts and axis info. One `if` a
 * loop is split on; loops nested in the branches are left alone. PassOptions.no_fuse_loops
 * (--no-fuse-loops: loops as written) leaves every loop. */
#include "passes/passes.h"

#include <string.h>

/* The bound X of an if on the counter iv of `loop`, whether its then-branch is the iv >= X side,
 * and whether the branch's test is iv >= X + 1 or iv < X + 1 (*past: iv > X, iv <= X and their
 * mirrors); 0 when cond is not such a comparison. Every comparison of iv with a value made
 * outside the loop, either way round, is one of the two sides: iv >= X (X <= iv), iv < X
 * (X > iv), iv > X (X < iv) and iv <= X (X >= iv). */
static ValueId counter_bound(const IrFunc *f, const IrOp *loop, ValueId cond, bool *then_high,
                             bool *past)
{
    const IrOp *cmp = f->values[cond].def;
    const IrRegion *body = &loop->regions[0];
    if (!cmp || ir_region_index(body, cmp) < 0 || cmp->noperands != 2)
        return 0;
    ValueId iv = body->args[0];
    bool iv_first = cmp->operands[0] == iv, iv_second = cmp->operands[1] == iv;
    if (iv_first == iv_second)
        return 0;
    /* the comparison as iv OP X */
    OpCode code = cmp->code;
    if (iv_second)
        code = code == OP_CMP_LT   ? OP_CMP_GT
               : code == OP_CMP_GT ? OP_CMP_LT
               : code == OP_CMP_LE ? OP_CMP_GE
               : code == OP_CMP_GE ? OP_CMP_LE
                                   : code;
    if (code != OP_CMP_GE && code != OP_CMP_LT && code != OP_CMP_GT && code != OP_CMP_LE)
        return 0;
    ValueId x = cmp->operands[iv_first ? 1 : 0];
    const IrOp *def = f->values[x].def;
    for (int i = 0; i < body->nargs; i++)
        if (body->args[i] == x)
            return 0;
    if (def && ir_region_index(body, def) >= 0)
        return 0; /* (nothing nested in the body's ops is in the body's reach) */
    if (ir_type(f, iv).rank != 0 || ir_type(f, iv).dtype != DT_I32 || ir_type(f, x).rank != 0 ||
        ir_type(f, x).dtype != DT_I32)
        return 0;
    *then_high = code == OP_CMP_GE || code == OP_CMP_GT;
    *past = code == OP_CMP_GT || code == OP_CMP_LE;
    return x;
}

/* Replaces the if at body->ops[at] by the ops of its region `side` (its yield's values standing
 * for its results); its comparison goes too when nothing else reads it. */
static void inline_branch(IrFunc *f, IrRegion *body, int at, int side)
{
    IrOp *branch = body->ops[at];
    IrRegion *r = &branch->regions[side];
    const IrOp *yield = r->ops[r->nops - 1];
    for (int k = 0; k < branch->nresults; k++)
        ir_replace_all_uses(f, branch->results[k], yield->operands[k]);
    ir_region_remove(body, at);
    for (int i = 0; i + 1 < r->nops; i++)
        ir_region_insert(f, body, at + i, r->ops[i]);
    const IrOp *cmp = f->values[branch->operands[0]].def;
    int cmp_at = ir_region_index(body, cmp);
    if (cmp_at >= 0 && ir_region_use_count(body, cmp->results[0]) == 0)
        ir_region_remove(body, cmp_at);
}

/* Splits home->ops[at] when it can; returns whether it did. */
static bool split(IrFunc *f, IrRegion *home, int at)
{
    IrOp *loop = home->ops[at];
    IrRegion *body = &loop->regions[0];
    int64_t step;
    if (!passes_const_int(f, loop->operands[2], &step) || step <= 0)
        return false;
    int branch_at = -1;
    ValueId bound = 0;
    bool then_high = false, past = false;
    for (int i = 0; i < body->nops && !bound; i++)
        if (body->ops[i]->code == OP_IF &&
            (bound = counter_bound(f, loop, body->ops[i]->operands[0], &then_high, &past)))
            branch_at = i;
    if (!bound)
        return false;
    /* mid = lo + ceil((max(X, lo) - lo) / step) * step, before the loop */
    IrBuilder b = {f, home, at};
    SrcLoc loc = loop->loc;
    ValueId lo = loop->operands[0], hi = loop->operands[1];
    if (past) /* iv > X is iv >= X + 1: min(X, INT32_MAX - 1) + 1 (iv < hi never reaches it) */
        bound = passes_binary(
            &b, loc, OP_ADD,
            passes_binary(&b, loc, OP_MIN, bound, passes_const_i32(&b, loc, INT32_MAX - 1)),
            passes_const_i32(&b, loc, 1));
    ValueId from = passes_binary(&b, loc, OP_MAX, bound, lo);
    ValueId span = passes_binary(&b, loc, OP_SUB, from, lo);
    ValueId up = passes_binary(&b, loc, OP_ADD, span, passes_const_i32(&b, loc, step - 1));
    ValueId steps = passes_binary(&b, loc, OP_DIV, up, loop->operands[2]);
    ValueId mid = passes_binary(&b, loc, OP_ADD, lo,
                                passes_binary(&b, loc, OP_MUL, steps, loop->operands[2]));
    ValueId first_end = passes_binary(&b, loc, OP_MIN, mid, hi);
    at = b.pos;
    /* the second loop: a copy after the first, from its results */
    IrCloneMap m = ir_clone_map_new(f);
    IrBuilder after = {f, home, at + 1};
    IrOp *second = ir_clone_op_mapped(&after, loop, &m);
    for (int k = 0; k < loop->nresults; k++) {
        ir_replace_all_uses(f, loop->results[k], second->results[k]);
        second->operands[3 + k] = loop->results[k];
    }
    second->operands[0] = mid;
    loop->operands[1] = first_end;
    inline_branch(f, body, branch_at, then_high ? 1 : 0);
    inline_branch(f, &second->regions[0], branch_at, then_high ? 0 : 1);
    return true;
}

static void split_region(IrFunc *f, IrRegion *r)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            split_region(f, &op->regions[k]);
        if (op->code == OP_FOR && split(f, r, i))
            i = ir_region_index(r, op) + 1; /* past the second loop */
    }
}

bool pass_split_loops(IrFunc *f, const PassOptions *o, Diag *d)
{
    (void)d;
    if (o->no_fuse_loops)
        return true; /* loops as written */
    split_region(f, &f->body);
    return true;
}
