/* vector_add_check.h: runs a loaded vector_add_kernel on the cpu device and checks every element
 * (shared by with_compiler.c and with_runtime.c). Uses tric.h only, as a user would. */
#include <tric/tric.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        tric_status st_ = (call);                                                                  \
        if (st_ != TRIC_SUCCESS) {                                                                 \
            fprintf(stderr, "%s failed: %s: %s\n", #call, tric_status_name(st_),                   \
                    tric_last_error());                                                            \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static int run_vector_add(tric_device dev, tric_module mod, const char *who)
{
    enum { N = 1000 };
    static float x[N], y[N], out[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)i * 0.5f;
        y[i] = 3.0f - (float)i;
    }
    tric_kernel k;
    tric_buffer dx, dy, dout;
    CHECK(tric_module_get_kernel(mod, "vector_add_kernel", &k));
    CHECK(tric_buffer_alloc(dev, sizeof x, &dx));
    CHECK(tric_buffer_alloc(dev, sizeof y, &dy));
    CHECK(tric_buffer_alloc(dev, sizeof out, &dout));
    CHECK(tric_copy_to_device(dx, 0, x, sizeof x, NULL));
    CHECK(tric_copy_to_device(dy, 0, y, sizeof y, NULL));
    CHECK(tric_memset(dout, 0, 0xff, sizeof out, NULL));
    tric_arg args[] = {TRIC_ARG_BUF(dx), TRIC_ARG_BUF(dy), TRIC_ARG_BUF(dout), TRIC_ARG_I32(N)};
    int block = 256;
    CHECK(tric_launch(k, (tric_dim3){(N + block - 1) / block, 1, 1}, args, 4, NULL));
    CHECK(tric_copy_to_host(out, dout, 0, sizeof out, NULL));
    for (int i = 0; i < N; i++)
        if (out[i] != x[i] + y[i]) {
            fprintf(stderr, "%s: out[%d] = %g, want %g\n", who, i, out[i], x[i] + y[i]);
            return 1;
        }
    tric_buffer_free(dx);
    tric_buffer_free(dy);
    tric_buffer_free(dout);
    printf("%s: vector_add on %s OK (tric %s)\n", who, tric_device_name(dev), TRIC_VERSION);
    return 0;
}
