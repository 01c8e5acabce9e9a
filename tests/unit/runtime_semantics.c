/* runtime_semantics: the runtime's edge cases on the cpu device: an empty grid (any dimension 0)
 * launches nothing and succeeds (tric_launch, tric_launch_grid); async copies complete at once;
 * the cuda-only calls (stream wrapping, native handles, kernel attributes) answer UNSUPPORTED or
 * NULL; tric_device_close frees what the caller left live (ASan-clean); and out of memory: an
 * injected failure of the n-th allocation, for every n a compile makes, gives
 * TRIC_ERROR_OUT_OF_MEMORY (never an abort, never a half-built module), and the next compile works. */
#include "examples/example_kernels.h"
#include "support/support.h"
#include "tests/runtime_check.h"

#define VA TRIC_SOURCE_DIR "/examples/vector_add.tri"

enum { N = 3000 };

static tric_dim3 empty_grid(tric_kernel k, const tric_arg *args, int nargs, void *user)
{
    (void)k, (void)args, (void)nargs, (void)user;
    return (tric_dim3){0, 1, 1};
}

static void test_empty_grid_and_async(tric_device dev)
{
    tric_module mod;
    tric_kernel k;
    CHECK(ex_compile_vector_add(dev, VA, &mod, &k) == TRIC_SUCCESS);
    static float hx[N], hy[N], ho[N];
    for (int i = 0; i < N; i++)
        hx[i] = (float)i, hy[i] = 2.0f;
    tric_buffer x, y, o;
    CHECK(tric_buffer_alloc(dev, sizeof hx, &x) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, sizeof hy, &y) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, sizeof ho, &o) == TRIC_SUCCESS);
    /* On cpu the async copies are done when they return. */
    CHECK(tric_copy_to_device_async(x, 0, hx, sizeof hx, NULL) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device_async(y, 0, hy, sizeof hy, NULL) == TRIC_SUCCESS);
    CHECK(tric_memset(o, 0, 0xff, sizeof ho, NULL) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device_async(x, 4, hx, sizeof hx, NULL) == TRIC_ERROR_INVALID_ARGUMENT);

    tric_arg args[4] = {TRIC_ARG_BUF(x), TRIC_ARG_BUF(y), TRIC_ARG_BUF(o), TRIC_ARG_I32(N)};
    static const tric_dim3 empty[] = {{0, 1, 1}, {3, 0, 1}, {3, 1, 0}, {0, 0, 0}};
    for (int i = 0; i < 4; i++)
        CHECK(tric_launch(k, empty[i], args, 4, NULL) == TRIC_SUCCESS);
    CHECK(tric_launch_grid(k, empty_grid, NULL, args, 4, NULL) == TRIC_SUCCESS);
    /* Nothing ran: the output is still poisoned (0xff bytes). */
    CHECK(tric_copy_to_host_async(ho, o, 0, sizeof ho, NULL) == TRIC_SUCCESS);
    int poisoned = 0;
    for (int i = 0; i < N; i++) {
        uint32_t bits;
        memcpy(&bits, &ho[i], 4);
        poisoned += bits == 0xffffffffu;
    }
    CHECK(poisoned == N);
    /* The arguments are still checked. */
    CHECK(tric_launch(k, empty[0], args, 3, NULL) == TRIC_ERROR_INVALID_ARGUMENT);
    /* A real launch: every element. */
    CHECK(tric_launch(k, (tric_dim3){(N + 1023) / 1024, 1, 1}, args, 4, NULL) == TRIC_SUCCESS);
    CHECK(tric_copy_to_host_async(ho, o, 0, sizeof ho, NULL) == TRIC_SUCCESS);
    int right = 0;
    for (int i = 0; i < N; i++)
        right += ho[i] == (float)i + 2.0f;
    CHECK(right == N);

    /* cuda-only calls. */
    tric_kernel_attrs at;
    CHECK(tric_kernel_attributes(k, &at) == TRIC_ERROR_UNSUPPORTED);
    CHECK(at.threads == 128 && at.registers == 0 && at.active_blocks_per_sm == 0);
    CHECK(tric_kernel_attributes(k, NULL) == TRIC_ERROR_INVALID_ARGUMENT);
    tric_stream s;
    CHECK(tric_stream_wrap(dev, (void *)0x1234, &s) == TRIC_ERROR_UNSUPPORTED && s == NULL);
    CHECK(tric_device_native_context(dev) == NULL && tric_device_native_stream(dev) == NULL);
    CHECK(tric_stream_create(dev, &s) == TRIC_SUCCESS);
    CHECK(tric_stream_native(s) == NULL && tric_stream_native(NULL) == NULL);
    tric_stream_destroy(s);

    tric_buffer_free(x);
    tric_buffer_free(y);
    tric_buffer_free(o);
    tric_module_destroy(mod);
}

/* Everything left live at close is freed (run under ASan: no leak, no use after free). */
static void test_close_with_live_objects(void)
{
    tric_device dev;
    CHECK(tric_device_open("cpu", &dev) == TRIC_SUCCESS);
    tric_module m1, m2;
    tric_kernel k;
    tric_buffer b[5];
    tric_stream s[2];
    CHECK(ex_compile_vector_add(dev, VA, &m1, &k) == TRIC_SUCCESS);
    CHECK(ex_compile_vector_add(dev, VA, &m2, &k) == TRIC_SUCCESS);
    for (int i = 0; i < 5; i++)
        CHECK(tric_buffer_alloc(dev, 1000 * (size_t)(i + 1), &b[i]) == TRIC_SUCCESS);
    CHECK(tric_stream_create(dev, &s[0]) == TRIC_SUCCESS);
    CHECK(tric_stream_create(dev, &s[1]) == TRIC_SUCCESS);
    /* Some destroyed by hand first: each is unlinked, and not freed again at close. */
    tric_buffer_free(b[2]);
    tric_module_destroy(m1);
    tric_stream_destroy(s[0]);
    /* A launch that made a specialized variant (n divisible by 8): its module goes too. */
    tric_arg args[4] = {TRIC_ARG_BUF(b[0]), TRIC_ARG_BUF(b[1]), TRIC_ARG_BUF(b[3]),
                        TRIC_ARG_I32(200)};
    CHECK(tric_launch(k, (tric_dim3){1, 1, 1}, args, 4, NULL) == TRIC_SUCCESS);
    CHECK(tric_kernel_num_variants(k) == 1);
    tric_device_close(dev);
}

static void test_out_of_memory(tric_device dev)
{
    int oom = 0, n = 1;
    for (;; n++) {
        unsigned long before = support_alloc_failures();
        support_fail_allocation(n);
        tric_module mod = (tric_module)(uintptr_t)1;
        tric_kernel k;
        tric_status st = ex_compile_vector_add(dev, VA, &mod, &k);
        bool fired = support_alloc_failures() != before;
        support_fail_allocation(0);
        if (!fired) {
            /* n is past the compile's allocations: it succeeded untouched. */
            CHECK(st == TRIC_SUCCESS);
            tric_module_destroy(mod);
            break;
        }
        if (st != TRIC_ERROR_OUT_OF_MEMORY || mod != NULL) {
            fprintf(stderr, "allocation %d failed: got %s (%s)\n", n, tric_status_name(st),
                    tric_last_error());
            CHECK(st == TRIC_ERROR_OUT_OF_MEMORY && mod == NULL);
        }
        oom++;
        if (n > 100000) {
            CHECK(!"the compile never ran past the injected failure");
            break;
        }
    }
    CHECK(oom > 10); /* the compile makes many allocations: every one was tried */
    printf("out of memory: %d allocation points failed one at a time, each reported\n", oom);
    /* And the next compile works, launched and checked. */
    CHECK(ex_vector_add(dev, VA, 1000, 3) == 0);
}

int main(void)
{
    tric_device dev;
    if (tric_device_open("cpu", &dev) != TRIC_SUCCESS) {
        printf("FAIL: %s\n", tric_last_error());
        return 1;
    }
    test_empty_grid_and_async(dev);
    test_close_with_live_objects();
    test_out_of_memory(dev);
    tric_device_close(dev);
    if (failures) {
        printf("FAIL: %d check(s)\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
