/* parse_smoke: parse_module on the seed kernels and on a few bad inputs, without the CLI.
 * Checks the shape of the module (functions, jit flags, docstring, globals), that the printer
 * runs, that cloning gives an identical print, and that bad inputs fail with a diagnostic. */
#include "frontend/frontend.h"

#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    *len = fread(buf, 1, (size_t)n, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

static Module *parse_text(const char *name, const char *text, size_t len, Arena *a, Diag *d)
{
    SrcFile *f = arena_alloc(a, sizeof *f);
    f->name = name;
    f->text = text;
    f->len = len;
    return parse_module(f, NULL, a, d);
}

static void check_example(const char *file, int nfuncs, int njit, bool print)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/examples/%s", TRIC_SOURCE_DIR, file);
    size_t len;
    char *text = read_file(path, &len);
    CHECK(text != NULL);
    if (!text)
        return;
    Arena *a = arena_new();
    Diag d = {0};
    Module *m = parse_text(file, text, len, a, &d);
    if (!m)
        fprintf(stderr, "%s", d.text.data ? d.text.data : "(no message)\n");
    CHECK(m != NULL);
    if (m) {
        CHECK(m->nfuncs == nfuncs);
        int jit = 0;
        for (int i = 0; i < m->nfuncs; i++)
            jit += m->funcs[i]->is_jit;
        CHECK(jit == njit);
        CHECK(m->nglobals == 2); /* import triton; import triton.language as tl */
        StrBuf out = {0}, again = {0};
        ast_print_module(&out, m);
        if (print)
            fputs(out.data, stdout);
        /* a clone prints the same */
        Module copy = *m;
        FuncDef **funcs = arena_alloc(a, (size_t)m->nfuncs * sizeof *funcs);
        for (int i = 0; i < m->nfuncs; i++)
            funcs[i] = ast_clone_func(a, m->funcs[i]);
        copy.funcs = funcs;
        ast_print_module(&again, &copy);
        CHECK(strcmp(out.data, again.data) == 0);
        strbuf_free(&out);
        strbuf_free(&again);
    }
    diag_free(&d);
    arena_free(a);
    free(text);
}

static void check_bad(const char *text, size_t len, const char *expected)
{
    Arena *a = arena_new();
    Diag d = {0};
    Module *m = parse_text("bad.tri", text, len, a, &d);
    CHECK(m == NULL);
    CHECK(d.errors > 0);
    if (!d.text.data || !strstr(d.text.data, expected)) {
        fprintf(stderr, "expected '%s' in:\n%s\n", expected, d.text.data ? d.text.data : "");
        failures++;
    }
    diag_free(&d);
    arena_free(a);
}

int main(int argc, char **argv)
{
    bool print = argc > 1 && !strcmp(argv[1], "-v");
    check_example("vector_add.tri", 1, 1, print);
    check_example("matmul.tri", 3, 2, print);

    Arena *a = arena_new();
    Diag d = {0};
    Module *m = parse_text("empty.tri", "", 0, a, &d);
    CHECK(m && m->nfuncs == 0 && m->nglobals == 0 && d.errors == 0);
    diag_free(&d);
    arena_free(a);

    check_bad("def f(:\n  pass\n", 15, "bad.tri:1:7: error: unexpected ':'");
    check_bad("x = 1 **= 2\n", 12, "'**=' is not supported");
    check_bad("if x:\npass\n", 11, "expected an indented block");
    check_bad("x = 'abc\n", 9, "unterminated string literal");
    check_bad("x = \x01\n", 6, "invalid character '\\x01'");
    check_bad("x = (1,\n", 8, "'(' was never closed");
    check_bad("\0\0\0", 3, "invalid character '\\x00'");
    if (failures)
        fprintf(stderr, "parse_smoke: %d failure(s)\n", failures);
    return failures ? 1 : 0;
}
