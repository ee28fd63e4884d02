#include "journey/model.h"

#include <spdlog/spdlog.h>

#include "journey/errors.h"
#include "journey/safetensors_reader.h"
#include "journey/tokenizer_loader.h"

namespace journey {
namespace fs = std::filesystem;

namespace {

nlohmann::json read_config_json(const fs::path& file) {
    if (!fs::exists(file)) throw ModelError(file.parent_path().string() + ": no config.json (a Hugging Face model directory needs one)");
    MappedFile map(file);
    const char* text = reinterpret_cast<const char*>(map.data());
    auto j = nlohmann::json::parse(text, text + map.size(), nullptr, false);
    if (j.is_discarded()) throw ModelError(file.string() + ": not valid JSON");
    return j;
}

fs::path find_weights(const fs::path& dir) {
    for (const char* name : {"model.safetensors", "model.safetensors.index.json"})
        if (fs::exists(dir / name)) return dir / name;
    throw ModelError(dir.string() + ": no weights (expected model.safetensors or model.safetensors.index.json)");
}

// The tokenizer stored beside the weights: tokenizer.json, or GPT-2's vocab.json + merges.txt.
std::unique_ptr<Tokenizer> load_dir_tokenizer(const fs::path& dir) {
    if (!fs::exists(dir / "tokenizer.json") && !(fs::exists(dir / "vocab.json") && fs::exists(dir / "merges.txt")))
        throw ModelError(dir.string() + ": no tokenizer (expected tokenizer.json, or vocab.json and merges.txt)");
    return load_tokenizer_dir(dir.string());
}

}  // namespace

std::unique_ptr<Model> Model::load(const fs::path& path, const LoadOptions& opts) {
    if (!fs::exists(path)) throw ModelError(path.string() + ": no such file or directory");
    fs::path dir = path, weights;
    if (fs::is_directory(path)) {
        weights = find_weights(dir);
    } else {
        dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
        weights = path;
    }
    const fs::path config_path = dir / "config.json";
    const nlohmann::json config_json = read_config_json(config_path);
    ModelConfig config = config_from_hf(config_json, config_path.string());
    ModelFile file = read_safetensors(weights);
    file.metadata = config_json;
    std::unique_ptr<Tokenizer> tok;
    if (opts.tokenizer) tok = load_dir_tokenizer(dir);
    spdlog::debug("loaded {}: {} layers, {} heads, n_embd {}", weights.string(), config.n_layer, config.n_head, config.n_embd);
    auto model = std::make_unique<Model>(std::move(file), config, std::move(tok));
    model->source_ = path;
    return model;
}

Model::Model(ModelFile file, ModelConfig config, std::unique_ptr<Tokenizer> tokenizer)
    : source_(file.path), file_(std::move(file)), config_(config), weights_(Weights::bind(file_, config_)), tokenizer_(std::move(tokenizer)) {
    if (tokenizer_ && tokenizer_->n_vocab() > config_.n_vocab)
        throw ModelError(file_.path.string() + ": the tokenizer has " + std::to_string(tokenizer_->n_vocab()) +
                         " tokens but the weights only have " + std::to_string(config_.n_vocab) +
                         " embedding rows (the tokenizer's vocabulary must not be larger)");
}

const Tokenizer& Model::tokenizer() const {
    if (!tokenizer_) throw ModelError(file_.path.string() + ": loaded without a tokenizer");
    return *tokenizer_;
}

}  // namespace journey
