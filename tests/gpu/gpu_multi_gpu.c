/* gpu_multi_gpu (label gpu): several GPUs in one process (docs/runtime.md "Several GPUs"). One
 * module, compiled once on cuda:0, runs vector_add on every device of the machine -- first one
 * device after another, then from a thread per device at once -- and every element of every
 * device's output is checked. Skips (exit 77) with the reason when cuda:0 cannot be opened or the
 * machine has fewer than two GPUs. Runs on the mock driver's two devices too (bench/CMakeLists.txt). */
#include "tests/runtime_check.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

enum { MAX_DEVICES = 16, N = (1 << 20) + 77 };

typedef struct OnDevice {
    tric_device dev;
    tric_kernel k;
    tric_buffer x, y, out;
    float fill;
    int rounds;
    tric_status st;
    char error[512];
} OnDevice;

static float host_x[N], host_y[N], host_out[N];

static tric_status prepare(OnDevice *d)
{
    for (int i = 0; i < N; i++)
        host_x[i] = (float)(i % 4096), host_y[i] = d->fill;
    tric_status st = tric_buffer_alloc(d->dev, sizeof host_x, &d->x);
    if (st == TRIC_SUCCESS)
        st = tric_buffer_alloc(d->dev, sizeof host_y, &d->y);
    if (st == TRIC_SUCCESS)
        st = tric_buffer_alloc(d->dev, sizeof host_out, &d->out);
    if (st == TRIC_SUCCESS)
        st = tric_copy_to_device(d->x, 0, host_x, sizeof host_x, NULL);
    if (st == TRIC_SUCCESS)
        st = tric_copy_to_device(d->y, 0, host_y, sizeof host_y, NULL);
    if (st == TRIC_SUCCESS)
        st = tric_memset(d->out, 0, 0, sizeof host_out, NULL);
    return st;
}

/* rounds launches on d's device (its buffers say where), then a synchronize. */
static void *run(void *arg)
{
    OnDevice *d = arg;
    tric_arg args[] = {TRIC_ARG_BUF(d->x), TRIC_ARG_BUF(d->y), TRIC_ARG_BUF(d->out),
                       TRIC_ARG_I32(N)};
    d->st = TRIC_SUCCESS;
    for (int r = 0; r < d->rounds && d->st == TRIC_SUCCESS; r++)
        d->st = tric_launch(d->k, (tric_dim3){(N + 1023) / 1024, 1, 1}, args, 4, NULL);
    if (d->st == TRIC_SUCCESS)
        d->st = tric_device_synchronize(d->dev);
    if (d->st != TRIC_SUCCESS)
        snprintf(d->error, sizeof d->error, "%s", tric_last_error());
    return NULL;
}

/* Whether every element of d's output is x + fill (printing the first wrong one). */
static bool check_output(const OnDevice *d)
{
    if (tric_copy_to_host(host_out, d->out, 0, sizeof host_out, NULL) != TRIC_SUCCESS)
        return false;
    for (int i = 0; i < N; i++)
        if (host_out[i] != (float)(i % 4096) + d->fill) {
            fprintf(stderr, "%s: out[%d] = %g, expected %g\n", tric_device_name(d->dev), i,
                    host_out[i], (float)(i % 4096) + d->fill);
            return false;
        }
    return true;
}

int main(void)
{
    static OnDevice on[MAX_DEVICES];
    int n = 0;
    for (; n < MAX_DEVICES; n++) {
        char spec[16];
        snprintf(spec, sizeof spec, "cuda:%d", n);
        if (tric_device_open(spec, &on[n].dev) != TRIC_SUCCESS)
            break;
    }
    if (n == 0) {
        printf("SKIP: %s\n", tric_last_error());
        return 77;
    }
    if (n < 2) {
        printf("SKIP: several GPUs in one process needs at least 2 devices; this machine has 1 "
               "(%s)\n",
               tric_device_name(on[0].dev));
        tric_device_close(on[0].dev);
        return 77;
    }
    for (int i = 0; i < n; i++)
        printf("device: %s\n", tric_device_name(on[i].dev));
    /* Compiled once, on cuda:0; every other device loads its PTX at its first launch there. */
    static const char *block[] = {"BLOCK_SIZE=1024"};
    tric_compile_options opt = tric_compile_options_default();
    opt.signature = "*fp32,*fp32,*fp32,i32";
    opt.constexprs = block;
    opt.nconstexprs = 1;
    tric_module mod = NULL;
    tric_kernel k;
    CHECK(tric_module_compile_file(on[0].dev, TRIC_SOURCE_DIR "/examples/vector_add.tri", &opt,
                                   &mod) == TRIC_SUCCESS);
    CHECK(tric_module_get_kernel(mod, "vector_add_kernel", &k) == TRIC_SUCCESS);
    if (failures)
        return 1;
    for (int i = 0; i < n; i++) {
        on[i].k = k;
        on[i].fill = (float)(i + 1);
        on[i].rounds = 1;
        CHECK(prepare(&on[i]) == TRIC_SUCCESS);
    }
    /* One device after another. */
    for (int i = 0; i < n; i++) {
        run(&on[i]);
        if (on[i].st != TRIC_SUCCESS)
            fprintf(stderr, "%s: %s\n", tric_device_name(on[i].dev), on[i].error);
        CHECK(on[i].st == TRIC_SUCCESS);
        CHECK(check_output(&on[i]));
    }
    /* A thread per device, all at once; new outputs first. */
    for (int i = 0; i < n; i++) {
        on[i].fill = (float)(100 + i);
        on[i].rounds = 50;
        tric_buffer_free(on[i].x), tric_buffer_free(on[i].y), tric_buffer_free(on[i].out);
        CHECK(prepare(&on[i]) == TRIC_SUCCESS);
    }
    pthread_t threads[MAX_DEVICES];
    for (int i = 0; i < n; i++)
        CHECK(pthread_create(&threads[i], NULL, run, &on[i]) == 0);
    for (int i = 0; i < n; i++)
        pthread_join(threads[i], NULL);
    for (int i = 0; i < n; i++) {
        if (on[i].st != TRIC_SUCCESS)
            fprintf(stderr, "%s: %s\n", tric_device_name(on[i].dev), on[i].error);
        CHECK(on[i].st == TRIC_SUCCESS);
        CHECK(check_output(&on[i]));
    }
    tric_module_destroy(mod);
    for (int i = n - 1; i >= 0; i--)
        tric_device_close(on[i].dev);
    if (failures) {
        printf("FAIL: %d check(s) on %d devices\n", failures, n);
        return 1;
    }
    printf("PASS: vector_add on %d devices, one module\n", n);
    return 0;
}
