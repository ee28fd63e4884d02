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
    cmd->add_option("-c,--ctx-size", opts.ctx_size,
                    "Context: positions the KV cache holds (default 0 = the model's context, at most 4096)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--kv-type", opts.kv_type, "KV cache type: f32 (exact, default) or f16 (half the memory)")
        ->transform(CLI::CheckedTransformer(std::map<std::string, KvType>{{"f32", KvType::f32}, {"f16", KvType::f16}}));
}

SessionOptions session_options(const ModelOptions& opts) {
    return SessionOptions{.n_ctx = opts.ctx_size, .kv_type = opts.kv_type};
}

std::unique_ptr<Model> load_model(const ModelOptions& opts) {
    set_num_threads(opts.threads);
    std::filesystem::path path = opts.path;
    if (path.empty()) path = default_model_path();
    if (path.empty()) throw UsageError("no model: give -m DIR (or set JOURNEY_MODEL)");
    return Model::load(path, LoadOptions{.tokenizer = true, .tokenizer_path = opts.tokenizer});
}

}  // namespace journey::cli
