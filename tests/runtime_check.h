/* runtime_check.h: the checks the runtime tests share. CHECK counts a failed condition and prints
 * it with tric_last_error(); CHECK_MSG expects a status and the exact last-error text. A test
 * returns non-zero when `failures` is. */
#ifndef TRIC_TESTS_RUNTIME_CHECK_H
#define TRIC_TESTS_RUNTIME_CHECK_H

#include "tric/tric.h"

#include <stdio.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n  last error: %s\n", __FILE__, __LINE__,     \
                    #cond, tric_last_error());                                                     \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#define CHECK_MSG(status, want_status, want_msg)                                                   \
    do {                                                                                           \
        tric_status s_ = (status);                                                                 \
        if (s_ != (want_status) || strcmp(tric_last_error(), (want_msg)) != 0) {                   \
            fprintf(stderr, "%s:%d: expected %s \"%s\"\n               got %s \"%s\"\n", __FILE__, \
                    __LINE__, tric_status_name(want_status), (want_msg), tric_status_name(s_),     \
                    tric_last_error());                                                            \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#endif
