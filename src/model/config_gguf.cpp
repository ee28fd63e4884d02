// A ModelConfig from GGUF-style metadata: general.architecture picks the row of the
// architecture table, and "<arch>.<key>" gives each hyperparameter (llama.cpp's key names).
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

}  // namespace

ModelConfig config_from_gguf(const ModelFile& file) {
    const std::string source = file.path.string();
    auto it = file.metadata.find("general.architecture");
    if (it == file.metadata.end() || !it->is_string())
        throw ModelError(source + ": metadata 'general.architecture' is missing");
    const std::string arch = it->get<std::string>();
    const ArchTraits* traits = find_arch(arch);
    if (!traits) throw ModelError(source + ": architecture '" + excerpt(arch, 40) + "' is not supported (supported: gpt2, llama)");

    ModelConfig c;
    apply_traits(c, *traits);
    const Keys k(file, arch);
    c.n_embd = k.integer("embedding_length");
    c.n_layer = k.integer("block_count");
    c.n_ff = k.integer("feed_forward_length");
    c.n_ctx = k.integer("context_length");
    c.n_head = k.integer("attention.head_count");
    c.n_kv_head = k.integer("attention.head_count_kv", c.n_head);
    c.head_dim = c.n_embd / c.n_head;
    c.norm_eps = k.number(c.norm == NormKind::rmsnorm ? "attention.layer_norm_rms_epsilon" : "attention.layer_norm_epsilon");
    if (c.position == PositionKind::rope) {
        c.rope_pairing = RopePairing::interleaved;  // GGUF's "normal" rope and llama2.c: (2i, 2i+1)
        c.rope_theta = k.number("rope.freq_base", 10000.0f);
        if (k.integer("rope.dimension_count", c.head_dim) != c.head_dim)
            k.fail("rope.dimension_count", "differs from head_dim " + std::to_string(c.head_dim) +
                                               " (partial rotary embedding is not supported)");
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
