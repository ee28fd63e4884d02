// The architecture table: one row per family (src/model/weights.cpp binds the tensors it names,
// src/model/config*.cpp read its keys, src/model/forward.cpp runs its kinds), and the GGUF names
// and shapes of its tensors (read by weights.cpp, written by src/convert/).
#include "journey/model/arch.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace journey {
namespace {

using enum Tensor;

// GPT-2: learned positions, LayerNorm with biases everywhere, Conv1D [in, out] matrices in HF
// checkpoints (which may prefix every name with "transformer.").
const char* const gpt2_types[] = {"gpt2"};
const Tensor gpt2_tensors[] = {tok_embd, pos_embd, output_norm, output_norm_b, attn_norm, attn_norm_b, attn_qkv,
                               attn_qkv_b, attn_out, attn_out_b, ffn_norm, ffn_norm_b, ffn_up, ffn_up_b,
                               ffn_down, ffn_down_b};
const HfName gpt2_hf[] = {
    {tok_embd, "wte.weight"}, {pos_embd, "wpe.weight"},
    {output_norm, "ln_f.weight"}, {output_norm_b, "ln_f.bias"}, {output, "lm_head.weight"},
    {attn_norm, "h.{}.ln_1.weight"}, {attn_norm_b, "h.{}.ln_1.bias"},
    {attn_qkv, "h.{}.attn.c_attn.weight", Layout::Conv1D}, {attn_qkv_b, "h.{}.attn.c_attn.bias"},
    {attn_out, "h.{}.attn.c_proj.weight", Layout::Conv1D}, {attn_out_b, "h.{}.attn.c_proj.bias"},
    {ffn_norm, "h.{}.ln_2.weight"}, {ffn_norm_b, "h.{}.ln_2.bias"},
    {ffn_up, "h.{}.mlp.c_fc.weight", Layout::Conv1D}, {ffn_up_b, "h.{}.mlp.c_fc.bias"},
    {ffn_down, "h.{}.mlp.c_proj.weight", Layout::Conv1D}, {ffn_down_b, "h.{}.mlp.c_proj.bias"},
};

// The Llama layout of Hugging Face names, which Mistral, Qwen2/3 and Phi-3 share (Phi-3 fuses
// q|k|v and gate|up; Gemma 2 adds post-norms and renames the pre-MLP norm).
const HfName llama_hf[] = {
    {tok_embd, "model.embed_tokens.weight"}, {output_norm, "model.norm.weight"}, {output, "lm_head.weight"},
    {attn_norm, "model.layers.{}.input_layernorm.weight"},
    {attn_q, "model.layers.{}.self_attn.q_proj.weight"}, {attn_q_b, "model.layers.{}.self_attn.q_proj.bias"},
    {attn_k, "model.layers.{}.self_attn.k_proj.weight"}, {attn_k_b, "model.layers.{}.self_attn.k_proj.bias"},
    {attn_v, "model.layers.{}.self_attn.v_proj.weight"}, {attn_v_b, "model.layers.{}.self_attn.v_proj.bias"},
    {attn_q_norm, "model.layers.{}.self_attn.q_norm.weight"}, {attn_k_norm, "model.layers.{}.self_attn.k_norm.weight"},
    {attn_qkv, "model.layers.{}.self_attn.qkv_proj.weight"},
    {attn_out, "model.layers.{}.self_attn.o_proj.weight"},
    {ffn_norm, "model.layers.{}.post_attention_layernorm.weight"},
    {ffn_gate, "model.layers.{}.mlp.gate_proj.weight"}, {ffn_up, "model.layers.{}.mlp.up_proj.weight"},
    {ffn_gate_up, "model.layers.{}.mlp.gate_up_proj.weight"},
    {ffn_down, "model.layers.{}.mlp.down_proj.weight"},
};
const HfName gemma_hf[] = {
    {tok_embd, "model.embed_tokens.weight"}, {output_norm, "model.norm.weight"}, {output, "lm_head.weight"},
    {attn_norm, "model.layers.{}.input_layernorm.weight"},
    {attn_q, "model.layers.{}.self_attn.q_proj.weight"},
    {attn_k, "model.layers.{}.self_attn.k_proj.weight"},
    {attn_v, "model.layers.{}.self_attn.v_proj.weight"},
    {attn_out, "model.layers.{}.self_attn.o_proj.weight"},
    {attn_post_norm, "model.layers.{}.post_attention_layernorm.weight"},  // after attention, not before the MLP
    {ffn_norm, "model.layers.{}.pre_feedforward_layernorm.weight"},
    {ffn_gate, "model.layers.{}.mlp.gate_proj.weight"}, {ffn_up, "model.layers.{}.mlp.up_proj.weight"},
    {ffn_down, "model.layers.{}.mlp.down_proj.weight"},
    {ffn_post_norm, "model.layers.{}.post_feedforward_layernorm.weight"},
};

// Gemma 3 adds per-head q/k norms (also (1 + w)) to Gemma 2's block.
const HfName gemma3_hf[] = {
    {tok_embd, "model.embed_tokens.weight"}, {output_norm, "model.norm.weight"}, {output, "lm_head.weight"},
    {attn_norm, "model.layers.{}.input_layernorm.weight"},
    {attn_q, "model.layers.{}.self_attn.q_proj.weight"},
    {attn_k, "model.layers.{}.self_attn.k_proj.weight"},
    {attn_v, "model.layers.{}.self_attn.v_proj.weight"},
    {attn_q_norm, "model.layers.{}.self_attn.q_norm.weight"}, {attn_k_norm, "model.layers.{}.self_attn.k_norm.weight"},
    {attn_out, "model.layers.{}.self_attn.o_proj.weight"},
    {attn_post_norm, "model.layers.{}.post_attention_layernorm.weight"},
    {ffn_norm, "model.layers.{}.pre_feedforward_layernorm.weight"},
    {ffn_gate, "model.layers.{}.mlp.gate_proj.weight"}, {ffn_up, "model.layers.{}.mlp.up_proj.weight"},
    {ffn_down, "model.layers.{}.mlp.down_proj.weight"},
    {ffn_post_norm, "model.layers.{}.post_feedforward_layernorm.weight"},
};

// GPT-NeoX (Pythia): LayerNorms with biases, one fused query_key_value (per head q|k|v), biases
// on every product, an untied embed_out.
const HfName gptneox_hf[] = {
    {tok_embd, "gpt_neox.embed_in.weight"}, {output, "embed_out.weight"},
    {output_norm, "gpt_neox.final_layer_norm.weight"}, {output_norm_b, "gpt_neox.final_layer_norm.bias"},
    {attn_norm, "gpt_neox.layers.{}.input_layernorm.weight"}, {attn_norm_b, "gpt_neox.layers.{}.input_layernorm.bias"},
    {attn_qkv, "gpt_neox.layers.{}.attention.query_key_value.weight"},
    {attn_qkv_b, "gpt_neox.layers.{}.attention.query_key_value.bias"},
    {attn_out, "gpt_neox.layers.{}.attention.dense.weight"}, {attn_out_b, "gpt_neox.layers.{}.attention.dense.bias"},
    {ffn_norm, "gpt_neox.layers.{}.post_attention_layernorm.weight"},
    {ffn_norm_b, "gpt_neox.layers.{}.post_attention_layernorm.bias"},
    {ffn_up, "gpt_neox.layers.{}.mlp.dense_h_to_4h.weight"}, {ffn_up_b, "gpt_neox.layers.{}.mlp.dense_h_to_4h.bias"},
    {ffn_down, "gpt_neox.layers.{}.mlp.dense_4h_to_h.weight"}, {ffn_down_b, "gpt_neox.layers.{}.mlp.dense_4h_to_h.bias"},
};

const char* const llama_types[] = {"llama", "mistral"};  // Mistral is Llama (+ a sliding window)
const Tensor llama_tensors[] = {tok_embd, output_norm, attn_norm, attn_q, attn_k, attn_v, attn_out,
                                ffn_norm, ffn_gate, ffn_up, ffn_down};
const char* const qwen2_types[] = {"qwen2"};
const Tensor qwen2_tensors[] = {tok_embd, output_norm, attn_norm, attn_q, attn_q_b, attn_k, attn_k_b, attn_v,
                                attn_v_b, attn_out, ffn_norm, ffn_gate, ffn_up, ffn_down};
const char* const qwen3_types[] = {"qwen3"};
const Tensor qwen3_tensors[] = {tok_embd, output_norm, attn_norm, attn_q, attn_k, attn_v, attn_q_norm,
                                attn_k_norm, attn_out, ffn_norm, ffn_gate, ffn_up, ffn_down};
const char* const phi3_types[] = {"phi3"};
const Tensor phi3_tensors[] = {tok_embd, output_norm, attn_norm, attn_qkv, attn_out, ffn_norm, ffn_gate_up, ffn_down};
const char* const gemma2_types[] = {"gemma2"};
const Tensor gemma2_tensors[] = {tok_embd, output_norm, attn_norm, attn_q, attn_k, attn_v, attn_out, attn_post_norm,
                                 ffn_norm, ffn_gate, ffn_up, ffn_down, ffn_post_norm};

// transformers' Gemma2Config defaults that changed nothing between versions (4.42 to 5.x) for the
// keys that change the math but not the shapes; query_pre_attn_scalar, whose default did
// change, is required (config.cpp).
const char* const gemma2_defaults = R"({
    "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0, "sliding_window": 4096, "rms_norm_eps": 1e-6,
    "rope_theta": 10000.0, "head_dim": 256, "tie_word_embeddings": true})";

const char* const gemma3_types[] = {"gemma3_text"};
const Tensor gemma3_tensors[] = {tok_embd, output_norm, attn_norm, attn_q, attn_k, attn_v, attn_q_norm, attn_k_norm,
                                 attn_out, attn_post_norm, ffn_norm, ffn_gate, ffn_up, ffn_down, ffn_post_norm};
// transformers' Gemma3TextConfig.__init__ defaults (4.50 to 5.x alike) for the keys journey reads:
// google/gemma-3-4b-it's text_config omits most of them (heads, head_dim, query_pre_attn_scalar,
// vocab_size, rope_theta, ...).
const char* const gemma3_defaults = R"({
    "vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
    "max_position_embeddings": 131072, "rms_norm_eps": 1e-6, "tie_word_embeddings": true, "rope_theta": 1000000.0,
    "rope_local_base_freq": 10000.0, "query_pre_attn_scalar": 256, "sliding_window": 4096, "sliding_window_pattern": 6,
    "attention_bias": false})";
const char* const gptneox_types[] = {"gpt_neox"};
const Tensor gptneox_tensors[] = {tok_embd, output_norm, output_norm_b, attn_norm, attn_norm_b, attn_qkv, attn_qkv_b,
                                  attn_out, attn_out_b, ffn_norm, ffn_norm_b, ffn_up, ffn_up_b, ffn_down, ffn_down_b};

// ---- Mixture-of-experts families (issue 34; src/model/moe.cpp runs their expert block) ----
// Qwen3-MoE: Qwen3's attention (q/k norms), every layer's MLP a softmax-routed mixture, experts
// one tensor each in the checkpoint (llama.cpp's converter stacks them into ffn_*_exps).
const char* const qwen3moe_types[] = {"qwen3_moe"};
const Tensor qwen3moe_tensors[] = {tok_embd, output_norm, attn_norm, attn_q, attn_k, attn_v, attn_q_norm, attn_k_norm,
                                   attn_out, ffn_norm, ffn_gate_inp, ffn_gate_exps, ffn_up_exps, ffn_down_exps};
const HfName qwen3moe_hf[] = {
    {tok_embd, "model.embed_tokens.weight"}, {output_norm, "model.norm.weight"}, {output, "lm_head.weight"},
    {attn_norm, "model.layers.{}.input_layernorm.weight"},
    {attn_q, "model.layers.{}.self_attn.q_proj.weight"}, {attn_k, "model.layers.{}.self_attn.k_proj.weight"},
    {attn_v, "model.layers.{}.self_attn.v_proj.weight"},
    {attn_q_norm, "model.layers.{}.self_attn.q_norm.weight"}, {attn_k_norm, "model.layers.{}.self_attn.k_norm.weight"},
    {attn_out, "model.layers.{}.self_attn.o_proj.weight"},
    {ffn_norm, "model.layers.{}.post_attention_layernorm.weight"},
    {ffn_gate_inp, "model.layers.{}.mlp.gate.weight"},
    {ffn_gate_exps, "model.layers.{}.mlp.experts.{e}.gate_proj.weight"},
    {ffn_up_exps, "model.layers.{}.mlp.experts.{e}.up_proj.weight"},
    {ffn_down_exps, "model.layers.{}.mlp.experts.{e}.down_proj.weight"},
};
// llama.cpp's qwen3moe: softmax router, the kept weights renormalised (hard-coded true).
const MoeTraits qwen3moe_moe = {.gating = MoeGating::softmax_topk, .norm_topk = true, .hf_norm_key = "norm_topk_prob"};

// gpt-oss: attention with sinks and q/k/v/o biases, alternating sliding/full layers, yarn; the
// router has a bias and softmaxes its top-k logits; experts with biases and the clamped SwiGLU.
// Hugging Face (transformers' dequantized GptOssExperts): gate_up_proj [E, C, 2F] with gate and
// up interleaved along 2F, down_proj [E, F, C] (both [in, out]); GGUF: ffn_{gate,up,down}_exps.
// The pre-MLP norm is HF's post_attention_layernorm, GGUF's post_attention_norm.
const char* const gpt_oss_types[] = {"gpt_oss"};
const Tensor gpt_oss_gguf_tensors[] = {tok_embd, output_norm, attn_norm, attn_q, attn_q_b, attn_k, attn_k_b, attn_v,
                                       attn_v_b, attn_out, attn_out_b, attn_sinks, ffn_norm_post_attn, ffn_gate_inp,
                                       ffn_gate_inp_b, ffn_gate_exps, ffn_gate_exps_b, ffn_up_exps, ffn_up_exps_b,
                                       ffn_down_exps, ffn_down_exps_b, ffn_gate_up_exps, ffn_gate_up_exps_b};
const HfName gpt_oss_hf[] = {
    {tok_embd, "model.embed_tokens.weight"}, {output_norm, "model.norm.weight"}, {output, "lm_head.weight"},
    {attn_norm, "model.layers.{}.input_layernorm.weight"},
    {attn_q, "model.layers.{}.self_attn.q_proj.weight"}, {attn_q_b, "model.layers.{}.self_attn.q_proj.bias"},
    {attn_k, "model.layers.{}.self_attn.k_proj.weight"}, {attn_k_b, "model.layers.{}.self_attn.k_proj.bias"},
    {attn_v, "model.layers.{}.self_attn.v_proj.weight"}, {attn_v_b, "model.layers.{}.self_attn.v_proj.bias"},
    {attn_out, "model.layers.{}.self_attn.o_proj.weight"}, {attn_out_b, "model.layers.{}.self_attn.o_proj.bias"},
    {attn_sinks, "model.layers.{}.self_attn.sinks"},
    {ffn_norm_post_attn, "model.layers.{}.post_attention_layernorm.weight"},
    {ffn_gate_inp, "model.layers.{}.mlp.router.weight"}, {ffn_gate_inp_b, "model.layers.{}.mlp.router.bias"},
    {ffn_gate_up_exps, "model.layers.{}.mlp.experts.gate_up_proj", Layout::Conv1D},
    {ffn_gate_up_exps_b, "model.layers.{}.mlp.experts.gate_up_proj_bias"},
    {ffn_down_exps, "model.layers.{}.mlp.experts.down_proj", Layout::Conv1D},
    {ffn_down_exps_b, "model.layers.{}.mlp.experts.down_proj_bias"},
};
const MoeTraits gpt_oss_moe = {.gating = MoeGating::topk_softmax, .norm_topk = false, .hf_norm_key = nullptr};

// Mixtral: Llama's block (and names), its MLP a softmax-routed mixture whose kept weights are
// always renormalised (no key for it); experts w1 (gate), w3 (up), w2 (down), one tensor each.
// In GGUF it is llama.cpp's llama with expert_count > 0 (config_gguf.cpp picks this row then).
const char* const mixtral_types[] = {"mixtral"};
const Tensor mixtral_tensors[] = {tok_embd, output_norm, attn_norm, attn_q, attn_k, attn_v, attn_out,
                                  ffn_norm, ffn_gate_inp, ffn_gate_exps, ffn_up_exps, ffn_down_exps};
const HfName mixtral_hf[] = {
    {tok_embd, "model.embed_tokens.weight"}, {output_norm, "model.norm.weight"}, {output, "lm_head.weight"},
    {attn_norm, "model.layers.{}.input_layernorm.weight"},
    {attn_q, "model.layers.{}.self_attn.q_proj.weight"}, {attn_k, "model.layers.{}.self_attn.k_proj.weight"},
    {attn_v, "model.layers.{}.self_attn.v_proj.weight"}, {attn_out, "model.layers.{}.self_attn.o_proj.weight"},
    {ffn_norm, "model.layers.{}.post_attention_layernorm.weight"},
    {ffn_gate_inp, "model.layers.{}.block_sparse_moe.gate.weight"},
    {ffn_gate_exps, "model.layers.{}.block_sparse_moe.experts.{e}.w1.weight"},
    {ffn_up_exps, "model.layers.{}.block_sparse_moe.experts.{e}.w3.weight"},
    {ffn_down_exps, "model.layers.{}.block_sparse_moe.experts.{e}.w2.weight"},
};
// transformers' MixtralConfig defaults for the keys that change the math.
const char* const mixtral_defaults = R"({
    "rms_norm_eps": 1e-5, "rope_theta": 1000000.0, "tie_word_embeddings": false, "num_key_value_heads": 8,
    "num_local_experts": 8, "num_experts_per_tok": 2, "max_position_embeddings": 131072})";
const MoeTraits mixtral_moe = {.gating = MoeGating::softmax_topk, .norm_topk = true, .hf_norm_key = nullptr, .experts_ff = true};

// OLMoE: Llama's attention with q/k RMSNorms over the whole projection (before the heads are
// split), every layer's MLP a softmax-routed mixture, the kept weights not renormalised
// (norm_topk_prob false; llama.cpp hard-codes that); experts one tensor each, as Qwen3-MoE's.
const char* const olmoe_types[] = {"olmoe"};
const Tensor olmoe_tensors[] = {tok_embd, output_norm, attn_norm, attn_q, attn_k, attn_v, attn_q_norm_full,
                                attn_k_norm_full, attn_out, ffn_norm, ffn_gate_inp, ffn_gate_exps, ffn_up_exps,
                                ffn_down_exps};
const HfName olmoe_hf[] = {
    {tok_embd, "model.embed_tokens.weight"}, {output_norm, "model.norm.weight"}, {output, "lm_head.weight"},
    {attn_norm, "model.layers.{}.input_layernorm.weight"},
    {attn_q, "model.layers.{}.self_attn.q_proj.weight"}, {attn_k, "model.layers.{}.self_attn.k_proj.weight"},
    {attn_v, "model.layers.{}.self_attn.v_proj.weight"},
    {attn_q_norm_full, "model.layers.{}.self_attn.q_norm.weight"},
    {attn_k_norm_full, "model.layers.{}.self_attn.k_norm.weight"},
    {attn_out, "model.layers.{}.self_attn.o_proj.weight"},
    {ffn_norm, "model.layers.{}.post_attention_layernorm.weight"},
    {ffn_gate_inp, "model.layers.{}.mlp.gate.weight"},
    {ffn_gate_exps, "model.layers.{}.mlp.experts.{e}.gate_proj.weight"},
    {ffn_up_exps, "model.layers.{}.mlp.experts.{e}.up_proj.weight"},
    {ffn_down_exps, "model.layers.{}.mlp.experts.{e}.down_proj.weight"},
};
// transformers' OlmoeConfig defaults for the keys that change the math.
const char* const olmoe_defaults = R"({
    "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": false, "num_experts": 64,
    "num_experts_per_tok": 8, "norm_topk_prob": false, "max_position_embeddings": 4096})";
const MoeTraits olmoe_moe = {.gating = MoeGating::softmax_topk, .norm_topk = false, .hf_norm_key = "norm_topk_prob", .experts_ff = true};
// ---- end of the mixture-of-experts families ----

// ---- The dense families of issue 36 ----
// SmolLM3: Llama's block and names, with no rope on every 4th layer (NoPE; config.cpp reads which).
const char* const smollm3_types[] = {"smollm3"};
// Gemma 4 (the dense text models: E2B, E4B, 31B): Gemma 3's sandwich block and q/k norms, norms
// used as stored (no 1 + w), a weightless RMSNorm on v, attention scale 1, sliding layers with
// their own head width and rope base, full layers with proportional rope; per-layer embeddings
// (PLE) added after each layer's MLP, each layer's output times its layer_scalar; the last
// num_kv_shared_layers layers read an earlier layer's keys and values (their k/v weights unread,
// as in llama.cpp) and may have a double-wide MLP. config.cpp reads the keys.
const char* const gemma4_types[] = {"gemma4_text"};
// Ministral 3 (llama.cpp's mistral3; transformers' ministral3): Llama's block and names; YaRN rope
// and a Llama 4-style query temperature, q *= 1 + beta ln(1 + floor(pos / original context)),
// read by config.cpp (HF rope_parameters.llama_4_scaling_beta; GGUF attention.temperature_scale).
const char* const mistral3_types[] = {"ministral3"};
const Tensor gemma4_tensors[] = {tok_embd, output_norm, attn_norm, attn_q, attn_k, attn_v, attn_q_norm, attn_k_norm,
                                 attn_out, attn_post_norm, ffn_norm, ffn_gate, ffn_up, ffn_down, ffn_post_norm,
                                 per_layer_tok_embd, per_layer_model_proj, per_layer_proj_norm, per_layer_inp_gate,
                                 per_layer_proj, per_layer_post_norm, layer_out_scale};
const HfName gemma4_hf[] = {
    {tok_embd, "model.embed_tokens.weight"}, {output_norm, "model.norm.weight"}, {output, "lm_head.weight"},
    {attn_norm, "model.layers.{}.input_layernorm.weight"},
    {attn_q, "model.layers.{}.self_attn.q_proj.weight"},
    {attn_k, "model.layers.{}.self_attn.k_proj.weight"},
    {attn_v, "model.layers.{}.self_attn.v_proj.weight"},
    {attn_q_norm, "model.layers.{}.self_attn.q_norm.weight"}, {attn_k_norm, "model.layers.{}.self_attn.k_norm.weight"},
    {attn_out, "model.layers.{}.self_attn.o_proj.weight"},
    {attn_post_norm, "model.layers.{}.post_attention_layernorm.weight"},
    {ffn_norm, "model.layers.{}.pre_feedforward_layernorm.weight"},
    {ffn_gate, "model.layers.{}.mlp.gate_proj.weight"}, {ffn_up, "model.layers.{}.mlp.up_proj.weight"},
    {ffn_down, "model.layers.{}.mlp.down_proj.weight"},
    {ffn_post_norm, "model.layers.{}.post_feedforward_layernorm.weight"},
    {per_layer_tok_embd, "model.embed_tokens_per_layer.weight"},
    {per_layer_model_proj, "model.per_layer_model_projection.weight"},
    {per_layer_proj_norm, "model.per_layer_projection_norm.weight"},
    {per_layer_inp_gate, "model.layers.{}.per_layer_input_gate.weight"},
    {per_layer_proj, "model.layers.{}.per_layer_projection.weight"},
    {per_layer_post_norm, "model.layers.{}.post_per_layer_input_norm.weight"},
    {layer_out_scale, "model.layers.{}.layer_scalar"},
};
// Granite 3.x dense (GraniteForCausalLM): Llama's block and names; the embedding times
// embedding_multiplier, the attention scores times attention_multiplier (instead of 1/sqrt(D)),
// each residual branch (attention out, MLP out) times residual_multiplier before it is added, the
// logits divided by logits_scaling (config.cpp; GGUF embedding_scale, attention.scale,
// residual_scale, logit_scale, as llama.cpp's granite).
const char* const granite_types[] = {"granite"};
// OLMo 2 (Olmo2ForCausalLM): no pre-norms; an RMSNorm after attention and one after the MLP, each
// before its residual add; q/k RMSNorms over the whole projection (not per head), before rope.
const char* const olmo2_types[] = {"olmo2"};
const Tensor olmo2_tensors[] = {tok_embd, output_norm, attn_q, attn_k, attn_v, attn_q_norm_full, attn_k_norm_full, attn_out,
                                attn_post_norm, ffn_gate, ffn_up, ffn_down, ffn_post_norm};
const HfName olmo2_hf[] = {
    {tok_embd, "model.embed_tokens.weight"}, {output_norm, "model.norm.weight"}, {output, "lm_head.weight"},
    {attn_q, "model.layers.{}.self_attn.q_proj.weight"},
    {attn_k, "model.layers.{}.self_attn.k_proj.weight"},
    {attn_v, "model.layers.{}.self_attn.v_proj.weight"},
    {attn_q_norm_full, "model.layers.{}.self_attn.q_norm.weight"},
    {attn_k_norm_full, "model.layers.{}.self_attn.k_norm.weight"},
    {attn_out, "model.layers.{}.self_attn.o_proj.weight"},
    {attn_post_norm, "model.layers.{}.post_attention_layernorm.weight"},  // after attention, as Gemma's
    {ffn_gate, "model.layers.{}.mlp.gate_proj.weight"}, {ffn_up, "model.layers.{}.mlp.up_proj.weight"},
    {ffn_down, "model.layers.{}.mlp.down_proj.weight"},
    {ffn_post_norm, "model.layers.{}.post_feedforward_layernorm.weight"},
};
// ---- end of issue 36's families ----
// ---- Hybrid families (issue 35; src/model/delta_net.cpp runs the linear-attention mixer) ----
// Qwen3.5: three of every four layers Gated DeltaNet (linear_attn.*), every fourth full
// attention with q/k norms and an output gate ([q | gate] per head in q_proj); (1 + w) norms
// (the converter adds 1), except the mixer's gated RMSNorm (linear_attn.norm: a plain gain).
// The pre-MLP norm is HF's post_attention_layernorm, GGUF's post_attention_norm.
const char* const qwen35_types[] = {"qwen3_5_text"};
const Tensor qwen35_tensors[] = {tok_embd, output_norm, attn_norm, attn_q_gate, attn_k, attn_v, attn_q_norm, attn_k_norm,
                                 attn_out, ffn_norm_post_attn, ffn_gate, ffn_up, ffn_down, ssm_qkv, ssm_gate, ssm_beta,
                                 ssm_alpha, ssm_conv1d, ssm_dt, ssm_a, ssm_norm, ssm_out};
const HfName qwen35_hf[] = {
    {tok_embd, "model.embed_tokens.weight"}, {output_norm, "model.norm.weight"}, {output, "lm_head.weight"},
    {attn_norm, "model.layers.{}.input_layernorm.weight"},
    {attn_q_gate, "model.layers.{}.self_attn.q_proj.weight"}, {attn_k, "model.layers.{}.self_attn.k_proj.weight"},
    {attn_v, "model.layers.{}.self_attn.v_proj.weight"},
    {attn_q_norm, "model.layers.{}.self_attn.q_norm.weight"}, {attn_k_norm, "model.layers.{}.self_attn.k_norm.weight"},
    {attn_out, "model.layers.{}.self_attn.o_proj.weight"},
    {ffn_norm_post_attn, "model.layers.{}.post_attention_layernorm.weight"},
    {ffn_gate, "model.layers.{}.mlp.gate_proj.weight"}, {ffn_up, "model.layers.{}.mlp.up_proj.weight"},
    {ffn_down, "model.layers.{}.mlp.down_proj.weight"},
    {ssm_qkv, "model.layers.{}.linear_attn.in_proj_qkv.weight"}, {ssm_gate, "model.layers.{}.linear_attn.in_proj_z.weight"},
    {ssm_beta, "model.layers.{}.linear_attn.in_proj_b.weight"}, {ssm_alpha, "model.layers.{}.linear_attn.in_proj_a.weight"},
    {ssm_conv1d, "model.layers.{}.linear_attn.conv1d.weight"}, {ssm_dt, "model.layers.{}.linear_attn.dt_bias"},
    {ssm_a, "model.layers.{}.linear_attn.A_log"}, {ssm_norm, "model.layers.{}.linear_attn.norm.weight"},
    {ssm_out, "model.layers.{}.linear_attn.out_proj.weight"},
};
const HybridTraits qwen35_hybrid = {4, true};
// Qwen3.5-MoE (35B-A3B, 122B-A10B, 397B-A17B): Qwen3.5's hybrid layers with a mixture of experts
// for the MLP: a softmax router over the experts (the kept top-k renormalised: llama.cpp
// hard-codes it, transformers' Qwen3.5-MoE router always does), the experts stored fused
// (transformers 5: gate_up_proj [E, 2 FE, C], down_proj [E, C, FE]), and a shared expert whose
// output is scaled by sigmoid(shared_expert_gate · x). Untied in the real checkpoints.
const char* const qwen35moe_types[] = {"qwen3_5_moe_text"};
const Tensor qwen35moe_tensors[] = {tok_embd, output_norm, attn_norm, attn_q_gate, attn_k, attn_v, attn_q_norm, attn_k_norm,
                                    attn_out, ffn_norm_post_attn, ffn_gate_inp, ffn_gate_exps, ffn_up_exps, ffn_down_exps,
                                    ffn_gate_up_exps_cat, ffn_gate_inp_shexp, ffn_gate_shexp, ffn_up_shexp, ffn_down_shexp,
                                    ssm_qkv, ssm_gate, ssm_beta, ssm_alpha, ssm_conv1d, ssm_dt, ssm_a, ssm_norm, ssm_out};
const HfName qwen35moe_hf[] = {
    {tok_embd, "model.embed_tokens.weight"}, {output_norm, "model.norm.weight"}, {output, "lm_head.weight"},
    {attn_norm, "model.layers.{}.input_layernorm.weight"},
    {attn_q_gate, "model.layers.{}.self_attn.q_proj.weight"}, {attn_k, "model.layers.{}.self_attn.k_proj.weight"},
    {attn_v, "model.layers.{}.self_attn.v_proj.weight"},
    {attn_q_norm, "model.layers.{}.self_attn.q_norm.weight"}, {attn_k_norm, "model.layers.{}.self_attn.k_norm.weight"},
    {attn_out, "model.layers.{}.self_attn.o_proj.weight"},
    {ffn_norm_post_attn, "model.layers.{}.post_attention_layernorm.weight"},
    {ffn_gate_inp, "model.layers.{}.mlp.gate.weight"},
    {ffn_gate_up_exps_cat, "model.layers.{}.mlp.experts.gate_up_proj"},
    {ffn_down_exps, "model.layers.{}.mlp.experts.down_proj"},
    {ffn_gate_inp_shexp, "model.layers.{}.mlp.shared_expert_gate.weight"},
    {ffn_gate_shexp, "model.layers.{}.mlp.shared_expert.gate_proj.weight"},
    {ffn_up_shexp, "model.layers.{}.mlp.shared_expert.up_proj.weight"},
    {ffn_down_shexp, "model.layers.{}.mlp.shared_expert.down_proj.weight"},
    {ssm_qkv, "model.layers.{}.linear_attn.in_proj_qkv.weight"}, {ssm_gate, "model.layers.{}.linear_attn.in_proj_z.weight"},
    {ssm_beta, "model.layers.{}.linear_attn.in_proj_b.weight"}, {ssm_alpha, "model.layers.{}.linear_attn.in_proj_a.weight"},
    {ssm_conv1d, "model.layers.{}.linear_attn.conv1d.weight"}, {ssm_dt, "model.layers.{}.linear_attn.dt_bias"},
    {ssm_a, "model.layers.{}.linear_attn.A_log"}, {ssm_norm, "model.layers.{}.linear_attn.norm.weight"},
    {ssm_out, "model.layers.{}.linear_attn.out_proj.weight"},
};
const MoeTraits qwen35moe_moe = {.gating = MoeGating::softmax_topk, .norm_topk = true, .hf_norm_key = nullptr, .experts_ff = false, .shared_expert = true};
// Qwen3-Next (80B-A3B): Qwen3.5-MoE's layers, its own checkpoint layout (no wrapper, no M-RoPE: plain
// NEOX rope on a quarter of each head): the mixer's q|k|v|z and b|a projections fused and grouped
// per key head (in_proj_qkvz, in_proj_ba), experts one tensor each (or fused, [E, 2 FE, C] and
// [E, C, FE], as transformers 5 saves them: both read, as llama.cpp's converter), value heads grouped per key
// head in GGUF too (llama.cpp's converter reorders none). Its GGUF stores q|k|v and z apart
// (attn_qkv, attn_gate; early files the fused ssm_in) and b|a fused (ssm_ba). transformers'
// Qwen3NextConfig defaults partial_rotary_factor 0.25 and norm_topk_prob true (it honours the key;
// llama.cpp always renormalises).
const char* const qwen3next_types[] = {"qwen3_next"};
const Tensor qwen3next_tensors[] = {tok_embd, output_norm, attn_norm, attn_q_gate, attn_k, attn_v, attn_q_norm, attn_k_norm,
                                    attn_out, ffn_norm_post_attn, ffn_gate_inp, ffn_gate_exps, ffn_up_exps, ffn_down_exps,
                                    ffn_gate_up_exps_cat, ffn_gate_inp_shexp, ffn_gate_shexp, ffn_up_shexp, ffn_down_shexp,
                                    ssm_qkv, ssm_gate, ssm_qkvz, ssm_ba, ssm_conv1d, ssm_dt, ssm_a, ssm_norm, ssm_out};
const HfName qwen3next_hf[] = {
    {tok_embd, "model.embed_tokens.weight"}, {output_norm, "model.norm.weight"}, {output, "lm_head.weight"},
    {attn_norm, "model.layers.{}.input_layernorm.weight"},
    {attn_q_gate, "model.layers.{}.self_attn.q_proj.weight"}, {attn_k, "model.layers.{}.self_attn.k_proj.weight"},
    {attn_v, "model.layers.{}.self_attn.v_proj.weight"},
    {attn_q_norm, "model.layers.{}.self_attn.q_norm.weight"}, {attn_k_norm, "model.layers.{}.self_attn.k_norm.weight"},
    {attn_out, "model.layers.{}.self_attn.o_proj.weight"},
    {ffn_norm_post_attn, "model.layers.{}.post_attention_layernorm.weight"},
    {ffn_gate_inp, "model.layers.{}.mlp.gate.weight"},
    {ffn_gate_exps, "model.layers.{}.mlp.experts.{e}.gate_proj.weight"},
    {ffn_up_exps, "model.layers.{}.mlp.experts.{e}.up_proj.weight"},
    {ffn_down_exps, "model.layers.{}.mlp.experts.{e}.down_proj.weight"},
    {ffn_gate_up_exps_cat, "model.layers.{}.mlp.experts.gate_up_proj"},  // transformers 5 saves them fused
    {ffn_down_exps, "model.layers.{}.mlp.experts.down_proj"},
    {ffn_gate_inp_shexp, "model.layers.{}.mlp.shared_expert_gate.weight"},
    {ffn_gate_shexp, "model.layers.{}.mlp.shared_expert.gate_proj.weight"},
    {ffn_up_shexp, "model.layers.{}.mlp.shared_expert.up_proj.weight"},
    {ffn_down_shexp, "model.layers.{}.mlp.shared_expert.down_proj.weight"},
    {ssm_qkvz, "model.layers.{}.linear_attn.in_proj_qkvz.weight"}, {ssm_ba, "model.layers.{}.linear_attn.in_proj_ba.weight"},
    {ssm_conv1d, "model.layers.{}.linear_attn.conv1d.weight"}, {ssm_dt, "model.layers.{}.linear_attn.dt_bias"},
    {ssm_a, "model.layers.{}.linear_attn.A_log"}, {ssm_norm, "model.layers.{}.linear_attn.norm.weight"},
    {ssm_out, "model.layers.{}.linear_attn.out_proj.weight"},
};
const char* const qwen3next_defaults = R"({"partial_rotary_factor": 0.25, "norm_topk_prob": true})";
const MoeTraits qwen3next_moe = {.gating = MoeGating::softmax_topk, .norm_topk = true, .hf_norm_key = "norm_topk_prob", .experts_ff = false, .shared_expert = true};
const HybridTraits qwen3next_hybrid = {.full_attention_interval = 4, .attn_output_gate = true, .gguf_v_tiled = false};
// ---- end of the hybrid families ----

using NK = NormKind;
using AK = ActivationKind;
using PK = PositionKind;
using RP = RopePairing;

const ArchTraits table[] = {
    // arch           name       hf types       norm           activation      position     gguf rope        1+w    sqrtC  tied   qkv/head tensors          hf names
    {Arch::gpt2,    "gpt2",    gpt2_types,    NK::layernorm, AK::gelu_new,   PK::learned, RP::none,        false, false, true,  false, gpt2_tensors,    gpt2_hf},
    {Arch::llama,   "llama",   llama_types,   NK::rmsnorm,   AK::swiglu,     PK::rope,    RP::interleaved, false, false, false, false, llama_tensors,   llama_hf},
    {Arch::qwen2,   "qwen2",   qwen2_types,   NK::rmsnorm,   AK::swiglu,     PK::rope,    RP::half,        false, false, false, false, qwen2_tensors,   llama_hf},
    {Arch::qwen3,   "qwen3",   qwen3_types,   NK::rmsnorm,   AK::swiglu,     PK::rope,    RP::half,        false, false, false, false, qwen3_tensors,   llama_hf},
    {Arch::phi3,    "phi3",    phi3_types,    NK::rmsnorm,   AK::swiglu,     PK::rope,    RP::half,        false, false, false, false, phi3_tensors,    llama_hf},
    {Arch::gemma2,  "gemma2",  gemma2_types,  NK::rmsnorm,   AK::geglu_tanh, PK::rope,    RP::half,        true,  true,  true,  false, gemma2_tensors,  gemma_hf,  gemma2_defaults},
    {Arch::gemma3,  "gemma3",  gemma3_types,  NK::rmsnorm,   AK::geglu_tanh, PK::rope,    RP::half,        true,  true,  true,  false, gemma3_tensors,  gemma3_hf, gemma3_defaults},
    {Arch::gptneox, "gptneox", gptneox_types, NK::layernorm, AK::gelu_erf,   PK::rope,    RP::half,        false, false, false, true,  gptneox_tensors, gptneox_hf},
    {Arch::qwen3moe, "qwen3moe", qwen3moe_types, NK::rmsnorm, AK::swiglu,   PK::rope,    RP::half,        false, false, false, false, qwen3moe_tensors, qwen3moe_hf, nullptr, &qwen3moe_moe},
    {Arch::gpt_oss, "gpt-oss", gpt_oss_types, NK::rmsnorm,   AK::swiglu_oai, PK::rope,    RP::half,        false, false, false, false, gpt_oss_gguf_tensors, gpt_oss_hf, nullptr, &gpt_oss_moe},
    {Arch::smollm3, "smollm3", smollm3_types, NK::rmsnorm,   AK::swiglu,     PK::rope,    RP::interleaved, false, false, true,  false, llama_tensors,   llama_hf},
    {Arch::gemma4,  "gemma4",  gemma4_types,  NK::rmsnorm,   AK::geglu_tanh, PK::rope,    RP::half,        false, true,  true,  false, gemma4_tensors,  gemma4_hf},
    {Arch::qwen35,  "qwen35",  qwen35_types,  NK::rmsnorm,   AK::swiglu,     PK::rope,    RP::half,        true,  false, false, false, qwen35_tensors, qwen35_hf, nullptr, nullptr, &qwen35_hybrid},
    {Arch::granite, "granite", granite_types, NK::rmsnorm,   AK::swiglu,     PK::rope,    RP::interleaved, false, false, false, false, llama_tensors,   llama_hf},
    {Arch::olmo2,   "olmo2",   olmo2_types,   NK::rmsnorm,   AK::swiglu,     PK::rope,    RP::half,        false, false, false, false, olmo2_tensors,   olmo2_hf},
    {Arch::qwen35moe, "qwen35moe", qwen35moe_types, NK::rmsnorm, AK::swiglu, PK::rope,   RP::half,        true,  false, false, false, qwen35moe_tensors, qwen35moe_hf, nullptr, &qwen35moe_moe, &qwen35_hybrid},
    {Arch::mixtral, "llama",   mixtral_types, NK::rmsnorm,   AK::swiglu,     PK::rope,    RP::interleaved, false, false, false, false, mixtral_tensors, mixtral_hf, mixtral_defaults, &mixtral_moe},
    {Arch::olmoe,   "olmoe",   olmoe_types,   NK::rmsnorm,   AK::swiglu,     PK::rope,    RP::half,        false, false, false, false, olmoe_tensors, olmoe_hf, olmoe_defaults, &olmoe_moe},
    {Arch::mistral3, "mistral3", mistral3_types, NK::rmsnorm, AK::swiglu,    PK::rope,    RP::interleaved, false, false, false, false, llama_tensors,   llama_hf},
    {Arch::qwen3next, "qwen3next", qwen3next_types, NK::rmsnorm, AK::swiglu, PK::rope,   RP::half,        true,  false, false, false, qwen3next_tensors, qwen3next_hf, qwen3next_defaults, &qwen3next_moe, &qwen3next_hybrid},
};

// Gemma3ForConditionalGeneration (google/gemma-3-4b-it, 12b, 27b): the text model under
// text_config; transformers 4.50 saves its tensors as language_model.model.* (and
// language_model.lm_head.*), later versions as model.language_model.* (and lm_head.*); the SigLIP
// vision tower and the multimodal projector are used only for images. llama.cpp's converter reads
// such a checkpoint the same way: "language_model." dropped, vision and projector tensors skipped.
const HfRename gemma3_renames[] = {
    {"language_model.model.", "model."}, {"language_model.lm_head.", "lm_head."},
    {"model.language_model.", "model."}, {"lm_head.", "lm_head."},
};
const char* const gemma3_unused[] = {"vision_tower.", "multi_modal_projector.", "model.vision_tower.", "model.multi_modal_projector."};
// Qwen3_5ForConditionalGeneration (every Qwen3.5 checkpoint): the text model under text_config,
// its tensors as model.language_model.*; the vision tower (model.visual.*) and the MTP head
// (mtp.*, a draft head normal decoding does not run, as llama.cpp) set aside.
const HfRename qwen35_renames[] = {{"model.language_model.", "model."}, {"lm_head.", "lm_head."}};
const char* const qwen35_unused[] = {"model.visual.", "mtp."};
// Gemma4ForConditionalGeneration (every Gemma 4 checkpoint): the text model under text_config,
// its tensors as model.language_model.*; the vision and audio towers and their embedders set
// aside (journey takes text only).
const char* const gemma4_unused[] = {"model.vision_tower.", "model.audio_tower.", "model.embed_vision.", "model.embed_audio."};
// Mistral3ForConditionalGeneration (Ministral 3, Mistral Small 3.1+): the text model under
// text_config, its tensors named as Gemma 3's (language_model.model.* in transformers 4,
// model.language_model.* in 5); the Pixtral vision tower and the projector set aside. Its text
// model is Ministral 3's (ministral3: YaRN and the query temperature) or, in Mistral Small 3.1 and
// 3.2, a plain Mistral one (mistral: Llama's block); llama.cpp's converter writes both as mistral3.
const HfWrapper wrappers[] = {
    {"gemma3", Arch::gemma3, "text_config", "gemma3_text", gemma3_renames, gemma3_unused, "vision tower and projector"},
    {"qwen3_5", Arch::qwen35, "text_config", "qwen3_5_text", qwen35_renames, qwen35_unused, "vision tower and MTP head"},
    {"qwen3_5_moe", Arch::qwen35moe, "text_config", "qwen3_5_moe_text", qwen35_renames, qwen35_unused, "vision tower and MTP head"},
    {"gemma4", Arch::gemma4, "text_config", "gemma4_text", qwen35_renames, gemma4_unused, "vision and audio towers"},
    {"mistral3", Arch::mistral3, "text_config", "ministral3", gemma3_renames, gemma3_unused, "vision tower and projector"},
    {"mistral3", Arch::mistral3, "text_config", "mistral", gemma3_renames, gemma3_unused, "vision tower and projector"},
};

// Families journey knows and does not run (Hugging Face model_types and GGUF architectures), with
// what they need that journey lacks: refused with that line, never run as a neighbour.
struct KnownUnsupported {
    const char* name;
    const char* what;
};
const KnownUnsupported known_unsupported[] = {
    {"gemma3n", "Gemma 3n: its AltUp residual streams (predict/correct), LAuReL low-rank branch and activation sparsity are not implemented"},
    {"gemma3n_text", "Gemma 3n: its AltUp residual streams (predict/correct), LAuReL low-rank branch and activation sparsity are not implemented"},
};

// llama.cpp's LLM_TENSOR_* names and the shapes journey binds them with.
const GgufTensor gguf_tensors[] = {
    {tok_embd, "token_embd.weight", Dim::V},
    {pos_embd, "position_embd.weight", Dim::Ctx},
    {output_norm, "output_norm.weight", Dim::C},
    {output_norm_b, "output_norm.bias", Dim::C},
    {output, "output.weight", Dim::V},
    {rope_freqs, "rope_freqs.weight", Dim::D2},
    {rope_factors_long, "rope_factors_long.weight", Dim::D2},
    {rope_factors_short, "rope_factors_short.weight", Dim::D2},
    {attn_norm, "blk.{}.attn_norm.weight", Dim::C},
    {attn_norm_b, "blk.{}.attn_norm.bias", Dim::C},
    {attn_qkv, "blk.{}.attn_qkv.weight", Dim::QKV},
    {attn_qkv_b, "blk.{}.attn_qkv.bias", Dim::QKV},
    {attn_q, "blk.{}.attn_q.weight", Dim::HD},
    {attn_q_b, "blk.{}.attn_q.bias", Dim::HD},
    {attn_k, "blk.{}.attn_k.weight", Dim::KD},
    {attn_k_b, "blk.{}.attn_k.bias", Dim::KD},
    {attn_v, "blk.{}.attn_v.weight", Dim::KD},
    {attn_v_b, "blk.{}.attn_v.bias", Dim::KD},
    {attn_q_norm, "blk.{}.attn_q_norm.weight", Dim::D},
    {attn_k_norm, "blk.{}.attn_k_norm.weight", Dim::D},
    {attn_q_norm_full, "blk.{}.attn_q_norm.weight", Dim::HD},  // OLMo 2, OLMoE: over the whole projection
    {attn_k_norm_full, "blk.{}.attn_k_norm.weight", Dim::KD},
    {attn_out, "blk.{}.attn_output.weight", Dim::C, Dim::HD},
    {attn_out_b, "blk.{}.attn_output.bias", Dim::C},
    {attn_post_norm, "blk.{}.post_attention_norm.weight", Dim::C},
    {ffn_norm, "blk.{}.ffn_norm.weight", Dim::C},
    {ffn_norm_b, "blk.{}.ffn_norm.bias", Dim::C},
    {ffn_up, "blk.{}.ffn_up.weight", Dim::F},
    {ffn_up_b, "blk.{}.ffn_up.bias", Dim::F},
    {ffn_gate, "blk.{}.ffn_gate.weight", Dim::F},
    {ffn_gate_up, "blk.{}.ffn_up.weight", Dim::F2},  // llama.cpp's phi3: gate|up as ffn_up
    {ffn_down, "blk.{}.ffn_down.weight", Dim::C, Dim::F},
    {ffn_down_b, "blk.{}.ffn_down.bias", Dim::C},
    {ffn_post_norm, "blk.{}.post_ffw_norm.weight", Dim::C},
    // Mixtures of experts: sinks and router, then the experts stacked [E, out, in].
    {attn_sinks, "blk.{}.attn_sinks.weight", Dim::H},
    {ffn_norm_post_attn, "blk.{}.post_attention_norm.weight", Dim::C},  // gpt-oss's pre-MLP norm
    {ffn_gate_inp, "blk.{}.ffn_gate_inp.weight", Dim::E},
    {ffn_gate_inp_b, "blk.{}.ffn_gate_inp.bias", Dim::E},
    {ffn_gate_exps, "blk.{}.ffn_gate_exps.weight", Dim::FE},
    {ffn_up_exps, "blk.{}.ffn_up_exps.weight", Dim::FE},
    {ffn_down_exps, "blk.{}.ffn_down_exps.weight", Dim::C, Dim::FE},
    {ffn_gate_exps_b, "blk.{}.ffn_gate_exps.bias", Dim::FE},
    {ffn_up_exps_b, "blk.{}.ffn_up_exps.bias", Dim::FE},
    {ffn_down_exps_b, "blk.{}.ffn_down_exps.bias", Dim::C},
    // The shared expert: its gate is one logit per token ([1, C]; the converter keeps HF's shape).
    {ffn_gate_inp_shexp, "blk.{}.ffn_gate_inp_shexp.weight", Dim::One},
    {ffn_gate_shexp, "blk.{}.ffn_gate_shexp.weight", Dim::FS},
    {ffn_up_shexp, "blk.{}.ffn_up_shexp.weight", Dim::FS},
    {ffn_down_shexp, "blk.{}.ffn_down_shexp.weight", Dim::C, Dim::FS},
    // Hybrid: the gated attention's q|gate, the Gated DeltaNet mixer.
    {attn_q_gate, "blk.{}.attn_q.weight", Dim::HD2},
    {ssm_qkv, "blk.{}.attn_qkv.weight", Dim::SQKV},
    {ssm_gate, "blk.{}.attn_gate.weight", Dim::SV},
    {ssm_beta, "blk.{}.ssm_beta.weight", Dim::HV},
    {ssm_alpha, "blk.{}.ssm_alpha.weight", Dim::HV},
    {ssm_conv1d, "blk.{}.ssm_conv1d.weight", Dim::SQKV, Dim::K4},
    {ssm_dt, "blk.{}.ssm_dt.bias", Dim::HV},
    {ssm_a, "blk.{}.ssm_a", Dim::HV},
    {ssm_norm, "blk.{}.ssm_norm.weight", Dim::DV},
    {ssm_out, "blk.{}.ssm_out.weight", Dim::C, Dim::SV},
    {ssm_qkvz, "blk.{}.ssm_in.weight", Dim::SQKVZ},  // Qwen3-Next: q|k|v|z per key head (HF; early GGUF files)
    {ssm_ba, "blk.{}.ssm_ba.weight", Dim::HV2},      // b|a per key head
    // Gemma 4's per-layer embeddings and layer scalar.
    {per_layer_tok_embd, "per_layer_token_embd.weight", Dim::V, Dim::LP},
    {per_layer_model_proj, "per_layer_model_proj.weight", Dim::LP, Dim::C},
    {per_layer_proj_norm, "per_layer_proj_norm.weight", Dim::PL},
    {per_layer_inp_gate, "blk.{}.inp_gate.weight", Dim::PL, Dim::C},
    {per_layer_proj, "blk.{}.proj.weight", Dim::C, Dim::PL},
    {per_layer_post_norm, "blk.{}.post_norm.weight", Dim::C},
    {layer_out_scale, "blk.{}.layer_output_scale.weight", Dim::One},
};

std::string join(auto names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + std::string(n);
    return s;
}

}  // namespace

std::span<const ArchTraits> arch_table() { return table; }

const GgufTensor* find_gguf_tensor(Tensor t) {
    for (const GgufTensor& g : gguf_tensors)
        if (g.tensor == t) return &g;
    return nullptr;
}

const GgufTensor& gguf_tensor(Tensor t) {
    if (const GgufTensor* g = find_gguf_tensor(t)) return *g;
    throw std::logic_error("no GGUF name for a tensor");
}

std::string with_layer(std::string pattern, int layer) {
    const auto at = pattern.find("{}");
    if (at != std::string::npos) pattern.replace(at, 2, std::to_string(layer));
    return pattern;
}

std::string gguf_tensor_name(Tensor t, int layer) { return with_layer(gguf_tensor(t).name, layer); }

bool hf_tensor_ignorable(std::string_view name) {
    return name.ends_with(".rotary_emb.inv_freq") || name.ends_with(".attn.bias") || name.ends_with(".attn.masked_bias") ||
           name.ends_with(".attention.bias") || name.ends_with(".attention.masked_bias");  // GPT-NeoX's mask buffers
}

bool is_norm(Tensor t) {
    return t == output_norm || t == attn_norm || t == attn_post_norm || t == ffn_norm || t == ffn_post_norm ||
           t == attn_q_norm || t == attn_k_norm || t == attn_q_norm_full || t == attn_k_norm_full || t == ffn_norm_post_attn || t == per_layer_proj_norm ||
           t == per_layer_post_norm;
}

bool is_recurrent_tensor(Tensor t) {
    return t == ssm_qkv || t == ssm_gate || t == ssm_beta || t == ssm_alpha || t == ssm_conv1d || t == ssm_dt ||
           t == ssm_a || t == ssm_norm || t == ssm_out || t == ssm_qkvz || t == ssm_ba;
}

bool is_either_way_tensor(Tensor t) { return t == ssm_qkv || t == ssm_gate || t == ssm_qkvz; }

bool is_attention_tensor(Tensor t) {
    return t == attn_q || t == attn_q_gate || t == attn_k || t == attn_v || t == attn_q_norm || t == attn_k_norm ||
           t == attn_q_norm_full || t == attn_k_norm_full ||
           t == attn_out || t == attn_qkv || t == attn_q_b || t == attn_k_b || t == attn_v_b || t == attn_out_b;
}

const ArchTraits& traits_of(Arch a) {
    for (const ArchTraits& t : table)
        if (t.arch == a) return t;
    return table[0];  // unreachable: every Arch has a row
}

std::string_view arch_name(Arch a) { return traits_of(a).name; }

const ArchTraits* find_arch(std::string_view name) {
    for (const ArchTraits& t : table)
        if (name == t.name) return &t;
    return nullptr;
}

const ArchTraits* find_arch(std::string_view name, bool experts) {
    const ArchTraits* t = find_arch(name);
    if (t && t->arch == Arch::llama && experts) return &traits_of(Arch::mixtral);
    return t;
}

const ArchTraits* find_hf_arch(std::string_view model_type) {
    for (const ArchTraits& t : table)
        for (const char* type : t.hf_types)
            if (model_type == type) return &t;
    return nullptr;
}

const HfWrapper* find_hf_wrapper(std::string_view model_type, std::string_view text_model_type) {
    for (const HfWrapper& w : wrappers)
        if (model_type == w.model_type && (text_model_type.empty() || text_model_type == w.text_model_type)) return &w;
    return nullptr;
}

std::string hf_wrapper_text_types(std::string_view model_type) {
    std::string s;
    for (const HfWrapper& w : wrappers)
        if (model_type == w.model_type) s += (s.empty() ? "" : " or ") + std::string(w.text_model_type);
    return s;
}

const char* unsupported_family(std::string_view name) {
    for (const KnownUnsupported& k : known_unsupported)
        if (name == k.name) return k.what;
    return nullptr;
}

std::string arch_names() {
    std::vector<std::string> v;
    for (const ArchTraits& t : table)
        if (find_arch(t.name) == &t) v.emplace_back(t.name);  // once each (mixtral is llama's)
    return join(v);
}

std::string hf_type_names() {
    std::vector<std::string> v;
    for (const ArchTraits& t : table)
        for (const char* type : t.hf_types) v.emplace_back(type);
    for (const HfWrapper& w : wrappers)
        if (find_hf_wrapper(w.model_type) == &w) v.push_back(std::string(w.model_type) + " (text only)");
    return join(v);
}

}  // namespace journey
