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
 * The loop that asks may instead hold that loop as its one nested loop (a persistent kernel's
 * loop over tiles around its K loop): then the ring of slots goes on across tiles (below,
 * "a persistent kernel"), so the producer copies the next tile while the consumers finish this
 * one, when the slots and the tile's scratch fit shared memory together.
 * Run in program order (the interpreter), the consumer's arrive comes before the producer's wait
 * of the same iteration, so every wait finds its phase complete: the discipline checks hold.
 * Elsewhere the function stays as it is, with a remark saying why (--remarks). */
#include "passes/passes.h"

#include <string.h>

#define PRODUCER_WARPS 4
/* The producer's registers a thread: the least setmaxnreg takes (PTX ISA 9.7.19.6). Its loop
 * (waits, expects, copies and their coordinates) fits without spilling in every corpus kernel;
 * at 40 the consumers of tutorial 06's persistent D = 128 kernel got 232 and spilled 20 bytes,
 * at 24 they get 240 and spill none (docs/performance.md). */
#define PRODUCER_REGS  24

typedef struct Ws {
    IrFunc *f;
    const PassOptions *o;
    Diag *d;
    IrOp *loop;       /* the loop that asks, of the kernel's body */
    int loop_at;      /* its index in the body */
    IrOp *kloop;      /* the loop whose copies the producer issues: loop, or the one loop nested in
                         it (a persistent kernel's K loop inside its loop over tiles) */
    IrRegion *home;   /* the region of kloop and its prologue: the body, or loop's */
    IrOp *full_init;  /* the mbar_init of the full mbarriers (kloop's) */
    int init_at;      /* its index in home */
    IrOp *arrive_bar; /* kloop's barrier that frees a slot */
    IrOp *expect;     /* kloop's first mbar_expect: the copies into the insert slot */
    IrOp *full_wait;  /* kloop's mbar_wait on its extract slot */
    ValueId ring;     /* nested: loop's iter arg counting kloop's iterations of the tiles before */
    ValueId empty;    /* the empty mbarriers (specialize) */
    IrOp *arrive;     /* kloop's consumer arrival on the slot it frees (specialize) */
    int64_t stages;   /* the slots of the ring */
    ValueId *ring_slot; /* nested: per constant c < stages, (ring + c) % stages (0: not built) */
    uint8_t *part;      /* per value: the partition that computes it */
    bool tail;          /* assigning ops after the loop: a later loop's copies are the consumers' */
    bool chosen;        /* no loop asked: the pass chose this one (chosen_loop) */
} Ws;

static bool decline(Ws *w, const char *why)
{
    if (w->o->remarks)
        diag_remark(w->d, w->loop->loc, "%s not applied: %s",
                    w->chosen ? "warp specialization (chosen, not asked)"
                              : "tl.range(..., warp_specialize=True)",
                    why);
    return true;
}

/* Loops inside other ops that ask: not taken (the partitions split the kernel's body). */
static void decline_nested(const PassOptions *o, Diag *d, const IrRegion *r)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        if (op->code == OP_FOR && op->attr[1] == WS_ASKED && o->remarks)
            diag_remark(d, op->loc,
                        "tl.range(..., warp_specialize=True) not applied: only a loop of the "
                        "kernel's body is warp-specialized, not one nested in another op");
        for (int k = 0; k < op->nregions; k++)
            decline_nested(o, d, &op->regions[k]);
    }
}

/* The copy loop's parts: one barrier and one mbar_wait in kloop's body, the copies announced by
 * mbar_expect on the slot view their tma_load ops complete on; the full mbarriers' init before
 * kloop in home. */
static bool find_parts(Ws *w)
{
    IrRegion *body = &w->kloop->regions[0];
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
    int kloop_at = ir_region_index(w->home, w->kloop);
    for (int i = 0; i < kloop_at; i++) {
        IrOp *op = w->home->ops[i];
        if (op->code == OP_MBAR_INIT && op->operands[0] == fv->operands[0]) {
            w->full_init = op;
            w->init_at = i;
        }
    }
    return w->full_init != NULL;
}

/* ---- a persistent kernel: the K loop nested in the loop over tiles ---------------------------
 * The producer runs ahead into the next tile while the consumers store this one, so the ring of
 * slots goes on across tiles: the mbarriers are made once, before the loop over tiles, and a
 * count of the K loop's iterations so far (ring, an iter arg of the loop over tiles) places each
 * tile's copies: its fill c of the prologue goes to slot (ring + c) % S, iteration i of the K loop
 * waits for phase (ring + i) / S of its slot's full mbarrier (the fill count, as the flat loop's
 * i / S). Copies a tile's predicate turns off fill nothing and count nothing: the next tile's
 * ring starts at this one's plus its K loop's trip count. */

static ValueId scalar_op(IrBuilder *b, OpCode code, SrcLoc loc, ValueId x, ValueId y)
{
    return ir_build_binary(b, code, loc, type_scalar(DT_I32), x, y);
}

/* (ring + c) % S, made once at the start of the tile's body. */
static ValueId ring_slot(Ws *w, int64_t c)
{
    if (w->ring_slot[c])
        return w->ring_slot[c];
    SrcLoc loc = w->kloop->loc;
    IrBuilder b = {.func = w->f, .region = w->home, .pos = 0};
    ValueId fill = c ? scalar_op(&b, OP_ADD, loc, w->ring, passes_const_i32(&b, loc, c)) : w->ring;
    w->ring_slot[c] = scalar_op(&b, OP_REM, loc, fill, passes_const_i32(&b, loc, w->stages));
    return w->ring_slot[c];
}

/* Whether v is a buffer of the ring (a local_alloc hoisted out of the tile's body). */
static bool ring_buffer(const Ws *w, ValueId v)
{
    const IrOp *def = w->f->values[v].def;
    return def && def->code == OP_LOCAL_ALLOC && ir_region_index(&w->f->body, def) >= 0;
}

/* The tile's prologue (home's ops before kloop): each copy's producer waits for the slot's
 * release, then the slot views and the K loop's first slots are counted from ring. Fill
 * ring + c needs the consumers' release of fill ring + c - S, the arrival at iteration
 * ring + c - S + 1 (kloop's arrive frees the slot of the iteration before): phase
 * (ring + c + 1) / S - 1 of the slot's empty mbarrier, where phase -1 of a fresh mbarrier is
 * complete (try_wait.parity 1 returns at once, PTX ISA 9.7.13.15.16). The empty mbarriers are
 * made later (specialize): their view takes `empty`'s place there. */
static void ring_prologue(Ws *w, ValueId empty)
{
    IrFunc *f = w->f;
    IrRegion *home = w->home;
    ValueId full = w->full_init->operands[0];
    for (int i = 0; home->ops[i] != w->kloop; i++) {
        IrOp *op = home->ops[i];
        const IrOp *view = op->code == OP_MBAR_EXPECT ? f->values[op->operands[0]].def : NULL;
        int64_t c;
        if (!view || view->operands[0] != full || !passes_const_int(f, view->operands[1], &c))
            continue;
        ValueId slot = ring_slot(w, c); /* first: it goes to the start of home */
        IrBuilder b = {.func = f, .region = home, .pos = ir_region_index(home, op)};
        ValueId fill =
            scalar_op(&b, OP_ADD, op->loc, w->ring, passes_const_i32(&b, op->loc, c + 1));
        ValueId phase =
            scalar_op(&b, OP_DIV, op->loc, fill, passes_const_i32(&b, op->loc, w->stages));
        ValueId parity =
            scalar_op(&b, OP_AND, op->loc,
                      scalar_op(&b, OP_ADD, op->loc, phase, passes_const_i32(&b, op->loc, 1)),
                      passes_const_i32(&b, op->loc, 1));
        ValueId wops[2] = {passes_mbarrier_view(&b, op->loc, empty, slot), parity};
        ir_build(&b, OP_MBAR_WAIT, op->loc, wops, 2, NULL, 0, 0)->partition = PARTITION_PRODUCER;
        i = ir_region_index(home, op);
    }
    for (int i = 0; home->ops[i] != w->kloop; i++) {
        IrOp *op = home->ops[i];
        int64_t c;
        if (op->code == OP_SLOT && ring_buffer(w, op->operands[0]) &&
            passes_const_int(f, op->operands[1], &c) && c >= 0 && c < w->stages) {
            op->operands[1] = ring_slot(w, c);
            i = ir_region_index(home, op);
        }
    }
}

/* kloop's slots and phases from ring: the insert and extract slots start at (ring + their
 * constant) % S, the full wait's parity is ((ring + i) / S) & 1 for iteration i; after kloop the
 * tile yields ring + its trip count. */
static void ring_kloop(Ws *w)
{
    IrFunc *f = w->f;
    IrOp *k = w->kloop;
    IrRegion *kb = &k->regions[0];
    SrcLoc loc = k->loc;
    for (int a = 1; a < kb->nargs; a++) {
        int64_t c;
        ValueId init = k->operands[2 + a];
        bool slot_index = false;
        for (int i = 0; i < kb->nops; i++)
            slot_index |= kb->ops[i]->code == OP_SLOT && kb->ops[i]->operands[1] == kb->args[a] &&
                          ring_buffer(w, kb->ops[i]->operands[0]);
        if (slot_index && passes_const_int(f, init, &c) && c >= 0 && c < w->stages)
            k->operands[2 + a] = ring_slot(w, c);
    }
    IrBuilder b = {.func = f, .region = kb, .pos = 0};
    ValueId iter = scalar_op(
        &b, OP_DIV, loc, scalar_op(&b, OP_SUB, loc, kb->args[0], k->operands[0]), k->operands[2]);
    ValueId phase = scalar_op(&b, OP_DIV, loc, scalar_op(&b, OP_ADD, loc, w->ring, iter),
                              passes_const_i32(&b, loc, w->stages));
    w->full_wait->operands[1] = scalar_op(&b, OP_AND, loc, phase, passes_const_i32(&b, loc, 1));
    /* after kloop: ring + max(0, cdiv(ub - lb, step)) */
    IrBuilder ab = {.func = f, .region = w->home, .pos = ir_region_index(w->home, k) + 1};
    int64_t step = 1;
    passes_const_int(f, k->operands[2], &step);
    ValueId trips = passes_trip_count(&ab, loc, k, step);
    IrOp *y = w->home->ops[w->home->nops - 1];
    y->operands[y->noperands - 1] = scalar_op(&ab, OP_ADD, loc, w->ring, trips);
}

/* The nested form's checks: the full mbarriers and every buffer made in the tile's body, their
 * retirement after kloop, kloop's step a positive constant. Returns why not, or NULL. */
static const char *nested_unsupported(const Ws *w)
{
    const IrFunc *f = w->f;
    ValueId full = w->full_init->operands[0];
    const IrOp *alloc = f->values[full].def;
    if (!alloc || ir_region_index(w->home, alloc) < 0)
        return "the K loop's mbarriers are not made in the loop over tiles";
    int kloop_at = ir_region_index(w->home, w->kloop), inval = 0;
    for (int i = 0; i < w->home->nops; i++) {
        const IrOp *op = w->home->ops[i];
        if (op->code == OP_MBAR_INVAL && op->operands[0] == full && i > kloop_at)
            inval++;
        if (op->code == OP_MBAR_INIT && op != w->full_init)
            return "the loop over tiles sets up a second loop's mbarriers";
    }
    int64_t step;
    if (inval != 1 || !passes_const_int(f, w->kloop->operands[2], &step) || step <= 0)
        return "the K loop's step is not a positive constant or its mbarriers are not retired "
               "after it";
    if (ir_type(f, w->kloop->operands[0]).dtype != DT_I32 ||
        ir_type(f, w->loop->regions[0].args[0]).dtype != DT_I32)
        return "the loops' counters are not i32";
    return NULL;
}

/* The bytes of r's buffers (its local_alloc ops: slots and mbarriers). */
static int64_t buffer_bytes(const IrFunc *f, const IrRegion *r)
{
    int64_t bytes = 0;
    for (int i = 0; i < r->nops; i++)
        if (r->ops[i]->code == OP_LOCAL_ALLOC) {
            Type t = ir_type(f, r->ops[i]->results[0]);
            bytes += (int64_t)t.shape[0] * shared_slot_bytes(t, true);
        }
    return bytes;
}

/* The least scratch an op of r (and of its regions) takes through shared memory: a convert or
 * reshape that moves registers holds its whole tile there at once (shared_alloc may pad it). */
static int64_t least_scratch(const IrFunc *f, const IrRegion *r)
{
    int64_t most = 0;
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++) {
            int64_t inner = least_scratch(f, &op->regions[k]);
            most = inner > most ? inner : most;
        }
        if (op->code != OP_CONVERT_LAYOUT && op->code != OP_RESHAPE)
            continue;
        Type t = ir_type(f, op->operands[0]);
        int from = f->values[op->operands[0]].layout, to = f->values[op->results[0]].layout;
        if (t.rank == 0 ||
            (op->code == OP_CONVERT_LAYOUT &&
             (from == to || layout_convert_is_relabel(f, from, to))) ||
            (op->code == OP_RESHAPE && layout_reshape_is_relabel(f, op)))
            continue;
        int64_t bytes = type_numel(t) * shared_elem_bytes(t);
        most = bytes > most ? bytes : most;
    }
    return most;
}

/* Whether the ring (its slots stay live across the loop over tiles, so nothing else may use
 * their memory) and the least scratch of the tile's other ops fit the target's shared memory;
 * else *need is what they take at least. */
static bool ring_fits(const Ws *w, int64_t *need)
{
    const IrFunc *f = w->f;
    Type full = ir_type(f, w->full_init->operands[0]); /* the empty mbarriers: as many again */
    *need = buffer_bytes(f, w->home) + (int64_t)full.shape[0] * shared_slot_bytes(full, true) +
            least_scratch(f, w->home);
    return *need <= shared_limit_bytes(w->o->sm);
}

/* Moves the ring's buffers and the full mbarriers' init before the loop over tiles, and their
 * retirement after it; adds ring (from 0) to the loop over tiles. */
static void nest_prepare(Ws *w)
{
    IrFunc *f = w->f;
    IrRegion *top = &f->body, *home = w->home;
    ValueId full = w->full_init->operands[0];
    int at = ir_region_index(top, w->loop);
    for (int i = 0; i < home->nops;) {
        IrOp *op = home->ops[i];
        if (op->code == OP_LOCAL_ALLOC) {
            ir_region_remove(home, i);
            ir_region_insert(f, top, at++, op);
        } else if (op == w->full_init || (op->code == OP_MBAR_INVAL && op->operands[0] == full))
            ir_region_remove(home, i);
        else
            i++;
    }
    ir_region_insert(f, top, at, w->full_init);
    /* retired after the loop over tiles (at + 1), where specialize finds it */
    ir_build(&(IrBuilder){.func = f, .region = top, .pos = at + 2}, OP_MBAR_INVAL, w->loop->loc,
             &full, 1, NULL, 0, 0);
    IrBuilder b = {.func = f, .region = top, .pos = at};
    ValueId zero = passes_const_i32(&b, w->loop->loc, 0);
    w->init_at = ir_region_index(top, w->full_init);
    w->ring = passes_add_iter_arg(f, w->loop, zero, type_scalar(DT_I32), "ring");
    w->stages = ir_type(f, full).shape[0];
    w->ring_slot = arena_alloc(f->arena, sizeof(ValueId) * (size_t)w->stages);
    memset(w->ring_slot, 0, sizeof(ValueId) * (size_t)w->stages);
}

/* tl.extra.cuda's gdc_wait and gdc_launch_dependents */
static bool grid_dep(OpCode c) { return c == OP_GDC_WAIT || c == OP_GDC_LAUNCH_DEPENDENTS; }

static bool structured(OpCode c)
{
    return c == OP_FOR || c == OP_IF || c == OP_YIELD || c == OP_WHILE || c == OP_CONDITION;
}

/* The partition of op, its operands' known: the producer's copies (the loop's and its
 * prologue's; a later loop's are the consumers', who run it as it was: causal attention's
 * diagonal pass); every warp's for structured ops and for pure scalar ops (a slot view too) of
 * values every warp has; the consumers' else. */
static WarpPartition choose(const Ws *w, const IrOp *op)
{
    if ((op->code == OP_MBAR_EXPECT || op->code == OP_TMA_LOAD ||
         op->partition == PARTITION_PRODUCER) &&
        !w->tail)
        return PARTITION_PRODUCER;
    /* an allocation is a placement; a grid dependence each thread's own (the producer's copies
     * too must wait for the grids a gdc_wait waits for) */
    if (structured(op->code) || op->code == OP_LOCAL_ALLOC || grid_dep(op->code))
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
    int loop_at = r == &f->body ? ir_region_index(r, w->loop) : -1;
    for (int i = from; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        if (loop_at >= 0)
            w->tail = i > loop_at;
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

/* A grid's buffers live at once and the least scratch it takes besides (budget's and
 * chosen_loop's count for two programs an SM). */
static int64_t grid_bytes(const IrFunc *f)
{
    return shared_peak_buffer_bytes(f, &f->body) + least_scratch(f, &f->body);
}

/* In a grid made persistent, what its buffers would take as the grid it was: the loop over tiles
 * holds them, and q stays a load there (pipeline_loops leaves an offered or asked loop's), its
 * tile going through scratch instead of a slot. */
static int64_t as_grid_bytes(const IrFunc *f, const IrOp *tiles)
{
    return buffer_bytes(f, &f->body) + buffer_bytes(f, &tiles->regions[0]) +
           least_scratch(f, &tiles->regions[0]);
}

static bool one_program_as_grid(const IrFunc *f, const PassOptions *o, const IrOp *tiles)
{
    return as_grid_bytes(f, tiles) > shared_limit_bytes(o->sm) / 2;
}

/* A tile's registers a thread when threads share it evenly (4-byte registers, at least one). */
static int64_t tile_regs(const IrFunc *f, ValueId v, int threads)
{
    Type t = ir_type(f, v);
    if (t.rank == 0)
        return 1;
    int64_t bytes = type_numel(t) * dtype_bytes(t.dtype);
    int64_t regs = (bytes + 4 * threads - 1) / (4 * threads);
    return regs > 0 ? regs : 1;
}

/* A consumer thread's registers in kloop, estimated before ptxas decides: the float tiles the
 * loop carries (*carried: the accumulators, a softmax's row statistics), the largest wgmma result
 * it does not carry (attention's q @ k, its sum not yielded through a wgmma_wait) and half that
 * again for its conversion to the next wgmma's A operand, and CONSUMER_SCALAR_REGS for
 * addresses, indices and counters. The pointer tiles a pipelined loop still carries are dead
 * once its loads are tensor-map copies, so they do not count. Calibrated on tutorial 06 at D = 64
 * (128 x 64 blocks on 8 warps: 98 estimated, 34 carried; ptxas fits its consumers in 96 without
 * spilling). */
#define CONSUMER_SCALAR_REGS 16
static int64_t consumer_regs_estimate(const IrFunc *f, const IrOp *kloop, int64_t *carried_regs)
{
    int threads = 32 * ir_func_consumer_warps(f);
    const IrRegion *body = &kloop->regions[0];
    *carried_regs = 0;
    for (int a = 1; a < body->nargs; a++) {
        Type t = ir_type(f, body->args[a]);
        if (t.rank > 0 && !t.is_ptr && dtype_is_float(t.dtype))
            *carried_regs += tile_regs(f, body->args[a], threads);
    }
    /* the values that reach the yield, through the wgmma_wait ops that pass them on */
    bool *carried = arena_alloc(f->arena, (size_t)(f->nvalues + 1));
    const IrOp *yield = body->nops ? body->ops[body->nops - 1] : NULL;
    for (int k = 0; yield && yield->code == OP_YIELD && k < yield->noperands; k++)
        carried[yield->operands[k]] = true;
    int64_t most = 0;
    for (int i = body->nops - 1; i >= 0; i--) {
        const IrOp *op = body->ops[i];
        if (op->code == OP_WGMMA_WAIT)
            for (int k = 0; k < op->noperands && k < op->nresults; k++)
                carried[op->operands[k]] |= carried[op->results[k]];
        if (op->code == OP_WGMMA && !carried[op->results[0]]) {
            int64_t r = tile_regs(f, op->results[0], threads);
            most = r > most ? r : most;
        }
    }
    return CONSUMER_SCALAR_REGS + *carried_regs + most + most / 2;
}

/* Registers for two programs of (C + 1) warpgroups an SM: the launch's 65536 / (2 x 128 (C + 1))
 * a thread (two_programs_launch_regs: 80 for two consumer warpgroups); the producer warpgroup
 * down to PRODUCER_REGS and the consumers up by what it gives back (104 for two), as setmaxnreg
 * takes its registers from the CTA's own pool (PTX ISA 9.7.19.6). ptxas then
 * serializes tutorial 06's wgmma ops at D = 64 (C7512; not at 112), and still the kernel runs
 * 0.94-0.96x the time of the grid without a producer (docs/performance.md). A lone producer warp
 * instead (288 threads, 112 registers each, no setmaxnreg) measured 1.2-1.37x this one's time:
 * the SM's four register files take a CTA's warps in turn, so the ninth warp makes one of them
 * hold six warps of two programs, more than its 16K registers. */
static int two_programs_launch_regs(int groups) { return 65536 / (2 * 128 * (groups + 1)) / 8 * 8; }

static int two_programs_consumer_regs(int groups)
{
    return (two_programs_launch_regs(groups) * (groups + 1) - PRODUCER_REGS) / groups / 8 * 8;
}

/* Whether two programs of the warp-specialized kernel share an SM: its shared memory (bytes, as
 * the caller counts it: grid_bytes, as_grid_bytes) within half the SM's and, with two consumer
 * warpgroups, its consumers' estimated registers within what two programs leave them
 * (consumer_regs_estimate, two_programs_consumer_regs), their carried tiles and
 * CARRIED_HEADROOM_REGS within the launch's count: ptxas may hold a consumer's wgmma to that
 * (tutorial 06, causal, D = 128 with 128 x 16 blocks: "insufficient registers (80) to compile
 * instruction", C7602, at p @ v's 64 accumulators, whatever the setmaxnreg). One consumer
 * warpgroup has 128 registers a thread at launch either way (budget). */
#define CARRIED_HEADROOM_REGS 30
static bool two_programs_fit(const IrFunc *f, const PassOptions *o, const IrOp *kloop,
                             int64_t bytes)
{
    if (bytes > shared_limit_bytes(o->sm) / 2)
        return false;
    int groups = ir_func_consumer_warps(f) / 4;
    if (groups == 1)
        return true;
    int64_t carried, need = consumer_regs_estimate(f, kloop, &carried);
    return groups == 2 && need <= two_programs_consumer_regs(groups) &&
           carried + CARRIED_HEADROOM_REGS <= two_programs_launch_regs(groups);
}

/* The wgmma ops directly in a loop's body, each issued once an iteration (attention's q @ k and
 * p @ v are two). */
static int wgmma_count(const IrRegion *body)
{
    int n = 0;
    for (int j = 0; j < body->nops; j++)
        n += body->ops[j]->code == OP_WGMMA;
    return n;
}

/* In every loop of r running two wgmma ops or more an iteration, each wgmma_wait retires every
 * wgmma (pending 0): none stays in flight over another's issue. A loop of one wgmma (a matmul's,
 * its accumulator the same registers each iteration) keeps its own. */
static void retire_every_wgmma(IrRegion *r)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            retire_every_wgmma(&op->regions[k]);
        if (op->code != OP_FOR)
            continue;
        IrRegion *body = &op->regions[0];
        bool several = wgmma_count(body) >= 2;
        for (int j = 0; several && j < body->nops; j++)
            if (body->ops[j]->code == OP_WGMMA_WAIT)
                body->ops[j]->attr[0] = 0;
    }
}

/* The consumers' registers a thread: the producer's and theirs fit what the launch gives each
 * of the (C + 1) warpgroups (max_regs), as setmaxnreg needs (PTX ISA 9.7.19.6: counts multiples
 * of 8 in [24, 256]); the producer takes PRODUCER_REGS. Two programs an SM where
 * two_programs_fit: 128 at launch with one consumer warpgroup (the consumers 232), 80 with two
 * (two_programs_consumer_regs: the consumers 104, a loop's wgmma ops retired by the wait after
 * each where it runs two or more). Else one program within the SM's 64K registers (168 at launch
 * for two consumer warpgroups, the consumers 240; 248 for one, the consumers 256). A persistent
 * kernel's ring (one program an SM by design) holds one program an SM. */
static void budget(const Ws *w)
{
    IrFunc *f = w->f;
    int groups = ir_func_consumer_warps(f) / 4;
    int64_t bytes = groups > 1 ? grid_bytes(f) : buffer_bytes(f, &f->body);
    bool two_programs = !w->ring && two_programs_fit(f, w->o, w->kloop, bytes);
    int max_regs = !two_programs ? 65536 / (128 * (groups + 1)) / 8 * 8
                   : groups == 1 ? 128
                                 : two_programs_launch_regs(groups);
    if (max_regs > 248)
        max_regs = 248; /* .maxnreg: at most 255 */
    if (two_programs && groups > 1) {
        /* a wgmma kept in flight over another (attention's p @ v over the back edge, across
         * the next q @ k) holds its accumulator and A registers live across it: more than 104,
         * and ptxas serializes every wgmma of the kernel (C7512); retired at once the kernel
         * measured 0.96-0.99x the time (tutorial 06, D = 64; docs/performance.md) */
        retire_every_wgmma(&f->body);
    }
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
    if (w->ring) {
        ring_prologue(w, empty);
        ring_kloop(w);
    }
    IrRegion *body = &w->kloop->regions[0];
    /* the barrier that freed the insert slot: the consumers arrive on its empty mbarrier */
    const IrOp *ev = f->values[w->expect->operands[0]].def;
    ValueId insert = ev->operands[1], parity = w->full_wait->operands[1];
    IrBuilder lb = {.func = f, .region = body, .pos = ir_region_index(body, w->arrive_bar)};
    ir_region_remove(body, lb.pos);
    ValueId view = passes_mbarrier_view(&lb, w->arrive_bar->loc, empty, insert);
    IrOp *arrive = ir_build(&lb, OP_MBAR_ARRIVE, w->arrive_bar->loc, &view, 1, NULL, 0, 0);
    arrive->partition = PARTITION_CONSUMER;
    w->empty = empty;
    w->arrive = arrive;
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
    budget(w);
    return true;
}

/* ---- ping-pong: two consumer groups take the tiles in turn ------------------------------------
 * With one consumer warpgroup (num_warps 4) a persistent kernel's tensor cores idle while the
 * consumers store a tile. A second group of num_warps consumer warps takes every other tile of
 * the loop over tiles (CUTLASS's ping-pong schedule): the producer fills the ring in tile order,
 * so group 1 runs tile t + 1's wgmma ops while group 0 stores tile t, and the two alternate. A
 * slot is still freed by one group's num_warps warps, so the empty mbarriers count as before;
 * each group has its own scratch (IrFunc.ws.scratch_stride, passes/shared_alloc.c).
 *
 * The rewrite: turn, an iter arg of the loop over tiles (0, 1, 0, ...), and the tile's consumer
 * work (its consumer ops, kloop, and every op that reads what they compute) moved into
 * `if consumer_turn(turn)`, which the producer always enters; the scalars every warp computes
 * (the tile's coordinates, the ring's next count) and the producer's prologue copies stay
 * before it. In one program's view (the interpreter) consumer_turn is true: nothing changes. */

/* Whether op or an op in its regions is one that is(op, ctx) picks. */
static bool holds(const IrOp *op, bool (*is)(const IrOp *, const void *), const void *ctx)
{
    if (is(op, ctx))
        return true;
    for (int k = 0; k < op->nregions; k++)
        if (ir_region_find_if(&op->regions[k], is, ctx))
            return true;
    return false;
}

static bool has_effect(const IrOp *op, const void *ctx)
{
    (void)ctx;
    return op_has(op->code, OPT_EFFECT);
}

static bool every_warp_barrier(const IrOp *op, const void *ctx)
{
    (void)ctx;
    return op->code == OP_BARRIER && op->partition == PARTITION_ALL;
}

/* Whether op reads a value marked in ctx (a bool per value). */
static bool reads_marked(const IrOp *op, const void *ctx)
{
    const bool *marked = ctx;
    for (int i = 0; i < op->noperands; i++)
        if (op->operands[i] && marked[op->operands[i]])
            return true;
    return false;
}

/* Marks in move[] the ops of the tile's body (home, its yield aside) that go into the turn's if,
 * and the values they make in moved[]; returns why they cannot move, or NULL. */
static const char *pingpong_split(const Ws *w, bool *move, bool *moved)
{
    const IrRegion *home = w->home;
    int last = home->nops - 1;
    bool moved_effect = false;
    for (int i = 0; i < last; i++) {
        const IrOp *op = home->ops[i];
        move[i] =
            op == w->kloop || op->partition == PARTITION_CONSUMER || holds(op, reads_marked, moved);
        bool effect = holds(op, has_effect, NULL);
        if (!move[i] && effect && moved_effect)
            return "an op with an effect that stays outside comes after the consumers' work";
        if (!move[i])
            continue;
        moved_effect |= effect;
        if (holds(op, every_warp_barrier, NULL))
            return "the tile's work meets every warp at a barrier";
        for (int k = 0; k < op->nresults; k++)
            moved[op->results[k]] = true;
    }
    if (holds(home->ops[last], reads_marked, moved))
        return "the loop over tiles carries a value the consumers compute";
    return NULL;
}

/* An if on cond (every warp's) at b with no results, each branch its yield alone: the caller
 * puts region 0's ops before its yield. */
static IrOp *empty_if(IrBuilder *b, SrcLoc loc, ValueId cond)
{
    IrOp *branch = ir_build(b, OP_IF, loc, &cond, 1, NULL, 0, 2);
    for (int k = 0; k < 2; k++)
        ir_build(&(IrBuilder){.func = b->func, .region = &branch->regions[k], .pos = -1}, OP_YIELD,
                 loc, NULL, 0, NULL, 0, 0);
    return branch;
}

/* An if on cond at b holding op, moved there from its region r. */
static void guard(IrBuilder *b, SrcLoc loc, ValueId cond, IrRegion *r, IrOp *op)
{
    int at = ir_region_index(r, op);
    ir_region_remove(r, at);
    if (b->region == r && b->pos > at)
        b->pos--;
    ir_region_insert(b->func, &empty_if(b, loc, cond)->regions[0], 0, op);
}

/* The index of the wait in r after kloop that retires its wgmma ops (pending 0 on its result), or
 * -1. */
static int retiring_wait(const Ws *w, const IrRegion *r)
{
    for (int at = ir_region_index(r, w->kloop) + 1; at > 0 && at < r->nops; at++) {
        const IrOp *op = r->ops[at];
        if (op->code == OP_WGMMA_WAIT && op->attr[0] == 0 && op->noperands > 0 &&
            w->f->values[op->operands[0]].def == w->kloop)
            return at;
    }
    return -1;
}

/* Each group frees the slots of its own tiles. kloop's arrival frees the slot of the iteration
 * before, so a tile's first iteration would free the other group's last slot, whose wgmma may
 * still run: it arrives only in the program's first tile (ring 0, the release of fill -1 that the
 * producer's first wait on slot S - 1 counts, ring_prologue), and the tile's last slot is freed
 * after its wgmma ops retire (wait after kloop: at the last fill, ring + trips - 1, when trips > 0).
 * Every slot is still freed once a fill, in fill order within a group: the producer's phases
 * stand. */
static void pingpong_release(Ws *w, IrRegion *work)
{
    IrFunc *f = w->f;
    const IrRegion *lb = &w->loop->regions[0];
    int ring_arg = 1;
    while (lb->args[ring_arg] != w->ring) /* the body's args: the counter, then the iter args */
        ring_arg++;
    ValueId next_ring = w->home->ops[w->home->nops - 1]->operands[ring_arg - 1];
    int at = retiring_wait(w, work);
    SrcLoc loc = w->arrive->loc;
    IrRegion *kb = &w->kloop->regions[0];
    IrBuilder b = {.func = f, .region = kb, .pos = ir_region_index(kb, w->arrive)};
    ValueId zero = passes_const_i32(&b, loc, 0);
    ValueId later =
        ir_build_binary(&b, OP_CMP_NE, loc, type_scalar(DT_I1), kb->args[0], w->kloop->operands[0]);
    ValueId first = ir_build_binary(&b, OP_CMP_EQ, loc, type_scalar(DT_I1), w->ring, zero);
    guard(&b, loc, ir_build_binary(&b, OP_OR, loc, type_scalar(DT_I1), later, first), kb,
          w->arrive);
    IrBuilder ab = {.func = f, .region = work, .pos = at + 1};
    ValueId any = ir_build_binary(&ab, OP_CMP_GT, loc, type_scalar(DT_I1), next_ring, w->ring);
    IrBuilder in = {.func = f, .region = &empty_if(&ab, loc, any)->regions[0], .pos = 0};
    ValueId last = scalar_op(&in, OP_SUB, loc, next_ring, passes_const_i32(&in, loc, 1));
    ValueId slot = scalar_op(&in, OP_REM, loc, last, passes_const_i32(&in, loc, w->stages));
    ValueId view = passes_mbarrier_view(&in, loc, w->empty, slot);
    ir_build(&in, OP_MBAR_ARRIVE, loc, &view, 1, NULL, 0, 0)->partition = PARTITION_CONSUMER;
    /* the turn: a group's K loop starts once the group before has waited for its last fill
     * (turn_pass right after its K loop), so the fills are waited for in fill order, as by one
     * group: no wait is two phases of its mbarrier ahead (a parity names only the current phase
     * or the one before, PTX ISA 9.7.13.15.16). The slots are freed in fill order without it: a
     * slot's next fill waits for its release. The program's first tile waits for no turn; its
     * last passes none. */
    ValueId tile = w->loop->regions[0].args[0];
    IrBuilder pb = {.func = f, .region = work, .pos = ir_region_index(work, w->kloop) + 1};
    IrOp *pass = ir_build(&pb, OP_TURN_PASS, loc, NULL, 0, NULL, 0, 0);
    pass->partition = PARTITION_CONSUMER;
    ValueId after = scalar_op(&pb, OP_ADD, loc, tile, w->loop->operands[2]);
    ValueId more =
        ir_build_binary(&pb, OP_CMP_LT, loc, type_scalar(DT_I1), after, w->loop->operands[1]);
    guard(&pb, loc, more, work, pass);
    IrBuilder wb = {.func = f, .region = work, .pos = ir_region_index(work, w->kloop)};
    IrOp *wait = ir_build(&wb, OP_TURN_WAIT, loc, NULL, 0, NULL, 0, 0);
    wait->partition = PARTITION_CONSUMER;
    ValueId later_tile =
        ir_build_binary(&wb, OP_CMP_NE, loc, type_scalar(DT_I1), tile, w->loop->operands[0]);
    guard(&wb, loc, later_tile, work, wait);
}

/* Whether the ring (its buffers and mbarriers, before the loop over tiles once specialized) and
 * two groups' scratch fit the target's shared memory, the second group's at a 1024-byte
 * boundary (passes/shared_alloc.c). */
static bool pingpong_fits(const Ws *w)
{
    int64_t need = buffer_bytes(w->f, &w->f->body) + 2 * least_scratch(w->f, w->home) + 1024;
    return need <= shared_limit_bytes(w->o->sm);
}

/* Why the kernel as a whole cannot take a second consumer group, or NULL (the tile's work is
 * pingpong_split's to judge). */
static const char *pingpong_unsupported(const Ws *w)
{
    const IrFunc *f = w->f;
    if (f->num_warps != 4)
        return "the kernel's num_warps consumer warps are more than one warpgroup, which already "
               "share each tile";
    if (!pingpong_fits(w))
        return "two consumer groups' scratch and the ring do not fit shared memory together";
    const IrRegion *top = &f->body;
    for (int i = ir_region_index(top, w->loop) + 1; i < top->nops; i++) {
        const IrOp *op = top->ops[i];
        if (op->partition == PARTITION_CONSUMER && op->code != OP_MBAR_INVAL &&
            holds(op, has_effect, NULL))
            return "the consumers have work with an effect after the loop over tiles, which both "
                   "groups would run";
    }
    if (retiring_wait(w, w->home) < 0)
        return "no wait after the K loop retires its wgmma ops";
    return NULL;
}

/* The rewrite (above), when the kernel has one consumer warpgroup and the tile's work can move;
 * else a remark says why not. */
static void pingpong(Ws *w)
{
    IrFunc *f = w->f;
    IrRegion *home = w->home;
    if (!w->o->pingpong)
        return;
    bool *move = NULL, *moved = NULL;
    const char *why = pingpong_unsupported(w);
    if (!why) {
        move = arena_alloc(f->arena, sizeof(bool) * (size_t)home->nops);
        moved = arena_alloc(f->arena, sizeof(bool) * (size_t)(f->nvalues + 1));
        memset(move, 0, sizeof(bool) * (size_t)home->nops);
        memset(moved, 0, sizeof(bool) * (size_t)(f->nvalues + 1));
        why = pingpong_split(w, move, moved);
    }
    if (why) {
        if (w->o->remarks)
            diag_remark(w->d, w->loop->loc, "no second consumer group (ping-pong): %s", why);
        return;
    }
    SrcLoc loc = w->loop->loc;
    IrBuilder tb = {.func = f, .region = &f->body, .pos = ir_region_index(&f->body, w->loop)};
    ValueId turn =
        passes_add_iter_arg(f, w->loop, passes_const_i32(&tb, loc, 0), type_scalar(DT_I32), "turn");
    int n = home->nops - 1, kept = 0;
    IrOp **work = arena_alloc(f->arena, sizeof(IrOp *) * (size_t)n);
    int nwork = 0;
    for (int i = 0; i < n; i++) {
        if (move[i])
            work[nwork++] = home->ops[i];
        else
            home->ops[kept++] = home->ops[i];
    }
    home->ops[kept] = home->ops[n]; /* the yield */
    home->nops = kept + 1;
    IrBuilder b = {.func = f, .region = home, .pos = kept};
    Type i1 = type_scalar(DT_I1);
    ValueId mine = ir_build(&b, OP_CONSUMER_TURN, loc, &turn, 1, &i1, 1, 0)->results[0];
    IrOp *branch = empty_if(&b, loc, mine);
    for (int i = 0; i < nwork; i++)
        ir_region_insert(f, &branch->regions[0], i, work[i]);
    ValueId next = scalar_op(&b, OP_SUB, loc, passes_const_i32(&b, loc, 1), turn);
    IrOp *y = home->ops[home->nops - 1];
    y->operands[y->noperands - 1] = next;
    pingpong_release(w, &branch->regions[0]);
    /* the mbarriers retire once, after every warp's last wait: by the producer, not each group */
    for (int i = ir_region_index(&f->body, w->loop) + 1; i < f->body.nops; i++)
        if (f->body.ops[i]->code == OP_MBAR_INVAL)
            f->body.ops[i]->partition = PARTITION_PRODUCER;
    f->ws.consumer_groups = 2;
    budget(w);
    if (w->o->remarks)
        diag_remark(w->d, loc,
                    "ping-pong: a second group of %d consumer warps takes every other tile, its "
                    "wgmma ops running while the first group stores its tile (%d registers a "
                    "consumer thread)",
                    f->num_warps, f->ws.consumer_regs);
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

/* Whether op may run before the partitions split, on every warp: a scalar, or a tile each thread
 * computes in its own registers (a range, a constant, elementwise ops of such: stream_k leaves
 * the schedule's and the zero accumulator there), never one through shared memory (a convert, a
 * reduction: their barriers and scratch are the consumers'). A producer thread computes elements
 * of a layout of num_warps warps that it never reads. */
static bool head_op(const IrFunc *f, const IrOp *op)
{
    if (op->code == OP_LOCAL_ALLOC || op->code == OP_MBAR_INIT || grid_dep(op->code))
        return true;
    if (op_has(op->code, OPT_EFFECT) || op->nregions)
        return false;
    if (op->nresults != 1 || ir_type(f, op->results[0]).rank == 0)
        return true;
    switch (op->code) {
    case OP_CONST:
    case OP_MAKE_RANGE:
    case OP_SPLAT:
    case OP_EXPAND_DIMS:
    case OP_BROADCAST: return true;
    default: return op_has(op->code, OPT_ELEMENTWISE);
    }
}

/* The slots of the copies loop waits for (its mbar_wait's mbarriers), or 0. */
static int64_t loop_slots(const IrFunc *f, const IrOp *loop)
{
    const IrRegion *body = &loop->regions[0];
    for (int i = 0; i < body->nops; i++) {
        if (body->ops[i]->code != OP_MBAR_WAIT)
            continue;
        const IrOp *view = f->values[body->ops[i]->operands[0]].def;
        if (view && view->code == OP_SLOT)
            return ir_type(f, view->operands[0]).shape[0];
    }
    return 0;
}

/* Whether the producer keeps the loop fed: not a loop of one wgmma an iteration (a matmul's K
 * loop) on 3 slots or fewer. There a slot is released once the wgmma after the one reading it is
 * issued, so the copies into it have two iterations to land, about what a 48 KB copy from L2
 * takes at 128 x 256 x 64 (the loop without a producer waits on them about a tenth of its
 * samples); the release's hand-off to the producer's warps costs the rest. Measured (H200,
 * docs/performance.md "Where the producer loses"): tutorial 09 with the producer on 3 stages
 * 0.90-0.98x the speed without at 128x128x64 (4 and 8 warps), 128x256x64 and 64x256x64, seed 2
 * 1.03-1.12x the time; on 4 stages 0.96-1.06x the speed. A loop of two wgmma ops or more
 * (attention) has its softmax for the consumers to overlap: 3 slots win there. */
static bool lookahead_enough(const IrFunc *f, const IrOp *kloop)
{
    return wgmma_count(&kloop->regions[0]) != 1 || loop_slots(f, kloop) >= 4;
}

/* Where no loop asks, the loop the pass gives a producer on its own (docs/passes.md
 * "warp_specialize", chosen): on sm_90a, with two consumer warpgroups or more, the first loop of
 * the body whose iteration runs two wgmma ops or more (attention's q @ k and p @ v, with the
 * softmax between them for the consumers to overlap with the producer's copies) on 3 slots or
 * more, in a kernel whose buffers already hold one program an SM, or that holds two with the
 * producer (two_programs_fit), so the producer costs no occupancy. Measured (H200,
 * docs/performance.md): tutorial 06 at D = 128 on 8 warps with 3 stages 0.89-0.96x the time as
 * written; at D = 64 (128 x 64 blocks, two programs an SM either way) 0.94-0.96x; with 2 stages
 * 1.00-1.02x, with one consumer warpgroup (4 warps) 0.96-1.03x, and on a matmul's one wgmma an
 * iteration 1.04-1.12x, so none of those is chosen. In a grid made persistent
 * (passes/persistent.c) the loop over tiles offered to this choice, for such a loop nested in
 * it, where the grid's buffers (its largest scratch counted with them) hold one program an SM.
 * NULL when none qualifies. */
static IrOp *chosen_loop(const IrFunc *f, const PassOptions *o)
{
    if (o->no_auto_ws || !o->arch_specific || o->sm != 90 || f->num_warps < 8 ||
        f->num_warps % 4 != 0 || (f->persistent.on && !f->persistent.from_grid))
        return NULL;
    for (int i = 0; i < f->body.nops; i++) {
        IrOp *op = f->body.ops[i];
        if (op->code != OP_FOR || op->nregions != 1)
            continue;
        if (f->persistent.from_grid && op->attr[1] != WS_OFFERED)
            return NULL;
        const IrOp *kloop = f->persistent.from_grid ? passes_only_loop(&op->regions[0]) : op;
        if (!kloop)
            return NULL;
        /* a grid: one program an SM by its buffers, or two with the producer; a grid made
         * persistent: its ring keeps one program an SM, so only a kernel whose buffers hold one
         * as a grid already gains (two programs as a grid win over one with a producer) */
        bool costs_no_occupancy = f->persistent.from_grid
                                      ? one_program_as_grid(f, o, op)
                                      : buffer_bytes(f, &f->body) > shared_limit_bytes(o->sm) / 2 ||
                                            two_programs_fit(f, o, kloop, grid_bytes(f));
        if (!costs_no_occupancy)
            return NULL;
        if (wgmma_count(&kloop->regions[0]) >= 2 && loop_slots(f, kloop) >= 3)
            return op;
    }
    return NULL;
}

bool pass_warp_specialize(IrFunc *f, const PassOptions *o, Diag *d)
{
    IrRegion *top = &f->body;
    Ws w = {.f = f, .o = o, .d = d};
    for (int i = 0; i < top->nops; i++) {
        IrOp *op = top->ops[i];
        if (op->code != OP_FOR || op->attr[1] != WS_ASKED)
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
    if (!w.loop && (w.loop = chosen_loop(f, o)) != NULL) {
        w.chosen = true;
        w.loop_at = ir_region_index(top, w.loop);
    }
    if (!w.loop)
        return true;
    if (!o->arch_specific || o->sm != 90)
        return decline(&w, "warp specialization needs sm_90a (setmaxnreg, wgmma, tensor maps)");
    if (f->num_warps % 4 != 0)
        return decline(&w, "the consumers must be whole warpgroups (num_warps a multiple of 4)");
    /* the loop whose copies the producer issues: the loop itself, or the one loop in it (a
     * persistent kernel's K loop in its loop over tiles) */
    w.kloop = w.loop;
    w.home = top;
    const IrOp *inner = passes_only_loop(&w.loop->regions[0]);
    if (inner) {
        w.kloop = (IrOp *)inner;
        w.home = &w.loop->regions[0];
    }
    /* the default made the grid persistent for this producer (passes/persistent.c); where the
     * grid holds two programs an SM with one, the driver compiles it as a grid again */
    if (inner && f->persistent.from_grid && !o->persistent &&
        two_programs_fit(f, o, inner, as_grid_bytes(f, w.loop)))
        return decline(&w, "as the grid it was written two programs share an SM, each with a "
                           "producer, where made persistent its ring of slots holds one");
    if (!find_parts(&w))
        return decline(&w, "the loop's copies are not tensor-map copies of a pipelined loop "
                           "(one mbarrier wait and one barrier an iteration, in the loop or in "
                           "the one loop nested in it)");
    if (!w.chosen && !lookahead_enough(f, w.kloop))
        return decline(&w, "a loop of one wgmma an iteration on 3 slots or fewer waits on its "
                           "copies with a producer (the hand-off from the consumers' release to "
                           "the producer's copy costs the lookahead two slots give; measured "
                           "0.90-0.98x the speed without); num_stages=4 or more keeps it");
    for (int i = 0; i < (inner ? w.loop_at : w.init_at); i++)
        if (!head_op(f, top->ops[i]))
            return decline(&w, "an op before the mbarriers' init is not a scalar or a tile "
                               "computed in registers");
    /* mbarriers set up right after the loop's (a tile loaded once before the loop: attention's
     * q) are set up by every warp with them, before the partitions split */
    while (!inner && w.init_at + 2 < top->nops && top->ops[w.init_at + 1]->code == OP_LOCAL_ALLOC &&
           type_is_mbarriers(ir_type(f, top->ops[w.init_at + 1]->results[0])) &&
           top->ops[w.init_at + 2]->code == OP_MBAR_INIT &&
           top->ops[w.init_at + 2]->operands[0] == top->ops[w.init_at + 1]->results[0])
        w.init_at += 2;
    /* a later loop's mbarriers (causal attention's second pass) are fine: the consumers run
     * that loop as it was, its copies included (choose) */
    for (int i = inner ? 0 : w.init_at + 1; i < (inner ? top->nops : w.loop_at); i++)
        if (top->ops[i]->code == OP_MBAR_INIT)
            return decline(&w, "another loop's mbarriers are set up before it");
    if (inner) {
        const char *why = nested_unsupported(&w);
        if (why)
            return decline(&w, why);
        int64_t need;
        if (!ring_fits(&w, &need)) {
            if (o->remarks)
                diag_remark(d, w.loop->loc,
                            "tl.range(..., warp_specialize=True) not applied: the ring of slots "
                            "stays live across the loop over tiles, and it and the tile's "
                            "scratch take at least %lld bytes of shared memory (sm_%d allows "
                            "%d); fewer stages or smaller blocks would fit",
                            (long long)need, o->sm, shared_limit_bytes(o->sm));
            return true;
        }
        nest_prepare(&w);
    }
    if (!specialize(&w))
        return false;
    if (inner && !pass_dce(f, o, d)) /* the K loop's phases before ring counted them */
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
    if (inner)
        pingpong(&w);
    else if (o->pingpong && o->remarks)
        diag_remark(d, w.loop->loc,
                    "no second consumer group (ping-pong): the loop is not a persistent kernel's "
                    "loop over tiles around its K loop");
    if (o->remarks) /* after ping-pong, which changes the budget */
        diag_remark(d, w.loop->loc,
                    "warp-specialized%s: a producer warpgroup (%d warps, %d registers a thread) "
                    "issues the loop's tensor-map copies; the %d consumer warps (%d registers) "
                    "wait for each slot and free it with an mbarrier arrive",
                    w.chosen ? " (chosen, not asked: two wgmma ops an iteration on 3 slots or "
                               "more, one program an SM or two with the producer; "
                               "--no-auto-warp-specialize leaves it)"
                             : "",
                    f->ws.producer_warps, f->ws.producer_regs, f->num_warps, f->ws.consumer_regs);
    return true;
}
