// llama-quantize's per-tensor type choice (see quantize_plan.h), for the file types journey
// writes: the dense ones, the legacy 32-blocks and the K-quant mixes (no IQ types), with its rules
// for mixtures of experts (routers kept, attention raised for 8 experts).
#include "journey/convert/quantize_plan.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "journey/errors.h"
#include "journey/formats/ggml_types.h"
#include "journey/kernels/blocks/quantize.h"

namespace journey {
namespace {

using D = DType;
const QuantTarget kTargets[] = {
    {"F32", 0, D::F32},      {"F16", 1, D::F16},       {"BF16", 32, D::BF16},    {"Q8_0", 7, D::Q8_0},
    {"Q4_0", 2, D::Q4_0},    {"Q4_1", 3, D::Q4_1},     {"Q5_0", 8, D::Q5_0},     {"Q5_1", 9, D::Q5_1},
    {"Q2_K", 10, D::Q2_K},   {"Q3_K_S", 11, D::Q3_K},  {"Q3_K_M", 12, D::Q3_K},  {"Q3_K_L", 13, D::Q3_K},
    {"Q4_K_S", 14, D::Q4_K}, {"Q4_K_M", 15, D::Q4_K},  {"Q5_K_S", 16, D::Q5_K},  {"Q5_K_M", 17, D::Q5_K},
    {"Q6_K", 18, D::Q6_K},
};

enum class Cat { output, token_embd, attn_qkv, attn_v, attn_k, attn_q, attn_output, ffn_up, ffn_gate, ffn_down, other };

bool has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

Cat category(const std::string& name) {
    if (name == "output.weight") return Cat::output;
    if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") return Cat::token_embd;
    if (has(name, "attn_qkv.weight")) return Cat::attn_qkv;
    if (has(name, "attn_v.weight")) return Cat::attn_v;
    if (has(name, "attn_k.weight")) return Cat::attn_k;
    if (has(name, "attn_q.weight")) return Cat::attn_q;
    if (has(name, "attn_output.weight")) return Cat::attn_output;
    if (has(name, "ffn_up")) return Cat::ffn_up;
    if (has(name, "ffn_gate")) return Cat::ffn_gate;
    if (has(name, "ffn_down")) return Cat::ffn_down;
    return Cat::other;
}
bool is_attn_v(Cat c) { return c == Cat::attn_v || c == Cat::attn_qkv; }

// llama-quantize quantizes 2-D weights only, never norms or learned positions.
bool quantizable(const PlanTensor& t) {
    const std::string& n = t.name;
    if (t.shape.size() < 2) return false;
    if (n.size() < 6 || n.compare(n.size() - 6, 6, "weight") != 0) return false;
    if (has(n, "_norm.weight")) return false;
    if (n == "position_embd.weight" || n == "token_types.weight") return false;
    if (has(n, "ffn_gate_inp.weight")) return false;  // the experts' router
    if (has(n, "ssm_conv1d")) return false;            // a linear-attention layer's small conv (Qwen3.5, Mamba)
    return true;
}

bool is_quantized(DType t) { return dtype_block(t) > 1; }

int layer_of(const std::string& name) {
    int layer = -1;
    std::sscanf(name.c_str(), "blk.%d.", &layer);
    return layer;
}

}  // namespace

const QuantTarget* find_quant_target(std::string_view name) {
    std::string up(name);
    for (char& c : up) c = char(std::toupper(static_cast<unsigned char>(c)));
    for (const QuantTarget& t : kTargets)
        if (up == t.name) return &t;
    return nullptr;
}

std::string quant_target_names() {
    std::string s;
    for (const QuantTarget& t : kTargets) s += (s.empty() ? "" : ", ") + std::string(t.name);
    return s;
}

void sort_like_llama_quantize(std::vector<PlanTensor>& tensors) {
    std::stable_sort(tensors.begin(), tensors.end(), [](const PlanTensor& a, const PlanTensor& b) {
        const int la = layer_of(a.name), lb = layer_of(b.name);
        return la != lb ? la < lb : a.name < b.name;
    });
}

std::vector<DType> plan_types(const QuantTarget& target, const PlanModel& model, const std::vector<PlanTensor>& tensors) {
    const std::string_view f = target.name;
    const bool is_70b = model.arch == "llama" && model.n_layer == 80;  // llama.cpp's LLM_TYPE_70B rule
    const int64_t n_gqa = model.n_head_kv > 0 ? model.n_head / model.n_head_kv : 1;
    const bool eight_experts = model.n_expert == 8;  // llama-quantize's "8-expert model" bumps
    auto use_more_bits = [](int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; };

    int64_t n_attention_wv = 0, i_attention_wv = 0, i_ffn_down = 0;
    bool tied = true;
    for (const PlanTensor& t : tensors) {
        const Cat c = category(t.name);
        if (is_attn_v(c)) ++n_attention_wv;
        if (c == Cat::output) tied = false;
    }
    const int64_t n_layer = model.n_layer;

    std::vector<DType> out;
    for (const PlanTensor& t : tensors) {
        if (!quantizable(t)) {
            out.push_back(t.type);
            continue;
        }
        DType type = target.base;
        if (!is_quantized(type)) {
            out.push_back(type);
            continue;
        }
        const Cat c = category(t.name);
        const int64_t nx = t.shape.back();
        if (c == Cat::output || (tied && c == Cat::token_embd)) {
            if (nx % int64_t(dtype_block(type)) != 0) type = D::Q8_0;
            else if (type != D::Q8_0) type = D::Q6_K;
        } else if (c == Cat::token_embd) {
            // no change for these file types
        } else if (is_attn_v(c)) {
            if (f == "Q2_K") type = n_gqa >= 4 ? D::Q4_K : D::Q3_K;
            else if (f == "Q3_K_M") type = i_attention_wv < 2 ? D::Q5_K : D::Q4_K;
            else if (f == "Q3_K_L") type = D::Q5_K;
            else if ((f == "Q4_K_M" || f == "Q5_K_M") && use_more_bits(i_attention_wv, n_attention_wv)) type = D::Q6_K;
            else if (f == "Q4_K_S" && i_attention_wv < 4) type = D::Q5_K;
            if (is_70b && (type == D::Q3_K || type == D::Q4_K)) type = D::Q5_K;
            if (eight_experts) type = D::Q8_0;
            ++i_attention_wv;
        } else if (c == Cat::attn_k) {
            if (eight_experts) type = D::Q8_0;
        } else if (c == Cat::ffn_down) {
            const int64_t i = i_ffn_down;
            if (f == "Q2_K") type = D::Q3_K;
            else if (f == "Q3_K_M") type = i < n_layer / 16 ? D::Q5_K : D::Q4_K;  // (not Falcon)
            else if (f == "Q3_K_L") type = D::Q5_K;
            else if (f == "Q4_K_M") {
                if (use_more_bits(i, n_layer)) type = D::Q6_K;
            } else if (f == "Q5_K_M" && use_more_bits(i, n_layer)) type = D::Q6_K;
            else if (f == "Q4_K_S" && i < n_layer / 8) type = D::Q5_K;
            ++i_ffn_down;
        } else if (c == Cat::attn_output && eight_experts) {
            if (f == "Q2_K" || f == "Q3_K_S" || f == "Q3_K_M" || f == "Q4_K_S" || f == "Q4_K_M") type = D::Q5_K;
        } else if (c == Cat::attn_output) {
            if (f == "Q2_K") type = D::Q3_K;
            else if (f == "Q3_K_M") type = D::Q4_K;
            else if (f == "Q3_K_L") type = D::Q5_K;
        }
        // A row that is not a whole number of blocks falls back to a smaller block.
        if (nx % int64_t(dtype_block(type)) != 0) {
            switch (type) {
                case D::Q2_K: case D::Q3_K: type = D::Q4_0; break;
                case D::Q4_K: type = D::Q5_0; break;
                case D::Q5_K: type = D::Q5_1; break;
                case D::Q6_K: type = D::Q8_0; break;
                default: break;
            }
            if (nx % int64_t(dtype_block(type)) != 0) type = D::F16;
        }
        out.push_back(type);
    }
    return out;
}

std::vector<OutTensor> plan_quantized(const std::vector<OutTensor>& tensors, const QuantTarget& target, const PlanModel& model) {
    std::vector<PlanTensor> plan;
    for (const OutTensor& t : tensors) plan.push_back({t.name, t.shape, t.type});
    sort_like_llama_quantize(plan);
    const std::vector<DType> types = plan_types(target, model, plan);
    std::vector<OutTensor> out;
    for (size_t i = 0; i < plan.size(); ++i)
        for (const OutTensor& t : tensors)
            if (t.name == plan[i].name) {
                OutTensor o = t;
                if (types[i] != t.type) {
                    if (!can_quantize(types[i]))
                        throw UsageError("tensor '" + t.name + "': journey cannot encode " + std::string(dtype_name(types[i])));
                    o.raw = nullptr;
                    o.type = types[i];
                }
                out.push_back(std::move(o));
            }
    return out;
}

void set_file_type(GgufWriter& w, const QuantTarget& target) {
    w.remove("general.quantization_version");
    w.remove("general.file_type");
    w.set_u32("general.quantization_version", 2);
    w.set_u32("general.file_type", target.ftype);
}

}  // namespace journey
