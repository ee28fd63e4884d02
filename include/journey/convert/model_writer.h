// Writing a model as GGUF one tensor at a time (journey convert / quantize): each output tensor
// either copies its stored bytes or is produced row by row as floats and encoded into its type,
// so memory holds one tensor's output bytes and one row of floats, never the model as floats.
#pragma once
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "journey/formats/gguf_writer.h"
#include "journey/formats/tensor.h"

namespace journey {

struct OutTensor {
    std::string name;              // GGUF name
    std::vector<int64_t> shape;    // outermost first; rows = numel / shape.back()
    DType type;                    // as written
    const std::byte* raw = nullptr;  // when set: the bytes to copy as they are (already of `type`)
    // Otherwise: writes row r (shape.back() floats) to dst.
    std::function<void(int64_t r, float* dst)> row;
    // An importance matrix's weights, [n_mat][shape.back()] (n_mat: 1, or the experts of a
    // stacked tensor, whose rows divide evenly among them); empty: none.
    std::vector<float> imatrix = {};
    // `row` may run on several threads at once (reads only): the rows are then encoded in
    // parallel (the bytes do not depend on it).
    bool rows_in_parallel = false;
};

// Called after each tensor written: (tensors done, tensors in all).
using WriteProgress = std::function<void(size_t done, size_t total)>;

// Adds the tensors to w and writes the file (atomically), reporting each tensor to `progress`.
// The complete file is loaded as journey loads a model before it is renamed into place: a file
// the loader refuses is never written (ModelError with the loader's reason).
void write_model(GgufWriter& w, const std::vector<OutTensor>& tensors, const std::filesystem::path& out,
                 const WriteProgress& progress = {});

}  // namespace journey
