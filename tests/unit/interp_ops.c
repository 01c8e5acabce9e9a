/* interp_ops.c: every elementwise op of the interpreter on values with known answers: fp16/bf16
 * rounding against bit patterns, C integer division, shifts by the width, casts (saturating,
 * int1 as != 0), compares with NaN, fma's single rounding, memory formats of each dtype. */
#include "interp_test.h"

#include <float.h>

/* out[i] = op(in0[i], in1[i], in2[i]) for i < n; inputs and output in memory as their dtypes. */
static bool elementwise(OpCode code, int nin, const DType *in_dt, const void *const *ins,
                        DType out_dt, void *out, int n, StrBuf *err)
{
    Kernel *k = kernel_new("ops.tri", "elementwise");
    ValueId p[3], v[3];
    for (int i = 0; i < nin; i++)
        p[i] = ir_param_add(k->f, type_ptr(in_dt[i]), "in", 1);
    ValueId po = ir_param_add(k->f, type_ptr(out_dt), "out", 1);
    ValueId r = make_range(k, 0, n);
    for (int i = 0; i < nin; i++)
        v[i] = load(k, 2, ptr_plus(k, p[i], r), 0, 0);
    Type rt = block1(out_dt, n);
    ValueId res = nin == 1   ? op1(k, code, rt, v[0])
                  : nin == 2 ? op2(k, code, rt, v[0], v[1])
                             : op3(k, code, rt, v[0], v[1], v[2]);
    store(k, 3, ptr_plus(k, po, r), res, 0);
    InterpArg args[4];
    InterpBuffer bufs[4];
    for (int i = 0; i < nin; i++) {
        args[i] = arg_ptr(ins[i]);
        bufs[i] = buf_of(ins[i], (size_t)n * dtype_bytes(in_dt[i]));
    }
    args[nin] = arg_ptr(out);
    bufs[nin] = buf_of(out, (size_t)n * dtype_bytes(out_dt));
    bool ok = run_kernel(k, 1, args, nin + 1, bufs, nin + 1, err);
    if (!ok)
        printf("interp: %s\n", err->data);
    kernel_free(k);
    return ok;
}

static bool unary(OpCode code, DType in, const void *a, DType out_dt, void *out, int n, StrBuf *err)
{
    const void *ins[1] = {a};
    return elementwise(code, 1, &in, ins, out_dt, out, n, err);
}

static bool binary(OpCode code, DType in, const void *a, const void *b, DType out_dt, void *out,
                   int n, StrBuf *err)
{
    DType dts[2] = {in, in};
    const void *ins[2] = {a, b};
    return elementwise(code, 2, dts, ins, out_dt, out, n, err);
}

static void check_u16(const char *what, const uint16_t *got, const uint16_t *want, int n)
{
    for (int i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s[%d]: got 0x%04x, want 0x%04x", what, i, got[i], want[i]);
}

static void check_i32(const char *what, const int32_t *got, const int32_t *want, int n)
{
    for (int i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s[%d]: got %d (0x%x), want %d (0x%x)", what, i, got[i],
              (unsigned)got[i], want[i], (unsigned)want[i]);
}

static bool same_float(float a, float b)
{
    uint32_t x, y;
    memcpy(&x, &a, 4);
    memcpy(&y, &b, 4);
    return x == y || (isnan(a) && isnan(b));
}

static void check_f32(const char *what, const float *got, const float *want, int n)
{
    for (int i = 0; i < n; i++)
        CHECK(same_float(got[i], want[i]), "%s[%d]: got %.9g, want %.9g", what, i, got[i], want[i]);
}

static void test_fp32_arith(StrBuf *err)
{
    float a[6] = {1e8f, 0.1f, -3.5f, 1.0f, 16777216.0f, FLT_MAX};
    float b[6] = {1.0f, 0.2f, 2.0f, 3.0f, 1.0f, FLT_MAX};
    float out[6], want[6];
    OpCode codes[4] = {OP_ADD, OP_SUB, OP_MUL, OP_DIV};
    for (int c = 0; c < 4; c++) {
        binary(codes[c], DT_F32, a, b, DT_F32, out, 6, err);
        for (int i = 0; i < 6; i++) {
            volatile float x = a[i], y = b[i];
            want[i] = c == 0 ? x + y : c == 1 ? x - y : c == 2 ? x * y : x / y;
        }
        check_f32(op_name(codes[c]), out, want, 6);
    }
    /* frem is fmod: the sign of a */
    float ra[3] = {-7.5f, 7.5f, 5.0f}, rb[3] = {2.0f, -2.0f, 0.0f};
    binary(OP_REM, DT_F32, ra, rb, DT_F32, out, 3, err);
    CHECK(out[0] == -1.5f && out[1] == 1.5f && isnan(out[2]), "frem: %g %g %g", out[0], out[1],
          out[2]);
    /* min/max skip a NaN operand (minnum/maxnum) */
    float ma[3] = {NAN, 1.0f, -2.0f}, mb[3] = {1.0f, NAN, 3.0f};
    binary(OP_MIN, DT_F32, ma, mb, DT_F32, out, 3, err);
    CHECK(out[0] == 1.0f && out[1] == 1.0f && out[2] == -2.0f, "fmin: %g %g %g", out[0], out[1],
          out[2]);
    binary(OP_MAX, DT_F32, ma, mb, DT_F32, out, 3, err);
    CHECK(out[0] == 1.0f && out[1] == 1.0f && out[2] == 3.0f, "fmax: %g %g %g", out[0], out[1],
          out[2]);
}

static void test_fp16_bf16_arith(StrBuf *err)
{
    /* fp16: 2048 + 1 is a tie -> 2048 (even); 2048 + 3 = 2051 tie -> 2052; 65504 + 16 = 65520 is
     * the midpoint to 65536 -> rounds up -> inf; 2^-24 * 0.5 tie -> 0; 3*2^-24 * 0.5 -> 2*2^-24;
     * 1 + 2^-10 exact. */
    uint16_t a[6] = {0x6800, 0x6800, 0x7BFF, 0x0001, 0x0003, 0x3C00};
    uint16_t b[6] = {0x3C00, 0x4200, 0x4C00, 0x3800, 0x3800, 0x1400};
    uint16_t out[6];
    binary(OP_ADD, DT_F16, a, b, DT_F16, out, 3, err);
    check_u16("fp16 add", out, (uint16_t[]){0x6800, 0x6802, 0x7C00}, 3);
    binary(OP_MUL, DT_F16, a + 3, b + 3, DT_F16, out, 2, err);
    check_u16("fp16 mul subnormal", out, (uint16_t[]){0x0000, 0x0002}, 2);
    binary(OP_ADD, DT_F16, a + 5, b + 5, DT_F16, out, 1, err);
    check_u16("fp16 add exact", out, (uint16_t[]){0x3C01}, 1);
    /* bf16: 1 + 2^-8 is a tie -> 1.0 (0x3F80); 1 + 3*2^-8 tie -> 0x3F82; big * big -> inf */
    uint16_t c[3] = {0x3F80, 0x3F80, 0x7F00}, d[3] = {0x3B80, 0x3C40, 0x7F00};
    binary(OP_ADD, DT_BF16, c, d, DT_BF16, out, 2, err);
    check_u16("bf16 add", out, (uint16_t[]){0x3F80, 0x3F82}, 2);
    binary(OP_MUL, DT_BF16, c + 2, d + 2, DT_BF16, out, 1, err);
    check_u16("bf16 mul overflow", out, (uint16_t[]){0x7F80}, 1);
    /* fp16 division: 1/3 = 0x3555 (0.333251953) */
    uint16_t one = 0x3C00, three = 0x4200;
    binary(OP_DIV, DT_F16, &one, &three, DT_F16, out, 1, err);
    check_u16("fp16 div", out, (uint16_t[]){0x3555}, 1);
}

static void test_float_casts(StrBuf *err)
{
    float x[16] = {1.0f,
                   65504.0f,
                   65520.0f,
                   65519.0f,
                   ldexpf(1, -24),
                   ldexpf(1, -25),
                   ldexpf(3, -26),
                   ldexpf(3, -25),
                   NAN,
                   -0.0f,
                   1.0f + ldexpf(1, -11),
                   1.0f + ldexpf(3, -11),
                   0.1f,
                   -INFINITY,
                   1e-10f,
                   -65536.0f};
    uint16_t h[16];
    unary(OP_CAST, DT_F32, x, DT_F16, h, 16, err);
    check_u16("fp32->fp16", h,
              (uint16_t[]){0x3C00, 0x7BFF, 0x7C00, 0x7BFF, 0x0001, 0x0000, 0x0001, 0x0002, 0x7E00,
                           0x8000, 0x3C00, 0x3C02, 0x2E66, 0xFC00, 0x0000, 0xFC00},
              16);
    float y[8] = {1.0f,    3.14159274f, 1.00390625f, 1.01171875f,
                  FLT_MAX, NAN,         -2.0f,       ldexpf(1, -133)};
    unary(OP_CAST, DT_F32, y, DT_BF16, h, 8, err);
    check_u16("fp32->bf16", h,
              (uint16_t[]){0x3F80, 0x4049, 0x3F80, 0x3F82, 0x7F80, 0x7FC0, 0xC000, 0x0001}, 8);
    uint16_t hs[6] = {0x0001, 0x7C00, 0xFC00, 0x7E00, 0x3555, 0x8000};
    float f[6];
    unary(OP_CAST, DT_F16, hs, DT_F32, f, 6, err);
    check_f32("fp16->fp32", f,
              (float[]){ldexpf(1, -24), INFINITY, -INFINITY, NAN, 0.333251953125f, -0.0f}, 6);
    uint16_t bs[3] = {0x3F80, 0x0001, 0xFF80};
    unary(OP_CAST, DT_BF16, bs, DT_F32, f, 3, err);
    check_f32("bf16->fp32", f, (float[]){1.0f, ldexpf(1, -133), -INFINITY}, 3);
    /* fp16 -> bf16: 0x3555 (0.333251953) -> nearest bf16 0x3EAB (0.333984375) */
    unary(OP_CAST, DT_F16, hs + 4, DT_BF16, h, 1, err);
    check_u16("fp16->bf16", h, (uint16_t[]){0x3EAB}, 1);
    /* fp64 -> fp32 and fp32 -> fp64 */
    double dd[2] = {0.1, 1e300};
    float ff[2];
    unary(OP_CAST, DT_F64, dd, DT_F32, ff, 2, err);
    check_f32("fp64->fp32", ff, (float[]){0.1f, INFINITY}, 2);

    /* float -> int: truncate, saturate, NaN -> 0 */
    float g[7] = {3.7f, -3.7f, NAN, 3e9f, -3e9f, 0.5f, -0.0f};
    int32_t i[7];
    unary(OP_CAST, DT_F32, g, DT_I32, i, 7, err);
    check_i32("fp32->i32", i, (int32_t[]){3, -3, 0, INT32_MAX, INT32_MIN, 0, 0}, 7);
    float g2[4] = {300.0f, -5.0f, 255.9f, NAN};
    uint8_t u8[4];
    unary(OP_CAST, DT_F32, g2, DT_U8, u8, 4, err);
    CHECK(u8[0] == 255 && u8[1] == 0 && u8[2] == 255 && u8[3] == 0, "fp32->u8: %d %d %d %d", u8[0],
          u8[1], u8[2], u8[3]);
    /* float -> int1 is x != 0 (NaN too) */
    float g3[4] = {0.0f, 0.5f, -0.0f, NAN};
    uint8_t b1[4];
    unary(OP_CAST, DT_F32, g3, DT_I1, b1, 4, err);
    CHECK(b1[0] == 0 && b1[1] == 1 && b1[2] == 0 && b1[3] == 1, "fp32->i1: %d %d %d %d", b1[0],
          b1[1], b1[2], b1[3]);
}

static void test_int_casts(StrBuf *err)
{
    int32_t a[5] = {300, -1, 255, 2, 0};
    int8_t i8[5];
    unary(OP_CAST, DT_I32, a, DT_I8, i8, 5, err);
    CHECK(i8[0] == 44 && i8[1] == -1 && i8[2] == -1, "i32->i8: %d %d %d", i8[0], i8[1], i8[2]);
    uint8_t b1[5];
    unary(OP_CAST, DT_I32, a, DT_I1, b1, 5, err);
    CHECK(b1[0] == 1 && b1[1] == 1 && b1[3] == 1 && b1[4] == 0, "i32->i1 is != 0: %d %d %d %d",
          b1[0], b1[1], b1[3], b1[4]);
    int8_t m1[2] = {-1, 5};
    uint32_t u32[2];
    unary(OP_CAST, DT_I8, m1, DT_U32, u32, 2, err);
    CHECK(u32[0] == 0xFFFFFFFFu && u32[1] == 5, "i8->u32 sign-extends: 0x%x", u32[0]);
    uint8_t u8[2] = {255, 7};
    int32_t i32[2];
    unary(OP_CAST, DT_U8, u8, DT_I32, i32, 2, err);
    check_i32("u8->i32 zero-extends", i32, (int32_t[]){255, 7}, 2);
    int64_t big[2] = {INT64_MIN, INT64_MAX};
    int32_t t32[2];
    unary(OP_CAST, DT_I64, big, DT_I32, t32, 2, err);
    check_i32("i64->i32 truncates", t32, (int32_t[]){0, -1}, 2);
    /* int -> float rounds to nearest even, once */
    int32_t c[4] = {16777217, 16777219, 2049, 65519};
    float f[4];
    unary(OP_CAST, DT_I32, c, DT_F32, f, 2, err);
    check_f32("i32->fp32", f, (float[]){16777216.0f, 16777220.0f}, 2);
    uint16_t h[2];
    unary(OP_CAST, DT_I32, c + 2, DT_F16, h, 2, err);
    check_u16("i32->fp16", h, (uint16_t[]){0x6800, 0x7BFF}, 2);
    /* 2^60 + 2^36 + 1 is just above the fp32 midpoint 2^60 + 2^36: rounds up to 2^60 + 2^37.
     * Going through a plain double would lose the +1 and tie to even (2^60). */
    int64_t e[2] = {(INT64_C(1) << 60) + (INT64_C(1) << 36) + 1,
                    -((INT64_C(1) << 60) + (INT64_C(1) << 36) + 1)};
    unary(OP_CAST, DT_I64, e, DT_F32, f, 2, err);
    check_f32("i64->fp32 single rounding", f,
              (float[]){ldexpf(1, 60) + ldexpf(1, 37), -(ldexpf(1, 60) + ldexpf(1, 37))}, 2);
    uint64_t ub[1] = {UINT64_MAX};
    double d[1];
    unary(OP_CAST, DT_U64, ub, DT_F64, d, 1, err);
    CHECK(d[0] == 18446744073709551616.0, "u64->fp64: %.17g", d[0]);
    uint8_t bt[2] = {1, 0};
    unary(OP_CAST, DT_I1, bt, DT_F32, f, 2, err);
    check_f32("i1->fp32", f, (float[]){1.0f, 0.0f}, 2);
}

static void test_int_arith(StrBuf *err)
{
    int32_t a[6] = {-7, 7, -7, 7, INT32_MIN, INT32_MAX};
    int32_t b[6] = {2, -2, -2, 2, -1, 1};
    int32_t r[6];
    binary(OP_DIV, DT_I32, a, b, DT_I32, r, 6, err);
    check_i32("sdiv", r, (int32_t[]){-3, -3, 3, 3, INT32_MIN, INT32_MAX}, 6);
    binary(OP_REM, DT_I32, a, b, DT_I32, r, 6, err);
    check_i32("srem", r, (int32_t[]){-1, 1, -1, 1, 0, 0}, 6);
    binary(OP_ADD, DT_I32, a + 5, b + 5, DT_I32, r, 1, err);
    check_i32("add wraps", r, (int32_t[]){INT32_MIN}, 1);
    binary(OP_MUL, DT_I32, a + 4, b + 4, DT_I32, r, 1, err);
    check_i32("mul wraps", r, (int32_t[]){INT32_MIN}, 1);
    uint32_t ua[2] = {0xFFFFFFF9u, 7}, ub[2] = {2, 0xFFFFFFFEu}, ur[2];
    binary(OP_DIV, DT_U32, ua, ub, DT_U32, ur, 2, err);
    CHECK(ur[0] == 0x7FFFFFFCu && ur[1] == 0, "udiv: 0x%x %u", ur[0], ur[1]);
    binary(OP_REM, DT_U32, ua, ub, DT_U32, ur, 2, err);
    CHECK(ur[0] == 1 && ur[1] == 7, "urem: %u %u", ur[0], ur[1]);
    int64_t la[1] = {INT64_MIN}, lb[1] = {-1}, lr[1];
    binary(OP_DIV, DT_I64, la, lb, DT_I64, lr, 1, err);
    CHECK(lr[0] == INT64_MIN, "INT64_MIN / -1 wraps: %lld", (long long)lr[0]);
    int8_t ca[2] = {100, -100}, cb[2] = {100, 100}, cr[2];
    binary(OP_ADD, DT_I8, ca, cb, DT_I8, cr, 2, err);
    CHECK(cr[0] == -56 && cr[1] == 0, "i8 add wraps: %d %d", cr[0], cr[1]);

    /* shifts: by >= width defined; shr arithmetic for signed, logical for unsigned */
    int32_t sa[6] = {-16, 1, 1, -1, 5, -16}, sb[6] = {2, 31, 32, 40, -1, 0};
    binary(OP_SHR, DT_I32, sa, sb, DT_I32, r, 6, err);
    check_i32("ashr", r, (int32_t[]){-4, 0, 0, -1, 0, -16}, 6);
    binary(OP_SHL, DT_I32, sa, sb, DT_I32, r, 6, err);
    check_i32("shl", r, (int32_t[]){-64, INT32_MIN, 0, 0, 0, -16}, 6);
    uint32_t xa[3] = {0xFFFFFFF0u, 0xFFFFFFFFu, 8}, xb[3] = {2, 40, 3};
    binary(OP_SHR, DT_U32, xa, xb, DT_U32, ur, 2, err);
    CHECK(ur[0] == 0x3FFFFFFCu && ur[1] == 0, "lshr: 0x%x 0x%x", ur[0], ur[1]);

    /* min/max by signedness; bitwise */
    int32_t ma[2] = {-1, 3}, mb[2] = {1, -3};
    binary(OP_MIN, DT_I32, ma, mb, DT_I32, r, 2, err);
    check_i32("smin", r, (int32_t[]){-1, -3}, 2);
    uint32_t na[2] = {0xFFFFFFFFu, 3}, nb[2] = {1, 0xFFFFFFFDu};
    binary(OP_MAX, DT_U32, na, nb, DT_U32, ur, 2, err);
    CHECK(ur[0] == 0xFFFFFFFFu && ur[1] == 0xFFFFFFFDu, "umax: 0x%x 0x%x", ur[0], ur[1]);
    int32_t ba[1] = {0x0FF0}, bb[1] = {0x00FF};
    binary(OP_AND, DT_I32, ba, bb, DT_I32, r, 1, err);
    CHECK(r[0] == 0x00F0, "and");
    binary(OP_OR, DT_I32, ba, bb, DT_I32, r, 1, err);
    CHECK(r[0] == 0x0FFF, "or");
    binary(OP_XOR, DT_I32, ba, bb, DT_I32, r, 1, err);
    CHECK(r[0] == 0x0F0F, "xor");

    /* umulhi: the high 32 bits of the unsigned product, whatever the dtype's sign */
    uint32_t ha[2] = {0xFFFFFFFFu, 0x10000}, hb[2] = {0xFFFFFFFFu, 0x10000};
    binary(OP_UMULHI, DT_U32, ha, hb, DT_U32, ur, 2, err);
    CHECK(ur[0] == 0xFFFFFFFEu && ur[1] == 1, "umulhi u32: 0x%x 0x%x", ur[0], ur[1]);
    binary(OP_UMULHI, DT_I32, ha, hb, DT_I32, r, 1, err);
    CHECK(r[0] == -2, "umulhi i32: %d", r[0]);
    uint64_t qa[2] = {UINT64_MAX, 0x123456789ABCDEF0u}, qb[2] = {UINT64_MAX, 0xFEDCBA9876543210u},
             qr[2];
    binary(OP_UMULHI, DT_U64, qa, qb, DT_U64, qr, 2, err);
    CHECK(qr[0] == UINT64_MAX - 1 && qr[1] == 0x121fa00ad77d7422u, "umulhi u64: 0x%llx 0x%llx",
          (unsigned long long)qr[0], (unsigned long long)qr[1]);

    /* unary ints */
    int32_t u[3] = {INT32_MIN, -5, 0};
    unary(OP_ABS, DT_I32, u, DT_I32, r, 3, err);
    check_i32("iabs", r, (int32_t[]){INT32_MIN, 5, 0}, 3);
    unary(OP_NEG, DT_I32, u, DT_I32, r, 3, err);
    check_i32("ineg", r, (int32_t[]){INT32_MIN, 5, 0}, 3);
    unary(OP_NOT, DT_I32, u, DT_I32, r, 3, err);
    check_i32("not", r, (int32_t[]){INT32_MAX, 4, -1}, 3);
    uint8_t bo[2] = {0, 1}, bn[2];
    unary(OP_NOT, DT_I1, bo, DT_I1, bn, 2, err);
    CHECK(bn[0] == 1 && bn[1] == 0, "not i1: %d %d", bn[0], bn[1]);
}

static void test_compare_select(StrBuf *err)
{
    float a[4] = {NAN, 1.0f, 2.0f, -0.0f}, b[4] = {NAN, 2.0f, 2.0f, 0.0f};
    uint8_t r[4];
    OpCode codes[6] = {OP_CMP_EQ, OP_CMP_NE, OP_CMP_LT, OP_CMP_LE, OP_CMP_GT, OP_CMP_GE};
    const uint8_t want[6][4] = {{0, 0, 1, 1}, {1, 1, 0, 0}, {0, 1, 0, 0},
                                {0, 1, 1, 1}, {0, 0, 0, 0}, {0, 0, 1, 1}};
    for (int c = 0; c < 6; c++) {
        binary(codes[c], DT_F32, a, b, DT_I1, r, 4, err);
        for (int i = 0; i < 4; i++)
            CHECK(r[i] == want[c][i], "%s fp32 [%d]: %d", op_name(codes[c]), i, r[i]);
    }
    int32_t ia[2] = {-1, 5}, ib[2] = {1, 5};
    binary(OP_CMP_LT, DT_I32, ia, ib, DT_I1, r, 2, err);
    CHECK(r[0] == 1 && r[1] == 0, "slt: %d %d", r[0], r[1]);
    binary(OP_CMP_LT, DT_U32, ia, ib, DT_I1, r, 2, err);
    CHECK(r[0] == 0 && r[1] == 0, "ult (0xffffffff < 1 is false): %d %d", r[0], r[1]);
    binary(OP_CMP_GE, DT_U32, ia, ib, DT_I1, r, 2, err);
    CHECK(r[0] == 1 && r[1] == 1, "uge: %d %d", r[0], r[1]);

    uint8_t c[3] = {1, 0, 1};
    float x[3] = {1, 2, 3}, y[3] = {-1, -2, -3}, out[3];
    DType dts[3] = {DT_I1, DT_F32, DT_F32};
    const void *ins[3] = {c, x, y};
    elementwise(OP_SELECT, 3, dts, ins, DT_F32, out, 3, err);
    check_f32("select", out, (float[]){1, -2, 3}, 3);
}

static void test_float_unary_fma_bitcast(StrBuf *err)
{
    float x[4] = {2.0f, 1.0f, 0.5f, -1.25f}, r[4];
    struct {
        OpCode code;
        double (*ref)(double);
    } fns[] = {{OP_EXP, exp}, {OP_EXP2, exp2}, {OP_LOG, log},     {OP_LOG2, log2}, {OP_SQRT, sqrt},
               {OP_SIN, sin}, {OP_COS, cos},   {OP_FLOOR, floor}, {OP_CEIL, ceil}, {OP_ABS, fabs}};
    for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
        unary(fns[f].code, DT_F32, x, DT_F32, r, 4, err);
        for (int i = 0; i < 4; i++)
            CHECK(same_float(r[i], (float)fns[f].ref(x[i])), "%s(%g): got %.9g",
                  op_name(fns[f].code), x[i], r[i]);
    }
    unary(OP_RSQRT, DT_F32, x, DT_F32, r, 2, err);
    check_f32("rsqrt", r, (float[]){(float)(1 / sqrt(2.0)), 1.0f}, 2);
    unary(OP_NEG, DT_F32, x, DT_F32, r, 4, err);
    check_f32("fneg", r, (float[]){-2.0f, -1.0f, -0.5f, 1.25f}, 4);
    /* fp16 exp rounds the double result once to half: e = 2.71875 (0x4170) */
    uint16_t one = 0x3C00, h;
    unary(OP_EXP, DT_F16, &one, DT_F16, &h, 1, err);
    check_u16("fp16 exp(1)", &h, (uint16_t[]){0x4170}, 1);

    /* fma rounds once: (1 + 2^-23)(1 - 2^-23) - 1 = -2^-46, where mul-then-add gives 0 */
    float fa = 1.0f + ldexpf(1, -23), fb = 1.0f - ldexpf(1, -23), fc = -1.0f, fr;
    DType dts[3] = {DT_F32, DT_F32, DT_F32};
    const void *ins[3] = {&fa, &fb, &fc};
    elementwise(OP_FMA, 3, dts, ins, DT_F32, &fr, 1, err);
    CHECK(fr == -ldexpf(1, -46), "fma: %.9g", fr);

    float bits_in[2] = {1.0f, -2.0f};
    int32_t bits_out[2];
    unary(OP_BITCAST, DT_F32, bits_in, DT_I32, bits_out, 2, err);
    check_i32("bitcast fp32->i32", bits_out, (int32_t[]){0x3F800000, (int32_t)0xC0000000u}, 2);
    int16_t hb[2] = {0x3C00, (int16_t)0x7C01};
    uint16_t hr[2];
    unary(OP_BITCAST, DT_I16, hb, DT_F16, hr, 2, err);
    check_u16("bitcast i16->fp16 (NaN payload kept)", hr, (uint16_t[]){0x3C00, 0x7C01}, 2);
    uint16_t bfin[1] = {0xFFC1};
    int16_t bfout[1];
    unary(OP_BITCAST, DT_BF16, bfin, DT_I16, bfout, 1, err);
    CHECK((uint16_t)bfout[0] == 0xFFC1, "bitcast bf16->i16: 0x%x", (uint16_t)bfout[0]);
}

/* Loads and stores move each dtype's own bytes: int1 as 0/1 bytes, fp64, int64, uint16. */
static void test_memory_formats(StrBuf *err)
{
    uint8_t bools[4] = {0, 1, 2, 0}, bout[4] = {9, 9, 9, 9};
    unary(OP_CONVERT_LAYOUT, DT_I1, bools, DT_I1, bout, 4, err);
    CHECK(bout[0] == 0 && bout[1] == 1 && bout[2] == 1 && bout[3] == 0,
          "i1 round trip: %d %d %d %d", bout[0], bout[1], bout[2], bout[3]);
    double d[2] = {0.1, -1e300}, dout[2];
    unary(OP_MULTIPLE_OF, DT_F64, d, DT_F64, dout, 2, err);
    CHECK(dout[0] == 0.1 && dout[1] == -1e300, "fp64 round trip");
    int64_t l[2] = {INT64_MIN, -2}, lout[2];
    unary(OP_MAX_CONTIGUOUS, DT_I64, l, DT_I64, lout, 2, err);
    CHECK(lout[0] == INT64_MIN && lout[1] == -2, "i64 round trip");
    uint16_t u[2] = {65535, 1}, uout[2];
    unary(OP_CONVERT_LAYOUT, DT_U16, u, DT_U16, uout, 2, err);
    CHECK(uout[0] == 65535 && uout[1] == 1, "u16 round trip");
    /* an unaligned fp32 buffer: memcpy, never UB */
    unsigned char raw[1 + 4 * 3] = {0};
    float vals[3] = {1.5f, -2.0f, 3.25f};
    memcpy(raw + 1, vals, sizeof vals);
    float fout[3];
    unary(OP_CONVERT_LAYOUT, DT_F32, raw + 1, DT_F32, fout, 3, err);
    check_f32("unaligned fp32", fout, vals, 3);
}

int main(void)
{
    StrBuf err = {0};
    test_fp32_arith(&err);
    test_fp16_bf16_arith(&err);
    test_float_casts(&err);
    test_int_casts(&err);
    test_int_arith(&err);
    test_compare_select(&err);
    test_float_unary_fma_bitcast(&err);
    test_memory_formats(&err);
    strbuf_free(&err);
    if (test_failures) {
        printf("%d check(s) failed\n", test_failures);
        return 1;
    }
    printf("interp_ops: all checks passed\n");
    return 0;
}
