// Options every model-running subcommand shares: which model (-m), which tokenizer when the
// model has none (--tokenizer), and how many threads (-t).
#pragma once
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "journey/model/model.h"

namespace journey::cli {

struct ModelOptions {
    std::string path;       // -m: HF directory, .gguf, llama2.c .bin; empty: default_model_path()
    std::string tokenizer;  // --tokenizer: tokenizer.bin (llama2.c) or tokenizer.json instead of the model's
    int threads = 0;   // -t: 0 = one per hardware core
};
void add_model_options(CLI::App* cmd, ModelOptions& opts);

// Sets the thread count, resolves the default model, loads it (with its tokenizer).
// Throws UsageError when no -m is given and there is no default model.
std::unique_ptr<Model> load_model(const ModelOptions& opts);

}  // namespace journey::cli
