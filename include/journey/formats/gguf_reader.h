// GGUF (llama.cpp's model format), versions 2 and 3:
//   "GGUF" u32 version, u64 n_tensors, u64 n_kv,
//   n_kv x { string key, u32 value type, value },          string = u64 length + bytes
//   n_tensors x { string name, u32 n_dims, u64 ne[n_dims] (innermost first), u32 ggml type,
//                 u64 offset (from the start of the data section) },
//   padding to general.alignment (default 32), then the data section.
// All numbers little-endian. The file is untrusted: every length, count, shape and offset is
// checked against the file before anything is allocated or a TensorInfo is made.
#pragma once
#include <cstdint>
#include <filesystem>

#include "journey/formats/model_file.h"

namespace journey {

namespace gguf {

enum class ValueType : uint32_t {
    UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6, BOOL = 7,
    STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};

// ggml tensor type ids for the types journey reads (others are rejected).
constexpr uint32_t kTypeF32 = 0, kTypeF16 = 1, kTypeQ4_0 = 2, kTypeQ8_0 = 8, kTypeBF16 = 30;

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr uint32_t kDefaultAlignment = 32;
constexpr uint32_t kMaxDims = 4;

}  // namespace gguf

// Reads a GGUF file: metadata key/values become ModelFile::metadata (scalars as JSON numbers,
// bools and strings; arrays, nested ones included, as JSON arrays), tensors become TensorInfo
// views into the mapping with outermost-first shapes (ne reversed).
// Throws ModelError naming the file and the problem.
ModelFile read_gguf(const std::filesystem::path& path);

}  // namespace journey
