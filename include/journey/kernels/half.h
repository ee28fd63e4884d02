// Half floats: IEEE binary16 ("F16") and bfloat16 ("BF16") <-> float, the one conversion of the
// project (every kernel, loader and writer calls these; no other copy). Widening is exact (every
// half is a float: subnormals, inf and NaN kept); narrowing rounds to nearest, ties to even.
#pragma once
#include <cstdint>
#include <cstring>

namespace journey {

// IEEE 754 binary16 -> float (exact).
inline float fp16_to_fp32(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000 | (mant << 13);  // inf / nan
    } else if (exp != 0) {
        bits = sign | ((exp + 112) << 23) | (mant << 13);  // normal: rebias 15 -> 127
    } else if (mant == 0) {
        bits = sign;  // +-0
    } else {  // subnormal half: normalise
        exp = 113;
        while (!(mant & 0x400)) { mant <<= 1; --exp; }
        bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

// The half stored at p (possibly unaligned, e.g. a block's scale inside a mapping), as float.
inline float fp16_to_fp32(const unsigned char* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return fp16_to_fp32(h);
}

// bfloat16 -> float (exact): bfloat16 is the top half of a float.
inline float bf16_to_fp32(uint16_t b) {
    const uint32_t bits = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

// float -> IEEE binary16: nearest, ties to even, overflowing to infinity; NaN stays a (quiet) NaN.
uint16_t fp32_to_fp16(float f);
// float -> bfloat16: nearest, ties to even; NaN stays a (quiet) NaN.
uint16_t fp32_to_bf16(float f);

}  // namespace journey
