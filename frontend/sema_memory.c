/* sema_memory.c: the builtins that address memory. Block pointers (tl.make_block_ptr,
 * tl.advance; Triton's semantic.make_block_ptr), tensor descriptors (tl.make_tensor_descriptor,
 * desc.load, desc.store), tl.load / tl.store on pointers and blocks of pointers (masks, other),
 * and the atomics (sem= and scope=). */
#include "frontend/sema_internal.h"
#include "ir/ir.h" /* the libdevice functions (TRIC_LIBDEVICE_FNS), memory orders */

#include <string.h>

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
Sem make_block_ptr_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
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
Sem advance_builtin(Sema *s, Expr *call, Builtin bi, const char *fname)
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
        call->call.resolved->boundary_dims |= 1u << d->i;
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
    call->call.resolved->pad_nan = !strcmp(pad, "nan");
    return sem_value(with_shape(bt.dtype, false, bt));
}

/* A store's value (argument 1, of type v): numbers, broadcastable to the target's shape (what,
 * as the message names it: "pointer's", "block pointer's"); false with a diagnostic. */
static bool store_value_fits(Sema *s, Expr *call, const char *fname, Type v, Type target,
                             const char *what)
{
    if (v.is_ptr) {
        diag_error(s->diag, arg_loc(call, 1), "%s cannot store pointers (%s)", fname, tstr(s, v));
        return false;
    }
    if (!broadcasts_to(v, target)) {
        diag_error(s->diag, arg_loc(call, 1),
                   "%s's value of shape %s cannot be broadcast to the %s shape %s", fname,
                   shape_str(s, v), what, shape_str(s, target));
        return false;
    }
    return true;
}

static Sem block_ptr_store(Sema *s, Expr *call, const char *fname)
{
    Type v;
    if (!value_arg(s, call, 1, fname, "value", &v))
        return sem_error();
    Type bt = arg(call, 0)->sem.type;
    if (!store_value_fits(s, call, fname, v, bt, "block pointer's"))
        return sem_error();
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
Sem make_tensor_desc_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
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
    return tensor_desc_sem(s, block, pad);
}

Sem tensor_desc_sem(Sema *s, Type block, const char *padding)
{
    int r = block.rank;
    Sem d = {.kind = SEM_TUPLE,
             .tensor_desc = true,
             .type = block,
             .nelems = 1 + 2 * r,
             .cv = {.kind = CV_STR, .s = padding}};
    d.elems = arena_alloc(s->a, (size_t)d.nelems * sizeof(Sem));
    d.elems[0] = sem_value(type_ptr(block.dtype));
    for (int i = 1; i < d.nelems; i++)
        d.elems[i] = sem_value(type_scalar(DT_I64));
    return d;
}

/* desc.load(offsets) / desc.store(offsets, value) (and tl.load_tensor_descriptor /
 * tl.store_tensor_descriptor): offsets one int per dim. */
Sem desc_access_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
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
Sem isinstance_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
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

Sem load_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
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

Sem store_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
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
    if (!store_value_fits(s, call, fname, v, p, "pointer's"))
        return sem_error();
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
    if (is_sem)
        call->call.resolved->mem_sem = ms;
    else
        call->call.resolved->mem_scope = sc;
    return true;
}

/* tl.atomic_{add,max,min,and,or,xor,xchg}(pointer, val, mask, sem, scope) and
 * tl.atomic_cas(pointer, cmp, val, sem, scope), with Triton's rules (semantic.py
 * atom_red_typechecking_impl, atomic_max, atomic_cas): val (and cmp) and mask broadcast to the
 * pointer's shape and val is cast to the pointee; 32- and 64-bit elements, fp16 and bf16 only for
 * add; max and min on ints, fp32 and fp64; and/or/xor on ints; cas on 16, 32 or 64 bits. The
 * result is the old values, in the pointer's shape. */
Sem atomic_builtin(Sema *s, Expr *call, Builtin b, const char *fname)
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
    call->call.resolved->mem_sem = MEM_SEM_ACQ_REL;
    call->call.resolved->mem_scope = MEM_SCOPE_GPU;
    if (!atomic_string_arg(s, call, 3, fname, "sem", true))
        ok = false;
    if (!atomic_string_arg(s, call, 4, fname, "scope", false))
        ok = false;
    if (!ok)
        return sem_error();
    return sem_value(with_shape(dt, false, p));
}
