/* norms_kernels.h: the three tutorial kernels of issue 10's performance bars -- softmax.tri
 * (Triton's tutorial 02), layer_norm.tri (tutorial 05, forward) and attention.tri (tutorial 06,
 * forward) -- set up on a device with the launch parameters the tutorials use, and checked
 * against plain C. Shared by bench/bench_norms.c (which times them), tests/unit/
 * examples_norms_exec.c (the interpreter at tiny sizes) and tests/gpu/gpu_norms.c.
 *
 * nk_*_setup compiles the kernel (a signature with :16 where a value is a multiple of 16, as
 * Triton's JIT specializes; launch specialization off, so the code timed is the code compiled),
 * allocates the buffers, fills the inputs from seed, poisons the outputs (0xFF bytes: NaN) and
 * builds the arguments and grid; nk_*_verify recomputes the inputs from the same seed, computes
 * the reference in C (double sums) and compares every output element. Both return 0 on success,
 * 1 with the reason printed. Element types: fp16 = 0 is fp32, 1 is fp16 (attention: fp16 only). */
#ifndef TRIC_NORMS_KERNELS_H
#define TRIC_NORMS_KERNELS_H

#include "example_host.h"

typedef struct NkRun {
    tric_module mod;
    tric_kernel kernel;
    tric_buffer buf[6];
    int nbuf;
    tric_arg args[24];
    int nargs;
    tric_dim3 grid;
} NkRun;

/* Tutorial 06's tile config: BLOCK_M, BLOCK_N, num_warps, num_stages. */
typedef struct NkAttnConfig {
    int block_m, block_n, num_warps, num_stages;
    int warp_specialize; /* attention.tri's warp_specialize constexpr (a producer warpgroup) */
} NkAttnConfig;

static inline void nk_run_free(NkRun *r)
{
    for (int i = 0; i < r->nbuf; i++)
        tric_buffer_free(r->buf[i]);
    if (r->mod)
        tric_module_destroy(r->mod);
    memset(r, 0, sizeof *r);
}

/* "i32:16" when v is a multiple of 16, else "i32", appended to sig with a comma. */
static inline void nk_sig_i32(char *sig, size_t len, int64_t v)
{
    size_t n = strlen(sig);
    snprintf(sig + n, len - n, "%si32%s", n ? "," : "", v % 16 == 0 ? ":16" : "");
}

static inline void nk_sig_add(char *sig, size_t len, const char *type)
{
    size_t n = strlen(sig);
    snprintf(sig + n, len - n, "%s%s", n ? "," : "", type);
}

static inline int nk_next_pow2(int n)
{
    int p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

static inline tric_status nk_compile(tric_device dev, const char *tri, const char *kernel,
                                     const char *sig, const char *const *constexprs, int nconst,
                                     int num_warps, int num_stages, const char *arch, NkRun *r)
{
    tric_compile_options opt = tric_compile_options_default();
    opt.kernel = kernel;
    opt.signature = sig;
    opt.constexprs = constexprs;
    opt.nconstexprs = nconst;
    opt.num_warps = num_warps;
    opt.num_stages = num_stages;
    opt.arch = arch;
    opt.no_specialize = 1;
    tric_status st = tric_module_compile_file(dev, tri, &opt, &r->mod);
    return st != TRIC_SUCCESS ? st : tric_module_get_kernel(r->mod, kernel, &r->kernel);
}

static inline tric_status nk_alloc(tric_device dev, NkRun *r, size_t bytes)
{
    tric_status st = tric_buffer_alloc(dev, bytes, &r->buf[r->nbuf]);
    if (st == TRIC_SUCCESS)
        r->nbuf++;
    return st;
}

/* n floats from seed into buffer b as fp32 or fp16, scaled by scale, plus shift. */
static inline tric_status nk_fill(tric_buffer b, size_t n, int fp16, uint64_t seed, float scale,
                                  float shift)
{
    ExRng rng = {seed * 0x9E3779B97F4A7C15ULL + 1};
    size_t elem = fp16 ? 2 : 4;
    void *host = malloc(n * elem);
    if (!host)
        return TRIC_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < n; i++) {
        float v = ex_rng_float(&rng) * scale + shift;
        if (fp16)
            ((uint16_t *)host)[i] = tric_f32_to_f16(v);
        else
            ((float *)host)[i] = v;
    }
    tric_status st = tric_copy_to_device(b, 0, host, n * elem, NULL);
    free(host);
    return st;
}

/* The same values nk_fill wrote, as floats (fp16 ones rounded as stored). */
static inline float *nk_host_values(size_t n, int fp16, uint64_t seed, float scale, float shift)
{
    ExRng rng = {seed * 0x9E3779B97F4A7C15ULL + 1};
    float *v = malloc(n * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        float x = ex_rng_float(&rng) * scale + shift;
        v[i] = fp16 ? tric_f16_to_f32(tric_f32_to_f16(x)) : x;
    }
    return v;
}

/* Buffer b (n elements, fp32 or fp16) as floats. */
static inline float *nk_read(tric_buffer b, size_t n, int fp16)
{
    size_t elem = fp16 ? 2 : 4;
    void *raw = malloc(n * elem);
    float *v = malloc(n * sizeof *v);
    if (!raw || !v || tric_copy_to_host(raw, b, 0, n * elem, NULL) != TRIC_SUCCESS) {
        fprintf(stderr, "reading back: %s\n", tric_last_error());
        free(raw);
        free(v);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = fp16 ? tric_f16_to_f32(((uint16_t *)raw)[i]) : ((float *)raw)[i];
    free(raw);
    return v;
}

/* Compares got with want within atol + rtol |want|; prints the first few mismatches. */
static inline int nk_compare(const char *what, const float *got, const double *want, size_t n,
                             double atol, double rtol)
{
    size_t bad = 0;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double err = fabs((double)got[i] - want[i]);
        if (!(err <= atol + rtol * fabs(want[i]))) { /* NaN fails too */
            if (bad < 5)
                fprintf(stderr, "%s: element %zu: got %.7g, want %.7g\n", what, i, got[i], want[i]);
            bad++;
        }
        if (err > worst)
            worst = err;
    }
    if (bad)
        fprintf(stderr, "%s: %zu of %zu elements wrong\n", what, bad, n);
    return bad != 0;
}

/* ---- softmax (tutorial 02) ------------------------------------------------------------------- */

/* BLOCK_SIZE = next power of two >= n_cols, 8 warps, num_stages 4 (the tutorial's choice when the
 * SM has more than 200 KB of shared memory, as the H100 does), and a persistent grid: as many
 * programs as fit on the device at once (the occupancy the driver reports for this kernel, the
 * tutorial's n_regs/shared-memory estimate), at most one per row. On cpu: one per row. */
static inline int nk_softmax_setup(NkRun *r, tric_device dev, const char *tri, int fp16, int rows,
                                   int cols, const char *arch, uint64_t seed)
{
    memset(r, 0, sizeof *r);
    char sig[256] = "", bs[32];
    const char *ptr = fp16 ? "*fp16:16" : "*fp32:16";
    nk_sig_add(sig, sizeof sig, ptr);
    nk_sig_add(sig, sizeof sig, ptr);
    nk_sig_i32(sig, sizeof sig, cols);
    nk_sig_i32(sig, sizeof sig, cols);
    nk_sig_i32(sig, sizeof sig, rows);
    nk_sig_i32(sig, sizeof sig, cols);
    snprintf(bs, sizeof bs, "BLOCK_SIZE=%d", nk_next_pow2(cols));
    const char *constexprs[] = {bs, "num_stages=4"};
    EX_CHECK(nk_compile(dev, tri, "softmax_kernel", sig, constexprs, 2, 8, 4, arch, r));
    size_t n = (size_t)rows * cols, bytes = n * (fp16 ? 2 : 4);
    EX_CHECK(nk_alloc(dev, r, bytes)); /* out */
    EX_CHECK(nk_alloc(dev, r, bytes)); /* in */
    EX_CHECK(tric_memset(r->buf[0], 0, 0xff, bytes, NULL));
    EX_CHECK(nk_fill(r->buf[1], n, fp16, seed, 4.0f, 0.0f));
    r->args[0] = TRIC_ARG_BUF(r->buf[0]);
    r->args[1] = TRIC_ARG_BUF(r->buf[1]);
    r->args[2] = TRIC_ARG_I32(cols);
    r->args[3] = TRIC_ARG_I32(cols);
    r->args[4] = TRIC_ARG_I32(rows);
    r->args[5] = TRIC_ARG_I32(cols);
    r->nargs = 6;
    tric_kernel_attrs at;
    unsigned programs = (unsigned)rows;
    if (tric_kernel_attributes(r->kernel, &at) == TRIC_SUCCESS && at.active_blocks_per_sm > 0) {
        unsigned resident = (unsigned)(at.active_blocks_per_sm * at.multiprocessors);
        programs = resident < programs ? resident : programs;
    }
    r->grid = (tric_dim3){programs, 1, 1};
    return 0;
}

static inline int nk_softmax_verify(NkRun *r, int fp16, int rows, int cols, uint64_t seed)
{
    size_t n = (size_t)rows * cols;
    float *x = nk_host_values(n, fp16, seed, 4.0f, 0.0f), *got = nk_read(r->buf[0], n, fp16);
    double *want = malloc(n * sizeof *want);
    int bad = 1;
    if (x && got && want) {
        for (int i = 0; i < rows; i++) {
            const float *row = x + (size_t)i * cols;
            double mx = -INFINITY, sum = 0;
            for (int j = 0; j < cols; j++)
                mx = row[j] > mx ? row[j] : mx;
            for (int j = 0; j < cols; j++)
                sum += want[(size_t)i * cols + j] = exp(row[j] - mx);
            for (int j = 0; j < cols; j++)
                want[(size_t)i * cols + j] /= sum;
        }
        bad = nk_compare("softmax", got, want, n, fp16 ? 1e-5 : 1e-8, fp16 ? 2e-3 : 1e-5);
    }
    free(x);
    free(got);
    free(want);
    return bad;
}

/* ---- layer norm forward (tutorial 05) -------------------------------------------------------- */

/* The tutorial's launch: BLOCK_SIZE = min(65536 / element size, next power of two >= N) (or
 * block, when positive: the unit test's smaller chunks exercise the column loops), num_warps =
 * min(max(BLOCK_SIZE / 256, 1), 8), one program per row; eps 1e-5. Buffers: X, Y, W, B (the
 * element type), Mean, Rstd (fp32). */
static inline int nk_layer_norm_setup(NkRun *r, tric_device dev, const char *tri, int fp16,
                                      int rows, int cols, const char *arch, int block,
                                      uint64_t seed)
{
    memset(r, 0, sizeof *r);
    int max_fused = 65536 / (fp16 ? 2 : 4);
    if (block <= 0) {
        block = nk_next_pow2(cols);
        block = block < max_fused ? block : max_fused;
    }
    int warps = block / 256 < 1 ? 1 : block / 256 > 8 ? 8 : block / 256;
    char sig[256] = "", bs[32];
    const char *ptr = fp16 ? "*fp16:16" : "*fp32:16";
    for (int i = 0; i < 4; i++)
        nk_sig_add(sig, sizeof sig, ptr);
    nk_sig_add(sig, sizeof sig, "*fp32:16");
    nk_sig_add(sig, sizeof sig, "*fp32:16");
    nk_sig_i32(sig, sizeof sig, cols);
    nk_sig_i32(sig, sizeof sig, cols);
    nk_sig_add(sig, sizeof sig, "fp32");
    snprintf(bs, sizeof bs, "BLOCK_SIZE=%d", block);
    const char *constexprs[] = {bs};
    EX_CHECK(nk_compile(dev, tri, "layer_norm_fwd", sig, constexprs, 1, warps, 3, arch, r));
    size_t n = (size_t)rows * cols, elem = fp16 ? 2 : 4;
    EX_CHECK(nk_alloc(dev, r, n * elem));            /* X */
    EX_CHECK(nk_alloc(dev, r, n * elem));            /* Y */
    EX_CHECK(nk_alloc(dev, r, (size_t)cols * elem)); /* W */
    EX_CHECK(nk_alloc(dev, r, (size_t)cols * elem)); /* B */
    EX_CHECK(nk_alloc(dev, r, (size_t)rows * 4));    /* Mean */
    EX_CHECK(nk_alloc(dev, r, (size_t)rows * 4));    /* Rstd */
    /* x = -2.3 + 0.5 randn-like spread, as the tutorial's inputs; w, b around 1 and 0 */
    EX_CHECK(nk_fill(r->buf[0], n, fp16, seed, 2.0f, -2.3f));
    EX_CHECK(nk_fill(r->buf[2], (size_t)cols, fp16, seed + 1, 0.5f, 1.0f));
    EX_CHECK(nk_fill(r->buf[3], (size_t)cols, fp16, seed + 2, 0.5f, 0.0f));
    EX_CHECK(tric_memset(r->buf[1], 0, 0xff, n * elem, NULL));
    EX_CHECK(tric_memset(r->buf[4], 0, 0xff, (size_t)rows * 4, NULL));
    EX_CHECK(tric_memset(r->buf[5], 0, 0xff, (size_t)rows * 4, NULL));
    static const int order[6] = {0, 1, 2, 3, 4, 5};
    for (int i = 0; i < 6; i++)
        r->args[i] = TRIC_ARG_BUF(r->buf[order[i]]);
    r->args[6] = TRIC_ARG_I32(cols);
    r->args[7] = TRIC_ARG_I32(cols);
    r->args[8] = TRIC_ARG_F32(1e-5f);
    r->nargs = 9;
    r->grid = (tric_dim3){(unsigned)rows, 1, 1};
    return 0;
}

static inline int nk_layer_norm_verify(NkRun *r, int fp16, int rows, int cols, uint64_t seed)
{
    size_t n = (size_t)rows * cols;
    float *x = nk_host_values(n, fp16, seed, 2.0f, -2.3f);
    float *w = nk_host_values((size_t)cols, fp16, seed + 1, 0.5f, 1.0f);
    float *b = nk_host_values((size_t)cols, fp16, seed + 2, 0.5f, 0.0f);
    float *y = nk_read(r->buf[1], n, fp16), *mean = nk_read(r->buf[4], (size_t)rows, 0);
    float *rstd = nk_read(r->buf[5], (size_t)rows, 0);
    double *want = malloc(n * sizeof *want), *want_mean = malloc((size_t)rows * sizeof(double));
    double *want_rstd = malloc((size_t)rows * sizeof(double));
    int bad = 1;
    if (x && w && b && y && mean && rstd && want && want_mean && want_rstd) {
        for (int i = 0; i < rows; i++) {
            const float *row = x + (size_t)i * cols;
            double s = 0, sq = 0;
            for (int j = 0; j < cols; j++)
                s += row[j];
            double m = s / cols;
            for (int j = 0; j < cols; j++)
                sq += (row[j] - m) * (row[j] - m);
            double rs = 1.0 / sqrt(sq / cols + 1e-5);
            want_mean[i] = m;
            want_rstd[i] = rs;
            for (int j = 0; j < cols; j++)
                want[(size_t)i * cols + j] = (row[j] - m) * rs * w[j] + b[j];
        }
        bad = nk_compare("layer_norm Y", y, want, n, fp16 ? 4e-3 : 2e-5, fp16 ? 2e-3 : 1e-5);
        bad |= nk_compare("layer_norm Mean", mean, want_mean, (size_t)rows, 1e-5, 1e-5);
        bad |= nk_compare("layer_norm Rstd", rstd, want_rstd, (size_t)rows, 1e-5, 1e-4);
    }
    free(x), free(w), free(b), free(y), free(mean), free(rstd);
    free(want), free(want_mean), free(want_rstd);
    return bad;
}

/* ---- fused attention forward (tutorial 06) --------------------------------------------------- */

/* Q, K, V, Out: [Z, H, n_ctx, head] fp16 contiguous; M: [Z * H, n_ctx] fp32; sm_scale 0.5 (the
 * tutorial's); STAGE 3 causal, 1 not; grid (n_ctx / BLOCK_M, Z * H). n_ctx must be a multiple of
 * BLOCK_M and BLOCK_N, head a multiple of 16. The compiled kernel does not depend on Z, H or n_ctx
 * (its signature marks the strides and N_CTX multiples of 16, H open), so the benchmark compiles
 * each config once (nk_attention_compile) and sets up the data once per shape (nk_attention_alloc,
 * which leaves r->mod and r->kernel alone); nk_attention_setup does both. */
static inline int nk_attention_compile(NkRun *r, tric_device dev, const char *tri, int head,
                                       int causal, const NkAttnConfig *cfg, const char *arch)
{
    char sig[512] = "", hd[32], bm[32], bn[32], ns[32];
    for (int i = 0; i < 3; i++)
        nk_sig_add(sig, sizeof sig, "*fp16:16");
    nk_sig_add(sig, sizeof sig, "fp32");
    nk_sig_add(sig, sizeof sig, "*fp32:16");
    nk_sig_add(sig, sizeof sig, "*fp16:16");
    for (int i = 0; i < 12; i++) /* q, k, v, o strides: z, h, row */
        nk_sig_add(sig, sizeof sig, "i32:16");
    nk_sig_add(sig, sizeof sig, "i32");    /* H */
    nk_sig_add(sig, sizeof sig, "i32:16"); /* N_CTX */
    snprintf(hd, sizeof hd, "HEAD_DIM=%d", head);
    snprintf(bm, sizeof bm, "BLOCK_M=%d", cfg->block_m);
    snprintf(bn, sizeof bn, "BLOCK_N=%d", cfg->block_n);
    snprintf(ns, sizeof ns, "num_stages=%d", cfg->num_stages);
    const char *constexprs[] = {
        hd, bm, bn, causal ? "STAGE=3" : "STAGE=1", ns, "warp_specialize=True"};
    EX_CHECK(nk_compile(dev, tri, "attn_fwd", sig, constexprs, cfg->warp_specialize ? 6 : 5,
                        cfg->num_warps, cfg->num_stages, arch, r));
    return 0;
}

static inline int nk_attention_alloc(NkRun *r, tric_device dev, int Z, int H, int n_ctx, int head,
                                     uint64_t seed)
{
    int64_t sz = (int64_t)H * n_ctx * head, sh = (int64_t)n_ctx * head;
    if (sz > INT32_MAX || n_ctx % 16 || head % 16) {
        fprintf(stderr,
                "attention: Z H N_CTX D = %d %d %d %d: N_CTX and D must be multiples of 16 "
                "and H N_CTX D fit i32\n",
                Z, H, n_ctx, head);
        return 1;
    }
    size_t n = (size_t)Z * sz;
    for (int i = 0; i < 3; i++) {
        EX_CHECK(nk_alloc(dev, r, n * 2));
        EX_CHECK(nk_fill(r->buf[i], n, 1, seed + (uint64_t)i, 1.0f, 0.0f));
    }
    EX_CHECK(nk_alloc(dev, r, (size_t)Z * H * n_ctx * 4)); /* M */
    EX_CHECK(nk_alloc(dev, r, n * 2));                     /* Out */
    EX_CHECK(tric_memset(r->buf[3], 0, 0xff, (size_t)Z * H * n_ctx * 4, NULL));
    EX_CHECK(tric_memset(r->buf[4], 0, 0xff, n * 2, NULL));
    int a = 0;
    r->args[a++] = TRIC_ARG_BUF(r->buf[0]);
    r->args[a++] = TRIC_ARG_BUF(r->buf[1]);
    r->args[a++] = TRIC_ARG_BUF(r->buf[2]);
    r->args[a++] = TRIC_ARG_F32(0.5f);
    r->args[a++] = TRIC_ARG_BUF(r->buf[3]);
    r->args[a++] = TRIC_ARG_BUF(r->buf[4]);
    for (int t = 0; t < 4; t++) {
        r->args[a++] = TRIC_ARG_I32((int32_t)sz);
        r->args[a++] = TRIC_ARG_I32((int32_t)sh);
        r->args[a++] = TRIC_ARG_I32(head);
    }
    r->args[a++] = TRIC_ARG_I32(H);
    r->args[a++] = TRIC_ARG_I32(n_ctx);
    r->nargs = a;
    return 0;
}

static inline tric_dim3 nk_attention_grid(int Z, int H, int n_ctx, const NkAttnConfig *cfg)
{
    return (tric_dim3){(unsigned)(n_ctx / cfg->block_m), (unsigned)(Z * H), 1};
}

static inline int nk_attention_setup(NkRun *r, tric_device dev, const char *tri, int Z, int H,
                                     int n_ctx, int head, int causal, const NkAttnConfig *cfg,
                                     const char *arch, uint64_t seed)
{
    memset(r, 0, sizeof *r);
    if (nk_attention_compile(r, dev, tri, head, causal, cfg, arch) ||
        nk_attention_alloc(r, dev, Z, H, n_ctx, head, seed))
        return 1;
    r->grid = nk_attention_grid(Z, H, n_ctx, cfg);
    return 0;
}

static inline int nk_attention_verify(NkRun *r, int Z, int H, int n_ctx, int head, int causal,
                                      uint64_t seed)
{
    size_t n = (size_t)Z * H * n_ctx * head, rows = (size_t)Z * H * n_ctx;
    float *q = nk_host_values(n, 1, seed, 1.0f, 0.0f),
          *k = nk_host_values(n, 1, seed + 1, 1.0f, 0.0f);
    float *v = nk_host_values(n, 1, seed + 2, 1.0f, 0.0f);
    float *out = nk_read(r->buf[4], n, 1), *m = nk_read(r->buf[3], rows, 0);
    double *want = calloc(n, sizeof *want), *want_m = malloc(rows * sizeof *want_m);
    double *s = malloc((size_t)n_ctx * sizeof *s);
    int bad = 1;
    if (q && k && v && out && m && want && want_m && s) {
        for (size_t bh = 0; bh < (size_t)Z * H; bh++) {
            const float *qb = q + bh * n_ctx * head, *kb = k + bh * n_ctx * head;
            const float *vb = v + bh * n_ctx * head;
            for (int i = 0; i < n_ctx; i++) {
                int last = causal ? i : n_ctx - 1;
                double mx = -INFINITY, sum = 0;
                for (int j = 0; j <= last; j++) {
                    double dotv = 0;
                    for (int d = 0; d < head; d++)
                        dotv += (double)qb[(size_t)i * head + d] * kb[(size_t)j * head + d];
                    s[j] = dotv * 0.5;
                    mx = s[j] > mx ? s[j] : mx;
                }
                for (int j = 0; j <= last; j++)
                    sum += s[j] = exp(s[j] - mx);
                double *o = want + (bh * n_ctx + i) * head;
                for (int j = 0; j <= last; j++)
                    for (int d = 0; d < head; d++)
                        o[d] += s[j] / sum * vb[(size_t)j * head + d];
                want_m[bh * n_ctx + i] = (mx + log(sum)) / log(2.0); /* log2-sum-exp */
            }
        }
        bad = nk_compare("attention Out", out, want, n, 1e-2, 1e-2);
        bad |= nk_compare("attention M", m, want_m, rows, 1e-2, 1e-3);
    }
    free(q), free(k), free(v), free(out), free(m), free(want), free(want_m), free(s);
    return bad;
}

#endif
