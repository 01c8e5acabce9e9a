/* passes_swizzle.c: the shared layouts of the pipeline's tiles (passes/swizzle.c,
 * shared_swizzled_offset). For every swizzle mode the layout picks (128, 64, 32 bytes), both
 * orders and several tile shapes: (1) every element of a tile gets its own bytes inside one slot
 * (shared_slot_bytes), elements of one 16-byte chunk stay together and in order, so a 16-byte
 * cp.async or ldmatrix row moves whole; (2) free of bank conflicts by construction: eight
 * consecutive rows' chunks at one column land in eight distinct 16-byte bank groups (what an
 * ldmatrix of 8 rows, or 8 threads copying one column of chunks, touches at once); (3) the mode
 * is the widest that divides the contiguous dim's bytes, none below 32 bytes. An fp32 #mma
 * accumulator's convert scratch (shared_accumulator_swizzle): every element its own bytes, the
 * accumulator's 8-byte stores one wavefront per half-warp (32 distinct banks) where the 16-byte
 * chunks gave two, and a blocked reader's 16-byte loads of a row free of conflicts too. */
#include "passes/passes.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

static void check_tile(int rows, int cols, DType dt, int contig)
{
    int32_t shape[2];
    shape[contig] = cols;
    shape[1 - contig] = rows;
    Type tile = type_block(type_scalar(dt), 2, shape);
    tile.is_smem = true;
    Layout l;
    int eb = dtype_bytes(dt);
    int64_t cbytes = (int64_t)cols * eb;
    bool ok = shared_layout_for(&l, tile, contig);
    int want = cbytes % 128 == 0 ? 128 : cbytes % 64 == 0 ? 64 : cbytes % 32 == 0 ? 32 : 0;
    CHECK(ok == (want != 0), "%dx%d contig %d: layout %d", rows, cols, contig, ok);
    if (!ok)
        return;
    CHECK(l.shared.swizzle == want, "%dx%d: swizzle %d, want %d", rows, cols, l.shared.swizzle,
          want);
    int64_t slot = shared_slot_bytes(tile, false);
    CHECK(slot % 1024 == 0 && slot >= (int64_t)rows * cols * eb, "slot %lld", (long long)slot);
    unsigned char *used = calloc((size_t)slot, 1);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            int64_t co[2];
            co[contig] = c;
            co[1 - contig] = r;
            int64_t off = shared_swizzled_offset(&l, tile, co);
            CHECK(off >= 0 && off + eb <= slot && off % eb == 0, "%dx%d (%d, %d) at %lld", rows,
                  cols, r, c, (long long)off);
            if (off < 0 || off + eb > slot)
                continue;
            for (int b = 0; b < eb; b++) {
                CHECK(!used[off + b], "%dx%d sw%d: (%d, %d) overlaps", rows, cols, want, r, c);
                used[off + b] = 1;
            }
            /* the next element of the same 16-byte chunk is the next eb bytes */
            if ((c * eb) % 16 + eb < 16 && c + 1 < cols) {
                int64_t co2[2];
                co2[contig] = c + 1;
                co2[1 - contig] = r;
                CHECK(shared_swizzled_offset(&l, tile, co2) == off + eb,
                      "%dx%d: chunk split at (%d, %d)", rows, cols, r, c);
            }
        }
    free(used);
    /* bank groups: 8 consecutive rows, one chunk column */
    int chunks = (int)(cbytes / 16);
    for (int r0 = 0; r0 + 8 <= rows; r0 += 8)
        for (int j = 0; j < chunks; j++) {
            unsigned seen = 0;
            for (int r = r0; r < r0 + 8; r++) {
                int64_t co[2];
                co[contig] = j * 16 / eb;
                co[1 - contig] = r;
                int group = (int)((shared_swizzled_offset(&l, tile, co) / 16) % 8);
                CHECK(!(seen & (1u << group)),
                      "%dx%d sw%d: rows %d.. chunk %d conflict in group %d", rows, cols, want, r0,
                      j, group);
                seen |= 1u << group;
            }
        }
}

/* Banks (4-byte words mod 32) of `n` accesses of `bytes` each at offsets off[]: true when no bank
 * is touched twice (one wavefront). */
static bool one_wavefront(const int64_t *off, int n, int bytes)
{
    unsigned seen = 0;
    for (int i = 0; i < n; i++)
        for (int w = 0; w < bytes / 4; w++) {
            unsigned bank = (unsigned)((off[i] / 4 + w) % 32);
            if (seen & (1u << bank))
                return false;
            seen |= 1u << bank;
        }
    return true;
}

/* Whether every half-warp of the #mma accumulator's writer is one wavefront under l: lanes
 * (g, t) of rows r0 + g (g = 0..3 or 4..7) store columns 8j + 2t, +1 as one 8-byte access. */
static bool accumulator_writes_conflict_free(const Layout *l, Type tile)
{
    bool ok = true;
    for (int r0 = 0; r0 < tile.shape[0]; r0 += 8)
        for (int j = 0; j < tile.shape[1] / 8; j++)
            for (int h = 0; h < 2; h++) {
                int64_t off[16];
                for (int g = 0; g < 4; g++)
                    for (int t = 0; t < 4; t++) {
                        int64_t co[2] = {r0 + 4 * h + g, 8 * j + 2 * t},
                                co1[2] = {co[0], co[1] + 1};
                        off[g * 4 + t] = shared_swizzled_offset(l, tile, co);
                        CHECK(shared_swizzled_offset(l, tile, co1) == off[g * 4 + t] + 4,
                              "pair split at (%lld, %lld)", (long long)co[0], (long long)co[1]);
                    }
                ok &= one_wavefront(off, 16, 8);
            }
    return ok;
}

static void check_accumulator_scratch(int rows, int cols)
{
    int32_t shape[2] = {rows, cols};
    Type tile = type_block(type_scalar(DT_F32), 2, shape);
    Layout plain, l;
    CHECK(shared_layout_for(&plain, tile, 1), "%dx%d: no layout", rows, cols);
    l = plain;
    shared_accumulator_swizzle(&l, tile);
    CHECK(l.shared.vec == 8 && l.shared.per_phase == 1 && l.shared.max_phase == 4 &&
              l.shared.swizzle == 128 && shared_swizzle_unit_bytes(&l, tile) == 32,
          "%dx%d: vec %d phase %d/%d", rows, cols, l.shared.vec, l.shared.per_phase,
          l.shared.max_phase);
    /* every element its own 4 bytes, inside the tile's bytes */
    int64_t bytes = (int64_t)rows * cols * 4;
    unsigned char *used = calloc((size_t)bytes, 1);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            int64_t co[2] = {r, c}, off = shared_swizzled_offset(&l, tile, co);
            CHECK(off >= 0 && off + 4 <= bytes && off % 4 == 0, "(%d, %d) at %lld", r, c,
                  (long long)off);
            if (off >= 0 && off + 4 <= bytes) {
                CHECK(!used[off], "%dx%d: (%d, %d) overlaps", rows, cols, r, c);
                used[off] = 1;
            }
        }
    free(used);
    /* the writer: one wavefront per half-warp here, two under the 16-byte chunks */
    CHECK(accumulator_writes_conflict_free(&l, tile), "%dx%d: writer conflicts", rows, cols);
    CHECK(!accumulator_writes_conflict_free(&plain, tile), "%dx%d: 16-byte chunks had none", rows,
          cols);
    /* a blocked reader: 8 lanes, 16 bytes each, 128 consecutive bytes of one row */
    for (int r = 0; r < rows; r++)
        for (int c0 = 0; c0 < cols; c0 += 32) {
            int64_t off[8];
            for (int i = 0; i < 8; i++) {
                int64_t co[2] = {r, c0 + 4 * i};
                off[i] = shared_swizzled_offset(&l, tile, co);
                for (int k = 1; k < 4; k++) {
                    int64_t ck[2] = {r, c0 + 4 * i + k};
                    CHECK(shared_swizzled_offset(&l, tile, ck) == off[i] + 4 * k,
                          "16 bytes split at (%d, %d)", r, c0 + 4 * i);
                }
            }
            CHECK(one_wavefront(off, 8, 16), "%dx%d: reader conflicts at row %d col %d", rows, cols,
                  r, c0);
        }
    /* 16-bit elements and narrower swizzles are left alone */
    Layout h = plain;
    Type t16 = type_block(type_scalar(DT_F16), 2, shape);
    CHECK(shared_layout_for(&h, t16, 1), "f16 layout");
    Layout h2 = h;
    shared_accumulator_swizzle(&h2, t16);
    CHECK(!memcmp(&h, &h2, sizeof h), "f16 scratch changed");
}

int main(void)
{
    const int dims[] = {16, 32, 64, 128, 256};
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++)
            for (int contig = 0; contig < 2; contig++) {
                check_tile(dims[a], dims[b], DT_F16, contig);
                check_tile(dims[a], dims[b], DT_BF16, contig);
            }
    check_tile(64, 8, DT_F16, 1);        /* 16 bytes: no swizzled form */
    check_accumulator_scratch(128, 256); /* seed 1's fp32 epilogue at 128x256 */
    check_accumulator_scratch(64, 128);
    check_accumulator_scratch(16, 32);
    if (test_failures)
        printf("%d failure(s)\n", test_failures);
    else
        printf("ok\n");
    return test_failures ? 1 : 0;
}
