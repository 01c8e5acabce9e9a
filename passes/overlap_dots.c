/* overlap_dots.c: with PassOptions.overlap_dots (--overlap-dots), a loop's last wgmma issued one
 * iteration late, right after the next iteration's first, so the work between the two dots may run
 * while the tensor cores compute (FlashAttention-3's intra-warpgroup overlap; docs/passes.md
 * "overlap_dots"). Off by default: on an H200 ptxas still retires the late wgmma early in the
 * softmax, and the schedule measured 0.85-0.99x the speed of the one as written
 * (docs/performance.md "p @ v an iteration late").
 *
 * Requires: pipeline_loops' schedule (and tma's and warp_specialize's forms of it), where
 * iteration i reads its tiles from slot i % S of each buffer and refills only slot (i - 1) % S,
 * after the barrier or mbarrier arrival that follows its last wgmma; shared_alloc has not run.
 * The loop it takes has exactly two wgmma ops, as pipeline_loops leaves attention's (`qk =
 * tl.dot(q, k)`, then `acc = tl.dot(p, v, acc * alpha)` carried into the next iteration):
 *
 *     d1 = wgmma a1, b1, c1
 *     r1, acc_in = wgmma_wait d1, acc {pending = 0}   -- also retires the last iteration's d2
 *     ... (pure ops: the softmax; acc_in read only here) ...
 *     d2 = wgmma a2, slot(buf, e), c2                  -- c2 computed from acc_in (acc * alpha)
 *     r2 = wgmma_wait d2 {pending = 1};  yield r2 as acc
 *
 * Guarantees: d2 of iteration i runs in iteration i + 1, issued right after d1, on operands
 * the loop carries (a2's registers, e, c2 in acc's place) and a guard that is false in the first
 * iteration (the wgmma does nothing, its accumulators c2 = acc's init pass through, and its group
 * still counts):
 *
 *     d1 = wgmma a1, b1, c1
 *     d2 = wgmma a2_prev, slot(buf, e_prev), acc, guard started
 *     r1 = wgmma_wait d1 {pending = 1}                 -- d2 keeps running under the softmax
 *     ... (pure ops) ...
 *     acc_in = wgmma_wait d2 {pending = 0}             -- before acc_in's first use
 *     c2 = ...;  yield c2 as acc, a2, e, true
 *
 * and after the loop the last d2 and its wait 0, whose result replaces the loop's. Slot e_prev
 * is the one iteration i refills after its barrier (or arrival), and d2 retires before it; with
 * a producer warpgroup the consumers' arrival on that slot's empty mbarrier comes after the wait
 * too. So what wgmma reads is what the loop as written read, and every element of every result
 * is bit for bit the same (the interpreter runs both). Elsewhere the IR stays as it is. */
#include "passes/passes.h"

#include <string.h>

/* The loop's two wgmma ops and their waits, as the header shows them. */
typedef struct Overlap {
    IrFunc *f;
    IrOp *loop;
    IrRegion *body;
    int acc;       /* the iter arg (0-based, after the iv) d2's result is yielded as */
    IrOp *d1, *w1; /* the first wgmma and its wait 0, which also takes acc's arg */
    IrOp *d2, *w2; /* the last wgmma and its wait 1, yielded alone */
    int w1_acc;    /* acc's operand index in w1 */
} Overlap;

static bool in_body(const Overlap *ov, ValueId v)
{
    const IrOp *def = ov->f->values[v].def;
    if (def)
        return ir_region_index(ov->body, def) >= 0;
    for (int a = 0; a < ov->body->nargs; a++)
        if (ov->body->args[a] == v)
            return true;
    return false;
}

static int count_wgmma(const IrRegion *r)
{
    int n = 0;
    for (int i = 0; i < r->nops; i++) {
        n += r->ops[i]->code == OP_WGMMA;
        for (int k = 0; k < r->ops[i]->nregions; k++)
            n += count_wgmma(&r->ops[i]->regions[k]);
    }
    return n;
}

/* An operand of d2 the late issue can read: a value from outside the loop, a register value the
 * loop will carry, or a slot view of a buffer from outside the loop (its index carried). */
static bool late_operand_ok(const Overlap *ov, ValueId v)
{
    if (!in_body(ov, v))
        return true;
    const IrOp *def = ov->f->values[v].def;
    if (!ir_type(ov->f, v).is_smem)
        return true;
    return def && def->code == OP_SLOT && !in_body(ov, def->operands[0]);
}

/* Finds the form of the header in loop; false when it is not there. */
static bool find(Overlap *ov)
{
    IrFunc *f = ov->f;
    IrRegion *body = ov->body;
    if (body->nops < 1 || count_wgmma(body) != 2)
        return false;
    IrOp *y = body->ops[body->nops - 1];
    for (int a = 0; a < y->noperands; a++) {
        IrOp *w2 = f->values[y->operands[a]].def;
        if (!w2 || w2->code != OP_WGMMA_WAIT || w2->attr[0] != 1 || w2->noperands != 1 ||
            ir_region_index(body, w2) < 0 || ir_region_use_count(body, w2->results[0]) != 1)
            continue;
        IrOp *d2 = f->values[w2->operands[0]].def;
        /* (a dot with max_num_imprecise_acc waits for its own partial sums: nothing to defer) */
        if (!d2 || d2->code != OP_WGMMA || d2->noperands != 3 || ir_region_index(body, d2) < 0 ||
            ir_region_use_count(body, d2->results[0]) != 1 || d2->attr[2] != 0)
            continue;
        ValueId acc = body->args[1 + a];
        if (ir_region_use_count(body, acc) != 1)
            continue;
        /* acc's one use: the first dot's wait 0, before d2 */
        IrOp *w1 = NULL;
        int w1_acc = -1, at_d2 = ir_region_index(body, d2);
        for (int i = 0; i < at_d2 && !w1; i++) {
            IrOp *op = body->ops[i];
            for (int k = 0; op->code == OP_WGMMA_WAIT && k < op->noperands; k++)
                if (op->operands[k] == acc && op->attr[0] == 0 && op->nresults == op->noperands) {
                    w1 = op;
                    w1_acc = k;
                }
        }
        if (!w1)
            continue;
        IrOp *d1 = NULL;
        for (int k = 0; k < w1->noperands; k++) {
            IrOp *def = f->values[w1->operands[k]].def;
            if (k != w1_acc && def && def->code == OP_WGMMA && def != d2 &&
                ir_region_index(body, def) >= 0 &&
                ir_region_index(body, def) < ir_region_index(body, w1))
                d1 = def;
        }
        if (!d1)
            continue;
        ov->acc = a;
        ov->d1 = d1;
        ov->w1 = w1;
        ov->w1_acc = w1_acc;
        ov->d2 = d2;
        ov->w2 = w2;
        return late_operand_ok(ov, d2->operands[0]) && late_operand_ok(ov, d2->operands[1]);
    }
    return false;
}

/* May the wait for d2 come after op (no effect, no sync, nothing that reads acc's value)? */
static bool wait_may_pass(const IrOp *op, ValueId acc_in)
{
    return !ir_op_uses(op, acc_in) && !op->nregions &&
           !op_has(op->code, OPT_EFFECT | OPT_READS_MEMORY | OPT_TERMINATOR | OPT_PIPELINE);
}

/* An op like `like` (its partition) built at b. */
static IrOp *build_like(IrBuilder *b, const IrOp *like, OpCode code, const ValueId *ops, int nops,
                        const Type *types, int ntypes)
{
    IrOp *op = ir_build(b, code, like->loc, ops, nops, types, ntypes, 0);
    op->partition = like->partition;
    return op;
}

static void copy_value_facts(IrFunc *f, ValueId to, ValueId from)
{
    f->values[to].layout = f->values[from].layout;
    f->values[to].name = f->values[from].name;
}

/* A carried copy of v, the loop's new iter arg (init made before the loop, yielded v); its body
 * argument. */
static ValueId carry(Overlap *ov, ValueId v, ValueId init)
{
    IrFunc *f = ov->f;
    ValueId arg = passes_add_iter_arg(f, ov->loop, init, ir_type(f, v), f->values[v].name);
    copy_value_facts(f, arg, v);
    copy_value_facts(f, ov->loop->results[ov->loop->nresults - 1], v);
    IrOp *y = ov->body->ops[ov->body->nops - 1];
    y->operands[y->noperands - 1] = v;
    return arg;
}

/* Where d2's operand v is read late: itself (from outside the loop), or the carried value (the
 * view rebuilt from a carried slot index), inside the body (at b) or after the loop (after =
 * true: the loop's results). */
typedef struct Late {
    ValueId value;    /* operand itself, when from outside the loop */
    ValueId arg;      /* the carried register value's or slot index's body argument */
    int result;       /* its index among the loop's results */
    const IrOp *slot; /* the slot op to rebuild, or NULL */
} Late;

static Late carry_operand(Overlap *ov, IrBuilder *pre, ValueId v)
{
    IrFunc *f = ov->f;
    Late l = {0};
    if (!in_body(ov, v)) {
        l.value = v;
        return l;
    }
    const IrOp *def = f->values[v].def;
    SrcLoc loc = ov->d2->loc;
    if (ir_type(f, v).is_smem) { /* a slot view: its index carried */
        l.slot = def;
        ValueId index = def->operands[1];
        if (!in_body(ov, index)) {
            l.value = index;
            return l;
        }
        l.arg = carry(ov, index, passes_const_i32(pre, loc, 0));
        f->values[l.arg].name = f->values[ov->loop->results[ov->loop->nresults - 1]].name =
            "late_slot";
    } else {
        Type t = ir_type(f, v);
        ValueId zero = dtype_is_float(t.dtype) ? ir_build_const_float(pre, loc, t, 0.0)
                                               : ir_build_const_int(pre, loc, t, 0);
        f->values[zero].layout = f->values[v].layout;
        if (t.rank > 0)
            f->values[zero].def->partition = ov->d2->partition;
        l.arg = carry(ov, v, zero);
    }
    l.result = ov->loop->nresults - 1;
    return l;
}

/* The late operand's value at b: in the body (the carried argument) or after the loop (the
 * loop's result). */
static ValueId late_value(Overlap *ov, IrBuilder *b, const Late *l, bool after)
{
    IrFunc *f = ov->f;
    ValueId v = l->value;
    if (!v)
        v = after ? ov->loop->results[l->result] : l->arg;
    if (!l->slot)
        return v;
    ValueId ops[2] = {l->slot->operands[0], v};
    Type t = ir_type(f, l->slot->results[0]);
    IrOp *s = build_like(b, l->slot, OP_SLOT, ops, 2, &t, 1);
    copy_value_facts(f, s->results[0], l->slot->results[0]);
    return s->results[0];
}

static ValueId build_late_dot(Overlap *ov, IrBuilder *b, const Late *la, const Late *lb, ValueId c,
                              ValueId guard, bool after)
{
    IrFunc *f = ov->f;
    ValueId ops[4] = {late_value(ov, b, la, after), late_value(ov, b, lb, after), c, guard};
    Type t = ir_type(f, ov->d2->results[0]);
    IrOp *d = build_like(b, ov->d2, OP_WGMMA, ops, 4, &t, 1);
    memcpy(d->attr, ov->d2->attr, sizeof d->attr);
    copy_value_facts(f, d->results[0], ov->d2->results[0]);
    return d->results[0];
}

static ValueId build_wait(Overlap *ov, IrBuilder *b, ValueId v, int pending, ValueId like)
{
    Type t = ir_type(ov->f, v);
    IrOp *w = build_like(b, ov->w2, OP_WGMMA_WAIT, &v, 1, &t, 1);
    w->attr[0] = pending;
    copy_value_facts(ov->f, w->results[0], like);
    return w->results[0];
}

static void rewrite(Overlap *ov, IrRegion *parent)
{
    IrFunc *f = ov->f;
    IrRegion *body = ov->body;
    IrOp *loop = ov->loop, *d1 = ov->d1, *w1 = ov->w1, *d2 = ov->d2, *w2 = ov->w2;
    SrcLoc loc = d2->loc;
    ValueId acc_arg = body->args[1 + ov->acc], acc_in = w1->results[ov->w1_acc];
    ValueId c2 = d2->operands[2];

    /* what the late dot reads, carried: a2's registers, b2's slot index, whether d2 started */
    IrBuilder pre = {.func = f, .region = parent, .pos = ir_region_index(parent, loop)};
    Late la = carry_operand(ov, &pre, d2->operands[0]);
    Late lb = carry_operand(ov, &pre, d2->operands[1]);
    Type i1 = {.dtype = DT_I1};
    ValueId started =
        passes_add_iter_arg(f, loop, ir_build_const_int(&pre, loc, i1, 0), i1, "started");
    IrBuilder yb = {.func = f, .region = body, .pos = body->nops - 1};
    IrOp *y = body->ops[body->nops - 1];
    y->operands[y->noperands - 1] = ir_build_const_int(&yb, loc, i1, 1);
    /* the iteration before's d2, right after d1; acc's arg now carries its c */
    IrBuilder db = {.func = f, .region = body, .pos = ir_region_index(body, d1) + 1};
    ValueId late = build_late_dot(ov, &db, &la, &lb, acc_arg, started, false);
    /* d1's wait leaves it running */
    int nw = w1->noperands - 1, k = 0;
    ValueId *wops = arena_alloc(f->arena, sizeof(ValueId) * (size_t)nw);
    Type *wt = arena_alloc(f->arena, sizeof(Type) * (size_t)nw);
    for (int i = 0; i < w1->noperands; i++)
        if (i != ov->w1_acc) {
            wops[k] = w1->operands[i];
            wt[k++] = ir_type(f, w1->operands[i]);
        }
    IrBuilder wb = {.func = f, .region = body, .pos = ir_region_index(body, w1)};
    IrOp *nw1 = build_like(&wb, w1, OP_WGMMA_WAIT, wops, nw, wt, nw);
    nw1->attr[0] = 1;
    for (int i = 0, j = 0; i < w1->noperands; i++)
        if (i != ov->w1_acc) {
            copy_value_facts(f, nw1->results[j], w1->results[i]);
            ir_replace_all_uses(f, w1->results[i], nw1->results[j++]);
        }
    int at = ir_region_index(body, w1);
    ir_region_remove(body, at);
    /* d2's wait 0 before acc_in's first use (or anything that syncs) */
    while (at < body->nops && wait_may_pass(body->ops[at], acc_in))
        at++;
    IrBuilder ab = {.func = f, .region = body, .pos = at};
    ValueId acc_now = build_wait(ov, &ab, late, 0, acc_in);
    ir_replace_all_uses(f, acc_in, acc_now);
    /* d2 and its wait go; its c is what acc carries */
    y = body->ops[body->nops - 1];
    y->operands[ov->acc] = c2;
    ir_region_remove(body, ir_region_index(body, w2));
    ir_region_remove(body, ir_region_index(body, d2));

    /* after the loop: the last d2, waited for; its result is the loop's */
    ValueId res = loop->results[ov->acc];
    IrBuilder post = {.func = f, .region = parent, .pos = ir_region_index(parent, loop) + 1};
    ValueId last =
        build_late_dot(ov, &post, &la, &lb, res, loop->results[loop->nresults - 1], true);
    ValueId done = build_wait(ov, &post, last, 0, res);
    IrOp *last_op = f->values[last].def;
    ir_replace_all_uses(f, res, done);
    last_op->operands[2] = res;
    /* a wait 0 of the loop's result alone, after it, has nothing left to wait for */
    for (int i = post.pos; i < parent->nops; i++) {
        IrOp *op = parent->ops[i];
        if (op->code == OP_WGMMA_WAIT && op->noperands == 1 && op->operands[0] == done &&
            op->attr[0] == 0) {
            ir_replace_all_uses(f, op->results[0], done);
            ir_region_remove(parent, i);
            break;
        }
    }
}

static void overlap_region(IrFunc *f, IrRegion *r)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            overlap_region(f, &op->regions[k]);
        if (op->code != OP_FOR)
            continue;
        Overlap ov = {.f = f, .loop = op, .body = &op->regions[0]};
        if (!find(&ov))
            continue;
        rewrite(&ov, r);
        i = ir_region_index(r, op); /* past what was built before and after it */
    }
}

bool pass_overlap_dots(IrFunc *f, const PassOptions *o, Diag *d)
{
    (void)d;
    if (o->arch_specific && o->overlap_dots)
        overlap_region(f, &f->body);
    return true;
}
