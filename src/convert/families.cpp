// The converter hooks of the families journey converts (families.h): each writes its "<arch>."
// keys in the order llama.cpp's converter class for it does. What a GGUF cannot say (a sliding
// pattern or NoPE step other than llama.cpp's fixed one) is refused.
#include "families.h"

#include "journey/errors.h"

namespace journey {

void HfModel::refuse(const std::string& what) const { throw ModelError((dir / "config.json").string() + ": " + what); }

void KeyWriter::field(Key k, const ModelConfig& c) {
    const GgufKey& g = gguf_key(k);
    if (g.int_field) u32(k, c.*g.int_field);
    else f32(k, c.*g.float_field);
}

namespace {

using K = Key;

// GPT2Model.set_gguf_parameters
void gpt2_keys(KeyWriter& w, const HfModel& hf) {
    const ModelConfig& c = hf.config;
    for (Key k : {K::block_count, K::context_length, K::embedding_length, K::feed_forward_length, K::head_count,
                  K::layer_norm_epsilon})
        w.field(k, c);
    w.file_type(hf.file_type);
}

// Phi3MiniModel.set_gguf_parameters (LongRoPE's factor tensors and attention factor: convert_hf.cpp,
// which writes them first, as the converter's generate_extra_tensors runs before these keys)
void phi3_keys(KeyWriter& w, const HfModel& hf) {
    const ModelConfig& c = hf.config;
    if (c.rope_scaling != RopeScaling::none && c.rope_scaling != RopeScaling::longrope)
        hf.refuse("Phi-3 rope scaling '" + std::string(rope_scaling_name(c.rope_scaling)) + "' is not converted by journey");
    w.field(K::context_length, c);
    w.u32(K::rope_scaling_original_context_length,
          hf.has_integer("original_max_position_embeddings") ? hf.json["original_max_position_embeddings"].get<int64_t>() : c.n_ctx);
    for (Key k : {K::embedding_length, K::feed_forward_length, K::block_count, K::head_count, K::head_count_kv,
                  K::layer_norm_rms_epsilon})
        w.field(k, c);
    w.u32(K::rope_dimension_count, c.rot_dims());
    w.field(K::rope_freq_base, c);
    w.file_type(hf.file_type);
    if (c.sliding_window > 0) w.field(K::sliding_window, c);
}

// Gemma2Model.set_gguf_parameters
void gemma2_keys(KeyWriter& w, const HfModel& hf) {
    const ModelConfig& c = hf.config;
    for (Key k : {K::context_length, K::embedding_length, K::block_count, K::feed_forward_length, K::head_count,
                  K::head_count_kv, K::layer_norm_rms_epsilon, K::key_length, K::value_length})
        w.field(k, c);
    w.file_type(hf.file_type);
    // Written when config.json gives them (the ModelConfig holds transformers' defaults otherwise).
    if (hf.has_number("attn_logit_softcapping")) w.field(K::attn_logit_softcapping, c);
    if (hf.has_number("final_logit_softcapping")) w.field(K::final_logit_softcapping, c);
    if (hf.has_integer("sliding_window")) w.field(K::sliding_window, c);
}

// TextModel.set_gguf_parameters, which LlamaModel and Qwen2Model/Qwen3Model extend.
void text_model_keys(KeyWriter& w, const HfModel& hf) {
    const ModelConfig& c = hf.config;
    for (Key k : {K::block_count, K::context_length, K::embedding_length, K::feed_forward_length, K::head_count})
        w.field(k, c);
    if (hf.has("num_key_value_heads")) w.field(K::head_count_kv, c);
    if (c.rope_scaling == RopeScaling::linear) {
        w.writer().set_str(key_of(w.arch(), K::rope_scaling_type), "linear");
        w.field(K::rope_scaling_factor, c);
    }
    if (c.rope_scaling == RopeScaling::yarn) {  // as the config gives them
        const nlohmann::json& r = hf.json.contains("rope_parameters") ? hf.json["rope_parameters"] : hf.json["rope_scaling"];
        w.writer().set_str(key_of(w.arch(), K::rope_scaling_type), "yarn");
        w.field(K::rope_scaling_factor, c);
        w.field(K::rope_scaling_original_context_length, c);
        if (r.contains("attention_factor")) w.f32(K::yarn_attn_factor, c.rope_mscale);
        if (r.contains("beta_fast")) w.field(K::yarn_beta_fast, c);
        if (r.contains("beta_slow")) w.field(K::yarn_beta_slow, c);
    }
    // rope_theta at the top level, or in transformers 5's rope_parameters (TextModel mirrors the one into the other)
    const bool rp_theta = hf.json.contains("rope_parameters") && hf.json["rope_parameters"].is_object() &&
                          hf.json["rope_parameters"].contains("rope_theta") && hf.json["rope_parameters"]["rope_theta"].is_number();
    if (hf.has_number("rope_theta") || rp_theta) w.field(K::rope_freq_base, c);
    w.field(K::layer_norm_rms_epsilon, c);
    // Mixtures of experts: the counts under any of the names llama.cpp's converter looks for.
    if (hf.has_integer("num_local_experts") || hf.has_integer("num_experts")) w.field(K::expert_count, c);
    if (hf.has_integer("num_experts_per_tok") || hf.has_integer("num_experts_per_token")) w.field(K::expert_used_count, c);
    if (hf.has_integer("head_dim")) {
        w.field(K::key_length, c);
        w.field(K::value_length, c);
    }
    w.file_type(hf.file_type);
}

// Qwen2MoeModel.set_gguf_parameters (Qwen3MoeModel adds nothing). llama.cpp's qwen3moe always
// renormalises the kept expert weights and the converter writes no key for it: a checkpoint with
// norm_topk_prob false (which transformers honours, and journey runs so) would change in the GGUF.
void qwen3moe_keys(KeyWriter& w, const HfModel& hf) {
    if (!hf.config.moe_norm_topk) hf.refuse("norm_topk_prob false cannot be stored in a GGUF qwen3moe file (llama.cpp always renormalises)");
    text_model_keys(w, hf);
    if (hf.has_integer("moe_intermediate_size")) w.field(K::expert_feed_forward_length, hf.config);
    if (hf.has("shared_expert_intermediate_size")) hf.refuse("shared experts (shared_expert_intermediate_size) are not converted by journey");
}

// GptOssModel.set_gguf_parameters.
void gpt_oss_keys(KeyWriter& w, const HfModel& hf) {
    text_model_keys(w, hf);
    w.field(K::sliding_window, hf.config);
    w.field(K::expert_feed_forward_length, hf.config);
}

void llama_keys(KeyWriter& w, const HfModel& hf) {
    text_model_keys(w, hf);
    w.field(K::vocab_size, hf.config);
    w.u32(K::rope_dimension_count, hf.config.head_dim);
}

// LlamaModel.set_gguf_parameters for MixtralForCausalLM: llama's keys (expert counts among
// TextModel's). A GGUF llama has no sliding window (llama.cpp would run the layers full).
void mixtral_keys(KeyWriter& w, const HfModel& hf) {
    if (hf.config.sliding_window > 0) hf.refuse("sliding_window cannot be stored in a GGUF llama (Mixtral) file (llama.cpp would not apply it)");
    llama_keys(w, hf);
}

// OlmoeModel.set_gguf_parameters: TextModel's keys, the norm epsilon then set to 1e-5 whatever
// config.json says; llama.cpp's olmoe never renormalises the kept expert weights.
void olmoe_keys(KeyWriter& w, const HfModel& hf) {
    if (hf.config.norm_eps != 1e-5f) hf.refuse("rms_norm_eps other than 1e-5 is not converted (llama.cpp's converter writes 1e-5 for OLMoE)");
    if (hf.config.moe_norm_topk) hf.refuse("norm_topk_prob true cannot be stored in a GGUF olmoe file (llama.cpp never renormalises)");
    text_model_keys(w, hf);
}

// Mistral3Model.Ministral3Model.set_gguf_parameters: LlamaModel's keys, then YaRN's
// mscale_all_dim as yarn_log_multiplier and llama_4_scaling_beta as the query temperature.
// llama.cpp derives the attention factor from mscale_all_dim alone (mscale taken as 1), so a
// config whose factor transformers computes otherwise is refused. Mistral Small 3.1/3.2's text
// model (model_type mistral, not ministral3) gets LlamaModel's keys alone, as the converter writes.
void mistral3_keys(KeyWriter& w, const HfModel& hf) {
    const nlohmann::json type = hf.json.value("model_type", nlohmann::json());
    if (type == "mistral") return llama_keys(w, hf);
    // (a text_config without model_type: journey reads ministral3, llama.cpp's converter would not)
    if (type != "ministral3") hf.refuse("a mistral3 text_config without model_type ministral3 or mistral is not converted");
    const nlohmann::json& r = hf.json.contains("rope_parameters") ? hf.json["rope_parameters"] : hf.json["rope_scaling"];
    if (r.contains("attention_factor") || r.contains("attn_factor"))
        hf.refuse("ministral3's rope attention_factor cannot be stored in GGUF (llama.cpp derives it from mscale_all_dim)");
    if (!r.contains("mscale_all_dim") || !r["mscale_all_dim"].is_number())
        hf.refuse("ministral3 without rope_parameters.mscale_all_dim is not converted (llama.cpp's converter reads it)");
    if (!r.contains("mscale") || !r["mscale"].is_number() || r["mscale"].get<double>() != 1.0)
        hf.refuse("ministral3's rope_parameters.mscale other than 1 cannot be stored in GGUF (llama.cpp takes it as 1)");
    llama_keys(w, hf);
    w.f32(K::yarn_log_multiplier, r["mscale_all_dim"].get<float>());
    w.field(K::attention_temperature_scale, hf.config);
}

// Llama's q/k row order for llama.cpp's rope (LlamaModel.permute): within each head, rows
// (j*half + i) go to (2*i + j).
void llama_permute_qk(Tensor t, const std::string& hf_name, const HfModel& hf, Source& s) {
    if (t != Tensor::attn_q && t != Tensor::attn_k) return;
    const int64_t heads = t == Tensor::attn_q ? hf.config.n_head : hf.config.n_kv_head;
    if (s.t->shape.empty() || s.t->shape[0] % (2 * heads) != 0)
        throw ModelError(hf.weights.string() + ": tensor '" + hf_name + "' rows do not split into " + std::to_string(heads) + " heads");
    const int64_t per_head = s.t->shape[0] / heads, half = per_head / 2;
    s.row_map = [per_head, half](int64_t r) {
        const int64_t h = r / per_head, k = r % per_head, i = k / 2, j = k % 2;
        return h * per_head + j * half + i;
    };
}

// ---- issue 36: the families journey ran but did not convert
// Gemma3Model.set_gguf_parameters: TextModel's keys for what config.json gives, then Gemma 3's
// own (overwritten in place, or appended when TextModel did not write them).
void gemma3_keys(KeyWriter& w, const HfModel& hf) {
    const ModelConfig& c = hf.config;
    const nlohmann::json& rp = hf.json.contains("rope_parameters") ? hf.json["rope_parameters"] : hf.json.value("rope_scaling", nlohmann::json());
    if (hf.has("rope_parameters") || (rp.is_object() && (rp.contains("full_attention") || rp.contains("sliding_attention"))))
        hf.refuse("Gemma 3 with rope_parameters is not converted by journey (its config.json as transformers 4 writes it is)");
    if (!(c.final_softcap == 0.0f || hf.has_number("final_logit_softcapping")))
        hf.refuse("final_logit_softcapping is not converted by journey without the key");
    // llama.cpp's gemma3 slides every layer but each 6th (no key for another pattern).
    for (int l = 0; l < c.n_layer; ++l)
        if ((c.window_of(l) > 0) != (l % 6 < 5)) hf.refuse("a sliding pattern other than 5 sliding layers : 1 global cannot be stored in GGUF (llama.cpp fixes it)");
    w.field(K::block_count, c);
    if (hf.has("max_position_embeddings")) w.field(K::context_length, c);
    if (hf.has("hidden_size")) w.field(K::embedding_length, c);
    if (hf.has("intermediate_size")) w.field(K::feed_forward_length, c);
    if (hf.has("num_attention_heads")) w.field(K::head_count, c);
    if (hf.has("num_key_value_heads")) w.field(K::head_count_kv, c);
    if (c.rope_scaling == RopeScaling::linear) {
        w.writer().set_str(key_of(w.arch(), K::rope_scaling_type), "linear");
        w.field(K::rope_scaling_factor, c);
    } else if (c.rope_scaling != RopeScaling::none) {
        hf.refuse("Gemma 3 rope scaling '" + std::string(rope_scaling_name(c.rope_scaling)) + "' is not converted by journey");
    }
    if (hf.has_number("rope_theta")) w.field(K::rope_freq_base, c);
    if (hf.has_number("rope_local_base_freq")) w.field(K::rope_freq_base_swa, c);
    if (hf.has("rms_norm_eps")) w.field(K::layer_norm_rms_epsilon, c);
    if (hf.has("head_dim")) {
        w.field(K::key_length, c);
        w.field(K::value_length, c);
    }
    w.file_type(hf.file_type);
    for (Key k : {K::context_length, K::head_count, K::layer_norm_rms_epsilon, K::key_length, K::value_length, K::rope_freq_base})
        w.field(k, c);
    if (c.final_softcap != 0.0f) w.field(K::final_logit_softcapping, c);
    if (!(hf.has_integer("sliding_window_pattern") && hf.json["sliding_window_pattern"].get<int64_t>() == 1)) w.field(K::sliding_window, c);
    w.field(K::head_count_kv, c);
}

// GPTNeoXModel.set_gguf_parameters: its own keys only (no file type, no rope base).
void gptneox_keys(KeyWriter& w, const HfModel& hf) {
    const ModelConfig& c = hf.config;
    if (c.rope_theta != 10000.0f) hf.refuse("rotary_emb_base other than 10000 cannot be stored by llama.cpp's GPT-NeoX converter");
    if (c.rope_scaling != RopeScaling::none) hf.refuse("GPT-NeoX rope scaling is not converted by journey");
    if (!hf.has_number("rotary_pct")) hf.refuse("GPT-NeoX without rotary_pct is not converted by journey (llama.cpp's converter reads that key)");
    for (Key k : {K::context_length, K::embedding_length, K::block_count, K::feed_forward_length}) w.field(k, c);
    w.u32(K::rope_dimension_count, c.rot_dims());
    w.field(K::head_count, c);
    w.writer().set_bool(key_of(w.arch(), K::use_parallel_residual), c.parallel_residual);
    w.field(K::layer_norm_epsilon, c);
}

// GPTNeoXModel.modify_tensors: the fused query_key_value from per head [q_h | k_h | v_h] to [q | k | v].
void gptneox_qkv(Tensor t, const std::string&, const HfModel& hf, Source& s) {
    if (t != Tensor::attn_qkv && t != Tensor::attn_qkv_b) return;
    const int64_t H = hf.config.n_head, D = hf.config.head_dim;
    if (t == Tensor::attn_qkv) {
        s.row_map = [H, D](int64_t r) {  // output row r: part r / (H D) of head (r % (H D)) / D
            const int64_t part = r / (H * D), h = (r % (H * D)) / D, d = r % D;
            return h * 3 * D + part * D + d;
        };
    } else {
        s.chunk = D;
        s.row_map = [H](int64_t i) { return (i % H) * 3 + i / H; };  // output chunk (part, head) <- source (head, part)
    }
}
// GraniteModel.set_gguf_parameters: LlamaModel's keys with head_dim popped from the config first
// (no key_length / value_length; rope dimensions hidden_size / heads), then each multiplier the
// config gives (a truthy value, as the converter's walrus tests it). Without attention_multiplier
// llama.cpp would scale by 1/sqrt(head_dim) where transformers scales by 1: refused.
void granite_keys(KeyWriter& w, const HfModel& hf) {
    const ModelConfig& c = hf.config;
    if (!hf.has_number("attention_multiplier"))
        hf.refuse("Granite without attention_multiplier cannot be stored in GGUF (llama.cpp then scales attention by "
                  "1/sqrt(head_dim), transformers by 1)");
    nlohmann::json popped = hf.json;
    popped.erase("head_dim");
    text_model_keys(w, HfModel{hf.dir, hf.weights, popped, c, hf.file_type});
    w.field(K::vocab_size, c);
    w.u32(K::rope_dimension_count, c.n_embd / c.n_head);
    w.field(K::attention_scale, c);
    if (hf.has_number("embedding_multiplier")) w.field(K::embedding_scale, c);
    if (hf.has_number("residual_multiplier")) w.field(K::residual_scale, c);
    if (hf.has_number("logits_scaling")) w.field(K::logit_scale, c);
}

// Gemma4Model.set_gguf_parameters (through Gemma3Model and TextModel): the keys TextModel and
// Gemma 3 write, overwritten in place by Gemma 4's (key_length: the full layers' head; the
// per-layer MLP widths), then its own. (The rope_freqs tensor: convert_hf.cpp, written first.)
void gemma4_keys(KeyWriter& w, const HfModel& hf) {
    const ModelConfig& c = hf.config;
    if (c.rope_freq_factors.empty())
        hf.refuse("Gemma 4 whose rope_parameters.full_attention.rope_type is not 'proportional' is not converted (llama.cpp's converter requires it)");
    if (!hf.has_integer("num_kv_shared_layers")) hf.refuse("Gemma 4 without num_kv_shared_layers is not converted (llama.cpp's converter reads it)");
    if (!hf.has_integer("global_head_dim")) hf.refuse("Gemma 4 without global_head_dim is not converted by journey");
    w.field(K::block_count, c);
    w.field(K::context_length, c);
    w.field(K::embedding_length, c);
    if (c.n_ff_layers.empty()) w.field(K::feed_forward_length, c);
    else w.writer().set_i32s(key_of(w.arch(), K::feed_forward_length), std::vector<int32_t>(c.n_ff_layers.begin(), c.n_ff_layers.end()));
    w.field(K::head_count, c);
    w.field(K::head_count_kv, c);
    w.field(K::rope_freq_base, c);
    w.field(K::rope_freq_base_swa, c);
    w.field(K::layer_norm_rms_epsilon, c);
    w.field(K::key_length, c);
    w.field(K::value_length, c);
    w.file_type(hf.file_type);
    if (c.final_softcap != 0.0f) w.field(K::final_logit_softcapping, c);
    w.field(K::sliding_window, c);
    w.u32(K::shared_kv_layers, c.n_kv_shared);
    w.u32(K::embedding_length_per_layer_input, c.n_embd_per_layer);
    std::vector<bool> swa;
    for (int l = 0; l < c.n_layer; ++l) swa.push_back(c.window_of_layer(l) != 0);
    w.writer().set_bools(key_of(w.arch(), K::sliding_window_pattern), swa);
    w.u32(K::key_length_swa, c.head_dim_swa);
    w.u32(K::value_length_swa, c.head_dim_swa);
    w.u32(K::rope_dimension_count, c.head_dim);
    w.u32(K::rope_dimension_count_swa, c.n_rot_swa > 0 ? c.n_rot_swa : c.head_dim_swa);
}

// Gemma4Model.set_vocab's keys after SpecialVocab's.
void gemma4_vocab(GgufWriter& w) {
    w.set_bool("tokenizer.ggml.add_space_prefix", false);
    w.set_bool("tokenizer.ggml.add_bos_token", true);
}
// ---- end of issue 36's hooks

// ---- issue 35: the hybrid families
// Qwen3NextModel.set_gguf_parameters (through _QwenMtpMixin, Qwen2MoeModel and TextModel), which
// Qwen3_5TextModel extends with its M-RoPE sections (`mrope`): block_count counts the MTP layers
// (config.json's mtp_num_hidden_layers, else the checkpoint's mtp.layers.*: convert_hf.cpp; none
// is an error there too); the rope keys come from rope_parameters or the top level.
void hybrid_keys(KeyWriter& w, const HfModel& hf, bool mrope) {
    const ModelConfig& c = hf.config;
    const std::string family = mrope ? "Qwen3.5" : "Qwen3-Next";
    if (c.rope_scaling != RopeScaling::none) hf.refuse(family + " rope scaling is not converted by journey");
    if (c.n_nextn <= 0) hf.refuse("no MTP head (mtp_num_hidden_layers, mtp.layers.*): llama.cpp's converter requires one for " + family);
    // llama.cpp's qwen35moe / qwen3next always renormalise the kept experts' weights (no key for it)
    if (c.n_expert > 0 && !c.moe_norm_topk) hf.refuse("norm_topk_prob false cannot be stored in a GGUF " + w.arch() + " file (llama.cpp always renormalises)");
    w.u32(K::block_count, c.n_layer + c.n_nextn);
    w.field(K::context_length, c);
    w.field(K::embedding_length, c);
    if (hf.has("intermediate_size")) w.field(K::feed_forward_length, c);  // (Qwen3.5-MoE has none)
    w.field(K::head_count, c);
    if (hf.has("num_key_value_heads")) w.field(K::head_count_kv, c);
    const nlohmann::json rp = hf.json.contains("rope_parameters") && hf.json["rope_parameters"].is_object() ? hf.json["rope_parameters"]
                                                                                                          : nlohmann::json::object();
    std::vector<int32_t> sections(c.rope_sections.begin(), c.rope_sections.end());
    const bool has_sections = rp.contains("mrope_section");
    if (has_sections) {
        while (sections.size() < 4) sections.push_back(0);
        sections.resize(4);
        w.writer().set_i32s(key_of(w.arch(), K::rope_dimension_sections), sections);
    }
    if (rp.contains("rope_theta") || hf.has_number("rope_theta")) w.field(K::rope_freq_base, c);
    w.field(K::layer_norm_rms_epsilon, c);
    if (hf.has_integer("num_local_experts") || hf.has_integer("num_experts")) w.field(K::expert_count, c);
    if (hf.has_integer("num_experts_per_tok") || hf.has_integer("num_experts_per_token")) w.field(K::expert_used_count, c);
    if (hf.has_integer("head_dim")) {
        w.field(K::key_length, c);
        w.field(K::value_length, c);
    }
    w.file_type(hf.file_type);
    if (hf.has_integer("moe_intermediate_size")) w.field(K::expert_feed_forward_length, c);
    if (hf.has("shared_expert_intermediate_size")) w.field(K::expert_shared_feed_forward_length, c);  // Qwen2MoeModel
    w.u32(K::nextn_predict_layers, c.n_nextn);
    for (Key k : {K::ssm_conv_kernel, K::ssm_state_size, K::ssm_group_count, K::ssm_time_step_rank}) w.field(k, c);
    w.u32(K::ssm_inner_size, int64_t{c.ssm_v_heads} * c.ssm_head_dim);
    if (hf.has("layer_types")) {
        std::vector<bool> recurrent(c.recurrent_layers.begin(), c.recurrent_layers.end());
        recurrent.resize(size_t(c.n_layer + c.n_nextn), false);
        w.writer().set_bools(key_of(w.arch(), K::recurrent_layers), recurrent);
    }  // (without layer_types llama.cpp's loader makes every full_attention_interval-th layer full, as journey)
    w.u32(K::full_attention_interval, hf.has_integer("full_attention_interval") ? hf.json["full_attention_interval"].get<int64_t>() : 4);
    w.field(K::rope_dimension_count, c);
    // _Qwen35MRopeMixin: the sections written even when the checkpoint gives none
    if (mrope && !has_sections) w.writer().set_i32s(key_of(w.arch(), K::rope_dimension_sections), {11, 11, 10, 0});
}
void qwen35_keys(KeyWriter& w, const HfModel& hf) { hybrid_keys(w, hf, true); }
void qwen3next_keys(KeyWriter& w, const HfModel& hf) { hybrid_keys(w, hf, false); }

// Qwen3NextModel.modify_tensors: A_log -> -exp(A_log), the conv's [CH, 1, K] as [CH, K]. (The
// norms' +1 is the row's hf_norm_plus_one, dt_bias is named ssm_dt.bias by the table.)
void qwen3next_tensor(Tensor t, const std::string&, const HfModel&, Source& s) {
    if (t == Tensor::ssm_a) s.neg_exp = true;
    if (t == Tensor::ssm_conv1d && s.shape.size() == 3 && s.shape[1] == 1) s.shape = {s.shape[0], s.shape[2]};
}

// _LinearAttentionVReorderBase.modify_tensors (Qwen3.5), then Qwen3NextModel's: with R = Hv/Hk > 1
// value heads per key head, the checkpoint's value heads, grouped per key head (head kh R + i), are
// written tiled (head i Hk + kh), so that value head h reads key head h % Hk: the value rows of
// in_proj_qkv and of the conv, in_proj_z's rows, in_proj_b/a's, A_log's and dt_bias's entries, and
// out_proj's columns.
void qwen35_tensor(Tensor t, const std::string& hf_name, const HfModel& hf, Source& s) {
    qwen3next_tensor(t, hf_name, hf, s);
    const ModelConfig& c = hf.config;
    const int64_t Hk = c.ssm_k_heads, R = c.ssm_v_heads / c.ssm_k_heads, S = c.ssm_head_dim, qk = 2 * Hk * S;
    if (R == 1) return;
    auto grouped = [Hk, R](int64_t j) { return j % Hk * R + j / Hk; };  // tiled head j <- grouped head
    auto heads = [grouped, S](int64_t r) { return grouped(r / S) * S + r % S; };
    switch (t) {
        case Tensor::ssm_qkv:
        case Tensor::ssm_conv1d: s.row_map = [qk, heads](int64_t r) { return r < qk ? r : qk + heads(r - qk); }; break;
        case Tensor::ssm_gate: s.row_map = heads; break;
        case Tensor::ssm_beta:
        case Tensor::ssm_alpha: s.row_map = grouped; break;
        case Tensor::ssm_a:
        case Tensor::ssm_dt:  // one row: its entries moved
            s.chunk = 1;
            s.row_map = grouped;
            break;
        case Tensor::ssm_out: s.col_map = heads; break;
        default: break;
    }
}

// Qwen3NextModel.modify_tensors: in_proj_qkvz, [q | k | v | z] per key head (v and z R = Hv/Hk
// value heads wide), as attn_qkv [q of every head | k of every head | v of every head] and
// attn_gate [z of every head], each head's rows in order (value heads stay grouped per key head).
std::vector<std::pair<Tensor, Source>> qwen3next_split(Tensor t, const std::string& hf_name, const HfModel& hf, const Source& s) {
    if (t != Tensor::ssm_qkvz) return {};
    const ModelConfig& c = hf.config;
    const int64_t Hk = c.ssm_k_heads, S = c.ssm_head_dim, R = c.ssm_v_heads / c.ssm_k_heads, W = 2 * S + 2 * R * S;
    if (s.shape.size() != 2 || s.shape[0] != Hk * W || s.shape[1] != c.n_embd)
        throw ModelError(hf.weights.string() + ": tensor '" + hf_name + "' is not [" + std::to_string(Hk * W) + ", " +
                         std::to_string(c.n_embd) + "] (q|k|v|z of " + std::to_string(Hk) + " key heads)");
    Source qkv = s, z = s;
    qkv.shape = {2 * Hk * S + Hk * R * S, c.n_embd};
    qkv.row_map = [Hk, S, R, W](int64_t r) {
        if (r < 2 * Hk * S) return (r % (Hk * S)) / S * W + (r / (Hk * S)) * S + r % S;  // q, then k: head r / S
        const int64_t v = r - 2 * Hk * S;
        return v / (R * S) * W + 2 * S + v % (R * S);
    };
    z.shape = {Hk * R * S, c.n_embd};
    z.row_map = [S, R, W](int64_t r) { return r / (R * S) * W + 2 * S + R * S + r % (R * S); };
    return {{Tensor::ssm_qkv, qkv}, {Tensor::ssm_gate, z}};
}

// _QwenMtpMixin.filter_tensors: the MTP head's decoder layers become layers n_layer + i; its own
// tensors blk.<n_layer>.nextn.* (the names llama.cpp's tensor map gives them).
std::string qwen35_rename(const HfModel& hf, std::string& name) {
    if (!name.starts_with("mtp.")) return "";
    const std::string n = std::to_string(hf.config.n_layer);
    static const std::pair<const char*, const char*> own[] = {{"mtp.fc.weight", "nextn.eh_proj.weight"},
                                                              {"mtp.pre_fc_norm_embedding.weight", "nextn.enorm.weight"},
                                                              {"mtp.pre_fc_norm_hidden.weight", "nextn.hnorm.weight"},
                                                              {"mtp.norm.weight", "nextn.shared_head_norm.weight"}};
    for (const auto& [from, to] : own)
        if (name == from) return "blk." + n + "." + to;
    size_t i = 11, j = i;  // "mtp.layers.<i>."
    if (name.starts_with("mtp.layers.")) {
        while (j < name.size() && j - i < 3 && name[j] >= '0' && name[j] <= '9') ++j;
        if (j > i && j < name.size() && name[j] == '.') {
            const int layer = std::stoi(name.substr(i, j - i));
            if (layer < hf.config.n_nextn) {
                name = "model.layers." + std::to_string(hf.config.n_layer + layer) + name.substr(j);
                return "";
            }
        }
    }
    throw ModelError(hf.weights.string() + ": tensor '" + name + "' is not part of the MTP head as journey converts it");
}
// ---- end of issue 35's hooks

void gemma2_vocab(GgufWriter& w) { w.set_bool("tokenizer.ggml.add_space_prefix", false); }  // Gemma2Model.set_vocab

const ConverterHook hooks[] = {
    {Arch::gpt2, gpt2_keys},
    {Arch::llama, llama_keys, llama_permute_qk, nullptr, false, true},
    {Arch::qwen2, text_model_keys, nullptr, nullptr, false, true},
    {Arch::qwen3, text_model_keys, nullptr, nullptr, false, true},
    {Arch::phi3, phi3_keys},
    {Arch::gemma2, gemma2_keys, nullptr, gemma2_vocab},
    {Arch::qwen3moe, qwen3moe_keys, nullptr, nullptr, true},
    {Arch::gpt_oss, gpt_oss_keys, nullptr, nullptr, true},
    {Arch::gemma3, gemma3_keys, nullptr, gemma2_vocab, false, true},
    {Arch::gptneox, gptneox_keys, gptneox_qkv},
    // issue 36: SmolLM3Model is LlamaModel (llama.cpp hard-codes its NoPE step: convert_hf.cpp checks it)
    {Arch::smollm3, llama_keys, llama_permute_qk, nullptr, false, true},
    // issue 36: GraniteModel is LlamaModel (q/k permuted) with its multipliers; Olmo2Model is TextModel
    {Arch::granite, granite_keys, llama_permute_qk, nullptr, false, true},
    {Arch::olmo2, text_model_keys, nullptr, nullptr, false, true},
    // issue 35: Qwen3_5TextModel, from its Qwen3_5ForConditionalGeneration checkpoint (MTP head included)
    {Arch::qwen35, qwen35_keys, qwen35_tensor, nullptr, false, false, qwen35_rename, true},
    // issue 36: Gemma4Model, from its Gemma4ForConditionalGeneration checkpoint (text model only)
    {Arch::gemma4, gemma4_keys, nullptr, gemma4_vocab, false, false, nullptr, true},
    // Qwen3_5MoeTextModel: the same class chain (Qwen2MoeModel writes the experts' keys and splits
    // the fused gate_up_proj: experts.cpp), from its Qwen3_5MoeForConditionalGeneration checkpoint
    {Arch::qwen35moe, qwen35_keys, qwen35_tensor, nullptr, false, false, qwen35_rename, true},
    // issue 34's other MoE families: MixtralForCausalLM (LlamaModel: q/k permuted) and OlmoeModel
    {Arch::mixtral, mixtral_keys, llama_permute_qk, nullptr, false, true},
    {Arch::olmoe, olmoe_keys},
    // issue 36: Mistral3Model (Ministral3Model = LlamaModel: q/k permuted), from its
    // Mistral3ForConditionalGeneration checkpoint (text model only) or a Ministral3ForCausalLM one
    {Arch::mistral3, mistral3_keys, llama_permute_qk, nullptr, true, false, nullptr, true},
    // issue 35: Qwen3NextModel (its in_proj_qkvz split in two; in_proj_ba kept fused), MTP head included
    {Arch::qwen3next, qwen3next_keys, qwen3next_tensor, nullptr, false, false, qwen35_rename, false, qwen3next_split},
};

}  // namespace

const ConverterHook* converter_hook(Arch a) {
    for (const ConverterHook& h : hooks)
        if (h.arch == a) return &h;
    return nullptr;
}

}  // namespace journey
