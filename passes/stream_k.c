/* stream_k.c: a matmul-shaped kernel made persistent, its last round of tiles split along K
 * between programs (PassOptions.stream_k, `tric --stream-k`; docs/passes.md "stream_k"). The
 * Stream-K decomposition (Osama et al., PPoPP 2023) in its "data-parallel + two-tile Stream-K"
 * form.
 *
 * A grid of T tiles on a GPU of P SMs leaves its last round T % P tiles for P SMs: at 3072 with
 * 128x256 tiles, 288 tiles are 2.18 rounds of 132, so the third round runs 24 tiles while 108 SMs
 * idle. Here the runtime launches P programs (IrFunc.persistent); program p runs whole tiles p,
 * p + P, ..., then an equal share of the split tiles' K iterations (the last T % P tiles and one
 * round more, when the last round would leave at least 3/4 of the programs idle), in one
 * contiguous range. The range runs through each split tile's K iterations from last to first, so
 * the piece a share starts with begins at k = 0: the programs start their pieces together, at the
 * same K offset, reading the operand blocks their neighbours read (one request for several SMs, as
 * a round of whole tiles does) instead of 132 different K offsets at once. The piece a share ends
 * with, its last unit, holds the tile's last K iterations and owns the tile: the other pieces, each
 * the first unit of a later program's share, store their fp32 partials in the workspace and count
 * them on the tile's flag; the owner waits for the count (only ever on later programs, which do
 * not wait on it), adds the partials in program order and runs the epilogue.
 * The interpreter runs a persistent launch's programs from the last to the first, so every wait
 * there finds its count already.
 *
 * Requires nothing (it runs before layouts). Takes a function whose body is: ops with no effect
 * (loads allowed), then one `for` loop over a trip count that does not depend on program_id(0),
 * whose body has no effect, and whose iter args are one accumulating dots into a zero fp32 tile
 * (acc = dot(a, b, acc)) and inductions advanced by a fixed step (p = addptr(p, inc); x = x + inc;
 * each piece starts them k0 steps on), then any ops (the epilogue: its stores). program_id and
 * num_programs only along axis 0. Guarantees: the function is persistent (IrFunc.persistent,
 * workspace one partial tile a program); the body is
 *
 *     for u in range(0, units):            # units: this program's whole tiles and split pieces
 *         tile, k0, k1 = ...               # which tile, which of its K iterations
 *         <the ops before the loop that depend on program_id(0), which is now `tile'>
 *         acc = for k in range(lo + k0 step, lo + k1 step, step): ...   # the loop as it was
 *         if the range is the whole tile: <the ops after the loop>
 *         elif k1 == I: wait for the others; acc += their partials; <a copy of those ops>
 *         else: store the partial and count it
 *
 * with the ops before the loop that do not depend on program_id(0) left before it, and
 * num_programs(0) now tile_count (what the launch asked for). Elsewhere the function stays as it
 * is, with a warning saying why (the option asked for it). */
#include "passes/passes.h"

#include <string.h>

/* The last round is split when at most 1 / SPLIT_WHEN_IDLE of its programs would have a tile. */
#define SPLIT_WHEN_IDLE 4

typedef struct Sk {
    IrFunc *f;
    Diag *d;
    IrOp *loop; /* the K loop */
    int loop_at;
    int acc_arg; /* which of its iter args is the accumulator */
    IrOp **step; /* per iter arg, the op that advances an induction (NULL: the accumulator) */
    bool *dep;   /* per value: depends on program_id(0) */
    IrBuilder b;
    SrcLoc loc;
} Sk;

static bool decline(Sk *s, SrcLoc loc, const char *why)
{
    diag_warning(s->d, loc, "--stream-k not applied: %s", why);
    return true;
}

/* ---- what the function must be --------------------------------------------------------------- */

/* Whether op uses program_id or num_programs along another axis than 0, is a persistent
 * function's own op (tile_count, workspace), or has an effect where *ctx (a bool) asks. */
static bool blocks(const IrOp *op, const void *ctx)
{
    const bool *effects = ctx;
    if ((op->code == OP_PROGRAM_ID || op->code == OP_NUM_PROGRAMS) && op->attr[0] != 0)
        return true;
    if (op->code == OP_TILE_COUNT || op->code == OP_WORKSPACE)
        return true;
    return *effects && op_has(op->code, OPT_EFFECT);
}

/* The first op of r (nested regions included) that blocks, or NULL. */
static const IrOp *region_blocker(const IrRegion *r, bool effects)
{
    return ir_region_find_if(r, blocks, &effects);
}

/* Does op read a value marked in dep (as an operand, or inside its regions)? */
static bool reads_dep(const Sk *s, const IrOp *op)
{
    for (int i = 0; i < op->noperands; i++)
        if (op->operands[i] && s->dep[op->operands[i]])
            return true;
    for (int k = 0; k < op->nregions; k++)
        for (int i = 0; i < op->regions[k].nops; i++)
            if (reads_dep(s, op->regions[k].ops[i]))
                return true;
    return false;
}

/* Marks the values that depend on program_id(0), in program order over the ops before the loop
 * (what is after it depends on the tile anyway). */
static void mark_dependent(Sk *s)
{
    for (int i = 0; i < s->loop_at; i++) {
        IrOp *op = s->f->body.ops[i];
        bool d = op->code == OP_PROGRAM_ID || reads_dep(s, op);
        for (int r = 0; r < op->nresults; r++)
            s->dep[op->results[r]] = d;
    }
}

/* Whether v, a value of the loop's body, is computed from the body's region args (the iteration
 * or an iter arg), or by an op that reads memory or has regions; values defined outside the body
 * are neither. */
static bool varies(const Sk *s, ValueId v)
{
    const IrRegion *body = &s->loop->regions[0];
    for (int i = 0; i < body->nargs; i++)
        if (body->args[i] == v)
            return true;
    const IrOp *def = s->f->values[v].def;
    if (!def || ir_region_index(body, def) < 0)
        return false; /* defined before the loop (or nested elsewhere: not in the body's list) */
    if (def->nregions || op_has(def->code, OPT_READS_MEMORY | OPT_EFFECT))
        return true;
    for (int k = 0; k < def->noperands; k++)
        if (def->operands[k] && varies(s, def->operands[k]))
            return true;
    return false;
}

/* The loop's iter args: one accumulates dots into a zero fp32 rank-2 tile (yielded as
 * dot(a, b, arg), the arg read by that dot alone); every other one is an induction, yielded as
 * addptr(arg, inc) or add(arg, inc) (ints) with inc the same every iteration (tutorial 03's
 * `a_ptrs += BLOCK_SIZE_K * stride_ak`), and not read after the loop. Fills s->acc_arg and
 * s->step (per iter arg, the op that advances it; NULL for the accumulator). NULL when it holds,
 * else why not. */
static const char *iter_args_problem(Sk *s)
{
    const IrFunc *f = s->f;
    const IrOp *L = s->loop;
    const IrRegion *body = &L->regions[0];
    int n = body->nargs - 1;
    const IrOp *y = body->nops ? body->ops[body->nops - 1] : NULL;
    if (n < 1 || L->noperands != 3 + n || !y || y->code != OP_YIELD || y->noperands != n)
        return "the loop must carry the dot accumulator";
    s->step = arena_alloc(f->arena, sizeof *s->step * (size_t)n);
    s->acc_arg = -1;
    for (int j = 0; j < n; j++) {
        ValueId arg = body->args[1 + j];
        IrOp *def = f->values[y->operands[j]].def;
        s->step[j] = NULL;
        if (def && def->code == OP_DOT && def->operands[2] == arg) {
            if (s->acc_arg >= 0)
                return "the loop accumulates more than one dot";
            s->acc_arg = j;
            continue;
        }
        bool ptr_step = def && def->code == OP_ADDPTR && def->operands[0] == arg;
        bool int_step = def && def->code == OP_ADD && def->operands[0] == arg &&
                        !ir_type(f, arg).is_ptr && dtype_is_int(ir_type(f, arg).dtype);
        if (!(ptr_step || int_step) || varies(s, def->operands[1]))
            return "a value the loop carries is neither the dot accumulator nor advanced by the "
                   "same step every iteration";
        for (int i = s->loop_at + 1; i < f->body.nops; i++)
            if (ir_op_uses(f->body.ops[i], L->results[j]))
                return "a value the loop advances is read after the loop";
        s->step[j] = def;
    }
    if (s->acc_arg < 0)
        return "the loop must yield dot(a, b, accumulator)";
    ValueId init = L->operands[3 + s->acc_arg], arg = body->args[1 + s->acc_arg];
    Type t = ir_type(f, init);
    const IrOp *zero = f->values[init].def;
    if (t.rank != 2 || t.is_ptr || t.dtype != DT_F32 || !zero || zero->code != OP_CONST ||
        zero->fattr != 0.0)
        return "the loop's accumulator must start as an fp32 tile of zeros";
    const IrOp *dot = f->values[y->operands[s->acc_arg]].def;
    for (int i = 0; i < body->nops; i++) {
        const IrOp *op = body->ops[i];
        if (op != dot && op != y && ir_op_uses(op, arg))
            return "the accumulator is read by more than its dot";
    }
    if (dot->operands[0] == arg || dot->operands[1] == arg)
        return "the accumulator is read by more than its dot";
    return NULL;
}

/* Finds the loop and checks the function's shape; false (after a warning) when it does not fit. */
static bool fits(Sk *s)
{
    IrRegion *body = &s->f->body;
    s->loop_at = -1;
    for (int i = 0; i < body->nops; i++)
        if (body->ops[i]->code == OP_FOR) {
            if (s->loop_at >= 0)
                return !decline(s, body->ops[i]->loc,
                                "the kernel's body has more than one loop (one K loop is split)");
            s->loop_at = i;
        }
    if (s->loop_at < 0)
        return !decline(s, s->loc, "the kernel's body has no loop to split along K");
    s->loop = body->ops[s->loop_at];
    const IrOp *blocker = region_blocker(body, false);
    if (blocker)
        return !decline(s, blocker->loc,
                        "the kernel reads its program id or grid along an axis other than 0, "
                        "or is persistent already");
    for (int i = 0; i < s->loop_at; i++) {
        const IrOp *op = body->ops[i];
        IrRegion wrap = {.ops = (IrOp **)&op, .nops = 1};
        if ((blocker = region_blocker(&wrap, true)) != NULL)
            return !decline(s, blocker->loc,
                            "an op with an effect comes before the K loop (it would run again "
                            "for every piece of a tile)");
    }
    if ((blocker = region_blocker(&s->loop->regions[0], true)) != NULL)
        return !decline(s, blocker->loc, "the K loop has an op with an effect");
    const char *why = iter_args_problem(s);
    if (why)
        return !decline(s, s->loop->loc, why);
    int64_t step;
    if (!passes_const_int(s->f, s->loop->operands[2], &step) || step <= 0)
        return !decline(s, s->loop->loc, "the K loop's step must be a positive constant");
    mark_dependent(s);
    if (s->dep[s->loop->operands[0]] || s->dep[s->loop->operands[1]])
        return !decline(s, s->loop->loc, "the K loop's bounds depend on the program id");
    return true;
}

/* ---- builders -------------------------------------------------------------------------------- */

static ValueId k32(Sk *s, int64_t v) { return passes_const_i32(&s->b, s->loc, v); }

static ValueId op2(Sk *s, OpCode code, ValueId a, ValueId c)
{
    return passes_binary(&s->b, s->loc, code, a, c);
}

static ValueId select3(Sk *s, ValueId c, ValueId a, ValueId b)
{
    ValueId ops[3] = {c, a, b};
    Type t = ir_type(s->f, a);
    return ir_build(&s->b, OP_SELECT, s->loc, ops, 3, &t, 1, 0)->results[0];
}

static void build_yield(Sk *s, const ValueId *vals, int n)
{
    ir_build(&s->b, OP_YIELD, s->loc, vals, n, NULL, 0, 0);
}

/* (a + b - 1) / b, for a >= 0 and b > 0 */
static ValueId cdiv(Sk *s, ValueId a, ValueId b)
{
    return op2(s, OP_DIV, op2(s, OP_SUB, op2(s, OP_ADD, a, b), k32(s, 1)), b);
}

/* An if on c with the given result types; its two regions are filled by the caller. */
static IrOp *build_if(Sk *s, ValueId c, const Type *types, int n)
{
    return ir_build(&s->b, OP_IF, s->loc, &c, 1, types, n, 2);
}

/* A for loop over [lo, hi) step 1 with the given inits; its region's args are (iv, iters...). */
static IrOp *build_for(Sk *s, ValueId lo, ValueId hi, const ValueId *inits, int n, const char *iv)
{
    ValueId ops[8] = {lo, hi, k32(s, 1)};
    Type types[8];
    for (int i = 0; i < n; i++) {
        ops[3 + i] = inits[i];
        types[i] = ir_type(s->f, inits[i]);
    }
    IrOp *L = ir_build(&s->b, OP_FOR, s->loc, ops, 3 + n, types, n, 1);
    ir_region_add_arg(s->f, &L->regions[0], type_scalar(DT_I32), iv);
    for (int i = 0; i < n; i++)
        ir_region_add_arg(s->f, &L->regions[0], types[i], NULL);
    return L;
}

/* ---- the schedule ---------------------------------------------------------------------------- */

/* What every piece of a program's work needs (built once, before its loop over pieces). */
typedef struct Schedule {
    ValueId pid, programs, trips, trips_or_1;
    ValueId dp_tiles, full_rounds; /* the tiles run whole, and how many of them this program runs */
    ValueId per, begin, end;       /* the K iterations of the split tiles: each program's share */
    ValueId first_split, into;     /* the split tile begin falls in, and how far into it */
    ValueId units;                 /* this program's whole tiles and pieces of split ones */
} Schedule;

/* The program's share: the whole tiles pid + j P below T - S (full_rounds of them), then the K
 * iterations [begin, end) of the last S tiles (the split ones: below) taken as one range of S I
 * iterations, cut into P shares of per = cdiv(S I, P). */
static void build_schedule(Sk *s, Schedule *q)
{
    IrOp *pid =
        ir_build(&s->b, OP_PROGRAM_ID, s->loc, NULL, 0, (Type[]){type_scalar(DT_I32)}, 1, 0);
    IrOp *np =
        ir_build(&s->b, OP_NUM_PROGRAMS, s->loc, NULL, 0, (Type[]){type_scalar(DT_I32)}, 1, 0);
    IrOp *tc = ir_build(&s->b, OP_TILE_COUNT, s->loc, NULL, 0, (Type[]){type_scalar(DT_I32)}, 1, 0);
    q->pid = pid->results[0];
    q->programs = np->results[0];
    ValueId tiles = tc->results[0];
    int64_t step = 1;
    passes_const_int(s->f, s->loop->operands[2], &step);
    q->trips = passes_trip_count(&s->b, s->loc, s->loop, step);
    q->trips_or_1 = op2(s, OP_MAX, q->trips, k32(s, 1));
    /* the split tiles: the last T % P and, when there are whole rounds before them, one more
     * round (Stream-K's "two-tile" hybrid: each tile is then split between about two programs,
     * whose partials every program reduces about once, instead of among P / (T % P) programs,
     * whose last would read them all). Only when the last round would leave most programs idle
     * (T % P <= P / SPLIT_WHEN_IDLE): a split costs each program about a fifth of a tile (its
     * partial through L2, an extra unit; docs/performance.md "Stream-K"), more than a last round
     * that keeps most programs busy loses. None either when there is no K iteration. */
    ValueId rounds = op2(s, OP_DIV, tiles, q->programs);
    ValueId left = op2(s, OP_SUB, tiles, op2(s, OP_MUL, rounds, q->programs));
    ValueId last_round =
        select3(s, op2(s, OP_CMP_GT, rounds, k32(s, 0)), op2(s, OP_ADD, left, q->programs), left);
    ValueId idle = op2(s, OP_CMP_LE, op2(s, OP_MUL, left, k32(s, SPLIT_WHEN_IDLE)), q->programs);
    ValueId splits =
        op2(s, OP_AND, op2(s, OP_CMP_GT, q->trips, k32(s, 0)), op2(s, OP_CMP_GT, left, k32(s, 0)));
    splits = op2(s, OP_AND, splits, idle);
    last_round = select3(s, splits, last_round, k32(s, 0));
    q->dp_tiles = op2(s, OP_SUB, tiles, last_round);
    q->full_rounds = cdiv(s, op2(s, OP_SUB, q->dp_tiles, q->pid), q->programs);
    ValueId sk_iters = op2(s, OP_MUL, last_round, q->trips);
    q->per = cdiv(s, sk_iters, q->programs);
    q->begin = op2(s, OP_MIN, op2(s, OP_MUL, q->pid, q->per), sk_iters);
    q->end = op2(s, OP_MIN, op2(s, OP_ADD, q->begin, q->per), sk_iters);
    /* pieces of the split tiles: (end - 1) / I - begin / I + 1 when end > begin */
    q->first_split = op2(s, OP_DIV, q->begin, q->trips_or_1);
    q->into = op2(s, OP_SUB, q->begin, op2(s, OP_MUL, q->first_split, q->trips_or_1));
    ValueId last = op2(s, OP_DIV, op2(s, OP_SUB, q->end, k32(s, 1)), q->trips_or_1);
    ValueId pieces = op2(s, OP_ADD, op2(s, OP_SUB, last, q->first_split), k32(s, 1));
    pieces = select3(s, op2(s, OP_CMP_GT, q->end, q->begin), pieces, k32(s, 0));
    q->units = op2(s, OP_ADD, q->full_rounds, pieces);
}

/* One unit u of the program's work: its tile, the tile's index among the split ones (sk), and its
 * K iterations [k0, k1). */
typedef struct Unit {
    ValueId tile, sk, k0, k1;
} Unit;

static void build_unit(Sk *s, const Schedule *q, ValueId u, Unit *w)
{
    ValueId split = op2(s, OP_CMP_GE, u, q->full_rounds);
    ValueId j = op2(s, OP_SUB, u, q->full_rounds);
    w->sk = op2(s, OP_ADD, q->first_split, j);
    ValueId dp_tile = op2(s, OP_ADD, q->pid, op2(s, OP_MUL, u, q->programs));
    w->tile = select3(s, split, op2(s, OP_ADD, q->dp_tiles, w->sk), dp_tile);
    ValueId head = op2(s, OP_AND, split, op2(s, OP_CMP_EQ, j, k32(s, 0)));
    ValueId f0 = select3(s, head, q->into, k32(s, 0));
    ValueId left = op2(s, OP_SUB, q->end, op2(s, OP_MUL, w->sk, q->trips));
    ValueId f1 = select3(s, split, op2(s, OP_MIN, q->trips, left), q->trips);
    /* the share's range runs through a split tile's K iterations last to first, [f0, f1) of it
     * being [I - f1, I - f0): every share's first piece then starts at k = 0, together with the
     * others (docs/performance.md "Where stream-K's time goes") */
    w->k0 = select3(s, split, op2(s, OP_SUB, q->trips, f1), f0);
    w->k1 = select3(s, split, op2(s, OP_SUB, q->trips, f0), f1);
}

/* ---- the split tile's partials --------------------------------------------------------------- */

/* In the else branch of `whole`, for a piece of split tile sk whose programs are first..last
 * (the shares that meet the tile's iterations). The piece with the tile's last K iterations
 * (k1 = I), whose program runs it at the end of its share, owns the tile: it waits until the flag
 * counts the other pieces, adds their partials to its accumulator in program order (the same sum
 * whichever finished first) and clears the flag. Every other piece is the first unit of its
 * program's share, so it runs early: it stores its accumulator as the program's one partial, and
 * after a barrier thread 0 counts it on the flag with a release (bar.sync orders the CTA's stores
 * before it; PTX ISA 8.4). The owner then runs the epilogue (a copy of the ops after the loop,
 * reading the sum for acc). */
static void build_fixup(Sk *s, const Schedule *q, const Unit *w, ValueId acc, IrOp *const *epilogue,
                        int nepilogue)
{
    IrFunc *f = s->f;
    Type acc_t = ir_type(f, acc);
    IrOp *flags = ir_build(&s->b, OP_WORKSPACE, s->loc, NULL, 0, (Type[]){type_ptr(DT_I32)}, 1, 0);
    IrOp *scratch =
        ir_build(&s->b, OP_WORKSPACE, s->loc, NULL, 0, (Type[]){type_ptr(DT_F32)}, 1, 0);
    flags->attr[0] = 0;
    scratch->attr[0] = 1;
    ValueId from = op2(s, OP_MUL, w->sk, q->trips);
    ValueId first = op2(s, OP_DIV, from, q->per);
    ValueId last =
        op2(s, OP_DIV, op2(s, OP_SUB, op2(s, OP_ADD, from, q->trips), k32(s, 1)), q->per);
    ValueId flag =
        ir_build_binary(&s->b, OP_ADDPTR, s->loc, type_ptr(DT_I32), flags->results[0], w->sk);
    ValueId owner = op2(s, OP_CMP_EQ, w->k1, q->trips);
    IrOp *split = build_if(s, owner, NULL, 0);
    IrBuilder outer = s->b;
    /* the owner: wait for the others, add their partials, clear the flag */
    s->b = (IrBuilder){f, &split->regions[0], -1};
    ir_build(&s->b, OP_FLAG_WAIT, s->loc, (ValueId[]){flag, op2(s, OP_SUB, last, first)}, 2, NULL,
             0, 0);
    IrOp *sum = build_for(s, op2(s, OP_ADD, first, k32(s, 1)), op2(s, OP_ADD, last, k32(s, 1)),
                          &acc, 1, "c");
    IrBuilder then = s->b;
    s->b = (IrBuilder){f, &sum->regions[0], -1};
    ValueId c = sum->regions[0].args[0], running = sum->regions[0].args[1];
    ValueId added = ir_build(&s->b, OP_PARTIAL_ADD, s->loc,
                             (ValueId[]){scratch->results[0], c, running}, 3, &acc_t, 1, 0)
                        ->results[0];
    build_yield(s, &added, 1);
    s->b = then;
    ir_build(&s->b, OP_STORE, s->loc, (ValueId[]){flag, k32(s, 0), 0}, 3, NULL, 0, 0);
    IrCloneMap m = ir_clone_map_new(f);
    m.map[acc] = sum->results[0];
    for (int i = 0; i < nepilogue; i++)
        ir_clone_op_mapped(&s->b, epilogue[i], &m);
    build_yield(s, NULL, 0);
    /* another piece: store the partial, then count it */
    s->b = (IrBuilder){f, &split->regions[1], -1};
    ir_build(&s->b, OP_PARTIAL_STORE, s->loc, (ValueId[]){scratch->results[0], q->pid, acc}, 3,
             NULL, 0, 0);
    ir_build(&s->b, OP_BARRIER, s->loc, NULL, 0, NULL, 0, 0);
    IrOp *count = ir_build(&s->b, OP_ATOMIC_RMW, s->loc, (ValueId[]){flag, k32(s, 1)}, 2,
                           (Type[]){type_scalar(DT_I32)}, 1, 0);
    count->attr[0] = ATOMIC_ADD;
    count->attr[1] = MEM_SEM_RELEASE;
    count->attr[2] = MEM_SCOPE_GPU;
    build_yield(s, NULL, 0);
    s->b = outer;
    build_yield(s, NULL, 0);
}

/* ---- the rewrite ----------------------------------------------------------------------------- */

/* Replaces every program_id(0) of region r (nested ones too) but the schedule's by tile,
 * removing the op, and makes every num_programs(0) but the schedule's a tile_count. */
static void replace_program_id(IrFunc *f, IrRegion *r, ValueId tile, const Schedule *q)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        bool schedule = op->nresults && (op->results[0] == q->pid || op->results[0] == q->programs);
        if (op->code == OP_PROGRAM_ID && !schedule) {
            ir_replace_all_uses(f, op->results[0], tile);
            ir_region_remove(r, i--);
            continue;
        }
        if (op->code == OP_NUM_PROGRAMS && !schedule)
            op->code = OP_TILE_COUNT; /* what the launch asked for (axis 0, checked) */
        for (int k = 0; k < op->nregions; k++)
            replace_program_id(f, &op->regions[k], tile, q);
    }
}

/* Copies before the loop (at s->b) the ops of the loop's body that compute v (none vary, see
 * varies), in body order; the copy of v. */
static ValueId copy_before_loop(Sk *s, ValueId v, const IrCloneMap *m)
{
    const IrRegion *body = &s->loop->regions[0];
    const IrOp *def = s->f->values[v].def;
    if (!def || ir_region_index(body, def) < 0)
        return v;
    if (v < m->nmap && m->map[v])
        return m->map[v];
    for (int k = 0; k < def->noperands; k++)
        if (def->operands[k])
            copy_before_loop(s, def->operands[k], m);
    ir_clone_op_mapped(&s->b, def, m);
    return m->map[v];
}

/* A unit starts k0 iterations into the loop: each induction starts k0 steps on (init + k0 inc). */
static void advance_inductions(Sk *s, ValueId k0)
{
    IrFunc *f = s->f;
    int n = s->loop->regions[0].nargs - 1;
    IrCloneMap m = ir_clone_map_new(f);
    for (int j = 0; j < n; j++) {
        const IrOp *st = s->step[j];
        if (!st)
            continue;
        ValueId inc = copy_before_loop(s, st->operands[1], &m);
        Type it = ir_type(f, inc);
        ValueId times = k0;
        if (it.dtype != DT_I32)
            times = ir_build_unary(&s->b, OP_CAST, s->loc, type_scalar(it.dtype), times);
        if (it.rank > 0)
            times = ir_build_unary(&s->b, OP_SPLAT, s->loc, it, times);
        ValueId delta = ir_build_binary(&s->b, OP_MUL, s->loc, it, inc, times);
        ValueId init = s->loop->operands[3 + j];
        s->loop->operands[3 + j] =
            ir_build_binary(&s->b, st->code, s->loc, ir_type(f, init), init, delta);
    }
}

static void rewrite(Sk *s)
{
    IrFunc *f = s->f;
    IrRegion *body = &f->body;
    int nold = body->nops;
    IrOp **old = arena_alloc(f->arena, sizeof *old * (size_t)(nold > 0 ? nold : 1));
    memcpy(old, body->ops, sizeof *old * (size_t)nold);
    body->nops = 0;
    s->b = (IrBuilder){f, body, -1};
    /* what does not depend on the program stays before the loop over pieces */
    for (int i = 0; i < s->loop_at; i++)
        if (!old[i]->nresults || !s->dep[old[i]->results[0]])
            ir_region_insert(f, body, -1, old[i]);
    Schedule q;
    build_schedule(s, &q);
    IrOp *units = build_for(s, k32(s, 0), q.units, NULL, 0, "u");
    /* tl.range(..., warp_specialize=True) on the K loop asks for a producer: it now runs the
     * loop over units, the K loop nested in it (passes/warp_specialize.c's persistent form), so
     * the producer copies the next unit's first blocks while the consumers finish this one */
    units->attr[1] = s->loop->attr[1];
    s->loop->attr[1] = 0;
    s->b = (IrBuilder){f, &units->regions[0], -1};
    Unit w;
    build_unit(s, &q, units->regions[0].args[0], &w);
    for (int i = 0; i < s->loop_at; i++)
        if (old[i]->nresults && s->dep[old[i]->results[0]])
            ir_region_insert(f, &units->regions[0], -1, old[i]);
    /* the K loop over the unit's iterations */
    int64_t step = 1;
    passes_const_int(f, s->loop->operands[2], &step);
    ValueId lo = s->loop->operands[0], st = k32(s, step);
    s->loop->operands[0] = op2(s, OP_ADD, lo, op2(s, OP_MUL, w.k0, st));
    s->loop->operands[1] = op2(s, OP_ADD, lo, op2(s, OP_MUL, w.k1, st));
    advance_inductions(s, w.k0);
    ir_region_insert(f, &units->regions[0], -1, s->loop);
    ValueId acc = s->loop->results[s->acc_arg];
    Type acc_t = ir_type(f, acc);
    ValueId whole =
        op2(s, OP_AND, op2(s, OP_CMP_EQ, w.k0, k32(s, 0)), op2(s, OP_CMP_EQ, w.k1, q.trips));
    /* the epilogue, once per tile: in the branch of a whole tile (the ops after the loop, moved),
     * and a copy in the branch of a split tile's owner. Two copies, not one after an if that
     * yields the accumulator: that merge copied its registers on every unit. */
    IrOp *done = build_if(s, whole, NULL, 0);
    IrBuilder unit_b = s->b;
    s->b = (IrBuilder){f, &done->regions[1], -1};
    build_fixup(s, &q, &w, acc, old + s->loop_at + 1, nold - s->loop_at - 1);
    for (int i = s->loop_at + 1; i < nold; i++)
        ir_region_insert(f, &done->regions[0], -1, old[i]);
    s->b = (IrBuilder){f, &done->regions[0], -1};
    build_yield(s, NULL, 0);
    s->b = unit_b;
    build_yield(s, NULL, 0);
    replace_program_id(f, body, w.tile, &q);
    f->persistent.on = true;
    f->persistent.workspace_bytes = 4 * (int64_t)acc_t.shape[0] * acc_t.shape[1];
}

bool pass_stream_k(IrFunc *f, const PassOptions *o, Diag *d)
{
    if (!o->stream_k || f->persistent.on)
        return true;
    Sk s = {.f = f, .d = d};
    s.loc = f->body.nops ? f->body.ops[0]->loc : (SrcLoc){0};
    s.dep = arena_alloc(f->arena, sizeof *s.dep * (size_t)(f->nvalues + 1));
    if (!fits(&s))
        return true;
    s.loc = s.loop->loc;
    rewrite(&s);
    /* the schedule's arithmetic folded and shared as the kernel's own was */
    return pass_canonicalize(f, o, d) && pass_cse(f, o, d) && pass_dce(f, o, d);
}
