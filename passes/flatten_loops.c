/* flatten_loops.c: a loop nest whose outer loop asks tl.range(..., flatten=True) becomes one loop
 * over all its inner iterations (Triton's FuseNestedLoops, docs/passes.md "flatten_loops"), so
 * that the software pipeline, which works on one loop, runs a tile's first copies under the
 * previous tile's epilogue (tutorial 09's persistent matmul as Triton 3.6 writes it).
 *
 * Requires nothing (it runs before layouts). Takes a `for` with attr[2] set whose body holds one
 * `for` among its own ops (any ops before it, the prologue, and after it, the epilogue; no other
 * loop there), both with i32 induction variables and positive constant steps, and the inner
 * loop's bounds computable before the nest: values from outside it, or pure ops of the prologue
 * (no memory, no division by a value that may be zero) that are then moved before it. Guarantees
 * the nest
 *
 *     for i in range(lo_i, hi_i, step_i):      # outer iter args o
 *         prologue(i)
 *         for j in range(lo_j, hi_j, step_j):  # inner iter args a, from inits a0
 *             body(i, j, a)
 *         epilogue(i, a)                       # yields the next o
 *
 * becomes, with len_i and len_j the two trip counts,
 *
 *     if len_j > 0:                            # no version when len_j is a constant >= 1
 *         T = -1; i = lo_i - step_i
 *         for t in range(0, len_i * len_j):    # carries T, i, o, a, the prologue's outputs
 *             T = 0 if T == len_j - 1 else T + 1
 *             if T == 0: i += step_i; prologue(i); (a inits computed there)
 *             j = lo_j + T * step_j
 *             body(i, j, a)
 *             if T == len_j - 1: epilogue(i, a); (a inits from before the nest)
 *     else:
 *         the nest without its inner loop (a = a0)
 *
 * A dot's accumulator whose init is available before the nest (the zeros, moved there) is set
 * again in the epilogue's branch, so it reaches the yield through one `if`, the form the pipeline
 * keeps in flight (docs/passes.md "pipeline"); every other inner iter arg (a pointer advanced
 * along K) is set in the prologue's branch, so its chain stays pure and the copies run ahead on
 * it. The prologue's values that the body
 * or the epilogue read are carried, from `undef` until the first tile defines them. Elsewhere
 * the loop stays as written, with a remark under --remarks saying why. */
#include "passes/passes.h"

#include <string.h>

typedef struct Flat {
    IrFunc *f;
    const PassOptions *o;
    Diag *d;
    IrOp *outer, *inner;
    IrRegion *body; /* the outer loop's */
    int inner_at;   /* the inner loop's index among the body's ops */
    int64_t step_o, step_i;
    bool *in_outer; /* per value: defined inside the outer loop (its regions' args too) */
    bool *hoist;    /* per op of the body before the inner loop: moved before the nest */
    bool
        *epi_reset; /* per inner iter arg: set again in the epilogue's branch (a dot accumulator) */
    IrBuilder b;
    SrcLoc loc;
} Flat;

static int decline(Flat *s, const char *why)
{
    if (s->o->remarks)
        diag_remark(s->d, s->outer->loc, "tl.range(..., flatten=True) not applied: %s", why);
    return 1;
}

/* ---- what the nest must be ------------------------------------------------------------------- */

static void mark_inside(Flat *s, const IrRegion *r)
{
    for (int i = 0; i < r->nargs; i++)
        s->in_outer[r->args[i]] = true;
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int k = 0; k < op->nresults; k++)
            s->in_outer[op->results[k]] = true;
        for (int k = 0; k < op->nregions; k++)
            mark_inside(s, &op->regions[k]);
    }
}

/* Whether an op of the prologue may run before the nest, whatever the trip counts: pure, no
 * memory, no regions, and no integer division by a value that may be zero (UB in LLVM IR, where
 * the loop would not have run it). */
static bool hoistable_op(const IrFunc *f, const IrOp *op)
{
    if (op->nregions || op->nresults != 1 ||
        op_has(op->code, OPT_EFFECT | OPT_READS_MEMORY | OPT_ALLOC | OPT_PIPELINE))
        return false;
    if ((op->code == OP_DIV || op->code == OP_REM) &&
        !dtype_is_float(ir_type(f, op->results[0]).dtype)) {
        int64_t k;
        return passes_const_int(f, op->operands[1], &k) && k != 0;
    }
    return true;
}

/* Whether v can be had before the nest: defined outside it, or by prologue ops that may be moved
 * there (marked in s->hoist; the marks of a failed attempt are taken back by the caller). */
static bool available(Flat *s, ValueId v, int *marked, int *nmarked)
{
    if (v <= 0 || !s->in_outer[v])
        return true;
    const IrOp *def = s->f->values[v].def;
    int at = def ? ir_region_index(s->body, def) : -1;
    if (at < 0 || at >= s->inner_at)
        return false; /* a region arg, nested in another op, the inner loop or after it */
    if (s->hoist[at])
        return true;
    if (!hoistable_op(s->f, def))
        return false;
    for (int k = 0; k < def->noperands; k++)
        if (!available(s, def->operands[k], marked, nmarked))
            return false;
    s->hoist[at] = true;
    marked[(*nmarked)++] = at;
    return true;
}

static bool available_all(Flat *s, const ValueId *vs, int n)
{
    int *marked = arena_alloc(s->f->arena, sizeof *marked * (size_t)(s->inner_at + 1));
    int nmarked = 0;
    for (int i = 0; i < n; i++)
        if (!available(s, vs[i], marked, &nmarked)) {
            for (int k = 0; k < nmarked; k++)
                s->hoist[marked[k]] = false;
            return false;
        }
    return true;
}

static bool positive_step(const IrFunc *f, const IrOp *loop, int64_t *step)
{
    return passes_const_int(f, loop->operands[2], step) && *step > 0;
}

/* The prologue's values that the inner loop's body, the epilogue or the outer yield read. */
static int prologue_outputs(Flat *s, ValueId **out)
{
    IrRegion *B = s->body;
    IrRegion *IB = &s->inner->regions[0];
    /* the ops after the inner loop, the outer yield's included */
    IrRegion after = {.ops = B->ops + s->inner_at + 1, .nops = B->nops - s->inner_at - 1};
    int n = 0, cap = 0;
    *out = NULL;
    for (int i = 0; i < s->inner_at; i++) {
        if (s->hoist[i])
            continue;
        const IrOp *op = B->ops[i];
        for (int k = 0; k < op->nresults; k++) {
            ValueId v = op->results[k];
            if (ir_region_uses(IB, v) || ir_region_uses(&after, v))
                ARENA_PUSH(s->f->arena, *out, n, cap, v);
        }
    }
    return n;
}

/* Fills s (inner loop, steps, what moves before the nest); NULL when the nest can be flattened,
 * else why not. */
static const char *nest_problem(Flat *s)
{
    IrFunc *f = s->f;
    if (s->outer->attr[1])
        return "the loop asks warp_specialize=True too, which keeps the nest (its producer runs "
               "into the next tile)";
    s->body = &s->outer->regions[0];
    s->inner_at = -1;
    for (int i = 0; i < s->body->nops; i++) {
        OpCode c = s->body->ops[i]->code;
        if (c == OP_WHILE)
            return "its body holds a while loop";
        if (c != OP_FOR)
            continue;
        if (s->inner_at >= 0)
            return "its body holds more than one loop";
        s->inner_at = i;
    }
    if (s->inner_at < 0)
        return "its body holds no loop to flatten into it";
    s->inner = s->body->ops[s->inner_at];
    if (!passes_i32_counter(f, s->outer) || !passes_i32_counter(f, s->inner))
        return "an induction variable is not an i32";
    if (!positive_step(f, s->outer, &s->step_o) || !positive_step(f, s->inner, &s->step_i))
        return "a step is not a positive constant";
    s->in_outer = arena_alloc(f->arena, sizeof *s->in_outer * (size_t)f->nvalues);
    mark_inside(s, s->body);
    s->hoist = arena_alloc(f->arena, sizeof *s->hoist * (size_t)(s->inner_at + 1));
    if (!available_all(s, s->inner->operands, 3))
        return "the inner loop's bounds are computed in the outer loop from values that change "
               "there, memory, or a division";
    int ni = s->inner->nresults;
    s->epi_reset = arena_alloc(f->arena, sizeof *s->epi_reset * (size_t)(ni + 1));
    /* a dot's accumulator whose init is available before the nest is set again in the
     * epilogue's branch (the form the pipeline keeps in flight); every other inner iter arg in
     * the prologue's (an address advanced along K then stays a pure chain the copies can run
     * ahead on) */
    const IrRegion *ib = &s->inner->regions[0];
    const IrOp *yield = ib->nops ? ib->ops[ib->nops - 1] : NULL;
    for (int j = 0; j < ni; j++) {
        const IrOp *next = yield && j < yield->noperands ? f->values[yield->operands[j]].def : NULL;
        s->epi_reset[j] =
            next && next->code == OP_DOT && available_all(s, &s->inner->operands[3 + j], 1);
    }
    /* what the body and the epilogue read of the prologue without depending on the tile (a
     * make_range, a constant) goes before the nest rather than being carried */
    ValueId *outs;
    int nout = prologue_outputs(s, &outs);
    for (int k = 0; k < nout; k++)
        available_all(s, &outs[k], 1);
    return NULL;
}

/* ---- the rewrite ----------------------------------------------------------------------------- */

static ValueId k32(Flat *s, int64_t v) { return passes_const_i32(&s->b, s->loc, v); }

static ValueId op2(Flat *s, OpCode code, ValueId a, ValueId c)
{
    return passes_binary(&s->b, s->loc, code, a, c);
}

static void build_yield(Flat *s, const ValueId *vals, int n)
{
    ir_build(&s->b, OP_YIELD, s->loc, vals, n, NULL, 0, 0);
}

static ValueId undef(Flat *s, Type t)
{
    return ir_build(&s->b, OP_UNDEF, s->loc, NULL, 0, &t, 1, 0)->results[0];
}

/* Every operand v of op (nested regions too) becomes map[v] where that is set. */
/* A copy of the outer loop at s->b without its inner loop, whose results are then its inits (the
 * nest when the inner loop runs no iteration). */
static IrOp *copy_without_inner(Flat *s)
{
    IrFunc *f = s->f;
    IrCloneMap m = ir_clone_map_new(f);
    IrOp *copy = ir_clone_op_mapped(&s->b, s->outer, &m);
    copy->attr[2] = 0;
    copy->attr[0] = 1; /* no loads left to pipeline: no remark either */
    IrRegion *cb = &copy->regions[0];
    IrOp *ci = cb->ops[s->inner_at];
    for (int j = 0; j < ci->nresults; j++)
        ir_replace_all_uses(f, ci->results[j], ci->operands[3 + j]);
    ir_region_remove(cb, s->inner_at);
    return copy;
}

/* The fused loop as it is built. Its carried values, in order: T, i, the outer iter args (no),
 * the inner iter args (ni), the prologue's outputs (nout); arg[] are its region's (after t). */
typedef struct Fused {
    IrOp *loop;
    const ValueId *arg;
    Type *types;
    int no, ni, nout, ncar;
    ValueId *outs; /* the prologue's outputs */
    ValueId last;  /* len_j - 1 */
    ValueId T;     /* this iteration's step of its tile */
    /* operand renames: pro_map for the prologue's ops (the outer loop's induction variable is
     * its new value there), map for the body's and the epilogue's; values made by the rewrite
     * (nmap and up) are never renamed */
    ValueId *pro_map, *map;
    int nmap;
    IrOp *pro, *epi; /* the two branches */
    ValueId *next_a; /* the inner iter args' next values (the body's yield) */
} Fused;

/* The fused loop over len_o * len_j iterations at s->b, its inits and region args. */
static void build_loop(Flat *s, Fused *u, ValueId len_o, ValueId len_i)
{
    IrFunc *f = s->f;
    IrOp *O = s->outer, *I = s->inner;
    IrRegion *B = s->body, *IB = &I->regions[0];
    u->no = O->nresults, u->ni = I->nresults;
    u->nout = prologue_outputs(s, &u->outs);
    u->ncar = 2 + u->no + u->ni + u->nout;
    int no = u->no, ni = u->ni;
    ValueId *inits = arena_alloc(f->arena, sizeof *inits * (size_t)(3 + u->ncar));
    u->types = arena_alloc(f->arena, sizeof *u->types * (size_t)u->ncar);
    u->last = op2(s, OP_SUB, len_i, k32(s, 1));
    inits[0] = k32(s, 0);
    inits[1] = op2(s, OP_MUL, len_o, len_i);
    inits[2] = k32(s, 1);
    ValueId *init = inits + 3;
    init[0] = k32(s, -1);
    init[1] = op2(s, OP_SUB, O->operands[0], k32(s, s->step_o));
    for (int k = 0; k < no; k++)
        init[2 + k] = O->operands[3 + k];
    for (int j = 0; j < ni; j++) {
        ValueId a0 = I->operands[3 + j];
        init[2 + no + j] = s->epi_reset[j] ? a0 : undef(s, ir_type(f, a0));
    }
    for (int k = 0; k < u->nout; k++)
        init[2 + no + ni + k] = undef(s, ir_type(f, u->outs[k]));
    for (int k = 0; k < u->ncar; k++)
        u->types[k] = ir_type(f, init[k]);
    u->loop = ir_build(&s->b, OP_FOR, s->loc, inits, 3 + u->ncar, u->types, u->ncar, 1);
    u->loop->attr[0] = I->attr[0] ? I->attr[0] : O->attr[0];
    IrRegion *FB = &u->loop->regions[0];
    ir_region_add_arg(f, FB, type_scalar(DT_I32), "t");
    ir_region_add_arg(f, FB, u->types[0], "T");
    ir_region_add_arg(f, FB, u->types[1], f->values[B->args[0]].name);
    for (int k = 0; k < no; k++)
        ir_region_add_arg(f, FB, u->types[2 + k], f->values[B->args[1 + k]].name);
    for (int j = 0; j < ni; j++)
        ir_region_add_arg(f, FB, u->types[2 + no + j], f->values[IB->args[1 + j]].name);
    for (int k = 0; k < u->nout; k++)
        ir_region_add_arg(f, FB, u->types[2 + no + ni + k], f->values[u->outs[k]].name);
    u->arg = FB->args + 1;
    u->pro_map = arena_alloc(f->arena, sizeof *u->pro_map * (size_t)f->nvalues);
    u->map = arena_alloc(f->arena, sizeof *u->map * (size_t)f->nvalues);
    u->nmap = f->nvalues;
    for (int k = 0; k < no; k++)
        u->pro_map[B->args[1 + k]] = u->map[B->args[1 + k]] = u->arg[2 + k];
}

/* T = 0 if T == len_j - 1 else T + 1, then the prologue's branch (T == 0): i += step_i, the
 * prologue's ops, the inits it computes; the other branch carries their values on. */
static void build_prologue_branch(Flat *s, Fused *u)
{
    IrFunc *f = s->f;
    IrOp *I = s->inner;
    IrRegion *B = s->body;
    const ValueId *arg = u->arg;
    int no = u->no, ni = u->ni;
    Type i32 = type_scalar(DT_I32);
    s->b = (IrBuilder){f, &u->loop->regions[0], -1};
    ValueId rolls = op2(s, OP_CMP_EQ, arg[0], u->last);
    ValueId sel[3] = {rolls, k32(s, 0), op2(s, OP_ADD, arg[0], k32(s, 1))};
    u->T = ir_build(&s->b, OP_SELECT, s->loc, sel, 3, &i32, 1, 0)->results[0];
    int npro = 1 + u->nout + ni;
    Type *types = arena_alloc(f->arena, sizeof *types * (size_t)npro);
    ValueId *then_vals = arena_alloc(f->arena, sizeof *then_vals * (size_t)npro);
    ValueId *else_vals = arena_alloc(f->arena, sizeof *else_vals * (size_t)npro);
    int np = 0;
    types[np] = i32, else_vals[np++] = arg[1];
    for (int k = 0; k < u->nout; k++)
        types[np] = u->types[2 + no + ni + k], else_vals[np++] = arg[2 + no + ni + k];
    for (int j = 0; j < ni; j++)
        if (!s->epi_reset[j])
            types[np] = u->types[2 + no + j], else_vals[np++] = arg[2 + no + j];
    ValueId first = op2(s, OP_CMP_EQ, u->T, k32(s, 0));
    u->pro = ir_build(&s->b, OP_IF, s->loc, &first, 1, types, np, 2);
    IrBuilder fused_b = s->b;
    s->b = (IrBuilder){f, &u->pro->regions[0], -1};
    ValueId i_new = op2(s, OP_ADD, arg[1], k32(s, s->step_o));
    u->pro_map[B->args[0]] = i_new;
    for (int i = 0; i < s->inner_at; i++) {
        ir_rename_operands(B->ops[i], u->pro_map, u->nmap);
        ir_region_insert(f, &u->pro->regions[0], -1, B->ops[i]);
    }
    np = 0;
    then_vals[np++] = i_new;
    for (int k = 0; k < u->nout; k++)
        then_vals[np++] = u->outs[k];
    for (int j = 0; j < ni; j++)
        if (!s->epi_reset[j])
            then_vals[np++] = ir_mapped(u->pro_map, u->nmap, I->operands[3 + j]);
    s->b = (IrBuilder){f, &u->pro->regions[0], -1};
    build_yield(s, then_vals, np);
    s->b = (IrBuilder){f, &u->pro->regions[1], -1};
    build_yield(s, else_vals, np);
    s->b = fused_b;
}

/* The inner loop's body, once per fused iteration, reading what the prologue's branch gives
 * (the prologue's outputs, the tile's i, the inits it computes) and j = lo_j + T step_j. */
static void move_body(Flat *s, Fused *u)
{
    IrFunc *f = s->f;
    IrOp *I = s->inner;
    IrRegion *B = s->body, *IB = &I->regions[0];
    IrOp *Yi = IB->ops[IB->nops - 1];
    int np = 0;
    u->map[B->args[0]] = u->pro->results[np++];
    for (int k = 0; k < u->nout; k++)
        u->map[u->outs[k]] = u->pro->results[np++];
    for (int j = 0; j < u->ni; j++)
        u->map[IB->args[1 + j]] = s->epi_reset[j] ? u->arg[2 + u->no + j] : u->pro->results[np++];
    u->map[IB->args[0]] = op2(s, OP_ADD, I->operands[0], op2(s, OP_MUL, u->T, k32(s, s->step_i)));
    IrRegion *FB = &u->loop->regions[0];
    for (int i = 0; i < IB->nops - 1; i++) {
        ir_rename_operands(IB->ops[i], u->map, u->nmap);
        ir_region_insert(f, FB, -1, IB->ops[i]);
    }
    s->b = (IrBuilder){f, FB, -1};
    u->next_a = arena_alloc(f->arena, sizeof *u->next_a * (size_t)(u->ni + 1));
    for (int j = 0; j < u->ni; j++) {
        u->next_a[j] = ir_mapped(u->map, u->nmap, Yi->operands[j]);
        u->map[I->results[j]] = u->next_a[j]; /* what the epilogue reads of the inner loop */
    }
}

/* The epilogue's branch (T == len_j - 1): its ops, the outer loop's next iter args, and the
 * inner inits available before the nest set again; the other branch carries them on. */
static void build_epilogue_branch(Flat *s, Fused *u)
{
    IrFunc *f = s->f;
    IrOp *I = s->inner;
    IrRegion *B = s->body;
    IrOp *Yo = B->ops[B->nops - 1];
    int no = u->no, ni = u->ni;
    int nepi = no;
    for (int j = 0; j < ni; j++)
        nepi += s->epi_reset[j];
    Type *types = arena_alloc(f->arena, sizeof *types * (size_t)(nepi + 1));
    ValueId *then_vals = arena_alloc(f->arena, sizeof *then_vals * (size_t)(nepi + 1));
    ValueId *else_vals = arena_alloc(f->arena, sizeof *else_vals * (size_t)(nepi + 1));
    int ne = 0;
    for (int k = 0; k < no; k++)
        types[ne] = u->types[2 + k], else_vals[ne++] = u->arg[2 + k];
    for (int j = 0; j < ni; j++)
        if (s->epi_reset[j])
            types[ne] = u->types[2 + no + j], else_vals[ne++] = u->next_a[j];
    ValueId ends = op2(s, OP_CMP_EQ, u->T, u->last);
    u->epi = ir_build(&s->b, OP_IF, s->loc, &ends, 1, types, ne, 2);
    for (int i = s->inner_at + 1; i < B->nops - 1; i++) {
        ir_rename_operands(B->ops[i], u->map, u->nmap);
        ir_region_insert(f, &u->epi->regions[0], -1, B->ops[i]);
    }
    ne = 0;
    for (int k = 0; k < no; k++)
        then_vals[ne++] = ir_mapped(u->map, u->nmap, Yo->operands[k]);
    for (int j = 0; j < ni; j++)
        if (s->epi_reset[j])
            then_vals[ne++] = I->operands[3 + j];
    s->b = (IrBuilder){f, &u->epi->regions[0], -1};
    build_yield(s, then_vals, ne);
    s->b = (IrBuilder){f, &u->epi->regions[1], -1};
    build_yield(s, else_vals, ne);
}

/* Builds the fused loop at s->b, moving the nest's ops into it; returns it. */
static IrOp *build_fused(Flat *s, ValueId len_o, ValueId len_i)
{
    Fused u = {0};
    build_loop(s, &u, len_o, len_i);
    build_prologue_branch(s, &u);
    move_body(s, &u);
    build_epilogue_branch(s, &u);
    /* the fused loop's yield, in the order of its carried values */
    int no = u.no, ni = u.ni;
    ValueId *next = arena_alloc(s->f->arena, sizeof *next * (size_t)u.ncar);
    next[0] = u.T;
    next[1] = u.pro->results[0];
    for (int k = 0; k < no; k++)
        next[2 + k] = u.epi->results[k];
    for (int j = 0, r = no; j < ni; j++)
        next[2 + no + j] = s->epi_reset[j] ? u.epi->results[r++] : u.next_a[j];
    for (int k = 0; k < u.nout; k++)
        next[2 + no + ni + k] = u.pro->results[1 + k];
    s->b = (IrBuilder){s->f, &u.loop->regions[0], -1};
    build_yield(s, next, u.ncar);
    return u.loop;
}

/* Flattens the nest at home->ops[at] when it can; returns how many ops now stand in its place. */
static int flatten(IrFunc *f, const PassOptions *o, Diag *d, IrRegion *home, int at)
{
    Flat s = {.f = f, .o = o, .d = d, .outer = home->ops[at]};
    s.loc = s.outer->loc;
    const char *why = nest_problem(&s);
    if (why)
        return decline(&s, why);
    IrOp *O = s.outer;
    s.b = (IrBuilder){f, home, at};
    /* the inner loop's bounds and the inits available before the nest go there, in order */
    for (int i = 0, kept = 0; i < s.inner_at; i++) {
        IrOp *op = s.body->ops[kept];
        if (s.hoist[i]) {
            ir_region_remove(s.body, kept);
            ir_region_insert(f, home, s.b.pos++, op);
        } else {
            kept++;
        }
    }
    s.inner_at -= s.b.pos - at;
    memset(s.hoist, 0, sizeof *s.hoist * (size_t)(s.inner_at + 1));
    ValueId len_o = passes_trip_count(&s.b, s.loc, O, s.step_o);
    ValueId len_i = passes_trip_count(&s.b, s.loc, s.inner, s.step_i);
    int64_t lo, hi, known = 0;
    if (passes_const_int(f, s.inner->operands[0], &lo) &&
        passes_const_int(f, s.inner->operands[1], &hi))
        known = hi > lo ? (hi - lo + s.step_i - 1) / s.step_i : 0;
    IrOp *version = NULL;
    if (known < 1) {
        /* the nest without its inner loop when that runs no iteration */
        ValueId any = op2(&s, OP_CMP_GT, len_i, k32(&s, 0));
        Type *rt = arena_alloc(f->arena, sizeof *rt * (size_t)(O->nresults + 1));
        for (int k = 0; k < O->nresults; k++)
            rt[k] = ir_type(f, O->results[k]);
        version = ir_build(&s.b, OP_IF, s.loc, &any, 1, rt, O->nresults, 2);
        s.b = (IrBuilder){f, &version->regions[1], -1};
        IrOp *copy = copy_without_inner(&s);
        build_yield(&s, copy->results, copy->nresults);
        s.b = (IrBuilder){f, &version->regions[0], -1};
    }
    IrOp *F = build_fused(&s, len_o, len_i);
    const ValueId *results = F->results + 2;
    if (version) {
        s.b = (IrBuilder){f, &version->regions[0], -1};
        build_yield(&s, results, O->nresults);
        results = version->results;
    }
    for (int k = 0; k < O->nresults; k++)
        ir_replace_all_uses(f, O->results[k], results[k]);
    int pos = ir_region_index(home, O);
    ir_region_remove(home, pos);
    return pos - at;
}

static void flatten_region(IrFunc *f, const PassOptions *o, Diag *d, IrRegion *r, bool *changed)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            flatten_region(f, o, d, &op->regions[k], changed);
        if (op->code != OP_FOR || !op->attr[2])
            continue;
        int n = flatten(f, o, d, r, i);
        if (r->ops[i] != op) {
            *changed = true;
            i += n - 1;
        }
    }
}

bool pass_flatten_loops(IrFunc *f, const PassOptions *o, Diag *d)
{
    bool changed = false;
    flatten_region(f, o, d, &f->body, &changed);
    if (!changed)
        return true;
    /* the trip counts' arithmetic folded, the copies of constants merged */
    return pass_canonicalize(f, o, d) && pass_cse(f, o, d) && pass_dce(f, o, d);
}
