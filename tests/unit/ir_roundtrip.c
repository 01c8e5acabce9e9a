/* ir_roundtrip: builds a kernel that uses every op of TRIC_OPS (with layouts, locations, names,
 * param hints, smem), then checks print -> parse -> print is the identity, that ir_func_clone
 * prints the same, that the verifier accepts it, and that every op was covered. */
#include "ir/ir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static Type blk1(DType dt, int n) { return type_block(type_scalar(dt), 1, (int32_t[]){n}); }
static Type blk2(DType dt, int m, int n)
{
    return type_block(type_scalar(dt), 2, (int32_t[]){m, n});
}
static Type pblk1(DType dt, int n) { return type_block(type_ptr(dt), 1, (int32_t[]){n}); }

static const SrcFile src = {.name = "every_op.tri", .text = NULL, .len = 0};

static SrcLoc L(int line, int col) { return (SrcLoc){.file = &src, .line = line, .col = col}; }

static IrFunc *build_every_op(Arena *a)
{
    IrFunc *f = ir_func_new(a, "every_op");
    f->num_warps = 8;
    f->num_stages = 4;
    f->shared_bytes = 16384;
    ValueId x_ptr = ir_param_add(f, type_ptr(DT_F32), "x_ptr", 16);
    ValueId y_ptr = ir_param_add(f, type_ptr(DT_F16), "y_ptr", 1);
    ValueId n = ir_param_add(f, type_scalar(DT_I32), "n", 1);
    ValueId one = ir_param_add(f, type_scalar(DT_I32), "stride", 1);
    f->params[3].equal_to_1 = true;
    IrBuilder b = {.func = f, .region = &f->body, .pos = -1};
    SrcLoc nl = {0};

    Layout blocked = {.kind = LAYOUT_BLOCKED, .rank = 1};
    blocked.blocked.size_per_thread[0] = 4;
    blocked.blocked.threads_per_warp[0] = 32;
    blocked.blocked.warps_per_cta[0] = 8;
    blocked.blocked.order[0] = 0;
    int bl = ir_layout_intern(f, &blocked);
    Layout blocked2 = {.kind = LAYOUT_BLOCKED, .rank = 2};
    memcpy(blocked2.blocked.size_per_thread, (int[]){1, 4}, sizeof(int[2]));
    memcpy(blocked2.blocked.threads_per_warp, (int[]){4, 8}, sizeof(int[2]));
    memcpy(blocked2.blocked.warps_per_cta, (int[]){8, 1}, sizeof(int[2]));
    memcpy(blocked2.blocked.order, (int[]){1, 0}, sizeof(int[2]));
    int bl2 = ir_layout_intern(f, &blocked2);
    Layout slice = {.kind = LAYOUT_SLICE, .rank = 1, .slice = {.dim = 1, .parent = bl2}};
    int sl = ir_layout_intern(f, &slice);
    Layout mma = {.kind = LAYOUT_MMA, .rank = 2};
    mma.mma.version = 2;
    mma.mma.warps_per_cta[0] = 4;
    mma.mma.warps_per_cta[1] = 2;
    memcpy(mma.mma.instr_shape, (int[]){16, 8, 16}, sizeof(int[3]));
    int mm = ir_layout_intern(f, &mma);
    Layout dop = {.kind = LAYOUT_DOT_OPERAND,
                  .rank = 2,
                  .dot_operand = {.parent = mm, .op_idx = 1, .k_width = 2}};
    int dl = ir_layout_intern(f, &dop);
    Layout sh = {.kind = LAYOUT_SHARED,
                 .rank = 2,
                 .shared = {.swizzle = 64, .vec = 8, .per_phase = 2, .max_phase = 4}};
    sh.shared.order[0] = 1;
    sh.shared.order[1] = 0;
    int shl = ir_layout_intern(f, &sh);
    CHECK(ir_layout_intern(f, &blocked) == bl, "interning the same layout twice gives one index");

    ValueId pid =
        ir_build(&b, OP_PROGRAM_ID, L(3, 11), NULL, 0, (Type[]){type_scalar(DT_I32)}, 1, 0)
            ->results[0];
    f->values[pid].name = "pid";
    ValueId np =
        ir_build(&b, OP_NUM_PROGRAMS, nl, NULL, 0, (Type[]){type_scalar(DT_I32)}, 1, 0)->results[0];
    ir_build(&b, OP_NUM_PROGRAMS, nl, NULL, 0, (Type[]){type_scalar(DT_I32)}, 1, 0)->attr[0] = 2;
    /* a persistent function's (stream_k.c; over a 3-d grid, made from it: persistent.c) */
    f->persistent.on = true;
    f->persistent.workspace_bytes = 65536;
    f->persistent.axes = 3;
    f->persistent.from_grid = true;
    ir_build(&b, OP_TILE_COUNT, nl, NULL, 0, (Type[]){type_scalar(DT_I32)}, 1, 0);
    ir_build(&b, OP_TILE_COUNT, nl, NULL, 0, (Type[]){type_scalar(DT_I32)}, 1, 0)->attr[0] = 2;
    ValueId flags =
        ir_build(&b, OP_WORKSPACE, nl, NULL, 0, (Type[]){type_ptr(DT_I32)}, 1, 0)->results[0];
    ir_build(&b, OP_FLAG_WAIT, nl, (ValueId[]){flags, n}, 2, NULL, 0, 0);
    IrOp *scratch = ir_build(&b, OP_WORKSPACE, nl, NULL, 0, (Type[]){type_ptr(DT_F32)}, 1, 0);
    scratch->attr[0] = 1;
    ValueId part = ir_build_const_float(&b, nl, blk1(DT_F32, 128), 0.5);
    ir_build(&b, OP_PARTIAL_STORE, nl, (ValueId[]){scratch->results[0], n, part}, 3, NULL, 0, 0);
    ir_build(&b, OP_PARTIAL_ADD, nl, (ValueId[]){scratch->results[0], n, part}, 3,
             (Type[]){blk1(DT_F32, 128)}, 1, 0);
    /* a flattened loop nest's carried value before its first definition (flatten_loops.c) */
    ir_build(&b, OP_UNDEF, nl, NULL, 0, (Type[]){blk1(DT_I32, 128)}, 1, 0);
    IrOp *mr = ir_build(&b, OP_MAKE_RANGE, L(4, 5), NULL, 0, (Type[]){blk1(DT_I32, 128)}, 1, 0);
    mr->attr[0] = 0;
    mr->attr[1] = 128;
    ValueId offs = mr->results[0];
    f->values[offs].layout = bl;
    ValueId c1024 = ir_build_const_int(&b, nl, type_scalar(DT_I32), 1024);
    ValueId cneg = ir_build_const_int(&b, nl, type_scalar(DT_I64), INT64_MIN);
    ValueId cf = ir_build_const_float(&b, nl, blk1(DT_F32, 128), 0.1);
    ValueId cf2 = ir_build_const_float(&b, nl, type_scalar(DT_F64), -1.0 / 3.0);
    ValueId cinf = ir_build_const_float(&b, nl, type_scalar(DT_F32), -INFINITY);
    ValueId cnan = ir_build_const_float(&b, nl, type_scalar(DT_F32), NAN);
    ValueId ctrue = ir_build_const_int(&b, nl, type_scalar(DT_I1), 1);
    (void)cneg;
    (void)cf2;
    (void)cinf;
    (void)cnan;
    ValueId base = ir_build_binary(&b, OP_MUL, nl, type_scalar(DT_I32), pid, c1024);
    ValueId sb = ir_build_unary(&b, OP_SPLAT, nl, blk1(DT_I32, 128), base);
    ValueId idx = ir_build_binary(&b, OP_ADD, L(5, 9), blk1(DT_I32, 128), sb, offs);
    f->values[idx].name = "offsets";
    f->values[idx].layout = bl;
    ValueId nb = ir_build_unary(&b, OP_SPLAT, nl, blk1(DT_I32, 128), n);
    ValueId mask = ir_build_binary(&b, OP_CMP_LT, nl, blk1(DT_I1, 128), idx, nb);
    static const OpCode binops[] = {OP_SUB, OP_DIV, OP_REM, OP_MIN, OP_MAX,   OP_AND,
                                    OP_OR,  OP_XOR, OP_SHL, OP_SHR, OP_UMULHI};
    ValueId acc = idx;
    for (size_t i = 0; i < sizeof binops / sizeof *binops; i++)
        acc = ir_build_binary(&b, binops[i], nl, blk1(DT_I32, 128), acc, idx);
    static const OpCode cmps[] = {OP_CMP_EQ, OP_CMP_NE, OP_CMP_LE, OP_CMP_GT, OP_CMP_GE};
    ValueId m2 = mask;
    for (size_t i = 0; i < sizeof cmps / sizeof *cmps; i++) {
        ValueId c = ir_build_binary(&b, cmps[i], nl, blk1(DT_I1, 128), acc, idx);
        m2 = ir_build_binary(&b, OP_AND, nl, blk1(DT_I1, 128), m2, c);
    }
    ValueId neg = ir_build_unary(&b, OP_NEG, nl, blk1(DT_I32, 128), acc);
    ValueId nt = ir_build_unary(&b, OP_NOT, nl, blk1(DT_I32, 128), neg);
    ValueId ab = ir_build_unary(&b, OP_ABS, nl, blk1(DT_I32, 128), nt);
    ValueId hint = ir_build_unary(&b, OP_MULTIPLE_OF, nl, blk1(DT_I32, 128), ab);
    ir_value(f, hint)->def->attr[0] = 16;
    ValueId hint2 = ir_build_unary(&b, OP_MAX_CONTIGUOUS, nl, blk1(DT_I32, 128), hint);
    ir_value(f, hint2)->def->attr[0] = 128;

    ValueId xs = ir_build_unary(&b, OP_SPLAT, nl, pblk1(DT_F32, 128), x_ptr);
    ValueId xp = ir_build_binary(&b, OP_ADDPTR, nl, pblk1(DT_F32, 128), xs, hint2);
    ValueId ld1 =
        ir_build(&b, OP_LOAD, L(7, 9), (ValueId[]){xp}, 1, (Type[]){blk1(DT_F32, 128)}, 1, 0)
            ->results[0];
    ValueId ld2 =
        ir_build(&b, OP_LOAD, nl, (ValueId[]){xp, m2}, 2, (Type[]){blk1(DT_F32, 128)}, 1, 0)
            ->results[0];
    ValueId ld3 =
        ir_build(&b, OP_LOAD, nl, (ValueId[]){xp, m2, cf}, 3, (Type[]){blk1(DT_F32, 128)}, 1, 0)
            ->results[0];
    ValueId ld4 =
        ir_build(&b, OP_LOAD, nl, (ValueId[]){xp, 0, cf}, 3, (Type[]){blk1(DT_F32, 128)}, 1, 0)
            ->results[0];
    static const OpCode fun[] = {OP_EXP, OP_EXP2, OP_LOG,   OP_LOG2, OP_SQRT, OP_RSQRT,
                                 OP_SIN, OP_COS,  OP_FLOOR, OP_CEIL, OP_ABS,  OP_NEG};
    ValueId fv = ld1;
    for (size_t i = 0; i < sizeof fun / sizeof *fun; i++)
        fv = ir_build_unary(&b, fun[i], nl, blk1(DT_F32, 128), fv);
    /* libdevice: a unary function, a binary one and a predicate. */
    IrOp *erf_op =
        ir_build(&b, OP_LIBDEVICE, nl, (ValueId[]){fv}, 1, (Type[]){blk1(DT_F32, 128)}, 1, 0);
    erf_op->attr[0] = LD_ERF;
    IrOp *pow_op = ir_build(&b, OP_LIBDEVICE, nl, (ValueId[]){erf_op->results[0], ld2}, 2,
                            (Type[]){blk1(DT_F32, 128)}, 1, 0);
    pow_op->attr[0] = LD_POW;
    fv = pow_op->results[0];
    ir_build(&b, OP_LIBDEVICE, nl, (ValueId[]){fv}, 1, (Type[]){blk1(DT_I1, 128)}, 1, 0)->attr[0] =
        LD_ISNAN;
    ValueId fm =
        ir_build(&b, OP_FMA, nl, (ValueId[]){fv, ld2, ld3}, 3, (Type[]){blk1(DT_F32, 128)}, 1, 0)
            ->results[0];
    ValueId sel =
        ir_build(&b, OP_SELECT, nl, (ValueId[]){m2, fm, ld4}, 3, (Type[]){blk1(DT_F32, 128)}, 1, 0)
            ->results[0];
    ValueId half = ir_build_unary(&b, OP_CAST, nl, blk1(DT_F16, 128), sel);
    ValueId bits = ir_build_unary(&b, OP_BITCAST, nl, blk1(DT_I16, 128), half);
    (void)bits;
    ValueId ys = ir_build_unary(&b, OP_SPLAT, nl, pblk1(DT_F16, 128), y_ptr);
    ValueId yp = ir_build_binary(&b, OP_ADDPTR, nl, pblk1(DT_F16, 128), ys, idx);
    ir_build(&b, OP_STORE, L(9, 5), (ValueId[]){yp, half, mask}, 3, NULL, 0, 0);
    ir_build(&b, OP_STORE, nl, (ValueId[]){yp, half}, 2, NULL, 0, 0);
    ValueId on = ir_build_const_int(&b, nl, type_scalar(DT_I1), 1);
    ir_build(&b, OP_PREFETCH, nl, (ValueId[]){yp, on}, 2, NULL, 0, 0);
    ir_build(&b, OP_PREFETCH, nl, (ValueId[]){yp, on}, 2, NULL, 0, 0)->attr[0] = 1; /* L1 */

    /* Shapes: 128 -> 128x1 -> 128x64 -> 64x128 -> 8192 -> back. */
    IrOp *ed =
        ir_build(&b, OP_EXPAND_DIMS, nl, (ValueId[]){ld1}, 1, (Type[]){blk2(DT_F32, 128, 1)}, 1, 0);
    ed->attr[0] = 1;
    ValueId e = ed->results[0];
    ValueId bc = ir_build_unary(&b, OP_BROADCAST, nl, blk2(DT_F32, 128, 64), e);
    f->values[bc].layout = bl2;
    IrOp *tr =
        ir_build(&b, OP_TRANS, nl, (ValueId[]){bc}, 1, (Type[]){blk2(DT_F32, 64, 128)}, 1, 0);
    tr->attr[0] = 1;
    tr->attr[1] = 0;
    ValueId rs = ir_build_unary(&b, OP_RESHAPE, nl, blk1(DT_F32, 8192), tr->results[0]);
    (void)rs;
    /* the right half of the 64x128 tile (subtile, offsets [0, 64]) */
    IrOp *sub = ir_build(&b, OP_SUBTILE, nl, (ValueId[]){tr->results[0]}, 1,
                         (Type[]){blk2(DT_F32, 64, 64)}, 1, 0);
    sub->attr[1] = 64;
    ValueId cv = ir_build_unary(&b, OP_CONVERT_LAYOUT, nl, blk2(DT_F32, 128, 64), bc);
    f->values[cv].layout = dl;
    IrOp *cvop = ir_value(f, cv)->def;
    cvop->smem_offset = 1024;
    cvop->smem_bytes = 32768;
    /* scratch records (docs/ir.md "Scratch records"): the convert's copy at padded strides */
    cvop->scratch =
        (IrScratch){.ntiles = 1, .tile[0] = {.offset = 1024, .nstrides = 2, .strides = {64, 1}}};
    static const OpCode reds[] = {OP_REDUCE_SUM, OP_REDUCE_MAX, OP_REDUCE_MIN};
    for (size_t i = 0; i < 3; i++) {
        IrOp *r = ir_build(&b, reds[i], nl, (ValueId[]){bc}, 1, (Type[]){blk1(DT_F32, 128)}, 1, 0);
        r->attr[0] = 1;
        f->values[r->results[0]].layout = sl;
        if (i == 0) { /* cross-warp partials: [per output element, per warp] */
            r->smem_bytes = 4096;
            r->scratch = (IrScratch){.ntiles = 1,
                                     .combine = SCRATCH_COMBINE_SHUFFLE,
                                     .tile[0] = {.nstrides = 2, .strides = {1, 128}}};
        }
    }
    IrOp *am = ir_build(&b, OP_ARGMAX, nl, (ValueId[]){bc}, 1, (Type[]){blk1(DT_I32, 64)}, 1, 0);
    am->attr[0] = 0;
    IrOp *an = ir_build(&b, OP_ARGMIN, nl, (ValueId[]){bc}, 1, (Type[]){blk1(DT_I32, 128)}, 1, 0);
    an->attr[0] = 1;
    IrOp *sc = ir_build(&b, OP_SCAN, nl, (ValueId[]){bc}, 1, (Type[]){blk2(DT_F32, 128, 64)}, 1, 0);
    sc->attr[0] = 0;
    sc->attr[1] = OP_MAX;
    sc->attr[2] = 1;
    IrOp *as = ir_build(&b, OP_ASSERT, L(11, 5), (ValueId[]){mask}, 1, NULL, 0, 0);
    as->sattr = "index \"out\" of\trange\n";
    ir_build(&b, OP_GDC_WAIT, nl, NULL, 0, NULL, 0, 0);
    ir_build(&b, OP_GDC_LAUNCH_DEPENDENTS, nl, NULL, 0, NULL, 0, 0);

    /* A dot in a for loop with two iter args. */
    ValueId a16 = ir_build_const_float(&b, nl, blk2(DT_F16, 64, 32), 1.5);
    f->values[a16].layout = dl;
    ValueId b16 = ir_build_const_float(&b, nl, blk2(DT_F16, 32, 64), 0.25);
    ValueId z = ir_build_const_float(&b, nl, blk2(DT_F32, 64, 64), 0.0);
    f->values[z].layout = mm;
    ValueId c0 = ir_build_const_int(&b, nl, type_scalar(DT_I32), 0);
    ValueId c4 = ir_build_const_int(&b, nl, type_scalar(DT_I32), 4);
    IrOp *fo = ir_build(&b, OP_FOR, L(13, 5), (ValueId[]){c0, n, one, z, pid}, 5,
                        (Type[]){blk2(DT_F32, 64, 64), type_scalar(DT_I32)}, 2, 1);
    f->values[fo->results[0]].layout = mm;
    f->values[fo->results[0]].name = "acc";
    ValueId iv = ir_region_add_arg(f, &fo->regions[0], type_scalar(DT_I32), "k");
    ValueId racc = ir_region_add_arg(f, &fo->regions[0], blk2(DT_F32, 64, 64), NULL);
    f->values[racc].layout = mm;
    ValueId rp = ir_region_add_arg(f, &fo->regions[0], type_scalar(DT_I32), NULL);
    IrBuilder bb = {.func = f, .region = &fo->regions[0], .pos = -1};
    IrOp *d = ir_build(&bb, OP_DOT, L(14, 15), (ValueId[]){a16, b16, racc}, 3,
                       (Type[]){blk2(DT_F32, 64, 64)}, 1, 0);
    d->attr[0] = 1;
    f->values[d->results[0]].layout = mm;
    /* a dot's staging tiles: A swizzled, B at padded strides, both from their own registers */
    Layout sw;
    CHECK(shared_layout_for(&sw, blk2(DT_F16, 64, 32), 1), "no swizzled layout for A");
    d->smem_bytes = 8704;
    d->scratch = (IrScratch){.ntiles = 2,
                             .tile[0] = {.layout = ir_layout_intern(f, &sw)},
                             .tile[1] = {.offset = 4096, .nstrides = 2, .strides = {72, 1}}};
    ValueId rp2 = ir_build_binary(&bb, OP_ADD, nl, type_scalar(DT_I32), rp, iv);
    ir_build(&bb, OP_YIELD, nl, (ValueId[]){d->results[0], rp2}, 2, NULL, 0, 0);

    /* if/else with a result. */
    ValueId cond = ir_build_binary(&b, OP_CMP_GT, nl, type_scalar(DT_I1), fo->results[1], np);
    IrOp *io =
        ir_build(&b, OP_IF, L(16, 5), (ValueId[]){cond}, 1, (Type[]){type_scalar(DT_I32)}, 1, 2);
    IrBuilder tb = {.func = f, .region = &io->regions[0], .pos = -1};
    ValueId t1 = ir_build_binary(&tb, OP_ADD, nl, type_scalar(DT_I32), c4, c4);
    ir_build(&tb, OP_YIELD, nl, (ValueId[]){t1}, 1, NULL, 0, 0);
    IrBuilder eb = {.func = f, .region = &io->regions[1], .pos = -1};
    ir_build(&eb, OP_YIELD, nl, (ValueId[]){c0}, 1, NULL, 0, 0);
    /* if with no results and an empty else. */
    IrOp *io2 = ir_build(&b, OP_IF, nl, (ValueId[]){ctrue}, 1, NULL, 0, 2);
    IrBuilder tb2 = {.func = f, .region = &io2->regions[0], .pos = -1};
    ir_build(&tb2, OP_STORE, nl, (ValueId[]){yp, half}, 2, NULL, 0, 0);
    ir_build(&tb2, OP_YIELD, nl, NULL, 0, NULL, 0, 0);
    IrBuilder eb2 = {.func = f, .region = &io2->regions[1], .pos = -1};
    ir_build(&eb2, OP_YIELD, nl, NULL, 0, NULL, 0, 0);

    /* while (i < n) i = i * 2 */
    IrOp *wo = ir_build(&b, OP_WHILE, L(18, 5), (ValueId[]){io->results[0]}, 1,
                        (Type[]){type_scalar(DT_I32)}, 1, 2);
    ValueId wi = ir_region_add_arg(f, &wo->regions[0], type_scalar(DT_I32), "i");
    IrBuilder wb0 = {.func = f, .region = &wo->regions[0], .pos = -1};
    ValueId wc = ir_build_binary(&wb0, OP_CMP_LT, nl, type_scalar(DT_I1), wi, n);
    ir_build(&wb0, OP_CONDITION, nl, (ValueId[]){wc, wi}, 2, NULL, 0, 0);
    ValueId wj = ir_region_add_arg(f, &wo->regions[1], type_scalar(DT_I32), NULL);
    IrBuilder wb1 = {.func = f, .region = &wo->regions[1], .pos = -1};
    ValueId two = ir_build_const_int(&wb1, nl, type_scalar(DT_I32), 2);
    ValueId wn = ir_build_binary(&wb1, OP_MUL, nl, type_scalar(DT_I32), wj, two);
    ir_build(&wb1, OP_YIELD, nl, (ValueId[]){wn}, 1, NULL, 0, 0);
    /* An op with a raw attribute (slot its form does not name) survives the round trip. */
    IrOp *raw = ir_build(&b, OP_ADD, nl, (ValueId[]){wo->results[0], c4}, 2,
                         (Type[]){type_scalar(DT_I32)}, 1, 0);
    raw->attr[2] = 7;
    /* The memory pipeline: two 2-slot buffers, copies into a slot, commit, wait, barriers, a
     * local_load and a wgmma chain retired by wgmma_wait. */
    Layout mma3 = {.kind = LAYOUT_MMA, .rank = 2};
    mma3.mma.version = 3;
    mma3.mma.warps_per_cta[0] = 4;
    mma3.mma.warps_per_cta[1] = 1;
    memcpy(mma3.mma.instr_shape, (int[]){16, 64, 16}, sizeof(int[3]));
    int m3 = ir_layout_intern(f, &mma3);
    Layout dop3 = {.kind = LAYOUT_DOT_OPERAND,
                   .rank = 2,
                   .dot_operand = {.parent = m3, .op_idx = 0, .k_width = 2}};
    int dl3 = ir_layout_intern(f, &dop3);
    Type abuf = type_block(type_scalar(DT_F16), 3, (int32_t[]){2, 64, 32});
    abuf.is_smem = true;
    Type aview = blk2(DT_F16, 64, 32);
    aview.is_smem = true;
    Type bbuf = type_block(type_scalar(DT_F16), 3, (int32_t[]){2, 32, 64});
    bbuf.is_smem = true;
    Type bview = blk2(DT_F16, 32, 64);
    bview.is_smem = true;
    IrOp *la = ir_build(&b, OP_LOCAL_ALLOC, L(20, 5), NULL, 0, &abuf, 1, 0);
    la->smem_offset = 0;
    la->smem_bytes = 8192;
    ValueId ab0 = la->results[0];
    f->values[ab0].layout = shl;
    f->values[ab0].name = "a_buf";
    IrOp *lb = ir_build(&b, OP_LOCAL_ALLOC, nl, NULL, 0, &bbuf, 1, 0);
    lb->smem_offset = 8192;
    lb->smem_bytes = 8192;
    ValueId bb0 = lb->results[0];
    ValueId one32 = ir_build_const_int(&b, nl, type_scalar(DT_I32), 1);
    ValueId va = ir_build_binary(&b, OP_SLOT, nl, aview, ab0, one32);
    f->values[va].layout = shl;
    ValueId vb = ir_build_binary(&b, OP_SLOT, nl, bview, bb0, c0);
    ValueId ptile = ir_build_unary(&b, OP_SPLAT, nl,
                                   type_block(type_ptr(DT_F16), 2, (int32_t[]){64, 32}), y_ptr);
    ValueId ptile2 = ir_build_unary(&b, OP_SPLAT, nl,
                                    type_block(type_ptr(DT_F16), 2, (int32_t[]){32, 64}), y_ptr);
    ValueId mtile = ir_build_const_int(&b, nl, blk2(DT_I1, 64, 32), 1);
    ValueId ztile = ir_build_const_float(&b, nl, blk2(DT_F16, 64, 32), 0.0);
    ir_build(&b, OP_ASYNC_COPY, L(21, 9), (ValueId[]){va, ptile, mtile, ztile}, 4, NULL, 0, 0);
    ir_build(&b, OP_ASYNC_COPY, nl, (ValueId[]){va, ptile, mtile}, 3, NULL, 0, 0);
    ir_build(&b, OP_ASYNC_COPY, nl, (ValueId[]){vb, ptile2}, 2, NULL, 0, 0);
    ir_build(&b, OP_ASYNC_COMMIT, nl, NULL, 0, NULL, 0, 0);
    ir_build(&b, OP_ASYNC_WAIT, L(22, 9), NULL, 0, NULL, 0, 0)->attr[0] = 1;
    ir_build(&b, OP_ASYNC_WAIT, nl, NULL, 0, NULL, 0, 0);
    ir_build(&b, OP_BARRIER, nl, NULL, 0, NULL, 0, 0)->attr[0] = 1;
    ir_build(&b, OP_BARRIER, nl, NULL, 0, NULL, 0, 0);
    ValueId ll = ir_build_unary(&b, OP_LOCAL_LOAD, nl, blk2(DT_F16, 64, 32), va);
    f->values[ll].layout = dl3;
    ValueId acc3 = ir_build_const_float(&b, nl, blk2(DT_F32, 64, 64), 0.0);
    f->values[acc3].layout = m3;
    IrOp *wg = ir_build(&b, OP_WGMMA, L(23, 15), (ValueId[]){va, vb, acc3}, 3,
                        (Type[]){blk2(DT_F32, 64, 64)}, 1, 0);
    f->values[wg->results[0]].layout = m3;
    IrOp *ww = ir_build(&b, OP_WGMMA_WAIT, nl, (ValueId[]){wg->results[0], ll}, 2,
                        (Type[]){blk2(DT_F32, 64, 64), blk2(DT_F16, 64, 32)}, 2, 0);
    ww->attr[0] = 1;
    f->values[ww->results[0]].layout = m3;
    f->values[ww->results[1]].layout = dl3;
    ir_build(&b, OP_WGMMA_WAIT, nl, NULL, 0, NULL, 0, 0);
    /* Atomics: an fp16 add under a mask, a cas on a scalar. */
    IrOp *rmw = ir_build(&b, OP_ATOMIC_RMW, L(24, 5), (ValueId[]){yp, half, mask}, 3,
                         (Type[]){blk1(DT_F16, 128)}, 1, 0);
    rmw->attr[0] = ATOMIC_ADD;
    rmw->attr[1] = MEM_SEM_RELAXED;
    rmw->attr[2] = MEM_SCOPE_CTA;
    ValueId fone = ir_build_const_float(&b, nl, type_scalar(DT_F32), 1.0);
    IrOp *cas = ir_build(&b, OP_ATOMIC_CAS, nl, (ValueId[]){x_ptr, fone, fone}, 3,
                         (Type[]){type_scalar(DT_F32)}, 1, 0);
    cas->attr[1] = MEM_SEM_ACQUIRE;
    cas->attr[2] = MEM_SCOPE_SYS;
    /* A pair: 128 twice -> 128x2 -> its second half. */
    ValueId pair = ir_build_binary(&b, OP_JOIN, nl, blk2(DT_F32, 128, 2), ld1, ld1);
    IrOp *sp = ir_build(&b, OP_SPLIT, nl, (ValueId[]){pair}, 1, (Type[]){blk1(DT_F32, 128)}, 1, 0);
    sp->attr[0] = 1;
    /* TMA (passes/tma.c): a tensor map with a product stride and an unbounded dim, a buffer of
     * mbarriers, an expect, a tma_load into a view, a wait and the inval. */
    f->tmaps = arena_alloc(f->arena, sizeof(TensorMap) * TRIC_MAX_TENSOR_MAPS);
    f->ntmaps = 1;
    f->tmaps[0] = (TensorMap){.base_param = 1,
                              .dtype = DT_F16,
                              .rank = 3,
                              .dims = {{.constant = 1, .nparams = 1, .params = {2}},
                                       {.unbounded = true},
                                       {.constant = 7}},
                              .strides = {{.constant = 1},
                                          {.constant = 2, .nparams = 2, .params = {3, 2}},
                                          {.constant = 4096}},
                              .box = {32, 64, 1},
                              .swizzle = 64};
    Type mbt = type_block(type_scalar(DT_I64), 2, (int32_t[]){2, 1});
    mbt.is_smem = true;
    Type mbv = type_block(type_scalar(DT_I64), 1, (int32_t[]){1});
    mbv.is_smem = true;
    IrOp *mba = ir_build(&b, OP_LOCAL_ALLOC, nl, NULL, 0, &mbt, 1, 0);
    mba->smem_offset = 16384;
    mba->smem_bytes = 16;
    ValueId bars = mba->results[0];
    ir_build(&b, OP_MBAR_INIT, nl, &bars, 1, NULL, 0, 0)->attr[0] = 8; /* {arrivals = 8} */
    ValueId bar1 = ir_build_binary(&b, OP_SLOT, nl, mbv, bars, one32);
    /* a warp-specialized function's header, partitions and a consumer's arrival */
    f->ws.producer_warps = 4;
    f->ws.producer_regs = 40;
    f->ws.consumer_regs = 232;
    f->ws.max_regs = 168;
    f->ws.consumer_groups = 2; /* ping-pong: two consumer groups take tiles in turn */
    f->ws.scratch_stride = 32768;
    ir_build(&b, OP_CONSUMER_TURN, nl, &one32, 1, (Type[]){type_scalar(DT_I1)}, 1, 0);
    ir_build(&b, OP_TURN_WAIT, nl, NULL, 0, NULL, 0, 0)->partition = PARTITION_CONSUMER;
    ir_build(&b, OP_TURN_PASS, nl, NULL, 0, NULL, 0, 0)->partition = PARTITION_CONSUMER;
    ir_build(&b, OP_MBAR_ARRIVE, nl, &bar1, 1, NULL, 0, 0)->partition = PARTITION_CONSUMER;
    ValueId yes = ir_build_const_int(&b, nl, type_scalar(DT_I1), 1);
    IrOp *ex = ir_build(&b, OP_MBAR_EXPECT, nl, (ValueId[]){bar1, yes}, 2, NULL, 0, 0);
    ex->attr[0] = 4096;
    IrOp *tl =
        ir_build(&b, OP_TMA_LOAD, nl, (ValueId[]){va, yes, bar1, c0, one32, c0}, 6, NULL, 0, 0);
    tl->attr[0] = 0;
    ir_build(&b, OP_MBAR_WAIT, nl, (ValueId[]){bar1, c0}, 2, NULL, 0, 0)->partition =
        PARTITION_PRODUCER;
    /* a tile stored through the map, its dim 1 along the map's dim 0 ({tmap = 0, contig = 1}) */
    IrOp *ts = ir_build(&b, OP_TMA_STORE, nl, (ValueId[]){ll, yes, c0, one32, c0}, 5, NULL, 0, 0);
    ts->attr[0] = 0;
    ts->attr[1] = 1;
    ir_build(&b, OP_MBAR_INVAL, nl, &bars, 1, NULL, 0, 0);
    /* Inserting before a position. */
    IrBuilder before = {.func = f, .region = &f->body, .pos = 0};
    ir_build_const_int(&before, nl, type_scalar(DT_U64), -1);
    ir_build_const_int(&before, nl, type_scalar(DT_U8), 255);
    return f;
}

static void mark_ops(const IrRegion *r, bool *seen)
{
    for (int i = 0; i < r->nops; i++) {
        seen[r->ops[i]->code] = true;
        for (int j = 0; j < r->ops[i]->nregions; j++)
            mark_ops(&r->ops[i]->regions[j], seen);
    }
}

static char *print_func(const IrFunc *f)
{
    StrBuf sb = {0};
    ir_print(&sb, f);
    return strbuf_take(&sb);
}

static bool producer_op(const IrOp *op, const void *ctx)
{
    (void)ctx;
    return op->partition == PARTITION_PRODUCER;
}

int main(void)
{
    Arena *a = arena_new();
    IrFunc *f = build_every_op(a);
    bool seen[OP_COUNT] = {0};
    mark_ops(&f->body, seen);
    for (int i = 0; i < OP_COUNT; i++)
        CHECK(seen[i], "op '%s' is not covered", op_name((OpCode)i));
    for (int i = 0; i < OP_COUNT; i++) {
        OpCode c;
        CHECK(op_from_name(op_name((OpCode)i), &c) && c == (OpCode)i, "op_from_name(%s)",
              op_name((OpCode)i));
    }
    OpCode dummy;
    CHECK(!op_from_name("ad", &dummy), "op_from_name accepts an unknown name");

    /* ir_region_find and ir_region_find_if: the first op in program order, an op before the ops
     * of its regions, nested regions searched (the body's first for, while and mbar_wait found
     * by hand) */
    const IrOp *fo = NULL, *wo = NULL, *producer_wait = NULL;
    for (int i = 0; i < f->body.nops; i++) {
        const IrOp *op = f->body.ops[i];
        if (op->code == OP_FOR && !fo)
            fo = op;
        if (op->code == OP_WHILE && !wo)
            wo = op;
        if (op->code == OP_MBAR_WAIT && !producer_wait)
            producer_wait = op;
    }
    const IrOp *for_yield = fo->regions[0].ops[fo->regions[0].nops - 1];
    const IrOp *while_cond = wo->regions[0].ops[wo->regions[0].nops - 1];
    CHECK(ir_region_find(&f->body, (const OpCode[]){OP_CONDITION}, 1) == while_cond,
          "ir_region_find misses the while's condition");
    CHECK(ir_region_find(&f->body, (const OpCode[]){OP_CONDITION, OP_YIELD}, 2) == for_yield,
          "ir_region_find: not the first of two codes in program order");
    CHECK(ir_region_find(&f->body, (const OpCode[]){OP_YIELD, OP_FOR}, 2) == fo,
          "ir_region_find: a for after the ops of its body");
    CHECK(ir_region_find_if(&f->body, producer_op, NULL) == producer_wait,
          "ir_region_find_if misses the producer's wait");
    CHECK(!ir_region_find_if(&fo->regions[0], producer_op, NULL),
          "ir_region_find_if found a producer op in the for's body");

    char *text1 = print_func(f);
    Diag diag = {0};
    CHECK(ir_verify(f, "build", &diag), "the verifier rejects the built kernel:\n%s\n%s",
          diag.text.data ? diag.text.data : "", text1);

    SrcFile file = {.name = "every_op.tir", .text = text1, .len = strlen(text1)};
    Arena *a2 = arena_new();
    IrFunc *g = ir_parse(&file, a2, &diag);
    CHECK(g, "parse failed:\n%s\n%s", diag.text.data ? diag.text.data : "", text1);
    if (g) {
        char *text2 = print_func(g);
        CHECK(strcmp(text1, text2) == 0,
              "print -> parse -> print differs:\n--- first\n%s--- second\n%s", text1, text2);
        CHECK(ir_verify(g, "parse", &diag), "the verifier rejects the parsed kernel:\n%s",
              diag.text.data ? diag.text.data : "");
        free(text2);
    }
    IrFunc *h = ir_func_clone(f, a2);
    char *text3 = print_func(h);
    CHECK(strcmp(text1, text3) == 0, "clone prints differently:\n%s\n%s", text1, text3);
    CHECK(!g || h->nvalues == g->nvalues, "clone has %d values, the parsed copy %d", h->nvalues,
          g->nvalues);
    free(text3);

    /* ir_replace_all_uses reaches inside regions. */
    ValueId c7 = 0;
    {
        IrBuilder b = {.func = h, .region = &h->body, .pos = 0};
        c7 = ir_build_const_int(&b, (SrcLoc){0}, type_scalar(DT_I32), 7);
    }
    ValueId nparam = h->params[2].value;
    ir_replace_all_uses(h, nparam, c7);
    bool uses_n = false; /* no operand, in any region, may still be the param */
    IrRegion *stack[64];
    int sp = 0;
    stack[sp++] = &h->body;
    while (sp) {
        IrRegion *r = stack[--sp];
        for (int i = 0; i < r->nops; i++) {
            for (int j = 0; j < r->ops[i]->noperands; j++)
                if (r->ops[i]->operands[j] == nparam)
                    uses_n = true;
            for (int j = 0; j < r->ops[i]->nregions && sp < 64; j++)
                stack[sp++] = &r->ops[i]->regions[j];
        }
    }
    CHECK(!uses_n, "ir_replace_all_uses left a use");

    /* A clone into another arena owns everything: free the source, print the clone. */
    if (g) {
        Arena *a3 = arena_new();
        IrFunc *k = ir_func_clone(g, a3);
        arena_free(a2);
        a2 = NULL;
        char *text5 = print_func(k);
        CHECK(strcmp(text1, text5) == 0, "a clone outliving its source prints differently:\n%s",
              text5);
        free(text5);
        arena_free(a3);
    }
    /* Building before a position keeps the order of a run of builds. */
    {
        Arena *a4 = arena_new();
        IrFunc *k = ir_func_new(a4, "order");
        IrBuilder end = {.func = k, .region = &k->body, .pos = -1};
        ValueId last = ir_build_const_int(&end, (SrcLoc){0}, type_scalar(DT_I32), 3);
        IrBuilder at0 = {.func = k, .region = &k->body, .pos = 0};
        ir_build_const_int(&at0, (SrcLoc){0}, type_scalar(DT_I32), 1);
        ir_build_const_int(&at0, (SrcLoc){0}, type_scalar(DT_I32), 2);
        CHECK(k->body.nops == 3 && k->body.ops[0]->attr[0] == 1 && k->body.ops[1]->attr[0] == 2 &&
                  k->body.ops[2]->results[0] == last,
              "ir_build at a position: wrong order");
        ir_region_remove(&k->body, 1);
        CHECK(k->body.nops == 2 && k->body.ops[1]->results[0] == last, "ir_region_remove");
        CHECK(k->values[0].def == NULL && k->nlayouts == 1 && k->layouts[0].kind == LAYOUT_NONE &&
                  k->num_warps == 4 && k->num_stages == 3,
              "ir_func_new defaults");
        arena_free(a4);
    }
    if (getenv("IR_ROUNDTRIP_PRINT"))
        fputs(text1, stdout);
    free(text1);
    diag_free(&diag);
    arena_free(a2);
    arena_free(a);
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("ir_roundtrip: ok (%d ops covered)\n", OP_COUNT);
    return 0;
}
