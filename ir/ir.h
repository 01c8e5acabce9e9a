/* ir.h: the tile IR. Values are blocks (or scalars) with a Type and, after the layout pass, a
 * distributed layout. Ops come from one X-macro table; control flow is structured (for, if,
 * while with regions), so passes and the interpreter never see a CFG.
 *
 * Sections (one per file in ir/):
 *   ir.c      builder: functions, values, ops, regions; cloning
 *   print.c   the text form (tric --emit=ir)
 *   parse.c   the text form read back: print -> parse -> print is the identity
 *   verify.c  structural and type checks with clear messages
 *   layout.c  the layout algebra: vector widths, register relabels, shared-memory offsets
 *   interp.c  the CPU interpreter: runs a kernel over a grid on host memory, whole blocks per op
 *
 * Nothing here knows about LLVM or CUDA. */
#ifndef TRIC_IR_H
#define TRIC_IR_H

#include "support/support.h"

/* A value is an index into IrFunc.values; 0 means "none" (an absent mask, say). */
typedef int32_t ValueId;

/* Op traits: the facts passes ask about an op, one bit each, given in the traits column of
 * TRIC_OPS (MLIR's op traits: set in the op's one definition, queried by the passes) and asked
 * with op_has. Who asks: dce keeps an unused op that has EFFECT or TERMINATOR (or holds one);
 * cse never merges EFFECT, TERMINATOR, READS_MEMORY, ALLOC or REGIONS ops; pipeline_loops never
 * runs EFFECT, READS_MEMORY or PIPELINE ops, loops or dots ahead in stage 0; codegen/kernel.c
 * lowers PIPELINE ops in async_copy.c and verify checks them in check_pipeline; layouts keeps
 * the layouts of IR that holds a SCHEDULED op; tma gives the copies up to each GROUP_END op one
 * mbarrier and drops that op; layouts and verify ask ELEMENTWISE. Which operands may be
 * shared-memory values is op_takes_smem's. */
typedef enum OpTrait {
    /* operands and result share one shape; result element i depends only on operand elements i */
    OPT_ELEMENTWISE = 1 << 0,
    /* writes memory, syncs or waits, asserts, or decides whether a loop ends (while, condition) */
    OPT_EFFECT = 1 << 1,
    /* reads memory other ops write: an unused one goes (dce), two never merge (it may change) */
    OPT_READS_MEMORY = 1 << 2,
    /* makes a new shared-memory buffer: an unused one goes (dce), two are never one buffer (cse) */
    OPT_ALLOC = 1 << 3,
    /* holds regions (for, if, while): dce and pipeline_loops look inside, cse never merges it */
    OPT_REGIONS = 1 << 4,
    /* ends a region, handing values out (yield, condition): dce keeps it; a yield has no effect */
    OPT_TERMINATOR = 1 << 5,
    /* a memory-pipeline op: shared memory, async copies, their waits, barriers, wgmma */
    OPT_PIPELINE = 1 << 6,
    /* made only by the passes that schedule the memory pipeline (pipeline_loops, tma), never by
     * build_ir: IR holding one was scheduled on its layouts. Not barrier (tl.debug_barrier) */
    OPT_SCHEDULED = 1 << 7,
    /* closes the open group of asynchronous copies: the copies since the last one complete
     * together (cp.async.commit_group) */
    OPT_GROUP_END = 1 << 8,
} OpTrait;

/* Ops. Columns: enum, text name, number of operands (-1: variable), number of results (-1:
 * variable), traits (OpTrait bits), meaning. Elementwise ops take operands of one shape (lowering
 * inserts splat/broadcast) and, for arithmetic, one dtype (lowering inserts casts); integer
 * semantics (signed or unsigned) come from the dtype. `attr` names the op's integer attributes
 * (IrOp.attr[]). */
/* clang-format off */
#define TRIC_OPS(X)                                                                                \
    /* --- values from nowhere --- */                                                              \
    X(OP_CONST, "const", 0, 1, 0, "r = constant (attr[0] for ints and bools, fattr for floats), splat to r's shape") \
    X(OP_UNDEF, "undef", 0, 1, 0, "r = an unspecified value of r's type: a loop-carried value before its first definition (passes/flatten_loops.c: what a flattened loop nest's prologue computes, carried from one tile's iterations to the next). Nothing reads it on a path that runs; the interpreter fills it with NaN or 0xdeadbeef so a read shows") \
    X(OP_PROGRAM_ID, "program_id", 0, 1, 0, "r:i32 = this program's index along attr[0]")          \
    X(OP_NUM_PROGRAMS, "num_programs", 0, 1, 0, "r:i32 = grid size along attr[0]")                 \
    X(OP_TILE_COUNT, "tile_count", 0, 1, 0, "r:i32 = the programs the launch asked for along attr[0]: in a persistent function (IrFunc.persistent) fewer run, num_programs(0) of them along axis 0, sharing these tiles (passes/stream_k.c, passes/persistent.c)") \
    X(OP_CONSUMER_TURN, "consumer_turn", 1, 1, 0, "r:i1 = whether this warp works on the tile of turn a (i32 scalar, 0 or 1) of a loop whose tiles two consumer groups take in turn (IrFunc.ws.consumer_groups): every warp but the consumers', and consumer group a; true in one program's view (the interpreter), where every warp is one") \
    X(OP_TURN_WAIT, "turn_wait", 0, 0, OPT_EFFECT, "a consumer group (IrFunc.ws.consumer_groups) waits until the group before it has passed it the turn (turn_pass): the groups' K loops run one after the other, in tile order; nothing in one program's view") \
    X(OP_TURN_PASS, "turn_pass", 0, 0, OPT_EFFECT, "a consumer group lets the next group take its turn (its turn_wait returns); nothing in one program's view") \
    X(OP_WORKSPACE, "workspace", 0, 1, 0, "r = a pointer to the launch's global workspace (persistent functions): attr[0] 0 its flags, two i32 per program launched (TRIC_WORKSPACE_FLAGS), zero when the launch starts and left zero by it; 1 its scratch, IrFunc.persistent.workspace_bytes per program launched, contents undefined") \
    X(OP_MAKE_RANGE, "make_range", 0, 1, 0, "r:<N x i32> = [attr[0], attr[1])")                    \
    /* --- shape --- */                                                                           \
    X(OP_SPLAT, "splat", 1, 1, 0, "r = scalar a copied to every element of r's shape")             \
    X(OP_BROADCAST, "broadcast", 1, 1, 0, "r = a with its size-1 dims stretched to r's shape")     \
    X(OP_EXPAND_DIMS, "expand_dims", 1, 1, 0, "r = a with a dim of size 1 inserted at attr[0]")    \
    X(OP_RESHAPE, "reshape", 1, 1, 0, "r = a's elements, row-major, in r's shape")                 \
    X(OP_TRANS, "trans", 1, 1, 0, "r = a permuted: r dim i is a dim attr[i]")                      \
    X(OP_JOIN, "join", 2, 1, 0, "r = a and b (one type) stacked along a new last dim of size 2: r[..., 0] = a, r[..., 1] = b") \
    X(OP_SPLIT, "split", 1, 1, 0, "r = a[..., attr[0]]: a's last dim (size 2) dropped, keeping half attr[0] (0 or 1)") \
    X(OP_SUBTILE, "subtile", 1, 1, 0, "r = the block of a at offsets attr (one per dim), in r's shape: r[i] = a[attr + i]") \
    X(OP_CONVERT_LAYOUT, "convert_layout", 1, 1, 0, "r = a, moved to r's layout (through shared memory)") \
    /* --- elementwise arithmetic: int or float by dtype --- */                                   \
    X(OP_ADD, "add", 2, 1, OPT_ELEMENTWISE, "r = a + b (ints wrap)")                               \
    X(OP_SUB, "sub", 2, 1, OPT_ELEMENTWISE, "r = a - b")                                           \
    X(OP_MUL, "mul", 2, 1, OPT_ELEMENTWISE, "r = a * b")                                           \
    X(OP_DIV, "div", 2, 1, OPT_ELEMENTWISE, "r = a / b: floats IEEE; ints truncate toward zero (C)") \
    X(OP_REM, "rem", 2, 1, OPT_ELEMENTWISE, "r = a % b: ints sign of a (C); floats fmod")          \
    X(OP_MIN, "min", 2, 1, OPT_ELEMENTWISE, "r = min(a, b)")                                       \
    X(OP_MAX, "max", 2, 1, OPT_ELEMENTWISE, "r = max(a, b)")                                       \
    X(OP_AND, "and", 2, 1, OPT_ELEMENTWISE, "r = a & b (ints, i1)")                                \
    X(OP_OR, "or", 2, 1, OPT_ELEMENTWISE, "r = a | b (ints, i1)")                                  \
    X(OP_XOR, "xor", 2, 1, OPT_ELEMENTWISE, "r = a ^ b (ints, i1)")                                \
    X(OP_SHL, "shl", 2, 1, OPT_ELEMENTWISE, "r = a << b")                                          \
    X(OP_SHR, "shr", 2, 1, OPT_ELEMENTWISE, "r = a >> b: arithmetic for signed dtypes, logical for unsigned") \
    X(OP_UMULHI, "umulhi", 2, 1, OPT_ELEMENTWISE, "r = high half of the unsigned product")         \
    X(OP_FMA, "fma", 3, 1, OPT_ELEMENTWISE, "r = a * b + c, one rounding")                         \
    X(OP_NEG, "neg", 1, 1, OPT_ELEMENTWISE, "r = -a")                                              \
    X(OP_NOT, "not", 1, 1, OPT_ELEMENTWISE, "r = ~a (ints, i1)")                                   \
    X(OP_EXP, "exp", 1, 1, OPT_ELEMENTWISE, "r = e^a (floats)")                                    \
    X(OP_EXP2, "exp2", 1, 1, OPT_ELEMENTWISE, "r = 2^a")                                           \
    X(OP_LOG, "log", 1, 1, OPT_ELEMENTWISE, "r = ln a")                                            \
    X(OP_LOG2, "log2", 1, 1, OPT_ELEMENTWISE, "r = log2 a")                                        \
    X(OP_SQRT, "sqrt", 1, 1, OPT_ELEMENTWISE, "r = sqrt a")                                        \
    X(OP_RSQRT, "rsqrt", 1, 1, OPT_ELEMENTWISE, "r = 1 / sqrt a")                                  \
    X(OP_ABS, "abs", 1, 1, OPT_ELEMENTWISE, "r = |a| (ints and floats)")                           \
    X(OP_SIN, "sin", 1, 1, OPT_ELEMENTWISE, "r = sin a")                                           \
    X(OP_COS, "cos", 1, 1, OPT_ELEMENTWISE, "r = cos a")                                           \
    X(OP_FLOOR, "floor", 1, 1, OPT_ELEMENTWISE, "r = floor a")                                     \
    X(OP_CEIL, "ceil", 1, 1, OPT_ELEMENTWISE, "r = ceil a")                                        \
    X(OP_LIBDEVICE, "libdevice", -1, 1, OPT_ELEMENTWISE, "r = function attr[0] of TRIC_LIBDEVICE_FNS of the 1 or 2 float operands (one type); r has their type, or i1 for a predicate") \
    /* --- compare and select: result i1 --- */                                                   \
    X(OP_CMP_EQ, "cmp_eq", 2, 1, OPT_ELEMENTWISE, "r:i1 = a == b")                                 \
    X(OP_CMP_NE, "cmp_ne", 2, 1, OPT_ELEMENTWISE, "r:i1 = a != b (true for NaN)")                  \
    X(OP_CMP_LT, "cmp_lt", 2, 1, OPT_ELEMENTWISE, "r:i1 = a < b (signedness by dtype)")            \
    X(OP_CMP_LE, "cmp_le", 2, 1, OPT_ELEMENTWISE, "r:i1 = a <= b")                                 \
    X(OP_CMP_GT, "cmp_gt", 2, 1, OPT_ELEMENTWISE, "r:i1 = a > b")                                  \
    X(OP_CMP_GE, "cmp_ge", 2, 1, OPT_ELEMENTWISE, "r:i1 = a >= b")                                 \
    X(OP_SELECT, "select", 3, 1, OPT_ELEMENTWISE, "r = a ? b : c, elementwise (a is i1)")          \
    /* --- conversion --- */                                                                      \
    X(OP_CAST, "cast", 1, 1, OPT_ELEMENTWISE, "r = a converted to r's dtype: float->float round to nearest even, float->int truncate, int->int wrap/extend by signedness of a") \
    X(OP_BITCAST, "bitcast", 1, 1, OPT_ELEMENTWISE, "r = a's bits as r's dtype (same width; a pointer <-> int64 is ptrtoint/inttoptr)") \
    /* --- memory --- */                                                                          \
    X(OP_ADDPTR, "addptr", 2, 1, OPT_ELEMENTWISE, "r = pointer a advanced by b elements of its pointee (b any int dtype)") \
    X(OP_LOAD, "load", -1, 1, OPT_READS_MEMORY, "r = *a where mask (operand 1, optional) else other (operand 2, optional; 0 when absent)") \
    X(OP_STORE, "store", -1, 0, OPT_EFFECT, "*a = b where mask (operand 2, optional); no result")  \
    X(OP_PREFETCH, "prefetch", 2, 0, OPT_EFFECT, "a hint: the global memory at the pointers a is brought into L2 (attr[0] = 1: into the program's SM's L1 too) where b (i1 scalar); nothing in a program's view changes (prefetch.global.L2 or .L1; passes/prefetch_tiles.c)") \
    X(OP_ATOMIC_RMW, "atomic_rmw", -1, 1, OPT_EFFECT | OPT_READS_MEMORY, "r = *a; *a = r KIND b, atomically, where mask (operand 2, optional; r = 0 elsewhere); attr[0] KIND (TRIC_ATOMIC_KINDS), attr[1] sem, attr[2] scope") \
    X(OP_FLAG_WAIT, "flag_wait", 2, 0, OPT_EFFECT | OPT_READS_MEMORY, "wait until the i32 at scalar pointer a equals b: one thread polls it with acquire ordering at gpu scope, then every thread of the program meets at a barrier. The interpreter, which runs a persistent launch's programs from the last to the first, requires it to hold already (passes/stream_k.c)") \
    X(OP_PARTIAL_STORE, "partial_store", 3, 0, OPT_EFFECT, "stores the fp32 block c as partial b (i32) of the scratch at scalar *fp32 a: its numel(c) floats from a + b numel(c), in an order that depends on c's layout alone (codegen: each thread's elements in turn, every access coalesced), so only a partial_add of the same layout reads it back; stream-K's partial tiles (passes/stream_k.c)") \
    X(OP_PARTIAL_ADD, "partial_add", 3, 1, OPT_READS_MEMORY, "r = c + partial b of the scratch at a, as partial_store of c's layout wrote it; r has c's type and layout") \
    X(OP_ATOMIC_CAS, "atomic_cas", 3, 1, OPT_EFFECT | OPT_READS_MEMORY, "r = *a; *a = c where r == b (bitwise), atomically; attr[1] sem, attr[2] scope") \
    /* --- matrix and reductions --- */                                                           \
    X(OP_DOT, "dot", 3, 1, 0, "r = a @ b + c; a <MxK>, b <KxN>, c and r <MxN>; one dtype, or two fp8 formats; attr[0]=1 lets fp32 use tf32; attr[2] > 0: max_num_imprecise_acc, from fp8 operands (K summed in runs of ir_promotion_run(attr[2]), each from zero and then added into c, as wgmma promotes; widen_fp8 keeps it, and mma.sync and the FMA dot, whose sums are fp32 throughout, need not follow the runs)") \
    X(OP_REDUCE_SUM, "reduce_sum", 1, 1, 0, "r = sum of a along attr[0] (that dim removed)")       \
    X(OP_REDUCE_MAX, "reduce_max", 1, 1, 0, "r = max of a along attr[0]")                          \
    X(OP_REDUCE_MIN, "reduce_min", 1, 1, 0, "r = min of a along attr[0]")                          \
    X(OP_ARGMAX, "argmax", 1, 1, 0, "r:i32 = index of the first max of a along attr[0]")           \
    X(OP_ARGMIN, "argmin", 1, 1, 0, "r:i32 = index of the first min of a along attr[0]")           \
    X(OP_SCAN, "scan", 1, 1, 0, "r = inclusive scan of a along attr[0] with the binary op attr[1] (add mul max min and or xor); attr[2]=1 from the end") \
    X(OP_MULTIPLE_OF, "multiple_of", 1, 1, 0, "r = a; hint: along dim i every element is divisible by attr[i]") \
    X(OP_MAX_CONTIGUOUS, "max_contiguous", 1, 1, 0, "r = a; hint: along dim i runs of attr[i] consecutive values") \
    X(OP_ASSERT, "assert", 1, 0, OPT_EFFECT, "stop with sattr when any element of a is false")     \
    X(OP_GDC_WAIT, "gdc_wait", 0, 0, OPT_EFFECT, "programmatic dependent launch: the thread waits until the grids this one depends on have completed and their memory is visible (griddepcontrol.wait, sm_90+; nothing where the grid was not launched so)") \
    X(OP_GDC_LAUNCH_DEPENDENTS, "gdc_launch_dependents", 0, 0, OPT_EFFECT, "programmatic dependent launch: a dependent grid may start once every program has run this or exited (griddepcontrol.launch_dependents, sm_90+; a hint)") \
    /* --- the memory pipeline (made by passes/pipeline_loops.c; docs/ir.md "Shared memory") --- */ \
    X(OP_LOCAL_ALLOC, "local_alloc", 0, 1, OPT_ALLOC | OPT_PIPELINE | OPT_SCHEDULED, "r:!smem<S x tile> = a shared-memory buffer of S slots, r's #shared layout per slot; contents undefined; placed at smem_offset") \
    X(OP_SLOT, "slot", 2, 1, OPT_PIPELINE | OPT_SCHEDULED, "r:!smem<tile> = view of slot b (i32 scalar, 0 <= b < S) of buffer a; no copy") \
    X(OP_ASYNC_COPY, "async_copy", -1, 0, OPT_EFFECT | OPT_READS_MEMORY | OPT_PIPELINE | OPT_SCHEDULED, "view a = *b where mask (operand 2, optional) else 0, asynchronously: complete once the group the next async_commit closes is waited for; no result") \
    X(OP_ASYNC_COMMIT, "async_commit", 0, 0, OPT_EFFECT | OPT_PIPELINE | OPT_SCHEDULED | OPT_GROUP_END, "close the open group of async_copy ops") \
    X(OP_ASYNC_WAIT, "async_wait", 0, 0, OPT_EFFECT | OPT_PIPELINE | OPT_SCHEDULED, "wait until at most attr[0] committed groups are incomplete") \
    X(OP_BARRIER, "barrier", 0, 0, OPT_EFFECT | OPT_PIPELINE, "every thread of the program arrives before any goes on; attr[0] = 1: shared writes are first made visible to wgmma (async proxy)") \
    X(OP_LOCAL_LOAD, "local_load", 1, 1, OPT_READS_MEMORY | OPT_PIPELINE | OPT_SCHEDULED, "r = the contents of view a, in r's distributed layout") \
    X(OP_WGMMA, "wgmma", -1, 1, OPT_READS_MEMORY | OPT_PIPELINE | OPT_SCHEDULED, "r = a @ b + c; a <MxK> view or fp16/bf16 #dot_op<idx=0> registers, b <KxN> view (<NxK> holding B^T when attr[1] trans_b, 16-bit types), c and r <MxN> #mma v3; asynchronous: r is read only by wgmma_wait or as c of a later wgmma; attr[0] as dot's. An optional fourth operand, `guard` (i1 scalar): where false nothing is read or computed, r = c, and the op still closes a group for wgmma_wait to count (passes/overlap_dots.c)") \
    X(OP_WGMMA_WAIT, "wgmma_wait", -1, -1, OPT_EFFECT | OPT_PIPELINE | OPT_SCHEDULED, "results = operands, once at most attr[0] wgmma ops are still running") \
    X(OP_MBAR_INIT, "mbar_init", 1, 0, OPT_EFFECT | OPT_PIPELINE | OPT_SCHEDULED, "each slot of buffer a (!smem<S x 1 x i64>) becomes an mbarrier counting one arrival per phase (attr[0] arrivals when above 1: mbar_arrive's warps), phase 0 open; every thread of the program sees them ready after it") \
    X(OP_MBAR_INVAL, "mbar_inval", 1, 0, OPT_EFFECT | OPT_PIPELINE | OPT_SCHEDULED, "once every thread of the program is here, the mbarriers of buffer a retire: its memory may be reused") \
    X(OP_MBAR_EXPECT, "mbar_expect", 2, 0, OPT_EFFECT | OPT_PIPELINE | OPT_SCHEDULED, "where b (i1 scalar): one thread arrives on the mbarrier of view a, announcing attr[0] bytes of tma_load copies that complete on it") \
    X(OP_MBAR_ARRIVE, "mbar_arrive", 1, 0, OPT_EFFECT | OPT_PIPELINE | OPT_SCHEDULED, "every warp of the op's partition arrives once on the mbarrier of view a (its mbar_init counts them)") \
    X(OP_MBAR_WAIT, "mbar_wait", 2, 0, OPT_EFFECT | OPT_READS_MEMORY | OPT_PIPELINE | OPT_SCHEDULED, "wait until the mbarrier of view a has completed its phase of parity b (i32 scalar, 0 or 1)") \
    X(OP_TMA_LOAD, "tma_load", -1, 0, OPT_EFFECT | OPT_READS_MEMORY | OPT_PIPELINE | OPT_SCHEDULED, "where b (i1 scalar): view a = the box of tensor map attr[0] (IrFunc.tmaps) at coordinates operands 3.. (i32 scalars, the map's dims innermost first), asynchronously, completing on the mbarrier of view c (operand 2)") \
    X(OP_TMA_STORE, "tma_store", -1, 0, OPT_EFFECT | OPT_PIPELINE | OPT_SCHEDULED, "where b (i1 scalar): the box of tensor map attr[0] at coordinates operands 2.. = tile a (2-d, the map's element type; its dim attr[1] runs along the map's dim 0), nothing written outside the map's dims; through the op's scratch (a #shared tile in the map's swizzle), read by the copy before the op ends") \
    /* --- structured control flow --- */                                                         \
    X(OP_FOR, "for", -1, -1, OPT_REGIONS, "for iv in range(lo, hi, step) with iter args: operands lo hi step inits...; region 0 args (iv, iters...); results = last yield; attr[0] = tl.range's num_stages (0: the function's); attr[1], attr[2] = 1 when it asks warp_specialize=True, flatten=True (passes/flatten_loops.c); attr[1] = 2: a grid's loop over tiles offered to warp_specialize's own choice (passes/persistent.c); attr[3] = 2: to be unrolled by two (passes/unroll_loops.c)") \
    X(OP_IF, "if", 1, -1, OPT_REGIONS, "regions 0 (then) and 1 (else) each end in yield; results = the taken yield") \
    X(OP_WHILE, "while", -1, -1, OPT_EFFECT | OPT_REGIONS, "operands inits; region 0 (args) ends in condition(c, vals); region 1 (args = vals) ends in yield; results = vals when c false") \
    X(OP_YIELD, "yield", -1, 0, OPT_TERMINATOR, "ends a for body, if branch or while body with its values") \
    X(OP_CONDITION, "condition", -1, 0, OPT_EFFECT | OPT_TERMINATOR, "ends a while's region 0: continue when operand 0, passing the rest")
/* clang-format on */

/* The libdevice functions OP_LIBDEVICE computes (Triton's tl.extra.cuda.libdevice), attr[0]
 * holding the enum. Columns: enum, name (as in libdevice.NAME), number of float arguments, result
 * (LDR_FLOAT: the arguments' float type; LDR_PRED: i1), the libdevice symbols for fp32 and for
 * fp64 (fp16 and bf16 are widened to fp32 and the result rounded back), meaning. The interpreter
 * computes each with C's libm in double and rounds once to the dtype. */
/* clang-format off */
#define TRIC_LIBDEVICE_FNS(X)                                                                      \
    X(LD_ERF, "erf", 1, LDR_FLOAT, "__nv_erff", "__nv_erf", "error function")                     \
    X(LD_ERFC, "erfc", 1, LDR_FLOAT, "__nv_erfcf", "__nv_erfc", "1 - erf(x)")                     \
    X(LD_TANH, "tanh", 1, LDR_FLOAT, "__nv_tanhf", "__nv_tanh", "hyperbolic tangent")             \
    X(LD_SINH, "sinh", 1, LDR_FLOAT, "__nv_sinhf", "__nv_sinh", "hyperbolic sine")                \
    X(LD_COSH, "cosh", 1, LDR_FLOAT, "__nv_coshf", "__nv_cosh", "hyperbolic cosine")              \
    X(LD_TAN, "tan", 1, LDR_FLOAT, "__nv_tanf", "__nv_tan", "tangent")                            \
    X(LD_ASIN, "asin", 1, LDR_FLOAT, "__nv_asinf", "__nv_asin", "arc sine")                       \
    X(LD_ACOS, "acos", 1, LDR_FLOAT, "__nv_acosf", "__nv_acos", "arc cosine")                     \
    X(LD_ATAN, "atan", 1, LDR_FLOAT, "__nv_atanf", "__nv_atan", "arc tangent")                    \
    X(LD_ASINH, "asinh", 1, LDR_FLOAT, "__nv_asinhf", "__nv_asinh", "inverse hyperbolic sine")    \
    X(LD_ACOSH, "acosh", 1, LDR_FLOAT, "__nv_acoshf", "__nv_acosh", "inverse hyperbolic cosine")  \
    X(LD_ATANH, "atanh", 1, LDR_FLOAT, "__nv_atanhf", "__nv_atanh", "inverse hyperbolic tangent") \
    X(LD_SIN, "sin", 1, LDR_FLOAT, "__nv_sinf", "__nv_sin", "sine")                               \
    X(LD_COS, "cos", 1, LDR_FLOAT, "__nv_cosf", "__nv_cos", "cosine")                             \
    X(LD_EXP, "exp", 1, LDR_FLOAT, "__nv_expf", "__nv_exp", "e^x")                                \
    X(LD_EXP2, "exp2", 1, LDR_FLOAT, "__nv_exp2f", "__nv_exp2", "2^x")                            \
    X(LD_EXP10, "exp10", 1, LDR_FLOAT, "__nv_exp10f", "__nv_exp10", "10^x")                       \
    X(LD_EXPM1, "expm1", 1, LDR_FLOAT, "__nv_expm1f", "__nv_expm1", "e^x - 1")                    \
    X(LD_LOG, "log", 1, LDR_FLOAT, "__nv_logf", "__nv_log", "natural log")                        \
    X(LD_LOG2, "log2", 1, LDR_FLOAT, "__nv_log2f", "__nv_log2", "log base 2")                     \
    X(LD_LOG10, "log10", 1, LDR_FLOAT, "__nv_log10f", "__nv_log10", "log base 10")                \
    X(LD_LOG1P, "log1p", 1, LDR_FLOAT, "__nv_log1pf", "__nv_log1p", "ln(1 + x)")                  \
    X(LD_CBRT, "cbrt", 1, LDR_FLOAT, "__nv_cbrtf", "__nv_cbrt", "cube root")                      \
    X(LD_SQRT, "sqrt", 1, LDR_FLOAT, "__nv_sqrtf", "__nv_sqrt", "square root")                    \
    X(LD_RSQRT, "rsqrt", 1, LDR_FLOAT, "__nv_rsqrtf", "__nv_rsqrt", "1 / sqrt(x)")                \
    X(LD_FABS, "fabs", 1, LDR_FLOAT, "__nv_fabsf", "__nv_fabs", "absolute value")                 \
    X(LD_FLOOR, "floor", 1, LDR_FLOAT, "__nv_floorf", "__nv_floor", "round down")                 \
    X(LD_CEIL, "ceil", 1, LDR_FLOAT, "__nv_ceilf", "__nv_ceil", "round up")                       \
    X(LD_TRUNC, "trunc", 1, LDR_FLOAT, "__nv_truncf", "__nv_trunc", "round toward zero")          \
    X(LD_ROUND, "round", 1, LDR_FLOAT, "__nv_roundf", "__nv_round", "round, halves away from zero") \
    X(LD_RINT, "rint", 1, LDR_FLOAT, "__nv_rintf", "__nv_rint", "round, halves to even")          \
    X(LD_NEARBYINT, "nearbyint", 1, LDR_FLOAT, "__nv_nearbyintf", "__nv_nearbyint", "round, halves to even") \
    X(LD_LGAMMA, "lgamma", 1, LDR_FLOAT, "__nv_lgammaf", "__nv_lgamma", "ln |gamma(x)|")          \
    X(LD_TGAMMA, "tgamma", 1, LDR_FLOAT, "__nv_tgammaf", "__nv_tgamma", "gamma(x)")               \
    X(LD_ISNAN, "isnan", 1, LDR_PRED, "__nv_isnanf", "__nv_isnand", "x is a NaN")                 \
    X(LD_ISINF, "isinf", 1, LDR_PRED, "__nv_isinff", "__nv_isinfd", "x is infinite")              \
    X(LD_SIGNBIT, "signbit", 1, LDR_PRED, "__nv_signbitf", "__nv_signbitd", "x's sign bit is set") \
    X(LD_POW, "pow", 2, LDR_FLOAT, "__nv_powf", "__nv_pow", "x^y")                                \
    X(LD_ATAN2, "atan2", 2, LDR_FLOAT, "__nv_atan2f", "__nv_atan2", "the angle of the point (y, x): C's atan2(x, y)") \
    X(LD_FMOD, "fmod", 2, LDR_FLOAT, "__nv_fmodf", "__nv_fmod", "x - y * trunc(x / y)")           \
    X(LD_REMAINDER, "remainder", 2, LDR_FLOAT, "__nv_remainderf", "__nv_remainder", "x - y * rint(x / y)") \
    X(LD_FMAX, "fmax", 2, LDR_FLOAT, "__nv_fmaxf", "__nv_fmax", "max; a NaN operand gives the other") \
    X(LD_FMIN, "fmin", 2, LDR_FLOAT, "__nv_fminf", "__nv_fmin", "min; a NaN operand gives the other") \
    X(LD_FDIM, "fdim", 2, LDR_FLOAT, "__nv_fdimf", "__nv_fdim", "max(x - y, 0)")                  \
    X(LD_HYPOT, "hypot", 2, LDR_FLOAT, "__nv_hypotf", "__nv_hypot", "sqrt(x^2 + y^2) without overflow") \
    X(LD_COPYSIGN, "copysign", 2, LDR_FLOAT, "__nv_copysignf", "__nv_copysign", "|x| with y's sign") \
    X(LD_NEXTAFTER, "nextafter", 2, LDR_FLOAT, "__nv_nextafterf", "__nv_nextafter", "the next float after x toward y") \
    X(LD_DIV_RN, "div_rn", 2, LDR_FLOAT, "__nv_fdiv_rn", "__nv_ddiv_rn", "x / y, rounded to nearest even")
/* clang-format on */

/* What an atomic_rmw does (attr[0]), Triton's tl.atomic_*; signedness and int or float from the
 * dtype. Columns: enum, name (tl.atomic_NAME and the IR text), PTX operation, meaning. Float max
 * and min are not here: lowering builds them from max on the signed and min on the unsigned bits,
 * as Triton does (semantic.atomic_max). */
/* clang-format off */
#define TRIC_ATOMIC_KINDS(X)                                                                       \
    X(ATOMIC_ADD, "add", "add", "old + val (ints wrap; floats: fp16, bf16, fp32, fp64)")            \
    X(ATOMIC_MAX, "max", "max", "max(old, val), ints (signed or unsigned by dtype)")               \
    X(ATOMIC_MIN, "min", "min", "min(old, val), ints")                                             \
    X(ATOMIC_AND, "and", "and", "old & val, ints")                                                 \
    X(ATOMIC_OR, "or", "or", "old | val, ints")                                                    \
    X(ATOMIC_XOR, "xor", "xor", "old ^ val, ints")                                                 \
    X(ATOMIC_XCHG, "xchg", "exch", "val (any 32- or 64-bit dtype)")
/* clang-format on */

typedef enum AtomicKind {
#define X(e, name, ptx, doc) e,
    TRIC_ATOMIC_KINDS(X)
#undef X
        ATOMIC_KIND_COUNT
} AtomicKind;

/* Memory orderings of an atomic (attr[1]), Triton's sem= strings and the PTX .sem qualifiers
 * (PTX ISA "Memory Consistency Model", 8.4 and atom). acq_rel is Triton's default. */
/* clang-format off */
#define TRIC_MEM_SEMS(X)                                                                           \
    X(MEM_SEM_ACQ_REL, "acq_rel", "acq_rel")                                                       \
    X(MEM_SEM_ACQUIRE, "acquire", "acquire")                                                       \
    X(MEM_SEM_RELEASE, "release", "release")                                                       \
    X(MEM_SEM_RELAXED, "relaxed", "relaxed")
/* clang-format on */

typedef enum MemSem {
#define X(e, name, ptx) e,
    TRIC_MEM_SEMS(X)
#undef X
        MEM_SEM_COUNT
} MemSem;

/* Scopes of an atomic (attr[2]), Triton's scope= strings and the PTX .scope qualifiers. gpu is
 * Triton's default. */
/* clang-format off */
#define TRIC_MEM_SCOPES(X)                                                                         \
    X(MEM_SCOPE_GPU, "gpu", "gpu")                                                                 \
    X(MEM_SCOPE_CTA, "cta", "cta")                                                                 \
    X(MEM_SCOPE_SYS, "sys", "sys")
/* clang-format on */

typedef enum MemScope {
#define X(e, name, ptx) e,
    TRIC_MEM_SCOPES(X)
#undef X
        MEM_SCOPE_COUNT
} MemScope;

/* Names of the three tables' rows (NULL outside them) and their lookups by name. */
const char *atomic_kind_name(int64_t kind);
const char *atomic_kind_ptx(int64_t kind);
const char *mem_sem_name(int64_t sem);
const char *mem_scope_name(int64_t scope);
bool atomic_kind_from_name(const char *name, AtomicKind *out);
bool mem_sem_from_name(const char *name, MemSem *out);
bool mem_scope_from_name(const char *name, MemScope *out);

typedef enum LibdeviceResult {
    LDR_FLOAT, /* the arguments' float type */
    LDR_PRED,  /* i1 (libdevice returns an i32 0 or 1; Triton converts it to int1) */
} LibdeviceResult;

typedef enum LibdeviceFn {
#define X(e, name, nargs, result, f32, f64, doc) e,
    TRIC_LIBDEVICE_FNS(X)
#undef X
        LD_COUNT
} LibdeviceFn;

typedef struct LibdeviceInfo {
    const char *name;
    int nargs;
    LibdeviceResult result;
    const char *symbol_f32, *symbol_f64;
} LibdeviceInfo;

/* The table's row for fn; NULL for a value outside the table. */
const LibdeviceInfo *libdevice_info(int64_t fn);
/* The function libdevice.NAME; false when there is none. */
bool libdevice_from_name(const char *name, LibdeviceFn *out);

typedef enum OpCode {
#define X(e, name, nops, nres, traits, doc) e,
    TRIC_OPS(X)
#undef X
        OP_COUNT
} OpCode;

const char *op_name(OpCode code);
int op_num_operands(OpCode code); /* -1 when variable */
int op_num_results(OpCode code);  /* -1 when variable (for, if, while, wgmma_wait) */
/* Whether the op has any of the traits (OpTrait bits, or'ed); false for an invalid code. */
bool op_has(OpCode code, unsigned traits);
/* Whether operand i of a `code` op may be a shared-memory value (a local_alloc buffer or a slot
 * view): the buffer of slot and the mbarrier ops, the view async_copy writes, local_load reads,
 * wgmma's A and B, tma_load's tile and mbarrier. The verifier and the interpreter both ask. */
bool op_takes_smem(OpCode code, int i);
bool op_from_name(const char *name, OpCode *out);

/* ---- layouts (filled by passes/layouts.c; printed and parsed with the IR) ------------------- */

/* A distributed layout says which thread of the CTA holds which element of a block value. The
 * forms follow Triton's (TritonGPUAttrDefs.td): blocked for memory ops, slice for values reduced
 * or expanded along a dim, mma and dot-operand for tensor-core dots, shared for tiles in shared
 * memory (swizzled). Layouts are interned per function: IrValue.layout is an index. */
typedef enum LayoutKind {
    LAYOUT_NONE,        /* not assigned (scalars keep it) */
    LAYOUT_BLOCKED,     /* blocked */
    LAYOUT_SLICE,       /* slice: parent's layout with dim removed */
    LAYOUT_MMA,         /* mma: version 2 (mma.sync) or 3 (wgmma) */
    LAYOUT_DOT_OPERAND, /* dot_operand: operand op_idx of a dot whose result has parent */
    LAYOUT_SHARED,      /* shared: a tile in shared memory, XOR-swizzled */
} LayoutKind;

typedef struct Layout {
    LayoutKind kind;
    int rank;
    union {
        struct {
            int size_per_thread[TRIC_MAX_RANK];
            int threads_per_warp[TRIC_MAX_RANK];
            int warps_per_cta[TRIC_MAX_RANK];
            int order[TRIC_MAX_RANK]; /* fastest-varying dim first */
        } blocked;
        struct {
            int dim;
            int parent; /* layout index */
        } slice;
        struct {
            int version; /* 2 = mma.sync m16n8k16, 3 = wgmma */
            int warps_per_cta[TRIC_MAX_RANK];
            int instr_shape[3];
        } mma;
        struct {
            int parent; /* the mma layout index */
            int op_idx; /* 0 = A, 1 = B */
            int k_width;
        } dot_operand;
        struct {
            /* NVMMA-style swizzle (docs/layouts.md "Shared layouts"): the tile's contiguous dim
             * order[0] is cut into atoms of `swizzle` bytes; atom a of the contiguous dim at
             * a * rows * swizzle; row r of an atom at r * swizzle; its 16-byte chunk j at chunk
             * j ^ ((r / per_phase) % max_phase). swizzle 32, 64 or 128 (the wgmma modes); then
             * vec = 16 / element bytes, per_phase = 128 / swizzle, max_phase = swizzle / 16. */
            int swizzle;
            int vec, per_phase, max_phase;
            int order[TRIC_MAX_RANK];
        } shared;
    };
} Layout;

/* ---- axis info (filled by passes/axis_info.c) ------------------------------------------------ */

/* Per dim of an integer or pointer value: the longest run of consecutive elements that increase by
 * one (contiguity), the largest power of two dividing every element (divisibility; for pointers
 * in bytes), and the longest run of equal elements (constancy). Triton's AxisInfo. */
typedef struct AxisInfo {
    int64_t contiguity[TRIC_MAX_RANK];
    int64_t divisibility[TRIC_MAX_RANK];
    int64_t constancy[TRIC_MAX_RANK];
} AxisInfo;

/* ---- values, ops, regions, functions ----------------------------------------------------------- */

typedef struct IrOp IrOp;

/* ---- scratch records: how an op uses the shared memory it was given ------------------------- */

/* One tile of an op's scratch: where it starts and where each element sits in it. Either a
 * rank-2 #shared layout (swizzled; ir/layout.c shared_swizzled_offset) or, when layout is 0,
 * element strides: element c at byte offset + element bytes * sum(c[d] * strides[d]). */
typedef struct IrScratchTile {
    int32_t offset; /* bytes from the start of shared memory; a one-tile record's is smem_offset */
    int32_t layout; /* a #shared layout (IrFunc.layouts), or 0: at strides */
    int32_t nstrides;
    int64_t strides[TRIC_MAX_RANK];
} IrScratchTile;

/* Where a dot's A or B comes from (IrScratch.from). */
typedef enum DotOperandFrom {
    DOT_FROM_REGISTERS, /* its own registers: the op that makes it is lowered as any other */
    DOT_FROM_SOURCE,    /* the registers its convert_layout converts: the convert is not
                           materialized, the dot stores those registers into its tile */
    DOT_FROM_SLOT,      /* (mma.sync) its local_load is not materialized: each k16 step's
                           ldmatrix reads the slot right before its mma instructions */
} DotOperandFrom;

/* How a reduction or a scan combines through its scratch (IrScratch.combine; docs/ir.md "Scratch
 * records"). The rules of layout.c choose (shared_reduce_scratch, shared_scan_scratch); codegen
 * runs what the record says. */
typedef enum ScratchCombine {
    SCRATCH_COMBINE_NONE,    /* not a reduction or a scan */
    SCRATCH_COMBINE_SERIAL,  /* reduction: every thread reads every warp's partial of its outputs */
    SCRATCH_COMBINE_SHUFFLE, /* reduction: the lanes along the axis share those reads, then
                                butterfly shuffles; scan: shuffles within warps, the warps' totals
                                through the scratch (Triton's) */
    SCRATCH_COMBINE_STEPS,   /* scan: Hillis-Steele steps through the whole block */
} ScratchCombine;

/* An op's scratch record (IrOp.scratch), written by passes/shared_alloc.c with the rules of
 * layout.c, printed after smem(...) (docs/ir.md "Scratch records"), checked by the verifier and
 * read by codegen, which decides nothing about scratch itself. ntiles: 0 no record; 1 a
 * convert_layout's, reshape's or trans's copy (layout or strides per dim of the operand), a
 * cross-warp reduction's partials (strides [per output element, per warp], row-major output
 * index), a scan's (shared_scan_scratch) or an atomic's old values (strides per result dim); 2 a
 * dot's A and B staging tiles (strides or layouts per dim of the operand). from[]: dots only. */
typedef struct IrScratch {
    int32_t ntiles;
    ScratchCombine combine; /* reductions and scans only */
    /* convert_layout only: every byte of the tile is written and read by one warp, here and in
     * every other op whose scratch overlaps it (shared_alloc), so the copy syncs the warp
     * (bar.warp.sync), not the block; printed ", warp_private" after the tile */
    bool warp_private;
    DotOperandFrom from[2];
    IrScratchTile tile[2];
} IrScratch;

/* Whether op has a record to print (a tile, or a dot operand not from its registers); two equal
 * records (every field that means something). */
bool ir_scratch_present(const IrScratch *s);
bool ir_scratch_equal(const IrScratch *a, const IrScratch *b);
/* "serial", "shuffle", "steps": how the text form spells a record's combine ("none" otherwise). */
const char *ir_scratch_combine_name(ScratchCombine c);

typedef struct IrValue {
    Type type;
    int32_t layout;   /* index into IrFunc.layouts; 0 = none yet */
    IrOp *def;        /* the op that makes it; NULL for params and region args */
    int32_t index;    /* result index in def, or the arg's index */
    const char *name; /* the .tri variable it came from (printing only), may be NULL */
    AxisInfo *axis;   /* NULL until axis info ran */
} IrValue;

typedef struct IrRegion {
    ValueId *args;
    int nargs, args_cap;
    IrOp **ops;
    int nops, ops_cap;
} IrRegion;

/* Which warps run an op of a warp-specialized function (IrFunc.ws; passes/warp_specialize.c):
 * every warp, the consumer warps (the function's num_warps, which compute), or the producer
 * warpgroup (which copies). The interpreter runs every op in program order regardless. */
typedef enum WarpPartition {
    PARTITION_ALL,
    PARTITION_CONSUMER,
    PARTITION_PRODUCER,
} WarpPartition;

/* "consumer", "producer" ("all" for PARTITION_ALL); false from the parse for another word. */
const char *ir_partition_name(int partition);
bool ir_partition_from_name(const char *name, WarpPartition *out);

struct IrOp {
    OpCode code;
    uint8_t partition; /* WarpPartition; PARTITION_ALL unless the function is warp-specialized */
    SrcLoc loc;
    ValueId *operands;
    int noperands;
    ValueId *results;
    int nresults;
    IrRegion *regions;
    int nregions;
    int64_t attr[TRIC_MAX_RANK]; /* per op, see the table */
    double fattr;                /* OP_CONST of a float dtype */
    const char *sattr;           /* OP_ASSERT's message */
    int32_t smem_offset;         /* passes/shared_alloc.c: scratch for convert_layout, reductions;
                                    the whole buffer of a local_alloc */
    int32_t smem_bytes;
    IrScratch scratch; /* passes/shared_alloc.c: how the op lays its scratch out */
};

typedef struct IrParam {
    ValueId value;
    const char *name;
    int divisibility; /* from a ":16" signature hint; 1 when unknown */
    bool equal_to_1;  /* ":1": the value is the constant 1 (folded by lowering) */
} IrParam;

/* ---- TMA tensor maps (passes/tma.c) ------------------------------------------------------------ */

#define TRIC_MAX_TENSOR_MAPS    8
#define TRIC_TMAP_MAX_RANK      5
#define TRIC_LAUNCH_MAX_PARAMS  4
#define TRIC_LAUNCH_PARAM_LIMIT 64 /* a parameter index in a launch value: below the runtime's 64 */

/* An integer known when the kernel is launched: constant times the product of run-time parameters
 * params[0..nparams) (indices into IrFunc.params, launch order; an i32 parameter sign-extended);
 * or, with unbounded, as large as the tensor-map hardware takes (a dim the kernel never checks). */
typedef struct LaunchValue {
    int64_t constant;
    int nparams;
    int params[TRIC_LAUNCH_MAX_PARAMS];
    bool unbounded;
} LaunchValue;

/* A TMA tensor map (PTX ISA 5.5, "Tensor"): element (x_0, .., x_{rank-1}) of the tensor is at
 * base + sum_d x_d * strides[d] elements, innermost dim first (strides[0] = 1), and exists where
 * 0 <= x_d < dims[d] (elsewhere a copy reads zero). A copy moves one box of box[d] elements along
 * each dim into shared memory with the swizzle given in bytes (0, 32, 64, 128:
 * CU_TENSOR_MAP_SWIZZLE_*). The runtime makes it at each launch (cuTensorMapEncodeTiled) from the
 * run-time arguments and passes it as a 128-byte parameter after the run-time parameters, map i
 * the i-th (docs/ptx-metadata.md, "tensor_map"). */
typedef struct TensorMap {
    int base_param; /* index into IrFunc.params: a pointer, 16-byte aligned */
    DType dtype;
    int rank;
    LaunchValue dims[TRIC_TMAP_MAX_RANK];
    LaunchValue strides[TRIC_TMAP_MAX_RANK];
    int box[TRIC_TMAP_MAX_RANK];
    int swizzle;
} TensorMap;

/* A local_alloc of mbarriers (passes/tma.c): !smem<S x 1 x i64>, one 8-byte barrier a slot. */
/* A for loop's attr[1]: what it says of warp specialization (passes/warp_specialize.c). */
enum {
    WS_NOT_ASKED = 0,
    WS_ASKED = 1,   /* tl.range(..., warp_specialize=True) */
    WS_OFFERED = 2, /* a grid's loop over tiles (passes/persistent.c): a producer where the pass
                       would choose one for the loop in it, else none, and q left a load */
};

static inline bool type_is_mbarriers(Type t)
{
    return t.is_smem && !t.is_ptr && t.rank == 2 && t.shape[1] == 1 && t.dtype == DT_I64;
}

/* "*" (unbounded), "64", "p3", "2*p3*p4": the form the IR text and the PTX metadata share: an
 * integer first if any, then pK factors, K a parameter's index below TRIC_LAUNCH_PARAM_LIMIT.
 * launch_value_parse reads one at *text and moves *text past it (a '*' not followed by another
 * factor is left for the caller); false when malformed, *why (when why is not NULL) saying how. */
void launch_value_print(StrBuf *out, const LaunchValue *v);
bool launch_value_parse(const char **text, LaunchValue *v, const char **why);
/* Equal values (the parameters as a multiset); equal maps (every field, values by that rule);
 * the parameters of two values the same multiset (their constants aside). */
bool launch_value_equal(const LaunchValue *v, const LaunchValue *w);
bool tensor_map_equal(const TensorMap *a, const TensorMap *b);
bool launch_value_same_params(const LaunchValue *v, const LaunchValue *w);

typedef struct IrFunc {
    const char *name;
    Arena *arena;
    IrValue *values; /* values[0] unused */
    int nvalues, values_cap;
    IrParam *params; /* the run-time parameters in launch order */
    int nparams, params_cap;
    IrRegion body;
    Layout *layouts; /* layouts[0] is LAYOUT_NONE */
    int nlayouts, layouts_cap;
    int num_warps;    /* set by the driver before passes; 4 by default */
    int num_stages;   /* for the pipeliner */
    int shared_bytes; /* passes/shared_alloc.c: dynamic shared memory a launch needs */
    /* passes/shared_alloc.c, when it fails because the pipeline's stage buffers make the kernel
     * exceed the shared-memory limit: the bytes needed (a driver may retry with fewer stages). */
    int64_t stages_overflow;
    /* passes/pipeline_loops.c: the loops it pipelined at num_stages (no num_stages= of their
     * own), so 0 means the function's stage count changes nothing (the driver's deep pipeline). */
    int default_stage_loops;
    TensorMap *tmaps; /* passes/tma.c: the tensor maps the kernel's tma_load ops read */
    int ntmaps;
    /* passes/warp_specialize.c: producer_warps > 0 when a producer warpgroup of that many warps
     * runs after the consumer warps (threads ir_func_threads), each side's ops marked with
     * IrOp.partition; setmaxnreg gives the producer producer_regs registers a thread and the
     * consumers consumer_regs, out of max_regs at launch (.maxnreg). consumer_groups > 1
     * (ping-pong): that many groups of num_warps consumer warps, group g the warps
     * [g num_warps, (g + 1) num_warps), take the tiles of a loop in turn (OP_CONSUMER_TURN), each
     * with its own scratch: an op's smem_offset + g scratch_stride (passes/shared_alloc.c) */
    struct {
        int producer_warps, producer_regs, consumer_regs, max_regs;
        int consumer_groups, scratch_stride;
    } ws;
    /* passes/stream_k.c: a persistent function runs as many programs as the GPU holds at once (the
     * runtime launches min(grid, SMs x blocks per SM) along axis 0, num_programs(0)) over the tiles the launch
     * asked for (tile_count), and gets a global workspace: TRIC_WORKSPACE_FLAGS i32 flags per
     * program, then from a 256-byte boundary workspace_bytes of scratch per program
     * (docs/passes.md "stream_k"). */
    struct {
        bool on;
        int64_t workspace_bytes;
        /* the launch's grid axes it takes (1 to 3; 0 reads as 1): the runtime launches
         * min(x y z, SMs x blocks per SM) programs along x and passes the grid's x, y, z
         * (tile_count 0, 1, 2; docs/ptx-metadata.md "persistent") */
        int axes;
        /* passes/persistent.c made it from a grid: its body is one loop over the grid's tiles
         * (the loop starts at program_id(0) and steps by num_programs(0)), the ops before it
         * pure */
        bool from_grid;
    } persistent;
} IrFunc;

/* The consumer warps of a function: num_warps, times its consumer groups when it plays
 * ping-pong (IrFunc.ws). */
static inline int ir_func_consumer_warps(const IrFunc *f)
{
    int warps = f->num_warps > 0 ? f->num_warps : 4;
    return f->ws.consumer_groups > 1 ? warps * f->ws.consumer_groups : warps;
}

/* The grid axes a persistent function takes (IrFunc.persistent.axes, 0 reading as 1). */
static inline int ir_func_grid_axes(const IrFunc *f)
{
    return f->persistent.axes > 1 ? f->persistent.axes : 1;
}

/* The threads a launch of f runs: its consumer warps and its producer's. */
static inline int ir_func_threads(const IrFunc *f)
{
    return 32 * (ir_func_consumer_warps(f) + f->ws.producer_warps);
}

/* The i32 flags a persistent launch's workspace holds per program launched (OP_WORKSPACE 0); its
 * scratch (OP_WORKSPACE 1) starts after them at a TRIC_WORKSPACE_ALIGN boundary. The runtime,
 * the interpreter and codegen (which computes it from %nctaid) lay it out alike. */
#define TRIC_WORKSPACE_FLAGS 2
#define TRIC_WORKSPACE_ALIGN 256
static inline uint64_t workspace_scratch_offset(uint64_t programs)
{
    return (programs * 4 * TRIC_WORKSPACE_FLAGS + TRIC_WORKSPACE_ALIGN - 1) / TRIC_WORKSPACE_ALIGN *
           TRIC_WORKSPACE_ALIGN;
}

/* Builder (ir.c). */
IrFunc *ir_func_new(Arena *arena, const char *name);
ValueId ir_value_new(IrFunc *f, Type type, const char *name);
ValueId ir_param_add(IrFunc *f, Type type, const char *name, int divisibility);
/* The K a promoted dot sums from zero before adding into its fp32 sum (max_num_imprecise_acc =
 * n > 0, a dot's or wgmma's attr[2]): wgmma's fp8 instructions take 32 of K each and the sum is
 * promoted once n of K have been summed (Triton's count), so runs are whole instructions. */
static inline int64_t ir_promotion_run(int64_t n) { return (n + 31) / 32 * 32; }
static inline IrValue *ir_value(const IrFunc *f, ValueId v) { return &f->values[v]; }
static inline Type ir_type(const IrFunc *f, ValueId v) { return f->values[v].type; }
ValueId ir_region_add_arg(IrFunc *f, IrRegion *r, Type type, const char *name);
int ir_layout_intern(IrFunc *f, const Layout *l); /* the index of an equal layout, added if new */
bool layout_equal(const Layout *a, const Layout *b);

/* Where new ops go: the end of a region, or before position pos in it. */
typedef struct IrBuilder {
    IrFunc *func;
    IrRegion *region;
    int pos; /* -1: append */
} IrBuilder;

/* Makes an op with the given operands and result types, inserts it at the builder's point, and
 * sets each result's def. nregions empty regions are attached. */
IrOp *ir_build(IrBuilder *b, OpCode code, SrcLoc loc, const ValueId *operands, int noperands,
               const Type *result_types, int nresults, int nregions);
/* Shorthands for one-result ops. */
ValueId ir_build_unary(IrBuilder *b, OpCode code, SrcLoc loc, Type result, ValueId a);
ValueId ir_build_binary(IrBuilder *b, OpCode code, SrcLoc loc, Type result, ValueId a, ValueId c);
/* attr[0] = value (fattr stays 0) / fattr = value (attr[0] stays 0): the dtype says which. */
ValueId ir_build_const_int(IrBuilder *b, SrcLoc loc, Type type, int64_t value);
ValueId ir_build_const_float(IrBuilder *b, SrcLoc loc, Type type, double value);
void ir_region_insert(IrFunc *f, IrRegion *r, int pos, IrOp *op); /* pos -1: append */
void ir_region_remove(IrRegion *r, int pos);
/* The position of op among r's own ops, or -1. */
int ir_region_index(const IrRegion *r, const IrOp *op);
/* Replaces every use of from by to in the whole function. */
void ir_replace_all_uses(IrFunc *f, ValueId from, ValueId to);
/* Does op read v, as an operand or inside its regions? Does any op of r? */
bool ir_op_uses(const IrOp *op, ValueId v);
bool ir_region_uses(const IrRegion *r, ValueId v);
/* How many operands of r's ops (nested regions included) are v. */
int ir_region_use_count(const IrRegion *r, ValueId v);
/* The first op of r in program order (an op before the ops of its regions) with one of the n codes,
 * or NULL. */
const IrOp *ir_region_find(const IrRegion *r, const OpCode *codes, int n);
/* The first op of r in that order for which is(op, ctx) holds, or NULL. */
const IrOp *ir_region_find_if(const IrRegion *r, bool (*is)(const IrOp *op, const void *ctx),
                              const void *ctx);
/* How ir_clone_op_mapped maps values: operand v reads map[v] where v < nmap and that is nonzero,
 * else v itself; the copy of each result and region arg r of a copied op (r < nmap) is recorded
 * in map[r], so the ops copied after it read the copies. operands, when set, sees each copy's
 * mapped operands before the copy is built at b (it may build ops there and change them: the
 * pipeliner guards the divisors of ops it runs ahead). */
typedef struct IrCloneMap {
    ValueId *map;
    int nmap;
    void (*operands)(void *ctx, IrBuilder *b, const IrOp *o, ValueId *ops);
    void *ctx;
} IrCloneMap;
/* A map over every value f has now, all unmapped (no operand hook). */
IrCloneMap ir_clone_map_new(IrFunc *f);
/* v read through map (nmap entries) as ir_clone_op_mapped reads it: map[v] where v < nmap and
 * that is nonzero, else v. */
ValueId ir_mapped(const ValueId *map, int nmap, ValueId v);
/* Every operand of op, and of the ops in its regions, read through map in place (ir_mapped). */
void ir_rename_operands(IrOp *op, const ValueId *map, int nmap);
/* A copy of op o (its regions too, names, layouts and axis info kept: a copy computes what its
 * original computes, in another iteration or place) inserted at b, in o's function. */
IrOp *ir_clone_op_mapped(IrBuilder *b, const IrOp *o, const IrCloneMap *m);
/* A copy of a function (same arena or another), values renumbered densely. */
IrFunc *ir_func_clone(const IrFunc *f, Arena *arena);

/* print.c: the text form. Values print as %0, %1, ... renumbered in order of definition; types as
 * in type_print; layouts as #blocked<...> attributes; locations as loc("file":line:col). */
void ir_print(StrBuf *out, const IrFunc *f);
/* The printed number of every value (params, then each op's results before its regions' args and
 * ops, in program order), indexed by ValueId; -1 for values nothing defines any more. The
 * verifier names values by these numbers too, so its messages match --emit=ir. */
int32_t *ir_value_numbering(const IrFunc *f, Arena *arena);
void ir_print_layout(StrBuf *out, const IrFunc *f, int layout);
/* One op on one line (regions elided as "{...}"), numbered as ir_print does; for messages. */
void ir_print_op_head(StrBuf *out, const IrFunc *f, const int32_t *numbering, const IrOp *op);
/* parse.c */
IrFunc *ir_parse(const SrcFile *file, Arena *arena, Diag *diag);
/* verify.c: returns false and reports every problem found (operand counts and types, shapes,
 * uses dominated by defs, terminators, layouts consistent with shapes). `when` names the pass
 * after which it ran, for the message. */
bool ir_verify(const IrFunc *f, const char *when, Diag *diag);

/* ---- layout algebra (layout.c): the rules that read layouts ---------------------------------- */

/* Layouts are IR attributes, so the rules computed from them belong to the IR too: the vector
 * width of a memory access, which conversions and reshapes only relabel registers, and where each
 * element of a tile or of an op's scratch sits in shared memory. The passes decide with these
 * functions (passes/layouts.c, pipeline_loops.c, swizzle.c, shared_alloc.c) and write what they
 * chose on the ops (layouts; scratch records, IrOp.scratch); codegen reads those and uses only
 * the address arithmetic here (shared_swizzled_offset and the like), never the deciding rules
 * (shared_scratch_swizzle, shared_scratch_strides, shared_dot_staging*, shared_reduce_scratch,
 * shared_scan_scratch, shared_wgmma_staging). */

/* The widest vector, in elements (a power of two >= 1), that the load, store or async_copy mem_op may use for
 * one thread's run along its layout's fastest dim: min(size_per_thread, pointer contiguity,
 * pointer byte divisibility / element bytes, 16 bytes / element bytes, mask constancy). 1 when
 * axis info or the blocked layout is missing. docs/layouts.md; codegen must use exactly this. */
int axis_vector_width(const IrFunc *f, const IrOp *mem_op);
/* ... without the mask's constancy: what the pointers alone allow. */
int axis_vector_width_unmasked(const IrFunc *f, const IrOp *mem_op);
/* Whether blocked layout l of the given rank holds its last dim (of size 2 in a join's result or a
 * split's operand) inside each thread: join and split are then register relabels, as in Triton
 * (its join/split lowering needs the size-2 dim in sizePerThread). */
bool layout_holds_pair(const IrFunc *f, int l, int rank);
/* Whether reshape op takes [..., N, 2] to [..., 2N] (tl.interleave's reshape). */
bool reshape_merges_pair(const IrFunc *f, const IrOp *op);
/* The pair layout src ([..., N, 2], layout_holds_pair) with its pair folded into dim N: twice the
 * sizePerThread there, the rest as in src. A thread then holds element 2n + k of the result
 * where it held (n, k) of the operand, and dim N's base doubles (codegen/distribution.c's
 * formula), so the reshape moves no data. */
void merged_pair_layout(const Layout *src, Layout *out);
/* Whether reshape op merges the last two dims of a [..., N, 2] operand whose pairs each thread
 * holds into [..., 2N] (tl.interleave's reshape) with the result in the operand's layout, the pair
 * folded into dim N's sizePerThread: a register relabel in codegen, with no scratch. */
bool layout_reshape_is_relabel(const IrFunc *f, const IrOp *op);
/* Whether a thread holding the elements of a tile in layout l holds, in the same layout over the
 * block's shape, exactly the block's elements of the tile at the offsets (a subtile kept in the
 * tile's registers): #mma (the fragment pattern repeats every 16 W0 rows and 8 W1 columns) and
 * #blocked (every spt tpw wpc) layouts, offsets and the block's extents multiples of that period
 * (or the whole extent). layout_subtile_is_relabel: the op's result has its operand's layout and
 * this holds. */
bool layout_subtile_keeps(const IrFunc *f, int l, Type tile, Type block, const int64_t *offsets);
bool layout_subtile_is_relabel(const IrFunc *f, const IrOp *op);
/* Does a convert_layout from layout `from` to `to` only relabel the registers each thread holds?
 * True between #mma layouts with the same warps (and slices of them along the same dim): the
 * fragment pattern does not depend on the instruction shape, so two dots of different n (an
 * attention's BLOCK_N and HEAD_DIM) give layouts that place elements alike. True from an #mma
 * accumulator (v2, or v3 with warps [W, 1]) to the #dot_op<idx=0, k_width=2>
 * of an #mma parent with the same warps, both with one warp along N: the accumulator's element
 * (m, n) and the A fragment's element (m, k = n) sit in the same register slot pattern (rows
 * rm*16*W + wm*16 + groupID + 8h, columns tig*2 + j + 8*piece; PTX ISA 9.7.14.5.8 and
 * 9.7.15.5.1.1), so a chained dot (attention's P @ V) takes the first dot's result as its A
 * without shared memory. Such a convert needs no scratch (shared_alloc) and codegen relabels. */
bool layout_convert_is_relabel(const IrFunc *f, int from, int to);
/* Whether a value of type t can be laid out in layout l as codegen places elements: where l is
 * an #mma or a slice of one, each of the value's dims, with a 1 for every sliced dim (the root's
 * extents), is 1 (every thread holds element 0 there) or whole tiles of the warps (16 W0 rows,
 * 8 W1 columns); any other layout holds any shape. A [16, 32] tile cannot take the #mma of 2 x 2
 * warps over a [64, 32] accumulator (the layout pass must not give it one). */
bool layout_holds(const IrFunc *f, int l, Type t);
/* Bytes one element takes in scratch: dtype_bytes, 8 for pointers. */
int shared_elem_bytes(Type t);
/* Bytes one slot of a local_alloc buffer (or one slot view) takes: the tile's bytes rounded up to
 * 1024, so every slot starts on the swizzle pattern's period. t is the buffer's type (dim 0 =
 * slots) when buffer, else a view's. */
int64_t shared_slot_bytes(Type t, bool buffer);
/* The byte offset, inside one slot, of tile element (c[0], c[1]) under shared layout l (rank 2;
 * docs/layouts.md "Shared layouts"). The reference formula codegen builds in LLVM IR. */
int64_t shared_swizzled_offset(const Layout *l, Type tile, const int64_t *c);
/* The bytes of the unit the swizzle permutes: vec elements (16 bytes in every tile layout, the
 * chunk wgmma and TMA read; 32 in an fp32 accumulator's scratch, shared_accumulator_swizzle). */
int64_t shared_swizzle_unit_bytes(const Layout *l, Type tile);
/* -- the rules that choose scratch and staging (begin) --
 * The passes choose with these and write the choice on the op (its scratch record, IrOp.scratch;
 * the #shared layouts of local_alloc buffers); codegen reads what was written and calls none of
 * them (tests/layering.sh, ctest layering/codegen_no_passes, reads this list between the begin
 * and end lines). */
/* Fills l with the swizzled layout for a rank-2 tile of dtype dt whose contiguous dim is
 * contig: false when that dim's bytes are not a multiple of 32 (no wgmma swizzle applies). */
bool shared_layout_for(Layout *l, Type tile, int contig);
/* The dims of a convert_layout's or reshape's scratch copy, fastest first: the operand's blocked
 * order, else the result's, else row-major. */
void shared_scratch_order(const IrFunc *f, const IrOp *op, int rank, int order[TRIC_MAX_RANK]);
/* The element strides (in elements) of a convert_layout's or reshape's scratch copy of its operand:
 * element c is at byte smem_offset + elem_bytes * sum(c[d] * strides[d]). docs/layouts.md. */
void shared_scratch_strides(const IrFunc *f, const IrOp *op, int64_t strides[TRIC_MAX_RANK]);
/* The scratch of a convert_layout in a swizzled #shared layout (the swizzle pass's choice for
 * tiles that pass through shared memory inside one op): a rank-2 value of a numeric dtype whose
 * scratch order's fastest dim has a multiple of 32 bytes, converted to a layout that is not a
 * dot operand's (those are staged for ldmatrix at padded strides, shared_dot_staging). Fills l
 * (contiguous along the scratch order's fastest dim); false: the scratch keeps padded rows
 * (shared_scratch_strides). The scratch then takes exactly the tile's bytes. */
bool shared_scratch_swizzle(const IrFunc *f, const IrOp *op, Layout *l);
/* Turns shared_layout_for's layout of a scratch that an #mma accumulator of 4-byte elements is
 * written into (columns contiguous, 128-byte swizzle) into one of 32-byte units XORed with
 * row % 4, free of bank conflicts for the accumulator's 8-byte stores; leaves others alone. */
void shared_accumulator_swizzle(Layout *l, Type tile);
/* An mma dot's operand staging (docs/layouts.md): bytes of A's and of B's tiles (0 when no
 * convert_layout feeds one); A at the dot's smem_offset, B right after A. The dot's smem_bytes is
 * their sum (0 when either is 0). The tiles are swizzled when shared_dot_staging_swizzle says so,
 * else at the strides of the convert_layout feeding each (padded rows). */
void shared_dot_staging(const IrFunc *f, const IrOp *dot, int64_t *a_bytes, int64_t *b_bytes);
/* The swizzle pass's layouts for an mma dot's staged A and B (16-bit, fed by convert_layouts whose
 * scratch order runs along dim 1, i.e. A's k and B's n): NVMMA-swizzled, contiguous along dim 1,
 * so ldmatrix's eight row addresses hit eight bank groups. false: both keep padded rows. */
bool shared_dot_staging_swizzle(const IrFunc *f, const IrOp *dot, Layout *la, Layout *lb);
/* How many warps hold distinct data along dim of a value of type t in layout index layout
 * (blocked: min(wpc[dim], ceil(shape / (spt*tpw))); slice: its parent's along the mapped dim;
 * mma: its wpc). Used by shared_alloc and shared_reduce_scratch for cross-warp reductions. */
int layout_warps_along(const IrFunc *f, int layout, Type t, int dim);
/* The one warp holding element idx of a value of type t in layout (-1: several, or unknown);
 * shared_alloc's warp-private scratch (IrScratch.warp_private). */
int layout_element_warp(const IrFunc *f, int layout, Type t, const int32_t *idx);
/* Whether every element of a value of type t is held by one warp, the same in layouts from and to:
 * a convert_layout between them moves data only inside warps. */
bool layout_copy_stays_in_warps(const IrFunc *f, int from, int to, Type t);
/* The cross-warp scratch of a reduction (reduce_*, argmax, argmin) whose axis spans W > 1 warps:
 * the slot of output element `row` (row-major over the result) written by warp `w` along the axis
 * is row * *row_stride + w * *warp_stride (elements of the value's scratch dtype; argmax/argmin put
 * their i32 indices at the same slots of a second array right after the values). The swizzle
 * pass's choice: warp-major, outputs contiguous, so the lanes of one warp, which hold distinct
 * consecutive outputs, write and read consecutive words (no bank conflict; rows at stride W would
 * give a W-way conflict). Returns how the partials are combined: SCRATCH_COMBINE_SHUFFLE where
 * several lanes hold the axis, which then share the reads and shuffle (codegen/reduce.c), else
 * SCRATCH_COMBINE_SERIAL (every thread reads all W). */
ScratchCombine shared_reduce_scratch(const IrFunc *f, const IrOp *op, int64_t *row_stride,
                                     int64_t *warp_stride);
/* The scratch of a scan (codegen/scan.c), strides for tile->rank dims: when the operand's blocked
 * layout covers the axis exactly once (each thread one run along it, every lane and warp distinct
 * runs), codegen scans by shuffles and the scratch holds the W warps' totals per row (the
 * result's row-major index with the axis removed): *tile = [rows, W], strides [W, 1], returns
 * SCRATCH_COMBINE_SHUFFLE. Else codegen runs Hillis-Steele steps over the whole block: *tile = the
 * result's type, row-major strides, returns SCRATCH_COMBINE_STEPS. */
ScratchCombine shared_scan_scratch(const IrFunc *f, const IrOp *op, int64_t strides[TRIC_MAX_RANK],
                                   Type *tile);
/* The staging area of a wgmma (#mma v3) dot the pipeline did not take: A [M, K] and B [K, N] in
 * the swizzled layouts *la and *lb, each contiguous along the dim the registers feeding it run
 * along (M or K for A, K or N for B; K for tf32, which wgmma takes K-major only), A at the area's
 * start, B at *b_offset (1024-aligned). Returns the area's bytes (its start must be
 * 1024-aligned), 0 when a tile has no swizzled form. */
int64_t shared_wgmma_staging(const IrFunc *f, const IrOp *dot, Layout *la, Layout *lb,
                             int64_t *b_offset);
/* -- the rules that choose scratch and staging (end) -- */

/* ---- interp.c: the CPU interpreter --------------------------------------------------------- */

/* One run-time argument, by the parameter's type: ints and bools in i, floats in f, pointers in
 * ptr (a host address). */
typedef union InterpArg {
    int64_t i;
    double f;
    uint64_t ptr;
} InterpArg;

/* A buffer the kernel may touch: [addr, addr + bytes). Masked-in accesses outside every one of
 * them stop the launch. */
typedef struct InterpBuffer {
    uint64_t addr;
    size_t bytes;
} InterpBuffer;

typedef struct InterpLaunch {
    int grid[3];
    const InterpArg *args; /* one per IrFunc param */
    int nargs;
    const InterpBuffer *buffers;
    int nbuffers;
    /* A persistent function (IrFunc.persistent): the programs that run over the grid's tiles
     * (grid[0] grid[1] grid[2] of them, x fastest; an axis the function does not take must be 1),
     * min(tiles, this); 0 for min(tiles, INTERP_PERSISTENT_PROGRAMS). */
    int persistent_programs;
} InterpLaunch;

/* Few enough that a small grid of tiles still makes several rounds. */
#define INTERP_PERSISTENT_PROGRAMS 3

/* Runs every program of the grid, one at a time (a persistent function: its programs, from the
 * last to the first, over the grid's tiles, with a zeroed workspace whose flags it must leave
 * zero). On an out-of-bounds access, a failed assert or a bad argument: returns false, writes
 * one message to error ("matmul.tri:42: out-of-bounds load in program (3, 0, 0): element 17
 * (index [0, 17]) reads address 0x... (2 bytes), outside every buffer passed to the launch
 * (...)"), and restores every byte the launch had stored, so the caller's buffers are as before
 * the launch. The IR's SrcLoc.file must still be alive (its name
 * is in the message). Semantics and costs: docs/interpreter.md. */
bool interp_run(const IrFunc *f, const InterpLaunch *launch, StrBuf *error);

#endif
