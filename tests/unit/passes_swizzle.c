/* passes_swizzle.c: the shared layouts of the pipeline's tiles (passes/swizzle.c,
 * shared_swizzled_offset). For every swizzle mode the layout picks (128, 64, 32 bytes), both
 * orders and several tile shapes: (1) every element of a tile gets its own bytes inside one slot
 * (shared_slot_bytes), elements of one 16-byte chunk stay together and in order, so a 16-byte
 * cp.async or ldmatrix row moves whole; (2) free of bank conflicts by construction: eight
 * consecutive rows' chunks at one column land in eight distinct 16-byte bank groups (what an
 * ldmatrix of 8 rows, or 8 threads copying one column of chunks, touches at once); (3) the mode
 * is the widest that divides the contiguous dim's bytes, none below 32 bytes. */
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

int main(void)
{
    const int dims[] = {16, 32, 64, 128, 256};
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++)
            for (int contig = 0; contig < 2; contig++) {
                check_tile(dims[a], dims[b], DT_F16, contig);
                check_tile(dims[a], dims[b], DT_BF16, contig);
            }
    check_tile(64, 8, DT_F16, 1); /* 16 bytes: no swizzled form */
    if (test_failures)
        printf("%d failure(s)\n", test_failures);
    else
        printf("ok\n");
    return test_failures ? 1 : 0;
}
