/* runtime_specialize: launch specialization on the cpu device. Seed 1's vector_add compiled with
 * its parameters open ("*fp32,*fp32,*fp32,i32") runs, per launch, the variant its values allow
 * (':16' for 16-byte-aligned addresses and ints divisible by 16, ':8', ':4', ':2' for the largest
 * power of two dividing a value below that, ':1' for an int equal to 1):
 * each variant is compiled once, its IR is the IR of the same kernel compiled with that signature
 * written out, every launch computes the right sums, hints the signature declares are still
 * checked, no_specialize turns the whole thing off, and threads launching at once with new values
 * compile each variant once. */
#include "tests/runtime_check.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

static const char *vector_add_path(void) { return TRIC_SOURCE_DIR "/examples/vector_add.tri"; }

static tric_kernel compile(tric_device dev, const char *signature, int no_specialize,
                           tric_module *mod)
{
    static const char *defs[] = {"BLOCK_SIZE=256"};
    tric_compile_options opt = tric_compile_options_default();
    opt.signature = signature;
    opt.constexprs = defs;
    opt.nconstexprs = 1;
    opt.no_specialize = no_specialize;
    tric_kernel k = NULL;
    if (tric_module_compile_file(dev, vector_add_path(), &opt, mod) != TRIC_SUCCESS ||
        tric_module_get_kernel(*mod, NULL, &k) != TRIC_SUCCESS) {
        CHECK(!"vector_add compiles");
        return NULL;
    }
    return k;
}

enum { CAP = 4096 };
static tric_buffer xb, yb, ob;
static float hx[CAP], hy[CAP];

/* out[i] = x[i] + y[i] for n elements, x read from byte offset x_off; true when every sum is
 * right and nothing past n was written. */
static bool add_runs(tric_kernel k, int n, size_t x_off)
{
    static float ho[CAP];
    for (int i = 0; i < CAP; i++)
        ho[i] = -1.0f;
    if (tric_copy_to_device(ob, 0, ho, sizeof ho, NULL) != TRIC_SUCCESS)
        return false;
    tric_arg args[] = {TRIC_ARG_BUF_AT(xb, x_off), TRIC_ARG_BUF(yb), TRIC_ARG_BUF(ob),
                       TRIC_ARG_I32(n)};
    tric_dim3 grid = {(unsigned)(n + 255) / 256, 1, 1};
    if (tric_launch(k, grid, args, 4, NULL) != TRIC_SUCCESS ||
        tric_copy_to_host(ho, ob, 0, sizeof ho, NULL) != TRIC_SUCCESS)
        return false;
    size_t shift = x_off / sizeof(float);
    for (int i = 0; i < CAP; i++) {
        float want = i < n ? hx[i + shift] + hy[i] : -1.0f;
        if (ho[i] != want) {
            fprintf(stderr, "n=%d x_off=%zu: out[%d] = %g, want %g\n", n, x_off, i, ho[i], want);
            return false;
        }
    }
    return true;
}

static const char *variant_signature(tric_kernel k, int i)
{
    const char *sig = NULL;
    return tric_kernel_variant(k, i, &sig, NULL) == TRIC_SUCCESS && sig ? sig : "(none)";
}

static void check_variant(tric_kernel k, int i, const char *want)
{
    const char *got = variant_signature(k, i);
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "variant %d: signature %s, want %s\n", i, got, want);
        failures++;
    }
}

/* The variant's code is what compiling with its signature written out gives. */
static void check_same_code(tric_device dev, tric_kernel k, int i)
{
    const char *sig = NULL, *code = NULL;
    CHECK(tric_kernel_variant(k, i, &sig, &code) == TRIC_SUCCESS && code);
    if (!code)
        return;
    tric_module ideal;
    tric_kernel ik = compile(dev, sig, 1, &ideal);
    if (!ik)
        return;
    if (strcmp(code, tric_module_code(ideal)) != 0) {
        fprintf(stderr,
                "variant %d (%s): its IR differs from the kernel compiled with that "
                "signature\n",
                i, sig);
        failures++;
    }
    tric_module_destroy(ideal);
}

static void test_open_signature(tric_device dev)
{
    tric_module mod;
    tric_kernel k = compile(dev, "*fp32,*fp32,*fp32,i32", 0, &mod);
    if (!k)
        return;
    CHECK(tric_kernel_num_variants(k) == 0);
    /* Aligned buffers, n = 1000: the pointers ':16', n ':8' (tric's step past Triton's hints). */
    CHECK(add_runs(k, 1000, 0));
    CHECK(tric_kernel_num_variants(k) == 1);
    check_variant(k, 0, "*fp32:16,*fp32:16,*fp32:16,i32:8");
    /* n = 1024, then 2048: one new variant, then the same one again. */
    CHECK(add_runs(k, 1024, 0));
    CHECK(add_runs(k, 2048, 0));
    CHECK(tric_kernel_num_variants(k) == 2);
    check_variant(k, 1, "*fp32:16,*fp32:16,*fp32:16,i32:16");
    /* n = 1: Triton's equal_to_1, the constant in the code. */
    CHECK(add_runs(k, 1, 0));
    check_variant(k, 2, "*fp32:16,*fp32:16,*fp32:16,i32:1");
    /* x four bytes into its buffer: x only ':4'. */
    CHECK(add_runs(k, 1008, 4));
    check_variant(k, 3, "*fp32:4,*fp32:16,*fp32:16,i32:16");
    CHECK(add_runs(k, 999, 4));
    check_variant(k, 4, "*fp32:4,*fp32:16,*fp32:16,i32");
    CHECK(add_runs(k, 1000, 0)); /* the first variant again */
    CHECK(tric_kernel_num_variants(k) == 5);
    for (int i = 0; i < 5; i++)
        check_same_code(dev, k, i);
    /* The generic kernel's IR is not a variant's: the hints are in the code. */
    const char *code1 = NULL;
    CHECK(tric_kernel_variant(k, 1, NULL, &code1) == TRIC_SUCCESS && code1 &&
          strcmp(code1, tric_module_code(mod)) != 0);
    /* Every address 4 bytes off and n odd: floats are 4-byte aligned, so still a variant. */
    tric_arg args[] = {TRIC_ARG_BUF_AT(xb, 4), TRIC_ARG_BUF_AT(yb, 4), TRIC_ARG_BUF_AT(ob, 4),
                       TRIC_ARG_I32(7)};
    CHECK(tric_launch(k, (tric_dim3){1, 1, 1}, args, 4, NULL) == TRIC_SUCCESS);
    CHECK(tric_kernel_num_variants(k) == 6);
    check_variant(k, 5, "*fp32:4,*fp32:4,*fp32:4,i32");
    check_same_code(dev, k, 5);
    const char *sig;
    CHECK_MSG(tric_kernel_variant(k, 6, &sig, NULL), TRIC_ERROR_INVALID_ARGUMENT,
              "vector_add_kernel: no variant 6 (it has 6)");
    CHECK(tric_kernel_num_variants(NULL) == 0);
    tric_module_destroy(mod);
}

/* Declared hints are checked, not specialized; only the open parameter varies. */
static void test_partial_signature(tric_device dev)
{
    tric_module mod;
    tric_kernel k = compile(dev, "*fp32:16,*fp32:16,*fp32:16,i32", 0, &mod);
    if (!k)
        return;
    CHECK(add_runs(k, 512, 0));
    CHECK(tric_kernel_num_variants(k) == 1);
    check_variant(k, 0, "*fp32:16,*fp32:16,*fp32:16,i32:16");
    tric_arg args[] = {TRIC_ARG_BUF_AT(xb, 4), TRIC_ARG_BUF(yb), TRIC_ARG_BUF(ob),
                       TRIC_ARG_I32(512)};
    tric_status st = tric_launch(k, (tric_dim3){2, 1, 1}, args, 4, NULL);
    CHECK(st == TRIC_ERROR_INVALID_ARGUMENT &&
          strstr(tric_last_error(),
                 "argument 1 (x_ptr) of vector_add_kernel: the kernel was compiled for "
                 "addresses divisible by 16 (*fp32:16)") != NULL);
    CHECK(tric_kernel_num_variants(k) == 1);
    tric_module_destroy(mod);
}

static void test_off(tric_device dev)
{
    tric_module mod;
    tric_kernel k = compile(dev, "*fp32,*fp32,*fp32,i32", 1, &mod);
    if (!k)
        return;
    CHECK(add_runs(k, 1024, 0));
    CHECK(add_runs(k, 1, 0));
    CHECK(tric_kernel_num_variants(k) == 0);
    tric_module_destroy(mod);
}

/* Four threads launch one open kernel at once, each with its own output buffer and its own
 * sequence of n: every combination is compiled once (n = 1000 ':8', 1024 and 48 ':16', 1 ':1'),
 * and every launch computes the right sums. */
typedef struct Racer {
    tric_device dev;
    tric_kernel k;
    int first;
    int ok;
} Racer;

static void *racer(void *arg)
{
    Racer *r = arg;
    static const int ns[] = {1000, 1024, 1, 48};
    tric_buffer out;
    r->ok = tric_buffer_alloc(r->dev, CAP * sizeof(float), &out) == TRIC_SUCCESS;
    for (int it = 0; it < 12 && r->ok; it++) {
        int n = ns[(r->first + it) % 4];
        tric_arg args[] = {TRIC_ARG_BUF(xb), TRIC_ARG_BUF(yb), TRIC_ARG_BUF(out), TRIC_ARG_I32(n)};
        static float ho[4][CAP];
        float *h = ho[r->first];
        if (tric_launch(r->k, (tric_dim3){(unsigned)(n + 255) / 256, 1, 1}, args, 4, NULL) !=
                TRIC_SUCCESS ||
            tric_copy_to_host(h, out, 0, (size_t)n * sizeof(float), NULL) != TRIC_SUCCESS) {
            r->ok = 0;
            break;
        }
        for (int i = 0; i < n; i++)
            if (h[i] != hx[i] + hy[i])
                r->ok = 0;
    }
    tric_buffer_free(out);
    return NULL;
}

static void test_threads(tric_device dev)
{
    tric_module mod;
    tric_kernel k = compile(dev, "*fp32,*fp32,*fp32,i32", 0, &mod);
    if (!k)
        return;
    Racer r[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        r[i] = (Racer){dev, k, i, 0};
        CHECK(pthread_create(&t[i], NULL, racer, &r[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        CHECK(r[i].ok);
    }
    CHECK(tric_kernel_num_variants(k) == 3);
    tric_module_destroy(mod);
}

int main(void)
{
    tric_device dev;
    if (tric_device_open("cpu", &dev) != TRIC_SUCCESS) {
        fprintf(stderr, "cannot open cpu: %s\n", tric_last_error());
        return 1;
    }
    for (int i = 0; i < CAP; i++)
        hx[i] = (float)i, hy[i] = 0.25f * (float)(i % 97);
    if (tric_buffer_alloc(dev, sizeof hx, &xb) != TRIC_SUCCESS ||
        tric_buffer_alloc(dev, sizeof hy, &yb) != TRIC_SUCCESS ||
        tric_buffer_alloc(dev, sizeof hx, &ob) != TRIC_SUCCESS ||
        tric_copy_to_device(xb, 0, hx, sizeof hx, NULL) != TRIC_SUCCESS ||
        tric_copy_to_device(yb, 0, hy, sizeof hy, NULL) != TRIC_SUCCESS) {
        fprintf(stderr, "buffers: %s\n", tric_last_error());
        return 1;
    }
    test_open_signature(dev);
    test_partial_signature(dev);
    test_off(dev);
    test_threads(dev);
    tric_buffer_free(xb);
    tric_buffer_free(yb);
    tric_buffer_free(ob);
    tric_device_close(dev);
    if (failures) {
        printf("FAIL: %d check(s)\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
