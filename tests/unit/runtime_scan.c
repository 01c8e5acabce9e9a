/* runtime_scan.c: the scans and combine-function reductions of tests/scan_cases.h compiled
 * for the cpu device and run by the interpreter against a sequential C scan, every element
 * compared exactly; the IR has one scan or reduce op per case. tests/gpu/gpu_scan.c runs the
 * same cases on the GPU. */
#include "tests/scan_cases.h"

int main(void)
{
    tric_device cpu;
    CHECK(tric_device_open("cpu", &cpu) == TRIC_SUCCESS);
    static unsigned char x[4096 * 8], got[4096 * 8], want[4096 * 8];
    for (int i = 0; i < NSCAN_CASES; i++) {
        const ScanCase *c = &scan_cases[i];
        scan_inputs(c, x);
        memset(want, 0xFF, sizeof want);
        scan_reference(c, x, want);
        if (scan_run(cpu, c, x, got))
            failures += scan_compare(c, got, want, "interpreter");
    }
    tric_device_close(cpu);
    if (failures) {
        printf("FAIL: %d\n", failures);
        return 1;
    }
    printf("PASS: %d scans\n", NSCAN_CASES);
    return 0;
}
