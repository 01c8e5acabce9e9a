/* sema_internal.h: what the files of sema share (frontend/sema*.c only; the rest of tric uses
 * frontend.h's sema section). The state of one specialization (Sema), the environments of names,
 * and the functions one sema file calls in another, a section per file (sema.c's header comment
 * says which file holds which concern). Each function's comment is at its definition. */
#ifndef TRIC_SEMA_INTERNAL_H
#define TRIC_SEMA_INTERNAL_H

#include "frontend/frontend.h"

enum {
    MAX_INLINE_DEPTH = 32,    /* helper inlining nesting */
    MAX_STATIC_UNROLL = 1024, /* tl.static_range iterations */
    MAX_BUILTIN_PARAMS = 12,
    MAX_BLOCK_NUMEL = 1 << 20, /* Triton's TRITON_MAX_TENSOR_NUMEL */
    MAX_EXPANSIONS = 1 << 16,  /* inlined calls + unrolled iterations per kernel: nesting
                                  multiplies them, so bound the total */
};

/* Triton's tl.PropagateNan members (ir.PROPAGATE_NAN): NONE is 0, ALL is 0xFFFF. */
enum { PROPAGATE_NAN_NONE = 0, PROPAGATE_NAN_ALL = 0xFFFF };

/* ---- environments ---------------------------------------------------------------------------- */

typedef enum Partial {
    DEFINED,       /* usable */
    ONE_BRANCH,    /* assigned in only one branch of a run-time if */
    LOOP_LOCAL,    /* first assigned inside a run-time loop body */
    NOT_CONSTEXPR, /* a module global whose value is not a constexpr */
    HOST_DEFAULT,  /* a constexpr parameter given no value whose default does not evaluate at
                      compile time (host Python): failed_alias holds the default */
} Partial;

typedef struct Binding {
    const char *name;
    Sem sem;
    Partial partial;
    SrcLoc where;       /* the if / loop for ONE_BRANCH / LOOP_LOCAL */
    SrcLoc assigned_at; /* the last assignment's target */
    /* NOT_CONSTEXPR globals that name something by a dotted path (erf = libdevice.erff) and
     * failed to resolve, and HOST_DEFAULT parameters' defaults: analysed again, with its errors
     * shown at its line, where a kernel uses it. */
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
    const SpecOptions *opt; /* what the kernel is specialized for; its messages' words */
    Arena *a;
    Diag *diag;
    Env globals;
    FuncCtx *fn;
    const char *tuple_ctx; /* "zeros()'s shape" while analysing a shape argument, for messages */
    int expansions;        /* helper copies + static_range iterations made so far */
    const FuncDef *inline_stack[MAX_INLINE_DEPTH + 1];
    int inline_depth;
    const Module *random_lib; /* random.c's library, parsed on first use */
    /* The tl.max / tl.min call reduce_with_indices made for the values: Triton reduces those in
     * the input's dtype (bf16 promoted), without the widening of a plain max / min. */
    const Expr *values_of_indexed_reduce;
    /* The tl.sum / tl.max / tl.min call tl.reduce became (reduce_with_combine): it reduces in the
     * input's dtype exactly, as the combine function computes. */
    const Expr *reduce_of_combine;
} Sema;

/* ---- sema.c: environments, Sem helpers, annotations ----------------------------------------- */

Binding *env_find(Env *env, const char *name);
void env_set(Sema *s, Env *env, const char *name, Sem sem, SrcLoc at);
Env env_copy(Sema *s, const Env *env);
Sem sem_error(void);
bool is_error(Sem s);
Sem sem_void(void);
Sem sem_value(Type t);
Sem sem_const(ConstVal cv);
Sem sem_int(int64_t v);
Sem sem_float(double v);
Sem sem_bool(bool v);
bool const_is_number(const ConstVal *cv);
bool operand_type(Sem s, Type *t);
bool const_equal(const ConstVal *x, const ConstVal *y);
bool sem_same(Sem x, Sem y);
bool const_truthy(const ConstVal *cv);
const char *tstr(Sema *s, Type t);
const char *shape_str(Sema *s, Type t);
const char *sem_describe(Sema *s, Sem x);
bool is_pow2(int64_t v);
SrcLoc kwname_loc(SrcLoc value_loc, const char *name);
bool expand(Sema *s, SrcLoc loc);
bool annotation_is_constexpr(Sema *s, Expr *ann);

/* ---- sema_const.c: constexpr folding, constexpr functions ----------------------------------- */

double const_as_float(const ConstVal *cv);
int64_t const_as_int(const ConstVal *cv);
int64_t py_floordiv(int64_t a, int64_t b);
Sem fold_binary(Sema *s, SrcLoc loc, BinOp op, ConstVal x, ConstVal y);
Sem constexpr_call(Sema *s, Expr *call, FuncDef *callee, SrcLoc cloc);

/* ---- sema_types.c: Triton's typing rules ---------------------------------------------------- */

bool reject_fp8(Sema *s, SrcLoc loc, const char *what, Type t);
bool computation_type(DType a, bool a_weak, DType b, bool b_weak, bool div_or_mod, DType *out,
                      const char **why);
bool broadcast(Sema *s, SrcLoc loc, Type a, Type b, Type *out);
bool broadcasts_to(Type from, Type to);
Type with_shape(DType dt, bool is_ptr, Type shape);
/* The Sem of a tensor descriptor whose tiles are `block`, a block of pointers
 * (make_tensor_descriptor's result, a host descriptor parameter's): the base pointer, rank
 * shapes and rank strides, int64. */
Sem tensor_desc_sem(Sema *s, Type block, const char *padding);
Sem binary_sems(Sema *s, SrcLoc loc, BinOp op, Sem l, Sem r);
Sem binary_expr(Sema *s, Expr *e);
Sem unary_expr(Sema *s, Expr *e);

/* ---- sema_expr.c: expressions --------------------------------------------------------------- */

bool is_module_name(const char *name);
Sem sem_module(const char *path);
const FuncDef *module_func(const Module *m, const char *name);
Sem name_expr(Sema *s, Expr *e);
const char *dotted_text(Sema *s, const Expr *e);
Sem module_member(Sema *s, Sem mod, const char *name, const char *shown, SrcLoc loc);
Sem sem_type(Type t);
Sem runtime_tuple(Sema *s, Expr *e);
bool scalar_condition(Sema *s, Expr *cond, Sem c, const char *what);
SrcLoc expr_start(const Expr *e);
Sem expr(Sema *s, Expr *e);

/* ---- sema_builtins.c: tl.* builtins: arguments, dispatch ------------------------------------ */

const char *callee_display(Sema *s, Expr *call, Builtin b);
SrcLoc callee_loc(Expr *call);
const char *plural(int n, const char *one, const char *many);
bool bind_builtin_args(Sema *s, Expr *call, Builtin b, Expr *receiver);
bool analyse_args(Sema *s, Expr *call);
Expr *arg(Expr *call, int i);
bool arg_is_none(Expr *call, int i);
SrcLoc arg_loc(Expr *call, int i);
bool const_int_arg(Sema *s, Expr *call, int i, const char *fname, const char *what, int64_t *out);
bool const_bool_arg(Sema *s, Expr *call, int i, const char *fname, const char *what, bool *out);
bool shape_arg(Sema *s, Expr *call, int i, const char *fname, Type *out);
bool value_arg(Sema *s, Expr *call, int i, const char *fname, const char *what, Type *out);
Sem builtin_call(Sema *s, Expr *call, Builtin b, Expr *receiver);

/* ---- the builtins' rules (sema_builtins.c, sema_memory.c) ------------------------------------ */

/* A builtin's sema rule, named by its row of TRIC_BUILTINS: called by builtin_call with the
 * call's arguments bound (call.bound) and analysed and call.resolved allocated; checks them,
 * fills call.resolved with what build_ir.c needs, and returns the call's Sem. fname is how messages
 * name the call ("load()", "x.to()", "libdevice.asin()"). */
typedef Sem BuiltinRule(Sema *s, Expr *call, Builtin b, const char *fname);
#define X(e, name, params, sema_rule, build, doc) BuiltinRule sema_rule;
TRIC_BUILTINS(X)
#undef X

/* ---- sema_stmt.c: statements ---------------------------------------------------------------- */

void block(Sema *s, Block *b, bool tail);

/* ---- sema_inline.c: helper inlining --------------------------------------------------------- */

Sem global_expr(Sema *s, Expr *e);
Expr **bind_call_args(Sema *s, Expr *call, const FuncDef *callee, const char *shown, SrcLoc cloc);
bool bind_default(Sema *s, Expr **bound, int i, const Param *p, const char *shown, SrcLoc cloc);
Sem inline_call(Sema *s, Expr *call, FuncDef *callee, SrcLoc cloc);

#endif
