// ModelConfig from a Hugging Face config.json: GPT-2's keys, or the Llama-style keys every other
// family shares, then each key that changes the math: honoured, or refused by name.
#include "journey/model/config.h"

#include <algorithm>
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
        case RopeScaling::yarn: return "yarn";
        case RopeScaling::longrope: return "longrope";
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
    need(n_rot >= 0 && n_rot <= head_dim && n_rot % 2 == 0, "rotary dimensions must be even and at most head_dim");
    need(!qkv_per_head || n_head == n_kv_head, "a per-head fused qkv needs as many key/value heads as heads");
    need(std::isfinite(rope_mscale) && rope_mscale > 0.0f, "rope attention factor must be positive");
    need(std::isfinite(rope_local_theta) && rope_local_theta >= 0.0f, "local rope base must not be negative");
    if (rope_scaling == RopeScaling::longrope) {
        const size_t half = static_cast<size_t>(rot_dims() / 2);
        need(rope_original_ctx > 0, "longrope needs original_max_position_embeddings");
        need(rope_long_factors.empty() || (rope_long_factors.size() == half && rope_short_factors.size() == half),
             "longrope long_factor and short_factor must hold " + std::to_string(half) + " values each");
        for (float f : rope_long_factors) need(std::isfinite(f) && f > 0.0f, "longrope factors must be positive");
        for (float f : rope_short_factors) need(std::isfinite(f) && f > 0.0f, "longrope factors must be positive");
    }
    if (n_expert > 0 || n_expert_used > 0) {  // mixture of experts
        need(n_expert_used > 0 && n_expert_used <= n_expert && n_expert <= 4096,
             "experts used per token (" + std::to_string(n_expert_used) + ") must be between 1 and the experts (" +
                 std::to_string(n_expert) + ", at most 4096)");
        need(n_ff_exp > 0, "an expert's MLP width must be positive");
        need(n_ff_shexp >= 0 && n_ff_shexp <= (1 << 24), "the shared expert's width must be in [0, 2^24]");
    }
    if (!recurrent_layers.empty()) {  // hybrid: the Gated DeltaNet mixer's sizes
        need(recurrent_layers.size() == size_t(n_layer), "recurrent layer flags must cover every layer");
        need(ssm_k_heads > 0 && ssm_v_heads > 0 && ssm_v_heads % ssm_k_heads == 0,
             "linear-attention value heads must be a positive multiple of its key heads");
        need(ssm_head_dim > 0 && ssm_head_dim <= 1024, "linear-attention head width must be in [1, 1024]");
        need(ssm_conv >= 1 && ssm_conv <= 64, "linear-attention conv kernel must be in [1, 64]");
        need(int64_t{ssm_v_heads} * ssm_head_dim <= (1 << 24) && int64_t{ssm_k_heads} * ssm_head_dim <= (1 << 24),
             "linear-attention heads x width must not exceed 2^24");
    }
    if (activation == ActivationKind::swiglu_oai)
        need(std::isfinite(swiglu_limit) && swiglu_limit > 0.0f && std::isfinite(swiglu_alpha), "swiglu_limit must be positive");
    if (head_dim_swa > 0 || n_kv_shared > 0 || n_embd_per_layer > 0 || !n_ff_layers.empty()) {  // Gemma 4
        need(head_dim_swa >= 0 && head_dim_swa % 2 == 0 && n_rot_swa >= 0 && n_rot_swa <= head_dim_swa && n_rot_swa % 2 == 0,
             "the sliding layers' head width and rotary dimensions must be even, rotary at most the head width");
        need(int64_t{n_head} * head_dim_swa <= (1 << 30), "heads x head_dim must not exceed 2^30");
        need(head_dim_swa <= head_dim, "the sliding layers' head width must not exceed the full layers'");
        need(n_kv_shared >= 0 && n_kv_shared < n_layer, "KV-shared layers must leave a layer computing keys and values");
        need(n_embd_per_layer >= 0 && int64_t{n_embd_per_layer} * n_layer <= (1 << 30), "per-layer embedding width out of range");
        need(n_ff_layers.empty() || n_ff_layers.size() == size_t(n_layer), "per-layer MLP widths must cover every layer");
        for (int f : n_ff_layers) need(f > 0 && f <= n_ff, "per-layer MLP widths must be positive and at most feed_forward_length's largest");
        for (int l = 0; l < n_layer; ++l)
            need(kv_source(l) == l || (kv_source(l) < n_layer - n_kv_shared && head_dim_of(kv_source(l)) == head_dim_of(l)),
                 "KV-shared layer " + std::to_string(l) + " has no earlier layer of its kind to read");
    }
    need(std::isfinite(residual_scale) && residual_scale > 0.0f && std::isfinite(logit_scale) && logit_scale > 0.0f &&
             std::isfinite(embed_scale) && embed_scale > 0.0f && std::isfinite(attn_scale),
         "the embedding, residual and logit scales must be positive numbers");
    need(std::isfinite(attn_temp_scale) && (attn_temp_scale == 0.0f || attn_temp_floor > 0),
         "the attention temperature needs a finite scale and a positive original context");
    if (rope_scaling == RopeScaling::yarn) {
        need(rope_original_ctx > 0, "yarn needs original_max_position_embeddings");
        need(std::isfinite(rope_beta_fast) && std::isfinite(rope_beta_slow) && rope_beta_fast > 0.0f && rope_beta_slow > 0.0f,
             "yarn beta_fast and beta_slow must be positive");
    }
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

// A list of positive numbers (longrope's factors).
std::vector<float> get_floats(const nlohmann::json& r, const char* key, const std::string& where) {
    if (!r.contains(key) || !r[key].is_array()) throw ModelError(where + ": \"" + key + "\" must be a list of numbers");
    std::vector<float> v;
    for (const auto& x : r[key]) {
        if (!x.is_number()) throw ModelError(where + ": \"" + key + "\" must be a list of numbers");
        v.push_back(x.get<float>());
    }
    return v;
}

// Ministral 3's text config (model_type ministral3), not Mistral Small 3.1's (mistral) that shares
// its GGUF architecture: llama.cpp's converter tells them apart so.
bool is_ministral3(const nlohmann::json& j) {
    return j.contains("model_type") && j["model_type"].is_string() && j["model_type"].get<std::string>() == "ministral3";
}

// The keys of one rope object that journey reads; any other one is refused by name (it may change the math).
void refuse_unknown_rope_keys(const ModelConfig& c, const nlohmann::json& j, const nlohmann::json& r, const std::string& type,
                              const std::string& where) {
    static const std::vector<std::pair<std::string, std::vector<std::string>>> known = {
        {"default", {}},
        {"linear", {"factor"}},
        {"llama3", {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"}},
        {"dynamic", {"factor", "original_max_position_embeddings"}},
        {"yarn", {"factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "attention_factor", "mscale",
                  "mscale_all_dim", "truncate"}},
        {"longrope", {"long_factor", "short_factor", "factor", "attention_factor", "original_max_position_embeddings"}},
    };
    for (const auto& [t, keys] : known) {
        if (t != type) continue;
        for (auto it = r.begin(); it != r.end(); ++it) {
            const std::string& k = it.key();
            if (k == "rope_type" || k == "type" || k == "rope_theta" || it->is_null()) continue;
            // transformers 5 keeps GPT-NeoX's rotary_pct here (read by gptneox_from_hf)
            if (k == "partial_rotary_factor" && (c.arch == Arch::gptneox || c.arch == Arch::phi3)) continue;
            // Qwen3.5's M-RoPE (read by read_hybrid)
            if ((k == "partial_rotary_factor" || k == "mrope_section" || k == "mrope_interleaved") && traits_of(c.arch).hybrid) continue;
            // Ministral 3's query temperature (read by read_mistral3); its config class also copies
            // max_position_embeddings here (transformers ignores it: equal to the top level's, or refused)
            if (is_ministral3(j) && type == "yarn" && k == "llama_4_scaling_beta") continue;
            if (is_ministral3(j) && k == "max_position_embeddings" && j.contains(k) && *it == j[k]) continue;
            if (std::find(keys.begin(), keys.end(), k) == keys.end())
                throw ModelError(where + ": \"" + excerpt(k, 40) + "\" of rope type " + type + " is not supported");
        }
    }
}

// One rope object ({"rope_type": ..., ...}): its scaling into c.
void read_rope_object(ModelConfig& c, const nlohmann::json& j, const nlohmann::json& r, const std::string& where) {
    if (!r.is_object()) throw ModelError(where + " must be an object");
    if (!r.contains("rope_type") && !r.contains("type")) throw ModelError(where + " has no rope_type");
    const auto& t = r.contains("rope_type") ? r["rope_type"] : r["type"];
    if (!t.is_string()) throw ModelError(where + ": rope_type must be a string");
    std::string type = t.get<std::string>();
    if (type == "su") type = "longrope";  // Phi-3's first name for it (transformers maps it too)
    static const char* const kKnown = "default, linear, llama3, dynamic, yarn, longrope";
    if (type != "default" && type != "linear" && type != "llama3" && type != "dynamic" && type != "yarn" && type != "longrope")
        throw ModelError(where + ": unknown rope type \"" + excerpt(type, 40) + "\" (known: " + kKnown + ")");
    refuse_unknown_rope_keys(c, j, r, type, where);
    if (type == "default") return;
    const int max_pos = get_int(j, "max_position_embeddings", where);
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
        if (present(r, "original_max_position_embeddings") && get_int(r, "original_max_position_embeddings", where) != max_pos)
            throw ModelError(where + ": dynamic with original_max_position_embeddings != max_position_embeddings is not supported");
    } else if (type == "yarn") {
        // transformers' _compute_yarn_parameters, as llama.cpp runs it: the factor as written, the
        // original context from the object (else max_position_embeddings), the blend band from
        // beta_fast/beta_slow (32/1), and cos/sin scaled by the attention factor.
        c.rope_scaling = RopeScaling::yarn;
        c.rope_factor = get_float(r, "factor", 0.0f, where);
        c.rope_original_ctx = present(r, "original_max_position_embeddings") ? get_int(r, "original_max_position_embeddings", where) : max_pos;
        c.rope_beta_fast = get_float(r, "beta_fast", 32.0f, where);
        c.rope_beta_slow = get_float(r, "beta_slow", 1.0f, where);
        // "truncate": false (gpt-oss; OpenAI's reference computes its band so) keeps the band's
        // ends fractional; llama.cpp always rounds them (a GGUF has no key for it).
        c.rope_yarn_truncate = json_value(r, "truncate", true, where);
        auto mscale = [](double f, double m) { return f <= 1 ? 1.0 : 0.1 * m * std::log(f) + 1.0; };
        const double f = c.rope_factor;
        if (present(r, "attention_factor")) c.rope_mscale = get_float(r, "attention_factor", 1.0f, where);
        else if (present(r, "mscale") && present(r, "mscale_all_dim"))
            c.rope_mscale = float(mscale(f, get_float(r, "mscale", 1, where)) / mscale(f, get_float(r, "mscale_all_dim", 1, where)));
        else c.rope_mscale = float(mscale(f, 1.0));
    } else if (type == "longrope") {
        // transformers' _compute_longrope_parameters: factor = max_position_embeddings / original
        // (Phi-3 keeps the original at the top level); attention factor sqrt(1 + ln(factor) / ln(original)).
        c.rope_scaling = RopeScaling::longrope;
        c.rope_long_factors = get_floats(r, "long_factor", where);
        c.rope_short_factors = get_floats(r, "short_factor", where);
        c.rope_original_ctx = present(j, "original_max_position_embeddings") ? get_int(j, "original_max_position_embeddings", where)
                              : present(r, "original_max_position_embeddings") ? get_int(r, "original_max_position_embeddings", where)
                                                                               : max_pos;
        const double f = present(j, "original_max_position_embeddings") || present(r, "original_max_position_embeddings")
                             ? double(max_pos) / c.rope_original_ctx
                             : get_float(r, "factor", 1.0f, where);
        c.rope_factor = float(f);
        c.rope_mscale = present(r, "attention_factor") ? get_float(r, "attention_factor", 1.0f, where)
                        : f <= 1.0 ? 1.0f : float(std::sqrt(1.0 + std::log(f) / std::log(double(c.rope_original_ctx))));
    }
    if (!(c.rope_factor > 0.0f)) throw ModelError(where + ": \"factor\" must be a positive number");
}

// rope_scaling (transformers 4) or rope_parameters (transformers 5, which also carries rope_theta;
// Gemma 3's holds one object per layer type: full_attention and sliding_attention).
void read_rope(ModelConfig& c, const nlohmann::json& j, const std::string& source) {
    c.rope_theta = get_float(j, "rope_theta", c.rope_theta, source);
    const char* key = present(j, "rope_parameters") ? "rope_parameters" : "rope_scaling";
    if (!present(j, key)) return;
    const nlohmann::json& r = j[key];
    const std::string where = source + ": " + key;
    if (!r.is_object()) throw ModelError(where + " must be an object");
    if (!r.contains("rope_type") && !r.contains("type")) {
        if (c.arch != Arch::gemma3)
            throw ModelError(where + " without a rope_type (per-layer-type rope parameters) is not supported for " +
                             std::string(arch_name(c.arch)));
        for (auto it = r.begin(); it != r.end(); ++it)
            if (it.key() != "full_attention" && it.key() != "sliding_attention")
                throw ModelError(where + ": unknown layer type \"" + excerpt(it.key(), 40) + "\"");
        if (r.contains("sliding_attention")) {
            const nlohmann::json& s = r["sliding_attention"];
            ModelConfig local;
            read_rope_object(local, j, s, where + ".sliding_attention");
            if (local.rope_scaling != RopeScaling::none)
                throw ModelError(where + ".sliding_attention: rope scaling on sliding layers is not supported");
            if (s.is_object()) c.rope_local_theta = get_float(s, "rope_theta", c.rope_local_theta, where + ".sliding_attention");
        }
        if (!r.contains("full_attention")) return;
        const nlohmann::json& f = r["full_attention"];
        if (f.is_object()) c.rope_theta = get_float(f, "rope_theta", c.rope_theta, where + ".full_attention");
        return read_rope_object(c, j, f, where + ".full_attention");
    }
    if (key == std::string("rope_parameters")) c.rope_theta = get_float(r, "rope_theta", c.rope_theta, where);
    read_rope_object(c, j, r, where);
}

// Which layers slide, and how far: Gemma 2 alternates (even layers slide, as its layer_types
// say), Mistral and Phi-3 slide everywhere, Qwen only with use_sliding_window (refused).
void read_sliding(ModelConfig& c, const nlohmann::json& j, const std::string& source) {
    if (json_value(j, "use_sliding_window", false, source))
        throw ModelError(source + ": use_sliding_window: true (sliding layers from max_window_layers on) is not supported");
    if (j.contains("use_sliding_window")) return;  // Qwen: the window is unused
    // transformers' defaults when the key is absent: MistralConfig and Gemma2Config 4096.
    const std::string type = json_value(j, "model_type", std::string(), source);
    if (!j.contains("sliding_window") && (type == "mistral" || type == "gemma2" || type == "gemma3_text")) {
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
    } else if (c.arch == Arch::gemma3) {
        // Gemma3TextConfig: every sliding_window_pattern-th layer (1-based) is global (default 6).
        const int pattern = present(j, "sliding_window_pattern") ? get_int(j, "sliding_window_pattern", source) : 6;
        for (int l = 0; l < c.n_layer; ++l) c.sliding_layers[size_t(l)] = (l + 1) % pattern != 0;
    }
}

// ---- Mixture of experts: how many experts, how wide, how many per token; the row says how they
// route. Qwen3-MoE: num_experts, moe_intermediate_size, norm_topk_prob (transformers' default
// false); every layer an MoE layer (mlp_only_layers / decoder_sparse_step otherwise: refused).
// gpt-oss: num_local_experts, intermediate_size, swiglu_limit (default 7; alpha 1.702 fixed).
void read_moe(ModelConfig& c, const nlohmann::json& j, const ArchTraits& t, const std::string& source) {
    if (!t.moe) return;
    c.moe_gating = t.moe->gating;
    c.n_expert = get_int(j, present(j, "num_local_experts") ? "num_local_experts" : "num_experts", source);
    c.n_expert_used = get_int(j, "num_experts_per_tok", source);
    if (present(j, "experts_per_token") && get_int(j, "experts_per_token", source) != c.n_expert_used)
        throw ModelError(source + ": \"experts_per_token\" differs from \"num_experts_per_tok\"");
    c.n_ff_exp = present(j, "moe_intermediate_size") ? get_int(j, "moe_intermediate_size", source) : c.n_ff;
    c.moe_norm_topk = t.moe->hf_norm_key ? json_value(j, t.moe->hf_norm_key, false, source) : t.moe->norm_topk;
    if (present(j, "mlp_only_layers") && !(j["mlp_only_layers"].is_array() && j["mlp_only_layers"].empty()))
        throw ModelError(source + ": \"mlp_only_layers\" (dense layers among the experts' ones) is not supported");
    if (present(j, "decoder_sparse_step") && get_int(j, "decoder_sparse_step", source) != 1)
        throw ModelError(source + ": \"decoder_sparse_step\" other than 1 (dense layers among the experts' ones) is not supported");
    if (t.moe->shared_expert) {  // Qwen3.5-MoE: one shared expert, gated (its width is required)
        c.n_ff_shexp = get_int(j, "shared_expert_intermediate_size", source);
    }
    // The family's routing renormalises its top-k; a config saying otherwise is not this model.
    if (!t.moe->hf_norm_key && present(j, "norm_topk_prob") && !json_value(j, "norm_topk_prob", true, source))
        throw ModelError(source + ": \"norm_topk_prob\": false is not supported for " + t.name);
    for (const char* key : {"shared_expert_intermediate_size", "n_shared_experts", "num_shared_experts", "moe_layer_freq"})
        if (present(j, key) && !(j[key].is_number() && j[key].get<double>() == 0) &&
            !(t.moe->shared_expert && key == std::string("shared_expert_intermediate_size")))
            throw ModelError(source + ": \"" + std::string(key) + "\" (shared experts) is not supported for " + t.name);
    if (t.arch == Arch::gpt_oss) {
        c.swiglu_limit = get_float(j, "swiglu_limit", 7.0f, source);
    }
    // Mixtral, OLMoE: the experts are intermediate_size wide (their configs have no other key).
    if (t.moe->experts_ff && present(j, "moe_intermediate_size"))
        throw ModelError(source + ": \"moe_intermediate_size\" is not supported for " + std::string(t.hf_types[0]) + " (its experts are intermediate_size wide)");
    // OLMoE's clip_qkv clamps q, k and v (transformers applies it; llama.cpp's olmoe does not).
    if (t.arch == Arch::olmoe && present(j, "clip_qkv"))
        throw ModelError(source + ": \"clip_qkv\" (clamping q, k and v) is not supported for olmoe");
    // (router_jitter_noise, router_aux_loss_coef, output_router_logits: training only; transformers
    // applies none of them when running the model.)
}
// ---- end of mixture of experts

// ---- issue 36's dense families
// Phi-4-mini: partial_rotary_factor (transformers 5: in rope_parameters) rotates the first
// int(head_dim * factor) dimensions of each head (HF's default rope init), NEOX-paired.
void read_partial_rotary(ModelConfig& c, const nlohmann::json& j, const std::string& source) {
    const nlohmann::json* rp = present(j, "rope_parameters") && j["rope_parameters"].is_object() ? &j["rope_parameters"] : nullptr;
    const float pct = rp && present(*rp, "partial_rotary_factor") ? get_float(*rp, "partial_rotary_factor", 1.0f, source)
                                                                 : get_float(j, "partial_rotary_factor", 1.0f, source);
    if (pct == 1.0f) return;
    if (c.arch != Arch::phi3)
        throw ModelError(source + ": partial_rotary_factor != 1 (partial rotary embedding) is not supported for " + std::string(arch_name(c.arch)));
    if (!(pct > 0.0f && pct < 1.0f)) throw ModelError(source + ": partial_rotary_factor must be in (0, 1]");
    c.n_rot = static_cast<int>(float(c.head_dim) * pct);
    if (c.n_rot % 2 != 0 || c.n_rot == 0)
        throw ModelError(source + ": partial_rotary_factor gives " + std::to_string(c.n_rot) + " rotary dimensions (must be even and positive)");
}

// SmolLM3 (NoPE): no_rope_layers, one flag per layer (1 = rope, 0 = none), or, without it,
// every no_rope_layer_interval-th layer (1-based; default 4) without rope, as SmolLM3Config derives it.
void read_no_rope(ModelConfig& c, const nlohmann::json& j, const std::string& source) {
    c.no_rope_layers.assign(size_t(c.n_layer), false);
    if (present(j, "no_rope_layers")) {
        const auto& v = j["no_rope_layers"];
        if (!v.is_array() || v.size() != size_t(c.n_layer))
            throw ModelError(source + ": \"no_rope_layers\" must list one flag (0 or 1) per layer");
        for (size_t l = 0; l < v.size(); ++l) {
            if (!v[l].is_number_integer() || (v[l].get<int64_t>() != 0 && v[l].get<int64_t>() != 1))
                throw ModelError(source + ": \"no_rope_layers\" must hold 0 (no rope) or 1 (rope)");
            c.no_rope_layers[l] = v[l].get<int64_t>() == 0;
        }
        return;
    }
    const int interval = present(j, "no_rope_layer_interval") ? get_int(j, "no_rope_layer_interval", source) : 4;
    for (int l = 0; l < c.n_layer; ++l) c.no_rope_layers[size_t(l)] = (l + 1) % interval == 0;
}
// Gemma 4 (Gemma4TextConfig): head_dim is the sliding layers' width, global_head_dim the full
// layers'; rope_parameters holds one object per layer type (sliding: default, full:
// proportional with partial_rotary_factor, as llama.cpp's converter writes rope_freqs: 1 for the
// rotated pairs, 1e30 for the rest); per-layer embeddings, KV sharing, double-wide MLP; attention
// scale 1, the final soft-cap. Keys of the parts journey does not run are refused by name.
void read_gemma4(ModelConfig& c, const nlohmann::json& j, const std::string& source) {
    for (const char* key : {"attention_k_eq_v", "enable_moe_block"})
        if (json_value(j, key, false, source)) throw ModelError(source + ": \"" + std::string(key) + "\": true is not supported for gemma4");
    for (const char* key : {"num_experts", "top_k_experts", "expert_intermediate_size", "moe_intermediate_size",
                            "attn_logit_softcapping", "query_pre_attn_scalar", "per_layer_config"})
        if (present(j, key)) throw ModelError(source + ": \"" + std::string(key) + "\" is not supported for gemma4");
    if (present(j, "num_global_key_value_heads") && get_int(j, "num_global_key_value_heads", source) != c.n_kv_head)
        throw ModelError(source + ": \"num_global_key_value_heads\" other than num_key_value_heads is not supported for gemma4");
    if (!present(j, "sliding_window")) throw ModelError(source + ": missing \"sliding_window\" (journey does not guess it for gemma4)");
    if (!present(j, "layer_types")) throw ModelError(source + ": missing \"layer_types\" (journey does not guess them for gemma4)");
    c.head_dim_swa = c.head_dim;
    c.head_dim = present(j, "global_head_dim") ? get_int(j, "global_head_dim", source) : c.head_dim;
    c.embed_scale = std::sqrt(static_cast<float>(c.n_embd));
    c.attn_scale = 1.0f;
    c.v_norm = true;
    c.final_softcap = get_float(j, "final_logit_softcapping", 0.0f, source);
    c.n_kv_shared = present(j, "num_kv_shared_layers") && j["num_kv_shared_layers"] != 0 ? get_int(j, "num_kv_shared_layers", source) : 0;
    if (c.n_kv_shared >= c.n_layer) throw ModelError(source + ": \"num_kv_shared_layers\" leaves no layer computing keys and values");
    c.n_embd_per_layer = present(j, "hidden_size_per_layer_input") && j["hidden_size_per_layer_input"] != 0
                             ? get_int(j, "hidden_size_per_layer_input", source) : 0;
    if (c.n_embd_per_layer > 0 && present(j, "vocab_size_per_layer_input") && get_int(j, "vocab_size_per_layer_input", source) != c.n_vocab)
        throw ModelError(source + ": \"vocab_size_per_layer_input\" other than vocab_size is not supported for gemma4");
    if (json_value(j, "use_double_wide_mlp", false, source) && c.n_kv_shared > 0) {
        for (int l = 0; l < c.n_layer; ++l) c.n_ff_layers.push_back(l < c.n_layer - c.n_kv_shared ? c.n_ff : 2 * c.n_ff);
        c.n_ff *= 2;  // the widest
    }
    // rope_parameters: {sliding_attention: default, full_attention: proportional (or default)}.
    const std::string where = source + ": rope_parameters";
    if (!present(j, "rope_parameters") || !j["rope_parameters"].is_object())
        throw ModelError(where + " is missing (gemma4 needs one object per layer type)");
    const nlohmann::json& r = j["rope_parameters"];
    for (auto it = r.begin(); it != r.end(); ++it)
        if (it.key() != "full_attention" && it.key() != "sliding_attention")
            throw ModelError(where + ": unknown layer type \"" + excerpt(it.key(), 40) + "\"");
    auto one = [&](const char* kind, int D, float& theta) {
        const std::string w = where + "." + kind;
        if (!r.contains(kind) || !r[kind].is_object()) throw ModelError(w + " is missing");
        const nlohmann::json& o = r[kind];
        const std::string type = json_value(o, "rope_type", std::string("default"), w);
        if (type != "default" && type != "proportional")
            throw ModelError(w + ": rope type \"" + excerpt(type, 40) + "\" is not supported for gemma4 (default, proportional)");
        for (auto it = o.begin(); it != o.end(); ++it)
            if (it.key() != "rope_type" && it.key() != "rope_theta" && it.key() != "partial_rotary_factor" && !it->is_null())
                throw ModelError(w + ": \"" + excerpt(it.key(), 40) + "\" is not supported for gemma4");
        if (!present(o, "rope_theta")) throw ModelError(w + ": missing \"rope_theta\"");
        theta = get_float(o, "rope_theta", 0.0f, w);
        const float pct = get_float(o, "partial_rotary_factor", 1.0f, w);
        if (!(pct > 0.0f && pct <= 1.0f)) throw ModelError(w + ": partial_rotary_factor must be in (0, 1]");
        if (type == "default") {  // rotates int(D * pct) dims
            const int n = static_cast<int>(float(D) * pct);
            if (n % 2 != 0 || n == 0) throw ModelError(w + ": partial_rotary_factor gives an odd or zero rotary width");
            return std::pair{n, std::vector<float>{}};
        }
        // proportional: every pair of the head takes part (NEOX pairing over D); the first
        // int(D * pct / 2) pairs turn, the others are held still (divisor 1e30, as llama.cpp's rope_freqs).
        const int turning = static_cast<int>(float(D) * pct / 2.0f);
        std::vector<float> f(size_t(D / 2), 1e30f);
        for (int i = 0; i < turning; ++i) f[size_t(i)] = 1.0f;
        return std::pair{D, f};
    };
    float theta_swa = 0.0f;
    const auto [n_rot_swa, f_swa] = one("sliding_attention", c.head_dim_swa, theta_swa);
    if (!f_swa.empty()) throw ModelError(where + ".sliding_attention: proportional rope on sliding layers is not supported");
    c.n_rot_swa = n_rot_swa;
    c.rope_local_theta = theta_swa;
    auto [n_rot, f_full] = one("full_attention", c.head_dim, c.rope_theta);
    c.n_rot = n_rot;
    c.rope_freq_factors = std::move(f_full);
}
// Granite 3.x (GraniteConfig): embedding_multiplier, attention_multiplier (the attention scale,
// instead of 1/sqrt(head_dim)), residual_multiplier, logits_scaling; each defaults to 1.0 as
// GraniteConfig does. The head width is hidden_size / num_attention_heads (llama.cpp's converter
// drops a head_dim key: another value is refused).
void read_granite(ModelConfig& c, const nlohmann::json& j, const std::string& source) {
    auto multiplier = [&](const char* key) {
        const float v = get_float(j, key, 1.0f, source);
        if (!(std::isfinite(v) && v > 0.0f)) throw ModelError(source + ": \"" + std::string(key) + "\" must be a positive number");
        return v;
    };
    c.embed_scale = multiplier("embedding_multiplier");
    c.attn_scale = multiplier("attention_multiplier");
    c.residual_scale = multiplier("residual_multiplier");
    c.logit_scale = multiplier("logits_scaling");
    if (c.head_dim * c.n_head != c.n_embd)
        throw ModelError(source + ": \"head_dim\" other than hidden_size / num_attention_heads is not supported for granite");
}

// OLMo 2 (Olmo2Config): its keys are Llama's; Olmo 3's sliding window is another model (olmo3),
// which Olmo2's attention does not apply: refused, not ignored.
// Ministral 3 (transformers' Ministral3Attention): YaRN rope, and every query multiplied by
// 1 + llama_4_scaling_beta * ln(1 + floor(position / original_max_position_embeddings)), both
// from rope_parameters, which it requires (as llama.cpp's converter does). Mistral Small 3.1/3.2's
// text model (mistral) is Llama's block: none of that. Neither has a sliding window (llama.cpp's
// mistral3 has none).
void read_mistral3(ModelConfig& c, const nlohmann::json& j, const std::string& source) {
    if (present(j, "sliding_window")) throw ModelError(source + ": \"sliding_window\" is not supported for mistral3 (llama.cpp's mistral3 has none)");
    if (!is_ministral3(j)) return;
    const char* key = present(j, "rope_parameters") ? "rope_parameters" : "rope_scaling";
    const std::string where = source + ": " + key;
    if (c.rope_scaling != RopeScaling::yarn)
        throw ModelError(where + ": rope type '" + std::string(rope_scaling_name(c.rope_scaling)) +
                         "' is not supported for ministral3 (it needs yarn, with llama_4_scaling_beta)");
    const nlohmann::json& r = j[key];
    if (!present(r, "llama_4_scaling_beta")) throw ModelError(where + ": missing \"llama_4_scaling_beta\" (ministral3's query temperature)");
    if (!present(r, "original_max_position_embeddings"))
        throw ModelError(where + ": missing \"original_max_position_embeddings\" (ministral3's query temperature reads it)");
    c.attn_temp_scale = get_float(r, "llama_4_scaling_beta", 0.0f, where);
    c.attn_temp_floor = get_int(r, "original_max_position_embeddings", where);
}

void read_olmo2(const nlohmann::json& j, const std::string& source) {
    for (const char* key : {"sliding_window", "layer_types"})
        if (present(j, key)) throw ModelError(source + ": \"" + std::string(key) + "\" is not supported for olmo2");
}
// ---- end of issue 36's families

// ---- Hybrid (Qwen3.5's text_config): which layers are Gated DeltaNet (layer_types, else every
// full_attention_interval-th layer is full attention), the mixer's heads and conv, the gated
// attention, partial rotary with M-RoPE sections (text positions: one stream for all sections,
// so plain NEOX rope on the rotated dimensions; journey takes no image or video input).
void read_hybrid(ModelConfig& c, const nlohmann::json& j, const ArchTraits& t, const std::string& source) {
    if (!t.hybrid) return;
    c.recurrent_layers.assign(size_t(c.n_layer), false);
    if (present(j, "layer_types")) {
        const auto& lt = j["layer_types"];
        if (!lt.is_array() || lt.size() != size_t(c.n_layer)) throw ModelError(source + ": layer_types must list one type per layer");
        for (size_t l = 0; l < lt.size(); ++l) {
            const std::string type = lt[l].is_string() ? lt[l].get<std::string>() : "";
            if (type != "linear_attention" && type != "full_attention")
                throw ModelError(source + ": layer_types: layer type \"" + excerpt(type, 40) + "\" is not supported (linear_attention, full_attention)");
            c.recurrent_layers[l] = type == "linear_attention";
        }
    } else {
        const int every = present(j, "full_attention_interval") ? get_int(j, "full_attention_interval", source)
                                                                : t.hybrid->full_attention_interval;
        for (int l = 0; l < c.n_layer; ++l) c.recurrent_layers[size_t(l)] = (l + 1) % every != 0;
    }
    c.ssm_k_heads = get_int(j, "linear_num_key_heads", source);
    c.ssm_v_heads = get_int(j, "linear_num_value_heads", source);
    c.ssm_head_dim = get_int(j, "linear_key_head_dim", source);
    if (get_int(j, "linear_value_head_dim", source) != c.ssm_head_dim)
        throw ModelError(source + ": linear_value_head_dim differs from linear_key_head_dim (not supported)");
    c.ssm_conv = get_int(j, "linear_conv_kernel_dim", source);
    c.n_nextn = present(j, "mtp_num_hidden_layers") ? int(j["mtp_num_hidden_layers"].is_number_integer() ? j["mtp_num_hidden_layers"].get<int>() : -1) : 0;
    if (c.n_nextn < 0 || c.n_nextn > 64) throw ModelError(source + ": \"mtp_num_hidden_layers\" must be a small non-negative integer");
    c.ssm_v_tiled = false;  // Hugging Face: value head h reads key head h / (Hv / Hk)
    c.attn_output_gate = json_value(j, "attn_output_gate", t.hybrid->attn_output_gate, source);
    if (!c.attn_output_gate) throw ModelError(source + ": \"attn_output_gate\": false is not supported for " + t.name);
    const nlohmann::json* rp = present(j, "rope_parameters") && j["rope_parameters"].is_object() ? &j["rope_parameters"] : nullptr;
    const float pct = rp && present(*rp, "partial_rotary_factor") ? get_float(*rp, "partial_rotary_factor", 1.0f, source)
                                                                  : get_float(j, "partial_rotary_factor", 1.0f, source);
    if (!(pct > 0.0f && pct <= 1.0f)) throw ModelError(source + ": partial_rotary_factor must be in (0, 1]");
    c.n_rot = static_cast<int>(float(c.head_dim) * pct);
    if (c.n_rot % 2 != 0 || c.n_rot == 0) throw ModelError(source + ": partial_rotary_factor gives an odd or zero rotary width");
    if (rp && present(*rp, "mrope_section")) {
        const auto& ms = (*rp)["mrope_section"];
        int sum = 0;
        if (!ms.is_array()) throw ModelError(source + ": rope_parameters.mrope_section must be a list of integers");
        for (const auto& x : ms) {
            if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() > 4096)
                throw ModelError(source + ": rope_parameters.mrope_section must be a list of non-negative integers");
            c.rope_sections.push_back(x.get<int>());
            sum += x.get<int>();
        }
        if (2 * sum != c.n_rot) throw ModelError(source + ": rope_parameters.mrope_section does not add up to half the rotary width");
    }
    for (const char* key : {"num_experts", "num_local_experts", "shared_expert_intermediate_size"})
        if (present(j, key) && !t.moe) throw ModelError(source + ": \"" + std::string(key) + "\" (a mixture of experts) is not supported for " + t.name);
}
// ---- end of hybrid

// Llama, Mistral, Qwen2/3, Phi-3, Gemma 2: the same key names for the shape.
ModelConfig llama_like_from_hf(const nlohmann::json& file_json, const ArchTraits& t, const std::string& source) {
    // The keys the checkpoint omits take transformers' defaults for the family (the row's data).
    nlohmann::json j = file_json;
    if (t.hf_defaults) {
        j = nlohmann::json::parse(t.hf_defaults);
        j.update(file_json);
    }
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
    // Qwen3.5-MoE has no dense MLP and no intermediate_size: the experts' width stands in.
    c.n_ff = t.moe && !present(j, "intermediate_size") ? get_int(j, "moe_intermediate_size", source)
                                                        : get_int(j, "intermediate_size", source);
    c.norm_eps = get_float(j, "rms_norm_eps", 1e-6f, source);
    c.tied_output = json_value(j, "tie_word_embeddings", t.hf_tied_default, source);
    if (t.arch == Arch::gemma3) c.rope_local_theta = get_float(j, "rope_local_base_freq", 0.0f, source);
    if (t.arch != Arch::gemma4) read_rope(c, j, source);  // gemma4: read_gemma4

    // Gemma 2 names its activation hidden_activation; the others hidden_act.
    const char* act_key = present(j, "hidden_activation") ? "hidden_activation" : "hidden_act";
    const std::string want = t.activation == ActivationKind::geglu_tanh ? "gelu_pytorch_tanh" : "silu";
    const std::string act = json_value(j, act_key, want, source);
    if (act != want) throw ModelError(source + ": " + act_key + " \"" + excerpt(act, 40) + "\" is not supported for " + t.name + " (only " + want + ")");

    // use_bidirectional_attention: Gemma 3 as an encoder (EmbeddingGemma), not causal.
    for (const char* key : {"attention_bias", "mlp_bias", "use_bidirectional_attention", "lm_head_bias"})
        if (json_value(j, key, false, source) && !(t.arch == Arch::gpt_oss && key == std::string("attention_bias")))  // gpt-oss: its row's biases
            throw ModelError(source + ": \"" + std::string(key) + "\": true is not supported for " + t.name);
    if (!t.hybrid && t.arch != Arch::gemma4) read_partial_rotary(c, j, source);  // a hybrid reads its own (read_hybrid)
    if (t.arch == Arch::smollm3) read_no_rope(c, j, source);
    for (const char* key : {"no_rope_layers", "no_rope_layer_interval"})
        if (present(j, key) && t.arch != Arch::smollm3) throw ModelError(source + ": \"" + std::string(key) + "\" is not supported for " + t.name);
    if (t.arch == Arch::gemma2 || t.arch == Arch::gemma3) {
        c.embed_scale = std::sqrt(static_cast<float>(c.n_embd));
        // Gemma 2's default for it differs between transformers versions: not guessed.
        if (!present(j, "query_pre_attn_scalar"))
            throw ModelError(source + ": missing \"query_pre_attn_scalar\" (the attention scale of " + t.name + "; journey does not guess it)");
        const float qpas = get_float(j, "query_pre_attn_scalar", 0.0f, source);
        if (!(qpas > 0.0f && std::isfinite(qpas))) throw ModelError(source + ": \"query_pre_attn_scalar\" must be a positive number");
        c.attn_scale = 1.0f / std::sqrt(qpas);
        c.attn_softcap = get_float(j, "attn_logit_softcapping", 0.0f, source);
        c.final_softcap = get_float(j, "final_logit_softcapping", 0.0f, source);
        // Gemma 3 has no attention soft-cap (llama.cpp's converter asserts it is null).
        if (t.arch == Arch::gemma3 && c.attn_softcap != 0.0f)
            throw ModelError(source + ": \"attn_logit_softcapping\" is not supported for gemma3");
    } else if (t.arch == Arch::gemma4) {
        // read after the sliding layers (below): which layers share and which head width they have
    } else {
        for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping", "query_pre_attn_scalar"})
            if (present(j, key)) throw ModelError(source + ": \"" + std::string(key) + "\" is not supported for " + t.name);
    }
    if (t.arch != Arch::gemma3)
        for (const char* key : {"rope_local_base_freq", "sliding_window_pattern"})
            if (present(j, key)) throw ModelError(source + ": \"" + std::string(key) + "\" is not supported for " + t.name);
    if (t.arch == Arch::granite) read_granite(c, j, source);
    if (t.arch == Arch::olmo2) read_olmo2(j, source);
    if (t.arch == Arch::mistral3) read_mistral3(c, j, source);
    for (const char* key : {"embedding_multiplier", "attention_multiplier", "residual_multiplier", "logits_scaling"})
        if (present(j, key) && t.arch != Arch::granite) throw ModelError(source + ": \"" + std::string(key) + "\" is not supported for " + t.name);
    read_sliding(c, j, source);
    if (t.arch == Arch::gemma4) read_gemma4(c, j, source);
    read_moe(c, j, t, source);
    read_hybrid(c, j, t, source);
    return c;
}

// GPT-NeoX (Pythia): LayerNorm with biases, partial rotary (rotary_pct of each head, NeoX
// pairing), the fused per-head query_key_value, exact GELU, parallel or sequential residual.
ModelConfig gptneox_from_hf(const nlohmann::json& j, const ArchTraits& t, const std::string& source) {
    ModelConfig c;
    apply_traits(c, t);
    c.rope_pairing = RopePairing::half;
    c.n_vocab = get_int(j, "vocab_size", source);
    c.n_ctx = get_int(j, "max_position_embeddings", source);
    c.n_embd = get_int(j, "hidden_size", source);
    c.n_layer = get_int(j, "num_hidden_layers", source);
    c.n_head = get_int(j, "num_attention_heads", source);
    c.n_kv_head = c.n_head;
    c.head_dim = c.n_embd / c.n_head;
    if (c.head_dim * c.n_head != c.n_embd) throw ModelError(source + ": hidden_size is not a multiple of num_attention_heads");
    c.n_ff = get_int(j, "intermediate_size", source);
    c.norm_eps = get_float(j, "layer_norm_eps", 1e-5f, source);
    c.tied_output = json_value(j, "tie_word_embeddings", t.hf_tied_default, source);
    c.parallel_residual = json_value(j, "use_parallel_residual", true, source);
    c.qkv_per_head = true;
    // transformers: rotary_ndims = int(head_size * rotary_pct) (partial_rotary_factor in transformers 5)
    const nlohmann::json* rp = present(j, "rope_parameters") && j["rope_parameters"].is_object() ? &j["rope_parameters"] : nullptr;
    const float pct = rp && present(*rp, "partial_rotary_factor") ? get_float(*rp, "partial_rotary_factor", 1.0f, source)
                      : present(j, "partial_rotary_factor")       ? get_float(j, "partial_rotary_factor", 1.0f, source)
                                                                  : get_float(j, "rotary_pct", 0.25f, source);
    if (!(pct > 0.0f && pct <= 1.0f)) throw ModelError(source + ": rotary_pct must be in (0, 1]");
    c.n_rot = static_cast<int>(float(c.head_dim) * pct);
    if (c.n_rot % 2 != 0 || c.n_rot == 0)
        throw ModelError(source + ": rotary_pct gives " + std::to_string(c.n_rot) + " rotary dimensions (must be even and positive)");
    c.rope_theta = get_float(j, "rotary_emb_base", 10000.0f, source);
    read_rope(c, j, source);
    const std::string act = json_value(j, "hidden_act", std::string("gelu"), source);
    if (act != "gelu") throw ModelError(source + ": hidden_act \"" + excerpt(act, 40) + "\" is not supported for gptneox (only gelu)");
    if (!json_value(j, "attention_bias", true, source)) throw ModelError(source + ": \"attention_bias\": false is not supported for gptneox");
    if (present(j, "sliding_window")) throw ModelError(source + ": \"sliding_window\" is not supported for gptneox");
    return c;
}

// The config of a model of row t (j's model_type is one of t's, or a wrapper's text model of t).
ModelConfig config_of_row(const nlohmann::json& j, const ArchTraits* t, const std::string& source) {
    const std::string type = j.contains("model_type") && j["model_type"].is_string() ? j["model_type"].get<std::string>() : "";
    if (!t && unsupported_family(type)) throw ModelError(source + ": model_type \"" + type + "\" is not supported (" + unsupported_family(type) + ")");
    if (!t) throw ModelError(source + ": model_type \"" + type + "\" is not supported (supported: " + hf_type_names() + ")");
    // A quantized checkpoint: only gpt-oss's MXFP4 experts (quant_method "mxfp4": the experts'
    // *_blocks and *_scales, read as MXFP4 tensors by the safetensors reader); any other method's
    // tensors would mean something else.
    if (present(j, "quantization_config")) {
        const nlohmann::json& q = j["quantization_config"];
        const nlohmann::json m = q.is_object() && q.contains("quant_method") ? q["quant_method"] : nlohmann::json();
        const std::string method = m.is_string() ? m.get<std::string>() : m.dump();
        if (method != "mxfp4" || t->arch != Arch::gpt_oss)
            throw ModelError(source + ": quantization_config quant_method '" + excerpt(method, 40) + "' is not supported" +
                             (t->arch == Arch::gpt_oss ? " (journey reads mxfp4)" : " for " + std::string(t->name)));
    }
    ModelConfig c = t->arch == Arch::gpt2      ? gpt2_from_hf(j, source)
                    : t->arch == Arch::gptneox ? gptneox_from_hf(j, *t, source)
                                               : llama_like_from_hf(j, *t, source);
    c.validate(source);
    return c;
}

}  // namespace

ModelConfig config_from_hf(const nlohmann::json& j, const std::string& source) {
    if (!j.is_object()) throw ModelError(source + ": not a JSON object");
    const std::string type = j.contains("model_type") && j["model_type"].is_string() ? j["model_type"].get<std::string>() : "";
    if (const HfWrapper* first = find_hf_wrapper(type)) {
        // transformers builds the text model from the text config alone (Gemma3Config:
        // Gemma3TextConfig(**text_config), tied by text_config's tie_word_embeddings); the wrapper's
        // own keys (vision_config, image token ids, mm_tokens_per_image) concern images only.
        // llama.cpp's converter lets text_config's keys override the top level's, to the same effect.
        const std::string where = source + ": " + first->text_config;
        if (!j.contains(first->text_config) || !j[first->text_config].is_object())
            throw ModelError(source + ": model_type \"" + type + "\" needs a \"" + first->text_config +
                             "\" object (the text model's keys); journey runs its text model only");
        nlohmann::json text = j[first->text_config];
        const std::string text_type = json_value(text, "model_type", std::string(first->text_model_type), where);
        const HfWrapper* w = find_hf_wrapper(type, text_type);  // the row of that text model
        if (!w)
            throw ModelError(where + ": model_type \"" + excerpt(text_type, 40) + "\" is not supported in a \"" + type +
                             "\" checkpoint (expected " + hf_wrapper_text_types(type) + ")");
        text["model_type"] = w->text_model_type;
        // The wrapper's quantization (Ministral 3's FP8 checkpoints keep it at the top level) is the text model's.
        if (present(j, "quantization_config") && !present(text, "quantization_config")) text["quantization_config"] = j["quantization_config"];
        // The wrapper row's arch (Mistral Small's mistral text model runs as mistral3, as llama.cpp converts it).
        ModelConfig c = config_of_row(text, &traits_of(w->arch), where);
        c.hf_wrapper = w->model_type;
        return c;
    }
    return config_of_row(j, find_hf_arch(type), source);
}

}  // namespace journey
