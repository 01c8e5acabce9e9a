/* lower.c: typed AST -> tile IR. (Placeholder while the real lowering is written.) */
#include "frontend/frontend.h"
#include "ir/ir.h"

IrFunc *lower_kernel(const Kernel *k, Arena *arena, Diag *diag)
{
    (void)arena;
    diag_error(diag, k->func->loc, "lowering to the tile IR is not implemented yet");
    return NULL;
}
