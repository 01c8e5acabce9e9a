/* pipeline_loops.c: software pipelining of loops: the loads that feed dots (tensor-core or FMA),
 * and the rows and tiles beside them, copied S - 1 iterations ahead (Triton's assign_latencies +
 * schedule_loops + pipeline, for the pointer-load case; docs/passes.md "pipeline").
 *
 * Requires: layouts (a dot's operand converts and #mma result are known), axis info. Guarantees:
 * in every loop it pipelines, each pipelined load is an async_copy into slot (i + S - 1) % S of
 * an S-slot local_alloc buffer, issued S - 1 iterations ahead of its use (S = the loop's tl.range
 * num_stages, else the function's); a prologue of S - 1 iterations, each predicated on the
 * iteration existing, fills the first slots; iteration i waits for its own group (async_wait
 * S - 2), makes it visible to every thread (barrier), and reads slot i % S: through local_load
 * into a dot operand's layout (mma.sync), directly with a wgmma (sm_90a; one left in flight until
 * the next iteration's wgmma_wait where the loop allows), or whole, with a local_load in the
 * load's own layout where the load was, for every other use. After the loop: async_wait 0, and
 * wgmma_wait 0 on the accumulators still in flight. The buffers have no shared layout yet
 * (swizzle.c), except an FMA dot's slots and a 2-D tile of 4-byte elements that only whole
 * local_loads read and whose copies are under 16 bytes, or that no swizzled layout fits: an
 * unswizzled one (plain_slot_layout). Axis info is recomputed for the new values.
 *
 * The schedule, per iteration i of the new loop (S slots; copies for iteration j go to slot j % S):
 *     async_wait S-2; barrier           -- tile i (copied S-1 iterations ago) is complete everywhere
 *     the rest of the body, reading slot i % S
 *                                       -- wgmma: wgmma_wait 1 retires wgmma i-1 of this warpgroup
 *     barrier (wgmma only)              -- ... and of every warpgroup: slot (i-1) % S is free
 *     stage 0 for iteration i+S-1, copies into slot (i+S-1) % S = (i-1) % S; async_commit
 * The loop is not peeled: copies for iterations past the end are masked off (they read nothing).
 *
 * Which loads: every load in the body whose tile feeds an mma dot, through a convert_layout (and
 * for a wgmma's B a `.T`) or, read back whole, through any chain, whatever else uses the tile
 * (attention backward's qT feeds `k @ qT` and, transposed, `dsT @ qT.T`; both wgmma ops read its
 * one slot). A dot reads its operands straight from the slots when both are pipelined loads
 * (mma.sync: local_load into the #dot_op layout; wgmma: the slots themselves, B possibly as
 * B^T), or, for a wgmma, when B is one and A comes from registers (#dot_op<idx=0, k_width=2>,
 * 16-bit); any other use of a pipelined tile reads it whole. A pipelined load's tile is 2-D with
 * 16-bit elements (or fp32 or fp8 for wgmma's tf32 and fp8 forms, read straight from both slots
 * only: K-major, element by element for an fp32 tile running along M or N, along K in memory for
 * fp8), copied in pieces of at least 4 bytes. An FMA dot (blocked accumulator) reads both its
 * operands' slots itself when they are loads of 2- or 4-byte numbers used by the dot alone
 * (choose_fma_readers: unswizzled slots in the loads' own orders, local_loads into its #dot_op
 * layouts that codegen leaves to its k loop); else its loop stays as it is (read back whole and
 * staged again, measured slower than no pipeline). Beside them,
 * the loads the loop makes for other uses -- rows of elements (rank 1) and 2-D tiles of 2- or
 * 4-byte numbers in blocked layouts that reach no dot -- are copied ahead too and read back
 * whole, and a loop with no dot has them copied when its own tl.range asks for stages, its slots
 * taking at most a quarter of the shared memory (choose_loads). A load's `other` other than 0
 * goes with its async_copy (masked-off elements are written with it).
 *
 * Stage 0 is the set of ops the pipelined loads depend on inside the body (addresses, masks,
 * pure `if`s choosing them: a flattened persistent loop's tile switch); it runs S - 1 iterations
 * ahead, so the loop-carried values it reads run ahead with it: advancing pointers, the block
 * offsets of `tl.advance`, a running row offset. Where the rest of the body needs a value stage 0
 * computes (a mask from the running offset, the tile switch's indices in an epilogue), the rest
 * computes it again for its own iteration instead of carrying it S - 1 iterations (a register
 * tile per stage): the ops are pure, and each iter arg they read gets a lagging copy that the
 * rest advances in step with it (Triton carries such values through the loop; recomputing keeps
 * registers free, which is what attention backward runs out of). A loop stays as it is
 * (num_stages 1, or any condition below not holding, said in a remark): stage 0 holds only pure
 * ops, pure `if`s and the pipelined loads themselves, and no load's address depends on another
 * pipelined tile; a stage-0 iter arg's next value comes from stage 0 (a pointer advanced by a
 * loaded value cannot run ahead). The bounds and the step may be any values from outside the
 * loop: the copies for an iteration are masked by its existing (iv < hi for a positive step,
 * iv > hi for a negative one), so a zero-trip loop copies nothing and runs nothing. */
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

#define MAX_PIPE_LOADS     8
#define MAX_PIPE_READERS   16
#define DECLINE(p, reason) return ((p)->why_not = (reason), false)

/* A convert of a pipelined tile into a dot operand that reads the load's slot itself. */
typedef struct SlotReader {
    int load;      /* index into Pipe.loads */
    IrOp *convert; /* the convert_layout into the #dot_op layout */
    IrOp *trans;   /* a `.T` between the load and the convert (a wgmma B read as B^T), or NULL */
} SlotReader;

typedef struct Pipe {
    const char *why_not; /* why the loop stays as it is (TRIC_PIPELINE_REMARKS=1 prints it) */
    IrFunc *f;
    const PassOptions *o;
    IrOp *loop;
    IrRegion *body;
    int S;
    int nloads;
    IrOp *loads[MAX_PIPE_LOADS]; /* the pipelined loads */
    bool whole[MAX_PIPE_LOADS];  /* read back whole where the load was, for its other uses */
    int nreaders;
    SlotReader readers[MAX_PIPE_READERS];
    ValueId bufs[MAX_PIPE_LOADS];  /* local_alloc of each */
    ValueId views[MAX_PIPE_LOADS]; /* this iteration's extract view of each (new loop) */
    bool any_wgmma;
    IrOp *inflight_dot; /* the one wgmma left in flight across iterations, or NULL */
    int inflight_iter;  /* its iter arg */
    IrOp *inflight_if;  /* the `if` its result reaches the yield through (accumulator_if), or
                           NULL; its result inflight_if_result carries it */
    int inflight_if_result;
    IrOp *carried_dot; /* the last wgmma, whose result only the yield takes (attention's
                           acc = tl.dot(p, v, acc * alpha)): left in flight into the next
                           iteration, whose first wgmma_wait 0 (or one before the first use of
                           its iter arg) retires it; or NULL */
    int carried_iter;  /* its iter arg */
    bool *stage0;      /* per op index of body: in stage 0 */
    bool *remat;       /* per op index of body: a stage-0 op the rest of the body computes again */
    bool *arg_stage0;  /* per iter arg (not the iv): used by stage 0 */
    bool *arg_lag;     /* per stage-0 iter arg: the rest needs its own iteration's value too
                           (a lagging copy of it is carried) */
    ValueId ahead_valid;     /* while stage 0 is cloned for an iteration ahead: whether it exists
                                (its integer divisions divide by 1 where it does not), else 0 */
    bool extras;             /* also copy the loads that feed no dot (a first try; see analyse) */
    bool deferred_promotion; /* the loop's one wgmma is a promoted dot's partial, whose add the
                                loop carries into the next iteration (defer_promotion.c) */
    int nvalues0;            /* f->nvalues before the rewrite: the map's size */
    ValueId *map;            /* original value -> its value in what is being built (0: itself) */
} Pipe;

/* ---- analysis ------------------------------------------------------------------------------ */

static int body_index(const IrRegion *body, const IrOp *op)
{
    for (int i = 0; i < body->nops; i++)
        if (body->ops[i] == op)
            return i;
    return -1;
}

static bool is_const_zero(const IrFunc *f, ValueId v)
{
    const IrOp *def = f->values[v].def;
    while (def &&
           (def->code == OP_SPLAT || def->code == OP_BROADCAST || def->code == OP_CONVERT_LAYOUT))
        def = f->values[def->operands[0]].def;
    return def && def->code == OP_CONST && def->attr[0] == 0 && def->fattr == 0.0;
}

/* The body op defining v (top level of the loop body), or NULL. */
static IrOp *body_def(const Pipe *p, ValueId v)
{
    IrOp *def = v > 0 ? p->f->values[v].def : NULL;
    return def && body_index(p->body, def) >= 0 ? def : NULL;
}

static int load_index(const Pipe *p, const IrOp *op)
{
    for (int k = 0; k < p->nloads; k++)
        if (p->loads[k] == op)
            return k;
    return -1;
}

/* Whether the tma pass may turn the copies into TMA loads (sm_90a): it does so only when every
 * copy of the function fills whole swizzle atoms, so an unswizzled slot would keep every copy on
 * cp.async. */
static bool tma_may_run(const Pipe *p)
{
    return p->o->sm >= 90 && p->o->arch_specific && !p->o->no_tma;
}

/* Whether load can be copied into slots: a 2-D tile of numbers in a blocked layout, copies of at
 * least 4 bytes, a shared layout for it. contig: the slot's contiguous dim (-1: the load's own
 * order; wgmma's tf32 and fp8 forms ask for K-major). 16-bit tiles always; fp32 and fp8 ones when
 * `wide` (read straight from the slots by a wgmma); any 4-byte number tile when `whole4` (read
 * back whole in the load's own layout: an FMA dot's operand, a tile feeding no dot), which may
 * also take an unswizzled slot where no swizzled layout fits (plain_slot_layout). */
static bool load_copyable(Pipe *p, const IrOp *load, int contig, bool wide, bool whole4)
{
    const IrFunc *f = p->f;
    Type t = ir_type(f, load->results[0]);
    int pl = f->values[load->operands[0]].layout;
    if (pl <= 0 || pl >= f->nlayouts || f->layouts[pl].kind != LAYOUT_BLOCKED)
        DECLINE(p, "a load's layout is not blocked");
    bool tf32 = wide && t.dtype == DT_F32;
    bool fp8 = wide && !t.is_ptr && dtype_is_fp8(t.dtype);
    bool four = whole4 && !t.is_ptr && dtype_bytes(t.dtype) == 4;
    if (t.rank != 2 || t.is_ptr || (dtype_bytes(t.dtype) != 2 && !tf32 && !fp8 && !four) ||
        load->nresults != 1)
        DECLINE(p, "a load's tile is not 2-D with 16-bit elements (or fp32 or fp8 for wgmma)");
    /* fp8 tiles feed wgmma's .e4m3/.e5m2 form, K-major only; element by element would be
     * 1-byte copies, under cp.async's 4, so the tile must run along K in memory */
    if (fp8 && f->layouts[pl].blocked.order[0] != contig)
        DECLINE(p, "an fp8 tile for wgmma does not run along K in memory (wgmma reads fp8 K-major "
                   "only; its copies would be single bytes)");
    /* fp32 tiles feed wgmma's tf32 form, which reads both operands K-major: the swizzle pass
     * gives their slots that order, and a tile whose registers run along M or N is copied
     * element by element (4-byte cp.async, PTX ISA 9.7.9.25) into it */
    if (axis_vector_width(f, load) * dtype_bytes(t.dtype) < 4)
        DECLINE(p, "a load's copies would be under 4 bytes (no contiguity or divisibility proven)");
    Layout sh;
    if (shared_layout_for(&sh, t, contig >= 0 ? contig : f->layouts[pl].blocked.order[0]) ||
        (whole4 && contig < 0 && !tma_may_run(p)))
        return true;
    DECLINE(p, whole4 && contig < 0
                   ? "no swizzled shared layout fits a loaded tile (its contiguous dim is under "
                     "32 bytes), and on sm_90a, whose TMA fills swizzled slots only, a tile read "
                     "back whole gets no unswizzled one"
                   : "no swizzled shared layout fits a loaded tile (its contiguous dim is under "
                     "32 bytes)");
}

/* load_copyable for a tile read back whole (its own order; 16-bit, or 4-byte when whole4),
 * keeping the reason an earlier candidate gave: that one, not this fallback's, is what a remark
 * should say. */
static bool copyable_whole(Pipe *p, const IrOp *load, bool whole4)
{
    const char *why = p->why_not;
    bool ok = load_copyable(p, load, -1, false, whole4);
    p->why_not = why;
    return ok;
}

/* A dot operand's path from a load of this loop: `operand = convert(load)` or, for a wgmma's B,
 * `operand = convert(trans(load))`, each op used once. Fills *cv, *tr; the load or NULL. */
static IrOp *operand_reader_load(const Pipe *p, const IrOp *dot, int which, bool v3, IrOp **cv,
                                 IrOp **tr)
{
    const IrFunc *f = p->f;
    *cv = *tr = NULL;
    IrOp *c = body_def(p, dot->operands[which]);
    if (!c || c->code != OP_CONVERT_LAYOUT || ir_region_use_count(p->body, c->results[0]) != 1)
        return NULL;
    IrOp *x = body_def(p, c->operands[0]);
    /* wgmma's B through a `.T` (tutorial 06's `k = desc_k.load(...).T`, tutorial 09's
     * `b_desc.load(...).T`): the slot holds the tile as loaded and the wgmma reads it as B^T.
     * 16-bit types either way; fp8 and tf32 (fp32), whose B wgmma reads K-major only, because
     * the tile as loaded [N, K] is just that */
    Type xt = x ? ir_type(f, x->results[0]) : type_scalar(DT_I32);
    if (x && x->code == OP_TRANS && which == 1 && v3 &&
        ir_region_use_count(p->body, x->results[0]) == 1 &&
        (dtype_bytes(xt.dtype) == 2 || dtype_is_fp8(xt.dtype) || xt.dtype == DT_F32) &&
        xt.rank == 2) {
        *tr = x;
        x = body_def(p, x->operands[0]);
    }
    if (!x || x->code != OP_LOAD || x->nresults != 1)
        return NULL;
    *cv = c;
    return x;
}

/* The load of this loop a dot operand comes from through convert_layout and trans ops each used
 * once (tutorial 06's attention: K through `.T`), or NULL. */
static IrOp *operand_chain_load(const Pipe *p, ValueId operand)
{
    const IrFunc *f = p->f;
    IrOp *def = body_def(p, operand);
    while (def && (def->code == OP_CONVERT_LAYOUT || def->code == OP_TRANS) &&
           ir_region_use_count(p->body, def->results[0]) == 1)
        def = body_def(p, def->operands[0]);
    (void)f;
    return def && def->code == OP_LOAD && def->nresults == 1 ? def : NULL;
}

/* Adds ld to the pipelined loads (once); its index, or -1 when there is no room. */
static int take_load(Pipe *p, IrOp *ld)
{
    int k = load_index(p, ld);
    if (k >= 0 || p->nloads >= MAX_PIPE_LOADS)
        return k;
    p->loads[p->nloads] = ld;
    p->whole[p->nloads] = false;
    return p->nloads++;
}

static bool add_reader(Pipe *p, IrOp *ld, IrOp *cv, IrOp *tr)
{
    if (p->nreaders >= MAX_PIPE_READERS)
        return false;
    int k = take_load(p, ld);
    if (k < 0)
        return false;
    p->readers[p->nreaders++] = (SlotReader){k, cv, tr};
    return true;
}

/* The reader whose convert makes v, or NULL. */
static const SlotReader *reader_of(const Pipe *p, ValueId v)
{
    for (int r = 0; r < p->nreaders; r++)
        if (p->readers[r].convert->results[0] == v)
            return &p->readers[r];
    return NULL;
}

static bool is_reader_op(const Pipe *p, const IrOp *op)
{
    for (int r = 0; r < p->nreaders; r++)
        if (p->readers[r].convert == op || p->readers[r].trans == op)
            return true;
    return false;
}

/* Whether an op may run ahead in stage 0: no effects (OPT_EFFECT), no read of memory (a load is
 * run ahead only as the copy made for it; mark_stage0 says why not otherwise), no pipeline op, not
 * a loop, not a dot (pure, but stage 0's values are computed again in the rest and a dot is too
 * costly to compute twice), and regions only of a pure `if` (its branches pure too; their yields
 * are no effect, while a while's condition is). */
static bool may_run_ahead(const IrOp *op)
{
    if (op_has(op->code, OPT_EFFECT | OPT_READS_MEMORY | OPT_PIPELINE) || op->code == OP_DOT ||
        (op_has(op->code, OPT_REGIONS) && op->code != OP_IF))
        return false;
    for (int k = 0; k < op->nregions; k++)
        for (int i = 0; i < op->regions[k].nops; i++)
            if (!may_run_ahead(op->regions[k].ops[i]))
                return false;
    return op->nregions == 0 || op->code == OP_IF;
}

/* Calls fn(p, v) for every operand of op and of the ops nested in its regions (values from
 * inside the regions are not the body's: fn ignores them). False as soon as fn is. */
static bool each_operand(Pipe *p, const IrOp *op, bool (*fn)(Pipe *, ValueId))
{
    for (int k = 0; k < op->noperands; k++)
        if (op->operands[k] > 0 && !fn(p, op->operands[k]))
            return false;
    for (int r = 0; r < op->nregions; r++)
        for (int i = 0; i < op->regions[r].nops; i++)
            if (!each_operand(p, op->regions[r].ops[i], fn))
                return false;
    return true;
}

/* The iter arg (0-based) whose block argument is v, or -1 (the iv, or not an arg). */
static int iter_arg_of(const Pipe *p, ValueId v)
{
    for (int a = 1; a < p->body->nargs; a++)
        if (p->body->args[a] == v)
            return a - 1;
    return -1;
}

/* Adds to stage 0 the body op defining v and, transitively, what it depends on; records iter
 * args stage 0 reads. False when stage 0 would hold an op that cannot run ahead. */
static bool mark_stage0(Pipe *p, ValueId v)
{
    int a = iter_arg_of(p, v);
    if (a >= 0) {
        p->arg_stage0[a] = true;
        return true;
    }
    const IrOp *def = body_def(p, v);
    int i = def ? body_index(p->body, def) : -1;
    if (i < 0 || p->stage0[i])
        return true; /* defined outside the loop, the iv, or already in */
    if (def->code == OP_LOAD)
        DECLINE(p, load_index(p, def) >= 0
                       ? "a load's address depends on another pipelined tile"
                       : "stage 0 would hold a load that is not pipelined"); /* a load run ahead
                                                                               could fault */
    if (!may_run_ahead(def))
        DECLINE(p, "stage 0 would hold an op with effects, or a loop");
    p->stage0[i] = true;
    return each_operand(p, def, mark_stage0);
}

/* The rest of the body reads v: a value stage 0 computes is computed there again (remat), and a
 * stage-0 iter arg it reads gets a lagging copy whose next value the rest computes too. */
static bool need_in_rest(Pipe *p, ValueId v)
{
    int a = iter_arg_of(p, v);
    if (a >= 0) {
        if (!p->arg_stage0[a] || p->arg_lag[a])
            return true;
        p->arg_lag[a] = true;
        const IrOp *y = p->body->ops[p->body->nops - 1];
        return need_in_rest(p, y->operands[a]);
    }
    const IrOp *def = body_def(p, v);
    int i = def ? body_index(p->body, def) : -1;
    if (i < 0 || !p->stage0[i] || p->remat[i] || def->code == OP_LOAD)
        return true; /* the rest's own, from outside, or a pipelined tile (read from its slot) */
    p->remat[i] = true;
    return each_operand(p, def, need_in_rest);
}

static int yielded_alone(const Pipe *p, ValueId v)
{
    const IrOp *y = p->body->ops[p->body->nops - 1];
    int it = -1;
    for (int k = 0; k < y->noperands; k++)
        if (y->operands[k] == v)
            it = it < 0 ? k : -2;
    return it >= 0 && ir_region_use_count(p->body, v) == 1 ? it : -1;
}

/* An `if` of the body after dot that takes dot's result r, and r's only users: the if's result
 * *k goes to the yield alone, and each branch yields r there unchanged or uses r (then it waits
 * for the wgmma first, where it uses it). A flattened persistent loop's epilogue, `if ki == last:
 * store acc; acc = zeros`: the accumulator stays in flight across iterations except in the
 * iteration that stores it. NULL if none. */
static IrOp *accumulator_if(const Pipe *p, const IrOp *dot, int *k)
{
    const IrRegion *body = p->body;
    ValueId r = dot->results[0];
    IrOp *user = NULL;
    for (int i = body_index(body, dot) + 1; i + 1 < body->nops; i++) {
        IrOp *op = body->ops[i];
        if (!ir_op_uses(op, r))
            continue;
        if (user || op->code != OP_IF || op->nregions != 2)
            return NULL;
        for (int j = 0; j < op->noperands; j++)
            if (op->operands[j] == r)
                return NULL; /* the condition */
        user = op;
    }
    if (!user || ir_op_uses(body->ops[body->nops - 1], r))
        return NULL;
    for (int j = 0; j < user->nresults; j++) {
        bool passes = false;
        for (int b = 0; b < 2; b++) {
            const IrRegion *br = &user->regions[b];
            const IrOp *y = br->nops ? br->ops[br->nops - 1] : NULL;
            passes |= y && y->code == OP_YIELD && j < y->noperands && y->operands[j] == r;
        }
        if (passes && yielded_alone(p, user->results[j]) >= 0) {
            *k = j;
            return user;
        }
    }
    return NULL;
}

/* The iter arg (0-based) whose whole chain is dot's accumulator: c is that arg's block argument,
 * used by dot alone, and dot's result is used by the yield alone, at that position, or reaches it
 * through an accumulator_if. -1 if none. */
static int accumulator_iter(const Pipe *p, const IrOp *dot)
{
    const IrRegion *body = p->body;
    int k = 0;
    IrOp *user = accumulator_if(p, dot, &k);
    int it = user ? yielded_alone(p, user->results[k]) : yielded_alone(p, dot->results[0]);
    if (it < 0 || body->args[1 + it] != dot->operands[2])
        return -1;
    if (ir_region_use_count(body, dot->operands[2]) != 1)
        return -1;
    return it;
}

/* Replaces from with to in the ops of r from index `start` on, nested regions included. */
static void replace_uses_after(IrRegion *r, int start, ValueId from, ValueId to)
{
    for (int i = start; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int j = 0; j < op->noperands; j++)
            if (op->operands[j] == from)
                op->operands[j] = to;
        for (int j = 0; j < op->nregions; j++)
            replace_uses_after(&op->regions[j], 0, from, to);
    }
}

/* In each branch of the copy of an accumulator_if, the in-flight wgmma result v: retired
 * (wgmma_wait 0) right before the branch's first use of it other than yielding it unchanged at
 * result k, and that use and the later ones read the wait's result. */
static void wait_in_branches(Pipe *p, IrOp *ifop, ValueId v, int k)
{
    IrFunc *f = p->f;
    for (int b = 0; b < ifop->nregions; b++) {
        IrRegion *br = &ifop->regions[b];
        for (int i = 0; i < br->nops; i++) {
            IrOp *op = br->ops[i];
            bool passthrough = op->code == OP_YIELD && i == br->nops - 1;
            for (int j = 0; passthrough && j < op->noperands; j++)
                passthrough = j == k || op->operands[j] != v;
            if (!ir_op_uses(op, v) || passthrough)
                continue;
            IrBuilder bb = {.func = f, .region = br, .pos = i};
            Type t = ir_type(f, v);
            IrOp *wait = ir_build(&bb, OP_WGMMA_WAIT, op->loc, &v, 1, &t, 1, 0);
            f->values[wait->results[0]].layout = f->values[v].layout;
            f->values[wait->results[0]].name = f->values[v].name;
            replace_uses_after(br, i + 1, v, wait->results[0]);
            break;
        }
    }
}

/* Can this #mma v3 dot take its A from registers: a 16-bit A in a #dot_op<idx=0, k_width=2>
 * layout (wgmma's register fragment is mma.sync's A fragment per warp, docs/codegen.md), not a
 * load of this loop that the pipeline copies (then both operands come from slots)? */
static bool a_from_registers(const Pipe *p, const IrOp *dot)
{
    const IrFunc *f = p->f;
    Type t = ir_type(f, dot->operands[0]);
    int l = f->values[dot->operands[0]].layout;
    return t.rank == 2 && !t.is_ptr && (t.dtype == DT_F16 || t.dtype == DT_BF16) && l > 0 &&
           l < f->nlayouts && f->layouts[l].kind == LAYOUT_DOT_OPERAND &&
           f->layouts[l].dot_operand.op_idx == 0 && f->layouts[l].dot_operand.k_width == 2;
}

static bool is_op(const IrOp *o, const void *op) { return o == op; }

/* Does v, computed in the body, depend on value `on` (through the operands of body ops, at any
 * depth; a result of an `if` also through what every branch yields in its place: attention's
 * causal mask applied under an `if` between q @ k and p)? Each value's answer is kept in
 * memo (1 yes, -1 no): a chain like x = x * x reads x twice a step, so a walk down every path
 * would double with each step. */
static bool depends_walk(const Pipe *p, ValueId v, ValueId on, int depth, int8_t *memo)
{
    if (v == on)
        return true;
    const IrOp *def = v > 0 ? p->f->values[v].def : NULL;
    if (!def || depth > 64)
        return false;
    if (memo[v])
        return memo[v] > 0;
    if (!ir_region_find_if(p->body, is_op, def))
        return false;
    bool yes = false;
    for (int k = 0; k < def->noperands && !yes; k++)
        yes = def->operands[k] > 0 && depends_walk(p, def->operands[k], on, depth + 1, memo);
    if (!yes && def->code == OP_IF && def->nregions == 2) {
        int r = p->f->values[v].index;
        yes = true;
        for (int k = 0; k < 2 && yes; k++) {
            const IrRegion *branch = &def->regions[k];
            const IrOp *y = branch->nops > 0 ? branch->ops[branch->nops - 1] : NULL;
            yes = y && y->code == OP_YIELD && r < y->noperands &&
                  depends_walk(p, y->operands[r], on, depth + 1, memo);
        }
    }
    memo[v] = yes ? 1 : -1;
    return yes;
}

static bool depends_on(const Pipe *p, ValueId v, ValueId on)
{
    int8_t *memo = arena_alloc(p->f->arena, sizeof *memo * (size_t)(p->f->nvalues + 1));
    return depends_walk(p, v, on, 0, memo);
}

/* Several wgmma dots, the last one's result taken by the yield alone (an attention's acc): that
 * one need not be waited for in its own iteration. The next iteration's first wgmma_wait 0 (the
 * next q @ k's) retires it with its own dot, so it runs under the barrier, the copies and the
 * next dot's issue; the slot it reads is refilled only after that wait and the barrier after the
 * dots. A register A must be rewritten only after that wait: it must come from an earlier dot's
 * result (p from q @ k), never from what could run ahead of the wait. */
static void choose_carried_dot(Pipe *p, IrOp **wg, int nwg)
{
    IrOp *dot = wg[nwg - 1];
    int it = yielded_alone(p, dot->results[0]);
    if (it < 0 || p->arg_stage0[it])
        return;
    if (a_from_registers(p, dot)) {
        bool after_wait = false;
        for (int i = 0; i + 1 < nwg && !after_wait; i++)
            after_wait = depends_on(p, dot->operands[0], wg[i]->results[0]);
        if (!after_wait)
            return;
    }
    p->carried_dot = dot;
    p->carried_iter = it;
}

/* Finds what to pipeline in loop; false when the loop stays as it is. */

/* Registers a thread needs for the loop's carried values (iter args): 4-byte words of each tile
 * spread over the program's threads, a scalar's own. A rough floor of the loop's register
 * pressure. */
static int64_t carried_registers(const Pipe *p)
{
    const IrFunc *f = p->f;
    int64_t threads = 32 * (int64_t)(f->num_warps > 0 ? f->num_warps : 4), regs = 0;
    for (int a = 1; a < p->body->nargs; a++) {
        Type t = ir_type(f, p->body->args[a]);
        int64_t bytes = type_numel(t) * (t.is_ptr ? 8 : dtype_bytes(t.dtype));
        regs += t.rank == 0 ? (bytes + 3) / 4 : (bytes / 4 + threads - 1) / threads;
    }
    return regs;
}

/* Whether ld's tile reaches a dot of the body as an operand (through converts and `.T`s). */
static bool feeds_dot(const Pipe *p, const IrOp *ld)
{
    for (int i = 0; i < p->body->nops; i++) {
        const IrOp *dot = p->body->ops[i];
        for (int k = 0; dot->code == OP_DOT && k < 2; k++)
            if (operand_chain_load(p, dot->operands[k]) == ld)
                return true;
    }
    return false;
}

/* Whether reader r is an FMA dot's: its convert makes a #dot_op of a blocked parent. */
static bool fma_reader(const Pipe *p, const SlotReader *r)
{
    const IrFunc *f = p->f;
    int l = f->values[r->convert->results[0]].layout;
    return l > 0 && l < f->nlayouts && f->layouts[l].kind == LAYOUT_DOT_OPERAND &&
           f->layouts[f->layouts[l].dot_operand.parent].kind == LAYOUT_BLOCKED;
}

/* Whether load's tile can be copied into an unswizzled slot an FMA dot reads (plain_slot_layout):
 * a 2-D tile of 2- or 4-byte numbers in a blocked layout, copies of at least 4 bytes. */
static bool fma_copyable(const Pipe *p, const IrOp *load)
{
    const IrFunc *f = p->f;
    Type t = ir_type(f, load->results[0]);
    int pl = f->values[load->operands[0]].layout;
    int eb = t.is_ptr ? 0 : dtype_bytes(t.dtype);
    return load->nresults == 1 && t.rank == 2 && t.dtype != DT_I1 && (eb == 2 || eb == 4) &&
           pl > 0 && pl < f->nlayouts && f->layouts[pl].kind == LAYOUT_BLOCKED &&
           axis_vector_width(f, load) * eb >= 4;
}

/* Whether load k has a reader other than an FMA dot's (a wgmma or mma.sync reads its slot in a
 * swizzled layout of its own). */
static bool load_has_tensor_core_reader(const Pipe *p, int k)
{
    for (int r = 0; r < p->nreaders; r++)
        if (p->readers[r].load == k && !fma_reader(p, &p->readers[r]))
            return true;
    return false;
}

/* Whether an FMA dot reads load ld's slot (choose_fma_readers). */
static bool fma_read(const Pipe *p, const IrOp *ld)
{
    int k = load_index(p, ld);
    for (int r = 0; k >= 0 && r < p->nreaders; r++)
        if (p->readers[r].load == k && fma_reader(p, &p->readers[r]))
            return true;
    return false;
}

/* Each operand of an FMA dot (blocked accumulator) that is `convert(load)` of 2- or 4-byte
 * numbers: the dot reads its slot itself (codegen/dot_fma.c), unswizzled (plain_slot_layout),
 * instead of the tile being read back whole into registers and staged again in the dot's own
 * scratch (measured slower than no pipeline: seed 2's kernel in fp32, 64x64x32, 1.05x the
 * time). The other operand may be computed: the dot stages it as before (FLA's `tl.dot(b_A,
 * b_a)`, b_A in registers). A slot keeps the order the tile was loaded in, A [M][K] or A^T [K][M],
 * B [K][N] or B^T [N][K], so the copies are as wide as the load's (and a tensor map can fill it on
 * sm_90a); the dot's k loop reads a K-contiguous slot's rows in runs along K. A tile copied element
 * by element (4-byte numbers, no contiguity proven) with one reader goes to A^T or B whatever its
 * order, which the k loop reads in runs along M or N (seed 1's masked K: 151 registers at sm_90
 * and sm_80, 168 and 254 read back whole), except where TMA may take the copies (a tensor map
 * cannot transpose). A load may feed several dots, and other ops, which read it whole. */
static bool choose_fma_readers(Pipe *p)
{
    const IrFunc *f = p->f;
    for (int i = 0; i < p->body->nops; i++) {
        IrOp *dot = p->body->ops[i];
        int acc = dot->code == OP_DOT ? f->values[dot->results[0]].layout : 0;
        if (acc <= 0 || acc >= f->nlayouts || f->layouts[acc].kind != LAYOUT_BLOCKED)
            continue;
        for (int k = 0; k < 2; k++) {
            IrOp *cv, *tr, *ld = operand_reader_load(p, dot, k, false, &cv, &tr);
            if (!ld || tr || !fma_copyable(p, ld) ||
                (load_index(p, ld) >= 0 && load_has_tensor_core_reader(p, load_index(p, ld))))
                continue;
            if (!add_reader(p, ld, cv, NULL))
                DECLINE(p, "more tiles than the pipeline takes in one loop");
        }
    }
    return true;
}

/* Whether a dot is an op of the region itself (not of its nested regions). */
static bool body_has_dot(const IrRegion *r)
{
    for (int i = 0; i < r->nops; i++)
        if (r->ops[i]->code == OP_DOT || r->ops[i]->code == OP_WGMMA)
            return true;
    return false;
}

/* Whether a dot runs in the region (its nested regions included). */
static bool loop_has_dot(const IrRegion *r)
{
    for (int i = 0; i < r->nops; i++) {
        if (r->ops[i]->code == OP_DOT || r->ops[i]->code == OP_WGMMA)
            return true;
        for (int k = 0; k < r->ops[i]->nregions; k++)
            if (loop_has_dot(&r->ops[i]->regions[k]))
                return true;
    }
    return false;
}

/* The dot operands read back whole: the load copied ahead, a local_load in its own layout where it
 * was, the ops after it unchanged. A dot whose other operand is loaded in the loop but cannot be
 * copied stays as it was (one stage for both). */
static bool choose_whole_operands(Pipe *p)
{
    IrFunc *f = p->f;
    IrRegion *body = p->body;
    for (int i = 0; i < body->nops; i++) {
        IrOp *dot = body->ops[i];
        int acc = dot->code == OP_DOT ? f->values[dot->results[0]].layout : 0;
        LayoutKind kind = acc > 0 && acc < f->nlayouts ? f->layouts[acc].kind : LAYOUT_NONE;
        if (kind != LAYOUT_MMA && kind != LAYOUT_BLOCKED)
            continue;
        for (int k = 0; k < 2; k++) {
            if (reader_of(p, dot->operands[k]))
                continue;
            /* An FMA dot's (blocked accumulator) operand that is a load as it is, read back
             * whole, would go slot -> registers -> the dot's own staging scratch -> registers,
             * measured slower than no pipeline (seed 2's kernel in fp32, 64x64x32, H200,
             * 2048-4096: 1.05x the time; choose_fma_readers has the dot read such a load from its
             * slot instead, where its copies can be 4 bytes or wider). One computed from a load (a
             * cast, a scale) is staged from registers either way: the copy ahead only takes the
             * load's wait away. */
            IrOp *cv, *tr;
            if (kind == LAYOUT_BLOCKED && operand_reader_load(p, dot, k, false, &cv, &tr))
                continue;
            /* 16-bit tiles for the tensor cores' operands (a 4-byte one is read K-major from its
             * slot by a wgmma only); 2- or 4-byte ones for an FMA dot's */
            bool whole4 = kind == LAYOUT_BLOCKED;
            IrOp *ld = operand_chain_load(p, dot->operands[k]);
            if (!ld || (load_index(p, ld) < 0 && !copyable_whole(p, ld, whole4)))
                continue;
            IrOp *other = operand_chain_load(p, dot->operands[1 - k]);
            if (other && load_index(p, other) < 0 && !copyable_whole(p, other, whole4))
                continue;
            if (take_load(p, ld) < 0)
                DECLINE(p, "more tiles than the pipeline takes in one loop");
        }
    }
    return true;
}

/* Which loads the loop pipelines and how each dot reads them. First the dots that read slots
 * directly (both operands pipelined; or a wgmma whose B is and whose A is in registers), then
 * the operands read back whole. */
static bool choose_loads(Pipe *p, IrOp **wg, int *nwg, int *ntaken)
{
    IrFunc *f = p->f;
    IrRegion *body = p->body;
    if (!choose_fma_readers(p))
        return false;
    for (int i = 0; i < body->nops; i++) {
        IrOp *dot = body->ops[i];
        if (dot->code != OP_DOT)
            continue;
        int acc = f->values[dot->results[0]].layout;
        if (acc <= 0 || acc >= f->nlayouts || f->layouts[acc].kind != LAYOUT_MMA)
            continue;
        bool v3 = f->layouts[acc].mma.version == 3;
        IrOp *cv[2], *tr[2], *ld[2];
        for (int k = 0; k < 2; k++)
            ld[k] = operand_reader_load(p, dot, k, v3, &cv[k], &tr[k]);
        Type ta = ld[0] ? ir_type(f, ld[0]->results[0]) : (Type){0};
        Type tb = ld[1] ? ir_type(f, ld[1]->results[0]) : (Type){0};
        /* tf32 / fp8: K-major, straight from both slots; B also through a `.T` of its tile as
         * loaded, [N, K], whose K (dim 1) is then the contiguous one */
        bool b_kmajor_t = v3 && tr[1] && (dtype_is_fp8(tb.dtype) || tb.dtype == DT_F32);
        bool wide = v3 && !tr[0] && (!tr[1] || b_kmajor_t);
        bool pair = ld[0] && ld[1] && (v3 || (!tr[0] && !tr[1])) &&
                    (dtype_bytes(ta.dtype) == 2 || wide) && (dtype_bytes(tb.dtype) == 2 || wide);
        int ca = dtype_bytes(ta.dtype) == 2 ? -1 : 1;
        int cb = dtype_bytes(tb.dtype) == 2 ? -1 : b_kmajor_t ? 1 : 0;
        pair = pair && load_copyable(p, ld[0], ca, wide, false) &&
               load_copyable(p, ld[1], cb, wide, false) && !fma_read(p, ld[0]) &&
               !fma_read(p, ld[1]);
        if (pair && p->nreaders + 2 <= MAX_PIPE_READERS) {
            if (!add_reader(p, ld[0], cv[0], tr[0]) || !add_reader(p, ld[1], cv[1], tr[1]))
                DECLINE(p, "more tiles than the pipeline takes in one loop");
        } else if (v3 && ld[1] && dtype_bytes(tb.dtype) == 2 && a_from_registers(p, dot) &&
                   load_copyable(p, ld[1], -1, false, false) && !fma_read(p, ld[1])) {
            /* wgmma takes A from registers (PTX ISA 9.7.15.5.1.1, 16-bit types): a dot whose
             * B is such a load and whose A is computed (attention's q before the loop, p from
             * the softmax) reads B's slot and A's #dot_op registers; it waits for itself */
            if (!add_reader(p, ld[1], cv[1], tr[1]))
                DECLINE(p, "more tiles than the pipeline takes in one loop");
        } else {
            continue;
        }
        if (v3) {
            p->any_wgmma = true;
            if (*nwg < MAX_PIPE_READERS)
                wg[(*nwg)++] = dot;
        }
        (*ntaken)++;
    }
    if (!choose_whole_operands(p))
        return false;
    /* loads feeding no dot, in a loop pipelined for its dots: copied ahead with the others, in
     * the same groups, and read back whole where they were (attention backward's row
     * statistics m and Delta, 32 floats an iteration, which would otherwise wait on global
     * memory each iteration, as Triton copies them too). A row of elements (rank 1) of a
     * number type in any distributed layout (a replicated one is copied by each element's first
     * holder), copies of at least 4 bytes; or a 2-D tile of 2- or 4-byte numbers in a blocked
     * layout (copyable_whole) that reaches no dot (a dot's operand that was not taken above
     * stays with its dot: one stage for both). */
    /* Not when the carried values alone take more than the 255 registers a thread may have
     * (attention backward at D = 128: dK and dV are 256): the kernel spills already, and the
     * copies' addresses and the tiles read back would spill more (measured: 0.88x Triton with
     * them at D = 128, 0.91-0.93x without; docs/performance.md). */
    bool room = carried_registers(p) <= 255, dotless = !loop_has_dot(body);
    /* A loop with no dot is pipelined only when its own tl.range asks (`num_stages=` on the loop:
     * tutorial 02's persistent softmax over rows), not for the function's default: copying the
     * rows of every loop ahead was measured 0-6% faster for softmax and layer norm fp32 and 22%
     * slower for layer norm fp16, whose loops run once at its block size (docs/performance.md).
     * Its rows' slots then take at most a quarter of the shared memory the target allows. */
    bool asked = p->loop->attr[0] > 1;
    int64_t budget = shared_limit_bytes(p->o->sm > 0 ? p->o->sm : 90) / 4, used = 0;
    for (int i = 0; p->extras && room && (!dotless || asked) && i < body->nops; i++) {
        IrOp *ld = body->ops[i];
        if (ld->code != OP_LOAD || ld->nresults != 1 || load_index(p, ld) >= 0 ||
            ir_region_use_count(body, ld->results[0]) ==
                0) /* dead (its users took a copy in another
                                                    layout, layouts.c): dce drops it */
            continue;
        Type t = ir_type(f, ld->results[0]);
        int l = f->values[ld->results[0]].layout;
        bool row = t.rank == 1 && !t.is_ptr && t.dtype != DT_I1 && l > 0 && l < f->nlayouts &&
                   (f->layouts[l].kind == LAYOUT_BLOCKED || f->layouts[l].kind == LAYOUT_SLICE) &&
                   axis_vector_width(f, ld) * dtype_bytes(t.dtype) >= 4;
        /* a 2-D tile of 2- or 4-byte numbers (elementwise math, a reduction, a store): read back
         * whole in its own blocked layout, like a dot's operand that is not read from its slot */
        /* (in a loop with no dot its reason is the remark's) */
        bool tile = t.rank == 2 && t.dtype != DT_I1 && !feeds_dot(p, ld) &&
                    (dotless ? load_copyable(p, ld, -1, false, true) : copyable_whole(p, ld, true));
        if (!row && !tile) {
            if (t.rank == 1 && !p->why_not && axis_vector_width(f, ld) * dtype_bytes(t.dtype) < 4)
                p->why_not = "a load's copies would be under 4 bytes (no contiguity or "
                             "divisibility proven)";
            continue;
        }
        if (dotless) {
            used += (int64_t)p->S * shared_slot_bytes(t, false);
            if (used > budget) {
                p->why_not = arena_printf(
                    f->arena,
                    "its %s' copies would take %lld bytes of shared memory for %d stages; a "
                    "loop without a dot may take %lld, a quarter of the target's",
                    row ? "rows" : "tiles", (long long)used, p->S, (long long)budget);
                break;
            }
        }
        if (take_load(p, ld) < 0)
            break;
    }
    /* every use of a pipelined tile that is not a slot reader reads it whole */
    for (int k = 0; k < p->nloads; k++) {
        int nread = 0;
        for (int r = 0; r < p->nreaders; r++)
            nread += p->readers[r].load == k;
        if (ir_region_use_count(body, p->loads[k]->results[0]) == nread)
            continue;
        Type t = ir_type(f, p->loads[k]->results[0]);
        if (dtype_bytes(t.dtype) != 2 && t.rank != 1 && load_has_tensor_core_reader(p, k))
            DECLINE(p, "a loaded fp32 or fp8 tile has other uses than its wgmma (they read it "
                       "K-major from the slot; a whole read is for 16-bit tiles)");
        p->whole[k] = true;
    }
    return true;
}

/* Whether the loop's body itself (not its nested loops) loads from global memory: a nested loop
 * was taken (or refused) on its own, inner loops first. */
static bool body_loads(const IrRegion *r)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        if (op->code == OP_LOAD)
            return true;
        for (int k = 0; op->code != OP_FOR && op->code != OP_WHILE && k < op->nregions; k++)
            if (body_loads(&op->regions[k]))
                return true;
    }
    return false;
}

/* Whether an FMA dot of the loop's body (not of nested regions) has an operand computed from a
 * load of the body. */
static bool fma_dot_reaches_load(const Pipe *p)
{
    for (int i = 0; i < p->body->nops; i++) {
        const IrOp *op = p->body->ops[i];
        int acc = op->code == OP_DOT ? p->f->values[op->results[0]].layout : 0;
        if (acc > 0 && acc < p->f->nlayouts && p->f->layouts[acc].kind == LAYOUT_BLOCKED &&
            (operand_chain_load(p, op->operands[0]) || operand_chain_load(p, op->operands[1])))
            return true;
    }
    return false;
}

/* Finds what to pipeline in loop; false when the loop stays as it is. */
static bool analyse(Pipe *p)
{
    IrFunc *f = p->f;
    IrRegion *body = p->body;
    if (body->nops == 0 || body->ops[body->nops - 1]->code != OP_YIELD || body->nargs < 1)
        DECLINE(p, "the loop has no yield");
    int64_t step;
    if (passes_const_int(f, p->loop->operands[2], &step) && step == 0)
        DECLINE(p, "the step is 0");
    IrOp *wg[MAX_PIPE_READERS]; /* the dots that become wgmma ops, in body order */
    int nwg = 0, ntaken = 0;
    if (!choose_loads(p, wg, &nwg, &ntaken))
        return false;
    if (p->nloads == 0 && !p->why_not && !body_loads(body))
        DECLINE(p, "it loads nothing itself (a nested loop's loads are that loop's: pipelined "
                   "there, or refused "
                   "with a remark of their own)");
    if (p->nloads == 0 && !p->why_not && p->loop->attr[0] <= 1 && !loop_has_dot(body))
        DECLINE(p, "no dot reads its loads, and its range asks for no stages (a loop without a "
                   "dot is pipelined when tl.range(..., num_stages=N) asks, as in Triton)");
    if (p->nloads == 0 && !p->why_not && fma_dot_reaches_load(p))
        DECLINE(p, "its FMA dots' loaded operands are not tiles whose slots they can read (loads "
                   "of 2- or 4-byte numbers, as they are, copied in pieces of at least 4 bytes; "
                   "read back whole and staged again they were measured slower than no "
                   "pipeline)");
    if (p->nloads == 0 && !p->why_not && !body_has_dot(body) && loop_has_dot(body))
        DECLINE(p, "its dots are inside ifs or inner loops: only a dot of the loop's own body has "
                   "its loads copied ahead (as in Triton)");
    if (p->nloads == 0) /* keep the reason a candidate load gave, if any */
        DECLINE(p, p->why_not ? p->why_not : "no dot reads tiles loaded in the loop");
    p->why_not = NULL;
    /* one wgmma, both operands from slots, its result only the accumulator's next value: it
     * stays in flight across the back edge (wgmma_wait 1) */
    if (ntaken == 1 && nwg == 1 && reader_of(p, wg[0]->operands[0]) &&
        accumulator_iter(p, wg[0]) >= 0) {
        p->inflight_dot = wg[0];
        p->inflight_iter = accumulator_iter(p, wg[0]);
        p->inflight_if = accumulator_if(p, wg[0], &p->inflight_if_result);
    }
    for (int k = 0; k < p->nloads; k++) {
        const IrOp *ld = p->loads[k];
        p->stage0[body_index(body, ld)] = true;
        for (int j = 0; j < ld->noperands; j++)
            if (ld->operands[j] > 0 && !mark_stage0(p, ld->operands[j]))
                return false;
    }
    /* what computes the next value of a stage-0 iter arg (the pointer increments) is stage 0
     * too, and may draw more iter args in */
    const IrOp *y = body->ops[body->nops - 1];
    for (bool grew = true; grew;) {
        grew = false;
        for (int a = 0; a + 1 < body->nargs; a++) {
            const IrOp *ydef = body_def(p, y->operands[a]);
            int yi = ydef ? body_index(body, ydef) : -1;
            if (!p->arg_stage0[a] || yi < 0 || p->stage0[yi])
                continue;
            if (!mark_stage0(p, y->operands[a]))
                return false;
            grew = true;
        }
    }
    for (int a = 0; a + 1 < body->nargs; a++) {
        const IrOp *ydef = body_def(p, y->operands[a]);
        int yi = ydef ? body_index(body, ydef) : -1;
        if (p->arg_stage0[a] && yi >= 0 && !p->stage0[yi])
            DECLINE(p, "a stage-0 iter arg's next value comes from the rest of the body");
    }
    /* what the rest of the body reads of stage 0: computed again there, for its own iteration;
     * and a stage-0 iter arg whose result is used after the loop takes its lagging copy's */
    for (int i = 0; i + 1 < body->nops; i++)
        if (!p->stage0[i] && !is_reader_op(p, body->ops[i]) &&
            !each_operand(p, body->ops[i], need_in_rest))
            return false;
    for (int a = 0; a + 1 < body->nargs; a++) {
        if (!p->arg_stage0[a] && !need_in_rest(p, y->operands[a]))
            return false;
        if (p->arg_stage0[a] && a < p->loop->nresults &&
            ir_region_use_count(&f->body, p->loop->results[a]) > 0 &&
            !need_in_rest(p, body->args[1 + a]))
            return false;
    }
    if ((nwg > 1 || p->deferred_promotion) && !p->inflight_dot)
        choose_carried_dot(p, wg, nwg);
    return true;
}

/* ---- building ------------------------------------------------------------------------------ */

static ValueId mapped(const Pipe *p, ValueId v)
{
    return v > 0 && v < p->nvalues0 && p->map[v] ? p->map[v] : v;
}

static void set_layout(IrFunc *f, ValueId v, int layout) { f->values[v].layout = layout; }

/* An integer divisor d of an op cloned for an iteration ahead: d where the iteration exists, else
 * 1. Stage 0 runs past the loop's end (its copies masked off), and there a divisor computed from
 * the iteration's values may be 0 (tutorial 09's tile switch past the last tile: `tile_id %
 * group_size_m` with group_size_m = 0); an integer division by 0 is undefined (LLVM IR's sdiv,
 * and the interpreter stops on it), so it never runs with one. */
static ValueId guard_divisor(Pipe *p, IrBuilder *b, const IrOp *o, ValueId d)
{
    IrFunc *f = p->f;
    Type t = ir_type(f, d), ct = t, i1 = t;
    int64_t known;
    if (t.is_ptr || !dtype_is_int(t.dtype) || (passes_const_int(f, d, &known) && known != 0))
        return d;
    ct.rank = 0;
    i1.dtype = DT_I1;
    ValueId one = ir_build_const_int(b, o->loc, ct, 1), valid = p->ahead_valid;
    if (t.rank > 0) {
        one = ir_build_unary(b, OP_SPLAT, o->loc, t, one);
        valid = ir_build_unary(b, OP_SPLAT, o->loc, i1, valid);
        set_layout(f, one, f->values[d].layout);
        set_layout(f, valid, f->values[d].layout);
    }
    ValueId ops[3] = {valid, d, one};
    ValueId r = ir_build(b, OP_SELECT, o->loc, ops, 3, &t, 1, 0)->results[0];
    set_layout(f, r, f->values[d].layout);
    return r;
}

/* ir_clone_op_mapped's operand hook: an op copied ahead divides only where its iteration exists. */
static void guard_operands(void *ctx, IrBuilder *b, const IrOp *o, ValueId *ops)
{
    Pipe *p = ctx;
    if (p->ahead_valid && (o->code == OP_DIV || o->code == OP_REM) && o->noperands == 2)
        ops[1] = guard_divisor(p, b, o, ops[1]);
}

/* A copy of o at b with operands mapped; its results (and region args) become the map of o's. */
static IrOp *clone_mapped(Pipe *p, IrBuilder *b, const IrOp *o)
{
    IrCloneMap m = {.map = p->map, .nmap = p->nvalues0, .operands = guard_operands, .ctx = p};
    return ir_clone_op_mapped(b, o, &m);
}

static ValueId const_i(IrBuilder *b, SrcLoc loc, DType dt, int64_t v)
{
    return ir_build_const_int(b, loc, type_scalar(dt), v);
}

static IrOp *build0(IrBuilder *b, OpCode code, SrcLoc loc, int64_t attr0)
{
    IrOp *op = ir_build(b, code, loc, NULL, 0, NULL, 0, 0);
    op->attr[0] = attr0;
    return op;
}

static ValueId slot_view(Pipe *p, IrBuilder *b, int k, ValueId index)
{
    IrFunc *f = p->f;
    Type bt = ir_type(f, p->bufs[k]), vt = bt;
    vt.rank = (uint8_t)(bt.rank - 1);
    for (int d = 0; d < vt.rank; d++)
        vt.shape[d] = bt.shape[d + 1];
    for (int d = vt.rank; d < TRIC_MAX_RANK; d++)
        vt.shape[d] = 0;
    ValueId ops[2] = {p->bufs[k], index};
    ValueId v = ir_build(b, OP_SLOT, p->loads[k]->loc, ops, 2, &vt, 1, 0)->results[0];
    set_layout(f, v, f->values[p->bufs[k]].layout); /* a plain_slot_layout, else none yet */
    return v;
}

/* Whether the iteration whose iv is `iv` exists: iv < hi for a positive step, iv > hi for a
 * negative one (a step known only at run time chooses between the two). */
static ValueId iteration_exists(Pipe *p, IrBuilder *b, ValueId iv)
{
    SrcLoc loc = p->loop->loc;
    Type i1 = type_scalar(DT_I1);
    ValueId hi = p->loop->operands[1], stepv = p->loop->operands[2];
    int64_t step;
    bool known = passes_const_int(p->f, stepv, &step);
    if (known && step > 0)
        return ir_build_binary(b, OP_CMP_LT, loc, i1, iv, hi);
    if (known)
        return ir_build_binary(b, OP_CMP_GT, loc, i1, iv, hi);
    ValueId up = ir_build_binary(b, OP_CMP_GT, loc, i1, stepv,
                                 const_i(b, loc, ir_type(p->f, stepv).dtype, 0));
    ValueId ops[3] = {up, ir_build_binary(b, OP_CMP_LT, loc, i1, iv, hi),
                      ir_build_binary(b, OP_CMP_GT, loc, i1, iv, hi)};
    return ir_build(b, OP_SELECT, loc, ops, 3, &i1, 1, 0)->results[0];
}

/* iv + s * step, the iv s iterations after iv. */
static ValueId iv_after(Pipe *p, IrBuilder *b, ValueId iv, int64_t s)
{
    SrcLoc loc = p->loop->loc;
    Type t = ir_type(p->f, p->loop->operands[0]);
    ValueId stepv = p->loop->operands[2];
    int64_t step;
    ValueId by = passes_const_int(p->f, stepv, &step)
                     ? const_i(b, loc, t.dtype, s * step)
                     : ir_build_binary(b, OP_MUL, loc, t, const_i(b, loc, t.dtype, s), stepv);
    return ir_build_binary(b, OP_ADD, loc, t, iv, by);
}

/* v computed again in layout `layout` at b, for a copy: a chain (at most 32 ops) of make_range,
 * const, splat and elementwise ops of rank-1 values, scalars taken as mapped; 0 when v has no
 * such form. memo keeps what was built (original id -> new) for the one copy. */
typedef struct Relayout {
    ValueId from[32], to[32];
    int n;
} Relayout;

static ValueId relayout(Pipe *p, IrBuilder *b, ValueId v, int layout, Relayout *memo)
{
    IrFunc *f = p->f;
    Type t = ir_type(f, v);
    if (t.rank == 0 || f->values[v].layout == layout)
        return mapped(p, v);
    for (int i = 0; i < memo->n; i++)
        if (memo->from[i] == v)
            return memo->to[i];
    const IrOp *def = f->values[v].def;
    if (!def || def->nresults != 1 || def->nregions || def->noperands > 3 || memo->n >= 32 ||
        t.rank != 1 ||
        !(def->code == OP_MAKE_RANGE || def->code == OP_CONST || def->code == OP_SPLAT ||
          op_has(def->code, OPT_ELEMENTWISE)))
        return 0;
    ValueId ops[3];
    for (int k = 0; k < def->noperands; k++)
        if (!(ops[k] = relayout(p, b, def->operands[k], layout, memo)))
            return 0;
    IrOp *copy = ir_build(b, def->code, def->loc, ops, def->noperands, &t, 1, 0);
    memcpy(copy->attr, def->attr, sizeof copy->attr);
    copy->fattr = def->fattr;
    copy->sattr = def->sattr;
    set_layout(f, copy->results[0], layout);
    f->values[copy->results[0]].axis = f->values[v].axis;
    memo->from[memo->n] = v;
    memo->to[memo->n++] = copy->results[0];
    return copy->results[0];
}

/* The layout load k's copy runs in: its own, or for a row of elements whose layout several
 * threads hold alike (a slice of an #mma layout: loaded in its users' layout, layouts.c) a
 * plain blocked one, one element per thread, with the addresses computed again in it -- each
 * holder would copy every element it holds and keep a pointer for each. *ptr and *own (the
 * load's mask, or 0) come back in that layout. */
static int copy_layout(Pipe *p, IrBuilder *b, const IrOp *ld, ValueId *ptr, ValueId *own)
{
    IrFunc *f = p->f;
    Type t = ir_type(f, ld->operands[0]);
    int l = f->values[ld->operands[0]].layout;
    *ptr = mapped(p, ld->operands[0]);
    *own = ld->noperands > 1 && ld->operands[1] > 0 ? mapped(p, ld->operands[1]) : 0;
    if (t.rank != 1 || !layout_replicates(f, l, t) ||
        (ld->noperands > 2 && ld->operands[2] > 0 && !is_const_zero(f, ld->operands[2])))
        return l;
    Layout bl;
    layout_blocked_build(&bl, 1, t.shape, NULL, NULL, f->num_warps > 0 ? f->num_warps : 4);
    int cl = ir_layout_intern(f, &bl);
    Relayout memo = {.n = 0};
    ValueId np = relayout(p, b, ld->operands[0], cl, &memo);
    ValueId nm = *own ? relayout(p, b, ld->operands[1], cl, &memo) : 0;
    if (!np || (*own && !nm))
        return l; /* the ops built stay unused: dce drops them */
    *ptr = np;
    *own = nm;
    return cl;
}

/* Stage 0 for the iteration whose iv is `iv`: the stage-0 ops cloned (the map already holds the
 * iv and the stage-0 iter args), each pipelined load an async_copy into slot `slot` masked by
 * its mask and by the iteration existing, then one commit. */
static void emit_stage0(Pipe *p, IrBuilder *b, ValueId iv, ValueId slot)
{
    IrFunc *f = p->f;
    IrRegion *body = p->body;
    SrcLoc loc = p->loop->loc;
    ValueId valid = iteration_exists(p, b, iv);
    for (int i = 0; i < body->nops; i++) {
        const IrOp *op = body->ops[i];
        if (!p->stage0[i])
            continue;
        int k = load_index(p, op);
        if (k < 0) {
            p->ahead_valid = valid;
            clone_mapped(p, b, op);
            p->ahead_valid = 0;
            continue;
        }
        ValueId ptr, own;
        int pl = copy_layout(p, b, op, &ptr, &own);
        Type pt = ir_type(f, ptr), mt = pt;
        mt.is_ptr = false;
        mt.dtype = DT_I1;
        ValueId mask = ir_build_unary(b, OP_SPLAT, op->loc, mt, valid);
        set_layout(f, mask, pl);
        if (own) {
            mask = ir_build_binary(b, OP_AND, op->loc, mt, own, mask);
            set_layout(f, mask, pl);
        }
        ValueId view = slot_view(p, b, k, slot);
        /* `other` travels with the copy unless it is 0 (the zero fill cp.async does anyway) */
        ValueId other =
            op->noperands > 2 && op->operands[2] > 0 && !is_const_zero(f, op->operands[2])
                ? mapped(p, op->operands[2])
                : 0;
        ValueId ops[4] = {view, ptr, mask, other};
        ir_build(b, OP_ASYNC_COPY, op->loc, ops, other ? 4 : 3, NULL, 0, 0);
    }
    build0(b, OP_ASYNC_COMMIT, loc, 0);
}

/* map: iv -> iv_value; each stage-0 iter arg -> vals[a]. */
static void map_stage0_args(Pipe *p, ValueId iv_value, const ValueId *vals)
{
    memset(p->map, 0, sizeof *p->map * (size_t)p->nvalues0);
    p->map[p->body->args[0]] = iv_value;
    for (int a = 0; a + 1 < p->body->nargs; a++)
        if (p->arg_stage0[a])
            p->map[p->body->args[1 + a]] = vals[a];
}

/* (x + 1) % S for a slot index x. */
static ValueId next_slot(Pipe *p, IrBuilder *b, ValueId x)
{
    SrcLoc loc = p->loop->loc;
    Type i32 = type_scalar(DT_I32);
    ValueId x1 = ir_build_binary(b, OP_ADD, loc, i32, x, const_i(b, loc, DT_I32, 1));
    ValueId wrap =
        ir_build_binary(b, OP_CMP_GE, loc, type_scalar(DT_I1), x1, const_i(b, loc, DT_I32, p->S));
    ValueId ops[3] = {wrap, const_i(b, loc, DT_I32, 0), x1};
    Type t = i32;
    return ir_build(b, OP_SELECT, loc, ops, 3, &t, 1, 0)->results[0];
}

/* wgmma_wait 0 on the carried iter arg (its block argument, body value `arg`): later ops read
 * the wait's result. */
static void wait_carried(Pipe *p, IrBuilder *b, ValueId arg, SrcLoc loc)
{
    IrFunc *f = p->f;
    ValueId v = mapped(p, arg);
    Type t = ir_type(f, arg);
    IrOp *wait = ir_build(b, OP_WGMMA_WAIT, loc, &v, 1, &t, 1, 0);
    set_layout(f, wait->results[0], f->values[arg].layout);
    f->values[wait->results[0]].name = f->values[arg].name;
    p->map[arg] = wait->results[0];
}

/* What rewrite's steps share: the new loop, its body and builder, the lagging copies. */
typedef struct {
    IrOp *loop;     /* the new for */
    IrRegion *nb;   /* its body */
    IrBuilder nbld; /* appending to it */
    int niter, nlag, nres;
    int *lag;            /* the old iter args with a lagging copy, in order */
    ValueId *lag_args;   /* their lagging copies' block args */
    ValueId *yields;     /* the new yield's operands */
    ValueId carried_arg; /* the carried wgmma's iter arg (old body), 0 if none */
    bool carried_waited; /* its wait is emitted */
} Rewrite;

/* The slot layout of load k when an FMA dot reads it (choose_fma_readers: unswizzled, in the
 * load's order, or A^T [K][M] or B [K][N] for element-by-element copies), or when it is a 2-D tile that only whole local_loads read, of 4-byte
 * elements copied in pieces under 16 bytes or of any size that no swizzled layout fits:
 * unswizzled, in the load's own order (element (r, c) at (r * C + c) * its size, c along the
 * contiguous dim); else 0, and the swizzle pass chooses. A swizzled
 * slot gives every element of such narrow copies its own XOR-ed offset, loop-invariant, one
 * register each across the loop (seed 1's fp32 64x64x32 FMA matmul, 4-byte copies: 217 registers
 * at sm_90 with its 32 per thread, 168 unswizzled, 167 not pipelined); 16-byte copies share one
 * offset per eight rows, and ldmatrix and wgmma need the swizzle. Not where TMA may take the
 * copies (sm_90a): it fills swizzled slots only, and all of a function's copies or none. */
static int plain_slot_layout(Pipe *p, int k)
{
    IrFunc *f = p->f;
    const IrOp *ld = p->loads[k];
    Type t = ir_type(f, ld->results[0]);
    int pl = f->values[ld->operands[0]].layout;
    if (t.rank != 2 || pl <= 0 || pl >= f->nlayouts || f->layouts[pl].kind != LAYOUT_BLOCKED)
        return 0;
    int cd = f->layouts[pl].blocked.order[0], fma = -1, nfma = 0; /* fma: its operand index */
    for (int r = 0; r < p->nreaders; r++) {
        if (p->readers[r].load != k)
            continue;
        if (!fma_reader(p, &p->readers[r]))
            return 0;
        int l = f->values[p->readers[r].convert->results[0]].layout;
        fma = f->layouts[l].dot_operand.op_idx;
        nfma++;
    }
    Layout l;
    /* an FMA dot's operand keeps the load's order; copied element by element for one dot, A^T
     * [K][M] or B [K][N] (M or N contiguous), unless a tensor map may fill it
     * (choose_fma_readers) */
    if (fma >= 0) {
        if (nfma == 1 && axis_vector_width(f, ld) == 1 && !tma_may_run(p))
            cd = fma == 0 ? 0 : 1;
    } else if (shared_layout_for(&l, t, cd) &&
               (dtype_bytes(t.dtype) != 4 ||
                axis_vector_width(f, ld) * dtype_bytes(t.dtype) >= 16 || tma_may_run(p)))
        return 0;
    l = (Layout){.kind = LAYOUT_SHARED, .rank = 2};
    l.shared.vec = 1;
    l.shared.per_phase = 1;
    l.shared.max_phase = 1;
    l.shared.order[0] = cd;
    l.shared.order[1] = 1 - cd;
    return ir_layout_intern(f, &l);
}

/* The stage buffers: one local_alloc of S slots per pipelined load. */
static void alloc_buffers(Pipe *p, IrBuilder *b)
{
    IrFunc *f = p->f;
    for (int k = 0; k < p->nloads; k++) {
        Type t = ir_type(f, p->loads[k]->results[0]), bt = t;
        bt.is_smem = true;
        bt.rank = (uint8_t)(t.rank + 1);
        bt.shape[0] = p->S;
        for (int d = 0; d < t.rank; d++)
            bt.shape[d + 1] = t.shape[d];
        p->bufs[k] = ir_build(b, OP_LOCAL_ALLOC, p->loads[k]->loc, NULL, 0, &bt, 1, 0)->results[0];
        f->values[p->bufs[k]].name = f->values[p->loads[k]->results[0]].name;
        int plain = plain_slot_layout(p, k);
        if (plain)
            set_layout(f, p->bufs[k], plain);
    }
}

/* The prologue: stage 0 of iterations 0 .. S-2. Returns the iter args' values after it (stage-0
 * iter args advanced, the others their initial values). */
static ValueId *emit_prologue(Pipe *p, IrBuilder *b, int niter)
{
    IrFunc *f = p->f;
    IrOp *L = p->loop;
    SrcLoc loc = L->loc;
    ValueId *cur = arena_alloc(f->arena, sizeof(ValueId) * (size_t)(niter + 1));
    for (int a = 0; a < niter; a++)
        cur[a] = L->operands[3 + a];
    const IrOp *y = p->body->ops[p->body->nops - 1];
    for (int s = 0; s + 1 < p->S; s++) {
        ValueId iv = s > 0 ? iv_after(p, b, L->operands[0], s) : L->operands[0];
        map_stage0_args(p, iv, cur);
        emit_stage0(p, b, iv, const_i(b, loc, DT_I32, s));
        for (int a = 0; a < niter; a++)
            if (p->arg_stage0[a])
                cur[a] = mapped(p, y->operands[a]);
    }
    return cur;
}

/* The new loop: the old iter args, the lagging copies of stage-0 iter args the rest reads (from
 * the same initial values), then the insert and extract slots; its body's arguments. */
static void build_loop(Pipe *p, IrBuilder *b, const ValueId *cur, Rewrite *rw)
{
    IrFunc *f = p->f;
    IrOp *L = p->loop;
    IrRegion *body = p->body;
    SrcLoc loc = L->loc;
    int niter = rw->niter;
    rw->lag = arena_alloc(f->arena, sizeof(int) * (size_t)(niter + 1));
    rw->nlag = 0;
    for (int a = 0; a < niter; a++)
        if (p->arg_lag[a])
            rw->lag[rw->nlag++] = a;
    int nlag = rw->nlag, nres = niter + nlag + 2, nops = 3 + nres;
    rw->nres = nres;
    ValueId *ops = arena_alloc(f->arena, sizeof(ValueId) * (size_t)nops);
    Type *types = arena_alloc(f->arena, sizeof(Type) * (size_t)nres);
    ops[0] = L->operands[0], ops[1] = L->operands[1], ops[2] = L->operands[2];
    for (int a = 0; a < niter; a++) {
        ops[3 + a] = p->arg_stage0[a] ? cur[a] : L->operands[3 + a];
        types[a] = ir_type(f, body->args[1 + a]);
    }
    for (int j = 0; j < nlag; j++) {
        ops[3 + niter + j] = L->operands[3 + rw->lag[j]];
        types[niter + j] = types[rw->lag[j]];
    }
    ops[3 + niter + nlag] = const_i(b, loc, DT_I32, p->S - 1);
    ops[4 + niter + nlag] = const_i(b, loc, DT_I32, 0);
    types[niter + nlag] = types[niter + nlag + 1] = type_scalar(DT_I32);
    IrOp *N = ir_build(b, OP_FOR, loc, ops, nops, types, nres, 1);
    memcpy(N->attr, L->attr, sizeof N->attr);
    IrRegion *nb = &N->regions[0];
    for (int a = 0; a < body->nargs; a++) {
        ValueId old = body->args[a];
        ValueId nv = ir_region_add_arg(f, nb, f->values[old].type, f->values[old].name);
        set_layout(f, nv, f->values[old].layout);
    }
    rw->lag_args = arena_alloc(f->arena, sizeof(ValueId) * (size_t)(nlag + 1));
    for (int j = 0; j < nlag; j++) {
        ValueId old = body->args[1 + rw->lag[j]];
        rw->lag_args[j] = ir_region_add_arg(f, nb, f->values[old].type, f->values[old].name);
        set_layout(f, rw->lag_args[j], f->values[old].layout);
        set_layout(f, N->results[niter + j], f->values[old].layout);
        f->values[N->results[niter + j]].name = f->values[old].name;
    }
    ir_region_add_arg(f, nb, type_scalar(DT_I32), "slot_insert");
    ir_region_add_arg(f, nb, type_scalar(DT_I32), "slot_extract");
    for (int a = 0; a < niter; a++) {
        set_layout(f, N->results[a], f->values[L->results[a]].layout);
        f->values[N->results[a]].name = f->values[L->results[a]].name;
    }
    rw->loop = N;
    rw->nb = nb;
    rw->nbld = (IrBuilder){.func = f, .region = nb, .pos = -1};
    rw->yields = arena_alloc(f->arena, sizeof(ValueId) * (size_t)nres);
}

/* A stage-0 op in the rest: a tile read back whole from its slot, in the load's layout, where the
 * load was; a value of stage 0 the rest reads, computed again for this iteration. */
static void rest_stage0_op(Pipe *p, IrBuilder *nbld, IrOp *op, int i)
{
    IrFunc *f = p->f;
    int j = load_index(p, op);
    if (j >= 0 && p->whole[j]) {
        Type t = ir_type(f, op->results[0]);
        ValueId r = ir_build(nbld, OP_LOCAL_LOAD, op->loc, &p->views[j], 1, &t, 1, 0)->results[0];
        set_layout(f, r, f->values[op->operands[0]].layout);
        f->values[r].name = f->values[op->results[0]].name;
        p->map[op->results[0]] = r;
    }
    if (p->remat[i])
        clone_mapped(p, nbld, op);
}

/* A dot operand's convert that reads a slot: from the slot into the operand's registers, unless a
 * wgmma reads the slot itself. Returns false when op is not such a convert (nor the B^T view a
 * wgmma reads). */
static bool rest_slot_reader(Pipe *p, IrBuilder *nbld, IrOp *op)
{
    IrFunc *f = p->f;
    int k = -1;
    bool is_trans = false;
    for (int r = 0; r < p->nreaders; r++) {
        if (p->readers[r].convert == op)
            k = p->readers[r].load;
        is_trans |= p->readers[r].trans == op;
    }
    if (is_trans) /* the wgmma reads the slot as B^T */
        return true;
    if (k < 0)
        return false;
    const Layout *ol = &f->layouts[f->values[op->results[0]].layout];
    const Layout *parent =
        ol->kind == LAYOUT_DOT_OPERAND ? &f->layouts[ol->dot_operand.parent] : NULL;
    if (parent && parent->kind == LAYOUT_MMA && parent->mma.version == 3)
        return true;
    Type t = ir_type(f, op->results[0]);
    ValueId r = ir_build(nbld, OP_LOCAL_LOAD, op->loc, &p->views[k], 1, &t, 1, 0)->results[0];
    set_layout(f, r, f->values[op->results[0]].layout);
    f->values[r].name = f->values[op->results[0]].name;
    p->map[op->results[0]] = r;
    return true;
}

/* An #mma v3 dot whose B (and A, unless it comes from registers) is read from slots: a wgmma on
 * the slot views and its wait (pending 1 for the dot that stays in flight). A wait for all
 * (pending 0) also retires the carried wgmma of the previous iteration: its iter arg goes through
 * the same wait. Returns false when op is not such a dot. */
static bool rest_wgmma(Pipe *p, Rewrite *rw, IrOp *op)
{
    IrFunc *f = p->f;
    int acc = op->code == OP_DOT ? f->values[op->results[0]].layout : 0;
    if (acc <= 0 || f->layouts[acc].kind != LAYOUT_MMA || f->layouts[acc].mma.version != 3)
        return false;
    const SlotReader *ra = reader_of(p, op->operands[0]);
    const SlotReader *rb = reader_of(p, op->operands[1]);
    int ka = ra ? ra->load : -1, kb = rb ? rb->load : -1;
    if (kb < 0 || (ka < 0 && !a_from_registers(p, op)))
        return false;
    IrBuilder *nbld = &rw->nbld;
    ValueId wops[3] = {ka >= 0 ? p->views[ka] : mapped(p, op->operands[0]), p->views[kb],
                       mapped(p, op->operands[2])};
    Type t = ir_type(f, op->results[0]);
    IrOp *w = ir_build(nbld, OP_WGMMA, op->loc, wops, 3, &t, 1, 0);
    memcpy(w->attr, op->attr, sizeof w->attr);
    w->attr[1] = rb->trans ? 1 : 0; /* trans_b */
    set_layout(f, w->results[0], acc);
    bool stays = op == p->inflight_dot || op == p->carried_dot;
    ValueId carried = rw->carried_arg;
    /* the carried wgmma of the last iteration, not waited for yet, retires with the first wait
     * of this one: a wait 0, or the carried dot's own wait 1 (wgmma groups complete in order) */
    bool merge = (!stays || op == p->carried_dot) && carried && !rw->carried_waited;
    ValueId wv[2] = {w->results[0], merge ? mapped(p, carried) : 0};
    Type wt[2] = {t, merge ? ir_type(f, carried) : t};
    IrOp *wait = ir_build(nbld, OP_WGMMA_WAIT, op->loc, wv, merge ? 2 : 1, wt, merge ? 2 : 1, 0);
    wait->attr[0] = stays ? 1 : 0;
    set_layout(f, wait->results[0], acc);
    f->values[wait->results[0]].name = f->values[op->results[0]].name;
    p->map[op->results[0]] = wait->results[0];
    if (merge) {
        set_layout(f, wait->results[1], f->values[carried].layout);
        f->values[wait->results[1]].name = f->values[carried].name;
        p->map[carried] = wait->results[1];
        rw->carried_waited = true;
    }
    return true;
}

/* Steps 1 and 2 of the new body: this iteration's tiles complete and seen by every thread, then
 * the rest of the old body for iteration i. */
static void emit_rest(Pipe *p, Rewrite *rw)
{
    IrRegion *body = p->body, *nb = rw->nb;
    IrBuilder *nbld = &rw->nbld;
    SrcLoc loc = p->loop->loc;
    ValueId ext = nb->args[body->nargs + rw->nlag + 1];
    /* 1. No async-proxy fence for wgmma: the slots' only writers are cp.async copies, completed
     * by async_wait and published by bar.sync, as Triton (FenceInsertion fences
     * register-to-shared copies only) and CUTLASS (MainloopSm90CpAsyncGmma) order them; the
     * fence cost 3% on seed 2's 128x128x64 loop on the H100 (docs/performance.md). A wgmma
     * operand stored from registers is fenced where codegen stores it (dot_wgmma.c). */
    build0(nbld, OP_ASYNC_WAIT, loc, p->S - 2);
    build0(nbld, OP_BARRIER, loc, 0);
    for (int k = 0; k < p->nloads; k++)
        p->views[k] = slot_view(p, nbld, k, ext);

    /* 2. the rest of the body, for iteration i */
    memset(p->map, 0, sizeof *p->map * (size_t)p->nvalues0);
    for (int a = 0; a < body->nargs; a++)
        p->map[body->args[a]] = nb->args[a];
    for (int j = 0; j < rw->nlag; j++)
        p->map[body->args[1 + rw->lag[j]]] = rw->lag_args[j];
    /* the carried wgmma's iter arg: waited for before its first use (or with the first wait 0) */
    rw->carried_arg = p->carried_dot ? body->args[1 + p->carried_iter] : 0;
    rw->carried_waited = false;
    for (int i = 0; i + 1 < body->nops; i++) {
        IrOp *op = body->ops[i];
        if (rw->carried_arg && !rw->carried_waited && !p->stage0[i] &&
            ir_op_uses(op, rw->carried_arg)) {
            wait_carried(p, nbld, rw->carried_arg, loc);
            rw->carried_waited = true;
        }
        if (p->stage0[i]) {
            rest_stage0_op(p, nbld, op, i);
            continue;
        }
        if (rest_slot_reader(p, nbld, op) || rest_wgmma(p, rw, op))
            continue;
        IrOp *copy = clone_mapped(p, nbld, op);
        if (copy && op == p->inflight_if)
            wait_in_branches(p, copy, mapped(p, p->inflight_dot->results[0]),
                             p->inflight_if_result);
    }
    if (rw->carried_arg && !rw->carried_waited) /* unused in the body: retired before its slot
                                                  is refilled */
        wait_carried(p, nbld, rw->carried_arg, loc);
    const IrOp *y = body->ops[body->nops - 1];
    for (int a = 0; a < rw->niter; a++)
        if (!p->arg_stage0[a])
            rw->yields[a] = mapped(p, y->operands[a]);
    for (int j = 0; j < rw->nlag; j++) /* the rest's own copy of the stage-0 chain computed it */
        rw->yields[rw->niter + j] = mapped(p, y->operands[rw->lag[j]]);
}

/* Steps 3 and 4: the barrier before a wgmma's slot is refilled, stage 0 for iteration i + S - 1
 * into slot (i + S - 1) % S, and the yield. */
static void emit_ahead(Pipe *p, Rewrite *rw)
{
    IrFunc *f = p->f;
    IrRegion *nb = rw->nb;
    IrBuilder *nbld = &rw->nbld;
    SrcLoc loc = p->loop->loc;
    int niter = rw->niter, nlag = rw->nlag;
    ValueId ins = nb->args[p->body->nargs + nlag], ext = nb->args[p->body->nargs + nlag + 1];
    /* 3. every warpgroup's previous wgmma has retired: its slot, (i-1) % S, may be refilled */
    if (p->any_wgmma)
        build0(nbld, OP_BARRIER, loc, 0);
    /* 4. stage 0 for iteration i + S - 1 */
    ValueId ahead = iv_after(p, nbld, nb->args[0], p->S - 1);
    ValueId *args0 = arena_alloc(f->arena, sizeof(ValueId) * (size_t)(niter + 1));
    for (int a = 0; a < niter; a++)
        args0[a] = nb->args[1 + a];
    map_stage0_args(p, ahead, args0);
    emit_stage0(p, nbld, ahead, ins);
    const IrOp *y = p->body->ops[p->body->nops - 1];
    for (int a = 0; a < niter; a++)
        if (p->arg_stage0[a])
            rw->yields[a] = mapped(p, y->operands[a]);
    rw->yields[niter + nlag] = next_slot(p, nbld, ins);
    rw->yields[niter + nlag + 1] = next_slot(p, nbld, ext);
    ir_build(nbld, OP_YIELD, y->loc, rw->yields, rw->nres, NULL, 0, 0);
}

/* After the loop: no copy in flight, the last wgmma retired; the old loop's results replaced
 * (a stage-0 iter arg ran ahead: by its lagging copy) and the old loop removed. */
static void finish_loop(Pipe *p, IrRegion *parent, Rewrite *rw)
{
    IrFunc *f = p->f;
    IrOp *L = p->loop, *N = rw->loop;
    SrcLoc loc = L->loc;
    IrBuilder b = {.func = f, .region = parent, .pos = body_index(parent, N) + 1};
    build0(&b, OP_ASYNC_WAIT, loc, 0);
    for (int a = 0; a < rw->niter; a++) {
        ValueId r = N->results[a];
        if ((p->inflight_dot && a == p->inflight_iter) ||
            (p->carried_dot && a == p->carried_iter)) {
            Type t = ir_type(f, r);
            IrOp *wait = ir_build(&b, OP_WGMMA_WAIT, loc, &r, 1, &t, 1, 0);
            set_layout(f, wait->results[0], f->values[r].layout);
            f->values[wait->results[0]].name = f->values[r].name;
            r = wait->results[0];
        }
        for (int j = 0; j < rw->nlag; j++)
            if (rw->lag[j] == a)
                r = N->results[rw->niter + j];
        if (a < L->nresults)
            ir_replace_all_uses(f, L->results[a], r);
    }
    ir_region_remove(parent, body_index(parent, L));
}

/* The loop rewritten into its pipelined form: buffers, prologue, the new loop (wait, the rest of
 * the body for iteration i, stage 0 for iteration i + S - 1), the waits after it. */
static void rewrite(Pipe *p, IrRegion *parent, int at)
{
    IrBuilder b = {.func = p->f, .region = parent, .pos = at};
    Rewrite rw = {.niter = p->body->nargs - 1};
    alloc_buffers(p, &b);
    ValueId *cur = emit_prologue(p, &b, rw.niter);
    build_loop(p, &b, cur, &rw);
    emit_rest(p, &rw);
    emit_ahead(p, &rw);
    finish_loop(p, parent, &rw);
}

/* ---- driver -------------------------------------------------------------------------------- */

static int loop_stages(const IrFunc *f, const IrOp *loop)
{
    return loop->attr[0] > 0 ? (int)loop->attr[0] : f->num_stages;
}

/* Plans loop's pipeline into *p: first with the loads that feed no dot; when one of them keeps
 * the loop from being pipelined (an address stage 0 cannot compute ahead), again without them.
 * False with p->why_not when the loop stays as it is. */
static bool plan(IrFunc *f, const PassOptions *o, IrOp *loop, bool deferred, Pipe *out)
{
    Pipe p = {.f = f,
              .o = o,
              .loop = loop,
              .body = &loop->regions[0],
              .S = loop_stages(f, loop),
              .inflight_iter = -1,
              .deferred_promotion = deferred,
              .nvalues0 = f->nvalues};
    p.stage0 = arena_alloc(f->arena, sizeof(bool) * (size_t)(p.body->nops + 1));
    p.remat = arena_alloc(f->arena, sizeof(bool) * (size_t)(p.body->nops + 1));
    p.arg_stage0 = arena_alloc(f->arena, sizeof(bool) * (size_t)(p.body->nargs + 1));
    p.arg_lag = arena_alloc(f->arena, sizeof(bool) * (size_t)(p.body->nargs + 1));
    p.map = arena_alloc(f->arena, sizeof(ValueId) * (size_t)f->nvalues);
    Pipe first = p;
    p.extras = true;
    bool ok = analyse(&p);
    const char *first_why = p.why_not;
    if (!ok) {
        size_t nops = (size_t)p.body->nops + 1, nargs = (size_t)p.body->nargs + 1;
        memset(first.stage0, 0, sizeof(bool) * nops);
        memset(first.remat, 0, sizeof(bool) * nops);
        memset(first.arg_stage0, 0, sizeof(bool) * nargs);
        memset(first.arg_lag, 0, sizeof(bool) * nargs);
        p = first;
        ok = analyse(&p);
        /* a loop with no dot has only the first try's loads: its reason is the one */
        if (!ok && first_why && !loop_has_dot(p.body))
            p.why_not = first_why;
    }
    *out = p;
    return ok;
}

static bool pipeline_region(IrFunc *f, const PassOptions *o, IrRegion *r, bool *changed, Diag *d)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            if (!pipeline_region(f, o, &op->regions[k], changed, d))
                return false;
        if (op->code != OP_FOR || op->nregions < 1 || loop_stages(f, op) < 2)
            continue;
        Pipe p;
        bool ok = plan(f, o, op, false, &p);
        /* a promoted fp8 dot left in flight: its partial sums added an iteration late
         * (defer_promotion.c), then planned again in that form */
        if (ok && p.inflight_dot && !p.inflight_if &&
            pipeline_defer_promotion(f, r, op, p.inflight_dot)) {
            i = ir_region_index(r, op);
            ok = plan(f, o, op, true, &p);
        }
        if (!ok) {
            /* a remark, at the loop, for whoever wonders why it runs slowly */
            if (p.why_not && o->remarks)
                diag_remark(d, op->loc, "loop not pipelined (num_stages=%d): %s", p.S, p.why_not);
            continue;
        }
        if (op->attr[0] <= 0)
            f->default_stage_loops++;
        rewrite(&p, r, i);
        *changed = true;
        /* the new loop sits where the old one was, after the buffers and the prologue */
        while (i < r->nops && r->ops[i]->code != OP_FOR)
            i++;
        /* two partials in flight by turns: two sets of registers, one per copy of the body
         * (unroll_loops.c) */
        if (p.deferred_promotion && i < r->nops)
            r->ops[i]->attr[3] = 2;
    }
    return true;
}

/* ---- a loop-invariant A in shared memory ------------------------------------------------------ */

/* Every use of v (anywhere in r) into uses[] (op, operand index); false past max. */
static bool collect_uses(IrRegion *r, ValueId v, IrOp **ops, int *idx, int *n, int max)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->noperands; k++)
            if (op->operands[k] == v) {
                if (*n >= max)
                    return false;
                ops[*n] = op;
                idx[*n] = k;
                (*n)++;
            }
        for (int k = 0; k < op->nregions; k++)
            if (!collect_uses(&op->regions[k], v, ops, idx, n, max))
                return false;
    }
    return true;
}

/* Whether loop is a for whose body holds a pipelined loop (one with an async_wait in its body):
 * a persistent kernel's loop over tiles around its K loop, not asking warp_specialize (nor offered
 * to its choice: passes/persistent.c). Asking, its
 * producer would copy the next tile's q into the one slot, which the consumers release only after
 * the tile's K loop, and the slot stays live across tiles, so the epilogue's convert no longer
 * fits beside it at D = 128: measured no faster at D = 64 and slower at D = 128 with O stored from
 * registers instead (docs/performance.md "q copied a tile ahead"), the consumers load it. */
static bool holds_pipelined_loop(const IrOp *loop)
{
    if (loop->code != OP_FOR || loop->nregions != 1 || loop->attr[1] != WS_NOT_ASKED)
        return false;
    const IrRegion *body = &loop->regions[0];
    for (int i = 0; i < body->nops; i++) {
        const IrOp *inner = body->ops[i];
        if (inner->code != OP_FOR || inner->nregions != 1)
            continue;
        for (int j = 0; j < inner->regions[0].nops; j++)
            if (inner->regions[0].ops[j]->code == OP_ASYNC_WAIT)
                return true;
    }
    return false;
}

/* A tile loaded once before the loops that read it and taken from registers as A by wgmma ops
 * only (tutorial 06's q): copied into a one-slot buffer instead, where its load was, and every
 * such wgmma reads the slot (as Triton keeps q in shared memory). The registers A took (a whole
 * tile per thread group: 32 per thread at 128x64 on 4 warps) are freed for the loop; the copy's
 * group is older than any loop's, so each loop's first async_wait completes it and its barrier
 * shows it to wgmma. Loads of 16-bit 2-D tiles in blocked layouts with copies of 4 bytes or more,
 * of r: the function's top level, or the body of a loop over tiles around a pipelined K loop (a
 * persistent kernel's q, loaded once a tile: a tensor-map copy then, tma.c, where it was a load
 * and a convert through shared memory). There the copy refills the slot every tile, so a barrier
 * goes before it: every warpgroup's wgmma ops of the tile before, which read the slot, have
 * retired (each waits for its own before leaving the K loop). */
static bool invariant_a_to_smem(IrFunc *f, IrRegion *r)
{
    bool changed = false, in_loop = r != &f->body;
    enum { MAX_USES = 16 };
    for (int i = 0; i < r->nops; i++) {
        IrOp *ld = r->ops[i];
        if (!in_loop && holds_pipelined_loop(ld)) {
            changed |= invariant_a_to_smem(f, &ld->regions[0]);
            continue;
        }
        if (ld->code != OP_LOAD || ld->nresults != 1)
            continue;
        Type t = ir_type(f, ld->results[0]);
        int pl = f->values[ld->operands[0]].layout;
        Layout sh;
        if (t.rank != 2 || t.is_ptr || dtype_bytes(t.dtype) != 2 || pl <= 0 || pl >= f->nlayouts ||
            f->layouts[pl].kind != LAYOUT_BLOCKED || axis_vector_width(f, ld) * 2 < 4 ||
            !shared_layout_for(&sh, t, f->layouts[pl].blocked.order[0]))
            continue;
        IrOp *cvs[MAX_USES], *dots[MAX_USES];
        int ci[MAX_USES], di[MAX_USES], ncv = 0, ndot = 0;
        bool ok = collect_uses(&f->body, ld->results[0], cvs, ci, &ncv, MAX_USES) && ncv > 0;
        for (int u = 0; ok && u < ncv; u++) {
            ok = cvs[u]->code == OP_CONVERT_LAYOUT &&
                 collect_uses(&f->body, cvs[u]->results[0], dots, di, &ndot, MAX_USES);
            for (int w = 0; ok && w < ndot; w++)
                ok = dots[w]->code == OP_WGMMA && di[w] == 0;
        }
        if (!ok || ndot == 0)
            continue;
        IrBuilder b = {.func = f, .region = r, .pos = i};
        Type bt = t;
        bt.is_smem = true;
        bt.rank = 3;
        bt.shape[0] = 1;
        bt.shape[1] = t.shape[0];
        bt.shape[2] = t.shape[1];
        ValueId buf = ir_build(&b, OP_LOCAL_ALLOC, ld->loc, NULL, 0, &bt, 1, 0)->results[0];
        f->values[buf].name = f->values[ld->results[0]].name;
        Type vt = t;
        vt.is_smem = true;
        ValueId sops[2] = {buf, const_i(&b, ld->loc, DT_I32, 0)};
        ValueId view = ir_build(&b, OP_SLOT, ld->loc, sops, 2, &vt, 1, 0)->results[0];
        ValueId mask = ld->noperands > 1 ? ld->operands[1] : 0;
        ValueId other =
            ld->noperands > 2 && ld->operands[2] > 0 && !is_const_zero(f, ld->operands[2])
                ? ld->operands[2]
                : 0;
        if (in_loop)
            build0(&b, OP_BARRIER, ld->loc, 0);
        ValueId cops[4] = {view, ld->operands[0], mask, other};
        ir_build(&b, OP_ASYNC_COPY, ld->loc, cops, other ? 4 : mask ? 3 : 2, NULL, 0, 0);
        build0(&b, OP_ASYNC_COMMIT, ld->loc, 0);
        for (int w = 0; w < ndot; w++)
            dots[w]->operands[0] = view;
        i = b.pos; /* past the new ops; the load and its converts are dead now (dce) */
        changed = true;
    }
    return changed;
}

bool pass_pipeline(IrFunc *f, const PassOptions *o, Diag *d)
{
    bool changed = false;
    if (!pipeline_region(f, o, &f->body, &changed, d))
        return false;
    if (changed && invariant_a_to_smem(f, &f->body))
        changed = true;
    /* the copies of constants and addresses in the prologue and the loop merged and the old
     * loop's leftovers dropped; then axis info for the new values (the copies' vector widths) */
    return !changed || (pass_cse(f, o, d) && pass_dce(f, o, d) && pass_axis_info(f, o, d));
}
