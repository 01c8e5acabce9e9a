/* tric: the command-line compiler, a thin shell over driver_compile.
 *
 *   tric FILE.tri -o FILE.ptx [options]      .tri source -> PTX with launch metadata
 *   tric FILE.tir --emit=ir --passes=all     tile IR text through passes
 *   tric FILE.tri --emit=c -o K.c            K.c (the PTX embedded, typed launchers) and K.h
 *
 * Exit status: 0 success, 1 errors in the input, 2 bad command line or unreadable files. */
#include "driver/driver.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: tric FILE.tri|FILE.tir [options]\n"
    "\n"
    "Compiles a Triton-style kernel (.tri) ahead of time to PTX, or prints a stage of it.\n"
    "\n"
    "options:\n"
    "  -o FILE               write the output to FILE ('-' = stdout, the default)\n"
    "  --emit=KIND           ast | ir | llvm | ptx (default ptx) | c (with -o FILE.c: the PTX\n"
    "                        embedded in FILE.c, a typed launcher per kernel declared in FILE.h)\n"
    "  --parse-only          with --emit=ast: the syntax tree before sema\n"
    "  --prefix-launchers    with --emit=c: name launchers FILE_KERNEL_launch (two builds of one\n"
    "                        kernel in one program)\n"
    "  --kernel=NAME         the kernel to compile when the file has several\n"
    "  --signature=SIG       run-time parameter types, Triton AOT form: \"*fp16:16,i32,i32:16\"\n"
    "                        (* pointer, :16 divisible by 16, :1 equal to 1; a bare value at a\n"
    "                        constexpr's position gives its value)\n"
    "  -D NAME=VALUE         a constexpr value: 128, 1.5, True, tl.float16\n"
    "  -I DIR                look for absolute imports (import pkg.mod) in DIR too, after the\n"
    "                        importing file's directory (repeatable, searched in order)\n"
    "  --num-warps=N         warps per program (default 4)\n"
    "  --num-stages=N        software-pipelining depth (default 3)\n"
    "  --arch=ARCH           sm_80 | sm_86 | sm_89 | sm_90 | sm_90a (default sm_90)\n"
    "  -O0 .. -O3            LLVM optimisation level (default -O3)\n"
    "  --no-fp-fusion        never fuse a float mul and add into one fma (Triton's\n"
    "                        enable_fp_fusion=False; by default they may fuse, as in Triton)\n"
    "  --passes=LIST         with --emit=ir: run passes first (all, or canonicalize,cse,dce,\n"
    "                        widen_fp8,axis_info,layouts,pipeline,swizzle,tma,shared_alloc)\n"
    "  --verify              verify the IR after every pass\n"
    "  --dump-ir-after=PASS  print the IR to stderr after PASS (or 'all')\n"
    "  --libdevice=PATH      libdevice.10.bc for math functions (default: the CUDA toolkit's)\n"
    "  --no-tma              on sm_90a, keep every copy on cp.async (no TMA; TRIC_NO_TMA=1)\n"
    "  --llvm-passes=PASSES  run this `opt -passes=` pipeline instead of -On's\n"
    "                        (TRIC_LLVM_PIPELINE)\n"
    "  --llvm-args=ARGS      LLVM options, space-separated, e.g. '-nvptx-no-f16-math'\n"
    "                        (TRIC_LLVM_ARGS)\n"
    "  --remarks             say why a loop is not pipelined or its copies stay cp.async\n"
    "                        (TRIC_PIPELINE_REMARKS=1)\n"
    "  --codegen-times       print where code generation spends its time (TRIC_CODEGEN_TIMES=1)\n"
    "  --help, --version\n";

/* Reads a whole file, NUL bytes included. */
static char *read_file(const char *path, size_t *len)
{
    FILE *fp = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!fp)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        size_t got = fread(buf + n, 1, cap - n, fp);
        n += got;
        if (n < cap)
            break;
        cap *= 2;
        buf = realloc(buf, cap + 1);
    }
    bool failed = ferror(fp);
    if (fp != stdin)
        fclose(fp);
    if (failed) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

/* Writes text to path; false with a message on failure. */
static bool write_file(const char *path, const StrBuf *text)
{
    FILE *out = fopen(path, "wb");
    bool ok = out && fwrite(text->data ? text->data : "", 1, text->len, out) == text->len;
    if (out && fclose(out))
        ok = false;
    if (!ok)
        fprintf(stderr, "tric: error: cannot write '%s': %s\n", path, strerror(errno));
    return ok;
}

static bool option_value(const char *arg, const char *name, const char **value)
{
    size_t n = strlen(name);
    if (strncmp(arg, name, n) || arg[n] != '=')
        return false;
    *value = arg + n + 1;
    return true;
}

static bool parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < 0 || v > 1 << 20)
        return false;
    *out = (int)v;
    return true;
}

static int usage_error(const char *fmt, const char *what)
{
    fprintf(stderr, "tric: error: ");
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\n(tric --help lists the options)\n");
    return 2;
}

int main(int argc, char **argv)
{
    CompileOptions opt = {.emit = EMIT_PTX, .opt_level = 3};
    const char *input = NULL, *output = "-";
    Define *defines = calloc((size_t)argc, sizeof *defines);
    int ndefines = 0;
    const char **include_dirs = calloc((size_t)argc, sizeof *include_dirs);
    int ninclude_dirs = 0;
    int status = 2;
    char *header_path = NULL; /* --emit=c: FILE.h beside FILE.c */
    /* The environment's switches (TRIC_NO_TMA, ...) are read here, at the edge, as defaults that
     * the flags below override; nothing below the driver reads the environment. */
    driver_env_switches(&opt);

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            status = 0;
            goto done;
        } else if (!strcmp(a, "--version")) {
            printf("tric %s (LLVM 19 NVPTX backend)\n", TRIC_VERSION);
            status = 0;
            goto done;
        } else if (!strcmp(a, "-o")) {
            if (++i == argc) {
                status = usage_error("%s needs a file name", "-o");
                goto done;
            }
            output = argv[i];
        } else if (option_value(a, "--emit", &v)) {
            if (!strcmp(v, "ast"))
                opt.emit = EMIT_AST;
            else if (!strcmp(v, "ir"))
                opt.emit = EMIT_IR;
            else if (!strcmp(v, "llvm"))
                opt.emit = EMIT_LLVM;
            else if (!strcmp(v, "ptx"))
                opt.emit = EMIT_PTX;
            else if (!strcmp(v, "c"))
                opt.emit = EMIT_C;
            else {
                status = usage_error("unknown --emit '%s' (ast, ir, llvm, ptx, c)", v);
                goto done;
            }
        } else if (!strcmp(a, "--prefix-launchers")) {
            opt.c_prefix_launchers = true;
        } else if (!strcmp(a, "--parse-only")) {
            opt.parse_only = true;
            opt.emit = EMIT_AST;
        } else if (option_value(a, "--kernel", &v)) {
            opt.spec.kernel_name = v;
        } else if (option_value(a, "--signature", &v)) {
            opt.spec.signature = v;
        } else if (!strncmp(a, "-D", 2)) {
            const char *def = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
            const char *eq = def ? strchr(def, '=') : NULL;
            if (!def || !eq || eq == def) {
                status = usage_error("-D needs NAME=VALUE, got '%s'", def ? def : "");
                goto done;
            }
            defines[ndefines].name = strndup(def, (size_t)(eq - def));
            defines[ndefines].value = eq + 1;
            ndefines++;
        } else if (!strncmp(a, "-I", 2)) {
            const char *dir = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
            if (!dir || !*dir) {
                status = usage_error("-I needs a directory%s", "");
                goto done;
            }
            include_dirs[ninclude_dirs++] = dir;
        } else if (option_value(a, "--num-warps", &v)) {
            if (!parse_int(v, &opt.num_warps) || opt.num_warps == 0) {
                status = usage_error("--num-warps needs a positive number, got '%s'", v);
                goto done;
            }
        } else if (option_value(a, "--num-stages", &v)) {
            if (!parse_int(v, &opt.num_stages) || opt.num_stages == 0) {
                status = usage_error("--num-stages needs a positive number, got '%s'", v);
                goto done;
            }
        } else if (option_value(a, "--arch", &v)) {
            int sm;
            bool specific;
            if (!driver_parse_arch(v, &sm, &specific)) {
                status = usage_error("unknown --arch '%s' (sm_80, sm_86, sm_89, sm_90, sm_90a)", v);
                goto done;
            }
            opt.arch = v;
        } else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3]) {
            opt.opt_level = a[2] - '0';
        } else if (option_value(a, "--passes", &v)) {
            opt.passes = v;
        } else if (!strcmp(a, "--verify")) {
            opt.verify = true;
        } else if (!strcmp(a, "--no-fp-fusion")) {
            opt.no_fp_fusion = true;
        } else if (option_value(a, "--dump-ir-after", &v)) {
            opt.dump_after = v;
        } else if (option_value(a, "--libdevice", &v)) {
            opt.libdevice_path = v;
        } else if (!strcmp(a, "--no-tma")) {
            opt.no_tma = true;
        } else if (option_value(a, "--llvm-passes", &v)) {
            opt.llvm_passes = v;
        } else if (option_value(a, "--llvm-args", &v)) {
            opt.llvm_args = v;
        } else if (!strcmp(a, "--remarks")) {
            opt.remarks = true;
        } else if (!strcmp(a, "--codegen-times")) {
            opt.codegen_times = true;
        } else if (a[0] == '-' && a[1]) {
            status = usage_error("unknown option '%s'", a);
            goto done;
        } else if (input) {
            status = usage_error("more than one input file ('%s')", a);
            goto done;
        } else {
            input = a;
        }
    }
    if (!input) {
        status = usage_error("%s", "no input file");
        goto done;
    }
    /* --parse-only stands for --emit=ast before sema; with another --emit (given after it) it
     * would print the syntax tree where PTX or IR was asked for. */
    if (opt.parse_only && opt.emit != EMIT_AST) {
        status =
            usage_error("%s goes with --emit=ast (the syntax tree before sema)", "--parse-only");
        goto done;
    }
    if (opt.c_prefix_launchers && opt.emit != EMIT_C) {
        status = usage_error("%s goes with --emit=c", "--prefix-launchers");
        goto done;
    }
    /* --emit=c writes two files: FILE.c and, beside it, FILE.h (which FILE.c includes). */
    if (opt.emit == EMIT_C) {
        size_t n = strlen(output);
        if (!strcmp(output, "-") || n < 3 || strcmp(output + n - 2, ".c") || output[n - 3] == '/') {
            status =
                usage_error("--emit=c writes FILE.c and FILE.h: give -o FILE.c, not '%s'", output);
            goto done;
        }
        header_path = strdup(output);
        header_path[n - 1] = 'h';
        opt.c_output = output;
    }
    opt.spec.defines = defines;
    opt.spec.ndefines = ndefines;
    opt.include_dirs = include_dirs;
    opt.ninclude_dirs = ninclude_dirs;

    size_t len = 0;
    char *text = read_file(input, &len);
    if (!text) {
        fprintf(stderr, "tric: error: cannot read '%s': %s\n", input, strerror(errno));
        goto done;
    }
    SrcFile file = {.name = strcmp(input, "-") ? input : "<stdin>", .text = text, .len = len};
    Diag diag = {.echo = true};
    CompileResult result;
    bool ok = driver_compile(&file, &opt, &result, &diag);
    if (ok) {
        FILE *out = strcmp(output, "-") ? fopen(output, "wb") : stdout;
        if (!out) {
            fprintf(stderr, "tric: error: cannot write '%s': %s\n", output, strerror(errno));
            status = 2;
        } else {
            fwrite(result.output.data ? result.output.data : "", 1, result.output.len, out);
            status = (out != stdout ? fclose(out) : fflush(out)) ? 2 : 0;
            if (status)
                fprintf(stderr, "tric: error: cannot write '%s': %s\n", output, strerror(errno));
        }
        if (status == 0 && header_path && !write_file(header_path, &result.header))
            status = 2;
    } else {
        if (diag.errors == 0) /* a failure must never be silent */
            fprintf(stderr, "tric: error: compilation failed\n");
        status = 1;
    }
    compile_result_free(&result);
    diag_free(&diag);
    free(text);
done:
    free(header_path);
    for (int i = 0; i < ndefines; i++)
        free((char *)defines[i].name);
    free(defines);
    free(include_dirs);
    return status;
}
