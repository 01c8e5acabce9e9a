/* sema_stmt.c: statements. Assignments and unpacking, augmented assignments, if (decided at
 * compile time on a constexpr; a run-time one merges what its branches assign), for over range /
 * tl.range (loop-carried variables keep their types) and tl.static_range (unrolled), while,
 * return, assert, and the checks on what Triton rejects (break, continue, nested defs). */
#include "frontend/sema_internal.h"

#include <string.h>

/* ---- statements ------------------------------------------------------------------------------- */

/* Names a block assigns (targets of =, op=, for), recursively: the candidates for loop-carried
 * and branch-merged variables. */
typedef struct NameSet {
    const char **names;
    int n, cap;
} NameSet;

static bool nameset_has(const NameSet *ns, const char *name)
{
    for (int i = 0; i < ns->n; i++)
        if (!strcmp(ns->names[i], name))
            return true;
    return false;
}

static void collect_target(Sema *s, NameSet *ns, const Expr *t)
{
    if (!t)
        return;
    if (t->kind == EX_NAME && t->str && !nameset_has(ns, t->str))
        ARENA_PUSH(s->a, ns->names, ns->n, ns->cap, t->str);
    if (t->kind == EX_TUPLE || t->kind == EX_LIST)
        for (int i = 0; i < t->list.n; i++)
            collect_target(s, ns, t->list.elts[i]);
}

static void collect_assigned(Sema *s, NameSet *ns, const Block *b)
{
    for (int i = 0; i < b->n; i++) {
        const Stmt *st = b->stmts[i];
        if (!st)
            continue;
        switch (st->kind) {
        case ST_ASSIGN:
            for (int k = 0; k < st->assign.ntargets; k++)
                collect_target(s, ns, st->assign.targets[k]);
            break;
        case ST_AUGASSIGN: collect_target(s, ns, st->aug.target); break;
        case ST_IF:
            collect_assigned(s, ns, &st->if_.then);
            collect_assigned(s, ns, &st->if_.els);
            break;
        case ST_FOR:
            collect_target(s, ns, st->for_.target);
            collect_assigned(s, ns, &st->for_.body);
            break;
        case ST_WHILE: collect_assigned(s, ns, &st->while_.body); break;
        default: break;
        }
    }
}

static void assign_target(Sema *s, Expr *t, Sem v, SrcLoc value_loc)
{
    if (!t)
        return;
    switch (t->kind) {
    case EX_NAME:
        if (v.kind == SEM_VOID) {
            diag_error(s->diag, value_loc, "this expression has no value (it returns None)");
            v = sem_error();
        }
        t->sem = v;
        env_set(s, &s->fn->env, t->str, v, t->loc);
        return;
    case EX_TUPLE:
    case EX_LIST:
        if (is_error(v)) {
            for (int i = 0; i < t->list.n; i++)
                assign_target(s, t->list.elts[i], v, value_loc);
            return;
        }
        /* a constexpr tuple or a run-time one (a helper's several results) */
        bool is_const = v.kind == SEM_CONST && v.cv.kind == CV_TUPLE;
        if (is_const || v.kind == SEM_TUPLE) {
            int n = is_const ? v.cv.tuple.n : v.nelems;
            if (n != t->list.n) {
                diag_error(s->diag, t->loc, "cannot unpack %d values into %d names", n, t->list.n);
                for (int i = 0; i < t->list.n; i++)
                    assign_target(s, t->list.elts[i], sem_error(), value_loc);
                return;
            }
            t->sem = v;
            for (int i = 0; i < n; i++)
                assign_target(s, t->list.elts[i],
                              is_const ? sem_const(v.cv.tuple.elems[i]) : v.elems[i], value_loc);
            return;
        }
        diag_error(s->diag, t->loc, "cannot unpack %s (only tuples unpack)", sem_describe(s, v));
        for (int i = 0; i < t->list.n; i++)
            assign_target(s, t->list.elts[i], sem_error(), value_loc);
        return;
    case EX_SUBSCRIPT:
        diag_error(s->diag, t->loc,
                   "assigning to an element of a block is not supported (blocks "
                   "are values); build a new block, e.g. with tl.where");
        return;
    default: diag_error(s->diag, t->loc, "cannot assign to this expression"); return;
    }
}

/* A constexpr number assigned in a run-time loop body becomes a run-time value of its natural
 * type (Triton turns loop-carried Python scalars into tensors). */
static void demote_assigned(Sema *s, const Block *body)
{
    NameSet ns = {0};
    collect_assigned(s, &ns, body);
    for (int i = 0; i < ns.n; i++) {
        Binding *b = env_find(&s->fn->env, ns.names[i]);
        if (b && b->partial == DEFINED && b->sem.kind == SEM_CONST && const_is_number(&b->sem.cv))
            b->sem = sem_value(b->sem.type);
    }
}

/* After a run-time loop body: every variable bound before keeps its type; names first bound in
 * the body are local to it. */
static void check_loop_carried(Sema *s, const Env *before, SrcLoc loop_loc)
{
    Env *env = &s->fn->env;
    for (int i = 0; i < env->n; i++) {
        Binding *after = &env->items[i];
        Binding *pre = NULL;
        for (int k = before->n - 1; k >= 0; k--)
            if (!strcmp(before->items[k].name, after->name)) {
                pre = &before->items[k];
                break;
            }
        if (!pre) {
            if (after->partial == DEFINED) {
                after->partial = LOOP_LOCAL;
                after->where = loop_loc;
            }
            continue;
        }
        if (pre->partial != DEFINED || after->partial != DEFINED) {
            if (after->partial == ONE_BRANCH && pre->partial == DEFINED) {
                /* assigned in one branch inside the loop: fine if the type is kept. */
            } else {
                continue;
            }
        }
        if (is_error(pre->sem) || is_error(after->sem) || sem_same(pre->sem, after->sem)) {
            *after = *pre;
            continue;
        }
        Type tb, ta;
        bool hb = operand_type(pre->sem, &tb), ha = operand_type(after->sem, &ta);
        if (hb && ha && type_equal(tb, ta)) {
            Sem keep = pre->sem;
            *after = *pre;
            after->sem = keep.kind == SEM_VALUE ? keep : sem_value(tb);
            continue;
        }
        diag_error(s->diag, after->assigned_at,
                   "loop-carried variable '%s' has type %s before the loop but %s after an "
                   "iteration",
                   after->name, hb ? tstr(s, tb) : sem_describe(s, pre->sem),
                   ha ? tstr(s, ta) : sem_describe(s, after->sem));
        *after = *pre;
        after->sem = sem_error();
    }
}

/* range(...) / tl.range(...) / tl.static_range(...) bounds: (start, end, step). */
static bool range_bounds(Sema *s, Expr *call, Sem out[3])
{
    Expr *a1 = arg(call, 0), *a2 = arg(call, 1), *a3 = arg(call, 2);
    if (!a2) {
        out[0] = sem_int(0);
        out[1] = a1->sem;
    } else {
        out[0] = a1->sem;
        out[1] = a2->sem;
    }
    out[2] = a3 ? a3->sem : sem_int(1);
    Expr *exprs[3] = {a2 ? a1 : NULL, a2 ? a2 : a1, a3};
    static const char *const what[3] = {"start", "end", "step"};
    bool ok = true;
    for (int i = 0; i < 3; i++) {
        Sem v = out[i];
        if (is_error(v)) {
            ok = false;
            continue;
        }
        Type t;
        if (!operand_type(v, &t) || t.rank != 0 || t.is_ptr || !dtype_is_int(t.dtype)) {
            diag_error(s->diag, exprs[i] ? exprs[i]->loc : call->loc,
                       "range's %s must be an integer scalar, got %s", what[i], sem_describe(s, v));
            ok = false;
        }
    }
    if (ok && out[2].kind == SEM_CONST && const_as_int(&out[2].cv) == 0) {
        diag_error(s->diag, a3->loc, "range's step must not be zero");
        ok = false;
    }
    return ok;
}

static void stmt(Sema *s, Stmt *st, bool tail);

/* After an error in a for loop's header: still analyse the body (for its own errors), with the
 * target bound to an error so that its uses stay silent. */
static void for_body_fallback(Sema *s, Stmt *st)
{
    Expr *target = st->for_.target;
    Env saved = env_copy(s, &s->fn->env);
    if (target && target->kind == EX_NAME && target->str)
        env_set(s, &s->fn->env, target->str, sem_error(), target->loc);
    s->fn->loop_depth++;
    block(s, &st->for_.body, false);
    s->fn->loop_depth--;
    s->fn->env = saved;
}

static void for_stmt(Sema *s, Stmt *st)
{
    Expr *it = st->for_.iter;
    Expr *target = st->for_.target;
    if (!it || it->kind != EX_CALL) {
        if (it)
            expr(s, it);
        diag_error(s->diag, it ? it->loc : st->loc,
                   "for loops iterate over range(...), "
                   "tl.range(...) or tl.static_range(...)");
        for_body_fallback(s, st);
        return;
    }
    Sem f = expr(s, it->call.fn);
    bool args_ok = analyse_args(s, it);
    if (is_error(f)) {
        for_body_fallback(s, st);
        return;
    }
    if (f.kind != SEM_BUILTIN || (f.builtin != BI_RANGE && f.builtin != BI_STATIC_RANGE)) {
        diag_error(s->diag, it->loc,
                   "for loops iterate over range(...), tl.range(...) or "
                   "tl.static_range(...)");
        for_body_fallback(s, st);
        return;
    }
    if (!target || target->kind != EX_NAME) {
        diag_error(s->diag, target ? target->loc : st->loc, "a for loop's target must be one name");
        return;
    }
    Builtin b = (Builtin)f.builtin;
    if (!args_ok || !bind_builtin_args(s, it, b, NULL)) {
        for_body_fallback(s, st);
        return;
    }
    Sem bounds[3];
    if (!range_bounds(s, it, bounds)) {
        for_body_fallback(s, st);
        return;
    }
    it->sem = sem_void();
    if (b == BI_RANGE) {
        for (int i = 3; i <= 4; i++) {
            int64_t v;
            if (!arg_is_none(it, i) &&
                !const_int_arg(s, it, i, "range()", i == 3 ? "num_stages" : "loop_unroll_factor",
                               &v))
                return;
        }
    }
    if (b == BI_STATIC_RANGE) {
        for (int i = 0; i < 3; i++) {
            if (bounds[i].kind != SEM_CONST) {
                Expr *x = arg(it, arg(it, 1) ? i : (i == 1 ? 0 : 2));
                diag_error(s->diag, x ? x->loc : it->loc,
                           "static_range's bounds must be constexprs, got %s",
                           sem_describe(s, bounds[i]));
                for_body_fallback(s, st);
                return;
            }
        }
        int64_t lo = const_as_int(&bounds[0].cv), hi = const_as_int(&bounds[1].cv),
                step = const_as_int(&bounds[2].cv);
        int64_t n = 0;
        if (step > 0 && hi > lo)
            n = (hi - lo + step - 1) / step;
        else if (step < 0 && lo > hi)
            n = (lo - hi - step - 1) / -step;
        if (n > MAX_STATIC_UNROLL) {
            diag_error(s->diag, it->loc,
                       "static_range would unroll %lld iterations; the limit is "
                       "%d",
                       (long long)n, MAX_STATIC_UNROLL);
            return;
        }
        st->for_.nunrolled = (int)n;
        st->for_.unrolled = arena_alloc(s->a, (size_t)(n ? n : 1) * sizeof(Block));
        int errors_before = s->diag->errors;
        for (int64_t i = 0; i < n; i++) {
            if (!expand(s, it->loc))
                break;
            Sem iv = sem_int(lo + i * step);
            target->sem = iv;
            env_set(s, &s->fn->env, target->str, iv, target->loc);
            st->for_.unrolled[i] = ast_clone_block(s->a, st->for_.body);
            block(s, &st->for_.unrolled[i], false);
            if (s->diag->errors > errors_before)
                break; /* one report per error, not one per iteration */
        }
        return;
    }
    /* A run-time loop: the induction variable is int32 unless a bound is int64. */
    DType iv_dt = DT_I32;
    for (int i = 0; i < 3; i++) {
        Type t;
        if (operand_type(bounds[i], &t) && (bounds[i].kind == SEM_VALUE || t.dtype != DT_I32)) {
            if (t.dtype == DT_I64 || t.dtype == DT_U64 || t.dtype == DT_U32)
                iv_dt = DT_I64;
        }
    }
    demote_assigned(s, &st->for_.body);
    Env before = env_copy(s, &s->fn->env);
    Sem iv = sem_value(type_scalar(iv_dt));
    target->sem = iv;
    env_set(s, &s->fn->env, target->str, iv, target->loc);
    s->fn->loop_depth++;
    block(s, &st->for_.body, false);
    s->fn->loop_depth--;
    check_loop_carried(s, &before, st->loc);
}

static void while_stmt(Sema *s, Stmt *st)
{
    demote_assigned(s, &st->while_.body);
    Sem c = expr(s, st->while_.cond);
    if (!is_error(c) && c.kind == SEM_CONST && !const_truthy(&c.cv))
        return; /* while False: nothing runs */
    if (!is_error(c) && c.kind != SEM_CONST)
        scalar_condition(s, st->while_.cond, c, "'while'");
    Env before = env_copy(s, &s->fn->env);
    s->fn->loop_depth++;
    block(s, &st->while_.body, false);
    s->fn->loop_depth--;
    check_loop_carried(s, &before, st->loc);
}

/* Merges the environments of the two branches of a run-time if (Triton requires a variable live
 * after the if to have one type in both branches). */
static void merge_branches(Sema *s, Env *then_env, Env *else_env, SrcLoc if_loc)
{
    Env merged = env_copy(s, then_env);
    for (int i = 0; i < else_env->n; i++)
        if (!env_find(&merged, else_env->items[i].name))
            ARENA_PUSH(s->a, merged.items, merged.n, merged.cap, else_env->items[i]);
    for (int i = 0; i < merged.n; i++) {
        Binding *m = &merged.items[i];
        Binding *t = env_find(then_env, m->name), *e = env_find(else_env, m->name);
        if (!t || !e || t->partial != DEFINED || e->partial != DEFINED) {
            if (m->partial == DEFINED || (t && e)) {
                if (!(t && e && t->partial == e->partial && t->partial != DEFINED)) {
                    m->partial = ONE_BRANCH;
                    m->where = if_loc;
                }
            }
            continue;
        }
        if (is_error(t->sem) || is_error(e->sem) || sem_same(t->sem, e->sem))
            continue;
        Type tt, te;
        bool ht = operand_type(t->sem, &tt), he = operand_type(e->sem, &te);
        if (ht && he && type_equal(tt, te)) {
            m->sem = sem_value(tt);
            continue;
        }
        diag_error(s->diag, if_loc, "'%s' has type %s in the then branch but %s in the else branch",
                   m->name, ht ? tstr(s, tt) : sem_describe(s, t->sem),
                   he ? tstr(s, te) : sem_describe(s, e->sem));
        m->sem = sem_error();
    }
    s->fn->env = merged;
}

static void if_stmt(Sema *s, Stmt *st, bool tail)
{
    Sem c = expr(s, st->if_.cond);
    st->if_.static_taken = -1;
    if (is_error(c)) {
        /* Still look at both branches for their own errors. */
        Env saved = env_copy(s, &s->fn->env);
        block(s, &st->if_.then, false);
        s->fn->env = env_copy(s, &saved);
        block(s, &st->if_.els, false);
        s->fn->env = saved;
        return;
    }
    if (c.kind == SEM_CONST) {
        /* Decided at compile time; only the taken branch is analysed (as Triton does). */
        bool taken = const_truthy(&c.cv);
        st->if_.static_taken = taken ? 1 : 0;
        block(s, taken ? &st->if_.then : &st->if_.els, tail);
        return;
    }
    if (!scalar_condition(s, st->if_.cond, c, "'if'"))
        return;
    Env before = env_copy(s, &s->fn->env);
    s->fn->runtime_if_depth++;
    block(s, &st->if_.then, false);
    Env then_env = s->fn->env;
    s->fn->env = env_copy(s, &before);
    block(s, &st->if_.els, false);
    Env else_env = s->fn->env;
    s->fn->runtime_if_depth--;
    merge_branches(s, &then_env, &else_env, st->loc);
}

static void return_stmt(Sema *s, Stmt *st, bool tail)
{
    FuncCtx *fn = s->fn;
    Sem v = st->ret.value ? expr(s, st->ret.value) : sem_const((ConstVal){.kind = CV_NONE});
    if (is_error(v))
        return;
    if (fn->loop_depth > 0) {
        diag_error(s->diag, st->loc, "'return' inside a loop is not supported (as in Triton)");
        return;
    }
    bool none = v.kind == SEM_CONST && v.cv.kind == CV_NONE;
    if (fn->is_kernel) {
        if (!none) {
            diag_error(s->diag, st->ret.value->loc,
                       "a kernel cannot return a value (write results "
                       "with tl.store)");
        }
        return;
    }
    if (!tail) {
        diag_error(s->diag, st->loc,
                   "a helper may return only as the last statement of its body "
                   "(tric inlines helpers)");
        return;
    }
    fn->ret = none ? sem_void() : v;
    fn->has_ret = true;
}

/* Triton's tl.multiple_of, max_contiguous and max_constancy mark the value itself (an attribute
 * on the op that defines it, or on the loop for a loop-carried value), so tutorial 08 writes
 * `tl.multiple_of(a_ptrs, [16, 16])` as a statement. Here a hint is an op whose result carries
 * it: such a statement on a name becomes `a_ptrs = tl.multiple_of(a_ptrs, [16, 16])`, so the
 * uses after it see the hint (in Triton the uses before it do too) and a loop carries the name. */
static void hint_statement(Sema *s, Stmt *st)
{
    Expr *call = st->expr.value;
    if (!call || call->kind != EX_CALL || call->sem.kind != SEM_VALUE || !call->call.fn)
        return;
    Sem f = call->call.fn->sem;
    if (f.kind != SEM_BUILTIN || (f.builtin != BI_MULTIPLE_OF && f.builtin != BI_MAX_CONTIGUOUS &&
                                  f.builtin != BI_MAX_CONSTANCY))
        return;
    Expr *input = call->call.nbound > 0 ? call->call.bound[0] : NULL;
    if (!input || input->kind != EX_NAME || !input->str)
        return;
    Expr *target = arena_alloc(s->a, sizeof *target);
    *target = *input;
    Expr **targets = arena_alloc(s->a, sizeof *targets);
    targets[0] = target;
    st->kind = ST_ASSIGN;
    st->assign.targets = targets;
    st->assign.ntargets = 1;
    st->assign.annotation = NULL;
    st->assign.value = call;
    assign_target(s, target, call->sem, call->loc);
}

static void stmt(Sema *s, Stmt *st, bool tail)
{
    if (!st)
        return;
    switch (st->kind) {
    case ST_EXPR:
        expr(s, st->expr.value);
        hint_statement(s, st);
        break;
    case ST_ASSIGN: {
        Sem v = expr(s, st->assign.value);
        if (st->assign.annotation) {
            /* Only tl.constexpr changes what an annotated assignment means; another annotation
             * (`offs: tl.tensor = ...`, `left: tl.int32 = 0`) is a hint Triton evaluates and sets
             * aside, so one naming what tric does not know is no error. */
            Diag quiet = {0}, *loud = s->diag;
            s->diag = &quiet;
            Sem a = expr(s, st->assign.annotation);
            s->diag = loud;
            diag_free(&quiet);
            if (!is_error(a) && !is_error(v) && a.kind == SEM_BUILTIN &&
                a.builtin == BI_CONSTEXPR && v.kind != SEM_CONST) {
                diag_error(s->diag, st->assign.value->loc,
                           "a tl.constexpr variable needs a "
                           "compile-time value, got %s",
                           sem_describe(s, v));
                v = sem_error();
            }
        }
        for (int i = 0; i < st->assign.ntargets; i++)
            assign_target(s, st->assign.targets[i], v,
                          st->assign.value ? st->assign.value->loc : st->loc);
        break;
    }
    case ST_AUGASSIGN: {
        Expr *t = st->aug.target;
        Sem r = expr(s, st->aug.value);
        if (!t || t->kind != EX_NAME) {
            diag_error(s->diag, t ? t->loc : st->loc,
                       "only a name can be the target of %s=", binop_str(st->aug.op));
            break;
        }
        Sem l = name_expr(s, t);
        /* The target's Sem is the new binding: the result of `target op value`. */
        Sem v = binary_sems(s, st->loc, st->aug.op, l, r);
        t->sem = v;
        env_set(s, &s->fn->env, t->str, v, t->loc);
        break;
    }
    case ST_IF: if_stmt(s, st, tail); break;
    case ST_FOR: for_stmt(s, st); break;
    case ST_WHILE: while_stmt(s, st); break;
    case ST_RETURN: return_stmt(s, st, tail); break;
    case ST_PASS:
    case ST_IMPORT: break;
    case ST_BREAK:
        diag_error(s->diag, st->loc, "'break' is not supported in tric kernels (as in Triton)");
        break;
    case ST_CONTINUE:
        diag_error(s->diag, st->loc, "'continue' is not supported in tric kernels (as in Triton)");
        break;
    case ST_RAISE: /* only here when reached: a branch constexprs leave untaken is never analysed */
        diag_error(s->diag, st->loc,
                   "exceptions ('raise') are not supported in tric kernels (as in Triton); only a "
                   "branch that constexprs leave untaken may hold one");
        break;
    case ST_ASSERT: {
        Sem c = expr(s, st->assert_.cond);
        if (st->assert_.msg)
            expr(s, st->assert_.msg);
        if (!is_error(c) && c.kind == SEM_CONST && !const_truthy(&c.cv)) {
            Expr *m = st->assert_.msg;
            if (m && m->sem.kind == SEM_CONST && m->sem.cv.kind == CV_STR)
                diag_error(s->diag, st->loc, "assertion failed: %s", m->sem.cv.s);
            else
                diag_error(s->diag, st->loc, "assertion failed");
        } else if (!is_error(c) && c.kind == SEM_VALUE && c.type.is_ptr) {
            diag_error(s->diag, st->assert_.cond->loc, "assert's condition cannot be a pointer");
        } else if (!is_error(c) && c.kind != SEM_VALUE && c.kind != SEM_CONST) {
            diag_error(s->diag, st->assert_.cond->loc, "assert's condition must be a value, got %s",
                       sem_describe(s, c));
        }
        break;
    }
    case ST_DEF:
        diag_error(s->diag, st->loc,
                   "nested function definitions are not supported; define "
                   "helpers at module level with @triton.jit");
        break;
    }
}

/* Whether b, as analysed, always returns: its last statement is a return, or an `if` decided at
 * compile time whose taken branch always returns. */
static bool block_returns(const Block *b)
{
    const Stmt *last = b->n ? b->stmts[b->n - 1] : NULL;
    if (!last)
        return false;
    if (last->kind == ST_RETURN)
        return true;
    if (last->kind == ST_IF && last->if_.static_taken >= 0)
        return block_returns(last->if_.static_taken ? &last->if_.then : &last->if_.els);
    return false;
}

void block(Sema *s, Block *b, bool tail)
{
    for (int i = 0; i < b->n; i++) {
        Stmt *st = b->stmts[i];
        bool last = i == b->n - 1;
        /* In a helper's tail, an `if` decided at compile time whose taken branch returns ends the
         * body, as in Python: what follows is dead for this call and is dropped from its copy
         * (FlagGems' get_dtype_min returns from one `if dtype_.is_floating():` of several). */
        bool early = tail && !last && st && st->kind == ST_IF && !s->fn->is_kernel;
        stmt(s, st, tail && (last || early));
        if (early && st->if_.static_taken >= 0 &&
            block_returns(st->if_.static_taken ? &st->if_.then : &st->if_.els)) {
            b->n = i + 1;
            return;
        }
    }
}
