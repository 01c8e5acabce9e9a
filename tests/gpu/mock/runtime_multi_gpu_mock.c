/* runtime_multi_gpu_mock: several GPUs in one process, against the stand-in libcuda.so.1 with two
 * devices (mock_state.devices, set before the first device opens). Checks (docs/runtime.md
 * "Several GPUs"): a module compiled on cuda:0 launches on cuda:1 (its code loaded there once, at
 * the first launch, in cuda:1's context: the mock refuses a function of another context), the
 * launch device taken from the stream or the buffers, the errors for a launch mixing devices,
 * the other context retained while the module keeps code there (closing cuda:1 first is safe);
 * four threads launching on two devices at once into a fresh module (one load per device); and an
 * autotuning choice made on cuda:0 reused on cuda:1 of the same model, in memory and from the disk
 * cache, and made again on a cuda:1 of another model (another SM count); a loaded PTX's members
 * (one CUmodule) loaded once on cuda:1 for all of them. Skips (77) when the
 * library found is not the mock. */
#include "tests/runtime_check.h"
#include "runtime/runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "mock_state.h"

static const char *va = TRIC_SOURCE_DIR "/examples/vector_add.tri";

enum { N = 3000 };

/* x = i, y = fill, out = -1 on dev; the arguments of vector_add_kernel for them. */
typedef struct Operands {
    tric_buffer x, y, out;
    tric_arg args[4];
} Operands;

static void operands(tric_device dev, float fill, Operands *o)
{
    static float hx[N], hy[N], ho[N];
    for (int i = 0; i < N; i++)
        hx[i] = (float)i, hy[i] = fill, ho[i] = -1.0f;
    CHECK(tric_buffer_alloc(dev, sizeof hx, &o->x) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, sizeof hy, &o->y) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, sizeof ho, &o->out) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(o->x, 0, hx, sizeof hx, NULL) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(o->y, 0, hy, sizeof hy, NULL) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(o->out, 0, ho, sizeof ho, NULL) == TRIC_SUCCESS);
    o->args[0] = TRIC_ARG_BUF(o->x);
    o->args[1] = TRIC_ARG_BUF(o->y);
    o->args[2] = TRIC_ARG_BUF(o->out);
    o->args[3] = TRIC_ARG_I32(N);
}

/* Whether every element of o's output is i + fill. */
static bool sums_right(const Operands *o, float fill)
{
    static float ho[N];
    if (tric_copy_to_host(ho, o->out, 0, sizeof ho, NULL) != TRIC_SUCCESS)
        return false;
    for (int i = 0; i < N; i++)
        if (ho[i] != (float)i + fill)
            return false;
    return true;
}

static void operands_free(Operands *o)
{
    tric_buffer_free(o->x);
    tric_buffer_free(o->y);
    tric_buffer_free(o->out);
}

/* vector_add's options: its signature, BLOCK_SIZE 1024 (a tuned kernel's configs give it). */
static tric_compile_options va_options(void)
{
    static const char *block[] = {"BLOCK_SIZE=1024"};
    tric_compile_options opt = tric_compile_options_default();
    opt.signature = "*fp32,*fp32,*fp32,i32";
    opt.constexprs = block;
    opt.nconstexprs = 1;
    return opt;
}

static tric_module compile_va(tric_device dev, const tric_compile_options *opt, tric_kernel *k)
{
    tric_module mod = NULL;
    CHECK(tric_module_compile_file(dev, va, opt, &mod) == TRIC_SUCCESS &&
          tric_module_get_kernel(mod, "vector_add_kernel", k) == TRIC_SUCCESS);
    return mod;
}

static const tric_dim3 grid = {(N + 1023) / 1024, 1, 1};

/* (a) One module, two devices: the launch runs where its buffers (or its stream) are. */
static void test_one_module_two_devices(tric_device d0, tric_device d1, MockState *ms)
{
    tric_compile_options opt = va_options();
    opt.no_specialize = 1; /* one code object, so the loads can be counted */
    tric_kernel k;
    tric_module mod = compile_va(d0, &opt, &k);
    Operands a, b;
    operands(d0, 1.0f, &a);
    operands(d1, 2.0f, &b);
    int on0 = ms->launches_on[0], on1 = ms->launches_on[1], loads1 = ms->module_loads_on[1];
    int retains1 = ms->live_retains[1];
    CHECK(tric_launch(k, grid, a.args, 4, NULL) == TRIC_SUCCESS);
    CHECK(ms->launches_on[0] - on0 == 1 && ms->launches_on[1] == on1);
    CHECK(ms->module_loads_on[1] == loads1); /* nothing loaded on cuda:1 yet */
    CHECK(tric_launch(k, grid, b.args, 4, NULL) == TRIC_SUCCESS);
    CHECK(ms->launches_on[1] - on1 == 1);
    CHECK(ms->module_loads_on[1] - loads1 == 1);
    CHECK(ms->live_retains[1] - retains1 == 1); /* the module holds cuda:1's context */
    CHECK(tric_launch(k, grid, b.args, 4, NULL) == TRIC_SUCCESS);
    CHECK(ms->module_loads_on[1] - loads1 == 1); /* loaded once */
    /* A stream of cuda:1 runs there too. */
    tric_stream s1;
    CHECK(tric_stream_create(d1, &s1) == TRIC_SUCCESS);
    CHECK(tric_launch(k, grid, b.args, 4, s1) == TRIC_SUCCESS);
    CHECK(tric_stream_synchronize(s1) == TRIC_SUCCESS);
    CHECK(ms->launches_on[1] - on1 == 3 && ms->launches_on[0] - on0 == 1);
    CHECK(sums_right(&a, 1.0f) && sums_right(&b, 2.0f));
    CHECK(ms->wrong_context_launches == 0);
    /* A launch runs on one device. */
    tric_arg mixed[4] = {a.args[0], b.args[1], a.args[2], a.args[3]};
    CHECK_MSG(tric_launch(k, grid, mixed, 4, NULL), TRIC_ERROR_INVALID_ARGUMENT,
              "argument 2 (y_ptr) of vector_add_kernel: the buffer belongs to cuda:1 (tric mock "
              "GPU, sm_90), the launch's first buffer to cuda:0 (tric mock GPU, sm_90) (a launch "
              "runs on one device)");
    CHECK_MSG(tric_launch(k, grid, a.args, 4, s1), TRIC_ERROR_INVALID_ARGUMENT,
              "vector_add_kernel: the stream belongs to cuda:1 (tric mock GPU, sm_90), the "
              "buffers to cuda:0 (tric mock GPU, sm_90) (a launch runs on one device)");
    tric_stream_destroy(s1);
    /* A cpu buffer to a cuda kernel: the one-device message, as before. */
    tric_device cpu;
    tric_buffer hb;
    CHECK(tric_device_open("cpu", &cpu) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(cpu, 4 * N, &hb) == TRIC_SUCCESS);
    tric_arg on_cpu[4] = {TRIC_ARG_BUF(hb), a.args[1], a.args[2], a.args[3]};
    CHECK_MSG(tric_launch(k, grid, on_cpu, 4, NULL), TRIC_ERROR_INVALID_ARGUMENT,
              "argument 1 (x_ptr) of vector_add_kernel: the buffer belongs to cpu (tric "
              "interpreter), the kernel to cuda:0 (tric mock GPU, sm_90)");
    tric_device_close(cpu);
    operands_free(&a);
    operands_free(&b);
    tric_module_destroy(mod);
    CHECK(ms->live_retains[1] == retains1); /* released with the module's code there */
}

/* The module outlives cuda:1's tric_device: its code there stays valid (the context retained),
 * and is unloaded, the context released, when the module goes. */
static void test_close_other_device_first(tric_device d0, MockState *ms)
{
    int retains1 = ms->live_retains[1];
    tric_device d1;
    CHECK(tric_device_open("cuda:1", &d1) == TRIC_SUCCESS);
    tric_kernel k;
    tric_compile_options opt = va_options();
    tric_module mod = compile_va(d0, &opt, &k);
    Operands b;
    operands(d1, 3.0f, &b);
    CHECK(tric_launch(k, grid, b.args, 4, NULL) == TRIC_SUCCESS);
    CHECK(sums_right(&b, 3.0f));
    int live = ms->live_modules;
    /* Frees b's buffers. */
    tric_device_close(d1);
    CHECK(ms->live_retains[1] > retains1); /* the module's */
    tric_module_destroy(mod);
    CHECK(ms->live_retains[1] == retains1);
    CHECK(ms->live_modules < live);
}

/* (b) Threads launching at once: two on each device, into a module none has launched yet. */
typedef struct Worker {
    tric_kernel k;
    Operands o;
    float fill;
    tric_status st;
} Worker;

static void *worker(void *arg)
{
    Worker *w = arg;
    w->st = TRIC_SUCCESS;
    for (int i = 0; i < 200 && w->st == TRIC_SUCCESS; i++)
        w->st = tric_launch(w->k, grid, w->o.args, 4, NULL);
    return NULL;
}

static void test_threads(tric_device d0, tric_device d1, MockState *ms)
{
    tric_compile_options opt = va_options();
    opt.no_specialize = 1;
    tric_kernel k;
    tric_module mod = compile_va(d0, &opt, &k);
    enum { WORKERS = 4 };
    Worker w[WORKERS];
    pthread_t t[WORKERS];
    int loads1 = ms->module_loads_on[1], on0 = ms->launches_on[0], on1 = ms->launches_on[1];
    for (int i = 0; i < WORKERS; i++) {
        w[i].k = k;
        w[i].fill = (float)(10 + i);
        operands(i % 2 ? d1 : d0, w[i].fill, &w[i].o);
    }
    for (int i = 0; i < WORKERS; i++)
        CHECK(pthread_create(&t[i], NULL, worker, &w[i]) == 0);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < WORKERS; i++) {
        CHECK(w[i].st == TRIC_SUCCESS);
        CHECK(sums_right(&w[i].o, w[i].fill));
        operands_free(&w[i].o);
    }
    CHECK(ms->module_loads_on[1] - loads1 == 1); /* the two cuda:1 threads loaded it once */
    CHECK(ms->launches_on[0] - on0 == 400 && ms->launches_on[1] - on1 == 400);
    CHECK(ms->wrong_context_launches == 0);
    tric_module_destroy(mod);
}

/* (c) Autotuning shared between devices of one model (the mock times a launch as threads / 128
 * ms, so the 2-warp config wins). */
static tric_dim3 va_grid(tric_kernel config, const tric_arg *args, int nargs, void *user)
{
    (void)nargs, (void)user;
    int64_t block = 1024;
    tric_kernel_constexpr(config, "BLOCK_SIZE", &block);
    return (tric_dim3){(unsigned)((args[3].v.i32 + block - 1) / block), 1, 1};
}

static void test_autotune(tric_device d0, tric_device *d1, MockState *ms)
{
    char tmp[] = "/tmp/tric-mock-multi-XXXXXX";
    if (!mkdtemp(tmp)) {
        CHECK(!"mkdtemp");
        return;
    }
    setenv("TRIC_CACHE_DIR", tmp, 1);
    unsetenv("TRIC_NO_CACHE");
    static const char *c1024[] = {"BLOCK_SIZE=1024"};
    tric_tune_config configs[] = {{c1024, 1, 4, 0}, {c1024, 1, 2, 0}, {c1024, 1, 8, 0}};
    static const char *key[] = {"n_elements"};
    tric_compile_options opt = va_options();
    opt.nconstexprs = 0;
    opt.tune_configs = configs;
    opt.ntune_configs = 3;
    opt.tune_key = key;
    opt.ntune_key = 1;
    tric_kernel k, k1;
    tric_module mod = compile_va(d0, &opt, &k);
    Operands a, b;
    operands(d0, 1.0f, &a);
    operands(*d1, 2.0f, &b);
    int on0 = ms->launches_on[0], on1 = ms->launches_on[1];
    CHECK(tric_launch_grid(k, va_grid, NULL, a.args, 4, NULL) == TRIC_SUCCESS);
    CHECK(ms->launches_on[0] - on0 >= 3 * 3); /* tuned on cuda:0 */
    /* cuda:1, the same model: the choice made on cuda:0, no timing. */
    CHECK(tric_launch_grid(k, va_grid, NULL, b.args, 4, NULL) == TRIC_SUCCESS);
    CHECK(ms->launches_on[1] - on1 == 1 && ms->block[0] == 64);
    CHECK(sums_right(&a, 1.0f) && sums_right(&b, 2.0f));
    /* A module compiled on cuda:1 (as a second process would): the choice from the disk cache. */
    tric_module mod1 = compile_va(*d1, &opt, &k1);
    on1 = ms->launches_on[1];
    CHECK(tric_launch_grid(k1, va_grid, NULL, b.args, 4, NULL) == TRIC_SUCCESS);
    CHECK(ms->launches_on[1] - on1 == 1 && ms->block[0] == 64);
    tric_module_destroy(mod1);
    operands_free(&b);
    /* cuda:1 as another model (fewer SMs): tuned again, there; then its own choice is kept. */
    tric_device_close(*d1);
    ms->device_sms[1] = 114;
    CHECK(tric_device_open("cuda:1", d1) == TRIC_SUCCESS);
    CHECK(strcmp((*d1)->model, "tric mock GPU, sm_90, 114 SMs") == 0 &&
          strcmp(d0->model, "tric mock GPU, sm_90, 132 SMs") == 0);
    operands(*d1, 4.0f, &b);
    on0 = ms->launches_on[0], on1 = ms->launches_on[1];
    CHECK(tric_launch_grid(k, va_grid, NULL, b.args, 4, NULL) == TRIC_SUCCESS);
    CHECK(ms->launches_on[1] - on1 >= 3 * 3 && ms->launches_on[0] == on0);
    on1 = ms->launches_on[1];
    CHECK(tric_launch_grid(k, va_grid, NULL, b.args, 4, NULL) == TRIC_SUCCESS);
    CHECK(ms->launches_on[1] - on1 == 1);
    CHECK(sums_right(&b, 4.0f));
    /* cuda:0 still finds its own. */
    CHECK(tric_launch_grid(k, va_grid, NULL, a.args, 4, NULL) == TRIC_SUCCESS);
    CHECK(ms->launches_on[0] - on0 == 1);
    CHECK(ms->wrong_context_launches == 0);
    operands_free(&a);
    operands_free(&b);
    tric_module_destroy(mod);
    ms->device_sms[1] = 0;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "note: could not remove %s\n", tmp);
}

/* A PTX from the compiler with a kernel per config (members sharing one CUmodule): on cuda:1 the
 * whole PTX is loaded once, for every member launched there. */
static void test_loaded_ptx_members(tric_device d0, tric_device d1, MockState *ms)
{
    static const char src[] =
        "import triton\nimport triton.language as tl\n"
        "@triton.autotune(configs=[triton.Config({'BLOCK_SIZE': 1024}, num_warps=8),\n"
        "                          triton.Config({'BLOCK_SIZE': 1024}, num_warps=2)],\n"
        "                 key=['n_elements'])\n"
        "@triton.jit\n"
        "def vector_add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):\n"
        "    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)\n"
        "    mask = offsets < n_elements\n"
        "    x = tl.load(x_ptr + offsets, mask=mask)\n"
        "    tl.store(output_ptr + offsets, x + tl.load(y_ptr + offsets, mask=mask), mask=mask)\n";
    SrcFile file = {"tuned.tri", src, sizeof src - 1};
    CompileOptions copt = {.emit = EMIT_PTX,
                           .arch = "sm_90a",
                           .opt_level = 3,
                           .spec = {.signature = "*fp32:16,*fp32:16,*fp32:16,i32"}};
    CompileResult res;
    Diag d = {0};
    bool ok = driver_compile(&file, &copt, &res, &d);
    diag_free(&d);
    CHECK(ok);
    tric_module pm = NULL;
    tric_kernel tk, c0, c1;
    CHECK(ok && tric_module_load_ptx(d0, res.output.data, &pm) == TRIC_SUCCESS);
    if (ok)
        compile_result_free(&res);
    if (!pm)
        return;
    CHECK(tric_module_get_kernel(pm, NULL, &tk) == TRIC_SUCCESS);
    CHECK(tric_module_get_kernel(pm, "vector_add_kernel_c0", &c0) == TRIC_SUCCESS);
    CHECK(tric_module_get_kernel(pm, "vector_add_kernel_c1", &c1) == TRIC_SUCCESS);
    Operands b;
    operands(d1, 5.0f, &b);
    int loads1 = ms->module_loads_on[1], on1 = ms->launches_on[1];
    CHECK(tric_launch(c0, grid, b.args, 4, NULL) == TRIC_SUCCESS);
    CHECK(tric_launch(c1, grid, b.args, 4, NULL) == TRIC_SUCCESS);
    CHECK(tric_launch_grid(tk, va_grid, NULL, b.args, 4, NULL) == TRIC_SUCCESS);
    CHECK(ms->module_loads_on[1] - loads1 == 1 && ms->launches_on[1] - on1 >= 3);
    CHECK(sums_right(&b, 5.0f));
    CHECK(ms->wrong_context_launches == 0);
    operands_free(&b);
    tric_module_destroy(pm);
}

int main(void)
{
    /* The mock, loaded before tric loads it (the same library): two devices. */
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    MockState *ms = lib ? dlsym(lib, "mock_state") : NULL;
    if (!ms) {
        printf("SKIP: the libcuda.so.1 found is not the mock\n");
        return 77;
    }
    ms->devices = 2;
    tric_device d0, d1;
    CHECK(tric_device_open("cuda:0", &d0) == TRIC_SUCCESS);
    CHECK(tric_device_open("cuda:1", &d1) == TRIC_SUCCESS);
    if (failures)
        return 1;
    CHECK(strcmp(tric_device_name(d1), "cuda:1 (tric mock GPU, sm_90)") == 0);
    tric_device d2;
    CHECK_MSG(tric_device_open("cuda:2", &d2), TRIC_ERROR_NO_DEVICE,
              "cuda:2: no such device (this machine has 2)");
    test_one_module_two_devices(d0, d1, ms);
    test_close_other_device_first(d0, ms);
    test_threads(d0, d1, ms);
    test_loaded_ptx_members(d0, d1, ms);
    test_autotune(d0, &d1, ms);
    tric_device_close(d1);
    tric_device_close(d0);
    CHECK(ms->live_modules == 0 && ms->live_allocs == 0);
    CHECK(ms->live_retains[0] == 0 && ms->live_retains[1] == 0);
    if (failures) {
        printf("FAIL: %d check(s)\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
