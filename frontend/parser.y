/* parser.y: the .tri grammar, a subset of Python's (Python reference, chapters 6-8).
 *
 * A pure, reentrant LALR(1) parser: no globals, the state travels in ParseState (%param), every
 * token and node carries its location, and actions are one-line calls to the builders below.
 * Syntax errors are reported by yyreport_syntax_error (specific messages where cheap) and the
 * parser resynchronizes at the next NEWLINE (rule `stmt: error NEWLINE`), so every error in a file
 * is reported, up to the Diag's limit. Constructs tric does not support (class, lambda, `**`,
 * `in`, comprehensions, ...) get a message that names them. */

%define api.pure full
%define api.prefix {tfe_}
%define parse.error custom
%define parse.lac full
%locations
%expect 0
%param {ParseState *ps}

%code top {
/* bison counts errors in a variable only its yacc interface reads */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wunused-but-set-variable"
#endif
}

%code requires {
#include "frontend/frontend.h"

typedef struct Lexer Lexer;

/* Growable lists (arena-backed, see ARENA_PUSH) used while a construct is being parsed. */
typedef struct ExprList { Expr **items; int n, cap; } ExprList;
typedef struct StmtList { Stmt **items; int n, cap; } StmtList;
typedef struct ParamList { Param *items; int n, cap, star; bool has_star; } ParamList;
typedef struct NameList { const char **items; int n, cap; } NameList;
typedef struct ImportList { NameList names, asnames; } ImportList;
typedef struct DictItems { ExprList keys, vals; } DictItems;
typedef struct CompClauses { ExprList targets, iters; } CompClauses;
typedef struct Arg { const char *keyword; Expr *value; SrcLoc loc; } Arg;
typedef struct CallArgs { ExprList args, kwargs; NameList kwnames; SrcLoc *kwlocs; int nkwlocs, kwloccap; } CallArgs;
typedef struct ElifItem { SrcLoc loc; Expr *cond; Block body; } ElifItem;
typedef struct ElifList { ElifItem *items; int n, cap; bool overflow; } ElifList;
/* Text built piece by piece (dotted names, adjacent string literals): amortized linear. */
typedef struct Text { char *data; size_t len, cap; } Text;

typedef struct ParseState {
    const SrcFile *file;
    const char *scan_text; /* what the lexer reads: file's text with host code blanked
                              (host_skip.c), the same length and line breaks */
    Arena *arena;
    Diag *diag;
    Lexer *lexer;
    StmtList top;          /* the module's statements */
    int errors_before;     /* diag->errors when parsing started */
    int last_error_line;   /* line of the last error reported (lexer or parser) */
    int depth_error_line;  /* line of the last "nested too deeply" (one per line) */
    int recovered_token;   /* index of the NEWLINE that ended the last error recovery */
} ParseState;
}

%code provides {
int tfe_lex(TFE_STYPE *val, TFE_LTYPE *loc, ParseState *ps);
/* lexer.l */
Lexer *lexer_open(ParseState *ps);
void lexer_close(Lexer *lx);
bool lexer_innermost_bracket(const Lexer *lx, char *ch, SrcLoc *loc);
void lexer_forget_brackets(Lexer *lx);
int lexer_depth(const Lexer *lx);
int lexer_line_keyword(const Lexer *lx);
int lexer_token_count(const Lexer *lx);
const char *lexer_token_text(const Lexer *lx, int *len);
}

%code {
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Deeper expressions are rejected so that every recursive walk of the AST (printer, clone, sema,
 * IR building) stays far from the C stack's limit. Kernels nest a handful of levels. */
#define MAX_EXPR_DEPTH 1000
/* An if with more elifs than this is rejected for the same reason (elif nests an ST_IF). */
#define MAX_ELIFS 1000

static void tfe_error(TFE_LTYPE *loc, ParseState *ps, const char *msg);
static void report(ParseState *ps, SrcLoc loc, const char *fmt, ...) TRIC_PRINTF(3, 4);
static SrcLoc mkloc(const ParseState *ps, TFE_LTYPE l);
#define L(x) mkloc(ps, (x))

static void stmts_push(ParseState *ps, StmtList *l, Stmt *s);
static void stmts_append(ParseState *ps, StmtList *l, const StmtList *more);
static void module_append(ParseState *ps, StmtList *l, const StmtList *more);
static void exprs_push(ParseState *ps, ExprList *l, Expr *e);
static ExprList exprs_one(ParseState *ps, Expr *e);
static Block block_of(const StmtList *l);

static Expr *e_leaf(ParseState *ps, ExprKind kind, SrcLoc loc);
static Expr *e_int(ParseState *ps, SrcLoc loc, int64_t v);
static Expr *e_float(ParseState *ps, SrcLoc loc, double v);
static Expr *e_bool(ParseState *ps, SrcLoc loc, bool v);
static Expr *e_str(ParseState *ps, SrcLoc loc, const char *s);
static Expr *e_name(ParseState *ps, SrcLoc loc, const char *name);
static Expr *e_attr(ParseState *ps, Expr *obj, const char *name, SrcLoc name_loc);
static Expr *e_call(ParseState *ps, Expr *fn, CallArgs *args);
static Expr *e_subscript(ParseState *ps, Expr *obj, ExprList *idx);
static Expr *e_slice(ParseState *ps, SrcLoc loc, Expr *lo, Expr *hi, Expr *step);
static Expr *e_list(ParseState *ps, ExprKind kind, SrcLoc loc, ExprList *elts);
static Expr *e_dict(ParseState *ps, SrcLoc loc, DictItems *items);
static Expr *e_binary(ParseState *ps, SrcLoc loc, BinOp op, Expr *lhs, Expr *rhs);
static Expr *e_compare(ParseState *ps, SrcLoc loc, int op, Expr *lhs, Expr *rhs, bool chained);
static Expr *e_unary(ParseState *ps, SrcLoc loc, UnOp op, Expr *x);
static Expr *e_ternary(ParseState *ps, Expr *then, Expr *cond, Expr *els);
static Expr *e_power(ParseState *ps, SrcLoc loc, Expr *base, Expr *exponent);
static Expr *e_lambda(ParseState *ps, SrcLoc loc, ExprList *params, Expr *body);
static Expr *e_comp(ParseState *ps, SrcLoc loc, bool list, Expr *elt, CompClauses *clauses);
static Expr *e_genexp_call(ParseState *ps, Expr *fn, Expr *genexp);

static void args_add(ParseState *ps, CallArgs *args, Arg arg);
static void dict_add(ParseState *ps, DictItems *d, Expr *k, Expr *v);

static Stmt *s_simple(ParseState *ps, StmtKind kind, SrcLoc loc);
static Stmt *s_expr(ParseState *ps, Expr *value);
static Stmt *s_assign(ParseState *ps, ExprList *chain);
static Stmt *s_annotated(ParseState *ps, Expr *target, Expr *annotation, Expr *value);
static Stmt *s_aug(ParseState *ps, SrcLoc op_loc, BinOp op, Expr *target, Expr *value);
static Stmt *s_return(ParseState *ps, SrcLoc loc, Expr *value);
static Stmt *s_assert(ParseState *ps, SrcLoc loc, Expr *cond, Expr *msg);
static Stmt *s_raise(ParseState *ps, SrcLoc loc, Expr *exc);
static Block block_concat(ParseState *ps, Block a, Block b);
static StmtList try_body(ParseState *ps, Block body, const Block *handlers);
static Stmt *s_if(ParseState *ps, SrcLoc loc, Expr *cond, Block then, ElifList *elifs, Block els);
static void elif_add(ParseState *ps, ElifList *l, SrcLoc loc, Expr *cond, Block body);
static Stmt *s_for(ParseState *ps, SrcLoc loc, Expr *target, Expr *iter, Block body);
static Stmt *s_while(ParseState *ps, SrcLoc loc, Expr *cond, Block body);
static void loop_else(ParseState *ps, SrcLoc else_loc, const char *loop);
static Stmt *s_import(ParseState *ps, SrcLoc loc, const char *module, ImportList *names);
static void import_add(ParseState *ps, ImportList *l, const char *name, const char *asname);
static Text text_of(ParseState *ps, const char *s);
static Text *text_add(ParseState *ps, Text *t, const char *s);
static Stmt *s_def(ParseState *ps, FuncDef *f, ExprList *decorators);
static FuncDef *make_func(ParseState *ps, SrcLoc loc, const char *name, ParamList *params,
                          Expr *returns, Block body);
static Param *make_param(ParseState *ps, SrcLoc loc, const char *name, Expr *annotation,
                         Expr *default_value);
static void params_add(ParseState *ps, ParamList *l, Param *p);
static void params_check(ParseState *ps, ParamList *l);
static void params_star(ParseState *ps, ParamList *l, SrcLoc loc);
static void star_without_params(ParseState *ps, SrcLoc loc);
static void star_params(ParseState *ps, SrcLoc loc);
static void unexpected_indent(ParseState *ps, TFE_LTYPE loc);
}

%union {
    Expr *expr;
    Stmt *stmt;
    FuncDef *func;
    Param *param;
    const char *str;
    int64_t ival;
    double fval;
    int op; /* a BinOp; in comparisons also CMP_IN / CMP_NOT_IN */
    Block block;
    ExprList exprs;
    StmtList stmts;
    ParamList params;
    ImportList imports;
    DictItems dict;
    CompClauses comp;
    Arg arg;
    CallArgs args;
    ElifList elifs;
    Text text;
}

%token <str> NAME "name" STRING "string literal" UNSUPPORTED "unsupported keyword"
%token <ival> INT "integer"
%token <fval> FLOAT "float literal"
%token <op> AUGASSIGN "augmented assignment"
%token NEWLINE "newline" INDENT "indent" DEDENT "dedent" LEXERROR "invalid token"
%token AND "and" OR "or" NOT "not" NOT_IN "not in" IS "is" IN "in" IF "if" ELIF "elif"
%token ELSE "else" FOR "for" WHILE "while" DEF "def" RETURN "return" PASS "pass"
%token BREAK "break" CONTINUE "continue" IMPORT "import" FROM "from" AS "as" ASSERT "assert"
%token RAISE "raise"
%token TRUE "True" FALSE "False" NONE "None" LAMBDA "lambda"
%token TRY "try" EXCEPT "except" FINALLY "finally"
%token EQ "==" NE "!=" LE "<=" GE ">=" SHL "<<" SHR ">>" FLOORDIV "//" POW "**" ARROW "->"
%token COLONEQ ":=" ELLIPSIS "..."

%type <stmts> module_stmts stmts stmt simple_line small_stmts try_stmt
%type <stmt> small_stmt compound if_stmt for_stmt while_stmt import_stmt
%type <func> funcdef
%type <exprs> lambda_params lambda_names
%type <exprs> decorators assign_chain testlist_items target_items list_elems subscripts
%type <expr> decorator return_opt testlist targets test or_test and_test not_test comparison
%type <expr> compare_chain bitor bitxor bitand shift arith term factor power primary atom
%type <expr> subscript opt_test
%type <op> comp_op
%type <block> suite else_opt except_list except_clause
%type <elifs> elif_list
%type <params> params param_list
%type <param> param
%type <args> call_args arg_list
%type <arg> arg
%type <dict> dict_elems
%type <comp> comp_for
%type <text> dotted_name dotted_from dots strings
%type <imports> dotted_as_names import_targets import_as_names

%%

/* module = stmt* */
module: module_stmts                       { ps->top = $1; }
      ;

module_stmts: %empty                       { $$ = (StmtList){0}; }
            | module_stmts stmt            { $$ = $1; module_append(ps, &$$, &$2); }
            ;

stmts: %empty                              { $$ = (StmtList){0}; }
     | stmts stmt                          { $$ = $1; stmts_append(ps, &$$, &$2); }
     ;

/* stmt = simple_line | compound; the other alternatives recover from errors. */
stmt: simple_line
    | compound                             { $$ = (StmtList){0}; stmts_push(ps, &$$, $1); }
    | try_stmt
    | INDENT { unexpected_indent(ps, @1); } stmts DEDENT { $$ = $3; }
    | error NEWLINE                        { yyerrok; ps->recovered_token = lexer_token_count(ps->lexer); $$ = (StmtList){0}; }
    | error DEDENT                         { yyerrok; $$ = (StmtList){0}; }
    ;

/* simple_line = small_stmt (";" small_stmt)* [";"] NEWLINE */
simple_line: small_stmts NEWLINE           { $$ = $1; }
           | small_stmts ';' NEWLINE       { $$ = $1; }
           ;

small_stmts: small_stmt                    { $$ = (StmtList){0}; stmts_push(ps, &$$, $1); }
           | small_stmts ';' small_stmt    { $$ = $1; stmts_push(ps, &$$, $3); }
           ;

small_stmt: testlist                       { $$ = s_expr(ps, $1); }
          | assign_chain                   { $$ = s_assign(ps, &$1); }
          | test ':' test                  { $$ = s_annotated(ps, $1, $3, NULL); }
          | test ':' test '=' testlist     { $$ = s_annotated(ps, $1, $3, $5); }
          | testlist AUGASSIGN testlist    { $$ = s_aug(ps, L(@2), $2, $1, $3); }
          | RETURN                         { $$ = s_return(ps, L(@1), NULL); }
          | RETURN testlist                { $$ = s_return(ps, L(@1), $2); }
          | PASS                           { $$ = s_simple(ps, ST_PASS, L(@1)); }
          | BREAK                          { $$ = s_simple(ps, ST_BREAK, L(@1)); }
          | CONTINUE                       { $$ = s_simple(ps, ST_CONTINUE, L(@1)); }
          | ASSERT test                    { $$ = s_assert(ps, L(@1), $2, NULL); }
          | ASSERT test ',' test           { $$ = s_assert(ps, L(@1), $2, $4); }
          | RAISE                          { $$ = s_raise(ps, L(@1), NULL); }
          | RAISE test                     { $$ = s_raise(ps, L(@1), $2); }
          | RAISE test FROM test           { $$ = s_raise(ps, L(@1), $2); }
          | import_stmt
          ;

/* a = b = value: every testlist but the last is a target */
assign_chain: testlist '=' testlist        { $$ = exprs_one(ps, $1); exprs_push(ps, &$$, $3); }
            | assign_chain '=' testlist    { $$ = $1; exprs_push(ps, &$$, $3); }
            ;

/* import a.b as c, d | from [.]a.b import (c as d, e) | from a import * */
import_stmt: IMPORT dotted_as_names        { $$ = s_import(ps, L(@1), NULL, &$2); }
           | FROM dotted_from IMPORT import_targets { $$ = s_import(ps, L(@1), $2.data, &$4); }
           ;

dotted_as_names: dotted_name               { $$ = (ImportList){0}; import_add(ps, &$$, $1.data, NULL); }
               | dotted_name AS NAME       { $$ = (ImportList){0}; import_add(ps, &$$, $1.data, $3); }
               | dotted_as_names ',' dotted_name { $$ = $1; import_add(ps, &$$, $3.data, NULL); }
               | dotted_as_names ',' dotted_name AS NAME { $$ = $1; import_add(ps, &$$, $3.data, $5); }
               ;

dotted_name: NAME                          { $$ = text_of(ps, $1); }
           | dotted_name '.' NAME          { $$ = *text_add(ps, text_add(ps, &$1, "."), $3); }
           ;

dotted_from: dotted_name
           | dots                          { $$ = $1; }
           | dots dotted_name              { $$ = *text_add(ps, &$1, $2.data); }
           ;

dots: '.'                                  { $$ = text_of(ps, "."); }
    | ELLIPSIS                             { $$ = text_of(ps, "..."); }
    | dots '.'                             { $$ = *text_add(ps, &$1, "."); }
    | dots ELLIPSIS                        { $$ = *text_add(ps, &$1, "..."); }
    ;

import_targets: '*'                        { $$ = (ImportList){0}; import_add(ps, &$$, "*", NULL); }
              | import_as_names
              | '(' import_as_names ')'    { $$ = $2; }
              | '(' import_as_names ',' ')' { $$ = $2; }
              ;

import_as_names: NAME                      { $$ = (ImportList){0}; import_add(ps, &$$, $1, NULL); }
               | NAME AS NAME              { $$ = (ImportList){0}; import_add(ps, &$$, $1, $3); }
               | import_as_names ',' NAME  { $$ = $1; import_add(ps, &$$, $3, NULL); }
               | import_as_names ',' NAME AS NAME { $$ = $1; import_add(ps, &$$, $3, $5); }
               ;

compound: if_stmt
        | for_stmt
        | while_stmt
        | funcdef                          { $$ = s_def(ps, $1, NULL); }
        | decorators funcdef               { $$ = s_def(ps, $2, &$1); }
        ;

/* decorator = "@" expression NEWLINE (PEP 614: any expression) */
decorators: decorator                      { $$ = exprs_one(ps, $1); }
          | decorators decorator           { $$ = $1; exprs_push(ps, &$$, $2); }
          ;

decorator: '@' test NEWLINE                { $$ = $2; }
         ;

/* A module-level try (host code choosing an import: `try: from triton.language.extra.libdevice
 * import tanh` / `except ModuleNotFoundError: from ...cuda.libdevice import tanh`) stands for its
 * `try` body; the handlers, `else` and `finally` are dropped. The lexer makes TRY/EXCEPT/FINALLY
 * only outside function bodies; inside one, `try` stays the unsupported-keyword error. */
try_stmt: TRY ':' suite except_list try_tail { $$ = try_body(ps, $3, &$4); }
        | TRY ':' suite FINALLY ':' suite   { $$ = (StmtList){$3.stmts, $3.n, $3.n}; }
        ;

except_list: except_clause                 { $$ = $1; }
           | except_list except_clause     { $$ = block_concat(ps, $1, $2); }
           ;

except_clause: EXCEPT ':' suite            { $$ = $3; }
             | EXCEPT test ':' suite       { $$ = $4; }
             | EXCEPT test AS NAME ':' suite { $$ = $6; }
             ;

try_tail: %empty
        | ELSE ':' suite
        | FINALLY ':' suite
        | ELSE ':' suite FINALLY ':' suite
        ;

/* if_stmt = "if" test ":" suite ("elif" test ":" suite)* ["else" ":" suite] */
if_stmt: IF test ':' suite elif_list else_opt { $$ = s_if(ps, L(@1), $2, $4, &$5, $6); }
       ;

elif_list: %empty                          { $$ = (ElifList){0}; }
         | elif_list ELIF test ':' suite   { $$ = $1; elif_add(ps, &$$, L(@2), $3, $5); }
         ;

else_opt: %empty                           { $$ = (Block){0}; }
        | ELSE ':' suite                   { $$ = $3; }
        ;

/* for_stmt = "for" targets "in" testlist ":" suite; Python's loop `else` is rejected */
for_stmt: FOR targets IN testlist ':' suite { $$ = s_for(ps, L(@1), $2, $4, $6); }
        | FOR targets IN testlist ':' suite ELSE ':' suite { loop_else(ps, L(@7), "for"); $$ = s_for(ps, L(@1), $2, $4, $6); }
        ;

while_stmt: WHILE test ':' suite           { $$ = s_while(ps, L(@1), $2, $4); }
          | WHILE test ':' suite ELSE ':' suite { loop_else(ps, L(@5), "while"); $$ = s_while(ps, L(@1), $2, $4); }
          ;

/* suite = simple_line | NEWLINE INDENT stmt+ DEDENT */
suite: simple_line                         { $$ = block_of(&$1); }
     | NEWLINE INDENT stmts DEDENT         { $$ = block_of(&$3); }
     ;

/* funcdef = "def" NAME "(" [params [","]] ")" ["->" test] ":" suite */
funcdef: DEF NAME '(' params ')' return_opt ':' suite { $$ = make_func(ps, L(@2), $2, &$4, $6, $8); }
       ;

return_opt: %empty                         { $$ = NULL; }
          | ARROW test                     { $$ = $2; }
          ;

params: %empty                             { $$ = (ParamList){0}; }
      | param_list                         { $$ = $1; params_check(ps, &$$); }
      | param_list ','                     { $$ = $1; params_check(ps, &$$); }
      | param_list ',' '*'                 { $$ = $1; star_without_params(ps, L(@3)); }
      | '*'                                { $$ = (ParamList){0}; star_without_params(ps, L(@1)); }
      ;

param_list: param                          { $$ = (ParamList){0}; params_add(ps, &$$, $1); }
          | '*' ',' param                  { $$ = (ParamList){0}; params_star(ps, &$$, L(@1)); params_add(ps, &$$, $3); }
          | param_list ',' param           { $$ = $1; params_add(ps, &$$, $3); }
          | param_list ',' '*' ',' param   { $$ = $1; params_star(ps, &$$, L(@3)); params_add(ps, &$$, $5); }
          ;

param: NAME                                { $$ = make_param(ps, L(@1), $1, NULL, NULL); }
     | NAME ':' test                       { $$ = make_param(ps, L(@1), $1, $3, NULL); }
     | NAME '=' test                       { $$ = make_param(ps, L(@1), $1, NULL, $3); }
     | NAME ':' test '=' test              { $$ = make_param(ps, L(@1), $1, $3, $5); }
     | '*' NAME                            { $$ = make_param(ps, L(@2), $2, NULL, NULL); star_params(ps, L(@1)); }
     | POW NAME                            { $$ = make_param(ps, L(@2), $2, NULL, NULL); star_params(ps, L(@1)); }
     ;

/* testlist = test ("," test)* [","]: a tuple when there is a comma */
testlist: test
        | testlist_items                   { $$ = e_list(ps, EX_TUPLE, L(@1), &$1); }
        | testlist_items test              { exprs_push(ps, &$1, $2); $$ = e_list(ps, EX_TUPLE, L(@1), &$1); }
        ;

testlist_items: test ','                   { $$ = exprs_one(ps, $1); }
              | testlist_items test ','    { $$ = $1; exprs_push(ps, &$$, $2); }
              ;

/* for-loop targets: like testlist but without comparisons, so that `in` ends them */
targets: bitor
       | target_items                      { $$ = e_list(ps, EX_TUPLE, L(@1), &$1); }
       | target_items bitor                { exprs_push(ps, &$1, $2); $$ = e_list(ps, EX_TUPLE, L(@1), &$1); }
       ;

target_items: bitor ','                    { $$ = exprs_one(ps, $1); }
            | target_items bitor ','       { $$ = $1; exprs_push(ps, &$$, $2); }
            ;

/* test = or_test ["if" or_test "else" test] | "lambda" [NAME ("," NAME)* [","]] ":" test */
test: or_test
    | or_test IF or_test ELSE test         { $$ = e_ternary(ps, $1, $3, $5); }
    | LAMBDA lambda_params ':' test        { $$ = e_lambda(ps, L(@1), &$2, $4); }
    ;

lambda_params: %empty                      { $$ = (ExprList){0}; }
             | lambda_names
             | lambda_names ','
             ;

lambda_names: NAME                         { $$ = exprs_one(ps, e_name(ps, L(@1), $1)); }
            | lambda_names ',' NAME        { $$ = $1; exprs_push(ps, &$$, e_name(ps, L(@3), $3)); }
            ;

or_test: and_test
       | or_test OR and_test               { $$ = e_binary(ps, L(@2), BIN_OR, $1, $3); }
       ;

and_test: not_test
        | and_test AND not_test            { $$ = e_binary(ps, L(@2), BIN_AND, $1, $3); }
        ;

not_test: comparison
        | NOT not_test                     { $$ = e_unary(ps, L(@1), UN_NOT, $2); }
        ;

/* comparison = bitor [comp_op bitor]; a chain a < b < c is rejected */
comparison: bitor
          | compare_chain
          ;

compare_chain: bitor comp_op bitor         { $$ = e_compare(ps, L(@2), $2, $1, $3, false); }
             | compare_chain comp_op bitor { $$ = e_compare(ps, L(@2), $2, $1, $3, true); }
             ;

comp_op: '<'                               { $$ = BIN_LT; }
       | '>'                               { $$ = BIN_GT; }
       | EQ                                { $$ = BIN_EQ; }
       | NE                                { $$ = BIN_NE; }
       | LE                                { $$ = BIN_LE; }
       | GE                                { $$ = BIN_GE; }
       | IS                                { $$ = BIN_IS; }
       | IS NOT                            { $$ = BIN_IS_NOT; }
       | IN                                { $$ = -1; }
       | NOT_IN                            { $$ = -2; }
       ;

bitor: bitxor
     | bitor '|' bitxor                    { $$ = e_binary(ps, L(@2), BIN_BITOR, $1, $3); }
     ;

bitxor: bitand
      | bitxor '^' bitand                  { $$ = e_binary(ps, L(@2), BIN_BITXOR, $1, $3); }
      ;

bitand: shift
      | bitand '&' shift                   { $$ = e_binary(ps, L(@2), BIN_BITAND, $1, $3); }
      ;

shift: arith
     | shift SHL arith                     { $$ = e_binary(ps, L(@2), BIN_SHL, $1, $3); }
     | shift SHR arith                     { $$ = e_binary(ps, L(@2), BIN_SHR, $1, $3); }
     ;

arith: term
     | arith '+' term                      { $$ = e_binary(ps, L(@2), BIN_ADD, $1, $3); }
     | arith '-' term                      { $$ = e_binary(ps, L(@2), BIN_SUB, $1, $3); }
     ;

term: factor
    | term '*' factor                      { $$ = e_binary(ps, L(@2), BIN_MUL, $1, $3); }
    | term '/' factor                      { $$ = e_binary(ps, L(@2), BIN_DIV, $1, $3); }
    | term FLOORDIV factor                 { $$ = e_binary(ps, L(@2), BIN_FLOORDIV, $1, $3); }
    | term '%' factor                      { $$ = e_binary(ps, L(@2), BIN_MOD, $1, $3); }
    | term '@' factor                      { $$ = e_binary(ps, L(@2), BIN_MATMUL, $1, $3); }
    ;

factor: power
      | '-' factor                         { $$ = e_unary(ps, L(@1), UN_NEG, $2); }
      | '+' factor                         { $$ = e_unary(ps, L(@1), UN_PLUS, $2); }
      | '~' factor                         { $$ = e_unary(ps, L(@1), UN_INVERT, $2); }
      ;

/* `**` is parsed (so that the message points at it) and rejected */
power: primary
     | primary POW factor                  { $$ = e_power(ps, L(@2), $1, $3); }
     ;

primary: atom
       | primary '.' NAME                  { $$ = e_attr(ps, $1, $3, L(@3)); }
       | primary '(' call_args ')'         { $$ = e_call(ps, $1, &$3); }
       | primary '(' test comp_for ')'     { $$ = e_genexp_call(ps, $1, e_comp(ps, L(@3), false, $3, &$4)); }
       | primary '[' subscripts ']'        { $$ = e_subscript(ps, $1, &$3); }
       | primary '[' subscripts ',' ']'    { $$ = e_subscript(ps, $1, &$3); }
       ;

atom: NAME                                 { $$ = e_name(ps, L(@1), $1); }
    | INT                                  { $$ = e_int(ps, L(@1), $1); }
    | FLOAT                                { $$ = e_float(ps, L(@1), $1); }
    | strings                              { $$ = e_str(ps, L(@1), $1.data); }
    | TRUE                                 { $$ = e_bool(ps, L(@1), true); }
    | FALSE                                { $$ = e_bool(ps, L(@1), false); }
    | NONE                                 { $$ = e_leaf(ps, EX_NONE, L(@1)); }
    | '(' ')'                              { $$ = e_list(ps, EX_TUPLE, L(@1), NULL); }
    | '(' testlist ')'                     { $$ = $2; }
    | '(' test comp_for ')'                { $$ = e_comp(ps, L(@1), false, $2, &$3); }
    | '[' test comp_for ']'                { $$ = e_comp(ps, L(@1), true, $2, &$3); }
    | '[' ']'                              { $$ = e_list(ps, EX_LIST, L(@1), NULL); }
    | '[' list_elems ']'                   { $$ = e_list(ps, EX_LIST, L(@1), &$2); }
    | '[' list_elems ',' ']'               { $$ = e_list(ps, EX_LIST, L(@1), &$2); }
    | '{' '}'                              { $$ = e_dict(ps, L(@1), NULL); }
    | '{' dict_elems '}'                   { $$ = e_dict(ps, L(@1), &$2); }
    | '{' dict_elems ',' '}'               { $$ = e_dict(ps, L(@1), &$2); }
    ;

/* adjacent string literals concatenate (2.4.2) */
strings: STRING                            { $$ = text_of(ps, $1); }
       | strings STRING                    { $$ = *text_add(ps, &$1, $2); }
       ;

/* comp_for = "for" targets "in" or_test ("for" targets "in" or_test | "if" or_test)* (6.2.4):
 * parsed everywhere, read only in @triton.autotune configs (autotune.c); sema rejects it in
 * kernel code */
comp_for: FOR targets IN or_test           { $$ = (CompClauses){0}; exprs_push(ps, &$$.targets, $2); exprs_push(ps, &$$.iters, $4); }
        | comp_for FOR targets IN or_test  { $$ = $1; exprs_push(ps, &$$.targets, $3); exprs_push(ps, &$$.iters, $5); }
        | comp_for IF or_test              { $$ = $1; exprs_push(ps, &$$.targets, NULL); exprs_push(ps, &$$.iters, $3); }
        ;

list_elems: test                           { $$ = exprs_one(ps, $1); }
          | list_elems ',' test            { $$ = $1; exprs_push(ps, &$$, $3); }
          ;

dict_elems: test ':' test                  { $$ = (DictItems){0}; dict_add(ps, &$$, $1, $3); }
          | dict_elems ',' test ':' test   { $$ = $1; dict_add(ps, &$$, $3, $5); }
          ;

/* call_args = [arg ("," arg)* [","]], arg = test | NAME "=" test */
call_args: %empty                          { $$ = (CallArgs){0}; }
         | arg_list
         | arg_list ','
         ;

arg_list: arg                              { $$ = (CallArgs){0}; args_add(ps, &$$, $1); }
        | arg_list ',' arg                 { $$ = $1; args_add(ps, &$$, $3); }
        ;

/* `**kw` is kept as a keyword named "**" (FLA's `@triton.autotune(..., **autotune_cache_kwargs)`:
 * autotune.c sets it aside; sema rejects one in kernel code) */
arg: test                                  { $$ = (Arg){NULL, $1, L(@1)}; }
   | NAME '=' test                         { $$ = (Arg){$1, $3, L(@1)}; }
   | POW test                              { $$ = (Arg){"**", $2, L(@1)}; }
   ;

/* subscripts = subscript ("," subscript)*, subscript = test | [test] ":" [test] [":" [test]] */
subscripts: subscript                      { $$ = exprs_one(ps, $1); }
          | subscripts ',' subscript       { $$ = $1; exprs_push(ps, &$$, $3); }
          ;

subscript: test
         | opt_test ':' opt_test           { $$ = e_slice(ps, L(@2), $1, $3, NULL); }
         | opt_test ':' opt_test ':' opt_test { $$ = e_slice(ps, L(@2), $1, $3, $5); }
         ;

opt_test: %empty                           { $$ = NULL; }
        | test
        ;

%%

/* ---- errors ------------------------------------------------------------------------------------ */

static SrcLoc mkloc(const ParseState *ps, TFE_LTYPE l)
{
    return (SrcLoc){ps->file, l.first_line, l.first_column};
}

static void report(ParseState *ps, SrcLoc loc, const char *fmt, ...)
{
    ps->last_error_line = loc.line;
    va_list ap;
    va_start(ap, fmt);
    diag_verror(ps->diag, loc, fmt, ap);
    va_end(ap);
}

/* Bison calls this only when its stack is exhausted (YYMAXDEPTH): nesting that the bracket and
 * expression limits did not catch, e.g. ten thousand unary minus signs. */
static void tfe_error(TFE_LTYPE *loc, ParseState *ps, const char *msg)
{
    if (strstr(msg, "memory exhausted"))
        report(ps, mkloc(ps, *loc), "expression nested too deeply");
    else
        report(ps, mkloc(ps, *loc), "%s", msg);
}

static bool expects(const yysymbol_kind_t *exp, int n, yysymbol_kind_t kind)
{
    for (int i = 0; i < n; i++)
        if (exp[i] == kind)
            return true;
    return false;
}

/* "'if'", "')'", "a name": how a token kind reads in a message. */
static const char *symbol_text(ParseState *ps, yysymbol_kind_t kind)
{
    switch (kind) {
    case YYSYMBOL_YYEOF: return "end of file";
    case YYSYMBOL_NAME: return "a name";
    case YYSYMBOL_INT: return "an integer";
    case YYSYMBOL_FLOAT: return "a number";
    case YYSYMBOL_STRING: return "a string literal";
    case YYSYMBOL_NEWLINE: return "end of line";
    case YYSYMBOL_INDENT: return "an indented block";
    case YYSYMBOL_DEDENT: return "end of block";
    case YYSYMBOL_AUGASSIGN: return "an augmented assignment";
    default: break;
    }
    const char *name = yysymbol_name(kind);
    if (name[0] == '\'') /* a character token, already "')'" */
        return name;
    return arena_printf(ps->arena, "'%s'", name); /* a keyword or operator's alias */
}

/* The unexpected token as the user wrote it: "'foo'", "')'", "number '3x'". */
static const char *lookahead_text(ParseState *ps, yysymbol_kind_t kind)
{
    int len;
    const char *text = lexer_token_text(ps->lexer, &len);
    if (len > 40)
        len = 40;
    switch (kind) {
    case YYSYMBOL_NAME: return arena_printf(ps->arena, "name '%.*s'", len, text);
    case YYSYMBOL_INT:
    case YYSYMBOL_FLOAT: return arena_printf(ps->arena, "number '%.*s'", len, text);
    case YYSYMBOL_STRING: return "string literal";
    case YYSYMBOL_AUGASSIGN: return arena_printf(ps->arena, "'%.*s'", len, text);
    case YYSYMBOL_NEWLINE: return "end of line";
    case YYSYMBOL_INDENT: return "indent";
    case YYSYMBOL_DEDENT: return "dedent";
    default: return symbol_text(ps, kind);
    }
}

/* The Python keywords tric reserves but does not support, and what to say about each. */
static const struct {
    const char *keyword, *message;
} unsupported_keywords[] = {
    {"class", "classes are not supported in tric kernels"},
    {"with", "'with' statements are not supported"},
    {"try", "exceptions ('try') are not supported in tric kernels"},
    {"except", "exceptions ('except') are not supported in tric kernels"},
    {"finally", "exceptions ('finally') are not supported in tric kernels"},
    {"global", "'global' and 'nonlocal' declarations are not supported"},
    {"nonlocal", "'global' and 'nonlocal' declarations are not supported"},
    {"yield", "generators ('yield') are not supported"},
    {"del", "'del' is not supported in tric kernels"},
    {"async", "'async' is not supported in tric kernels"},
    {"await", "'await' is not supported in tric kernels"},
};

static const char *unsupported_keyword_message(const char *text, int len)
{
    for (size_t i = 0; i < sizeof unsupported_keywords / sizeof unsupported_keywords[0]; i++)
        if ((int)strlen(unsupported_keywords[i].keyword) == len &&
            !strncmp(unsupported_keywords[i].keyword, text, (size_t)len))
            return unsupported_keywords[i].message;
    return "this Python keyword is not supported in tric kernels";
}

/* The message for a syntax error: specific for the common cases, else "unexpected X". */
static int yyreport_syntax_error(const yypcontext_t *ctx, ParseState *ps)
{
    yysymbol_kind_t tok = yypcontext_token(ctx);
    SrcLoc loc = mkloc(ps, *yypcontext_location(ctx));
    if (tok == YYSYMBOL_LEXERROR) /* the lexer said why */
        return 0;
    /* Past the Diag's limit (20 unless set; diag.c) messages are only counted: skip the work. */
    int max_errors = ps->diag->max_errors > 0 ? ps->diag->max_errors : 20;
    if (ps->diag->errors > max_errors) {
        report(ps, loc, "syntax error");
        return 0;
    }
    bool had_errors = ps->diag->errors > ps->errors_before;
    /* After an earlier error the block structure may be off; messages about it are noise. */
    if (had_errors && (tok == YYSYMBOL_DEDENT || tok == YYSYMBOL_INDENT || tok == YYSYMBOL_YYEOF))
        return 0;

    /* `**x` / `*x` where an expression starts, inside a bracket opened on an earlier line (a
     * multi-line dict's `**base`): the unpacking is the error, not the bracket */
    char open_ch;
    SrcLoc open_loc;
    bool star_first = tok == YYSYMBOL_POW || strcmp(yysymbol_name(tok), "'*'") == 0;
    if (star_first && lexer_innermost_bracket(ps->lexer, &open_ch, &open_loc) &&
        open_loc.line < loc.line) {
        yysymbol_kind_t expected[YYNTOKENS];
        int n = yypcontext_expected_tokens(ctx, expected, YYNTOKENS);
        if (n > 0 && expects(expected, n, YYSYMBOL_NAME) && expects(expected, n, YYSYMBOL_INT)) {
            report(ps, loc, "unpacking with '*' or '**' is not supported");
            return 0;
        }
    }
    /* A bracket left open on an earlier line swallowed the newlines since (CPython 3.10 does the
     * same): name the bracket, and forget it so that the rest of the file parses on its own. */
    if (lexer_innermost_bracket(ps->lexer, &open_ch, &open_loc) && open_loc.line < loc.line) {
        lexer_forget_brackets(ps->lexer);
        report(ps, open_loc, "'%c' was never closed", open_ch);
        return 0;
    }

    /* One message per line: a second one on the same line is almost always a consequence. */
    if (ps->last_error_line == loc.line)
        return 0;

    yysymbol_kind_t exp[YYNTOKENS];
    int nexp = yypcontext_expected_tokens(ctx, exp, YYNTOKENS);
    if (nexp < 0)
        nexp = 0;
    bool wants_expr = expects(exp, nexp, YYSYMBOL_NAME) && expects(exp, nexp, YYSYMBOL_INT);
    int line_kw = lexer_line_keyword(ps->lexer);
    int len;
    const char *text = lexer_token_text(ps->lexer, &len);

    switch ((int)tok) {
    case YYSYMBOL_UNSUPPORTED:
        report(ps, loc, "%s", unsupported_keyword_message(text, len));
        return 0;
    case YYSYMBOL_COLONEQ:
        report(ps, loc, "assignment expressions (':=') are not supported");
        return 0;
    case YYSYMBOL_ELLIPSIS:
        report(ps, loc, "'...' (Ellipsis) is not supported");
        return 0;
    case YYSYMBOL_INDENT:
        report(ps, loc, "unexpected indent");
        return 0;
    case YYSYMBOL_FOR:
        if (lexer_depth(ps->lexer) > 0) {
            report(ps, loc, "comprehensions and generator expressions are not supported");
            return 0;
        }
        break;
    default:
        break;
    }
    bool star = tok == YYSYMBOL_POW || strcmp(yysymbol_name(tok), "'*'") == 0;
    if (star && wants_expr) {
        report(ps, loc, "unpacking with '*' or '**' is not supported");
        return 0;
    }
    if ((tok == YYSYMBOL_ELSE && line_kw == ELSE) || (tok == YYSYMBOL_ELIF && line_kw == ELIF)) {
        report(ps, loc, "'%s' without a matching 'if' before it",
               tok == YYSYMBOL_ELSE ? "else" : "elif");
        return 0;
    }
    char innermost;
    SrcLoc innermost_loc;
    if ((!strcmp(yysymbol_name(tok), "','") || !strcmp(yysymbol_name(tok), "'}'")) &&
        lexer_innermost_bracket(ps->lexer, &innermost, &innermost_loc) && innermost == '{' &&
        !expects(exp, nexp, YYSYMBOL_NAME)) {
        report(ps, loc, "set literals are not supported (a dict needs key: value)");
        return 0;
    }
    if (nexp == 1 && exp[0] == YYSYMBOL_INDENT) {
        report(ps, loc, "expected an indented block");
        return 0;
    }
    if (expects(exp, nexp, YYSYMBOL_DEF) && !expects(exp, nexp, YYSYMBOL_IF)) {
        report(ps, loc, "expected 'def' after a decorator");
        return 0;
    }
    bool at_end = tok == YYSYMBOL_NEWLINE || tok == YYSYMBOL_YYEOF;
    if (at_end) {
        bool colon = false;
        for (int i = 0; i < nexp; i++)
            if (!strcmp(yysymbol_name(exp[i]), "':'"))
                colon = true;
        if (colon) {
            switch (line_kw) {
            case IF: report(ps, loc, "expected ':' after 'if' condition"); return 0;
            case ELIF: report(ps, loc, "expected ':' after 'elif' condition"); return 0;
            case WHILE: report(ps, loc, "expected ':' after 'while' condition"); return 0;
            case FOR: report(ps, loc, "expected ':' at the end of the 'for' statement"); return 0;
            case DEF: report(ps, loc, "expected ':' after the function signature"); return 0;
            case ELSE: report(ps, loc, "expected ':' after 'else'"); return 0;
            default: break;
            }
        }
        if (expects(exp, nexp, YYSYMBOL_ELSE) && !colon) {
            report(ps, loc, "expected 'else' in the conditional expression (x if c else y)");
            return 0;
        }
        if (wants_expr) {
            report(ps, loc, "expected an expression before %s",
                   tok == YYSYMBOL_NEWLINE ? "end of line" : "end of file");
            return 0;
        }
    }
    if (!strcmp(yysymbol_name(tok), "'='") && expects(exp, nexp, YYSYMBOL_EQ) &&
        (line_kw == IF || line_kw == ELIF || line_kw == WHILE)) {
        report(ps, loc, "unexpected '=' in a condition; did you mean '=='?");
        return 0;
    }

    StrBuf msg = {0};
    strbuf_printf(&msg, "unexpected %s", lookahead_text(ps, tok));
    if (nexp > 0 && nexp <= 4 && !wants_expr) {
        strbuf_append(&msg, "; expected ");
        for (int i = 0; i < nexp; i++) {
            if (i > 0)
                strbuf_append(&msg, i == nexp - 1 ? " or " : ", ");
            strbuf_append(&msg, symbol_text(ps, exp[i]));
        }
    } else if (wants_expr && !at_end) {
        strbuf_append(&msg, "; expected an expression");
    }
    report(ps, loc, "%s", msg.data);
    strbuf_free(&msg);
    return 0;
}

static void unexpected_indent(ParseState *ps, TFE_LTYPE loc)
{
    /* An indented line right after a line the parser skipped (its `def ...:` or `if ...:` had an
     * error) is the body of that line, not a second mistake. */
    int index = lexer_token_count(ps->lexer);
    if (ps->recovered_token && index == ps->recovered_token + 1)
        return;
    if (ps->last_error_line == loc.first_line)
        return;
    report(ps, mkloc(ps, loc), "unexpected indent");
}

/* ---- lists ------------------------------------------------------------------------------------- */

static void stmts_push(ParseState *ps, StmtList *l, Stmt *s)
{
    if (s)
        ARENA_PUSH(ps->arena, l->items, l->n, l->cap, s);
}

static void stmts_append(ParseState *ps, StmtList *l, const StmtList *more)
{
    for (int i = 0; i < more->n; i++)
        stmts_push(ps, l, more->items[i]);
}

static void exprs_push(ParseState *ps, ExprList *l, Expr *e)
{
    ARENA_PUSH(ps->arena, l->items, l->n, l->cap, e);
}

static ExprList exprs_one(ParseState *ps, Expr *e)
{
    ExprList l = {0};
    exprs_push(ps, &l, e);
    return l;
}

static Block block_of(const StmtList *l)
{
    return (Block){l->items, l->n};
}

/* ---- expressions ------------------------------------------------------------------------------- */

static int max_int(int a, int b) { return a > b ? a : b; }

static int depth_of(const Expr *e) { return e ? e->depth : 0; }

static int depth_of_list(Expr *const *items, int n)
{
    int d = 0;
    for (int i = 0; i < n; i++)
        d = max_int(d, depth_of(items[i]));
    return d;
}

/* Sets e->depth from its children and rejects trees deeper than MAX_EXPR_DEPTH. */
static Expr *finish(ParseState *ps, Expr *e)
{
    int d = 0;
    switch (e->kind) {
    case EX_ATTR: d = depth_of(e->attr.obj); break;
    case EX_CALL:
        d = max_int(depth_of(e->call.fn), max_int(depth_of_list(e->call.args, e->call.nargs),
                                                  depth_of_list(e->call.kwargs, e->call.nkwargs)));
        break;
    case EX_SUBSCRIPT: d = max_int(depth_of(e->sub.obj), depth_of_list(e->sub.idx, e->sub.nidx)); break;
    case EX_SLICE:
        d = max_int(depth_of(e->slice.lo), max_int(depth_of(e->slice.hi), depth_of(e->slice.step)));
        break;
    case EX_TUPLE:
    case EX_LIST: d = depth_of_list(e->list.elts, e->list.n); break;
    case EX_DICT:
        d = max_int(depth_of_list(e->dict.keys, e->dict.n), depth_of_list(e->dict.vals, e->dict.n));
        break;
    case EX_BINARY: d = max_int(depth_of(e->bin.lhs), depth_of(e->bin.rhs)); break;
    case EX_UNARY: d = depth_of(e->un.operand); break;
    case EX_TERNARY:
        d = max_int(depth_of(e->ternary.cond),
                    max_int(depth_of(e->ternary.then), depth_of(e->ternary.els)));
        break;
    case EX_LAMBDA: d = depth_of(e->lambda.body); break;
    case EX_COMP:
        d = max_int(depth_of(e->comp.elt), max_int(depth_of_list(e->comp.targets, e->comp.n),
                                                   depth_of_list(e->comp.iters, e->comp.n)));
        break;
    default: break;
    }
    e->depth = d + 1;
    if (e->depth == MAX_EXPR_DEPTH + 1 && ps->depth_error_line != e->loc.line) {
        ps->depth_error_line = e->loc.line;
        report(ps, e->loc, "expression nested too deeply (more than %d levels)", MAX_EXPR_DEPTH);
    }
    return e;
}

static Expr *e_leaf(ParseState *ps, ExprKind kind, SrcLoc loc)
{
    return finish(ps, ast_expr(ps->arena, kind, loc));
}

static Expr *e_int(ParseState *ps, SrcLoc loc, int64_t v)
{
    Expr *e = ast_expr(ps->arena, EX_INT, loc);
    e->ival = v;
    return finish(ps, e);
}

static Expr *e_float(ParseState *ps, SrcLoc loc, double v)
{
    Expr *e = ast_expr(ps->arena, EX_FLOAT, loc);
    e->fval = v;
    return finish(ps, e);
}

static Expr *e_bool(ParseState *ps, SrcLoc loc, bool v)
{
    Expr *e = ast_expr(ps->arena, EX_BOOL, loc);
    e->bval = v;
    return finish(ps, e);
}

static Expr *e_str(ParseState *ps, SrcLoc loc, const char *s)
{
    Expr *e = ast_expr(ps->arena, EX_STR, loc);
    e->str = s;
    return finish(ps, e);
}


static Expr *e_name(ParseState *ps, SrcLoc loc, const char *name)
{
    Expr *e = ast_expr(ps->arena, EX_NAME, loc);
    e->str = name;
    return finish(ps, e);
}

static Expr *e_attr(ParseState *ps, Expr *obj, const char *name, SrcLoc name_loc)
{
    Expr *e = ast_expr(ps->arena, EX_ATTR, obj->loc);
    e->attr.obj = obj;
    e->attr.name = name;
    e->attr.name_loc = name_loc;
    return finish(ps, e);
}

typedef struct NamedIndex {
    const char *name;
    int index;
} NamedIndex;

static int compare_named(const void *pa, const void *pb)
{
    const NamedIndex *a = pa, *b = pb;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* Marks dup[i] for each name that repeats an earlier one. Sorting keeps this O(n log n): a
 * generated file may have a call with 100000 keywords. */
static bool *find_duplicates(ParseState *ps, const char *const *names, int stride_bytes, int n)
{
    if (n < 2)
        return NULL;
    NamedIndex *sorted = arena_alloc(ps->arena, (size_t)n * sizeof *sorted);
    for (int i = 0; i < n; i++)
        sorted[i] = (NamedIndex){*(const char *const *)((const char *)names + (size_t)i * (size_t)stride_bytes), i};
    qsort(sorted, (size_t)n, sizeof *sorted, compare_named);
    bool *dup = NULL;
    for (int i = 1; i < n; i++) {
        if (!strcmp(sorted[i].name, sorted[i - 1].name)) {
            if (!dup)
                dup = arena_alloc(ps->arena, (size_t)n * sizeof *dup);
            dup[sorted[i].index] = true;
        }
    }
    return dup;
}

static Expr *e_call(ParseState *ps, Expr *fn, CallArgs *a)
{
    bool *dup = find_duplicates(ps, a->kwnames.items, (int)sizeof(char *), a->kwnames.n);
    for (int i = 0; dup && i < a->kwnames.n; i++)
        if (dup[i] && strcmp(a->kwnames.items[i], "**"))
            report(ps, a->kwlocs[i], "keyword argument repeated: %s", a->kwnames.items[i]);
    Expr *e = ast_expr(ps->arena, EX_CALL, fn->loc);
    e->call.fn = fn;
    e->call.args = a->args.items;
    e->call.nargs = a->args.n;
    e->call.kwnames = a->kwnames.items;
    e->call.kwargs = a->kwargs.items;
    e->call.nkwargs = a->kwargs.n;
    return finish(ps, e);
}

/* Python's rule: positional arguments come first (a SyntaxError otherwise). Repeated keywords are
 * found when the call is complete (find_duplicates). */
static void args_add(ParseState *ps, CallArgs *a, Arg arg)
{
    if (!arg.keyword) {
        if (a->kwargs.n > 0)
            report(ps, arg.loc, "positional argument follows keyword argument");
        exprs_push(ps, &a->args, arg.value);
        return;
    }
    ARENA_PUSH(ps->arena, a->kwnames.items, a->kwnames.n, a->kwnames.cap, arg.keyword);
    ARENA_PUSH(ps->arena, a->kwlocs, a->nkwlocs, a->kwloccap, arg.loc);
    exprs_push(ps, &a->kwargs, arg.value);
}

static Expr *e_subscript(ParseState *ps, Expr *obj, ExprList *idx)
{
    Expr *e = ast_expr(ps->arena, EX_SUBSCRIPT, obj->loc);
    e->sub.obj = obj;
    e->sub.idx = idx->items;
    e->sub.nidx = idx->n;
    return finish(ps, e);
}

static Expr *e_slice(ParseState *ps, SrcLoc loc, Expr *lo, Expr *hi, Expr *step)
{
    Expr *e = ast_expr(ps->arena, EX_SLICE, lo ? lo->loc : loc);
    e->slice.lo = lo;
    e->slice.hi = hi;
    e->slice.step = step;
    return finish(ps, e);
}

static Expr *e_list(ParseState *ps, ExprKind kind, SrcLoc loc, ExprList *elts)
{
    Expr *e = ast_expr(ps->arena, kind, loc);
    if (elts) {
        e->list.elts = elts->items;
        e->list.n = elts->n;
    }
    return finish(ps, e);
}

static void dict_add(ParseState *ps, DictItems *d, Expr *k, Expr *v)
{
    exprs_push(ps, &d->keys, k);
    exprs_push(ps, &d->vals, v);
}

static Expr *e_dict(ParseState *ps, SrcLoc loc, DictItems *items)
{
    Expr *e = ast_expr(ps->arena, EX_DICT, loc);
    if (items) {
        e->dict.keys = items->keys.items;
        e->dict.vals = items->vals.items;
        e->dict.n = items->keys.n;
    }
    return finish(ps, e);
}

static Expr *e_binary(ParseState *ps, SrcLoc loc, BinOp op, Expr *lhs, Expr *rhs)
{
    Expr *e = ast_expr(ps->arena, EX_BINARY, loc);
    e->bin.op = op;
    e->bin.lhs = lhs;
    e->bin.rhs = rhs;
    return finish(ps, e);
}

static Expr *e_compare(ParseState *ps, SrcLoc loc, int op, Expr *lhs, Expr *rhs, bool chained)
{
    if (op < 0) {
        /* parsed for the autotune configs (`mode.lower() in ("0", "false")`); sema rejects a
         * membership test in kernel code */
        op = op == -1 ? BIN_IN : BIN_NOT_IN;
    } else if (chained) {
        /* Python reads a < b < c as (a < b) and (b < c); Triton does too, but only for scalars.
         * tric asks for the explicit form rather than guess. */
        report(ps, loc, "chained comparisons are not supported; write (a %s b) and (b %s c)",
               lhs->kind == EX_BINARY ? binop_str(lhs->bin.op) : "<", binop_str((BinOp)op));
    }
    return e_binary(ps, loc, (BinOp)op, lhs, rhs);
}

static Expr *e_unary(ParseState *ps, SrcLoc loc, UnOp op, Expr *x)
{
    Expr *e = ast_expr(ps->arena, EX_UNARY, loc);
    e->un.op = op;
    e->un.operand = x;
    return finish(ps, e);
}

static Expr *e_ternary(ParseState *ps, Expr *then, Expr *cond, Expr *els)
{
    Expr *e = ast_expr(ps->arena, EX_TERNARY, then->loc);
    e->ternary.cond = cond;
    e->ternary.then = then;
    e->ternary.els = els;
    return finish(ps, e);
}

/* [elt for t in it ...] or (elt for ...): kept for @triton.autotune configs, which autotune.c
 * evaluates; sema rejects a comprehension in kernel code. */
static Expr *e_comp(ParseState *ps, SrcLoc loc, bool list, Expr *elt, CompClauses *clauses)
{
    Expr *e = ast_expr(ps->arena, EX_COMP, loc);
    e->comp.elt = elt;
    e->comp.targets = clauses->targets.items;
    e->comp.iters = clauses->iters.items;
    e->comp.n = clauses->targets.n;
    e->comp.list = list;
    return finish(ps, e);
}

/* f(x for x in y): a call whose one argument is the generator expression. */
static Expr *e_genexp_call(ParseState *ps, Expr *fn, Expr *genexp)
{
    CallArgs args = {0};
    args_add(ps, &args, (Arg){NULL, genexp, genexp->loc});
    return e_call(ps, fn, &args);
}

/* lambda args: body -- kept for @triton.heuristics, which evaluates it at compile time;
 * sema rejects a lambda anywhere else. */
static Expr *e_lambda(ParseState *ps, SrcLoc loc, ExprList *params, Expr *body)
{
    Expr *e = ast_expr(ps->arena, EX_LAMBDA, loc);
    e->lambda.params = params->items;
    e->lambda.nparams = params->n;
    e->lambda.body = body;
    return finish(ps, e);
}

/* x ** y: sema folds it on constexprs (FlagGems' `2 ** (width - 1)`) and rejects it on run-time
 * values, at the operator. */
static Expr *e_power(ParseState *ps, SrcLoc loc, Expr *base, Expr *exponent)
{
    return e_binary(ps, loc, BIN_POW, base, exponent);
}

/* ---- statements -------------------------------------------------------------------------------- */

static Stmt *s_simple(ParseState *ps, StmtKind kind, SrcLoc loc)
{
    return ast_stmt(ps->arena, kind, loc);
}

static Stmt *s_expr(ParseState *ps, Expr *value)
{
    Stmt *s = ast_stmt(ps->arena, ST_EXPR, value->loc);
    s->expr.value = value;
    return s;
}

static const char *target_kind_name(const Expr *e)
{
    switch (e->kind) {
    case EX_CALL: return "function call";
    case EX_INT:
    case EX_FLOAT:
    case EX_BOOL:
    case EX_STR: return "literal";
    case EX_NONE: return "None";
    case EX_BINARY:
        return e->bin.op >= BIN_EQ && e->bin.op <= BIN_IS_NOT ? "comparison" : "expression";
    case EX_TERNARY: return "conditional expression";
    case EX_DICT: return "dict literal";
    default: return "expression";
    }
}

/* A name, attribute, subscript, or a tuple/list of these (Python reference 7.2). */
static bool check_target(ParseState *ps, const Expr *e, bool allow_tuple)
{
    switch (e->kind) {
    case EX_NAME:
    case EX_ATTR:
    case EX_SUBSCRIPT: return true;
    case EX_TUPLE:
    case EX_LIST:
        if (allow_tuple) {
            for (int i = 0; i < e->list.n; i++)
                if (!check_target(ps, e->list.elts[i], true))
                    return false;
            if (e->list.n > 0)
                return true;
        }
        /* fall through */
    default:
        report(ps, e->loc, "cannot assign to %s", target_kind_name(e));
        return false;
    }
}

static Stmt *s_assign(ParseState *ps, ExprList *chain)
{
    Stmt *s = ast_stmt(ps->arena, ST_ASSIGN, chain->items[0]->loc);
    s->assign.targets = chain->items;
    s->assign.ntargets = chain->n - 1;
    s->assign.value = chain->items[chain->n - 1];
    for (int i = 0; i < s->assign.ntargets; i++)
        check_target(ps, s->assign.targets[i], true);
    return s;
}

static Stmt *s_annotated(ParseState *ps, Expr *target, Expr *annotation, Expr *value)
{
    if (!value) {
        report(ps, target->loc, "an annotated name needs a value here (x: annotation = value)");
        return NULL;
    }
    if (target->kind == EX_TUPLE || target->kind == EX_LIST)
        report(ps, target->loc, "only a single target (not a tuple) can be annotated");
    else
        check_target(ps, target, false);
    Stmt *s = ast_stmt(ps->arena, ST_ASSIGN, target->loc);
    s->assign.targets = arena_alloc(ps->arena, sizeof(Expr *));
    s->assign.targets[0] = target;
    s->assign.ntargets = 1;
    s->assign.annotation = annotation;
    s->assign.value = value;
    return s;
}

static Stmt *s_aug(ParseState *ps, SrcLoc op_loc, BinOp op, Expr *target, Expr *value)
{
    if (target->kind != EX_NAME && target->kind != EX_ATTR && target->kind != EX_SUBSCRIPT)
        report(ps, target->loc, "'%s' is an illegal target for augmented assignment",
               target->kind == EX_TUPLE ? "tuple" : target_kind_name(target));
    Stmt *s = ast_stmt(ps->arena, ST_AUGASSIGN, target->loc);
    s->aug.op = op;
    s->aug.target = target;
    s->aug.value = value;
    (void)op_loc;
    return s;
}

static Stmt *s_return(ParseState *ps, SrcLoc loc, Expr *value)
{
    Stmt *s = ast_stmt(ps->arena, ST_RETURN, loc);
    s->ret.value = value;
    return s;
}

static Stmt *s_assert(ParseState *ps, SrcLoc loc, Expr *cond, Expr *msg)
{
    Stmt *s = ast_stmt(ps->arena, ST_ASSERT, loc);
    s->assert_.cond = cond;
    s->assert_.msg = msg;
    return s;
}

/* The statements of two blocks, in order. */
static Block block_concat(ParseState *ps, Block a, Block b)
{
    Block r = {arena_alloc(ps->arena, sizeof(Stmt *) * (size_t)(a.n + b.n + 1)), a.n + b.n};
    for (int i = 0; i < a.n; i++)
        r.stmts[i] = a.stmts[i];
    for (int i = 0; i < b.n; i++)
        r.stmts[a.n + i] = b.stmts[i];
    return r;
}

static bool is_dotted_name(const Expr *e)
{
    while (e && e->kind == EX_ATTR)
        e = e->attr.obj;
    return e && e->kind == EX_NAME;
}

/* A module-level try stands for its body, with one exception: a name the body binds to a call
 * (host code choosing a module: FlagGems' `tl_extra_shim = backend.get_tl_extra_backend_module()`)
 * that an except clause binds to a dotted name (`tl_extra_shim = triton.language.math`) takes the
 * except clause's value (the last such), which tric can read where the call is host Python. */
static StmtList try_body(ParseState *ps, Block body, const Block *handlers)
{
    for (int i = 0; i < body.n; i++) {
        Stmt *st = body.stmts[i];
        if (st->kind != ST_ASSIGN || st->assign.ntargets != 1 ||
            st->assign.targets[0]->kind != EX_NAME || st->assign.value->kind != EX_CALL)
            continue;
        for (int k = 0; k < handlers->n; k++) {
            const Stmt *h = handlers->stmts[k];
            if (h->kind == ST_ASSIGN && h->assign.ntargets == 1 &&
                h->assign.targets[0]->kind == EX_NAME &&
                !strcmp(h->assign.targets[0]->str, st->assign.targets[0]->str) &&
                is_dotted_name(h->assign.value)) {
                Stmt *copy = ast_stmt(ps->arena, ST_ASSIGN, st->loc);
                copy->assign = st->assign;
                copy->assign.value = h->assign.value;
                body.stmts[i] = copy;
            }
        }
    }
    return (StmtList){body.stmts, body.n, body.n};
}

/* raise X [from Y]: parsed so that a branch compile-time constants leave untaken may hold one (as
 * FlagGems' dtype helpers end: `else: raise ValueError(...)`); sema rejects one it reaches. */
static Stmt *s_raise(ParseState *ps, SrcLoc loc, Expr *exc)
{
    Stmt *s = ast_stmt(ps->arena, ST_RAISE, loc);
    s->ret.value = exc;
    return s;
}

static void elif_add(ParseState *ps, ElifList *l, SrcLoc loc, Expr *cond, Block body)
{
    if (l->n >= MAX_ELIFS) {
        if (!l->overflow)
            report(ps, loc, "too many 'elif' branches (the limit is %d)", MAX_ELIFS);
        l->overflow = true;
        return;
    }
    ARENA_PUSH(ps->arena, l->items, l->n, l->cap, ((ElifItem){loc, cond, body}));
}

/* `elif` is an ST_IF alone in the else block of the previous one (as in Python's ast). */
static Stmt *s_if(ParseState *ps, SrcLoc loc, Expr *cond, Block then, ElifList *elifs, Block els)
{
    for (int i = elifs->n - 1; i >= -1; i--) {
        Stmt *s = ast_stmt(ps->arena, ST_IF, i >= 0 ? elifs->items[i].loc : loc);
        s->if_.cond = i >= 0 ? elifs->items[i].cond : cond;
        s->if_.then = i >= 0 ? elifs->items[i].body : then;
        s->if_.els = els;
        s->if_.static_taken = -1;
        if (i < 0)
            return s;
        els.stmts = arena_alloc(ps->arena, sizeof(Stmt *));
        els.stmts[0] = s;
        els.n = 1;
    }
    return NULL; /* not reached */
}

static Stmt *s_for(ParseState *ps, SrcLoc loc, Expr *target, Expr *iter, Block body)
{
    check_target(ps, target, true);
    Stmt *s = ast_stmt(ps->arena, ST_FOR, loc);
    s->for_.target = target;
    s->for_.iter = iter;
    s->for_.body = body;
    return s;
}

static Stmt *s_while(ParseState *ps, SrcLoc loc, Expr *cond, Block body)
{
    Stmt *s = ast_stmt(ps->arena, ST_WHILE, loc);
    s->while_.cond = cond;
    s->while_.body = body;
    return s;
}

static void loop_else(ParseState *ps, SrcLoc else_loc, const char *loop)
{
    report(ps, else_loc, "'else' after a '%s' loop is not supported", loop);
}

static Text *text_add(ParseState *ps, Text *t, const char *s)
{
    size_t n = strlen(s);
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        while (cap < t->len + n + 1)
            cap *= 2;
        t->data = arena_grow(ps->arena, t->data, t->len, cap);
        t->cap = cap;
    }
    memcpy(t->data + t->len, s, n + 1);
    t->len += n;
    return t;
}

static Text text_of(ParseState *ps, const char *s)
{
    Text t = {0};
    text_add(ps, &t, s);
    return t;
}

static void import_add(ParseState *ps, ImportList *l, const char *name, const char *asname)
{
    ARENA_PUSH(ps->arena, l->names.items, l->names.n, l->names.cap, name);
    ARENA_PUSH(ps->arena, l->asnames.items, l->asnames.n, l->asnames.cap, asname);
}

static Stmt *s_import(ParseState *ps, SrcLoc loc, const char *module, ImportList *names)
{
    Stmt *s = ast_stmt(ps->arena, ST_IMPORT, loc);
    s->import_.module = module;
    s->import_.names = names->names.items;
    s->import_.asnames = names->asnames.items;
    s->import_.n = names->names.n;
    return s;
}

static Param *make_param(ParseState *ps, SrcLoc loc, const char *name, Expr *annotation,
                         Expr *default_value)
{
    Param *p = arena_alloc(ps->arena, sizeof *p);
    p->name = name;
    p->loc = loc;
    p->annotation = annotation;
    p->default_value = default_value;
    p->divisibility = 1;
    return p;
}

static void params_add(ParseState *ps, ParamList *l, Param *p)
{
    if (!p->default_value && l->n > 0 && l->items[l->n - 1].default_value)
        report(ps, p->loc, "parameter without a default follows parameter with a default");
    ARENA_PUSH(ps->arena, l->items, l->n, l->cap, *p);
}

/* Repeated parameter names, found when the list is complete (before the body's errors). */
static void params_check(ParseState *ps, ParamList *l)
{
    bool *dup = l->n > 1 ? find_duplicates(ps, &l->items[0].name, (int)sizeof(Param), l->n) : NULL;
    for (int i = 0; dup && i < l->n; i++)
        if (dup[i])
            report(ps, l->items[i].loc, "duplicate parameter '%s' in function definition",
                   l->items[i].name);
}

/* A bare `*` in a parameter list (Python reference 8.7, "keyword-only parameters"): the
 * parameters after it are given by keyword only. One per list; it must be followed by a parameter
 * (the grammar asks for one). */
static void params_star(ParseState *ps, ParamList *l, SrcLoc loc)
{
    if (l->has_star)
        report(ps, loc, "only one bare '*' may appear in a parameter list");
    l->has_star = true;
    l->star = l->n;
}

/* `def f(*args)` / `def f(**kwargs)`: a tric kernel's or helper's parameters are named. */
static void star_params(ParseState *ps, SrcLoc loc)
{
    report(ps, loc, "star parameters ('*args', '**kwargs') are not supported");
}

/* `def f(x, *)`: Python's "named arguments must follow bare *". */
static void star_without_params(ParseState *ps, SrcLoc loc)
{
    report(ps, loc, "named parameters must follow a bare '*'");
}

static FuncDef *make_func(ParseState *ps, SrcLoc loc, const char *name, ParamList *params,
                          Expr *returns, Block body)
{
    FuncDef *f = arena_alloc(ps->arena, sizeof *f);
    f->name = name;
    f->loc = loc;
    f->params = params->items;
    f->nparams = params->n;
    f->npositional = params->has_star ? params->star : params->n;
    f->returns = returns;
    /* A string expression first in the body is the docstring (Python reference 8.7). */
    if (body.n > 0 && body.stmts[0]->kind == ST_EXPR && body.stmts[0]->expr.value->kind == EX_STR) {
        f->docstring = body.stmts[0]->expr.value->str;
        body.stmts++;
        body.n--;
    }
    f->body = body;
    return f;
}

/* @triton.jit, @jit, @triton.jit(...), @jit(...) (and an alias named like vLLM's @triton_jit_decorator,
 * frontend_is_jit_alias) make a function a kernel or helper; the
 * decorators above it (@triton.autotune, @triton.heuristics) configure it. */
static bool is_jit_decorator(const Expr *d)
{
    if (d->kind == EX_CALL)
        d = d->call.fn;
    if (d->kind == EX_NAME)
        return !strcmp(d->str, "jit") || frontend_is_jit_alias(d->str, strlen(d->str));
    return d->kind == EX_ATTR && !strcmp(d->attr.name, "jit") && d->attr.obj->kind == EX_NAME &&
           !strcmp(d->attr.obj->str, "triton");
}

/* @triton.constexpr_function, @tl.constexpr_function, @constexpr_function and @tl.constexpr mark
 * a Python helper that runs at compile time on constexpr arguments (Triton calls it in Python). */
static bool is_constexpr_fn_decorator(const Expr *d)
{
    const char *name = d->kind == EX_NAME ? d->str : d->kind == EX_ATTR ? d->attr.name : NULL;
    if (!name)
        return false;
    if (!strcmp(name, "constexpr_function"))
        return true;
    return d->kind == EX_ATTR && !strcmp(name, "constexpr") && d->attr.obj->kind == EX_NAME &&
           (!strcmp(d->attr.obj->str, "tl") || !strcmp(d->attr.obj->str, "triton"));
}

static Stmt *s_def(ParseState *ps, FuncDef *f, ExprList *decorators)
{
    if (decorators) {
        f->decorators = decorators->items;
        f->ndecorators = decorators->n;
        for (int i = 0; i < decorators->n; i++)
            if (is_jit_decorator(decorators->items[i]))
                f->is_jit = true;
            else if (is_constexpr_fn_decorator(decorators->items[i]))
                f->is_constexpr_fn = true;
    }
    Stmt *s = ast_stmt(ps->arena, ST_DEF, f->loc);
    s->def.func = f;
    return s;
}

/* ---- the entry point --------------------------------------------------------------------------- */

/* Module level holds imports, defs and assignments; docstrings and `pass` are accepted and dropped.
 * Checked as each statement is parsed, so that messages come in source order. */
static void module_append(ParseState *ps, StmtList *l, const StmtList *more)
{
    for (int i = 0; i < more->n; i++) {
        Stmt *s = more->items[i];
        switch (s->kind) {
        case ST_DEF:
        case ST_ASSIGN:
        case ST_IMPORT: stmts_push(ps, l, s); break;
        case ST_EXPR:
        case ST_PASS: break;
        case ST_IF: {
            /* Host code guards kernels and imports with a module-level `if`
             * (`if triton.__version__ >= "2.1.0":` around vLLM's kernels, a version test around
             * Liger's libdevice imports, unsloth's `if DEVICE_TYPE == "xpu":`). The host condition
             * is not evaluated: host_skip.c rewrites each one to 1 or 0 after the clause taken on
             * an NVIDIA GPU, and the branch of a 0 is skipped; any other condition (a file read
             * whole) takes the first branch. Statements nested in it are checked as if at module
             * level. */
            const Expr *c = s->if_.cond;
            const Block *taken = c && c->kind == EX_INT && c->ival == 0 ? &s->if_.els : &s->if_.then;
            StmtList body = {taken->stmts, taken->n, taken->n};
            module_append(ps, l, &body);
            break;
        }
        case ST_RETURN: report(ps, s->loc, "'return' outside function"); break;
        case ST_BREAK: report(ps, s->loc, "'break' outside loop"); break;
        case ST_CONTINUE: report(ps, s->loc, "'continue' not properly in loop"); break;
        default: {
            const char *what = s->kind == ST_FOR   ? "'for' loops"
                               : s->kind == ST_WHILE ? "'while' loops"
                               : s->kind == ST_ASSERT ? "'assert' statements"
                               : s->kind == ST_RAISE  ? "'raise' statements"
                                                      : "augmented assignments";
            report(ps, s->loc,
                   "%s are not supported at module level (only imports, defs and assignments)",
                   what);
            break;
        }
        }
    }
}

/* The function a module-level `NAME = triton.jit(impl, ...)` (or `jit(impl)`) wraps: the last
 * def of `impl` among the first `before` module statements (Python runs the assignment after
 * the defs above it); NULL when st is another statement or impl names no def above it. */
static const FuncDef *jit_call_target(const ParseState *ps, const Stmt *st, int before)
{
    if (st->kind != ST_ASSIGN || !st->assign.value || st->assign.value->kind != EX_CALL)
        return NULL;
    const Expr *call = st->assign.value;
    /* `triton.jit(...)` with no positional argument is the decorator factory, not a kernel. */
    if (!is_jit_decorator(call) || call->call.nargs != 1 || call->call.args[0]->kind != EX_NAME)
        return NULL;
    const char *impl = call->call.args[0]->str;
    for (int i = before - 1; i >= 0; i--) {
        const Stmt *d = ps->top.items[i];
        if (d->kind == ST_DEF && d->def.func->name && !strcmp(d->def.func->name, impl))
            return d->def.func;
    }
    return NULL;
}

/* The module's function bound to name so far (the last binding); NULL when there is none. */
static FuncDef *module_func_named(const Module *m, const char *name)
{
    for (int i = m->nfuncs - 1; i >= 0; i--)
        if (m->funcs[i] && m->funcs[i]->name && !strcmp(m->funcs[i]->name, name))
            return m->funcs[i];
    return NULL;
}

/* Binds f's name at module level: a function already bound to that name is replaced, as
 * Python rebinds it (`_kernel = triton.jit(_kernel)` leaves one function, the @jit one). */
static void bind_module_func(ParseState *ps, Module *m, int *fcap, FuncDef *f)
{
    for (int i = 0; i < m->nfuncs; i++)
        if (m->funcs[i] && m->funcs[i]->name && !strcmp(m->funcs[i]->name, f->name)) {
            m->funcs[i] = f;
            return;
        }
    ARENA_PUSH(ps->arena, m->funcs, m->nfuncs, *fcap, f);
}

/* `kernel = triton.jit(kernel_impl)`: each name target becomes a @jit function with
 * kernel_impl's parameters and body, named by the target (the name --kernel takes and the PTX
 * carries). kernel_impl stays a plain Python function, as in Triton, where only the JITFunction
 * object is a kernel; the call's keyword arguments are ignored, as the decorator form's are. */
static void push_jit_by_call(ParseState *ps, Module *m, int *fcap, const Stmt *st,
                             const FuncDef *impl)
{
    for (int k = 0; k < st->assign.ntargets; k++) {
        const Expr *t = st->assign.targets[k];
        if (!t || t->kind != EX_NAME || !t->str)
            continue;
        FuncDef *f = ast_clone_func(ps->arena, impl);
        f->name = t->str;
        f->is_jit = true;
        /* The call stands as the decorator @triton.jit(...) would. */
        f->decorators = arena_alloc(ps->arena, sizeof *f->decorators);
        f->decorators[0] = st->assign.value;
        f->ndecorators = 1;
        bind_module_func(ps, m, fcap, f);
    }
}

/* `NAME = triton.heuristics({...})(f)` or `triton.autotune(...)(f)` (unsloth's kernels wrap
 * their @jit functions this way): the decorator factory call, when f names a @jit function
 * bound above; NULL otherwise. */
static const Expr *decorator_by_call(const Module *m, const Stmt *st, FuncDef **target)
{
    if (st->kind != ST_ASSIGN || !st->assign.value || st->assign.value->kind != EX_CALL)
        return NULL;
    const Expr *call = st->assign.value;
    const Expr *factory = call->call.fn;
    if (factory->kind != EX_CALL || call->call.nargs != 1 || call->call.nkwargs != 0 ||
        call->call.args[0]->kind != EX_NAME || !call->call.args[0]->str)
        return NULL;
    const Expr *fn = factory->call.fn;
    const char *name = fn->kind == EX_NAME ? fn->str : fn->kind == EX_ATTR ? fn->attr.name : NULL;
    if (!name || (strcmp(name, "heuristics") && strcmp(name, "autotune")))
        return NULL;
    if (fn->kind == EX_ATTR &&
        (fn->attr.obj->kind != EX_NAME || strcmp(fn->attr.obj->str, "triton")))
        return NULL;
    FuncDef *f = module_func_named(m, call->call.args[0]->str);
    if (!f || !f->is_jit)
        return NULL;
    *target = f;
    return factory;
}

/* Each name target of `NAME = dec(f)` is bound to f with dec as its outermost decorator (the
 * first in the list, as if written above the others). */
static void push_decorated_by_call(ParseState *ps, Module *m, int *fcap, const Stmt *st,
                                   FuncDef *f, const Expr *dec)
{
    for (int k = 0; k < st->assign.ntargets; k++) {
        const Expr *t = st->assign.targets[k];
        if (!t || t->kind != EX_NAME || !t->str)
            continue;
        FuncDef *g = ast_clone_func(ps->arena, f);
        g->name = t->str;
        g->decorators = arena_alloc(ps->arena, sizeof *g->decorators * (size_t)(f->ndecorators + 1));
        g->decorators[0] = (Expr *)dec;
        for (int i = 0; i < f->ndecorators; i++)
            g->decorators[i + 1] = f->decorators[i];
        g->ndecorators = f->ndecorators + 1;
        bind_module_func(ps, m, fcap, g);
    }
}

/* The names a module-level statement makes aliases of triton.jit: `from triton import jit as J`
 * (J), `jit = triton.jit` or `J = jit` (the targets). Pushed onto *aliases (arena). */
static void note_jit_aliases(ParseState *ps, const Stmt *s, ExprList *aliases)
{
    if (s->kind == ST_IMPORT && s->import_.module && !strcmp(s->import_.module, "triton")) {
        for (int k = 0; k < s->import_.n; k++)
            if (!strcmp(s->import_.names[k], "jit") && s->import_.asnames[k])
                exprs_push(ps, aliases, e_name(ps, s->loc, s->import_.asnames[k]));
        return;
    }
    if (s->kind != ST_ASSIGN || !s->assign.value)
        return;
    const Expr *v = s->assign.value;
    bool is_jit = is_jit_decorator(v) && v->kind != EX_CALL;
    for (int k = 0; !is_jit && v->kind == EX_NAME && k < aliases->n; k++)
        is_jit = !strcmp(aliases->items[k]->str, v->str);
    for (int k = 0; is_jit && k < s->assign.ntargets; k++)
        if (s->assign.targets[k]->kind == EX_NAME)
            exprs_push(ps, aliases, (Expr *)s->assign.targets[k]);
}

/* A def decorated by an alias of triton.jit (`@J`, `@J(...)`) is a @jit function like any. */
static void mark_jit_by_alias(FuncDef *f, const ExprList *aliases)
{
    for (int i = 0; i < f->ndecorators && !f->is_jit; i++) {
        const Expr *d = f->decorators[i];
        if (d->kind == EX_CALL)
            d = d->call.fn;
        for (int k = 0; d->kind == EX_NAME && k < aliases->n; k++)
            if (!strcmp(aliases->items[k]->str, d->str))
                f->is_jit = true;
    }
}

static void build_module(ParseState *ps, Module *m)
{
    int fcap = 0, gcap = 0;
    ExprList aliases = {0};
    for (int i = 0; i < ps->top.n; i++) {
        Stmt *s = ps->top.items[i];
        note_jit_aliases(ps, s, &aliases);
        if (s->kind == ST_DEF)
            mark_jit_by_alias(s->def.func, &aliases);
        const FuncDef *impl = jit_call_target(ps, s, i);
        FuncDef *decorated = NULL;
        const Expr *dec = decorator_by_call(m, s, &decorated);
        if (s->kind == ST_DEF)
            ARENA_PUSH(ps->arena, m->funcs, m->nfuncs, fcap, s->def.func);
        else if (impl)
            push_jit_by_call(ps, m, &fcap, s, impl);
        else if (dec)
            push_decorated_by_call(ps, m, &fcap, s, decorated, dec);
        else
            ARENA_PUSH(ps->arena, m->globals, m->nglobals, gcap, s);
    }
}

static Module *parse_file(const SrcFile *file, bool imported, const HostEnv *env, Arena *arena,
                          Diag *diag)
{
    ParseState ps = {.file = file, .arena = arena, .diag = diag, .errors_before = diag->errors};
    if (file->text && file->len > (size_t)INT_MAX / 2) {
        report(&ps, (SrcLoc){file, 0, 0}, "file too large (%zu bytes)", file->len);
        return NULL;
    }
    ps.scan_text = host_code_mask(file, imported, env, arena);
    if (!ps.scan_text)
        ps.scan_text = file->text;
    ps.lexer = lexer_open(&ps);
    if (!ps.lexer) {
        TRIC_INTERNAL(diag, "cannot create the lexer");
        return NULL;
    }
    int rc = tfe_parse(&ps);
    lexer_close(ps.lexer);
    Module *m = arena_alloc(arena, sizeof *m);
    m->file = file;
    if (rc == 0)
        build_module(&ps, m);
    if (diag->errors > ps.errors_before)
        return NULL;
    if (rc != 0) {
        TRIC_INTERNAL(diag, "the parser failed without a diagnostic");
        return NULL;
    }
    return m;
}

Module *parse_module(const SrcFile *file, const HostEnv *env, Arena *arena, Diag *diag)
{
    return parse_file(file, false, env, arena, diag);
}

Module *parse_imported_module(const SrcFile *file, const HostEnv *env, Arena *arena, Diag *diag)
{
    return parse_file(file, true, env, arena, diag);
}
