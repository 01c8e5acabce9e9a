/* example_host.h: small host-side helpers shared by the example programs, the GPU tests and the
 * benchmarks (header-only, static functions): finding the .tri files, a reproducible random
 * generator, IEEE binary16 conversions, and a check macro that prints tric's error. */
#ifndef TRIC_EXAMPLE_HOST_H
#define TRIC_EXAMPLE_HOST_H

#include "tric/tric.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Stops the calling function with 1 when a tric call fails, printing what and the message. */
#define EX_CHECK(call)                                                                             \
    do {                                                                                           \
        tric_status st_ = (call);                                                                  \
        if (st_ != TRIC_SUCCESS) {                                                                 \
            fprintf(stderr, "%s:%d: %s failed: %s\n%s\n", __FILE__, __LINE__, #call,               \
                    tric_status_name(st_), tric_last_error());                                     \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static inline int ex_is_dir(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Where the .tri examples are: $TRIC_EXAMPLES_DIR (environment), else the directory the build
 * recorded (TRIC_EXAMPLES_DIR, a path on the build machine), else ./examples (run from the repo
 * root on a machine the binaries were carried to). Writes DIR/name into out. */
static inline const char *ex_tri_path(const char *name, char *out, size_t len)
{
    const char *dirs[3] = {getenv("TRIC_EXAMPLES_DIR"),
#ifdef TRIC_EXAMPLES_DIR
                           TRIC_EXAMPLES_DIR,
#elif defined(TRIC_SOURCE_DIR)
                           TRIC_SOURCE_DIR "/examples",
#else
                           NULL,
#endif
                           "examples"};
    for (int i = 0; i < 3; i++) {
        if (!dirs[i] || !ex_is_dir(dirs[i]))
            continue;
        snprintf(out, len, "%s/%s", dirs[i], name);
        struct stat st;
        if (stat(out, &st) == 0)
            return out;
    }
    snprintf(out, len, "examples/%s", name);
    return out;
}

/* xorshift64*: reproducible, the same on every machine. */
typedef struct ExRng {
    uint64_t s;
} ExRng;

static inline uint64_t ex_rng_next(ExRng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [-1, 1). */
static inline float ex_rng_float(ExRng *r)
{
    return (float)((double)(ex_rng_next(r) >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0);
}

static inline size_t ex_round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }

/* Random fp16 inputs of an M x K by K x N matmul (uniform in [-1, 1), from seed): a and b row-major
 * with row strides kp and np (the padding left as it was: calloc'd zeros), and the same values as
 * floats for ex_matmul_error: af row-major [M][K], bt B transposed [N][K] (fp16 values are exact
 * in float). */
static inline void ex_matmul_inputs(uint64_t seed, int M, int N, int K, size_t kp, size_t np,
                                    uint16_t *a, uint16_t *b, float *af, float *bt)
{
    ExRng rng = {seed * 0x9e3779b97f4a7c15ULL + 7};
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++) {
            a[(size_t)i * kp + k] = tric_f32_to_f16(ex_rng_float(&rng));
            af[(size_t)i * K + k] = tric_f16_to_f32(a[(size_t)i * kp + k]);
        }
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++) {
            b[(size_t)k * np + j] = tric_f32_to_f16(ex_rng_float(&rng));
            bt[(size_t)j * K + k] = tric_f16_to_f32(b[(size_t)k * np + j]);
        }
}

/* A matmul's C against the product in double of the same fp16 inputs: A row-major [M][K] and B
 * transposed [N][K] as floats, C with row stride ldc, fp16 (c16) or fp32 (c32; the other NULL).
 * fp16 products are exact in fp32, so the only differences are the fp32 summation (in any order:
 * at most about K * 2^-24 * sum|a*b|) and, for an fp16 C, the final rounding (half an ulp, 2^-11
 * relative; one ulp allowed). A wrong index or a missed tile gives errors of order 1. */
typedef struct ExMatmulError {
    double max_err;   /* the largest |C - reference| */
    int bad_i, bad_j; /* the first element outside the bound; -1 when none */
    double bad_got, bad_want;
} ExMatmulError;

static inline ExMatmulError ex_matmul_error(const float *af, const float *bt, const uint16_t *c16,
                                            const float *c32, int M, int N, int K, size_t ldc)
{
    ExMatmulError r = {0, -1, -1, 0, 0};
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double want = 0, mag = 0;
            for (int k = 0; k < K; k++) {
                double p = (double)af[(size_t)i * K + k] * bt[(size_t)j * K + k];
                want += p;
                mag += fabs(p);
            }
            double got = c16 ? tric_f16_to_f32(c16[(size_t)i * ldc + j]) : c32[(size_t)i * ldc + j];
            double err = fabs(got - want);
            double tol = 1e-6 + (K + 2) * mag / 16777216.0;
            if (c16)
                tol += fabs(want) / 1024 + 6e-8;
            if (isnan(err))
                err = INFINITY;
            if (err > r.max_err)
                r.max_err = err;
            if (r.bad_i < 0 && !(err <= tol)) {
                r.bad_i = i, r.bad_j = j;
                r.bad_got = got, r.bad_want = want;
            }
        }
    return r;
}

#endif
