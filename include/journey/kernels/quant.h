// Number formats of weights: half floats, bfloat16 and GGML's block quantizations, as scalar
// reference kernels. Layouts (ggml-common.h), 32 elements per block:
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
//   scale per 32): src/kernels/dequant_blocks.cpp spells each layout out.
// Pointers into a mapping may be unaligned: every read goes through memcpy.
#pragma once
#include <cstddef>
#include <cstdint>

#include "journey/formats/tensor.h"

namespace journey {

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

// IEEE binary16 <-> binary32: exact widening (subnormals, inf, NaN kept); narrowing rounds to
// nearest, ties to even, overflowing to infinity.
float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);
// bfloat16 <-> binary32: widening is exact; narrowing rounds to nearest even, NaN stays NaN.
float bf16_to_fp32(uint16_t b);
uint16_t fp32_to_bf16(float f);

// Convert n consecutive elements of type t at src to floats, bit-identical to ggml's to_float.
// For block types, n must be whole blocks (throws std::invalid_argument otherwise).
void dequantize_row(DType t, const void* src, float* dst, int64_t n);

// sum_i row[i] * x[i] over n elements of a row of type t (same rule on n).
float vec_dot(DType t, const void* row, const float* x, int64_t n);

// Reference quantizers (llama.cpp's rounding), for tests and conversion tools.
void quantize_row_q8_0(const float* x, void* dst, int64_t n);
void quantize_row_q4_0(const float* x, void* dst, int64_t n);

}  // namespace journey
