/* verify.c: structural and type checks of the tile IR, run between passes (QBE's checker).
 *
 * Checked, op by op, in program order:
 *   - operand, result and region counts against TRIC_OPS;
 *   - every operand defined before its use and visible: a value defined in a region is seen only
 *     by the ops after it in that region and in regions nested there (SSA dominance for
 *     structured control flow); each value defined once; results point back at their op;
 *   - types: elementwise operands and result share a shape (and, for arithmetic, the type);
 *     compares give i1; load/store pointer, mask and other shapes; addptr pointer + int; dot
 *     <MxK> x <KxN> + <MxN>; reductions drop dim attr[0]; splat, broadcast, expand_dims,
 *     reshape, trans shape rules; make_range end - start = length; block dims powers of two;
 *   - structured control flow: for/if/while region arguments, yields and results agree;
 *     yield ends every for body and if branch and a while's region 1, condition ends a while's
 *     region 0, and neither appears anywhere else;
 *   - layouts, when assigned: a valid index whose rank is the value's rank, scalars have none,
 *     slices of a valid parent, dot operands of an mma or blocked layout; every partial_store
 *     and partial_add of the function of one layout (their memory order follows it);
 *   - shared memory (docs/ir.md "Shared memory and the memory pipeline"): !smem values come
 *     only from local_alloc (a buffer, dim 0 = slots) and slot (a view of one slot); they are
 *     operands only where a buffer or view is expected (slot, async_copy, local_load, wgmma);
 *     their layouts are #shared, of the tile's rank, and #shared is for them alone;
 *   - scratch records (docs/ir.md "Scratch records"): present where codegen reads one (a
 *     convert_layout, reshape, trans, scan, atomic or reduction given scratch; a dot that stages
 *     its operands), of the op's form (a tile per operand rank, #shared layouts of rank 2),
 *     aligned and inside the op's scratch (a dot's tiles: inside the function's shared_bytes).
 * Every problem is reported (no stop at the first), as
 *   "IR verifier (after <when>): %12 = add: operand 1 has type <64xi32>, expected <128xi32>"
 * at the op's location when it has one; values are named as ir_print numbers them. */
#include "ir/ir.h"

#include <string.h>

typedef struct Verifier {
    const IrFunc *f;
    const char *when;
    Diag *diag;
    Arena *scratch;
    const int32_t *num; /* printed numbers */
    bool *defined;      /* visible at this point */
    bool *ever;         /* defined somewhere already (SSA: once) */
    int partial_layout; /* the layout of the first partial_store/partial_add's tile (0: none) */
    bool ok;
} Verifier;

/* ---- messages ------------------------------------------------------------------------------ */

static const char *vname(Verifier *v, ValueId id)
{
    if (id <= 0 || id >= v->f->nvalues)
        return "none";
    if (v->num[id] < 0)
        return arena_printf(v->scratch, "value #%d", (int)id);
    return arena_printf(v->scratch, "%%%d", (int)v->num[id]);
}

static const char *tstr(Verifier *v, Type t) { return type_str(v->scratch, t); }

static void report(Verifier *v, const IrOp *op, const char *fmt, ...) TRIC_PRINTF(3, 4);
static void report(Verifier *v, const IrOp *op, const char *fmt, ...)
{
    StrBuf sb = {0};
    strbuf_printf(&sb, "IR verifier (after %s): ", v->when ? v->when : "?");
    if (op) {
        for (int i = 0; i < op->nresults; i++)
            strbuf_printf(&sb, "%s%s", i ? ", " : "", vname(v, op->results[i]));
        strbuf_printf(&sb, "%s%s: ", op->nresults ? " = " : "", op_name(op->code));
    }
    va_list ap;
    va_start(ap, fmt);
    strbuf_vprintf(&sb, fmt, ap);
    va_end(ap);
    if (op && op->loc.file && op->loc.line > 0)
        diag_error(v->diag, op->loc, "%s", sb.data);
    else
        diag_plain_error(v->diag, "%s", sb.data);
    strbuf_free(&sb);
    v->ok = false;
}

/* ---- types --------------------------------------------------------------------------------- */

static bool is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

static Type shape_of(Type t, DType dt, bool is_ptr)
{
    Type r = t;
    r.dtype = dt;
    r.is_ptr = is_ptr;
    return r;
}

static void check_value_type(Verifier *v, const IrOp *op, ValueId id)
{
    Type t = v->f->values[id].type;
    if (t.rank > TRIC_MAX_RANK) {
        report(v, op, "%s has rank %d; at most %d", vname(v, id), t.rank, TRIC_MAX_RANK);
        return;
    }
    if ((unsigned)t.dtype >= DT_COUNT) {
        report(v, op, "%s has no valid element type", vname(v, id));
        return;
    }
    /* A local_alloc buffer's dim 0 counts its slots (num_stages of them): any positive count. */
    const IrOp *def = v->f->values[id].def;
    int first = t.is_smem && def && def->code == OP_LOCAL_ALLOC ? 1 : 0;
    if (first && t.rank > 0 && t.shape[0] <= 0) {
        report(v, op, "%s has type %s: a buffer needs at least one slot", vname(v, id), tstr(v, t));
        return;
    }
    for (int i = first; i < t.rank; i++)
        if (!is_pow2(t.shape[i])) {
            report(v, op, "%s has type %s: block dimensions must be powers of two", vname(v, id),
                   tstr(v, t));
            return;
        }
}

/* A layout (when assigned) must exist, match the value's rank and be well formed. */
static void check_layout(Verifier *v, const IrOp *op, ValueId id)
{
    const IrFunc *f = v->f;
    int li = f->values[id].layout;
    if (li == 0)
        return;
    Type t = f->values[id].type;
    if (li < 0 || li >= f->nlayouts) {
        report(v, op, "%s has layout index %d; the function has %d layouts", vname(v, id), li,
               f->nlayouts);
        return;
    }
    if (t.rank == 0) {
        report(v, op, "%s is a scalar (%s) but has a layout", vname(v, id), tstr(v, t));
        return;
    }
    const Layout *l = &f->layouts[li];
    if (t.is_smem != (l->kind == LAYOUT_SHARED)) {
        StrBuf sb = {0};
        ir_print_layout(&sb, f, li);
        if (t.is_smem)
            report(v, op,
                   "%s is a shared-memory tile (%s) but has the distributed layout %s; "
                   "it needs a #shared layout",
                   vname(v, id), tstr(v, t), sb.data);
        else
            report(v, op, "%s has type %s, not in shared memory, but a #shared layout %s",
                   vname(v, id), tstr(v, t), sb.data);
        strbuf_free(&sb);
        return;
    }
    /* A buffer's layout is per slot: the rank of its tile, one less than the buffer's. */
    const IrOp *def = f->values[id].def;
    int want_rank = t.is_smem && def && def->code == OP_LOCAL_ALLOC ? t.rank - 1 : t.rank;
    if (l->rank != want_rank) {
        StrBuf sb = {0};
        ir_print_layout(&sb, f, li);
        report(v, op, "%s has type %s but a rank-%d layout %s%s", vname(v, id), tstr(v, t), l->rank,
               sb.data,
               want_rank != t.rank ? " (a buffer's layout has its tile's rank, one less)" : "");
        strbuf_free(&sb);
        return;
    }
    switch (l->kind) {
    case LAYOUT_NONE:
        report(v, op, "%s has a layout of kind none at index %d", vname(v, id), li);
        break;
    case LAYOUT_BLOCKED: {
        bool seen[TRIC_MAX_RANK] = {0};
        for (int i = 0; i < l->rank; i++) {
            int o = l->blocked.order[i];
            if (o < 0 || o >= l->rank || seen[o]) {
                report(v, op, "%s: blocked layout order is not a permutation of its dims",
                       vname(v, id));
                return;
            }
            seen[o] = true;
            if (l->blocked.size_per_thread[i] <= 0 || l->blocked.threads_per_warp[i] <= 0 ||
                l->blocked.warps_per_cta[i] <= 0) {
                report(v, op, "%s: blocked layout has a non-positive size", vname(v, id));
                return;
            }
        }
        break;
    }
    case LAYOUT_SLICE: {
        int p = l->slice.parent;
        if (p <= 0 || p >= f->nlayouts || f->layouts[p].kind == LAYOUT_NONE)
            report(v, op, "%s: slice layout has no valid parent", vname(v, id));
        else if (l->slice.dim < 0 || l->slice.dim >= f->layouts[p].rank)
            report(v, op, "%s: slice dim %d is outside its parent's %d dims", vname(v, id),
                   l->slice.dim, f->layouts[p].rank);
        break;
    }
    case LAYOUT_MMA:
        if (l->mma.version != 2 && l->mma.version != 3)
            report(v, op, "%s: mma layout version %d (2 or 3)", vname(v, id), l->mma.version);
        break;
    case LAYOUT_DOT_OPERAND: {
        int p = l->dot_operand.parent;
        /* mma for tensor-core dots; blocked for the FMA path (Triton allows both). */
        if (p <= 0 || p >= f->nlayouts ||
            (f->layouts[p].kind != LAYOUT_MMA && f->layouts[p].kind != LAYOUT_BLOCKED))
            report(v, op, "%s: dot operand layout's parent is not an mma or blocked layout",
                   vname(v, id));
        else if (l->dot_operand.op_idx != 0 && l->dot_operand.op_idx != 1)
            report(v, op, "%s: dot operand index %d (0 or 1)", vname(v, id), l->dot_operand.op_idx);
        break;
    }
    case LAYOUT_SHARED: {
        bool seen[TRIC_MAX_RANK] = {0};
        for (int i = 0; i < l->rank; i++) {
            int o = l->shared.order[i];
            if (o < 0 || o >= l->rank || seen[o]) {
                report(v, op, "%s: shared layout order is not a permutation of its dims",
                       vname(v, id));
                return;
            }
            seen[o] = true;
        }
        break;
    }
    }
}

static Type otype(Verifier *v, const IrOp *op, int i) { return v->f->values[op->operands[i]].type; }
static Type rtype(Verifier *v, const IrOp *op, int i) { return v->f->values[op->results[i]].type; }

/* Operand i must have type want. */
static bool want_operand(Verifier *v, const IrOp *op, int i, Type want)
{
    Type t = otype(v, op, i);
    if (type_equal(t, want))
        return true;
    report(v, op, "operand %d has type %s, expected %s", i, tstr(v, t), tstr(v, want));
    return false;
}

static bool want_result(Verifier *v, const IrOp *op, int i, Type want)
{
    Type t = rtype(v, op, i);
    if (type_equal(t, want))
        return true;
    report(v, op, "result %d has type %s, expected %s", i, tstr(v, t), tstr(v, want));
    return false;
}

typedef enum Kinds { ANY_NUM, INT_ONLY, FLOAT_ONLY } Kinds;

static bool elem_ok(Verifier *v, const IrOp *op, Type t, Kinds k)
{
    if (t.is_ptr) {
        report(v, op, "takes numbers, not pointers (%s)", tstr(v, t));
        return false;
    }
    if (k == INT_ONLY && !dtype_is_int(t.dtype)) {
        report(v, op, "takes integers, not %s", tstr(v, t));
        return false;
    }
    if (k == FLOAT_ONLY && !dtype_is_float(t.dtype)) {
        report(v, op, "takes floats, not %s", tstr(v, t));
        return false;
    }
    return true;
}

/* Arithmetic: every operand has the result's type. */
static void check_arith(Verifier *v, const IrOp *op, Kinds k)
{
    Type r = rtype(v, op, 0);
    if (!elem_ok(v, op, r, k))
        return;
    for (int i = 0; i < op->noperands; i++)
        if (!want_operand(v, op, i, r))
            return;
}

static int kind_of(OpCode c)
{
    switch (c) {
    case OP_AND:
    case OP_OR:
    case OP_XOR:
    case OP_SHL:
    case OP_SHR:
    case OP_UMULHI:
    case OP_NOT: return INT_ONLY;
    case OP_FMA:
    case OP_EXP:
    case OP_EXP2:
    case OP_LOG:
    case OP_LOG2:
    case OP_SQRT:
    case OP_RSQRT:
    case OP_SIN:
    case OP_COS:
    case OP_FLOOR:
    case OP_CEIL: return FLOAT_ONLY;
    default: return ANY_NUM;
    }
}

/* libdevice: float operands of one type; the result of that type, or i1 of its shape for a
 * predicate (the function and the operand count were checked with the counts). */
static void check_libdevice(Verifier *v, const IrOp *op)
{
    Type a = otype(v, op, 0);
    if (!elem_ok(v, op, a, FLOAT_ONLY))
        return;
    for (int i = 1; i < op->noperands; i++)
        if (!want_operand(v, op, i, a))
            return;
    const LibdeviceInfo *fn = libdevice_info(op->attr[0]);
    Type want = a;
    if (fn && fn->result == LDR_PRED)
        want.dtype = DT_I1;
    want_result(v, op, 0, want);
}

/* scan: a block, an axis inside it, a combine op the dtype has, the result typed as a. */
static void check_scan(Verifier *v, const IrOp *op)
{
    Type a = otype(v, op, 0);
    int64_t axis = op->attr[0];
    if (a.rank == 0 || axis < 0 || axis >= a.rank) {
        report(v, op, "axis %lld is outside the %d dims of %s", (long long)axis, a.rank,
               tstr(v, a));
        return;
    }
    OpCode comb = (OpCode)op->attr[1];
    bool bitwise = comb == OP_AND || comb == OP_OR || comb == OP_XOR;
    if (!(comb == OP_ADD || comb == OP_MUL || comb == OP_MAX || comb == OP_MIN || bitwise)) {
        report(v, op, "combine must be add, mul, max, min, and, or or xor");
        return;
    }
    if (op->attr[2] != 0 && op->attr[2] != 1) {
        report(v, op, "reverse must be 0 or 1");
        return;
    }
    if (!elem_ok(v, op, a, bitwise ? INT_ONLY : ANY_NUM))
        return;
    want_result(v, op, 0, a);
}

static void check_reduce(Verifier *v, const IrOp *op)
{
    Type a = otype(v, op, 0);
    int64_t axis = op->attr[0];
    if (a.rank == 0 || axis < 0 || axis >= a.rank) {
        report(v, op, "axis %lld is outside the %d dims of %s", (long long)axis, a.rank,
               tstr(v, a));
        return;
    }
    if (!elem_ok(v, op, a, ANY_NUM))
        return;
    Type want = a;
    want.rank = (uint8_t)(a.rank - 1);
    for (int i = (int)axis; i < a.rank - 1; i++)
        want.shape[i] = a.shape[i + 1];
    for (int i = want.rank; i < TRIC_MAX_RANK; i++)
        want.shape[i] = 0;
    if (op->code == OP_ARGMAX || op->code == OP_ARGMIN)
        want.dtype = DT_I32;
    want_result(v, op, 0, want);
}

/* ---- shared memory and the memory pipeline ------------------------------------------------- */

static bool is_buffer(Verifier *v, ValueId id)
{
    const IrValue *val = &v->f->values[id];
    return val->type.is_smem && val->def && val->def->code == OP_LOCAL_ALLOC;
}

static bool is_view(Verifier *v, ValueId id)
{
    const IrValue *val = &v->f->values[id];
    return val->type.is_smem && val->def && val->def->code == OP_SLOT;
}

/* Operand i must be a slot view (what slot returns). */
static bool want_view(Verifier *v, const IrOp *op, int i, const char *what)
{
    if (is_view(v, op->operands[i]))
        return true;
    report(v, op, "operand %d (%s) has type %s, expected a slot view of a shared-memory buffer", i,
           what, tstr(v, otype(v, op, i)));
    return false;
}

/* The tile of a buffer type: dim 0 (the slots) dropped, still in shared memory. */
static Type tile_of(Type buf)
{
    Type t = buf;
    t.rank = (uint8_t)(buf.rank - 1);
    for (int i = 0; i < TRIC_MAX_RANK; i++)
        t.shape[i] = i + 1 < buf.rank ? buf.shape[i + 1] : 0;
    return t;
}

/* dot and wgmma alike: a <MxK> times b <KxN> gives the <MxN> result, a and b of one element type,
 * the accumulator (operand 2) of the result's type. False after reporting the first problem. */
static bool check_dot_types(Verifier *v, const IrOp *op)
{
    Type a = otype(v, op, 0), b = otype(v, op, 1), acc = otype(v, op, 2), r = rtype(v, op, 0);
    if (op->code == OP_WGMMA && op->attr[1] && b.rank == 2) { /* trans_b: the view holds B^T */
        int32_t n = b.shape[0];
        b.shape[0] = b.shape[1];
        b.shape[1] = n;
    }
    if (a.shape[1] != b.shape[0] || a.shape[0] != r.shape[0] || b.shape[1] != r.shape[1]) {
        report(v, op, "shapes do not chain: %s x %s -> %s (need <MxK> x <KxN> -> <MxN>)",
               tstr(v, a), tstr(v, b), tstr(v, r));
        return false;
    }
    /* e4m3 x e5m2 is a dot of its own (wgmma's mixed fp8 forms) */
    if (a.dtype != b.dtype && !(dtype_is_fp8(a.dtype) && dtype_is_fp8(b.dtype))) {
        report(v, op, "operands 0 and 1 have element types %s and %s; they must agree",
               dtype_sig_name(a.dtype), dtype_sig_name(b.dtype));
        return false;
    }
    if (!type_equal(acc, r)) {
        report(v, op, "operand 2 has type %s, expected %s", tstr(v, acc), tstr(v, r));
        return false;
    }
    return true;
}

/* A buffer of mbarriers: local_alloc !smem<S x 1 x i64>. */
static bool is_barrier_buffer(Verifier *v, ValueId id)
{
    Type t = v->f->values[id].type;
    return is_buffer(v, id) && type_is_mbarriers(t);
}

static bool want_barrier_view(Verifier *v, const IrOp *op, int i)
{
    ValueId id = op->operands[i];
    if (is_view(v, id) && is_barrier_buffer(v, v->f->values[id].def->operands[0]))
        return true;
    report(v, op, "operand %d has type %s, expected a slot view of an mbarrier buffer", i,
           tstr(v, otype(v, op, i)));
    return false;
}

/* mbar_init / mbar_inval take a buffer of mbarriers; mbar_expect, mbar_arrive and mbar_wait one
 * slot's view, with their operands and counts. */
static void check_mbar_op(Verifier *v, const IrOp *op)
{
    switch (op->code) {
    case OP_MBAR_INIT:
    case OP_MBAR_INVAL:
        if (!is_barrier_buffer(v, op->operands[0]))
            report(v, op,
                   "operand 0 has type %s, expected a local_alloc buffer of mbarriers "
                   "(!smem<S x 1 x i64>)",
                   tstr(v, otype(v, op, 0)));
        return;
    case OP_MBAR_EXPECT:
    case OP_MBAR_ARRIVE:
    case OP_MBAR_WAIT:
        if (!want_barrier_view(v, op, 0))
            break;
        if (op->code == OP_MBAR_ARRIVE) {
            if (v->f->ws.producer_warps <= 0 || op->partition == PARTITION_ALL)
                report(v, op,
                       "mbar_arrive belongs to one partition of a warp-specialized "
                       "function (its mbar_init counts that partition's warps)");
            break;
        }
        if (op->code == OP_MBAR_EXPECT) {
            want_operand(v, op, 1, type_scalar(DT_I1));
            if (op->attr[0] <= 0 || op->attr[0] >= (1 << 20))
                report(v, op,
                       "expects %lld bytes; an mbarrier counts 1 to 2^20 - 1 "
                       "(PTX ISA 9.7.13.15.4, tx-count)",
                       (long long)op->attr[0]);
        } else {
            want_operand(v, op, 1, type_scalar(DT_I32));
        }
        break;
    default: return;
    }
}

/* A tma_load's or tma_store's tensor map attr[0] (NULL, reported, when the function has none
 * such or the op has not one i32 coordinate per map dim from operand `first` on). */
static const TensorMap *tmap_coordinates(Verifier *v, const IrOp *op, const char *verb, int first)
{
    const IrFunc *f = v->f;
    if (op->attr[0] < 0 || op->attr[0] >= f->ntmaps) {
        report(v, op, "%s tensor map %lld; the function has %d", verb, (long long)op->attr[0],
               f->ntmaps);
        return NULL;
    }
    const TensorMap *m = &f->tmaps[op->attr[0]];
    if (op->noperands != first + m->rank) {
        report(v, op, "has %d coordinates; tensor map %lld has %d dims", op->noperands - first,
               (long long)op->attr[0], m->rank);
        return NULL;
    }
    for (int i = first; i < op->noperands; i++)
        want_operand(v, op, i, type_scalar(DT_I32));
    return m;
}

/* tma_load view, pred, barrier, coords...: the view's tile is a box of the map (its element
 * type; 2-d, the view's contiguous dim along the map's dim 0), one i32 coordinate per map dim. */
static void check_tma_load(Verifier *v, const IrOp *op)
{
    const IrFunc *f = v->f;
    if (!want_view(v, op, 0, "the destination") || !want_barrier_view(v, op, 2))
        return;
    want_operand(v, op, 1, type_scalar(DT_I1));
    const TensorMap *m = tmap_coordinates(v, op, "reads", 3);
    if (!m)
        return;
    Type dst = otype(v, op, 0);
    if (dst.rank != 2 || dst.dtype != m->dtype || m->rank < 2 || m->base_param < 0 ||
        m->base_param >= f->nparams)
        report(v, op,
               "copies tensor map %lld (%s, %d dims, base param %d) into a view of "
               "type %s (a 2-d tile of the map's element type)",
               (long long)op->attr[0], dtype_sig_name(m->dtype), m->rank, m->base_param,
               tstr(v, dst));
}

/* tma_store: a 2-d register tile of the map's element type, a predicate, one i32 coordinate per
 * map dim; attr[1] the tile dim along the map's dim 0. */
static void check_tma_store(Verifier *v, const IrOp *op)
{
    const IrFunc *f = v->f;
    want_operand(v, op, 1, type_scalar(DT_I1));
    const TensorMap *m = tmap_coordinates(v, op, "writes", 2);
    if (!m)
        return;
    Type t = otype(v, op, 0);
    if (t.rank != 2 || t.is_smem || t.is_ptr || t.dtype != m->dtype || m->rank < 2 ||
        m->base_param < 0 || m->base_param >= f->nparams || op->attr[1] < 0 || op->attr[1] > 1)
        report(v, op,
               "stores a tile of type %s (contig %lld) through tensor map %lld (%s, %d dims, base "
               "param %d): expected a 2-d register tile of the map's element type, contig 0 or 1",
               tstr(v, t), (long long)op->attr[1], (long long)op->attr[0], dtype_sig_name(m->dtype),
               m->rank, m->base_param);
}

static void check_pipeline(Verifier *v, const IrOp *op)
{
    switch (op->code) {
    case OP_LOCAL_ALLOC: {
        Type r = rtype(v, op, 0);
        if (!r.is_smem || r.rank < 2 || r.is_ptr)
            report(v, op,
                   "result has type %s, expected a shared-memory buffer !smem<S x tile> "
                   "(rank >= 2, dim 0 the slots)",
                   tstr(v, r));
        break;
    }
    case OP_SLOT: {
        ValueId buf = op->operands[0];
        Type b = otype(v, op, 0), i = otype(v, op, 1);
        if (!is_buffer(v, buf)) {
            report(v, op, "operand 0 has type %s, expected a local_alloc buffer", tstr(v, b));
            break;
        }
        if (i.rank != 0 || i.is_ptr || i.dtype != DT_I32) {
            report(v, op, "operand 1 (the slot index) has type %s, expected i32", tstr(v, i));
            break;
        }
        if (!want_result(v, op, 0, tile_of(b)))
            break;
        int bl = v->f->values[buf].layout, rl = v->f->values[op->results[0]].layout;
        if (bl != rl) {
            StrBuf sa = {0}, sb = {0};
            ir_print_layout(&sa, v->f, rl);
            ir_print_layout(&sb, v->f, bl);
            report(v, op, "the view's layout %s is not its buffer's %s", sa.data, sb.data);
            strbuf_free(&sa);
            strbuf_free(&sb);
        }
        break;
    }
    case OP_ASYNC_COPY: {
        if (!want_view(v, op, 0, "the destination"))
            break;
        Type dst = otype(v, op, 0), p = otype(v, op, 1);
        if (!p.is_ptr) {
            report(v, op, "operand 1 has type %s, expected pointers", tstr(v, p));
            break;
        }
        Type want = shape_of(p, p.dtype, false);
        want.is_smem = true;
        if (!type_equal(dst, want)) {
            report(v, op,
                   "copies %s into a view of type %s (the view must have the pointers' "
                   "shape and pointee)",
                   tstr(v, p), tstr(v, dst));
            break;
        }
        if (op->noperands > 2 && op->operands[2])
            want_operand(v, op, 2, shape_of(p, DT_I1, false));
        if (op->noperands > 3 && op->operands[3]) {
            Type o = otype(v, op, 3);
            if (!type_equal(o, shape_of(p, p.dtype, false)))
                report(v, op, "operand 3 (other) has type %s, expected %s", tstr(v, o),
                       tstr(v, shape_of(p, p.dtype, false)));
        }
        break;
    }
    case OP_ASYNC_WAIT:
    case OP_WGMMA_WAIT:
        if (op->attr[0] < 0)
            report(v, op, "pending is %lld; it must be >= 0", (long long)op->attr[0]);
        for (int i = 0; op->code == OP_WGMMA_WAIT && i < op->noperands && i < op->nresults; i++) {
            if (!type_equal(otype(v, op, i), rtype(v, op, i))) {
                report(v, op, "result %d has type %s, but operand %d has type %s", i,
                       tstr(v, rtype(v, op, i)), i, tstr(v, otype(v, op, i)));
                break;
            }
            if (v->f->values[op->operands[i]].layout != v->f->values[op->results[i]].layout) {
                report(v, op, "result %d has another layout than operand %d", i, i);
                break;
            }
        }
        break;
    case OP_MBAR_INIT:
    case OP_MBAR_INVAL:
    case OP_MBAR_EXPECT:
    case OP_MBAR_ARRIVE:
    case OP_MBAR_WAIT: check_mbar_op(v, op); break;
    case OP_TMA_LOAD: check_tma_load(v, op); break;
    case OP_TMA_STORE: check_tma_store(v, op); break;
    case OP_LOCAL_LOAD: {
        if (!want_view(v, op, 0, "the view"))
            break;
        Type want = otype(v, op, 0);
        want.is_smem = false;
        want_result(v, op, 0, want);
        break;
    }
    case OP_WGMMA: {
        /* a: a slot view, or registers (the #dot_op<idx=0> form: PTX ISA 9.7.15.5.1.1, A from
         * registers, for 16-bit types) */
        bool a_regs = !v->f->values[op->operands[0]].type.is_smem;
        if ((!a_regs && !want_view(v, op, 0, "a")) || !want_view(v, op, 1, "b"))
            break;
        if (a_regs) {
            int al = v->f->values[op->operands[0]].layout;
            DType adt = otype(v, op, 0).dtype;
            if ((adt != DT_F16 && adt != DT_BF16) ||
                (al > 0 && al < v->f->nlayouts &&
                 (v->f->layouts[al].kind != LAYOUT_DOT_OPERAND ||
                  v->f->layouts[al].dot_operand.op_idx != 0))) {
                report(v, op,
                       "a register operand a must be fp16 or bf16 in a #dot_op<idx=0> layout");
                break;
            }
        }
        Type a = otype(v, op, 0), b = otype(v, op, 1), r = rtype(v, op, 0);
        if (a.rank != 2 || b.rank != 2 || r.rank != 2 || r.is_ptr || r.is_smem) {
            report(v, op, "takes 2-d views and a 2-d accumulator (%s x %s -> %s)", tstr(v, a),
                   tstr(v, b), tstr(v, r));
            break;
        }
        if (!check_dot_types(v, op))
            break;
        if (op->noperands == 4) {
            Type g = otype(v, op, 3);
            if (g.rank != 0 || g.dtype != DT_I1 || g.is_ptr || g.is_smem) {
                report(v, op, "its guard must be an i1 scalar, not %s", tstr(v, g));
                break;
            }
        }
        int rl = v->f->values[op->results[0]].layout;
        if (rl > 0 && rl < v->f->nlayouts &&
            (v->f->layouts[rl].kind != LAYOUT_MMA || v->f->layouts[rl].mma.version != 3))
            report(v, op, "the result's layout must be #mma<version=3, ...> (wgmma)");
        break;
    }
    default: break;
    }
}

/* ---- scratch records (docs/ir.md "Scratch records") ----------------------------------------- */

/* Bytes from a tile's start to past its last element: the tile's bytes under a #shared layout,
 * else 1 + the offset of its last element, in elements of eb bytes. */
static int64_t tile_extent(const IrScratchTile *t, Type tile, int eb)
{
    if (t->layout > 0)
        return type_numel(tile) * eb;
    int64_t last = 0;
    for (int d = 0; d < t->nstrides && d < tile.rank; d++)
        last += (int64_t)(tile.shape[d] - 1) * t->strides[d];
    return (last + 1) * eb;
}

/* A tile of `what` for a `tile`-typed value: its layout #shared of the tile's rank, or one
 * non-negative stride per dim; aligned (16 bytes, `align` for a wgmma's) and, with its extent,
 * inside [lo, hi). */
static void check_tile(Verifier *v, const IrOp *op, const char *what, const IrScratchTile *t,
                       Type tile, int eb, int64_t lo, int64_t hi, int align)
{
    const IrFunc *f = v->f;
    if (t->layout > 0) {
        const Layout *l = t->layout < f->nlayouts ? &f->layouts[t->layout] : NULL;
        if (!l || l->kind != LAYOUT_SHARED || l->rank != 2 || tile.rank != 2) {
            report(v, op, "scratch record: %s's layout must be a rank-2 #shared layout for %s",
                   what, tstr(v, tile));
            return;
        }
        /* whole swizzle atoms along the contiguous dim: the tile then takes exactly its bytes */
        int cd = l->shared.order[0], sw = l->shared.swizzle;
        if ((cd != 0 && cd != 1) || l->shared.order[1] != 1 - cd ||
            (sw != 32 && sw != 64 && sw != 128) || ((int64_t)tile.shape[cd] * eb) % sw) {
            report(v, op, "scratch record: %s's #shared layout does not fit %s", what,
                   tstr(v, tile));
            return;
        }
    } else {
        if (t->nstrides != tile.rank) {
            report(v, op, "scratch record: %s has %d strides, expected %d (one per dim of %s)",
                   what, t->nstrides, tile.rank, tstr(v, tile));
            return;
        }
        /* below 2^24 elements, beyond any shared memory, so the extent below cannot overflow */
        for (int d = 0; d < t->nstrides; d++)
            if (t->strides[d] < 0 || t->strides[d] >= (int64_t)1 << 24) {
                report(v, op, "scratch record: %s has a stride of %lld elements", what,
                       (long long)t->strides[d]);
                return;
            }
    }
    int64_t end = t->offset + tile_extent(t, tile, eb);
    if (t->offset % align)
        report(v, op, "scratch record: %s at byte %d is not %d-byte aligned", what, (int)t->offset,
               align);
    else if (t->offset < lo || end > hi)
        report(v, op, "scratch record: %s takes bytes [%d, %lld), outside [%lld, %lld)", what,
               (int)t->offset, (long long)end, (long long)lo, (long long)hi);
}

static bool is_atomic_with_result(OpCode c) { return c == OP_ATOMIC_RMW || c == OP_ATOMIC_CAS; }

static bool is_reduction(OpCode c)
{
    return c == OP_REDUCE_SUM || c == OP_REDUCE_MAX || c == OP_REDUCE_MIN || c == OP_ARGMAX ||
           c == OP_ARGMIN;
}

/* A dot's record: each operand's source is what makes it, and the tiles codegen stores into are
 * there (mma.sync staging both, wgmma always, the FMA dot unless both operands are #dot_op
 * registers), inside the function's shared memory. */
static void check_dot_scratch(Verifier *v, const IrOp *op)
{
    const IrFunc *f = v->f;
    const IrScratch *s = &op->scratch;
    int acc = f->values[op->results[0]].layout;
    const Layout *L = acc > 0 && acc < f->nlayouts ? &f->layouts[acc] : NULL;
    bool wgmma = L && L->kind == LAYOUT_MMA && L->mma.version == 3;
    bool mma = L && L->kind == LAYOUT_MMA && !wgmma;
    bool any_source = false;
    for (int i = 0; i < 2; i++) {
        const IrOp *def = f->values[op->operands[i]].def;
        const char *name = i ? "B" : "A";
        if (s->from[i] == DOT_FROM_SOURCE && (!def || def->code != OP_CONVERT_LAYOUT))
            report(v, op, "scratch record: %s = source, but no convert_layout makes %s", name,
                   vname(v, op->operands[i]));
        if (s->from[i] == DOT_FROM_SLOT && (wgmma || !L || !def || def->code != OP_LOCAL_LOAD))
            report(v, op,
                   "scratch record: %s = slot needs an mma.sync or FMA dot whose %s is a "
                   "local_load",
                   name, name);
        /* an FMA dot's k loop reads its slots unswizzled, in either order (codegen/dot_fma.c) */
        int sl = s->from[i] == DOT_FROM_SLOT && !wgmma && !mma && def && def->code == OP_LOCAL_LOAD
                     ? f->values[def->operands[0]].layout
                     : -1;
        if (sl >= 0 && (sl == 0 || sl >= f->nlayouts || f->layouts[sl].kind != LAYOUT_SHARED ||
                        f->layouts[sl].shared.swizzle != 0 || f->layouts[sl].shared.max_phase > 1))
            report(v, op, "scratch record: %s = slot, but an FMA dot reads only unswizzled slots",
                   name);
        any_source |= s->from[i] == DOT_FROM_SOURCE;
    }
    if (mma && (s->from[0] == DOT_FROM_SLOT) != (s->from[1] == DOT_FROM_SLOT))
        report(v, op, "scratch record: an mma.sync dot reads both slots or neither");
    if (mma && s->from[0] != s->from[1])
        report(v, op, "scratch record: an mma.sync dot takes A and B from the same place");
    /* an FMA dot that reads one operand from its slot stages the other (its tiles placed) */
    bool fma_half =
        !wgmma && !mma && (s->from[0] == DOT_FROM_SLOT) != (s->from[1] == DOT_FROM_SLOT);
    bool need = (wgmma && op->smem_bytes > 0) || (!wgmma && any_source) || fma_half;
    if (need && s->ntiles != 2) {
        report(v, op,
               "has no scratch record placing its A and B tiles (smem(offset, bytes, a = "
               "FROM at OFFSET TILE, b = ...))");
        return;
    }
    if (s->ntiles != 2)
        return;
    Type ta = otype(v, op, 0), tb = otype(v, op, 1);
    int align = wgmma ? 1024 : 16;
    check_tile(v, op, "A's tile", &s->tile[0], ta, shared_elem_bytes(ta), 0, f->shared_bytes,
               align);
    check_tile(v, op, "B's tile", &s->tile[1], tb, shared_elem_bytes(tb), 0, f->shared_bytes,
               align);
    if (L && L->kind == LAYOUT_BLOCKED) { /* the FMA dot's k loop reads A^T [K][M] and B [K][N] */
        const IrScratchTile *a = &s->tile[0], *b = &s->tile[1];
        if (a->layout || b->layout || a->nstrides != 2 || b->nstrides != 2 || a->strides[0] != 1 ||
            a->strides[1] != ta.shape[0] || b->strides[0] != tb.shape[1] || b->strides[1] != 1)
            report(v, op, "scratch record: the FMA dot stages A^T and B at strides [1, M], [N, 1]");
    }
}

/* The record matches the op: one tile for convert_layout, reshape, trans, scan, atomics and
 * cross-warp reductions that were given scratch, two for dots; inside the op's own
 * [smem_offset, smem_offset + smem_bytes) (a dot's: the function's shared memory, its tiles may
 * sit in its operands' scratch). */
static void check_scratch(Verifier *v, const IrOp *op)
{
    const IrScratch *s = &op->scratch;
    bool one = op->code == OP_CONVERT_LAYOUT || op->code == OP_RESHAPE || op->code == OP_TRANS ||
               op->code == OP_SUBTILE || op->code == OP_SCAN || is_atomic_with_result(op->code) ||
               is_reduction(op->code) || op->code == OP_TMA_STORE;
    if (s->ntiles < 0 || s->ntiles > 2 || (s->ntiles == 2 && op->code != OP_DOT) ||
        (s->ntiles == 1 && !one) ||
        (op->code != OP_DOT &&
         (s->from[0] != DOT_FROM_REGISTERS || s->from[1] != DOT_FROM_REGISTERS))) {
        report(v, op, "has a scratch record of a form %s does not take", op_name(op->code));
        return;
    }
    bool combines = op->code == OP_SCAN || is_reduction(op->code);
    if (!combines && s->combine != SCRATCH_COMBINE_NONE) {
        report(v, op, "scratch record: only a reduction or a scan combines (%s on %s)",
               ir_scratch_combine_name(s->combine), op_name(op->code));
        return;
    }
    if (s->warp_private && (op->code != OP_CONVERT_LAYOUT || s->ntiles != 1)) {
        report(v, op, "scratch record: only a convert_layout's copy is warp_private (%s)",
               op_name(op->code));
        return;
    }
    if (op->code == OP_DOT) {
        check_dot_scratch(v, op);
        return;
    }
    if (!one)
        return;
    if (op->smem_bytes > 0 && s->ntiles != 1) {
        report(v, op,
               "has smem(%d, %d) but no scratch record saying where its elements go "
               "(smem(offset, bytes, #shared<...>) or smem(offset, bytes, strides [...]))",
               (int)op->smem_offset, (int)op->smem_bytes);
        return;
    }
    if (s->ntiles != 1)
        return;
    const IrScratchTile *t = &s->tile[0];
    if (t->offset != op->smem_offset) {
        report(v, op, "scratch record at %d, not at the op's smem offset %d", (int)t->offset,
               (int)op->smem_offset);
        return;
    }
    int64_t lo = op->smem_offset, hi = (int64_t)op->smem_offset + op->smem_bytes;
    Type a = otype(v, op, 0);
    if (is_reduction(op->code)) {
        /* [per output element, per warp] over num_warps warps at most */
        bool arg = op->code == OP_ARGMAX || op->code == OP_ARGMIN;
        Type partials = {.dtype = arg ? a.dtype : rtype(v, op, 0).dtype, .rank = 2};
        partials.shape[0] = (int32_t)type_numel(rtype(v, op, 0));
        partials.shape[1] = v->f->num_warps > 0 ? v->f->num_warps : 1;
        if (t->layout > 0)
            report(v, op, "scratch record: a reduction's partials are at strides, not a layout");
        else if (s->combine != SCRATCH_COMBINE_SERIAL && s->combine != SCRATCH_COMBINE_SHUFFLE)
            report(v, op,
                   "scratch record: a reduction combines its partials serial or shuffle, not %s",
                   ir_scratch_combine_name(s->combine));
        else
            check_tile(v, op, "the partials", t, partials, shared_elem_bytes(partials), lo, hi, 1);
        return;
    }
    if (op->code == OP_SCAN) {
        /* the form codegen addresses (shared_scan_scratch): [row][warp] totals or the block */
        int64_t strides[TRIC_MAX_RANK];
        Type tile;
        ScratchCombine combine = shared_scan_scratch(v->f, op, strides, &tile);
        if (t->layout > 0)
            report(v, op, "scratch record: a scan's scratch is at strides, not a layout");
        else if (s->combine != combine)
            report(v, op, "scratch record: this scan's layout is scanned by %s, not %s",
                   ir_scratch_combine_name(combine), ir_scratch_combine_name(s->combine));
        else
            check_tile(v, op, "the scan's tile", t, tile, shared_elem_bytes(tile), lo, hi, 1);
        return;
    }
    if (op->code == OP_TRANS || is_atomic_with_result(op->code)) {
        /* trans: the operand's copy, one stride per operand dim; an atomic: its old values, one
         * stride per result dim (none for a scalar); codegen addresses both at strides only */
        Type tile = op->code == OP_TRANS ? a : rtype(v, op, 0);
        const char *what = op->code == OP_TRANS ? "the copy" : "the old values' tile";
        if (t->layout > 0)
            report(v, op, "scratch record: %s of %s is at strides, not a layout", what,
                   op_name(op->code));
        else
            check_tile(v, op, what, t, tile, shared_elem_bytes(tile), lo, hi, 1);
        return;
    }
    if (op->code == OP_TMA_STORE) {
        /* the box's layout: the map's swizzle along the contiguous dim (codegen's copies read
         * atoms of it as a tma_load writes them) */
        Layout want;
        if (t->layout <= 0 || t->layout >= v->f->nlayouts ||
            !shared_layout_for(&want, a, (int)op->attr[1]) ||
            !layout_equal(&v->f->layouts[t->layout], &want)) {
            report(v, op,
                   "scratch record: a tma_store's tile is in the #shared layout of the "
                   "map's swizzle along its contig dim");
            return;
        }
    }
    check_tile(v, op, "the copy", t, a, shared_elem_bytes(a), lo, hi, 1);
}

static void check_atomic(Verifier *v, const IrOp *op);

/* const, program_id, num_programs, make_range: values made from attributes alone. */
static void check_source_op(Verifier *v, const IrOp *op)
{
    Type r = rtype(v, op, 0);
    switch (op->code) {
    case OP_CONST:
        if (r.is_ptr)
            report(v, op, "a constant cannot be a pointer (%s)", tstr(v, r));
        else if (r.dtype == DT_I1 && op->attr[0] != 0 && op->attr[0] != 1)
            report(v, op, "an i1 constant is 0 or 1, not %lld", (long long)op->attr[0]);
        break;
    case OP_PROGRAM_ID:
    case OP_NUM_PROGRAMS:
        want_result(v, op, 0, type_scalar(DT_I32));
        if (op->attr[0] < 0 || op->attr[0] > 2)
            report(v, op, "axis %lld (0, 1 or 2)", (long long)op->attr[0]);
        break;
    case OP_TILE_COUNT: {
        want_result(v, op, 0, type_scalar(DT_I32));
        int axes = ir_func_grid_axes(v->f);
        if (!v->f->persistent.on)
            report(v, op, "tile_count outside a persistent function");
        else if (op->attr[0] < 0 || op->attr[0] >= axes)
            report(v, op, "tile_count of axis %lld in a persistent function of %d grid axes",
                   (long long)op->attr[0], axes);
        break;
    }
    case OP_WORKSPACE:
        if (!v->f->persistent.on)
            report(v, op, "workspace outside a persistent function");
        if (op->attr[0] == 0)
            want_result(v, op, 0, type_ptr(DT_I32));
        else if (op->attr[0] != 1)
            report(v, op, "workspace part %lld (0 flags, 1 scratch)", (long long)op->attr[0]);
        else if (!r.is_ptr || r.rank != 0)
            report(v, op, "the scratch workspace is a scalar pointer, not %s", tstr(v, r));
        break;
    case OP_MAKE_RANGE:
        if (r.rank != 1 || r.is_ptr || r.dtype != DT_I32)
            report(v, op, "result has type %s, expected <Nxi32>", tstr(v, r));
        else if (op->attr[1] - op->attr[0] != r.shape[0])
            report(v, op, "range [%lld, %lld) has %lld elements but the result has %d",
                   (long long)op->attr[0], (long long)op->attr[1],
                   (long long)(op->attr[1] - op->attr[0]), (int)r.shape[0]);
        break;
    default: break;
    }
}

/* splat, broadcast, expand_dims, reshape, and the ops whose result is their operand's type
 * (convert_layout, the hints): the elements stay, the shape changes by the op's rule. */
static void check_reshaping_op(Verifier *v, const IrOp *op)
{
    Type a = otype(v, op, 0), r = rtype(v, op, 0);
    switch (op->code) {
    case OP_SPLAT:
        if (a.rank != 0)
            report(v, op, "operand 0 has type %s, expected a scalar", tstr(v, a));
        else
            want_result(v, op, 0, shape_of(r, a.dtype, a.is_ptr));
        break;
    case OP_BROADCAST:
        if (!type_equal(type_elem(a), type_elem(r)) || a.rank != r.rank) {
            report(v, op, "cannot broadcast %s to %s (same element and rank needed)", tstr(v, a),
                   tstr(v, r));
            break;
        }
        for (int i = 0; i < a.rank; i++)
            if (a.shape[i] != r.shape[i] && a.shape[i] != 1) {
                report(v, op, "cannot broadcast %s to %s: dim %d is %d, not 1 or %d", tstr(v, a),
                       tstr(v, r), i, (int)a.shape[i], (int)r.shape[i]);
                break;
            }
        break;
    case OP_EXPAND_DIMS: {
        int64_t axis = op->attr[0];
        if (axis < 0 || axis > a.rank || a.rank + 1 > TRIC_MAX_RANK) {
            report(v, op, "axis %lld is outside 0..%d for %s", (long long)axis, a.rank, tstr(v, a));
            break;
        }
        Type want = a;
        want.rank = (uint8_t)(a.rank + 1);
        for (int i = a.rank; i > axis; i--)
            want.shape[i] = a.shape[i - 1];
        want.shape[axis] = 1;
        want_result(v, op, 0, want);
        break;
    }
    case OP_RESHAPE:
        if (!type_equal(type_elem(a), type_elem(r)) || type_numel(a) != type_numel(r))
            report(v, op, "cannot reshape %s to %s (same element type and count needed)",
                   tstr(v, a), tstr(v, r));
        break;
    case OP_CONVERT_LAYOUT:
    case OP_MULTIPLE_OF:
    case OP_MAX_CONTIGUOUS: want_result(v, op, 0, a); break;
    default: break;
    }
}

/* trans, join, split, subtile: the dims move, a minor dim of 2 comes or goes, or a block of the
 * operand is taken. */
static void check_permuting_op(Verifier *v, const IrOp *op)
{
    Type a = otype(v, op, 0);
    Type want = a;
    switch (op->code) {
    case OP_TRANS: {
        bool seen[TRIC_MAX_RANK] = {0};
        for (int i = 0; i < a.rank; i++) {
            int64_t p = op->attr[i];
            if (p < 0 || p >= a.rank || seen[p]) {
                report(v, op, "perm is not a permutation of the %d dims of %s", a.rank, tstr(v, a));
                return;
            }
            seen[p] = true;
            want.shape[i] = a.shape[p];
        }
        want_result(v, op, 0, want);
        break;
    }
    case OP_JOIN: {
        /* Triton's tt.join: two blocks of one type, a new minor dim of 2 (scalars are joined by
         * lowering through a [1] block, as Triton's semantic.join does). */
        Type b = otype(v, op, 1);
        if (!type_equal(a, b) || a.rank == 0 || a.rank + 1 > TRIC_MAX_RANK) {
            report(v, op, "joins %s and %s; expected two blocks of one type and rank below %d",
                   tstr(v, a), tstr(v, b), TRIC_MAX_RANK);
            break;
        }
        want.rank = (uint8_t)(a.rank + 1);
        want.shape[a.rank] = 2;
        want_result(v, op, 0, want);
        break;
    }
    case OP_SUBTILE: {
        /* a block of a: r's dims, at offsets attr, inside a */
        Type r = rtype(v, op, 0);
        if (a.rank == 0 || r.rank != a.rank || r.dtype != a.dtype || r.is_ptr != a.is_ptr) {
            report(v, op, "takes %s out of %s; expected a block of the same rank and type",
                   tstr(v, r), tstr(v, a));
            break;
        }
        for (int d = 0; d < a.rank; d++)
            if (op->attr[d] < 0 || op->attr[d] + r.shape[d] > a.shape[d]) {
                report(v, op, "offset %lld along dim %d puts %s outside %s", (long long)op->attr[d],
                       d, tstr(v, r), tstr(v, a));
                break;
            }
        break;
    }
    case OP_SPLIT:
        /* Triton's tt.split, one half per op: attr[0] picks r = a[..., 0] or a[..., 1]. */
        if (a.rank < 2 || a.shape[a.rank - 1] != 2) {
            report(v, op, "splits %s; expected a block of rank 2 or more whose last dim is 2",
                   tstr(v, a));
            break;
        }
        if (op->attr[0] != 0 && op->attr[0] != 1)
            report(v, op, "half %lld (0 or 1)", (long long)op->attr[0]);
        want.rank = (uint8_t)(a.rank - 1);
        want.shape[a.rank - 1] = 0;
        want_result(v, op, 0, want);
        break;
    default: break;
    }
}

/* The compares, select, cast, bitcast and addptr: elementwise, but their operands' element types
 * differ from the result's (check_arith's one type does not hold), so each has its rule. */
static void check_mixed_type_op(Verifier *v, const IrOp *op)
{
    /* One shape for all; the rules below check dtypes. */
    for (int i = 0; i < op->noperands; i++)
        if (!type_same_shape(otype(v, op, i), rtype(v, op, 0))) {
            report(v, op, "operand %d has type %s, but the result %s has another shape", i,
                   tstr(v, otype(v, op, i)), tstr(v, rtype(v, op, 0)));
            return;
        }
    Type a = otype(v, op, 0), r = rtype(v, op, 0);
    switch (op->code) {
    case OP_SELECT:
        if (want_operand(v, op, 0, shape_of(r, DT_I1, false)) && want_operand(v, op, 1, r))
            want_operand(v, op, 2, r);
        break;
    case OP_CAST:
        if (a.is_ptr || r.is_ptr)
            report(v, op, "cast converts numbers (%s to %s); use bitcast for pointers", tstr(v, a),
                   tstr(v, r));
        break;
    case OP_BITCAST: {
        /* A pointer is 64 bits: it converts to and from int64 (Triton's ptr_to_int and
         * int_to_ptr), and to another pointer. */
        int abits = a.is_ptr ? 64 : dtype_bits(a.dtype),
            rbits = r.is_ptr ? 64 : dtype_bits(r.dtype);
        bool int64_side = a.is_ptr ? (r.is_ptr || r.dtype == DT_I64 || r.dtype == DT_U64)
                                   : (!r.is_ptr || a.dtype == DT_I64 || a.dtype == DT_U64);
        if (abits != rbits || !int64_side)
            report(v, op,
                   "cannot bitcast %s to %s (same width needed; pointers to and from int64 "
                   "only)",
                   tstr(v, a), tstr(v, r));
        break;
    }
    case OP_ADDPTR: {
        Type b = otype(v, op, 1);
        if (!a.is_ptr)
            report(v, op, "operand 0 has type %s, expected a pointer", tstr(v, a));
        else if (b.is_ptr || !dtype_is_int(b.dtype) || b.dtype == DT_I1)
            report(v, op, "operand 1 has type %s, expected an integer offset", tstr(v, b));
        else
            want_result(v, op, 0, a);
        break;
    }
    default: /* the compares */
        if (r.is_ptr || r.dtype != DT_I1)
            report(v, op, "result has type %s, expected %s", tstr(v, r),
                   tstr(v, shape_of(r, DT_I1, false)));
        else
            want_operand(v, op, 1, a);
        break;
    }
}

/* load (ptr, mask?, other?) and store (ptr, val, mask?): values and masks in the pointer's shape. */
static void check_load_store(Verifier *v, const IrOp *op)
{
    Type p = otype(v, op, 0);
    if (!p.is_ptr) {
        report(v, op, "operand 0 has type %s, expected a pointer", tstr(v, p));
        return;
    }
    if (op->code == OP_STORE) {
        if (want_operand(v, op, 1, shape_of(p, p.dtype, false)) && op->noperands > 2 &&
            op->operands[2])
            want_operand(v, op, 2, shape_of(p, DT_I1, false));
        return;
    }
    Type r = shape_of(p, p.dtype, false);
    if (!want_result(v, op, 0, r))
        return;
    if (op->noperands > 1 && op->operands[1])
        want_operand(v, op, 1, shape_of(p, DT_I1, false));
    if (op->noperands > 2 && op->operands[2])
        want_operand(v, op, 2, r);
}

/* Each op's type rules, by family; the rules of the elementwise arithmetic (check_arith) and of
 * the memory pipeline (check_pipeline) are found through the op table's traits. */
static void check_types(Verifier *v, const IrOp *op)
{
    OpCode c = op->code;
    switch (c) {
    case OP_CONST:
    case OP_UNDEF:
    case OP_PROGRAM_ID:
    case OP_NUM_PROGRAMS:
    case OP_TILE_COUNT:
    case OP_WORKSPACE:
    case OP_MAKE_RANGE: check_source_op(v, op); break;
    case OP_SPLAT:
    case OP_BROADCAST:
    case OP_EXPAND_DIMS:
    case OP_RESHAPE:
    case OP_CONVERT_LAYOUT:
    case OP_MULTIPLE_OF:
    case OP_MAX_CONTIGUOUS: check_reshaping_op(v, op); break;
    case OP_TRANS:
    case OP_JOIN:
    case OP_SUBTILE:
    case OP_SPLIT: check_permuting_op(v, op); break;
    case OP_CMP_EQ:
    case OP_CMP_NE:
    case OP_CMP_LT:
    case OP_CMP_LE:
    case OP_CMP_GT:
    case OP_CMP_GE:
    case OP_SELECT:
    case OP_CAST:
    case OP_BITCAST:
    case OP_ADDPTR: check_mixed_type_op(v, op); break;
    case OP_LOAD:
    case OP_STORE: check_load_store(v, op); break;
    case OP_PREFETCH: {
        Type p = otype(v, op, 0), w = otype(v, op, 1);
        if (!p.is_ptr || !type_equal(w, type_scalar(DT_I1)))
            report(v, op, "takes pointers and an i1, not %s and %s", tstr(v, p), tstr(v, w));
        break;
    }
    case OP_ATOMIC_RMW:
    case OP_ATOMIC_CAS: check_atomic(v, op); break;
    case OP_FLAG_WAIT: {
        Type p = otype(v, op, 0), w = otype(v, op, 1);
        if (!type_equal(p, type_ptr(DT_I32)) || !type_equal(w, type_scalar(DT_I32)))
            report(v, op, "takes a *i32 and an i32, not %s and %s", tstr(v, p), tstr(v, w));
        break;
    }
    case OP_PARTIAL_STORE:
    case OP_PARTIAL_ADD: {
        Type p = otype(v, op, 0), s = otype(v, op, 1), t = otype(v, op, 2);
        if (!type_equal(p, type_ptr(DT_F32)) || !type_equal(s, type_scalar(DT_I32)) ||
            t.rank == 0 || t.is_ptr || t.dtype != DT_F32)
            report(v, op, "takes a *fp32, an i32 and an fp32 block, not %s, %s and %s", tstr(v, p),
                   tstr(v, s), tstr(v, t));
        else if (op->code == OP_PARTIAL_ADD && !type_equal(rtype(v, op, 0), t))
            report(v, op, "result has type %s, expected %s", tstr(v, rtype(v, op, 0)), tstr(v, t));
        int l = op->operands[2] > 0 && op->operands[2] < v->f->nvalues
                    ? v->f->values[op->operands[2]].layout
                    : 0;
        if (l > 0 && !v->partial_layout)
            v->partial_layout = l;
        else if (l > 0 && l != v->partial_layout)
            report(v, op,
                   "a partial tile of another layout than the function's first (a "
                   "partial's memory order follows its layout)");
        break;
    }
    case OP_DOT: {
        Type a = otype(v, op, 0), b = otype(v, op, 1), r = rtype(v, op, 0);
        if (a.rank != 2 || b.rank != 2 || r.rank != 2 || a.is_ptr || b.is_ptr || r.is_ptr)
            report(v, op, "takes 2-d number blocks (%s x %s -> %s)", tstr(v, a), tstr(v, b),
                   tstr(v, r));
        else
            check_dot_types(v, op);
        break;
    }
    case OP_REDUCE_SUM:
    case OP_REDUCE_MAX:
    case OP_REDUCE_MIN:
    case OP_ARGMAX:
    case OP_ARGMIN: check_reduce(v, op); break;
    case OP_SCAN: check_scan(v, op); break;
    case OP_ASSERT: {
        Type a = otype(v, op, 0);
        if (a.is_ptr || a.dtype != DT_I1)
            report(v, op, "operand 0 has type %s, expected i1", tstr(v, a));
        break;
    }
    case OP_NEG:
    case OP_ABS: check_arith(v, op, ANY_NUM); break;
    case OP_LIBDEVICE: check_libdevice(v, op); break;
    case OP_CONSUMER_TURN:
        want_operand(v, op, 0, type_scalar(DT_I32));
        want_result(v, op, 0, type_scalar(DT_I1));
        /* fall through */
    case OP_TURN_WAIT:
    case OP_TURN_PASS:
        if (v->f->ws.consumer_groups < 2)
            report(v, op,
                   "%s outside a function whose consumer groups take turns "
                   "(warp_specialize(..., consumer_groups = 2))",
                   op_name(c));
        if (c != OP_CONSUMER_TURN && op->partition != PARTITION_CONSUMER)
            report(v, op, "%s belongs to the consumers' partition", op_name(c));
        break;
    default:
        if (op_has(c, OPT_ELEMENTWISE))
            check_arith(v, op, (Kinds)kind_of(c));
        if (op_has(c, OPT_PIPELINE)) /* the memory pipeline's ops (the op table's trait) */
            check_pipeline(v, op);
        break;
    }
}

/* atomic_rmw (ptr, val, mask?) and atomic_cas (ptr, cmp, val): the values and the result have the
 * pointee's type in the pointer's shape; the dtypes are Triton's (semantic.atom_red_typechecking_impl
 * and atomic_cas): 32- and 64-bit ints and floats, fp16/bf16 only for add; max, min and the
 * bitwise kinds only on ints (float max/min are built from int ones); cas on 16, 32 or 64 bits. */
static void check_atomic(Verifier *v, const IrOp *op)
{
    Type p = otype(v, op, 0);
    if (!p.is_ptr) {
        report(v, op, "operand 0 has type %s, expected a pointer", tstr(v, p));
        return;
    }
    Type val = shape_of(p, p.dtype, false);
    DType dt = p.dtype;
    bool is_rmw = op->code == OP_ATOMIC_RMW;
    if (!mem_sem_name(op->attr[1]) || !mem_scope_name(op->attr[2]) ||
        (is_rmw ? !atomic_kind_name(op->attr[0]) : op->attr[0] != 0)) {
        report(v, op, "attr [%lld, %lld, %lld] names no atomic kind, memory semantic or scope",
               (long long)op->attr[0], (long long)op->attr[1], (long long)op->attr[2]);
        return;
    }
    int bits = dtype_bits(dt);
    bool ok;
    if (!is_rmw)
        ok = bits == 16 || bits == 32 || bits == 64;
    else if (op->attr[0] == ATOMIC_ADD)
        ok = bits == 32 || bits == 64 || dt == DT_F16 || dt == DT_BF16;
    else if (op->attr[0] == ATOMIC_XCHG)
        ok = bits == 32 || bits == 64;
    else
        ok = (bits == 32 || bits == 64) && dtype_is_int(dt);
    if (!ok) {
        report(v, op, "%s%s does not take %s elements", is_rmw ? "atomic_rmw " : "atomic_cas",
               is_rmw ? atomic_kind_name(op->attr[0]) : "", dtype_name(dt));
        return;
    }
    if (!want_result(v, op, 0, val) || !want_operand(v, op, 1, val))
        return;
    if (is_rmw && op->noperands > 2 && op->operands[2])
        want_operand(v, op, 2, shape_of(p, DT_I1, false));
    if (!is_rmw)
        want_operand(v, op, 2, val);
}

/* ---- structure ----------------------------------------------------------------------------- */

static int expected_results(const IrOp *op)
{
    switch (op->code) {
    case OP_FOR: return op->noperands - 3;
    case OP_WGMMA_WAIT: return op->noperands;
    default: return op_num_results(op->code); /* -1 for if and while: checked against regions */
    }
}

static int expected_regions(OpCode c)
{
    return c == OP_FOR ? 1 : (c == OP_IF || c == OP_WHILE) ? 2 : 0;
}

/* May operand i be absent (0)? Only load's mask and other, store's mask and async_copy's mask
 * and other. */
static bool operand_optional(OpCode c, int i)
{
    return (c == OP_LOAD && (i == 1 || i == 2)) ||
           ((c == OP_STORE || c == OP_ATOMIC_RMW) && i == 2) ||
           (c == OP_ASYNC_COPY && (i == 2 || i == 3));
}

static bool counts_ok(Verifier *v, const IrOp *op)
{
    OpCode c = op->code;
    if ((unsigned)c >= OP_COUNT) {
        report(v, NULL, "an op has the invalid code %d", (int)c);
        return false;
    }
    int want = op_num_operands(c);
    bool ok = true;
    if (want >= 0 && op->noperands != want) {
        report(v, op, "has %d operand%s, expected %d", op->noperands, op->noperands == 1 ? "" : "s",
               want);
        ok = false;
    } else if (c == OP_LOAD && (op->noperands < 1 || op->noperands > 3)) {
        report(v, op, "has %d operands, expected 1 to 3 (pointer, mask, other)", op->noperands);
        ok = false;
    } else if (c == OP_ATOMIC_RMW && (op->noperands < 2 || op->noperands > 3)) {
        report(v, op, "has %d operands, expected 2 or 3 (pointer, value, mask)", op->noperands);
        ok = false;
    } else if (c == OP_STORE && (op->noperands < 2 || op->noperands > 3)) {
        report(v, op, "has %d operands, expected 2 or 3 (pointer, value, mask)", op->noperands);
        ok = false;
    } else if (c == OP_ASYNC_COPY && (op->noperands < 2 || op->noperands > 4)) {
        report(v, op, "has %d operands, expected 2 to 4 (view, pointers, mask, other)",
               op->noperands);
        ok = false;
    } else if (c == OP_TMA_STORE && op->noperands < 4) {
        report(v, op, "has %d operands, expected at least 4 (tile, pred, coordinates)",
               op->noperands);
        ok = false;
    } else if (c == OP_TMA_LOAD && op->noperands < 4) {
        report(v, op, "has %d operands, expected at least 4 (view, pred, barrier, coordinates)",
               op->noperands);
        ok = false;
    } else if (c == OP_WGMMA && (op->noperands < 3 || op->noperands > 4)) {
        report(v, op, "has %d operands, expected 3 or 4 (a, b, c, guard)", op->noperands);
        ok = false;
    } else if (c == OP_FOR && op->noperands < 3) {
        report(v, op, "has %d operands, expected at least 3 (lo, hi, step)", op->noperands);
        ok = false;
    } else if (c == OP_LIBDEVICE) {
        const LibdeviceInfo *fn = libdevice_info(op->attr[0]);
        if (!fn) {
            report(v, op, "attr[0] = %lld names no libdevice function", (long long)op->attr[0]);
            ok = false;
        } else if (op->noperands != fn->nargs) {
            report(v, op, "%s has %d operand%s, expected %d", fn->name, op->noperands,
                   op->noperands == 1 ? "" : "s", fn->nargs);
            ok = false;
        }
    } else if (c == OP_CONDITION && op->noperands < 1) {
        report(v, op, "needs its condition operand");
        ok = false;
    }
    int wr = expected_results(op);
    if (ok && wr >= 0 && op->nresults != wr) {
        report(v, op, "has %d result%s, expected %d", op->nresults, op->nresults == 1 ? "" : "s",
               wr);
        ok = false;
    }
    if (op->nregions != expected_regions(c)) {
        report(v, op, "has %d region%s, expected %d", op->nregions, op->nregions == 1 ? "" : "s",
               expected_regions(c));
        ok = false;
    }
    return ok;
}

static void define(Verifier *v, const IrOp *op, ValueId id, const char *what)
{
    if (id <= 0 || id >= v->f->nvalues) {
        report(v, op, "%s is not a value (id %d)", what, (int)id);
        v->ok = false;
        return;
    }
    if (v->ever[id])
        report(v, op, "%s %s is defined twice", what, vname(v, id));
    v->ever[id] = true;
    v->defined[id] = true;
    Type t = v->f->values[id].type;
    if (t.is_smem &&
        !(op && v->f->values[id].def == op && (op->code == OP_LOCAL_ALLOC || op->code == OP_SLOT)))
        report(v, op,
               "%s %s has type %s, but only local_alloc and slot define shared-memory "
               "tiles",
               what, vname(v, id), tstr(v, t));
    check_value_type(v, op, id);
    check_layout(v, op, id);
}

static void undefine_region(Verifier *v, const IrRegion *r)
{
    for (int i = 0; i < r->nargs; i++)
        if (r->args[i] > 0 && r->args[i] < v->f->nvalues)
            v->defined[r->args[i]] = false;
    for (int i = 0; i < r->nops; i++)
        for (int j = 0; j < r->ops[i]->nresults; j++)
            if (r->ops[i]->results[j] > 0 && r->ops[i]->results[j] < v->f->nvalues)
                v->defined[r->ops[i]->results[j]] = false;
}

/* The region's parent op and index, to check terminators; parent NULL for the body. */
static void verify_region(Verifier *v, const IrRegion *r, const IrOp *parent, int ri);

/* Types of a list of values must equal a list of types. */
static void match_types(Verifier *v, const IrOp *op, const char *what, const ValueId *vals, int n,
                        const Type *want, int nwant, const char *against)
{
    if (n != nwant) {
        report(v, op, "%d %ss for %d %ss", n, what, nwant, against);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (vals[i] <= 0 || vals[i] >= v->f->nvalues)
            continue;
        Type t = v->f->values[vals[i]].type;
        if (!type_equal(t, want[i])) {
            report(v, op, "%s %d has type %s, but %s %d has type %s", what, i, tstr(v, t), against,
                   i, tstr(v, want[i]));
            return;
        }
    }
}

static Type *types_of(Verifier *v, const ValueId *vals, int n)
{
    Type *t = arena_alloc(v->scratch, (size_t)(n + 1) * sizeof *t);
    for (int i = 0; i < n; i++)
        t[i] = (vals[i] > 0 && vals[i] < v->f->nvalues) ? v->f->values[vals[i]].type : (Type){0};
    return t;
}

static const IrOp *terminator(const IrRegion *r, OpCode want)
{
    if (r->nops == 0 || r->ops[r->nops - 1]->code != want)
        return NULL;
    return r->ops[r->nops - 1];
}

static void check_control(Verifier *v, const IrOp *op)
{
    const IrFunc *f = v->f;
    Type *results = types_of(v, op->results, op->nresults);
    switch (op->code) {
    case OP_FOR: {
        const IrRegion *body = &op->regions[0];
        int ninit = op->noperands - 3;
        Type lo = otype(v, op, 0);
        if (lo.rank != 0 || lo.is_ptr || !dtype_is_int(lo.dtype) || lo.dtype == DT_I1) {
            report(v, op, "lo has type %s, expected an integer scalar", tstr(v, lo));
            return;
        }
        if (!want_operand(v, op, 1, lo) || !want_operand(v, op, 2, lo))
            return;
        match_types(v, op, "iter arg", op->operands + 3, ninit, results, op->nresults, "result");
        if (body->nargs != ninit + 1) {
            report(v, op,
                   "body has %d arguments, expected %d (induction variable and %d iter args)",
                   body->nargs, ninit + 1, ninit);
            return;
        }
        if (!type_equal(f->values[body->args[0]].type, lo))
            report(v, op, "induction variable %s has type %s, expected %s", vname(v, body->args[0]),
                   tstr(v, f->values[body->args[0]].type), tstr(v, lo));
        match_types(v, op, "body argument", body->args + 1, ninit, results, op->nresults, "result");
        const IrOp *y = terminator(body, OP_YIELD);
        if (y)
            match_types(v, op, "the body's yield operand", y->operands, y->noperands, results,
                        op->nresults, "result");
        break;
    }
    case OP_IF: {
        Type c = otype(v, op, 0);
        if (c.rank != 0 || c.is_ptr || c.dtype != DT_I1)
            report(v, op, "condition has type %s, expected i1", tstr(v, c));
        for (int i = 0; i < 2; i++) {
            if (op->regions[i].nargs)
                report(v, op, "region %d has arguments; if regions take none", i);
            const IrOp *y = terminator(&op->regions[i], OP_YIELD);
            if (y)
                match_types(v, op, i ? "the else yield operand" : "the then yield operand",
                            y->operands, y->noperands, results, op->nresults, "result");
        }
        break;
    }
    case OP_WHILE: {
        const IrRegion *before = &op->regions[0], *after = &op->regions[1];
        Type *inits = types_of(v, op->operands, op->noperands);
        match_types(v, op, "region 0 argument", before->args, before->nargs, inits, op->noperands,
                    "init");
        const IrOp *cond = terminator(before, OP_CONDITION);
        if (cond && cond->noperands >= 1) {
            Type c = otype(v, cond, 0);
            if (c.rank != 0 || c.is_ptr || c.dtype != DT_I1)
                report(v, op, "condition operand 0 has type %s, expected i1", tstr(v, c));
            match_types(v, op, "condition value", cond->operands + 1, cond->noperands - 1, results,
                        op->nresults, "result");
            match_types(v, op, "region 1 argument", after->args, after->nargs, results,
                        op->nresults, "result");
        }
        const IrOp *y = terminator(after, OP_YIELD);
        if (y)
            match_types(v, op, "region 1's yield operand", y->operands, y->noperands, inits,
                        op->noperands, "init");
        break;
    }
    default: break;
    }
}

/* A warp-specialized function's partitions (passes/warp_specialize.c): an op runs on every warp
 * or on one side; one side's op reads only values every warp or its own side computes (the
 * other side's are never computed there), and so does an op of every warp, except the
 * structured ops that carry values through (for, if, yield: on the side that does not compute a
 * value they carry a placeholder nothing reads). */
static void check_partition(Verifier *v, const IrOp *op)
{
    const IrFunc *f = v->f;
    if (op->partition > PARTITION_PRODUCER) {
        report(v, op, "partition %d is none of all, consumer, producer", op->partition);
        return;
    }
    if (op->partition != PARTITION_ALL && f->ws.producer_warps <= 0) {
        report(v, op, "has partition = %s, but the function is not warp-specialized",
               ir_partition_name(op->partition));
        return;
    }
    /* a for's bounds and an if's condition: every warp that runs it needs them */
    int n = op->code == OP_YIELD ? 0
            : op->code == OP_FOR ? 3
            : op->code == OP_IF  ? 1
                                 : op->noperands;
    for (int i = 0; i < n && i < op->noperands; i++) {
        ValueId id = op->operands[i];
        const IrOp *def = id > 0 && id < f->nvalues ? f->values[id].def : NULL;
        if (def && def->partition != PARTITION_ALL && def->partition != op->partition)
            report(v, op, "(partition %s) reads %s, which the %s partition computes",
                   ir_partition_name(op->partition), vname(v, id),
                   ir_partition_name(def->partition));
    }
}

static void verify_op(Verifier *v, const IrOp *op, const IrRegion *r, int pos, const IrOp *parent,
                      int ri)
{
    bool counts = counts_ok(v, op);
    check_partition(v, op);
    /* Uses: defined and visible here. */
    bool uses_ok = true;
    for (int i = 0; i < op->noperands; i++) {
        ValueId id = op->operands[i];
        if (id == 0) {
            if (!operand_optional(op->code, i)) {
                report(v, op, "operand %d is missing", i);
                uses_ok = false;
            }
        } else if (id < 0 || id >= v->f->nvalues) {
            report(v, op, "operand %d is not a value (id %d)", i, (int)id);
            uses_ok = false;
        } else if (!v->defined[id]) {
            report(v, op, "operand %d (%s) is not defined before this use%s", i, vname(v, id),
                   v->ever[id] ? " (its definition does not dominate it)" : "");
            uses_ok = false;
        } else if (v->f->values[id].type.is_smem && !op_takes_smem(op->code, i)) {
            report(v, op,
                   "operand %d (%s) is a shared-memory tile (%s); only slot, async_copy, "
                   "local_load and wgmma take one",
                   i, vname(v, id), tstr(v, v->f->values[id].type));
            uses_ok = false;
        } else if (v->f->values[id].def && v->f->values[id].def->code == OP_WGMMA &&
                   op->code != OP_WGMMA_WAIT && !(op->code == OP_WGMMA && i == 2)) {
            /* a wgmma's registers are being written until a wgmma_wait retires it */
            report(v, op,
                   "operand %d (%s) is a wgmma's result, still in flight; only wgmma_wait "
                   "or a later wgmma's accumulator may read it",
                   i, vname(v, id));
        }
    }
    /* Terminators: only last, only in the right region. */
    if (op->code == OP_YIELD || op->code == OP_CONDITION) {
        bool last = pos == r->nops - 1;
        bool right_place =
            parent && (op->code == OP_YIELD ? (parent->code == OP_FOR || parent->code == OP_IF ||
                                               (parent->code == OP_WHILE && ri == 1))
                                            : (parent->code == OP_WHILE && ri == 0));
        if (!right_place)
            report(v, op, "%s",
                   op->code == OP_YIELD
                       ? "yield ends only a for body, an if branch or a while's region 1"
                       : "condition ends only a while's region 0");
        else if (!last)
            report(v, op, "must be the last op of its region");
    }
    /* Results (defined before the regions: they are not visible inside, see below). */
    for (int i = 0; i < op->nresults; i++) {
        ValueId id = op->results[i];
        if (id > 0 && id < v->f->nvalues &&
            (v->f->values[id].def != op || v->f->values[id].index != i))
            report(v, op, "result %d (%s) does not point back at its op", i, vname(v, id));
    }
    if (counts && uses_ok) {
        check_types(v, op);
        check_scratch(v, op);
    }
    for (int i = 0; i < op->nregions; i++)
        verify_region(v, &op->regions[i], op, i);
    if (counts && uses_ok)
        check_control(v, op);
    for (int i = 0; i < op->nresults; i++)
        define(v, op, op->results[i], "result");
}

static void verify_region(Verifier *v, const IrRegion *r, const IrOp *parent, int ri)
{
    for (int i = 0; i < r->nargs; i++)
        define(v, parent, r->args[i], "region argument");
    for (int i = 0; i < r->nops; i++) {
        if (!r->ops[i]) {
            report(v, parent, "region %d has a NULL op at %d", ri, i);
            continue;
        }
        verify_op(v, r->ops[i], r, i, parent, ri);
    }
    if (parent) {
        OpCode want = (parent->code == OP_WHILE && ri == 0) ? OP_CONDITION : OP_YIELD;
        if (!terminator(r, want))
            report(v, parent, "region %d does not end in %s", ri, op_name(want));
        undefine_region(v, r);
    }
}

bool ir_verify(const IrFunc *f, const char *when, Diag *diag)
{
    Verifier v = {.f = f, .when = when, .diag = diag, .ok = true};
    v.scratch = arena_new();
    v.num = ir_value_numbering(f, v.scratch);
    v.defined = arena_alloc(v.scratch, (size_t)(f->nvalues + 1));
    v.ever = arena_alloc(v.scratch, (size_t)(f->nvalues + 1));
    if (f->num_warps <= 0 || !is_pow2(f->num_warps))
        report(&v, NULL, "num_warps is %d; it must be a power of two", f->num_warps);
    if (f->persistent.axes < 0 || f->persistent.axes > 3)
        report(&v, NULL, "a persistent function of %d grid axes (1, 2 or 3)", f->persistent.axes);
    if (f->ws.consumer_groups < 0 || f->ws.consumer_groups > 2 ||
        (f->ws.consumer_groups == 2 &&
         (f->ws.producer_warps <= 0 || f->ws.scratch_stride < 0 || f->ws.scratch_stride % 1024)))
        report(&v, NULL,
               "warp_specialize's consumer_groups = %d, scratch_stride = %d: one or two groups "
               "(two only with a producer), the stride a multiple of 1024",
               f->ws.consumer_groups, f->ws.scratch_stride);
    for (int i = 0; i < f->nparams; i++) {
        ValueId id = f->params[i].value;
        define(&v, NULL, id, "parameter");
        if (id > 0 && id < f->nvalues && f->values[id].def)
            report(&v, NULL, "parameter %d has a defining op", i);
    }
    verify_region(&v, &f->body, NULL, 0);
    arena_free(v.scratch);
    return v.ok;
}
