/* gpu_pair.h: what the tests that run kernels on cuda:0 against the CPU interpreter
 * (codegen_gpu_diff.c, codegen_gpu_random.c) open first. Header-only, so that each test stays one
 * executable. */
#ifndef TRIC_UNIT_GPU_PAIR_H
#define TRIC_UNIT_GPU_PAIR_H

#include "tric/tric.h"

#include <stdio.h>
#include <string.h>

/* Opens spec (cuda:0; cpu to check a harness on a machine without a GPU) as *gpu and the cpu
 * device as *cpu; generic_arch (size bytes) gets *gpu's arch without its arch-specific suffix
 * (sm_90a -> sm_90: mma.sync and cp.async, no wgmma or TMA). Returns 0, else the test's exit
 * status: 77 (a skip, the reason printed) when spec cannot be opened, 1 when the cpu device
 * cannot. */
static inline int gpu_pair_open(const char *spec, tric_device *gpu, tric_device *cpu,
                                char *generic_arch, size_t size)
{
    if (tric_device_open(spec, gpu) != TRIC_SUCCESS) {
        printf("SKIP: no GPU: %s\n", tric_last_error());
        return 77;
    }
    if (tric_device_open("cpu", cpu) != TRIC_SUCCESS) {
        printf("FAIL: cpu device: %s\n", tric_last_error());
        return 1;
    }
    snprintf(generic_arch, size, "%s", tric_device_arch(*gpu));
    size_t len = strlen(generic_arch);
    if (len > 0 && generic_arch[len - 1] == 'a')
        generic_arch[len - 1] = 0;
    return 0;
}

#endif
