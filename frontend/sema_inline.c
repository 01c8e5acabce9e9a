/* sema_inline.c: calls of @jit helpers. Arguments bound to parameters (keywords, defaults), then
 * the helper inlined: a clone of its body per call site, specialized and analysed with the
 * arguments' Sems (call.inlined); the tl.rand family comes from random.c's library. */
#include "frontend/sema_internal.h"

#include <string.h>

/* ---- helpers: inlining ------------------------------------------------------------------------ */

/* Analyses an expression of the module scope (a default value, a global) in a fresh context. */
Sem global_expr(Sema *s, Expr *e)
{
    FuncCtx ctx = {0};
    FuncCtx *saved = s->fn;
    s->fn = &ctx;
    Sem r = expr(s, e);
    s->fn = saved;
    return r;
}

/* A call's arguments per parameter of callee: positional, then keywords (Python's rules); NULL
 * for a parameter left to its default. NULL with a diagnostic on a wrong call. */
Expr **bind_call_args(Sema *s, Expr *call, const FuncDef *callee, const char *shown, SrcLoc cloc)
{
    int np = callee->nparams, npos = callee->npositional;
    Expr **bound = arena_alloc(s->a, (size_t)(np ? np : 1) * sizeof *bound);
    if (call->call.nargs > npos) {
        diag_error(s->diag, cloc, "%s takes %d positional %s but %d %s given", shown, npos,
                   plural(npos, "argument", "arguments"), call->call.nargs,
                   plural(call->call.nargs, "was", "were"));
        return NULL;
    }
    for (int i = 0; i < call->call.nargs; i++)
        bound[i] = call->call.args[i];
    for (int k = 0; k < call->call.nkwargs; k++) {
        const char *kw = call->call.kwnames[k] ? call->call.kwnames[k] : "";
        SrcLoc kl = kwname_loc(expr_start(call->call.kwargs[k]), kw);
        int idx = -1;
        for (int i = 0; i < np; i++)
            if (callee->params[i].name && !strcmp(callee->params[i].name, kw))
                idx = i;
        if (idx < 0) {
            diag_error(s->diag, kl, "%s got an unexpected keyword argument '%s'", shown, kw);
            return NULL;
        }
        if (bound[idx]) {
            diag_error(s->diag, kl, "%s got multiple values for argument '%s'", shown, kw);
            return NULL;
        }
        bound[idx] = call->call.kwargs[k];
    }
    return bound;
}

/* bound[i], the argument of parameter p (a clone's), or p's default when the call left it out
 * (analysed in the module's scope); false with a diagnostic when p has none. */
bool bind_default(Sema *s, Expr **bound, int i, const Param *p, const char *shown, SrcLoc cloc)
{
    if (bound[i])
        return true;
    if (!p->default_value) {
        diag_error(s->diag, cloc, "%s missing required argument '%s'", shown, p->name);
        return false;
    }
    bound[i] = p->default_value;
    return !is_error(global_expr(s, bound[i]));
}

/* The @jit function a module-level `NAME = triton.jit(impl)` made of impl (parser.y
 * build_module), for the hint when impl itself is called; NULL when there is none. */
static const FuncDef *jit_wrapper_of(const Module *m, const char *impl)
{
    for (int i = 0; i < m->nfuncs; i++) {
        const FuncDef *f = m->funcs[i];
        if (!f || !f->is_jit || f->ndecorators != 1 || f->decorators[0]->kind != EX_CALL)
            continue;
        const Expr *d = f->decorators[0];
        if (d->call.nargs == 1 && d->call.args[0]->kind == EX_NAME && d->call.args[0]->str &&
            !strcmp(d->call.args[0]->str, impl))
            return f;
    }
    return NULL;
}

static bool is_library_func(Sema *s, const FuncDef *f)
{
    if (!s->random_lib)
        return false;
    for (int i = 0; i < s->random_lib->nfuncs; i++)
        if (s->random_lib->funcs[i] == f)
            return true;
    return false;
}

/* A call of the random library from the user's code: the seed an integer scalar, the counters
 * 32-bit integers (tric's Philox is Triton's 32-bit one), n_rounds a positive constexpr; then
 * the library function is inlined with the library as the module its names resolve in (its own
 * functions, no user globals), so a user's names never change what it means. */
static Sem library_call(Sema *s, Expr *call, FuncDef *callee, SrcLoc cloc)
{
    const char *name = callee->name ? callee->name : "?";
    const char *shown = arena_printf(s->a, "%s()", name);
    int first, last;
    if (s->module != s->random_lib && random_lookup(name, &first, &last) && first > 0) {
        Expr **bound = bind_call_args(s, call, callee, shown, cloc);
        if (!bound)
            return sem_error();
        for (int i = 0; i <= last && i < callee->nparams; i++) {
            Expr *x = bound[i];
            if (!x)
                continue; /* missing: inline_call reports it */
            Sem v = x->sem;
            Type t;
            const char *what = i == 0                ? "seed"
                               : callee->nparams > 4 ? arena_printf(s->a, "c%d", i - 1)
                                                     : "offset";
            if (is_error(v))
                return sem_error();
            bool is_int =
                operand_type(v, &t) && !t.is_ptr && dtype_is_int(t.dtype) && t.dtype != DT_I1;
            if (i == 0 && (!is_int || t.rank != 0)) {
                diag_error(s->diag, expr_start(x), "%s's seed must be an integer scalar, got %s",
                           shown, sem_describe(s, v));
                return sem_error();
            }
            if (i > 0 && (!is_int || (v.kind != SEM_CONST && dtype_bits(t.dtype) != 32 &&
                                      dtype_bits(t.dtype) != 64))) {
                diag_error(s->diag, expr_start(x),
                           "%s's %s must hold 32- or 64-bit integers, got %s", shown, what,
                           sem_describe(s, v));
                return sem_error();
            }
        }
        Expr *nr =
            callee->nparams > 0 && !strcmp(callee->params[callee->nparams - 1].name, "n_rounds")
                ? bound[callee->nparams - 1]
                : NULL;
        if (nr && !(nr->sem.kind == SEM_CONST && nr->sem.cv.kind == CV_INT && nr->sem.cv.i > 0)) {
            diag_error(s->diag, expr_start(nr),
                       "%s's n_rounds must be a positive constexpr int, got %s", shown,
                       sem_describe(s, nr->sem));
            return sem_error();
        }
    }
    const Module *saved_module = s->module;
    Env saved_globals = s->globals;
    s->module = s->random_lib;
    s->globals = (Env){0};
    Sem r = inline_call(s, call, callee, cloc);
    s->module = saved_module;
    s->globals = saved_globals;
    return r;
}

Sem inline_call(Sema *s, Expr *call, FuncDef *callee, SrcLoc cloc)
{
    const char *name = callee->name ? callee->name : "?";
    if (is_library_func(s, callee) && s->module != s->random_lib)
        return library_call(s, call, callee, cloc);
    if (!callee->is_jit) {
        const FuncDef *wrapper = jit_wrapper_of(s->module, name);
        diag_error(s->diag, cloc,
                   "'%s' is not a @triton.jit function; a kernel can call only "
                   "@triton.jit helpers and tl builtins%s%s%s%s",
                   name, wrapper ? " (call '" : "", wrapper ? wrapper->name : "",
                   wrapper ? "', its triton.jit(" : "",
                   wrapper ? arena_printf(s->a, "%s))", name) : "");
        return sem_error();
    }
    for (int i = 0; i < s->inline_depth; i++) {
        if (s->inline_stack[i] == callee) {
            diag_error(s->diag, cloc,
                       "recursive call of '%s' is not supported (tric inlines "
                       "helpers)",
                       name);
            return sem_error();
        }
    }
    if (!expand(s, cloc))
        return sem_error();
    if (s->inline_depth >= MAX_INLINE_DEPTH) {
        diag_error(s->diag, cloc, "helpers nest more than %d deep", MAX_INLINE_DEPTH);
        return sem_error();
    }
    /* Bind arguments: positional, then keywords, then defaults (Python's rules). */
    int np = callee->nparams;
    const char *shown = arena_printf(s->a, "%s()", name);
    Expr **bound = bind_call_args(s, call, callee, shown, cloc);
    if (!bound)
        return sem_error();
    FuncDef *clone = ast_clone_func(s->a, callee);
    if (!clone || clone->nparams != np) {
        TRIC_INTERNAL(s->diag, "ast_clone_func returned a function of another shape");
        return sem_error();
    }
    FuncCtx ctx = {.func = clone, .is_kernel = false};
    for (int i = 0; i < np; i++) {
        Param *p = &clone->params[i];
        if (!bind_default(s, bound, i, p, shown, cloc))
            return sem_error();
        Sem v = bound[i]->sem;
        /* No check against a `tl.constexpr` annotation: Triton specializes a helper on its
         * arguments' values, not on its annotations, so such a parameter given a run-time value
         * is an ordinary one for this call (tutorial 06 passes its offs_m tensor and run-time
         * N_CTX so); a use that needs a constexpr says so at the use. */
        if (v.kind == SEM_VOID) {
            diag_error(s->diag, bound[i]->loc, "argument '%s' of %s has no value", p->name, shown);
            return sem_error();
        }
        /* A constexpr argument makes the parameter a constexpr, as Triton specializes helpers
         * on their non-tensor arguments. */
        p->is_constexpr = v.kind == SEM_CONST;
        p->sem = v;
        p->divisibility = 1;
        env_set(s, &ctx.env, p->name, v, p->loc);
    }
    call->call.bound = bound;
    call->call.nbound = np;
    call->call.inlined = clone;
    s->inline_stack[s->inline_depth++] = callee;
    FuncCtx *saved = s->fn;
    s->fn = &ctx;
    int errors_before = s->diag->errors;
    block(s, &clone->body, true);
    s->fn = saved;
    s->inline_depth--;
    if (s->diag->errors > errors_before)
        return sem_error();
    return ctx.has_ret ? ctx.ret : sem_void();
}
