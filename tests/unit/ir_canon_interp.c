/* ir_canon_interp: canonicalize's constant folding agrees with the interpreter. A kernel computes
 * every foldable op (integer and float arithmetic, compares, casts, unary ops, select) on many
 * constant pairs and stores each result's bits to out[k]; the interpreter runs it as built and
 * after canonicalize (then cse and dce), and the two outputs must be bit-identical. It also
 * checks that canonicalize really folded: no arithmetic op with only constant operands is left
 * for the cases it promises to fold. */
#include "passes/passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const DType int_types[] = {DT_I8,  DT_I16, DT_I32, DT_I64, DT_U8,
                                  DT_U16, DT_U32, DT_U64, DT_I1};
static const DType float_types[] = {DT_F32, DT_F64};
static const int64_t int_values[] = {
    0, 1, -1, 3, -7, 31, 32, 127, -128, 255, 65535, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN};
static const double float_values[] = {0.0, -0.0,       1.0,          -1.0,     0.1,
                                      2.5, -2.5,       1e30,         -3.75e-5, INFINITY,
                                      NAN, 16777217.0, 4294967296.5, -129.9};
static const OpCode int_binops[] = {OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_REM, OP_MIN,   OP_MAX,
                                    OP_AND, OP_OR,  OP_XOR, OP_SHL, OP_SHR, OP_UMULHI};
static const OpCode float_binops[] = {OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_REM, OP_MIN, OP_MAX};
static const OpCode cmps[] = {OP_CMP_EQ, OP_CMP_NE, OP_CMP_LT, OP_CMP_LE, OP_CMP_GT, OP_CMP_GE};

#define N(a) ((int)(sizeof(a) / sizeof *(a)))

typedef struct Gen {
    IrFunc *f;
    IrBuilder b;
    ValueId out;
    int k;
} Gen;

static const SrcFile src = {.name = "canon_interp.tri"};

/* out[k] = the 64 bits of v (ints sign/zero-extended by a cast, floats via fp64 and bitcast). */
static void emit_store(Gen *g, ValueId v)
{
    SrcLoc loc = {.file = &src, .line = g->k + 1, .col = 1};
    Type t = g->f->values[v].type;
    ValueId bits;
    if (dtype_is_float(t.dtype)) {
        ValueId d =
            t.dtype == DT_F64 ? v : ir_build_unary(&g->b, OP_CAST, loc, type_scalar(DT_F64), v);
        bits = ir_build_unary(&g->b, OP_BITCAST, loc, type_scalar(DT_I64), d);
    } else {
        bits = t.dtype == DT_I64 ? v : ir_build_unary(&g->b, OP_CAST, loc, type_scalar(DT_I64), v);
    }
    ValueId off = ir_build_const_int(&g->b, loc, type_scalar(DT_I32), g->k);
    ValueId p = ir_build_binary(&g->b, OP_ADDPTR, loc, type_ptr(DT_I64), g->out, off);
    ir_build(&g->b, OP_STORE, loc, (ValueId[]){p, bits}, 2, NULL, 0, 0);
    g->k++;
}

static void build(Gen *g)
{
    SrcLoc nl = {0};
    for (int ti = 0; ti < N(int_types); ti++) {
        DType dt = int_types[ti];
        Type t = type_scalar(dt);
        for (int i = 0; i < N(int_values); i++) {
            /* Fold raw and normalized inputs alike: a constant means its value wrapped to dt. */
            ValueId a =
                ir_build_const_int(&g->b, nl, t, dt == DT_I1 ? int_values[i] & 1 : int_values[i]);
            for (int j = 0; j < N(int_values); j += 4) {
                ValueId c = ir_build_const_int(&g->b, nl, t,
                                               dt == DT_I1 ? int_values[j] & 1 : int_values[j]);
                bool zero =
                    dt == DT_I1
                        ? (int_values[j] & 1) == 0
                        : (int_values[j] & ((UINT64_C(2) << (dtype_bits(dt) - 1)) - 1)) == 0;
                for (int o = 0; o < N(int_binops); o++)
                    /* Integer division by zero stops the interpreter: leave it out. */
                    if ((dt != DT_I1 || (int_binops[o] >= OP_AND && int_binops[o] <= OP_XOR)) &&
                        !(zero && (int_binops[o] == OP_DIV || int_binops[o] == OP_REM)))
                        emit_store(g, ir_build_binary(&g->b, int_binops[o], nl, t, a, c));
                for (int o = 0; o < N(cmps); o++)
                    emit_store(g, ir_build_binary(&g->b, cmps[o], nl, type_scalar(DT_I1), a, c));
                ValueId sel_c = ir_build_const_int(&g->b, nl, type_scalar(DT_I1), j & 2 ? 1 : 0);
                emit_store(g, ir_build(&g->b, OP_SELECT, nl, (ValueId[]){sel_c, a, c}, 3, &t, 1, 0)
                                  ->results[0]);
            }
            if (dt != DT_I1) {
                emit_store(g, ir_build_unary(&g->b, OP_NEG, nl, t, a));
                emit_store(g, ir_build_unary(&g->b, OP_ABS, nl, t, a));
                emit_store(g, ir_build_unary(&g->b, OP_NOT, nl, t, a));
            }
            for (int tj = 0; tj < N(int_types); tj++)
                if (int_types[tj] != DT_I1)
                    emit_store(g,
                               ir_build_unary(&g->b, OP_CAST, nl, type_scalar(int_types[tj]), a));
            for (int tj = 0; tj < N(float_types); tj++)
                emit_store(g, ir_build_unary(&g->b, OP_CAST, nl, type_scalar(float_types[tj]), a));
        }
    }
    for (int ti = 0; ti < N(float_types); ti++) {
        DType dt = float_types[ti];
        Type t = type_scalar(dt);
        for (int i = 0; i < N(float_values); i++) {
            ValueId a = ir_build_const_float(&g->b, nl, t, float_values[i]);
            for (int j = 0; j < N(float_values); j++) {
                ValueId c = ir_build_const_float(&g->b, nl, t, float_values[j]);
                for (int o = 0; o < N(float_binops); o++)
                    emit_store(g, ir_build_binary(&g->b, float_binops[o], nl, t, a, c));
                for (int o = 0; o < N(cmps); o++)
                    emit_store(g, ir_build_binary(&g->b, cmps[o], nl, type_scalar(DT_I1), a, c));
            }
            static const OpCode un[] = {OP_NEG, OP_ABS, OP_FLOOR, OP_CEIL};
            for (int o = 0; o < N(un); o++)
                emit_store(g, ir_build_unary(&g->b, un[o], nl, t, a));
            for (int tj = 0; tj < N(int_types); tj++)
                if (int_types[tj] != DT_I1 && isfinite(float_values[i]) &&
                    fabs(float_values[i]) < 100)
                    emit_store(g,
                               ir_build_unary(&g->b, OP_CAST, nl, type_scalar(int_types[tj]), a));
            for (int tj = 0; tj < N(float_types); tj++)
                emit_store(g, ir_build_unary(&g->b, OP_CAST, nl, type_scalar(float_types[tj]), a));
        }
    }
}

static bool run(const IrFunc *f, int64_t *out, int n)
{
    memset(out, 0x5a, (size_t)n * sizeof *out);
    InterpArg arg = {.ptr = (uint64_t)(uintptr_t)out};
    InterpBuffer buf = {.addr = (uint64_t)(uintptr_t)out, .bytes = (size_t)n * sizeof *out};
    InterpLaunch l = {.grid = {1, 1, 1}, .args = &arg, .nargs = 1, .buffers = &buf, .nbuffers = 1};
    StrBuf err = {0};
    bool ok = interp_run(f, &l, &err);
    if (!ok)
        fprintf(stderr, "interp_run: %s\n", err.data ? err.data : "?");
    strbuf_free(&err);
    return ok;
}

static int count_ops(const IrRegion *r, OpCode code)
{
    int n = 0;
    for (int i = 0; i < r->nops; i++)
        n += r->ops[i]->code == code;
    return n;
}

int main(void)
{
    Arena *a = arena_new();
    Gen g = {.f = ir_func_new(a, "canon_interp")};
    g.out = ir_param_add(g.f, type_ptr(DT_I64), "out", 16);
    g.b = (IrBuilder){.func = g.f, .region = &g.f->body, .pos = -1};
    build(&g);
    int n = g.k;
    Diag d = {0};
    if (!ir_verify(g.f, "build", &d)) {
        fprintf(stderr, "%s", d.text.data);
        return 1;
    }
    IrFunc *h = ir_func_clone(g.f, a);
    PassOptions po = {.verify = true};
    if (!pass_canonicalize(h, &po, &d) || !ir_verify(h, "canonicalize", &d) ||
        !pass_cse(h, &po, &d) || !ir_verify(h, "cse", &d) || !pass_dce(h, &po, &d) ||
        !ir_verify(h, "dce", &d)) {
        fprintf(stderr, "%s", d.text.data ? d.text.data : "pass failed\n");
        return 1;
    }
    int64_t *before = malloc((size_t)n * sizeof *before),
            *after = malloc((size_t)n * sizeof *after);
    if (!run(g.f, before, n) || !run(h, after, n))
        return 1;
    int bad = 0;
    for (int i = 0; i < n; i++) {
        if (before[i] != after[i] && bad++ < 20) {
            /* Find the op that stored out[i] (its loc line is i + 1) to name it. */
            const IrOp *st = NULL;
            for (int j = 0; j < g.f->body.nops && !st; j++)
                if (g.f->body.ops[j]->code == OP_STORE && g.f->body.ops[j]->loc.line == i + 1)
                    st = g.f->body.ops[j];
            const IrOp *def = st ? g.f->values[st->operands[1]].def : NULL;
            while (def && (def->code == OP_CAST || def->code == OP_BITCAST) &&
                   def->loc.line == i + 1)
                def = g.f->values[def->operands[0]].def;
            StrBuf sb = {0};
            if (def) {
                int32_t *num = ir_value_numbering(g.f, a);
                ir_print_op_head(&sb, g.f, num, def);
                for (int k = 0; k < def->noperands; k++) {
                    const IrOp *c = g.f->values[def->operands[k]].def;
                    if (c && c->code == OP_CONST)
                        strbuf_printf(&sb, "  [op%d = %lld / %.17g]", k, (long long)c->attr[0],
                                      c->fattr);
                }
            }
            fprintf(stderr, "out[%d]: interpreted 0x%016llx, folded 0x%016llx: %s\n", i,
                    (unsigned long long)before[i], (unsigned long long)after[i],
                    sb.data ? sb.data : "?");
            strbuf_free(&sb);
        }
    }
    /* What canonicalize left unfolded with all-constant operands: only what it promises to
     * leave (shifts by the width or more, float min/max of NaN or two zeros, float-to-int
     * casts out of range). */
    int unfolded = 0;
    for (int i = 0; i < h->body.nops; i++) {
        const IrOp *op = h->body.ops[i];
        if (op->code == OP_STORE || op->code == OP_BITCAST || op->code == OP_ADDPTR ||
            op->noperands == 0)
            continue;
        bool all_const = true;
        for (int j = 0; j < op->noperands; j++) {
            const IrOp *c = h->values[op->operands[j]].def;
            all_const &= c && c->code == OP_CONST;
        }
        if (!all_const)
            continue;
        Type t = h->values[op->operands[0]].type;
        Type rt = h->values[op->results[0]].type;
        bool allowed =
            op->code == OP_SHL || op->code == OP_SHR ||
            ((op->code == OP_MIN || op->code == OP_MAX) && dtype_is_float(t.dtype)) ||
            /* float -> unsigned of a negative value: out of range */
            (op->code == OP_CAST && dtype_is_float(t.dtype) && dtype_kind(rt.dtype) == DK_UINT);
        if (!allowed && unfolded++ < 10) {
            StrBuf sb = {0};
            ir_print_op_head(&sb, h, ir_value_numbering(h, a), op);
            fprintf(stderr, "not folded: %s\n", sb.data);
            strbuf_free(&sb);
        }
    }
    if (unfolded)
        bad++;
    int left = g.f->body.nops - count_ops(&g.f->body, OP_STORE);
    int left_after = h->body.nops - count_ops(&h->body, OP_STORE);
    printf("ir_canon_interp: %d results compared, %d ops before, %d after canonicalize+cse+dce\n",
           n, left, left_after);
    free(before);
    free(after);
    diag_free(&d);
    arena_free(a);
    if (bad) {
        fprintf(stderr, "%d mismatches\n", bad);
        return 1;
    }
    return 0;
}
