/* tma.c: the pipeline's copies through the tensor memory accelerator (sm_90a; PTX ISA 9.7.9.27
 * cp.async.bulk.tensor, 9.7.13.15 mbarrier; Triton's TMA lowering of descriptor loads, applied here
 * to every tile whose addresses are affine in launch-known strides).
 *
 * Requires: pipeline (its loops: a prologue of commit groups before the loop, in the loop one
 * async_wait and barrier before the slot views, the copies for a later iteration and one commit,
 * async_wait 0 after it) and swizzle (each buffer's #shared layout). Guarantees: when every
 * async_copy of the function qualifies (below), each becomes a tma_load of a tensor map made by
 * the runtime at launch (IrFunc.tmaps), one thread copying the whole tile; each commit group
 * arrives once on an mbarrier of the group's slot (mbar_expect, announcing the group's bytes);
 * the loop's async_wait + barrier become an mbar_wait on the extract slot's mbarrier for the
 * phase of this iteration, ((iv - lo) / step / S) & 1; the async_wait 0 after the loop becomes
 * mbar_inval (no copy is in flight there: the copies past the last iteration are predicated off).
 * The addresses and masks the copies took are dead then (dce): no thread computes them.
 *
 * A copy qualifies when its pointer tile is base + sum of terms (through splat, broadcast,
 * expand_dims, int casts, add, sub, mul by a launch-known value, addptr), base a pointer parameter
 * divisible by 16, each tile dim's index (arange) appearing once with a launch-known stride
 * (a constant or a product of integer parameters), the contiguous one (the buffer's order[0])
 * with stride 1 and the other with a stride known to be a multiple of 16 bytes; the other terms
 * scalars, each added to the coordinate of the dim whose stride divides its own (a new dim of box
 * 1 when none does). A loop-carried pointer advanced by launch-known steps is its init plus the
 * iteration's index times the step. A coordinate `(x + arange) % n` counts as x + arange bounded
 * at n, when the rows past n reach only masked-off stores (wrap_is_masked). The mask, when there
 * is one, is the pipeline's predicate (a splat scalar) and bounds on the tile's own coordinates,
 * `0 <= c` and `c < n` (n launch-known once the coordinate's offset from the compared value is
 * added: seed 1's `offs_k < K - k * BLOCK_K`): those become the map's dims (TMA reads zero
 * outside them, as the masked load did); an unchecked dim is unbounded. No `other` but zero. */
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

#define MAX_PIECES   24
#define DECLINE(why) return (t->why_not = (why), false)

/* One term of an address or coordinate: sign * sigma * (x, or the constant k when x is 0, or
 * the index along tile dim `dim` when dim >= 0). */
typedef struct Piece {
    LaunchValue sigma;
    ValueId x;
    int64_t k;
    int dim;
    int sign;
    /* from `(x + arange) % n` (seed 1's offs_am): the rem's value id on the index piece and on
     * the scalar pieces of its coordinate, and n on the index piece; 0 elsewhere */
    ValueId wrap;
    LaunchValue mod;
} Piece;

typedef struct Pieces {
    int n;
    Piece p[MAX_PIECES];
} Pieces;

/* What one async_copy becomes. */
typedef struct CopyPlan {
    IrOp *copy;
    TensorMap map;
    Pieces coord[TRIC_TMAP_MAX_RANK]; /* each dim's coordinate: scalar pieces, sigma = their
                                         multiple of the dim's stride */
    ValueId pred;                     /* the splat predicate, 0 = always */
    int64_t bytes;
    /* a tile dim whose coordinate wraps (`% n`): TMA reads zeros past n where the copy read the
     * wrapped rows, so every output those rows reach must be masked off (wrap_is_masked) */
    int wrap_dim[2], wrap_map_dim[2], nwrap_dims;
} CopyPlan;

typedef struct Tma {
    IrFunc *f;
    const char *why_not;
    SrcLoc where; /* the copy or loop looked at when why_not was set: the remark's location */
    CopyPlan *plans;
    int nplans;
} Tma;

/* ---- launch-known values ------------------------------------------------------------------ */

static const IrOp *def_of(const IrFunc *f, ValueId v) { return v > 0 ? f->values[v].def : NULL; }

static int param_index(const IrFunc *f, ValueId v)
{
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i].value == v)
            return i;
    return -1;
}

static bool is_int(Type t) { return !t.is_ptr && !t.is_smem && !dtype_is_float(t.dtype); }

static bool lv_mul(LaunchValue *a, const LaunchValue *b)
{
    if (a->nparams + b->nparams > TRIC_LAUNCH_MAX_PARAMS)
        return false;
    a->constant *= b->constant;
    for (int i = 0; i < b->nparams; i++)
        a->params[a->nparams++] = b->params[i];
    return true;
}

/* v (a scalar, or a splat / broadcast of one) as a launch-known value: an integer constant, an
 * integer parameter, or a product of those. */
static bool launch_known(const IrFunc *f, ValueId v, LaunchValue *out)
{
    const IrOp *d = def_of(f, v);
    while (d &&
           (d->code == OP_SPLAT || d->code == OP_BROADCAST || d->code == OP_CONVERT_LAYOUT ||
            (d->code == OP_CAST && is_int(ir_type(f, d->operands[0])) && is_int(ir_type(f, v))))) {
        v = d->operands[0];
        d = def_of(f, v);
    }
    if (!is_int(ir_type(f, v)))
        return false;
    *out = (LaunchValue){.constant = 1};
    if (!d) {
        int k = param_index(f, v);
        if (k < 0 || ir_type(f, v).rank != 0)
            return false;
        out->params[out->nparams++] = k;
        return true;
    }
    if (d->code == OP_CONST) { /* a scalar, or a tile of one value (canonicalize's splat) */
        out->constant = d->attr[0];
        return true;
    }
    LaunchValue a, b;
    return d->code == OP_MUL && launch_known(f, d->operands[0], &a) &&
           launch_known(f, d->operands[1], &b) && lv_mul(&a, &b) && (*out = a, true);
}

/* ---- affine terms --------------------------------------------------------------------------- */

static bool push(Pieces *ps, Piece p)
{
    if (ps->n >= MAX_PIECES)
        return false;
    ps->p[ps->n++] = p;
    return true;
}

static bool terms_of(const IrFunc *f, ValueId v, Pieces *out, int sign);

static bool scaled_terms(const IrFunc *f, ValueId v, const LaunchValue *by, Pieces *out, int sign)
{
    Pieces inner = {0};
    if (!terms_of(f, v, &inner, sign))
        return false;
    for (int i = 0; i < inner.n; i++)
        if (!lv_mul(&inner.p[i].sigma, by) || !push(out, inner.p[i]))
            return false;
    return true;
}

/* The terms of integer value v (a scalar or a tile of the copy's shape or one it broadcasts to),
 * appended to out with the given sign. Tile dims are v's own (expand_dims renumbers them). */
static bool terms_of(const IrFunc *f, ValueId v, Pieces *out, int sign)
{
    const IrOp *d = def_of(f, v);
    Type t = ir_type(f, v);
    Piece leaf = {.sigma = {.constant = 1}, .x = v, .dim = -1, .sign = sign};
    if (!d)
        return t.rank == 0 && push(out, leaf); /* a parameter or loop variable */
    switch (d->code) {
    case OP_CAST: /* an integer widened or narrowed keeps its value in range */
        if (!is_int(ir_type(f, d->operands[0])))
            break;
        return terms_of(f, d->operands[0], out, sign);
    case OP_BROADCAST:
    case OP_CONVERT_LAYOUT:
    case OP_SPLAT: return terms_of(f, d->operands[0], out, sign);
    case OP_EXPAND_DIMS: {
        int first = out->n;
        if (!terms_of(f, d->operands[0], out, sign))
            return false;
        for (int i = first; i < out->n; i++)
            if (out->p[i].dim >= d->attr[0])
                out->p[i].dim++;
        return true;
    }
    case OP_MAKE_RANGE:
        if (t.rank != 1)
            return false;
        if (!push(out, (Piece){.sigma = {.constant = 1}, .dim = 0, .sign = sign}))
            return false;
        return d->attr[0] == 0 ||
               push(out,
                    (Piece){.sigma = {.constant = 1}, .k = d->attr[0], .dim = -1, .sign = sign});
    case OP_CONST:
        if (t.rank != 0 && t.rank != 1 && t.rank != 2)
            return false;
        return push(out,
                    (Piece){.sigma = {.constant = 1}, .k = d->attr[0], .dim = -1, .sign = sign});
    case OP_REM: {
        /* (x + arange) % n with n launch-known: the coordinate x + arange, marked as wrapping
         * at n (plan_copy bounds the map's dim at n and checks that the rows past it only reach
         * masked-off outputs) */
        LaunchValue n;
        int first = out->n, nidx = 0;
        if (t.rank == 0)
            break; /* a scalar remainder (pid % num_pid_n) is just a value */
        if (sign != 1 || !launch_known(f, d->operands[1], &n) ||
            !terms_of(f, d->operands[0], out, 1))
            return false;
        for (int i = first; i < out->n; i++) {
            Piece *p = &out->p[i];
            if (p->wrap ||
                (p->dim >= 0 && (p->sign != 1 || p->sigma.constant != 1 || p->sigma.nparams)))
                return false;
            nidx += p->dim >= 0;
            p->wrap = v;
            if (p->dim >= 0)
                p->mod = n;
        }
        return nidx == 1;
    }
    case OP_ADD:
        return terms_of(f, d->operands[0], out, sign) && terms_of(f, d->operands[1], out, sign);
    case OP_SUB:
        return terms_of(f, d->operands[0], out, sign) && terms_of(f, d->operands[1], out, -sign);
    case OP_MUL: {
        LaunchValue by;
        if (launch_known(f, d->operands[1], &by))
            return scaled_terms(f, d->operands[0], &by, out, sign);
        if (launch_known(f, d->operands[0], &by))
            return scaled_terms(f, d->operands[1], &by, out, sign);
        break;
    }
    default: break;
    }
    return t.rank == 0 && push(out, leaf); /* a scalar the copy only offsets by */
}

/* The for op of r (or nested in it) whose body has block argument v, and v's index there. */
static const IrOp *owner_loop(const IrRegion *r, ValueId v, int *arg)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        if (op->code == OP_FOR)
            for (int a = 1; a < op->regions[0].nargs; a++)
                if (op->regions[0].args[a] == v) {
                    *arg = a;
                    return op;
                }
        for (int k = 0; k < op->nregions; k++) {
            const IrOp *l = owner_loop(&op->regions[k], v, arg);
            if (l)
                return l;
        }
    }
    return NULL;
}

/* A pointer iter arg p of loop L (`a_ptrs += BLOCK_K * stride_ak`: its next value p + d, d
 * made of constants and launch-known strides) is its init plus j * d, j = (iv - lo) / step the
 * iteration's index: the pieces of j * d (on iv, and on lo), appended to out; *init its init. */
static bool carried_pointer_terms(const IrFunc *f, ValueId p, ValueId *init, Pieces *out)
{
    int a;
    const IrOp *L = owner_loop(&f->body, p, &a);
    if (!L)
        return false;
    const IrRegion *body = &L->regions[0];
    const IrOp *y = body->ops[body->nops - 1];
    const IrOp *next =
        y->code == OP_YIELD && a - 1 < y->noperands ? def_of(f, y->operands[a - 1]) : NULL;
    int64_t step, lo = 0;
    bool lo_const = passes_const_int(f, L->operands[0], &lo);
    if (!next || next->code != OP_ADDPTR || next->operands[0] != p ||
        !passes_const_int(f, L->operands[2], &step) || step <= 0)
        return false;
    Pieces d = {0};
    if (!terms_of(f, next->operands[1], &d, 1))
        return false;
    for (int i = 0; i < d.n; i++) {
        const Piece *q = &d.p[i];
        int64_t c = q->sign * q->sigma.constant * q->k;
        if (q->dim >= 0 || q->x || q->wrap || c % step)
            return false; /* only constants times launch-known strides advance the pointer */
        Piece on_iv = {.sigma = q->sigma, .x = body->args[0], .dim = -1, .sign = 1};
        on_iv.sigma.constant = c / step;
        if (!push(out, on_iv))
            return false;
        Piece on_lo = on_iv;
        on_lo.sign = -1;
        if (lo_const) {
            on_lo.x = 0;
            on_lo.k = lo;
        } else {
            on_lo.x = L->operands[0];
        }
        if ((on_lo.x || on_lo.k) && !push(out, on_lo))
            return false;
    }
    *init = L->operands[3 + a - 1];
    return true;
}

/* The pointer tile p as base parameter + terms; false when its root is not a parameter. */
static bool pointer_terms(const IrFunc *f, ValueId p, int *base, Pieces *out)
{
    for (;;) {
        const IrOp *d = def_of(f, p);
        if (!d) {
            *base = param_index(f, p);
            if (*base >= 0)
                return true;
            ValueId init;
            if (!carried_pointer_terms(f, p, &init, out))
                return false;
            p = init;
            continue;
        }
        if (d->code == OP_SPLAT || d->code == OP_BROADCAST || d->code == OP_CONVERT_LAYOUT) {
            p = d->operands[0];
        } else if (d->code == OP_EXPAND_DIMS) {
            /* a pointer tile expanded then broadcast: its offsets' dims follow */
            int first = out->n;
            if (!pointer_terms(f, d->operands[0], base, out))
                return false;
            for (int i = first; i < out->n; i++)
                if (out->p[i].dim >= d->attr[0])
                    out->p[i].dim++;
            return true;
        } else if (d->code == OP_ADDPTR) {
            int first = out->n;
            if (!terms_of(f, d->operands[1], out, 1))
                return false;
            /* the offsets' rank may be below the pointers' (a scalar offset) */
            (void)first;
            p = d->operands[0];
        } else {
            return false;
        }
    }
}

/* ---- one copy ------------------------------------------------------------------------------- */

/* Collects the conjuncts of an i1 mask (and-trees, through broadcast / convert_layout). */
static bool conjuncts(const IrFunc *f, ValueId m, ValueId *out, int *n, int max)
{
    const IrOp *d = def_of(f, m);
    if (d && (d->code == OP_BROADCAST || d->code == OP_CONVERT_LAYOUT) &&
        ir_type(f, d->operands[0]).rank == ir_type(f, m).rank)
        return conjuncts(f, d->operands[0], out, n, max);
    if (d && d->code == OP_AND && ir_type(f, m).rank > 0)
        return conjuncts(f, d->operands[0], out, n, max) &&
               conjuncts(f, d->operands[1], out, n, max);
    if (*n >= max)
        return false;
    out[(*n)++] = m;
    return true;
}

/* Do the scalar pieces a and b (constants and values, each with a multiple) sum to the same? */
static bool same_sum(const Pieces *a, const Pieces *b)
{
    if (a->n != b->n)
        return false;
    bool used[MAX_PIECES] = {0};
    for (int i = 0; i < a->n; i++) {
        bool found = false;
        for (int j = 0; j < b->n && !found; j++)
            if (!used[j] && a->p[i].x == b->p[j].x && a->p[i].k == b->p[j].k &&
                a->p[i].sign * a->p[i].sigma.constant == b->p[j].sign * b->p[j].sigma.constant &&
                launch_value_same_params(&a->p[i].sigma, &b->p[j].sigma))
                found = used[j] = true;
        if (!found)
            return false;
    }
    return true;
}

/* The map dim (0 or 1) along which idx (a tile index plus scalar terms) runs; appends to *diff
 * the map's coordinate along it minus idx's scalar terms (what turns a bound on idx into one on
 * the coordinate). -1 when idx is not such a value. */
static int coordinate_dim(const IrFunc *f, const CopyPlan *pl, const int *tile_dim_of_map,
                          ValueId idx, Pieces *diff)
{
    Pieces ps = {0};
    if (!terms_of(f, idx, &ps, 1))
        return -1;
    int dim = -1, nidx = 0;
    for (int i = 0; i < ps.n; i++) {
        const Piece *p = &ps.p[i];
        if (p->dim >= 0) {
            if (p->sign != 1 || p->sigma.constant != 1 || p->sigma.nparams || p->wrap)
                return -1;
            dim = p->dim;
            nidx++;
        }
    }
    int k = dim == tile_dim_of_map[0] ? 0 : dim == tile_dim_of_map[1] ? 1 : -1;
    if (nidx != 1 || k < 0)
        return -1;
    for (int i = 0; i < ps.n; i++) {
        Piece p = ps.p[i];
        if (p.dim >= 0)
            continue;
        p.sign = -p.sign;
        if (!push(diff, p))
            return -1;
    }
    for (int i = 0; i < pl->coord[k].n; i++)
        if (!push(diff, pl->coord[k].p[i]))
            return -1;
    return k;
}

/* The sum of scalar pieces as one launch-known value: terms on the same value (or constants)
 * with the same parameters combined, parameter-valued terms folded into the product; at most one
 * non-zero term may remain, a constant times parameters (none: 0). */
static bool sum_to_launch_value(const IrFunc *f, const Pieces *ps, LaunchValue *out)
{
    LaunchValue keys[MAX_PIECES];
    int64_t coef[MAX_PIECES];
    ValueId xs[MAX_PIECES];
    int nkeys = 0;
    for (int i = 0; i < ps->n; i++) {
        const Piece *p = &ps->p[i];
        if (p->dim >= 0)
            return false;
        LaunchValue key = p->sigma;
        key.constant = 1;
        ValueId x = p->x;
        int64_t c = p->sign * p->sigma.constant * (x ? 1 : p->k);
        int pi = x ? param_index(f, x) : -1;
        if (pi >= 0 && is_int(ir_type(f, x))) {
            LaunchValue one = {.constant = 1, .nparams = 1, .params = {pi}};
            if (!lv_mul(&key, &one))
                return false;
            x = 0;
        }
        int j = 0;
        while (j < nkeys && !(xs[j] == x && launch_value_same_params(&keys[j], &key)))
            j++;
        if (j == nkeys) {
            keys[nkeys] = key;
            xs[nkeys] = x;
            coef[nkeys++] = 0;
        }
        coef[j] += c;
    }
    int live = -1;
    for (int j = 0; j < nkeys; j++)
        if (coef[j] != 0) {
            if (live >= 0 || xs[j])
                return false;
            live = j;
        }
    if (live < 0) {
        *out = (LaunchValue){.constant = 0};
        return true;
    }
    *out = keys[live];
    out->constant = coef[live];
    return true;
}

/* The tile a copy writes, as a tensor map's box sees it: the slot view's type, its element
 * size, the #shared layout's swizzle and its inner (contiguous) and outer dims. */
typedef struct CopyTile {
    Type vt;
    int eb, inner, outer, sw;
} CopyTile;

/* The copy's destination: a 2-d slot view in a #shared layout that a box can fill, whole swizzle
 * atoms of an element type a tensor map has; or an unswizzled slot (an FMA dot's,
 * pipeline_loops.c plain_slot_layout) whose rows are a multiple of 16 bytes, one box of at most
 * 256 elements along each dim (cuTensorMapEncodeTiled's CU_TENSOR_MAP_SWIZZLE_NONE). */
static bool copy_tile(Tma *t, const IrOp *copy, CopyTile *ct)
{
    IrFunc *f = t->f;
    if (copy->noperands > 3 && copy->operands[3])
        DECLINE("a copy's `other` is not zero (TMA fills with zeros)");
    const IrOp *view = def_of(f, copy->operands[0]);
    if (!view || view->code != OP_SLOT)
        DECLINE("a copy's destination is not a slot view");
    ValueId buf = view->operands[0];
    Type vt = ir_type(f, copy->operands[0]);
    int lay = f->values[buf].layout;
    if (vt.rank != 2 || lay <= 0 || f->layouts[lay].kind != LAYOUT_SHARED)
        DECLINE("a copy's tile is not 2-d in a #shared layout");
    const Layout *sl = &f->layouts[lay];
    int eb = dtype_bytes(vt.dtype), inner = sl->shared.order[0], outer = 1 - inner;
    int sw = sl->shared.swizzle;
    if (sw == 0 && sl->shared.max_phase <= 1) {
        if ((int64_t)vt.shape[inner] * eb % 16 || vt.shape[inner] > 256 || vt.shape[outer] > 256)
            DECLINE("an unswizzled copy's tile is not rows of a multiple of 16 bytes, at most 256 "
                    "by 256 elements");
    } else if ((sw != 32 && sw != 64 && sw != 128) || (int64_t)vt.shape[inner] * eb % sw ||
               vt.shape[outer] > 256)
        DECLINE("a copy's tile is not whole swizzle atoms of at most 256 rows");
    if (vt.dtype == DT_I1 || (eb != 1 && eb != 2 && eb != 4))
        DECLINE("a copy's element type has no tensor-map form");
    *ct = (CopyTile){.vt = vt, .eb = eb, .inner = inner, .outer = outer, .sw = sw};
    return true;
}

/* The strides of the tile dims in the address pieces ps: each index once, with sign +1, the
 * inner one 1 and the outer one a multiple of 16 bytes. */
static bool tile_strides(Tma *t, const Pieces *ps, const CopyTile *ct, LaunchValue stride[2])
{
    IrFunc *f = t->f;
    int seen[2] = {0, 0};
    for (int i = 0; i < ps->n; i++) {
        const Piece *p = &ps->p[i];
        if (p->dim < 0)
            continue;
        if (p->dim > 1 || p->sign != 1 || seen[p->dim]++)
            DECLINE("a copy's tile index appears twice or negated in its addresses");
        stride[p->dim] = p->sigma;
    }
    if (!seen[0] || !seen[1])
        DECLINE("a copy's addresses do not move along both tile dims");
    if (stride[ct->inner].constant != 1 || stride[ct->inner].nparams)
        DECLINE("a copy's contiguous dim does not have stride 1");
    /* the outer stride must be a multiple of 16 bytes: its constant times the divisibility the
     * signature promises for each parameter */
    int64_t div = stride[ct->outer].constant * ct->eb;
    for (int i = 0; i < stride[ct->outer].nparams; i++)
        div *= f->params[stride[ct->outer].params[i]].divisibility;
    if (div % 16 || stride[ct->outer].constant <= 0)
        DECLINE("a copy's row stride is not known to be a multiple of 16 bytes");
    return true;
}

/* The scalar pieces of the address go to the map dim whose stride divides theirs, the largest
 * such; else to a dim of their own (box 1). */
static bool place_scalar_pieces(Tma *t, const Pieces *ps, const CopyTile *ct, CopyPlan *pl)
{
    IrFunc *f = t->f;
    TensorMap *m = &pl->map;
    for (int i = 0; i < ps->n; i++) {
        Piece p = ps->p[i];
        if (p.dim >= 0)
            continue;
        /* a coordinate is 32-bit (PTX ISA 9.7.9.27): an offset the kernel computes in 64 bits
         * may not fit */
        if (p.x && dtype_bytes(ir_type(f, p.x).dtype) > 4)
            DECLINE("a copy's offset is a 64-bit value (TMA coordinates are 32-bit)");
        int best = -1;
        /* a wrapped coordinate's own offset stays with its dim (the bound is on their sum) */
        for (int j = 0; p.wrap && j < ps->n; j++)
            if (ps->p[j].dim >= 0 && ps->p[j].wrap == p.wrap)
                best = ps->p[j].dim == ct->inner ? 0 : 1;
        if (p.wrap && (best < 0 || !launch_value_same_params(&p.sigma, &m->strides[best]) ||
                       p.sigma.constant % m->strides[best].constant))
            DECLINE("a copy's wrapped coordinate is not along one tile dim");
        for (int k = 0; !p.wrap && k < m->rank; k++)
            if (launch_value_same_params(&p.sigma, &m->strides[k]) && m->strides[k].constant != 0 &&
                p.sigma.constant % m->strides[k].constant == 0 &&
                (best < 0 || m->strides[k].constant > m->strides[best].constant))
                best = k;
        if (best < 0) {
            if (m->rank >= TRIC_TMAP_MAX_RANK)
                DECLINE("a copy's addresses need more than 5 tensor-map dims");
            best = m->rank++;
            m->strides[best] = p.sigma;
            m->box[best] = 1;
            m->dims[best].unbounded = true;
            int64_t d2 = p.sigma.constant * ct->eb;
            for (int j = 0; j < p.sigma.nparams; j++)
                d2 *= f->params[p.sigma.params[j]].divisibility;
            if (d2 % 16 || p.sigma.constant <= 0)
                DECLINE("a copy's outer offset stride is not known to be a multiple of 16 bytes");
        }
        p.sigma.constant /= m->strides[best].constant;
        p.sigma.nparams = 0;
        if (!push(&pl->coord[best], p))
            DECLINE("a copy's coordinate has too many terms");
    }
    return true;
}

/* A wrapped dim (`% n`) is bounded at n: TMA reads zeros past it, where the copy read the rows
 * it wrapped to; wrap_is_masked checks that those rows reach no output. */
static bool bound_wrapped_dims(Tma *t, const Pieces *ps, const CopyTile *ct, CopyPlan *pl)
{
    for (int i = 0; i < ps->n; i++) {
        const Piece *p = &ps->p[i];
        if (p->dim < 0 || !p->wrap)
            continue;
        int k = p->dim == ct->inner ? 0 : 1;
        if (pl->nwrap_dims >= 2)
            DECLINE("a copy wraps one dim twice");
        pl->map.dims[k] = p->mod;
        pl->wrap_map_dim[pl->nwrap_dims] = k;
        pl->wrap_dim[pl->nwrap_dims++] = p->dim;
    }
    return true;
}

/* The copy's mask: a splat predicate (pl->pred) and bounds on the tile's coordinates, which
 * become the map's dims. */
static bool plan_mask(Tma *t, ValueId mask, const int *tile_dim_of_map, CopyPlan *pl)
{
    IrFunc *f = t->f;
    TensorMap *m = &pl->map;
    ValueId cj[16];
    int n = 0;
    if (!conjuncts(f, mask, cj, &n, 16))
        DECLINE("a copy's mask has too many terms");
    for (int i = 0; i < n; i++) {
        const IrOp *d = def_of(f, cj[i]);
        if (d && d->code == OP_SPLAT && ir_type(f, d->operands[0]).rank == 0) {
            if (pl->pred && pl->pred != d->operands[0])
                DECLINE("a copy's mask has two predicates");
            pl->pred = d->operands[0];
            continue;
        }
        /* idx < b, or idx >= 0, where idx is a tile index plus scalars and the map's coordinate
         * c along that dim is idx + D: the bound on c is b + D, which must come out
         * launch-known (seed 1's `offs_k < K - k * BLOCK_K` with the pointer advanced by
         * k * BLOCK_K: c < K) */
        bool upper = d && d->code == OP_CMP_LT, lower = d && d->code == OP_CMP_GE;
        Pieces sum = {0};
        int k = upper || lower ? coordinate_dim(f, pl, tile_dim_of_map, d->operands[0], &sum) : -1;
        LaunchValue bound;
        if (k < 0 || !terms_of(f, d->operands[1], &sum, 1) || !sum_to_launch_value(f, &sum, &bound))
            DECLINE("a copy's mask is not a bound on the tile's own coordinates");
        if (lower && (bound.constant != 0 || bound.nparams))
            DECLINE("a copy's mask bounds a coordinate from below, not at 0");
        if (upper && bound.constant <= 0)
            DECLINE("a copy's mask bounds a coordinate above by a value not known positive");
        if (upper) {
            if (!m->dims[k].unbounded && !launch_value_equal(&m->dims[k], &bound))
                DECLINE("a copy's mask bounds one dim twice");
            m->dims[k] = bound;
        }
    }
    return true;
}

/* The tensor map of a tile at pointers ptr (a parameter plus affine offsets) under mask (0 for
 * none), the tile as ct describes it: pl's map, coordinates and predicate. */
static bool plan_addresses(Tma *t, ValueId ptr, ValueId mask, const CopyTile *ct, CopyPlan *pl)
{
    IrFunc *f = t->f;
    int base;
    Pieces ps = {0};
    if (!pointer_terms(f, ptr, &base, &ps))
        DECLINE("a copy's addresses are not a parameter plus affine offsets");
    if (f->params[base].divisibility < 16)
        DECLINE("a copy's base pointer is not known to be 16-byte aligned");
    LaunchValue stride[2];
    if (!tile_strides(t, &ps, ct, stride))
        return false;
    TensorMap *m = &pl->map;
    m->base_param = base;
    m->dtype = ct->vt.dtype;
    m->rank = 2;
    m->strides[0] = stride[ct->inner];
    m->strides[1] = stride[ct->outer];
    m->box[0] =
        ct->sw ? ct->sw / ct->eb : (int)ct->vt.shape[ct->inner]; /* one box when unswizzled */
    m->box[1] = (int)ct->vt.shape[ct->outer];
    m->swizzle = ct->sw;
    m->dims[0].unbounded = m->dims[1].unbounded = true;
    int tile_dim_of_map[2] = {ct->inner, ct->outer};
    if (!place_scalar_pieces(t, &ps, ct, pl) || !bound_wrapped_dims(t, &ps, ct, pl))
        return false;
    if (mask && !plan_mask(t, mask, tile_dim_of_map, pl))
        return false;
    pl->bytes = (int64_t)ct->vt.shape[0] * ct->vt.shape[1] * ct->eb;
    return true;
}

/* Plans copy as a tma_load; false (t->why_not) when it does not qualify. */
static bool plan_copy(Tma *t, IrOp *copy, CopyPlan *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->copy = copy;
    CopyTile ct;
    if (!copy_tile(t, copy, &ct))
        return false;
    return plan_addresses(t, copy->operands[1], copy->noperands > 2 ? copy->operands[2] : 0, &ct,
                          pl);
}

/* ---- wrapped coordinates: what the rows past the bound reach --------------------------------- */

typedef struct Reach {
    Tma *t;
    int acc_dim;         /* the accumulator dim the wrapped tile dim becomes */
    const Pieces *coord; /* the wrapped coordinate's scalar terms */
    LaunchValue bound;   /* n */
    ValueId work[256];
    int nwork;
    bool *seen;
} Reach;

static bool reach_push(Reach *rc, ValueId v)
{
    if (rc->seen[v])
        return true;
    rc->seen[v] = true;
    if (rc->nwork >= 256)
        return false;
    rc->work[rc->nwork++] = v;
    return true;
}

/* Is this store's mask `X < n` along the accumulator dim, X the wrapped coordinate? */
static bool store_masks_wrap(const Reach *rc, const IrOp *store)
{
    const IrFunc *f = rc->t->f;
    ValueId cj[16];
    int n = 0;
    if (store->noperands < 3 || !store->operands[2] ||
        !conjuncts(f, store->operands[2], cj, &n, 16))
        return false;
    for (int i = 0; i < n; i++) {
        const IrOp *d = def_of(f, cj[i]);
        Pieces x = {0}, scal = {0}, b = {0};
        LaunchValue bound;
        if (!d || d->code != OP_CMP_LT || !terms_of(f, d->operands[0], &x, 1) ||
            !terms_of(f, d->operands[1], &b, 1) || !sum_to_launch_value(f, &b, &bound) ||
            !launch_value_equal(&bound, &rc->bound))
            continue;
        int nidx = 0;
        bool ok = true;
        for (int j = 0; j < x.n && ok; j++) {
            const Piece *p = &x.p[j];
            if (p->dim >= 0) {
                ok = p->dim == rc->acc_dim && p->sign == 1 && p->sigma.constant == 1 &&
                     !p->sigma.nparams && !p->wrap;
                nidx++;
            } else {
                ok = !p->wrap && push(&scal, *p);
            }
        }
        if (ok && nidx == 1 && same_sum(&scal, rc->coord))
            return true;
    }
    return false;
}

/* The uses of v in r (parent: r's op, for a yield): each must keep the accumulator's rows (or
 * columns) apart, and a store of it must be masked off past the bound. */
static bool reach_uses(Reach *rc, const IrRegion *r, const IrOp *parent, ValueId v)
{
    const IrFunc *f = rc->t->f;
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            if (!reach_uses(rc, &op->regions[k], op, v))
                return false;
        for (int o = 0; o < op->noperands; o++) {
            if (op->operands[o] != v)
                continue;
            switch (op->code) {
            case OP_WGMMA:
                if (o != 2 || !reach_push(rc, op->results[0]))
                    return false; /* as A, B's K would mix the rows */
                break;
            case OP_WGMMA_WAIT:
                if (!reach_push(rc, op->results[o]))
                    return false;
                break;
            case OP_YIELD:
                if (!parent || parent->code != OP_FOR || o >= parent->nresults ||
                    !reach_push(rc, parent->results[o]) ||
                    !reach_push(rc, parent->regions[0].args[1 + o]))
                    return false;
                break;
            case OP_STORE:
                if (o == 0 || !store_masks_wrap(rc, op))
                    return false;
                break;
            default: {
                /* elementwise: each output element from the same position's inputs */
                int n = op_num_operands(op->code);
                bool elementwise =
                    op->nresults == 1 && op->nregions == 0 && n >= 1 && n <= 3 &&
                    ((op->code >= OP_ADD && op->code <= OP_LIBDEVICE) ||
                     (op->code >= OP_CMP_EQ && op->code <= OP_SELECT) || op->code == OP_CAST ||
                     op->code == OP_BITCAST || op->code == OP_CONVERT_LAYOUT) &&
                    ir_type(f, op->results[0]).rank == ir_type(f, v).rank;
                if (!elementwise || !reach_push(rc, op->results[0]))
                    return false;
            }
            }
        }
    }
    return true;
}

/* A copy with a wrapped dim (`(x + arange) % n`) reads, through TMA, zeros past n where it read
 * the rows it wrapped to: only sound when those rows reach no output. Each wgmma reading a slot
 * of its buffer takes the tile as A (its dim 0 the accumulator's rows) or B (its dim 1, dim 0
 * with trans_b, the accumulator's columns); from there every use of the accumulator, through
 * the wgmma chain, waits, iter args, loop results and elementwise ops, must end in a store whose
 * mask holds `coordinate < n` along that accumulator dim (seed 1's c_mask). */
/* Every reader of a slot of buf in r: a wgmma, whose accumulator must reach only stores masked
 * past the wrap (rc's coordinate and bound); any other reader of the tile declines. */
static bool wrap_readers(Tma *t, Reach *rc, const IrRegion *r, ValueId buf, int tile_dim, int *nwg)
{
    IrFunc *f = t->f;
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int q = 0; q < op->nregions; q++)
            if (!wrap_readers(t, rc, &op->regions[q], buf, tile_dim, nwg))
                return false;
        for (int o = 0; o < op->noperands; o++) {
            const IrOp *sv = def_of(f, op->operands[o]);
            if (!sv || sv->code != OP_SLOT || sv->operands[0] != buf ||
                ((op->code == OP_ASYNC_COPY || op->code == OP_TMA_LOAD) && o == 0))
                continue; /* not this buffer's tile, or a copy writing it */
            if (op->code != OP_WGMMA || o > 1)
                DECLINE("a wrapped copy's tile is read by something else than a wgmma");
            int acc_dim =
                o == 0 ? (tile_dim == 0 ? 0 : -1) : (tile_dim == (op->attr[1] ? 0 : 1) ? 1 : -1);
            if (acc_dim < 0)
                DECLINE("a copy's wrapped dim is the dot's K");
            rc->acc_dim = acc_dim;
            memset(rc->seen, 0, sizeof(bool) * (size_t)(f->nvalues + 1));
            rc->nwork = 0;
            if (!reach_push(rc, op->results[0]))
                DECLINE("a wrapped copy's dot reaches too many values");
            while (rc->nwork > 0)
                if (!reach_uses(rc, &f->body, NULL, rc->work[--rc->nwork]))
                    DECLINE("rows a copy wraps to reach an output that is not masked off");
            (*nwg)++;
        }
    }
    return true;
}

static bool wrap_is_masked(Tma *t, const CopyPlan *pl)
{
    if (!pl->nwrap_dims)
        return true;
    IrFunc *f = t->f;
    ValueId buf = def_of(f, pl->copy->operands[0])->operands[0];
    Reach rc = {.t = t};
    rc.seen = arena_alloc(f->arena, sizeof(bool) * (size_t)(f->nvalues + 1));
    int nwg = 0;
    for (int w = 0; w < pl->nwrap_dims; w++) {
        rc.coord = &pl->coord[pl->wrap_map_dim[w]];
        rc.bound = pl->map.dims[pl->wrap_map_dim[w]];
        if (!wrap_readers(t, &rc, &f->body, buf, pl->wrap_dim[w], &nwg))
            return false;
    }
    if (!nwg)
        DECLINE("a wrapped copy feeds no wgmma");
    return true;
}

/* ---- the function's structure ---------------------------------------------------------------- */

static bool collect_copies(Tma *t, IrRegion *r)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            if (!collect_copies(t, &op->regions[k]))
                return false;
        if (op->code != OP_ASYNC_COPY)
            continue;
        t->where = op->loc;
        t->plans = realloc(t->plans, sizeof *t->plans * (size_t)(t->nplans + 1));
        if (!t->plans)
            DECLINE("out of memory");
        if (!plan_copy(t, op, &t->plans[t->nplans]) || !wrap_is_masked(t, &t->plans[t->nplans]))
            return false;
        t->nplans++;
    }
    return true;
}

static CopyPlan *plan_of(Tma *t, const IrOp *copy)
{
    for (int i = 0; i < t->nplans; i++)
        if (t->plans[i].copy == copy)
            return &t->plans[i];
    return NULL;
}

/* A pipelined loop: parent region, its index, and its buffers' slot count. */
typedef struct Loop {
    IrRegion *parent;
    IrOp *loop;
    int S;
    bool invariant; /* its prologue holds a loop-invariant tile's copy (a one-slot buffer) */
} Loop;

/* The pipeline's loops (a for whose body holds an async_wait) in r; false when a copy, commit or
 * wait sits anywhere else but a prologue of such a loop (a loop-invariant A's copy, say). */
static bool find_loops(Tma *t, IrRegion *r, Loop *loops, int *nloops, int max)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        if (op->code == OP_FOR) {
            /* pipelined: an async_wait in its own body, and no pipelined loop inside (a
             * persistent kernel's tile loop holds the K loop's prologue and final wait) */
            IrRegion *body = &op->regions[0];
            bool pipelined = false;
            for (int j = 0; j < body->nops; j++)
                pipelined |= body->ops[j]->code == OP_ASYNC_WAIT;
            int inner = *nloops;
            if (!find_loops(t, body, loops, nloops, max))
                return false;
            if (pipelined && *nloops == inner) {
                t->where = op->loc;
                if (*nloops >= max)
                    DECLINE("too many pipelined loops");
                loops[(*nloops)++] = (Loop){.parent = r, .loop = op};
            }
            continue;
        }
        for (int k = 0; k < op->nregions; k++)
            if (!find_loops(t, &op->regions[k], loops, nloops, max))
                return false;
    }
    return true;
}

/* The slot count of the buffer of a copy's view. */
static int slots_of(const IrFunc *f, const IrOp *copy)
{
    const IrOp *view = def_of(f, copy->operands[0]);
    return (int)ir_type(f, view->operands[0]).shape[0];
}

/* Where the prologue of the loop at r->ops[at] starts: back to the previous loop or wait. */
static int prologue_start(const IrRegion *r, int at)
{
    int start = at;
    while (start > 0) {
        OpCode c = r->ops[start - 1]->code;
        if (c == OP_FOR || c == OP_ASYNC_WAIT || c == OP_WGMMA_WAIT)
            break;
        start--;
    }
    return start;
}

/* Every copy and commit of the function belongs to a loop's prologue (in the loop's region,
 * after the previous loop) or body; each commit group's copies share a slot index and a
 * predicate; the loops' buffers agree on S. */
static bool check_structure(Tma *t, Loop *loops, int nloops)
{
    IrFunc *f = t->f;
    int owned = 0;
    for (int l = 0; l < nloops; l++) {
        Loop *L = &loops[l];
        t->where = L->loop->loc;
        int at = ir_region_index(L->parent, L->loop);
        if (at + 1 >= L->parent->nops || L->parent->ops[at + 1]->code != OP_ASYNC_WAIT ||
            L->parent->ops[at + 1]->attr[0] != 0)
            DECLINE("a pipelined loop is not followed by async_wait 0");
        IrRegion *regions[2] = {L->parent, &L->loop->regions[0]};
        for (int ri = 0; ri < 2; ri++) {
            IrRegion *r = regions[ri];
            int start = 0, end = r->nops;
            if (ri == 0) { /* the prologue */
                end = at;
                start = prologue_start(r, at);
            }
            ValueId slot = 0, pred = 0;
            int ncopies = 0;
            for (int i = start; i < end; i++) {
                IrOp *op = r->ops[i];
                if (op->code == OP_ASYNC_COPY) {
                    CopyPlan *pl = plan_of(t, op);
                    ValueId s = def_of(f, op->operands[0])->operands[1];
                    if (ncopies && (s != slot || pl->pred != pred))
                        DECLINE("a commit group's copies go to different slots or predicates");
                    /* a one-slot buffer in the prologue: a loop-invariant tile (attention's
                     * q, pipeline_loops.c invariant_a_to_smem), its own group and mbarrier */
                    if (ri == 0 && slots_of(f, op) == 1) {
                        L->invariant = true;
                    } else {
                        if (L->S && slots_of(f, op) != L->S)
                            DECLINE("a loop's buffers have different slot counts");
                        L->S = slots_of(f, op);
                    }
                    slot = s;
                    pred = pl->pred;
                    ncopies++;
                    owned++;
                } else if (op_has(op->code, OPT_GROUP_END)) {
                    ncopies = 0;
                } else if (op->code == OP_ASYNC_WAIT && ri == 1) {
                    if (i + 1 >= r->nops || r->ops[i + 1]->code != OP_BARRIER)
                        DECLINE("a pipelined loop's async_wait is not followed by a barrier");
                }
            }
            if (ncopies)
                DECLINE("a commit group is not closed");
        }
        if (!L->S)
            DECLINE("a pipelined loop copies nothing into its own slots");
    }
    /* what follows is about the kernel's copies as a whole: said at its first pipelined loop */
    if (nloops > 0)
        t->where = loops[0].loop->loc;
    if (owned != t->nplans)
        DECLINE("some async copies are outside the pipelined loops' prologues and bodies");
    /* every tensor map is a kernel parameter the launch encodes: a kernel with more distinct
     * boxes than the metadata carries keeps its copies on cp.async (attention backward's four
     * loops and invariant tiles read Q, K, V and dO in three box shapes each) */
    int nmaps = 0;
    for (int i = 0; i < t->nplans; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = tensor_map_equal(&t->plans[j].map, &t->plans[i].map);
        nmaps += !seen;
    }
    _Static_assert(TRIC_MAX_TENSOR_MAPS == 8, "the message below says 8");
    if (nmaps > TRIC_MAX_TENSOR_MAPS)
        DECLINE("the copies need more tensor maps than a kernel carries (8)");
    return true;
}

/* ---- rewriting ----------------------------------------------------------------------------- */

static ValueId to_i32(IrBuilder *b, SrcLoc loc, ValueId v)
{
    Type t = ir_type(b->func, v);
    if (t.dtype == DT_I32)
        return v;
    return ir_build_unary(b, OP_CAST, loc, type_scalar(DT_I32), v);
}

/* The coordinate sum(sign * multiple * (x or k)) as i32 ops at b. */
static ValueId build_coordinate(IrBuilder *b, SrcLoc loc, const Pieces *ps)
{
    Type i32 = type_scalar(DT_I32);
    ValueId sum = 0;
    int64_t k = 0;
    for (int i = 0; i < ps->n; i++) {
        const Piece *p = &ps->p[i];
        if (!p->x) {
            k += p->sign * p->sigma.constant * p->k;
            continue;
        }
        ValueId term = to_i32(b, loc, p->x);
        if (p->sigma.constant != 1)
            term = ir_build_binary(b, OP_MUL, loc, i32, term,
                                   passes_const_i32(b, loc, p->sigma.constant));
        if (!sum)
            sum = p->sign > 0
                      ? term
                      : ir_build_binary(b, OP_SUB, loc, i32, passes_const_i32(b, loc, 0), term);
        else
            sum = ir_build_binary(b, p->sign > 0 ? OP_ADD : OP_SUB, loc, i32, sum, term);
    }
    if (!sum)
        return passes_const_i32(b, loc, k);
    return k ? ir_build_binary(b, OP_ADD, loc, i32, sum, passes_const_i32(b, loc, k)) : sum;
}

static int map_index(IrFunc *f, const TensorMap *m)
{
    for (int i = 0; i < f->ntmaps; i++)
        if (tensor_map_equal(&f->tmaps[i], m))
            return i;
    if (!f->tmaps)
        f->tmaps = arena_alloc(f->arena, sizeof(TensorMap) * TRIC_MAX_TENSOR_MAPS);
    if (f->ntmaps >= TRIC_MAX_TENSOR_MAPS)
        return -1;
    f->tmaps[f->ntmaps] = *m;
    return f->ntmaps++;
}

ValueId passes_mbarrier_view(IrBuilder *b, SrcLoc loc, ValueId bars, ValueId slot)
{
    Type vt = ir_type(b->func, bars);
    vt.rank = 1;
    vt.shape[0] = 1;
    vt.shape[1] = 0;
    ValueId ops[2] = {bars, slot};
    return ir_build(b, OP_SLOT, loc, ops, 2, &vt, 1, 0)->results[0];
}

/* The copies and commits of r[start, end): each group's first copy gets its mbarrier's view and
 * mbar_expect before it (bars1's for a one-slot buffer's group, when given); each copy becomes a
 * tma_load; the commit goes. */
static bool rewrite_groups(Tma *t, IrRegion *r, int start, int *end, ValueId bars, ValueId bars1)
{
    IrFunc *f = t->f;
    ValueId bar = 0;
    IrOp *expect = NULL;
    for (int i = start; i < *end; i++) {
        IrOp *op = r->ops[i];
        if (op_has(op->code, OPT_GROUP_END)) { /* async_commit: the mbarrier does its job now */
            ir_region_remove(r, i);
            (*end)--;
            i--;
            bar = 0;
            expect = NULL;
            continue;
        }
        if (op->code != OP_ASYNC_COPY)
            continue;
        CopyPlan *pl = plan_of(t, op);
        IrBuilder b = {.func = f, .region = r, .pos = i};
        int before = r->nops;
        ValueId pred = pl->pred ? pl->pred : ir_build_const_int(&b, op->loc, type_scalar(DT_I1), 1);
        if (!bar) {
            bool one = bars1 && slots_of(f, op) == 1;
            bar = passes_mbarrier_view(&b, op->loc, one ? bars1 : bars,
                                       def_of(f, op->operands[0])->operands[1]);
            ValueId eops[2] = {bar, pred};
            expect = ir_build(&b, OP_MBAR_EXPECT, op->loc, eops, 2, NULL, 0, 0);
        }
        expect->attr[0] += pl->bytes;
        int mi = map_index(f, &pl->map);
        if (mi < 0)
            DECLINE("more than 8 tensor maps");
        ValueId ops[3 + TRIC_TMAP_MAX_RANK] = {op->operands[0], pred, bar};
        for (int d = 0; d < pl->map.rank; d++)
            ops[3 + d] = build_coordinate(&b, op->loc, &pl->coord[d]);
        IrOp *ld = ir_build(&b, OP_TMA_LOAD, op->loc, ops, 3 + pl->map.rank, NULL, 0, 0);
        ld->attr[0] = mi;
        int added = r->nops - before;
        ir_region_remove(r, i + added);
        *end += added - 1;
        i += added - 1;
    }
    return true;
}

/* iteration i's phase parity ((iv - lo) / step / S) & 1, at b. */
static ValueId phase_of(IrBuilder *b, const IrOp *loop, ValueId iv, int S)
{
    SrcLoc loc = loop->loc;
    IrFunc *f = b->func;
    Type i32 = type_scalar(DT_I32);
    ValueId i = to_i32(b, loc, iv), lo = to_i32(b, loc, loop->operands[0]);
    i = ir_build_binary(b, OP_SUB, loc, i32, i, lo);
    const IrOp *sd = def_of(f, loop->operands[2]);
    int64_t step = sd && sd->code == OP_CONST ? sd->attr[0] : 1;
    if (!sd || sd->code != OP_CONST) /* a step known at run time (either sign) */
        i = ir_build_binary(b, OP_DIV, loc, i32, i, to_i32(b, loc, loop->operands[2]));
    else if (step != 1)
        i = ir_build_binary(b, OP_DIV, loc, i32, i, passes_const_i32(b, loc, step));
    i = ir_build_binary(b, OP_DIV, loc, i32, i, passes_const_i32(b, loc, S));
    return ir_build_binary(b, OP_AND, loc, i32, i, passes_const_i32(b, loc, 1));
}

static bool rewrite_loop(Tma *t, Loop *L)
{
    IrFunc *f = t->f;
    IrRegion *r = L->parent;
    int at = ir_region_index(r, L->loop);
    int start = prologue_start(r, at);
    /* the mbarriers, before the prologue's first op */
    IrBuilder b = {.func = f, .region = r, .pos = start};
    Type bt = type_scalar(DT_I64);
    bt.is_smem = true;
    bt.rank = 2;
    bt.shape[0] = L->S;
    bt.shape[1] = 1;
    /* where the first copy's load was: a shared-memory overflow is reported there */
    SrcLoc loc = L->loop->loc;
    for (int i = start; i < at; i++)
        if (r->ops[i]->code == OP_ASYNC_COPY) {
            loc = r->ops[i]->loc;
            break;
        }
    ValueId bars = ir_build(&b, OP_LOCAL_ALLOC, loc, NULL, 0, &bt, 1, 0)->results[0];
    f->values[bars].name = "mbarriers";
    ir_build(&b, OP_MBAR_INIT, loc, &bars, 1, NULL, 0, 0);
    ValueId bars1 = 0;
    if (L->invariant) {
        bt.shape[0] = 1;
        bars1 = ir_build(&b, OP_LOCAL_ALLOC, loc, NULL, 0, &bt, 1, 0)->results[0];
        f->values[bars1].name = "mbarrier_invariant";
        ir_build(&b, OP_MBAR_INIT, loc, &bars1, 1, NULL, 0, 0);
    }
    int added = b.pos - start;
    start += added;
    at += added;
    int end = at;
    if (!rewrite_groups(t, r, start, &end, bars, bars1))
        return false;
    at = end;
    if (bars1) { /* the invariant tile is complete before the loop reads it (phase 0) */
        IrBuilder wb = {.func = f, .region = r, .pos = at};
        ValueId zero = passes_const_i32(&wb, loc, 0);
        ValueId ops[2] = {passes_mbarrier_view(&wb, loc, bars1, zero), zero};
        ir_build(&wb, OP_MBAR_WAIT, loc, ops, 2, NULL, 0, 0);
        at = wb.pos;
    }
    /* the loop: its wait and barrier become the mbarrier wait for this iteration's slot */
    IrRegion *body = &L->loop->regions[0];
    for (int i = 0; i < body->nops; i++) {
        IrOp *op = body->ops[i];
        if (op->code != OP_ASYNC_WAIT)
            continue;
        ValueId ext = 0;
        for (int j = i + 1; j < body->nops && !ext; j++) {
            const IrOp *s = body->ops[j];
            if (s->code == OP_SLOT && ir_type(f, s->operands[0]).rank == 3)
                ext = s->operands[1];
        }
        if (!ext)
            DECLINE("a pipelined loop reads no slot after its wait");
        IrBuilder lb = {.func = f, .region = body, .pos = i};
        int before = body->nops;
        ValueId phase = phase_of(&lb, L->loop, body->args[0], L->S);
        ValueId ops[2] = {passes_mbarrier_view(&lb, op->loc, bars, ext), phase};
        ir_build(&lb, OP_MBAR_WAIT, op->loc, ops, 2, NULL, 0, 0);
        int w = i + (body->nops - before);
        ir_region_remove(body, w); /* the async_wait */
        /* each thread waits itself, so the barrier after the wait is not needed for the data;
         * it still keeps this iteration's copy from overwriting the slot another warp reads in
         * the previous one, unless a later barrier does (the one after wgmma_wait) */
        bool later_barrier = false;
        for (int j = w + 1; j < body->nops && body->ops[j]->code != OP_ASYNC_COPY; j++)
            later_barrier |= body->ops[j]->code == OP_BARRIER;
        if (later_barrier && w < body->nops && body->ops[w]->code == OP_BARRIER &&
            body->ops[w]->attr[0] == 0)
            ir_region_remove(body, w);
        break;
    }
    int bend = body->nops;
    if (!rewrite_groups(t, body, 0, &bend, bars, 0))
        return false;
    /* after the loop: the async_wait 0 becomes mbar_inval */
    IrOp *wait = r->ops[at + 1];
    IrBuilder ab = {.func = f, .region = r, .pos = at + 1};
    ir_build(&ab, OP_MBAR_INVAL, wait->loc, &bars, 1, NULL, 0, 0);
    if (bars1)
        ir_build(&ab, OP_MBAR_INVAL, wait->loc, &bars1, 1, NULL, 0, 0);
    ir_region_remove(r, ab.pos);
    return true;
}

/* ---- tile stores (PassOptions.tma_store) ---------------------------------------------------- */

/* Whether r (nested regions included) holds an atomic: its ordering with the stores around it
 * is the kernel's (stream-K's flags count stored partials), and a TMA copy's writes are ordered
 * with nothing a thread does after it. */
static bool has_atomic(const IrRegion *r)
{
    static const OpCode atomics[] = {OP_ATOMIC_RMW, OP_ATOMIC_CAS};
    return ir_region_find(r, atomics, 2) != NULL;
}

/* The pointer parameter p's addresses start from (through splat, broadcast, expand_dims,
 * addptr and pointers a loop advances); -1 when not a parameter. */
static int pointer_root(const IrFunc *f, ValueId p)
{
    for (;;) {
        const IrOp *d = def_of(f, p);
        if (!d) {
            int i = param_index(f, p);
            ValueId init;
            Pieces ignored = {0};
            if (i >= 0 || !carried_pointer_terms(f, p, &init, &ignored))
                return i;
            p = init;
        } else if (d->code == OP_SPLAT || d->code == OP_BROADCAST || d->code == OP_CONVERT_LAYOUT ||
                   d->code == OP_EXPAND_DIMS || d->code == OP_ADDPTR) {
            p = d->operands[0];
        } else {
            return -1;
        }
    }
}

/* Whether an op of r (nested regions included) may read global memory through parameter param:
 * a load, copy or tensor map from it, or a read whose pointers have no parameter root. A TMA
 * copy's writes are not ordered with the generic proxy's loads (a kernel reading back what it
 * stored would need a proxy fence), so a store into memory the kernel reads stays as written. */
static bool reads_param(const IrFunc *f, const IrRegion *r, int param)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            if (reads_param(f, &op->regions[k], param))
                return true;
        if (!op_has(op->code, OPT_READS_MEMORY) || op->code == OP_LOCAL_LOAD ||
            op->code == OP_WGMMA || op->code == OP_MBAR_WAIT)
            continue; /* shared memory */
        int root = op->code == OP_LOAD         ? pointer_root(f, op->operands[0])
                   : op->code == OP_ASYNC_COPY ? pointer_root(f, op->operands[1])
                   : op->code == OP_TMA_LOAD   ? f->tmaps[op->attr[0]].base_param
                                               : -1;
        if (root < 0 || root == param)
            return true;
    }
    return false;
}

/* The tile a store writes, as a tensor map's box sees it: 2-d, the pointee's element type, its
 * contiguous dim the one of stride 1 in its addresses, in the swizzle shared_layout_for gives
 * that tile (the scratch shared_alloc lays out for the tma_store), whole atoms of at most 256
 * rows. */
static bool store_tile(Tma *t, const IrOp *store, CopyTile *ct)
{
    IrFunc *f = t->f;
    Type vt = ir_type(f, store->operands[1]), pt = ir_type(f, store->operands[0]);
    if (vt.rank != 2 || !pt.is_ptr || pt.rank != 2 || vt.is_ptr || vt.dtype != pt.dtype)
        DECLINE("the store is not of a 2-d tile of its pointee's type");
    int base;
    Pieces ps = {0};
    if (!pointer_terms(f, store->operands[0], &base, &ps))
        DECLINE("the store's addresses are not a parameter plus affine offsets");
    int contig = -1;
    for (int i = 0; i < ps.n; i++)
        if (ps.p[i].dim >= 0 && ps.p[i].sigma.constant == 1 && !ps.p[i].sigma.nparams)
            contig = ps.p[i].dim;
    Layout l;
    if (contig < 0)
        DECLINE(
            "no dim of the store's addresses is known to have stride 1 (a stride `i32:1` in the "
            "signature, or a constant)");
    if (!shared_layout_for(&l, vt, contig))
        DECLINE("the store's contiguous dim is not whole 32-byte rows");
    int eb = dtype_bytes(vt.dtype);
    if (vt.dtype == DT_I1 || (eb != 1 && eb != 2 && eb != 4) || vt.shape[1 - contig] > 256)
        DECLINE("the store's element type has no tensor-map form, or its tile has more than 256 "
                "rows");
    *ct = (CopyTile){
        .vt = vt, .eb = eb, .inner = contig, .outer = 1 - contig, .sw = l.shared.swizzle};
    return true;
}

/* Each store of r (nested regions included) whose tile a tensor map covers becomes a tma_store
 * of the value it stores (of the registers its only convert_layout reads: the scratch is the
 * relayout), at the box's coordinates, under the mask's predicate; the map's dims are the
 * mask's bounds, outside which TMA writes nothing. why_none: none qualifies, for that reason
 * (each says so in a remark). *n counts them. */
static bool rewrite_stores(Tma *t, IrRegion *r, const PassOptions *o, Diag *d, const char *why_none,
                           int *n)
{
    IrFunc *f = t->f;
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int k = 0; k < op->nregions; k++)
            if (!rewrite_stores(t, &op->regions[k], o, d, why_none, n))
                return false;
        if (op->code != OP_STORE || ir_type(f, op->operands[0]).rank != 2)
            continue;
        CopyPlan pl;
        memset(&pl, 0, sizeof pl);
        CopyTile ct;
        t->why_not = why_none;
        bool ok =
            !why_none && store_tile(t, op, &ct) &&
            plan_addresses(t, op->operands[0], op->noperands > 2 ? op->operands[2] : 0, &ct, &pl);
        if (ok && pl.nwrap_dims)
            ok = (t->why_not = "the store's coordinate wraps (`% n`)", false);
        if (ok && reads_param(f, &f->body, pl.map.base_param))
            ok = (t->why_not = "the kernel reads the memory it stores to (a TMA copy's writes "
                               "are not ordered with its loads)",
                  false);
        int mi = ok ? map_index(f, &pl.map) : -1;
        if (ok && mi < 0)
            ok = (t->why_not = "the kernel's tensor maps are more than 8", false);
        if (!ok) {
            /* the address analysis is the copies': its reasons speak of "a copy's" tile */
            const char *why = t->why_not ? t->why_not : "its addresses do not qualify";
            bool copys = !strncmp(why, "a copy's ", 9);
            if (o->remarks)
                diag_remark(d, op->loc, "tile store not through TMA in %s: %s%s", f->name,
                            copys ? "the store's " : "", copys ? why + 9 : why);
            continue;
        }
        ValueId val = op->operands[1];
        const IrOp *conv = def_of(f, val);
        if (conv && conv->code == OP_CONVERT_LAYOUT && ir_region_use_count(&f->body, val) == 1)
            val = conv->operands[0];
        IrBuilder b = {.func = f, .region = r, .pos = i};
        int before = r->nops;
        ValueId ops[2 + TRIC_TMAP_MAX_RANK] = {
            val, pl.pred ? pl.pred : ir_build_const_int(&b, op->loc, type_scalar(DT_I1), 1)};
        for (int dd = 0; dd < pl.map.rank; dd++)
            ops[2 + dd] = build_coordinate(&b, op->loc, &pl.coord[dd]);
        IrOp *st = ir_build(&b, OP_TMA_STORE, op->loc, ops, 2 + pl.map.rank, NULL, 0, 0);
        st->attr[0] = mi;
        st->attr[1] = ct.inner;
        int added = r->nops - before;
        ir_region_remove(r, i + added);
        i += added - 1;
        (*n)++;
    }
    return true;
}

bool pass_tma(IrFunc *f, const PassOptions *o, Diag *d)
{
    if (!o->wgmma || !o->arch_specific || o->no_tma)
        return true;
    enum { MAX_LOOPS = 16 };
    Tma t = {.f = f};
    Loop loops[MAX_LOOPS];
    int nloops = 0;
    bool ok = collect_copies(&t, &f->body) && t.nplans > 0 &&
              find_loops(&t, &f->body, loops, &nloops, MAX_LOOPS) &&
              check_structure(&t, loops, nloops);
    if (!ok && t.why_not && o->remarks)
        diag_remark(d, t.where, "copies stay cp.async (no TMA) in %s: %s", f->name, t.why_not);
    bool copies = ok;
    for (int l = 0; l < nloops && copies && ok; l++)
        ok = rewrite_loop(&t, &loops[l]);
    free(t.plans);
    if (copies && !ok) {
        TRIC_INTERNAL(d, "tma: %s", t.why_not ? t.why_not : "rewrite failed");
        return false;
    }
    int stores = 0;
    if (o->tma_store &&
        !rewrite_stores(&t, &f->body, o, d,
                        has_atomic(&f->body) ? "the kernel has atomics (a TMA copy's writes are "
                                               "ordered with nothing after it)"
                                             : NULL,
                        &stores))
        return false;
    return copies || stores ? pass_dce(f, o, d) : true;
}
