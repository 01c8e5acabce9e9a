/* dce.c: dead code elimination.
 *
 * Requires: nothing beyond well-formed regions.
 * Guarantees: no op is left whose results are all unused and that has no effect: arithmetic,
 * shape ops, constants, hints and loads (an unused load is removed as in Triton; the interpreter
 * then no longer checks its bounds) go when unused, in every region, repeatedly (removing one
 * op can make its operands' definitions dead). A for or if whose results are unused goes too
 * when nothing inside it has an effect. Kept always: stores, asserts, terminators (yield,
 * condition) and while loops (removing one could turn a loop that never ends into one that
 * does). Unused loop iter args are left as they are. */
#include "passes/passes.h"

typedef struct Dce {
    IrFunc *f;
    int32_t *uses;
    bool changed;
} Dce;

static void count_uses(const IrRegion *r, int32_t *uses, int nvalues, int delta)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int j = 0; j < op->noperands; j++)
            if (op->operands[j] > 0 && op->operands[j] < nvalues)
                uses[op->operands[j]] += delta;
        for (int j = 0; j < op->nregions; j++)
            count_uses(&op->regions[j], uses, nvalues, delta);
    }
}

/* Kept though unused: an op with an effect (OPT_EFFECT: stores, atomics, asserts, async copies,
 * commits and waits, barriers, wgmma_wait, mbarrier ops, tma_load; a while, which may not end, and
 * its condition) or a terminator; or one whose regions hold such an op. Loads, local_load, wgmma
 * (OPT_READS_MEMORY) and local_alloc go when unused, as the other ops do. */
static bool has_effect(const IrOp *op)
{
    if (op_has(op->code, OPT_EFFECT | OPT_TERMINATOR))
        return true;
    for (int i = 0; i < op->nregions; i++)
        for (int j = 0; j < op->regions[i].nops; j++) {
            const IrOp *inner = op->regions[i].ops[j];
            /* A region's own yield only hands values out; it is not an effect of the op. */
            if (inner->code == OP_YIELD)
                continue;
            if (has_effect(inner))
                return true;
        }
    return false;
}

static void dce_region(Dce *d, IrRegion *r)
{
    /* Backwards, so an op's operands are seen dead in the same sweep once it goes. */
    for (int i = r->nops - 1; i >= 0; i--) {
        IrOp *op = r->ops[i];
        for (int j = 0; j < op->nregions; j++)
            dce_region(d, &op->regions[j]);
        if (has_effect(op))
            continue;
        bool used = false;
        for (int j = 0; j < op->nresults; j++)
            if (d->uses[op->results[j]] > 0)
                used = true;
        if (used)
            continue;
        for (int j = 0; j < op->noperands; j++)
            if (op->operands[j] > 0 && op->operands[j] < d->f->nvalues)
                d->uses[op->operands[j]]--;
        for (int j = 0; j < op->nregions; j++)
            count_uses(&op->regions[j], d->uses, d->f->nvalues, -1);
        ir_region_remove(r, i);
        d->changed = true;
    }
}

bool pass_dce(IrFunc *f, const PassOptions *o, Diag *diag)
{
    (void)o;
    (void)diag;
    Dce d = {.f = f};
    d.uses = arena_alloc(f->arena, (size_t)(f->nvalues + 1) * sizeof *d.uses);
    count_uses(&f->body, d.uses, f->nvalues, 1);
    /* Uses inside a loop body of values defined later in it cannot happen (dominance), but an
     * op removed inside a region can free an op before that region: sweep until nothing goes. */
    do {
        d.changed = false;
        dce_region(&d, &f->body);
    } while (d.changed);
    return true;
}
