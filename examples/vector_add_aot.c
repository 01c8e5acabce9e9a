/* vector_add_aot [N]: the same kernel as vector_add (examples/vector_add.tri), compiled when the
 * program is built instead of when it runs. CMakeLists.txt asks for it with
 *
 *     tric_add_kernels(vector_add_aot SOURCES examples/vector_add.tri EMIT ptx ir EMBED
 *                      OPTIONS --signature=*fp32:16,*fp32:16,*fp32:16,i32 -D BLOCK_SIZE=1024)
 *
 * which runs `tric` at build time, writing vector_add.ptx and vector_add.tir (tile IR), and with
 * EMBED the headers vector_add_ptx.h and vector_add_tir.h holding their text. The program loads
 * the PTX on a cuda device (tric_module_load_ptx) and the tile IR on "cpu", the interpreter
 * (tric_module_compile of a name ending in .tir): nothing is compiled at run time, so it links
 * libtric_runtime (tric::runtime, no LLVM) rather than libtric, and it needs no file beside it.
 * (Without EMBED, TRIC_KERNEL_VECTOR_ADD_PTX / _TIR give the files' paths for
 * tric_module_load_file.) Device: "auto" as in vector_add (TRIC_DEVICE=cpu or cuda:0 overrides).
 * Every element is checked against C; exits 1 on a mismatch or an error. */
#include "example_host.h"

#include "vector_add_ptx.h" /* tric_kernel_vector_add_ptx */
#include "vector_add_tir.h" /* tric_kernel_vector_add_tir */

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 98437;
    if (n <= 0) {
        fprintf(stderr, "usage: %s [N]\n", argv[0]);
        return 2;
    }
    tric_device dev;
    EX_CHECK(tric_device_open("auto", &dev));
    printf("device: %s\n", tric_device_name(dev));
    tric_module mod;
    tric_kernel kernel;
    if (tric_device_get_kind(dev) == TRIC_DEVICE_CUDA)
        EX_CHECK(tric_module_load_ptx(dev, tric_kernel_vector_add_ptx, &mod));
    else
        EX_CHECK(
            tric_module_compile(dev, tric_kernel_vector_add_tir, "vector_add.tir", NULL, &mod));
    EX_CHECK(tric_module_get_kernel(mod, "vector_add_kernel", &kernel));

    size_t bytes = (size_t)n * sizeof(float);
    float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes);
    if (!x || !y || !out) {
        fprintf(stderr, "out of host memory\n");
        return 1;
    }
    ExRng rng = {0x9e3779b97f4a7c15ULL + 1};
    for (int i = 0; i < n; i++) {
        x[i] = ex_rng_float(&rng) * 100.0f;
        y[i] = ex_rng_float(&rng) * 100.0f;
    }
    tric_buffer dx, dy, dout;
    EX_CHECK(tric_buffer_alloc(dev, bytes, &dx));
    EX_CHECK(tric_buffer_alloc(dev, bytes, &dy));
    EX_CHECK(tric_buffer_alloc(dev, bytes, &dout));
    EX_CHECK(tric_copy_to_device(dx, 0, x, bytes, NULL));
    EX_CHECK(tric_copy_to_device(dy, 0, y, bytes, NULL));
    EX_CHECK(tric_memset(dout, 0, 0xff, bytes, NULL)); /* NaN until written */
    tric_arg args[] = {TRIC_ARG_BUF(dx), TRIC_ARG_BUF(dy), TRIC_ARG_BUF(dout), TRIC_ARG_I32(n)};
    EX_CHECK(tric_launch(kernel, (tric_dim3){(unsigned)((n + 1023) / 1024), 1, 1}, args, 4, NULL));
    EX_CHECK(tric_device_synchronize(dev));
    EX_CHECK(tric_copy_to_host(out, dout, 0, bytes, NULL));
    int bad = -1;
    for (int i = 0; i < n && bad < 0; i++)
        if (!(out[i] == x[i] + y[i]))
            bad = i;
    if (bad >= 0)
        printf("vector_add_aot  n=%d  MISMATCH at %d: got %g, want %g\n", n, bad, out[bad],
               x[bad] + y[bad]);
    else
        printf("vector_add_aot  n=%d  OK\n", n);

    /* This library has no compiler: compiling source is refused with a status, not a crash. */
    tric_module none;
    tric_status st = tric_module_compile(dev, "x = 1\n", "inline.tri", NULL, &none);
    int refused = st == TRIC_ERROR_UNSUPPORTED && strstr(tric_last_error(), "without the compiler");
    if (!refused)
        printf("compiling source: unexpected %s: %s\n", tric_status_name(st), tric_last_error());

    tric_buffer_free(dx);
    tric_buffer_free(dy);
    tric_buffer_free(dout);
    tric_module_destroy(mod);
    tric_device_close(dev);
    free(x);
    free(y);
    free(out);
    return bad >= 0 || !refused;
}
