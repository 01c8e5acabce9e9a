/* passes_interp_diff.c: every pass keeps the kernel's meaning, checked on the interpreter. Each
 * test kernel (the dot loop, both seed matmuls with A and B in either orientation, the linear
 * layer, also in fp32 and fp8) is lowered once, run by the interpreter, then taken through the passes one at a time for
 * sm_80 (mma.sync + local_load) and sm_90a (wgmma reading shared memory) and num_stages 1 to 5;
 * after every pass the interpreter runs it again on the same inputs and every output element
 * must be bit-identical. The interpreter also checks the memory pipeline's discipline (no read
 * of a slot before its async copy was waited for, no copy into a slot an in-flight wgmma reads),
 * so a wrong schedule fails here, on the CPU. With num_stages >= 2 the pipeline pass must really
 * have pipelined (async copies in the IR), and on sm_90a the cases marked tma go through TMA
 * (passes/tma.c: tma_load ops, the masks become the tensor maps' bounds). */
#include "exec_test.h"
#include "interp_passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The case table lists only the fields a case needs; in_f32 is false unless given. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

enum { MAX_ARGS = 16, MAX_BUFS = 4 };

typedef struct Case {
    const char *file; /* relative to the source root */
    const char *kernel;
    const char *signature;
    const char *defs[8];
    int grid[2];
    int nbufs;
    size_t buf_elems[MAX_BUFS]; /* buffers are the first nbufs params, fp16 except the output */
    int out;                    /* the output buffer (fp32 when out_f32, else fp16) */
    bool out_f32;
    int64_t ints[12]; /* the int params after the buffers */
    int nints;
    int num_warps;
    bool in_f32;      /* inputs fp32 (tf32 dots: pipelined on sm_90a only, FMA elsewhere) */
    bool in_fp8;      /* inputs e4m3 (wgmma's fp8 form on sm_90a, pipelined when K-contiguous;
                           widened to fp16 for mma.sync elsewhere, not pipelined) */
    bool unpipelined; /* the pipeline pass leaves the loop as it is (the case says why) */
    bool tma;         /* on sm_90a the pipeline's copies go through TMA (passes/tma.c) */
} Case;

static uint32_t rng_state = 7;
static uint16_t random_half(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    /* small values of either sign: exponent 13..14 (0.25 .. 1), random mantissa */
    uint32_t r = rng_state >> 8;
    return (uint16_t)(((r & 1) << 15) | ((13 + ((r >> 1) & 1)) << 10) | ((r >> 2) & 1023));
}

/* Runs f on fresh copies of init; the output buffer's bytes land in out. */
static bool run_kernel(const IrFunc *f, const Case *c, void *const *init, void *out, StrBuf *err)
{
    void *bufs[MAX_BUFS];
    InterpArg args[MAX_ARGS];
    InterpBuffer ib[MAX_BUFS];
    for (int i = 0; i < c->nbufs; i++) {
        size_t bytes =
            c->buf_elems[i] * ((i == c->out && c->out_f32) || (i != c->out && c->in_f32) ? 4
                               : i != c->out && c->in_fp8                                ? 1
                                                                                         : 2);
        bufs[i] = malloc(bytes);
        memcpy(bufs[i], init[i], bytes);
        args[i].ptr = (uint64_t)(uintptr_t)bufs[i];
        ib[i] = (InterpBuffer){(uint64_t)(uintptr_t)bufs[i], bytes};
    }
    for (int i = 0; i < c->nints; i++)
        args[c->nbufs + i].i = c->ints[i];
    InterpLaunch l = {.grid = {c->grid[0], c->grid[1] ? c->grid[1] : 1, 1},
                      .args = args,
                      .nargs = c->nbufs + c->nints,
                      .buffers = ib,
                      .nbuffers = c->nbufs};
    bool ok = interp_run(f, &l, err);
    memcpy(out, bufs[c->out], c->buf_elems[c->out] * (c->out_f32 ? 4 : 2));
    for (int i = 0; i < c->nbufs; i++)
        free(bufs[i]);
    return ok;
}

/* Every output element within 1e-2 (relative to max(1, |want|)) of want's. */
static bool close_enough(const void *want, const void *got, const Case *c)
{
    size_t n = c->buf_elems[c->out];
    for (size_t j = 0; j < n; j++) {
        float w = c->out_f32 ? ((const float *)want)[j] : half_value(((const uint16_t *)want)[j]);
        float g = c->out_f32 ? ((const float *)got)[j] : half_value(((const uint16_t *)got)[j]);
        if (!(fabsf(w - g) <= 1e-2f * fmaxf(1.0f, fabsf(w))))
            return false;
    }
    return true;
}

/* The callbacks of interp_passes_check (interp_passes.h): the case and its inputs. */
typedef struct RunCtx {
    const Case *c;
    void *const *init;
} RunCtx;

static bool run_ctx(const IrFunc *f, const void *ctx, void *out, StrBuf *err)
{
    const RunCtx *r = ctx;
    return run_kernel(f, r->c, r->init, out, err);
}

static bool close_ctx(const void *want, const void *got, const void *ctx)
{
    return close_enough(want, got, ((const RunCtx *)ctx)->c);
}

/* With num_stages >= 2 the pipeline pass must really have pipelined (async copies in the IR),
 * and on sm_90a the cases marked tma go through TMA. fp32 tiles are copied ahead for wgmma's
 * tf32 form on sm_90a and for the FMA dot elsewhere (which reads its slots in the loads' order,
 * K contiguous for A here); fp8 ones for wgmma only (on sm_80 they are widened in registers). */
static void check_pipeline(const IrFunc *f, const char *pass, const char *arch, bool arch_specific,
                           int stages, const void *ctx)
{
    const Case *c = ((const RunCtx *)ctx)->c;
    bool pipelines = stages >= 2 && !c->unpipelined && (!c->in_fp8 || arch_specific);
    if (!strcmp(pass, "tma"))
        CHECK((c->tma && arch_specific && pipelines) == (count_ops(&f->body, OP_TMA_LOAD) > 0),
              "%s (%s) %s stages %d: %d tma loads after the tma pass", c->kernel, c->signature,
              arch, stages, count_ops(&f->body, OP_TMA_LOAD));
    if (!strcmp(pass, "pipeline"))
        CHECK(pipelines == (count_ops(&f->body, OP_ASYNC_COPY) > 0),
              "%s %s stages %d: %d async copies after the pipeline pass", c->kernel, arch, stages,
              count_ops(&f->body, OP_ASYNC_COPY));
}

static void run_case(const Case *c)
{
    Lowered low;
    bool ok = interp_passes_lower(&low, c->file, c->kernel, c->signature, c->defs, c->num_warps);
    if (!ok) {
        interp_passes_lowered_free(&low);
        return;
    }

    void *init[MAX_BUFS];
    for (int i = 0; i < c->nbufs; i++) {
        size_t n = c->buf_elems[i];
        if (i == c->out) {
            size_t bytes = n * (c->out_f32 ? 4 : 2);
            init[i] = malloc(bytes);
            memset(init[i], 0x7f, bytes); /* poison: every element must be written */
            continue;
        }
        if (c->in_fp8) {
            uint8_t *x = malloc(n);
            for (size_t j = 0; j < n; j++)
                x[j] = fp8_from_double(half_value(random_half()), DT_F8E4NV);
            init[i] = x;
            continue;
        }
        if (c->in_f32) {
            float *x = malloc(n * 4);
            for (size_t j = 0; j < n; j++)
                x[j] = half_value(random_half());
            init[i] = x;
            continue;
        }
        uint16_t *h = malloc(n * 2);
        for (size_t j = 0; j < n; j++)
            h[j] = random_half();
        init[i] = h;
    }
    size_t out_bytes = c->buf_elems[c->out] * (c->out_f32 ? 4 : 2);
    void *want = malloc(out_bytes);
    StrBuf err = {0};
    ok = run_kernel(low.res.ir, c, init, want, &err);
    CHECK(ok, "%s as lowered: %s", c->kernel, err.data ? err.data : "");

    RunCtx ctx = {c, init};
    PassCheck pc = {.kernel = c->kernel,
                    .num_warps = c->num_warps,
                    .max_stages = 5,
                    .out_bytes = out_bytes,
                    .want = want,
                    .ctx = &ctx,
                    .run = run_ctx,
                    .close = close_ctx,
                    .after_pass = check_pipeline};
    if (ok)
        interp_passes_check(low.res.ir, &pc);
    strbuf_free(&err);
    free(want);
    for (int i = 0; i < c->nbufs; i++)
        free(init[i]);
    interp_passes_lowered_free(&low);
}

int main(void)
{
    /* M, N, K off the block sizes so every mask and the K tail matter. */
    enum { M = 80, N = 96, K = 112 };
    /* seed 1 with its strides declared :16 / :1 (else its loads are element by element and
     * nothing is pipelined, as in Triton) and M, N, K :16 (its `% M`, `% N` and k masks keep
     * the contiguity then); M and N are still not multiples of the blocks */
    const char *mm1_sig =
        "*fp16:16,*fp16:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1";
    const char *mm1_t_sig =
        "*fp16:16,*fp16:16,*fp32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:16,i32:1";
    const char *mm1_f32_sig =
        "*fp32:16,*fp32:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1";
    const char *mm1_t_f32_sig =
        "*fp32:16,*fp32:16,*fp32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:16,i32:1";
    const Case cases[] = {
        /* halves of a tile (subtile.tri): an accumulator's, kept in its registers, and a loaded
         * tile's, through scratch */
        {"tests/lit/codegen/subtile.tri",
         "acc_halves",
         "*fp16:16,*fp16:16,*fp32:16",
         {"M=128", "N=128", "K=64"},
         {1},
         3,
         {128 * 64, 64 * 128, 128 * 128},
         2,
         true,
         {0},
         0,
         4,
         .unpipelined = true},
        {"tests/lit/codegen/subtile.tri",
         "tile_halves",
         "*fp16:16,*fp32:16",
         {"M=64", "N=32"},
         {1},
         2,
         {64 * 32, 64 * 16},
         1,
         true,
         {0},
         0,
         4,
         .unpipelined = true},
        {"tests/lit/codegen/dot_loop.tri",
         "dot_loop",
         "*fp16:16,*fp16:16,*fp32:16,i32:16",
         {"T=tl.float16", "M=64", "N=64", "BK=32"},
         {1},
         3,
         {64 * K, K * 64, 64 * 64},
         2,
         true,
         {K},
         1,
         4,
         .tma = true},
        /* a non-zero `other` (1.0 past K) on A: it travels with the async copy */
        {"tests/lit/codegen/dot_other.tri",
         "dot_other",
         "*fp16:16,*fp16:16,*fp32:16,i32:16",
         {"M=64", "N=64", "BK=32"},
         {1},
         3,
         {64 * K, K * 64, 64 * 64},
         2,
         true,
         {K},
         1,
         4},
        {"tests/lit/codegen/dot_loop.tri",
         "dot_loop",
         "*bf16:16,*bf16:16,*fp32:16,i32:16",
         {"T=tl.bfloat16", "M=128", "N=64", "BK=64"},
         {1},
         3,
         {128 * 192, 192 * 64, 128 * 64},
         2,
         true,
         {192},
         1,
         8,
         .tma = true},
        /* seed 1: A row-major, B row-major */
        {"examples/matmul.tri",
         "matmul_kernel",
         mm1_sig,
         {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=32"},
         {2 * 2},
         3,
         {M * K, K * N, M * N},
         2,
         true,
         {M, N, K, K, 1, N, 1, N, 1},
         9,
         4,
         .tma = true},
        /* seed 1, A column-major and B passed transposed (K-contiguous) */
        {"examples/matmul.tri",
         "matmul_kernel",
         mm1_t_sig,
         {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=32"},
         {2 * 2},
         3,
         {M * K, K * N, M * N},
         2,
         true,
         {M, N, K, 1, M, 1, K, N, 1},
         9,
         4,
         .tma = true},
        /* the same two in fp32: tf32 dots on sm_90a, whose K-major slots take the M- or N-major
         * tiles element by element */
        {"examples/matmul.tri",
         "matmul_kernel",
         mm1_f32_sig,
         {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=32"},
         {2 * 2},
         3,
         {M * K, K * N, M * N},
         2,
         true,
         {M, N, K, K, 1, N, 1, N, 1},
         9,
         4,
         true},
        {"examples/matmul.tri",
         "matmul_kernel",
         mm1_t_f32_sig,
         {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=32"},
         {2 * 2},
         3,
         {M * K, K * N, M * N},
         2,
         true,
         {M, N, K, 1, M, 1, K, N, 1},
         9,
         4,
         true},
        /* seed 2 in fp32 (B N-major) */
        {"examples/matmul.tri",
         "kernel_matmul",
         "*fp32:16,*fp32:16,*fp32:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
         {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=32", "GROUP_SIZE_M=8",
          "T_C=tl.float32", "T_ACC=tl.float32"},
         {3 * 2},
         3,
         {192 * 96, 96 * 128, 192 * 128},
         2,
         true,
         {192, 128, 96, 96, 1, 128, 1, 128, 1},
         9,
         4,
         true},
        /* seed 2: grouped program order, fp16 output; it has no masks, so sizes are whole blocks */
        {"examples/matmul.tri",
         "kernel_matmul",
         "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
         {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=32", "GROUP_SIZE_M=8",
          "T_C=tl.float16", "T_ACC=tl.float32"},
         {3 * 2},
         3,
         {192 * 96, 96 * 128, 192 * 128},
         2,
         false,
         {192, 128, 96, 96, 1, 128, 1, 128, 1},
         9,
         4,
         .tma = true},
        /* the linear layer, w [N, K] */
        {"examples/linear.tri",
         "linear_kernel",
         "*fp16:16,*fp16:16,*fp16:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:"
         "16,i32:1",
         {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32"},
         {2, 2},
         4,
         {96 * 112, 80 * 112, 80, 96 * 80},
         3,
         true,
         {96, 80, 112, 112, 1, 112, 1, 80, 1},
         9,
         4,
         .tma = true},
        /* sizes and strides only divisible by 4: pipelined with 8-byte copies */
        {"examples/linear.tri",
         "linear_kernel",
         "*fp16:16,*fp16:16,*fp16:16,*fp32:16,i32:4,i32:4,i32:4,i32:4,i32:1,i32:4,i32:1,i32:4,i32:"
         "1",
         {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32"},
         {2, 2},
         4,
         {100 * 108, 76 * 108, 76, 100 * 76},
         3,
         true,
         {100, 76, 108, 108, 1, 108, 1, 76, 1},
         9,
         4},
        /* the same in fp32: tf32 dots, copied along K and read K-major by wgmma on sm_90a */
        {"examples/linear.tri",
         "linear_kernel",
         "*fp32:16,*fp32:16,*fp32:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,i32:"
         "16,i32:1",
         {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32"},
         {2, 2},
         4,
         {96 * 112, 80 * 112, 80, 96 * 80},
         3,
         true,
         {96, 80, 112, 112, 1, 112, 1, 80, 1},
         9,
         4,
         true,
         .tma = true},
        /* the same in fp8 (e4m3): on sm_90a copied along K and read K-major by wgmma's fp8 form
         * (serially with one stage); on sm_80 widened to fp16 for mma.sync, not pipelined */
        {"examples/linear.tri",
         "linear_kernel",
         "*fp8e4nv:16,*fp8e4nv:16,*fp8e4nv:16,*fp32:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,"
         "i32:1,i32:16,i32:1",
         {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32"},
         {2, 2},
         4,
         {96 * 112, 80 * 112, 80, 96 * 80},
         3,
         true,
         {96, 80, 112, 112, 1, 112, 1, 80, 1},
         9,
         4,
         false,
         true,
         .tma = true},
        /* block pointers (the loop carries each pointer's leaves; its offsets advance by BLOCK_K),
         * B column-major, M and N odd: pipelined once K and the strides are specialized */
        {"tests/lit/codegen/block_ptr.tri",
         "bp_matmul",
         "*fp16:16,*fp16:16,*fp32:16,i32,i32,i32:16,i32:16,i32:1,i32:1,i32:16,i32,i32:1",
         {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32"},
         {2 * 2},
         3,
         {77 * 112, 112 * 93, 77 * 93},
         2,
         true,
         {77, 93, 112, 112, 1, 1, 112, 93, 1},
         9,
         4,
         .tma = true},
        /* ... and as tests/unit/codegen_gpu_diff.c runs it, nothing specialized and K = 75: every
         * copy would be one element (2 bytes, under cp.async's 4), so the loop stays as it is */
        {"tests/lit/codegen/block_ptr.tri",
         "bp_matmul",
         "*fp16:16,*fp16:16,*fp32:16,i32,i32,i32,i32,i32,i32,i32,i32,i32",
         {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32"},
         {2 * 3},
         3,
         {100 * 75, 75 * 130, 100 * 130},
         2,
         true,
         {100, 130, 75, 75, 1, 1, 75, 130, 1},
         9,
         4,
         false,
         false,
         true},
        /* tensor descriptors, desc.load([off_m, k]): addresses from the induction variable */
        {"tests/lit/codegen/desc_matmul.tri",
         "desc_matmul",
         "*fp16:16,*fp16:16,*fp32:16,i32,i32:16,i32:16",
         {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32"},
         {2 * 2},
         3,
         {77 * 112, 112 * 96, 77 * 96},
         2,
         true,
         {77, 96, 112},
         3,
         4,
         .tma = true},
        /* a persistent matmul through descriptors: 3 programs walk the 2 x 2 tiles, the
         * pipelined K loop (TMA on sm_90a) inside the tile loop */
        {"tests/lit/codegen/desc_persistent.tri",
         "desc_persistent",
         "*fp16:16,*fp16:16,*fp32:16,i32,i32:16,i32:16",
         {"BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32", "NUM_PROGS=3"},
         {3},
         3,
         {77 * 112, 112 * 96, 77 * 96},
         2,
         true,
         {77, 96, 112},
         3,
         4,
         .tma = true},
        /* tutorial 06's attention loop through descriptors (offsetk_y += BLOCK_N carried, two
         * dots, the K tail masked): q comes from before the loop and p from the softmax, so K
         * (through .T) and V are copied ahead alone and read back whole from their slots */
        {"tests/lit/codegen/desc_attention.tri",
         "desc_attention",
         "*fp16:16,*fp16:16,*fp16:16,*fp32:16,i32:16",
         {"BLOCK_M=64", "BLOCK_N=32", "HEAD_DIM=64"},
         {2},
         4,
         {112 * 64, 112 * 64, 112 * 64, 112 * 64},
         3,
         true,
         {112},
         1,
         4,
         .tma = true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
    if (test_failures)
        printf("%d failures\n", test_failures);
    else
        printf("passes_interp_diff: every pass kept every kernel's results\n");
    return test_failures ? 1 : 0;
}
