// Converting stored numbers to float: the one place that knows each dtype's bit layout.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "journey/formats/tensor.h"

namespace journey {

// IEEE 754 binary16 -> float (exact: every half is a float).
inline float f16_to_f32(uint16_t h) {
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

// bfloat16 is the top half of a float.
inline float bf16_to_f32(uint16_t h) {
    const uint32_t bits = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

// out[n] = the n elements of type t starting at src (for Q8_0 / Q4_0, n whole blocks of 32).
void to_float(float* out, DType t, const std::byte* src, int64_t n);

// dst[c, r] = src[r, c] for a rows x cols matrix of 2-byte elements (F16/BF16 bits moved, never
// converted): a Conv1D [in, out] matrix rewritten as Linear [out, in].
void transpose16(const std::byte* src, int64_t rows, int64_t cols, std::byte* dst);

}  // namespace journey
