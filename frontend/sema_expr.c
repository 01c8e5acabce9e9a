/* sema_expr.c: expressions. Name resolution (locals, globals, tl / triton / libdevice modules),
 * attributes (tl.NAME, x.dtype, x.shape, x.T, methods), tuples, subscripts, ternaries, calls
 * (builtins, @jit helpers, constexpr functions, methods of constexprs) and expr(), the walk that
 * sets Expr.sem. */
#include "frontend/sema_internal.h"
#include "ir/ir.h" /* the libdevice functions (TRIC_LIBDEVICE_FNS), memory orders */

#include <math.h>
#include <string.h>

/* ---- name resolution ------------------------------------------------------------------------- */

bool is_module_name(const char *name)
{
    return !strcmp(name, "tl") || !strcmp(name, "triton") || !strcmp(name, "language") ||
           !strcmp(name, "math") || !strcmp(name, "libdevice") || !strcmp(name, "torch");
}

Sem sem_module(const char *path) { return (Sem){.kind = SEM_MODULE, .module = path}; }

/* The last component of a module path: "libdevice" for "tl.extra.cuda.libdevice". */
static const char *module_leaf(Sem m)
{
    const char *path = m.module ? m.module : "tl";
    const char *dot = strrchr(path, '.');
    return dot ? dot + 1 : path;
}

/* libdevice.NAME: a builtin whose Sem names the function. */
static Sem sem_libdevice(LibdeviceFn fn)
{
    const LibdeviceInfo *info = libdevice_info(fn);
    return (Sem){.kind = SEM_BUILTIN,
                 .builtin = info->nargs == 1 ? BI_LIBDEVICE1 : BI_LIBDEVICE2,
                 .libdevice_fn = fn};
}

/* tl.extra.cuda.NAME: the builtins only that module has (programmatic dependent launch,
 * Triton's tutorial 11). */
static bool cuda_builtin(const char *name, Builtin *out)
{
    static const Builtin cuda[] = {BI_GDC_WAIT, BI_GDC_LAUNCH_DEPENDENTS};
    for (size_t i = 0; i < sizeof cuda / sizeof *cuda; i++)
        if (!strcmp(builtin_name(cuda[i]), name)) {
            *out = cuda[i];
            return true;
        }
    return false;
}

/* tl.NAME: a builtin of the table (not the Python-only ones, the libdevice stand-ins, nor
 * tl.extra.cuda's own). */
static bool lookup_tl_builtin(const char *name, Builtin *out)
{
    Builtin cuda;
    for (int b = 0; b < BI_COUNT; b++) {
        if (b == BI_MIN_PY || b == BI_MAX_PY || b == BI_LEN || b == BI_INT_PY || b == BI_FLOAT_PY ||
            b == BI_ISINSTANCE || b == BI_LIBDEVICE1 || b == BI_LIBDEVICE2 ||
            cuda_builtin(builtin_name((Builtin)b), &cuda))
            continue;
        if (!strcmp(builtin_name((Builtin)b), name)) {
            *out = (Builtin)b;
            return true;
        }
    }
    return false;
}

/* A name and the builtin it calls, in the lookup tables below. */
typedef struct NamedBuiltin {
    const char *name;
    Builtin b;
} NamedBuiltin;

static bool find_named_builtin(const NamedBuiltin *table, size_t n, const char *name, Builtin *out)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(table[i].name, name)) {
            *out = table[i].b;
            return true;
        }
    return false;
}

/* Names Python gives every kernel: range, min, max, len, int, float, print, abs. */
static bool lookup_python_builtin(const char *name, Builtin *out)
{
    static const NamedBuiltin table[] = {
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
    return find_named_builtin(table, sizeof table / sizeof table[0], name, out);
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

const FuncDef *module_func(const Module *m, const char *name)
{
    for (int i = 0; i < m->nfuncs; i++)
        if (m->funcs[i] && m->funcs[i]->name && !strcmp(m->funcs[i]->name, name))
            return m->funcs[i];
    return NULL;
}

Sem name_expr(Sema *s, Expr *e)
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
        case HOST_DEFAULT: {
            if (b->failed_alias) {
                Expr *dflt = b->failed_alias;
                b->failed_alias = NULL; /* its own errors, once */
                FuncCtx ctx = {.env = s->globals}, *saved = s->fn;
                s->fn = &ctx;
                expr(s, dflt);
                s->fn = saved;
            }
            diag_error(s->diag, e->loc,
                       "constexpr parameter '%s' has no value: its default (line %d) is host "
                       "Python that does not evaluate at compile time; pass %s",
                       name, b->where.line, spec_define_wanted(s->opt, name, s->a));
            return sem_error();
        }
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
    static const NamedBuiltin table[] = {
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
        {"associative_scan", BI_ASSOCIATIVE_SCAN},
        {"reduce", BI_REDUCE},
        {"xor_sum", BI_XOR_SUM},
        {"trans", BI_TRANS},
        {"permute", BI_PERMUTE},
        {"reshape", BI_RESHAPE},
        {"ravel", BI_RAVEL},
        {"split", BI_SPLIT},
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
    return find_named_builtin(table, sizeof table / sizeof table[0], name, out);
}

/* ---- "did you mean": the nearest name a module offers, for an unknown member -------------- */

/* The optimal string alignment distance between a and b: insertions, deletions, substitutions
 * and swaps of two neighbours ("laod" is one step from "load"); more than 2 is reported as 3,
 * since nothing that far is suggested. */
static int name_distance(const char *a, const char *b)
{
    enum { FAR = 3, MAXLEN = 48 };
    size_t n = strlen(a), m = strlen(b);
    if (n >= MAXLEN || m >= MAXLEN || (n > m ? n - m : m - n) >= FAR)
        return FAR;
    int d[MAXLEN + 1][MAXLEN + 1];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m] < FAR ? d[n][m] : FAR;
}

typedef struct Nearest {
    const char *name; /* the unknown name */
    const char *best; /* the nearest candidate so far, NULL when none is within 2 */
    int distance;
} Nearest;

/* Keeps cand when it is nearer than the best so far: within 2 edits and one per three letters
 * of the name (so that "foo" does not become "fma"); the first of equals wins. */
static void nearest_consider(Nearest *n, const char *cand)
{
    int dist = name_distance(n->name, cand);
    int allowed = ((int)strlen(n->name) + 1) / 3;
    if (dist <= 2 && dist <= allowed && (!n->best || dist < n->distance)) {
        n->best = cand;
        n->distance = dist;
    }
}

static void nearest_libdevice(Nearest *n)
{
    for (int fn = 0; fn < LD_COUNT; fn++)
        nearest_consider(n, libdevice_info(fn)->name);
}

/* Every name tl.NAME resolves to: the table's builtins, the random library, the dtypes (only
 * the random library's under tl.random). */
static void nearest_tl(Nearest *n, bool random_only)
{
    Builtin bi;
    for (int b = 0; b < BI_COUNT && !random_only; b++)
        if (lookup_tl_builtin(builtin_name((Builtin)b), &bi) && bi == (Builtin)b)
            nearest_consider(n, builtin_name((Builtin)b));
    for (int i = 0; random_public_name(i); i++)
        nearest_consider(n, random_public_name(i));
    for (int t = 0; t < DT_COUNT && !random_only; t++)
        nearest_consider(n, dtype_name((DType)t));
}

/* Names from elsewhere (PyTorch, C) that users reach for, and Triton's name for each. */
static const char *tl_alias(const char *name)
{
    static const struct {
        const char *name, *tl;
    } aliases[] = {
        {"matmul", "dot"},   {"transpose", "trans"}, {"float", "float32"},
        {"half", "float16"}, {"double", "float64"},  {"int", "int32"},
        {"long", "int64"},   {"bool", "int1"},       {"bfloat", "bfloat16"},
    };
    for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++)
        if (!strcmp(aliases[i].name, name))
            return aliases[i].tl;
    return NULL;
}

/* "; did you mean 'tl.load'?" for the unknown member `name` of the module whose last component
 * is leaf, spelled `shown` in the source ("tl.laod"); "" when nothing is near. A libdevice
 * function asked of tl (tl.tanh) is pointed to where it lives. */
static const char *did_you_mean(Sema *s, const char *leaf, const char *name, const char *shown)
{
    size_t shown_len = strlen(shown), name_len = strlen(name);
    bool ends_in_name = shown_len > name_len && !strcmp(shown + shown_len - name_len, name);
    int prefix = ends_in_name ? (int)(shown_len - name_len) : 0; /* "tl." */
    LibdeviceFn fn;
    if (strcmp(leaf, "libdevice") && strcmp(leaf, "math") && libdevice_from_name(name, &fn))
        return arena_printf(s->a,
                            "; did you mean 'libdevice.%s' (from triton.language.extra import "
                            "libdevice) or '%.*smath.%s'?",
                            name, prefix, shown, name);
    Builtin cuda;
    if (strcmp(leaf, "cuda") && cuda_builtin(name, &cuda))
        return arena_printf(s->a, "; did you mean 'tl.extra.cuda.%s'?", name);
    const char *alias = strcmp(leaf, "libdevice") ? tl_alias(name) : NULL;
    if (alias)
        return arena_printf(s->a, "; did you mean '%.*s%s'?", prefix, shown, alias);
    Nearest n = {.name = name};
    if (!strcmp(leaf, "libdevice") || !strcmp(leaf, "math"))
        nearest_libdevice(&n);
    if (strcmp(leaf, "libdevice"))
        nearest_tl(&n, !strcmp(leaf, "random"));
    return n.best ? arena_printf(s->a, "; did you mean '%.*s%s'?", prefix, shown, n.best) : "";
}

/* The dotted name an expression spells ("libdevice.asin", "tl.extra.cuda.libdevice.erf"), or
 * NULL when it is not a chain of names. */
const char *dotted_text(Sema *s, const Expr *e)
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
static bool torch_dtype(const char *name, DType *out);

Sem module_member(Sema *s, Sem mod, const char *name, const char *shown, SrcLoc loc)
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
    if (mod.module && !strcmp(mod.module, "math")) { /* `import math`: Python's constants */
        static const struct {
            const char *name;
            double value;
        } constants[] = {
            {"pi", M_PI}, {"e", M_E}, {"tau", 2 * M_PI}, {"inf", INFINITY}, {"nan", NAN}};
        for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++)
            if (!strcmp(name, constants[i].name))
                return sem_float(constants[i].value);
    }
    if (!strcmp(leaf, "torch")) { /* host code's torch: its dtypes (torch.float16) */
        DType td;
        if (torch_dtype(name, &td))
            return sem_const((ConstVal){.kind = CV_DTYPE, .dtype = td});
        diag_error(s->diag, loc,
                   "'%s' is torch (host Python); tric reads only its dtypes and "
                   "torch.finfo/iinfo(...).min/max",
                   shown);
        return sem_error();
    }
    if (!strcmp(leaf, "libdevice")) {
        if (libdevice_from_name(name, &fn))
            return sem_libdevice(fn);
        diag_error(s->diag, loc, "unknown libdevice function '%s'%s", shown,
                   did_you_mean(s, leaf, name, shown));
        return sem_error();
    }
    /* triton.language's submodules core and standard (FlagGems' `import triton.language.core as
     * core`, `from triton.language.standard import _log2`) hold its builtins, as tl does */
    if (is_module_name(name) || !strcmp(name, "extra") || !strcmp(name, "cuda") ||
        !strcmp(name, "PropagateNan") || !strcmp(name, "random") || !strcmp(name, "core") ||
        !strcmp(name, "standard"))
        return sem_module(path);
    Builtin bi;
    if (strcmp(leaf, "random") && lookup_tl_builtin(name, &bi))
        return (Sem){.kind = SEM_BUILTIN, .builtin = bi};
    if (!strcmp(leaf, "cuda") && cuda_builtin(name, &bi))
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
    /* Triton 3's tl.erf, tl.sqrt_rn and tl.div_rn (language/math.py) are the libdevice
     * functions of those names (__nv_erff, __nv_fsqrt_rn's IEEE sqrt, __nv_fdiv_rn). */
    if ((!strcmp(name, "erf") || !strcmp(name, "sqrt_rn") || !strcmp(name, "div_rn")) &&
        libdevice_from_name(!strcmp(name, "sqrt_rn") ? "sqrt" : name, &fn))
        return sem_libdevice(fn);
    if (!strncmp(name, "_experimental_", 14) && strstr(name, "descriptor")) {
        /* Triton 3.2's TMA API (tutorial 09 of that time): the descriptor is a CUtensorMap the
         * host fills, which tric's tiles do not read */
        diag_error(s->diag, loc,
                   "'%s' (Triton's experimental TMA API, a CUtensorMap filled by the host) is "
                   "not supported; use tl.make_tensor_descriptor, or pass a TensorDescriptor "
                   "(signature entry tensordesc<fp16[64, 64]>)",
                   shown);
        return sem_error();
    }
    diag_error(s->diag, loc, "unknown builtin '%s'%s", shown, did_you_mean(s, leaf, name, shown));
    return sem_error();
}

/* A type as Triton's constexpr: a scalar number type is its dtype (tl.float32), a scalar pointer
 * a pointer_type, a block a block_type. */
Sem sem_type(Type t)
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

/* torch.float16 (torch.bool, torch.float8_e4m3fn, ...): its dtype, or false. */
static bool torch_dtype(const char *name, DType *out)
{
    if (!strcmp(name, "bool") || !strcmp(name, "half") || !strcmp(name, "float") ||
        !strcmp(name, "double") || !strcmp(name, "int") || !strcmp(name, "long")) {
        *out = name[0] == 'b'   ? DT_I1
               : name[0] == 'h' ? DT_F16
               : name[0] == 'f' ? DT_F32
               : name[0] == 'd' ? DT_F64
               : name[0] == 'i' ? DT_I32
                                : DT_I64;
        return true;
    }
    if (!strcmp(name, "float8_e4m3fn") || !strcmp(name, "float8_e5m2")) {
        *out = name[8] == '4' ? DT_F8E4NV : DT_F8E5;
        return true;
    }
    return lookup_dtype_name(name, out);
}

/* torch.finfo(torch.float16).max, torch.iinfo(torch.int8).min, ...: host constants module-level
 * code computes (FlagGems' `_MIN_FLOAT16_VAL = tl.constexpr(torch.finfo(torch.float16).min)`).
 * false when e is not such an attribute; else *out, an error already reported. */
static bool torch_info_attr(Sema *s, Expr *e, Sem *out)
{
    Expr *call = e->attr.obj;
    if (call->kind != EX_CALL || call->call.fn->kind != EX_ATTR || call->call.nargs != 1 ||
        call->call.fn->attr.obj->kind != EX_NAME || strcmp(call->call.fn->attr.obj->str, "torch"))
        return false;
    const char *info = call->call.fn->attr.name, *name = e->attr.name;
    bool finfo = !strcmp(info, "finfo");
    if (!finfo && strcmp(info, "iinfo"))
        return false;
    Expr *a = call->call.args[0];
    DType d;
    if (a->kind != EX_ATTR || a->attr.obj->kind != EX_NAME || strcmp(a->attr.obj->str, "torch") ||
        !torch_dtype(a->attr.name, &d) || dtype_is_float(d) != finfo || d == DT_I1) {
        diag_error(s->diag, a->loc, "torch.%s() takes a torch %s dtype (torch.%s)", info,
                   finfo ? "float" : "integer", finfo ? "float16" : "int32");
        *out = sem_error();
        return true;
    }
    int bits = dtype_bits(d);
    if (!strcmp(name, "bits")) {
        *out = sem_int(bits);
        return true;
    }
    if (!finfo && (!strcmp(name, "min") || !strcmp(name, "max"))) {
        bool sign = dtype_kind(d) == DK_INT, max = name[1] == 'a';
        uint64_t top = sign ? (UINT64_C(1) << (bits - 1)) - 1
                            : (bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1);
        if (!sign && max && bits == 64) {
            diag_error(s->diag, e->attr.name_loc,
                       "torch.iinfo(torch.uint64).max does not fit int64");
            *out = sem_error();
        } else {
            *out = sem_int(max ? (int64_t)top : sign ? -(int64_t)top - 1 : 0);
        }
        return true;
    }
    /* (largest finite, eps, smallest normal) per float dtype, as torch.finfo gives them */
    static const struct {
        DType d;
        double max, eps, tiny;
    } floats[] = {
        {DT_F16, 65504.0, 0.0009765625, 6.103515625e-05},
        {DT_BF16, 3.3895313892515355e+38, 0.0078125, 1.1754943508222875e-38},
        {DT_F32, 3.4028234663852886e+38, 1.1920928955078125e-07, 1.1754943508222875e-38},
        {DT_F64, 1.7976931348623157e+308, 2.220446049250313e-16, 2.2250738585072014e-308},
        {DT_F8E4NV, 448.0, 0.125, 0.015625},
        {DT_F8E5, 57344.0, 0.25, 6.103515625e-05},
    };
    for (size_t i = 0; finfo && i < sizeof floats / sizeof floats[0]; i++) {
        if (floats[i].d != d)
            continue;
        if (!strcmp(name, "max") || !strcmp(name, "min")) {
            *out = sem_float(name[1] == 'a' ? floats[i].max : -floats[i].max);
            return true;
        }
        if (!strcmp(name, "eps") || !strcmp(name, "tiny") || !strcmp(name, "smallest_normal")) {
            *out = sem_float(name[0] == 'e' ? floats[i].eps : floats[i].tiny);
            return true;
        }
    }
    diag_error(s->diag, e->attr.name_loc, "torch.%s has no attribute '%s' tric knows (%s)", info,
               name, finfo ? "min, max, eps, tiny, bits" : "min, max, bits");
    *out = sem_error();
    return true;
}

static Sem attr_expr(Sema *s, Expr *e)
{
    const char *name = e->attr.name ? e->attr.name : "";
    Expr *inner = e->attr.obj;
    Sem info;
    if (torch_info_attr(s, e, &info))
        return info;
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
    /* Triton's advance is a member of the block pointer too: bp.advance([BLOCK_M, 0]). */
    if (obj.kind == SEM_TUPLE && obj.block_ptr && !strcmp(name, "advance"))
        return (Sem){.kind = SEM_BUILTIN, .builtin = BI_ADVANCE};
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

/* ---- tuples, subscripts, ternaries ----------------------------------------------------------- */

/* A tuple with run-time elements (the returned value of a helper, `a, b = ...`). */
Sem runtime_tuple(Sema *s, Expr *e)
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

bool scalar_condition(Sema *s, Expr *cond, Sem c, const char *what)
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

/* Where an expression starts (a binary expression's loc is its operator). */
SrcLoc expr_start(const Expr *e)
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

/* Triton's sized integer predicates, is_int8() .. is_int64() and is_uint8() .. is_uint64(): the
 * width they test (0: not one); the caller tells is_uintN by its name. */
static int sized_int_predicate_bits(const char *name)
{
    static const char *const names[] = {"is_int8",  "is_int16",  "is_int32",  "is_int64",
                                        "is_uint8", "is_uint16", "is_uint32", "is_uint64"};
    for (int i = 0; i < 8; i++)
        if (!strcmp(name, names[i]))
            return 8 << (i % 4);
    return 0;
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
    return sized_int_predicate_bits(name) > 0;
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
    else if (sized_int_predicate_bits(name)) /* is_int32: signed; is_uint32: unsigned */
        r = num && dtype_is_int(d) && d != DT_I1 &&
            dtype_bits(d) == sized_int_predicate_bits(name) &&
            (dtype_kind(d) == DK_UINT) == (name[3] == 'u');
    return sem_bool(r);
}

/* Python's math.NAME(numbers) (bare `math`, `import math`): host Python, evaluated now in double
 * as Python does (lightllm's `sm_scale = 1.0 / math.sqrt(HEAD_DIM)`; a constexpr in a kernel too).
 * false when e is not such a call (tl.math.NAME, or an argument that is not a number: a tensor's
 * math.NAME stays tric's tl.math). floor, ceil and trunc give ints, as Python's. */
static bool python_math_call(Sema *s, Expr *e, Sem *out)
{
    const char *text = dotted_text(s, e->call.fn);
    if (!text || strncmp(text, "math.", 5) || e->call.nkwargs || e->call.nargs < 1 ||
        e->call.nargs > 2)
        return false;
    double v[2] = {0, 0};
    for (int i = 0; i < e->call.nargs; i++) {
        Sem a = e->call.args[i]->sem;
        if (a.kind != SEM_CONST || (a.cv.kind != CV_INT && a.cv.kind != CV_FLOAT))
            return false;
        v[i] = const_as_float(&a.cv);
    }
    static const struct {
        const char *name;
        double (*one)(double);
        double (*two)(double, double);
        bool to_int;
    } fns[] = {
        {"sqrt", sqrt, NULL, false},  {"exp", exp, NULL, false},     {"exp2", exp2, NULL, false},
        {"log", log, NULL, false},    {"log2", log2, NULL, false},   {"log10", log10, NULL, false},
        {"sin", sin, NULL, false},    {"cos", cos, NULL, false},     {"tan", tan, NULL, false},
        {"asin", asin, NULL, false},  {"acos", acos, NULL, false},   {"atan", atan, NULL, false},
        {"sinh", sinh, NULL, false},  {"cosh", cosh, NULL, false},   {"tanh", tanh, NULL, false},
        {"erf", erf, NULL, false},    {"erfc", erfc, NULL, false},   {"fabs", fabs, NULL, false},
        {"floor", floor, NULL, true}, {"ceil", ceil, NULL, true},    {"trunc", trunc, NULL, true},
        {"pow", NULL, pow, false},    {"atan2", NULL, atan2, false}, {"hypot", NULL, hypot, false},
        {"fmod", NULL, fmod, false},
    };
    const char *name = text + 5;
    int n = e->call.nargs;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        bool log_base = n == 2 && !strcmp(name, "log"); /* math.log(x, base) */
        if (strcmp(fns[i].name, name) || (!log_base && (n == 1) != (fns[i].one != NULL)))
            continue;
        double r = log_base ? log(v[0]) / log(v[1])
                   : n == 1 ? fns[i].one(v[0])
                            : fns[i].two(v[0], v[1]);
        if (fns[i].to_int && !(fabs(r) < 9.2e18)) {
            diag_error(s->diag, e->loc, "%s() of %g does not fit an int", text, v[0]);
            *out = sem_error();
        } else {
            *out = fns[i].to_int ? sem_int((int64_t)r) : sem_float(r);
        }
        return true;
    }
    return false;
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
    Sem folded;
    if (args_ok && python_math_call(s, e, &folded))
        return folded;
    if (f.kind == SEM_BUILTIN) {
        if (!args_ok)
            return sem_error();
        Expr *receiver = NULL;
        if (fn->kind == EX_ATTR &&
            (fn->attr.obj->sem.kind == SEM_VALUE ||
             (fn->attr.obj->sem.kind == SEM_TUPLE &&
              (fn->attr.obj->sem.tensor_desc || fn->attr.obj->sem.block_ptr))))
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
    /* a dtype called on a value (Liger's softmax: `m = tl.float32(-float("inf"))`) converts it,
     * as tl.cast(x, dtype): the call becomes that one */
    if (f.kind == SEM_CONST && f.cv.kind == CV_DTYPE && e->call.nargs == 1 &&
        e->call.nkwargs == 0) {
        if (!args_ok)
            return sem_error();
        Expr *tl = ast_expr(s->a, EX_NAME, fn->loc);
        tl->str = "tl";
        Expr *cast_fn = ast_expr(s->a, EX_ATTR, fn->loc);
        cast_fn->attr.obj = tl;
        cast_fn->attr.name = "cast";
        cast_fn->attr.name_loc = fn->loc;
        Expr **args = arena_alloc(s->a, 2 * sizeof *args);
        args[0] = e->call.args[0];
        args[1] = fn;
        e->call.fn = cast_fn;
        e->call.args = args;
        e->call.nargs = 2;
        return expr(s, e);
    }
    diag_error(s->diag, callee_loc(e), "%s is not callable", sem_describe(s, f));
    return sem_error();
}

/* ---- expressions ------------------------------------------------------------------------------ */

Sem expr(Sema *s, Expr *e)
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
    case EX_COMP:
        diag_error(s->diag, e->loc,
                   "comprehensions and generator expressions are not supported in kernels "
                   "(tric reads them only in @triton.autotune configs)");
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
