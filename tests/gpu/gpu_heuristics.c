/* gpu_heuristics (label gpu): @triton.heuristics whose lambdas read run-time arguments (n, alpha)
 * evaluated at every launch on cuda:0 -- each set of values runs its own variant, the grid
 * function reads the variant's constexprs -- checked element by element (output poisoned) against
 * the values the lambdas imply, and against the cpu interpreter running the same launches. Skips
 * (exit 77) when cuda:0 cannot be opened. */
#include "tests/runtime_check.h"

#include <stdbool.h>
#include <stdlib.h>

static const char *const src =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.heuristics({\"EVEN\": lambda args: args[\"n\"] % args[\"BLOCK\"] == 0,\n"
    "                    \"NBLK\": lambda args: triton.cdiv(args[\"n\"], args[\"BLOCK\"]),\n"
    "                    \"SCALE\": lambda args: 2 if args[\"alpha\"] > 0.5 else 64 // "
    "(args[\"n\"] - 7)})\n"
    "@triton.jit\n"
    "def k(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr, EVEN: tl.constexpr, NBLK: tl.constexpr,\n"
    "      SCALE: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    if EVEN:\n"
    "        x = tl.load(x_ptr + offs)\n"
    "        tl.store(y_ptr + offs, x * SCALE + NBLK)\n"
    "    else:\n"
    "        x = tl.load(x_ptr + offs, mask=offs < n)\n"
    "        tl.store(y_ptr + offs, x * SCALE + NBLK + 1000, mask=offs < n)\n";

static tric_dim3 nblk_grid(tric_kernel config, const tric_arg *args, int nargs, void *user)
{
    (void)args;
    (void)nargs;
    (void)user;
    int64_t nb = 1;
    if (tric_kernel_constexpr(config, "NBLK", &nb) != TRIC_SUCCESS || nb < 1)
        nb = 1;
    return (tric_dim3){(unsigned)nb, 1, 1};
}

enum { CAP = 4096 };

static bool run(tric_device dev, tric_kernel k, int n, float alpha, float *hy)
{
    static float hx[CAP];
    for (int i = 0; i < CAP; i++)
        hx[i] = (float)(i % 17) - 8.0f;
    tric_buffer bx, by;
    CHECK(tric_buffer_alloc(dev, sizeof(float) * (size_t)n, &bx) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, sizeof(float) * (size_t)n, &by) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(bx, 0, hx, sizeof(float) * (size_t)n, NULL) == TRIC_SUCCESS);
    CHECK(tric_memset(by, 0, 0xFF, sizeof(float) * (size_t)n, NULL) == TRIC_SUCCESS);
    tric_arg args[4] = {TRIC_ARG_BUF(bx), TRIC_ARG_BUF(by), TRIC_ARG_I32(n), TRIC_ARG_F32(alpha)};
    bool ok = tric_launch_grid(k, nblk_grid, NULL, args, 4, NULL) == TRIC_SUCCESS;
    CHECK(ok);
    CHECK(tric_device_synchronize(dev) == TRIC_SUCCESS);
    CHECK(tric_copy_to_host(hy, by, 0, sizeof(float) * (size_t)n, NULL) == TRIC_SUCCESS);
    tric_buffer_free(bx);
    tric_buffer_free(by);
    for (int i = 0; ok && i < n; i++) {
        int nblk = (n + 63) / 64, scale = alpha > 0.5f ? 2 : 64 / (n - 7);
        float want = hx[i] * (float)scale + (float)nblk + (n % 64 == 0 ? 0.0f : 1000.0f);
        if (hy[i] != want) {
            fprintf(stderr, "%s n=%d alpha=%g: element %d is %g, expected %g\n",
                    tric_device_name(dev), n, alpha, i, hy[i], want);
            failures++;
            return false;
        }
    }
    return ok;
}

static tric_kernel compile(tric_device dev, tric_module *mod)
{
    tric_compile_options opt = tric_compile_options_default();
    const char *defs[] = {"BLOCK=64"};
    opt.signature = "*fp32,*fp32,i32,fp32";
    opt.constexprs = defs;
    opt.nconstexprs = 1;
    opt.no_cache = 1;
    tric_kernel k = NULL;
    if (tric_module_compile(dev, src, "heuristics.tri", &opt, mod) != TRIC_SUCCESS) {
        fprintf(stderr, "compile failed: %s\n", tric_last_error());
        failures++;
        return NULL;
    }
    CHECK(tric_module_get_kernel(*mod, "k", &k) == TRIC_SUCCESS);
    return k;
}

int main(void)
{
    tric_device gpu, cpu;
    if (tric_device_open("cuda:0", &gpu) != TRIC_SUCCESS) {
        printf("SKIP: %s\n", tric_last_error());
        return 77;
    }
    CHECK(tric_device_open("cpu", &cpu) == TRIC_SUCCESS);
    printf("device: %s (arch %s)\n", tric_device_name(gpu), tric_device_arch(gpu));
    tric_module mg, mc;
    tric_kernel kg = compile(gpu, &mg), kc = compile(cpu, &mc);
    static const struct {
        int n;
        float alpha;
    } launches[] = {{128, 1.0f}, {100, 1.0f}, {39, 0.0f}, {4096, 0.0f}, {4000, 1.0f}, {100, 1.0f}};
    static float on_gpu[CAP], on_cpu[CAP];
    for (size_t i = 0; kg && kc && i < sizeof launches / sizeof *launches; i++) {
        int n = launches[i].n;
        if (run(gpu, kg, n, launches[i].alpha, on_gpu) &&
            run(cpu, kc, n, launches[i].alpha, on_cpu))
            failures += memcmp(on_gpu, on_cpu, sizeof(float) * (size_t)n) != 0;
    }
    if (kg)
        tric_module_destroy(mg);
    if (kc)
        tric_module_destroy(mc);
    tric_device_close(cpu);
    tric_device_close(gpu);
    if (failures) {
        printf("FAIL: %d\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
