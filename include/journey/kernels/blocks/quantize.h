// Encoding float rows into ggml's block types: the algorithms llama-quantize runs when it has no
// importance matrix (ggml's deterministic reference quantizers), so the same rows give the same
// bytes. Each type's bit layout is described in blocks/layout.h; blocks/dequantize.h is the other
// direction.
#pragma once
#include <cstdint>

#include "journey/formats/tensor.h"

namespace journey {

// Encodes the n floats at x as type t into dst (dtype_bytes(t, n) bytes). n must be a whole
// number of blocks; throws std::invalid_argument otherwise, and for IQ2_XXS, IQ2_XS and IQ1_S
// without weights (ggml's searches need them). Every DType is encodable.
// weights (n floats, may be null): an importance matrix's weight per column (Imatrix::weights_of);
// given, the K-quants (Q2_K … Q6_K) and Q4_0, Q4_1, Q5_0, Q5_1 run ggml's quantize_row_*_impl
// searches instead of the reference ones and the i-quants (IQ1-IQ4) weigh their searches with it
// (as llama-quantize --imatrix does); Q8_0, TQ1_0, TQ2_0, MXFP4 and the float types ignore it,
// as ggml does. n is the whole row: the legacy types' weights use the row's mean square.
void quantize_row(DType t, const float* x, void* dst, int64_t n, const float* weights = nullptr);

}  // namespace journey
