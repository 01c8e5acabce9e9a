/* sema_builtins.c: the tl.* builtins (frontend.h's TRIC_BUILTINS table). Binding a call's
 * arguments to the builtin's parameters (call.bound), the argument checks they share, each
 * builtin's rule (it types the call and fills its ResolvedCall), and builtin_call, which calls
 * the rule the table names. The memory builtins (load, store, atomics, block pointers, tensor
 * descriptors) are in sema_memory.c. */
#include "frontend/sema_internal.h"
#include "ir/ir.h" /* the libdevice functions (TRIC_LIBDEVICE_FNS), memory orders */

#include <math.h>
#include <string.h>

/* ---- builtin calls --------------------------------------------------------------------------- */

typedef struct ParamSpec {
    char name[32];
    bool optional;
} ParamSpec;

static const char *const builtin_param_strings[BI_COUNT] = {
#define X(e, name, params, sema_rule, build, doc) [e] = params,
    TRIC_BUILTINS(X)
#undef X
};

static int builtin_params(Builtin b, ParamSpec *out)
{
    const char *p = builtin_param_strings[b];
    int n = 0;
    while (*p && n < MAX_BUILTIN_PARAMS) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        size_t len = strcspn(p, " ");
        ParamSpec ps = {0};
        size_t nl = len;
        if (p[len - 1] == '=') {
            ps.optional = true;
            nl--;
        }
        if (nl >= sizeof ps.name)
            nl = sizeof ps.name - 1;
        memcpy(ps.name, p, nl);
        out[n++] = ps;
        p += len;
    }
    return n;
}

/* The parameter that takes the rest of the positional arguments (Triton's *shape / *dims /
 * *values), or -1. */
static int varargs_param(Builtin b)
{
    switch (b) {
    case BI_RESHAPE:
    case BI_VIEW:
    case BI_BROADCAST_TO:
    case BI_PERMUTE:
    case BI_TRANS: return 1;
    case BI_STATIC_PRINT: return 0;
    case BI_DEVICE_PRINT: return 1;
    default: return -1;
    }
}

/* What a call of builtin b is called in messages: "load()", "x.to()", "min()"; a libdevice
 * function as the source spells it, "libdevice.asin()". */
const char *callee_display(Sema *s, Expr *call, Builtin b)
{
    Expr *fn = call->call.fn;
    if (b == BI_LIBDEVICE1 || b == BI_LIBDEVICE2) {
        const char *text = dotted_text(s, fn);
        if (text)
            return arena_printf(s->a, "%s()", text);
        return arena_printf(s->a, "libdevice.%s()", libdevice_info(fn->sem.libdevice_fn)->name);
    }
    if (fn->kind == EX_ATTR && fn->attr.name)
        return arena_printf(s->a, "%s()", fn->attr.name);
    if (fn->kind == EX_NAME && fn->str)
        return arena_printf(s->a, "%s()", fn->str);
    return arena_printf(s->a, "%s()", builtin_name(b));
}

SrcLoc callee_loc(Expr *call)
{
    Expr *fn = call->call.fn;
    if (fn->kind == EX_ATTR && fn->attr.name_loc.line > 0)
        return fn->attr.name_loc;
    return fn->loc;
}

const char *plural(int n, const char *one, const char *many) { return n == 1 ? one : many; }

/* Matches positional and keyword arguments to the builtin's parameters (Python's rules). On
 * success call.bound / call.nbound hold them in parameter order, receiver first for a method. */
bool bind_builtin_args(Sema *s, Expr *call, Builtin b, Expr *receiver)
{
    ParamSpec ps[MAX_BUILTIN_PARAMS];
    int np = builtin_params(b, ps);
    Expr **bound = arena_alloc(s->a, (size_t)(np ? np : 1) * sizeof *bound);
    int pos = 0, given = call->call.nargs;
    const char *shown = callee_display(s, call, b);
    if (receiver)
        bound[pos++] = receiver;
    int va = varargs_param(b);
    int required = 0;
    for (int i = 0; i < np; i++)
        required += !ps[i].optional;
    if (receiver)
        required--;
    for (int i = 0; i < call->call.nargs; i++) {
        if (pos == va) {
            int rest = call->call.nargs - i;
            if (rest == 1) {
                bound[pos++] = call->call.args[i];
            } else {
                Expr *t = arena_alloc(s->a, sizeof *t);
                t->kind = EX_TUPLE;
                t->loc = call->call.args[i]->loc;
                t->list.n = rest;
                t->list.elts = arena_alloc(s->a, (size_t)rest * sizeof(Expr *));
                memcpy(t->list.elts, call->call.args + i, (size_t)rest * sizeof(Expr *));
                bound[pos++] = t;
            }
            break;
        }
        if (pos >= np) {
            int maxn = np - (receiver ? 1 : 0);
            if (required == maxn)
                diag_error(s->diag, callee_loc(call), "%s takes %d %s but %d %s given", shown, maxn,
                           plural(maxn, "argument", "arguments"), given,
                           plural(given, "was", "were"));
            else
                diag_error(s->diag, callee_loc(call),
                           "%s takes from %d to %d arguments but %d %s "
                           "given",
                           shown, required, maxn, given, plural(given, "was", "were"));
            return false;
        }
        bound[pos++] = call->call.args[i];
    }
    bool ok = true;
    for (int k = 0; k < call->call.nkwargs; k++) {
        const char *kw = call->call.kwnames[k] ? call->call.kwnames[k] : "";
        SrcLoc kl = kwname_loc(expr_start(call->call.kwargs[k]), kw);
        int idx = -1;
        for (int i = receiver ? 1 : 0; i < np; i++)
            if (!strcmp(ps[i].name, kw))
                idx = i;
        if (idx < 0) {
            diag_error(s->diag, kl, "%s got an unexpected keyword argument '%s'", shown, kw);
            ok = false;
            continue;
        }
        if (bound[idx]) {
            diag_error(s->diag, kl, "%s got multiple values for argument '%s'", shown, kw);
            ok = false;
            continue;
        }
        bound[idx] = call->call.kwargs[k];
    }
    if (!ok)
        return false;
    for (int i = 0; i < np; i++) {
        if (!bound[i] && !ps[i].optional && i != va) {
            diag_error(s->diag, callee_loc(call), "%s missing required argument '%s'", shown,
                       ps[i].name);
            return false;
        }
    }
    call->call.bound = bound;
    call->call.nbound = np;
    return true;
}

/* Analyses every argument of a call (positional and keyword), so that each gets a Sem and its
 * own errors, whatever happens to the call. Returns false if any failed. */
bool analyse_args(Sema *s, Expr *call)
{
    bool ok = true;
    for (int i = 0; i < call->call.nkwargs; i++)
        if (!strcmp(call->call.kwnames[i], "**")) { /* parsed for decorators' sake only */
            diag_error(s->diag, call->call.kwargs[i]->loc,
                       "unpacking with '**' is not supported in a kernel");
            ok = false;
        }
    for (int i = 0; i < call->call.nargs; i++)
        if (is_error(expr(s, call->call.args[i])))
            ok = false;
    for (int i = 0; i < call->call.nkwargs; i++)
        if (is_error(expr(s, call->call.kwargs[i])))
            ok = false;
    return ok;
}

/* The bound argument i's Sem (NULL argument: SEM_UNSET with kind marker none -> returns false). */
Expr *arg(Expr *call, int i) { return i < call->call.nbound ? call->call.bound[i] : NULL; }

bool arg_is_none(Expr *call, int i)
{
    Expr *x = arg(call, i);
    return !x || (x->sem.kind == SEM_CONST && x->sem.cv.kind == CV_NONE);
}

/* Where to report a problem with bound argument i: its keyword if it was passed by keyword, else
 * the start of the argument. */
SrcLoc arg_loc(Expr *call, int i)
{
    Expr *x = arg(call, i);
    if (!x)
        return callee_loc(call);
    for (int k = 0; k < call->call.nkwargs; k++)
        if (call->call.kwargs[k] == x)
            return kwname_loc(expr_start(x), call->call.kwnames[k] ? call->call.kwnames[k] : "");
    return expr_start(x);
}

/* A synthetic tuple (varargs) gets its Sem here, from its elements' (already analysed). */
static void settle_synthetic(Sema *s, Expr *call)
{
    for (int i = 0; i < call->call.nbound; i++) {
        Expr *x = call->call.bound[i];
        if (!x || x->kind != EX_TUPLE || x->sem.kind != SEM_UNSET)
            continue;
        bool fresh = true, all_const = true;
        for (int k = 0; k < call->call.nargs; k++)
            if (call->call.args[k] == x)
                fresh = false;
        if (!fresh)
            continue;
        for (int k = 0; k < x->list.n; k++)
            if (x->list.elts[k]->sem.kind != SEM_CONST)
                all_const = false;
        if (!all_const) {
            x->sem = runtime_tuple(s, x);
            continue;
        }
        ConstVal cv = {.kind = CV_TUPLE};
        cv.tuple.n = x->list.n;
        cv.tuple.elems = arena_alloc(s->a, (size_t)(x->list.n ? x->list.n : 1) * sizeof(ConstVal));
        for (int k = 0; k < x->list.n; k++)
            cv.tuple.elems[k] = x->list.elts[k]->sem.cv;
        x->sem = sem_const(cv);
    }
}

bool const_int_arg(Sema *s, Expr *call, int i, const char *fname, const char *what, int64_t *out)
{
    Expr *x = arg(call, i);
    if (!x)
        return false;
    Sem v = x->sem;
    if (v.kind == SEM_CONST && (v.cv.kind == CV_INT || v.cv.kind == CV_BOOL)) {
        *out = const_as_int(&v.cv);
        return true;
    }
    if (!is_error(v))
        diag_error(s->diag, arg_loc(call, i), "%s's %s must be a constexpr int, got %s", fname,
                   what, sem_describe(s, v));
    return false;
}

bool const_bool_arg(Sema *s, Expr *call, int i, const char *fname, const char *what, bool *out)
{
    Expr *x = arg(call, i);
    if (!x)
        return false;
    Sem v = x->sem;
    if (v.kind == SEM_CONST &&
        (v.cv.kind == CV_BOOL || v.cv.kind == CV_INT || v.cv.kind == CV_NONE)) {
        *out = const_truthy(&v.cv);
        return true;
    }
    if (!is_error(v))
        diag_error(s->diag, arg_loc(call, i), "%s's %s must be a constexpr bool, got %s", fname,
                   what, sem_describe(s, v));
    return false;
}

static bool dtype_arg(Sema *s, Expr *call, int i, const char *fname, DType *out)
{
    Expr *x = arg(call, i);
    if (!x)
        return false;
    Sem v = x->sem;
    if (v.kind == SEM_CONST && v.cv.kind == CV_DTYPE) {
        *out = v.cv.dtype;
        return true;
    }
    if (!is_error(v))
        diag_error(s->diag, arg_loc(call, i),
                   "%s's dtype must be a constexpr dtype such as tl.float32, "
                   "got %s",
                   fname, sem_describe(s, v));
    return false;
}

/* A shape: a constexpr int or tuple/list of constexpr ints, each a power of two. */
bool shape_arg(Sema *s, Expr *call, int i, const char *fname, Type *out)
{
    Expr *x = arg(call, i);
    if (!x)
        return false;
    Sem v = x->sem;
    if (is_error(v)) {
        return false;
    }
    int n;
    const ConstVal *dims;
    ConstVal one;
    if (v.kind == SEM_CONST && v.cv.kind == CV_TUPLE) {
        n = v.cv.tuple.n;
        dims = v.cv.tuple.elems;
    } else if (v.kind == SEM_CONST && v.cv.kind == CV_INT) {
        one = v.cv;
        n = 1;
        dims = &one;
    } else {
        diag_error(s->diag, arg_loc(call, i),
                   "%s's shape must be a constexpr tuple of ints, got %s", fname,
                   sem_describe(s, v));
        return false;
    }
    if (n > TRIC_MAX_RANK) {
        diag_error(s->diag, arg_loc(call, i), "%s: blocks have at most %d dimensions, got %d",
                   fname, TRIC_MAX_RANK, n);
        return false;
    }
    Type t = {.rank = (uint8_t)n};
    int64_t numel = 1;
    for (int d = 0; d < n; d++) {
        if (dims[d].kind != CV_INT) {
            diag_error(s->diag, arg_loc(call, i),
                       "%s's shape must hold ints, dimension %d is not one", fname, d);
            return false;
        }
        if (!is_pow2(dims[d].i)) {
            diag_error(s->diag, arg_loc(call, i),
                       "%s: block dimensions must be powers of two, dimension %d "
                       "is %lld",
                       fname, d, (long long)dims[d].i);
            return false;
        }
        numel *= dims[d].i;
        if (numel > MAX_BLOCK_NUMEL) {
            diag_error(s->diag, arg_loc(call, i), "%s: a block holds at most %d elements", fname,
                       MAX_BLOCK_NUMEL);
            return false;
        }
        t.shape[d] = (int32_t)dims[d].i;
    }
    *out = t;
    return true;
}

/* A value operand (run-time or numeric constexpr). */
bool value_arg(Sema *s, Expr *call, int i, const char *fname, const char *what, Type *out)
{
    Expr *x = arg(call, i);
    if (!x)
        return false;
    if (is_error(x->sem))
        return false;
    if (operand_type(x->sem, out))
        return true;
    diag_error(s->diag, arg_loc(call, i), "%s's %s must be a value, got %s", fname, what,
               sem_describe(s, x->sem));
    return false;
}

static int64_t normalize_axis(int64_t axis, int rank) { return axis < 0 ? axis + rank : axis; }

/* A call of `callee` (a fresh copy of its dotted callee with the name replaced) on fresh copies of
 * input and axis, with the keywords given where their value is not NULL. */
static Expr *reduce_call(Sema *s, const Expr *fn, const char *name, const Expr *input,
                         const Expr *axis, const char **kws, const Expr **vals, int nkw)
{
    Expr *f = ast_clone_expr(s->a, fn);
    f->attr.name = name;
    Expr *c = ast_expr(s->a, EX_CALL, fn->loc);
    c->call.fn = f;
    c->call.args = arena_alloc(s->a, 2 * sizeof(Expr *));
    if (fn->attr.obj->sem.kind != SEM_VALUE) /* tl.max(x, ...), not the method x.max(...) */
        c->call.args[c->call.nargs++] = ast_clone_expr(s->a, input);
    if (axis)
        c->call.args[c->call.nargs++] = ast_clone_expr(s->a, axis);
    c->call.kwnames = arena_alloc(s->a, (size_t)(nkw + 1) * sizeof(char *));
    c->call.kwargs = arena_alloc(s->a, (size_t)(nkw + 1) * sizeof(Expr *));
    for (int i = 0; i < nkw; i++) {
        if (!vals[i])
            continue;
        c->call.kwnames[c->call.nkwargs] = kws[i];
        c->call.kwargs[c->call.nkwargs++] = ast_clone_expr(s->a, vals[i]);
    }
    return c;
}

/* tl.max(x, axis, return_indices=True) (and min): Triton's (values, indices) pair, here the
 * tuple (tl.max(x, axis), tl.argmax(x, axis, tie_break_left=...)) that the call is rewritten
 * into (x is analysed in each; FlagGems' argmax kernels reduce so). */
static Sem reduce_with_indices(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Expr *fn = call->call.fn;
    if (fn->kind != EX_ATTR || arg_is_none(call, 1)) {
        diag_error(s->diag, arg_is_none(call, 1) ? call->loc : fn->loc,
                   "%s with return_indices=True needs an axis and the tl.%s / x.%s form", fname,
                   b == BI_MAX ? "max" : "min", b == BI_MAX ? "max" : "min");
        return sem_error();
    }
    const char *kw_keep[] = {"keep_dims"};
    const Expr *keep[] = {arg(call, 4)};
    const char *kw_arg[] = {"tie_break_left", "keep_dims"};
    const Expr *arg_vals[] = {arg(call, 3), arg(call, 4)};
    Expr *value = reduce_call(s, fn, b == BI_MAX ? "max" : "min", arg(call, 0), arg(call, 1),
                              kw_keep, keep, 1);
    s->values_of_indexed_reduce = value;
    Expr *index = reduce_call(s, fn, b == BI_MAX ? "argmax" : "argmin", arg(call, 0), arg(call, 1),
                              kw_arg, arg_vals, 2);
    call->kind = EX_TUPLE;
    call->list.elts = arena_alloc(s->a, 2 * sizeof(Expr *));
    call->list.elts[0] = value;
    call->list.elts[1] = index;
    call->list.n = 2;
    return expr(s, call);
}

/* Argument i, a constexpr axis of the block t (None: 0; negative counts from the end),
 * normalized into *ax; false with a diagnostic when it is out of range. */
static bool axis_arg(Sema *s, Expr *call, int i, const char *fname, Type t, int64_t *ax)
{
    int64_t axis = 0;
    if (!arg_is_none(call, i) && !const_int_arg(s, call, i, fname, "axis", &axis))
        return false;
    *ax = normalize_axis(axis, t.rank);
    if (*ax < 0 || *ax >= t.rank) {
        diag_error(s->diag, arg_loc(call, i), "%s: axis %lld is out of range for %s", fname,
                   (long long)axis, tstr(s, t));
        return false;
    }
    return true;
}

/* The value of a reduction of the block t along argument 1's constexpr axis (None: every dim)
 * in dtype rdt, keep_dims as given; an error for a scalar or an axis out of range. */
static Sem reduced_value(Sema *s, Expr *call, const char *fname, Type t, DType rdt, bool keep)
{
    if (t.rank == 0) {
        diag_error(s->diag, arg_loc(call, 0), "%s needs a block, got the scalar %s", fname,
                   tstr(s, t));
        return sem_error();
    }
    Type r = type_scalar(rdt);
    ResolvedCall *rc = call->call.resolved;
    rc->keep_dims = keep;
    if (arg_is_none(call, 1)) {
        /* axis=None reduces every dim. */
        rc->axis = AXIS_ALL;
        if (keep) {
            r = with_shape(rdt, false, t);
            for (int i = 0; i < t.rank; i++)
                r.shape[i] = 1;
        }
        return sem_value(r);
    }
    int64_t ax;
    if (!axis_arg(s, call, 1, fname, t, &ax))
        return sem_error();
    rc->axis = (int)ax;
    r = with_shape(rdt, false, t);
    if (keep) {
        r.shape[ax] = 1;
    } else {
        for (int i = (int)ax; i + 1 < t.rank; i++)
            r.shape[i] = t.shape[i + 1];
        r.rank--;
        if (r.rank == 0)
            r = type_scalar(rdt);
    }
    return sem_value(r);
}

/* A reduction build_ir.c takes from the scan (tl.reduce with a * b or a bitwise combine,
 * tl.xor_sum): input 0 in its own dtype, integers only when ints_why says why, keep_dims at
 * argument keep_idx, the axis at 1. */
static Sem scan_reduction(Sema *s, Expr *call, const char *fname, int keep_idx, ScanCombine combine,
                          const char *ints_why)
{
    call->call.resolved->combine = combine;
    Type t;
    if (!value_arg(s, call, 0, fname, "input", &t))
        return sem_error();
    bool keep = false;
    if (!arg_is_none(call, keep_idx) &&
        !const_bool_arg(s, call, keep_idx, fname, "keep_dims", &keep))
        return sem_error();
    if (t.is_ptr || (ints_why && !dtype_is_int(t.dtype))) {
        diag_error(s->diag, arg_loc(call, 0), "%s: %s, got %s", fname,
                   t.is_ptr ? "pointers do not reduce" : ints_why, tstr(s, t));
        return sem_error();
    }
    if (!reject_fp8(s, arg_loc(call, 0), fname, t))
        return sem_error();
    return reduced_value(s, call, fname, t, t.dtype, keep);
}

/* A combine of `a and b` / `a or b` is read as a & b / a | b, which it is on int1 only. */
static bool logical_combine_input_ok(Sema *s, Expr *call, const FuncDef *fn, const char *fname)
{
    Type t;
    if (!scan_combine_is_logical(fn) || !operand_type(arg(call, 0)->sem, &t) || t.dtype == DT_I1)
        return true;
    diag_error(s->diag, arg_loc(call, 0),
               "%s: a combine function of 'and' / 'or' needs an int1 input (tric reads it as & / "
               "|), got %s",
               fname, tstr(s, t));
    return false;
}

/* tl.reduce(x, axis, combine_fn, keep_dims=False) (and x.reduce(...)): Triton inlines the @jit
 * combine function into a reduction tree. tric recognizes the combine functions of its scan op
 * (frontend/scan.c). `return a + b`, `tl.maximum(a, b)` and `tl.minimum(a, b)` rewrite the call
 * into tl.sum / tl.max / tl.min reducing in x's dtype (the combine function's: no widening of 8-
 * and 16-bit ints, fp16 or bf16, unlike tl.sum / tl.max themselves). `a * b`, `a & b`, `a | b`
 * and `a ^ b` have no reduce op: the call stays, typed here, and build_ir.c takes the last element
 * of the inclusive scan (build_reduce_by_scan). Other combine functions and tuple inputs are an
 * error at the function. */
Sem reduce_with_combine_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Expr *fn = arg(call, 2);
    if (!fn || is_error(fn->sem))
        return sem_error();
    if (fn->sem.kind != SEM_FUNC) {
        diag_error(s->diag, arg_loc(call, 2),
                   "%s's combine_fn must be a @triton.jit function, got %s", fname,
                   sem_describe(s, fn->sem));
        return sem_error();
    }
    ScanCombine comb;
    SrcLoc where;
    const char *why;
    bool known = scan_combine_of(fn->sem.func, &comb, &where, &why);
    const char *reduce = !known             ? NULL
                         : comb == SCAN_ADD ? "sum"
                         : comb == SCAN_MAX ? "max"
                         : comb == SCAN_MIN ? "min"
                                            : NULL;
    if (known && !reduce && !logical_combine_input_ok(s, call, fn->sem.func, fname))
        return sem_error();
    if (known && !reduce) /* a * b, &, |, ^: the scan's last element, in x's dtype */
        return scan_reduction(s, call, fname, 3, comb,
                              comb == SCAN_MUL ? NULL : "a bitwise combine needs integers");
    if (!known) {
        diag_error(s->diag, where, "%s", why);
        diag_note(s->diag, arg_loc(call, 2), "combine function of this %s", fname);
        return sem_error();
    }
    if (call->call.fn->kind != EX_ATTR) {
        diag_error(s->diag, call->call.fn->loc, "%s needs the tl.reduce / x.reduce form", fname);
        return sem_error();
    }
    const char *kw_keep[] = {"keep_dims"};
    const Expr *keep[] = {arg(call, 3)};
    Expr *r = reduce_call(s, call->call.fn, reduce, arg(call, 0), arg(call, 1), kw_keep, keep, 1);
    *call = *r;
    s->reduce_of_combine = call;
    return expr(s, call);
}

Sem reduce_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Type t;
    if (!value_arg(s, call, 0, fname, "input", &t))
        return sem_error();
    if (t.is_ptr) {
        diag_error(s->diag, arg_loc(call, 0), "%s cannot reduce pointers", fname);
        return sem_error();
    }
    if (!reject_fp8(s, arg_loc(call, 0), fname, t))
        return sem_error();
    bool keep = false;
    int keep_idx = (b == BI_SUM) ? 2 : (b == BI_ARGMAX || b == BI_ARGMIN) ? 3 : 4;
    if (!arg_is_none(call, keep_idx) &&
        !const_bool_arg(s, call, keep_idx, fname, "keep_dims", &keep))
        return sem_error();
    if ((b == BI_MAX || b == BI_MIN) && !arg_is_none(call, 2)) {
        bool ri = false;
        if (!const_bool_arg(s, call, 2, fname, "return_indices", &ri))
            return sem_error();
        if (ri)
            return reduce_with_indices(s, call, b, fname);
    }
    DType rdt = t.dtype;
    if (b == BI_ARGMAX || b == BI_ARGMIN) {
        rdt = DT_I32;
    } else if (b == BI_SUM) {
        /* _pick_sum_dtype: ints narrower than 32 bits sum in int32 / uint32, as PyTorch. */
        if (call == s->reduce_of_combine) {
            /* tl.reduce(x, axis, add): the combine function's dtype, x's */
        } else if (!arg_is_none(call, 3)) {
            if (!dtype_arg(s, call, 3, fname, &rdt))
                return sem_error();
        } else if (dtype_is_int(t.dtype) && dtype_bits(t.dtype) < 32) {
            rdt = dtype_kind(t.dtype) == DK_UINT ? DT_U32 : DT_I32;
        }
    } else if (call != s->reduce_of_combine) {
        /* standard.max/min: bf16 is promoted to fp32, and without return_indices anything
         * narrower than 32 bits is widened, floats to fp32 and ints to int32. */
        if (rdt == DT_BF16)
            rdt = DT_F32;
        if (dtype_bits(rdt) < 32 && call != s->values_of_indexed_reduce)
            rdt = dtype_is_float(rdt) ? DT_F32 : DT_I32;
    }
    return reduced_value(s, call, fname, t, rdt, keep);
}

/* dot's and dot_scaled's acc= (argument i): none, or of the product's type rt (out_dtype, fp32
 * by default), as Triton requires; false with a diagnostic. */
static bool acc_arg(Sema *s, Expr *call, int i, const char *fname, Type rt)
{
    if (arg_is_none(call, i))
        return true;
    Type acc;
    if (!value_arg(s, call, i, fname, "acc", &acc))
        return false;
    if (!type_equal(acc, rt)) {
        diag_error(s->diag, arg_loc(call, i), "%s's acc has type %s but the product is %s", fname,
                   tstr(s, acc), tstr(s, rt));
        return false;
    }
    return true;
}

/* tl.cumsum(x, axis=0, reverse=False, dtype=None), tl.cumprod(x, axis=0, reverse=False),
 * tl.associative_scan(x, axis, combine_fn, reverse=False): x's shape; the dtype follows
 * standard.py: bf16 scans in fp32 (cumsum, cumprod), cumsum widens ints narrower than 32 bits to
 * (u)int32 (_pick_sum_dtype) unless dtype= says otherwise. */
Sem scan_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Type t;
    if (!value_arg(s, call, 0, fname, "input", &t))
        return sem_error();
    if (t.is_ptr || t.rank == 0) {
        diag_error(s->diag, arg_loc(call, 0), "%s needs a block of numbers, got %s", fname,
                   tstr(s, t));
        return sem_error();
    }
    int64_t ax;
    if (!axis_arg(s, call, 1, fname, t, &ax))
        return sem_error();
    int rev_idx = b == BI_ASSOCIATIVE_SCAN ? 3 : 2;
    bool rev = false;
    if (!arg_is_none(call, rev_idx) && !const_bool_arg(s, call, rev_idx, fname, "reverse", &rev))
        return sem_error();
    DType rdt = t.dtype;
    ResolvedCall *rc = call->call.resolved;
    rc->axis = (int)ax;
    rc->reverse = rev;
    rc->combine = b == BI_CUMPROD ? SCAN_MUL : SCAN_ADD;
    if (b == BI_ASSOCIATIVE_SCAN) {
        Expr *fn = arg(call, 2);
        if (!fn || is_error(fn->sem))
            return sem_error();
        if (fn->sem.kind != SEM_FUNC) {
            diag_error(s->diag, arg_loc(call, 2),
                       "%s's combine_fn must be a @triton.jit "
                       "function, got %s",
                       fname, sem_describe(s, fn->sem));
            return sem_error();
        }
        ScanCombine comb;
        SrcLoc where;
        const char *why;
        if (!scan_combine_of(fn->sem.func, &comb, &where, &why)) {
            diag_error(s->diag, where, "%s", why);
            diag_note(s->diag, arg_loc(call, 2), "combine function of this %s", fname);
            return sem_error();
        }
        if (!logical_combine_input_ok(s, call, fn->sem.func, fname))
            return sem_error();
        rc->combine = comb;
        bool bitwise = comb == SCAN_AND || comb == SCAN_OR || comb == SCAN_XOR;
        if (bitwise && dtype_is_float(t.dtype)) {
            diag_error(s->diag, arg_loc(call, 0), "%s: a bitwise combine needs integers, got %s",
                       fname, tstr(s, t));
            return sem_error();
        }
    } else {
        if (rdt == DT_BF16)
            rdt = DT_F32;
        if (b == BI_CUMSUM) {
            if (!arg_is_none(call, 3)) {
                if (!dtype_arg(s, call, 3, fname, &rdt))
                    return sem_error();
            } else if (dtype_is_int(t.dtype) && dtype_bits(t.dtype) < 32) {
                rdt = dtype_kind(t.dtype) == DK_UINT ? DT_U32 : DT_I32;
            }
        }
    }
    return sem_value(with_shape(rdt, false, t));
}

/* dot's trans_a= / trans_b= (arguments 7 and 8, Triton 2.0's keywords, as flash-attention's
 * Triton kernel writes tl.dot(q, k, trans_b=True)): *t with its last two dims swapped when the
 * argument is True; false with a diagnostic. */
static bool dot_transpose_arg(Sema *s, Expr *call, int i, const char *fname, const char *what,
                              Type *t, bool *trans)
{
    *trans = false;
    if (arg_is_none(call, i))
        return true;
    if (!const_bool_arg(s, call, i, fname, what, trans))
        return false;
    if (*trans && t->rank >= 2) {
        int32_t last = t->shape[t->rank - 1];
        t->shape[t->rank - 1] = t->shape[t->rank - 2];
        t->shape[t->rank - 2] = last;
    }
    return true;
}

Sem dot_builtin(Sema *s, Expr *call, Builtin bi, const char *fname)
{
    Type a, b;
    if (!value_arg(s, call, 0, fname, "first input", &a) ||
        !value_arg(s, call, 1, fname, "second input", &b))
        return sem_error();
    SrcLoc loc = callee_loc(call);
    if ((a.rank != 2 && a.rank != 3) || a.rank != b.rank) {
        diag_error(s->diag, loc, "%s needs two 2-D (or two 3-D) blocks, got %s and %s", fname,
                   tstr(s, a), tstr(s, b));
        return sem_error();
    }
    bool *trans = call->call.resolved->trans;
    if (!dot_transpose_arg(s, call, 7, fname, "trans_a", &a, &trans[0]) ||
        !dot_transpose_arg(s, call, 8, fname, "trans_b", &b, &trans[1]))
        return sem_error();
    if (a.is_ptr || b.is_ptr) {
        diag_error(s->diag, loc, "%s cannot multiply pointers", fname);
        return sem_error();
    }
    int r = a.rank;
    int32_t M = a.shape[r - 2], K = a.shape[r - 1], K2 = b.shape[r - 2], N = b.shape[r - 1];
    if (K != K2) {
        diag_error(s->diag, loc,
                   "%s shapes %s and %s do not match: the first's K (%d) must equal "
                   "the second's K (%d)",
                   fname, shape_str(s, a), shape_str(s, b), K, K2);
        return sem_error();
    }
    if (r == 3 && a.shape[0] != b.shape[0]) {
        diag_error(s->diag, loc, "%s batch dimensions differ: %d vs %d", fname, a.shape[0],
                   b.shape[0]);
        return sem_error();
    }
    if (M < 16 || N < 16 || K < 16) {
        diag_error(s->diag, loc, "%s needs M, N and K of at least 16, got M=%d N=%d K=%d", fname, M,
                   N, K);
        return sem_error();
    }
    /* Two fp8 formats may meet (e4m3 x e5m2), as in Triton. */
    if (a.dtype != b.dtype && !(dtype_is_fp8(a.dtype) && dtype_is_fp8(b.dtype))) {
        diag_error(s->diag, loc, "%s operands must have one dtype, got %s and %s", fname,
                   dtype_name(a.dtype), dtype_name(b.dtype));
        return sem_error();
    }
    DType out;
    switch (a.dtype) {
    case DT_I8: out = DT_I32; break;
    case DT_F16:
    case DT_BF16:
    case DT_F32:
    case DT_F8E4NV:
    case DT_F8E5: out = DT_F32; break;
    case DT_F64: out = DT_F64; break;
    default:
        diag_error(s->diag, loc,
                   "%s supports fp16, bf16, fp32, fp64, fp8 and int8 operands, got %s", fname,
                   dtype_name(a.dtype));
        return sem_error();
    }
    if (!arg_is_none(call, 6)) {
        DType od;
        if (!dtype_arg(s, call, 6, fname, &od))
            return sem_error();
        bool okd = od == out || (a.dtype == DT_F16 && od == DT_F16) ||
                   (a.dtype == DT_BF16 && od == DT_BF16);
        if (!okd) {
            diag_error(s->diag, arg_loc(call, 6),
                       "%s: out_dtype %s is not supported for %s "
                       "operands",
                       fname, dtype_name(od), dtype_name(a.dtype));
            return sem_error();
        }
        out = od;
    }
    if (!arg_is_none(call, 3)) {
        Expr *p = arg(call, 3);
        if (!(p->sem.kind == SEM_CONST && p->sem.cv.kind == CV_STR &&
              (!strcmp(p->sem.cv.s, "tf32") || !strcmp(p->sem.cv.s, "tf32x3") ||
               !strcmp(p->sem.cv.s, "ieee")))) {
            if (!is_error(p->sem))
                diag_error(s->diag, p->loc,
                           "%s: input_precision must be \"tf32\", \"tf32x3\" "
                           "or \"ieee\"",
                           fname);
            return sem_error();
        }
    }
    /* Triton's default input_precision is "tf32": fp32 inputs may round to tf32 on tensor
     * cores. "ieee" (or allow_tf32=False) keeps fp32; "tf32x3" is near-fp32, so also not. */
    bool tf32 = true;
    if (!arg_is_none(call, 3) && !arg_is_none(call, 4)) { /* as Triton's semantic.dot */
        diag_error(s->diag, arg_loc(call, 4),
                   "%s: give input_precision or allow_tf32, not both (allow_tf32=True is "
                   "input_precision=\"tf32\", False is \"ieee\")",
                   fname);
        return sem_error();
    }
    if (!arg_is_none(call, 4) && !const_bool_arg(s, call, 4, fname, "allow_tf32", &tf32))
        return sem_error();
    if (!arg_is_none(call, 3))
        tf32 = !strcmp(arg(call, 3)->sem.cv.s, "tf32");
    call->call.resolved->tf32 = tf32 && a.dtype == DT_F32;
    int64_t imprecise;
    if (!arg_is_none(call, 5)) {
        if (!const_int_arg(s, call, 5, fname, "max_num_imprecise_acc", &imprecise))
            return sem_error();
        /* Triton's rule for fp8 operands: a limit past K is an error; one up to K makes wgmma
         * (sm_90a) sum at most that many K in the tensor cores' precision, each such partial sum
         * then added into the fp32 accumulator (codegen/dot_wgmma.c). Elsewhere the sums are
         * fp32 already. 16-bit operands ignore it, as in Triton. */
        if (dtype_is_fp8(a.dtype) && imprecise > K) {
            diag_error(s->diag, arg_loc(call, 5),
                       "%s: max_num_imprecise_acc (%lld) must be <= K (%d)", fname,
                       (long long)imprecise, K);
            return sem_error();
        }
        if (dtype_is_fp8(a.dtype) && imprecise < 0) {
            diag_error(s->diag, arg_loc(call, 5), "%s: max_num_imprecise_acc (%lld) must be >= 0",
                       fname, (long long)imprecise);
            return sem_error();
        }
        /* 0 adds after every instruction, as 1 does (each sums 32 K) */
        if (dtype_is_fp8(a.dtype)) /* (whose sum is fp32: out_dtype allows nothing else) */
            call->call.resolved->imprecise_acc = imprecise > 0 ? (int)imprecise : 1;
    }
    Type rt = with_shape(out, false, a);
    rt.shape[r - 2] = M;
    rt.shape[r - 1] = N;
    if (!acc_arg(s, call, 2, fname, rt))
        return sem_error();
    Sem v = sem_value(rt);
    v.compute_dtype = a.dtype;
    return v;
}

/* The dtype math on d runs in: Triton computes the transcendental functions of fp16 and bf16 in
 * fp32 and rounds the result back. */
static DType math_dtype(DType d) { return d == DT_F16 || d == DT_BF16 ? DT_F32 : d; }

Sem math_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Type t;
    if (!value_arg(s, call, 0, fname, "input", &t))
        return sem_error();
    if (t.is_ptr) {
        diag_error(s->diag, arg_loc(call, 0), "%s cannot take a pointer (%s)", fname, tstr(s, t));
        return sem_error();
    }
    if (!reject_fp8(s, arg_loc(call, 0), fname, t))
        return sem_error();
    call->call.resolved->op_dtype = t.dtype;
    switch (b) {
    case BI_ABS: return sem_value(t);
    case BI_SIGMOID:
        if (!dtype_is_float(t.dtype)) {
            diag_error(s->diag, arg_loc(call, 0), "%s needs a float input, got %s", fname,
                       tstr(s, t));
            return sem_error();
        }
        call->call.resolved->op_dtype = math_dtype(t.dtype);
        return sem_value(t);
    default:
        /* Triton's math functions are @_check_dtype(dtypes=["fp32", "fp64"]). */
        if (t.dtype != DT_F32 && t.dtype != DT_F64) {
            diag_error(s->diag, arg_loc(call, 0),
                       "%s needs fp32 or fp64 input (as in Triton), "
                       "got %s; convert with .to(tl.float32)",
                       fname, tstr(s, t));
            return sem_error();
        }
        return sem_value(t);
    }
}

/* Elementwise builtins on several operands (minimum, maximum, where, fma, umulhi). */
static Sem elementwise2(Sema *s, Expr *call, const char *fname, int i0, int i1, bool floats_only,
                        bool ints_only)
{
    Expr *x = arg(call, i0), *y = arg(call, i1);
    Type tx, ty;
    if (!value_arg(s, call, i0, fname, "first operand", &tx) ||
        !value_arg(s, call, i1, fname, "second operand", &ty))
        return sem_error();
    if (tx.is_ptr || ty.is_ptr) {
        if (tx.is_ptr && ty.is_ptr && tx.dtype == ty.dtype) {
            Type shape;
            if (!broadcast(s, callee_loc(call), tx, ty, &shape))
                return sem_error();
            return sem_value(with_shape(tx.dtype, true, shape));
        }
        diag_error(s->diag, callee_loc(call), "%s cannot combine %s and %s", fname, tstr(s, tx),
                   tstr(s, ty));
        return sem_error();
    }
    Type shape;
    if (!broadcast(s, callee_loc(call), tx, ty, &shape))
        return sem_error();
    DType ct;
    const char *why = "";
    if (!computation_type(tx.dtype, x->sem.kind == SEM_CONST, ty.dtype, y->sem.kind == SEM_CONST,
                          false, &ct, &why)) {
        diag_error(s->diag, callee_loc(call), "%s cannot combine %s and %s: %s", fname, tstr(s, tx),
                   tstr(s, ty), why);
        return sem_error();
    }
    if (floats_only && !dtype_is_float(ct)) {
        diag_error(s->diag, callee_loc(call), "%s needs float operands, got %s", fname,
                   dtype_name(ct));
        return sem_error();
    }
    if (ints_only && !dtype_is_int(ct)) {
        diag_error(s->diag, callee_loc(call), "%s needs integer operands, got %s", fname,
                   dtype_name(ct));
        return sem_error();
    }
    Sem v = sem_value(with_shape(ct, false, shape));
    v.compute_dtype = ct;
    return v;
}

/* cast's target: a dtype, or a pointer type (tl.pointer_type(tl.float32), p.dtype of a pointer
 * p), as a scalar Type. */
static bool cast_target_arg(Sema *s, Expr *call, int i, const char *fname, Type *out)
{
    Expr *x = arg(call, i);
    if (x && x->sem.kind == SEM_CONST && x->sem.cv.kind == CV_TYPE && x->sem.cv.type.is_ptr &&
        x->sem.cv.type.rank == 0) {
        *out = x->sem.cv.type;
        return true;
    }
    DType dt;
    if (!dtype_arg(s, call, i, fname, &dt))
        return false;
    *out = type_scalar(dt);
    return true;
}

/* Triton's semantic.cast for pointers: a pointer converts to int64 (ptrtoint), to int1 (!= 0) and
 * to another pointer type; only an int64 converts to a pointer (inttoptr: tt.int_to_ptr takes a
 * 64-bit integer). bitcast=True takes the same path, as semantic.bitcast does for pointers. */
static bool pointer_cast_ok(Sema *s, Expr *call, const char *fname, Type from, Type to)
{
    if (from.is_ptr && !to.is_ptr && to.dtype != DT_I64 && to.dtype != DT_I1) {
        diag_error(s->diag, arg_loc(call, 1),
                   "%s: a pointer (%s) converts only to int64, int1 or "
                   "a pointer type, not %s",
                   fname, tstr(s, from), dtype_name(to.dtype));
        return false;
    }
    if (!from.is_ptr && to.is_ptr && from.dtype != DT_I64 && from.dtype != DT_U64) {
        diag_error(s->diag, arg_loc(call, 0),
                   "%s: only an int64 converts to a pointer (%s), got "
                   "%s; convert it with .to(tl.int64) first",
                   fname, tstr(s, to), tstr(s, from));
        return false;
    }
    return true;
}

Sem cast_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Type t, target;
    if (!value_arg(s, call, 0, fname, "input", &t) || !cast_target_arg(s, call, 1, fname, &target))
        return sem_error();
    DType to = target.dtype;
    bool bitcast = false;
    if (!arg_is_none(call, 3) && !const_bool_arg(s, call, 3, fname, "bitcast", &bitcast))
        return sem_error();
    call->call.resolved->bitcast = bitcast;
    if (!arg_is_none(call, 2)) {
        Expr *r = arg(call, 2);
        if (!(r->sem.kind == SEM_CONST && r->sem.cv.kind == CV_STR &&
              (!strcmp(r->sem.cv.s, "rtne") || !strcmp(r->sem.cv.s, "rtz")))) {
            if (!is_error(r->sem))
                diag_error(s->diag, r->loc, "%s: fp_downcast_rounding must be \"rtne\" or \"rtz\"",
                           fname);
            return sem_error();
        }
        if (!bitcast && !target.is_ptr && dtype_is_fp8(to) && !strcmp(r->sem.cv.s, "rtz")) {
            diag_error(s->diag, r->loc,
                       "%s: fp_downcast_rounding=\"rtz\" to %s is not supported; "
                       "fp8 conversions round to nearest even (\"rtne\")",
                       fname, dtype_name(to));
            return sem_error();
        }
    }
    if (t.is_ptr || target.is_ptr) {
        if (!pointer_cast_ok(s, call, fname, t, target))
            return sem_error();
        return sem_value(with_shape(to, target.is_ptr, t));
    }
    if (bitcast && dtype_bits(t.dtype) != dtype_bits(to)) {
        diag_error(s->diag, arg_loc(call, 1),
                   "%s: bitcast needs types of one width, %s is %d "
                   "bits and %s is %d",
                   fname, dtype_name(t.dtype), dtype_bits(t.dtype), dtype_name(to), dtype_bits(to));
        return sem_error();
    }
    if (!bitcast && t.dtype != to && (dtype_is_fp8(t.dtype) || dtype_is_fp8(to))) {
        /* fp8 converts to and from the other floats (fp64 only from fp8: the GPU's fp8
         * conversions start at fp32, and fp64 -> fp32 -> fp8 would round twice); ints go
         * through a float, or keep the bits with bitcast=True. */
        DType other = dtype_is_fp8(t.dtype) ? to : t.dtype;
        if (dtype_is_int(other)) {
            diag_error(s->diag, arg_loc(call, 1),
                       "%s: no conversion between %s and %s; convert "
                       "through tl.float32 (or use bitcast=True to keep the bits)",
                       fname, dtype_name(t.dtype), dtype_name(to));
            return sem_error();
        }
        if (t.dtype == DT_F64) {
            diag_error(s->diag, arg_loc(call, 1),
                       "%s: no conversion from float64 to %s; convert "
                       "to tl.float32 first",
                       fname, dtype_name(to));
            return sem_error();
        }
    }
    return sem_value(with_shape(to, false, t));
}

/* standard.ravel: reshape(x, [x.numel], can_reorder) */
Sem ravel_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Type t;
    if (!value_arg(s, call, 0, fname, "input", &t))
        return sem_error();
    bool reorder;
    if (!arg_is_none(call, 1) && !const_bool_arg(s, call, 1, fname, "can_reorder", &reorder))
        return sem_error();
    if (t.rank == 0) {
        diag_error(s->diag, arg_loc(call, 0), "%s needs a block, got the scalar %s", fname,
                   tstr(s, t));
        return sem_error();
    }
    Type r = with_shape(t.dtype, t.is_ptr, t);
    r.rank = 1;
    r.shape[0] = type_numel(t);
    return sem_value(r);
}

/* tl.broadcast_to(x, shape). */
Sem broadcast_to_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Type t;
    if (!value_arg(s, call, 0, fname, "input", &t))
        return sem_error();
    Type shape;
    if (!shape_arg(s, call, 1, fname, &shape))
        return sem_error();
    if ((t.rank != 0 && t.rank != shape.rank) || !broadcasts_to(t, shape)) {
        diag_error(s->diag, callee_loc(call), "%s cannot broadcast %s to %s", fname,
                   shape_str(s, t), shape_str(s, shape));
        return sem_error();
    }
    return sem_value(with_shape(t.dtype, t.is_ptr, shape));
}

/* tl.reshape, tl.view */
Sem reshape_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Type t;
    if (!value_arg(s, call, 0, fname, "input", &t))
        return sem_error();
    Type shape;
    if (!shape_arg(s, call, 1, fname, &shape))
        return sem_error();
    bool reorder;
    if (!arg_is_none(call, 2) && !const_bool_arg(s, call, 2, fname, "can_reorder", &reorder))
        return sem_error();
    if (type_numel(shape) != type_numel(t)) {
        diag_error(s->diag, callee_loc(call),
                   "%s cannot reshape %s (%lld elements) to %s "
                   "(%lld elements)",
                   fname, shape_str(s, t), (long long)type_numel(t), shape_str(s, shape),
                   (long long)type_numel(shape));
        return sem_error();
    }
    return sem_value(with_shape(t.dtype, t.is_ptr, shape));
}

/* tl.expand_dims(x, axis): the axis counts in the result (rank + 1), negative from its end. */
Sem expand_dims_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Type t;
    if (!value_arg(s, call, 0, fname, "input", &t))
        return sem_error();
    int64_t axis;
    if (!const_int_arg(s, call, 1, fname, "axis", &axis))
        return sem_error();
    int64_t ax = normalize_axis(axis, t.rank + 1);
    if (t.rank + 1 > TRIC_MAX_RANK) {
        diag_error(s->diag, callee_loc(call), "%s: blocks have at most %d dimensions", fname,
                   TRIC_MAX_RANK);
        return sem_error();
    }
    if (ax < 0 || ax > t.rank) {
        diag_error(s->diag, arg_loc(call, 1), "%s: axis %lld is out of range for %s", fname,
                   (long long)axis, tstr(s, t));
        return sem_error();
    }
    call->call.resolved->axis = (int)ax;
    Type r = type_elem(t);
    r.rank = (uint8_t)(t.rank + 1);
    for (int i = 0, src = 0; i < r.rank; i++)
        r.shape[i] = i == ax ? 1 : t.shape[src++];
    return sem_value(r);
}

/* tl.trans, tl.permute: the dims as a constexpr tuple (varargs are bound into one) */
Sem permute_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Type t;
    if (!value_arg(s, call, 0, fname, "input", &t))
        return sem_error();
    int perm[TRIC_MAX_RANK];
    if (t.rank < 2) {
        diag_error(s->diag, callee_loc(call), "%s needs a block of rank 2 or more, got %s", fname,
                   tstr(s, t));
        return sem_error();
    }
    if (arg_is_none(call, 1)) {
        if (b == BI_PERMUTE || t.rank != 2) {
            diag_error(s->diag, callee_loc(call), "%s needs dims for a block of rank %d", fname,
                       t.rank);
            return sem_error();
        }
        perm[0] = 1, perm[1] = 0;
    } else {
        Expr *d = arg(call, 1);
        Sem v = d->sem;
        if (!(v.kind == SEM_CONST && v.cv.kind == CV_TUPLE && v.cv.tuple.n == t.rank)) {
            if (!is_error(v))
                diag_error(s->diag, d->loc, "%s's dims must be a constexpr tuple of %d ints", fname,
                           t.rank);
            return sem_error();
        }
        bool seen[TRIC_MAX_RANK] = {0};
        for (int i = 0; i < t.rank; i++) {
            ConstVal c = v.cv.tuple.elems[i];
            if (c.kind != CV_INT || c.i < 0 || c.i >= t.rank || seen[c.i]) {
                diag_error(s->diag, d->loc, "%s's dims must be a permutation of 0..%d", fname,
                           t.rank - 1);
                return sem_error();
            }
            seen[c.i] = true;
            perm[i] = (int)c.i;
        }
    }
    Type r = t;
    for (int i = 0; i < t.rank; i++) {
        r.shape[i] = t.shape[perm[i]];
        call->call.resolved->perm[i] = perm[i];
    }
    return sem_value(r);
}

/* Python's min / max: folded on constexprs; on run-time values they are tl.minimum/maximum
 * (Triton's code generator maps the builtins the same way). */
Sem minmax_py_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    bool is_min = b == BI_MIN_PY;
    fname =
        is_min ? "min()" : "max()"; /* its arguments are not bound yet: builtin_call's is NULL */
    if (call->call.nkwargs) {
        diag_error(s->diag, kwname_loc(expr_start(call->call.kwargs[0]), call->call.kwnames[0]),
                   "%s got an unexpected keyword argument '%s'", fname, call->call.kwnames[0]);
        return sem_error();
    }
    int n = call->call.nargs;
    const ConstVal *items = NULL;
    ConstVal *tmp = NULL;
    bool all_const = true;
    for (int i = 0; i < n; i++)
        if (call->call.args[i]->sem.kind != SEM_CONST)
            all_const = false;
    if (n == 1 && all_const && call->call.args[0]->sem.cv.kind == CV_TUPLE) {
        items = call->call.args[0]->sem.cv.tuple.elems;
        n = call->call.args[0]->sem.cv.tuple.n;
    } else if (all_const) {
        tmp = arena_alloc(s->a, (size_t)(n ? n : 1) * sizeof *tmp);
        for (int i = 0; i < n; i++)
            tmp[i] = call->call.args[i]->sem.cv;
        items = tmp;
    }
    if (all_const) {
        if (n == 0) {
            diag_error(s->diag, callee_loc(call), "%s needs at least one argument", fname);
            return sem_error();
        }
        ConstVal best = items[0];
        for (int i = 0; i < n; i++) {
            if (!const_is_number(&items[i])) {
                diag_error(s->diag, callee_loc(call), "%s compares numbers only", fname);
                return sem_error();
            }
            double x = const_as_float(&items[i]), y = const_as_float(&best);
            if (is_min ? x < y : x > y)
                best = items[i];
        }
        Expr **bound = arena_alloc(s->a, 2 * sizeof *bound);
        bound[0] = n > 0 && call->call.nargs > 0 ? call->call.args[0] : NULL;
        bound[1] = call->call.nargs > 1 ? call->call.args[1] : NULL;
        call->call.bound = bound;
        call->call.nbound = 2;
        return sem_const(best);
    }
    if (call->call.nargs != 2) {
        diag_error(s->diag, callee_loc(call),
                   "%s on run-time values takes 2 arguments but %d %s "
                   "given",
                   fname, call->call.nargs, plural(call->call.nargs, "was", "were"));
        return sem_error();
    }
    Builtin real = is_min ? BI_MINIMUM : BI_MAXIMUM;
    call->call.fn->sem.builtin = real; /* build_ir.c sees tl.minimum / tl.maximum */
    if (!bind_builtin_args(s, call, real, NULL))
        return sem_error();
    return elementwise2(s, call, fname, 0, 1, false, false);
}

/* propagate_nan= of minimum, maximum and clamp: tl.PropagateNan.ALL / .NONE (or a bool). */
static bool propagate_nan_arg(Sema *s, Expr *call, int i, const char *fname)
{
    Expr *p = arg(call, i);
    if (p && is_error(p->sem))
        return false;
    if (arg_is_none(call, i))
        return true;
    ConstVal cv = p->sem.cv;
    if (p->sem.kind == SEM_CONST &&
        (cv.kind == CV_BOOL ||
         (cv.kind == CV_INT && (cv.i == PROPAGATE_NAN_ALL || cv.i == PROPAGATE_NAN_NONE)))) {
        call->call.resolved->propagate_nan = cv.kind == CV_BOOL ? cv.b : cv.i != PROPAGATE_NAN_NONE;
        return true;
    }
    diag_error(s->diag, arg_loc(call, i),
               "%s's propagate_nan must be tl.PropagateNan.ALL or "
               "tl.PropagateNan.NONE, got %s",
               fname, sem_describe(s, p->sem));
    return false;
}

/* tl.clamp(x, min, max, propagate_nan=): Triton's semantic.clamp: x, min and max promoted to one
 * type and broadcast together (binary_op_type_checking_impl, pairwise), which must be a float. */
Sem clamp_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    if (!propagate_nan_arg(s, call, 3, fname))
        return sem_error();
    Sem lo = elementwise2(s, call, fname, 0, 1, false, false);
    if (is_error(lo))
        return lo;
    Type hi;
    if (!value_arg(s, call, 2, fname, "max", &hi))
        return sem_error();
    Type shape;
    if (hi.is_ptr) {
        diag_error(s->diag, arg_loc(call, 2), "%s cannot take a pointer (%s)", fname, tstr(s, hi));
        return sem_error();
    }
    if (!broadcast(s, callee_loc(call), lo.type, hi, &shape))
        return sem_error();
    DType ct;
    const char *why = "";
    bool weak = arg(call, 0)->sem.kind == SEM_CONST && arg(call, 1)->sem.kind == SEM_CONST;
    if (!computation_type(lo.compute_dtype, weak, hi.dtype, arg(call, 2)->sem.kind == SEM_CONST,
                          false, &ct, &why)) {
        diag_error(s->diag, callee_loc(call), "%s cannot combine %s and %s: %s", fname,
                   dtype_name(lo.compute_dtype), tstr(s, hi), why);
        return sem_error();
    }
    if (!dtype_is_float(ct)) {
        diag_error(s->diag, callee_loc(call), "%s clamps floats only (as Triton), got %s", fname,
                   dtype_name(ct));
        return sem_error();
    }
    Sem v = sem_value(with_shape(ct, false, shape));
    v.compute_dtype = ct;
    return v;
}

/* tl.swizzle2d(i, j, size_i, size_j, size_g): Triton's jit function of that name, typed as its
 * body is (standard.py): the pair (new_i, new_j), folded when every argument is a constexpr. */
Sem swizzle2d_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Sem a[5];
    for (int i = 0; i < 5; i++) {
        a[i] = arg(call, i)->sem;
        if (is_error(a[i]))
            return sem_error();
        Type t;
        bool number = a[i].kind == SEM_CONST
                          ? (a[i].cv.kind == CV_INT || a[i].cv.kind == CV_BOOL)
                          : operand_type(a[i], &t) && !t.is_ptr && dtype_is_int(t.dtype);
        if (!number) {
            diag_error(s->diag, arg_loc(call, i), "%s's arguments must be integers, got %s", fname,
                       sem_describe(s, a[i]));
            return sem_error();
        }
    }
    SrcLoc loc = callee_loc(call);
    /* ij = i * size_j + j; size_gj = size_g * size_j; group_id = ij // size_gj;
     * off_i = group_id * size_g; size_g = minimum(size_i - off_i, size_g); ij = ij % size_gj;
     * new_i = off_i + ij % size_g; new_j = ij // size_g */
    Sem ij = binary_sems(s, loc, BIN_ADD, binary_sems(s, loc, BIN_MUL, a[0], a[3]), a[1]);
    Sem size_gj = binary_sems(s, loc, BIN_MUL, a[4], a[3]);
    Sem group_id = binary_sems(s, loc, BIN_FLOORDIV, ij, size_gj);
    Sem off_i = binary_sems(s, loc, BIN_MUL, group_id, a[4]);
    Sem rows_left = binary_sems(s, loc, BIN_SUB, a[2], off_i);
    if (is_error(rows_left))
        return sem_error();
    Sem rows;
    if (rows_left.kind == SEM_CONST && a[4].kind == SEM_CONST) {
        ConstVal x = rows_left.cv, y = a[4].cv;
        rows = const_as_int(&x) <= const_as_int(&y) ? rows_left : a[4];
    } else {
        rows = binary_sems(s, loc, BIN_ADD, rows_left, a[4]); /* the promoted type of minimum */
    }
    Sem in_group = binary_sems(s, loc, BIN_MOD, ij, size_gj);
    Sem new_i = binary_sems(s, loc, BIN_ADD, off_i, binary_sems(s, loc, BIN_MOD, in_group, rows));
    Sem new_j = binary_sems(s, loc, BIN_FLOORDIV, in_group, rows);
    if (is_error(new_i) || is_error(new_j))
        return sem_error();
    if (new_i.kind == SEM_CONST && new_j.kind == SEM_CONST) {
        ConstVal cv = {.kind = CV_TUPLE};
        cv.tuple.n = 2;
        cv.tuple.elems = arena_alloc(s->a, 2 * sizeof(ConstVal));
        cv.tuple.elems[0] = new_i.cv;
        cv.tuple.elems[1] = new_j.cv;
        return sem_const(cv);
    }
    Sem t = {.kind = SEM_TUPLE, .nelems = 2};
    t.elems = arena_alloc(s->a, 2 * sizeof(Sem));
    t.elems[0] = new_i;
    t.elems[1] = new_j;
    return t;
}

/* libdevice.NAME(x) / libdevice.NAME(x, y): float arguments (Triton's extern_elementwise
 * promotes and broadcasts them together); the result has their type, int1 for isnan, isinf and
 * signbit. fp16 and bf16 are accepted and computed in fp32 (op_dtype), as tric's math ops. */
Sem libdevice_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    LibdeviceFn fn = (LibdeviceFn)call->call.fn->sem.libdevice_fn;
    const LibdeviceInfo *info = libdevice_info(fn);
    Type t;
    for (int i = 0; i < info->nargs; i++) {
        if (!value_arg(s, call, i, fname, i ? "second argument" : "argument", &t))
            return sem_error();
        if (t.is_ptr) {
            diag_error(s->diag, arg_loc(call, i), "%s cannot take a pointer (%s)", fname,
                       tstr(s, t));
            return sem_error();
        }
        if (!reject_fp8(s, arg_loc(call, i), fname, t))
            return sem_error();
    }
    Sem v;
    if (info->nargs == 2) {
        v = elementwise2(s, call, fname, 0, 1, true, false);
        if (is_error(v))
            return v;
    } else {
        if (!dtype_is_float(t.dtype)) {
            diag_error(s->diag, arg_loc(call, 0),
                       "%s needs a float argument, got %s; convert "
                       "with .to(tl.float32)",
                       fname, tstr(s, t));
            return sem_error();
        }
        v = sem_value(t);
        v.compute_dtype = t.dtype;
    }
    call->call.resolved->op_dtype = math_dtype(v.compute_dtype);
    if (info->result == LDR_PRED) {
        DType cd = v.compute_dtype;
        v = sem_value(with_shape(DT_I1, false, v.type));
        v.compute_dtype = cd;
    }
    return v;
}

/* tl.program_id(axis), tl.num_programs(axis): an int32 for axis 0, 1 or 2. */
Sem program_id_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    int64_t axis;
    if (!const_int_arg(s, call, 0, fname, "axis", &axis))
        return sem_error();
    if (axis < 0 || axis > 2) {
        diag_error(s->diag, arg_loc(call, 0), "%s's axis must be 0, 1 or 2, got %lld", fname,
                   (long long)axis);
        return sem_error();
    }
    call->call.resolved->axis = (int)axis;
    return sem_value(type_scalar(DT_I32));
}

/* tl.arange(start, end): constexpr int bounds, a power-of-two range; an int32 block. */
Sem arange_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    int64_t lo = 0, hi = 0;
    for (int i = 0; i < 2; i++) {
        Expr *x = arg(call, i);
        Sem v = x->sem;
        if (is_error(v))
            return sem_error();
        if (!(v.kind == SEM_CONST && v.cv.kind == CV_INT)) {
            diag_error(s->diag, x->loc, "arange's %s must be a constexpr int, got %s",
                       i ? "end" : "start", sem_describe(s, v));
            return sem_error();
        }
        *(i ? &hi : &lo) = v.cv.i;
    }
    if (hi <= lo) {
        diag_error(s->diag, callee_loc(call),
                   "arange's end (%lld) must be greater than its "
                   "start (%lld)",
                   (long long)hi, (long long)lo);
        return sem_error();
    }
    if (lo < INT32_MIN || hi > (int64_t)INT32_MAX + 1) {
        diag_error(s->diag, callee_loc(call), "arange's bounds must fit in int32");
        return sem_error();
    }
    if (!is_pow2(hi - lo)) {
        diag_error(s->diag, callee_loc(call), "arange's range must be a power of two, got %lld",
                   (long long)(hi - lo));
        return sem_error();
    }
    if (hi - lo > MAX_BLOCK_NUMEL) {
        diag_error(s->diag, callee_loc(call),
                   "arange's range %lld exceeds the %d elements a "
                   "block may hold",
                   (long long)(hi - lo), MAX_BLOCK_NUMEL);
        return sem_error();
    }
    call->call.resolved->start = lo;
    call->call.resolved->end = hi;
    int32_t n = (int32_t)(hi - lo);
    return sem_value(type_block(type_scalar(DT_I32), 1, &n));
}

/* tl.zeros(shape, dtype), tl.full(shape, value, dtype). */
Sem full_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Type shape;
    DType dt;
    int di = b == BI_ZEROS ? 1 : 2;
    bool ok = shape_arg(s, call, 0, fname, &shape);
    ok = dtype_arg(s, call, di, fname, &dt) && ok;
    if (b == BI_FULL) {
        Type v;
        if (!value_arg(s, call, 1, fname, "value", &v))
            ok = false;
        else if (v.rank != 0 || v.is_ptr) {
            diag_error(s->diag, arg_loc(call, 1), "%s's value must be a scalar, got %s", fname,
                       tstr(s, v));
            ok = false;
        }
    }
    if (!ok)
        return sem_error();
    return sem_value(with_shape(dt, false, shape));
}

/* tl.zeros_like(x): zeros of x's type. */
Sem zeros_like_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Type t;
    if (!value_arg(s, call, 0, fname, "input", &t))
        return sem_error();
    if (t.is_ptr) {
        diag_error(s->diag, arg_loc(call, 0), "%s needs numbers, got %s", fname, tstr(s, t));
        return sem_error();
    }
    return sem_value(t);
}

/* tl.cdiv(x, div): folded on constexprs, else typed as (x + div - 1) // div. */
Sem cdiv_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Expr *x = arg(call, 0), *d = arg(call, 1);
    if (is_error(x->sem) || is_error(d->sem))
        return sem_error();
    if (x->sem.kind == SEM_CONST && d->sem.kind == SEM_CONST) {
        if (x->sem.cv.kind != CV_INT || d->sem.cv.kind != CV_INT) {
            diag_error(s->diag, callee_loc(call), "%s needs ints", fname);
            return sem_error();
        }
        if (d->sem.cv.i == 0) {
            diag_error(s->diag, d->loc, "%s: division by zero", fname);
            return sem_error();
        }
        return sem_int(py_floordiv(x->sem.cv.i + d->sem.cv.i - 1, d->sem.cv.i));
    }
    /* (x + div - 1) // div, typed as those operators are. */
    Sem sum = binary_sems(s, callee_loc(call), BIN_ADD, x->sem, d->sem);
    Sem m1 = binary_sems(s, callee_loc(call), BIN_SUB, sum, sem_int(1));
    Sem q = binary_sems(s, callee_loc(call), BIN_FLOORDIV, m1, d->sem);
    return q;
}

/* tl.fdiv(x, y, ieee_rounding=False): floats; the quotient in their computation type. */
Sem fdiv_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    /* Triton's math.fdiv: both operands floats; ieee_rounding (a constexpr bool) picks the
     * correctly rounded quotient (div_rn) over the `/` operator's. */
    Expr *ieee = arg(call, 2);
    if (ieee && !is_error(ieee->sem) &&
        !(ieee->sem.kind == SEM_CONST && ieee->sem.cv.kind == CV_BOOL)) {
        diag_error(s->diag, arg_loc(call, 2), "%s's ieee_rounding must be a constexpr bool, got %s",
                   fname, sem_describe(s, ieee->sem));
        return sem_error();
    }
    for (int i = 0; i < 2; i++) {
        Expr *x = arg(call, i);
        if (x && x->sem.kind == SEM_VALUE && !x->sem.type.is_ptr &&
            !dtype_is_float(x->sem.type.dtype)) {
            diag_error(s->diag, arg_loc(call, i), "%s needs float operands, got %s", fname,
                       tstr(s, x->sem.type));
            return sem_error();
        }
    }
    Sem v = elementwise2(s, call, fname, 0, 1, true, false);
    call->call.resolved->ieee_rounding = ieee && ieee->sem.cv.b;
    call->call.resolved->op_dtype = math_dtype(v.compute_dtype);
    return v;
}

/* tl.minimum(x, y), tl.maximum(x, y), with propagate_nan=. */
Sem minmax_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    if (!propagate_nan_arg(s, call, 2, fname))
        return sem_error();
    return elementwise2(s, call, fname, 0, 1, false, false);
}

/* tl.where(condition, x, y): x and y promoted together, all three broadcast. */
Sem where_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Type c;
    if (!value_arg(s, call, 0, fname, "condition", &c))
        return sem_error();
    if (c.is_ptr) {
        diag_error(s->diag, arg_loc(call, 0), "%s's condition must be int1, got %s", fname,
                   tstr(s, c));
        return sem_error();
    }
    /* Two fp8 values of one format select without a conversion (a Python scalar would need
     * fp8 arithmetic's rounding: an error, as elsewhere). */
    Expr *xe = arg(call, 1), *ye = arg(call, 2);
    Sem v;
    if (xe && ye && xe->sem.kind == SEM_VALUE && ye->sem.kind == SEM_VALUE &&
        !xe->sem.type.is_ptr && dtype_is_fp8(xe->sem.type.dtype) &&
        xe->sem.type.dtype == ye->sem.type.dtype) {
        Type xy;
        if (!broadcast(s, callee_loc(call), xe->sem.type, ye->sem.type, &xy))
            return sem_error();
        v = sem_value(with_shape(xe->sem.type.dtype, false, xy));
        v.compute_dtype = xe->sem.type.dtype;
    } else {
        v = elementwise2(s, call, fname, 1, 2, false, false);
    }
    if (is_error(v))
        return v;
    Type shape;
    if (!broadcast(s, callee_loc(call), c, v.type, &shape))
        return sem_error();
    DType cd = v.compute_dtype;
    v = sem_value(with_shape(v.type.dtype, v.type.is_ptr, shape));
    v.compute_dtype = cd;
    return v;
}

/* tl.tensor_descriptor called: it is a type, for isinstance only. */
Sem tensor_desc_type_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    diag_error(s->diag, callee_loc(call),
               "tl.tensor_descriptor is a type for isinstance; make "
               "a descriptor with tl.make_tensor_descriptor");
    return sem_error();
}

/* tl.to_tensor(x). */
Sem to_tensor_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    /* semantic.to_tensor: a Python int is int32 when it fits, else uint32, else int64; a
     * float fp32; a bool int1. A run-time value stays as it is. */
    Sem v = arg(call, 0)->sem;
    if (v.kind == SEM_VALUE && !v.type.is_ptr)
        return sem_value(v.type);
    if (v.kind == SEM_VALUE)
        return v;
    if (v.kind == SEM_CONST && v.cv.kind == CV_INT) {
        int64_t x = v.cv.i;
        DType d = x >= INT32_MIN && x <= INT32_MAX     ? DT_I32
                  : x >= 0 && x <= (int64_t)UINT32_MAX ? DT_U32
                                                       : DT_I64;
        return sem_value(type_scalar(d));
    }
    if (v.kind == SEM_CONST && v.cv.kind == CV_FLOAT)
        return sem_value(type_scalar(DT_F32));
    if (v.kind == SEM_CONST && v.cv.kind == CV_BOOL)
        return sem_value(type_scalar(DT_I1));
    if (!is_error(v))
        diag_error(s->diag, arg_loc(call, 0), "%s needs a number, got %s", fname,
                   sem_describe(s, v));
    return sem_error();
}

/* standard.xor_sum: integers, in their dtype */
Sem xor_sum_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    return scan_reduction(s, call, fname, 2, SCAN_XOR, "xor needs integers");
}

/* tl.fma(x, y, z): floats, promoted and broadcast together. */
Sem fma_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Sem xy = elementwise2(s, call, fname, 0, 1, true, false);
    if (is_error(xy))
        return xy;
    Type z;
    if (!value_arg(s, call, 2, fname, "z", &z))
        return sem_error();
    Type shape;
    if (!broadcast(s, callee_loc(call), xy.type, z, &shape))
        return sem_error();
    DType ct;
    const char *why = "";
    if (!computation_type(xy.compute_dtype, false, z.dtype, arg(call, 2)->sem.kind == SEM_CONST,
                          false, &ct, &why) ||
        !dtype_is_float(ct)) {
        diag_error(s->diag, callee_loc(call), "%s needs float operands", fname);
        return sem_error();
    }
    Sem v = sem_value(with_shape(ct, false, shape));
    v.compute_dtype = ct;
    return v;
}

/* tl.umulhi(x, y): integers. */
Sem umulhi_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    return elementwise2(s, call, fname, 0, 1, false, true);
}

/* multiple_of, max_contiguous, max_constancy: the input, with constexpr hint values. */
Sem hint_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Type t;
    if (!value_arg(s, call, 0, fname, "input", &t))
        return sem_error();
    Expr *v = arg(call, 1);
    Sem vs = v->sem;
    bool ok = vs.kind == SEM_CONST && (vs.cv.kind == CV_INT || vs.cv.kind == CV_TUPLE);
    if (ok && vs.cv.kind == CV_TUPLE) {
        ok = vs.cv.tuple.n == (t.rank ? t.rank : 1);
        for (int i = 0; ok && i < vs.cv.tuple.n; i++)
            ok = vs.cv.tuple.elems[i].kind == CV_INT && vs.cv.tuple.elems[i].i > 0;
    } else if (ok) {
        ok = vs.cv.i > 0;
    }
    if (!ok) {
        if (!is_error(vs))
            diag_error(s->diag, v->loc,
                       "%s's values must be a positive constexpr int (or one "
                       "per dimension)",
                       fname);
        return sem_error();
    }
    ResolvedCall *rc = call->call.resolved;
    if (vs.cv.kind == CV_INT) {
        rc->hints[rc->nhints++] = vs.cv.i;
    } else {
        for (int i = 0; i < vs.cv.tuple.n; i++)
            rc->hints[rc->nhints++] = vs.cv.tuple.elems[i].i;
    }
    /* semantic.multiple_of / max_contiguous: one value per dim (max_constancy's values are not
     * used: tric's axis analysis does not take that hint) */
    int dims = t.rank ? t.rank : 1;
    if (b != BI_MAX_CONSTANCY && rc->nhints != dims) {
        diag_error(s->diag, v->loc, "%s needs %d values, one per dimension of %s", fname, dims,
                   tstr(s, t));
        return sem_error();
    }
    return sem_value(t);
}

/* tl.static_assert(cond, msg=): checked here, at compile time. */
Sem static_assert_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Expr *c = arg(call, 0);
    if (is_error(c->sem))
        return sem_error();
    if (c->sem.kind != SEM_CONST) {
        diag_error(s->diag, c->loc,
                   "static_assert's condition must be a constexpr, got %s "
                   "(use tl.device_assert for run-time checks)",
                   sem_describe(s, c->sem));
        return sem_error();
    }
    if (!const_truthy(&c->sem.cv)) {
        Expr *m = arg(call, 1);
        if (m && m->sem.kind == SEM_CONST && m->sem.cv.kind == CV_STR)
            diag_error(s->diag, call->loc, "static_assert failed: %s", m->sem.cv.s);
        else
            diag_error(s->diag, call->loc, "static_assert failed");
        return sem_error();
    }
    return sem_void();
}

/* static_print, debug_barrier: no value. */
Sem no_value_builtin(Sema *s, Expr *call, Builtin b, const char *fname) { return sem_void(); }

/* tl.device_print(prefix, values...). */
Sem device_print_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    /* Triton prints through the device printf; tric has none, so the call prints nothing,
     * as Python's print does in a tric kernel. Its prefix must still be a string. */
    Expr *prefix = arg(call, 0);
    if (prefix && !is_error(prefix->sem) &&
        !(prefix->sem.kind == SEM_CONST && prefix->sem.cv.kind == CV_STR)) {
        diag_error(s->diag, arg_loc(call, 0), "%s's prefix must be a string, got %s", fname,
                   sem_describe(s, prefix->sem));
        return sem_error();
    }
    return sem_void();
}

/* Triton 3.3's tl.assume(cond): a promise to the optimizer (llvm.assume), undefined behaviour
 * when false. tric checks the condition as device_assert's and drops the promise when it builds the IR
 * (always valid): its address arithmetic takes what it needs from the signature's hints. */
Sem device_assert_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Expr *c = arg(call, 0);
    Type t;
    if (!value_arg(s, call, 0, fname, "condition", &t))
        return sem_error();
    if (t.is_ptr) {
        diag_error(s->diag, c->loc, "%s's condition cannot be a pointer", fname);
        return sem_error();
    }
    if (c->sem.kind == SEM_CONST && !const_truthy(&c->sem.cv)) {
        diag_error(s->diag, call->loc, "%s's condition is always false",
                   b == BI_ASSUME ? fname : "device_assert");
        return sem_error();
    }
    return sem_void();
}

/* range / tl.range / tl.static_range anywhere but a for loop's iterable. */
Sem range_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    diag_error(s->diag, callee_loc(call), "%s may only be used as a for loop's iterable", fname);
    return sem_error();
}

/* tl.constexpr(v): v, which must be a compile-time value. */
Sem constexpr_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Expr *v = arg(call, 0);
    if (is_error(v->sem))
        return sem_error();
    if (v->sem.kind != SEM_CONST) {
        diag_error(s->diag, v->loc, "tl.constexpr() needs a compile-time value, got %s",
                   sem_describe(s, v->sem));
        return sem_error();
    }
    return v->sem;
}

/* triton.next_power_of_2(n), folded. */
Sem next_power_of_2_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    /* triton.next_power_of_2: n - 1 with every lower bit set, plus one (0 for n <= 0). */
    int64_t n, p = 1;
    if (!const_int_arg(s, call, 0, fname, "n", &n))
        return sem_error();
    if (n > (INT64_C(1) << 62)) {
        diag_error(s->diag, arg_loc(call, 0), "%s: %lld has no power of two in int64", fname,
                   (long long)n);
        return sem_error();
    }
    while (p < n)
        p <<= 1;
    return sem_int(n <= 0 ? 0 : p);
}

/* triton.language.standard._log2(i), a private helper FlagGems' topk and sort import: the number
 * of halvings that bring a constexpr i down to 1 (floor(log2(i)); 0 for i <= 1). */
Sem log2_constexpr_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    int64_t n, log2 = 0;
    if (!const_int_arg(s, call, 0, fname, "i", &n))
        return sem_error();
    for (; n > 1; n >>= 1)
        log2++;
    return sem_int(log2);
}

/* tl.pointer_type(dtype): the type. */
Sem pointer_type_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    DType dt;
    if (!dtype_arg(s, call, 0, fname, &dt))
        return sem_error();
    return sem_type(type_ptr(dt));
}

/* Python's len(), int() and float() on constexprs. */
Sem python_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Expr *x = arg(call, 0);
    if (is_error(x->sem))
        return sem_error();
    if (x->sem.kind != SEM_CONST) {
        diag_error(s->diag, x->loc, "%s works on constexprs only, got %s", fname,
                   sem_describe(s, x->sem));
        return sem_error();
    }
    ConstVal cv = x->sem.cv;
    if (b == BI_LEN) {
        if (cv.kind == CV_TUPLE)
            return sem_int(cv.tuple.n);
        if (cv.kind == CV_STR)
            return sem_int((int64_t)strlen(cv.s));
    } else if (b == BI_FLOAT_PY && cv.kind == CV_STR) {
        /* float("inf"), float("-inf"), float("nan"): common in attention kernels. */
        ConstVal f;
        if (const_from_string(cv.s, &f, s->a) && (f.kind == CV_FLOAT || f.kind == CV_INT))
            return sem_float(const_as_float(&f));
        const char *p = cv.s;
        bool neg = *p == '-';
        if (*p == '-' || *p == '+')
            p++;
        if (!strcmp(p, "inf") || !strcmp(p, "infinity") || !strcmp(p, "Infinity"))
            return sem_float(neg ? -INFINITY : INFINITY);
        if (!strcmp(p, "nan"))
            return sem_float(NAN);
        diag_error(s->diag, arg_loc(call, 0), "float(): could not convert string to float: '%s'",
                   cv.s);
        return sem_error();
    } else if (const_is_number(&cv)) {
        if (b == BI_INT_PY) {
            if (cv.kind == CV_FLOAT) {
                if (!(fabs(cv.f) < 9.2e18)) {
                    diag_error(s->diag, x->loc, "int(): %g does not fit in an int", cv.f);
                    return sem_error();
                }
                return sem_int((int64_t)cv.f); /* truncation toward zero, as Python */
            }
            return sem_int(const_as_int(&cv));
        }
        return sem_float(const_as_float(&cv));
    }
    diag_error(s->diag, x->loc, "%s cannot take %s", fname, sem_describe(s, x->sem));
    return sem_error();
}

/* The sema rule of each builtin, from its row of TRIC_BUILTINS. */
static BuiltinRule *const builtin_rules[BI_COUNT] = {
#define X(e, name, params, sema_rule, build, doc) [e] = sema_rule,
    TRIC_BUILTINS(X)
#undef X
};

Sem builtin_call(Sema *s, Expr *call, Builtin b, Expr *receiver)
{
    if ((int)b < 0 || b >= BI_COUNT) {
        TRIC_INTERNAL(s->diag, "builtin_call: no builtin %d", (int)b);
        return sem_error();
    }
    call->call.resolved = arena_alloc(s->a, sizeof(ResolvedCall));
    /* Python's min / max take any number of arguments: their rule binds them itself. */
    if (b == BI_MIN_PY || b == BI_MAX_PY)
        return minmax_py_builtin(s, call, b, NULL);
    if (!bind_builtin_args(s, call, b, receiver))
        return sem_error();
    settle_synthetic(s, call);
    const char *fname =
        receiver ? callee_display(s, call, b) : arena_printf(s->a, "%s()", builtin_name(b));
    if (call->call.fn->kind == EX_NAME || b == BI_LIBDEVICE1 || b == BI_LIBDEVICE2)
        fname = callee_display(s, call, b);
    return builtin_rules[b](s, call, b, fname);
}

/* ---- tl.join, tl.split, tl.interleave --------------------------------------------------------- */

/* tl.join(a, b) (Triton's semantic.join): a and b broadcast to one shape, of one type; the result
 * has a new last dim of 2 (two scalars give a [2] block). tl.interleave(a, b) (standard.interleave)
 * is the join with its last two dims merged: [..., N] twice gives [..., 2N]. */
Sem join_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Type ta, tb, shape;
    if (!value_arg(s, call, 0, fname, "a", &ta) || !value_arg(s, call, 1, fname, "b", &tb))
        return sem_error();
    if (ta.dtype != tb.dtype || ta.is_ptr != tb.is_ptr) {
        diag_error(s->diag, callee_loc(call), "%s needs a and b of one type, got %s and %s", fname,
                   tstr(s, type_elem(ta)), tstr(s, type_elem(tb)));
        return sem_error();
    }
    if (!broadcast(s, callee_loc(call), ta, tb, &shape))
        return sem_error();
    if (shape.rank + 1 > TRIC_MAX_RANK) {
        diag_error(s->diag, callee_loc(call), "%s: blocks have at most %d dimensions, got %s",
                   fname, TRIC_MAX_RANK, shape_str(s, shape));
        return sem_error();
    }
    Type r = with_shape(ta.dtype, ta.is_ptr, shape);
    r.shape[r.rank++] = 2;
    if (b == BI_INTERLEAVE && r.rank > 1) {
        r.rank--;
        r.shape[r.rank - 1] *= 2;
        r.shape[r.rank] = 0;
    }
    return sem_value(r);
}

/* tl.split(a) / a.split() (Triton's core.split): a's last dim must be 2; the two halves along it,
 * as a tuple (a [2] block gives two scalars). */
Sem split_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Type t;
    if (!value_arg(s, call, 0, fname, "a", &t))
        return sem_error();
    if (t.rank == 0 || t.shape[t.rank - 1] != 2) {
        diag_error(s->diag, arg_loc(call, 0), "%s needs a block whose last dim is 2, got %s", fname,
                   t.rank ? shape_str(s, t) : arena_printf(s->a, "the scalar %s", tstr(s, t)));
        return sem_error();
    }
    if (t.rank == 1 && t.is_ptr) {
        diag_error(s->diag, arg_loc(call, 0),
                   "%s of a [2] block of pointers into two scalars is not supported", fname);
        return sem_error();
    }
    Type half = t;
    half.shape[--half.rank] = 0;
    Sem pair = {.kind = SEM_TUPLE, .nelems = 2};
    pair.elems = arena_alloc(s->a, 2 * sizeof(Sem));
    pair.elems[0] = pair.elems[1] = sem_value(half);
    return pair;
}

/* ---- tl.dot_scaled (Triton 3.x semantic.dot_scaled, DotScaledOp's verifier) ------------------ */

/* One operand of tl.dot_scaled as the checks see it. */
typedef struct ScaledOperand {
    const char *side;   /* "lhs" or "rhs", as Triton's parameter names */
    const char *format; /* "e2m1", "e4m3", "e5m2", "bf16" or "fp16" */
    Type type;          /* the value as passed (packed for e2m1) */
    bool k_pack;        /* e2m1: two values per uint8 along K (else along M for lhs, N for rhs) */
    int32_t k;          /* unpacked K */
    int32_t mn;         /* unpacked M (lhs) or N (rhs) */
} ScaledOperand;

/* lhs_format / rhs_format (argument i): a constexpr string naming one of the formats Triton's
 * dot_scaled allows. */
static bool scaled_format_arg(Sema *s, Expr *call, int i, const char *fname, const char *what,
                              const char **out)
{
    static const char *const formats[] = {"e2m1", "e4m3", "e5m2", "bf16", "fp16"};
    Expr *x = arg(call, i);
    if (!x || is_error(x->sem))
        return false;
    if (x->sem.kind != SEM_CONST || x->sem.cv.kind != CV_STR) {
        diag_error(s->diag, arg_loc(call, i), "%s's %s must be a constexpr string, got %s", fname,
                   what, sem_describe(s, x->sem));
        return false;
    }
    for (size_t k = 0; k < sizeof formats / sizeof formats[0]; k++)
        if (!strcmp(x->sem.cv.s, formats[k])) {
            *out = formats[k];
            return true;
        }
    diag_error(s->diag, arg_loc(call, i),
               "%s: invalid float format \"%s\" for %s (expected \"e2m1\", \"e4m3\", \"e5m2\", "
               "\"bf16\" or \"fp16\")",
               fname, x->sem.cv.s, what);
    return false;
}

/* The dtypes a value in `format` may come as (semantic._bitcast_to_fp_type): e2m1 packed in
 * uint8; fp8 formats as their fp8 type or uint8; bf16 / fp16 as themselves or uint16. */
static bool scaled_dtype_ok(const char *format, DType d)
{
    if (!strcmp(format, "e2m1"))
        return d == DT_U8;
    if (!strcmp(format, "e4m3"))
        return d == DT_F8E4NV || d == DT_U8;
    if (!strcmp(format, "e5m2"))
        return d == DT_F8E5 || d == DT_U8;
    if (!strcmp(format, "bf16"))
        return d == DT_BF16 || d == DT_U16;
    return d == DT_F16 || d == DT_U16;
}

/* Value, format and k_pack of one operand (arguments value_i, format_i, k_pack_i). */
static bool scaled_operand(Sema *s, Expr *call, int value_i, int format_i, int k_pack_i,
                           const char *fname, ScaledOperand *op)
{
    bool rhs = value_i == 3;
    op->side = rhs ? "rhs" : "lhs";
    op->k_pack = true;
    if (!value_arg(s, call, value_i, fname, op->side, &op->type) ||
        !scaled_format_arg(s, call, format_i, fname, rhs ? "rhs_format" : "lhs_format",
                           &op->format))
        return false;
    if (!arg_is_none(call, k_pack_i) &&
        !const_bool_arg(s, call, k_pack_i, fname, rhs ? "rhs_k_pack" : "lhs_k_pack", &op->k_pack))
        return false;
    Type t = op->type;
    if (t.is_ptr || !scaled_dtype_ok(op->format, t.dtype)) {
        diag_error(s->diag, arg_loc(call, value_i), "%s: %s in format %s must be %s, got %s", fname,
                   op->side, op->format,
                   !strcmp(op->format, "e2m1")   ? "uint8 (two values per byte)"
                   : !strcmp(op->format, "e4m3") ? "float8e4nv or uint8"
                   : !strcmp(op->format, "e5m2") ? "float8e5 or uint8"
                   : !strcmp(op->format, "bf16") ? "bfloat16 or uint16"
                                                 : "float16 or uint16",
                   tstr(s, t));
        return false;
    }
    if (!op->k_pack && strcmp(op->format, "e2m1")) {
        diag_error(s->diag, arg_loc(call, k_pack_i),
                   "%s: only e2m1 (mxfp4) inputs can be packed along a dimension other than K",
                   fname);
        return false;
    }
    if (t.rank != 2 && t.rank != 3)
        return true; /* the caller reports the ranks of both */
    int packed = strcmp(op->format, "e2m1") ? 1 : 2;
    int r = t.rank, k_dim = rhs ? r - 2 : r - 1, mn_dim = rhs ? r - 1 : r - 2;
    op->k = t.shape[k_dim] * (op->k_pack ? packed : 1);
    op->mn = t.shape[mn_dim] * (op->k_pack ? 1 : packed);
    return true;
}

/* The scale of one operand (argument i): None, or uint8 e8m0 exponents of shape [B,] MN x K/G
 * for both operands (the rhs's is not transposed, as in Triton). *group gets K / scale's last
 * dim (DotScaledOp's deduceScaleFactor: 16 or 32), 0 for None. */
static bool scaled_scale_arg(Sema *s, Expr *call, int i, const char *fname, const ScaledOperand *op,
                             int *group)
{
    *group = 0;
    if (arg_is_none(call, i))
        return true;
    const char *what = !strcmp(op->side, "rhs") ? "rhs_scale" : "lhs_scale";
    Type st;
    if (!value_arg(s, call, i, fname, what, &st))
        return false;
    Type t = op->type;
    if (st.is_ptr || st.dtype != DT_U8) {
        diag_error(s->diag, arg_loc(call, i), "%s: %s must be uint8 (e8m0 exponents), got %s",
                   fname, what, tstr(s, st));
        return false;
    }
    bool shape_ok = st.rank == t.rank && st.shape[st.rank - 2] == op->mn &&
                    (t.rank == 2 || st.shape[0] == t.shape[0]);
    int32_t ks = shape_ok ? st.shape[st.rank - 1] : 0;
    if (shape_ok && (op->k % ks != 0 || (op->k / ks != 16 && op->k / ks != 32))) {
        diag_error(s->diag, arg_loc(call, i),
                   "%s: %s has %d scales along K for K=%d; the scale factor must be 16 or 32",
                   fname, what, ks, op->k);
        return false;
    }
    if (!shape_ok) {
        diag_error(s->diag, arg_loc(call, i),
                   "%s: %s has shape %s; for %s %s (%s=%d, K=%d) it must be [%s%d, K/32]", fname,
                   what, shape_str(s, st), op->side, shape_str(s, t),
                   !strcmp(op->side, "rhs") ? "N" : "M", op->mn, op->k, t.rank == 3 ? "B, " : "",
                   op->mn);
        return false;
    }
    *group = op->k / ks;
    return true;
}

/* tl.dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, rhs_format, acc=None,
 * fast_math=False, lhs_k_pack=True, rhs_k_pack=True, out_dtype=tl.float32): the checks of
 * core.dot_scaled and semantic.dot_scaled; the result is fp32 [B,] M x N. */
Sem dot_scaled_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    ScaledOperand l = {0}, r = {0};
    if (!scaled_operand(s, call, 0, 2, 8, fname, &l) ||
        !scaled_operand(s, call, 3, 5, 9, fname, &r))
        return sem_error();
    SrcLoc loc = callee_loc(call);
    /* Triton also takes two 3-D (batched) blocks; tric's dot op is 2-D so far, and the IR
     * builder (build_ir.c) is written for any rank, ready for it. */
    if (l.type.rank != 2 || r.type.rank != 2) {
        diag_error(s->diag, loc,
                   "%s needs two 2-D blocks (batched 3-D ones are not supported yet), got %s "
                   "and %s",
                   fname, tstr(s, l.type), tstr(s, r.type));
        return sem_error();
    }
    if (l.k != r.k) {
        diag_error(s->diag, loc,
                   "%s: the reduction dimension must pack the same number of elements: lhs %s "
                   "in %s holds K=%d, rhs %s in %s holds K=%d",
                   fname, shape_str(s, l.type), l.format, l.k, shape_str(s, r.type), r.format, r.k);
        return sem_error();
    }
    int rank = l.type.rank;
    if (rank == 3 && l.type.shape[0] != r.type.shape[0]) {
        diag_error(s->diag, loc, "%s batch dimensions differ: %d vs %d", fname, l.type.shape[0],
                   r.type.shape[0]);
        return sem_error();
    }
    if (l.mn < 16 || r.mn < 16 || l.k < 16) {
        diag_error(s->diag, loc, "%s needs M, N and K of at least 16, got M=%d N=%d K=%d", fname,
                   l.mn, r.mn, l.k);
        return sem_error();
    }
    int lgroup, rgroup;
    if (!scaled_scale_arg(s, call, 1, fname, &l, &lgroup) ||
        !scaled_scale_arg(s, call, 4, fname, &r, &rgroup))
        return sem_error();
    if (lgroup && rgroup && lgroup != rgroup) {
        diag_error(s->diag, loc,
                   "%s: operands must have the same scale factor (lhs: %d vs rhs: %d)", fname,
                   lgroup, rgroup);
        return sem_error();
    }
    bool fast_math = false;
    if (!arg_is_none(call, 7) && !const_bool_arg(s, call, 7, fname, "fast_math", &fast_math))
        return sem_error();
    if (!arg_is_none(call, 10)) {
        DType od;
        if (!dtype_arg(s, call, 10, fname, &od))
            return sem_error();
        if (od != DT_F32) {
            diag_error(s->diag, arg_loc(call, 10),
                       "%s: only float32 is supported for out_dtype, got %s", fname,
                       dtype_name(od));
            return sem_error();
        }
    }
    Type rt = with_shape(DT_F32, false, l.type);
    rt.shape[rank - 2] = l.mn;
    rt.shape[rank - 1] = r.mn;
    if (!acc_arg(s, call, 6, fname, rt))
        return sem_error();
    /* DecomposeScaledBlocked's compute type: fp16 when either format is fp16, else bf16 */
    bool fp16 = !strcmp(l.format, "fp16") || !strcmp(r.format, "fp16");
    call->call.resolved->op_dtype = fp16 ? DT_F16 : DT_BF16;
    call->call.resolved->fast_math = fast_math;
    call->call.resolved->k_pack[0] = l.k_pack;
    call->call.resolved->k_pack[1] = r.k_pack;
    return sem_value(rt);
}
