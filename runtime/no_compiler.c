/* no_compiler.c: linked into libtric_runtime (tric::runtime), the runtime without LLVM. It runs
 * what `tric` compiled ahead of time: PTX on cuda (tric_module_load_ptx / load_file) and tile IR
 * (.tir, `tric --emit=ir`) on the cpu interpreter. tric_module_compile refuses .tri source and
 * .tir on cuda up front (runtime/api.c checks rt_has_compiler) with TRIC_ERROR_UNSUPPORTED.
 *
 * The front end, the passes and the driver are plain C and are linked as they are (the driver
 * also reads PTX metadata and parses .tir); only the code generator, the one user of LLVM, is
 * replaced here by entry points that fail with the same explanation, so that no path can reach
 * LLVM even if a caller got past the check. */
#include "codegen/codegen.h"
#include "runtime/runtime.h"

const bool rt_has_compiler = false;

static const char no_compiler[] =
    "this runtime was built without the compiler (libtric_runtime has no LLVM code generator); "
    "link tric::tric (libtric) to compile, or load the PTX that `tric` writes";

bool codegen_emit(const IrFunc *f, const CodegenOptions *o, StrBuf *llvm_ir, StrBuf *ptx, Diag *d) {
    diag_plain_error(d, "%s", no_compiler);
    return false;
}

bool codegen_emit_many(const IrFunc *const *fs, int nfuncs, const CodegenOptions *o,
                       StrBuf *llvm_ir, StrBuf *ptx, Diag *d) {
    diag_plain_error(d, "%s", no_compiler);
    return false;
}

/* The cache key's code-generator part (runtime/cache.c): no code generator, so nothing this
 * library compiles reaches the cache with it. */
void codegen_identity(StrBuf *out) { strbuf_printf(out, "no code generator"); }

const char *codegen_libdevice_path(const char *override, char *buf, size_t size) {
    (void) override;
    (void)buf;
    (void)size;
    return NULL;
}
