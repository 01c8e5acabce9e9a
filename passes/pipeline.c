/* pipeline.c: passes_run, the straight list of passes (QBE's main.c style). After each pass the
 * verifier runs when PassOptions.verify is set, and the IR is dumped when dump_after names the pass
 * or is "all". The first failing pass stops the pipeline. */
#include "passes/passes.h"

#include <string.h>

typedef bool (*PassFn)(IrFunc *f, const PassOptions *o, Diag *d);

/* Runs one pass, then the verifier and the dump the options ask for. */
static bool run_pass(IrFunc *f, const PassOptions *o, Diag *d, const char *name, PassFn pass)
{
    if (!pass(f, o, d))
        return false;
    if (o->verify && !ir_verify(f, name, d))
        return false;
    if (o->dump_after && (strcmp(o->dump_after, "all") == 0 || strcmp(o->dump_after, name) == 0)) {
        StrBuf sb = {0};
        ir_print(&sb, f);
        FILE *out = o->dump ? o->dump : stderr;
        fprintf(out, "// -----// IR dump after %s //----- //\n%s", name, sb.data ? sb.data : "");
        strbuf_free(&sb);
    }
    return true;
}

bool passes_run(IrFunc *f, const PassOptions *o, Diag *d)
{
    if (o->num_warps > 0)
        f->num_warps = o->num_warps;
    if (f->num_warps <= 0)
        f->num_warps = 4;
    if (o->num_stages > 0)
        f->num_stages = o->num_stages;
    /* Simplify first, so axis info sees folded constants (pid * 1024, not pid * (512 * 2)) and
     * the layout pass has fewer values to place; cse again afterwards merges converts of one value
     * that two regions asked for. */
    return run_pass(f, o, d, "canonicalize", pass_canonicalize) &&
           run_pass(f, o, d, "cse", pass_cse) &&
           run_pass(f, o, d, "dce", pass_dce) &&
           run_pass(f, o, d, "axis_info", pass_axis_info) &&
           run_pass(f, o, d, "layouts", pass_layouts) &&
           run_pass(f, o, d, "pipeline", pass_pipeline) &&
           run_pass(f, o, d, "swizzle", pass_swizzle) &&
           run_pass(f, o, d, "shared_alloc", pass_shared_alloc);
}
