/* dot_wgmma.c: the register-staged dot through wgmma.mma_async (sm_90a, #mma v3 accumulator,
 * PTX ISA 9.7.15): each thread stores the operand registers it holds into the dot's staging area
 * in a wgmma canonical layout, then warpgroup-wide wgmma reads both operands through matrix
 * descriptors. The memory pipeline's wgmma, reading swizzled tiles that cp.async filled, is
 * async_copy.c's. docs/codegen.md "wgmma (sm_90a, `#mma` v3)". */
#include "codegen/internal.h"

#include <math.h>

/* The text and constraints of one asm statement issuing `steps` k steps of w into nd tied f32
 * accumulators. Operands: the nd accumulators ($0..), then per k step A (a descriptor, or four
 * .b32 registers: PTX ISA 9.7.15.5.1.1, where only B's transpose immediate remains) and B's
 * descriptor, then the scale-d of the first k step and of the others, the guard when guarded,
 * then the tied accumulators. */
static void wgmma_statement(StrBuf *text, StrBuf *cons, const WgmmaIssue *w, int steps, int nd,
                            int per_k, bool guarded)
{
    bool tf32 = w->dtype == DT_F32, fp8 = dtype_is_fp8(w->dtype), a_regs = w->a_regs != NULL;
    int KI = 32 / dtype_bytes(w->dtype), na = per_k - 1, ip = nd + steps * per_k;
    const char *ta = tf32                    ? "tf32"
                     : w->dtype == DT_BF16   ? "bf16"
                     : w->dtype == DT_F8E4NV ? "e4m3"
                     : w->dtype == DT_F8E5   ? "e5m2"
                                             : "f16";
    const char *tb = !fp8 ? ta : w->btype == DT_F8E5 ? "e5m2" : "e4m3";
    strbuf_printf(text, "{\n.reg .pred p, q%s;\nsetp.ne.b32 p, $%d, 0;\nsetp.ne.b32 q, $%d, 0;\n",
                  guarded ? ", g" : "", ip, ip + 1);
    /* The guard (a wgmma issued one iteration late, passes/overlap_dots.c): where it is false
     * the statement branches past its instructions, so the tied accumulators pass through. A
     * fence after the branch too: with only the one before it, or with each wgmma.mma_async
     * predicated instead, ptxas injects a warpgroup.arrive before every instruction (its C7519
     * note); with only the one after it, ptxas spilled attention's registers. The label is
     * unique per statement (${:uid}). */
    if (guarded)
        strbuf_printf(text,
                      "setp.ne.b32 g, $%d, 0;\n@!g bra skip${:uid};\n"
                      "wgmma.fence.sync.aligned;\n",
                      ip + 2);
    for (int rk = 0; rk < steps; rk++) {
        int ia = nd + rk * per_k, ib = ia + na;
        strbuf_printf(text, "wgmma.mma_async.sync.aligned.m64n%dk%d.f32.%s.%s {", w->NI, KI, ta,
                      tb);
        for (int i = 0; i < nd; i++)
            strbuf_printf(text, "%s$%d", i ? ", " : "", i);
        const char *scale = rk == 0 ? "p" : "q";
        if (a_regs)
            strbuf_printf(text, "}, {$%d, $%d, $%d, $%d}, $%d, %s, 1, 1, %d;\n", ia, ia + 1, ia + 2,
                          ia + 3, ib, scale, w->trans_b ? 1 : 0);
        else if (tf32 || fp8) /* K-major operands only: no transpose immediates */
            strbuf_printf(text, "}, $%d, $%d, %s, 1, 1;\n", ia, ib, scale);
        else
            strbuf_printf(text, "}, $%d, $%d, %s, 1, 1, %d, %d;\n", ia, ib, scale,
                          w->trans_a ? 1 : 0, w->trans_b ? 1 : 0);
    }
    strbuf_append(text, guarded ? "skip${:uid}:\n}" : "}");
    for (int i = 0; i < nd; i++)
        strbuf_append(cons, "=f,");
    for (int rk = 0; rk < steps; rk++)
        strbuf_append(cons, a_regs ? "r,r,r,r,l," : "l,l,");
    strbuf_append(cons, guarded ? "r,r,r" : "r,r");
    for (int i = 0; i < nd; i++)
        strbuf_printf(cons, ",%d", i);
    strbuf_append(cons, ",~{memory}");
}

/* The instruction stream of one wgmma dot (PTX ISA 9.7.15.5), shared by the serial dot here and
 * the pipeline's wgmma op (async_copy.c): `wgmma.fence` (the accumulators were last written
 * by ordinary instructions), then per m64 tile rm of this warpgroup and n piece nc one asm
 * statement issuing its k steps rk (16 k for fp16/bf16, 8 for tf32, 32 for fp8: 32 bytes, two
 * core matrices) in order, each
 * `wgmma.mma_async.sync.aligned.m64n{NI}k{KI}.f32.TA.TB d, descA, descB, p, 1, 1[, transA, transB]`
 * (descriptors advanced by the caller's byte offsets; scale-d p = 1: D = A*B + D, 0 on the first
 * k step of a zero accumulator; the transpose immediates exist for 16-bit types only; fp8's TA and
 * TB are .e4m3 or .e5m2 each), the NI/2 f32 accumulators tied in and out once per statement, then
 * `wgmma.commit_group`. No wait, except with w->imprecise_k: then each piece's runs of k steps
 * are committed, waited for and added into the accumulators one by one, and the registers
 * returned are complete. Returns the accumulator registers, NULL after a failure. */
LLVMValueRef *cg_wgmma_issue(Cg *c, const WgmmaIssue *w, const LVal *C, Dist *dr)
{
    LLVMBuilderRef b = c->l->b;
    bool tf32 = w->dtype == DT_F32, fp8 = dtype_is_fp8(w->dtype);
    int KI = 32 / dtype_bytes(w->dtype), Rm = w->M / (16 * w->W), Kt = w->K / KI, Nc = w->N / w->NI,
        NI = w->NI;
    int n = dr->nelems;
    if (C->n != n && C->n != 1) {
        TRIC_INTERNAL(c->d, "wgmma: accumulator register count differs from the layout's");
        c->failed = true;
        return NULL;
    }
    int *cmap = cg_local_index_map(c, dr);
    bool fragment_ok = dr->count[0] == 2 * Rm && dr->count[1] == w->N / 4;
    for (int x = 0; fragment_ok && x < 2 * Rm * (w->N / 4); x++)
        fragment_ok = cmap[x] >= 0;
    if (!fragment_ok) {
        TRIC_INTERNAL(c->d, "wgmma: accumulator fragment of %d x %d registers, not %d x %d",
                      dr->count[0], dr->count[1], 2 * Rm, w->N / 4);
        c->failed = true;
        return NULL;
    }
    LLVMValueRef *acc = cg_regs(c, n);
    /* An accumulator of zeros (tl.dot(a, b) without c, attention's q @ k): the first k step runs
     * with scale-d 0 (D = A*B, PTX ISA 9.7.15.5.2) on undefined registers, so no zero is moved
     * into the 64-odd accumulators each time */
    bool guarded = w->guard != NULL;
    /* (not under a guard: branched past, the accumulators must hold c) */
    bool c_zero = !guarded;
    for (int e = 0; e < n; e++) {
        acc[e] = cg_at(C, e);
        LLVMBool loses;
        double v = c_zero && LLVMIsAConstantFP(acc[e]) ? LLVMConstRealGetDouble(acc[e], &loses) : 1;
        c_zero = v == 0.0 && !signbit(v);
    }
    if (c_zero)
        for (int e = 0; e < n; e++)
            acc[e] = LLVMGetUndef(c->l->f32);
    int nd = NI / 2; /* f32 D registers per thread per instruction: 64 * NI / 128 */
    bool a_regs = w->a_regs != NULL;
    if (a_regs && (tf32 || fp8)) {
        TRIC_INTERNAL(c->d, "wgmma: A from registers is for 16-bit types");
        c->failed = true;
        return NULL;
    }
    /* One asm statement per accumulator piece (m64 tile rm, n piece nc) holding its Kt k steps,
     * the order Triton issues them in: the nd accumulators are tied through once instead of per
     * k step, which keeps LLVM's instruction selection (its cost grows with the asm operands) to
     * a quarter on a K=64 fp16 tile; ptxas sees the same instructions. */
    int na = a_regs ? 4 : 1, per_k = na + 1;
    /* fp8 with max_num_imprecise_acc (Triton's partial accumulator): each piece's k steps run in
     * runs of `run` steps into partial registers, a run summing at most imprecise_k of K (one
     * step at least) in the tensor cores' precision, then waited for and added into the fp32
     * accumulators (a widened dot keeps the attribute: its fp16 sums are fp32 already) */
    bool partial = w->imprecise_k > 0 && fp8;
    int run = Kt;
    if (partial) {
        if (guarded) {
            TRIC_INTERNAL(c->d, "wgmma: a guarded dot with max_num_imprecise_acc");
            c->failed = true;
            return NULL;
        }
        run = (w->imprecise_k + KI - 1) / KI;
        run = run > Kt ? Kt : run;
    }
    StrBuf text[2] = {{0}}, cons[2] = {{0}};
    wgmma_statement(&text[0], &cons[0], w, run, nd, per_k, guarded);
    if (Kt % run)
        wgmma_statement(&text[1], &cons[1], w, Kt % run, nd, per_k, guarded);
    LLVMTypeRef *fty = arena_alloc(c->arena, sizeof(LLVMTypeRef) * (size_t)nd);
    for (int i = 0; i < nd; i++)
        fty[i] = c->l->f32;
    LLVMTypeRef ret = LLVMStructTypeInContext(c->l->ctx, fty, (unsigned)nd, 0);
    int ng = guarded ? 1 : 0;
    LLVMValueRef *args = cg_regs(c, run * per_k + 2 + ng + nd);
    LLVMValueRef *part = cg_regs(c, nd);
    int *ce = arena_alloc(c->arena, sizeof(int) * (size_t)nd);
    cg_asm_void(c, "wgmma.fence.sync.aligned;");
    for (int rm = 0; rm < Rm; rm++)
        for (int nc = 0; nc < Nc; nc++) {
            for (int i = 0; i < nd; i++) {
                /* d[i]: n8 piece i/4, row groupID + 8*((i/2)%2), col tig*2 + i%2 (PTX ISA
                 * 9.7.15.5.1.1.1, the m64nN D fragment) */
                int rn = nc * (NI / 8) + i / 4, h = (i / 2) % 2, j = i % 2;
                ce[i] = cmap[(rm * 2 + h) * dr->count[1] + rn * 2 + j];
            }
            for (int k0 = 0; k0 < Kt; k0 += run) {
                int steps = Kt - k0 < run ? Kt - k0 : run, nin = steps * per_k + 2 + ng + nd;
                for (int rk = k0; rk < k0 + steps; rk++) {
                    LLVMValueRef *ka = args + (rk - k0) * per_k;
                    if (a_regs)
                        for (int q = 0; q < 4; q++)
                            ka[q] = w->a_regs[(rm * Kt + rk) * 4 + q];
                    else
                        ka[0] = cg_add(b, w->a_desc, cg_i64(c->l, w->a_off[rk * Rm + rm] >> 4), "");
                    ka[na] = cg_add(b, w->b_desc, cg_i64(c->l, w->b_off[rk * Nc + nc] >> 4), "");
                }
                /* a partial run starts its registers anew: scale-d 0 on its first step */
                args[steps * per_k] = cg_i32(c->l, c_zero || partial ? 0 : 1);
                args[steps * per_k + 1] = cg_i32(c->l, 1);
                if (guarded)
                    args[steps * per_k + 2] = w->guard;
                for (int i = 0; i < nd; i++)
                    args[steps * per_k + 2 + ng + i] =
                        partial ? LLVMGetUndef(c->l->f32) : acc[ce[i]];
                /* a run after fadds (of this piece's last run or another piece's), whose
                 * registers ptxas may give this run's */
                if (partial && (k0 > 0 || rm > 0 || nc > 0))
                    cg_asm_void(c, "wgmma.fence.sync.aligned;");
                int t = steps == run ? 0 : 1;
                LLVMValueRef call = cg_asm_n(c, ret, text[t].data, cons[t].data, args, nin, true);
                for (int i = 0; i < nd; i++)
                    part[i] = LLVMBuildExtractValue(b, call, (unsigned)i, "");
                if (!partial) {
                    for (int i = 0; i < nd; i++)
                        acc[ce[i]] = part[i];
                    continue;
                }
                /* the run's sum is complete once its group is (PTX ISA 9.7.15.7.2), the
                 * registers tied through the wait so no fadd moves above it */
                cg_asm_void(c, "wgmma.commit_group.sync.aligned;");
                LLVMValueRef *sum = cg_asm_tie_f32(c, "wgmma.wait_group.sync.aligned 0;", part, nd);
                for (int i = 0; i < nd; i++)
                    acc[ce[i]] =
                        c_zero && k0 == 0 ? sum[i] : LLVMBuildFAdd(b, acc[ce[i]], sum[i], "");
            }
        }
    if (!partial)
        cg_asm_void(c, "wgmma.commit_group.sync.aligned;");
    for (int t = 0; t < 2; t++) {
        strbuf_free(&text[t]);
        strbuf_free(&cons[t]);
    }
    return acc;
}

/* r = a @ b + c with wgmma (sm_90a; #mma v3, docs/codegen.md "wgmma"): barrier (earlier readers
 * of the staging area are done: every thread waited for its wgmma), every thread stores the A
 * and B registers it holds into the dot's staging area in the K-major core-matrix layout (A
 * [M, K] and B^T [N, K], wgmma_store_operand), `fence.proxy.async.shared::cta` (generic-proxy
 * writes become visible to wgmma's async proxy, PTX ISA 9.7.15.2), barrier; `wgmma.fence`
 * (the accumulator registers were written by ordinary instructions), then per k16 step, per m64
 * tile of this warpgroup and per n piece one `wgmma.mma_async.sync.aligned.m64nNk16.f32.T.T`
 * with both operands through descriptors, `wgmma.commit_group`, `wgmma.wait_group 0` (the
 * accumulators pass through the wait's asm so no use can move above it). The serial schedule,
 * for dots the software pipeline did not take (passes/pipeline_loops.c); pipelined dots are
 * wgmma ops reading shared memory (async_copy.c). */
bool cg_lower_dot_wgmma(Cg *c, const IrOp *op, LVal *A, LVal *B, LVal *C, Dist *dr)
{
    LLVMBuilderRef b = c->l->b;
    Type ta = ir_type(c->f, op->operands[0]), tb = ir_type(c->f, op->operands[1]);
    const Layout *L = &c->f->layouts[dr->layout];
    int M = ir_type(c->f, op->results[0]).shape[0], N = ir_type(c->f, op->results[0]).shape[1];
    int K = ta.shape[1], W = L->mma.warps_per_cta[0], NI = L->mma.instr_shape[1];
    /* tf32 (fp32 operands, PTX ISA 9.7.15.5: m64nNk8) and fp8 (.e4m3/.e5m2: m64nNk32) take both
     * operands K-major, with no transpose immediates (shared_wgmma_staging lays them out so, and
     * the record says so):
     * 8 and 32 k per instruction; fp16/bf16: 16. Always 32 bytes of K, two core matrices, per
     * instruction. */
    bool tf32 = ta.dtype == DT_F32, fp8 = dtype_is_fp8(ta.dtype) && dtype_is_fp8(tb.dtype);
    int eb = dtype_bytes(ta.dtype), KI = 32 / eb;
    if (W % 4 || M % (16 * W) || NI < 8 || NI > 256 || NI % 8 || N % NI || K % KI ||
        (eb != 2 && !tf32 && !fp8) || L->mma.instr_shape[2] != KI)
        FAIL(c, "wgmma dot: tile [%d, %d, %d] on %d warps with n %d does not fit", M, N, K, W, NI);
    int Rm = M / (16 * W), Kt = K / KI, Nc = N / NI;
    if (C->n != dr->nelems && C->n != 1)
        FAIL(c, "wgmma dot: accumulator register count differs from the layout's");
    /* the staging area: A and B in the #shared layouts of the dot's scratch record
     * (passes/shared_alloc.c), each tile 1024-aligned */
    const IrScratch *s = &op->scratch;
    if (s->ntiles != 2 || s->tile[0].layout <= 0 || s->tile[1].layout <= 0 ||
        s->tile[0].offset % 1024 || s->tile[1].offset % 1024)
        FAIL(c, "wgmma dot: its scratch record places no 1024-byte-aligned swizzled tiles "
                "(shared_alloc)");
    Layout la = c->f->layouts[s->tile[0].layout], lb = c->f->layouts[s->tile[1].layout];
    int off_a = cg_scratch_offset(c, s->tile[0].offset),
        off_b = cg_scratch_offset(c, s->tile[1].offset);
    Dist *sa = cg_dist(c, A->layout, ta), *sb = cg_dist(c, B->layout, tb);
    if (!sa || !sb)
        return false;
    if (A->n != sa->nelems && A->n != 1)
        FAIL(c, "wgmma dot: A register count differs from its layout's");
    if (B->n != sb->nelems && B->n != 1)
        FAIL(c, "wgmma dot: B register count differs from its layout's");
    LLVMSetAlignment(cg_smem(c), 1024); /* the swizzle pattern repeats every 1024 bytes */
    cg_barrier(c->l);                   /* earlier readers of the staging area are done */
    cg_smem_store_swizzled(c, A, sa, ta, &la, off_a);
    cg_smem_store_swizzled(c, B, sb, tb, &lb, off_b);
    cg_asm_void(c, "fence.proxy.async.shared::cta;");
    cg_barrier(c->l);

    /* Descriptors from the layouts, as for the pipeline's wgmma: warpgroup g = warp / 4 starts at
     * row g*64 of A (a multiple of 8 rows: a constant offset); each instruction adds the swizzled
     * offset of its first element. */
    LLVMBuilderRef pb = c->pro;
    int64_t x64[2] = {64, 0};
    LLVMValueRef g = LLVMBuildLShr(pb, c->warp, cg_i32(c->l, 2), "");
    LLVMValueRef g_bytes = cg_mul(pb, g, cg_i32(c->l, shared_swizzled_offset(&la, ta, x64)), "");
    LLVMValueRef a_addr = cg_smem_window_addr(c, cg_add(b, cg_i32(c->l, off_a), g_bytes, ""));
    LLVMValueRef a_desc = cg_wgmma_operand_desc(c, a_addr, &la, ta, 1);
    LLVMValueRef b_desc =
        cg_wgmma_operand_desc(c, cg_smem_window_addr(c, cg_i32(c->l, off_b)), &lb, tb, 0);
    int64_t *a_offs = arena_alloc(c->arena, sizeof(int64_t) * (size_t)(Kt * Rm));
    int64_t *b_offs = arena_alloc(c->arena, sizeof(int64_t) * (size_t)(Kt * Nc));
    for (int rk = 0; rk < Kt; rk++) {
        for (int rm = 0; rm < Rm; rm++) {
            int64_t ca[2] = {(int64_t)rm * 16 * W, (int64_t)rk * KI};
            a_offs[rk * Rm + rm] = shared_swizzled_offset(&la, ta, ca);
        }
        for (int nc = 0; nc < Nc; nc++) {
            int64_t cb[2] = {(int64_t)rk * KI, (int64_t)nc * NI};
            b_offs[rk * Nc + nc] = shared_swizzled_offset(&lb, tb, cb);
        }
    }
    if ((tf32 || fp8) && (la.shared.order[0] != 1 || lb.shared.order[0] != 0))
        FAIL(c, "wgmma dot: %s operands must be K-major in shared memory", dtype_name(ta.dtype));
    WgmmaIssue w = {.dtype = ta.dtype,
                    .btype = tb.dtype,
                    .M = M,
                    .N = N,
                    .K = K,
                    .W = W,
                    .NI = NI,
                    .trans_a = la.shared.order[0] != 1,
                    .trans_b = lb.shared.order[0] != 0,
                    .a_desc = a_desc,
                    .b_desc = b_desc,
                    .a_off = a_offs,
                    .b_off = b_offs,
                    .imprecise_k = (int)op->attr[2]};
    LLVMValueRef *acc = cg_wgmma_issue(c, &w, C, dr);
    if (!acc)
        return false;
    /* wait_group 0 with every accumulator tied through it, so no use moves above it */
    int n = dr->nelems;
    acc = cg_asm_tie_f32(c, "wgmma.wait_group.sync.aligned 0;", acc, n);
    cg_set_value(c, op->results[0], acc, n, dr->layout);
    return true;
}
