/* emit.c: verification, the LLVM pass pipeline (new pass manager: tric's -O3, or LLVM's
 * default<On> below that) and NVPTX emission to PTX text. */
#include "codegen/internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A scalar type SLP could pack: an integer of 8 or 16 bits, half or bfloat. */
static bool narrow_scalar(LLVMTypeRef t)
{
    switch (LLVMGetTypeKind(t)) {
    case LLVMIntegerTypeKind: return LLVMGetIntTypeWidth(t) > 1 && LLVMGetIntTypeWidth(t) < 32;
    case LLVMHalfTypeKind:
    case LLVMBFloatTypeKind: return true;
    default: return false;
    }
}

/* Whether the SLP vectorizer can find work in the module. On NVPTX it forms only vectors that fit
 * one 32-bit register (NVPTXTTIImpl::getRegisterBitWidth is 32 in LLVM 19): pairs of 16-bit and
 * quads of 8-bit scalars (mul.rn.f16x2 from two f16 multiplies, say). With no computation on such
 * a scalar it has nothing to pack. Element extracts and inserts (the f16x2 packing round trips
 * that InstCombine folds) do not count: they are not what SLP vectorizes. Nor do loads and stores:
 * a 16-bit element the code generator left scalar is one whose neighbour is not provably next to
 * it in memory (an unannotated stride), so SLP's search for consecutive stores finds no pair, and
 * on an unannotated seed-2 tile (256 scalar f16 loads and 256 stores a thread) that search, SCEV
 * differences of every pair of addresses, was an eighth of the compile. */
static bool slp_has_work(LLVMModuleRef mod)
{
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in;
                 in = LLVMGetNextInstruction(in)) {
                LLVMOpcode op = LLVMGetInstructionOpcode(in);
                if (op == LLVMExtractElement || op == LLVMInsertElement || op == LLVMLoad ||
                    op == LLVMStore)
                    continue;
                if (narrow_scalar(LLVMTypeOf(in)))
                    return true;
                int n = LLVMGetNumOperands(in);
                for (int i = 0; i < n; i++)
                    if (narrow_scalar(LLVMTypeOf(LLVMGetOperand(in, i))))
                        return true;
            }
    return false;
}

/* Whether a call may become loads or stores before NVPTX's load-store vectorizer runs: a call of an
 * intrinsic that touches memory (no `memory(none)`), other than llvm.nvvm.*, which instruction
 * selection lowers. llvm.memcpy/memmove/memset become loops of loads and stores
 * (NVPTXLowerAggrCopies), llvm.masked.* scalar ones (ScalarizeMaskedMemIntrin), aligned as the
 * call was. The code generator inlines no function, and inline asm is opaque to it. */
static bool call_may_become_access(LLVMValueRef call, unsigned memory_kind)
{
    LLVMValueRef callee = LLVMGetCalledValue(call);
    if (!callee || !LLVMIsAFunction(callee) || !LLVMGetIntrinsicID(callee))
        return false;
    size_t len = 0;
    const char *name = LLVMGetValueName2(callee, &len);
    if (len > 10 && strncmp(name, "llvm.nvvm.", 10) == 0)
        return false;
    LLVMAttributeRef memory =
        LLVMGetEnumAttributeAtIndex(callee, LLVMAttributeFunctionIndex, memory_kind);
    return !memory || LLVMGetEnumAttributeValue(memory) != 0; /* 0: memory(none) */
}

/* Whether NVPTX's load-store vectorizer (run by NVPTXPassConfig::addIRPasses among the code
 * generator's IR passes) could change `fn`. LLVM 19's LoadStoreVectorizer.cpp changes IR in two
 * places only. (1) vectorizeChain, for a chain of two or more contiguous loads (or stores) that
 * splitChainByAlignment let through: the alignment of the chain's lowest access must be a multiple
 * of the vector's size, or the target must allow the misaligned access, which NVPTX never does
 * (it keeps TargetLowering's allowsMisalignedMemoryAccesses, false). The vector is larger than its
 * lowest element, so where no load or store is aligned beyond its own size, no chain passes. (2)
 * Raising an alloca's alignment, which needs an alloca. What the IR passes before it add to `fn`
 * counts too: the loads of a byval parameter (NVPTXLowerArgs; tric's tensor maps), the expansion
 * of atomics (AtomicExpand) and of the calls call_may_become_access names; GVN's load PRE copies
 * a load with its own alignment. Per-element accesses tric leaves scalar where a run-time stride
 * hides the neighbour have just their natural alignment, and there the vectorizer's search (SCEV
 * differences of every pair of addresses with one base: 64 A and 64 B loads a k step on unannotated
 * seed 2) finds nothing: 359 M of that compile's 1285 M instructions. */
static bool lsv_may_act(LLVMValueRef fn, LLVMTargetDataRef dl)
{
    unsigned byval_kind = LLVMGetEnumAttributeKindForName("byval", 5);
    unsigned memory_kind = LLVMGetEnumAttributeKindForName("memory", 6);
    unsigned nparams = LLVMCountParams(fn);
    for (unsigned i = 0; i < nparams; i++)
        if (LLVMGetEnumAttributeAtIndex(fn, i + 1, byval_kind))
            return true;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
            LLVMTypeRef accessed;
            switch (LLVMGetInstructionOpcode(in)) {
            case LLVMAlloca:
            case LLVMAtomicRMW:
            case LLVMAtomicCmpXchg: return true;
            case LLVMCall:
                if (call_may_become_access(in, memory_kind))
                    return true;
                continue;
            case LLVMLoad: accessed = LLVMTypeOf(in); break;
            case LLVMStore: accessed = LLVMTypeOf(LLVMGetOperand(in, 0)); break;
            default: continue;
            }
            if (LLVMGetAlignment(in) > LLVMStoreSizeOfType(dl, accessed))
                return true;
        }
    return false;
}

/* Marks noimplicitfloat each function the load-store vectorizer cannot change: the vectorizer's
 * first test skips such a function, while the option that turns it off
 * (-disable-nvptx-load-store-vectorizer) holds for the whole process. NVPTX's code generator reads
 * the attribute in one other place, the DAG combiner's merging of consecutive stores into a vector
 * type, which needs the same alignment; on scripts/ptx_corpus.sh the attribute on every kernel
 * gives PTX byte-identical to the vectorizer turned off. Added after the pass pipeline, so the
 * LLVM IR tric prints, and SLP, which reads it too, are unchanged. */
static void skip_idle_load_store_vectorizer(CgLlvm *l)
{
    LLVMTargetDataRef dl = LLVMGetModuleDataLayout(l->mod);
    LLVMAttributeRef noimplicitfloat =
        LLVMCreateEnumAttribute(l->ctx, LLVMGetEnumAttributeKindForName("noimplicitfloat", 15), 0);
    for (LLVMValueRef fn = LLVMGetFirstFunction(l->mod); fn; fn = LLVMGetNextFunction(fn))
        if (LLVMGetFirstBasicBlock(fn) && !lsv_may_act(fn, dl))
            LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, noimplicitfloat);
}

/* simplifycfg's option sets as LLVM 19's default<O3> passes them (PassBuilderPipelines.cpp) */
#define SCFG_COMMON "bonus-inst-threshold=1;speculate-blocks;simplify-cond-branch"
#define SCFG_EARLY                                                                                 \
    "simplifycfg<" SCFG_COMMON ";no-forward-switch-cond;no-switch-range-to-icmp;"                  \
    "no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;"                   \
    "no-speculate-unpredictables>"
#define SCFG                                                                                       \
    "simplifycfg<" SCFG_COMMON ";no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;" \
    "keep-loops;no-hoist-common-insts;no-sink-common-insts;no-speculate-unpredictables>"
#define SCFG_HOIST                                                                                 \
    "simplifycfg<" SCFG_COMMON ";no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;" \
    "keep-loops;hoist-common-insts;sink-common-insts;no-speculate-unpredictables>"
#define SCFG_LATE                                                                                  \
    "simplifycfg<" SCFG_COMMON ";forward-switch-cond;switch-range-to-icmp;switch-to-lookup;"       \
    "no-keep-loops;hoist-common-insts;sink-common-insts;no-speculate-unpredictables>"
#define SCFG_FINAL                                                                                 \
    "simplifycfg<" SCFG_COMMON ";no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;" \
    "keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-unpredictables>"
#define INSTCOMBINE "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>"

/* tric's -O3: LLVM 19's default<O3> module pipeline for NVPTX as `opt -passes='default<O3>'
 * -print-pipeline-passes` spells it, in its order and with its options, less what costs time on a
 * one-kernel module and changes nothing there (scripts/ptx_corpus.sh, 214 kernels: 172 PTX files
 * identical modulo register numbering, the others within +-0.2% of their instructions, no change of
 * more than 1%; seed 2 128x128x64 sm_90a 411 -> 327 M instructions of compile under callgrind):
 * - four of its eight InstCombine runs (after GVN/SCCP, at the end of the per-function
 *   simplification, after the loop vectorizer and after SLP: six kernels' PTX changes, within
 *   0.1%); InstCombine is 60% of the pipeline's time on seed 2, most of it in known-bits queries
 *   on address arithmetic;
 * - IPSCCP (without it 36 of the corpus's kernels gain one to three instructions), SCCP and DSE
 *   (no PTX of the corpus changes without them);
 * - what a module of one kernel, no indirect call, no coroutine, no OpenMP and no profile never
 *   uses: the coroutine (coro-*) and OpenMP passes, called-value propagation, the loop vectorizer
 *   (NVPTX has no vector registers) and its helpers loop-distribute, loop-load-elim and
 *   inject-tli-mappings, control-height reduction, the instrumentation, annotation and profile
 *   passes (ee-instrument, annotation2metadata, forceattrs, cg-profile, annotation-remarks,
 *   transform-warning), move-auto-init, elim-avail-extern, rel-lookup-table-converter,
 *   constmerge, libcall shrink-wrapping and the final verifier (the module was verified before);
 * - the SLP vectorizer unless slp_has_work. */
static const char *const TRIC_O3_HEAD =
    "globaldce,function(nvvm-reflect,nvvm-intr-range),inferattrs,"
    "function<eager-inv>(lower-expect," SCFG_EARLY
    ",sroa<modify-cfg>,early-cse<>,callsite-splitting),"
    "globalopt,"
    "function<eager-inv>(mem2reg," INSTCOMBINE "," SCFG "),"
    "always-inline,require<globals-aa>,function(invalidate<aa>),require<profile-summary>,"
    "cgscc(devirt<4>(inline,function-attrs<skip-non-recursive-function-attrs>,argpromotion,"
    "function<eager-inv;no-rerun>("
    "sroa<modify-cfg>,early-cse<memssa>,speculative-execution<only-if-divergent-target>,"
    "jump-threading,correlated-propagation," SCFG "," INSTCOMBINE ",aggressive-instcombine,"
    "tailcallelim," SCFG ",reassociate,constraint-elimination,"
    "loop-mssa(loop-instsimplify,loop-simplifycfg,licm<no-allowspeculation>,"
    "loop-rotate<header-duplication;no-prepare-for-lto>,licm<allowspeculation>,"
    "simple-loop-unswitch<nontrivial;trivial>)," SCFG "," INSTCOMBINE ","
    "loop(loop-idiom,indvars,simple-loop-unswitch<nontrivial;trivial>,loop-deletion,"
    "loop-unroll-full),"
    "sroa<modify-cfg>,vector-combine,mldst-motion<no-split-footer-bb>,gvn<>,bdce,jump-threading,"
    "correlated-propagation,adce,memcpyopt,loop-mssa(licm<allowspeculation>)," SCFG_HOIST "),"
    "function-attrs,function(require<should-not-run-function-passes>))),"
    "deadargelim,globalopt,globaldce,rpo-function-attrs,recompute-globalsaa,"
    "function<eager-inv>(float2int,lower-constant-intrinsics,"
    "loop(loop-rotate<header-duplication;no-prepare-for-lto>,loop-deletion),"
    "infer-alignment," SCFG_LATE ",";
static const char *const TRIC_O3_TAIL =
    "vector-combine,loop-unroll<O3>,sroa<preserve-cfg>,infer-alignment," INSTCOMBINE ","
    "loop-mssa(licm<allowspeculation>),alignment-from-assumptions,loop-sink,instsimplify,"
    "div-rem-pairs,tailcallelim," SCFG_FINAL "),"
    "globaldce";

bool cg_emit(CgLlvm *l, const CodegenOptions *o, StrBuf *llvm_ir, StrBuf *ptx, Diag *d)
{
    char *msg = NULL;
    if (LLVMVerifyModule(l->mod, LLVMReturnStatusAction, &msg)) {
        char *text = LLVMPrintModuleToString(l->mod);
        TRIC_INTERNAL(d, "codegen made an invalid LLVM module: %s\n%s", msg ? msg : "", text);
        LLVMDisposeMessage(text);
        LLVMDisposeMessage(msg);
        return false;
    }
    LLVMDisposeMessage(msg);

    int level = o->opt_level < 0 ? 0 : o->opt_level > 3 ? 3 : o->opt_level;
    /* -O3 (the default): tric's pipeline above. -O0..-O2: LLVM's default<On>, globaldce first:
     * with libdevice linked and internalized, it drops the hundreds of unused math functions
     * before the pipeline's early per-function passes would visit each one. */
    StrBuf pipeline = {0};
    const char *pipeline_name = NULL; /* for codegen_times; NULL: the pipeline itself */
    if (o->llvm_passes && *o->llvm_passes) {
        strbuf_append(&pipeline, o->llvm_passes); /* experiments: --llvm-passes */
    } else if (level == 3) {
        /* SLP only where it can pack something: on a kernel of 32-bit work (seed 2's wgmma loop,
         * its addresses and accumulators) it found nothing and took a quarter of the compile
         * (146 M of 622 M instructions under callgrind) searching the scalar chains for
         * reductions. */
        bool slp = slp_has_work(l->mod);
        strbuf_printf(&pipeline, "%s%s%s", TRIC_O3_HEAD, slp ? "slp-vectorizer," : "",
                      TRIC_O3_TAIL);
        pipeline_name = slp ? "tric -O3" : "tric -O3 (no SLP)";
    } else {
        strbuf_printf(&pipeline, "globaldce,default<O%d>", level);
    }
    struct timespec t0, t1, t2;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
    LLVMErrorRef err = LLVMRunPasses(l->mod, pipeline.data, l->tm, pbo);
    LLVMDisposePassBuilderOptions(pbo);
    if (err) {
        char *em = LLVMGetErrorMessage(err);
        if (o->llvm_passes && *o->llvm_passes) /* the user's pipeline: the user's error */
            diag_plain_error(d, "--llvm-passes '%s': %s", pipeline.data, em);
        else
            TRIC_INTERNAL(d, "LLVM pass pipeline %s failed: %s", pipeline.data, em);
        LLVMDisposeErrorMessage(em);
        strbuf_free(&pipeline);
        return false;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (llvm_ir) {
        char *text = LLVMPrintModuleToString(l->mod);
        strbuf_append(llvm_ir, text);
        LLVMDisposeMessage(text);
    }
    if (!ptx) {
        strbuf_free(&pipeline);
        return true;
    }
    skip_idle_load_store_vectorizer(l);
    LLVMMemoryBufferRef buf = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(l->tm, l->mod, LLVMAssemblyFile, &msg, &buf)) {
        TRIC_INTERNAL(d, "NVPTX emission failed: %s", msg ? msg : "?");
        LLVMDisposeMessage(msg);
        strbuf_free(&pipeline);
        return false;
    }
    clock_gettime(CLOCK_MONOTONIC, &t2);
    if (o->codegen_times)
        fprintf(stderr, "codegen: %s %.1f ms, NVPTX emission %.1f ms\n",
                pipeline_name ? pipeline_name : pipeline.data,
                (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6,
                (double)(t2.tv_sec - t1.tv_sec) * 1e3 + (double)(t2.tv_nsec - t1.tv_nsec) / 1e6);
    const char *start = LLVMGetBufferStart(buf);
    size_t size = LLVMGetBufferSize(buf);
    /* A call left to an undefined function (libdevice's __nvvm_reflect, say) would only fail at
     * ptxas or module load time; catch it here. */
    bool ok = true;
    if (memmem(start, size, ".extern .func", 13)) {
        TRIC_INTERNAL(d, "the PTX calls an undefined function (.extern .func)");
        ok = false;
    }
    size_t from = ptx->len;
    strbuf_append_n(ptx, start, size);
    LLVMDisposeMemoryBuffer(buf);
    codegen_ptx_fuse_mad_wide(ptx, from);
    strbuf_free(&pipeline);
    return ok;
}
