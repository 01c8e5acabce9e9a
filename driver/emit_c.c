/* emit_c.c: `tric --emit=c -o K.c`, the kernels of a file as C source for a host program, the way
 * Triton's AOT compiler (triton/tools/compile.py) writes a kernel as C for CUDA: the PTX embedded
 * as bytes, and per kernel one launch function whose parameters are the kernel's run-time
 * parameters with C types. K.h declares them (docs/cli.md "--emit=c", docs/runtime.md "Generated
 * launchers").
 *
 * The generated code calls only the public runtime API of include/tric/tric.h (it loads the PTX
 * with tric_module_load_ptx and launches with tric_launch, or tric_launch_ex from the _launch_ex
 * launchers, which take its options: a programmatic dependent launch), so it links against
 * libtric or the runtime library alone. It compiles as strict C11 (-std=c11 -Wall -Wextra
 * -pedantic -Werror): the PTX is a byte array, not a string literal (C11 5.2.4.1 only promises
 * 4095 characters of a literal). Loading is thread-safe through a C11 atomic_flag (7.17.8).
 *
 * An autotuned kernel's PTX holds a kernel per config, which the runtime loads as one tuned
 * kernel; its launcher carries the configs as a typed table for the caller's grid function
 * (Triton's grid = lambda META), and picks the config per key value: from the table --tuned
 * baked in, from the choices made in this process, else through tric_kernel_tune (the runtime's
 * memory, disk cache, or a tuning now). docs/runtime.md "Autotuned kernels".
 *
 * requires: a file that compiles to PTX (every kernel with its run-time parameters typed)
 * guarantees: one launcher per kernel of the PTX that is no config, and one per autotuned
 * kernel at its first config's place, in the order of the metadata blocks */
#include "driver/driver.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- names --------------------------------------------------------------------------------- */

/* A launcher argument's C name: a parameter name (under 64 characters in the metadata) and the
 * '_'s that make it free. */
enum { C_NAME_MAX = 72 };

/* "build/vector-add.c" -> "vector_add": the C identifier prefixing the generated functions
 * (characters outside [A-Za-z0-9_] become '_'; a leading digit gets "tric_"). Malloc'd. */
static char *emit_c_prefix(const char *c_path)
{
    const char *base = strrchr(c_path, '/');
    base = base ? base + 1 : c_path;
    size_t n = strlen(base);
    if (n >= 2 && !strcmp(base + n - 2, ".c"))
        n -= 2;
    StrBuf sb = {0};
    if (n == 0 || isdigit((unsigned char)base[0]))
        strbuf_append(&sb, "tric_");
    for (size_t i = 0; i < n; i++)
        strbuf_putc(&sb, isalnum((unsigned char)base[i]) ? base[i] : '_');
    return strbuf_take(&sb);
}

/* Identifiers a parameter may not take in the generated C: the C11 keywords (6.4.1), the macros
 * of the headers it includes that a Python name could spell, and the launcher's own names. */
static const char *const reserved_names[] = {
    "auto",     "break",       "case",   "char",     "const",    "continue", "default",  "do",
    "double",   "else",        "enum",   "extern",   "float",    "for",      "goto",     "if",
    "inline",   "int",         "long",   "register", "restrict", "return",   "short",    "signed",
    "sizeof",   "static",      "struct", "switch",   "typedef",  "union",    "unsigned", "void",
    "volatile", "while",       "bool",   "true",     "false",    "NULL",     "stream",   "grid",
    "kernel",   "launch_args", "status", "grid_ctx", "chosen",   "key",      "options",
};

static bool is_reserved(const char *name)
{
    for (size_t i = 0; i < sizeof reserved_names / sizeof reserved_names[0]; i++)
        if (!strcmp(name, reserved_names[i]))
            return true;
    return false;
}

static bool name_is_free(const char *name, const char *prefix, char (*taken)[C_NAME_MAX],
                         int ntaken)
{
    if (is_reserved(name))
        return false;
    /* tric_* and TRIC_* are the runtime's functions and macros; PREFIX_* the generated ones. */
    size_t pn = strlen(prefix);
    if (!strncmp(name, "tric_", 5) || !strncmp(name, "TRIC_", 5) ||
        (!strncmp(name, prefix, pn) && name[pn] == '_'))
        return false;
    for (int i = 0; i < ntaken; i++)
        if (!strcmp(name, taken[i]))
            return false;
    return true;
}

/* The C name of each launcher argument: the parameter's own ("_" or missing: argN), with '_'
 * appended until it is free. */
static void param_c_names(const KernelMeta *m, const char *prefix, char (*names)[C_NAME_MAX])
{
    for (int i = 0; i < m->nparams; i++) {
        const char *given = m->params[i].name;
        if (given[0] && strcmp(given, "_"))
            snprintf(names[i], sizeof names[i], "%s", given);
        else
            snprintf(names[i], sizeof names[i], "arg%d", i);
        size_t n = strlen(names[i]);
        while (!name_is_free(names[i], prefix, names, i) && n + 1 < sizeof names[i]) {
            names[i][n++] = '_';
            names[i][n] = 0;
        }
    }
}

/* ---- parameters ------------------------------------------------------------------------------ */

/* A ':1' integer was compiled for the value 1 (Triton's equal_to_1): like a constexpr, it is no
 * launcher argument; the launcher passes the 1 itself. */
static bool param_is_fixed(const KernelParamMeta *p) { return p->equal_to_1 && !p->type.is_ptr; }

/* The launcher argument's C type: a tric_buffer for a pointer (as TRIC_ARG_BUF passes it), the
 * <stdint.h> type of an int, float for fp16/bf16/fp32 (the runtime rounds to the parameter's
 * type, as for TRIC_ARG_F32), double for fp64. */
static const char *param_c_type(const KernelParamMeta *p)
{
    if (p->type.is_ptr)
        return "tric_buffer";
    switch (p->type.dtype) {
    case DT_I1: return "bool";
    case DT_I8: return "int8_t";
    case DT_I16: return "int16_t";
    case DT_I32: return "int32_t";
    case DT_I64: return "int64_t";
    case DT_U8: return "uint8_t";
    case DT_U16: return "uint16_t";
    case DT_U32: return "uint32_t";
    case DT_U64: return "uint64_t";
    case DT_F16:
    case DT_BF16:
    case DT_F32: return "float";
    case DT_F64: return "double";
    case DT_F8E4NV: /* fp8 comes only behind pointers: sema refuses scalar fp8 parameters */
    case DT_F8E5:
    case DT_COUNT: break;
    }
    return "int32_t";
}

/* The tric_arg an argument becomes (tric.h: "i1..i32/u8..u32 take I32, i64/u64 take I64"). */
static void param_arg(StrBuf *out, const KernelParamMeta *p, const char *name)
{
    if (p->type.is_ptr) {
        strbuf_printf(out, "TRIC_ARG_BUF(%s)", name);
        return;
    }
    const char *value = param_is_fixed(p) ? "1" : name;
    switch (p->type.dtype) {
    case DT_I64: strbuf_printf(out, "TRIC_ARG_I64(%s)", value); break;
    case DT_U64: strbuf_printf(out, "TRIC_ARG_I64((int64_t)%s)", value); break;
    case DT_F16:
    case DT_BF16:
    case DT_F32: strbuf_printf(out, "TRIC_ARG_F32(%s)", value); break;
    case DT_F64: strbuf_printf(out, "TRIC_ARG_F64(%s)", value); break;
    case DT_U32: strbuf_printf(out, "TRIC_ARG_I32((int32_t)%s)", value); break;
    default: strbuf_printf(out, "TRIC_ARG_I32(%s)", value); break;
    }
}

/* "*fp32:16", as the metadata and --signature write it. */
static void param_sig(StrBuf *out, const KernelParamMeta *p)
{
    strbuf_printf(out, "%s%s", p->type.is_ptr ? "*" : "", dtype_sig_name(p->type.dtype));
    if (p->equal_to_1)
        strbuf_append(out, ":1");
    else if (p->divisibility > 1)
        strbuf_printf(out, ":%d", p->divisibility);
}

/* Does the launcher check a divisibility hint for this argument? Ints and pointers only. */
static bool param_has_check(const KernelParamMeta *p)
{
    return !param_is_fixed(p) && p->divisibility > 1 &&
           (p->type.is_ptr || (dtype_is_int(p->type.dtype) && p->type.dtype != DT_I1));
}

/* Appends tmpl with each $X replaced by vars[X - 'A'] (X an upper-case letter whose entry is
 * set; any other '$' is copied). */
static void put_vars(StrBuf *out, const char *tmpl, const char *const vars[26])
{
    for (const char *p = tmpl; *p; p++) {
        if (p[0] == '$' && p[1] >= 'A' && p[1] <= 'Z' && vars[p[1] - 'A']) {
            strbuf_append(out, vars[p[1] - 'A']);
            p++;
        } else {
            strbuf_putc(out, *p);
        }
    }
}

/* Appends tmpl with $P replaced by the prefix and $N by the kernel count. */
static void put_template(StrBuf *out, const char *tmpl, const char *prefix, int n)
{
    char count[16];
    snprintf(count, sizeof count, "%d", n);
    const char *vars[26] = {0};
    vars['P' - 'A'] = prefix;
    vars['N' - 'A'] = count;
    put_vars(out, tmpl, vars);
}

/* Appends text as comment lines of at most 100 columns where it can, broken after a ',' or ';'
 * (list items stay whole): the first line after lead, the others after " *     ". */
static void put_wrapped(StrBuf *out, const char *lead, const char *text)
{
    size_t col = strlen(lead);
    strbuf_append(out, lead);
    for (const char *p = text; *p;) {
        /* the next item: up to and including the next ", " or "; " */
        const char *q = p;
        while (*q && !((q[0] == ',' || q[0] == ';') && q[1] == ' '))
            q++;
        size_t item = (size_t)(q - p) + (*q ? 1 : 0);
        if (col + item > 100 && col > 8) {
            strbuf_append(out, "\n *     ");
            col = 8;
        } else if (p != text) {
            strbuf_putc(out, ' ');
            col++;
        }
        strbuf_append_n(out, p, item);
        col += item;
        p += item;
        if (*p == ' ')
            p++;
    }
    strbuf_putc(out, '\n');
}

/* ---- the launchers --------------------------------------------------------------------------- */

#define EMIT_C_MAX_KEY 16 /* the runtime's limit on an autotune key (runtime/tune.c) */

/* A key value the tuned launcher chose a config for ahead of time (--tuned=FILE). */
typedef struct TunedChoice {
    int64_t key[EMIT_C_MAX_KEY];
    int config;
} TunedChoice;

/* What one launcher stands for: one kernel of the PTX, or an autotuned kernel -- the PTX's
 * kernels whose metadata names it in "tric.tune", one per config, in the order tric_kernel_config
 * numbers them (runtime/tune.c rt_tune_groups) -- launched as one. */
typedef struct Launcher {
    const char *name;       /* the kernel's; for a tuned kernel its own, not a config's */
    const char *c_name;     /* "" or the --prefix-launchers prefix, then name */
    const KernelMeta *meta; /* the kernel, or the tuned kernel's first config */
    char (*names)[C_NAME_MAX];
    /* tuned kernels only (nconfigs 0 otherwise): */
    const KernelMeta **configs;
    int nconfigs;
    int key[EMIT_C_MAX_KEY], nkey; /* parameter indices of the autotune key */
    char (*members)[C_NAME_MAX];   /* the integer constexprs every config has, as C names */
    const char **member_names;     /* ... as the kernel names them */
    int nmembers;
    TunedChoice *choices; /* --tuned's entries for this kernel */
    int nchoices;
} Launcher;

static bool launcher_is_tuned(const Launcher *l) { return l->nconfigs > 0; }

/* The signature line "NAME(a: *fp32:16, n: i32)" of a launcher's comment. */
static void signature_doc(StrBuf *out, const Launcher *l)
{
    const KernelMeta *m = l->meta;
    StrBuf text = {0};
    strbuf_printf(&text, "%s(", l->name);
    for (int i = 0; i < m->nparams; i++) {
        strbuf_printf(&text, "%s%s: ", i ? ", " : "", l->names[i]);
        param_sig(&text, &m->params[i]);
    }
    strbuf_putc(&text, ')');
    put_wrapped(out, "/* ", text.data);
    strbuf_free(&text);
}

/* The entry "NAME=VALUE" of a list ("A=1 B=2", sep ' ', or a config's "A=1, num_warps=4", sep
 * ','), name given by its first nlen characters: its value's start, or NULL when absent. */
static const char *list_value(const char *list, char sep, const char *name, size_t nlen)
{
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == sep)
            p++;
        size_t len = strcspn(p, sep == ' ' ? " " : ", ");
        if (len > nlen && p[nlen] == '=' && !strncmp(p, name, nlen))
            return p + nlen + 1;
        p += len;
    }
    return NULL;
}

/* "A=1 B=2" as " A=1, B=2" after text; for a tuned kernel only the values no config sets. */
static void constexprs_doc(StrBuf *text, const Launcher *l)
{
    bool first = true;
    for (const char *p = l->meta->constexprs; *p;) {
        size_t len = strcspn(p, " ");
        if (!launcher_is_tuned(l) || !list_value(l->configs[0]->config, ',', p, strcspn(p, "="))) {
            strbuf_append(text, first ? " " : ", ");
            strbuf_append_n(text, p, len);
            first = false;
        }
        p += len;
        p += *p == ' ';
    }
}

/* ---- the header ------------------------------------------------------------------------------ */

/* "tric_status FN(LEAD, the run-time parameters..., TRAIL)": fn the function's name, lead the
 * parameters before the kernel's (", "-separated), trail the one after them (or NULL). Lines
 * break before a parameter that would pass column 100, aligned under the first. */
static void launcher_prototype(StrBuf *out, const char *fn, const char *lead, const KernelMeta *m,
                               char (*names)[C_NAME_MAX], const char *trail)
{
    StrBuf line = {0};
    strbuf_printf(out, "tric_status %s(", fn);
    size_t indent = strlen(fn) + strlen("tric_status (");
    size_t col = indent;
    bool first = true;
    for (int i = -1; i <= m->nparams; i++) {
        strbuf_clear(&line);
        if (i < 0) {
            /* the lead's parameters, one by one */
            for (const char *p = lead; *p;) {
                size_t len = strcspn(p, ",");
                strbuf_clear(&line);
                strbuf_append_n(&line, p, len);
                if (!first && col + 2 + line.len + 2 > 100) {
                    strbuf_printf(out, ",\n%*s", (int)indent, "");
                    col = indent;
                } else if (!first) {
                    strbuf_append(out, ", ");
                    col += 2;
                }
                strbuf_append(out, line.data);
                col += line.len;
                first = false;
                p += len;
                p += strspn(p, ", ");
            }
            continue;
        }
        if (i < m->nparams && param_is_fixed(&m->params[i]))
            continue;
        if (i == m->nparams && !trail)
            break;
        if (i < m->nparams)
            strbuf_printf(&line, "%s %s", param_c_type(&m->params[i]), names[i]);
        else
            strbuf_append(&line, trail);
        if (col + 2 + line.len + 2 > 100) {
            strbuf_printf(out, ",\n%*s", (int)indent, "");
            col = indent;
        } else {
            strbuf_append(out, ", ");
            col += 2;
        }
        strbuf_append(out, line.data);
        col += line.len;
    }
    strbuf_putc(out, ')');
    strbuf_free(&line);
}

static void kernel_doc(StrBuf *out, const Launcher *l)
{
    const KernelMeta *m = l->meta;
    char(*names)[C_NAME_MAX] = l->names;
    signature_doc(out, l);
    StrBuf text = {0};
    if (launcher_is_tuned(l)) {
        strbuf_printf(&text, "autotuned over %d configs (%s_configs), key", l->nconfigs, l->c_name);
        for (int i = 0; i < l->nkey; i++)
            strbuf_printf(&text, "%s %s", i ? "," : "", names[l->key[i]]);
        if (l->nkey == 0)
            strbuf_append(&text, " (none: one tuning)");
    } else {
        strbuf_printf(&text, "%d threads per program (%d warps), %d bytes of shared memory",
                      m->threads, m->num_warps, m->shared_bytes);
    }
    StrBuf values = {0};
    constexprs_doc(&values, l);
    if (values.len)
        strbuf_printf(&text, ";%s%s", values.data, launcher_is_tuned(l) ? " in every config" : "");
    strbuf_free(&values);
    put_wrapped(out, " *   ", text.data);
    StrBuf fixed = {0}, checked = {0};
    for (int i = 0; i < m->nparams; i++) {
        if (param_is_fixed(&m->params[i]))
            strbuf_printf(&fixed, "%s%s", fixed.len ? ", " : "", names[i]);
        else if (param_has_check(&m->params[i]))
            strbuf_printf(&checked, "%s%s %% %d == 0", checked.len ? ", " : "", names[i],
                          m->params[i].divisibility);
    }
    if (fixed.len) {
        strbuf_clear(&text);
        strbuf_printf(&text, "compiled for %s = 1: no argument%s, the launcher passes 1",
                      fixed.data, strchr(fixed.data, ',') ? "s" : "");
        put_wrapped(out, " *   ", text.data);
    }
    if (checked.len) {
        strbuf_clear(&text);
        strbuf_printf(&text, "checked before the launch (address or value): %s", checked.data);
        put_wrapped(out, " *   ", text.data);
    }
    if (launcher_is_tuned(l)) {
        strbuf_clear(&text);
        if (l->nchoices)
            strbuf_printf(&text,
                          "tuned ahead of time for %d key value%s (--tuned); any other tunes at "
                          "its first launch",
                          l->nchoices, l->nchoices == 1 ? "" : "s");
        else
            strbuf_append(&text,
                          "each key value tunes at its first launch (--tuned: ahead of time)");
        put_wrapped(out, " *   ", text.data);
    }
    strbuf_append(out, " */\n");
    strbuf_free(&text);
    strbuf_free(&fixed);
    strbuf_free(&checked);
}

static const char header_template[] =
    " *\n"
    " * Link the .c file with libtric (or the tric runtime library alone); docs/runtime.md\n"
    " * \"Generated launchers\" has the details.\n"
    " *\n"
    " * $P_load(dev) loads the embedded PTX on dev, a cuda device, once per process; NULL opens\n"
    " * cuda:0 itself (TRIC_ERROR_NO_DEVICE without a GPU). Thread-safe. $P_unload() destroys\n"
    " * the module (and closes the device $P_load(NULL) opened); no launch may be running or\n"
    " * start meanwhile.\n"
    " *\n"
    " * $LKERNEL_launch(stream, grid, arguments...) checks the arguments against the hints the\n"
    " * kernel was compiled for (TRIC_ERROR_INVALID_ARGUMENT, naming the argument), loads the\n"
    " * module on the device of its buffers when nothing is loaded yet, and launches grid\n"
    " * programs asynchronously on stream (NULL: the device's default stream). A pointer\n"
    " * argument is a tric_buffer (the kernel gets the buffer's start); an fp16/bf16 scalar is\n"
    " * passed as a float. Constexprs, and ints compiled for the value 1 (':1'), are no\n"
    " * arguments. Errors are a tric_status; tric_last_error() says why.\n"
    " *\n"
    " * $LKERNEL_launch_ex(stream, grid, options, arguments...) is the same launch with\n"
    " * tric_launch_ex's options (NULL: none), a programmatic dependent launch say\n"
    " * (options->programmatic_dependent); options->grid_fn must be NULL. */\n"
    "#ifndef TRIC_GENERATED_$G_H\n"
    "#define TRIC_GENERATED_$G_H\n"
    "\n"
    "#include <stdbool.h>\n"
    "#include <stdint.h>\n"
    "\n"
    "#include <tric/tric.h>\n"
    "\n"
    "#ifdef __cplusplus\n"
    "extern \"C\" {\n"
    "#endif\n"
    "\n"
    "/* The PTX with its tric metadata block, NUL-terminated: what $P_load loads. */\n"
    "extern const char $P_ptx[];\n"
    "\n"
    "tric_status $P_load(tric_device dev);\n"
    "void $P_unload(void);\n"
    "/* The module and the device it is loaded on; NULL when not loaded. */\n"
    "tric_module $P_module(void);\n"
    "tric_device $P_device(void);\n";

/* The header's paragraph on autotuned launchers, when the module has one. */
static const char tuned_header_template[] =
    " *\n"
    " * An autotuned kernel (@triton.autotune) has every config's kernel in the PTX and one\n"
    " * launcher, $LKERNEL_launch(stream, grid, grid_ctx, arguments...): grid(meta, grid_ctx)\n"
    " * gives the grid for the config meta (Triton's `grid = lambda META: ...`). The config is\n"
    " * the one chosen ahead of time for the key's values (tric --tuned=FILE), else the one the\n"
    " * runtime chose: at the first launch with these key values it times every config on the\n"
    " * arguments (tric_kernel_tune), remembered in memory and in its disk cache; a key value\n"
    " * no table holds always tunes, never reuses a neighbour's config. $LKERNEL_tune(...)\n"
    " * chooses without launching (before a graph capture, say), and $P_write_tuned(path)\n"
    " * writes the choices made so far as the table --tuned reads. Its\n"
    " * $LKERNEL_launch_ex(stream, grid, grid_ctx, options, arguments...) launches the chosen\n"
    " * config with options; the trials of a tuning run without them.\n";

/* The config table's type, the grid function's, and the launcher and tuner of a tuned kernel. */
static void tuned_declarations(StrBuf *h, const Launcher *l)
{
    const char *k = l->c_name;
    strbuf_printf(
        h,
        "typedef struct %s_config {\n"
        "    /* the config as the PTX's tric.config writes it: \"BLOCK_SIZE=128, num_warps=4\" */\n"
        "    const char *text;\n",
        k);
    for (int i = 0; i < l->nmembers; i++)
        strbuf_printf(h, "    int64_t %s;\n", l->members[i]);
    strbuf_printf(
        h,
        "    int num_warps, num_stages;\n"
        "} %s_config;\n"
        "/* Every config, in the order the runtime numbers them (tric_kernel_config). */\n"
        "extern const %s_config %s_configs[%d];\n"
        "/* The grid for config meta; grid_ctx is the launcher's. */\n"
        "typedef tric_dim3 (*%s_grid_fn)(const %s_config *meta, void *grid_ctx);\n",
        k, k, k, l->nconfigs, k, k);
    StrBuf fn = {0}, lead = {0};
    strbuf_printf(&fn, "%s_launch", k);
    strbuf_printf(&lead, "tric_stream stream, %s_grid_fn grid, void *grid_ctx", k);
    launcher_prototype(h, fn.data, lead.data, l->meta, l->names, NULL);
    strbuf_append(
        h, ";\n/* The same launch with tric_launch_ex's options (options->grid_fn NULL). */\n");
    strbuf_clear(&fn);
    strbuf_printf(&fn, "%s_launch_ex", k);
    StrBuf lead_ex = {0};
    strbuf_printf(&lead_ex, "%s, const tric_launch_options *options", lead.data);
    launcher_prototype(h, fn.data, lead_ex.data, l->meta, l->names, NULL);
    strbuf_free(&lead_ex);
    strbuf_append(h, ";\n/* Chooses the config for these arguments (tuning when their key values "
                     "have none yet)\n"
                     " * without launching: its index into the configs. */\n");
    strbuf_clear(&fn);
    strbuf_printf(&fn, "%s_tune", k);
    launcher_prototype(h, fn.data, lead.data, l->meta, l->names, "int *chosen");
    strbuf_append(h, ";\n");
    strbuf_free(&fn);
    strbuf_free(&lead);
}

static void write_header(StrBuf *h, const char *prefix, const char *lprefix,
                         const char *header_name, const char *source_name, const char *arch,
                         const Launcher *launchers, int n)
{
    StrBuf guard = {0};
    for (const char *p = prefix; *p; p++)
        strbuf_putc(&guard, (char)toupper((unsigned char)*p));
    strbuf_printf(h,
                  "/* %s: typed launchers for the kernels of %s, written by\n"
                  " * tric %s --emit=c with the PTX for %s embedded in the .c file. Regenerate\n"
                  " * rather than edit.\n",
                  header_name, source_name, TRIC_VERSION, arch);
    bool any_tuned = false;
    for (int k = 0; k < n; k++)
        any_tuned |= launcher_is_tuned(&launchers[k]);
    const char *vars[26] = {0};
    vars['G' - 'A'] = guard.data;
    vars['L' - 'A'] = lprefix;
    vars['P' - 'A'] = prefix;
    /* The template's end (from "#ifndef") comes after the tuned paragraph. */
    const char *guard_start = strstr(header_template, "#ifndef");
    const char *doc_end = guard_start - strlen(" */\n");
    StrBuf tmpl = {0};
    strbuf_append_n(&tmpl, header_template, (size_t)(doc_end - header_template));
    if (any_tuned) {
        strbuf_putc(&tmpl, '\n');
        strbuf_append(&tmpl, tuned_header_template);
    }
    strbuf_append(&tmpl, doc_end);
    put_vars(h, tmpl.data, vars);
    strbuf_free(&tmpl);
    if (any_tuned)
        put_vars(
            h,
            "/* Writes the configs the tuned launchers chose so far (tuned in this process or\n"
            " * from the table they were generated with), one line per kernel and key value,\n"
            " * as tric --tuned=FILE reads them. TRIC_ERROR_IO when path cannot be written. */\n"
            "tric_status $P_write_tuned(const char *path);\n",
            vars);
    for (int k = 0; k < n; k++) {
        const Launcher *l = &launchers[k];
        strbuf_putc(h, '\n');
        kernel_doc(h, l);
        if (launcher_is_tuned(l)) {
            tuned_declarations(h, l);
            continue;
        }
        StrBuf fn = {0};
        strbuf_printf(&fn, "%s_launch", l->c_name);
        launcher_prototype(h, fn.data, "tric_stream stream, tric_dim3 grid", l->meta, l->names,
                           NULL);
        strbuf_append(h, ";\n");
        strbuf_append(&fn, "_ex");
        launcher_prototype(h, fn.data,
                           "tric_stream stream, tric_dim3 grid, const tric_launch_options *options",
                           l->meta, l->names, NULL);
        strbuf_free(&fn);
        strbuf_append(h, ";\n");
    }
    strbuf_printf(h,
                  "\n"
                  "#ifdef __cplusplus\n"
                  "}\n"
                  "#endif\n"
                  "\n"
                  "#endif /* TRIC_GENERATED_%s_H */\n",
                  guard.data);
    strbuf_free(&guard);
}

/* ---- the source ------------------------------------------------------------------------------ */

/* The PTX as a byte array, after a comment quoting the metadata blocks. */
static void write_ptx_bytes(StrBuf *c, const char *prefix, const char *ptx, size_t len,
                            const char *arch)
{
    strbuf_printf(c, "/* tric-embedded-ptx: %zu bytes of PTX for %s. Its metadata:\n", len, arch);
    for (const char *line = ptx; *line;) {
        size_t n = strcspn(line, "\n");
        if (n > 8 && !strncmp(line, "// tric.", 8) && strncmp(line, "// tric.begin", 13) &&
            strncmp(line, "// tric.end", 11)) {
            strbuf_append(c, " *   ");
            for (size_t i = 3; i < n; i++) /* never close the comment early */
                strbuf_putc(c, line[i] == '/' && line[i - 1] == '*' ? ' ' : line[i]);
            strbuf_putc(c, '\n');
        } else if (n >= 8 && !strncmp(line, ".version", 8)) {
            break;
        }
        line += n + (line[n] == '\n');
    }
    strbuf_printf(c, " */\nconst char %s_ptx[] = {", prefix);
    for (size_t i = 0; i <= len; i++) {
        unsigned char byte = i < len ? (unsigned char)ptx[i] : 0;
        strbuf_append(c, i % 16 == 0 ? "\n    " : " ");
        strbuf_printf(c, "0x%02x,", byte);
    }
    strbuf_append(c, "\n};\n");
}

static const char loader_template[] =
    "\n"
    "/* The loaded state. The lock (C11 7.17.8) orders loads and unloads; a launch reads its\n"
    " * kernel with one acquire load, so launches never wait for each other. */\n"
    "static atomic_flag $P_lock = ATOMIC_FLAG_INIT;\n"
    "static tric_device $P_device_loaded; /* the device the module is loaded on */\n"
    "static tric_device $P_device_owned;  /* opened by $P_load(NULL), closed by $P_unload */\n"
    "static tric_module $P_loaded;\n"
    "static _Atomic(tric_kernel) $P_kernels[$N];\n"
    "\n"
    "static void $P_lock_take(void)\n"
    "{\n"
    "    /* Held for one PTX load at most (milliseconds), once per process. */\n"
    "    while (atomic_flag_test_and_set_explicit(&$P_lock, memory_order_acquire))\n"
    "        ;\n"
    "}\n"
    "\n"
    "static void $P_lock_give(void)\n"
    "{\n"
    "    atomic_flag_clear_explicit(&$P_lock, memory_order_release);\n"
    "}\n"
    "\n"
    "tric_status $P_load(tric_device dev)\n"
    "{\n"
    "    tric_status status = TRIC_SUCCESS;\n"
    "    $P_lock_take();\n"
    "    if ($P_loaded) {\n"
    "        if (dev && dev != $P_device_loaded)\n"
    "            status = tric_set_error(TRIC_ERROR_INVALID_ARGUMENT,\n"
    "                                    \"$P_load: already loaded on %s; call $P_unload() \"\n"
    "                                    \"before loading on %s\",\n"
    "                                    tric_device_name($P_device_loaded),\n"
    "                                    tric_device_name(dev));\n"
    "        $P_lock_give();\n"
    "        return status;\n"
    "    }\n"
    "    tric_device owned = NULL;\n"
    "    if (!dev) {\n"
    "        status = tric_device_open(\"cuda:0\", &owned);\n"
    "        dev = owned;\n"
    "    }\n"
    "    tric_module module = NULL;\n"
    "    if (status == TRIC_SUCCESS)\n"
    "        status = tric_module_load_ptx(dev, $P_ptx, &module);\n"
    "    tric_kernel kernels[$N] = {NULL};\n"
    "    for (int i = 0; i < $N && status == TRIC_SUCCESS; i++)\n"
    "        status = tric_module_get_kernel(module, $P_kernel_names[i], &kernels[i]);\n"
    "    if (status == TRIC_SUCCESS) {\n"
    "        $P_device_loaded = dev;\n"
    "        $P_device_owned = owned;\n"
    "        $P_loaded = module;\n"
    "        for (int i = 0; i < $N; i++)\n"
    "            atomic_store_explicit(&$P_kernels[i], kernels[i], memory_order_release);\n"
    "    } else {\n"
    "        tric_module_destroy(module);\n"
    "        tric_device_close(owned);\n"
    "    }\n"
    "    $P_lock_give();\n"
    "    return status;\n"
    "}\n"
    "\n"
    "void $P_unload(void)\n"
    "{\n"
    "    $P_lock_take();\n"
    "    for (int i = 0; i < $N; i++)\n"
    "        atomic_store_explicit(&$P_kernels[i], NULL, memory_order_release);\n"
    "    tric_module_destroy($P_loaded);\n"
    "    tric_device_close($P_device_owned);\n"
    "    $P_loaded = NULL;\n"
    "    $P_device_loaded = NULL;\n"
    "    $P_device_owned = NULL;\n"
    "    $P_lock_give();\n"
    "}\n"
    "\n"
    "tric_module $P_module(void)\n"
    "{\n"
    "    $P_lock_take();\n"
    "    tric_module module = $P_loaded;\n"
    "    $P_lock_give();\n"
    "    return module;\n"
    "}\n"
    "\n"
    "tric_device $P_device(void)\n"
    "{\n"
    "    $P_lock_take();\n"
    "    tric_device dev = $P_device_loaded;\n"
    "    $P_lock_give();\n"
    "    return dev;\n"
    "}\n"
    "\n"
    "/* Kernel index of the module, loaded first when nothing is: on the device of buffer (an\n"
    " * argument of the launch), or on cuda:0 when the kernel has no pointer parameter. */\n"
    "static tric_status $P_get_kernel(int index, tric_buffer buffer, tric_kernel *out)\n"
    "{\n"
    "    *out = atomic_load_explicit(&$P_kernels[index], memory_order_acquire);\n"
    "    if (*out)\n"
    "        return TRIC_SUCCESS;\n"
    "    tric_status status = $P_load(tric_buffer_device(buffer));\n"
    "    *out = atomic_load_explicit(&$P_kernels[index], memory_order_acquire);\n"
    "    if (status == TRIC_SUCCESS && !*out)\n"
    "        status = tric_set_error(TRIC_ERROR_INVALID_ARGUMENT,\n"
    "                                \"$P: unloaded during a launch\");\n"
    "    return status;\n"
    "}\n";

static void write_loader(StrBuf *c, const char *prefix, const Launcher *launchers, int n)
{
    strbuf_printf(c, "\nstatic const char *const %s_kernel_names[%d] = {", prefix, n);
    for (int k = 0; k < n; k++)
        strbuf_printf(c, "%s\"%s\"", k ? ", " : "", launchers[k].name);
    strbuf_append(c, "};\n");
    put_template(c, loader_template, prefix, n);
}

/* One check per hinted argument, with a message naming it (the runtime would refuse the launch
 * too, by position; this says it by name, before anything is loaded); fn names the function. */
static void write_checks(StrBuf *c, const char *fn, const KernelMeta *m, char (*names)[C_NAME_MAX])
{
    for (int i = 0; i < m->nparams; i++) {
        const KernelParamMeta *p = &m->params[i];
        if (param_is_fixed(p))
            continue;
        StrBuf sig = {0};
        param_sig(&sig, p);
        if (p->type.is_ptr) {
            strbuf_printf(c,
                          "    if (!%s)\n"
                          "        return tric_set_error(TRIC_ERROR_INVALID_ARGUMENT,\n"
                          "                              \"%s: %s is NULL\");\n",
                          names[i], fn, names[i]);
        }
        if (param_has_check(p) && p->type.is_ptr) {
            strbuf_printf(
                c,
                "    if (tric_buffer_address(%s) %% %d != 0)\n"
                "        return tric_set_error(TRIC_ERROR_INVALID_ARGUMENT,\n"
                "                              \"%s: %s's address 0x%%llx is not \"\n"
                "                              \"divisible by %d (the kernel was compiled for \"\n"
                "                              \"%s: %s)\",\n"
                "                              (unsigned long long)tric_buffer_address(%s));\n",
                names[i], p->divisibility, fn, names[i], p->divisibility, names[i], sig.data,
                names[i]);
        } else if (param_has_check(p)) {
            bool is_signed = dtype_is_signed(p->type.dtype);
            strbuf_printf(
                c,
                "    if (%s %% %d != 0)\n"
                "        return tric_set_error(TRIC_ERROR_INVALID_ARGUMENT,\n"
                "                              \"%s: %s = %%%s is not divisible by %d \"\n"
                "                              \"(the kernel was compiled for %s: %s)\",\n"
                "                              (%s)%s);\n",
                names[i], p->divisibility, fn, names[i], is_signed ? "lld" : "llu", p->divisibility,
                names[i], sig.data, is_signed ? "long long" : "unsigned long long", names[i]);
        }
        strbuf_free(&sig);
    }
}

/* The check K_launch_ex makes first: its grid is its own argument, never options->grid_fn. */
static void write_options_check(StrBuf *c, const char *fn)
{
    strbuf_printf(
        c,
        "    if (options && options->grid_fn)\n"
        "        return tric_set_error(TRIC_ERROR_INVALID_ARGUMENT,\n"
        "                              \"%s: options->grid_fn is set; this launcher's \"\n"
        "                              \"grid is its grid argument\");\n",
        fn);
}

/* K_launch, or with_options K_launch_ex: the same launch with tric_launch_ex's options. */
static void write_launcher(StrBuf *c, const char *prefix, int index, const Launcher *l,
                           bool with_options)
{
    const KernelMeta *m = l->meta;
    char(*names)[C_NAME_MAX] = l->names;
    StrBuf fn = {0};
    strbuf_printf(&fn, "%s_launch%s", l->c_name, with_options ? "_ex" : "");
    strbuf_putc(c, '\n');
    launcher_prototype(c, fn.data,
                       with_options ? "tric_stream stream, tric_dim3 grid, "
                                      "const tric_launch_options *options"
                                    : "tric_stream stream, tric_dim3 grid",
                       m, names, NULL);
    strbuf_append(c, "\n{\n");
    if (with_options)
        write_options_check(c, fn.data);
    write_checks(c, fn.data, m, names);
    strbuf_free(&fn);
    const char *first_buffer = "NULL";
    for (int i = m->nparams - 1; i >= 0; i--)
        if (m->params[i].type.is_ptr)
            first_buffer = names[i];
    strbuf_printf(c,
                  "    tric_kernel kernel;\n"
                  "    tric_status status = %s_get_kernel(%d, %s, &kernel);\n"
                  "    if (status != TRIC_SUCCESS)\n"
                  "        return status;\n",
                  prefix, index, first_buffer);
    const char *launch = with_options ? "tric_launch_ex" : "tric_launch";
    const char *trail = with_options ? ", options" : "";
    if (m->nparams == 0) {
        strbuf_printf(c, "    return %s(kernel, grid, NULL, 0, stream%s);\n}\n", launch, trail);
        return;
    }
    strbuf_printf(c, "    const tric_arg launch_args[%d] = {\n", m->nparams);
    for (int i = 0; i < m->nparams; i++) {
        strbuf_append(c, "        ");
        param_arg(c, &m->params[i], names[i]);
        strbuf_append(c, ",\n");
    }
    strbuf_printf(c,
                  "    };\n"
                  "    return %s(kernel, grid, launch_args, %d, stream%s);\n"
                  "}\n",
                  launch, m->nparams, trail);
}

/* ---- the tuned launchers' code --------------------------------------------------------------- */

/* Shared by the tuned launchers of a module: the type of a choice (a key value and the config
 * chosen for it), its lookup, and the record of choices made at run time. $P the prefix, $E the
 * longest key's length (at least 1: C11 has no empty array). */
static const char choice_template[] =
    "\n"
    "/* A config chosen for a key's values: ahead of time (--tuned) or by a tuning here. */\n"
    "typedef struct $P_choice {\n"
    "    int64_t key[$E];\n"
    "    int config;\n"
    "} $P_choice;\n"
    "\n"
    "/* Choices made at run time, per tuned kernel; past this many a key value is looked up in "
    "the\n"
    " * runtime (tric_kernel_tune, from its memory or disk cache) at every launch. */\n"
    "enum { $P_MAX_SEEN = 256 };\n"
    "\n"
    "/* The config table holds for key (nkey values), or -1: a key value it does not hold exactly\n"
    " * gets no neighbour's config. */\n"
    "static int $P_find_choice(const $P_choice *table, int n, int nkey, const int64_t *key)\n"
    "{\n"
    "    for (int i = 0; i < n; i++) {\n"
    "        int j = 0;\n"
    "        while (j < nkey && table[i].key[j] == key[j])\n"
    "            j++;\n"
    "        if (j == nkey)\n"
    "            return table[i].config;\n"
    "    }\n"
    "    return -1;\n"
    "}\n"
    "\n"
    "/* Adds a choice to seen (under the lock; launches read seen without it: the entry is "
    "written\n"
    " * before the count that shows it is published). */\n"
    "static void $P_remember(const int64_t *key, int nkey, int config, $P_choice *seen,\n"
    "                        atomic_int *nseen)\n"
    "{\n"
    "    $P_lock_take();\n"
    "    int n = atomic_load_explicit(nseen, memory_order_relaxed);\n"
    "    if (n < $P_MAX_SEEN && $P_find_choice(seen, n, nkey, key) < 0) {\n"
    "        for (int j = 0; j < nkey; j++)\n"
    "            seen[n].key[j] = key[j];\n"
    "        seen[n].config = config;\n"
    "        atomic_store_explicit(nseen, n + 1, memory_order_release);\n"
    "    }\n"
    "    $P_lock_give();\n"
    "}\n"
    "\n"
    "/* One line per choice of table: \"KERNEL M=512,N=512 config 3: BLOCK_SIZE_M=128, ...\". */\n"
    "static void $P_write_choices(FILE *file, const char *kernel, const char *const *key_names,\n"
    "                             int nkey, const $P_choice *table, int n,\n"
    "                             const char *const *config_texts)\n"
    "{\n"
    "    for (int i = 0; i < n; i++) {\n"
    "        fprintf(file, \"%s \", kernel);\n"
    "        for (int j = 0; j < nkey; j++)\n"
    "            fprintf(file, \"%s%s=%lld\", j ? \",\" : \"\", key_names[j], (long "
    "long)table[i].key[j]);\n"
    "        fprintf(file, \"%sconfig %d: %s\\n\", nkey ? \" \" : \"\", table[i].config,\n"
    "                config_texts[table[i].config]);\n"
    "    }\n"
    "}\n";

/* Per tuned kernel: the choices, the grid function's adapter, the dispatch, the table writer.
 * $P the module's prefix, $K the kernel's C name, $M its name, $I its index among the module's
 * kernels; $N configs; $A parameters; $D key parameters ($F: the key array's size, at least 1;
 * $Y their names as C strings); $B choices baked in ($C: their array's size, at least 1; $T
 * its initializer). */
static const char tuned_template[] =
    "\n"
    "/* The choices baked in (--tuned), then those made here (at most $P_MAX_SEEN). */\n"
    "static const $P_choice $K_baked[$C] = {$T};\n"
    "static $P_choice $K_seen[$P_MAX_SEEN];\n"
    "static atomic_int $K_nseen;\n"
    "static const char *const $K_key_names[$F] = {$Y};\n"
    "\n"
    "/* tric_kernel_tune's grid function: the caller's, given the config table's entry of the\n"
    " * config the runtime times. */\n"
    "typedef struct $K_grid_call {\n"
    "    $K_grid_fn grid;\n"
    "    void *grid_ctx;\n"
    "    tric_kernel tuned;\n"
    "} $K_grid_call;\n"
    "\n"
    "static tric_dim3 $K_grid_of(\n"
    "    tric_kernel config, const tric_arg *args, int nargs, void *user)\n"
    "{\n"
    "    (void)args;\n"
    "    (void)nargs;\n"
    "    const $K_grid_call *call = user;\n"
    "    for (int i = 0; i < $N; i++) {\n"
    "        tric_kernel k;\n"
    "        if (tric_kernel_config(call->tuned, i, &k) == TRIC_SUCCESS && k == config)\n"
    "            return call->grid(&$K_configs[i], call->grid_ctx);\n"
    "    }\n"
    "    return (tric_dim3){0, 0, 0}; /* not a config of ours: the runtime refuses the launch */\n"
    "}\n"
    "\n"
    "/* The config for key: baked in, chosen here before, or tuned now (by the runtime, on the\n"
    " * arguments; it keeps the choice in memory and in its disk cache). Launches it when launch,\n"
    " * with options (NULL: none; its trials never take them). */\n"
    "static tric_status $K_dispatch(\n"
    "    tric_stream stream, $K_grid_fn grid, void *grid_ctx, tric_buffer buffer,\n"
    "    const tric_arg *launch_args, const int64_t *key, bool launch,\n"
    "    const tric_launch_options *options, int *chosen)\n"
    "{\n"
    "    *chosen = -1;\n"
    "    if (!grid)\n"
    "        return tric_set_error(TRIC_ERROR_INVALID_ARGUMENT,\n"
    "                              \"$K: the grid function is NULL\");\n"
    "    /* An empty problem: nothing to run, nothing to tune for (the runtime's rule). */\n"
    "    tric_dim3 empty = grid(&$K_configs[0], grid_ctx);\n"
    "    if (empty.x == 0 || empty.y == 0 || empty.z == 0)\n"
    "        return TRIC_SUCCESS;\n"
    "    tric_kernel tuned;\n"
    "    tric_status status = $P_get_kernel($I, buffer, &tuned);\n"
    "    if (status != TRIC_SUCCESS)\n"
    "        return status;\n"
    "    int config = $P_find_choice($K_baked, $B, $D, key);\n"
    "    int nseen = atomic_load_explicit(&$K_nseen, memory_order_acquire);\n"
    "    if (config < 0)\n"
    "        config = $P_find_choice($K_seen, nseen, $D, key);\n"
    "    if (config < 0) {\n"
    "        $K_grid_call call = {grid, grid_ctx, tuned};\n"
    "        status = tric_kernel_tune(tuned, $K_grid_of, &call, launch_args, $A, stream,\n"
    "                                  &config);\n"
    "        if (status != TRIC_SUCCESS)\n"
    "            return status;\n"
    "        if (config < 0 || config >= $N)\n"
    "            return tric_set_error(TRIC_ERROR_INVALID_ARGUMENT,\n"
    "                                  \"$K: the runtime chose config %d of $N\", config);\n"
    "        $P_remember(key, $D, config, $K_seen, &$K_nseen);\n"
    "    }\n"
    "    *chosen = config;\n"
    "    if (!launch)\n"
    "        return TRIC_SUCCESS;\n"
    "    tric_kernel kernel;\n"
    "    status = tric_kernel_config(tuned, config, &kernel);\n"
    "    if (status != TRIC_SUCCESS)\n"
    "        return status;\n"
    "    tric_dim3 launch_grid = grid(&$K_configs[config], grid_ctx);\n"
    "    return tric_launch_ex(kernel, launch_grid, launch_args, $A, stream, options);\n"
    "}\n"
    "\n"
    "static void $K_write_choices(FILE *file)\n"
    "{\n"
    "    const char *texts[$N];\n"
    "    for (int i = 0; i < $N; i++)\n"
    "        texts[i] = $K_configs[i].text;\n"
    "    int nseen = atomic_load_explicit(&$K_nseen, memory_order_acquire);\n"
    "    $P_write_choices(file, \"$M\", $K_key_names, $D,\n"
    "                     $K_baked, $B, texts);\n"
    "    $P_write_choices(file, \"$M\", $K_key_names, $D,\n"
    "                     $K_seen, nseen, texts);\n"
    "}\n";

static const char write_tuned_template[] =
    "\n"
    "tric_status $P_write_tuned(const char *path)\n"
    "{\n"
    "    FILE *file = fopen(path, \"w\");\n"
    "    if (!file)\n"
    "        return tric_set_error(TRIC_ERROR_IO, \"$P_write_tuned: cannot write %s\", path);\n"
    "    fputs(\"# The configs the tuned launchers of $P chose, per kernel and key value; bake "
    "them in:\\n\"\n"
    "          \"#   tric FILE.tri ... --emit=c --tuned=THIS_FILE -o $P.c\\n\", file);\n"
    "    tric_device dev = $P_device();\n"
    "    if (dev)\n"
    "        fprintf(file, \"# tuned on %s\\n\", tric_device_name(dev));\n"
    "$W"
    "    if (fclose(file) != 0)\n"
    "        return tric_set_error(TRIC_ERROR_IO, \"$P_write_tuned: cannot write %s\", path);\n"
    "    return TRIC_SUCCESS;\n"
    "}\n";

/* "NAME" as a C string literal's text. */
static void put_c_string(StrBuf *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            strbuf_putc(out, '\\');
        strbuf_putc(out, *s);
    }
}

/* The key value an argument gives, as an int64_t expression: an int's value, a float's bits (as a
 * double), 0 for a pointer (a tric kernel's pointer has one dtype: it selects nothing). */
static void key_expr(StrBuf *out, const char *prefix, const KernelParamMeta *p, const char *name)
{
    if (p->type.is_ptr)
        strbuf_append(out, "0");
    else if (param_is_fixed(p))
        strbuf_append(out, "1");
    else if (dtype_is_float(p->type.dtype))
        strbuf_printf(out, "%s_float_key(%s)", prefix, name);
    else
        strbuf_printf(out, "(int64_t)%s", name);
}

static bool key_has_float(const Launcher *l)
{
    for (int i = 0; i < l->nkey; i++) {
        const KernelParamMeta *p = &l->meta->params[l->key[i]];
        if (!p->type.is_ptr && dtype_is_float(p->type.dtype))
            return true;
    }
    return false;
}

/* The config table, its entries' values, and the choices baked in. */
static void write_config_table(StrBuf *c, const Launcher *l)
{
    strbuf_printf(c, "\nconst %s_config %s_configs[%d] = {\n", l->c_name, l->c_name, l->nconfigs);
    for (int i = 0; i < l->nconfigs; i++) {
        const KernelMeta *m = l->configs[i];
        strbuf_append(c, "    {\"");
        put_c_string(c, m->config);
        strbuf_append(c, "\",\n     ");
        for (int j = 0; j < l->nmembers; j++) {
            const char *name = l->member_names[j];
            const char *v = list_value(m->constexprs, ' ', name, strlen(name));
            strbuf_printf(c, "%lld, ", v && !strncmp(v, "True", 4) ? 1LL : strtoll(v, NULL, 0));
        }
        const char *stages = list_value(m->config, ',', "num_stages", 10);
        /* as the config asks (the metadata's num_stages may be lowered to fit) */
        int num_stages = stages                   ? atoi(stages)
                         : m->stages_lowered_from ? m->stages_lowered_from
                         : m->num_stages          ? m->num_stages
                                                  : 3;
        strbuf_printf(c, "%d, %d},\n", m->num_warps, num_stages);
    }
    strbuf_append(c, "};\n");
}

/* What a tuned kernel's entry does: launch (K_launch), launch with options (K_launch_ex), or
 * choose without launching (K_tune). */
typedef enum { ENTRY_LAUNCH, ENTRY_LAUNCH_EX, ENTRY_TUNE } TunedEntry;

/* The launcher or tuner of a tuned kernel: checks, arguments, key values, then the dispatch. */
static void write_tuned_entry(StrBuf *c, const char *prefix, const Launcher *l, TunedEntry entry)
{
    const KernelMeta *m = l->meta;
    static const char *const suffix[] = {"launch", "launch_ex", "tune"};
    StrBuf fn = {0}, lead = {0};
    strbuf_printf(&fn, "%s_%s", l->c_name, suffix[entry]);
    strbuf_printf(&lead, "tric_stream stream, %s_grid_fn grid, void *grid_ctx%s", l->c_name,
                  entry == ENTRY_LAUNCH_EX ? ", const tric_launch_options *options" : "");
    strbuf_putc(c, '\n');
    launcher_prototype(c, fn.data, lead.data, m, l->names,
                       entry == ENTRY_TUNE ? "int *chosen" : NULL);
    strbuf_append(c, "\n{\n");
    if (entry == ENTRY_TUNE)
        strbuf_printf(c,
                      "    if (!chosen)\n"
                      "        return tric_set_error(TRIC_ERROR_INVALID_ARGUMENT,\n"
                      "                              \"%s: chosen is NULL\");\n",
                      fn.data);
    if (entry == ENTRY_LAUNCH_EX)
        write_options_check(c, fn.data);
    write_checks(c, fn.data, m, l->names);
    const char *first_buffer = "NULL";
    for (int i = m->nparams - 1; i >= 0; i--)
        if (m->params[i].type.is_ptr)
            first_buffer = l->names[i];
    if (m->nparams == 0) {
        strbuf_append(c, "    const tric_arg *launch_args = NULL;\n");
    } else {
        strbuf_printf(c, "    const tric_arg launch_args[%d] = {\n", m->nparams);
        for (int i = 0; i < m->nparams; i++) {
            strbuf_append(c, "        ");
            param_arg(c, &m->params[i], l->names[i]);
            strbuf_append(c, ",\n");
        }
        strbuf_append(c, "    };\n");
    }
    strbuf_printf(c, "    const int64_t key[%d] = {", l->nkey ? l->nkey : 1);
    for (int i = 0; i < l->nkey; i++) {
        strbuf_append(c, i ? ", " : "");
        key_expr(c, prefix, &m->params[l->key[i]], l->names[l->key[i]]);
    }
    strbuf_append(c, l->nkey ? "};\n" : "0};\n");
    if (entry != ENTRY_TUNE)
        strbuf_append(c, "    int chosen;\n");
    strbuf_printf(c,
                  "    return %s_dispatch(stream, grid, grid_ctx, %s, launch_args, key,\n"
                  "        %s);\n}\n",
                  l->c_name, first_buffer,
                  entry == ENTRY_LAUNCH      ? "true, NULL, &chosen"
                  : entry == ENTRY_LAUNCH_EX ? "true, options, &chosen"
                                             : "false, NULL, chosen");
    strbuf_free(&fn);
    strbuf_free(&lead);
}

/* Everything of tuned kernel l (launcher index), after the module's shared code. */
static void write_tuned(StrBuf *c, const char *prefix, const Launcher *l, int index)
{
    write_config_table(c, l);
    char nconfigs[16], baked_size[16], nbaked[16], nkey[16], nparams[16], kernel_index[16];
    char key_size[16];
    snprintf(nconfigs, sizeof nconfigs, "%d", l->nconfigs);
    snprintf(baked_size, sizeof baked_size, "%d", l->nchoices ? l->nchoices : 1);
    snprintf(nbaked, sizeof nbaked, "%d", l->nchoices);
    snprintf(nkey, sizeof nkey, "%d", l->nkey);
    snprintf(nparams, sizeof nparams, "%d", l->meta->nparams);
    snprintf(kernel_index, sizeof kernel_index, "%d", index);
    snprintf(key_size, sizeof key_size, "%d", l->nkey ? l->nkey : 1);
    StrBuf baked = {0}, key_names = {0};
    for (int i = 0; i < l->nchoices; i++) {
        strbuf_append(&baked, i ? ",\n    {{" : "\n    {{");
        for (int j = 0; j < l->nkey; j++) {
            int64_t v = l->choices[i].key[j];
            /* -9223372036854775808 would be the negation of a constant too large for int64_t */
            if (v == INT64_MIN)
                strbuf_printf(&baked, "%sINT64_MIN", j ? ", " : "");
            else
                strbuf_printf(&baked, "%s%lld", j ? ", " : "", (long long)v);
        }
        strbuf_printf(&baked, "%s}, %d}", l->nkey ? "" : "0", l->choices[i].config);
    }
    strbuf_append(&baked, l->nchoices ? ",\n" : "{{0}, -1}");
    for (int i = 0; i < l->nkey; i++) {
        strbuf_printf(&key_names, "%s\"", i ? ", " : "");
        put_c_string(&key_names, l->meta->params[l->key[i]].name);
        strbuf_putc(&key_names, '"');
    }
    if (!l->nkey)
        strbuf_append(&key_names, "NULL");
    const char *vars[26] = {0};
    vars['P' - 'A'] = prefix;
    vars['K' - 'A'] = l->c_name;
    vars['M' - 'A'] = l->name;
    vars['N' - 'A'] = nconfigs;
    vars['C' - 'A'] = baked_size;
    vars['B' - 'A'] = nbaked;
    vars['D' - 'A'] = nkey;
    vars['A' - 'A'] = nparams;
    vars['I' - 'A'] = kernel_index;
    vars['F' - 'A'] = key_size;
    vars['T' - 'A'] = baked.data;
    vars['Y' - 'A'] = key_names.data;
    put_vars(c, tuned_template, vars);
    strbuf_free(&baked);
    strbuf_free(&key_names);
    write_tuned_entry(c, prefix, l, ENTRY_LAUNCH);
    write_tuned_entry(c, prefix, l, ENTRY_LAUNCH_EX);
    write_tuned_entry(c, prefix, l, ENTRY_TUNE);
}

/* The code the tuned launchers share, before the first: the choice type, lookup, record. */
static void write_tuned_shared(StrBuf *c, const char *prefix, const Launcher *launchers, int n,
                               int max_key)
{
    char max_key_text[16];
    snprintf(max_key_text, sizeof max_key_text, "%d", max_key);
    const char *vars[26] = {0};
    vars['P' - 'A'] = prefix;
    vars['E' - 'A'] = max_key_text;
    put_vars(c, choice_template, vars);
    bool any_float = false;
    for (int k = 0; k < n; k++)
        any_float |= launcher_is_tuned(&launchers[k]) && key_has_float(&launchers[k]);
    if (any_float)
        strbuf_printf(c,
                      "\n"
                      "/* A float key value: its bits as a double's (the tuned table's form). */\n"
                      "static int64_t %s_float_key(double value)\n"
                      "{\n"
                      "    int64_t bits;\n"
                      "    memcpy(&bits, &value, sizeof bits);\n"
                      "    return bits;\n"
                      "}\n",
                      prefix);
}

/* P_write_tuned, after every tuned kernel's code. */
static void write_tuned_writer(StrBuf *c, const char *prefix, const Launcher *launchers, int n)
{
    StrBuf calls = {0};
    for (int k = 0; k < n; k++)
        if (launcher_is_tuned(&launchers[k]))
            strbuf_printf(&calls, "    %s_write_choices(file);\n", launchers[k].c_name);
    const char *vars[26] = {0};
    vars['P' - 'A'] = prefix;
    vars['W' - 'A'] = calls.data;
    put_vars(c, write_tuned_template, vars);
    strbuf_free(&calls);
}

static void write_source(StrBuf *c, const char *prefix, const char *header_name,
                         const char *source_name, const char *arch, const char *ptx, size_t len,
                         const Launcher *launchers, int n)
{
    int max_key = 0;
    bool any_tuned = false;
    for (int k = 0; k < n; k++) {
        any_tuned |= launcher_is_tuned(&launchers[k]);
        if (launchers[k].nkey > max_key)
            max_key = launchers[k].nkey;
    }
    strbuf_printf(
        c,
        "/* %.*s.c: the kernels of %s as PTX for %s and their typed launchers,\n"
        " * written by tric %s --emit=c; %s declares them. Regenerate rather than edit. */\n"
        "#include \"%s\"\n"
        "\n"
        "#include <stdatomic.h>\n"
        "#include <stddef.h>\n"
        "%s"
        "\n",
        (int)strlen(header_name) - 2, header_name, source_name, arch, TRIC_VERSION, header_name,
        header_name, any_tuned ? "#include <stdio.h>\n#include <string.h>\n" : "");
    write_ptx_bytes(c, prefix, ptx, len, arch);
    write_loader(c, prefix, launchers, n);
    if (any_tuned)
        write_tuned_shared(c, prefix, launchers, n, max_key ? max_key : 1);
    for (int k = 0; k < n; k++) {
        if (launcher_is_tuned(&launchers[k]))
            write_tuned(c, prefix, &launchers[k], k);
        else {
            write_launcher(c, prefix, k, &launchers[k], false);
            write_launcher(c, prefix, k, &launchers[k], true);
        }
    }
    if (any_tuned)
        write_tuned_writer(c, prefix, launchers, n);
}

/* ---- the launchers of a PTX ------------------------------------------------------------------ */

/* "M,N,K" -> the parameter indices of m, into l->key; false with the error when a name is no
 * run-time parameter. */
static bool resolve_key(Launcher *l, Diag *diag)
{
    const char *list = l->meta->tune_key;
    l->nkey = 0;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        int found = -1;
        for (int i = 0; i < l->meta->nparams && found < 0; i++)
            if (strlen(l->meta->params[i].name) == len && !strncmp(l->meta->params[i].name, p, len))
                found = i;
        if (len && (found < 0 || l->nkey == EMIT_C_MAX_KEY)) {
            diag_plain_error(diag, "%s: the autotune key names '%.*s', %s", l->name, (int)len, p,
                             found < 0 ? "which is not a run-time parameter"
                                       : "past the 16 key parameters a launcher takes");
            return false;
        }
        if (len)
            l->key[l->nkey++] = found;
        p += len;
        p += *p == ',';
    }
    return true;
}

/* Is "NAME=VALUE" an integer (or True/False) constexpr in every config? */
static bool integer_in_every_config(const Launcher *l, const char *name, size_t nlen)
{
    for (int c = 0; c < l->nconfigs; c++) {
        const char *v = list_value(l->configs[c]->constexprs, ' ', name, nlen);
        if (!v)
            return false;
        size_t vlen = strcspn(v, " ");
        char *end;
        (void)strtoll(v, &end, 0);
        bool is_int = end == v + vlen && vlen > 0;
        bool is_bool =
            (vlen == 4 && !strncmp(v, "True", 4)) || (vlen == 5 && !strncmp(v, "False", 5));
        if (!is_int && !is_bool)
            return false;
    }
    return true;
}

/* The config struct's members: the integer constexprs of every config, under C names that clash
 * with no keyword nor the struct's other fields. */
static void config_members(Launcher *l, Arena *arena)
{
    const char *list = l->meta->constexprs;
    int most = 1;
    for (const char *p = list; *p; p++)
        most += *p == ' ';
    l->members = arena_alloc(arena, sizeof *l->members * (size_t)most);
    l->member_names = arena_alloc(arena, sizeof *l->member_names * (size_t)most);
    l->nmembers = 0;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, " "), nlen = strcspn(p, "=");
        if (nlen < len && nlen < C_NAME_MAX - 8 && integer_in_every_config(l, p, nlen)) {
            char *c_name = l->members[l->nmembers];
            snprintf(c_name, C_NAME_MAX, "%.*s", (int)nlen, p);
            l->member_names[l->nmembers] = arena_strndup(arena, p, nlen);
            size_t n = nlen;
            while ((is_reserved(c_name) || !strcmp(c_name, "text") ||
                    !strcmp(c_name, "num_warps") || !strcmp(c_name, "num_stages")) &&
                   n + 1 < C_NAME_MAX) {
                c_name[n++] = '_';
                c_name[n] = 0;
            }
            l->nmembers++;
        }
        p += len;
        p += *p == ' ';
    }
}

/* The launchers of the PTX's kernels: one per kernel that is no config, one per tuned kernel
 * (at its first config's place), in the order of the metadata. Allocated in arena. */
static int make_launchers(const KernelMeta *metas, int n, const char *prefix, const char *lprefix,
                          Launcher **out, Arena *arena, Diag *diag)
{
    Launcher *ls = arena_alloc(arena, sizeof *ls * (size_t)n);
    int count = 0;
    for (int i = 0; i < n; i++) {
        const KernelMeta *m = &metas[i];
        bool seen = false;
        for (int k = 0; k < count && m->tune_name[0]; k++)
            seen |= !strcmp(ls[k].name, m->tune_name);
        if (seen)
            continue;
        Launcher *l = &ls[count++];
        memset(l, 0, sizeof *l);
        l->name = m->tune_name[0] ? m->tune_name : m->name;
        l->c_name = arena_printf(arena, "%s%s", lprefix, l->name);
        l->meta = m;
        l->names = arena_alloc(arena, sizeof *l->names * (size_t)(m->nparams + 1));
        param_c_names(m, prefix, l->names);
        if (!m->tune_name[0])
            continue;
        l->configs = arena_alloc(arena, sizeof *l->configs * (size_t)n);
        for (int j = i; j < n; j++)
            if (!strcmp(metas[j].tune_name, m->tune_name))
                l->configs[l->nconfigs++] = &metas[j];
        if (!resolve_key(l, diag))
            return -1;
        config_members(l, arena);
    }
    *out = ls;
    return count;
}

/* ---- --tuned=FILE: choices made ahead of time ------------------------------------------------ */

/* Reads "KERNEL M=512,N=512,K=512 config 3: BLOCK_SIZE_M=128, ..." (P_write_tuned's lines) into
 * the launcher it names. Every part must match this PTX: the kernel is a tuned one, the key names
 * are its key's in order, the config's index and text are its (a table from other configs would
 * launch the wrong one). */
static bool read_tuned_line(const char *path, int lineno, const char *line, Launcher *ls, int n,
                            Arena *arena, Diag *diag)
{
    size_t nlen = strcspn(line, " ");
    Launcher *l = NULL;
    for (int k = 0; k < n && !l; k++)
        if (launcher_is_tuned(&ls[k]) && strlen(ls[k].name) == nlen &&
            !strncmp(ls[k].name, line, nlen))
            l = &ls[k];
    if (!l) {
        diag_plain_error(diag, "%s:%d: '%.*s' is no autotuned kernel of this file", path, lineno,
                         (int)nlen, line);
        return false;
    }
    TunedChoice choice = {{0}, -1};
    const char *p = line + nlen;
    while (*p == ' ')
        p++;
    for (int i = 0; i < l->nkey; i++) {
        const char *want = l->meta->params[l->key[i]].name;
        size_t wlen = strlen(want);
        char *end = NULL;
        errno = 0;
        if (strncmp(p, want, wlen) || p[wlen] != '=' ||
            (choice.key[i] = strtoll(p + wlen + 1, &end, 10), end == p + wlen + 1) ||
            errno == ERANGE || *end != (i + 1 < l->nkey ? ',' : ' ')) {
            diag_plain_error(diag, "%s:%d: %s's key is %s: expected '%s=INTEGER' (64 bits) at '%s'",
                             path, lineno, l->name, l->meta->tune_key, want, p);
            return false;
        }
        p = end + 1;
    }
    int index = -1, off = 0;
    if (sscanf(p, "config %d: %n", &index, &off) != 1 || off == 0) {
        diag_plain_error(diag, "%s:%d: expected 'config INDEX: TEXT' at '%s'", path, lineno, p);
        return false;
    }
    const char *text = p + off;
    if (index < 0 || index >= l->nconfigs || strcmp(text, l->configs[index]->config)) {
        diag_plain_error(
            diag,
            "%s:%d: %s has no config %d '%s' (%s): the table was tuned for other "
            "configs; tune again",
            path, lineno, l->name, index, text,
            index >= 0 && index < l->nconfigs
                ? arena_printf(arena, "its config %d is '%s'", index, l->configs[index]->config)
                : arena_printf(arena, "it has %d", l->nconfigs));
        return false;
    }
    choice.config = index;
    for (int i = 0; i < l->nchoices; i++) {
        if (!memcmp(l->choices[i].key, choice.key, sizeof choice.key)) {
            if (l->choices[i].config == index)
                return true;
            diag_plain_error(diag, "%s:%d: %s's key value is given config %d before, here %d", path,
                             lineno, l->name, l->choices[i].config, index);
            return false;
        }
    }
    TunedChoice *grown = arena_alloc(arena, sizeof *grown * (size_t)(l->nchoices + 1));
    if (l->nchoices)
        memcpy(grown, l->choices, sizeof *grown * (size_t)l->nchoices);
    grown[l->nchoices++] = choice;
    l->choices = grown;
    return true;
}

static bool read_tuned(const char *path, Launcher *ls, int n, Arena *arena, Diag *diag)
{
    StrBuf file = {0};
    if (!strbuf_read_file(&file, path)) {
        diag_plain_error(diag, "--tuned: cannot read '%s'", path);
        return false;
    }
    bool ok = true;
    int lineno = 0;
    for (char *line = file.data ? file.data : ""; ok && *line;) {
        size_t len = strcspn(line, "\n");
        bool more = line[len] == '\n';
        line[len] = 0;
        if (len && line[len - 1] == '\r')
            line[len - 1] = 0;
        lineno++;
        const char *text = line + strspn(line, " \t");
        if (text[0] && text[0] != '#')
            ok = read_tuned_line(path, lineno, text, ls, n, arena, diag);
        line += len + more;
    }
    strbuf_free(&file);
    return ok;
}

/* ---- the compile ----------------------------------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

bool emit_c_compile(const SrcFile *file, const CompileOptions *opt, CompileResult *out, Diag *diag)
{
    memset(out, 0, sizeof *out);
    if (!opt->c_output || !ends_with(opt->c_output, ".c")) {
        diag_plain_error(diag, "--emit=c writes FILE.c and FILE.h: give -o FILE.c");
        return false;
    }
    CompileOptions ptx_opt = *opt;
    ptx_opt.emit = EMIT_PTX;
    if (!driver_compile(file, &ptx_opt, out, diag))
        return false;

    KernelMeta *metas = NULL;
    StrBuf error = {0};
    const char *ptx = out->output.data ? out->output.data : "";
    int n = kernel_meta_read_all(ptx, &metas, &error);
    if (n <= 0)
        TRIC_INTERNAL(diag, "the PTX just written has no readable metadata: %s",
                      error.data ? error.data : "");
    strbuf_free(&error);
    char *prefix = emit_c_prefix(opt->c_output);
    const char *lprefix = opt->c_prefix_launchers ? arena_printf(out->arena, "%s_", prefix) : "";
    Launcher *launchers = NULL;
    int nlaunchers =
        n > 0 ? make_launchers(metas, n, prefix, lprefix, &launchers, out->arena, diag) : -1;
    bool ok = nlaunchers > 0;
    if (ok && opt->c_tuned)
        ok = read_tuned(opt->c_tuned, launchers, nlaunchers, out->arena, diag);
    if (ok) {
        const char *base = strrchr(opt->c_output, '/');
        base = base ? base + 1 : opt->c_output;
        char *header_name = arena_strdup(out->arena, base);
        header_name[strlen(header_name) - 1] = 'h';
        const char *arch = opt->arch ? opt->arch : "sm_90";
        StrBuf c = {0};
        write_header(&out->header, prefix, lprefix, header_name, file->name, arch, launchers,
                     nlaunchers);
        write_source(&c, prefix, header_name, file->name, arch, ptx, out->output.len, launchers,
                     nlaunchers);
        strbuf_free(&out->output);
        out->output = c;
    }
    free(prefix);
    free(metas);
    return ok;
}
