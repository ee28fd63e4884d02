#include "journey/formats/tensor.h"

#include "journey/formats/ggml_types.h"

namespace journey {

std::string_view dtype_name(DType t) { return ggml_type_of(t).name; }

uint64_t dtype_block(DType t) { return ggml_type_of(t).block; }

size_t dtype_bytes(DType t, uint64_t n) {
    const GgmlType& g = ggml_type_of(t);
    return n % g.block ? 0 : n / g.block * g.block_bytes;
}

int64_t TensorInfo::numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

}  // namespace journey
