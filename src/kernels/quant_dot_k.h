// Integer dots of K-quant rows with quantized activations (quant_dot_k.cpp); dot_rows()
// in quant_dot.cpp dispatches here.
#pragma once
#include "journey/kernels/quant_dot.h"

namespace journey {

bool has_k_dot(DType t);  // Q4_K, Q6_K
// out[r] = row r · x for r0 <= r < r1; fast: the AVX-512 VNNI kernels (same bits).
void dot_rows_k(float* out, const Matrix& W, const QuantizedActivations& x, int64_t r0, int64_t r1, bool fast);

}  // namespace journey
