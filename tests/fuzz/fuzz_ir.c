/* fuzz_ir: libFuzzer target for the tile IR's text form (ir/parse.c, ir/verify.c, ir/print.c), the
 * input `tric FILE.tir` reads. The bytes are a .tir file: parse it; what parses is verified; what
 * verifies is printed, parsed back, verified and printed again, and the two texts must be equal
 * (the text form round-trips, docs/ir.md). Anything else -- a crash, a hang, an assertion, a leak,
 * a second print that differs or a printed text that no longer parses or verifies -- is a bug:
 * the last three abort with both texts on stderr. Every allocation lives in the run's arena or its
 * Diag, both freed here. Built and run like fuzz_frontend (scripts/test.sh), on the .tir files of
 * tests/lit/ir and tests/fuzz/corpus_ir. */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

static void fail(const char *what, const char *first, const char *second, const Diag *d)
{
    fprintf(stderr, "fuzz_ir: %s\n--- first print\n%s\n--- second\n%s\n--- diagnostics\n%s\n", what,
            first ? first : "", second ? second : "", d && d->text.data ? d->text.data : "");
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1); /* a private copy: the parser may assume a NUL after it */
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    SrcFile file = {"fuzz.tir", text, size};
    Arena *arena = arena_new();
    Diag diag = {0};
    IrFunc *f = ir_parse(&file, arena, &diag);
    if (f && ir_verify(f, "parse", &diag)) {
        StrBuf first = {0}, second = {0};
        ir_print(&first, f);
        SrcFile again = {"printed.tir", first.data ? first.data : "", first.len};
        Diag diag2 = {0};
        IrFunc *g = ir_parse(&again, arena, &diag2);
        if (!g)
            fail("the printed IR does not parse", first.data, NULL, &diag2);
        if (!ir_verify(g, "parse", &diag2))
            fail("the printed IR does not verify", first.data, NULL, &diag2);
        ir_print(&second, g);
        if (first.len != second.len || (first.len && memcmp(first.data, second.data, first.len)))
            fail("printing the parsed print differs", first.data, second.data, NULL);
        strbuf_free(&first);
        strbuf_free(&second);
        diag_free(&diag2);
    }
    diag_free(&diag);
    arena_free(arena);
    free(text);
    return 0;
}
