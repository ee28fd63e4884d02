#include "journey/model/gguf_keys.h"

#include <stdexcept>

namespace journey {
namespace {

using C = ModelConfig;
const GgufKey keys[] = {
    {Key::context_length, "context_length", &C::n_ctx},
    {Key::embedding_length, "embedding_length", &C::n_embd},
    {Key::block_count, "block_count", &C::n_layer},
    {Key::feed_forward_length, "feed_forward_length", &C::n_ff},
    {Key::vocab_size, "vocab_size", &C::n_vocab},
    {Key::head_count, "attention.head_count", &C::n_head},
    {Key::head_count_kv, "attention.head_count_kv", &C::n_kv_head},
    {Key::key_length, "attention.key_length", &C::head_dim},
    {Key::value_length, "attention.value_length", &C::head_dim},
    {Key::layer_norm_epsilon, "attention.layer_norm_epsilon", nullptr, &C::norm_eps},
    {Key::layer_norm_rms_epsilon, "attention.layer_norm_rms_epsilon", nullptr, &C::norm_eps},
    {Key::sliding_window, "attention.sliding_window", &C::sliding_window},
    {Key::sliding_window_pattern, "attention.sliding_window_pattern"},  // -> sliding_layers
    {Key::rope_dimension_count, "rope.dimension_count", &C::n_rot},
    {Key::rope_freq_base, "rope.freq_base", nullptr, &C::rope_theta},
    {Key::rope_freq_base_swa, "rope.freq_base_swa", nullptr, &C::rope_local_theta},
    {Key::rope_scaling_type, "rope.scaling.type"},  // -> rope_scaling
    {Key::rope_scaling_factor, "rope.scaling.factor", nullptr, &C::rope_factor},
    {Key::rope_scaling_original_context_length, "rope.scaling.original_context_length", &C::rope_original_ctx},
    {Key::rope_scaling_finetuned, "rope.scaling.finetuned"},  // informative
    {Key::rope_scaling_attn_factor, "rope.scaling.attn_factor", nullptr, &C::rope_mscale},
    {Key::yarn_ext_factor, "rope.scaling.yarn_ext_factor"},  // 1 only
    {Key::yarn_attn_factor, "rope.scaling.yarn_attn_factor", nullptr, &C::rope_mscale},
    {Key::yarn_beta_fast, "rope.scaling.yarn_beta_fast", nullptr, &C::rope_beta_fast},
    {Key::yarn_beta_slow, "rope.scaling.yarn_beta_slow", nullptr, &C::rope_beta_slow},
    {Key::use_parallel_residual, "use_parallel_residual"},  // -> parallel_residual
    {Key::attn_logit_softcapping, "attn_logit_softcapping", nullptr, &C::attn_softcap},
    {Key::final_logit_softcapping, "final_logit_softcapping", nullptr, &C::final_softcap},
    {Key::tensor_data_layout, "tensor_data_layout"},
    {Key::expert_count, "expert_count", &C::n_expert},
    {Key::expert_used_count, "expert_used_count", &C::n_expert_used},
    {Key::expert_feed_forward_length, "expert_feed_forward_length", &C::n_ff_exp},
    {Key::expert_shared_feed_forward_length, "expert_shared_feed_forward_length", &C::n_ff_shexp},
    {Key::rope_dimension_sections, "rope.dimension_sections"},  // -> rope_sections
    {Key::nextn_predict_layers, "nextn_predict_layers", &C::n_nextn},
    {Key::ssm_conv_kernel, "ssm.conv_kernel", &C::ssm_conv},
    {Key::ssm_state_size, "ssm.state_size", &C::ssm_head_dim},
    {Key::ssm_group_count, "ssm.group_count", &C::ssm_k_heads},
    {Key::ssm_time_step_rank, "ssm.time_step_rank", &C::ssm_v_heads},
    {Key::ssm_inner_size, "ssm.inner_size"},  // = ssm_v_heads * ssm_head_dim
    {Key::recurrent_layers, "attention.recurrent_layers"},  // -> recurrent_layers
    {Key::full_attention_interval, "full_attention_interval"},  // -> recurrent_layers
    {Key::key_length_swa, "attention.key_length_swa", &C::head_dim_swa},
    {Key::value_length_swa, "attention.value_length_swa", &C::head_dim_swa},
    {Key::rope_dimension_count_swa, "rope.dimension_count_swa", &C::n_rot_swa},
    {Key::shared_kv_layers, "attention.shared_kv_layers", &C::n_kv_shared},
    {Key::embedding_length_per_layer_input, "embedding_length_per_layer_input", &C::n_embd_per_layer},
    {Key::embedding_scale, "embedding_scale", nullptr, &C::embed_scale},
    {Key::attention_scale, "attention.scale", nullptr, &C::attn_scale},
    {Key::residual_scale, "residual_scale", nullptr, &C::residual_scale},
    {Key::logit_scale, "logit_scale", nullptr, &C::logit_scale},
    {Key::yarn_log_multiplier, "rope.scaling.yarn_log_multiplier"},  // -> rope_mscale
    {Key::attention_temperature_scale, "attention.temperature_scale", nullptr, &C::attn_temp_scale},
};

}  // namespace

const GgufKey& gguf_key(Key k) {
    for (const GgufKey& g : keys)
        if (g.key == k) return g;
    throw std::logic_error("no GGUF key");
}

std::string_view key_name(Key k) { return gguf_key(k).name; }

std::string key_of(std::string_view arch, Key k) { return std::string(arch) + "." + gguf_key(k).name; }

const GgufKey* find_key(std::string_view name) {
    for (const GgufKey& g : keys)
        if (name == g.name) return &g;
    return nullptr;
}

}  // namespace journey
