/* warp_specialize.c: a producer warpgroup for the loop that asks (Triton 3.3's
 * `tl.range(..., warp_specialize=True)`): its tensor-map copies run on 4 warps of their own while
 * the function's num_warps consumer warps wait for the tiles and run the wgmma ops (docs/passes.md
 * "warp_specialize"; CUTLASS's and Triton's producer/consumer pipeline).
 *
 * Requires tma (the loop's copies are tma_load ops completing on one mbarrier a slot, the loop's
 * wait an mbar_wait of its extract slot, a barrier after the wgmma ops retire the slot the copies
 * then overwrite). Guarantees, for the one loop of the function's body that asks and has that
 * form, on sm_90a with whole warpgroups: a second buffer of S mbarriers ("empty", each counting
 * the consumer warps' arrivals); in the loop the barrier becomes an mbar_arrive of every
 * consumer warp on the empty mbarrier of the slot it frees (the insert slot: its wgmma retired),
 * and before the copies into that slot the producer waits on it (mbar_wait, the parity of the
 * extract slot's wait: the insert slot's k-th release is iteration k S + (the slot + 1) % S);
 * every op after the mbarriers' init gets a partition (IrOp.partition): the mbar_expect and
 * tma_load ops and that wait the producer's; the structured ops (for, if, yield) and the pure
 * scalar ops whose operands every warp computes, every warp's; every other op the consumers';
 * after the loop every warp meets at a barrier before the consumers retire the mbarriers.
 * IrFunc.ws says how many warps the producer has and the registers each side takes (setmaxnreg).
 * Run in program order (the interpreter), the consumer's arrive comes before the producer's wait
 * of the same iteration, so every wait finds its phase complete: the discipline checks hold.
 * Elsewhere the function stays as it is, with a remark saying why (--remarks). */
#include "passes/passes.h"

#include <string.h>

#define PRODUCER_WARPS 4
#define PRODUCER_REGS  40

typedef struct Ws {
    IrFunc *f;
    const PassOptions *o;
    Diag *d;
    IrOp *loop;
    int loop_at;      /* its index in the body */
    IrOp *full_init;  /* the mbar_init of the full mbarriers (the loop's) */
    int init_at;      /* its index in the body */
    IrOp *arrive_bar; /* the loop's barrier that frees a slot */
    IrOp *expect;     /* the loop's first mbar_expect: the copies into the insert slot */
    IrOp *full_wait;  /* the loop's mbar_wait on its extract slot */
    uint8_t *part;    /* per value: the partition that computes it */
} Ws;

static bool decline(Ws *w, const char *why)
{
    if (w->o->remarks)
        diag_remark(w->d, w->loop->loc, "tl.range(..., warp_specialize=True) not applied: %s", why);
    return true;
}

/* Loops inside other ops that ask: not taken (the partitions split the kernel's body). */
static void decline_nested(const PassOptions *o, Diag *d, const IrRegion *r)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        if (op->code == OP_FOR && op->attr[1] && o->remarks)
            diag_remark(d, op->loc,
                        "tl.range(..., warp_specialize=True) not applied: only a loop of the "
                        "kernel's body is warp-specialized, not one nested in another op");
        for (int k = 0; k < op->nregions; k++)
            decline_nested(o, d, &op->regions[k]);
    }
}

/* The loop's parts: one barrier and one mbar_wait in its body, the copies announced by mbar_expect
 * on the slot view their tma_load ops complete on; the full mbarriers' init before the loop. */
static bool find_parts(Ws *w)
{
    IrRegion *body = &w->loop->regions[0];
    int nbar = 0, nwait = 0;
    for (int i = 0; i < body->nops; i++) {
        IrOp *op = body->ops[i];
        nbar += op->code == OP_BARRIER;
        nwait += op->code == OP_MBAR_WAIT;
        if (op->code == OP_BARRIER)
            w->arrive_bar = op;
        if (op->code == OP_MBAR_WAIT)
            w->full_wait = op;
        if (op->code == OP_MBAR_EXPECT && !w->expect)
            w->expect = op;
        if (op->code == OP_ASYNC_COPY || op->code == OP_FOR || op->code == OP_WHILE)
            return false;
    }
    if (nbar != 1 || nwait != 1 || !w->expect)
        return false;
    const IrOp *fv = w->f->values[w->full_wait->operands[0]].def;
    const IrOp *ev = w->f->values[w->expect->operands[0]].def;
    if (!fv || !ev || fv->code != OP_SLOT || ev->code != OP_SLOT ||
        fv->operands[0] != ev->operands[0])
        return false;
    for (int i = 0; i < w->loop_at; i++) {
        IrOp *op = w->f->body.ops[i];
        if (op->code == OP_MBAR_INIT && op->operands[0] == fv->operands[0]) {
            w->full_init = op;
            w->init_at = i;
        }
    }
    return w->full_init != NULL;
}

static bool structured(OpCode c)
{
    return c == OP_FOR || c == OP_IF || c == OP_YIELD || c == OP_WHILE || c == OP_CONDITION;
}

/* The partition of op, its operands' known: the producer's copies; every warp's for structured
 * ops and for pure scalar ops (a slot view too) of values every warp has; the consumers' else. */
static WarpPartition choose(const Ws *w, const IrOp *op)
{
    if (op->code == OP_MBAR_EXPECT || op->code == OP_TMA_LOAD ||
        op->partition == PARTITION_PRODUCER)
        return PARTITION_PRODUCER;
    if (structured(op->code) || op->code == OP_LOCAL_ALLOC) /* an allocation is a placement */
        return PARTITION_ALL;
    if (op_has(op->code, OPT_EFFECT) || op->nresults != 1 || op->nregions)
        return PARTITION_CONSUMER;
    Type t = ir_type(w->f, op->results[0]);
    if (t.rank != 0 && op->code != OP_SLOT)
        return PARTITION_CONSUMER;
    for (int i = 0; i < op->noperands; i++)
        if (op->operands[i] && w->part[op->operands[i]] != PARTITION_ALL)
            return PARTITION_CONSUMER;
    return PARTITION_ALL;
}

/* Assigns r's ops (and their regions') partitions, each value its op's; a loop's iter args are
 * every warp's when scalars whose inits and yielded values are; returns whether an iter arg had
 * to change (the caller repeats). */
static bool assign(Ws *w, IrRegion *r, int from, bool *changed)
{
    IrFunc *f = w->f;
    for (int i = from; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        op->partition = (uint8_t)choose(w, op);
        for (int k = 0; k < op->nresults; k++)
            w->part[op->results[k]] = op->partition;
        if (op->code == OP_FOR && op->nregions == 1) {
            IrRegion *b = &op->regions[0];
            const IrOp *y = b->nops ? b->ops[b->nops - 1] : NULL;
            for (int a = 1; a < b->nargs; a++) {
                ValueId arg = b->args[a], init = op->operands[2 + a];
                bool all =
                    ir_type(f, arg).rank == 0 && w->part[init] == PARTITION_ALL &&
                    (!y || a - 1 >= y->noperands || w->part[y->operands[a - 1]] == PARTITION_ALL);
                uint8_t p = all ? PARTITION_ALL : PARTITION_CONSUMER;
                if (w->part[arg] != p && w->part[arg] != PARTITION_CONSUMER) {
                    w->part[arg] = p;
                    *changed = true;
                }
                w->part[op->results[a - 1]] = w->part[arg];
            }
        }
        for (int k = 0; k < op->nregions; k++)
            assign(w, &op->regions[k], 0, changed);
        if (op->code == OP_IF) /* a result is every warp's when both branches yield such a value */
            for (int k = 0; k < op->nresults; k++)
                for (int g = 0; g < op->nregions; g++) {
                    const IrRegion *br = &op->regions[g];
                    const IrOp *y = br->nops ? br->ops[br->nops - 1] : NULL;
                    if (!y || k >= y->noperands || w->part[y->operands[k]] != PARTITION_ALL)
                        w->part[op->results[k]] = PARTITION_CONSUMER;
                }
    }
    return true;
}

/* The consumers' registers a thread: the producer's 40 and theirs fit what the launch gives each
 * of the (C + 1) warpgroups (max_regs), as setmaxnreg needs (PTX ISA 9.7.19.6: counts multiples
 * of 8 in [24, 256]); max_regs keeps two programs of one consumer warpgroup a SM (128), else one
 * program within the SM's 64K registers (168 for two consumer warpgroups). */
static void budget(IrFunc *f)
{
    int groups = f->num_warps / 4;
    int max_regs = groups == 1 ? 128 : 65536 / (128 * (groups + 1)) / 8 * 8;
    int consumer = (max_regs * (groups + 1) - PRODUCER_REGS) / groups / 8 * 8;
    f->ws.producer_warps = PRODUCER_WARPS;
    f->ws.producer_regs = PRODUCER_REGS;
    f->ws.consumer_regs = consumer > 256 ? 256 : consumer;
    f->ws.max_regs = max_regs;
}

/* The rewrite: the empty mbarriers, the arrive and the producer's wait, the barrier and the
 * retirement after the loop, then the partitions. */
static bool specialize(Ws *w)
{
    IrFunc *f = w->f;
    IrRegion *top = &f->body;
    SrcLoc loc = w->loop->loc;
    ValueId full = w->full_init->operands[0];
    IrBuilder b = {.func = f, .region = top, .pos = w->init_at + 1};
    Type bt = ir_type(f, full);
    ValueId empty = ir_build(&b, OP_LOCAL_ALLOC, loc, NULL, 0, &bt, 1, 0)->results[0];
    f->values[empty].name = "empty";
    IrOp *init = ir_build(&b, OP_MBAR_INIT, loc, &empty, 1, NULL, 0, 0);
    init->attr[0] = f->num_warps; /* every consumer warp arrives (lane 0, codegen) */
    int split = b.pos;            /* the first op the partitions split */
    IrRegion *body = &w->loop->regions[0];
    /* the barrier that freed the insert slot: the consumers arrive on its empty mbarrier */
    const IrOp *ev = f->values[w->expect->operands[0]].def;
    ValueId insert = ev->operands[1], parity = w->full_wait->operands[1];
    IrBuilder lb = {.func = f, .region = body, .pos = ir_region_index(body, w->arrive_bar)};
    ir_region_remove(body, lb.pos);
    ValueId view = passes_mbarrier_view(&lb, w->arrive_bar->loc, empty, insert);
    IrOp *arrive = ir_build(&lb, OP_MBAR_ARRIVE, w->arrive_bar->loc, &view, 1, NULL, 0, 0);
    arrive->partition = PARTITION_CONSUMER;
    /* the producer waits for that release before the copies into the slot */
    lb.pos = ir_region_index(body, w->expect);
    ValueId wops[2] = {passes_mbarrier_view(&lb, w->expect->loc, empty, insert), parity};
    IrOp *wait = ir_build(&lb, OP_MBAR_WAIT, w->expect->loc, wops, 2, NULL, 0, 0);
    wait->partition = PARTITION_PRODUCER;
    /* after the loop: every warp past its last wait, then the consumers retire the mbarriers */
    int at = ir_region_index(top, w->loop) + 1;
    for (; at < top->nops && top->ops[at]->code != OP_MBAR_INVAL; at++)
        ;
    IrBuilder ab = {
        .func = f, .region = top, .pos = at < top->nops ? at : ir_region_index(top, w->loop) + 1};
    ir_build(&ab, OP_BARRIER, loc, NULL, 0, NULL, 0, 0);
    ir_build(&ab, OP_MBAR_INVAL, loc, &empty, 1, NULL, 0, 0);
    /* the partitions, repeated until the loop-carried values settle */
    w->part = arena_alloc(f->arena, (size_t)(f->nvalues + 1));
    memset(w->part, PARTITION_ALL, (size_t)(f->nvalues + 1));
    for (int round = 0; round < 8; round++) {
        bool changed = false;
        assign(w, top, split, &changed);
        if (!changed)
            break;
    }
    for (int i = split; i < top->nops; i++) /* the meeting after the loop: every warp's */
        if (top->ops[i]->code == OP_BARRIER && i > ir_region_index(top, w->loop))
            top->ops[i]->partition = PARTITION_ALL;
    budget(f);
    if (w->o->remarks)
        diag_remark(w->d, loc,
                    "warp-specialized: a producer warpgroup (%d warps, %d registers a thread) "
                    "issues the loop's tensor-map copies; the %d consumer warps (%d registers) "
                    "wait for each slot and free it with an mbarrier arrive",
                    f->ws.producer_warps, f->ws.producer_regs, f->num_warps, f->ws.consumer_regs);
    return true;
}

/* A producer op that reads a value the consumers compute, or NULL (*what: that value). */
static const IrOp *producer_reads_consumer(const Ws *w, const IrRegion *r, ValueId *what)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int k = 0; op->partition == PARTITION_PRODUCER && k < op->noperands; k++)
            if (op->operands[k] && w->part[op->operands[k]] == PARTITION_CONSUMER) {
                *what = op->operands[k];
                return op;
            }
        for (int k = 0; k < op->nregions; k++) {
            const IrOp *bad = producer_reads_consumer(w, &op->regions[k], what);
            if (bad)
                return bad;
        }
    }
    return NULL;
}

bool pass_warp_specialize(IrFunc *f, const PassOptions *o, Diag *d)
{
    IrRegion *top = &f->body;
    Ws w = {.f = f, .o = o, .d = d};
    for (int i = 0; i < top->nops; i++) {
        IrOp *op = top->ops[i];
        if (op->code != OP_FOR || !op->attr[1])
            continue;
        if (w.loop) {
            Ws other = {.f = f, .o = o, .d = d, .loop = op};
            decline(&other, "one loop of a kernel is warp-specialized (the first that asks)");
            continue;
        }
        w.loop = op;
        w.loop_at = i;
    }
    for (int i = 0; i < top->nops; i++)
        for (int k = 0; k < top->ops[i]->nregions; k++)
            decline_nested(o, d, &top->ops[i]->regions[k]);
    if (!w.loop)
        return true;
    if (!o->arch_specific || o->sm != 90)
        return decline(&w, "warp specialization needs sm_90a (setmaxnreg, wgmma, tensor maps)");
    if (f->num_warps % 4 != 0)
        return decline(&w, "the consumers must be whole warpgroups (num_warps a multiple of 4)");
    if (!find_parts(&w))
        return decline(&w, "the loop's copies are not tensor-map copies of a pipelined loop "
                           "(one mbarrier wait and one barrier an iteration, no nested loop)");
    for (int i = 0; i < w.init_at; i++) {
        const IrOp *op = top->ops[i];
        if (op->code != OP_LOCAL_ALLOC && op->code != OP_MBAR_INIT &&
            (op_has(op->code, OPT_EFFECT) || op->nregions ||
             (op->nresults == 1 && ir_type(f, op->results[0]).rank != 0)))
            return decline(&w, "an op before the mbarriers' init is not a scalar");
    }
    for (int i = w.init_at + 1; i < top->nops; i++)
        if (top->ops[i]->code == OP_MBAR_INIT)
            return decline(&w, "another loop's mbarriers are set up after this one's");
    if (!specialize(&w))
        return false;
    ValueId what = 0;
    const IrOp *bad = producer_reads_consumer(&w, top, &what);
    if (bad) {
        diag_error(d, bad->loc,
                   "internal error: warp specialization: the producer's %s reads %%%d, which "
                   "the consumers compute",
                   op_name(bad->code), (int)what);
        return false;
    }
    return true;
}
