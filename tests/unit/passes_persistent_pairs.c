/* passes_persistent_pairs.c: a grid made persistent (passes/persistent.c) whose loop's trip count
 * grows with program_id(0) runs its tiles in pairs (paired_position, pid0_of_position): the map
 * from a program's turns to tiles must be one to one on every grid for every program count. The
 * triangle kernel of tests/lit/passes/Inputs/persistent.tri (program (i, r) sums x[0..i] into
 * y[r gx + i], plus 1000 r) is taken through every pass for sm_80 and sm_90a and run on the
 * interpreter over grids of 1 to 9 by 1 to 3 tiles, an odd row length among them, by 1 to 20
 * programs (fewer than a row, more than the tiles, and every block of 2 programs' turns full,
 * part full past the programs, and short of them): every y must be written with its sum, as the
 * grid would. */
#include "exec_test.h"
#include "interp_passes.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_ROW = 9, MAX_ROWS = 3 };

static void check_grid(const IrFunc *f, const char *arch, int gx, int gy, int programs)
{
    int32_t x[MAX_ROW], y[MAX_ROW * MAX_ROWS];
    for (int k = 0; k < MAX_ROW; k++)
        x[k] = k + 1;
    memset(y, 0xff, sizeof y);
    InterpArg args[2] = {{.ptr = (uint64_t)(uintptr_t)x}, {.ptr = (uint64_t)(uintptr_t)y}};
    InterpBuffer bufs[2] = {{(uint64_t)(uintptr_t)x, sizeof x}, {(uint64_t)(uintptr_t)y, sizeof y}};
    InterpLaunch l = {.grid = {gx, gy, 1},
                      .args = args,
                      .nargs = 2,
                      .buffers = bufs,
                      .nbuffers = 2,
                      .persistent_programs = programs};
    StrBuf err = {0};
    bool ran = interp_run(f, &l, &err);
    CHECK(ran, "%s, %d x %d tiles, %d programs: %s", arch, gx, gy, programs,
          err.data ? err.data : "");
    strbuf_free(&err);
    if (!ran)
        return;
    for (int r = 0; r < gy; r++)
        for (int i = 0; i < gx; i++) {
            int32_t want = 1000 * r + (i + 1) * (i + 2) / 2;
            CHECK(y[r * gx + i] == want, "%s, %d x %d tiles, %d programs: y[%d] = %d, want %d",
                  arch, gx, gy, programs, r * gx + i, y[r * gx + i], want);
        }
}

int main(void)
{
    static const char *const defs[] = {NULL};
    Lowered low;
    if (!interp_passes_lower(&low, "tests/lit/passes/Inputs/persistent.tri", "triangle", NULL, defs,
                             4))
        return 1;
    static const char *const arches[] = {"sm_80", "sm_90a"};
    for (int a = 0; a < 2; a++) {
        int sm = 0;
        bool arch_specific = false;
        driver_parse_arch(arches[a], &sm, &arch_specific);
        PassOptions po = {.num_warps = 4,
                          .num_stages = 3,
                          .sm = sm,
                          .verify = true,
                          .mma = true,
                          .wgmma = true,
                          .arch_specific = arch_specific,
                          .persistent = true};
        Arena *arena = arena_new();
        IrFunc *f = ir_func_clone(low.res.ir, arena);
        Diag d = {0};
        bool ok = passes_run(f, &po, &d);
        CHECK(ok, "%s: %s", arches[a], d.text.data ? d.text.data : "");
        diag_free(&d);
        CHECK(!ok || f->persistent.on, "%s: the kernel was not made persistent", arches[a]);
        for (int gx = 1; ok && f->persistent.on && gx <= MAX_ROW; gx++)
            for (int gy = 1; gy <= MAX_ROWS; gy++)
                for (int programs = 1; programs <= 20; programs++)
                    check_grid(f, arches[a], gx, gy, programs);
        arena_free(arena);
    }
    interp_passes_lowered_free(&low);
    if (test_failures)
        printf("%d failures\n", test_failures);
    else
        printf("passes_persistent_pairs: every tile ran once, in pairs, for every program count\n");
    return test_failures ? 1 : 0;
}
