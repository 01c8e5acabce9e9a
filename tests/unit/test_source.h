/* test_source.h: the source files the IR-level unit tests compile, read from the source tree. */
#ifndef TRIC_UNIT_TEST_SOURCE_H
#define TRIC_UNIT_TEST_SOURCE_H

#include "support/support.h"

#include <stdio.h>
#include <stdlib.h>

/* TRIC_SOURCE_DIR/rel as a SrcFile named shown_name (the text malloc'd; the caller frees it or
 * keeps it to the end); text NULL, with the path printed, when it cannot be read. */
static inline SrcFile test_load_source(const char *rel, const char *shown_name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", TRIC_SOURCE_DIR, rel);
    FILE *fp = fopen(path, "rb");
    SrcFile f = {.name = shown_name};
    if (!fp) {
        printf("cannot open %s\n", path);
        return f;
    }
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    size_t got = fread(text, 1, (size_t)n, fp);
    text[got] = 0;
    fclose(fp);
    f.text = text;
    f.len = got;
    return f;
}

#endif
