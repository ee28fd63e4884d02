// journey convert -m HF_DIR -o OUT.gguf [--type T]: a Hugging Face directory to a GGUF file in
// one step. At f32/f16/bf16 the file is what llama.cpp's convert_hf_to_gguf.py writes (same
// metadata, tokenizer, tensor names, order and bytes); at a quantized type it is what
// llama-quantize then makes of the F32 file. The conversion is library code (src/convert/);
// this file holds the flags and the progress bar.
#include <filesystem>
#include <memory>

#include "commands.h"
#include "journey/convert/convert.h"
#include "journey/errors.h"
#include "progress.h"

namespace journey::cli {
namespace {

struct ConvertOptions {
    std::string model, out, type = "f16";
};

std::string lower(std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

void run(const ConvertOptions& opt) {
    const QuantTarget* target = find_quant_target(lower(opt.type));
    if (!target)
        throw UsageError("--type: unknown type '" + excerpt(opt.type, 40) + "' (journey convert writes " +
                         lower(quant_target_names()) + ")");
    const std::filesystem::path dir = opt.model;
    if (!std::filesystem::is_directory(dir))
        throw UsageError("-m: '" + dir.string() + "' is not a directory (journey convert reads a Hugging Face model directory)");
    convert_hf_dir(dir, opt.out, *target, progress_bar("convert", "tensors"));
}

}  // namespace

void register_convert(CLI::App& app) {
    auto opt = std::make_shared<ConvertOptions>();
    CLI::App* cmd = app.add_subcommand("convert", "Convert a Hugging Face model directory to a GGUF file (optionally quantized)");
    cmd->add_option("-m,--model", opt->model, "The Hugging Face directory (config.json, *.safetensors, tokenizer files)")->required();
    cmd->add_option("-o,--output", opt->out, "The GGUF file to write (written whole, then renamed into place)")->required();
    cmd->add_option("--type", opt->type,
                    "f32, f16, bf16 (as convert_hf_to_gguf.py), or q8_0, q4_0, q4_k_m, q5_k_m, q6_k, ... (then as llama-quantize)")
        ->capture_default_str();
    cmd->callback([opt] { run(*opt); });
}

}  // namespace journey::cli
