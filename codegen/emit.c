/* emit.c: verification, the optimization pipeline (new pass manager, default<On>) and NVPTX
 * emission to PTX text. */
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
 * quads of 8-bit scalars (mul.rn.f16x2 from two f16 multiplies, say). With no computation, load or
 * store on such a scalar it has nothing to pack. Element extracts and inserts (the f16x2 packing
 * round trips that InstCombine folds) do not count: they are not what SLP vectorizes. */
static bool slp_has_work(LLVMModuleRef mod)
{
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
        for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
            for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in;
                 in = LLVMGetNextInstruction(in)) {
                LLVMOpcode op = LLVMGetInstructionOpcode(in);
                if (op == LLVMExtractElement || op == LLVMInsertElement)
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

/* Adds (on) or removes the noimplicitfloat attribute of every function defined in the module.
 * It is how the optimization pipeline is told to skip SLP for one module: the SLP vectorizer
 * returns at once on a function carrying it (SLPVectorizerPass::runImpl), while LLVM 19's
 * LLVMPassBuilderOptionsSetSLPVectorization(false) leaves default<O3>'s SLP pass in place and the
 * -vectorize-slp option is per process. Removed again before NVPTX emission, whose load/store
 * vectorizer would also stop at it. */
static void set_no_implicit_float(CgLlvm *l, bool on)
{
    unsigned kind = LLVMGetEnumAttributeKindForName("noimplicitfloat", 15);
    for (LLVMValueRef fn = LLVMGetFirstFunction(l->mod); fn; fn = LLVMGetNextFunction(fn)) {
        if (LLVMIsDeclaration(fn))
            continue;
        if (on)
            LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                                    LLVMCreateEnumAttribute(l->ctx, kind, 0));
        else
            LLVMRemoveEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, kind);
    }
}

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
    /* globaldce first: with libdevice linked and internalized, it drops the hundreds of unused
     * math functions before the pipeline's early per-function passes would visit each one. */
    char default_pipeline[48];
    snprintf(default_pipeline, sizeof default_pipeline, "globaldce,default<O%d>", level);
    const char *pipeline = getenv("TRIC_LLVM_PIPELINE"); /* experiments: a -passes= string */
    if (!pipeline || !*pipeline)
        pipeline = default_pipeline;
    struct timespec t0, t1, t2;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* SLP only where it can pack something: on a kernel of 32-bit work (seed 2's wgmma loop, its
     * addresses and accumulators) it found nothing and took a quarter of the compile (146 M of
     * 622 M instructions under callgrind) searching the scalar chains for reductions.
     * scripts/ptx_corpus.sh: the PTX of every kernel that skips it is unchanged. */
    bool skip_slp = level > 1 && !slp_has_work(l->mod); /* -O0/-O1 run no SLP anyway */
    if (skip_slp)
        set_no_implicit_float(l, true);
    LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
    LLVMErrorRef err = LLVMRunPasses(l->mod, pipeline, l->tm, pbo);
    LLVMDisposePassBuilderOptions(pbo);
    if (skip_slp)
        set_no_implicit_float(l, false);
    if (err) {
        char *em = LLVMGetErrorMessage(err);
        TRIC_INTERNAL(d, "LLVM pass pipeline %s failed: %s", pipeline, em);
        LLVMDisposeErrorMessage(em);
        return false;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (llvm_ir) {
        char *text = LLVMPrintModuleToString(l->mod);
        strbuf_append(llvm_ir, text);
        LLVMDisposeMessage(text);
    }
    if (!ptx)
        return true;
    LLVMMemoryBufferRef buf = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(l->tm, l->mod, LLVMAssemblyFile, &msg, &buf)) {
        TRIC_INTERNAL(d, "NVPTX emission failed: %s", msg ? msg : "?");
        LLVMDisposeMessage(msg);
        return false;
    }
    clock_gettime(CLOCK_MONOTONIC, &t2);
    if (getenv("TRIC_CODEGEN_TIMES"))
        fprintf(stderr, "codegen: %s%s %.1f ms, NVPTX emission %.1f ms\n", pipeline,
                skip_slp ? " (no SLP)" : "",
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
    strbuf_append_n(ptx, start, size);
    LLVMDisposeMemoryBuffer(buf);
    return ok;
}
