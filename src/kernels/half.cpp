// float -> half float, rounding to nearest even (the exact widenings are inline in half.h).
#include "journey/kernels/half.h"

#include <bit>

namespace journey {

// Drop the low `shift` bits of q_full (shift >= 1), rounding to nearest, ties to even.
static uint32_t round_shift_even(uint32_t q_full, int shift) {
    const uint32_t q = shift >= 32 ? 0 : q_full >> shift;
    const uint64_t rem = q_full & ((uint64_t(1) << shift) - 1);
    const uint64_t half = uint64_t(1) << (shift - 1);
    return (rem > half || (rem == half && (q & 1))) ? q + 1 : q;
}

uint16_t fp32_to_fp16(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint16_t sign = uint16_t((x >> 16) & 0x8000);
    const uint32_t a = x & 0x7fffffff;
    if (a >= 0x7f800000) {  // inf or NaN (keep NaN a NaN, quiet)
        return a == 0x7f800000 ? uint16_t(sign | 0x7c00) : uint16_t(sign | 0x7e00 | ((a >> 13) & 0x3ff));
    }
    const int e = int(a >> 23);          // biased float exponent
    const uint32_t m = a & 0x7fffff;
    if (e >= 113) {                      // normal half range (may round up to infinity)
        const uint32_t q = (uint32_t(e - 112) << 10) | (m >> 13);
        const uint32_t rem = m & 0x1fff;
        const uint32_t r = (rem > 0x1000 || (rem == 0x1000 && (q & 1))) ? q + 1 : q;
        return r >= 0x7c00 ? uint16_t(sign | 0x7c00) : uint16_t(sign | r);
    }
    if (e < 101) return sign;            // below 2^-26: rounds to zero
    // subnormal half: value / 2^-24 = (m | implicit) * 2^(e - 126)
    return uint16_t(sign | round_shift_even(m | 0x800000, 126 - e));
}

uint16_t fp32_to_bf16(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40);  // quiet NaN
    return uint16_t((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

}  // namespace journey
