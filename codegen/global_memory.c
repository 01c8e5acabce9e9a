/* global_memory.c: load and store of global memory, vectorized (the widest access axis info
 * allows, up to 16 bytes) and predicated through inline PTX where a mask is given.
 * docs/codegen.md "Global loads and stores". */
#include "codegen/internal.h"

/* Bytes of one element in memory (pointers are 64-bit). */
static int mem_bytes(Type t) { return t.is_ptr ? 8 : dtype_bytes(t.dtype); }

/* How many consecutive elements one access covers: ir/layout.c's axis_vector_width (Triton's
 * getVectorSize: min of the thread's run along its fastest dim, the pointer's contiguity and byte
 * alignment, 16 bytes, the mask's constancy), kept within the run this thread really holds. */
int cg_access_width(Cg *c, const IrOp *op, const Dist *ds)
{
    if (!ds || ds->vec_dim < 0)
        return 1;
    int w = axis_vector_width(c->f, op);
    w = imin(w, ds->run[ds->vec_dim]);
    int p = 1;
    while (p * 2 <= w)
        p *= 2;
    return p;
}

/* Is element e the first of its vector group of width w along the fastest dim? */
static bool group_start(const Dist *ds, int e, int w)
{
    return w == 1 || ds->idx[e * ds->rank + ds->vec_dim] % w == 0;
}

/* The word size (bits) and count that move w elements of eb bytes in one ld/st: 64-bit words
 * for 8-byte elements, 32-bit words when the group is at least 4 bytes (fp16 pairs are packed,
 * as Triton does), else one 16- or 8-bit access. At most v4 (PTX ISA §9.7.9.8: .v2/.v4, 16 bytes). */
static void access_words(int w, int eb, int *bits, int *nwords)
{
    int total = w * eb;
    if (eb == 8)
        *bits = 64;
    else if (total >= 4)
        *bits = 32;
    else
        *bits = total * 8;
    *nwords = total * 8 / *bits;
}

static const char *reg_letter(int bits) { return bits == 64 ? "l" : bits == 32 ? "r" : "h"; }

/* w elements of memory type mt <-> nwords integer words of `bits`. */
static LLVMValueRef *words_of(Cg *c, LLVMValueRef *elems, int w, LLVMTypeRef mt, int bits,
                              int nwords)
{
    LLVMBuilderRef b = c->l->b;
    LLVMValueRef *out = cg_regs(c, nwords);
    LLVMTypeRef wt = LLVMIntTypeInContext(c->l->ctx, (unsigned)(bits == 8 ? 16 : bits));
    if (bits == 8) { /* one byte, carried in a 16-bit register */
        LLVMValueRef v = LLVMBuildBitCast(b, elems[0], c->l->i8, "");
        out[0] = LLVMBuildZExt(b, v, c->l->i16, "");
        return out;
    }
    LLVMValueRef v = LLVMGetUndef(LLVMVectorType(mt, (unsigned)w));
    for (int j = 0; j < w; j++)
        v = LLVMBuildInsertElement(b, v, elems[j], cg_i32(c->l, j), "");
    LLVMValueRef words = LLVMBuildBitCast(b, v, LLVMVectorType(wt, (unsigned)nwords), "");
    for (int j = 0; j < nwords; j++)
        out[j] = LLVMBuildExtractElement(b, words, cg_i32(c->l, j), "");
    return out;
}

static void elems_of(Cg *c, LLVMValueRef *words, int nwords, int bits, LLVMTypeRef mt, int w,
                     LLVMValueRef *out)
{
    LLVMBuilderRef b = c->l->b;
    if (bits == 8) {
        out[0] = LLVMBuildBitCast(b, LLVMBuildTrunc(b, words[0], c->l->i8, ""), mt, "");
        return;
    }
    LLVMTypeRef wt = LLVMIntTypeInContext(c->l->ctx, (unsigned)bits);
    LLVMValueRef v = LLVMGetUndef(LLVMVectorType(wt, (unsigned)nwords));
    for (int j = 0; j < nwords; j++)
        v = LLVMBuildInsertElement(b, v, words[j], cg_i32(c->l, j), "");
    LLVMValueRef ev = LLVMBuildBitCast(b, v, LLVMVectorType(mt, (unsigned)w), "");
    for (int j = 0; j < w; j++)
        out[j] = LLVMBuildExtractElement(b, ev, cg_i32(c->l, j), "");
}

/* A predicated global load as inline PTX (PTX ISA §9.7.9.8 ld): the destinations first get
 * `other` (mov), then `@p ld.global` overwrites them where the mask holds. A select after an
 * unpredicated load would touch masked-off, possibly invalid addresses. */
void cg_load_predicated(Cg *c, LLVMValueRef ptr, LLVMValueRef pred, LLVMValueRef *other, int w,
                        LLVMTypeRef mt, int eb, LLVMValueRef *out)
{
    int bits, nw;
    access_words(w, eb, &bits, &nw);
    LLVMValueRef *ow = words_of(c, other, w, mt, bits, nw);
    StrBuf text = {0}, cons = {0};
    const char *L = reg_letter(bits);
    const char *ty = bits == 8 ? "u8" : bits == 16 ? "b16" : bits == 32 ? "b32" : "b64";
    const char *mty = bits == 8 ? "b16" : ty;
    for (int j = 0; j < nw; j++) {
        strbuf_printf(&text, "mov.%s $%d, $%d;\n\t", mty, j, nw + 2 + j);
        strbuf_printf(&cons, "=&%s,", L); /* early clobber: the movs write before the ld reads */
    }
    if (nw == 1)
        strbuf_printf(&text, "@$%d ld.global.%s $0, [ $%d + 0 ];", nw + 1, ty, nw);
    else {
        strbuf_printf(&text, "@$%d ld.global.v%d.%s { ", nw + 1, nw, ty);
        for (int j = 0; j < nw; j++)
            strbuf_printf(&text, "$%d%s", j, j + 1 < nw ? ", " : " }");
        strbuf_printf(&text, ", [ $%d + 0 ];", nw);
    }
    strbuf_append(&cons, "l,b");
    for (int j = 0; j < nw; j++)
        strbuf_printf(&cons, ",%s", L);
    LLVMValueRef args[6];
    args[0] = ptr;
    args[1] = pred;
    for (int j = 0; j < nw; j++)
        args[2 + j] = ow[j];
    LLVMTypeRef wt = LLVMIntTypeInContext(c->l->ctx, (unsigned)(bits == 8 ? 16 : bits));
    LLVMTypeRef ret = wt;
    if (nw > 1) {
        LLVMTypeRef fields[4] = {wt, wt, wt, wt};
        ret = LLVMStructTypeInContext(c->l->ctx, fields, (unsigned)nw, 0);
    }
    /* Side effects on: an asm without them is taken to touch no memory, and LLVM could move it
     * across a store to the same address or a barrier. */
    LLVMValueRef call = cg_asm(c->l, ret, text.data, cons.data, args, 2 + nw, true);
    strbuf_free(&text);
    strbuf_free(&cons);
    LLVMValueRef words[4];
    for (int j = 0; j < nw; j++)
        words[j] = nw == 1 ? call : LLVMBuildExtractValue(c->l->b, call, (unsigned)j, "");
    elems_of(c, words, nw, bits, mt, w, out);
}

/* A predicated global store (PTX ISA §9.7.9.10 st): `@p st.global.v4.b32 [addr], {...}`. */
static void store_predicated(Cg *c, LLVMValueRef ptr, LLVMValueRef pred, LLVMValueRef *vals, int w,
                             LLVMTypeRef mt, int eb)
{
    int bits, nw;
    access_words(w, eb, &bits, &nw);
    LLVMValueRef *vw = words_of(c, vals, w, mt, bits, nw);
    StrBuf text = {0}, cons = {0};
    const char *L = reg_letter(bits);
    const char *ty = bits == 8 ? "u8" : bits == 16 ? "b16" : bits == 32 ? "b32" : "b64";
    if (nw == 1)
        strbuf_printf(&text, "@$0 st.global.%s [ $1 + 0 ], $2;", ty);
    else {
        strbuf_printf(&text, "@$0 st.global.v%d.%s [ $1 + 0 ], { ", nw, ty);
        for (int j = 0; j < nw; j++)
            strbuf_printf(&text, "$%d%s", 2 + j, j + 1 < nw ? ", " : " };");
    }
    strbuf_append(&cons, "b,l");
    for (int j = 0; j < nw; j++)
        strbuf_printf(&cons, ",%s", L);
    LLVMValueRef args[6];
    args[0] = pred;
    args[1] = ptr;
    for (int j = 0; j < nw; j++)
        args[2 + j] = vw[j];
    cg_asm(c->l, c->l->void_t, text.data, cons.data, args, 2 + nw, true);
    strbuf_free(&text);
    strbuf_free(&cons);
}

bool cg_lower_load(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    ValueId pv = op->operands[0];
    ValueId mv = op->noperands > 1 ? op->operands[1] : 0;
    ValueId ov = op->noperands > 2 ? op->operands[2] : 0;
    ValueId r = op->results[0];
    Type rt = ir_type(c->f, r);
    Dist *dd;
    int n = cg_nelems_of(c, r, &dd);
    LVal *ptr = cg_value(c, pv);
    LVal *mask = mv ? cg_value(c, mv) : NULL;
    LVal *other = ov ? cg_value(c, ov) : NULL;
    if (c->failed)
        return false;
    if (ptr->n != n && ptr->n != 1)
        FAIL(c, "load: pointer has %d registers, result %d", ptr->n, n);
    DType dt = rt.is_ptr ? DT_I64 : rt.dtype;
    LLVMTypeRef mt = rt.is_ptr ? c->l->i64 : cg_mem_type(c, dt);
    int eb = mem_bytes(rt);
    int w = cg_access_width(c, op, dd);
    LLVMValueRef *el = cg_regs(c, n);
    for (int e = 0; e < n; e++) {
        if (dd && !group_start(dd, e, w))
            continue;
        LLVMValueRef p = cg_at(ptr, e);
        LLVMValueRef got[16];
        if (mask) {
            LLVMValueRef oth[16];
            for (int j = 0; j < w; j++)
                oth[j] = other ? cg_to_mem(c, dt, cg_at(other, e + j)) : LLVMConstNull(mt);
            if (rt.is_ptr && other)
                for (int j = 0; j < w; j++)
                    oth[j] = LLVMBuildPtrToInt(b, cg_at(other, e + j), c->l->i64, "");
            cg_load_predicated(c, p, cg_at(mask, e), oth, w, mt, eb, got);
        } else {
            cg_load_run(c, mt, p, w, eb, got);
        }
        for (int j = 0; j < w; j++)
            el[e + j] = rt.is_ptr ? LLVMBuildIntToPtr(b, got[j], c->l->gptr, "")
                                  : cg_from_mem(c, dt, got[j]);
    }
    cg_set_value(c, r, el, n, ir_value(c->f, r)->layout);
    return true;
}

/* Replicated elements are written by their first holder only, a scalar by the first thread: the
 * predicate, or NULL where every thread holds its elements alone. */
static LLVMValueRef first_holder(Cg *c, const Dist *ds)
{
    return ds ? ds->owner
              : LLVMBuildICmp(c->pro, LLVMIntEQ, c->tid, cg_i32(c->l, c->first_thread), "");
}

bool cg_lower_store(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    ValueId pv = op->operands[0], vv = op->operands[1];
    ValueId mv = op->noperands > 2 ? op->operands[2] : 0;
    Type vt = ir_type(c->f, vv);
    Dist *ds = cg_dist_of(c, vv);
    int n = ds ? ds->nelems : 1;
    LVal *ptr = cg_value(c, pv);
    LVal *val = cg_value(c, vv);
    LVal *mask = mv ? cg_value(c, mv) : NULL;
    if (c->failed)
        return false;
    DType dt = vt.is_ptr ? DT_I64 : vt.dtype;
    LLVMTypeRef mt = vt.is_ptr ? c->l->i64 : cg_mem_type(c, dt);
    int eb = mem_bytes(vt);
    int w = cg_access_width(c, op, ds);
    LLVMValueRef owner = first_holder(c, ds);
    for (int e = 0; e < n; e++) {
        if (ds && !group_start(ds, e, w))
            continue;
        LLVMValueRef vals[16];
        for (int j = 0; j < w; j++) {
            LLVMValueRef x = cg_at(val, e + j);
            vals[j] = vt.is_ptr ? LLVMBuildPtrToInt(b, x, c->l->i64, "") : cg_to_mem(c, dt, x);
        }
        LLVMValueRef p = cg_at(ptr, e);
        LLVMValueRef pred = mask ? cg_at(mask, e) : NULL;
        if (owner)
            pred = pred ? LLVMBuildAnd(b, pred, owner, "") : owner;
        if (pred)
            store_predicated(c, p, pred, vals, w, mt, eb);
        else
            cg_store_run(c, p, vals, w, mt, eb);
    }
    return true;
}

/* prefetch: one `prefetch.global.L2` (PTX ISA, data movement: prefetch) per access a load of the
 * same pointers would make (its vector groups), by the first holder of a replicated element, under
 * the operand's predicate. A hint: nothing waits for it. */
bool cg_lower_prefetch(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    Dist *ds = cg_dist_of(c, op->operands[0]);
    LVal *ptr = cg_value(c, op->operands[0]);
    LVal *pred = cg_value(c, op->operands[1]);
    if (c->failed)
        return false;
    int n = ds ? ds->nelems : 1, w = cg_access_width(c, op, ds);
    LLVMValueRef on = cg_at(pred, 0), owner = first_holder(c, ds);
    if (owner)
        on = LLVMBuildAnd(b, on, owner, "");
    for (int e = 0; e < n; e++) {
        if (ds && !group_start(ds, e, w))
            continue;
        LLVMValueRef args[2] = {cg_at(ptr, e), on};
        cg_asm(c->l, LLVMVoidTypeInContext(c->l->ctx),
               op->attr[0] ? "@$1 prefetch.global.L1 [ $0 + 0 ];"
                           : "@$1 prefetch.global.L2 [ $0 + 0 ];",
               "l,b", args, 2, true);
    }
    return true;
}

/* partial_store and partial_add (passes/stream_k.c's partial tiles): partial `slot` of the fp32
 * scratch at `base` holds the tile in register order, not row-major. Each thread's n elements go
 * in runs of V (4, else 2, else 1), run q of thread t at floats (q T + t) V, T the layout's
 * threads: every access of a warp is 32 contiguous V-float vectors (st.global.v4.b32 / ld, PTX
 * ISA 9.7.9.10), whatever the layout (an #mma accumulator needs no convert through shared
 * memory), and the same layout reads back what it wrote. Both ops of a function see the same
 * layout (checked); the layout must hold each element once. */
bool cg_lower_partial(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    const IrFunc *f = c->f;
    ValueId tv = op->operands[2];
    int layout = ir_value(f, tv)->layout;
    for (int i = 0; i < f->nvalues; i++) {
        const IrOp *def = f->values[i].def;
        if (def && def->code == OP_PARTIAL_ADD && f->values[i].layout != layout)
            FAIL(c, "partial tiles of two layouts in one function");
    }
    Dist *ds = cg_dist_of(c, tv);
    Type t = ir_type(f, tv);
    int64_t threads = 32 * (int64_t)f->num_warps;
    if (!ds || ds->owner || (int64_t)ds->nelems * threads != type_numel(t))
        FAIL(c, "a partial tile whose layout does not hold each element once");
    int n = ds->nelems, w = n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : 1;
    LVal *base = cg_value(c, op->operands[0]), *slot = cg_value(c, op->operands[1]);
    LVal *tile = cg_value(c, tv);
    if (c->failed)
        return false;
    LLVMValueRef thread =
        LLVMBuildAdd(b, LLVMBuildMul(b, c->warp, cg_i32(c->l, 32), ""), c->lane, "");
    LLVMValueRef first = LLVMBuildAdd(
        b,
        LLVMBuildMul(b, LLVMBuildSExt(b, slot->el[0], c->l->i64, ""),
                     LLVMConstInt(c->l->i64, (unsigned long long)type_numel(t), 0), ""),
        LLVMBuildZExt(b, LLVMBuildMul(b, thread, cg_i32(c->l, w), ""), c->l->i64, ""), "");
    LLVMTypeRef ft = LLVMFloatTypeInContext(c->l->ctx);
    LLVMValueRef *el = op->code == OP_PARTIAL_ADD ? cg_regs(c, n) : NULL;
    /* partial_add a chunk at a time, each under a branch on slot >= 0 (always taken; ptxas
     * cannot tell, and does not hoist a global load above a branch): about a chunk of the
     * partial is live beside the accumulator, not all of it. Seed 2's stream-K kernel at 128x256
     * on 8 warps took 252 registers with every load first, 198 in chunks of 32 (16 or 8: ptxas
     * predicates the small blocks and hoists their loads again, 254). */
    enum { PARTIAL_CHUNK = 32 };
    LLVMValueRef taken = el ? LLVMBuildICmp(b, LLVMIntSGE, slot->el[0], cg_i32(c->l, 0), "") : NULL;
    for (int e0 = 0; e0 < n; e0 += PARTIAL_CHUNK) {
        int e1 = e0 + PARTIAL_CHUNK < n ? e0 + PARTIAL_CHUNK : n;
        LLVMBasicBlockRef from = LLVMGetInsertBlock(b), load = NULL, join = NULL;
        if (el) {
            load = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "partial");
            join = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "");
            LLVMBuildCondBr(b, taken, load, join);
            LLVMPositionBuilderAtEnd(b, load);
        }
        for (int e = e0; e < e1; e += w) {
            LLVMValueRef at = LLVMBuildAdd(
                b, first, LLVMConstInt(c->l->i64, (unsigned long long)(e / w) * threads * w, 0),
                "");
            LLVMValueRef p = LLVMBuildGEP2(b, ft, base->el[0], &at, 1, "");
            if (!el) {
                cg_store_run(c, p, tile->el + e, w, ft, 4);
                continue;
            }
            LLVMValueRef got[4];
            cg_load_run(c, ft, p, w, 4, got);
            for (int j = 0; j < w; j++)
                el[e + j] = LLVMBuildFAdd(b, tile->el[e + j], got[j], "");
        }
        if (!el)
            continue;
        LLVMBasicBlockRef loaded = LLVMGetInsertBlock(b);
        LLVMBuildBr(b, join);
        LLVMPositionBuilderAtEnd(b, join);
        for (int e = e0; e < e1; e++) {
            LLVMValueRef phi = LLVMBuildPhi(b, ft, "");
            LLVMValueRef vals[2] = {el[e], tile->el[e]};
            LLVMBasicBlockRef blocks[2] = {loaded, from};
            LLVMAddIncoming(phi, vals, blocks, 2);
            el[e] = phi;
        }
    }
    if (el)
        cg_set_value(c, op->results[0], el, n, ir_value(f, op->results[0])->layout);
    return true;
}
