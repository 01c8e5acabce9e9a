/* passes_axis_info.c: axis info on the seed kernels' pointer expressions (Triton's AxisInfo
 * numbers for the same kernels), and axis_vector_width. */
#include "passes_kernels.h"

static const AxisInfo *axis_of(const IrFunc *f, ValueId v) { return f->values[v].axis; }

static void test_vector_add(int ptr_div, int n_div, int64_t want_div, int64_t want_mask_const)
{
    Arena *arena = arena_new();
    IrFunc *f = pk_vector_add(arena, 1024, ptr_div, n_div, 4);
    Diag d = {0};
    CHECK(pass_axis_info(f, &(PassOptions){.num_warps = 4}, &d), "axis info failed");
    IrOp *load = pk_find_mem_op(&f->body, OP_LOAD, 0);
    const AxisInfo *p = axis_of(f, load->operands[0]);
    const AxisInfo *m = axis_of(f, load->operands[1]);
    CHECK(p && p->contiguity[0] == 1024, "pointer contiguity %lld, want 1024",
          p ? (long long)p->contiguity[0] : -1LL);
    CHECK(p && p->divisibility[0] == want_div,
          "pointer divisibility %lld bytes, want %lld (ptr :%d)",
          p ? (long long)p->divisibility[0] : -1LL, (long long)want_div, ptr_div);
    CHECK(p && p->constancy[0] == 1, "pointer constancy %lld",
          p ? (long long)p->constancy[0] : -1LL);
    /* offsets < n: constant over aligned runs of 16 when n is a multiple of 16 (Triton's cmp rule). */
    CHECK(m && m->constancy[0] == want_mask_const, "mask constancy %lld, want %lld",
          m ? (long long)m->constancy[0] : -1LL, (long long)want_mask_const);
    /* offsets = pid*1024 + arange: divisible by 1024 at the start of each run. */
    IrOp *addptr = f->values[load->operands[0]].def;
    const AxisInfo *o = axis_of(f, addptr->operands[1]);
    CHECK(o && o->divisibility[0] == 1024 && o->contiguity[0] == 1024,
          "offsets contiguity %lld divisibility %lld", o ? (long long)o->contiguity[0] : -1LL,
          o ? (long long)o->divisibility[0] : -1LL);
    /* Floats carry nothing. */
    CHECK(axis_of(f, load->results[0]) == NULL, "a float load has axis info");
    diag_free(&d);
    arena_free(arena);
}

static void test_matmul(void)
{
    Arena *arena = arena_new();
    IrFunc *f = pk_matmul(arena, 64, 64, 32, 4);
    Diag d = {0};
    CHECK(pass_axis_info(f, &(PassOptions){.num_warps = 4}, &d), "axis info failed");
    IrOp *la = pk_find_mem_op(&f->body, OP_LOAD, 0), *lb = pk_find_mem_op(&f->body, OP_LOAD, 1);
    const AxisInfo *a = axis_of(f, la->operands[0]), *b = axis_of(f, lb->operands[0]);
    /* a_ptrs + k*BK: rows are stride_am (:16) apart, so along dim 0 nothing is contiguous but
     * every row start is 16 elements * 2 bytes aligned; along dim 1 runs of BK = 32, 16 bytes. */
    CHECK(a && a->contiguity[0] == 1 && a->contiguity[1] == 32, "A contiguity [%lld, %lld]",
          a ? (long long)a->contiguity[0] : -1LL, a ? (long long)a->contiguity[1] : -1LL);
    CHECK(a && a->divisibility[1] == 16, "A divisibility along dim 1: %lld bytes, want 16",
          a ? (long long)a->divisibility[1] : -1LL);
    /* Down a column the pointers are a_ptr + m*stride_am + k: only 2-byte aligned for odd k. */
    CHECK(a && a->divisibility[0] == 2, "A divisibility along dim 0: %lld bytes, want 2",
          a ? (long long)a->divisibility[0] : -1LL);
    CHECK(b && b->contiguity[1] == 64 && b->contiguity[0] == 1, "B contiguity [%lld, %lld]",
          b ? (long long)b->contiguity[0] : -1LL, b ? (long long)b->contiguity[1] : -1LL);
    /* The induction variable k of range(0, K/BK, 1): divisible by gcd(0's, 1's) = 1. */
    IrOp *loop = NULL;
    for (int i = 0; i < f->body.nops; i++)
        if (f->body.ops[i]->code == OP_FOR)
            loop = f->body.ops[i];
    CHECK(loop && axis_of(f, loop->regions[0].args[0]) &&
              axis_of(f, loop->regions[0].args[0])->divisibility[0] == 1,
          "iv divisibility");
    diag_free(&d);
    arena_free(arena);
}

/* Loop-carried pointers (seed 1: a_ptrs += BK * stride_ak) keep what both the init and the
 * increment prove: a 16-aligned base advanced by multiples of 64 elements stays 16-aligned. */
static void test_loop_carried_pointer(void)
{
    Arena *arena = arena_new();
    IrFunc *f = ir_func_new(arena, "loop");
    IrBuilder b = {.func = f, .region = &f->body, .pos = -1};
    Type i32 = type_scalar(DT_I32);
    ValueId p = ir_param_add(f, type_ptr(DT_F32), "p", 16);
    ValueId n = ir_param_add(f, i32, "n", 1);
    Type vp = pk_block1(type_ptr(DT_F32), 128), vi = pk_block1(i32, 128);
    ValueId ptrs = pk_op(&b, OP_ADDPTR, vp, pk_op(&b, OP_SPLAT, vp, p, 0), pk_range(&b, 0, 128));
    ValueId ops[4] = {ir_build_const_int(&b, pk_loc(1), i32, 0), n,
                      ir_build_const_int(&b, pk_loc(1), i32, 1), ptrs};
    IrOp *loop = ir_build(&b, OP_FOR, pk_loc(1), ops, 4, &vp, 1, 1);
    ir_region_add_arg(f, &loop->regions[0], i32, "i");
    ValueId arg = ir_region_add_arg(f, &loop->regions[0], vp, "ptrs");
    IrBuilder in = {.func = f, .region = &loop->regions[0], .pos = -1};
    ValueId step = pk_op(&in, OP_SPLAT, vi, ir_build_const_int(&in, pk_loc(1), i32, 64), 0);
    ValueId next = pk_op(&in, OP_ADDPTR, vp, arg, step);
    ir_build(&in, OP_YIELD, pk_loc(1), &next, 1, NULL, 0, 0);
    Diag d = {0};
    CHECK(pass_axis_info(f, &(PassOptions){0}, &d), "axis info failed");
    const AxisInfo *a = axis_of(f, arg);
    CHECK(a && a->contiguity[0] == 128 && a->divisibility[0] == 16,
          "iter arg: contiguity %lld div %lld", a ? (long long)a->contiguity[0] : -1LL,
          a ? (long long)a->divisibility[0] : -1LL);
    const AxisInfo *r = axis_of(f, loop->results[0]);
    CHECK(r && r->divisibility[0] == 16, "loop result divisibility %lld",
          r ? (long long)r->divisibility[0] : -1LL);
    /* Advancing by 1 element breaks the 16-byte alignment: the meet must see it. */
    IrOp *c = f->values[step].def->operands[0] > 0 ? f->values[f->values[step].def->operands[0]].def
                                                   : NULL;
    c->attr[0] = 1;
    CHECK(pass_axis_info(f, &(PassOptions){0}, &d), "axis info failed");
    a = axis_of(f, arg);
    CHECK(a && a->divisibility[0] == 4, "iter arg advanced by 1: divisibility %lld, want 4",
          a ? (long long)a->divisibility[0] : -1LL);
    diag_free(&d);
    arena_free(arena);
}

static void test_hints_and_rem(void)
{
    Arena *arena = arena_new();
    IrFunc *f = ir_func_new(arena, "hints");
    IrBuilder b = {.func = f, .region = &f->body, .pos = -1};
    Type i32 = type_scalar(DT_I32);
    ValueId x = ir_param_add(f, i32, "x", 1);
    ValueId m = ir_param_add(f, i32, "m", 16);
    Type vi = pk_block1(i32, 128);
    /* (x + arange(128)) % m with m :16: runs of 16 survive the modulo (Triton's rem rule). */
    ValueId r = pk_op(&b, OP_ADD, vi, pk_op(&b, OP_SPLAT, vi, x, 0), pk_range(&b, 0, 128));
    ValueId hinted = pk_attr_op(&b, OP_MULTIPLE_OF, vi, r, 8);
    ValueId mod = pk_op(&b, OP_REM, vi, pk_range(&b, 0, 128), pk_op(&b, OP_SPLAT, vi, m, 0));
    ValueId q = pk_op(&b, OP_DIV, vi, pk_range(&b, 0, 128),
                      pk_op(&b, OP_SPLAT, vi, ir_build_const_int(&b, pk_loc(1), i32, 4), 0));
    Diag d = {0};
    CHECK(pass_axis_info(f, &(PassOptions){0}, &d), "axis info failed");
    CHECK(axis_of(f, r)->divisibility[0] == 1 && axis_of(f, r)->contiguity[0] == 128,
          "x + arange: div %lld contig %lld", (long long)axis_of(f, r)->divisibility[0],
          (long long)axis_of(f, r)->contiguity[0]);
    CHECK(axis_of(f, hinted)->divisibility[0] == 8, "multiple_of(8): %lld",
          (long long)axis_of(f, hinted)->divisibility[0]);
    CHECK(axis_of(f, mod)->contiguity[0] == 16, "arange %% m:16 contiguity %lld",
          (long long)axis_of(f, mod)->contiguity[0]);
    CHECK(axis_of(f, q)->constancy[0] == 4, "arange / 4 constancy %lld",
          (long long)axis_of(f, q)->constancy[0]);
    diag_free(&d);
    arena_free(arena);
}

int main(void)
{
    test_vector_add(16, 16, 16, 16);
    test_vector_add(1, 1, 4, 1);
    test_matmul();
    test_loop_carried_pointer();
    test_hints_and_rem();
    if (test_failures)
        printf("%d failure(s)\n", test_failures);
    else
        printf("ok\n");
    return test_failures ? 1 : 0;
}
