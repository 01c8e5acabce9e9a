/* gpu_scan (label gpu): the scans of tests/scan_cases.h -- tl.cumsum, tl.cumprod,
 * tl.associative_scan with @jit combine functions, x.cumsum, and tl.reduce / x.reduce -- on
 * 1-D and 2-D blocks along
 * either axis, forward and reversed, int8 to int64 and fp16 to fp64, 1 to 8 warps, run on cuda:0
 * and on the cpu interpreter with outputs poisoned (0xFF) first; every element must match the
 * interpreter bit for bit (the inputs keep float results exact in any combine order), and the
 * interpreter the sequential C scan. Skips (exit 77) when cuda:0 cannot be opened. */
#include "tests/scan_cases.h"

int main(void)
{
    tric_device gpu, cpu;
    if (tric_device_open("cuda:0", &gpu) != TRIC_SUCCESS) {
        printf("SKIP: %s\n", tric_last_error());
        return 77;
    }
    CHECK(tric_device_open("cpu", &cpu) == TRIC_SUCCESS);
    printf("device: %s (arch %s)\n", tric_device_name(gpu), tric_device_arch(gpu));
    static unsigned char x[4096 * 8], on_gpu[4096 * 8], on_cpu[4096 * 8], want[4096 * 8];
    for (int i = 0; i < NSCAN_CASES; i++) {
        const ScanCase *c = &scan_cases[i];
        scan_inputs(c, x);
        scan_reference(c, x, want);
        if (!scan_run(cpu, c, x, on_cpu) || !scan_run(gpu, c, x, on_gpu))
            continue;
        failures += scan_compare(c, on_cpu, want, "interpreter");
        failures += scan_compare(c, on_gpu, on_cpu, "gpu");
    }
    tric_device_close(cpu);
    tric_device_close(gpu);
    if (failures) {
        printf("FAIL: %d\n", failures);
        return 1;
    }
    printf("PASS: %d scans\n", NSCAN_CASES);
    return 0;
}
