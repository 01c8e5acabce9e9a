/* emit_c.c: `tric --emit=c -o K.c`, the kernels of a file as C source for a host program, the way
 * Triton's AOT compiler (triton/tools/compile.py) writes a kernel as C for CUDA: the PTX embedded
 * as bytes, and per kernel one launch function whose parameters are the kernel's run-time
 * parameters with C types. K.h declares them (docs/cli.md "--emit=c", docs/runtime.md "Generated
 * launchers").
 *
 * The generated code calls only the public runtime API of include/tric/tric.h (it loads the PTX
 * with tric_module_load_ptx and launches with tric_launch), so it links against libtric or the
 * runtime library alone. It compiles as strict C11 (-std=c11 -Wall -Wextra -pedantic -Werror):
 * the PTX is a byte array, not a string literal (C11 5.2.4.1 only promises 4095 characters of a
 * literal). Loading is thread-safe through a C11 atomic_flag (7.17.8).
 *
 * requires: a file that compiles to PTX (every kernel with its run-time parameters typed)
 * guarantees: one launcher per kernel of the PTX, in the order of its metadata blocks */
#include "driver/driver.h"

#include <ctype.h>
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
    "kernel",   "launch_args", "status",
};

static bool name_is_free(const char *name, const char *prefix, char (*taken)[C_NAME_MAX],
                         int ntaken)
{
    for (size_t i = 0; i < sizeof reserved_names / sizeof reserved_names[0]; i++)
        if (!strcmp(name, reserved_names[i]))
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

/* Appends tmpl with $P replaced by the prefix and $N by the kernel count. */
static void put_template(StrBuf *out, const char *tmpl, const char *prefix, int n)
{
    for (const char *p = tmpl; *p; p++) {
        if (p[0] == '$' && p[1] == 'P') {
            strbuf_append(out, prefix);
            p++;
        } else if (p[0] == '$' && p[1] == 'N') {
            strbuf_printf(out, "%d", n);
            p++;
        } else {
            strbuf_putc(out, *p);
        }
    }
}

/* ---- the header ------------------------------------------------------------------------------ */

/* lprefix: "" or "PREFIX_" (--prefix-launchers), before the kernel's name. */
static void launcher_prototype(StrBuf *out, const char *lprefix, const KernelMeta *m,
                               char (*names)[C_NAME_MAX])
{
    StrBuf line = {0};
    strbuf_printf(&line, "tric_status %s%s_launch(tric_stream stream, tric_dim3 grid", lprefix,
                  m->name);
    size_t indent = strlen(lprefix) + strlen(m->name) + strlen("tric_status _launch(");
    size_t col = line.len;
    strbuf_append(out, line.data);
    for (int i = 0; i < m->nparams; i++) {
        if (param_is_fixed(&m->params[i]))
            continue;
        strbuf_clear(&line);
        strbuf_printf(&line, "%s %s", param_c_type(&m->params[i]), names[i]);
        /* Break before an argument that would pass column 100, aligned under the first. */
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

static void kernel_doc(StrBuf *out, const KernelMeta *m, char (*names)[C_NAME_MAX])
{
    StrBuf text = {0};
    strbuf_printf(&text, "%s(", m->name);
    for (int i = 0; i < m->nparams; i++) {
        strbuf_printf(&text, "%s%s: ", i ? ", " : "", names[i]);
        param_sig(&text, &m->params[i]);
    }
    strbuf_putc(&text, ')');
    put_wrapped(out, "/* ", text.data);
    strbuf_clear(&text);
    strbuf_printf(&text, "%d threads per program (%d warps), %d bytes of shared memory", m->threads,
                  m->num_warps, m->shared_bytes);
    if (m->constexprs[0]) { /* "A=1 B=2" as "A=1, B=2" */
        strbuf_append(&text, ";");
        for (const char *p = m->constexprs; *p; p++) {
            if (p == m->constexprs || *p == ' ')
                strbuf_append(&text, p == m->constexprs ? " " : ",");
            strbuf_putc(&text, *p);
        }
    }
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
    " * arguments. Errors are a tric_status; tric_last_error() says why. */\n"
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

static void write_header(StrBuf *h, const char *prefix, const char *lprefix,
                         const char *header_name, const char *source_name, const char *arch,
                         const KernelMeta *metas, int n, char (*const *names)[C_NAME_MAX])
{
    StrBuf guard = {0};
    for (const char *p = prefix; *p; p++)
        strbuf_putc(&guard, (char)toupper((unsigned char)*p));
    strbuf_printf(h,
                  "/* %s: typed launchers for the kernels of %s, written by\n"
                  " * tric %s --emit=c with the PTX for %s embedded in the .c file. Regenerate\n"
                  " * rather than edit.\n",
                  header_name, source_name, TRIC_VERSION, arch);
    /* $G (the guard) and $L (the launchers' prefix) first, then $P through put_template. */
    StrBuf tmpl = {0};
    for (const char *p = header_template; *p; p++) {
        if (p[0] == '$' && (p[1] == 'G' || p[1] == 'L')) {
            strbuf_append(&tmpl, p[1] == 'G' ? guard.data : lprefix);
            p++;
        } else {
            strbuf_putc(&tmpl, *p);
        }
    }
    put_template(h, tmpl.data, prefix, n);
    strbuf_free(&tmpl);
    for (int k = 0; k < n; k++) {
        strbuf_putc(h, '\n');
        kernel_doc(h, &metas[k], names[k]);
        launcher_prototype(h, lprefix, &metas[k], names[k]);
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

static void write_loader(StrBuf *c, const char *prefix, const KernelMeta *metas, int n)
{
    strbuf_printf(c, "\nstatic const char *const %s_kernel_names[%d] = {", prefix, n);
    for (int k = 0; k < n; k++)
        strbuf_printf(c, "%s\"%s\"", k ? ", " : "", metas[k].name);
    strbuf_append(c, "};\n");
    put_template(c, loader_template, prefix, n);
}

/* One check per hinted argument, with a message naming it (the runtime would refuse the launch
 * too, by position; this says it by name, before anything is loaded). */
static void write_checks(StrBuf *c, const char *lprefix, const KernelMeta *m,
                         char (*names)[C_NAME_MAX])
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
                          "                              \"%s%s_launch: %s is NULL\");\n",
                          names[i], lprefix, m->name, names[i]);
        }
        if (param_has_check(p) && p->type.is_ptr) {
            strbuf_printf(
                c,
                "    if (tric_buffer_address(%s) %% %d != 0)\n"
                "        return tric_set_error(TRIC_ERROR_INVALID_ARGUMENT,\n"
                "                              \"%s%s_launch: %s's address 0x%%llx is not \"\n"
                "                              \"divisible by %d (the kernel was compiled for \"\n"
                "                              \"%s: %s)\",\n"
                "                              (unsigned long long)tric_buffer_address(%s));\n",
                names[i], p->divisibility, lprefix, m->name, names[i], p->divisibility, names[i],
                sig.data, names[i]);
        } else if (param_has_check(p)) {
            bool is_signed = dtype_is_signed(p->type.dtype);
            strbuf_printf(
                c,
                "    if (%s %% %d != 0)\n"
                "        return tric_set_error(TRIC_ERROR_INVALID_ARGUMENT,\n"
                "                              \"%s%s_launch: %s = %%%s is not divisible by %d \"\n"
                "                              \"(the kernel was compiled for %s: %s)\",\n"
                "                              (%s)%s);\n",
                names[i], p->divisibility, lprefix, m->name, names[i], is_signed ? "lld" : "llu",
                p->divisibility, names[i], sig.data, is_signed ? "long long" : "unsigned long long",
                names[i]);
        }
        strbuf_free(&sig);
    }
}

static void write_launcher(StrBuf *c, const char *prefix, const char *lprefix, int index,
                           const KernelMeta *m, char (*names)[C_NAME_MAX])
{
    strbuf_putc(c, '\n');
    launcher_prototype(c, lprefix, m, names);
    strbuf_append(c, "\n{\n");
    write_checks(c, lprefix, m, names);
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
    if (m->nparams == 0) {
        strbuf_append(c, "    return tric_launch(kernel, grid, NULL, 0, stream);\n}\n");
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
                  "    return tric_launch(kernel, grid, launch_args, %d, stream);\n"
                  "}\n",
                  m->nparams);
}

static void write_source(StrBuf *c, const char *prefix, const char *lprefix,
                         const char *header_name, const char *source_name, const char *arch,
                         const char *ptx, size_t len, const KernelMeta *metas, int n,
                         char (*const *names)[C_NAME_MAX])
{
    strbuf_printf(
        c,
        "/* %.*s.c: the kernels of %s as PTX for %s and their typed launchers,\n"
        " * written by tric %s --emit=c; %s declares them. Regenerate rather than edit. */\n"
        "#include \"%s\"\n"
        "\n"
        "#include <stdatomic.h>\n"
        "#include <stddef.h>\n"
        "\n",
        (int)strlen(header_name) - 2, header_name, source_name, arch, TRIC_VERSION, header_name,
        header_name);
    write_ptx_bytes(c, prefix, ptx, len, arch);
    write_loader(c, prefix, metas, n);
    for (int k = 0; k < n; k++)
        write_launcher(c, prefix, lprefix, k, &metas[k], names[k]);
}

/* ---- the compile ----------------------------------------------------------------------------- */

/* An autotuned kernel would compile to one PTX kernel per config, and a launcher stands for one
 * compiled kernel: ask for the config's values instead, at the decorator. */
static bool reject_autotuned(const SrcFile *file, const CompileOptions *opt, Diag *diag)
{
    Arena *arena = arena_new();
    Diag quiet = {0};
    Module *m = parse_module(file, arena, &quiet);
    bool ok = true;
    if (m) { /* a syntax error is the compile's to report */
        const FuncDef **entries = NULL, *named = NULL;
        int n = 0;
        if (opt->spec.kernel_name) {
            named = sema_find_kernel(m, opt->spec.kernel_name, arena, &quiet);
            entries = &named;
            n = named ? 1 : 0;
        } else {
            n = sema_entry_kernels(m, &entries, arena);
        }
        for (int i = 0; i < n; i++) {
            SpecOptions spec = opt->spec;
            spec.kernel_name = entries[i]->name;
            Autotune at;
            if (!driver_tune_configs(m, &spec, &at, arena, &quiet) || at.nconfigs == 0)
                continue;
            StrBuf text = {0};
            autotune_config_text(&text, &at.configs[0]);
            diag_error(diag, at.loc,
                       "%s is autotuned over %d configs; --emit=c writes a launcher for one "
                       "compiled kernel: give the values its configs set with -D (and "
                       "--num-warps, --num-stages), e.g. the first config's: %s",
                       entries[i]->name, at.nconfigs, text.data ? text.data : "");
            strbuf_free(&text);
            ok = false;
        }
    }
    diag_free(&quiet);
    arena_free(arena);
    return ok;
}

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
    if (!ends_with(file->name, ".tir") && !opt->no_tune && !reject_autotuned(file, opt, diag))
        return false;
    CompileOptions ptx_opt = *opt;
    ptx_opt.emit = EMIT_PTX;
    if (!driver_compile(file, &ptx_opt, out, diag))
        return false;

    KernelMeta *metas = NULL;
    StrBuf error = {0};
    const char *ptx = out->output.data ? out->output.data : "";
    int n = kernel_meta_read_all(ptx, &metas, &error);
    bool ok = n > 0;
    if (!ok)
        TRIC_INTERNAL(diag, "the PTX just written has no readable metadata: %s",
                      error.data ? error.data : "");
    for (int k = 0; ok && k < n; k++) {
        if (metas[k].tune_name[0]) { /* reject_autotuned covers .tri sources */
            diag_plain_error(diag,
                             "%s is a config of the autotuned kernel %s; --emit=c needs one "
                             "compiled kernel: give the config's values with -D",
                             metas[k].name, metas[k].tune_name);
            ok = false;
        }
    }
    strbuf_free(&error);
    if (!ok) {
        free(metas);
        return false;
    }

    char *prefix = emit_c_prefix(opt->c_output);
    const char *lprefix = opt->c_prefix_launchers ? arena_printf(out->arena, "%s_", prefix) : "";
    const char *base = strrchr(opt->c_output, '/');
    base = base ? base + 1 : opt->c_output;
    char *header_name = arena_strdup(out->arena, base);
    header_name[strlen(header_name) - 1] = 'h';
    char(**names)[C_NAME_MAX] = arena_alloc(out->arena, sizeof *names * (size_t)n);
    for (int k = 0; k < n; k++) {
        names[k] = arena_alloc(out->arena, sizeof *names[k] * (size_t)(metas[k].nparams + 1));
        param_c_names(&metas[k], prefix, names[k]);
    }
    const char *arch = opt->arch ? opt->arch : "sm_90";
    StrBuf c = {0};
    write_header(&out->header, prefix, lprefix, header_name, file->name, arch, metas, n,
                 (char(*const *)[C_NAME_MAX])names);
    write_source(&c, prefix, lprefix, header_name, file->name, arch, ptx, out->output.len, metas, n,
                 (char(*const *)[C_NAME_MAX])names);
    strbuf_free(&out->output);
    out->output = c;
    free(prefix);
    free(metas);
    return true;
}
