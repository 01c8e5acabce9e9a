/* heavy_first.c: the programs that run longest launch first.
 *
 * A kernel whose loops run more iterations as program_id(axis) grows (causal attention: the
 * blocks left of the diagonal, `range(0, start_m * BLOCK_M, BLOCK_N)`) launches its shortest
 * programs first and its longest last, since the GPU hands out blocks in the order of their
 * index: the last wave is then a few long programs on an otherwise idle GPU. Launching them in
 * the reverse order (longest processing time first, the classic list-scheduling rule) lets the
 * short ones fill in behind. Programs are independent and CUDA gives their order no meaning, so
 * renumbering them changes no result; the pass replaces program_id(axis) by
 * num_programs(axis) - 1 - program_id(axis).
 *
 * Requires: canonicalized scalar arithmetic (loop bounds folded to pid * constant). Guarantees,
 * for each axis where some loop's trip count grows with program_id(axis) and none shrinks or
 * depends on it otherwise: every use of program_id(axis) reads the reversed index instead; for
 * axis 0 in a kernel that reads program_id(1) too, both are read back from the launch index,
 * program_id(0) from the largest down and program_id(1) in groups of 8 (reverse_grouped).
 * A loop's trip count grows when its step is a positive constant and hi - lo never decreases
 * as program_id(axis) grows, and is not constant: affine in it with a positive coefficient
 * (through add, sub, mul by a constant, multiple_of), or monotone (a division by a constant, the
 * min or max of two values moving the same way, sums of those). Left as written: a kernel with
 * atomics or flag waits (programs that may wait for one another rely on the launch order), a
 * persistent one (stream_k's programs wait for later ones; persistent.c, which runs first, runs
 * a grid whose loops grow in pairs of a long and a short program instead), and everything with
 * PassOptions.no_heavy_first (`--no-heavy-first`). With --remarks it says what it did, or why
 * not where a loop grows. */
#include "passes/passes.h"

#include <string.h>

typedef struct Order {
    const IrFunc *f;
    bool *dep;           /* per value: computed from program_id(axis) */
    struct Trend *trend; /* per value: trend()'s answer, once known[v] */
    bool *known;
    int axis;
    int grows, shrinks, unknown;
    const IrOp *first_growing; /* for the remark */
} Order;

static bool mark(Order *s, ValueId v)
{
    if (!v || s->dep[v])
        return false;
    s->dep[v] = true;
    return true;
}

/* One sweep of the dependence on program_id(axis) through r: an op's results depend on it when an
 * operand does (or, for a loop or an if, a value its regions yield); a loop's counter when its
 * bounds do, an iter arg when its init or yielded value does. Returns whether anything changed. */
static bool sweep(Order *s, const IrRegion *r)
{
    bool changed = false;
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        bool any = op->code == OP_PROGRAM_ID && op->attr[0] == s->axis;
        for (int k = 0; k < op->noperands; k++)
            any |= op->operands[k] && s->dep[op->operands[k]];
        if (op->code == OP_FOR && op->nregions == 1) {
            /* the counter follows the bounds; an iter arg and its result its init and yielded
             * value, and the bounds too (they say how often the body runs) */
            const IrRegion *b = &op->regions[0];
            const IrOp *y = b->nops ? b->ops[b->nops - 1] : NULL;
            bool bounds =
                s->dep[op->operands[0]] || s->dep[op->operands[1]] || s->dep[op->operands[2]];
            for (int a = 0; a < b->nargs; a++) {
                bool d = bounds ||
                         (a > 0 && (s->dep[op->operands[2 + a]] ||
                                    (y && a - 1 < y->noperands && s->dep[y->operands[a - 1]])));
                if (d) {
                    changed |= mark(s, b->args[a]);
                    if (a > 0 && a - 1 < op->nresults)
                        changed |= mark(s, op->results[a - 1]);
                }
            }
        }
        for (int k = 0; k < op->nregions; k++) {
            const IrRegion *g = &op->regions[k];
            changed |= sweep(s, g);
            if (op->code == OP_FOR)
                continue;
            /* an if's or while's results: what its regions yield, or its condition */
            const IrOp *y = g->nops ? g->ops[g->nops - 1] : NULL;
            for (int j = 0; y && j < y->noperands; j++)
                any |= y->operands[j] && s->dep[y->operands[j]];
            for (int a = 0; any && a < g->nargs; a++)
                changed |= mark(s, g->args[a]);
        }
        if (op->code == OP_FOR)
            continue;
        for (int k = 0; any && k < op->nresults; k++)
            changed |= mark(s, op->results[k]);
    }
    return changed;
}

/* How a value moves with program_id(axis): exactly affine in it (coef, its other terms
 * independent of it), or only monotone (dir: 1 never decreasing, -1 never increasing), or
 * neither (dir UNKNOWN). */
enum { UNKNOWN = 2 };
typedef struct Trend {
    bool exact;
    int64_t coef;
    int dir;
} Trend;

static int sign(int64_t x) { return (x > 0) - (x < 0); }
static Trend affine(int64_t coef)
{
    return (Trend){.exact = true, .coef = coef, .dir = sign(coef)};
}
static Trend monotone(int dir) { return (Trend){.dir = dir}; }

/* The direction of a value made of two moving in directions da and db, each never against its
 * own: the one they share (or either's, when the other is constant), else UNKNOWN. */
static Trend same_way(int da, int db)
{
    if (da == UNKNOWN || db == UNKNOWN || (da && db && da != db))
        return monotone(UNKNOWN);
    return monotone(da ? da : db);
}

/* a + s b (s = 1 or -1); a coefficient past int64 leaves no direction either */
static Trend combine(Trend a, Trend b, int s)
{
    int64_t coef;
    if (a.exact && b.exact)
        return __builtin_mul_overflow(b.coef, (int64_t)s, &coef) ||
                       __builtin_add_overflow(a.coef, coef, &coef)
                   ? monotone(UNKNOWN)
                   : affine(coef);
    return same_way(a.dir, b.dir == UNKNOWN ? UNKNOWN : s * b.dir);
}

static Trend scaled(Trend a, int64_t c)
{
    int64_t coef;
    if (a.exact)
        return __builtin_mul_overflow(a.coef, c, &coef) ? monotone(UNKNOWN) : affine(coef);
    return monotone(a.dir == UNKNOWN ? UNKNOWN : a.dir * sign(c));
}

static Trend trend_of(const Order *s, ValueId v, int depth);

/* trend_of, each value's answer kept: a chain like m = m + m reads m twice a step, so a walk down
 * every path would double with each step. */
static Trend trend(const Order *s, ValueId v, int depth)
{
    if (!s->dep[v])
        return affine(0);
    if (!s->known[v]) {
        s->trend[v] = trend_of(s, v, depth);
        s->known[v] = true;
    }
    return s->trend[v];
}

static Trend trend_of(const Order *s, ValueId v, int depth)
{
    const IrOp *def = s->f->values[v].def;
    if (!def || depth > 32)
        return monotone(UNKNOWN);
    int64_t c;
    switch (def->code) {
    case OP_PROGRAM_ID: return affine(1);
    case OP_MULTIPLE_OF: return trend(s, def->operands[0], depth + 1);
    case OP_ADD:
    case OP_SUB:
        return combine(trend(s, def->operands[0], depth + 1), trend(s, def->operands[1], depth + 1),
                       def->code == OP_ADD ? 1 : -1);
    case OP_MUL:
        for (int k = 0; k < 2; k++)
            if (passes_const_int(s->f, def->operands[k], &c))
                return scaled(trend(s, def->operands[1 - k], depth + 1), c);
        return monotone(UNKNOWN);
    case OP_DIV: /* by a constant: truncation keeps the direction (floor of a monotone value) */
        if (passes_const_int(s->f, def->operands[1], &c) && c != 0) {
            Trend a = trend(s, def->operands[0], depth + 1);
            return monotone(a.dir == UNKNOWN ? UNKNOWN : a.dir * sign(c));
        }
        return monotone(UNKNOWN);
    case OP_MIN:
    case OP_MAX: /* two values moving the same way (or not at all) */
        return same_way(trend(s, def->operands[0], depth + 1).dir,
                        trend(s, def->operands[1], depth + 1).dir);
    default: return monotone(UNKNOWN);
    }
}

/* Counts r's loops (and their nested ones) whose trip count grows, shrinks, or depends on
 * program_id(axis) in a way the rule cannot tell. */
static void classify(Order *s, const IrRegion *r)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        if (op->code == OP_FOR) {
            int64_t step;
            ValueId l = op->operands[0], h = op->operands[1];
            if (s->dep[l] || s->dep[h] || s->dep[op->operands[2]]) {
                /* the trip count moves as hi - lo does when the step is a positive constant */
                Trend span = combine(trend(s, h, 0), trend(s, l, 0), -1);
                if (s->dep[op->operands[2]] || !passes_const_int(s->f, op->operands[2], &step) ||
                    step <= 0 || span.dir == UNKNOWN)
                    s->unknown++;
                else if (span.dir > 0) {
                    s->grows++;
                    if (!s->first_growing)
                        s->first_growing = op;
                } else if (span.dir < 0)
                    s->shrinks++;
            }
        } else if (op->code == OP_WHILE) {
            for (int k = 0; k < op->noperands; k++)
                if (s->dep[op->operands[k]]) {
                    s->unknown++;
                    break;
                }
        }
        for (int k = 0; k < op->nregions; k++)
            classify(s, &op->regions[k]);
    }
}

/* An op that lets programs wait for one another (an atomic, a flag wait) in r, or NULL. */
static const IrOp *inter_program(const IrRegion *r)
{
    static const OpCode waits[] = {OP_ATOMIC_RMW, OP_ATOMIC_CAS, OP_FLAG_WAIT};
    return ir_region_find(r, waits, 3);
}

/* Every program_id(axis) of r (and its regions) read as num_programs(axis) - 1 -
 * program_id(axis). */
static void reverse(IrFunc *f, IrRegion *r, int axis)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            reverse(f, &op->regions[k], axis);
        if (op->code != OP_PROGRAM_ID || op->attr[0] != axis)
            continue;
        IrBuilder b = {.func = f, .region = r, .pos = i + 1};
        Type t = ir_type(f, op->results[0]);
        IrOp *n = ir_build(&b, OP_NUM_PROGRAMS, op->loc, NULL, 0, &t, 1, 0);
        n->attr[0] = axis;
        ValueId last = ir_build_binary(&b, OP_SUB, op->loc, t, n->results[0],
                                       passes_const_i32(&b, op->loc, 1));
        ValueId rev = ir_build_binary(&b, OP_SUB, op->loc, t, last, op->results[0]);
        f->values[rev].name = f->values[op->results[0]].name;
        ir_replace_all_uses(f, op->results[0], rev);
        f->values[rev].def->operands[1] = op->results[0]; /* the one use that stays */
        i = b.pos - 1;
    }
}

/* The program_id(axis) ops of r and its regions, appended to ops (*n of them so far). */
static void find_ids(IrRegion *r, int axis, IrOp **ops, int *n, int cap)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        if (op->code == OP_PROGRAM_ID && op->attr[0] == axis && *n < cap)
            ops[(*n)++] = op;
        for (int k = 0; k < op->nregions; k++)
            find_ids(&op->regions[k], axis, ops, n, cap);
    }
}

/* Removes op, unused now, from the region of r (or of its regions) that holds it. */
static bool remove_op(IrRegion *r, const IrOp *op)
{
    for (int i = 0; i < r->nops; i++) {
        if (r->ops[i] == op) {
            ir_region_remove(r, i);
            return true;
        }
        for (int k = 0; k < r->ops[i]->nregions; k++)
            if (remove_op(&r->ops[i]->regions[k], op))
                return true;
    }
    return false;
}

#define HEAVY_GROUP 8 /* values of program_id(1) interleaved: measured, docs/passes.md */

/* Axis 0 grows and the kernel reads program_id(1) too (attention: its heads): the launch index
 * l = pid0 + gx pid1 (the order the GPU starts programs in) is read back with program_id(0) from
 * gx - 1 down, and program_id(1) in groups of HEAVY_GROUP values inside each: the longest
 * programs of every head of a group first, as seed 2's GROUP_SIZE_M groups its tiles, so the
 * programs running at once share the K and V of a few heads (a group's data stays in L2, where
 * interleaving every head does not). With g = min(HEAVY_GROUP, gy - first) the group's heads,
 * first = (l / (gx G)) G, r = l % (gx G): pid0 = gx - 1 - r / g, pid1 = first + r % g, one to
 * one on the grid. */
static void reverse_grouped(IrFunc *f, IrOp **ids0, int n0, IrOp **ids1, int n1)
{
    SrcLoc loc = ids0[0]->loc;
    Type t = ir_type(f, ids0[0]->results[0]);
    IrBuilder b = {.func = f, .region = &f->body, .pos = 0};
    ValueId id[2], n[2];
    for (int a = 0; a < 2; a++) {
        IrOp *p = ir_build(&b, OP_PROGRAM_ID, loc, NULL, 0, &t, 1, 0);
        IrOp *q = ir_build(&b, OP_NUM_PROGRAMS, loc, NULL, 0, &t, 1, 0);
        p->attr[0] = q->attr[0] = a;
        id[a] = p->results[0];
        n[a] = q->results[0];
    }
    ValueId group = passes_const_i32(&b, loc, HEAVY_GROUP);
    ValueId lin =
        passes_binary(&b, loc, OP_ADD, id[0], passes_binary(&b, loc, OP_MUL, n[0], id[1]));
    ValueId per = passes_binary(&b, loc, OP_MUL, n[0], group);
    ValueId first = passes_binary(&b, loc, OP_MUL, passes_binary(&b, loc, OP_DIV, lin, per), group);
    ValueId r = passes_binary(&b, loc, OP_REM, lin, per);
    ValueId heads =
        passes_binary(&b, loc, OP_MIN, passes_binary(&b, loc, OP_SUB, n[1], first), group);
    ValueId last = passes_binary(&b, loc, OP_SUB, n[0], passes_const_i32(&b, loc, 1));
    ValueId pid0 = passes_binary(&b, loc, OP_SUB, last, passes_binary(&b, loc, OP_DIV, r, heads));
    ValueId pid1 = passes_binary(&b, loc, OP_ADD, first, passes_binary(&b, loc, OP_REM, r, heads));
    f->values[pid0].name = f->values[ids0[0]->results[0]].name;
    f->values[pid1].name = f->values[ids1[0]->results[0]].name;
    for (int a = 0; a < 2; a++)
        for (int i = 0; i < (a ? n1 : n0); i++) {
            IrOp *op = a ? ids1[i] : ids0[i];
            ir_replace_all_uses(f, op->results[0], a ? pid1 : pid0);
            remove_op(&f->body, op);
        }
}

/* The loops of f classified by how their trip counts move with program_id(axis). */
static Order survey_axis(const IrFunc *f, int axis)
{
    Order s = {.f = f, .axis = axis};
    s.dep = arena_alloc(f->arena, sizeof(bool) * (size_t)(f->nvalues + 1));
    s.known = arena_alloc(f->arena, sizeof(bool) * (size_t)(f->nvalues + 1));
    s.trend = arena_alloc(f->arena, sizeof(Trend) * (size_t)(f->nvalues + 1));
    for (int round = 0; round < 64 && sweep(&s, &f->body); round++)
        ;
    classify(&s, &f->body);
    return s;
}

bool passes_programs_grow(const IrFunc *f, int axis)
{
    Order s = survey_axis(f, axis);
    return s.grows && !s.shrinks && !s.unknown && !inter_program(&f->body);
}

bool pass_heavy_first(IrFunc *f, const PassOptions *o, Diag *d)
{
    if (o->no_heavy_first || o->stream_k || f->persistent.on)
        return true;
    const IrOp *waits = inter_program(&f->body);
    for (int axis = 0; axis < 3; axis++) {
        Order s = survey_axis(f, axis);
        if (!s.grows)
            continue;
        if (waits || s.shrinks || s.unknown) {
            if (o->remarks)
                diag_remark(d, s.first_growing->loc,
                            "programs keep their launch order along axis %d: %s", axis,
                            waits ? "the kernel has atomics or flag waits (its programs may wait "
                                    "for one another)"
                                  : "another loop's trip count shrinks as the program id grows, "
                                    "or depends on it otherwise");
            continue;
        }
        IrOp *ids0[16], *ids1[16]; /* (CSE leaves one each; at the cap: the plain reversal) */
        int n0 = 0, n1 = 0;
        if (axis == 0) {
            find_ids(&f->body, 0, ids0, &n0, 16);
            find_ids(&f->body, 1, ids1, &n1, 16);
        }
        if (n0 > 0 && n1 > 0 && n0 < 16 && n1 < 16) {
            reverse_grouped(f, ids0, n0, ids1, n1);
            if (o->remarks)
                diag_remark(d, s.first_growing->loc,
                            "programs launch longest first along axis 0: this loop runs more "
                            "iterations as program_id(0) grows, so the launch runs program_id(0) "
                            "from the largest down, %d values of program_id(1) at a time",
                            HEAVY_GROUP);
            break; /* program_id(1) is read back from the launch index now */
        }
        reverse(f, &f->body, axis);
        if (o->remarks)
            diag_remark(d, s.first_growing->loc,
                        "programs launch longest first along axis %d: this loop runs more "
                        "iterations as program_id(%d) grows, so program_id(%d) reads "
                        "num_programs(%d) - 1 - program_id(%d)",
                        axis, axis, axis, axis, axis);
    }
    return true;
}
