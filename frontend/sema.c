/* sema.c: specialization and typing of one @jit kernel: the entry (sema_specialize), the kernel
 * and its parameters, module globals and imports, @triton.heuristics; the environments and Sem
 * helpers every sema file uses.
 *
 * sema_specialize clones the kernel's FuncDef, binds its parameters (types from --signature or
 * annotations, constexprs from -D / the signature / defaults), and walks the body with an
 * environment of names -> Sem, setting Expr.sem on every reachable expression. It follows what
 * Triton's code generator (python/triton/compiler/code_generator.py) and semantic layer
 * (python/triton/language/semantic.py) do at trace time:
 *   - constexpr arithmetic is Python arithmetic, folded here (floor // and %, / gives a float);
 *   - `if` on a constexpr is decided here and only the taken branch is analysed;
 *   - tl.static_range loops are unrolled (a typed clone of the body per iteration);
 *   - calls of @jit helpers are inlined: a clone per call site, analysed with the arguments bound;
 *   - run-time values follow Triton's typing rules (computation_type_impl, integer_promote_impl,
 *     weakly typed Python scalars) and broadcasting (numpy-like, right-aligned).
 * Every error names what is wrong in one line at the precise token; an expression whose analysis
 * failed gets kind SEM_UNSET, which later checks treat as "already reported" (no cascades).
 *
 * sema is split by concern, the files sharing frontend/sema_internal.h:
 *   sema.c          this file
 *   sema_const.c    constexpr folding (Python arithmetic) and @triton.constexpr_function calls
 *   sema_types.c    Triton's typing rules: computation types, promotion, broadcasting, operators
 *   sema_expr.c     names, attributes, tuples, subscripts, ternaries, calls, the expression walk
 *   sema_builtins.c tl.* builtins: argument binding, builtin_call (the TRIC_BUILTINS table's
 *                   sema rule), their rules, which fill each call's ResolvedCall
 *   sema_memory.c   pointers and memory builtins: block pointers, tensor descriptors, load,
 *                   store, atomics
 *   sema_stmt.c     statements: assignments, if, for (static_range unrolled), while, return
 *   sema_inline.c   calls of @jit helpers, inlined (a typed clone per call site) */
#include "frontend/sema_internal.h"
#include "ir/ir.h" /* the libdevice functions (TRIC_LIBDEVICE_FNS), memory orders */

#include <math.h>
#include <string.h>

/* ---- environments ---------------------------------------------------------------------------- */

Binding *env_find(Env *env, const char *name)
{
    for (int i = env->n - 1; i >= 0; i--)
        if (!strcmp(env->items[i].name, name))
            return &env->items[i];
    return NULL;
}

void env_set(Sema *s, Env *env, const char *name, Sem sem, SrcLoc at)
{
    Binding *b = env_find(env, name);
    if (b) {
        b->sem = sem;
        b->partial = DEFINED;
        b->assigned_at = at;
        return;
    }
    Binding nb = {.name = name, .sem = sem, .partial = DEFINED, .assigned_at = at};
    ARENA_PUSH(s->a, env->items, env->n, env->cap, nb);
}

Env env_copy(Sema *s, const Env *env)
{
    Env c = {0};
    if (env->n) {
        c.items = arena_alloc(s->a, (size_t)env->n * sizeof *c.items);
        memcpy(c.items, env->items, (size_t)env->n * sizeof *c.items);
        c.n = c.cap = env->n;
    }
    return c;
}

/* ---- Sem helpers ------------------------------------------------------------------------------ */

Sem sem_error(void) { return (Sem){.kind = SEM_UNSET}; }
bool is_error(Sem s) { return s.kind == SEM_UNSET; }
Sem sem_void(void) { return (Sem){.kind = SEM_VOID}; }

Sem sem_value(Type t) { return (Sem){.kind = SEM_VALUE, .type = t, .compute_dtype = t.dtype}; }

/* Triton's to_tensor for a Python int: int32 if it fits, else uint32, else int64. */
static DType int_literal_dtype(int64_t v)
{
    if (v >= INT32_MIN && v <= INT32_MAX)
        return DT_I32;
    if (v > INT32_MAX && v <= (int64_t)UINT32_MAX)
        return DT_U32;
    return DT_I64;
}

Sem sem_const(ConstVal cv)
{
    Sem r = {.kind = SEM_CONST, .cv = cv};
    switch (cv.kind) {
    case CV_INT: r.type = type_scalar(int_literal_dtype(cv.i)); break;
    case CV_FLOAT:
        r.type = type_scalar(DT_F32); /* Python floats are fp32 in Triton */
        break;
    case CV_BOOL: r.type = type_scalar(DT_I1); break;
    default: break;
    }
    r.compute_dtype = r.type.dtype;
    return r;
}

Sem sem_int(int64_t v) { return sem_const((ConstVal){.kind = CV_INT, .i = v}); }
Sem sem_float(double v) { return sem_const((ConstVal){.kind = CV_FLOAT, .f = v}); }
Sem sem_bool(bool v) { return sem_const((ConstVal){.kind = CV_BOOL, .b = v}); }

bool const_is_number(const ConstVal *cv)
{
    return cv->kind == CV_INT || cv->kind == CV_FLOAT || cv->kind == CV_BOOL;
}

/* The type a Sem has as an operand of a run-time operation: its type, or a number's natural
 * type (int32/fp32/int1). False for None, dtypes, tuples, modules, ... */
bool operand_type(Sem s, Type *t)
{
    if (s.kind == SEM_VALUE) {
        *t = s.type;
        return true;
    }
    if (s.kind == SEM_CONST && const_is_number(&s.cv)) {
        *t = s.type;
        return true;
    }
    return false;
}

bool const_equal(const ConstVal *x, const ConstVal *y)
{
    if (x->kind != y->kind)
        return false;
    switch (x->kind) {
    case CV_NONE: return true;
    case CV_INT: return x->i == y->i;
    case CV_FLOAT: return x->f == y->f || (isnan(x->f) && isnan(y->f));
    case CV_BOOL: return x->b == y->b;
    case CV_DTYPE: return x->dtype == y->dtype;
    case CV_TYPE: return type_equal(x->type, y->type);
    case CV_STR: return !strcmp(x->s, y->s);
    case CV_TUPLE:
        if (x->tuple.n != y->tuple.n)
            return false;
        for (int i = 0; i < x->tuple.n; i++)
            if (!const_equal(&x->tuple.elems[i], &y->tuple.elems[i]))
                return false;
        return true;
    }
    return false;
}

bool sem_same(Sem x, Sem y)
{
    if (x.kind != y.kind)
        return false;
    switch (x.kind) {
    case SEM_VALUE: return type_equal(x.type, y.type);
    case SEM_CONST: return const_equal(&x.cv, &y.cv);
    case SEM_BUILTIN: return x.builtin == y.builtin && x.libdevice_fn == y.libdevice_fn;
    case SEM_FUNC: return x.func == y.func;
    case SEM_TUPLE:
        if (x.nelems != y.nelems || x.block_ptr != y.block_ptr || x.tensor_desc != y.tensor_desc ||
            ((x.block_ptr || x.tensor_desc) && !type_equal(x.type, y.type)))
            return false;
        for (int i = 0; i < x.nelems; i++)
            if (!sem_same(x.elems[i], y.elems[i]))
                return false;
        return true;
    default: return true;
    }
}

/* Python truthiness of a constexpr. */
bool const_truthy(const ConstVal *cv)
{
    switch (cv->kind) {
    case CV_NONE: return false;
    case CV_INT: return cv->i != 0;
    case CV_FLOAT: return cv->f != 0.0;
    case CV_BOOL: return cv->b;
    case CV_DTYPE:
    case CV_TYPE: return true;
    case CV_STR: return cv->s[0] != 0;
    case CV_TUPLE: return cv->tuple.n != 0;
    }
    return false;
}

const char *tstr(Sema *s, Type t) { return type_str(s->a, t); }

/* "<64x32>": a shape alone, for broadcasting messages. */
const char *shape_str(Sema *s, Type t)
{
    if (t.rank == 0)
        return "() (a scalar)";
    StrBuf sb = {0};
    strbuf_putc(&sb, '<');
    for (int i = 0; i < t.rank; i++)
        strbuf_printf(&sb, i ? "x%d" : "%d", t.shape[i]);
    strbuf_putc(&sb, '>');
    char *r = arena_strdup(s->a, sb.data);
    strbuf_free(&sb);
    return r;
}

/* What a Sem is, for messages: "a run-time <128xfp32>", "the constexpr 3", "a module". */
const char *sem_describe(Sema *s, Sem x)
{
    switch (x.kind) {
    case SEM_VALUE: return arena_printf(s->a, "a run-time %s", tstr(s, x.type));
    case SEM_CONST: {
        StrBuf sb = {0};
        const_print(&sb, &x.cv);
        const char *r = arena_printf(s->a, "the constexpr %s", sb.data ? sb.data : "");
        strbuf_free(&sb);
        return r;
    }
    case SEM_MODULE: return arena_printf(s->a, "the module '%s'", x.module ? x.module : "tl");
    case SEM_BUILTIN:
        if (x.builtin == BI_LIBDEVICE1 || x.builtin == BI_LIBDEVICE2)
            return arena_printf(s->a, "the function 'libdevice.%s'",
                                libdevice_info(x.libdevice_fn)->name);
        return arena_printf(s->a, "the builtin '%s'", builtin_name((Builtin)x.builtin));
    case SEM_FUNC: return arena_printf(s->a, "the function '%s'", x.func->name);
    case SEM_VOID: return "nothing (None)";
    case SEM_TUPLE:
        if (x.block_ptr)
            return arena_printf(s->a, "a block pointer to %s", tstr(s, x.type));
        if (x.tensor_desc)
            return arena_printf(s->a, "a tensor descriptor of %s blocks", tstr(s, x.type));
        return arena_printf(s->a, "a tuple of %d values", x.nelems);
    default: return "an invalid value";
    }
}

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/* Location of the keyword `name` of a `name=value` argument, found by walking back from the value
 * over '=' and blanks (the AST keeps only the value's location). */
SrcLoc kwname_loc(SrcLoc value_loc, const char *name)
{
    const SrcFile *f = value_loc.file;
    if (!f || !f->text || value_loc.line < 1 || value_loc.col < 1)
        return value_loc;
    const char *p = f->text, *end = f->text + f->len;
    for (int l = 1; l < value_loc.line; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return value_loc;
        p = nl + 1;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    int line_len = (int)((nl ? nl : end) - p);
    if (value_loc.col - 1 > line_len)
        return value_loc;
    int i = value_loc.col - 2; /* index of the byte before the value */
    while (i >= 0 && (p[i] == ' ' || p[i] == '\t'))
        i--;
    if (i < 0 || p[i] != '=')
        return value_loc;
    i--;
    while (i >= 0 && (p[i] == ' ' || p[i] == '\t'))
        i--;
    int n = (int)strlen(name);
    int start = i - n + 1;
    if (start < 0 || strncmp(p + start, name, (size_t)n))
        return value_loc;
    SrcLoc r = value_loc;
    r.col = start + 1;
    return r;
}

/* Counts one helper copy or unrolled iteration; false (with an error at loc, reported once) when
 * the kernel has grown past MAX_EXPANSIONS. */
bool expand(Sema *s, SrcLoc loc)
{
    if (++s->expansions == MAX_EXPANSIONS + 1)
        diag_error(s->diag, loc,
                   "the kernel expands to more than %d inlined calls and unrolled "
                   "iterations; reduce nested tl.static_range loops or helper calls",
                   MAX_EXPANSIONS);
    return s->expansions <= MAX_EXPANSIONS;
}

/* ---- parameters, annotations, the kernel ------------------------------------------------------ */

/* Evaluates an annotation in the module scope with a quiet diag: its Sem, or error. */
static Sem quiet_global_expr(Sema *s, Expr *e)
{
    Diag quiet = {0};
    Diag *saved = s->diag;
    s->diag = &quiet;
    Expr *c = ast_clone_expr(s->a, e);
    Sem r = global_expr(s, c ? c : e);
    s->diag = saved;
    diag_free(&quiet);
    return r;
}

bool annotation_is_constexpr(Sema *s, Expr *ann)
{
    if (ann->kind == EX_STR)
        return ann->str && (!strcmp(ann->str, "constexpr") || !strcmp(ann->str, "tl.constexpr"));
    Sem a = quiet_global_expr(s, ann);
    return a.kind == SEM_BUILTIN && a.builtin == BI_CONSTEXPR;
}

typedef enum AnnKind { ANN_NONE, ANN_CONSTEXPR, ANN_TYPE, ANN_BAD } AnnKind;

/* A parameter annotation: tl.constexpr, a signature string "*fp32:16", a dtype (tl.int32), or
 * tl.pointer_type(tl.float32). */
static AnnKind annotation(Sema *s, Param *p, Type *t)
{
    Expr *ann = p->annotation;
    if (!ann)
        return ANN_NONE;
    if (ann->kind == EX_STR) {
        if (annotation_is_constexpr(s, ann))
            return ANN_CONSTEXPR;
        int div;
        bool eq1;
        const char *why = signature_parse_type(ann->str ? ann->str : "", t, &div, &eq1, s->a);
        if (why) {
            diag_error(s->diag, ann->loc, "bad type annotation for '%s': %s", p->name, why);
            return ANN_BAD;
        }
        p->divisibility = div;
        p->equal_to_1 = eq1;
        return ANN_TYPE;
    }
    if (ann->kind == EX_CALL) {
        Sem f = quiet_global_expr(s, ann->call.fn);
        if (f.kind == SEM_BUILTIN && f.builtin == BI_POINTER_TYPE && ann->call.nargs == 1) {
            Sem d = quiet_global_expr(s, ann->call.args[0]);
            if (d.kind == SEM_CONST && d.cv.kind == CV_DTYPE) {
                *t = type_ptr(d.cv.dtype);
                return ANN_TYPE;
            }
        }
        diag_error(s->diag, ann->loc,
                   "bad type annotation for '%s': expected tl.constexpr, a dtype "
                   "(tl.int32), tl.pointer_type(tl.float32) or a signature string (\"*fp32:16\")",
                   p->name);
        return ANN_BAD;
    }
    /* A Python type hint (`num_queries_per_kv: int`, as vLLM writes) fixes no type in Triton: the
     * parameter is specialized from its argument, here from the signature, as if unannotated. */
    if (ann->kind == EX_NAME && ann->str &&
        (!strcmp(ann->str, "int") || !strcmp(ann->str, "float") || !strcmp(ann->str, "bool")))
        return ANN_NONE;
    /* `x_ptr: tl.tensor` (FlagGems), `x: torch.Tensor` say "a tensor argument": no type either. */
    if (ann->kind == EX_ATTR && ann->attr.obj->kind == EX_NAME &&
        ((!strcmp(ann->attr.name, "tensor") &&
          (!strcmp(ann->attr.obj->str, "tl") || !strcmp(ann->attr.obj->str, "language"))) ||
         (!strcmp(ann->attr.name, "Tensor") && !strcmp(ann->attr.obj->str, "torch"))))
        return ANN_NONE;
    Sem a = quiet_global_expr(s, ann);
    if (a.kind == SEM_BUILTIN && a.builtin == BI_CONSTEXPR)
        return ANN_CONSTEXPR;
    if (a.kind == SEM_CONST && a.cv.kind == CV_DTYPE) {
        *t = type_scalar(a.cv.dtype);
        return ANN_TYPE;
    }
    diag_error(s->diag, ann->loc,
               "bad type annotation for '%s': expected tl.constexpr, a dtype "
               "(tl.int32), tl.pointer_type(tl.float32) or a signature string (\"*fp32:16\")",
               p->name);
    return ANN_BAD;
}

static SrcLoc file_loc(const Module *m) { return (SrcLoc){.file = m->file, .line = 0, .col = 0}; }

static const char *file_name(const Module *m)
{
    return m->file && m->file->name ? m->file->name : "<input>";
}

/* Is `name` called (as a plain name) anywhere in f's body? */
static bool expr_calls(const Expr *e, const char *name, int depth);

static bool block_calls(const Block *b, const char *name, int depth);

static bool expr_calls(const Expr *e, const char *name, int depth)
{
    if (!e || depth > 200)
        return false;
    switch (e->kind) {
    case EX_CALL:
        if (e->call.fn && e->call.fn->kind == EX_NAME && e->call.fn->str &&
            !strcmp(e->call.fn->str, name))
            return true;
        if (expr_calls(e->call.fn, name, depth + 1))
            return true;
        /* A function passed by name (tl.associative_scan's combine_fn) is used, not a kernel. */
        for (int i = 0; i < e->call.nargs; i++)
            if (expr_calls(e->call.args[i], name, depth + 1) ||
                (e->call.args[i]->kind == EX_NAME && !strcmp(e->call.args[i]->str, name)))
                return true;
        for (int i = 0; i < e->call.nkwargs; i++)
            if (expr_calls(e->call.kwargs[i], name, depth + 1) ||
                (e->call.kwargs[i]->kind == EX_NAME && !strcmp(e->call.kwargs[i]->str, name)))
                return true;
        return false;
    case EX_ATTR: return expr_calls(e->attr.obj, name, depth + 1);
    case EX_SUBSCRIPT:
        if (expr_calls(e->sub.obj, name, depth + 1))
            return true;
        for (int i = 0; i < e->sub.nidx; i++)
            if (expr_calls(e->sub.idx[i], name, depth + 1))
                return true;
        return false;
    case EX_TUPLE:
    case EX_LIST:
        for (int i = 0; i < e->list.n; i++)
            if (expr_calls(e->list.elts[i], name, depth + 1))
                return true;
        return false;
    case EX_BINARY:
        return expr_calls(e->bin.lhs, name, depth + 1) || expr_calls(e->bin.rhs, name, depth + 1);
    case EX_UNARY: return expr_calls(e->un.operand, name, depth + 1);
    case EX_TERNARY:
        return expr_calls(e->ternary.cond, name, depth + 1) ||
               expr_calls(e->ternary.then, name, depth + 1) ||
               expr_calls(e->ternary.els, name, depth + 1);
    default: return false;
    }
}

static bool block_calls(const Block *b, const char *name, int depth)
{
    for (int i = 0; i < b->n; i++) {
        const Stmt *st = b->stmts[i];
        if (!st)
            continue;
        switch (st->kind) {
        case ST_EXPR:
            if (expr_calls(st->expr.value, name, depth))
                return true;
            break;
        case ST_ASSIGN:
            if (expr_calls(st->assign.value, name, depth))
                return true;
            break;
        case ST_AUGASSIGN:
            if (expr_calls(st->aug.value, name, depth))
                return true;
            break;
        case ST_IF:
            if (expr_calls(st->if_.cond, name, depth) ||
                block_calls(&st->if_.then, name, depth + 1) ||
                block_calls(&st->if_.els, name, depth + 1))
                return true;
            break;
        case ST_FOR:
            if (expr_calls(st->for_.iter, name, depth) ||
                block_calls(&st->for_.body, name, depth + 1))
                return true;
            break;
        case ST_WHILE:
            if (expr_calls(st->while_.cond, name, depth) ||
                block_calls(&st->while_.body, name, depth + 1))
                return true;
            break;
        case ST_RETURN:
            if (expr_calls(st->ret.value, name, depth))
                return true;
            break;
        default: break;
        }
    }
    return false;
}

/* The kernels of m: its @jit functions that no other @jit function calls, into out (room for
 * m->nfuncs); their number. */
static int entry_kernels(const Module *m, const FuncDef **out)
{
    int n = 0;
    for (int i = 0; i < m->nfuncs; i++) {
        const FuncDef *f = m->funcs[i];
        if (!f || !f->is_jit || !f->name)
            continue;
        bool called = false;
        for (int k = 0; k < m->nfuncs && !called; k++)
            if (k != i && m->funcs[k] && m->funcs[k]->is_jit &&
                block_calls(&m->funcs[k]->body, f->name, 0))
                called = true;
        if (!called)
            out[n++] = f;
    }
    return n;
}

static const char *jit_names(Sema *s, const Module *m, bool only_kernels)
{
    StrBuf sb = {0};
    const FuncDef **kernels = arena_alloc(s->a, sizeof(FuncDef *) * (size_t)(m->nfuncs + 1));
    int nkernels = only_kernels ? entry_kernels(m, kernels) : 0;
    for (int i = 0; i < (only_kernels ? nkernels : m->nfuncs); i++) {
        const FuncDef *f = only_kernels ? kernels[i] : m->funcs[i];
        if (!f || !f->is_jit || !f->name)
            continue;
        strbuf_printf(&sb, "%s%s", sb.len ? ", " : "", f->name);
    }
    const char *r = arena_strdup(s->a, sb.data ? sb.data : "");
    strbuf_free(&sb);
    return r;
}

/* A decorator as written ("triton_jit_decorator", "torch.no_grad()"), NULL for other forms. */
static const char *decorator_text(Sema *s, const Expr *d)
{
    const char *call = "";
    if (d->kind == EX_CALL) {
        d = d->call.fn;
        call = "(...)";
    }
    if (d->kind == EX_NAME)
        return arena_printf(s->a, "%s%s", d->str, call);
    if (d->kind == EX_ATTR && d->attr.obj->kind == EX_NAME)
        return arena_printf(s->a, "%s.%s%s", d->attr.obj->str, d->attr.name, call);
    return NULL;
}

static const FuncDef *find_kernel(Sema *s, const Module *m, const char *name)
{
    if (name) {
        const FuncDef *f = module_func(m, name);
        if (!f) {
            const char *names = jit_names(s, m, false);
            diag_error(s->diag, file_loc(m), "no kernel named '%s' in %s%s%s%s", name, file_name(m),
                       *names ? " (its @triton.jit functions: " : "", names, *names ? ")" : "");
            return NULL;
        }
        if (!f->is_jit) {
            const char *deco = f->ndecorators > 0 ? decorator_text(s, f->decorators[0]) : NULL;
            if (deco) /* vLLM's @triton_jit_decorator: an alias tric cannot see through */
                diag_error(s->diag, f->loc,
                           "'%s' is not a @triton.jit function: its decorator @%s is not "
                           "Triton's (tric takes @triton.jit or @jit)",
                           name, deco);
            else
                diag_error(s->diag, f->loc, "'%s' is not a @triton.jit function", name);
            return NULL;
        }
        return f;
    }
    /* The only @jit function that no other @jit function calls. */
    const FuncDef **kernels = arena_alloc(s->a, sizeof(FuncDef *) * (size_t)(m->nfuncs + 1));
    int count = entry_kernels(m, kernels);
    if (count == 1)
        return kernels[0];
    if (count == 0) {
        diag_error(s->diag, file_loc(m), "no @triton.jit kernel in %s", file_name(m));
        return NULL;
    }
    diag_error(s->diag, file_loc(m),
               "%s has several @triton.jit kernels (%s): pick one with "
               "--kernel=NAME",
               file_name(m), jit_names(s, m, true));
    return NULL;
}

int sema_entry_kernels(const Module *m, const FuncDef ***out, Arena *arena)
{
    *out = arena_alloc(arena, sizeof(FuncDef *) * (size_t)(m->nfuncs + 1));
    return entry_kernels(m, *out);
}

const FuncDef *sema_find_kernel(const Module *m, const char *name, Arena *arena, Diag *diag)
{
    Sema sema = {.module = m, .a = arena, .diag = diag};
    return find_kernel(&sema, m, name);
}

/* The Sem of a dotted Triton path ("triton.language.extra.cuda.libdevice", "triton.language.math.
 * erf"), resolved as the source's attributes would be; SEM_UNSET for anything else. */
static Sem triton_path(Sema *s, const char *path)
{
    size_t len = strcspn(path, ".");
    char *first = arena_alloc(s->a, len + 1);
    memcpy(first, path, len);
    if (!is_module_name(first))
        return sem_error();
    Sem cur = sem_module(first);
    Diag quiet = {0};
    Diag *saved = s->diag;
    s->diag = &quiet;
    for (const char *p = path + len; *p == '.' && cur.kind == SEM_MODULE;) {
        p++;
        size_t n = strcspn(p, ".");
        char *name = arena_alloc(s->a, n + 1);
        memcpy(name, p, n);
        cur = module_member(s, cur, name, path, (SrcLoc){0});
        p += n;
        if (*p && cur.kind != SEM_MODULE)
            cur = sem_error();
    }
    s->diag = saved;
    diag_free(&quiet);
    return cur;
}

/* `from triton.language.extra import libdevice`, `import triton.language as tl`, `from
 * triton.language.extra.cuda import libdevice as ld`: the names they bind, when what they import
 * is a Triton module or builtin; other imports (torch, os) are ignored. A plain `import a.b`
 * binds `a`, which is known already. */
static void bind_import(Sema *s, const Stmt *st)
{
    for (int k = 0; k < st->import_.n; k++) {
        const char *name = st->import_.names[k], *as = st->import_.asnames[k];
        const char *from = st->import_.module;
        if (!name || !strcmp(name, "*") || (!from && !as) || (from && from[0] == '.'))
            continue;
        Sem r = triton_path(s, from ? arena_printf(s->a, "%s.%s", from, name) : name);
        if (r.kind == SEM_MODULE || r.kind == SEM_BUILTIN)
            env_set(s, &s->globals, as ? as : name, r, st->loc);
    }
}

/* Module-level NAME = <constexpr> assignments (and aliases of builtins and modules) and imports;
 * anything else is remembered as not a constexpr. */
static void bind_globals(Sema *s, const Module *m)
{
    FuncCtx ctx = {0};
    FuncCtx *saved = s->fn;
    for (int i = 0; i < m->nglobals; i++) {
        const Stmt *st = m->globals[i];
        if (st && st->kind == ST_IMPORT)
            bind_import(s, st);
        if (!st || st->kind != ST_ASSIGN || !st->assign.value)
            continue;
        Diag quiet = {0};
        Diag *dsaved = s->diag;
        s->diag = &quiet;
        s->fn = &ctx;
        ctx.env = s->globals; /* earlier globals are visible */
        Expr *v = ast_clone_expr(s->a, st->assign.value);
        Sem r = expr(s, v ? v : st->assign.value);
        s->diag = dsaved;
        diag_free(&quiet);
        /* Aliases of builtins and modules (tanh = libdevice.tanh, ld = tl.extra.cuda.libdevice)
         * are usable like the constexprs. */
        bool usable = r.kind == SEM_CONST || r.kind == SEM_BUILTIN || r.kind == SEM_MODULE ||
                      r.kind == SEM_FUNC;
        bool alias = st->assign.value->kind == EX_ATTR;
        for (int k = 0; k < st->assign.ntargets; k++) {
            Expr *t = st->assign.targets[k];
            if (!t || t->kind != EX_NAME || !t->str)
                continue;
            env_set(s, &s->globals, t->str, r, t->loc);
            Binding *b = env_find(&s->globals, t->str);
            b->failed_alias = NULL;
            if (!usable) {
                b->partial = NOT_CONSTEXPR;
                if (is_error(r) && alias)
                    b->failed_alias = ast_clone_expr(s->a, st->assign.value);
            }
        }
    }
    s->fn = saved;
}

static const char *runtime_param_list(Sema *s, const FuncDef *f, const bool *is_cx)
{
    StrBuf sb = {0};
    for (int i = 0; i < f->nparams; i++)
        if (!is_cx[i])
            strbuf_printf(&sb, "%s%s", sb.len ? ", " : "", f->params[i].name);
    const char *r = arena_strdup(s->a, sb.data ? sb.data : "");
    strbuf_free(&sb);
    return r;
}

/* A launch's value-based hint on an open parameter: what the signature would have said had the
 * caller written the ideal one (':1' only for integers; ':2' .. ':16', the largest power of two
 * dividing the value, for pointers and integers; an i1 is a flag, never specialized, as in
 * Triton). */
static void apply_launch_hint(Param *p, Type t, unsigned char hint)
{
    bool is_int = !t.is_ptr && dtype_is_int(t.dtype) && t.dtype != DT_I1;
    if (hint == 1 && is_int)
        p->equal_to_1 = true;
    else if ((hint == 2 || hint == 4 || hint == 8 || hint == 16) && (t.is_ptr || is_int))
        p->divisibility = hint;
}

/* What a heuristic's args["name"] reads while sema_specialize binds parameters. */
typedef struct HeurArgs {
    Sema *s;
    const FuncDef *f;
    const SpecOptions *opt;
    const bool *is_cx;
    ConstVal *cx_val;
    bool *cx_set;
    const char *target; /* the heuristic being evaluated, for messages */
} HeurArgs;

static bool heuristic_arg(void *ctx, const char *name, ConstVal *out, const char **why)
{
    HeurArgs *h = ctx;
    const FuncDef *f = h->f;
    int idx = -1, runtime_idx = 0;
    for (int i = 0; i < f->nparams; i++) {
        if (f->params[i].name && !strcmp(f->params[i].name, name)) {
            idx = i;
            break;
        }
        runtime_idx += !h->is_cx[i];
    }
    if (idx < 0) {
        *why = arena_printf(h->s->a, "but '%s' is not a parameter of %s", name, f->name);
        return false;
    }
    const Param *p = &f->params[idx];
    if (h->is_cx[idx]) {
        if (!h->cx_set[idx] && p->default_value) {
            FuncCtx *saved = h->s->fn;
            Sem d = global_expr(h->s, p->default_value);
            h->s->fn = saved;
            if (d.kind == SEM_CONST) {
                h->cx_val[idx] = d.cv;
                h->cx_set[idx] = true;
            }
        }
        if (h->cx_set[idx]) {
            *out = h->cx_val[idx];
            return true;
        }
        *why = arena_printf(h->s->a, "which has no value yet: pass %s",
                            spec_define_wanted(h->opt, name, h->s->a));
        return false;
    }
    /* A run-time integer known to be 1 (signature ':1' or a launch's value) is that value. */
    bool one = p->equal_to_1 ||
               (runtime_idx < h->opt->nlaunch_hints && h->opt->launch_hints[runtime_idx] == 1);
    if (one) {
        *out = (ConstVal){.kind = CV_INT, .i = 1};
        return true;
    }
    *why = arena_printf(h->s->a,
                        "a run-time argument; tric evaluates heuristics when it compiles, "
                        "so give '%s' a value yourself (%s) or make '%s' a tl.constexpr",
                        h->target, spec_define_wanted(h->opt, h->target, h->s->a), name);
    return false;
}

static void apply_heuristics(Sema *s, const FuncDef *src, const FuncDef *f, const SpecOptions *opt,
                             const bool *is_cx, ConstVal *cx_val, bool *cx_set, bool *failed)
{
    Heuristics hs;
    Diag attempt = {.max_errors = s->diag->max_errors};
    bool read = heuristics_read(s->module, src, &hs, s->a, &attempt);
    if (!read && hs.dict_unread) {
        /* A dict only host Python builds (FlagGems' runtime.get_heuristic_config(...)) sets
         * nothing tric can know; when -D gave every constexpr, nothing is left for it to set. */
        bool all_set = true;
        for (int i = 0; i < f->nparams; i++)
            all_set &= !is_cx[i] || cx_set[i];
        if (all_set) {
            SrcLoc at = src->loc;
            for (int i = 0; i < src->ndecorators; i++) {
                const Expr *dec = src->decorators[i], *fn = dec->call.fn;
                if (dec->kind == EX_CALL && dec->call.nargs == 1 &&
                    ((fn->kind == EX_NAME && !strcmp(fn->str, "heuristics")) ||
                     (fn->kind == EX_ATTR && !strcmp(fn->attr.name, "heuristics"))))
                    at = dec->call.args[0]->loc;
            }
            diag_warning(s->diag, at,
                         "heuristics: the dict is host Python tric does not run; "
                         "every constexpr of %s has a value, so it is set aside",
                         src->name);
            diag_free(&attempt);
            return;
        }
    }
    diag_merge(s->diag, &attempt);
    diag_free(&attempt);
    if (!read) {
        /* the decorator's error says it all: no "has no value" for what it would have set */
        for (int i = 0; i < f->nparams; i++)
            failed[i] = is_cx[i] && !cx_set[i];
        return;
    }
    HeurArgs ctx = {.s = s, .f = f, .opt = opt, .is_cx = is_cx, .cx_val = cx_val, .cx_set = cx_set};
    bool *given = arena_alloc(s->a, (size_t)(f->nparams ? f->nparams : 1) * sizeof *given);
    for (int i = 0; i < f->nparams; i++)
        given[i] = cx_set[i];
    for (int i = 0; i < hs.n; i++) {
        const Heuristic *h = &hs.items[i];
        if (!is_cx[h->param]) {
            diag_error(s->diag, h->loc,
                       "heuristics: '%s' is not a tl.constexpr parameter of %s "
                       "(tric sets only constexprs from heuristics)",
                       h->name, f->name);
            continue;
        }
        if (given[h->param]) /* -D, a config or the signature gave it */
            continue;
        ctx.target = h->name;
        ConstVal v;
        if (!heuristic_eval(h, heuristic_arg, &ctx, &v, s->diag)) {
            failed[h->param] = true; /* said once, at the lambda */
            continue;
        }
        cx_val[h->param] = v;
        cx_set[h->param] = true;
    }
}

/* What sema_specialize knows of the kernel's parameters while it binds them, one entry per
 * parameter (index i of f->params): what its annotation says, the value a constexpr gets (-D,
 * the signature, a heuristic or its default) and the type a run-time one gets. */
typedef struct ParamPlan {
    const FuncDef *src; /* the kernel as parsed */
    FuncDef *f;         /* its clone, which sema types */
    const SpecOptions *opt;
    const char *kname;
    int np, nruntime;
    AnnKind *ann;
    Type *ann_type; /* ann[i] == ANN_TYPE: the annotation's type */
    bool *is_cx;
    ConstVal *cx_val; /* cx_set[i]: constexpr i's value */
    bool *cx_set;
    Type *sig_type; /* sig_set[i]: the signature's type for run-time parameter i */
    bool *sig_set;
    bool *heur_failed; /* a heuristic for it failed (said once, at the lambda) */
} ParamPlan;

/* Which parameters are constexprs, and the annotation types of the others. */
static void classify_params(Sema *s, ParamPlan *pp)
{
    size_t n = (size_t)(pp->np ? pp->np : 1);
    pp->is_cx = arena_alloc(s->a, n * sizeof *pp->is_cx);
    pp->ann_type = arena_alloc(s->a, n * sizeof *pp->ann_type);
    pp->ann = arena_alloc(s->a, n * sizeof *pp->ann);
    pp->cx_val = arena_alloc(s->a, n * sizeof *pp->cx_val);
    pp->cx_set = arena_alloc(s->a, n * sizeof *pp->cx_set);
    pp->sig_type = arena_alloc(s->a, n * sizeof *pp->sig_type);
    pp->sig_set = arena_alloc(s->a, n * sizeof *pp->sig_set);
    pp->heur_failed = arena_alloc(s->a, n * sizeof *pp->heur_failed);
    for (int i = 0; i < pp->np; i++) {
        Param *p = &pp->f->params[i];
        p->divisibility = 1;
        p->equal_to_1 = false;
        pp->ann[i] = annotation(s, p, &pp->ann_type[i]);
        pp->is_cx[i] = pp->ann[i] == ANN_CONSTEXPR;
        p->is_constexpr = pp->is_cx[i];
        pp->nruntime += !pp->is_cx[i];
    }
}

void sema_constexpr_params(const Module *m, const FuncDef *f, bool *out, Arena *arena)
{
    Diag quiet = {0};
    Sema sema = {.module = m, .a = arena, .diag = &quiet};
    bind_globals(&sema, m);
    for (int i = 0; i < f->nparams; i++) {
        Param p = f->params[i]; /* annotation() records a signature string's hints on it */
        Type t;
        out[i] = annotation(&sema, &p, &t) == ANN_CONSTEXPR;
    }
    diag_free(&quiet);
}

/* -D values: each must name a constexpr parameter. */
static void apply_defines(Sema *s, ParamPlan *pp)
{
    const FuncDef *f = pp->f;
    for (int d = 0; d < pp->opt->ndefines; d++) {
        const Define *def = &pp->opt->defines[d];
        const char *dn = def->name ? def->name : "";
        int idx = -1;
        for (int i = 0; i < pp->np; i++)
            if (f->params[i].name && !strcmp(f->params[i].name, dn))
                idx = i;
        if (idx < 0) {
            StrBuf cx = {0};
            for (int i = 0; i < pp->np; i++)
                if (pp->is_cx[i])
                    strbuf_printf(&cx, "%s%s", cx.len ? ", " : "", f->params[i].name);
            diag_error(s->diag, f->loc,
                       "%s: kernel '%s' has no constexpr parameter '%s' (its "
                       "constexprs: %s)",
                       spec_define_given(pp->opt, def, false, s->a), pp->kname, dn,
                       cx.data ? cx.data : "none");
            strbuf_free(&cx);
            continue;
        }
        if (!pp->is_cx[idx]) {
            diag_error(s->diag, f->params[idx].loc,
                       "%s: parameter '%s' of kernel '%s' is not a "
                       "constexpr (annotate it ': tl.constexpr')",
                       spec_define_given(pp->opt, def, false, s->a), dn, pp->kname);
            continue;
        }
        ConstVal cv;
        if (!const_from_string(def->value, &cv, s->a)) {
            diag_error(s->diag, f->params[idx].loc,
                       "%s: not a constexpr value (expected an "
                       "int, a float, True/False, None or a dtype such as tl.float16)",
                       spec_define_given(pp->opt, def, true, s->a));
            continue;
        }
        pp->cx_val[idx] = cv;
        pp->cx_set[idx] = true;
    }
}

/* Signature entry e (1-based, for messages), text, at constexpr parameter i's position (the
 * form with one entry per parameter): its value, unless -D gave one. */
static void signature_constexpr(Sema *s, ParamPlan *pp, int i, int e, const char *text)
{
    const Param *p = &pp->f->params[i];
    if (!*text)
        return;
    ConstVal cv;
    if (!const_from_string(text, &cv, s->a)) {
        diag_error(s->diag, p->loc,
                   "signature entry %d ('%s') for constexpr '%s' is "
                   "not a value",
                   e, text, p->name);
        return;
    }
    if (!pp->cx_set[i]) { /* -D wins */
        pp->cx_val[i] = cv;
        pp->cx_set[i] = true;
    }
}

/* Signature entry e (1-based), text, for run-time parameter i: a host tensor descriptor or a
 * type with its hints. */
static void signature_runtime(Sema *s, ParamPlan *pp, int i, int e, const char *text)
{
    Param *p = &pp->f->params[i];
    if (signature_is_tensordesc(text)) {
        Type block;
        const char *why = signature_parse_tensordesc(text, &block, s->a);
        if (!why && (int64_t)block.shape[block.rank - 1] * dtype_bytes(block.dtype) < 16)
            why = "the last block dimension must hold at least 16 bytes";
        if (why) {
            diag_error(s->diag, p->loc, "signature entry %d ('%s') for '%s': %s", e, text, p->name,
                       why);
            return;
        }
        p->desc_block = block;
        p->divisibility = 16; /* a descriptor's base is 16-byte aligned */
        pp->sig_type[i] = type_ptr(block.dtype);
        pp->sig_set[i] = true;
        return;
    }
    int div;
    bool eq1;
    ConstVal cv;
    const char *why = signature_parse_type(text, &pp->sig_type[i], &div, &eq1, s->a);
    if (why) {
        if (*text != '*' && const_from_string(text, &cv, s->a) && cv.kind != CV_DTYPE)
            diag_error(s->diag, p->loc,
                       "signature entry %d is a value (%s), but "
                       "parameter '%s' is not a constexpr",
                       e, text, p->name);
        else
            diag_error(s->diag, p->loc, "signature entry %d ('%s') for '%s': %s", e, text, p->name,
                       why);
        return;
    }
    pp->sig_set[i] = true;
    p->divisibility = div;
    p->equal_to_1 = eq1;
}

/* The signature: one entry per run-time parameter, or one per parameter. */
static void apply_signature(Sema *s, ParamPlan *pp)
{
    if (!pp->opt->signature)
        return;
    SigEntry *ents;
    int n = signature_split(pp->opt->signature, &ents, s->a);
    bool all_form = n == pp->np && n != pp->nruntime;
    if (n != pp->nruntime && !all_form) {
        diag_error(s->diag, pp->f->loc,
                   "signature has %d %s but kernel '%s' has %d run-time "
                   "%s (%s)",
                   n, plural(n, "entry", "entries"), pp->kname, pp->nruntime,
                   plural(pp->nruntime, "parameter", "parameters"),
                   runtime_param_list(s, pp->f, pp->is_cx));
        return;
    }
    for (int i = 0, e = 0; i < pp->np; i++) {
        if (!pp->is_cx[i]) {
            const char *text = ents[e++].text;
            signature_runtime(s, pp, i, e, text);
        } else if (all_form) {
            const char *text = ents[e++].text;
            signature_constexpr(s, pp, i, e, text);
        }
    }
}

/* Constexpr parameter i: bound to its value (given, or its default), or an error. */
static void bind_constexpr_param(Sema *s, ParamPlan *pp, FuncCtx *ctx, int i)
{
    Param *p = &pp->f->params[i];
    bool host_default = false;
    if (!pp->cx_set[i] && p->default_value) {
        /* Python evaluates a default where the def runs, so it may be host code (vLLM's
         * `FP8_MIN: tl.constexpr = float8_info.min`, float8_info a torch.finfo). One that does
         * not evaluate here is an error only where the kernel reads the parameter (name_expr):
         * a branch that never does needs no value. */
        Diag quiet = {0};
        Diag *loud = s->diag;
        s->diag = &quiet;
        Sem d = global_expr(s, ast_clone_expr(s->a, p->default_value));
        s->diag = loud;
        diag_free(&quiet);
        s->fn = ctx;
        host_default = is_error(d);
        if (!host_default)
            d = global_expr(s, p->default_value);
        if (host_default) {
        } else if (!is_error(d) && d.kind != SEM_CONST) {
            diag_error(s->diag, p->default_value->loc,
                       "the default of constexpr '%s' must be "
                       "a compile-time value",
                       p->name);
        } else if (!is_error(d)) {
            pp->cx_val[i] = d.cv;
            pp->cx_set[i] = true;
        }
        s->fn = ctx;
    }
    if (!pp->cx_set[i]) {
        if (!p->default_value && !pp->heur_failed[i])
            diag_error(s->diag, p->loc, "constexpr parameter '%s' has no value: pass %s", p->name,
                       spec_define_wanted(pp->opt, p->name, s->a));
        p->sem = sem_error();
    } else {
        p->sem = sem_const(pp->cx_val[i]);
    }
    env_set(s, &ctx->env, p->name, p->sem, p->loc);
    if (host_default && !pp->cx_set[i]) {
        Binding *b = env_find(&ctx->env, p->name);
        b->partial = HOST_DEFAULT;
        b->where = p->default_value->loc;
        b->failed_alias = p->default_value;
    }
}

/* Run-time parameter i: one of the kernel's arguments, typed by the signature or its
 * annotation, with the launch's hint where they leave it open. */
static void bind_runtime_param(Sema *s, ParamPlan *pp, FuncCtx *ctx, Kernel *k, int i)
{
    Param *p = &pp->f->params[i];
    const SpecOptions *opt = pp->opt;
    k->args[k->nargs++] = p;
    Type t;
    if (pp->sig_set[i]) {
        t = pp->sig_type[i];
    } else if (pp->ann[i] == ANN_TYPE && !opt->signature) {
        t = pp->ann_type[i];
    } else {
        if (pp->ann[i] != ANN_BAD && !opt->signature)
            /* The example type follows Triton's naming habit: x_ptr is a pointer, M an int. */
            diag_error(s->diag, p->loc,
                       "parameter '%s' has no type: annotate it (%s: \"%s\") "
                       "or pass %s",
                       p->name, p->name, strstr(p->name, "ptr") ? "*fp32" : "i32",
                       spec_signature_name(opt));
        p->sem = sem_error();
        env_set(s, &ctx->env, p->name, p->sem, p->loc);
        return;
    }
    if (k->nargs - 1 < opt->nlaunch_hints && p->divisibility == 1 && !p->equal_to_1)
        apply_launch_hint(p, t, opt->launch_hints[k->nargs - 1]);
    /* ":1": Triton specializes an int equal to 1 into the constant 1. */
    p->sem = p->equal_to_1 ? sem_int(1) : sem_value(t);
    if (pp->sig_set[i] && p->desc_block.rank > 0)
        p->sem = tensor_desc_sem(s, with_shape(p->desc_block.dtype, true, p->desc_block), "zero");
    if (p->equal_to_1)
        p->sem.type = t;
    env_set(s, &ctx->env, p->name, p->sem, p->loc);
}

Kernel *sema_specialize(const Module *m, const SpecOptions *opt, Arena *arena, Diag *diag)
{
    if (!m || !arena || !diag)
        return NULL;
    SpecOptions none = {0};
    if (!opt)
        opt = &none;
    Sema sema = {.module = m, .opt = opt, .a = arena, .diag = diag};
    Sema *s = &sema;
    int errors_before = diag->errors;
    const FuncDef *src = find_kernel(s, m, opt->kernel_name);
    if (!src)
        return NULL;
    bind_globals(s, m);
    FuncDef *f = ast_clone_func(arena, src);
    if (!f)
        return NULL;
    ParamPlan pp = {.src = src, .f = f, .opt = opt, .np = f->nparams};
    pp.kname = f->name ? f->name : "?";
    classify_params(s, &pp);
    apply_defines(s, &pp);
    apply_signature(s, &pp);
    /* @triton.heuristics: constexprs computed from the others (a value given wins). */
    apply_heuristics(s, src, f, opt, pp.is_cx, pp.cx_val, pp.cx_set, pp.heur_failed);

    /* Bind every parameter. */
    Kernel *k = arena_alloc(arena, sizeof *k);
    k->module = m;
    k->func = f;
    k->args = arena_alloc(arena, (size_t)(pp.nruntime ? pp.nruntime : 1) * sizeof *k->args);
    FuncCtx ctx = {.func = f, .is_kernel = true};
    s->fn = &ctx;
    for (int i = 0; i < pp.np; i++) {
        if (pp.is_cx[i])
            bind_constexpr_param(s, &pp, &ctx, i);
        else
            bind_runtime_param(s, &pp, &ctx, k, i);
    }
    /* The kernel is the bottom of the inlining stack: a helper calling it back is recursion. */
    s->inline_stack[s->inline_depth++] = src;
    /* Parameter errors do not stop the analysis: the body's own errors are reported too, and
     * uses of a parameter that failed are silent (its Sem is an error). */
    block(s, &f->body, true);
    s->fn = NULL;
    if (diag->errors > errors_before)
        return NULL;
    return k;
}
