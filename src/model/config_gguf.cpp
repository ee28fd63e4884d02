// A ModelConfig from GGUF-style metadata: general.architecture picks the row of the
// architecture table, and "<arch>.<key>" gives each hyperparameter (llama.cpp's key names).
#include <algorithm>
#include <cmath>

#include "journey/model/config.h"
#include "journey/errors.h"
#include "journey/formats/model_file.h"
#include "journey/model/gguf_keys.h"

namespace journey {
namespace {

class Keys {
public:
    Keys(const ModelFile& f, std::string arch) : file_(f), arch_(std::move(arch)) {}

    // "<arch>.<key>": a required positive integer.
    int integer(Key key) const {
        const nlohmann::json* v = find(key);
        if (!v) fail(key, "is missing");
        return positive(key, *v);
    }
    int integer(Key key, int fallback) const {
        const nlohmann::json* v = find(key);
        return v ? positive(key, *v) : fallback;
    }
    float number(Key key) const {
        const nlohmann::json* v = find(key);
        if (!v) fail(key, "is missing");
        return real(key, *v);
    }
    float number(Key key, float fallback) const {
        const nlohmann::json* v = find(key);
        return v ? real(key, *v) : fallback;
    }

    bool flag(Key key, bool fallback) const {
        const nlohmann::json* v = find(key);
        if (!v) return fallback;
        if (!v->is_boolean()) fail(key, "must be a boolean");
        return v->get<bool>();
    }
    const nlohmann::json* raw(Key key) const { return find(key); }

    [[noreturn]] void fail(Key key, const std::string& what) const { fail(std::string(key_name(key)), what); }
    [[noreturn]] void fail(const std::string& key, const std::string& what) const {
        throw ModelError(file_.path.string() + ": metadata '" + arch_ + "." + key + "' " + what);
    }

private:
    const ModelFile& file_;
    std::string arch_;

    const nlohmann::json* find(Key key) const {
        auto it = file_.metadata.find(key_of(arch_, key));
        return it == file_.metadata.end() ? nullptr : &*it;
    }
    int positive(Key key, const nlohmann::json& v) const {
        if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > (1 << 30))
            fail(key, "must be a positive integer");
        return v.get<int>();
    }
    float real(Key key, const nlohmann::json& v) const {
        if (!v.is_number()) fail(key, "must be a number");
        return v.get<float>();
    }
};

bool is_hybrid_key(Key key) {
    return key == Key::rope_dimension_sections || key == Key::nextn_predict_layers || key == Key::ssm_conv_kernel ||
           key == Key::ssm_state_size || key == Key::ssm_group_count || key == Key::ssm_time_step_rank ||
           key == Key::ssm_inner_size || key == Key::recurrent_layers || key == Key::full_attention_interval;
}

bool is_gemma4_key(Key key) {
    return key == Key::key_length_swa || key == Key::value_length_swa || key == Key::rope_dimension_count_swa ||
           key == Key::shared_kv_layers || key == Key::embedding_length_per_layer_input;
}

// Gemma 4 (llama.cpp's gemma4): feed_forward_length may be one width per layer (the double-wide
// MLP of the KV-shared layers); the sliding layers' head width and rotary dims; the KV-shared
// layers; the per-layer embedding width (0: none); values normed without weight, scale 1.
void read_gemma4(ModelConfig& c, const Keys& k) {
    if (const nlohmann::json* f = k.raw(Key::feed_forward_length); f && f->is_array()) {
        if (f->size() != size_t(c.n_layer)) k.fail(Key::feed_forward_length, "must hold one width per layer");
        c.n_ff = 0;
        for (const auto& x : *f) {
            if (!x.is_number_integer() || x.get<int64_t>() <= 0 || x.get<int64_t>() > (1 << 30))
                k.fail(Key::feed_forward_length, "must hold positive integers");
            c.n_ff_layers.push_back(x.get<int>());
            c.n_ff = std::max(c.n_ff, x.get<int>());
        }
    }
    c.head_dim_swa = k.integer(Key::key_length_swa, c.head_dim);
    if (k.integer(Key::value_length_swa, c.head_dim_swa) != c.head_dim_swa)
        k.fail(Key::value_length_swa, "differs from attention.key_length_swa (not supported)");
    c.n_rot_swa = k.integer(Key::rope_dimension_count_swa, c.head_dim_swa);
    if (c.n_rot_swa != c.head_dim_swa) k.fail(Key::rope_dimension_count_swa, "differs from attention.key_length_swa (not supported)");
    const nlohmann::json* shared = k.raw(Key::shared_kv_layers);
    c.n_kv_shared = shared && *shared != 0 ? k.integer(Key::shared_kv_layers) : 0;
    const nlohmann::json* ple = k.raw(Key::embedding_length_per_layer_input);
    c.n_embd_per_layer = ple && *ple != 0 ? k.integer(Key::embedding_length_per_layer_input) : 0;
    c.embed_scale = std::sqrt(static_cast<float>(c.n_embd));
    c.attn_scale = 1.0f;
    c.v_norm = true;
    c.rope_local_theta = k.number(Key::rope_freq_base_swa, 10000.0f);
    // llama.cpp: the KV-shared sliding layers read layer n_kv - 2, the full ones n_kv - 1 (n_kv: the
    // layers computing keys and values); journey reads the last earlier layer of the same kind,
    // which is the same when those two layers are [sliding, full], as in every Gemma 4.
    const int n_kv = c.n_layer - c.n_kv_shared;
    if (c.n_kv_shared > 0 && (n_kv < 2 || !c.window_of_layer(n_kv - 2) || c.window_of_layer(n_kv - 1)))
        k.fail(Key::shared_kv_layers, "needs the last two layers before the shared ones to be [sliding, full] (as llama.cpp assumes)");
}

bool is_granite_key(Key key) {
    return key == Key::embedding_scale || key == Key::attention_scale || key == Key::residual_scale || key == Key::logit_scale;
}

// Granite (llama.cpp's granite): logit_scale is required (logits / it); embedding_scale,
// residual_scale and attention.scale are optional, 0 or absent meaning none (attention: 1/sqrt(D));
// rope.scaling.finetuned false turns rope off on every layer (llama.cpp's switch for it).
void read_granite(ModelConfig& c, const Keys& k) {
    auto scale = [&](Key key, float absent) {
        const float v = k.number(key, absent);
        if (!std::isfinite(v) || v < 0.0f) k.fail(key, "must be a positive number");
        return v == 0.0f ? absent : v;
    };
    c.logit_scale = k.number(Key::logit_scale);
    if (!(std::isfinite(c.logit_scale) && c.logit_scale > 0.0f)) k.fail(Key::logit_scale, "must be a positive number");
    c.embed_scale = scale(Key::embedding_scale, 1.0f);
    c.residual_scale = scale(Key::residual_scale, 1.0f);
    c.attn_scale = scale(Key::attention_scale, 0.0f);
    if (!k.flag(Key::rope_scaling_finetuned, true)) c.no_rope_layers.assign(size_t(c.n_layer), true);
}

bool is_mistral3_key(Key key) { return key == Key::yarn_log_multiplier || key == Key::attention_temperature_scale; }

// Ministral 3 (llama.cpp's mistral3): the query temperature when attention.temperature_scale is
// there and not 0, over rope.scaling.original_context_length (llama.cpp's n_ctx_orig_yarn, else
// the context length).
void read_mistral3(ModelConfig& c, const Keys& k) {
    c.attn_temp_scale = k.number(Key::attention_temperature_scale, 0.0f);
    if (!std::isfinite(c.attn_temp_scale)) k.fail(Key::attention_temperature_scale, "must be a finite number");
    if (c.attn_temp_scale != 0.0f) c.attn_temp_floor = k.integer(Key::rope_scaling_original_context_length, c.n_ctx);
}

// Any "<arch>." key outside gguf_keys.h's table may change the math and is refused by name.
void refuse_unknown_keys(const ModelFile& file, const std::string& arch, const ArchTraits& traits, const Keys& k) {
    const std::string prefix = arch + ".";
    for (auto it = file.metadata.begin(); it != file.metadata.end(); ++it) {
        const std::string& key = it.key();
        if (key.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string rest = key.substr(prefix.size());
        bool known = find_key(rest) != nullptr;
        if (rest.starts_with("expert_")) {
            // A mixture-of-experts family reads its experts' keys (read_moe); a dense model's
            // converter may write zero experts; anything else is experts journey would not run.
            const bool zero = (rest == "expert_count" || rest == "expert_used_count") && it->is_number_integer() &&
                              it->get<int64_t>() == 0;
            known = known && ((traits.moe && (rest != "expert_shared_feed_forward_length" || traits.moe->shared_expert)) || zero);
        }
        if (const GgufKey* g = find_key(rest); g && is_hybrid_key(g->key)) known = traits.hybrid;  // a hybrid family's keys only
        if (const GgufKey* g = find_key(rest); g && is_gemma4_key(g->key)) known = arch == "gemma4";
        if (const GgufKey* g = find_key(rest); g && is_granite_key(g->key)) known = arch == "granite";
        if (const GgufKey* g = find_key(rest); g && is_mistral3_key(g->key)) known = arch == "mistral3";
        if (!known) k.fail(rest, "is not supported (it may change the math; journey refuses rather than ignore it)");
    }
}

// rope.scaling.*: none, linear, yarn or longrope (llama.cpp's types; Llama 3's factors come as the
// rope_freqs.weight tensor, longrope's as rope_factors_long/short.weight). rope.scaling.attn_factor
// multiplies cos and sin for every type, as llama.cpp's rope does.
void read_rope_scaling(ModelConfig& c, const ModelFile& file, const std::string& arch, const Keys& k) {
    const float attn_factor = k.number(Key::rope_scaling_attn_factor, 1.0f);
    if (!(std::isfinite(attn_factor) && attn_factor > 0.0f)) k.fail(Key::rope_scaling_attn_factor, "must be positive");
    c.rope_mscale = attn_factor;
    auto it = file.metadata.find(key_of(arch, Key::rope_scaling_type));
    std::string type = it == file.metadata.end() ? "none" : it->is_string() ? it->get<std::string>() : "";
    // llama.cpp's Phi-3 converter writes no rope.scaling.type: the factor tensors alone say
    // longrope (llama.cpp applies them whenever they are there).
    if (type == "none" && c.arch == Arch::phi3 && (file.find(gguf_tensor_name(Tensor::rope_factors_long)) || file.find(gguf_tensor_name(Tensor::rope_factors_short))))
        type = "longrope";
    if (type != "yarn")
        for (Key key : {Key::yarn_ext_factor, Key::yarn_attn_factor, Key::yarn_beta_fast,
                                Key::yarn_beta_slow, Key::yarn_log_multiplier})
            if (k.raw(key)) k.fail(key, "is given without rope.scaling.type yarn");
    if (type == "none") {
        if (k.number(Key::rope_scaling_factor, 1.0f) != 1.0f) k.fail(Key::rope_scaling_factor, "is given without rope.scaling.type");
        return;
    }
    if (type != "linear" && type != "yarn" && type != "longrope")
        k.fail(Key::rope_scaling_type, "'" + excerpt(type, 40) + "' is not implemented (implemented: none, linear, yarn, longrope)");
    c.rope_original_ctx = k.integer(Key::rope_scaling_original_context_length, c.n_ctx);
    if (type == "longrope") {
        c.rope_scaling = RopeScaling::longrope;  // the factors are tensors (weights.cpp)
        c.rope_factor = float(c.n_ctx) / float(c.rope_original_ctx);
        return;
    }
    c.rope_factor = k.number(Key::rope_scaling_factor);
    if (!(std::isfinite(c.rope_factor) && c.rope_factor > 0.0f)) k.fail(Key::rope_scaling_factor, "must be positive");
    if (type == "linear") {
        c.rope_scaling = RopeScaling::linear;
        return;
    }
    // yarn, as llama.cpp computes it: blend band from beta_fast/beta_slow (32/1), cos/sin scaled
    // by 1 + 0.1 ln(factor) times attn_factor. The converter writes the yarn_* keys from the
    // Hugging Face config; they are honoured here as transformers defines them (llama.cpp reads
    // them only for some architectures), and an extrapolation factor other than 1 is refused.
    c.rope_scaling = RopeScaling::yarn;
    if (k.number(Key::yarn_ext_factor, 1.0f) != 1.0f)
        k.fail(Key::yarn_ext_factor, "other than 1 is not supported");
    c.rope_beta_fast = k.number(Key::yarn_beta_fast, 32.0f);
    c.rope_beta_slow = k.number(Key::yarn_beta_slow, 1.0f);
    const double f = c.rope_factor;
    c.rope_mscale = k.raw(Key::yarn_attn_factor) ? k.number(Key::yarn_attn_factor)
                                                            : float((f <= 1.0 ? 1.0 : 1.0 + 0.1 * std::log(f)) * attn_factor);
    // mistral3's yarn_log_multiplier (HF mscale_all_dim; 0: none): llama.cpp's attention factor
    // mscale(f, 1) / mscale(f, it), mscale(f, m) = 1 + 0.1 m ln f, times rope.scaling.attn_factor,
    // whatever yarn_attn_factor says (llama.cpp recomputes it; the converter writes both only
    // from a config with attention_factor, refused then).
    if (const float log_mul = k.number(Key::yarn_log_multiplier, 0.0f); log_mul != 0.0f) {
        if (!std::isfinite(log_mul) || log_mul < 0.0f) k.fail(Key::yarn_log_multiplier, "must be a positive number");
        if (k.raw(Key::yarn_attn_factor)) k.fail(Key::yarn_attn_factor, "is given with rope.scaling.yarn_log_multiplier (llama.cpp ignores it then)");
        auto mscale = [f](double m) { return f <= 1.0 ? 1.0 : 1.0 + 0.1 * m * std::log(f); };
        c.rope_mscale = float(mscale(1.0) / mscale(log_mul) * attn_factor);
    }
}

// Which layers of a Gemma 3 file slide: attention.sliding_window_pattern as a count (every n-th
// layer, 1-based, is global; llama.cpp's default 6) or as one boolean per layer.
void gemma3_sliding(ModelConfig& c, const Keys& k) {
    const nlohmann::json* p = k.raw(Key::sliding_window_pattern);
    if (p && p->is_array()) {
        if (p->size() != size_t(c.n_layer)) k.fail(Key::sliding_window_pattern, "must hold one flag per layer");
        for (size_t l = 0; l < p->size(); ++l) {
            if (!(*p)[l].is_boolean()) k.fail(Key::sliding_window_pattern, "must hold booleans");
            c.sliding_layers[l] = (*p)[l].get<bool>();
        }
        return;
    }
    const int n = k.integer(Key::sliding_window_pattern, 6);
    for (int l = 0; l < c.n_layer; ++l) c.sliding_layers[size_t(l)] = l % n < n - 1;
}

// ---- Mixture of experts: the counts and the expert width from the keys; the routing as llama.cpp
// hard-codes it per family (the row's MoeTraits: qwen3moe renormalises its top-k, gpt-oss
// softmaxes its top-k logits), and gpt-oss's clamped SwiGLU with llama.cpp's constants.
void read_moe(ModelConfig& c, const ArchTraits& t, const Keys& k) {
    if (!t.moe) return;
    c.n_expert = k.integer(Key::expert_count);
    c.n_expert_used = k.integer(Key::expert_used_count);
    if (t.moe->experts_ff) {  // Mixtral, OLMoE: llama.cpp's experts are feed_forward_length wide
        if (k.integer(Key::expert_feed_forward_length, c.n_ff) != c.n_ff)
            k.fail(Key::expert_feed_forward_length, "differs from feed_forward_length (llama.cpp's " + std::string(t.name) + " reads that one)");
        c.n_ff_exp = c.n_ff;
    } else {
        c.n_ff_exp = k.integer(Key::expert_feed_forward_length);
    }
    c.moe_gating = t.moe->gating;
    c.moe_norm_topk = t.moe->norm_topk;
    if (t.moe->shared_expert) {  // llama.cpp: expert_shared_feed_forward_length, else feed_forward_length
        const nlohmann::json* ff = k.raw(Key::feed_forward_length);
        c.n_ff_shexp = ff ? k.integer(Key::expert_shared_feed_forward_length, k.integer(Key::feed_forward_length))
                          : k.integer(Key::expert_shared_feed_forward_length);
    }
    if (c.activation == ActivationKind::swiglu_oai) {
        c.swiglu_limit = 7.0f;
        c.swiglu_alpha = 1.702f;
    }
}
// ---- end of mixture of experts

// ---- Hybrid (Qwen3.5, Qwen3-Next: llama.cpp's qwen35, qwen35moe, qwen3next): the MTP heads
// after the blocks (block_count counts them; set aside), the Gated DeltaNet sizes from the ssm.*
// keys, which layers recur (attention.recurrent_layers, else every full_attention_interval-th
// layer is full), M-RoPE sections (text positions: one stream, plain NEOX rope on the rotated
// dimensions), the gated attention (llama.cpp always gates), value heads in the row's order.
void read_hybrid(ModelConfig& c, const ArchTraits& t, const Keys& k) {
    if (!t.hybrid) return;
    const nlohmann::json* nextn = k.raw(Key::nextn_predict_layers);
    c.n_nextn = nextn ? k.integer(Key::nextn_predict_layers) : 0;
    if (c.n_nextn >= c.n_layer) k.fail(Key::nextn_predict_layers, "leaves no blocks (block_count counts the MTP heads)");
    c.n_layer -= c.n_nextn;
    c.ssm_conv = k.integer(Key::ssm_conv_kernel);
    c.ssm_head_dim = k.integer(Key::ssm_state_size);
    c.ssm_k_heads = k.integer(Key::ssm_group_count);
    c.ssm_v_heads = k.integer(Key::ssm_time_step_rank);
    if (int64_t{c.ssm_v_heads} * c.ssm_head_dim != k.integer(Key::ssm_inner_size))
        k.fail(Key::ssm_inner_size, "is not ssm.time_step_rank x ssm.state_size (value heads of another width are not supported)");
    c.ssm_v_tiled = t.hybrid->gguf_v_tiled;  // qwen35: tiled by the converter; qwen3next: grouped, as its checkpoint
    c.attn_output_gate = t.hybrid->attn_output_gate;
    c.recurrent_layers.assign(size_t(c.n_layer), false);
    if (const nlohmann::json* r = k.raw(Key::recurrent_layers)) {
        if (!r->is_array() || r->size() != size_t(c.n_layer + c.n_nextn))
            k.fail(Key::recurrent_layers, "must hold one flag per block (MTP heads included)");
        for (size_t l = 0; l < r->size(); ++l) {
            if (!(*r)[l].is_boolean()) k.fail(Key::recurrent_layers, "must hold booleans");
            if (l < size_t(c.n_layer)) c.recurrent_layers[l] = (*r)[l].get<bool>();
            else if ((*r)[l].get<bool>()) k.fail(Key::recurrent_layers, "marks an MTP head recurrent (not supported)");
        }
    } else {
        const int every = k.integer(Key::full_attention_interval, t.hybrid->full_attention_interval);
        for (int l = 0; l < c.n_layer; ++l) c.recurrent_layers[size_t(l)] = (l + 1) % every != 0;
    }
    if (const nlohmann::json* s = k.raw(Key::rope_dimension_sections)) {
        if (!s->is_array()) k.fail(Key::rope_dimension_sections, "must be a list of integers");
        int sum = 0;
        for (const auto& x : *s) {
            if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() > 4096)
                k.fail(Key::rope_dimension_sections, "must be a list of non-negative integers");
            c.rope_sections.push_back(x.get<int>());
            sum += x.get<int>();
        }
        if (2 * sum != c.rot_dims()) k.fail(Key::rope_dimension_sections, "do not add up to half of rope.dimension_count");
    }
}
// ---- end of hybrid

}  // namespace

ModelConfig config_from_gguf(const ModelFile& file) {
    const std::string source = file.path.string();
    auto it = file.metadata.find("general.architecture");
    if (it == file.metadata.end() || !it->is_string())
        throw ModelError(source + ": metadata 'general.architecture' is missing");
    const std::string arch = it->get<std::string>();
    // llama.cpp's llama architecture is Mixtral's too: a file with experts takes Mixtral's row.
    const auto experts = file.metadata.find(key_of(arch, Key::expert_count));
    const bool has_experts = experts != file.metadata.end() && experts->is_number_integer() && experts->get<int64_t>() > 0;
    const ArchTraits* traits = find_arch(arch, has_experts);
    if (!traits && unsupported_family(arch)) throw ModelError(source + ": architecture '" + arch + "' is not supported (" + unsupported_family(arch) + ")");
    if (!traits) throw ModelError(source + ": architecture '" + arch + "' is not supported (supported: " + arch_names() + ")");

    ModelConfig c;
    apply_traits(c, *traits);
    const Keys k(file, arch);
    refuse_unknown_keys(file, arch, *traits, k);
    c.n_embd = k.integer(Key::embedding_length);
    c.n_layer = k.integer(Key::block_count);
    const nlohmann::json* ff = k.raw(Key::feed_forward_length);
    // gemma4: per layer (read_gemma4); Qwen3.5-MoE has no dense width (the experts' stands in)
    c.n_ff = ff && ff->is_array() && c.arch == Arch::gemma4 ? 1
             : !ff && traits->moe                           ? k.integer(Key::expert_feed_forward_length)
                                                            : k.integer(Key::feed_forward_length);
    c.n_ctx = k.integer(Key::context_length);
    c.n_head = k.integer(Key::head_count);
    c.n_kv_head = k.integer(Key::head_count_kv, c.n_head);
    // key_length is the head width when it differs from C/H (Gemma, Qwen3); values must match.
    c.head_dim = k.integer(Key::key_length, c.n_embd / c.n_head);
    if (k.integer(Key::value_length, c.head_dim) != c.head_dim)
        k.fail(Key::value_length, "differs from attention.key_length " + std::to_string(c.head_dim) + " (not supported)");
    if (c.arch == Arch::gpt2 && c.head_dim * c.n_head != c.n_embd)
        k.fail(Key::key_length, "must be embedding_length / head_count for gpt2");
    c.norm_eps = k.number(c.norm == NormKind::rmsnorm ? Key::layer_norm_rms_epsilon : Key::layer_norm_epsilon);
    if (c.position == PositionKind::rope) {
        c.rope_pairing = traits->gguf_rope;
        c.rope_theta = k.number(Key::rope_freq_base, 10000.0f);
        c.n_rot = k.integer(Key::rope_dimension_count, c.head_dim);
        // GPT-NeoX, Phi-3 (Phi-4-mini) and Qwen3.5 rotate a part of each head; the other families all of it.
        // Gemma 4's full layers rotate all of the head, holding pairs still with rope_freqs.
        const bool partial = c.arch == Arch::gptneox || c.arch == Arch::phi3 || traits->hybrid;
        if (c.n_rot != c.head_dim && (!partial || c.n_rot > c.head_dim || c.n_rot % 2 != 0))
            k.fail(Key::rope_dimension_count, "differs from head_dim " + std::to_string(c.head_dim) +
                                               " (partial rotary embedding is not supported for " + arch + ")");
        read_rope_scaling(c, file, arch, k);
        if (c.arch == Arch::smollm3) {  // llama.cpp: n_no_rope_layer_step 4, no key (layer il skips rope when (il+1) % 4 == 0)
            c.no_rope_layers.assign(size_t(c.n_layer), false);
            for (int l = 0; l < c.n_layer; ++l) c.no_rope_layers[size_t(l)] = (l + 1) % 4 == 0;
        }
    }
    c.parallel_residual = k.flag(Key::use_parallel_residual, false);
    if (c.parallel_residual && c.arch != Arch::gptneox) k.fail(Key::use_parallel_residual, "is not supported for " + arch);
    if (c.arch == Arch::gptneox && !file.metadata.contains(key_of(arch, Key::use_parallel_residual)))
        k.fail(Key::use_parallel_residual, "is missing (llama.cpp requires it for gptneox)");
    const bool gemma34 = c.arch == Arch::gemma3 || c.arch == Arch::gemma4;
    if (k.raw(Key::rope_freq_base_swa) && !gemma34) k.fail(Key::rope_freq_base_swa, "is not supported for " + arch);
    if (k.raw(Key::sliding_window_pattern) && !gemma34)
        k.fail(Key::sliding_window_pattern, "is not supported for " + arch);
    c.attn_softcap = k.number(Key::attn_logit_softcapping, 0.0f);
    c.final_softcap = k.number(Key::final_logit_softcapping, 0.0f);
    // Gemma 2 caps both; llama.cpp's Gemma 3 reads only the final cap.
    if (c.arch != Arch::gemma2 && c.attn_softcap != 0.0f) k.fail(Key::attn_logit_softcapping, "is not supported for " + arch);
    if (c.arch != Arch::gemma2 && !gemma34 && c.final_softcap != 0.0f)
        k.fail(Key::final_logit_softcapping, "is not supported for " + arch);
    c.sliding_window = k.integer(Key::sliding_window, 0);
    if (c.sliding_window > 0) {
        // llama.cpp's patterns: Gemma 2 slides on even layers; Phi-3's window covers every layer
        // (llama.cpp leaves it unapplied; Hugging Face applies it, and so does journey).
        c.sliding_layers.assign(size_t(c.n_layer), true);
        if (c.arch == Arch::gemma2)
            for (int l = 0; l < c.n_layer; ++l) c.sliding_layers[size_t(l)] = l % 2 == 0;
        else if (gemma34)
            gemma3_sliding(c, k);
        else if (c.arch == Arch::gpt_oss)  // llama.cpp: swa pattern 2, the even layers slide
            for (int l = 0; l < c.n_layer; ++l) c.sliding_layers[size_t(l)] = l % 2 == 0;
        else if (c.arch != Arch::phi3)
            k.fail(Key::sliding_window, "is not supported for " + arch);
    }
    if (c.arch == Arch::gemma2 || c.arch == Arch::gemma3) {
        c.embed_scale = std::sqrt(static_cast<float>(c.n_embd));
        // GGUF has no query_pre_attn_scalar: llama.cpp scales by 1/sqrt(head_dim), except for the
        // 27B models (Gemma 2: 46 layers, Gemma 3: 62), whose scalar is n_embd / n_head.
        const bool big = c.n_layer == (c.arch == Arch::gemma2 ? 46 : 62);
        c.attn_scale = 1.0f / std::sqrt(static_cast<float>(big ? c.n_embd / c.n_head : c.head_dim));
    }
    if (c.arch == Arch::gemma3 && c.sliding_window > 0)  // llama.cpp: the sliding layers' own base, unscaled
        c.rope_local_theta = k.number(Key::rope_freq_base_swa, 10000.0f);

    const TensorInfo* embd = file.find(gguf_tensor_name(Tensor::tok_embd));
    if (!embd || embd->shape.size() != 2)
        throw ModelError(source + ": tensor 'token_embd.weight' is missing or not a matrix (it gives the vocabulary size)");
    c.n_vocab = static_cast<int>(embd->shape[0]);
    c.tied_output = file.find(gguf_tensor_name(Tensor::output)) == nullptr;
    if (c.arch == Arch::gemma4) {
        if (c.sliding_window <= 0) k.fail(Key::sliding_window, "is missing (gemma4 needs it)");
        read_gemma4(c, k);
    }
    if (c.arch == Arch::granite) read_granite(c, k);
    if (c.arch == Arch::mistral3) read_mistral3(c, k);
    read_moe(c, *traits, k);
    read_hybrid(c, *traits, k);
    c.validate(source);
    return c;
}

}  // namespace journey
