/* runtime_imports: a kernel that imports helpers and constants from other files, compiled through
 * the public runtime API (tric_compile_options.include_dirs for the absolute import) and run on
 * the cpu device against a C reference; without the include directory the compile fails with the
 * files it tried; an include_dirs count without a list is rejected. */
#include <math.h>

#include "tests/runtime_check.h"

#define INPUTS TRIC_SOURCE_DIR "/tests/lit/imports/Inputs"

/* pkg/ops/kern.py: out = twice(scale(x)) + twice(x) * OFFSET + SCALE, where scale(x) = x * SCALE
 * + floor(x) * 0, twice(x) = x + x, SCALE = 3, OFFSET = 10. */
static float reference(float x)
{
    return 2.0f * (x * 3.0f + floorf(x) * 0.0f) + 2.0f * x * 10.0f + 3.0f;
}

static void test_imported_kernel_runs(tric_device dev)
{
    const char *dirs[] = {INPUTS "/lib"};
    const char *defs[] = {"BLOCK=128"};
    tric_compile_options opt = tric_compile_options_default();
    opt.signature = "*fp32:16,*fp32:16,i32";
    opt.constexprs = defs;
    opt.nconstexprs = 1;
    opt.include_dirs = dirs;
    opt.ninclude_dirs = 1;
    opt.no_cache = 1;
    tric_module mod;
    if (tric_module_compile_file(dev, INPUTS "/pkg/ops/kern.py", &opt, &mod) != TRIC_SUCCESS) {
        CHECK(!"compile");
        return;
    }
    tric_kernel k;
    CHECK(tric_module_get_kernel(mod, "k", &k) == TRIC_SUCCESS);
    enum { N = 300 };
    float x[N], out[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)(i % 37) * 0.25f - 4.0f;
    tric_buffer bx, bo;
    CHECK(tric_buffer_alloc(dev, sizeof x, &bx) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, sizeof out, &bo) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(bx, 0, x, sizeof x, NULL) == TRIC_SUCCESS);
    tric_arg args[] = {TRIC_ARG_BUF(bx), TRIC_ARG_BUF(bo), TRIC_ARG_I32(N)};
    CHECK(tric_launch(k, (tric_dim3){(N + 127) / 128, 1, 1}, args, 3, NULL) == TRIC_SUCCESS);
    CHECK(tric_copy_to_host(out, bo, 0, sizeof out, NULL) == TRIC_SUCCESS);
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += fabsf(out[i] - reference(x[i])) > 1e-4f * (1.0f + fabsf(reference(x[i])));
    CHECK(wrong == 0);
    tric_buffer_free(bx);
    tric_buffer_free(bo);
    tric_module_destroy(mod);
}

static void test_missing_include_dir(tric_device dev)
{
    const char *defs[] = {"BLOCK=128"};
    tric_compile_options opt = tric_compile_options_default();
    opt.signature = "*fp32:16,*fp32:16,i32";
    opt.constexprs = defs;
    opt.nconstexprs = 1;
    opt.no_cache = 1;
    tric_module mod;
    CHECK(tric_module_compile_file(dev, INPUTS "/pkg/ops/kern.py", &opt, &mod) ==
          TRIC_ERROR_COMPILE);
    CHECK(strstr(tric_last_error(), "'H' is imported from module 'mylib.helpers'") != NULL);
    CHECK(strstr(tric_last_error(), "/pkg/ops/mylib/helpers.py") != NULL);
    opt.ninclude_dirs = 1; /* and no list */
    CHECK_MSG(tric_module_compile_file(dev, INPUTS "/pkg/ops/kern.py", &opt, &mod),
              TRIC_ERROR_INVALID_ARGUMENT, "compile options: bad include_dirs list");
}

int main(void)
{
    tric_device dev;
    if (tric_device_open("cpu", &dev) != TRIC_SUCCESS) {
        fprintf(stderr, "cannot open cpu: %s\n", tric_last_error());
        return 1;
    }
    test_imported_kernel_runs(dev);
    test_missing_include_dir(dev);
    tric_device_close(dev);
    if (failures == 0)
        puts("runtime_imports: all passed");
    return failures != 0;
}
