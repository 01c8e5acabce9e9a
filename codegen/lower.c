/* lower.c: layout-annotated tile IR -> LLVM IR (placeholder while the lowering is written). */
#include "codegen/codegen.h"

bool codegen_emit(const IrFunc *f, const CodegenOptions *o, StrBuf *llvm_ir, StrBuf *ptx, Diag *d)
{
    (void)o;
    (void)llvm_ir;
    (void)ptx;
    diag_plain_error(d, "codegen for kernel %s is not implemented yet", f ? f->name : "?");
    return false;
}
