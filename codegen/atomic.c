/* atomic.c: atomic_rmw and atomic_cas as inline PTX `atom` (or `red` when nothing reads the
 * result), one element per instruction, with the op's memory ordering and scope (PTX ISA 9.7.13.5
 * "Parallel Synchronization and Communication Instructions: atom", 9.7.13.6 "red"; 8.4 for .sem
 * and .scope). Each element is done by exactly one thread: a layout that replicates elements (a
 * block smaller than the CTA, or a scalar) lets only the first holder (Dist.owner; thread 0 for a
 * scalar) issue it, and when the result is read the old values go through the op's shared-memory
 * scratch (passes/shared_alloc.c decides; docs/codegen.md "Atomics") so every holder gets them.
 * Masked-off lanes issue nothing and read 0, as the interpreter. bf16 add before sm_90 (which
 * has no atom.add.bf16) is LLVM's atomicrmw, a compare-and-swap loop, as Triton does. */
#include "codegen/internal.h"

#include <string.h>

static bool region_uses(const IrRegion *r, ValueId v)
{
    for (int i = 0; i < r->nops; i++) {
        const IrOp *op = r->ops[i];
        for (int k = 0; k < op->noperands; k++)
            if (op->operands[k] == v)
                return true;
        for (int k = 0; k < op->nregions; k++)
            if (region_uses(&op->regions[k], v))
                return true;
    }
    return false;
}

/* The PTX type suffix of an atomic on dtype dt (PTX ISA 9.7.13.5: add takes .u32 .s32 .u64 .f32
 * .f64 and .noftz.f16/.bf16; max and min .s32 .u32 .s64 .u64; the bitwise kinds, exch and cas the
 * untyped .b16/.b32/.b64). */
static const char *ptx_type(bool cas, AtomicKind kind, DType dt)
{
    int bits = dtype_bits(dt);
    if (cas || kind == ATOMIC_AND || kind == ATOMIC_OR || kind == ATOMIC_XOR || kind == ATOMIC_XCHG)
        return bits == 16 ? "b16" : bits == 32 ? "b32" : "b64";
    switch (dt) {
    case DT_F16: return "noftz.f16";
    case DT_BF16: return "noftz.bf16";
    case DT_F32: return "f32";
    case DT_F64: return "f64";
    default: break;
    }
    if (kind == ATOMIC_ADD) /* two's complement: one add for both signednesses */
        return bits == 32 ? "u32" : "u64";
    bool s = dtype_is_signed(dt);
    return bits == 32 ? (s ? "s32" : "u32") : (s ? "s64" : "u64");
}

/* One element: `mov d, 0; @p atom.sem.scope.global.op.type d, [a], b(, c);` returning d (as the
 * integer of the element's width), or `@p red...` (no result) when red is set. */
static LLVMValueRef emit_one(Cg *c, const char *opname, const char *sem, const char *scope,
                             int bits, bool red, LLVMValueRef pred, LLVMValueRef ptr,
                             LLVMValueRef val, LLVMValueRef cmp)
{
    const char *L = bits == 16 ? "h" : bits == 32 ? "r" : "l";
    LLVMTypeRef it = LLVMIntTypeInContext(c->l->ctx, (unsigned)bits);
    StrBuf text = {0}, cons = {0};
    LLVMValueRef args[4];
    int n = 0;
    if (red) {
        strbuf_printf(&text, "@$0 red.%s.%s.global.%s [ $1 + 0 ], $2;", sem, scope, opname);
        strbuf_printf(&cons, "b,l,%s,~{memory}", L);
    } else {
        strbuf_printf(&text, "mov.b%d $0, 0;\n\t@$1 atom.%s.%s.global.%s $0, [ $2 + 0 ], $3%s;",
                      bits, sem, scope, opname, cmp ? ", $4" : "");
        strbuf_printf(&cons, "=&%s,b,l,%s%s%s,~{memory}", L, L, cmp ? "," : "", cmp ? L : "");
    }
    args[n++] = pred;
    args[n++] = ptr;
    if (cmp)
        args[n++] = cmp;
    args[n++] = val;
    LLVMValueRef call = cg_asm(c->l, red ? c->l->void_t : it, text.data, cons.data, args, n, true);
    strbuf_free(&text);
    strbuf_free(&cons);
    return red ? NULL : call;
}

/* `if (pred) old = atomicrmw fadd ptr, val` (0 where pred is false). The backend's loop is made
 * of relaxed atom.cas, so the ordering is fences around it (PTX ISA 9.7.13.4 membar/fence: a
 * fence.acq_rel before a relaxed write makes it a release, after a relaxed read an acquire). */
static LLVMValueRef emit_atomicrmw_fadd(Cg *c, LLVMValueRef pred, LLVMValueRef ptr,
                                        LLVMValueRef val, MemSem sem, const char *scope)
{
    LLVMBuilderRef b = c->l->b;
    char fence[48];
    snprintf(fence, sizeof fence, "fence.acq_rel.%s;", scope);
    LLVMBasicBlockRef from = LLVMGetInsertBlock(b);
    LLVMBasicBlockRef doit = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "atomic.rmw");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "atomic.done");
    LLVMBuildCondBr(b, pred, doit, done);
    LLVMPositionBuilderAtEnd(b, doit);
    if (sem == MEM_SEM_RELEASE || sem == MEM_SEM_ACQ_REL)
        cg_asm_void(c, fence);
    LLVMValueRef got =
        LLVMBuildAtomicRMW(b, LLVMAtomicRMWBinOpFAdd, ptr, val, LLVMAtomicOrderingMonotonic, 0);
    if (sem == MEM_SEM_ACQUIRE || sem == MEM_SEM_ACQ_REL)
        cg_asm_void(c, fence);
    LLVMBuildBr(b, done);
    LLVMPositionBuilderAtEnd(b, done);
    LLVMValueRef phi = LLVMBuildPhi(b, LLVMTypeOf(val), "");
    LLVMValueRef vals[2] = {got, LLVMConstNull(LLVMTypeOf(val))};
    LLVMBasicBlockRef blocks[2] = {doit, from};
    LLVMAddIncoming(phi, vals, blocks, 2);
    return phi;
}

static LLVMValueRef to_bits(Cg *c, LLVMValueRef v, int bits)
{
    LLVMTypeRef it = LLVMIntTypeInContext(c->l->ctx, (unsigned)bits);
    return LLVMTypeOf(v) == it ? v : LLVMBuildBitCast(c->l->b, v, it, "");
}

/* The old values into every holder: owners store them at the strides of the op's scratch record
 * (passes/shared_alloc.c: row-major), a barrier, every thread reads its elements back (a barrier first, as every scratch
 * user: the previous op's reads of the same bytes must be done). */
static LLVMValueRef *broadcast_old(Cg *c, const IrOp *op, Dist *ds, LLVMValueRef owner,
                                   LLVMValueRef *old, int n, LLVMTypeRef et, int eb)
{
    LLVMBuilderRef b = c->l->b;
    Type rt = ir_type(c->f, op->results[0]);
    if (!cg_smem_check(c, op, type_numel(rt) * eb, "atomic result"))
        return NULL;
    const IrScratch *s = &op->scratch;
    if (s->ntiles != 1 || s->tile[0].layout > 0 || s->tile[0].nstrides != rt.rank) {
        TRIC_INTERNAL(c->d, "atomic: its result is shared through scratch without a scratch "
                            "record at strides (shared_alloc)");
        c->failed = true;
        return NULL;
    }
    const int64_t *strides = s->tile[0].strides;
    LLVMValueRef *addr = cg_regs(c, n);
    for (int e = 0; e < n; e++) {
        LLVMValueRef idx = ds ? cg_strided_index(c, ds, e, strides) : cg_i32(c->l, 0);
        LLVMValueRef byte = cg_add(b, cg_i32(c->l, cg_scratch_offset(c, op->smem_offset)),
                                   cg_mul(b, idx, cg_i32(c->l, eb), ""), "");
        addr[e] = cg_smem_addr(c, byte);
    }
    cg_barrier(c->l);
    LLVMBasicBlockRef st = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "atomic.share");
    LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(c->l->ctx, c->fn, "atomic.shared");
    LLVMBuildCondBr(b, owner, st, cont);
    LLVMPositionBuilderAtEnd(b, st);
    for (int e = 0; e < n; e++)
        LLVMSetAlignment(LLVMBuildStore(b, old[e], addr[e]), (unsigned)eb);
    LLVMBuildBr(b, cont);
    LLVMPositionBuilderAtEnd(b, cont);
    cg_barrier(c->l);
    LLVMValueRef *out = cg_regs(c, n);
    for (int e = 0; e < n; e++) {
        out[e] = LLVMBuildLoad2(b, et, addr[e], "");
        LLVMSetAlignment(out[e], (unsigned)eb);
    }
    return out;
}

/* flag_wait: thread 0 polls the flag with ld.acquire.gpu (PTX ISA 9.7.8.8, ld's .acquire; 8.4:
 * the acquire pattern that the writer's release or atom.release synchronizes with), backing off
 * with nanosleep (9.7.19.4) between reads; then bar.sync 0, which makes what the acquire saw
 * visible to every thread of the program (8.4's causality order runs through the barrier). */
static bool lower_flag_wait(Cg *c, const IrOp *op)
{
    LVal *flag = cg_value(c, op->operands[0]), *want = cg_value(c, op->operands[1]);
    if (c->failed)
        return false;
    LLVMValueRef polls = LLVMBuildZExt(
        c->l->b, LLVMBuildICmp(c->pro, LLVMIntEQ, c->tid, cg_i32(c->l, c->first_thread), ""),
        c->l->i32, "");
    LLVMValueRef args[3] = {polls, flag->el[0], want->el[0]};
    cg_asm_n(c, c->l->void_t,
             "{ .reg .pred p; .reg .b32 v; setp.eq.b32 p, $0, 0; @p bra TRIC_FLAG_DONE_${:uid}; "
             "TRIC_FLAG_WAIT_${:uid}: ld.acquire.gpu.global.b32 v, [$1]; setp.ne.b32 p, v, $2; "
             "@!p bra TRIC_FLAG_DONE_${:uid}; nanosleep.u32 64; bra TRIC_FLAG_WAIT_${:uid}; "
             "TRIC_FLAG_DONE_${:uid}: }",
             "r,l,r,~{memory}", args, 3, true);
    cg_barrier(c->l);
    return true;
}

bool cg_lower_atomic(Cg *c, const IrOp *op)
{
    LLVMBuilderRef b = c->l->b;
    if (op->code == OP_FLAG_WAIT)
        return lower_flag_wait(c, op);
    bool cas = op->code == OP_ATOMIC_CAS;
    ValueId r = op->results[0];
    Type rt = ir_type(c->f, r);
    DType dt = rt.dtype;
    AtomicKind kind = (AtomicKind)op->attr[0];
    const char *sem = mem_sem_name(op->attr[1]), *scope = mem_scope_name(op->attr[2]);
    if (!sem || !scope || (!cas && !atomic_kind_ptx(kind)))
        FAIL(c, "atomic with attr [%lld, %lld, %lld]", (long long)op->attr[0],
             (long long)op->attr[1], (long long)op->attr[2]);
    /* atom.add.noftz.bf16 is sm_90's; before it, as Triton, an LLVM atomicrmw fadd, which the
     * NVPTX backend expands into a compare-and-swap loop on the containing 32-bit word. */
    bool bf16_loop = dt == DT_BF16 && c->o->sm < 90;
    Dist *ds;
    int n = cg_nelems_of(c, r, &ds);
    LVal *ptr = cg_value(c, op->operands[0]);
    LVal *val = cg_value(c, op->operands[cas ? 2 : 1]);
    LVal *cmp = cas ? cg_value(c, op->operands[1]) : NULL;
    LVal *mask = !cas && op->noperands > 2 && op->operands[2] ? cg_value(c, op->operands[2]) : NULL;
    if (c->failed)
        return false;
    /* One issuing thread per element: the first holder, or thread 0 for a scalar. */
    LLVMValueRef owner =
        ds ? ds->owner
           : LLVMBuildICmp(c->pro, LLVMIntEQ, c->tid, cg_i32(c->l, c->first_thread), "");
    bool used = region_uses(&c->f->body, r);
    bool share = op->smem_bytes > 0;
    if (used && owner && !share)
        FAIL(c, "an atomic's result is read but the shared-memory pass gave it no scratch");
    /* red has no result and only the relaxed and release orderings (PTX ISA 9.7.13.6). */
    bool red = !used && !cas && kind != ATOMIC_XCHG &&
               (op->attr[1] == MEM_SEM_RELAXED || op->attr[1] == MEM_SEM_RELEASE);
    int bits = dtype_bits(dt);
    char opname[32];
    snprintf(opname, sizeof opname, "%s.%s", cas ? "cas" : atomic_kind_ptx(kind),
             ptx_type(cas, kind, dt));
    LLVMTypeRef et = cg_elem_type(c, dt);
    LLVMValueRef *old = cg_regs(c, n);
    for (int e = 0; e < n; e++) {
        LLVMValueRef pred = mask ? cg_at(mask, e) : NULL;
        if (owner)
            pred = pred ? LLVMBuildAnd(b, pred, owner, "") : owner;
        if (!pred)
            pred = LLVMConstInt(c->l->i1, 1, 0);
        LLVMValueRef v = to_bits(c, cg_at(val, e), bits);
        LLVMValueRef cv = cmp ? to_bits(c, cg_at(cmp, e), bits) : NULL;
        LLVMValueRef got =
            bf16_loop ? emit_atomicrmw_fadd(c, pred, cg_at(ptr, e), cg_at(val, e),
                                            (MemSem)op->attr[1], scope)
                      : emit_one(c, opname, sem, scope, bits, red, pred, cg_at(ptr, e), v, cv);
        old[e] = got ? (LLVMTypeOf(got) == et ? got : LLVMBuildBitCast(b, got, et, ""))
                     : LLVMGetUndef(et);
    }
    if (share && used) {
        old = broadcast_old(c, op, ds, owner ? owner : LLVMConstInt(c->l->i1, 1, 0), old, n, et,
                            dtype_bytes(dt));
        if (!old)
            return false;
    }
    cg_set_value(c, r, old, n, ir_value(c->f, r)->layout);
    return true;
}
