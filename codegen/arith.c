/* arith.c: elementwise ops (arithmetic, compare, select, fma, casts, bitcast, math) with the
 * interpreter's semantics (ir/interp.c): integer shifts clamp, float->int casts saturate, bf16 is
 * computed in fp32, math functions come from libdevice. docs/codegen.md "Elementwise ops". */
#include "codegen/internal.h"

#include <math.h>
#include <stdio.h>

/* ---- scalar arithmetic with the interpreter's semantics ------------------------------------- */

static LLVMValueRef call1(Cg *c, const char *name, LLVMTypeRef ty, LLVMValueRef a)
{
    return cg_call(c->l, name, ty, &a, 1);
}

static LLVMValueRef call2(Cg *c, const char *name, LLVMTypeRef ty, LLVMValueRef a, LLVMValueRef b)
{
    LLVMValueRef args[2] = {a, b};
    return cg_call(c->l, name, ty, args, 2);
}

static const char *fsuffix(Cg *c, LLVMTypeRef t)
{
    return t == c->l->f64 ? "f64" : t == c->l->f16 ? "f16" : "f32";
}

/* bf16 arithmetic is done in fp32 and rounded: sm_80 lacks most bf16 instructions. */
LLVMValueRef cg_widen(Cg *c, LLVMValueRef v)
{
    return LLVMTypeOf(v) == c->l->bf16 ? LLVMBuildFPExt(c->l->b, v, c->l->f32, "") : v;
}

static LLVMValueRef narrow(Cg *c, LLVMValueRef v, DType t)
{
    return t == DT_BF16 ? LLVMBuildFPTrunc(c->l->b, v, c->l->bf16, "") : v;
}

/* A libdevice math function (__nv_expf / __nv_exp); fp16 and bf16 go through fp32. */
static LLVMValueRef libdevice1(Cg *c, const char *op, const char *base, DType t, LLVMValueRef a)
{
    LLVMBuilderRef b = c->l->b;
    c->needs_libdevice = true;
    if (!c->math_name)
        c->math_name = op;
    char name[64];
    if (t == DT_F64) {
        snprintf(name, sizeof name, "__nv_%s", base);
        return call1(c, name, c->l->f64, a);
    }
    snprintf(name, sizeof name, "__nv_%sf", base);
    LLVMValueRef x = t == DT_F32 ? a : LLVMBuildFPExt(b, a, c->l->f32, "");
    LLVMValueRef r = call1(c, name, c->l->f32, x);
    return t == DT_F32 ? r : LLVMBuildFPTrunc(b, r, cg_elem_type(c, t), "");
}

/* OP_LIBDEVICE: the table's __nv_ function for fp32 or fp64 operands; fp16 and bf16 are
 * widened to fp32 and the result rounded back, as Triton's math ops. A predicate (isnan, isinf,
 * signbit) returns an i32 0/1 that becomes the i1 the IR wants. */
static LLVMValueRef libdevice_call(Cg *c, int64_t fn, DType t, LLVMValueRef x, LLVMValueRef y)
{
    const LibdeviceInfo *info = libdevice_info(fn);
    if (!info)
        return NULL;
    LLVMBuilderRef b = c->l->b;
    c->needs_libdevice = true;
    if (!c->math_name)
        c->math_name = info->name;
    bool wide = t == DT_F64;
    LLVMTypeRef ty = wide ? c->l->f64 : c->l->f32;
    LLVMValueRef args[2] = {x, y};
    for (int i = 0; i < info->nargs; i++)
        if (!wide && t != DT_F32)
            args[i] = LLVMBuildFPExt(b, args[i], c->l->f32, "");
    const char *sym = wide ? info->symbol_f64 : info->symbol_f32;
    if (info->result == LDR_PRED) {
        LLVMValueRef r = cg_call(c->l, sym, c->l->i32, args, info->nargs);
        return LLVMBuildICmp(b, LLVMIntNE, r, LLVMConstInt(c->l->i32, 0, 0), "");
    }
    LLVMValueRef r = cg_call(c->l, sym, ty, args, info->nargs);
    return wide || t == DT_F32 ? r : LLVMBuildFPTrunc(b, r, cg_elem_type(c, t), "");
}

/* A float add, sub or mul that LLVM may fuse with its neighbour into one fma.rn (the `contract`
 * flag; NVPTX otherwise prints mul.rn/add.rn so that ptxas fuses nothing either): Triton's default,
 * enable_fp_fusion=True, which e.g. makes attention's `qk * scale - m` one fma per element.
 * --no-fp-fusion keeps each rounded on its own (what the interpreter computes). */
static LLVMValueRef contractible(Cg *c, LLVMValueRef inst)
{
    if (!c->o->no_fp_fusion && LLVMCanValueUseFastMathFlags(inst))
        LLVMSetFastMathFlags(inst, LLVMFastMathAllowContract);
    return inst;
}

/* Float `/` as Triton lowers it (FDivOpConversion): fp32 (and fp16/bf16, computed in fp32) is
 * `div.full.f32` (PTX ISA 9.7.3.8: an approximation within 2 ulp, a reciprocal and a multiply,
 * where `div.rn.f32` is a dozen instructions with a slow path); tl.div_rn is the correctly
 * rounded one. fp64 stays div.rn. A power-of-two divisor is an exact multiply (LLVM's fdiv makes
 * it one), and two constants fold. */
static LLVMValueRef float_div(Cg *c, DType t, LLVMValueRef a, LLVMValueRef e)
{
    LLVMBuilderRef b = c->l->b;
    LLVMBool loses;
    double d = LLVMIsAConstantFP(e) ? LLVMConstRealGetDouble(e, &loses) : 0;
    int ex;
    bool pow2 = LLVMIsAConstantFP(e) && d != 0 && isfinite(d) && fabs(frexp(d, &ex)) == 0.5;
    if (t == DT_F64 || pow2 || (LLVMIsAConstantFP(a) && LLVMIsAConstantFP(e)))
        return LLVMBuildFDiv(b, a, e, "");
    bool half = LLVMTypeOf(a) == c->l->f16;
    LLVMValueRef args[2] = {half ? LLVMBuildFPExt(b, a, c->l->f32, "") : a,
                            half ? LLVMBuildFPExt(b, e, c->l->f32, "") : e};
    LLVMValueRef q = cg_asm(c->l, c->l->f32, "div.full.f32 $0, $1, $2;", "=f,f,f", args, 2, false);
    return half ? LLVMBuildFPTrunc(b, q, c->l->f16, "") : q;
}

LLVMValueRef cg_binary(Cg *c, OpCode op, DType t, LLVMValueRef x, LLVMValueRef y)
{
    LLVMBuilderRef b = c->l->b;
    char name[64];
    if (dtype_is_float(t)) {
        LLVMValueRef a = cg_widen(c, x), e = cg_widen(c, y), r;
        LLVMTypeRef ty = LLVMTypeOf(a);
        switch (op) {
        case OP_ADD: r = contractible(c, LLVMBuildFAdd(b, a, e, "")); break;
        case OP_SUB: r = contractible(c, LLVMBuildFSub(b, a, e, "")); break;
        case OP_MUL: r = contractible(c, LLVMBuildFMul(b, a, e, "")); break;
        case OP_DIV: r = float_div(c, t, a, e); break;
        case OP_REM: {
            /* C fmod, as the interpreter: libdevice's exact __nv_fmodf. */
            c->needs_libdevice = true;
            if (!c->math_name)
                c->math_name = "fmod";
            LLVMValueRef a32 = t == DT_F16 ? LLVMBuildFPExt(b, a, c->l->f32, "") : a;
            LLVMValueRef e32 = t == DT_F16 ? LLVMBuildFPExt(b, e, c->l->f32, "") : e;
            r = call2(c, t == DT_F64 ? "__nv_fmod" : "__nv_fmodf", LLVMTypeOf(a32), a32, e32);
            if (t == DT_F16)
                r = LLVMBuildFPTrunc(b, r, c->l->f16, "");
            break;
        }
        case OP_MIN:
        case OP_MAX:
            /* minnum/maxnum (PTX min/max.f32): a NaN operand yields the other one, as C fmin. */
            snprintf(name, sizeof name, "llvm.%s.%s", op == OP_MIN ? "minnum" : "maxnum",
                     fsuffix(c, ty));
            r = call2(c, name, ty, a, e);
            break;
        default: return NULL;
        }
        return narrow(c, r, t);
    }
    bool sgn = dtype_is_signed(t);
    switch (op) {
    case OP_ADD: return cg_add(b, x, y, "");
    case OP_SUB: return LLVMBuildSub(b, x, y, "");
    case OP_MUL: return cg_mul(b, x, y, "");
    case OP_DIV: return sgn ? LLVMBuildSDiv(b, x, y, "") : cg_udiv(b, x, y, "");
    case OP_REM: return sgn ? LLVMBuildSRem(b, x, y, "") : cg_urem(b, x, y, "");
    case OP_MIN:
    case OP_MAX: {
        LLVMIntPredicate p =
            op == OP_MIN ? (sgn ? LLVMIntSLT : LLVMIntULT) : (sgn ? LLVMIntSGT : LLVMIntUGT);
        return LLVMBuildSelect(b, LLVMBuildICmp(b, p, x, y, ""), x, y, "");
    }
    case OP_AND: return LLVMBuildAnd(b, x, y, "");
    case OP_OR: return LLVMBuildOr(b, x, y, "");
    case OP_XOR: return LLVMBuildXor(b, x, y, "");
    case OP_SHL:
    case OP_SHR: {
        /* Amounts of the width or more (unsigned) clamp as PTX's shl/shr do (PTX ISA §9.7.8.8),
         * which is the interpreter's rule; LLVM's shifts would be poison there. */
        LLVMTypeRef ty = LLVMTypeOf(x);
        LLVMValueRef width = LLVMConstInt(ty, LLVMGetIntTypeWidth(ty), 0);
        LLVMValueRef big = LLVMBuildICmp(b, LLVMIntUGE, y, width, "");
        if (op == OP_SHR && sgn) {
            LLVMValueRef amt =
                LLVMBuildSelect(b, big, LLVMConstInt(ty, LLVMGetIntTypeWidth(ty) - 1, 0), y, "");
            return LLVMBuildAShr(b, x, amt, "");
        }
        LLVMValueRef safe = LLVMBuildSelect(b, big, LLVMConstInt(ty, 0, 0), y, "");
        LLVMValueRef v =
            op == OP_SHL ? LLVMBuildShl(b, x, safe, "") : LLVMBuildLShr(b, x, safe, "");
        return LLVMBuildSelect(b, big, LLVMConstInt(ty, 0, 0), v, "");
    }
    case OP_UMULHI: {
        LLVMTypeRef ty = LLVMTypeOf(x);
        unsigned bits = LLVMGetIntTypeWidth(ty);
        LLVMTypeRef wide = LLVMIntTypeInContext(c->l->ctx, bits * 2);
        LLVMValueRef p =
            cg_mul(b, LLVMBuildZExt(b, x, wide, ""), LLVMBuildZExt(b, y, wide, ""), "");
        p = LLVMBuildLShr(b, p, LLVMConstInt(wide, bits, 0), "");
        return LLVMBuildTrunc(b, p, ty, "");
    }
    default: return NULL;
    }
}

LLVMValueRef cg_compare(Cg *c, OpCode op, Type t, LLVMValueRef x, LLVMValueRef y)
{
    LLVMBuilderRef b = c->l->b;
    if (!t.is_ptr && dtype_is_float(t.dtype)) {
        LLVMRealPredicate p = op == OP_CMP_EQ   ? LLVMRealOEQ
                              : op == OP_CMP_NE ? LLVMRealUNE
                              : op == OP_CMP_LT ? LLVMRealOLT
                              : op == OP_CMP_LE ? LLVMRealOLE
                              : op == OP_CMP_GT ? LLVMRealOGT
                                                : LLVMRealOGE;
        return LLVMBuildFCmp(b, p, cg_widen(c, x), cg_widen(c, y), "");
    }
    bool sgn = !t.is_ptr && dtype_is_signed(t.dtype);
    LLVMIntPredicate p = op == OP_CMP_EQ   ? LLVMIntEQ
                         : op == OP_CMP_NE ? LLVMIntNE
                         : op == OP_CMP_LT ? (sgn ? LLVMIntSLT : LLVMIntULT)
                         : op == OP_CMP_LE ? (sgn ? LLVMIntSLE : LLVMIntULE)
                         : op == OP_CMP_GT ? (sgn ? LLVMIntSGT : LLVMIntUGT)
                                           : (sgn ? LLVMIntSGE : LLVMIntUGE);
    return LLVMBuildICmp(b, p, x, y, "");
}

static LLVMValueRef unary(Cg *c, OpCode op, DType t, LLVMValueRef a)
{
    LLVMBuilderRef b = c->l->b;
    bool fl = dtype_is_float(t);
    LLVMTypeRef ty = LLVMTypeOf(a);
    char name[64];
    switch (op) {
    case OP_NEG: return fl ? LLVMBuildFNeg(b, a, "") : LLVMBuildNeg(b, a, "");
    case OP_NOT: return LLVMBuildNot(b, a, "");
    case OP_ABS:
        if (fl) {
            LLVMValueRef w = cg_widen(c, a);
            snprintf(name, sizeof name, "llvm.fabs.%s", fsuffix(c, LLVMTypeOf(w)));
            return narrow(c, call1(c, name, LLVMTypeOf(w), w), t);
        }
        if (!dtype_is_signed(t))
            return a;
        snprintf(name, sizeof name, "llvm.abs.i%u", LLVMGetIntTypeWidth(ty));
        return call2(c, name, ty, a, LLVMConstInt(c->l->i1, 0, 0));
    case OP_SQRT:
    case OP_FLOOR:
    case OP_CEIL: {
        /* Exact in PTX (sqrt.rn, cvt.rmi, cvt.rpi): LLVM intrinsics, no libdevice. */
        LLVMValueRef w = cg_widen(c, a);
        const char *base = op == OP_SQRT ? "sqrt" : op == OP_FLOOR ? "floor" : "ceil";
        snprintf(name, sizeof name, "llvm.%s.%s", base, fsuffix(c, LLVMTypeOf(w)));
        return narrow(c, call1(c, name, LLVMTypeOf(w), w), t);
    }
    case OP_EXP:
        if (t == DT_F32) {
            /* Triton's ExpOpConversionApprox: fp32 exp(x) = ex2.approx.f32(x * rn(log2 e)) (PTX
             * ISA 9.7.3.22), two instructions where __nv_expf is eight; other types libdevice */
            LLVMValueRef s = contractible(
                c, LLVMBuildFMul(c->l->b, a, LLVMConstReal(c->l->f32, 1.4426950216293335), ""));
            return cg_asm(c->l, c->l->f32, "ex2.approx.f32 $0, $1;", "=f,f", &s, 1, false);
        }
        return libdevice1(c, "exp", "exp", t, a);
    case OP_EXP2: return libdevice1(c, "exp2", "exp2", t, a);
    case OP_LOG: return libdevice1(c, "log", "log", t, a);
    case OP_LOG2: return libdevice1(c, "log2", "log2", t, a);
    case OP_RSQRT: return libdevice1(c, "rsqrt", "rsqrt", t, a);
    case OP_SIN: return libdevice1(c, "sin", "sin", t, a);
    case OP_COS: return libdevice1(c, "cos", "cos", t, a);
    default: return NULL;
    }
}

/* ---- fp8 conversions ------------------------------------------------------------------------ */

/* fp8 values live in i8 registers (LLVM has no fp8 type). The conversions are PTX's cvt forms of
 * PTX ISA 7.8 for sm_89+ ("cvt", half-precision and fp8 conversions): each converts a pair, so a
 * block's cast takes its elements two by two, and a lone value goes in both halves. Going down is
 * .rn.satfinite (the only rounding PTX offers for fp8: nearest even, beyond the largest finite
 * value saturate to it, NaN stays NaN); going up to fp16 is exact. The interpreter does the same
 * in software (support/float8.c). */
static const char *fp8_ptx_name(DType t) { return t == DT_F8E5 ? "e5m2x2" : "e4m3x2"; }

/* fp8 bits (i8) -> f16 without the sm_89 cvt, exactly. e5m2 is the top byte of an fp16. e4m3's
 * bits moved to fp16's places (sign to bit 15, exponent and mantissa shifted by 7) read as an fp16
 * of value v * 2^-8 (biases 15 and 7), subnormals included; a multiply by 2^8 is exact (the
 * largest, 448, is far from fp16's overflow). Its NaN (S.1111.111) is the one special. */
static LLVMValueRef fp8_to_f16_soft(Cg *c, DType from, LLVMValueRef bits)
{
    LLVMBuilderRef b = c->l->b;
    LLVMTypeRef i16 = c->l->i16;
    LLVMValueRef w = LLVMBuildZExt(b, bits, i16, "");
    if (from == DT_F8E5)
        return LLVMBuildBitCast(b, LLVMBuildShl(b, w, LLVMConstInt(i16, 8, 0), ""), c->l->f16, "");
    LLVMValueRef sign = LLVMBuildShl(b, LLVMBuildAnd(b, w, LLVMConstInt(i16, 0x80, 0), ""),
                                     LLVMConstInt(i16, 8, 0), "");
    LLVMValueRef mag = LLVMBuildAnd(b, w, LLVMConstInt(i16, 0x7f, 0), "");
    LLVMValueRef h = LLVMBuildOr(b, sign, LLVMBuildShl(b, mag, LLVMConstInt(i16, 7, 0), ""), "");
    LLVMValueRef v = LLVMBuildFMul(b, LLVMBuildBitCast(b, h, c->l->f16, ""),
                                   LLVMConstReal(c->l->f16, 256.0), "");
    LLVMValueRef is_nan = LLVMBuildICmp(b, LLVMIntEQ, mag, LLVMConstInt(i16, 0x7f, 0), "");
    LLVMValueRef nan =
        LLVMBuildBitCast(b, LLVMBuildOr(b, sign, LLVMConstInt(i16, 0x7e00, 0), ""), c->l->f16, "");
    return LLVMBuildSelect(b, is_nan, nan, v, "");
}

/* Two fp8 values (i8) -> two f16: cvt.rn.f16x2.{e4m3x2,e5m2x2} d(b32), a(b16), each byte of a to
 * the same half of d (v0 low, v1 high) on sm_89+, else in software. */
static void fp8x2_to_f16x2(Cg *c, DType from, LLVMValueRef v0, LLVMValueRef v1, LLVMValueRef out[2])
{
    if (c->o->sm && c->o->sm < 89) {
        out[0] = fp8_to_f16_soft(c, from, v0);
        out[1] = v1 == v0 ? out[0] : fp8_to_f16_soft(c, from, v1);
        return;
    }
    LLVMBuilderRef b = c->l->b;
    LLVMTypeRef i16 = c->l->i16;
    char text[64];
    snprintf(text, sizeof text, "cvt.rn.f16x2.%s $0, $1;", fp8_ptx_name(from));
    LLVMValueRef a = LLVMBuildOr(
        b, LLVMBuildZExt(b, v0, i16, ""),
        LLVMBuildShl(b, LLVMBuildZExt(b, v1, i16, ""), LLVMConstInt(i16, 8, 0), ""), "");
    LLVMValueRef pair = cg_asm(c->l, c->l->i32, text, "=r,h", &a, 1, false);
    out[0] = LLVMBuildBitCast(b, LLVMBuildTrunc(b, pair, i16, ""), c->l->f16, "");
    out[1] = LLVMBuildBitCast(
        b, LLVMBuildTrunc(b, LLVMBuildLShr(b, pair, cg_i32(c->l, 16), ""), i16, ""), c->l->f16, "");
}

/* The two bytes of a down-conversion's b16 result: the low byte first. */
static void split_fp8x2(Cg *c, LLVMValueRef pair, LLVMValueRef out[2])
{
    LLVMBuilderRef b = c->l->b;
    out[0] = LLVMBuildTrunc(b, pair, c->l->i8, "");
    out[1] =
        LLVMBuildTrunc(b, LLVMBuildLShr(b, pair, LLVMConstInt(c->l->i16, 8, 0), ""), c->l->i8, "");
}

/* Two f32 -> two fp8: cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 d(b16), a, b, a to d's high byte
 * (x1) and b to its low byte (x0). */
static void f32x2_to_fp8x2(Cg *c, DType to, LLVMValueRef x0, LLVMValueRef x1, LLVMValueRef out[2])
{
    char text[80];
    snprintf(text, sizeof text, "cvt.rn.satfinite.%s.f32 $0, $1, $2;", fp8_ptx_name(to));
    LLVMValueRef args[2] = {x1, x0};
    split_fp8x2(c, cg_asm(c->l, c->l->i16, text, "=h,f,f", args, 2, false), out);
}

/* Two f16 -> two fp8: cvt.rn.satfinite.{e4m3x2,e5m2x2}.f16x2 d(b16), a(b32), each half of a to
 * the same byte of d, one rounding. */
static void f16x2_to_fp8x2(Cg *c, DType to, LLVMValueRef x0, LLVMValueRef x1, LLVMValueRef out[2])
{
    LLVMBuilderRef b = c->l->b;
    char text[80];
    snprintf(text, sizeof text, "cvt.rn.satfinite.%s.f16x2 $0, $1;", fp8_ptx_name(to));
    LLVMValueRef lo = LLVMBuildZExt(b, LLVMBuildBitCast(b, x0, c->l->i16, ""), c->l->i32, "");
    LLVMValueRef hi = LLVMBuildZExt(b, LLVMBuildBitCast(b, x1, c->l->i16, ""), c->l->i32, "");
    LLVMValueRef a = LLVMBuildOr(b, lo, LLVMBuildShl(b, hi, cg_i32(c->l, 16), ""), "");
    split_fp8x2(c, cg_asm(c->l, c->l->i16, text, "=h,r", &a, 1, false), out);
}

/* Two casts with an fp8 side, one cvt for both: up through fp16 (exact), down from fp16 or fp32
 * in one rounding; other sources reach fp32 first (bf16 exactly; fp64 and ints round there
 * first, as the interpreter does). */
static void fp8_cast_pair(Cg *c, DType from, DType to, LLVMValueRef a0, LLVMValueRef a1,
                          LLVMValueRef out[2])
{
    if (dtype_is_fp8(from)) {
        LLVMValueRef h[2];
        fp8x2_to_f16x2(c, from, a0, a1, h);
        if (to == DT_F16) {
            out[0] = h[0];
            out[1] = h[1];
        } else if (dtype_is_fp8(to)) {
            f16x2_to_fp8x2(c, to, h[0], h[1], out);
        } else {
            for (int i = 0; i < 2; i++)
                out[i] = cg_cast(c, DT_F32, to, LLVMBuildFPExt(c->l->b, h[i], c->l->f32, ""));
        }
        return;
    }
    if (from == DT_F16) {
        f16x2_to_fp8x2(c, to, a0, a1, out);
        return;
    }
    LLVMValueRef x0 = from == DT_F32 ? a0 : cg_cast(c, from, DT_F32, a0);
    LLVMValueRef x1 = a1 == a0 ? x0 : from == DT_F32 ? a1 : cg_cast(c, from, DT_F32, a1);
    f32x2_to_fp8x2(c, to, x0, x1, out);
}

/* One cast with an fp8 side: the pair's, with the value in both halves. */
static LLVMValueRef fp8_cast(Cg *c, DType from, DType to, LLVMValueRef a)
{
    LLVMValueRef out[2];
    fp8_cast_pair(c, from, to, a, a, out);
    return out[0];
}

/* Does a cast between these dtypes use the fp8 cvt forms (sm_89+)? */
bool cg_cast_needs_fp8(DType from, DType to)
{
    return from != to && (dtype_is_fp8(from) || dtype_is_fp8(to));
}

/* OP_CAST (ir.h): float->float round to nearest even, float->int truncate, int->int wrap/extend by
 * the signedness of the source; anything -> int1 is "!= 0". */
LLVMValueRef cg_cast(Cg *c, DType from, DType to, LLVMValueRef a)
{
    LLVMBuilderRef b = c->l->b;
    LLVMTypeRef ty = cg_elem_type(c, to);
    if (from == to)
        return a;
    if (cg_cast_needs_fp8(from, to) && to != DT_I1)
        return fp8_cast(c, from, to, a);
    if (to == DT_I1) {
        if (dtype_is_fp8(from))
            a = fp8_cast(c, from, DT_F32, a), from = DT_F32;
        if (dtype_is_float(from))
            return LLVMBuildFCmp(b, LLVMRealUNE, cg_widen(c, a),
                                 LLVMConstReal(LLVMTypeOf(cg_widen(c, a)), 0), "");
        return LLVMBuildICmp(b, LLVMIntNE, a, LLVMConstInt(LLVMTypeOf(a), 0, 0), "");
    }
    if (dtype_is_float(from) && dtype_is_float(to)) {
        int fb = dtype_bits(from), tb = dtype_bits(to);
        if ((from == DT_BF16 && to == DT_F16) || (from == DT_F16 && to == DT_BF16))
            return LLVMBuildFPTrunc(b, LLVMBuildFPExt(b, a, c->l->f32, ""), ty, "");
        return tb > fb ? LLVMBuildFPExt(b, a, ty, "") : LLVMBuildFPTrunc(b, a, ty, "");
    }
    if (dtype_is_float(from)) {
        /* Saturating, NaN -> 0: PTX cvt.rzi's behaviour and the interpreter's (plain fptosi
         * would be poison out of range). */
        LLVMValueRef w = cg_widen(c, a);
        char name[64];
        snprintf(name, sizeof name, "llvm.fpto%ci.sat.i%d.%s", dtype_is_signed(to) ? 's' : 'u',
                 dtype_bits(to), fsuffix(c, LLVMTypeOf(w)));
        return call1(c, name, ty, w);
    }
    if (dtype_is_float(to)) {
        if (to == DT_BF16) {
            LLVMValueRef f = dtype_is_signed(from) ? LLVMBuildSIToFP(b, a, c->l->f32, "")
                                                   : LLVMBuildUIToFP(b, a, c->l->f32, "");
            return LLVMBuildFPTrunc(b, f, ty, "");
        }
        return dtype_is_signed(from) ? LLVMBuildSIToFP(b, a, ty, "")
                                     : LLVMBuildUIToFP(b, a, ty, "");
    }
    int fb = dtype_bits(from), tb = dtype_bits(to);
    if (tb < fb)
        return LLVMBuildTrunc(b, a, ty, "");
    if (tb == fb)
        return a;
    return dtype_is_signed(from) ? LLVMBuildSExt(b, a, ty, "") : LLVMBuildZExt(b, a, ty, "");
}

/* OP_BITCAST (ir.h): the bits as another type of one width; a pointer to or from int64 is
 * ptrtoint / inttoptr (LLVM has no bitcast between pointers and integers), a pointer to another
 * pointer the same opaque ptr addrspace(1). */
static LLVMValueRef cg_bitcast(Cg *c, Type from, Type to, LLVMValueRef a)
{
    LLVMTypeRef rt = to.is_ptr ? c->l->gptr : cg_elem_type(c, to.dtype);
    if (from.is_ptr && !to.is_ptr)
        return LLVMBuildPtrToInt(c->l->b, a, rt, "");
    if (!from.is_ptr && to.is_ptr)
        return LLVMBuildIntToPtr(c->l->b, a, rt, "");
    return LLVMBuildBitCast(c->l->b, a, rt, "");
}

LLVMValueRef cg_const(Cg *c, Type t, int64_t iv, double fv)
{
    LLVMTypeRef ty = cg_value_type(c, t);
    if (t.is_ptr)
        return LLVMConstNull(ty);
    if (dtype_is_fp8(t.dtype)) /* the interpreter's rounding of the constant, as bits */
        return LLVMConstInt(ty, fp8_from_double(fv, t.dtype), 0);
    if (dtype_is_float(t.dtype))
        return LLVMConstReal(ty, fv);
    return LLVMConstInt(ty, (unsigned long long)iv, dtype_is_signed(t.dtype));
}

/* ---- the elementwise ops --------------------------------------------------------------------- */

static bool expect_same_layout(Cg *c, const IrOp *op, const LVal *v, int n)
{
    if (v->n != n && v->n != 1)
        FAIL(c, "%s: operand has %d registers per thread, result %d (layouts differ)",
             op_name(op->code), v->n, n);
    return true;
}

bool cg_lower_elementwise(Cg *c, const IrOp *op)
{
    ValueId r = op->results[0];
    Type rt = ir_type(c->f, r);
    int n = cg_nelems_of(c, r, NULL);
    LVal *ops[3] = {0};
    for (int i = 0; i < op->noperands && i < 3; i++) {
        ops[i] = cg_value(c, op->operands[i]);
        if (c->failed || !expect_same_layout(c, op, ops[i], n))
            return false;
    }
    Type t0 = ir_type(c->f, op->operands[0]);
    LLVMValueRef *el = cg_regs(c, n);
    if (op->code == OP_CAST && cg_cast_needs_fp8(t0.dtype, rt.dtype) && rt.dtype != DT_I1) {
        /* Up from fp8 is done in software below sm_89 (fp8_to_f16_soft); down needs cvt. */
        if (dtype_is_fp8(rt.dtype) && c->o->sm && c->o->sm < 89) {
            diag_error(c->d, op->loc,
                       "conversions to fp8 need sm_89 or newer (the target is "
                       "sm_%d): %s to %s",
                       c->o->sm, dtype_name(t0.dtype), dtype_name(rt.dtype));
            c->failed = true;
            return false;
        }
        /* two elements per cvt (the last one alone when n is odd) */
        for (int e = 0; e < n; e += 2) {
            LLVMValueRef x0 = cg_at(ops[0], e), x1 = e + 1 < n ? cg_at(ops[0], e + 1) : x0, r2[2];
            fp8_cast_pair(c, t0.dtype, rt.dtype, x0, x1, r2);
            el[e] = r2[0];
            if (e + 1 < n)
                el[e + 1] = r2[1];
        }
        cg_set_value(c, r, el, n, ir_value(c->f, r)->layout);
        return true;
    }
    if (op->code == OP_CAST && t0.dtype == DT_F32 && (rt.dtype == DT_F16 || rt.dtype == DT_BF16) &&
        c->o->sm >= 80 && ops[0]->n == n && n >= 2) {
        /* fp32 -> fp16/bf16 two at a time: `cvt.rn.f16x2.f32 d, hi, lo` (PTX ISA 9.7.9.21, sm_80;
         * LLVM 19 rounds each alone), the pair then packs straight into a .b32 operand (a chained
         * dot's A fragment pairs the same two elements) */
        const char *text =
            rt.dtype == DT_F16 ? "cvt.rn.f16x2.f32 $0, $1, $2;" : "cvt.rn.bf16x2.f32 $0, $1, $2;";
        LLVMTypeRef et = cg_elem_type(c, rt.dtype), v2 = LLVMVectorType(et, 2);
        for (int e = 0; e + 1 < n; e += 2) {
            LLVMValueRef args[2] = {ops[0]->el[e + 1], ops[0]->el[e]};
            LLVMValueRef packed = cg_asm(c->l, c->l->i32, text, "=r,f,f", args, 2, false);
            LLVMValueRef pair = LLVMBuildBitCast(c->l->b, packed, v2, "");
            el[e] = LLVMBuildExtractElement(c->l->b, pair, cg_i32(c->l, 0), "");
            el[e + 1] = LLVMBuildExtractElement(c->l->b, pair, cg_i32(c->l, 1), "");
        }
        if (n % 2)
            el[n - 1] = cg_cast(c, t0.dtype, rt.dtype, ops[0]->el[n - 1]);
        cg_set_value(c, r, el, n, ir_value(c->f, r)->layout);
        return true;
    }
    for (int e = 0; e < n; e++) {
        LLVMValueRef x = cg_at(ops[0], e), y = ops[1] ? cg_at(ops[1], e) : NULL, v = NULL;
        switch (op->code) {
        case OP_CMP_EQ:
        case OP_CMP_NE:
        case OP_CMP_LT:
        case OP_CMP_LE:
        case OP_CMP_GT:
        case OP_CMP_GE: v = cg_compare(c, op->code, t0, x, y); break;
        case OP_SELECT: v = LLVMBuildSelect(c->l->b, x, y, cg_at(ops[2], e), ""); break;
        case OP_FMA:
            if (dtype_is_float(rt.dtype)) {
                char name[32];
                LLVMValueRef args[3] = {cg_widen(c, x), cg_widen(c, y),
                                        cg_widen(c, cg_at(ops[2], e))};
                LLVMTypeRef ty = LLVMTypeOf(args[0]);
                snprintf(name, sizeof name, "llvm.fma.%s", fsuffix(c, ty));
                v = narrow(c, cg_call(c->l, name, ty, args, 3), rt.dtype);
            } else {
                v = cg_add(c->l->b, cg_mul(c->l->b, x, y, ""), cg_at(ops[2], e), "");
            }
            break;
        case OP_CAST: v = cg_cast(c, t0.dtype, rt.dtype, x); break;
        case OP_BITCAST: v = cg_bitcast(c, t0, rt, x); break;
        case OP_LIBDEVICE: v = libdevice_call(c, op->attr[0], t0.dtype, x, y); break;
        default:
            v = op_num_operands(op->code) == 1 ? unary(c, op->code, rt.dtype, x)
                                               : cg_binary(c, op->code, rt.dtype, x, y);
        }
        if (!v)
            FAIL(c, "op %s on %s is not supported by codegen", op_name(op->code),
                 dtype_name(rt.dtype));
        el[e] = v;
    }
    cg_set_value(c, r, el, n, ir_value(c->f, r)->layout);
    return true;
}
