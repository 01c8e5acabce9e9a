/* prefetch_tiles.c: the next tile's loads into L2, and L1 or registers, under this tile, in a
 * persistent kernel.
 *
 * A persistent kernel's loop over tiles (a for of the kernel's body whose body holds another
 * loop, its step a positive constant or num_programs: tutorial 06 or 09 written persistently,
 * examples/attention_persistent.tri, or a grid made persistent by passes/persistent.c) loads
 * some tiles once a tile, outside its K loop: attention's q. Each
 * such load waits for DRAM every tile, and the K loop behind it waits too: on an H200 a tenth of
 * the consumer warps' stall samples were on the stores of q's registers into shared memory,
 * waiting for its load (docs/performance.md "The next tile's q prefetched into L2"). So each
 * unmasked tile load of the loop's own body whose addresses depend on the tile (the loop's
 * counter) gets a `prefetch` right after it: the same addresses computed again from the next
 * tile's counter (counter + step), on while that is below the loop's bound; and once the inner
 * loop is done a second prefetch of them into the SM's L1 (the next tile runs on this SM; the
 * K loop's tensor-map copies bypass L1, so little evicts them there). The next tile's load then
 * finds its lines in L2, most of them in L1.
 *
 * Where the loop over tiles asks for a producer warpgroup or is offered one (warp_specialize;
 * its consumers load q themselves), the second copy is a load instead: the next tile's tile into
 * registers the loop carries, and the tile's own load runs in the loop's first iteration only
 * (carry_next). With 227 KB of shared memory taken the SM's L1 keeps too little for a 32 KB q, so
 * the L1 prefetch still left the loads waiting at each tile's start.
 *
 * Only pure ops (no effect, no memory read, no region) may lie between the counter and the
 * addresses, and no other value the loop carries (its next value is not known yet). A masked load
 * is left alone: its addresses where the mask is off need not be valid. Runs after layouts (the
 * copies keep the layouts of what they copy), before pipeline (which may then make the load a
 * copy into shared memory: the prefetch stays). Nothing a program sees changes; the interpreter
 * checks every prefetched address lies in a buffer, as a load's would. */
#include "passes/passes.h"

#include <string.h>

/* The step of loop when it is a loop over tiles (a for around another loop) whose step is
 * positive: a positive constant, or num_programs (a grid made persistent, passes/persistent.c);
 * else 0. */
static ValueId tile_loop_step(const IrFunc *f, const IrOp *loop)
{
    if (loop->code != OP_FOR || loop->nregions != 1)
        return 0;
    bool nested = passes_holds_loop(loop);
    ValueId step = loop->operands[2];
    const IrOp *def = f->values[step].def;
    int64_t k;
    if (!nested ||
        !((passes_const_int(f, step, &k) && k > 0) || (def && def->code == OP_NUM_PROGRAMS)))
        return 0;
    return step;
}

/* Marks in dep[] the values of body's ops before `end` that depend on the counter (depends) or on
 * another value the loop carries (unknown). */
static void mark_dependents(const IrRegion *body, int end, uint8_t *dep)
{
    enum { DEPENDS = 1, UNKNOWN = 2 };
    dep[body->args[0]] = DEPENDS;
    for (int a = 1; a < body->nargs; a++)
        dep[body->args[a]] = UNKNOWN;
    for (int i = 0; i < end; i++) {
        const IrOp *op = body->ops[i];
        uint8_t d = 0;
        for (int k = 0; k < op->noperands; k++)
            if (op->operands[k] > 0)
                d |= dep[op->operands[k]];
        if (op->nregions || op_has(op->code, OPT_EFFECT) || op_has(op->code, OPT_READS_MEMORY))
            d = d ? UNKNOWN : 0; /* its result cannot be computed again for the next tile */
        for (int k = 0; k < op->nresults; k++)
            dep[op->results[k]] = d;
    }
}

/* The most bytes of a tile a thread carries to the loop's next iteration in registers: q at D = 128,
 * 128 x 128 blocks on 8 warps, 32 registers a thread, which ptxas placed without a spill. */
enum { CARRY_BYTES_PER_THREAD = 128 };

/* Whether the next tile's copy of load ld is loaded into registers the loop carries, rather than
 * prefetched into L1: in a loop over tiles that asks for a producer or is offered one (there the
 * consumers load q themselves: pipeline_loops.c copies it into a slot only in a loop over tiles
 * without), a tile of at most CARRY_BYTES_PER_THREAD a thread. The load of L1 lines at the tile's
 * start still waited: with 227 KB of shared memory the SM's L1 keeps some 24 KB, under a 32 KB q.
 * Measured (H200, docs/performance.md "The next tile's q in registers"). */
static bool carried_in_registers(const IrFunc *f, const IrOp *loop, const IrOp *ld)
{
    Type t = ir_type(f, ld->results[0]);
    return loop->attr[1] != WS_NOT_ASKED && !t.is_ptr &&
           type_numel(t) * dtype_bytes(t.dtype) <=
               (int64_t)CARRY_BYTES_PER_THREAD * 32 * f->num_warps;
}

static ValueId splat_to(IrBuilder *b, SrcLoc loc, Type t, ValueId scalar, int layout)
{
    ValueId v = ir_build_unary(b, OP_SPLAT, loc, t, scalar);
    b->func->values[v].layout = layout;
    return v;
}

/* The next tile's ld (its pointers next, on while on), loaded at b, after the inner loop, into
 * registers the loop carries; ld itself then loads in the loop's first iteration only, the
 * carried registers its `other` elsewhere (a mov and a predicated load, no select). The loads'
 * masks are splats of one scalar, so their accesses stay as wide as ld's. */
static void carry_next(IrFunc *f, IrOp *loop, IrBuilder *b, IrOp *ld, ValueId next, ValueId on)
{
    SrcLoc loc = ld->loc;
    IrRegion *body = &loop->regions[0];
    ValueId val = ld->results[0], ptr = ld->operands[0];
    Type t = ir_type(f, val), mt = ir_type(f, ptr);
    mt.is_ptr = false;
    mt.dtype = DT_I1;
    int pl = f->values[ptr].layout, vl = f->values[val].layout;
    const char *name = f->values[val].name;
    ValueId aops[2] = {next, splat_to(b, loc, mt, on, pl)};
    ValueId ahead = ir_build(b, OP_LOAD, loc, aops, 2, &t, 1, 0)->results[0];
    f->values[ahead].layout = vl;
    f->values[ahead].name = name;
    /* zeros into the first iteration: a constant, which every warp may make before a producer's
     * partition splits off (warp_specialize) */
    IrBuilder ib = {.func = f, .region = &f->body, .pos = ir_region_index(&f->body, loop)};
    ValueId zero = dtype_is_float(t.dtype) ? ir_build_const_float(&ib, loc, t, 0.0)
                                           : ir_build_const_int(&ib, loc, t, 0);
    f->values[zero].layout = vl;
    ValueId carried = passes_add_iter_arg(f, loop, zero, t, name);
    f->values[carried].layout = vl;
    f->values[loop->results[loop->nresults - 1]].layout = vl;
    IrOp *y = body->ops[body->nops - 1];
    y->operands[y->noperands - 1] = ahead;
    IrBuilder fb = {.func = f, .region = body, .pos = ir_region_index(body, ld)};
    ValueId first = passes_binary(&fb, loc, OP_CMP_EQ, body->args[0], loop->operands[0]);
    ValueId *lops = arena_alloc(f->arena, sizeof(ValueId) * 3);
    lops[0] = ptr;
    lops[1] = splat_to(&fb, loc, mt, first, pl);
    lops[2] = carried;
    ld->operands = lops;
    ld->noperands = 3;
}

/* The next tile's copies of load body->ops[at] (its pointers ptr): a prefetch into L2 right after
 * the load, and once the inner loop is done either a prefetch into L1 or a load into registers
 * the loop carries (carried_in_registers). False when the lines cannot be computed again from the
 * counter alone. */
static bool prefetch_next(IrFunc *f, IrOp *loop, ValueId step, int at)
{
    IrRegion *body = &loop->regions[0];
    IrOp *ld = body->ops[at];
    uint8_t *dep = arena_alloc(f->arena, (size_t)f->nvalues + 1);
    memset(dep, 0, (size_t)f->nvalues + 1);
    mark_dependents(body, at, dep);
    ValueId ptr = ld->operands[0];
    if (dep[ptr] != 1)
        return false; /* the same lines every tile, or not computable ahead */
    /* the ops the pointers need that depend on the counter, found backward from the load */
    bool *need = arena_alloc(f->arena, sizeof(bool) * ((size_t)f->nvalues + 1));
    memset(need, 0, sizeof(bool) * ((size_t)f->nvalues + 1));
    need[ptr] = true;
    for (int i = at - 1; i >= 0; i--) {
        const IrOp *op = body->ops[i];
        bool used = false;
        for (int k = 0; k < op->nresults; k++)
            used |= need[op->results[k]];
        if (!used || !dep[op->results[0]])
            continue;
        if (op->nresults != 1)
            return false;
        for (int k = 0; k < op->noperands; k++)
            if (op->operands[k] > 0 && dep[op->operands[k]])
                need[op->operands[k]] = true;
    }
    /* into L2 right after the load; into L1 or registers too once the inner loop is done (the
     * next tile runs on this SM), its addresses computed once more there (cse may merge the two,
     * keeping them across the loop) */
    int inner = -1;
    for (int i = at + 1; i < body->nops && inner < 0; i++)
        if (body->ops[i]->code == OP_FOR || body->ops[i]->code == OP_WHILE)
            inner = i;
    for (int level = 2; level >= 1; level--) {
        if (level == 1 && inner < 0)
            break;
        IrBuilder b = {.func = f, .region = body, .pos = level == 2 ? at + 1 : inner + 1};
        SrcLoc loc = ld->loc;
        ValueId next = passes_binary(&b, loc, OP_ADD, body->args[0], step);
        IrCloneMap m = ir_clone_map_new(f);
        m.map[body->args[0]] = next;
        for (int i = 0; i < at; i++) {
            const IrOp *op = body->ops[i];
            if (op->nresults == 1 && need[op->results[0]] && dep[op->results[0]])
                ir_clone_op_mapped(&b, op, &m);
        }
        ValueId on = passes_binary(&b, loc, OP_CMP_LT, next, loop->operands[1]);
        if (level == 1 && carried_in_registers(f, loop, ld)) {
            carry_next(f, loop, &b, ld, m.map[ptr], on);
            break;
        }
        ValueId ops[2] = {m.map[ptr], on};
        ir_build(&b, OP_PREFETCH, loc, ops, 2, NULL, 0, 0)->attr[0] = level == 1;
        if (level == 2 && inner >= 0)
            inner += b.pos - (at + 1);
    }
    return true;
}

bool pass_prefetch_tiles(IrFunc *f, const PassOptions *o, Diag *d)
{
    bool changed = false;
    for (int i = 0; i < f->body.nops; i++) {
        IrOp *loop = f->body.ops[i];
        ValueId step = tile_loop_step(f, loop);
        if (!step || ir_type(f, loop->regions[0].args[0]).dtype != DT_I32)
            continue;
        IrRegion *body = &loop->regions[0];
        for (int at = 0; at < body->nops; at++) {
            IrOp *ld = body->ops[at];
            if (ld->code != OP_LOAD || ld->nresults != 1 || ir_type(f, ld->results[0]).rank == 0 ||
                (ld->noperands > 1 && ld->operands[1] > 0))
                continue;
            if (prefetch_next(f, loop, step, at)) {
                /* on past the load (the ops built after it load nothing unmasked) */
                at = ir_region_index(body, ld);
                changed = true;
            }
        }
        i = ir_region_index(&f->body, loop); /* past a carry's zeros, made before the loop */
    }
    /* the copies' axis facts (the prefetch's accesses are as wide as the load's) */
    return !changed || pass_axis_info(f, o, d);
}
