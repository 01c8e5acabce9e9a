/* bench_util.h: timing for the GPU benchmarks. Kernel time comes from CUDA events (cuEventRecord
 * before each launch and after the last, cuEventElapsedTime between neighbours) through the
 * libcuda tric already loaded (runtime/cuda_api.h); host time from CLOCK_MONOTONIC. */
#ifndef TRIC_BENCH_UTIL_H
#define TRIC_BENCH_UTIL_H

#include "examples/example_kernels.h"
#include "runtime/cuda_api.h"

#include <time.h>

static inline double bench_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static inline int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static inline double bench_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Opens cuda:0 or explains why not (the caller exits 77). */
static inline tric_device bench_open(void) {
    tric_device dev;
    if (tric_device_open("cuda:0", &dev) != TRIC_SUCCESS) {
        printf("SKIP: %s\n", tric_last_error());
        return NULL;
    }
    printf("# device: %s\n", tric_device_name(dev));
    return dev;
}

/* warmup launches, then reps launches each between two events on the default stream; the median
 * kernel time in milliseconds (0 with the message printed on an error). */
static inline double bench_kernel_ms(tric_kernel k, tric_dim3 grid, const tric_arg *args, int nargs,
                                     int warmup, int reps) {
    const RtCudaApi *cu = rt_cuda_api();
    if (!cu) {
        printf("error: %s\n", rt_cuda_api_error());
        return 0;
    }
    for (int i = 0; i < warmup; i++)
        if (tric_launch(k, grid, args, nargs, NULL) != TRIC_SUCCESS) {
            printf("error: %s\n", tric_last_error());
            return 0;
        }
    CUevent *ev = calloc((size_t)reps + 1, sizeof *ev);
    double *ms = calloc((size_t)reps, sizeof *ms);
    for (int i = 0; i <= reps; i++)
        cu->cuEventCreate(&ev[i], CU_EVENT_DEFAULT);
    for (int i = 0; i < reps; i++) {
        cu->cuEventRecord(ev[i], NULL);
        if (tric_launch(k, grid, args, nargs, NULL) != TRIC_SUCCESS) {
            printf("error: %s\n", tric_last_error());
            return 0;
        }
    }
    cu->cuEventRecord(ev[reps], NULL);
    CUresult r = cu->cuEventSynchronize(ev[reps]);
    double result = 0;
    if (r != CUDA_SUCCESS) {
        char text[256];
        printf("error: the kernel failed: %s\n", rt_cuda_error_text(r, text, sizeof text));
    } else {
        for (int i = 0; i < reps; i++) {
            float t = 0;
            cu->cuEventElapsedTime(&t, ev[i], ev[i + 1]);
            ms[i] = t;
        }
        result = bench_median(ms, reps);
    }
    for (int i = 0; i <= reps; i++)
        cu->cuEventDestroy(ev[i]);
    free(ev);
    free(ms);
    return result;
}

#endif
