/* lower.c: layout-annotated tile IR -> LLVM IR.
 *
 * Every block value becomes, in each thread, the fixed list of elements its layout gives that
 * thread (Triton's emitIndices): an element's coordinates are a per-thread base (computed once,
 * in the entry block, from tid.x) plus a per-element constant offset, so index arithmetic folds.
 * Scalars are one LLVM value, the same in every thread. docs/codegen.md explains the mapping. */
#include "codegen/internal.h"
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- distributions: which elements a thread holds ------------------------------------------- */

static LLVMValueRef pro_build_sreg(Cg *c, const char *reg)
{
    LLVMBuilderRef saved = c->l->b;
    c->l->b = c->pro;
    LLVMValueRef v = cg_sreg(c->l, reg);
    c->l->b = saved;
    return v;
}

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

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

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
    /* Keyed by the formula, not the layout: two layouts that place a dim alike (a trans, say)
     * share the value, which is how relabelling proves registers line up. */
    int key[6] = {lstride, tpw, wstride, wpc, spt, extent};
    for (int i = 0; i < c->nbases; i++)
        if (!memcmp(c->bases[i].key, key, sizeof key))
            return &c->bases[i];
    int max_threads = imax(1, extent / spt);
    int max_warps = imax(1, extent / (spt * tpw));
    LLVMBuilderRef b = c->pro;
    LLVMValueRef lane_k = LLVMBuildURem(b, LLVMBuildUDiv(b, c->lane, cg_i32(c->l, lstride), ""),
                                        cg_i32(c->l, tpw), "");
    LLVMValueRef warp_k = LLVMBuildURem(b, LLVMBuildUDiv(b, c->warp, cg_i32(c->l, wstride), ""),
                                        cg_i32(c->l, wpc), "");
    LLVMValueRef lw = max_threads < tpw ? LLVMBuildURem(b, lane_k, cg_i32(c->l, max_threads), "") : lane_k;
    LLVMValueRef ww = max_warps < wpc ? LLVMBuildURem(b, warp_k, cg_i32(c->l, max_warps), "") : warp_k;
    LLVMValueRef base = LLVMBuildAdd(b, LLVMBuildMul(b, ww, cg_i32(c->l, spt * tpw), ""),
                                     LLVMBuildMul(b, lw, cg_i32(c->l, spt), ""), "");
    BaseCache e = {{0}, base, lane_k, warp_k};
    memcpy(e.key, key, sizeof key);
    ARENA_PUSH(c->arena, c->bases, c->nbases, c->bases_cap, e);
    return &c->bases[c->nbases - 1];
}

static Dist *dist_get(Cg *c, int layout, Type t);

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
    Dist *pd = dist_get(c, L->dot_operand.parent, type_block(type_scalar(DT_F32), 2, pshape));
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

static MmaBases *mma_bases_get(Cg *c, const Layout *L)
{
    int Wm = L->mma.warps_per_cta[0], Wn = L->mma.warps_per_cta[1];
    for (int i = 0; i < c->nmma_bases; i++)
        if (c->mma_bases[i].wpc[0] == Wm && c->mma_bases[i].wpc[1] == Wn)
            return &c->mma_bases[i];
    LLVMBuilderRef b = c->pro;
    MmaBases m = {{Wm, Wn}, 0, 0, 0, 0, 0, 0, 0, 0};
    /* Warps in order [1, 0]: wn = warp % Wn, wm = (warp / Wn) % Wm (Triton's MMAv2 warp order). */
    m.wn = LLVMBuildURem(b, c->warp, cg_i32(c->l, Wn), "");
    m.wm = LLVMBuildURem(b, LLVMBuildUDiv(b, c->warp, cg_i32(c->l, Wn), ""), cg_i32(c->l, Wm), "");
    m.group = LLVMBuildLShr(b, c->lane, cg_i32(c->l, 2), "");
    m.tig = LLVMBuildAnd(b, c->lane, cg_i32(c->l, 3), "");
    m.k = LLVMBuildShl(b, m.tig, cg_i32(c->l, 1), "");
    m.row = LLVMBuildAdd(b, LLVMBuildMul(b, m.wm, cg_i32(c->l, 16), ""), m.group, "");
    m.col = LLVMBuildAdd(b, LLVMBuildMul(b, m.wn, cg_i32(c->l, 8), ""), m.k, "");
    m.b_col = LLVMBuildAdd(b, LLVMBuildMul(b, m.wn, cg_i32(c->l, 8), ""), m.group, "");
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
        ok = LLVMBuildAnd(c->pro, ok, LLVMBuildICmp(c->pro, LLVMIntEQ, fd[k].warp_id, cg_i32(c->l, 0), ""), "");
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
    MmaBases *mb = mma_bases_get(c, L);
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
            FAIL(c, "mma layout with warps [%d, %d] on extent %d along dim %d (not a multiple of %d)",
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
    MmaBases *mb = mma_bases_get(c, P);
    int W[2] = {P->mma.warps_per_cta[0], P->mma.warps_per_cta[1]};
    int md = op_idx == 0 ? 0 : 1, kd = 1 - md;
    int K = t.shape[kd], MN = t.shape[md];
    int tile = op_idx == 0 ? 16 * W[0] : 8 * W[1];
    if (K % 16 || MN % tile)
        FAIL(c, "mma dot operand %d of shape [%d, %d] does not hold whole tiles", op_idx, t.shape[0], t.shape[1]);
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

static Dist *dist_get(Cg *c, int layout, Type t)
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

/* ---- types and values ---------------------------------------------------------------------- */

static LLVMTypeRef elem_ty(Cg *c, DType t)
{
    CgLlvm *l = c->l;
    switch (t) {
    case DT_I1: return l->i1;
    case DT_I8: case DT_U8: return l->i8;
    case DT_I16: case DT_U16: return l->i16;
    case DT_I32: case DT_U32: return l->i32;
    case DT_I64: case DT_U64: return l->i64;
    case DT_F16: return l->f16;
    case DT_BF16: return l->bf16;
    case DT_F32: return l->f32;
    case DT_F64: return l->f64;
    default: return l->i32;
    }
}

/* In memory int1 is a byte. */
static LLVMTypeRef mem_ty(Cg *c, DType t) { return t == DT_I1 ? c->l->i8 : elem_ty(c, t); }

static LLVMTypeRef val_ty(Cg *c, Type t) { return t.is_ptr ? c->l->gptr : elem_ty(c, t.dtype); }

static int mem_bytes(Type t) { return t.is_ptr ? 8 : dtype_bytes(t.dtype); }

static LVal *get(Cg *c, ValueId v)
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

static Dist *dist_of(Cg *c, ValueId v)
{
    const IrValue *iv = ir_value(c->f, v);
    return dist_get(c, iv->layout, iv->type);
}

static int nelems_of(Cg *c, ValueId v, Dist **out)
{
    Dist *ds = dist_of(c, v);
    if (out)
        *out = ds;
    return ds ? ds->nelems : 1;
}

static LLVMValueRef *new_el(Cg *c, int n)
{
    return arena_alloc(c->arena, sizeof(LLVMValueRef) * (size_t)imax(n, 1));
}

static void set(Cg *c, ValueId v, LLVMValueRef *el, int n, int layout)
{
    c->vals[v].el = el;
    c->vals[v].n = n;
    c->vals[v].layout = layout;
}

/* Element i of an operand; a scalar operand is uniform and serves every element. */
static LLVMValueRef at(const LVal *v, int i) { return v->n == 1 ? v->el[0] : v->el[i]; }

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
static LLVMValueRef widen(Cg *c, LLVMValueRef v)
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
    return t == DT_F32 ? r : LLVMBuildFPTrunc(b, r, elem_ty(c, t), "");
}

static LLVMValueRef arith2(Cg *c, OpCode op, DType t, LLVMValueRef x, LLVMValueRef y)
{
    LLVMBuilderRef b = c->l->b;
    char name[64];
    if (dtype_is_float(t)) {
        LLVMValueRef a = widen(c, x), e = widen(c, y), r;
        LLVMTypeRef ty = LLVMTypeOf(a);
        switch (op) {
        case OP_ADD: r = LLVMBuildFAdd(b, a, e, ""); break;
        case OP_SUB: r = LLVMBuildFSub(b, a, e, ""); break;
        case OP_MUL: r = LLVMBuildFMul(b, a, e, ""); break;
        case OP_DIV: r = LLVMBuildFDiv(b, a, e, ""); break;
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
        case OP_MIN: case OP_MAX:
            /* minnum/maxnum (PTX min/max.f32): a NaN operand yields the other one, as C fmin. */
            snprintf(name, sizeof name, "llvm.%s.%s", op == OP_MIN ? "minnum" : "maxnum", fsuffix(c, ty));
            r = call2(c, name, ty, a, e);
            break;
        default: return NULL;
        }
        return narrow(c, r, t);
    }
    bool sgn = dtype_is_signed(t);
    switch (op) {
    case OP_ADD: return LLVMBuildAdd(b, x, y, "");
    case OP_SUB: return LLVMBuildSub(b, x, y, "");
    case OP_MUL: return LLVMBuildMul(b, x, y, "");
    case OP_DIV: return sgn ? LLVMBuildSDiv(b, x, y, "") : LLVMBuildUDiv(b, x, y, "");
    case OP_REM: return sgn ? LLVMBuildSRem(b, x, y, "") : LLVMBuildURem(b, x, y, "");
    case OP_MIN: case OP_MAX: {
        LLVMIntPredicate p = op == OP_MIN ? (sgn ? LLVMIntSLT : LLVMIntULT) : (sgn ? LLVMIntSGT : LLVMIntUGT);
        return LLVMBuildSelect(b, LLVMBuildICmp(b, p, x, y, ""), x, y, "");
    }
    case OP_AND: return LLVMBuildAnd(b, x, y, "");
    case OP_OR: return LLVMBuildOr(b, x, y, "");
    case OP_XOR: return LLVMBuildXor(b, x, y, "");
    case OP_SHL: case OP_SHR: {
        /* Amounts of the width or more (unsigned) clamp as PTX's shl/shr do (PTX ISA §9.7.8.8),
         * which is the interpreter's rule; LLVM's shifts would be poison there. */
        LLVMTypeRef ty = LLVMTypeOf(x);
        LLVMValueRef width = LLVMConstInt(ty, LLVMGetIntTypeWidth(ty), 0);
        LLVMValueRef big = LLVMBuildICmp(b, LLVMIntUGE, y, width, "");
        if (op == OP_SHR && sgn) {
            LLVMValueRef amt = LLVMBuildSelect(b, big, LLVMConstInt(ty, LLVMGetIntTypeWidth(ty) - 1, 0), y, "");
            return LLVMBuildAShr(b, x, amt, "");
        }
        LLVMValueRef safe = LLVMBuildSelect(b, big, LLVMConstInt(ty, 0, 0), y, "");
        LLVMValueRef v = op == OP_SHL ? LLVMBuildShl(b, x, safe, "") : LLVMBuildLShr(b, x, safe, "");
        return LLVMBuildSelect(b, big, LLVMConstInt(ty, 0, 0), v, "");
    }
    case OP_UMULHI: {
        LLVMTypeRef ty = LLVMTypeOf(x);
        unsigned bits = LLVMGetIntTypeWidth(ty);
        LLVMTypeRef wide = LLVMIntTypeInContext(c->l->ctx, bits * 2);
        LLVMValueRef p = LLVMBuildMul(b, LLVMBuildZExt(b, x, wide, ""), LLVMBuildZExt(b, y, wide, ""), "");
        p = LLVMBuildLShr(b, p, LLVMConstInt(wide, bits, 0), "");
        return LLVMBuildTrunc(b, p, ty, "");
    }
    default: return NULL;
    }
}

static LLVMValueRef compare(Cg *c, OpCode op, Type t, LLVMValueRef x, LLVMValueRef y)
{
    LLVMBuilderRef b = c->l->b;
    if (!t.is_ptr && dtype_is_float(t.dtype)) {
        LLVMRealPredicate p = op == OP_CMP_EQ ? LLVMRealOEQ : op == OP_CMP_NE ? LLVMRealUNE
                            : op == OP_CMP_LT ? LLVMRealOLT : op == OP_CMP_LE ? LLVMRealOLE
                            : op == OP_CMP_GT ? LLVMRealOGT : LLVMRealOGE;
        return LLVMBuildFCmp(b, p, widen(c, x), widen(c, y), "");
    }
    bool sgn = !t.is_ptr && dtype_is_signed(t.dtype);
    LLVMIntPredicate p = op == OP_CMP_EQ ? LLVMIntEQ : op == OP_CMP_NE ? LLVMIntNE
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
            LLVMValueRef w = widen(c, a);
            snprintf(name, sizeof name, "llvm.fabs.%s", fsuffix(c, LLVMTypeOf(w)));
            return narrow(c, call1(c, name, LLVMTypeOf(w), w), t);
        }
        if (!dtype_is_signed(t))
            return a;
        snprintf(name, sizeof name, "llvm.abs.i%u", LLVMGetIntTypeWidth(ty));
        return call2(c, name, ty, a, LLVMConstInt(c->l->i1, 0, 0));
    case OP_SQRT: case OP_FLOOR: case OP_CEIL: {
        /* Exact in PTX (sqrt.rn, cvt.rmi, cvt.rpi): LLVM intrinsics, no libdevice. */
        LLVMValueRef w = widen(c, a);
        const char *base = op == OP_SQRT ? "sqrt" : op == OP_FLOOR ? "floor" : "ceil";
        snprintf(name, sizeof name, "llvm.%s.%s", base, fsuffix(c, LLVMTypeOf(w)));
        return narrow(c, call1(c, name, LLVMTypeOf(w), w), t);
    }
    case OP_EXP: return libdevice1(c, "exp", "exp", t, a);
    case OP_EXP2: return libdevice1(c, "exp2", "exp2", t, a);
    case OP_LOG: return libdevice1(c, "log", "log", t, a);
    case OP_LOG2: return libdevice1(c, "log2", "log2", t, a);
    case OP_RSQRT: return libdevice1(c, "rsqrt", "rsqrt", t, a);
    case OP_SIN: return libdevice1(c, "sin", "sin", t, a);
    case OP_COS: return libdevice1(c, "cos", "cos", t, a);
    default: return NULL;
    }
}

/* OP_CAST (ir.h): float->float round to nearest even, float->int truncate, int->int wrap/extend by
 * the signedness of the source; anything -> int1 is "!= 0". */
static LLVMValueRef cast(Cg *c, DType from, DType to, LLVMValueRef a)
{
    LLVMBuilderRef b = c->l->b;
    LLVMTypeRef ty = elem_ty(c, to);
    if (from == to)
        return a;
    if (to == DT_I1) {
        if (dtype_is_float(from))
            return LLVMBuildFCmp(b, LLVMRealUNE, widen(c, a), LLVMConstReal(LLVMTypeOf(widen(c, a)), 0), "");
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
        LLVMValueRef w = widen(c, a);
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
        return dtype_is_signed(from) ? LLVMBuildSIToFP(b, a, ty, "") : LLVMBuildUIToFP(b, a, ty, "");
    }
    int fb = dtype_bits(from), tb = dtype_bits(to);
    if (tb < fb)
        return LLVMBuildTrunc(b, a, ty, "");
    if (tb == fb)
        return a;
    return dtype_is_signed(from) ? LLVMBuildSExt(b, a, ty, "") : LLVMBuildZExt(b, a, ty, "");
}

static LLVMValueRef const_of(Cg *c, Type t, int64_t iv, double fv)
{
    LLVMTypeRef ty = val_ty(c, t);
    if (t.is_ptr)
        return LLVMConstNull(ty);
    if (dtype_is_float(t.dtype))
        return LLVMConstReal(ty, fv);
    return LLVMConstInt(ty, (unsigned long long)iv, dtype_is_signed(t.dtype));
}

/* ---- shared memory ---------------------------------------------------------------------------- */

/* @global_smem: `extern .shared .align 16 .b8 global_smem[]`, the launch's dynamic shared memory;
 * each op that needs scratch uses [smem_offset, smem_offset + smem_bytes) of it. */
static LLVMValueRef smem_base(Cg *c)
{
    CgLlvm *l = c->l;
    if (!l->smem) {
        LLVMTypeRef arr = LLVMArrayType2(l->i8, 0);
        l->smem = LLVMAddGlobalInAddressSpace(l->mod, arr, "global_smem", AS_SHARED);
        LLVMSetLinkage(l->smem, LLVMExternalLinkage);
        LLVMSetAlignment(l->smem, 16); /* 1024 when a wgmma dot swizzles (lower_dot_wgmma) */
    }
    return l->smem;
}

/* Address of byte offset (i32) into shared memory. */
static LLVMValueRef smem_addr(Cg *c, LLVMValueRef byte_off)
{
    return LLVMBuildGEP2(c->l->b, c->l->i8, smem_base(c), &byte_off, 1, "");
}

static LLVMValueRef to_mem(Cg *c, DType t, LLVMValueRef v)
{
    return t == DT_I1 ? LLVMBuildZExt(c->l->b, v, c->l->i8, "") : v;
}

static LLVMValueRef from_mem(Cg *c, DType t, LLVMValueRef v)
{
    return t == DT_I1 ? LLVMBuildICmp(c->l->b, LLVMIntNE, v, LLVMConstInt(c->l->i8, 0, 0), "") : v;
}

/* Coordinate of element e along dim d. */
static LLVMValueRef coord(Cg *c, const Dist *ds, int e, int d)
{
    int32_t off = ds->off[e * ds->rank + d];
    return off ? LLVMBuildAdd(c->l->b, ds->base[d], cg_i32(c->l, off), "") : ds->base[d];
}

/* Index (in elements) of element e in a scratch copy with per-dim element strides. */
static LLVMValueRef strided_index(Cg *c, const Dist *ds, int e, const int64_t *strides)
{
    LLVMValueRef idx = NULL;
    for (int d = 0; d < ds->rank; d++) {
        if (ds->type.shape[d] == 1)
            continue;
        LLVMValueRef t = LLVMBuildMul(c->l->b, coord(c, ds, e, d), cg_i32(c->l, strides[d]), "");
        idx = idx ? LLVMBuildAdd(c->l->b, idx, t, "") : t;
    }
    return idx ? idx : cg_i32(c->l, 0);
}

/* A thread's scratch addresses split in two: this thread's part, sum base[d] * stride[d], one
 * pointer computed in the entry block; each element's part, sum off[e][d] * stride[d], a constant.
 * Every access is then `[%r + imm]` and the IR stays small. */
static LLVMValueRef smem_thread_ptr(Cg *c, const Dist *ds, const int64_t *strides, int eb, int smem_off)
{
    LLVMBuilderRef b = c->pro;
    LLVMValueRef idx = cg_i32(c->l, smem_off);
    for (int d = 0; d < ds->rank; d++) {
        if (ds->type.shape[d] == 1)
            continue;
        idx = LLVMBuildAdd(b, idx, LLVMBuildMul(b, ds->base[d], cg_i32(c->l, strides[d] * eb), ""), "");
    }
    return LLVMBuildGEP2(b, c->l->i8, smem_base(c), &idx, 1, "");
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

static void row_major_strides(const Type t, int64_t *strides)
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
static void smem_store_all(Cg *c, const LVal *src, const Dist *ds, DType dt, int eb, int smem_off,
                           const int64_t *strides)
{
    LLVMBuilderRef b = c->l->b;
    LLVMTypeRef mt = dt == DT_I64 && eb == 8 ? c->l->i64 : mem_ty(c, dt);
    int w = smem_vec(ds, eb, strides);
    LLVMValueRef tp = smem_thread_ptr(c, ds, strides, eb, smem_off);
    for (int e = 0; e < ds->nelems; e++) {
        if (w > 1 && ds->idx[e * ds->rank + ds->vec_dim] % w != 0)
            continue;
        LLVMValueRef p = smem_elem_ptr(c, tp, ds, e, strides, eb);
        if (w == 1) {
            LLVMValueRef st = LLVMBuildStore(b, to_mem(c, dt, at(src, e)), p);
            LLVMSetAlignment(st, (unsigned)eb);
            continue;
        }
        LLVMTypeRef vt = LLVMVectorType(mt, (unsigned)w);
        LLVMValueRef v = LLVMGetUndef(vt);
        for (int j = 0; j < w; j++)
            v = LLVMBuildInsertElement(b, v, to_mem(c, dt, at(src, e + j)), cg_i32(c->l, j), "");
        LLVMValueRef st = LLVMBuildStore(b, v, p);
        LLVMSetAlignment(st, (unsigned)(w * eb));
    }
}

/* Loads every element of distribution ds from byte smem_off + eb * index. */
static LLVMValueRef *smem_load_all(Cg *c, const Dist *ds, DType dt, int eb, int smem_off,
                                   const int64_t *strides)
{
    LLVMBuilderRef b = c->l->b;
    LLVMTypeRef mt = mem_ty(c, dt);
    int w = smem_vec(ds, eb, strides);
    LLVMValueRef *el = new_el(c, ds->nelems);
    LLVMValueRef tp = smem_thread_ptr(c, ds, strides, eb, smem_off);
    for (int e = 0; e < ds->nelems; e++) {
        if (w > 1 && ds->idx[e * ds->rank + ds->vec_dim] % w != 0)
            continue;
        LLVMValueRef p = smem_elem_ptr(c, tp, ds, e, strides, eb);
        if (w == 1) {
            LLVMValueRef ld = LLVMBuildLoad2(b, mt, p, "");
            LLVMSetAlignment(ld, (unsigned)eb);
            el[e] = from_mem(c, dt, ld);
            continue;
        }
        LLVMTypeRef vt = LLVMVectorType(mt, (unsigned)w);
        LLVMValueRef ld = LLVMBuildLoad2(b, vt, p, "");
        LLVMSetAlignment(ld, (unsigned)(w * eb));
        for (int j = 0; j < w; j++)
            el[e + j] = from_mem(c, dt, LLVMBuildExtractElement(b, ld, cg_i32(c->l, j), ""));
    }
    return el;
}

static bool smem_check(Cg *c, const IrOp *op, int64_t need, const char *what)
{
    if (op->smem_bytes < need || op->smem_offset < 0)
        FAIL(c, "%s needs %lld bytes of shared memory; the shared-memory pass gave it %d at offset %d",
             what, (long long)need, op->smem_bytes, op->smem_offset);
    return true;
}

/* Moves a value between layouts through shared memory (convert_layout, reshape, and trans where
 * registers cannot be relabelled): barrier (earlier readers of the scratch are done), every thread
 * stores what it holds, barrier, every thread loads what the result layout gives it. Strides are
 * docs/layouts.md's: shared_scratch_strides for convert_layout (padded rows); reshape writes
 * row-major in the operand's shape and reads row-major in the result's; trans (perm: result dim i
 * is operand dim perm[i]) writes the operand's dim perm[i] with the result's row-major stride i. */
static bool convert_through_smem(Cg *c, const IrOp *op, const LVal *src, const Dist *ds, ValueId result,
                                 const int *perm)
{
    Type rt = ir_type(c->f, result);
    Dist *dd = dist_of(c, result);
    if (!ds || !dd)
        FAIL(c, "%s of a scalar through shared memory", op_name(op->code));
    DType dt = rt.is_ptr ? DT_I64 : rt.dtype;
    int eb = shared_elem_bytes(rt);
    int64_t st_in[TRIC_MAX_RANK], st_out[TRIC_MAX_RANK];
    if (op->code == OP_RESHAPE) {
        row_major_strides(ds->type, st_in);
        row_major_strides(rt, st_out);
    } else if (op->code == OP_TRANS) {
        int64_t rm[TRIC_MAX_RANK];
        row_major_strides(rt, rm);
        for (int i = 0; i < rt.rank; i++) {
            st_in[perm[i]] = rm[i];
            st_out[i] = rm[i];
        }
    } else {
        shared_scratch_strides(c->f, op, st_in);
        memcpy(st_out, st_in, sizeof st_in);
    }
    int64_t span = 1;
    for (int d = 0; d < rt.rank; d++)
        if (rt.shape[d] > 1)
            span += (int64_t)(rt.shape[d] - 1) * st_out[d];
    if (!smem_check(c, op, span * eb, op_name(op->code)))
        return false;
    LVal tmp = *src;
    if (rt.is_ptr) { /* pointers travel as i64 */
        tmp.el = new_el(c, src->n);
        for (int i = 0; i < src->n; i++)
            tmp.el[i] = LLVMBuildPtrToInt(c->l->b, src->el[i], c->l->i64, "");
    }
    cg_barrier(c->l);
    smem_store_all(c, &tmp, ds, dt, eb, op->smem_offset, st_in);
    cg_barrier(c->l);
    LLVMValueRef *el = smem_load_all(c, dd, dt, eb, op->smem_offset, st_out);
    if (rt.is_ptr)
        for (int i = 0; i < dd->nelems; i++)
            el[i] = LLVMBuildIntToPtr(c->l->b, el[i], c->l->gptr, "");
    set(c, result, el, dd->nelems, ir_value(c->f, result)->layout);
    return true;
}

/* Registers of dst gathered from src of the same thread without moving data: dst element e is the
 * src element whose offsets are src_off(e) (computed by the caller into want[]). Valid when each
 * src dim's base equals the matching dst dim's base (checked by the caller). Returns false when
 * some element is not held by the thread. */
static bool relabel(Cg *c, const LVal *src, const Dist *ds, const Dist *dd, const int *dim_from,
                    LLVMValueRef *out)
{
    /* dim_from[i] = the dst dim that src dim i comes from, or -1 (src dim is size 1: offset 0). */
    int64_t numel = type_numel(ds->type);
    int32_t *where = malloc(sizeof(int32_t) * (size_t)numel);
    if (!where)
        return false;
    for (int64_t i = 0; i < numel; i++)
        where[i] = -1;
    for (int e = 0; e < ds->nelems; e++) {
        int64_t k = 0;
        for (int i = 0; i < ds->rank; i++)
            k = k * ds->type.shape[i] + ds->off[e * ds->rank + i];
        where[k] = e;
    }
    bool ok = true;
    for (int e = 0; e < dd->nelems && ok; e++) {
        int64_t k = 0;
        for (int i = 0; i < ds->rank; i++) {
            int o = dim_from[i] < 0 ? 0 : dd->off[e * dd->rank + dim_from[i]];
            if (o >= ds->type.shape[i]) {
                ok = false;
                break;
            }
            k = k * ds->type.shape[i] + o;
        }
        if (ok && where[k] < 0)
            ok = false;
        if (ok)
            out[e] = src->el[where[k]];
    }
    free(where);
    return ok;
}

/* Do the bases of src dim i and dst dim dim_from[i] agree (the same cached value)? */
static bool bases_agree(const Dist *ds, const Dist *dd, const int *dim_from)
{
    for (int i = 0; i < ds->rank; i++) {
        if (dim_from[i] < 0) {
            if (ds->type.shape[i] != 1)
                return false;
            continue;
        }
        if (ds->base[i] != dd->base[dim_from[i]] && ds->type.shape[i] != 1)
            return false;
    }
    return true;
}

/* ---- global memory: vectorized, predicated loads and stores ----------------------------------- */

/* How many consecutive elements one access covers: passes/axis_info.c's axis_vector_width (Triton's
 * getVectorSize: min of the thread's run along its fastest dim, the pointer's contiguity and byte
 * alignment, 16 bytes, the mask's constancy), kept within the run this thread really holds. */
static int access_width(Cg *c, const IrOp *op, const Dist *ds)
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
static LLVMValueRef *words_of(Cg *c, LLVMValueRef *elems, int w, LLVMTypeRef mt, int bits, int nwords)
{
    LLVMBuilderRef b = c->l->b;
    LLVMValueRef *out = new_el(c, nwords);
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

static void elems_of(Cg *c, LLVMValueRef *words, int nwords, int bits, LLVMTypeRef mt, int w, LLVMValueRef *out)
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
static void load_predicated(Cg *c, LLVMValueRef ptr, LLVMValueRef pred, LLVMValueRef *other, int w,
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

static bool lower_load(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    ValueId pv = op->operands[0];
    ValueId mv = op->noperands > 1 ? op->operands[1] : 0;
    ValueId ov = op->noperands > 2 ? op->operands[2] : 0;
    ValueId r = op->results[0];
    Type rt = ir_type(c->f, r);
    Dist *dd;
    int n = nelems_of(c, r, &dd);
    LVal *ptr = get(c, pv);
    LVal *mask = mv ? get(c, mv) : NULL;
    LVal *other = ov ? get(c, ov) : NULL;
    if (c->failed)
        return false;
    if (ptr->n != n && ptr->n != 1)
        FAIL(c, "load: pointer has %d registers, result %d", ptr->n, n);
    DType dt = rt.is_ptr ? DT_I64 : rt.dtype;
    LLVMTypeRef mt = rt.is_ptr ? c->l->i64 : mem_ty(c, dt);
    int eb = mem_bytes(rt);
    int w = access_width(c, op, dd);
    LLVMValueRef *el = new_el(c, n);
    for (int e = 0; e < n; e++) {
        if (dd && !group_start(dd, e, w))
            continue;
        LLVMValueRef p = at(ptr, e);
        LLVMValueRef got[16];
        if (mask) {
            LLVMValueRef oth[16];
            for (int j = 0; j < w; j++)
                oth[j] = other ? to_mem(c, dt, at(other, e + j)) : LLVMConstNull(mt);
            if (rt.is_ptr && other)
                for (int j = 0; j < w; j++)
                    oth[j] = LLVMBuildPtrToInt(b, at(other, e + j), c->l->i64, "");
            load_predicated(c, p, at(mask, e), oth, w, mt, eb, got);
        } else if (w == 1) {
            got[0] = LLVMBuildLoad2(b, mt, p, "");
            LLVMSetAlignment(got[0], (unsigned)eb);
        } else {
            LLVMValueRef v = LLVMBuildLoad2(b, LLVMVectorType(mt, (unsigned)w), p, "");
            LLVMSetAlignment(v, (unsigned)(w * eb));
            for (int j = 0; j < w; j++)
                got[j] = LLVMBuildExtractElement(b, v, cg_i32(c->l, j), "");
        }
        for (int j = 0; j < w; j++)
            el[e + j] = rt.is_ptr ? LLVMBuildIntToPtr(b, got[j], c->l->gptr, "") : from_mem(c, dt, got[j]);
    }
    set(c, r, el, n, ir_value(c->f, r)->layout);
    return true;
}

static bool lower_store(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    ValueId pv = op->operands[0], vv = op->operands[1];
    ValueId mv = op->noperands > 2 ? op->operands[2] : 0;
    Type vt = ir_type(c->f, vv);
    Dist *ds = dist_of(c, vv);
    int n = ds ? ds->nelems : 1;
    LVal *ptr = get(c, pv);
    LVal *val = get(c, vv);
    LVal *mask = mv ? get(c, mv) : NULL;
    if (c->failed)
        return false;
    DType dt = vt.is_ptr ? DT_I64 : vt.dtype;
    LLVMTypeRef mt = vt.is_ptr ? c->l->i64 : mem_ty(c, dt);
    int eb = mem_bytes(vt);
    int w = access_width(c, op, ds);
    /* Replicated elements are stored by their first holder only; a scalar by thread 0. */
    LLVMValueRef owner = ds ? ds->owner : LLVMBuildICmp(c->pro, LLVMIntEQ, c->tid, cg_i32(c->l, 0), "");
    for (int e = 0; e < n; e++) {
        if (ds && !group_start(ds, e, w))
            continue;
        LLVMValueRef vals[16];
        for (int j = 0; j < w; j++) {
            LLVMValueRef x = at(val, e + j);
            vals[j] = vt.is_ptr ? LLVMBuildPtrToInt(b, x, c->l->i64, "") : to_mem(c, dt, x);
        }
        LLVMValueRef p = at(ptr, e);
        LLVMValueRef pred = mask ? at(mask, e) : NULL;
        if (owner)
            pred = pred ? LLVMBuildAnd(b, pred, owner, "") : owner;
        if (pred) {
            store_predicated(c, p, pred, vals, w, mt, eb);
        } else if (w == 1) {
            LLVMValueRef st = LLVMBuildStore(b, vals[0], p);
            LLVMSetAlignment(st, (unsigned)eb);
        } else {
            LLVMValueRef v = LLVMGetUndef(LLVMVectorType(mt, (unsigned)w));
            for (int j = 0; j < w; j++)
                v = LLVMBuildInsertElement(b, v, vals[j], cg_i32(c->l, j), "");
            LLVMValueRef st = LLVMBuildStore(b, v, p);
            LLVMSetAlignment(st, (unsigned)(w * eb));
        }
    }
    return true;
}

/* ---- reductions --------------------------------------------------------------------------- */

typedef struct RedVal {
    LLVMValueRef v, i; /* value, and index along the axis for argmax/argmin */
} RedVal;

static RedVal combine(Cg *c, OpCode op, DType t, RedVal a, RedVal x)
{
    LLVMBuilderRef b = c->l->b;
    RedVal r = a;
    switch (op) {
    case OP_REDUCE_SUM: r.v = arith2(c, OP_ADD, t, a.v, x.v); break;
    case OP_REDUCE_MAX: r.v = arith2(c, OP_MAX, t, a.v, x.v); break;
    case OP_REDUCE_MIN: r.v = arith2(c, OP_MIN, t, a.v, x.v); break;
    default: {
        /* The first extreme wins: take x when strictly better, or equal with a smaller index.
         * NaNs are skipped (the interpreter's rule): a non-NaN beats a NaN, and two NaNs tie, so
         * an all-NaN row gives index 0. */
        Type st = type_scalar(t);
        LLVMValueRef better = compare(c, op == OP_ARGMAX ? OP_CMP_GT : OP_CMP_LT, st, x.v, a.v);
        LLVMValueRef same = compare(c, OP_CMP_EQ, st, x.v, a.v);
        if (dtype_is_float(t)) {
            LLVMValueRef a_nan = LLVMBuildFCmp(b, LLVMRealUNO, widen(c, a.v), widen(c, a.v), "");
            LLVMValueRef x_nan = LLVMBuildFCmp(b, LLVMRealUNO, widen(c, x.v), widen(c, x.v), "");
            better = LLVMBuildOr(b, better, LLVMBuildAnd(b, a_nan, LLVMBuildNot(b, x_nan, ""), ""), "");
            same = LLVMBuildOr(b, same, LLVMBuildAnd(b, a_nan, x_nan, ""), "");
        }
        LLVMValueRef tie = LLVMBuildAnd(b, same, LLVMBuildICmp(b, LLVMIntSLT, x.i, a.i, ""), "");
        LLVMValueRef take = LLVMBuildOr(b, better, tie, "");
        r.v = LLVMBuildSelect(b, take, x.v, a.v, "");
        r.i = LLVMBuildSelect(b, take, x.i, a.i, "");
        break;
    }
    }
    return r;
}

/* shfl.sync.bfly (PTX ISA §9.7.8.6) of any scalar: through i32, 64-bit values in two halves. */
static LLVMValueRef shuffle_xor(Cg *c, LLVMValueRef v, int lane_mask)
{
    LLVMBuilderRef b = c->l->b;
    LLVMTypeRef ty = LLVMTypeOf(v);
    LLVMTypeKind kind = LLVMGetTypeKind(ty);
    unsigned bits = kind == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(ty)
                    : ty == c->l->f64 ? 64 : ty == c->l->f32 ? 32 : 16;
    LLVMTypeRef ity = LLVMIntTypeInContext(c->l->ctx, bits);
    LLVMValueRef x = kind == LLVMIntegerTypeKind ? v : LLVMBuildBitCast(b, v, ity, "");
    LLVMValueRef halves[2];
    int nh = bits == 64 ? 2 : 1;
    for (int h = 0; h < nh; h++) {
        LLVMValueRef part = bits == 64 ? LLVMBuildTrunc(b, LLVMBuildLShr(b, x, LLVMConstInt(ity, 32 * h, 0), ""), c->l->i32, "")
                          : bits < 32 ? LLVMBuildZExt(b, x, c->l->i32, "") : x;
        LLVMValueRef args[4] = {cg_i32(c->l, -1), part, cg_i32(c->l, lane_mask), cg_i32(c->l, 0x1f)};
        halves[h] = cg_call(c->l, "llvm.nvvm.shfl.sync.bfly.i32", c->l->i32, args, 4);
    }
    LLVMValueRef r;
    if (bits == 64)
        r = LLVMBuildOr(b, LLVMBuildZExt(b, halves[0], ity, ""),
                        LLVMBuildShl(b, LLVMBuildZExt(b, halves[1], ity, ""), LLVMConstInt(ity, 32, 0), ""), "");
    else if (bits < 32)
        r = LLVMBuildTrunc(b, halves[0], ity, "");
    else
        r = halves[0];
    return kind == LLVMIntegerTypeKind ? r : LLVMBuildBitCast(b, r, ty, "");
}

/* reduce/argmax along an axis: within each thread, then across the lanes that hold distinct
 * elements along the axis (butterfly shuffles), then across warps through shared memory (one slot
 * per warp per output element: [output row-major index][warp along axis]). */
static bool lower_reduce(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    ValueId av = op->operands[0], r = op->results[0];
    int axis = (int)op->attr[0];
    Type at_ = ir_type(c->f, av), rt = ir_type(c->f, r);
    LVal *a = get(c, av);
    if (c->failed)
        return false;
    Dist *da = dist_get(c, a->layout, at_);
    Dist *dr = dist_of(c, r);
    if (!da)
        FAIL(c, "reduction of a scalar");
    bool arg = op->code == OP_ARGMAX || op->code == OP_ARGMIN;
    DType vt = arg ? at_.dtype : rt.dtype;
    int nr = dr ? dr->nelems : 1;
    /* Output element of each input element, by its offsets with the axis removed. */
    int64_t rnumel = type_numel(rt);
    int32_t *slot = malloc(sizeof(int32_t) * (size_t)(rnumel > 0 ? rnumel : 1));
    for (int64_t i = 0; i < rnumel; i++)
        slot[i] = -1;
    for (int e = 0; e < nr; e++) {
        int64_t k = 0;
        for (int i = 0; dr && i < dr->rank; i++)
            k = k * rt.shape[i] + dr->off[e * dr->rank + i];
        slot[k] = e;
    }
    RedVal *acc = arena_alloc(c->arena, sizeof(RedVal) * (size_t)nr);
    bool *have = arena_alloc(c->arena, sizeof(bool) * (size_t)nr);
    for (int e = 0; e < da->nelems; e++) {
        int64_t k = 0;
        for (int i = 0, j = 0; i < da->rank; i++)
            if (i != axis)
                k = k * rt.shape[j++] + da->off[e * da->rank + i];
        int re = k < rnumel ? slot[k] : -1;
        if (re < 0) {
            free(slot);
            FAIL(c, "%s: the result layout does not hold input element %d's output", op_name(op->code), e);
        }
        RedVal x = {at(a, e), NULL};
        if (arg)
            x.i = coord(c, da, e, axis);
        else
            x.v = cast(c, at_.dtype, rt.dtype, x.v);
        acc[re] = have[re] ? combine(c, op->code, vt, acc[re], x) : x;
        have[re] = true;
    }
    free(slot);
    for (int re = 0; re < nr; re++)
        if (!have[re])
            FAIL(c, "%s: output element %d has no input in this thread", op_name(op->code), re);
    for (int m = 1; m < da->lanes[axis]; m *= 2)
        for (int re = 0; re < nr; re++) {
            RedVal x = {shuffle_xor(c, acc[re].v, m * da->lane_stride[axis]), NULL};
            if (arg)
                x.i = shuffle_xor(c, acc[re].i, m * da->lane_stride[axis]);
            acc[re] = combine(c, op->code, vt, acc[re], x);
        }
    int W = da->warps[axis];
    if (W > 1) {
        int eb = dtype_bytes(vt);
        int64_t vbytes = rnumel * W * eb;
        if (!smem_check(c, op, vbytes + (arg ? rnumel * W * 4 : 0), op_name(op->code)))
            return false;
        LLVMTypeRef mt = mem_ty(c, vt);
        LLVMValueRef warp = LLVMBuildURem(b, da->warp_id[axis], cg_i32(c->l, W), "");
        cg_barrier(c->l);
        LLVMValueRef *rows = new_el(c, nr);
        int64_t rm[TRIC_MAX_RANK];
        row_major_strides(rt, rm);
        for (int re = 0; re < nr; re++) {
            rows[re] = dr ? strided_index(c, dr, re, rm) : cg_i32(c->l, 0);
            LLVMValueRef s = LLVMBuildAdd(b, LLVMBuildMul(b, rows[re], cg_i32(c->l, W), ""), warp, "");
            LLVMValueRef st = LLVMBuildStore(b, to_mem(c, vt, acc[re].v),
                smem_addr(c, LLVMBuildAdd(b, LLVMBuildMul(b, s, cg_i32(c->l, eb), ""), cg_i32(c->l, op->smem_offset), "")));
            LLVMSetAlignment(st, (unsigned)eb);
            if (arg) {
                st = LLVMBuildStore(b, acc[re].i,
                    smem_addr(c, LLVMBuildAdd(b, LLVMBuildMul(b, s, cg_i32(c->l, 4), ""), cg_i32(c->l, op->smem_offset + (int)vbytes), "")));
                LLVMSetAlignment(st, 4);
            }
        }
        cg_barrier(c->l);
        for (int re = 0; re < nr; re++) {
            for (int w = 0; w < W; w++) {
                LLVMValueRef s = LLVMBuildAdd(b, LLVMBuildMul(b, rows[re], cg_i32(c->l, W), ""), cg_i32(c->l, w), "");
                LLVMValueRef ld = LLVMBuildLoad2(b, mt,
                    smem_addr(c, LLVMBuildAdd(b, LLVMBuildMul(b, s, cg_i32(c->l, eb), ""), cg_i32(c->l, op->smem_offset), "")), "");
                LLVMSetAlignment(ld, (unsigned)eb);
                RedVal x = {from_mem(c, vt, ld), NULL};
                if (arg) {
                    x.i = LLVMBuildLoad2(b, c->l->i32,
                        smem_addr(c, LLVMBuildAdd(b, LLVMBuildMul(b, s, cg_i32(c->l, 4), ""), cg_i32(c->l, op->smem_offset + (int)vbytes), "")), "");
                    LLVMSetAlignment(x.i, 4);
                }
                acc[re] = w == 0 ? x : combine(c, op->code, vt, acc[re], x);
            }
        }
    }
    LLVMValueRef *el = new_el(c, nr);
    for (int re = 0; re < nr; re++)
        el[re] = arg ? acc[re].i : acc[re].v;
    set(c, r, el, nr, ir_value(c->f, r)->layout);
    return true;
}

/* ---- dot (FMA) --------------------------------------------------------------------------------- */

/* The registers and layout a dot operand really has: a convert_layout to a dot-operand layout
 * is not materialized (see lower_op), so this is its source's. */
static const IrOp *operand_convert(Cg *c, ValueId v)
{
    const IrOp *def = ir_value(c->f, v)->def;
    return def && def->code == OP_CONVERT_LAYOUT ? def : NULL;
}

/* Where a dot may stage both operands in shared memory at once (A^T then B): its own scratch
 * when the shared-memory pass gave it one; else its operands' converts' regions when disjoint;
 * else offset 0 when the kernel's shared memory is large enough (every scratch region is live only
 * during its op, docs/layouts.md) and nothing is allocated at a nonzero offset below the end of
 * the staging area (scratch_floor: a buffer that outlives its op would live there). */
static bool dot_scratch(Cg *c, const IrOp *op, int *off_a, int *off_b)
{
    Type ta = ir_type(c->f, op->operands[0]), tb = ir_type(c->f, op->operands[1]);
    int64_t need_a = type_numel(ta) * dtype_bytes(ta.dtype);
    int64_t need_b = type_numel(tb) * dtype_bytes(tb.dtype);
    const IrOp *ca = operand_convert(c, op->operands[0]), *cb = operand_convert(c, op->operands[1]);
    int64_t at_b = (need_a + 15) / 16 * 16; /* B 16-byte aligned for its vector accesses */
    if (op->smem_bytes >= at_b + need_b && op->smem_offset >= 0) {
        *off_a = op->smem_offset;
        *off_b = op->smem_offset + (int)at_b;
    } else if (ca && cb && ca->smem_bytes >= need_a && cb->smem_bytes >= need_b &&
               (ca->smem_offset + need_a <= cb->smem_offset || cb->smem_offset + need_b <= ca->smem_offset)) {
        *off_a = ca->smem_offset;
        *off_b = cb->smem_offset;
    } else if (c->f->shared_bytes >= at_b + need_b && c->scratch_floor >= at_b + need_b) {
        *off_a = 0;
        *off_b = (int)at_b;
    } else {
        return false;
    }
    return true;
}

static void find_scratch_floor(Cg *c, const IrRegion *r)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        if (op->smem_bytes > 0 && op->smem_offset > 0 && op->smem_offset < c->scratch_floor)
            c->scratch_floor = op->smem_offset;
        for (int k = 0; k < op->nregions; k++)
            find_scratch_floor(c, &op->regions[k]);
    }
}

/* Counts, per value, its uses and its uses as a dot's a or b operand. */
static void count_uses(Cg *c, const IrRegion *r, int32_t *uses, int32_t *dot_uses)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int k = 0; k < op->noperands; k++)
            if (op->operands[k] > 0) {
                uses[op->operands[k]]++;
                if (op->code == OP_DOT && k < 2)
                    dot_uses[op->operands[k]]++;
            }
        for (int k = 0; k < op->nregions; k++)
            count_uses(c, &op->regions[k], uses, dot_uses);
    }
}

static bool mma_can_stage(Cg *c, const IrOp *op);

/* Marks the converts feeding dots that can stage their operands themselves: those are not
 * materialized (a thread would otherwise hold whole rows of A times K in registers). Only when
 * every use of the convert is such a dot: anything else needs the real dot-operand registers. */
static void mark_lazy_operands(Cg *c, const IrRegion *r, const int32_t *uses, const int32_t *dot_uses)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        int oa, ob;
        int acc = op->code == OP_DOT ? ir_value(c->f, op->results[0])->layout : 0;
        bool fma = acc > 0 && acc < c->f->nlayouts && c->f->layouts[acc].kind != LAYOUT_MMA;
        bool mma = acc > 0 && acc < c->f->nlayouts && c->f->layouts[acc].kind == LAYOUT_MMA;
        bool v3 = mma && c->f->layouts[acc].mma.version == 3;
        if (v3) /* wgmma stages from whatever registers each operand is in (lower_dot_wgmma) */
            for (int k = 0; k < 2; k++) {
                ValueId v = op->operands[k];
                if (operand_convert(c, v) && uses[v] == dot_uses[v])
                    c->lazy_operand[v] = true;
            }
        if (mma && !v3 && mma_can_stage(c, op) && uses[op->operands[0]] == dot_uses[op->operands[0]] &&
            uses[op->operands[1]] == dot_uses[op->operands[1]])
            for (int k = 0; k < 2; k++)
                c->lazy_operand[op->operands[k]] = true;
        if (fma && dot_scratch(c, op, &oa, &ob))
            for (int k = 0; k < 2; k++) {
                ValueId v = op->operands[k];
                if (operand_convert(c, v) && uses[v] == dot_uses[v])
                    c->lazy_operand[v] = true;
            }
        for (int k = 0; k < op->nregions; k++)
            mark_lazy_operands(c, &op->regions[k], uses, dot_uses);
    }
}

/* ---- dot (mma.sync) ---------------------------------------------------------------------------- */

/* Packs two 16-bit elements into one .b32 register, the first in the low half (PTX ISA
 * 9.7.14.5.8: "a0, a1" share a .f16x2 register, a0 in the lower 16 bits). */
static LLVMValueRef pack_pair(Cg *c, LLVMValueRef lo, LLVMValueRef hi)
{
    LLVMBuilderRef b = c->l->b;
    LLVMValueRef v = LLVMGetUndef(LLVMVectorType(LLVMTypeOf(lo), 2));
    v = LLVMBuildInsertElement(b, v, lo, cg_i32(c->l, 0), "");
    v = LLVMBuildInsertElement(b, v, hi, cg_i32(c->l, 1), "");
    return LLVMBuildBitCast(b, v, c->l->i32, "");
}

/* Register index, in distribution ds, of the element at local indices (x0, x1); -1 if none. */
static int *local_index_map(Cg *c, const Dist *ds)
{
    int *map = arena_alloc(c->arena, sizeof(int) * (size_t)ds->count[0] * (size_t)ds->count[1]);
    for (int i = 0; i < ds->count[0] * ds->count[1]; i++)
        map[i] = -1;
    for (int e = 0; e < ds->nelems; e++)
        map[ds->idx[e * 2] * ds->count[1] + ds->idx[e * 2 + 1]] = e;
    return map;
}

/* Can this mma dot stage its operands itself and read them back with ldmatrix? Both operands
 * come from convert_layouts whose scratch strides put A's k and B's n at stride 1 (the loads'
 * blocked order [1, 0], as for row-major A and B), 16-bit elements, and the shared-memory pass
 * gave the dot its staging area (shared_dot_staging). */
static bool mma_can_stage(Cg *c, const IrOp *op)
{
    int64_t a_bytes, b_bytes;
    shared_dot_staging(c->f, op, &a_bytes, &b_bytes);
    if (!a_bytes || !b_bytes || op->smem_bytes < a_bytes + b_bytes || op->smem_offset < 0)
        return false;
    for (int i = 0; i < 2; i++) {
        const IrOp *cv = operand_convert(c, op->operands[i]);
        Type t = ir_type(c->f, op->operands[i]);
        int64_t st[TRIC_MAX_RANK];
        if (!cv || t.rank != 2 || dtype_bytes(t.dtype) != 2)
            return false;
        shared_scratch_strides(c->f, cv, st);
        /* ldmatrix rows are 16 bytes at 16-byte-aligned addresses (PTX ISA 9.7.9.24) */
        if (st[1] != 1 || (st[0] * 2) % 16)
            return false;
    }
    return true;
}

/* ldmatrix.sync.aligned.m8n8.{x4,x2}[.trans].shared.b16 (PTX ISA 9.7.9.24) through the NVVM
 * intrinsic (it reads memory, so LLVM keeps it after the barrier): lanes 8i..8i+7 give the row
 * addresses of matrix i; each thread gets, per matrix, one .b32 with the elements (row lane/4,
 * cols 2*(lane%4), +1) (transposed with .trans). */
static void ldmatrix(Cg *c, LLVMValueRef ptr, int n, bool trans, LLVMValueRef *out)
{
    char name[80];
    snprintf(name, sizeof name, "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x%d%s.b16.p3", n, trans ? ".trans" : "");
    LLVMTypeRef f4[4] = {c->l->i32, c->l->i32, c->l->i32, c->l->i32};
    LLVMTypeRef ret = LLVMStructTypeInContext(c->l->ctx, f4, (unsigned)n, 0);
    LLVMValueRef call = cg_call(c->l, name, ret, &ptr, 1);
    for (int i = 0; i < n; i++)
        out[i] = LLVMBuildExtractValue(c->l->b, call, (unsigned)i, "");
}

/* The staged operands: barrier, every thread stores the A and B registers it loaded (their
 * blocked layouts) into the dot's area at the converts' padded strides, barrier; then per k16
 * step ldmatrix.x4 gives one 16x16 A fragment (matrices: rows 0-7 / 8-15 x k 0-7 / 8-15, i.e.
 * a0a1, a2a3, a4a5, a6a7) and ldmatrix.x4.trans two n8 B fragments (k 0-7 / 8-15 of columns
 * rn and rn+1: b0b1, b2b3 each). Padding rows by 16 bytes makes the eight 16-byte rows of each
 * 8x8 matrix fall in distinct banks when the unpadded row is a multiple of 128 bytes or 64 bytes
 * (as Triton's padded shared layouts; no XOR swizzle yet). Fills apk/bpk as lower_dot_mma wants. */
typedef struct MmaStage {
    LLVMValueRef abase, bbase; /* this lane's ldmatrix row address for A and for B, k step 0 */
    int64_t sa0, sb0;          /* A's and B's row strides in elements */
    int Wm, Wn, Rm, Rn, Kt;
} MmaStage;

static bool mma_stage_operands(Cg *c, const IrOp *op, LVal *A, LVal *B, const Layout *L, MmaStage *st)
{
    LLVMBuilderRef pb = c->pro;
    ValueId av = op->operands[0], bv = op->operands[1];
    Type ta = ir_type(c->f, av), tb = ir_type(c->f, bv);
    int64_t a_bytes, b_bytes, sa[TRIC_MAX_RANK], sb[TRIC_MAX_RANK];
    shared_dot_staging(c->f, op, &a_bytes, &b_bytes);
    shared_scratch_strides(c->f, operand_convert(c, av), sa);
    shared_scratch_strides(c->f, operand_convert(c, bv), sb);
    Dist *da = dist_get(c, A->layout, ta), *db = dist_get(c, B->layout, tb);
    if (!da || !db)
        return false;
    int off_a = op->smem_offset, off_b = op->smem_offset + (int)a_bytes;
    cg_barrier(c->l);
    smem_store_all(c, A, da, ta.dtype, 2, off_a, sa);
    smem_store_all(c, B, db, tb.dtype, 2, off_b, sb);
    cg_barrier(c->l);
    MmaBases *mb = mma_bases_get(c, L);
    int Wm = L->mma.warps_per_cta[0], Wn = L->mma.warps_per_cta[1];
    /* This lane's row addresses, in the entry block: matrix i = lane / 8, row r = lane % 8. */
    LLVMValueRef mi = LLVMBuildLShr(pb, c->lane, cg_i32(c->l, 3), "");
    LLVMValueRef r = LLVMBuildAnd(pb, c->lane, cg_i32(c->l, 7), "");
    LLVMValueRef lo = LLVMBuildAnd(pb, mi, cg_i32(c->l, 1), ""), hi = LLVMBuildLShr(pb, mi, cg_i32(c->l, 1), "");
    /* A: row wm*16 + (i%2)*8 + r, k (i/2)*8. */
    LLVMValueRef arow = LLVMBuildAdd(pb, LLVMBuildAdd(pb, LLVMBuildMul(pb, mb->wm, cg_i32(c->l, 16), ""),
                                                      LLVMBuildMul(pb, lo, cg_i32(c->l, 8), ""), ""), r, "");
    LLVMValueRef aidx = LLVMBuildAdd(pb, LLVMBuildMul(pb, arow, cg_i32(c->l, sa[0]), ""),
                                     LLVMBuildMul(pb, hi, cg_i32(c->l, 8), ""), "");
    LLVMValueRef aoff = LLVMBuildAdd(pb, LLVMBuildMul(pb, aidx, cg_i32(c->l, 2), ""), cg_i32(c->l, off_a), "");
    LLVMValueRef abase = LLVMBuildGEP2(pb, c->l->i8, smem_base(c), &aoff, 1, "");
    /* B: k row (i%2)*8 + r, n wn*8 + (i/2)*8*Wn (matrices 2, 3: the next n8 tile of this warp). */
    LLVMValueRef bcol = LLVMBuildAdd(pb, LLVMBuildMul(pb, mb->wn, cg_i32(c->l, 8), ""),
                                     LLVMBuildMul(pb, hi, cg_i32(c->l, 8 * Wn), ""), "");
    LLVMValueRef bk = LLVMBuildAdd(pb, LLVMBuildMul(pb, lo, cg_i32(c->l, 8), ""), r, "");
    LLVMValueRef bidx = LLVMBuildAdd(pb, LLVMBuildMul(pb, bk, cg_i32(c->l, sb[0]), ""), bcol, "");
    LLVMValueRef boff = LLVMBuildAdd(pb, LLVMBuildMul(pb, bidx, cg_i32(c->l, 2), ""), cg_i32(c->l, off_b), "");
    LLVMValueRef bbase = LLVMBuildGEP2(pb, c->l->i8, smem_base(c), &boff, 1, "");
    st->abase = abase;
    st->bbase = bbase;
    st->sa0 = sa[0];
    st->sb0 = sb[0];
    st->Wm = Wm;
    st->Wn = Wn;
    return true;
}

/* The A fragments (all rm) and B fragments (all rn) of k step rk, into apk/bpk as lower_dot_mma
 * indexes them; issued right before that step's mma ops so few are live at once. */
static void mma_load_step(Cg *c, const MmaStage *st, int rk, LLVMValueRef *apk, LLVMValueRef *bpk)
{
    LLVMBuilderRef b = c->l->b;
    for (int rm = 0; rm < st->Rm; rm++) {
        LLVMValueRef off = cg_i32(c->l, ((int64_t)rm * 16 * st->Wm * st->sa0 + rk * 16) * 2);
        LLVMValueRef p = LLVMBuildGEP2(b, c->l->i8, st->abase, &off, 1, "");
        ldmatrix(c, p, 4, false, &apk[(rm * st->Kt + rk) * 4]);
    }
    for (int rn = 0; rn < st->Rn; rn += 2) {
        LLVMValueRef off = cg_i32(c->l, ((int64_t)rk * 16 * st->sb0 + (int64_t)rn * 8 * st->Wn) * 2);
        LLVMValueRef p = LLVMBuildGEP2(b, c->l->i8, st->bbase, &off, 1, "");
        LLVMValueRef got[4];
        int n = rn + 1 < st->Rn ? 4 : 2;
        ldmatrix(c, p, n, true, got);
        for (int q = 0; q < n; q++)
            bpk[(rk * st->Rn + rn + q / 2) * 2 + q % 2] = got[q];
    }
}

/* Operands materialized in #dot_op registers (convert_layout through shared memory): packs the
 * pairs (a0,a1), ... into apk/bpk. Local indices: A (rm*2 + h, rk*4 + kh*2 + j); B
 * (rk*4 + kh*2 + j, rn). */
static bool mma_pack_registers(Cg *c, LVal *A, LVal *B, Dist *da, Dist *db, int Rm, int Rn, int Kt,
                               LLVMValueRef *apk, LLVMValueRef *bpk)
{
    if (da->layout != A->layout || db->layout != B->layout ||
        c->f->layouts[A->layout].kind != LAYOUT_DOT_OPERAND || c->f->layouts[B->layout].kind != LAYOUT_DOT_OPERAND)
        FAIL(c, "mma dot: operands are not in #dot_op registers");
    if (A->n != da->nelems || B->n != db->nelems)
        FAIL(c, "mma dot: register counts differ from the layouts'");
    int *amap = local_index_map(c, da), *bmap = local_index_map(c, db);
    for (int rm = 0; rm < Rm; rm++)
        for (int rk = 0; rk < Kt; rk++)
            for (int q = 0; q < 4; q++) { /* q = kh*2 + h: a0a1, a2a3 (h), a4a5 (kh), a6a7 */
                int h = q % 2, kh = q / 2;
                int e0 = amap[(rm * 2 + h) * da->count[1] + rk * 4 + kh * 2];
                int e1 = amap[(rm * 2 + h) * da->count[1] + rk * 4 + kh * 2 + 1];
                if (e0 < 0 || e1 < 0)
                    FAIL(c, "mma dot: A fragment element missing");
                apk[(rm * Kt + rk) * 4 + q] = pack_pair(c, A->el[e0], A->el[e1]);
            }
    for (int rk = 0; rk < Kt; rk++)
        for (int rn = 0; rn < Rn; rn++)
            for (int kh = 0; kh < 2; kh++) {
                int e0 = bmap[(rk * 4 + kh * 2) * db->count[1] + rn];
                int e1 = bmap[(rk * 4 + kh * 2 + 1) * db->count[1] + rn];
                if (e0 < 0 || e1 < 0)
                    FAIL(c, "mma dot: B fragment element missing");
                bpk[(rk * Rn + rn) * 2 + kh] = pack_pair(c, B->el[e0], B->el[e1]);
            }
    return true;
}

/* r = a @ b + c on the tensor cores: for every (m16 tile rm, n8 tile rn) of this warp and every
 * k16 step, one `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32` (PTX ISA
 * 9.7.14.5.14 mma; fragments 9.7.14.5.8) with A's four .b32 registers (a0..a7 packed in pairs), B's two and C/D's four f32.
 * The operands arrive in their #dot_op registers (convert_layout through shared memory), the
 * accumulator in #mma registers (docs/layouts.md). */
static bool lower_dot_mma(Cg *c, const IrOp *op, LVal *A, LVal *B, LVal *C, Dist *da, Dist *db, Dist *dr)
{
    LLVMBuilderRef b = c->l->b;
    Type ta = ir_type(c->f, op->operands[0]);
    const Layout *L = &c->f->layouts[dr->layout];
    int M = ir_type(c->f, op->results[0]).shape[0], N = ir_type(c->f, op->results[0]).shape[1];
    int K = ta.shape[1];
    int Rm = M / (16 * L->mma.warps_per_cta[0]), Rn = N / (8 * L->mma.warps_per_cta[1]), Kt = K / 16;
    if (C->n != dr->nelems && C->n != 1)
        FAIL(c, "mma dot: accumulator register count differs from the layout's");
    int *cmap = local_index_map(c, dr);
    LLVMValueRef *apk = new_el(c, Rm * Kt * 4), *bpk = new_el(c, Kt * Rn * 2);
    MmaStage st = {.Rm = Rm, .Rn = Rn, .Kt = Kt};
    bool staged = c->lazy_operand[op->operands[0]] && c->lazy_operand[op->operands[1]];
    if (staged ? !mma_stage_operands(c, op, A, B, L, &st)
               : !mma_pack_registers(c, A, B, da, db, Rm, Rn, Kt, apk, bpk))
        return false;
    int n = dr->nelems;
    LLVMValueRef *acc = new_el(c, n);
    for (int e = 0; e < n; e++)
        acc[e] = at(C, e);
    const char *text = ta.dtype == DT_BF16
        ? "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};"
        : "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};";
    LLVMTypeRef f4[4] = {c->l->f32, c->l->f32, c->l->f32, c->l->f32};
    LLVMTypeRef ret = LLVMStructTypeInContext(c->l->ctx, f4, 4, 0);
    for (int rk = 0; rk < Kt; rk++) {
        if (staged)
            mma_load_step(c, &st, rk, apk, bpk);
        for (int rm = 0; rm < Rm; rm++)
            for (int rn = 0; rn < Rn; rn++) {
                int ce[4];
                for (int q = 0; q < 4; q++) { /* c0, c1 (row groupID), c2, c3 (row groupID + 8) */
                    ce[q] = cmap[(rm * 2 + q / 2) * dr->count[1] + rn * 2 + q % 2];
                    if (ce[q] < 0)
                        FAIL(c, "mma dot: C fragment element missing");
                }
                LLVMValueRef args[14];
                for (int q = 0; q < 4; q++)
                    args[q] = apk[(rm * Kt + rk) * 4 + q];
                args[4] = bpk[(rk * Rn + rn) * 2];
                args[5] = bpk[(rk * Rn + rn) * 2 + 1];
                for (int q = 0; q < 4; q++)
                    args[6 + q] = acc[ce[q]];
                LLVMValueRef call = cg_asm(c->l, ret, text, "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3", args, 10, false);
                for (int q = 0; q < 4; q++)
                    acc[ce[q]] = LLVMBuildExtractValue(b, call, (unsigned)q, "");
            }
    }
    set(c, op->results[0], acc, n, dr->layout);
    return true;
}

/* ---- dot (wgmma, sm_90a) ---------------------------------------------------------------------- */

/* Inline asm with any number of operands (cg_asm takes at most 16). */
static LLVMValueRef asm_n(Cg *c, LLVMTypeRef ret, const char *text, const char *constraints,
                          LLVMValueRef *args, int nargs, bool side_effects)
{
    LLVMTypeRef *params = arena_alloc(c->arena, sizeof(LLVMTypeRef) * (size_t)(nargs > 0 ? nargs : 1));
    for (int i = 0; i < nargs; i++)
        params[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret, params, (unsigned)nargs, 0);
    LLVMValueRef fn = LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)constraints,
                                       strlen(constraints), side_effects, 0, LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(c->l->b, fty, fn, args, (unsigned)nargs, "");
}

static void asm_void(Cg *c, const char *text)
{
    asm_n(c, c->l->void_t, text, "~{memory}", NULL, 0, true);
}

/* Stores w consecutive 16-bit elements of src, from element e on, at p in shared memory: one
 * scalar store, or one w-wide vector store aligned to its size (st.shared.v2/v4). */
static void store_run16(Cg *c, const LVal *src, int e, int w, LLVMTypeRef mt, LLVMValueRef p)
{
    LLVMBuilderRef b = c->l->b;
    if (w == 1) {
        LLVMSetAlignment(LLVMBuildStore(b, at(src, e), p), 2);
        return;
    }
    LLVMValueRef v = LLVMGetUndef(LLVMVectorType(mt, (unsigned)w));
    for (int j = 0; j < w; j++)
        v = LLVMBuildInsertElement(b, v, at(src, e + j), cg_i32(c->l, j), "");
    LLVMSetAlignment(LLVMBuildStore(b, v, p), (unsigned)(2 * w));
}

/* Stores operand src (distribution ds, 16-bit elements) into the wgmma no-swizzle K-major
 * canonical layout (PTX ISA 9.7.15.5.1.2, "core matrices"): element (r, k), r the M row of A
 * or the N column of B, at byte off + ((r/8) * (K/8) + k/8) * 128 + (r%8) * 16 + (k%8) * 2: each
 * 8x8 core matrix is 128 contiguous bytes (8 rows of 16 bytes, k fastest), core matrices along K
 * 128 bytes apart (LBO), along M/N K*16 bytes apart (SBO). A thread's run along k (the loads'
 * vectors for A) goes out as one vector store of up to 16 bytes; runs along r element by
 * element. */
static void wgmma_store_operand(Cg *c, const LVal *src, const Dist *ds, DType dt, int off, int row_dim, int K)
{
    LLVMBuilderRef b = c->l->b;
    int k_dim = 1 - row_dim;
    int w = ds->vec_dim == k_dim ? imin(ds->run[k_dim], 8) : 1;
    LLVMTypeRef mt = mem_ty(c, dt);
    for (int e = 0; e < ds->nelems; e++) {
        if (w > 1 && ds->idx[e * 2 + k_dim] % w != 0)
            continue;
        LLVMValueRef r = coord(c, ds, e, row_dim), k = coord(c, ds, e, k_dim);
        LLVMValueRef cm = LLVMBuildAdd(b, LLVMBuildMul(b, LLVMBuildLShr(b, r, cg_i32(c->l, 3), ""),
                                                       cg_i32(c->l, K / 8), ""),
                                       LLVMBuildLShr(b, k, cg_i32(c->l, 3), ""), "");
        LLVMValueRef in = LLVMBuildAdd(b, LLVMBuildMul(b, LLVMBuildAnd(b, r, cg_i32(c->l, 7), ""), cg_i32(c->l, 16), ""),
                                       LLVMBuildMul(b, LLVMBuildAnd(b, k, cg_i32(c->l, 7), ""), cg_i32(c->l, 2), ""), "");
        LLVMValueRef byte = LLVMBuildAdd(b, LLVMBuildAdd(b, LLVMBuildMul(b, cm, cg_i32(c->l, 128), ""), in, ""),
                                         cg_i32(c->l, off), "");
        store_run16(c, src, e, w, mt, smem_addr(c, byte));
    }
}

/* Stores operand src (distribution ds, 16-bit elements) in the 128-byte-swizzle canonical layout
 * (PTX ISA 9.7.15.5.1.2; CUTLASS's Swizzle<3,4,3>): the contiguous dim c (k of a K-major A, n of
 * an N-major B) is cut into 64-element atoms, atom c/64 at (c/64) * S * 128 bytes (S the extent
 * of the strided dim s); inside an atom row s is 128 bytes at s * 128, and its 16-byte chunk
 * (c%64)/8 sits at chunk ((c%64)/8) XOR (s%8). A thread's runs along c go out as 16-byte
 * stores; the eight threads of a quarter-warp that store one row hit eight distinct chunks, so the
 * stores are free of bank conflicts (unlike the no-swizzle layout, where the 8 chunks of a row
 * are 128 bytes apart). The area must be 1024-byte aligned (the pattern repeats every 8 rows). */
static void wgmma_store_sw128(Cg *c, const LVal *src, const Dist *ds, DType dt, int off, int s_dim, int S)
{
    LLVMBuilderRef b = c->l->b;
    int c_dim = 1 - s_dim;
    int w = ds->vec_dim == c_dim ? imin(ds->run[c_dim], 8) : 1;
    LLVMTypeRef mt = mem_ty(c, dt);
    for (int e = 0; e < ds->nelems; e++) {
        if (w > 1 && ds->idx[e * 2 + c_dim] % w != 0)
            continue;
        LLVMValueRef sv = coord(c, ds, e, s_dim), cv = coord(c, ds, e, c_dim);
        LLVMValueRef atom = LLVMBuildMul(b, LLVMBuildLShr(b, cv, cg_i32(c->l, 6), ""), cg_i32(c->l, (int64_t)S * 128), "");
        LLVMValueRef chunk = LLVMBuildAnd(b, LLVMBuildLShr(b, cv, cg_i32(c->l, 3), ""), cg_i32(c->l, 7), "");
        chunk = LLVMBuildXor(b, chunk, LLVMBuildAnd(b, sv, cg_i32(c->l, 7), ""), "");
        LLVMValueRef byte = LLVMBuildAdd(b, atom, LLVMBuildMul(b, sv, cg_i32(c->l, 128), ""), "");
        byte = LLVMBuildAdd(b, byte, LLVMBuildMul(b, chunk, cg_i32(c->l, 16), ""), "");
        byte = LLVMBuildAdd(b, byte, LLVMBuildMul(b, LLVMBuildAnd(b, cv, cg_i32(c->l, 7), ""), cg_i32(c->l, 2), ""), "");
        byte = LLVMBuildAdd(b, byte, cg_i32(c->l, off), "");
        store_run16(c, src, e, w, mt, smem_addr(c, byte));
    }
}

/* A wgmma matrix descriptor (PTX ISA 9.7.15.5.1.2.2, 64 bits): start address >> 4 in bits 0-13,
 * leading-dimension byte offset >> 4 in 16-29, stride-dimension byte offset >> 4 in 32-45, base
 * offset 0 (bits 49-51), swizzle mode in 62-63 (0: none, the "interleave" layout). addr is the
 * shared-window byte address (i32). */
static LLVMValueRef wgmma_desc(Cg *c, LLVMBuilderRef b, LLVMValueRef addr, int64_t lbo, int64_t sbo, bool sw128)
{
    LLVMValueRef a = LLVMBuildZExt(b, LLVMBuildAnd(b, LLVMBuildLShr(b, addr, cg_i32(c->l, 4), ""),
                                                   cg_i32(c->l, 0x3fff), ""), c->l->i64, "");
    uint64_t hi = ((uint64_t)((lbo >> 4) & 0x3fff) << 16) | ((uint64_t)((sbo >> 4) & 0x3fff) << 32) |
                  (sw128 ? (uint64_t)1 << 62 : 0);
    return LLVMBuildOr(b, a, LLVMConstInt(c->l->i64, hi, 0), "");
}

/* r = a @ b + c with wgmma (sm_90a; #mma v3, docs/codegen.md "wgmma"): barrier (earlier readers
 * of the staging area are done: every thread waited for its wgmma), every thread stores the A
 * and B registers it holds into the dot's staging area in the K-major core-matrix layout (A
 * [M, K] and B^T [N, K], wgmma_store_operand), `fence.proxy.async.shared::cta` (generic-proxy
 * writes become visible to wgmma's async proxy, PTX ISA 9.7.15.2), barrier; `wgmma.fence`
 * (the accumulator registers were written by ordinary instructions), then per k16 step, per m64
 * tile of this warpgroup and per n piece one `wgmma.mma_async.sync.aligned.m64nNk16.f32.T.T`
 * with both operands through descriptors, `wgmma.commit_group`, `wgmma.wait_group 0` (the
 * accumulators pass through the wait's asm so no use can move above it); pipelined in a K loop
 * (docs/codegen.md "Pipelined wgmma"): this iteration's staging buffer and `wait_group 1`. */
static bool lower_dot_wgmma(Cg *c, const IrOp *op, LVal *A, LVal *B, LVal *C, Dist *dr)
{
    LLVMBuilderRef b = c->l->b;
    Type ta = ir_type(c->f, op->operands[0]), tb = ir_type(c->f, op->operands[1]);
    const Layout *L = &c->f->layouts[dr->layout];
    int M = ir_type(c->f, op->results[0]).shape[0], N = ir_type(c->f, op->results[0]).shape[1];
    int K = ta.shape[1], W = L->mma.warps_per_cta[0], NI = L->mma.instr_shape[1];
    if (W % 4 || M % (16 * W) || NI < 8 || NI > 256 || NI % 8 || N % NI || K % 16 || dtype_bytes(ta.dtype) != 2)
        FAIL(c, "wgmma dot: tile [%d, %d, %d] on %d warps with n %d does not fit", M, N, K, W, NI);
    int Rm = M / (16 * W), Kt = K / 16, Nc = N / NI;
    if (C->n != dr->nelems && C->n != 1)
        FAIL(c, "wgmma dot: accumulator register count differs from the layout's");
    int off_a, off_b;
    if (!dot_scratch(c, op, &off_a, &off_b) || off_a % 16 || off_b % 16)
        FAIL(c, "wgmma dot: no 16-byte-aligned staging area for A and B");
    Dist *sa = dist_get(c, A->layout, ta), *sb = dist_get(c, B->layout, tb);
    if (!sa || !sb)
        return false;
    if (A->n != sa->nelems && A->n != 1)
        FAIL(c, "wgmma dot: A register count differs from its layout's");
    if (B->n != sb->nelems && B->n != 1)
        FAIL(c, "wgmma dot: B register count differs from its layout's");
    /* Layouts: 128-byte swizzle where a thread's 16-byte runs lie along the atom's contiguous dim
     * (A: k, K a multiple of 64; B: n, N-major with imm-trans-b = 1, N a multiple of 64), else
     * the no-swizzle K-major layout (any registers, element by element along M/N). */
    bool a_sw = K % 64 == 0 && sa->vec_dim == 1 && sa->run[1] >= 8 && off_a % 1024 == 0;
    bool b_sw = N % 64 == 0 && sb->vec_dim == 1 && sb->run[1] >= 8 && off_b % 1024 == 0;
    if (a_sw || b_sw) /* the swizzle pattern repeats every 1024 bytes of the shared window */
        LLVMSetAlignment(smem_base(c), 1024);
    cg_barrier(c->l); /* earlier readers of the staging area are done */
    if (a_sw)
        wgmma_store_sw128(c, A, sa, ta.dtype, off_a, 0, M);
    else
        wgmma_store_operand(c, A, sa, ta.dtype, off_a, 0, K);
    if (b_sw)
        wgmma_store_sw128(c, B, sb, tb.dtype, off_b, 0, K);
    else
        wgmma_store_operand(c, B, sb, tb.dtype, off_b, 1, K);
    asm_void(c, "fence.proxy.async.shared::cta;");
    cg_barrier(c->l);

    /* Descriptors, thread-invariant parts in the entry block: warpgroup g = warp / 4 starts at
     * row g*64 of A. No swizzle: LBO 128 (next core matrix along K), SBO K*16 (next 8 rows).
     * A swizzled: SBO 1024 (next 8 rows), LBO unused (1). B swizzled N-major: LBO K*128 (next
     * 64-column atom), SBO 1024 (next 8 k rows). */
    LLVMBuilderRef pb = c->pro;
    LLVMValueRef sbase = LLVMBuildTrunc(pb, LLVMBuildPtrToInt(pb, smem_base(c), c->l->i64, ""), c->l->i32, "");
    LLVMValueRef g = LLVMBuildLShr(pb, c->warp, cg_i32(c->l, 2), "");
    int64_t a_row = a_sw ? 128 : (int64_t)K * 2; /* bytes per row of A within an 8-row group */
    LLVMValueRef a_addr = LLVMBuildAdd(pb, sbase, LLVMBuildAdd(pb, cg_i32(c->l, off_a),
                                       LLVMBuildMul(pb, g, cg_i32(c->l, 64 * a_row), ""), ""), "");
    LLVMValueRef b_addr = LLVMBuildAdd(pb, sbase, cg_i32(c->l, off_b), "");
    int64_t lbo = 128, sbo = (int64_t)K * 16;
    LLVMValueRef a_desc = a_sw ? wgmma_desc(c, pb, a_addr, 16, 1024, true) : wgmma_desc(c, pb, a_addr, lbo, sbo, false);
    LLVMValueRef b_desc = b_sw ? wgmma_desc(c, pb, b_addr, (int64_t)K * 128, 1024, true)
                               : wgmma_desc(c, pb, b_addr, lbo, sbo, false);

    int n = dr->nelems;
    int *cmap = local_index_map(c, dr);
    LLVMValueRef *acc = new_el(c, n);
    for (int e = 0; e < n; e++)
        acc[e] = at(C, e);
    if (dr->count[0] != 2 * Rm || dr->count[1] != N / 4)
        FAIL(c, "wgmma dot: accumulator fragment of %d x %d registers, not %d x %d", dr->count[0],
             dr->count[1], 2 * Rm, N / 4);
    for (int x = 0; x < 2 * Rm * (N / 4); x++)
        if (cmap[x] < 0)
            FAIL(c, "wgmma dot: D fragment element missing");
    int nd = NI / 2; /* f32 D registers per thread per instruction: 64 * NI / 128 */
    StrBuf text = {0}, cons = {0};
    strbuf_printf(&text, "{\n.reg .pred p;\nsetp.ne.b32 p, $%d, 0;\nwgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {",
                  nd + 2, NI, ta.dtype == DT_BF16 ? "bf16" : "f16", ta.dtype == DT_BF16 ? "bf16" : "f16");
    for (int i = 0; i < nd; i++)
        strbuf_printf(&text, "%s$%d", i ? ", " : "", i);
    strbuf_printf(&text, "}, $%d, $%d, p, 1, 1, 0, %d;\n}", nd, nd + 1, b_sw ? 1 : 0);
    for (int i = 0; i < nd; i++)
        strbuf_printf(&cons, "=f,");
    strbuf_printf(&cons, "l,l,r");
    for (int i = 0; i < nd; i++)
        strbuf_printf(&cons, ",%d", i);
    strbuf_printf(&cons, ",~{memory}");
    LLVMTypeRef *fty = arena_alloc(c->arena, sizeof(LLVMTypeRef) * (size_t)(n > nd ? n : nd));
    for (int i = 0; i < (n > nd ? n : nd); i++)
        fty[i] = c->l->f32;
    LLVMTypeRef ret = LLVMStructTypeInContext(c->l->ctx, fty, (unsigned)nd, 0);
    LLVMValueRef *args = new_el(c, nd + 3);
    int *ce = arena_alloc(c->arena, sizeof(int) * (size_t)nd);
    asm_void(c, "wgmma.fence.sync.aligned;");
    for (int rk = 0; rk < Kt; rk++)
        for (int rm = 0; rm < Rm; rm++)
            for (int nc = 0; nc < Nc; nc++) {
                /* A at row rm*16*W (+ g*64, in a_desc), k rk*16; B at n nc*NI, k rk*16. */
                int64_t a_off = a_sw ? (int64_t)(rk * 16 / 64) * M * 128 + (int64_t)rm * 16 * W * 128 + (rk * 16 % 64) * 2
                                     : (int64_t)rm * 16 * W / 8 * sbo + rk * 2 * lbo;
                int64_t b_off = b_sw ? (int64_t)(nc * NI / 64) * K * 128 + (int64_t)rk * 16 * 128
                                     : (int64_t)nc * NI / 8 * sbo + rk * 2 * lbo;
                for (int i = 0; i < nd; i++) {
                    /* d[i]: n8 piece i/4, row groupID + 8*((i/2)%2), col tig*2 + i%2 (PTX ISA
                     * 9.7.15.5.1.1.1, the m64nNk16 D fragment) */
                    int rn = nc * (NI / 8) + i / 4, h = (i / 2) % 2, j = i % 2;
                    ce[i] = cmap[(rm * 2 + h) * dr->count[1] + rn * 2 + j]; /* checked above */
                }
                /* operands: the two descriptors and scale-d (1: D = A*B + D), then the tied
                 * accumulators */
                args[0] = LLVMBuildAdd(b, a_desc, cg_i64(c->l, a_off >> 4), "");
                args[1] = LLVMBuildAdd(b, b_desc, cg_i64(c->l, b_off >> 4), "");
                args[2] = cg_i32(c->l, 1);
                for (int i = 0; i < nd; i++)
                    args[3 + i] = acc[ce[i]];
                LLVMValueRef call = asm_n(c, ret, text.data, cons.data, args, nd + 3, true);
                for (int i = 0; i < nd; i++)
                    acc[ce[i]] = LLVMBuildExtractValue(b, call, (unsigned)i, "");
            }
    asm_void(c, "wgmma.commit_group.sync.aligned;");
    /* wait_group 0 with every accumulator tied through it */
    StrBuf wcons = {0};
    for (int i = 0; i < n; i++)
        strbuf_printf(&wcons, "=f,");
    for (int i = 0; i < n; i++)
        strbuf_printf(&wcons, "%s%d", i ? "," : "", i);
    strbuf_printf(&wcons, ",~{memory}");
    LLVMTypeRef wret = LLVMStructTypeInContext(c->l->ctx, fty, (unsigned)n, 0);
    LLVMValueRef wait = asm_n(c, wret, "wgmma.wait_group.sync.aligned 0;",
                              wcons.data, acc, n, true);
    for (int e = 0; e < n; e++)
        acc[e] = LLVMBuildExtractValue(b, wait, (unsigned)e, "");
    strbuf_free(&text);
    strbuf_free(&cons);
    strbuf_free(&wcons);
    set(c, op->results[0], acc, n, dr->layout);
    return true;
}

/* r = a @ b + c with FMAs: each thread computes its own elements of C (a blocked layout). The
 * operands go to shared memory K-major (A^T [K][M], B [K][N]) from whatever registers they are in;
 * a loop over k then reads, per k, the A rows and B columns this thread needs, so no thread holds
 * a whole operand in registers. The accumulation is fp32 for fp16/bf16/fp32 operands, fp64 for
 * fp64, int32 for int8. A dot with an #mma result goes to lower_dot_mma (tensor cores) instead. */
static bool lower_dot(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    ValueId av = op->operands[0], bv = op->operands[1], cv = op->operands[2], r = op->results[0];
    Type ta = ir_type(c->f, av), tb = ir_type(c->f, bv), tr = ir_type(c->f, r);
    LVal *A = get(c, av), *B = get(c, bv), *C = get(c, cv);
    if (c->failed)
        return false;
    Dist *da = dist_get(c, A->layout, ta), *db = dist_get(c, B->layout, tb);
    Dist *dc = dist_get(c, C->layout, ir_type(c->f, cv)), *dr = dist_of(c, r);
    if (!da || !db || !dc || !dr)
        return false;
    if (dc != dr)
        FAIL(c, "dot: accumulator and result layouts differ");
    if (c->f->layouts[dr->layout].kind == LAYOUT_MMA && c->f->layouts[dr->layout].mma.version == 3)
        return lower_dot_wgmma(c, op, A, B, C, dr);
    if (c->f->layouts[dr->layout].kind == LAYOUT_MMA)
        return lower_dot_mma(c, op, A, B, C, da, db, dr);
    int M = ta.shape[0], K = ta.shape[1], N = tb.shape[1];
    int eba = dtype_bytes(ta.dtype), ebb = dtype_bytes(tb.dtype);
    bool is_int = !dtype_is_float(ta.dtype);
    LLVMTypeRef acc_ty = is_int ? c->l->i32 : (ta.dtype == DT_F64 ? c->l->f64 : c->l->f32);
    DType acc_dt = is_int ? DT_I32 : (ta.dtype == DT_F64 ? DT_F64 : DT_F32);
    char fma_name[32];
    snprintf(fma_name, sizeof fma_name, "llvm.fma.%s", acc_dt == DT_F64 ? "f64" : "f32");
    int n = dr->nelems;
    const Layout *la = &c->f->layouts[A->layout], *lb = &c->f->layouts[B->layout];
    if (la->kind == LAYOUT_DOT_OPERAND && lb->kind == LAYOUT_DOT_OPERAND) {
        /* Operands materialized in dot-operand registers: A[i][k] and B[k][j] are this thread's. */
        int cols = dr->count[1];
        LLVMValueRef *el = new_el(c, n);
        for (int e = 0; e < n; e++) {
            int i = dr->idx[e * 2], j = dr->idx[e * 2 + 1];
            LLVMValueRef acc = cast(c, tr.dtype, acc_dt, at(C, e));
            for (int k = 0; k < K; k++) {
                LLVMValueRef x = cast(c, ta.dtype, acc_dt, A->el[i * K + k]);
                LLVMValueRef y = cast(c, tb.dtype, acc_dt, B->el[k * cols + j]);
                if (is_int)
                    acc = LLVMBuildAdd(b, LLVMBuildMul(b, x, y, ""), acc, "");
                else {
                    LLVMValueRef args[3] = {x, y, acc};
                    acc = cg_call(c->l, fma_name, acc_ty, args, 3);
                }
            }
            el[e] = cast(c, acc_dt, tr.dtype, acc);
        }
        set(c, r, el, n, ir_value(c->f, r)->layout);
        return true;
    }
    int off_a, off_b;
    if (!dot_scratch(c, op, &off_a, &off_b))
        FAIL(c, "dot (FMA) needs %lld bytes of shared memory to stage its operands",
             (long long)M * K * eba + (long long)K * N * ebb);
    int64_t st_a[2] = {1, M}, st_b[2] = {N, 1}; /* A^T [K][M], B [K][N] */
    cg_barrier(c->l);
    smem_store_all(c, A, da, ta.dtype, eba, off_a, st_a);
    smem_store_all(c, B, db, tb.dtype, ebb, off_b, st_b);
    cg_barrier(c->l);

    LLVMValueRef *init = new_el(c, n);
    for (int e = 0; e < n; e++)
        init[e] = cast(c, tr.dtype, acc_dt, at(C, e));

    LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
    LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "dot.k");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "dot.done");
    LLVMBuildBr(b, loop);
    LLVMPositionBuilderAtEnd(b, loop);
    LLVMValueRef k = LLVMBuildPhi(b, c->l->i32, "k");
    LLVMValueRef *acc = new_el(c, n);
    for (int e = 0; e < n; e++)
        acc[e] = LLVMBuildPhi(b, acc_ty, "");
    int rows = dr->count[0], cols = dr->count[1];
    LLVMValueRef *av_k = new_el(c, rows), *bv_k = new_el(c, cols);
    LLVMTypeRef mta = mem_ty(c, ta.dtype), mtb = mem_ty(c, tb.dtype);
    for (int pass = 0; pass < 2; pass++) {
        int cnt = pass ? cols : rows, run = pass ? dr->run[1] : dr->run[0];
        int eb = pass ? ebb : eba, ext = pass ? N : M, base_off = pass ? off_b : off_a;
        LLVMTypeRef mt = pass ? mtb : mta;
        DType dt = pass ? tb.dtype : ta.dtype;
        LLVMValueRef *out = pass ? bv_k : av_k;
        LLVMValueRef row = LLVMBuildMul(b, k, cg_i32(c->l, ext), "");
        int w = imin(run, 16 / eb);
        if (w < 1)
            w = 1;
        for (int i = 0; i < cnt; i += w) {
            LLVMValueRef idx = LLVMBuildAdd(b, row, LLVMBuildAdd(b, dr->base[pass], cg_i32(c->l, dr->dim_off[pass][i]), ""), "");
            LLVMValueRef p = smem_addr(c, LLVMBuildAdd(b, LLVMBuildMul(b, idx, cg_i32(c->l, eb), ""), cg_i32(c->l, base_off), ""));
            if (w == 1) {
                LLVMValueRef ld = LLVMBuildLoad2(b, mt, p, "");
                LLVMSetAlignment(ld, (unsigned)eb);
                out[i] = cast(c, dt, acc_dt, ld);
            } else {
                LLVMValueRef ld = LLVMBuildLoad2(b, LLVMVectorType(mt, (unsigned)w), p, "");
                LLVMSetAlignment(ld, (unsigned)(w * eb));
                for (int j = 0; j < w; j++)
                    out[i + j] = cast(c, dt, acc_dt, LLVMBuildExtractElement(b, ld, cg_i32(c->l, j), ""));
            }
        }
    }
    LLVMValueRef *next = new_el(c, n);
    for (int e = 0; e < n; e++) {
        LLVMValueRef x = av_k[dr->idx[e * 2 + 0]], y = bv_k[dr->idx[e * 2 + 1]];
        if (is_int)
            next[e] = LLVMBuildAdd(b, LLVMBuildMul(b, x, y, ""), acc[e], "");
        else {
            LLVMValueRef args[3] = {x, y, acc[e]};
            next[e] = cg_call(c->l, fma_name, acc_ty, args, 3);
        }
    }
    LLVMValueRef k1 = LLVMBuildAdd(b, k, cg_i32(c->l, 1), "");
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, k1, cg_i32(c->l, K), ""), loop, done);
    LLVMValueRef zero = cg_i32(c->l, 0);
    LLVMAddIncoming(k, &zero, &pre, 1);
    LLVMAddIncoming(k, &k1, &latch, 1);
    for (int e = 0; e < n; e++) {
        LLVMAddIncoming(acc[e], &init[e], &pre, 1);
        LLVMAddIncoming(acc[e], &next[e], &latch, 1);
    }
    LLVMPositionBuilderAtEnd(b, done);
    LLVMValueRef *el = new_el(c, n);
    for (int e = 0; e < n; e++)
        el[e] = cast(c, acc_dt, tr.dtype, next[e]);
    set(c, r, el, n, ir_value(c->f, r)->layout);
    return true;
}

/* ---- ops ----------------------------------------------------------------------------------------- */

static bool lower_region(Cg *c, const IrRegion *r);

static bool expect_same_layout(Cg *c, const IrOp *op, const LVal *v, int n)
{
    if (v->n != n && v->n != 1)
        FAIL(c, "%s: operand has %d registers per thread, result %d (layouts differ)", op_name(op->code), v->n, n);
    return true;
}

static bool lower_elementwise(Cg *c, const IrOp *op)
{
    ValueId r = op->results[0];
    Type rt = ir_type(c->f, r);
    int n = nelems_of(c, r, NULL);
    LVal *ops[3] = {0};
    for (int i = 0; i < op->noperands && i < 3; i++) {
        ops[i] = get(c, op->operands[i]);
        if (c->failed || !expect_same_layout(c, op, ops[i], n))
            return false;
    }
    Type t0 = ir_type(c->f, op->operands[0]);
    LLVMValueRef *el = new_el(c, n);
    for (int e = 0; e < n; e++) {
        LLVMValueRef x = at(ops[0], e), y = ops[1] ? at(ops[1], e) : NULL, v = NULL;
        switch (op->code) {
        case OP_CMP_EQ: case OP_CMP_NE: case OP_CMP_LT: case OP_CMP_LE: case OP_CMP_GT: case OP_CMP_GE:
            v = compare(c, op->code, t0, x, y);
            break;
        case OP_SELECT:
            v = LLVMBuildSelect(c->l->b, x, y, at(ops[2], e), "");
            break;
        case OP_FMA:
            if (dtype_is_float(rt.dtype)) {
                char name[32];
                LLVMValueRef args[3] = {widen(c, x), widen(c, y), widen(c, at(ops[2], e))};
                LLVMTypeRef ty = LLVMTypeOf(args[0]);
                snprintf(name, sizeof name, "llvm.fma.%s", fsuffix(c, ty));
                v = narrow(c, cg_call(c->l, name, ty, args, 3), rt.dtype);
            } else {
                v = LLVMBuildAdd(c->l->b, LLVMBuildMul(c->l->b, x, y, ""), at(ops[2], e), "");
            }
            break;
        case OP_CAST:
            v = cast(c, t0.dtype, rt.dtype, x);
            break;
        case OP_BITCAST:
            v = LLVMBuildBitCast(c->l->b, x, elem_ty(c, rt.dtype), "");
            break;
        default:
            v = op_num_operands(op->code) == 1 ? unary(c, op->code, rt.dtype, x)
                                               : arith2(c, op->code, rt.dtype, x, y);
        }
        if (!v)
            FAIL(c, "op %s on %s is not supported by codegen", op_name(op->code), dtype_name(rt.dtype));
        el[e] = v;
    }
    set(c, r, el, n, ir_value(c->f, r)->layout);
    return true;
}

/* An asm statement with side effects and a memory clobber that takes the n f32 values tied in
 * and out (so no use of them moves above it); returns the outputs. */
static LLVMValueRef *asm_tie_f32(Cg *c, const char *text, LLVMValueRef *vals, int n)
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
    LLVMValueRef call = asm_n(c, ret, text, cons.data, vals, n, true);
    strbuf_free(&cons);
    LLVMValueRef *out = new_el(c, n);
    for (int e = 0; e < n; e++)
        out[e] = LLVMBuildExtractValue(c->l->b, call, (unsigned)e, "");
    return out;
}

static bool lower_for(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    LVal *lo = get(c, op->operands[0]), *hi = get(c, op->operands[1]), *step = get(c, op->operands[2]);
    if (c->failed)
        return false;
    DType ivt = ir_type(c->f, op->operands[0]).dtype;
    bool sgn = dtype_is_signed(ivt);
    const IrRegion *body = &op->regions[0];
    int niter = op->noperands - 3;
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
    LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "for.head");
    LLVMBasicBlockRef bodyb = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "for.body");
    LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "for.exit");
    LLVMBuildBr(b, head);
    LLVMPositionBuilderAtEnd(b, head);
    LLVMValueRef iv = LLVMBuildPhi(b, elem_ty(c, ivt), "iv");
    /* the accumulator of a wgmma op of the memory pipeline (its group stays in flight across
     * the back edge), whose initial registers are pinned (below) */
    int pin_iter = cg_wgmma_acc_iter(c, op);
    set(c, body->args[0], new_el(c, 1), 1, 0);
    c->vals[body->args[0]].el[0] = iv;
    LVal **phis = arena_alloc(c->arena, sizeof(LVal *) * (size_t)imax(niter, 1));
    for (int i = 0; i < niter; i++) {
        LVal *init = get(c, op->operands[3 + i]);
        if (c->failed)
            return false;
        if (i == pin_iter && init->n > 0) {
            /* The accumulator's initial registers are defined before the loop's zero-trip test,
             * through an empty asm: else LLVM sinks the constant into the path that skips the
             * loop, and ptxas, seeing those moves define the accumulator on a path into the
             * final wait_group, serializes every wgmma (its C7515 note). */
            LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(pre));
            LLVMValueRef *pinned = new_el(c, init->n);
            for (int e = 0; e < init->n; e++)
                pinned[e] = at(init, e);
            pinned = asm_tie_f32(c, "// wgmma accumulator init", pinned, init->n);
            LLVMPositionBuilderAtEnd(b, head);
            LLVMValueRef *el = new_el(c, init->n);
            for (int e = 0; e < init->n; e++) {
                el[e] = LLVMBuildPhi(b, c->l->f32, "");
                LLVMAddIncoming(el[e], &pinned[e], &pre, 1);
            }
            set(c, body->args[1 + i], el, init->n, init->layout);
            phis[i] = &c->vals[body->args[1 + i]];
            continue;
        }
        LLVMValueRef *el = new_el(c, init->n);
        for (int e = 0; e < init->n; e++)
            el[e] = LLVMBuildPhi(b, LLVMTypeOf(init->el[e]), "");
        set(c, body->args[1 + i], el, init->n, init->layout);
        phis[i] = &c->vals[body->args[1 + i]];
    }
    /* range(lo, hi, step): continue while iv < hi (iv > hi for a negative step). */
    LLVMValueRef s = step->el[0], cond;
    LLVMValueRef up = LLVMBuildICmp(b, sgn ? LLVMIntSLT : LLVMIntULT, iv, hi->el[0], "");
    if (LLVMIsAConstantInt(s) && sgn && LLVMConstIntGetSExtValue(s) < 0)
        cond = LLVMBuildICmp(b, LLVMIntSGT, iv, hi->el[0], "");
    else if (LLVMIsAConstantInt(s) || !sgn)
        cond = up;
    else {
        LLVMValueRef down = LLVMBuildICmp(b, LLVMIntSGT, iv, hi->el[0], "");
        LLVMValueRef pos = LLVMBuildICmp(b, LLVMIntSGT, s, LLVMConstInt(LLVMTypeOf(s), 0, 0), "");
        cond = LLVMBuildSelect(b, pos, up, down, "");
    }
    LLVMBuildCondBr(b, cond, bodyb, exit);
    LLVMPositionBuilderAtEnd(b, bodyb);
    if (!lower_region(c, body))
        return false;
    const IrOp *y = c->term;
    if (!y || y->code != OP_YIELD || y->noperands != niter)
        FAIL(c, "for body does not end in a yield of %d values", niter);
    LLVMValueRef next = LLVMBuildAdd(b, iv, s, "");
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
    for (int i = 0; i < niter; i++) {
        LVal *yv = get(c, y->operands[i]);
        LVal *init = get(c, op->operands[3 + i]);
        if (c->failed)
            return false;
        if (yv->n != phis[i]->n && yv->n != 1)
            FAIL(c, "for: iter arg %d changes layout across the loop", i);
        for (int e = 0; e < phis[i]->n; e++) {
            LLVMValueRef in = at(init, e), out = at(yv, e);
            if (!(i == pin_iter && init->n > 0)) /* else added with the pinned init */
                LLVMAddIncoming(phis[i]->el[e], &in, &pre, 1);
            LLVMAddIncoming(phis[i]->el[e], &out, &latch, 1);
        }
    }
    LLVMAddIncoming(iv, &lo->el[0], &pre, 1);
    LLVMAddIncoming(iv, &next, &latch, 1);
    LLVMBuildBr(b, head);
    LLVMPositionBuilderAtEnd(b, exit);
    for (int i = 0; i < niter && i < op->nresults; i++)
        set(c, op->results[i], phis[i]->el, phis[i]->n, phis[i]->layout);
    return true;
}

static bool lower_if(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    LVal *cond = get(c, op->operands[0]);
    if (c->failed)
        return false;
    LLVMBasicBlockRef bb[2] = {LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "if.then"),
                               LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "if.else")};
    LLVMBasicBlockRef merge = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "if.end");
    LLVMBuildCondBr(b, cond->el[0], bb[0], bb[1]);
    const IrOp *ys[2] = {0};
    LLVMBasicBlockRef ends[2];
    for (int i = 0; i < 2; i++) {
        LLVMPositionBuilderAtEnd(b, bb[i]);
        c->term = NULL;
        if (i < op->nregions && !lower_region(c, &op->regions[i]))
            return false;
        ys[i] = c->term;
        ends[i] = LLVMGetInsertBlock(b);
        LLVMBuildBr(b, merge);
    }
    LLVMPositionBuilderAtEnd(b, merge);
    for (int r = 0; r < op->nresults; r++) {
        if (!ys[0] || !ys[1] || ys[0]->noperands <= r || ys[1]->noperands <= r)
            FAIL(c, "if: a branch does not yield result %d", r);
        LVal *v0 = get(c, ys[0]->operands[r]), *v1 = get(c, ys[1]->operands[r]);
        if (c->failed)
            return false;
        int n = imax(v0->n, v1->n);
        LLVMValueRef *el = new_el(c, n);
        for (int e = 0; e < n; e++) {
            LLVMValueRef in[2] = {at(v0, e), at(v1, e)};
            el[e] = LLVMBuildPhi(b, LLVMTypeOf(in[0]), "");
            LLVMAddIncoming(el[e], in, ends, 2);
        }
        set(c, op->results[r], el, n, v0->n >= v1->n ? v0->layout : v1->layout);
    }
    return true;
}

static bool lower_while(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    const IrRegion *before = &op->regions[0], *after = &op->regions[1];
    int nin = op->noperands;
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
    LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "while.before");
    LLVMBasicBlockRef bodyb = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "while.after");
    LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "while.exit");
    LLVMBuildBr(b, head);
    LLVMPositionBuilderAtEnd(b, head);
    for (int i = 0; i < nin; i++) {
        LVal *init = get(c, op->operands[i]);
        if (c->failed)
            return false;
        LLVMValueRef *el = new_el(c, init->n);
        for (int e = 0; e < init->n; e++) {
            el[e] = LLVMBuildPhi(b, LLVMTypeOf(init->el[e]), "");
            LLVMAddIncoming(el[e], &init->el[e], &pre, 1);
        }
        set(c, before->args[i], el, init->n, init->layout);
    }
    if (!lower_region(c, before))
        return false;
    const IrOp *cond = c->term;
    if (!cond || cond->code != OP_CONDITION)
        FAIL(c, "while: region 0 does not end in condition");
    LVal *cv = get(c, cond->operands[0]);
    if (c->failed)
        return false;
    LLVMBuildCondBr(b, cv->el[0], bodyb, exit);
    LLVMPositionBuilderAtEnd(b, bodyb);
    for (int i = 1; i < cond->noperands && i - 1 < after->nargs; i++)
        c->vals[after->args[i - 1]] = *get(c, cond->operands[i]);
    if (!lower_region(c, after))
        return false;
    const IrOp *y = c->term;
    if (!y || y->code != OP_YIELD || y->noperands != nin)
        FAIL(c, "while: region 1 does not yield %d values", nin);
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
    for (int i = 0; i < nin; i++) {
        LVal *ph = &c->vals[before->args[i]], *yv = get(c, y->operands[i]);
        if (c->failed)
            return false;
        for (int e = 0; e < ph->n; e++) {
            LLVMValueRef v = at(yv, e);
            LLVMAddIncoming(ph->el[e], &v, &latch, 1);
        }
    }
    LLVMBuildBr(b, head);
    LLVMPositionBuilderAtEnd(b, exit);
    for (int i = 0; i < op->nresults && i + 1 < cond->noperands; i++)
        c->vals[op->results[i]] = *get(c, cond->operands[i + 1]);
    return true;
}

/* assert: a thread that holds a false element traps (llvm.trap -> PTX trap); the launch then
 * fails with an error. The message is not printed on the GPU (the interpreter prints it). */
static bool lower_assert(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    LVal *v = get(c, op->operands[0]);
    if (c->failed)
        return false;
    LLVMValueRef bad = NULL;
    for (int e = 0; e < v->n; e++) {
        LLVMValueRef x = v->el[e];
        if (LLVMTypeOf(x) != c->l->i1)
            x = LLVMBuildICmp(b, LLVMIntNE, x, LLVMConstNull(LLVMTypeOf(x)), "");
        LLVMValueRef nx = LLVMBuildNot(b, x, "");
        bad = bad ? LLVMBuildOr(b, bad, nx, "") : nx;
    }
    LLVMBasicBlockRef trap = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "assert.fail");
    LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "assert.ok");
    LLVMBuildCondBr(b, bad, trap, cont);
    LLVMPositionBuilderAtEnd(b, trap);
    cg_call(c->l, "llvm.trap", c->l->void_t, NULL, 0);
    LLVMBuildUnreachable(b);
    LLVMPositionBuilderAtEnd(b, cont);
    return true;
}

static bool lower_op(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    switch (op->code) { /* shared-memory tiles have no registers: no distribution */
    case OP_LOCAL_ALLOC: case OP_SLOT: case OP_ASYNC_COPY: case OP_ASYNC_COMMIT: case OP_ASYNC_WAIT:
    case OP_BARRIER: case OP_LOCAL_LOAD: case OP_WGMMA: case OP_WGMMA_WAIT:
        return cg_lower_pipeline_op(c, op);
    default:
        break;
    }
    ValueId r = op->nresults ? op->results[0] : 0;
    Type rt = r ? ir_type(c->f, r) : type_scalar(DT_I32);
    int rlayout = r ? ir_value(c->f, r)->layout : 0;
    Dist *dr = NULL;
    int n = 1;
    if (r && rt.rank > 0 && op->code != OP_CONVERT_LAYOUT) {
        dr = dist_of(c, r);
        if (!dr)
            return false;
        n = dr->nelems;
    }
    LLVMValueRef *el;
    switch (op->code) {
    case OP_CONST: {
        LLVMValueRef k = const_of(c, rt, op->attr[0], op->fattr);
        el = new_el(c, n);
        for (int e = 0; e < n; e++)
            el[e] = k;
        set(c, r, el, n, rlayout);
        return true;
    }
    case OP_PROGRAM_ID: case OP_NUM_PROGRAMS: {
        static const char *axes = "xyz";
        char reg[16];
        int ax = op->attr[0] >= 0 && op->attr[0] < 3 ? (int)op->attr[0] : 0;
        snprintf(reg, sizeof reg, "%s.%c", op->code == OP_PROGRAM_ID ? "ctaid" : "nctaid", axes[ax]);
        el = new_el(c, 1);
        el[0] = pro_build_sreg(c, reg);
        set(c, r, el, 1, 0);
        return true;
    }
    case OP_MAKE_RANGE: {
        if (!dr)
            FAIL(c, "make_range without a layout");
        el = new_el(c, n);
        for (int e = 0; e < n; e++)
            el[e] = LLVMBuildAdd(b, coord(c, dr, e, 0), cg_i32(c->l, op->attr[0]), "");
        set(c, r, el, n, rlayout);
        return true;
    }
    case OP_SPLAT: {
        LVal *a = get(c, op->operands[0]);
        if (c->failed)
            return false;
        el = new_el(c, n);
        for (int e = 0; e < n; e++)
            el[e] = a->el[0];
        set(c, r, el, n, rlayout);
        return true;
    }
    case OP_MULTIPLE_OF: case OP_MAX_CONTIGUOUS: {
        LVal *a = get(c, op->operands[0]);
        if (c->failed)
            return false;
        c->vals[r] = *a;
        return true;
    }
    case OP_BROADCAST: case OP_EXPAND_DIMS: case OP_TRANS: case OP_RESHAPE: {
        ValueId av = op->operands[0];
        LVal *a = get(c, av);
        if (c->failed)
            return false;
        Type at_ = ir_type(c->f, av);
        if (at_.rank == 0) { /* a scalar: every element is it */
            el = new_el(c, n);
            for (int e = 0; e < n; e++)
                el[e] = a->el[0];
            set(c, r, el, n, rlayout);
            return true;
        }
        Dist *da = dist_get(c, a->layout, at_);
        if (!da)
            return false;
        int from[TRIC_MAX_RANK];
        bool can = op->code != OP_RESHAPE;
        for (int i = 0; i < at_.rank; i++) {
            if (op->code == OP_BROADCAST)
                from[i] = at_.shape[i] == 1 && rt.shape[i] != 1 ? -1 : i;
            else if (op->code == OP_EXPAND_DIMS)
                from[i] = i < op->attr[0] ? i : i + 1;
            else
                from[i] = -1;
        }
        int perm[TRIC_MAX_RANK];
        if (op->code == OP_TRANS)
            for (int i = 0; i < rt.rank; i++) {
                perm[i] = (int)op->attr[i];
                from[perm[i]] = i;
            }
        el = new_el(c, n);
        if (can && bases_agree(da, dr, from) && relabel(c, a, da, dr, from, el)) {
            set(c, r, el, n, rlayout);
            return true;
        }
        if (op->code == OP_RESHAPE || op->code == OP_TRANS)
            return convert_through_smem(c, op, a, da, r, perm);
        FAIL(c, "%s: the result layout is not the operand's with the dim %s; the layout pass must "
                "give them matching layouts", op_name(op->code),
             op->code == OP_BROADCAST ? "stretched" : "inserted");
    }
    case OP_CONVERT_LAYOUT: {
        ValueId av = op->operands[0];
        LVal *a = get(c, av);
        if (c->failed)
            return false;
        Type at_ = ir_type(c->f, av);
        if (at_.rank == 0 || a->layout == rlayout) {
            c->vals[r] = *a;
            return true;
        }
        const Layout *L = &c->f->layouts[rlayout];
        if (L->kind == LAYOUT_DOT_OPERAND && c->lazy_operand[r]) {
            /* Not materialized: the FMA dot stages its operands in shared memory itself. */
            c->vals[r] = *a;
            return true;
        }
        Dist *da = dist_get(c, a->layout, at_);
        if (!da)
            return false;
        return convert_through_smem(c, op, a, da, r, NULL);
    }
    case OP_ADDPTR: {
        LVal *p = get(c, op->operands[0]), *o = get(c, op->operands[1]);
        if (c->failed)
            return false;
        DType ot = ir_type(c->f, op->operands[1]).dtype;
        DType pointee = ir_type(c->f, op->operands[0]).dtype;
        LLVMTypeRef pt = mem_ty(c, pointee);
        el = new_el(c, n);
        for (int e = 0; e < n; e++) {
            LLVMValueRef off = at(o, e);
            /* GEP sign-extends its index; unsigned offsets are zero-extended first. */
            if (!dtype_is_signed(ot) && dtype_bits(ot) < 64)
                off = LLVMBuildZExt(b, off, c->l->i64, "");
            el[e] = LLVMBuildGEP2(b, pt, at(p, e), &off, 1, "");
        }
        set(c, r, el, n, rlayout);
        return true;
    }
    case OP_LOAD: return lower_load(c, op);
    case OP_STORE: return lower_store(c, op);
    case OP_DOT: return lower_dot(c, op);
    case OP_REDUCE_SUM: case OP_REDUCE_MAX: case OP_REDUCE_MIN: case OP_ARGMAX: case OP_ARGMIN:
        return lower_reduce(c, op);
    case OP_ASSERT: return lower_assert(c, op);
    case OP_FOR: return lower_for(c, op);
    case OP_IF: return lower_if(c, op);
    case OP_WHILE: return lower_while(c, op);
    case OP_YIELD: case OP_CONDITION:
        c->term = op;
        return true;
    default:
        if (op->nresults == 1)
            return lower_elementwise(c, op);
        FAIL(c, "codegen does not lower op %s", op_name(op->code));
    }
}

static bool lower_region(Cg *c, const IrRegion *r)
{
    c->term = NULL;
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        if (op->code == OP_YIELD || op->code == OP_CONDITION) {
            c->term = op;
            return true;
        }
        if (!lower_op(c, op) || c->failed)
            return false;
        c->term = NULL;
    }
    return true;
}

/* ---- what lower_pipeline.c borrows (internal.h) ---------------------------------------------- */

Dist *cg_dist(Cg *c, int layout, Type t) { return dist_get(c, layout, t); }
LVal *cg_value(Cg *c, ValueId v) { return get(c, v); }
void cg_set_value(Cg *c, ValueId v, LLVMValueRef *el, int n, int layout) { set(c, v, el, n, layout); }
LLVMValueRef *cg_regs(Cg *c, int n) { return new_el(c, n); }
LLVMValueRef cg_coord(Cg *c, const Dist *ds, int e, int d) { return coord(c, ds, e, d); }
LLVMValueRef cg_smem(Cg *c) { return smem_base(c); }
MmaBases *cg_mma_bases(Cg *c, const Layout *mma) { return mma_bases_get(c, mma); }
int *cg_local_index_map(Cg *c, const Dist *ds) { return local_index_map(c, ds); }
void cg_ldmatrix(Cg *c, LLVMValueRef ptr, int n, bool trans, LLVMValueRef *out) { ldmatrix(c, ptr, n, trans, out); }
LLVMValueRef cg_asm_n(Cg *c, LLVMTypeRef ret, const char *text, const char *constraints,
                      LLVMValueRef *args, int nargs, bool side_effects)
{
    return asm_n(c, ret, text, constraints, args, nargs, side_effects);
}
void cg_asm_void(Cg *c, const char *text) { asm_void(c, text); }
LLVMTypeRef cg_mem_type(Cg *c, DType t) { return mem_ty(c, t); }
int cg_access_width(Cg *c, const IrOp *mem_op, const Dist *ds) { return access_width(c, mem_op, ds); }
void cg_load_predicated(Cg *c, LLVMValueRef ptr, LLVMValueRef pred, LLVMValueRef *other, int w,
                        LLVMTypeRef mt, int eb, LLVMValueRef *out)
{
    load_predicated(c, ptr, pred, other, w, mt, eb, out);
}

/* ---- the kernel ------------------------------------------------------------------------------- */

static void annotate(Cg *c, const char *key, int value)
{
    CgLlvm *l = c->l;
    LLVMMetadataRef md[3] = {LLVMValueAsMetadata(c->fn), LLVMMDStringInContext2(l->ctx, key, strlen(key)),
                             LLVMValueAsMetadata(cg_i32(l, value))};
    LLVMValueRef node = LLVMMetadataAsValue(l->ctx, LLVMMDNodeInContext2(l->ctx, md, 3));
    LLVMAddNamedMetadataOperand(l->mod, "nvvm.annotations", node);
}

bool cg_lower(CgLlvm *l, const IrFunc *f, const CodegenOptions *o, bool *needs_libdevice,
              const char **math_name, Diag *d)
{
    Arena *arena = arena_new();
    Cg cg = {.l = l, .f = f, .o = o, .d = d, .arena = arena};
    Cg *c = &cg;
    c->vals = arena_alloc(arena, sizeof(LVal) * (size_t)(f->nvalues + 1));
    LLVMTypeRef *params = arena_alloc(arena, sizeof(LLVMTypeRef) * (size_t)(f->nparams + 1));
    for (int i = 0; i < f->nparams; i++)
        params[i] = val_ty(c, ir_type(f, f->params[i].value));
    LLVMTypeRef fty = LLVMFunctionType(l->void_t, params, (unsigned)f->nparams, 0);
    c->fn = LLVMAddFunction(l->mod, f->name, fty);
    LLVMSetFunctionCallConv(c->fn, 71); /* PTX_Kernel: an .entry */
    int threads = 32 * (f->num_warps > 0 ? f->num_warps : 4);
    annotate(c, "kernel", 1);
    annotate(c, "maxntidx", threads); /* .maxntid: ptxas knows the block size */
    for (int i = 0; i < f->nparams; i++) {
        LLVMValueRef p = LLVMGetParam(c->fn, (unsigned)i);
        if (f->params[i].name)
            LLVMSetValueName2(p, f->params[i].name, strlen(f->params[i].name));
        set(c, f->params[i].value, new_el(c, 1), 1, 0);
        c->vals[f->params[i].value].el[0] = p;
    }
    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(l->ctx, c->fn, "entry");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(l->ctx, c->fn, "body");
    c->pro = LLVMCreateBuilderInContext(l->ctx);
    LLVMPositionBuilderAtEnd(c->pro, entry);
    LLVMValueRef br = LLVMBuildBr(c->pro, body);
    LLVMPositionBuilderBefore(c->pro, br);
    c->tid = pro_build_sreg(c, "tid.x");
    c->lane = LLVMBuildAnd(c->pro, c->tid, cg_i32(l, 31), "lane");
    c->warp = LLVMBuildLShr(c->pro, c->tid, cg_i32(l, 5), "warp");
    LLVMPositionBuilderAtEnd(l->b, body);
    c->lazy_operand = arena_alloc(arena, sizeof(bool) * (size_t)(f->nvalues + 1));
    c->scratch_floor = f->shared_bytes;
    find_scratch_floor(c, &f->body);
    int32_t *uses = arena_alloc(arena, sizeof(int32_t) * (size_t)(f->nvalues + 1));
    int32_t *dot_uses = arena_alloc(arena, sizeof(int32_t) * (size_t)(f->nvalues + 1));
    count_uses(c, &f->body, uses, dot_uses);
    mark_lazy_operands(c, &f->body, uses, dot_uses);
    bool ok = lower_region(c, &f->body) && !c->failed;
    if (ok)
        LLVMBuildRetVoid(l->b);
    LLVMDisposeBuilder(c->pro);
    *needs_libdevice = c->needs_libdevice;
    *math_name = c->math_name;
    arena_free(arena);
    return ok;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

bool codegen_emit(const IrFunc *f, const CodegenOptions *o, StrBuf *llvm_ir, StrBuf *ptx, Diag *d)
{
    /* TRIC_CODEGEN_TIMES=1 prints where the time goes (lowering, libdevice, O3 + emission). */
    bool times = getenv("TRIC_CODEGEN_TIMES") != NULL;
    double t0 = now_ms();
    CgLlvm l;
    if (!cg_llvm_init(&l, f->name, o, d)) {
        cg_llvm_dispose(&l);
        return false;
    }
    bool needs_libdevice = false;
    const char *math_name = NULL;
    double t1 = now_ms();
    bool ok = cg_lower(&l, f, o, &needs_libdevice, &math_name, d);
    double t2 = now_ms();
    if (ok && needs_libdevice)
        ok = cg_link_libdevice(&l, o, math_name ? math_name : "?", d);
    double t3 = now_ms();
    if (ok)
        ok = cg_emit(&l, o, llvm_ir, ptx, d);
    double t4 = now_ms();
    cg_llvm_dispose(&l);
    if (times)
        fprintf(stderr, "codegen %s: init %.1f ms, lower %.1f ms, libdevice %.1f ms, "
                        "optimize+emit %.1f ms, dispose %.1f ms\n",
                f->name, t1 - t0, t2 - t1, t3 - t2, t4 - t3, now_ms() - t4);
    return ok;
}
