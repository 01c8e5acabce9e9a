/* meta.c: the PTX metadata block (docs/ptx-metadata.md), `// tric.begin` ... `// tric.end`: what a
 * runtime needs to launch a .ptx with nothing else (kernel name, threads, shared bytes, parameter
 * types and names, constexprs, tuning config, TMA tensor maps). kernel_meta_write prints it;
 * kernel_meta_read and kernel_meta_read_all read it back from any text, refusing a malformed block
 * with the line and the reason. Needs the IR's types and launch values only (no passes, no LLVM),
 * so tests/fuzz/fuzz_meta.c links it beside the front end. */
#include "driver/driver.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void param_sig(StrBuf *out, const KernelParamMeta *p)
{
    if (p->type.is_ptr)
        strbuf_putc(out, '*');
    strbuf_append(out, dtype_sig_name(p->type.dtype));
    if (p->equal_to_1)
        strbuf_append(out, ":1");
    else if (p->divisibility > 1)
        strbuf_printf(out, ":%d", p->divisibility);
}

/* A tensor_map line's value: "fp16 base=0 dims=*,p3 strides=1,p6 box=64,128 swizzle=128". */
static void tensor_map_text(StrBuf *out, const TensorMap *t)
{
    strbuf_printf(out, "%s base=%d dims=", dtype_sig_name(t->dtype), t->base_param);
    for (int d = 0; d < t->rank; d++) {
        if (d)
            strbuf_putc(out, ',');
        launch_value_print(out, &t->dims[d]);
    }
    strbuf_append(out, " strides=");
    for (int d = 0; d < t->rank; d++) {
        if (d)
            strbuf_putc(out, ',');
        launch_value_print(out, &t->strides[d]);
    }
    strbuf_append(out, " box=");
    for (int d = 0; d < t->rank; d++)
        strbuf_printf(out, "%s%d", d ? "," : "", t->box[d]);
    strbuf_printf(out, " swizzle=%d", t->swizzle);
}

void kernel_meta_write(StrBuf *out, const KernelMeta *m)
{
    strbuf_append(out, "// tric.begin\n");
    strbuf_printf(out, "// tric.version %s\n", TRIC_VERSION);
    strbuf_printf(out, "// tric.kernel %s\n", m->name);
    strbuf_printf(out, "// tric.target %s\n", m->target);
    strbuf_printf(out, "// tric.num_warps %d\n", m->num_warps);
    strbuf_printf(out, "// tric.threads %d\n", m->threads);
    strbuf_printf(out, "// tric.shared %d\n", m->shared_bytes);
    strbuf_append(out, "// tric.params");
    for (int i = 0; i < m->nparams; i++) {
        strbuf_putc(out, ' ');
        param_sig(out, &m->params[i]);
    }
    strbuf_putc(out, '\n');
    if (m->nparams > 0 && m->params[0].name[0]) {
        strbuf_append(out, "// tric.param_names");
        for (int i = 0; i < m->nparams; i++)
            strbuf_printf(out, " %s", m->params[i].name[0] ? m->params[i].name : "_");
        strbuf_putc(out, '\n');
    }
    if (m->constexprs[0])
        strbuf_printf(out, "// tric.constexpr %s\n", m->constexprs);
    if (m->stages_lowered_from || m->stages_raised_from)
        strbuf_printf(out, "// tric.num_stages %d %s=%d\n", m->num_stages,
                      m->stages_lowered_from ? "lowered_from" : "raised_from",
                      m->stages_lowered_from ? m->stages_lowered_from : m->stages_raised_from);
    if (m->tune_name[0]) {
        strbuf_printf(out, "// tric.tune %s key=%s restore=%s reset=%s\n", m->tune_name,
                      m->tune_key, m->tune_restore, m->tune_reset);
        strbuf_printf(out, "// tric.config %s\n", m->config);
    }
    if (m->persistent) {
        if (m->workspace_bytes < 0)
            strbuf_append(out, "// tric.persistent workspace=none");
        else
            strbuf_printf(out, "// tric.persistent workspace=%lld", (long long)m->workspace_bytes);
        if (m->persistent_axes > 1)
            strbuf_printf(out, " axes=%d", m->persistent_axes);
        strbuf_putc(out, '\n');
    }
    for (int i = 0; i < m->ntmaps; i++) {
        strbuf_append(out, "// tric.tensor_map ");
        tensor_map_text(out, &m->tmaps[i]);
        strbuf_putc(out, '\n');
    }
    strbuf_append(out, "// tric.end\n");
}

/* Copies a value of n bytes into a fixed field; false when it does not fit. */
static bool copy_field(char *dst, size_t cap, const char *val, size_t n)
{
    if (n >= cap)
        return false;
    memcpy(dst, val, n);
    dst[n] = 0;
    return true;
}

/* "kernel_matmul key=M,N,K restore=c_ptr reset=" */
static bool parse_tune(KernelMeta *m, const char *val, size_t n)
{
    const char *sp = memchr(val, ' ', n);
    if (!sp || !copy_field(m->tune_name, sizeof m->tune_name, val, (size_t)(sp - val)))
        return false;
    struct {
        const char *label;
        char *field;
        size_t cap;
    } parts[] = {{"key=", m->tune_key, sizeof m->tune_key},
                 {"restore=", m->tune_restore, sizeof m->tune_restore},
                 {"reset=", m->tune_reset, sizeof m->tune_reset}};
    const char *p = sp + 1, *stop = val + n;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        size_t ln = strlen(parts[i].label);
        if ((size_t)(stop - p) < ln || strncmp(p, parts[i].label, ln))
            return false;
        p += ln;
        const char *q = memchr(p, ' ', (size_t)(stop - p));
        if (!q)
            q = stop;
        if (!copy_field(parts[i].field, parts[i].cap, p, (size_t)(q - p)))
            return false;
        p = q < stop ? q + 1 : stop;
    }
    return true;
}

/* Parses one "*fp16:16" / "i32" entry. */
static bool parse_param_sig(const char *s, size_t n, KernelParamMeta *p)
{
    char buf[32];
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *name = buf;
    p->type = (Type){0};
    p->divisibility = 1;
    if (*name == '*') {
        p->type.is_ptr = true;
        name++;
    }
    char *colon = strchr(name, ':');
    if (colon) {
        *colon = 0;
        char *end;
        long d = strtol(colon + 1, &end, 10);
        if (*end || d < 1)
            return false;
        p->divisibility = (int)d;
        p->equal_to_1 = d == 1;
    }
    return dtype_from_name(name, &p->type.dtype);
}

/* An integer filling all of s[0..n); false when s is empty, has other characters or overflows. */
static bool parse_int(const char *s, size_t n, long long *out)
{
    char buf[32];
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *end;
    errno = 0;
    *out = strtoll(buf, &end, 10);
    return !*end && errno == 0 && (buf[0] == '-' || (buf[0] >= '0' && buf[0] <= '9'));
}

/* One value of a tensor_map list, the span s[0, n): launch_value_parse (ir.c) must take all of
 * it. */
static bool meta_launch_value_parse(const char *s, size_t n, LaunchValue *v, const char **why)
{
    char buf[64];
    const char *end = buf;
    if (n > 0 && n < sizeof buf) {
        memcpy(buf, s, n);
        buf[n] = 0;
        if (!launch_value_parse(&end, v, why))
            return false;
        if (!*end)
            return true;
    }
    *why = "a value is '*' or factors joined by '*': an integer first, then pK";
    return false;
}

/* A comma-separated list of up to TRIC_TMAP_MAX_RANK items; each item's span into items. The
 * count, or -1 when there are more. */
static int split_list(const char *s, size_t n, const char *items[][2])
{
    int count = 0;
    for (const char *p = s, *stop = s + n;;) {
        const char *q = memchr(p, ',', (size_t)(stop - p));
        if (!q)
            q = stop;
        if (count == TRIC_TMAP_MAX_RANK)
            return -1;
        items[count][0] = p;
        items[count++][1] = q;
        if (q == stop)
            return count;
        p = q + 1;
    }
}

/* "fp16 base=0 dims=*,p3 strides=1,p6 box=64,128 swizzle=128": every key once, in any order. */
static bool tensor_map_parse(const char *val, size_t n, TensorMap *t, const char **why)
{
    memset(t, 0, sizeof *t);
    const char *p = val, *stop = val + n;
    const char *sp = memchr(p, ' ', n);
    char dtype[16];
    if (!sp || !copy_field(dtype, sizeof dtype, p, (size_t)(sp - p)) ||
        !dtype_from_name(dtype, &t->dtype)) {
        *why = "it starts with the element type (fp16, bf16, fp32, ...)";
        return false;
    }
    enum { BASE = 1, DIMS = 2, STRIDES = 4, BOX = 8, SWIZZLE = 16 };
    int seen = 0, ranks[3] = {0, 0, 0};
    for (p = sp + 1; p < stop;) {
        const char *q = memchr(p, ' ', (size_t)(stop - p));
        if (!q)
            q = stop;
        const char *eq = memchr(p, '=', (size_t)(q - p));
        if (!eq) {
            *why = "after the element type come key=value items";
            return false;
        }
        size_t klen = (size_t)(eq - p);
        const char *v = eq + 1;
        size_t vlen = (size_t)(q - v);
        const char *items[TRIC_TMAP_MAX_RANK][2];
        long long x;
        int key = klen == 4 && !strncmp(p, "base", 4)      ? BASE
                  : klen == 4 && !strncmp(p, "dims", 4)    ? DIMS
                  : klen == 7 && !strncmp(p, "strides", 7) ? STRIDES
                  : klen == 3 && !strncmp(p, "box", 3)     ? BOX
                  : klen == 7 && !strncmp(p, "swizzle", 7) ? SWIZZLE
                                                           : 0;
        if (!key || (seen & key)) {
            *why = key ? "a key appears twice" : "the keys are base, dims, strides, box, swizzle";
            return false;
        }
        seen |= key;
        if (key == BASE) {
            if (!parse_int(v, vlen, &x) || x < 0 || x >= 64) {
                *why = "base is a parameter's index";
                return false;
            }
            t->base_param = (int)x;
        } else if (key == SWIZZLE) {
            if (!parse_int(v, vlen, &x) || (x != 0 && x != 32 && x != 64 && x != 128)) {
                *why = "swizzle is 0, 32, 64 or 128";
                return false;
            }
            t->swizzle = (int)x;
        } else {
            int rank = split_list(v, vlen, items);
            if (rank < 0) {
                *why = "a tensor map has at most 5 dims";
                return false;
            }
            ranks[key == DIMS ? 0 : key == STRIDES ? 1 : 2] = rank;
            for (int d = 0; d < rank; d++) {
                size_t ilen = (size_t)(items[d][1] - items[d][0]);
                if (key == DIMS && !meta_launch_value_parse(items[d][0], ilen, &t->dims[d], why))
                    return false;
                if (key == STRIDES &&
                    !meta_launch_value_parse(items[d][0], ilen, &t->strides[d], why))
                    return false;
                if (key == BOX) {
                    if (!parse_int(items[d][0], ilen, &x) || x < 1 || x > 256) {
                        *why = "a box size is an integer from 1 to 256 (cuTensorMapEncodeTiled)";
                        return false;
                    }
                    t->box[d] = (int)x;
                }
            }
        }
        p = q < stop ? q + 1 : stop;
    }
    if (seen != (BASE | DIMS | STRIDES | BOX | SWIZZLE)) {
        *why = "it needs base, dims, strides, box and swizzle";
        return false;
    }
    if (ranks[0] != ranks[1] || ranks[0] != ranks[2]) {
        *why = "dims, strides and box have one value per dim each";
        return false;
    }
    t->rank = ranks[0];
    return true;
}

/* The tensor maps' parameters exist and have the kinds a launch reads them as: the base a
 * pointer, every factor an integer. */
static bool tensor_maps_check(const KernelMeta *m, StrBuf *error)
{
    for (int i = 0; i < m->ntmaps; i++) {
        const TensorMap *t = &m->tmaps[i];
        int bad = -1; /* the offending parameter index */
        const char *want = "a pointer";
        if (t->base_param >= m->nparams || !m->params[t->base_param].type.is_ptr)
            bad = t->base_param;
        for (int d = 0; bad < 0 && d < 2 * t->rank; d++) {
            const LaunchValue *v = d < t->rank ? &t->dims[d] : &t->strides[d - t->rank];
            for (int j = 0; bad < 0 && j < v->nparams; j++) {
                int k = v->params[j];
                if (k >= m->nparams || m->params[k].type.is_ptr ||
                    !dtype_is_int(m->params[k].type.dtype))
                    bad = k, want = "an integer";
            }
        }
        if (bad >= 0) {
            StrBuf line = {0};
            tensor_map_text(&line, t);
            strbuf_printf(error,
                          "bad tric.tensor_map line '%s' in the tric metadata block: parameter "
                          "%d is not %s parameter (tric.params lists %d)",
                          line.data ? line.data : "", bad, want, m->nparams);
            strbuf_free(&line);
            return false;
        }
    }
    return true;
}

/* What separates the names of a param_names line: a name is never written with one in it, so
 * none can end up at a line's end, where a '\r' would be taken for a CRLF file's. */
static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* The field a count line fills: num_warps, threads, shared, num_stages; NULL for other keys. */
static int *count_field(KernelMeta *m, const char *key)
{
    return !strcmp(key, "num_warps")    ? &m->num_warps
           : !strcmp(key, "threads")    ? &m->threads
           : !strcmp(key, "shared")     ? &m->shared_bytes
           : !strcmp(key, "num_stages") ? &m->num_stages
                                        : NULL;
}

/* Parses the block that starts at begin (its "// tric.begin" line) up to end. */
static bool meta_block(const char *begin, const char *end, KernelMeta *m, StrBuf *error)
{
    memset(m, 0, sizeof *m);
    bool seen_kernel = false, seen_threads = false;
    int *count;
    for (const char *line = begin; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t len = nl ? (size_t)(nl - line) : (size_t)(end - line);
        while (len > 0 && line[len - 1] == '\r') /* a CRLF file (a value never ends in '\r') */
            len--;
        /* "// tric.KEY VALUE", read within the line: the key up to a space, the value after the
         * spaces that follow it (a line without a value has an empty one) */
        char key[32] = {0};
        static const char prefix[] = "// tric.";
        size_t klen = 0, off = sizeof prefix - 1;
        if (len > off && !memcmp(line, prefix, off)) {
            while (off + klen < len && line[off + klen] != ' ' && klen < sizeof key - 1)
                klen++;
            memcpy(key, line + off, klen);
            off += klen;
            while (off < len && line[off] == ' ')
                off++;
        }
        if (klen > 0) {
            const char *val = line + off;
            size_t vlen = len - off;
            if (!strcmp(key, "kernel") && vlen > 0 && vlen < sizeof m->name) {
                memcpy(m->name, val, vlen);
                seen_kernel = true;
            } else if (!strcmp(key, "target") && vlen < sizeof m->target) {
                memcpy(m->target, val, vlen);
            } else if ((count = count_field(m, key)) != NULL) {
                /* a count, and for num_stages the stage count asked for: "2 lowered_from=3",
                 * "8 raised_from=4" */
                const char *sp = memchr(val, ' ', vlen);
                size_t n1 = sp ? (size_t)(sp - val) : vlen;
                static const char lowered[] = " lowered_from=", raised[] = " raised_from=";
                size_t ll = sizeof lowered - 1, rl = sizeof raised - 1;
                bool is_raised = sp && vlen - n1 > rl && !memcmp(sp, raised, rl);
                size_t tag = is_raised ? rl : ll;
                long long x = 0, from = 0;
                bool ok = parse_int(val, n1, &x) && x >= 0 && x <= INT32_MAX;
                if (ok && sp)
                    ok = count == &m->num_stages && vlen - n1 > tag &&
                         (is_raised || !memcmp(sp, lowered, ll)) &&
                         parse_int(sp + tag, vlen - n1 - tag, &from) && from >= 0 &&
                         from <= INT32_MAX;
                if (!ok) {
                    strbuf_printf(error, "bad tric.%s line '%.*s' in the tric metadata block", key,
                                  (int)vlen, val);
                    return false;
                }
                *count = (int)x;
                if (count == &m->num_stages && is_raised)
                    m->stages_raised_from = (int)from;
                else if (count == &m->num_stages)
                    m->stages_lowered_from = (int)from;
                seen_threads |= count == &m->threads;
            } else if (!strcmp(key, "constexpr")) {
                copy_field(m->constexprs, sizeof m->constexprs, val, vlen);
            } else if (!strcmp(key, "config")) {
                copy_field(m->config, sizeof m->config, val, vlen);
            } else if (!strcmp(key, "tune")) {
                if (!parse_tune(m, val, vlen)) {
                    strbuf_printf(error, "bad tric.tune line '%.*s' in the tric metadata block",
                                  (int)vlen, val);
                    return false;
                }
            } else if (!strcmp(key, "persistent")) {
                /* workspace=N (or none), then axes=A when the kernel takes a 2-D or 3-D grid */
                static const char field[] = "workspace=", axes_field[] = " axes=";
                size_t fl = sizeof field - 1, al = sizeof axes_field - 1;
                const char *sp = memchr(val, ' ', vlen);
                size_t n1 = sp ? (size_t)(sp - val) : vlen;
                long long bytes = 0, axes = 1;
                bool none = n1 == fl + 4 && !memcmp(val + fl, "none", 4);
                if (none)
                    bytes = -1;
                if (n1 <= fl || memcmp(val, field, fl) ||
                    (!none &&
                     (!parse_int(val + fl, n1 - fl, &bytes) || bytes < 0 || bytes > INT32_MAX)) ||
                    (sp && (vlen - n1 <= al || memcmp(sp, axes_field, al) ||
                            !parse_int(sp + al, vlen - n1 - al, &axes) || axes < 1 || axes > 3))) {
                    strbuf_printf(error,
                                  "bad tric.persistent line '%.*s' in the tric metadata block",
                                  (int)vlen, val);
                    return false;
                }
                m->persistent = true;
                m->workspace_bytes = bytes;
                m->persistent_axes = (int)axes;
            } else if (!strcmp(key, "tensor_map")) {
                const char *why = "a kernel reads at most 8 tensor maps";
                if (m->ntmaps == TRIC_MAX_TENSOR_MAPS ||
                    !tensor_map_parse(val, vlen, &m->tmaps[m->ntmaps++], &why)) {
                    strbuf_printf(error,
                                  "bad tric.tensor_map line '%.*s' in the tric metadata block: %s",
                                  (int)vlen, val, why);
                    return false;
                }
            } else if (!strcmp(key, "param_names")) {
                const char *p = val, *stop = val + vlen;
                for (int i = 0; i < (int)(sizeof m->params / sizeof m->params[0]) && p < stop;
                     i++) {
                    while (p < stop && is_blank(*p))
                        p++;
                    const char *q = p;
                    while (q < stop && !is_blank(*q))
                        q++;
                    copy_field(m->params[i].name, sizeof m->params[i].name, p, (size_t)(q - p));
                    p = q;
                }
            } else if (!strcmp(key, "params")) {
                const char *p = val, *stop = val + vlen;
                while (p < stop) {
                    while (p < stop && *p == ' ')
                        p++;
                    const char *q = p;
                    while (q < stop && *q != ' ')
                        q++;
                    if (q == p)
                        break;
                    if (m->nparams == (int)(sizeof m->params / sizeof m->params[0]) ||
                        !parse_param_sig(p, (size_t)(q - p), &m->params[m->nparams])) {
                        strbuf_printf(error, "bad parameter '%.*s' in the tric metadata block",
                                      (int)(q - p), p);
                        return false;
                    }
                    m->nparams++;
                    p = q;
                }
            }
        }
        line = nl ? nl + 1 : line + len;
    }
    if (!seen_kernel || !seen_threads || m->threads <= 0 || m->threads > 1024 ||
        m->shared_bytes < 0) {
        strbuf_append(error,
                      "the tric metadata block lacks the kernel name or a valid thread count");
        return false;
    }
    return tensor_maps_check(m, error);
}

static const char no_block[] = "no tric metadata block (// tric.begin ... // tric.end) in the PTX; "
                               "was it written by tric?";

/* The first line at or after from that reads exactly `text` (a '\r' before its end tolerated):
 * the block's markers are whole lines, so a value that happens to contain one ends nothing. */
static const char *find_line(const char *ptx, const char *from, const char *text)
{
    size_t n = strlen(text);
    for (const char *p = from; (p = strstr(p, text)) != NULL; p += n) {
        const char *after = p + n;
        if (*after == '\r')
            after++;
        if ((p == ptx || p[-1] == '\n') && (*after == '\n' || *after == '\0'))
            return p;
    }
    return NULL;
}

bool kernel_meta_read(const char *ptx, KernelMeta *m, StrBuf *error)
{
    const char *begin = find_line(ptx, ptx, "// tric.begin");
    const char *end = begin ? find_line(ptx, begin, "// tric.end") : NULL;
    if (!begin || !end) {
        memset(m, 0, sizeof *m);
        strbuf_append(error, no_block);
        return false;
    }
    return meta_block(begin, end, m, error);
}

int kernel_meta_read_all(const char *ptx, KernelMeta **out, StrBuf *error)
{
    *out = NULL;
    int n = 0, cap = 0;
    for (const char *p = ptx;;) {
        const char *begin = find_line(ptx, p, "// tric.begin");
        const char *end = begin ? find_line(ptx, begin, "// tric.end") : NULL;
        if (!begin || !end)
            break;
        if (n == cap) {
            cap = cap ? 2 * cap : 4;
            KernelMeta *grown = realloc(*out, sizeof **out * (size_t)cap);
            if (!grown) {
                strbuf_append(error, "out of memory");
                free(*out);
                *out = NULL;
                return -1;
            }
            *out = grown;
        }
        if (!meta_block(begin, end, &(*out)[n], error)) {
            free(*out);
            *out = NULL;
            return -1;
        }
        n++;
        p = end + 1;
    }
    if (n == 0) {
        strbuf_append(error, no_block);
        return -1;
    }
    return n;
}
