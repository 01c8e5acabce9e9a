/* with_runtime: tric::runtime (no compiler) loads the tile IR tric_add_kernels wrote at build time
 * and runs it on cpu; compiling source through it must fail with TRIC_ERROR_UNSUPPORTED. */
#include "vector_add_check.h"

int main(void)
{
    tric_device dev;
    tric_module mod;
    CHECK(tric_device_open("cpu", &dev));
    CHECK(tric_module_load_file(dev, TRIC_KERNEL_VECTOR_ADD_TIR, &mod));
    FILE *ptx = fopen(TRIC_KERNEL_VECTOR_ADD_PTX, "r"); /* written for cuda; not loadable on cpu */
    if (!ptx) {
        fprintf(stderr, "with_runtime: %s was not written\n", TRIC_KERNEL_VECTOR_ADD_PTX);
        return 1;
    }
    fclose(ptx);
    int failed = run_vector_add(dev, mod, "with_runtime");
    tric_module_destroy(mod);

    tric_module none = NULL;
    tric_status st = tric_module_compile(dev, "import triton\n", "k.tri", NULL, &none);
    if (st != TRIC_ERROR_UNSUPPORTED || !strstr(tric_last_error(), "link tric::tric") || none) {
        fprintf(stderr, "with_runtime: compiling source gave %s: %s\n", tric_status_name(st),
                tric_last_error());
        failed = 1;
    } else {
        printf("with_runtime: compiling source refused: %s\n", tric_last_error());
    }
    tric_device_close(dev);
    return failed;
}
