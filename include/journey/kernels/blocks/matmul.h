// matmul for block-quantized weights (every DType with blocks), used as stored: never expanded
// to F32 as a whole. kernels.cpp's matmul() dispatches here; kept apart so the F32/F16 paths stay simple.
#pragma once

#include <span>

#include "journey/kernels/matrix.h"

namespace journey {

// out[T, n_out] = x[T, n_in] · Wᵀ for a Linear-layout quantized W [out, in] (in a whole number
// of blocks). One token: x is quantized to Q8_0 (K-quants: Q8_K) and each output row is an
// integer dot (blocks/dot.h).
// A prompt (T > 1, or prompt_kernels): gemm (gemv.h) dequantizes a 64-row panel at a time, and
// x stays float; except Q4_K and MXFP4, whose prompts take the one token's integer dots token by token
// (so a row has the same bits in a prompt and alone). Throws std::logic_error for a Conv1D layout.
void matmul_quantized(float* out, const float* x, const Matrix& W, int T, bool prompt_kernels = false);
// T tokens, each row the bits of matmul_quantized on that token alone (kernels.h: matmul_tokens).
void matmul_quantized_tokens(float* out, const float* x, const Matrix& W, int T);
// matmul_many (kernels.h) when every W is block-quantized and Linear: every row of each x as one
// token (matmul_quantized_tokens' bits), all products in one parallel loop.
struct Product;
void matmul_quantized_many(std::span<const Product> products);

}  // namespace journey
