/* internal.h: what the files of codegen/ share. Private to codegen/: the only place LLVM types
 * appear in tric. Nothing outside codegen/ includes it.
 *
 * The style follows Mesa's ac_llvm_build.c: one context struct caches the LLVM context, module,
 * builder, target machine and common types; each intrinsic has a helper that declares it on first
 * use (by name, so LLVM recognises it). */
#ifndef TRIC_CODEGEN_INTERNAL_H
#define TRIC_CODEGEN_INTERNAL_H

#include "codegen/codegen.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

/* Address spaces of NVPTX (NVPTX usage guide, "Address Spaces"). */
enum { AS_GLOBAL = 1, AS_SHARED = 3 };

/* ---- llvm.c: the wrapper ------------------------------------------------------------------- */

typedef struct CgLlvm {
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    LLVMTargetMachineRef tm;
    LLVMTypeRef i1, i8, i16, i32, i64, f16, bf16, f32, f64, void_t;
    LLVMTypeRef gptr; /* ptr addrspace(1) */
    LLVMTypeRef sptr; /* ptr addrspace(3) */
    LLVMValueRef smem; /* @global_smem: external [0 x i8] addrspace(3), align 16 */
} CgLlvm;

/* Creates the context, module (triple and data layout from the target machine) and builder.
 * Returns false with a diagnostic when the NVPTX target is missing. */
bool cg_llvm_init(CgLlvm *l, const char *module_name, const CodegenOptions *o, Diag *d);
void cg_llvm_dispose(CgLlvm *l);

/* Calls an intrinsic or external function `name` of type ret(args...), declaring it on first use. */
LLVMValueRef cg_call(CgLlvm *l, const char *name, LLVMTypeRef ret, LLVMValueRef *args, int nargs);
/* llvm.nvvm.barrier0: bar.sync 0 (PTX ISA §9.7.13.1). */
void cg_barrier(CgLlvm *l);
/* The i32 value of a PTX special register (PTX ISA §10): "tid.x", "ctaid.y", "nctaid.z". */
LLVMValueRef cg_sreg(CgLlvm *l, const char *reg);
LLVMValueRef cg_i32(CgLlvm *l, int64_t v);
LLVMValueRef cg_i64(CgLlvm *l, int64_t v);
/* Inline PTX (LLVMGetInlineAsm): returns the call. */
LLVMValueRef cg_asm(CgLlvm *l, LLVMTypeRef ret, const char *text, const char *constraints,
                    LLVMValueRef *args, int nargs, bool side_effects);

/* ---- libdevice.c --------------------------------------------------------------------------- */

/* Links libdevice into l->mod (functions used by the kernel only) and internalizes everything but
 * the kernel. `what` names the first math op for the error message. */
bool cg_link_libdevice(CgLlvm *l, const CodegenOptions *o, const char *what, Diag *d);

/* ---- emit.c -------------------------------------------------------------------------------- */

/* Verifies the module, runs default<On>, writes LLVM IR text and PTX. */
bool cg_emit(CgLlvm *l, const CodegenOptions *o, StrBuf *llvm_ir, StrBuf *ptx, Diag *d);

/* ---- lower.c ------------------------------------------------------------------------------- */

/* Builds the kernel function into l->mod. *needs_libdevice is set when a math op calls __nv_*;
 * *math_name names the first such op. */
bool cg_lower(CgLlvm *l, const IrFunc *f, const CodegenOptions *o, bool *needs_libdevice,
              const char **math_name, Diag *d);

#endif
