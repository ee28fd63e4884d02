// A ModelConfig from GGUF-style metadata: general.architecture picks the row of the
// architecture table, and "<arch>.<key>" gives each hyperparameter (llama.cpp's key names).
#include <cmath>

#include "journey/model/config.h"
#include "journey/errors.h"
#include "journey/formats/model_file.h"

namespace journey {
namespace {

class Keys {
public:
    Keys(const ModelFile& f, std::string arch) : file_(f), arch_(std::move(arch)) {}

    // "<arch>.<key>": a required positive integer.
    int integer(const std::string& key) const {
        const nlohmann::json* v = find(key);
        if (!v) fail(key, "is missing");
        return positive(key, *v);
    }
    int integer(const std::string& key, int fallback) const {
        const nlohmann::json* v = find(key);
        return v ? positive(key, *v) : fallback;
    }
    float number(const std::string& key) const {
        const nlohmann::json* v = find(key);
        if (!v) fail(key, "is missing");
        return real(key, *v);
    }
    float number(const std::string& key, float fallback) const {
        const nlohmann::json* v = find(key);
        return v ? real(key, *v) : fallback;
    }

    [[noreturn]] void fail(const std::string& key, const std::string& what) const {
        throw ModelError(file_.path.string() + ": metadata '" + arch_ + "." + key + "' " + what);
    }

private:
    const ModelFile& file_;
    std::string arch_;

    const nlohmann::json* find(const std::string& key) const {
        auto it = file_.metadata.find(arch_ + "." + key);
        return it == file_.metadata.end() ? nullptr : &*it;
    }
    int positive(const std::string& key, const nlohmann::json& v) const {
        if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > (1 << 30))
            fail(key, "must be a positive integer");
        return v.get<int>();
    }
    float real(const std::string& key, const nlohmann::json& v) const {
        if (!v.is_number()) fail(key, "must be a number");
        return v.get<float>();
    }
};

// The "<arch>." keys journey reads; any other one may change the math and is refused by name.
const char* const known_keys[] = {
    "context_length", "embedding_length", "block_count", "feed_forward_length", "vocab_size",
    "attention.head_count", "attention.head_count_kv", "attention.key_length", "attention.value_length",
    "attention.layer_norm_epsilon", "attention.layer_norm_rms_epsilon", "attention.sliding_window",
    "rope.dimension_count", "rope.freq_base", "rope.scaling.type", "rope.scaling.factor",
    "rope.scaling.original_context_length", "rope.scaling.finetuned",
    "attn_logit_softcapping", "final_logit_softcapping",
    "tensor_data_layout",  // old Llama files: how the converter permuted q/k (the rope pairing covers it)
};

void refuse_unknown_keys(const ModelFile& file, const std::string& arch, const Keys& k) {
    const std::string prefix = arch + ".";
    for (auto it = file.metadata.begin(); it != file.metadata.end(); ++it) {
        const std::string& key = it.key();
        if (key.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string rest = key.substr(prefix.size());
        bool known = false;
        for (const char* n : known_keys) known = known || rest == n;
        // Dense models' converters may write zero experts.
        if ((rest == "expert_count" || rest == "expert_used_count") && it->is_number_integer() && it->get<int64_t>() == 0)
            known = true;
        if (!known) k.fail(rest, "is not supported (it may change the math; journey refuses rather than ignore it)");
    }
}

// rope.scaling.type: none, or linear with rope.scaling.factor; anything else refused by name.
void read_rope_scaling(ModelConfig& c, const ModelFile& file, const std::string& arch, const Keys& k) {
    auto it = file.metadata.find(arch + ".rope.scaling.type");
    if (it == file.metadata.end()) {
        if (k.number("rope.scaling.factor", 1.0f) != 1.0f) k.fail("rope.scaling.factor", "is given without rope.scaling.type");
        return;
    }
    const std::string type = it->is_string() ? it->get<std::string>() : "";
    if (type == "none") return;
    if (type != "linear") k.fail("rope.scaling.type", "'" + excerpt(type, 40) + "' is not implemented (implemented: none, linear)");
    c.rope_scaling = RopeScaling::linear;
    c.rope_factor = k.number("rope.scaling.factor");
    if (!(c.rope_factor > 0.0f)) k.fail("rope.scaling.factor", "must be positive");
}

}  // namespace

ModelConfig config_from_gguf(const ModelFile& file) {
    const std::string source = file.path.string();
    auto it = file.metadata.find("general.architecture");
    if (it == file.metadata.end() || !it->is_string())
        throw ModelError(source + ": metadata 'general.architecture' is missing");
    const std::string arch = it->get<std::string>();
    const ArchTraits* traits = find_arch(arch);
    if (!traits) throw ModelError(source + ": architecture '" + arch + "' is not supported (supported: " + arch_names() + ")");

    ModelConfig c;
    apply_traits(c, *traits);
    const Keys k(file, arch);
    refuse_unknown_keys(file, arch, k);
    c.n_embd = k.integer("embedding_length");
    c.n_layer = k.integer("block_count");
    c.n_ff = k.integer("feed_forward_length");
    c.n_ctx = k.integer("context_length");
    c.n_head = k.integer("attention.head_count");
    c.n_kv_head = k.integer("attention.head_count_kv", c.n_head);
    // key_length is the head width when it differs from C/H (Gemma, Qwen3); values must match.
    c.head_dim = k.integer("attention.key_length", c.n_embd / c.n_head);
    if (k.integer("attention.value_length", c.head_dim) != c.head_dim)
        k.fail("attention.value_length", "differs from attention.key_length " + std::to_string(c.head_dim) + " (not supported)");
    if (c.arch == Arch::gpt2 && c.head_dim * c.n_head != c.n_embd)
        k.fail("attention.key_length", "must be embedding_length / head_count for gpt2");
    c.norm_eps = k.number(c.norm == NormKind::rmsnorm ? "attention.layer_norm_rms_epsilon" : "attention.layer_norm_epsilon");
    if (c.position == PositionKind::rope) {
        c.rope_pairing = traits->gguf_rope;
        c.rope_theta = k.number("rope.freq_base", 10000.0f);
        if (k.integer("rope.dimension_count", c.head_dim) != c.head_dim)
            k.fail("rope.dimension_count", "differs from head_dim " + std::to_string(c.head_dim) +
                                               " (partial rotary embedding is not supported)");
        read_rope_scaling(c, file, arch, k);
    }
    c.attn_softcap = k.number("attn_logit_softcapping", 0.0f);
    c.final_softcap = k.number("final_logit_softcapping", 0.0f);
    if (c.arch != Arch::gemma2 && (c.attn_softcap != 0.0f || c.final_softcap != 0.0f))
        k.fail(c.attn_softcap != 0.0f ? "attn_logit_softcapping" : "final_logit_softcapping", "is not supported for " + arch);
    c.sliding_window = k.integer("attention.sliding_window", 0);
    if (c.sliding_window > 0) {
        // llama.cpp's patterns: Gemma 2 slides on even layers; Phi-3's window covers every layer
        // (llama.cpp leaves it unapplied; Hugging Face applies it, and so does journey).
        c.sliding_layers.assign(size_t(c.n_layer), true);
        if (c.arch == Arch::gemma2)
            for (int l = 0; l < c.n_layer; ++l) c.sliding_layers[size_t(l)] = l % 2 == 0;
        else if (c.arch != Arch::phi3)
            k.fail("attention.sliding_window", "is not supported for " + arch);
    }
    if (c.arch == Arch::gemma2) {
        c.embed_scale = std::sqrt(static_cast<float>(c.n_embd));
        // GGUF has no query_pre_attn_scalar: llama.cpp scales by 1/sqrt(head_dim), except for
        // Gemma 2 27B (46 layers), whose scalar is n_embd / n_head.
        c.attn_scale = 1.0f / std::sqrt(static_cast<float>(c.n_layer == 46 ? c.n_embd / c.n_head : c.head_dim));
    }

    const TensorInfo* embd = file.find("token_embd.weight");
    if (!embd || embd->shape.size() != 2)
        throw ModelError(source + ": tensor 'token_embd.weight' is missing or not a matrix (it gives the vocabulary size)");
    c.n_vocab = static_cast<int>(embd->shape[0]);
    c.tied_output = file.find("output.weight") == nullptr;
    c.validate(source);
    return c;
}

}  // namespace journey
