/* ast.c: AST builders, deep cloning, and the printer behind --emit=ast.
 *
 * The printed form (documented in docs/language-syntax.md) is one node per line, children indented
 * two spaces under their parent, e.g.
 *     def vector_add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr)
 *       decorator triton.jit
 *       assign
 *         name pid
 *         call tl.program_id
 *           kw axis
 *             int 0
 * After sema, a typed value gets " : <type>" and a constexpr " = <value>"; decided constexpr ifs
 * print only the branch taken, static_range loops their unrolled copies, and calls of inlined
 * helpers the helper's specialized body under "inlined". Golden tests match on this text: change
 * it only together with them. */
#include "frontend/frontend.h"

#include <stdlib.h>
#include <string.h>

/* ---- builders ---------------------------------------------------------------------------------- */

Expr *ast_expr(Arena *a, ExprKind kind, SrcLoc loc)
{
    Expr *e = arena_alloc(a, sizeof *e);
    e->kind = kind;
    e->loc = loc;
    return e;
}

Stmt *ast_stmt(Arena *a, StmtKind kind, SrcLoc loc)
{
    Stmt *s = arena_alloc(a, sizeof *s);
    s->kind = kind;
    s->loc = loc;
    if (kind == ST_IF)
        s->if_.static_taken = -1; /* a run-time branch until sema decides otherwise */
    return s;
}

const char *binop_str(BinOp op)
{
    static const char *const names[] = {
#define X(e, s) s,
        TRIC_BINOPS(X)
#undef X
    };
    return (unsigned)op < BIN_COUNT ? names[op] : "?";
}

static const char *unop_str(UnOp op)
{
    switch (op) {
    case UN_NEG: return "-";
    case UN_PLUS: return "+";
    case UN_INVERT: return "~";
    case UN_NOT: return "not";
    }
    return "?";
}

/* ---- cloning ----------------------------------------------------------------------------------- */

static Expr **clone_exprs(Arena *a, Expr *const *items, int n)
{
    if (n <= 0)
        return NULL;
    Expr **out = arena_alloc(a, (size_t)n * sizeof *out);
    for (int i = 0; i < n; i++)
        out[i] = ast_clone_expr(a, items[i]);
    return out;
}

/* A deep copy with every field sema fills cleared (sem, call.inlined, call.bound, call.resolved), so that the
 * copy can be specialized again. Strings are shared: nothing modifies them. */
Expr *ast_clone_expr(Arena *a, const Expr *e)
{
    if (!e)
        return NULL;
    Expr *c = ast_expr(a, e->kind, e->loc);
    c->depth = e->depth;
    switch (e->kind) {
    case EX_INT: c->ival = e->ival; break;
    case EX_FLOAT: c->fval = e->fval; break;
    case EX_BOOL: c->bval = e->bval; break;
    case EX_NONE: break;
    case EX_STR:
    case EX_NAME: c->str = e->str; break;
    case EX_ATTR:
        c->attr.obj = ast_clone_expr(a, e->attr.obj);
        c->attr.name = e->attr.name;
        c->attr.name_loc = e->attr.name_loc;
        break;
    case EX_CALL:
        c->call.fn = ast_clone_expr(a, e->call.fn);
        c->call.args = clone_exprs(a, e->call.args, e->call.nargs);
        c->call.nargs = e->call.nargs;
        if (e->call.nkwargs > 0) {
            c->call.kwnames = arena_alloc(a, (size_t)e->call.nkwargs * sizeof(char *));
            memcpy(c->call.kwnames, e->call.kwnames, (size_t)e->call.nkwargs * sizeof(char *));
        }
        c->call.kwargs = clone_exprs(a, e->call.kwargs, e->call.nkwargs);
        c->call.nkwargs = e->call.nkwargs;
        break;
    case EX_SUBSCRIPT:
        c->sub.obj = ast_clone_expr(a, e->sub.obj);
        c->sub.idx = clone_exprs(a, e->sub.idx, e->sub.nidx);
        c->sub.nidx = e->sub.nidx;
        break;
    case EX_SLICE:
        c->slice.lo = ast_clone_expr(a, e->slice.lo);
        c->slice.hi = ast_clone_expr(a, e->slice.hi);
        c->slice.step = ast_clone_expr(a, e->slice.step);
        break;
    case EX_TUPLE:
    case EX_LIST:
        c->list.elts = clone_exprs(a, e->list.elts, e->list.n);
        c->list.n = e->list.n;
        break;
    case EX_DICT:
        c->dict.keys = clone_exprs(a, e->dict.keys, e->dict.n);
        c->dict.vals = clone_exprs(a, e->dict.vals, e->dict.n);
        c->dict.n = e->dict.n;
        break;
    case EX_BINARY:
        c->bin.op = e->bin.op;
        c->bin.lhs = ast_clone_expr(a, e->bin.lhs);
        c->bin.rhs = ast_clone_expr(a, e->bin.rhs);
        break;
    case EX_UNARY:
        c->un.op = e->un.op;
        c->un.operand = ast_clone_expr(a, e->un.operand);
        break;
    case EX_TERNARY:
        c->ternary.cond = ast_clone_expr(a, e->ternary.cond);
        c->ternary.then = ast_clone_expr(a, e->ternary.then);
        c->ternary.els = ast_clone_expr(a, e->ternary.els);
        break;
    case EX_LAMBDA:
        c->lambda.params = clone_exprs(a, e->lambda.params, e->lambda.nparams);
        c->lambda.nparams = e->lambda.nparams;
        c->lambda.body = ast_clone_expr(a, e->lambda.body);
        break;
    case EX_COMP:
        c->comp.elt = ast_clone_expr(a, e->comp.elt);
        c->comp.targets = clone_exprs(a, e->comp.targets, e->comp.n);
        c->comp.iters = clone_exprs(a, e->comp.iters, e->comp.n);
        c->comp.n = e->comp.n;
        c->comp.list = e->comp.list;
        break;
    }
    return c;
}

static Stmt *clone_stmt(Arena *a, const Stmt *s)
{
    Stmt *c = ast_stmt(a, s->kind, s->loc);
    switch (s->kind) {
    case ST_EXPR: c->expr.value = ast_clone_expr(a, s->expr.value); break;
    case ST_ASSIGN:
        c->assign.targets = clone_exprs(a, s->assign.targets, s->assign.ntargets);
        c->assign.ntargets = s->assign.ntargets;
        c->assign.annotation = ast_clone_expr(a, s->assign.annotation);
        c->assign.value = ast_clone_expr(a, s->assign.value);
        break;
    case ST_AUGASSIGN:
        c->aug.op = s->aug.op;
        c->aug.target = ast_clone_expr(a, s->aug.target);
        c->aug.value = ast_clone_expr(a, s->aug.value);
        break;
    case ST_IF:
        c->if_.cond = ast_clone_expr(a, s->if_.cond);
        c->if_.then = ast_clone_block(a, s->if_.then);
        c->if_.els = ast_clone_block(a, s->if_.els);
        c->if_.static_taken = -1;
        break;
    case ST_FOR:
        c->for_.target = ast_clone_expr(a, s->for_.target);
        c->for_.iter = ast_clone_expr(a, s->for_.iter);
        c->for_.body = ast_clone_block(a, s->for_.body);
        break;
    case ST_WHILE:
        c->while_.cond = ast_clone_expr(a, s->while_.cond);
        c->while_.body = ast_clone_block(a, s->while_.body);
        break;
    case ST_RETURN:
    case ST_RAISE: c->ret.value = ast_clone_expr(a, s->ret.value); break;
    case ST_PASS:
    case ST_BREAK:
    case ST_CONTINUE: break;
    case ST_ASSERT:
        c->assert_.cond = ast_clone_expr(a, s->assert_.cond);
        c->assert_.msg = ast_clone_expr(a, s->assert_.msg);
        break;
    case ST_DEF: c->def.func = ast_clone_func(a, s->def.func); break;
    case ST_IMPORT: c->import_ = s->import_; break; /* names are never modified: shared */
    }
    return c;
}

Block ast_clone_block(Arena *a, Block b)
{
    Block c = {NULL, b.n};
    if (b.n > 0) {
        c.stmts = arena_alloc(a, (size_t)b.n * sizeof *c.stmts);
        for (int i = 0; i < b.n; i++)
            c.stmts[i] = clone_stmt(a, b.stmts[i]);
    }
    return c;
}

FuncDef *ast_clone_func(Arena *a, const FuncDef *f)
{
    FuncDef *c = arena_alloc(a, sizeof *c);
    c->name = f->name;
    c->loc = f->loc;
    c->decorators = clone_exprs(a, f->decorators, f->ndecorators);
    c->ndecorators = f->ndecorators;
    c->nparams = f->nparams;
    c->npositional = f->npositional;
    if (f->nparams > 0) {
        c->params = arena_alloc(a, (size_t)f->nparams * sizeof *c->params);
        for (int i = 0; i < f->nparams; i++) {
            const Param *p = &f->params[i];
            Param *q = &c->params[i];
            q->name = p->name;
            q->loc = p->loc;
            q->annotation = ast_clone_expr(a, p->annotation);
            q->default_value = ast_clone_expr(a, p->default_value);
            q->divisibility = 1; /* sema fields back to what the parser sets */
        }
    }
    c->body = ast_clone_block(a, f->body);
    c->docstring = f->docstring;
    c->is_jit = f->is_jit;
    c->is_constexpr_fn = f->is_constexpr_fn;
    c->returns = ast_clone_expr(a, f->returns);
    return c;
}

/* ---- printing: source form (annotations, defaults, decorators, callees) ------------------------ */

static void print_string_literal(StrBuf *out, const char *s)
{
    strbuf_putc(out, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': strbuf_append(out, "\\\""); break;
        case '\\': strbuf_append(out, "\\\\"); break;
        case '\n': strbuf_append(out, "\\n"); break;
        case '\t': strbuf_append(out, "\\t"); break;
        case '\r': strbuf_append(out, "\\r"); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                strbuf_printf(out, "\\x%02x", *p);
            else
                strbuf_putc(out, (char)*p); /* UTF-8 is kept as it is */
        }
    }
    strbuf_putc(out, '"');
}

/* The shortest text that reads back as the same double, as Python's repr writes it: fixed
 * notation for 1e-4 <= |v| < 1e16 ("0.5", "1000.0"), exponent notation outside ("1e-06"). */
static void print_float(StrBuf *out, double v)
{
    char buf[400];
    double mag = v < 0 ? -v : v;
    bool fixed = mag == 0 || (mag >= 1e-4 && mag < 1e16);
    if (v != v || mag > 1.7976931348623157e308) /* nan, inf */
        fixed = false;
    for (int prec = fixed ? 0 : 1; prec <= 20; prec++) {
        snprintf(buf, sizeof buf, fixed ? "%.*f" : "%.*g", prec, v);
        if (strtod(buf, NULL) == v || v != v)
            break;
    }
    strbuf_append(out, buf);
    if (!strpbrk(buf, ".eEn")) /* n: nan and inf */
        strbuf_append(out, ".0");
}

/* Appends "a.b.c" when e is a name or a chain of attributes over a name; false otherwise. */
static bool print_dotted(StrBuf *out, const Expr *e)
{
    if (e->kind == EX_NAME) {
        strbuf_append(out, e->str);
        return true;
    }
    if (e->kind != EX_ATTR)
        return false;
    size_t mark = out->len;
    if (!print_dotted(out, e->attr.obj)) {
        out->len = mark;
        if (out->data)
            out->data[mark] = '\0';
        return false;
    }
    strbuf_putc(out, '.');
    strbuf_append(out, e->attr.name);
    return true;
}

static void print_source(StrBuf *out, const Expr *e);

static void print_source_list(StrBuf *out, Expr *const *items, int n)
{
    for (int i = 0; i < n; i++) {
        if (i > 0)
            strbuf_append(out, ", ");
        print_source(out, items[i]);
    }
}

static void print_operand(StrBuf *out, const Expr *e)
{
    bool parens = e->kind == EX_BINARY || e->kind == EX_TERNARY || e->kind == EX_LAMBDA ||
                  (e->kind == EX_UNARY && e->un.op == UN_NOT);
    if (parens)
        strbuf_putc(out, '(');
    print_source(out, e);
    if (parens)
        strbuf_putc(out, ')');
}

/* A compact Python rendering of an expression, for the places where a tree would be noise. */
static void print_source(StrBuf *out, const Expr *e)
{
    if (!e)
        return;
    switch (e->kind) {
    case EX_INT: strbuf_printf(out, "%lld", (long long)e->ival); break;
    case EX_FLOAT: print_float(out, e->fval); break;
    case EX_BOOL: strbuf_append(out, e->bval ? "True" : "False"); break;
    case EX_NONE: strbuf_append(out, "None"); break;
    case EX_STR: print_string_literal(out, e->str); break;
    case EX_NAME: strbuf_append(out, e->str); break;
    case EX_ATTR:
        print_operand(out, e->attr.obj);
        strbuf_printf(out, ".%s", e->attr.name);
        break;
    case EX_CALL:
        print_operand(out, e->call.fn);
        strbuf_putc(out, '(');
        print_source_list(out, e->call.args, e->call.nargs);
        for (int i = 0; i < e->call.nkwargs; i++) {
            if (i > 0 || e->call.nargs > 0)
                strbuf_append(out, ", ");
            strbuf_printf(out, "%s=", e->call.kwnames[i]);
            print_source(out, e->call.kwargs[i]);
        }
        strbuf_putc(out, ')');
        break;
    case EX_SUBSCRIPT:
        print_operand(out, e->sub.obj);
        strbuf_putc(out, '[');
        print_source_list(out, e->sub.idx, e->sub.nidx);
        strbuf_putc(out, ']');
        break;
    case EX_SLICE:
        print_source(out, e->slice.lo);
        strbuf_putc(out, ':');
        print_source(out, e->slice.hi);
        if (e->slice.step) {
            strbuf_putc(out, ':');
            print_source(out, e->slice.step);
        }
        break;
    case EX_TUPLE:
        strbuf_putc(out, '(');
        print_source_list(out, e->list.elts, e->list.n);
        if (e->list.n == 1)
            strbuf_putc(out, ',');
        strbuf_putc(out, ')');
        break;
    case EX_LIST:
        strbuf_putc(out, '[');
        print_source_list(out, e->list.elts, e->list.n);
        strbuf_putc(out, ']');
        break;
    case EX_DICT:
        strbuf_putc(out, '{');
        for (int i = 0; i < e->dict.n; i++) {
            if (i > 0)
                strbuf_append(out, ", ");
            print_source(out, e->dict.keys[i]);
            strbuf_append(out, ": ");
            print_source(out, e->dict.vals[i]);
        }
        strbuf_putc(out, '}');
        break;
    case EX_BINARY:
        print_operand(out, e->bin.lhs);
        strbuf_printf(out, " %s ", binop_str(e->bin.op));
        print_operand(out, e->bin.rhs);
        break;
    case EX_UNARY:
        strbuf_append(out, unop_str(e->un.op));
        if (e->un.op == UN_NOT)
            strbuf_putc(out, ' ');
        print_operand(out, e->un.operand);
        break;
    case EX_TERNARY:
        print_operand(out, e->ternary.then);
        strbuf_append(out, " if ");
        print_operand(out, e->ternary.cond);
        strbuf_append(out, " else ");
        print_operand(out, e->ternary.els);
        break;
    case EX_LAMBDA:
        strbuf_append(out, "lambda");
        for (int i = 0; i < e->lambda.nparams; i++)
            strbuf_printf(out, "%s%s", i ? ", " : " ", e->lambda.params[i]->str);
        strbuf_append(out, ": ");
        print_source(out, e->lambda.body);
        break;
    case EX_COMP:
        strbuf_putc(out, e->comp.list ? '[' : '(');
        print_source(out, e->comp.elt);
        for (int i = 0; i < e->comp.n; i++) {
            strbuf_append(out, e->comp.targets[i] ? " for " : " if ");
            if (e->comp.targets[i]) {
                print_source(out, e->comp.targets[i]);
                strbuf_append(out, " in ");
            }
            print_operand(out, e->comp.iters[i]);
        }
        strbuf_putc(out, e->comp.list ? ']' : ')');
        break;
    }
}

/* ---- printing: the tree ------------------------------------------------------------------------ */

static void line_start(StrBuf *out, int indent)
{
    for (int i = 0; i < indent; i++)
        strbuf_append(out, "  ");
}

static void print_sem_value(StrBuf *out, const Sem *sem)
{
    if (sem->kind == SEM_VALUE) {
        type_print(out, sem->type);
    } else if (sem->kind == SEM_CONST) {
        const_print(out, &sem->cv);
    } else if (sem->kind == SEM_TUPLE) {
        strbuf_putc(out, '(');
        for (int i = 0; i < sem->nelems; i++) {
            if (i > 0)
                strbuf_append(out, ", ");
            print_sem_value(out, &sem->elems[i]);
        }
        strbuf_append(out, sem->nelems == 1 ? ",)" : ")");
    } else {
        strbuf_putc(out, '?');
    }
}

/* " : <type>" for a typed value, " = <value>" for a constexpr, " : (<type>, ...)" for a tuple
 * of run-time values. */
static void print_sem(StrBuf *out, const Expr *e)
{
    if (e->sem.kind == SEM_VALUE || e->sem.kind == SEM_TUPLE) {
        strbuf_append(out, " : ");
        print_sem_value(out, &e->sem);
    } else if (e->sem.kind == SEM_CONST) {
        strbuf_append(out, " = ");
        const_print(out, &e->sem.cv);
    }
}

static void print_func(StrBuf *out, const FuncDef *f, int indent);
static void print_block(StrBuf *out, Block b, int indent);

static void print_expr(StrBuf *out, const Expr *e, int indent)
{
    line_start(out, indent);
    int child = indent + 1;
    switch (e->kind) {
    case EX_INT: strbuf_printf(out, "int %lld", (long long)e->ival); break;
    case EX_FLOAT:
        strbuf_append(out, "float ");
        print_float(out, e->fval);
        break;
    case EX_BOOL: strbuf_append(out, e->bval ? "bool True" : "bool False"); break;
    case EX_NONE: strbuf_append(out, "None"); break;
    case EX_STR:
        strbuf_append(out, "str ");
        print_string_literal(out, e->str);
        break;
    case EX_NAME: strbuf_printf(out, "name %s", e->str); break;
    case EX_ATTR:
        strbuf_append(out, "attr ");
        if (!print_dotted(out, e)) {
            strbuf_printf(out, ".%s", e->attr.name);
            print_sem(out, e);
            strbuf_putc(out, '\n');
            print_expr(out, e->attr.obj, child);
            return;
        }
        break;
    case EX_CALL: {
        strbuf_append(out, "call");
        size_t mark = out->len;
        strbuf_putc(out, ' ');
        bool dotted = print_dotted(out, e->call.fn);
        if (!dotted) {
            out->len = mark;
            out->data[mark] = '\0';
        }
        print_sem(out, e);
        strbuf_putc(out, '\n');
        if (!dotted)
            print_expr(out, e->call.fn, child);
        for (int i = 0; i < e->call.nargs; i++)
            print_expr(out, e->call.args[i], child);
        for (int i = 0; i < e->call.nkwargs; i++) {
            line_start(out, child);
            strbuf_printf(out, "kw %s\n", e->call.kwnames[i]);
            print_expr(out, e->call.kwargs[i], child + 1);
        }
        if (e->call.inlined) {
            line_start(out, child);
            strbuf_append(out, "inlined\n");
            print_func(out, e->call.inlined, child + 1);
        }
        return;
    }
    case EX_SUBSCRIPT:
        strbuf_append(out, "subscript");
        print_sem(out, e);
        strbuf_putc(out, '\n');
        print_expr(out, e->sub.obj, child);
        for (int i = 0; i < e->sub.nidx; i++)
            print_expr(out, e->sub.idx[i], child);
        return;
    case EX_SLICE:
        strbuf_append(out, "slice");
        if (e->slice.lo)
            strbuf_append(out, " lo");
        if (e->slice.hi)
            strbuf_append(out, " hi");
        if (e->slice.step)
            strbuf_append(out, " step");
        print_sem(out, e);
        strbuf_putc(out, '\n');
        if (e->slice.lo)
            print_expr(out, e->slice.lo, child);
        if (e->slice.hi)
            print_expr(out, e->slice.hi, child);
        if (e->slice.step)
            print_expr(out, e->slice.step, child);
        return;
    case EX_TUPLE:
    case EX_LIST:
        strbuf_append(out, e->kind == EX_TUPLE ? "tuple" : "list");
        print_sem(out, e);
        strbuf_putc(out, '\n');
        for (int i = 0; i < e->list.n; i++)
            print_expr(out, e->list.elts[i], child);
        return;
    case EX_DICT:
        strbuf_append(out, "dict");
        print_sem(out, e);
        strbuf_putc(out, '\n');
        for (int i = 0; i < e->dict.n; i++) {
            line_start(out, child);
            strbuf_append(out, "pair\n");
            print_expr(out, e->dict.keys[i], child + 1);
            print_expr(out, e->dict.vals[i], child + 1);
        }
        return;
    case EX_BINARY:
        strbuf_printf(out, "binary %s", binop_str(e->bin.op));
        print_sem(out, e);
        strbuf_putc(out, '\n');
        print_expr(out, e->bin.lhs, child);
        print_expr(out, e->bin.rhs, child);
        return;
    case EX_UNARY:
        strbuf_printf(out, "unary %s", unop_str(e->un.op));
        print_sem(out, e);
        strbuf_putc(out, '\n');
        print_expr(out, e->un.operand, child);
        return;
    case EX_TERNARY:
        strbuf_append(out, "ternary");
        print_sem(out, e);
        strbuf_putc(out, '\n');
        print_expr(out, e->ternary.then, child);
        print_expr(out, e->ternary.cond, child);
        print_expr(out, e->ternary.els, child);
        return;
    case EX_LAMBDA:
        strbuf_append(out, "lambda");
        for (int i = 0; i < e->lambda.nparams; i++)
            strbuf_printf(out, " %s", e->lambda.params[i]->str);
        print_sem(out, e);
        strbuf_putc(out, '\n');
        print_expr(out, e->lambda.body, child);
        return;
    case EX_COMP:
        strbuf_append(out, e->comp.list ? "comprehension list" : "comprehension generator");
        print_sem(out, e);
        strbuf_putc(out, '\n');
        print_expr(out, e->comp.elt, child);
        for (int i = 0; i < e->comp.n; i++) {
            line_start(out, child);
            strbuf_append(out, e->comp.targets[i] ? "for\n" : "if\n");
            if (e->comp.targets[i])
                print_expr(out, e->comp.targets[i], child + 1);
            print_expr(out, e->comp.iters[i], child + 1);
        }
        return;
    }
    print_sem(out, e);
    strbuf_putc(out, '\n');
}

static void print_labeled_block(StrBuf *out, const char *label, Block b, int indent)
{
    line_start(out, indent);
    strbuf_printf(out, "%s\n", label);
    print_block(out, b, indent + 1);
}

static void print_import(StrBuf *out, const Stmt *s)
{
    if (s->import_.module)
        strbuf_printf(out, "from %s import ", s->import_.module);
    else
        strbuf_append(out, "import ");
    for (int i = 0; i < s->import_.n; i++) {
        if (i > 0)
            strbuf_append(out, ", ");
        strbuf_append(out, s->import_.names[i]);
        if (s->import_.asnames[i])
            strbuf_printf(out, " as %s", s->import_.asnames[i]);
    }
}

static void print_stmt(StrBuf *out, const Stmt *s, int indent)
{
    int child = indent + 1;
    if (s->kind == ST_DEF) {
        print_func(out, s->def.func, indent);
        return;
    }
    line_start(out, indent);
    switch (s->kind) {
    case ST_EXPR:
        strbuf_append(out, "expr\n");
        print_expr(out, s->expr.value, child);
        break;
    case ST_ASSIGN:
        strbuf_append(out, "assign\n");
        for (int i = 0; i < s->assign.ntargets; i++)
            print_expr(out, s->assign.targets[i], child);
        if (s->assign.annotation) {
            line_start(out, child);
            strbuf_append(out, "annotation ");
            print_source(out, s->assign.annotation);
            strbuf_putc(out, '\n');
        }
        print_expr(out, s->assign.value, child);
        break;
    case ST_AUGASSIGN:
        strbuf_printf(out, "augassign %s=\n", binop_str(s->aug.op));
        print_expr(out, s->aug.target, child);
        print_expr(out, s->aug.value, child);
        break;
    case ST_IF:
        if (s->if_.static_taken == 1)
            strbuf_append(out, "if [static: then taken]\n");
        else if (s->if_.static_taken == 0)
            strbuf_append(out, "if [static: else taken]\n");
        else
            strbuf_append(out, "if\n");
        print_expr(out, s->if_.cond, child);
        if (s->if_.static_taken != 0)
            print_labeled_block(out, "then", s->if_.then, child);
        if (s->if_.static_taken != 1 && s->if_.els.n > 0)
            print_labeled_block(out, "else", s->if_.els, child);
        break;
    case ST_FOR:
        if (s->for_.unrolled)
            strbuf_printf(out, "for [static_range: %d iterations]\n", s->for_.nunrolled);
        else
            strbuf_append(out, "for\n");
        print_expr(out, s->for_.target, child);
        print_expr(out, s->for_.iter, child);
        if (s->for_.unrolled) {
            for (int i = 0; i < s->for_.nunrolled; i++) {
                line_start(out, child);
                strbuf_printf(out, "iteration %d\n", i);
                print_block(out, s->for_.unrolled[i], child + 1);
            }
        } else {
            print_labeled_block(out, "body", s->for_.body, child);
        }
        break;
    case ST_WHILE:
        strbuf_append(out, "while\n");
        print_expr(out, s->while_.cond, child);
        print_labeled_block(out, "body", s->while_.body, child);
        break;
    case ST_RETURN:
    case ST_RAISE:
        strbuf_append(out, s->kind == ST_RETURN ? "return\n" : "raise\n");
        if (s->ret.value)
            print_expr(out, s->ret.value, child);
        break;
    case ST_PASS: strbuf_append(out, "pass\n"); break;
    case ST_BREAK: strbuf_append(out, "break\n"); break;
    case ST_CONTINUE: strbuf_append(out, "continue\n"); break;
    case ST_ASSERT:
        strbuf_append(out, "assert\n");
        print_expr(out, s->assert_.cond, child);
        if (s->assert_.msg)
            print_expr(out, s->assert_.msg, child);
        break;
    case ST_IMPORT:
        print_import(out, s);
        strbuf_putc(out, '\n');
        break;
    case ST_DEF: break; /* handled above */
    }
}

static void print_block(StrBuf *out, Block b, int indent)
{
    for (int i = 0; i < b.n; i++)
        print_stmt(out, b.stmts[i], indent);
}

/* "x_ptr", "BLOCK: tl.constexpr = 128" before sema; "x_ptr: *fp32", "BLOCK: constexpr = 128"
 * after it. */
static void print_param(StrBuf *out, const Param *p)
{
    strbuf_append(out, p->name);
    if (p->sem.kind == SEM_VALUE) {
        strbuf_append(out, ": ");
        type_print(out, p->sem.type);
        return;
    }
    if (p->sem.kind == SEM_CONST) {
        strbuf_append(out, ": constexpr = ");
        const_print(out, &p->sem.cv);
        return;
    }
    if (p->annotation) {
        strbuf_append(out, ": ");
        print_source(out, p->annotation);
    }
    if (p->default_value) {
        strbuf_append(out, p->annotation ? " = " : "=");
        print_source(out, p->default_value);
    }
}

static void print_func(StrBuf *out, const FuncDef *f, int indent)
{
    line_start(out, indent);
    strbuf_printf(out, "def %s(", f->name);
    for (int i = 0; i < f->nparams; i++) {
        if (i > 0)
            strbuf_append(out, ", ");
        print_param(out, &f->params[i]);
    }
    strbuf_putc(out, ')');
    if (f->returns) {
        strbuf_append(out, " -> ");
        print_source(out, f->returns);
    }
    strbuf_putc(out, '\n');
    for (int i = 0; i < f->ndecorators; i++) {
        line_start(out, indent + 1);
        strbuf_append(out, "decorator ");
        print_source(out, f->decorators[i]);
        strbuf_putc(out, '\n');
    }
    if (f->docstring) {
        line_start(out, indent + 1);
        strbuf_append(out, "docstring ");
        print_string_literal(out, f->docstring);
        strbuf_putc(out, '\n');
    }
    print_block(out, f->body, indent + 1);
}

void ast_print_func(StrBuf *out, const FuncDef *f) { print_func(out, f, 0); }

/* The module's imports, assignments and defs, in source order. */
void ast_print_module(StrBuf *out, const Module *m)
{
    strbuf_append(out, "module\n");
    int g = 0, f = 0;
    while (g < m->nglobals || f < m->nfuncs) {
        bool take_global =
            f >= m->nfuncs || (g < m->nglobals && m->globals[g]->loc.line < m->funcs[f]->loc.line);
        if (take_global)
            print_stmt(out, m->globals[g++], 1);
        else
            print_func(out, m->funcs[f++], 1);
    }
}
