/* parse.c: the tile IR text form (print.c's grammar) read back into an IrFunc.
 *
 * A recursive-descent reader over characters: IR types ("<64x*fp16>") and layouts do not
 * tokenize like ordinary words, so each rule reads the characters it expects. Values are
 * resolved in order, so a use must follow its definition ("use of undefined value %7");
 * dominance inside structured regions is the verifier's job. The first error stops the parse:
 * it is reported through diag with the IR text's file:line:col, and ir_parse returns NULL. */
#include "ir/ir.h"

#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

typedef struct Parser {
    const SrcFile *file;
    const char *text;
    size_t len, pos;
    int line, col;
    int last_line;         /* the line where the last character of a token was read */
    int end_line, end_col; /* just after that character */
    Arena *arena;
    Diag *diag;
    IrFunc *f;
    ValueId *by_number; /* printed number -> ValueId (0: not defined) */
    int32_t nnumbers;
    const SrcFile **files; /* loc("file") names seen, one SrcFile each */
    int nfiles, files_cap;
    jmp_buf fail;
} Parser;

/* ---- characters ---------------------------------------------------------------------------- */

static int peek_at(Parser *p, size_t k)
{
    return p->pos + k < p->len ? (unsigned char)p->text[p->pos + k] : 0;
}
static int peek(Parser *p) { return peek_at(p, 0); }

static void advance_raw(Parser *p)
{
    if (p->pos >= p->len)
        return;
    if (p->text[p->pos] == '\n') {
        p->line++;
        p->col = 1;
    } else {
        p->col++;
    }
    p->pos++;
}

/* Consumes one character of a token (not whitespace). */
static void advance(Parser *p)
{
    p->last_line = p->line;
    advance_raw(p);
    p->end_line = p->line;
    p->end_col = p->col;
}

/* Spaces, newlines and "// comments". */
static void skip_ws(Parser *p)
{
    for (;;) {
        int c = peek(p);
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            advance_raw(p);
        } else if (c == '/' && peek_at(p, 1) == '/') {
            while (peek(p) && peek(p) != '\n')
                advance_raw(p);
        } else {
            return;
        }
    }
}

/* Spaces on this line only; true when the line ends here (newline, comment or end of input). */
static bool at_line_end(Parser *p)
{
    while (peek(p) == ' ' || peek(p) == '\t' || peek(p) == '\r')
        advance_raw(p);
    int c = peek(p);
    return c == 0 || c == '\n' || (c == '/' && peek_at(p, 1) == '/');
}

/* At "loc(": an op's location follows. */
static bool at_loc(Parser *p)
{
    return peek(p) == 'l' && peek_at(p, 1) == 'o' && peek_at(p, 2) == 'c' && peek_at(p, 3) == '(';
}

/* At "smem(": an op's shared-memory range follows. */
static bool at_smem(Parser *p)
{
    return p->pos + 5 <= p->len && strncmp(p->text + p->pos, "smem(", 5) == 0;
}

static SrcLoc here(Parser *p) { return (SrcLoc){.file = p->file, .line = p->line, .col = p->col}; }

static _Noreturn void fail_at(Parser *p, SrcLoc loc, const char *fmt, ...) TRIC_PRINTF(3, 4);
static _Noreturn void fail_at(Parser *p, SrcLoc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_verror(p->diag, loc, fmt, ap);
    va_end(ap);
    longjmp(p->fail, 1);
}

/* Where "expected X" points: here, or just after the last token when X was due on its line and
 * the next token is on a later one (clang does the same). */
static SrcLoc expect_loc(Parser *p)
{
    if (p->end_line > 0 && p->line > p->end_line)
        return (SrcLoc){.file = p->file, .line = p->end_line, .col = p->end_col};
    return here(p);
}

#define FAIL(p, ...) fail_at((p), expect_loc(p), __VA_ARGS__)

static bool is_ident_char(int c) { return isalnum(c) || c == '_' || c == '.'; }

/* What the next few characters are, for messages ("found 'i32'"). */
static const char *found(Parser *p)
{
    if (p->pos >= p->len)
        return "end of input";
    size_t n = 0;
    if (is_ident_char(peek(p)))
        while (p->pos + n < p->len && n < 24 && is_ident_char((unsigned char)p->text[p->pos + n]))
            n++;
    else
        n = 1;
    return arena_printf(p->arena, "'%.*s'", (int)n, p->text + p->pos);
}

static bool accept(Parser *p, char c)
{
    skip_ws(p);
    if (peek(p) != c)
        return false;
    advance(p);
    return true;
}

static void expect(Parser *p, char c, const char *where)
{
    if (!accept(p, c))
        FAIL(p, "expected '%c' %s, found %s", c, where, found(p));
}

/* Reads [A-Za-z0-9_.]+ (after whitespace); NULL when none is here. */
static const char *ident(Parser *p)
{
    skip_ws(p);
    size_t start = p->pos;
    if (!is_ident_char(peek(p)) || isdigit(peek(p)))
        return NULL;
    while (is_ident_char(peek(p)))
        advance(p);
    return arena_strndup(p->arena, p->text + start, p->pos - start);
}

static bool accept_word(Parser *p, const char *word)
{
    skip_ws(p);
    size_t n = strlen(word);
    if (p->pos + n > p->len || strncmp(p->text + p->pos, word, n) != 0 ||
        is_ident_char(peek_at(p, n)))
        return false;
    for (size_t i = 0; i < n; i++)
        advance(p);
    return true;
}

static void expect_word(Parser *p, const char *word, const char *where)
{
    if (!accept_word(p, word))
        FAIL(p, "expected '%s' %s, found %s", word, where, found(p));
}

/* A number token's characters ("-12", "0x1p-3", "1.5e+10", "inf", "-nan"), copied. */
static const char *number_text(Parser *p, SrcLoc *loc)
{
    skip_ws(p);
    *loc = here(p);
    size_t start = p->pos;
    if (peek(p) == '-' || peek(p) == '+')
        advance(p);
    while (isalnum(peek(p)) || peek(p) == '.' ||
           ((peek(p) == '-' || peek(p) == '+') && p->pos > start &&
            strchr("eEpP", p->text[p->pos - 1]) && !isalpha(peek_at(p, 1))))
        advance(p);
    if (p->pos == start)
        FAIL(p, "expected a number, found %s", found(p));
    return arena_strndup(p->arena, p->text + start, p->pos - start);
}

static int64_t int_from_text(Parser *p, const char *s, SrcLoc loc)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (*end || errno)
        fail_at(p, loc, "expected an integer, found '%s'", s);
    return v;
}

static int64_t int64_value(Parser *p)
{
    SrcLoc loc;
    const char *s = number_text(p, &loc);
    return int_from_text(p, s, loc);
}

static int int_value(Parser *p)
{
    SrcLoc loc;
    const char *s = number_text(p, &loc);
    int64_t v = int_from_text(p, s, loc);
    if (v < INT32_MIN || v > INT32_MAX)
        fail_at(p, loc, "integer %s does not fit in 32 bits", s);
    return (int)v;
}

static double float_from_text(Parser *p, const char *s, SrcLoc loc)
{
    char *end;
    double v = strtod(s, &end);
    if (*end || end == s)
        fail_at(p, loc, "expected a number, found '%s'", s);
    return v;
}

/* "..." with \" \\ \n \t \xHH escapes. */
static const char *string_value(Parser *p)
{
    skip_ws(p);
    if (peek(p) != '"')
        FAIL(p, "expected a string, found %s", found(p));
    advance(p);
    StrBuf sb = {0};
    for (;;) {
        int c = peek(p);
        if (c == 0 || c == '\n') {
            strbuf_free(&sb);
            FAIL(p, "unterminated string");
        }
        advance(p);
        if (c == '"')
            break;
        if (c == '\\') {
            int e = peek(p);
            advance(p);
            if (e == 'n')
                c = '\n';
            else if (e == 't')
                c = '\t';
            else if (e == 'x' && isxdigit(peek(p)) && isxdigit(peek_at(p, 1))) {
                char hex[3] = {(char)peek(p), (char)peek_at(p, 1), 0};
                advance(p);
                advance(p);
                c = (int)strtol(hex, NULL, 16);
            } else
                c = e;
        }
        strbuf_putc(&sb, (char)c);
    }
    const char *s = arena_strdup(p->arena, sb.data ? sb.data : "");
    strbuf_free(&sb);
    return s;
}

/* ---- values -------------------------------------------------------------------------------- */

/* "%N": the number, with its location. */
static int32_t value_number(Parser *p, SrcLoc *loc)
{
    skip_ws(p);
    *loc = here(p);
    if (peek(p) != '%')
        FAIL(p, "expected a value (%%N), found %s", found(p));
    advance(p);
    if (!isdigit(peek(p)))
        FAIL(p, "expected a value number after '%%', found %s", found(p));
    int64_t n = 0;
    while (isdigit(peek(p))) {
        n = n * 10 + (peek(p) - '0');
        if (n > (1 << 24))
            fail_at(p, *loc, "value number too large");
        advance(p);
    }
    return (int32_t)n;
}

static void define_number(Parser *p, int32_t n, SrcLoc loc, ValueId v)
{
    if (n >= p->nnumbers) {
        int32_t cap = p->nnumbers ? p->nnumbers : 64;
        while (cap <= n)
            cap *= 2;
        p->by_number = arena_grow(p->arena, p->by_number, (size_t)p->nnumbers * sizeof(ValueId),
                                  (size_t)cap * sizeof(ValueId));
        p->nnumbers = cap;
    }
    if (p->by_number[n])
        fail_at(p, loc, "redefinition of value %%%d", (int)n);
    p->by_number[n] = v;
}

/* A use: "%N" or "none" (no value). */
static ValueId use_value(Parser *p)
{
    if (accept_word(p, "none"))
        return 0;
    SrcLoc loc;
    int32_t n = value_number(p, &loc);
    if (n >= p->nnumbers || !p->by_number[n])
        fail_at(p, loc, "use of undefined value %%%d", (int)n);
    return p->by_number[n];
}

/* ---- types and layouts --------------------------------------------------------------------- */

static Type elem_type(Parser *p)
{
    skip_ws(p);
    bool is_ptr = false;
    if (peek(p) == '*') {
        is_ptr = true;
        advance(p);
    }
    SrcLoc loc = here(p);
    size_t start = p->pos;
    while (isalnum(peek(p)))
        advance(p);
    char name[32];
    size_t n = p->pos - start;
    if (n == 0 || n >= sizeof name)
        fail_at(p, loc, "expected an element type (i32, fp16, *fp32, ...), found %s", found(p));
    memcpy(name, p->text + start, n);
    name[n] = 0;
    DType dt;
    if (!dtype_from_name(name, &dt))
        fail_at(p, loc, "unknown element type '%s'", name);
    return is_ptr ? type_ptr(dt) : type_scalar(dt);
}

/* type = elem | ["!smem"] "<" (INT "x")+ elem ">"      (!smem: a tile in shared memory) */
static Type parse_type(Parser *p)
{
    skip_ws(p);
    bool is_smem = false;
    if (peek(p) == '!') {
        SrcLoc loc = here(p);
        advance(p);
        size_t start = p->pos;
        while (isalnum(peek(p)))
            advance(p);
        if (p->pos - start != 4 || strncmp(p->text + start, "smem", 4) != 0)
            fail_at(p, loc, "unknown type '!%.*s' (only !smem<...> is known)",
                    (int)(p->pos - start), p->text + start);
        if (peek(p) != '<')
            FAIL(p, "expected '<' after '!smem', found %s", found(p));
        is_smem = true;
    }
    if (peek(p) != '<')
        return elem_type(p);
    advance(p);
    int32_t shape[TRIC_MAX_RANK];
    int rank = 0;
    while (isdigit(peek(p))) {
        SrcLoc loc = here(p);
        int64_t d = 0;
        while (isdigit(peek(p))) {
            d = d * 10 + (peek(p) - '0');
            if (d > INT32_MAX)
                fail_at(p, loc, "dimension too large");
            advance(p);
        }
        if (rank == TRIC_MAX_RANK)
            fail_at(p, loc, "a block has at most %d dimensions", TRIC_MAX_RANK);
        shape[rank++] = (int32_t)d;
        if (peek(p) != 'x')
            FAIL(p, "expected 'x' after a dimension, found %s", found(p));
        advance(p);
    }
    if (rank == 0)
        FAIL(p, "expected a dimension after '<', found %s", found(p));
    Type elem = elem_type(p);
    if (peek(p) != '>')
        FAIL(p, "expected '>' after a block type, found %s", found(p));
    advance(p);
    Type t = type_block(elem, rank, shape);
    t.is_smem = is_smem;
    return t;
}

static int int_list(Parser *p, int *out, int max)
{
    expect(p, '[', "to start a list");
    int n = 0;
    if (accept(p, ']'))
        return 0;
    do {
        SrcLoc loc = here(p);
        int v = int_value(p);
        if (n == max)
            fail_at(p, loc, "a list of at most %d numbers is expected here", max);
        out[n++] = v;
    } while (accept(p, ','));
    expect(p, ']', "after a list");
    return n;
}

static int parse_layout(Parser *p);

/* layout = "#" KIND "<" key "=" value ("," key "=" value)* ">" */
static int parse_layout(Parser *p)
{
    skip_ws(p);
    SrcLoc loc = here(p);
    expect(p, '#', "to start a layout");
    const char *kind = ident(p);
    Layout l = {0};
    if (!kind)
        FAIL(p, "expected a layout kind after '#', found %s", found(p));
    if (strcmp(kind, "none") == 0)
        return 0;
    if (strcmp(kind, "blocked") == 0)
        l.kind = LAYOUT_BLOCKED;
    else if (strcmp(kind, "slice") == 0)
        l.kind = LAYOUT_SLICE;
    else if (strcmp(kind, "mma") == 0)
        l.kind = LAYOUT_MMA;
    else if (strcmp(kind, "dot_op") == 0)
        l.kind = LAYOUT_DOT_OPERAND;
    else if (strcmp(kind, "shared") == 0)
        l.kind = LAYOUT_SHARED;
    else
        fail_at(p, loc, "unknown layout '#%s'", kind);
    if (peek(p) != '<')
        FAIL(p, "expected '<' after '#%s', found %s", kind, found(p));
    advance(p);
    int rank = -1;
    do {
        SrcLoc kloc = here(p);
        const char *key = ident(p);
        if (!key)
            FAIL(p, "expected a layout field, found %s", found(p));
        expect(p, '=', "after a layout field");
        int *list = NULL;
        int *scalar = NULL;
        switch (l.kind) {
        case LAYOUT_BLOCKED:
            if (!strcmp(key, "spt"))
                list = l.blocked.size_per_thread;
            else if (!strcmp(key, "tpw"))
                list = l.blocked.threads_per_warp;
            else if (!strcmp(key, "wpc"))
                list = l.blocked.warps_per_cta;
            else if (!strcmp(key, "order"))
                list = l.blocked.order;
            break;
        case LAYOUT_SLICE:
            if (!strcmp(key, "dim"))
                scalar = &l.slice.dim;
            else if (!strcmp(key, "parent")) {
                l.slice.parent = parse_layout(p);
                continue;
            }
            break;
        case LAYOUT_MMA:
            if (!strcmp(key, "version"))
                scalar = &l.mma.version;
            else if (!strcmp(key, "wpc"))
                list = l.mma.warps_per_cta;
            else if (!strcmp(key, "instr")) {
                int n = int_list(p, l.mma.instr_shape, 3);
                if (n != 3)
                    fail_at(p, kloc, "instr needs 3 numbers (M, N, K), found %d", n);
                continue;
            }
            break;
        case LAYOUT_DOT_OPERAND:
            if (!strcmp(key, "idx"))
                scalar = &l.dot_operand.op_idx;
            else if (!strcmp(key, "kwidth"))
                scalar = &l.dot_operand.k_width;
            else if (!strcmp(key, "parent")) {
                l.dot_operand.parent = parse_layout(p);
                continue;
            }
            break;
        case LAYOUT_SHARED:
            if (!strcmp(key, "swizzle"))
                scalar = &l.shared.swizzle;
            else if (!strcmp(key, "vec"))
                scalar = &l.shared.vec;
            else if (!strcmp(key, "per_phase"))
                scalar = &l.shared.per_phase;
            else if (!strcmp(key, "max_phase"))
                scalar = &l.shared.max_phase;
            else if (!strcmp(key, "order"))
                list = l.shared.order;
            break;
        case LAYOUT_NONE: break;
        }
        if (scalar) {
            *scalar = int_value(p);
        } else if (list) {
            int n = int_list(p, list, TRIC_MAX_RANK);
            if (rank >= 0 && n != rank)
                fail_at(p, kloc, "'%s' has %d entries, expected %d like the other fields", key, n,
                        rank);
            rank = n;
        } else {
            fail_at(p, kloc, "unknown field '%s' in #%s", key, kind);
        }
    } while (accept(p, ','));
    expect(p, '>', "to end a layout");
    /* A slice drops one dim of its parent; a dot operand has its mma parent's rank. */
    if (l.kind == LAYOUT_SLICE)
        rank = p->f->layouts[l.slice.parent].rank - 1;
    else if (l.kind == LAYOUT_DOT_OPERAND)
        rank = p->f->layouts[l.dot_operand.parent].rank;
    l.rank = rank < 0 ? 0 : rank;
    return ir_layout_intern(p->f, &l);
}

/* The optional layout after a type. */
static int opt_layout(Parser *p)
{
    skip_ws(p);
    return peek(p) == '#' ? parse_layout(p) : 0;
}

/* True when a "{" here starts an attribute dict (`{key =` or `{key}`), not a region. */
static bool at_dict(Parser *p)
{
    skip_ws(p);
    if (peek(p) != '{')
        return false;
    size_t k = 1;
    while (peek_at(p, k) == ' ')
        k++;
    if (!isalpha(peek_at(p, k)))
        return false;
    while (is_ident_char(peek_at(p, k)))
        k++;
    while (peek_at(p, k) == ' ')
        k++;
    return peek_at(p, k) == '=' || peek_at(p, k) == '}' || peek_at(p, k) == ',';
}

/* "{name = "x"}" after a result or region arg type. */
static const char *opt_name_dict(Parser *p)
{
    if (!at_dict(p))
        return NULL;
    expect(p, '{', "");
    SrcLoc loc = here(p);
    const char *key = ident(p);
    if (!key || strcmp(key, "name") != 0)
        fail_at(p, loc, "expected 'name' in a value's attributes, found '%s'", key ? key : "");
    expect(p, '=', "after 'name'");
    const char *name = string_value(p);
    expect(p, '}', "after a value's attributes");
    return name;
}

/* typed = "%N" ":" type [layout] [{name = "x"}]: a region argument, defined here. */
static void region_arg(Parser *p, IrRegion *r)
{
    SrcLoc loc;
    int32_t n = value_number(p, &loc);
    expect(p, ':', "after a region argument");
    Type t = parse_type(p);
    int layout = opt_layout(p);
    const char *name = opt_name_dict(p);
    ValueId v = ir_region_add_arg(p->f, r, t, name);
    p->f->values[v].layout = layout;
    define_number(p, n, loc, v);
}

/* ---- ops ----------------------------------------------------------------------------------- */

static const char *operand_label(OpCode code, int i)
{
    if (code == OP_LOAD)
        return i == 1 ? "mask" : i == 2 ? "other" : NULL;
    if (code == OP_ASYNC_COPY)
        return i == 2 ? "mask" : i == 3 ? "other" : NULL;
    if (code == OP_STORE || code == OP_ATOMIC_RMW)
        return i == 2 ? "mask" : NULL;
    if (code == OP_FOR)
        return i >= 3 ? "iter" : NULL;
    if (code == OP_WGMMA)
        return i == 3 ? "guard" : NULL;
    return NULL;
}

static int regions_of(OpCode code)
{
    return code == OP_FOR ? 1 : (code == OP_IF || code == OP_WHILE) ? 2 : 0;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static const SrcFile *intern_file(Parser *p, const char *name)
{
    for (int i = 0; i < p->nfiles; i++)
        if (strcmp(p->files[i]->name, name) == 0)
            return p->files[i];
    SrcFile *sf = arena_alloc(p->arena, sizeof *sf);
    sf->name = name;
    /* A loc() into the IR text itself (same base name) borrows its text, so messages show the
     * line and a caret; other files' text is not at hand, and messages print no source line. */
    if (p->file->name && p->file->text && strcmp(base_name(p->file->name), base_name(name)) == 0) {
        sf->text = p->file->text;
        sf->len = p->file->len;
    }
    ARENA_PUSH(p->arena, p->files, p->nfiles, p->files_cap, (const SrcFile *)sf);
    return sf;
}

typedef struct OpAttrs {
    int64_t attr[TRIC_MAX_RANK];
    const char *sattr;
    WarpPartition partition;
} OpAttrs;

/* dict = "{" key "=" (INT | "[" INT,* "]" | STRING) ("," ...)* "}" before the result types. */
static void op_attr_dict(Parser *p, OpCode code, OpAttrs *a)
{
    expect(p, '{', "");
    do {
        SrcLoc loc = here(p);
        const char *key = ident(p);
        if (!key)
            FAIL(p, "expected an attribute name, found %s", found(p));
        expect(p, '=', "after an attribute name");
        if (!strcmp(key, "msg") && code == OP_ASSERT) {
            a->sattr = string_value(p);
        } else if (!strcmp(key, "partition")) {
            SrcLoc vloc = here(p);
            const char *name = ident(p);
            if (!ir_partition_from_name(name, &a->partition))
                fail_at(p, vloc, "partition: expected all, consumer or producer, found %s",
                        name ? name : found(p));
        } else if (!strcmp(key, "fn") && code == OP_LIBDEVICE) {
            SrcLoc sloc = here(p);
            const char *fname = string_value(p);
            LibdeviceFn fn;
            if (!libdevice_from_name(fname, &fn))
                fail_at(p, sloc, "unknown libdevice function \"%s\"", fname);
            a->attr[0] = fn;
        } else if ((code == OP_ATOMIC_RMW && !strcmp(key, "kind")) ||
                   ((code == OP_ATOMIC_RMW || code == OP_ATOMIC_CAS) &&
                    (!strcmp(key, "sem") || !strcmp(key, "scope")))) {
            SrcLoc sloc = here(p);
            const char *name = string_value(p);
            AtomicKind kind;
            MemSem sem;
            MemScope scope;
            if (key[1] == 'i') { /* kind */
                if (!atomic_kind_from_name(name, &kind))
                    fail_at(p, sloc,
                            "unknown atomic kind \"%s\" (add, max, min, and, or, xor, xchg)", name);
                a->attr[0] = kind;
            } else if (key[1] == 'e') { /* sem */
                if (!mem_sem_from_name(name, &sem))
                    fail_at(p, sloc,
                            "unknown memory semantic \"%s\" (acq_rel, acquire, release, relaxed)",
                            name);
                a->attr[1] = sem;
            } else {
                if (!mem_scope_from_name(name, &scope))
                    fail_at(p, sloc, "unknown memory scope \"%s\" (gpu, cta, sys)", name);
                a->attr[2] = scope;
            }
        } else if (!strcmp(key, "attr") || (!strcmp(key, "perm") && code == OP_TRANS) ||
                   (!strcmp(key, "offsets") && code == OP_SUBTILE) ||
                   (!strcmp(key, "divisibility") && code == OP_MULTIPLE_OF) ||
                   (!strcmp(key, "contiguity") && code == OP_MAX_CONTIGUOUS)) {
            expect(p, '[', "to start a list");
            int n = 0;
            memset(a->attr, 0, sizeof a->attr);
            if (!accept(p, ']')) {
                do {
                    SrcLoc vloc = here(p);
                    int64_t v = int64_value(p);
                    if (n == TRIC_MAX_RANK)
                        fail_at(p, vloc, "at most %d numbers are expected here", TRIC_MAX_RANK);
                    a->attr[n++] = v;
                } while (accept(p, ','));
                expect(p, ']', "after a list");
            }
        } else if (code == OP_SCAN && !strcmp(key, "combine")) {
            SrcLoc vloc = here(p);
            const char *name = ident(p);
            OpCode comb;
            if (!name || !op_from_name(name, &comb))
                fail_at(p, vloc,
                        "combine: expected a binary op name (add, mul, max, min, and, or, xor)");
            else
                a->attr[1] = comb;
        } else if (code == OP_SCAN && !strcmp(key, "reverse")) {
            a->attr[2] = int64_value(p);
        } else if (code == OP_WGMMA && !strcmp(key, "trans_b")) {
            a->attr[1] = int64_value(p);
        } else if ((code == OP_DOT || code == OP_WGMMA) && !strcmp(key, "max_num_imprecise_acc")) {
            a->attr[2] = int64_value(p);
        } else if ((!strcmp(key, "axis") &&
                    (code == OP_SCAN || code == OP_EXPAND_DIMS || code == OP_REDUCE_SUM ||
                     code == OP_REDUCE_MAX || code == OP_REDUCE_MIN || code == OP_ARGMAX ||
                     code == OP_ARGMIN)) ||
                   (!strcmp(key, "allow_tf32") && (code == OP_DOT || code == OP_WGMMA)) ||
                   (!strcmp(key, "pending") && (code == OP_ASYNC_WAIT || code == OP_WGMMA_WAIT)) ||
                   (!strcmp(key, "fence_async") && code == OP_BARRIER) ||
                   (!strcmp(key, "l1") && code == OP_PREFETCH) ||
                   (!strcmp(key, "half") && code == OP_SPLIT) ||
                   (!strcmp(key, "bytes") && code == OP_MBAR_EXPECT) ||
                   (!strcmp(key, "arrivals") && code == OP_MBAR_INIT) ||
                   (!strcmp(key, "tmap") && (code == OP_TMA_LOAD || code == OP_TMA_STORE))) {
            a->attr[0] = int64_value(p);
        } else if (!strcmp(key, "contig") && code == OP_TMA_STORE) {
            a->attr[1] = int64_value(p);
        } else {
            fail_at(p, loc, "unknown attribute '%s' for '%s'", key, op_name(code));
        }
    } while (accept(p, ','));
    expect(p, '}', "after the attributes");
}

static void parse_region_body(Parser *p, IrRegion *r, bool allow_args);

/* tile = layout | "strides" "[" INT ("," INT)* "]" */
static void parse_scratch_tile(Parser *p, IrScratchTile *t)
{
    skip_ws(p);
    if (peek(p) == '#') {
        t->layout = parse_layout(p);
        return;
    }
    expect_word(p, "strides", "or a #shared layout in a scratch record");
    expect(p, '[', "after 'strides'");
    if (accept(p, ']'))
        return; /* a scalar's slot: "strides []" */
    do {
        SrcLoc loc = here(p);
        int64_t v = int64_value(p);
        if (t->nstrides == TRIC_MAX_RANK)
            fail_at(p, loc, "a scratch tile has at most %d strides", TRIC_MAX_RANK);
        t->strides[t->nstrides++] = v;
    } while (accept(p, ','));
    expect(p, ']', "after a tile's strides");
}

/* A dot's operand: ("a" | "b") "=" ("registers" | "source" | "slot") ["at" INT tile] */
static bool parse_dot_operand(Parser *p, IrOp *op, int i)
{
    expect_word(p, i ? "b" : "a", "in a dot's scratch record");
    expect(p, '=', "after a dot operand's name");
    SrcLoc loc = here(p);
    const char *from = ident(p);
    if (from && !strcmp(from, "registers"))
        op->scratch.from[i] = DOT_FROM_REGISTERS;
    else if (from && !strcmp(from, "source"))
        op->scratch.from[i] = DOT_FROM_SOURCE;
    else if (from && !strcmp(from, "slot"))
        op->scratch.from[i] = DOT_FROM_SLOT;
    else
        fail_at(p, loc, "expected registers, source or slot, found %s", from ? from : found(p));
    if (!accept_word(p, "at"))
        return false;
    op->scratch.tile[i].offset = int_value(p);
    parse_scratch_tile(p, &op->scratch.tile[i]);
    return true;
}

/* After "smem(offset, bytes,": a dot's two operands (both with a tile or neither), else one
 * tile at the op's offset. */
static void parse_scratch(Parser *p, IrOp *op)
{
    if (op->code != OP_DOT) {
        op->scratch.ntiles = 1;
        op->scratch.tile[0].offset = op->smem_offset;
        parse_scratch_tile(p, &op->scratch.tile[0]);
        if (!accept(p, ','))
            return;
        /* a reduction's or a scan's combine, or a copy's warp_private; the verifier checks it
         * fits the op */
        SrcLoc loc = here(p);
        const char *word = ident(p);
        if (word && !strcmp(word, "warp_private")) {
            op->scratch.warp_private = true;
            return;
        }
        for (ScratchCombine c = SCRATCH_COMBINE_SERIAL; c <= SCRATCH_COMBINE_STEPS; c++)
            if (word && !strcmp(word, ir_scratch_combine_name(c)))
                op->scratch.combine = c;
        if (op->scratch.combine == SCRATCH_COMBINE_NONE)
            fail_at(
                p, loc,
                "expected serial, shuffle, steps or warp_private after a scratch tile, found %s",
                word ? word : found(p));
        return;
    }
    bool a_tile = parse_dot_operand(p, op, 0);
    SrcLoc loc = here(p);
    expect(p, ',', "between a dot's operands");
    if (parse_dot_operand(p, op, 1) != a_tile)
        fail_at(p, loc, "a dot's scratch record places both operands (at OFFSET) or neither");
    op->scratch.ntiles = a_tile ? 2 : 0;
}

/* op = [results "="] OPNAME [positional | operands] [dict] [":" types] regions [smem] [loc] */
static void parse_op(Parser *p, IrRegion *into)
{
    int32_t result_numbers[64];
    SrcLoc result_locs[64];
    int nresults = 0;
    skip_ws(p);
    if (peek(p) == '%') {
        do {
            if (nresults == 64)
                FAIL(p, "too many results");
            result_numbers[nresults] = value_number(p, &result_locs[nresults]);
            nresults++;
        } while (accept(p, ','));
        expect(p, '=', "after the results");
    }
    skip_ws(p);
    SrcLoc name_loc = here(p);
    const char *name = ident(p);
    if (!name)
        fail_at(p, name_loc, "expected an op name, found %s", found(p));
    OpCode code;
    if (!op_from_name(name, &code))
        fail_at(p, name_loc, "unknown op '%s'", name);

    OpAttrs attrs = {0};
    const char *const_text = NULL;
    SrcLoc const_loc = {0};
    ValueId operands[256];
    int noperands = 0;
    switch (code) {
    case OP_CONST: const_text = number_text(p, &const_loc); break;
    case OP_PROGRAM_ID:
    case OP_NUM_PROGRAMS:
    case OP_TILE_COUNT:
    case OP_WORKSPACE: attrs.attr[0] = int64_value(p); break;
    case OP_MAKE_RANGE:
        attrs.attr[0] = int64_value(p);
        expect(p, ',', "between make_range's start and end");
        attrs.attr[1] = int64_value(p);
        break;
    default:
        /* Operands sit on the op's line: "yield" at a line's end, or followed only by its
         * location, has none. */
        if (at_line_end(p) || peek(p) == '{' || peek(p) == ':' || at_loc(p) || at_smem(p))
            break;
        do {
            const char *want = operand_label(code, noperands);
            if (want)
                expect_word(p, want,
                            arena_printf(p->arena, "before operand %d of '%s'", noperands, name));
            if (noperands == 256)
                FAIL(p, "too many operands");
            operands[noperands++] = use_value(p);
        } while (accept(p, ','));
        break;
    }
    if (at_dict(p))
        op_attr_dict(p, code, &attrs);

    Type types[64];
    const char *names[64];
    int layouts[64];
    if (nresults > 0) {
        if (!accept(p, ':'))
            FAIL(p, "expected ':' after operand list, found %s", found(p));
        for (int i = 0; i < nresults; i++) {
            if (i > 0)
                expect(p, ',',
                       arena_printf(p->arena, "between result types ('%s' has %d results)", name,
                                    nresults));
            types[i] = parse_type(p);
            layouts[i] = opt_layout(p);
            names[i] = opt_name_dict(p);
        }
        skip_ws(p);
        if (peek(p) == ',')
            FAIL(p, "more result types than results (%d)", nresults);
    }

    int nregions = regions_of(code);
    IrBuilder b = {.func = p->f, .region = into, .pos = -1};
    IrOp *op = ir_build(&b, code, name_loc, operands, noperands, types, nresults, nregions);
    memcpy(op->attr, attrs.attr, sizeof op->attr);
    op->sattr = attrs.sattr;
    op->partition = (uint8_t)attrs.partition;
    if (code == OP_CONST) {
        Type t = nresults > 0 ? types[0] : type_scalar(DT_I32);
        if (!t.is_ptr && dtype_is_float(t.dtype))
            op->fattr = float_from_text(p, const_text, const_loc);
        else
            op->attr[0] = int_from_text(p, const_text, const_loc);
    }
    for (int i = 0; i < nresults; i++) {
        IrValue *v = &p->f->values[op->results[i]];
        v->layout = layouts[i];
        v->name = names[i];
        define_number(p, result_numbers[i], result_locs[i], op->results[i]);
    }

    for (int i = 0; i < nregions; i++) {
        if (i > 0) {
            if (code == OP_IF)
                accept_word(p, "else");
            else if (code == OP_WHILE)
                accept_word(p, "do");
        }
        if (!accept(p, '{'))
            FAIL(p, "expected '{' to start region %d of '%s' (it has %d), found %s", i, name,
                 nregions, found(p));
        parse_region_body(p, &op->regions[i], true);
    }
    if (accept_word(p, "smem")) {
        expect(p, '(', "after 'smem'");
        op->smem_offset = int_value(p);
        expect(p, ',', "between the shared-memory offset and size");
        op->smem_bytes = int_value(p);
        if (accept(p, ','))
            parse_scratch(p, op);
        expect(p, ')', "after smem(offset, bytes");
    }
    op->loc = (SrcLoc){0};
    if (accept_word(p, "loc")) {
        expect(p, '(', "after 'loc'");
        const char *file = string_value(p);
        expect(p, ':', "after the location's file");
        int line = int_value(p);
        expect(p, ':', "after the location's line");
        int col = int_value(p);
        expect(p, ')', "after a location");
        op->loc = (SrcLoc){.file = intern_file(p, file), .line = line, .col = col};
    }
    /* One op per line: lookahead may have skipped to the next line, which is fine. */
    skip_ws(p);
    if (p->line == p->last_line && peek(p) != 0 && peek(p) != '}')
        FAIL(p, "expected the end of the line after '%s', found %s", name, found(p));
}

/* After "{": ["^" "(" typed,* ")" ":"] op* "}" */
static void parse_region_body(Parser *p, IrRegion *r, bool allow_args)
{
    skip_ws(p);
    if (allow_args && peek(p) == '^') {
        advance(p);
        expect(p, '(', "after '^'");
        if (!accept(p, ')')) {
            do
                region_arg(p, r);
            while (accept(p, ','));
            expect(p, ')', "after the region arguments");
        }
        expect(p, ':', "after the region arguments");
    }
    for (;;) {
        skip_ws(p);
        if (peek(p) == '}') {
            advance(p);
            return;
        }
        if (peek(p) == 0)
            FAIL(p, "expected '}' to end a region, found end of input");
        parse_op(p, r);
    }
}

/* param = "%N" ":" type [layout] ["{" (name = STRING | div = INT | equal_to_1),* "}"] */
static void parse_param(Parser *p)
{
    SrcLoc loc;
    int32_t n = value_number(p, &loc);
    expect(p, ':', "after a parameter");
    Type t = parse_type(p);
    int layout = opt_layout(p);
    const char *name = NULL;
    int div = 1;
    bool equal_to_1 = false;
    if (at_dict(p)) {
        expect(p, '{', "");
        do {
            SrcLoc kloc = here(p);
            const char *key = ident(p);
            if (key && !strcmp(key, "name")) {
                expect(p, '=', "after 'name'");
                name = string_value(p);
            } else if (key && !strcmp(key, "div")) {
                expect(p, '=', "after 'div'");
                div = int_value(p);
            } else if (key && !strcmp(key, "equal_to_1")) {
                equal_to_1 = true;
            } else {
                fail_at(p, kloc, "unknown parameter attribute '%s'", key ? key : "");
            }
        } while (accept(p, ','));
        expect(p, '}', "after the parameter attributes");
    }
    ValueId v = ir_param_add(p->f, t, name, div);
    p->f->values[v].layout = layout;
    p->f->params[p->f->nparams - 1].equal_to_1 = equal_to_1;
    define_number(p, n, loc, v);
}

/* One of a tensor map's lists: "[" item ("," item)* "]", rank items. */
static int parse_tmap_list(Parser *p, LaunchValue *lv, int *ints)
{
    expect(p, '[', "to start a tensor map's list");
    int n = 0;
    do {
        if (n >= TRIC_TMAP_MAX_RANK)
            FAIL(p, "a tensor map has at most %d dims", TRIC_TMAP_MAX_RANK);
        if (ints) {
            ints[n++] = int_value(p);
            continue;
        }
        skip_ws(p);
        SrcLoc loc = here(p);
        const char *at = p->text + p->pos, *end = at, *why = NULL;
        if (!launch_value_parse(&end, &lv[n], &why))
            fail_at(p, loc, "expected a launch value ('*', 64, p3, 2*p3*p4), found %s: %s",
                    found(p), why);
        for (; at < end; at++)
            advance(p);
        n++;
    } while (accept(p, ','));
    expect(p, ']', "to end a tensor map's list");
    return n;
}

/* tensor_map "(" DTYPE "," "base" "=" INT "," "dims" "=" list "," "strides" "=" list "," "box"
 * "=" list "," "swizzle" "=" INT ")" (ir/print.c print_tensor_map) */
static void parse_tensor_map(Parser *p)
{
    IrFunc *f = p->f;
    if (f->ntmaps >= TRIC_MAX_TENSOR_MAPS)
        FAIL(p, "a kernel has at most %d tensor maps", TRIC_MAX_TENSOR_MAPS);
    if (!f->tmaps)
        f->tmaps = arena_alloc(p->arena, sizeof(TensorMap) * TRIC_MAX_TENSOR_MAPS);
    TensorMap *m = &f->tmaps[f->ntmaps++];
    memset(m, 0, sizeof *m);
    expect(p, '(', "after tensor_map");
    m->dtype = elem_type(p).dtype;
    expect(p, ',', "after the tensor map's element type");
    expect_word(p, "base", "in a tensor map");
    expect(p, '=', "after base");
    m->base_param = int_value(p);
    expect(p, ',', "after the tensor map's base");
    expect_word(p, "dims", "in a tensor map");
    expect(p, '=', "after dims");
    m->rank = parse_tmap_list(p, m->dims, NULL);
    expect(p, ',', "after the tensor map's dims");
    expect_word(p, "strides", "in a tensor map");
    expect(p, '=', "after strides");
    int ns = parse_tmap_list(p, m->strides, NULL);
    expect(p, ',', "after the tensor map's strides");
    expect_word(p, "box", "in a tensor map");
    expect(p, '=', "after box");
    int nb = parse_tmap_list(p, NULL, m->box);
    if (ns != m->rank || nb != m->rank)
        FAIL(p, "a tensor map's dims, strides and box must have one entry per dim (%d, %d, %d)",
             m->rank, ns, nb);
    expect(p, ',', "after the tensor map's box");
    expect_word(p, "swizzle", "in a tensor map");
    expect(p, '=', "after swizzle");
    m->swizzle = int_value(p);
    expect(p, ')', "to end a tensor map");
}

/* "warp_specialize" "(" "producer_warps" "=" INT "," "producer_regs" "=" INT "," "consumer_regs"
 * "=" INT "," "max_regs" "=" INT ["," "consumer_groups" "=" INT "," "scratch_stride" "=" INT] ")"
 * (after the word) */
static void parse_warp_specialize(Parser *p)
{
    static const char *const keys[6] = {"producer_warps", "producer_regs",   "consumer_regs",
                                        "max_regs",       "consumer_groups", "scratch_stride"};
    int *fields[6] = {&p->f->ws.producer_warps,  &p->f->ws.producer_regs,
                      &p->f->ws.consumer_regs,   &p->f->ws.max_regs,
                      &p->f->ws.consumer_groups, &p->f->ws.scratch_stride};
    expect(p, '(', "after warp_specialize");
    for (int i = 0; i < 6; i++) {
        if (i == 4 && (skip_ws(p), peek(p) == ')'))
            break; /* one consumer group */
        if (i)
            expect(p, ',', "between warp_specialize's fields");
        expect_word(p, keys[i], "in warp_specialize");
        expect(p, '=', "after a warp_specialize field");
        *fields[i] = int_value(p);
    }
    expect(p, ')', "to end warp_specialize");
}

/* func = "kernel" "@" NAME "(" params ")" (num_warps|num_stages|shared_bytes "(" INT ")" |
 * tensor_map(...) | warp_specialize(...) | persistent(...))* "{" ... "}" */
static void parse_func(Parser *p)
{
    expect_word(p, "kernel", "at the start of a function");
    skip_ws(p);
    if (peek(p) != '@')
        FAIL(p, "expected '@' before the kernel name, found %s", found(p));
    advance(p);
    const char *name = ident(p);
    if (!name)
        FAIL(p, "expected the kernel name after '@', found %s", found(p));
    p->f = ir_func_new(p->arena, name);
    expect(p, '(', "after the kernel name");
    if (!accept(p, ')')) {
        do
            parse_param(p);
        while (accept(p, ','));
        expect(p, ')', "after the parameters");
    }
    for (;;) {
        int *field = NULL;
        if (accept_word(p, "num_warps"))
            field = &p->f->num_warps;
        else if (accept_word(p, "num_stages"))
            field = &p->f->num_stages;
        else if (accept_word(p, "shared_bytes"))
            field = &p->f->shared_bytes;
        else if (accept_word(p, "tensor_map")) {
            parse_tensor_map(p);
            continue;
        } else if (accept_word(p, "warp_specialize")) {
            parse_warp_specialize(p);
            continue;
        } else if (accept_word(p, "persistent")) {
            /* "persistent" "(" "workspace_bytes" "=" INT ["," "axes" "=" INT]
             * ["," "from_grid"] ")" */
            expect(p, '(', "after persistent");
            expect_word(p, "workspace_bytes", "in persistent");
            expect(p, '=', "after workspace_bytes");
            p->f->persistent.on = true;
            p->f->persistent.workspace_bytes = int64_value(p);
            while (accept(p, ',')) {
                if (accept_word(p, "axes")) {
                    expect(p, '=', "after axes");
                    p->f->persistent.axes = int_value(p);
                } else {
                    expect_word(p, "from_grid", "in persistent (axes = N, from_grid)");
                    p->f->persistent.from_grid = true;
                }
            }
            expect(p, ')', "to end persistent");
            continue;
        } else
            break;
        expect(p, '(', "after a kernel attribute");
        *field = int_value(p);
        expect(p, ')', "after a kernel attribute's value");
    }
    expect(p, '{', "to start the kernel body");
    parse_region_body(p, &p->f->body, false);
    skip_ws(p);
    if (peek(p) != 0)
        FAIL(p, "expected the end of the input after the kernel, found %s", found(p));
}

IrFunc *ir_parse(const SrcFile *file, Arena *arena, Diag *diag)
{
    Parser *p = arena_alloc(arena, sizeof *p);
    p->file = file;
    p->text = file->text ? file->text : "";
    p->len = file->text ? file->len : 0;
    p->line = 1;
    p->col = 1;
    p->arena = arena;
    p->diag = diag;
    if (setjmp(p->fail))
        return NULL;
    parse_func(p);
    return p->f;
}
