#include "journey/model/model.h"

#include <spdlog/spdlog.h>

#include "journey/errors.h"
#include "journey/formats/gguf_reader.h"
#include "journey/formats/json_file.h"
#include "journey/formats/llama2c_reader.h"
#include "journey/formats/safetensors_reader.h"
#include "journey/model/rope_freq.h"
#include "journey/text/tokenizer_loader.h"

namespace journey {
namespace fs = std::filesystem;

namespace {

// What Model::load needs from any format: the tensors, their configuration, a tokenizer.
struct Parts {
    ModelFile file;
    ModelConfig config;
    std::unique_ptr<Tokenizer> tokenizer;
};

nlohmann::json read_config_json(const fs::path& file) {
    if (!fs::exists(file)) throw ModelError(file.parent_path().string() + ": no config.json (a Hugging Face model directory needs one)");
    return read_json_file(file);
}

fs::path find_weights(const fs::path& dir) {
    for (const char* name : {"model.safetensors", "model.safetensors.index.json"})
        if (fs::exists(dir / name)) return dir / name;
    throw ModelError(dir.string() + ": no weights (expected model.safetensors or model.safetensors.index.json)");
}

// The tokenizer: a file the user named (opts.tokenizer_path), else the model's own (open_tokenizer).
std::unique_ptr<Tokenizer> model_tokenizer(const LoadOptions& opts, const ModelConfig& config, TokenizerSpec own) {
    if (opts.tokenizer_path.empty()) return open_tokenizer(own);
    return open_tokenizer(TokenizerSpec::at(opts.tokenizer_path, config.n_vocab));
}

// A Hugging Face directory, or a .safetensors file inside one.
Parts load_hf(const fs::path& path, const LoadOptions& opts) {
    const bool is_dir = fs::is_directory(path);
    const fs::path dir = is_dir ? path : (path.parent_path().empty() ? fs::path(".") : path.parent_path());
    const fs::path weights = is_dir ? find_weights(dir) : path;
    const fs::path config_path = dir / "config.json";
    const nlohmann::json config_json = read_config_json(config_path);
    Parts p{read_safetensors(weights), config_from_hf(config_json, config_path.string()), nullptr};
    p.file.metadata = config_json;
    if (opts.tokenizer)
        p.tokenizer = model_tokenizer(opts, p.config, TokenizerSpec::at(dir));
    return p;
}

// A GGUF file: configuration and tokenizer come from its metadata.
Parts load_gguf(const fs::path& path, const LoadOptions& opts) {
    Parts p{read_gguf(path), {}, nullptr};
    p.config = config_from_gguf(p.file);
    if (opts.tokenizer)
        p.tokenizer = model_tokenizer(opts, p.config, TokenizerSpec::metadata(p.file));
    return p;
}

// A llama2.c checkpoint: no tokenizer inside, so the caller names tokenizer.bin.
Parts load_llama2c(const fs::path& path, const LoadOptions& opts) {
    if (opts.tokenizer && opts.tokenizer_path.empty())
        throw ModelError(path.string() + ": a llama2.c checkpoint holds no tokenizer; name its tokenizer.bin (--tokenizer)");
    Parts p{read_llama2c(path), {}, nullptr};
    p.config = config_from_gguf(p.file);
    if (opts.tokenizer) p.tokenizer = model_tokenizer(opts, p.config, {});
    return p;
}

// What the path is: a directory or .safetensors (Hugging Face), .gguf, or a llama2.c .bin.
Parts load_parts(const fs::path& path, const LoadOptions& opts) {
    if (fs::is_directory(path)) return load_hf(path, opts);
    const fs::path ext = path.extension();
    if (ext == ".gguf") return load_gguf(path, opts);
    if (ext == ".bin") return load_llama2c(path, opts);
    if (ext == ".safetensors" || ext == ".json") return load_hf(path, opts);
    throw ModelError(path.string() + ": unknown model format (expected a Hugging Face directory, .safetensors, .gguf, or a llama2.c .bin)");
}

}  // namespace

std::unique_ptr<Model> Model::load(const fs::path& path, const LoadOptions& opts) {
    if (!fs::exists(path)) throw ModelError(path.string() + ": no such file or directory");
    Parts p = load_parts(path, opts);
    const ModelConfig& c = p.config;
    spdlog::debug("loaded {} ({}, {}): {} layers, {} heads ({} kv), n_embd {}", path.string(), p.file.format,
                  arch_name(c.arch), c.n_layer, c.n_head, c.n_kv_head, c.n_embd);
    auto model = std::make_unique<Model>(std::move(p.file), p.config, std::move(p.tokenizer), opts.mmap);
    model->source_ = path;
    return model;
}

namespace {

// The rows of a model beyond its tokenizer's ids (Qwen's and OLMoE's padding up to vocab_size):
// tokens with no text. A GGUF names them [PAD<id>]; from a directory they are what Hugging Face's
// decode makes of them, nothing, so that an answer or a sampled token among them prints (as an
// empty token) instead of stopping the run with "not in the vocabulary".
class PaddedRows final : public Tokenizer {
public:
    PaddedRows(std::unique_ptr<Tokenizer> inner, int32_t rows) : inner_(std::move(inner)), rows_(rows) {}
    std::vector<TokenId> encode(std::string_view text, bool parse_special) const override { return inner_->encode(text, parse_special); }
    std::string token_bytes(TokenId id) const override { return padding(id) ? std::string() : inner_->token_bytes(id); }
    std::string decode(std::span<const TokenId> ids) const override {
        std::vector<TokenId> kept;
        kept.reserve(ids.size());
        for (TokenId id : ids)
            if (!padding(id)) kept.push_back(id);
        return inner_->decode(kept);
    }
    int32_t n_vocab() const override { return inner_->n_vocab(); }
    std::optional<TokenId> bos_id() const override { return inner_->bos_id(); }
    std::optional<TokenId> eos_id() const override { return inner_->eos_id(); }
    bool add_bos() const override { return inner_->add_bos(); }
    std::vector<TokenId> special_prefix() const override { return inner_->special_prefix(); }
    std::vector<TokenId> special_suffix() const override { return inner_->special_suffix(); }
    std::string kind() const override { return inner_->kind(); }

private:
    bool padding(TokenId id) const { return id >= inner_->n_vocab() && id < rows_; }
    std::unique_ptr<Tokenizer> inner_;
    int32_t rows_;
};

}  // namespace

Model::Model(ModelFile file, ModelConfig config, std::unique_ptr<Tokenizer> tokenizer, bool mmap)
    : source_(file.path), file_(std::move(file)), config_(config), weights_(Weights::bind(file_, config_, mmap)), tokenizer_(std::move(tokenizer)) {
    if (tokenizer_ && tokenizer_->n_vocab() > config_.n_vocab)
        throw ModelError(file_.path.string() + ": the tokenizer has " + std::to_string(tokenizer_->n_vocab()) +
                         " tokens but the weights only have " + std::to_string(config_.n_vocab) +
                         " embedding rows (the tokenizer's vocabulary must not be larger)");
    if (tokenizer_ && tokenizer_->n_vocab() < config_.n_vocab)
        tokenizer_ = std::make_unique<PaddedRows>(std::move(tokenizer_), config_.n_vocab);
    if (config_.varies_per_layer())
        for (int l = 0; l < config_.n_layer; ++l) layer_configs_.push_back(config_.layer_view(l));
    if (config_.position != PositionKind::rope) return;
    auto span_of = [](const Vector& v) { return std::span<const float>(v.data, static_cast<size_t>(v.n)); };
    if (config_.rope_scaling == RopeScaling::longrope) {
        // HF: config.json's long_factor/short_factor; GGUF: rope_factors_long/short.weight.
        const bool gguf = weights_.rope_long.data != nullptr;
        const auto shorts = gguf ? span_of(weights_.rope_short) : std::span<const float>(config_.rope_short_factors);
        const auto longs = gguf ? span_of(weights_.rope_long) : std::span<const float>(config_.rope_long_factors);
        const size_t half = static_cast<size_t>(config_.rot_dims() / 2);
        if (shorts.size() != half || longs.size() != half)
            throw ModelError(file_.path.string() + ": longrope needs " + std::to_string(half) + " long and " +
                             std::to_string(half) + " short factors");
        rope_inv_freq_ = journey::rope_inv_freq(config_, shorts);
        rope_inv_freq_long_ = journey::rope_inv_freq(config_, longs);
    } else if (!config_.rope_freq_factors.empty()) {  // HF Gemma 4's proportional rope (GGUF: rope_freqs)
        rope_inv_freq_ = journey::rope_inv_freq(config_, config_.rope_freq_factors);
    } else {
        if (config_.arch == Arch::gemma4 && file_.format != "safetensors" && !weights_.rope_freqs.data)
            throw ModelError(file_.path.string() + ": tensor 'rope_freqs.weight' is missing (gemma4's full layers need it, as llama.cpp)");
        rope_inv_freq_ = journey::rope_inv_freq(config_, span_of(weights_.rope_freqs));
    }
    if (config_.rope_local_theta > 0.0f) rope_inv_freq_local_ = journey::rope_inv_freq(config_, {}, true);
}

bool Model::local_rope(int layer) const {
    return !rope_inv_freq_local_.empty() && static_cast<size_t>(layer) < config_.sliding_layers.size() &&
           config_.sliding_layers[size_t(layer)];
}

const float* Model::rope_inv_freq(int layer, int n_ctx) const {
    if (local_rope(layer)) return rope_inv_freq_local_.data();
    if (!rope_inv_freq_long_.empty() && config_.longrope_long(n_ctx)) return rope_inv_freq_long_.data();
    return rope_inv_freq_.data();
}

float Model::rope_mscale(int layer) const { return local_rope(layer) ? 1.0f : config_.rope_mscale; }

const Tokenizer& Model::tokenizer() const {
    if (!tokenizer_) throw ModelError(file_.path.string() + ": loaded without a tokenizer");
    return *tokenizer_;
}

}  // namespace journey
