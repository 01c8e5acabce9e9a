/* gpu_autotune (label gpu): autotuning on cuda:0. Seed 2's kernel_matmul from examples/matmul.tri
 * under its own decorator (16 configs, no block sizes given, no signature): every config's kernel
 * on its own and the tuned launch (grid from the chosen config) against C at 512 x 256 x 384 with
 * the output poisoned, every element checked; the same through a PTX holding a kernel per config
 * (compiled as `tric` would, loaded with tric_module_load_ptx); restore_value keeping a buffer the
 * kernel overwrites as it was across the tuning. Skips (exit 77) when cuda:0 cannot be opened. */
#include "driver/driver.h"
#include "examples/example_kernels.h"
#include "tests/runtime_check.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

enum { M = 512, N = 256, K = 384 };

static tric_dim3 va_grid(tric_kernel config, const tric_arg *args, int nargs, void *user)
{
    (void)nargs;
    (void)user;
    int64_t block = 1;
    tric_kernel_constexpr(config, "BLOCK_SIZE", &block);
    return (tric_dim3){(unsigned)((args[3].v.i32 + block - 1) / block), 1, 1};
}

typedef struct Problem {
    uint16_t *a, *b, *c;
    float *want;
    tric_buffer da, db, dc;
    tric_arg args[12];
} Problem;

static void problem_init(tric_device dev, Problem *p)
{
    p->a = malloc(2 * M * K);
    p->b = malloc(2 * K * N);
    p->c = malloc(2 * M * N);
    p->want = malloc(sizeof(float) * M * N);
    uint32_t s = 12345;
    for (int i = 0; i < M * K; i++)
        p->a[i] =
            tric_f32_to_f16((float)((s = s * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f);
    for (int i = 0; i < K * N; i++)
        p->b[i] =
            tric_f32_to_f16((float)((s = s * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0;
            for (int k = 0; k < K; k++)
                acc += tric_f16_to_f32(p->a[i * K + k]) * tric_f16_to_f32(p->b[k * N + j]);
            p->want[i * N + j] = acc;
        }
    CHECK(tric_buffer_alloc(dev, 2 * M * K, &p->da) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, 2 * K * N, &p->db) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, 2 * M * N, &p->dc) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(p->da, 0, p->a, 2 * M * K, NULL) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(p->db, 0, p->b, 2 * K * N, NULL) == TRIC_SUCCESS);
    tric_arg args[12] = {TRIC_ARG_BUF(p->da), TRIC_ARG_BUF(p->db), TRIC_ARG_BUF(p->dc),
                         TRIC_ARG_I32(M),     TRIC_ARG_I32(N),     TRIC_ARG_I32(K),
                         TRIC_ARG_I32(K),     TRIC_ARG_I32(1),     TRIC_ARG_I32(N),
                         TRIC_ARG_I32(1),     TRIC_ARG_I32(N),     TRIC_ARG_I32(1)};
    memcpy(p->args, args, sizeof args);
}

/* Poisons C, runs launch, checks every element; the number of wrong ones. */
static int check_run(Problem *p, const char *what, tric_status (*launch)(void *), void *ctx)
{
    CHECK(tric_memset(p->dc, 0, 0xff, 2 * M * N, NULL) == TRIC_SUCCESS);
    tric_status st = launch(ctx);
    CHECK(st == TRIC_SUCCESS);
    CHECK(tric_copy_to_host(p->c, p->dc, 0, 2 * M * N, NULL) == TRIC_SUCCESS);
    int bad = 0;
    for (int i = 0; i < M * N; i++) {
        float got = tric_f16_to_f32(p->c[i]), want = p->want[i];
        bad += !(fabsf(got - want) <= 0.02f + 0.01f * fabsf(want));
    }
    if (bad)
        printf("FAIL %s: %d of %d elements wrong\n", what, bad, M * N);
    else
        printf("ok   %s\n", what);
    failures += bad != 0;
    return bad;
}

typedef struct Launch {
    Problem *p;
    tric_kernel k;
    bool tuned;
} Launch;

static tric_status run_launch(void *ctx)
{
    Launch *l = ctx;
    if (l->tuned)
        return tric_launch_grid(l->k, ex_seed2_grid, NULL, l->p->args, 12, NULL);
    return tric_launch(l->k, ex_seed2_grid(l->k, l->p->args, 12, NULL), l->p->args, 12, NULL);
}

/* The tuned kernel k: each config alone, then the tuned launch. */
static void check_tuned(Problem *p, tric_kernel k, const char *how)
{
    CHECK(tric_kernel_num_configs(k) == 16);
    for (int i = 0; i < tric_kernel_num_configs(k); i++) {
        tric_kernel c;
        if (tric_kernel_config(k, i, &c) != TRIC_SUCCESS) {
            CHECK(!"every config compiles");
            continue;
        }
        char what[256];
        snprintf(what, sizeof what, "%s config %d (%s)", how, i, tric_kernel_config_text(c));
        Launch l = {p, c, false};
        check_run(p, what, run_launch, &l);
    }
    char what[256];
    snprintf(what, sizeof what, "%s tuned launch", how);
    Launch l = {p, k, true};
    check_run(p, what, run_launch, &l);
    int chosen = -1;
    CHECK(tric_kernel_tune(k, ex_seed2_grid, NULL, p->args, 12, NULL, &chosen) == TRIC_SUCCESS &&
          chosen >= 0 && chosen < 16);
}

int main(void)
{
    tric_device dev;
    if (tric_device_open("cuda:0", &dev) != TRIC_SUCCESS) {
        printf("SKIP: %s\n", tric_last_error());
        return 77;
    }
    char tmp[] = "/tmp/tric-gpu-tune-XXXXXX";
    if (mkdtemp(tmp))
        setenv("TRIC_CACHE_DIR", tmp, 1);
    const char *mm = TRIC_SOURCE_DIR "/examples/matmul.tri";
    char path[4096];
    if (access(mm, R_OK) != 0) /* carried to another machine: run from the repo root */
        mm = ex_tri_path("matmul.tri", path, sizeof path);
    Problem p;
    problem_init(dev, &p);

    /* Compiled in process from the decorator. */
    tric_module mod;
    tric_kernel k;
    if (ex_compile_seed2_tuned(dev, mm, 8, &mod, &k) == TRIC_SUCCESS) {
        check_tuned(&p, k, "compiled:");
        tric_module_destroy(mod);
    } else {
        CHECK(!"seed 2 compiles autotuned");
    }

    /* A PTX with a kernel per config, as `tric examples/matmul.tri --kernel=kernel_matmul ...`
     * writes it for this GPU. */
    char *text = NULL;
    size_t len = 0;
    FILE *f = fopen(mm, "rb");
    if (f) {
        fseek(f, 0, SEEK_END);
        len = (size_t)ftell(f);
        fseek(f, 0, SEEK_SET);
        text = malloc(len + 1);
        len = fread(text, 1, len, f);
        text[len] = 0;
        fclose(f);
    }
    SrcFile file = {"matmul.tri", text ? text : "", len};
    Define ddefs[] = {{"GROUP_SIZE_M", "8"}, {"T_C", "tl.float16"}, {"T_ACC", "tl.float32"}};
    CompileOptions copt = {
        .emit = EMIT_PTX,
        .arch = tric_device_arch(dev),
        .opt_level = 3,
        .spec = {.kernel_name = "kernel_matmul",
                 .signature = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,"
                              "i32:16,i32:1,i32:16,i32:1",
                 .defines = ddefs,
                 .ndefines = 3}};
    CompileResult res;
    Diag d = {0};
    bool ok = driver_compile(&file, &copt, &res, &d);
    CHECK(ok);
    if (ok && tric_module_load_ptx(dev, res.output.data, &mod) == TRIC_SUCCESS &&
        tric_module_get_kernel(mod, "kernel_matmul", &k) == TRIC_SUCCESS) {
        check_tuned(&p, k, "PTX:");
        tric_module_destroy(mod);
    } else {
        CHECK(!"the PTX with a kernel per config loads");
    }
    if (ok)
        compile_result_free(&res);
    diag_free(&d);
    free(text);

    /* restore_value: tuning a kernel that overwrites its output leaves the output as it was. */
    static const char *c1024[] = {"BLOCK_SIZE=1024"}, *restore[] = {"output_ptr"};
    tric_tune_config configs[] = {{c1024, 1, 4, 0}, {c1024, 1, 8, 0}};
    tric_compile_options vopt = ex_vector_add_tuned_options(configs, 2);
    vopt.tune_restore = restore;
    vopt.ntune_restore = 1;
    const char *va = TRIC_SOURCE_DIR "/examples/vector_add.tri";
    char vpath[4096];
    if (access(va, R_OK) != 0)
        va = ex_tri_path("vector_add.tri", vpath, sizeof vpath);
    enum { V = 5000 };
    static float hx[V], ho[V];
    for (int i = 0; i < V; i++)
        hx[i] = (float)i, ho[i] = -1.0f;
    tric_buffer x, o;
    CHECK(tric_buffer_alloc(dev, sizeof hx, &x) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, sizeof ho, &o) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(x, 0, hx, sizeof hx, NULL) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(o, 0, ho, sizeof ho, NULL) == TRIC_SUCCESS);
    tric_arg vargs[] = {TRIC_ARG_BUF(x), TRIC_ARG_BUF(x), TRIC_ARG_BUF(o), TRIC_ARG_I32(V)};
    int chosen = -1;
    if (tric_module_compile_file(dev, va, &vopt, &mod) == TRIC_SUCCESS &&
        tric_module_get_kernel(mod, NULL, &k) == TRIC_SUCCESS) {
        /* Tuning alone: the trials wrote o, the tuner put it back. */
        CHECK(tric_kernel_tune(k, va_grid, NULL, vargs, 4, NULL, &chosen) == TRIC_SUCCESS);
        CHECK(tric_copy_to_host(ho, o, 0, sizeof ho, NULL) == TRIC_SUCCESS);
        int bad = 0;
        for (int i = 0; i < V; i++)
            bad += ho[i] != -1.0f;
        CHECK(bad == 0);
        CHECK(tric_launch_grid(k, va_grid, NULL, vargs, 4, NULL) == TRIC_SUCCESS);
        CHECK(tric_copy_to_host(ho, o, 0, sizeof ho, NULL) == TRIC_SUCCESS);
        bad = 0;
        for (int i = 0; i < V; i++)
            bad += ho[i] != 2.0f * (float)i;
        CHECK(bad == 0);
        tric_module_destroy(mod);
    } else {
        CHECK(!"vector_add compiles with configs from C");
    }
    tric_buffer_free(x);
    tric_buffer_free(o);
    tric_buffer_free(p.da);
    tric_buffer_free(p.db);
    tric_buffer_free(p.dc);
    free(p.a);
    free(p.b);
    free(p.c);
    free(p.want);
    tric_device_close(dev);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "note: could not remove %s\n", tmp);
    if (failures) {
        printf("FAIL: %d check(s)\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
