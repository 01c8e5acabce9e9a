/* gpu_builtins (label gpu): every libdevice function (ir.h's TRIC_LIBDEVICE_FNS) in fp32 and
 * fp64, tl.clamp with and without NaN propagation, tl.swizzle2d and tl.debug_barrier, 5-D
 * reshapes and permutes, run on
 * cuda:0 and on the cpu interpreter with the same inputs: predicates, clamp and swizzle2d agree
 * exactly, the math functions within libdevice's error bounds (a few ulps; the interpreter is
 * correctly rounded from double). Skips (exit 77) when cuda:0 cannot be opened. */
#include "ir/ir.h"
#include "tests/runtime_check.h"

#include <math.h>
#include <stdlib.h>

enum { N = 256 };

typedef struct Pair {
    tric_device gpu, cpu;
} Pair;

/* Compiles src on both devices and launches it on each with fresh copies of the inputs; the
 * outputs (buffer `out_index`) come back in gpu_out / cpu_out. */
static bool run_both(Pair *p, const char *src, const char *sig, const char *const *defs, int ndefs,
                     const void *const *inputs, const size_t *bytes, int nbufs, int out_index,
                     const tric_arg *scalars, int nscalars, unsigned grid, void *gpu_out,
                     void *cpu_out)
{
    tric_device devs[2] = {p->gpu, p->cpu};
    void *outs[2] = {gpu_out, cpu_out};
    for (int d = 0; d < 2; d++) {
        tric_compile_options opt = tric_compile_options_default();
        opt.signature = sig;
        opt.constexprs = defs;
        opt.nconstexprs = ndefs;
        opt.no_cache = 1;
        tric_module mod;
        tric_kernel k;
        if (tric_module_compile(devs[d], src, "builtins.tri", &opt, &mod) != TRIC_SUCCESS) {
            fprintf(stderr, "compile on %s failed: %s\n%s\n", d ? "cpu" : "cuda", tric_last_error(),
                    src);
            failures++;
            return false;
        }
        CHECK(tric_module_get_kernel(mod, "k", &k) == TRIC_SUCCESS);
        tric_buffer bufs[8];
        tric_arg args[12];
        for (int i = 0; i < nbufs; i++) {
            CHECK(tric_buffer_alloc(devs[d], bytes[i], &bufs[i]) == TRIC_SUCCESS);
            if (inputs[i])
                CHECK(tric_copy_to_device(bufs[i], 0, inputs[i], bytes[i], NULL) == TRIC_SUCCESS);
            else
                CHECK(tric_memset(bufs[i], 0, 0xFF, bytes[i], NULL) == TRIC_SUCCESS);
            args[i] = TRIC_ARG_BUF(bufs[i]);
        }
        for (int i = 0; i < nscalars; i++)
            args[nbufs + i] = scalars[i];
        CHECK(tric_launch(k, (tric_dim3){grid, 1, 1}, args, nbufs + nscalars, NULL) ==
              TRIC_SUCCESS);
        CHECK(tric_device_synchronize(devs[d]) == TRIC_SUCCESS);
        CHECK(tric_copy_to_host(outs[d], bufs[out_index], 0, bytes[out_index], NULL) ==
              TRIC_SUCCESS);
        for (int i = 0; i < nbufs; i++)
            tric_buffer_free(bufs[i]);
        tric_module_destroy(mod);
    }
    return true;
}

/* Within `ulps` units in the last place of the interpreter's value (or both NaN, or equal). */
static bool close_to(double got, double want, double ulp_size, double ulps)
{
    if (isnan(got) || isnan(want))
        return isnan(got) && isnan(want);
    if (isinf(got) || isinf(want))
        return got == want;
    double ulp = want == 0 ? ulp_size * 0x1p-126 : ulp_size * exp2(floor(log2(fabs(want))));
    return fabs(got - want) <= ulps * ulp;
}

static const char *const libdevice_src = "import triton\n"
                                         "import triton.language as tl\n"
                                         "from triton.language.extra.cuda import libdevice\n"
                                         "\n"
                                         "\n"
                                         "@triton.jit\n"
                                         "def k(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):\n"
                                         "    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                                         "    x = tl.load(x_ptr + o)\n"
                                         "    y = tl.load(y_ptr + o)\n"
                                         "    tl.store(out_ptr + o, %s)\n";

static void test_libdevice(Pair *p, LibdeviceFn fn, bool f64)
{
    const LibdeviceInfo *info = libdevice_info(fn);
    char call[96], src[1024], sig[48];
    snprintf(call, sizeof call, info->nargs == 2 ? "libdevice.%s(x, y)" : "libdevice.%s(x)",
             info->name);
    if (info->result == LDR_PRED)
        strcat(call, ".to(tl.int32)");
    snprintf(src, sizeof src, libdevice_src, call);
    const char *dt = f64 ? "fp64" : "fp32";
    snprintf(sig, sizeof sig, "*%s,*%s,*%s", dt, dt, info->result == LDR_PRED ? "i32" : dt);
    static double xd[N], yd[N];
    static float xf[N], yf[N];
    static const double special[] = {0.0,  -0.0,     1.0,       -1.0, 0.5, -0.5, 2.5,
                                     -2.5, INFINITY, -INFINITY, NAN,  3.0, 100.0};
    int ns = (int)(sizeof special / sizeof *special);
    for (int i = 0; i < N; i++) {
        xd[i] = i < ns ? special[i] : -8.0 + 16.0 * (i - ns) / (N - ns);
        yd[i] = i < ns ? special[(i + 4) % ns] : 0.375 + 0.25 * (i % 11) - (i % 2 ? 3.0 : 0.0);
        xf[i] = (float)xd[i];
        yf[i] = (float)yd[i];
    }
    size_t esz = f64 ? 8 : 4;
    const void *in[3] = {f64 ? (void *)xd : (void *)xf, f64 ? (void *)yd : (void *)yf, NULL};
    size_t bytes[3] = {N * esz, N * esz, N * (info->result == LDR_PRED ? 4 : esz)};
    static unsigned char gpu_out[N * 8], cpu_out[N * 8];
    const char *defs[] = {"BLOCK=128"};
    if (!run_both(p, src, sig, defs, 1, in, bytes, 3, 2, NULL, 0, N / 128, gpu_out, cpu_out))
        return;
    int bad = 0;
    for (int i = 0; i < N && bad < 3; i++) {
        double g, c;
        if (info->result == LDR_PRED) {
            g = ((int32_t *)gpu_out)[i];
            c = ((int32_t *)cpu_out)[i];
        } else if (f64) {
            g = ((double *)gpu_out)[i];
            c = ((double *)cpu_out)[i];
        } else {
            g = ((float *)gpu_out)[i];
            c = ((float *)cpu_out)[i];
        }
        /* libdevice's documented bounds are at most a few ulps for these (lgamma and tgamma are
         * looser far from 1; their absolute error near lgamma's zeros is what matters). */
        double ulps = info->result == LDR_PRED ? 0 : (fn == LD_LGAMMA || fn == LD_TGAMMA) ? 64 : 4;
        /* fp32 libdevice runs its flush-to-zero variants (nvvm-reflect-ftz = 1, as Triton): where
         * the interpreter's result is subnormal the GPU gives 0 or the smallest normal of its sign
         * (nextafter(0, 1) steps to FLT_MIN) */
        bool flushed = !f64 && info->result != LDR_PRED && fabs(c) < 0x1p-126 &&
                       (g == 0 || (fabs(g) == 0x1p-126 && signbit(g) == signbit(c)));
        bool ok = close_to(g, c, f64 ? 0x1p-52 : 0x1p-23, ulps) || flushed ||
                  (fn == LD_LGAMMA && fabs(g - c) < (f64 ? 1e-14 : 1e-6));
        if (!ok) {
            fprintf(stderr, "%s %s: element %d (x = %g, y = %g): gpu %.17g, interpreter %.17g\n",
                    dt, info->name, i, xd[i], yd[i], g, c);
            bad++;
        }
    }
    failures += bad;
}

static void test_clamp_swizzle_barrier(Pair *p)
{
    const char *src = "import triton\n"
                      "import triton.language as tl\n"
                      "\n"
                      "\n"
                      "@triton.jit\n"
                      "def k(x_ptr, lo_ptr, hi_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
                      "    pid = tl.program_id(0)\n"
                      "    pm, pn = tl.swizzle2d(pid // 4, pid % 4, 2, 4, 3)\n"
                      "    o = (pm * 4 + pn) * BLOCK + tl.arange(0, BLOCK)\n"
                      "    x = tl.load(x_ptr + o)\n"
                      "    lo = tl.load(lo_ptr + o)\n"
                      "    hi = tl.load(hi_ptr + o)\n"
                      "    a = tl.clamp(x, lo, hi)\n"
                      "    tl.debug_barrier()\n"
                      "    b = tl.clamp(x, lo, hi, propagate_nan=tl.PropagateNan.ALL)\n"
                      "    tl.store(out_ptr + 2 * o, a)\n"
                      "    tl.store(out_ptr + 2 * o + 1, b + n * 0)\n";
    static float x[8 * 32], lo[8 * 32], hi[8 * 32];
    for (int i = 0; i < 8 * 32; i++) {
        x[i] = -4.0f + 8.0f * (float)(i % 37) / 37;
        lo[i] = (float)(i % 5) - 3.0f;
        hi[i] = lo[i] + (float)(i % 3);
        if (i % 17 == 3)
            x[i] = NAN;
        if (i % 19 == 4)
            lo[i] = NAN;
        if (i % 23 == 5)
            hi[i] = NAN;
    }
    const void *in[4] = {x, lo, hi, NULL};
    size_t bytes[4] = {sizeof x, sizeof lo, sizeof hi, 2 * sizeof x};
    static float g[2 * 8 * 32], c[2 * 8 * 32];
    const char *defs[] = {"BLOCK=32"};
    tric_arg n = TRIC_ARG_I32(3);
    if (!run_both(p, src, "*fp32,*fp32,*fp32,*fp32,i32", defs, 1, in, bytes, 4, 3, &n, 1, 8, g, c))
        return;
    int bad = 0;
    for (int i = 0; i < 2 * 8 * 32 && bad < 3; i++) {
        bool same = (isnan(g[i]) && isnan(c[i])) || g[i] == c[i];
        if (!same) {
            fprintf(stderr, "clamp/swizzle2d: element %d: gpu %g, interpreter %g\n", i,
                    (double)g[i], (double)c[i]);
            bad++;
        }
    }
    failures += bad;
}

/* Five-dimensional blocks on the GPU (tutorial 10's block scales): 2-D rows reshaped to
 * (2, 2, 32, 4, 4) and 5-D offsets, each permuted by x.trans(0, 3, 2, 1, 4) and reshaped to
 * (256, 8): out[(a*4 + d)*32 + c][b*4 + e] = in[a][b][c][d][e] on both devices. */
static void test_rank5_permute(Pair *p)
{
    const char *src =
        "import triton\n"
        "import triton.language as tl\n"
        "\n"
        "\n"
        "@triton.jit\n"
        "def k(s_ptr, o_ptr, USE_2D: tl.constexpr):\n"
        "    if USE_2D:\n"
        "        offs = tl.arange(0, 2)[:, None] * 1024 + tl.arange(0, 1024)[None, :]\n"
        "        s = tl.load(s_ptr + offs).reshape(2, 2, 32, 4, 4)\n"
        "    else:\n"
        "        a = tl.arange(0, 2)\n"
        "        c = tl.arange(0, 32)\n"
        "        d = tl.arange(0, 4)\n"
        "        s = tl.load(s_ptr + a[:, None, None, None, None] * 1024 +\n"
        "                    a[None, :, None, None, None] * 512 +\n"
        "                    c[None, None, :, None, None] * 16 +\n"
        "                    d[None, None, None, :, None] * 4 + d[None, None, None, None, :])\n"
        "    s = s.trans(0, 3, 2, 1, 4).reshape(256, 8)\n"
        "    tl.store(o_ptr + tl.arange(0, 256)[:, None] * 8 + tl.arange(0, 8)[None, :], s)\n";
    static int32_t in[2048], g[2048], c[2048];
    for (int i = 0; i < 2048; i++)
        in[i] = i * 7 + 3;
    for (int use_2d = 0; use_2d < 2; use_2d++) {
        const void *ins[2] = {in, NULL};
        size_t bytes[2] = {sizeof in, sizeof g};
        const char *defs[] = {use_2d ? "USE_2D=True" : "USE_2D=False"};
        if (!run_both(p, src, "*i32,*i32", defs, 1, ins, bytes, 2, 1, NULL, 0, 1, g, c))
            return;
        int bad = 0;
        for (int i = 0; i < 2048 && bad < 3; i++) {
            int a = i >> 10, b = (i >> 9) & 1, cc = (i >> 4) & 31, dd = (i >> 2) & 3, e = i & 3;
            int o = ((a * 4 + dd) * 32 + cc) * 8 + b * 4 + e;
            if (g[o] != in[i] || c[o] != in[i]) {
                fprintf(stderr,
                        "rank-5 permute (USE_2D=%d): out[%d]: gpu %d, interpreter %d, want %d\n",
                        use_2d, o, g[o], c[o], in[i]);
                bad++;
            }
        }
        failures += bad;
    }
}

int main(void)
{
    Pair p;
    if (tric_device_open("cuda:0", &p.gpu) != TRIC_SUCCESS) {
        printf("SKIP: %s\n", tric_last_error());
        return 77;
    }
    CHECK(tric_device_open("cpu", &p.cpu) == TRIC_SUCCESS);
    printf("device: %s (arch %s)\n", tric_device_name(p.gpu), tric_device_arch(p.gpu));
    for (int fn = 0; fn < LD_COUNT; fn++) {
        test_libdevice(&p, (LibdeviceFn)fn, false);
        test_libdevice(&p, (LibdeviceFn)fn, true);
    }
    test_clamp_swizzle_barrier(&p);
    test_rank5_permute(&p);
    tric_device_close(p.cpu);
    tric_device_close(p.gpu);
    if (failures) {
        printf("FAIL: %d\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
