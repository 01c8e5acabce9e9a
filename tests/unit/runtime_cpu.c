/* runtime_cpu: the public runtime API on the cpu device (the interpreter): seed 1's vector_add at
 * several sizes, argument checking with its exact messages, an out-of-bounds kernel reported with
 * its .tri line and undone, compile errors verbatim, buffers and copies, and opening cuda:0 on a
 * machine without a driver. */
#include "examples/example_kernels.h"
#include "tests/runtime_check.h"

static const char *vector_add_path(void) { return TRIC_SOURCE_DIR "/examples/vector_add.tri"; }

static void test_vector_add_runs(tric_device dev)
{
    static const int sizes[] = {1, 1000, 98437};
    for (int i = 0; i < 3; i++)
        CHECK(ex_vector_add(dev, vector_add_path(), sizes[i], (uint64_t)i + 1) == 0);
}

static void test_kernel_queries(tric_kernel k)
{
    CHECK(strcmp(tric_kernel_name(k), "vector_add_kernel") == 0);
    CHECK(tric_kernel_num_params(k) == 4);
    CHECK(tric_kernel_param_type(k, 0) && strcmp(tric_kernel_param_type(k, 0), "*fp32") == 0);
    CHECK(tric_kernel_param_type(k, 3) && strcmp(tric_kernel_param_type(k, 3), "i32") == 0);
    CHECK(tric_kernel_param_type(k, 4) == NULL);
    CHECK(tric_kernel_threads(k) == 128);
}

static void test_argument_checks(tric_device dev, tric_kernel k)
{
    tric_buffer b;
    if (tric_buffer_alloc(dev, 64, &b) != TRIC_SUCCESS) {
        CHECK(!"alloc");
        return;
    }
    tric_dim3 grid = {1, 1, 1};
    tric_arg args[4] = {TRIC_ARG_BUF(b), TRIC_ARG_BUF(b), TRIC_ARG_BUF(b), TRIC_ARG_I32(16)};
    CHECK_MSG(tric_launch(k, grid, args, 3, NULL), TRIC_ERROR_INVALID_ARGUMENT,
              "vector_add_kernel takes 4 arguments (*fp32, *fp32, *fp32, i32), got 3");
    CHECK_MSG(tric_launch(k, grid, args, 5, NULL), TRIC_ERROR_INVALID_ARGUMENT,
              "vector_add_kernel takes 4 arguments (*fp32, *fp32, *fp32, i32), got 5");

    args[1] = TRIC_ARG_I32(7);
    CHECK_MSG(tric_launch(k, grid, args, 4, NULL), TRIC_ERROR_INVALID_ARGUMENT,
              "argument 2 (y_ptr) of vector_add_kernel: expected a pointer (*fp32), got an int");
    args[1] = TRIC_ARG_BUF(b);
    args[3] = TRIC_ARG_F32(16.0f);
    CHECK_MSG(tric_launch(k, grid, args, 4, NULL), TRIC_ERROR_INVALID_ARGUMENT,
              "argument 4 (n_elements) of vector_add_kernel: expected an int (i32), got a float");
    args[3] = TRIC_ARG_I64(16);
    CHECK_MSG(tric_launch(k, grid, args, 4, NULL), TRIC_ERROR_INVALID_ARGUMENT,
              "argument 4 (n_elements) of vector_add_kernel: expected an int (i32), got an int64");
    args[3] = TRIC_ARG_I32(16);
    args[0] = TRIC_ARG_BUF_AT(b, 65);
    CHECK_MSG(
        tric_launch(k, grid, args, 4, NULL), TRIC_ERROR_INVALID_ARGUMENT,
        "argument 1 (x_ptr) of vector_add_kernel: offset 65 is past the buffer's end (64 bytes)");
    args[0] = TRIC_ARG_BUF(b);
    /* All fixed: 16 floats fit the 64-byte buffer. */
    CHECK(tric_launch(k, grid, args, 4, NULL) == TRIC_SUCCESS);
    CHECK(tric_launch(NULL, grid, args, 4, NULL) == TRIC_ERROR_INVALID_ARGUMENT);
    tric_buffer_free(b);
}

/* A kernel compiled for ":16" arguments refuses arguments that break the hint: its vectorized,
 * predicated accesses would be wrong for them. */
static void test_hint_checks(tric_device dev)
{
    tric_compile_options opt = tric_compile_options_default();
    opt.signature = "*fp32:16,*fp32:16,*fp32:16,i32:16";
    const char *defs[] = {"BLOCK_SIZE=1024"};
    opt.constexprs = defs;
    opt.nconstexprs = 1;
    tric_module mod;
    tric_kernel k;
    if (tric_module_compile_file(dev, vector_add_path(), &opt, &mod) != TRIC_SUCCESS ||
        tric_module_get_kernel(mod, NULL, &k) != TRIC_SUCCESS) {
        CHECK(!"vector_add with :16 hints compiles");
        return;
    }
    tric_buffer b;
    if (tric_buffer_alloc(dev, 4096, &b) != TRIC_SUCCESS) {
        CHECK(!"alloc");
        tric_module_destroy(mod);
        return;
    }
    tric_dim3 grid = {1, 1, 1};
    tric_arg args[4] = {TRIC_ARG_BUF(b), TRIC_ARG_BUF(b), TRIC_ARG_BUF(b), TRIC_ARG_I32(1000)};
    CHECK_MSG(tric_launch(k, grid, args, 4, NULL), TRIC_ERROR_INVALID_ARGUMENT,
              "argument 4 (n_elements) of vector_add_kernel: the kernel was compiled for values "
              "divisible by 16 "
              "(i32:16), got 1000");
    args[3] = TRIC_ARG_I32(1008);
    args[1] = TRIC_ARG_BUF_AT(b, 4);
    tric_status st = tric_launch(k, grid, args, 4, NULL);
    CHECK(st == TRIC_ERROR_INVALID_ARGUMENT &&
          strstr(tric_last_error(),
                 "argument 2 (y_ptr) of vector_add_kernel: the kernel was compiled for "
                 "addresses divisible by 16 (*fp32:16), got 0x") != NULL);
    args[1] = TRIC_ARG_BUF_AT(b, 16);
    args[3] = TRIC_ARG_I32(1008 - 16);
    CHECK(tric_launch(k, grid, args, 4, NULL) == TRIC_SUCCESS);
    tric_buffer_free(b);
    tric_module_destroy(mod);
}

/* A compiled module for cpu is tile IR text: the module's code saved to a .tir file loads back
 * and runs. */
static void test_load_ir_file(tric_device dev, tric_module compiled)
{
    char path[] = "/tmp/tric_runtime_cpu_XXXXXX.tir";
    int fd = mkstemps(path, 4);
    if (fd < 0) {
        CHECK(!"mkstemps");
        return;
    }
    const char *ir = tric_module_code(compiled);
    FILE *f = fdopen(fd, "w");
    fputs(ir, f);
    fclose(f);
    tric_module mod;
    tric_kernel k;
    CHECK(tric_module_load_file(dev, path, &mod) == TRIC_SUCCESS);
    if (tric_module_get_kernel(mod, "vector_add_kernel", &k) == TRIC_SUCCESS) {
        tric_buffer x, y, out;
        float hx[100], hy[100], ho[100];
        for (int i = 0; i < 100; i++)
            hx[i] = (float)i, hy[i] = 0.5f * (float)i;
        tric_buffer_alloc(dev, sizeof hx, &x);
        tric_buffer_alloc(dev, sizeof hy, &y);
        tric_buffer_alloc(dev, sizeof ho, &out);
        tric_copy_to_device(x, 0, hx, sizeof hx, NULL);
        tric_copy_to_device(y, 0, hy, sizeof hy, NULL);
        tric_arg args[] = {TRIC_ARG_BUF(x), TRIC_ARG_BUF(y), TRIC_ARG_BUF(out), TRIC_ARG_I32(100)};
        CHECK(tric_launch(k, (tric_dim3){1, 1, 1}, args, 4, NULL) == TRIC_SUCCESS);
        CHECK(tric_copy_to_host(ho, out, 0, sizeof ho, NULL) == TRIC_SUCCESS);
        for (int i = 0; i < 100; i++)
            CHECK(ho[i] == 1.5f * (float)i);
        tric_buffer_free(x);
        tric_buffer_free(y);
        tric_buffer_free(out);
        tric_module_destroy(mod);
    }
    remove(path);
}

/* Program 0 stores out[0..1023] in bounds; program 1 stores out[1024..2047] into a buffer of
 * 1500 floats: the launch fails with the store's .tri line, and program 0's stores are undone. */
static void test_out_of_bounds(tric_device dev, tric_kernel k)
{
    const int n = 2048, out_n = 1500;
    tric_buffer x, y, out;
    CHECK(tric_buffer_alloc(dev, n * 4, &x) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, n * 4, &y) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, out_n * 4, &out) == TRIC_SUCCESS);
    CHECK(tric_memset(x, 0, 0, n * 4, NULL) == TRIC_SUCCESS);
    CHECK(tric_memset(y, 0, 0, n * 4, NULL) == TRIC_SUCCESS);
    CHECK(tric_memset(out, 0, 0x5a, out_n * 4, NULL) == TRIC_SUCCESS);
    tric_arg args[4] = {TRIC_ARG_BUF(x), TRIC_ARG_BUF(y), TRIC_ARG_BUF(out), TRIC_ARG_I32(n)};
    tric_status st = tric_launch(k, (tric_dim3){2, 1, 1}, args, 4, NULL);
    CHECK(st == TRIC_ERROR_LAUNCH);
    const char *msg = tric_last_error();
    CHECK(strstr(msg, "vector_add.tri:31") != NULL);
    CHECK(strstr(msg, "out-of-bounds store") != NULL);
    CHECK(strstr(msg, "program (1, 0, 0)") != NULL);
    /* The buffer is named by the parameter it was passed as, not by its allocation order. */
    CHECK(strstr(msg, "(just past the end of the buffer passed as output_ptr [0x") != NULL);
    unsigned char *host = malloc(out_n * 4);
    CHECK(tric_copy_to_host(host, out, 0, out_n * 4, NULL) == TRIC_SUCCESS);
    int changed = 0;
    for (int i = 0; i < out_n * 4; i++)
        changed += host[i] != 0x5a;
    CHECK(changed == 0);
    free(host);

    /* A raw address outside every buffer is caught the same way (a load this time). */
    args[0] = TRIC_ARG_ADDR(16);
    CHECK(tric_launch(k, (tric_dim3){1, 1, 1}, args, 4, NULL) == TRIC_ERROR_LAUNCH);
    CHECK(strstr(tric_last_error(), "vector_add.tri:25") != NULL);
    tric_buffer_free(x);
    tric_buffer_free(y);
    tric_buffer_free(out);
}

static void test_compile_errors(tric_device dev)
{
    tric_module mod = NULL;
    const char *bad = "import triton\n"
                      "import triton.language as tl\n"
                      "\n"
                      "@triton.jit\n"
                      "def k(x_ptr, n):\n"
                      "    tl.store(x_ptr, undefined_name)\n";
    tric_compile_options opt = tric_compile_options_default();
    opt.signature = "*fp32,i32";
    tric_status st = tric_module_compile(dev, bad, "bad.tri", &opt, &mod);
    CHECK(st == TRIC_ERROR_COMPILE);
    CHECK(mod == NULL);
    const char *msg = tric_last_error();
    CHECK(strstr(msg, "bad.tri:6:") != NULL);
    CHECK(strstr(msg, "error:") != NULL);
    CHECK(strstr(msg, "    tl.store(x_ptr, undefined_name)\n") != NULL); /* the source line */
    CHECK(strchr(msg, '^') != NULL);                                     /* and the caret */

    /* Messages of a compile through the C API name its fields, not tric's -D and --signature. */
    const char *untyped = "import triton\n"
                          "import triton.language as tl\n"
                          "\n"
                          "@triton.jit\n"
                          "def k(x_ptr, BLOCK: tl.constexpr):\n"
                          "    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)\n";
    opt = tric_compile_options_default();
    CHECK(tric_module_compile(dev, untyped, "untyped.tri", &opt, &mod) == TRIC_ERROR_COMPILE);
    msg = tric_last_error();
    CHECK(strstr(msg, "parameter 'x_ptr' has no type: annotate it (x_ptr: \"*fp32\") or pass "
                      "opt.signature") != NULL);
    CHECK(strstr(msg, "constexpr parameter 'BLOCK' has no value: pass \"BLOCK=...\" in "
                      "opt.constexprs") != NULL);
    CHECK(strstr(msg, "-D") == NULL && strstr(msg, "--signature") == NULL);
    const char *unknown_define[] = {"BLOK=64"};
    opt.signature = "*fp32";
    opt.constexprs = unknown_define;
    opt.nconstexprs = 1;
    CHECK(tric_module_compile(dev, untyped, "untyped.tri", &opt, &mod) == TRIC_ERROR_COMPILE);
    CHECK(strstr(tric_last_error(), "opt.constexprs entry \"BLOK=64\": kernel 'k' has no "
                                    "constexpr parameter 'BLOK' (its constexprs: BLOCK)") != NULL);

    const char *bad_define[] = {"BLOCK_SIZE"};
    opt = tric_compile_options_default();
    opt.constexprs = bad_define;
    opt.nconstexprs = 1;
    CHECK_MSG(tric_module_compile_file(dev, vector_add_path(), &opt, &mod),
              TRIC_ERROR_INVALID_ARGUMENT, "constexpr 'BLOCK_SIZE' is not of the form NAME=VALUE");
    opt = tric_compile_options_default();
    opt.num_warps = 3;
    CHECK_MSG(tric_module_compile_file(dev, vector_add_path(), &opt, &mod),
              TRIC_ERROR_INVALID_ARGUMENT, "num_warps must be a power of two in 1..32, got 3");
    CHECK(tric_module_compile_file(dev, "/nonexistent/x.tri", NULL, &mod) == TRIC_ERROR_NOT_FOUND);
    CHECK(strstr(tric_last_error(), "/nonexistent/x.tri") != NULL);
    CHECK(tric_module_load_ptx(dev, "// not ptx", &mod) == TRIC_ERROR_UNSUPPORTED);
}

static void test_buffers(tric_device dev)
{
    tric_buffer a, b;
    CHECK(tric_buffer_alloc(dev, 100, &a) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, 100, &b) == TRIC_SUCCESS);
    CHECK(tric_buffer_size(a) == 100);
    CHECK(tric_buffer_address(a) % 128 == 0);
    unsigned char in[100], out[100];
    for (int i = 0; i < 100; i++)
        in[i] = (unsigned char)i;
    CHECK(tric_copy_to_device(a, 0, in, 100, NULL) == TRIC_SUCCESS);
    CHECK(tric_memset(b, 0, 0xee, 100, NULL) == TRIC_SUCCESS);
    CHECK(tric_copy_device(b, 10, a, 20, 30, NULL) == TRIC_SUCCESS);
    CHECK(tric_copy_to_host(out, b, 0, 100, NULL) == TRIC_SUCCESS);
    int ok = 1;
    for (int i = 0; i < 100; i++)
        ok &= out[i] == (i >= 10 && i < 40 ? (unsigned char)(i + 10) : 0xee);
    CHECK(ok);
    CHECK_MSG(tric_copy_to_host(out, a, 90, 20, NULL), TRIC_ERROR_INVALID_ARGUMENT,
              "tric_copy_to_host: bytes [90, 110) are outside the buffer (100 bytes)");
    CHECK(tric_copy_to_device(a, 101, in, 0, NULL) == TRIC_ERROR_INVALID_ARGUMENT);
    tric_stream s;
    CHECK(tric_stream_create(dev, &s) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(a, 0, in, 100, s) == TRIC_SUCCESS);
    CHECK(tric_stream_synchronize(s) == TRIC_SUCCESS);
    tric_stream_destroy(s);
    tric_buffer_free(b); /* the middle of the live list: a's slot must follow */
    CHECK(tric_copy_to_host(out, a, 0, 100, NULL) == TRIC_SUCCESS && memcmp(in, out, 100) == 0);
    tric_buffer_free(a);
}

static void test_devices(void)
{
    tric_device dev = NULL;
    CHECK_MSG(tric_device_open("gpu:0", &dev), TRIC_ERROR_INVALID_ARGUMENT,
              "unknown device 'gpu:0' (expected cpu, cuda, cuda:N or auto)");
    tric_status st = tric_device_open("cuda:0", &dev);
    if (st == TRIC_SUCCESS) { /* a GPU machine: nothing to check about the failure */
        CHECK(tric_device_get_kind(dev) == TRIC_DEVICE_CUDA);
        tric_device_close(dev);
    } else {
        CHECK(st == TRIC_ERROR_NO_DEVICE);
        if (strstr(tric_last_error(), "libcuda.so.1 not found"))
            CHECK(strcmp(tric_last_error(),
                         "cuda:0: libcuda.so.1 not found (no NVIDIA driver on this machine)") == 0);
        printf("cuda:0 here: %s\n", tric_last_error());
    }
    CHECK(tric_device_open("cpu", &dev) == TRIC_SUCCESS);
    CHECK(tric_device_get_kind(dev) == TRIC_DEVICE_CPU);
    CHECK(strcmp(tric_device_arch(dev), "cpu") == 0);
    tric_device_close(dev);
}

int main(void)
{
    test_devices();
    tric_device dev;
    if (tric_device_open("cpu", &dev) != TRIC_SUCCESS) {
        fprintf(stderr, "cannot open cpu: %s\n", tric_last_error());
        return 1;
    }
    printf("device: %s\n", tric_device_name(dev));
    test_buffers(dev);
    test_compile_errors(dev);
    tric_module mod;
    tric_kernel k;
    if (ex_compile_vector_add(dev, vector_add_path(), &mod, &k) != TRIC_SUCCESS) {
        fprintf(stderr, "vector_add does not compile: %s\n", tric_last_error());
        return 1;
    }
    tric_kernel other;
    CHECK_MSG(tric_module_get_kernel(mod, "nope", &other), TRIC_ERROR_NOT_FOUND,
              "no kernel 'nope' in this module (it holds 'vector_add_kernel')");
    CHECK(strstr(tric_module_code(mod), "vector_add_kernel") != NULL);
    test_kernel_queries(k);
    test_argument_checks(dev, k);
    test_hint_checks(dev);
    test_load_ir_file(dev, mod);
    test_out_of_bounds(dev, k);
    test_vector_add_runs(dev);
    tric_module_destroy(mod);
    tric_device_close(dev);
    if (failures) {
        printf("FAIL: %d check(s)\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
