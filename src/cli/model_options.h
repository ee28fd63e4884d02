// Options every model-running subcommand shares: which model (-m), which tokenizer when the
// model has none (--tokenizer), and how many threads (-t).
#pragma once
#include <filesystem>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "journey/model/model.h"
#include "journey/model/session.h"

namespace journey::cli {

struct ModelOptions {
    std::string path;       // -m: HF directory, .gguf, llama2.c .bin; empty: $JOURNEY_MODEL, then the default model
    std::string tokenizer;  // --tokenizer: tokenizer.bin (llama2.c) or tokenizer.json instead of the model's
    int threads = 0;   // -t: 0 = one per hardware core
    int ctx_size = 0;  // -c: positions the KV cache holds; 0 = the model's context, at most 4096
    KvType kv_type = KvType::f32;  // --kv-type f32|f16
    bool mmap = false;     // --mmap: the weight matrices read in place from the file (LoadOptions::mmap)
    bool no_mmap = false;  // --no-mmap: the matrices one token reads copied at load
};

// Where a command reads the weight matrices from unless --mmap / --no-mmap says: copied at load
// for the commands that run many one-token steps (generate, chat, bench: the copy pays for
// itself in tokens), in place for those that run one pass or none (next, trace, score, info,
// tokenize: a copy would be read once, as the file is).
enum class Placement { copy, in_place };
// The choice after the flags: true when the matrices stay in the file's mapping.
bool weights_in_place(const ModelOptions& opts, Placement by_default);

// The session a command runs: -c and --kv-type.
SessionOptions session_options(const ModelOptions& opts);
// "f32" or "f16", as --kv-type spells it (info and bench --json report it so).
const char* kv_type_name(KvType t);
void add_model_options(CLI::App* cmd, ModelOptions& opts);

// Where the model is, and who said so ("-m", "$JOURNEY_MODEL" or "the default model"), for
// error messages. Throws UsageError when nothing names a model and there is no default.
struct ModelPath {
    std::filesystem::path path;
    std::string source;
};
ModelPath resolve_model_path(const ModelOptions& opts);

// Refuses, with what was expected, a -m or --tokenizer file whose content is the wrong kind
// (a config.json as -m, a GGUF as --tokenizer). `source` names the flag.
void check_model_path(const std::filesystem::path& path, const std::string& source);
void check_tokenizer_path(const std::filesystem::path& path);

// Sets the thread count, resolves the model, loads it (with its tokenizer), the weights placed as
// weights_in_place says. A failure names $JOURNEY_MODEL when the path came from there.
std::unique_ptr<Model> load_model(const ModelOptions& opts, Placement by_default);

}  // namespace journey::cli
