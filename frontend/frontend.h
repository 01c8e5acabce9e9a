/* frontend.h: .tri source -> AST -> typed, specialized AST.
 *
 * Sections (one per file in frontend/):
 *   lexer.l    tokens, with Python's INDENT/DEDENT/NEWLINE rules (flex, reentrant)
 *   parser.y   the grammar (bison, pure, %locations); actions call the ast.c builders
 *   ast.c      node constructors, cloning, and the printer behind --emit=ast
 *   sema.c     specialization: constexpr values bound, helpers inlined, every expression typed;
 *              split by concern into sema_const.c, sema_types.c, sema_expr.c, sema_builtins.c,
 *              sema_memory.c, sema_stmt.c and sema_inline.c, which share sema_internal.h
 *   builtins.c the tl.* builtins table (TRIC_BUILTINS below: a row per builtin, naming its sema
 *              rule and its IR builder) and what sema resolves a call to (ResolvedCall)
 *   signature.c --signature strings and -D values
 *   random.c   tl.rand and friends: a built-in library of @jit functions, inlined by sema
 *   build_ir.c typed AST -> tile IR (declared in ir.h's terms, below); "lowering" is codegen's
 *              word, for tile IR -> LLVM IR
 *
 * The front end never sees LLVM or CUDA. */
#ifndef TRIC_FRONTEND_H
#define TRIC_FRONTEND_H

#include "support/support.h"

struct IrFunc; /* ir.h */

/* ---- ast.c: the syntax tree ---------------------------------------------------------------- */

/* Binary operators, in the order of Python's precedence groups (lowest first). */
/* clang-format off */
#define TRIC_BINOPS(X)                                                                             \
    X(BIN_OR, "or")        /* scalar short-circuit or */                                           \
    X(BIN_AND, "and")      /* scalar short-circuit and */                                          \
    X(BIN_EQ, "==")        X(BIN_NE, "!=")  X(BIN_LT, "<") X(BIN_LE, "<=")                        \
    X(BIN_GT, ">")         X(BIN_GE, ">=")                                                         \
    X(BIN_IS, "is")        X(BIN_IS_NOT, "is not") /* constexpr identity: `mask is None` */        \
    X(BIN_BITOR, "|")      X(BIN_BITXOR, "^") X(BIN_BITAND, "&")                                  \
    X(BIN_SHL, "<<")       X(BIN_SHR, ">>")                                                        \
    X(BIN_ADD, "+")        X(BIN_SUB, "-")                                                         \
    X(BIN_MUL, "*")        X(BIN_DIV, "/")  /* true division: float result */                    \
    X(BIN_FLOORDIV, "//")  /* Triton: integer division truncating toward zero, as in C */         \
    X(BIN_MOD, "%")        /* Triton: remainder with the sign of the dividend, as in C */          \
    X(BIN_MATMUL, "@")     /* rejected by sema with a hint to use tl.dot */                      \
    X(BIN_POW, "**")       /* constexprs only, folded by sema (Triton's constexpr.__pow__) */      \
    X(BIN_IN, "in")        X(BIN_NOT_IN, "not in") /* autotune configs only; sema rejects them */
/* clang-format on */

typedef enum BinOp {
#define X(e, s) e,
    TRIC_BINOPS(X)
#undef X
        BIN_COUNT
} BinOp;
const char *binop_str(BinOp op);

/* Python's int arithmetic in 64 bits, as host Python evaluators need it (autotune.c's configs,
 * heuristics.c's lambdas): +, -, *, // and % (rounding down, the remainder taking the divisor's
 * sign), ** to a non-negative power, &, |, ^, << and >> by 0..62. *out on PY_INT_OK; else why
 * not, for the caller to say in its own words. */
typedef enum PyIntStatus {
    PY_INT_OK,
    PY_INT_DIV_ZERO,
    PY_INT_OVERFLOW,      /* outside 64 bits (Python's ints would grow) */
    PY_INT_SHIFT_RANGE,   /* a shift by < 0 or > 62 */
    PY_INT_NEGATIVE_POW,  /* Python gives a float */
    PY_INT_NOT_ARITHMETIC /* a comparison, `and`, ... */
} PyIntStatus;
PyIntStatus py_int_binary(BinOp op, int64_t a, int64_t b, int64_t *out);

typedef enum UnOp {
    UN_NEG,    /* -x */
    UN_PLUS,   /* +x */
    UN_INVERT, /* ~x, bitwise */
    UN_NOT,    /* not x, scalar logical */
} UnOp;

/* clang-format off */
#define TRIC_EXPR_KINDS(X)                                                                         \
    X(EX_INT, "int")            /* ival */                                                         \
    X(EX_FLOAT, "float")        /* fval */                                                         \
    X(EX_BOOL, "bool")          /* bval */                                                         \
    X(EX_NONE, "None")          /* - */                                                            \
    X(EX_STR, "str")            /* str (escapes already decoded) */                                \
    X(EX_NAME, "name")          /* str */                                                          \
    X(EX_ATTR, "attr")          /* attr: obj.name */                                               \
    X(EX_CALL, "call")          /* call */                                                         \
    X(EX_SUBSCRIPT, "subscript") /* sub: obj[idx, ...] */                                          \
    X(EX_SLICE, "slice")        /* slice: lo:hi:step inside a subscript, each may be NULL */       \
    X(EX_TUPLE, "tuple")        /* list: (a, b) */                                                 \
    X(EX_LIST, "list")          /* list: [a, b] */                                                 \
    X(EX_DICT, "dict")          /* dict: {k: v} (autotune configs) */                              \
    X(EX_BINARY, "binary")      /* bin */                                                          \
    X(EX_UNARY, "unary")        /* un */                                                           \
    X(EX_TERNARY, "ternary")    /* ternary: then if cond else els */                               \
    X(EX_LAMBDA, "lambda")      /* lambda: lambda params: body (@triton.heuristics values only) */\
    X(EX_COMP, "comprehension") /* comp: [elt for t in it if c], (elt for ...): autotune configs */
/* clang-format on */

typedef enum ExprKind {
#define X(e, s) e,
    TRIC_EXPR_KINDS(X)
#undef X
} ExprKind;

typedef struct Expr Expr;
typedef struct Stmt Stmt;
typedef struct FuncDef FuncDef;

/* A constexpr value known at compile time. */
typedef enum ConstKind {
    CV_NONE,  /* Python None */
    CV_INT,   /* i */
    CV_FLOAT, /* f */
    CV_BOOL,  /* b */
    CV_DTYPE, /* dtype, e.g. tl.float16 */
    CV_TYPE,  /* type: Triton's pointer_type (p.dtype, p.type of a scalar pointer) or block_type
                 (x.type of a block); a plain scalar type is a CV_DTYPE */
    CV_STR,   /* s */
    CV_TUPLE, /* elems, n: (2, 3) shapes, or tuples of any of these */
} ConstKind;

typedef struct ConstVal {
    ConstKind kind;
    union {
        int64_t i;
        double f;
        bool b;
        DType dtype;
        Type type;
        const char *s;
        struct {
            struct ConstVal *elems;
            int n;
        } tuple;
    };
} ConstVal;

/* What sema decided an expression is. */
typedef enum SemKind {
    SEM_UNSET,   /* not analysed (untaken constexpr branch, or sema not run) */
    SEM_VALUE,   /* a run-time scalar or block: type */
    SEM_CONST,   /* a constexpr: cv (type also set when it has one, e.g. int32 for 3) */
    SEM_MODULE,  /* the `tl` / `triton` / `triton.language` namespace */
    SEM_BUILTIN, /* a builtin function: builtin; for a method (x.to) also `self` in the call */
    SEM_FUNC,    /* a user @jit function: func */
    SEM_VOID,    /* the result of store, static_assert, ... */
    SEM_TUPLE,   /* a tuple holding run-time values, e.g. `return a, b` of a helper: elems */
} SemKind;

typedef struct Sem {
    SemKind kind;
    Type type;
    ConstVal cv;
    int builtin;      /* enum Builtin, for SEM_BUILTIN */
    int libdevice_fn; /* SEM_BUILTIN BI_LIBDEVICE1/2: the function (ir.h's LibdeviceFn) */
    /* SEM_MODULE: the module as the source names it ("tl", "libdevice", "tl.extra.cuda.libdevice"),
     * for messages and for what its attributes are. */
    const char *module;
    FuncDef *func; /* for SEM_FUNC */
    /* sema, for a SEM_VALUE EX_BINARY (arithmetic, comparison, bitwise), an ST_AUGASSIGN target,
     * and calls of minimum/maximum/where/fma: the element type both operands are converted to
     * before the operation (Triton's computation type; for a comparison the result is int1 but
     * the compare happens in this type). For pointer + int it is the offset's int type. */
    DType compute_dtype;
    /* sema, for SEM_TUPLE: the elements' Sems (a tuple of constexprs only is SEM_CONST). */
    struct Sem *elems;
    int nelems;
    /* SEM_TUPLE made by tl.make_block_ptr (Triton's block pointer): `type` is the block of
     * pointers it addresses (shape = block_shape), `cv` its order (a CV_TUPLE), and elems are the
     * base pointer, then rank shapes (int64), rank strides (int64) and rank offsets (int32), all
     * run-time values, so that a block pointer carried by a loop keeps one structure. */
    bool block_ptr;
    /* SEM_TUPLE made by tl.make_tensor_descriptor: `type` as for a block pointer, `cv` the
     * padding ("zero" or "nan", a CV_STR), elems the base pointer, rank shapes and rank strides
     * (int64); desc.load(offsets) / desc.store(offsets, value) give the offsets. */
    bool tensor_desc;
} Sem;

struct Expr {
    ExprKind kind;
    SrcLoc loc;
    Sem sem; /* filled by sema */
    union {
        int64_t ival;
        double fval;
        bool bval;
        const char *str;
        struct {
            Expr *obj;
            const char *name;
            SrcLoc name_loc;
        } attr;
        struct {
            Expr *fn;
            Expr **args;
            int nargs;
            const char **kwnames; /* kwnames[i] = kwargs[i]'s keyword */
            Expr **kwargs;
            int nkwargs;
            /* sema: for a call of a user @jit function, the callee's body cloned, specialized and
             * typed for this call site (helpers are inlined); its params are bound to the args. */
            FuncDef *inlined;
            /* sema: for a builtin call, the arguments in the builtin's parameter order after
             * keywords are matched (NULL where an optional one is absent); method calls (x.to)
             * put the receiver first. */
            Expr **bound;
            int nbound;
            /* sema: for a builtin call, what it resolved the call to (axes, combine op, the
             * dtype it computes in, constexpr arguments): what build_ir.c builds from. */
            struct ResolvedCall *resolved;
        } call;
        struct {
            Expr *obj;
            Expr **idx;
            int nidx;
        } sub;
        struct {
            Expr *lo, *hi, *step;
        } slice;
        struct {
            Expr **elts;
            int n;
        } list;
        struct {
            Expr **keys, **vals;
            int n;
        } dict;
        struct {
            BinOp op;
            Expr *lhs, *rhs;
        } bin;
        struct {
            UnOp op;
            Expr *operand;
        } un;
        struct {
            Expr *cond, *then, *els;
        } ternary;
        struct {
            Expr **params; /* EX_NAMEs */
            int nparams;
            Expr *body;
        } lambda;
        struct {
            Expr *elt;
            /* clause i: `for targets[i] in iters[i]`, or `if iters[i]` when targets[i] is NULL */
            Expr **targets, **iters;
            int n;
            bool list; /* [elt for ...]; else a generator expression (elt for ...) */
        } comp;
    };
    /* parser: height of the tree under this node (1 for a leaf). The parser rejects expressions
     * deeper than its limit, so recursive walks over a parsed tree stay shallow. */
    int depth;
};

typedef struct Block {
    Stmt **stmts;
    int n;
} Block;

/* clang-format off */
#define TRIC_STMT_KINDS(X)                                                                         \
    X(ST_EXPR, "expr")        /* expr.value */                                                     \
    X(ST_ASSIGN, "assign")    /* assign: t1 = t2 = value; a target is a name, tuple or subscript */\
    X(ST_AUGASSIGN, "augassign") /* aug: target op= value */                                       \
    X(ST_IF, "if")            /* if_: elif is an ST_IF alone in els */                              \
    X(ST_FOR, "for")          /* for_: for target in iter */                                       \
    X(ST_WHILE, "while")      /* while_ */                                                         \
    X(ST_RETURN, "return")    /* ret.value, may be NULL */                                         \
    X(ST_PASS, "pass")                                                                             \
    X(ST_BREAK, "break")      /* parsed; sema rejects it as Triton does */                         \
    X(ST_CONTINUE, "continue") /* parsed; sema rejects it as Triton does */                        \
    X(ST_ASSERT, "assert")    /* assert_: assert cond, msg (a device assert; sema may drop it) */  \
    X(ST_RAISE, "raise")      /* ret.value: the exception, may be NULL; sema rejects one it reaches */\
    X(ST_DEF, "def")          /* def: a nested def (rejected by sema) */                           \
    X(ST_IMPORT, "import")    /* import_: import / from-import lines */
/* clang-format on */

typedef enum StmtKind {
#define X(e, s) e,
    TRIC_STMT_KINDS(X)
#undef X
} StmtKind;

struct Stmt {
    StmtKind kind;
    SrcLoc loc;
    union {
        struct {
            Expr *value;
        } expr;
        struct {
            Expr **targets;
            int ntargets;
            Expr *annotation; /* x: tl.constexpr = 3, may be NULL */
            Expr *value;
        } assign;
        struct {
            BinOp op;
            Expr *target;
            Expr *value;
        } aug;
        struct {
            Expr *cond;
            Block then, els;
            int static_taken; /* sema: -1 run-time branch; 0 / 1 decided at compile time */
        } if_;
        struct {
            Expr *target;
            Expr *iter;
            Block body;
            Block *unrolled; /* sema, for tl.static_range: one typed clone of body per iteration */
            int nunrolled;
        } for_;
        struct {
            Expr *cond;
            Block body;
        } while_;
        struct {
            Expr *value;
        } ret;
        struct {
            Expr *cond, *msg;
        } assert_;
        struct {
            FuncDef *func;
        } def;
        struct {
            /* `import a.b as c, d`: module NULL, names {"a.b", "d"}, asnames {"c", NULL}.
             * `from a.b import c as d, *`: module "a.b" (leading dots kept for relative imports),
             * names {"c", "*"}, asnames {"d", NULL}. */
            const char *module;
            const char **names;
            const char **asnames;
            int n;
        } import_;
    };
};

typedef struct Param {
    const char *name;
    SrcLoc loc;
    Expr *annotation;    /* NULL, tl.constexpr, a dtype, or a signature string "*fp16:16" */
    Expr *default_value; /* NULL when none */
    /* sema */
    bool is_constexpr;
    Sem sem;
    int divisibility; /* 16 from a ":16" hint, 1 when nothing is known */
    bool equal_to_1;  /* ":1" hint */
    /* a host tensor descriptor ("tensordesc<fp16[64, 64]>"): its block type (rank 0 when the
     * parameter is not one). Launched as its base pointer, rank i32 shapes and rank i64 strides
     * (the last one equal to 1), as Triton passes a descriptor it does not lower to TMA. */
    Type desc_block;
} Param;

struct FuncDef {
    const char *name;
    SrcLoc loc;
    Expr **decorators; /* @triton.jit, @triton.autotune(...), ... */
    int ndecorators;
    Param *params;
    int nparams;
    int npositional; /* params[npositional..] follow a bare `*`: keyword-only (nparams when none) */
    Block body;
    const char *docstring; /* NULL when none */
    bool is_jit;           /* has @triton.jit / @jit / @triton.autotune over @triton.jit */
    bool is_constexpr_fn;  /* @triton.constexpr_function / @tl.constexpr_function / @tl.constexpr:
                              evaluated by sema on constexpr arguments (sema_const.c constexpr_call) */
    Expr *returns;         /* the `-> annotation`, NULL when none (parsed, otherwise ignored) */
};

typedef struct Module {
    const SrcFile *file;
    FuncDef **funcs;
    int nfuncs;
    Stmt **globals; /* module-level assignments (NAME = constexpr) and imports, in order */
    int nglobals;
} Module;

/* Builders used by the parser's actions; all allocate in the arena. */
Expr *ast_expr(Arena *a, ExprKind kind, SrcLoc loc);
Stmt *ast_stmt(Arena *a, StmtKind kind, SrcLoc loc);
Expr *ast_clone_expr(Arena *a, const Expr *e); /* deep copy, sema fields cleared */
Block ast_clone_block(Arena *a, Block b);
FuncDef *ast_clone_func(Arena *a, const FuncDef *f);

/* The printer behind --emit=ast: one node per line, indented, with types when sema ran
 * ("call tl.load : <1024xfp32>"). Stable: golden tests match on it. */
void ast_print_module(StrBuf *out, const Module *m);
void ast_print_func(StrBuf *out, const FuncDef *f);

/* ---- lexer.l + parser.y ------------------------------------------------------------------- */

/* Parses a whole file. Syntax errors go to diag (all of them, up to its limit, with recovery at
 * statement boundaries); returns NULL when there was any. Never crashes on any bytes: NUL bytes,
 * invalid UTF-8, tabs mixed with spaces (an error), a missing final newline, 10 MB of input. */
/* Values a file's host Python looks up by name, all given by the compile's caller: a call
 * READER(NAME) or READER(NAME, DEFAULT), READER one of `readers` (dotted names), is the value
 * vars gives NAME, else DEFAULT (None without one). The driver fills both (driver_host_env: the
 * pairs of SpecOptions.host_env, from tric --host-env or tric_compile_options.host_env and part of
 * every cache key, and the host functions that read them); the frontend evaluates such calls and
 * nothing else: no reader, or a NULL HostEnv, recognizes no call. host_skip.c decides
 * module-level ifs on it, autotune.c evaluates the configs with it. */
typedef struct HostEnv {
    const struct Define *vars;
    int n;
    const char *const *readers; /* NULL-terminated, "module.function"; NULL: none */
} HostEnv;
/* The value env gives the name text[0, len), or NULL when the name is unset. */
const char *host_env_value(const HostEnv *env, const char *name, size_t len);
/* The length of the reader of env that text (length len) starts with as a whole dotted name (not
 * followed by a name character or a dot); 0 when none does. */
size_t host_env_reader_at(const HostEnv *env, const char *text, size_t len);

Module *parse_module(const SrcFile *file, const HostEnv *env, Arena *arena, Diag *diag);
/* The same for a module another file imports: its host code is set aside even when it holds no
 * kernel (a utils.py of constants, helpers and torch code). */
Module *parse_imported_module(const SrcFile *file, const HostEnv *env, Arena *arena, Diag *diag);

/* ---- host_skip.c: host Python set aside ----------------------------------------------------- */

/* A copy of file's text (in a) in which the module-level statements no kernel needs (classes,
 * host functions, `if __name__ == "__main__":`, with, loops, expression statements, unused
 * assignments; the rule is at the top of host_skip.c) are blanked, every line break kept, so
 * that positions do not move; NULL when nothing is blanked. parse_module lexes this copy. A file
 * with no kernel is left whole, unless imported (parse_imported_module). */
char *host_code_mask(const SrcFile *file, bool imported, const HostEnv *env, Arena *a);
/* vLLM's `@triton_jit_decorator`, an alias of triton.jit its triton_utils package makes and tric
 * cannot see through: a bare decorator name whose `_`-separated parts include `triton` and `jit`
 * is taken as triton.jit (host_skip.c and parser.y's is_jit_decorator agree through it). */
bool frontend_is_jit_alias(const char *name, size_t len);

/* What a host condition tests (`is_hip()`, `DEVICE_TYPE == "xpu"`, `triton.__version__ <
 * "3.0"`), read from its words: tric does not run host Python, it takes the branch that holds
 * where its kernels run, an NVIDIA GPU under the newest Triton (docs/language.md "Host Python").
 * host_skip.c reads module-level ifs so; autotune.c the ifs of a configs helper. */
typedef struct HostCondition {
    bool other_backend; /* names AMD, Intel, Apple, a CPU... */
    bool nvidia;        /* names CUDA or NVIDIA */
    bool version;       /* reads a version */
    bool negated;       /* `not`, `!=` */
    bool less;          /* `<`, `<=`, operator.lt / operator.le */
} HostCondition;
/* Notes one word of the condition: an identifier, a string's text, `not`. */
void host_condition_word(HostCondition *c, const char *word, size_t len);
/* 1: the condition holds on an NVIDIA GPU (a test for CUDA); 0: it does not (another backend,
 * negated CUDA, a version compared with `<`); -1: it tests none of these. */
int host_condition_holds(const HostCondition *c);

/* ---- builtins.c: tl.* ------------------------------------------------------------------------ */

/* Every builtin, one row each: enum, name (after `tl.`; also a method name where marked),
 * parameters as "name" or "name=" for optional ones (the keyword names Triton uses), its sema
 * rule, its IR builder, and a one-line meaning. Adding a builtin is adding a row and its two
 * functions: the sema rule (in sema_builtins.c or sema_memory.c, declared from this table in
 * sema_internal.h) checks the bound arguments, types the call and fills its ResolvedCall; the
 * IR builder (build_ir.c, declared there from this table) builds IR from what sema recorded.
 * Rows may share a function, which then takes the Builtin. */
/* clang-format off */
#define TRIC_BUILTINS(X)                                                                           \
    X(BI_PROGRAM_ID, "program_id", "axis", program_id_builtin, build_program_id, "index of this program along axis (0, 1, 2)")          \
    X(BI_NUM_PROGRAMS, "num_programs", "axis", program_id_builtin, build_program_id, "programs in the grid along axis")                 \
    X(BI_ARANGE, "arange", "start end", arange_builtin, build_arange, "[start, end) as an int32 block; end-start a power of 2") \
    X(BI_ZEROS, "zeros", "shape dtype", full_builtin, build_full, "a block of zeros")                                       \
    X(BI_FULL, "full", "shape value dtype", full_builtin, build_full, "a block filled with value")                          \
    X(BI_ZEROS_LIKE, "zeros_like", "input", zeros_like_builtin, build_full, "zeros of input's shape and type (standard.zeros_like)") \
    X(BI_CDIV, "cdiv", "x div", cdiv_builtin, build_cdiv, "ceil(x / div)")                                                   \
    X(BI_MINIMUM, "minimum", "x y propagate_nan=", minmax_builtin, build_minmax, "elementwise min")                             \
    X(BI_MAXIMUM, "maximum", "x y propagate_nan=", minmax_builtin, build_minmax, "elementwise max")                             \
    X(BI_WHERE, "where", "condition x y", where_builtin, build_where, "select elementwise")                                   \
    X(BI_LOAD, "load", "pointer mask= other= boundary_check= padding_option= cache_modifier= eviction_policy= volatile=", load_builtin, build_load, "gather through a pointer block") \
    X(BI_STORE, "store", "pointer value mask= boundary_check= cache_modifier= eviction_policy=", store_builtin, build_store, "scatter through a pointer block") \
    X(BI_MAKE_BLOCK_PTR, "make_block_ptr", "base shape strides offsets block_shape order", make_block_ptr_builtin, build_make_block_ptr, "a block pointer: a block_shape tile of a strided tensor at offsets") \
    X(BI_ADVANCE, "advance", "base offsets", advance_builtin, build_advance, "a block pointer moved by offsets") \
    X(BI_MAKE_TENSOR_DESC, "make_tensor_descriptor", "base shape strides block_shape padding_option=", make_tensor_desc_builtin, build_make_tensor_desc, "a tensor descriptor: block_shape tiles of a strided tensor") \
    X(BI_DESC_LOAD, "load_tensor_descriptor", "desc offsets", desc_access_builtin, build_desc_access, "desc.load(offsets): the tile at offsets, zero (or NaN) outside the tensor") \
    X(BI_DESC_STORE, "store_tensor_descriptor", "desc offsets value", desc_access_builtin, build_desc_access, "desc.store(offsets, value): the tile at offsets, nothing written outside the tensor") \
    X(BI_TENSOR_DESC_TYPE, "tensor_descriptor", "", tensor_desc_type_builtin, build_folded, "the tensor descriptor type, for isinstance") \
    X(BI_ISINSTANCE, "isinstance_builtin", "obj classinfo", isinstance_builtin, build_folded, "Python's isinstance: tl.tensor_descriptor, tl.constexpr") \
    X(BI_DOT, "dot", "input other acc= input_precision= allow_tf32= max_num_imprecise_acc= out_dtype= trans_a= trans_b=", dot_builtin, build_dot, "matrix product (+ acc)") \
    X(BI_DOT_SCALED, "dot_scaled", "lhs lhs_scale lhs_format rhs rhs_scale rhs_format acc= fast_math= lhs_k_pack= rhs_k_pack= out_dtype=", dot_scaled_builtin, build_dot_scaled, "microscaled (MX) matrix product: operands upcast to bf16 (fp16), times 2^(scale-127) per group of 32 along K") \
    X(BI_SUM, "sum", "input axis= keep_dims= dtype=", reduce_builtin, build_reduce, "reduce with +")                            \
    X(BI_MAX, "max", "input axis= return_indices= return_indices_tie_break_left= keep_dims=", reduce_builtin, build_reduce, "reduce with max") \
    X(BI_MIN, "min", "input axis= return_indices= return_indices_tie_break_left= keep_dims=", reduce_builtin, build_reduce, "reduce with min") \
    X(BI_ARGMAX, "argmax", "input axis tie_break_left= keep_dims=", reduce_builtin, build_reduce, "index of the max along axis") \
    X(BI_ARGMIN, "argmin", "input axis tie_break_left= keep_dims=", reduce_builtin, build_reduce, "index of the min along axis") \
    X(BI_CUMSUM, "cumsum", "input axis= reverse= dtype=", scan_builtin, build_scan, "inclusive prefix sum along axis")      \
    X(BI_CUMPROD, "cumprod", "input axis= reverse=", scan_builtin, build_scan, "inclusive prefix product along axis")      \
    X(BI_ASSOCIATIVE_SCAN, "associative_scan", "input axis combine_fn reverse=", scan_builtin, build_scan, "inclusive scan with a @jit combine function") \
    X(BI_REDUCE, "reduce", "input axis combine_fn keep_dims=", reduce_with_combine_builtin, build_reduce_by_scan, "reduce with a @jit combine function (associative_scan's)") \
    X(BI_XOR_SUM, "xor_sum", "input axis= keep_dims=", xor_sum_builtin, build_reduce_by_scan, "reduce with ^ (integers)")                \
    X(BI_EXP, "exp", "x", math_builtin, build_math, "e^x")                                                                   \
    X(BI_EXP2, "exp2", "x", math_builtin, build_math, "2^x")                                                                 \
    X(BI_LOG, "log", "x", math_builtin, build_math, "natural log")                                                           \
    X(BI_LOG2, "log2", "x", math_builtin, build_math, "log base 2")                                                          \
    X(BI_SQRT, "sqrt", "x", math_builtin, build_math, "square root")                                                         \
    X(BI_RSQRT, "rsqrt", "x", math_builtin, build_math, "1 / sqrt(x)")                                                       \
    X(BI_ABS, "abs", "x", math_builtin, build_math, "absolute value")                                                        \
    X(BI_SIN, "sin", "x", math_builtin, build_math, "sine")                                                                  \
    X(BI_COS, "cos", "x", math_builtin, build_math, "cosine")                                                                \
    X(BI_FLOOR, "floor", "x", math_builtin, build_math, "round down")                                                        \
    X(BI_CEIL, "ceil", "x", math_builtin, build_math, "round up")                                                            \
    X(BI_SIGMOID, "sigmoid", "x", math_builtin, build_sigmoid, "1 / (1 + e^-x)")                                                \
    X(BI_FMA, "fma", "x y z", fma_builtin, build_fma, "x * y + z")                                                         \
    X(BI_CAST, "cast", "input dtype fp_downcast_rounding= bitcast=", cast_builtin, build_cast, "convert elements; also x.to(dtype)") \
    X(BI_BROADCAST_TO, "broadcast_to", "input shape", broadcast_to_builtin, build_broadcast_to, "broadcast to a shape")                     \
    X(BI_EXPAND_DIMS, "expand_dims", "input axis", expand_dims_builtin, build_expand_dims, "insert a dim of size 1")                      \
    X(BI_RESHAPE, "reshape", "input shape can_reorder=", reshape_builtin, build_reshape, "same elements, new shape")              \
    X(BI_RAVEL, "ravel", "x can_reorder=", ravel_builtin, build_reshape, "the elements as a 1-D block (reshape to [numel])")        \
    X(BI_VIEW, "view", "input shape", reshape_builtin, build_reshape, "reshape (deprecated name)")                                \
    X(BI_TRANS, "trans", "input dims=", permute_builtin, build_permute, "transpose (2-D: swap the dims)")                         \
    X(BI_PERMUTE, "permute", "input dims", permute_builtin, build_permute, "permute dims")                                        \
    X(BI_JOIN, "join", "a b", join_builtin, build_join, "a and b (one type, broadcast) stacked along a new last dim of 2")   \
    X(BI_SPLIT, "split", "a", split_builtin, build_split, "the two halves of a along its last dim (of 2), a tuple; also a.split()") \
    X(BI_INTERLEAVE, "interleave", "a b", join_builtin, build_join, "a and b interleaved along their last dim: join, then the last two dims merged") \
    X(BI_MULTIPLE_OF, "multiple_of", "input values", hint_builtin, build_hint, "hint: every element divisible by values")   \
    X(BI_MAX_CONTIGUOUS, "max_contiguous", "input values", hint_builtin, build_hint, "hint: runs of values contiguous elements") \
    X(BI_MAX_CONSTANCY, "max_constancy", "input values", hint_builtin, build_max_constancy, "hint: runs of values equal elements (not used)") \
    X(BI_ASSUME, "assume", "cond", device_assert_builtin, build_folded, "hint: cond holds (not used)")                                   \
    X(BI_STATIC_ASSERT, "static_assert", "cond msg=", static_assert_builtin, build_folded, "compile-time assertion")                   \
    X(BI_STATIC_PRINT, "static_print", "values", no_value_builtin, build_folded, "print at compile time (ignored)")               \
    X(BI_DEVICE_PRINT, "device_print", "prefix values hex=", device_print_builtin, build_folded, "print at run time (tric prints nothing)") \
    X(BI_DEVICE_ASSERT, "device_assert", "cond msg=", device_assert_builtin, build_device_assert, "run-time assertion (checked by the interpreter)") \
    X(BI_RANGE, "range", "arg1 arg2= step= num_stages= loop_unroll_factor= warp_specialize= flatten= disallow_acc_multi_buffer= disable_licm=", range_builtin, build_range, "Python range / tl.range in for loops") \
    X(BI_STATIC_RANGE, "static_range", "arg1 arg2= step=", range_builtin, build_range, "for loop unrolled at compile time")   \
    X(BI_MIN_PY, "min_builtin", "a b", minmax_py_builtin, build_minmax, "Python's min on constexprs")                              \
    X(BI_MAX_PY, "max_builtin", "a b", minmax_py_builtin, build_minmax, "Python's max on constexprs")                              \
    X(BI_SWIZZLE2D, "swizzle2d", "i j size_i size_j size_g", swizzle2d_builtin, build_swizzle2d, "grouped program-id swizzle")        \
    X(BI_UMULHI, "umulhi", "x y", umulhi_builtin, build_minmax, "high 32 bits of the product")                                   \
    X(BI_FDIV, "fdiv", "x y ieee_rounding=", fdiv_builtin, build_fdiv, "x / y of floats (ieee_rounding: correctly rounded)") \
    X(BI_CLAMP, "clamp", "x min max propagate_nan=", clamp_builtin, build_clamp, "min(max(x, min), max), floats")              \
    X(BI_DEBUG_BARRIER, "debug_barrier", "", no_value_builtin, build_debug_barrier, "every thread of the program waits for the others (bar.sync 0)") \
    X(BI_GDC_WAIT, "gdc_wait", "", no_value_builtin, build_grid_dep, "tl.extra.cuda.gdc_wait(): wait for the grids this one depends on (programmatic dependent launch)") \
    X(BI_GDC_LAUNCH_DEPENDENTS, "gdc_launch_dependents", "", no_value_builtin, build_grid_dep, "tl.extra.cuda.gdc_launch_dependents(): let a dependent grid start") \
    X(BI_CONSTEXPR, "constexpr", "value", constexpr_builtin, build_folded, "tl.constexpr(v): mark a constant")                     \
    X(BI_NEXT_POWER_OF_2, "next_power_of_2", "n", next_power_of_2_builtin, build_folded, "triton.next_power_of_2(n): smallest power of 2 >= n, constexprs") \
    X(BI_LOG2_CONSTEXPR, "_log2", "i", log2_constexpr_builtin, build_folded, "Triton's standard._log2(i): floor(log2(i)) of a constexpr, 0 below 2") \
    X(BI_POINTER_TYPE, "pointer_type", "element_ty", pointer_type_builtin, build_folded, "a pointer type: an annotation, or a constexpr to compare with p.dtype") \
    X(BI_LEN, "len_builtin", "obj", python_builtin, build_folded, "Python's len on a constexpr tuple")                          \
    X(BI_INT_PY, "int_builtin", "x", python_builtin, build_folded, "Python's int() on a constexpr")                             \
    X(BI_FLOAT_PY, "float_builtin", "x", python_builtin, build_folded, "Python's float() on a constexpr")                       \
    X(BI_ATOMIC_ADD, "atomic_add", "pointer val mask= sem= scope=", atomic_builtin, build_atomic, "atomic *p += val; the old values (also p.atomic_add)") \
    X(BI_ATOMIC_MAX, "atomic_max", "pointer val mask= sem= scope=", atomic_builtin, build_atomic, "atomic *p = max(*p, val); ints, fp32, fp64") \
    X(BI_ATOMIC_MIN, "atomic_min", "pointer val mask= sem= scope=", atomic_builtin, build_atomic, "atomic *p = min(*p, val)")   \
    X(BI_ATOMIC_AND, "atomic_and", "pointer val mask= sem= scope=", atomic_builtin, build_atomic, "atomic *p &= val (ints)")    \
    X(BI_ATOMIC_OR, "atomic_or", "pointer val mask= sem= scope=", atomic_builtin, build_atomic, "atomic *p |= val (ints)")      \
    X(BI_ATOMIC_XOR, "atomic_xor", "pointer val mask= sem= scope=", atomic_builtin, build_atomic, "atomic *p ^= val (ints)")    \
    X(BI_ATOMIC_XCHG, "atomic_xchg", "pointer val mask= sem= scope=", atomic_builtin, build_atomic, "atomic *p = val")          \
    X(BI_ATOMIC_CAS, "atomic_cas", "pointer cmp val sem= scope=", atomic_builtin, build_atomic, "atomic *p = val where *p == cmp") \
    X(BI_TO_TENSOR, "to_tensor", "x", to_tensor_builtin, build_to_tensor, "a run-time value of x (a constexpr number gets Triton's type: int32, uint32, int64, fp32, int1)") \
    X(BI_LIBDEVICE1, "libdevice_unary", "arg0", libdevice_builtin, build_libdevice, "libdevice.NAME(x): Sem.libdevice_fn names it")   \
    X(BI_LIBDEVICE2, "libdevice_binary", "arg0 arg1", libdevice_builtin, build_libdevice, "libdevice.NAME(x, y): Sem.libdevice_fn names it")
/* clang-format on */

typedef enum Builtin {
#define X(e, name, params, sema_rule, build, doc) e,
    TRIC_BUILTINS(X)
#undef X
        BI_COUNT
} Builtin;

const char *builtin_name(Builtin b);

/* The combine functions tric scans with: the binary op their body returns. */
typedef enum ScanCombine {
    SCAN_ADD, /* return a + b */
    SCAN_MUL, /* return a * b */
    SCAN_MAX, /* return tl.maximum(a, b) */
    SCAN_MIN, /* return tl.minimum(a, b) */
    SCAN_AND, /* return a & b */
    SCAN_OR,  /* return a | b */
    SCAN_XOR, /* return a ^ b */
} ScanCombine;

enum { AXIS_ALL = -1 }; /* ResolvedCall.axis of a reduction over every element (axis=None) */

/* What sema resolved a builtin call to (Expr.call.resolved, filled by the builtin's sema rule):
 * every decision its IR builder needs, so that build_ir.c builds IR and derives nothing. A field is
 * set for the builtins its comment names and zero for the others. */
typedef struct ResolvedCall {
    /* program_id / num_programs: 0, 1 or 2; reductions and scans: the input's dim, normalised
     * (0 .. rank-1), or AXIS_ALL for a reduction's axis=None; expand_dims: the new dim's index in
     * the result, normalised */
    int axis;
    bool keep_dims;      /* reductions */
    bool reverse;        /* scans */
    ScanCombine combine; /* scans (cumsum SCAN_ADD, cumprod SCAN_MUL, associative_scan its combine
                            function's op), and the reductions built from a scan: tl.reduce
                            with a * b or a bitwise combine, xor_sum (SCAN_XOR) */
    /* trans / permute: result dim i is the input's dim perm[i] (one entry per dim) */
    int64_t perm[TRIC_MAX_RANK];
    /* multiple_of / max_contiguous: one value per dim of the input (one for a scalar), nhints */
    int64_t hints[TRIC_MAX_RANK];
    int nhints;
    int64_t start, end; /* arange */
    /* The dtype the operation itself runs in: math functions, sigmoid, libdevice calls and
     * fdiv's div_rn run fp16 and bf16 in fp32 and round the result back (Triton's math ops);
     * dot_scaled: the type both operands are upcast to (fp16 when either format is fp16, else
     * bf16). */
    DType op_dtype;
    bool propagate_nan;     /* minimum / maximum / clamp: PropagateNan.ALL (a NaN input wins) */
    bool ieee_rounding;     /* fdiv: the correctly rounded quotient */
    bool tf32;              /* dot: fp32 operands may round to tf32 on tensor cores */
    bool trans[2];          /* dot: trans_a, trans_b (Triton 2.0's keywords): that operand's last
                               two dims swapped before the product */
    bool bitcast;           /* cast: keep the bits */
    unsigned boundary_dims; /* load / store through a block pointer: a bit per boundary_check dim */
    bool pad_nan;           /* load through a block pointer: padding_option="nan" */
    int mem_sem, mem_scope; /* atomics: ir.h's MemSem and MemScope (acq_rel and gpu by default) */
    bool fast_math;         /* dot_scaled: no NaN for a scale of 0xFF */
    bool k_pack[2];         /* dot_scaled: lhs_k_pack, rhs_k_pack (e2m1 packed along K) */
    /* dot: max_num_imprecise_acc on fp8 operands with an fp32 sum, when it is <= K (Triton's
     * needsPartialAccumulator; 0 is taken as 1): wgmma sums that many K at most in the tensor
     * cores' precision before adding into fp32. 0: no such limit. */
    int imprecise_acc;
} ResolvedCall;

/* ---- signature.c ------------------------------------------------------------------------- */

/* One -D NAME=VALUE. */
typedef struct Define {
    const char *name;
    const char *value;
} Define;

/* What to specialize a kernel for. */
typedef struct SpecOptions {
    const char *kernel_name; /* NULL: the file's only @jit kernel, or an error listing them */
    const char *signature;   /* Triton AOT form, "*fp16:16,i32,i32:16,..."; NULL: annotations */
    const Define *defines;
    int ndefines;
    /* Launch specialization (Triton's JIT): one entry per run-time parameter, in order, for the
     * values a launch passes -- 2, 4, 8 or 16: the largest power of two (up to 16) dividing the
     * value; 1: equal to 1; 0: neither. Applied only where the signature or annotation leaves the parameter
     * open, and only where the hint is valid for its type (':1' integers, the others pointers and
     * integers; never i1). NULL/0: none. */
    const unsigned char *launch_hints;
    int nlaunch_hints;
    /* Which front door the signature and defines came through, so that messages name what the
     * user wrote: false, tric's flags (-D NAME=VALUE, --signature); true, the C API's fields
     * (opt.constexprs, opt.signature of tric_compile_options). Changes no code. */
    bool from_c_api;
    /* The values the file's host Python looks up (HostEnv): where its module-level ifs are
     * decided and its autotune configs evaluated. The driver adds the readers. */
    HostEnv host_env;
} SpecOptions;

/* Parses one -D value ("128", "1.5", "True", "tl.float16", "float16") into a constexpr. */
bool const_from_string(const char *text, ConstVal *out, Arena *a);
void const_print(StrBuf *sb, const ConstVal *cv);

/* One --signature entry, split at commas and trimmed but not interpreted: at a constexpr's
 * position it is a value (const_from_string), elsewhere a type (signature_parse_type). */
typedef struct SigEntry {
    const char *text;
} SigEntry;
/* Splits a signature string; returns the number of entries (0 for an empty string). */
int signature_split(const char *sig, SigEntry **out, Arena *a);
/* "*fp16:16" -> pointer to fp16, divisibility 16; "i32:1" -> int32, equal_to_1. Returns NULL on
 * success, else a one-line reason ("unknown type 'f33' (expected ...)"). */
const char *signature_parse_type(const char *text, Type *type, int *divisibility, bool *equal_to_1,
                                 Arena *a);
/* Whether an entry is Triton's host tensor descriptor form, "tensordesc<fp16[64, 64]>". */
bool signature_is_tensordesc(const char *text);
/* "tensordesc<fp16[128, 64]>" -> *block = <128x64xfp16>. Returns NULL on success, else a
 * one-line reason. */
const char *signature_parse_tensordesc(const char *text, Type *block, Arena *a);
/* The inputs, in the words of the front door they came through (SpecOptions.from_c_api), for
 * messages. How to give constexpr name a value: "-D BLOCK=..." or "\"BLOCK=...\" in
 * opt.constexprs". */
const char *spec_define_wanted(const SpecOptions *opt, const char *name, Arena *a);
/* A value given: "-D BLOCK" (with_value: "-D BLOCK=64") or "opt.constexprs entry \"BLOCK=64\"". */
const char *spec_define_given(const SpecOptions *opt, const Define *d, bool with_value, Arena *a);
/* "--signature" or "opt.signature". */
const char *spec_signature_name(const SpecOptions *opt);

/* ---- sema.c (and sema_*.c) ------------------------------------------------------------------- */

/* A kernel specialized for one signature and one set of constexpr values, fully typed:
 * func is a clone of the source def in which every reachable Expr has sem set, constexpr ifs are
 * decided (static_taken), static_range loops unrolled, helper calls inlined (call.inlined). */
typedef struct Kernel {
    const Module *module;
    FuncDef *func;
    /* The run-time parameters, in order (constexprs removed): what a launch passes. */
    Param **args;
    int nargs;
} Kernel;

/* Runs sema on one @jit kernel. Errors (all of them, up to diag's limit) go to diag; returns NULL
 * when there was any. */
Kernel *sema_specialize(const Module *m, const SpecOptions *opt, Arena *arena, Diag *diag);

/* Which parameters of f (a function of m) are constexprs, as sema_specialize decides it: out[i]
 * for f->params[i] (annotated tl.constexpr or "constexpr", or with any name m binds to it, such as
 * `from triton.language import constexpr as C`). For the driver, which must not decide by text. */
void sema_constexpr_params(const Module *m, const FuncDef *f, bool *out, Arena *arena);

/* The @jit kernel a SpecOptions.kernel_name picks (NULL: the file's only one, the one no other
 * @jit function calls); NULL with a diagnostic (listing the kernels) otherwise. */
const FuncDef *sema_find_kernel(const Module *m, const char *name, Arena *arena, Diag *diag);
/* The file's kernels: its @jit functions that no other @jit function calls, in source order. */
int sema_entry_kernels(const Module *m, const FuncDef ***out, Arena *arena);

/* ---- random.c: tl.rand and friends, a built-in library of @jit functions ------------------- */

/* The library (rand, randn, randint, randint4x, rand4x, randn4x, philox, philox_impl,
 * uint_to_uniform_float, pair_uniform_to_normal), parsed into arena; NULL with an internal
 * error if it does not parse. */
const Module *random_library(Arena *arena, Diag *diag);
/* Whether tl.NAME is one of the library's public functions; its seed is argument 0 and its
 * counters (offsets) arguments first..last (-1 when it takes none). */
bool random_lookup(const char *name, int *first_counter, int *last_counter);
/* The i-th of those public names, NULL past the last (for "did you mean"). */
const char *random_public_name(int i);

/* ---- autotune.c: @triton.autotune ------------------------------------------------------------ */

/* One triton.Config({...}, num_warps=, num_stages=): its constexprs as -D values ("128",
 * "tl.float16"), in the dict's order. */
typedef struct TuneConfig {
    Define *defines;
    int ndefines;
    int num_warps;  /* 0 when not given */
    int num_stages; /* 0 when not given */
    SrcLoc loc;     /* the triton.Config call */
} TuneConfig;

/* The decorator, evaluated at compile time. Parameter lists hold parameter names. */
typedef struct Autotune {
    TuneConfig *configs;
    int nconfigs;
    const char **key; /* key=[...] */
    int nkey;
    const char **restore_value; /* restore_value=[...] */
    int nrestore;
    const char **reset_to_zero; /* reset_to_zero=[...] */
    int nreset;
    SrcLoc loc; /* the decorator */
    /* set when autotune_read failed because configs= is host Python it cannot evaluate (a
     * comprehension, an `if is_cuda():` helper, a library's lookup): the driver may then set the
     * decorator aside (driver.c read_or_set_aside) */
    bool configs_unevaluated;
} Autotune;

/* Reads kernel f's @triton.autotune(configs=..., key=[...], restore_value=[...],
 * reset_to_zero=[...]): configs is evaluated as the small Python subset config lists are built
 * in (docs/language.md): triton.Config calls in lists, comprehensions, itertools.product, range,
 * module-level names, and calls of this file's functions whose bodies (assignments, for, if,
 * append, return) run on their arguments (seed 2's get_cuda_autotune_config). Every name in key, restore_value and reset_to_zero must be a parameter of f (an error
 * with the caret on the string otherwise). true with out->nconfigs 0 when f has no such decorator;
 * false with diagnostics when it is malformed. spec (NULL: none) gives the host values the configs
 * may look up (SpecOptions.host_env). */
bool autotune_read(const Module *m, const FuncDef *f, const SpecOptions *spec, Autotune *out,
                   Arena *a, Diag *d);
/* "BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, num_warps=8, num_stages=3" (num_* only when given). */
void autotune_config_text(StrBuf *sb, const TuneConfig *c);

/* ---- heuristics.c: @triton.heuristics ------------------------------------------------------- */

/* One entry of a heuristics dict: constexpr parameter `name` gets the value of lambda fn. */
typedef struct Heuristic {
    const char *name;
    const Expr *fn; /* an EX_LAMBDA of one parameter */
    int param;      /* index of the parameter in the kernel's FuncDef */
    SrcLoc loc;     /* the dict key */
    /* the kernel's module: the plain defs a heuristic names or calls (`"BLOCK_K": heur_block_k`,
     * `lambda args: is_even(args["M"], 64)`) are run from it */
    const struct Module *module;
} Heuristic;

typedef struct Heuristics {
    Heuristic *items; /* in evaluation order: decorators top to bottom, each dict in order */
    int n;
    /* set when heuristics_read failed because a decorator's argument is not a dict but host
     * Python (FlagGems' runtime.get_heuristic_config("argmax")): sema may then set it aside */
    bool dict_unread;
} Heuristics;

/* Reads kernel f's @triton.heuristics({...}) / (values={...}) decorators; each key must name a
 * parameter of f and each value be a lambda of one argument (or a module-level name bound to
 * one, or a plain def of one parameter, read as `lambda args: def(args)`). true with out->n 0
 * when there is none. */
bool heuristics_read(const Module *m, const FuncDef *f, Heuristics *out, Arena *a, Diag *d);
/* What args["name"] is when a heuristic runs: true with its value, or false with a reason
 * ("a run-time argument ...") that the error at the subscript quotes. */
typedef bool (*HeurLookup)(void *ctx, const char *name, ConstVal *out, const char **why);
/* Evaluates h's lambda (Python semantics for the subset in heuristics.c); errors point into it. */
bool heuristic_eval(const Heuristic *h, HeurLookup lookup, void *ctx, ConstVal *out, Diag *d);

/* ---- scan.c: what tl.associative_scan's combine function computes ----------------------------- */

/* (ScanCombine is in the builtins section above.) */
/* Reads a @jit combine function of two parameters whose body (after a docstring) is one
 * `return` of one of the ScanCombine forms, on its two parameters in either order. false with
 * *where and *why set otherwise. */
bool scan_combine_of(const FuncDef *f, ScanCombine *out, SrcLoc *where, const char **why);
/* Whether f's combine is `a and b` / `a or b` (SCAN_AND / SCAN_OR on an int1 input only). */
bool scan_combine_is_logical(const FuncDef *f);

/* ---- build_ir.c ------------------------------------------------------------------------------- */

/* Typed AST -> tile IR, in the types sema recorded. Sema reports every error in a kernel, so this
 * returns NULL only on a bug in tric, with an internal error that names the .tri position. */
struct IrFunc *build_ir(const Kernel *k, Arena *arena, Diag *diag);

#endif
