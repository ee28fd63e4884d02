// Prompts of the importance-matrix types as integer products: x at 16 bits, weights as decoded
// integers, VNNI vpdpwssd (blocks/gemm_iq16.cpp; matmul_quantized dispatches every prompt of
// these types here).
//
// Every super-block of 256 weights of these types is exactly d_w · w_i with w_i small integers
// (the grid value times its sign times the integer sub-block scale) and d_w one float (the f16 d
// times a power of 2), so a row · x is Σ_k d_w[k] · d_x[k] · Σ_i w_i · q_i with x rounded per
// super-block of 256 to int16 q with one float scale d_x. The integer sums are exact, hence the
// bits do not depend on the kernel, the tiling, the thread count or T.
#pragma once
#include <cstdint>

#include "journey/kernels/matrix.h"

namespace journey {

// IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ4_XS, IQ1_S, IQ1_M, TQ1_0, TQ2_0 (not IQ4_NL: a
// float scale per 32).
bool has_iq16(DType t);

// The largest |w_i| a super-block of type t can decode to (the int32 bound below uses it).
int iq16_max_weight(DType t);

// One super-block of 256 (the type's block bytes) as integers: w[i] and the float d_w with
// d_w · w[i] == the dequantized value exactly (tests check against dequantize_row).
void iq16_decode(DType t, const std::byte* block, int16_t w[256], float& d_w);

// The same integers and d_w by the AVX2 decoder of type t, where there is one (IQ2_XXS, IQ3_S,
// IQ4_XS, TQ2_0; false otherwise, w untouched). The caller checks the CPU (avx2_kernels()).
bool iq16_decode_avx2(DType t, const std::byte* block, int16_t w[256], float& d_w);

// One token's x[n] (n a multiple of 256) as q[n] (int16) and one scale per 256 (d_x[n / 256]),
// q = round(x / d_x), chosen so that Σ_i |w_i q_i| < 2^31 for any super-block of type t
// (gemm_iq16.cpp proves it), so one int32 per super-block holds the exact sum.
void iq16_quantize_x(DType t, const float* x, int64_t n, int16_t* q, float* d_x);

// out[T, n_out] = x[T, n_in] · Wᵀ for these types, W Linear: per row, token and super-block k
// in order, acc = fma(float(isum_k), d_w[k] · d_x[k], acc) from acc = 0, isum_k the exact
// integer sum. fast: the AVX-512 VNNI kernel (false: the portable one; the same bits).
void matmul_iq16(float* out, const float* x, const Matrix& W, int T, bool fast);

}  // namespace journey
