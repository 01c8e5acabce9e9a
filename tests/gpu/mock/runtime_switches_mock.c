/* runtime_switches_mock: the compile switches that change code are part of the JIT cache key.
 * Against the stand-in libcuda.so.1 (sm_90a; bench/CMakeLists.txt registers the test), every
 * compile goes through one fresh cache directory, with and without each switch, and the second
 * compile must not get the first's code:
 *   - no TMA: a process with TRIC_NO_TMA=1 compiles seed 2 (cp.async copies) first; this one,
 *     without it, still gets its TMA copies (the stale entry seen on the GPU), and with
 *     opt.no_tma finds the other process's entry;
 *   - the LLVM pipeline: vector_add with opt.llvm_passes is another entry, other PTX; a process
 *     with TRIC_LLVM_PIPELINE set to the same finds it;
 *   - LLVM args: another process compiles slp.tri's fp16 multiply with -nvptx-no-f16-math (fp32
 *     multiplies); this one, whose first compile fixed LLVM's options to none, is refused when it
 *     would compile with them, and finds the other's entry through the cache;
 *   - heavy first: a kernel whose loop grows with its program id (a triangle) compiled as the
 *     pass reorders it and with opt.no_heavy_first is two entries, two codes;
 *   - loop fusion: fuse_loops.tri's two loops (split) as one loop, and with opt.no_fuse_loops as
 *     two, are two entries, two codes;
 *   - ping-pong: tutorial 09's warp-specialized persistent matmul with opt.pingpong (two
 *     consumer groups, 384 threads) is another entry than without (256 threads);
 *   - the producer the pass chooses: tutorial 06's attention at D = 128 on 8 warps gets one
 *     (setmaxnreg, 384 threads) though its loop does not ask; with
 *     opt.no_auto_warp_specialize it is another entry without one (256 threads);
 *   - persistent grids: that attention is persistent by default (its loop over tiles gets the
 *     producer), with opt.no_auto_persistent another entry that is not; vector_add with
 *     opt.persistent is another entry that is;
 *   - that attention with opt.overlap_dots (p @ v an iteration late) is another entry;
 *   - a diagnostics-only switch (TRIC_PIPELINE_REMARKS) changes no key.
 * The environment is read once per process, so each variable is tried in a child process: this
 * program run again (/proc/self/exe) with a mode argument. Skips (77) without the mock. */
#include "runtime/runtime.h"
#include "tests/runtime_check.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *seed2_path = TRIC_SOURCE_DIR "/examples/matmul.tri";
static const char *va_path = TRIC_SOURCE_DIR "/examples/vector_add.tri";
static const char *f16_path = TRIC_SOURCE_DIR "/tests/lit/codegen/slp.tri";
static const char *triangle_path = TRIC_SOURCE_DIR "/tests/lit/passes/Inputs/heavy_first.tri";
static const char *pdesc_path = TRIC_SOURCE_DIR "/examples/persistent_desc_matmul.tri";
static const char *attn_path = TRIC_SOURCE_DIR "/examples/attention.tri";
static const char *split_path = TRIC_SOURCE_DIR "/tests/lit/passes/Inputs/fuse_loops.tri";

/* The kernels the test compiles, by name: seed 2 at 128x128x64, vector_add, heavy_first.tri's
 * triangle, tutorial 09's persistent matmul warp-specialized (pdesc), tutorial 06's attention
 * forward at D = 128, 128 x 128 blocks, 8 warps, 3 stages (attn), fuse_loops.tri's two loops
 * (split), slp.tri's fp16 mul. */
static tric_compile_options kernel_options(const char *which, const char **path)
{
    static const char *seed2_defs[] = {"BLOCK_SIZE_M=128", "BLOCK_SIZE_N=128", "BLOCK_SIZE_K=64",
                                       "GROUP_SIZE_M=8",   "T_C=tl.float16",   "T_ACC=tl.float32"};
    static const char *va_defs[] = {"BLOCK_SIZE=1024"};
    static const char *f16_defs[] = {"BLOCK=1024"};
    static const char *triangle_defs[] = {"BLOCK=128"};
    static const char *split_defs[] = {"BLOCK=32", "SPAN=64", "CASE=0"};
    static const char *attn_defs[] = {"HEAD_DIM=128", "BLOCK_M=128", "BLOCK_N=128", "STAGE=1",
                                      "num_stages=3"};
    static const char *pdesc_defs[] = {"BLOCK_SIZE_M=128", "BLOCK_SIZE_N=128",
                                       "BLOCK_SIZE_K=64",  "GROUP_SIZE_M=8",
                                       "NUM_SMS=132",      "WARP_SPECIALIZE=True"};
    tric_compile_options opt = tric_compile_options_default();
    if (!strcmp(which, "seed2")) {
        *path = seed2_path;
        opt.kernel = "kernel_matmul";
        opt.signature = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,"
                        "i32:1,i32:16,i32:1";
        opt.constexprs = seed2_defs;
        opt.nconstexprs = 6;
    } else if (!strcmp(which, "va")) {
        *path = va_path;
        opt.kernel = "vector_add_kernel";
        opt.signature = "*fp32:16,*fp32:16,*fp32:16,i32:16";
        opt.constexprs = va_defs;
        opt.nconstexprs = 1;
    } else if (!strcmp(which, "pdesc")) {
        *path = pdesc_path;
        opt.kernel = "matmul_kernel_descriptor_persistent";
        opt.signature = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16";
        opt.constexprs = pdesc_defs;
        opt.nconstexprs = 6;
        opt.num_stages = 4;
    } else if (!strcmp(which, "attn")) {
        *path = attn_path;
        opt.kernel = "attn_fwd";
        opt.signature = "*fp16:16,*fp16:16,*fp16:16,fp32,*fp32:16,*fp16:16,i32:16,i32:16,i32:16,"
                        "i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32:16,i32,i32:16";
        opt.constexprs = attn_defs;
        opt.nconstexprs = 5;
        opt.num_warps = 8;
    } else if (!strcmp(which, "split")) {
        *path = split_path;
        opt.kernel = "split_sum";
        opt.signature = "*fp32:16,*fp32:16,*fp32:16";
        opt.constexprs = split_defs;
        opt.nconstexprs = 3;
    } else if (!strcmp(which, "triangle")) {
        *path = triangle_path;
        opt.kernel = "triangle";
        opt.constexprs = triangle_defs;
        opt.nconstexprs = 1;
    } else {
        *path = f16_path;
        opt.kernel = "mul";
        opt.signature = "*fp16:16,*fp16:16,*fp16:16";
        opt.constexprs = f16_defs;
        opt.nconstexprs = 1;
    }
    return opt;
}

/* Compiles a kernel on dev; the module (NULL on failure) and its status. */
static tric_status compile(tric_device dev, const char *which, const tric_compile_options *extra,
                           tric_module *mod)
{
    const char *path = NULL;
    tric_compile_options opt = kernel_options(which, &path);
    if (extra) {
        opt.no_tma = extra->no_tma;
        opt.llvm_passes = extra->llvm_passes;
        opt.llvm_args = extra->llvm_args;
        opt.no_cache = extra->no_cache;
        opt.no_heavy_first = extra->no_heavy_first;
        opt.no_fuse_loops = extra->no_fuse_loops;
        opt.pingpong = extra->pingpong;
        opt.tma_store = extra->tma_store;
        opt.no_auto_warp_specialize = extra->no_auto_warp_specialize;
        opt.persistent = extra->persistent;
        opt.no_auto_persistent = extra->no_auto_persistent;
        opt.overlap_dots = extra->overlap_dots;
    }
    *mod = NULL;
    return tric_module_compile_file(dev, path, &opt, mod);
}

static bool has(tric_module mod, const char *text)
{
    return mod && strstr(tric_module_code(mod), text) != NULL;
}

/* Compiles `which` without and with a code switch (extra) into *plain and *switched: the second
 * is a cache entry of its own whose PTX differs from the first's, and compiling with the switch
 * again finds it. The caller checks what each PTX holds and destroys both. */
static void compile_switch(tric_device dev, const char *which, const tric_compile_options *extra,
                           tric_module *plain, tric_module *switched)
{
    tric_module again;
    CHECK(compile(dev, which, NULL, plain) == TRIC_SUCCESS);
    CHECK(compile(dev, which, extra, switched) == TRIC_SUCCESS);
    CHECK(*plain && *switched && !(*switched)->from_cache &&
          strcmp(tric_module_code(*plain), tric_module_code(*switched)) != 0);
    CHECK(compile(dev, which, extra, &again) == TRIC_SUCCESS);
    CHECK(again && again->from_cache && *switched &&
          !strcmp(tric_module_code(*switched), tric_module_code(again)));
    tric_module_destroy(again);
}

static void destroy_both(tric_module a, tric_module b)
{
    tric_module_destroy(a);
    tric_module_destroy(b);
}

/* heavy_first reverses the triangle's programs (%nctaid.x - 1 - %ctaid.x); no_heavy_first keeps
 * them as written, in an entry of its own. */
static void test_no_heavy_first(tric_device dev)
{
    tric_module reordered, as_written;
    tric_compile_options extra = tric_compile_options_default();
    extra.no_heavy_first = 1;
    compile_switch(dev, "triangle", &extra, &reordered, &as_written);
    CHECK(has(reordered, "%nctaid.x") && as_written && !has(as_written, "%nctaid.x"));
    destroy_both(reordered, as_written);
}

/* fuse_loops makes split's two loops one; no_fuse_loops keeps two, in an entry of its own. */
static void test_no_fuse_loops(tric_device dev)
{
    tric_module fused, as_written;
    tric_compile_options extra = tric_compile_options_default();
    extra.no_fuse_loops = 1;
    compile_switch(dev, "split", &extra, &fused, &as_written);
    destroy_both(fused, as_written);
}

/* pingpong gives the warp-specialized persistent matmul ("pdesc") a second consumer group (384
 * threads, the groups' turns on named barrier 4 and 5); without it the kernel keeps one (256
 * threads): two entries. */
static void test_pingpong(tric_device dev)
{
    tric_module one, two;
    tric_compile_options extra = tric_compile_options_default();
    extra.pingpong = 1;
    compile_switch(dev, "pdesc", &extra, &one, &two);
    CHECK(one && !has(one, "barrier.sync 4, 256") && has(one, ".maxntid 256, 1, 1"));
    CHECK(has(two, "barrier.sync 4, 256") && has(two, ".maxntid 384, 1, 1"));
    destroy_both(one, two);
}

/* tma_store: the persistent matmul's C tile through a TMA copy, its own cache entry. */
static void test_tma_store(tric_device dev)
{
    static const char copy[] = "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group";
    tric_module plain, stored;
    tric_compile_options extra = tric_compile_options_default();
    extra.tma_store = 1;
    compile_switch(dev, "pdesc", &extra, &plain, &stored);
    CHECK(plain && !has(plain, copy));
    CHECK(has(stored, copy) && has(stored, "cp.async.bulk.wait_group.read 0"));
    destroy_both(plain, stored);
}

/* The producer warpgroup the pass gives attention's loop (setmaxnreg, 384 threads) by default;
 * no_auto_warp_specialize keeps the loop as written (256 threads) in an entry of its own. */
static void test_no_auto_warp_specialize(tric_device dev)
{
    tric_module chosen, as_written;
    tric_compile_options extra = tric_compile_options_default();
    extra.no_auto_warp_specialize = 1;
    compile_switch(dev, "attn", &extra, &chosen, &as_written);
    CHECK(has(chosen, "setmaxnreg") && has(chosen, ".maxntid 384, 1, 1"));
    CHECK(as_written && !has(as_written, "setmaxnreg") && has(as_written, ".maxntid 256, 1, 1"));
    destroy_both(chosen, as_written);
}

/* Attention's grid is persistent by default (docs/passes.md "persistent": its loop over tiles
 * gets the producer); no_auto_persistent keeps the grid, in an entry of its own. vector_add is a
 * grid unless persistent asks, another entry again. */
static void test_persistent(tric_device dev)
{
    static const char marker[] = "// tric.persistent workspace=none";
    tric_module made, grid, va, va_made;
    tric_compile_options extra = tric_compile_options_default();
    extra.no_auto_persistent = 1;
    compile_switch(dev, "attn", &extra, &made, &grid);
    CHECK(has(made, "// tric.persistent workspace=none axes=2") && has(made, "setmaxnreg"));
    CHECK(grid && !has(grid, marker) && has(grid, "setmaxnreg"));
    destroy_both(made, grid);
    extra = tric_compile_options_default();
    extra.persistent = 1;
    compile_switch(dev, "va", &extra, &va, &va_made);
    CHECK(va && !has(va, marker) && has(va_made, marker));
    destroy_both(va, va_made);
}

/* overlap_dots issues attention's p @ v an iteration late, guarded off in the first (the PTX's
 * skip branch), in an entry of its own; attention as written has none. */
static void test_overlap_dots(tric_device dev)
{
    tric_module plain, late;
    tric_compile_options extra = tric_compile_options_default();
    extra.overlap_dots = 1;
    compile_switch(dev, "attn", &extra, &plain, &late);
    CHECK(plain && !has(plain, "@!g bra skip") && has(late, "@!g bra skip"));
    destroy_both(plain, late);
}

/* ---- the child: `runtime_switches_mock KERNEL [LLVM_ARGS]` ------------------------------------ */

enum { CHILD_COMPILED = 0, CHILD_FAILED = 1, CHILD_FROM_CACHE = 3 };

static int child(const char *which, const char *llvm_args)
{
    tric_device dev;
    tric_module mod;
    tric_compile_options extra = tric_compile_options_default();
    extra.llvm_args = llvm_args;
    if (tric_device_open("cuda:0", &dev) != TRIC_SUCCESS ||
        compile(dev, which, &extra, &mod) != TRIC_SUCCESS) {
        fprintf(stderr, "child %s: %s\n", which, tric_last_error());
        return CHILD_FAILED;
    }
    int status = mod->from_cache ? CHILD_FROM_CACHE : CHILD_COMPILED;
    tric_module_destroy(mod);
    tric_device_close(dev);
    return status;
}

/* Runs this program as a child with one more environment variable ("NAME=VALUE", or NULL); its
 * exit status. */
static int run_child(const char *env, const char *which, const char *llvm_args)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (env)
            putenv((char *)env);
        execl("/proc/self/exe", "runtime_switches_mock", which, llvm_args, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

/* ---- the checks ------------------------------------------------------------------------------- */

static void test_no_tma(tric_device dev)
{
    /* Another process, with TRIC_NO_TMA=1, compiles first: its entry holds cp.async copies. */
    CHECK(run_child("TRIC_NO_TMA=1", "seed2", NULL) == CHILD_COMPILED);
    tric_module plain, again, no_tma;
    CHECK(compile(dev, "seed2", NULL, &plain) == TRIC_SUCCESS);
    CHECK(plain && !plain->from_cache);
    CHECK(has(plain, "cp.async.bulk.tensor") && !has(plain, "cp.async.cg"));
    CHECK(compile(dev, "seed2", NULL, &again) == TRIC_SUCCESS);
    CHECK(again && again->from_cache && !strcmp(tric_module_code(plain), tric_module_code(again)));
    /* The option is the same switch as the variable: the other process's entry. */
    tric_compile_options extra = tric_compile_options_default();
    extra.no_tma = 1;
    CHECK(compile(dev, "seed2", &extra, &no_tma) == TRIC_SUCCESS);
    CHECK(no_tma && no_tma->from_cache);
    CHECK(has(no_tma, "cp.async.cg") && !has(no_tma, "cp.async.bulk.tensor"));
    /* Remarks print; they change no code, and no key. */
    CHECK(run_child("TRIC_PIPELINE_REMARKS=1", "seed2", NULL) == CHILD_FROM_CACHE);
    tric_module_destroy(plain);
    tric_module_destroy(again);
    tric_module_destroy(no_tma);
}

static void test_llvm_passes(tric_device dev)
{
    tric_module o3, mine, again;
    CHECK(compile(dev, "va", NULL, &o3) == TRIC_SUCCESS);
    CHECK(o3 && !o3->from_cache);
    tric_compile_options extra = tric_compile_options_default();
    extra.llvm_passes = "globaldce,function(instcombine)";
    CHECK(compile(dev, "va", &extra, &mine) == TRIC_SUCCESS);
    CHECK(mine && !mine->from_cache);
    CHECK(o3 && mine && strcmp(tric_module_code(o3), tric_module_code(mine)) != 0);
    CHECK(compile(dev, "va", &extra, &again) == TRIC_SUCCESS);
    CHECK(again && again->from_cache && mine &&
          !strcmp(tric_module_code(mine), tric_module_code(again)));
    /* The variable is the same switch as the option. */
    CHECK(run_child("TRIC_LLVM_PIPELINE=globaldce,function(instcombine)", "va", NULL) ==
          CHILD_FROM_CACHE);
    tric_module_destroy(o3);
    tric_module_destroy(mine);
    tric_module_destroy(again);
}

static void test_llvm_args(tric_device dev)
{
    static const char no_f16[] = "-nvptx-no-f16-math";
    /* This process generated code with no LLVM args: others are refused, not silently ignored. */
    tric_compile_options extra = tric_compile_options_default();
    extra.llvm_args = no_f16;
    extra.no_cache = 1;
    tric_module refused;
    CHECK(compile(dev, "f16", &extra, &refused) == TRIC_ERROR_COMPILE && !refused);
    CHECK(strstr(tric_last_error(),
                 "tric: error: --llvm-args '-nvptx-no-f16-math': LLVM's options are set once per "
                 "process, and this process's first compile set them to ''") != NULL);
    /* Another process compiles with them, a third finds its entry through the variable. */
    CHECK(run_child(NULL, "f16", no_f16) == CHILD_COMPILED);
    CHECK(run_child("TRIC_LLVM_ARGS=-nvptx-no-f16-math", "f16", NULL) == CHILD_FROM_CACHE);
    tric_module plain, theirs;
    CHECK(compile(dev, "f16", NULL, &plain) == TRIC_SUCCESS);
    CHECK(plain && !plain->from_cache && has(plain, "mul.rn.f16x2"));
    extra.no_cache = 0;
    CHECK(compile(dev, "f16", &extra, &theirs) == TRIC_SUCCESS);
    CHECK(theirs && theirs->from_cache);
    CHECK(!has(theirs, "mul.rn.f16x2") && has(theirs, "mul.rn.f32"));
    tric_module_destroy(plain);
    tric_module_destroy(theirs);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        return child(argv[1], argc > 2 ? argv[2] : NULL);
    /* None of the switches may come from the environment of the test itself. */
    static const char *const vars[] = {
        "TRIC_NO_TMA",   "TRIC_LLVM_PIPELINE",    "TRIC_LLVM_ARGS",    "TRIC_ARCH",
        "TRIC_NO_CACHE", "TRIC_PIPELINE_REMARKS", "TRIC_CODEGEN_TIMES"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    tric_device dev;
    if (tric_device_open("cuda:0", &dev) != TRIC_SUCCESS) {
        printf("SKIP: %s\n", tric_last_error());
        return 77;
    }
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib || !dlsym(lib, "mock_state")) {
        printf("SKIP: the libcuda.so.1 loaded is not the mock (%s)\n", tric_device_name(dev));
        return 77;
    }
    CHECK(strcmp(tric_device_arch(dev), "sm_90a") == 0);
    char dir[] = "/tmp/tric-switches-XXXXXX";
    if (!mkdtemp(dir)) {
        printf("FAIL: mkdtemp\n");
        return 1;
    }
    setenv("TRIC_CACHE_DIR", dir, 1);
    test_no_tma(dev);
    test_no_heavy_first(dev);
    test_no_fuse_loops(dev);
    test_pingpong(dev);
    test_tma_store(dev);
    test_no_auto_warp_specialize(dev);
    test_llvm_passes(dev);
    test_llvm_args(dev);
    test_persistent(dev);
    test_overlap_dots(dev);
    tric_device_close(dev);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "note: could not remove %s\n", dir);
    if (failures) {
        printf("FAIL: %d check(s)\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
