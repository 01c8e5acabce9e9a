/* codegen.h: layout-annotated tile IR -> LLVM IR (through the LLVM C API) -> PTX.
 *
 * Files of codegen/ (their shared declarations: codegen/internal.h, a section per file):
 *   llvm.c           the thin wrapper: context, module, builder, target machine, intrinsic helpers
 *   kernel.c         the kernel function, the dispatch of every op, codegen_emit
 *   distribution.c   which elements each thread holds, by layout (blocked, slice, mma, dot operand)
 *   values.c         LLVM types of dtypes, the registers of each value, inline asm
 *   arith.c          elementwise ops: arithmetic, compares, casts, math
 *   global_memory.c  vectorized, predicated loads and stores
 *   atomic.c         atomic_rmw and atomic_cas: inline PTX atom / red
 *   shared_memory.c  an op's shared-memory scratch
 *   relayout.c       broadcast, expand_dims, trans, reshape, convert_layout
 *   join_split.c     join and split
 *   reduce.c         reductions and argmax/argmin
 *   scan.c           inclusive scans (cumsum, cumprod, associative_scan)
 *   dot.c            what the dots share; the choice of FMA, mma.sync or wgmma
 *   dot_fma.c        the FMA dot
 *   dot_mma.c        the mma.sync dot (#mma v2)
 *   dot_wgmma.c      the register-staged wgmma dot (#mma v3, sm_90a)
 *   control.c        for, if, while, assert
 *   async_copy.c     the asynchronous-copy ops of the memory pipeline (shared tiles, cp.async and
 *                    TMA copies, their waits and mbarriers, ldmatrix, wgmma from shared)
 *   libdevice.c      linking libdevice for math
 *   emit.c           tric's -O3 LLVM pass pipeline (new pass manager), NVPTX emission
 *   ptx_peephole.c   mul.wide + add.s64 fused into mad.wide in the PTX text (LLVM 19 does not)
 *
 * No LLVM type appears outside codegen/; the rest of tric sees this header only. */
#ifndef TRIC_CODEGEN_H
#define TRIC_CODEGEN_H

#include "ir/ir.h"

typedef struct CodegenOptions {
    int sm;                     /* 80, 86, 89, 90 */
    bool arch_specific;         /* sm_90a: wgmma and other arch-specific instructions allowed */
    int opt_level;              /* 0..3 */
    const char *libdevice_path; /* the libdevice file (the driver finds $CUDA_HOME's); NULL: the
                                   configured toolkit's, then /usr/local/cuda's */
    bool no_fp_fusion;          /* keep every float add, sub and mul rounded on its own; by default
                                   a mul feeding an add or sub may become one fma, as Triton's
                                   enable_fp_fusion=True (docs/codegen.md "Floating point") */
    const char *llvm_passes;    /* an LLVM pass pipeline (`opt -passes=` text) run instead of
                                   -On's (emit.c); NULL or "": -On's */
    const char *llvm_args;      /* LLVM options, space-separated ("-time-passes"): globals of
                                   LLVM's, parsed once, so the first compile of a process fixes
                                   them and a later one asking for others is refused (llvm.c);
                                   NULL and "" are the same */
    bool codegen_times;         /* print where the time went to stderr (kernel.c, emit.c); changes
                                   no code, so no cache key holds it */
} CodegenOptions;

/* Writes the kernel's LLVM IR (when llvm_ir is not NULL) and PTX (when ptx is not NULL).
 * Requires passes_run to have assigned layouts and shared memory. */
bool codegen_emit(const IrFunc *f, const CodegenOptions *o, StrBuf *llvm_ir, StrBuf *ptx, Diag *d);

/* ptx_peephole.c: fuses mul.wide.{s,u}32 + add.s64 (adjacent, the product read nowhere else in its
 * function) into mad.wide in the PTX text from byte `from` on, as newer LLVMs select it; ptxas
 * makes LEA pairs of mad.wide rather than IMAD.WIDE. codegen_emit applies it to what NVPTX
 * writes. */
void codegen_ptx_fuse_mad_wide(StrBuf *ptx, size_t from);
/* The same for several kernels in one module (distinct names): one PTX holding every .entry. */
bool codegen_emit_many(const IrFunc *const *fs, int nfuncs, const CodegenOptions *o,
                       StrBuf *llvm_ir, StrBuf *ptx, Diag *d);

/* What the generated code depends on besides the IR, for cache keys: the libdevice file a compile
 * with this override (NULL: the search of CodegenOptions.libdevice_path, which reads no
 * environment) links, NULL when none is found; and "LLVM 19.1.7" plus the fixed code generation
 * settings. */
const char *codegen_libdevice_path(const char *override, char *buf, size_t size);
void codegen_identity(StrBuf *out);

#endif
