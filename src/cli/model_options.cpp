#include "model_options.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "file_kind.h"
#include "journey/errors.h"
#include "journey/kernels/kernels.h"
#include "numeric_options.h"

namespace journey::cli {

namespace fs = std::filesystem;

void add_model_options(CLI::App* cmd, ModelOptions& opts) {
    cmd->add_option("-m,--model", opts.path,
                    "Model: Hugging Face directory (config.json, model.safetensors, tokenizer), .gguf file, or "
                    "llama2.c .bin (default: $JOURNEY_MODEL, else the default model)");
    cmd->add_option("--tokenizer", opts.tokenizer,
                    "Tokenizer file instead of the model's: llama2.c tokenizer.bin (needed with a .bin model) or tokenizer.json");
    cmd->add_option("-t,--threads", opts.threads, "Threads for matrix products (default: one per core)")
        ->check(integer_at_least(1));
    cmd->add_option("-c,--ctx-size", opts.ctx_size,
                    "Context: positions the KV cache holds (default: the model's context, at most 4096)")
        ->check(integer_at_least(1));
    cmd->add_option("--kv-type", opts.kv_type, "KV cache type: f32 (exact, default) or f16 (half the memory)")
        ->transform(CLI::CheckedTransformer(std::map<std::string, KvType>{{"f32", KvType::f32}, {"f16", KvType::f16}}));
    auto* mmap = cmd->add_flag("--mmap", opts.mmap,
                               "Read the weight matrices in place from the model file's mapping: the fastest load "
                               "(default for next, trace, score, info)");
    auto* no_mmap = cmd->add_flag("--no-mmap", opts.no_mmap,
                                  "Copy the matrices one token reads into memory of our own (huge pages) at load: "
                                  "faster tokens (default for generate, chat, bench)");
    mmap->excludes(no_mmap);
}

bool weights_in_place(const ModelOptions& opts, Placement by_default) {
    if (opts.mmap) return true;
    if (opts.no_mmap) return false;
    return by_default == Placement::in_place;
}

const char* kv_type_name(KvType t) { return t == KvType::f16 ? "f16" : "f32"; }

SessionOptions session_options(const ModelOptions& opts) {
    return SessionOptions{.n_ctx = opts.ctx_size, .kv_type = opts.kv_type};
}

ModelPath resolve_model_path(const ModelOptions& opts) {
    if (!opts.path.empty()) return {opts.path, "-m"};
    if (const char* env = std::getenv("JOURNEY_MODEL"); env && *env) return {env, "$JOURNEY_MODEL"};
    fs::path path = default_model_path();
    if (path.empty()) throw UsageError("-m: no model given and no default model found (give -m MODEL or set JOURNEY_MODEL)");
    return {path, "the default model"};
}

void check_model_path(const fs::path& path, const std::string& source) {
    const FileKind kind = sniff(path);
    const std::string where = (source.empty() ? "" : source + " ") + path.string();
    if (kind == FileKind::missing) throw ModelError(where + ": no such file or directory");
    const std::string name = path.filename().string();
    if (kind == FileKind::json && !name.ends_with(".index.json")) {
        const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
        throw ModelError(where + ": is a JSON file, not a model: pass the model directory (" + dir.string() + ")");
    }
    if (kind == FileKind::gguf && path.extension() != ".gguf")
        throw ModelError(where + ": is a GGUF model file; name it with the .gguf extension");
}

void check_tokenizer_path(const fs::path& path) {
    const FileKind kind = sniff(path);
    const std::string where = "--tokenizer " + path.string();
    if (kind == FileKind::missing) throw ModelError(where + ": no such file");
    if (kind == FileKind::gguf)
        throw ModelError(where + ": is a GGUF model file, not a tokenizer (a GGUF carries its own: pass it as -m)");
    if (kind == FileKind::safetensors || kind == FileKind::directory)
        throw ModelError(where + ": is " + describe(kind) +
                         ", not a tokenizer (expected tokenizer.json or a llama2.c tokenizer.bin)");
    if (kind == FileKind::json && path.extension() != ".json")
        throw ModelError(where + ": is a JSON file; name it with the .json extension (tokenizer.json)");
    if (kind != FileKind::json && path.extension() == ".json")
        throw ModelError(where + ": is not JSON (expected a Hugging Face tokenizer.json)");
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

std::unique_ptr<Model> load_model(const ModelOptions& opts, Placement by_default) {
    check_threads(opts.threads);
    set_num_threads(opts.threads);
    const ModelPath m = resolve_model_path(opts);
    if (!opts.tokenizer.empty()) check_tokenizer_path(opts.tokenizer);
    if (m.source == "-m") check_model_path(m.path, "-m");
    try {
        if (m.source != "-m") check_model_path(m.path, "");
        return Model::load(m.path, LoadOptions{.tokenizer = true, .tokenizer_path = opts.tokenizer, .mmap = weights_in_place(opts, by_default)});
    } catch (const ModelError& e) {
        // A path the user did not type: say where it came from.
        if (m.source != "$JOURNEY_MODEL") throw;
        throw ModelError("$JOURNEY_MODEL: " + std::string(e.what()));
    }
}

}  // namespace journey::cli
