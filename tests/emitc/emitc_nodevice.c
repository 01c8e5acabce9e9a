/* emitc_nodevice: the launchers `tric --emit=c` wrote at build time for examples/vector_add.tri
 * (vector_add.c/.h) and seed 2's kernel_matmul (matmul_seed2.c/.h), compiled as strict C11 with
 * this program, on any machine: the arguments are checked by name before anything is loaded, the
 * embedded PTX starts with its metadata block, a cpu device cannot load it, and -- without a GPU
 * -- loading returns TRIC_ERROR_NO_DEVICE, as does a launch of no_pointers.c's kernel (no buffer
 * to load beside, so it loads on cuda:0); the _launch_ex launchers check the same and refuse a
 * grid function in their options; with a GPU (or tests/gpu/mock's stand-in), loading
 * works, a second device is refused, and no_pointers loads on a device of its own. The GPU runs are gpu_emit_c's. */
#include "matmul_seed2.h"
#include "no_pointers.h"
#include "vector_add.h"

#include <stdio.h>
#include <string.h>

static int failures;

/* Expects status (and, when message is not NULL, exactly that tric_last_error). */
static void expect(const char *what, tric_status got, tric_status want, const char *message)
{
    if (got != want) {
        printf("FAIL %s: got %s (%s), want %s\n", what, tric_status_name(got), tric_last_error(),
               tric_status_name(want));
        failures++;
    } else if (message && strcmp(tric_last_error(), message)) {
        printf("FAIL %s: message\n  got:  %s\n  want: %s\n", what, tric_last_error(), message);
        failures++;
    }
}

static void expect_true(const char *what, int cond)
{
    if (!cond) {
        printf("FAIL %s\n", what);
        failures++;
    }
}

/* A grid function for launch options; the launchers refuse it before calling it. */
static tric_dim3 no_grid_fn(tric_kernel config, const tric_arg *args, int nargs, void *user)
{
    (void)config, (void)args, (void)nargs, (void)user;
    return (tric_dim3){1, 1, 1};
}

int main(void)
{
    expect_true("the PTX starts with its metadata",
                !strncmp(vector_add_ptx, "// tric.begin\n", 14));
    expect_true("the PTX names the kernel",
                strstr(vector_add_ptx, "// tric.kernel vector_add_kernel\n") &&
                    strstr(vector_add_ptx, ".entry vector_add_kernel"));
    expect_true("matmul's PTX names its kernel",
                strstr(matmul_seed2_ptx, ".entry kernel_matmul") != NULL);
    expect_true("nothing loaded yet", !vector_add_module() && !vector_add_device());
    vector_add_unload(); /* unloading what is not loaded does nothing */

    tric_device cpu;
    expect("open cpu", tric_device_open("cpu", &cpu), TRIC_SUCCESS, NULL);
    if (failures)
        return 1;
    tric_buffer x, y, out;
    expect("alloc", tric_buffer_alloc(cpu, 4096, &x), TRIC_SUCCESS, NULL);
    expect("alloc", tric_buffer_alloc(cpu, 4096, &y), TRIC_SUCCESS, NULL);
    expect("alloc", tric_buffer_alloc(cpu, 4096, &out), TRIC_SUCCESS, NULL);
    if (failures)
        return 1;
    tric_dim3 grid = {1, 1, 1};

    /* The argument checks come first, by name, whatever the device. */
    expect("n not a multiple of 16", vector_add_kernel_launch(NULL, grid, x, y, out, 1000),
           TRIC_ERROR_INVALID_ARGUMENT,
           "vector_add_kernel_launch: n_elements = 1000 is not divisible by 16 (the kernel was "
           "compiled for n_elements: i32:16)");
    expect("negative n not a multiple of 16", vector_add_kernel_launch(NULL, grid, x, y, out, -8),
           TRIC_ERROR_INVALID_ARGUMENT,
           "vector_add_kernel_launch: n_elements = -8 is not divisible by 16 (the kernel was "
           "compiled for n_elements: i32:16)");
    expect("NULL buffer", vector_add_kernel_launch(NULL, grid, x, NULL, out, 1024),
           TRIC_ERROR_INVALID_ARGUMENT, "vector_add_kernel_launch: y_ptr is NULL");
    expect("matmul stride_am not a multiple of 16",
           kernel_matmul_launch(NULL, grid, x, y, out, 10, 10, 10, 8, 64, 64),
           TRIC_ERROR_INVALID_ARGUMENT,
           "kernel_matmul_launch: stride_am = 8 is not divisible by 16 (the kernel was compiled "
           "for stride_am: i32:16)");
    expect("matmul stride_cm", kernel_matmul_launch(NULL, grid, x, y, out, 10, 10, 10, 64, 64, 40),
           TRIC_ERROR_INVALID_ARGUMENT,
           "kernel_matmul_launch: stride_cm = 40 is not divisible by 16 (the kernel was compiled "
           "for stride_cm: i32:16)");
    /* K_launch_ex checks the same, under its own name, and refuses a grid function in its
     * options (its grid is its grid argument). */
    tric_launch_options dependent = {.programmatic_dependent = 1};
    expect("launch_ex: n not a multiple of 16",
           vector_add_kernel_launch_ex(NULL, grid, &dependent, x, y, out, 1000),
           TRIC_ERROR_INVALID_ARGUMENT,
           "vector_add_kernel_launch_ex: n_elements = 1000 is not divisible by 16 (the kernel "
           "was compiled for n_elements: i32:16)");
    tric_launch_options with_grid_fn = {.grid_fn = no_grid_fn};
    expect("launch_ex: options->grid_fn",
           vector_add_kernel_launch_ex(NULL, grid, &with_grid_fn, x, y, out, 1024),
           TRIC_ERROR_INVALID_ARGUMENT,
           "vector_add_kernel_launch_ex: options->grid_fn is set; this launcher's grid is its "
           "grid argument");
    expect("matmul launch_ex: stride_cm",
           kernel_matmul_launch_ex(NULL, grid, NULL, x, y, out, 10, 10, 10, 64, 64, 40),
           TRIC_ERROR_INVALID_ARGUMENT,
           "kernel_matmul_launch_ex: stride_cm = 40 is not divisible by 16 (the kernel was "
           "compiled for stride_cm: i32:16)");
    expect_true("no argument error loaded anything",
                !vector_add_module() && !matmul_seed2_module());

    /* The interpreter cannot run PTX: loading on cpu, explicitly or through a launch with cpu
     * buffers, is unsupported and leaves nothing loaded. */
    expect("load on cpu", vector_add_load(cpu), TRIC_ERROR_UNSUPPORTED, NULL);
    expect_true("the message says why", strstr(tric_last_error(), "needs a cuda device") != NULL);
    expect("launch with cpu buffers", vector_add_kernel_launch(NULL, grid, x, y, out, 1024),
           TRIC_ERROR_UNSUPPORTED, NULL);
    expect("launch_ex with cpu buffers",
           vector_add_kernel_launch_ex(NULL, grid, &dependent, x, y, out, 1024),
           TRIC_ERROR_UNSUPPORTED, NULL);
    expect_true("still nothing loaded", !vector_add_module() && !vector_add_device());

    tric_device gpu;
    tric_status st = tric_device_open("cuda:0", &gpu);
    if (st == TRIC_ERROR_NO_DEVICE) {
        printf("no GPU here (%s): checking the no-device path\n", tric_last_error());
        expect("load(NULL) without a GPU", vector_add_load(NULL), TRIC_ERROR_NO_DEVICE, NULL);
        expect("matmul load(NULL) without a GPU", matmul_seed2_load(NULL), TRIC_ERROR_NO_DEVICE,
               NULL);
        expect_true("nothing loaded after NO_DEVICE", !vector_add_module() && !vector_add_device());
        /* A launcher with nothing loaded and no buffer to follow loads on cuda:0 itself. */
        expect("launch without a GPU", no_pointers_launch(NULL, grid, 7), TRIC_ERROR_NO_DEVICE,
               NULL);
        expect_true("the message names cuda:0", !strncmp(tric_last_error(), "cuda:0: ", 8));
    } else {
        expect("open cuda:0", st, TRIC_SUCCESS, NULL);
        printf("GPU present (%s): the no-device path cannot be checked here\n",
               st == TRIC_SUCCESS ? tric_device_name(gpu) : "?");
        if (st == TRIC_SUCCESS) {
            expect("load on the GPU", vector_add_load(gpu), TRIC_SUCCESS, NULL);
            expect("load again, same device", vector_add_load(gpu), TRIC_SUCCESS, NULL);
            expect("load(NULL) when loaded", vector_add_load(NULL), TRIC_SUCCESS, NULL);
            expect_true("loaded on gpu", vector_add_device() == gpu && vector_add_module());
            char want[256];
            snprintf(want, sizeof want,
                     "vector_add_load: already loaded on %s; call "
                     "vector_add_unload() before loading on %s",
                     tric_device_name(gpu), tric_device_name(cpu));
            expect("load on another device", vector_add_load(cpu), TRIC_ERROR_INVALID_ARGUMENT,
                   want);
            /* cpu buffers for a kernel on the GPU: the runtime refuses the launch. */
            expect("cpu buffers, gpu kernel", vector_add_kernel_launch(NULL, grid, x, y, out, 1024),
                   TRIC_ERROR_INVALID_ARGUMENT, NULL);
            vector_add_unload();
            expect_true("unloaded", !vector_add_module() && !vector_add_device());
            tric_device_close(gpu);
            /* No buffer to follow: the launch loads on a cuda:0 of its own, which unload closes. */
            expect("launch, nothing loaded, no pointers", no_pointers_launch(NULL, grid, 7),
                   TRIC_SUCCESS, NULL);
            expect_true("loaded on its own device", no_pointers_device() != NULL);
            expect("synchronize", tric_device_synchronize(no_pointers_device()), TRIC_SUCCESS,
                   NULL);
            no_pointers_unload();
            expect_true("no_pointers unloaded", !no_pointers_device());
        }
    }
    tric_buffer_free(x);
    tric_buffer_free(y);
    tric_buffer_free(out);
    tric_device_close(cpu);
    if (failures) {
        printf("%d failure(s)\n", failures);
        return 1;
    }
    printf("emitc_nodevice: OK\n");
    return 0;
}
