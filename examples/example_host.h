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

#endif
