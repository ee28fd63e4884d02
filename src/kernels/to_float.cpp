// Stored numbers to float (to_float.h): one entry over dequantize_row, and transpose16.
#include "journey/kernels/to_float.h"

#include <algorithm>
#include <cstring>

#include "journey/kernels/blocks/dequantize.h"

namespace journey {

// The same conversions as dequantize_row (F32 copied, F16/BF16 widened exactly, blocks as ggml).
void to_float(float* out, DType t, const std::byte* src, int64_t n) { dequantize_row(t, src, out, n); }

// In tiles of 32 x 32 (64-byte lines on both sides), so each line read or written is used whole.
void transpose16(const std::byte* src, int64_t rows, int64_t cols, std::byte* dst) {
    constexpr int64_t B = 32;
    for (int64_t r0 = 0; r0 < rows; r0 += B)
        for (int64_t c0 = 0; c0 < cols; c0 += B) {
            const int64_t r1 = std::min(rows, r0 + B), c1 = std::min(cols, c0 + B);
            for (int64_t c = c0; c < c1; ++c)
                for (int64_t r = r0; r < r1; ++r)
                    std::memcpy(dst + 2 * static_cast<size_t>(c * rows + r), src + 2 * static_cast<size_t>(r * cols + c), 2);
        }
}

}  // namespace journey
