/* runtime_cuda_mock: tric's cuda device against the stand-in libcuda.so.1 (libcuda_mock.c),
 * found through LD_LIBRARY_PATH (bench/CMakeLists.txt registers the test so). Checks what can be
 * checked without a GPU: the loader (cuGetProcAddress_v2 at 12000), device naming and arch, the
 * JIT cache (a miss, a hit with identical PTX, a corrupt entry recompiled and rewritten), the
 * parameter packing (vector_add computed by the mock from the packed parameters; fp16, bf16, i64,
 * fp64 and i8 slots byte by byte), the >48 KB shared-memory opt-in, a rejected PTX with its JIT
 * log, an illegal address reported as sticky at the next sync, that the launch path does not
 * re-set the context, launch specialization (the variant's PTX, cached), and the tensor maps of
 * a kernel reading through TMA (encoded per launch, passed after the parameters). Skips (77) when the library found is not the mock. */
#include "examples/example_kernels.h"
#include "tests/runtime_check.h"
#include "runtime/runtime.h"

#include <sys/wait.h>
#include <unistd.h>

#include "mock_state.h"

static const char *probe_ptx(const char *name, int shared)
{
    static char buf[1024];
    snprintf(
        buf, sizeof buf,
        "// tric.begin\n// tric.version 0.1.0\n// tric.kernel %s\n// tric.target sm_90a\n"
        "// tric.num_warps 8\n// tric.threads 256\n// tric.shared %d\n"
        "// tric.params *fp16:16 fp16 bf16 i64 fp64 i8\n// tric.end\n"
        ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry %s(\n)\n{\n ret;\n}\n",
        name, shared, name);
    return buf;
}

/* A cache directory of the test's own (tmpl, "/tmp/tric-mock-...-XXXXXX", made unique in
 * place) as TRIC_CACHE_DIR; false, with a failed check, when it cannot be made. */
static bool own_cache_dir(char *tmpl)
{
    if (!mkdtemp(tmpl)) {
        CHECK(!"mkdtemp");
        return false;
    }
    setenv("TRIC_CACHE_DIR", tmpl, 1);
    return true;
}

/* TRIC_CACHE_DIR unset and own_cache_dir's directory removed. */
static void drop_cache_dir(const char *dir)
{
    unsetenv("TRIC_CACHE_DIR");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "note: could not remove %s\n", dir);
}

static void test_packing(tric_device dev, MockState *ms)
{
    tric_module mod;
    tric_kernel k;
    CHECK(tric_module_load_ptx(dev, probe_ptx("probe", 0), &mod) == TRIC_SUCCESS);
    CHECK(tric_module_get_kernel(mod, NULL, &k) == TRIC_SUCCESS);
    CHECK(tric_kernel_threads(k) == 256);
    tric_buffer b;
    CHECK(tric_buffer_alloc(dev, 64, &b) == TRIC_SUCCESS);
    tric_arg args[6] = {TRIC_ARG_BUF_AT(b, 16), TRIC_ARG_F32(1.5f), TRIC_ARG_F32(-2.0f),
                        TRIC_ARG_I64(-5),       TRIC_ARG_F64(0.1),  TRIC_ARG_I32(0x1234)};
    CHECK(tric_launch(k, (tric_dim3){3, 2, 1}, args, 6, NULL) == TRIC_SUCCESS);
    CHECK(ms->grid[0] == 3 && ms->grid[1] == 2 && ms->grid[2] == 1);
    /* An empty grid (any dimension 0) launches nothing, after checking the arguments. */
    int launches = ms->launches;
    CHECK(tric_launch(k, (tric_dim3){3, 2, 0}, args, 6, NULL) == TRIC_SUCCESS);
    CHECK(tric_launch(k, (tric_dim3){0, 1, 1}, args, 6, NULL) == TRIC_SUCCESS);
    CHECK(ms->launches == launches);
    CHECK(tric_launch(k, (tric_dim3){0, 1, 1}, args, 5, NULL) == TRIC_ERROR_INVALID_ARGUMENT);
    CHECK(ms->block[0] == 256 && ms->shared == 0);
    uint64_t p0, i64;
    uint16_t h, bf;
    double d;
    memcpy(&p0, ms->params[0], 8);
    memcpy(&h, ms->params[1], 2);
    memcpy(&bf, ms->params[2], 2);
    memcpy(&i64, ms->params[3], 8);
    memcpy(&d, ms->params[4], 8);
    CHECK(p0 == tric_buffer_address(b) + 16);
    CHECK(h == 0x3e00);  /* 1.5 in binary16 */
    CHECK(bf == 0xc000); /* -2.0 in bfloat16 */
    CHECK((int64_t)i64 == -5);
    CHECK(d == 0.1);
    CHECK(ms->params[5][0] == 0x34); /* an i8 parameter reads the low byte */
    args[1] = TRIC_ARG_F64(1.5);
    CHECK(tric_launch(k, (tric_dim3){1, 1, 1}, args, 6, NULL) == TRIC_ERROR_INVALID_ARGUMENT);
    CHECK(strcmp(tric_last_error(), "argument 2 of probe: expected a float (fp16), got a double") ==
          0);

    /* The attribute queries: the driver's figures, occupancy for the kernel's 256 threads. */
    tric_kernel_attrs at;
    CHECK(tric_kernel_attributes(k, &at) == TRIC_SUCCESS);
    CHECK(at.registers == 40 && at.spill_bytes == 16 && at.static_shared_bytes == 1024);
    CHECK(at.max_threads_per_block == 1024 && at.threads == 256 && at.dynamic_shared_bytes == 0);
    CHECK(at.active_blocks_per_sm == 6 && at.multiprocessors == 132);
    tric_module_destroy(mod);

    /* Exactly the device's 48 KB (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK): no opt-in. */
    ms->max_dynamic_shared_set = 0;
    CHECK(tric_module_load_ptx(dev, probe_ptx("probe_48k", 49152), &mod) == TRIC_SUCCESS);
    CHECK(ms->max_dynamic_shared_set == 0);
    tric_module_destroy(mod);
    /* Past the opt-in limit (the mock's 232448, an H100's): refused at load, by name. */
    CHECK(tric_module_load_ptx(dev, probe_ptx("probe_huge", 232449), &mod) == TRIC_ERROR_LAUNCH);
    CHECK(strstr(tric_last_error(), "needs 232449 bytes") &&
          strstr(tric_last_error(), "at most 232448"));

    /* More than 48 KB of shared memory: the opt-in attribute is set at load. */
    CHECK(tric_module_load_ptx(dev, probe_ptx("probe_big", 100000), &mod) == TRIC_SUCCESS);
    CHECK(ms->max_dynamic_shared_set == 100000);
    CHECK(tric_module_get_kernel(mod, "probe_big", &k) == TRIC_SUCCESS);
    args[1] = TRIC_ARG_F32(1.5f);
    CHECK(tric_launch(k, (tric_dim3){1, 1, 1}, args, 6, NULL) == TRIC_SUCCESS);
    CHECK(ms->shared == 100000);
    tric_module_destroy(mod);
    tric_buffer_free(b);
}

/* A kernel reading two tensor maps (docs/ptx-metadata.md "tensor_map"): a launch encodes them
 * from its arguments and passes them after the two run-time parameters, map i the i-th; the next
 * launch with the same arguments reuses them, one with a new M encodes both again; a value TMA
 * cannot take is refused before any driver call. */
static void test_tensor_maps(tric_device dev, MockState *ms)
{
    static const char ptx[] =
        "// tric.begin\n// tric.version 0.1.0\n// tric.kernel tma_probe\n"
        "// tric.target sm_90a\n// tric.num_warps 4\n// tric.threads 128\n// tric.shared 0\n"
        "// tric.params *fp16:16 i32\n// tric.param_names a_ptr M\n"
        "// tric.tensor_map fp16 base=0 dims=64,p1 strides=1,64 box=64,32 swizzle=128\n"
        "// tric.tensor_map fp16 base=0 dims=*,2*p1 strides=1,p1 box=16,8 swizzle=32\n"
        "// tric.end\n"
        ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry tma_probe(\n"
        " .param .u64 a, .param .u32 m,\n .param .align 64 .b8 map0[128],\n"
        " .param .align 64 .b8 map1[128]\n)\n{\n ret;\n}\n";
    tric_module mod;
    tric_kernel k;
    CHECK(tric_module_load_ptx(dev, ptx, &mod) == TRIC_SUCCESS);
    CHECK(tric_module_get_kernel(mod, NULL, &k) == TRIC_SUCCESS);
    CHECK(tric_kernel_num_params(k) == 2); /* the maps are no run-time parameters */
    tric_buffer b;
    CHECK(tric_buffer_alloc(dev, 1 << 16, &b) == TRIC_SUCCESS);
    uint64_t base = tric_buffer_address(b) + 256;
    tric_arg args[2] = {TRIC_ARG_BUF_AT(b, 256), TRIC_ARG_I32(96)};
    int encodes = ms->tmap_encodes, launches = ms->launches;
    CHECK(tric_launch(k, (tric_dim3){1, 1, 1}, args, 2, NULL) == TRIC_SUCCESS);
    CHECK(ms->launches == launches + 1 && ms->tmap_encodes == encodes + 2);
    /* The last encode is map 1's: 2^32 for the unbounded dim, the stride M in bytes. */
    CHECK(ms->tmap_data_type == 6 && ms->tmap_rank == 2 && ms->tmap_address == base);
    CHECK(ms->tmap_dims[0] == RT_TMAP_UNBOUNDED_DIM && ms->tmap_dims[1] == 192);
    CHECK(ms->tmap_strides[0] == 192);
    CHECK(ms->tmap_box[0] == 16 && ms->tmap_box[1] == 8);
    CHECK(ms->tmap_element_strides[0] == 1 && ms->tmap_element_strides[1] == 1);
    CHECK(ms->tmap_interleave == 0 && ms->tmap_swizzle == 1 && ms->tmap_l2 == 2 &&
          ms->tmap_oob == 0);
    /* Each map reached its parameter slot after the run-time parameters, in order. */
    uint64_t p0, addr0, addr1;
    int32_t m;
    int n0, n1;
    memcpy(&p0, ms->params[0], 8);
    memcpy(&m, ms->params[1], 4);
    CHECK(p0 == base && m == 96);
    memcpy(&addr0, ms->maps_seen[0], 8);
    memcpy(&addr1, ms->maps_seen[1], 8);
    memcpy(&n0, ms->maps_seen[0] + 16, sizeof n0);
    memcpy(&n1, ms->maps_seen[1] + 16, sizeof n1);
    CHECK(addr0 == base && addr1 == base);
    CHECK(!memcmp(ms->maps_seen[0] + 8, "tricmap", 8) &&
          !memcmp(ms->maps_seen[1] + 8, "tricmap", 8));
    CHECK(n0 == encodes + 1 && n1 == encodes + 2);

    /* The same arguments again: the kernel's cached maps, byte for byte, and no encode. */
    CHECK(tric_launch(k, (tric_dim3){1, 1, 1}, args, 2, NULL) == TRIC_SUCCESS);
    CHECK(ms->launches == launches + 2 && ms->tmap_encodes == encodes + 2);
    memcpy(&n0, ms->maps_seen[0] + 16, sizeof n0);
    memcpy(&n1, ms->maps_seen[1] + 16, sizeof n1);
    CHECK(n0 == encodes + 1 && n1 == encodes + 2);
    /* A new M changes both maps' dims: both encoded again. */
    args[1] = TRIC_ARG_I32(64);
    CHECK(tric_launch(k, (tric_dim3){1, 1, 1}, args, 2, NULL) == TRIC_SUCCESS);
    CHECK(ms->tmap_encodes == encodes + 4 && ms->tmap_dims[1] == 128);
    memcpy(&n0, ms->maps_seen[0] + 16, sizeof n0);
    CHECK(n0 == encodes + 3);

    /* A stride TMA cannot take: refused, nothing launched. */
    args[1] = TRIC_ARG_I32(100);
    launches = ms->launches;
    CHECK(tric_launch(k, (tric_dim3){1, 1, 1}, args, 2, NULL) == TRIC_ERROR_INVALID_ARGUMENT);
    CHECK(strcmp(tric_last_error(),
                 "tma_probe: tensor map 1 (base a_ptr): the stride of dim 1 is 200 bytes (M = 100 "
                 "elements), not a multiple of 16 (TMA's rule; cuTensorMapEncodeTiled)") == 0);
    CHECK(ms->launches == launches);
    tric_buffer_free(b);
    tric_module_destroy(mod);
}

/* A persistent kernel (docs/ptx-metadata.md "persistent", passes/stream_k.c): a launch runs
 * min(grid x, SMs x the kernel's blocks per SM) programs and passes the grid's x and the stream's workspace after the run-time
 * parameters; the workspace is allocated once per stream, zeroed, and reused; a 2-D grid is
 * refused before any driver call. */
static void test_persistent(tric_device dev, MockState *ms)
{
    static const char ptx[] =
        "// tric.begin\n// tric.version 0.1.0\n// tric.kernel sk_probe\n"
        "// tric.target sm_90a\n// tric.num_warps 4\n// tric.threads 128\n// tric.shared 100000\n"
        "// tric.params *fp32:16 i32\n// tric.param_names c_ptr M\n"
        "// tric.persistent workspace=4096\n// tric.end\n"
        ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry sk_probe(\n"
        " .param .u64 c, .param .u32 m,\n .param .u32 tile_count, .param .u64 workspace\n)\n"
        "{\n ret;\n}\n";
    tric_module mod;
    tric_kernel k;
    CHECK(tric_module_load_ptx(dev, ptx, &mod) == TRIC_SUCCESS);
    CHECK(tric_module_get_kernel(mod, NULL, &k) == TRIC_SUCCESS);
    CHECK(tric_kernel_num_params(k) == 2); /* the grid and workspace are no run-time parameters */
    tric_buffer b;
    CHECK(tric_buffer_alloc(dev, 1 << 12, &b) == TRIC_SUCCESS);
    tric_arg args[2] = {TRIC_ARG_BUF(b), TRIC_ARG_I32(96)};
    int allocs = ms->live_allocs, launches = ms->launches;
    /* 100000 bytes of shared memory: two programs an SM (the mock's occupancy), 264 on its 132 */
    CHECK(tric_launch(k, (tric_dim3){600, 1, 1}, args, 2, NULL) == TRIC_SUCCESS);
    CHECK(ms->launches == launches + 1 && ms->grid[0] == 264 && ms->grid[1] == 1);
    CHECK(ms->live_allocs == allocs + 1); /* the stream's workspace */
    int32_t tiles;
    uint64_t ws, ws2;
    memcpy(&tiles, ms->params[2], 4);
    memcpy(&ws, ms->params[3], 8);
    CHECK(tiles == 600 && ws != 0);
    /* the flags (2 i32 a program, 256-byte aligned) then 4096 bytes a program, zeroed */
    size_t bytes = 2304 + 264 * 4096;
    unsigned char *zero = calloc(1, bytes);
    /* the mock's device memory is host memory */
    CHECK(ws && zero && !memcmp((void *)(uintptr_t)ws, zero, bytes));
    free(zero);
    /* fewer tiles than SMs: a program a tile; the same workspace */
    CHECK(tric_launch(k, (tric_dim3){10, 1, 1}, args, 2, NULL) == TRIC_SUCCESS);
    memcpy(&tiles, ms->params[2], 4);
    memcpy(&ws2, ms->params[3], 8);
    CHECK(ms->grid[0] == 10 && tiles == 10 && ws2 == ws && ms->live_allocs == allocs + 1);
    /* asked for a programmatic dependent launch: a plain one (the stream's workspace is shared
     * with the kernel before it, and no gdc_wait of the kernel's orders tric's use of it) */
    int ex = ms->ex_launches;
    launches = ms->launches;
    tric_launch_options pdl = {.programmatic_dependent = 1};
    CHECK(tric_launch_ex(k, (tric_dim3){10, 1, 1}, args, 2, NULL, &pdl) == TRIC_SUCCESS);
    CHECK(ms->launches == launches + 1 && ms->ex_launches == ex);
    /* another stream has its own */
    tric_stream s;
    CHECK(tric_stream_create(dev, &s) == TRIC_SUCCESS);
    CHECK(tric_launch(k, (tric_dim3){500, 1, 1}, args, 2, s) == TRIC_SUCCESS);
    memcpy(&ws2, ms->params[3], 8);
    CHECK(ms->grid[0] == 264 && ws2 != ws && ms->live_allocs == allocs + 2);
    tric_stream_destroy(s);
    CHECK(ms->live_allocs == allocs + 1);
    /* under graph capture: a stream that has its workspace launches; one that would allocate it
     * is refused (allocating would break the capture) */
    CHECK(tric_stream_create(dev, &s) == TRIC_SUCCESS);
    ms->capturing = 1;
    launches = ms->launches;
    CHECK(tric_launch(k, (tric_dim3){288, 1, 1}, args, 2, NULL) == TRIC_SUCCESS);
    CHECK(tric_launch(k, (tric_dim3){288, 1, 1}, args, 2, s) == TRIC_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(tric_last_error(), "allocating a persistent kernel's workspace") != NULL &&
          strstr(tric_last_error(), "captured into a CUDA graph") != NULL);
    CHECK(ms->launches == launches + 1);
    ms->capturing = 0;
    tric_stream_destroy(s);
    /* a 2-D grid: refused, nothing launched */
    launches = ms->launches;
    CHECK(tric_launch(k, (tric_dim3){4, 2, 1}, args, 2, NULL) == TRIC_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(tric_last_error(), "sk_probe is persistent, so its grid is one tile per program "
                                    "along x; got (4, 2, 1)") != NULL);
    CHECK(tric_launch(k, (tric_dim3){4, 1, 3}, args, 2, NULL) == TRIC_ERROR_INVALID_ARGUMENT);
    CHECK(ms->launches == launches);
    tric_buffer_free(b);
    tric_module_destroy(mod);
}

/* sk_probe taking `axes` grid axes (// tric.persistent workspace=4096 axes=A): its parameters
 * end with the grid's y, and its z for 3. */
static const char *persistent_axes_ptx(int axes, const char *workspace)
{
    static char buf[1024];
    const char *name = axes == 3 ? "sk_probe_xyz" : "sk_probe_xy";
    snprintf(buf, sizeof buf,
             "// tric.begin\n// tric.version 0.1.0\n// tric.kernel %s\n"
             "// tric.target sm_90a\n// tric.num_warps 4\n// tric.threads 128\n"
             "// tric.shared 100000\n// tric.params *fp32:16 i32\n// tric.param_names c_ptr M\n"
             "// tric.persistent workspace=%s axes=%d\n// tric.end\n"
             ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry %s(\n"
             " .param .u64 c, .param .u32 m,\n .param .u32 tile_count, .param .u64 workspace,\n"
             " .param .u32 tile_count_y%s\n)\n{\n ret;\n}\n",
             name, workspace, axes, name, axes == 3 ? ", .param .u32 tile_count_z" : "");
    return buf;
}

/* A persistent kernel made from a 2-D or 3-D grid (passes/persistent.c; docs/runtime.md
 * "Persistent kernels"): a launch runs min(x y z, SMs x blocks per SM) programs along x, the
 * grid's y and z becoming 1, and passes x, the workspace, then y (and z); an axis the kernel does
 * not take is refused, and so are more than INT32_MAX tiles, before any driver call. */
static void test_persistent_axes(tric_device dev, MockState *ms)
{
    tric_buffer b;
    CHECK(tric_buffer_alloc(dev, 1 << 12, &b) == TRIC_SUCCESS);
    tric_arg args[2] = {TRIC_ARG_BUF(b), TRIC_ARG_I32(96)};
    for (int axes = 2; axes <= 3; axes++) {
        tric_module mod;
        tric_kernel k;
        CHECK(tric_module_load_ptx(dev, persistent_axes_ptx(axes, "4096"), &mod) == TRIC_SUCCESS);
        CHECK(tric_module_get_kernel(mod, NULL, &k) == TRIC_SUCCESS);
        CHECK(tric_kernel_num_params(k) == 2);
        /* 10 x 12 (x 3) tiles, more than the 264 programs (two an SM on the mock's 132) for 3
         * axes, fewer for 2 */
        unsigned z = axes == 3 ? 3 : 1;
        int launches = ms->launches;
        CHECK(tric_launch(k, (tric_dim3){10, 12, z}, args, 2, NULL) == TRIC_SUCCESS);
        CHECK(ms->launches == launches + 1 && ms->nparams_seen == 4 + axes - 1);
        CHECK(ms->grid[0] == (axes == 3 ? 264 : 120) && ms->grid[1] == 1 && ms->grid[2] == 1);
        int32_t x, y, zz = 0;
        uint64_t ws;
        memcpy(&x, ms->params[2], 4);
        memcpy(&ws, ms->params[3], 8);
        memcpy(&y, ms->params[4], 4);
        if (axes == 3)
            memcpy(&zz, ms->params[5], 4);
        CHECK(x == 10 && ws != 0 && y == 12 && (axes == 2 || zz == 3));
        /* 2 axes: a grid z > 1 is refused */
        launches = ms->launches;
        if (axes == 2) {
            CHECK(tric_launch(k, (tric_dim3){10, 12, 2}, args, 2, NULL) ==
                  TRIC_ERROR_INVALID_ARGUMENT);
            CHECK(strstr(tric_last_error(), "sk_probe_xy is persistent, so its grid is one tile "
                                            "per program along x and y; got (10, 12, 2)") != NULL);
        }
        /* more tiles than an i32 counts */
        CHECK(tric_launch(k, (tric_dim3){65536, 32768, 1}, args, 2, NULL) ==
              TRIC_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(tric_last_error(), "has 2147483648 tiles; at most 2147483647") != NULL);
        CHECK(ms->launches == launches);
        /* just under: launched (65535 x 32768 tiles, as many as 65535 x 16384 x 2) */
        CHECK(tric_launch(k, (tric_dim3){65535, axes == 3 ? 16384 : 32768, axes == 3 ? 2 : 1}, args,
                          2, NULL) == TRIC_SUCCESS);
        CHECK(ms->launches == launches + 1);
        CHECK(ms->grid[0] == 264 && ms->grid[1] == 1 && ms->grid[2] == 1);
        tric_module_destroy(mod);
    }
    tric_buffer_free(b);
}

/* A persistent kernel that reads no workspace (`workspace=none`: a grid made persistent,
 * passes/persistent.c): its launch passes a null pointer and allocates nothing, so its first
 * launch on a fresh stream can be captured into a graph. */
static void test_persistent_no_workspace(tric_device dev, MockState *ms)
{
    tric_buffer b;
    CHECK(tric_buffer_alloc(dev, 1 << 12, &b) == TRIC_SUCCESS);
    tric_arg args[2] = {TRIC_ARG_BUF(b), TRIC_ARG_I32(96)};
    tric_module mod;
    tric_kernel k;
    tric_stream s;
    CHECK(tric_module_load_ptx(dev, persistent_axes_ptx(2, "none"), &mod) == TRIC_SUCCESS);
    CHECK(tric_module_get_kernel(mod, NULL, &k) == TRIC_SUCCESS);
    CHECK(tric_stream_create(dev, &s) == TRIC_SUCCESS);
    int allocs = ms->live_allocs, launches = ms->launches;
    ms->capturing = 1;
    CHECK(tric_launch(k, (tric_dim3){10, 30, 1}, args, 2, s) == TRIC_SUCCESS);
    ms->capturing = 0;
    CHECK(ms->launches == launches + 1 && ms->live_allocs == allocs);
    CHECK(ms->nparams_seen == 5 && ms->grid[0] == 264);
    int32_t x, y;
    uint64_t ws = 1;
    memcpy(&x, ms->params[2], 4);
    memcpy(&ws, ms->params[3], 8);
    memcpy(&y, ms->params[4], 4);
    CHECK(x == 10 && ws == 0 && y == 30);
    tric_stream_destroy(s);
    tric_module_destroy(mod);
    tric_buffer_free(b);
}

/* Seed 2 (fp16, GROUP_SIZE_M 8, the ideal signature) tuned over the n configs given from C. */
static tric_compile_options seed2_tuned_over(const tric_tune_config *configs, int n)
{
    static const char *defs[] = {"GROUP_SIZE_M=8", "T_C=tl.float16", "T_ACC=tl.float32"};
    tric_compile_options opt = tric_compile_options_default();
    opt.kernel = "kernel_matmul";
    opt.signature = "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,i32:16,i32:1,"
                    "i32:16,i32:1";
    opt.constexprs = defs;
    opt.nconstexprs = 3;
    opt.tune_configs = configs;
    opt.ntune_configs = n;
    return opt;
}

/* TRIC_STREAM_K_AUTO with the compiler's PTX: seed 2 tuned over one config given from C is two
 * configs, as written and with stream_k (persistent: a launch of it runs a multiple of the SMs'
 * programs, fewer than its tiles). */
static void test_stream_k_auto(tric_device dev, MockState *ms)
{
    static const char *cfg[] = {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=32"};
    tric_tune_config configs[] = {{cfg, 3, 4, 2}};
    tric_compile_options opt = seed2_tuned_over(configs, 1);
    opt.stream_k = TRIC_STREAM_K_AUTO;
    tric_module mod;
    tric_kernel k, plain, sk;
    if (tric_module_compile_file(dev, TRIC_SOURCE_DIR "/examples/matmul.tri", &opt, &mod) !=
            TRIC_SUCCESS ||
        tric_module_get_kernel(mod, "kernel_matmul", &k) != TRIC_SUCCESS) {
        CHECK(!"seed 2 compiles with stream_k auto");
        return;
    }
    CHECK(tric_kernel_num_configs(k) == 2);
    CHECK(tric_kernel_config(k, 0, &plain) == TRIC_SUCCESS &&
          tric_kernel_config(k, 1, &sk) == TRIC_SUCCESS &&
          strcmp(tric_kernel_config_text(sk), "BLOCK_SIZE_M=64, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32, "
                                              "num_warps=4, num_stages=2, stream_k") == 0);
    tric_buffer b;
    CHECK(tric_buffer_alloc(dev, 1 << 12, &b) == TRIC_SUCCESS);
    tric_arg args[12] = {TRIC_ARG_BUF(b), TRIC_ARG_BUF(b), TRIC_ARG_BUF(b)};
    for (int i = 3; i < 12; i++)
        args[i] = TRIC_ARG_I32(i == 7 || i == 9 || i == 11 ? 1 : 4096);
    CHECK(tric_launch(plain, (tric_dim3){4096, 1, 1}, args, 12, NULL) == TRIC_SUCCESS &&
          ms->grid[0] == 4096);
    CHECK(tric_launch(sk, (tric_dim3){4096, 1, 1}, args, 12, NULL) == TRIC_SUCCESS &&
          ms->grid[0] < 4096 && ms->grid[0] % 132 == 0);
    tric_buffer_free(b);
    tric_module_destroy(mod);
}

/* TRIC_DEEP_PIPELINE_AUTO with the compiler's PTX: seed 2 tuned over two configs given from C.
 * 128x64x64 on 4 stages has a deep twin (8 stages: num_stages raised, more shared memory, the
 * stage count in its metadata); 128x256x64 on 4 stages cannot grow (5 would need 240 KB), so its
 * twin is left out with the reason. */
static void test_deep_pipeline_auto(tric_device dev, MockState *ms)
{
    static const char *small[] = {"BLOCK_SIZE_M=128", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=64"};
    static const char *big[] = {"BLOCK_SIZE_M=128", "BLOCK_SIZE_N=256", "BLOCK_SIZE_K=64"};
    tric_tune_config configs[] = {{small, 3, 4, 4}, {big, 3, 8, 4}};
    tric_compile_options opt = seed2_tuned_over(configs, 2);
    opt.deep_pipeline = TRIC_DEEP_PIPELINE_AUTO;
    tric_module mod;
    tric_kernel k, plain, deep, none;
    if (tric_module_compile_file(dev, TRIC_SOURCE_DIR "/examples/matmul.tri", &opt, &mod) !=
            TRIC_SUCCESS ||
        tric_module_get_kernel(mod, "kernel_matmul", &k) != TRIC_SUCCESS) {
        CHECK(!"seed 2 compiles with deep_pipeline auto");
        return;
    }
    CHECK(tric_kernel_num_configs(k) == 4);
    CHECK(tric_kernel_config(k, 0, &plain) == TRIC_SUCCESS &&
          tric_kernel_config(k, 2, &deep) == TRIC_SUCCESS &&
          strcmp(tric_kernel_config_text(deep), "BLOCK_SIZE_M=128, BLOCK_SIZE_N=64, "
                                                "BLOCK_SIZE_K=64, num_warps=4, num_stages=4, "
                                                "deep_pipeline") == 0 &&
          plain->stages_raised_from == 0 && deep->stages_raised_from == 4 &&
          deep->shared_bytes > plain->shared_bytes &&
          strstr(tric_module_code(deep->module), "// tric.num_stages 8 raised_from=4\n"));
    CHECK(tric_kernel_config(k, 3, &none) == TRIC_ERROR_COMPILE &&
          strstr(tric_last_error(), "config 3 (BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, "
                                    "BLOCK_SIZE_K=64, num_warps=8, num_stages=4, deep_pipeline) "
                                    "was left out: deep_pipeline left it as written, as config 1"));
    tric_module_destroy(mod);

    /* Without the signature's hints the config as compiled pipelines nothing (no alignment
     * known), so its deep twin is kept and each launch's variant decides: 16-aligned sizes
     * deepen it, an odd K (no copy of 4 bytes or more proven) does not. */
    opt.signature = "*fp16,*fp16,*fp16,i32,i32,i32,i32,i32,i32,i32,i32,i32";
    opt.ntune_configs = 1;
    if (tric_module_compile_file(dev, TRIC_SOURCE_DIR "/examples/matmul.tri", &opt, &mod) !=
            TRIC_SUCCESS ||
        tric_module_get_kernel(mod, "kernel_matmul", &k) != TRIC_SUCCESS) {
        CHECK(!"seed 2 without hints compiles with deep_pipeline auto");
        return;
    }
    CHECK(tric_kernel_num_configs(k) == 2 && tric_kernel_config(k, 1, &deep) == TRIC_SUCCESS &&
          deep->stages_raised_from == 0);
    tric_buffer b;
    CHECK(tric_buffer_alloc(dev, 1 << 20, &b) == TRIC_SUCCESS);
    /* The twin is timed only where the launch runs at most one program an SM (the mock has
     * 132): the tuning of a 4-program launch makes more trial launches than a 200-program one
     * (a fresh cache directory: no tuning read back). */
    char tmp[] = "/tmp/tric-mock-deep-XXXXXX";
    bool own = own_cache_dir(tmp);
    int trial_launches[2] = {0, 0};
    for (int form = 0; form < 3; form++) {
        int n = form == 1 ? 255 : form == 2 ? 512 : 256;
        unsigned programs = form == 2 ? 200 : 4;
        tric_arg args[12] = {TRIC_ARG_BUF(b), TRIC_ARG_BUF(b), TRIC_ARG_BUF(b), TRIC_ARG_I32(n),
                             TRIC_ARG_I32(n), TRIC_ARG_I32(n), TRIC_ARG_I32(n), TRIC_ARG_I32(1),
                             TRIC_ARG_I32(n), TRIC_ARG_I32(1), TRIC_ARG_I32(n), TRIC_ARG_I32(1)};
        int before = ms->launches;
        CHECK(tric_launch(k, (tric_dim3){programs, 1, 1}, args, 12, NULL) == TRIC_SUCCESS);
        CHECK(rt_launch_variant(deep, args)->stages_raised_from == (form == 1 ? 0 : 4));
        if (form != 1)
            trial_launches[form / 2] = ms->launches - before;
    }
    CHECK(trial_launches[0] > trial_launches[1] && trial_launches[1] > 1);
    tric_buffer_free(b);
    tric_module_destroy(mod);
    if (own)
        drop_cache_dir(tmp);
}

/* Whether kernel k ran with threads threads along x (its shared memory) over programs programs
 * since ms->nshapes was cleared. */
static bool launched_shape(const MockState *ms, tric_kernel k, unsigned threads, unsigned programs)
{
    for (int i = 0; i < ms->nshapes; i++)
        if (ms->shapes[i][0] == threads && ms->shapes[i][1] == (unsigned)k->shared_bytes &&
            ms->shapes[i][2] == programs)
            return true;
    return false;
}

/* TRIC_STREAM_K_AUTO and TRIC_DEEP_PIPELINE_AUTO together: each config as written, with stream_k,
 * deep, and with both (stream_k made deep, the stream_k twin its base). A launch of more programs
 * than SMs times a deep twin only where the config it deepens already held one program an SM:
 * 128x256x64 on 3 stages (144 KB), deep and stream_k-deep, 4 stages; not 128x64x64 on 4 stages
 * (96 KB, two programs an SM), whose deep twins take 8 stages and one program. */
static void test_stream_k_deep_auto(tric_device dev, MockState *ms)
{
    static const char *small[] = {"BLOCK_SIZE_M=128", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=64"};
    static const char *big[] = {"BLOCK_SIZE_M=128", "BLOCK_SIZE_N=256", "BLOCK_SIZE_K=64"};
    tric_tune_config configs[] = {{small, 3, 4, 4}, {big, 3, 8, 3}};
    tric_compile_options opt = seed2_tuned_over(configs, 2);
    opt.stream_k = TRIC_STREAM_K_AUTO;
    opt.deep_pipeline = TRIC_DEEP_PIPELINE_AUTO;
    tric_module mod;
    tric_kernel k, c[8];
    if (tric_module_compile_file(dev, TRIC_SOURCE_DIR "/examples/matmul.tri", &opt, &mod) !=
            TRIC_SUCCESS ||
        tric_module_get_kernel(mod, "kernel_matmul", &k) != TRIC_SUCCESS) {
        CHECK(!"seed 2 compiles with stream_k and deep_pipeline auto");
        return;
    }
    CHECK(tric_kernel_num_configs(k) == 8);
    for (int i = 0; i < 8; i++)
        if (tric_kernel_config(k, i, &c[i]) != TRIC_SUCCESS) {
            CHECK(!"every config and twin compiles");
            tric_module_destroy(mod);
            return;
        }
    CHECK(strcmp(tric_kernel_config_text(c[7]), "BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, "
                                                "BLOCK_SIZE_K=64, num_warps=8, num_stages=3, "
                                                "stream_k, deep_pipeline") == 0 &&
          c[7]->persistent && c[7]->stages_raised_from == 3 && c[3]->persistent &&
          c[3]->stages_raised_from == 0 && !c[5]->persistent && c[5]->stages_raised_from == 3 &&
          c[6]->persistent && c[6]->stages_raised_from == 4);
    tric_buffer b;
    CHECK(tric_buffer_alloc(dev, 1 << 20, &b) == TRIC_SUCCESS);
    char tmp[] = "/tmp/tric-mock-skdeep-XXXXXX";
    bool own = own_cache_dir(tmp);
    int n = 4096;
    tric_arg args[12] = {TRIC_ARG_BUF(b), TRIC_ARG_BUF(b), TRIC_ARG_BUF(b), TRIC_ARG_I32(n),
                         TRIC_ARG_I32(n), TRIC_ARG_I32(n), TRIC_ARG_I32(n), TRIC_ARG_I32(1),
                         TRIC_ARG_I32(n), TRIC_ARG_I32(1), TRIC_ARG_I32(n), TRIC_ARG_I32(1)};
    ms->nshapes = 0;
    CHECK(tric_launch(k, (tric_dim3){200, 1, 1}, args, 12, NULL) == TRIC_SUCCESS);
    /* stream_k's launches: one program an SM (the mock's 132) for 128x256 and its deep twin */
    CHECK(launched_shape(ms, c[0], 128, 200) && launched_shape(ms, c[1], 256, 200) &&
          launched_shape(ms, c[3], 256, 132) && launched_shape(ms, c[5], 256, 200) &&
          launched_shape(ms, c[7], 256, 132) && !launched_shape(ms, c[4], 128, 200) &&
          !launched_shape(ms, c[6], 128, 132));
    tric_buffer_free(b);
    tric_module_destroy(mod);
    if (own)
        drop_cache_dir(tmp);
}

static void test_cache_and_vector_add(tric_device dev, const char *va)
{
    char tmp[] = "/tmp/tric-mock-cache-XXXXXX";
    if (!own_cache_dir(tmp))
        return;
    tric_module m1, m2, m3;
    tric_kernel k;
    CHECK(ex_compile_vector_add(dev, va, &m1, &k) == TRIC_SUCCESS);
    CHECK(!m1->from_cache);
    CHECK(strstr(tric_module_code(m1), ".target sm_90a") != NULL);
    CHECK(ex_compile_vector_add(dev, va, &m2, &k) == TRIC_SUCCESS);
    CHECK(m2->from_cache);
    CHECK(strcmp(tric_module_code(m1), tric_module_code(m2)) == 0);
    /* The PTX as a file, the way `tric --emit=ptx -o` writes it, loads with its metadata. */
    char ptx_path[300];
    snprintf(ptx_path, sizeof ptx_path, "%s/vector_add.ptx", tmp);
    FILE *f = fopen(ptx_path, "w");
    if (f) {
        fputs(tric_module_code(m1), f);
        fclose(f);
    }
    tric_module from_file;
    tric_kernel kf;
    CHECK(tric_module_load_file(dev, ptx_path, &from_file) == TRIC_SUCCESS);
    CHECK(tric_module_get_kernel(from_file, "vector_add_kernel", &kf) == TRIC_SUCCESS);
    CHECK(tric_kernel_num_params(kf) == 4 && tric_kernel_threads(kf) == 128);
    CHECK(strcmp(tric_kernel_param_type(kf, 2), "*fp32") == 0);
    tric_module_destroy(from_file);
    remove(ptx_path);
    /* Damage the entry: the next compile misses, recompiles, and rewrites it. */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "for f in %s/*.ptx; do printf 'junk' >> \"$f\"; done", tmp);
    CHECK(system(cmd) == 0);
    CHECK(ex_compile_vector_add(dev, va, &m3, &k) == TRIC_SUCCESS);
    CHECK(!m3->from_cache);
    tric_module_destroy(m3);
    CHECK(ex_compile_vector_add(dev, va, &m3, &k) == TRIC_SUCCESS);
    CHECK(m3->from_cache);
    tric_module_destroy(m3);
    /* Truncated (a crash mid-write of a cache that was not written atomically, a full disk):
     * detected by the sizes in the header, recompiled, rewritten. */
    snprintf(cmd, sizeof cmd, "for f in %s/*.ptx; do truncate -s -100 \"$f\"; done", tmp);
    CHECK(system(cmd) == 0);
    CHECK(ex_compile_vector_add(dev, va, &m3, &k) == TRIC_SUCCESS);
    CHECK(!m3->from_cache);
    tric_module_destroy(m3);
    CHECK(ex_compile_vector_add(dev, va, &m3, &k) == TRIC_SUCCESS);
    CHECK(m3->from_cache);
    tric_module_destroy(m3);
    /* Another libdevice is another key: a miss. */
    char libdevice[300];
    snprintf(libdevice, sizeof libdevice, "%s/libdevice.10.bc", tmp);
    f = fopen(libdevice, "w");
    if (f) {
        fputs("not really bitcode", f);
        fclose(f);
    }
    setenv("TRIC_LIBDEVICE", libdevice, 1);
    CHECK(ex_compile_vector_add(dev, va, &m3, &k) == TRIC_SUCCESS); /* no math: never linked */
    CHECK(!m3->from_cache);
    unsetenv("TRIC_LIBDEVICE");
    tric_module_destroy(m1);
    tric_module_destroy(m2);
    tric_module_destroy(m3);
    /* no_cache bypasses it. */
    unsetenv("TRIC_CACHE_DIR");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "note: could not remove %s\n", tmp);

    /* The mock computes vector_add from the packed parameters. */
    static const int sizes[] = {1, 1000, 98437};
    for (int i = 0; i < 3; i++)
        CHECK(ex_vector_add(dev, va, sizes[i], (uint64_t)i + 9) == 0);
}

static void test_errors(tric_device dev, const char *va, MockState *ms)
{
    tric_module mod = NULL;
    const char *bad =
        "// tric.begin\n// tric.kernel broken\n// tric.threads 128\n"
        "// tric.params *fp32\n// tric.end\n.visible .entry broken() { this is not ptx }\n";
    CHECK(tric_module_load_ptx(dev, bad, &mod) == TRIC_ERROR_DRIVER);
    CHECK(mod == NULL);
    CHECK(strstr(tric_last_error(), "cuModuleLoadDataEx failed for kernel broken") != NULL);
    CHECK(strstr(tric_last_error(), "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)") !=
          NULL);
    CHECK(strstr(tric_last_error(),
                 "\nptxas application ptx input, line 12; error: mock syntax error") != NULL);
    CHECK(tric_module_load_ptx(dev, ".version 8.0\n", &mod) == TRIC_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(tric_last_error(), "no tric metadata block") != NULL);
    CHECK(tric_module_load_file(dev, "/nonexistent.ptx", &mod) == TRIC_ERROR_NOT_FOUND);

    tric_kernel k;
    CHECK(ex_compile_vector_add(dev, va, &mod, &k) == TRIC_SUCCESS);
    tric_buffer b;
    CHECK(tric_buffer_alloc(dev, 4096, &b) == TRIC_SUCCESS);
    tric_arg args[4] = {TRIC_ARG_BUF(b), TRIC_ARG_BUF(b), TRIC_ARG_BUF(b), TRIC_ARG_I32(1024)};
    /* The launch path keeps the context: no cuCtxSetCurrent per launch. */
    int before = ms->ctx_set_current_calls;
    for (int i = 0; i < 100; i++)
        CHECK(tric_launch(k, (tric_dim3){1, 1, 1}, args, 4, NULL) == TRIC_SUCCESS);
    CHECK(ms->ctx_set_current_calls == before);

    tric_stream s;
    CHECK(tric_stream_create(dev, &s) == TRIC_SUCCESS);
    CHECK(tric_launch(k, (tric_dim3){1, 1, 1}, args, 4, s) == TRIC_SUCCESS);
    CHECK(tric_stream_synchronize(s) == TRIC_SUCCESS);
    tric_stream_destroy(s);

    args[1] = TRIC_ARG_ADDR(0x10);
    CHECK(tric_launch(k, (tric_dim3){1, 1, 1}, args, 4, NULL) == TRIC_SUCCESS); /* asynchronous */
    CHECK(tric_device_synchronize(dev) == TRIC_ERROR_LAUNCH);
    const char *msg = tric_last_error();
    CHECK(strstr(msg, "cuCtxSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory "
                      "access was encountered); this error is sticky") != NULL);
    CHECK(tric_copy_to_host(&before, b, 0, 4, NULL) == TRIC_ERROR_LAUNCH); /* and it stays */
    tric_buffer_free(b);
    tric_module_destroy(mod);
}

/* Launch specialization on cuda: a vector_add compiled with open parameters compiles, at its
 * first launch with n = 1024, the variant "*fp32:16,*fp32:16,*fp32:16,i32:16" -- the very PTX
 * the ideal signature gives -- through the disk cache, so a second module (a second process) finds
 * it there; the launch runs the variant and computes the sums. */
/* vector_add's buffers of `bytes` each: x and y filled from hx and hy, o left as allocated. */
static void va_buffers(tric_device dev, const float *hx, const float *hy, size_t bytes,
                       tric_buffer *x, tric_buffer *y, tric_buffer *o)
{
    CHECK(tric_buffer_alloc(dev, bytes, x) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, bytes, y) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, bytes, o) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(*x, 0, hx, bytes, NULL) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(*y, 0, hy, bytes, NULL) == TRIC_SUCCESS);
}

static void test_specialization(tric_device dev, const char *va)
{
    char tmp[] = "/tmp/tric-mock-spec-XXXXXX";
    if (!own_cache_dir(tmp))
        return;
    static const char *defs[] = {"BLOCK_SIZE=1024"};
    tric_compile_options opt = tric_compile_options_default();
    opt.constexprs = defs;
    opt.nconstexprs = 1;
    opt.signature = "*fp32,*fp32,*fp32,i32";
    tric_module open1, open2, ideal;
    tric_kernel k1, k2, ki;
    CHECK(tric_module_compile_file(dev, va, &opt, &open1) == TRIC_SUCCESS &&
          tric_module_get_kernel(open1, NULL, &k1) == TRIC_SUCCESS);
    CHECK(tric_module_compile_file(dev, va, &opt, &open2) == TRIC_SUCCESS &&
          tric_module_get_kernel(open2, NULL, &k2) == TRIC_SUCCESS);
    opt.signature = "*fp32:16,*fp32:16,*fp32:16,i32:16";
    opt.no_cache = 1;
    CHECK(tric_module_compile_file(dev, va, &opt, &ideal) == TRIC_SUCCESS &&
          tric_module_get_kernel(ideal, NULL, &ki) == TRIC_SUCCESS);
    enum { N = 1024 };
    static float hx[N], hy[N], ho[N];
    for (int i = 0; i < N; i++)
        hx[i] = (float)i, hy[i] = 2.0f;
    tric_buffer x, y, o;
    va_buffers(dev, hx, hy, sizeof hx, &x, &y, &o);
    tric_arg args[] = {TRIC_ARG_BUF(x), TRIC_ARG_BUF(y), TRIC_ARG_BUF(o), TRIC_ARG_I32(N)};
    CHECK(tric_launch(k1, (tric_dim3){1, 1, 1}, args, 4, NULL) == TRIC_SUCCESS);
    CHECK(tric_device_synchronize(dev) == TRIC_SUCCESS);
    CHECK(tric_copy_to_host(ho, o, 0, sizeof ho, NULL) == TRIC_SUCCESS);
    for (int i = 0; i < N; i++)
        CHECK(ho[i] == (float)i + 2.0f);
    const char *sig = NULL, *code = NULL;
    CHECK(tric_kernel_num_variants(k1) == 1);
    CHECK(tric_kernel_variant(k1, 0, &sig, &code) == TRIC_SUCCESS && sig && code);
    CHECK(sig && strcmp(sig, "*fp32:16,*fp32:16,*fp32:16,i32:16") == 0);
    CHECK(code && strcmp(code, tric_module_code(ideal)) == 0);
    CHECK(open1->nvariants == 1 && open1->variants[0].module &&
          !open1->variants[0].module->from_cache);
    CHECK(tric_launch(k2, (tric_dim3){1, 1, 1}, args, 4, NULL) == TRIC_SUCCESS);
    CHECK(open2->nvariants == 1 && open2->variants[0].module &&
          open2->variants[0].module->from_cache);
    tric_buffer_free(x);
    tric_buffer_free(y);
    tric_buffer_free(o);
    tric_module_destroy(open1);
    tric_module_destroy(open2);
    tric_module_destroy(ideal);
    drop_cache_dir(tmp);
}

/* Autotuning on the cuda device: configs given from C (the mock times a launch as threads / 128
 * ms, so the 2-warp config wins), the grid from the config, restore_value honoured by a tuning
 * without a launch, later launches without timing, a second process's module finding the tuning
 * on disk, and a PTX written by the compiler with a kernel per config loaded as one tuned kernel. */
static tric_dim3 va_grid(tric_kernel config, const tric_arg *args, int nargs, void *user)
{
    (void)nargs;
    int64_t block = 0;
    *(int *)user += tric_kernel_constexpr(config, "BLOCK_SIZE", &block) == TRIC_SUCCESS;
    return (tric_dim3){(unsigned)((args[3].v.i32 + block - 1) / (block ? block : 1)), 1, 1};
}

/* A config whose num_stages overflows shared memory is compiled with fewer stages (the generic
 * kernel of a module compiled with its parameters open), and so is its variant for a launch's
 * arguments: seed 2's 128x256x128 on 8 warps asks 3 stages of fp16 (288 KB), and both get 2.
 * The variant used to be compiled without that fitting, failed, and left every launch on the
 * generic kernel (no tensor maps; 12x the time on an H200). */
static void test_config_variant_fits_stages(tric_device dev, MockState *ms)
{
    (void)ms;
    char tmp[] = "/tmp/tric-mock-fit-XXXXXX";
    if (!own_cache_dir(tmp))
        return;
    static const char *blocks[] = {"BLOCK_SIZE_M=128", "BLOCK_SIZE_N=256", "BLOCK_SIZE_K=128"};
    static const char *defs[] = {"GROUP_SIZE_M=8", "T_C=tl.float16", "T_ACC=tl.float32"};
    tric_tune_config configs[] = {{blocks, 3, 8, 3}};
    tric_compile_options opt = tric_compile_options_default();
    opt.kernel = "kernel_matmul";
    opt.signature = "*fp16,*fp16,*fp16,i32,i32,i32,i32,i32,i32,i32,i32,i32"; /* hints open */
    opt.constexprs = defs;
    opt.nconstexprs = 3;
    opt.tune_configs = configs;
    opt.ntune_configs = 1;
    tric_module mod;
    tric_kernel k, config;
    if (tric_module_compile_file(dev, TRIC_SOURCE_DIR "/examples/matmul.tri", &opt, &mod) !=
            TRIC_SUCCESS ||
        tric_module_get_kernel(mod, "kernel_matmul", &k) != TRIC_SUCCESS ||
        tric_kernel_config(k, 0, &config) != TRIC_SUCCESS) {
        CHECK(!"seed 2 compiles tuned over 128x256x128");
        return;
    }
    enum { S = 256 };
    tric_buffer a, b, c;
    CHECK(tric_buffer_alloc(dev, S * S * 2, &a) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, S * S * 2, &b) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, S * S * 2, &c) == TRIC_SUCCESS);
    tric_arg args[] = {TRIC_ARG_BUF(a), TRIC_ARG_BUF(b), TRIC_ARG_BUF(c), TRIC_ARG_I32(S),
                       TRIC_ARG_I32(S), TRIC_ARG_I32(S), TRIC_ARG_I32(S), TRIC_ARG_I32(1),
                       TRIC_ARG_I32(S), TRIC_ARG_I32(1), TRIC_ARG_I32(S), TRIC_ARG_I32(1)};
    CHECK(tric_launch(k, (tric_dim3){2, 1, 1}, args, 12, NULL) == TRIC_SUCCESS);
    const char *sig = NULL, *code = NULL;
    CHECK(tric_kernel_num_variants(config) == 1);
    CHECK(tric_kernel_variant(config, 0, &sig, &code) == TRIC_SUCCESS && sig && code);
    CHECK(sig && strcmp(sig, "*fp16:16,*fp16:16,*fp16:16,i32:16,i32:16,i32:16,i32:16,i32:1,"
                             "i32:16,i32:1,i32:16,i32:1") == 0);
    CHECK(code && strstr(code, "// tric.num_stages 2 lowered_from=3") &&
          strstr(code, "cp.async.bulk.tensor"));
    tric_buffer_free(a);
    tric_buffer_free(b);
    tric_buffer_free(c);
    tric_module_destroy(mod);
    drop_cache_dir(tmp);
}

/* The warning handler's last message, for test_variant_failure_warns. */
static char variant_warning[4096];

static void keep_warning(const char *message, void *user)
{
    (void)user;
    snprintf(variant_warning, sizeof variant_warning, "%s", message);
}

/* A launch whose variant does not compile runs the generic kernel, and says so once through the
 * warning handler: here the variant links libdevice (erf) from TRIC_LIBDEVICE, a file that is not
 * bitcode. That used to exit the process (LLVM's default diagnostic handler); now the compile
 * fails with the reason. */
static void test_variant_failure_warns(tric_device dev, MockState *ms)
{
    char tmp[] = "/tmp/tric-mock-warn-XXXXXX";
    if (!own_cache_dir(tmp))
        return;
    static const char source[] =
        "import triton\n"
        "import triton.language as tl\n"
        "@triton.jit\n"
        "def erf_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    mask = offs < n\n"
        "    tl.store(y_ptr + offs, tl.math.erf(tl.load(x_ptr + offs, mask=mask)), mask=mask)\n";
    static const char *defs[] = {"BLOCK=128"};
    tric_compile_options opt = tric_compile_options_default();
    opt.signature = "*fp32,*fp32,i32";
    opt.constexprs = defs;
    opt.nconstexprs = 1;
    tric_module mod;
    tric_kernel k;
    if (tric_module_compile(dev, source, "erf.tri", &opt, &mod) != TRIC_SUCCESS ||
        tric_module_get_kernel(mod, NULL, &k) != TRIC_SUCCESS) {
        CHECK(!"erf_kernel compiles with the toolkit's libdevice");
        drop_cache_dir(tmp);
        return;
    }
    char bogus[64];
    snprintf(bogus, sizeof bogus, "%s/libdevice.10.bc", tmp);
    FILE *f = fopen(bogus, "w");
    if (f) {
        fputs("not really bitcode", f);
        fclose(f);
    }
    setenv("TRIC_LIBDEVICE", bogus, 1);
    tric_set_warning_handler(keep_warning, NULL);
    variant_warning[0] = 0;
    tric_buffer x, y;
    CHECK(tric_buffer_alloc(dev, 4096, &x) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, 4096, &y) == TRIC_SUCCESS);
    tric_arg args[] = {TRIC_ARG_BUF(x), TRIC_ARG_BUF(y), TRIC_ARG_I32(1024)};
    int launches = ms->launches;
    CHECK(tric_launch(k, (tric_dim3){8, 1, 1}, args, 3, NULL) == TRIC_SUCCESS);
    CHECK(ms->launches == launches + 1); /* the generic kernel ran */
    CHECK(strstr(variant_warning, "tric: kernel erf_kernel: its variant for arguments "
                                  "*fp32:16,*fp32:16,i32:16 did not compile, so those launches "
                                  "run the generic kernel: ") &&
          strstr(variant_warning, "libdevice.10.bc is not valid LLVM bitcode"));
    const char *sig = NULL, *code = NULL;
    CHECK(tric_kernel_variant(k, 0, &sig, &code) == TRIC_ERROR_COMPILE && !code);
    /* Once: the next launch with those hints finds the failed variant and says nothing. */
    variant_warning[0] = 0;
    CHECK(tric_launch(k, (tric_dim3){8, 1, 1}, args, 3, NULL) == TRIC_SUCCESS);
    CHECK(variant_warning[0] == 0);
    tric_set_warning_handler(NULL, NULL);
    unsetenv("TRIC_LIBDEVICE");
    tric_buffer_free(x);
    tric_buffer_free(y);
    tric_module_destroy(mod);
    drop_cache_dir(tmp);
}

/* A config whose first launch carries host work only it pays (a persistent kernel's workspace
 * allocated, its tensor maps encoded) looks far slower on that launch: the tuner times it again
 * before taking one run as enough. Config 0 (8 warps) measures 2 ms a launch in the mock, config
 * 1 (2 warps) 0.5 ms, each first launch 10 ms more: config 1 is chosen. TRIC_PRINT_AUTOTUNING
 * prints each config's time and the choice on stderr. */
static void test_autotune_first_launch(tric_device dev, const char *va, MockState *ms)
{
    char tmp[] = "/tmp/tric-mock-first-XXXXXX";
    if (!own_cache_dir(tmp))
        return;
    static const char *c1024[] = {"BLOCK_SIZE=1024"};
    tric_tune_config configs[] = {{c1024, 1, 8, 0}, {c1024, 1, 2, 0}};
    tric_compile_options opt = tric_compile_options_default();
    opt.signature = "*fp32,*fp32,*fp32,i32";
    opt.tune_configs = configs;
    opt.ntune_configs = 2;
    tric_module mod;
    tric_kernel k;
    tric_buffer b;
    CHECK(tric_buffer_alloc(dev, 4096 * sizeof(float), &b) == TRIC_SUCCESS);
    if (tric_module_compile_file(dev, va, &opt, &mod) != TRIC_SUCCESS ||
        tric_module_get_kernel(mod, "vector_add_kernel", &k) != TRIC_SUCCESS) {
        CHECK(!"vector_add compiles tuned over two configs");
        return;
    }
    tric_arg args[] = {TRIC_ARG_BUF(b), TRIC_ARG_BUF(b), TRIC_ARG_BUF(b), TRIC_ARG_I32(4096)};
    char log[] = "/tmp/tric-mock-print-XXXXXX";
    int fd = mkstemp(log), saved = dup(2);
    CHECK(fd >= 0 && saved >= 0 && dup2(fd, 2) == 2);
    setenv("TRIC_PRINT_AUTOTUNING", "1", 1);
    ms->first_launch_extra_ms = 10.0f;
    int chosen = -1;
    CHECK(tric_kernel_tune(k, NULL, NULL, args, 4, NULL, &chosen) == TRIC_SUCCESS);
    ms->first_launch_extra_ms = 0.0f;
    unsetenv("TRIC_PRINT_AUTOTUNING");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    CHECK(chosen == 1);
    char text[2048] = {0};
    FILE *f = fopen(log, "r");
    CHECK(f && fread(text, 1, sizeof text - 1, f) > 0);
    if (f)
        fclose(f);
    close(fd);
    unlink(log);
    CHECK(strstr(text, "tric autotune vector_add_kernel: config 0 (BLOCK_SIZE=1024, num_warps=8): "
                       "2.0000 ms\n") &&
          strstr(text, "tric autotune vector_add_kernel: chose config 1 (BLOCK_SIZE=1024, "
                       "num_warps=2): 0.5000 ms\n"));
    tric_buffer_free(b);
    tric_module_destroy(mod);
    drop_cache_dir(tmp);
}

static void test_autotune(tric_device dev, const char *va, MockState *ms)
{
    char tmp[] = "/tmp/tric-mock-tune-XXXXXX";
    if (!own_cache_dir(tmp))
        return;
    static const char *c1024[] = {"BLOCK_SIZE=1024"};
    tric_tune_config configs[] = {{c1024, 1, 4, 0}, {c1024, 1, 2, 0}, {c1024, 1, 8, 0}};
    static const char *restore[] = {"output_ptr"};
    tric_compile_options opt = ex_vector_add_tuned_options(configs, 3);
    opt.tune_restore = restore;
    opt.ntune_restore = 1;
    tric_module mod, again;
    tric_kernel k, k2, c;
    CHECK(tric_module_compile_file(dev, va, &opt, &mod) == TRIC_SUCCESS &&
          tric_module_get_kernel(mod, "vector_add_kernel", &k) == TRIC_SUCCESS);
    CHECK(tric_kernel_num_configs(k) == 3);
    CHECK(tric_kernel_config(k, 1, &c) == TRIC_SUCCESS &&
          strcmp(tric_kernel_config_text(c), "BLOCK_SIZE=1024, num_warps=2") == 0 &&
          tric_kernel_threads(c) == 64);
    enum { N = 3000 };
    static float hx[N], hy[N], ho[N];
    for (int i = 0; i < N; i++)
        hx[i] = (float)i, hy[i] = 1.0f, ho[i] = 7.0f;
    tric_buffer x, y, o;
    va_buffers(dev, hx, hy, sizeof hx, &x, &y, &o);
    CHECK(tric_copy_to_device(o, 0, ho, sizeof ho, NULL) == TRIC_SUCCESS);
    tric_arg args[] = {TRIC_ARG_BUF(x), TRIC_ARG_BUF(y), TRIC_ARG_BUF(o), TRIC_ARG_I32(N)};
    int grids = 0, chosen = -1, before = ms->launches;
    /* An empty problem (n = 0: the grid function gives 0 programs): nothing runs, nothing is
     * tuned. */
    args[3] = TRIC_ARG_I32(0);
    CHECK(tric_launch_grid(k, va_grid, &grids, args, 4, NULL) == TRIC_SUCCESS);
    CHECK(tric_launch(k, (tric_dim3){0, 1, 1}, args, 4, NULL) == TRIC_SUCCESS);
    CHECK(ms->launches == before);
    args[3] = TRIC_ARG_I32(N);
    grids = 0;
    /* Tuning alone: every config timed, the output restored. */
    CHECK(tric_kernel_tune(k, va_grid, &grids, args, 4, NULL, &chosen) == TRIC_SUCCESS);
    CHECK(chosen == 1);
    CHECK(ms->launches - before >= 3 * 3); /* each config: untimed, estimate, at least one rep */
    CHECK(grids >= 3);
    CHECK(tric_copy_to_host(ho, o, 0, sizeof ho, NULL) == TRIC_SUCCESS);
    CHECK(ho[0] == 7.0f && ho[N - 1] == 7.0f);
    /* Launches: straight to the winner, with its grid. */
    before = ms->launches;
    CHECK(tric_launch_grid(k, va_grid, &grids, args, 4, NULL) == TRIC_SUCCESS);
    CHECK(ms->launches - before == 1 && ms->block[0] == 64 && ms->grid[0] == 3);
    CHECK(tric_copy_to_host(ho, o, 0, sizeof ho, NULL) == TRIC_SUCCESS);
    for (int i = 0; i < N; i++)
        CHECK(ho[i] == (float)i + 1.0f);
    /* A new key value tunes again; a fixed grid is used as given. */
    args[3] = TRIC_ARG_I32(1000);
    before = ms->launches;
    CHECK(tric_launch(k, (tric_dim3){1, 1, 1}, args, 4, NULL) == TRIC_SUCCESS);
    CHECK(ms->launches - before > 1 && ms->block[0] == 64);
    /* Another module of the same source and options (a second process): the tuning from disk. */
    args[3] = TRIC_ARG_I32(N);
    CHECK(tric_module_compile_file(dev, va, &opt, &again) == TRIC_SUCCESS &&
          tric_module_get_kernel(again, NULL, &k2) == TRIC_SUCCESS);
    before = ms->launches;
    CHECK(tric_launch_grid(k2, va_grid, &grids, args, 4, NULL) == TRIC_SUCCESS);
    CHECK(ms->launches - before == 1 && ms->block[0] == 64);
    tric_module_destroy(again);
    /* restore_value needs a buffer, not an address. */
    args[2] = TRIC_ARG_ADDR(tric_buffer_address(o));
    args[3] = TRIC_ARG_I32(2000);
    CHECK(tric_launch_grid(k, va_grid, &grids, args, 4, NULL) != TRIC_SUCCESS);
    CHECK(strstr(tric_last_error(), "restore_value") != NULL);
    args[2] = TRIC_ARG_BUF(o);
    tric_module_destroy(mod);

    /* The compiler's PTX with a kernel per config, loaded: one tuned kernel and its configs. */
    static const char src[] =
        "import triton\nimport triton.language as tl\n"
        "@triton.autotune(configs=[triton.Config({'BLOCK_SIZE': 1024}, num_warps=8),\n"
        "                          triton.Config({'BLOCK_SIZE': 1024}, num_warps=2)],\n"
        "                 key=['n_elements'], restore_value=['output_ptr'])\n"
        "@triton.jit\n"
        "def vector_add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):\n"
        "    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)\n"
        "    mask = offsets < n_elements\n"
        "    x = tl.load(x_ptr + offsets, mask=mask)\n"
        "    tl.store(output_ptr + offsets, x + tl.load(y_ptr + offsets, mask=mask), mask=mask)\n";
    SrcFile file = {"tuned.tri", src, sizeof src - 1};
    CompileOptions copt = {.emit = EMIT_PTX,
                           .arch = "sm_90a",
                           .opt_level = 3,
                           .spec = {.signature = "*fp32:16,*fp32:16,*fp32:16,i32"}};
    CompileResult res;
    Diag d = {0};
    bool ok = driver_compile(&file, &copt, &res, &d);
    CHECK(ok);
    if (!ok)
        printf("%s\n", d.text.data ? d.text.data : "");
    diag_free(&d);
    tric_module pm;
    tric_kernel tk, c0;
    if (ok && tric_module_load_ptx(dev, res.output.data, &pm) == TRIC_SUCCESS) {
        CHECK(tric_module_get_kernel(pm, NULL, &tk) == TRIC_SUCCESS &&
              strcmp(tric_kernel_name(tk), "vector_add_kernel") == 0);
        CHECK(tric_kernel_num_configs(tk) == 2);
        CHECK(tric_module_get_kernel(pm, "vector_add_kernel_c0", &c0) == TRIC_SUCCESS &&
              tric_kernel_threads(c0) == 256);
        CHECK(tric_kernel_config(tk, 1, &c) == TRIC_SUCCESS && c != c0 &&
              strcmp(tric_kernel_config_text(c), "BLOCK_SIZE=1024, num_warps=2") == 0);
        args[3] = TRIC_ARG_I32(N);
        CHECK(tric_launch_grid(tk, va_grid, &grids, args, 4, NULL) == TRIC_SUCCESS);
        CHECK(ms->block[0] == 64);
        CHECK(tric_copy_to_host(ho, o, 0, sizeof ho, NULL) == TRIC_SUCCESS);
        CHECK(ho[5] == 6.0f && ho[N - 1] == (float)N);
        CHECK(tric_module_get_kernel(pm, "nope", &c0) == TRIC_ERROR_NOT_FOUND &&
              strstr(tric_last_error(), "vector_add_kernel_c1") != NULL);
        tric_module_destroy(pm);
    } else {
        CHECK(!"the tuned PTX loads");
        printf("%s\n", tric_last_error());
    }
    if (ok)
        compile_result_free(&res);
    tric_buffer_free(x);
    tric_buffer_free(y);
    tric_buffer_free(o);
    drop_cache_dir(tmp);
}

/* Wrapping a caller's CUstream, the native handles, async copies, and what a capturing stream
 * refuses (everything that would break a CUDA graph capture) while a plain launch goes through. */
static void test_streams_and_capture(tric_device dev, const char *va, MockState *ms)
{
    CHECK(tric_device_native_context(dev) != NULL);
    CHECK(tric_device_native_stream(dev) != NULL);
    tric_stream own;
    CHECK(tric_stream_create(dev, &own) == TRIC_SUCCESS);
    void *cu = tric_stream_native(own); /* the mock's stream, of the device's context */
    CHECK(cu != NULL);
    tric_stream wrapped;
    CHECK(tric_stream_wrap(dev, cu, &wrapped) == TRIC_SUCCESS);
    CHECK(tric_stream_native(wrapped) == cu);
    int streams = ms->live_streams;
    tric_stream_destroy(wrapped); /* the caller's CUstream is left alone */
    CHECK(ms->live_streams == streams);
    static int foreign;
    tric_stream bad;
    CHECK(tric_stream_wrap(dev, &foreign, &bad) == TRIC_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(tric_last_error(), "another context") != NULL);
    CHECK(tric_stream_wrap(dev, cu, &wrapped) == TRIC_SUCCESS);

    /* A kernel whose launches specialize: the variant for these values, loaded before capture. */
    tric_compile_options opt = tric_compile_options_default();
    static const char *defs[] = {"BLOCK_SIZE=1024"};
    opt.constexprs = defs;
    opt.nconstexprs = 1;
    opt.signature = "*fp32,*fp32,*fp32,i32";
    opt.no_cache = 1;
    tric_module mod;
    tric_kernel k;
    CHECK(tric_module_compile_file(dev, va, &opt, &mod) == TRIC_SUCCESS);
    CHECK(tric_module_get_kernel(mod, NULL, &k) == TRIC_SUCCESS);
    enum { N = 4096 };
    static float hx[N], hy[N], ho[N];
    for (int i = 0; i < N; i++)
        hx[i] = (float)i, hy[i] = 1.0f;
    tric_buffer x, y, o;
    CHECK(tric_buffer_alloc(dev, sizeof hx, &x) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, sizeof hy, &y) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, sizeof ho, &o) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device_async(x, 0, hx, sizeof hx, wrapped) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device_async(y, 0, hy, sizeof hy, wrapped) == TRIC_SUCCESS);
    tric_arg args[4] = {TRIC_ARG_BUF(x), TRIC_ARG_BUF(y), TRIC_ARG_BUF(o), TRIC_ARG_I32(N)};
    CHECK(tric_launch(k, (tric_dim3){N / 1024, 1, 1}, args, 4, wrapped) == TRIC_SUCCESS);
    CHECK(tric_copy_to_host_async(ho, o, 0, sizeof ho, wrapped) == TRIC_SUCCESS);
    CHECK(tric_stream_synchronize(wrapped) == TRIC_SUCCESS);
    CHECK(ho[0] == 1.0f && ho[N - 1] == (float)N);
    CHECK(tric_copy_to_host_async(ho, o, 8, sizeof ho, wrapped) == TRIC_ERROR_INVALID_ARGUMENT);

    ms->capturing = 1;
    int loads = ms->module_loads, launches = ms->launches;
    /* The loaded variant launches: one cuLaunchKernel, nothing else. */
    CHECK(tric_launch(k, (tric_dim3){N / 1024, 1, 1}, args, 4, wrapped) == TRIC_SUCCESS);
    CHECK(ms->launches == launches + 1);
    /* A new specialization (n = 4095 is not divisible by 16) would compile and load: refused. */
    args[3] = TRIC_ARG_I32(N - 1);
    CHECK(tric_launch(k, (tric_dim3){N / 1024, 1, 1}, args, 4, wrapped) ==
          TRIC_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(tric_last_error(), "captured into a CUDA graph") != NULL);
    CHECK(ms->module_loads == loads && ms->launches == launches + 1);
    args[3] = TRIC_ARG_I32(N);
    /* Synchronous copies wait on the stream: refused; the async ones are fine. */
    CHECK(tric_copy_to_host(ho, o, 0, sizeof ho, wrapped) == TRIC_ERROR_INVALID_ARGUMENT);
    CHECK(tric_memset(o, 0, 0, 16, wrapped) == TRIC_ERROR_INVALID_ARGUMENT);
    CHECK(tric_copy_to_device_async(x, 0, hx, sizeof hx, wrapped) == TRIC_SUCCESS);
    ms->capturing = 0;

    tric_buffer_free(x);
    tric_buffer_free(y);
    tric_buffer_free(o);
    tric_module_destroy(mod);
    tric_stream_destroy(wrapped);
    tric_stream_destroy(own);
}

/* tric_device_close with everything still live: modules, buffers, streams (made and wrapped)
 * are freed, the driver's objects released. */
/* tric_launch_ex with programmatic_dependent: launched through cuLaunchKernelEx with the
 * programmatic stream serialization attribute (the mock counts it, and computes vector_add from
 * the parameters as for cuLaunchKernel); without it, or with the options zeroed or NULL, through
 * cuLaunchKernel. An autotuned kernel times its configs with plain launches and launches the
 * chosen one with the attribute. */
static void test_programmatic_dependent(tric_device dev, const char *va, MockState *ms)
{
    enum { N = 3000 };
    static float hx[N], hy[N], ho[N];
    for (int i = 0; i < N; i++)
        hx[i] = (float)i, hy[i] = 0.25f;
    tric_buffer x, y, o;
    va_buffers(dev, hx, hy, sizeof hx, &x, &y, &o);
    tric_arg args[] = {TRIC_ARG_BUF(x), TRIC_ARG_BUF(y), TRIC_ARG_BUF(o), TRIC_ARG_I32(N)};
    tric_module mod;
    tric_kernel k;
    CHECK(ex_compile_vector_add(dev, va, &mod, &k) == TRIC_SUCCESS);
    tric_launch_options pdl = {.programmatic_dependent = 1}, none = {0};
    int ex = ms->ex_launches, dependent = ms->dependent_launches, launches = ms->launches;
    CHECK(tric_memset(o, 0, 0, sizeof ho, NULL) == TRIC_SUCCESS);
    CHECK(tric_launch_ex(k, (tric_dim3){3, 1, 1}, args, 4, NULL, &pdl) == TRIC_SUCCESS);
    CHECK(tric_device_synchronize(dev) == TRIC_SUCCESS);
    CHECK(ms->ex_launches == ex + 1 && ms->dependent_launches == dependent + 1);
    CHECK(ms->launches == launches + 1 && ms->grid[0] == 3 && ms->block[0] == 128);
    CHECK(tric_copy_to_host(ho, o, 0, sizeof ho, NULL) == TRIC_SUCCESS);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += ho[i] != (float)i + 0.25f;
    CHECK(bad == 0);
    CHECK(tric_launch_ex(k, (tric_dim3){3, 1, 1}, args, 4, NULL, &none) == TRIC_SUCCESS);
    CHECK(tric_launch_ex(k, (tric_dim3){3, 1, 1}, args, 4, NULL, NULL) == TRIC_SUCCESS);
    CHECK(tric_launch(k, (tric_dim3){3, 1, 1}, args, 4, NULL) == TRIC_SUCCESS);
    CHECK(ms->ex_launches == ex + 1 && ms->launches == launches + 4);
    tric_module_destroy(mod);

    /* autotuned: BLOCK_SIZE 128 or 256, the grid from the config */
    static const char *b128[] = {"BLOCK_SIZE=128"}, *b256[] = {"BLOCK_SIZE=256"};
    tric_tune_config configs[] = {{b128, 1, 4, 0}, {b256, 1, 4, 0}};
    tric_compile_options opt = ex_vector_add_tuned_options(configs, 2);
    if (tric_module_compile_file(dev, va, &opt, &mod) != TRIC_SUCCESS ||
        tric_module_get_kernel(mod, NULL, &k) != TRIC_SUCCESS) {
        CHECK(!"vector_add compiles with configs");
    } else {
        ex = ms->ex_launches, dependent = ms->dependent_launches, launches = ms->launches;
        int grids = 0;
        pdl.grid_fn = va_grid;
        pdl.grid_user = &grids;
        CHECK(tric_memset(o, 0, 0, sizeof ho, NULL) == TRIC_SUCCESS);
        CHECK(tric_launch_ex(k, (tric_dim3){0, 0, 0}, args, 4, NULL, &pdl) == TRIC_SUCCESS);
        CHECK(tric_device_synchronize(dev) == TRIC_SUCCESS);
        /* the trials (unless a cache had the choice) through cuLaunchKernel, the launch not */
        CHECK(grids >= 1 && ms->launches >= launches + 1);
        CHECK(ms->ex_launches == ex + 1 && ms->dependent_launches == dependent + 1);
        CHECK(ms->grid[0] == 12 || ms->grid[0] == 24); /* 3000 elements in 256 or 128 */
        CHECK(tric_copy_to_host(ho, o, 0, sizeof ho, NULL) == TRIC_SUCCESS);
        bad = 0;
        for (int i = 0; i < N; i++)
            bad += ho[i] != (float)i + 0.25f;
        CHECK(bad == 0);
        tric_module_destroy(mod);
    }
    tric_buffer_free(x);
    tric_buffer_free(y);
    tric_buffer_free(o);
}

static void test_close_with_live_objects(const char *va, MockState *ms)
{
    int modules = ms->live_modules, allocs = ms->live_allocs, streams = ms->live_streams;
    tric_device dev;
    CHECK(tric_device_open("cuda:0", &dev) == TRIC_SUCCESS);
    tric_module m1, m2;
    tric_kernel k;
    tric_buffer b1, b2;
    tric_stream s1, s2;
    setenv("TRIC_NO_CACHE", "1", 1);
    CHECK(ex_compile_vector_add(dev, va, &m1, &k) == TRIC_SUCCESS);
    unsetenv("TRIC_NO_CACHE");
    CHECK(tric_module_load_ptx(dev, tric_module_code(m1), &m2) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, 100, &b1) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, 200, &b2) == TRIC_SUCCESS);
    CHECK(tric_stream_create(dev, &s1) == TRIC_SUCCESS);
    CHECK(tric_stream_wrap(dev, tric_stream_native(s1), &s2) == TRIC_SUCCESS);
    tric_buffer_free(b1); /* one destroyed by hand: unlinked, not freed twice */
    CHECK(ms->live_modules > modules && ms->live_allocs > allocs);
    tric_device_close(dev);
    CHECK(ms->live_modules == modules);
    CHECK(ms->live_allocs == allocs);
    CHECK(ms->live_streams == streams); /* s1 and the device's own; the wrapper freed only */
}

/* Eight processes compile the same kernel into one fresh cache directory at once: every one
 * succeeds, and one valid entry is left (no temp files). */
static void test_cache_race(const char *va)
{
    char tmp[] = "/tmp/tric-mock-race-XXXXXX";
    if (!mkdtemp(tmp)) {
        CHECK(!"mkdtemp");
        return;
    }
    char dir[300];
    snprintf(dir, sizeof dir, "%s/fresh", tmp);
    setenv("TRIC_CACHE_DIR", dir, 1);
    enum { PROCS = 8 };
    pid_t pids[PROCS];
    for (int i = 0; i < PROCS; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            tric_device d;
            tric_module m;
            tric_kernel k;
            int ok = tric_device_open("cuda:0", &d) == TRIC_SUCCESS &&
                     ex_compile_vector_add(d, va, &m, &k) == TRIC_SUCCESS;
            if (!ok)
                fprintf(stderr, "process %d: %s\n", i, tric_last_error());
            _exit(ok ? 0 : 1);
        }
    }
    int succeeded = 0;
    for (int i = 0; i < PROCS; i++) {
        int status = 0;
        waitpid(pids[i], &status, 0);
        succeeded += WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    CHECK(succeeded == PROCS);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "test $(ls '%s' | grep -c '[.]ptx$') -eq 1 && "
             "test $(ls '%s' | grep -c '[.]tmp[.]') -eq 0",
             dir, dir);
    CHECK(system(cmd) == 0);
    /* This process finds the entry valid: a hit. */
    tric_device d;
    tric_module m;
    tric_kernel k;
    CHECK(tric_device_open("cuda:0", &d) == TRIC_SUCCESS);
    CHECK(ex_compile_vector_add(d, va, &m, &k) == TRIC_SUCCESS && m->from_cache);
    tric_device_close(d);
    unsetenv("TRIC_CACHE_DIR");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "note: could not remove %s\n", tmp);
}

int main(void)
{
    tric_device dev;
    if (tric_device_open("cuda:0", &dev) != TRIC_SUCCESS) {
        printf("SKIP: %s\n", tric_last_error());
        return 77;
    }
    MockState *ms = mock_state_loaded();
    if (!ms) {
        printf("SKIP: the libcuda.so.1 loaded is not the mock (%s)\n", tric_device_name(dev));
        return 77;
    }
    CHECK(strcmp(tric_device_name(dev), "cuda:0 (tric mock GPU, sm_90)") == 0);
    CHECK(strcmp(tric_device_arch(dev), "sm_90a") == 0);
    CHECK(tric_device_get_kind(dev) == TRIC_DEVICE_CUDA);
    CHECK(ms->proc_version_asked == 12000);
    tric_device other;
    CHECK(tric_device_open("cuda:1", &other) == TRIC_ERROR_NO_DEVICE);
    CHECK(strcmp(tric_last_error(), "cuda:1: no such device (this machine has 1)") == 0);

    const char *va = TRIC_SOURCE_DIR "/examples/vector_add.tri";
    test_packing(dev, ms);
    test_tensor_maps(dev, ms);
    test_persistent(dev, ms);
    test_persistent_axes(dev, ms);
    test_persistent_no_workspace(dev, ms);
    test_stream_k_auto(dev, ms);
    test_deep_pipeline_auto(dev, ms);
    test_stream_k_deep_auto(dev, ms);
    test_cache_and_vector_add(dev, va);
    test_specialization(dev, va);
    test_autotune(dev, va, ms);
    test_autotune_first_launch(dev, va, ms);
    test_config_variant_fits_stages(dev, ms);
    test_variant_failure_warns(dev, ms);
    test_streams_and_capture(dev, va, ms);
    test_programmatic_dependent(dev, va, ms);
    test_close_with_live_objects(va, ms);
    test_cache_race(va);
    test_errors(dev, va, ms); /* last: leaves the mock's context sticky */
    tric_device_close(dev);
    if (failures) {
        printf("FAIL: %d check(s)\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
