/* interp.c: the CPU interpreter (placeholder while it is written). */
#include "ir/ir.h"

bool interp_run(const IrFunc *f, const InterpLaunch *launch, StrBuf *error)
{
    (void)f;
    (void)launch;
    strbuf_append(error, "interpreter: not implemented");
    return false;
}
