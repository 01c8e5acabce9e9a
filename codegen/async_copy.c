/* async_copy.c: the asynchronous-copy ops (ir.h, "the memory pipeline": shared tiles, the copies
 * into them and their waits, the reads from them) -> LLVM IR. passes/pipeline_loops.c and
 * passes/tma.c make them. docs/codegen.md "The memory pipeline".
 *
 * A shared-memory tile has no registers: a local_alloc buffer and each slot view of it are one
 * i32, the tile's byte offset in the dynamic shared window (@global_smem). Elements sit in the
 * tile at the NVMMA swizzled offsets of its #shared layout (ir/layout.c,
 * shared_swizzled_offset: the same formula is built here in LLVM IR). Copies into tiles are
 * cp.async (PTX ISA 9.7.9.25), reads are ldmatrix (9.7.9.24) for mma.sync operands or ld.shared,
 * and wgmma (9.7.15) reads both operands from the tiles through matrix descriptors
 * (9.7.15.5.1.2.2), which is why the swizzle is wgmma's own canonical layout. */
#include "codegen/internal.h"

#include <string.h>

/* Register i of a value; a scalar serves every element. */
static LLVMValueRef reg_at(const LVal *v, int i) { return v->n == 1 ? v->el[0] : v->el[i]; }

static LLVMValueRef k32(Cg *c, int64_t v) { return cg_i32(c->l, v); }

/* The #shared layout of a buffer or view value (rank 2 per slot, or 1 for a row of elements). */
static const Layout *shared_layout(Cg *c, ValueId v)
{
    int l = ir_value(c->f, v)->layout;
    if (l <= 0 || l >= c->f->nlayouts || c->f->layouts[l].kind != LAYOUT_SHARED ||
        c->f->layouts[l].rank < 1 || c->f->layouts[l].rank > 2) {
        TRIC_INTERNAL(c->d,
                      "codegen: shared tile %%%d has no rank-1 or rank-2 #shared layout (swizzle "
                      "pass)",
                      (int)v);
        c->failed = true;
        return NULL;
    }
    return &c->f->layouts[l];
}

/* The tile type of a view (rank 2, or 1; dtype, shape) checked for what the lowerings here
 * support. */
static bool view_tile(Cg *c, ValueId v, Type *out)
{
    Type t = ir_type(c->f, v);
    if (!t.is_smem || t.rank < 1 || t.rank > 2 || t.is_ptr)
        FAIL(c, "codegen: %%%d is not a rank-1 or rank-2 shared-memory tile of numbers", (int)v);
    int eb = dtype_bytes(t.dtype);
    if (eb < 1 || eb > 8)
        FAIL(c, "codegen: shared tiles of %s are not lowered", dtype_name(t.dtype));
    *out = t;
    return true;
}

/* The byte offset inside one slot of tile element (x0, x1), i32 coordinates along tile dims 0
 * and 1, under shared layout l: ir/layout.c's shared_swizzled_offset in LLVM IR. With the
 * contiguous dim cd = order[0] (col) and the other rd (row), R rows, S swizzle bytes, atoms of
 * A = S / eb elements, U-byte units (shared_swizzle_unit_bytes: 16, or 32 in an fp32
 * accumulator's scratch): (col / A) * R * S + row * S + ((((col % A) * eb) / U) ^ ((row /
 * per_phase) % max_phase)) * U + (col * eb) % U. Every factor is a power of two, so LLVM turns
 * the divisions into shifts and masks. */
LLVMValueRef cg_swizzled_offset(Cg *c, const Layout *l, Type tile, LLVMValueRef x0, LLVMValueRef x1)
{
    LLVMBuilderRef b = c->l->b;
    int cd = l->shared.order[0], rd = l->shared.order[1];
    int64_t eb = dtype_bytes(tile.dtype), sw = l->shared.swizzle;
    int64_t rows = tile.shape[rd], atom = sw / eb;
    LLVMValueRef col = cd == 0 ? x0 : x1, row = rd == 0 ? x0 : x1;
    LLVMValueRef at = cg_mul(b, cg_udiv(b, col, k32(c, atom), ""), k32(c, rows * sw), "");
    LLVMValueRef in_atom = cg_mul(b, cg_urem(b, col, k32(c, atom), ""), k32(c, eb), "");
    LLVMValueRef phase = cg_urem(b, cg_udiv(b, row, k32(c, l->shared.per_phase), ""),
                                 k32(c, l->shared.max_phase), "");
    int64_t unit = shared_swizzle_unit_bytes(l, tile);
    LLVMValueRef chunk = LLVMBuildXor(b, cg_udiv(b, in_atom, k32(c, unit), ""), phase, "");
    LLVMValueRef off = cg_add(b, at, cg_mul(b, row, k32(c, sw), ""), "");
    off = cg_add(b, off, cg_mul(b, chunk, k32(c, unit), ""), "");
    return cg_add(b, off, cg_urem(b, in_atom, k32(c, unit), ""), "");
}

/* The byte offset inside one slot of the tile element e of distribution ds: the swizzled offset
 * of a rank-2 tile; its plain offset along order[0] in an unswizzled one (swizzle 0: a tile only
 * whole local_loads read, passes/pipeline_loops.c plain_slot_layout); or e's index times the
 * element's bytes in a rank-1 tile (a row of elements, no swizzle: its #shared layout has
 * swizzle 0). */
static LLVMValueRef tile_offset(Cg *c, const Layout *l, Type tile, const Dist *ds, int e)
{
    if (tile.rank == 1)
        return cg_mul(c->l->b, cg_coord(c, ds, e, 0), k32(c, dtype_bytes(tile.dtype)), "");
    if (l->shared.swizzle == 0) {
        int cd = l->shared.order[0], rd = 1 - cd;
        LLVMValueRef idx =
            cg_add(c->l->b, cg_mul(c->l->b, cg_coord(c, ds, e, rd), k32(c, tile.shape[cd]), ""),
                   cg_coord(c, ds, e, cd), "");
        return cg_mul(c->l->b, idx, k32(c, dtype_bytes(tile.dtype)), "");
    }
    return cg_swizzled_offset(c, l, tile, cg_coord(c, ds, e, 0), cg_coord(c, ds, e, 1));
}

/* The shared-window pointer to byte `off` (i32) of the dynamic shared memory. */
static LLVMValueRef smem_ptr(Cg *c, LLVMValueRef off)
{
    return LLVMBuildGEP2(c->l->b, c->l->i8, cg_smem(c), &off, 1, "");
}

/* The shared-window address (i32) of byte `off`: what cp.async and descriptors take. */
LLVMValueRef cg_smem_window_addr(Cg *c, LLVMValueRef off)
{
    LLVMValueRef base = LLVMBuildPtrToInt(c->l->b, cg_smem(c), c->l->i32, "");
    return cg_add(c->l->b, base, off, "");
}

/* The largest power of two <= v (v >= 1). */
static int pow2_floor(int v)
{
    int p = 1;
    while (p * 2 <= v)
        p *= 2;
    return p;
}

/* ---- buffers and views ------------------------------------------------------------------------ */

/* local_alloc: the buffer is its byte offset. Slots are 1024-byte multiples from a 1024-aligned
 * offset (shared_slot_bytes), and @global_smem is declared .align 1024, so every slot starts on
 * the swizzle pattern's period, as wgmma's descriptors (base offset 0) require. */
static bool lower_local_alloc(Cg *c, const IrOp *op)
{
    ValueId r = op->results[0];
    Type t = ir_type(c->f, r);
    if (type_is_mbarriers(t)) {
        /* mbarriers (passes/tma.c): 8 bytes each, 8-byte aligned (PTX ISA 9.7.13.15.1) */
        if (op->smem_offset < 0 || op->smem_offset % 8 || op->smem_bytes < 8 * t.shape[0])
            FAIL(c,
                 "local_alloc: %lld mbarriers need %lld bytes at an 8-aligned offset, the "
                 "shared-memory pass gave %d at %d",
                 (long long)t.shape[0], (long long)(8 * t.shape[0]), op->smem_bytes,
                 op->smem_offset);
        /* as for a tile buffer (below): the memory may have held scratch other threads read
         * just before (a persistent kernel's previous epilogue); mbar_init writes it next */
        cg_barrier(c->l);
        LLVMValueRef *el = cg_regs(c, 1);
        el[0] = k32(c, op->smem_offset);
        cg_set_value(c, r, el, 1, 0);
        return true;
    }
    if (!t.is_smem || t.rank < 2 || t.rank > 3)
        FAIL(c, "local_alloc: result is not a !smem buffer of rank-1 or rank-2 slots");
    int64_t need = (int64_t)t.shape[0] * shared_slot_bytes(t, true);
    if (op->smem_offset < 0 || op->smem_offset % 1024 || op->smem_bytes < need)
        FAIL(c,
             "local_alloc: %lld bytes needed at a 1024-aligned offset, the shared-memory pass gave "
             "%d at %d",
             (long long)need, op->smem_bytes, op->smem_offset);
    LLVMSetAlignment(cg_smem(c), 1024);
    /* The buffer's memory may have held scratch read just before (shared_alloc places scratch
     * over the buffers outside their loops) or an earlier loop's buffer: every thread is done
     * with it before any thread's first cp.async lands there (bar.sync 0, PTX ISA 9.7.13.1).
     * Tensor-map copies write through the async proxy, so each thread's generic-proxy accesses
     * of that memory (the scratch a persistent kernel's previous tile wrote and read there) are
     * first ordered before them (fence.proxy.async, PTX ISA 9.7.13.4 membar/fence). */
    if (c->f->ntmaps > 0)
        cg_asm_void(c, "fence.proxy.async.shared::cta;");
    cg_barrier(c->l);
    LLVMValueRef *el = cg_regs(c, 1);
    el[0] = k32(c, op->smem_offset);
    cg_set_value(c, r, el, 1, ir_value(c->f, r)->layout);
    return true;
}

/* slot: buffer + index * slot bytes. */
static bool lower_slot(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    LVal *buf = cg_value(c, op->operands[0]), *idx = cg_value(c, op->operands[1]);
    if (c->failed)
        return false;
    LLVMValueRef i = idx->el[0];
    unsigned bits = LLVMGetIntTypeWidth(LLVMTypeOf(i));
    if (bits > 32)
        i = LLVMBuildTrunc(b, i, c->l->i32, "");
    else if (bits < 32)
        i = LLVMBuildZExt(b, i, c->l->i32, "");
    int64_t slot = shared_slot_bytes(ir_type(c->f, op->operands[0]), true);
    LLVMValueRef *el = cg_regs(c, 1);
    el[0] = cg_add(b, buf->el[0], cg_mul(b, i, k32(c, slot), ""), "");
    cg_set_value(c, op->results[0], el, 1, ir_value(c->f, op->results[0])->layout);
    return true;
}

/* ---- cp.async ------------------------------------------------------------------------------- */

/* Is v absent or a constant 0 (async_copy's `other` must be: masked-off elements are zero-filled)? */
static bool is_zero_const(const IrFunc *f, ValueId v)
{
    const IrOp *def = v > 0 ? f->values[v].def : NULL;
    return v == 0 || (def && def->code == OP_CONST && def->attr[0] == 0 && def->fattr == 0.0);
}

/* One group of `bytes` (4, 8 or 16) from src to the shared address dst (PTX ISA 9.7.9.25):
 * `cp.async.cg.shared.global [dst], [src], 16, src_size;` (.ca for 4 and 8 bytes: .cg takes
 * only 16); with a mask, src_size = mask ? bytes : 0, and a src_size of 0 reads nothing and
 * zero-fills the destination. Side effects and a memory clobber: LLVM keeps it in place. */
static void cp_async(Cg *c, LLVMValueRef dst, LLVMValueRef src, LLVMValueRef mask, int bytes)
{
    char text[128];
    const char *cache = bytes == 16 ? "cg" : "ca";
    LLVMValueRef args[3] = {dst, src, NULL};
    if (mask) {
        snprintf(text, sizeof text, "cp.async.%s.shared.global [ $0 + 0 ], [ $1 + 0 ], %d, $2;",
                 cache, bytes);
        args[2] = LLVMBuildSelect(c->l->b, mask, k32(c, bytes), k32(c, 0), "");
        cg_asm_n(c, c->l->void_t, text, "r,l,r,~{memory}", args, 3, true);
    } else {
        snprintf(text, sizeof text, "cp.async.%s.shared.global [ $0 + 0 ], [ $1 + 0 ], %d;", cache,
                 bytes);
        cg_asm_n(c, c->l->void_t, text, "r,l,~{memory}", args, 2, true);
    }
}

/* w elements (eb bytes each) stored at shared pointer p where pred holds (a branch around one
 * scalar or vector st.shared). */
static void store_shared_if(Cg *c, LLVMValueRef p, LLVMValueRef pred, LLVMValueRef *vals, int w,
                            LLVMTypeRef mt, int eb)
{
    LLVMBuilderRef b = c->l->b;
    LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "other.store");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "other.done");
    LLVMBuildCondBr(b, pred, then, done);
    LLVMPositionBuilderAtEnd(b, then);
    cg_store_run(c, p, vals, w, mt, eb);
    LLVMBuildBr(b, done);
    LLVMPositionBuilderAtEnd(b, done);
}

/* One group of `bytes` copied only where `pred` holds: `@p cp.async ... [dst], [src], bytes;`
 * (nothing is written where it does not; the async_copy's `other` is stored there instead). */
static void cp_async_if(Cg *c, LLVMValueRef dst, LLVMValueRef src, LLVMValueRef pred, int bytes)
{
    char text[160];
    snprintf(text, sizeof text,
             "{\n.reg .pred p;\nsetp.ne.b32 p, $2, 0;\n@p cp.async.%s.shared.global [ $0 + 0 ], [ "
             "$1 + 0 ], %d;\n}",
             bytes == 16 ? "cg" : "ca", bytes);
    LLVMValueRef args[3] = {dst, src, LLVMBuildZExt(c->l->b, pred, c->l->i32, "")};
    cg_asm_n(c, c->l->void_t, text, "r,l,r,~{memory}", args, 3, true);
}

/* async_copy view, ptrs, mask?, other?: each thread copies the elements its pointers' blocked
 * layout gives it, in groups of axis_vector_width elements along the layout's fastest dim (the
 * same groups a load would use), each group to the swizzled offset of its first element. A group
 * lies in one 16-byte chunk (it starts at a multiple of its size, at most 16 bytes), so it is
 * contiguous in the tile when the fastest dim is the tile's contiguous one; else groups are
 * single elements. Groups of 4 bytes or more are cp.async; smaller ones (2-byte elements one by
 * one) are a predicated ld.global and st.shared, which completes earlier than the async_wait
 * requires. Elements a layout gives several threads (a wrapped blocked layout, a slice) are
 * copied by their first holder alone. */
static bool lower_async_copy(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    ValueId vv = op->operands[0], pv = op->operands[1];
    ValueId mv = op->noperands > 2 ? op->operands[2] : 0,
            ov = op->noperands > 3 ? op->operands[3] : 0;
    Type tile, pt = ir_type(c->f, pv);
    const Layout *sl = shared_layout(c, vv);
    if (!sl || !view_tile(c, vv, &tile))
        return false;
    /* a non-zero `other`: masked-off groups are written with it by ordinary stores instead of
     * copied (cp.async's own fill is zeros), and masked-in groups are copied only when their
     * mask holds, so the two never write the same bytes */
    LVal *other = is_zero_const(c->f, ov) ? NULL : cg_value(c, ov);
    if (!pt.is_ptr || pt.rank != tile.rank || pt.shape[0] != tile.shape[0] ||
        (tile.rank == 2 && pt.shape[1] != tile.shape[1]))
        FAIL(c, "async_copy: pointers of type %s do not match the tile %s", type_str(c->arena, pt),
             type_str(c->arena, tile));
    LVal *view = cg_value(c, vv), *ptr = cg_value(c, pv), *mask = mv ? cg_value(c, mv) : NULL;
    if (c->failed)
        return false;
    Dist *ds = cg_dist(c, ptr->layout, pt);
    if (!ds)
        return false;
    if (ptr->n != ds->nelems)
        FAIL(c, "async_copy: %d pointer registers for a layout of %d", ptr->n, ds->nelems);
    int eb = dtype_bytes(tile.dtype);
    int w = ds->vec_dim == sl->shared.order[0] ? cg_access_width(c, op, ds) : 1;
    LLVMTypeRef mt = cg_mem_type(c, tile.dtype);
    /* The swizzled offset of the thread's first element is computed once; an element whose
     * offset from it is a multiple of 8 rows (the XOR pattern's period) and of whole atoms
     * along the contiguous dim sits at that offset plus a constant, so its cp.async takes an
     * immediate address offset ([r + 4096]) instead of its own swizzle arithmetic. */
    int rank = tile.rank, cd = sl->shared.order[0], rd = rank == 2 ? sl->shared.order[1] : 0;
    int64_t sw = sl->shared.swizzle, atom = sw / eb, rows = tile.shape[rd];
    LLVMValueRef first = NULL;
    int e0 = -1;
    /* a layout whose threads hold the same elements (a slice of an #mma layout: row statistics
     * loaded in their users' layout) copies each element from its first holder alone: the others
     * skip their copies, which would write the same bytes, or zeros where masked off, at once */
    LLVMBasicBlockRef done = NULL;
    if (ds->owner) {
        LLVMBasicBlockRef copy = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "copy.owner");
        done = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "copy.done");
        LLVMBuildCondBr(b, ds->owner, copy, done);
        LLVMPositionBuilderAtEnd(b, copy);
    }
    for (int e = 0; e < ds->nelems; e++) {
        if (w > 1 && ds->idx[e * rank + ds->vec_dim] % w)
            continue;
        LLVMValueRef off = NULL;
        if (e0 >= 0 && rank == 2) {
            int64_t drow = ds->off[e * 2 + rd] - ds->off[e0 * 2 + rd];
            int64_t dcol = ds->off[e * 2 + cd] - ds->off[e0 * 2 + cd];
            if (sw == 0) /* unswizzled: every element at a constant offset from the first */
                off = cg_add(b, first, k32(c, (drow * tile.shape[cd] + dcol) * eb), "");
            else if (drow % 8 == 0 && dcol % atom == 0 && drow >= 0 && dcol >= 0)
                off = cg_add(b, first, k32(c, drow * sw + dcol / atom * rows * sw), "");
        }
        if (!off) {
            off = cg_add(b, view->el[0], tile_offset(c, sl, tile, ds, e), "");
            if (e0 < 0) {
                e0 = e;
                first = off;
            }
        }
        LLVMValueRef m = mask ? reg_at(mask, e) : NULL;
        if (m && other) {
            LLVMValueRef vals[16];
            for (int j = 0; j < w; j++)
                vals[j] = reg_at(other, e + j);
            store_shared_if(c, smem_ptr(c, off), LLVMBuildNot(b, m, ""), vals, w, mt, eb);
            if (w * eb >= 4) {
                cp_async_if(c, cg_smem_window_addr(c, off), ptr->el[e], m, w * eb);
                continue;
            }
        } else if (w * eb >= 4) {
            cp_async(c, cg_smem_window_addr(c, off), ptr->el[e], m, w * eb);
            continue;
        }
        LLVMValueRef got[16];
        if (m) {
            LLVMValueRef zero[16];
            for (int j = 0; j < w; j++)
                zero[j] = other ? reg_at(other, e + j) : LLVMConstNull(mt);
            cg_load_predicated(c, ptr->el[e], m, zero, w, mt, eb, got);
        } else {
            got[0] = LLVMBuildLoad2(b, mt, ptr->el[e], "");
            LLVMSetAlignment(got[0], (unsigned)eb);
        }
        LLVMValueRef st = LLVMBuildStore(b, got[0], smem_ptr(c, off));
        LLVMSetAlignment(st, (unsigned)eb);
    }
    if (done) {
        LLVMBuildBr(b, done);
        LLVMPositionBuilderAtEnd(b, done);
    }
    return true;
}

/* ---- reading a tile into registers ----------------------------------------------------------- */

/* Splits a .b32 of two 16-bit elements (the lower one first) into out[0], out[1]. */
static void unpack_pair(Cg *c, LLVMValueRef word, LLVMTypeRef et, LLVMValueRef *out)
{
    LLVMBuilderRef b = c->l->b;
    LLVMValueRef v = LLVMBuildBitCast(b, word, LLVMVectorType(et, 2), "");
    out[0] = LLVMBuildExtractElement(b, v, k32(c, 0), "");
    out[1] = LLVMBuildExtractElement(b, v, k32(c, 1), "");
}

/* ldmatrix for one k16 step rk of a dot operand in shared memory (PTX ISA 9.7.9.25 ldmatrix;
 * the mma.sync m16n8k16 fragments 9.7.14.5.8), straight into the packed .b32 registers the mma
 * takes: A (op_idx 0) at pk[(rm * Kt + rk) * 4 + q] for every m16 tile rm of this warp, q =
 * kh*2 + h (a0a1, a2a3, a4a5, a6a7); B at pk[(rk * Rn + rn) * 2 + kh] for every n8 tile rn.
 * `.trans` when the tile's contiguous dim is not K. view_off is the slot's byte offset (i32). */
bool cg_ldmatrix_step(Cg *c, const Layout *sl, Type tile, const Layout *L, LLVMValueRef view_off,
                      int rk, LLVMValueRef *pk)
{
    LLVMBuilderRef pb = c->pro;
    const Layout *P = &c->f->layouts[L->dot_operand.parent];
    int op_idx = L->dot_operand.op_idx;
    int md = op_idx == 0 ? 0 : 1, kd = 1 - md;
    int Wm = P->mma.warps_per_cta[0], Wn = P->mma.warps_per_cta[1];
    int K = tile.shape[kd], MN = tile.shape[md], Kt = K / 16;
    bool trans = sl->shared.order[0] != kd;
    MmaBases *mb = cg_mma_bases(c, P);
    /* this lane's matrix i = lane / 8 and row r = lane % 8; lo = i % 2, hi = i / 2 */
    LLVMValueRef mi = LLVMBuildLShr(pb, c->lane, k32(c, 3), "");
    LLVMValueRef r = LLVMBuildAnd(pb, c->lane, k32(c, 7), "");
    LLVMValueRef lo8 = cg_mul(pb, LLVMBuildAnd(pb, mi, k32(c, 1), ""), k32(c, 8), "");
    LLVMValueRef hi8 = cg_mul(pb, LLVMBuildLShr(pb, mi, k32(c, 1), ""), k32(c, 8), "");
    LLVMValueRef got[4];
    if (op_idx == 0) {
        /* A: m = rm*16*Wm + wm*16 + lo*8 (+ r), k = rk*16 + hi*8 (+ r when .trans) */
        int Rm = MN / (16 * Wm);
        LLVMValueRef m0 = cg_add(pb, cg_mul(pb, mb->wm, k32(c, 16), ""), lo8, "");
        LLVMValueRef k0 = hi8;
        if (trans)
            k0 = cg_add(pb, k0, r, "");
        else
            m0 = cg_add(pb, m0, r, "");
        for (int rm = 0; rm < Rm; rm++) {
            LLVMValueRef m = cg_add(c->l->b, m0, k32(c, rm * 16 * Wm), "");
            LLVMValueRef k = cg_add(c->l->b, k0, k32(c, rk * 16), "");
            LLVMValueRef off = cg_add(c->l->b, view_off, cg_swizzled_offset(c, sl, tile, m, k), "");
            cg_ldmatrix(c, smem_ptr(c, off), 4, trans, got);
            for (int q = 0; q < 4; q++)
                pk[(rm * Kt + rk) * 4 + q] = got[q];
        }
    } else {
        /* B: k = rk*16 + lo*8 (+ r when .trans), n = rn*8*Wn + wn*8 + hi*8*Wn (+ r) */
        int Rn = MN / (8 * Wn);
        LLVMValueRef k0 = lo8;
        LLVMValueRef n0 =
            cg_add(pb, cg_mul(pb, mb->wn, k32(c, 8), ""), cg_mul(pb, hi8, k32(c, Wn), ""), "");
        if (trans)
            k0 = cg_add(pb, k0, r, "");
        else
            n0 = cg_add(pb, n0, r, "");
        for (int rn = 0; rn < Rn; rn += 2) {
            LLVMValueRef k = cg_add(c->l->b, k0, k32(c, rk * 16), "");
            LLVMValueRef n = cg_add(c->l->b, n0, k32(c, rn * 8 * Wn), "");
            LLVMValueRef off = cg_add(c->l->b, view_off, cg_swizzled_offset(c, sl, tile, k, n), "");
            int nm = rn + 1 < Rn ? 4 : 2;
            cg_ldmatrix(c, smem_ptr(c, off), nm, trans, got);
            for (int q = 0; q < nm; q++) /* tile rn + q/2, kh = q%2 */
                pk[(rk * Rn + rn + q / 2) * 2 + q % 2] = got[q];
        }
    }
    return true;
}

/* A deferred local_load (a dot operand that only its mma.sync dot reads, codegen/dot.c): the dot
 * calls this per k16 step, so only one step's fragments are live at a time. */
bool cg_local_load_step(Cg *c, ValueId v, int rk, LLVMValueRef *pk)
{
    const IrOp *op = ir_value(c->f, v)->def;
    ValueId vv = op->operands[0];
    Type tile;
    const Layout *sl = shared_layout(c, vv);
    if (!sl || !view_tile(c, vv, &tile))
        return false;
    LVal *view = cg_value(c, vv);
    if (c->failed)
        return false;
    return cg_ldmatrix_step(c, sl, tile, &c->f->layouts[ir_value(c->f, v)->layout], view->el[0], rk,
                            pk);
}

/* local_load into a #dot_op of an mma.sync dot, materialized: every k16 step's ldmatrix, the
 * packed words unpacked into the operand's registers (lower_dot_mma repacks them; LLVM folds the
 * pair). */
static bool local_load_ldmatrix(Cg *c, const IrOp *op, const Layout *sl, Type tile, Dist *dr,
                                LVal *view)
{
    const Layout *L = &c->f->layouts[dr->layout];
    const Layout *P = &c->f->layouts[L->dot_operand.parent];
    int op_idx = L->dot_operand.op_idx;
    int md = op_idx == 0 ? 0 : 1, kd = 1 - md;
    int K = tile.shape[kd], MN = tile.shape[md], Kt = K / 16;
    int Rm = MN / (16 * P->mma.warps_per_cta[0]), Rn = MN / (8 * P->mma.warps_per_cta[1]);
    int words = op_idx == 0 ? Rm * Kt * 4 : Kt * Rn * 2;
    LLVMValueRef *pk = cg_regs(c, words);
    for (int rk = 0; rk < Kt; rk++)
        if (!cg_ldmatrix_step(c, sl, tile, L, view->el[0], rk, pk))
            return false;
    LLVMTypeRef et = cg_mem_type(c, tile.dtype);
    int *map = cg_local_index_map(c, dr);
    LLVMValueRef *el = cg_regs(c, dr->nelems), pair[2];
    int cols = dr->count[1];
    for (int x = 0; x < words; x++) {
        unpack_pair(c, pk[x], et, pair);
        for (int j = 0; j < 2; j++) {
            int e;
            if (op_idx == 0) { /* x = (rm * Kt + rk) * 4 + q, q = kh*2 + h */
                int q = x % 4, rk = (x / 4) % Kt, rm = x / 4 / Kt;
                e = map[(rm * 2 + q % 2) * cols + rk * 4 + (q / 2) * 2 + j];
            } else { /* x = (rk * Rn + rn) * 2 + kh */
                int kh = x % 2, rn = (x / 2) % Rn, rk = x / 2 / Rn;
                e = map[(rk * 4 + kh * 2 + j) * cols + rn];
            }
            if (e < 0)
                FAIL(c, "local_load: %s fragment element missing", op_idx == 0 ? "A" : "B");
            el[e] = pair[j];
        }
    }
    for (int e = 0; e < dr->nelems; e++)
        if (!el[e])
            FAIL(c, "local_load: register %d of the dot operand is not loaded", e);
    cg_set_value(c, op->results[0], el, dr->nelems, dr->layout);
    return true;
}

/* local_load into any other layout: each thread reads its elements with ld.shared at their
 * swizzled offsets, runs along the tile's contiguous dim as one vector of up to 16 bytes (a run
 * starts at a multiple of its length, so it stays inside one 16-byte chunk). */
static bool local_load_generic(Cg *c, const IrOp *op, const Layout *sl, Type tile, Dist *dr,
                               LVal *view)
{
    LLVMBuilderRef b = c->l->b;
    int eb = dtype_bytes(tile.dtype), cd = sl->shared.order[0];
    LLVMTypeRef mt = cg_mem_type(c, tile.dtype);
    int w = dr->vec_dim == cd ? pow2_floor(dr->run[cd] < 16 / eb ? dr->run[cd] : 16 / eb) : 1;
    LLVMValueRef *el = cg_regs(c, dr->nelems);
    for (int e = 0; e < dr->nelems; e++) {
        if (w > 1 && dr->idx[e * tile.rank + cd] % w)
            continue;
        LLVMValueRef off = tile_offset(c, sl, tile, dr, e);
        LLVMValueRef p = smem_ptr(c, cg_add(b, view->el[0], off, ""));
        LLVMValueRef got[16];
        cg_load_run(c, mt, p, w, eb, got);
        for (int j = 0; j < w; j++)
            el[e + j] = tile.dtype == DT_I1
                            ? LLVMBuildICmp(b, LLVMIntNE, got[j], LLVMConstInt(c->l->i8, 0, 0), "")
                            : got[j];
    }
    cg_set_value(c, op->results[0], el, dr->nelems, dr->layout);
    return true;
}

static bool lower_local_load(Cg *c, const IrOp *op)
{
    ValueId vv = op->operands[0], r = op->results[0];
    Type tile, rt = ir_type(c->f, r);
    const Layout *sl = shared_layout(c, vv);
    if (!sl || !view_tile(c, vv, &tile))
        return false;
    if (rt.rank != tile.rank || rt.shape[0] != tile.shape[0] ||
        (rt.rank == 2 && rt.shape[1] != tile.shape[1]) || rt.dtype != tile.dtype)
        FAIL(c, "local_load: result %s does not match the tile %s", type_str(c->arena, rt),
             type_str(c->arena, tile));
    LVal *view = cg_value(c, vv);
    Dist *dr = cg_dist(c, ir_value(c->f, r)->layout, rt);
    if (c->failed || !dr)
        return false;
    const Layout *L = &c->f->layouts[dr->layout];
    bool mma_operand = L->kind == LAYOUT_DOT_OPERAND &&
                       c->f->layouts[L->dot_operand.parent].kind == LAYOUT_MMA &&
                       dtype_bytes(tile.dtype) == 2;
    bool fma_operand = L->kind == LAYOUT_DOT_OPERAND &&
                       c->f->layouts[L->dot_operand.parent].kind == LAYOUT_BLOCKED;
    if ((mma_operand || fma_operand) && c->lazy_operand[r]) {
        /* its dot loads it step by step (cg_local_load_step; an FMA dot reads the slot in its k
         * loop, dot_fma.c); a placeholder stands for it */
        LLVMValueRef *none = cg_regs(c, 1);
        none[0] = LLVMGetUndef(c->l->i32);
        cg_set_value(c, r, none, 1, dr->layout);
        return true;
    }
    if (mma_operand)
        return local_load_ldmatrix(c, op, sl, tile, dr, view);
    return local_load_generic(c, op, sl, tile, dr, view);
}

/* ---- wgmma from shared tiles ------------------------------------------------------------------ */

/* A wgmma matrix descriptor's constant part (PTX ISA 9.7.15.5.1.2.2, 64 bits): leading-dimension
 * byte offset >> 4 in bits 16-29, stride-dimension byte offset >> 4 in 32-45, base offset 0
 * (bits 49-51: every tile starts on its swizzle period), swizzle mode in 62-63: 1 = 128-byte,
 * 2 = 64-byte, 3 = 32-byte. The start address >> 4 (bits 0-13) is added per instruction. */
static uint64_t desc_fields(int64_t lbo, int64_t sbo, int swizzle)
{
    uint64_t mode = swizzle == 128 ? 1 : swizzle == 64 ? 2 : 3;
    return ((uint64_t)((lbo >> 4) & 0x3fff) << 16) | ((uint64_t)((sbo >> 4) & 0x3fff) << 32) |
           (mode << 62);
}

/* One operand's descriptor: for a K-major tile (its contiguous dim is K) SBO = 8 rows * S (the
 * next 8 rows of M or N) and LBO unused (16: a k16 step never leaves its atom row); for an
 * MN-major one (contiguous along M or N) LBO = K * S (the next atom along M/N: atoms are K rows
 * of S bytes) and SBO = 8 * S (the next 8 k rows). `addr` is the shared-window address (i32) of
 * the instruction's first element; its >> 4 goes in bits 0-13. */
LLVMValueRef cg_wgmma_operand_desc(Cg *c, LLVMValueRef addr, const Layout *sl, Type tile, int kd)
{
    LLVMBuilderRef b = c->l->b;
    /* The address read back from lane 0 here, where the wgmma is (shfl.sync.idx, PTX ISA
     * 9.7.8.6; every lane of a warp holds the same address): LLVM does not hoist a shuffle out of
     * a loop, and ptxas can prove its result warp-uniform, so the descriptors are computed at each
     * wgmma in uniform registers. Computed once before the loop instead, a loop-invariant tile's
     * descriptors sat in ordinary registers across it, spilled under pressure (attention backward
     * at D = 128) and moved to uniform registers (R2UR) before every wgmma. Triton's descriptors
     * are made the same way. */
    LLVMValueRef shfl_args[4] = {k32(c, -1), addr, k32(c, 0), k32(c, 0x1f)};
    addr = cg_call(c->l, "llvm.nvvm.shfl.sync.idx.i32", c->l->i32, shfl_args, 4);
    int sw = sl->shared.swizzle;
    bool k_major = sl->shared.order[0] == kd;
    int64_t lbo = k_major ? 16 : (int64_t)tile.shape[kd] * sw, sbo = 8 * (int64_t)sw;
    LLVMValueRef a =
        LLVMBuildZExt(b, LLVMBuildAnd(b, LLVMBuildLShr(b, addr, k32(c, 4), ""), k32(c, 0x3fff), ""),
                      c->l->i64, "");
    return LLVMBuildOr(b, a, LLVMConstInt(c->l->i64, desc_fields(lbo, sbo, sw), 0), "");
}

/* A register A operand's fragments packed as wgmma reads them: Rm * Kt * 4 words. */
static LLVMValueRef *register_a_words(Cg *c, const LVal *A, Type ta, int Rm, int Kt)
{
    Dist *da = cg_dist(c, A->layout, ta);
    LLVMValueRef *words = cg_regs(c, Rm * Kt * 4);
    return da && cg_pack_a_fragments(c, A, da, Rm, Kt, words) ? words : NULL;
}

/* wgmma a, b, c (sm_90a, #mma v3 result; docs/codegen.md "The memory pipeline"): both operands
 * are swizzled shared tiles read through descriptors, so nothing is stored and nothing fenced
 * here (the IR's barrier {fence_async} did that). `wgmma.fence`, then per k16 step, m64 tile of
 * this warpgroup and n piece one `wgmma.mma_async.sync.aligned.m64nNk16.f32.T.T d, descA, descB,
 * p, 1, 1, transA, transB` (imm-trans = 1 for an MN-major operand), `wgmma.commit_group`. No
 * wait: wgmma_wait does it, with the accumulators tied through. The start address of each
 * instruction's operand is the tile's swizzled offset of its first element (rows a multiple of
 * 8, k a multiple of 16: no swizzle phase), so the descriptors step exactly as the layout does:
 * K-major within an atom by k * 2 bytes, across atoms by R * S; MN-major by 16 rows of S bytes. */
static bool lower_wgmma(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    ValueId av = op->operands[0], bv = op->operands[1], cv = op->operands[2], r = op->results[0];
    Type ta = ir_type(c->f, av), tb, rt = ir_type(c->f, r);
    /* A is a slot view, or #dot_op registers (a chained or computed operand) */
    bool a_regs = !ta.is_smem;
    const Layout *la = a_regs ? NULL : shared_layout(c, av), *lb = shared_layout(c, bv);
    if ((!a_regs && (!la || !view_tile(c, av, &ta))) || !lb || !view_tile(c, bv, &tb))
        return false;
    if (a_regs && (ta.rank != 2 || (ta.dtype != DT_F16 && ta.dtype != DT_BF16)))
        FAIL(c, "wgmma: a register A must be a 2-D fp16 or bf16 tile, not %s",
             type_str(c->arena, ta));
    Dist *dr = cg_dist(c, ir_value(c->f, r)->layout, rt);
    if (!dr)
        return false;
    const Layout *L = &c->f->layouts[dr->layout];
    if (L->kind != LAYOUT_MMA || L->mma.version != 3)
        FAIL(c, "wgmma: the result is not in an #mma v3 layout");
    int M = rt.shape[0], N = rt.shape[1], K = ta.shape[1];
    int W = L->mma.warps_per_cta[0], NI = L->mma.instr_shape[1];
    bool tf32 = ta.dtype == DT_F32, fp8 = dtype_is_fp8(ta.dtype) && dtype_is_fp8(tb.dtype);
    int KI = 32 / dtype_bytes(ta.dtype); /* k per instruction: 32 bytes (k8 tf32, k16, k32 fp8) */
    /* trans_b: the view holds B^T [N, K] (a `.T` of the loaded tile), so K is its dim 1 */
    bool trans_b = op->attr[1] != 0;
    int b_kd = trans_b ? 1 : 0, b_nd = 1 - b_kd;
    if (trans_b && dtype_bytes(tb.dtype) != 2 && !fp8 && !tf32)
        FAIL(c, "wgmma: a transposed B view is for 16-bit, fp8 and tf32 types");
    if (ta.shape[0] != M || tb.shape[b_kd] != K || tb.shape[b_nd] != N ||
        (ta.dtype != tb.dtype && !fp8) ||
        (ta.dtype != DT_F16 && ta.dtype != DT_BF16 && !tf32 && !fp8) || rt.dtype != DT_F32)
        FAIL(c,
             "wgmma: operands %s, %s and result %s are not an fp16/bf16/tf32/fp8 dot with an fp32 "
             "result",
             type_str(c->arena, ta), type_str(c->arena, tb), type_str(c->arena, rt));
    if (W % 4 || M % (16 * W) || NI < 8 || NI > 256 || NI % 8 || N % NI || K % KI)
        FAIL(c, "wgmma: tile [%d, %d, %d] on %d warps with n %d does not fit", M, N, K, W, NI);
    int Rm = M / (16 * W), Kt = K / KI, Nc = N / NI;
    LVal *A = cg_value(c, av), *B = cg_value(c, bv), *C = cg_value(c, cv);
    if (c->failed)
        return false;
    int n = dr->nelems;
    if (C->n != n && C->n != 1)
        FAIL(c, "wgmma: accumulator register count differs from the layout's");
    bool a_kmaj = a_regs || la->shared.order[0] == 1, b_kmaj = lb->shared.order[0] == b_kd;
    if ((tf32 || fp8) && (!a_kmaj || !b_kmaj))
        FAIL(c, "wgmma: %s operands must be K-major in shared memory", tf32 ? "tf32" : "fp8");
    int a_atom = a_regs ? 8 : la->shared.swizzle / dtype_bytes(ta.dtype),
        b_atom = lb->shared.swizzle / dtype_bytes(tb.dtype);
    /* Each instruction's B columns start an MN-major atom (a piece inside an atom would need the
     * descriptor's base offset) */
    if (!b_kmaj && NI % b_atom && Nc > 1)
        FAIL(c, "wgmma: n pieces of %d inside %d-column swizzle atoms", NI, b_atom);
    if (!a_kmaj && 64 % a_atom)
        FAIL(c, "wgmma: m64 tiles inside %d-row swizzle atoms", a_atom);

    /* Thread-invariant parts: warpgroup g = warp / 4 starts at row g*64 of A; offsets are linear
     * in rows that are multiples of 8 (K-major) or of the atom (MN-major). */
    LLVMValueRef a_desc = NULL, *a_words = NULL;
    int64_t *a_offs = arena_alloc(c->arena, sizeof(int64_t) * (size_t)(Kt * Rm));
    if (a_regs) {
        if (!(a_words = register_a_words(c, A, ta, Rm, Kt)))
            return false;
    } else {
        int64_t x64[2] = {64, 0};
        int64_t g_off = shared_swizzled_offset(la, ta, x64);
        LLVMValueRef g = LLVMBuildLShr(c->pro, c->warp, k32(c, 2), "");
        LLVMValueRef g_bytes = cg_mul(c->pro, g, k32(c, g_off), "");
        LLVMValueRef a_base = cg_smem_window_addr(c, cg_add(b, A->el[0], g_bytes, ""));
        a_desc = cg_wgmma_operand_desc(c, a_base, la, ta, 1);
    }
    LLVMValueRef b_base = cg_smem_window_addr(c, B->el[0]);
    LLVMValueRef b_desc = cg_wgmma_operand_desc(c, b_base, lb, tb, b_kd);

    int64_t *b_offs = arena_alloc(c->arena, sizeof(int64_t) * (size_t)(Kt * Nc));
    for (int rk = 0; rk < Kt; rk++) {
        for (int rm = 0; !a_regs && rm < Rm; rm++) {
            int64_t ca[2] = {(int64_t)rm * 16 * W, (int64_t)rk * KI}; /* A (m, k); + g*64 rows */
            a_offs[rk * Rm + rm] = shared_swizzled_offset(la, ta, ca);
        }
        for (int nc = 0; nc < Nc; nc++) {
            int64_t cb[2];
            cb[b_kd] = (int64_t)rk * KI; /* B (k, n), or B^T (n, k) */
            cb[b_nd] = (int64_t)nc * NI;
            b_offs[rk * Nc + nc] = shared_swizzled_offset(lb, tb, cb);
        }
    }
    WgmmaIssue w = {.dtype = ta.dtype,
                    .btype = tb.dtype,
                    .M = M,
                    .N = N,
                    .K = K,
                    .W = W,
                    .NI = NI,
                    .trans_a = !a_kmaj,
                    .trans_b = !b_kmaj,
                    .a_desc = a_desc,
                    .b_desc = b_desc,
                    .a_regs = a_words,
                    .a_off = a_offs,
                    .b_off = b_offs,
                    .imprecise_k = (int)op->attr[2]};
    if (op->noperands > 3) { /* guard (i1): issued where true (passes/overlap_dots.c) */
        LVal *g = cg_value(c, op->operands[3]);
        if (c->failed)
            return false;
        w.guard = LLVMBuildZExt(b, cg_at(g, 0), c->l->i32, "");
    }
    LLVMValueRef *acc = cg_wgmma_issue(c, &w, C, dr);
    if (!acc)
        return false;
    cg_set_value(c, r, acc, n, dr->layout);
    return true;
}

/* The inline-asm constraint letter for a register of type t; NULL if none. */
static const char *reg_constraint(Cg *c, LLVMTypeRef t)
{
    if (t == c->l->f32)
        return "f";
    if (t == c->l->f64)
        return "d";
    if (t == c->l->i64 || t == c->l->gptr)
        return "l";
    if (t == c->l->i32)
        return "r";
    if (t == c->l->i16 || t == c->l->f16 || t == c->l->bf16)
        return "h";
    return NULL;
}

/* wgmma_wait {N} v...: `wgmma.wait_group.sync.aligned N;` (PTX ISA 9.7.15.7.3) as one asm with
 * every register of every operand tied in and out, so no read of an accumulator moves above
 * the wait and ptxas sees the registers pass through it; the results are the tied outputs. */
static bool lower_wgmma_wait(Cg *c, const IrOp *op)
{
    char text[64];
    snprintf(text, sizeof text, "wgmma.wait_group.sync.aligned %d;", (int)op->attr[0]);
    if (op->nresults != op->noperands)
        FAIL(c, "wgmma_wait: %d results for %d operands", op->nresults, op->noperands);
    int total = 0;
    for (int i = 0; i < op->noperands; i++) {
        LVal *v = cg_value(c, op->operands[i]);
        if (c->failed)
            return false;
        total += v->n;
    }
    if (total == 0) {
        cg_asm_void(c, text);
        return true;
    }
    LLVMValueRef *args = cg_regs(c, total);
    LLVMTypeRef *tys = arena_alloc(c->arena, sizeof(LLVMTypeRef) * (size_t)total);
    StrBuf cons = {0};
    int k = 0;
    for (int i = 0; i < op->noperands; i++) {
        LVal *v = cg_value(c, op->operands[i]);
        for (int e = 0; e < v->n; e++, k++) {
            args[k] = v->el[e];
            tys[k] = LLVMTypeOf(v->el[e]);
            const char *letter = reg_constraint(c, tys[k]);
            if (!letter) {
                strbuf_free(&cons);
                FAIL(c, "wgmma_wait: operand %d has registers no asm constraint takes", i);
            }
            strbuf_printf(&cons, "=%s,", letter);
        }
    }
    for (int i = 0; i < total; i++)
        strbuf_printf(&cons, "%s%d", i ? "," : "", i);
    strbuf_append(&cons, ",~{memory}");
    LLVMValueRef call;
    if (total == 1) {
        call = cg_asm_n(c, tys[0], text, cons.data, args, 1, true);
    } else {
        LLVMTypeRef ret = LLVMStructTypeInContext(c->l->ctx, tys, (unsigned)total, 0);
        call = cg_asm_n(c, ret, text, cons.data, args, total, true);
    }
    strbuf_free(&cons);
    k = 0;
    for (int i = 0; i < op->noperands; i++) {
        LVal *v = cg_value(c, op->operands[i]);
        LLVMValueRef *el = cg_regs(c, v->n);
        for (int e = 0; e < v->n; e++, k++)
            el[e] = total == 1 ? call : LLVMBuildExtractValue(c->l->b, call, (unsigned)k, "");
        cg_set_value(c, op->results[i], el, v->n, v->layout);
    }
    return true;
}

/* ---- mbarriers and TMA copies (passes/tma.c) -------------------------------------------------- */

/* The shared-window address (i32) of a buffer or view. */
static LLVMValueRef window_of(Cg *c, ValueId v)
{
    return cg_smem_window_addr(c, cg_value(c, v)->el[0]);
}

/* i32 1 on thread 0 of the program where pred (an i1 scalar value, or 0 for true) holds: the one
 * thread that arrives on a barrier or issues a whole tile's TMA copy. */
static LLVMValueRef thread0_where(Cg *c, ValueId pred)
{
    LLVMBuilderRef b = c->l->b;
    LLVMValueRef go = LLVMBuildICmp(b, LLVMIntEQ, c->tid, k32(c, c->first_thread), "");
    if (pred) {
        LLVMValueRef p = cg_value(c, pred)->el[0];
        if (LLVMGetIntTypeWidth(LLVMTypeOf(p)) != 1)
            p = LLVMBuildICmp(b, LLVMIntNE, p, LLVMConstInt(LLVMTypeOf(p), 0, 0), "");
        go = LLVMBuildAnd(b, go, p, "");
    }
    return LLVMBuildZExt(b, go, c->l->i32, "");
}

/* Every slot of the buffer: on thread 0, `op [slot]` (mbarrier.init with count 1, or inval). */
static void each_barrier(Cg *c, const IrOp *op, const char *what)
{
    Type t = ir_type(c->f, op->operands[0]);
    LLVMValueRef go = thread0_where(c, 0), base = window_of(c, op->operands[0]);
    char text[160];
    snprintf(text, sizeof text, "{ .reg .pred p; setp.ne.b32 p, $0, 0; @p %s; }", what);
    for (int s = 0; s < t.shape[0]; s++) {
        LLVMValueRef args[2] = {go, cg_add(c->l->b, base, k32(c, 8 * s), "")};
        cg_asm_n(c, c->l->void_t, text, "r,r,~{memory}", args, 2, true);
    }
}

/* One cp.async.bulk.tensor of tensor map attr[0] per swizzle atom of a tile at shared address
 * smem, where go holds: atom a at smem + a * atom_bytes and at map coordinate c0 + a * box[0],
 * the coordinates op's operands first... A load (global -> shared) completes on the mbarrier at
 * bar; a store (shared -> global) joins the thread's bulk group. */
static void tma_atoms(Cg *c, const IrOp *op, bool load, LLVMValueRef go, LLVMValueRef smem,
                      LLVMValueRef bar, int first, int natoms, int64_t atom_bytes)
{
    const TensorMap *m = &c->f->tmaps[op->attr[0]];
    LLVMBuilderRef b = c->l->b;
    LLVMValueRef map = LLVMBuildPtrToInt(b, c->tmaps[op->attr[0]], c->l->i64, "");
    int nfixed = load ? 4 : 3; /* go, smem, map (, bar) */
    StrBuf text = {0}, cons = {0};
    strbuf_printf(&text, "{ .reg .pred p; setp.ne.b32 p, $0, 0; @p cp.async.bulk.tensor.%dd.",
                  m->rank);
    strbuf_append(&text, load ? "shared::cluster.global.mbarrier::complete_tx::bytes [$1], [$2, {"
                              : "global.shared::cta.bulk_group [$2, {");
    strbuf_append(&cons, load ? "r,r,l,r" : "r,r,l");
    for (int d = 0; d < m->rank; d++) {
        strbuf_printf(&text, "%s$%d", d ? ", " : "", nfixed + d);
        strbuf_append(&cons, ",r");
    }
    strbuf_append(&text, load ? "}], [$3]; }" : "}], [$1]; }");
    strbuf_append(&cons, ",~{memory}");
    for (int a = 0; a < natoms; a++) {
        LLVMValueRef args[4 + TRIC_TMAP_MAX_RANK] = {
            go, cg_add(b, smem, k32(c, (int)(a * atom_bytes)), ""), map, bar};
        for (int d = 0; d < m->rank; d++) {
            LLVMValueRef x = cg_value(c, op->operands[first + d])->el[0];
            args[nfixed + d] = d == 0 && a ? cg_add(b, x, k32(c, a * m->box[0]), "") : x;
        }
        cg_asm_n(c, c->l->void_t, text.data, cons.data, args, nfixed + m->rank, true);
    }
    strbuf_free(&text);
    strbuf_free(&cons);
}

/* tma_load: thread 0 issues one cp.async.bulk.tensor per swizzle atom of the tile (PTX ISA
 * 9.7.9.27): atom a covers map dim 0 from coordinate c0 + a * box[0], and lands at the view +
 * a * rows * swizzle, where the #shared layout puts it (its atoms are the tensor map's boxes;
 * TMA's 32/64/128-byte swizzle is the layout's XOR pattern, given 1024-byte aligned slots). */
static bool lower_tma_load(Cg *c, const IrOp *op)
{
    const IrFunc *f = c->f;
    const TensorMap *m = &f->tmaps[op->attr[0]];
    Type vt = ir_type(f, op->operands[0]);
    int lay = ir_value(f, op->operands[0])->layout;
    if (lay <= 0 || f->layouts[lay].kind != LAYOUT_SHARED || !c->tmaps[op->attr[0]])
        FAIL(c, "tma_load: the view has no #shared layout or the map no parameter");
    int inner = f->layouts[lay].shared.order[0];
    LLVMValueRef go = thread0_where(c, op->operands[1]);
    LLVMValueRef dst = window_of(c, op->operands[0]), bar = window_of(c, op->operands[2]);
    tma_atoms(c, op, true, go, dst, bar, 3, (int)(vt.shape[inner] / m->box[0]),
              vt.shape[1 - inner] * m->swizzle);
    return true;
}

/* tma_store: every thread writes its elements of the tile into the op's scratch, laid out as
 * the map's swizzle lays out a box (the record's #shared layout, as a tma_load's slot), and
 * makes those writes visible to the async proxy (PTX ISA "membar / fence": fence.proxy.async);
 * after a barrier thread 0 issues one cp.async.bulk.tensor shared -> global per swizzle atom
 * (9.7.9.27; TMA writes nothing outside the map's dims), commits them as one bulk group and
 * waits until the copies have read the scratch (PTX ISA cp.async.bulk.wait_group, .read): the
 * next user of that memory starts with a barrier, after thread 0's wait. The global writes
 * complete on their own; the kernel's end orders them for whatever runs after it. */
static bool lower_tma_store(Cg *c, const IrOp *op)
{
    const IrFunc *f = c->f;
    const TensorMap *m = &f->tmaps[op->attr[0]];
    const IrScratch *s = &op->scratch;
    Type vt = ir_type(f, op->operands[0]);
    Dist *ds = cg_dist_of(c, op->operands[0]);
    if (s->ntiles != 1 || s->tile[0].layout <= 0 || !ds || !c->tmaps[op->attr[0]])
        FAIL(c, "tma_store: no #shared scratch record (shared_alloc), tile layout or map");
    const Layout *sl = &f->layouts[s->tile[0].layout];
    int inner = sl->shared.order[0];
    if (!cg_smem_check(c, op, type_numel(vt) * dtype_bytes(vt.dtype), "tma_store"))
        return false;
    int off = cg_scratch_offset(c, op->smem_offset);
    cg_barrier(c->l); /* earlier readers of the scratch are done */
    cg_smem_store_swizzled(c, cg_value(c, op->operands[0]), ds, vt, sl, off);
    cg_asm_void(c, "fence.proxy.async.shared::cta;");
    cg_barrier(c->l);
    LLVMValueRef go = thread0_where(c, op->operands[1]);
    tma_atoms(c, op, false, go, cg_smem_window_addr(c, k32(c, off)), NULL, 2,
              (int)(vt.shape[inner] / m->box[0]), vt.shape[1 - inner] * m->swizzle);
    cg_asm_n(c, c->l->void_t,
             "{ .reg .pred p; setp.ne.b32 p, $0, 0; @p cp.async.bulk.commit_group; "
             "@p cp.async.bulk.wait_group.read 0; }",
             "r,~{memory}", &go, 1, true);
    return true;
}

static bool lower_mbar_op(Cg *c, const IrOp *op)
{
    char text[200];
    switch (op->code) {
    case OP_MBAR_INIT:
        /* one arrival per phase, or attr[0] (PTX ISA 9.7.13.15.9 mbarrier.init); then the inits
         * are visible to the async proxy the copies complete through (fence.mbarrier_init) and
         * to every thread (bar.sync) */
        snprintf(text, sizeof text, "mbarrier.init.shared::cta.b64 [$1], %lld",
                 (long long)(op->attr[0] > 1 ? op->attr[0] : 1));
        each_barrier(c, op, text);
        cg_asm_void(c, "fence.mbarrier_init.release.cluster;");
        cg_barrier(c->l);
        return true;
    case OP_MBAR_ARRIVE: {
        /* lane 0 of every warp of the partition arrives once (9.7.13.15.13 mbarrier.arrive,
         * release at CTA scope): its warp is past what came before (a wgmma wait is
         * warp-synchronous, wgmma.wait_group.sync.aligned), and one arrival a warp spares the
         * mbarrier a warp's worth of contention */
        LLVMBuilderRef b = c->l->b;
        LLVMValueRef first = LLVMBuildICmp(b, LLVMIntEQ, c->lane, k32(c, 0), "");
        LLVMValueRef args[2] = {LLVMBuildZExt(b, first, c->l->i32, ""),
                                window_of(c, op->operands[0])};
        cg_asm_n(c, c->l->void_t,
                 "{ .reg .pred p; setp.ne.b32 p, $0, 0; @p mbarrier.arrive.shared::cta.b64 _, "
                 "[$1]; }",
                 "r,r,~{memory}", args, 2, true);
        return true;
    }
    case OP_MBAR_INVAL:
        /* every thread is past its last wait before the memory may serve anything else
         * (9.7.13.15.10 mbarrier.inval) */
        cg_barrier(c->l);
        each_barrier(c, op, "mbarrier.inval.shared::cta.b64 [$1]");
        cg_barrier(c->l);
        return true;
    case OP_MBAR_EXPECT: {
        /* arrive, announcing the bytes the tile copies will complete (9.7.13.15.12) */
        snprintf(text, sizeof text,
                 "{ .reg .pred p; setp.ne.b32 p, $0, 0; @p "
                 "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$1], %lld; }",
                 (long long)op->attr[0]);
        LLVMValueRef args[2] = {thread0_where(c, op->operands[1]), window_of(c, op->operands[0])};
        cg_asm_n(c, c->l->void_t, text, "r,r,~{memory}", args, 2, true);
        return true;
    }
    case OP_MBAR_WAIT: {
        /* spin on try_wait.parity until the phase of that parity completes (9.7.13.15.16) */
        LLVMValueRef args[2] = {window_of(c, op->operands[0]), cg_value(c, op->operands[1])->el[0]};
        cg_asm_n(c, c->l->void_t,
                 "{ .reg .pred done; TRIC_MBAR_WAIT_${:uid}: "
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1; "
                 "@!done bra TRIC_MBAR_WAIT_${:uid}; }",
                 "r,r,~{memory}", args, 2, true);
        return true;
    }
    default: FAIL(c, "op %s is not an mbarrier op", op_name(op->code));
    }
}

/* ---- the ops ---------------------------------------------------------------------------------- */

bool cg_lower_async_copy_op(Cg *c, const IrOp *op)
{
    char text[64];
    switch (op->code) {
    case OP_LOCAL_ALLOC: return lower_local_alloc(c, op);
    case OP_SLOT: return lower_slot(c, op);
    case OP_ASYNC_COPY: return lower_async_copy(c, op);
    case OP_ASYNC_COMMIT: /* cp.async.commit_group (PTX ISA 9.7.9.25, cp.async) */
        cg_asm_void(c, "cp.async.commit_group;");
        return true;
    case OP_ASYNC_WAIT: /* cp.async.wait_group N: at most N of this thread's groups pending */
        snprintf(text, sizeof text, "cp.async.wait_group %d;", (int)op->attr[0]);
        cg_asm_void(c, text);
        return true;
    case OP_BARRIER:
        /* generic-proxy writes (ld/st.shared and cp.async, which writes through the generic
         * proxy) become visible to the async proxy that wgmma reads through (PTX ISA, membar/fence:
         * fence.proxy.async; 9.7.15.2), then bar.sync 0 (9.7.13.1) */
        if (op->attr[0] == 1)
            cg_asm_void(c, "fence.proxy.async.shared::cta;");
        cg_barrier(c->l);
        return true;
    case OP_LOCAL_LOAD: return lower_local_load(c, op);
    case OP_WGMMA: return lower_wgmma(c, op);
    case OP_WGMMA_WAIT: return lower_wgmma_wait(c, op);
    case OP_TMA_LOAD: return lower_tma_load(c, op);
    case OP_TMA_STORE: return lower_tma_store(c, op);
    case OP_MBAR_INIT:
    case OP_MBAR_INVAL:
    case OP_MBAR_EXPECT:
    case OP_MBAR_ARRIVE:
    case OP_MBAR_WAIT: return lower_mbar_op(c, op);
    default: FAIL(c, "op %s is not a memory-pipeline op", op_name(op->code));
    }
}

int cg_wgmma_acc_iter(const Cg *c, const IrOp *for_op)
{
    (void)c;
    const IrRegion *body = &for_op->regions[0];
    for (int i = 0; i < body->nops; i++) {
        const IrOp *op = body->ops[i];
        if (op->code != OP_WGMMA || op->noperands < 3)
            continue;
        for (int k = 1; k < body->nargs; k++)
            if (body->args[k] == op->operands[2])
                return k - 1;
    }
    return -1;
}

/* Whether o makes *v: one of its results, or an argument of one of its regions. */
static bool makes(const IrOp *o, const void *v)
{
    ValueId id = *(const ValueId *)v;
    for (int j = 0; j < o->nresults; j++)
        if (o->results[j] == id)
            return true;
    for (int k = 0; k < o->nregions; k++)
        for (int a = 0; a < o->regions[k].nargs; a++)
            if (o->regions[k].args[a] == id)
                return true;
    return false;
}

/* Whether v is made inside loop: an argument of its body, or made by an op in it (any depth). */
static bool made_inside(const IrOp *loop, ValueId v)
{
    const IrRegion *body = &loop->regions[0];
    for (int a = 0; a < body->nargs; a++)
        if (body->args[a] == v)
            return true;
    return ir_region_find_if(body, makes, &v) != NULL;
}

/* The i32 that keeps a register A live: 0, from %smid, which is never 0xffffffff, compared in
 * the entry block, so ptxas cannot know it. Made at its first use: a loop needing none gets the
 * PTX it had. */
static LLVMValueRef never_true(Cg *c)
{
    LLVMBuilderRef b = c->l->b;
    c->l->b = c->pro;
    LLVMValueRef smid = cg_asm_n(c, c->l->i32, "mov.u32 $0, %smid;", "=r", NULL, 0, false);
    c->l->b = b;
    return LLVMBuildZExt(c->pro, LLVMBuildICmp(c->pro, LLVMIntEQ, smid, k32(c, -1), ""), c->l->i32,
                         "");
}

/* Keeps the register A of each wgmma in r (at any depth) that for_op's loop does not make. */
static bool keep_a_in(Cg *c, const IrOp *for_op, const IrRegion *r, LLVMValueRef *never)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            if (!keep_a_in(c, for_op, &op->regions[k], never))
                return false;
        if (op->code != OP_WGMMA || cg_other_partition(c, op))
            continue;
        ValueId av = op->operands[0], r0 = op->results[0];
        Type ta = ir_type(c->f, av), rt = ir_type(c->f, r0);
        if (ta.is_smem || made_inside(for_op, av))
            continue;
        Dist *dr = cg_dist(c, ir_value(c->f, r0)->layout, rt);
        LVal *A = cg_value(c, av);
        if (!dr || c->failed)
            return false;
        int W = c->f->layouts[dr->layout].mma.warps_per_cta[0];
        int Rm = rt.shape[0] / (16 * W), Kt = ta.shape[1] / (32 / dtype_bytes(ta.dtype));
        int n = Rm * Kt * 4;
        LLVMValueRef *words = register_a_words(c, A, ta, Rm, Kt);
        if (!words)
            return false;
        /* $0: the predicate (never true), $1: a shared address, $2...: the words, four a store */
        StrBuf text = {0}, cons = {0};
        strbuf_printf(&text, "{ .reg .pred keep; setp.ne.u32 keep, $0, 0;");
        for (int w = 0; w < n; w += 4) {
            strbuf_printf(&text, " @keep st.shared.v4.b32 [$1+%d], {", 4 * w);
            for (int j = w; j < w + 4 && j < n; j++)
                strbuf_printf(&text, "%s$%d", j > w ? ", " : "", 2 + j);
            strbuf_printf(&text, "};");
        }
        strbuf_printf(&text, " }");
        strbuf_printf(&cons, "r,r");
        LLVMValueRef *args = cg_regs(c, n + 2);
        if (!*never)
            *never = never_true(c);
        args[0] = *never;
        args[1] = k32(c, 0);
        for (int j = 0; j < n; j++) {
            args[2 + j] = words[j];
            strbuf_printf(&cons, ",r");
        }
        strbuf_printf(&cons, ",~{memory}");
        cg_asm_n(c, c->l->void_t, text.data, cons.data, args, n + 2, true);
        strbuf_free(&text);
        strbuf_free(&cons);
    }
    return true;
}

/* ptxas 13.0 loses the liveness of a wgmma's register A (attention's q, loaded before the K loop)
 * across a branch in the loop's body: it gave the registers of such a q to the p of `p @ v`, so
 * the next iteration's `q @ k` read p (found on tutorial 06's causal mask applied under an `if` in
 * one loop, warp-specialized and persistent; at JIT optimization level 0 it is right, and the PTX
 * is sound). A use of those registers at the latch keeps them: stores of the words under a
 * predicate that is never true at run time but that ptxas cannot know (never_true), so nothing
 * runs but its issue. Loops without a branch in their body are left as they were. */
bool cg_keep_wgmma_a_live(Cg *c, const IrOp *for_op)
{
    const IrRegion *body = &for_op->regions[0];
    bool branches = false;
    for (int i = 0; i < body->nops && !branches; i++)
        branches = body->ops[i]->nregions > 0;
    LLVMValueRef never = NULL;
    return !branches || keep_a_in(c, for_op, body, &never);
}
