/* signature.c: --signature strings and -D values. */
#include "frontend/frontend.h"

bool const_from_string(const char *text, ConstVal *out, Arena *a) {
    (void)text;
    (void)a;
    out->kind = CV_NONE;
    return false;
}

void const_print(StrBuf *sb, const ConstVal *cv) {
    (void)cv;
    strbuf_append(sb, "?");
}
