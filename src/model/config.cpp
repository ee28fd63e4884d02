// ModelConfig from a Hugging Face config.json: GPT-2's keys, or the Llama-style keys every other
// family shares, then each key that changes the math: honoured, or refused by name.
#include "journey/model/config.h"

#include <cmath>

#include "journey/errors.h"
#include "journey/formats/json_file.h"

namespace journey {

void apply_traits(ModelConfig& c, const ArchTraits& t) {
    c.arch = t.arch;
    c.norm = t.norm;
    c.activation = t.activation;
    c.position = t.position;
}

std::string_view rope_scaling_name(RopeScaling s) {
    switch (s) {
        case RopeScaling::none: return "none";
        case RopeScaling::linear: return "linear";
        case RopeScaling::llama3: return "llama3";
        case RopeScaling::dynamic: return "dynamic";
    }
    return "?";
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
    need(arch != Arch::gpt2 || n_embd % n_head == 0,
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
    need(std::isfinite(rope_theta) && rope_theta > 0.0f, "rope theta must be positive");
    need(std::isfinite(rope_factor) && rope_factor > 0.0f, "rope scaling factor must be positive");
    need(int64_t{n_head} * head_dim <= (1 << 30) && int64_t{n_kv_head} * head_dim <= (1 << 30),
         "heads x head_dim must not exceed 2^30");
    need(attn_softcap >= 0.0f && final_softcap >= 0.0f && attn_scale >= 0.0f, "soft-caps and the attention scale must not be negative");
    need(sliding_window >= 0, "sliding window must not be negative");
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

// A number key with a default when absent or null.
float get_float(const nlohmann::json& j, const char* key, float fallback, const std::string& source) {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    if (!j[key].is_number()) throw ModelError(source + ": \"" + key + "\" must be a number");
    return j[key].get<float>();
}

bool present(const nlohmann::json& j, const char* key) { return j.contains(key) && !j[key].is_null(); }

ModelConfig gpt2_from_hf(const nlohmann::json& j, const std::string& source) {
    ModelConfig c;
    apply_traits(c, traits_of(Arch::gpt2));
    c.n_vocab = get_int(j, "vocab_size", source);
    c.n_ctx = get_int(j, "n_positions", source);
    c.n_embd = get_int(j, "n_embd", source);
    c.n_layer = get_int(j, "n_layer", source);
    c.n_head = get_int(j, "n_head", source);
    c.n_kv_head = c.n_head;
    c.head_dim = c.n_embd / c.n_head;
    c.n_ff = present(j, "n_inner") ? get_int(j, "n_inner", source) : 4 * c.n_embd;
    c.norm_eps = get_float(j, "layer_norm_epsilon", 1e-5f, source);
    const std::string act = json_value(j, "activation_function", std::string("gelu_new"), source);
    if (act != "gelu_new")
        throw ModelError(source + ": activation_function \"" + act + "\" is not supported (only gelu_new)");
    for (const char* key : {"scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn"})
        if (json_value(j, key, false, source)) throw ModelError(source + ": \"" + std::string(key) + "\": true is not supported");
    if (!json_value(j, "scale_attn_weights", true, source))
        throw ModelError(source + ": \"scale_attn_weights\": false is not supported");
    c.rope_pairing = RopePairing::none;
    c.tied_output = json_value(j, "tie_word_embeddings", true, source);
    return c;
}

// rope_scaling (transformers 4) or rope_parameters (transformers 5, which also carries rope_theta).
void read_rope(ModelConfig& c, const nlohmann::json& j, const std::string& source) {
    c.rope_theta = get_float(j, "rope_theta", 10000.0f, source);
    const char* key = present(j, "rope_parameters") ? "rope_parameters" : "rope_scaling";
    if (!present(j, key)) return;
    const nlohmann::json& r = j[key];
    const std::string where = source + ": " + key;
    if (!r.is_object()) throw ModelError(where + " must be an object");
    if (!r.contains("rope_type") && !r.contains("type"))  // Gemma 3: one object per layer type
        throw ModelError(where + " without a rope_type (per-layer-type rope parameters) is not supported");
    const auto& t = r.contains("rope_type") ? r["rope_type"] : r["type"];
    if (!t.is_string()) throw ModelError(where + ": rope_type must be a string");
    const std::string type = t.get<std::string>();
    if (key == std::string("rope_parameters")) c.rope_theta = get_float(r, "rope_theta", c.rope_theta, where);
    if (type == "default") return;
    if (type == "linear") {
        c.rope_scaling = RopeScaling::linear;
        c.rope_factor = get_float(r, "factor", 0.0f, where);
    } else if (type == "llama3") {
        c.rope_scaling = RopeScaling::llama3;
        c.rope_factor = get_float(r, "factor", 0.0f, where);
        c.rope_low_freq_factor = get_float(r, "low_freq_factor", 0.0f, where);
        c.rope_high_freq_factor = get_float(r, "high_freq_factor", 0.0f, where);
        c.rope_original_ctx = get_int(r, "original_max_position_embeddings", where);
        if (!(c.rope_high_freq_factor > c.rope_low_freq_factor && c.rope_low_freq_factor > 0.0f))
            throw ModelError(where + ": llama3 needs high_freq_factor > low_freq_factor > 0");
    } else if (type == "dynamic") {
        // HF's dynamic NTK rescales only once a sequence is longer than the original context
        // (max_position_embeddings); a session never exceeds that, so the frequencies are plain.
        c.rope_scaling = RopeScaling::dynamic;
        c.rope_factor = get_float(r, "factor", 0.0f, where);
        if (present(r, "original_max_position_embeddings") &&
            get_int(r, "original_max_position_embeddings", where) != get_int(j, "max_position_embeddings", source))
            throw ModelError(where + ": dynamic with original_max_position_embeddings != max_position_embeddings is not supported");
    } else if (type == "yarn" || type == "longrope") {
        throw ModelError(where + ": rope type \"" + type + "\" is not implemented yet (implemented: default, linear, llama3, dynamic)");
    } else {
        throw ModelError(where + ": unknown rope type \"" + type + "\" (known: default, linear, llama3, dynamic)");
    }
    if (!(c.rope_factor > 0.0f)) throw ModelError(where + ": \"factor\" must be a positive number");
}

// Which layers slide, and how far: Gemma 2 alternates (even layers slide, as its layer_types
// say), Mistral and Phi-3 slide everywhere, Qwen only with use_sliding_window (refused).
void read_sliding(ModelConfig& c, const nlohmann::json& j, const std::string& source) {
    if (json_value(j, "use_sliding_window", false, source))
        throw ModelError(source + ": use_sliding_window: true (sliding layers from max_window_layers on) is not supported");
    if (j.contains("use_sliding_window")) return;  // Qwen: the window is unused
    // transformers' defaults when the key is absent: MistralConfig and Gemma2Config 4096.
    const std::string type = json_value(j, "model_type", std::string(), source);
    if (!j.contains("sliding_window") && (type == "mistral" || type == "gemma2")) {
        c.sliding_window = 4096;
    } else {
        if (!present(j, "sliding_window")) return;
        c.sliding_window = get_int(j, "sliding_window", source);
    }
    c.sliding_layers.assign(size_t(c.n_layer), true);
    if (present(j, "layer_types")) {
        const auto& lt = j["layer_types"];
        if (!lt.is_array() || lt.size() != size_t(c.n_layer))
            throw ModelError(source + ": layer_types must list one type per layer");
        for (size_t l = 0; l < lt.size(); ++l) {
            const std::string t = lt[l].is_string() ? lt[l].get<std::string>() : "";
            if (t != "sliding_attention" && t != "full_attention")
                throw ModelError(source + ": layer_types: unknown layer type \"" + t + "\"");
            c.sliding_layers[l] = t == "sliding_attention";
        }
    } else if (c.arch == Arch::gemma2) {
        for (int l = 0; l < c.n_layer; ++l) c.sliding_layers[size_t(l)] = l % 2 == 0;
    }
}

// Llama, Mistral, Qwen2/3, Phi-3, Gemma 2: the same key names for the shape.
ModelConfig llama_like_from_hf(const nlohmann::json& j, const ArchTraits& t, const std::string& source) {
    ModelConfig c;
    apply_traits(c, t);
    c.rope_pairing = RopePairing::half;  // HF's rotate_half: (i, i + D/2)
    c.n_vocab = get_int(j, "vocab_size", source);
    c.n_ctx = get_int(j, "max_position_embeddings", source);
    c.n_embd = get_int(j, "hidden_size", source);
    c.n_layer = get_int(j, "num_hidden_layers", source);
    c.n_head = get_int(j, "num_attention_heads", source);
    c.n_kv_head = present(j, "num_key_value_heads") ? get_int(j, "num_key_value_heads", source) : c.n_head;
    c.head_dim = present(j, "head_dim") ? get_int(j, "head_dim", source) : c.n_embd / c.n_head;
    c.n_ff = get_int(j, "intermediate_size", source);
    c.norm_eps = get_float(j, "rms_norm_eps", 1e-6f, source);
    c.tied_output = json_value(j, "tie_word_embeddings", t.hf_tied_default, source);
    read_rope(c, j, source);

    // Gemma 2 names its activation hidden_activation; the others hidden_act.
    const char* act_key = present(j, "hidden_activation") ? "hidden_activation" : "hidden_act";
    const std::string want = t.activation == ActivationKind::geglu_tanh ? "gelu_pytorch_tanh" : "silu";
    const std::string act = json_value(j, act_key, want, source);
    if (act != want) throw ModelError(source + ": " + act_key + " \"" + excerpt(act, 40) + "\" is not supported for " + t.name + " (only " + want + ")");

    for (const char* key : {"attention_bias", "mlp_bias"})
        if (json_value(j, key, false, source)) throw ModelError(source + ": \"" + std::string(key) + "\": true is not supported for " + t.name);
    if (get_float(j, "partial_rotary_factor", 1.0f, source) != 1.0f)
        throw ModelError(source + ": partial_rotary_factor != 1 (partial rotary embedding) is not supported");
    if (t.arch == Arch::gemma2) {
        c.embed_scale = std::sqrt(static_cast<float>(c.n_embd));
        c.attn_scale = 1.0f / std::sqrt(get_float(j, "query_pre_attn_scalar", float(c.head_dim), source));
        c.attn_softcap = get_float(j, "attn_logit_softcapping", 0.0f, source);
        c.final_softcap = get_float(j, "final_logit_softcapping", 0.0f, source);
    } else {
        for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping", "query_pre_attn_scalar"})
            if (present(j, key)) throw ModelError(source + ": \"" + std::string(key) + "\" is not supported for " + t.name);
    }
    read_sliding(c, j, source);
    return c;
}

}  // namespace

ModelConfig config_from_hf(const nlohmann::json& j, const std::string& source) {
    if (!j.is_object()) throw ModelError(source + ": not a JSON object");
    const std::string type = j.contains("model_type") && j["model_type"].is_string() ? j["model_type"].get<std::string>() : "";
    const ArchTraits* t = find_hf_arch(type);
    if (!t) throw ModelError(source + ": model_type \"" + type + "\" is not supported (supported: " + hf_type_names() + ")");
    ModelConfig c = t->arch == Arch::gpt2 ? gpt2_from_hf(j, source) : llama_like_from_hf(j, *t, source);
    c.validate(source);
    return c;
}

}  // namespace journey
