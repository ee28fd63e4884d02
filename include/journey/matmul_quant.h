// matmul for block-quantized weights (Q8_0, Q4_0), used as stored: never expanded to F32 as a
// whole. kernels.cpp's matmul() dispatches here; kept apart so the F32/F16 paths stay simple.
#pragma once

#include "journey/weights.h"

namespace journey {

// out[T, n_out] = x[T, n_in] · Wᵀ for a Linear-layout quantized W [out, in] (in a multiple of
// 32). T == 1: x is quantized to Q8_0 and each output row is an integer dot (quant_dot.h).
// T > 1: a few rows at a time are dequantized into a small scratch and multiplied with BLAS
// (x stays float). Throws std::logic_error for a Conv1D layout.
void matmul_quantized(float* out, const float* x, const Matrix& W, int T);

}  // namespace journey
