/* dot_mma.c: the dot on the tensor cores through mma.sync.aligned.m16n8k16 (PTX ISA 9.7.14.5.14),
 * for an #mma v2 accumulator and fp16/bf16 operands: either in their #dot_op registers
 * (materialized by a convert_layout), or staged by the dot itself in shared memory and read back
 * with ldmatrix, or read from the pipeline's slots step by step: which one, and where the tiles
 * sit, is the dot's scratch record (docs/ir.md "Scratch records"). docs/codegen.md "dot on the
 * tensor cores (mma v2)". */
#include "codegen/internal.h"

#include <stdio.h>

/* Packs two 16-bit elements into one .b32 register, the first in the low half (PTX ISA
 * 9.7.14.5.8: "a0, a1" share a .f16x2 register, a0 in the lower 16 bits). */
LLVMValueRef cg_pack_pair(Cg *c, LLVMValueRef lo, LLVMValueRef hi)
{
    LLVMBuilderRef b = c->l->b;
    /* The two halves of one word unpacked a moment ago (an f16x2 cvt's result going to stmatrix
     * or to an mma A fragment): the word itself, not an insert/insert/bitcast round trip. */
    if (LLVMIsAExtractElementInst(lo) && LLVMIsAExtractElementInst(hi)) {
        LLVMValueRef v = LLVMGetOperand(lo, 0);
        LLVMValueRef i0 = LLVMGetOperand(lo, 1), i1 = LLVMGetOperand(hi, 1);
        if (LLVMGetOperand(hi, 0) == v && LLVMIsAConstantInt(i0) && LLVMIsAConstantInt(i1) &&
            LLVMConstIntGetZExtValue(i0) == 0 && LLVMConstIntGetZExtValue(i1) == 1 &&
            LLVMGetVectorSize(LLVMTypeOf(v)) == 2) {
            if (LLVMIsABitCastInst(v) && LLVMTypeOf(LLVMGetOperand(v, 0)) == c->l->i32)
                return LLVMGetOperand(v, 0);
            return LLVMBuildBitCast(b, v, c->l->i32, "");
        }
    }
    LLVMValueRef v = LLVMGetUndef(LLVMVectorType(LLVMTypeOf(lo), 2));
    v = LLVMBuildInsertElement(b, v, lo, cg_i32(c->l, 0), "");
    v = LLVMBuildInsertElement(b, v, hi, cg_i32(c->l, 1), "");
    return LLVMBuildBitCast(b, v, c->l->i32, "");
}

/* ldmatrix.sync.aligned.m8n8.{x4,x2}[.trans].shared.b16 (PTX ISA 9.7.9.24) through the NVVM
 * intrinsic (it reads memory, so LLVM keeps it after the barrier): lanes 8i..8i+7 give the row
 * addresses of matrix i; each thread gets, per matrix, one .b32 with the elements (row lane/4,
 * cols 2*(lane%4), +1) (transposed with .trans). */
void cg_ldmatrix(Cg *c, LLVMValueRef ptr, int n, bool trans, LLVMValueRef *out)
{
    char name[80];
    snprintf(name, sizeof name, "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x%d%s.b16.p3", n,
             trans ? ".trans" : "");
    LLVMTypeRef f4[4] = {c->l->i32, c->l->i32, c->l->i32, c->l->i32};
    LLVMTypeRef ret = LLVMStructTypeInContext(c->l->ctx, f4, (unsigned)n, 0);
    LLVMValueRef call = cg_call(c->l, name, ret, &ptr, 1);
    for (int i = 0; i < n; i++)
        out[i] = LLVMBuildExtractValue(c->l->b, call, (unsigned)i, "");
}

/* The staged operands (the dot's scratch record: a = source, b = source, each tile at its
 * offset): barrier, every thread stores the A and B registers it loaded (their blocked layouts)
 * into the tiles, barrier; then per k16 step ldmatrix.x4 gives one 16x16 A fragment (matrices:
 * rows 0-7 / 8-15 x k 0-7 / 8-15, i.e. a0a1, a2a3, a4a5, a6a7) and ldmatrix.x4.trans two n8 B
 * fragments (k 0-7 / 8-15 of columns rn and rn+1: b0b1, b2b3 each). The tiles are in #shared
 * layouts when the record gives them (the XOR pattern puts the eight 16-byte rows of each 8x8
 * matrix in eight bank groups; the reads are the pipeline's cg_ldmatrix_step), else at padded
 * strides (16 bytes per row, which does the same when the unpadded row is a multiple of 64 or
 * 128 bytes). Fills apk/bpk as cg_lower_dot_mma wants. */
typedef struct MmaStage {
    LLVMValueRef abase, bbase; /* this lane's ldmatrix row address for A and for B, k step 0 */
    int64_t sa0, sb0;          /* A's and B's row strides in elements */
    int Wm, Wn, Rm, Rn, Kt;
    /* The swizzled staging: the tiles' layouts and byte offsets; each k step's ldmatrix is then
     * cg_ldmatrix_step's, as for the pipeline's slots. */
    bool swizzled;
    const Layout *la, *lb;
    Type ta, tb;
    int off_a, off_b;
    const Layout *da_op, *db_op; /* the operands' #dot_op layouts */
} MmaStage;

static bool mma_stage_operands(Cg *c, const IrOp *op, LVal *A, LVal *B, const Layout *L,
                               MmaStage *st)
{
    LLVMBuilderRef pb = c->pro;
    ValueId av = op->operands[0], bv = op->operands[1];
    Type ta = ir_type(c->f, av), tb = ir_type(c->f, bv);
    const IrScratch *s = &op->scratch;
    if (s->ntiles != 2 || (s->tile[0].layout > 0) != (s->tile[1].layout > 0))
        FAIL(c, "mma dot: its scratch record stages A and B but places no tiles of one kind");
    const int64_t *sa = s->tile[0].strides, *sb = s->tile[1].strides;
    Dist *da = cg_dist(c, A->layout, ta), *db = cg_dist(c, B->layout, tb);
    if (!da || !db)
        return false;
    int off_a = cg_scratch_offset(c, s->tile[0].offset),
        off_b = cg_scratch_offset(c, s->tile[1].offset);
    if (s->tile[0].layout > 0) {
        st->la = &c->f->layouts[s->tile[0].layout];
        st->lb = &c->f->layouts[s->tile[1].layout];
        cg_barrier(c->l);
        cg_smem_store_swizzled(c, A, da, ta, st->la, off_a);
        cg_smem_store_swizzled(c, B, db, tb, st->lb, off_b);
        cg_barrier(c->l);
        st->swizzled = true;
        st->ta = ta;
        st->tb = tb;
        st->off_a = off_a;
        st->off_b = off_b;
        st->da_op = &c->f->layouts[ir_value(c->f, av)->layout];
        st->db_op = &c->f->layouts[ir_value(c->f, bv)->layout];
        return true;
    }
    cg_barrier(c->l);
    cg_smem_store_all(c, A, da, ta.dtype, 2, off_a, sa);
    cg_smem_store_all(c, B, db, tb.dtype, 2, off_b, sb);
    cg_barrier(c->l);
    MmaBases *mb = cg_mma_bases(c, L);
    int Wm = L->mma.warps_per_cta[0], Wn = L->mma.warps_per_cta[1];
    /* This lane's row addresses, in the entry block: matrix i = lane / 8, row r = lane % 8. */
    LLVMValueRef mi = LLVMBuildLShr(pb, c->lane, cg_i32(c->l, 3), "");
    LLVMValueRef r = LLVMBuildAnd(pb, c->lane, cg_i32(c->l, 7), "");
    LLVMValueRef lo = LLVMBuildAnd(pb, mi, cg_i32(c->l, 1), ""),
                 hi = LLVMBuildLShr(pb, mi, cg_i32(c->l, 1), "");
    /* A: row wm*16 + (i%2)*8 + r, k (i/2)*8. */
    LLVMValueRef arow = cg_add(pb,
                               cg_add(pb, cg_mul(pb, mb->wm, cg_i32(c->l, 16), ""),
                                      cg_mul(pb, lo, cg_i32(c->l, 8), ""), ""),
                               r, "");
    LLVMValueRef aidx = cg_add(pb, cg_mul(pb, arow, cg_i32(c->l, sa[0]), ""),
                               cg_mul(pb, hi, cg_i32(c->l, 8), ""), "");
    LLVMValueRef aoff = cg_add(pb, cg_mul(pb, aidx, cg_i32(c->l, 2), ""), cg_i32(c->l, off_a), "");
    LLVMValueRef abase = LLVMBuildGEP2(pb, c->l->i8, cg_smem(c), &aoff, 1, "");
    /* B: k row (i%2)*8 + r, n wn*8 + (i/2)*8*Wn (matrices 2, 3: the next n8 tile of this warp). */
    LLVMValueRef bcol = cg_add(pb, cg_mul(pb, mb->wn, cg_i32(c->l, 8), ""),
                               cg_mul(pb, hi, cg_i32(c->l, 8 * Wn), ""), "");
    LLVMValueRef bk = cg_add(pb, cg_mul(pb, lo, cg_i32(c->l, 8), ""), r, "");
    LLVMValueRef bidx = cg_add(pb, cg_mul(pb, bk, cg_i32(c->l, sb[0]), ""), bcol, "");
    LLVMValueRef boff = cg_add(pb, cg_mul(pb, bidx, cg_i32(c->l, 2), ""), cg_i32(c->l, off_b), "");
    LLVMValueRef bbase = LLVMBuildGEP2(pb, c->l->i8, cg_smem(c), &boff, 1, "");
    st->abase = abase;
    st->bbase = bbase;
    st->sa0 = sa[0];
    st->sb0 = sb[0];
    st->Wm = Wm;
    st->Wn = Wn;
    return true;
}

/* The A fragments (all rm) and B fragments (all rn) of k step rk, into apk/bpk as cg_lower_dot_mma
 * indexes them; issued right before that step's mma ops so few are live at once. */
static void mma_load_step(Cg *c, const MmaStage *st, int rk, LLVMValueRef *apk, LLVMValueRef *bpk)
{
    LLVMBuilderRef b = c->l->b;
    if (st->swizzled) {
        cg_ldmatrix_step(c, st->la, st->ta, st->da_op, cg_i32(c->l, st->off_a), rk, apk);
        cg_ldmatrix_step(c, st->lb, st->tb, st->db_op, cg_i32(c->l, st->off_b), rk, bpk);
        return;
    }
    for (int rm = 0; rm < st->Rm; rm++) {
        LLVMValueRef off = cg_i32(c->l, ((int64_t)rm * 16 * st->Wm * st->sa0 + rk * 16) * 2);
        LLVMValueRef p = LLVMBuildGEP2(b, c->l->i8, st->abase, &off, 1, "");
        cg_ldmatrix(c, p, 4, false, &apk[(rm * st->Kt + rk) * 4]);
    }
    for (int rn = 0; rn < st->Rn; rn += 2) {
        LLVMValueRef off =
            cg_i32(c->l, ((int64_t)rk * 16 * st->sb0 + (int64_t)rn * 8 * st->Wn) * 2);
        LLVMValueRef p = LLVMBuildGEP2(b, c->l->i8, st->bbase, &off, 1, "");
        LLVMValueRef got[4];
        int n = rn + 1 < st->Rn ? 4 : 2;
        cg_ldmatrix(c, p, n, true, got);
        for (int q = 0; q < n; q++)
            bpk[(rk * st->Rn + rn + q / 2) * 2 + q % 2] = got[q];
    }
}

/* Operands materialized in #dot_op registers (convert_layout through shared memory): packs the
 * pairs (a0,a1), ... into apk/bpk. Local indices: A (rm*2 + h, rk*4 + kh*2 + j); B
 * (rk*4 + kh*2 + j, rn). */
bool cg_pack_a_fragments(Cg *c, const LVal *A, Dist *da, int Rm, int Kt, LLVMValueRef *apk)
{
    if (da->layout != A->layout || c->f->layouts[A->layout].kind != LAYOUT_DOT_OPERAND)
        FAIL(c, "tensor-core dot: A is not in #dot_op registers");
    if (A->n != da->nelems && A->n != 1)
        FAIL(c, "tensor-core dot: A's register count differs from its layout's");
    int *amap = cg_local_index_map(c, da);
    for (int rm = 0; rm < Rm; rm++)
        for (int rk = 0; rk < Kt; rk++)
            for (int q = 0; q < 4; q++) { /* q = kh*2 + h: a0a1, a2a3 (h), a4a5 (kh), a6a7 */
                int h = q % 2, kh = q / 2;
                int e0 = amap[(rm * 2 + h) * da->count[1] + rk * 4 + kh * 2];
                int e1 = amap[(rm * 2 + h) * da->count[1] + rk * 4 + kh * 2 + 1];
                if (e0 < 0 || e1 < 0)
                    FAIL(c, "tensor-core dot: A fragment element missing");
                apk[(rm * Kt + rk) * 4 + q] = cg_pack_pair(c, cg_at(A, e0), cg_at(A, e1));
            }
    return true;
}

static bool mma_pack_registers(Cg *c, LVal *A, LVal *B, Dist *da, Dist *db, int Rm, int Rn, int Kt,
                               LLVMValueRef *apk, LLVMValueRef *bpk)
{
    if (db->layout != B->layout || c->f->layouts[B->layout].kind != LAYOUT_DOT_OPERAND)
        FAIL(c, "mma dot: operands are not in #dot_op registers");
    if (B->n != db->nelems)
        FAIL(c, "mma dot: register counts differ from the layouts'");
    if (!cg_pack_a_fragments(c, A, da, Rm, Kt, apk))
        return false;
    int *bmap = cg_local_index_map(c, db);
    for (int rk = 0; rk < Kt; rk++)
        for (int rn = 0; rn < Rn; rn++)
            for (int kh = 0; kh < 2; kh++) {
                int e0 = bmap[(rk * 4 + kh * 2) * db->count[1] + rn];
                int e1 = bmap[(rk * 4 + kh * 2 + 1) * db->count[1] + rn];
                if (e0 < 0 || e1 < 0)
                    FAIL(c, "mma dot: B fragment element missing");
                bpk[(rk * Rn + rn) * 2 + kh] = cg_pack_pair(c, B->el[e0], B->el[e1]);
            }
    return true;
}

/* r = a @ b + c on the tensor cores: for every (m16 tile rm, n8 tile rn) of this warp and every
 * k16 step, one `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32` (PTX ISA
 * 9.7.14.5.14 mma; fragments 9.7.14.5.8) with A's four .b32 registers (a0..a7 packed in pairs), B's two and C/D's four f32.
 * The operands arrive in their #dot_op registers (convert_layout through shared memory), the
 * accumulator in #mma registers (docs/layouts.md). */
bool cg_lower_dot_mma(Cg *c, const IrOp *op, LVal *A, LVal *B, LVal *C, Dist *da, Dist *db,
                      Dist *dr)
{
    LLVMBuilderRef b = c->l->b;
    Type ta = ir_type(c->f, op->operands[0]);
    const Layout *L = &c->f->layouts[dr->layout];
    int M = ir_type(c->f, op->results[0]).shape[0], N = ir_type(c->f, op->results[0]).shape[1];
    int K = ta.shape[1];
    int Rm = M / (16 * L->mma.warps_per_cta[0]), Rn = N / (8 * L->mma.warps_per_cta[1]),
        Kt = K / 16;
    if (C->n != dr->nelems && C->n != 1)
        FAIL(c, "mma dot: accumulator register count differs from the layout's");
    int *cmap = cg_local_index_map(c, dr);
    LLVMValueRef *apk = cg_regs(c, Rm * Kt * 4), *bpk = cg_regs(c, Kt * Rn * 2);
    MmaStage st = {.Rm = Rm, .Rn = Rn, .Kt = Kt};
    /* Where A and B come from is the dot's scratch record's (passes/shared_alloc.c) */
    const DotOperandFrom *from = op->scratch.from;
    bool from_slots = from[0] == DOT_FROM_SLOT && from[1] == DOT_FROM_SLOT; /* cg_local_load_step */
    bool staged = from[0] == DOT_FROM_SOURCE && from[1] == DOT_FROM_SOURCE;
    if (!from_slots && (staged ? !mma_stage_operands(c, op, A, B, L, &st)
                               : !mma_pack_registers(c, A, B, da, db, Rm, Rn, Kt, apk, bpk)))
        return false;
    int n = dr->nelems;
    LLVMValueRef *acc = cg_regs(c, n);
    for (int e = 0; e < n; e++)
        acc[e] = cg_at(C, e);
    const char *text = ta.dtype == DT_BF16
                           ? "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {$0, $1, $2, "
                             "$3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};"
                           : "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {$0, $1, $2, $3}, "
                             "{$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};";
    LLVMTypeRef f4[4] = {c->l->f32, c->l->f32, c->l->f32, c->l->f32};
    LLVMTypeRef ret = LLVMStructTypeInContext(c->l->ctx, f4, 4, 0);
    for (int rk = 0; rk < Kt; rk++) {
        if (staged)
            mma_load_step(c, &st, rk, apk, bpk);
        if (from_slots && (!cg_local_load_step(c, op->operands[0], rk, apk) ||
                           !cg_local_load_step(c, op->operands[1], rk, bpk)))
            return false;
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
                LLVMValueRef call =
                    cg_asm(c->l, ret, text, "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3", args, 10, false);
                for (int q = 0; q < 4; q++)
                    acc[ce[q]] = LLVMBuildExtractValue(b, call, (unsigned)q, "");
            }
    }
    cg_set_value(c, op->results[0], acc, n, dr->layout);
    return true;
}
