// The tokenizer of a Hugging Face directory as GGUF metadata (tokenizer.ggml.*, chat template),
// as llama.cpp's convert_hf_to_gguf.py writes it.
#pragma once
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "journey/formats/gguf_writer.h"

namespace journey {

// family: the GGUF architecture's HF model_type ("llama", "qwen2", ...); config: config.json.
// Throws ModelError naming the file for a tokenizer journey does not convert.
void convert_vocab(GgufWriter& w, const std::filesystem::path& dir, const std::string& family,
                   const nlohmann::json& config);

}  // namespace journey
