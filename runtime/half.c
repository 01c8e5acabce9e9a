/* half.c: fp16, bf16 and fp8 <-> fp32 on the host (tric.h), used for fp16/bf16 launch arguments
 * and by C programs that fill or read such buffers. */
#include "tric/tric.h"

#include "support/support.h"

#include <string.h>

/* IEEE 754 binary32 -> binary16, round to nearest even (overflow to inf, NaN kept quiet). */
uint16_t tric_f32_to_f16(float value) {
    uint32_t x;
    memcpy(&x, &value, 4);
    uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xffu, mant = x & 0x7fffffu;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) { /* subnormal half (or zero) */
        if (e < -10)
            return (uint16_t)sign;
        mant |= 0x800000u;
        int shift = 14 - e;
        uint32_t half = mant >> shift, rest = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rest > mid || (rest == mid && (half & 1)))
            half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = sign | ((uint32_t)e << 10) | (mant >> 13), rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1)))
        half++; /* a carry into the exponent is the right result, up to inf */
    return (uint16_t)half;
}

/* binary32 -> bfloat16 (the top half), round to nearest even. */
uint16_t tric_f32_to_bf16(float value) {
    uint32_t x;
    memcpy(&x, &value, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

float tric_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    uint32_t x;
    if (exp == 0x1f) {
        x = sign | 0x7f800000u | (mant << 13);
    } else if (exp == 0) { /* zero or subnormal: mant * 2^-24, exact in binary32 */
        float f = (float)mant * (1.0f / 16777216.0f);
        return sign ? -f : f;
    } else {
        x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

float tric_bf16_to_f32(uint16_t bits) {
    uint32_t x = (uint32_t)bits << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* fp8: support/float8.c, the interpreter's own rule. */
uint8_t tric_f32_to_fp8e4nv(float value) { return fp8_from_double(value, DT_F8E4NV); }
float tric_fp8e4nv_to_f32(uint8_t bits) { return (float)fp8_to_double(bits, DT_F8E4NV); }
uint8_t tric_f32_to_fp8e5(float value) { return fp8_from_double(value, DT_F8E5); }
float tric_fp8e5_to_f32(uint8_t bits) { return (float)fp8_to_double(bits, DT_F8E5); }
