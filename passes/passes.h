/* passes.h: transformations of the tile IR, one file each. The pipeline is the straight list in
 * passes_run (pipeline.c); the verifier runs after each pass when PassOptions.verify is set, and
 * dump_after prints the IR after the named pass ("all" for every one).
 *
 * Each pass states at the top of its file what it requires and what it guarantees. */
#ifndef TRIC_PASSES_H
#define TRIC_PASSES_H

#include "ir/ir.h"

typedef struct PassOptions {
    int num_warps;          /* threads per program = 32 * num_warps */
    int num_stages;         /* software-pipelining depth for loops that feed a dot */
    int sm;                 /* target compute capability: 80, 86, 89, 90 */
    bool verify;            /* run ir_verify after every pass */
    const char *dump_after; /* NULL, a pass name, or "all" */
    FILE *dump;             /* where dumps go (stderr when NULL) */
} PassOptions;

/* canonicalize.c: constant folding, algebraic simplification (x+0, x*1), splat/broadcast of
 * constants folded; requires nothing; guarantees no op with all-constant operands remains foldable. */
bool pass_canonicalize(IrFunc *f, const PassOptions *o, Diag *d);
/* cse.c: common subexpressions of pure ops merged within a region and its nested regions. */
bool pass_cse(IrFunc *f, const PassOptions *o, Diag *d);
/* dce.c: ops whose results are unused and that have no effect removed. */
bool pass_dce(IrFunc *f, const PassOptions *o, Diag *d);
/* axis_info.c: IrValue.axis for every int and pointer value (contiguity, divisibility,
 * constancy), seeded by param divisibility hints, make_range, multiple_of/max_contiguous. */
bool pass_axis_info(IrFunc *f, const PassOptions *o, Diag *d);
/* layouts.c: a distributed layout for every block value (blocked for memory ops, chosen from axis
 * info so accesses are coalesced and as wide as proven; slice for reductions and expand_dims);
 * convert_layout inserted where producer and consumer disagree. Requires axis info. */
bool pass_layouts(IrFunc *f, const PassOptions *o, Diag *d);
/* shared_alloc.c: a shared-memory offset for every op that needs scratch (convert_layout,
 * cross-warp reductions, dot operands); IrFunc.shared_bytes. Requires layouts. */
bool pass_shared_alloc(IrFunc *f, const PassOptions *o, Diag *d);

/* The whole pipeline, in order. */
bool passes_run(IrFunc *f, const PassOptions *o, Diag *d);

#endif
