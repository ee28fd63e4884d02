// llama-quantize's per-tensor type choice (see quantize_plan.h), for the file types journey
// writes: the dense ones, the legacy 32-blocks, the K-quant mixes, the i-quant mixes (IQ1_S …
// IQ4_XS) and the ternary ones, with and without an importance matrix, with its rules for mixtures of experts
// (routers kept, attention raised for 8 experts; MXFP4_MOE: the stacked experts MXFP4, the other
// matrices Q8_0).
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
    {"Q6_K", 18, D::Q6_K},    {"Q2_K_S", 21, D::Q2_K},  {"IQ2_XXS", 19, D::IQ2_XXS}, {"IQ2_XS", 20, D::IQ2_XS},
    {"IQ3_XS", 22, D::IQ3_S}, {"IQ3_XXS", 23, D::IQ3_XXS}, {"IQ1_S", 24, D::IQ1_S}, {"IQ3_S", 26, D::IQ3_S},
    {"IQ3_M", 27, D::IQ3_S},  {"IQ2_S", 28, D::IQ2_XS},  {"IQ2_M", 29, D::IQ2_S},   {"IQ1_M", 31, D::IQ1_M},
    {"IQ4_NL", 25, D::IQ4_NL}, {"IQ4_XS", 30, D::IQ4_XS}, {"TQ1_0", 36, D::TQ1_0},  {"TQ2_0", 37, D::TQ2_0},
    {"MXFP4_MOE", 38, D::MXFP4},
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
    // ggml_n_dims: outer dimensions of 1 do not count (Qwen3.5-MoE's shared-expert gate [1, C] is 1-D)
    size_t dims = t.shape.size();
    while (dims > 1 && t.shape[t.shape.size() - dims] == 1) --dims;
    if (dims < 2) return false;
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
    auto is = [&f](std::initializer_list<std::string_view> names) {
        for (std::string_view n : names)
            if (f == n) return true;
        return false;
    };
    const bool is_70b = model.arch == "llama" && model.n_layer == 80;  // llama.cpp's LLM_TYPE_70B rule
    const int64_t n_gqa = model.n_head_kv > 0 ? model.n_head / model.n_head_kv : 1;
    const bool eight_experts = model.n_expert == 8;  // llama-quantize's "8-expert model" bumps
    const bool imatrix = model.has_imatrix;
    auto use_more_bits = [](int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; };
    // the very low-bit mixes (llama.cpp's IQ2_XXS/IQ2_XS/IQ1_S/IQ2_S/IQ2_M/IQ1_M branch)
    const bool iq_low = is({"IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M"});
    const bool iq2s = is({"IQ2_S", "IQ2_M"}), iq1 = is({"IQ1_S", "IQ1_M"});

    int64_t n_attention_wv = 0, i_attention_wv = 0, i_ffn_down = 0, i_ffn_gate = 0, i_ffn_up = 0;
    bool tied = true;
    for (const PlanTensor& t : tensors) {
        const Cat c = category(t.name);
        if (is_attn_v(c)) ++n_attention_wv;
        if (c == Cat::output) tied = false;
    }
    const int64_t n_layer = model.n_layer;
    // a mixture of experts: the layer from the tensor's name (llama.cpp's layer_info)
    auto layer = [&](int64_t counter, const std::string& name) { return model.n_expert > 1 ? int64_t(layer_of(name)) : counter; };

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
            if (f == "MXFP4_MOE" || nx % int64_t(dtype_block(type)) != 0) type = D::Q8_0;
            else if (iq_low || f == "IQ3_XXS") type = D::Q5_K;
            else if (type != D::Q8_0) type = D::Q6_K;
        } else if (f == "MXFP4_MOE") {  // the experts' stacked tensors MXFP4, every other matrix Q8_0
            type = t.shape.size() >= 3 && t.shape[t.shape.size() - 3] > 1 ? D::MXFP4 : D::Q8_0;
        } else if (c == Cat::token_embd) {
            if (is({"IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ1_M"})) type = D::Q2_K;
            else if (iq2s || f == "IQ3_XXS") type = D::IQ3_S;
            else if (is({"TQ1_0", "TQ2_0"})) type = D::Q4_K;
        } else if (iq_low) {
            if (is_attn_v(c)) {
                if (n_gqa >= 4 || model.n_expert >= 4) type = D::Q4_K;
                else type = iq2s ? D::IQ3_S : D::Q2_K;
                ++i_attention_wv;
            } else if (eight_experts && c == Cat::attn_k) {
                type = D::Q4_K;
            } else if (c == Cat::ffn_down) {
                if (i_ffn_down < n_layer / 8) type = iq2s ? D::IQ3_S : D::Q2_K;
                ++i_ffn_down;
            } else if (c == Cat::attn_output) {
                if (eight_experts) type = D::Q5_K;
                else if (iq1) type = D::IQ2_XXS;
                else if (iq2s) type = D::IQ3_S;
            }
        } else if (is_attn_v(c)) {
            if (f == "Q2_K") type = n_gqa >= 4 ? D::Q4_K : D::Q3_K;
            else if (f == "Q2_K_S" && n_gqa >= 4) type = D::Q4_K;
            else if (f == "IQ3_XXS") type = n_gqa >= 4 ? D::Q4_K : !imatrix ? D::IQ3_S : D::IQ3_XXS;
            else if (is({"IQ3_XS", "IQ3_S"}) && n_gqa >= 4) type = D::Q4_K;
            else if (f == "IQ3_M") type = D::Q4_K;
            else if (f == "Q3_K_M") type = i_attention_wv < 2 ? D::Q5_K : D::Q4_K;
            else if (f == "Q3_K_L") type = D::Q5_K;
            else if (is({"IQ4_NL", "IQ4_XS"}) && n_gqa >= 4) type = D::Q5_K;
            else if ((f == "Q4_K_M" || f == "Q5_K_M") && use_more_bits(i_attention_wv, n_attention_wv)) type = D::Q6_K;
            else if (f == "Q4_K_S" && i_attention_wv < 4) type = D::Q5_K;
            if (is_70b && (type == D::Q3_K || type == D::Q4_K)) type = D::Q5_K;
            if (eight_experts) type = D::Q8_0;
            ++i_attention_wv;
        } else if (c == Cat::attn_k) {
            if (eight_experts) type = D::Q8_0;
            else if (f == "IQ3_XS") type = D::IQ3_XXS;
            else if (f == "IQ3_XXS") type = D::IQ2_S;
        } else if (c == Cat::attn_q) {
            if (f == "IQ3_XS") type = D::IQ3_XXS;
            else if (f == "IQ3_XXS") type = D::IQ2_S;
        } else if (c == Cat::ffn_down) {
            const int64_t i = layer(i_ffn_down, t.name);
            if (f == "Q2_K") type = D::Q3_K;
            else if (f == "Q2_K_S") {
                if (i < n_layer / 8) type = D::Q4_K;
            } else if (f == "IQ3_XXS" && !imatrix) type = i < n_layer / 8 ? D::Q4_K : D::Q3_K;
            else if (f == "Q3_K_M") type = i < n_layer / 16 ? D::Q5_K : D::Q4_K;  // (not Falcon)
            else if (f == "IQ3_M" && (i < n_layer / 8 || (eight_experts && use_more_bits(i, n_layer)))) type = D::Q4_K;
            else if (f == "Q3_K_L") type = D::Q5_K;
            else if (f == "Q4_K_M") {
                if (use_more_bits(i, n_layer)) type = D::Q6_K;
            } else if (is({"IQ4_NL", "IQ4_XS"}) && !imatrix && i < n_layer / 8) type = D::Q5_K;
            else if (f == "Q5_K_M" && use_more_bits(i, n_layer)) type = D::Q6_K;
            else if (f == "Q4_K_S" && i < n_layer / 8) type = D::Q5_K;
            else if ((f == "Q4_0" || f == "Q5_0") && imatrix && i < n_layer / 8) type = f == "Q4_0" ? D::Q4_1 : D::Q5_1;
            ++i_ffn_down;
        } else if (c == Cat::attn_output && eight_experts) {
            if (is({"Q2_K", "IQ3_XS", "IQ3_XXS", "Q3_K_S", "Q3_K_M", "Q4_K_S", "Q4_K_M", "IQ3_S", "IQ3_M", "IQ4_NL", "IQ4_XS"}))
                type = D::Q5_K;
        } else if (c == Cat::attn_output) {
            if (f == "Q2_K") type = D::Q3_K;
            else if (f == "IQ3_XXS") type = D::IQ3_S;
            else if (f == "Q3_K_M") type = D::Q4_K;
            else if (f == "Q3_K_L") type = D::Q5_K;
            else if (f == "IQ3_M") type = D::Q4_K;
        } else if (c == Cat::ffn_gate || c == Cat::ffn_up) {
            int64_t& counter = c == Cat::ffn_gate ? i_ffn_gate : i_ffn_up;
            const int64_t i = layer(counter, t.name);
            if (f == "IQ3_XS" && i >= n_layer / 8 && i < 7 * n_layer / 8) type = D::IQ3_XXS;
            ++counter;
        }
        // A row that is not a whole number of blocks falls back to a smaller block.
        if (nx % int64_t(dtype_block(type)) != 0) {
            switch (type) {
                case D::IQ1_S: case D::IQ1_M: case D::IQ2_XXS: case D::IQ2_XS: case D::IQ2_S: case D::IQ3_XXS:
                case D::IQ3_S: case D::IQ4_XS: type = D::IQ4_NL; break;
                case D::Q2_K: case D::Q3_K: case D::TQ1_0: case D::TQ2_0: type = D::Q4_0; break;
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

bool requires_imatrix(const QuantTarget& target, const std::string& name, DType type) {
    const Cat c = category(name);
    if (c == Cat::token_embd || c == Cat::output) return false;
    switch (type) {
        case D::IQ3_XXS: case D::IQ2_XXS: case D::IQ2_XS: case D::IQ2_S: case D::IQ1_M: case D::IQ1_S: return true;
        case D::Q2_K: return target.name == std::string_view("Q2_K_S");
        default: return false;
    }
}

std::vector<OutTensor> plan_quantized(const std::vector<OutTensor>& tensors, const QuantTarget& target, const PlanModel& model,
                                      const Imatrix* imatrix) {
    std::vector<PlanTensor> plan;
    for (const OutTensor& t : tensors) plan.push_back({t.name, t.shape, t.type});
    sort_like_llama_quantize(plan);
    PlanModel m = model;
    m.has_imatrix = imatrix != nullptr;
    const std::vector<DType> types = plan_types(target, m, plan);
    // llama-quantize refuses before any work when a tensor needs an importance matrix
    if (!imatrix)
        for (size_t i = 0; i < plan.size(); ++i)
            if (types[i] != plan[i].type && requires_imatrix(target, plan[i].name, types[i]))
                throw UsageError(std::string(target.name) + " requires an importance matrix (--imatrix FILE): tensor '" +
                                 plan[i].name + "' would be " + std::string(dtype_name(types[i])));
    std::vector<OutTensor> out;
    for (size_t i = 0; i < plan.size(); ++i)
        for (const OutTensor& t : tensors)
            if (t.name == plan[i].name) {
                OutTensor o = t;
                // llama-quantize writes ggml_n_dims dimensions: outer ones of 1 dropped ([1, C] -> [C])
                while (o.shape.size() > 1 && o.shape.front() == 1) o.shape.erase(o.shape.begin());
                if (types[i] != t.type) {
                    o.raw = nullptr;
                    o.type = types[i];
                    if (imatrix) {
                        const int64_t n_mat = t.shape.size() >= 3 ? t.shape[t.shape.size() - 3] : 1;
                        std::vector<float> w = imatrix->weights_of(t.name);
                        const bool embd = category(t.name) == Cat::token_embd;
                        if (!w.empty() && int64_t(w.size()) != n_mat * t.shape.back()) {
                            if (!embd)
                                throw UsageError("--imatrix: its entry for '" + t.name + "' has " + std::to_string(w.size()) +
                                                 " values; the tensor needs " + std::to_string(n_mat * t.shape.back()));
                            w.clear();
                        }
                        if (w.empty() && requires_imatrix(target, t.name, types[i]))
                            throw UsageError("--imatrix: no importance matrix for tensor '" + t.name + "', which " +
                                             std::string(target.name) + " makes " + std::string(dtype_name(types[i])));
                        o.imatrix = std::move(w);
                    }
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
