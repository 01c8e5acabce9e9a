/* gpu_random (label gpu): tl.randint4x, tl.randint, tl.rand and tl.randn (frontend/random.c's
 * Philox library) on cuda:0 against the cpu interpreter with the same seeds and offsets:
 * randint4x, randint and rand bit for bit (Philox is integer arithmetic; the uniform map is one
 * int->fp32 conversion and one fp32 multiply, both correctly rounded on either side); randn
 * within 4 ulps (the GPU's log, sin and cos are libdevice's __nv_logf/__nv_sinf/__nv_cosf, the
 * interpreter's C's in double rounded once), with the number of lanes that differ at all
 * printed. Also the Philox known-answer vectors through tl.philox, and 64-bit offsets
 * (Philox4x64) bit for bit. Skips (exit 77) when cuda:0
 * cannot be opened. */
#include "tests/runtime_check.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct Pair {
    tric_device gpu, cpu;
} Pair;

/* Compiles src on both devices, runs it with a zeroed output buffer of `bytes` (plus an input
 * buffer when in is given) and the scalar args, and copies the output back. */
static bool run_both(Pair *p, const char *src, const char *sig, const char *block, const void *in,
                     size_t in_bytes, size_t bytes, const tric_arg *scalars, int nscalars,
                     unsigned grid, void *gpu_out, void *cpu_out)
{
    tric_device devs[2] = {p->gpu, p->cpu};
    void *outs[2] = {gpu_out, cpu_out};
    char def[64];
    snprintf(def, sizeof def, "BLOCK=%s", block);
    const char *defs[1] = {def};
    for (int d = 0; d < 2; d++) {
        tric_compile_options opt = tric_compile_options_default();
        opt.signature = sig;
        opt.constexprs = defs;
        opt.nconstexprs = 1;
        opt.no_cache = 1;
        tric_module mod;
        tric_kernel k;
        if (tric_module_compile(devs[d], src, "random.tri", &opt, &mod) != TRIC_SUCCESS) {
            fprintf(stderr, "compile on %s failed: %s\n%s\n", d ? "cpu" : "cuda", tric_last_error(),
                    src);
            failures++;
            return false;
        }
        CHECK(tric_module_get_kernel(mod, "k", &k) == TRIC_SUCCESS);
        tric_buffer ib = NULL, ob;
        tric_arg args[8];
        int n = 0;
        if (in) {
            CHECK(tric_buffer_alloc(devs[d], in_bytes, &ib) == TRIC_SUCCESS);
            CHECK(tric_copy_to_device(ib, 0, in, in_bytes, NULL) == TRIC_SUCCESS);
            args[n++] = TRIC_ARG_BUF(ib);
        }
        CHECK(tric_buffer_alloc(devs[d], bytes, &ob) == TRIC_SUCCESS);
        CHECK(tric_memset(ob, 0, 0xFF, bytes, NULL) == TRIC_SUCCESS);
        args[n++] = TRIC_ARG_BUF(ob);
        for (int i = 0; i < nscalars; i++)
            args[n++] = scalars[i];
        CHECK(tric_launch(k, (tric_dim3){grid, 1, 1}, args, n, NULL) == TRIC_SUCCESS);
        CHECK(tric_device_synchronize(devs[d]) == TRIC_SUCCESS);
        CHECK(tric_copy_to_host(outs[d], ob, 0, bytes, NULL) == TRIC_SUCCESS);
        if (ib)
            tric_buffer_free(ib);
        tric_buffer_free(ob);
        tric_module_destroy(mod);
    }
    return true;
}

#define HEADER "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"

/* Per lane: randint4x's four words, randint, rand's bits, randn's bits (7 words). */
static void test_streams(Pair *p, int64_t seed, const char *seed_type)
{
    const char *src = HEADER
        "def k(out_ptr, seed, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    a, b, c, d = tl.randint4x(seed, offs)\n"
        "    tl.store(out_ptr + 7 * offs, a)\n"
        "    tl.store(out_ptr + 7 * offs + 1, b)\n"
        "    tl.store(out_ptr + 7 * offs + 2, c)\n"
        "    tl.store(out_ptr + 7 * offs + 3, d)\n"
        "    tl.store(out_ptr + 7 * offs + 4, tl.randint(seed, offs * 5 + 3))\n"
        "    tl.store(out_ptr + 7 * offs + 5, tl.rand(seed, offs).to(tl.uint32, bitcast=True))\n"
        "    tl.store(out_ptr + 7 * offs + 6, tl.randn(seed, offs).to(tl.uint32, bitcast=True))\n";
    enum { G = 64, B = 256, N = G * B };
    static uint32_t g[7 * N], c[7 * N];
    char sig[32];
    snprintf(sig, sizeof sig, "*u32,%s", seed_type);
    tric_arg s = strcmp(seed_type, "i64") == 0 ? TRIC_ARG_I64(seed) : TRIC_ARG_I32((int32_t)seed);
    if (!run_both(p, src, sig, "256", NULL, 0, sizeof g, &s, 1, G, g, c))
        return;
    int bad = 0, normal_diff = 0;
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < 6; j++)
            if (g[7 * i + j] != c[7 * i + j] && bad++ < 5)
                fprintf(stderr, "seed %lld (%s) lane %d word %d: gpu %08x, interpreter %08x\n",
                        (long long)seed, seed_type, i, j, g[7 * i + j], c[7 * i + j]);
        float gn, cn;
        memcpy(&gn, &g[7 * i + 6], 4);
        memcpy(&cn, &c[7 * i + 6], 4);
        if (gn != cn)
            normal_diff++;
        float ulp = fabsf(nextafterf(cn, INFINITY) - cn);
        if (!(fabsf(gn - cn) <= 4 * ulp) && bad++ < 5)
            fprintf(stderr, "seed %lld lane %d randn: gpu %.9g, interpreter %.9g\n",
                    (long long)seed, i, gn, cn);
    }
    printf("seed %lld (%s): randn differs from the interpreter in %d of %d lanes (within 4 ulps)\n",
           (long long)seed, seed_type, normal_diff, N);
    failures += bad;
}

/* 64-bit offsets (Philox4x64): randint4x's words and rand's bits, bit for bit. */
static void test_streams64(Pair *p, int64_t seed)
{
    const char *src = HEADER "def k(out_ptr, seed, BLOCK: tl.constexpr):\n"
                             "    offs = (tl.program_id(0) * BLOCK + tl.arange(0, "
                             "BLOCK)).to(tl.int64) * 4294967311 - 77\n"
                             "    lane = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                             "    a, b, c, d = tl.randint4x(seed, offs)\n"
                             "    tl.store(out_ptr + 5 * lane, a)\n"
                             "    tl.store(out_ptr + 5 * lane + 1, b)\n"
                             "    tl.store(out_ptr + 5 * lane + 2, c)\n"
                             "    tl.store(out_ptr + 5 * lane + 3, d)\n"
                             "    tl.store(out_ptr + 5 * lane + 4, tl.rand(seed, "
                             "offs).to(tl.uint32, bitcast=True).to(tl.uint64))\n";
    enum { G = 16, B = 128, N = G * B };
    static uint64_t g[5 * N], c[5 * N];
    tric_arg s = TRIC_ARG_I64(seed);
    if (!run_both(p, src, "*u64,i64", "128", NULL, 0, sizeof g, &s, 1, G, g, c))
        return;
    int bad = 0;
    for (int i = 0; i < 5 * N; i++)
        if (g[i] != c[i] && bad++ < 5)
            fprintf(stderr, "64-bit seed %lld word %d: gpu %016llx, interpreter %016llx\n",
                    (long long)seed, i, (unsigned long long)g[i], (unsigned long long)c[i]);
    failures += bad;
}

/* tl.philox on the known-answer vectors (key = the seed's low and high words). */
static void test_kat(Pair *p)
{
    const char *src = HEADER
        "def k(c_ptr, out_ptr, seed, BLOCK: tl.constexpr):\n"
        "    i = tl.arange(0, BLOCK)\n"
        "    a, b, c, d = tl.philox(seed, tl.load(c_ptr + 4 * i), tl.load(c_ptr + 4 * i + 1),\n"
        "                           tl.load(c_ptr + 4 * i + 2), tl.load(c_ptr + 4 * i + 3))\n"
        "    tl.store(out_ptr + 4 * i, a)\n"
        "    tl.store(out_ptr + 4 * i + 1, b)\n"
        "    tl.store(out_ptr + 4 * i + 2, c)\n"
        "    tl.store(out_ptr + 4 * i + 3, d)\n";
    static const uint32_t counters[3][4] = {{0, 0, 0, 0},
                                            {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                                            {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}};
    static const int64_t seeds[3] = {0, -1, 0x299f31d0a4093822};
    static const uint32_t want[3][4] = {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
                                        {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
                                        {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}};
    for (int t = 0; t < 3; t++) {
        uint32_t cin[4 * 32], g[4 * 32], c[4 * 32];
        for (int j = 0; j < 4 * 32; j++)
            cin[j] = counters[t][j % 4];
        tric_arg s = TRIC_ARG_I64(seeds[t]);
        if (!run_both(p, src, "*u32,*u32,i64", "32", cin, sizeof cin, sizeof g, &s, 1, 1, g, c))
            continue;
        for (int j = 0; j < 4 * 32; j++)
            if (g[j] != want[t][j % 4] || c[j] != want[t][j % 4]) {
                fprintf(stderr, "philox KAT %d word %d: gpu %08x, interpreter %08x, want %08x\n", t,
                        j % 4, g[j], c[j], want[t][j % 4]);
                failures++;
                break;
            }
    }
}

int main(void)
{
    Pair p;
    if (tric_device_open("cuda:0", &p.gpu) != TRIC_SUCCESS) {
        printf("SKIP: %s\n", tric_last_error());
        return 77;
    }
    CHECK(tric_device_open("cpu", &p.cpu) == TRIC_SUCCESS);
    printf("device: %s (arch %s)\n", tric_device_name(p.gpu), tric_device_arch(p.gpu));
    test_kat(&p);
    test_streams(&p, 0, "i32");
    test_streams(&p, 42, "i32");
    test_streams(&p, -7, "i32");
    test_streams(&p, 0x1234567890abcdefLL, "i64");
    test_streams64(&p, 0x1234567890abcdefLL);
    test_streams64(&p, -1);
    tric_device_close(p.cpu);
    tric_device_close(p.gpu);
    if (failures) {
        printf("FAIL: %d\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
