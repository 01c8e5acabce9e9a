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

static inline int ex_is_dir(const char *path) {
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Where the .tri examples are: $TRIC_EXAMPLES_DIR (environment), else the directory the build
 * recorded (TRIC_EXAMPLES_DIR, a path on the build machine), else ./examples (run from the repo
 * root on a machine the binaries were carried to). Writes DIR/name into out. */
static inline const char *ex_tri_path(const char *name, char *out, size_t len) {
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

static inline uint64_t ex_rng_next(ExRng *r) {
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [-1, 1). */
static inline float ex_rng_float(ExRng *r) {
    return (float)((double)(ex_rng_next(r) >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0);
}

/* IEEE 754 binary16 <-> binary32, round to nearest even. */
static inline uint16_t ex_f32_to_f16(float value) {
    uint32_t x;
    memcpy(&x, &value, 4);
    uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xffu, mant = x & 0x7fffffu;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10)
            return (uint16_t)sign;
        mant |= 0x800000u;
        int shift = 14 - e;
        uint32_t half = mant >> shift, rest = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rest > mid || (rest == mid && (half & 1)))
            half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)e << 10) | (mant >> 13), rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1)))
        half++;
    return (uint16_t)half;
}

static inline float ex_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    uint32_t x;
    if (exp == 0x1f)
        x = sign | 0x7f800000u | (mant << 13);
    else if (exp == 0) {
        float f = (float)mant * (1.0f / 16777216.0f); /* mant * 2^-24 */
        return sign ? -f : f;
    } else
        x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static inline size_t ex_round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }

#endif
