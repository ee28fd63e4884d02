// Private: the tables of ggml's importance-matrix, ternary and FP4 types (ggml-common.h).
// The lattice grids are data, generated into iq_grids.cpp by scripts/gen_iq_grids.py; each entry
// packs 8 (IQ2, IQ1) or 4 (IQ3) values, one per byte, element j in byte j (little-endian):
//   IQ2_XXS / IQ2_XS / IQ2_S: 256 / 512 / 1024 entries of 8 magnitudes in {8, 25, 43};
//   IQ3_XXS / IQ3_S: 256 / 512 entries of 4 magnitudes in {4, 12, ..., 62};
//   IQ1_S / IQ1_M: 2048 entries of 8 values in {-1, 0, 1} (int8).
// The sign tables are derived: a 7-bit index i gives 8 signs (bit j set: element j negative),
// bits 0-6 = i and bit 7 = the parity of i, so that every pattern has an even number of minus
// signs (ggml's ksigns_iq2xs); kmask_iq2xs[j] is bit j.
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>

namespace journey {

extern const uint64_t kIq2xxsGrid[256];
extern const uint64_t kIq2xsGrid[512];
extern const uint64_t kIq2sGrid[1024];
extern const uint32_t kIq3xxsGrid[256];
extern const uint32_t kIq3sGrid[512];
extern const uint64_t kIq1sGrid[2048];

// ggml's ksigns_iq2xs[i]: i with its parity in bit 7.
constexpr uint8_t iq_signs(uint32_t i) { return uint8_t((i & 127) | ((std::popcount(i & 127) & 1) << 7)); }

// Byte j of a grid entry (the value of element j).
inline uint8_t grid_byte(uint64_t entry, int j) { return uint8_t(entry >> (8 * j)); }

// MXFP4's 16 E2M1 values, doubled so they are integers (ggml's kvalues_mxfp4); the block's E8M0
// scale is then halved (e8m0_half).
inline constexpr int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// ggml_e8m0_to_fp32_half: 2^(e - 128) as a float, subnormal for e < 2.
inline float e8m0_half(uint8_t e) {
    const uint32_t bits = e < 2 ? 0x00200000u << e : uint32_t(e - 1) << 23;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

}  // namespace journey
