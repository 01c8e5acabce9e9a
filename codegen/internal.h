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

/* The lowering's state and per-thread distributions, shared by lower.c and lower_pipeline.c. */

/* The elements one thread holds of a block value of a given layout and shape. */
typedef struct Dist {
    int layout;
    Type type;
    int rank;
    int nelems;
    int32_t *off;                     /* [nelems][rank]: constant offset from base */
    int32_t *idx;                     /* [nelems][rank]: local index along each dim */
    int count[TRIC_MAX_RANK];         /* elements per thread along each dim */
    int run[TRIC_MAX_RANK];           /* contiguous elements per thread along each dim (spt) */
    int32_t *dim_off[TRIC_MAX_RANK];  /* offset of local index i along dim d */
    int vec_dim;                      /* the fastest-varying dim in registers, -1 if none */
    int lanes[TRIC_MAX_RANK];         /* distinct lanes along dim (a power of two) */
    int lane_stride[TRIC_MAX_RANK];   /* lane-id step between them */
    int warps[TRIC_MAX_RANK];         /* distinct warps along dim */
    LLVMValueRef warp_id[TRIC_MAX_RANK]; /* this thread's warp index along dim (unwrapped) */
    LLVMValueRef base[TRIC_MAX_RANK]; /* i32 */
    LLVMValueRef owner;               /* i1: first holder of its elements; NULL = always */
} Dist;

/* The registers of a value. layout is the layout the registers follow: the IR's, except for a
 * value converted to a dot-operand layout, which keeps its source's registers (the FMA dot reads
 * its operands through shared memory itself). */
typedef struct LVal {
    LLVMValueRef *el;
    int n;
    int layout;
} LVal;

typedef struct BaseCache {
    int key[6]; /* lane stride, tpw, warp stride, wpc, spt (clamped), extent: the whole formula */
    LLVMValueRef base, lane_id, warp_id;
} BaseCache;

/* This thread's coordinates in an #mma v2 layout with warps [wm_n, wn_n] (docs/layouts.md), computed
 * once in the entry block: every value of that layout, its slices and its dot operands share them,
 * so bases compare equal by pointer (relabelling needs that). */
typedef struct MmaBases {
    int wpc[2];
    LLVMValueRef wm, wn;     /* warp index along M and N */
    LLVMValueRef row, col;   /* C fragment: wm*16 + groupID, wn*8 + tig*2 */
    LLVMValueRef k, b_col;   /* A/B fragments: k = tig*2; B's n = wn*8 + groupID */
    LLVMValueRef group, tig; /* lane >> 2, lane & 3 */
} MmaBases;

typedef struct Cg {
    CgLlvm *l;
    const IrFunc *f;
    const CodegenOptions *o;
    Diag *d;
    Arena *arena;
    LVal *vals;
    LLVMValueRef fn;
    LLVMBuilderRef pro; /* the entry block, before its branch: thread-invariant values */
    LLVMValueRef tid, lane, warp;
    Dist **dists;
    int ndists, dists_cap;
    BaseCache *bases;
    int nbases, bases_cap;
    struct MmaBases *mma_bases;
    int nmma_bases, mma_bases_cap;
    const IrOp *term; /* the yield/condition that ended the last region lowered */
    bool *lazy_operand; /* per value: a dot operand left in its source registers (lower_dot) */
    int64_t scratch_floor; /* the lowest nonzero smem_offset of any op (shared_bytes if none) */
    bool needs_libdevice;
    const char *math_name;
    bool failed;
} Cg;

#define FAIL(c, ...)                                                                                \
    do {                                                                                           \
        TRIC_INTERNAL((c)->d, __VA_ARGS__);                                                        \
        (c)->failed = true;                                                                        \
        return false;                                                                              \
    } while (0)

/* What lower.c lends lower_pipeline.c (each the lower.c function of the same meaning). */
Dist *cg_dist(Cg *c, int layout, Type t);                      /* dist_get */
LVal *cg_value(Cg *c, ValueId v);                              /* get: the registers of v */
void cg_set_value(Cg *c, ValueId v, LLVMValueRef *el, int n, int layout); /* set */
LLVMValueRef *cg_regs(Cg *c, int n);                           /* new_el */
LLVMValueRef cg_coord(Cg *c, const Dist *ds, int e, int d);    /* coordinate of element e along d */
LLVMValueRef cg_smem(Cg *c);                                   /* @global_smem */
MmaBases *cg_mma_bases(Cg *c, const Layout *mma);              /* per-thread #mma ids */
int *cg_local_index_map(Cg *c, const Dist *ds);                /* (x0, x1) -> register, rank 2 */
void cg_ldmatrix(Cg *c, LLVMValueRef ptr, int n, bool trans, LLVMValueRef *out);
LLVMValueRef cg_asm_n(Cg *c, LLVMTypeRef ret, const char *text, const char *constraints,
                      LLVMValueRef *args, int nargs, bool side_effects);
void cg_asm_void(Cg *c, const char *text);                     /* side effects, memory clobber */
LLVMTypeRef cg_mem_type(Cg *c, DType t);                       /* int1 as i8 */
int cg_access_width(Cg *c, const IrOp *mem_op, const Dist *ds);  /* axis_vector_width, in the run */
/* `@pred ld.global` of w elements into out, `other` where pred is false (lower.c load_predicated). */
void cg_load_predicated(Cg *c, LLVMValueRef ptr, LLVMValueRef pred, LLVMValueRef *other, int w,
                        LLVMTypeRef mt, int eb, LLVMValueRef *out);

/* ---- lower_pipeline.c: the memory-pipeline ops (ir.h "the memory pipeline") ----------------- */

/* local_alloc, slot, async_copy, async_commit, async_wait, barrier, local_load, wgmma,
 * wgmma_wait (docs/codegen.md "The memory pipeline"). */
bool cg_lower_pipeline_op(Cg *c, const IrOp *op);
/* The iter arg (0-based) of for_op whose block argument is the accumulator (c) of a wgmma op
 * directly in its body; -1 if none. lower_for pins its initial registers (C7515). */
int cg_wgmma_acc_iter(const Cg *c, const IrOp *for_op);

#endif
