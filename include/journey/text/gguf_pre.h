// The converter's side of tokenizer_from_gguf.cpp's pre-tokenizer table (tokenizer.ggml.pre).
#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace journey {

// The tokenizer.ggml.pre value of a Hugging Face byte-level BPE tokenizer.json (`tokenizer_json`),
// recognised from its pre_tokenizer pipeline (llama.cpp's converter hashes the tokens of a test
// text against known models; journey looks at the pipeline), and always one of the values
// load_tokenizer_from_gguf reads. family: the Hugging Face model_type. Throws ModelError naming
// `file` for a pipeline it does not recognise rather than guess.
std::string gguf_pre_of_tokenizer_json(const nlohmann::json& tokenizer_json, std::string_view family, const std::string& file);

}  // namespace journey
