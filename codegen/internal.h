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
    LLVMTypeRef gptr;  /* ptr addrspace(1) */
    LLVMTypeRef sptr;  /* ptr addrspace(3) */
    LLVMValueRef smem; /* @global_smem: external [0 x i8] addrspace(3), align 16 */
    /* cg_barrier's: 0, every thread of the program (bar.sync 0); else named barrier barrier_id of
     * that many threads (one side of a warp-specialized function, kernel.c); every thread of the
     * program at different instructions (barrier.sync 0, not .aligned) when unaligned */
    int barrier_threads, barrier_id;
    bool unaligned;
} CgLlvm;

/* Creates the context, module (triple and data layout from the target machine) and builder.
 * Returns false with a diagnostic when the NVPTX target is missing. */
bool cg_llvm_init(CgLlvm *l, const char *module_name, const CodegenOptions *o, Diag *d);
void cg_llvm_dispose(CgLlvm *l);

/* Calls an intrinsic or external function `name` of type ret(args...), declaring it on first use. */
LLVMValueRef cg_call(CgLlvm *l, const char *name, LLVMTypeRef ret, LLVMValueRef *args, int nargs);
/* bar.sync 0 (PTX ISA §9.7.13.1), or barrier.sync barrier_id, barrier_threads when set: the
 * barrier of the threads that run the code being built. */
void cg_barrier(CgLlvm *l);
/* bar.warp.sync of all 32 lanes (PTX ISA 9.7.13.2): a warp-private copy's barrier. */
void cg_warp_barrier(CgLlvm *l);
/* The i32 value of a PTX special register (PTX ISA §10): "tid.x", "ctaid.y", "nctaid.z". */
LLVMValueRef cg_sreg(CgLlvm *l, const char *reg);
LLVMValueRef cg_i32(CgLlvm *l, int64_t v);
LLVMValueRef cg_i64(CgLlvm *l, int64_t v);
/* LLVMBuildAdd, Mul, UDiv and URem on integers, minus what needs no instruction: x + 0, x * 1,
 * x / 1 and x % 1 (0). The index code is full of them (a layout with one thread or one warp along
 * a dimension divides by 1, a first element adds 0); LLVM's builder folds only all-constant
 * operands, and the identities would otherwise be walked by every pass before the first
 * InstCombine removes them. */
LLVMValueRef cg_add(LLVMBuilderRef b, LLVMValueRef x, LLVMValueRef y, const char *name);
LLVMValueRef cg_mul(LLVMBuilderRef b, LLVMValueRef x, LLVMValueRef y, const char *name);
LLVMValueRef cg_udiv(LLVMBuilderRef b, LLVMValueRef x, LLVMValueRef y, const char *name);
LLVMValueRef cg_urem(LLVMBuilderRef b, LLVMValueRef x, LLVMValueRef y, const char *name);
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

/* ---- the lowering's state (tile IR -> LLVM IR), shared by the files below ------------------- */

/* The elements one thread holds of a block value of a given layout and shape. */
typedef struct Dist {
    int layout;
    Type type;
    int rank;
    int nelems;
    int32_t *off;                        /* [nelems][rank]: constant offset from base */
    int32_t *idx;                        /* [nelems][rank]: local index along each dim */
    int count[TRIC_MAX_RANK];            /* elements per thread along each dim */
    int run[TRIC_MAX_RANK];              /* contiguous elements per thread along each dim (spt) */
    int32_t *dim_off[TRIC_MAX_RANK];     /* offset of local index i along dim d */
    int vec_dim;                         /* the fastest-varying dim in registers, -1 if none */
    int lanes[TRIC_MAX_RANK];            /* distinct lanes along dim (a power of two) */
    int lane_stride[TRIC_MAX_RANK];      /* lane-id step between them */
    int warps[TRIC_MAX_RANK];            /* distinct warps along dim */
    LLVMValueRef warp_id[TRIC_MAX_RANK]; /* this thread's warp index along dim (unwrapped) */
    LLVMValueRef base[TRIC_MAX_RANK];    /* i32 */
    LLVMValueRef owner;                  /* i1: first holder of its elements; NULL = always */
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
    /* lane stride, tpw, warp stride, wpc, spt, lanes and warps (clamped): the whole formula */
    int key[7];
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
    LLVMValueRef tmaps[TRIC_MAX_TENSOR_MAPS]; /* the tensor-map parameters (byval, grid_constant) */
    /* a persistent function's parameters after the tensor maps (IrFunc.persistent): the tiles
     * the launch asked for along x (i32), the workspace (ptr addrspace(1)), then along y and z
     * (i32) when it takes those axes (docs/ptx-metadata.md "persistent") */
    LLVMValueRef tile_count[3], workspace;
    Dist **dists;
    int ndists, dists_cap;
    BaseCache *bases;
    int nbases, bases_cap;
    struct MmaBases *mma_bases;
    int nmma_bases, mma_bases_cap;
    const IrOp *term;   /* the yield/condition that ended the last region lowered */
    bool *lazy_operand; /* per value: a dot operand left unmaterialized (its dot's record) */
    /* a warp-specialized function (IrFunc.ws): the partition being built (ops of the other get
     * placeholders) and its first thread, the one that issues single-thread work (tma_load) */
    WarpPartition partition;
    int first_thread, partition_threads;
    /* ping-pong (IrFunc.ws.consumer_groups > 1): the consumer group being built, and the bytes its
     * scratch lies past an op's smem_offset (cg_scratch_offset) */
    int consumer_group, scratch_shift;
    bool needs_libdevice;
    const char *math_name;
    bool failed;
} Cg;

#define FAIL(c, ...)                                                                               \
    do {                                                                                           \
        TRIC_INTERNAL((c)->d, __VA_ARGS__);                                                        \
        (c)->failed = true;                                                                        \
        return false;                                                                              \
    } while (0)

static inline int imin(int a, int b) { return a < b ? a : b; }
static inline int imax(int a, int b) { return a > b ? a : b; }

/* Whether op belongs to the other side of the warp-specialized function being built: its
 * results get placeholders there (codegen/kernel.c). */
static inline bool cg_other_partition(const Cg *c, const IrOp *op)
{
    return c->partition != PARTITION_ALL && op->partition != PARTITION_ALL &&
           op->partition != c->partition;
}

/* Element i of an operand; a scalar operand is uniform and serves every element. */
static inline LLVMValueRef cg_at(const LVal *v, int i) { return v->n == 1 ? v->el[0] : v->el[i]; }

/* ---- kernel.c: the kernel function, the op dispatch, codegen_emit --------------------------- */

/* Builds the kernel function into l->mod. *needs_libdevice is set when a math op calls __nv_*;
 * *math_name names the first such op. */
bool cg_lower(CgLlvm *l, const IrFunc *f, const CodegenOptions *o, bool *needs_libdevice,
              const char **math_name, Diag *d);
/* Lowers the ops of r in order up to its yield/condition, which it leaves in c->term. */
bool cg_lower_region(Cg *c, const IrRegion *r);

/* ---- distribution.c: which elements a thread holds (docs/codegen.md "Values in registers") -- */

/* The distribution of a block value of this layout and type; NULL for a scalar (rank 0). */
Dist *cg_dist(Cg *c, int layout, Type t);
/* This thread's ids in an #mma layout with the warps of `mma`, computed once per [Wm, Wn]. */
MmaBases *cg_mma_bases(Cg *c, const Layout *mma);
/* Coordinate of element e along dim d: base[d] + off[e][d]. */
LLVMValueRef cg_coord(Cg *c, const Dist *ds, int e, int d);
/* Register index of the element at local indices (x0, x1) (rank 2), -1 where none. */
int *cg_local_index_map(Cg *c, const Dist *ds);

/* ---- values.c: types, the registers of values, inline asm ----------------------------------- */

LLVMTypeRef cg_elem_type(Cg *c, DType t); /* the register type of a dtype */
LLVMTypeRef cg_mem_type(Cg *c, DType t);  /* in memory: int1 as i8 */
LLVMTypeRef cg_value_type(Cg *c, Type t); /* pointers as ptr addrspace(1) */
LVal *cg_value(Cg *c, ValueId v);         /* the registers of v (an internal error if none yet) */
Dist *cg_dist_of(Cg *c, ValueId v);       /* the distribution of v's IR layout and type */
int cg_nelems_of(Cg *c, ValueId v, Dist **out); /* registers per thread of v (1 for a scalar) */
LLVMValueRef *cg_regs(Cg *c, int n);            /* a new array of n registers */
void cg_set_value(Cg *c, ValueId v, LLVMValueRef *el, int n, int layout);
/* Inline asm with any number of operands (cg_asm takes at most 16). */
LLVMValueRef cg_asm_n(Cg *c, LLVMTypeRef ret, const char *text, const char *constraints,
                      LLVMValueRef *args, int nargs, bool side_effects);
/* An asm with side effects and a memory clobber taking n f32 values tied in and out (no use of
 * them moves above it); the outputs. */
LLVMValueRef *cg_asm_tie_f32(Cg *c, const char *text, LLVMValueRef *vals, int n);
void cg_asm_void(Cg *c, const char *text); /* side effects, memory clobber */
/* A run of w consecutive elements of memory type mt (eb bytes each) at p, in one access: a scalar
 * load/store, or one w-wide vector access aligned to its size (ld/st .v2/.v4 after ptxas). */
void cg_load_run(Cg *c, LLVMTypeRef mt, LLVMValueRef p, int w, int eb, LLVMValueRef *out);
void cg_store_run(Cg *c, LLVMValueRef p, const LLVMValueRef *vals, int w, LLVMTypeRef mt, int eb);

/* ---- arith.c: elementwise ops with the interpreter's semantics ------------------------------ */

/* Binary arithmetic op (OP_ADD .. OP_UMULHI) on dtype t; NULL if not supported. */
LLVMValueRef cg_binary(Cg *c, OpCode op, DType t, LLVMValueRef x, LLVMValueRef y);
/* OP_CMP_* on operands of type t: an i1. */
LLVMValueRef cg_compare(Cg *c, OpCode op, Type t, LLVMValueRef x, LLVMValueRef y);
/* OP_CAST from one dtype to another. */
LLVMValueRef cg_cast(Cg *c, DType from, DType to, LLVMValueRef a);
/* Does a cast between these dtypes use the fp8 cvt forms of sm_89+ (arith.c)? */
bool cg_cast_needs_fp8(DType from, DType to);
/* bf16 to f32 (bf16 arithmetic is done in fp32); any other value unchanged. */
LLVMValueRef cg_widen(Cg *c, LLVMValueRef v);
/* The constant iv (integers) or fv (floats) of type t. */
LLVMValueRef cg_const(Cg *c, Type t, int64_t iv, double fv);
/* An op with one result computed element by element (arithmetic, compare, select, fma, casts,
 * math). */
bool cg_lower_elementwise(Cg *c, const IrOp *op);

/* ---- shared_memory.c: an op's shared-memory scratch ----------------------------------------- */

LLVMValueRef cg_smem(Cg *c);                             /* @global_smem */
LLVMValueRef cg_smem_addr(Cg *c, LLVMValueRef byte_off); /* @global_smem + byte_off (i32) */
/* Where scratch at byte off (an op's smem_offset or a scratch record's tile) lies for the warps
 * being built: off, or past it by their consumer group's share (IrFunc.ws.scratch_stride). */
static inline int cg_scratch_offset(const Cg *c, int64_t off)
{
    return (int)off + c->scratch_shift;
}
LLVMValueRef cg_to_mem(Cg *c, DType t, LLVMValueRef v);   /* int1 -> i8 */
LLVMValueRef cg_from_mem(Cg *c, DType t, LLVMValueRef v); /* i8 -> int1 */
/* Index (in elements) of element e in a scratch copy with per-dim element strides. */
LLVMValueRef cg_strided_index(Cg *c, const Dist *ds, int e, const int64_t *strides);
void cg_row_major_strides(const Type t, int64_t *strides);
/* Stores every element of src (distribution ds) at byte smem_off + eb * index. */
void cg_smem_store_all(Cg *c, const LVal *src, const Dist *ds, DType dt, int eb, int smem_off,
                       const int64_t *strides);
/* Loads every element of distribution ds from byte smem_off + eb * index. */
LLVMValueRef *cg_smem_load_all(Cg *c, const Dist *ds, DType dt, int eb, int smem_off,
                               const int64_t *strides);
/* An internal error unless the shared-memory pass gave op at least `need` bytes. */
/* A rank-2 value to / from its tile at byte off in NVMMA-swizzled #shared layout l (vector
 * accesses along the contiguous dim; ir/layout.c shared_swizzled_offset). */
void cg_smem_store_swizzled(Cg *c, const LVal *src, const Dist *ds, Type tile, const Layout *l,
                            int off);
LLVMValueRef *cg_smem_load_swizzled(Cg *c, const Dist *ds, Type tile, const Layout *l, int off);
bool cg_smem_check(Cg *c, const IrOp *op, int64_t need, const char *what);
bool cg_lower_subtile(Cg *c, const IrOp *op);

/* ---- relayout.c: values between layouts (relabelled registers, or through shared memory) ---- */

/* broadcast, expand_dims, trans, reshape; dr and n: the result's distribution and registers. */
bool cg_lower_relayout(Cg *c, const IrOp *op, Dist *dr, int n);
bool cg_lower_convert_layout(Cg *c, const IrOp *op);

/* ---- join_split.c: join and split, relabelled registers (the layout pass holds pairs in-thread) */

/* dr and n: the result's distribution and registers. */
bool cg_lower_join_split(Cg *c, const IrOp *op, Dist *dr, int n);
/* A reshape [..., N, 2] -> [..., 2N] that passes/layouts.c made a relabel
 * (layout_reshape_is_relabel): tl.interleave's. */
bool cg_lower_merge_pairs(Cg *c, const IrOp *op, Dist *dr, int n);

/* ---- global_memory.c: vectorized, predicated loads and stores ------------------------------- */

/* Elements per access: axis_vector_width, kept within the run the thread holds. */
int cg_access_width(Cg *c, const IrOp *mem_op, const Dist *ds);
/* `@pred ld.global` of w elements into out, `other` where pred is false. */
void cg_load_predicated(Cg *c, LLVMValueRef ptr, LLVMValueRef pred, LLVMValueRef *other, int w,
                        LLVMTypeRef mt, int eb, LLVMValueRef *out);
bool cg_lower_load(Cg *c, const IrOp *op);
bool cg_lower_store(Cg *c, const IrOp *op);
bool cg_lower_prefetch(Cg *c, const IrOp *op);
bool cg_lower_partial(Cg *c, const IrOp *op); /* partial_store, partial_add */

/* ---- atomic.c: atomic_rmw and atomic_cas (inline PTX atom / red) --------------------------- */

bool cg_lower_atomic(Cg *c, const IrOp *op);

/* ---- reduce.c: reduce_sum/max/min, argmax/argmin -------------------------------------------- */

bool cg_lower_reduce(Cg *c, const IrOp *op);
/* shfl.sync of any scalar (reduce.c): butterfly to lane ^ arg, or up/down by arg lanes. */
typedef enum CgShuffle { CG_SHFL_BFLY, CG_SHFL_UP, CG_SHFL_DOWN } CgShuffle;
LLVMValueRef cg_shuffle(Cg *c, LLVMValueRef v, CgShuffle mode, int arg);

/* ---- scan.c: scan (cumsum, cumprod, associative_scan) --------------------------------------- */

bool cg_lower_scan(Cg *c, const IrOp *op);

/* ---- dot.c: the dot's operands and the choice of the FMA, mma.sync or wgmma dot ------------- */

/* Before lowering: which dot operands stay unmaterialized (c->lazy_operand), read off the dots'
 * scratch records. */
void cg_plan_dot_operands(Cg *c);
bool cg_lower_dot(Cg *c, const IrOp *op);

/* ---- dot_fma.c: the dot on the FMA units (blocked accumulator) ------------------------------ */

bool cg_lower_dot_fma(Cg *c, const IrOp *op, LVal *A, LVal *B, LVal *C, Dist *da, Dist *db,
                      Dist *dr);

/* ---- dot_mma.c: the dot through mma.sync (#mma v2 accumulator) ------------------------------ */

/* ldmatrix.sync.aligned.m8n8.x{n}[.trans].shared.b16 at ptr: n .b32 registers into out. */
void cg_ldmatrix(Cg *c, LLVMValueRef ptr, int n, bool trans, LLVMValueRef *out);
bool cg_lower_dot_mma(Cg *c, const IrOp *op, LVal *A, LVal *B, LVal *C, Dist *da, Dist *db,
                      Dist *dr);

/* ---- dot_wgmma.c: the register-staged dot through wgmma (#mma v3 accumulator, sm_90a) ------- */

bool cg_lower_dot_wgmma(Cg *c, const IrOp *op, LVal *A, LVal *B, LVal *C, Dist *dr);
/* One wgmma dot's instructions, for the serial dot and the pipeline's wgmma op alike. */
/* A's #dot_op<idx=0> registers (dist da) packed in pairs as the m16n8k16 A fragment (PTX ISA
 * 9.7.14.5.8; wgmma's register A per warp is the same, 9.7.15.5.1.1): (a0,a1), (a2,a3),
 * (a4,a5), (a6,a7) of m16 tile rm and k16 step rk at apk[(rm * Kt + rk) * 4 + q] (dot_mma.c). */
bool cg_pack_a_fragments(Cg *c, const LVal *A, Dist *da, int Rm, int Kt, LLVMValueRef *apk);
/* Two 16-bit elements in one .b32, lo in the low half (dot_mma.c). */
LLVMValueRef cg_pack_pair(Cg *c, LLVMValueRef lo, LLVMValueRef hi);

typedef struct WgmmaIssue {
    DType dtype;           /* of A (and B): fp16, bf16, fp32 (the .tf32 form, k8) or fp8 (k32) */
    DType btype;           /* of B: dtype, or the other fp8 format (.e4m3.e5m2) */
    int M, N, K, W, NI;    /* the tile, the warps, the instruction's n */
    bool trans_a, trans_b; /* an MN-major operand (16-bit types only) */
    LLVMValueRef a_desc, b_desc; /* the operands' descriptors, start address included */
    const LLVMValueRef *a_regs;  /* A from registers instead of a_desc (16-bit types): four .b32
                                    per (m64 tile rm, k16 step rk) at (rm * Kt + rk) * 4 + q, as
                                    cg_pack_a_fragments packs them; NULL: A through a_desc */
    const int64_t *a_off;        /* [k step][m64 tile]: bytes from a_desc's start address */
    const int64_t *b_off;        /* [k step][n piece]: bytes from b_desc's start address */
    LLVMValueRef guard; /* an i32: where 0, the statements branch past their wgmma.mma_async
                           instructions and the accumulators pass through (the commit still
                           closes a group); NULL: always issued */
    /* fp8's max_num_imprecise_acc (the IR dot's attr[2]): the most K summed in the tensor cores'
     * precision before an fp32 add; 0: all of K */
    int imprecise_k;
} WgmmaIssue;
LLVMValueRef *cg_wgmma_issue(Cg *c, const WgmmaIssue *w, const LVal *C, Dist *dr);

/* ---- async_copy.c: what the wgmma dots share about swizzled tiles -------------------------- */

/* The byte offset inside a tile of element (x0, x1) under shared layout l (ir/layout.c
 * shared_swizzled_offset, in LLVM IR). */
LLVMValueRef cg_swizzled_offset(Cg *c, const Layout *l, Type tile, LLVMValueRef x0,
                                LLVMValueRef x1);
/* The shared-window address (i32) of dynamic shared memory byte off. */
LLVMValueRef cg_smem_window_addr(Cg *c, LLVMValueRef off);
/* A wgmma descriptor for the tile at shared-window address addr in layout sl; kd = the tile's K
 * dim (1 for A [M, K], 0 for B [K, N]). */
LLVMValueRef cg_wgmma_operand_desc(Cg *c, LLVMValueRef addr, const Layout *sl, Type tile, int kd);
/* The packed fragments of k16 step rk of a deferred local_load v (its dot's only operand use):
 * A's at pk[(rm * Kt + rk) * 4 + q], B's at pk[(rk * Rn + rn) * 2 + kh], as cg_lower_dot_mma
 * wants them. */
/* ldmatrix for k16 step rk of an mma.sync operand held in a swizzled tile (layout sl, type
 * tile) at byte view_off: the packed fragments into pk, indexed as cg_lower_dot_mma wants (A:
 * [(rm * Kt + rk) * 4 + q], B: [(rk * Rn + rn) * 2 + kh]); L is the operand's #dot_op layout. */
bool cg_ldmatrix_step(Cg *c, const Layout *sl, Type tile, const Layout *L, LLVMValueRef view_off,
                      int rk, LLVMValueRef *pk);
bool cg_local_load_step(Cg *c, ValueId v, int rk, LLVMValueRef *pk);

/* ---- control.c: for, if, while, assert ------------------------------------------------------ */

bool cg_lower_for(Cg *c, const IrOp *op);
bool cg_lower_if(Cg *c, const IrOp *op);
bool cg_lower_while(Cg *c, const IrOp *op);
bool cg_lower_assert(Cg *c, const IrOp *op);
bool cg_lower_grid_dep(Cg *c, const IrOp *op);

/* ---- async_copy.c: the asynchronous-copy ops (ir.h "the memory pipeline") ------------------- */

/* The ops with the PIPELINE trait: local_alloc, slot, async_copy, async_commit, async_wait,
 * barrier, local_load, wgmma, wgmma_wait, tma_load and the mbarrier ops (docs/codegen.md "The
 * memory pipeline"). */
bool cg_lower_async_copy_op(Cg *c, const IrOp *op);
/* The iter arg (0-based) of for_op whose block argument is the accumulator (c) of a wgmma op
 * directly in its body; -1 if none. cg_lower_for pins its initial registers (C7515). */
int cg_wgmma_acc_iter(const Cg *c, const IrOp *for_op);
/* At the end of for_op's body (its latch): a use ptxas keeps of every register A operand of a
 * wgmma in the body that is made before the loop, where the body branches (docs/codegen.md
 * "A loop-invariant register A"). */
bool cg_keep_wgmma_a_live(Cg *c, const IrOp *for_op);

#endif
