// ggml's block formats: how each type lays its numbers out in bytes (ggml-common.h). 32 elements
// per block:
//   Q8_0: f16 d, then 32 x int8 q;                     x[i] = d * q[i]
//   Q4_0: f16 d, then 16 bytes; byte j holds element j in its low nibble and element j + 16 in
//         its high nibble;                            x[i] = d * (nibble - 8)
//   Q4_1: f16 d, f16 m, nibbles as Q4_0;               x[i] = d * nibble + m
//   Q5_0 / Q5_1: as Q4_0 / Q4_1 with a u32 of fifth bits after the scales (bit i for element
//         i);                                         x[i] = d * (q - 16), or d * q + m
//   IQ4_NL: as Q4_0, the nibble indexing 16 fixed values;  x[i] = d * value[nibble]
// and 256 elements per super-block (K-quants) in sub-blocks of 16 or 32 with their own scales:
//   Q2_K (2-bit, scale and min per 16), Q3_K (3-bit, 6-bit scale per 16), Q4_K and Q5_K (4/5-bit,
//   6-bit scale and min per 32), Q6_K (6-bit, int8 scale per 16), IQ4_XS (IQ4_NL's values, 6-bit
//   scale per 32), and the lattice types IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S (8 or
//   4 values at a time from a grid, with signs and a scale per 16 or 32), the ternary TQ1_0 and
//   TQ2_0, and MXFP4 (32 per block: E2M1 values and an E8M0 scale): src/kernels/blocks/dequantize.cpp
//   spells each layout out, one function a type.
// The f16 scales are read with fp16_to_fp32 (half.h). Pointers into a mapping may be unaligned:
// every read goes through memcpy.
#pragma once
#include <cstdint>
#include <cstring>

namespace journey {

// Little-endian words at any alignment.
inline uint16_t u16_at(const unsigned char* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}
inline uint32_t u32_at(const unsigned char* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

constexpr int64_t kQK = 32;  // elements per Q8_0 / Q4_0 block

struct BlockQ8_0 {
    uint16_t d;      // scale, IEEE half
    int8_t qs[kQK];  // quants
};
static_assert(sizeof(BlockQ8_0) == 34);

struct BlockQ4_0 {
    uint16_t d;            // scale, IEEE half
    uint8_t qs[kQK / 2];   // nibbles: low = elements 0..15, high = elements 16..31
};
static_assert(sizeof(BlockQ4_0) == 18);

// IQ4_NL / IQ4_XS: the 16 values a 4-bit index selects (ggml's kvalues_iq4nl).
inline constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// Q4_K / Q5_K: the 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes q
// (j < 4: low 6 bits of q[j] and q[j+4]; j >= 4: a nibble of q[j+4] and the top 2 bits of
// q[j-4] / q[j]).
inline void scale_min_k4(int j, const unsigned char* q, uint8_t& sc, uint8_t& m) {
    if (j < 4) {
        sc = q[j] & 63;
        m = q[j + 4] & 63;
    } else {
        sc = uint8_t((q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4));
        m = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

// Q3_K: the 16 6-bit scales (as stored, 0..63; the value is scale - 32) from the 12 packed bytes
// (defined in blocks/dequantize.cpp).
void scales_q3_k(const unsigned char* packed, int8_t* scales);

}  // namespace journey
