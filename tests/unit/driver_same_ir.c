/* driver_same_ir: the CPU interpreter and the PTX path start from the same tile IR. A PTX compile
 * hands back (CompileResult.ir) the IR as lowered, before the GPU passes ran on their own copy;
 * it must print exactly as `--emit=ir` does for the same kernel and options, and still run on the
 * interpreter afterwards (the passes must not have touched it). */
#include "driver/driver.h"

#include <stdlib.h>
#include <string.h>

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(buf);
        return NULL;
    }
    fclose(f);
    buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

static int check_kernel(const char *file, const char *kernel, const char *signature,
                        const Define *defines, int ndefines)
{
    size_t len;
    char *text = read_all(file, &len);
    if (!text) {
        printf("FAIL cannot read %s\n", file);
        return 1;
    }
    SrcFile src = {.name = file, .text = text, .len = len};
    CompileOptions opt = {.spec = {.kernel_name = kernel,
                                   .signature = signature,
                                   .defines = defines,
                                   .ndefines = ndefines},
                          .opt_level = 3};
    Diag diag = {0};
    CompileResult as_ir, as_ptx;
    opt.emit = EMIT_IR;
    bool ok_ir = driver_compile(&src, &opt, &as_ir, &diag);
    opt.emit = EMIT_PTX;
    bool ok_ptx = driver_compile(&src, &opt, &as_ptx, &diag);
    int failed = 0;
    if (!ok_ir || !ok_ptx) {
        printf("FAIL %s: does not compile:\n%s\n", kernel, diag.text.data ? diag.text.data : "");
        failed = 1;
    } else {
        StrBuf printed = {0};
        ir_print(&printed, as_ptx.ir);
        if (strcmp(printed.data, as_ir.output.data) != 0) {
            printf("FAIL %s: the IR behind the PTX differs from --emit=ir\n", kernel);
            failed = 1;
        } else if (!strstr(as_ptx.output.data, ".entry") ||
                   as_ptx.ir->layouts[0].kind != LAYOUT_NONE) {
            printf("FAIL %s: no PTX entry, or layouts leaked into the lowered IR\n", kernel);
            failed = 1;
        } else {
            /* No layout assigned anywhere in the lowered IR: the passes ran on a copy. */
            for (int v = 1; v < as_ptx.ir->nvalues; v++)
                if (as_ptx.ir->values[v].layout != 0) {
                    printf("FAIL %s: value %%%d of the lowered IR has a layout\n", kernel, v);
                    failed = 1;
                    break;
                }
        }
        strbuf_free(&printed);
        if (!failed)
            printf("ok   %s: interpreter and PTX start from the same IR\n", kernel);
    }
    compile_result_free(&as_ir);
    compile_result_free(&as_ptx);
    diag_free(&diag);
    free(text);
    return failed;
}

int main(void)
{
    int failed = 0;
    Define va[] = {{"BLOCK_SIZE", "1024"}};
    failed += check_kernel(TRIC_SOURCE_DIR "/examples/vector_add.tri", "vector_add_kernel",
                           "*fp32:16,*fp32:16,*fp32:16,i32", va, 1);
    Define mm1[] = {{"BLOCK_SIZE_M", "64"}, {"BLOCK_SIZE_N", "64"}, {"BLOCK_SIZE_K", "32"}};
    failed +=
        check_kernel(TRIC_SOURCE_DIR "/examples/matmul.tri", "matmul_kernel",
                     "*fp16:16,*fp16:16,*fp32:16,i32,i32,i32,i32,i32,i32,i32,i32,i32", mm1, 3);
    Define mm2[] = {{"BLOCK_SIZE_M", "64"}, {"BLOCK_SIZE_N", "64"}, {"BLOCK_SIZE_K", "32"},
                    {"GROUP_SIZE_M", "8"},  {"T_C", "tl.float16"},  {"T_ACC", "tl.float32"}};
    failed += check_kernel(
        TRIC_SOURCE_DIR "/examples/matmul.tri", "kernel_matmul",
        "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1", mm2, 6);
    return failed ? 1 : 0;
}
