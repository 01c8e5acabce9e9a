/* sema.c: specialization and typing of one @jit kernel. */
#include "frontend/frontend.h"

Kernel *sema_specialize(const Module *m, const SpecOptions *opt, Arena *arena, Diag *diag) {
    (void)m;
    (void)opt;
    (void)arena;
    diag_plain_error(diag, "sema is not implemented yet");
    return NULL;
}
