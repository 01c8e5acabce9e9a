/* codegen_ptx_peephole.c: codegen_ptx_fuse_mad_wide on PTX text written by hand: which
 * mul.wide + add.s64 pairs become mad.wide and which must not (a product read again, also after an
 * inline asm block whose `}` sits at column 0, or in another function; predicated or separated
 * instructions), and that text before `from` is left alone. */
#include "codegen/codegen.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

static char *fused(const char *prefix, const char *ptx)
{
    StrBuf sb = {0};
    strbuf_append(&sb, prefix);
    size_t from = sb.len;
    strbuf_append(&sb, ptx);
    codegen_ptx_fuse_mad_wide(&sb, from);
    return strbuf_take(&sb);
}

static void expect(const char *what, const char *ptx, const char *want)
{
    char *got = fused("", ptx);
    CHECK(strcmp(got, want) == 0, "%s:\n--- got\n%s--- want\n%s", what, got, want);
    free(got);
}

int main(void)
{
    expect("a product read once is fused (either add operand)",
           ".visible .entry k(\n)\n{\n"
           "\tmul.wide.s32 \t%rd3, %r1, 2;\n"
           "\tadd.s64 \t%rd4, %rd1, %rd3;\n"
           "\tmul.wide.u32 \t%rd5, %r2, %r7;\n"
           "\tadd.s64 \t%rd6, %rd5, %rd2;\n"
           "\tld.global.b16 \t%rs1, [%rd4];\n"
           "\tst.global.b16 \t[%rd6], %rs1;\n"
           "\tret;\n}\n",
           ".visible .entry k(\n)\n{\n"
           "\tmad.wide.s32 \t%rd4, %r1, 2, %rd1;\n"
           "\tmad.wide.u32 \t%rd6, %r2, %r7, %rd2;\n"
           "\tld.global.b16 \t%rs1, [%rd4];\n"
           "\tst.global.b16 \t[%rd6], %rs1;\n"
           "\tret;\n}\n");

    const char *read_after_asm = ".visible .entry k(\n)\n{\n"
                                 "\tmul.wide.s32 \t%rd3, %r1, 2;\n"
                                 "\tadd.s64 \t%rd4, %rd1, %rd3;\n"
                                 "\t{\n.reg .pred p;\nsetp.ne.b32 p, %r9, 0;\n}\n"
                                 "\tadd.s64 \t%rd5, %rd2, %rd3;\n"
                                 "\tret;\n}\n";
    expect("a product read again after an inline asm block stays", read_after_asm, read_after_asm);

    const char *separated = ".visible .entry k(\n)\n{\n"
                            "\tmul.wide.s32 \t%rd3, %r1, 2;\n"
                            "\tadd.s32 \t%r1, %r1, 1;\n"
                            "\tadd.s64 \t%rd4, %rd1, %rd3;\n"
                            "\t@%p1 mul.wide.s32 \t%rd5, %r1, 2;\n"
                            "\tadd.s64 \t%rd6, %rd1, %rd5;\n"
                            "\tret;\n}\n";
    expect("separated or predicated pairs stay", separated, separated);

    /* Register names are per function: %rd3 read once in each of two kernels is fused in both;
     * read twice in the second one, it stays there only. */
    expect("functions count their registers apart",
           ".visible .entry a(\n)\n{\n"
           "\tmul.wide.s32 \t%rd3, %r1, 4;\n"
           "\tadd.s64 \t%rd4, %rd1, %rd3;\n"
           "\tret;\n}\n"
           ".visible .entry b(\n)\n{\n"
           "\tmul.wide.s32 \t%rd3, %r1, 4;\n"
           "\tadd.s64 \t%rd4, %rd1, %rd3;\n"
           "\tadd.s64 \t%rd5, %rd2, %rd3;\n"
           "\tret;\n}\n",
           ".visible .entry a(\n)\n{\n"
           "\tmad.wide.s32 \t%rd4, %r1, 4, %rd1;\n"
           "\tret;\n}\n"
           ".visible .entry b(\n)\n{\n"
           "\tmul.wide.s32 \t%rd3, %r1, 4;\n"
           "\tadd.s64 \t%rd4, %rd1, %rd3;\n"
           "\tadd.s64 \t%rd5, %rd2, %rd3;\n"
           "\tret;\n}\n");

    const char *prefix = "\tmul.wide.s32 \t%rd3, %r1, 2;\n\tadd.s64 \t%rd4, %rd1, %rd3;\n";
    char *got = fused(prefix, "");
    CHECK(strcmp(got, prefix) == 0, "text before `from` changed:\n%s", got);
    free(got);

    if (test_failures)
        return 1;
    printf("ok\n");
    return 0;
}
