#include "journey/kernels/convert.h"

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

}  // namespace journey
