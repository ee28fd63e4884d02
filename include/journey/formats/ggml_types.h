// The ggml tensor types by number, as GGUF files name them: the whole table of ggml.h (so a
// refusal can name any type), with each type's block layout and whether journey reads it.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

#include "journey/formats/tensor.h"

namespace journey {

struct GgmlType {
    uint32_t id;                // the number in a GGUF tensor table
    std::string_view name;      // ggml's name, e.g. "Q4_K"
    uint32_t block;             // elements per block (1 for plain numbers)
    uint32_t block_bytes;       // bytes per block
    std::optional<DType> dtype; // set when journey reads the type
    std::string_view why_not;   // otherwise: why not, and what to do instead
};

// The row for a type number, or nullptr when ggml has never had that number.
const GgmlType* ggml_type(uint32_t id);
// The row for a DType journey reads (always exists).
const GgmlType& ggml_type_of(DType t);

}  // namespace journey
