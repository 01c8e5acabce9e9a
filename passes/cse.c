/* cse.c: common subexpression elimination over structured regions.
 *
 * Requires: uses dominated by their definitions (the verifier's rule), so a walk in program
 * order meets every definition before its uses.
 * Guarantees: of two pure ops with the same code, operands (in either order for commutative
 * ops), attributes (attr[], the bits of fattr, sattr, smem) and result types and layouts, the
 * later one is removed and its uses take
 * the earlier result, when the earlier one is in the same region before it or in an enclosing
 * region before the op that holds it (so it dominates). Never merged: loads (memory may change
 * between them), stores, asserts, terminators, and ops with regions. */
#include "passes/passes.h"

#include <string.h>

typedef struct Avail {
    IrOp *op;
    uint32_t hash;
} Avail;

typedef struct Cse {
    IrFunc *f;
    ValueId *repl; /* ValueId -> the value that replaces it (itself when none) */
    Avail *avail;  /* the pure ops visible here, innermost last */
    int navail, avail_cap;
} Cse;

static bool mergeable(const IrOp *op)
{
    if (op->nregions || op->nresults == 0)
        return false;
    /* Effects, terminators and regions never merge; nor reads of memory (loads, local_load,
     * wgmma: what they read may change between them) or buffers (each is its own memory), though
     * dce deletes an unused one of these. */
    return !op_has(op->code,
                   OPT_EFFECT | OPT_TERMINATOR | OPT_REGIONS | OPT_READS_MEMORY | OPT_ALLOC);
}

static uint32_t mix(uint32_t h, uint64_t x)
{
    h ^= (uint32_t)x + 0x9e3779b9u + (h << 6) + (h >> 2);
    h ^= (uint32_t)(x >> 32) + 0x9e3779b9u + (h << 6) + (h >> 2);
    return h;
}

/* a op b == b op a, bit for bit (IEEE addition and multiplication commute too; float min and
 * max do not: min(-0.0, +0.0) is whichever operand comes first). */
static bool commutative(const IrFunc *f, const IrOp *op)
{
    if (op->noperands != 2 || op->nresults != 1)
        return false;
    switch (op->code) {
    case OP_ADD:
    case OP_MUL:
    case OP_AND:
    case OP_OR:
    case OP_XOR:
    case OP_UMULHI:
    case OP_CMP_EQ:
    case OP_CMP_NE: return true;
    case OP_MIN:
    case OP_MAX: return !dtype_is_float(f->values[op->results[0]].type.dtype);
    default: return false;
    }
}

static uint32_t op_hash(const IrFunc *f, const IrOp *op)
{
    uint32_t h = mix(0, (uint64_t)op->code);
    if (commutative(f, op)) {
        ValueId a = op->operands[0], b = op->operands[1];
        h = mix(mix(h, (uint64_t)(a < b ? a : b)), (uint64_t)(a < b ? b : a));
    } else {
        for (int i = 0; i < op->noperands; i++)
            h = mix(h, (uint64_t)op->operands[i]);
    }
    for (int i = 0; i < TRIC_MAX_RANK; i++)
        h = mix(h, (uint64_t)op->attr[i]);
    uint64_t bits;
    memcpy(&bits, &op->fattr, sizeof bits);
    return mix(h, bits);
}

static bool same_op(const IrFunc *f, const IrOp *a, const IrOp *b)
{
    if (a->code != b->code || a->noperands != b->noperands || a->nresults != b->nresults ||
        memcmp(a->attr, b->attr, sizeof a->attr) != 0 ||
        memcmp(&a->fattr, &b->fattr, sizeof a->fattr) != 0 || /* -0.0 is not 0.0 */
        a->smem_offset != b->smem_offset || a->smem_bytes != b->smem_bytes ||
        !ir_scratch_equal(&a->scratch, &b->scratch))
        return false;
    if ((a->sattr == NULL) != (b->sattr == NULL) || (a->sattr && strcmp(a->sattr, b->sattr)))
        return false;
    bool swapped =
        commutative(f, a) && a->operands[0] == b->operands[1] && a->operands[1] == b->operands[0];
    for (int i = 0; i < a->noperands && !swapped; i++)
        if (a->operands[i] != b->operands[i])
            return false;
    for (int i = 0; i < a->nresults; i++) {
        const IrValue *x = &f->values[a->results[i]], *y = &f->values[b->results[i]];
        if (!type_equal(x->type, y->type) || x->layout != y->layout)
            return false;
    }
    return true;
}

static void cse_region(Cse *c, IrRegion *r)
{
    int scope = c->navail;
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int j = 0; j < op->noperands; j++)
            if (op->operands[j] > 0 && op->operands[j] < c->f->nvalues)
                op->operands[j] = c->repl[op->operands[j]];
        for (int j = 0; j < op->nregions; j++)
            cse_region(c, &op->regions[j]);
        if (!mergeable(op))
            continue;
        uint32_t h = op_hash(c->f, op);
        IrOp *same = NULL;
        for (int k = c->navail - 1; k >= 0 && !same; k--)
            if (c->avail[k].hash == h && same_op(c->f, c->avail[k].op, op))
                same = c->avail[k].op;
        if (same) {
            for (int j = 0; j < op->nresults; j++)
                c->repl[op->results[j]] = same->results[j];
            ir_region_remove(r, i);
            i--;
            continue;
        }
        Avail a = {.op = op, .hash = h};
        ARENA_PUSH(c->f->arena, c->avail, c->navail, c->avail_cap, a);
    }
    c->navail = scope; /* what this region defined is not visible after it */
}

bool pass_cse(IrFunc *f, const PassOptions *o, Diag *d)
{
    (void)o;
    (void)d;
    Cse c = {.f = f};
    c.repl = arena_alloc(f->arena, (size_t)(f->nvalues + 1) * sizeof *c.repl);
    for (int i = 0; i < f->nvalues; i++)
        c.repl[i] = i;
    cse_region(&c, &f->body);
    return true;
}
