/* builtins.c: the tl.* builtins table (TRIC_BUILTINS in frontend.h). */
#include "frontend/frontend.h"

static const char *const builtin_names[BI_COUNT] = {
#define X(e, name, params, sema_rule, build, doc) [e] = name,
    TRIC_BUILTINS(X)
#undef X
};

const char *builtin_name(Builtin b)
{
    if ((int)b < 0 || b >= BI_COUNT)
        return "?";
    return builtin_names[b];
}
