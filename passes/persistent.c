/* persistent.c: a grid made persistent (PassOptions.persistent, `tric --persistent`;
 * docs/passes.md "persistent").
 *
 * A grid runs each tile as a program of its own: every program fills its pipeline from nothing,
 * and its epilogue runs while nothing of the next tile is on its way. Made persistent, the
 * runtime launches as many programs as the GPU holds at once (IrFunc.persistent) and each walks
 * the grid's tiles tile = program_id(0), + num_programs(0), ...: the loop over tiles that the
 * later passes take where a kernel is written that way (tutorial 09, examples/
 * attention_persistent.tri): warp_specialize's producer runs into the next tile while the
 * consumers store this one, prefetch_tiles fetches the next tile's once-a-tile loads into L2 and
 * registers (L1 without a producer), pipeline_loops keeps such a load's tile in a slot of its own.
 *
 * Requires nothing (it runs before layouts and heavy_first, which leaves a persistent kernel
 * alone, and after stream_k, which takes a matmul first when asked). Takes a function not yet
 * persistent that reads program_id and has no loop starting at program_id (a kernel persistent
 * as written).
 * Guarantees: the function is persistent over 1 + its largest program_id / num_programs axis
 * (IrFunc.persistent: axes, from_grid; no workspace), and its body is
 *
 *     <the body's pure scalar ops that read no program_id or num_programs, in order>
 *     for tile in range(program_id(0), tile_count(0) tile_count(1) tile_count(2),
 *                       num_programs(0)) {num_stages = 1}:
 *         pid0 = tile % tile_count(0); pid1 = tile / tile_count(0) % tile_count(1);
 *         pid2 = tile / (tile_count(0) tile_count(1))
 *         <the rest of the body, program_id(a) read as pid_a, num_programs(a) as tile_count(a)>
 *
 * (the factors and divisions of the axes it does not take left out). Each tile runs the body
 * once, as its program did; the tiles go in launch order (x fastest), as the GPU starts a
 * grid's programs, except where a loop's trip count grows with program_id(0) (heavy_first's
 * rule, passes_programs_grow: causal attention). Fixed turns over such tiles leave the programs
 * uneven (a program's tiles all long or all short), so there each program runs them in pairs of
 * one row, program_id(0) = i and tile_count(0) - 1 - i (paired_position, pid0_of_position). The
 * loop over tiles is not pipelined itself (num_stages 1: its loads run once a tile).
 * When the body's one loop asks warp_specialize and holds no loop, the ask moves to the loop
 * over tiles (warp_specialize's persistent form, the K loop nested in it); where that pass may
 * choose a producer itself, the loop over tiles is offered to its choice (ws_ask). Elsewhere
 * the function stays as it is, with a warning saying why (the option asked for it). */
#include "passes/passes.h"

#include <string.h>

typedef struct Ps {
    IrFunc *f;
    Diag *d;
    IrBuilder b;
    SrcLoc loc;
    int axes;             /* 1 + the largest axis of a program_id or num_programs */
    bool reads_pid;       /* some program_id */
    const IrOp *own_loop; /* a loop starting at program_id: persistent as written */
    bool paired;          /* the tiles go in pairs along axis 0 (passes_programs_grow) */
} Ps;

static bool decline(Ps *s, const char *why)
{
    diag_warning(s->d, s->loc, "--persistent not applied: %s", why);
    return true;
}

/* What the grid's programs read of it: axes, reads_pid, own_loop. */
static bool survey(Ps *s, const IrRegion *r)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        if (op->code == OP_PROGRAM_ID || op->code == OP_NUM_PROGRAMS) {
            s->axes = op->attr[0] + 1 > s->axes ? (int)op->attr[0] + 1 : s->axes;
            s->reads_pid |= op->code == OP_PROGRAM_ID;
        }
        if (op->code == OP_TILE_COUNT || op->code == OP_WORKSPACE)
            return false;
        if (op->code == OP_FOR && !s->own_loop) {
            const IrOp *lo = s->f->values[op->operands[0]].def;
            if (lo && lo->code == OP_PROGRAM_ID)
                s->own_loop = op;
        }
        for (int k = 0; k < op->nregions; k++)
            if (!survey(s, &op->regions[k]))
                return false;
    }
    return true;
}

/* An op that may stay before the loop over tiles: pure, scalar, no region. */
static bool hoistable(const IrFunc *f, const IrOp *op)
{
    if (op->nregions || op->code == OP_PROGRAM_ID || op->code == OP_NUM_PROGRAMS ||
        op_has(op->code, OPT_EFFECT) || op_has(op->code, OPT_READS_MEMORY) ||
        op_has(op->code, OPT_ALLOC) || op_has(op->code, OPT_TERMINATOR))
        return false;
    for (int k = 0; k < op->nresults; k++)
        if (ir_type(f, op->results[k]).rank > 0)
            return false;
    return true;
}

static ValueId grid_op(Ps *s, OpCode code, int axis)
{
    IrOp *op = ir_build(&s->b, code, s->loc, NULL, 0, (Type[]){type_scalar(DT_I32)}, 1, 0);
    op->attr[0] = axis;
    return op->results[0];
}

/* program_id(a) of region r (nested ones too) read as pid[a], num_programs(a) as tile_count(a). */
static void read_tiles(IrFunc *f, IrRegion *r, const ValueId *pid)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        if (op->code == OP_PROGRAM_ID) {
            ir_replace_all_uses(f, op->results[0], pid[op->attr[0]]);
            ir_region_remove(r, i--);
            continue;
        }
        if (op->code == OP_NUM_PROGRAMS)
            op->code = OP_TILE_COUNT;
        for (int k = 0; k < op->nregions; k++)
            read_tiles(f, &op->regions[k], pid);
    }
}

/* The body's one loop, when it holds no loop itself (a K loop); NULL else. */
static IrOp *only_flat_loop(const IrRegion *body)
{
    const IrOp *only = passes_only_loop(body);
    return only && !passes_holds_loop(only) ? (IrOp *)only : NULL;
}

/* Whether flat (the body's one loop) is attention's: two dots an iteration, on sm_90a with two
 * consumer warpgroups or more, where warp_specialize may give it a producer. */
static bool attention_loop(const IrFunc *f, const PassOptions *o, const IrOp *flat)
{
    int dots = 0;
    for (int k = 0; flat && k < flat->regions[0].nops; k++)
        dots += flat->regions[0].ops[k]->code == OP_DOT;
    return dots >= 2 && o->arch_specific && o->sm == 90 && f->num_warps >= 8 &&
           f->num_warps % 4 == 0;
}

/* Whether v is computed from a program_id, through any chain of operands. Each value is looked
 * at once: a walk down every path would double with each step of a chain like m = m * m. */
static bool reads_program_id(const IrFunc *f, ValueId v)
{
    bool *seen = arena_alloc(f->arena, sizeof *seen * (size_t)(f->nvalues + 1));
    ValueId *todo = arena_alloc(f->arena, sizeof *todo * (size_t)(f->nvalues + 1));
    int n = 0;
    if (v > 0 && v < f->nvalues)
        seen[todo[n++] = v] = true;
    while (n > 0) {
        const IrOp *def = f->values[todo[--n]].def;
        if (def && def->code == OP_PROGRAM_ID)
            return true;
        for (int k = 0; def && k < def->noperands; k++) {
            ValueId o = def->operands[k];
            if (o > 0 && o < f->nvalues && !seen[o])
                seen[todo[n++] = o] = true;
        }
    }
    return false;
}

/* Whether the programs of the grid run flat (the body's one loop) for different trip counts in
 * a way the paired order does not even out: a persistent walk's fixed turns would leave its
 * programs uneven, where the grid's heavy_first order lets short programs fill in behind long
 * ones (docs/performance.md, "Causal attention as one loop"). Trip counts that grow with
 * program_id(0) (causal attention's loop up to the diagonal) are paired (paired_position). */
static bool uneven_programs(const IrFunc *f, const IrOp *flat)
{
    return (reads_program_id(f, flat->operands[0]) || reads_program_id(f, flat->operands[1])) &&
           !passes_programs_grow(f, 0);
}

/* What the loop over tiles says to warp_specialize (ir.h WS_*): the body's one loop's ask (to
 * be moved to it: the producer then runs the loop over tiles, the K loop nested in it); else,
 * where that pass may choose a producer for attention's loop, an offer: it decides once the K
 * loop is pipelined, and pipeline_loops leaves q a load meanwhile (the producer's form has no
 * slot for it). */
static int ws_ask(const IrFunc *f, const PassOptions *o, const IrOp *flat)
{
    if (!flat)
        return WS_NOT_ASKED;
    if (flat->attr[1] == WS_ASKED)
        return WS_ASKED;
    return !o->no_auto_ws && attention_loop(f, o, flat) ? WS_OFFERED : WS_NOT_ASKED;
}

static ValueId select_i32(Ps *s, ValueId cond, ValueId then_value, ValueId else_value)
{
    Type i32 = type_scalar(DT_I32);
    ValueId ops[3] = {cond, then_value, else_value};
    return ir_build(&s->b, OP_SELECT, s->loc, ops, 3, &i32, 1, 0)->results[0];
}

/* Where the loop's tile t lies in the paired order, when the programs' loops grow with
 * program_id(0) (causal attention). A program runs its tiles t and t + P (P = num_programs(0))
 * of each block of 2P one after the other, so those two get the positions 2q and 2q + 1 of the
 * paired order, whose pairs even out (pid0_of_position). In a block [base, base + 2P) of
 * L <= 2P tiles the first a = max(L - P, 0) programs run two tiles: u < a (u = t - base) takes
 * position base + 2u, and the same program's second tile, u = P + i, base + 2i + 1; a program
 * a <= u < P runs one tile there and takes the positions left, base + a + u. One to one on
 * [0, tiles). */
static ValueId paired_position(Ps *s, ValueId t, ValueId tiles, ValueId programs)
{
    IrBuilder *b = &s->b;
    SrcLoc l = s->loc;
    ValueId two = passes_const_i32(b, l, 2), one = passes_const_i32(b, l, 1);
    ValueId block = passes_binary(b, l, OP_MUL, programs, two);
    ValueId base = passes_binary(b, l, OP_MUL, passes_binary(b, l, OP_DIV, t, block), block);
    ValueId u = passes_binary(b, l, OP_SUB, t, base);
    ValueId len = passes_binary(b, l, OP_MIN, block, passes_binary(b, l, OP_SUB, tiles, base));
    ValueId a = passes_binary(b, l, OP_MAX, passes_binary(b, l, OP_SUB, len, programs),
                              passes_const_i32(b, l, 0));
    ValueId first = passes_binary(b, l, OP_MUL, u, two);
    ValueId alone = passes_binary(b, l, OP_ADD, a, u);
    ValueId second = passes_binary(
        b, l, OP_ADD, passes_binary(b, l, OP_MUL, passes_binary(b, l, OP_SUB, u, programs), two),
        one);
    ValueId in_first_turn = select_i32(s, passes_binary(b, l, OP_CMP_LT, u, a), first, alone);
    ValueId off = select_i32(s, passes_binary(b, l, OP_CMP_GE, u, programs), second, in_first_turn);
    return passes_binary(b, l, OP_ADD, base, off);
}

/* program_id(0) of position j of a row of the paired order (count values): from both ends
 * inwards, 0, count - 1, 1, count - 2, ..., so positions 2q and 2q + 1 hold a short program and a
 * long one of the same row (the same head in attention: its K and V read by both), and their
 * loops' trip counts add up to about the same in every pair. */
static ValueId pid0_of_position(Ps *s, ValueId j, ValueId count)
{
    IrBuilder *b = &s->b;
    SrcLoc l = s->loc;
    ValueId two = passes_const_i32(b, l, 2);
    ValueId half = passes_binary(b, l, OP_DIV, j, two);
    ValueId odd = passes_binary(b, l, OP_CMP_NE, passes_binary(b, l, OP_REM, j, two),
                                passes_const_i32(b, l, 0));
    ValueId from_end = passes_binary(
        b, l, OP_SUB, passes_binary(b, l, OP_SUB, count, passes_const_i32(b, l, 1)), half);
    return select_i32(s, odd, from_end, half);
}

static void rewrite(Ps *s, const PassOptions *o)
{
    IrFunc *f = s->f;
    IrRegion *body = &f->body;
    int nold = body->nops;
    IrOp **old = arena_alloc(f->arena, sizeof *old * (size_t)(nold > 0 ? nold : 1));
    memcpy(old, body->ops, sizeof *old * (size_t)nold);
    IrOp *flat = only_flat_loop(body);
    /* what stays before the loop over tiles: hoistable ops of hoisted operands */
    bool *inside = arena_alloc(f->arena, sizeof *inside * (size_t)(f->nvalues + 1));
    memset(inside, 0, sizeof *inside * (size_t)(f->nvalues + 1));
    bool *moved = arena_alloc(f->arena, sizeof *moved * (size_t)(nold > 0 ? nold : 1));
    body->nops = 0;
    for (int i = 0; i < nold; i++) {
        const IrOp *op = old[i];
        bool in = !hoistable(f, op);
        for (int k = 0; k < op->noperands && !in; k++)
            in = op->operands[k] > 0 && inside[op->operands[k]];
        for (int k = 0; k < op->nresults; k++)
            inside[op->results[k]] = in;
        moved[i] = in;
        if (!in)
            ir_region_insert(f, body, -1, old[i]);
    }
    s->b = (IrBuilder){f, body, -1};
    ValueId count[3] = {0}, tiles = 0;
    for (int a = 0; a < s->axes; a++) {
        count[a] = grid_op(s, OP_TILE_COUNT, a);
        tiles = a ? passes_binary(&s->b, s->loc, OP_MUL, tiles, count[a]) : count[a];
    }
    ValueId ops[3] = {grid_op(s, OP_PROGRAM_ID, 0), tiles, grid_op(s, OP_NUM_PROGRAMS, 0)};
    IrOp *loop = ir_build(&s->b, OP_FOR, s->loc, ops, 3, NULL, 0, 1);
    loop->attr[0] = 1; /* num_stages: its loads run once a tile */
    loop->attr[1] = ws_ask(f, o, flat);
    if (loop->attr[1] == WS_ASKED)
        flat->attr[1] = WS_NOT_ASKED;
    ValueId tile = ir_region_add_arg(f, &loop->regions[0], type_scalar(DT_I32), "tile");
    s->b = (IrBuilder){f, &loop->regions[0], -1};
    ValueId rest = s->paired ? paired_position(s, tile, tiles, ops[2]) : tile;
    ValueId pid[3] = {rest, 0, 0};
    for (int a = 0; a + 1 < s->axes; a++) {
        pid[a] = passes_binary(&s->b, s->loc, OP_REM, rest, count[a]);
        rest = passes_binary(&s->b, s->loc, OP_DIV, rest, count[a]);
        pid[a + 1] = rest; /* the last axis's needs no remainder: tile < the product */
    }
    if (s->paired)
        pid[0] = pid0_of_position(s, pid[0], count[0]);
    for (int i = 0; i < nold; i++)
        if (moved[i])
            ir_region_insert(f, &loop->regions[0], -1, old[i]);
    ir_build(&s->b, OP_YIELD, s->loc, NULL, 0, NULL, 0, 0);
    read_tiles(f, &loop->regions[0], pid);
    f->persistent.on = true;
    f->persistent.workspace_bytes = 0;
    f->persistent.axes = s->axes;
    f->persistent.from_grid = true;
}

bool pass_persistent(IrFunc *f, const PassOptions *o, Diag *d)
{
    bool asked = o->persistent;
    if (!asked && o->no_auto_persistent)
        return true;
    Ps s = {.f = f, .d = d, .axes = 1};
    s.loc = f->body.nops ? f->body.ops[0]->loc : (SrcLoc){0};
    const char *why = NULL;
    if (f->persistent.on)
        why = "the kernel is persistent already (--stream-k made it so)";
    else if (!survey(&s, &f->body))
        why = "the kernel already reads a persistent launch's tile_count";
    else if (!s.reads_pid)
        why = "the kernel reads no program_id: its programs share no tiles";
    else if (s.own_loop) {
        s.loc = s.own_loop->loc;
        why = "a loop starts at program_id: the kernel shares its tiles among its programs "
              "itself (persistent as written)";
    } else if (!asked) {
        /* unasked: only attention's loop, with a producer asked or offered (where it measured
         * a win); the driver compiles the kernel as written again if it gets none */
        const IrOp *flat = only_flat_loop(&f->body);
        if (!attention_loop(f, o, flat) || ws_ask(f, o, flat) == WS_NOT_ASKED ||
            uneven_programs(f, flat))
            return true;
    }
    if (why)
        return asked ? decline(&s, why) : true;
    s.paired = passes_programs_grow(f, 0);
    if (s.paired && o->remarks)
        diag_remark(d, s.loc,
                    "made persistent with its tiles in pairs: a loop's trip count grows with "
                    "program_id(0), so each program runs program_id(0) = i and num_programs(0) - "
                    "1 - i of the same row one after the other, and the programs' pairs add up "
                    "to about the same");
    rewrite(&s, o);
    /* the tiles' arithmetic folded and shared as the kernel's own was */
    return pass_canonicalize(f, o, d) && pass_cse(f, o, d) && pass_dce(f, o, d);
}
