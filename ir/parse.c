/* parse.c: the IR text form read back (placeholder until the parser lands). */
#include "ir/ir.h"

IrFunc *ir_parse(const SrcFile *file, Arena *arena, Diag *diag)
{
    (void)arena;
    SrcLoc loc = {.file = file, .line = 1, .col = 1};
    diag_error(diag, loc, "the tile IR parser is not implemented yet");
    return NULL;
}
