/* driver.h: the compiler as one call, shared by the CLI (tools/tric.c) and the runtime's JIT.
 *
 *   source --parse_module--> AST --sema_specialize--> typed AST --build_ir--> tile IR
 *          --passes_run--> layout-annotated IR --codegen_emit--> LLVM IR, PTX (+ metadata)
 *
 * The runtime's one way into the compiler: driver_compile, the metadata block (meta.c), and
 * entry.c's answers about a source (its kernels, autotune configs, heuristics at launch) in plain
 * values; it calls nothing of frontend/ itself (tests/layering.sh).
 */
#ifndef TRIC_DRIVER_H
#define TRIC_DRIVER_H

#include "frontend/frontend.h"
#include "ir/ir.h"

/* EMIT_C: the PTX embedded in C source with a typed launcher per kernel, and its header
 * (emit_c.c). */
typedef enum EmitKind { EMIT_AST, EMIT_IR, EMIT_LLVM, EMIT_PTX, EMIT_C } EmitKind;

typedef struct CompileOptions {
    SpecOptions spec; /* kernel name, signature, -D values */
    EmitKind emit;
    const char *arch;       /* "sm_80" .. "sm_90a"; NULL = sm_90 */
    int num_warps;          /* 0 = 4 */
    int num_stages;         /* 0 = 3 */
    int opt_level;          /* -O0..-O3; default 3 */
    bool verify;            /* verify IR after every pass */
    const char *dump_after; /* dump IR after this pass ("all") */
    const char *libdevice_path;
    bool parse_only;          /* EMIT_AST without sema: the untyped syntax tree */
    const char *passes;       /* passes to run before EMIT_IR: NULL = none, "all", or "a,b,c";
                               EMIT_LLVM / EMIT_PTX always run the whole pass list */
    bool no_tune;             /* one kernel exactly: an autotuned kernel's configs are not expanded
                               (the runtime compiles config by config) */
    bool fit_stages;          /* when the pipeline's stage buffers overflow shared memory, lower
                               num_stages until they fit (recorded in the metadata) */
    const char *c_output;     /* EMIT_C: the .c file's path; its base name names the header and
                               prefixes the generated functions */
    bool c_prefix_launchers;  /* EMIT_C: launchers named PREFIX_KERNEL_launch, not KERNEL_launch */
    const char *c_tuned;      /* EMIT_C: --tuned=FILE, configs chosen ahead of time per key value
                                (P_write_tuned's table), baked into the tuned launchers */
    bool no_fp_fusion;        /* no mul+add -> fma contraction (Triton's enable_fp_fusion=False) */
    bool no_heavy_first;      /* --no-heavy-first: programs keep their launch order
                                (PassOptions.no_heavy_first) */
    bool no_fuse_loops;       /* --no-fuse-loops: loops as written (PassOptions.no_fuse_loops) */
    bool no_auto_ws;          /* --no-auto-warp-specialize: only a loop that asks is
                                warp-specialized (PassOptions.no_auto_ws) */
    bool pingpong;            /* --pingpong: two consumer groups take a warp-specialized persistent
                                kernel's tiles in turn (PassOptions.pingpong) */
    bool tma_store;           /* --tma-store: tile stores through tensor maps on sm_90a
                                (PassOptions.tma_store) */
    bool stream_k;            /* --stream-k: a matmul-shaped kernel runs persistent, its last round
                                of tiles split along K (PassOptions.stream_k) */
    bool persistent;          /* --persistent: a grid kernel runs persistent, its programs walking
                                the grid's tiles (PassOptions.persistent) */
    bool no_auto_persistent;  /* --no-auto-persistent: only --persistent makes a grid persistent
                                (PassOptions.no_auto_persistent) */
    bool overlap_dots;        /* --overlap-dots: a loop's carried last wgmma issued an iteration
                                late (PassOptions.overlap_dots) */
    bool stream_k_twins;      /* --stream-k=auto: an autotuned kernel's configs compile twice, as
                                written and with stream_k (NAME_c<n + i>, ", stream_k" in the
                                config text), for the tuner to choose; a twin the pass leaves as
                                written is left out. tune.c does the same for the JIT. */
    bool deep_pipeline;       /* --deep-pipeline: num_stages raised, up to twice what was asked,
                                while the kernel fits in shared memory (gpu_passes) */
    bool deep_pipeline_twins; /* --deep-pipeline=auto: an autotuned kernel's configs also compile
                                 with deep_pipeline (", deep_pipeline" in the config text), for the
                                 tuner to choose, and with both switches when stream_k_twins is
                                 set too; a twin left at its stage count is left out */
    const char *const *include_dirs; /* -I: where absolute imports are looked for, after the
                                        importing file's directory (imports.c) */
    int ninclude_dirs;
    /* Switches that change the code, so every cache key holds them (the runtime's: rt_options_key).
     * tools/tric.c and runtime/ turn TRIC_NO_TMA, TRIC_LLVM_PIPELINE and TRIC_LLVM_ARGS into them;
     * nothing below the driver reads the environment. */
    bool no_tma;             /* --no-tma: every copy stays cp.async (PassOptions.no_tma) */
    const char *llvm_passes; /* --llvm-passes: an LLVM pass pipeline run instead of -On's */
    const char *llvm_args;   /* --llvm-args: LLVM options, fixed per process (CodegenOptions) */
    /* Diagnostics only: they change no code, so no cache key holds them. */
    bool remarks;       /* --remarks (TRIC_PIPELINE_REMARKS): why a loop is not pipelined, why a
                           kernel's copies stay cp.async, as remarks in the Diag */
    bool codegen_times; /* --codegen-times (TRIC_CODEGEN_TIMES): codegen's times on stderr */
} CompileOptions;

/* What a launch needs, as written in the PTX's metadata block (docs/ptx-metadata.md):
 *   // tric.begin
 *   // tric.version 0.1.0
 *   // tric.kernel vector_add_kernel
 *   // tric.target sm_90
 *   // tric.num_warps 4
 *   // tric.threads 128
 *   // tric.shared 0
 *   // tric.params *fp32:16 *fp32:16 *fp32:16 i32
 *   // tric.constexpr BLOCK_SIZE=1024
 *   // tric.end
 * and, for a kernel that reads through TMA, one line per tensor map before tric.end:
 *   // tric.tensor_map fp16 base=0 dims=*,p3 strides=1,p6 box=64,128 swizzle=128
 */
typedef struct KernelParamMeta {
    Type type;        /* scalar dtype, or pointer to dtype */
    int divisibility; /* 1 when unknown */
    bool equal_to_1;  /* ":1": compiled for the value 1 */
    char name[64];    /* from "// tric.param_names"; "" when not recorded */
} KernelParamMeta;

typedef struct KernelMeta {
    char name[128];
    /* An autotuned kernel's configs (one kernel each):
     *   // tric.tune kernel_matmul key=M,N,K restore=c_ptr reset=
     *   // tric.config BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, num_warps=8, num_stages=3
     * tune_name is "" for a kernel that is not a config. */
    char tune_name[128];
    char tune_key[256], tune_restore[256], tune_reset[256]; /* comma-separated parameter names */
    char config[512];
    char constexprs[1024]; /* "A=1 B=tl.float16" */
    /* // tric.num_stages 2 lowered_from=3: compiled with fewer stages than asked, to fit shared
     * memory (CompileOptions.fit_stages); 0 when not lowered. // tric.num_stages 8 raised_from=4:
     * with more, as deep as fits (CompileOptions.deep_pipeline); 0 when not raised. num_stages is
     * 0 when neither. */
    int num_stages, stages_lowered_from, stages_raised_from;
    char target[16];
    int num_warps;
    int threads;
    int shared_bytes;
    KernelParamMeta params[64];
    int nparams;
    /* The tensor maps the kernel reads (IrFunc.tmaps), passed after the parameters, map i the
     * i-th; their parameter indices are into params. */
    TensorMap tmaps[TRIC_MAX_TENSOR_MAPS];
    int ntmaps;
    /* // tric.persistent workspace=N [axes=A]: a persistent kernel (IrFunc.persistent), launched
     * on min(x y z, SMs x blocks per SM) programs along x with the grid's x and a workspace
     * pointer after the tensor maps, then its y when it takes 2 or 3 axes and its z when 3.
     * persistent_axes is A, 1 when the line has no axes= (read only when persistent).
     * workspace_bytes is N a program, or -1 for `workspace=none`: the kernel reads no workspace
     * (no `workspace` op: a grid made persistent), so its launch passes a null pointer and
     * allocates nothing. */
    bool persistent;
    int persistent_axes;
    int64_t workspace_bytes;
} KernelMeta;

void kernel_meta_write(StrBuf *out, const KernelMeta *m);
/* Reads the first block from PTX text; false with a message in error when absent or malformed. */
bool kernel_meta_read(const char *ptx, KernelMeta *m, StrBuf *error);
/* Reads every block (one per kernel of the PTX) into a malloc'd array; the count, or -1 with a
 * message in error. */
int kernel_meta_read_all(const char *ptx, KernelMeta **out, StrBuf *error);

typedef struct CompileResult {
    StrBuf output; /* the emitted text: AST, IR, LLVM IR, PTX (with the metadata block) or C */
    StrBuf header; /* EMIT_C: the C header declaring the launchers */
    KernelMeta meta;
    IrFunc *ir;   /* the IR as lowered, before passes (for the interpreter); lives in arena */
    Arena *arena; /* owns ir; freed by compile_result_free */
} CompileResult;

/* Compiles one kernel. Diagnostics go to diag; false when there was any error. */
bool driver_compile(const SrcFile *file, const CompileOptions *opt, CompileResult *out, Diag *diag);
void compile_result_free(CompileResult *r);

/* The configs a compile of spec's kernel in m is tuned over: its @triton.autotune decorator's,
 * except when every name they set has a -D value (then the kernel compiles as given: nconfigs 0),
 * and only those agreeing with the -D values given for some of their names (an error when none
 * does). nconfigs 0 also for a kernel without the decorator. */
bool driver_tune_configs(const Module *m, const SpecOptions *spec, Autotune *out, Arena *a,
                         Diag *d);
/* spec with config c's values added; a -D of the same name gives way to the config. */
SpecOptions driver_config_spec(const SpecOptions *spec, const TuneConfig *c, Arena *a);

/* The compile switches the environment sets, for the edges (tools/tric.c, runtime/) to turn into
 * options: no_tma (TRIC_NO_TMA), remarks (TRIC_PIPELINE_REMARKS) and codegen_times
 * (TRIC_CODEGEN_TIMES) are set when their variable is set to anything but "" or "0";
 * llvm_passes (TRIC_LLVM_PIPELINE) and llvm_args (TRIC_LLVM_ARGS) are the variable's text when it
 * is not empty (pointing into the environment), else NULL. Only those five fields of out are
 * written: the environment's values are defaults, which the edge's own flags then override. */
void driver_env_switches(CompileOptions *out);

/* "sm_90a" -> sm 90, arch_specific; false when unknown. */
bool driver_parse_arch(const char *arch, int *sm, bool *arch_specific);
/* The names --passes takes, in the order --passes=all runs them, appended to out with sep
 * between them (passes/pass_list.c's table: --help and the unknown-pass error list them). */
void driver_pass_names(StrBuf *out, const char *sep);

/* What compiled code depends on besides the source and the options, for cache keys (the runtime's
 * JIT cache): this build of tric ("0.1.0 (git 1a2b3c4-dirty)"), the code generator's identity
 * (LLVM's version), and the libdevice file a compile with this override would link (NULL when
 * none is found): the override, else $CUDA_HOME's (read here, at the edge), else the toolkit's
 * codegen finds. */
const char *driver_build_id(void);
void driver_codegen_identity(StrBuf *out);
const char *driver_libdevice_path(const char *override, char *buf, size_t size);

/* ---- imports.c: cross-file imports ----------------------------------------------------------- */

/* Parses file and links into it what its kernels import from other files (relative imports from
 * its directory, absolute ones from its directory then opt->include_dirs): the imported @jit
 * functions and constants they reach, under qualified names ("utils.helper"). NULL with
 * diagnostics on a syntax error (in any file read) or a use of a name whose module was not found.
 * With opt->parse_only nothing is linked. */
Module *driver_parse(const SrcFile *file, const CompileOptions *opt, Arena *arena, Diag *diag);
/* The host values every frontend call evaluates a file's host Python with: given's NAME=VALUE
 * pairs (NULL: none; SpecOptions.host_env) and their readers, Python's readers of the process
 * environment (os.environ.get, os.getenv). The compiler gives them the caller's pairs, never its
 * own environment: a name not given is unset, and the call's default decides. */
HostEnv driver_host_env(const HostEnv *given);
/* Appends to key the path and text of every file driver_parse would read for file (with the host
 * environment env, which decides module-level ifs): what a cached compile depends on besides file
 * itself. */
void driver_import_key(StrBuf *key, const SrcFile *file, const char *const *dirs, int ndirs,
                       const HostEnv *env);

/* ---- emit_c.c: --emit=c ----------------------------------------------------------------------- */

/* Compiles the file to PTX as EMIT_PTX does, then writes C source embedding it (out->output) and
 * its header (out->header) with a typed launcher per kernel (docs/cli.md "--emit=c"); an
 * autotuned kernel's configs get one launcher, dispatching on opt->c_tuned's table where given.
 * driver_compile calls it for EMIT_C. */
bool emit_c_compile(const SrcFile *file, const CompileOptions *opt, CompileResult *out, Diag *diag);

/* ---- entry.c: what the runtime asks of a source besides its compile -------------------------- */

/* The runtime (runtime/) includes no header of frontend/ and calls none of its functions
 * (tests/layering.sh): these are its questions about a source file, answered in plain values. */

/* A kernel of a file: its name and its parameters' names (constexprs included), in order. */
typedef struct DriverKernelInfo {
    const char *name;
    const char **params;
    int nparams;
} DriverKernelInfo;

/* The file's kernels (its @jit functions that no other @jit function calls, in source order) into
 * a's memory; 0 when it has none or does not parse (the compile reports its errors). */
int driver_file_kernels(const SrcFile *file, DriverKernelInfo **out, Arena *a);
/* driver_tune_configs for the kernel spec names in file, *parsed true; when file does not parse,
 * true with *parsed false, out->nconfigs 0 and d cleared: the syntax errors are the compile's to
 * report. */
bool driver_file_tune_configs(const SrcFile *file, const SpecOptions *spec, Autotune *out,
                              bool *parsed, Arena *a, Diag *d);
/* "BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, num_warps=8, num_stages=3" (num_* only when given). */
void driver_config_text(StrBuf *sb, const TuneConfig *c);

/* The forms an autotuned kernel's configs compile in: as written, then one twin form per switch
 * asked as "auto" (--stream-k=auto, --deep-pipeline=auto) and, with both, their combination
 * (stream_k made deep), config f n + i being config i in form forms[f], for the tuner to choose
 * at each key. A form is the set of switches it turns on. */
typedef enum ConfigForm {
    FORM_AS_WRITTEN = 0,
    FORM_STREAM_K = 1,
    FORM_DEEP_PIPELINE = 2,
    FORM_STREAM_K_DEEP = FORM_STREAM_K | FORM_DEEP_PIPELINE,
} ConfigForm;
enum { DRIVER_MAX_FORMS = 4 };
/* The forms in order into forms: FORM_AS_WRITTEN first, FORM_STREAM_K second when asked, the deep
 * ones (FORM_DEEP_PIPELINE, then FORM_STREAM_K_DEEP) last; returns how many (1 to 4). */
int driver_config_forms(bool stream_k_twins, bool deep_pipeline_twins,
                        ConfigForm forms[DRIVER_MAX_FORMS]);
/* What a form adds to a config's text: "", ", stream_k", ", deep_pipeline",
 * ", stream_k, deep_pipeline". */
const char *driver_form_suffix(ConfigForm form);
/* The config a twin's switches were applied to, for twin i of n configs in forms: the same config
 * as written for stream_k and deep_pipeline, its stream_k twin for the two together. */
int driver_form_base(const ConfigForm *forms, int n, int i);

/* A kernel's @triton.heuristics that read run-time arguments, with the parsed source they need;
 * made when the module compiles, evaluated at every launch (docs/runtime.md "Heuristics"). */
typedef struct DriverHeuristics DriverHeuristics;

/* A number a heuristic reads: a run-time argument's value, in Python's terms. */
typedef enum DriverValueKind {
    DRIVER_VALUE_INT,
    DRIVER_VALUE_FLOAT,
    DRIVER_VALUE_BOOL
} DriverValueKind;
typedef struct DriverValue {
    DriverValueKind kind;
    int64_t i; /* INT */
    double f;  /* FLOAT */
    bool b;    /* BOOL */
} DriverValue;
/* What run-time argument `index` (counted among the run-time parameters) is at this evaluation:
 * true with its value, or false with a reason that the error at the subscript quotes. */
typedef bool (*DriverArgFn)(void *ctx, int index, DriverValue *out, const char **why);

/* Reads file's kernel (NULL: its only one) and its @triton.heuristics; when one whose target the
 * constexprs ("NAME=VALUE") give no value reads a run-time parameter, returns them (free with
 * driver_heuristics_free). NULL otherwise: no such heuristic, a kernel of more than max_params
 * parameters, or a file that does not read (the compile reports it). */
DriverHeuristics *driver_heuristics_read(const SrcFile *file, const char *kernel,
                                         const char *const *constexprs, int nconstexprs,
                                         int max_params);
/* The kernel's name. */
const char *driver_heuristics_kernel(const DriverHeuristics *h);
/* Evaluates, in order, the heuristics whose target the constexprs of read give no value: what
 * args["P"] reads is an earlier heuristic's result, the last of these constexprs naming P, P's
 * literal default (a constexpr), or arg's value (a run-time parameter). true with the values
 * appended to key as "A=1 B=True"; false with the error appended to error. Thread-safe: h is
 * only read. */
bool driver_heuristics_eval(const DriverHeuristics *h, const char *const *constexprs,
                            int nconstexprs, DriverArgFn arg, void *arg_ctx, StrBuf *key,
                            StrBuf *error);
void driver_heuristics_free(DriverHeuristics *h);

#endif
