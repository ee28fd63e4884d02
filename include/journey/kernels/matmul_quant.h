// matmul for block-quantized weights (every DType with blocks), used as stored: never expanded
// to F32 as a whole. kernels.cpp's matmul() dispatches here; kept apart so the F32/F16 paths stay simple.
#pragma once

#include "journey/kernels/matrix.h"

namespace journey {

// out[T, n_out] = x[T, n_in] · Wᵀ for a Linear-layout quantized W [out, in] (in a whole number
// of blocks). One token: for types with an integer kernel (has_integer_dot), x is quantized
// to Q8_0 and each output row is an integer dot (quant_dot.h); for the others each row is
// dequantized exactly and multiplied with the float x.
// A prompt (T > 1, or prompt_kernels): gemm (gemv.h) dequantizes a 64-row panel at a time, and
// x stays float. Throws std::logic_error for a Conv1D layout.
void matmul_quantized(float* out, const float* x, const Matrix& W, int T, bool prompt_kernels = false);

// Whether one-token products of type t take the integer dots of quant_dot.h.
bool has_integer_dot(DType t);

}  // namespace journey
