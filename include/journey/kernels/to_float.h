// Stored numbers to float, for any dtype (F32, F16, BF16, the block types), and the 2-byte
// transpose the loaders use. The conversions themselves: half.h (F16, BF16) and
// blocks/dequantize.h (block types).
#pragma once
#include <cstddef>
#include <cstdint>

#include "journey/formats/tensor.h"

namespace journey {

// out[n] = the n elements of type t starting at src (for block types, n whole blocks).
void to_float(float* out, DType t, const std::byte* src, int64_t n);

// dst[c, r] = src[r, c] for a rows x cols matrix of 2-byte elements (F16/BF16 bits moved, never
// converted): a Conv1D [in, out] matrix rewritten as Linear [out, in].
void transpose16(const std::byte* src, int64_t rows, int64_t cols, std::byte* dst);

}  // namespace journey
