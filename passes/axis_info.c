/* axis_info.c: placeholder while the pass is written. */
#include "passes/passes.h"

bool pass_axis_info(IrFunc *f, const PassOptions *o, Diag *d)
{
    (void)f;
    (void)o;
    (void)d;
    return true;
}
