// journey info: what a model is: architecture, shape, dtype, size, file format, tokenizer.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "journey/errors.h"
#include "journey/chat/chat_format.h"
#include "common.h"
#include "journey/text/token_display.h"
#include "model_options.h"
#include "journey/model/session.h"

namespace journey::cli {
namespace {

struct InfoOptions {
    ModelOptions model;
    bool json = false;
};

std::string human_count(int64_t n) {
    char buf[32];
    if (n >= 1'000'000'000) std::snprintf(buf, sizeof buf, "%.2fB", double(n) / 1e9);
    else if (n >= 1'000'000) std::snprintf(buf, sizeof buf, "%.2fM", double(n) / 1e6);
    else if (n >= 1'000) std::snprintf(buf, sizeof buf, "%.2fK", double(n) / 1e3);
    else std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(n));
    return buf;
}

// What the config asks for beyond the plain block, and what is deliberately not applied with
// the context in use (a sliding window at least as long as the context changes nothing).
std::vector<std::string> notes(const ModelConfig& c, int n_ctx) {
    std::vector<std::string> n;
    auto num = [](double v) {
        char b[32];
        std::snprintf(b, sizeof b, "%g", v);
        return std::string(b);
    };
    const std::string layers_note = c.rope_local_theta > 0 ? " on the global layers" : "";
    switch (c.rope_scaling) {
        case RopeScaling::none: break;
        case RopeScaling::dynamic:
            n.push_back("rope scaling dynamic (factor " + num(c.rope_factor) + "): changes nothing within the model's context");
            break;
        case RopeScaling::yarn:
            n.push_back("rope scaling yarn (factor " + num(c.rope_factor) + ", original context " + std::to_string(c.rope_original_ctx) +
                        ", beta_fast " + num(c.rope_beta_fast) + ", beta_slow " + num(c.rope_beta_slow) + ", attention factor " +
                        num(c.rope_mscale) + ")" + layers_note);
            break;
        case RopeScaling::longrope:
            n.push_back("rope scaling longrope (original context " + std::to_string(c.rope_original_ctx) + ", attention factor " +
                        num(c.rope_mscale) + "): " +
                        (c.longrope_long(n_ctx) ? "long factors, the context in use " + std::to_string(n_ctx) +
                                                      " exceeds it (padded to a multiple of 256, as llama.cpp compares)"
                                                : "short factors (the long ones are ignored: the context in use " +
                                                      std::to_string(n_ctx) + ", padded to a multiple of 256 as llama.cpp does, "
                                                      "does not exceed it; -c chooses)"));
            break;
        default:
            n.push_back("rope scaling " + std::string(rope_scaling_name(c.rope_scaling)) + " (factor " + num(c.rope_factor) + ")" + layers_note);
    }
    if (c.rope_local_theta > 0)
        n.push_back("sliding layers rotate with their own base " + num(c.rope_local_theta) + " (unscaled), the others with " + num(c.rope_theta));
    if (c.n_rot > 0 && c.n_rot < c.head_dim)
        n.push_back("partial rotary: " + std::to_string(c.n_rot) + " of " + std::to_string(c.head_dim) + " dimensions per head");
    if (!c.no_rope_layers.empty()) {
        std::string layers;
        for (int l = 0; l < c.n_layer; ++l)
            if (!c.rotates(l)) layers += (layers.empty() ? "" : ",") + std::to_string(l);
        n.push_back("no rope (NoPE) on layers " + layers);
    }
    if (c.parallel_residual) n.push_back("parallel residual: x + attn(ln1(x)) + mlp(ln2(x))");
    if (c.sliding_window > 0) {
        std::string layers;
        for (int l = 0; l < c.n_layer; ++l)
            if (c.window_of(l) > 0) layers += (layers.empty() ? "" : ",") + std::to_string(l);
        n.push_back("sliding window " + std::to_string(c.sliding_window) + " on layers " + layers +
                    (c.sliding_window >= n_ctx ? ": not reached, the context in use is " + std::to_string(n_ctx) +
                                                     " (ignored; applied when -c exceeds it)"
                                               : ": applied"));
    }
    if (c.attn_softcap > 0) n.push_back("attention soft-cap " + std::to_string(c.attn_softcap));
    if (c.n_recurrent() > 0) {  // a hybrid (Qwen3.5)
        n.push_back("hybrid: " + std::to_string(c.n_recurrent()) + " Gated DeltaNet layers (" + std::to_string(c.ssm_k_heads) +
                    " key / " + std::to_string(c.ssm_v_heads) + " value heads of " + std::to_string(c.ssm_head_dim) +
                    ", conv " + std::to_string(c.ssm_conv) + "), " + std::to_string(c.n_layer - c.n_recurrent()) +
                    " full-attention layers" + (c.attn_output_gate ? " with an output gate" : ""));
        if (!c.rope_sections.empty())
            n.push_back("M-RoPE sections: text positions only (one stream), i.e. NEOX rope on the rotated dimensions; image and video inputs are not supported");
    }
    if (c.n_nextn > 0) n.push_back("MTP head (" + std::to_string(c.n_nextn) + " layer): not run (normal decoding skips it, as llama.cpp)");
    if (c.final_softcap > 0) n.push_back("final logit soft-cap " + std::to_string(c.final_softcap));
    if (c.head_dim_swa > 0 && c.head_dim_swa != c.head_dim)  // Gemma 4
        n.push_back("sliding layers: head_dim " + std::to_string(c.head_dim_swa) + " (the others " + std::to_string(c.head_dim) + ")");
    if (c.n_kv_shared > 0) {
        std::string reads;
        for (int l = c.n_layer - c.n_kv_shared; l < c.n_layer; ++l)
            reads += (reads.empty() ? "" : ", ") + std::to_string(l) + "->" + std::to_string(c.kv_source(l));
        n.push_back("KV-shared layers (read another layer's keys and values, store none): " + reads);
    }
    if (!c.n_ff_layers.empty() && c.n_ff_layers.front() != c.n_ff)
        n.push_back("MLP width per layer: " + std::to_string(c.n_ff_layers.front()) + ", " + std::to_string(c.n_ff) + " on the widest (double-wide MLP)");
    if (c.n_embd_per_layer > 0)
        n.push_back("per-layer embeddings: " + std::to_string(c.n_embd_per_layer) + " values per layer per token");
    if (c.residual_scale != 1.0f || c.logit_scale != 1.0f)  // Granite
        n.push_back("multipliers: embedding x " + num(c.embed_scale) + ", attention scale " +
                    (c.attn_scale > 0 ? num(c.attn_scale) : "1/sqrt(head_dim)") + ", residual branches x " + num(c.residual_scale) +
                    ", logits / " + num(c.logit_scale));
    if (c.attn_temp_scale != 0.0f)  // Ministral 3
        n.push_back("query temperature: queries x 1 + " + num(c.attn_temp_scale) + " ln(1 + floor(position / " +
                    std::to_string(c.attn_temp_floor) + "))");
    return n;
}

void run_info(const InfoOptions& o) {
    auto m = load_model(o.model, Placement::in_place);  // reads no weights
    const ModelConfig& c = m->config();
    const Session session(*m, session_options(o.model));  // sizes the KV cache: what a run would use
    // The KV cache of the attention layers (a hybrid's recurrent layers keep a fixed state instead).
    const double kv_mib = double(session.kv_bytes_per_token()) * session.n_ctx() / (1024.0 * 1024.0);
    std::vector<std::string> extra = notes(c, session.n_ctx());
    // Every tensor type of the file and how many tensors have it, most first (a quantization
    // mix such as Q4_K_M or IQ3_M is several types): "IQ3_S 11, F32 5, Q4_K 4, Q6_K 1".
    std::map<std::string, int> type_counts;
    for (const auto& entry : m->file().tensors) ++type_counts[std::string(dtype_name(entry.second.dtype))];
    std::vector<std::pair<std::string, int>> by_count(type_counts.begin(), type_counts.end());
    std::stable_sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string types_text;
    nlohmann::json types_json = nlohmann::json::array();
    for (const auto& tc : by_count) {
        types_text += (types_text.empty() ? "" : ", ") + tc.first + " " + std::to_string(tc.second);
        types_json.push_back({{"type", tc.first}, {"count", tc.second}});
    }
    if (m->weights().set_aside > 0 && m->weights().set_aside_what == "MTP head")  // a hybrid GGUF's MTP head
        extra.push_back("MTP head: " + std::to_string(m->weights().set_aside) + " tensors not used");
    else if (m->weights().set_aside > 0)  // a multimodal checkpoint run as its text model
        extra.push_back(m->weights().set_aside_what + ": " + std::to_string(m->weights().set_aside) + " tensors not used; text only");
    nlohmann::json j = {
        {"model", m->source().string()},
        {"format", m->file().format},
        {"arch", std::string(arch_name(c.arch))},
        {"n_layer", c.n_layer},
        {"n_head", c.n_head},
        {"n_kv_head", c.n_kv_head},
        {"head_dim", c.head_dim},
        {"n_embd", c.n_embd},
        {"n_ff", c.n_ff},
        {"n_ctx", c.n_ctx},
        {"ctx_in_use", session.n_ctx()},
        {"kv_type", kv_type_name(session.kv_type())},
        {"kv_mib", kv_mib},
        {"notes", extra},
        {"n_vocab", c.n_vocab},
        {"dtype", std::string(dtype_name(m->weight_dtype()))},
        {"tensor_types", types_json},
        {"n_params", m->n_params()},
        {"tied_output", m->weights().output.data == m->weights().tok_embd.data},
        {"tokenizer", m->tokenizer().kind()},
        {"tokenizer_n_vocab", m->tokenizer().n_vocab()},
    };
    // How a conversation is written and where a reply ends (see journey chat).
    std::string chat_template = "none", end_names;
    try {
        const ChatFormat f = load_chat_format(*m);
        if (f.tmpl) chat_template = f.template_source;
        j["end_tokens"] = f.end_tokens;
        for (TokenId id : f.end_tokens) end_names += (end_names.empty() ? "" : " ") + std::to_string(id) + " " + visible_token(m->tokenizer().token_bytes(id));
    } catch (const ModelError& e) {
        chat_template = std::string("unusable: ") + e.what();
    }
    j["chat_template"] = chat_template;
    // Mixture of experts: how many, how wide, how routed, and what one token reads.
    std::string experts;
    if (c.n_expert > 0) {
        j["n_expert"] = c.n_expert;
        j["n_expert_used"] = c.n_expert_used;
        j["n_ff_exp"] = c.n_ff_exp;
        j["n_active_params"] = m->weights().n_active_params();
        const std::string k = std::to_string(c.n_expert_used);
        j["moe_routing"] = c.moe_gating == MoeGating::topk_softmax ? "top-" + k + " logits, then softmax"
                           : "softmax, then top-" + k + (c.moe_norm_topk ? " renormalised" : "");
        experts = std::to_string(c.n_expert) + " per layer, " + k + " per token (width " + std::to_string(c.n_ff_exp) +
                  "; routing: " + std::string(j["moe_routing"]) + ")";
    }
    std::string layer_kinds;
    if (c.n_kv_shared > 0 || c.head_dim_swa > 0) {  // Gemma 4: the real cache per token (shared layers store none)
        j["kv_bytes_per_token"] = session.kv_bytes_per_token();
        j["n_kv_shared"] = c.n_kv_shared;
    }
    if (c.n_recurrent() > 0) {
        for (int l = 0; l < c.n_layer; ++l) layer_kinds += c.is_recurrent(l) ? 'L' : 'A';
        j["layer_kinds"] = layer_kinds;  // L: linear attention (Gated DeltaNet), A: full attention
        j["kv_bytes_per_token"] = session.kv_bytes_per_token();
        j["state_bytes"] = session.state_bytes();
    }
    if (o.json) return out_line(json_text(j));
    auto row = [](const char* k, const std::string& v) { out_line(std::string(k) + std::string(12 - std::string(k).size(), ' ') + v); };
    row("model", j["model"]);
    row("format", j["format"]);
    row("arch", j["arch"]);
    row("layers", std::to_string(c.n_layer));
    row("heads", std::to_string(c.n_head) + " (kv " + std::to_string(c.n_kv_head) + ", head_dim " + std::to_string(c.head_dim) + ")");
    row("width", std::to_string(c.n_embd) + (c.n_expert > 0 ? " (mlp: experts)" : " (mlp " + std::to_string(c.n_ff) + ")"));
    if (!experts.empty()) row("experts", experts);
    if (!layer_kinds.empty()) {
        row("layer kinds", layer_kinds + " (L: Gated DeltaNet, A: full attention)");
        row("memory", std::to_string(session.kv_bytes_per_token()) + " bytes per token (KV cache) + " +
                          std::to_string(session.state_bytes()) + " bytes of recurrent state (fixed)");
    }
    if (layer_kinds.empty() && j.contains("kv_bytes_per_token"))
        row("memory", std::to_string(session.kv_bytes_per_token()) + " bytes per token (KV cache of the " +
                          std::to_string(c.n_layer - c.n_kv_shared) + " layers computing keys and values)");
    char kv[64];
    std::snprintf(kv, sizeof kv, "%.1f MiB", kv_mib);
    row("context", std::to_string(c.n_ctx) + " (in use: " + std::to_string(session.n_ctx()) + ", KV cache " +
                       std::string(j["kv_type"]) + " " + kv + "; -c N to change)");
    row("vocab", std::to_string(c.n_vocab));
    row("dtype", j["dtype"]);
    row("types", types_text);  // every tensor type of the file
    row("parameters", human_count(m->n_params()) + " (" + std::to_string(m->n_params()) + ")");
    if (c.n_expert > 0) {
        const int64_t a = m->weights().n_active_params();
        row("active", human_count(a) + " (" + std::to_string(a) + ") per token");
    }
    for (const std::string& n : extra) row("note", n);
    row("tokenizer", m->tokenizer().kind() + " (" + std::to_string(m->tokenizer().n_vocab()) + " tokens)");
    row("chat", chat_template);
    row("end tokens", end_names.empty() ? "none" : end_names);
}

}  // namespace

void register_info(CLI::App& app) {
    auto opts = std::make_shared<InfoOptions>();
    CLI::App* cmd = app.add_subcommand("info", "Describe a model: architecture, shape, dtype, size, tokenizer");
    add_model_options(cmd, opts->model);
    cmd->add_flag("--json", opts->json, "Print one JSON object");
    cmd->callback([opts] { run_info(*opts); });
}

}  // namespace journey::cli
