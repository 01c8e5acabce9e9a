/* compiler.c: linked into libtric (and the in-tree libtric_internal) beside codegen/: this
 * runtime holds the whole compiler, so tric_module_compile takes .tri source on every device.
 * libtric_runtime links runtime/no_compiler.c instead. */
#include "runtime/runtime.h"

const bool rt_has_compiler = true;
