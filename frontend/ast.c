/* ast.c: AST builders, cloning and printing (being written). */
#include "frontend/frontend.h"

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

Expr *ast_clone_expr(Arena *a, const Expr *e) { (void)a; return (Expr *)e; }
Block ast_clone_block(Arena *a, Block b) { (void)a; return b; }
FuncDef *ast_clone_func(Arena *a, const FuncDef *f) { (void)a; return (FuncDef *)f; }
void ast_print_module(StrBuf *out, const Module *m) { (void)m; strbuf_append(out, "module\n"); }
void ast_print_func(StrBuf *out, const FuncDef *f) { strbuf_printf(out, "def %s\n", f->name); }
