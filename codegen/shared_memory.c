/* shared_memory.c: an op's scratch in shared memory. The shared-memory pass (passes/shared_alloc.c)
 * gives each op that needs scratch [smem_offset, smem_offset + smem_bytes) of the launch's dynamic
 * shared memory, and its scratch record says where each element goes (a #shared layout or
 * strides); the helpers here address it by those and move whole distributed values in and out
 * with vector accesses (docs/codegen.md "convert_layout, reshape, trans through shared
 * memory"). */
#include "codegen/internal.h"

/* @global_smem: `extern .shared .align 16 .b8 global_smem[]`, the launch's dynamic shared memory;
 * each op that needs scratch uses [smem_offset, smem_offset + smem_bytes) of it. */
LLVMValueRef cg_smem(Cg *c)
{
    CgLlvm *l = c->l;
    if (!l->smem) {
        LLVMTypeRef arr = LLVMArrayType2(l->i8, 0);
        l->smem = LLVMAddGlobalInAddressSpace(l->mod, arr, "global_smem", AS_SHARED);
        LLVMSetLinkage(l->smem, LLVMExternalLinkage);
        LLVMSetAlignment(l->smem, 16); /* 1024 when a wgmma dot swizzles (cg_lower_dot_wgmma) */
    }
    return l->smem;
}

/* Address of byte offset (i32) into shared memory. */
LLVMValueRef cg_smem_addr(Cg *c, LLVMValueRef byte_off)
{
    return LLVMBuildGEP2(c->l->b, c->l->i8, cg_smem(c), &byte_off, 1, "");
}

LLVMValueRef cg_to_mem(Cg *c, DType t, LLVMValueRef v)
{
    return t == DT_I1 ? LLVMBuildZExt(c->l->b, v, c->l->i8, "") : v;
}

LLVMValueRef cg_from_mem(Cg *c, DType t, LLVMValueRef v)
{
    return t == DT_I1 ? LLVMBuildICmp(c->l->b, LLVMIntNE, v, LLVMConstInt(c->l->i8, 0, 0), "") : v;
}

/* Index (in elements) of element e in a scratch copy with per-dim element strides. */
LLVMValueRef cg_strided_index(Cg *c, const Dist *ds, int e, const int64_t *strides)
{
    LLVMValueRef idx = NULL;
    for (int d = 0; d < ds->rank; d++) {
        if (ds->type.shape[d] == 1)
            continue;
        LLVMValueRef t = cg_mul(c->l->b, cg_coord(c, ds, e, d), cg_i32(c->l, strides[d]), "");
        idx = idx ? cg_add(c->l->b, idx, t, "") : t;
    }
    return idx ? idx : cg_i32(c->l, 0);
}

/* A thread's scratch addresses split in two: this thread's part, sum base[d] * stride[d], one
 * pointer computed in the entry block; each element's part, sum off[e][d] * stride[d], a constant.
 * Every access is then `[%r + imm]` and the IR stays small. */
static LLVMValueRef smem_thread_ptr(Cg *c, const Dist *ds, const int64_t *strides, int eb,
                                    int smem_off)
{
    LLVMBuilderRef b = c->pro;
    LLVMValueRef idx = cg_i32(c->l, smem_off);
    for (int d = 0; d < ds->rank; d++) {
        if (ds->type.shape[d] == 1)
            continue;
        idx = cg_add(b, idx, cg_mul(b, ds->base[d], cg_i32(c->l, strides[d] * eb), ""), "");
    }
    return LLVMBuildGEP2(b, c->l->i8, cg_smem(c), &idx, 1, "");
}

static LLVMValueRef smem_elem_ptr(Cg *c, LLVMValueRef thread_ptr, const Dist *ds, int e,
                                  const int64_t *strides, int eb)
{
    int64_t k = 0;
    for (int d = 0; d < ds->rank; d++)
        if (ds->type.shape[d] != 1)
            k += (int64_t)ds->off[e * ds->rank + d] * strides[d];
    if (k == 0)
        return thread_ptr;
    LLVMValueRef off = cg_i32(c->l, k * eb);
    return LLVMBuildGEP2(c->l->b, c->l->i8, thread_ptr, &off, 1, "");
}

void cg_row_major_strides(const Type t, int64_t *strides)
{
    int64_t s = 1;
    for (int d = t.rank - 1; d >= 0; d--) {
        strides[d] = s;
        s *= t.shape[d];
    }
}

/* Elements per shared-memory vector access: a thread's run along its fastest dim when that dim
 * has stride 1, at most 16 bytes, and no more than every other stride is a multiple of (so
 * each vector stays aligned). */
static int smem_vec(const Dist *ds, int eb, const int64_t *strides)
{
    if (!ds || ds->vec_dim < 0 || strides[ds->vec_dim] != 1)
        return 1;
    int w = imin(ds->run[ds->vec_dim], 16 / eb);
    for (int d = 0; d < ds->rank; d++)
        if (d != ds->vec_dim && ds->type.shape[d] > 1)
            while (w > 1 && strides[d] % w)
                w /= 2;
    return w < 1 ? 1 : w;
}

/* Stores every element of src (distribution ds) at byte smem_off + eb * index. */
static bool stmatrix_store(Cg *c, const LVal *src, const Dist *ds, Type tile, const Layout *l,
                           const int64_t *strides, int off);

void cg_smem_store_all(Cg *c, const LVal *src, const Dist *ds, DType dt, int eb, int smem_off,
                       const int64_t *strides)
{
    Type tile = ds->type; /* a Dist serves every dtype of its shape */
    tile.dtype = dt;
    if (eb == 2 && ds->rank == 2 && stmatrix_store(c, src, ds, tile, NULL, strides, smem_off))
        return;
    LLVMTypeRef mt = dt == DT_I64 && eb == 8 ? c->l->i64 : cg_mem_type(c, dt);
    int w = smem_vec(ds, eb, strides);
    LLVMValueRef tp = smem_thread_ptr(c, ds, strides, eb, smem_off);
    for (int e = 0; e < ds->nelems; e++) {
        if (w > 1 && ds->idx[e * ds->rank + ds->vec_dim] % w != 0)
            continue;
        LLVMValueRef p = smem_elem_ptr(c, tp, ds, e, strides, eb), vals[16];
        for (int j = 0; j < w; j++)
            vals[j] = cg_to_mem(c, dt, cg_at(src, e + j));
        cg_store_run(c, p, vals, w, mt, eb);
    }
}

/* Loads every element of distribution ds from byte smem_off + eb * index. */
LLVMValueRef *cg_smem_load_all(Cg *c, const Dist *ds, DType dt, int eb, int smem_off,
                               const int64_t *strides)
{
    LLVMTypeRef mt = cg_mem_type(c, dt);
    int w = smem_vec(ds, eb, strides);
    LLVMValueRef *el = cg_regs(c, ds->nelems);
    LLVMValueRef tp = smem_thread_ptr(c, ds, strides, eb, smem_off);
    for (int e = 0; e < ds->nelems; e++) {
        if (w > 1 && ds->idx[e * ds->rank + ds->vec_dim] % w != 0)
            continue;
        LLVMValueRef p = smem_elem_ptr(c, tp, ds, e, strides, eb), got[16];
        cg_load_run(c, mt, p, w, eb, got);
        for (int j = 0; j < w; j++)
            el[e + j] = cg_from_mem(c, dt, got[j]);
    }
    return el;
}

/* Moves a value between registers and a tile at byte off in shared layout l (an NVMMA-swizzled
 * #shared layout, ir/layout.c): each element at its swizzled offset, a thread's run along
 * the tile's contiguous dim as one vector access of up to 16 bytes (a run starts at a multiple of
 * its length, so it stays inside one 16-byte chunk). The XOR pattern repeats every 8 rows and
 * every atom, so the offset is computed once per class of (row % 8, column within the atom)
 * among a thread's elements and the others add a constant. store: src's elements go in; else the
 * elements come out into out. */
static void smem_swizzled(Cg *c, const Dist *ds, Type tile, const Layout *l, int off,
                          const LVal *src, LLVMValueRef *out)
{
    LLVMBuilderRef b = c->l->b;
    int eb = dtype_bytes(tile.dtype), cd = l->shared.order[0], rd = l->shared.order[1];
    int64_t sw = l->shared.swizzle, atom = sw / eb, rows = tile.shape[rd];
    int w = ds->vec_dim == cd ? imin(ds->run[cd], 16 / eb) : 1;
    LLVMTypeRef mt = cg_mem_type(c, tile.dtype);
    LLVMValueRef *rep_off = cg_regs(c, ds->nelems); /* a class representative's byte offset */
    for (int e = 0; e < ds->nelems; e++) {
        if (w > 1 && ds->idx[e * 2 + cd] % w != 0)
            continue;
        LLVMValueRef byte = NULL;
        for (int q = 0; q < e && !byte; q++) {
            if (!rep_off[q])
                continue;
            int64_t dr = ds->off[e * 2 + rd] - ds->off[q * 2 + rd],
                    dc = ds->off[e * 2 + cd] - ds->off[q * 2 + cd];
            if (dr >= 0 && dc >= 0 && dr % 8 == 0 && dc % atom == 0)
                byte = cg_add(b, rep_off[q], cg_i32(c->l, dr * sw + dc / atom * rows * sw), "");
        }
        if (!byte) {
            byte = cg_swizzled_offset(c, l, tile, cg_coord(c, ds, e, 0), cg_coord(c, ds, e, 1));
            byte = rep_off[e] = cg_add(b, byte, cg_i32(c->l, off), "");
        }
        LLVMValueRef p = cg_smem_addr(c, byte), vals[16];
        if (src) {
            for (int j = 0; j < w; j++)
                vals[j] = cg_at(src, e + j);
            cg_store_run(c, p, vals, w, mt, eb);
        } else {
            cg_load_run(c, mt, p, w, eb, vals);
            for (int j = 0; j < w; j++)
                out[e + j] = vals[j];
        }
    }
}

/* An #mma accumulator of 16-bit elements stored with `stmatrix.sync.aligned.m8n8.x4.shared.b16`
 * (PTX ISA 9.7.9.26, sm_90): a thread's pair (row 8h + groupID, columns 2*tig, +1) of n8 piece rn
 * is exactly register r of matrix (h, rn) in stmatrix's fragment, so one instruction stores the
 * four 8x8 matrices (h = 0, 1) x (rn, rn + 1) of a warp's 16 rows, each lane giving one matrix
 * row's address: lane l row 8 * ((l / 8) % 2) + l % 8 of the warp's 16, columns 8 * (l / 16) of
 * the pair. Each row is 16 bytes, one swizzle chunk. A quarter of the st.shared.b32 it replaces
 * (Triton's epilogue stores the same way). False when the value is not such an accumulator (one
 * warp along N, whole 16 x 16 blocks) or the scratch is not contiguous along the columns in
 * 16-byte chunks. */
static bool stmatrix_store(Cg *c, const LVal *src, const Dist *ds, Type tile, const Layout *l,
                           const int64_t *strides, int off)
{
    /* swizzled (l), or at strides with 16-byte aligned rows (a warp-private copy's padded rows) */
    bool rows_ok = l ? l->shared.order[0] == 1 && l->shared.vec == 8
                     : strides[1] == 1 && (strides[0] * 2) % 16 == 0 && off % 16 == 0;
    const Layout *L =
        ds->layout > 0 && ds->layout < c->f->nlayouts ? &c->f->layouts[ds->layout] : NULL;
    if (!L || c->o->sm < 90 || L->kind != LAYOUT_MMA || L->mma.warps_per_cta[1] != 1 ||
        tile.rank != 2 || dtype_bytes(tile.dtype) != 2 || !rows_ok || ds->rank != 2 ||
        src->n != ds->nelems || ds->count[0] % 2 || ds->count[1] % 4 || tile.shape[1] % 16)
        return false;
    int W = L->mma.warps_per_cta[0], *map = cg_local_index_map(c, ds);
    for (int x = 0; x < ds->count[0] * ds->count[1]; x++)
        if (map[x] < 0)
            return false;
    LLVMBuilderRef b = c->l->b, pb = c->pro;
    MmaBases *mb = cg_mma_bases(c, L);
    /* this lane's matrix row: warp rows wm*16, + 8 for matrices 1 and 3, + lane % 8; its columns
     * start 8 further for matrices 2 and 3 */
    LLVMValueRef lane8 = LLVMBuildLShr(pb, c->lane, cg_i32(c->l, 3), "");
    LLVMValueRef row0 = cg_add(
        pb, cg_mul(pb, mb->wm, cg_i32(c->l, 16), ""),
        cg_add(pb, cg_mul(pb, LLVMBuildAnd(pb, lane8, cg_i32(c->l, 1), ""), cg_i32(c->l, 8), ""),
               LLVMBuildAnd(pb, c->lane, cg_i32(c->l, 7), ""), ""),
        "");
    LLVMValueRef col0 =
        cg_mul(pb, LLVMBuildLShr(pb, lane8, cg_i32(c->l, 1), ""), cg_i32(c->l, 8), "");
    int Rm = ds->count[0] / 2, Rp = ds->count[1] / 4;
    for (int rm = 0; rm < Rm; rm++)
        for (int rp = 0; rp < Rp; rp++) {
            LLVMValueRef row = cg_add(b, row0, cg_i32(c->l, rm * 16 * W), "");
            LLVMValueRef col = cg_add(b, col0, cg_i32(c->l, rp * 16), "");
            LLVMValueRef at =
                l ? cg_swizzled_offset(c, l, tile, row, col)
                  : cg_mul(b, cg_add(b, cg_mul(b, row, cg_i32(c->l, strides[0]), ""), col, ""),
                           cg_i32(c->l, 2), "");
            LLVMValueRef byte = cg_add(b, at, cg_i32(c->l, off), "");
            LLVMValueRef args[5];
            args[0] = cg_smem_window_addr(c, byte);
            for (int q = 0; q < 4; q++) { /* matrix q: h = q % 2, piece 2 * rp + q / 2 */
                int h = q % 2, rn = 2 * rp + q / 2;
                int e0 = map[(rm * 2 + h) * ds->count[1] + rn * 2],
                    e1 = map[(rm * 2 + h) * ds->count[1] + rn * 2 + 1];
                args[1 + q] = cg_pack_pair(c, src->el[e0], src->el[e1]);
            }
            cg_asm_n(c, LLVMVoidTypeInContext(c->l->ctx),
                     "stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], {$1, $2, $3, $4};",
                     "r,r,r,r,r,~{memory}", args, 5, true);
        }
    return true;
}

void cg_smem_store_swizzled(Cg *c, const LVal *src, const Dist *ds, Type tile, const Layout *l,
                            int off)
{
    if (!stmatrix_store(c, src, ds, tile, l, NULL, off))
        smem_swizzled(c, ds, tile, l, off, src, NULL);
}

LLVMValueRef *cg_smem_load_swizzled(Cg *c, const Dist *ds, Type tile, const Layout *l, int off)
{
    LLVMValueRef *el = cg_regs(c, ds->nelems);
    smem_swizzled(c, ds, tile, l, off, NULL, el);
    return el;
}

bool cg_smem_check(Cg *c, const IrOp *op, int64_t need, const char *what)
{
    if (op->smem_bytes < need || op->smem_offset < 0)
        FAIL(c,
             "%s needs %lld bytes of shared memory; the shared-memory pass gave it %d at offset %d",
             what, (long long)need, op->smem_bytes, op->smem_offset);
    return true;
}
