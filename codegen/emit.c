/* emit.c: verification, the optimization pipeline (new pass manager, default<On>) and NVPTX
 * emission to PTX text. */
#include "codegen/internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    char pipeline[48];
    snprintf(pipeline, sizeof pipeline, "globaldce,default<O%d>", level);
    struct timespec t0, t1, t2;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
    LLVMErrorRef err = LLVMRunPasses(l->mod, pipeline, l->tm, pbo);
    LLVMDisposePassBuilderOptions(pbo);
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
        fprintf(stderr, "codegen: %s %.1f ms, NVPTX emission %.1f ms\n", pipeline,
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
