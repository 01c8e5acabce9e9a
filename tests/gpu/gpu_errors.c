/* gpu_errors (label gpu): the cuda device's error paths come back as values with the driver's
 * words: PTX that the driver rejects (its JIT log included), a .ptx file with no metadata block,
 * a launch whose arguments do not fit, and an illegal address in a kernel (a sticky error: it is
 * reported by the next synchronize, and every later call says the context is unusable). Skips
 * (exit 77) with the reason when cuda:0 cannot be opened. */
#include "examples/example_kernels.h"
#include "tests/runtime_check.h"

#include <unistd.h>

int main(void)
{
    tric_device dev;
    if (tric_device_open("cuda:0", &dev) != TRIC_SUCCESS) {
        printf("SKIP: %s\n", tric_last_error());
        return 77;
    }
    printf("device: %s\n", tric_device_name(dev));

    /* 1. A valid metadata block around PTX the driver rejects. */
    const char *ptx = "// tric.begin\n// tric.version 0.1.0\n// tric.kernel broken\n"
                      "// tric.target sm_90\n// tric.num_warps 4\n// tric.threads 128\n"
                      "// tric.shared 0\n// tric.params *fp32\n// tric.end\n"
                      ".version 8.0\n.target sm_90\n.address_size 64\n"
                      ".visible .entry broken(.param .u64 p) { this is not ptx; }\n";
    tric_module mod = NULL;
    CHECK(tric_module_load_ptx(dev, ptx, &mod) == TRIC_ERROR_DRIVER);
    CHECK(mod == NULL);
    CHECK(strstr(tric_last_error(), "cuModuleLoadDataEx failed for kernel broken") != NULL);
    CHECK(strstr(tric_last_error(), "CUDA_ERROR_INVALID_PTX") != NULL);
    printf("bad PTX -> %s\n", tric_last_error());

    /* 2. No metadata block. */
    CHECK(tric_module_load_ptx(dev, ".version 8.0\n", &mod) == TRIC_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(tric_last_error(), "no tric metadata block") != NULL);

    /* 3. Argument checking is the same as on cpu. */
    char path[4096];
    const char *va = TRIC_SOURCE_DIR "/examples/vector_add.tri";
    if (access(va, R_OK) != 0)
        va = ex_tri_path("vector_add.tri", path, sizeof path);
    tric_kernel k;
    if (ex_compile_vector_add(dev, va, &mod, &k) != TRIC_SUCCESS) {
        printf("FAIL: vector_add does not compile: %s\n", tric_last_error());
        return 1;
    }
    tric_buffer b;
    CHECK(tric_buffer_alloc(dev, 4096, &b) == TRIC_SUCCESS);
    tric_arg args[4] = {TRIC_ARG_BUF(b), TRIC_ARG_I32(1), TRIC_ARG_BUF(b), TRIC_ARG_I32(1024)};
    CHECK(tric_launch(k, (tric_dim3){1, 1, 1}, args, 4, NULL) == TRIC_ERROR_INVALID_ARGUMENT);
    CHECK(
        strcmp(tric_last_error(),
               "argument 2 (y_ptr) of vector_add_kernel: expected a pointer (*fp32), got an int") ==
        0);

    /* 4. An illegal address: launch is asynchronous, so the fault comes back from the sync. */
    args[1] = TRIC_ARG_ADDR(0x10);
    tric_status st = tric_launch(k, (tric_dim3){1, 1, 1}, args, 4, NULL);
    if (st == TRIC_SUCCESS)
        st = tric_device_synchronize(dev);
    CHECK(st == TRIC_ERROR_LAUNCH);
    CHECK(strstr(tric_last_error(), "CUDA_ERROR_ILLEGAL_ADDRESS") != NULL);
    CHECK(strstr(tric_last_error(), "sticky") != NULL);
    printf("illegal address -> %s\n", tric_last_error());
    CHECK(tric_device_synchronize(dev) != TRIC_SUCCESS); /* and it stays */

    tric_buffer_free(b);
    tric_module_destroy(mod);
    tric_device_close(dev);
    if (failures) {
        printf("FAIL: %d\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
