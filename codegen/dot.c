/* dot.c: what the three dots share. Before lowering, which dot operands are left in their source
 * registers (a convert_layout to a dot-operand layout that its dot stages in shared memory itself
 * is not materialized) and where a dot may stage them; then each dot goes, by its accumulator's
 * layout, to the FMA dot, mma.sync or wgmma. */
#include "codegen/internal.h"

/* The registers and layout a dot operand really has: a convert_layout to a dot-operand layout
 * is not materialized (see cg_lower_convert_layout), so this is its source's. */
const IrOp *cg_dot_operand_convert(Cg *c, ValueId v)
{
    const IrOp *def = ir_value(c->f, v)->def;
    return def && def->code == OP_CONVERT_LAYOUT ? def : NULL;
}

/* Where a dot may stage both operands in shared memory at once (A^T then B): its own scratch
 * when the shared-memory pass gave it one; else its operands' converts' regions when disjoint;
 * else offset 0 when the kernel's shared memory is large enough (every scratch region is live only
 * during its op, docs/layouts.md) and nothing is allocated at a nonzero offset below the end of
 * the staging area (scratch_floor: a buffer that outlives its op would live there). */
bool cg_dot_scratch(Cg *c, const IrOp *op, int *off_a, int *off_b)
{
    Type ta = ir_type(c->f, op->operands[0]), tb = ir_type(c->f, op->operands[1]);
    int64_t need_a = type_numel(ta) * dtype_bytes(ta.dtype);
    int64_t need_b = type_numel(tb) * dtype_bytes(tb.dtype);
    const IrOp *ca = cg_dot_operand_convert(c, op->operands[0]),
               *cb = cg_dot_operand_convert(c, op->operands[1]);
    int64_t at_b = (need_a + 15) / 16 * 16; /* B 16-byte aligned for its vector accesses */
    if (op->smem_bytes >= at_b + need_b && op->smem_offset >= 0) {
        *off_a = op->smem_offset;
        *off_b = op->smem_offset + (int)at_b;
    } else if (ca && cb && ca->smem_bytes >= need_a && cb->smem_bytes >= need_b &&
               (ca->smem_offset + need_a <= cb->smem_offset ||
                cb->smem_offset + need_b <= ca->smem_offset)) {
        *off_a = ca->smem_offset;
        *off_b = cb->smem_offset;
    } else if (c->f->shared_bytes >= at_b + need_b && c->scratch_floor >= at_b + need_b) {
        *off_a = 0;
        *off_b = (int)at_b;
    } else {
        return false;
    }
    return true;
}

static void find_scratch_floor(Cg *c, const IrRegion *r)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        if (op->smem_bytes > 0 && op->smem_offset > 0 && op->smem_offset < c->scratch_floor)
            c->scratch_floor = op->smem_offset;
        for (int k = 0; k < op->nregions; k++)
            find_scratch_floor(c, &op->regions[k]);
    }
}

/* Counts, per value, its uses and its uses as a dot's a or b operand. */
static void count_uses(Cg *c, const IrRegion *r, int32_t *uses, int32_t *dot_uses)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int k = 0; k < op->noperands; k++)
            if (op->operands[k] > 0) {
                uses[op->operands[k]]++;
                if (op->code == OP_DOT && k < 2)
                    dot_uses[op->operands[k]]++;
            }
        for (int k = 0; k < op->nregions; k++)
            count_uses(c, &op->regions[k], uses, dot_uses);
    }
}

static bool is_local_load(Cg *c, ValueId v)
{
    const IrOp *def = ir_value(c->f, v)->def;
    return def && def->code == OP_LOCAL_LOAD && dtype_bytes(ir_type(c->f, v).dtype) == 2;
}

/* Marks the converts feeding dots that can stage their operands themselves: those are not
 * materialized (a thread would otherwise hold whole rows of A times K in registers). Only when
 * every use of the convert is such a dot: anything else needs the real dot-operand registers. */
static void mark_lazy_operands(Cg *c, const IrRegion *r, const int32_t *uses,
                               const int32_t *dot_uses)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        int oa, ob;
        int acc = op->code == OP_DOT ? ir_value(c->f, op->results[0])->layout : 0;
        bool fma = acc > 0 && acc < c->f->nlayouts && c->f->layouts[acc].kind != LAYOUT_MMA;
        bool mma = acc > 0 && acc < c->f->nlayouts && c->f->layouts[acc].kind == LAYOUT_MMA;
        bool v3 = mma && c->f->layouts[acc].mma.version == 3;
        if (v3) /* wgmma stages from whatever registers each operand is in (cg_lower_dot_wgmma) */
            for (int k = 0; k < 2; k++) {
                ValueId v = op->operands[k];
                if (cg_dot_operand_convert(c, v) && uses[v] == dot_uses[v])
                    c->lazy_operand[v] = true;
            }
        /* mma.sync operands read from the pipeline's slots: each k16 step's ldmatrix right before
         * its mma instructions (cg_local_load_step), not the whole tile's fragments at once */
        if (mma && !v3 && is_local_load(c, op->operands[0]) && is_local_load(c, op->operands[1]) &&
            uses[op->operands[0]] == dot_uses[op->operands[0]] &&
            uses[op->operands[1]] == dot_uses[op->operands[1]])
            for (int k = 0; k < 2; k++)
                c->lazy_operand[op->operands[k]] = true;
        if (mma && !v3 && cg_mma_can_stage(c, op) &&
            uses[op->operands[0]] == dot_uses[op->operands[0]] &&
            uses[op->operands[1]] == dot_uses[op->operands[1]])
            for (int k = 0; k < 2; k++)
                c->lazy_operand[op->operands[k]] = true;
        if (fma && cg_dot_scratch(c, op, &oa, &ob))
            for (int k = 0; k < 2; k++) {
                ValueId v = op->operands[k];
                if (cg_dot_operand_convert(c, v) && uses[v] == dot_uses[v])
                    c->lazy_operand[v] = true;
            }
        for (int k = 0; k < op->nregions; k++)
            mark_lazy_operands(c, &op->regions[k], uses, dot_uses);
    }
}

/* Before any op is lowered (the marks must be known when the converts are reached): the scratch
 * floor, then per value its uses and dot uses, then the dot operands left in their source
 * registers. */
void cg_plan_dot_operands(Cg *c)
{
    const IrFunc *f = c->f;
    c->lazy_operand = arena_alloc(c->arena, sizeof(bool) * (size_t)(f->nvalues + 1));
    c->scratch_floor = f->shared_bytes;
    find_scratch_floor(c, &f->body);
    int32_t *uses = arena_alloc(c->arena, sizeof(int32_t) * (size_t)(f->nvalues + 1));
    int32_t *dot_uses = arena_alloc(c->arena, sizeof(int32_t) * (size_t)(f->nvalues + 1));
    count_uses(c, &f->body, uses, dot_uses);
    mark_lazy_operands(c, &f->body, uses, dot_uses);
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
