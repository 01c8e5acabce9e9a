/* ir.c: the tile IR builder: functions, values, ops, regions, layouts; use replacement; cloning;
 * and the queries over the TRIC_OPS table.
 *
 * Values are integer handles into IrFunc.values (QBE's Ref, Lua's register): an op names its
 * operands and results by ValueId, so cloning a function is renumbering, and IrValue pointers
 * must not be kept across ir_value_new (the array may move). Every allocation is in f->arena. */
#include "ir/ir.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- the op table ---------------------------------------------------------------------------- */

static const char *const op_names[OP_COUNT] = {
#define X(e, name, nops, nres, traits, doc) [e] = name,
    TRIC_OPS(X)
#undef X
};

static const int op_operand_counts[OP_COUNT] = {
#define X(e, name, nops, nres, traits, doc) [e] = nops,
    TRIC_OPS(X)
#undef X
};

static const int op_result_counts[OP_COUNT] = {
#define X(e, name, nops, nres, traits, doc) [e] = nres,
    TRIC_OPS(X)
#undef X
};

static const unsigned op_traits[OP_COUNT] = {
#define X(e, name, nops, nres, traits, doc) [e] = (traits),
    TRIC_OPS(X)
#undef X
};

const char *op_name(OpCode code)
{
    if ((int)code < 0 || code >= OP_COUNT)
        return "<bad op>";
    return op_names[code];
}

int op_num_operands(OpCode code)
{
    if ((int)code < 0 || code >= OP_COUNT)
        return -1;
    return op_operand_counts[code];
}

int op_num_results(OpCode code)
{
    if ((int)code < 0 || code >= OP_COUNT)
        return -1;
    return op_result_counts[code];
}

bool op_has(OpCode code, unsigned traits)
{
    if ((int)code < 0 || code >= OP_COUNT)
        return false;
    return (op_traits[code] & traits) != 0;
}

const char *ir_partition_name(int partition)
{
    return partition == PARTITION_CONSUMER   ? "consumer"
           : partition == PARTITION_PRODUCER ? "producer"
                                             : "all";
}

bool ir_partition_from_name(const char *name, WarpPartition *out)
{
    for (int k = PARTITION_ALL; k <= PARTITION_PRODUCER; k++)
        if (name && !strcmp(name, ir_partition_name(k))) {
            *out = (WarpPartition)k;
            return true;
        }
    return false;
}

bool op_takes_smem(OpCode c, int i)
{
    switch (c) {
    case OP_SLOT:
    case OP_ASYNC_COPY:
    case OP_LOCAL_LOAD:
    case OP_MBAR_INIT:
    case OP_MBAR_INVAL:
    case OP_MBAR_EXPECT:
    case OP_MBAR_ARRIVE:
    case OP_MBAR_WAIT: return i == 0;
    case OP_WGMMA: return i < 2;
    case OP_TMA_LOAD: return i == 0 || i == 2;
    default: return false;
    }
}

/* ---- the libdevice table --------------------------------------------------------------------- */

static const LibdeviceInfo libdevice_table[LD_COUNT] = {
#define X(e, name, nargs, result, f32, f64, doc) [e] = {name, nargs, result, f32, f64},
    TRIC_LIBDEVICE_FNS(X)
#undef X
};

const LibdeviceInfo *libdevice_info(int64_t fn)
{
    return fn >= 0 && fn < LD_COUNT ? &libdevice_table[fn] : NULL;
}

bool libdevice_from_name(const char *name, LibdeviceFn *out)
{
    for (int i = 0; i < LD_COUNT; i++) {
        if (strcmp(libdevice_table[i].name, name) == 0) {
            *out = (LibdeviceFn)i;
            return true;
        }
    }
    return false;
}

/* ---- the atomic tables ----------------------------------------------------------------------- */

static const char *const atomic_kind_names[] = {
#define X(e, name, ptx, doc) [e] = name,
    TRIC_ATOMIC_KINDS(X)
#undef X
};
static const char *const atomic_kind_ptxs[] = {
#define X(e, name, ptx, doc) [e] = ptx,
    TRIC_ATOMIC_KINDS(X)
#undef X
};
static const char *const mem_sem_names[] = {
#define X(e, name, ptx) [e] = name,
    TRIC_MEM_SEMS(X)
#undef X
};
static const char *const mem_scope_names[] = {
#define X(e, name, ptx) [e] = name,
    TRIC_MEM_SCOPES(X)
#undef X
};

const char *atomic_kind_name(int64_t k)
{
    return k >= 0 && k < ATOMIC_KIND_COUNT ? atomic_kind_names[k] : NULL;
}
const char *atomic_kind_ptx(int64_t k)
{
    return k >= 0 && k < ATOMIC_KIND_COUNT ? atomic_kind_ptxs[k] : NULL;
}
const char *mem_sem_name(int64_t s)
{
    return s >= 0 && s < MEM_SEM_COUNT ? mem_sem_names[s] : NULL;
}
const char *mem_scope_name(int64_t s)
{
    return s >= 0 && s < MEM_SCOPE_COUNT ? mem_scope_names[s] : NULL;
}

static int name_index(const char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

bool atomic_kind_from_name(const char *name, AtomicKind *out)
{
    int i = name_index(atomic_kind_names, ATOMIC_KIND_COUNT, name);
    return i >= 0 && (*out = (AtomicKind)i, true);
}

bool mem_sem_from_name(const char *name, MemSem *out)
{
    int i = name_index(mem_sem_names, MEM_SEM_COUNT, name);
    return i >= 0 && (*out = (MemSem)i, true);
}

bool mem_scope_from_name(const char *name, MemScope *out)
{
    int i = name_index(mem_scope_names, MEM_SCOPE_COUNT, name);
    return i >= 0 && (*out = (MemScope)i, true);
}

bool op_from_name(const char *name, OpCode *out)
{
    for (int i = 0; i < OP_COUNT; i++) {
        if (strcmp(op_names[i], name) == 0) {
            *out = (OpCode)i;
            return true;
        }
    }
    return false;
}

/* ---- functions, values, params, region args -------------------------------------------------- */

IrFunc *ir_func_new(Arena *arena, const char *name)
{
    IrFunc *f = arena_alloc(arena, sizeof *f);
    f->name = name ? arena_strdup(arena, name) : "";
    f->arena = arena;
    IrValue none = {0};
    ARENA_PUSH(arena, f->values, f->nvalues, f->values_cap, none); /* values[0]: "no value" */
    Layout no_layout = {.kind = LAYOUT_NONE};
    ARENA_PUSH(arena, f->layouts, f->nlayouts, f->layouts_cap, no_layout);
    f->num_warps = 4;
    f->num_stages = 3;
    return f;
}

ValueId ir_value_new(IrFunc *f, Type type, const char *name)
{
    IrValue v = {.type = type, .name = name};
    ARENA_PUSH(f->arena, f->values, f->nvalues, f->values_cap, v);
    return f->nvalues - 1;
}

ValueId ir_param_add(IrFunc *f, Type type, const char *name, int divisibility)
{
    ValueId v = ir_value_new(f, type, name);
    f->values[v].index = f->nparams;
    IrParam p = {.value = v, .name = name, .divisibility = divisibility > 0 ? divisibility : 1};
    ARENA_PUSH(f->arena, f->params, f->nparams, f->params_cap, p);
    return v;
}

ValueId ir_region_add_arg(IrFunc *f, IrRegion *r, Type type, const char *name)
{
    ValueId v = ir_value_new(f, type, name);
    f->values[v].index = r->nargs;
    ARENA_PUSH(f->arena, r->args, r->nargs, r->args_cap, v);
    return v;
}

/* ---- layouts --------------------------------------------------------------------------------- */

static bool ints_equal(const int *a, const int *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

/* Compares only the fields valid for the kind (the union's other bytes may hold anything). */
bool layout_equal(const Layout *a, const Layout *b)
{
    if (a->kind != b->kind || a->rank != b->rank)
        return false;
    int n = a->rank > TRIC_MAX_RANK ? TRIC_MAX_RANK : (a->rank < 0 ? 0 : a->rank);
    switch (a->kind) {
    case LAYOUT_NONE: return true;
    case LAYOUT_BLOCKED:
        return ints_equal(a->blocked.size_per_thread, b->blocked.size_per_thread, n) &&
               ints_equal(a->blocked.threads_per_warp, b->blocked.threads_per_warp, n) &&
               ints_equal(a->blocked.warps_per_cta, b->blocked.warps_per_cta, n) &&
               ints_equal(a->blocked.order, b->blocked.order, n);
    case LAYOUT_SLICE: return a->slice.dim == b->slice.dim && a->slice.parent == b->slice.parent;
    case LAYOUT_MMA:
        return a->mma.version == b->mma.version &&
               ints_equal(a->mma.warps_per_cta, b->mma.warps_per_cta, n) &&
               ints_equal(a->mma.instr_shape, b->mma.instr_shape, 3);
    case LAYOUT_DOT_OPERAND:
        return a->dot_operand.parent == b->dot_operand.parent &&
               a->dot_operand.op_idx == b->dot_operand.op_idx &&
               a->dot_operand.k_width == b->dot_operand.k_width;
    case LAYOUT_SHARED:
        return a->shared.swizzle == b->shared.swizzle && a->shared.vec == b->shared.vec &&
               a->shared.per_phase == b->shared.per_phase &&
               a->shared.max_phase == b->shared.max_phase &&
               ints_equal(a->shared.order, b->shared.order, n);
    }
    return false;
}

int ir_layout_intern(IrFunc *f, const Layout *l)
{
    for (int i = 0; i < f->nlayouts; i++)
        if (layout_equal(&f->layouts[i], l))
            return i;
    ARENA_PUSH(f->arena, f->layouts, f->nlayouts, f->layouts_cap, *l);
    return f->nlayouts - 1;
}

/* ---- scratch records ------------------------------------------------------------------------- */

bool ir_scratch_present(const IrScratch *s)
{
    return s->ntiles > 0 || s->from[0] != DOT_FROM_REGISTERS || s->from[1] != DOT_FROM_REGISTERS;
}

const char *ir_scratch_combine_name(ScratchCombine c)
{
    switch (c) {
    case SCRATCH_COMBINE_NONE: return "none";
    case SCRATCH_COMBINE_SERIAL: return "serial";
    case SCRATCH_COMBINE_SHUFFLE: return "shuffle";
    case SCRATCH_COMBINE_STEPS: return "steps";
    }
    return "?";
}

bool ir_scratch_equal(const IrScratch *a, const IrScratch *b)
{
    if (a->ntiles != b->ntiles || a->combine != b->combine || a->warp_private != b->warp_private ||
        a->from[0] != b->from[0] || a->from[1] != b->from[1])
        return false;
    for (int i = 0; i < a->ntiles && i < 2; i++) {
        const IrScratchTile *x = &a->tile[i], *y = &b->tile[i];
        if (x->offset != y->offset || x->layout != y->layout || x->nstrides != y->nstrides)
            return false;
        for (int d = 0; d < x->nstrides && d < TRIC_MAX_RANK; d++)
            if (x->strides[d] != y->strides[d])
                return false;
    }
    return true;
}

/* ---- ops and regions ------------------------------------------------------------------------- */

void ir_region_insert(IrFunc *f, IrRegion *r, int pos, IrOp *op)
{
    if (r->nops == r->ops_cap) {
        int new_cap = r->ops_cap ? r->ops_cap * 2 : 8;
        r->ops = arena_grow(f->arena, r->ops, (size_t)r->ops_cap * sizeof *r->ops,
                            (size_t)new_cap * sizeof *r->ops);
        r->ops_cap = new_cap;
    }
    if (pos < 0 || pos > r->nops)
        pos = r->nops;
    memmove(&r->ops[pos + 1], &r->ops[pos], (size_t)(r->nops - pos) * sizeof *r->ops);
    r->ops[pos] = op;
    r->nops++;
}

int ir_region_index(const IrRegion *r, const IrOp *op)
{
    for (int i = 0; i < r->nops; i++)
        if (r->ops[i] == op)
            return i;
    return -1;
}

void ir_region_remove(IrRegion *r, int pos)
{
    if (pos < 0 || pos >= r->nops)
        return;
    memmove(&r->ops[pos], &r->ops[pos + 1], (size_t)(r->nops - pos - 1) * sizeof *r->ops);
    r->nops--;
}

IrOp *ir_build(IrBuilder *b, OpCode code, SrcLoc loc, const ValueId *operands, int noperands,
               const Type *result_types, int nresults, int nregions)
{
    IrFunc *f = b->func;
    IrOp *op = arena_alloc(f->arena, sizeof *op);
    op->code = code;
    op->loc = loc;
    op->noperands = noperands;
    if (noperands > 0) {
        op->operands = arena_alloc(f->arena, (size_t)noperands * sizeof *op->operands);
        memcpy(op->operands, operands, (size_t)noperands * sizeof *op->operands);
    }
    op->nresults = nresults;
    if (nresults > 0) {
        op->results = arena_alloc(f->arena, (size_t)nresults * sizeof *op->results);
        for (int i = 0; i < nresults; i++) {
            ValueId v = ir_value_new(f, result_types[i], NULL);
            f->values[v].def = op;
            f->values[v].index = i;
            op->results[i] = v;
        }
    }
    op->nregions = nregions;
    if (nregions > 0)
        op->regions = arena_alloc(f->arena, (size_t)nregions * sizeof *op->regions);
    if (b->region) {
        ir_region_insert(f, b->region, b->pos, op);
        /* Inserting before an op: the next op goes after this one, still before that op. */
        if (b->pos >= 0)
            b->pos++;
    }
    return op;
}

ValueId ir_build_unary(IrBuilder *b, OpCode code, SrcLoc loc, Type result, ValueId a)
{
    return ir_build(b, code, loc, &a, 1, &result, 1, 0)->results[0];
}

ValueId ir_build_binary(IrBuilder *b, OpCode code, SrcLoc loc, Type result, ValueId a, ValueId c)
{
    ValueId ops[2] = {a, c};
    return ir_build(b, code, loc, ops, 2, &result, 1, 0)->results[0];
}

ValueId ir_build_const_int(IrBuilder *b, SrcLoc loc, Type type, int64_t value)
{
    IrOp *op = ir_build(b, OP_CONST, loc, NULL, 0, &type, 1, 0);
    op->attr[0] = value; /* fattr stays 0: the dtype says which field holds the value */
    return op->results[0];
}

ValueId ir_build_const_float(IrBuilder *b, SrcLoc loc, Type type, double value)
{
    IrOp *op = ir_build(b, OP_CONST, loc, NULL, 0, &type, 1, 0);
    op->fattr = value;
    return op->results[0];
}

static void replace_uses_in_region(IrRegion *r, ValueId from, ValueId to)
{
    for (int i = 0; i < r->nops; i++) {
        IrOp *op = r->ops[i];
        for (int j = 0; j < op->noperands; j++)
            if (op->operands[j] == from)
                op->operands[j] = to;
        for (int j = 0; j < op->nregions; j++)
            replace_uses_in_region(&op->regions[j], from, to);
    }
}

bool ir_op_uses(const IrOp *op, ValueId v)
{
    for (int k = 0; k < op->noperands; k++)
        if (op->operands[k] == v)
            return true;
    for (int k = 0; k < op->nregions; k++)
        if (ir_region_uses(&op->regions[k], v))
            return true;
    return false;
}

bool ir_region_uses(const IrRegion *r, ValueId v)
{
    for (int i = 0; i < r->nops; i++)
        if (ir_op_uses(r->ops[i], v))
            return true;
    return false;
}

const IrOp *ir_region_find_if(const IrRegion *r, bool (*is)(const IrOp *op, const void *ctx),
                              const void *ctx)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        if (is(op, ctx))
            return op;
        for (int k = 0; k < op->nregions; k++) {
            const IrOp *in = ir_region_find_if(&op->regions[k], is, ctx);
            if (in)
                return in;
        }
    }
    return NULL;
}

typedef struct {
    const OpCode *codes;
    int n;
} CodeSet;

static bool has_code(const IrOp *op, const void *ctx)
{
    const CodeSet *set = ctx;
    for (int c = 0; c < set->n; c++)
        if (op->code == set->codes[c])
            return true;
    return false;
}

const IrOp *ir_region_find(const IrRegion *r, const OpCode *codes, int n)
{
    return ir_region_find_if(r, has_code, &(CodeSet){codes, n});
}

int ir_region_use_count(const IrRegion *r, ValueId v)
{
    int n = 0;
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int k = 0; k < op->noperands; k++)
            n += op->operands[k] == v;
        for (int k = 0; k < op->nregions; k++)
            n += ir_region_use_count(&op->regions[k], v);
    }
    return n;
}

void ir_replace_all_uses(IrFunc *f, ValueId from, ValueId to)
{
    replace_uses_in_region(&f->body, from, to);
}

/* ---- cloning --------------------------------------------------------------------------------- */

typedef struct CloneCtx {
    const IrFunc *src;
    IrFunc *dst;
    ValueId *map; /* src id -> dst id, 0 when not (yet) defined */
    bool same_arena;
    struct FileCopy {
        const SrcFile *from, *to;
    } * files; /* SrcFiles copied into another arena */
    int nfiles, files_cap;
} CloneCtx;

/* A location whose SrcFile lives in the source arena must not dangle when that arena is freed:
 * a clone into another arena gets its own copy of each SrcFile (the text stays shared). */
static SrcLoc clone_loc(CloneCtx *c, SrcLoc loc)
{
    if (c->same_arena || !loc.file)
        return loc;
    for (int i = 0; i < c->nfiles; i++)
        if (c->files[i].from == loc.file) {
            loc.file = c->files[i].to;
            return loc;
        }
    SrcFile *copy = arena_alloc(c->dst->arena, sizeof *copy);
    *copy = *loc.file;
    copy->name = loc.file->name ? arena_strdup(c->dst->arena, loc.file->name) : NULL;
    struct FileCopy fc = {.from = loc.file, .to = copy};
    ARENA_PUSH(c->dst->arena, c->files, c->nfiles, c->files_cap, fc);
    loc.file = copy;
    return loc;
}

static const char *clone_str(CloneCtx *c, const char *s)
{
    if (!s || c->same_arena)
        return s;
    return arena_strdup(c->dst->arena, s);
}

static ValueId clone_value(CloneCtx *c, ValueId old)
{
    const IrValue *ov = &c->src->values[old];
    ValueId nv = ir_value_new(c->dst, ov->type, clone_str(c, ov->name));
    IrValue *v = &c->dst->values[nv];
    v->layout = ov->layout;
    v->index = ov->index;
    if (ov->axis) {
        v->axis = arena_alloc(c->dst->arena, sizeof *v->axis);
        *v->axis = *ov->axis;
    }
    c->map[old] = nv;
    return nv;
}

static void clone_region(CloneCtx *c, const IrRegion *from, IrRegion *to);

static IrOp *clone_op(CloneCtx *c, const IrOp *o)
{
    Arena *a = c->dst->arena;
    IrOp *op = arena_alloc(a, sizeof *op);
    *op = *o;
    op->loc = clone_loc(c, o->loc);
    op->sattr = clone_str(c, o->sattr);
    op->operands = NULL;
    op->results = NULL;
    op->regions = NULL;
    if (o->noperands > 0) {
        op->operands = arena_alloc(a, (size_t)o->noperands * sizeof *op->operands);
        for (int i = 0; i < o->noperands; i++) {
            ValueId old = o->operands[i];
            op->operands[i] = (old > 0 && old < c->src->nvalues) ? c->map[old] : 0;
        }
    }
    /* Regions before results: a region cannot use its op's results, and numbering region values
     * first would break "in order of definition" for the printer; so results are numbered
     * first, as the printer does. */
    if (o->nresults > 0) {
        op->results = arena_alloc(a, (size_t)o->nresults * sizeof *op->results);
        for (int i = 0; i < o->nresults; i++) {
            ValueId nv = clone_value(c, o->results[i]);
            c->dst->values[nv].def = op;
            c->dst->values[nv].index = i;
            op->results[i] = nv;
        }
    }
    if (o->nregions > 0) {
        op->regions = arena_alloc(a, (size_t)o->nregions * sizeof *op->regions);
        for (int i = 0; i < o->nregions; i++)
            clone_region(c, &o->regions[i], &op->regions[i]);
    }
    return op;
}

static void clone_region(CloneCtx *c, const IrRegion *from, IrRegion *to)
{
    memset(to, 0, sizeof *to);
    for (int i = 0; i < from->nargs; i++) {
        ValueId nv = clone_value(c, from->args[i]);
        c->dst->values[nv].index = i;
        ARENA_PUSH(c->dst->arena, to->args, to->nargs, to->args_cap, nv);
    }
    for (int i = 0; i < from->nops; i++)
        ir_region_insert(c->dst, to, -1, clone_op(c, from->ops[i]));
}

/* ---- copies of ops within a function ------------------------------------------------------- */

static void clone_region_mapped(IrFunc *f, const IrRegion *from, IrRegion *to, const IrCloneMap *m)
{
    memset(to, 0, sizeof *to);
    for (int i = 0; i < from->nargs; i++) {
        ValueId old = from->args[i];
        ValueId nv = ir_region_add_arg(f, to, f->values[old].type, f->values[old].name);
        f->values[nv].layout = f->values[old].layout;
        f->values[nv].axis = f->values[old].axis;
        if (old < m->nmap)
            m->map[old] = nv;
    }
    IrBuilder b = {.func = f, .region = to, .pos = -1};
    for (int i = 0; i < from->nops; i++)
        ir_clone_op_mapped(&b, from->ops[i], m);
}

IrCloneMap ir_clone_map_new(IrFunc *f)
{
    return (IrCloneMap){.map = arena_alloc(f->arena, sizeof(ValueId) * (size_t)(f->nvalues + 1)),
                        .nmap = f->nvalues};
}

ValueId ir_mapped(const ValueId *map, int nmap, ValueId v)
{
    return v > 0 && v < nmap && map[v] ? map[v] : v;
}

void ir_rename_operands(IrOp *op, const ValueId *map, int nmap)
{
    for (int k = 0; k < op->noperands; k++)
        op->operands[k] = ir_mapped(map, nmap, op->operands[k]);
    for (int k = 0; k < op->nregions; k++)
        for (int i = 0; i < op->regions[k].nops; i++)
            ir_rename_operands(op->regions[k].ops[i], map, nmap);
}

IrOp *ir_clone_op_mapped(IrBuilder *b, const IrOp *o, const IrCloneMap *m)
{
    IrFunc *f = b->func;
    ValueId ops_small[16], *ops = ops_small;
    Type types_small[16], *types = types_small;
    if (o->noperands > 16)
        ops = arena_alloc(f->arena, sizeof *ops * (size_t)o->noperands);
    if (o->nresults > 16)
        types = arena_alloc(f->arena, sizeof *types * (size_t)o->nresults);
    for (int k = 0; k < o->noperands; k++) {
        ValueId v = o->operands[k];
        ops[k] = ir_mapped(m->map, m->nmap, v);
    }
    if (m->operands)
        m->operands(m->ctx, b, o, ops);
    for (int k = 0; k < o->nresults; k++)
        types[k] = f->values[o->results[k]].type;
    IrOp *n = ir_build(b, o->code, o->loc, ops, o->noperands, types, o->nresults, 0);
    memcpy(n->attr, o->attr, sizeof n->attr);
    n->fattr = o->fattr;
    n->sattr = o->sattr;
    n->partition = o->partition;
    for (int k = 0; k < o->nresults; k++) {
        ValueId old = o->results[k];
        f->values[n->results[k]].layout = f->values[old].layout;
        f->values[n->results[k]].axis = f->values[old].axis;
        f->values[n->results[k]].name = f->values[old].name;
        if (old < m->nmap)
            m->map[old] = n->results[k];
    }
    if (o->nregions > 0) {
        n->nregions = o->nregions;
        n->regions = arena_alloc(f->arena, sizeof *n->regions * (size_t)o->nregions);
        for (int k = 0; k < o->nregions; k++)
            clone_region_mapped(f, &o->regions[k], &n->regions[k], m);
    }
    return n;
}

/* Values are numbered params first, then in the order the printer meets them: an op's results,
 * then its regions (args, then ops). Values no op defines any more (left by removed ops) are
 * dropped. */
IrFunc *ir_func_clone(const IrFunc *f, Arena *arena)
{
    IrFunc *g = ir_func_new(arena, f->name);
    CloneCtx c = {.src = f, .dst = g, .same_arena = (arena == f->arena)};
    c.map = arena_alloc(arena, (size_t)(f->nvalues + 1) * sizeof *c.map);
    g->num_warps = f->num_warps;
    g->num_stages = f->num_stages;
    g->shared_bytes = f->shared_bytes;
    g->ws = f->ws;
    g->persistent = f->persistent;
    if (f->ntmaps > 0) {
        g->tmaps = arena_alloc(arena, sizeof(TensorMap) * TRIC_MAX_TENSOR_MAPS);
        memcpy(g->tmaps, f->tmaps, sizeof(TensorMap) * (size_t)f->ntmaps);
        g->ntmaps = f->ntmaps;
    }
    for (int i = 1; i < f->nlayouts; i++)
        ARENA_PUSH(arena, g->layouts, g->nlayouts, g->layouts_cap, f->layouts[i]);
    for (int i = 0; i < f->nparams; i++) {
        IrParam p = f->params[i];
        p.name = clone_str(&c, p.name);
        p.value = clone_value(&c, f->params[i].value);
        g->values[p.value].index = i;
        ARENA_PUSH(arena, g->params, g->nparams, g->params_cap, p);
    }
    clone_region(&c, &f->body, &g->body);
    return g;
}

void launch_value_print(StrBuf *out, const LaunchValue *v)
{
    if (v->unbounded) {
        strbuf_putc(out, '*');
        return;
    }
    bool any = false;
    if (v->constant != 1 || v->nparams == 0) {
        strbuf_printf(out, "%lld", (long long)v->constant);
        any = true;
    }
    for (int i = 0; i < v->nparams; i++) {
        strbuf_printf(out, "%sp%d", any ? "*" : "", v->params[i]);
        any = true;
    }
}

bool launch_value_parse(const char **text, LaunchValue *v, const char **why)
{
    static const char *const form =
        "a value is '*' or factors joined by '*': an integer first, then pK";
    const char *s = *text, *ignored;
    if (!why)
        why = &ignored;
    *v = (LaunchValue){.constant = 1};
    if (*s == '*') {
        v->unbounded = true;
        *text = s + 1;
        return true;
    }
    for (int i = 0;; i++) {
        char *end;
        errno = 0;
        if (*s == 'p') {
            long long k = strtoll(s + 1, &end, 10);
            if (end == s + 1 || !(s[1] >= '0' && s[1] <= '9') || errno ||
                k >= TRIC_LAUNCH_PARAM_LIMIT) {
                *why = "a parameter factor is pK with K a parameter's index";
                return false;
            }
            if (v->nparams == TRIC_LAUNCH_MAX_PARAMS) {
                *why = "a value has at most 4 parameter factors";
                return false;
            }
            v->params[v->nparams++] = (int)k;
        } else if (i == 0 && (*s == '-' || (*s >= '0' && *s <= '9'))) {
            v->constant = strtoll(s, &end, 10);
            if (end == s || errno) {
                *why = form;
                return false;
            }
        } else {
            *why = form;
            return false;
        }
        s = end;
        /* a '*' continues the value only before another factor: "2*p3" is one value, and in
         * "64,*" the '*' after the comma is the next one */
        if (*s != '*' || !(s[1] == 'p' || s[1] == '-' || (s[1] >= '0' && s[1] <= '9')))
            break;
        s++;
    }
    *text = s;
    return true;
}

static void sort_params(int *a, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && a[j] < a[j - 1]; j--) {
            int x = a[j];
            a[j] = a[j - 1];
            a[j - 1] = x;
        }
}

bool launch_value_same_params(const LaunchValue *v, const LaunchValue *w)
{
    if (v->nparams != w->nparams)
        return false;
    int a[TRIC_LAUNCH_MAX_PARAMS], b[TRIC_LAUNCH_MAX_PARAMS];
    memcpy(a, v->params, sizeof a);
    memcpy(b, w->params, sizeof b);
    sort_params(a, v->nparams);
    sort_params(b, w->nparams);
    return memcmp(a, b, sizeof(int) * (size_t)v->nparams) == 0;
}

bool launch_value_equal(const LaunchValue *v, const LaunchValue *w)
{
    return v->unbounded == w->unbounded &&
           (v->unbounded || (v->constant == w->constant && launch_value_same_params(v, w)));
}

bool tensor_map_equal(const TensorMap *a, const TensorMap *b)
{
    if (a->base_param != b->base_param || a->dtype != b->dtype || a->rank != b->rank ||
        a->swizzle != b->swizzle)
        return false;
    for (int d = 0; d < a->rank; d++)
        if (!launch_value_equal(&a->dims[d], &b->dims[d]) ||
            !launch_value_equal(&a->strides[d], &b->strides[d]) || a->box[d] != b->box[d])
            return false;
    return true;
}
