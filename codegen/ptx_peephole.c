/* ptx_peephole.c: a rewrite of NVPTX's PTX text that LLVM 19's instruction selection does not make.
 *
 * An address `base + (i64)i * size` comes out of LLVM 19 as
 *
 *     mul.wide.s32  %rd2, %r1, 2;
 *     add.s64       %rd3, %rd1, %rd2;
 *
 * which ptxas turns into one IMAD.WIDE, a 64-bit multiply-add on the FMA pipe. Beside wgmma that
 * instruction stalls dispatch: tutorial 09's persistent matmul, whose copies compute twelve such
 * addresses per iteration, ran at 0.87-0.89x Triton with ncu's "dispatch" the first stall
 * reason, and at 0.98-1.01x with the same PTX but mad.wide (H200, 2026-11-29). Newer LLVMs (the one
 * Triton ships) select `mad.wide.s32 %rd3, %r1, 2, %rd1` (PTX ISA 9.7.1.7, mad.wide), which ptxas
 * lowers to an LEA / LEA.HI.X pair on the integer pipe. This pass makes that fusion on the text:
 * a mul.wide.{s32,u32} immediately followed by an add.s64 that reads its result, where that result
 * is read nowhere else in the function, becomes one mad.wide at the add. Adjacent lines only, so
 * nothing can redefine the multiply's operands in between; unpredicated instructions only. The
 * arithmetic is the same (a * b computed exactly in 64 bits, then added modulo 2^64). */
#include "codegen/internal.h"

#include <stdlib.h>
#include <string.h>

/* One instruction line split as `opcode a, b, c;`: views into the line. */
typedef struct {
    const char *op;
    size_t op_len;
    const char *arg[4];
    size_t arg_len[4];
    int nargs;
} PtxInsn;

static bool is_space(char c) { return c == ' ' || c == '\t'; }

/* Splits line [s, e) into an unpredicated instruction; false for labels, directives, comments,
 * predicated instructions and anything else. */
static bool parse_insn(const char *s, const char *e, PtxInsn *in)
{
    while (s < e && is_space(*s))
        s++;
    if (s == e || *s == '@' || *s == '.' || *s == '/' || *s == '$' || *s == '{' || *s == '}')
        return false;
    in->op = s;
    while (s < e && !is_space(*s))
        s++;
    in->op_len = (size_t)(s - in->op);
    in->nargs = 0;
    while (s < e) {
        while (s < e && is_space(*s))
            s++;
        const char *a = s;
        while (s < e && *s != ',' && *s != ';')
            s++;
        if (s == e || in->nargs == 4)
            return false;
        in->arg[in->nargs] = a;
        in->arg_len[in->nargs++] = (size_t)(s - a);
        if (*s++ == ';')
            return true;
    }
    return false;
}

static bool op_is(const PtxInsn *in, const char *name)
{
    return in->op_len == strlen(name) && memcmp(in->op, name, in->op_len) == 0;
}

/* The number of a 64-bit register `%rdN` spelled exactly by [s, s + n); -1 otherwise. */
static long rd_number(const char *s, size_t n)
{
    if (n < 4 || memcmp(s, "%rd", 3) != 0)
        return -1;
    long v = 0;
    for (size_t i = 3; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* Counts every mention of each %rdN in [s, e) (definitions and uses alike) into *counts. */
static void count_rd_mentions(const char *s, const char *e, int **counts, long *ncounts)
{
    for (const char *p = s; p + 3 < e; p++) {
        if (memcmp(p, "%rd", 3) != 0 || p[3] < '0' || p[3] > '9')
            continue;
        long v = 0;
        const char *q = p + 3;
        while (q < e && *q >= '0' && *q <= '9')
            v = v * 10 + (*q++ - '0');
        if (v >= *ncounts) {
            long n = v * 2 + 64;
            *counts = realloc(*counts, (size_t)n * sizeof **counts);
            if (!*counts)
                abort();
            memset(*counts + *ncounts, 0, (size_t)(n - *ncounts) * sizeof **counts);
            *ncounts = n;
        }
        (*counts)[v]++;
        p = q - 1;
    }
}

/* The end of the line starting at s (its '\n', or e). */
static const char *line_end(const char *s, const char *e)
{
    const char *n = memchr(s, '\n', (size_t)(e - s));
    return n ? n : e;
}

/* Rewrites one function's text [s, e) into out. */
static void fuse_in_function(const char *s, const char *e, StrBuf *out, int **counts, long *ncounts)
{
    if (*ncounts)
        memset(*counts, 0, (size_t)*ncounts * sizeof **counts);
    count_rd_mentions(s, e, counts, ncounts);
    const char *line = s;
    while (line < e) {
        const char *le = line_end(line, e);
        const char *next = le < e ? le + 1 : e;
        PtxInsn mul, add;
        if (next < e && parse_insn(line, le, &mul) && mul.nargs == 3 &&
            (op_is(&mul, "mul.wide.s32") || op_is(&mul, "mul.wide.u32"))) {
            long prod = rd_number(mul.arg[0], mul.arg_len[0]);
            const char *le2 = line_end(next, e);
            if (prod >= 0 && (*counts)[prod] == 2 && parse_insn(next, le2, &add) &&
                op_is(&add, "add.s64") && add.nargs == 3) {
                int other = rd_number(add.arg[1], add.arg_len[1]) == prod   ? 2
                            : rd_number(add.arg[2], add.arg_len[2]) == prod ? 1
                                                                            : 0;
                if (other && rd_number(add.arg[other], add.arg_len[other]) >= 0) {
                    strbuf_printf(out, "\tmad.wide.%.3s \t%.*s, %.*s, %.*s, %.*s;\n", mul.op + 9,
                                  (int)add.arg_len[0], add.arg[0], (int)mul.arg_len[1], mul.arg[1],
                                  (int)mul.arg_len[2], mul.arg[2], (int)add.arg_len[other],
                                  add.arg[other]);
                    line = le2 < e ? le2 + 1 : e;
                    continue;
                }
            }
        }
        strbuf_append_n(out, line, (size_t)(next - line));
        line = next;
    }
}

/* Whether the line [s, e) opens a function: a column-0 directive naming .entry or .func. (A `}` at
 * column 0 does not close one reliably: inline asm blocks print theirs there too.) */
static bool opens_function(const char *s, const char *e)
{
    if (s == e || *s != '.')
        return false;
    for (const char *p = s; p < e; p++) {
        size_t left = (size_t)(e - p);
        if ((left >= 6 && memcmp(p, ".entry", 6) == 0) || (left >= 5 && memcmp(p, ".func", 5) == 0))
            return true;
    }
    return false;
}

void codegen_ptx_fuse_mad_wide(StrBuf *ptx, size_t from)
{
    if (ptx->len <= from)
        return;
    StrBuf out = {0};
    int *counts = NULL;
    long ncounts = 0;
    const char *s = ptx->data + from, *e = ptx->data + ptx->len;
    /* Registers are scoped to a function: count and fuse one function (from its .entry or .func
     * line to the next one's) at a time. */
    while (s < e) {
        const char *chunk_end = line_end(s, e);
        chunk_end = chunk_end < e ? chunk_end + 1 : e;
        while (chunk_end < e && !opens_function(chunk_end, line_end(chunk_end, e))) {
            const char *le = line_end(chunk_end, e);
            chunk_end = le < e ? le + 1 : e;
        }
        fuse_in_function(s, chunk_end, &out, &counts, &ncounts);
        s = chunk_end;
    }
    free(counts);
    ptx->len = from;
    ptx->data[from] = '\0';
    strbuf_append_n(ptx, out.data ? out.data : "", out.len);
    strbuf_free(&out);
}
