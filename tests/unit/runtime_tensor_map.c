/* runtime_tensor_map: rt_tensor_map_args (runtime/tensor_map.c), the pure half of a launch's
 * tensor maps, without a GPU. A kernel is made as a loaded PTX makes it (kernel_meta_read, then
 * rt_cuda_bind_kernel with no CUmodule); its maps are evaluated against launch arguments: the
 * base, the dims (unbounded ones at 2^31 - 1, an unsigned parameter zero-extended) and the byte
 * strides; each broken rule -- misaligned base, a stride not a multiple of 16 or out of range, a
 * dim of 0, negative or past 2^31 - 1, an overflowing product -- returns
 * TRIC_ERROR_INVALID_ARGUMENT with its message. rt_tensor_maps_make, with a counting encoder in
 * place of cuTensorMapEncodeTiled: a map is encoded again only when its arguments change, a
 * launch that finds the cache taken encodes everything and leaves the cache alone, and a failed
 * encode or a bad argument leaves nothing stale behind. */
#include "runtime/cuda_api.h"
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* Parameters a b M N S c U K: *fp16, *bf16, i32, i32, i64, *fp8e4nv, u32, i32. */
static const char block[] =
    "// tric.begin\n"
    "// tric.kernel kernel_t\n"
    "// tric.target sm_90a\n"
    "// tric.num_warps 4\n"
    "// tric.threads 128\n"
    "// tric.shared 0\n"
    "// tric.params *fp16:16 *bf16 i32 i32 i64 *fp8e4nv u32 i32\n"
    "%s"
    "// tric.tensor_map fp16 base=0 dims=*,p2 strides=1,p3 box=64,128 swizzle=128\n"
    "// tric.tensor_map bf16 base=1 dims=p3,2*p2,p6 strides=1,p3,2*p2*p3 box=32,8,1 swizzle=64\n"
    "// tric.tensor_map fp8e4nv base=5 dims=p4 strides=1 box=16 swizzle=0\n"
    "// tric.tensor_map fp16 base=0 dims=p4*p4 strides=1 box=8 swizzle=32\n"
    "// tric.tensor_map fp16 base=0 dims=p2 strides=p2 box=8 swizzle=0\n"
    "// tric.end\n";

static const char names_line[] = "// tric.param_names a b M N S c U K\n";

/* The kernel as a loaded PTX with (or without) param_names makes it. */
static void make_kernel(struct tric_kernel_s *k, bool named)
{
    memset(k, 0, sizeof *k);
    char text[4096];
    snprintf(text, sizeof text, block, named ? names_line : "");
    KernelMeta meta;
    StrBuf err = {0};
    CHECK(kernel_meta_read(text, &meta, &err));
    if (err.len)
        fprintf(stderr, "%s\n", err.data);
    strbuf_free(&err);
    CHECK(rt_cuda_bind_kernel(NULL, NULL, &meta, k) == TRIC_SUCCESS);
    CHECK(k->ntmaps == 5 && k->nparams == 8);
}

static void free_kernel(struct tric_kernel_s *k)
{
    free(k->param_names);
    free(k->constexprs);
    free(k->config_text);
}

/* Arguments: a = 0x10000, b = 0x20000, M, N, S, c = 0x30000, U, K = 0. */
static void set_args(tric_arg *args, int32_t m, int32_t n, int64_t s, uint32_t u)
{
    args[0] = TRIC_ARG_ADDR(0x10000);
    args[1] = TRIC_ARG_ADDR(0x20000);
    args[2] = TRIC_ARG_I32(m);
    args[3] = TRIC_ARG_I32(n);
    args[4] = TRIC_ARG_I64(s);
    args[5] = TRIC_ARG_ADDR(0x30000);
    args[6] = TRIC_ARG_I32((int32_t)u);
    args[7] = TRIC_ARG_I32(0);
}

static void test_values(void)
{
    struct tric_kernel_s k;
    make_kernel(&k, true);
    tric_arg args[8];
    set_args(args, 100, 4096, INT32_MAX, 0x7fffffffu);
    RtTensorMapArgs a;

    /* fp16 a[M, *], rows N apart; a 128-byte swizzle takes 256-byte L2 promotion */
    CHECK(rt_tensor_map_args(&k, 0, args, &a) == TRIC_SUCCESS);
    CHECK(a.data_type == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 && a.rank == 2);
    CHECK(a.address == 0x10000);
    CHECK(a.dims[0] == RT_TMAP_UNBOUNDED_DIM && a.dims[0] == UINT64_C(2147483647));
    CHECK(a.dims[1] == 100);
    CHECK(a.strides[0] == 8192);
    CHECK(a.box[0] == 64 && a.box[1] == 128);
    CHECK(a.element_strides[0] == 1 && a.element_strides[1] == 1);
    CHECK(a.swizzle == CU_TENSOR_MAP_SWIZZLE_128B);
    CHECK(a.l2_promotion == CU_TENSOR_MAP_L2_PROMOTION_L2_256B);

    /* bf16 b: product dims and strides */
    CHECK(rt_tensor_map_args(&k, 1, args, &a) == TRIC_SUCCESS);
    CHECK(a.data_type == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 && a.rank == 3);
    CHECK(a.address == 0x20000);
    CHECK(a.dims[0] == 4096 && a.dims[1] == 200 && a.dims[2] == UINT64_C(2147483647));
    CHECK(a.strides[0] == 4096 * 2 && a.strides[1] == 2 * 100 * 4096 * 2);
    CHECK(a.box[0] == 32 && a.box[1] == 8 && a.box[2] == 1);
    CHECK(a.swizzle == CU_TENSOR_MAP_SWIZZLE_64B);
    CHECK(a.l2_promotion == CU_TENSOR_MAP_L2_PROMOTION_L2_128B);

    /* fp8 travels as bytes; an i64 dim of exactly 2^31 - 1 is allowed */
    CHECK(rt_tensor_map_args(&k, 2, args, &a) == TRIC_SUCCESS);
    CHECK(a.data_type == CU_TENSOR_MAP_DATA_TYPE_UINT8 && a.rank == 1);
    CHECK(a.address == 0x30000 && a.dims[0] == UINT64_C(2147483647) && a.box[0] == 16);
    CHECK(a.swizzle == CU_TENSOR_MAP_SWIZZLE_NONE);

    /* A buffer argument's address is the buffer's plus the offset. */
    struct tric_buffer_s buf = {.addr = 0x40000, .bytes = 1 << 20};
    args[0] = TRIC_ARG_BUF_AT(&buf, 64);
    CHECK(rt_tensor_map_args(&k, 0, args, &a) == TRIC_SUCCESS && a.address == 0x40040);

    /* swizzle 32 */
    set_args(args, 100, 4096, 3, 1);
    CHECK(rt_tensor_map_args(&k, 3, args, &a) == TRIC_SUCCESS);
    CHECK(a.dims[0] == 9 && a.swizzle == CU_TENSOR_MAP_SWIZZLE_32B);
    free_kernel(&k);
}

/* rt_tensor_map_args of map i fails with exactly message. */
static void expect_error(struct tric_kernel_s *k, int i, const tric_arg *args, const char *message)
{
    RtTensorMapArgs a;
    tric_status st = rt_tensor_map_args(k, i, args, &a);
    CHECK(st == TRIC_ERROR_INVALID_ARGUMENT);
    CHECK(!strcmp(tric_last_error(), message));
    if (strcmp(tric_last_error(), message))
        fprintf(stderr, "  expected: %s\n  got:      %s\n", message, tric_last_error());
}

static void test_errors(void)
{
    struct tric_kernel_s k;
    make_kernel(&k, true);
    tric_arg args[8];

    set_args(args, 100, 4096, 64, 1);
    args[0] = TRIC_ARG_ADDR(0x10008);
    expect_error(&k, 0, args,
                 "kernel_t: tensor map 0 (base a): the base address 0x10008 is not 16-byte "
                 "aligned (TMA's rule; cuTensorMapEncodeTiled)");

    set_args(args, 100, 100, 64, 1);
    expect_error(&k, 0, args,
                 "kernel_t: tensor map 0 (base a): the stride of dim 1 is 200 bytes (N = 100 "
                 "elements), not a multiple of 16 (TMA's rule; cuTensorMapEncodeTiled)");
    set_args(args, 100, -64, 64, 1);
    expect_error(&k, 0, args,
                 "kernel_t: tensor map 0 (base a): the stride of dim 1 is -128 bytes (N = -64 "
                 "elements), not in [0, 2^40) (TMA's rule; cuTensorMapEncodeTiled)");

    set_args(args, 0, 4096, 64, 1);
    expect_error(&k, 0, args,
                 "kernel_t: tensor map 0 (base a): dim 1 is 0 (M), not in [1, 2^31 - 1] (TMA's "
                 "coordinates are 32-bit signed; larger dims fault on the H100)");
    set_args(args, -5, 4096, 64, 1);
    expect_error(&k, 0, args,
                 "kernel_t: tensor map 0 (base a): dim 1 is -5 (M), not in [1, 2^31 - 1] (TMA's "
                 "coordinates are 32-bit signed; larger dims fault on the H100)");
    set_args(args, 100, 4096, (INT64_C(1) << 32) + 1, 1);
    expect_error(&k, 2, args,
                 "kernel_t: tensor map 2 (base c): dim 0 is 4294967297 (S), not in [1, 2^31 - 1] "
                 "(TMA's coordinates are 32-bit signed; larger dims fault on the H100)");
    /* the u32 parameter zero-extended: 2^32 - 1, not -1 */
    set_args(args, 100, 4096, 64, 0xffffffffu);
    expect_error(&k, 1, args,
                 "kernel_t: tensor map 1 (base b): dim 2 is 4294967295 (U), not in [1, 2^31 - 1] "
                 "(TMA's coordinates are 32-bit signed; larger dims fault on the H100)");
    set_args(args, 100, 4096, 64, 0);
    expect_error(&k, 1, args,
                 "kernel_t: tensor map 1 (base b): dim 2 is 0 (U), not in [1, 2^31 - 1] (TMA's "
                 "coordinates are 32-bit signed; larger dims fault on the H100)");

    /* 2*M*N elements of 2 bytes: 2^42 bytes */
    set_args(args, 1 << 20, 1 << 20, 64, 1);
    expect_error(&k, 1, args,
                 "kernel_t: tensor map 1 (base b): the stride of dim 2 is 4398046511104 bytes "
                 "(2*M*N = 2199023255552 elements), not in [0, 2^40) (TMA's rule; "
                 "cuTensorMapEncodeTiled)");
    /* S*S past int64 */
    set_args(args, 100, 4096, INT64_C(1) << 32, 1);
    expect_error(&k, 3, args,
                 "kernel_t: tensor map 3 (base a): dim 0 (S*S) overflows 64 bits (TMA's rule; "
                 "cuTensorMapEncodeTiled)");
    /* the innermost stride must be 1 */
    set_args(args, 100, 4096, 64, 1);
    expect_error(&k, 4, args,
                 "kernel_t: tensor map 4 (base a): the stride of dim 0 is 100 elements (M), not "
                 "1: TMA reads the innermost dim contiguously");
    set_args(args, 1, 4096, 64, 1);
    RtTensorMapArgs a;
    CHECK(rt_tensor_map_args(&k, 4, args, &a) == TRIC_SUCCESS && a.dims[0] == 1);
    free_kernel(&k);

    /* Without parameter names, arguments are counted from 1. */
    make_kernel(&k, false);
    set_args(args, 100, 100, 64, 1);
    expect_error(&k, 0, args,
                 "kernel_t: tensor map 0 (base argument 1): the stride of dim 1 is 200 bytes "
                 "(argument 4 = 100 elements), not a multiple of 16 (TMA's rule; "
                 "cuTensorMapEncodeTiled)");

    /* Maps tric would not write (kernel_meta_read refuses the first; the rest are TMA's rules
     * on the box the compiler chose) are internal errors, not a driver's INVALID_VALUE. */
    set_args(args, 100, 4096, 64, 1);
    k.tmaps[0].base_param = 2;
    expect_error(&k, 0, args,
                 "kernel_t: tensor map 0 (base argument 3): internal error: the base is "
                 "parameter 2, not a pointer parameter");
    k.tmaps[0].base_param = 0;
    k.tmaps[0].box[0] = 4; /* 8 bytes */
    expect_error(&k, 0, args,
                 "kernel_t: tensor map 0 (base argument 1): internal error: the box's inner dim "
                 "is 8 bytes: a multiple of 16 and at most the swizzle (128 bytes) are needed "
                 "(cuTensorMapEncodeTiled)");
    k.tmaps[0].box[0] = 128; /* 256 bytes, over the 128-byte swizzle */
    expect_error(&k, 0, args,
                 "kernel_t: tensor map 0 (base argument 1): internal error: the box's inner dim "
                 "is 256 bytes: a multiple of 16 and at most the swizzle (128 bytes) are needed "
                 "(cuTensorMapEncodeTiled)");
    k.tmaps[0].box[0] = 64;
    k.tmaps[0].dims[1].params[0] = 1;
    expect_error(&k, 0, args,
                 "kernel_t: tensor map 0 (base argument 1): internal error: dim 1 reads "
                 "parameter 1, not an integer parameter");
    free_kernel(&k);
}

/* The encoder rt_tensor_maps_make calls on a cache miss: counts, and writes a map that says which
 * map it is, from which base, at which call. */
static int encodes;
static bool encode_fails;

static tric_status counting_encode(const struct tric_kernel_s *k, int i, const RtTensorMapArgs *a,
                                   CUtensorMap *map)
{
    (void)k;
    encodes++;
    if (encode_fails)
        return rt_fail(TRIC_ERROR_LAUNCH, "encode failed");
    memset(map, 0, sizeof *map);
    map->opaque[0] = (uint64_t)i;
    map->opaque[1] = a->address;
    map->opaque[2] = a->dims[0] + a->dims[1];
    map->opaque[3] = (uint64_t)encodes;
    return TRIC_SUCCESS;
}

static void test_cache(void)
{
    struct tric_kernel_s k;
    make_kernel(&k, true);
    k.ntmaps = 4; /* map 4 (a stride for a rank-1 map) is test_errors' */
    tric_arg args[8];
    set_args(args, 100, 4096, 3, 1);
    CUtensorMap maps[TRIC_MAX_TENSOR_MAPS], first[TRIC_MAX_TENSOR_MAPS];

    /* The first launch encodes every map; the next, with the same arguments, none, and gets the
     * same bytes. */
    encodes = 0;
    CHECK(rt_tensor_maps_make(&k, args, counting_encode, maps) == TRIC_SUCCESS);
    CHECK(encodes == 4);
    for (int i = 0; i < 4; i++)
        CHECK(maps[i].opaque[0] == (uint64_t)i && maps[i].opaque[3] == (uint64_t)i + 1);
    memcpy(first, maps, sizeof maps);
    memset(maps, 0, sizeof maps);
    CHECK(rt_tensor_maps_make(&k, args, counting_encode, maps) == TRIC_SUCCESS);
    CHECK(encodes == 4);
    CHECK(!memcmp(maps, first, 4 * sizeof *maps));

    /* M (p2) is a dim of maps 0 and 1 only: those two are encoded again. */
    set_args(args, 200, 4096, 3, 1);
    CHECK(rt_tensor_maps_make(&k, args, counting_encode, maps) == TRIC_SUCCESS);
    CHECK(encodes == 6);
    CHECK(maps[0].opaque[2] == RT_TMAP_UNBOUNDED_DIM + 200 && maps[0].opaque[3] == 5);
    CHECK(maps[1].opaque[3] == 6);
    CHECK(!memcmp(&maps[2], &first[2], 2 * sizeof *maps));

    /* a new base address: maps 0 and 3 (based on a) again */
    args[0] = TRIC_ARG_ADDR(0x50000);
    CHECK(rt_tensor_maps_make(&k, args, counting_encode, maps) == TRIC_SUCCESS);
    CHECK(encodes == 8 && maps[0].opaque[1] == 0x50000 && maps[3].opaque[1] == 0x50000);

    /* The cache held by another launch: every map encoded, the cache untouched. */
    k.tmap_cache_busy = true;
    args[0] = TRIC_ARG_ADDR(0x60000);
    CHECK(rt_tensor_maps_make(&k, args, counting_encode, maps) == TRIC_SUCCESS);
    CHECK(encodes == 12 && maps[0].opaque[1] == 0x60000);
    CHECK(k.tmap_cache_busy);
    k.tmap_cache_busy = false;
    args[0] = TRIC_ARG_ADDR(0x50000);
    CHECK(rt_tensor_maps_make(&k, args, counting_encode, maps) == TRIC_SUCCESS);
    CHECK(encodes == 12 && maps[0].opaque[1] == 0x50000 && maps[3].opaque[1] == 0x50000);

    /* A failed encode (map 0's) is returned and not cached: the next launch encodes it again. */
    args[0] = TRIC_ARG_ADDR(0x70000);
    encode_fails = true;
    CHECK(rt_tensor_maps_make(&k, args, counting_encode, maps) == TRIC_ERROR_LAUNCH);
    CHECK(!strcmp(tric_last_error(), "encode failed"));
    encode_fails = false;
    CHECK(encodes == 13 && !k.tmap_cache_busy);
    CHECK(rt_tensor_maps_make(&k, args, counting_encode, maps) == TRIC_SUCCESS);
    CHECK(encodes == 15 && maps[0].opaque[1] == 0x70000 && maps[3].opaque[1] == 0x70000);

    /* A bad argument fails before any encode and releases the cache. */
    args[0] = TRIC_ARG_ADDR(0x70008);
    CHECK(rt_tensor_maps_make(&k, args, counting_encode, maps) == TRIC_ERROR_INVALID_ARGUMENT);
    CHECK(encodes == 15 && !k.tmap_cache_busy);
    args[0] = TRIC_ARG_ADDR(0x70000);
    CHECK(rt_tensor_maps_make(&k, args, counting_encode, maps) == TRIC_SUCCESS);
    CHECK(encodes == 15 && maps[0].opaque[1] == 0x70000);
    free_kernel(&k);
}

int main(void)
{
    test_values();
    test_errors();
    test_cache();
    if (failures) {
        printf("FAIL: %d check(s)\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
