// Integer dots of block rows with quantized activations (blocks/dot_k.cpp and
// blocks/dot_unpacked.cpp); dot_rows()
// in blocks/dot.cpp dispatches here.
#pragma once
#include "journey/kernels/blocks/dot.h"

namespace journey {

// Which kernels a one-token dot runs (dot_rows chooses): the portable loop (the definition),
// AVX2 + FMA + F16C (CPUs without AVX-512 VNNI: quant_dot_avx2_available) or AVX-512 VNNI
// (quant_dot_fast_available). The three give the same bits.
enum class DotPath { portable, avx2, vnni };

bool has_k_dot(DType t);  // Q4_K, Q5_K, Q6_K
// out[r] = row r · x for r0 <= r < r1 on the kernels of `path` (same bits).
void dot_rows_k(float* out, const Matrix& W, const QuantizedActivations& x, int64_t r0, int64_t r1, DotPath path);
// IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S: direct AVX-512 kernels (grids gathered, signs on x)
bool has_iq_direct_dot(DType t);
// T tokens (dot_rows_tokens). On the AVX2 path (!fast and quant_dot_avx2_available()): Q4_K
// and Q6_K regrouped 16 rows (pack_rows16) through the 16-row AVX2 kernels, each group's
// weights decoded once for up to 4 tokens, the rows outside whole groups (and Q5_K, and
// matrices not regrouped) as stored, each super-block decoded once for up to 8 tokens; returns true.
// On the fast path: Q6_K rows (regrouped 16 rows through the 16-row
// kernel, the rest one at a time), and Q4_K regrouped 16 rows (pack_rows16) with r0 a multiple of
// 16: each block's weights decoded once for up to 4 tokens, the bits of dot_rows_k on each token
// alone; returns true. Otherwise does nothing and returns false.
bool dot_rows_k_tokens(float* out, int64_t out_stride, const Matrix& W, const QuantizedActivations* xs, int T, int64_t r0,
                       int64_t r1, bool fast);

// The importance-matrix and ternary types (blocks/dot_iq.cpp), x as Q8_K: super-blocks unpacked
// to int8 with integer scales (portable) or decoded into vectors (AVX2, AVX-512), one float step
// per 256, the same bits on every path.
bool has_iq_dot(DType t);  // IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M, TQ1_0, TQ2_0
void dot_rows_iq(float* out, const Matrix& W, const QuantizedActivations& x, int64_t r0, int64_t r1, DotPath path);
// IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S: direct AVX-512 kernels (grids gathered, signs on x)
bool has_iq_direct_dot(DType t);
// T tokens (dot_rows_tokens): out[t * out_stride + r] = dot_rows_iq of xs[t], the same bits; on
// the fast path IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, TQ2_0 and TQ1_0 decode each super-block once for
// up to 16 tokens, on the AVX2 path (!fast and quant_dot_avx2_available()) all nine types for up to 8.
void dot_rows_iq_tokens(float* out, int64_t out_stride, const Matrix& W, const QuantizedActivations* xs, int T, int64_t r0,
                        int64_t r1, bool fast);

// The other block types (blocks/dot_unpacked.cpp): rows unpacked to int8 and lane scales first.
bool has_unpacked_dot(DType t);  // Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, IQ4_NL, IQ4_XS
void dot_rows_unpacked(float* out, const Matrix& W, const QuantizedActivations& x, int64_t r0, int64_t r1, DotPath path);
// Q2_K, Q3_K, IQ4_XS, IQ4_NL (blocks/dot_direct.cpp): decoded straight into registers; the bits
// of dot_rows_unpacked (which calls them on the fast and the AVX2 path). AVX-512 VNNI:
bool has_direct_dot(DType t);
void dot_rows_direct(float* out, const Matrix& W, const QuantizedActivations& x, int64_t r0, int64_t r1);
// AVX2 (quant_dot_avx2_available()), T tokens (xs in blocks of 32, W Linear, rows within it):
// out[t * out_stride + r] = dot_rows_unpacked of xs[t], each super-block (IQ4_NL: block pair)
// decoded once for up to 4 tokens.
void dot_rows_direct_avx2(float* out, int64_t out_stride, const Matrix& W, const QuantizedActivations* xs, int T, int64_t r0,
                          int64_t r1);

}  // namespace journey
