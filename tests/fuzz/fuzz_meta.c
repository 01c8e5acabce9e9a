/* fuzz_meta: libFuzzer target for the PTX metadata block (driver/meta.c), which
 * tric_module_load_ptx reads from whatever PTX text a program hands it. The bytes are that text:
 * kernel_meta_read_all and kernel_meta_read either refuse it with a message or read it; every
 * block read is written back (kernel_meta_write), read again and written again, and the two
 * texts must be equal. A crash, a hang, an assertion, a leak, a refusal without a message, a
 * written block that no longer reads or that writes differently is a bug (the last three abort,
 * printing the texts). Run by scripts/test.sh on tests/fuzz/corpus_meta. */
#include "driver/driver.h"

#include <stdlib.h>
#include <string.h>

static void fail(const char *what, const char *first, const char *second, const char *error)
{
    fprintf(stderr, "fuzz_meta: %s\n--- first\n%s\n--- second\n%s\n--- error\n%s\n", what,
            first ? first : "", second ? second : "", error ? error : "");
    abort();
}

/* m written, read back and written again: the same text. */
static void round_trip(const KernelMeta *m)
{
    StrBuf first = {0}, second = {0}, error = {0};
    kernel_meta_write(&first, m);
    KernelMeta *again = malloc(sizeof *again);
    if (!again)
        return;
    if (!kernel_meta_read(first.data ? first.data : "", again, &error))
        fail("a written block does not read back", first.data, NULL, error.data);
    kernel_meta_write(&second, again);
    if (first.len != second.len || (first.len && memcmp(first.data, second.data, first.len)))
        fail("a block read back writes differently", first.data, second.data, NULL);
    free(again);
    strbuf_free(&first);
    strbuf_free(&second);
    strbuf_free(&error);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    StrBuf error = {0};
    KernelMeta *all = NULL;
    int n = kernel_meta_read_all(text, &all, &error);
    if (n < 0 && !error.len)
        fail("kernel_meta_read_all refused without a message", text, NULL, NULL);
    for (int i = 0; i < n; i++)
        round_trip(&all[i]);
    free(all);
    strbuf_free(&error);
    KernelMeta *one = malloc(sizeof *one);
    if (one) {
        StrBuf error1 = {0};
        if (kernel_meta_read(text, one, &error1))
            round_trip(one);
        else if (!error1.len)
            fail("kernel_meta_read refused without a message", text, NULL, NULL);
        strbuf_free(&error1);
        free(one);
    }
    free(text);
    return 0;
}
