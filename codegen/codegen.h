/* codegen.h: layout-annotated tile IR -> LLVM IR (through the LLVM C API) -> PTX.
 *
 * Sections (one per file in codegen/):
 *   llvm.c     the thin wrapper: context, module, builder, target machine, intrinsic helpers
 *   lower.c    per-thread values by layout, index arithmetic, every op
 *   lower_pipeline.c the memory-pipeline ops (shared tiles, cp.async, ldmatrix, wgmma from shared)
 *   libdevice.c linking libdevice for math
 *   emit.c     O3 through the new pass manager, NVPTX emission
 *
 * No LLVM type appears outside codegen/; the rest of tric sees this header only. */
#ifndef TRIC_CODEGEN_H
#define TRIC_CODEGEN_H

#include "ir/ir.h"

typedef struct CodegenOptions {
    int sm;                     /* 80, 86, 89, 90 */
    bool arch_specific;         /* sm_90a: wgmma and other arch-specific instructions allowed */
    int opt_level;              /* 0..3 */
    const char *libdevice_path; /* NULL: look in $CUDA_HOME / /usr/local/cuda */
} CodegenOptions;

/* Writes the kernel's LLVM IR (when llvm_ir is not NULL) and PTX (when ptx is not NULL).
 * Requires passes_run to have assigned layouts and shared memory. */
bool codegen_emit(const IrFunc *f, const CodegenOptions *o, StrBuf *llvm_ir, StrBuf *ptx, Diag *d);

#endif
