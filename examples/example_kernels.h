/* example_kernels.h: the seed kernels run end to end and checked against plain C, shared by the
 * example programs (vector_add.c, matmul.c), the GPU tests and the benchmarks. Each runner
 * compiles the kernel for the device, fills fresh random inputs from seed, poisons the output
 * (0xFF bytes: NaN for floats), launches, copies back, checks every element, prints one line and
 * returns 0 (match) or 1 (mismatch or error, with the message printed). */
#ifndef TRIC_EXAMPLE_KERNELS_H
#define TRIC_EXAMPLE_KERNELS_H

#include "example_host.h"

/* ---- seed 1: vector_add_kernel ---------------------------------------------------------------- */

/* Compiled for n: when n is a multiple of 16 the kernel is specialized for that (i32:16), as Triton
 * does per launch, which lets every masked access be a 128-bit vector; otherwise the general
 * kernel. n < 0 asks for the general kernel. */
static inline tric_status ex_compile_vector_add_for(tric_device dev, const char *tri, int n,
                                                    tric_module *mod, tric_kernel *kernel)
{
    static const char *constexprs[] = {"BLOCK_SIZE=1024"};
    tric_compile_options opt = tric_compile_options_default();
    opt.kernel = "vector_add_kernel";
    opt.signature = n >= 0 && n % 16 == 0 ? "*fp32:16,*fp32:16,*fp32:16,i32:16"
                                          : "*fp32:16,*fp32:16,*fp32:16,i32";
    opt.constexprs = constexprs;
    opt.nconstexprs = 1;
    tric_status st = tric_module_compile_file(dev, tri, &opt, mod);
    return st != TRIC_SUCCESS ? st : tric_module_get_kernel(*mod, "vector_add_kernel", kernel);
}

static inline tric_status ex_compile_vector_add(tric_device dev, const char *tri, tric_module *mod,
                                                tric_kernel *kernel)
{
    return ex_compile_vector_add_for(dev, tri, -1, mod, kernel);
}

/* Options that tune vector_add over configs (n of them), keyed on n_elements, with no hints in
 * the signature (the tests of the autotuner). */
static inline tric_compile_options ex_vector_add_tuned_options(tric_tune_config *configs, int n)
{
    static const char *key[] = {"n_elements"};
    tric_compile_options opt = tric_compile_options_default();
    opt.signature = "*fp32,*fp32,*fp32,i32";
    opt.tune_configs = configs;
    opt.ntune_configs = n;
    opt.tune_key = key;
    opt.ntune_key = 1;
    return opt;
}

static inline int ex_vector_add(tric_device dev, const char *tri, int n, uint64_t seed)
{
    tric_module mod;
    tric_kernel kernel;
    EX_CHECK(ex_compile_vector_add_for(dev, tri, n, &mod, &kernel));
    size_t bytes = (size_t)n * sizeof(float);
    float *x = malloc(bytes + 4), *y = malloc(bytes + 4), *out = malloc(bytes + 4);
    if (!x || !y || !out) {
        fprintf(stderr, "out of host memory\n");
        return 1;
    }
    ExRng rng = {seed * 0x9e3779b97f4a7c15ULL + 1};
    for (int i = 0; i < n; i++) {
        x[i] = ex_rng_float(&rng) * 100.0f;
        y[i] = ex_rng_float(&rng) * 100.0f;
    }
    tric_buffer dx, dy, dout;
    EX_CHECK(tric_buffer_alloc(dev, bytes, &dx));
    EX_CHECK(tric_buffer_alloc(dev, bytes, &dy));
    EX_CHECK(tric_buffer_alloc(dev, bytes, &dout));
    EX_CHECK(tric_copy_to_device(dx, 0, x, bytes, NULL));
    EX_CHECK(tric_copy_to_device(dy, 0, y, bytes, NULL));
    EX_CHECK(tric_memset(dout, 0, 0xff, bytes, NULL));

    tric_arg args[] = {TRIC_ARG_BUF(dx), TRIC_ARG_BUF(dy), TRIC_ARG_BUF(dout), TRIC_ARG_I32(n)};
    tric_dim3 grid = {(unsigned)((n + 1023) / 1024), 1, 1};
    EX_CHECK(tric_launch(kernel, grid, args, 4, NULL));
    EX_CHECK(tric_device_synchronize(dev));
    EX_CHECK(tric_copy_to_host(out, dout, 0, bytes, NULL));

    /* fp32 addition is correctly rounded on both sides: every element must be identical. */
    double max_err = 0;
    int bad = -1;
    for (int i = 0; i < n; i++) {
        float want = x[i] + y[i];
        double err = fabs((double)out[i] - (double)want);
        if (isnan(err))
            err = INFINITY;
        if (err > max_err)
            max_err = err;
        if (bad < 0 && !(out[i] == want))
            bad = i;
    }
    printf("vector_add      n=%-9d  max abs error %-10g %s\n", n, max_err,
           bad < 0 ? "OK" : "MISMATCH");
    if (bad >= 0)
        printf("  first mismatch at %d: got %g, want %g\n", bad, out[bad], x[bad] + y[bad]);
    tric_buffer_free(dx);
    tric_buffer_free(dy);
    tric_buffer_free(dout);
    tric_module_destroy(mod);
    free(x);
    free(y);
    free(out);
    return bad >= 0;
}

/* ---- seed 1's matmul_kernel and seed 2's kernel_matmul ---------------------------------------- */

typedef struct ExMatmulConfig {
    int block_m, block_n, block_k;
    int num_warps, num_stages;
} ExMatmulConfig;

static const ExMatmulConfig EX_MATMUL_SMALL = {64, 64, 32, 4, 3};

/* Seed 2's kernel_matmul as its author runs it: under its @triton.autotune decorator (16
 * configs; no block sizes given), GROUP_SIZE_M = group, fp16 C, fp32 accumulator. The seed's
 * parameters carry no types (Triton reads them off the tensors): the plain signature gives them,
 * and every launch specializes on its values (:16, :1), so the kernels that run are those of the
 * ideal signature. stream_k and deep_pipeline: tric_compile_options'. */
static inline tric_status ex_compile_seed2_tuned_sk(tric_device dev, const char *tri, int group,
                                                    int stream_k, int deep_pipeline,
                                                    tric_module *mod, tric_kernel *kernel)
{
    char gdef[32];
    snprintf(gdef, sizeof gdef, "GROUP_SIZE_M=%d", group);
    const char *defs[] = {gdef, "T_C=tl.float16", "T_ACC=tl.float32"};
    tric_compile_options opt = tric_compile_options_default();
    opt.kernel = "kernel_matmul";
    opt.signature = "*fp16,*fp16,*fp16,i32,i32,i32,i32,i32,i32,i32,i32,i32";
    opt.constexprs = defs;
    opt.nconstexprs = 3;
    opt.stream_k = stream_k;
    opt.deep_pipeline = deep_pipeline;
    tric_status st = tric_module_compile_file(dev, tri, &opt, mod);
    return st != TRIC_SUCCESS ? st : tric_module_get_kernel(*mod, "kernel_matmul", kernel);
}

static inline tric_status ex_compile_seed2_tuned(tric_device dev, const char *tri, int group,
                                                 tric_module *mod, tric_kernel *kernel)
{
    return ex_compile_seed2_tuned_sk(dev, tri, group, TRIC_STREAM_K_OFF, TRIC_DEEP_PIPELINE_OFF,
                                     mod, kernel);
}

/* Seed 2's grid as a function of the autotuned config, its
 * `grid = lambda META: (cdiv(M, META["BLOCK_SIZE_M"]) * cdiv(N, META["BLOCK_SIZE_N"]),)`, for
 * tric_launch_grid: args are kernel_matmul's (M and N at 3 and 4). */
static inline tric_dim3 ex_seed2_grid(tric_kernel config, const tric_arg *args, int nargs,
                                      void *user)
{
    (void)nargs;
    (void)user;
    int64_t bm = 0, bn = 0;
    if (tric_kernel_constexpr(config, "BLOCK_SIZE_M", &bm) != TRIC_SUCCESS ||
        tric_kernel_constexpr(config, "BLOCK_SIZE_N", &bn) != TRIC_SUCCESS || bm <= 0 || bn <= 0)
        return (tric_dim3){0, 0, 0};
    int64_t m = args[3].v.i32, n = args[4].v.i32;
    return (tric_dim3){(unsigned)(((m + bm - 1) / bm) * ((n + bn - 1) / bn)), 1, 1};
}

/* matmul_kernel: A (MxK) and B (KxN) fp16, C (MxN) fp32 (the seed stores accumulator.to(float32)).
 * Its loads are masked along K and wrap rows/cols with % M, % N; its store is masked: any size
 * works. kernel_matmul (seed 2): fp16 A, B and C (T_C = float16), fp32 accumulator (T_ACC); its
 * loads and store are not masked, so the host pads every matrix to multiples of the block sizes
 * (zeros in the padding) and checks the M x N corner. Unit strides are passed with the ":1" hint
 * (Triton specializes ints equal to 1 the same way); leading strides get ":16" when they are
 * multiples of 16. */
static inline tric_status ex_compile_matmul(tric_device dev, const char *tri, int seed2,
                                            int group_m, const ExMatmulConfig *cfg,
                                            const char *signature, tric_module *mod,
                                            tric_kernel *kernel)
{
    char bm[32], bn[32], bk[32], gm[32];
    snprintf(bm, sizeof bm, "BLOCK_SIZE_M=%d", cfg->block_m);
    snprintf(bn, sizeof bn, "BLOCK_SIZE_N=%d", cfg->block_n);
    snprintf(bk, sizeof bk, "BLOCK_SIZE_K=%d", cfg->block_k);
    snprintf(gm, sizeof gm, "GROUP_SIZE_M=%d", group_m);
    const char *constexprs[] = {bm, bn, bk, gm, "T_C=tl.float16", "T_ACC=tl.float32"};
    tric_compile_options opt = tric_compile_options_default();
    opt.kernel = seed2 ? "kernel_matmul" : "matmul_kernel";
    opt.signature = signature;
    opt.constexprs = constexprs;
    opt.nconstexprs = seed2 ? 6 : 3;
    opt.num_warps = cfg->num_warps;
    opt.num_stages = cfg->num_stages;
    tric_status st = tric_module_compile_file(dev, tri, &opt, mod);
    return st != TRIC_SUCCESS ? st : tric_module_get_kernel(*mod, opt.kernel, kernel);
}

/* The signature for given sizes: ":16" where the value is a multiple of 16. */
static inline void ex_matmul_signature(char *out, size_t len, int seed2, const int64_t v[9])
{
    /* M N K stride_am stride_ak stride_bk stride_bn stride_cm stride_cn */
    int n = snprintf(out, len, "*fp16:16,*fp16:16,%s", seed2 ? "*fp16:16" : "*fp32:16");
    for (int i = 0; i < 9 && n > 0 && (size_t)n < len; i++)
        n += snprintf(out + n, len - (size_t)n, ",%s",
                      v[i] == 1        ? "i32:1"
                      : v[i] % 16 == 0 ? "i32:16"
                                       : "i32");
}

static inline int ex_matmul(tric_device dev, const char *tri, int seed2, int group_m, int M, int N,
                            int K, const ExMatmulConfig *cfg, uint64_t seed)
{
    /* Padded sizes for kernel_matmul; matmul_kernel uses the exact ones. */
    size_t Mp = seed2 ? ex_round_up((size_t)M, (size_t)cfg->block_m) : (size_t)M;
    size_t Np = seed2 ? ex_round_up((size_t)N, (size_t)cfg->block_n) : (size_t)N;
    size_t Kp = seed2 ? ex_round_up((size_t)K, (size_t)cfg->block_k) : (size_t)K;
    size_t c_elem = seed2 ? 2 : 4;
    int64_t v[9] = {M, N, K, (int64_t)Kp, 1, (int64_t)Np, 1, (int64_t)Np, 1};
    char signature[256];
    ex_matmul_signature(signature, sizeof signature, seed2, v);
    tric_module mod;
    tric_kernel kernel;
    EX_CHECK(ex_compile_matmul(dev, tri, seed2, group_m, cfg, signature, &mod, &kernel));

    uint16_t *a = calloc(Mp * Kp, 2), *b = calloc(Kp * Np, 2);
    void *c = malloc(Mp * Np * c_elem);
    float *af = malloc(sizeof(float) * (size_t)M * K), *bt = malloc(sizeof(float) * (size_t)K * N);
    if (!a || !b || !c || !af || !bt) {
        fprintf(stderr, "out of host memory\n");
        return 1;
    }
    ex_matmul_inputs(seed, M, N, K, Kp, Np, a, b, af, bt);
    tric_buffer da, db, dc;
    EX_CHECK(tric_buffer_alloc(dev, Mp * Kp * 2, &da));
    EX_CHECK(tric_buffer_alloc(dev, Kp * Np * 2, &db));
    EX_CHECK(tric_buffer_alloc(dev, Mp * Np * c_elem, &dc));
    EX_CHECK(tric_copy_to_device(da, 0, a, Mp * Kp * 2, NULL));
    EX_CHECK(tric_copy_to_device(db, 0, b, Kp * Np * 2, NULL));
    EX_CHECK(tric_memset(dc, 0, 0xff, Mp * Np * c_elem, NULL));

    tric_arg args[12] = {TRIC_ARG_BUF(da), TRIC_ARG_BUF(db), TRIC_ARG_BUF(dc)};
    for (int i = 0; i < 9; i++)
        args[3 + i] = TRIC_ARG_I32((int32_t)v[i]);
    unsigned programs = (unsigned)(((size_t)M + cfg->block_m - 1) / cfg->block_m *
                                   (((size_t)N + cfg->block_n - 1) / cfg->block_n));
    EX_CHECK(tric_launch(kernel, (tric_dim3){programs, 1, 1}, args, 12, NULL));
    EX_CHECK(tric_device_synchronize(dev));
    EX_CHECK(tric_copy_to_host(c, dc, 0, Mp * Np * c_elem, NULL));

    /* Reference in double from the same fp16 inputs (ex_matmul_error says what differs). */
    ExMatmulError e = ex_matmul_error(af, bt, seed2 ? (const uint16_t *)c : NULL,
                                      seed2 ? NULL : (const float *)c, M, N, K, Np);
    char group[32] = "";
    if (seed2)
        snprintf(group, sizeof group, " GROUP_SIZE_M=%d", group_m);
    printf("%-15s M=%d N=%d K=%d%s  max abs error %-10g %s\n",
           seed2 ? "kernel_matmul" : "matmul_kernel", M, N, K, group, e.max_err,
           e.bad_i < 0 ? "OK" : "MISMATCH");
    if (e.bad_i >= 0)
        printf("  first mismatch at [%d, %d]: got %g, want %g\n", e.bad_i, e.bad_j, e.bad_got,
               e.bad_want);
    tric_buffer_free(da);
    tric_buffer_free(db);
    tric_buffer_free(dc);
    tric_module_destroy(mod);
    free(a);
    free(b);
    free(c);
    free(af);
    free(bt);
    return e.bad_i >= 0;
}

#endif
