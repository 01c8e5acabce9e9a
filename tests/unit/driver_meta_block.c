/* driver_meta_block: the PTX metadata block's lines (driver/meta.c, docs/ptx-metadata.md) on
 * text a program may hand tric_module_load_ptx: the block's markers count only as whole lines (a
 * value that contains "// tric.end" ends nothing, and "x// tric.begin" begins nothing); a line
 * without a value has an empty one, never the next line's; counts must be integers (what
 * fuzz_meta found: an empty `tric.config` once read the next line as its value); CRLF lines read
 * as LF ones. */
#include "driver/driver.h"

#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static const char head[] = "// tric.begin\n"
                           "// tric.kernel k\n"
                           "// tric.num_warps 4\n"
                           "// tric.threads 128\n"
                           "// tric.shared 0\n"
                           "// tric.params *fp32:16 i32\n";

/* kernel_meta_read of head + lines + end; its error text into err (cleared first). */
static bool read_block(const char *lines, KernelMeta *m, StrBuf *err)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s// tric.end\n", head, lines);
    strbuf_clear(err);
    return kernel_meta_read(text, m, err);
}

static void test_values(void)
{
    KernelMeta m;
    StrBuf err = {0};
    /* "// tric.end" inside a value is part of the value */
    CHECK(read_block("// tric.constexpr A=1 // tric.end B=2\n// tric.config C=3\n", &m, &err));
    CHECK(!strcmp(m.constexprs, "A=1 // tric.end B=2") && !strcmp(m.config, "C=3"));
    /* an empty value stays empty: the tune line's config is "", and the next line is read as its
     * own line */
    CHECK(read_block(
        "// tric.tune k key=n restore= reset=\n// tric.config\n// tric.constexpr X=1\n", &m, &err));
    CHECK(!strcmp(m.tune_name, "k") && !strcmp(m.config, "") && !strcmp(m.constexprs, "X=1"));
    CHECK(read_block("// tric.config \n// tric.constexpr Y=2\n", &m, &err));
    CHECK(!strcmp(m.config, "") && !strcmp(m.constexprs, "Y=2"));
    /* written and read back: the same text */
    StrBuf one = {0}, two = {0};
    kernel_meta_write(&one, &m);
    KernelMeta again;
    CHECK(kernel_meta_read(one.data, &again, &err));
    kernel_meta_write(&two, &again);
    CHECK(one.len == two.len && !memcmp(one.data, two.data, one.len));
    strbuf_free(&one);
    strbuf_free(&two);
    /* trailing '\r's are a CRLF file's, not the value's; a '\r' between names separates them
     * (what fuzz_meta found next: a value that lost one '\r' per read and write) */
    CHECK(read_block("// tric.kernel k2\r\r\n// tric.param_names a\rb\n", &m, &err));
    CHECK(!strcmp(m.name, "k2") && !strcmp(m.params[0].name, "a") &&
          !strcmp(m.params[1].name, "b"));
    /* a persistent kernel's workspace, written and read back */
    CHECK(read_block("// tric.persistent workspace=262144\n", &m, &err));
    CHECK(m.persistent && m.workspace_bytes == 262144);
    StrBuf sk = {0};
    kernel_meta_write(&sk, &m);
    CHECK(sk.data && strstr(sk.data, "// tric.persistent workspace=262144\n"));
    strbuf_free(&sk);
    CHECK(m.persistent_axes == 1); /* no axes=: the grid's x only */
    CHECK(read_block("", &m, &err) && !m.persistent);
    /* a persistent kernel taking a 2-D or 3-D grid: axes=, written back as read; axes=1 reads as
     * no axes= and is written without it */
    for (int axes = 1; axes <= 3; axes++) {
        char line[64];
        snprintf(line, sizeof line, "// tric.persistent workspace=512 axes=%d\n", axes);
        CHECK(read_block(line, &m, &err));
        CHECK(m.persistent && m.workspace_bytes == 512 && m.persistent_axes == axes);
        StrBuf written = {0};
        kernel_meta_write(&written, &m);
        CHECK(written.data &&
              strstr(written.data, axes == 1 ? "// tric.persistent workspace=512\n" : line));
        strbuf_free(&written);
    }
    /* a persistent kernel that reads no workspace: workspace=none, written back as read */
    CHECK(read_block("// tric.persistent workspace=none axes=2\n", &m, &err));
    CHECK(m.persistent && m.workspace_bytes == -1 && m.persistent_axes == 2);
    StrBuf none = {0};
    kernel_meta_write(&none, &m);
    CHECK(none.data && strstr(none.data, "// tric.persistent workspace=none axes=2\n"));
    strbuf_free(&none);
    /* num_stages with the count asked for */
    CHECK(read_block("// tric.num_stages 2 lowered_from=3\n", &m, &err));
    CHECK(m.num_stages == 2 && m.stages_lowered_from == 3 && m.stages_raised_from == 0);
    /* and raised (deep_pipeline), written back as it was read */
    CHECK(read_block("// tric.num_stages 8 raised_from=4\n", &m, &err));
    CHECK(m.num_stages == 8 && m.stages_raised_from == 4 && m.stages_lowered_from == 0);
    StrBuf raised = {0};
    kernel_meta_write(&raised, &m);
    CHECK(raised.data && strstr(raised.data, "// tric.num_stages 8 raised_from=4\n"));
    strbuf_free(&raised);
    /* markers are whole lines; a CRLF marker is one */
    CHECK(!kernel_meta_read("x// tric.begin\n// tric.kernel k\n// tric.threads 1\n// tric.end\n",
                            &m, &err));
    CHECK(kernel_meta_read(
        "// tric.begin\r\n// tric.kernel k\r\n// tric.threads 32\r\n// tric.end\r\n", &m, &err));
    CHECK(!strcmp(m.name, "k") && m.threads == 32);
    strbuf_free(&err);
}

static void expect_error(const char *lines, const char *message)
{
    KernelMeta m;
    StrBuf err = {0};
    CHECK(!read_block(lines, &m, &err));
    CHECK(err.data && !strcmp(err.data, message));
    if (!err.data || strcmp(err.data, message))
        fprintf(stderr, "for:\n%s  expected: %s\n  got:      %s\n", lines, message,
                err.data ? err.data : "(none)");
    strbuf_free(&err);
}

static void test_counts(void)
{
    expect_error("// tric.num_warps 4x\n",
                 "bad tric.num_warps line '4x' in the tric metadata block");
    expect_error("// tric.shared\n", "bad tric.shared line '' in the tric metadata block");
    expect_error("// tric.threads 99999999999\n",
                 "bad tric.threads line '99999999999' in the tric metadata block");
    expect_error("// tric.threads -1\n", "bad tric.threads line '-1' in the tric metadata block");
    expect_error("// tric.num_stages 2 lowered=3\n",
                 "bad tric.num_stages line '2 lowered=3' in the tric metadata block");
    expect_error("// tric.num_warps 4 lowered_from=8\n",
                 "bad tric.num_warps line '4 lowered_from=8' in the tric metadata block");
    expect_error("// tric.num_warps 4 raised_from=2\n",
                 "bad tric.num_warps line '4 raised_from=2' in the tric metadata block");
    expect_error("// tric.num_stages 8 raised_from=\n",
                 "bad tric.num_stages line '8 raised_from=' in the tric metadata block");
    expect_error("// tric.persistent 4096\n",
                 "bad tric.persistent line '4096' in the tric metadata block");
    expect_error("// tric.persistent workspace=-1\n",
                 "bad tric.persistent line 'workspace=-1' in the tric metadata block");
    expect_error("// tric.persistent workspace=nonE\n",
                 "bad tric.persistent line 'workspace=nonE' in the tric metadata block");
    expect_error("// tric.persistent workspace=none1\n",
                 "bad tric.persistent line 'workspace=none1' in the tric metadata block");
    expect_error("// tric.persistent workspace=\n",
                 "bad tric.persistent line 'workspace=' in the tric metadata block");
    expect_error("// tric.persistent workspace=64 axes=4\n",
                 "bad tric.persistent line 'workspace=64 axes=4' in the tric metadata block");
    expect_error("// tric.persistent workspace=64 axes=0\n",
                 "bad tric.persistent line 'workspace=64 axes=0' in the tric metadata block");
    expect_error("// tric.persistent workspace=64 axes=\n",
                 "bad tric.persistent line 'workspace=64 axes=' in the tric metadata block");
    expect_error("// tric.persistent workspace=64 x=2\n",
                 "bad tric.persistent line 'workspace=64 x=2' in the tric metadata block");
    /* the kernel line without a name */
    char text[512];
    snprintf(text, sizeof text, "// tric.begin\n// tric.kernel\n// tric.threads 32\n// tric.end\n");
    KernelMeta m;
    StrBuf err = {0};
    CHECK(!kernel_meta_read(text, &m, &err));
    CHECK(err.data && strstr(err.data, "lacks the kernel name"));
    strbuf_free(&err);
}

int main(void)
{
    test_values();
    test_counts();
    if (failures) {
        printf("FAIL: %d check(s)\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
