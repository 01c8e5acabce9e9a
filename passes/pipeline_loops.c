/* pipeline_loops.c: software pipelining of the loops whose loads feed tensor-core dots (Triton's
 * assign_latencies + schedule_loops + pipeline, for the pointer-load case; docs/passes.md).
 *
 * Requires: layouts (a dot's operand converts and #mma result are known), axis info. Guarantees:
 * in every loop it pipelines, each operand load of an mma dot is an async_copy into slot
 * (i + S - 1) % S of an S-slot local_alloc buffer, issued S - 1 iterations ahead of its use
 * (S = the loop's tl.range num_stages, else the function's); a prologue of S - 1 iterations,
 * each predicated on the iteration existing, fills the first slots; iteration i waits for its
 * own group (async_wait S - 2), makes it visible to every thread (barrier), and reads slot i % S: through local_load into the dot operand's
 * layout (mma.sync), or directly with a wgmma that stays in flight until the next iteration's
 * wgmma_wait 1 (sm_90a). After the loop: async_wait 0, and wgmma_wait 0 on the accumulator.
 * The buffers have no shared layout yet (swizzle.c). Axis info is recomputed for the new values.
 *
 * The schedule, per iteration i of the new loop (S slots; copies for iteration j go to slot j % S):
 *     async_wait S-2; barrier           -- tile i (copied S-1 iterations ago) is complete everywhere
 *     dot i reading slot i % S          -- wgmma: wgmma_wait 1 retires wgmma i-1 of this warpgroup
 *     barrier (wgmma only)              -- ... and of every warpgroup: slot (i-1) % S is free
 *     copies for iteration i+S-1 into slot (i+S-1) % S = (i-1) % S; async_commit
 * The loop is not peeled: copies for iterations past the end are masked off (they read nothing).
 *
 * Stage 0 is the set of ops the pipelined loads depend on inside the body (addresses, masks);
 * it runs S - 1 iterations ahead, so the loop-carried values it alone uses run ahead with it:
 * advancing pointers, and the i32 offsets block pointers carry (`tl.advance`), from which the
 * front end recomputes the addresses and boundary masks each iteration (canonicalize has made the
 * leaves a loop yields unchanged, base, shapes and strides, loop-invariant). A loop is left as it is (num_stages 1, or anything below not holding):
 * stage 0 must be pure ops; a value stage 0 computes may not be used by the rest of the body;
 * an iter arg is used by stage 0 alone or by the rest alone, and the loop's results of stage-0
 * iter args are unused; the step is a positive constant; each pipelined load's tile is 2-D with
 * 16-bit elements (or fp32 for wgmma's tf32 form: its slots are K-major whatever the registers'
 * order, element by element when the tile runs along M or N; or fp8 for wgmma's fp8 form, K-major
 * too, the tile running along K in memory), copied in pieces of at least 4
 * bytes, and its only use is the convert into a dot operand, whose only use is the dot; or, for a
 * dot operand not paired that way (the other operand not loaded in the loop, or a trans between
 * the load and the convert), a 16-bit tile read back whole: local_load in the load's own layout
 * where the load was, the ops after it unchanged (operand_tile_load). A load's
 * `other` other than 0 goes with its async_copy (masked-off elements are written with it). */
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

#define MAX_PIPE_LOADS     8
#define DECLINE(p, reason) return ((p)->why_not = (reason), false)

typedef struct Pipe {
    const char *why_not; /* why the loop stays as it is (TRIC_PIPELINE_REMARKS=1 prints it) */
    IrFunc *f;
    const PassOptions *o;
    IrOp *loop;
    IrRegion *body;
    int S;
    int nloads;
    IrOp *loads[MAX_PIPE_LOADS];    /* the pipelined loads */
    IrOp *converts[MAX_PIPE_LOADS]; /* convert_layout of each into its dot operand; NULL for a
                                       tile read back in the load's own layout (below) */
    IrOp *transes[MAX_PIPE_LOADS];  /* a `.T` between a wgmma B's load and its convert (the
                                       wgmma reads the slot as B^T: trans_b), else NULL */
    ValueId bufs[MAX_PIPE_LOADS];   /* local_alloc of each */
    ValueId views[MAX_PIPE_LOADS];  /* this iteration's extract view of each (new loop) */
    bool any_wgmma;
    IrOp *inflight_dot; /* the one wgmma left in flight across iterations, or NULL */
    int inflight_iter;  /* its iter arg */
    IrOp *carried_dot;  /* the last wgmma, whose result only the yield takes (attention's
                           acc = tl.dot(p, v, acc * alpha)): left in flight into the next
                           iteration, whose first wgmma_wait 0 (or one before the first use of
                           its iter arg) retires it; or NULL */
    int carried_iter;   /* its iter arg */
    bool *stage0;       /* per op index of body: in stage 0 */
    bool *arg_stage0;   /* per iter arg (not the iv): used by stage 0 */
    int nvalues0;       /* f->nvalues before the rewrite: the map's size */
    ValueId *map;       /* original value -> its value in what is being built (0: itself) */
} Pipe;

/* ---- analysis ------------------------------------------------------------------------------ */

static int body_index(const IrRegion *body, const IrOp *op)
{
    for (int i = 0; i < body->nops; i++)
        if (body->ops[i] == op)
            return i;
    return -1;
}

/* Uses of v in region r and everything nested in it. */
static int uses_in(const IrRegion *r, ValueId v)
{
    int n = 0;
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int k = 0; k < op->noperands; k++)
            n += op->operands[k] == v;
        for (int k = 0; k < op->nregions; k++)
            n += uses_in(&op->regions[k], v);
    }
    return n;
}

static bool is_const_zero(const IrFunc *f, ValueId v)
{
    const IrOp *def = f->values[v].def;
    while (def &&
           (def->code == OP_SPLAT || def->code == OP_BROADCAST || def->code == OP_CONVERT_LAYOUT))
        def = f->values[def->operands[0]].def;
    return def && def->code == OP_CONST && def->attr[0] == 0 && def->fattr == 0.0;
}

/* Whether load feeds a dot operand in a form the pipeline takes (see the header). */
static bool load_pipelinable(Pipe *p, const IrOp *load, const IrOp *convert, int which, bool wgmma)
{
    const IrFunc *f = p->f;
    Type t = ir_type(f, load->results[0]);
    int pl = f->values[load->operands[0]].layout;
    if (pl <= 0 || pl >= f->nlayouts || f->layouts[pl].kind != LAYOUT_BLOCKED)
        DECLINE(p, "a load's layout is not blocked");
    /* fp32 tiles feed wgmma's tf32 form, which reads both operands K-major (A's dim 1, B's dim
     * 0): the swizzle pass gives their slots that order, and a tile whose registers run along M
     * or N is copied element by element (4-byte cp.async, PTX ISA 9.7.9.25) into it */
    bool tf32 = wgmma && t.dtype == DT_F32;
    /* fp8 tiles feed wgmma's .e4m3/.e5m2 form, K-major only too; element by element would be
     * 1-byte copies, under cp.async's 4, so the tile must run along K in memory */
    bool fp8 = wgmma && !t.is_ptr && dtype_is_fp8(t.dtype);
    if (t.rank != 2 || t.is_ptr || (dtype_bytes(t.dtype) != 2 && !tf32 && !fp8) ||
        load->nresults != 1)
        DECLINE(p, "a load's tile is not 2-D with 16-bit elements (or fp32 or fp8 for wgmma)");
    if (fp8 && f->layouts[pl].blocked.order[0] != (which == 0 ? 1 : 0))
        DECLINE(p, "an fp8 tile for wgmma does not run along K in memory (wgmma reads fp8 K-major "
                   "only; its copies would be single bytes)");
    if (uses_in(&f->body, load->results[0]) != 1 || uses_in(&f->body, convert->results[0]) != 1)
        DECLINE(p, "a loaded tile has other uses than its dot");
    if (f->values[convert->operands[0]].def != load && (tf32 || fp8))
        DECLINE(p, "a transposed fp32 or fp8 tile for wgmma (its B^T view is for 16-bit types)");
    if (axis_vector_width(f, load) * dtype_bytes(t.dtype) < 4)
        DECLINE(p, "a load's copies would be under 4 bytes (no contiguity or divisibility proven)");
    Layout sh;
    return shared_layout_for(&sh, t,
                             tf32 || fp8 ? (which == 0 ? 1 : 0) : f->layouts[pl].blocked.order[0]);
}

/* Adds to stage 0 the body op defining v and, transitively, what it depends on; records iter
 * args stage 0 reads. False when stage 0 would hold an op that cannot run ahead. */
static bool mark_stage0(Pipe *p, ValueId v)
{
    const IrFunc *f = p->f;
    for (int a = 1; a < p->body->nargs; a++)
        if (p->body->args[a] == v) {
            p->arg_stage0[a - 1] = true;
            return true;
        }
    const IrOp *def = f->values[v].def;
    int i = def ? body_index(p->body, def) : -1;
    if (i < 0 || p->stage0[i])
        return true; /* defined outside the loop, the iv, or already in */
    bool is_pipelined_load = false;
    for (int k = 0; k < p->nloads; k++)
        is_pipelined_load |= p->loads[k] == def;
    switch (def->code) {
    case OP_STORE:
    case OP_ATOMIC_RMW:
    case OP_ATOMIC_CAS:
    case OP_ASSERT:
    case OP_DOT:
    case OP_FOR:
    case OP_IF:
    case OP_WHILE:
    case OP_YIELD:
    case OP_CONDITION: DECLINE(p, "stage 0 would hold an op with effects or regions");
    case OP_LOAD:
        if (!is_pipelined_load)
            DECLINE(
                p,
                "stage 0 would hold a load that is not pipelined"); /* a load run ahead could fault past the end */
        break;
    case OP_LOCAL_ALLOC:
    case OP_SLOT:
    case OP_ASYNC_COPY:
    case OP_ASYNC_COMMIT:
    case OP_ASYNC_WAIT:
    case OP_BARRIER:
    case OP_LOCAL_LOAD:
    case OP_WGMMA:
    case OP_WGMMA_WAIT: DECLINE(p, "stage 0 would hold a pipeline op"); /* already pipelined */
    default:
        if (def->nregions)
            DECLINE(p, "stage 0 would hold an op with regions");
    }
    p->stage0[i] = true;
    for (int k = 0; k < def->noperands; k++)
        if (def->operands[k] > 0 && !mark_stage0(p, def->operands[k]))
            return false;
    return true;
}

/* Whether the rest of the body (not stage 0) uses a value stage 0 defines, other than a pipelined
 * load (used by its convert) or through the yield of a stage-0 iter arg. */
static bool stage0_leaks(Pipe *p)
{
    const IrRegion *body = p->body;
    const IrOp *y = body->ops[body->nops - 1];
    for (int i = 0; i < body->nops; i++) {
        const IrOp *op = body->ops[i];
        if (!p->stage0[i])
            continue;
        bool is_load = false;
        for (int k = 0; k < p->nloads; k++)
            is_load |= p->loads[k] == op;
        for (int r = 0; r < op->nresults; r++) {
            ValueId v = op->results[r];
            for (int j = 0; j < body->nops; j++) {
                const IrOp *u = body->ops[j];
                if (p->stage0[j])
                    continue;
                if (u == y) {
                    for (int k = 0; k < y->noperands; k++)
                        if (y->operands[k] == v && !p->arg_stage0[k])
                            return true;
                    continue;
                }
                if (is_load) {
                    bool own_convert = false;
                    for (int k = 0; k < p->nloads; k++)
                        own_convert |= p->loads[k] == op && (p->converts[k] == u ||
                                                             p->transes[k] == u || !p->converts[k]);
                    if (own_convert)
                        continue;
                }
                if (ir_op_uses(u, v))
                    return true;
            }
        }
    }
    return false;
}

/* The iter arg (0-based) whose next value is v and only that one: v appears once in the yield and
 * nowhere else in the body. -1 if none. */
static int yielded_alone(const Pipe *p, ValueId v)
{
    const IrOp *y = p->body->ops[p->body->nops - 1];
    int it = -1;
    for (int k = 0; k < y->noperands; k++)
        if (y->operands[k] == v)
            it = it < 0 ? k : -2;
    return it >= 0 && uses_in(p->body, v) == 1 ? it : -1;
}

/* The iter arg (0-based) whose whole chain is dot's accumulator: c is that arg's block argument,
 * used by dot alone, and dot's result is used by the yield alone, at that position. -1 if none. */
static int accumulator_iter(const Pipe *p, const IrOp *dot)
{
    const IrRegion *body = p->body;
    int it = yielded_alone(p, dot->results[0]);
    if (it < 0 || body->args[1 + it] != dot->operands[2])
        return -1;
    if (uses_in(body, dot->operands[2]) != 1)
        return -1;
    return it;
}

/* A dot operand whose tile is not a direct convert of a load in the loop paired with the other
 * operand's (tutorial 06's attention: `q` loaded before the loop, `p` from the softmax, K through
 * `.T`): its load, found through convert_layout and trans ops each used once, is still copied
 * ahead into slots when it qualifies, and read back whole (local_load in the load's own layout)
 * where the load was; the ops after it stay. 16-bit 2-D tiles only. */
static IrOp *operand_chain_load(const Pipe *p, ValueId operand)
{
    const IrFunc *f = p->f;
    IrOp *def = f->values[operand].def;
    while (def && body_index(p->body, def) >= 0 &&
           (def->code == OP_CONVERT_LAYOUT || def->code == OP_TRANS) &&
           uses_in(p->body, def->results[0]) == 1)
        def = f->values[def->operands[0]].def;
    return def && def->code == OP_LOAD && body_index(p->body, def) >= 0 && def->nresults == 1
               ? def
               : NULL;
}

/* operand_chain_load's load when it qualifies for a copy read back whole. */
static IrOp *operand_tile_load(Pipe *p, ValueId operand)
{
    IrFunc *f = p->f;
    IrOp *def = operand_chain_load(p, operand);
    if (!def)
        return NULL;
    Type t = ir_type(f, def->results[0]);
    int pl = f->values[def->operands[0]].layout;
    if (pl <= 0 || pl >= f->nlayouts || f->layouts[pl].kind != LAYOUT_BLOCKED || t.rank != 2 ||
        t.is_ptr || dtype_bytes(t.dtype) != 2 || uses_in(&f->body, def->results[0]) != 1 ||
        axis_vector_width(f, def) * dtype_bytes(t.dtype) < 4)
        return NULL;
    Layout sh;
    return shared_layout_for(&sh, t, f->layouts[pl].blocked.order[0]) ? def : NULL;
}

/* Can this #mma v3 dot take its A from registers: a 16-bit A in a #dot_op<idx=0, k_width=2>
 * layout (wgmma's register fragment is mma.sync's A fragment per warp, docs/codegen.md), not a
 * load of this loop that the pipeline copies (then both operands come from slots)? */
static bool a_from_registers(const Pipe *p, const IrOp *dot)
{
    const IrFunc *f = p->f;
    Type t = ir_type(f, dot->operands[0]);
    int l = f->values[dot->operands[0]].layout;
    return t.rank == 2 && !t.is_ptr && (t.dtype == DT_F16 || t.dtype == DT_BF16) && l > 0 &&
           l < f->nlayouts && f->layouts[l].kind == LAYOUT_DOT_OPERAND &&
           f->layouts[l].dot_operand.op_idx == 0 && f->layouts[l].dot_operand.k_width == 2;
}

/* Does v, computed in the body, depend on value `on` (through the operands of body ops)? */
static bool depends_on(const Pipe *p, ValueId v, ValueId on, int depth)
{
    if (v == on)
        return true;
    const IrOp *def = v > 0 ? p->f->values[v].def : NULL;
    if (!def || depth > 64 || body_index(p->body, def) < 0)
        return false;
    for (int k = 0; k < def->noperands; k++)
        if (def->operands[k] > 0 && depends_on(p, def->operands[k], on, depth + 1))
            return true;
    return false;
}

/* Several wgmma dots, the last one's result taken by the yield alone (an attention's acc): that
 * one need not be waited for in its own iteration. The next iteration's first wgmma_wait 0 (the
 * next q @ k's) retires it with its own dot, so it runs under the barrier, the copies and the
 * next dot's issue; the slot it reads is refilled only after that wait and the barrier after the
 * dots. A register A must be rewritten only after that wait: it must come from an earlier dot's
 * result (p from q @ k), never from what could run ahead of the wait. */
static void choose_carried_dot(Pipe *p, IrOp **wg, int nwg)
{
    IrOp *dot = wg[nwg - 1];
    int it = yielded_alone(p, dot->results[0]);
    if (it < 0 || p->arg_stage0[it])
        return;
    if (a_from_registers(p, dot)) {
        bool after_wait = false;
        for (int i = 0; i + 1 < nwg && !after_wait; i++)
            after_wait = depends_on(p, dot->operands[0], wg[i]->results[0], 0);
        if (!after_wait)
            return;
    }
    p->carried_dot = dot;
    p->carried_iter = it;
}

/* Finds what to pipeline in loop; false when the loop stays as it is. */
static bool analyse(Pipe *p)
{
    IrFunc *f = p->f;
    IrRegion *body = p->body;
    if (body->nops == 0 || body->ops[body->nops - 1]->code != OP_YIELD || body->nargs < 1)
        DECLINE(p, "the loop has no yield");
    int64_t step;
    bool ok = passes_const_int(f, p->loop->operands[2], &step);
    if (!ok || step <= 0)
        DECLINE(p, "the step is not a positive constant");
    int ndots = 0, nwg = 0;
    IrOp *wg[MAX_PIPE_LOADS]; /* the dots that become wgmma ops, in body order */
    for (int i = 0; i < body->nops; i++) {
        IrOp *dot = body->ops[i];
        if (dot->code != OP_DOT)
            continue;
        int acc = f->values[dot->results[0]].layout;
        if (acc <= 0 || acc >= f->nlayouts || f->layouts[acc].kind != LAYOUT_MMA)
            continue;
        bool v3 = f->layouts[acc].mma.version == 3;
        IrOp *cv[2] = {0}, *ld[2] = {0}, *tr[2] = {0};
        bool take = true;
        for (int k = 0; k < 2; k++) {
            cv[k] = f->values[dot->operands[k]].def;
            bool in_loop =
                cv[k] && cv[k]->code == OP_CONVERT_LAYOUT && body_index(body, cv[k]) >= 0;
            ld[k] = in_loop ? f->values[cv[k]->operands[0]].def : NULL;
            /* wgmma's B through a `.T` (tutorial 06's `k = desc_k.load(...).T`): the slot holds
             * the tile as loaded and the wgmma reads it as B^T (16-bit types) */
            if (k == 1 && v3 && ld[k] && ld[k]->code == OP_TRANS && body_index(body, ld[k]) >= 0 &&
                uses_in(&f->body, ld[k]->results[0]) == 1 &&
                dtype_bytes(ir_type(f, ld[k]->results[0]).dtype) == 2 &&
                ir_type(f, ld[k]->results[0]).rank == 2) {
                tr[k] = ld[k];
                ld[k] = f->values[tr[k]->operands[0]].def;
            }
            if (ld[k] && (ld[k]->code != OP_LOAD || body_index(body, ld[k]) < 0))
                ld[k] = NULL;
        }
        take = ld[0] && ld[1] && load_pipelinable(p, ld[0], cv[0], 0, v3) &&
               load_pipelinable(p, ld[1], cv[1], 1, v3);
        /* wgmma takes A from registers (PTX ISA 9.7.15.5.1.1, 16-bit types): a dot whose B is
         * such a load and whose A is computed (attention's q before the loop, p from the
         * softmax) reads B's slot and A's #dot_op registers; it waits for itself */
        if (!take && v3 && ld[1] && a_from_registers(p, dot) &&
            load_pipelinable(p, ld[1], cv[1], 1, true) && p->nloads + 1 <= MAX_PIPE_LOADS) {
            p->loads[p->nloads] = ld[1];
            p->converts[p->nloads] = cv[1];
            p->transes[p->nloads] = tr[1];
            p->nloads++;
            p->any_wgmma = true;
            p->inflight_dot = NULL; /* its registers may not change under it: each waits */
            if (nwg < MAX_PIPE_LOADS)
                wg[nwg++] = dot;
            ndots++;
            continue;
        }
        if (!take || p->nloads + 2 > MAX_PIPE_LOADS)
            continue;
        for (int k = 0; k < 2; k++) {
            p->loads[p->nloads] = ld[k];
            p->converts[p->nloads] = cv[k];
            p->transes[p->nloads] = tr[k];
            p->nloads++;
        }
        if (v3) {
            p->any_wgmma = true;
            if (nwg < MAX_PIPE_LOADS)
                wg[nwg++] = dot;
            int it = accumulator_iter(p, dot);
            if (it >= 0 && ndots == 0) {
                p->inflight_dot = dot;
                p->inflight_iter = it;
            } else {
                p->inflight_dot = NULL; /* several wgmma dots: each waits for itself */
            }
        }
        ndots++;
    }
    for (int i = 0; i < body->nops; i++) {
        IrOp *dot = body->ops[i];
        int acc = dot->code == OP_DOT ? f->values[dot->results[0]].layout : 0;
        if (acc <= 0 || acc >= f->nlayouts || f->layouts[acc].kind != LAYOUT_MMA)
            continue;
        for (int k = 0; k < 2 && p->nloads < MAX_PIPE_LOADS; k++) {
            IrOp *ld = operand_tile_load(p, dot->operands[k]);
            /* a dot whose other operand is loaded in the loop but cannot be copied (too narrow,
             * fp32 or fp8 off wgmma's forms) stays as it was: one stage for both */
            IrOp *other = operand_chain_load(p, dot->operands[1 - k]);
            bool other_taken = !other;
            for (int j = 0; j < p->nloads; j++)
                other_taken |= p->loads[j] == other;
            if (!other_taken && !operand_tile_load(p, dot->operands[1 - k]))
                ld = NULL;
            for (int j = 0; ld && j < p->nloads; j++)
                if (p->loads[j] == ld)
                    ld = NULL;
            if (ld) {
                p->loads[p->nloads] = ld;
                p->converts[p->nloads] = NULL;
                p->nloads++;
            }
        }
    }
    if (p->nloads == 0) /* keep the reason a candidate load gave, if any */
        DECLINE(p, p->why_not ? p->why_not : "no dot reads tiles loaded in the loop");
    for (int k = 0; k < p->nloads; k++) {
        const IrOp *ld = p->loads[k];
        p->stage0[body_index(body, ld)] = true;
        for (int j = 0; j < ld->noperands; j++)
            if (ld->operands[j] > 0 && !mark_stage0(p, ld->operands[j]))
                return false;
    }
    /* what computes the next value of a stage-0 iter arg (the pointer increments) is stage 0
     * too, and may draw more iter args in */
    const IrOp *y = body->ops[body->nops - 1];
    for (bool grew = true; grew;) {
        grew = false;
        for (int a = 0; a + 1 < body->nargs; a++) {
            const IrOp *ydef = f->values[y->operands[a]].def;
            int yi = ydef ? body_index(body, ydef) : -1;
            if (!p->arg_stage0[a] || yi < 0 || p->stage0[yi])
                continue;
            if (!mark_stage0(p, y->operands[a]))
                return false;
            grew = true;
        }
    }
    /* iter args: stage 0's alone (their results unused after the loop, their yields from stage 0
     * or from outside the loop), or the rest's alone (their yields not from stage 0) */
    for (int a = 0; a + 1 < body->nargs; a++) {
        ValueId arg = body->args[1 + a];
        ValueId yv = y->operands[a];
        const IrOp *ydef = f->values[yv].def;
        int yi = ydef ? body_index(body, ydef) : -1;
        if (p->arg_stage0[a]) {
            for (int i = 0; i < body->nops; i++) {
                const IrOp *u = body->ops[i];
                if (p->stage0[i])
                    continue;
                for (int k = 0; k < u->noperands; k++)
                    if (u->operands[k] == arg && !(u == y && k == a))
                        DECLINE(
                            p,
                            "an iter arg is used by stage 0 and by the rest of the body"); /* the rest of the body needs this iteration's value */
                for (int k = 0; k < u->nregions; k++)
                    if (uses_in(&u->regions[k], arg))
                        DECLINE(p, "an iter arg is used by stage 0 and by the rest of the body");
            }
            if (yi >= 0 && !p->stage0[yi])
                DECLINE(p, "a stage-0 iter arg's next value comes from the rest of the body");
            if (a < p->loop->nresults && uses_in(&f->body, p->loop->results[a]) > 0)
                DECLINE(p, "a stage-0 iter arg's result is used after the loop");
        } else if (yi >= 0 && p->stage0[yi]) {
            DECLINE(p, "an iter arg of the rest of the body gets its next value from stage 0");
        }
    }
    if (stage0_leaks(p))
        DECLINE(p, "the rest of the body uses a value stage 0 computes");
    if (nwg > 1 && !p->inflight_dot)
        choose_carried_dot(p, wg, nwg);
    return true;
}

/* ---- building ------------------------------------------------------------------------------ */

static ValueId mapped(const Pipe *p, ValueId v)
{
    return v > 0 && v < p->nvalues0 && p->map[v] ? p->map[v] : v;
}

static void set_layout(IrFunc *f, ValueId v, int layout) { f->values[v].layout = layout; }

static IrOp *clone_mapped(Pipe *p, IrBuilder *b, const IrOp *o);

static void clone_region_mapped(Pipe *p, const IrRegion *from, IrRegion *to)
{
    IrFunc *f = p->f;
    memset(to, 0, sizeof *to);
    for (int i = 0; i < from->nargs; i++) {
        ValueId old = from->args[i];
        ValueId nv = ir_region_add_arg(f, to, f->values[old].type, f->values[old].name);
        set_layout(f, nv, f->values[old].layout);
        if (old < p->nvalues0)
            p->map[old] = nv;
    }
    IrBuilder b = {.func = f, .region = to, .pos = -1};
    for (int i = 0; i < from->nops; i++)
        clone_mapped(p, &b, from->ops[i]);
}

/* A copy of o at b with operands mapped; its results (and region args) become the map of o's. */
static IrOp *clone_mapped(Pipe *p, IrBuilder *b, const IrOp *o)
{
    IrFunc *f = p->f;
    ValueId ops[64];
    Type types[64];
    if (o->noperands > 64 || o->nresults > 64)
        return NULL;
    for (int k = 0; k < o->noperands; k++)
        ops[k] = o->operands[k] > 0 ? mapped(p, o->operands[k]) : 0;
    for (int k = 0; k < o->nresults; k++)
        types[k] = f->values[o->results[k]].type;
    IrOp *n = ir_build(b, o->code, o->loc, ops, o->noperands, types, o->nresults, 0);
    memcpy(n->attr, o->attr, sizeof n->attr);
    n->fattr = o->fattr;
    n->sattr = o->sattr;
    for (int k = 0; k < o->nresults; k++) {
        ValueId old = o->results[k];
        f->values[n->results[k]].layout = f->values[old].layout;
        f->values[n->results[k]].name = f->values[old].name;
        if (old < p->nvalues0)
            p->map[old] = n->results[k];
    }
    if (o->nregions > 0) {
        n->nregions = o->nregions;
        n->regions = arena_alloc(f->arena, sizeof *n->regions * (size_t)o->nregions);
        for (int k = 0; k < o->nregions; k++)
            clone_region_mapped(p, &o->regions[k], &n->regions[k]);
    }
    return n;
}

static ValueId const_i(IrBuilder *b, SrcLoc loc, DType dt, int64_t v)
{
    return ir_build_const_int(b, loc, type_scalar(dt), v);
}

static IrOp *build0(IrBuilder *b, OpCode code, SrcLoc loc, int64_t attr0)
{
    IrOp *op = ir_build(b, code, loc, NULL, 0, NULL, 0, 0);
    op->attr[0] = attr0;
    return op;
}

static ValueId slot_view(Pipe *p, IrBuilder *b, int k, ValueId index)
{
    IrFunc *f = p->f;
    Type bt = ir_type(f, p->bufs[k]), vt = bt;
    vt.rank = (uint8_t)(bt.rank - 1);
    for (int d = 0; d < vt.rank; d++)
        vt.shape[d] = bt.shape[d + 1];
    for (int d = vt.rank; d < TRIC_MAX_RANK; d++)
        vt.shape[d] = 0;
    ValueId ops[2] = {p->bufs[k], index};
    return ir_build(b, OP_SLOT, p->loads[k]->loc, ops, 2, &vt, 1, 0)->results[0];
}

/* Stage 0 for the iteration whose iv is `iv`: the stage-0 ops cloned (the map already holds the
 * iv and the stage-0 iter args), each pipelined load an async_copy into slot `slot` masked by
 * its mask and by iv < hi, then one commit. */
static void emit_stage0(Pipe *p, IrBuilder *b, ValueId iv, ValueId slot)
{
    IrFunc *f = p->f;
    IrRegion *body = p->body;
    SrcLoc loc = p->loop->loc;
    ValueId hi = mapped(p, p->loop->operands[1]);
    ValueId valid = ir_build_binary(b, OP_CMP_LT, loc, type_scalar(DT_I1), iv, hi);
    for (int i = 0; i < body->nops; i++) {
        const IrOp *op = body->ops[i];
        if (!p->stage0[i])
            continue;
        int k = -1;
        for (int j = 0; j < p->nloads; j++)
            if (p->loads[j] == op)
                k = j;
        if (k < 0) {
            clone_mapped(p, b, op);
            continue;
        }
        ValueId ptr = mapped(p, op->operands[0]);
        Type pt = ir_type(f, ptr), mt = pt;
        mt.is_ptr = false;
        mt.dtype = DT_I1;
        int pl = f->values[ptr].layout;
        ValueId mask = ir_build_unary(b, OP_SPLAT, op->loc, mt, valid);
        set_layout(f, mask, pl);
        if (op->noperands > 1 && op->operands[1] > 0) {
            ValueId own = mapped(p, op->operands[1]);
            mask = ir_build_binary(b, OP_AND, op->loc, mt, own, mask);
            set_layout(f, mask, f->values[own].layout);
        }
        ValueId view = slot_view(p, b, k, slot);
        /* `other` travels with the copy unless it is 0 (the zero fill cp.async does anyway) */
        ValueId other =
            op->noperands > 2 && op->operands[2] > 0 && !is_const_zero(f, op->operands[2])
                ? mapped(p, op->operands[2])
                : 0;
        ValueId ops[4] = {view, ptr, mask, other};
        ir_build(b, OP_ASYNC_COPY, op->loc, ops, other ? 4 : 3, NULL, 0, 0);
    }
    build0(b, OP_ASYNC_COMMIT, loc, 0);
}

/* map: iv -> iv_value; each stage-0 iter arg -> vals[a]. */
static void map_stage0_args(Pipe *p, ValueId iv_value, const ValueId *vals)
{
    memset(p->map, 0, sizeof *p->map * (size_t)p->nvalues0);
    p->map[p->body->args[0]] = iv_value;
    for (int a = 0; a + 1 < p->body->nargs; a++)
        if (p->arg_stage0[a])
            p->map[p->body->args[1 + a]] = vals[a];
}

/* (x + 1) % S for a slot index x. */
static ValueId next_slot(Pipe *p, IrBuilder *b, ValueId x)
{
    SrcLoc loc = p->loop->loc;
    Type i32 = type_scalar(DT_I32);
    ValueId x1 = ir_build_binary(b, OP_ADD, loc, i32, x, const_i(b, loc, DT_I32, 1));
    ValueId wrap =
        ir_build_binary(b, OP_CMP_GE, loc, type_scalar(DT_I1), x1, const_i(b, loc, DT_I32, p->S));
    ValueId ops[3] = {wrap, const_i(b, loc, DT_I32, 0), x1};
    Type t = i32;
    return ir_build(b, OP_SELECT, loc, ops, 3, &t, 1, 0)->results[0];
}

/* wgmma_wait 0 on the carried iter arg (its block argument, body value `arg`): later ops read
 * the wait's result. */
static void wait_carried(Pipe *p, IrBuilder *b, ValueId arg, SrcLoc loc)
{
    IrFunc *f = p->f;
    ValueId v = mapped(p, arg);
    Type t = ir_type(f, arg);
    IrOp *wait = ir_build(b, OP_WGMMA_WAIT, loc, &v, 1, &t, 1, 0);
    set_layout(f, wait->results[0], f->values[arg].layout);
    f->values[wait->results[0]].name = f->values[arg].name;
    p->map[arg] = wait->results[0];
}

static void rewrite(Pipe *p, IrRegion *parent, int at)
{
    IrFunc *f = p->f;
    IrOp *L = p->loop;
    IrRegion *body = p->body;
    SrcLoc loc = L->loc;
    int niter = body->nargs - 1;
    DType ivt = ir_type(f, L->operands[0]).dtype;
    int64_t step = 0;
    (void)passes_const_int(f, L->operands[2], &step); /* analyse took only constant steps */
    IrBuilder b = {.func = f, .region = parent, .pos = at};

    /* the buffers */
    for (int k = 0; k < p->nloads; k++) {
        Type t = ir_type(f, p->loads[k]->results[0]), bt = t;
        bt.is_smem = true;
        bt.rank = (uint8_t)(t.rank + 1);
        bt.shape[0] = p->S;
        for (int d = 0; d < t.rank; d++)
            bt.shape[d + 1] = t.shape[d];
        p->bufs[k] = ir_build(&b, OP_LOCAL_ALLOC, p->loads[k]->loc, NULL, 0, &bt, 1, 0)->results[0];
        f->values[p->bufs[k]].name = f->values[p->loads[k]->results[0]].name;
    }

    /* prologue: stage 0 of iterations 0 .. S-2 */
    ValueId *cur = arena_alloc(f->arena, sizeof(ValueId) * (size_t)(niter + 1));
    for (int a = 0; a < niter; a++)
        cur[a] = L->operands[3 + a];
    const IrOp *y = body->ops[body->nops - 1];
    for (int s = 0; s + 1 < p->S; s++) {
        ValueId iv = L->operands[0];
        if (s > 0)
            iv = ir_build_binary(&b, OP_ADD, loc, type_scalar(ivt), iv,
                                 const_i(&b, loc, ivt, s * step));
        map_stage0_args(p, iv, cur);
        emit_stage0(p, &b, iv, const_i(&b, loc, DT_I32, s));
        for (int a = 0; a < niter; a++)
            if (p->arg_stage0[a])
                cur[a] = mapped(p, y->operands[a]);
    }

    /* the new loop: the old iter args, then the insert and extract slots */
    int nops = 3 + niter + 2;
    ValueId *ops = arena_alloc(f->arena, sizeof(ValueId) * (size_t)nops);
    Type *types = arena_alloc(f->arena, sizeof(Type) * (size_t)(niter + 2));
    ops[0] = L->operands[0], ops[1] = L->operands[1], ops[2] = L->operands[2];
    for (int a = 0; a < niter; a++) {
        ops[3 + a] = p->arg_stage0[a] ? cur[a] : L->operands[3 + a];
        types[a] = ir_type(f, body->args[1 + a]);
    }
    ops[3 + niter] = const_i(&b, loc, DT_I32, p->S - 1);
    ops[4 + niter] = const_i(&b, loc, DT_I32, 0);
    types[niter] = types[niter + 1] = type_scalar(DT_I32);
    IrOp *N = ir_build(&b, OP_FOR, loc, ops, nops, types, niter + 2, 1);
    memcpy(N->attr, L->attr, sizeof N->attr);
    IrRegion *nb = &N->regions[0];
    for (int a = 0; a < body->nargs; a++) {
        ValueId old = body->args[a];
        ValueId nv = ir_region_add_arg(f, nb, f->values[old].type, f->values[old].name);
        set_layout(f, nv, f->values[old].layout);
    }
    ValueId ins = ir_region_add_arg(f, nb, type_scalar(DT_I32), "slot_insert");
    ValueId ext = ir_region_add_arg(f, nb, type_scalar(DT_I32), "slot_extract");
    for (int a = 0; a < niter; a++) {
        set_layout(f, N->results[a], f->values[L->results[a]].layout);
        f->values[N->results[a]].name = f->values[L->results[a]].name;
    }
    IrBuilder nbld = {.func = f, .region = nb, .pos = -1};

    /* 1. this iteration's tiles: complete, and seen by every thread. No async-proxy fence for
     * wgmma: the slots' only writers are cp.async copies, completed by async_wait and published
     * by bar.sync, as Triton (FenceInsertion fences register-to-shared copies only) and CUTLASS
     * (MainloopSm90CpAsyncGmma) order them; the fence cost 3% on seed 2's 128x128x64 loop on the
     * H100 (docs/performance.md). A wgmma operand stored from registers is fenced where codegen
     * stores it (dot_wgmma.c). */
    build0(&nbld, OP_ASYNC_WAIT, loc, p->S - 2);
    build0(&nbld, OP_BARRIER, loc, 0);
    for (int k = 0; k < p->nloads; k++)
        p->views[k] = slot_view(p, &nbld, k, ext);

    /* 2. the rest of the body, for iteration i */
    memset(p->map, 0, sizeof *p->map * (size_t)p->nvalues0);
    for (int a = 0; a < body->nargs; a++)
        p->map[body->args[a]] = nb->args[a];
    ValueId *yields = arena_alloc(f->arena, sizeof(ValueId) * (size_t)(niter + 2));
    /* the carried wgmma's iter arg: waited for before its first use (or with the first wait 0) */
    ValueId carried_arg = p->carried_dot ? body->args[1 + p->carried_iter] : 0;
    bool carried_waited = false;
    for (int i = 0; i + 1 < body->nops; i++) {
        IrOp *op = body->ops[i];
        if (carried_arg && !carried_waited && !p->stage0[i] && ir_op_uses(op, carried_arg)) {
            wait_carried(p, &nbld, carried_arg, loc);
            carried_waited = true;
        }
        if (p->stage0[i]) {
            /* a tile read back whole: from its slot, in the load's layout, where the load was */
            for (int j = 0; j < p->nloads; j++) {
                if (p->loads[j] != op || p->converts[j])
                    continue;
                Type t = ir_type(f, op->results[0]);
                ValueId r =
                    ir_build(&nbld, OP_LOCAL_LOAD, op->loc, &p->views[j], 1, &t, 1, 0)->results[0];
                set_layout(f, r, f->values[op->operands[0]].layout);
                f->values[r].name = f->values[op->results[0]].name;
                p->map[op->results[0]] = r;
            }
            continue;
        }
        int k = -1;
        bool is_trans = false;
        for (int j = 0; j < p->nloads; j++) {
            if (p->converts[j] == op)
                k = j;
            is_trans |= p->transes[j] == op;
        }
        if (is_trans) /* the wgmma reads the slot as B^T */
            continue;
        if (k >= 0) {
            /* a dot operand: from its slot into the operand's registers, unless a wgmma reads
             * the slot itself */
            const Layout *ol = &f->layouts[f->values[op->results[0]].layout];
            const Layout *parent =
                ol->kind == LAYOUT_DOT_OPERAND ? &f->layouts[ol->dot_operand.parent] : NULL;
            if (parent && parent->kind == LAYOUT_MMA && parent->mma.version == 3)
                continue;
            Type t = ir_type(f, op->results[0]);
            ValueId r =
                ir_build(&nbld, OP_LOCAL_LOAD, op->loc, &p->views[k], 1, &t, 1, 0)->results[0];
            set_layout(f, r, f->values[op->results[0]].layout);
            f->values[r].name = f->values[op->results[0]].name;
            p->map[op->results[0]] = r;
            continue;
        }
        int acc = op->code == OP_DOT ? f->values[op->results[0]].layout : 0;
        if (acc > 0 && f->layouts[acc].kind == LAYOUT_MMA && f->layouts[acc].mma.version == 3) {
            int ka = -1, kb = -1;
            for (int j = 0; j < p->nloads; j++) {
                if (p->converts[j] && p->converts[j]->results[0] == op->operands[0])
                    ka = j;
                if (p->converts[j] && p->converts[j]->results[0] == op->operands[1])
                    kb = j;
            }
            if (kb >= 0 && (ka >= 0 || a_from_registers(p, op))) {
                ValueId wops[3] = {ka >= 0 ? p->views[ka] : mapped(p, op->operands[0]),
                                   p->views[kb], mapped(p, op->operands[2])};
                Type t = ir_type(f, op->results[0]);
                IrOp *w = ir_build(&nbld, OP_WGMMA, op->loc, wops, 3, &t, 1, 0);
                memcpy(w->attr, op->attr, sizeof w->attr);
                w->attr[1] = p->transes[kb] ? 1 : 0; /* trans_b */
                set_layout(f, w->results[0], acc);
                bool stays = op == p->inflight_dot || op == p->carried_dot;
                /* a wait for all (pending 0) also retires the carried wgmma of the previous
                 * iteration: its iter arg goes through the same wait */
                bool merge = !stays && carried_arg && !carried_waited;
                ValueId wv[2] = {w->results[0], merge ? mapped(p, carried_arg) : 0};
                Type wt[2] = {t, merge ? ir_type(f, carried_arg) : t};
                IrOp *wait = ir_build(&nbld, OP_WGMMA_WAIT, op->loc, wv, merge ? 2 : 1, wt,
                                      merge ? 2 : 1, 0);
                wait->attr[0] = stays ? 1 : 0;
                set_layout(f, wait->results[0], acc);
                f->values[wait->results[0]].name = f->values[op->results[0]].name;
                p->map[op->results[0]] = wait->results[0];
                if (merge) {
                    set_layout(f, wait->results[1], f->values[carried_arg].layout);
                    f->values[wait->results[1]].name = f->values[carried_arg].name;
                    p->map[carried_arg] = wait->results[1];
                    carried_waited = true;
                }
                continue;
            }
        }
        clone_mapped(p, &nbld, op);
    }
    if (carried_arg &&
        !carried_waited) /* unused in the body: retired before its slot is refilled */
        wait_carried(p, &nbld, carried_arg, loc);
    for (int a = 0; a < niter; a++)
        if (!p->arg_stage0[a])
            yields[a] = mapped(p, y->operands[a]);

    /* 3. every warpgroup's previous wgmma has retired: its slot, (i-1) % S, may be refilled */
    if (p->any_wgmma)
        build0(&nbld, OP_BARRIER, loc, 0);

    /* 4. stage 0 for iteration i + S - 1, into slot (i + S - 1) % S */
    ValueId ahead = ir_build_binary(&nbld, OP_ADD, loc, type_scalar(ivt), nb->args[0],
                                    const_i(&nbld, loc, ivt, (int64_t)(p->S - 1) * step));
    ValueId *args0 = arena_alloc(f->arena, sizeof(ValueId) * (size_t)(niter + 1));
    for (int a = 0; a < niter; a++)
        args0[a] = nb->args[1 + a];
    map_stage0_args(p, ahead, args0);
    emit_stage0(p, &nbld, ahead, ins);
    for (int a = 0; a < niter; a++)
        if (p->arg_stage0[a])
            yields[a] = mapped(p, y->operands[a]);
    yields[niter] = next_slot(p, &nbld, ins);
    yields[niter + 1] = next_slot(p, &nbld, ext);
    IrOp *ny = ir_build(&nbld, OP_YIELD, y->loc, yields, niter + 2, NULL, 0, 0);
    (void)ny;

    /* after the loop: no copy in flight, the last wgmma retired */
    b.pos = body_index(parent, N) + 1;
    build0(&b, OP_ASYNC_WAIT, loc, 0);
    for (int a = 0; a < niter; a++) {
        ValueId r = N->results[a];
        if ((p->inflight_dot && a == p->inflight_iter) ||
            (p->carried_dot && a == p->carried_iter)) {
            Type t = ir_type(f, r);
            IrOp *wait = ir_build(&b, OP_WGMMA_WAIT, loc, &r, 1, &t, 1, 0);
            set_layout(f, wait->results[0], f->values[r].layout);
            f->values[wait->results[0]].name = f->values[r].name;
            r = wait->results[0];
        }
        if (a < L->nresults)
            ir_replace_all_uses(f, L->results[a], r);
    }
    ir_region_remove(parent, body_index(parent, L));
}

/* ---- driver -------------------------------------------------------------------------------- */

static int loop_stages(const IrFunc *f, const IrOp *loop)
{
    return loop->attr[0] > 0 ? (int)loop->attr[0] : f->num_stages;
}

static bool pipeline_region(IrFunc *f, const PassOptions *o, IrRegion *r, bool *changed)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            if (!pipeline_region(f, o, &op->regions[k], changed))
                return false;
        if (op->code != OP_FOR || op->nregions < 1 || loop_stages(f, op) < 2)
            continue;
        Pipe p = {.f = f,
                  .o = o,
                  .loop = op,
                  .body = &op->regions[0],
                  .S = loop_stages(f, op),
                  .inflight_iter = -1,
                  .nvalues0 = f->nvalues};
        p.stage0 = arena_alloc(f->arena, sizeof(bool) * (size_t)(p.body->nops + 1));
        p.arg_stage0 = arena_alloc(f->arena, sizeof(bool) * (size_t)(p.body->nargs + 1));
        p.map = arena_alloc(f->arena, sizeof(ValueId) * (size_t)f->nvalues);
        if (!analyse(&p)) {
            /* a remark for whoever wonders why a loop runs slowly */
            if (p.why_not && getenv("TRIC_PIPELINE_REMARKS"))
                fprintf(stderr, "%s:%d: remark: loop not pipelined (num_stages=%d): %s\n",
                        op->loc.file && op->loc.file->name ? op->loc.file->name : "?", op->loc.line,
                        p.S, p.why_not);
            continue;
        }
        rewrite(&p, r, i);
        *changed = true;
        /* the new loop sits where the old one was, after the buffers and the prologue */
        while (i < r->nops && r->ops[i]->code != OP_FOR)
            i++;
    }
    return true;
}

/* ---- a loop-invariant A in shared memory ------------------------------------------------------ */

/* Every use of v (anywhere in r) into uses[] (op, operand index); false past max. */
static bool collect_uses(IrRegion *r, ValueId v, IrOp **ops, int *idx, int *n, int max)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->noperands; k++)
            if (op->operands[k] == v) {
                if (*n >= max)
                    return false;
                ops[*n] = op;
                idx[*n] = k;
                (*n)++;
            }
        for (int k = 0; k < op->nregions; k++)
            if (!collect_uses(&op->regions[k], v, ops, idx, n, max))
                return false;
    }
    return true;
}

/* A tile loaded once before the loops and taken from registers as A by wgmma ops only (tutorial
 * 06's q): copied into a one-slot buffer instead, where its load was, and every such wgmma reads
 * the slot (as Triton keeps q in shared memory). The registers A took (a whole tile per thread
 * group: 32 per thread at 128x64 on 4 warps) are freed for the loop; the copy's group is older
 * than any loop's, so each loop's first async_wait completes it and its barrier shows it to
 * wgmma. Loads of 16-bit 2-D tiles in blocked layouts with copies of 4 bytes or more,
 * at the function's top level, whose every use is a convert_layout used only as a wgmma's A. */
static bool invariant_a_to_smem(IrFunc *f)
{
    bool changed = false;
    enum { MAX_USES = 16 };
    for (int i = 0; i < f->body.nops; i++) {
        IrOp *ld = f->body.ops[i];
        if (ld->code != OP_LOAD || ld->nresults != 1)
            continue;
        Type t = ir_type(f, ld->results[0]);
        int pl = f->values[ld->operands[0]].layout;
        Layout sh;
        if (t.rank != 2 || t.is_ptr || dtype_bytes(t.dtype) != 2 || pl <= 0 || pl >= f->nlayouts ||
            f->layouts[pl].kind != LAYOUT_BLOCKED || axis_vector_width(f, ld) * 2 < 4 ||
            !shared_layout_for(&sh, t, f->layouts[pl].blocked.order[0]))
            continue;
        IrOp *cvs[MAX_USES], *dots[MAX_USES];
        int ci[MAX_USES], di[MAX_USES], ncv = 0, ndot = 0;
        bool ok = collect_uses(&f->body, ld->results[0], cvs, ci, &ncv, MAX_USES) && ncv > 0;
        for (int u = 0; ok && u < ncv; u++) {
            ok = cvs[u]->code == OP_CONVERT_LAYOUT &&
                 collect_uses(&f->body, cvs[u]->results[0], dots, di, &ndot, MAX_USES);
            for (int w = 0; ok && w < ndot; w++)
                ok = dots[w]->code == OP_WGMMA && di[w] == 0;
        }
        if (!ok || ndot == 0)
            continue;
        IrBuilder b = {.func = f, .region = &f->body, .pos = i};
        Type bt = t;
        bt.is_smem = true;
        bt.rank = 3;
        bt.shape[0] = 1;
        bt.shape[1] = t.shape[0];
        bt.shape[2] = t.shape[1];
        ValueId buf = ir_build(&b, OP_LOCAL_ALLOC, ld->loc, NULL, 0, &bt, 1, 0)->results[0];
        f->values[buf].name = f->values[ld->results[0]].name;
        Type vt = t;
        vt.is_smem = true;
        ValueId sops[2] = {buf, const_i(&b, ld->loc, DT_I32, 0)};
        ValueId view = ir_build(&b, OP_SLOT, ld->loc, sops, 2, &vt, 1, 0)->results[0];
        ValueId mask = ld->noperands > 1 ? ld->operands[1] : 0;
        ValueId other =
            ld->noperands > 2 && ld->operands[2] > 0 && !is_const_zero(f, ld->operands[2])
                ? ld->operands[2]
                : 0;
        ValueId cops[4] = {view, ld->operands[0], mask, other};
        ir_build(&b, OP_ASYNC_COPY, ld->loc, cops, other ? 4 : mask ? 3 : 2, NULL, 0, 0);
        build0(&b, OP_ASYNC_COMMIT, ld->loc, 0);
        for (int w = 0; w < ndot; w++)
            dots[w]->operands[0] = view;
        i = b.pos; /* past the new ops; the load and its converts are dead now (dce) */
        changed = true;
    }
    return changed;
}

bool pass_pipeline(IrFunc *f, const PassOptions *o, Diag *d)
{
    bool changed = false;
    if (!pipeline_region(f, o, &f->body, &changed))
        return false;
    if (changed && invariant_a_to_smem(f))
        changed = true;
    /* the copies of constants and addresses in the prologue and the loop merged and the old
     * loop's leftovers dropped; then axis info for the new values (the copies' vector widths) */
    return !changed || (pass_cse(f, o, d) && pass_dce(f, o, d) && pass_axis_info(f, o, d));
}
