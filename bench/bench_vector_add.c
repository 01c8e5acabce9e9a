/* bench_vector_add [LOG2_N]: seed 1's vector_add on cuda:0 at n = 2^28 fp32 (default): 5 warm-up
 * launches, then 100 timed with CUDA events; the median kernel time and the bandwidth it implies,
 * GB/s = 3 * 4 * n / t (two loads and one store per element). The result is checked first. */
#include "bench_util.h"

int main(int argc, char **argv)
{
    int log2n = argc > 1 ? atoi(argv[1]) : 28;
    if (log2n < 10 || log2n > 30) {
        fprintf(stderr, "usage: %s [LOG2_N in 10..30]\n", argv[0]);
        return 2;
    }
    tric_device dev = bench_open();
    if (!dev)
        return 77;
    char path[4096];
    const char *tri = ex_tri_path("vector_add.tri", path, sizeof path);
    if (ex_vector_add(dev, tri, (1 << 20) + 7, 42) != 0) /* correctness first, odd size */
        return 1;

    int n = 1 << log2n;
    size_t bytes = (size_t)n * 4;
    tric_module mod;
    tric_kernel k;
    tric_buffer x, y, out;
    double t0 = bench_now_us();
    EX_CHECK(ex_compile_vector_add_for(dev, tri, n, &mod, &k));
    double compile_ms = (bench_now_us() - t0) / 1000;
    EX_CHECK(tric_buffer_alloc(dev, bytes, &x));
    EX_CHECK(tric_buffer_alloc(dev, bytes, &y));
    EX_CHECK(tric_buffer_alloc(dev, bytes, &out));
    EX_CHECK(tric_memset(x, 0, 0x3c, bytes, NULL));
    EX_CHECK(tric_memset(y, 0, 0x3d, bytes, NULL));
    tric_arg args[] = {TRIC_ARG_BUF(x), TRIC_ARG_BUF(y), TRIC_ARG_BUF(out), TRIC_ARG_I32(n)};
    tric_dim3 grid = {(unsigned)((n + 1023) / 1024), 1, 1};
    double ms = bench_kernel_ms(k, grid, args, 4, 5, 100);
    if (ms <= 0)
        return 1;
    printf("%-28s %12s %12s %10s\n", "# kernel", "n", "time_us", "GB/s");
    printf("%-28s %12d %12.1f %10.0f\n", "tric vector_add fp32", n, ms * 1000,
           3.0 * 4.0 * n / (ms * 1e-3) / 1e9);
    printf("# compile (in process, cache as configured): %.1f ms\n", compile_ms);
    tric_buffer_free(x);
    tric_buffer_free(y);
    tric_buffer_free(out);
    tric_module_destroy(mod);
    tric_device_close(dev);
    return 0;
}
