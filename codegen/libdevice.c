/* libdevice.c: math functions (__nv_expf and friends) come from NVIDIA's libdevice bitcode,
 * linked into the kernel's module only when a math op needs it (parsing it costs time). */
#include "codegen/internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TRIC_CUDA_HOME
#define TRIC_CUDA_HOME "/usr/local/cuda"
#endif

/* The option (the driver puts $CUDA_HOME's file there: the environment is read at the edge), or
 * the first readable of the configured toolkit's and /usr/local/cuda's. */
static const char *libdevice_find(const CodegenOptions *o, char *buf, size_t size)
{
    if (o->libdevice_path)
        return access(o->libdevice_path, R_OK) == 0 ? o->libdevice_path : NULL;
    const char *homes[2] = {TRIC_CUDA_HOME, "/usr/local/cuda"};
    for (int i = 0; i < 2; i++) {
        if (!*homes[i])
            continue;
        snprintf(buf, size, "%s/nvvm/libdevice/libdevice.10.bc", homes[i]);
        if (access(buf, R_OK) == 0)
            return buf;
    }
    return NULL;
}

const char *codegen_libdevice_path(const char *override, char *buf, size_t size)
{
    CodegenOptions o = {.libdevice_path = override};
    return libdevice_find(&o, buf, size);
}

void codegen_identity(StrBuf *out)
{
    unsigned major = 0, minor = 0, patch = 0;
    LLVMGetVersion(&major, &minor, &patch);
    /* The target (NVPTX, nvptx64-nvidia-cuda) and the LLVM pass pipeline (default<O3>) are fixed
     * here; opt_level and the arch come with each compile's own options. */
    strbuf_printf(out, "LLVM %u.%u.%u NVPTX", major, minor, patch);
}

/* Records that LLVM reported an error instead of letting its default handler exit. */
static void note_error(LLVMDiagnosticInfoRef info, void *failed)
{
    if (LLVMGetDiagInfoSeverity(info) == LLVMDSError)
        *(bool *)failed = true;
}

/* The context's handler before note_errors, which restoring puts back. */
typedef struct SavedHandler {
    LLVMDiagnosticHandler handler;
    void *context;
} SavedHandler;

/* LLVM's default diagnostic handler exits the process on an error (a file that is not bitcode:
 * "Invalid bitcode signature"), and the library must return it instead: until the saved handler
 * is put back, an error sets *failed. */
static SavedHandler note_errors(LLVMContextRef ctx, bool *failed)
{
    SavedHandler saved = {LLVMContextGetDiagnosticHandler(ctx),
                          LLVMContextGetDiagnosticContext(ctx)};
    *failed = false;
    LLVMContextSetDiagnosticHandler(ctx, note_error, failed);
    return saved;
}

static bool kept_in_pruned(const char *name, LLVMModuleRef kernel)
{
    if (!strncmp(name, "llvm.", 5) || !strncmp(name, "__nvvm_", 7) ||
        !strncmp(name, "__internal_", 11))
        return true;
    LLVMValueRef use = LLVMGetNamedFunction(kernel, name);
    return use && LLVMIsDeclaration(use);
}

/* The fast way: parse libdevice lazily (function bodies stay unread), delete every function the
 * kernel does not call, then link. LLVMLinkModules2 reads the body of every function it links,
 * so unpruned this costs a full parse (~100 ms); pruned, a few ms. Each __nv_* function calls
 * only intrinsics, __nvvm_reflect and __internal_* helpers (checked on CUDA 13's libdevice); should
 * a future libdevice call a deleted function, reading its body fails, which is caught here (the
 * link goes into a scratch module) and the caller falls back to the full link. */
static bool link_pruned(CgLlvm *l, const char *path)
{
    LLVMMemoryBufferRef buf = NULL;
    char *msg = NULL;
    if (LLVMCreateMemoryBufferWithContentsOfFile(path, &buf, &msg)) {
        LLVMDisposeMessage(msg);
        return false;
    }
    bool failed;
    SavedHandler saved = note_errors(l->ctx, &failed);
    LLVMModuleRef lib = NULL, scratch = NULL;
    /* The module owns buf only when it was read: a file that is not bitcode leaves it ours. */
    bool unread = LLVMGetBitcodeModuleInContext2(l->ctx, buf, &lib);
    if (unread)
        LLVMDisposeMemoryBuffer(buf);
    bool ok = !unread && lib;
    if (ok) {
        for (LLVMValueRef fn = LLVMGetFirstFunction(lib), next; fn; fn = next) {
            next = LLVMGetNextFunction(fn);
            size_t len;
            const char *name = LLVMGetValueName2(fn, &len);
            if (!kept_in_pruned(name, l->mod) && !LLVMGetFirstUse(fn))
                LLVMDeleteFunction(fn);
        }
        LLVMSetTarget(lib, LLVMGetTarget(l->mod));
        LLVMSetDataLayout(lib, LLVMGetDataLayoutStr(l->mod));
        scratch = LLVMModuleCreateWithNameInContext("libdevice", l->ctx);
        LLVMSetTarget(scratch, LLVMGetTarget(l->mod));
        LLVMSetDataLayout(scratch, LLVMGetDataLayoutStr(l->mod));
        ok = !LLVMLinkModules2(scratch, lib) && !failed; /* lib is consumed either way */
    }
    if (ok)
        ok = !LLVMLinkModules2(l->mod, scratch) && !failed;
    else if (scratch)
        LLVMDisposeModule(scratch);
    LLVMContextSetDiagnosticHandler(l->ctx, saved.handler, saved.context);
    return ok;
}

/* The slow, always-correct way: parse all of libdevice and link it. */
static bool link_full(CgLlvm *l, const char *path, Diag *d)
{
    LLVMMemoryBufferRef buf = NULL;
    char *msg = NULL;
    if (LLVMCreateMemoryBufferWithContentsOfFile(path, &buf, &msg)) {
        diag_plain_error(d, "cannot read libdevice %s: %s", path, msg ? msg : "?");
        LLVMDisposeMessage(msg);
        return false;
    }
    bool failed;
    SavedHandler saved = note_errors(l->ctx, &failed);
    LLVMModuleRef lib = NULL;
    bool bad = LLVMParseBitcodeInContext2(l->ctx, buf, &lib) || !lib || failed;
    LLVMDisposeMemoryBuffer(buf);
    bool ok = !bad;
    if (bad) {
        if (lib)
            LLVMDisposeModule(lib);
        diag_plain_error(d, "%s is not valid LLVM bitcode", path);
    } else {
        /* libdevice carries its own (older) triple and data layout; use the kernel's. */
        LLVMSetTarget(lib, LLVMGetTarget(l->mod));
        LLVMSetDataLayout(lib, LLVMGetDataLayoutStr(l->mod));
        ok = !LLVMLinkModules2(l->mod, lib) && !failed; /* lib is destroyed either way */
        if (!ok)
            diag_plain_error(d, "linking libdevice %s failed", path);
    }
    LLVMContextSetDiagnosticHandler(l->ctx, saved.handler, saved.context);
    return ok;
}

bool cg_link_libdevice(CgLlvm *l, const CodegenOptions *o, const char *what, Diag *d)
{
    char pathbuf[4096];
    const char *path = libdevice_find(o, pathbuf, sizeof pathbuf);
    if (!path) {
        if (o->libdevice_path)
            diag_plain_error(d, "math function %s needs libdevice: cannot read %s", what,
                             o->libdevice_path);
        else
            diag_plain_error(d,
                             "math function %s needs libdevice: install the CUDA toolkit or "
                             "pass --libdevice=PATH",
                             what);
        return false;
    }
    if (!link_pruned(l, path) && !link_full(l, path, d))
        return false;
    /* Everything but the kernel becomes internal, so default<O3> drops the unused part of
     * libdevice and inlines the rest. */
    for (LLVMValueRef fn = LLVMGetFirstFunction(l->mod); fn; fn = LLVMGetNextFunction(fn)) {
        if (LLVMIsDeclaration(fn) || LLVMGetFunctionCallConv(fn) == 71)
            continue;
        LLVMSetLinkage(fn, LLVMInternalLinkage);
    }
    for (LLVMValueRef g = LLVMGetFirstGlobal(l->mod); g; g = LLVMGetNextGlobal(g)) {
        if (!LLVMIsDeclaration(g))
            LLVMSetLinkage(g, LLVMInternalLinkage);
    }
    /* __nvvm_reflect("__CUDA_FTZ") reads this flag (NVVMReflect pass): 1, the flush-to-zero
     * variants, as Triton's NVIDIA backend sets it (llvm.set_nvvm_reflect_ftz): __nv_exp2f is then
     * one ex2.approx.ftz.f32, where the subnormal-preserving form costs a compare and two
     * multiplies around it (attention's softmax runs 64 per thread per block). Subnormal inputs
     * and results of libdevice math flush to zero on the GPU; the interpreter keeps them. */
    LLVMAddModuleFlag(l->mod, LLVMModuleFlagBehaviorOverride, "nvvm-reflect-ftz",
                      strlen("nvvm-reflect-ftz"), LLVMValueAsMetadata(LLVMConstInt(l->i32, 1, 0)));
    return true;
}
