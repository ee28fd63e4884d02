#include "journey/model/config.h"

#include <cmath>

#include "journey/errors.h"
#include "journey/formats/json_file.h"

namespace journey {

namespace {

// The architecture table: what differs between GPT-2 and Llama blocks, as data.
const ArchTraits arch_table[] = {
    {Arch::gpt2, "gpt2", NormKind::layernorm, ActivationKind::gelu_new, PositionKind::learned},
    {Arch::llama, "llama", NormKind::rmsnorm, ActivationKind::swiglu, PositionKind::rope},
};

}  // namespace

std::string_view arch_name(Arch a) {
    for (const ArchTraits& t : arch_table)
        if (t.arch == a) return t.name;
    return "?";
}

const ArchTraits* find_arch(std::string_view name) {
    for (const ArchTraits& t : arch_table)
        if (name == t.name) return &t;
    return nullptr;
}

void apply_traits(ModelConfig& c, const ArchTraits& t) {
    c.arch = t.arch;
    c.norm = t.norm;
    c.activation = t.activation;
    c.position = t.position;
}

void ModelConfig::validate(const std::string& source) const {
    auto need = [&](bool ok, const std::string& what) {
        if (!ok) throw ModelError(source + ": " + what);
    };
    need(n_vocab > 0, "vocabulary size must be positive");
    need(n_ctx > 0, "context length must be positive");
    need(n_embd > 0, "n_embd must be positive");
    need(n_layer > 0, "n_layer must be positive");
    need(n_head > 0, "n_head must be positive");
    need(n_embd % n_head == 0,
         "n_embd " + std::to_string(n_embd) + " is not divisible by n_head " + std::to_string(n_head));
    need(head_dim > 0 && (arch != Arch::gpt2 || head_dim * n_head == n_embd), "head_dim must be n_embd / n_head");
    need(n_kv_head > 0 && n_head % n_kv_head == 0,
         "n_head " + std::to_string(n_head) + " is not a multiple of n_kv_head " + std::to_string(n_kv_head));
    need(n_ff > 0, "MLP width must be positive");
    // Values that parse but that the math does not admit would run and print garbage.
    need(std::isfinite(norm_eps) && norm_eps > 0.0f && norm_eps < 1.0f,
         "norm epsilon " + std::to_string(norm_eps) + " is not in (0, 1)");
    need(position != PositionKind::rope || (std::isfinite(rope_theta) && rope_theta > 0.0f),
         "rope theta " + std::to_string(rope_theta) + " must be a positive number");
    need(position != PositionKind::rope || (rope_pairing != RopePairing::none && head_dim % 2 == 0),
         "rotary positions need an even head_dim");
}

namespace {

// A required positive integer key.
int get_int(const nlohmann::json& j, const char* key, const std::string& source) {
    if (!j.contains(key)) throw ModelError(source + ": missing \"" + key + "\"");
    const auto& v = j[key];
    if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > (1 << 30))
        throw ModelError(source + ": \"" + key + "\" must be a positive integer");
    return v.get<int>();
}

ModelConfig gpt2_from_hf(const nlohmann::json& j, const std::string& source) {
    ModelConfig c;
    c.arch = Arch::gpt2;
    c.n_vocab = get_int(j, "vocab_size", source);
    c.n_ctx = get_int(j, "n_positions", source);
    c.n_embd = get_int(j, "n_embd", source);
    c.n_layer = get_int(j, "n_layer", source);
    c.n_head = get_int(j, "n_head", source);
    c.n_kv_head = c.n_head;
    c.head_dim = c.n_embd / c.n_head;
    c.n_ff = (!j.contains("n_inner") || j["n_inner"].is_null()) ? 4 * c.n_embd : get_int(j, "n_inner", source);
    if (j.contains("layer_norm_epsilon")) {
        if (!j["layer_norm_epsilon"].is_number()) throw ModelError(source + ": \"layer_norm_epsilon\" must be a number");
        c.norm_eps = j["layer_norm_epsilon"].get<float>();
    }
    const std::string act = json_value(j, "activation_function", std::string("gelu_new"), source);
    if (act != "gelu_new")
        throw ModelError(source + ": activation_function \"" + excerpt(act, 40) + "\" is not supported (only gelu_new)");
    apply_traits(c, *find_arch("gpt2"));
    c.rope_pairing = RopePairing::none;
    c.tied_output = json_value(j, "tie_word_embeddings", true, source);
    return c;
}

// A number key with a default when absent.
float get_float(const nlohmann::json& j, const char* key, float fallback, const std::string& source) {
    if (!j.contains(key)) return fallback;
    if (!j[key].is_number()) throw ModelError(source + ": \"" + key + "\" must be a number");
    return j[key].get<float>();
}

ModelConfig llama_from_hf(const nlohmann::json& j, const std::string& source) {
    ModelConfig c;
    apply_traits(c, *find_arch("llama"));
    c.rope_pairing = RopePairing::half;  // HF's rotate_half: (i, i + D/2)
    c.n_vocab = get_int(j, "vocab_size", source);
    c.n_ctx = get_int(j, "max_position_embeddings", source);
    c.n_embd = get_int(j, "hidden_size", source);
    c.n_layer = get_int(j, "num_hidden_layers", source);
    c.n_head = get_int(j, "num_attention_heads", source);
    c.n_kv_head = j.contains("num_key_value_heads") ? get_int(j, "num_key_value_heads", source) : c.n_head;
    c.head_dim = (j.contains("head_dim") && !j["head_dim"].is_null()) ? get_int(j, "head_dim", source) : c.n_embd / c.n_head;
    c.n_ff = get_int(j, "intermediate_size", source);
    c.norm_eps = get_float(j, "rms_norm_eps", 1e-6f, source);
    c.rope_theta = get_float(j, "rope_theta", 10000.0f, source);
    c.tied_output = json_value(j, "tie_word_embeddings", false, source);
    const std::string act = json_value(j, "hidden_act", std::string("silu"), source);
    if (act != "silu") throw ModelError(source + ": hidden_act \"" + excerpt(act, 40) + "\" is not supported (only silu)");
    if (j.contains("rope_scaling") && !j["rope_scaling"].is_null())
        throw ModelError(source + ": rope_scaling is not supported");
    return c;
}

}  // namespace

ModelConfig config_from_hf(const nlohmann::json& j, const std::string& source) {
    if (!j.is_object()) throw ModelError(source + ": not a JSON object");
    const std::string type = j.contains("model_type") && j["model_type"].is_string() ? j["model_type"].get<std::string>() : "";
    ModelConfig c;
    if (type == "gpt2") c = gpt2_from_hf(j, source);
    else if (type == "llama") c = llama_from_hf(j, source);
    else throw ModelError(source + ": model_type \"" + excerpt(type, 40) + "\" is not supported (supported: gpt2, llama)");
    c.validate(source);
    return c;
}

}  // namespace journey
