/* strbuf.c: growable malloc-backed strings for output that outlives an arena. */
#include "support/support.h"

#include <stdlib.h>
#include <string.h>

static char empty_text[1];

/* Room for extra more bytes; false (the append is dropped, sb->failed set, the failure counted)
 * when memory ran out. */
static bool strbuf_reserve(StrBuf *sb, size_t extra)
{
    if (sb->len + extra + 1 <= sb->cap)
        return true;
    size_t cap = sb->cap ? sb->cap : 256;
    while (cap < sb->len + extra + 1)
        cap *= 2;
    /* cap 0 with data set: data is the shared empty text below, not malloc'd. */
    char *p = support_alloc_should_fail() ? NULL : realloc(sb->cap ? sb->data : NULL, cap);
    if (!p) {
        sb->failed = true;
        support_note_alloc_failure();
        /* Text is still NUL-terminated and data non-NULL, as after any append. */
        if (!sb->data)
            sb->data = empty_text;
        return false;
    }
    sb->data = p;
    sb->cap = cap;
    return true;
}

void strbuf_append_n(StrBuf *sb, const char *s, size_t n)
{
    if (!strbuf_reserve(sb, n))
        return;
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = 0;
}

void strbuf_append(StrBuf *sb, const char *s) { strbuf_append_n(sb, s, strlen(s)); }

void strbuf_putc(StrBuf *sb, char c) { strbuf_append_n(sb, &c, 1); }

void strbuf_vprintf(StrBuf *sb, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n > 0 && strbuf_reserve(sb, (size_t)n)) {
        vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap2);
        sb->len += (size_t)n;
    }
    va_end(ap2);
}

void strbuf_printf(StrBuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    strbuf_vprintf(sb, fmt, ap);
    va_end(ap);
}

void strbuf_clear(StrBuf *sb)
{
    sb->len = 0;
    if (sb->data)
        sb->data[0] = 0;
}

void strbuf_free(StrBuf *sb)
{
    if (sb->cap)
        free(sb->data);
    sb->data = NULL;
    sb->len = sb->cap = 0;
    sb->failed = false;
}

char *strbuf_take(StrBuf *sb)
{
    char *p = sb->cap ? sb->data : NULL; /* the shared empty text is never handed out */
    if (!p) {
        p = malloc(1);
        if (p)
            p[0] = 0;
    }
    sb->data = NULL;
    sb->len = sb->cap = 0;
    sb->failed = false;
    return p;
}

bool strbuf_read_file(StrBuf *sb, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        strbuf_append_n(sb, chunk, n);
    bool ok = !ferror(f);
    fclose(f);
    return ok;
}
