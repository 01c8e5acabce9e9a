/* signature.c: -D values (const_from_string, const_print) and Triton-AOT signature strings.
 *
 * A signature is what Triton's tools/compile.py takes: comma-separated entries, one per kernel
 * parameter, each a type with an optional specialization hint ("*fp16:16" a pointer whose address
 * is divisible by 16, "i32:16" an int divisible by 16, "i32:1" an int equal to 1; tric also takes
 * ":2", ":4", ":8") or, at a constexpr's position, a bare value ("1024"). What an entry means
 * depends on the parameter at its position, so this file only splits and decodes; sema.c binds. */
#include "frontend/frontend.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_space(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return s;
}

/* text without leading/trailing blanks, in the arena. */
static char *trimmed(Arena *a, const char *s, size_t n)
{
    while (n > 0 && isspace((unsigned char)*s))
        s++, n--;
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    return arena_strndup(a, s, n);
}

/* Python int literal syntax: optional sign, 0x / 0o / 0b prefixes, '_' separators. */
static bool parse_int(const char *s, int64_t *out)
{
    bool neg = false;
    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        base = 16, s += 2;
    else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O'))
        base = 8, s += 2;
    else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
        base = 2, s += 2;
    if (!*s)
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s == '_')
            continue;
        int d;
        if (isdigit((unsigned char)*s))
            d = *s - '0';
        else if (isalpha((unsigned char)*s))
            d = tolower((unsigned char)*s) - 'a' + 10;
        else
            return false;
        if (d >= base)
            return false;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return false;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1)
            return false;
        *out = (int64_t)(0 - v);
    } else {
        if (v > (uint64_t)INT64_MAX)
            return false;
        *out = (int64_t)v;
    }
    return true;
}

static bool parse_float(const char *s, double *out)
{
    if (!*s)
        return false;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (*end || end == s)
        return false;
    *out = v;
    return true;
}

/* "tl.float16", "triton.language.float16", "language.float16", "float16", "fp16". */
static bool parse_dtype(const char *s, DType *out)
{
    static const char *const prefixes[] = {"triton.language.", "tl.", "language."};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t n = strlen(prefixes[i]);
        if (!strncmp(s, prefixes[i], n)) {
            s += n;
            break;
        }
    }
    return dtype_from_name(s, out);
}

bool const_from_string(const char *text, ConstVal *out, Arena *a)
{
    if (!text)
        return false;
    char *s = trimmed(a, text, strlen(text));
    *out = (ConstVal){0};
    if (!strcmp(s, "True") || !strcmp(s, "true")) {
        out->kind = CV_BOOL;
        out->b = true;
        return true;
    }
    if (!strcmp(s, "False") || !strcmp(s, "false")) {
        out->kind = CV_BOOL;
        out->b = false;
        return true;
    }
    if (!strcmp(s, "None")) {
        out->kind = CV_NONE;
        return true;
    }
    if (parse_int(s, &out->i)) {
        out->kind = CV_INT;
        return true;
    }
    /* Only decimal spellings are floats; "inf"/"nan" as Python's float() would take them. */
    /* An int too large for int64 is rejected, not read as a float. */
    if ((isdigit((unsigned char)s[0]) || s[0] == '.' || s[0] == '-' || s[0] == '+') &&
        strpbrk(s, ".eEinIN") && !strpbrk(s, "xX") && parse_float(s, &out->f)) {
        out->kind = CV_FLOAT;
        return true;
    }
    DType dt;
    if (parse_dtype(s, &dt)) {
        out->kind = CV_DTYPE;
        out->dtype = dt;
        return true;
    }
    size_t n = strlen(s);
    if (n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0]) {
        out->kind = CV_STR;
        out->s = arena_strndup(a, s + 1, n - 2);
        return true;
    }
    return false;
}

/* Python's repr of a float: the shortest digits that read back the same, always with a '.'
 * or an exponent so that it reads as a float. */
static void print_float(StrBuf *sb, double f)
{
    if (isnan(f)) {
        strbuf_append(sb, "nan");
        return;
    }
    if (isinf(f)) {
        strbuf_append(sb, f < 0 ? "-inf" : "inf");
        return;
    }
    char buf[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, f);
        if (strtod(buf, NULL) == f)
            break;
    }
    strbuf_append(sb, buf);
    if (!strpbrk(buf, ".eEn"))
        strbuf_append(sb, ".0");
}

void const_print(StrBuf *sb, const ConstVal *cv)
{
    switch (cv->kind) {
    case CV_NONE: strbuf_append(sb, "None"); break;
    case CV_INT: strbuf_printf(sb, "%lld", (long long)cv->i); break;
    case CV_FLOAT: print_float(sb, cv->f); break;
    case CV_BOOL: strbuf_append(sb, cv->b ? "True" : "False"); break;
    case CV_DTYPE: strbuf_printf(sb, "tl.%s", dtype_name(cv->dtype)); break;
    case CV_TYPE:
        if (cv->type.rank == 0)
            strbuf_printf(sb, "tl.pointer_type(tl.%s)", dtype_name(cv->type.dtype));
        else
            type_print(sb, cv->type);
        break;
    case CV_STR:
        strbuf_putc(sb, '\'');
        for (const char *p = cv->s ? cv->s : ""; *p; p++) {
            if (*p == '\'' || *p == '\\')
                strbuf_printf(sb, "\\%c", *p);
            else if (*p == '\n')
                strbuf_append(sb, "\\n");
            else if ((unsigned char)*p < 0x20)
                strbuf_printf(sb, "\\x%02x", (unsigned char)*p);
            else
                strbuf_putc(sb, *p);
        }
        strbuf_putc(sb, '\'');
        break;
    case CV_TUPLE:
        strbuf_putc(sb, '(');
        for (int i = 0; i < cv->tuple.n; i++) {
            if (i)
                strbuf_append(sb, ", ");
            const_print(sb, &cv->tuple.elems[i]);
        }
        if (cv->tuple.n == 1)
            strbuf_putc(sb, ',');
        strbuf_putc(sb, ')');
        break;
    }
}

int signature_split(const char *sig, SigEntry **out, Arena *a)
{
    SigEntry *items = NULL;
    int n = 0, cap = 0;
    const char *p = sig;
    if (!*skip_space(p)) {
        *out = NULL;
        return 0;
    }
    for (;;) {
        /* the commas of "tensordesc<fp16[64, 64]>" are inside brackets */
        const char *comma = p;
        for (int depth = 0; *comma && (*comma != ',' || depth > 0); comma++)
            depth += (*comma == '<' || *comma == '[') - (*comma == '>' || *comma == ']');
        if (!*comma)
            comma = NULL;
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        SigEntry e = {.text = trimmed(a, p, len)};
        ARENA_PUSH(a, items, n, cap, e);
        if (!comma)
            break;
        p = comma + 1;
    }
    *out = items;
    return n;
}

const char *signature_parse_type(const char *text, Type *type, int *divisibility, bool *equal_to_1,
                                 Arena *a)
{
    *divisibility = 1;
    *equal_to_1 = false;
    const char *s = skip_space(text);
    bool is_ptr = false;
    if (*s == '*') {
        is_ptr = true;
        s = skip_space(s + 1);
    }
    const char *colon = strchr(s, ':');
    char *name = trimmed(a, s, colon ? (size_t)(colon - s) : strlen(s));
    if (!*name)
        return is_ptr ? "a pointer needs an element type, as in '*fp32'"
                      : "empty entry (expected a type such as 'i32' or '*fp16:16')";
    DType dt;
    if (!strcmp(name, "fp8e4b15") || !strcmp(name, "fp8e4b8") || !strcmp(name, "fp8e5b16"))
        return arena_printf(a, "'%s' is not supported (tric's fp8 types are fp8e4nv and fp8e5)",
                            name);
    if (!dtype_from_name(name, &dt))
        return arena_printf(a,
                            "unknown type '%s' (expected i1, i8, i16, i32, i64, u8, u16, u32, u64, "
                            "fp16, bf16, fp32, fp64, fp8e4nv or fp8e5, with '*' for a pointer)",
                            name);
    /* Triton passes fp8 only in tensors; a scalar fp8 argument has no host type here. */
    if (!is_ptr && dtype_is_fp8(dt))
        return arena_printf(a,
                            "a scalar %s parameter is not supported (fp8 is passed in memory, "
                            "as '*%s')",
                            name, name);
    *type = is_ptr ? type_ptr(dt) : type_scalar(dt);
    if (colon) {
        char *hint = trimmed(a, colon + 1, strlen(colon + 1));
        int64_t h;
        /* Triton's forms are ':16' and ':1'; tric also takes ':2', ':4' and ':8' (what its
         * launch specialization finds in, say, a stride of 4100: 8-byte copies). */
        if (!parse_int(hint, &h) || (h != 1 && h != 2 && h != 4 && h != 8 && h != 16))
            return arena_printf(a,
                                "bad hint ':%s' (expected ':16' for divisible by 16, or ':1' for "
                                "equal to 1; also ':2', ':4', ':8')",
                                hint);
        if (h == 1) {
            /* Triton specializes an integer equal to 1 into the constant; a pointer cannot be 1. */
            if (is_ptr || !dtype_is_int(dt))
                return "the hint ':1' (equal to 1) applies to integers only";
            *equal_to_1 = true;
        } else {
            if (!is_ptr && !dtype_is_int(dt))
                return arena_printf(a,
                                    "the hint ':%d' (divisible by %d) applies to pointers and "
                                    "integers only",
                                    (int)h, (int)h);
            *divisibility = (int)h;
        }
    }
    return NULL;
}

bool signature_is_tensordesc(const char *text)
{
    return !strncmp(skip_space(text), "tensordesc<", 11);
}

/* Triton's form (triton/backends/nvidia/driver.py reads it with "tensordesc<([^[>]*)\[([^]]*)\]"):
 * the element type, then the block shape in brackets; what follows the shape (a layout) is
 * ignored. */
const char *signature_parse_tensordesc(const char *text, Type *block, Arena *a)
{
    const char *s = skip_space(text) + 11, *open = strchr(s, '['),
               *close = open ? strchr(open, ']') : NULL;
    if (!open || !close || !strchr(close, '>'))
        return arena_printf(a,
                            "bad tensor descriptor '%s' (expected the form "
                            "'tensordesc<fp16[64, 64]>')",
                            text);
    char *name = trimmed(a, s, (size_t)(open - s));
    DType dt;
    if (!dtype_from_name(name, &dt))
        return arena_printf(a, "unknown element type '%s' in '%s'", name, text);
    int32_t shape[TRIC_MAX_RANK];
    int rank = 0;
    for (const char *d = open + 1; d < close;) {
        const char *end = d;
        while (end < close && *end != ',')
            end++;
        int64_t v;
        if (rank == TRIC_MAX_RANK || !parse_int(trimmed(a, d, (size_t)(end - d)), &v) || v < 1 ||
            v > (1 << 20) || (v & (v - 1)))
            return arena_printf(a, "the block shape of '%s' must be 1 to %d powers of two", text,
                                TRIC_MAX_RANK);
        shape[rank++] = (int32_t)v;
        d = end < close ? end + 1 : end;
    }
    if (rank == 0)
        return arena_printf(a, "the block shape of '%s' is empty", text);
    *block = type_block(type_scalar(dt), rank, shape);
    return NULL;
}

/* ---- the inputs in the words of their front door ----------------------------------------- */

const char *spec_define_wanted(const SpecOptions *opt, const char *name, Arena *a)
{
    return opt && opt->from_c_api ? arena_printf(a, "\"%s=...\" in opt.constexprs", name)
                                  : arena_printf(a, "-D %s=...", name);
}

const char *spec_define_given(const SpecOptions *opt, const Define *d, bool with_value, Arena *a)
{
    const char *name = d->name ? d->name : "", *value = d->value ? d->value : "";
    if (opt && opt->from_c_api)
        return arena_printf(a, "opt.constexprs entry \"%s=%s\"", name, value);
    return with_value ? arena_printf(a, "-D %s=%s", name, value) : arena_printf(a, "-D %s", name);
}

const char *spec_signature_name(const SpecOptions *opt)
{
    return opt && opt->from_c_api ? "opt.signature" : "--signature";
}
