#include "model_options.h"

#include "journey/errors.h"
#include "journey/kernels/kernels.h"

namespace journey::cli {

void add_model_options(CLI::App* cmd, ModelOptions& opts) {
    cmd->add_option("-m,--model", opts.path,
                    "Model: Hugging Face directory (config.json, model.safetensors, tokenizer), .gguf file, or llama2.c .bin");
    cmd->add_option("--tokenizer", opts.tokenizer,
                    "Tokenizer file instead of the model's: llama2.c tokenizer.bin (needed with a .bin model) or tokenizer.json");
    cmd->add_option("-t,--threads", opts.threads, "Threads for matrix products (default: one per core)")
        ->check(CLI::NonNegativeNumber);
}

std::unique_ptr<Model> load_model(const ModelOptions& opts) {
    set_num_threads(opts.threads);
    std::filesystem::path path = opts.path;
    if (path.empty()) path = default_model_path();
    if (path.empty()) throw UsageError("no model: give -m DIR (or set JOURNEY_MODEL)");
    return Model::load(path, LoadOptions{.tokenizer = true, .tokenizer_path = opts.tokenizer});
}

}  // namespace journey::cli
