// Reads Hugging Face safetensors weights into the neutral ModelFile description.
// Format: 8-byte little-endian header length N, N bytes of JSON
//   {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, "__metadata__": {..}}
// then the data; offsets are relative to the end of the header.
#pragma once
#include <filesystem>

#include "journey/formats/model_file.h"

namespace journey {

// `path` is a `*.safetensors` file, or a sharded checkpoint's `*.safetensors.index.json`
// ({"weight_map": {"tensor": "shard file"}}). Every offset, length, dtype and overlap is
// checked; problems throw ModelError naming the file and the tensor. Supported dtypes: F32,
// F16, BF16, and U8 as the halves of an MXFP4 matrix (W_blocks [..., nb, 16] and W_scales
// [..., nb], gpt-oss's checkpoints), joined into one MXFP4 tensor W [..., nb * 32] in ggml's
// block layout (ModelFile::owned holds its bytes). The returned ModelFile has format
// "safetensors" and empty metadata.
ModelFile read_safetensors(const std::filesystem::path& path);

}  // namespace journey
