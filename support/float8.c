/* float8.c: the two fp8 formats tric has, as exact software conversions. One definition serves
 * the interpreter (ir/interp.c), the host helpers of tric.h (runtime/half.c) and the tests, so
 * that what the interpreter computes and what a C program checks against are the same rule.
 *
 * The rule is the GPU's: PTX ISA "cvt" with a .e4m3x2 / .e5m2x2 destination (sm_89+), which
 * requires .rn.satfinite: round to nearest, ties to even; a finite value beyond the largest
 * finite one, and an infinity, becomes that largest finite value with its sign; NaN stays NaN.
 * Going up (fp8 -> fp16/fp32/fp64) is exact: both formats are subsets of fp16. */
#include "support/support.h"

#include <math.h>
#include <string.h>

typedef struct Fp8Format {
    int mbits;        /* mantissa bits (3, 2) */
    int bias;         /* 7, 15 */
    uint8_t max_code; /* the largest finite magnitude: 0x7e (448), 0x7b (57344) */
    bool ieee;        /* e5m2: all-ones exponent is inf/NaN; e4m3fn: only S.1111.111 is NaN */
} Fp8Format;

static const Fp8Format e4m3 = {3, 7, 0x7e, false};
static const Fp8Format e5m2 = {2, 15, 0x7b, true};

static const Fp8Format *fp8_format(DType t) { return t == DT_F8E5 ? &e5m2 : &e4m3; }

double fp8_to_double(uint8_t bits, DType t)
{
    const Fp8Format *f = fp8_format(t);
    bool neg = bits & 0x80;
    int ebits = 7 - f->mbits;
    int exp = (bits >> f->mbits) & ((1 << ebits) - 1);
    int mant = bits & ((1 << f->mbits) - 1);
    double v;
    if (!f->ieee && (bits & 0x7f) == 0x7f) {
        v = NAN;
    } else if (f->ieee && exp == (1 << ebits) - 1) {
        if (mant == 0) {
            v = INFINITY;
        } else {
            /* Keep the payload in the top mantissa bits of the double, so that a NaN read from
             * memory and written back keeps its bits (as a GPU's byte copy does). */
            uint64_t d = (UINT64_C(0x7ff) << 52) | ((uint64_t)mant << (52 - f->mbits));
            memcpy(&v, &d, sizeof v);
        }
    } else if (exp == 0) {
        v = ldexp((double)mant, 1 - f->bias - f->mbits);
    } else {
        v = ldexp((double)((1 << f->mbits) | mant), exp - f->bias - f->mbits);
    }
    return neg ? -v : v;
}

uint8_t fp8_from_double(double x, DType t)
{
    const Fp8Format *f = fp8_format(t);
    uint8_t sign = signbit(x) ? 0x80 : 0;
    if (isnan(x)) {
        if (!f->ieee)
            return sign | 0x7f;
        uint64_t d;
        memcpy(&d, &x, sizeof d);
        uint8_t payload = (uint8_t)((d >> (52 - f->mbits)) & ((1u << f->mbits) - 1));
        return sign | 0x7c | (payload ? payload : 2);
    }
    double ax = fabs(x);
    double max = fp8_to_double(f->max_code, t);
    if (ax >= max) /* satfinite: beyond the largest finite value (or infinite) saturates */
        return sign | f->max_code;
    /* The spacing of fp8 values around ax: 2^(E - mbits) for ax in [2^E, 2^(E+1)), and the
     * subnormals' spacing below the smallest normal 2^(1 - bias). */
    int emin = 1 - f->bias, e;
    frexp(ax, &e); /* ax = m * 2^e, m in [0.5, 1): ax in [2^(e-1), 2^e) */
    int E = e - 1 < emin ? emin : e - 1;
    double q = ldexp(ax, f->mbits - E); /* exact: a power-of-two scaling of a double */
    double whole = floor(q), frac = q - whole;
    if (frac > 0.5 || (frac == 0.5 && fmod(whole, 2.0) != 0))
        whole += 1;
    /* whole * 2^(E - mbits) is the rounded value, whole in [0, 2^(mbits+1)]. Below 2^mbits it
     * is a subnormal (E == emin) and whole is its code; otherwise exponent field E + bias and
     * the fraction whole - 2^mbits, where whole == 2^(mbits+1) carries into the exponent. */
    unsigned code;
    if (whole < (double)(1 << f->mbits))
        code = (unsigned)whole;
    else
        code = ((unsigned)(E + f->bias) << f->mbits) + ((unsigned)whole - (1u << f->mbits));
    if (code > f->max_code) /* rounded up past the largest finite value */
        code = f->max_code;
    return sign | (uint8_t)code;
}

double fp8_round(double x, DType t) { return fp8_to_double(fp8_from_double(x, t), t); }
