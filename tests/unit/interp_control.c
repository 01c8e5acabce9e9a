/* interp_control.c: structured control flow (for with iter args and negative steps, if, while),
 * shape ops (trans, broadcast, expand_dims, reshape), reductions and argmax/argmin, and dot
 * (fp16/bf16/fp32 -> fp32, int8 -> int32) against plain C references; a persistent launch's
 * programs, order, flag waits and flags. */
#include "interp_test.h"

/* ---- building helpers ---------------------------------------------------------------------- */

static Type scalar_i32(void) { return type_scalar(DT_I32); }
static ValueId ci(Kernel *k, int64_t v) { return cint(k, scalar_i32(), v); }

/* out[offset + i] = value[i] for a block value, out[offset] = value for a scalar. */
static void store_at(Kernel *k, ValueId out, int offset, ValueId value)
{
    Type t = ir_type(k->f, value);
    if (t.rank == 0) {
        store(k, 1, op2(k, OP_ADDPTR, ir_type(k->f, out), out, ci(k, offset)), value, 0);
        return;
    }
    int64_t n = type_numel(t);
    ValueId flat = t.rank == 1 ? value : op1(k, OP_RESHAPE, block1(t.dtype, (int)n), value);
    store(k, 1, ptr_plus(k, out, make_range(k, offset, offset + (int)n)), flat, 0);
}

/* A for op with its region args made; the builder is left inside its body. */
static IrOp *for_begin(Kernel *k, IrBuilder *saved, ValueId lo, ValueId hi, ValueId step,
                       const ValueId *inits, int n)
{
    ValueId ops[8] = {lo, hi, step};
    Type types[8];
    for (int i = 0; i < n; i++) {
        ops[3 + i] = inits[i];
        types[i] = ir_type(k->f, inits[i]);
    }
    IrOp *loop = ir_build(&k->b, OP_FOR, at_line(k, 2), ops, 3 + n, types, n, 1);
    ir_region_add_arg(k->f, &loop->regions[0], ir_type(k->f, lo), "i");
    for (int i = 0; i < n; i++)
        ir_region_add_arg(k->f, &loop->regions[0], types[i], "acc");
    *saved = k->b;
    k->b.region = &loop->regions[0];
    k->b.pos = -1;
    return loop;
}

static void region_end(Kernel *k, IrBuilder *saved, OpCode term, const ValueId *vals, int n)
{
    ir_build(&k->b, term, at_line(k, 3), vals, n, NULL, 0, 0);
    k->b = *saved;
}

static ValueId region_arg(IrOp *op, int region, int i) { return op->regions[region].args[i]; }

/* ---- control flow ---------------------------------------------------------------------------- */

static void test_for(StrBuf *err)
{
    Kernel *k = kernel_new("for.tri", "loops");
    ValueId out = ir_param_add(k->f, type_ptr(DT_I32), "out", 1);
    ValueId n = ir_param_add(k->f, scalar_i32(), "n", 1);
    Type s = scalar_i32();
    IrBuilder saved;

    /* sum of range(0, n) */
    ValueId zero = ci(k, 0);
    IrOp *l1 = for_begin(k, &saved, ci(k, 0), n, ci(k, 1), &zero, 1);
    ValueId next = op2(k, OP_ADD, s, region_arg(l1, 0, 1), region_arg(l1, 0, 0));
    region_end(k, &saved, OP_YIELD, &next, 1);
    store_at(k, out, 0, l1->results[0]);

    /* range(10, 0, -3) = 10, 7, 4, 1: count and sum */
    ValueId inits2[2] = {ci(k, 0), ci(k, 0)};
    IrOp *l2 = for_begin(k, &saved, ci(k, 10), ci(k, 0), ci(k, -3), inits2, 2);
    ValueId y2[2] = {op2(k, OP_ADD, s, region_arg(l2, 0, 1), ci(k, 1)),
                     op2(k, OP_ADD, s, region_arg(l2, 0, 2), region_arg(l2, 0, 0))};
    region_end(k, &saved, OP_YIELD, y2, 2);
    store_at(k, out, 1, l2->results[0]);
    store_at(k, out, 2, l2->results[1]);

    /* yield (b, a): three swaps of (1, 2) */
    ValueId inits3[2] = {ci(k, 1), ci(k, 2)};
    IrOp *l3 = for_begin(k, &saved, ci(k, 0), ci(k, 3), ci(k, 1), inits3, 2);
    ValueId y3[2] = {region_arg(l3, 0, 2), region_arg(l3, 0, 1)};
    region_end(k, &saved, OP_YIELD, y3, 2);
    store_at(k, out, 3, l3->results[0]);
    store_at(k, out, 4, l3->results[1]);

    /* zero trips: range(5, 5) and range(0, 5, -1) keep the inits */
    ValueId init4 = ci(k, 42);
    IrOp *l4 = for_begin(k, &saved, ci(k, 5), ci(k, 5), ci(k, 1), &init4, 1);
    ValueId y4 = ci(k, -1);
    region_end(k, &saved, OP_YIELD, &y4, 1);
    IrOp *l5 = for_begin(k, &saved, ci(k, 0), ci(k, 5), ci(k, -1), &l4->results[0], 1);
    ValueId y5 = ci(k, -2);
    region_end(k, &saved, OP_YIELD, &y5, 1);
    store_at(k, out, 5, l5->results[0]);

    /* nested: for i in range(4): for j in range(i): acc += 1  -> 6 */
    ValueId init6 = ci(k, 0);
    IrOp *outer = for_begin(k, &saved, ci(k, 0), ci(k, 4), ci(k, 1), &init6, 1);
    IrBuilder saved_inner;
    ValueId oacc = region_arg(outer, 0, 1);
    IrOp *inner = for_begin(k, &saved_inner, ci(k, 0), region_arg(outer, 0, 0), ci(k, 1), &oacc, 1);
    ValueId y6 = op2(k, OP_ADD, s, region_arg(inner, 0, 1), ci(k, 1));
    region_end(k, &saved_inner, OP_YIELD, &y6, 1);
    region_end(k, &saved, OP_YIELD, &inner->results[0], 1);
    store_at(k, out, 6, outer->results[0]);

    /* a block iter arg: acc <4> += range(4) three times -> 3 * [0, 1, 2, 3] */
    Type b4 = block1(DT_I32, 4);
    ValueId init7 = cint(k, b4, 0);
    IrOp *l7 = for_begin(k, &saved, ci(k, 0), ci(k, 3), ci(k, 1), &init7, 1);
    ValueId y7 = op2(k, OP_ADD, b4, region_arg(l7, 0, 1), make_range(k, 0, 4));
    region_end(k, &saved, OP_YIELD, &y7, 1);
    store_at(k, out, 7, l7->results[0]);

    /* i64 range(INT64_MIN, INT64_MAX, 2^62): a span of 2^64 - 1 takes 4 trips, no overflow */
    Type l = type_scalar(DT_I64);
    ValueId init8 = ci(k, 0);
    IrOp *l8 = for_begin(k, &saved, cint(k, l, INT64_MIN), cint(k, l, INT64_MAX),
                         cint(k, l, INT64_C(1) << 62), &init8, 1);
    ValueId y8 = op2(k, OP_ADD, s, region_arg(l8, 0, 1), ci(k, 1));
    region_end(k, &saved, OP_YIELD, &y8, 1);
    store_at(k, out, 11, l8->results[0]);

    int32_t o[12] = {0};
    InterpArg args[2] = {arg_ptr(o), arg_int(100)};
    InterpBuffer bufs[1] = {buf_of(o, sizeof o)};
    CHECK(run_kernel(k, 1, args, 2, bufs, 1, err), "for: %s", err->data);
    int32_t want[12] = {4950, 4, 22, 2, 1, 42, 6, 0, 3, 6, 9, 4};
    for (int i = 0; i < 12; i++)
        CHECK(o[i] == want[i], "for out[%d] = %d, want %d", i, o[i], want[i]);
    kernel_free(k);
}

static void test_for_step_zero(StrBuf *err)
{
    Kernel *k = kernel_new("step.tri", "step_zero");
    ValueId out = ir_param_add(k->f, type_ptr(DT_I32), "out", 1);
    ValueId step = ir_param_add(k->f, scalar_i32(), "step", 1);
    IrBuilder saved;
    ValueId init = ci(k, 0);
    IrOp *l = for_begin(k, &saved, ci(k, 0), ci(k, 10), step, &init, 1);
    ValueId y = region_arg(l, 0, 1);
    region_end(k, &saved, OP_YIELD, &y, 1);
    store_at(k, out, 0, l->results[0]);
    int32_t o[1];
    InterpArg args[2] = {arg_ptr(o), arg_int(0)};
    InterpBuffer bufs[1] = {buf_of(o, sizeof o)};
    CHECK(!run_kernel(k, 1, args, 2, bufs, 1, err), "step 0 must fail");
    CHECK(contains(err, "step.tri:2: for loop with step 0 in program (0, 0, 0)"), "%s", err->data);
    kernel_free(k);
}

static void test_if(StrBuf *err)
{
    Kernel *k = kernel_new("if.tri", "branches");
    ValueId out = ir_param_add(k->f, type_ptr(DT_I32), "out", 1);
    Type s = scalar_i32();
    ValueId pid = program_id(k, 0);
    ValueId c = op2(k, OP_CMP_EQ, type_scalar(DT_I1), pid, ci(k, 0));
    IrOp *br = ir_build(&k->b, OP_IF, at_line(k, 4), &c, 1, &s, 1, 2);
    IrBuilder saved = k->b;
    k->b.region = &br->regions[0];
    ValueId ten = ci(k, 10);
    ir_build(&k->b, OP_YIELD, at_line(k, 5), &ten, 1, NULL, 0, 0);
    k->b.region = &br->regions[1];
    ValueId twenty = op2(k, OP_ADD, s, ci(k, 20), pid);
    ir_build(&k->b, OP_YIELD, at_line(k, 6), &twenty, 1, NULL, 0, 0);
    k->b = saved;
    store(k, 7, op2(k, OP_ADDPTR, type_ptr(DT_I32), out, pid), br->results[0], 0);
    /* if pid == 2: out[3] = 99 (no else, no results) */
    ValueId c2 = op2(k, OP_CMP_EQ, type_scalar(DT_I1), pid, ci(k, 2));
    IrOp *br2 = ir_build(&k->b, OP_IF, at_line(k, 8), &c2, 1, NULL, 0, 1);
    k->b.region = &br2->regions[0];
    store_at(k, out, 3, ci(k, 99));
    ir_build(&k->b, OP_YIELD, at_line(k, 9), NULL, 0, NULL, 0, 0);
    k->b = saved;
    int32_t o[4] = {0};
    InterpArg args[1] = {arg_ptr(o)};
    InterpBuffer bufs[1] = {buf_of(o, sizeof o)};
    CHECK(run_kernel(k, 3, args, 1, bufs, 1, err), "if: %s", err->data);
    CHECK(o[0] == 10 && o[1] == 21 && o[2] == 22 && o[3] == 99, "if: %d %d %d %d", o[0], o[1], o[2],
          o[3]);
    kernel_free(k);
}

/* while n != 1: n = n % 2 == 0 ? n / 2 : 3 n + 1; steps += 1   (27 takes 111 steps) */
static void test_while(StrBuf *err)
{
    Kernel *k = kernel_new("while.tri", "collatz");
    ValueId out = ir_param_add(k->f, type_ptr(DT_I32), "out", 1);
    ValueId start = ir_param_add(k->f, scalar_i32(), "start", 1);
    Type s = scalar_i32(), b = type_scalar(DT_I1);
    ValueId inits[2] = {start, ci(k, 0)};
    Type types[2] = {s, s};
    IrOp *w = ir_build(&k->b, OP_WHILE, at_line(k, 3), inits, 2, types, 2, 2);
    ValueId n0 = ir_region_add_arg(k->f, &w->regions[0], s, "n");
    ValueId s0 = ir_region_add_arg(k->f, &w->regions[0], s, "steps");
    ValueId n1 = ir_region_add_arg(k->f, &w->regions[1], s, "n");
    ValueId s1 = ir_region_add_arg(k->f, &w->regions[1], s, "steps");
    IrBuilder saved = k->b;
    k->b.region = &w->regions[0];
    ValueId cond[3] = {op2(k, OP_CMP_NE, b, n0, ci(k, 1)), n0, s0};
    ir_build(&k->b, OP_CONDITION, at_line(k, 3), cond, 3, NULL, 0, 0);
    k->b.region = &w->regions[1];
    ValueId even = op2(k, OP_CMP_EQ, b, op2(k, OP_REM, s, n1, ci(k, 2)), ci(k, 0));
    ValueId half = op2(k, OP_DIV, s, n1, ci(k, 2));
    ValueId up = op2(k, OP_ADD, s, op2(k, OP_MUL, s, n1, ci(k, 3)), ci(k, 1));
    ValueId y[2] = {op3(k, OP_SELECT, s, even, half, up), op2(k, OP_ADD, s, s1, ci(k, 1))};
    ir_build(&k->b, OP_YIELD, at_line(k, 6), y, 2, NULL, 0, 0);
    k->b = saved;
    store_at(k, out, 0, w->results[0]);
    store_at(k, out, 1, w->results[1]);
    int32_t o[2] = {0};
    InterpArg args[2] = {arg_ptr(o), arg_int(27)};
    InterpBuffer bufs[1] = {buf_of(o, sizeof o)};
    CHECK(run_kernel(k, 1, args, 2, bufs, 1, err), "while: %s", err->data);
    CHECK(o[0] == 1 && o[1] == 111, "collatz(27): n %d, steps %d", o[0], o[1]);
    args[1] = arg_int(1); /* the condition fails at once: zero trips */
    CHECK(run_kernel(k, 1, args, 2, bufs, 1, err), "while: %s", err->data);
    CHECK(o[0] == 1 && o[1] == 0, "collatz(1): n %d, steps %d", o[0], o[1]);
    kernel_free(k);
}

/* ---- shapes and reductions ------------------------------------------------------------------- */

static ValueId reduce(Kernel *k, OpCode code, ValueId a, int axis, DType rdt)
{
    Type t = ir_type(k->f, a), r = t;
    for (int d = axis; d + 1 < t.rank; d++)
        r.shape[d] = t.shape[d + 1];
    r.rank--;
    r.dtype = rdt;
    IrOp *op = ir_build(&k->b, code, at_line(k, 1), &a, 1, &r, 1, 0);
    op->attr[0] = axis;
    return op->results[0];
}

static void test_shapes_and_reductions(StrBuf *err)
{
    Kernel *k = kernel_new("shapes.tri", "shapes");
    ValueId out = ir_param_add(k->f, type_ptr(DT_I32), "out", 1);
    ValueId fin = ir_param_add(k->f, type_ptr(DT_F32), "fin", 1);
    ValueId hin = ir_param_add(k->f, type_ptr(DT_F16), "hin", 1);
    ValueId fout = ir_param_add(k->f, type_ptr(DT_F32), "fout", 1);
    ValueId m = op1(k, OP_RESHAPE, block2(DT_I32, 4, 8), make_range(k, 0, 32));
    store_at(k, out, 0, reduce(k, OP_REDUCE_SUM, m, 0, DT_I32));  /* 48 + 4j */
    store_at(k, out, 8, reduce(k, OP_REDUCE_SUM, m, 1, DT_I32));  /* 64i + 28 */
    store_at(k, out, 12, reduce(k, OP_REDUCE_MAX, m, 1, DT_I32)); /* 8i + 7 */
    store_at(k, out, 16, reduce(k, OP_REDUCE_MIN, m, 0, DT_I32)); /* j */
    /* trans <2x4> -> <4x2> */
    ValueId t = op1(k, OP_TRANS, block2(DT_I32, 4, 2),
                    op1(k, OP_RESHAPE, block2(DT_I32, 2, 4), make_range(k, 0, 8)));
    k->f->body.ops[k->f->body.nops - 1]->attr[0] = 1;
    store_at(k, out, 24, t); /* 0 4 1 5 2 6 3 7 */
    /* broadcast <1x4> -> <3x4>; expand_dims <4> -> <4x1> -> <4x3> */
    ValueId r4 = make_range(k, 0, 4);
    store_at(k, out, 32, op1(k, OP_BROADCAST, block2(DT_I32, 3, 4), expand_dims(k, r4, 0)));
    store_at(k, out, 44, op1(k, OP_BROADCAST, block2(DT_I32, 4, 3), expand_dims(k, r4, 1)));
    /* broadcast of a scalar-like <1> to <4> */
    store_at(k, out, 56, op1(k, OP_BROADCAST, block1(DT_I32, 4), make_range(k, 5, 6)));
    /* 3-D trans perm (2, 0, 1): <2x3x4> -> <4x2x3>, r[i][j][k] = a[j][k][i] */
    int32_t s3[3] = {2, 3, 4}, p3[3] = {4, 2, 3};
    ValueId a3 = op1(k, OP_RESHAPE, type_block(type_scalar(DT_I32), 3, s3), make_range(k, 0, 24));
    ValueId t3 = op1(k, OP_TRANS, type_block(type_scalar(DT_I32), 3, p3), a3);
    IrOp *top = k->f->body.ops[k->f->body.nops - 1];
    top->attr[0] = 2, top->attr[1] = 0, top->attr[2] = 1;
    store_at(k, out, 60, t3);

    /* floats: <4x4> rows from fin; argmax/argmin (first of ties, NaN skipped), max with NaN */
    ValueId rows =
        op1(k, OP_BROADCAST, block2(DT_I32, 4, 4), expand_dims(k, make_range(k, 0, 4), 1));
    ValueId cols =
        op1(k, OP_BROADCAST, block2(DT_I32, 4, 4), expand_dims(k, make_range(k, 0, 4), 0));
    ValueId offs =
        op2(k, OP_ADD, block2(DT_I32, 4, 4),
            op2(k, OP_MUL, block2(DT_I32, 4, 4), rows, cint(k, block2(DT_I32, 4, 4), 4)), cols);
    ValueId fv = load(k, 1, ptr_plus(k, fin, offs), 0, 0);
    store_at(k, out, 84, reduce(k, OP_ARGMAX, fv, 1, DT_I32));
    store_at(k, out, 88, reduce(k, OP_ARGMIN, fv, 1, DT_I32));
    store_at(k, out, 92, reduce(k, OP_ARGMAX, fv, 0, DT_I32));
    store_at(k, fout, 0, reduce(k, OP_REDUCE_MAX, fv, 1, DT_F32));
    store_at(k, fout, 4, reduce(k, OP_REDUCE_SUM, fv, 0, DT_F32));
    /* fp16 sum in fp16, in order: 2048 + 1 + 1 + 1: 2048 + 1 ties to 2048 each time */
    ValueId hv = load(k, 1, ptr_plus(k, hin, make_range(k, 0, 4)), 0, 0);
    ValueId hs = reduce(k, OP_REDUCE_SUM, hv, 0, DT_F16);
    store_at(k, fout, 8, op1(k, OP_CAST, type_scalar(DT_F32), hs));
    /* ... and in fp32 when the IR widens it: 2051 */
    ValueId hs32 = reduce(k, OP_REDUCE_SUM, hv, 0, DT_F32);
    store_at(k, fout, 9, hs32);

    int32_t o[96];
    memset(o, 0xff, sizeof o);
    float fi[16] = {3,   7,     7,  1,  /* argmax first of ties: 1; argmin 3 */
                    NAN, 2,     5,  5,  /* NaN skipped: argmax 2, argmin 1, max 5 */
                    -1,  -1,    -1, -1, /* all equal: 0, 0 */
                    0,   -0.0f, 4,  4};
    uint16_t hi[4] = {0x6800, 0x3C00, 0x3C00, 0x3C00};
    float fo[10];
    InterpArg args[4] = {arg_ptr(o), arg_ptr(fi), arg_ptr(hi), arg_ptr(fo)};
    InterpBuffer bufs[4] = {buf_of(o, sizeof o), buf_of(fi, sizeof fi), buf_of(hi, sizeof hi),
                            buf_of(fo, sizeof fo)};
    CHECK(run_kernel(k, 1, args, 4, bufs, 4, err), "shapes: %s", err->data);
    for (int j = 0; j < 8; j++) {
        CHECK(o[j] == 48 + 4 * j, "sum axis 0 [%d] = %d", j, o[j]);
        CHECK(o[16 + j] == j, "min axis 0 [%d] = %d", j, o[16 + j]);
    }
    for (int i = 0; i < 4; i++) {
        CHECK(o[8 + i] == 64 * i + 28, "sum axis 1 [%d] = %d", i, o[8 + i]);
        CHECK(o[12 + i] == 8 * i + 7, "max axis 1 [%d] = %d", i, o[12 + i]);
    }
    int32_t tw[8] = {0, 4, 1, 5, 2, 6, 3, 7};
    for (int i = 0; i < 8; i++)
        CHECK(o[24 + i] == tw[i], "trans [%d] = %d", i, o[24 + i]);
    for (int i = 0; i < 12; i++) {
        CHECK(o[32 + i] == i % 4, "broadcast rows [%d] = %d", i, o[32 + i]);
        CHECK(o[44 + i] == i / 3, "broadcast cols [%d] = %d", i, o[44 + i]);
    }
    for (int i = 0; i < 4; i++)
        CHECK(o[56 + i] == 5, "broadcast <1> [%d] = %d", i, o[56 + i]);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 2; j++)
            for (int l = 0; l < 3; l++)
                CHECK(o[60 + i * 6 + j * 3 + l] == j * 12 + l * 4 + i, "trans3 [%d][%d][%d] = %d",
                      i, j, l, o[60 + i * 6 + j * 3 + l]);
    int32_t am[4] = {1, 2, 0, 2}, an[4] = {3, 1, 0, 0}, am0[4] = {0, 0, 0, 1};
    for (int i = 0; i < 4; i++) {
        CHECK(o[84 + i] == am[i], "argmax row %d = %d, want %d", i, o[84 + i], am[i]);
        CHECK(o[88 + i] == an[i], "argmin row %d = %d, want %d", i, o[88 + i], an[i]);
        CHECK(o[92 + i] == am0[i], "argmax col %d = %d, want %d", i, o[92 + i], am0[i]);
    }
    CHECK(fo[0] == 7 && fo[1] == 5 && fo[2] == -1 && fo[3] == 4, "max rows: %g %g %g %g", fo[0],
          fo[1], fo[2], fo[3]);
    CHECK(isnan(fo[4]) && fo[5] == 8 && fo[6] == 15 && fo[7] == 9, "sum cols: %g %g %g %g", fo[4],
          fo[5], fo[6], fo[7]);
    CHECK(fo[8] == 2048.0f, "fp16 sum in fp16: %g", fo[8]);
    CHECK(fo[9] == 2051.0f, "fp16 sum in fp32: %g", fo[9]);
    kernel_free(k);
}

/* ---- dot ---------------------------------------------------------------------------------------- */

/* out <MxN> = a <MxK> @ b <KxN> + c, every operand row-major in memory. */
static bool run_dot(DType in_dt, DType acc_dt, int M, int N, int K, const void *a, const void *b,
                    const void *c, void *out, StrBuf *err)
{
    Kernel *k = kernel_new("dot.tri", "dot");
    ValueId pa = ir_param_add(k->f, type_ptr(in_dt), "a", 16);
    ValueId pb = ir_param_add(k->f, type_ptr(in_dt), "b", 16);
    ValueId pc = ir_param_add(k->f, type_ptr(acc_dt), "c", 16);
    ValueId po = ir_param_add(k->f, type_ptr(acc_dt), "out", 16);
    ValueId offs[3];
    int dims[3][2] = {{M, K}, {K, N}, {M, N}};
    for (int i = 0; i < 3; i++) {
        Type t = block2(DT_I32, dims[i][0], dims[i][1]);
        ValueId rows = op1(k, OP_BROADCAST, t, expand_dims(k, make_range(k, 0, dims[i][0]), 1));
        ValueId cols = op1(k, OP_BROADCAST, t, expand_dims(k, make_range(k, 0, dims[i][1]), 0));
        offs[i] = op2(k, OP_ADD, t, op2(k, OP_MUL, t, rows, cint(k, t, dims[i][1])), cols);
    }
    ValueId va = load(k, 1, ptr_plus(k, pa, offs[0]), 0, 0);
    ValueId vb = load(k, 1, ptr_plus(k, pb, offs[1]), 0, 0);
    ValueId vc = load(k, 1, ptr_plus(k, pc, offs[2]), 0, 0);
    ValueId r = op3(k, OP_DOT, block2(acc_dt, M, N), va, vb, vc);
    store(k, 2, ptr_plus(k, po, offs[2]), r, 0);
    size_t ib = dtype_bytes(in_dt), ab = dtype_bytes(acc_dt);
    InterpArg args[4] = {arg_ptr(a), arg_ptr(b), arg_ptr(c), arg_ptr(out)};
    InterpBuffer bufs[4] = {buf_of(a, M * K * ib), buf_of(b, K * N * ib), buf_of(c, M * N * ab),
                            buf_of(out, M * N * ab)};
    bool ok = run_kernel(k, 1, args, 4, bufs, 4, err);
    CHECK(ok, "dot: %s", err->data);
    kernel_free(k);
    return ok;
}

static uint32_t rng_state = 12345;
static uint32_t rng(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

/* A random fp16 (or bf16) in about [-4, 4]: random sign, exponent and mantissa bits. */
static uint16_t random_half(bool bf16)
{
    uint32_t s = rng() & 1, m = rng();
    if (bf16)
        return (uint16_t)(s << 15 | (uint32_t)(120 + m % 9) << 7 | (rng() & 0x7f));
    return (uint16_t)(s << 15 | (uint32_t)(8 + m % 9) << 10 | (rng() & 0x3ff));
}

static float bf16_value(uint16_t h)
{
    uint32_t b = (uint32_t)h << 16;
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static void test_dot(StrBuf *err)
{
    enum { M = 16, N = 8, K = 32 };
    /* fp16 and bf16 -> fp32: the reference sums in fp32 in k order, as the interpreter does, so
     * the results must be identical bit for bit. */
    for (int bf = 0; bf < 2; bf++) {
        uint16_t a[M * K], b[K * N];
        float af[M * K], bfl[K * N], c[M * N], out[M * N];
        for (int i = 0; i < M * K; i++) {
            a[i] = random_half(bf);
            af[i] = bf ? bf16_value(a[i]) : ref_half_to_float(a[i]);
        }
        for (int i = 0; i < K * N; i++) {
            b[i] = random_half(bf);
            bfl[i] = bf ? bf16_value(b[i]) : ref_half_to_float(b[i]);
        }
        for (int i = 0; i < M * N; i++)
            c[i] = (float)(int)(rng() % 100) / 8.0f;
        if (!run_dot(bf ? DT_BF16 : DT_F16, DT_F32, M, N, K, a, b, c, out, err))
            continue;
        int bad = 0;
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                float acc = c[m * N + n];
                for (int kk = 0; kk < K; kk++)
                    acc += af[m * K + kk] * bfl[kk * N + n];
                bad += out[m * N + n] != acc;
            }
        CHECK(bad == 0, "%s dot: %d of %d results differ from the fp32 reference",
              bf ? "bf16" : "fp16", bad, M * N);
    }
    /* fp32 */
    {
        float a[M * K], b[K * N], c[M * N], out[M * N];
        for (int i = 0; i < M * K; i++)
            a[i] = (float)((int)(rng() % 2001) - 1000) / 997.0f;
        for (int i = 0; i < K * N; i++)
            b[i] = (float)((int)(rng() % 2001) - 1000) / 991.0f;
        for (int i = 0; i < M * N; i++)
            c[i] = 0;
        if (run_dot(DT_F32, DT_F32, M, N, K, a, b, c, out, err)) {
            int bad = 0;
            for (int m = 0; m < M; m++)
                for (int n = 0; n < N; n++) {
                    float acc = 0;
                    for (int kk = 0; kk < K; kk++)
                        acc += a[m * K + kk] * b[kk * N + n];
                    bad += out[m * N + n] != acc;
                }
            CHECK(bad == 0, "fp32 dot: %d results differ", bad);
        }
    }
    /* int8 -> int32 */
    {
        int8_t a[M * K], b[K * N];
        int32_t c[M * N], out[M * N];
        for (int i = 0; i < M * K; i++)
            a[i] = (int8_t)(rng() & 0xff);
        for (int i = 0; i < K * N; i++)
            b[i] = (int8_t)(rng() & 0xff);
        for (int i = 0; i < M * N; i++)
            c[i] = (int32_t)(rng() % 1000) - 500;
        if (run_dot(DT_I8, DT_I32, M, N, K, a, b, c, out, err)) {
            int bad = 0;
            for (int m = 0; m < M; m++)
                for (int n = 0; n < N; n++) {
                    int32_t acc = c[m * N + n];
                    for (int kk = 0; kk < K; kk++)
                        acc += a[m * K + kk] * b[kk * N + n];
                    bad += out[m * N + n] != acc;
                }
            CHECK(bad == 0, "int8 dot: %d results differ", bad);
        }
    }
}

/* Arguments take their parameter's dtype: ints wrap, bools are nonzero, floats round. */
static void test_params(StrBuf *err)
{
    Kernel *k = kernel_new("params.tri", "params");
    ValueId out = ir_param_add(k->f, type_ptr(DT_I32), "out", 1);
    ValueId fout = ir_param_add(k->f, type_ptr(DT_F32), "fout", 1);
    ValueId p8 = ir_param_add(k->f, type_scalar(DT_I8), "p8", 1);
    ValueId pb = ir_param_add(k->f, type_scalar(DT_I1), "pb", 1);
    ValueId pu = ir_param_add(k->f, type_scalar(DT_U32), "pu", 1);
    ValueId ph = ir_param_add(k->f, type_scalar(DT_F16), "ph", 1);
    store_at(k, out, 0, op1(k, OP_CAST, scalar_i32(), p8));
    store_at(k, out, 1, op1(k, OP_CAST, scalar_i32(), pb));
    store_at(k, out, 2, op1(k, OP_CAST, scalar_i32(), pu));
    store_at(k, fout, 0, op1(k, OP_CAST, type_scalar(DT_F32), ph));
    int32_t o[3];
    float fo[1];
    InterpArg args[6] = {arg_ptr(o), arg_ptr(fo), arg_int(300),
                         arg_int(2), arg_int(-1), {.f = 1.0 / 3.0}};
    InterpBuffer bufs[2] = {buf_of(o, sizeof o), buf_of(fo, sizeof fo)};
    CHECK(run_kernel(k, 1, args, 6, bufs, 2, err), "params: %s", err->data);
    CHECK(o[0] == 44 && o[1] == 1 && o[2] == -1, "params: i8 %d, bool %d, u32->i32 %d", o[0], o[1],
          o[2]);
    CHECK(fo[0] == 0.333251953125f, "fp16 param rounds: %.9g", fo[0]);
    kernel_free(k);
}

/* Malformed IR (say from an unverified .tir file) gives a message, never a crash. */
static void test_malformed(StrBuf *err)
{
    Kernel *k = kernel_new("bad.tri", "bad");
    ValueId out = ir_param_add(k->f, type_ptr(DT_I32), "out", 1);
    ValueId later = ci(k, 1);
    k->b.pos = 0; /* insert at the front: a use before the definition */
    ValueId sum = op2(k, OP_ADD, scalar_i32(), later, later);
    k->b.pos = -1;
    store(k, 4, out, sum, 0);
    int32_t o[1] = {5};
    InterpArg args[1] = {arg_ptr(o)};
    InterpBuffer bufs[1] = {buf_of(o, sizeof o)};
    CHECK(!run_kernel(k, 1, args, 1, bufs, 1, err), "a use before the definition must fail");
    CHECK(contains(err, "internal error: operand 0 of add is used before it is computed"), "%s",
          err->data);
    k->f->body.ops[0]->operands[1] = 9999; /* out of range */
    CHECK(!run_kernel(k, 1, args, 1, bufs, 1, err), "a bad value id must fail");
    CHECK(contains(err, "internal error: operand 1 of add is not a valid value"), "%s", err->data);
    k->f->body.ops[0]->operands[1] = later;
    k->f->body.ops[0]->nresults = 0;
    CHECK(!run_kernel(k, 1, args, 1, bufs, 1, err), "an add without a result must fail");
    CHECK(contains(err, "internal error: add without a result"), "%s", err->data);
    CHECK(o[0] == 5, "nothing stored");
    kernel_free(k);
}

/* A persistent function (passes/stream_k.c's form): min(grid, persistent_programs) programs run,
 * from the last to the first, num_programs the programs, tile_count the grid; program p > 0 sets
 * its flag, p waits for p + 1's and clears it. A wait that does not hold when the program runs,
 * and flags left set, are errors, not hangs. */
static void test_persistent(StrBuf *err)
{
    static const char text[] =
        "kernel @waits(%0: *i32 {name = \"out\"}) num_warps(4) num_stages(3) shared_bytes(0) "
        "persistent(workspace_bytes = 0) {\n"
        "  %1 = program_id 0 : i32\n"
        "  %2 = num_programs 0 : i32\n"
        "  %3 = tile_count 0 : i32\n"
        "  %4 = workspace 0 : *i32\n"
        "  %5 = const 1000 : i32\n"
        "  %6 = mul %2, %5 : i32\n"
        "  %7 = add %6, %3 : i32\n"
        "  %8 = addptr %0, %1 : *i32\n"
        "  store %8, %7, mask none\n"
        "  %9 = const 0 : i32\n"
        "  %10 = const 1 : i32\n"
        "  %11 = cmp_gt %1, %9 : i1\n"
        "  %12 = addptr %4, %1 : *i32\n"
        "  store %12, %10, mask %11\n"
        "  %13 = sub %2, %10 : i32\n"
        "  %14 = cmp_lt %1, %13 : i1\n"
        "  if %14 {\n"
        "    %15 = add %1, %10 : i32\n"
        "    %16 = addptr %4, %15 : *i32\n"
        "    %17 = const WANT : i32\n"
        "    flag_wait %16, %17\n"
        "    STORE\n"
        "    yield\n"
        "  } else {\n"
        "    yield\n"
        "  }\n"
        "}\n";
    static const struct {
        const char *want, *store, *error;
    } forms[] = {
        {"1", "store %16, %9, mask none", NULL},
        {"2", "store %16, %9, mask none",
         "waits for the flag at 0x"}, /* ... to be 2, but it is 1: no program ran before it */
        {"1", "", "the persistent launch left its workspace flag 1 at 1, not 0"},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        StrBuf src = {0};
        for (const char *p = text; *p; p++) {
            if (!strncmp(p, "WANT", 4)) {
                strbuf_append(&src, forms[i].want);
                p += 3;
            } else if (!strncmp(p, "STORE", 5)) {
                strbuf_append(&src, forms[i].store);
                p += 4;
            } else {
                strbuf_putc(&src, *p);
            }
        }
        Arena *arena = arena_new();
        SrcFile file = {.name = "waits.tir", .text = src.data, .len = src.len};
        Diag d = {0};
        IrFunc *f = ir_parse(&file, arena, &d);
        CHECK(f && ir_verify(f, "parse", &d), "form %zu: %s", i, d.text.data ? d.text.data : "");
        int32_t out[8] = {0};
        InterpArg args[1] = {arg_ptr(out)};
        InterpBuffer bufs[1] = {buf_of(out, sizeof out)};
        InterpLaunch l = {.grid = {5, 1, 1},
                          .args = args,
                          .nargs = 1,
                          .buffers = bufs,
                          .nbuffers = 1,
                          .persistent_programs = 3};
        strbuf_clear(err);
        bool ok = f && interp_run(f, &l, err);
        if (!forms[i].error) {
            CHECK(ok, "form %zu: %s", i, err->data ? err->data : "");
            CHECK(out[0] == 3005 && out[1] == 3005 && out[2] == 3005 && out[3] == 0,
                  "3 programs over 5 tiles: %d %d %d %d", out[0], out[1], out[2], out[3]);
        } else {
            CHECK(!ok && contains(err, forms[i].error), "form %zu: %s", i,
                  err->data ? err->data : "(ran)");
            CHECK(out[0] == 0 && out[2] == 0, "a failed launch stores nothing");
        }
        diag_free(&d);
        arena_free(arena);
        strbuf_free(&src);
    }
}

int main(void)
{
    StrBuf err = {0};
    test_for(&err);
    test_for_step_zero(&err);
    test_if(&err);
    test_while(&err);
    test_shapes_and_reductions(&err);
    test_dot(&err);
    test_params(&err);
    test_malformed(&err);
    test_persistent(&err);
    strbuf_free(&err);
    if (test_failures) {
        printf("%d check(s) failed\n", test_failures);
        return 1;
    }
    printf("interp_control: all checks passed\n");
    return 0;
}
