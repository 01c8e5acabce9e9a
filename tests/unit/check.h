/* check.h: the CHECK of the IR-level unit tests (interp_test.h, passes_kernels.h): on a false
 * condition, print it with a printf-style explanation and count it in test_failures. */
#ifndef TRIC_UNIT_CHECK_H
#define TRIC_UNIT_CHECK_H

#include <stdio.h>

static int test_failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                 \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            test_failures++;                                                                       \
        }                                                                                          \
    } while (0)

#endif
