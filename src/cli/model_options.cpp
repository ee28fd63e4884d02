#include "model_options.h"

#include <algorithm>
#include <thread>

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

namespace {

// More threads than cores only wait on each other; far more cannot even be created (-t 100000
// would abort in the pool). 4 per core leaves room for tests of oversubscription.
void check_threads(int threads) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int cap = std::max(16, 4 * cores);
    if (threads > cap)
        throw UsageError("-t " + std::to_string(threads) + ": at most " + std::to_string(cap) + " threads (4 per core, " +
                         std::to_string(cores) + " cores here)");
}

}  // namespace

std::unique_ptr<Model> load_model(const ModelOptions& opts) {
    check_threads(opts.threads);
    set_num_threads(opts.threads);
    std::filesystem::path path = opts.path;
    if (path.empty()) path = default_model_path();
    if (path.empty()) throw UsageError("no model: give -m DIR (or set JOURNEY_MODEL)");
    return Model::load(path, LoadOptions{.tokenizer = true, .tokenizer_path = opts.tokenizer});
}

}  // namespace journey::cli
