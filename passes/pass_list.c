/* pass_list.c: the pass list, passes_run: the passes as one straight list (QBE's main.c style).
 * After each pass the verifier runs when PassOptions.verify is set, and the IR is dumped when
 * dump_after names the pass or is "all". The first failing pass stops the list. */
#include "passes/passes.h"

#include <string.h>

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

/* The passes in the order they run. Simplify first, so axis info sees folded constants (pid * 1024,
 * not pid * (512 * 2)) and the layout pass has fewer values to place; the memory pipeline is
 * decided once layouts are known (which dots use tensor cores, how loads are spread), its
 * buffers get their swizzle, and shared memory is placed last. */
const PassInfo passes_list[] = {
    {"canonicalize", pass_canonicalize},
    {"cse", pass_cse},
    {"dce", pass_dce},
    {"fuse_loops", pass_fuse_loops},
    {"flatten_loops", pass_flatten_loops},
    {"stream_k", pass_stream_k},
    {"persistent", pass_persistent},
    {"heavy_first", pass_heavy_first},
    {"widen_fp8", pass_widen_fp8},
    {"axis_info", pass_axis_info},
    {"layouts", pass_layouts},
    {"prefetch_tiles", pass_prefetch_tiles},
    {"pipeline", pass_pipeline},
    {"swizzle", pass_swizzle},
    {"tma", pass_tma},
    {"warp_specialize", pass_warp_specialize},
    {"overlap_dots", pass_overlap_dots},
    {"split_loops", pass_split_loops},
    {"unroll_loops", pass_unroll_loops},
    {"shared_alloc", pass_shared_alloc},
};
const int passes_count = (int)(sizeof passes_list / sizeof passes_list[0]);

void passes_prepare(IrFunc *f, const PassOptions *o)
{
    if (o->num_warps > 0)
        f->num_warps = o->num_warps;
    if (f->num_warps <= 0)
        f->num_warps = 4;
    if (o->num_stages > 0)
        f->num_stages = o->num_stages;
}

bool passes_run_one(IrFunc *f, const PassOptions *o, Diag *d, int i)
{
    return i >= 0 && i < passes_count && run_pass(f, o, d, passes_list[i].name, passes_list[i].run);
}

bool passes_run(IrFunc *f, const PassOptions *o, Diag *d)
{
    passes_prepare(f, o);
    for (int i = 0; i < passes_count; i++)
        if (!passes_run_one(f, o, d, i))
            return false;
    return true;
}
