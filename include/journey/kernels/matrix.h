// The plain views the kernels compute on: a 2-D weight matrix as stored in a mapping, a
// 1-D float vector, and how rope pairs a head's dimensions. They own nothing; the model binds them (model/weights.h), the kernels read them.
#pragma once
#include <cstddef>
#include <cstdint>

#include "journey/formats/tensor.h"

namespace journey {

// How a 2-D weight maps inputs to outputs.
//   Linear: stored [out, in] (PyTorch nn.Linear, llama.cpp, llama2.c): y = x · Wᵀ
//   Conv1D: stored [in, out] (GPT-2's Conv1D):                          y = x · W
enum class Layout { Linear, Conv1D };

struct Matrix {
    DType dtype = DType::F32;
    const std::byte* data = nullptr;  // row-major rows x cols, in the mapping
    int64_t rows = 0, cols = 0;       // as stored
    Layout layout = Layout::Linear;
    // Q4_K and Q6_K, optional: the same blocks regrouped 16 rows at a time (pack_rows16,
    // blocks/dot.h) for the VNNI and AVX2 dots and prompts (weights.cpp regroups Q4_K and Q6_K
    // where VNNI runs, Q4_K where AVX2 does); everything else reads data.
    const std::byte* rows16 = nullptr;

    int64_t n_in() const { return layout == Layout::Linear ? cols : rows; }
    int64_t n_out() const { return layout == Layout::Linear ? rows : cols; }
    explicit operator bool() const { return data != nullptr; }
};

// A 1-D float parameter (norm gain/bias, matmul bias). Always F32: a view into the mapping,
// or into Weights::converted_ when the file stores it as F16/BF16.
struct Vector {
    const float* data = nullptr;
    int64_t n = 0;
    explicit operator bool() const { return data != nullptr; }
};

// How rotary embeddings pair the dimensions of a head: rotate (2i, 2i+1) pairs (GGUF's
// "normal" rope, llama2.c) or (i, i + head_dim/2) (Hugging Face's rotate_half); none without rope.
enum class RopePairing { none, interleaved, half };

}  // namespace journey
