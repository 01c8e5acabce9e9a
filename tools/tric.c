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
    "  --tuned=FILE          with --emit=c: the configs an autotuned kernel's launcher takes per\n"
    "                        key value without tuning (the table FILE_write_tuned writes)\n"
    "  --kernel=NAME         the kernel to compile when the file has several\n"
    "  --signature=SIG       run-time parameter types, Triton AOT form: \"*fp16:16,i32,i32:16\"\n"
    "                        (* pointer, :16 divisible by 16, :1 equal to 1; a bare value at a\n"
    "                        constexpr's position gives its value)\n"
    "  -D NAME=VALUE         a constexpr value: 128, 1.5, True, tl.float16\n"
    "  -I DIR                look for absolute imports (import pkg.mod) in DIR too, after the\n"
    "                        importing file's directory (repeatable, searched in order)\n"
    "  --host-env=NAME=VALUE what os.environ.get(NAME) / os.getenv(NAME) give where autotune\n"
    "                        configs are built; --host-env=NAME takes tric's own value (tric\n"
    "                        reads no other variable of the file's: unset, the default decides)\n"
    "  --num-warps=N         warps per program (default 4)\n"
    "  --num-stages=N        software-pipelining depth (default 3)\n"
    "  --arch=ARCH           sm_80 | sm_86 | sm_89 | sm_90 | sm_90a (default sm_90)\n"
    "  -O0 .. -O3            LLVM optimisation level (default -O3)\n"
    "  --no-fp-fusion        never fuse a float mul and add into one fma (Triton's\n"
    "                        enable_fp_fusion=False; by default they may fuse, as in Triton)\n"
    "  --passes=LIST         with --emit=ir: run passes first (all, or a comma-separated list\n"
    "                        of docs/passes.md's, in the order all runs them:\n"
    "%PASSES%"
    "  --verify              verify the IR after every pass\n"
    "  --dump-ir-after=PASS  print the IR to stderr after PASS (or 'all')\n"
    "  --libdevice=PATH      libdevice.10.bc for math functions (default: the CUDA toolkit's)\n"
    "  --no-tma              on sm_90a, keep every copy on cp.async (no TMA; TRIC_NO_TMA=1)\n"
    "  --no-heavy-first      programs keep their launch order (by default, where loops run\n"
    "                        longer as program_id grows, the longest programs launch first)\n"
    "  --no-fuse-loops       loops as written (by default two that continue one range and\n"
    "                        differ only in arithmetic are pipelined as one, then split again)\n"
    "  --no-auto-warp-specialize  only a loop asking warp_specialize=True gets a producer\n"
    "                        (by default, on sm_90a, also attention's loop where it wins)\n"
    "  --pingpong            a warp-specialized persistent kernel with one consumer\n"
    "                        warpgroup gets two, taking its tiles in turn\n"
    "  --tma-store           on sm_90a, a 2-d tile store whose addresses a tensor map covers\n"
    "                        goes through shared memory and one TMA copy\n"
    "  --stream-k            a matmul-shaped kernel runs persistent (as many programs as the\n"
    "                        GPU holds at once), its last round of tiles split along K\n"
    "  --persistent          a grid kernel runs persistent: as many programs as the GPU holds\n"
    "                        at once walk the grid's tiles (a producer runs into the next)\n"
    "  --no-auto-persistent  only --persistent makes a grid persistent (by default, on\n"
    "                        sm_90a, attention's where its loop gets a producer)\n"
    "  --overlap-dots        on sm_90a, a loop's carried last wgmma (attention's p @ v)\n"
    "                        issued an iteration late, beside the next iteration's first\n"
    "  --stream-k=auto       an autotuned kernel's configs twice, as written and with\n"
    "                        --stream-k, for the tuner to choose (configs n..2n-1)\n"
    "  --deep-pipeline       num_stages raised, up to twice what was asked, while the kernel\n"
    "                        fits in shared memory (for launches of one program an SM)\n"
    "  --deep-pipeline=auto  an autotuned kernel's configs also with --deep-pipeline, for the\n"
    "                        tuner to choose (with --stream-k=auto too: after its twins,\n"
    "                        then the stream_k twins with --deep-pipeline as well)\n"
    "  --llvm-passes=PASSES  run this LLVM pass pipeline (`opt -passes=` text) instead of\n"
    "                        -On's (TRIC_LLVM_PIPELINE)\n"
    "  --llvm-args=ARGS      LLVM options, space-separated, e.g. '-nvptx-no-f16-math'\n"
    "                        (TRIC_LLVM_ARGS)\n"
    "  --remarks             say why a loop is not pipelined or its copies stay cp.async\n"
    "                        (TRIC_PIPELINE_REMARKS=1)\n"
    "  --codegen-times       print where code generation spends its time (TRIC_CODEGEN_TIMES=1)\n"
    "  --help, --version\n";

/* usage, its %PASSES% line the pass list itself (driver_pass_names), wrapped under the option
 * texts, so that a pass added to it is never left out here. */
static void print_usage(void)
{
    const char *at = strstr(usage, "%PASSES%");
    fwrite(usage, 1, (size_t)(at - usage), stdout);
    StrBuf names = {0};
    driver_pass_names(&names, ",");
    const char *indent = "                        ";
    size_t col = 0;
    for (const char *p = names.data; p && *p;) {
        size_t n = strcspn(p, ",");
        n += p[n] == ','; /* the comma stays on its name's line */
        if (col && col + n > 92 - strlen(indent)) {
            fputs("\n", stdout);
            col = 0;
        }
        if (!col)
            fputs(indent, stdout);
        fwrite(p, 1, n, stdout);
        col += n;
        p += n;
    }
    fputs(")\n", stdout);
    strbuf_free(&names);
    fputs(at + strlen("%PASSES%"), stdout);
}

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

/* The command line, read: the options for driver_compile and where its output goes. */
typedef struct {
    CompileOptions opt;
    const char *input, *output;
    Define *defines; /* -D, as many as argc at most */
    int ndefines;
    const char **include_dirs; /* -I, as many as argc at most */
    int ninclude_dirs;
    Define *host_env; /* --host-env, as many as argc at most */
    int nhost_env;
    char *header_path; /* --emit=c: FILE.h beside FILE.c */
} Args;

/* What parse_arg says: go on with the next argument, or exit with a status (0 after --help or
 * --version, 2 after a usage error). */
enum { ARG_NEXT = -1 };

/* -D NAME=VALUE or -DNAME=VALUE (argv[*i]; *i moves past a separate value). */
static int parse_define(Args *args, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char *def = a[2] ? a + 2 : (*i + 1 < argc ? argv[++*i] : NULL);
    const char *eq = def ? strchr(def, '=') : NULL;
    if (!def || !eq || eq == def)
        return usage_error("-D needs NAME=VALUE, got '%s'", def ? def : "");
    args->defines[args->ndefines].name = strndup(def, (size_t)(eq - def));
    args->defines[args->ndefines].value = eq + 1;
    args->ndefines++;
    return ARG_NEXT;
}

/* --host-env=NAME=VALUE, or --host-env=NAME for NAME's value in tric's own environment (left unset
 * when it has none): what the kernel file's host Python reads through os.environ.get and
 * os.getenv where its autotune configs are built. Read here, at the edge: the compiler reads no
 * environment. */
static int parse_host_env(Args *args, const char *v)
{
    const char *eq = strchr(v, '=');
    size_t n = eq ? (size_t)(eq - v) : strlen(v);
    if (n == 0)
        return usage_error("--host-env needs NAME=VALUE or NAME, got '%s'", v);
    const char *value = eq ? eq + 1 : NULL;
    if (!eq) {
        value = getenv(v);
        if (!value)
            return ARG_NEXT;
    }
    args->host_env[args->nhost_env].name = strndup(v, n);
    args->host_env[args->nhost_env].value = value;
    args->nhost_env++;
    return ARG_NEXT;
}

/* -I DIR or -IDIR. */
static int parse_include_dir(Args *args, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char *dir = a[2] ? a + 2 : (*i + 1 < argc ? argv[++*i] : NULL);
    if (!dir || !*dir)
        return usage_error("-I needs a directory%s", "");
    args->include_dirs[args->ninclude_dirs++] = dir;
    return ARG_NEXT;
}

static int parse_emit(CompileOptions *opt, const char *v)
{
    if (!strcmp(v, "ast"))
        opt->emit = EMIT_AST;
    else if (!strcmp(v, "ir"))
        opt->emit = EMIT_IR;
    else if (!strcmp(v, "llvm"))
        opt->emit = EMIT_LLVM;
    else if (!strcmp(v, "ptx"))
        opt->emit = EMIT_PTX;
    else if (!strcmp(v, "c"))
        opt->emit = EMIT_C;
    else
        return usage_error("unknown --emit '%s' (ast, ir, llvm, ptx, c)", v);
    return ARG_NEXT;
}

/* --num-warps=N, --num-stages=N: a positive count; error_fmt names the flag. */
static int parse_count(const char *v, int *out, const char *error_fmt)
{
    if (!parse_int(v, out) || *out == 0)
        return usage_error(error_fmt, v);
    return ARG_NEXT;
}

static int parse_arch(CompileOptions *opt, const char *v)
{
    int sm;
    bool specific;
    if (!driver_parse_arch(v, &sm, &specific))
        return usage_error("unknown --arch '%s' (sm_80, sm_86, sm_89, sm_90, sm_90a)", v);
    opt->arch = v;
    return ARG_NEXT;
}

/* The options that only set a field of CompileOptions: a switch, or a value taken as it is.
 * False when a is none of them. */
static bool parse_plain_option(CompileOptions *opt, const char *a)
{
    const char *v;
    if (!strcmp(a, "--prefix-launchers")) {
        opt->c_prefix_launchers = true;
    } else if (!strcmp(a, "--parse-only")) {
        opt->parse_only = true;
        opt->emit = EMIT_AST;
    } else if (option_value(a, "--tuned", &v)) {
        opt->c_tuned = v;
    } else if (option_value(a, "--kernel", &v)) {
        opt->spec.kernel_name = v;
    } else if (option_value(a, "--signature", &v)) {
        opt->spec.signature = v;
    } else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3]) {
        opt->opt_level = a[2] - '0';
    } else if (option_value(a, "--passes", &v)) {
        opt->passes = v;
    } else if (!strcmp(a, "--verify")) {
        opt->verify = true;
    } else if (!strcmp(a, "--no-fp-fusion")) {
        opt->no_fp_fusion = true;
    } else if (option_value(a, "--dump-ir-after", &v)) {
        opt->dump_after = v;
    } else if (option_value(a, "--libdevice", &v)) {
        opt->libdevice_path = v;
    } else if (!strcmp(a, "--no-tma")) {
        opt->no_tma = true;
    } else if (!strcmp(a, "--no-heavy-first")) {
        opt->no_heavy_first = true;
    } else if (!strcmp(a, "--no-fuse-loops")) {
        opt->no_fuse_loops = true;
    } else if (!strcmp(a, "--no-auto-warp-specialize")) {
        opt->no_auto_ws = true;
    } else if (!strcmp(a, "--pingpong")) {
        opt->pingpong = true;
    } else if (!strcmp(a, "--tma-store")) {
        opt->tma_store = true;
    } else if (!strcmp(a, "--stream-k") || !strcmp(a, "--stream-k=on")) {
        opt->stream_k = true;
    } else if (!strcmp(a, "--persistent")) {
        opt->persistent = true;
    } else if (!strcmp(a, "--no-auto-persistent")) {
        opt->no_auto_persistent = true;
    } else if (!strcmp(a, "--overlap-dots")) {
        opt->overlap_dots = true;
    } else if (!strcmp(a, "--stream-k=auto")) {
        opt->stream_k_twins = true;
    } else if (!strcmp(a, "--deep-pipeline") || !strcmp(a, "--deep-pipeline=on")) {
        opt->deep_pipeline = true;
    } else if (!strcmp(a, "--deep-pipeline=auto")) {
        opt->deep_pipeline_twins = true;
    } else if (option_value(a, "--llvm-passes", &v)) {
        opt->llvm_passes = v;
    } else if (option_value(a, "--llvm-args", &v)) {
        opt->llvm_args = v;
    } else if (!strcmp(a, "--remarks")) {
        opt->remarks = true;
    } else if (!strcmp(a, "--codegen-times")) {
        opt->codegen_times = true;
    } else {
        return false;
    }
    return true;
}

/* Reads argv[*i] (and the value after it, for -o, -D and -I, moving *i past it). */
static int parse_arg(Args *args, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
        print_usage();
        return 0;
    }
    if (!strcmp(a, "--version")) {
        printf("tric %s (LLVM 19 NVPTX backend)\n", TRIC_VERSION);
        return 0;
    }
    if (!strcmp(a, "-o")) {
        if (++*i == argc)
            return usage_error("%s needs a file name", "-o");
        args->output = argv[*i];
        return ARG_NEXT;
    }
    if (option_value(a, "--emit", &v))
        return parse_emit(&args->opt, v);
    if (!strncmp(a, "-D", 2))
        return parse_define(args, argc, argv, i);
    if (!strncmp(a, "-I", 2))
        return parse_include_dir(args, argc, argv, i);
    if (option_value(a, "--host-env", &v))
        return parse_host_env(args, v);
    if (option_value(a, "--num-warps", &v))
        return parse_count(v, &args->opt.num_warps,
                           "--num-warps needs a positive number, got '%s'");
    if (option_value(a, "--num-stages", &v))
        return parse_count(v, &args->opt.num_stages,
                           "--num-stages needs a positive number, got '%s'");
    if (option_value(a, "--arch", &v))
        return parse_arch(&args->opt, v);
    if (parse_plain_option(&args->opt, a))
        return ARG_NEXT;
    if (a[0] == '-' && a[1])
        return usage_error("unknown option '%s'", a);
    if (args->input)
        return usage_error("more than one input file ('%s')", a);
    args->input = a;
    return ARG_NEXT;
}

/* What no single argument shows: an input was given, the flags go together, and --emit=c's
 * header path. Hands the -D and -I lists to the options. */
static int check_args(Args *args)
{
    CompileOptions *opt = &args->opt;
    if (!args->input)
        return usage_error("%s", "no input file");
    /* --parse-only stands for --emit=ast before sema; with another --emit (given after it) it
     * would print the syntax tree where PTX or IR was asked for. */
    if (opt->parse_only && opt->emit != EMIT_AST)
        return usage_error("%s goes with --emit=ast (the syntax tree before sema)", "--parse-only");
    if (opt->c_prefix_launchers && opt->emit != EMIT_C)
        return usage_error("%s goes with --emit=c", "--prefix-launchers");
    if (opt->c_tuned && opt->emit != EMIT_C)
        return usage_error("%s goes with --emit=c", "--tuned");
    /* --emit=c writes two files: FILE.c and, beside it, FILE.h (which FILE.c includes). */
    if (opt->emit == EMIT_C) {
        const char *output = args->output;
        size_t n = strlen(output);
        if (!strcmp(output, "-") || n < 3 || strcmp(output + n - 2, ".c") || output[n - 3] == '/')
            return usage_error("--emit=c writes FILE.c and FILE.h: give -o FILE.c, not '%s'",
                               output);
        args->header_path = strdup(output);
        args->header_path[n - 1] = 'h';
        opt->c_output = output;
    }
    opt->spec.defines = args->defines;
    opt->spec.ndefines = args->ndefines;
    opt->include_dirs = args->include_dirs;
    opt->ninclude_dirs = args->ninclude_dirs;
    opt->spec.host_env = (HostEnv){.vars = args->host_env, .n = args->nhost_env};
    return ARG_NEXT;
}

/* Writes the compiled output to -o (stdout for '-') and --emit=c's header; 0, or 2 with a
 * message when a file cannot be written. */
static int write_result(const Args *args, const CompileResult *result)
{
    const char *output = args->output;
    int status;
    FILE *out = strcmp(output, "-") ? fopen(output, "wb") : stdout;
    if (!out) {
        fprintf(stderr, "tric: error: cannot write '%s': %s\n", output, strerror(errno));
        return 2;
    }
    fwrite(result->output.data ? result->output.data : "", 1, result->output.len, out);
    status = (out != stdout ? fclose(out) : fflush(out)) ? 2 : 0;
    if (status)
        fprintf(stderr, "tric: error: cannot write '%s': %s\n", output, strerror(errno));
    if (status == 0 && args->header_path && !write_file(args->header_path, &result->header))
        status = 2;
    return status;
}

/* Reads the input, compiles it and writes the result: the exit status. */
static int compile_input(const Args *args)
{
    size_t len = 0;
    char *text = read_file(args->input, &len);
    if (!text) {
        fprintf(stderr, "tric: error: cannot read '%s': %s\n", args->input, strerror(errno));
        return 2;
    }
    const char *name = strcmp(args->input, "-") ? args->input : "<stdin>";
    SrcFile file = {.name = name, .text = text, .len = len};
    Diag diag = {.echo = true};
    CompileResult result;
    int status;
    if (driver_compile(&file, &args->opt, &result, &diag)) {
        status = write_result(args, &result);
    } else {
        if (diag.errors == 0) /* a failure must never be silent */
            fprintf(stderr, "tric: error: compilation failed\n");
        status = 1;
    }
    compile_result_free(&result);
    diag_free(&diag);
    free(text);
    return status;
}

int main(int argc, char **argv)
{
    Args args = {
        .opt = {.emit = EMIT_PTX, .opt_level = 3},
        .output = "-",
        .defines = calloc((size_t)argc, sizeof *args.defines),
        .include_dirs = calloc((size_t)argc, sizeof *args.include_dirs),
        .host_env = calloc((size_t)argc, sizeof *args.host_env),
    };
    /* The environment's switches (TRIC_NO_TMA, ...) are read here, at the edge, as defaults that
     * the flags override; nothing below the driver reads the environment. */
    driver_env_switches(&args.opt);

    int status = ARG_NEXT;
    for (int i = 1; i < argc && status == ARG_NEXT; i++)
        status = parse_arg(&args, argc, argv, &i);
    if (status == ARG_NEXT)
        status = check_args(&args);
    if (status == ARG_NEXT)
        status = compile_input(&args);

    free(args.header_path);
    for (int i = 0; i < args.ndefines; i++)
        free((char *)args.defines[i].name);
    free(args.defines);
    free(args.include_dirs);
    for (int i = 0; i < args.nhost_env; i++)
        free((char *)args.host_env[i].name);
    free(args.host_env);
    return status;
}
