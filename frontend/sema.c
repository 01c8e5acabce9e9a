/* sema.c: specialization and typing of one @jit kernel.
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
 * failed gets kind SEM_UNSET, which later checks treat as "already reported" (no cascades). */
#include "frontend/frontend.h"
#include "ir/ir.h" /* the libdevice functions (TRIC_LIBDEVICE_FNS) */

#include <math.h>
#include <string.h>

enum {
    MAX_INLINE_DEPTH = 32,    /* helper inlining nesting */
    MAX_STATIC_UNROLL = 1024, /* tl.static_range iterations */
    MAX_BUILTIN_PARAMS = 12,
    MAX_BLOCK_NUMEL = 1 << 20, /* Triton's TRITON_MAX_TENSOR_NUMEL */
    MAX_EXPANSIONS = 1 << 16,  /* inlined calls + unrolled iterations per kernel: nesting
                                  multiplies them, so bound the total */
};

/* ---- environments ---------------------------------------------------------------------------- */

typedef enum Partial {
    DEFINED,       /* usable */
    ONE_BRANCH,    /* assigned in only one branch of a run-time if */
    LOOP_LOCAL,    /* first assigned inside a run-time loop body */
    NOT_CONSTEXPR, /* a module global whose value is not a constexpr */
} Partial;

typedef struct Binding {
    const char *name;
    Sem sem;
    Partial partial;
    SrcLoc where;       /* the if / loop for ONE_BRANCH / LOOP_LOCAL */
    SrcLoc assigned_at; /* the last assignment's target */
    /* NOT_CONSTEXPR globals that name something by a dotted path (erf = libdevice.erff) and
     * failed to resolve: analysed again, with its errors shown at its line, where a kernel uses
     * it. */
    Expr *failed_alias;
} Binding;

typedef struct Env {
    Binding *items;
    int n, cap;
} Env;

/* One function being analysed: the kernel or an inlined helper. */
typedef struct FuncCtx {
    FuncDef *func;
    bool is_kernel;
    Env env;
    Sem ret; /* a helper's return value */
    bool has_ret;
    int loop_depth;
    int runtime_if_depth;
} FuncCtx;

typedef struct Sema {
    const Module *module;
    Arena *a;
    Diag *diag;
    Env globals;
    FuncCtx *fn;
    const char *tuple_ctx; /* "zeros()'s shape" while analysing a shape argument, for messages */
    int expansions;        /* helper copies + static_range iterations made so far */
    const FuncDef *inline_stack[MAX_INLINE_DEPTH + 1];
    int inline_depth;
    const Module *random_lib; /* random.c's library, parsed on first use */
} Sema;

static Binding *env_find(Env *env, const char *name)
{
    for (int i = env->n - 1; i >= 0; i--)
        if (!strcmp(env->items[i].name, name))
            return &env->items[i];
    return NULL;
}

static void env_set(Sema *s, Env *env, const char *name, Sem sem, SrcLoc at)
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

static Env env_copy(Sema *s, const Env *env)
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

static Sem sem_error(void) { return (Sem){.kind = SEM_UNSET}; }
static bool is_error(Sem s) { return s.kind == SEM_UNSET; }
static Sem sem_void(void) { return (Sem){.kind = SEM_VOID}; }

static Sem sem_value(Type t)
{
    return (Sem){.kind = SEM_VALUE, .type = t, .compute_dtype = t.dtype};
}

/* Triton's to_tensor for a Python int: int32 if it fits, else uint32, else int64. */
static DType int_literal_dtype(int64_t v)
{
    if (v >= INT32_MIN && v <= INT32_MAX)
        return DT_I32;
    if (v > INT32_MAX && v <= (int64_t)UINT32_MAX)
        return DT_U32;
    return DT_I64;
}

static Sem sem_const(ConstVal cv)
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

static Sem sem_int(int64_t v) { return sem_const((ConstVal){.kind = CV_INT, .i = v}); }
static Sem sem_float(double v) { return sem_const((ConstVal){.kind = CV_FLOAT, .f = v}); }
static Sem sem_bool(bool v) { return sem_const((ConstVal){.kind = CV_BOOL, .b = v}); }

static bool const_is_number(const ConstVal *cv)
{
    return cv->kind == CV_INT || cv->kind == CV_FLOAT || cv->kind == CV_BOOL;
}

/* The type a Sem has as an operand of a run-time operation: its type, or a number's natural
 * type (int32/fp32/int1). False for None, dtypes, tuples, modules, ... */
static bool operand_type(Sem s, Type *t)
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

static bool const_equal(const ConstVal *x, const ConstVal *y)
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

static bool sem_same(Sem x, Sem y)
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
static bool const_truthy(const ConstVal *cv)
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

static const char *tstr(Sema *s, Type t) { return type_str(s->a, t); }

/* "<64x32>": a shape alone, for broadcasting messages. */
static const char *shape_str(Sema *s, Type t)
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
static const char *sem_describe(Sema *s, Sem x)
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

static bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/* Location of the keyword `name` of a `name=value` argument, found by walking back from the value
 * over '=' and blanks (the AST keeps only the value's location). */
static SrcLoc kwname_loc(SrcLoc value_loc, const char *name)
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
static bool expand(Sema *s, SrcLoc loc)
{
    if (++s->expansions == MAX_EXPANSIONS + 1)
        diag_error(s->diag, loc,
                   "the kernel expands to more than %d inlined calls and unrolled "
                   "iterations; reduce nested tl.static_range loops or helper calls",
                   MAX_EXPANSIONS);
    return s->expansions <= MAX_EXPANSIONS;
}

/* ---- forward declarations -------------------------------------------------------------------- */

static SrcLoc expr_start(const Expr *e);
static Sem expr(Sema *s, Expr *e);
static void block(Sema *s, Block *b, bool tail);
static Sem inline_call(Sema *s, Expr *call, FuncDef *callee, SrcLoc callee_loc);
static Sem constexpr_call(Sema *s, Expr *call, FuncDef *callee, SrcLoc cloc);

/* ---- name resolution ------------------------------------------------------------------------- */

static bool is_module_name(const char *name)
{
    return !strcmp(name, "tl") || !strcmp(name, "triton") || !strcmp(name, "language") ||
           !strcmp(name, "math") || !strcmp(name, "libdevice");
}

static Sem sem_module(const char *path) { return (Sem){.kind = SEM_MODULE, .module = path}; }

/* The last component of a module path: "libdevice" for "tl.extra.cuda.libdevice". */
static const char *module_leaf(Sem m)
{
    const char *path = m.module ? m.module : "tl";
    const char *dot = strrchr(path, '.');
    return dot ? dot + 1 : path;
}

/* Triton's tl.PropagateNan members (ir.PROPAGATE_NAN): NONE is 0, ALL is 0xFFFF. */
enum { PROPAGATE_NAN_NONE = 0, PROPAGATE_NAN_ALL = 0xFFFF };

/* libdevice.NAME: a builtin whose Sem names the function. */
static Sem sem_libdevice(LibdeviceFn fn)
{
    const LibdeviceInfo *info = libdevice_info(fn);
    return (Sem){.kind = SEM_BUILTIN,
                 .builtin = info->nargs == 1 ? BI_LIBDEVICE1 : BI_LIBDEVICE2,
                 .libdevice_fn = fn};
}

/* tl.NAME: a builtin of the table (not the Python-only ones, nor the libdevice stand-ins). */
static bool lookup_tl_builtin(const char *name, Builtin *out)
{
    for (int b = 0; b < BI_COUNT; b++) {
        if (b == BI_MIN_PY || b == BI_MAX_PY || b == BI_LEN || b == BI_INT_PY || b == BI_FLOAT_PY ||
            b == BI_ISINSTANCE || b == BI_LIBDEVICE1 || b == BI_LIBDEVICE2)
            continue;
        if (!strcmp(builtin_name((Builtin)b), name)) {
            *out = (Builtin)b;
            return true;
        }
    }
    return false;
}

/* Names Python gives every kernel: range, min, max, len, int, float, print, abs. */
static bool lookup_python_builtin(const char *name, Builtin *out)
{
    static const struct {
        const char *name;
        Builtin b;
    } table[] = {
        {"range", BI_RANGE},
        {"min", BI_MIN_PY},
        {"max", BI_MAX_PY},
        {"len", BI_LEN},
        {"int", BI_INT_PY},
        {"float", BI_FLOAT_PY},
        {"print", BI_STATIC_PRINT},
        {"abs", BI_ABS},
        {"isinstance", BI_ISINSTANCE},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (!strcmp(table[i].name, name)) {
            *out = table[i].b;
            return true;
        }
    }
    return false;
}

static bool lookup_dtype_name(const char *name, DType *out)
{
    /* Only Triton's spellings (tl.float16, tl.int32, tl.bfloat16, ...): "fp16" is not tl.fp16. */
    for (int t = 0; t < DT_COUNT; t++) {
        if (!strcmp(dtype_name((DType)t), name)) {
            *out = (DType)t;
            return true;
        }
    }
    return false;
}

/* Triton's other fp8 types, which tric does not implement: an error naming the type. */
static bool reject_other_fp8_name(Sema *s, SrcLoc loc, const char *name)
{
    static const struct {
        const char *name, *why;
    } others[] = {
        {"float8e4b15", "the e4m3 format with bias 15 that Triton emulates on pre-Hopper GPUs"},
        {"float8e4b8", "AMD's e4m3 format (bias 8)"},
        {"float8e5b16", "AMD's e5m2 format (bias 16)"},
        {"float8e4b15x4", "the e4m3 format with bias 15 that Triton emulates on pre-Hopper GPUs"},
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        if (!strcmp(name, others[i].name)) {
            diag_error(s->diag, loc,
                       "tl.%s (%s) is not supported; tric has tl.float8e4nv (e4m3fn) "
                       "and tl.float8e5 (e5m2)",
                       name, others[i].why);
            return true;
        }
    }
    return false;
}

static const FuncDef *module_func(const Module *m, const char *name)
{
    for (int i = 0; i < m->nfuncs; i++)
        if (m->funcs[i] && m->funcs[i]->name && !strcmp(m->funcs[i]->name, name))
            return m->funcs[i];
    return NULL;
}

static Sem name_expr(Sema *s, Expr *e)
{
    const char *name = e->str ? e->str : "";
    Binding *b = s->fn ? env_find(&s->fn->env, name) : NULL;
    if (b) {
        switch (b->partial) {
        case DEFINED: return b->sem;
        case ONE_BRANCH:
            diag_error(s->diag, e->loc,
                       "'%s' is assigned in only one branch of the if at line %d; assign it in "
                       "both branches (or before the if) to use it after",
                       name, b->where.line);
            return sem_error();
        case LOOP_LOCAL:
            diag_error(s->diag, e->loc,
                       "'%s' is first assigned inside the loop at line %d; assign it before the "
                       "loop to use it after",
                       name, b->where.line);
            return sem_error();
        case NOT_CONSTEXPR: break;
        }
    }
    Binding *g = env_find(&s->globals, name);
    if (g) {
        if (g->partial == NOT_CONSTEXPR && g->failed_alias) {
            Expr *alias = g->failed_alias;
            g->failed_alias = NULL; /* reported once */
            int before = s->diag->errors;
            FuncCtx ctx = {.env = s->globals}, *saved = s->fn;
            s->fn = &ctx;
            expr(s, alias);
            s->fn = saved;
            if (s->diag->errors > before)
                return sem_error();
        }
        if (g->partial == NOT_CONSTEXPR) {
            diag_error(s->diag, e->loc,
                       "global '%s' is not a constexpr (module-level names used in a kernel "
                       "must be constexpr values such as ints, floats or dtypes)",
                       name);
            return sem_error();
        }
        return g->sem;
    }
    const FuncDef *f = module_func(s->module, name);
    if (f)
        return (Sem){.kind = SEM_FUNC, .func = (FuncDef *)f};
    if (is_module_name(name))
        return sem_module(name);
    Builtin bi;
    if (lookup_python_builtin(name, &bi) || lookup_tl_builtin(name, &bi))
        return (Sem){.kind = SEM_BUILTIN, .builtin = bi};
    DType dt;
    if (lookup_dtype_name(name, &dt))
        return sem_const((ConstVal){.kind = CV_DTYPE, .dtype = dt});
    if (!strcmp(name, "True") || !strcmp(name, "False"))
        return sem_bool(name[0] == 'T');
    if (!strcmp(name, "None"))
        return sem_const((ConstVal){.kind = CV_NONE});
    diag_error(s->diag, e->loc, "name '%s' is not defined", name);
    return sem_error();
}

/* ---- attributes: tl.NAME, x.dtype, x.shape, x.T, methods -------------------------------------- */

/* Methods of a block (Triton's @_tensor_member_fn set, the ones tric has). */
static bool lookup_method(const char *name, Builtin *out)
{
    static const struct {
        const char *name;
        Builtin b;
    } table[] = {
        {"to", BI_CAST},
        {"cast", BI_CAST},
        {"sum", BI_SUM},
        {"fma", BI_FMA},
        {"max", BI_MAX},
        {"min", BI_MIN},
        {"argmax", BI_ARGMAX},
        {"argmin", BI_ARGMIN},
        {"cumsum", BI_CUMSUM},
        {"cumprod", BI_CUMPROD},
        {"trans", BI_TRANS},
        {"permute", BI_PERMUTE},
        {"reshape", BI_RESHAPE},
        {"view", BI_VIEW},
        {"broadcast_to", BI_BROADCAST_TO},
        {"expand_dims", BI_EXPAND_DIMS},
        {"exp", BI_EXP},
        {"exp2", BI_EXP2},
        {"log", BI_LOG},
        {"log2", BI_LOG2},
        {"sqrt", BI_SQRT},
        {"rsqrt", BI_RSQRT},
        {"abs", BI_ABS},
        {"sin", BI_SIN},
        {"cos", BI_COS},
        {"floor", BI_FLOOR},
        {"ceil", BI_CEIL},
        {"sigmoid", BI_SIGMOID},
        {"multiple_of", BI_MULTIPLE_OF},
        {"max_contiguous", BI_MAX_CONTIGUOUS},
        {"atomic_add", BI_ATOMIC_ADD},
        {"atomic_max", BI_ATOMIC_MAX},
        {"atomic_min", BI_ATOMIC_MIN},
        {"atomic_and", BI_ATOMIC_AND},
        {"atomic_or", BI_ATOMIC_OR},
        {"atomic_xor", BI_ATOMIC_XOR},
        {"atomic_xchg", BI_ATOMIC_XCHG},
        {"atomic_cas", BI_ATOMIC_CAS},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (!strcmp(table[i].name, name)) {
            *out = table[i].b;
            return true;
        }
    }
    return false;
}

/* The dotted name an expression spells ("libdevice.asin", "tl.extra.cuda.libdevice.erf"), or
 * NULL when it is not a chain of names. */
static const char *dotted_text(Sema *s, const Expr *e)
{
    if (e->kind == EX_NAME && e->str)
        return e->str;
    if (e->kind != EX_ATTR || !e->attr.name || e->depth > 64)
        return NULL;
    const char *obj = dotted_text(s, e->attr.obj);
    return obj ? arena_printf(s->a, "%s.%s", obj, e->attr.name) : NULL;
}

/* The random library's function `name` (parsed on first use); NULL after an internal error. */
static const FuncDef *random_func(Sema *s, const char *name)
{
    if (!s->random_lib)
        s->random_lib = random_library(s->a, s->diag);
    return s->random_lib ? module_func(s->random_lib, name) : NULL;
}

/* The member `name` of module mod (whose canonical path is mod.module: "tl",
 * "triton.language.extra.cuda.libdevice"). `shown` is the member as the source spells it, for
 * messages ("libdevice.asin", not "tl.asin"); errors go at loc. */
static Sem module_member(Sema *s, Sem mod, const char *name, const char *shown, SrcLoc loc)
{
    const char *leaf = module_leaf(mod);
    const char *path = arena_printf(s->a, "%s.%s", mod.module ? mod.module : "tl", name);
    LibdeviceFn fn;
    if (!strcmp(leaf, "PropagateNan")) {
        if (!strcmp(name, "ALL") || !strcmp(name, "NONE"))
            return sem_int(name[0] == 'A' ? PROPAGATE_NAN_ALL : PROPAGATE_NAN_NONE);
        diag_error(s->diag, loc, "'%s' is not a member of PropagateNan (ALL, NONE)", shown);
        return sem_error();
    }
    if (!strcmp(leaf, "libdevice")) {
        if (libdevice_from_name(name, &fn))
            return sem_libdevice(fn);
        diag_error(s->diag, loc, "unknown libdevice function '%s'", shown);
        return sem_error();
    }
    if (is_module_name(name) || !strcmp(name, "extra") || !strcmp(name, "cuda") ||
        !strcmp(name, "PropagateNan") || !strcmp(name, "random"))
        return sem_module(path);
    Builtin bi;
    if (strcmp(leaf, "random") && lookup_tl_builtin(name, &bi))
        return (Sem){.kind = SEM_BUILTIN, .builtin = bi};
    int first, last;
    if (random_lookup(name, &first, &last)) {
        const FuncDef *f = random_func(s, name);
        return f ? (Sem){.kind = SEM_FUNC, .func = (FuncDef *)f} : sem_error();
    }
    DType dt;
    if (lookup_dtype_name(name, &dt))
        return sem_const((ConstVal){.kind = CV_DTYPE, .dtype = dt});
    if (reject_other_fp8_name(s, loc, name))
        return sem_error();
    /* tl.math was libdevice in Triton 2 (tl.math.tanh, tl.math.erf): kernels still call it so. */
    if (!strcmp(leaf, "math") && libdevice_from_name(name, &fn))
        return sem_libdevice(fn);
    diag_error(s->diag, loc, "unknown builtin '%s'", shown);
    return sem_error();
}

/* A type as Triton's constexpr: a scalar number type is its dtype (tl.float32), a scalar pointer
 * a pointer_type, a block a block_type. */
static Sem sem_type(Type t)
{
    if (!t.is_ptr && t.rank == 0)
        return sem_const((ConstVal){.kind = CV_DTYPE, .dtype = t.dtype});
    return sem_const((ConstVal){.kind = CV_TYPE, .type = t});
}

/* Attributes of a dtype or type (Triton's dtype, pointer_type, block_type): element_ty (a
 * pointer's pointee, a block's element type; a number dtype's is itself, as tric has always
 * taken it), scalar, shape, primitive_bitwidth. */
static bool type_attr(Sema *s, const ConstVal *cv, const char *name, Sem *out)
{
    Type t = cv->kind == CV_TYPE ? cv->type : type_scalar(cv->dtype);
    if (!strcmp(name, "element_ty") || !strcmp(name, "scalar")) {
        if (t.rank > 0)
            *out = sem_type(type_elem(t));
        else if (t.is_ptr && !strcmp(name, "element_ty"))
            *out = sem_type(type_scalar(t.dtype));
        else
            *out = sem_type(t);
        return true;
    }
    if (!strcmp(name, "primitive_bitwidth") && t.rank == 0) {
        *out = sem_int(t.is_ptr ? 64 : dtype_bits(t.dtype));
        return true;
    }
    if (!strcmp(name, "int_bitwidth") && !t.is_ptr && t.rank == 0 && dtype_is_int(t.dtype)) {
        *out = sem_int(dtype_bits(t.dtype));
        return true;
    }
    if (!strcmp(name, "shape") && t.rank > 0) {
        ConstVal sh = {.kind = CV_TUPLE};
        sh.tuple.n = t.rank;
        sh.tuple.elems = arena_alloc(s->a, (size_t)t.rank * sizeof(ConstVal));
        for (int i = 0; i < t.rank; i++)
            sh.tuple.elems[i] = (ConstVal){.kind = CV_INT, .i = t.shape[i]};
        *out = sem_const(sh);
        return true;
    }
    return false;
}

static Sem attr_expr(Sema *s, Expr *e)
{
    const char *name = e->attr.name ? e->attr.name : "";
    Expr *inner = e->attr.obj;
    Sem obj = expr(s, inner);
    if (is_error(obj))
        return obj;
    if (obj.kind == SEM_CONST && (obj.cv.kind == CV_DTYPE || obj.cv.kind == CV_TYPE)) {
        Sem r;
        if (type_attr(s, &obj.cv, name, &r))
            return r;
    }
    /* Triton's constexpr.value: the plain value a constexpr wraps (FlagGems' `dtype.value`). */
    if (obj.kind == SEM_CONST && !strcmp(name, "value"))
        return obj;
    if (obj.kind == SEM_MODULE) {
        const char *shown = dotted_text(s, e);
        if (!shown)
            shown = arena_printf(s->a, "%s.%s", obj.module ? obj.module : "tl", name);
        return module_member(s, obj, name, shown, e->attr.name_loc);
    }
    if (obj.kind == SEM_TUPLE && obj.tensor_desc) {
        /* tensor_descriptor's members: load, store, block_shape, dtype. */
        if (!strcmp(name, "load"))
            return (Sem){.kind = SEM_BUILTIN, .builtin = BI_DESC_LOAD};
        if (!strcmp(name, "store"))
            return (Sem){.kind = SEM_BUILTIN, .builtin = BI_DESC_STORE};
        if (!strcmp(name, "dtype"))
            return sem_type(type_scalar(obj.type.dtype));
        if (!strcmp(name, "block_shape")) {
            ConstVal cv = {.kind = CV_TUPLE};
            cv.tuple.n = obj.type.rank;
            cv.tuple.elems = arena_alloc(s->a, (size_t)obj.type.rank * sizeof(ConstVal));
            for (int i = 0; i < obj.type.rank; i++)
                cv.tuple.elems[i] = (ConstVal){.kind = CV_INT, .i = obj.type.shape[i]};
            return sem_const(cv);
        }
        diag_error(s->diag, e->attr.name_loc,
                   "a tensor descriptor has no attribute '%s' (tric "
                   "has load, store, block_shape, dtype)",
                   name);
        return sem_error();
    }
    if (obj.kind == SEM_VALUE) {
        Type t = obj.type;
        /* Triton: x.dtype is the element type (pointer_type(fp32) for pointers), x.type the
         * whole type (the dtype for a scalar, block_type for a block). */
        if (!strcmp(name, "dtype"))
            return sem_type(type_elem(t));
        if (!strcmp(name, "type"))
            return sem_type(t);
        if (!strcmp(name, "shape")) {
            ConstVal cv = {.kind = CV_TUPLE};
            cv.tuple.n = t.rank;
            cv.tuple.elems = arena_alloc(s->a, (size_t)(t.rank ? t.rank : 1) * sizeof(ConstVal));
            for (int i = 0; i < t.rank; i++)
                cv.tuple.elems[i] = (ConstVal){.kind = CV_INT, .i = t.shape[i]};
            return sem_const(cv);
        }
        if (!strcmp(name, "numel"))
            return sem_int(type_numel(t));
        if (!strcmp(name, "T")) {
            if (t.rank != 2) {
                diag_error(s->diag, e->attr.name_loc, ".T needs a 2-D block, got %s", tstr(s, t));
                return sem_error();
            }
            /* x.T: a transposed SEM_VALUE; builtin records that it is BI_TRANS of obj. */
            Type r = t;
            r.shape[0] = t.shape[1];
            r.shape[1] = t.shape[0];
            Sem v = sem_value(r);
            v.builtin = BI_TRANS;
            return v;
        }
        Builtin bi;
        if (lookup_method(name, &bi))
            return (Sem){.kind = SEM_BUILTIN, .builtin = bi};
        diag_error(s->diag, e->attr.name_loc, "%s has no attribute '%s'",
                   t.rank     ? "a block"
                   : t.is_ptr ? "a pointer"
                              : "a scalar",
                   name);
        return sem_error();
    }
    diag_error(s->diag, e->attr.name_loc, "%s has no attribute '%s'", sem_describe(s, obj), name);
    return sem_error();
}

/* ---- constexpr folding (Python semantics) ---------------------------------------------------- */

static double const_as_float(const ConstVal *cv)
{
    return cv->kind == CV_FLOAT ? cv->f : cv->kind == CV_INT ? (double)cv->i : (double)cv->b;
}

/* An int or bool constexpr as an int. Only for those two kinds: a float's union member is not an
 * int (reading .b of a float is undefined behaviour, which UBSan reports), so callers that may
 * see a float test for it first, as fold_binary does. */
static int64_t const_as_int(const ConstVal *cv)
{
    return cv->kind == CV_INT ? cv->i : cv->kind == CV_BOOL ? (int64_t)cv->b : 0;
}

static int64_t py_floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

static int64_t py_mod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

static Sem fold_binary(Sema *s, SrcLoc loc, BinOp op, ConstVal x, ConstVal y)
{
    if (op == BIN_IS || op == BIN_IS_NOT) {
        bool same = const_equal(&x, &y);
        return sem_bool(op == BIN_IS ? same : !same);
    }
    if (op == BIN_EQ || op == BIN_NE) {
        bool eq;
        if (const_is_number(&x) && const_is_number(&y))
            eq = const_as_float(&x) == const_as_float(&y) &&
                 (x.kind == CV_FLOAT || y.kind == CV_FLOAT || const_as_int(&x) == const_as_int(&y));
        else
            eq = const_equal(&x, &y);
        return sem_bool(op == BIN_EQ ? eq : !eq);
    }
    if (op == BIN_AND)
        return sem_const(const_truthy(&x) ? y : x);
    if (op == BIN_OR)
        return sem_const(const_truthy(&x) ? x : y);
    if (!const_is_number(&x) || !const_is_number(&y)) {
        StrBuf a = {0}, b = {0};
        const_print(&a, &x);
        const_print(&b, &y);
        diag_error(s->diag, loc, "unsupported operand types for %s: %s and %s", binop_str(op),
                   a.data, b.data);
        strbuf_free(&a);
        strbuf_free(&b);
        return sem_error();
    }
    bool fl = x.kind == CV_FLOAT || y.kind == CV_FLOAT;
    bool both_bool = x.kind == CV_BOOL && y.kind == CV_BOOL;
    double fx = const_as_float(&x), fy = const_as_float(&y);
    /* The int view only when neither is a float (a float compares as a float: `SCALE > 0` with
     * -D SCALE=0.1). */
    int64_t ix = fl ? 0 : const_as_int(&x), iy = fl ? 0 : const_as_int(&y);
    switch (op) {
    case BIN_LT: return sem_bool(fl ? fx < fy : ix < iy);
    case BIN_LE: return sem_bool(fl ? fx <= fy : ix <= iy);
    case BIN_GT: return sem_bool(fl ? fx > fy : ix > iy);
    case BIN_GE: return sem_bool(fl ? fx >= fy : ix >= iy);
    case BIN_ADD: return fl ? sem_float(fx + fy) : sem_int((int64_t)((uint64_t)ix + (uint64_t)iy));
    case BIN_SUB: return fl ? sem_float(fx - fy) : sem_int((int64_t)((uint64_t)ix - (uint64_t)iy));
    case BIN_MUL: return fl ? sem_float(fx * fy) : sem_int((int64_t)((uint64_t)ix * (uint64_t)iy));
    case BIN_DIV:
        if (fy == 0.0) {
            diag_error(s->diag, loc, "division by zero in a constexpr expression");
            return sem_error();
        }
        return sem_float(fx / fy);
    case BIN_FLOORDIV:
    case BIN_MOD:
        if (fl ? fy == 0.0 : iy == 0) {
            diag_error(s->diag, loc, "%s by zero in a constexpr expression",
                       op == BIN_MOD ? "modulo" : "integer division");
            return sem_error();
        }
        if (fl) /* Python: floor division and modulo of floats */
            return op == BIN_MOD ? sem_float(fx - floor(fx / fy) * fy) : sem_float(floor(fx / fy));
        if (ix == INT64_MIN && iy == -1)
            return op == BIN_MOD ? sem_int(0) : sem_int(INT64_MIN);
        return op == BIN_MOD ? sem_int(py_mod(ix, iy)) : sem_int(py_floordiv(ix, iy));
    case BIN_BITAND:
    case BIN_BITOR:
    case BIN_BITXOR:
    case BIN_SHL:
    case BIN_SHR:
        if (fl) {
            diag_error(s->diag, loc, "unsupported operand types for %s: float (it needs ints)",
                       binop_str(op));
            return sem_error();
        }
        if (op == BIN_BITAND)
            return both_bool ? sem_bool(ix & iy) : sem_int(ix & iy);
        if (op == BIN_BITOR)
            return both_bool ? sem_bool(ix | iy) : sem_int(ix | iy);
        if (op == BIN_BITXOR)
            return both_bool ? sem_bool(ix ^ iy) : sem_int(ix ^ iy);
        if (iy < 0) {
            diag_error(s->diag, loc, "negative shift count in a constexpr expression");
            return sem_error();
        }
        if (op == BIN_SHL)
            return sem_int(iy >= 63 ? 0 : (int64_t)((uint64_t)ix << iy));
        return sem_int(iy >= 63 ? (ix < 0 ? -1 : 0) : ix >> iy);
    case BIN_MATMUL:
        diag_error(s->diag, loc, "the '@' operator is not supported; use tl.dot(a, b)");
        return sem_error();
    case BIN_POW:
        /* Python: an int to a non-negative int power is an int (wrapping here at 64 bits, so
         * -1 * 2 ** 63 still gives INT64_MIN); any other power is a float. */
        if (!fl && iy >= 0) {
            uint64_t r = 1, b = (uint64_t)ix;
            for (int64_t e = iy; e > 0; e >>= 1, b *= b)
                if (e & 1)
                    r *= b;
            return sem_int((int64_t)r);
        }
        if (fx == 0.0 && fy < 0.0) {
            diag_error(s->diag, loc, "0 cannot be raised to a negative power");
            return sem_error();
        }
        return sem_float(pow(fx, fy));
    default: break;
    }
    TRIC_INTERNAL(s->diag, "fold_binary: unhandled operator %s", binop_str(op));
    return sem_error();
}

/* ---- Triton's typing rules ------------------------------------------------------------------- */

/* Python-scalar kinds for weak typing: bool < uint < int < float (semantic.py,
 * computation_type_impl step 0). */
static int dtype_kind_rank(DType t)
{
    if (t == DT_I1)
        return 0;
    switch (dtype_kind(t)) {
    case DK_UINT: return 1;
    case DK_INT: return 2;
    case DK_FLOAT: return 3;
    }
    return 2;
}

/* integer_promote_impl: C's usual arithmetic conversions on widths and signedness. */
static DType integer_promote(DType a, DType b)
{
    bool ua = dtype_kind(a) == DK_UINT, ub = dtype_kind(b) == DK_UINT;
    int ra = dtype_bits(a), rb = dtype_bits(b);
    if (ua == ub)
        return ra > rb ? a : b;
    if (ua)
        return ra >= rb ? a : b;
    return rb >= ra ? b : a;
}

/* fp8 values are loaded, stored, converted and fed to tl.dot; arithmetic goes through a wider
 * float, as the message says. */
#define FP8_NO_ARITHMETIC                                                                          \
    "fp8 has no arithmetic in tric; convert with .to(tl.float16) or .to(tl.float32) first"

/* An error at loc when t is an fp8 value used by an operation that computes on it. */
static bool reject_fp8(Sema *s, SrcLoc loc, const char *what, Type t)
{
    if (t.is_ptr || !dtype_is_fp8(t.dtype))
        return true;
    diag_error(s->diag, loc, "%s of %s: %s", what, dtype_name(t.dtype), FP8_NO_ARITHMETIC);
    return false;
}

/* computation_type_impl. a_weak / b_weak: the operand is a Python scalar (constexpr). Returns
 * false with *why set when the types do not combine. */
static bool computation_type(DType a, bool a_weak, DType b, bool b_weak, bool div_or_mod,
                             DType *out, const char **why)
{
    if (a_weak != b_weak) {
        DType scalar = a_weak ? a : b, block = a_weak ? b : a;
        if (dtype_is_fp8(block)) {
            *why = FP8_NO_ARITHMETIC;
            return false;
        }
        if (dtype_kind_rank(scalar) <= dtype_kind_rank(block)) {
            *out = (div_or_mod && (block == DT_F16 || block == DT_BF16)) ? DT_F32 : block;
            return true;
        }
    }
    if (a == DT_F64 || b == DT_F64)
        return *out = DT_F64, true;
    if (a == DT_F32 || b == DT_F32)
        return *out = DT_F32, true;
    /* fp16 wins over bf16 here, as in Triton (step 3 is checked before step 4). */
    if (a == DT_F16 || b == DT_F16)
        return *out = div_or_mod ? DT_F32 : DT_F16, true;
    if (a == DT_BF16 || b == DT_BF16)
        return *out = (div_or_mod || a != b) ? DT_F32 : DT_BF16, true;
    /* Step 5 would compute fp8 with fp8 in fp8 (or fp16 for two formats); tric keeps fp8 a
     * storage type: with a wider float above the fp8 operand is converted exactly. */
    if (dtype_is_fp8(a) || dtype_is_fp8(b)) {
        *why = FP8_NO_ARITHMETIC;
        return false;
    }
    if (div_or_mod && dtype_is_signed(a) != dtype_is_signed(b) && a != DT_I1 && b != DT_I1) {
        *why = "they have different signedness; cast them to the same signedness";
        return false;
    }
    *out = integer_promote(a, b);
    return true;
}

/* Numpy-like broadcasting, right-aligned (Triton's broadcast_impl_value). Reports at loc. */
static bool broadcast(Sema *s, SrcLoc loc, Type a, Type b, Type *out)
{
    int rank = a.rank > b.rank ? a.rank : b.rank;
    Type r = {.rank = (uint8_t)rank};
    for (int i = 0; i < rank; i++) {
        int ai = a.rank - rank + i, bi = b.rank - rank + i;
        int32_t da = ai >= 0 ? a.shape[ai] : 1, db = bi >= 0 ? b.shape[bi] : 1;
        r.shape[i] = da;
        if (da == 1)
            r.shape[i] = db;
        else if (db != 1 && da != db)
            goto mismatch;
    }
    *out = r;
    return true;
mismatch:
    /* Report the first mismatching dimension from the right, as numpy does. */
    for (int i = rank - 1; i >= 0; i--) {
        int ai = a.rank - rank + i, bi = b.rank - rank + i;
        int32_t da = ai >= 0 ? a.shape[ai] : 1, db = bi >= 0 ? b.shape[bi] : 1;
        if (da != 1 && db != 1 && da != db) {
            diag_error(s->diag, loc, "cannot broadcast %s and %s: dimension %d is %d vs %d",
                       shape_str(s, a), shape_str(s, b), i, da, db);
            break;
        }
    }
    return false;
}

/* Can `from` be broadcast to exactly `to` (a mask/value to a pointer's shape)? */
static bool broadcasts_to(Type from, Type to)
{
    if (from.rank > to.rank)
        return false;
    for (int i = 0; i < from.rank; i++) {
        int32_t d = from.shape[from.rank - 1 - i], t = to.shape[to.rank - 1 - i];
        if (d != 1 && d != t)
            return false;
    }
    return true;
}

static Type with_shape(DType dt, bool is_ptr, Type shape)
{
    Type t = shape;
    t.dtype = dt;
    t.is_ptr = is_ptr;
    return t;
}

static const char *elem_str(Sema *s, Type t) { return tstr(s, type_elem(t)); }

/* The type of `l op r` where at least one side is a run-time value (Triton semantic.py: add,
 * sub, mul, truediv, floordiv, mod, bitwise ops, shifts, comparisons). */
static Sem binary_values(Sema *s, SrcLoc loc, BinOp op, Sem l, Sem r)
{
    Type lt, rt;
    if (!operand_type(l, &lt) || !operand_type(r, &rt)) {
        Sem bad = operand_type(l, &lt) ? r : l;
        diag_error(s->diag, loc, "unsupported operand for %s: %s", binop_str(op),
                   sem_describe(s, bad));
        return sem_error();
    }
    bool lw = l.kind == SEM_CONST, rw = r.kind == SEM_CONST;
    Type shape;
    if (!broadcast(s, loc, lt, rt, &shape))
        return sem_error();
    const char *opname = binop_str(op);

    if (op == BIN_MATMUL) {
        diag_error(s->diag, loc, "the '@' operator is not supported; use tl.dot(a, b)");
        return sem_error();
    }
    if (op == BIN_AND || op == BIN_OR || op == BIN_IS || op == BIN_IS_NOT) {
        if (op == BIN_IS || op == BIN_IS_NOT) {
            /* A run-time value is never None nor any constexpr: `x is None` is False. */
            return sem_bool(op == BIN_IS_NOT);
        }
        /* Triton 3 maps and/or on run-time values to logical_and/logical_or: both sides as
         * int1, broadcast, no short-circuit (FlagGems writes `mask = row_mask and col_mask`). */
        return sem_value(with_shape(DT_I1, false, shape));
    }

    /* Pointer arithmetic: ptr + int, int + ptr, ptr - int (semantic.py check_ptr_type_impl). */
    if (lt.is_ptr || rt.is_ptr) {
        if (op == BIN_EQ || op == BIN_NE) {
            if (lt.is_ptr && rt.is_ptr && lt.dtype == rt.dtype) {
                Sem v = sem_value(with_shape(DT_I1, false, shape));
                v.compute_dtype = DT_I64;
                return v;
            }
        }
        if (lt.is_ptr && rt.is_ptr) {
            diag_error(s->diag, loc, "cannot %s pointers (%s and %s)",
                       op == BIN_ADD   ? "add two"
                       : op == BIN_SUB ? "subtract two"
                                       : "combine",
                       elem_str(s, lt), elem_str(s, rt));
            return sem_error();
        }
        Type pt = lt.is_ptr ? lt : rt, it = lt.is_ptr ? rt : lt;
        if (op != BIN_ADD && !(op == BIN_SUB && lt.is_ptr)) {
            diag_error(s->diag, loc,
                       "'%s' is not defined on pointers (%s %s %s); pointer "
                       "arithmetic is ptr + int and ptr - int",
                       opname, elem_str(s, lt), opname, elem_str(s, rt));
            return sem_error();
        }
        if (!dtype_is_int(it.dtype)) {
            diag_error(s->diag, loc, "cannot %s %s %s a pointer (%s): offsets must be integers",
                       op == BIN_ADD ? "add" : "subtract", elem_str(s, it),
                       op == BIN_ADD ? "to" : "from", elem_str(s, pt));
            return sem_error();
        }
        Sem v = sem_value(with_shape(pt.dtype, true, shape));
        v.compute_dtype = it.dtype;
        return v;
    }

    DType ct;
    const char *why = NULL;
    switch (op) {
    case BIN_BITAND:
    case BIN_BITOR:
    case BIN_BITXOR:
    case BIN_SHL:
    case BIN_SHR:
        /* bitwise_op_type_checking_impl: integers only, integer_promote_impl, no weak typing. */
        if (!dtype_is_int(lt.dtype) || !dtype_is_int(rt.dtype)) {
            diag_error(s->diag, loc, "'%s' needs integer operands, got %s and %s", opname,
                       elem_str(s, lt), elem_str(s, rt));
            return sem_error();
        }
        /* bitwise_op_type_checking_impl: the arithmetic check first (weak Python scalars, so
         * x_i8 << 1 stays int8), then integers only, then integer_promote_impl. */
        if (!computation_type(lt.dtype, lw, rt.dtype, rw, false, &ct, &why) || !dtype_is_int(ct)) {
            diag_error(s->diag, loc, "'%s' needs integer operands, got %s and %s", opname,
                       elem_str(s, lt), elem_str(s, rt));
            return sem_error();
        }
        {
            Sem v = sem_value(with_shape(ct, false, shape));
            v.compute_dtype = ct;
            return v;
        }
    case BIN_FLOORDIV:
        if (!dtype_is_int(lt.dtype) || !dtype_is_int(rt.dtype)) {
            diag_error(s->diag, loc,
                       "'//' needs integer operands, got %s and %s (use / for "
                       "floats)",
                       elem_str(s, lt), elem_str(s, rt));
            return sem_error();
        }
        break;
    default: break;
    }
    bool div_or_mod = op == BIN_DIV || op == BIN_MOD || op == BIN_FLOORDIV;
    bool compare = op == BIN_EQ || op == BIN_NE || op == BIN_LT || op == BIN_LE || op == BIN_GT ||
                   op == BIN_GE;
    /* Two fp8 values compare in fp16, which holds both formats exactly (Triton: in the fp8
     * type, or fp16 for two formats; the same answers). */
    if (compare && !lw && !rw && !lt.is_ptr && !rt.is_ptr && dtype_is_fp8(lt.dtype) &&
        dtype_is_fp8(rt.dtype)) {
        Sem v = sem_value(with_shape(DT_I1, false, shape));
        v.compute_dtype = DT_F16;
        return v;
    }
    if (!computation_type(lt.dtype, lw, rt.dtype, rw, div_or_mod, &ct, &why)) {
        diag_error(s->diag, loc, "cannot use '%s' with %s and %s: %s", opname, elem_str(s, lt),
                   elem_str(s, rt), why);
        return sem_error();
    }
    /* A negative Python scalar with an unsigned computation type (semantic.py raises too). */
    if (dtype_kind(ct) == DK_UINT &&
        ((lw && l.cv.kind == CV_INT && l.cv.i < 0) || (rw && r.cv.kind == CV_INT && r.cv.i < 0))) {
        diag_error(s->diag, loc,
                   "cannot combine an unsigned %s with a negative constant; cast "
                   "one of them explicitly",
                   dtype_name(ct));
        return sem_error();
    }
    DType result = ct;
    switch (op) {
    case BIN_EQ:
    case BIN_NE:
    case BIN_LT:
    case BIN_LE:
    case BIN_GT:
    case BIN_GE: result = DT_I1; break;
    case BIN_DIV:
        if (dtype_is_int(ct))
            ct = DT_F32; /* truediv: int / int is computed in fp32 */
        result = ct;
        break;
    default: break;
    }
    Sem v = sem_value(with_shape(result, false, shape));
    v.compute_dtype = ct;
    return v;
}

static Sem binary_sems(Sema *s, SrcLoc loc, BinOp op, Sem l, Sem r)
{
    if (is_error(l) || is_error(r))
        return sem_error();
    if (op == BIN_MATMUL) {
        diag_error(s->diag, loc, "the '@' operator is not supported; use tl.dot(a, b)");
        return sem_error();
    }
    if (l.kind == SEM_CONST && r.kind == SEM_CONST)
        return fold_binary(s, loc, op, l.cv, r.cv);
    if (op == BIN_POW) {
        diag_error(s->diag, loc,
                   "'**' is only supported on constexprs; multiply explicitly "
                   "(x * x) or use tl.exp2 and tl.log2");
        return sem_error();
    }
    if ((op == BIN_IS || op == BIN_IS_NOT || op == BIN_EQ || op == BIN_NE) &&
        ((l.kind == SEM_CONST && !const_is_number(&l.cv)) ||
         (r.kind == SEM_CONST && !const_is_number(&r.cv))) &&
        (l.kind == SEM_VALUE || r.kind == SEM_VALUE))
        return sem_bool(op == BIN_IS_NOT || op == BIN_NE); /* a value vs None / a dtype */
    if ((op == BIN_AND || op == BIN_OR) && l.kind == SEM_CONST) {
        /* Python short-circuit with a constexpr left side. */
        bool t = const_truthy(&l.cv);
        if ((op == BIN_AND && !t) || (op == BIN_OR && t))
            return l;
    }
    return binary_values(s, loc, op, l, r);
}

static Sem binary_expr(Sema *s, Expr *e)
{
    Sem l = expr(s, e->bin.lhs);
    Sem r = expr(s, e->bin.rhs);
    return binary_sems(s, e->loc, e->bin.op, l, r);
}

static Sem unary_expr(Sema *s, Expr *e)
{
    Sem x = expr(s, e->un.operand);
    if (is_error(x))
        return x;
    UnOp op = e->un.op;
    static const char *const names[] = {"-", "+", "~", "not"};
    const char *opname = (unsigned)op < 4 ? names[op] : "?";
    if (x.kind == SEM_CONST) {
        if (op == UN_NOT)
            return sem_bool(!const_truthy(&x.cv));
        if (!const_is_number(&x.cv)) {
            diag_error(s->diag, e->loc, "bad operand for unary %s: %s", opname, sem_describe(s, x));
            return sem_error();
        }
        if (op == UN_PLUS)
            return x.cv.kind == CV_BOOL ? sem_int(x.cv.b) : x;
        if (op == UN_NEG)
            return x.cv.kind == CV_FLOAT ? sem_float(-x.cv.f)
                                         : sem_int((int64_t)(0 - (uint64_t)const_as_int(&x.cv)));
        if (x.cv.kind == CV_FLOAT) {
            diag_error(s->diag, e->loc, "'~' needs an integer operand, got a float");
            return sem_error();
        }
        return sem_int(~const_as_int(&x.cv));
    }
    if (x.kind != SEM_VALUE) {
        diag_error(s->diag, e->loc, "bad operand for unary %s: %s", opname, sem_describe(s, x));
        return sem_error();
    }
    Type t = x.type;
    switch (op) {
    case UN_NOT:
        if (t.rank) {
            diag_error(s->diag, e->loc,
                       "'not' is not supported on blocks (as in Triton); use "
                       "'~' on an int1 block or '== 0'");
            return sem_error();
        }
        return sem_value(type_scalar(DT_I1));
    case UN_NEG:
    case UN_PLUS:
        if (!reject_fp8(s, e->loc, op == UN_NEG ? "unary -" : "unary +", t))
            return sem_error();
        if (t.is_ptr) {
            diag_error(s->diag, e->loc, "bad operand for unary %s: a pointer (%s)", opname,
                       tstr(s, t));
            return sem_error();
        }
        return sem_value(t);
    case UN_INVERT:
        if (t.is_ptr || !dtype_is_int(t.dtype)) {
            diag_error(s->diag, e->loc, "'~' needs an integer operand, got %s", tstr(s, t));
            return sem_error();
        }
        return sem_value(t);
    }
    return sem_error();
}

/* ---- tuples, subscripts, ternaries ----------------------------------------------------------- */

/* A tuple with run-time elements (the returned value of a helper, `a, b = ...`). */
static Sem runtime_tuple(Sema *s, Expr *e)
{
    Sem t = {.kind = SEM_TUPLE, .nelems = e->list.n};
    t.elems = arena_alloc(s->a, (size_t)(e->list.n ? e->list.n : 1) * sizeof(Sem));
    for (int i = 0; i < e->list.n; i++)
        t.elems[i] = e->list.elts[i]->sem;
    return t;
}

static Sem tuple_expr(Sema *s, Expr *e)
{
    ConstVal cv = {.kind = CV_TUPLE};
    cv.tuple.n = e->list.n;
    cv.tuple.elems = arena_alloc(s->a, (size_t)(e->list.n ? e->list.n : 1) * sizeof(ConstVal));
    bool ok = true, runtime = false;
    for (int i = 0; i < e->list.n; i++) {
        Sem x = expr(s, e->list.elts[i]);
        if (is_error(x)) {
            ok = false;
            continue;
        }
        if (x.kind == SEM_VALUE || x.kind == SEM_TUPLE) {
            if (!s->tuple_ctx) {
                runtime = true;
                continue;
            }
        }
        if (x.kind != SEM_CONST) {
            if (ok && s->tuple_ctx)
                diag_error(s->diag, expr_start(e->list.elts[i]),
                           "%s must be constexprs; element %d is %s", s->tuple_ctx, i,
                           sem_describe(s, x));
            else if (ok)
                diag_error(s->diag, expr_start(e->list.elts[i]),
                           "a tuple can hold values and constexprs, not %s", sem_describe(s, x));
            ok = false;
            continue;
        }
        cv.tuple.elems[i] = x.cv;
    }
    if (!ok)
        return sem_error();
    return runtime ? runtime_tuple(s, e) : sem_const(cv);
}

static bool is_full_slice(const Expr *e)
{
    return e->kind == EX_SLICE && !e->slice.lo && !e->slice.hi && !e->slice.step;
}

static Sem subscript_expr(Sema *s, Expr *e)
{
    Sem obj = expr(s, e->sub.obj);
    /* Analyse the indices too (for their own errors); None and ':' are constexprs. */
    bool ok = !is_error(obj);
    for (int i = 0; i < e->sub.nidx; i++) {
        Expr *ix = e->sub.idx[i];
        if (!ix)
            continue;
        if (ix->kind == EX_SLICE) {
            Expr *parts[3] = {ix->slice.lo, ix->slice.hi, ix->slice.step};
            for (int k = 0; k < 3; k++)
                if (parts[k] && is_error(expr(s, parts[k])))
                    ok = false;
            ix->sem = sem_const((ConstVal){.kind = CV_NONE});
        } else if (is_error(expr(s, ix))) {
            ok = false;
        }
    }
    if (!ok)
        return sem_error();
    if (obj.kind == SEM_CONST && obj.cv.kind == CV_TUPLE) {
        if (e->sub.nidx != 1 || e->sub.idx[0]->kind == EX_SLICE ||
            e->sub.idx[0]->sem.kind != SEM_CONST || e->sub.idx[0]->sem.cv.kind != CV_INT) {
            diag_error(s->diag, e->loc, "a constexpr tuple is indexed by one constexpr int");
            return sem_error();
        }
        int64_t i = e->sub.idx[0]->sem.cv.i, n = obj.cv.tuple.n;
        if (i < 0)
            i += n;
        if (i < 0 || i >= n) {
            diag_error(s->diag, e->sub.idx[0]->loc, "tuple index %lld out of range (size %lld)",
                       (long long)e->sub.idx[0]->sem.cv.i, (long long)n);
            return sem_error();
        }
        return sem_const(obj.cv.tuple.elems[i]);
    }
    if (obj.kind == SEM_TUPLE) {
        if (e->sub.nidx != 1 || e->sub.idx[0]->kind == EX_SLICE ||
            e->sub.idx[0]->sem.kind != SEM_CONST || e->sub.idx[0]->sem.cv.kind != CV_INT) {
            diag_error(s->diag, e->loc, "a tuple is indexed by one constexpr int");
            return sem_error();
        }
        int64_t i = e->sub.idx[0]->sem.cv.i, n = obj.nelems;
        if (i < 0)
            i += n;
        if (i < 0 || i >= n) {
            diag_error(s->diag, e->sub.idx[0]->loc, "tuple index %lld out of range (size %lld)",
                       (long long)e->sub.idx[0]->sem.cv.i, (long long)n);
            return sem_error();
        }
        return obj.elems[i];
    }
    if (obj.kind != SEM_VALUE) {
        diag_error(s->diag, e->loc, "%s is not subscriptable", sem_describe(s, obj));
        return sem_error();
    }
    /* A block: only None (new axis of size 1) and ':' (keep the axis), as x[:, None]. */
    Type t = obj.type, r = type_elem(t);
    int src = 0, rank = 0;
    for (int i = 0; i < e->sub.nidx; i++) {
        Expr *ix = e->sub.idx[i];
        if (ix->kind == EX_NONE ||
            (ix->kind != EX_SLICE && ix->sem.kind == SEM_CONST && ix->sem.cv.kind == CV_NONE)) {
            if (rank >= TRIC_MAX_RANK)
                goto too_many;
            r.shape[rank++] = 1;
        } else if (is_full_slice(ix)) {
            if (src >= t.rank) {
                diag_error(s->diag, ix->loc, "too many ':' for a block of rank %d (%s)", t.rank,
                           tstr(s, t));
                return sem_error();
            }
            if (rank >= TRIC_MAX_RANK)
                goto too_many;
            r.shape[rank++] = t.shape[src++];
        } else if (ix->kind == EX_SLICE) {
            diag_error(s->diag, ix->loc,
                       "slices with bounds are not supported on blocks; only ':' "
                       "and None (as in x[:, None])");
            return sem_error();
        } else {
            diag_error(s->diag, ix->loc,
                       "indexing a block with %s is not supported (as in "
                       "Triton); use x[:, None] / x[None, :] to add dims",
                       sem_describe(s, ix->sem));
            return sem_error();
        }
    }
    /* Dims not named keep their size (x[None] on a 1-D block is <1xN>). */
    while (src < t.rank) {
        if (rank >= TRIC_MAX_RANK)
            goto too_many;
        r.shape[rank++] = t.shape[src++];
    }
    r.rank = (uint8_t)rank;
    return sem_value(r);
too_many:
    diag_error(s->diag, e->loc, "blocks have at most %d dimensions", TRIC_MAX_RANK);
    return sem_error();
}

static bool scalar_condition(Sema *s, Expr *cond, Sem c, const char *what)
{
    if (is_error(c))
        return false;
    /* A scalar pointer tests as != NULL, as Triton casts a condition to int1 (FlagGems writes
     * `if dW:` for an optional output). */
    if (c.kind == SEM_VALUE && c.type.rank == 0)
        return true;
    if (c.kind == SEM_VALUE)
        diag_error(s->diag, cond->loc, "the condition of %s must be a scalar, got %s%s", what,
                   tstr(s, c.type), c.type.rank ? " (use tl.where for a block)" : "");
    else
        diag_error(s->diag, cond->loc, "the condition of %s must be a scalar, got %s", what,
                   sem_describe(s, c));
    return false;
}

static Sem ternary_expr(Sema *s, Expr *e)
{
    Sem c = expr(s, e->ternary.cond);
    if (is_error(c))
        return c;
    if (c.kind == SEM_CONST) /* decided now; only the taken side is analysed, as in Triton */
        return expr(s, const_truthy(&c.cv) ? e->ternary.then : e->ternary.els);
    if (!scalar_condition(s, e->ternary.cond, c, "a conditional expression"))
        return sem_error();
    Sem a = expr(s, e->ternary.then), b = expr(s, e->ternary.els);
    if (is_error(a) || is_error(b))
        return sem_error();
    Type ta, tb;
    if (!operand_type(a, &ta) || !operand_type(b, &tb) || !type_equal(ta, tb)) {
        diag_error(s->diag, e->loc,
                   "a conditional expression with a run-time condition needs "
                   "both sides of one type, got %s and %s",
                   sem_describe(s, a), sem_describe(s, b));
        return sem_error();
    }
    return sem_value(ta);
}

/* ---- builtin calls --------------------------------------------------------------------------- */

typedef struct ParamSpec {
    char name[32];
    bool optional;
} ParamSpec;

static const char *const builtin_param_strings[BI_COUNT] = {
#define X(e, name, params, doc) [e] = params,
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
    default: return -1;
    }
}

/* What a call of builtin b is called in messages: "load()", "x.to()", "min()"; a libdevice
 * function as the source spells it, "libdevice.asin()". */
static const char *callee_display(Sema *s, Expr *call, Builtin b)
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

static SrcLoc callee_loc(Expr *call)
{
    Expr *fn = call->call.fn;
    if (fn->kind == EX_ATTR && fn->attr.name_loc.line > 0)
        return fn->attr.name_loc;
    return fn->loc;
}

static const char *plural(int n, const char *one, const char *many) { return n == 1 ? one : many; }

/* Matches positional and keyword arguments to the builtin's parameters (Python's rules). On
 * success call.bound / call.nbound hold them in parameter order, receiver first for a method. */
static bool bind_builtin_args(Sema *s, Expr *call, Builtin b, Expr *receiver)
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
static bool analyse_args(Sema *s, Expr *call)
{
    bool ok = true;
    for (int i = 0; i < call->call.nargs; i++)
        if (is_error(expr(s, call->call.args[i])))
            ok = false;
    for (int i = 0; i < call->call.nkwargs; i++)
        if (is_error(expr(s, call->call.kwargs[i])))
            ok = false;
    return ok;
}

/* The bound argument i's Sem (NULL argument: SEM_UNSET with kind marker none -> returns false). */
static Expr *arg(Expr *call, int i) { return i < call->call.nbound ? call->call.bound[i] : NULL; }

static bool arg_is_none(Expr *call, int i)
{
    Expr *x = arg(call, i);
    return !x || (x->sem.kind == SEM_CONST && x->sem.cv.kind == CV_NONE);
}

/* Where an expression starts (a binary expression's loc is its operator). */
static SrcLoc expr_start(const Expr *e)
{
    for (int depth = 0; e && depth < 1000; depth++) {
        const Expr *next = NULL;
        switch (e->kind) {
        case EX_BINARY: next = e->bin.lhs; break;
        case EX_ATTR: next = e->attr.obj; break;
        case EX_CALL: next = e->call.fn; break;
        case EX_SUBSCRIPT: next = e->sub.obj; break;
        case EX_TERNARY: next = e->ternary.then; break;
        default: break;
        }
        if (!next || next->loc.line != e->loc.line || next->loc.col > e->loc.col)
            return e->loc;
        e = next;
    }
    return e ? e->loc : (SrcLoc){0};
}

/* Where to report a problem with bound argument i: its keyword if it was passed by keyword, else
 * the start of the argument. */
static SrcLoc arg_loc(Expr *call, int i)
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

static bool const_int_arg(Sema *s, Expr *call, int i, const char *fname, const char *what,
                          int64_t *out)
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

static bool const_bool_arg(Sema *s, Expr *call, int i, const char *fname, const char *what,
                           bool *out)
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
static bool shape_arg(Sema *s, Expr *call, int i, const char *fname, Type *out)
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
static bool value_arg(Sema *s, Expr *call, int i, const char *fname, const char *what, Type *out)
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
    Expr *index = reduce_call(s, fn, b == BI_MAX ? "argmax" : "argmin", arg(call, 0), arg(call, 1),
                              kw_arg, arg_vals, 2);
    call->kind = EX_TUPLE;
    call->list.elts = arena_alloc(s->a, 2 * sizeof(Expr *));
    call->list.elts[0] = value;
    call->list.elts[1] = index;
    call->list.n = 2;
    return expr(s, call);
}

static Sem reduce_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
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
        if (!arg_is_none(call, 3)) {
            if (!dtype_arg(s, call, 3, fname, &rdt))
                return sem_error();
        } else if (dtype_is_int(t.dtype) && dtype_bits(t.dtype) < 32) {
            rdt = dtype_kind(t.dtype) == DK_UINT ? DT_U32 : DT_I32;
        }
    }
    if (t.rank == 0) {
        diag_error(s->diag, arg_loc(call, 0), "%s needs a block, got the scalar %s", fname,
                   tstr(s, t));
        return sem_error();
    }
    Type r = type_scalar(rdt);
    if (arg_is_none(call, 1)) {
        /* axis=None reduces every dim. */
        if (keep) {
            r = with_shape(rdt, false, t);
            for (int i = 0; i < t.rank; i++)
                r.shape[i] = 1;
        }
        return sem_value(r);
    }
    int64_t axis;
    if (!const_int_arg(s, call, 1, fname, "axis", &axis))
        return sem_error();
    int64_t ax = normalize_axis(axis, t.rank);
    if (ax < 0 || ax >= t.rank) {
        diag_error(s->diag, arg_loc(call, 1), "%s: axis %lld is out of range for %s", fname,
                   (long long)axis, tstr(s, t));
        return sem_error();
    }
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

/* tl.cumsum(x, axis=0, reverse=False, dtype=None), tl.cumprod(x, axis=0, reverse=False),
 * tl.associative_scan(x, axis, combine_fn, reverse=False): x's shape; the dtype follows
 * standard.py: bf16 scans in fp32 (cumsum, cumprod), cumsum widens ints narrower than 32 bits to
 * (u)int32 (_pick_sum_dtype) unless dtype= says otherwise. */
static Sem scan_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Type t;
    if (!value_arg(s, call, 0, fname, "input", &t))
        return sem_error();
    if (t.is_ptr || t.rank == 0) {
        diag_error(s->diag, arg_loc(call, 0), "%s needs a block of numbers, got %s", fname,
                   tstr(s, t));
        return sem_error();
    }
    int64_t axis = 0;
    if (!arg_is_none(call, 1) && !const_int_arg(s, call, 1, fname, "axis", &axis))
        return sem_error();
    int64_t ax = normalize_axis(axis, t.rank);
    if (ax < 0 || ax >= t.rank) {
        diag_error(s->diag, arg_loc(call, 1), "%s: axis %lld is out of range for %s", fname,
                   (long long)axis, tstr(s, t));
        return sem_error();
    }
    int rev_idx = b == BI_ASSOCIATIVE_SCAN ? 3 : 2;
    bool rev = false;
    if (!arg_is_none(call, rev_idx) && !const_bool_arg(s, call, rev_idx, fname, "reverse", &rev))
        return sem_error();
    DType rdt = t.dtype;
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

static Sem dot_builtin(Sema *s, Expr *call, const char *fname)
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
    bool tf32;
    if (!arg_is_none(call, 4) && !const_bool_arg(s, call, 4, fname, "allow_tf32", &tf32))
        return sem_error();
    int64_t imprecise;
    if (!arg_is_none(call, 5) &&
        !const_int_arg(s, call, 5, fname, "max_num_imprecise_acc", &imprecise))
        return sem_error();
    Type rt = with_shape(out, false, a);
    rt.shape[r - 2] = M;
    rt.shape[r - 1] = N;
    if (!arg_is_none(call, 2)) {
        Type acc;
        if (!value_arg(s, call, 2, fname, "acc", &acc))
            return sem_error();
        /* As Triton: acc must have the product's type (out_dtype, fp32 by default). */
        if (!type_equal(acc, rt)) {
            diag_error(s->diag, arg_loc(call, 2), "%s's acc has type %s but the product is %s",
                       fname, tstr(s, acc), tstr(s, rt));
            return sem_error();
        }
    }
    Sem v = sem_value(rt);
    v.compute_dtype = a.dtype;
    return v;
}

/* ---- block pointers (tl.make_block_ptr, tl.advance; Triton's semantic.make_block_ptr) ------- */

static bool is_block_ptr(Sem x) { return x.kind == SEM_TUPLE && x.block_ptr; }

/* Argument i as a tuple (or list) of n integers, constexpr or run-time scalars: n from the
 * tuple when *n < 0, else checked against it. */
static bool int_tuple_arg(Sema *s, Expr *call, int i, const char *fname, const char *what, int *n)
{
    Expr *x = arg(call, i);
    if (!x || is_error(x->sem))
        return false;
    Sem v = x->sem;
    int len = v.kind == SEM_CONST && v.cv.kind == CV_TUPLE            ? v.cv.tuple.n
              : v.kind == SEM_TUPLE && !v.block_ptr && !v.tensor_desc ? v.nelems
                                                                      : -1;
    if (len < 0) {
        diag_error(s->diag, arg_loc(call, i), "%s's %s must be a tuple of ints, got %s", fname,
                   what, sem_describe(s, v));
        return false;
    }
    for (int k = 0; k < len; k++) {
        bool ok;
        if (v.kind == SEM_CONST) {
            ok = v.cv.tuple.elems[k].kind == CV_INT || v.cv.tuple.elems[k].kind == CV_BOOL;
        } else {
            Sem e = v.elems[k];
            ok = (e.kind == SEM_CONST && (e.cv.kind == CV_INT || e.cv.kind == CV_BOOL)) ||
                 (e.kind == SEM_VALUE && e.type.rank == 0 && !e.type.is_ptr &&
                  dtype_is_int(e.type.dtype));
        }
        if (!ok) {
            diag_error(s->diag, arg_loc(call, i),
                       "%s's %s must be a tuple of ints; element %d is %s", fname, what, k,
                       v.kind == SEM_CONST ? "not an int" : sem_describe(s, v.elems[k]));
            return false;
        }
    }
    if (*n >= 0 && len != *n) {
        diag_error(s->diag, arg_loc(call, i),
                   "%s's %s has %d element%s; the block has %d dimensions", fname, what, len,
                   len == 1 ? "" : "s", *n);
        return false;
    }
    *n = len;
    return true;
}

/* The block pointer Sem for a block of pointers `block` (element type and block_shape). */
static Sem block_ptr_sem(Sema *s, Type block, ConstVal order)
{
    int r = block.rank;
    Sem bp = {
        .kind = SEM_TUPLE, .block_ptr = true, .type = block, .cv = order, .nelems = 1 + 3 * r};
    bp.elems = arena_alloc(s->a, (size_t)bp.nelems * sizeof(Sem));
    bp.elems[0] = sem_value(type_ptr(block.dtype));
    for (int d = 0; d < r; d++) {
        bp.elems[1 + d] = sem_value(type_scalar(DT_I64));
        bp.elems[1 + r + d] = sem_value(type_scalar(DT_I64));
        bp.elems[1 + 2 * r + d] = sem_value(type_scalar(DT_I32));
    }
    return bp;
}

/* The base (argument 0, a scalar pointer) and block_shape (argument block_i) of a block pointer
 * or tensor descriptor: *block is the block of pointers a tile of it addresses. */
static bool tile_base_block(Sema *s, Expr *call, int block_i, const char *fname, Type *block)
{
    Type base;
    if (!value_arg(s, call, 0, fname, "base", &base))
        return false;
    if (!base.is_ptr || base.rank != 0) {
        diag_error(s->diag, arg_loc(call, 0), "%s's base must be a scalar pointer, got %s", fname,
                   tstr(s, base));
        return false;
    }
    if (!shape_arg(s, call, block_i, fname, block))
        return false;
    if (block->rank < 1) {
        diag_error(s->diag, arg_loc(call, block_i), "%s's block_shape needs at least one dimension",
                   fname);
        return false;
    }
    block->is_ptr = true;
    block->dtype = base.dtype;
    return true;
}

/* padding_option (argument i): None, "" or "zero" (zero), "nan" (NaN, float tiles only). */
static bool padding_arg(Sema *s, Expr *call, int i, const char *fname, DType dt, const char **out)
{
    Expr *p = arg(call, i);
    *out = "zero";
    if (!p || arg_is_none(call, i))
        return true;
    bool str = p->sem.kind == SEM_CONST && p->sem.cv.kind == CV_STR;
    if (!str ||
        (strcmp(p->sem.cv.s, "") && strcmp(p->sem.cv.s, "zero") && strcmp(p->sem.cv.s, "nan"))) {
        if (!is_error(p->sem))
            diag_error(s->diag, arg_loc(call, i),
                       "%s's padding_option must be \"zero\" or \"nan\", "
                       "got %s",
                       fname, sem_describe(s, p->sem));
        return false;
    }
    if (!strcmp(p->sem.cv.s, "nan") && !dtype_is_float(dt)) {
        diag_error(s->diag, arg_loc(call, i),
                   "%s: padding_option \"nan\" needs a float tile, got %s", fname, dtype_name(dt));
        return false;
    }
    if (!strcmp(p->sem.cv.s, "nan"))
        *out = "nan";
    return true;
}

/* tl.make_block_ptr(base, shape, strides, offsets, block_shape, order). */
static Sem make_block_ptr_builtin(Sema *s, Expr *call, const char *fname)
{
    Type block;
    if (!tile_base_block(s, call, 4, fname, &block))
        return sem_error();
    int r = block.rank;
    static const char *const what[3] = {"shape", "strides", "offsets"};
    for (int i = 1; i <= 3; i++)
        if (!int_tuple_arg(s, call, i, fname, what[i - 1], &r))
            return sem_error();
    Expr *ord = arg(call, 5);
    if (!ord || is_error(ord->sem))
        return sem_error();
    bool perm =
        ord->sem.kind == SEM_CONST && ord->sem.cv.kind == CV_TUPLE && ord->sem.cv.tuple.n == r;
    bool seen[TRIC_MAX_RANK] = {false};
    for (int d = 0; perm && d < r; d++) {
        const ConstVal *o = &ord->sem.cv.tuple.elems[d];
        perm = o->kind == CV_INT && o->i >= 0 && o->i < r && !seen[o->i];
        if (perm)
            seen[o->i] = true;
    }
    if (!perm) {
        diag_error(s->diag, arg_loc(call, 5),
                   "%s's order must be a constexpr permutation of 0..%d, "
                   "got %s",
                   fname, r - 1, sem_describe(s, ord->sem));
        return sem_error();
    }
    return block_ptr_sem(s, block, ord->sem.cv);
}

/* tl.advance(base, offsets): the block pointer moved by offsets (one int per dimension). */
static Sem advance_builtin(Sema *s, Expr *call, const char *fname)
{
    Expr *b = arg(call, 0);
    if (!b || is_error(b->sem))
        return sem_error();
    if (!is_block_ptr(b->sem)) {
        diag_error(s->diag, arg_loc(call, 0),
                   "%s needs a block pointer (tl.make_block_ptr), got %s", fname,
                   sem_describe(s, b->sem));
        return sem_error();
    }
    int r = b->sem.type.rank;
    if (!int_tuple_arg(s, call, 1, fname, "offsets", &r))
        return sem_error();
    return block_ptr_sem(s, b->sem.type, b->sem.cv);
}

/* boundary_check (argument i): None, an int or a tuple of distinct dims of a rank-r block. */
static bool boundary_check_arg(Sema *s, Expr *call, int i, const char *fname, int r)
{
    if (arg_is_none(call, i))
        return true;
    Sem v = arg(call, i)->sem;
    if (is_error(v))
        return false;
    int n = v.kind == SEM_CONST && v.cv.kind == CV_TUPLE ? v.cv.tuple.n
            : v.kind == SEM_CONST && v.cv.kind == CV_INT ? 1
                                                         : -1;
    bool seen[TRIC_MAX_RANK] = {false};
    for (int k = 0; k < n; k++) {
        const ConstVal *d = v.cv.kind == CV_INT ? &v.cv : &v.cv.tuple.elems[k];
        if (d->kind != CV_INT || d->i < 0 || d->i >= r || seen[d->i]) {
            n = -1;
            break;
        }
        seen[d->i] = true;
    }
    if (n < 0) {
        diag_error(s->diag, arg_loc(call, i),
                   "%s's boundary_check must be a constexpr tuple of "
                   "distinct dimensions below %d, got %s",
                   fname, r, sem_describe(s, v));
        return false;
    }
    return true;
}

/* The checks load and store share for a block pointer: no mask (nor other), boundary_check. */
static bool block_ptr_access_args(Sema *s, Expr *call, const char *fname, int mask_i, int other_i,
                                  int check_i)
{
    int r = arg(call, 0)->sem.type.rank;
    for (int i = mask_i; i <= other_i; i++)
        if (!arg_is_none(call, i)) {
            diag_error(s->diag, arg_loc(call, i),
                       "%s: %s is not allowed with a block pointer; "
                       "use boundary_check",
                       fname, i == mask_i ? "mask" : "other");
            return false;
        }
    return boundary_check_arg(s, call, check_i, fname, r);
}

static Sem block_ptr_load(Sema *s, Expr *call, const char *fname)
{
    if (!block_ptr_access_args(s, call, fname, 1, 2, 3))
        return sem_error();
    Type bt = arg(call, 0)->sem.type;
    const char *pad;
    if (!padding_arg(s, call, 4, fname, bt.dtype, &pad))
        return sem_error();
    return sem_value(with_shape(bt.dtype, false, bt));
}

static Sem block_ptr_store(Sema *s, Expr *call, const char *fname)
{
    Type v;
    if (!value_arg(s, call, 1, fname, "value", &v))
        return sem_error();
    Type bt = arg(call, 0)->sem.type;
    if (v.is_ptr) {
        diag_error(s->diag, arg_loc(call, 1), "%s cannot store pointers (%s)", fname, tstr(s, v));
        return sem_error();
    }
    if (!broadcasts_to(v, bt)) {
        diag_error(s->diag, arg_loc(call, 1),
                   "%s's value of shape %s cannot be broadcast to the "
                   "block pointer's shape %s",
                   fname, shape_str(s, v), shape_str(s, bt));
        return sem_error();
    }
    if (!block_ptr_access_args(s, call, fname, 2, 2, 3))
        return sem_error();
    return sem_void();
}

/* A mask argument (index i) of load, store and the atomics: None, or int1 that broadcasts to
 * the pointer's shape p. */
static bool mask_arg(Sema *s, Expr *call, int i, const char *fname, Type p)
{
    if (arg_is_none(call, i))
        return true;
    Type m;
    if (!value_arg(s, call, i, fname, "mask", &m))
        return false;
    if (m.is_ptr || m.dtype != DT_I1) {
        diag_error(s->diag, arg_loc(call, i), "%s's mask must be int1 (a comparison), got %s",
                   fname, tstr(s, m));
        return false;
    }
    if (!broadcasts_to(m, p)) {
        diag_error(s->diag, arg_loc(call, i),
                   "%s's mask of shape %s cannot be broadcast to the pointer's shape %s", fname,
                   shape_str(s, m), shape_str(s, p));
        return false;
    }
    return true;
}

/* ---- tensor descriptors (tl.make_tensor_descriptor, desc.load, desc.store) ---------------------- */

static bool is_tensor_desc(Sem x) { return x.kind == SEM_TUPLE && x.tensor_desc; }

/* tl.make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero"): Triton's
 * rules for what TMA can take: the last dim contiguous (a constexpr last stride must be 1) and
 * the last block dim at least 16 bytes. */
static Sem make_tensor_desc_builtin(Sema *s, Expr *call, const char *fname)
{
    Type block;
    if (!tile_base_block(s, call, 3, fname, &block))
        return sem_error();
    int r = block.rank;
    if ((int64_t)block.shape[r - 1] * dtype_bytes(block.dtype) < 16) {
        diag_error(s->diag, arg_loc(call, 3),
                   "%s: the last block dimension must hold at least 16 "
                   "bytes, got %d elements of %s",
                   fname, block.shape[r - 1], dtype_name(block.dtype));
        return sem_error();
    }
    if (!int_tuple_arg(s, call, 1, fname, "shape", &r) ||
        !int_tuple_arg(s, call, 2, fname, "strides", &r))
        return sem_error();
    Sem strides = arg(call, 2)->sem;
    const ConstVal *last = strides.kind == SEM_CONST                ? &strides.cv.tuple.elems[r - 1]
                           : strides.elems[r - 1].kind == SEM_CONST ? &strides.elems[r - 1].cv
                                                                    : NULL;
    if (last && const_as_int(last) != 1) {
        diag_error(s->diag, arg_loc(call, 2),
                   "%s: the last dimension must be contiguous (stride "
                   "1), got stride %lld",
                   fname, (long long)const_as_int(last));
        return sem_error();
    }
    const char *pad;
    if (!padding_arg(s, call, 4, fname, block.dtype, &pad))
        return sem_error();
    Sem d = {.kind = SEM_TUPLE,
             .tensor_desc = true,
             .type = block,
             .nelems = 1 + 2 * r,
             .cv = {.kind = CV_STR, .s = pad}};
    d.elems = arena_alloc(s->a, (size_t)d.nelems * sizeof(Sem));
    d.elems[0] = sem_value(type_ptr(block.dtype));
    for (int i = 1; i < d.nelems; i++)
        d.elems[i] = sem_value(type_scalar(DT_I64));
    return d;
}

/* desc.load(offsets) / desc.store(offsets, value) (and tl.load_tensor_descriptor /
 * tl.store_tensor_descriptor): offsets one int per dim. */
static Sem desc_access_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Expr *d = arg(call, 0);
    if (!d || is_error(d->sem))
        return sem_error();
    if (!is_tensor_desc(d->sem)) {
        diag_error(s->diag, arg_loc(call, 0),
                   "%s needs a tensor descriptor "
                   "(tl.make_tensor_descriptor), got %s",
                   fname, sem_describe(s, d->sem));
        return sem_error();
    }
    Type bt = d->sem.type;
    int r = bt.rank;
    if (!int_tuple_arg(s, call, 1, fname, "offsets", &r))
        return sem_error();
    if (b == BI_DESC_LOAD)
        return sem_value(with_shape(bt.dtype, false, bt));
    Type v;
    if (!value_arg(s, call, 2, fname, "value", &v))
        return sem_error();
    if (v.is_ptr || !broadcasts_to(v, bt)) {
        diag_error(s->diag, arg_loc(call, 2),
                   "%s's value must be numbers that broadcast to the "
                   "descriptor's block %s, got %s",
                   fname, shape_str(s, bt), tstr(s, v));
        return sem_error();
    }
    return sem_void();
}

/* isinstance(obj, classinfo), a constexpr: tl.tensor_descriptor (a descriptor made in the
 * kernel; kernel parameters are never descriptors in tric) and tl.constexpr. */
static Sem isinstance_builtin(Sema *s, Expr *call, const char *fname)
{
    Expr *obj = arg(call, 0), *cls = arg(call, 1);
    if (!obj || !cls || is_error(obj->sem) || is_error(cls->sem))
        return sem_error();
    if (cls->sem.kind == SEM_BUILTIN && cls->sem.builtin == BI_TENSOR_DESC_TYPE)
        return sem_const((ConstVal){.kind = CV_BOOL, .b = is_tensor_desc(obj->sem)});
    if (cls->sem.kind == SEM_BUILTIN && cls->sem.builtin == BI_CONSTEXPR)
        return sem_const((ConstVal){.kind = CV_BOOL, .b = obj->sem.kind == SEM_CONST});
    diag_error(s->diag, arg_loc(call, 1),
               "%s: tric knows the classes tl.tensor_descriptor and "
               "tl.constexpr, got %s",
               fname, sem_describe(s, cls->sem));
    return sem_error();
}

static Sem load_builtin(Sema *s, Expr *call, const char *fname)
{
    if (arg(call, 0) && is_block_ptr(arg(call, 0)->sem))
        return block_ptr_load(s, call, fname);
    Type p;
    if (!value_arg(s, call, 0, fname, "pointer", &p))
        return sem_error();
    if (!p.is_ptr) {
        diag_error(s->diag, arg_loc(call, 0), "%s needs a pointer or a block of pointers, got %s",
                   fname, tstr(s, p));
        return sem_error();
    }
    bool ok = true;
    if (!mask_arg(s, call, 1, fname, p))
        ok = false;
    if (!arg_is_none(call, 2)) {
        Type o;
        if (!value_arg(s, call, 2, fname, "other", &o)) {
            ok = false;
        } else if (o.is_ptr) {
            diag_error(s->diag, arg_loc(call, 2), "%s's other must be a number, got %s", fname,
                       tstr(s, o));
            ok = false;
        } else if (!broadcasts_to(o, p)) {
            diag_error(s->diag, arg_loc(call, 2),
                       "%s's other of shape %s cannot be broadcast to "
                       "the pointer's shape %s",
                       fname, shape_str(s, o), shape_str(s, p));
            ok = false;
        }
        if (ok && arg_is_none(call, 1)) {
            /* Triton: `other` without `mask` is meaningless and rejected. */
            diag_error(s->diag, arg_loc(call, 2), "%s's other needs a mask", fname);
            ok = false;
        }
    }
    for (int i = 3; i <= 4; i++) {
        if (!arg_is_none(call, i)) {
            diag_error(s->diag, arg_loc(call, i),
                       "%s: %s applies to block pointers "
                       "(tl.make_block_ptr), not to a pointer or a block of pointers",
                       fname, i == 3 ? "boundary_check" : "padding_option");
            ok = false;
        }
    }
    for (int i = 5; i <= 6; i++) {
        Expr *x = arg(call, i);
        if (x && !arg_is_none(call, i) && !(x->sem.kind == SEM_CONST && x->sem.cv.kind == CV_STR)) {
            if (!is_error(x->sem))
                diag_error(s->diag, x->loc, "%s's %s must be a constexpr string", fname,
                           i == 5 ? "cache_modifier" : "eviction_policy");
            ok = false;
        }
    }
    bool vol;
    if (!arg_is_none(call, 7) && !const_bool_arg(s, call, 7, fname, "volatile", &vol))
        ok = false;
    if (!ok)
        return sem_error();
    return sem_value(with_shape(p.dtype, false, p));
}

static Sem store_builtin(Sema *s, Expr *call, const char *fname)
{
    if (arg(call, 0) && is_block_ptr(arg(call, 0)->sem))
        return block_ptr_store(s, call, fname);
    Type p, v;
    if (!value_arg(s, call, 0, fname, "pointer", &p) || !value_arg(s, call, 1, fname, "value", &v))
        return sem_error();
    if (!p.is_ptr) {
        diag_error(s->diag, arg_loc(call, 0), "%s needs a pointer or a block of pointers, got %s",
                   fname, tstr(s, p));
        return sem_error();
    }
    if (v.is_ptr) {
        diag_error(s->diag, arg_loc(call, 1), "%s cannot store pointers (%s)", fname, tstr(s, v));
        return sem_error();
    }
    if (!broadcasts_to(v, p)) {
        diag_error(s->diag, arg_loc(call, 1),
                   "%s's value of shape %s cannot be broadcast to the "
                   "pointer's shape %s",
                   fname, shape_str(s, v), shape_str(s, p));
        return sem_error();
    }
    if (!mask_arg(s, call, 2, fname, p))
        return sem_error();
    if (!arg_is_none(call, 3)) {
        diag_error(s->diag, arg_loc(call, 3),
                   "%s: boundary_check applies to block pointers "
                   "(tl.make_block_ptr), not to a pointer or a block of pointers",
                   fname);
        return sem_error();
    }
    return sem_void();
}

/* sem= and scope= of an atomic: None (the default) or one of Triton's strings. */
static bool atomic_string_arg(Sema *s, Expr *call, int i, const char *fname, const char *what,
                              bool is_sem)
{
    if (arg_is_none(call, i))
        return true;
    Expr *x = arg(call, i);
    if (is_error(x->sem))
        return false;
    const char *choices = is_sem ? "\"acquire\", \"release\", \"acq_rel\" or \"relaxed\""
                                 : "\"gpu\", \"cta\" or \"sys\"";
    if (x->sem.kind != SEM_CONST || x->sem.cv.kind != CV_STR) {
        diag_error(s->diag, arg_loc(call, i), "%s's %s must be a constexpr string (%s), got %s",
                   fname, what, choices, sem_describe(s, x->sem));
        return false;
    }
    MemSem ms;
    MemScope sc;
    if (is_sem ? !mem_sem_from_name(x->sem.cv.s, &ms) : !mem_scope_from_name(x->sem.cv.s, &sc)) {
        diag_error(s->diag, arg_loc(call, i), "%s's %s must be %s, got \"%s\"", fname, what,
                   choices, x->sem.cv.s);
        return false;
    }
    return true;
}

/* tl.atomic_{add,max,min,and,or,xor,xchg}(pointer, val, mask, sem, scope) and
 * tl.atomic_cas(pointer, cmp, val, sem, scope), with Triton's rules (semantic.py
 * atom_red_typechecking_impl, atomic_max, atomic_cas): val (and cmp) and mask broadcast to the
 * pointer's shape and val is cast to the pointee; 32- and 64-bit elements, fp16 and bf16 only for
 * add; max and min on ints, fp32 and fp64; and/or/xor on ints; cas on 16, 32 or 64 bits. The
 * result is the old values, in the pointer's shape. */
static Sem atomic_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    bool cas = b == BI_ATOMIC_CAS;
    Type p;
    if (!value_arg(s, call, 0, fname, "pointer", &p))
        return sem_error();
    if (!p.is_ptr) {
        diag_error(s->diag, arg_loc(call, 0), "%s needs a pointer or a block of pointers, got %s",
                   fname, tstr(s, p));
        return sem_error();
    }
    DType dt = p.dtype;
    int bits = dtype_bits(dt);
    bool ok = true;
    if (cas) {
        if (bits != 16 && bits != 32 && bits != 64) {
            diag_error(s->diag, arg_loc(call, 0),
                       "%s supports elements of 16, 32 or 64 bits, got %s", fname, dtype_name(dt));
            return sem_error();
        }
    } else if ((dt == DT_F16 || dt == DT_BF16) && b != BI_ATOMIC_ADD) {
        diag_error(s->diag, arg_loc(call, 0), "%s does not support %s (only atomic_add does)",
                   fname, dtype_name(dt));
        return sem_error();
    } else if (bits < 16 || dt == DT_I16 || dt == DT_U16) {
        diag_error(s->diag, arg_loc(call, 0),
                   "%s does not support %s elements (32- and 64-bit "
                   "ints and floats; fp16 and bf16 for atomic_add)",
                   fname, dtype_name(dt));
        return sem_error();
    } else if (dtype_is_float(dt) &&
               (b == BI_ATOMIC_AND || b == BI_ATOMIC_OR || b == BI_ATOMIC_XOR)) {
        diag_error(s->diag, arg_loc(call, 0), "%s needs integer elements, got %s", fname,
                   dtype_name(dt));
        return sem_error();
    }
    int nvals = cas ? 2 : 1;
    for (int i = 1; i <= nvals; i++) {
        const char *what = cas && i == 1 ? "cmp" : "val";
        Type v;
        if (!value_arg(s, call, i, fname, what, &v)) {
            ok = false;
        } else if (v.is_ptr) {
            diag_error(s->diag, arg_loc(call, i), "%s's %s must be a number, got %s", fname, what,
                       tstr(s, v));
            ok = false;
        } else if (!broadcasts_to(v, p)) {
            diag_error(s->diag, arg_loc(call, i),
                       "%s's %s of shape %s cannot be broadcast to the "
                       "pointer's shape %s",
                       fname, what, shape_str(s, v), shape_str(s, p));
            ok = false;
        }
    }
    if (!cas && !mask_arg(s, call, 2, fname, p))
        ok = false;
    /* sem and scope are parameters 3 and 4 of both signatures */
    if (!atomic_string_arg(s, call, 3, fname, "sem", true))
        ok = false;
    if (!atomic_string_arg(s, call, 4, fname, "scope", false))
        ok = false;
    if (!ok)
        return sem_error();
    return sem_value(with_shape(dt, false, p));
}

static Sem math_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
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
    switch (b) {
    case BI_ABS: return sem_value(t);
    case BI_SIGMOID:
        if (!dtype_is_float(t.dtype)) {
            diag_error(s->diag, arg_loc(call, 0), "%s needs a float input, got %s", fname,
                       tstr(s, t));
            return sem_error();
        }
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

static Sem cast_builtin(Sema *s, Expr *call, const char *fname)
{
    Type t, target;
    if (!value_arg(s, call, 0, fname, "input", &t) || !cast_target_arg(s, call, 1, fname, &target))
        return sem_error();
    DType to = target.dtype;
    bool bitcast = false;
    if (!arg_is_none(call, 3) && !const_bool_arg(s, call, 3, fname, "bitcast", &bitcast))
        return sem_error();
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

static Sem shape_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
{
    Type t;
    if (!value_arg(s, call, 0, fname, "input", &t))
        return sem_error();
    switch (b) {
    case BI_BROADCAST_TO: {
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
    case BI_RESHAPE:
    case BI_VIEW: {
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
    case BI_EXPAND_DIMS: {
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
        Type r = type_elem(t);
        r.rank = (uint8_t)(t.rank + 1);
        for (int i = 0, src = 0; i < r.rank; i++)
            r.shape[i] = i == ax ? 1 : t.shape[src++];
        return sem_value(r);
    }
    case BI_TRANS:
    case BI_PERMUTE: {
        int perm[TRIC_MAX_RANK];
        if (t.rank < 2) {
            diag_error(s->diag, callee_loc(call), "%s needs a block of rank 2 or more, got %s",
                       fname, tstr(s, t));
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
                    diag_error(s->diag, d->loc, "%s's dims must be a constexpr tuple of %d ints",
                               fname, t.rank);
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
        for (int i = 0; i < t.rank; i++)
            r.shape[i] = t.shape[perm[i]];
        return sem_value(r);
    }
    default: return sem_error();
    }
}

/* Python's min / max: folded on constexprs; on run-time values they are tl.minimum/maximum
 * (Triton's code generator maps the builtins the same way). */
static Sem minmax_py(Sema *s, Expr *call, Builtin b)
{
    bool is_min = b == BI_MIN_PY;
    const char *fname = is_min ? "min()" : "max()";
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
    call->call.fn->sem.builtin = real; /* lower sees tl.minimum / tl.maximum */
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
         (cv.kind == CV_INT && (cv.i == PROPAGATE_NAN_ALL || cv.i == PROPAGATE_NAN_NONE))))
        return true;
    diag_error(s->diag, arg_loc(call, i),
               "%s's propagate_nan must be tl.PropagateNan.ALL or "
               "tl.PropagateNan.NONE, got %s",
               fname, sem_describe(s, p->sem));
    return false;
}

/* tl.clamp(x, min, max, propagate_nan=): Triton's semantic.clamp: x, min and max promoted to one
 * type and broadcast together (binary_op_type_checking_impl, pairwise), which must be a float. */
static Sem clamp_builtin(Sema *s, Expr *call, const char *fname)
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
static Sem swizzle2d_builtin(Sema *s, Expr *call, const char *fname)
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
 * signbit. fp16 and bf16 are accepted and computed in fp32 (lowering), as tric's math ops. */
static Sem libdevice_builtin(Sema *s, Expr *call, LibdeviceFn fn, const char *fname)
{
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
    if (info->result == LDR_PRED) {
        DType cd = v.compute_dtype;
        v = sem_value(with_shape(DT_I1, false, v.type));
        v.compute_dtype = cd;
    }
    return v;
}

static Sem dot_scaled_builtin(Sema *s, Expr *call, const char *fname); /* at the end */

static Sem builtin_call(Sema *s, Expr *call, Builtin b, Expr *receiver)
{
    if (b == BI_MIN_PY || b == BI_MAX_PY)
        return minmax_py(s, call, b);
    if (!bind_builtin_args(s, call, b, receiver))
        return sem_error();
    settle_synthetic(s, call);
    const char *fname =
        receiver ? callee_display(s, call, b) : arena_printf(s->a, "%s()", builtin_name(b));
    if (call->call.fn->kind == EX_NAME || b == BI_LIBDEVICE1 || b == BI_LIBDEVICE2)
        fname = callee_display(s, call, b);
    switch (b) {
    case BI_PROGRAM_ID:
    case BI_NUM_PROGRAMS: {
        int64_t axis;
        if (!const_int_arg(s, call, 0, fname, "axis", &axis))
            return sem_error();
        if (axis < 0 || axis > 2) {
            diag_error(s->diag, arg_loc(call, 0), "%s's axis must be 0, 1 or 2, got %lld", fname,
                       (long long)axis);
            return sem_error();
        }
        return sem_value(type_scalar(DT_I32));
    }
    case BI_ARANGE: {
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
        int32_t n = (int32_t)(hi - lo);
        return sem_value(type_block(type_scalar(DT_I32), 1, &n));
    }
    case BI_ZEROS:
    case BI_FULL: {
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
    case BI_CDIV: {
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
    case BI_MINIMUM:
    case BI_MAXIMUM:
        if (!propagate_nan_arg(s, call, 2, fname))
            return sem_error();
        return elementwise2(s, call, fname, 0, 1, false, false);
    case BI_WHERE: {
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
    case BI_MAKE_BLOCK_PTR: return make_block_ptr_builtin(s, call, fname);
    case BI_ADVANCE: return advance_builtin(s, call, fname);
    case BI_MAKE_TENSOR_DESC: return make_tensor_desc_builtin(s, call, fname);
    case BI_DESC_LOAD:
    case BI_DESC_STORE: return desc_access_builtin(s, call, b, fname);
    case BI_ISINSTANCE: return isinstance_builtin(s, call, fname);
    case BI_TENSOR_DESC_TYPE:
        diag_error(s->diag, callee_loc(call),
                   "tl.tensor_descriptor is a type for isinstance; make "
                   "a descriptor with tl.make_tensor_descriptor");
        return sem_error();
    case BI_LOAD: return load_builtin(s, call, fname);
    case BI_STORE: return store_builtin(s, call, fname);
    case BI_ATOMIC_ADD:
    case BI_ATOMIC_MAX:
    case BI_ATOMIC_MIN:
    case BI_ATOMIC_AND:
    case BI_ATOMIC_OR:
    case BI_ATOMIC_XOR:
    case BI_ATOMIC_XCHG:
    case BI_ATOMIC_CAS: return atomic_builtin(s, call, b, fname);
    case BI_TO_TENSOR: {
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
    case BI_DOT: return dot_builtin(s, call, fname);
    case BI_DOT_SCALED: return dot_scaled_builtin(s, call, fname);
    case BI_SUM:
    case BI_MAX:
    case BI_MIN:
    case BI_ARGMAX:
    case BI_ARGMIN: return reduce_builtin(s, call, b, fname);
    case BI_CUMSUM:
    case BI_CUMPROD:
    case BI_ASSOCIATIVE_SCAN: return scan_builtin(s, call, b, fname);
    case BI_EXP:
    case BI_EXP2:
    case BI_LOG:
    case BI_LOG2:
    case BI_SQRT:
    case BI_RSQRT:
    case BI_ABS:
    case BI_SIN:
    case BI_COS:
    case BI_FLOOR:
    case BI_CEIL:
    case BI_SIGMOID: return math_builtin(s, call, b, fname);
    case BI_FMA: {
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
    case BI_UMULHI: return elementwise2(s, call, fname, 0, 1, false, true);
    case BI_CAST: return cast_builtin(s, call, fname);
    case BI_BROADCAST_TO:
    case BI_RESHAPE:
    case BI_VIEW:
    case BI_EXPAND_DIMS:
    case BI_TRANS:
    case BI_PERMUTE: return shape_builtin(s, call, b, fname);
    case BI_MULTIPLE_OF:
    case BI_MAX_CONTIGUOUS: {
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
        return sem_value(t);
    }
    case BI_STATIC_ASSERT: {
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
    case BI_STATIC_PRINT: return sem_void();
    case BI_DEVICE_ASSERT: {
        Expr *c = arg(call, 0);
        Type t;
        if (!value_arg(s, call, 0, fname, "condition", &t))
            return sem_error();
        if (t.is_ptr) {
            diag_error(s->diag, c->loc, "%s's condition cannot be a pointer", fname);
            return sem_error();
        }
        if (c->sem.kind == SEM_CONST && !const_truthy(&c->sem.cv)) {
            diag_error(s->diag, call->loc, "device_assert's condition is always false");
            return sem_error();
        }
        return sem_void();
    }
    case BI_RANGE:
    case BI_STATIC_RANGE:
        diag_error(s->diag, callee_loc(call), "%s may only be used as a for loop's iterable",
                   fname);
        return sem_error();
    case BI_CONSTEXPR: {
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
    case BI_NEXT_POWER_OF_2: {
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
    case BI_POINTER_TYPE: {
        DType dt;
        if (!dtype_arg(s, call, 0, fname, &dt))
            return sem_error();
        return sem_type(type_ptr(dt));
    }
    case BI_SWIZZLE2D: return swizzle2d_builtin(s, call, fname);
    case BI_CLAMP: return clamp_builtin(s, call, fname);
    case BI_DEBUG_BARRIER: return sem_void();
    case BI_LIBDEVICE1:
    case BI_LIBDEVICE2:
        return libdevice_builtin(s, call, (LibdeviceFn)call->call.fn->sem.libdevice_fn, fname);
    case BI_LEN:
    case BI_INT_PY:
    case BI_FLOAT_PY: {
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
            diag_error(s->diag, arg_loc(call, 0),
                       "float(): could not convert string to float: '%s'", cv.s);
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
    case BI_MIN_PY:
    case BI_MAX_PY:
    case BI_COUNT: break;
    }
    TRIC_INTERNAL(s->diag, "builtin_call: unhandled builtin %s", builtin_name(b));
    return sem_error();
}

/* Python's int.bit_length() on a constexpr int (`1 << (n - 1).bit_length()`); NULL-free: the
 * call's Sem. */
static Sem bit_length_call(Sema *s, Expr *e)
{
    Sem x = expr(s, e->call.fn->attr.obj);
    if (is_error(x))
        return x;
    if (x.kind != SEM_CONST || (x.cv.kind != CV_INT && x.cv.kind != CV_BOOL)) {
        diag_error(s->diag, e->call.fn->attr.name_loc, "bit_length() needs a constexpr int, got %s",
                   sem_describe(s, x));
        return sem_error();
    }
    int64_t v = const_as_int(&x.cv);
    uint64_t m = v < 0 ? -(uint64_t)v : (uint64_t)v;
    int bits = 0;
    for (; m; m >>= 1)
        bits++;
    return sem_int(bits);
}

/* Triton's dtype predicates (dtype.is_floating(), .is_int_signed(), ...): constexpr bools, which
 * FlagGems' get_dtype_min/get_dtype_max branch on. */
static bool is_dtype_predicate(const char *name)
{
    static const char *const names[] = {"is_floating",
                                        "is_int",
                                        "is_int_signed",
                                        "is_int_unsigned",
                                        "is_bool",
                                        "is_fp8",
                                        "is_fp16",
                                        "is_bf16",
                                        "is_fp32",
                                        "is_fp64",
                                        "is_ptr",
                                        "is_block",
                                        "is_standard_floating"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(name, names[i]))
            return true;
    return false;
}

static Sem dtype_predicate_call(Sema *s, Expr *e)
{
    const char *name = e->call.fn->attr.name;
    Sem x = expr(s, e->call.fn->attr.obj);
    if (is_error(x))
        return x;
    if (x.kind != SEM_CONST || (x.cv.kind != CV_DTYPE && x.cv.kind != CV_TYPE)) {
        diag_error(s->diag, e->call.fn->attr.name_loc,
                   "%s() needs a dtype (x.dtype, tl.float16), "
                   "got %s",
                   name, sem_describe(s, x));
        return sem_error();
    }
    Type t = x.cv.kind == CV_TYPE ? x.cv.type : type_scalar(x.cv.dtype);
    DType d = t.dtype;
    bool num = !t.is_ptr && t.rank == 0, r = false;
    if (!strcmp(name, "is_ptr"))
        r = t.is_ptr && t.rank == 0;
    else if (!strcmp(name, "is_block"))
        r = t.rank > 0;
    else if (!strcmp(name, "is_floating"))
        r = num && dtype_is_float(d);
    else if (!strcmp(name, "is_standard_floating"))
        r = num && (d == DT_F16 || d == DT_BF16 || d == DT_F32 || d == DT_F64);
    else if (!strcmp(name, "is_int"))
        r = num && dtype_is_int(d);
    else if (!strcmp(name, "is_int_signed"))
        r = num && dtype_is_int(d) && dtype_kind(d) == DK_INT;
    else if (!strcmp(name, "is_int_unsigned"))
        r = num && dtype_kind(d) == DK_UINT;
    else if (!strcmp(name, "is_bool"))
        r = num && d == DT_I1;
    else if (!strcmp(name, "is_fp8"))
        r = num && dtype_is_float(d) && dtype_bits(d) == 8;
    else if (!strcmp(name, "is_fp16"))
        r = num && d == DT_F16;
    else if (!strcmp(name, "is_bf16"))
        r = num && d == DT_BF16;
    else if (!strcmp(name, "is_fp32"))
        r = num && d == DT_F32;
    else if (!strcmp(name, "is_fp64"))
        r = num && d == DT_F64;
    return sem_bool(r);
}

static Sem call_expr(Sema *s, Expr *e)
{
    Expr *fn = e->call.fn;
    if (fn->kind == EX_ATTR && fn->attr.name && !strcmp(fn->attr.name, "bit_length") &&
        e->call.nargs == 0 && e->call.nkwargs == 0)
        return bit_length_call(s, e);
    if (fn->kind == EX_ATTR && fn->attr.name && is_dtype_predicate(fn->attr.name) &&
        e->call.nargs == 0 && e->call.nkwargs == 0)
        return dtype_predicate_call(s, e);
    Sem f = expr(s, fn);
    const char *saved_ctx = s->tuple_ctx;
    s->tuple_ctx = NULL;
    if (f.kind == SEM_BUILTIN &&
        (f.builtin == BI_ZEROS || f.builtin == BI_FULL || f.builtin == BI_RESHAPE ||
         f.builtin == BI_VIEW || f.builtin == BI_BROADCAST_TO))
        s->tuple_ctx = arena_printf(s->a, "%s's shape", callee_display(s, e, (Builtin)f.builtin));
    bool args_ok = analyse_args(s, e);
    s->tuple_ctx = saved_ctx;
    if (is_error(f))
        return f;
    if (f.kind == SEM_BUILTIN) {
        if (!args_ok)
            return sem_error();
        Expr *receiver = NULL;
        if (fn->kind == EX_ATTR &&
            (fn->attr.obj->sem.kind == SEM_VALUE ||
             (fn->attr.obj->sem.kind == SEM_TUPLE && fn->attr.obj->sem.tensor_desc)))
            receiver = fn->attr.obj;
        return builtin_call(s, e, (Builtin)f.builtin, receiver);
    }
    if (f.kind == SEM_FUNC) {
        if (!args_ok)
            return sem_error();
        if (f.func->is_constexpr_fn)
            return constexpr_call(s, e, f.func, callee_loc(e));
        return inline_call(s, e, f.func, callee_loc(e));
    }
    diag_error(s->diag, callee_loc(e), "%s is not callable", sem_describe(s, f));
    return sem_error();
}

/* ---- expressions ------------------------------------------------------------------------------ */

static Sem expr(Sema *s, Expr *e)
{
    if (!e)
        return sem_error();
    Sem r;
    switch (e->kind) {
    case EX_INT: r = sem_int(e->ival); break;
    case EX_FLOAT: r = sem_float(e->fval); break;
    case EX_BOOL: r = sem_bool(e->bval); break;
    case EX_NONE: r = sem_const((ConstVal){.kind = CV_NONE}); break;
    case EX_STR: r = sem_const((ConstVal){.kind = CV_STR, .s = e->str ? e->str : ""}); break;
    case EX_NAME: r = name_expr(s, e); break;
    case EX_ATTR: r = attr_expr(s, e); break;
    case EX_CALL: r = call_expr(s, e); break;
    case EX_SUBSCRIPT: r = subscript_expr(s, e); break;
    case EX_SLICE:
        diag_error(s->diag, e->loc, "a slice is only allowed inside [ ]");
        r = sem_error();
        break;
    case EX_TUPLE:
    case EX_LIST: r = tuple_expr(s, e); break;
    case EX_DICT:
        diag_error(s->diag, e->loc, "dicts are not supported in kernels");
        r = sem_error();
        break;
    case EX_LAMBDA:
        diag_error(s->diag, e->loc,
                   "'lambda' is only supported in @triton.heuristics values; "
                   "define a @triton.jit helper function instead");
        r = sem_error();
        break;
    case EX_BINARY: r = binary_expr(s, e); break;
    case EX_UNARY: r = unary_expr(s, e); break;
    case EX_TERNARY: r = ternary_expr(s, e); break;
    default:
        diag_error(s->diag, e->loc, "unsupported expression");
        r = sem_error();
        break;
    }
    /* x.T keeps the BI_TRANS marker in builtin; everything else carries no builtin unless it
     * is SEM_BUILTIN. */
    e->sem = r;
    return r;
}

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
        if (v.kind == SEM_CONST && v.cv.kind == CV_TUPLE) {
            if (v.cv.tuple.n != t->list.n) {
                diag_error(s->diag, t->loc, "cannot unpack %d values into %d names", v.cv.tuple.n,
                           t->list.n);
                for (int i = 0; i < t->list.n; i++)
                    assign_target(s, t->list.elts[i], sem_error(), value_loc);
                return;
            }
            t->sem = v;
            for (int i = 0; i < t->list.n; i++)
                assign_target(s, t->list.elts[i], sem_const(v.cv.tuple.elems[i]), value_loc);
            return;
        }
        if (v.kind == SEM_TUPLE) {
            if (v.nelems != t->list.n) {
                diag_error(s->diag, t->loc, "cannot unpack %d values into %d names", v.nelems,
                           t->list.n);
                for (int i = 0; i < t->list.n; i++)
                    assign_target(s, t->list.elts[i], sem_error(), value_loc);
                return;
            }
            t->sem = v;
            for (int i = 0; i < t->list.n; i++)
                assign_target(s, t->list.elts[i], v.elems[i], value_loc);
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

static void stmt(Sema *s, Stmt *st, bool tail)
{
    if (!st)
        return;
    switch (st->kind) {
    case ST_EXPR: expr(s, st->expr.value); break;
    case ST_ASSIGN: {
        Sem v = expr(s, st->assign.value);
        if (st->assign.annotation) {
            Sem a = expr(s, st->assign.annotation);
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

static void block(Sema *s, Block *b, bool tail)
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

/* ---- helpers: inlining ------------------------------------------------------------------------ */

static bool annotation_is_constexpr(Sema *s, Expr *ann);

/* Analyses an expression of the module scope (a default value, a global) in a fresh context. */
static Sem global_expr(Sema *s, Expr *e)
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
static Expr **bind_call_args(Sema *s, Expr *call, const FuncDef *callee, const char *shown,
                             SrcLoc cloc)
{
    int np = callee->nparams;
    Expr **bound = arena_alloc(s->a, (size_t)(np ? np : 1) * sizeof *bound);
    if (call->call.nargs > np) {
        diag_error(s->diag, cloc, "%s takes %d %s but %d %s given", shown, np,
                   plural(np, "argument", "arguments"), call->call.nargs,
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

static Sem inline_call(Sema *s, Expr *call, FuncDef *callee, SrcLoc cloc)
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
        if (!bound[i]) {
            if (!p->default_value) {
                diag_error(s->diag, cloc, "%s missing required argument '%s'", shown, p->name);
                return sem_error();
            }
            bound[i] = p->default_value;
            if (is_error(global_expr(s, bound[i])))
                return sem_error();
        }
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

/* ---- constexpr functions: @triton.constexpr_function helpers, run at compile time ----------- */

/* Triton calls such a helper in Python on the unwrapped constexpr arguments. tric evaluates the
 * subset real kernels use: assignments, `op=`, if/elif/else and return, over expressions that
 * sema folds on constexprs (arithmetic, comparisons, `x if c else y`, min/max,
 * triton.next_power_of_2, triton.cdiv, int.bit_length()); anything else is an error at it. */
typedef struct CxCall {
    const char *name;
    bool returned;
    Sem ret;
} CxCall;

static bool cx_value(Sema *s, const CxCall *cc, Expr *e, Sem *out)
{
    Sem v = expr(s, e);
    if (is_error(v))
        return false;
    if (v.kind != SEM_CONST) {
        diag_error(s->diag, expr_start(e),
                   "constexpr function '%s' computes only on constexprs; "
                   "this is %s",
                   cc->name, sem_describe(s, v));
        return false;
    }
    *out = v;
    return true;
}

static bool cx_block(Sema *s, CxCall *cc, Block *b);

static bool cx_stmt(Sema *s, CxCall *cc, Stmt *st)
{
    const char *what = "this statement";
    switch (st->kind) {
    case ST_PASS: return true;
    case ST_EXPR:
        if (st->expr.value && st->expr.value->kind == EX_STR)
            return true; /* a string statement: a comment */
        what = "an expression statement";
        break;
    case ST_RETURN:
        cc->ret = sem_const((ConstVal){.kind = CV_NONE});
        if (st->ret.value && !cx_value(s, cc, st->ret.value, &cc->ret))
            return false;
        cc->returned = true;
        return true;
    case ST_ASSIGN: {
        Sem v;
        if (!cx_value(s, cc, st->assign.value, &v))
            return false;
        for (int k = 0; k < st->assign.ntargets; k++) {
            Expr *t = st->assign.targets[k];
            if (t->kind != EX_NAME) {
                diag_error(s->diag, expr_start(t),
                           "constexpr function '%s' assigns only to "
                           "names",
                           cc->name);
                return false;
            }
            t->sem = v;
            env_set(s, &s->fn->env, t->str, v, t->loc);
        }
        return true;
    }
    case ST_AUGASSIGN: {
        Sem cur, v;
        if (st->aug.target->kind != EX_NAME) {
            diag_error(s->diag, expr_start(st->aug.target),
                       "constexpr function '%s' assigns only "
                       "to names",
                       cc->name);
            return false;
        }
        if (!cx_value(s, cc, st->aug.target, &cur) || !cx_value(s, cc, st->aug.value, &v))
            return false;
        Sem r = fold_binary(s, st->loc, st->aug.op, cur.cv, v.cv);
        if (is_error(r))
            return false;
        env_set(s, &s->fn->env, st->aug.target->str, r, st->aug.target->loc);
        return true;
    }
    case ST_IF: {
        Sem c;
        if (!cx_value(s, cc, st->if_.cond, &c))
            return false;
        st->if_.static_taken = const_truthy(&c.cv);
        return cx_block(s, cc, st->if_.static_taken ? &st->if_.then : &st->if_.els);
    }
    case ST_FOR: what = "a 'for' loop"; break;
    case ST_WHILE: what = "a 'while' loop"; break;
    case ST_ASSERT: what = "an assert"; break;
    case ST_DEF: what = "a nested def"; break;
    case ST_IMPORT: what = "an import"; break;
    default: break;
    }
    diag_error(s->diag, st->loc,
               "constexpr function '%s': %s is not supported (tric evaluates "
               "assignments, if/else and return on constexprs)",
               cc->name, what);
    return false;
}

static bool cx_block(Sema *s, CxCall *cc, Block *b)
{
    for (int i = 0; i < b->n && !cc->returned; i++)
        if (!cx_stmt(s, cc, b->stmts[i]))
            return false;
    return true;
}

/* A call of a constexpr function: every argument a constexpr; the result, a constexpr (None when
 * the body returns nothing, as in Python). */
static Sem constexpr_call(Sema *s, Expr *call, FuncDef *callee, SrcLoc cloc)
{
    const char *name = callee->name ? callee->name : "?";
    for (int i = 0; i < s->inline_depth; i++)
        if (s->inline_stack[i] == callee) {
            diag_error(s->diag, cloc, "recursive call of constexpr function '%s' is not supported",
                       name);
            return sem_error();
        }
    if (!expand(s, cloc))
        return sem_error();
    if (s->inline_depth >= MAX_INLINE_DEPTH) {
        diag_error(s->diag, cloc, "helpers nest more than %d deep", MAX_INLINE_DEPTH);
        return sem_error();
    }
    Expr **bound = bind_call_args(s, call, callee, arena_printf(s->a, "%s()", name), cloc);
    if (!bound)
        return sem_error();
    FuncDef *clone = ast_clone_func(s->a, callee);
    FuncCtx ctx = {.func = clone, .is_kernel = false};
    for (int i = 0; i < clone->nparams; i++) {
        Param *p = &clone->params[i];
        if (!bound[i]) {
            if (!p->default_value) {
                diag_error(s->diag, cloc, "%s() missing required argument '%s'", name, p->name);
                return sem_error();
            }
            bound[i] = p->default_value;
            if (is_error(global_expr(s, bound[i])))
                return sem_error();
        }
        Sem v = bound[i]->sem;
        if (is_error(v))
            return sem_error();
        if (v.kind != SEM_CONST) {
            diag_error(s->diag, expr_start(bound[i]),
                       "'%s' is a constexpr function: argument "
                       "'%s' must be a constexpr, got %s",
                       name, p->name, sem_describe(s, v));
            return sem_error();
        }
        p->is_constexpr = true;
        p->sem = v;
        env_set(s, &ctx.env, p->name, v, p->loc);
    }
    CxCall cc = {.name = name};
    s->inline_stack[s->inline_depth++] = callee;
    FuncCtx *saved = s->fn;
    s->fn = &ctx;
    bool ok = cx_block(s, &cc, &clone->body);
    s->fn = saved;
    s->inline_depth--;
    if (!ok)
        return sem_error();
    return cc.returned ? cc.ret : sem_const((ConstVal){.kind = CV_NONE});
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

static bool annotation_is_constexpr(Sema *s, Expr *ann)
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
        *why = arena_printf(h->s->a, "which has no value yet: pass -D %s=...", name);
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
                        "so give '%s' a value yourself (-D %s=...) or make '%s' a tl.constexpr",
                        h->target, h->target, name);
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

Kernel *sema_specialize(const Module *m, const SpecOptions *opt, Arena *arena, Diag *diag)
{
    if (!m || !arena || !diag)
        return NULL;
    SpecOptions none = {0};
    if (!opt)
        opt = &none;
    Sema sema = {.module = m, .a = arena, .diag = diag};
    Sema *s = &sema;
    int errors_before = diag->errors;
    const FuncDef *src = find_kernel(s, m, opt->kernel_name);
    if (!src)
        return NULL;
    bind_globals(s, m);
    FuncDef *f = ast_clone_func(arena, src);
    if (!f)
        return NULL;
    int np = f->nparams;
    const char *kname = f->name ? f->name : "?";

    /* Which parameters are constexprs, and the annotation types of the others. */
    bool *is_cx = arena_alloc(arena, (size_t)(np ? np : 1) * sizeof *is_cx);
    Type *ann_type = arena_alloc(arena, (size_t)(np ? np : 1) * sizeof *ann_type);
    AnnKind *ann = arena_alloc(arena, (size_t)(np ? np : 1) * sizeof *ann);
    int nruntime = 0;
    for (int i = 0; i < np; i++) {
        Param *p = &f->params[i];
        p->divisibility = 1;
        p->equal_to_1 = false;
        ann[i] = annotation(s, p, &ann_type[i]);
        is_cx[i] = ann[i] == ANN_CONSTEXPR;
        p->is_constexpr = is_cx[i];
        nruntime += !is_cx[i];
    }

    /* -D values: each must name a constexpr parameter. */
    ConstVal *cx_val = arena_alloc(arena, (size_t)(np ? np : 1) * sizeof *cx_val);
    bool *cx_set = arena_alloc(arena, (size_t)(np ? np : 1) * sizeof *cx_set);
    for (int d = 0; d < opt->ndefines; d++) {
        const Define *def = &opt->defines[d];
        const char *dn = def->name ? def->name : "";
        int idx = -1;
        for (int i = 0; i < np; i++)
            if (f->params[i].name && !strcmp(f->params[i].name, dn))
                idx = i;
        if (idx < 0) {
            StrBuf cx = {0};
            for (int i = 0; i < np; i++)
                if (is_cx[i])
                    strbuf_printf(&cx, "%s%s", cx.len ? ", " : "", f->params[i].name);
            diag_error(diag, f->loc,
                       "-D %s: kernel '%s' has no constexpr parameter '%s' (its "
                       "constexprs: %s)",
                       dn, kname, dn, cx.data ? cx.data : "none");
            strbuf_free(&cx);
            continue;
        }
        if (!is_cx[idx]) {
            diag_error(diag, f->params[idx].loc,
                       "-D %s: parameter '%s' of kernel '%s' is not a "
                       "constexpr (annotate it ': tl.constexpr')",
                       dn, dn, kname);
            continue;
        }
        ConstVal cv;
        if (!const_from_string(def->value, &cv, arena)) {
            diag_error(diag, f->params[idx].loc,
                       "-D %s=%s: not a constexpr value (expected an "
                       "int, a float, True/False, None or a dtype such as tl.float16)",
                       dn, def->value ? def->value : "");
            continue;
        }
        cx_val[idx] = cv;
        cx_set[idx] = true;
    }

    /* The signature: one entry per run-time parameter, or one per parameter. */
    Type *sig_type = arena_alloc(arena, (size_t)(np ? np : 1) * sizeof *sig_type);
    bool *sig_set = arena_alloc(arena, (size_t)(np ? np : 1) * sizeof *sig_set);
    if (opt->signature) {
        SigEntry *ents;
        int n = signature_split(opt->signature, &ents, arena);
        bool all_form = n == np && n != nruntime;
        if (n != nruntime && !all_form) {
            diag_error(diag, f->loc,
                       "signature has %d %s but kernel '%s' has %d run-time "
                       "%s (%s)",
                       n, plural(n, "entry", "entries"), kname, nruntime,
                       plural(nruntime, "parameter", "parameters"),
                       runtime_param_list(s, f, is_cx));
        } else {
            for (int i = 0, e = 0; i < np; i++) {
                Param *p = &f->params[i];
                if (is_cx[i]) {
                    if (!all_form)
                        continue;
                    const char *text = ents[e++].text;
                    if (!*text)
                        continue;
                    ConstVal cv;
                    if (!const_from_string(text, &cv, arena)) {
                        diag_error(diag, p->loc,
                                   "signature entry %d ('%s') for constexpr '%s' is "
                                   "not a value",
                                   e, text, p->name);
                        continue;
                    }
                    if (!cx_set[i]) { /* -D wins */
                        cx_val[i] = cv;
                        cx_set[i] = true;
                    }
                    continue;
                }
                const char *text = ents[e++].text;
                int div;
                bool eq1;
                ConstVal cv;
                const char *why = signature_parse_type(text, &sig_type[i], &div, &eq1, arena);
                if (why) {
                    if (*text != '*' && const_from_string(text, &cv, arena) && cv.kind != CV_DTYPE)
                        diag_error(diag, p->loc,
                                   "signature entry %d is a value (%s), but "
                                   "parameter '%s' is not a constexpr",
                                   e, text, p->name);
                    else
                        diag_error(diag, p->loc, "signature entry %d ('%s') for '%s': %s", e, text,
                                   p->name, why);
                    continue;
                }
                sig_set[i] = true;
                p->divisibility = div;
                p->equal_to_1 = eq1;
            }
        }
    }

    /* @triton.heuristics: constexprs computed from the others (a value given wins). */
    bool *heur_failed = arena_alloc(arena, (size_t)(np ? np : 1) * sizeof *heur_failed);
    apply_heuristics(s, src, f, opt, is_cx, cx_val, cx_set, heur_failed);

    /* Bind every parameter. */
    Kernel *k = arena_alloc(arena, sizeof *k);
    k->module = m;
    k->func = f;
    k->args = arena_alloc(arena, (size_t)(nruntime ? nruntime : 1) * sizeof *k->args);
    FuncCtx ctx = {.func = f, .is_kernel = true};
    s->fn = &ctx;
    for (int i = 0; i < np; i++) {
        Param *p = &f->params[i];
        if (is_cx[i]) {
            if (!cx_set[i] && p->default_value) {
                Sem d = global_expr(s, p->default_value);
                if (!is_error(d) && d.kind != SEM_CONST) {
                    diag_error(diag, p->default_value->loc,
                               "the default of constexpr '%s' must be "
                               "a compile-time value",
                               p->name);
                } else if (!is_error(d)) {
                    cx_val[i] = d.cv;
                    cx_set[i] = true;
                }
                s->fn = &ctx;
            }
            if (!cx_set[i]) {
                if (!p->default_value && !heur_failed[i])
                    diag_error(diag, p->loc,
                               "constexpr parameter '%s' has no value: pass -D %s=...", p->name,
                               p->name);
                p->sem = sem_error();
            } else {
                p->sem = sem_const(cx_val[i]);
            }
            env_set(s, &ctx.env, p->name, p->sem, p->loc);
            continue;
        }
        k->args[k->nargs++] = p;
        Type t;
        if (sig_set[i]) {
            t = sig_type[i];
        } else if (ann[i] == ANN_TYPE && !opt->signature) {
            t = ann_type[i];
        } else {
            if (ann[i] != ANN_BAD && !opt->signature)
                /* The example type follows Triton's naming habit: x_ptr is a pointer, M an int. */
                diag_error(diag, p->loc,
                           "parameter '%s' has no type: annotate it (%s: \"%s\") "
                           "or pass --signature",
                           p->name, p->name, strstr(p->name, "ptr") ? "*fp32" : "i32");
            p->sem = sem_error();
            env_set(s, &ctx.env, p->name, p->sem, p->loc);
            continue;
        }
        if (k->nargs - 1 < opt->nlaunch_hints && p->divisibility == 1 && !p->equal_to_1)
            apply_launch_hint(p, t, opt->launch_hints[k->nargs - 1]);
        /* ":1": Triton specializes an int equal to 1 into the constant 1. */
        p->sem = p->equal_to_1 ? sem_int(1) : sem_value(t);
        if (p->equal_to_1)
            p->sem.type = t;
        env_set(s, &ctx.env, p->name, p->sem, p->loc);
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
static Sem dot_scaled_builtin(Sema *s, Expr *call, const char *fname)
{
    ScaledOperand l = {0}, r = {0};
    if (!scaled_operand(s, call, 0, 2, 8, fname, &l) ||
        !scaled_operand(s, call, 3, 5, 9, fname, &r))
        return sem_error();
    SrcLoc loc = callee_loc(call);
    /* Triton also takes two 3-D (batched) blocks; tric's dot op is 2-D so far, and the lowering
     * below is written for any rank, ready for it. */
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
    bool fast_math;
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
    if (!arg_is_none(call, 6)) {
        Type acc;
        if (!value_arg(s, call, 6, fname, "acc", &acc))
            return sem_error();
        if (!type_equal(acc, rt)) {
            diag_error(s->diag, arg_loc(call, 6), "%s's acc has type %s but the product is %s",
                       fname, tstr(s, acc), tstr(s, rt));
            return sem_error();
        }
    }
    return sem_value(rt);
}
