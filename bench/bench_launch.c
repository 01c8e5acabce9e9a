/* bench_launch: host overhead of tric_launch on cuda:0 for a small kernel (vector_add, n = 1024,
 * one program), on the default stream and on a tric_stream, beside raw cuLaunchKernel of the same
 * function on the same stream (the difference is tric's own cost) and on CUDA's legacy stream.
 * Each measurement: 10^4 launches in 100 batches of 100 (a sync after each batch keeps the
 * driver's queue from filling, which would time the GPU instead of the host), each launch timed
 * on the host alone, the median taken; 7 rounds interleave the five (the fifth: the same kernel
 * autotuned over two configs, after its tuning). Target: <= 3 us per launch.
 *
 * Then a kernel that reads through TMA tensor maps (seed 2's kernel_matmul, 128x128x64, on a
 * 128 x 128 x 128 problem: one program), where a device has them (sm_90): tric_launch beside raw
 * cuLaunchKernel with maps encoded once before, and what one cuTensorMapEncodeTiled costs (the
 * host time tric's per-kernel map cache saves at a launch whose arguments repeat). */
#include "bench_util.h"

enum { BATCHES = 100, PER_BATCH = 100 };

/* raw_params: what tric_launch would pack, for a raw cuLaunchKernel; NULL: tric_launch. */
static double median_launch_us(tric_kernel k, const tric_arg *args, int nargs, void **raw_params,
                               const RtCudaApi *cu, CUstream raw_stream, tric_stream stream)
{
    static double t[BATCHES * PER_BATCH];
    bool raw = raw_params != NULL;
    CUfunction fn = (CUfunction)k->cu_function;
    for (int b = 0; b < BATCHES; b++) {
        for (int i = 0; i < PER_BATCH; i++) {
            double s = bench_now_us();
            CUresult r = 0;
            tric_status st = TRIC_SUCCESS;
            if (raw)
                r = cu->cuLaunchKernel(fn, 1, 1, 1, (unsigned)k->threads, 1, 1,
                                       (unsigned)k->shared_bytes, raw_stream, raw_params, NULL);
            else
                st = tric_launch(k, (tric_dim3){1, 1, 1}, args, nargs, stream);
            t[b * PER_BATCH + i] = bench_now_us() - s;
            if (r != 0 || st != TRIC_SUCCESS) {
                printf("error: %s\n", raw ? "cuLaunchKernel failed" : tric_last_error());
                return -1;
            }
        }
        tric_device_synchronize(k->module->device);
        if (raw_stream)
            cu->cuStreamSynchronize(raw_stream);
        if (stream)
            tric_stream_synchronize(stream);
    }
    return bench_median(t, BATCHES * PER_BATCH);
}

/* The TMA measurement on k, launched (once, successfully) with args: tric_launch against raw
 * cuLaunchKernel with maps made before, and one cuTensorMapEncodeTiled. */
static void tma_measure(tric_kernel k, const tric_arg *args, tric_buffer a, tric_buffer b,
                        tric_buffer c, const RtCudaApi *cu, CUstream own)
{
    if (k->ntmaps == 0 || !cu->cuTensorMapEncodeTiled) {
        printf("# TMA launch: not measured (the kernel reads no tensor maps on this device)\n");
        return;
    }
    /* the raw path: the parameters, then maps encoded once */
    uint64_t slots[12];
    void *params[12 + TRIC_MAX_TENSOR_MAPS];
    slots[0] = a->addr;
    slots[1] = b->addr;
    slots[2] = c->addr;
    for (int i = 3; i < 12; i++)
        slots[i] = (uint32_t)args[i].v.i32;
    for (int i = 0; i < 12; i++)
        params[i] = &slots[i];
    CUtensorMap maps[TRIC_MAX_TENSOR_MAPS];
    RtTensorMapArgs m[TRIC_MAX_TENSOR_MAPS];
    for (int i = 0; i < k->ntmaps; i++) {
        if (rt_tensor_map_args(k, i, args, &m[i]) != TRIC_SUCCESS ||
            cu->cuTensorMapEncodeTiled(&maps[i], m[i].data_type, m[i].rank,
                                       (void *)(uintptr_t)m[i].address, m[i].dims, m[i].strides,
                                       m[i].box, m[i].element_strides, 0, m[i].swizzle,
                                       m[i].l2_promotion, 0) != CUDA_SUCCESS) {
            printf("# TMA launch: not measured: map %d does not encode\n", i);
            return;
        }
        params[12 + i] = &maps[i];
    }
    enum { ROUNDS = 7, ENCODES = 10000 };
    double tric_r[ROUNDS], raw_r[ROUNDS], enc_r[ROUNDS];
    static double t[ENCODES];
    for (int r = 0; r < ROUNDS; r++) {
        tric_r[r] = median_launch_us(k, args, 12, NULL, cu, NULL, NULL);
        raw_r[r] = median_launch_us(k, args, 12, params, cu, own, NULL);
        for (int i = 0; i < ENCODES; i++) {
            CUtensorMap scratch;
            double s0 = bench_now_us();
            cu->cuTensorMapEncodeTiled(&scratch, m[0].data_type, m[0].rank,
                                       (void *)(uintptr_t)m[0].address, m[0].dims, m[0].strides,
                                       m[0].box, m[0].element_strides, 0, m[0].swizzle,
                                       m[0].l2_promotion, 0);
            t[i] = bench_now_us() - s0;
        }
        enc_r[r] = bench_median(t, ENCODES);
    }
    double tric_us = bench_median(tric_r, ROUNDS), raw_us = bench_median(raw_r, ROUNDS);
    printf("%-40s %10.2f\n", "TMA kernel: tric_launch (median)", tric_us);
    printf("%-40s %10.2f\n", "TMA kernel: raw, maps made before", raw_us);
    printf("%-40s %10.2f\n", "TMA kernel: tric overhead over raw", tric_us - raw_us);
    printf("%-40s %10.2f\n", "one cuTensorMapEncodeTiled (median)", bench_median(enc_r, ROUNDS));
    printf("# the kernel reads %d tensor maps; tric encodes them at a launch only when their "
           "arguments changed\n",
           k->ntmaps);
}

/* The TMA part (the file's comment): prints why not where the kernel has no tensor maps. */
static void bench_tma_launch(tric_device dev, const RtCudaApi *cu, CUstream own)
{
    char path[4096];
    const char *tri = ex_tri_path("matmul.tri", path, sizeof path);
    static const ExMatmulConfig cfg = {128, 128, 64, 4, 3};
    enum { S = 128 };
    int64_t v[9] = {S, S, S, S, 1, S, 1, S, 1};
    char signature[256];
    ex_matmul_signature(signature, sizeof signature, 1, v);
    tric_module mod = NULL;
    tric_kernel k;
    tric_buffer a = NULL, b = NULL, c = NULL;
    tric_arg args[12];
    bool ready = ex_compile_matmul(dev, tri, 1, 8, &cfg, signature, &mod, &k) == TRIC_SUCCESS &&
                 tric_buffer_alloc(dev, S * S * 2, &a) == TRIC_SUCCESS &&
                 tric_buffer_alloc(dev, S * S * 2, &b) == TRIC_SUCCESS &&
                 tric_buffer_alloc(dev, S * S * 2, &c) == TRIC_SUCCESS;
    if (ready) {
        args[0] = TRIC_ARG_BUF(a);
        args[1] = TRIC_ARG_BUF(b);
        args[2] = TRIC_ARG_BUF(c);
        for (int i = 0; i < 9; i++)
            args[3 + i] = TRIC_ARG_I32((int32_t)v[i]);
        ready = tric_launch(k, (tric_dim3){1, 1, 1}, args, 12, NULL) == TRIC_SUCCESS;
    }
    if (ready)
        tma_measure(k, args, a, b, c, cu, own);
    else
        printf("# TMA launch: not measured: %s\n", tric_last_error());
    if (a)
        tric_buffer_free(a);
    if (b)
        tric_buffer_free(b);
    if (c)
        tric_buffer_free(c);
    if (mod)
        tric_module_destroy(mod);
}

int main(void)
{
    tric_device dev = bench_open();
    if (!dev)
        return 77;
    const RtCudaApi *cu = rt_cuda_api();
    char path[4096];
    const char *tri = ex_tri_path("vector_add.tri", path, sizeof path);
    tric_module mod;
    tric_kernel k;
    tric_buffer x, y, out;
    EX_CHECK(ex_compile_vector_add(dev, tri, &mod, &k));
    EX_CHECK(tric_buffer_alloc(dev, 4096, &x));
    EX_CHECK(tric_buffer_alloc(dev, 4096, &y));
    EX_CHECK(tric_buffer_alloc(dev, 4096, &out));
    tric_arg args[] = {TRIC_ARG_BUF(x), TRIC_ARG_BUF(y), TRIC_ARG_BUF(out), TRIC_ARG_I32(1024)};
    /* Five ways to launch, measured in interleaved rounds so that clock ramps and other drift
     * hit them alike; each figure is the median over the rounds of each round's median. */
    CUstream own = (CUstream)dev->cu_stream; /* the device's stream: what tric uses for NULL */
    tric_stream ts = NULL;                   /* a stream made through the API */
    bool have_ts = tric_stream_create(dev, &ts) == TRIC_SUCCESS;
    /* The same kernel autotuned over two configs (4 and 2 warps) keyed on n_elements: after the
     * first (tuning) launch, a launch finds its config in the kernel's table without a lock. */
    static const char *b1024[] = {"BLOCK_SIZE=1024"}, *key[] = {"n_elements"};
    tric_tune_config configs[] = {{b1024, 1, 4, 0}, {b1024, 1, 2, 0}};
    tric_compile_options topt = tric_compile_options_default();
    topt.signature = "*fp32:16,*fp32:16,*fp32:16,i32"; /* as the untuned kernel: n open */
    topt.tune_configs = configs;
    topt.ntune_configs = 2;
    topt.tune_key = key;
    topt.ntune_key = 1;
    tric_module tuned_mod;
    tric_kernel tuned;
    EX_CHECK(tric_module_compile_file(dev, tri, &topt, &tuned_mod));
    EX_CHECK(tric_module_get_kernel(tuned_mod, NULL, &tuned));
    EX_CHECK(tric_launch(tuned, (tric_dim3){1, 1, 1}, args, 4, NULL));
    /* What tric_launch packs, for the raw path: three pointers and an int. */
    uint64_t slots[4] = {x->addr, y->addr, out->addr, 1024};
    void *params[4] = {&slots[0], &slots[1], &slots[2], &slots[3]};
    enum { ROUNDS = 7 };
    double rounds[5][ROUNDS];
    median_launch_us(k, args, 4, NULL, cu, NULL,
                     NULL); /* warm-up: first launches load the module lazily */
    median_launch_us(tuned, args, 4, NULL, cu, NULL, NULL);
    for (int r = 0; r < ROUNDS; r++) {
        rounds[0][r] = median_launch_us(k, args, 4, NULL, cu, NULL, NULL);
        rounds[1][r] = median_launch_us(k, args, 4, params, cu, own, NULL);
        rounds[2][r] = median_launch_us(k, args, 4, params, cu, NULL, NULL);
        rounds[3][r] = have_ts ? median_launch_us(k, args, 4, NULL, cu, NULL, ts) : -1;
        rounds[4][r] = median_launch_us(tuned, args, 4, NULL, cu, NULL, NULL);
    }
    double tric_us = bench_median(rounds[0], ROUNDS), raw_us = bench_median(rounds[1], ROUNDS);
    double raw_legacy_us = bench_median(rounds[2], ROUNDS),
           tric_stream_us = bench_median(rounds[3], ROUNDS);
    double tuned_us = bench_median(rounds[4], ROUNDS);
    double t0 = bench_now_us();
    for (int i = 0; i < BATCHES * PER_BATCH; i++)
        tric_launch(k, (tric_dim3){1, 1, 1}, args, 4, NULL);
    EX_CHECK(tric_device_synchronize(dev));
    double wall_us = (bench_now_us() - t0) / (BATCHES * PER_BATCH);
    printf("%-40s %10s\n", "# measurement", "us/launch");
    printf("%-40s %10.2f\n", "tric_launch, default stream (median)", tric_us);
    printf("%-40s %10.2f\n", "raw cuLaunchKernel, same stream (median)", raw_us);
    printf("%-40s %10.2f\n", "tric overhead over raw", tric_us - raw_us);
    printf("%-40s %10.2f\n", "raw cuLaunchKernel, legacy stream 0", raw_legacy_us);
    printf("%-40s %10.2f\n", "tric_launch on a tric_stream", tric_stream_us);
    printf("%-40s %10.2f\n", "tric_launch, autotuned kernel (median)", tuned_us);
    printf("%-40s %10.2f\n", "10^4 back-to-back + sync (mean)", wall_us);
    printf("# target: tric_launch <= 3 us: %s\n", tric_us <= 3.0 ? "met" : "NOT met");
    bench_tma_launch(dev, cu, own);
    if (ts)
        tric_stream_destroy(ts);
    tric_buffer_free(x);
    tric_buffer_free(y);
    tric_buffer_free(out);
    tric_module_destroy(mod);
    tric_module_destroy(tuned_mod);
    tric_device_close(dev);
    return 0;
}
