// The neutral description of one tensor, as every format reader produces it.
// Convention: shape is outermost-first (PyTorch order), data is row-major and contiguous,
// so a 2-D tensor of shape {rows, cols} stores row r at data + r * row_bytes(cols).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace journey {

// The number formats journey computes with. Block-quantized types follow ggml's block layouts
// (formats/ggml_types.h has their sizes, kernels/blocks/layout.h their bit layouts).
enum class DType {
    F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS,
    // the importance-matrix lattice types, the ternary types, MXFP4
    IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M, TQ1_0, TQ2_0, MXFP4
};

std::string_view dtype_name(DType t);
// Bytes taken by n consecutive elements (n must be a multiple of the block size for Q types).
// Returns 0 when n is not a whole number of blocks.
size_t dtype_bytes(DType t, uint64_t n);
// Elements per block: 1 for float types, 32 for the legacy types, IQ4_NL and MXFP4, 256 for
// K-quants, IQ4_XS, the IQ1-IQ3 types and TQ1_0/TQ2_0.
uint64_t dtype_block(DType t);

struct TensorInfo {
    std::string name;
    DType dtype = DType::F32;
    std::vector<int64_t> shape;       // outermost first
    const std::byte* data = nullptr;  // into a read-only mapping, owned by the ModelFile
    size_t nbytes = 0;

    int64_t numel() const;
    int64_t dim(size_t i) const { return shape.at(i); }
};

}  // namespace journey
