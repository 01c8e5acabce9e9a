/* matmul [M N K] [--tri FILE]: the two matmuls of examples/matmul.tri, compiled in process and
 * run on the "auto" device (TRIC_DEVICE=cpu|cuda:0 overrides), checked element by element
 * against a C reference computed from the same fp16 inputs:
 *   - seed 1's matmul_kernel: fp16 A and B, fp32 C (the seed stores accumulator.to(float32));
 *   - seed 2's kernel_matmul with GROUP_SIZE_M 0 and 8: fp16 A, B and C, T_ACC = float32. Its
 *     loads and stores are unmasked, so the host pads the matrices to the block sizes.
 * Blocks 64x64x32, 4 warps, 3 stages. Defaults: M=257 N=129 K=100. Exits 1 on any mismatch. */
#include "example_kernels.h"

int main(int argc, char **argv)
{
    int dims[3] = {257, 129, 100}, ndims = 0;
    char path[4096];
    const char *tri = ex_tri_path("matmul.tri", path, sizeof path);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tri") && i + 1 < argc)
            tri = argv[++i];
        else if (argv[i][0] != '-' && atoi(argv[i]) > 0 && ndims < 3)
            dims[ndims++] = atoi(argv[i]);
        else {
            fprintf(stderr, "usage: %s [M N K] [--tri matmul.tri]\n", argv[0]);
            return 2;
        }
    }
    if (ndims != 0 && ndims != 3) {
        fprintf(stderr, "usage: %s [M N K] [--tri matmul.tri]\n", argv[0]);
        return 2;
    }
    tric_device dev;
    EX_CHECK(tric_device_open("auto", &dev));
    printf("device: %s\n", tric_device_name(dev));
    int M = dims[0], N = dims[1], K = dims[2], failed = 0;
    failed |= ex_matmul(dev, tri, 0, 0, M, N, K, &EX_MATMUL_SMALL, 1);
    failed |= ex_matmul(dev, tri, 1, 0, M, N, K, &EX_MATMUL_SMALL, 2);
    failed |= ex_matmul(dev, tri, 1, 8, M, N, K, &EX_MATMUL_SMALL, 3);
    tric_device_close(dev);
    printf("%s\n", failed ? "FAILED" : "all OK");
    return failed;
}
