/* fuse_loops.c: two loops one after the other that continue one range and differ only in some
 * arithmetic become one loop (docs/passes.md "fuse_loops").
 *
 * Tutorial 06's causal attention runs the key blocks left of the diagonal in one loop and the
 * diagonal's block, masked, in a second loop over the next block of the same range. Each loop then
 * fills its own software pipeline: the second one's copies start only after the first has drained.
 * As one loop, the diagonal's K and V are copied by the first loop's last iterations, into the ring
 * they already use, and the ops that differ run under an `if` (measured in docs/performance.md,
 * "Causal attention's two loops as one").
 *
 * Requires nothing (it runs before layouts, on folded bounds). Takes two `for` loops A and B of a
 * region, B the next loop after A, when:
 * - both count an i32 by the same positive constant step and say the same in their attributes
 *   (num_stages, warp_specialize, flatten);
 * - B starts where A ends (lo_B equals hi_A as a polynomial in the values they are made of), A's
 *   span hi_A - lo_A is a multiple of the step, and neither span can be negative (a sum of
 *   program ids, ranges and constants with no negative coefficient): then the iterations of
 *   range(lo_A, hi_B, step) are A's followed by B's, their counters the same;
 * - the ops between them are pure, without regions, and read none of A's results; they move
 *   before A;
 * - both carry the same number of iter args of the same types, and each of A's results is read
 *   only as B's init of the same position, or not at all; where it is not B's init, that iter arg
 *   goes up by the same loop-invariant amount in both loops (A's yield `addptr` or `add` of it),
 *   and B's init is where A's would be at lo_B: init_B - init_A = (lo_B - lo_A) / step * that
 *   amount, as polynomials (a pointer tile advanced along K continues, as tutorial 06's K and V
 *   pointers do);
 * - their bodies are one list of ops at the start (the prefix) and one at the end (the suffix,
 *   the yield included), equal op for op with B's values read as A's, around a middle of pure
 *   ops (no memory, no effect, no dot, no region) that may differ; and the prefix and suffix
 *   hold a load (memory both loops read alike, which the fused loop's pipeline carries on).
 * Guarantees the two loops become
 *
 *     for iv in range(lo_A, hi_B, step):    # A's inits, A's attributes
 *         prefix
 *         if iv >= lo_B: B's middle, B's copy of the sunk ops; yield what the rest reads of them
 *         else:          A's middle, the sunk ops; yield the same of A's
 *         the rest of the suffix            # reading the if's results
 *
 * whose results stand for B's. The sunk ops are the suffix's leading pure ops (no memory, effect,
 * dot or region) that read the branches, up to the first that reads them and cannot go: each path
 * then runs the ops its loop ran, in one block (sink_ops). Elsewhere the loops stay as written; where their bodies match and
 * the rest does not hold, a remark (--remarks) says why. Three loops in a row fuse in turn. */
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

/* ---- integer polynomials over the values a scalar or a tile is made of ----------------------- */

#define POLY_TERMS  12
#define POLY_DEGREE 4
#define POLY_DEPTH  24
/* values one polynomial (or invariance question) looks into: a chain like m = m + m reads m twice
 * a step, so the paths down it double with each step; past this many the value is an atom */
#define POLY_NODES  4096

/* A value the polynomial does not look into, as the tile it is broadcast to: dim d of v is dim
 * map[d] of the tile the polynomial describes (through expand_dims and broadcast). Two atoms with
 * the same v and map are the same tile. */
typedef struct Atom {
    ValueId v;
    int8_t rank;
    int8_t map[TRIC_MAX_RANK];
} Atom;

/* c times the product of its atoms (sorted). */
typedef struct Term {
    int64_t c;
    int n;
    Atom a[POLY_DEGREE];
} Term;

typedef struct Poly {
    bool ok; /* false: too large to hold, or not an integer or pointer */
    int n;
    Term t[POLY_TERMS];
} Poly;

static int atom_cmp(const Atom *a, const Atom *b)
{
    if (a->v != b->v)
        return a->v < b->v ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return memcmp(a->map, b->map, (size_t)a->rank);
}

static bool same_atoms(const Term *a, const Term *b)
{
    if (a->n != b->n)
        return false;
    for (int i = 0; i < a->n; i++)
        if (atom_cmp(&a->a[i], &b->a[i]))
            return false;
    return true;
}

/* Adds sign * t to p, combining it with a term of the same atoms (a coefficient that would
 * overflow makes p unknown). */
static void poly_add_term(Poly *p, const Term *t, int64_t sign)
{
    int64_t c;
    if (!p->ok || !t->c)
        return;
    if (__builtin_mul_overflow(sign, t->c, &c)) {
        p->ok = false;
        return;
    }
    for (int i = 0; i < p->n; i++)
        if (same_atoms(&p->t[i], t)) {
            if (__builtin_add_overflow(p->t[i].c, c, &p->t[i].c))
                p->ok = false;
            return;
        }
    if (p->n == POLY_TERMS) {
        p->ok = false;
        return;
    }
    p->t[p->n] = *t;
    p->t[p->n++].c = c;
}

static void poly_const(Poly *p, int64_t c)
{
    *p = (Poly){.ok = true};
    Term t = {.c = c};
    poly_add_term(p, &t, 1);
}

/* p += sign * q */
static void poly_add(Poly *p, const Poly *q, int64_t sign)
{
    if (!q->ok)
        p->ok = false;
    for (int i = 0; i < q->n && p->ok; i++)
        poly_add_term(p, &q->t[i], sign);
}

/* out = p * q */
static void poly_mul(Poly *out, const Poly *p, const Poly *q)
{
    *out = (Poly){.ok = p->ok && q->ok};
    for (int i = 0; i < p->n && out->ok; i++)
        for (int j = 0; j < q->n && out->ok; j++) {
            const Term *a = &p->t[i], *b = &q->t[j];
            if (a->n + b->n > POLY_DEGREE) {
                out->ok = false;
                break;
            }
            Term t = {.n = 0};
            if (__builtin_mul_overflow(a->c, b->c, &t.c)) {
                out->ok = false;
                break;
            }
            /* merge the two sorted atom lists */
            int x = 0, y = 0;
            while (x < a->n || y < b->n)
                t.a[t.n++] = y == b->n || (x < a->n && atom_cmp(&a->a[x], &b->a[y]) <= 0)
                                 ? a->a[x++]
                                 : b->a[y++];
            poly_add_term(out, &t, 1);
        }
}

static bool poly_is_zero(const Poly *p)
{
    if (!p->ok)
        return false;
    for (int i = 0; i < p->n; i++)
        if (p->t[i].c)
            return false;
    return true;
}

static void poly_atom(Poly *p, ValueId v, int rank, const int8_t *map)
{
    *p = (Poly){.ok = true};
    Term t = {.c = 1, .n = 1};
    t.a[0].v = v;
    t.a[0].rank = (int8_t)rank;
    if (rank > 0) /* a scalar's map is NULL (below a splat) */
        memcpy(t.a[0].map, map, (size_t)rank);
    poly_add_term(p, &t, 1);
}

/* The polynomial of integer or pointer value v (a pointer in elements of its pointee), v's dim d
 * being dim map[d] of the tile described. It looks through add, sub, mul, addptr, splat,
 * broadcast, expand_dims, widening integer casts and multiple_of; anything else is an atom, and so
 * is a value POLY_DEPTH ops down or met once *budget values have been looked at. */
static void poly_of(const IrFunc *f, ValueId v, const int8_t *map, int depth, int *budget,
                    Poly *out)
{
    Type t = ir_type(f, v);
    if (!t.is_ptr && !dtype_is_int(t.dtype)) {
        *out = (Poly){.ok = false};
        return;
    }
    int64_t k;
    if (passes_const_int(f, v, &k)) {
        poly_const(out, k);
        return;
    }
    const IrOp *op = f->values[v].def;
    if (!op || depth >= POLY_DEPTH || --*budget < 0) {
        poly_atom(out, v, t.rank, map);
        return;
    }
    Poly a, b;
    switch (op->code) {
    case OP_ADD:
    case OP_SUB:
    case OP_ADDPTR:
    case OP_MUL:
        if (!type_same_shape(ir_type(f, op->operands[0]), t) ||
            !type_same_shape(ir_type(f, op->operands[1]), t))
            break;
        poly_of(f, op->operands[0], map, depth + 1, budget, &a);
        poly_of(f, op->operands[1], map, depth + 1, budget, &b);
        if (op->code == OP_MUL) {
            poly_mul(out, &a, &b);
        } else {
            *out = a;
            poly_add(out, &b, op->code == OP_SUB ? -1 : 1);
        }
        return;
    case OP_SPLAT: poly_of(f, op->operands[0], NULL, depth + 1, budget, out); return;
    case OP_BROADCAST: poly_of(f, op->operands[0], map, depth + 1, budget, out); return;
    case OP_EXPAND_DIMS: {
        int8_t inner[TRIC_MAX_RANK];
        for (int d = 0, n = 0; d < t.rank; d++)
            if (d != op->attr[0])
                inner[n++] = map[d];
        poly_of(f, op->operands[0], inner, depth + 1, budget, out);
        return;
    }
    case OP_CAST: {
        Type from = ir_type(f, op->operands[0]);
        if (!t.is_ptr && !from.is_ptr && dtype_is_int(from.dtype) &&
            dtype_bits(from.dtype) <= dtype_bits(t.dtype) && from.dtype != DT_I1) {
            poly_of(f, op->operands[0], map, depth + 1, budget, out);
            return;
        }
        break;
    }
    case OP_MULTIPLE_OF: poly_of(f, op->operands[0], map, depth + 1, budget, out); return;
    default: break;
    }
    poly_atom(out, v, t.rank, map);
}

/* The polynomial of a value as a tile of its own. */
static void poly_value(const IrFunc *f, ValueId v, Poly *out)
{
    int8_t map[TRIC_MAX_RANK];
    for (int d = 0; d < TRIC_MAX_RANK; d++)
        map[d] = (int8_t)d;
    int budget = POLY_NODES;
    poly_of(f, v, map, 0, &budget, out);
}

/* Whether p can be negative: some negative coefficient, or an atom not known >= 0 (program ids
 * and program counts, ranges from >= 0). */
static bool poly_nonnegative(const IrFunc *f, const Poly *p)
{
    if (!p->ok)
        return false;
    for (int i = 0; i < p->n; i++) {
        if (p->t[i].c < 0)
            return false;
        for (int j = 0; j < p->t[i].n; j++) {
            const IrOp *def = f->values[p->t[i].a[j].v].def;
            bool known = def && (def->code == OP_PROGRAM_ID || def->code == OP_NUM_PROGRAMS ||
                                 (def->code == OP_MAKE_RANGE && def->attr[0] >= 0));
            if (!known)
                return false;
        }
    }
    return true;
}

static bool poly_divisible(const Poly *p, int64_t step)
{
    if (!p->ok)
        return false;
    for (int i = 0; i < p->n; i++)
        if (p->t[i].c % step)
            return false;
    return true;
}

/* ---- the two bodies ------------------------------------------------------------------------- */

typedef struct ValuePair {
    ValueId a, b;
} ValuePair;

/* An operand of the suffix that reads different values in the two bodies: it reads result `pair`
 * of the if. */
typedef struct PairUse {
    IrOp *op; /* A's */
    int operand;
    int pair;
} PairUse;

typedef struct Fuse {
    IrFunc *f;
    const PassOptions *o;
    Diag *d;
    IrRegion *home;
    IrOp *A, *B;
    IrRegion *ra, *rb; /* their bodies */
    ValueId *map;      /* B's values read as A's (0: itself) */
    int nmap;
    int prefix, suffix; /* ops at the start and at the end (the yield included) */
    ValuePair *pairs;   /* the if's results: what A's middle gives (a) and B's (b) */
    int npairs, pairs_cap;
    PairUse *uses;
    int nuses, uses_cap;
    int64_t step;
} Fuse;

static int decline(Fuse *s, const char *why)
{
    if (s->o->remarks)
        diag_remark(s->d, s->B->loc, "loop not fused with the loop before it: %s", why);
    return 0;
}

static ValueId mapped(const Fuse *s, ValueId v) { return ir_mapped(s->map, s->nmap, v); }

/* Whether a and b do the same to their operands: code, attributes, result types; no regions. */
static bool same_op(const Fuse *s, const IrOp *a, const IrOp *b)
{
    if (a->code != b->code || a->noperands != b->noperands || a->nresults != b->nresults ||
        a->nregions || b->nregions || memcmp(a->attr, b->attr, sizeof a->attr) ||
        memcmp(&a->fattr, &b->fattr, sizeof a->fattr))
        return false;
    if ((a->sattr == NULL) != (b->sattr == NULL) || (a->sattr && strcmp(a->sattr, b->sattr)))
        return false;
    for (int k = 0; k < a->nresults; k++)
        if (!type_equal(ir_type(s->f, a->results[k]), ir_type(s->f, b->results[k])))
            return false;
    return true;
}

static void map_results(Fuse *s, const IrOp *a, const IrOp *b)
{
    for (int k = 0; k < b->nresults; k++)
        s->map[b->results[k]] = a->results[k];
}

static int match_prefix(Fuse *s)
{
    int n = 0;
    while (n < s->ra->nops - 1 && n < s->rb->nops - 1) {
        const IrOp *a = s->ra->ops[n], *b = s->rb->ops[n];
        bool same = same_op(s, a, b);
        for (int k = 0; same && k < a->noperands; k++)
            same = mapped(s, b->operands[k]) == a->operands[k];
        if (!same)
            break;
        map_results(s, a, b);
        n++;
    }
    return n;
}

/* Whether v is made by one of the last n ops of r. */
static bool made_in_last(const IrFunc *f, const IrRegion *r, ValueId v, int n)
{
    const IrOp *def = v > 0 ? f->values[v].def : NULL;
    if (!def)
        return false;
    int at = ir_region_index(r, def);
    return at >= r->nops - n;
}

static int add_pair(Fuse *s, ValueId x, ValueId y)
{
    for (int i = 0; i < s->npairs; i++)
        if (s->pairs[i].a == x && s->pairs[i].b == y)
            return i;
    ValuePair p = {x, y};
    ARENA_PUSH(s->f->arena, s->pairs, s->npairs, s->pairs_cap, p);
    return s->npairs - 1;
}

/* Whether the last n ops of both bodies are equal op for op, an operand reading different values
 * only where both come from before the suffix (then the if gives it: s->pair_*, s->uses). */
static bool match_suffix(Fuse *s, int n)
{
    s->npairs = s->nuses = 0;
    for (int i = s->prefix; i < s->rb->nops; i++)
        for (int k = 0; k < s->rb->ops[i]->nresults; k++)
            s->map[s->rb->ops[i]->results[k]] = 0;
    for (int i = 0; i < n; i++) {
        IrOp *a = s->ra->ops[s->ra->nops - n + i];
        const IrOp *b = s->rb->ops[s->rb->nops - n + i];
        if (!same_op(s, a, b))
            return false;
        for (int k = 0; k < a->noperands; k++) {
            ValueId x = a->operands[k], y = b->operands[k];
            if (mapped(s, y) == x)
                continue;
            if (made_in_last(s->f, s->ra, x, n) || made_in_last(s->f, s->rb, y, n))
                return false;
            PairUse u = {a, k, add_pair(s, x, mapped(s, y))};
            ARENA_PUSH(s->f->arena, s->uses, s->nuses, s->uses_cap, u);
        }
        map_results(s, a, b);
    }
    return true;
}

/* Whether the ops [from, to) of r may run under an if: pure, no dot, no region. */
static bool pure_middle(const IrRegion *r, int from, int to)
{
    for (int i = from; i < to; i++) {
        const IrOp *op = r->ops[i];
        if (op->nregions || op->code == OP_DOT ||
            op_has(op->code, OPT_EFFECT | OPT_READS_MEMORY | OPT_ALLOC | OPT_PIPELINE))
            return false;
    }
    return true;
}

static bool shares_a_load(const Fuse *s)
{
    for (int i = 0; i < s->ra->nops; i++)
        if ((i < s->prefix || i >= s->ra->nops - s->suffix) && s->ra->ops[i]->code == OP_LOAD)
            return true;
    return false;
}

/* The bodies' prefix, suffix and middles; false when they are not one loop's. */
static bool bodies_match(Fuse *s)
{
    s->prefix = match_prefix(s);
    int most = (s->ra->nops < s->rb->nops ? s->ra->nops : s->rb->nops) - s->prefix;
    for (s->suffix = most; s->suffix >= 1; s->suffix--)
        if (match_suffix(s, s->suffix))
            break;
    return s->suffix >= 1 && pure_middle(s->ra, s->prefix, s->ra->nops - s->suffix) &&
           pure_middle(s->rb, s->prefix, s->rb->nops - s->suffix) && shares_a_load(s);
}

/* ---- the loops ------------------------------------------------------------------------------ */

/* Whether v has one value in every iteration of A: made outside it, or by pure ops of its body
 * (without regions) from such values; not its counter or an iter arg. No, when that cannot be
 * shown within POLY_DEPTH ops down or *budget values. */
static bool invariant(const Fuse *s, ValueId v, int depth, int *budget)
{
    for (int i = 0; i < s->ra->nargs; i++)
        if (s->ra->args[i] == v)
            return false;
    const IrOp *def = s->f->values[v].def;
    if (!def || ir_region_index(s->ra, def) < 0)
        return true;
    if (depth >= POLY_DEPTH || --*budget < 0 || def->nregions ||
        op_has(def->code, OPT_EFFECT | OPT_READS_MEMORY | OPT_ALLOC | OPT_PIPELINE))
        return false;
    for (int k = 0; k < def->noperands; k++)
        if (!invariant(s, def->operands[k], depth + 1, budget))
            return false;
    return true;
}

/* Whether A's iter arg k comes out of A where B's starts: B's init is A's result, or A's yield
 * advances it by a loop-invariant amount and B's init is that many steps on from A's. */
static const char *carried_on(Fuse *s, int k, const Poly *span)
{
    IrFunc *f = s->f;
    IrOp *A = s->A, *B = s->B;
    if (B->operands[3 + k] == A->results[k])
        return NULL;
    const IrOp *yield = s->ra->ops[s->ra->nops - 1];
    for (int i = 0; i < s->nuses; i++)
        if (s->uses[i].op == yield && s->uses[i].operand == k)
            return "an iter arg the second loop starts anew goes on differently in the two loops";
    const IrOp *next = f->values[yield->operands[k]].def;
    ValueId arg = s->ra->args[1 + k];
    /* arg + amount (amount + arg too for an integer add) */
    int at = next && next->code == OP_ADD && next->operands[1] == arg ? 1 : 0;
    if (!next || ir_region_index(s->ra, next) < 0 ||
        (next->code != OP_ADDPTR && next->code != OP_ADD) || next->operands[at] != arg)
        return "an iter arg the second loop starts anew does not go up by a loop-invariant "
               "amount in the first";
    ValueId amount = next->operands[1 - at];
    int budget = POLY_NODES;
    if (!invariant(s, amount, 0, &budget))
        return "an iter arg the second loop starts anew goes up by an amount that changes in the "
               "loop";
    Poly init_a, init_b, step_amount, lhs, rhs, per;
    poly_value(f, A->operands[3 + k], &init_a);
    poly_value(f, B->operands[3 + k], &init_b);
    poly_value(f, amount, &step_amount);
    /* (init_B - init_A) * step == span * amount */
    lhs = init_b;
    poly_add(&lhs, &init_a, -1);
    Poly st;
    poly_const(&st, s->step);
    poly_mul(&per, &lhs, &st);
    poly_mul(&rhs, span, &step_amount);
    poly_add(&per, &rhs, -1);
    if (!poly_is_zero(&per))
        return "the second loop's start of an iter arg is not where the first loop leaves it "
               "(not provably)";
    return NULL;
}

static const char *loops_problem(Fuse *s)
{
    IrFunc *f = s->f;
    IrOp *A = s->A, *B = s->B;
    int64_t step_b;
    if (!passes_const_int(f, B->operands[2], &step_b) || step_b != s->step)
        return "the loops step differently";
    if (memcmp(A->attr, B->attr, sizeof A->attr))
        return "the loops' tl.range arguments differ";
    Poly lo_a, hi_a, lo_b, hi_b, span, span_b, gap;
    poly_value(f, A->operands[0], &lo_a);
    poly_value(f, A->operands[1], &hi_a);
    poly_value(f, B->operands[0], &lo_b);
    poly_value(f, B->operands[1], &hi_b);
    gap = lo_b;
    poly_add(&gap, &hi_a, -1);
    if (!poly_is_zero(&gap))
        return "the second loop does not start where the first ends (not provably)";
    span = hi_a;
    poly_add(&span, &lo_a, -1);
    span_b = hi_b;
    poly_add(&span_b, &lo_b, -1);
    if (!poly_nonnegative(f, &span) || !poly_nonnegative(f, &span_b))
        return "a loop's range may be empty with its end before its start";
    if (!poly_divisible(&span, s->step))
        return "the first loop's span may not be a multiple of the step";
    for (int k = 0; k < A->nresults; k++) {
        int reads = ir_region_use_count(s->home, A->results[k]);
        if (reads != (B->operands[3 + k] == A->results[k]))
            return "a result of the first loop is read elsewhere than as the second's init";
        const char *why = carried_on(s, k, &span);
        if (why)
            return why;
    }
    return NULL;
}

/* Every operand v of op (nested regions too) becomes s->map[v] where that is set. */
/* The pair operand k of A's suffix op reads (an index into s->pairs), or -1. */
static int pair_read(const Fuse *s, const IrOp *op, int k)
{
    for (int i = 0; i < s->nuses; i++)
        if (s->uses[i].op == op && s->uses[i].operand == k)
            return s->uses[i].pair;
    return -1;
}

/* Whether v has its value before the if in the fused body: made outside A, by the prefix, or one
 * of A's region args (its counter, an iter arg). */
static bool before_branch(const Fuse *s, ValueId v)
{
    const IrOp *def = v > 0 ? s->f->values[v].def : NULL;
    int at = def ? ir_region_index(s->ra, def) : -1;
    return at < s->prefix;
}

static bool in_list(IrOp *const *ops, int n, ValueId v)
{
    for (int i = 0; i < n; i++)
        if (ops[i]->results[0] == v)
            return true;
    return false;
}

/* The leading ops of A's suffix that also run in each branch: pure ops (one result; no memory,
 * effect, dot or region) reading what the branches give (or what a sunk op made) besides values
 * from before the if, up to the first op that reads the branches and cannot go (ops that read
 * neither are passed over and stay after the if). Each path then runs the ops its loop ran, in one
 * block, so a multiply in a branch and the subtraction after it still contract to an fma (tutorial
 * 06's qk * qk_scale - m). Returns how many; ops[] gets them. */
static int sink_ops(const Fuse *s, IrOp **ops)
{
    int n = 0;
    for (int i = s->ra->nops - s->suffix; i < s->ra->nops - 1; i++) {
        IrOp *op = s->ra->ops[i];
        bool goes = op->nresults == 1 && pure_middle(s->ra, i, i + 1);
        bool reads_branch = false;
        for (int k = 0; k < op->noperands; k++) {
            if (pair_read(s, op, k) >= 0 || in_list(ops, n, op->operands[k]))
                reads_branch = true;
            else if (!before_branch(s, op->operands[k]))
                goes = false;
        }
        if (goes && reads_branch)
            ops[n++] = op;
        else if (reads_branch)
            break;
    }
    return n;
}

/* What the if yields: else_val from A's branch, then_val from B's. */
typedef struct BranchOut {
    ValueId else_val, then_val;
} BranchOut;

static int branch_out(const Fuse *s, BranchOut **outs, int *n, int *cap, ValueId e, ValueId t)
{
    for (int i = 0; i < *n; i++)
        if ((*outs)[i].else_val == e && (*outs)[i].then_val == t)
            return i;
    BranchOut o = {e, t};
    ARENA_PUSH(s->f->arena, *outs, *n, *cap, o);
    return *n - 1;
}

/* The rewrite: the ops between the loops before A, the if in A's body (B's middle, then A's, each
 * followed by the sunk ops), A running to hi_B, B gone. */
static void fuse(Fuse *s, int at_a, int at_b)
{
    IrFunc *f = s->f;
    IrOp *A = s->A, *B = s->B;
    for (int i = at_a + 1; i < at_b; i++) {
        IrOp *op = s->home->ops[i];
        ir_region_remove(s->home, i);
        ir_region_insert(f, s->home, at_a++, op);
    }
    IrOp **sunk = arena_alloc(f->arena, sizeof *sunk * (size_t)(s->suffix + 1));
    int nsunk = sink_ops(s, sunk);
    /* B's copies of the sunk ops are made in its branch; clone.map[an A value] names them */
    IrCloneMap clone = ir_clone_map_new(f);
    /* what the ops after the if read of the branches, and where */
    BranchOut *outs = NULL;
    int nouts = 0, outs_cap = 0;
    typedef struct Rewrite {
        IrOp *op;
        int operand, out;
    } Rewrite;
    Rewrite *rewrites = NULL;
    int nrewrites = 0, rewrites_cap = 0;
    int first = s->ra->nops - s->suffix;
    int mid_a = first - s->prefix;
    int mid_b = s->rb->nops - s->suffix - s->prefix;
    SrcLoc loc = mid_b ? s->rb->ops[s->prefix]->loc : B->loc;
    IrOp **moved = arena_alloc(f->arena, sizeof *moved * (size_t)(mid_a + nsunk + 1));
    for (int i = 0; i < mid_a; i++)
        moved[i] = s->ra->ops[s->prefix + i];
    for (int i = 0; i < nsunk; i++)
        moved[mid_a + i] = sunk[i];
    for (int i = 0; i < mid_a + nsunk; i++)
        ir_region_remove(s->ra, ir_region_index(s->ra, moved[i]));
    IrBuilder b = {f, s->ra, s->prefix};
    ValueId in_b = passes_binary(&b, loc, OP_CMP_GE, s->ra->args[0], B->operands[0]);
    IrOp *branch = ir_build(&b, OP_IF, loc, &in_b, 1, NULL, 0, 2);
    IrBuilder then_b = {f, &branch->regions[0], -1};
    for (int i = 0; i < mid_b; i++) {
        IrOp *op = s->rb->ops[s->prefix + i];
        ir_rename_operands(op, s->map, s->nmap);
        ir_region_insert(f, &branch->regions[0], -1, op);
    }
    for (int i = 0; i < nsunk; i++) {
        IrOp *copy = ir_clone_op_mapped(&then_b, sunk[i], &clone);
        for (int k = 0; k < copy->noperands; k++) {
            int p = pair_read(s, sunk[i], k);
            if (p >= 0)
                copy->operands[k] = s->pairs[p].b;
        }
    }
    for (int i = 0; i < mid_a + nsunk; i++)
        ir_region_insert(f, &branch->regions[1], -1, moved[i]);
    /* the ops after the if read its results */
    for (int i = s->prefix + 2; i < s->ra->nops; i++) {
        IrOp *op = s->ra->ops[i];
        for (int k = 0; k < op->noperands; k++) {
            ValueId v = op->operands[k];
            int p = pair_read(s, op, k), out = -1;
            if (p >= 0)
                out = branch_out(s, &outs, &nouts, &outs_cap, s->pairs[p].a, s->pairs[p].b);
            else if (in_list(sunk, nsunk, v))
                out = branch_out(s, &outs, &nouts, &outs_cap, v, clone.map[v]);
            if (out >= 0) {
                Rewrite r = {op, k, out};
                ARENA_PUSH(f->arena, rewrites, nrewrites, rewrites_cap, r);
            }
        }
    }
    ValueId *then_vals = arena_alloc(f->arena, sizeof *then_vals * (size_t)(nouts + 1));
    ValueId *else_vals = arena_alloc(f->arena, sizeof *else_vals * (size_t)(nouts + 1));
    branch->results = arena_alloc(f->arena, sizeof *branch->results * (size_t)(nouts + 1));
    branch->nresults = nouts;
    for (int i = 0; i < nouts; i++) {
        const char *name = f->values[outs[i].else_val].name;
        branch->results[i] = ir_value_new(f, ir_type(f, outs[i].else_val), name);
        f->values[branch->results[i]].def = branch;
        f->values[branch->results[i]].index = i;
        else_vals[i] = outs[i].else_val;
        then_vals[i] = outs[i].then_val;
    }
    ir_build(&then_b, OP_YIELD, loc, then_vals, nouts, NULL, 0, 0);
    IrBuilder else_b = {f, &branch->regions[1], -1};
    ir_build(&else_b, OP_YIELD, loc, else_vals, nouts, NULL, 0, 0);
    for (int i = 0; i < nrewrites; i++)
        rewrites[i].op->operands[rewrites[i].operand] = branch->results[rewrites[i].out];
    A->operands[1] = B->operands[1];
    for (int k = 0; k < B->nresults; k++)
        ir_replace_all_uses(f, B->results[k], A->results[k]);
    ir_region_remove(s->home, ir_region_index(s->home, B));
}

/* Fuses home->ops[at] (a for) with the next loop after it when it can; returns whether it did. */
static bool try_fuse(IrFunc *f, const PassOptions *o, Diag *d, IrRegion *home, int at)
{
    IrOp *A = home->ops[at];
    int at_b = at + 1;
    while (at_b < home->nops && home->ops[at_b]->code != OP_FOR) {
        const IrOp *op = home->ops[at_b];
        if (op->nregions || op->code == OP_WHILE ||
            op_has(op->code, OPT_EFFECT | OPT_READS_MEMORY | OPT_ALLOC | OPT_PIPELINE))
            return false;
        for (int k = 0; k < A->nresults; k++)
            if (ir_op_uses(op, A->results[k]))
                return false;
        at_b++;
    }
    if (at_b == home->nops)
        return false;
    Fuse s = {.f = f, .o = o, .d = d, .home = home, .A = A, .B = home->ops[at_b]};
    s.ra = &A->regions[0], s.rb = &s.B->regions[0];
    if (!passes_i32_counter(f, A) || !passes_i32_counter(f, s.B) ||
        !passes_const_int(f, A->operands[2], &s.step) || s.step <= 0 ||
        A->nresults != s.B->nresults || s.ra->nargs != s.rb->nargs)
        return false;
    for (int k = 0; k < A->nresults; k++)
        if (!type_equal(ir_type(f, A->results[k]), ir_type(f, s.B->results[k])))
            return false;
    s.nmap = f->nvalues;
    s.map = arena_alloc(f->arena, sizeof *s.map * (size_t)s.nmap);
    memset(s.map, 0, sizeof *s.map * (size_t)s.nmap);
    for (int k = 0; k < s.rb->nargs; k++)
        s.map[s.rb->args[k]] = s.ra->args[k];
    if (!bodies_match(&s))
        return false;
    const char *why = loops_problem(&s);
    if (why)
        return decline(&s, why);
    if (o->remarks)
        diag_remark(d, s.B->loc,
                    "loop fused with the loop before it: one loop over both ranges, the ops where "
                    "the bodies differ (%d and %d) under an if",
                    s.ra->nops - s.prefix - s.suffix, s.rb->nops - s.prefix - s.suffix);
    fuse(&s, at, at_b);
    return true;
}

static void fuse_region(IrFunc *f, const PassOptions *o, Diag *d, IrRegion *r, bool *changed)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            fuse_region(f, o, d, &op->regions[k], changed);
        if (op->code != OP_FOR)
            continue;
        while (try_fuse(f, o, d, r, ir_region_index(r, op)))
            *changed = true;
    }
}

bool pass_fuse_loops(IrFunc *f, const PassOptions *o, Diag *d)
{
    if (o->no_fuse_loops)
        return true;
    bool changed = false;
    fuse_region(f, o, d, &f->body, &changed);
    if (!changed)
        return true;
    /* the second loop's inits and the ops between the loops that nothing reads now go */
    return pass_canonicalize(f, o, d) && pass_cse(f, o, d) && pass_dce(f, o, d);
}
