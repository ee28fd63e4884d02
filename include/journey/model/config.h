// The shape and the architecture facts of a model, independent of the file it came from.
// Every family is a row of the architecture table (arch.h); the forward pass reads the kinds
// (norm, activation, position) and the numbers here instead of asking "is this GPT-2?".
#pragma once
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "journey/kernels/matrix.h"  // RopePairing
#include "journey/model/arch.h"

namespace journey {

// How rotary frequencies are stretched for long contexts (HF rope_scaling / GGUF rope.scaling.*).
// GGUF's rope_freqs.weight (Llama 3's factors, precomputed by the converter) is a weight, not this.
// dynamic (NTK) changes nothing up to max_position_embeddings, which a session never exceeds.
// yarn blends interpolated and original frequencies per dimension and scales the rotated values
// (rope_mscale); longrope (Phi-3.5) divides by per-dimension factors, long ones when the context in
// use exceeds the original context (as llama.cpp chooses), and scales by rope_mscale.
enum class RopeScaling { none, linear, llama3, dynamic, yarn, longrope };
std::string_view rope_scaling_name(RopeScaling s);

struct ModelConfig;
// Sets c's arch and its norm, activation and position kinds from the row.
void apply_traits(ModelConfig& c, const ArchTraits& t);

struct ModelConfig {
    Arch arch = Arch::gpt2;
    int n_vocab = 0;     // rows of the token embedding / unembedding
    int n_ctx = 0;       // longest sequence the model was made for (positions)
    int n_embd = 0;      // residual stream width C
    int n_layer = 0;
    int n_head = 0;      // query heads
    int n_kv_head = 0;   // key/value heads (== n_head without grouped-query attention)
    int head_dim = 0;    // per head; n_embd / n_head unless the checkpoint says otherwise
    int n_ff = 0;        // MLP hidden width
    float norm_eps = 1e-5f;
    float rope_theta = 10000.0f;
    RopePairing rope_pairing = RopePairing::none;
    RopeScaling rope_scaling = RopeScaling::none;
    float rope_factor = 1.0f;           // linear and llama3: positions / factor (long wavelengths)
    float rope_low_freq_factor = 1.0f;  // llama3: wavelengths above original_ctx / low are divided by factor,
    float rope_high_freq_factor = 4.0f; //   those below original_ctx / high kept, and those between blended
    int rope_original_ctx = 0;          // llama3, yarn, longrope: original_max_position_embeddings
    float rope_beta_fast = 32.0f;       // yarn: the band between these rotation counts is blended
    float rope_beta_slow = 1.0f;
    float rope_mscale = 1.0f;           // yarn, longrope: cos and sin are multiplied by this (attention factor)
    bool rope_yarn_truncate = true;     // yarn: the blend band's ends rounded to whole dimensions (llama.cpp
                                        //   always; HF "truncate": false (gpt-oss) keeps them fractional)
    std::vector<float> rope_long_factors, rope_short_factors;  // longrope (HF config; GGUF: tensors), n_rot/2 each
    int n_rot = 0;                      // rotated dimensions of each head (GPT-NeoX: rotary_pct * head_dim); 0: head_dim
    float rope_local_theta = 0.0f;      // Gemma 3: the sliding layers' base (no scaling there); 0: one base for all
    // SmolLM3 (NoPE): the layers that do not rotate at all (HF no_rope_layers' zeros; GGUF smollm3:
    // every 4th, as llama.cpp hard-codes). Empty: every layer rotates.
    std::vector<bool> no_rope_layers;
    bool parallel_residual = false;     // GPT-NeoX: x + attn(ln1(x)) + mlp(ln2(x))
    bool qkv_per_head = false;          // HF GPT-NeoX: the fused qkv output is [q_h | k_h | v_h] per head
    bool tied_output = true;  // logits use the token embedding when there is no separate lm_head
    ActivationKind activation = ActivationKind::gelu_new;
    NormKind norm = NormKind::layernorm;
    PositionKind position = PositionKind::learned;
    float embed_scale = 1.0f;    // the token embedding is multiplied by this (Gemma: sqrt(C))
    float attn_scale = 0.0f;     // scores = q·k * attn_scale; 0 means 1/sqrt(head_dim)
    float attn_softcap = 0.0f;   // scores = cap * tanh(scores / cap) when > 0 (Gemma 2)
    float final_softcap = 0.0f;  // logits = cap * tanh(logits / cap) when > 0 (Gemma 2)
    int sliding_window = 0;      // keys a query sees in a sliding layer, itself included; 0: none
    std::vector<bool> sliding_layers;  // n_layer flags (empty: no sliding layer)
    // A Hugging Face checkpoint wrapping the text model (arch.h's HfWrapper: Gemma 3's multimodal
    // model_type "gemma3"): its model_type, whose row says how its tensors are named; else empty.
    std::string hf_wrapper;
    // Mixture of experts (the row's MoeTraits; src/model/moe.cpp): every layer's MLP is n_expert
    // experts of width n_ff_exp, of which the router picks n_expert_used per token.
    int n_expert = 0;                  // 0: a dense model
    int n_expert_used = 0;
    int n_ff_exp = 0;
    int n_ff_shexp = 0;                // the shared expert's width (the row's MoeTraits::shared_expert); 0: none
    MoeGating moe_gating = MoeGating::softmax_topk;
    bool moe_norm_topk = false;        // softmax_topk: the kept weights renormalised to sum 1
    float swiglu_limit = 0.0f;         // swiglu_oai: gate clamped above, up clamped to [-limit, limit]
    float swiglu_alpha = 1.702f;       // swiglu_oai: gate * sigmoid(alpha * gate)
    // Hybrid (the row's HybridTraits; src/model/delta_net.cpp): recurrent_layers[l] says layer l is
    // a Gated DeltaNet layer (empty: every layer is attention). Its mixer: ssm_k_heads key heads
    // and ssm_v_heads value heads (a multiple) of ssm_head_dim each (keys and values alike), a
    // causal conv1d of ssm_conv taps over the q|k|v channels. ssm_v_tiled: value head h reads key
    // head h % Hk (GGUF: the converter reorders the value heads); else h / (Hv / Hk) (Hugging Face).
    std::vector<bool> recurrent_layers;
    int ssm_k_heads = 0, ssm_v_heads = 0, ssm_head_dim = 0, ssm_conv = 0;
    bool ssm_v_tiled = false;
    bool attn_output_gate = false;  // full attention: q_proj gives [q | gate] per head, out * sigmoid(gate)
    int n_nextn = 0;                // MTP heads after the blocks (set aside: normal decoding skips them)
    std::vector<int> rope_sections; // M-RoPE sections (text: all streams equal -> plain NEOX rope)
    // Gemma 4: the sliding layers' head width (and rotated dims, n_rot_swa) when it differs from
    // the full layers' (head_dim, n_rot); per-layer MLP widths (double-wide MLP on the KV-shared
    // layers; n_ff is then the widest); the last n_kv_shared layers compute no keys or values and
    // read those of the last earlier layer of their kind (sliding or full); per-layer embeddings
    // of n_embd_per_layer values per layer; a weightless RMSNorm on the values.
    int head_dim_swa = 0, n_rot_swa = 0;  // 0: as head_dim / n_rot
    std::vector<int> n_ff_layers;         // empty: n_ff everywhere
    int n_kv_shared = 0;
    int n_embd_per_layer = 0;
    bool v_norm = false;
    std::vector<float> rope_freq_factors;  // Hugging Face proportional rope: the divisors GGUF's rope_freqs holds
    // Granite: each residual branch (attention out, MLP out) is multiplied by residual_scale before
    // it is added; the logits are divided by logit_scale (embedding and attention multipliers:
    // embed_scale, attn_scale).
    float residual_scale = 1.0f;
    float logit_scale = 1.0f;
    // Ministral 3 (Llama 4's attention temperature): after rope, each query at position p is
    // multiplied by 1 + attn_temp_scale * ln(1 + floor(p / attn_temp_floor)) (HF
    // rope_parameters.llama_4_scaling_beta over original_max_position_embeddings; GGUF
    // attention.temperature_scale over rope.scaling.original_context_length). 0: none.
    float attn_temp_scale = 0.0f;
    int attn_temp_floor = 0;
    float attn_temp(int pos) const {
        if (attn_temp_scale == 0.0f) return 1.0f;
        // as llama.cpp computes it (llm_graph_input_attn_temp): in double, stored as float
        return float(std::log(std::floor(float(pos) / float(attn_temp_floor)) + 1.0) * attn_temp_scale + 1.0);
    }

    int head_dim_of(int layer) const { return head_dim_swa > 0 && window_of_layer(layer) ? head_dim_swa : head_dim; }
    int n_ff_of(int layer) const { return n_ff_layers.empty() ? n_ff : n_ff_layers[size_t(layer)]; }
    // The layer whose keys and values layer `layer` reads (itself unless it is KV-shared).
    int kv_source(int layer) const {
        if (n_kv_shared <= 0 || layer < n_layer - n_kv_shared) return layer;
        for (int l = n_layer - n_kv_shared - 1; l >= 0; --l)
            if (window_of_layer(l) == window_of_layer(layer)) return l;
        return layer;
    }
    // Layer l's shapes as a config of their own (head width, rotated dims, MLP width): what its
    // block and its tensors' shapes read. Varies per layer only for Gemma 4.
    bool varies_per_layer() const { return head_dim_swa > 0 || !n_ff_layers.empty(); }
    ModelConfig layer_view(int layer) const {
        ModelConfig v = *this;
        if (head_dim_swa > 0 && window_of_layer(layer)) {
            v.head_dim = head_dim_swa;
            v.n_rot = n_rot_swa;
        }
        v.n_ff = n_ff_of(layer);
        return v;
    }
    bool window_of_layer(int layer) const {
        return static_cast<size_t>(layer) < sliding_layers.size() && sliding_layers[size_t(layer)];
    }

    bool is_recurrent(int layer) const {
        return static_cast<size_t>(layer) < recurrent_layers.size() && recurrent_layers[size_t(layer)];
    }
    int n_recurrent() const {
        int n = 0;
        for (bool r : recurrent_layers) n += r;
        return n;
    }
    int64_t ssm_channels() const { return int64_t{ssm_head_dim} * (2 * ssm_k_heads + ssm_v_heads); }
    // Floats one recurrent layer keeps: the conv's last ssm_conv - 1 inputs and the Hv states of Dv x Dk.
    int64_t conv_state_floats() const { return int64_t{ssm_conv - 1} * ssm_channels(); }
    int64_t ssm_state_floats() const { return int64_t{ssm_v_heads} * ssm_head_dim * ssm_head_dim; }

    // The window of layer l: 0 (full causal attention) or sliding_window.
    int window_of(int layer) const {
        return sliding_window > 0 && static_cast<size_t>(layer) < sliding_layers.size() && sliding_layers[size_t(layer)]
                   ? sliding_window : 0;
    }

    int rot_dims() const { return n_rot > 0 ? n_rot : head_dim; }
    bool rotates(int layer) const {
        return position == PositionKind::rope && !(static_cast<size_t>(layer) < no_rope_layers.size() && no_rope_layers[size_t(layer)]);
    }
    // longrope: the long factors apply, as llama.cpp chooses them: its context (n_ctx padded up to
    // a multiple of 256) exceeds the original context.
    bool longrope_long(int n_ctx) const { return (int64_t{n_ctx} + 255) / 256 * 256 > rope_original_ctx; }

    // Throws ModelError naming `source` when the numbers cannot describe a working model.
    void validate(const std::string& source) const;
};

// From a Hugging Face config.json (a model_type of the architecture table). `source` names the
// file in errors. Every key that changes the math is honoured or refused by name (ModelError).
// HF checkpoints pair rotary dimensions as (i, i + head_dim/2).
ModelConfig config_from_hf(const nlohmann::json& j, const std::string& source);

struct ModelFile;
// From GGUF-style metadata (a GGUF file, or a llama2.c checkpoint, whose reader uses the same
// keys): general.architecture, then <arch>.embedding_length, .block_count, .feed_forward_length,
// .context_length, .attention.head_count[_kv], .attention.key_length, .attention.layer_norm[_rms]_epsilon,
// .rope.freq_base, .rope.dimension_count, .rope.scaling.*, soft-caps and sliding window. Any
// other "<arch>." key is refused by name: it may change the math. The vocabulary size is
// token_embd.weight's row count; the output is tied when there is no output.weight.
// Throws ModelError naming the file and the missing, wrong or unknown key.
ModelConfig config_from_gguf(const ModelFile& file);

}  // namespace journey
