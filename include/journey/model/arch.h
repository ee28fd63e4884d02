// Architecture facts as data, in the manner of llama.cpp's llama-arch: one row per family says
// what its block is made of (norm, activation, position, the tensors it reads, its quirks) and
// how its files name things. The forward pass reads the row's kinds and the presence of optional
// weights (biases, q/k norms, post-norms) instead of asking "is this Gemma?".
#pragma once
#include <span>
#include <string>
#include <string_view>

#include "journey/kernels/matrix.h"  // RopePairing

namespace journey {

// One value per GGUF general.architecture (Hugging Face model_types map onto these rows).
// Mixtral shares llama's GGUF architecture name (llama.cpp's llama with expert_count > 0).
enum class Arch { gpt2, llama, qwen2, qwen3, phi3, gemma2, gemma3, gptneox, qwen3moe, gpt_oss,
                  smollm3, gemma4 /* issue 36's dense families */, qwen35,
                  granite, olmo2 /* issue 36: Granite 3.x dense, OLMo 2 */, qwen35moe, mixtral, olmoe,
                  mistral3 /* issue 36: Ministral 3 */, qwen3next };
enum class NormKind { layernorm, rmsnorm };                // LayerNorm (weight + bias) or RMSNorm (weight)
// MLP: gelu_new(up); silu(gate)*up; gelu_tanh(gate)*up; gelu(up) with the exact erf GELU (GPT-NeoX);
// swiglu_oai (gpt-oss's experts): min(gate, limit) * sigmoid(alpha * min(gate, limit)) * (clamp(up, ±limit) + 1)
enum class ActivationKind { gelu_new, swiglu, geglu_tanh, gelu_erf, swiglu_oai };
enum class PositionKind { learned, rope };                 // added position embedding, or rotary

// Every tensor any family reads: llama.cpp's LLM_TENSOR_* (GGUF names and shapes: gguf_tensor()).
// A block reads the optional ones (biases, q/k norms, post-norms) exactly when its row names them.
enum class Tensor {
    tok_embd, pos_embd, output_norm, output_norm_b, output, rope_freqs, rope_factors_long, rope_factors_short,
    attn_norm, attn_norm_b, attn_qkv, attn_qkv_b, attn_q, attn_q_b, attn_k, attn_k_b, attn_v, attn_v_b,
    attn_q_norm, attn_k_norm, attn_out, attn_out_b, attn_post_norm,
    // OLMo 2's and OLMoE's q/k norms: one RMSNorm over the whole projection (H*D, Hkv*D values), not
    // per head (GGUF: the same attn_q_norm / attn_k_norm names, of another shape).
    attn_q_norm_full, attn_k_norm_full,
    ffn_norm, ffn_norm_b, ffn_up, ffn_up_b, ffn_gate, ffn_gate_up, ffn_down, ffn_down_b, ffn_post_norm,
    // Mixture of experts (src/model/moe.cpp): attention sinks (gpt-oss), its pre-MLP norm (GGUF
    // post_attention_norm), the router and its bias, the experts' matrices and biases, one per
    // expert (HF "{e}" names) or stacked [E, out, in] (GGUF ffn_*_exps; HF gpt-oss's fused gate_up).
    attn_sinks, ffn_norm_post_attn, ffn_gate_inp, ffn_gate_inp_b, ffn_gate_exps, ffn_up_exps, ffn_down_exps,
    ffn_gate_exps_b, ffn_up_exps_b, ffn_down_exps_b, ffn_gate_up_exps, ffn_gate_up_exps_b,
    // Qwen's experts as transformers 5 stores them: gate_up_proj [E, 2 FE, C], each expert's gate
    // rows then its up rows (not interleaved). GGUF stores them as ffn_gate_exps and ffn_up_exps.
    ffn_gate_up_exps_cat,
    // A shared expert beside the routed ones (Qwen3.5-MoE, Qwen3-Next): a SwiGLU MLP of width FS
    // whose output is scaled by sigmoid(x · ffn_gate_inp_shexp), one gate logit per token.
    ffn_gate_inp_shexp, ffn_gate_shexp, ffn_up_shexp, ffn_down_shexp,
    // Hybrid models (src/model/delta_net.cpp): a gated attention's q projection ([q_h | gate_h]
    // per head, GGUF attn_q), and the Gated DeltaNet mixer of the linear-attention layers: its
    // q|k|v and z (output gate) projections, beta and alpha (decay) projections, the causal
    // depthwise conv1d, dt bias, A (GGUF: -exp(A_log)), the gated RMSNorm and out_proj.
    attn_q_gate, ssm_qkv, ssm_gate, ssm_beta, ssm_alpha, ssm_conv1d, ssm_dt, ssm_a, ssm_norm, ssm_out,
    // Qwen3-Next's Gated DeltaNet projections as its checkpoints store them, each grouped per key
    // head: in_proj_qkvz [q | k | v | z] (v and z that head's Hv/Hk value heads; GGUF: split into
    // ssm_qkv and ssm_gate by the converter, or the legacy ssm_in) and in_proj_ba [b | a] (GGUF ssm_ba).
    ssm_qkvz, ssm_ba,
    // Gemma 4's per-layer embeddings: a second embedding table [V, L*P] and a projection of the
    // scaled embedding to L*P (+ an RMSNorm over each layer's P values); per layer a gate C -> P,
    // a projection P -> C and its post-norm; and the scalar each layer's output is multiplied by.
    per_layer_tok_embd, per_layer_model_proj, per_layer_proj_norm, per_layer_inp_gate, per_layer_proj,
    per_layer_post_norm, layer_out_scale,
};

// How a mixture-of-experts block routes a token (llama.cpp's build_moe_ffn gating):
//   softmax_topk: softmax over all router logits, the k largest probabilities kept (renormalised
//                 to sum 1 when norm_topk): Qwen3-MoE, Mixtral, OLMoE;
//   topk_softmax: the k largest logits, then a softmax over those k: gpt-oss.
enum class MoeGating { softmax_topk, topk_softmax };

// A family's expert block: which layers have one and how it routes (the tensors are in the row).
struct MoeTraits {
    MoeGating gating;
    bool norm_topk;          // GGUF: renormalise the kept weights (llama.cpp hard-codes it per family)
    const char* hf_norm_key; // config.json's key for it (nullptr: the family has none, norm_topk holds)
    // The experts' width is the MLP width (feed_forward_length / intermediate_size), as llama.cpp
    // reads it for Mixtral and OLMoE; else GGUF's expert_feed_forward_length (Qwen3-MoE, gpt-oss).
    bool experts_ff = false;
    // Every layer is an MoE layer in the families here; a checkpoint that makes some layers dense
    // (Qwen's mlp_only_layers / decoder_sparse_step) is refused.
    // A shared expert beside the routed ones, behind its own sigmoid gate (Qwen3.5-MoE: HF
    // shared_expert_intermediate_size, GGUF expert_shared_feed_forward_length; the row names its tensors).
    bool shared_expert = false;
};

// A hybrid family (Qwen3.5): some layers are Gated DeltaNet linear attention (a fixed-size
// recurrent state), the others full attention with an output gate. Which layers: the checkpoint's
// layer_types / GGUF attention.recurrent_layers, else every full_attention_interval-th is full.
struct HybridTraits {
    int full_attention_interval;  // default when the file does not say (llama.cpp: 4)
    bool attn_output_gate;        // full attention: q_proj holds [q | gate] per head, output * sigmoid(gate)
    // Value heads (Hv > Hk) in a GGUF file: tiled, value head h reads key head h % Hk (llama.cpp's
    // converter reorders Qwen3.5's), or grouped as in the checkpoint, h reads h / (Hv/Hk) (qwen3next).
    bool gguf_v_tiled = true;
    // The MTP head's tensors in a Hugging Face checkpoint (a draft head normal decoding does not
    // run, as llama.cpp): set aside, counted for journey info.
    const char* hf_mtp_prefix = "mtp.";
};
// A hybrid row may name two ways of storing the Gated DeltaNet's input projection: q|k|v and z as
// two tensors (ssm_qkv, ssm_gate) or fused per key head (ssm_qkvz). The loader binds the way the
// file has, and requires one whole way.
bool is_either_way_tensor(Tensor t);

// Symbolic sizes of a tensor's shape, resolved against a ModelConfig (weights.cpp's size_of):
// C = n_embd, QKV = H*D + 2*Hkv*D (fused q|k|v), F = n_ff, F2 = 2F (fused gate|up), V = n_vocab,
// Ctx = n_ctx, HD = H*D, KD = Hkv*D, D = head_dim, D2 = rotated dims / 2; mixtures of experts:
// H = heads (attention sinks), E = experts (the router), FE = an expert's width, FE2 = 2 FE,
// FS = the shared expert's width.
// An expert tensor's shape is one expert's (out, in); GGUF stacks E of them.
// Hybrid (Gated DeltaNet): HD2 = 2 H*D (gated attention's [q | gate]), SQKV = conv channels
// (2 Hk*Dk + Hv*Dv), SV = Hv*Dv, HV = Hv (value heads), DV = Dv, K4 = the conv kernel.
// Qwen3-Next's fused projections: SQKVZ = SQKV + SV (in_proj_qkvz), HV2 = 2 Hv (in_proj_ba).
// Gemma 4's per-layer embeddings: PL = P (the per-layer width), LP = n_layer * P; One = 1.
enum class Dim { C, QKV, F, F2, V, Ctx, HD, KD, D, D2, H, E, FE, FE2, FS, HD2, SQKV, SV, HV, DV, K4, SQKVZ, HV2, PL, LP, One };

// A tensor's GGUF name (llama.cpp's, "{}" = layer index) and its shape as (out, in); a vector
// (norms, biases, rope factors) has shape (out). Read by the loader (weights.cpp) and written by
// the converter (src/convert/), from this one table.
struct GgufTensor {
    Tensor tensor;
    const char* name;
    Dim out, in = Dim::C;
};
const GgufTensor& gguf_tensor(Tensor t);
// The same, or null for a tensor GGUF stores otherwise (gpt-oss's fused gate|up experts: two).
const GgufTensor* find_gguf_tensor(Tensor t);
// The GGUF name of t in `layer` (layer < 0: a tensor outside the blocks).
std::string gguf_tensor_name(Tensor t, int layer = -1);
// "{}" in a name pattern replaced by the layer index.
std::string with_layer(std::string pattern, int layer);
// The norm weights (Gemma's checkpoints store them as w, used as 1 + w).
bool is_norm(Tensor t);

// A Hugging Face tensor name for a role ("{}" = layer index) and how the matrix is stored.
struct HfName {
    Tensor tensor;
    const char* name;
    Layout layout = Layout::Linear;
};

struct ArchTraits {
    Arch arch;
    const char* name;                           // GGUF general.architecture
    std::span<const char* const> hf_types;      // Hugging Face model_type values of this family
    NormKind norm;
    ActivationKind activation;
    PositionKind position;
    // llama.cpp's rope type for the family: LLAMA_ROPE_TYPE_NORM pairs (2i, 2i+1) (its converter
    // permutes Llama's q/k rows to match), NEOX pairs (i, i + D/2) as Hugging Face does.
    RopePairing gguf_rope;
    bool hf_norm_plus_one;  // Gemma: HF stores w and multiplies by (1 + w); GGUF stores w + 1
    bool embed_scale;       // Gemma: the token embedding is multiplied by sqrt(C)
    bool hf_tied_default;   // tie_word_embeddings when config.json does not say (transformers' default)
    bool hf_qkv_per_head;   // GPT-NeoX: HF's fused query_key_value is [q_h | k_h | v_h] per head (GGUF: q | k | v)
    std::span<const Tensor> tensors;            // what the block reads (output: when untied)
    std::span<const HfName> hf_names;           // HF names of those tensors
    // config.json keys transformers' config class defaults when a checkpoint omits them, as a JSON
    // object (nullptr: none needed; every key journey reads is present or defaulted in the reader)
    const char* hf_defaults = nullptr;
    const MoeTraits* moe = nullptr;  // a mixture-of-experts family: how its experts route (else dense)
    const HybridTraits* hybrid = nullptr;  // a hybrid family: linear-attention layers among full ones
};
// Tensors only the linear-attention layers of a hybrid have / only its full-attention layers have.
bool is_recurrent_tensor(Tensor t);
bool is_attention_tensor(Tensor t);

// A prefix Hugging Face checkpoints may put before every tensor name (GPT-2's "transformer.h.0...");
// the loader and the converter read a name with or without it.
inline constexpr std::string_view hf_optional_prefix = "transformer.";

// Tensors a Hugging Face checkpoint may hold that carry nothing the math needs: the rotary
// inverse-frequency buffers (recomputed from the config) and GPT-2's / GPT-NeoX's causal masks.
bool hf_tensor_ignorable(std::string_view name);

// A Hugging Face checkpoint whose model wraps a family's text model with parts journey does not
// run (Gemma 3's vision tower and projector): its config.json nests the text model's keys under
// one key, its text tensors carry a prefix, and the other parts' tensors are set aside by prefix,
// said so in journey info. Every other tensor is bound or refused as in the text model's files.
struct HfRename {
    const char* from;  // a prefix of the checkpoint's name ...
    const char* to;    // ... replaced by this one, giving the text model's name
};
struct HfWrapper {
    const char* model_type;                      // config.json's model_type ("gemma3")
    Arch arch;                                   // the text model's row
    const char* text_config;                     // the key holding the text model's config.json keys
    const char* text_model_type;                 // its model_type (when it names one, it must be this)
    std::span<const HfRename> renames;           // text tensors: the only names bound
    std::span<const char* const> unused;         // prefixes of the tensors of the parts not run
    const char* unused_what;                     // what those parts are, for journey info
};

std::span<const ArchTraits> arch_table();
std::string_view arch_name(Arch a);
const ArchTraits& traits_of(Arch a);
// The row whose GGUF name is `name`, or nullptr.
const ArchTraits* find_arch(std::string_view name);
// The same for a file that has experts (its "<arch>.expert_count" > 0): llama's is Mixtral's row,
// as llama.cpp's llama architecture runs an MoE MLP when the file has experts.
const ArchTraits* find_arch(std::string_view name, bool experts);
// The row a Hugging Face model_type belongs to (mistral -> llama), or nullptr.
const ArchTraits* find_hf_arch(std::string_view model_type);
// The wrapper a Hugging Face model_type names ("gemma3"): the row of a wrapper's model_type whose text model is text_model_type ("": its first row; the
// rows of one model_type differ only in that and the arch, never in names), or nullptr.
const HfWrapper* find_hf_wrapper(std::string_view model_type, std::string_view text_model_type = {});
// "ministral3 or mistral": the text model types a wrapper's rows take, for refusals.
std::string hf_wrapper_text_types(std::string_view model_type);
// What a family journey knows and does not run lacks ("Gemma 3n: its AltUp ..."), by its
// model_type or GGUF architecture; nullptr for any other name.
const char* unsupported_family(std::string_view name);
// "gpt2, llama, ..." / "gpt2, llama, mistral, ..., gemma3 (text only)": for refusals.
std::string arch_names();
std::string hf_type_names();

}  // namespace journey
