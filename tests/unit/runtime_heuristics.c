/* runtime_heuristics: @triton.heuristics on the cpu device. A row-sum kernel whose K loop loads
 * unmasked when the heuristic EVEN_K says K is a multiple of BLOCK_K (an unmasked load past K
 * would be the interpreter's out-of-bounds error) and whose BLOCK_M comes from
 * triton.next_power_of_2; run with K even and odd, alone and under @triton.autotune (configs'
 * BLOCK_K visible to the heuristics), the results checked against C and the heuristic values read
 * back with tric_kernel_constexpr; a value given for the heuristic's parameter wins. Heuristics
 * that read run-time arguments (n, alpha) are evaluated at every launch, each set of values
 * running its own variant (the grid function reads the variant's constexprs); a lambda that fails
 * on a launch's values is that launch's error. A constexpr annotated with an alias
 * (`constexpr as C`) is no run-time argument: sema says so, not the annotation's text. */
#include "tests/runtime_check.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

static const char *const src =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "%s\n"
    "@triton.heuristics({\n"
    "    \"EVEN_K\": lambda args: args[\"K\"] %% args[\"BLOCK_K\"] == 0,\n"
    "    \"BLOCK_M\": lambda args: min(triton.next_power_of_2(args[\"M\"]), 16),\n"
    "})\n"
    "@triton.jit\n"
    "def rowsum(x_ptr, y_ptr, ld, M: tl.constexpr, K: tl.constexpr, BLOCK_K: tl.constexpr,\n"
    "           EVEN_K: tl.constexpr, BLOCK_M: tl.constexpr):\n"
    "    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)\n"
    "    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)\n"
    "    for k0 in range(0, K, BLOCK_K):\n"
    "        cols = k0 + tl.arange(0, BLOCK_K)\n"
    "        p = x_ptr + rows[:, None] * ld + cols[None, :]\n"
    "        if EVEN_K:\n"
    "            x = tl.load(p, mask=rows[:, None] < M, other=0.0)\n"
    "        else:\n"
    "            x = tl.load(p, mask=(rows[:, None] < M) & (cols[None, :] < K), other=0.0)\n"
    "        acc += tl.sum(x, axis=1)\n"
    "    tl.store(y_ptr + rows, acc, mask=rows < M)\n";

static const char *const autotune_decorator = "@triton.autotune(configs=[triton.Config({\"BLOCK_"
                                              "K\": 16}), triton.Config({\"BLOCK_K\": 32})],\n"
                                              "                 key=[\"ld\"])";

/* grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]),): BLOCK_M is a heuristic's value. */
static tric_dim3 rowsum_grid(tric_kernel config, const tric_arg *args, int nargs, void *user)
{
    (void)args;
    (void)nargs;
    int64_t bm = 1;
    if (tric_kernel_constexpr(config, "BLOCK_M", &bm) != TRIC_SUCCESS || bm < 1)
        bm = 1;
    int m = *(const int *)user;
    return (tric_dim3){(unsigned)((m + bm - 1) / bm), 1, 1};
}

static void run_rowsum(tric_device dev, bool tuned, int m, int kk, int block_k, int want_even,
                       int want_block_m, const char *extra_def)
{
    char text[4096], dm[32], dk[32], db[32];
    snprintf(text, sizeof text, src, tuned ? autotune_decorator : "");
    snprintf(dm, sizeof dm, "M=%d", m);
    snprintf(dk, sizeof dk, "K=%d", kk);
    snprintf(db, sizeof db, "BLOCK_K=%d", block_k);
    const char *defs[4] = {dm, dk, NULL, NULL};
    int ndefs = 2;
    if (!tuned)
        defs[ndefs++] = db;
    if (extra_def)
        defs[ndefs++] = extra_def;
    tric_compile_options opt = tric_compile_options_default();
    opt.signature = "*fp32,*fp32,i32";
    opt.constexprs = defs;
    opt.nconstexprs = ndefs;
    tric_module mod;
    tric_kernel k;
    if (tric_module_compile(dev, text, "rowsum.tri", &opt, &mod) != TRIC_SUCCESS) {
        CHECK(!"rowsum compiles");
        return;
    }
    CHECK(tric_module_get_kernel(mod, "rowsum", &k) == TRIC_SUCCESS);
    float *hx = malloc(sizeof *hx * (size_t)(m * kk)), *hy = malloc(sizeof *hy * (size_t)m);
    for (int i = 0; i < m * kk; i++)
        hx[i] = (float)((i * 7) % 13) - 6.0f;
    tric_buffer bx, by;
    CHECK(tric_buffer_alloc(dev, sizeof(float) * (size_t)(m * kk), &bx) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, sizeof(float) * (size_t)m, &by) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(bx, 0, hx, sizeof(float) * (size_t)(m * kk), NULL) == TRIC_SUCCESS);
    CHECK(tric_memset(by, 0, 0xFF, sizeof(float) * (size_t)m, NULL) == TRIC_SUCCESS);
    tric_arg args[3] = {TRIC_ARG_BUF(bx), TRIC_ARG_BUF(by), TRIC_ARG_I32(kk)};
    tric_kernel run = k;
    if (tuned) {
        int chosen = -1;
        CHECK(tric_kernel_tune(k, rowsum_grid, &m, args, 3, NULL, &chosen) == TRIC_SUCCESS);
        CHECK(tric_kernel_config(k, chosen < 0 ? 0 : chosen, &run) == TRIC_SUCCESS);
    }
    int64_t even = -1, bm = -1, bk = 0;
    if (want_even == -2) /* what the config that runs implies */
        want_even =
            tric_kernel_constexpr(run, "BLOCK_K", &bk) == TRIC_SUCCESS && bk > 0 && kk % bk == 0;
    CHECK(tric_kernel_constexpr(run, "EVEN_K", &even) == TRIC_SUCCESS && even == want_even);
    CHECK(tric_kernel_constexpr(run, "BLOCK_M", &bm) == TRIC_SUCCESS && bm == want_block_m);
    if (bm > 0) {
        CHECK(tric_launch_grid(run, rowsum_grid, &m, args, 3, NULL) == TRIC_SUCCESS);
        CHECK(tric_copy_to_host(hy, by, 0, sizeof(float) * (size_t)m, NULL) == TRIC_SUCCESS);
        int bad = 0;
        for (int i = 0; i < m; i++) {
            float want = 0;
            for (int j = 0; j < kk; j++)
                want += hx[i * kk + j];
            bad += hy[i] != want;
        }
        if (bad)
            fprintf(stderr, "rowsum M=%d K=%d BLOCK_K=%d%s: %d rows wrong\n", m, kk, block_k,
                    tuned ? " (tuned)" : "", bad);
        failures += bad;
    }
    tric_buffer_free(bx);
    tric_buffer_free(by);
    free(hx);
    free(hy);
    tric_module_destroy(mod);
}

/* Heuristics that read the run-time argument n: evaluated at every launch. */
static const char *const runtime_src =
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

/* One launch with n elements and alpha; the output checked (poison past n). The count of wrong
 * elements (or 1 for a failed call), printed. */
static int run_once(tric_device dev, tric_kernel k, int n, float alpha)
{
    enum { CAP = 256 };
    float hx[CAP], hy[CAP];
    for (int i = 0; i < CAP; i++)
        hx[i] = (float)(i % 17) - 8.0f;
    tric_buffer bx, by;
    if (tric_buffer_alloc(dev, sizeof(float) * (size_t)n, &bx) != TRIC_SUCCESS)
        return 1;
    if (tric_buffer_alloc(dev, sizeof(float) * (size_t)n, &by) != TRIC_SUCCESS) {
        tric_buffer_free(bx);
        return 1;
    }
    tric_arg args[4] = {TRIC_ARG_BUF(bx), TRIC_ARG_BUF(by), TRIC_ARG_I32(n), TRIC_ARG_F32(alpha)};
    if (tric_copy_to_device(bx, 0, hx, sizeof(float) * (size_t)n, NULL) != TRIC_SUCCESS ||
        tric_memset(by, 0, 0xFF, sizeof(float) * (size_t)n, NULL) != TRIC_SUCCESS ||
        tric_launch_grid(k, nblk_grid, NULL, args, 4, NULL) != TRIC_SUCCESS ||
        tric_copy_to_host(hy, by, 0, sizeof(float) * (size_t)n, NULL) != TRIC_SUCCESS) {
        fprintf(stderr, "run-time heuristics n=%d alpha=%g: %s\n", n, alpha, tric_last_error());
        tric_buffer_free(bx);
        tric_buffer_free(by);
        return 1;
    }
    int nblk = (n + 63) / 64, scale = alpha > 0.5f ? 2 : 64 / (n - 7);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        float want = hx[i] * (float)scale + (float)nblk + (n % 64 == 0 ? 0.0f : 1000.0f);
        bad += hy[i] != want;
    }
    if (bad)
        fprintf(stderr, "run-time heuristics n=%d alpha=%g: %d elements wrong (y[0] = %g)\n", n,
                alpha, bad, hy[0]);
    tric_buffer_free(bx);
    tric_buffer_free(by);
    return bad;
}

static void launch_runtime(tric_device dev, tric_kernel k, int n, float alpha)
{
    failures += run_once(dev, k, n, alpha);
}

/* Four threads launch the kernel at once, each through the same four keys in its own order: the
 * first launch of a key compiles its variant under the lock, later ones find it without. */
typedef struct HeurRacer {
    tric_device dev;
    tric_kernel k;
    int first, bad;
} HeurRacer;

static void *heur_racer(void *arg)
{
    HeurRacer *r = arg;
    static const int ns[] = {128, 100, 39, 64};
    for (int it = 0; it < 12; it++) {
        int n = ns[(r->first + it) % 4];
        r->bad += run_once(r->dev, r->k, n, it % 2 ? 1.0f : 0.0f);
    }
    return NULL;
}

static void test_runtime_heuristics(tric_device dev)
{
    tric_compile_options opt = tric_compile_options_default();
    const char *defs[] = {"BLOCK=64"};
    opt.signature = "*fp32,*fp32,i32,fp32";
    opt.constexprs = defs;
    opt.nconstexprs = 1;
    tric_module mod;
    tric_kernel k;
    if (tric_module_compile(dev, runtime_src, "rt.tri", &opt, &mod) != TRIC_SUCCESS) {
        CHECK(!"a kernel whose heuristics read run-time arguments compiles");
        return;
    }
    CHECK(tric_module_get_kernel(mod, "k", &k) == TRIC_SUCCESS);
    launch_runtime(dev, k, 128, 1.0f); /* EVEN, NBLK 2, SCALE 2 */
    launch_runtime(dev, k, 100, 1.0f); /* odd: masked */
    launch_runtime(dev, k, 39, 0.0f);  /* SCALE 64 // 32 = 2 */
    launch_runtime(dev, k, 128, 0.0f); /* SCALE 64 // 121 = 0 */
    launch_runtime(dev, k, 100, 1.0f); /* a variant met before */
    HeurRacer racers[4];
    pthread_t threads[4];
    for (int i = 0; i < 4; i++) {
        racers[i] = (HeurRacer){dev, k, i, 0};
        CHECK(pthread_create(&threads[i], NULL, heur_racer, &racers[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        CHECK(racers[i].bad == 0);
    }
    /* n = 7 divides by zero in SCALE's lambda: the launch's error, at the lambda. */
    tric_buffer b;
    CHECK(tric_buffer_alloc(dev, 64 * sizeof(float), &b) == TRIC_SUCCESS);
    tric_arg args[4] = {TRIC_ARG_BUF(b), TRIC_ARG_BUF(b), TRIC_ARG_I32(7), TRIC_ARG_F32(0.0f)};
    CHECK_MSG(tric_launch(k, (tric_dim3){1, 1, 1}, args, 4, NULL), TRIC_ERROR_INVALID_ARGUMENT,
              "k: at this launch, rt.tri:6:76: error: heuristics: division by zero\n"
              "                    \"SCALE\": lambda args: 2 if args[\"alpha\"] > 0.5 else 64 // "
              "(args[\"n\"] - 7)})\n"
              "                                                                           ^\n");
    tric_buffer_free(b);
    tric_module_destroy(mod);
    /* A value given for the heuristic's parameter: compiled as usual, no launch-time evaluation. */
    const char *given[] = {"BLOCK=64", "EVEN=False", "NBLK=1", "SCALE=2"};
    opt.constexprs = given;
    opt.nconstexprs = 4;
    CHECK(tric_module_compile(dev, runtime_src, "rt.tri", &opt, &mod) == TRIC_SUCCESS);
    tric_module_destroy(mod);
}

/* A constexpr spelled C (`from triton.language import constexpr as C`) before a run-time
 * parameter: the driver asks sema which parameters are constexprs, so n is the launch's third
 * argument (read as a run-time value by NBLK's lambda) and BLOCK, read by both lambdas, comes from
 * the options' constexprs. */
static const char *const alias_src =
    "import triton\n"
    "import triton.language as tl\n"
    "from triton.language import constexpr as C\n"
    "\n"
    "@triton.heuristics({\"NBLK\": lambda args: triton.cdiv(args[\"n\"], args[\"BLOCK\"]),\n"
    "                    \"HALF\": lambda args: args[\"BLOCK\"] // 2})\n"
    "@triton.jit\n"
    "def alias_k(x_ptr, y_ptr, BLOCK: C, n, NBLK: C, HALF: C):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
    "    tl.store(y_ptr + offs, x * HALF + NBLK, mask=offs < n)\n";

static void launch_alias(tric_device dev, tric_kernel k, int n)
{
    enum { CAP = 256 };
    float hx[CAP], hy[CAP];
    for (int i = 0; i < n; i++)
        hx[i] = (float)(i % 11) - 5.0f;
    tric_buffer bx, by;
    CHECK(tric_buffer_alloc(dev, sizeof(float) * (size_t)n, &bx) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, sizeof(float) * (size_t)n, &by) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(bx, 0, hx, sizeof(float) * (size_t)n, NULL) == TRIC_SUCCESS);
    CHECK(tric_memset(by, 0, 0xFF, sizeof(float) * (size_t)n, NULL) == TRIC_SUCCESS);
    tric_arg args[3] = {TRIC_ARG_BUF(bx), TRIC_ARG_BUF(by), TRIC_ARG_I32(n)};
    if (tric_launch_grid(k, nblk_grid, NULL, args, 3, NULL) != TRIC_SUCCESS) {
        fprintf(stderr, "constexpr as C, n=%d: %s\n", n, tric_last_error());
        failures++;
    } else {
        CHECK(tric_copy_to_host(hy, by, 0, sizeof(float) * (size_t)n, NULL) == TRIC_SUCCESS);
        int nblk = (n + 63) / 64, bad = 0;
        for (int i = 0; i < n; i++)
            bad += hy[i] != hx[i] * 32.0f + (float)nblk;
        if (bad)
            fprintf(stderr, "constexpr as C, n=%d: %d elements wrong (y[0] = %g)\n", n, bad, hy[0]);
        failures += bad;
    }
    tric_buffer_free(bx);
    tric_buffer_free(by);
}

static void test_constexpr_alias(tric_device dev)
{
    tric_compile_options opt = tric_compile_options_default();
    const char *defs[] = {"BLOCK=64"};
    opt.signature = "*fp32,*fp32,i32";
    opt.constexprs = defs;
    opt.nconstexprs = 1;
    tric_module mod;
    tric_kernel k;
    if (tric_module_compile(dev, alias_src, "alias.tri", &opt, &mod) != TRIC_SUCCESS) {
        fprintf(stderr, "constexpr as C: %s\n", tric_last_error());
        CHECK(!"a kernel with constexprs annotated C compiles");
        return;
    }
    CHECK(tric_module_get_kernel(mod, "alias_k", &k) == TRIC_SUCCESS);
    launch_alias(dev, k, 100); /* NBLK 2 */
    launch_alias(dev, k, 200); /* NBLK 4 */
    launch_alias(dev, k, 64);  /* NBLK 1 */
    tric_module_destroy(mod);
}

int main(void)
{
    tric_device cpu;
    CHECK(tric_device_open("cpu", &cpu) == TRIC_SUCCESS);
    run_rowsum(cpu, false, 20, 64, 16, 1, 16, NULL); /* EVEN_K: unmasked K loads */
    run_rowsum(cpu, false, 20, 70, 16, 0, 16, NULL); /* not even: masked */
    run_rowsum(cpu, false, 5, 48, 32, 0, 8, NULL);
    /* A value given for EVEN_K wins over the lambda. */
    run_rowsum(cpu, false, 4, 64, 16, 0, 4, "EVEN_K=False");
    /* Under autotune: each config's BLOCK_K is what the heuristic reads. */
    run_rowsum(cpu, true, 20, 64, 0, 1, 16, NULL);
    run_rowsum(cpu, true, 12, 48, 0, -2, 16, NULL);

    test_runtime_heuristics(cpu);
    test_constexpr_alias(cpu);
    tric_device_close(cpu);
    if (failures) {
        printf("FAIL: %d\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
