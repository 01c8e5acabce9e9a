/* unroll_loops.c: a `for` that asks to be unrolled (attr[3] = 2) runs its body twice an
 * iteration, and an odd last iteration after it.
 *
 * Why: a value a loop carries lives in one set of registers across the back edge. The pipeline's
 * deferred promotion (defer_promotion.c) issues this iteration's wgmma into one partial while
 * the last iteration's partial is still to be added, so the two partials need two sets of
 * registers; rolled, the loop copies the new partial into the carried one at the back edge while
 * its wgmma still runs, and ptxas then serializes every wgmma of the kernel (its C7514 note).
 * Unrolled by two, the first copy of the body writes one set and the second the other, and the
 * carried partial is always the second's: no copy.
 *
 * Requires: a loop with a constant positive step and an i32 counter (else it stays rolled, which
 * is correct, only slower). Runs after every pass that reshapes loops and before shared_alloc.
 *
 *     r = for i = lo, hi, s, iter x = x0 { body(i, x); yield y }
 * becomes
 *     n = max(0, (hi - lo + s - 1) / s)
 *     h = for i = lo, lo + (n / 2) * 2s, 2s, iter x = x0 {
 *         body(i, x) -> y1; body(i + s, y1) -> y2; yield y2 }
 *     r = if n % 2 == 1 { body(lo + (n / 2) * 2s, h) -> y; wgmma_wait 0 on y's wgmma tiles;
 *                          yield y }
 *         else { wgmma_wait 0 on h's wgmma tiles; yield h }
 *
 * (a wgmma tile: what the body yields from a wgmma or a wgmma_wait, which may still run)
 *
 * The waits in the `if`: a wgmma tile still being written must not pass through the if's join
 * (a copy of its registers there would read them early, and ptxas serializes for it too); the
 * loop's own wait after it (pipeline_loops' finish_loop) then waits for nothing. Every value is
 * computed as before, in the same order: the interpreter gives the same bits. */
#include "passes/passes.h"

#include <string.h>

typedef struct Unroll {
    IrFunc *f;
    IrOp *L;
    IrRegion *body;
    int niter;
} Unroll;

/* The body's ops but its yield cloned at b with the iv as iv and the iter args as args; the
 * yield's operands, mapped, into out. */
static void clone_body(Unroll *u, IrBuilder *b, ValueId iv, const ValueId *args, ValueId *out)
{
    IrCloneMap m = ir_clone_map_new(u->f);
    m.map[u->body->args[0]] = iv;
    for (int a = 0; a < u->niter; a++)
        m.map[u->body->args[1 + a]] = args[a];
    for (int i = 0; i + 1 < u->body->nops; i++)
        ir_clone_op_mapped(b, u->body->ops[i], &m);
    const IrOp *y = u->body->ops[u->body->nops - 1];
    for (int a = 0; a < u->niter; a++)
        out[a] = ir_mapped(m.map, m.nmap, y->operands[a]);
}

/* vals yielded from a branch at b, each wgmma tile among them through a wgmma_wait 0 of the
 * partition whose ops made it (a warp-specialized loop's consumers). */
static void yield_retired(Unroll *u, IrBuilder *b, ValueId *vals, SrcLoc loc)
{
    IrFunc *f = u->f;
    const IrOp *y = u->body->ops[u->body->nops - 1];
    for (int a = 0; a < u->niter; a++) {
        const IrOp *def = f->values[y->operands[a]].def;
        if (!def || (def->code != OP_WGMMA && def->code != OP_WGMMA_WAIT))
            continue;
        Type t = ir_type(f, vals[a]);
        IrOp *wait = ir_build(b, OP_WGMMA_WAIT, loc, &vals[a], 1, &t, 1, 0);
        wait->partition = def->partition;
        f->values[wait->results[0]].layout = f->values[vals[a]].layout;
        f->values[wait->results[0]].name = f->values[vals[a]].name;
        vals[a] = wait->results[0];
    }
    ir_build(b, OP_YIELD, loc, vals, u->niter, NULL, 0, 0);
}

static void unroll_by_two(IrFunc *f, IrRegion *parent, IrOp *L, int64_t step)
{
    Unroll u = {.f = f, .L = L, .body = &L->regions[0], .niter = L->nresults};
    SrcLoc loc = L->loc;
    IrBuilder b = {.func = f, .region = parent, .pos = ir_region_index(parent, L)};
    ValueId n = passes_trip_count(&b, loc, L, step);
    ValueId pairs = passes_binary(&b, loc, OP_DIV, n, passes_const_i32(&b, loc, 2));
    ValueId two_s = passes_const_i32(&b, loc, 2 * step);
    ValueId hi2 = passes_binary(&b, loc, OP_ADD, L->operands[0],
                                passes_binary(&b, loc, OP_MUL, pairs, two_s));
    /* the loop over pairs */
    int nops = 3 + u.niter;
    ValueId *ops = arena_alloc(f->arena, sizeof(ValueId) * (size_t)nops);
    Type *types = arena_alloc(f->arena, sizeof(Type) * (size_t)(u.niter + 1));
    ops[0] = L->operands[0], ops[1] = hi2, ops[2] = two_s;
    for (int a = 0; a < u.niter; a++) {
        ops[3 + a] = L->operands[3 + a];
        types[a] = ir_type(f, L->results[a]);
    }
    IrOp *N = ir_build(&b, OP_FOR, loc, ops, nops, types, u.niter, 1);
    memcpy(N->attr, L->attr, sizeof N->attr);
    N->attr[3] = 0;
    N->partition = L->partition;
    IrRegion *nb = &N->regions[0];
    ValueId *args = arena_alloc(f->arena, sizeof(ValueId) * (size_t)(u.niter + 1));
    ValueId *mid = arena_alloc(f->arena, sizeof(ValueId) * (size_t)(u.niter + 1));
    ValueId *end = arena_alloc(f->arena, sizeof(ValueId) * (size_t)(u.niter + 1));
    for (int a = 0; a <= u.niter; a++) {
        ValueId old = u.body->args[a];
        ValueId nv = ir_region_add_arg(f, nb, f->values[old].type, f->values[old].name);
        f->values[nv].layout = f->values[old].layout;
        if (a > 0) {
            args[a - 1] = nv;
            f->values[N->results[a - 1]].layout = f->values[L->results[a - 1]].layout;
            f->values[N->results[a - 1]].name = f->values[L->results[a - 1]].name;
        }
    }
    IrBuilder in = {.func = f, .region = nb, .pos = -1};
    clone_body(&u, &in, nb->args[0], args, mid);
    ValueId iv2 = passes_binary(&in, loc, OP_ADD, nb->args[0], passes_const_i32(&in, loc, step));
    clone_body(&u, &in, iv2, mid, end);
    IrOp *yield = ir_build(&in, OP_YIELD, L->regions[0].ops[L->regions[0].nops - 1]->loc, end,
                           u.niter, NULL, 0, 0);
    yield->partition = L->partition;
    /* the odd iteration */
    ValueId odd = passes_binary(&b, loc, OP_CMP_NE,
                                passes_binary(&b, loc, OP_REM, n, passes_const_i32(&b, loc, 2)),
                                passes_const_i32(&b, loc, 0));
    IrOp *tail = ir_build(&b, OP_IF, loc, &odd, 1, types, u.niter, 2);
    tail->partition = L->partition;
    IrBuilder then_b = {.func = f, .region = &tail->regions[0], .pos = -1};
    clone_body(&u, &then_b, hi2, N->results, end);
    yield_retired(&u, &then_b, end, loc);
    IrBuilder else_b = {.func = f, .region = &tail->regions[1], .pos = -1};
    memcpy(mid, N->results, sizeof(ValueId) * (size_t)u.niter);
    yield_retired(&u, &else_b, mid, loc);
    for (int a = 0; a < u.niter; a++) {
        f->values[tail->results[a]].layout = f->values[L->results[a]].layout;
        f->values[tail->results[a]].name = f->values[L->results[a]].name;
        ir_replace_all_uses(f, L->results[a], tail->results[a]);
    }
    ir_region_remove(parent, ir_region_index(parent, L));
}

bool unroll_loops_takes(const IrFunc *f, const IrOp *loop, int64_t *step)
{
    return loop->code == OP_FOR && loop->nregions == 1 &&
           passes_const_int(f, loop->operands[2], step) && *step > 0 && passes_i32_counter(f, loop);
}

static void unroll_region(IrFunc *f, IrRegion *r)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            unroll_region(f, &op->regions[k]);
        int64_t step;
        if (op->code != OP_FOR || op->attr[3] != 2 || !unroll_loops_takes(f, op, &step))
            continue;
        unroll_by_two(f, r, op, step);
        while (i < r->nops && r->ops[i]->code != OP_IF) /* past the new loop and its tail */
            i++;
    }
}

bool pass_unroll_loops(IrFunc *f, const PassOptions *o, Diag *d)
{
    (void)o;
    (void)d;
    unroll_region(f, &f->body);
    return true;
}
