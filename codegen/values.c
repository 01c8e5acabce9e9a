/* values.c: LLVM types of dtypes, the registers of each IR value (LVal, indexed by value id), and
 * inline asm with any number of operands. */
#include "codegen/internal.h"

#include <string.h>

/* ---- types ---------------------------------------------------------------------------------- */

LLVMTypeRef cg_elem_type(Cg *c, DType t)
{
    CgLlvm *l = c->l;
    switch (t) {
    case DT_I1: return l->i1;
    case DT_I8:
    case DT_U8: return l->i8;
    case DT_I16:
    case DT_U16: return l->i16;
    case DT_I32:
    case DT_U32: return l->i32;
    case DT_I64:
    case DT_U64: return l->i64;
    case DT_F16: return l->f16;
    case DT_BF16: return l->bf16;
    case DT_F32: return l->f32;
    case DT_F64: return l->f64;
    case DT_F8E4NV:
    case DT_F8E5: return l->i8; /* fp8 bits; LLVM has no fp8 type (arith.c) */
    default: return l->i32;
    }
}

/* In memory int1 is a byte. */
LLVMTypeRef cg_mem_type(Cg *c, DType t) { return t == DT_I1 ? c->l->i8 : cg_elem_type(c, t); }

LLVMTypeRef cg_value_type(Cg *c, Type t)
{
    return t.is_ptr ? c->l->gptr : cg_elem_type(c, t.dtype);
}

/* ---- the registers of values ---------------------------------------------------------------- */

LVal *cg_value(Cg *c, ValueId v)
{
    static LVal none;
    if (v <= 0 || v >= c->f->nvalues || !c->vals[v].el) {
        if (!c->failed)
            TRIC_INTERNAL(c->d, "codegen: value %%%d used before it was lowered", (int)v);
        c->failed = true;
        return &none;
    }
    return &c->vals[v];
}

Dist *cg_dist_of(Cg *c, ValueId v)
{
    const IrValue *iv = ir_value(c->f, v);
    return cg_dist(c, iv->layout, iv->type);
}

int cg_nelems_of(Cg *c, ValueId v, Dist **out)
{
    Dist *ds = cg_dist_of(c, v);
    if (out)
        *out = ds;
    return ds ? ds->nelems : 1;
}

LLVMValueRef *cg_regs(Cg *c, int n)
{
    return arena_alloc(c->arena, sizeof(LLVMValueRef) * (size_t)imax(n, 1));
}

void cg_set_value(Cg *c, ValueId v, LLVMValueRef *el, int n, int layout)
{
    c->vals[v].el = el;
    c->vals[v].n = n;
    c->vals[v].layout = layout;
}

/* ---- inline asm ----------------------------------------------------------------------------- */

/* Inline asm with any number of operands (cg_asm takes at most 16). */
LLVMValueRef cg_asm_n(Cg *c, LLVMTypeRef ret, const char *text, const char *constraints,
                      LLVMValueRef *args, int nargs, bool side_effects)
{
    LLVMTypeRef *params =
        arena_alloc(c->arena, sizeof(LLVMTypeRef) * (size_t)(nargs > 0 ? nargs : 1));
    for (int i = 0; i < nargs; i++)
        params[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret, params, (unsigned)nargs, 0);
    LLVMValueRef fn =
        LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)constraints, strlen(constraints),
                         side_effects, 0, LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(c->l->b, fty, fn, args, (unsigned)nargs, "");
}

void cg_asm_void(Cg *c, const char *text)
{
    cg_asm_n(c, c->l->void_t, text, "~{memory}", NULL, 0, true);
}

/* An asm statement with side effects and a memory clobber that takes the n f32 values tied in
 * and out (so no use of them moves above it); returns the outputs. */
LLVMValueRef *cg_asm_tie_f32(Cg *c, const char *text, LLVMValueRef *vals, int n)
{
    StrBuf cons = {0};
    for (int e = 0; e < n; e++)
        strbuf_printf(&cons, "=f,");
    for (int e = 0; e < n; e++)
        strbuf_printf(&cons, "%s%d", e ? "," : "", e);
    strbuf_printf(&cons, ",~{memory}");
    LLVMTypeRef *fty = arena_alloc(c->arena, sizeof(LLVMTypeRef) * (size_t)n);
    for (int e = 0; e < n; e++)
        fty[e] = c->l->f32;
    LLVMTypeRef ret = LLVMStructTypeInContext(c->l->ctx, fty, (unsigned)n, 0);
    LLVMValueRef call = cg_asm_n(c, ret, text, cons.data, vals, n, true);
    strbuf_free(&cons);
    LLVMValueRef *out = cg_regs(c, n);
    for (int e = 0; e < n; e++)
        out[e] = LLVMBuildExtractValue(c->l->b, call, (unsigned)e, "");
    return out;
}

void cg_load_run(Cg *c, LLVMTypeRef mt, LLVMValueRef p, int w, int eb, LLVMValueRef *out)
{
    LLVMBuilderRef b = c->l->b;
    if (w == 1) {
        out[0] = LLVMBuildLoad2(b, mt, p, "");
        LLVMSetAlignment(out[0], (unsigned)eb);
        return;
    }
    LLVMValueRef v = LLVMBuildLoad2(b, LLVMVectorType(mt, (unsigned)w), p, "");
    LLVMSetAlignment(v, (unsigned)(w * eb));
    for (int j = 0; j < w; j++)
        out[j] = LLVMBuildExtractElement(b, v, cg_i32(c->l, j), "");
}

void cg_store_run(Cg *c, LLVMValueRef p, const LLVMValueRef *vals, int w, LLVMTypeRef mt, int eb)
{
    LLVMBuilderRef b = c->l->b;
    LLVMValueRef v = vals[0];
    if (w > 1) {
        v = LLVMGetUndef(LLVMVectorType(mt, (unsigned)w));
        for (int j = 0; j < w; j++)
            v = LLVMBuildInsertElement(b, v, vals[j], cg_i32(c->l, j), "");
    }
    LLVMSetAlignment(LLVMBuildStore(b, v, p), (unsigned)(eb * w));
}
