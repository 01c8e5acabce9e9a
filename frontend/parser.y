/* parser.y: placeholder grammar (being written); parse_module reports that parsing is not ready. */
%define api.pure full
%locations
%expect 0
%parse-param {void *scanner}
%lex-param {void *scanner}
%code requires {
#include "frontend/frontend.h"
}
%code {
int yylex(void *lval, void *lloc, void *scanner);
static void yyerror(void *lloc, void *scanner, const char *msg) { (void)lloc; (void)scanner; (void)msg; }
}
%token END_MARK
%%
module: %empty ;
%%
Module *parse_module(const SrcFile *file, Arena *arena, Diag *diag)
{
    (void)arena;
    diag_error(diag, (SrcLoc){file, 1, 1}, "the parser is not implemented yet");
    return NULL;
}
