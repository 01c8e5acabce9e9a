/* vector_add [N] [--tri FILE]: seed 1's vector_add_kernel (examples/vector_add.tri), compiled in
 * process by tric's runtime and run on the "auto" device: cuda:0 when there is a GPU, else the
 * cpu interpreter (override with TRIC_DEVICE=cpu or TRIC_DEVICE=cuda:0). Inputs are random fp32;
 * every element is checked against C. Exits 1 on a mismatch or an error.
 *
 * The steps (see ex_vector_add in example_kernels.h): tric_device_open, tric_module_compile_file
 * with signature "*fp32:16,*fp32:16,*fp32:16,i32" and BLOCK_SIZE=1024, tric_buffer_alloc,
 * tric_copy_to_device, tric_launch over cdiv(N, 1024) programs, tric_copy_to_host. */
#include "example_kernels.h"

int main(int argc, char **argv)
{
    int n = 98437;
    char path[4096];
    const char *tri = ex_tri_path("vector_add.tri", path, sizeof path);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tri") && i + 1 < argc)
            tri = argv[++i];
        else if (argv[i][0] != '-' && atoi(argv[i]) > 0)
            n = atoi(argv[i]);
        else {
            fprintf(stderr, "usage: %s [N] [--tri vector_add.tri]\n", argv[0]);
            return 2;
        }
    }
    tric_device dev;
    EX_CHECK(tric_device_open("auto", &dev));
    printf("device: %s\n", tric_device_name(dev));
    int failed = ex_vector_add(dev, tri, n, 1);
    tric_device_close(dev);
    return failed;
}
