/* tric.h: the tric runtime, the one public header of libtric.
 *
 * A C program compiles .tri kernels in process (or loads .ptx files written by the `tric` CLI) and
 * launches them on a device: "cpu" (the tile-IR interpreter; every access checked against the live
 * buffers) or "cuda:N" (an NVIDIA GPU through the CUDA Driver API, libcuda loaded at run time).
 *
 *     tric_device dev;  tric_module mod;  tric_kernel k;  tric_buffer x;
 *     if (tric_device_open("auto", &dev) != TRIC_SUCCESS) { puts(tric_last_error()); return 1; }
 *     tric_compile_options opt = tric_compile_options_default();
 *     opt.signature = "*fp32:16,*fp32:16,*fp32:16,i32";
 *     const char *defs[] = {"BLOCK_SIZE=1024"};  opt.constexprs = defs;  opt.nconstexprs = 1;
 *     tric_module_compile_file(dev, "vector_add.tri", &opt, &mod);
 *     tric_module_get_kernel(mod, "vector_add_kernel", &k);
 *     tric_arg args[] = {TRIC_ARG_BUF(x), TRIC_ARG_BUF(y), TRIC_ARG_BUF(out), TRIC_ARG_I32(n)};
 *     tric_launch(k, (tric_dim3){(n + 1023) / 1024, 1, 1}, args, 4, NULL);
 *
 * Errors are values: every call returns a tric_status, and on failure tric_last_error() holds the
 * whole message for this thread (compile diagnostics verbatim, with their caret lines). The library
 * never exits or aborts on a user error, and never prints (warnings: tric_set_warning_handler).
 * docs/runtime.md is the reference. */
#ifndef TRIC_TRIC_H
#define TRIC_TRIC_H

#include <stddef.h>
#include <stdint.h>

#include "tric/version.h" /* TRIC_VERSION, TRIC_VERSION_MAJOR/MINOR/PATCH */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status and errors ------------------------------------------------------------------------ */

typedef enum tric_status {
    TRIC_SUCCESS = 0,
    TRIC_ERROR_INVALID_ARGUMENT, /* a NULL handle, a bad option, an argument list that does not fit */
    TRIC_ERROR_NO_DEVICE,        /* the device cannot be opened (no driver, no such GPU) */
    TRIC_ERROR_COMPILE,          /* the .tri source has errors; the message holds the diagnostics */
    TRIC_ERROR_NOT_FOUND,        /* no such kernel or file */
    TRIC_ERROR_OUT_OF_MEMORY,    /* host or device allocation failed */
    TRIC_ERROR_LAUNCH,           /* a launch failed (out-of-bounds access on cpu, fault on cuda) */
    TRIC_ERROR_DRIVER,           /* any other CUDA driver error; the message names it */
    TRIC_ERROR_IO,               /* a file could not be read */
    TRIC_ERROR_UNSUPPORTED,      /* the operation does not apply to this device */
} tric_status;

/* "TRIC_ERROR_LAUNCH" */
const char *tric_status_name(tric_status status);
/* The message of the most recent failing call on the calling thread ("" when none failed yet). The
 * pointer stays valid until the next failing call on this thread. */
const char *tric_last_error(void);

/* Warnings: what the library worked around but the caller should still hear of -- today a disk
 * cache directory or entry it refused to trust (docs/runtime.md "The JIT cache"; tric then does
 * without it: compiles, tunes), and a launch's specialized variant that did not compile (its
 * launches run the generic kernel); the call succeeds. Each distinct warning is given once per
 * process. The library never prints one: it calls the handler, if one is set, on the thread that
 * met the problem (message valid during the call), and keeps it as that thread's last warning. */
typedef void (*tric_warning_fn)(const char *message, void *user);
/* Sets the process's warning handler (NULL: none, the default); user is passed back to it. */
void tric_set_warning_handler(tric_warning_fn fn, void *user);
/* The most recent warning given on the calling thread ("" when none yet). The pointer stays valid
 * until the next warning on this thread. */
const char *tric_last_warning(void);

/* ---- devices ---------------------------------------------------------------------------------- */

typedef struct tric_device_s *tric_device;

typedef enum tric_device_kind {
    TRIC_DEVICE_CPU,  /* the interpreter: synchronous, every memory access checked */
    TRIC_DEVICE_CUDA, /* an NVIDIA GPU */
} tric_device_kind;

/* spec: "cpu", "cuda", "cuda:N", or "auto" (cuda:0 when a driver and a GPU are present, else cpu).
 * NULL means "auto". The environment variable TRIC_DEVICE, when set, overrides "auto" only. */
tric_status tric_device_open(const char *spec, tric_device *out);
/* Frees the device and everything still made on it: modules (their kernels), buffers and streams
 * not yet destroyed are freed here, in that order, so a close never leaks nor leaves the driver
 * holding memory; their handles are dangling afterwards. A stream made by tric_stream_wrap is
 * forgotten, never destroyed (its CUstream is the caller's). Pending work is waited for first. */
void tric_device_close(tric_device dev);
tric_device_kind tric_device_get_kind(tric_device dev);
/* "cpu (tric interpreter)", "cuda:0 (NVIDIA H100 80GB HBM3, sm_90)". */
const char *tric_device_name(tric_device dev);
/* The compile target: "sm_90" for a GPU of compute capability 9.0, "cpu" for the interpreter. */
const char *tric_device_arch(tric_device dev);
/* Waits for all work on the device; reports a pending asynchronous error (a fault in a kernel). */
tric_status tric_device_synchronize(tric_device dev);
/* cuda: the device's CUcontext (the device's primary context, retained by tric until
 * tric_device_close), for a caller who makes its own streams, events or graphs with the driver
 * API in the same context: cuCtxSetCurrent((CUcontext)tric_device_native_context(dev)). The
 * device's own stream (the one NULL means) as a CUstream. NULL on cpu. Not owned by the caller. */
void *tric_device_native_context(tric_device dev);
void *tric_device_native_stream(tric_device dev);

/* ---- streams (NULL = the device's default stream) --------------------------------------------- */

typedef struct tric_stream_s *tric_stream;

tric_status tric_stream_create(tric_device dev, tric_stream *out);
/* A tric_stream for a CUstream the caller made (cuStreamCreate in the device's context, see
 * tric_device_native_context; passed as void * so that this header needs no cuda.h). The stream
 * stays the caller's: tric_stream_destroy (and tric_device_close) free only tric's wrapper, and the
 * CUstream must outlive it. A stream of another context is refused (cuStreamGetCtx). cpu: refused
 * (TRIC_ERROR_UNSUPPORTED). The stream may be under graph capture: see "graph capture" in
 * docs/runtime.md (what tric does on a capturing stream). */
tric_status tric_stream_wrap(tric_device dev, void *cu_stream, tric_stream *out);
/* The stream's CUstream (made by tric or wrapped); NULL on cpu and for a NULL stream. */
void *tric_stream_native(tric_stream stream);
void tric_stream_destroy(tric_stream stream);
tric_status tric_stream_synchronize(tric_stream stream);

/* ---- modules and kernels ---------------------------------------------------------------------- */

typedef struct tric_module_s *tric_module;
typedef struct tric_kernel_s *tric_kernel;

typedef struct tric_compile_options {
    const char *kernel;            /* the @jit function to compile; NULL: the file's only one */
    const char *signature;         /* Triton AOT form "*fp32:16,*fp32:16,i32"; NULL: annotations */
    const char *const *constexprs; /* "BLOCK_SIZE=1024", "T_C=tl.float16" */
    int nconstexprs;
    int num_warps;     /* 0 = 4 */
    int num_stages;    /* 0 = 3 */
    const char *arch;  /* NULL = the device's ("sm_90"); "sm_90a" for wgmma/TMA */
    int no_cache;      /* nonzero: neither read nor write the disk cache */
    int no_specialize; /* nonzero: launches never specialize (see tric_launch) */
    /* Autotuning (see "autotuning" below). A kernel under @triton.autotune(...) is tuned over the
     * decorator's configs unless every name its configs set has a value in constexprs; these
     * fields tune a kernel without a decorator, or replace the decorator's lists. */
    const struct tric_tune_config *tune_configs; /* NULL: the decorator's configs */
    int ntune_configs;
    const char *const *tune_key; /* parameter names; NULL: the decorator's key= */
    int ntune_key;
    const char *const *tune_restore; /* pointer parameters saved before tuning, restored after */
    int ntune_restore;               /* (Triton's restore_value); NULL: the decorator's */
    const char *const *tune_reset;   /* pointer parameters zeroed before every trial launch */
    int ntune_reset;                 /* (Triton's reset_to_zero); NULL: the decorator's */
    int no_fp_fusion; /* nonzero: a float mul feeding an add or sub is never fused into one fma
                         (Triton's enable_fp_fusion=False); 0: it may be, as Triton's default */
    /* Imports (docs/language.md "Imports"): directories where absolute imports (`import
     * pkg.mod`, `from pkg.mod import f`) are looked for, in order, after the importing file's
     * directory (for tric_module_compile, the directory of filename). NULL: none. */
    const char *const *include_dirs;
    int ninclude_dirs;
    /* Code switches, for comparing and debugging; each is part of the JIT cache key. Left at
     * 0/NULL, a compile takes the environment's, read once per process: TRIC_NO_TMA (set, not
     * "0"), TRIC_LLVM_PIPELINE, TRIC_LLVM_ARGS. */
    int no_tma;              /* nonzero: on sm_90a, copies stay cp.async (no TMA) */
    const char *llvm_passes; /* an `opt -passes=` pipeline run instead of -O3's ("": -O3's) */
    const char *llvm_args;   /* LLVM options, space-separated ("-nvptx-no-f16-math"). LLVM keeps
                                them per process: the first compile that generates code fixes
                                them, and a later one with others fails (TRIC_ERROR_COMPILE) */
    /* The environment the source's host Python sees where its autotune configs are built
     * (os.environ.get(NAME, default), os.getenv(NAME, default)): "NAME=VALUE" entries, part of
     * the JIT cache key. The library passes no variable of its own process: a name not here is
     * unset, so the default decides. */
    const char *const *host_env;
    int nhost_env;
    /* TRIC_STREAM_K_ON: a matmul-shaped kernel (one loop accumulating dots into zeros, its
     * stores after it) runs persistent, as many programs as the GPU holds at once, the last round
     * of tiles split along K between programs (docs/passes.md "stream_k"). TRIC_STREAM_K_AUTO:
     * an autotuned kernel's configs are each compiled both ways and each tuning keeps the faster
     * (a kernel the pass does not take, or one not autotuned, compiles as written). Part of the
     * JIT cache key. */
    int stream_k;
    /* nonzero: programs keep their launch order. By default, where a kernel's loops run more
     * iterations as program_id(axis) grows (causal attention), the programs launch longest
     * first: program_id(axis) reads num_programs(axis) - 1 - program_id(axis) (docs/passes.md
     * "heavy_first"). Part of the JIT cache key. */
    int no_heavy_first;
    /* nonzero: where a persistent kernel's loop over tiles is warp-specialized with one consumer
     * warpgroup (num_warps 4), a second one takes every other tile, its wgmma ops running while
     * the first stores its tile (docs/passes.md "warp_specialize", ping-pong). Part of the JIT
     * cache key. */
    int pingpong;
    /* nonzero: on sm_90a, a 2-d tile store whose addresses a tensor map covers (an epilogue's
     * C tile) goes through shared memory and one TMA copy (cp.async.bulk.tensor) instead of
     * each thread's stores (docs/passes.md "tma", stores). Part of the JIT cache key. */
    int tma_store;
    /* TRIC_DEEP_PIPELINE_ON: each loop pipelined at the kernel's num_stages gets more stages, up
     * to twice as many, while the kernel fits in shared memory: for launches that run one program
     * an SM, where a second program's shared memory would sit idle (docs/runtime.md
     * "Autotuning"). TRIC_DEEP_PIPELINE_AUTO: an autotuned kernel's configs are each compiled as
     * written and deep, and each tuning keeps the faster (a config whose stages cannot grow has
     * no twin; a kernel not autotuned compiles as written). Part of the JIT cache key. */
    int deep_pipeline;
    /* nonzero: only a loop written tl.range(..., warp_specialize=True) gets a producer warpgroup.
     * By default, on sm_90a, the pass also gives one to the first loop running two wgmma ops an
     * iteration (attention) in a kernel with two consumer warpgroups that holds one program an
     * SM (docs/passes.md "warp_specialize", chosen). Part of the JIT cache key. */
    int no_auto_warp_specialize;
    /* nonzero: a grid kernel runs persistent: the launch runs as many programs as the GPU holds
     * at once, and they walk the grid's tiles (x fastest), so where the kernel's loop gets a
     * producer warpgroup it copies the next tile's blocks while the consumers store this one
     * (docs/passes.md "persistent"). A kernel the pass does not take compiles as written. Part of
     * the JIT cache key. */
    int persistent;
    /* nonzero: only `persistent` makes a grid persistent. By default, on sm_90a, attention's grid
     * (a loop of two dots, 8 warps or more) is made persistent where its loop over tiles gets a
     * producer warpgroup, where it measured a win (docs/passes.md "persistent"). Part of the JIT
     * cache key. */
    int no_auto_persistent;
    /* nonzero: on sm_90a, where a pipelined loop runs two wgmma ops an iteration and carries the
     * second's result (attention's p @ v), the second runs one iteration late, issued right
     * after the next iteration's first, so the softmax between them may run under it
     * (docs/passes.md "overlap_dots"; measured slower so far, so off by default). Part of the JIT
     * cache key. */
    int overlap_dots;
    /* nonzero: loops as written. By default two loops whose ranges continue one another and
     * whose bodies differ only in arithmetic (tutorial 06's causal attention: the blocks left of
     * the diagonal, then the diagonal's with a mask) are pipelined as one loop, the differing
     * ops under an `if`, so the second's copies ride the first's pipeline; once scheduled, a
     * loop branching on its counter is split there into two loops without the branch
     * (docs/passes.md "fuse_loops", "split_loops"). Part of the JIT cache key. */
    int no_fuse_loops;
} tric_compile_options;

/* tric_compile_options.stream_k */
#define TRIC_STREAM_K_OFF       0
#define TRIC_STREAM_K_ON        1
#define TRIC_STREAM_K_AUTO      2
/* tric_compile_options.deep_pipeline */
#define TRIC_DEEP_PIPELINE_OFF  0
#define TRIC_DEEP_PIPELINE_ON   1
#define TRIC_DEEP_PIPELINE_AUTO 2
/* ABI: fields are only ever added at the end of tric_compile_options, and a zero/NULL field means
 * the default, so a program that fills tric_compile_options_default() and sets the fields it
 * knows keeps working with a later library built with more. */

/* One autotuning config, as triton.Config({...}, num_warps=, num_stages=) writes it. */
typedef struct tric_tune_config {
    const char *const *constexprs; /* "BLOCK_SIZE_M=128", ... */
    int nconstexprs;
    int num_warps;  /* 0: the compile options' */
    int num_stages; /* 0: the compile options' */
} tric_tune_config;

/* All fields zero/NULL: the defaults above. */
tric_compile_options tric_compile_options_default(void);

/* Compiles one kernel of a .tri source text for the device. filename is used in diagnostics. For
 * cuda the PTX is cached on disk (see docs/runtime.md: TRIC_CACHE_DIR). */
tric_status tric_module_compile(tric_device dev, const char *source, const char *filename,
                                const tric_compile_options *options, tric_module *out);
/* The same, reading the source from a file. */
tric_status tric_module_compile_file(tric_device dev, const char *path,
                                     const tric_compile_options *options, tric_module *out);
/* Loads PTX text written by `tric --emit=ptx` (it carries the launch metadata block). cuda only. */
tric_status tric_module_load_ptx(tric_device dev, const char *ptx, tric_module *out);
/* Loads a compiled module from a file: a .ptx (cuda), or a .tir file of tile IR as written by
 * `tric --emit=ir` or tric_module_code on cpu (either device: the interpreter runs it on cpu; on
 * cuda it is compiled from the IR on). */
tric_status tric_module_load_file(tric_device dev, const char *path, tric_module *out);
/* The module's code: PTX for cuda, the IR text for cpu. Owned by the module. */
const char *tric_module_code(tric_module mod);
void tric_module_destroy(tric_module mod);

/* A kernel of the module by name; name NULL takes the module's only (or first) kernel. A .tri
 * source compiles to one kernel (tric_compile_options.kernel picks it), a .ptx written by `tric`
 * may hold several (an autotuned kernel's configs, loaded as one tuned kernel under its own name,
 * each config also under its PTX name). Owned by the module. */
tric_status tric_module_get_kernel(tric_module mod, const char *name, tric_kernel *out);
const char *tric_kernel_name(tric_kernel k);
int tric_kernel_num_params(tric_kernel k);
/* The launch parameter's type as in a signature ("*fp32", "i32"); NULL when out of range. */
const char *tric_kernel_param_type(tric_kernel k, int index);
int tric_kernel_threads(tric_kernel k);      /* threads per program (32 * num_warps) */
int tric_kernel_shared_bytes(tric_kernel k); /* dynamic shared memory per program */

/* What the driver says about a kernel's compiled code (cuFuncGetAttribute, and the occupancy
 * calculator for its launch configuration). */
typedef struct tric_kernel_attrs {
    int registers;             /* per thread (CU_FUNC_ATTRIBUTE_NUM_REGS) */
    int spill_bytes;           /* local memory per thread: spills and local arrays (LOCAL_SIZE) */
    int static_shared_bytes;   /* shared memory declared in the PTX (SHARED_SIZE_BYTES) */
    int dynamic_shared_bytes;  /* what each launch asks for (tric_kernel_shared_bytes) */
    int max_threads_per_block; /* the most this function can be launched with */
    int threads;               /* what tric launches it with (tric_kernel_threads) */
    int active_blocks_per_sm;  /* programs resident per SM at once
                                * (cuOccupancyMaxActiveBlocksPerMultiprocessor) */
    int multiprocessors;       /* SMs of the device */
} tric_kernel_attrs;

/* Fills out for k (loading its code now if it was loaded lazily). The generic kernel: a launch
 * that runs a specialized variant (see tric_launch) runs other code -- query the variant through
 * a kernel loaded from its PTX. An autotuned kernel: INVALID_ARGUMENT (query a config's kernel,
 * tric_kernel_config). cpu: TRIC_ERROR_UNSUPPORTED (the interpreter has no registers), out zeroed
 * except threads and dynamic_shared_bytes. */
tric_status tric_kernel_attributes(tric_kernel k, tric_kernel_attrs *out);

/* Launch specialization (see tric_launch): the number of variants this kernel has compiled so
 * far, and variant index's signature as specialized ("*fp32:16,*fp32:16,i32:16") and its code
 * (PTX or IR text; owned by the kernel). A variant whose compile failed -- its launches ran the
 * generic kernel -- returns TRIC_ERROR_COMPILE with the reason, its signature still set. */
int tric_kernel_num_variants(tric_kernel k);
tric_status tric_kernel_variant(tric_kernel k, int index, const char **signature,
                                const char **code);

/* ---- buffers ---------------------------------------------------------------------------------- */

typedef struct tric_buffer_s *tric_buffer;

/* Device memory (host memory for cpu). Contents are undefined until written. */
tric_status tric_buffer_alloc(tric_device dev, size_t bytes, tric_buffer *out);
void tric_buffer_free(tric_buffer buf);
size_t tric_buffer_size(tric_buffer buf);
/* The device address (a CUdeviceptr for cuda, a host address for cpu). */
uint64_t tric_buffer_address(tric_buffer buf);

/* Copies and memset are ordered on the stream (NULL = default) and complete before they return. A
 * range outside the buffer is an error. */
tric_status tric_copy_to_device(tric_buffer dst, size_t dst_offset, const void *src, size_t bytes,
                                tric_stream stream);
tric_status tric_copy_to_host(void *dst, tric_buffer src, size_t src_offset, size_t bytes,
                              tric_stream stream);
tric_status tric_copy_device(tric_buffer dst, size_t dst_offset, tric_buffer src, size_t src_offset,
                             size_t bytes, tric_stream stream);
/* Sets bytes to (unsigned char)value. */
tric_status tric_memset(tric_buffer dst, size_t offset, int value, size_t bytes,
                        tric_stream stream);

/* Asynchronous copies: enqueued on the stream (NULL = the device's), they return at once on cuda;
 * the host memory must stay valid and untouched until the stream is synchronized. For a truly
 * asynchronous copy (and for one recorded into a CUDA graph) the host memory must be page-locked
 * (cuMemHostAlloc / cuMemHostRegister); with pageable memory the driver stages the copy and may
 * return only when it is done. cpu: the copy is done before the call returns. */
tric_status tric_copy_to_device_async(tric_buffer dst, size_t dst_offset, const void *src,
                                      size_t bytes, tric_stream stream);
tric_status tric_copy_to_host_async(void *dst, tric_buffer src, size_t src_offset, size_t bytes,
                                    tric_stream stream);

/* ---- launch ----------------------------------------------------------------------------------- */

/* A launch argument: its kind must match the kernel's parameter (pointer params take a buffer;
 * i1..i32/u8..u32 take I32, i64/u64 take I64, fp16/bf16/fp32 take F32, fp64 takes F64). */
typedef enum tric_arg_kind {
    TRIC_ARG_BUFFER,  /* buffer + byte offset, for a pointer parameter */
    TRIC_ARG_ADDRESS, /* a raw device address, for a pointer parameter (not checked on cpu) */
    TRIC_ARG_I32,
    TRIC_ARG_I64,
    TRIC_ARG_F32,
    TRIC_ARG_F64,
} tric_arg_kind;

typedef struct tric_arg {
    tric_arg_kind kind;
    union {
        struct {
            tric_buffer buffer;
            size_t offset;
        } buf;
        uint64_t address;
        int32_t i32;
        int64_t i64;
        float f32;
        double f64;
    } v;
} tric_arg;

#define TRIC_ARG_BUF(b)         ((tric_arg){.kind = TRIC_ARG_BUFFER, .v.buf = {(b), 0}})
#define TRIC_ARG_BUF_AT(b, off) ((tric_arg){.kind = TRIC_ARG_BUFFER, .v.buf = {(b), (off)}})
#define TRIC_ARG_ADDR(a)        ((tric_arg){.kind = TRIC_ARG_ADDRESS, .v.address = (a)})
#define TRIC_ARG_I32(x)         ((tric_arg){.kind = TRIC_ARG_I32, .v.i32 = (x)})
#define TRIC_ARG_I64(x)         ((tric_arg){.kind = TRIC_ARG_I64, .v.i64 = (x)})
#define TRIC_ARG_F32(x)         ((tric_arg){.kind = TRIC_ARG_F32, .v.f32 = (x)})
#define TRIC_ARG_F64(x)         ((tric_arg){.kind = TRIC_ARG_F64, .v.f64 = (x)})

typedef struct tric_dim3 {
    unsigned x, y, z;
} tric_dim3;

/* Launches the kernel over grid (programs along x, y, z; a grid with any dimension 0 is empty: the
 * arguments are checked, nothing runs, TRIC_SUCCESS) with the arguments,
 * checked against the kernel's parameters ("argument 2 of vector_add_kernel: expected a pointer
 * (*fp32), got an int"). cuda: asynchronous on the stream; cpu: runs to completion, and an
 * out-of-bounds access or failed assert is returned as TRIC_ERROR_LAUNCH with the interpreter's
 * message (file:line, program id), the buffers left as before the launch.
 *
 * Specialization, as Triton's JIT does it: a kernel compiled from source whose signature (or
 * annotations) leaves pointer or integer parameters open runs, for each launch, the variant
 * specialized on the values passed -- ':16' for an address or int divisible by 16, ':1' for an int
 * equal to 1 -- compiled at the first launch with that combination (milliseconds; from the disk
 * cache on cuda) and kept with the kernel, so a caller who gives no hints gets the code of the
 * ideal signature. Hints the signature does give are checked instead (an argument breaking one
 * is an error). tric_compile_options.no_specialize turns this off; kernels loaded from PTX or
 * tile IR run as they are.
 *
 * Several GPUs: a kernel runs on any cuda device, not only its module's -- on the stream's device,
 * else (stream NULL) on its buffer arguments' device, else on its module's; its code is loaded on
 * a device at its first launch there. All buffers must be on the launch's device. See "Several
 * GPUs" in docs/runtime.md. */
tric_status tric_launch(tric_kernel k, tric_dim3 grid, const tric_arg *args, int nargs,
                        tric_stream stream);

/* ---- autotuning -------------------------------------------------------------------------------
 * A module compiled from a kernel with configs (its decorator's or tune_configs) holds one
 * kernel that stands for all of them. Each config is compiled as its own kernel (one that does not
 * compile or fit is skipped, with its reason kept; the compile fails, listing every config and
 * reason, only when none is left). The first launch with a new value of the key parameters times
 * every config on the GPU (warm-up, then the median of CUDA-event timings, as do_bench), picks
 * the fastest, remembers it in memory and in the disk cache (keyed by the source, the tric build,
 * the device, the options and the key values), and launches it; later launches with that key go
 * straight to the winner, and so does a later process. Trial launches write the real buffers:
 * name outputs the kernel also reads (or accumulates into) in tune_restore / restore_value, and
 * buffers to zero before each trial in tune_reset / reset_to_zero; such arguments must be
 * buffers (TRIC_ARG_BUF), not raw addresses. On cpu the first config that compiled runs, without
 * timing. */

/* The grid of a launch as a function of the config chosen (Triton's `grid = lambda META: ...`):
 * config is that config's kernel (tric_kernel_constexpr reads its values). */
typedef tric_dim3 (*tric_grid_fn)(tric_kernel config, const tric_arg *args, int nargs, void *user);

/* Like tric_launch, with the grid computed from the config that runs. Works for any kernel (for
 * an untuned one, config is the kernel itself). */
tric_status tric_launch_grid(tric_kernel k, tric_grid_fn grid, void *user, const tric_arg *args,
                             int nargs, tric_stream stream);

/* What a launch may ask beyond tric_launch's arguments (tric_launch_ex). Zero-initialize it and
 * set what you need: every zero field means what tric_launch does, so fields added later keep
 * old callers' behaviour. */
typedef struct tric_launch_options {
    /* Nonzero: programmatic dependent launch (Triton's `launch_pdl=True`; the CUDA launch
     * attribute CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION). On an sm_90+ GPU the
     * kernel's programs may start before the kernel launched before it on the same stream has
     * finished: once every program of that one has run tl.extra.cuda.gdc_launch_dependents() or
     * exited. Its tl.extra.cuda.gdc_wait() waits until that kernel has finished and its writes
     * are visible, so a kernel launched this way must call gdc_wait before it reads what the
     * kernel before it writes (or writes what that one reads); what it does before its gdc_wait
     * overlaps the previous kernel's tail. Ignored on cpu (launches run one after the other),
     * below sm_90 (a usual launch; gdc_wait compiles to nothing there), and for a persistent
     * kernel with a workspace (the stream's, which the kernel before it may still use). */
    int programmatic_dependent;
    /* Non-NULL: the grid comes from grid_fn(config, args, nargs, grid_user), as in
     * tric_launch_grid, and tric_launch_ex's grid argument is ignored. */
    tric_grid_fn grid_fn;
    void *grid_user;
} tric_launch_options;

/* tric_launch with options (NULL: none, the same as tric_launch). Works for every kernel,
 * autotuned ones too: their trial launches run without the options, the launch of the chosen
 * config with them. */
tric_status tric_launch_ex(tric_kernel k, tric_dim3 grid, const tric_arg *args, int nargs,
                           tric_stream stream, const tric_launch_options *options);
/* Tunes for these arguments if this key has not been tuned yet (without the final launch), and
 * gives the chosen config's index. An untuned kernel gives 0. */
tric_status tric_kernel_tune(tric_kernel k, tric_grid_fn grid, void *user, const tric_arg *args,
                             int nargs, tric_stream stream, int *chosen);
/* The number of configs (0: not autotuned), and config index's kernel, launchable on its own; a
 * config that was skipped returns TRIC_ERROR_COMPILE with the reason. */
int tric_kernel_num_configs(tric_kernel k);
tric_status tric_kernel_config(tric_kernel k, int index, tric_kernel *config);
/* "BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, num_warps=8, num_stages=3" for a config's
 * kernel; "" for a kernel that is not a config. Owned by the kernel. */
const char *tric_kernel_config_text(tric_kernel k);
/* An integer constexpr of the kernel's config or compile options (BLOCK_SIZE_M); NOT_FOUND when
 * it has none by that name. */
tric_status tric_kernel_constexpr(tric_kernel k, const char *name, int64_t *value);

/* ---- fp16, bf16 and fp8 on the host ---------------------------------------------------------------- */

/* IEEE 754 binary16 and bfloat16 <-> binary32, rounding to nearest even (overflow to infinity,
 * NaN kept a quiet NaN), for filling and reading fp16/bf16 buffers from C. The same rounding is
 * used for fp16/bf16 launch arguments passed as TRIC_ARG_F32. */
uint16_t tric_f32_to_f16(float value);
float tric_f16_to_f32(uint16_t bits);
uint16_t tric_f32_to_bf16(float value);
float tric_bf16_to_f32(uint16_t bits);

/* fp8 <-> binary32 for fp8e4nv (tl.float8e4nv: e4m3fn, bias 7, no infinities, NaN S.1111.111,
 * largest 448) and fp8e5 (tl.float8e5: e5m2, bias 15, IEEE infinities and NaNs, largest 57344).
 * To fp8: the GPU's cvt.rn.satfinite -- round to nearest even, anything beyond the largest finite
 * value (infinities too) saturates to it with its sign, NaN stays NaN; the interpreter and the
 * kernels' .to(tl.float8e4nv) round the same way. From fp8: exact. */
uint8_t tric_f32_to_fp8e4nv(float value);
float tric_fp8e4nv_to_f32(uint8_t bits);
uint8_t tric_f32_to_fp8e5(float value);
float tric_fp8e5_to_f32(uint8_t bits);

/* ---- for the launchers `tric --emit=c` writes (docs/runtime.md "Generated launchers") --------- */

/* Sets the calling thread's tric_last_error to the printf-style message and returns status: for
 * code outside the library that reports errors its way. */
tric_status tric_set_error(tric_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The device the buffer was allocated on; NULL for NULL. */
tric_device tric_buffer_device(tric_buffer buf);

#ifdef __cplusplus
}
#endif

#endif
