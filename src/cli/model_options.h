// Options every model-running subcommand shares: which model (-m), which tokenizer when the
// model has none (--tokenizer), and how many threads (-t).
#pragma once
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "journey/model/model.h"
#include "journey/model/session.h"

namespace journey::cli {

struct ModelOptions {
    std::string path;       // -m: HF directory, .gguf, llama2.c .bin; empty: default_model_path()
    std::string tokenizer;  // --tokenizer: tokenizer.bin (llama2.c) or tokenizer.json instead of the model's
    int threads = 0;   // -t: 0 = one per hardware core
    int ctx_size = 0;  // -c: positions the KV cache holds; 0 = the model's context, at most 4096
    KvType kv_type = KvType::f32;  // --kv-type f32|f16
};
void add_model_options(CLI::App* cmd, ModelOptions& opts);

// The session a command runs: -c and --kv-type.
SessionOptions session_options(const ModelOptions& opts);

// Sets the thread count, resolves the default model, loads it (with its tokenizer).
// Throws UsageError when no -m is given and there is no default model.
std::unique_ptr<Model> load_model(const ModelOptions& opts);

}  // namespace journey::cli
