/* lower_random_exec.c: tl.philox, tl.randint, tl.randint4x, tl.rand, tl.rand4x, tl.randn and
 * tl.randn4x (frontend/random.c's library, inlined by sema) compiled from .tri source and run by
 * the CPU interpreter against a C reference written here: Philox4x32-R as in Salmon et al. (SC
 * 2011), itself checked first against the paper's known-answer vectors for 10 rounds, and the
 * uint32 -> [0, 1) map and Box-Muller of Triton's random.py in C float arithmetic. Integers and
 * uniforms must match exactly; normals within 2 ulps (the interpreter evaluates log, sin and cos
 * in double and rounds once, C's logf/sinf/cosf may differ from that in the last bit). */
#include "driver/driver.h"
#include "exec_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the C reference --------------------------------------------------------------------------- */

/* Philox4x32 with key (k0, k1) on counter c, R rounds. */
static void philox_ref(uint32_t c[4], uint32_t k0, uint32_t k1, int rounds)
{
    for (int r = 0; r < rounds; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0, n1 = (uint32_t)p1;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1, n3 = (uint32_t)p0;
        c[0] = n0;
        c[1] = n1;
        c[2] = n2;
        c[3] = n3;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
}

/* Philox4x64 with key (k0, k1) on counter c, R rounds. */
static uint64_t mulhi64(uint64_t a, uint64_t b)
{
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

static void philox64_ref(uint64_t c[4], uint64_t k0, uint64_t k1, int rounds)
{
    const uint64_t ma = 0xD2E7470EE14C6C93ull, mb = 0xCA5A826395121157ull;
    for (int r = 0; r < rounds; r++) {
        uint64_t n0 = mulhi64(mb, c[2]) ^ c[1] ^ k0, n1 = mb * c[2];
        uint64_t n2 = mulhi64(ma, c[0]) ^ c[3] ^ k1, n3 = ma * c[0];
        c[0] = n0;
        c[1] = n1;
        c[2] = n2;
        c[3] = n3;
        k0 += 0x9E3779B97F4A7C15ull;
        k1 += 0xBB67AE8584CAA73Bull;
    }
}

/* Triton's uint_to_uniform_float for 64 bits. */
static float uniform64_ref(uint64_t u)
{
    int64_t x = (int64_t)u;
    if (x < 0)
        x = -(x + 1);
    return (float)x * (float)1.0842020432385337e-19;
}

/* Triton's uint_to_uniform_float for 32 bits. */
static float uniform_ref(uint32_t u)
{
    int32_t x = (int32_t)u;
    if (x < 0)
        x = -(x + 1); /* Triton's -x - 1 without C's overflow */
    return (float)x * 4.6566127342e-10f;
}

static float normal_ref(uint32_t a, uint32_t b)
{
    float u1 = uniform_ref(a), u2 = uniform_ref(b);
    if (u1 < 1.0e-7f)
        u1 = 1.0e-7f;
    float th = (float)6.283185307179586 * u2;
    float r = (float)sqrt((double)(-2.0f * (float)log((double)u1)));
    return r * (float)cos((double)th);
}

/* Random123's known-answer vectors for philox4x64_10: counter, key, result. */
static const uint64_t kat64[3][10] = {
    {0, 0, 0, 0, 0, 0, 0x16554d9eca36314cull, 0xdb20fe9d672d0fdcull, 0xd7e772cee186176bull,
     0x7e68b68aec7ba23bull},
    {~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull, 0x87b092c3013fe90bull, 0x438c3c67be8d0224ull,
     0x9cc7d7c69cd777b6ull, 0xa09caebf594f0ba0ull},
    {0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull, 0x082efa98ec4e6c89ull,
     0x452821e638d01377ull, 0xbe5466cf34e90c6cull, 0xa528f45403e61d95ull, 0x38c72dbd566e9788ull,
     0xa5a1610e72fd18b5ull, 0x57bd43b5e52b7fe6ull},
};

static void test_kat(void)
{
    /* Salmon et al.'s Random123 known-answer vectors for philox4x32_10. */
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
         0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
         0x94fdcceb, 0x5001e420, 0x24126ea1},
    };
    for (int t = 0; t < 3; t++) {
        uint32_t c[4] = {kat[t][0], kat[t][1], kat[t][2], kat[t][3]};
        philox_ref(c, kat[t][4], kat[t][5], 10);
        for (int i = 0; i < 4; i++)
            CHECK(c[i] == kat[t][6 + i], "C reference KAT %d word %d: %08x, want %08x", t, i, c[i],
                  kat[t][6 + i]);
    }
    for (int t = 0; t < 3; t++) {
        uint64_t c[4] = {kat64[t][0], kat64[t][1], kat64[t][2], kat64[t][3]};
        philox64_ref(c, kat64[t][4], kat64[t][5], 10);
        for (int i = 0; i < 4; i++)
            CHECK(c[i] == kat64[t][6 + i], "C reference 4x64 KAT %d word %d: %016llx, want %016llx",
                  t, i, (unsigned long long)c[i], (unsigned long long)kat64[t][6 + i]);
    }
}

/* ---- compiling and running --------------------------------------------------------------------- */

static bool compile(Compiled *c, const char *src, const char *signature, const char *block)
{
    Define defs[1] = {{"BLOCK", block}};
    return exec_compile(c, "random.tri", src, NULL, signature, defs, 1);
}

#define HEADER "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"

/* tl.philox on the KAT counters and keys (the seed's low word is key 0, its high word key 1). */
static void test_philox_kernel(void)
{
    const char *src = HEADER "def k(c_ptr, seed, out_ptr, BLOCK: tl.constexpr):\n"
                             "    i = tl.arange(0, BLOCK)\n"
                             "    c0 = tl.load(c_ptr + 4 * i)\n"
                             "    c1 = tl.load(c_ptr + 4 * i + 1)\n"
                             "    c2 = tl.load(c_ptr + 4 * i + 2)\n"
                             "    c3 = tl.load(c_ptr + 4 * i + 3)\n"
                             "    a, b, c, d = tl.philox(seed, c0, c1, c2, c3)\n"
                             "    tl.store(out_ptr + 4 * i, a)\n"
                             "    tl.store(out_ptr + 4 * i + 1, b)\n"
                             "    tl.store(out_ptr + 4 * i + 2, c)\n"
                             "    tl.store(out_ptr + 4 * i + 3, d)\n";
    Compiled c;
    if (!compile(&c, src, "*u32,i64,*u32", "2"))
        return;
    static const uint32_t counters[3][4] = {{0, 0, 0, 0},
                                            {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                                            {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}};
    static const int64_t seeds[3] = {0, -1, 0x299f31d0a4093822};
    static const uint32_t want[3][4] = {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
                                        {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
                                        {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}};
    for (int t = 0; t < 3; t++) {
        uint32_t cin[8], out[8];
        for (int j = 0; j < 8; j++)
            cin[j] = counters[t][j % 4];
        InterpArg args[] = {P(cin), I(seeds[t]), P(out)};
        InterpBuffer bufs[] = {B(cin, sizeof cin), B(out, sizeof out)};
        if (!run(c.ir, 1, args, 3, bufs, 2))
            continue;
        for (int j = 0; j < 8; j++)
            CHECK(out[j] == want[t][j % 4], "tl.philox KAT %d word %d: %08x, want %08x", t, j,
                  out[j], want[t][j % 4]);
    }
    compile_result_free(&c.res);
}

/* rand, randint, randint4x, randn, rand4x, randn4x from run-time and constexpr seeds, int32 and
 * uint32 offsets, n_rounds 10 and 7. */
static void test_streams(void)
{
    const char *src =
        HEADER "def k(seed, ri_ptr, r4_ptr, u_ptr, n_ptr, u4_ptr, n4_ptr, r7_ptr, c_ptr, BLOCK: "
               "tl.constexpr):\n"
               "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
               "    tl.store(ri_ptr + offs, tl.randint(seed, offs))\n"
               "    a, b, c, d = tl.randint4x(seed, offs.to(tl.uint32) * 3)\n"
               "    tl.store(r4_ptr + 4 * offs, a)\n"
               "    tl.store(r4_ptr + 4 * offs + 1, b)\n"
               "    tl.store(r4_ptr + 4 * offs + 2, c)\n"
               "    tl.store(r4_ptr + 4 * offs + 3, d)\n"
               "    tl.store(u_ptr + offs, tl.rand(seed, offs))\n"
               "    tl.store(n_ptr + offs, tl.randn(seed, offs))\n"
               "    u1, u2, u3, u4 = tl.rand4x(seed, offs)\n"
               "    tl.store(u4_ptr + offs, u1 + u2 * 2 + u3 * 4 + u4 * 8)\n"
               "    n1, n2, n3, n4 = tl.randn4x(seed, offs)\n"
               "    tl.store(n4_ptr + 4 * offs, n1)\n"
               "    tl.store(n4_ptr + 4 * offs + 1, n2)\n"
               "    tl.store(n4_ptr + 4 * offs + 2, n3)\n"
               "    tl.store(n4_ptr + 4 * offs + 3, n4)\n"
               "    tl.store(r7_ptr + offs, tl.random.randint(seed, offs, n_rounds=7))\n"
               "    tl.store(c_ptr + offs, tl.rand(1234, offs))\n";
    Compiled c;
    if (!compile(&c, src, "i64,*u32,*u32,*fp32,*fp32,*fp32,*fp32,*u32,*fp32", "64"))
        return;
    enum { G = 4, N = G * 64 };
    static uint32_t ri[N], r4[4 * N], r7[N];
    static float u[N], nrm[N], u4[N], n4[4 * N], cu[N];
    const int64_t seed = 0x1234567890abcdefLL;
    InterpArg args[] = {I(seed), P(ri), P(r4), P(u), P(nrm), P(u4), P(n4), P(r7), P(cu)};
    InterpBuffer bufs[] = {B(ri, sizeof ri), B(r4, sizeof r4), B(u, sizeof u),   B(nrm, sizeof nrm),
                           B(u4, sizeof u4), B(n4, sizeof n4), B(r7, sizeof r7), B(cu, sizeof cu)};
    if (!run(c.ir, G, args, 9, bufs, 8))
        return;
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)((uint64_t)seed >> 32);
    int bad = 0;
    for (int i = 0; i < N && bad < 10; i++) {
        uint32_t w[4] = {(uint32_t)i, 0, 0, 0}, w3[4] = {(uint32_t)i * 3, 0, 0, 0},
                 w7[4] = {(uint32_t)i, 0, 0, 0}, wc[4] = {(uint32_t)i, 0, 0, 0};
        philox_ref(w, k0, k1, 10);
        philox_ref(w3, k0, k1, 10);
        philox_ref(w7, k0, k1, 7);
        philox_ref(wc, 1234, 0, 10);
        int before = test_failures;
        CHECK(ri[i] == w[0], "randint[%d] = %08x, want %08x", i, ri[i], w[0]);
        for (int j = 0; j < 4; j++)
            CHECK(r4[4 * i + j] == w3[j], "randint4x[%d][%d] = %08x, want %08x", i, j,
                  r4[4 * i + j], w3[j]);
        CHECK(r7[i] == w7[0], "randint(n_rounds=7)[%d] = %08x, want %08x", i, r7[i], w7[0]);
        float wu = uniform_ref(w[0]);
        CHECK(memcmp(&u[i], &wu, 4) == 0, "rand[%d] = %.9g, want %.9g", i, u[i], wu);
        CHECK(u[i] >= 0.0f && u[i] < 1.0f, "rand[%d] = %g outside [0, 1)", i, u[i]);
        float wcu = uniform_ref(wc[0]);
        CHECK(memcmp(&cu[i], &wcu, 4) == 0, "rand(1234)[%d] = %.9g, want %.9g", i, cu[i], wcu);
        float w4 = uniform_ref(w[0]) + uniform_ref(w[1]) * 2 + uniform_ref(w[2]) * 4 +
                   uniform_ref(w[3]) * 8;
        CHECK(memcmp(&u4[i], &w4, 4) == 0, "rand4x[%d] = %.9g, want %.9g", i, u4[i], w4);
        float wn = normal_ref(w[0], w[1]);
        CHECK(fabsf(nrm[i] - wn) <= 2 * fabsf(nextafterf(wn, INFINITY) - wn),
              "randn[%d] = %.9g, want %.9g", i, nrm[i], wn);
        CHECK(nrm[i] == n4[4 * i], "randn[%d] %.9g != randn4x's first %.9g", i, nrm[i], n4[4 * i]);
        bad += test_failures > before;
    }
    compile_result_free(&c.res);
}

/* 64-bit counters: tl.philox on the 4x64 KATs whose key 1 is 0 (the seed is key 0; key 1 is
 * always 0, as in Triton), and randint4x / rand with int64 offsets. */
static void test_philox64(void)
{
    const char *src = HEADER
        "def k(c_ptr, seed, out_ptr, u_ptr, BLOCK: tl.constexpr):\n"
        "    i = tl.arange(0, BLOCK)\n"
        "    a, b, c, d = tl.philox(seed, tl.load(c_ptr + 4 * i), tl.load(c_ptr + 4 * i + 1),\n"
        "                           tl.load(c_ptr + 4 * i + 2), tl.load(c_ptr + 4 * i + 3))\n"
        "    tl.store(out_ptr + 4 * i, a)\n"
        "    tl.store(out_ptr + 4 * i + 1, b)\n"
        "    tl.store(out_ptr + 4 * i + 2, c)\n"
        "    tl.store(out_ptr + 4 * i + 3, d)\n"
        "    offs = i.to(tl.int64) * 1000003 - 5\n"
        "    tl.store(u_ptr + 2 * i, tl.rand(seed, offs))\n"
        "    tl.store(u_ptr + 2 * i + 1, tl.rand(seed, offs, n_rounds=6))\n";
    Compiled c;
    if (!compile(&c, src, "*u64,i64,*u64,*fp32", "8"))
        return;
    uint64_t cin[32], out[32];
    float u[16];
    for (int j = 0; j < 32; j++)
        cin[j] = kat64[0][j % 4];
    InterpArg args[] = {P(cin), I(0), P(out), P(u)};
    InterpBuffer bufs[] = {B(cin, sizeof cin), B(out, sizeof out), B(u, sizeof u)};
    if (run(c.ir, 1, args, 4, bufs, 3))
        for (int j = 0; j < 32; j++)
            CHECK(out[j] == kat64[0][6 + j % 4],
                  "tl.philox 4x64 KAT word %d: %016llx, want %016llx", j % 4,
                  (unsigned long long)out[j], (unsigned long long)kat64[0][6 + j % 4]);
    const int64_t seed = -123456789;
    InterpArg args2[] = {P(cin), I(seed), P(out), P(u)};
    if (run(c.ir, 1, args2, 4, bufs, 3))
        for (int i = 0; i < 8; i++) {
            uint64_t w[4] = {(uint64_t)((int64_t)i * 1000003 - 5), 0, 0, 0},
                     w6[4] = {w[0], 0, 0, 0};
            philox64_ref(w, (uint64_t)seed, 0, 10);
            philox64_ref(w6, (uint64_t)seed, 0, 6);
            float want = uniform64_ref(w[0]), want6 = uniform64_ref(w6[0]);
            CHECK(memcmp(&u[2 * i], &want, 4) == 0, "rand(int64 offsets)[%d] = %.9g, want %.9g", i,
                  u[2 * i], want);
            CHECK(memcmp(&u[2 * i + 1], &want6, 4) == 0,
                  "rand(int64, 6 rounds)[%d] = %.9g, want %.9g", i, u[2 * i + 1], want6);
        }
    compile_result_free(&c.res);
}

int main(void)
{
    test_philox64();
    test_kat();
    test_philox_kernel();
    test_streams();
    if (test_failures) {
        printf("%d test_failures\n", test_failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
