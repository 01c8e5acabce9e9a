/* strbuf.c: growable malloc-backed strings for output that outlives an arena. */
#include "support/support.h"

#include <stdlib.h>
#include <string.h>

static void strbuf_reserve(StrBuf *sb, size_t extra)
{
    if (sb->len + extra + 1 <= sb->cap)
        return;
    size_t cap = sb->cap ? sb->cap : 256;
    while (cap < sb->len + extra + 1)
        cap *= 2;
    char *p = realloc(sb->data, cap);
    if (!p) {
        fprintf(stderr, "tric: out of memory (%zu bytes)\n", cap);
        abort();
    }
    sb->data = p;
    sb->cap = cap;
}

void strbuf_append_n(StrBuf *sb, const char *s, size_t n)
{
    strbuf_reserve(sb, n);
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
    if (n > 0) {
        strbuf_reserve(sb, (size_t)n);
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
    free(sb->data);
    sb->data = NULL;
    sb->len = sb->cap = 0;
}

char *strbuf_take(StrBuf *sb)
{
    char *p = sb->data;
    if (!p) {
        p = malloc(1);
        if (p)
            p[0] = 0;
    }
    sb->data = NULL;
    sb->len = sb->cap = 0;
    return p;
}
