/* dot_wgmma.c: the register-staged dot through wgmma.mma_async (sm_90a, #mma v3 accumulator,
 * PTX ISA 9.7.15): each thread stores the operand registers it holds into the dot's staging area
 * in a wgmma canonical layout, then warpgroup-wide wgmma reads both operands through matrix
 * descriptors. The memory pipeline's wgmma, reading swizzled tiles that cp.async filled, is
 * lower_pipeline.c's. docs/codegen.md "wgmma (sm_90a, `#mma` v3)". */
#include "codegen/internal.h"

/* Stores w consecutive elements (eb bytes each) of src, from element e on, at p in shared memory:
 * one scalar store, or one w-wide vector store aligned to its size (st.shared.v2/v4). */
static void store_run(Cg *c, const LVal *src, int e, int w, LLVMTypeRef mt, int eb, LLVMValueRef p)
{
    LLVMBuilderRef b = c->l->b;
    if (w == 1) {
        LLVMSetAlignment(LLVMBuildStore(b, cg_at(src, e), p), (unsigned)eb);
        return;
    }
    LLVMValueRef v = LLVMGetUndef(LLVMVectorType(mt, (unsigned)w));
    for (int j = 0; j < w; j++)
        v = LLVMBuildInsertElement(b, v, cg_at(src, e + j), cg_i32(c->l, j), "");
    LLVMSetAlignment(LLVMBuildStore(b, v, p), (unsigned)(eb * w));
}

/* Stores operand src (distribution ds, 16- or 32-bit elements) into the wgmma no-swizzle K-major
 * canonical layout (PTX ISA 9.7.15.5.1.2, "core matrices"): with kc = 16 / element bytes
 * elements per 16-byte core-matrix row (8 for fp16/bf16, 4 for tf32), element (r, k), r the M
 * row of A or the N column of B, at byte off + ((r/8) * (K/kc) + k/kc) * 128 + (r%8) * 16 +
 * (k%kc) * eb: each core matrix is 128 contiguous bytes (8 rows of 16 bytes, k fastest), core
 * matrices along K 128 bytes apart (LBO), along M/N K*eb*8 bytes apart (SBO). A thread's run
 * along k (the loads' vectors for A) goes out as one vector store of up to 16 bytes; runs along
 * r element by element. */
static void wgmma_store_operand(Cg *c, const LVal *src, const Dist *ds, DType dt, int off, int row_dim, int K)
{
    LLVMBuilderRef b = c->l->b;
    int k_dim = 1 - row_dim;
    int eb = dtype_bytes(dt), kc = 16 / eb;
    int w = ds->vec_dim == k_dim ? imin(ds->run[k_dim], kc) : 1;
    LLVMTypeRef mt = cg_mem_type(c, dt);
    for (int e = 0; e < ds->nelems; e++) {
        if (w > 1 && ds->idx[e * 2 + k_dim] % w != 0)
            continue;
        LLVMValueRef r = cg_coord(c, ds, e, row_dim), k = cg_coord(c, ds, e, k_dim);
        LLVMValueRef cm = LLVMBuildAdd(b, LLVMBuildMul(b, LLVMBuildLShr(b, r, cg_i32(c->l, 3), ""),
                                                       cg_i32(c->l, K / kc), ""),
                                       LLVMBuildUDiv(b, k, cg_i32(c->l, kc), ""), "");
        LLVMValueRef in = LLVMBuildAdd(b, LLVMBuildMul(b, LLVMBuildAnd(b, r, cg_i32(c->l, 7), ""), cg_i32(c->l, 16), ""),
                                       LLVMBuildMul(b, LLVMBuildURem(b, k, cg_i32(c->l, kc), ""), cg_i32(c->l, eb), ""), "");
        LLVMValueRef byte = LLVMBuildAdd(b, LLVMBuildAdd(b, LLVMBuildMul(b, cm, cg_i32(c->l, 128), ""), in, ""),
                                         cg_i32(c->l, off), "");
        store_run(c, src, e, w, mt, eb, cg_smem_addr(c, byte));
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
    LLVMTypeRef mt = cg_mem_type(c, dt);
    for (int e = 0; e < ds->nelems; e++) {
        if (w > 1 && ds->idx[e * 2 + c_dim] % w != 0)
            continue;
        LLVMValueRef sv = cg_coord(c, ds, e, s_dim), cv = cg_coord(c, ds, e, c_dim);
        LLVMValueRef atom = LLVMBuildMul(b, LLVMBuildLShr(b, cv, cg_i32(c->l, 6), ""), cg_i32(c->l, (int64_t)S * 128), "");
        LLVMValueRef chunk = LLVMBuildAnd(b, LLVMBuildLShr(b, cv, cg_i32(c->l, 3), ""), cg_i32(c->l, 7), "");
        chunk = LLVMBuildXor(b, chunk, LLVMBuildAnd(b, sv, cg_i32(c->l, 7), ""), "");
        LLVMValueRef byte = LLVMBuildAdd(b, atom, LLVMBuildMul(b, sv, cg_i32(c->l, 128), ""), "");
        byte = LLVMBuildAdd(b, byte, LLVMBuildMul(b, chunk, cg_i32(c->l, 16), ""), "");
        byte = LLVMBuildAdd(b, byte, LLVMBuildMul(b, LLVMBuildAnd(b, cv, cg_i32(c->l, 7), ""), cg_i32(c->l, 2), ""), "");
        byte = LLVMBuildAdd(b, byte, cg_i32(c->l, off), "");
        store_run(c, src, e, w, mt, 2, cg_smem_addr(c, byte));
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

/* The instruction stream of one wgmma dot (PTX ISA 9.7.15.5), shared by the serial dot here and
 * the pipeline's wgmma op (lower_pipeline.c): `wgmma.fence` (the accumulators were last written
 * by ordinary instructions), then per k step rk (16 k for fp16/bf16, 8 for tf32: 32 bytes,
 * two core matrices), m64 tile rm of this warpgroup and n piece nc one
 * `wgmma.mma_async.sync.aligned.m64n{NI}k{KI}.f32.T.T d, descA, descB, p, 1, 1[, transA, transB]`
 * (descriptors advanced by the caller's byte offsets; scale-d p = 1: D = A*B + D; the transpose
 * immediates exist for 16-bit types only), the NI/2 f32 accumulators of each tied in and out,
 * then `wgmma.commit_group`. No wait. Returns the accumulator registers, NULL after a failure. */
LLVMValueRef *cg_wgmma_issue(Cg *c, const WgmmaIssue *w, const LVal *C, Dist *dr)
{
    LLVMBuilderRef b = c->l->b;
    bool tf32 = w->dtype == DT_F32;
    int KI = tf32 ? 8 : 16, Rm = w->M / (16 * w->W), Kt = w->K / KI, Nc = w->N / w->NI, NI = w->NI;
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
        TRIC_INTERNAL(c->d, "wgmma: accumulator fragment of %d x %d registers, not %d x %d", dr->count[0],
                      dr->count[1], 2 * Rm, w->N / 4);
        c->failed = true;
        return NULL;
    }
    LLVMValueRef *acc = cg_regs(c, n);
    for (int e = 0; e < n; e++)
        acc[e] = cg_at(C, e);
    int nd = NI / 2; /* f32 D registers per thread per instruction: 64 * NI / 128 */
    StrBuf text = {0}, cons = {0};
    const char *ab = tf32 ? "tf32" : w->dtype == DT_BF16 ? "bf16" : "f16";
    strbuf_printf(&text, "{\n.reg .pred p;\nsetp.ne.b32 p, $%d, 0;\nwgmma.mma_async.sync.aligned.m64n%dk%d.f32.%s.%s {",
                  nd + 2, NI, KI, ab, ab);
    for (int i = 0; i < nd; i++)
        strbuf_printf(&text, "%s$%d", i ? ", " : "", i);
    if (tf32)
        strbuf_printf(&text, "}, $%d, $%d, p, 1, 1;\n}", nd, nd + 1);
    else
        strbuf_printf(&text, "}, $%d, $%d, p, 1, 1, %d, %d;\n}", nd, nd + 1, w->trans_a ? 1 : 0, w->trans_b ? 1 : 0);
    for (int i = 0; i < nd; i++)
        strbuf_append(&cons, "=f,");
    strbuf_append(&cons, "l,l,r");
    for (int i = 0; i < nd; i++)
        strbuf_printf(&cons, ",%d", i);
    strbuf_append(&cons, ",~{memory}");
    LLVMTypeRef *fty = arena_alloc(c->arena, sizeof(LLVMTypeRef) * (size_t)nd);
    for (int i = 0; i < nd; i++)
        fty[i] = c->l->f32;
    LLVMTypeRef ret = LLVMStructTypeInContext(c->l->ctx, fty, (unsigned)nd, 0);
    LLVMValueRef *args = cg_regs(c, nd + 3);
    int *ce = arena_alloc(c->arena, sizeof(int) * (size_t)nd);
    cg_asm_void(c, "wgmma.fence.sync.aligned;");
    for (int rk = 0; rk < Kt; rk++)
        for (int rm = 0; rm < Rm; rm++)
            for (int nc = 0; nc < Nc; nc++) {
                for (int i = 0; i < nd; i++) {
                    /* d[i]: n8 piece i/4, row groupID + 8*((i/2)%2), col tig*2 + i%2 (PTX ISA
                     * 9.7.15.5.1.1.1, the m64nN D fragment) */
                    int rn = nc * (NI / 8) + i / 4, h = (i / 2) % 2, j = i % 2;
                    ce[i] = cmap[(rm * 2 + h) * dr->count[1] + rn * 2 + j];
                }
                args[0] = LLVMBuildAdd(b, w->a_desc, cg_i64(c->l, w->a_off[rk * Rm + rm] >> 4), "");
                args[1] = LLVMBuildAdd(b, w->b_desc, cg_i64(c->l, w->b_off[rk * Nc + nc] >> 4), "");
                args[2] = cg_i32(c->l, 1);
                for (int i = 0; i < nd; i++)
                    args[3 + i] = acc[ce[i]];
                LLVMValueRef call = cg_asm_n(c, ret, text.data, cons.data, args, nd + 3, true);
                for (int i = 0; i < nd; i++)
                    acc[ce[i]] = LLVMBuildExtractValue(b, call, (unsigned)i, "");
            }
    cg_asm_void(c, "wgmma.commit_group.sync.aligned;");
    strbuf_free(&text);
    strbuf_free(&cons);
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
 * wgmma ops reading shared memory (lower_pipeline.c). */
bool cg_lower_dot_wgmma(Cg *c, const IrOp *op, LVal *A, LVal *B, LVal *C, Dist *dr)
{
    Type ta = ir_type(c->f, op->operands[0]), tb = ir_type(c->f, op->operands[1]);
    const Layout *L = &c->f->layouts[dr->layout];
    int M = ir_type(c->f, op->results[0]).shape[0], N = ir_type(c->f, op->results[0]).shape[1];
    int K = ta.shape[1], W = L->mma.warps_per_cta[0], NI = L->mma.instr_shape[1];
    /* tf32 (fp32 operands, PTX ISA 9.7.15.5: m64nNk8, both operands K-major, no transpose
     * immediates): 8 k per instruction; fp16/bf16: 16. Either way 32 bytes of K, two core
     * matrices, per instruction. */
    bool tf32 = ta.dtype == DT_F32;
    int eb = dtype_bytes(ta.dtype), KI = tf32 ? 8 : 16, kc = 16 / eb;
    if (W % 4 || M % (16 * W) || NI < 8 || NI > 256 || NI % 8 || N % NI || K % KI || (eb != 2 && !tf32) ||
        L->mma.instr_shape[2] != KI)
        FAIL(c, "wgmma dot: tile [%d, %d, %d] on %d warps with n %d does not fit", M, N, K, W, NI);
    int Rm = M / (16 * W), Kt = K / KI, Nc = N / NI;
    if (C->n != dr->nelems && C->n != 1)
        FAIL(c, "wgmma dot: accumulator register count differs from the layout's");
    int off_a, off_b;
    if (!cg_dot_scratch(c, op, &off_a, &off_b) || off_a % 16 || off_b % 16)
        FAIL(c, "wgmma dot: no 16-byte-aligned staging area for A and B");
    Dist *sa = cg_dist(c, A->layout, ta), *sb = cg_dist(c, B->layout, tb);
    if (!sa || !sb)
        return false;
    if (A->n != sa->nelems && A->n != 1)
        FAIL(c, "wgmma dot: A register count differs from its layout's");
    if (B->n != sb->nelems && B->n != 1)
        FAIL(c, "wgmma dot: B register count differs from its layout's");
    /* Layouts: 128-byte swizzle where a thread's 16-byte runs lie along the atom's contiguous dim
     * (A: k, K a multiple of 64; B: n, N-major with imm-trans-b = 1, N a multiple of 64), else
     * the no-swizzle K-major layout (any registers, element by element along M/N). */
    bool a_sw = !tf32 && K % 64 == 0 && sa->vec_dim == 1 && sa->run[1] >= 8 && off_a % 1024 == 0;
    bool b_sw = !tf32 && N % 64 == 0 && sb->vec_dim == 1 && sb->run[1] >= 8 && off_b % 1024 == 0;
    if (a_sw || b_sw) /* the swizzle pattern repeats every 1024 bytes of the shared window */
        LLVMSetAlignment(cg_smem(c), 1024);
    cg_barrier(c->l); /* earlier readers of the staging area are done */
    if (a_sw)
        wgmma_store_sw128(c, A, sa, ta.dtype, off_a, 0, M);
    else
        wgmma_store_operand(c, A, sa, ta.dtype, off_a, 0, K);
    if (b_sw)
        wgmma_store_sw128(c, B, sb, tb.dtype, off_b, 0, K);
    else
        wgmma_store_operand(c, B, sb, tb.dtype, off_b, 1, K);
    cg_asm_void(c, "fence.proxy.async.shared::cta;");
    cg_barrier(c->l);

    /* Descriptors, thread-invariant parts in the entry block: warpgroup g = warp / 4 starts at
     * row g*64 of A. No swizzle: LBO 128 (next core matrix along K), SBO K*16 (next 8 rows).
     * A swizzled: SBO 1024 (next 8 rows), LBO unused (1). B swizzled N-major: LBO K*128 (next
     * 64-column atom), SBO 1024 (next 8 k rows). */
    LLVMBuilderRef pb = c->pro;
    LLVMValueRef sbase = LLVMBuildTrunc(pb, LLVMBuildPtrToInt(pb, cg_smem(c), c->l->i64, ""), c->l->i32, "");
    LLVMValueRef g = LLVMBuildLShr(pb, c->warp, cg_i32(c->l, 2), "");
    int64_t a_row = a_sw ? 128 : (int64_t)K * eb; /* bytes per row of A within an 8-row group */
    LLVMValueRef a_addr = LLVMBuildAdd(pb, sbase, LLVMBuildAdd(pb, cg_i32(c->l, off_a),
                                       LLVMBuildMul(pb, g, cg_i32(c->l, 64 * a_row), ""), ""), "");
    LLVMValueRef b_addr = LLVMBuildAdd(pb, sbase, cg_i32(c->l, off_b), "");
    int64_t lbo = 128, sbo = (int64_t)K / kc * 128;
    LLVMValueRef a_desc = a_sw ? wgmma_desc(c, pb, a_addr, 16, 1024, true) : wgmma_desc(c, pb, a_addr, lbo, sbo, false);
    LLVMValueRef b_desc = b_sw ? wgmma_desc(c, pb, b_addr, (int64_t)K * 128, 1024, true)
                               : wgmma_desc(c, pb, b_addr, lbo, sbo, false);

    int64_t *a_offs = arena_alloc(c->arena, sizeof(int64_t) * (size_t)(Kt * Rm));
    int64_t *b_offs = arena_alloc(c->arena, sizeof(int64_t) * (size_t)(Kt * Nc));
    for (int rk = 0; rk < Kt; rk++) {
        /* A at row rm*16*W (+ g*64, in a_desc), k rk*KI; B at n nc*NI, k rk*KI */
        for (int rm = 0; rm < Rm; rm++)
            a_offs[rk * Rm + rm] = a_sw ? (int64_t)(rk * 16 / 64) * M * 128 + (int64_t)rm * 16 * W * 128 + (rk * 16 % 64) * 2
                                        : (int64_t)rm * 16 * W / 8 * sbo + rk * 2 * lbo;
        for (int nc = 0; nc < Nc; nc++)
            b_offs[rk * Nc + nc] = b_sw ? (int64_t)(nc * NI / 64) * K * 128 + (int64_t)rk * 16 * 128
                                        : (int64_t)nc * NI / 8 * sbo + rk * 2 * lbo;
    }
    WgmmaIssue w = {.dtype = ta.dtype, .M = M, .N = N, .K = K, .W = W, .NI = NI, .trans_b = b_sw,
                    .a_desc = a_desc, .b_desc = b_desc, .a_off = a_offs, .b_off = b_offs};
    LLVMValueRef *acc = cg_wgmma_issue(c, &w, C, dr);
    if (!acc)
        return false;
    /* wait_group 0 with every accumulator tied through it, so no use moves above it */
    int n = dr->nelems;
    acc = cg_asm_tie_f32(c, "wgmma.wait_group.sync.aligned 0;", acc, n);
    cg_set_value(c, op->results[0], acc, n, dr->layout);
    return true;
}
