/* host_skip.c: module-level host Python set aside before the lexer sees it.
 *
 * Kernels live in Python files that also hold host code: wrappers calling torch, classes
 * (torch.autograd.Function), `if __name__ == "__main__":`, `with`, comprehensions, f-strings,
 * decorators such as @torch.no_grad. None of it is kernel code, and most of it is outside the
 * subset tric parses. This pass reads the file's layout only (logical lines, indentation, strings,
 * brackets, as the Python reference's 2.1 "Line structure" defines them) and blanks the statements
 * no kernel needs, keeping every line break so that every position (and every message) stays
 * where it was. A blanked statement inside a kept `if`/`try` body leaves `pass` in its place so
 * the body stays a body.
 *
 * The rule, statement by statement, at module level and in the bodies of module-level
 * `if`/`try` statements (which the parser reads, parser.y module_append):
 *   kept      import/from, pass, return/break/continue (their errors stay), `try`, an `if` whose
 *             condition does not read `__name__`, a def decorated with @triton.jit / @jit /
 *             @constexpr_function / @tl.constexpr or a name the file makes for triton.jit
 *             (`from triton import jit as J`, `J = triton.jit`: note_jit_aliases), under any
 *             other decorators, an assignment
 *             whose value names jit, autotune or heuristics (it makes a kernel);
 *   if used   an undecorated def and any other assignment: kept when one of the names it binds
 *             is read by kept code (a kernel's constexpr, an autotune configs function, the
 *             impl of `k = triton.jit(impl)`); else a def is blanked without being parsed, and
 *             an assignment is kept when it parses alone (a list comprehension does; a dict
 *             comprehension does not);
 *   blanked   class, with, for, while, async, del, global, nonlocal, raise, assert, expression
 *             statements, augmented assignments, `if __name__ ...`, and a def whose decorators
 *             are not Triton's.
 * Kept code that is not tric's subset still gets the parser's error at its line. A file without
 * any Triton-decorated def (or `k = triton.jit(f)`) has no kernel to serve: it is read whole, every
 * statement checked as tric code -- unless it is imported (driver/imports.c), when it serves the
 * importing file's kernels with its constants and helpers: there an undecorated def that parses
 * alone is kept too (the importer's @triton.autotune may call it, `from .tuning import
 * get_configs`). */
#include <string.h>

#include "frontend/frontend.h"

/* Deeper bodies than this are left for the lexer, which rejects them (MAX_INDENT). */
#define MAX_NEST 100

typedef struct LogLine {
    size_t start; /* the first token */
    size_t end;   /* just after the logical line's newline (or the end of the file) */
    int indent;   /* column of the first token, tabs to the next multiple of 8 */
} LogLine;

typedef enum Verdict {
    KEEP,    /* parsed */
    IF_USED, /* parsed when a name it binds is read by kept code */
    BLANK,   /* blanked */
} Verdict;

typedef struct Stmt1 {
    int first, last; /* its logical lines [first, last) */
    int header_last; /* a kept compound: its header lines are [first, header_last) */
    Verdict verdict;
    bool recursed;      /* a kept if/try whose bodies were classified on their own */
    const char **binds; /* IF_USED: the names it binds */
    int nbinds;
    bool kept_late;    /* IF_USED found used */
    bool read_by_code; /* kept_late, and read by kernel code, not only by decorator arguments */
    bool is_if;        /* a kept if: its conditions are rewritten, so its headers read nothing */
} Stmt1;

/* A module-level `if`/`elif` condition replaced by the constant 1 (the clause taken) or 0. */
typedef struct Rewrite {
    size_t from, to; /* the condition's text, up to the header's colon */
    bool taken;
} Rewrite;

typedef struct Skip {
    const char *text;
    size_t len;
    Arena *a;
    LogLine *lines;
    int nlines, lcap;
    Stmt1 *stmts;
    int nstmts, scap;
    bool has_kernel; /* a Triton-decorated def, or an assignment that makes a kernel */
    Rewrite *rewrites;
    int nrewrites, rcap;
    const char **jit_aliases; /* `from triton import jit as J`, `J = triton.jit`: J */
    int naliases, acap;
    const HostEnv *env; /* the host values the file looks up (SpecOptions.host_env) */
} Skip;

static bool is_ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (unsigned char)c >= 0x80;
}

static bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

/* The index just past the string literal whose opening quote is at i: single-quoted strings end
 * at their quote or the end of the line (unterminated: the lexer reports it), triple-quoted ones
 * at their closing triple; a backslash escapes the next byte in both (raw strings too, for the
 * purpose of finding the end, as in Python). */
static size_t skip_string(const char *t, size_t n, size_t i)
{
    char q = t[i];
    bool triple = i + 2 < n && t[i + 1] == q && t[i + 2] == q;
    i += triple ? 3 : 1;
    while (i < n) {
        if (t[i] == '\\') {
            i += 2;
            continue;
        }
        if (!triple && (t[i] == '\n' || t[i] == '\r'))
            return i;
        if (t[i] == q) {
            if (!triple)
                return i + 1;
            if (i + 2 < n && t[i + 1] == q && t[i + 2] == q)
                return i + 3;
        }
        i++;
    }
    return n;
}

/* Splits the text into logical lines (blank and comment-only lines belong to none). */
static void split_lines(Skip *s)
{
    const char *t = s->text;
    size_t n = s->len, i = 0;
    while (i < n) {
        int col = 0;
        while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\f')) {
            col = t[i] == ' ' ? col + 1 : t[i] == '\t' ? (col / 8 + 1) * 8 : 0;
            i++;
        }
        if (i >= n)
            break;
        if (t[i] == '\n' || t[i] == '\r') {
            i++;
            continue;
        }
        if (t[i] == '#') {
            while (i < n && t[i] != '\n')
                i++;
            continue;
        }
        LogLine l = {.start = i, .indent = col};
        int depth = 0;
        while (i < n) {
            char c = t[i];
            if (c == '#') {
                while (i < n && t[i] != '\n')
                    i++;
            } else if (c == '\n') {
                i++;
                if (depth == 0)
                    break;
            } else if (c == '\\' && i + 1 < n) {
                i += 2; /* an explicit joining, or an escape the lexer reports */
            } else if (c == '"' || c == '\'') {
                i = skip_string(t, n, i);
            } else {
                if (c == '(' || c == '[' || c == '{')
                    depth++;
                else if ((c == ')' || c == ']' || c == '}') && depth > 0)
                    depth--;
                i++;
            }
        }
        l.end = i;
        ARENA_PUSH(s->a, s->lines, s->nlines, s->lcap, l);
    }
}

/* The identifier the logical line starts with ("" when it starts with another byte). */
static size_t first_word(const Skip *s, int line, const char **w)
{
    size_t i = s->lines[line].start, j = i;
    while (j < s->lines[line].end && is_ident_char(s->text[j]))
        j++;
    *w = s->text + i;
    return j - i;
}

static bool word_is(const Skip *s, int line, const char *kw)
{
    const char *w;
    size_t n = first_word(s, line, &w);
    return n == strlen(kw) && !memcmp(w, kw, n);
}

static bool word_in(const Skip *s, int line, const char *const *kws)
{
    for (; *kws; kws++)
        if (word_is(s, line, *kws))
            return true;
    return false;
}

/* Calls fn on every identifier of [from, to), strings and comments excepted; stops when fn
 * returns true, and returns whether it did. */
typedef bool (*IdentFn)(void *ctx, const char *name, size_t len, size_t at);
static bool each_ident(const Skip *s, size_t from, size_t to, IdentFn fn, void *ctx)
{
    const char *t = s->text;
    size_t i = from;
    while (i < to) {
        char c = t[i];
        if (c == '#') {
            while (i < to && t[i] != '\n')
                i++;
        } else if (c == '"' || c == '\'') {
            i = skip_string(t, to, i);
        } else if (is_ident_start(c)) {
            size_t j = i;
            while (j < to && is_ident_char(t[j]))
                j++;
            if (j < to && (t[j] == '"' || t[j] == '\'') && j - i <= 2) { /* a string prefix */
                i = j;
                continue;
            }
            if (fn(ctx, t + i, j - i, i))
                return true;
            i = j;
        } else if (c >= '0' && c <= '9') {
            while (i < to && (is_ident_char(t[i]) || t[i] == '.'))
                i++;
        } else {
            i++;
        }
    }
    return false;
}

typedef struct NameQuery {
    const char *const *names;
} NameQuery;

static bool ident_is_any(void *ctx, const char *name, size_t len, size_t at)
{
    (void)at;
    for (const char *const *n = ((NameQuery *)ctx)->names; *n; n++)
        if (strlen(*n) == len && !memcmp(*n, name, len))
            return true;
    return false;
}

static bool mentions(const Skip *s, size_t from, size_t to, const char *const *names)
{
    NameQuery q = {names};
    return each_ident(s, from, to, ident_is_any, &q);
}

/* A decorator line is Triton's when its dotted name (its call's callee) is jit, triton.jit,
 * constexpr_function, X.constexpr_function, tl.constexpr or triton.constexpr: the decorators
 * parser.y's s_def recognizes. */
static bool triton_decorator(const Skip *s, int line)
{
    const char *t = s->text;
    size_t i = s->lines[line].start + 1, end = s->lines[line].end;
    const char *parts[8];
    size_t lens[8];
    int n = 0;
    for (;;) {
        while (i < end && (t[i] == ' ' || t[i] == '\t'))
            i++;
        size_t j = i;
        while (j < end && is_ident_char(t[j]))
            j++;
        if (j == i || n == 8)
            return false;
        parts[n] = t + i;
        lens[n++] = j - i;
        while (j < end && (t[j] == ' ' || t[j] == '\t'))
            j++;
        if (j >= end || t[j] != '.')
            break;
        i = j + 1;
    }
#define PART_IS(k, w) (lens[k] == strlen(w) && !memcmp(parts[k], w, lens[k]))
    if (PART_IS(n - 1, "constexpr_function"))
        return true;
    if (n == 1) {
        for (int k = 0; k < s->naliases; k++)
            if (PART_IS(0, s->jit_aliases[k]))
                return true;
        return PART_IS(0, "jit") || frontend_is_jit_alias(parts[0], lens[0]);
    }
    return n == 2 && ((PART_IS(0, "triton") && PART_IS(1, "jit")) ||
                      ((PART_IS(0, "tl") || PART_IS(0, "triton")) && PART_IS(1, "constexpr")));
#undef PART_IS
}

/* One step of a scan over a logical line's code: past the string or the comment that starts at
 * i whole, or past the byte at i, counting brackets in *depth. *plain is set when t[i] is a byte
 * outside strings, comments and brackets, to be looked at by the caller. */
static size_t step_code(const char *t, size_t i, size_t end, int *depth, bool *plain)
{
    char c = t[i];
    *plain = false;
    if (c == '#') {
        while (i < end && t[i] != '\n')
            i++;
        return i;
    }
    if (c == '"' || c == '\'')
        return skip_string(t, end, i);
    if (c == '(' || c == '[' || c == '{')
        ++*depth;
    else if ((c == ')' || c == ']' || c == '}') && *depth > 0)
        --*depth;
    else
        *plain = true;
    return i + 1;
}

/* The assignment operator of a simple statement's first logical line: the offset of its last
 * `=` at bracket depth 0 (0 when it has none); *augmented when an `op=` comes first. */
static size_t assignment_at(const Skip *s, int line, bool *augmented)
{
    const char *t = s->text;
    size_t i = s->lines[line].start, end = s->lines[line].end, last = 0;
    int depth = 0;
    *augmented = false;
    while (i < end) {
        bool plain;
        size_t next = step_code(t, i, end, &depth, &plain);
        if (plain && t[i] == '=' && depth == 0) {
            char prev = i > 0 ? t[i - 1] : ' ', after = i + 1 < end ? t[i + 1] : ' ';
            if (after == '=') {
                next = i + 2;
            } else if (strchr("+-*/%&|^@", prev)) {
                if (!last)
                    *augmented = true;
            } else if (!strchr("=!<>:", prev)) {
                last = i;
            }
        }
        i = next;
    }
    return last;
}

/* The names an assignment binds: the identifiers at bracket depth 0 of its targets, attributes
 * and annotations excepted (`x: tl.constexpr = 3` binds x; `cfg.opts[k] = v` binds nothing). */
static void target_names(Skip *s, size_t i, size_t eq, const char ***names, int *n, int *cap)
{
    const char *t = s->text;
    int depth = 0;
    bool annotation = false;
    while (i < eq) {
        char c = t[i];
        if (c == '"' || c == '\'') {
            i = skip_string(t, eq, i);
            continue;
        }
        if (c == '(' || c == '[' || c == '{')
            depth++;
        else if ((c == ')' || c == ']' || c == '}') && depth > 0)
            depth--;
        else if (c == ':' && depth == 0)
            annotation = true;
        else if (c == '=' && depth == 0)
            annotation = false;
        if (is_ident_start(c)) {
            size_t j = i;
            while (j < eq && is_ident_char(t[j]))
                j++;
            size_t k = i;
            while (k > 0 && (t[k - 1] == ' ' || t[k - 1] == '\t'))
                k--;
            bool attribute = k > 0 && t[k - 1] == '.';
            if (depth == 0 && !annotation && !attribute)
                ARENA_PUSH(s->a, *names, *n, *cap, arena_strndup(s->a, t + i, j - i));
            i = j;
            continue;
        }
        i++;
    }
}

static void assignment_binds(Skip *s, Stmt1 *st, size_t eq)
{
    int cap = 0;
    target_names(s, s->lines[st->first].start, eq, &st->binds, &st->nbinds, &cap);
}

static void def_binds(Skip *s, Stmt1 *st, int def_line)
{
    const char *t = s->text;
    size_t i = s->lines[def_line].start + 3, end = s->lines[def_line].end;
    while (i < end && (t[i] == ' ' || t[i] == '\t'))
        i++;
    size_t j = i;
    while (j < end && is_ident_char(t[j]))
        j++;
    if (j > i) {
        st->binds = arena_alloc(s->a, sizeof *st->binds);
        st->binds[0] = arena_strndup(s->a, t + i, j - i);
        st->nbinds = 1;
    }
}

static void classify_block(Skip *s, int first, int last, int depth);

/* ---- aliases of triton.jit ------------------------------------------------------------------ */

typedef struct Idents {
    Skip *s;
    const char *w[16];
    size_t len[16];
    int n;
} Idents;

static bool collect_ident(void *ctx, const char *name, size_t len, size_t at)
{
    (void)at;
    Idents *ids = ctx;
    if (ids->n == 16)
        return true;
    ids->w[ids->n] = name;
    ids->len[ids->n++] = len;
    return false;
}

static bool ident_eq(const Idents *ids, int i, const char *w)
{
    return i < ids->n && ids->len[i] == strlen(w) && !memcmp(ids->w[i], w, ids->len[i]);
}

/* `from triton import jit as J` anywhere, and module-level `J = triton.jit` (or `= jit`, `=` an
 * alias already seen) make J a name of triton.jit, so that `@J` marks a kernel (parser.y's
 * build_module reads the same statements). */
static void note_jit_aliases(Skip *s)
{
    for (int i = 0; i < s->nlines; i++) {
        const LogLine *l = &s->lines[i];
        Idents ids = {.s = s};
        if (word_is(s, i, "from")) {
            each_ident(s, l->start, l->end, collect_ident, &ids);
            if (!ident_eq(&ids, 1, "triton") || !ident_eq(&ids, 2, "import"))
                continue;
            for (int k = 3; k + 2 < ids.n; k++)
                if (ident_eq(&ids, k, "jit") && ident_eq(&ids, k + 1, "as"))
                    ARENA_PUSH(s->a, s->jit_aliases, s->naliases, s->acap,
                               arena_strndup(s->a, ids.w[k + 2], ids.len[k + 2]));
            continue;
        }
        bool augmented;
        size_t eq = l->indent == 0 ? assignment_at(s, i, &augmented) : 0;
        if (!eq || augmented)
            continue;
        each_ident(s, eq, l->end, collect_ident, &ids);
        bool jit = (ids.n == 2 && ident_eq(&ids, 0, "triton") && ident_eq(&ids, 1, "jit")) ||
                   (ids.n == 1 && ident_eq(&ids, 0, "jit"));
        for (int k = 0; !jit && ids.n == 1 && k < s->naliases; k++)
            jit = ident_eq(&ids, 0, s->jit_aliases[k]);
        if (!jit || memchr(s->text + eq, '(', l->end - eq)) /* triton.jit(f) makes a kernel */
            continue;
        Stmt1 st = {.first = i, .last = i + 1};
        assignment_binds(s, &st, eq);
        for (int k = 0; k < st.nbinds; k++)
            ARENA_PUSH(s->a, s->jit_aliases, s->naliases, s->acap, st.binds[k]);
    }
}

/* ---- module-level if: the clause taken ------------------------------------------------------ */

/* Whether `word` (an identifier or a string's text) is, or has as one of its `_`-separated parts,
 * one of words, ignoring case: `is_hip`, "xpu", HAS_XPU_STREAM, `__version__`. */
static bool word_has_part(const char *word, size_t len, const char *const *words)
{
    size_t i = 0;
    while (i < len) {
        while (i < len &&
               !((word[i] >= 'a' && word[i] <= 'z') || (word[i] >= 'A' && word[i] <= 'Z') ||
                 (word[i] >= '0' && word[i] <= '9')))
            i++;
        size_t j = i;
        while (j < len &&
               ((word[j] >= 'a' && word[j] <= 'z') || (word[j] >= 'A' && word[j] <= 'Z') ||
                (word[j] >= '0' && word[j] <= '9')))
            j++;
        for (const char *const *w = words; j > i && *w; w++) {
            size_t n = strlen(*w);
            bool same = n == j - i;
            for (size_t k = 0; same && k < n; k++)
                same = (char)(word[i + k] | 0x20) == (*w)[k];
            if (same)
                return true;
        }
        i = j;
    }
    return false;
}

bool frontend_is_jit_alias(const char *name, size_t len)
{
    static const char *const triton[] = {"triton", NULL}, *const jit[] = {"jit", NULL};
    return word_has_part(name, len, triton) && word_has_part(name, len, jit);
}

void host_condition_word(HostCondition *f, const char *w, size_t n)
{
    static const char *const other[] = {"xpu",  "hip",  "rocm", "mlx",   "mps",    "npu", "musa",
                                        "cdna", "rdna", "amd",  "intel", "ascend", "cpu", NULL};
    static const char *const nvidia[] = {"cuda", "nvidia", NULL};
    static const char *const version[] = {"version", NULL};
    f->other_backend |= word_has_part(w, n, other);
    f->nvidia |= word_has_part(w, n, nvidia);
    f->version |= word_has_part(w, n, version);
    f->negated |= n == 3 && !memcmp(w, "not", 3);
    f->less |= n == 2 && (!memcmp(w, "lt", 2) || !memcmp(w, "le", 2));
}

int host_condition_holds(const HostCondition *f)
{
    if (f->version && f->less)
        return 0;
    if (f->other_backend && !f->nvidia)
        return f->negated;
    if (f->nvidia && !f->other_backend)
        return !f->negated;
    return -1;
}

/* Whether the host condition in [from, to) holds where tric's kernels run: an NVIDIA GPU under
 * the newest Triton. tric does not run host Python; it reads what the condition tests. A test
 * for another backend (`DEVICE_TYPE == "xpu"`, `is_hip()`, `in ("hip", ...)` without CUDA) is
 * false, and true negated (`not is_hip()`, `!= "xpu"`); a test for CUDA alone is true (false
 * negated); a version compared with `<` (an older Triton or torch) is false; anything else
 * (`HAS_TRITON`, `DEVICE_COUNT > 1`, a version `>=`) is true, the branch such files write
 * first for the common case. unsloth picks its tanh with `if DEVICE_TYPE == "xpu":` first. */
static bool note_ident(void *ctx, const char *name, size_t len, size_t at)
{
    (void)at;
    host_condition_word(ctx, name, len);
    return false;
}

/* A string literal at *i (blanks skipped first): its text in [*b, *e), *i past it. */
static bool string_at(const char *t, size_t to, size_t *i, size_t *b, size_t *e)
{
    while (*i < to && (t[*i] == ' ' || t[*i] == '\t'))
        ++*i;
    if (*i >= to || (t[*i] != '"' && t[*i] != '\''))
        return false;
    size_t end = skip_string(t, to, *i);
    if (end - *i < 2 || end > to || t[end - 1] != t[*i])
        return false;
    *b = *i + 1;
    *e = end - 1;
    *i = end;
    return true;
}

static bool text_at(const char *t, size_t to, size_t *i, const char *word)
{
    while (*i < to && (t[*i] == ' ' || t[*i] == '\t'))
        ++*i;
    size_t n = strlen(word);
    if (*i + n > to || strncmp(t + *i, word, n))
        return false;
    *i += n;
    return true;
}

/* `READER("NAME", "DEFAULT") == "VALUE"` (or !=) as the whole condition, READER one of the host
 * value readers (Skip.env, HostEnv): FLA picks its fast-math helpers so. NAME's value is the one
 * the caller gave (the compile's SpecOptions.host_env, as in the autotune configs), else the
 * default: -1 when the condition is not of that form, else whether it holds. */
static int env_condition(const Skip *s, size_t from, size_t to)
{
    const char *t = s->text;
    size_t i = from, nb, ne, db, de, vb, ve;
    while (i < to && (t[i] == ' ' || t[i] == '\t'))
        i++;
    size_t reader = host_env_reader_at(s->env, t + i, to - i);
    if (!reader)
        return -1;
    i += reader;
    if (!text_at(t, to, &i, "("))
        return -1;
    if (!string_at(t, to, &i, &nb, &ne) || !text_at(t, to, &i, ",") ||
        !string_at(t, to, &i, &db, &de) || !text_at(t, to, &i, ")"))
        return -1;
    bool equal = text_at(t, to, &i, "==");
    if (!equal && !text_at(t, to, &i, "!="))
        return -1;
    if (!string_at(t, to, &i, &vb, &ve))
        return -1;
    while (i < to && (t[i] == ' ' || t[i] == '\t'))
        i++;
    if (i != to)
        return -1;
    const char *given = host_env_value(s->env, t + nb, ne - nb);
    size_t vlen = given ? strlen(given) : de - db;
    bool same = vlen == ve - vb && !strncmp(given ? given : t + db, t + vb, vlen);
    return same == equal;
}

/* Whether the condition is `not X` with X one name, attribute or call (no and/or/comparison). */
static bool leading_not(const char *t, size_t from, size_t to)
{
    while (from < to && (t[from] == ' ' || t[from] == '\t'))
        from++;
    if (to - from < 4 || strncmp(t + from, "not", 3) || (t[from + 3] != ' ' && t[from + 3] != '('))
        return false;
    size_t x = from + 3, end = to; /* `not False`, `not None`, `not 0` hold */
    while (x < end && (t[x] == ' ' || t[x] == '\t'))
        x++;
    while (end > x && (t[end - 1] == ' ' || t[end - 1] == '\t'))
        end--;
    for (size_t k = 0; k < 3; k++) {
        static const char *const falsy[] = {"False", "None", "0"};
        if (end - x == strlen(falsy[k]) && !strncmp(t + x, falsy[k], end - x))
            return false;
    }
    int depth = 0;
    for (size_t i = from + 3; i < to;) {
        bool plain;
        size_t next = step_code(t, i, to, &depth, &plain);
        if (plain && depth == 0 && strchr("=<>!", t[i]))
            return false;
        if (plain && depth == 0 && is_ident_start(t[i]) && !is_ident_char(t[i - 1])) {
            size_t j = i;
            while (j < to && is_ident_char(t[j]))
                j++;
            if ((j - i == 3 && !strncmp(t + i, "and", 3)) ||
                (j - i == 2 && !strncmp(t + i, "or", 2)))
                return false;
            next = j;
        }
        i = next;
    }
    return true;
}

static bool condition_holds(const Skip *s, size_t from, size_t to)
{
    int env = env_condition(s, from, to);
    if (env >= 0)
        return env;
    const char *t = s->text;
    HostCondition f = {0};
    each_ident(s, from, to, note_ident, &f);
    int depth = 0;
    for (size_t i = from; i < to;) {
        bool plain;
        size_t next = step_code(t, i, to, &depth, &plain);
        if (t[i] == '"' || t[i] == '\'') /* a string's text: "xpu", "cuda" */
            host_condition_word(&f, t + i + 1, next > i + 1 ? next - i - 1 : 0);
        else if (plain && t[i] == '!' && i + 1 < to && t[i + 1] == '=')
            f.negated = true;
        else if (plain && t[i] == '<' && !(i + 1 < to && t[i + 1] == '<'))
            f.less = true;
        else if (plain && (t[i] == '<' || t[i] == '>') && i + 1 < to && t[i + 1] == t[i])
            next = i + 2; /* a shift */
        i = next;
    }
    int holds = host_condition_holds(&f);
    if (holds >= 0)
        return holds;
    /* one that tests neither holds (the common case, first), so `not FLAG` of such a flag does
     * not: FLA's `if not IS_GATHER_SUPPORTED:` fallback returning None is not taken */
    return !leading_not(t, from, to);
}

/* The condition of the if/elif header on line `line`: [*from, *to) up to the colon at bracket
 * depth 0 that ends it; false when the line has none (a one-line `if x: y`). */
static bool header_condition(const Skip *s, int line, size_t *from, size_t *to)
{
    const char *t = s->text;
    size_t i = s->lines[line].start + (word_is(s, line, "if") ? 2 : 4), end = s->lines[line].end;
    *from = i;
    int depth = 0;
    while (i < end) {
        bool plain;
        size_t next = step_code(t, i, end, &depth, &plain);
        if (plain && t[i] == ':' && depth == 0 && !(i + 1 < end && t[i + 1] == '=')) {
            size_t k = i + 1; /* nothing but a comment may follow: the body is indented below */
            while (k < end && (t[k] == ' ' || t[k] == '\t'))
                k++;
            if (k < end && t[k] != '#' && t[k] != '\n' && t[k] != '\r')
                return false;
            *to = i;
            return *to > *from;
        }
        i = next;
    }
    return false;
}

/* A kept if/try: each clause's body is classified on its own. For an `if`, only the clause taken
 * where the kernels run (condition_holds; `else` when no condition holds) is: the others' bodies
 * become `pass`, and every condition is rewritten to 1 or 0 so that the parser (module_append)
 * takes that clause, and no name a condition reads keeps host code alive. */
static void recurse_clauses(Skip *s, Stmt1 *st, int depth)
{
    int indent = s->lines[st->first].indent;
    bool is_if = word_is(s, st->first, "if");
    bool chosen = false;
    st->recursed = true;
    st->is_if = is_if;
    for (int i = st->first; i < st->last;) {
        int j = i + 1;
        while (j < st->last && s->lines[j].indent > indent)
            j++;
        bool taken = true;
        if (is_if) {
            size_t from, to;
            bool has_cond = !word_is(s, i, "else");
            if (has_cond && !header_condition(s, i, &from, &to)) {
                st->is_if = false; /* a form not rewritten: the parser's first-branch rule */
                is_if = false;
            } else {
                taken = !chosen && (!has_cond || condition_holds(s, from, to));
                chosen |= taken;
                if (has_cond) {
                    Rewrite r = {from, to, taken};
                    ARENA_PUSH(s->a, s->rewrites, s->nrewrites, s->rcap, r);
                }
            }
        }
        if (j > i + 1 && taken) {
            classify_block(s, i + 1, j, depth + 1);
        } else if (j > i + 1) {
            Stmt1 dead = {.first = i + 1, .last = j, .verdict = BLANK};
            ARENA_PUSH(s->a, s->stmts, s->nstmts, s->scap, dead);
        }
        i = j;
    }
}

static void classify(Skip *s, Stmt1 *st, int depth)
{
    static const char *const blank_words[] = {"class", "with",   "for",      "while", "async",
                                              "del",   "global", "nonlocal", "raise", "assert",
                                              "yield", "await",  "lambda",   NULL};
    static const char *const keep_words[] = {"import", "from",     "pass", "return",
                                             "break",  "continue", "elif", "else",
                                             "except", "finally",  NULL};
    static const char *const makes_kernels[] = {"jit", "autotune", "heuristics", NULL};
    static const char *const main_guard[] = {"__name__", NULL};
    const LogLine *l = &s->lines[st->first];
    st->verdict = KEEP;
    if (s->text[l->start] == '@') {
        int d = st->first;
        bool triton = false;
        while (d < st->last && s->text[s->lines[d].start] == '@')
            triton |= triton_decorator(s, d++);
        st->verdict = d < st->last && word_is(s, d, "def") && triton ? KEEP : BLANK;
        s->has_kernel |= st->verdict == KEEP;
    } else if (word_is(s, st->first, "def")) {
        st->verdict = IF_USED;
        def_binds(s, st, st->first);
    } else if (word_in(s, st->first, blank_words)) {
        st->verdict = BLANK;
    } else if (word_in(s, st->first, keep_words)) {
        st->verdict = KEEP;
    } else if (word_is(s, st->first, "if")) {
        if (mentions(s, l->start, l->end, main_guard))
            st->verdict = BLANK;
        else if (depth < MAX_NEST)
            recurse_clauses(s, st, depth);
    } else if (word_is(s, st->first, "try")) {
        if (depth < MAX_NEST)
            recurse_clauses(s, st, depth);
    } else {
        bool augmented;
        size_t eq = assignment_at(s, st->first, &augmented);
        if (augmented || !eq) {
            st->verdict = BLANK; /* an expression statement or an augmented assignment */
        } else if (mentions(s, eq, s->lines[st->last - 1].end, makes_kernels)) {
            st->verdict = KEEP;
            s->has_kernel = true;
        } else {
            st->verdict = IF_USED;
            assignment_binds(s, st, eq);
        }
    }
}

/* The statements of the block made of logical lines [first, last), whose first line sets its
 * indentation: a statement is its line, the decorated def or class under a decorator, the
 * clauses (elif, else, except, finally) of a compound one, and every more deeply indented line
 * after those. */
static void classify_block(Skip *s, int first, int last, int depth)
{
    static const char *const clauses[] = {"elif", "else", "except", "finally", NULL};
    int indent = s->lines[first].indent;
    for (int i = first; i < last;) {
        int j = i + 1;
        while (j < last && s->text[s->lines[j - 1].start] == '@' && s->lines[j].indent == indent)
            j++; /* decorators, then the def they decorate */
        for (;;) {
            while (j < last && s->lines[j].indent > indent)
                j++;
            if (j < last && s->lines[j].indent == indent && word_in(s, j, clauses) &&
                !word_in(s, i, clauses))
                j++;
            else
                break;
        }
        Stmt1 st = {.first = i, .last = j};
        int at = s->nstmts;
        ARENA_PUSH(s->a, s->stmts, s->nstmts, s->scap, st);
        classify(s, &s->stmts[at], depth);
        i = j;
    }
}

/* ---- used names ----------------------------------------------------------------------------- */

/* The names IF_USED statements bind, hashed: a binding is (name, statement), chained per slot. */
typedef struct Binder {
    const char *name;
    int stmt;
    struct Binder *next;
} Binder;

typedef struct Used {
    Skip *s;
    Binder **slots;
    size_t mask;
    int *work; /* statements kept and not yet scanned */
    int nwork, wcap;
    bool code; /* the reads being scanned are kernel code's (else a decorator's arguments) */
    /* the names the def being scanned binds itself (its parameters, its assignments' and for
     * loops' targets): Python makes them local to it, so they read no module-level binding */
    const char **locals;
    int nlocals, lcap;
} Used;

static size_t name_hash(const char *name, size_t len)
{
    size_t h = 1469598103934665603u; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)name[i]) * 1099511628211u;
    return h;
}

static bool mark_binder(void *ctx, const char *name, size_t len, size_t at)
{
    Used *u = ctx;
    /* an attribute (`tl.argmax`, `K.helper`) reads no name of this module: FlagGems' host
     * `def argmax(...)` beside a kernel calling tl.argmax stays host code */
    size_t k = at;
    while (k > 0 && (u->s->text[k - 1] == ' ' || u->s->text[k - 1] == '\t'))
        k--;
    if (k > 0 && u->s->text[k - 1] == '.')
        return false;
    for (int i = 0; i < u->nlocals;
         i++) /* FlagGems' kernel `all = tl.reduce(...)`, not its host `def all` */
        if (strlen(u->locals[i]) == len && !memcmp(u->locals[i], name, len))
            return false;
    for (Binder *b = u->slots[name_hash(name, len) & u->mask]; b; b = b->next) {
        Stmt1 *st = &u->s->stmts[b->stmt];
        if (strlen(b->name) != len || memcmp(b->name, name, len))
            continue;
        bool newly = !st->kept_late || (u->code && !st->read_by_code);
        st->kept_late = true;
        st->read_by_code |= u->code;
        if (newly) /* scanned again when code reads what only a decorator read so far */
            ARENA_PUSH(u->s->a, u->work, u->nwork, u->wcap, b->stmt);
    }
    return false;
}

/* The parameters of the def whose header is logical line `line`: the names right after its
 * opening parenthesis or after a comma at bracket depth 1 (annotations follow a colon, defaults
 * an `=`). */
static void def_params(Skip *s, int line, Used *u)
{
    const char *t = s->text;
    size_t i = s->lines[line].start, end = s->lines[line].end;
    int depth = 0;
    bool at_param = false;
    while (i < end) {
        bool plain;
        char c = t[i];
        if (depth == 1 && at_param && is_ident_start(c)) {
            size_t j = i;
            while (j < end && is_ident_char(t[j]))
                j++;
            ARENA_PUSH(s->a, u->locals, u->nlocals, u->lcap, arena_strndup(s->a, t + i, j - i));
            at_param = false;
            i = j;
            continue;
        }
        size_t next = step_code(t, i, end, &depth, &plain);
        if (c == '(' && depth == 1)
            at_param = true;
        else if (plain && c == ',' && depth == 1)
            at_param = true;
        else if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '*' && c != '\\')
            at_param = false;
        i = next;
    }
}

/* Sets u->locals to what the def on lines [def_line, last) binds in its body. */
static void def_locals(Skip *s, int def_line, int last, Used *u)
{
    u->nlocals = 0;
    def_params(s, def_line, u);
    for (int i = def_line + 1; i < last; i++) {
        const char *w;
        size_t len = first_word(s, i, &w);
        if (len == 3 && !memcmp(w, "for", 3)) { /* for NAME[, NAME] in ...: up to the `in` */
            size_t from = s->lines[i].start + 3, in = from;
            const char *t = s->text;
            while (in + 4 < s->lines[i].end &&
                   !(t[in] == ' ' && t[in + 1] == 'i' && t[in + 2] == 'n' && t[in + 3] == ' '))
                in++;
            target_names(s, from, in, &u->locals, &u->nlocals, &u->lcap);
            continue;
        }
        bool augmented;
        size_t eq = assignment_at(s, i, &augmented);
        if (eq && !augmented &&
            !word_in(s, i, (const char *const[]){"if", "elif", "while", "return", "def", NULL}))
            target_names(s, s->lines[i].start, eq, &u->locals, &u->nlocals, &u->lcap);
    }
}

/* The names read by one kept statement (a recursed if/try: its header lines only). What a
 * decorator's arguments read (@triton.autotune's configs, @triton.heuristics' lambdas), and what
 * that reads in turn, is configuration tric reads when it can (frontend/autotune.c): the rest is
 * read by kernel code. */
static void scan_reads(Skip *s, const Stmt1 *st, Used *u)
{
    static const char *const configures[] = {"autotune", "heuristics", NULL};
    if (!st->recursed) {
        size_t from = s->lines[st->first].start, to = s->lines[st->last - 1].end;
        if (st->verdict == IF_USED) {
            u->code = st->read_by_code;
            if (word_is(s, st->first, "def"))
                def_locals(s, st->first, st->last, u);
        } else if (s->text[from] == '@') {
            int d = st->first;
            while (d < st->last && s->text[s->lines[d].start] == '@')
                d++;
            u->code = false;
            each_ident(s, from, s->lines[d - 1].end, mark_binder, u);
            from = d < st->last ? s->lines[d].start : to;
            u->code = true;
            if (d < st->last && word_is(s, d, "def"))
                def_locals(s, d, st->last, u);
        } else {
            size_t eq = 0;
            bool augmented = false;
            if (!word_in(s, st->first, (const char *const[]){"import", "from", NULL}))
                eq = assignment_at(s, st->first, &augmented);
            /* `k = triton.autotune(...)(f)` configures f; `k = triton.jit(impl)` is code */
            u->code = !(eq && mentions(s, eq, to, configures));
        }
        each_ident(s, from, to, mark_binder, u);
        u->nlocals = 0;
        return;
    }
    u->code = true;
    if (st->is_if)
        return; /* its conditions are rewritten to constants */
    int indent = s->lines[st->first].indent;
    for (int i = st->first; i < st->last; i++)
        if (s->lines[i].indent == indent)
            each_ident(s, s->lines[i].start, s->lines[i].end, mark_binder, u);
}

/* Keeps every IF_USED statement whose names kept code reads, to a fixed point: a worklist in
 * which each kept statement is scanned once. */
static void keep_used(Skip *s)
{
    size_t nbinds = 0;
    for (int k = 0; k < s->nstmts; k++)
        if (s->stmts[k].verdict == IF_USED)
            nbinds += (size_t)s->stmts[k].nbinds;
    if (nbinds == 0)
        return;
    size_t nslots = 16;
    while (nslots < 2 * nbinds)
        nslots *= 2;
    Used u = {.s = s, .slots = arena_alloc(s->a, nslots * sizeof(Binder *)), .mask = nslots - 1};
    for (int k = 0; k < s->nstmts; k++) {
        const Stmt1 *st = &s->stmts[k];
        for (int b = 0; st->verdict == IF_USED && b < st->nbinds; b++) {
            Binder *e = arena_alloc(s->a, sizeof *e);
            size_t slot = name_hash(st->binds[b], strlen(st->binds[b])) & u.mask;
            *e = (Binder){st->binds[b], k, u.slots[slot]};
            u.slots[slot] = e;
        }
    }
    for (int k = 0; k < s->nstmts; k++)
        if (s->stmts[k].verdict == KEEP)
            scan_reads(s, &s->stmts[k], &u);
    while (u.nwork > 0)
        scan_reads(s, &s->stmts[u.work[--u.nwork]], &u);
}

/* Whether the statement parses alone (as tric code, into a scratch arena, its messages dropped). */
static bool parses_alone(const Skip *s, const Stmt1 *st)
{
    size_t from = s->lines[st->first].start, to = s->lines[st->last - 1].end;
    SrcFile piece = {"<piece>", s->text + from, to - from};
    Arena *scratch = arena_new();
    Diag quiet = {.max_errors = 1};
    bool ok = parse_module(&piece, s->env, scratch, &quiet) != NULL;
    diag_free(&quiet);
    arena_free(scratch);
    return ok;
}

/* ---- blanking ------------------------------------------------------------------------------ */

static void blank(Skip *s, char *out, const Stmt1 *st)
{
    size_t from = s->lines[st->first].start, to = s->lines[st->last - 1].end;
    if (to - from < 4)
        return;            /* `x`, `1`: harmless, and too short to hold `pass` */
    size_t first_line = 0; /* the statement's first line, which the placeholder must fit in */
    while (from + first_line < to && out[from + first_line] != '\n' &&
           out[from + first_line] != '\r')
        first_line++;
    for (size_t i = from; i < to; i++)
        if (out[i] != '\n' && out[i] != '\r')
            out[i] = ' ';
    /* `pass` over a first line shorter than it (a docstring's `"""`) would eat that line's break
     * and shift every later line: the one-character statement `0` fits any line. */
    if (first_line >= 4)
        memcpy(out + from, "pass", 4);
    else
        out[from] = '0';
}

/* The condition becomes `1` or `0`, the rest of it blanks; one spread over several lines is
 * wrapped in parentheses, `(0 ... )`, so that its line breaks stay inside brackets. */
static void rewrite_condition(char *out, const Rewrite *r)
{
    size_t last = r->from;
    bool lines = false;
    for (size_t i = r->from; i < r->to; i++) {
        if (out[i] == '\n' || out[i] == '\r') {
            lines = true;
            continue;
        }
        out[i] = ' ';
        last = i;
    }
    size_t at = r->from + 1; /* after the blank that follows `if` */
    if (lines && last > at + 1) {
        out[at] = '(';
        out[at + 1] = r->taken ? '1' : '0';
        out[last] = ')';
    } else if (at < r->to) {
        out[at] = r->taken ? '1' : '0';
    } else {
        out[r->from] = r->taken ? '1' : '0';
    }
}

const char *host_env_value(const HostEnv *env, const char *name, size_t len)
{
    for (int i = 0; env && i < env->n; i++)
        if (strlen(env->vars[i].name) == len && !strncmp(env->vars[i].name, name, len))
            return env->vars[i].value;
    return NULL;
}

size_t host_env_reader_at(const HostEnv *env, const char *text, size_t len)
{
    for (int r = 0; env && env->readers && env->readers[r]; r++) {
        size_t n = strlen(env->readers[r]);
        if (n <= len && !strncmp(text, env->readers[r], n) &&
            (n == len || (!is_ident_char(text[n]) && text[n] != '.')))
            return n;
    }
    return 0;
}

char *host_code_mask(const SrcFile *file, bool imported, const HostEnv *env, Arena *a)
{
    if (!file->text || file->len == 0)
        return NULL;
    Skip s = {.text = file->text, .len = file->len, .a = a, .env = env};
    split_lines(&s);
    if (s.nlines == 0)
        return NULL;
    note_jit_aliases(&s);
    classify_block(&s, 0, s.nlines, 0);
    if (!s.has_kernel && !imported)
        return NULL; /* no kernel to serve: the whole file is tric code, checked as such */
    keep_used(&s);
    char *out = NULL;
    for (int k = 0; k < s.nstmts; k++) {
        const Stmt1 *st = &s.stmts[k];
        if (st->verdict == KEEP)
            continue;
        /* Configuration only host Python can build (tutorial 06's `configs = [triton.Config(...)
         * for BM in ...]` that @triton.autotune reads) is set aside like other host code:
         * autotune.c then compiles the kernel with -D's values, or says what it needs. */
        if (st->verdict == IF_USED && st->kept_late && (st->read_by_code || parses_alone(&s, st)))
            continue;
        if (st->verdict == IF_USED && !word_is(&s, st->first, "def") && parses_alone(&s, st))
            continue; /* an unused assignment tric reads: kept, as a constant may be */
        if (st->verdict == IF_USED && imported && parses_alone(&s, st))
            continue; /* a def of an imported module: the importer's autotune may call it */
        if (!out) {
            out = arena_alloc(a, file->len + 1);
            memcpy(out, file->text, file->len);
        }
        blank(&s, out, st);
    }
    if (s.nrewrites > 0 && !out) {
        out = arena_alloc(a, file->len + 1);
        memcpy(out, file->text, file->len);
    }
    for (int k = 0; k < s.nrewrites; k++)
        rewrite_condition(out, &s.rewrites[k]);
    return out;
}
