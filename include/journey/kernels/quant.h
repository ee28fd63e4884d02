// Number formats of weights: half floats, bfloat16 and GGML's block quantizations, as scalar
// reference kernels. Layouts (from the GGUF specification), 32 elements per block:
//   Q8_0: f16 d, then 32 x int8 q;                     x[i] = d * q[i]
//   Q4_0: f16 d, then 16 bytes; byte j holds element j in its low nibble and element j + 16 in
//         its high nibble;                            x[i] = d * (nibble - 8)
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

// Convert n consecutive elements of type t at src to floats. For Q8_0 / Q4_0, n must be a
// multiple of 32 (throws std::invalid_argument otherwise).
void dequantize_row(DType t, const void* src, float* dst, int64_t n);

// sum_i row[i] * x[i] over n elements of a row of type t (same rule on n).
float vec_dot(DType t, const void* row, const float* x, int64_t n);

// Reference quantizers (llama.cpp's rounding), for tests and conversion tools.
void quantize_row_q8_0(const float* x, void* dst, int64_t n);
void quantize_row_q4_0(const float* x, void* dst, int64_t n);

}  // namespace journey
