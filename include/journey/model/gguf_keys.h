// The "<arch>.<key>" GGUF metadata keys (llama.cpp's LLM_KV_* names): one table, read by
// config_from_gguf (config_gguf.cpp) and written by the converter (src/convert/), each with the
// ModelConfig field it carries. A key outside the table is refused when a file is read.
#pragma once
#include <string>
#include <string_view>

#include "journey/model/config.h"

namespace journey {

enum class Key {
    context_length, embedding_length, block_count, feed_forward_length, vocab_size,
    head_count, head_count_kv, key_length, value_length, layer_norm_epsilon, layer_norm_rms_epsilon,
    sliding_window, sliding_window_pattern, rope_dimension_count, rope_freq_base, rope_freq_base_swa,
    rope_scaling_type, rope_scaling_factor, rope_scaling_original_context_length, rope_scaling_finetuned,
    rope_scaling_attn_factor, yarn_ext_factor, yarn_attn_factor, yarn_beta_fast, yarn_beta_slow,
    use_parallel_residual, attn_logit_softcapping, final_logit_softcapping,
    expert_count, expert_used_count, expert_feed_forward_length,  // mixtures of experts only
    expert_shared_feed_forward_length,  // a family with a shared expert only
    // hybrid families only (Qwen3.5): M-RoPE sections, the MTP heads, the Gated DeltaNet mixer's sizes, which layers recur
    rope_dimension_sections, nextn_predict_layers, ssm_conv_kernel, ssm_state_size, ssm_group_count,
    ssm_time_step_rank, ssm_inner_size, recurrent_layers, full_attention_interval,
    // Gemma 4 only: the sliding layers' head width and rotary dims, KV-shared layers, per-layer embeddings
    key_length_swa, value_length_swa, rope_dimension_count_swa, shared_kv_layers, embedding_length_per_layer_input,
    tensor_data_layout,  // old Llama files: how the converter permuted q/k (the rope pairing covers it)
    // Granite only: its four multipliers (llama.cpp's LLM_KV_EMBEDDING_SCALE, _ATTENTION_SCALE, _RESIDUAL_SCALE, _LOGIT_SCALE)
    embedding_scale, attention_scale, residual_scale, logit_scale,
    // mistral3 only: YaRN's mscale_all_dim (the attention factor llama.cpp derives from it) and the
    // query temperature (Llama 4's, LLM_KV_ROPE_SCALING_YARN_LOG_MUL and LLM_KV_ATTENTION_TEMPERATURE_SCALE)
    yarn_log_multiplier, attention_temperature_scale,
};

struct GgufKey {
    Key key;
    const char* name;                      // after "<arch>."
    int ModelConfig::*int_field = nullptr;  // the field it carries (one of the two), when it is one field
    float ModelConfig::*float_field = nullptr;
};

const GgufKey& gguf_key(Key k);
// "attention.head_count" (without the architecture).
std::string_view key_name(Key k);
// "<arch>.attention.head_count".
std::string key_of(std::string_view arch, Key k);
// The key whose name (after "<arch>.") is `name`, or nullptr.
const GgufKey* find_key(std::string_view name);

}  // namespace journey
