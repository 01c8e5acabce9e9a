/* interp_test.h: helpers shared by the interpreter's unit tests (tests/unit/interp_*.c): build
 * small kernels with the IR builder and run them through interp_run. Header-only, so that each
 * test stays one executable. */
#ifndef TRIC_INTERP_TEST_H
#define TRIC_INTERP_TEST_H

#include "ir/ir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* One kernel under construction. */
typedef struct Kernel {
    Arena *arena;
    IrFunc *f;
    IrBuilder b;
    SrcFile file;
} Kernel;

static inline Kernel *kernel_new(const char *file_name, const char *fn_name)
{
    Kernel *k = calloc(1, sizeof *k);
    k->arena = arena_new();
    k->f = ir_func_new(k->arena, fn_name);
    k->b = (IrBuilder){.func = k->f, .region = &k->f->body, .pos = -1};
    k->file = (SrcFile){.name = file_name};
    return k;
}

static inline void kernel_free(Kernel *k)
{
    arena_free(k->arena);
    free(k);
}

static inline SrcLoc at_line(Kernel *k, int line)
{
    return (SrcLoc){.file = &k->file, .line = line, .col = 5};
}

static inline Type block1(DType d, int n)
{
    int32_t s[1] = {n};
    return type_block(type_scalar(d), 1, s);
}

static inline Type block2(DType d, int m, int n)
{
    int32_t s[2] = {m, n};
    return type_block(type_scalar(d), 2, s);
}

static inline Type ptr_block(Type shape, DType pointee)
{
    Type t = shape;
    t.dtype = pointee;
    t.is_ptr = true;
    return t;
}

static inline Type with_dtype(Type t, DType d)
{
    t.dtype = d;
    t.is_ptr = false;
    return t;
}

/* Op shorthands at line 1 unless given. */
static inline ValueId op1(Kernel *k, OpCode c, Type t, ValueId a)
{
    return ir_build_unary(&k->b, c, at_line(k, 1), t, a);
}
static inline ValueId op2(Kernel *k, OpCode c, Type t, ValueId a, ValueId b)
{
    return ir_build_binary(&k->b, c, at_line(k, 1), t, a, b);
}
static inline ValueId op3(Kernel *k, OpCode c, Type t, ValueId a, ValueId b, ValueId d)
{
    ValueId ops[3] = {a, b, d};
    return ir_build(&k->b, c, at_line(k, 1), ops, 3, &t, 1, 0)->results[0];
}
static inline ValueId cint(Kernel *k, Type t, int64_t v)
{
    return ir_build_const_int(&k->b, at_line(k, 1), t, v);
}
static inline ValueId cfloat(Kernel *k, Type t, double v)
{
    return ir_build_const_float(&k->b, at_line(k, 1), t, v);
}

static inline ValueId make_range(Kernel *k, int lo, int hi)
{
    Type t = block1(DT_I32, hi - lo);
    IrOp *op = ir_build(&k->b, OP_MAKE_RANGE, at_line(k, 1), NULL, 0, &t, 1, 0);
    op->attr[0] = lo;
    op->attr[1] = hi;
    return op->results[0];
}

static inline ValueId program_id(Kernel *k, int axis)
{
    Type t = type_scalar(DT_I32);
    IrOp *op = ir_build(&k->b, OP_PROGRAM_ID, at_line(k, 1), NULL, 0, &t, 1, 0);
    op->attr[0] = axis;
    return op->results[0];
}

/* a with a dim of size 1 inserted at dim */
static inline ValueId expand_dims(Kernel *k, ValueId a, int dim)
{
    Type t = ir_type(k->f, a);
    for (int d = t.rank; d > dim; d--)
        t.shape[d] = t.shape[d - 1];
    t.shape[dim] = 1;
    t.rank++;
    IrOp *op = ir_build(&k->b, OP_EXPAND_DIMS, at_line(k, 1), &a, 1, &t, 1, 0);
    op->attr[0] = dim;
    return op->results[0];
}

/* ptr (scalar) + offsets (a block): splat, then addptr. */
static inline ValueId ptr_plus(Kernel *k, ValueId ptr, ValueId offsets)
{
    Type ot = ir_type(k->f, offsets);
    Type pt = ptr_block(ot, ir_type(k->f, ptr).dtype);
    ValueId p = ot.rank ? op1(k, OP_SPLAT, pt, ptr) : ptr;
    return op2(k, OP_ADDPTR, pt, p, offsets);
}

static inline ValueId load(Kernel *k, int line, ValueId ptrs, ValueId mask, ValueId other)
{
    Type pt = ir_type(k->f, ptrs);
    Type rt = with_dtype(pt, pt.dtype);
    ValueId ops[3] = {ptrs, mask, other};
    int n = other ? 3 : mask ? 2 : 1;
    return ir_build(&k->b, OP_LOAD, at_line(k, line), ops, n, &rt, 1, 0)->results[0];
}

static inline void store(Kernel *k, int line, ValueId ptrs, ValueId value, ValueId mask)
{
    ValueId ops[3] = {ptrs, value, mask};
    ir_build(&k->b, OP_STORE, at_line(k, line), ops, mask ? 3 : 2, NULL, 0, 0);
}

static inline bool run_kernel(Kernel *k, int gx, const InterpArg *args, int nargs,
                              const InterpBuffer *bufs, int nbufs, StrBuf *err)
{
    InterpLaunch l = {
        .grid = {gx, 1, 1}, .args = args, .nargs = nargs, .buffers = bufs, .nbuffers = nbufs};
    strbuf_clear(err);
    return interp_run(k->f, &l, err);
}

static inline InterpBuffer buf_of(const void *p, size_t bytes)
{
    return (InterpBuffer){(uint64_t)(uintptr_t)p, bytes};
}
static inline InterpArg arg_ptr(const void *p)
{
    return (InterpArg){.ptr = (uint64_t)(uintptr_t)p};
}
static inline InterpArg arg_int(int64_t v) { return (InterpArg){.i = v}; }

static inline bool contains(const StrBuf *sb, const char *needle)
{
    return sb->data && strstr(sb->data, needle);
}

/* IEEE half -> float, independently of the interpreter (for references). */
static inline float ref_half_to_float(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0    ? ldexpf((float)m, -24)
              : e == 31 ? (m ? NAN : INFINITY)
                        : ldexpf((float)(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

#endif
