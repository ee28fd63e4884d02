#include "journey/formats/tensor.h"

namespace journey {

std::string_view dtype_name(DType t) {
    switch (t) {
        case DType::F32: return "F32";
        case DType::F16: return "F16";
        case DType::BF16: return "BF16";
        case DType::Q8_0: return "Q8_0";
        case DType::Q4_0: return "Q4_0";
    }
    return "?";
}

uint64_t dtype_block(DType t) {
    return (t == DType::Q8_0 || t == DType::Q4_0) ? 32 : 1;
}

size_t dtype_bytes(DType t, uint64_t n) {
    switch (t) {
        case DType::F32: return n * 4;
        case DType::F16:
        case DType::BF16: return n * 2;
        case DType::Q8_0: return n % 32 ? 0 : n / 32 * 34;  // f16 scale + 32 x int8
        case DType::Q4_0: return n % 32 ? 0 : n / 32 * 18;  // f16 scale + 16 bytes of nibbles
    }
    return 0;
}

int64_t TensorInfo::numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

}  // namespace journey
