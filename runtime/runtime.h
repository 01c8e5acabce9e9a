/* runtime.h: the runtime's insides, shared by the runtime/ files (the public API is include/tric/tric.h).
 *
 * Sections (one per file in runtime/):
 *   api.c         errors and warnings, devices, streams, modules, kernels, buffers, argument
 *                 checking, launch specialization (variants compiled at first use), launch
 *                 dispatch (on the launch's device: rt_launch_target); every device operation
 *                 goes through dev->ops
 *   cpu.c         the cpu device (rt_cpu_ops): host buffers, driver_compile to IR, interp_run
 *   cuda.c        the cuda device (rt_cuda_ops): libcuda through cuda_api.h (the part of the
 *                 Driver API tric uses, loaded at run time), PTX compiled through the cache and
 *                 loaded, loaded again on another GPU at its first launch there (several
 *                 GPUs), launches, CUDA-event timing
 *   tune.c        autotuning: a module per config, timed at the first launch per key and
 *                 device model, the choice kept in memory and on disk
 *   heuristics.c  @triton.heuristics that read run-time arguments: read when the module compiles,
 *                 evaluated by the driver (driver/entry.c) at every launch
 *   tensor_map.c  a kernel's TMA tensor maps evaluated against a launch's arguments
 *   cache.c       the on-disk JIT cache: key material -> PTX, written atomically, checked on read,
 *                 read only from a directory and files that no one but the user could have written
 *   half.c        fp16, bf16 and fp8 <-> fp32 on the host (public: tric.h)
 *   compiler.c / no_compiler.c  whether this library holds the code generator (libtric) or not
 *                 (libtric_runtime, whose no_compiler.c stands in for codegen/)
 *
 * Knows the driver (driver/driver.h: driver_compile, the PTX metadata, and entry.c's questions
 * about a source: its kernels, autotune configs, heuristics) and the IR (for the interpreter);
 * never LLVM, and calls no front-end function (tests/layering.sh, layering/runtime_no_frontend). */
#ifndef TRIC_RUNTIME_H
#define TRIC_RUNTIME_H

#include "driver/driver.h"
#include "tric/tric.h"

#include <pthread.h>

/* ---- api.c ------------------------------------------------------------------------------------ */

/* Sets this thread's last error and returns status (so `return rt_fail(...)` reads well). */
tric_status rt_fail(tric_status status, const char *fmt, ...) TRIC_PRINTF(2, 3);
/* Gives a warning (tric_set_warning_handler, tric_last_warning) unless the same text was given
 * before in this process: for what tric works around, such as a cache it will not trust. */
void rt_warn(const char *fmt, ...) TRIC_PRINTF(1, 2);
/* The error for work that cannot be done on a capturing stream (RtDeviceOps.capturing). */
tric_status rt_capture_error(const char *what);

/* A node of a device's list of live objects (circular, the device holds the head): what
 * tric_device_close frees when the caller has not. */
typedef struct RtLink {
    struct RtLink *prev, *next;
} RtLink;

/* What a launch argument must be, per parameter, decided once at kernel load. */
typedef enum RtParamKind {
    RT_PARAM_PTR,
    RT_PARAM_I32, /* i1..i32, u8..u32: a 4-byte slot (smaller ints are widened by the kernel ABI) */
    RT_PARAM_I64,
    RT_PARAM_F16, /* fp16/bf16: passed as F32, converted to 2 bytes */
    RT_PARAM_BF16,
    RT_PARAM_F32,
    RT_PARAM_F64,
} RtParamKind;

#define RT_MAX_PARAMS 64

/* The device ordinals (cuda:0 .. cuda:15) a module can launch on besides its own. */
#define RT_MAX_DEVICES 16

/* A module's code loaded into another GPU's primary context (docs/runtime.md "Several GPUs"). The
 * module retains that context (cu_context) for as long as it keeps cu_module, so closing the other
 * tric_device never leaves the handle dangling. */
typedef struct RtDeviceLoad {
    int cu_device;    /* CUdevice */
    void *cu_context; /* CUcontext: its primary context, retained; NULL: not loaded there */
    void *cu_module;  /* CUmodule */
} RtDeviceLoad;

/* What cuTensorMapEncodeTiled takes for one map at one launch (interleave and oobFill are NONE). */
typedef struct RtTensorMapArgs {
    int data_type; /* CUtensorMapDataType */
    uint32_t rank;
    uint64_t address;                             /* globalAddress, 16-byte aligned */
    uint64_t dims[TRIC_TMAP_MAX_RANK];            /* globalDim: elements, in [1, 2^32] */
    uint64_t strides[TRIC_TMAP_MAX_RANK - 1];     /* globalStrides: bytes, of dims 1..rank-1 */
    uint32_t box[TRIC_TMAP_MAX_RANK];             /* boxDim: elements */
    uint32_t element_strides[TRIC_TMAP_MAX_RANK]; /* all 1 */
    int swizzle;                                  /* CUtensorMapSwizzle */
    int l2_promotion;                             /* CUtensorMapL2promotion */
} RtTensorMapArgs;

/* One tensor map as the last launch made it: reused while a launch's RtTensorMapArgs are the same
 * (rt_tensor_maps_make), which saves a cuTensorMapEncodeTiled per map and launch (0.13 us on the
 * H100's host, against tric's own 0.2-0.4 us a launch: docs/performance.md). */
typedef struct RtTensorMapCached {
    bool valid;
    RtTensorMapArgs args;
    uint64_t map[16]; /* the CUtensorMap encoded from args */
} RtTensorMapCached;

struct tric_kernel_s {
    struct tric_module_s *module;
    char name[128];
    int nparams;
    Type param_types[RT_MAX_PARAMS];
    uint8_t param_kind[RT_MAX_PARAMS]; /* RtParamKind */
    char param_type_str[RT_MAX_PARAMS][24];
    /* The specialization the kernel was compiled for (":16", ":1" in its signature), checked at
     * every launch: an argument that breaks it would make vectorized, predicated accesses wrong. */
    uint32_t param_divisibility[RT_MAX_PARAMS]; /* 1 when no hint */
    bool param_equal_to_1[RT_MAX_PARAMS];
    int threads;
    int shared_bytes;
    void *cu_function; /* CUfunction (cuda), in the module's own device's context */
    /* cuda, several GPUs: the CUfunction in the context of device ordinal i, for a launch on a GPU
     * other than the module's (cuda.c, "several GPUs"); published with release, read with acquire. */
    void *cu_function_on[RT_MAX_DEVICES];
    /* Set where known (malloc'd, freed with the module): the run-time parameters' names, one
     * space-separated string ("a_ptr b_ptr M"); the constexpr values ("BLOCK_SIZE_M=128
     * T_C=tl.float16"); an autotuning config's text ("BLOCK_SIZE_M=128, ..., num_warps=8"). */
    char *param_names;
    char *constexprs;
    char *config_text;
    /* cuda: the TMA tensor maps the kernel reads (KernelMeta.tmaps), evaluated at every launch and
     * passed after the nparams run-time parameters, map i the i-th; 0 on cpu (the interpreter
     * reads IrFunc.tmaps itself) and in an autotuned kernel's face (each config has its own). */
    TensorMap tmaps[TRIC_MAX_TENSOR_MAPS];
    int ntmaps;
    /* cuda: each map as the last launch encoded it. tmap_cache_busy is held by the launch that
     * reads or fills the cache; a launch on another thread that finds it held encodes its own maps
     * and leaves the cache alone, so launches never wait on each other. */
    RtTensorMapCached tmap_cache[TRIC_MAX_TENSOR_MAPS];
    bool tmap_cache_busy;
    /* cuda: a persistent kernel (KernelMeta.persistent, passes/stream_k.c, passes/persistent.c):
     * launched on min(x y z, SMs x its blocks per SM) programs along x, passed the grid's x and
     * its stream's workspace after the tensor maps, then the grid's y when persistent_axes is 2
     * or 3 and its z when 3; workspace_bytes of it per program after the flags, -1 when the
     * kernel reads none (a null pointer passed, nothing allocated) (cuda.c,
     * "persistent kernels"); persistent_axes is the grid axes it takes (1 to 3; a grid y > 1 or
     * z > 1 beyond them is refused); blocks_per_sm is the occupancy the driver gives it, 0 until
     * its first launch asks. On cpu the interpreter runs its own schedule over the grid asked. */
    bool persistent;
    int persistent_axes;
    int64_t workspace_bytes;
    int blocks_per_sm;
    /* cuda: the stage count the kernel's num_stages was raised from (KernelMeta.stages_raised_from,
     * deep_pipeline); 0 when not raised, and on cpu, whose interpreter runs the IR as lowered */
    int stages_raised_from;
};

struct tric_module_s {
    struct tric_device_s *device;
    RtLink link; /* in device->modules when made by the API (not a variant, member or config) */
    char *code;  /* PTX (cuda) or IR text (cpu); malloc'd */
    CompileResult result; /* cpu: keeps result.ir alive for the interpreter */
    /* cpu: the source as compiled. The IR's locations point at this SrcFile, so it lives as long
     * as the module (the interpreter's messages name file:line). */
    SrcFile source;
    char *source_name, *source_text; /* NULL in a variant, whose source is its generic module's */
    bool has_result;
    bool from_cache; /* cuda: the PTX came from the disk cache */
    void *cu_module; /* CUmodule (cuda) */
    struct tric_kernel_s kernel;
    /* Launch specialization (Triton's JIT): a module compiled from .tri source whose kernel has
     * parameters its signature leaves open (pointers and ints with no hint) compiles, at
     * the first launch with a new combination, a variant specialized on the values passed. */
    int nopen;                          /* 0: launches never specialize */
    uint8_t open_params[RT_MAX_PARAMS]; /* the open parameters' indices */
    tric_compile_options options;       /* as given at compile, deep-copied into options_arena */
    Arena *options_arena;
    pthread_mutex_t variants_lock; /* held to add a variant; launches only read */
    struct RtVariant *variants;    /* RT_MAX_VARIANTS slots, the first nvariants filled */
    int nvariants;                 /* published with release, read with acquire */
    /* A variant's own hints (SpecOptions.launch_hints), per run-time parameter; also key material
     * for the disk cache. nlaunch_hints is 0 for a module compiled as asked. */
    unsigned char launch_hints[RT_MAX_PARAMS];
    int nlaunch_hints;
    /* Autotuning (runtime/tune.c): a module whose kernel stands for several configs, each its own
     * module (a config compiled from source, or a member of a loaded PTX). */
    struct RtTuner *tuner;
    bool is_config; /* compiled as a config: a shared-memory overflow lowers num_stages */
    /* cuda: the PTX is handed to the driver's JIT at the first launch, not at compile (a config
     * whose launches all run specialized variants never needs its generic kernel loaded). */
    bool lazy_load;
    pthread_mutex_t load_lock;
    /* A loaded PTX with several kernels (or an autotuned one): a module per kernel and one per
     * tuned group, all in this module's CUmodule; tric_module_get_kernel looks among them. */
    struct tric_module_s **members;
    int nmembers;
    bool shares_cu_module;           /* a member: its function lives in the container's CUmodule */
    struct tric_module_s *container; /* a member of a loaded PTX: the module holding its code */
    /* cuda: the code loaded on other GPUs, by ordinal, at the first launch there; filled under
     * load_lock of the module holding the code (a member's container). */
    RtDeviceLoad loaded_on[RT_MAX_DEVICES];
    /* @triton.heuristics reading run-time arguments (runtime/heuristics.c): evaluated at every
     * launch, which runs the variant compiled for the values; NULL when there are none. */
    struct RtHeuristics *heuristics;
};

/* One specialization of a module's kernel: the hints it was compiled for and the module, NULL when
 * its compile failed (launches with those values then run the generic kernel, which is correct). */
typedef struct RtVariant {
    unsigned char hints[RT_MAX_PARAMS];
    struct tric_module_s *module;
    char *signature; /* "*fp32:16,*fp32:16,i32:16", for tric_kernel_variant */
    char *error;     /* why the compile failed (module NULL) */
} RtVariant;

/* The most variants one kernel compiles; past it, new combinations run the generic kernel. */
#define RT_MAX_VARIANTS 64

struct tric_buffer_s {
    struct tric_device_s *device;
    RtLink link; /* in device->buffers */
    uint64_t addr;
    size_t bytes;
    int live_index; /* cpu: the slot in device->live */
};

struct tric_stream_s {
    struct tric_device_s *device;
    RtLink link;     /* in device->streams */
    void *cu_stream; /* CUstream (cuda); NULL on cpu */
    bool wrapped;    /* tric_stream_wrap: the CUstream is the caller's, never destroyed here */
    /* cuda: the workspace of the persistent kernels launched on the stream (cuda.c, "persistent
     * kernels"): flags zeroed when allocated, which every launch leaves zero; grown, never
     * shrunk, the smaller ones kept until the stream goes (a captured graph may still use them).
     * Guarded by the device's lock. */
    uint64_t workspace;
    size_t workspace_bytes;
    uint64_t *retired_workspaces;
    int nretired_workspaces;
};

struct tric_device_s {
    tric_device_kind kind;
    const struct RtDeviceOps
        *ops; /* rt_cpu_ops or rt_cuda_ops, set by rt_cpu_open / rt_cuda_open */
    char name[256];
    char arch[16];
    /* What makes two devices the same for autotuning: "NVIDIA H100 80GB HBM3, sm_90, 132 SMs" (the
     * name, compute capability and SM count; "cpu" for the interpreter) and its FNV-1a hash. A
     * choice tuned on one device is reused on every device of the same model (tune.c). */
    char model[256];
    uint64_t model_id;
    /* The device's own stream as a stream object (cu_stream; never destroyed): what a launch of a
     * module made on another device runs on when the API is given NULL (rt_launch_target). */
    struct tric_stream_s own_stream;
    /* cpu: every live buffer, the interpreter's bounds (InterpLaunch.buffers); guarded by lock. */
    pthread_mutex_t lock;
    InterpBuffer *live;
    struct tric_buffer_s **live_owner;
    int nlive, live_cap;
    /* cuda */
    int ordinal;
    int cu_device;    /* CUdevice */
    void *cu_context; /* CUcontext: the device's primary context */
    /* CUstream: the device's own stream, used wherever the API is given NULL. A blocking stream
     * (CU_STREAM_DEFAULT), so it stays ordered with work other code puts on the legacy stream;
     * launching into it costs the driver less than into the legacy stream (bench/bench_launch). */
    void *cu_stream;
    int sm; /* 90 for compute capability 9.0 */
    int multiprocessors;
    /* Shared memory per block: what any launch may use, and the most a function may opt into
     * (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK[_OPTIN]: 48 KB and 227 KB on sm_90). */
    int max_shared_default, max_shared_optin;
    /* Everything made on the device and not yet destroyed (tric_device_close frees it). */
    pthread_mutex_t objects_lock;
    RtLink modules, buffers, streams;
};

/* Links node into list (a device's), under the device's objects_lock. */
void rt_link_add(struct tric_device_s *dev, RtLink *list, RtLink *node);
/* Unlinks node if it is linked. */
void rt_link_remove(struct tric_device_s *dev, RtLink *node);

/* ---- compiler.c / no_compiler.c ------------------------------------------------------------ */

/* Whether this library holds the compiler: true in libtric, false in libtric_runtime, which
 * loads only what `tric` wrote (PTX on cuda, .tir on cpu). */
extern const bool rt_has_compiler;

/* ---- cpu.c, cuda.c: the device operations ------------------------------------------------------
 * What differs between the two kinds of device, as a table each fills (rt_cpu_ops, rt_cuda_ops)
 * and tric_device_open picks once: api.c, tune.c and heuristics.c call through dev->ops and never
 * ask which kind a device is. Arguments are checked before a call (ranges, streams of the same
 * device, the kernel's arguments); the operation's own errors are set with rt_fail. */

typedef struct RtDeviceOps {
    /* libtric_runtime (no compiler) runs on this device what `tric` wrote ahead of time:
     * ".tir (--emit=ir)" run by the interpreter (interprets_ir), or "PTX". */
    bool interprets_ir;
    const char *ahead_of_time_form;
    /* A module made on one device of this kind launches on another (several GPUs: its code loaded
     * there at the first launch); false: a launch runs on the module's own device only. */
    bool launches_on_other_devices;
    /* Waits for all work on the device (tric_device_synchronize). */
    tric_status (*synchronize)(struct tric_device_s *dev);
    /* Releases what open took (tric_device_close, after every object is freed). */
    void (*close)(struct tric_device_s *dev);
    /* Sets buf->addr to bytes of device memory (0 bytes: still a distinct address). */
    tric_status (*alloc)(struct tric_device_s *dev, struct tric_buffer_s *buf, size_t bytes);
    void (*free)(struct tric_buffer_s *buf);
    /* The copies and memset of tric.h, done when they return (the _async ones: enqueued on s). */
    tric_status (*copy_to_device)(struct tric_buffer_s *dst, size_t off, const void *src, size_t n,
                                  struct tric_stream_s *s);
    tric_status (*copy_to_host)(void *dst, struct tric_buffer_s *src, size_t off, size_t n,
                                struct tric_stream_s *s);
    tric_status (*copy_to_device_async)(struct tric_buffer_s *dst, size_t off, const void *src,
                                        size_t n, struct tric_stream_s *s);
    tric_status (*copy_to_host_async)(void *dst, struct tric_buffer_s *src, size_t off, size_t n,
                                      struct tric_stream_s *s);
    tric_status (*copy_device)(struct tric_buffer_s *dst, size_t doff, struct tric_buffer_s *src,
                               size_t soff, size_t n, struct tric_stream_s *s);
    tric_status (*memset)(struct tric_buffer_s *dst, size_t off, int value, size_t n,
                          struct tric_stream_s *s);
    /* Streams: s->device set by the caller. wrap makes s the wrapper of the caller's cu_stream
     * after checking it belongs to dev's context (an error where the device has none). */
    tric_status (*stream_create)(struct tric_device_s *dev, struct tric_stream_s *s);
    tric_status (*stream_wrap)(struct tric_device_s *dev, void *cu_stream, struct tric_stream_s *s);
    void (*stream_destroy)(struct tric_stream_s *s);
    tric_status (*stream_synchronize)(struct tric_stream_s *s);
    /* Whether s (NULL: the device's) is being captured into a CUDA graph: then tric must not
     * synchronize, copy synchronously, or load code on it (any of those would invalidate the
     * capture). */
    bool (*capturing)(struct tric_device_s *dev, struct tric_stream_s *s);
    /* Compiles file with opt into mod (its code and kernel): the tile IR for the interpreter, or
     * PTX (through the disk cache) loaded into the driver. */
    tric_status (*compile)(struct tric_device_s *dev, const SrcFile *file,
                           const tric_compile_options *opt, struct tric_module_s *mod);
    /* Loads mod->code, a PTX from `tric`: one kernel (the module's own), or several -- an
     * autotuned kernel's configs -- each a member module sharing mod's CUmodule, with a tuned
     * member per tuning group (an error where the device runs no PTX). */
    tric_status (*load_ptx)(struct tric_device_s *dev, struct tric_module_s *mod);
    /* Frees what compile or load_ptx loaded into the device (rt_module_free). */
    void (*unload)(struct tric_module_s *mod);
    /* Loads a lazily loaded module's kernel (tric_module_s.lazy_load) now. */
    tric_status (*ensure_loaded)(struct tric_kernel_s *k);
    /* tric_kernel_attributes: registers, local memory, occupancy (its function loaded now if
     * lazy; an error where the device has none of those). */
    tric_status (*kernel_attributes)(struct tric_kernel_s *k, tric_kernel_attrs *out);
    /* Runs k (arguments checked, the variant chosen) on grid, on s (NULL: the module's device's
     * own stream). s may belong to another device than k's module (rt_launch_target): k runs
     * there, its code loaded there first if this is its first launch on that device. options:
     * tric_launch_ex's (NULL: none; its grid function already applied). */
    tric_status (*launch)(struct tric_kernel_s *k, tric_dim3 grid, const tric_arg *args,
                          struct tric_stream_s *s, const tric_launch_options *options);
    /* Times run(ctx) -- one launch on s, perhaps with work before it -- as do_bench does: one run
     * timed to estimate (when it takes over give_up_ms > 0, that is the answer), warm-up runs for
     * about warmup_ms, then runs for about rep_ms (at least 1, at most 100) each between two CUDA
     * events; the median in ms. flush, when not NULL: zeroed on s before each timed run and
     * outside its events, as do_bench clears L2. What run launches must be compiled and loaded
     * already. NULL on a device whose speed says nothing of a GPU's (the interpreter): autotuning
     * there runs the first config that compiled, untimed. */
    tric_status (*time)(struct tric_device_s *dev, struct tric_stream_s *s,
                        tric_status (*run)(void *ctx), void *ctx, double warmup_ms, double rep_ms,
                        double give_up_ms, const struct tric_buffer_s *flush, double *median_ms);
} RtDeviceOps;

/* cpu.c: host buffers, driver_compile to IR, interp_run. */
extern const RtDeviceOps rt_cpu_ops;
tric_status rt_cpu_open(struct tric_device_s *dev);

/* cuda.c: libcuda through runtime/cuda_api.h. */
extern const RtDeviceOps rt_cuda_ops;
/* Whether libcuda can be loaded and has at least one device (for "auto"); never fails loudly. */
bool rt_cuda_available(void);
tric_status rt_cuda_open(struct tric_device_s *dev, int ordinal);
/* The CUstream a launch or copy on s (NULL: the device's) goes to (bench/ times on it). */
void *rt_cuda_stream_of(struct tric_device_s *dev, struct tric_stream_s *s);
/* Fills k from its metadata block and finds its function in the loaded CUmodule (cu_module NULL:
 * the parameters only, the function found at the first launch). */
tric_status rt_cuda_bind_kernel(struct tric_device_s *dev, void *cu_module, const KernelMeta *meta,
                                struct tric_kernel_s *k);

/* ---- api.c: shared helpers -------------------------------------------------------------------- */

struct tric_module_s *rt_module_new(struct tric_device_s *dev);
void rt_module_free(struct tric_module_s *mod);
/* Which parameters launches specialize on, and a deep copy of the options to compile variants. */
tric_status rt_prepare_specialization(struct tric_module_s *mod, const tric_compile_options *opt);
/* Where a launch of k runs (docs/runtime.md "Several GPUs"): on the stream's device; with a NULL
 * stream, on the device of the buffer arguments (rt_check_args has checked they share one), else
 * on the module's. Checks the stream against the kernel and the buffers, and replaces a NULL
 * *stream by the launch device's own_stream when that is not the module's device, so the device
 * operations below see the launch device as (*stream)->device. */
tric_status rt_launch_target(const struct tric_kernel_s *k, const tric_arg *args, int nargs,
                             struct tric_stream_s **stream);
/* The device a launch on stream (rt_launch_target's) runs on. */
static inline struct tric_device_s *rt_launch_device(const struct tric_kernel_s *k,
                                                     const struct tric_stream_s *stream) {
    return stream ? stream->device : k->module->device;
}
/* tric_launch of a kernel that is not autotuned: arguments checked, specialized, launched. */
tric_status rt_launch(struct tric_kernel_s *k, tric_dim3 grid, const tric_arg *args, int nargs,
                      struct tric_stream_s *stream, const tric_launch_options *options);
/* rt_launch after rt_check_args has passed (a tuned kernel's config has its parameters). */
tric_status rt_launch_checked(struct tric_kernel_s *k, tric_dim3 grid, const tric_arg *args,
                              struct tric_stream_s *stream, const tric_launch_options *options);
/* The kernel a launch of k with these arguments runs: k, or its variant for their values,
 * compiled now if it is new. */
struct tric_kernel_s *rt_launch_variant(struct tric_kernel_s *k, const tric_arg *args);
/* The integer an argument passes: an address for pointers, the value for ints. */
uint64_t rt_arg_bits(const tric_arg *a);
/* Records (copies) a kernel's parameter names, constexprs and config text; "" clears one, NULL
 * leaves it as it is. */
void rt_kernel_set_names(struct tric_kernel_s *k, const char *param_names, const char *constexprs,
                         const char *config_text);
/* The index of the run-time parameter called name, or -1. */
int rt_kernel_param_index(const struct tric_kernel_s *k, const char *name);

/* Fills k's parameter table from types; false (with rt_fail) when a type cannot be passed. */
tric_status rt_kernel_set_params(struct tric_kernel_s *k, const Type *types, int n);
/* Records parameter index's hints; rt_kernel_set_params resets them to none. */
void rt_kernel_set_hint(struct tric_kernel_s *k, int index, int divisibility, bool equal_to_1);
/* Checks nargs/kinds against k; TRIC_SUCCESS or TRIC_ERROR_INVALID_ARGUMENT with the message.
 * Buffers must all be on one device: the kernel's, or (launches_on_other_devices) another device of
 * its kind, where the launch then runs (rt_launch_target). */
tric_status rt_check_args(const struct tric_kernel_s *k, const tric_arg *args, int nargs);
/* Turns the public options and mod's launch hints into the driver's (defines are allocated in
 * arena). */
tric_status rt_compile_options(const tric_compile_options *opt, const struct tric_module_s *mod,
                               Arena *arena, CompileOptions *out);
/* Appends a canonical text of the options and mod's launch hints to key material for the cache. */
void rt_options_key(StrBuf *sb, const tric_compile_options *opt, const struct tric_module_s *mod);

/* ---- heuristics.c: heuristics evaluated at launch ------------------------------------------- */

/* Before a source module's kernel compiles: when its @triton.heuristics read run-time arguments
 * (and opt gives no value for them), sets mod->heuristics and fills *probe with opt plus the
 * heuristics' values with run-time arguments read as 1 (16, 1024 where that fails), to compile
 * the module's own kernel with; otherwise leaves mod as it is. */
tric_status rt_heuristics_prepare(struct tric_module_s *mod, const tric_compile_options *opt,
                                  tric_compile_options *probe);
/* The kernel a launch with these (checked) arguments runs: k, or the variant for the heuristics'
 * values at this launch, compiled on first use. An error when a lambda fails on these values or
 * the variant does not compile. */
tric_status rt_heuristics_kernel(struct tric_kernel_s *k, const tric_arg *args,
                                 struct tric_kernel_s **out);
void rt_heuristics_free(struct RtHeuristics *h);

/* ---- tune.c: autotuning --------------------------------------------------------------------- */

typedef struct RtTuner RtTuner;
/* Before a module is compiled from source: when opt or the kernel's decorator gives configs to
 * tune over, compiles each config (a module of its own) and makes mod's kernel stand for them
 * (*tuned true). *tuned false: compile mod as usual. */
tric_status rt_tune_compile(struct tric_module_s *mod, const tric_compile_options *opt,
                            bool *tuned);
/* A loaded PTX's kernels that name a tuning group (// tric.tune): one tuned member per group,
 * placed first among mod->members. metas[i] describes mod->members[i]. */
tric_status rt_tune_groups(struct tric_module_s *mod, const KernelMeta *metas, int n);
/* tric_launch / tric_launch_grid / tric_launch_ex of an autotuned kernel: the trials without
 * options, the chosen config's launch with them. */
tric_status rt_tuned_launch(struct tric_kernel_s *k, tric_grid_fn grid_fn, void *user,
                            tric_dim3 grid, const tric_arg *args, int nargs,
                            struct tric_stream_s *stream, const tric_launch_options *options);
/* tric_launch_grid / tric_launch_ex with a grid function, of a kernel that is not autotuned. */
tric_status rt_launch_grid_fn(struct tric_kernel_s *k, tric_grid_fn grid_fn, void *user,
                              const tric_arg *args, int nargs, struct tric_stream_s *stream,
                              const tric_launch_options *options);
void rt_tuner_free(RtTuner *t);

/* ---- tensor_map.c: TMA tensor maps -------------------------------------------------------- */

/* The largest dim, which an unbounded LaunchValue (a dim the kernel never checks) gets: 2^31 - 1.
 * cuTensorMapEncodeTiled takes up to 2^32, but on an H100 (driver 580) a copy through a map with a
 * dim of 2^32 - 1 or 2^32 stops the kernel with CUDA_ERROR_ILLEGAL_INSTRUCTION, while 2^31 - 1
 * works (measured 2026-11-26); the coordinates are 32-bit signed anyway. */
#define RT_TMAP_UNBOUNDED_DIM ((UINT64_C(1) << 31) - 1)

/* Evaluates k's tensor map i against a launch's arguments (rt_check_args passed) and checks TMA's
 * rules; TRIC_ERROR_INVALID_ARGUMENT with a message naming the map, its base and the value when
 * one is broken. No driver call: it runs without a GPU. */
tric_status rt_tensor_map_args(const struct tric_kernel_s *k, int i, const tric_arg *args,
                               RtTensorMapArgs *out);

struct CUtensorMap;
/* Encodes one map (cuda.c: cuTensorMapEncodeTiled; a test: a counter). */
typedef tric_status (*RtTensorMapEncode)(const struct tric_kernel_s *k, int i,
                                         const RtTensorMapArgs *a, struct CUtensorMap *map);
/* k's tensor maps for a launch with args, maps[i] the i-th: each evaluated and checked by
 * rt_tensor_map_args, then copied from k's cache when the last launch encoded it from the same
 * arguments, else encoded (and cached). Thread-safe (tmap_cache_busy). */
tric_status rt_tensor_maps_make(struct tric_kernel_s *k, const tric_arg *args,
                                RtTensorMapEncode encode, struct CUtensorMap *maps);

/* ---- cache.c ---------------------------------------------------------------------------------- */

/* Appends what every compiled entry depends on besides its source and options: the tric build
 * (version and git revision, and libtric's own file size and mtime), the code generator (LLVM's
 * version), and the libdevice a compile with this override (TRIC_LIBDEVICE; NULL: the search in
 * $CUDA_HOME, the configured toolkit, /usr/local/cuda) links: its path, size and mtime. */
void rt_build_key(StrBuf *sb, const char *libdevice_override);
/* The cache directory: $TRIC_CACHE_DIR, else $XDG_CACHE_HOME/tric, else $HOME/.cache/tric; NULL
 * when none can be named or TRIC_NO_CACHE is set. malloc'd. The directory may not exist yet. */
char *rt_cache_dir(void);
/* 64-bit FNV-1a (http://www.isthe.com/chongo/tech/comp/fnv/): continue from h, or start from
 * RT_FNV_OFFSET. Not cryptographic: every entry also stores its full key material. */
#define RT_FNV_OFFSET 0xcbf29ce484222325ULL
uint64_t rt_fnv1a(uint64_t h, const void *data, size_t n);
/* The entry's path for this key material: DIR/<16 hex digits of the hash>.ptx. malloc'd. */
char *rt_cache_path(const char *dir, const char *material, size_t mlen);
/* Reads the entry for material into payload. false when absent, or when the entry is corrupt or
 * belongs to other material (then why says which; the caller recompiles and overwrites). Only a
 * directory and an entry that no one but the user (and root; with TRIC_CACHE_SHARED, the
 * directory's group) could have written are read: anything else is a miss, warned about once
 * (rt_warn), as a symlink or a non-regular file in an entry's place is. */
bool rt_cache_lookup(const char *dir, const char *material, size_t mlen, StrBuf *payload,
                     StrBuf *why);
/* Writes the entry atomically (a temp file made O_EXCL in dir, fsync, rename); creates dir (0700,
 * or 0770 less the umask when shared; entries 0600, or 0640). false with why on any failure, and
 * in a directory rt_cache_lookup would not trust (not an error for the caller: it just compiled
 * without caching). */
bool rt_cache_store(const char *dir, const char *material, size_t mlen, const char *payload,
                    size_t plen, StrBuf *why);

#endif
