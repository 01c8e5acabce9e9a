/* interp_passes.h: the pass-by-pass interpreter check that passes_interp_diff.c and
 * passes_interp_loops.c share. A lowered kernel is cloned for sm_80 and sm_90a and num_stages 1
 * to max_stages, taken through the passes one at a time, and run on the interpreter after each:
 * after canonicalize (which may fold `acc + dot(a, b)` into dot(a, b, acc), another summation
 * order) its outputs must be close to the lowered kernel's, and after every later pass
 * bit-identical to the pass before. A config whose stage buffers do not fit is refused with a
 * message naming num_stages and is skipped, not run. A hook sees the IR after each pass (what the
 * case expects of the pipeline). Header-only, so that each test stays one executable. */
#ifndef TRIC_UNIT_INTERP_PASSES_H
#define TRIC_UNIT_INTERP_PASSES_H

#include "check.h"
#include "driver/driver.h"
#include "passes/passes.h"
#include "test_source.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An fp16 bit pattern's value (subnormals, infinities and NaN included). */
static inline float half_value(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 0    ? ldexpf((float)m, -24)
              : e == 31 ? (m ? NAN : INFINITY)
                        : ldexpf((float)(m | 1024), e - 25);
    return (h & 0x8000) ? -v : v;
}

/* A test kernel lowered to IR: the source (kept alive: the IR's locations point into it), the
 * defines and the driver's result. */
typedef struct Lowered {
    SrcFile file;
    Define defs[16];
    int ndefs;
    CompileResult res;
} Lowered;

/* Compiles kernel of file (the Lowered takes its text: interp_passes_lowered_free frees it) with
 * signature, the NAME=VALUE defines of the NULL-terminated defs (which must outlive l) and
 * num_warps, to IR in l->res.ir; false (counted as a failure) when it does not compile. */
static inline bool interp_passes_lower_source(Lowered *l, SrcFile file, const char *kernel,
                                              const char *signature, const char *const *defs,
                                              int num_warps)
{
    memset(l, 0, sizeof *l);
    l->file = file;
    for (; l->ndefs < 16 && defs[l->ndefs]; l->ndefs++) {
        const char *d = defs[l->ndefs], *eq = strchr(d, '=');
        l->defs[l->ndefs] = (Define){.name = strndup(d, (size_t)(eq - d)), .value = eq + 1};
    }
    CompileOptions opt = {.spec = {.kernel_name = kernel,
                                   .signature = signature,
                                   .defines = l->defs,
                                   .ndefines = l->ndefs},
                          .emit = EMIT_IR,
                          .num_warps = num_warps};
    Diag diag = {0};
    bool ok = driver_compile(&l->file, &opt, &l->res, &diag) && l->res.ir;
    CHECK(ok, "%s: %s", kernel, diag.text.data ? diag.text.data : "");
    diag_free(&diag);
    return ok;
}

/* The same for the file rel_file (from the source root); false also when it cannot be read. */
static inline bool interp_passes_lower(Lowered *l, const char *rel_file, const char *kernel,
                                       const char *signature, const char *const *defs,
                                       int num_warps)
{
    SrcFile file = test_load_source(rel_file, rel_file);
    CHECK(file.text != NULL, "cannot read %s", rel_file);
    if (!file.text) {
        memset(l, 0, sizeof *l);
        return false;
    }
    return interp_passes_lower_source(l, file, kernel, signature, defs, num_warps);
}

static inline void interp_passes_lowered_free(Lowered *l)
{
    for (int i = 0; i < l->ndefs; i++)
        free((char *)l->defs[i].name);
    compile_result_free(&l->res);
    free((char *)l->file.text);
}

typedef struct PassCheck {
    const char *kernel; /* for messages */
    int num_warps;      /* 0: 4 */
    int max_stages;
    int first_arch;     /* 0: sm_80 and sm_90a; 1: sm_90a alone */
    bool stream_k;      /* PassOptions.stream_k */
    bool persistent;    /* PassOptions.persistent */
    bool pingpong;      /* PassOptions.pingpong */
    bool overlap_dots;  /* PassOptions.overlap_dots */
    bool tma_store;     /* PassOptions.tma_store */
    bool no_fuse_loops; /* PassOptions.no_fuse_loops */
    size_t out_bytes;   /* what run writes */
    const void *want;   /* the lowered kernel's outputs */
    const void *ctx;    /* the case, for the callbacks */
    /* runs f on fresh inputs, its outputs into out; false with the interpreter's message */
    bool (*run)(const IrFunc *f, const void *ctx, void *out, StrBuf *err);
    /* whether got is close enough to want (after canonicalize) */
    bool (*close)(const void *want, const void *got, const void *ctx);
    /* after pass `pass` ran on f (NULL: nothing to check) */
    void (*after_pass)(const IrFunc *f, const char *pass, const char *arch, bool arch_specific,
                       int stages, const void *ctx);
} PassCheck;

static inline void interp_passes_check(const IrFunc *lowered, const PassCheck *pc)
{
    static const char *const arches[] = {"sm_80", "sm_90a"};
    void *got = malloc(pc->out_bytes), *prev = malloc(pc->out_bytes);
    StrBuf err = {0};
    for (int a = pc->first_arch; a < 2; a++) {
        for (int stages = 1; stages <= pc->max_stages; stages++) {
            int sm = 0;
            bool arch_specific = false;
            driver_parse_arch(arches[a], &sm, &arch_specific);
            PassOptions po = {.num_warps = pc->num_warps ? pc->num_warps : 4,
                              .num_stages = stages,
                              .sm = sm,
                              .verify = true,
                              .mma = true,
                              .wgmma = true,
                              .arch_specific = arch_specific,
                              .stream_k = pc->stream_k,
                              .persistent = pc->persistent,
                              .pingpong = pc->pingpong,
                              .overlap_dots = pc->overlap_dots,
                              .tma_store = pc->tma_store,
                              .no_fuse_loops = pc->no_fuse_loops};
            Arena *arena = arena_new();
            IrFunc *f = ir_func_clone(lowered, arena);
            passes_prepare(f, &po);
            for (int i = 0; i < passes_count; i++) {
                Diag d = {0};
                bool pass_ok = passes_run_one(f, &po, &d, i);
                if (!pass_ok && strstr(d.text.data ? d.text.data : "", "num_stages=")) {
                    diag_free(&d);
                    break;
                }
                CHECK(pass_ok, "%s %s stages %d: pass %s failed: %s", pc->kernel, arches[a], stages,
                      passes_list[i].name, d.text.data ? d.text.data : "");
                diag_free(&d);
                if (!pass_ok)
                    break;
                strbuf_clear(&err);
                bool ran = pc->run(f, pc->ctx, got, &err);
                CHECK(ran, "%s %s stages %d after %s: %s", pc->kernel, arches[a], stages,
                      passes_list[i].name, err.data ? err.data : "");
                if (ran && i == 0)
                    CHECK(pc->close(pc->want, got, pc->ctx),
                          "%s %s stages %d: output far from the lowered kernel's after %s",
                          pc->kernel, arches[a], stages, passes_list[i].name);
                else if (ran)
                    CHECK(memcmp(prev, got, pc->out_bytes) == 0,
                          "%s %s stages %d: output differs after %s", pc->kernel, arches[a], stages,
                          passes_list[i].name);
                memcpy(prev, got, pc->out_bytes);
                if (pc->after_pass)
                    pc->after_pass(f, passes_list[i].name, arches[a], arch_specific, stages,
                                   pc->ctx);
            }
            arena_free(arena);
        }
    }
    strbuf_free(&err);
    free(got);
    free(prev);
}

#endif
