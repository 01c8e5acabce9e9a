/* random.c: tl.rand, tl.randn, tl.randint, tl.randint4x, tl.rand4x, tl.randn4x and tl.philox as a
 * library of @triton.jit functions written in the kernel language, compiled into tric, parsed on
 * first use and inlined by sema like any helper (sema_inline.c library_call). The algorithm is Triton's
 * python/triton/language/random.py: Philox4x32 (Salmon et al., "Parallel random numbers: as easy
 * as 1, 2, 3", SC 2011) with the paper's round and key constants, n_rounds rounds (10 by
 * default); the seed split into two 32-bit keys (low word first); the offset as counter word 0,
 * the other three words 0; a uint32 mapped to [0, 1) by reinterpreting it as int32, folding the
 * negatives (x < 0: -x - 1) and multiplying by 4.6566127342e-10 in fp32; normals by Box-Muller
 * on the first two words. 64-bit counters (int64/uint64 offsets) run Philox4x64 with the seed as
 * key 0 and 0 as key 1, as Triton does. sema checks the arguments at the call so errors point at
 * the user's code. */
#include "frontend/frontend.h"

#include <string.h>

/* The library's text. Every line is kernel-language source; `tl` is the builtin module. */
static const char random_source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds: tl.constexpr = 10):\n"
    "    # One Philox round per iteration: two products by the round multipliers, their high\n"
    "    # halves mixed with the other words and the key, then the key bumped by the Weyl\n"
    "    # constants. Philox4x32: multipliers 0xD2511F53, 0xCD9E8D57, Weyl 0x9E3779B9, "
    "0xBB67AE85.\n"
    "    # Philox4x64: 0xD2E7470EE14C6C93, 0xCA5A826395121157, 0x9E3779B97F4A7C15,\n"
    "    # 0xBB67AE8584CAA73B (written as int64 and bitcast: constexprs are 64-bit signed).\n"
    "    if c0.dtype == tl.uint32:\n"
    "        round_a = 0xD2511F53\n"
    "        round_b = 0xCD9E8D57\n"
    "        key_a = 0x9E3779B9\n"
    "        key_b = 0xBB67AE85\n"
    "    else:\n"
    "        tl.static_assert(c0.dtype == tl.uint64, \"philox_impl takes uint32 or uint64 "
    "counters\")\n"
    "        round_a = tl.to_tensor(-3249550476889527149).to(tl.uint64, bitcast=True)\n"
    "        round_b = tl.to_tensor(-3865633965929787049).to(tl.uint64, bitcast=True)\n"
    "        key_a = tl.to_tensor(-7046029254386353131).to(tl.uint64, bitcast=True)\n"
    "        key_b = tl.to_tensor(-4942790177534073029).to(tl.uint64, bitcast=True)\n"
    "    for _ in tl.static_range(n_rounds):\n"
    "        _c0 = c0\n"
    "        _c2 = c2\n"
    "        c0 = tl.umulhi(round_b, _c2) ^ c1 ^ k0\n"
    "        c2 = tl.umulhi(round_a, _c0) ^ c3 ^ k1\n"
    "        c1 = round_b * _c2\n"
    "        c3 = round_a * _c0\n"
    "        k0 = k0 + key_a\n"
    "        k1 = k1 + key_b\n"
    "    return c0, c1, c2, c3\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def philox(seed, c0, c1, c2, c3, n_rounds: tl.constexpr = 10):\n"
    "    seed = tl.to_tensor(seed).to(tl.uint64)\n"
    "    c0 = tl.to_tensor(c0)\n"
    "    if c0.dtype.primitive_bitwidth == 32:\n"
    "        # 32-bit counters: the seed's low word is key 0, its high word key 1\n"
    "        seed_hi = ((seed >> 32) & 0xFFFFFFFF).to(tl.uint32)\n"
    "        seed_lo = (seed & 0xFFFFFFFF).to(tl.uint32)\n"
    "        c0 = c0.to(tl.uint32, bitcast=True)\n"
    "        c1 = tl.to_tensor(c1).to(tl.uint32, bitcast=True)\n"
    "        c2 = tl.to_tensor(c2).to(tl.uint32, bitcast=True)\n"
    "        c3 = tl.to_tensor(c3).to(tl.uint32, bitcast=True)\n"
    "    else:\n"
    "        # 64-bit counters: the seed is key 0, key 1 is 0\n"
    "        tl.static_assert(c0.dtype.primitive_bitwidth == 64, \"philox takes 32- or 64-bit "
    "counters\")\n"
    "        seed_hi = tl.to_tensor(0).to(tl.uint64)\n"
    "        seed_lo = seed\n"
    "        c0 = c0.to(tl.uint64, bitcast=True)\n"
    "        c1 = tl.to_tensor(c1).to(tl.uint64, bitcast=True)\n"
    "        c2 = tl.to_tensor(c2).to(tl.uint64, bitcast=True)\n"
    "        c3 = tl.to_tensor(c3).to(tl.uint64, bitcast=True)\n"
    "    return philox_impl(c0, c1, c2, c3, seed_lo, seed_hi, n_rounds)\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def randint4x(seed, offset, n_rounds: tl.constexpr = 10):\n"
    "    offset = tl.to_tensor(offset)\n"
    "    _0 = offset * 0\n"
    "    return philox(seed, offset, _0, _0, _0, n_rounds)\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def randint(seed, offset, n_rounds: tl.constexpr = 10):\n"
    "    ret, _, _, _ = randint4x(seed, offset, n_rounds)\n"
    "    return ret\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def uint_to_uniform_float(x):\n"
    "    # scale: the largest with MAX_INT * scale < 1.0 after fp32 rounding\n"
    "    if x.dtype == tl.uint32 or x.dtype == tl.int32:\n"
    "        x = x.to(tl.int32, bitcast=True)\n"
    "        scale = 4.6566127342e-10\n"
    "    else:\n"
    "        tl.static_assert(x.dtype == tl.uint64 or x.dtype == tl.int64, \"uint_to_uniform_float "
    "takes 32- or 64-bit ints\")\n"
    "        x = x.to(tl.int64, bitcast=True)\n"
    "        scale = 1.0842020432385337e-19\n"
    "    x = tl.where(x < 0, -x - 1, x)\n"
    "    return x * scale\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def rand(seed, offset, n_rounds: tl.constexpr = 10):\n"
    "    source = randint(seed, offset, n_rounds)\n"
    "    return uint_to_uniform_float(source)\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def rand4x(seed, offsets, n_rounds: tl.constexpr = 10):\n"
    "    i1, i2, i3, i4 = randint4x(seed, offsets, n_rounds)\n"
    "    u1 = uint_to_uniform_float(i1)\n"
    "    u2 = uint_to_uniform_float(i2)\n"
    "    u3 = uint_to_uniform_float(i3)\n"
    "    u4 = uint_to_uniform_float(i4)\n"
    "    return u1, u2, u3, u4\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def pair_uniform_to_normal(u1, u2):\n"
    "    # Box-Muller\n"
    "    u1 = tl.maximum(1.0e-7, u1)\n"
    "    th = 6.283185307179586 * u2\n"
    "    r = tl.sqrt(-2.0 * tl.log(u1))\n"
    "    return r * tl.cos(th), r * tl.sin(th)\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def randn(seed, offset, n_rounds: tl.constexpr = 10):\n"
    "    i1, i2, _, _ = randint4x(seed, offset, n_rounds)\n"
    "    u1 = uint_to_uniform_float(i1)\n"
    "    u2 = uint_to_uniform_float(i2)\n"
    "    n1, _ = pair_uniform_to_normal(u1, u2)\n"
    "    return n1\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def randn4x(seed, offset, n_rounds: tl.constexpr = 10):\n"
    "    u1, u2, u3, u4 = rand4x(seed, offset, n_rounds)\n"
    "    n1, n2 = pair_uniform_to_normal(u1, u2)\n"
    "    n3, n4 = pair_uniform_to_normal(u3, u4)\n"
    "    return n1, n2, n3, n4\n";

/* The functions a kernel may call as tl.NAME (or tl.random.NAME), and where their counters are:
 * the seed is argument 0; the offsets (counter words) arguments first..last. */
static const struct {
    const char *name;
    int first, last;
} public_fns[] = {
    {"rand", 1, 1},
    {"randn", 1, 1},
    {"randint", 1, 1},
    {"randint4x", 1, 1},
    {"rand4x", 1, 1},
    {"randn4x", 1, 1},
    {"philox", 1, 4},
    {"uint_to_uniform_float", -1, -1},
    {"pair_uniform_to_normal", -1, -1},
};

bool random_lookup(const char *name, int *first_counter, int *last_counter)
{
    for (size_t i = 0; i < sizeof public_fns / sizeof *public_fns; i++) {
        if (!strcmp(public_fns[i].name, name)) {
            *first_counter = public_fns[i].first;
            *last_counter = public_fns[i].last;
            return true;
        }
    }
    return false;
}

const char *random_public_name(int i)
{
    return i >= 0 && i < (int)(sizeof public_fns / sizeof *public_fns) ? public_fns[i].name : NULL;
}

const Module *random_library(Arena *arena, Diag *diag)
{
    SrcFile *file = arena_alloc(arena, sizeof *file);
    file->name = "triton/language/random.tri";
    file->text = random_source;
    file->len = sizeof random_source - 1;
    Diag local = {0};
    Module *m = parse_module(file, NULL, arena, &local);
    if (!m) {
        TRIC_INTERNAL(diag, "the built-in random library does not parse:\n%s",
                      local.text.data ? local.text.data : "");
        diag_free(&local);
        return NULL;
    }
    diag_free(&local);
    return m;
}
