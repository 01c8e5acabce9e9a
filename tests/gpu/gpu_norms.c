/* gpu_norms (label gpu): the tutorial kernels of bench/bench_norms.c (examples/softmax.tri,
 * layer_norm.tri, attention.tri) on cuda:0, compiled for sm_90a on an sm_90 device (wgmma, as the
 * benchmark does) and for the device's own arch otherwise, every output element checked against C
 * (examples/norms_kernels.h): softmax and layer norm fp32/fp16 at odd and multi-chunk shapes,
 * attention causal and not at head dim 64 and 128 with each of the benchmark's configs. Skips
 * (exit 77) when cuda:0 cannot be opened. GPU_NORMS_ONLY=attention runs the attention cases alone
 * (what compute-sanitizer's racecheck and synccheck are pointed at: the pipelined wgmma loops). */
#include "examples/norms_kernels.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void row_case(tric_device dev, const char *tri, int layer_norm, int fp16, int rows, int cols,
                     int block, const char *arch)
{
    NkRun r;
    int bad = layer_norm ? nk_layer_norm_setup(&r, dev, tri, fp16, rows, cols, arch, block, 41)
                         : nk_softmax_setup(&r, dev, tri, fp16, rows, cols, arch, 41);
    if (!bad) {
        bad = tric_launch(r.kernel, r.grid, r.args, r.nargs, NULL) != TRIC_SUCCESS ||
              tric_device_synchronize(dev) != TRIC_SUCCESS;
        if (bad)
            fprintf(stderr, "launch: %s\n", tric_last_error());
        else
            bad = layer_norm ? nk_layer_norm_verify(&r, fp16, rows, cols, 41)
                             : nk_softmax_verify(&r, fp16, rows, cols, 41);
    }
    printf("%s %s %s %dx%d block %d grid %u\n", bad ? "FAIL" : "ok",
           layer_norm ? "layer_norm" : "softmax", fp16 ? "fp16" : "fp32", rows, cols, block,
           r.grid.x);
    failures += bad;
    nk_run_free(&r);
}

int main(void)
{
    tric_device dev;
    if (tric_device_open("cuda:0", &dev) != TRIC_SUCCESS) {
        printf("SKIP: %s\n", tric_last_error());
        return 77;
    }
    const char *arch = strcmp(tric_device_arch(dev), "sm_90") ? NULL : "sm_90a";
    char p1[4096], p2[4096], p3[4096];
    const char *sm = ex_tri_path("softmax.tri", p1, sizeof p1);
    const char *ln = ex_tri_path("layer_norm.tri", p2, sizeof p2);
    const char *at = ex_tri_path("attention.tri", p3, sizeof p3);
    const char *only = getenv("GPU_NORMS_ONLY");
    bool rows = !only || strcmp(only, "attention");
    for (int fp16 = 0; rows && fp16 <= 1; fp16++) {
        row_case(dev, sm, 0, fp16, 1000, 781, 0, arch); /* masked tail, persistent rows */
        row_case(dev, sm, 0, fp16, 4096, 8192, 0, arch);
        row_case(dev, ln, 1, fp16, 333, 8192, 0, arch);
        row_case(dev, ln, 1, fp16, 64, 5000, 1024, arch); /* five chunks, the last masked */
    }
    /* the last three with a producer warpgroup (warp_specialize=True; causal: for the first of
     * its two loops, the consumers issuing the second's copies) */
    static const NkAttnConfig cfgs[] = {
        {128, 64, 8, 3, 0}, {128, 64, 4, 3, 0}, {128, 128, 8, 2, 0}, {128, 128, 8, 3, 0},
        {64, 64, 4, 3, 0},  {128, 64, 8, 3, 1}, {128, 128, 8, 3, 1}, {64, 64, 4, 3, 1}};
    int ncfgs = (int)(sizeof cfgs / sizeof cfgs[0]);
    for (int head = 64; head <= 128; head *= 2)
        for (int causal = 0; causal <= 1; causal++)
            for (int c = 0; c < ncfgs; c++) {
                if (cfgs[c].block_n > head)
                    continue;
                NkRun r;
                int bad =
                    nk_attention_setup(&r, dev, at, 2, 3, 384, head, causal, &cfgs[c], arch, 43);
                if (bad && strstr(tric_last_error(), "shared memory")) { /* at compile time */
                    printf("skip attention D=%d %s %dx%d s%d: shared memory does not fit\n", head,
                           causal ? "causal" : "full", cfgs[c].block_m, cfgs[c].block_n,
                           cfgs[c].num_stages);
                    nk_run_free(&r);
                    continue;
                }
                if (!bad) {
                    tric_status st = tric_launch(r.kernel, r.grid, r.args, r.nargs, NULL);
                    if (st == TRIC_SUCCESS)
                        st = tric_device_synchronize(dev);
                    if (st != TRIC_SUCCESS && strstr(tric_last_error(), "shared")) {
                        printf("skip attention D=%d %dx%d: shared memory does not fit\n", head,
                               cfgs[c].block_m, cfgs[c].block_n);
                        nk_run_free(&r);
                        continue;
                    }
                    bad = st != TRIC_SUCCESS;
                    if (bad)
                        fprintf(stderr, "launch: %s\n", tric_last_error());
                    else
                        bad = nk_attention_verify(&r, 2, 3, 384, head, causal, 43);
                }
                printf("%s attention D=%d %s %dx%d w%d s%d%s\n", bad ? "FAIL" : "ok", head,
                       causal ? "causal" : "full", cfgs[c].block_m, cfgs[c].block_n,
                       cfgs[c].num_warps, cfgs[c].num_stages, cfgs[c].warp_specialize ? " ws" : "");
                failures += bad;
                nk_run_free(&r);
            }
    tric_device_close(dev);
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures != 0;
}
