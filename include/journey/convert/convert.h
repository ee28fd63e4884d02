// journey convert and journey quantize as library calls: a Hugging Face directory to a GGUF file
// (as llama.cpp's convert_hf_to_gguf.py writes it, then llama-quantize at a quantized type), and
// a GGUF file re-typed as llama-quantize does (no importance matrix). Both stream one tensor at a
// time through write_model and choose types with the one planner of quantize_plan.h.
#pragma once
#include <filesystem>

#include "journey/convert/model_writer.h"
#include "journey/convert/quantize_plan.h"

namespace journey {

// dir: a Hugging Face model directory (config.json, model.safetensors[.index.json], tokenizer
// files). Throws ModelError naming the file and what journey does not convert.
void convert_hf_dir(const std::filesystem::path& dir, const std::filesystem::path& out, const QuantTarget& target,
                    const WriteProgress& progress = {});

// in: a GGUF file. The metadata is copied with its types; general.file_type and
// general.quantization_version are set (moved to the end, as llama-quantize leaves them).
// imatrix (may be empty): an importance matrix (imatrix.gguf or legacy .dat) as llama-quantize
// --imatrix reads it; its name (as given), first dataset, entry and chunk counts are written as
// the quantize.imatrix.* keys after general.file_type, as llama-quantize writes them.
void quantize_gguf(const std::filesystem::path& in, const std::filesystem::path& out, const QuantTarget& target,
                   const WriteProgress& progress = {}, const std::filesystem::path& imatrix = {});

}  // namespace journey
