/* scan_cases.h: the scans (tl.cumsum, tl.cumprod, tl.associative_scan, x.cumsum,
 * x.associative_scan) and the reductions with a combine function (tl.reduce, x.reduce,
 * tl.xor_sum) that tests/unit/runtime_scan.c runs on the interpreter against a C reference and
 * tests/gpu/gpu_scan.c runs on the GPU against the interpreter: 1-D and 2-D blocks, either
 * axis, forward and reversed, int and float dtypes, cumsum's widening of small ints, tl.reduce's
 * reducing in the input's dtype (int8 wraps). A reduction is broadcast back to x's shape, so
 * every element of a line holds the line's total. The inputs keep every float result exact
 * (small integers for sums, +-1, 2 and 0.5 for products), so any combine order gives the same
 * bits and the comparisons are exact. */
#ifndef TRIC_TESTS_SCAN_CASES_H
#define TRIC_TESTS_SCAN_CASES_H

#include "tests/runtime_check.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

typedef enum ScanDt { SD_I8, SD_I16, SD_I32, SD_I64, SD_U8, SD_F16, SD_F32, SD_F64 } ScanDt;

static const struct {
    const char *sig;
    int bytes;
    bool is_float, is_signed;
} scan_dts[] = {
    [SD_I8] = {"i8", 1, false, true},   [SD_I16] = {"i16", 2, false, true},
    [SD_I32] = {"i32", 4, false, true}, [SD_I64] = {"i64", 8, false, true},
    [SD_U8] = {"u8", 1, false, false},  [SD_F16] = {"fp16", 2, true, true},
    [SD_F32] = {"fp32", 4, true, true}, [SD_F64] = {"fp64", 8, true, true},
};

typedef enum ScanOp { SO_ADD, SO_MUL, SO_MAX, SO_MIN, SO_XOR, SO_OR } ScanOp;

typedef struct ScanCase {
    const char *call; /* the scan expression on x; AXIS and REV are constexprs */
    ScanOp op;
    ScanDt in, out;
    int m, n; /* m == 0: a 1-D block of n */
    int axis;
    bool reverse;
    int num_warps; /* 0: 4 */
    bool reduce;   /* a reduction: every element of a line is the line's total */
} ScanCase;

static const char *const scan_src_2d = "import triton\n"
                                       "import triton.language as tl\n"
                                       "\n"
                                       "\n"
                                       "@triton.jit\n"
                                       "def _max(a, b):\n"
                                       "    return tl.maximum(a, b)\n"
                                       "\n"
                                       "\n"
                                       "@triton.jit\n"
                                       "def _min(a, b):\n"
                                       "    \"\"\"running minimum\"\"\"\n"
                                       "    return tl.minimum(b, a)\n"
                                       "\n"
                                       "\n"
                                       "@triton.jit\n"
                                       "def _xor(a, b):\n"
                                       "    return a ^ b\n"
                                       "\n"
                                       "\n"
                                       "@triton.jit\n"
                                       "def _or(a, b):\n"
                                       "    return b | a\n"
                                       "\n"
                                       "\n"
                                       "@triton.jit\n"
                                       "def _mul(a, b):\n"
                                       "    return a * b\n"
                                       "\n"
                                       "\n"
                                       "@triton.jit\n"
                                       "def _add(a, b):\n"
                                       "    return a + b\n"
                                       "\n"
                                       "\n"
                                       "@triton.jit\n"
                                       "def k(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr, "
                                       "AXIS: tl.constexpr, REV: tl.constexpr):\n"
                                       "    %s\n"
                                       "    x = tl.load(x_ptr + offs)\n"
                                       "    y = %s\n"
                                       "    tl.store(y_ptr + offs, y)\n";

static const ScanCase scan_cases[] = {
    /* 1-D: within a warp, across 4 and 8 warps, repeated elements per thread */
    {"tl.cumsum(x, axis=0)", SO_ADD, SD_I32, SD_I32, 0, 32, 0, false, 0, false},
    {"tl.cumsum(x, 0, reverse=REV)", SO_ADD, SD_I32, SD_I32, 0, 128, 0, true, 0, false},
    {"tl.cumsum(x, axis=AXIS, reverse=REV)", SO_ADD, SD_F32, SD_F32, 0, 1024, 0, false, 0, false},
    {"tl.cumsum(x, axis=AXIS, reverse=REV)", SO_ADD, SD_F32, SD_F32, 0, 2048, 0, true, 8, false},
    {"x.cumsum(0)", SO_ADD, SD_I8, SD_I32, 0, 512, 0, false, 0, false},
    {"tl.cumsum(x, 0)", SO_ADD, SD_U8, SD_I32, 0, 256, 0, false, 0, false},
    {"tl.cumsum(x, 0, REV)", SO_ADD, SD_I16, SD_I32, 0, 64, 0, true, 1, false},
    {"tl.cumsum(x, 0, REV, dtype=tl.int64)", SO_ADD, SD_I32, SD_I64, 0, 256, 0, false, 0, false},
    {"tl.cumsum(x, 0, REV)", SO_ADD, SD_F16, SD_F16, 0, 256, 0, true, 0, false},
    {"tl.cumprod(x, 0, REV)", SO_MUL, SD_F32, SD_F32, 0, 512, 0, false, 0, false},
    {"tl.cumprod(x, 0, REV)", SO_MUL, SD_I32, SD_I32, 0, 128, 0, true, 0, false},
    {"tl.cumprod(x, 0, REV)", SO_MUL, SD_I8, SD_I8, 0, 64, 0, false, 0, false},
    {"tl.associative_scan(x, AXIS, _max, REV)", SO_MAX, SD_I32, SD_I32, 0, 1024, 0, false, 0,
     false},
    {"tl.associative_scan(x, AXIS, _min, reverse=REV)", SO_MIN, SD_F32, SD_F32, 0, 256, 0, true, 0,
     false},
    {"tl.associative_scan(x, 0, _xor, REV)", SO_XOR, SD_I64, SD_I64, 0, 128, 0, false, 0, false},
    {"tl.associative_scan(x, 0, _or, REV)", SO_OR, SD_U8, SD_U8, 0, 64, 0, true, 0, false},
    {"tl.associative_scan(x, 0, _mul, REV)", SO_MUL, SD_F64, SD_F64, 0, 256, 0, false, 0, false},
    /* 2-D along either axis */
    {"tl.cumsum(x, axis=AXIS, reverse=REV)", SO_ADD, SD_I32, SD_I32, 16, 64, 1, false, 0, false},
    {"tl.cumsum(x, axis=AXIS, reverse=REV)", SO_ADD, SD_I32, SD_I32, 16, 64, 0, false, 0, false},
    {"tl.cumsum(x, axis=AXIS, reverse=REV)", SO_ADD, SD_F32, SD_F32, 64, 16, 0, true, 0, false},
    {"tl.cumsum(x, axis=AXIS, reverse=REV)", SO_ADD, SD_F32, SD_F32, 64, 16, 1, true, 8, false},
    {"tl.cumsum(x, axis=-1, reverse=REV)", SO_ADD, SD_F16, SD_F16, 32, 32, 1, false, 0, false},
    {"tl.cumsum(x, axis=AXIS)", SO_ADD, SD_I8, SD_I32, 8, 256, 1, false, 0, false},
    {"tl.cumsum(x, axis=AXIS)", SO_ADD, SD_I8, SD_I32, 128, 8, 0, false, 2, false},
    {"tl.cumprod(x, axis=AXIS, reverse=REV)", SO_MUL, SD_F32, SD_F32, 32, 64, 0, true, 0, false},
    {"tl.cumprod(x, axis=AXIS, reverse=REV)", SO_MUL, SD_I16, SD_I16, 32, 64, 1, false, 0, false},
    {"tl.associative_scan(x, AXIS, _max, REV)", SO_MAX, SD_F16, SD_F16, 64, 64, 0, false, 0, false},
    {"tl.associative_scan(x, AXIS, _min, REV)", SO_MIN, SD_I64, SD_I64, 8, 128, 1, true, 0, false},
    {"tl.associative_scan(x, AXIS, _xor, REV)", SO_XOR, SD_I32, SD_I32, 128, 32, 0, true, 0, false},
    {"tl.associative_scan(x, AXIS, _xor, REV)", SO_XOR, SD_I32, SD_I32, 4, 4, 1, false, 1, false},
    {"x.associative_scan(AXIS, _max, REV)", SO_MAX, SD_I32, SD_I32, 0, 256, 0, true, 0, false},
    /* tl.reduce / x.reduce, broadcast back to x's shape */
    {"tl.broadcast_to(tl.reduce(x, 0, _add, keep_dims=True), (N,))", SO_ADD, SD_I32, SD_I32, 0,
     1024, 0, false, 0, true},
    {"tl.broadcast_to(tl.reduce(x, AXIS, _add, keep_dims=True), (M, N))", SO_ADD, SD_I8, SD_I8, 16,
     64, 1, false, 0, true},
    {"tl.broadcast_to(tl.reduce(x, AXIS, _add, True), (M, N))", SO_ADD, SD_F16, SD_F16, 64, 32, 0,
     false, 0, true},
    {"tl.broadcast_to(x.reduce(AXIS, _max, True), (M, N))", SO_MAX, SD_F32, SD_F32, 32, 64, 0,
     false, 0, true},
    {"tl.broadcast_to(tl.reduce(x, AXIS, _min)[:, None], (M, N))", SO_MIN, SD_I64, SD_I64, 8, 128,
     1, false, 0, true},
    {"tl.zeros_like(x) + tl.reduce(x, 0, _max)", SO_MAX, SD_F16, SD_F16, 0, 512, 0, false, 8, true},
    {"tl.broadcast_to(tl.reduce(x, AXIS, combine_fn=_max, keep_dims=True), (M, N))", SO_MAX, SD_U8,
     SD_U8, 64, 16, 0, false, 0, true},
    /* combine functions with no reduce op: the scan's last element */
    {"tl.broadcast_to(tl.reduce(x, AXIS, _mul, keep_dims=True), (M, N))", SO_MUL, SD_F32, SD_F32,
     32, 64, 1, false, 0, true},
    {"tl.broadcast_to(tl.reduce(x, AXIS, _xor, True), (M, N))", SO_XOR, SD_I32, SD_I32, 16, 64, 0,
     false, 0, true},
    {"tl.zeros_like(x) + tl.reduce(x, 0, _or)", SO_OR, SD_U8, SD_U8, 0, 256, 0, false, 0, true},
    {"tl.broadcast_to(x.reduce(AXIS, _mul)[None, :], (M, N))", SO_MUL, SD_I16, SD_I16, 64, 16, 0,
     false, 0, true},
    {"tl.zeros_like(x) + tl.reduce(x, None, _xor)", SO_XOR, SD_I64, SD_I64, 0, 128, 0, false, 0,
     true},
    {"tl.broadcast_to(tl.reduce(x, None, _mul, keep_dims=True), (N,))", SO_MUL, SD_F64, SD_F64, 0,
     256, 0, false, 8, true},
    {"tl.broadcast_to(tl.xor_sum(x, AXIS, keep_dims=True), (M, N))", SO_XOR, SD_I32, SD_I32, 8, 64,
     1, false, 0, true},
    {"tl.zeros_like(x) + x.xor_sum()", SO_XOR, SD_U8, SD_U8, 0, 128, 0, false, 0, true},
};
enum { NSCAN_CASES = sizeof scan_cases / sizeof *scan_cases };

static int scan_numel(const ScanCase *c) { return (c->m ? c->m : 1) * c->n; }

static void scan_case_name(const ScanCase *c, char *buf, size_t n)
{
    snprintf(buf, n, "%s %s->%s %dx%d axis %d%s warps %d", c->call, scan_dts[c->in].sig,
             scan_dts[c->out].sig, c->m, c->n, c->axis, c->reverse ? " reversed" : "",
             c->num_warps ? c->num_warps : 4);
}

/* ---- values as doubles / int64s, stored in a dtype ---- */

static uint16_t scan_f16_bits(double v) /* exact for the small values used here */
{
    if (v == 0)
        return signbit(v) ? 0x8000 : 0;
    int e;
    double m = frexp(fabs(v), &e); /* v = m * 2^e, m in [0.5, 1) */
    uint16_t bits = (uint16_t)(((e - 1 + 15) << 10) | ((uint16_t)((m * 2 - 1) * 1024) & 0x3ff));
    return (uint16_t)(bits | (v < 0 ? 0x8000 : 0));
}

static double scan_f16_value(uint16_t h)
{
    int e = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v = e == 0    ? ldexp(mant, -24)
               : e == 31 ? (mant ? NAN : INFINITY)
                         : ldexp(1024 + mant, e - 25);
    return (h & 0x8000) ? -v : v;
}

static void scan_put(ScanDt t, void *buf, int i, double f, int64_t v)
{
    switch (t) {
    case SD_I8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case SD_U8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case SD_I16: ((int16_t *)buf)[i] = (int16_t)v; break;
    case SD_I32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case SD_I64: ((int64_t *)buf)[i] = v; break;
    case SD_F16: ((uint16_t *)buf)[i] = scan_f16_bits(f); break;
    case SD_F32: ((float *)buf)[i] = (float)f; break;
    case SD_F64: ((double *)buf)[i] = f; break;
    }
}

static double scan_get(ScanDt t, const void *buf, int i)
{
    switch (t) {
    case SD_I8: return ((const int8_t *)buf)[i];
    case SD_U8: return ((const uint8_t *)buf)[i];
    case SD_I16: return ((const int16_t *)buf)[i];
    case SD_I32: return ((const int32_t *)buf)[i];
    case SD_I64: return (double)((const int64_t *)buf)[i];
    case SD_F16: return scan_f16_value(((const uint16_t *)buf)[i]);
    case SD_F32: return ((const float *)buf)[i];
    default: return ((const double *)buf)[i];
    }
}

static int64_t scan_get_int(ScanDt t, const void *buf, int i)
{
    switch (t) {
    case SD_I8: return ((const int8_t *)buf)[i];
    case SD_U8: return ((const uint8_t *)buf)[i];
    case SD_I16: return ((const int16_t *)buf)[i];
    case SD_I32: return ((const int32_t *)buf)[i];
    case SD_I64: return ((const int64_t *)buf)[i];
    default: return 0;
    }
}

/* Inputs that keep the float results exact in any combine order. */
static void scan_inputs(const ScanCase *c, void *x)
{
    uint32_t s = 12345u + (uint32_t)c->n * 7u + (uint32_t)c->m;
    for (int i = 0; i < scan_numel(c); i++) {
        s = s * 1664525u + 1013904223u;
        uint32_t r = s >> 8;
        double f;
        int64_t v;
        if (c->op == SO_MUL) {
            static const double prod_vals[] = {1, -1, 1, -1, 1, 2, 0.5, -1};
            f = c->in == SD_F16 ? ((r & 1) ? 1 : -1) : prod_vals[r % 8];
            v = (int64_t)(r % 7) - 3; /* ints wrap: any value */
        } else if (c->op == SO_ADD) {
            f = (double)(r % 7) - 3;
            v = scan_dts[c->in].is_signed ? (int64_t)(r % 255) - 127 : (int64_t)(r % 256);
        } else {
            f = (double)(int32_t)(r % 20001) - 10000.0;
            if (c->in == SD_F16)
                f = (double)(int32_t)(r % 4001) - 2000.0;
            v = (int64_t)(((uint64_t)s << 32) ^ r ^ ((uint64_t)r << 45));
        }
        scan_put(c->in, x, i, f, v);
    }
}

/* Wraps v to the dtype's width and signedness. */
static int64_t scan_wrap(ScanDt t, int64_t v)
{
    switch (t) {
    case SD_I8: return (int8_t)v;
    case SD_U8: return (uint8_t)v;
    case SD_I16: return (int16_t)v;
    case SD_I32: return (int32_t)v;
    default: return v;
    }
}

/* The sequential scan in C, into `want` as the output dtype. */
static void scan_reference(const ScanCase *c, const void *x, void *want)
{
    int rows = c->m ? c->m : 1, cols = c->n;
    int len = c->m && c->axis == 0 ? rows : cols, lines = scan_numel(c) / len;
    bool fl = scan_dts[c->out].is_float;
    for (int l = 0; l < lines; l++) {
        double facc = 0;
        int64_t iacc = 0;
        for (int step = 0; step < len; step++) {
            int j = c->reverse ? len - 1 - step : step;
            int idx = c->m && c->axis == 0 ? j * cols + l : l * cols + j;
            double f = scan_get(c->in, x, idx);
            int64_t v = scan_wrap(c->out, scan_get_int(c->in, x, idx));
            if (step == 0) {
                facc = f;
                iacc = v;
            } else if (fl) {
                switch (c->op) {
                case SO_ADD: facc += f; break;
                case SO_MUL: facc *= f; break;
                case SO_MAX: facc = fmax(facc, f); break;
                default: facc = fmin(facc, f); break;
                }
            } else {
                bool sg = scan_dts[c->out].is_signed;
                switch (c->op) {
                case SO_ADD: iacc = (int64_t)((uint64_t)iacc + (uint64_t)v); break;
                case SO_MUL: iacc = (int64_t)((uint64_t)iacc * (uint64_t)v); break;
                case SO_MAX:
                    iacc = (sg ? v > iacc : (uint64_t)v > (uint64_t)iacc) ? v : iacc;
                    break;
                case SO_MIN:
                    iacc = (sg ? v < iacc : (uint64_t)v < (uint64_t)iacc) ? v : iacc;
                    break;
                case SO_XOR: iacc ^= v; break;
                case SO_OR: iacc |= v; break;
                }
                iacc = scan_wrap(c->out, iacc);
            }
            if (!c->reduce)
                scan_put(c->out, want, idx, facc, iacc);
        }
        for (int j = 0; c->reduce && j < len; j++) /* the total, broadcast along the line */
            scan_put(c->out, want, c->m && c->axis == 0 ? j * cols + l : l * cols + j, facc, iacc);
    }
}

/* Compiles the case on dev and runs it on x; the output (poisoned with 0xFF first) into y. */
static bool scan_run(tric_device dev, const ScanCase *c, const void *x, void *y)
{
    char src[4096], sig[32], defs_buf[4][32];
    const char *range = c->m ? "offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]"
                             : "offs = tl.arange(0, N)";
    snprintf(src, sizeof src, scan_src_2d, range, c->call);
    snprintf(sig, sizeof sig, "*%s,*%s", scan_dts[c->in].sig, scan_dts[c->out].sig);
    snprintf(defs_buf[0], 32, "M=%d", c->m ? c->m : 1);
    snprintf(defs_buf[1], 32, "N=%d", c->n);
    snprintf(defs_buf[2], 32, "AXIS=%d", c->axis);
    snprintf(defs_buf[3], 32, "REV=%s", c->reverse ? "True" : "False");
    const char *defs[4] = {defs_buf[0], defs_buf[1], defs_buf[2], defs_buf[3]};
    tric_compile_options opt = tric_compile_options_default();
    opt.signature = sig;
    opt.constexprs = defs;
    opt.nconstexprs = 4;
    opt.kernel = "k";
    opt.num_warps = c->num_warps;
    opt.no_cache = 1;
    tric_module mod;
    tric_kernel k;
    if (tric_module_compile(dev, src, "scan.tri", &opt, &mod) != TRIC_SUCCESS) {
        fprintf(stderr, "compile failed: %s\n%s\n", tric_last_error(), src);
        failures++;
        return false;
    }
    CHECK(tric_module_get_kernel(mod, "k", &k) == TRIC_SUCCESS);
    size_t in_bytes = (size_t)scan_numel(c) * (size_t)scan_dts[c->in].bytes;
    size_t out_bytes = (size_t)scan_numel(c) * (size_t)scan_dts[c->out].bytes;
    tric_buffer bx, by;
    CHECK(tric_buffer_alloc(dev, in_bytes, &bx) == TRIC_SUCCESS);
    CHECK(tric_buffer_alloc(dev, out_bytes, &by) == TRIC_SUCCESS);
    CHECK(tric_copy_to_device(bx, 0, x, in_bytes, NULL) == TRIC_SUCCESS);
    CHECK(tric_memset(by, 0, 0xFF, out_bytes, NULL) == TRIC_SUCCESS);
    tric_arg args[2] = {TRIC_ARG_BUF(bx), TRIC_ARG_BUF(by)};
    CHECK(tric_launch(k, (tric_dim3){1, 1, 1}, args, 2, NULL) == TRIC_SUCCESS);
    CHECK(tric_device_synchronize(dev) == TRIC_SUCCESS);
    CHECK(tric_copy_to_host(y, by, 0, out_bytes, NULL) == TRIC_SUCCESS);
    tric_buffer_free(bx);
    tric_buffer_free(by);
    tric_module_destroy(mod);
    return true;
}

/* Every element equal (the bits, for floats: the results are exact); returns the mismatches,
 * the first few printed. */
static int scan_compare(const ScanCase *c, const void *got, const void *want, const char *what)
{
    int bad = 0, esz = scan_dts[c->out].bytes;
    char name[160];
    scan_case_name(c, name, sizeof name);
    for (int i = 0; i < scan_numel(c); i++) {
        if (!memcmp((const char *)got + (size_t)i * esz, (const char *)want + (size_t)i * esz,
                    (size_t)esz))
            continue;
        if (bad < 4)
            fprintf(stderr, "%s: element %d: %s %.17g, expected %.17g\n", name, i, what,
                    scan_get(c->out, got, i), scan_get(c->out, want, i));
        bad++;
    }
    return bad;
}

#endif
