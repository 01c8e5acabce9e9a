/* with_compiler: tric::tric compiles examples/vector_add.tri in process and runs it on cpu. */
#include "vector_add_check.h"

int main(void)
{
    tric_device dev;
    tric_module mod;
    CHECK(tric_device_open("cpu", &dev));
    tric_compile_options opt = tric_compile_options_default();
    opt.signature = "*fp32,*fp32,*fp32,i32";
    const char *defs[] = {"BLOCK_SIZE=256"};
    opt.constexprs = defs;
    opt.nconstexprs = 1;
    CHECK(tric_module_compile_file(dev, VECTOR_ADD_TRI, &opt, &mod));
    int failed = run_vector_add(dev, mod, "with_compiler");
    tric_module_destroy(mod);
    tric_device_close(dev);
    return failed;
}
