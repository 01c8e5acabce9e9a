/* runtime_autotune: autotuning on the cpu device. Seed 2's kernel_matmul compiled from
 * examples/matmul.tri as the seed writes it -- its @triton.autotune decorator, 16 configs built by
 * a helper, key M, N, K -- with no values for the block sizes is one tuned kernel: every config
 * compiles (the five whose stage buffers overflow sm_90's shared memory are not a concern for the
 * interpreter), the first one runs untimed, the grid comes from the config as the seed's lambda
 * computes it, and the product is right. A kernel without a decorator tunes over configs given
 * from C. A source with several kernels is one module. Bad input: a key naming no parameter,
 * configs that all fail, a malformed decorator, constexprs or a signature that fit no kernel. */
#include "examples/example_kernels.h"
#include "runtime/runtime.h"
#include "tests/runtime_check.h"

#include <stdlib.h>

static const char *matmul_path(void) { return TRIC_SOURCE_DIR "/examples/matmul.tri"; }

static void test_seed2(tric_device dev)
{
    tric_module mod;
    tric_kernel k, c;
    if (ex_compile_seed2_tuned(dev, matmul_path(), 8, &mod, &k) != TRIC_SUCCESS) {
        CHECK(!"seed 2 compiles as an autotuned kernel");
        return;
    }
    CHECK(tric_kernel_num_configs(k) == 16);
    CHECK(tric_kernel_num_params(k) == 12);
    for (int i = 0; i < 16; i++)
        CHECK(tric_kernel_config(k, i, &c) == TRIC_SUCCESS);
    int64_t v = 0;
    CHECK(tric_kernel_config(k, 6, &c) == TRIC_SUCCESS && tric_kernel_threads(c) == 64 &&
          strcmp(tric_kernel_config_text(c), "BLOCK_SIZE_M=64, BLOCK_SIZE_N=32, BLOCK_SIZE_K=32, "
                                             "num_warps=2, num_stages=5") == 0);
    CHECK(tric_kernel_constexpr(c, "BLOCK_SIZE_N", &v) == TRIC_SUCCESS && v == 32);
    CHECK(tric_kernel_constexpr(c, "GROUP_SIZE_M", &v) == TRIC_SUCCESS && v == 8);
    CHECK(tric_kernel_constexpr(c, "T_C", &v) == TRIC_ERROR_INVALID_ARGUMENT);
    CHECK(tric_kernel_constexpr(c, "NOPE", &v) == TRIC_ERROR_NOT_FOUND);
    CHECK(strcmp(tric_kernel_config_text(k), "") == 0);
    CHECK(tric_kernel_config(k, 16, &c) == TRIC_ERROR_INVALID_ARGUMENT);

    /* Config 0 is 128x256x64 and the kernel has no masks: sizes that are multiples of it. */
    enum { M = 128, N = 256, K = 128 };
    uint16_t *ha = malloc(sizeof *ha * M * K), *hb = malloc(sizeof *hb * K * N),
             *hc = malloc(sizeof *hc * M * N);
    for (int i = 0; i < M * K; i++)
        ha[i] = tric_f32_to_f16((float)((i * 7) % 11) / 8.0f - 0.5f);
    for (int i = 0; i < K * N; i++)
        hb[i] = tric_f32_to_f16((float)((i * 5) % 13) / 8.0f - 0.75f);
    tric_buffer a, b, cb;
    CHECK(tric_buffer_alloc(dev, 2 * M * K, &a) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, 2 * K * N, &b) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, 2 * M * N, &cb) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(a, 0, ha, 2 * M * K, NULL) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(b, 0, hb, 2 * K * N, NULL) == TRIC_SUCCESS);
    tric_arg args[] = {TRIC_ARG_BUF(a), TRIC_ARG_BUF(b), TRIC_ARG_BUF(cb), TRIC_ARG_I32(M),
                       TRIC_ARG_I32(N), TRIC_ARG_I32(K), TRIC_ARG_I32(K),  TRIC_ARG_I32(1),
                       TRIC_ARG_I32(N), TRIC_ARG_I32(1), TRIC_ARG_I32(N),  TRIC_ARG_I32(1)};
    int chosen = -1;
    CHECK(tric_kernel_tune(k, ex_seed2_grid, NULL, args, 12, NULL, &chosen) == TRIC_SUCCESS &&
          chosen == 0);
    CHECK(tric_launch_grid(k, ex_seed2_grid, NULL, args, 12, NULL) == TRIC_SUCCESS);
    CHECK(tric_copy_to_host(hc, cb, 0, 2 * M * N, NULL) == TRIC_SUCCESS);
    int bad = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float want = 0;
            for (int kk = 0; kk < K; kk++)
                want += tric_f16_to_f32(ha[i * K + kk]) * tric_f16_to_f32(hb[kk * N + j]);
            float got = tric_f16_to_f32(hc[i * N + j]);
            bad += !(got - want < 0.05f + 0.01f * (want < 0 ? -want : want) &&
                     want - got < 0.05f + 0.01f * (want < 0 ? -want : want));
        }
    CHECK(bad == 0);
    /* Wrong arguments are still the launch's clear error. */
    CHECK(tric_launch_grid(k, ex_seed2_grid, NULL, args, 11, NULL) == TRIC_ERROR_INVALID_ARGUMENT);
    tric_buffer_free(a);
    tric_buffer_free(b);
    tric_buffer_free(cb);
    free(ha);
    free(hb);
    free(hc);
    tric_module_destroy(mod);

    /* All block sizes given: the kernel compiles as asked, untuned. */
    static const char *all[] = {"GROUP_SIZE_M=8",  "T_C=tl.float16",  "T_ACC=tl.float32",
                                "BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=32"};
    tric_compile_options opt = tric_compile_options_default();
    opt.kernel = "kernel_matmul";
    opt.signature = "*fp16,*fp16,*fp16,i32,i32,i32,i32,i32,i32,i32,i32,i32";
    opt.constexprs = all;
    opt.nconstexprs = 6;
    CHECK(tric_module_compile_file(dev, matmul_path(), &opt, &mod) == TRIC_SUCCESS &&
          tric_module_get_kernel(mod, NULL, &k) == TRIC_SUCCESS && tric_kernel_num_configs(k) == 0);
    tric_module_destroy(mod);
    /* Some given: only the configs agreeing with them (BLOCK_SIZE_K=128: configs 8-12). */
    opt.constexprs = (const char *[]){"GROUP_SIZE_M=8", "T_C=tl.float16", "T_ACC=tl.float32",
                                      "BLOCK_SIZE_K=128"};
    opt.nconstexprs = 4;
    CHECK(tric_module_compile_file(dev, matmul_path(), &opt, &mod) == TRIC_SUCCESS &&
          tric_module_get_kernel(mod, NULL, &k) == TRIC_SUCCESS && tric_kernel_num_configs(k) == 5);
    tric_module_destroy(mod);
}

static tric_dim3 va_grid(tric_kernel config, const tric_arg *args, int nargs, void *user)
{
    (void)nargs;
    (void)user;
    int64_t block = 1;
    tric_kernel_constexpr(config, "BLOCK_SIZE", &block);
    return (tric_dim3){(unsigned)((args[3].v.i32 + block - 1) / block), 1, 1};
}

static void test_c_configs(tric_device dev)
{
    const char *path = TRIC_SOURCE_DIR "/examples/vector_add.tri";
    static const char *b3[] = {"BLOCK_SIZE=3"}, *b128[] = {"BLOCK_SIZE=128"},
                      *b256[] = {"BLOCK_SIZE=256"};
    tric_tune_config configs[] = {{b3, 1, 0, 0}, {b128, 1, 2, 0}, {b256, 1, 4, 0}};
    tric_compile_options opt = ex_vector_add_tuned_options(configs, 3);
    tric_module mod;
    tric_kernel k, c;
    if (tric_module_compile_file(dev, path, &opt, &mod) != TRIC_SUCCESS ||
        tric_module_get_kernel(mod, NULL, &k) != TRIC_SUCCESS) {
        CHECK(!"vector_add compiles with configs from C");
        return;
    }
    /* BLOCK_SIZE=3 is left out (arange needs a power of two), with its reason. */
    CHECK(tric_kernel_num_configs(k) == 3);
    CHECK(tric_kernel_config(k, 0, &c) == TRIC_ERROR_COMPILE &&
          strstr(tric_last_error(), "config 0 (BLOCK_SIZE=3) was left out") &&
          strstr(tric_last_error(), "power of two"));
    enum { N = 1000 };
    static float hx[N], hy[N], ho[N];
    for (int i = 0; i < N; i++)
        hx[i] = (float)i, hy[i] = 0.5f;
    tric_buffer x, y, o;
    CHECK(tric_buffer_alloc(dev, sizeof hx, &x) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, sizeof hy, &y) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, sizeof ho, &o) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(x, 0, hx, sizeof hx, NULL) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(y, 0, hy, sizeof hy, NULL) == TRIC_SUCCESS);
    tric_arg args[] = {TRIC_ARG_BUF(x), TRIC_ARG_BUF(y), TRIC_ARG_BUF(o), TRIC_ARG_I32(N)};
    int chosen = -1;
    CHECK(tric_kernel_tune(k, va_grid, NULL, args, 4, NULL, &chosen) == TRIC_SUCCESS &&
          chosen == 1);
    CHECK(tric_launch_grid(k, va_grid, NULL, args, 4, NULL) == TRIC_SUCCESS);
    CHECK(tric_copy_to_host(ho, o, 0, sizeof ho, NULL) == TRIC_SUCCESS);
    for (int i = 0; i < N; i++)
        CHECK(ho[i] == (float)i + 0.5f);
    /* tric_launch_ex with a grid function (its grid argument ignored: an empty one here) and a
     * programmatic dependent launch, which the interpreter runs as any launch */
    CHECK(tric_memset(o, 0, 0, sizeof ho, NULL) == TRIC_SUCCESS);
    tric_launch_options lo = {.programmatic_dependent = 1, .grid_fn = va_grid};
    CHECK(tric_launch_ex(k, (tric_dim3){0, 0, 0}, args, 4, NULL, &lo) == TRIC_SUCCESS);
    CHECK(tric_copy_to_host(ho, o, 0, sizeof ho, NULL) == TRIC_SUCCESS);
    for (int i = 0; i < N; i++)
        CHECK(ho[i] == (float)i + 0.5f);
    CHECK(tric_launch_ex(NULL, (tric_dim3){1, 1, 1}, args, 4, NULL, &lo) ==
              TRIC_ERROR_INVALID_ARGUMENT &&
          strcmp(tric_last_error(), "tric_launch_ex: kernel is NULL") == 0);
    CHECK(tric_launch_ex(k, (tric_dim3){1, 1, 1}, args, 3, NULL, &lo) ==
          TRIC_ERROR_INVALID_ARGUMENT);
    tric_buffer_free(x);
    tric_buffer_free(y);
    tric_buffer_free(o);
    tric_module_destroy(mod);

    /* Bad input. */
    const char *const *key = opt.tune_key;
    static const char *nokey[] = {"n"};
    opt.tune_key = nokey;
    CHECK(tric_module_compile_file(dev, path, &opt, &mod) == TRIC_ERROR_INVALID_ARGUMENT &&
          strstr(tric_last_error(), "key names 'n', which is not a run-time parameter (they are: "
                                    "x_ptr y_ptr output_ptr n_elements)"));
    opt.tune_key = key;
    static const char *restore[] = {"n_elements"};
    opt.tune_restore = restore;
    opt.ntune_restore = 1;
    CHECK(tric_module_compile_file(dev, path, &opt, &mod) == TRIC_ERROR_INVALID_ARGUMENT &&
          strstr(tric_last_error(), "restore_value names 'n_elements', which is not a pointer"));
    opt.tune_restore = NULL;
    opt.ntune_restore = 0;
    static const char *b5[] = {"BLOCK_SIZE=5"}, *bad[] = {"BLOCK_SIZE"};
    tric_tune_config none[] = {{b3, 1, 0, 0}, {b5, 1, 0, 0}};
    opt.tune_configs = none;
    opt.ntune_configs = 2;
    CHECK(tric_module_compile_file(dev, path, &opt, &mod) == TRIC_ERROR_COMPILE &&
          strstr(tric_last_error(), "autotune: none of the 2 configs compiles:\n  config 0 "
                                    "(BLOCK_SIZE=3): ") &&
          strstr(tric_last_error(), "\n  config 1 (BLOCK_SIZE=5): "));
    tric_tune_config malformed[] = {{bad, 1, 0, 0}};
    opt.tune_configs = malformed;
    opt.ntune_configs = 1;
    CHECK(tric_module_compile_file(dev, path, &opt, &mod) == TRIC_ERROR_INVALID_ARGUMENT &&
          strstr(tric_last_error(), "is not of the form NAME=VALUE"));

    /* A decorator naming no parameter in its key: the compiler's error, with the caret. */
    static const char src[] = "import triton\nimport triton.language as tl\n"
                              "@triton.autotune(configs=[triton.Config({'B': 64})], key=['m'])\n"
                              "@triton.jit\n"
                              "def k(x: '*fp32', n: 'i32', B: tl.constexpr):\n"
                              "    tl.store(x + tl.arange(0, B), 1.0)\n";
    tric_compile_options plain = tric_compile_options_default();
    CHECK(tric_module_compile(dev, src, "tuned.tri", &plain, &mod) == TRIC_ERROR_COMPILE &&
          strstr(tric_last_error(), "tuned.tri:3:59: error: autotune: key names 'm', which is not "
                                    "a parameter of k\n"));
}

/* host_env: what the source's host Python reads through os.environ.get where its configs are
 * built. The library passes nothing of its own environment (the variable set in this process
 * changes nothing); given in the options, it changes the configs, and it is part of the cache
 * key. An entry not of the form NAME=VALUE is refused. */
static void test_host_env(tric_device dev)
{
    static const char src[] = "import os\nimport triton\nimport triton.language as tl\n"
                              "ONE = os.environ.get('ONE_CONFIG', '0') == '1'\n"
                              "CONFIGS = [triton.Config({'B': b}) for b in ((64,) if ONE else "
                              "(32, 64, 128))]\n"
                              "@triton.autotune(configs=CONFIGS, key=['n'])\n"
                              "@triton.jit\n"
                              "def k(x: '*fp32', n: 'i32', B: tl.constexpr):\n"
                              "    tl.store(x + tl.arange(0, B), 1.0)\n";
    setenv("ONE_CONFIG", "1", 1);
    tric_compile_options opt = tric_compile_options_default();
    tric_module mod;
    tric_kernel k;
    CHECK(tric_module_compile(dev, src, "env.tri", &opt, &mod) == TRIC_SUCCESS &&
          tric_module_get_kernel(mod, "k", &k) == TRIC_SUCCESS && tric_kernel_num_configs(k) == 3);
    tric_module_destroy(mod);
    unsetenv("ONE_CONFIG");
    static const char *const one[] = {"ONE_CONFIG=1"};
    opt.host_env = one;
    opt.nhost_env = 1;
    CHECK(tric_module_compile(dev, src, "env.tri", &opt, &mod) == TRIC_SUCCESS &&
          tric_module_get_kernel(mod, "k", &k) == TRIC_SUCCESS && tric_kernel_num_configs(k) == 1);
    tric_module_destroy(mod);

    StrBuf with = {0}, without = {0};
    tric_compile_options plain = tric_compile_options_default();
    rt_options_key(&with, &opt, NULL);
    rt_options_key(&without, &plain, NULL);
    CHECK(strcmp(with.data, without.data) != 0 && strstr(with.data, "ONE_CONFIG=1"));
    strbuf_free(&with);
    strbuf_free(&without);

    static const char *const bad[] = {"ONE_CONFIG"};
    opt.host_env = bad;
    CHECK_MSG(tric_module_compile(dev, src, "env.tri", &opt, &mod), TRIC_ERROR_INVALID_ARGUMENT,
              "host_env 'ONE_CONFIG' is not of the form NAME=VALUE");
}

/* A source with several kernels, compiled with no kernel named: one module holding each (the
 * autotuned one as its tuned kernel), the constexprs going to the kernels that have them. */
static void test_file_kernels(tric_device dev)
{
    static const char src[] =
        "import triton\nimport triton.language as tl\n"
        "@triton.jit\n"
        "def add_one(x_ptr: '*fp32', n: 'i32', BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)\n"
        "@triton.autotune(configs=[triton.Config({'B': 64}), triton.Config({'B': 128})],\n"
        "                 key=['n'])\n"
        "@triton.jit\n"
        "def scale(x_ptr: '*fp32', n: 'i32', B: tl.constexpr):\n"
        "    offs = tl.program_id(0) * B + tl.arange(0, B)\n"
        "    tl.store(x_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n";
    static const char *defs[] = {"BLOCK=32"};
    tric_compile_options opt = tric_compile_options_default();
    opt.constexprs = defs;
    opt.nconstexprs = 1;
    tric_module mod;
    tric_kernel add, scale;
    if (tric_module_compile(dev, src, "two.tri", &opt, &mod) != TRIC_SUCCESS) {
        CHECK(!"a source with two kernels compiles as one module");
        return;
    }
    CHECK(tric_module_get_kernel(mod, "add_one", &add) == TRIC_SUCCESS &&
          tric_kernel_num_configs(add) == 0);
    CHECK(tric_module_get_kernel(mod, "scale", &scale) == TRIC_SUCCESS &&
          tric_kernel_num_configs(scale) == 2);
    CHECK(tric_module_get_kernel(mod, "other", &add) == TRIC_ERROR_NOT_FOUND &&
          strcmp(tric_last_error(), "no kernel 'other' in this module (it holds add_one, scale)") ==
              0);
    CHECK(tric_module_get_kernel(mod, "add_one", &add) == TRIC_SUCCESS);
    enum { N = 100 };
    static float h[N];
    for (int i = 0; i < N; i++)
        h[i] = (float)i;
    tric_buffer x;
    CHECK(tric_buffer_alloc(dev, sizeof h, &x) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(x, 0, h, sizeof h, NULL) == TRIC_SUCCESS);
    tric_arg args[] = {TRIC_ARG_BUF(x), TRIC_ARG_I32(N)};
    CHECK(tric_launch(add, (tric_dim3){(N + 31) / 32, 1, 1}, args, 2, NULL) == TRIC_SUCCESS);
    CHECK(tric_launch(scale, (tric_dim3){2, 1, 1}, args, 2, NULL) == TRIC_SUCCESS);
    CHECK(tric_copy_to_host(h, x, 0, sizeof h, NULL) == TRIC_SUCCESS);
    for (int i = 0; i < N; i++)
        CHECK(h[i] == 2.0f * ((float)i + 1.0f));
    tric_buffer_free(x);
    tric_module_destroy(mod);
    /* A constexpr no kernel has, a signature (it describes one kernel): errors. */
    static const char *unused[] = {"BLOCK=32", "NOPE=1"};
    opt.constexprs = unused;
    opt.nconstexprs = 2;
    CHECK_MSG(tric_module_compile(dev, src, "two.tri", &opt, &mod), TRIC_ERROR_INVALID_ARGUMENT,
              "constexpr NOPE=1: no kernel of two.tri has a parameter 'NOPE'");
    opt.nconstexprs = 1;
    opt.signature = "*fp32,i32";
    CHECK_MSG(tric_module_compile(dev, src, "two.tri", &opt, &mod), TRIC_ERROR_INVALID_ARGUMENT,
              "two.tri has 2 kernels: a signature or tune configs describe one; name it in "
              "tric_compile_options.kernel");
    /* Naming one compiles that one only. */
    opt.signature = NULL;
    opt.kernel = "add_one";
    CHECK(tric_module_compile(dev, src, "two.tri", &opt, &mod) == TRIC_SUCCESS &&
          tric_module_get_kernel(mod, NULL, &add) == TRIC_SUCCESS &&
          strcmp(tric_kernel_name(add), "add_one") == 0 &&
          tric_module_get_kernel(mod, "scale", &scale) == TRIC_ERROR_NOT_FOUND);
    tric_module_destroy(mod);
}

/* TRIC_STREAM_K_AUTO: seed 2's 16 configs twice, as written (0..15) and with stream_k (16..31);
 * the cpu device runs kernels as written (no passes), so there the second half is left out with
 * the reason, as for a kernel the pass does not take (runtime_cuda_mock compiles both halves); a
 * value out of range is refused. */
static void test_stream_k_auto(tric_device dev)
{
    tric_module mod;
    tric_kernel k, c;
    if (ex_compile_seed2_tuned_sk(dev, matmul_path(), 8, TRIC_STREAM_K_AUTO, TRIC_DEEP_PIPELINE_OFF,
                                  &mod, &k) != TRIC_SUCCESS) {
        CHECK(!"seed 2 compiles with stream_k auto");
        return;
    }
    CHECK(tric_kernel_num_configs(k) == 32);
    CHECK(tric_kernel_config(k, 6, &c) == TRIC_SUCCESS &&
          strcmp(tric_kernel_config_text(c), "BLOCK_SIZE_M=64, BLOCK_SIZE_N=32, BLOCK_SIZE_K=32, "
                                             "num_warps=2, num_stages=5") == 0);
    CHECK(tric_kernel_config(k, 22, &c) == TRIC_ERROR_COMPILE &&
          strstr(tric_last_error(), "config 22 (BLOCK_SIZE_M=64, BLOCK_SIZE_N=32, BLOCK_SIZE_K=32, "
                                    "num_warps=2, num_stages=5, stream_k) was left out: stream_k "
                                    "left it as written, as config 6"));
    tric_module_destroy(mod);

    /* vector_add has no K loop */
    static const char *b128[] = {"BLOCK_SIZE=128"}, *b256[] = {"BLOCK_SIZE=256"};
    tric_tune_config configs[] = {{b128, 1, 2, 0}, {b256, 1, 4, 0}};
    tric_compile_options vo = ex_vector_add_tuned_options(configs, 2);
    vo.stream_k = TRIC_STREAM_K_AUTO;
    CHECK(tric_module_compile_file(dev, TRIC_SOURCE_DIR "/examples/vector_add.tri", &vo, &mod) ==
              TRIC_SUCCESS &&
          tric_module_get_kernel(mod, NULL, &k) == TRIC_SUCCESS && tric_kernel_num_configs(k) == 4);
    CHECK(tric_kernel_config(k, 1, &c) == TRIC_SUCCESS);
    CHECK(tric_kernel_config(k, 3, &c) == TRIC_ERROR_COMPILE &&
          strstr(tric_last_error(), "config 3 (BLOCK_SIZE=256, num_warps=4, stream_k) was left "
                                    "out: stream_k left it as written, as config 1"));
    tric_module_destroy(mod);

    vo.stream_k = 3;
    CHECK(tric_module_compile_file(dev, TRIC_SOURCE_DIR "/examples/vector_add.tri", &vo, &mod) ==
              TRIC_ERROR_INVALID_ARGUMENT &&
          strstr(tric_last_error(), "compile options: stream_k 3 (TRIC_STREAM_K_OFF 0"));
}

/* TRIC_DEEP_PIPELINE_AUTO: the configs as written, then the stream_k twins when asked too, then
 * the deep ones, then (with both) the stream_k twins made deep; the cpu device runs the IR as
 * lowered, so no deep twin differs from its config and each is left out with the reason
 * (runtime_cuda_mock compiles them); a value out of range is refused. */
static void test_deep_pipeline_auto(tric_device dev)
{
    static const char *b128[] = {"BLOCK_SIZE=128"}, *b256[] = {"BLOCK_SIZE=256"};
    tric_tune_config configs[] = {{b128, 1, 2, 0}, {b256, 1, 4, 0}};
    tric_compile_options vo = ex_vector_add_tuned_options(configs, 2);
    vo.stream_k = TRIC_STREAM_K_AUTO;
    vo.deep_pipeline = TRIC_DEEP_PIPELINE_AUTO;
    tric_module mod;
    tric_kernel k, c;
    CHECK(tric_module_compile_file(dev, TRIC_SOURCE_DIR "/examples/vector_add.tri", &vo, &mod) ==
              TRIC_SUCCESS &&
          tric_module_get_kernel(mod, NULL, &k) == TRIC_SUCCESS && tric_kernel_num_configs(k) == 8);
    CHECK(tric_kernel_config(k, 1, &c) == TRIC_SUCCESS);
    CHECK(tric_kernel_config(k, 3, &c) == TRIC_ERROR_COMPILE &&
          strstr(tric_last_error(), "config 3 (BLOCK_SIZE=256, num_warps=4, stream_k) was left "
                                    "out: stream_k left it as written, as config 1"));
    CHECK(tric_kernel_config(k, 5, &c) == TRIC_ERROR_COMPILE &&
          strstr(tric_last_error(), "config 5 (BLOCK_SIZE=256, num_warps=4, deep_pipeline) was "
                                    "left out: deep_pipeline left it as written, as config 1 (the "
                                    "stages cannot grow in shared memory, or the device runs "
                                    "kernels as written: cpu)"));
    CHECK(tric_kernel_config(k, 7, &c) == TRIC_ERROR_COMPILE &&
          strstr(tric_last_error(), "config 7 (BLOCK_SIZE=256, num_warps=4, stream_k, "
                                    "deep_pipeline) was left out: stream_k left it as written, as "
                                    "config 1"));
    tric_module_destroy(mod);

    vo.deep_pipeline = -1;
    CHECK(tric_module_compile_file(dev, TRIC_SOURCE_DIR "/examples/vector_add.tri", &vo, &mod) ==
              TRIC_ERROR_INVALID_ARGUMENT &&
          strstr(tric_last_error(), "compile options: deep_pipeline -1 (TRIC_DEEP_PIPELINE_OFF 0"));
}

int main(void)
{
    tric_device dev;
    if (tric_device_open("cpu", &dev) != TRIC_SUCCESS) {
        CHECK(!"cpu device opens");
        return 1;
    }
    test_seed2(dev);
    test_c_configs(dev);
    test_file_kernels(dev);
    test_host_env(dev);
    test_stream_k_auto(dev);
    test_deep_pipeline_auto(dev);
    tric_device_close(dev);
    if (failures) {
        printf("FAIL: %d check(s)\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
