/* distribution.c: which elements of a block value each thread holds (Triton's emitIndices).
 *
 * Every block value becomes, in each thread, the fixed list of elements its layout gives that
 * thread: an element's coordinates are a per-thread base (computed once, in the entry block, from
 * tid.x) plus a per-element constant offset, so index arithmetic folds. Scalars are one LLVM
 * value, the same in every thread. Blocked layouts and their slices, dot operands of a blocked
 * parent, #mma v2 (and v3 with warps [W, 1]) and its dot operands. docs/codegen.md "Values in
 * registers" explains the mapping. */
#include "codegen/internal.h"

#include <string.h>

/* ---- blocked layouts, their slices, dot operands of a blocked parent ------------------------ */

/* The root blocked layout of a (possibly sliced) layout: pshape is the value's shape with a 1
 * inserted for every sliced dim (Triton's SliceEncodingAttr pads the shape the same way), dmap
 * maps value dims to root dims. */
static bool layout_root(Cg *c, int layout, Type t, int *root, int32_t *pshape, int *dmap)
{
    int rank = t.rank;
    for (int i = 0; i < rank; i++) {
        pshape[i] = t.shape[i];
        dmap[i] = i;
    }
    int cur = layout;
    for (int guard = 0; guard < 8; guard++) {
        if (cur <= 0 || cur >= c->f->nlayouts)
            FAIL(c, "value of type %s has no layout", type_str(c->arena, t));
        const Layout *L = &c->f->layouts[cur];
        if (L->kind == LAYOUT_BLOCKED || L->kind == LAYOUT_MMA) {
            if (L->rank != rank)
                FAIL(c, "%s layout of rank %d on a rank-%d value",
                     L->kind == LAYOUT_MMA ? "mma" : "blocked", L->rank, rank);
            *root = cur;
            return true;
        }
        if (L->kind != LAYOUT_SLICE)
            FAIL(c, "layout kind %d is not supported by codegen yet", (int)L->kind);
        int dim = L->slice.dim;
        if (rank + 1 > TRIC_MAX_RANK || dim > rank)
            FAIL(c, "bad slice layout (dim %d of rank %d)", dim, rank + 1);
        for (int i = rank; i > dim; i--)
            pshape[i] = pshape[i - 1];
        pshape[dim] = 1;
        for (int i = 0; i < t.rank; i++)
            if (dmap[i] >= dim)
                dmap[i]++;
        rank++;
        cur = L->slice.parent;
    }
    FAIL(c, "slice layouts nest too deep");
}

/* Base coordinate of this thread along root dim k of blocked layout B for extent P (Triton's
 * emitBaseIndexForBlockedLayout): warp and lane ids are split by order over warpsPerCTA and
 * threadsPerWarp, then wrapped so that a tile smaller than the CTA tile is replicated. */
static BaseCache *base_get(Cg *c, int layout, int k, int extent)
{
    const Layout *B = &c->f->layouts[layout];
    int lstride = 1, wstride = 1;
    for (int j = 0; j < B->rank && B->blocked.order[j] != k; j++) {
        lstride *= B->blocked.threads_per_warp[B->blocked.order[j]];
        wstride *= B->blocked.warps_per_cta[B->blocked.order[j]];
    }
    int spt = imin(B->blocked.size_per_thread[k], extent);
    int tpw = B->blocked.threads_per_warp[k], wpc = B->blocked.warps_per_cta[k];
    int max_threads = imin(tpw, imax(1, extent / spt));
    int max_warps = imin(wpc, imax(1, extent / (spt * tpw)));
    /* Keyed by the formula, not the layout or the extent: two layouts that place a dim alike (a
     * trans, say), or two extents the CTA tile fits into (a tile and its subtile), share the
     * value, which is how relabelling proves registers line up. */
    int key[7] = {lstride, tpw, wstride, wpc, spt, max_threads, max_warps};
    for (int i = 0; i < c->nbases; i++)
        if (!memcmp(c->bases[i].key, key, sizeof key))
            return &c->bases[i];
    LLVMBuilderRef b = c->pro;
    LLVMValueRef lane_k =
        cg_urem(b, cg_udiv(b, c->lane, cg_i32(c->l, lstride), ""), cg_i32(c->l, tpw), "");
    LLVMValueRef warp_k =
        cg_urem(b, cg_udiv(b, c->warp, cg_i32(c->l, wstride), ""), cg_i32(c->l, wpc), "");
    LLVMValueRef lw =
        max_threads < tpw ? cg_urem(b, lane_k, cg_i32(c->l, max_threads), "") : lane_k;
    LLVMValueRef ww = max_warps < wpc ? cg_urem(b, warp_k, cg_i32(c->l, max_warps), "") : warp_k;
    LLVMValueRef base = cg_add(b, cg_mul(b, ww, cg_i32(c->l, spt * tpw), ""),
                               cg_mul(b, lw, cg_i32(c->l, spt), ""), "");
    BaseCache e = {{0}, base, lane_k, warp_k};
    memcpy(e.key, key, sizeof key);
    ARENA_PUSH(c->arena, c->bases, c->nbases, c->bases_cap, e);
    return &c->bases[c->nbases - 1];
}

/* A dot operand with a blocked parent P (docs/layouts.md): A [M,K] is held, in each thread, for
 * every row P gives the thread and every k; B [K,N] for every k and every column. Register order:
 * A k fastest then rows, B columns fastest then k. Per-dim bases are P's (the other dim of P does
 * not matter, so P is taken over [M,1] or [1,N]). */
static Dist *dist_dot_operand(Cg *c, int layout, Type t)
{
    const Layout *L = &c->f->layouts[layout];
    int op_idx = L->dot_operand.op_idx;
    if (t.rank != 2 || c->f->layouts[L->dot_operand.parent].kind != LAYOUT_BLOCKED)
        FAIL(c, "dot operand layout of rank %d with a parent of kind %d", t.rank,
             (int)c->f->layouts[L->dot_operand.parent].kind);
    int md = op_idx == 0 ? 0 : 1; /* the dim shared with C */
    int kd = 1 - md;
    int32_t pshape[2] = {1, 1};
    pshape[md] = t.shape[md];
    Dist *pd = cg_dist(c, L->dot_operand.parent, type_block(type_scalar(DT_F32), 2, pshape));
    if (!pd)
        return NULL;
    int K = t.shape[kd], rows = pd->count[md];
    Dist *ds = arena_alloc(c->arena, sizeof *ds);
    ds->layout = layout;
    ds->type = t;
    ds->rank = 2;
    ds->nelems = rows * K;
    ds->off = arena_alloc(c->arena, sizeof(int32_t) * 2 * (size_t)ds->nelems);
    ds->idx = arena_alloc(c->arena, sizeof(int32_t) * 2 * (size_t)ds->nelems);
    int fast = op_idx == 0 ? kd : md, fast_n = op_idx == 0 ? K : rows;
    for (int e = 0; e < ds->nelems; e++) {
        int f_i = e % fast_n, s_i = e / fast_n;
        int i = op_idx == 0 ? s_i : f_i, k = op_idx == 0 ? f_i : s_i;
        ds->idx[e * 2 + md] = i;
        ds->idx[e * 2 + kd] = k;
        ds->off[e * 2 + md] = pd->dim_off[md][i];
        ds->off[e * 2 + kd] = k;
    }
    ds->count[md] = rows;
    ds->run[md] = pd->run[md];
    ds->dim_off[md] = pd->dim_off[md];
    ds->base[md] = pd->base[md];
    ds->lanes[md] = pd->lanes[md];
    ds->lane_stride[md] = pd->lane_stride[md];
    ds->warps[md] = pd->warps[md];
    ds->warp_id[md] = pd->warp_id[md];
    ds->count[kd] = K;
    ds->run[kd] = K;
    ds->dim_off[kd] = arena_alloc(c->arena, sizeof(int32_t) * (size_t)K);
    for (int k = 0; k < K; k++)
        ds->dim_off[kd][k] = k;
    ds->base[kd] = cg_i32(c->l, 0);
    ds->lanes[kd] = ds->warps[kd] = 1;
    ds->lane_stride[kd] = 1;
    ds->warp_id[kd] = cg_i32(c->l, 0);
    ds->vec_dim = fast;
    ds->owner = NULL; /* never stored to global memory */
    ARENA_PUSH(c->arena, c->dists, c->ndists, c->dists_cap, ds);
    return ds;
}

/* ---- #mma v2 and its dot operands (mma.sync m16n8k16, PTX ISA 9.7.14.5.8) --------------------- */

MmaBases *cg_mma_bases(Cg *c, const Layout *L)
{
    int Wm = L->mma.warps_per_cta[0], Wn = L->mma.warps_per_cta[1];
    for (int i = 0; i < c->nmma_bases; i++)
        if (c->mma_bases[i].wpc[0] == Wm && c->mma_bases[i].wpc[1] == Wn)
            return &c->mma_bases[i];
    LLVMBuilderRef b = c->pro;
    MmaBases m = {{Wm, Wn}, 0, 0, 0, 0, 0, 0, 0, 0};
    /* Warps in order [1, 0]: wn = warp % Wn, wm = (warp / Wn) % Wm (Triton's MMAv2 warp order). */
    m.wn = cg_urem(b, c->warp, cg_i32(c->l, Wn), "");
    m.wm = cg_urem(b, cg_udiv(b, c->warp, cg_i32(c->l, Wn), ""), cg_i32(c->l, Wm), "");
    m.group = LLVMBuildLShr(b, c->lane, cg_i32(c->l, 2), "");
    m.tig = LLVMBuildAnd(b, c->lane, cg_i32(c->l, 3), "");
    m.k = LLVMBuildShl(b, m.tig, cg_i32(c->l, 1), "");
    m.row = cg_add(b, cg_mul(b, m.wm, cg_i32(c->l, 16), ""), m.group, "");
    m.col = cg_add(b, cg_mul(b, m.wn, cg_i32(c->l, 8), ""), m.k, "");
    m.b_col = cg_add(b, cg_mul(b, m.wn, cg_i32(c->l, 8), ""), m.group, "");
    ARENA_PUSH(c->arena, c->mma_bases, c->nmma_bases, c->mma_bases_cap, m);
    return &c->mma_bases[c->nmma_bases - 1];
}

/* One dim of a fragment: count local indices; local index x = rep * inner + in sits at offset
 * (x / inner) * rep_stride + in_off[x % inner]. */
typedef struct FragDim {
    int count, inner, rep_stride;
    int in_off[4];
    LLVMValueRef base, warp_id, lane_id;
    int lanes, lane_stride, warps;
} FragDim;

static int frag_off(const FragDim *fd, int x)
{
    return (x / fd->inner) * fd->rep_stride + fd->in_off[x % fd->inner];
}

/* Fills a Dist of value rank `rank` from per-root-dim fragments fd[0..1]; dmap maps value dims to
 * root dims. Register order: in[fast] fastest, then in[slow], then rep[fast], then rep[slow]
 * (fast = root dim `fast`). For A and B operands a third level is folded into `inner`. */
static Dist *frag_dist(Cg *c, int layout, Type t, const FragDim *fd, const int *dmap, int fast,
                       int vec_root_dim, int vec_run)
{
    Dist *ds = arena_alloc(c->arena, sizeof *ds);
    ds->layout = layout;
    ds->type = t;
    ds->rank = t.rank;
    int slow = 1 - fast;
    int n = fd[0].count * fd[1].count;
    ds->nelems = n;
    ds->off = arena_alloc(c->arena, sizeof(int32_t) * (size_t)n * (size_t)imax(1, t.rank));
    ds->idx = arena_alloc(c->arena, sizeof(int32_t) * (size_t)n * (size_t)imax(1, t.rank));
    int in_f = fd[fast].inner, in_s = fd[slow].inner, rep_f = fd[fast].count / in_f;
    for (int e = 0; e < n; e++) {
        int rem = e, x[2];
        x[fast] = rem % in_f;
        rem /= in_f;
        x[slow] = rem % in_s;
        rem /= in_s;
        x[fast] += (rem % rep_f) * in_f;
        rem /= rep_f;
        x[slow] += rem * in_s;
        for (int i = 0; i < t.rank; i++) {
            int k = dmap[i];
            ds->idx[e * t.rank + i] = x[k];
            ds->off[e * t.rank + i] = frag_off(&fd[k], x[k]);
        }
    }
    ds->vec_dim = -1;
    for (int i = 0; i < t.rank; i++) {
        int k = dmap[i];
        const FragDim *f = &fd[k];
        ds->count[i] = f->count;
        ds->run[i] = k == vec_root_dim ? vec_run : 1;
        if (k == vec_root_dim && vec_run > 1)
            ds->vec_dim = i;
        ds->base[i] = f->base;
        ds->warp_id[i] = f->warp_id;
        ds->lanes[i] = f->lanes;
        ds->lane_stride[i] = f->lane_stride;
        ds->warps[i] = f->warps;
        ds->dim_off[i] = arena_alloc(c->arena, sizeof(int32_t) * (size_t)f->count);
        for (int x = 0; x < f->count; x++)
            ds->dim_off[i][x] = frag_off(f, x);
    }
    /* Threads that hold copies (a dim of extent 1: every thread holds element 0 there): only
     * lane and warp 0 along that dim own it. */
    LLVMValueRef owner = NULL;
    for (int k = 0; k < 2; k++) {
        if (fd[k].lanes > 1 || !fd[k].lane_id)
            continue;
        LLVMValueRef ok = LLVMBuildICmp(c->pro, LLVMIntEQ, fd[k].lane_id, cg_i32(c->l, 0), "");
        ok = LLVMBuildAnd(c->pro, ok,
                          LLVMBuildICmp(c->pro, LLVMIntEQ, fd[k].warp_id, cg_i32(c->l, 0), ""), "");
        owner = owner ? LLVMBuildAnd(c->pro, owner, ok, "") : ok;
    }
    ds->owner = owner;
    ARENA_PUSH(c->arena, c->dists, c->ndists, c->dists_cap, ds);
    return ds;
}

/* #mma v2 (or a slice of it) over root extents P (docs/layouts.md, "MMA"): rows
 * `rm*16*Wm + wm*16 + groupID + 8h`, cols `rn*8*Wn + wn*8 + tig*2 + j`; register order j, h, rn,
 * rm. A dim of extent 1 (a slice, or a [1, N] value before a broadcast) holds element 0 in every
 * thread. Other extents must be multiples of the warps' tile (the layout pass only picks mma
 * then). */
static Dist *dist_mma(Cg *c, int layout, Type t, int root, const int32_t *P, const int *dmap)
{
    const Layout *L = &c->f->layouts[root];
    /* v3 (wgmma) with warps [W, 1] has v2's fragment pattern (docs/layouts.md, "MMA v3"). */
    if (L->mma.version != 2 && (L->mma.version != 3 || L->mma.warps_per_cta[1] != 1))
        FAIL(c, "mma layout version %d with warps [%d, %d] is not lowered", L->mma.version,
             L->mma.warps_per_cta[0], L->mma.warps_per_cta[1]);
    MmaBases *mb = cg_mma_bases(c, L);
    int W[2] = {L->mma.warps_per_cta[0], L->mma.warps_per_cta[1]};
    int tile[2] = {16 * W[0], 8 * W[1]};
    FragDim fd[2];
    memset(fd, 0, sizeof fd);
    for (int k = 0; k < 2; k++) {
        FragDim *f = &fd[k];
        f->warp_id = k == 0 ? mb->wm : mb->wn;
        f->lane_id = k == 0 ? mb->group : mb->tig;
        if (P[k] == 1) {
            f->count = f->inner = 1;
            f->rep_stride = 0;
            f->base = cg_i32(c->l, 0);
            f->lanes = f->warps = 1;
            f->lane_stride = 1;
            continue;
        }
        if (P[k] % tile[k])
            FAIL(c,
                 "mma layout with warps [%d, %d] on extent %d along dim %d (not a multiple of %d)",
                 W[0], W[1], P[k], k, tile[k]);
        f->inner = 2;
        f->count = 2 * (P[k] / tile[k]);
        f->rep_stride = tile[k];
        f->in_off[0] = 0;
        f->in_off[1] = k == 0 ? 8 : 1;
        f->base = k == 0 ? mb->row : mb->col;
        f->lanes = k == 0 ? 8 : 4;
        f->lane_stride = k == 0 ? 4 : 1;
        f->warps = W[k];
    }
    return frag_dist(c, layout, t, fd, dmap, 1, 1, P[1] == 1 ? 1 : 2);
}

/* A dot operand of an #mma v2 parent (docs/layouts.md, "Dot operand"): the m16n8k16 A and B
 * fragments (PTX ISA 9.7.14.5.8). A [M, K]: rows as C's (offsets rm*16*Wm + 8h), k = rk*16 +
 * 8*kh + tig*2 + j; register order j, h, kh, rk, rm, so each (rm, rk) is a0..a7 in PTX order and
 * (a0,a1), (a2,a3), ... pack into the four .b32 operands. B [K, N]: k as A's, n = rn*8*Wn + wn*8 +
 * groupID; order j, kh, rn, rk: each (rk, rn) is b0..b3. */
static Dist *dist_dot_operand_mma(Cg *c, int layout, Type t)
{
    const Layout *L = &c->f->layouts[layout];
    const Layout *P = &c->f->layouts[L->dot_operand.parent];
    int op_idx = L->dot_operand.op_idx;
    if (P->mma.version != 2 && (P->mma.version != 3 || P->mma.warps_per_cta[1] != 1))
        FAIL(c, "dot operand of mma version %d is not lowered", P->mma.version);
    if (t.rank != 2 || L->dot_operand.k_width != 2)
        FAIL(c, "mma dot operand needs rank 2 and k_width 2 (16-bit elements)");
    MmaBases *mb = cg_mma_bases(c, P);
    int W[2] = {P->mma.warps_per_cta[0], P->mma.warps_per_cta[1]};
    int md = op_idx == 0 ? 0 : 1, kd = 1 - md;
    int K = t.shape[kd], MN = t.shape[md];
    int tile = op_idx == 0 ? 16 * W[0] : 8 * W[1];
    if (K % 16 || MN % tile)
        FAIL(c, "mma dot operand %d of shape [%d, %d] does not hold whole tiles", op_idx,
             t.shape[0], t.shape[1]);
    FragDim fd[2];
    memset(fd, 0, sizeof fd);
    FragDim *fk = &fd[kd], *fm = &fd[md];
    /* k: in = kh*2 + j (offsets 0, 1, 8, 9), rep = rk (stride 16). */
    fk->inner = 4;
    fk->count = 4 * (K / 16);
    fk->rep_stride = 16;
    fk->in_off[0] = 0;
    fk->in_off[1] = 1;
    fk->in_off[2] = 8;
    fk->in_off[3] = 9;
    fk->base = mb->k;
    fk->warp_id = cg_i32(c->l, 0);
    fk->lanes = 4;
    fk->lane_stride = 1;
    fk->warps = 1;
    fm->warp_id = op_idx == 0 ? mb->wm : mb->wn;
    fm->warps = W[md];
    fm->rep_stride = tile;
    fm->lanes = 8;
    fm->lane_stride = 4;
    if (op_idx == 0) {
        fm->inner = 2;
        fm->count = 2 * (MN / tile);
        fm->in_off[1] = 8;
        fm->base = mb->row;
    } else {
        fm->inner = 1;
        fm->count = MN / tile;
        fm->base = mb->b_col;
    }
    Dist *ds;
    if (op_idx == 0) {
        /* j, h, kh, rk, rm: k's inner level is split around h, so build the order by hand. */
        int dmap[2] = {0, 1};
        ds = frag_dist(c, layout, t, fd, dmap, 1, 1, 2);
        if (!ds)
            return NULL;
        int Kt = K / 16;
        for (int e = 0; e < ds->nelems; e++) {
            int j = e % 2, h = (e / 2) % 2, kh = (e / 4) % 2, rk = (e / 8) % Kt, rm = e / (8 * Kt);
            int xm = rm * 2 + h, xk = rk * 4 + kh * 2 + j;
            ds->idx[e * 2] = xm;
            ds->idx[e * 2 + 1] = xk;
            ds->off[e * 2] = frag_off(fm, xm);
            ds->off[e * 2 + 1] = frag_off(fk, xk);
        }
    } else {
        /* j, kh (k's inner), rn, rk: frag_dist's order with k fast. */
        int dmap[2] = {0, 1};
        ds = frag_dist(c, layout, t, fd, dmap, 0, 0, 2);
    }
    if (ds)
        ds->owner = NULL; /* copies (warps along the other dim) are never stored */
    return ds;
}

/* ---- any layout: the distribution, built once per (layout, shape) ------------------------- */

/* Dot operands and #mma go to the functions above; a blocked layout or a slice of one is built
 * here (docs/codegen.md "blocked"). */
Dist *cg_dist(Cg *c, int layout, Type t)
{
    if (t.rank == 0)
        return NULL;
    for (int i = 0; i < c->ndists; i++)
        if (c->dists[i]->layout == layout && type_same_shape(c->dists[i]->type, t))
            return c->dists[i];
    if (layout > 0 && layout < c->f->nlayouts && c->f->layouts[layout].kind == LAYOUT_DOT_OPERAND) {
        int parent = c->f->layouts[layout].dot_operand.parent;
        if (parent > 0 && parent < c->f->nlayouts && c->f->layouts[parent].kind == LAYOUT_MMA)
            return dist_dot_operand_mma(c, layout, t);
        return dist_dot_operand(c, layout, t);
    }
    int root, dmap[TRIC_MAX_RANK];
    int32_t P[TRIC_MAX_RANK + TRIC_MAX_RANK];
    if (!layout_root(c, layout, t, &root, P, dmap))
        return NULL;
    if (c->f->layouts[root].kind == LAYOUT_MMA)
        return dist_mma(c, layout, t, root, P, dmap);
    const Layout *B = &c->f->layouts[root];
    int R = B->rank;
    Dist *ds = arena_alloc(c->arena, sizeof *ds);
    ds->layout = layout;
    ds->type = t;
    ds->rank = t.rank;
    int cnt[TRIC_MAX_RANK], spt[TRIC_MAX_RANK], tile[TRIC_MAX_RANK], lanes[TRIC_MAX_RANK],
        warps[TRIC_MAX_RANK], lstr[TRIC_MAX_RANK];
    int tpw_total = 1, wpc_total = 1;
    for (int k = 0; k < R; k++) {
        spt[k] = imin(B->blocked.size_per_thread[k], P[k]);
        int tpw = B->blocked.threads_per_warp[k], wpc = B->blocked.warps_per_cta[k];
        tile[k] = spt[k] * tpw * wpc;
        cnt[k] = imax(1, P[k] / tile[k]) * spt[k];
        lanes[k] = imin(tpw, imax(1, P[k] / spt[k]));
        warps[k] = imin(wpc, imax(1, P[k] / (spt[k] * tpw)));
        tpw_total *= tpw;
        wpc_total *= wpc;
    }
    if (tpw_total != 32)
        FAIL(c, "blocked layout with %d threads per warp", tpw_total);
    for (int k = 0, s = 1; k < R; k++) {
        int d = B->blocked.order[k];
        lstr[d] = s;
        s *= B->blocked.threads_per_warp[d];
    }
    int n = 1;
    for (int k = 0; k < R; k++)
        n *= cnt[k];
    ds->nelems = n;
    ds->off = arena_alloc(c->arena, sizeof(int32_t) * (size_t)n * (size_t)imax(1, t.rank));
    ds->idx = arena_alloc(c->arena, sizeof(int32_t) * (size_t)n * (size_t)imax(1, t.rank));
    /* Register order (docs/layouts.md): i[order[0]] fastest, ..., then rep[order[0]], ... */
    for (int e = 0; e < n; e++) {
        int rem = e, ridx[TRIC_MAX_RANK];
        for (int j = 0; j < R; j++) {
            int k = B->blocked.order[j];
            ridx[k] = rem % spt[k];
            rem /= spt[k];
        }
        for (int j = 0; j < R; j++) {
            int k = B->blocked.order[j];
            ridx[k] += (rem % (cnt[k] / spt[k])) * spt[k];
            rem /= cnt[k] / spt[k];
        }
        for (int i = 0; i < t.rank; i++) {
            int k = dmap[i];
            ds->idx[e * t.rank + i] = ridx[k];
            ds->off[e * t.rank + i] = (ridx[k] / spt[k]) * tile[k] + ridx[k] % spt[k];
        }
    }
    ds->vec_dim = -1;
    for (int j = 0; j < R && ds->vec_dim < 0; j++)
        for (int i = 0; i < t.rank; i++)
            if (dmap[i] == B->blocked.order[j])
                ds->vec_dim = i;
    LLVMValueRef owner = NULL;
    LLVMBuilderRef b = c->pro;
    for (int k = 0; k < R; k++) {
        BaseCache *bc = base_get(c, root, k, P[k]);
        int tpw = B->blocked.threads_per_warp[k], wpc = B->blocked.warps_per_cta[k];
        /* Threads whose ids wrapped hold copies: only the first copy owns its elements. */
        if (lanes[k] < tpw) {
            LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntULT, bc->lane_id, cg_i32(c->l, lanes[k]), "");
            owner = owner ? LLVMBuildAnd(b, owner, ok, "") : ok;
        }
        if (warps[k] < wpc) {
            LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntULT, bc->warp_id, cg_i32(c->l, warps[k]), "");
            owner = owner ? LLVMBuildAnd(b, owner, ok, "") : ok;
        }
        for (int i = 0; i < t.rank; i++) {
            if (dmap[i] != k)
                continue;
            ds->count[i] = cnt[k];
            ds->run[i] = spt[k];
            ds->lanes[i] = lanes[k];
            ds->lane_stride[i] = lstr[k];
            ds->warps[i] = warps[k];
            ds->warp_id[i] = bc->warp_id;
            ds->base[i] = bc->base;
            ds->dim_off[i] = arena_alloc(c->arena, sizeof(int32_t) * (size_t)cnt[k]);
            for (int x = 0; x < cnt[k]; x++)
                ds->dim_off[i][x] = (x / spt[k]) * tile[k] + x % spt[k];
        }
    }
    if (wpc_total < c->f->num_warps) {
        LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntULT, c->warp, cg_i32(c->l, wpc_total), "");
        owner = owner ? LLVMBuildAnd(b, owner, ok, "") : ok;
    }
    ds->owner = owner;
    ARENA_PUSH(c->arena, c->dists, c->ndists, c->dists_cap, ds);
    return ds;
}

/* ---- elements ------------------------------------------------------------------------------ */

/* Coordinate of element e along dim d. */
LLVMValueRef cg_coord(Cg *c, const Dist *ds, int e, int d)
{
    int32_t off = ds->off[e * ds->rank + d];
    return off ? cg_add(c->l->b, ds->base[d], cg_i32(c->l, off), "") : ds->base[d];
}

/* Register index, in distribution ds, of the element at local indices (x0, x1); -1 if none. */
int *cg_local_index_map(Cg *c, const Dist *ds)
{
    int *map = arena_alloc(c->arena, sizeof(int) * (size_t)ds->count[0] * (size_t)ds->count[1]);
    for (int i = 0; i < ds->count[0] * ds->count[1]; i++)
        map[i] = -1;
    for (int e = 0; e < ds->nelems; e++)
        map[ds->idx[e * 2] * ds->count[1] + ds->idx[e * 2 + 1]] = e;
    return map;
}
