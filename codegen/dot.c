/* dot.c: what the three dots share. Before lowering, which dot operands are left in their source
 * registers (a convert_layout to a dot-operand layout that its dot stages in shared memory itself
 * is not materialized), as the dots' scratch records say; then each dot goes, by its
 * accumulator's layout, to the FMA dot, mma.sync or wgmma. */
#include "codegen/internal.h"

/* The dot operands left unmaterialized, as the dots' scratch records say (passes/shared_alloc.c
 * decides): a convert_layout or local_load whose dot reads the operand from elsewhere is not
 * lowered to registers. */
static void mark_unmaterialized(Cg *c, const IrRegion *r)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        if (op->code == OP_DOT)
            for (int k = 0; k < 2; k++)
                if (op->scratch.from[k] != DOT_FROM_REGISTERS)
                    c->lazy_operand[op->operands[k]] = true;
        for (int k = 0; k < op->nregions; k++)
            mark_unmaterialized(c, &op->regions[k]);
    }
}

/* Before any op is lowered (the marks must be known when the converts are reached). */
void cg_plan_dot_operands(Cg *c)
{
    c->lazy_operand = arena_alloc(c->arena, sizeof(bool) * (size_t)(c->f->nvalues + 1));
    mark_unmaterialized(c, &c->f->body);
}

/* r = a @ b + c, by the accumulator's layout: #mma v3 -> wgmma (dot_wgmma.c), #mma v2 ->
 * mma.sync (dot_mma.c), blocked -> FMAs (dot_fma.c). */
bool cg_lower_dot(Cg *c, const IrOp *op)
{
    ValueId av = op->operands[0], bv = op->operands[1], cv = op->operands[2], r = op->results[0];
    Type ta = ir_type(c->f, av), tb = ir_type(c->f, bv);
    LVal *A = cg_value(c, av), *B = cg_value(c, bv), *C = cg_value(c, cv);
    if (c->failed)
        return false;
    Dist *da = cg_dist(c, A->layout, ta), *db = cg_dist(c, B->layout, tb);
    Dist *dc = cg_dist(c, C->layout, ir_type(c->f, cv)), *dr = cg_dist_of(c, r);
    if (!da || !db || !dc || !dr)
        return false;
    if (dc != dr)
        FAIL(c, "dot: accumulator and result layouts differ");
    if (c->f->layouts[dr->layout].kind == LAYOUT_MMA && c->f->layouts[dr->layout].mma.version == 3)
        return cg_lower_dot_wgmma(c, op, A, B, C, dr);
    if (c->f->layouts[dr->layout].kind == LAYOUT_MMA)
        return cg_lower_dot_mma(c, op, A, B, C, da, db, dr);
    return cg_lower_dot_fma(c, op, A, B, C, da, db, dr);
}
