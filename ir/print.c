/* print.c: the tile IR text form (tric --emit=ir). parse.c reads it back; print -> parse ->
 * print is the identity. The grammar (docs/ir.md has the full description):
 *
 *   func    = "kernel" "@" NAME "(" [param ("," param)*] ")" "num_warps" "(" INT ")"
 *             "num_stages" "(" INT ")" "shared_bytes" "(" INT ")"
 *             ["warp_specialize" "(" ... ")"] ["persistent" "(" "workspace_bytes" "=" INT
 *             ["," "axes" "=" INT] ["," "from_grid"] ")"]
 *             ["tensor_map" "(" ... ")"]* "{" op* "}"
 *   param   = typed
 *   typed   = VALUE ":" TYPE [layout] ["{" key ("," key)* "}"]     keys: name, div, equal_to_1
 *   op      = [VALUE ("," VALUE)* "="] OPNAME [positional | operand ("," operand)*]
 *             ["{" attr ("," attr)* "}"] [":" result ("," result)*] region*
 *             ["smem" "(" INT "," INT ")"] ["loc" "(" STRING ":" INT ":" INT ")"]
 *   operand = [LABEL] (VALUE | "none")            LABEL: mask, other, iter (load, store, for)
 *   result  = TYPE [layout] ["{" "name" "=" STRING "}"]
 *   region  = [("else" | "do")] "{" ["^" "(" typed ("," typed)* ")" ":"] op* "}"
 *   layout  = "#blocked<spt=[..], tpw=[..], wpc=[..], order=[..]>" | "#slice<dim=D, parent=layout>"
 *           | "#mma<version=V, wpc=[..], instr=[M,N,K]>" | "#dot_op<idx=I, parent=layout, kwidth=K>"
 *           | "#shared<swizzle=S, vec=V, per_phase=P, max_phase=M, order=[..]>"
 *   TYPE    = ["!smem"] "<" (INT "x")+ elem ">" | elem     (!smem: a tile in shared memory)
 *
 * Values print as %N, numbered in order of definition (ir_value_numbering), so the text of a
 * function does not depend on how its ValueIds were allocated. */
#include "ir/ir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- numbering ----------------------------------------------------------------------------- */

typedef struct Numbering {
    int32_t *num;
    int32_t next;
    int nvalues;
} Numbering;

static void number_value(Numbering *n, ValueId v)
{
    if (v > 0 && v < n->nvalues && n->num[v] < 0)
        n->num[v] = n->next++;
}

static void number_region(Numbering *n, const IrRegion *r)
{
    for (int i = 0; i < r->nargs; i++)
        number_value(n, r->args[i]);
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int j = 0; j < op->nresults; j++)
            number_value(n, op->results[j]);
        for (int j = 0; j < op->nregions; j++)
            number_region(n, &op->regions[j]);
    }
}

int32_t *ir_value_numbering(const IrFunc *f, Arena *arena)
{
    Numbering n = {.nvalues = f->nvalues};
    n.num = arena_alloc(arena, (size_t)(f->nvalues + 1) * sizeof *n.num);
    for (int i = 0; i <= f->nvalues; i++)
        n.num[i] = -1;
    for (int i = 0; i < f->nparams; i++)
        number_value(&n, f->params[i].value);
    number_region(&n, &f->body);
    return n.num;
}

/* ---- pieces -------------------------------------------------------------------------------- */

typedef struct Printer {
    StrBuf *out;
    const IrFunc *f;
    const int32_t *num;
} Printer;

static void print_string(StrBuf *out, const char *s)
{
    strbuf_putc(out, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            strbuf_printf(out, "\\%c", *p);
        else if (*p == '\n')
            strbuf_append(out, "\\n");
        else if (*p == '\t')
            strbuf_append(out, "\\t");
        else if (*p < 0x20 || *p >= 0x7f)
            strbuf_printf(out, "\\x%02x", *p);
        else
            strbuf_putc(out, (char)*p);
    }
    strbuf_putc(out, '"');
}

static void print_value(Printer *p, ValueId v)
{
    if (v <= 0 || v >= p->f->nvalues)
        strbuf_append(p->out, "none");
    else if (p->num[v] < 0)
        strbuf_printf(p->out, "%%undef%d", (int)v); /* a dangling use: the verifier reports it */
    else
        strbuf_printf(p->out, "%%%d", (int)p->num[v]);
}

static void print_int_list(StrBuf *out, const int *xs, int n)
{
    strbuf_putc(out, '[');
    for (int i = 0; i < n; i++)
        strbuf_printf(out, "%s%d", i ? ", " : "", xs[i]);
    strbuf_putc(out, ']');
}

static void print_layout_rec(StrBuf *out, const IrFunc *f, int index, int depth)
{
    if (index <= 0 || index >= f->nlayouts || depth > 8) {
        strbuf_append(out, "#none");
        return;
    }
    const Layout *l = &f->layouts[index];
    int rank = l->rank < 0 ? 0 : (l->rank > TRIC_MAX_RANK ? TRIC_MAX_RANK : l->rank);
    switch (l->kind) {
    case LAYOUT_NONE: strbuf_append(out, "#none"); break;
    case LAYOUT_BLOCKED:
        strbuf_append(out, "#blocked<spt=");
        print_int_list(out, l->blocked.size_per_thread, rank);
        strbuf_append(out, ", tpw=");
        print_int_list(out, l->blocked.threads_per_warp, rank);
        strbuf_append(out, ", wpc=");
        print_int_list(out, l->blocked.warps_per_cta, rank);
        strbuf_append(out, ", order=");
        print_int_list(out, l->blocked.order, rank);
        strbuf_putc(out, '>');
        break;
    case LAYOUT_SLICE:
        strbuf_printf(out, "#slice<dim=%d, parent=", l->slice.dim);
        print_layout_rec(out, f, l->slice.parent, depth + 1);
        strbuf_putc(out, '>');
        break;
    case LAYOUT_MMA:
        strbuf_printf(out, "#mma<version=%d, wpc=", l->mma.version);
        print_int_list(out, l->mma.warps_per_cta, rank);
        strbuf_append(out, ", instr=");
        print_int_list(out, l->mma.instr_shape, 3);
        strbuf_putc(out, '>');
        break;
    case LAYOUT_DOT_OPERAND:
        strbuf_printf(out, "#dot_op<idx=%d, parent=", l->dot_operand.op_idx);
        print_layout_rec(out, f, l->dot_operand.parent, depth + 1);
        strbuf_printf(out, ", kwidth=%d>", l->dot_operand.k_width);
        break;
    case LAYOUT_SHARED:
        strbuf_printf(out, "#shared<swizzle=%d, vec=%d, per_phase=%d, max_phase=%d, order=",
                      l->shared.swizzle, l->shared.vec, l->shared.per_phase, l->shared.max_phase);
        print_int_list(out, l->shared.order, rank);
        strbuf_putc(out, '>');
        break;
    }
}

void ir_print_layout(StrBuf *out, const IrFunc *f, int layout)
{
    print_layout_rec(out, f, layout, 0);
}

/* TYPE [layout] [{name = "x"}] for a result or region arg. */
static void print_value_type(Printer *p, ValueId v, bool with_name)
{
    const IrValue *val = &p->f->values[v];
    type_print(p->out, val->type);
    if (val->layout > 0) {
        strbuf_putc(p->out, ' ');
        ir_print_layout(p->out, p->f, val->layout);
    }
    if (with_name && val->name && val->name[0]) {
        strbuf_append(p->out, " {name = ");
        print_string(p->out, val->name);
        strbuf_putc(p->out, '}');
    }
}

static void print_typed_value(Printer *p, ValueId v)
{
    print_value(p, v);
    strbuf_append(p->out, ": ");
    print_value_type(p, v, true);
}

/* Floats print in the shortest %.Ng that strtod reads back to the same double, so the text is
 * readable (0.5, not 0.50000000000000000) and still bit-exact; a ".0" marks integral values. */
static void print_float(StrBuf *out, double x)
{
    char buf[64];
    if (isnan(x)) {
        strbuf_append(out, signbit(x) ? "-nan" : "nan");
        return;
    }
    if (isinf(x)) {
        strbuf_append(out, x < 0 ? "-inf" : "inf");
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    strbuf_append(out, buf);
    if (!strpbrk(buf, ".en"))
        strbuf_append(out, ".0");
}

/* The label before operand i, or NULL. Load: ptr, mask, other; store: ptr, value, mask;
 * async_copy: view, ptr, mask, other; for: lo, hi, step, then iter args; wgmma: a, b, c, guard. */
static const char *operand_label(OpCode code, int i)
{
    if (code == OP_LOAD)
        return i == 1 ? "mask" : i == 2 ? "other" : NULL;
    if (code == OP_ASYNC_COPY)
        return i == 2 ? "mask" : i == 3 ? "other" : NULL;
    if (code == OP_STORE || code == OP_ATOMIC_RMW)
        return i == 2 ? "mask" : NULL;
    if (code == OP_FOR)
        return i >= 3 ? "iter" : NULL;
    if (code == OP_WGMMA)
        return i == 3 ? "guard" : NULL;
    return NULL;
}

/* How many of attr[] an op names (the rest must be zero or the raw form prints). */
static int known_attr_slots(const IrFunc *f, const IrOp *op)
{
    switch (op->code) {
    case OP_CONST: {
        Type t = op->nresults > 0 ? f->values[op->results[0]].type : (Type){0};
        return (!t.is_ptr && dtype_is_float(t.dtype)) ? 0 : 1;
    }
    case OP_PROGRAM_ID:
    case OP_NUM_PROGRAMS:
    case OP_TILE_COUNT:
    case OP_WORKSPACE:
    case OP_EXPAND_DIMS:
    case OP_SPLIT:
    case OP_LIBDEVICE:
    case OP_ASYNC_WAIT:
    case OP_WGMMA_WAIT:
    case OP_BARRIER:
    case OP_PREFETCH:
    case OP_REDUCE_SUM:
    case OP_REDUCE_MAX:
    case OP_REDUCE_MIN:
    case OP_ARGMAX:
    case OP_ARGMIN:
    case OP_MBAR_EXPECT:
    case OP_MBAR_INIT:
    case OP_TMA_LOAD: return 1;
    case OP_TMA_STORE: return 2;
    case OP_MAKE_RANGE: return 2;
    case OP_DOT: /* (slot 1 unused: see print_attr_dict) */
    case OP_WGMMA: return 3;
    case OP_SCAN:
    case OP_ATOMIC_RMW:
    case OP_ATOMIC_CAS: return 3;
    case OP_TRANS:
    case OP_SUBTILE: return op->nresults > 0 ? f->values[op->results[0]].type.rank : 0;
    case OP_MULTIPLE_OF:
    case OP_MAX_CONTIGUOUS: {
        /* One entry per dim; a scalar has one entry too (tl.multiple_of on a scalar). */
        int rank = op->noperands > 0 && op->operands[0] > 0 && op->operands[0] < f->nvalues
                       ? f->values[op->operands[0]].type.rank
                       : 0;
        return rank > 0 ? rank : 1;
    }
    default: return 0;
    }
}

static void print_i64_list(StrBuf *out, const int64_t *xs, int n)
{
    strbuf_putc(out, '[');
    for (int i = 0; i < n; i++)
        strbuf_printf(out, "%s%lld", i ? ", " : "", (long long)xs[i]);
    strbuf_putc(out, ']');
}

/* The raw attribute list keeps its four-slot form ("attr = [2, 0, 0, 0]") unless the fifth slot
 * (a rank-5 trans's last dim) is set. */
static int raw_attr_count(const IrOp *op)
{
    return op->attr[TRIC_MAX_RANK - 1] != 0 ? TRIC_MAX_RANK : TRIC_MAX_RANK - 1;
}

/* The attribute dict: named keys, or the raw "attr = [a0, a1, a2, a3]" when some slot the op
 * does not name is set (so nothing is ever lost in print -> parse). */
static void print_attr_dict(Printer *p, const IrOp *op)
{
    StrBuf *out = p->out;
    int known = known_attr_slots(p->f, op);
    bool extra = false;
    for (int i = known; i < TRIC_MAX_RANK; i++)
        if (op->attr[i] != 0)
            extra = true;
    if (op->code == OP_DOT && op->attr[1] != 0) /* a slot only wgmma names (trans_b) */
        extra = true;
    bool any = false;
#define KEY(...)                                                                                   \
    (strbuf_append(out, any ? ", " : " {"), any = true, strbuf_printf(out, __VA_ARGS__))
    if (extra) {
        KEY("attr = ");
        print_i64_list(out, op->attr, raw_attr_count(op));
    } else {
        switch (op->code) {
        case OP_EXPAND_DIMS:
        case OP_REDUCE_SUM:
        case OP_REDUCE_MAX:
        case OP_REDUCE_MIN:
        case OP_ARGMAX:
        case OP_ARGMIN: KEY("axis = %lld", (long long)op->attr[0]); break;
        case OP_DOT:
        case OP_WGMMA:
            KEY("allow_tf32 = %lld", (long long)op->attr[0]);
            if (op->attr[1])
                KEY("trans_b = %lld", (long long)op->attr[1]);
            if (op->attr[2])
                KEY("max_num_imprecise_acc = %lld", (long long)op->attr[2]);
            break;
        case OP_SCAN:
            KEY("axis = %lld", (long long)op->attr[0]);
            if (op->attr[1] >= 0 && op->attr[1] < OP_COUNT)
                KEY("combine = %s", op_name((OpCode)op->attr[1]));
            else
                KEY("combine = %lld", (long long)op->attr[1]);
            KEY("reverse = %lld", (long long)op->attr[2]);
            break;
        case OP_ASYNC_WAIT:
        case OP_WGMMA_WAIT: KEY("pending = %lld", (long long)op->attr[0]); break;
        case OP_SPLIT: KEY("half = %lld", (long long)op->attr[0]); break;
        case OP_MBAR_EXPECT: KEY("bytes = %lld", (long long)op->attr[0]); break;
        case OP_MBAR_INIT:
            if (op->attr[0] > 1)
                KEY("arrivals = %lld", (long long)op->attr[0]);
            break;
        case OP_TMA_LOAD: KEY("tmap = %lld", (long long)op->attr[0]); break;
        case OP_TMA_STORE:
            KEY("tmap = %lld", (long long)op->attr[0]);
            KEY("contig = %lld", (long long)op->attr[1]);
            break;
        case OP_LIBDEVICE: {
            const LibdeviceInfo *fn = libdevice_info(op->attr[0]);
            if (fn) {
                KEY("fn = ");
                print_string(out, fn->name);
            } else { /* not a function of the table: keep the number (the verifier says why) */
                KEY("attr = ");
                print_i64_list(out, op->attr, raw_attr_count(op));
            }
            break;
        }
        case OP_ATOMIC_RMW:
        case OP_ATOMIC_CAS: {
            const char *kind = atomic_kind_name(op->attr[0]);
            const char *sem = mem_sem_name(op->attr[1]), *scope = mem_scope_name(op->attr[2]);
            bool ok = sem && scope && (op->code == OP_ATOMIC_RMW ? kind != NULL : op->attr[0] == 0);
            if (!ok) { /* outside the tables: keep the numbers (the verifier says why) */
                KEY("attr = ");
                print_i64_list(out, op->attr, raw_attr_count(op));
                break;
            }
            if (op->code == OP_ATOMIC_RMW) {
                KEY("kind = ");
                print_string(out, kind);
            }
            KEY("sem = ");
            print_string(out, sem);
            KEY("scope = ");
            print_string(out, scope);
            break;
        }
        case OP_BARRIER: /* a plain barrier prints bare */
            if (op->attr[0] != 0)
                KEY("fence_async = %lld", (long long)op->attr[0]);
            break;
        case OP_PREFETCH: /* into L2 prints bare */
            if (op->attr[0] != 0)
                KEY("l1 = %lld", (long long)op->attr[0]);
            break;
        case OP_TRANS:
            KEY("perm = ");
            print_i64_list(out, op->attr, known);
            break;
        case OP_SUBTILE:
            KEY("offsets = ");
            print_i64_list(out, op->attr, known);
            break;
        case OP_MULTIPLE_OF:
            KEY("divisibility = ");
            print_i64_list(out, op->attr, known);
            break;
        case OP_MAX_CONTIGUOUS:
            KEY("contiguity = ");
            print_i64_list(out, op->attr, known);
            break;
        default: break;
        }
    }
    if (op->code == OP_ASSERT) {
        KEY("msg = ");
        print_string(out, op->sattr ? op->sattr : "");
    }
    if (op->partition != PARTITION_ALL)
        KEY("partition = %s", ir_partition_name(op->partition));
#undef KEY
    if (any)
        strbuf_putc(out, '}');
}

static void print_region(Printer *p, const IrRegion *r, int indent);

/* A scratch tile: "#shared<...>" or "strides [s0, s1]". */
static void print_scratch_tile(Printer *p, const IrScratchTile *t)
{
    if (t->layout > 0) {
        ir_print_layout(p->out, p->f, t->layout);
        return;
    }
    strbuf_append(p->out, "strides ");
    print_i64_list(p->out, t->strides, t->nstrides);
}

static const char *dot_from_name(DotOperandFrom from)
{
    switch (from) {
    case DOT_FROM_REGISTERS: return "registers";
    case DOT_FROM_SOURCE: return "source";
    case DOT_FROM_SLOT: return "slot";
    }
    return "?";
}

/* " smem(offset, bytes[, record])" (docs/ir.md "Scratch records"): a one-tile record as its tile;
 * a dot's as "a = FROM [at OFFSET TILE], b = ...". */
static void print_smem(Printer *p, const IrOp *op)
{
    const IrScratch *s = &op->scratch;
    bool record = ir_scratch_present(s);
    if (op->smem_offset == 0 && op->smem_bytes == 0 && !record)
        return;
    strbuf_printf(p->out, " smem(%d, %d", (int)op->smem_offset, (int)op->smem_bytes);
    if (record && op->code == OP_DOT) {
        for (int i = 0; i < 2; i++) {
            strbuf_printf(p->out, ", %s = %s", i ? "b" : "a", dot_from_name(s->from[i]));
            if (s->ntiles == 2) {
                strbuf_printf(p->out, " at %d ", (int)s->tile[i].offset);
                print_scratch_tile(p, &s->tile[i]);
            }
        }
    } else if (record && s->ntiles >= 1) {
        strbuf_append(p->out, ", ");
        print_scratch_tile(p, &s->tile[0]);
        if (s->combine != SCRATCH_COMBINE_NONE)
            strbuf_printf(p->out, ", %s", ir_scratch_combine_name(s->combine));
        if (s->warp_private)
            strbuf_append(p->out, ", warp_private");
    }
    strbuf_putc(p->out, ')');
}

static void print_indent(StrBuf *out, int indent)
{
    for (int i = 0; i < indent; i++)
        strbuf_append(out, "  ");
}

static void print_op_main(Printer *p, const IrOp *op, int indent, bool full)
{
    StrBuf *out = p->out;
    const IrFunc *f = p->f;
    for (int i = 0; i < op->nresults; i++) {
        if (i)
            strbuf_append(out, ", ");
        print_value(p, op->results[i]);
    }
    if (op->nresults > 0)
        strbuf_append(out, " = ");
    strbuf_append(out, op_name(op->code));
    /* Positional attributes of the ops that take no operands. */
    switch (op->code) {
    case OP_CONST: {
        Type t = op->nresults > 0 ? f->values[op->results[0]].type : (Type){0};
        strbuf_putc(out, ' ');
        if (!t.is_ptr && dtype_is_float(t.dtype))
            print_float(out, op->fattr);
        else
            strbuf_printf(out, "%lld", (long long)op->attr[0]);
        break;
    }
    case OP_PROGRAM_ID:
    case OP_NUM_PROGRAMS:
    case OP_TILE_COUNT:
    case OP_WORKSPACE: strbuf_printf(out, " %lld", (long long)op->attr[0]); break;
    case OP_MAKE_RANGE:
        strbuf_printf(out, " %lld, %lld", (long long)op->attr[0], (long long)op->attr[1]);
        break;
    default: break;
    }
    for (int i = 0; i < op->noperands; i++) {
        strbuf_append(out, i ? ", " : " ");
        const char *label = operand_label(op->code, i);
        if (label)
            strbuf_printf(out, "%s ", label);
        print_value(p, op->operands[i]);
    }
    print_attr_dict(p, op);
    for (int i = 0; i < op->nresults; i++) {
        strbuf_append(out, i ? ", " : " : ");
        print_value_type(p, op->results[i], true);
    }
    for (int i = 0; i < op->nregions; i++) {
        if (i > 0 && op->code == OP_IF)
            strbuf_append(out, " else");
        else if (i > 0 && op->code == OP_WHILE)
            strbuf_append(out, " do");
        if (!full) {
            strbuf_append(out, " {...}");
            continue;
        }
        strbuf_append(out, " {\n");
        print_region(p, &op->regions[i], indent + 1);
        print_indent(out, indent);
        strbuf_putc(out, '}');
    }
    print_smem(p, op);
    if (op->loc.file && op->loc.line > 0) {
        strbuf_append(out, " loc(");
        print_string(out, op->loc.file->name ? op->loc.file->name : "");
        strbuf_printf(out, ":%d:%d)", op->loc.line, op->loc.col);
    }
}

static void print_region(Printer *p, const IrRegion *r, int indent)
{
    if (r->nargs > 0) {
        print_indent(p->out, indent - 1);
        strbuf_append(p->out, "^(");
        for (int i = 0; i < r->nargs; i++) {
            if (i)
                strbuf_append(p->out, ", ");
            print_typed_value(p, r->args[i]);
        }
        strbuf_append(p->out, "):\n");
    }
    for (int i = 0; i < r->nops; i++) {
        print_indent(p->out, indent);
        print_op_main(p, r->ops[i], indent, true);
        strbuf_putc(p->out, '\n');
    }
}

void ir_print_op_head(StrBuf *out, const IrFunc *f, const int32_t *numbering, const IrOp *op)
{
    Printer p = {.out = out, .f = f, .num = numbering};
    print_op_main(&p, op, 0, false);
}

/* " tensor_map(fp16, base = 0, dims = [*, p3], strides = [1, p6], box = [64, 128], swizzle =
 * 128)": parameters by index (launch order), as the PTX metadata names them. */
static void print_tensor_map(StrBuf *out, const TensorMap *m)
{
    strbuf_printf(out, " tensor_map(%s, base = %d", dtype_sig_name(m->dtype), m->base_param);
    const LaunchValue *lists[2] = {m->dims, m->strides};
    const char *keys[2] = {"dims", "strides"};
    for (int k = 0; k < 2; k++) {
        strbuf_printf(out, ", %s = [", keys[k]);
        for (int d = 0; d < m->rank; d++) {
            if (d)
                strbuf_append(out, ", ");
            launch_value_print(out, &lists[k][d]);
        }
        strbuf_putc(out, ']');
    }
    strbuf_append(out, ", box = [");
    for (int d = 0; d < m->rank; d++)
        strbuf_printf(out, "%s%d", d ? ", " : "", m->box[d]);
    strbuf_printf(out, "], swizzle = %d)", m->swizzle);
}

void ir_print(StrBuf *out, const IrFunc *f)
{
    Arena *scratch = arena_new();
    Printer p = {.out = out, .f = f, .num = ir_value_numbering(f, scratch)};
    strbuf_printf(out, "kernel @%s(", f->name ? f->name : "");
    for (int i = 0; i < f->nparams; i++) {
        const IrParam *prm = &f->params[i];
        if (i)
            strbuf_append(out, ", ");
        print_value(&p, prm->value);
        strbuf_append(out, ": ");
        print_value_type(&p, prm->value, false);
        bool any = false;
        const char *pname = prm->name ? prm->name : f->values[prm->value].name;
        if (pname && pname[0]) {
            strbuf_append(out, " {name = ");
            print_string(out, pname);
            any = true;
        }
        if (prm->divisibility > 1) {
            strbuf_printf(out, "%sdiv = %d", any ? ", " : " {", prm->divisibility);
            any = true;
        }
        if (prm->equal_to_1) {
            strbuf_append(out, any ? ", equal_to_1" : " {equal_to_1");
            any = true;
        }
        if (any)
            strbuf_putc(out, '}');
    }
    strbuf_printf(out, ") num_warps(%d) num_stages(%d) shared_bytes(%d)", f->num_warps,
                  f->num_stages, f->shared_bytes);
    if (f->ws.producer_warps > 0) {
        strbuf_printf(out,
                      " warp_specialize(producer_warps = %d, producer_regs = %d, consumer_regs = "
                      "%d, max_regs = %d",
                      f->ws.producer_warps, f->ws.producer_regs, f->ws.consumer_regs,
                      f->ws.max_regs);
        if (f->ws.consumer_groups > 1)
            strbuf_printf(out, ", consumer_groups = %d, scratch_stride = %d", f->ws.consumer_groups,
                          f->ws.scratch_stride);
        strbuf_putc(out, ')');
    }
    if (f->persistent.on) {
        strbuf_printf(out, " persistent(workspace_bytes = %lld",
                      (long long)f->persistent.workspace_bytes);
        if (f->persistent.axes > 1)
            strbuf_printf(out, ", axes = %d", f->persistent.axes);
        if (f->persistent.from_grid)
            strbuf_append(out, ", from_grid");
        strbuf_putc(out, ')');
    }
    for (int i = 0; i < f->ntmaps; i++)
        print_tensor_map(out, &f->tmaps[i]);
    strbuf_append(out, " {\n");
    print_region(&p, &f->body, 1);
    strbuf_append(out, "}\n");
    arena_free(scratch);
}
