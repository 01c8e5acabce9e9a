/* diag.c: diagnostics in clang's form: "file:line:col: error: message", the source line, and a
 * caret under the column. Tabs in the source line are kept in the caret line so the caret lines
 * up; bytes that are not printable are shown as '?'. */
#include "support/support.h"

#include <string.h>

#define DEFAULT_MAX_ERRORS 20

static void flush_echo(Diag *d, size_t from)
{
    if (d->echo && d->text.len > from)
        fwrite(d->text.data + from, 1, d->text.len - from, stderr);
}

/* The text of line `line` (1-based) of file, without its newline. */
static bool find_line(const SrcFile *file, int line, const char **start, size_t *len)
{
    if (!file || !file->text || line < 1)
        return false;
    const char *p = file->text, *end = file->text + file->len;
    for (int l = 1; l < line; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return false;
        p = nl + 1;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    *start = p;
    *len = (size_t)((nl ? nl : end) - p);
    if (*len > 0 && p[*len - 1] == '\r')
        (*len)--;
    return true;
}

static void render_source_line(StrBuf *sb, SrcLoc loc)
{
    const char *line;
    size_t len;
    if (!find_line(loc.file, loc.line, &line, &len))
        return;
    enum { MAX_SHOWN = 240 };
    size_t shown = len > MAX_SHOWN ? MAX_SHOWN : len;
    for (size_t i = 0; i < shown; i++) {
        unsigned char c = (unsigned char)line[i];
        strbuf_putc(sb, (c == '\t' || (c >= 0x20 && c < 0x7f) || c >= 0x80) ? (char)c : '?');
    }
    if (shown < len)
        strbuf_append(sb, " ...");
    strbuf_putc(sb, '\n');
    size_t col = loc.col > 0 ? (size_t)loc.col - 1 : 0;
    if (col > shown)
        col = shown;
    for (size_t i = 0; i < col; i++)
        strbuf_putc(sb, line[i] == '\t' ? '\t' : ' ');
    strbuf_append(sb, "^\n");
}

static void render(Diag *d, SrcLoc loc, const char *severity, const char *fmt, va_list ap)
{
    size_t from = d->text.len;
    if (loc.file && loc.file->name) {
        if (loc.line > 0 && loc.col > 0)
            strbuf_printf(&d->text, "%s:%d:%d: ", loc.file->name, loc.line, loc.col);
        else if (loc.line > 0)
            strbuf_printf(&d->text, "%s:%d: ", loc.file->name, loc.line);
        else
            strbuf_printf(&d->text, "%s: ", loc.file->name);
    } else {
        strbuf_append(&d->text, "tric: ");
    }
    strbuf_printf(&d->text, "%s: ", severity);
    strbuf_vprintf(&d->text, fmt, ap);
    strbuf_putc(&d->text, '\n');
    render_source_line(&d->text, loc);
    flush_echo(d, from);
}

static bool over_limit(Diag *d)
{
    int max = d->max_errors > 0 ? d->max_errors : DEFAULT_MAX_ERRORS;
    d->errors++;
    if (d->errors == max + 1) {
        size_t from = d->text.len;
        strbuf_printf(&d->text, "tric: too many errors (%d); stopping here\n", max);
        flush_echo(d, from);
    }
    return d->errors > max;
}

void diag_verror(Diag *d, SrcLoc loc, const char *fmt, va_list ap)
{
    if (over_limit(d))
        return;
    render(d, loc, "error", fmt, ap);
}

void diag_error(Diag *d, SrcLoc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_verror(d, loc, fmt, ap);
    va_end(ap);
}

/* A diagnostic that is not an error (note, warning, remark): rendered unless the error limit was
 * passed already. */
static void render_unless_over(Diag *d, SrcLoc loc, const char *level, const char *fmt, va_list ap)
{
    int max = d->max_errors > 0 ? d->max_errors : DEFAULT_MAX_ERRORS;
    if (d->errors <= max)
        render(d, loc, level, fmt, ap);
}

void diag_note(Diag *d, SrcLoc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    render_unless_over(d, loc, "note", fmt, ap);
    va_end(ap);
}

void diag_warning(Diag *d, SrcLoc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    render_unless_over(d, loc, "warning", fmt, ap);
    va_end(ap);
}

void diag_remark(Diag *d, SrcLoc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    render_unless_over(d, loc, "remark", fmt, ap);
    va_end(ap);
}

void diag_plain_error(Diag *d, const char *fmt, ...)
{
    if (over_limit(d))
        return;
    va_list ap;
    va_start(ap, fmt);
    render(d, (SrcLoc){0}, "error", fmt, ap);
    va_end(ap);
}

void diag_internal(Diag *d, const char *file, int line, const char *fmt, ...)
{
    d->errors++;
    size_t from = d->text.len;
    strbuf_printf(&d->text, "tric: internal error at %s:%d: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    strbuf_vprintf(&d->text, fmt, ap);
    va_end(ap);
    strbuf_append(&d->text, "\n(this is a bug in tric, not in your kernel)\n");
    flush_echo(d, from);
}

void diag_free(Diag *d) { strbuf_free(&d->text); }

void diag_merge(Diag *d, const Diag *from)
{
    size_t start = d->text.len;
    if (from->text.len)
        strbuf_append_n(&d->text, from->text.data, from->text.len);
    d->errors += from->errors;
    flush_echo(d, start);
}
