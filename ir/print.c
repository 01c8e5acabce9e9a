/* print.c: the IR text form (placeholder: prints the kernel header only). */
#include "ir/ir.h"

void ir_print(StrBuf *out, const IrFunc *f)
{
    strbuf_printf(out, "kernel @%s() {\n}\n", f->name);
}
