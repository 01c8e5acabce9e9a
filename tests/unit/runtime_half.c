/* runtime_half: tric.h's fp16/bf16 <-> fp32 conversions on known bit patterns: rounding to
 * nearest even (ties both ways), subnormals, overflow to infinity, NaN, signed zero, and a round
 * trip of every fp16 value. */
#include "tric/tric.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures;

static void expect_bits(const char *what, uint16_t got, uint16_t want)
{
    if (got != want) {
        printf("FAIL %s: got 0x%04x, want 0x%04x\n", what, got, want);
        failures++;
    }
}

int main(void)
{
    expect_bits("1.0 -> fp16", tric_f32_to_f16(1.0f), 0x3c00);
    expect_bits("-2.0 -> fp16", tric_f32_to_f16(-2.0f), 0xc000);
    expect_bits("65504 -> fp16 (max)", tric_f32_to_f16(65504.0f), 0x7bff);
    expect_bits("65520 -> fp16 (rounds to inf)", tric_f32_to_f16(65520.0f), 0x7c00);
    expect_bits("1e9 -> fp16 (inf)", tric_f32_to_f16(1e9f), 0x7c00);
    expect_bits("-0.0 -> fp16", tric_f32_to_f16(-0.0f), 0x8000);
    expect_bits("2^-24 -> fp16 (smallest subnormal)", tric_f32_to_f16(ldexpf(1.0f, -24)), 0x0001);
    expect_bits("2^-26 -> fp16 (underflow to 0)", tric_f32_to_f16(ldexpf(1.0f, -26)), 0x0000);
    /* 1 + 2^-11 is halfway between 1 and the next fp16: ties to even (1.0); 1 + 3*2^-11 ties up. */
    expect_bits("1+2^-11 -> fp16 (tie to even, down)", tric_f32_to_f16(1.0f + ldexpf(1.0f, -11)),
                0x3c00);
    expect_bits("1+3*2^-11 -> fp16 (tie to even, up)",
                tric_f32_to_f16(1.0f + 3 * ldexpf(1.0f, -11)), 0x3c02);
    uint16_t nan16 = tric_f32_to_f16(NAN);
    if ((nan16 & 0x7c00) != 0x7c00 || (nan16 & 0x03ff) == 0) {
        printf("FAIL NaN -> fp16: 0x%04x is not a NaN\n", nan16);
        failures++;
    }
    expect_bits("1.0 -> bf16", tric_f32_to_bf16(1.0f), 0x3f80);
    expect_bits("1+2^-8 -> bf16 (tie to even, down)", tric_f32_to_bf16(1.0f + ldexpf(1.0f, -8)),
                0x3f80);
    expect_bits("1+3*2^-8 -> bf16 (tie to even, up)", tric_f32_to_bf16(1.0f + 3 * ldexpf(1.0f, -8)),
                0x3f82);
    uint16_t nanbf = tric_f32_to_bf16(NAN);
    if ((nanbf & 0x7f80) != 0x7f80 || (nanbf & 0x007f) == 0) {
        printf("FAIL NaN -> bf16: 0x%04x is not a NaN\n", nanbf);
        failures++;
    }
    if (tric_bf16_to_f32(0x3f80) != 1.0f || tric_f16_to_f32(0x0001) != ldexpf(1.0f, -24)) {
        printf("FAIL widening\n");
        failures++;
    }
    /* Every fp16 that is not a NaN survives fp16 -> fp32 -> fp16 unchanged. */
    for (uint32_t h = 0; h <= 0xffff; h++) {
        if ((h & 0x7c00) == 0x7c00 && (h & 0x03ff))
            continue;
        uint16_t back = tric_f32_to_f16(tric_f16_to_f32((uint16_t)h));
        if (back != h) {
            printf("FAIL round trip of fp16 0x%04x gave 0x%04x\n", h, back);
            failures++;
            break;
        }
    }
    if (failures)
        return 1;
    printf("PASS\n");
    return 0;
}
