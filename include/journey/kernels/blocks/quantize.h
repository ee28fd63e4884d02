// Encoding float rows into ggml's block types: the algorithms llama-quantize runs when it has no
// importance matrix (ggml's deterministic reference quantizers), so the same rows give the same
// bytes. Each type's bit layout is described in blocks/layout.h; blocks/dequantize.h is the other
// direction.
#pragma once
#include <cstdint>

#include "journey/formats/tensor.h"

namespace journey {

// True when journey can encode rows of type t (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1,
// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, TQ1_0, TQ2_0, MXFP4).
bool can_quantize(DType t);

// Encodes the n floats at x as type t into dst (dtype_bytes(t, n) bytes). n must be a whole
// number of blocks; throws std::invalid_argument otherwise or when !can_quantize(t).
// weights (n floats, may be null): an importance matrix's weight per column (Imatrix::weights_of);
// given, the K-quants run ggml's quantize_row_*_impl searches instead of the reference ones
// (as llama-quantize --imatrix does); the other types ignore it.
void quantize_row(DType t, const float* x, void* dst, int64_t n, const float* weights = nullptr);

}  // namespace journey
