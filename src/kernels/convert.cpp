#include "journey/kernels/convert.h"

#include <algorithm>
#include <stdexcept>

#include "journey/kernels/quant.h"

namespace journey {

void to_float(float* out, DType t, const std::byte* src, int64_t n) {
    switch (t) {
        case DType::F32:
            std::memcpy(out, src, static_cast<size_t>(n) * 4);
            return;
        case DType::F16:
        case DType::BF16: {
            const bool half = t == DType::F16;
            for (int64_t i = 0; i < n; ++i) {
                uint16_t h;
                std::memcpy(&h, src + 2 * i, 2);
                out[i] = half ? f16_to_f32(h) : bf16_to_f32(h);
            }
            return;
        }
        default:  // block-quantized: n must be whole blocks
            return dequantize_row(t, src, out, n);
    }
}

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
