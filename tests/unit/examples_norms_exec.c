/* examples_norms_exec: the three tutorial kernels of bench/bench_norms.c (examples/softmax.tri,
 * layer_norm.tri, attention.tri) on the cpu device (the interpreter) at tiny sizes, every output
 * element checked against C (examples/norms_kernels.h), so the kernels are known correct before
 * a GPU run. Shapes that exercise the masks and loops: softmax with n_cols not a power of two and
 * a persistent grid of 2 programs walking 5 rows; layer norm with BLOCK_SIZE smaller than the row
 * (the three column loops run several chunks, the last one masked); attention causal and not,
 * head dim 32 and 64, more than one K/V block per program. */
#include "examples/norms_kernels.h"

static int failures;

static void softmax_case(tric_device dev, const char *tri, int fp16, int rows, int cols)
{
    NkRun r;
    int bad = nk_softmax_setup(&r, dev, tri, fp16, rows, cols, NULL, 31);
    if (!bad) {
        r.grid.x = 2; /* each program walks several rows */
        bad = tric_launch(r.kernel, r.grid, r.args, r.nargs, NULL) != TRIC_SUCCESS;
        if (bad)
            fprintf(stderr, "softmax launch: %s\n", tric_last_error());
        else
            bad = nk_softmax_verify(&r, fp16, rows, cols, 31);
    }
    printf("%s softmax %s %dx%d\n", bad ? "FAIL" : "ok", fp16 ? "fp16" : "fp32", rows, cols);
    failures += bad;
    nk_run_free(&r);
}

static void layer_norm_case(tric_device dev, const char *tri, int fp16, int rows, int cols,
                            int block)
{
    NkRun r;
    int bad = nk_layer_norm_setup(&r, dev, tri, fp16, rows, cols, NULL, block, 32);
    if (!bad) {
        bad = tric_launch(r.kernel, r.grid, r.args, r.nargs, NULL) != TRIC_SUCCESS;
        if (bad)
            fprintf(stderr, "layer_norm launch: %s\n", tric_last_error());
        else
            bad = nk_layer_norm_verify(&r, fp16, rows, cols, 32);
    }
    printf("%s layer_norm %s %dx%d BLOCK_SIZE=%d\n", bad ? "FAIL" : "ok", fp16 ? "fp16" : "fp32",
           rows, cols, block);
    failures += bad;
    nk_run_free(&r);
}

static void attention_case(tric_device dev, const char *tri, int n_ctx, int head, int causal,
                           NkAttnConfig cfg)
{
    NkRun r;
    int bad = nk_attention_setup(&r, dev, tri, 1, 2, n_ctx, head, causal, &cfg, NULL, 33);
    if (!bad) {
        bad = tric_launch(r.kernel, r.grid, r.args, r.nargs, NULL) != TRIC_SUCCESS;
        if (bad)
            fprintf(stderr, "attention launch: %s\n", tric_last_error());
        else
            bad = nk_attention_verify(&r, 1, 2, n_ctx, head, causal, 33);
    }
    printf("%s attention N_CTX=%d D=%d %s %dx%d\n", bad ? "FAIL" : "ok", n_ctx, head,
           causal ? "causal" : "full", cfg.block_m, cfg.block_n);
    failures += bad;
    nk_run_free(&r);
}

int main(void)
{
    tric_device dev;
    if (tric_device_open("cpu", &dev) != TRIC_SUCCESS) {
        fprintf(stderr, "cpu device: %s\n", tric_last_error());
        return 1;
    }
    char p1[4096], p2[4096], p3[4096];
    const char *sm = ex_tri_path("softmax.tri", p1, sizeof p1);
    const char *ln = ex_tri_path("layer_norm.tri", p2, sizeof p2);
    const char *at = ex_tri_path("attention.tri", p3, sizeof p3);
    softmax_case(dev, sm, 0, 5, 100);
    softmax_case(dev, sm, 1, 5, 64);
    layer_norm_case(dev, ln, 0, 3, 300, 128);
    layer_norm_case(dev, ln, 1, 3, 96, 0);
    layer_norm_case(dev, ln, 1, 2, 200, 64);
    attention_case(dev, at, 128, 32, 0, (NkAttnConfig){32, 32, 4, 3, 0});
    attention_case(dev, at, 128, 32, 1, (NkAttnConfig){32, 32, 4, 3, 0});
    attention_case(dev, at, 128, 64, 1, (NkAttnConfig){64, 32, 4, 3, 0});
    tric_device_close(dev);
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures != 0;
}
