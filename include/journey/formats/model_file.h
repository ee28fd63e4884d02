// What a format reader (safetensors, GGUF, llama2.c) hands to the model code: tensors and
// metadata, described neutrally. The model code never parses bytes; readers check every
// offset, length and shape against the file before a TensorInfo is created.
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "journey/formats/mapped_file.h"
#include "journey/formats/tensor.h"

namespace journey {

struct ModelFile {
    std::string format;                 // "safetensors", "gguf", "llama2.c"
    std::filesystem::path path;         // the file or directory the user named
    nlohmann::json metadata;            // config.json, GGUF key/values, or llama2.c header
    std::map<std::string, TensorInfo> tensors;
    std::vector<std::shared_ptr<MappedFile>> mappings;  // keep the tensor data alive
    // Tensors a reader had to build (MXFP4 blocks joined from a checkpoint's *_blocks and *_scales).
    std::vector<std::shared_ptr<const std::vector<std::byte>>> owned;

    const TensorInfo* find(const std::string& name) const {
        auto it = tensors.find(name);
        return it == tensors.end() ? nullptr : &it->second;
    }
};

}  // namespace journey
