/* passes_kernels.h: the seed kernels built with the IR builder, for the unit tests of the passes
 * (tests/unit/passes_*.c). Built by hand rather than through the front end so that these tests
 * check the passes alone. Header-only: each test stays one executable. */
#ifndef TRIC_PASSES_KERNELS_H
#define TRIC_PASSES_KERNELS_H

#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

static SrcFile pk_file = {.name = "kernel.tri"};
static inline SrcLoc pk_loc(int line) { return (SrcLoc){.file = &pk_file, .line = line, .col = 5}; }

static inline Type pk_block1(Type elem, int n) { return type_block(elem, 1, (int32_t[]){n}); }
static inline Type pk_block2(Type elem, int m, int n)
{
    return type_block(elem, 2, (int32_t[]){m, n});
}

static inline ValueId pk_op(IrBuilder *b, OpCode code, Type t, ValueId a, ValueId c)
{
    ValueId ops[2] = {a, c};
    IrOp *op = ir_build(b, code, pk_loc(1), ops, c ? 2 : (a ? 1 : 0), &t, 1, 0);
    return op->results[0];
}

static inline ValueId pk_attr_op(IrBuilder *b, OpCode code, Type t, ValueId a, int64_t attr0)
{
    IrOp *op = ir_build(b, code, pk_loc(1), &a, a ? 1 : 0, &t, 1, 0);
    op->attr[0] = attr0;
    return op->results[0];
}

static inline ValueId pk_range(IrBuilder *b, int start, int end)
{
    Type t = pk_block1(type_scalar(DT_I32), end - start);
    IrOp *op = ir_build(b, OP_MAKE_RANGE, pk_loc(1), NULL, 0, &t, 1, 0);
    op->attr[0] = start;
    op->attr[1] = end;
    return op->results[0];
}

/* The load or store whose pointer operand is ptr. */
static inline IrOp *pk_find_mem_op(IrRegion *r, OpCode code, int nth)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        if (op->code == code && nth-- == 0)
            return op;
        for (int k = 0; k < op->nregions; k++) {
            IrOp *in = pk_find_mem_op(&op->regions[k], code, nth);
            if (in)
                return in;
        }
    }
    return NULL;
}

/* Seed 1's vector_add_kernel with BLOCK_SIZE = block:
 *   pid = program_id(0); offsets = pid * BLOCK + arange(0, BLOCK); mask = offsets < n
 *   x = load(x_ptr + offsets, mask); y = load(y_ptr + offsets, mask); store(out + offsets, x + y, mask)
 * ptr_div / n_div: the signature's hints (1 = none). */
static inline IrFunc *pk_vector_add(Arena *arena, int block, int ptr_div, int n_div, int num_warps)
{
    IrFunc *f = ir_func_new(arena, "vector_add_kernel");
    f->num_warps = num_warps;
    IrBuilder b = {.func = f, .region = &f->body, .pos = -1};
    Type i32 = type_scalar(DT_I32);
    ValueId x_ptr = ir_param_add(f, type_ptr(DT_F32), "x_ptr", ptr_div);
    ValueId y_ptr = ir_param_add(f, type_ptr(DT_F32), "y_ptr", ptr_div);
    ValueId o_ptr = ir_param_add(f, type_ptr(DT_F32), "output_ptr", ptr_div);
    ValueId n = ir_param_add(f, i32, "n_elements", n_div);
    Type vi = pk_block1(i32, block), vp = pk_block1(type_ptr(DT_F32), block);
    Type vf = pk_block1(type_scalar(DT_F32), block), vb = pk_block1(type_scalar(DT_I1), block);
    ValueId pid = pk_attr_op(&b, OP_PROGRAM_ID, i32, 0, 0);
    ValueId start = pk_op(&b, OP_MUL, i32, pid, ir_build_const_int(&b, pk_loc(1), i32, block));
    ValueId offs = pk_op(&b, OP_ADD, vi, pk_op(&b, OP_SPLAT, vi, start, 0), pk_range(&b, 0, block));
    ValueId mask = pk_op(&b, OP_CMP_LT, vb, offs, pk_op(&b, OP_SPLAT, vi, n, 0));
    ValueId xp = pk_op(&b, OP_ADDPTR, vp, pk_op(&b, OP_SPLAT, vp, x_ptr, 0), offs);
    ValueId x = pk_op(&b, OP_LOAD, vf, xp, mask);
    ValueId yp = pk_op(&b, OP_ADDPTR, vp, pk_op(&b, OP_SPLAT, vp, y_ptr, 0), offs);
    ValueId y = pk_op(&b, OP_LOAD, vf, yp, mask);
    ValueId sum = pk_op(&b, OP_ADD, vf, x, y);
    ValueId op = pk_op(&b, OP_ADDPTR, vp, pk_op(&b, OP_SPLAT, vp, o_ptr, 0), offs);
    ValueId st[3] = {op, sum, mask};
    ir_build(&b, OP_STORE, pk_loc(1), st, 3, NULL, 0, 0);
    return f;
}

/* base + (rows[:, None] * stride_r + cols[None, :] * stride_c), a <R x C> block of pointers. */
static inline ValueId pk_tile_ptrs(IrBuilder *b, ValueId base, DType elem, ValueId rows, int R,
                                   ValueId stride_r, ValueId cols, int C, ValueId stride_c)
{
    Type i32 = type_scalar(DT_I32);
    Type col_t = pk_block2(i32, R, 1), row_t = pk_block2(i32, 1, C), full = pk_block2(i32, R, C);
    ValueId r2 = pk_op(b, OP_MUL, col_t, pk_attr_op(b, OP_EXPAND_DIMS, col_t, rows, 1),
                       pk_op(b, OP_SPLAT, col_t, stride_r, 0));
    ValueId c2 = pk_op(b, OP_MUL, row_t, pk_attr_op(b, OP_EXPAND_DIMS, row_t, cols, 0),
                       pk_op(b, OP_SPLAT, row_t, stride_c, 0));
    ValueId offs = pk_op(b, OP_ADD, full, pk_op(b, OP_BROADCAST, full, r2, 0),
                         pk_op(b, OP_BROADCAST, full, c2, 0));
    Type pt = pk_block2(type_ptr(elem), R, C);
    return pk_op(b, OP_ADDPTR, pt, pk_op(b, OP_SPLAT, pt, base, 0), offs);
}

/* Seed 2's kernel_matmul body (no grouping), fp16 inputs, fp32 accumulator, BM x BN x BK tiles:
 *   offs_am = pid_m*BM + arange(BM); offs_bn = pid_n*BN + arange(BN); offs_k = arange(BK)
 *   a_ptrs = a_ptr + offs_am[:, None]*stride_am + offs_k[None, :]*stride_ak   (b_ptrs likewise)
 *   acc = zeros; for k in range(0, K/BK): acc += dot(load(a_ptrs + k*BK*stride_ak), load(...))
 *   store(c_ptrs, acc.to(fp16))
 * The unit strides arrive as the constant 1 (":1" in the signature, folded by lowering); the other
 * ints and the pointers carry ":16". */
static inline IrFunc *pk_matmul(Arena *arena, int BM, int BN, int BK, int num_warps)
{
    IrFunc *f = ir_func_new(arena, "kernel_matmul");
    f->num_warps = num_warps;
    IrBuilder b = {.func = f, .region = &f->body, .pos = -1};
    Type i32 = type_scalar(DT_I32);
    ValueId a_ptr = ir_param_add(f, type_ptr(DT_F16), "a_ptr", 16);
    ValueId b_ptr = ir_param_add(f, type_ptr(DT_F16), "b_ptr", 16);
    ValueId c_ptr = ir_param_add(f, type_ptr(DT_F16), "c_ptr", 16);
    ValueId K = ir_param_add(f, i32, "K", 16);
    ValueId stride_am = ir_param_add(f, i32, "stride_am", 16);
    ValueId stride_bk = ir_param_add(f, i32, "stride_bk", 16);
    ValueId stride_cm = ir_param_add(f, i32, "stride_cm", 16);
    ValueId one = ir_build_const_int(&b, pk_loc(1), i32, 1);
    ValueId pid_m = pk_attr_op(&b, OP_PROGRAM_ID, i32, 0, 0);
    ValueId pid_n = pk_attr_op(&b, OP_PROGRAM_ID, i32, 0, 1);
    Type vm = pk_block1(i32, BM), vn = pk_block1(i32, BN);
    ValueId offs_am =
        pk_op(&b, OP_ADD, vm,
              pk_op(&b, OP_SPLAT, vm,
                    pk_op(&b, OP_MUL, i32, pid_m, ir_build_const_int(&b, pk_loc(1), i32, BM)), 0),
              pk_range(&b, 0, BM));
    ValueId offs_bn =
        pk_op(&b, OP_ADD, vn,
              pk_op(&b, OP_SPLAT, vn,
                    pk_op(&b, OP_MUL, i32, pid_n, ir_build_const_int(&b, pk_loc(1), i32, BN)), 0),
              pk_range(&b, 0, BN));
    ValueId offs_k = pk_range(&b, 0, BK);
    ValueId a_ptrs = pk_tile_ptrs(&b, a_ptr, DT_F16, offs_am, BM, stride_am, offs_k, BK, one);
    ValueId b_ptrs = pk_tile_ptrs(&b, b_ptr, DT_F16, offs_k, BK, stride_bk, offs_bn, BN, one);
    Type acc_t = pk_block2(type_scalar(DT_F32), BM, BN);
    ValueId zeros = ir_build_const_float(&b, pk_loc(1), acc_t, 0.0);
    ValueId kt = pk_op(&b, OP_DIV, i32, K, ir_build_const_int(&b, pk_loc(1), i32, BK));
    ValueId for_ops[4] = {ir_build_const_int(&b, pk_loc(1), i32, 0), kt, one, zeros};
    IrOp *loop = ir_build(&b, OP_FOR, pk_loc(2), for_ops, 4, &acc_t, 1, 1);
    IrRegion *body = &loop->regions[0];
    ValueId k = ir_region_add_arg(f, body, i32, "k");
    ValueId acc = ir_region_add_arg(f, body, acc_t, "accumulator");
    IrBuilder in = {.func = f, .region = body, .pos = -1};
    Type ta = pk_block2(type_scalar(DT_F16), BM, BK), tb = pk_block2(type_scalar(DT_F16), BK, BN);
    Type pa = pk_block2(type_ptr(DT_F16), BM, BK), pb = pk_block2(type_ptr(DT_F16), BK, BN);
    ValueId ka = pk_op(&in, OP_MUL, i32, k, ir_build_const_int(&in, pk_loc(3), i32, BK));
    ValueId kb = pk_op(&in, OP_MUL, i32, ka, stride_bk);
    Type ia = pk_block2(i32, BM, BK), ib = pk_block2(i32, BK, BN);
    ValueId a = pk_op(&in, OP_LOAD, ta,
                      pk_op(&in, OP_ADDPTR, pa, a_ptrs, pk_op(&in, OP_SPLAT, ia, ka, 0)), 0);
    ValueId bv = pk_op(&in, OP_LOAD, tb,
                       pk_op(&in, OP_ADDPTR, pb, b_ptrs, pk_op(&in, OP_SPLAT, ib, kb, 0)), 0);
    ValueId dot_ops[3] = {a, bv, acc};
    ValueId d = ir_build(&in, OP_DOT, pk_loc(4), dot_ops, 3, &acc_t, 1, 0)->results[0];
    ir_build(&in, OP_YIELD, pk_loc(4), &d, 1, NULL, 0, 0);
    Type tc = pk_block2(type_scalar(DT_F16), BM, BN);
    ValueId c = pk_op(&b, OP_CAST, tc, loop->results[0], 0);
    ValueId c_ptrs = pk_tile_ptrs(&b, c_ptr, DT_F16, offs_am, BM, stride_cm, offs_bn, BN, one);
    ValueId st[2] = {c_ptrs, c};
    ir_build(&b, OP_STORE, pk_loc(5), st, 2, NULL, 0, 0);
    return f;
}

/* The layout of v, or a zeroed one for none. */
static inline Layout pk_layout(const IrFunc *f, ValueId v)
{
    Layout none = {.kind = LAYOUT_NONE};
    int l = f->values[v].layout;
    return l > 0 && l < f->nlayouts ? f->layouts[l] : none;
}

static inline bool pk_blocked_is(const Layout *l, int rank, const int *spt, const int *tpw,
                                 const int *wpc, const int *order)
{
    if (l->kind != LAYOUT_BLOCKED || l->rank != rank)
        return false;
    for (int d = 0; d < rank; d++)
        if (l->blocked.size_per_thread[d] != spt[d] || l->blocked.threads_per_warp[d] != tpw[d] ||
            l->blocked.warps_per_cta[d] != wpc[d] || l->blocked.order[d] != order[d])
            return false;
    return true;
}

static inline const char *pk_layout_str(const IrFunc *f, ValueId v, StrBuf *sb)
{
    strbuf_clear(sb);
    ir_print_layout(sb, f, f->values[v].layout);
    return sb->data ? sb->data : "";
}

#endif
