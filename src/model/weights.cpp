// Binding named tensors to the weight views: the architecture's row (arch.h) says which tensors
// its block reads and their Hugging Face names, its tensor table their GGUF names and shapes; the
// role table here gives the field each binds.
#include "journey/model/weights.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <variant>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#include "journey/kernels/to_float.h"
#include "journey/kernels/blocks/dot.h"
#include "journey/kernels/thread_pool.h"
#include "journey/errors.h"

namespace journey {
namespace {

// A symbolic size of arch.h's tensor table, resolved against the config.
int64_t size_of(Dim d, const ModelConfig& c) {
    const int64_t HD = int64_t{c.n_head} * c.head_dim, KD = int64_t{c.n_kv_head} * c.head_dim;
    switch (d) {
        case Dim::C: return c.n_embd;
        case Dim::QKV: return HD + 2 * KD;
        case Dim::F: return c.n_ff;
        case Dim::F2: return 2 * int64_t{c.n_ff};
        case Dim::V: return c.n_vocab;
        case Dim::Ctx: return c.n_ctx;
        case Dim::HD: return HD;
        case Dim::KD: return KD;
        case Dim::D: return c.head_dim;
        case Dim::D2: return c.rot_dims() / 2;
        case Dim::H: return c.n_head;
        case Dim::E: return c.n_expert;
        case Dim::FE: return c.n_ff_exp;
        case Dim::FE2: return 2 * int64_t{c.n_ff_exp};
        case Dim::FS: return c.n_ff_shexp;
        case Dim::HD2: return 2 * HD;
        case Dim::SQKV: return c.ssm_channels();
        case Dim::SV: return int64_t{c.ssm_v_heads} * c.ssm_head_dim;
        case Dim::HV: return c.ssm_v_heads;
        case Dim::DV: return c.ssm_head_dim;
        case Dim::K4: return c.ssm_conv;
        case Dim::SQKVZ: return c.ssm_channels() + int64_t{c.ssm_v_heads} * c.ssm_head_dim;
        case Dim::HV2: return 2 * int64_t{c.ssm_v_heads};
        case Dim::PL: return c.n_embd_per_layer;
        case Dim::LP: return int64_t{c.n_embd_per_layer} * c.n_layer;
        case Dim::One: return 1;
    }
    return 0;
}

// The field each tensor of the architecture table binds (its GGUF name and shape: arch.h's gguf_tensor).
using Field = std::variant<Matrix Weights::*, Vector Weights::*, Matrix LayerWeights::*, Vector LayerWeights::*>;
struct Role {
    Tensor tensor;
    Field field;
};

using enum Tensor;
using W = Weights;
using L = LayerWeights;
const Role roles[] = {
    {tok_embd, &W::tok_embd},
    {pos_embd, &W::pos_embd},
    {output_norm, &W::final_norm_w},
    {output_norm_b, &W::final_norm_b},
    {output, &W::output},
    {rope_freqs, &W::rope_freqs},
    {rope_factors_long, &W::rope_long},
    {rope_factors_short, &W::rope_short},
    {attn_norm, &L::attn_norm_w},
    {attn_norm_b, &L::attn_norm_b},
    {attn_qkv, &L::attn_qkv},
    {attn_qkv_b, &L::attn_qkv_b},
    {attn_q, &L::attn_q},
    {attn_q_b, &L::attn_q_b},
    {attn_k, &L::attn_k},
    {attn_k_b, &L::attn_k_b},
    {attn_v, &L::attn_v},
    {attn_v_b, &L::attn_v_b},
    {attn_q_norm, &L::attn_q_norm},
    {attn_k_norm, &L::attn_k_norm},
    {attn_q_norm_full, &L::attn_q_norm},  // OLMo 2, OLMoE: the forward pass reads the width off the vector
    {attn_k_norm_full, &L::attn_k_norm},
    {attn_out, &L::attn_out},
    {attn_out_b, &L::attn_out_b},
    {attn_post_norm, &L::attn_post_norm},
    {ffn_norm, &L::mlp_norm_w},
    {ffn_norm_b, &L::mlp_norm_b},
    {ffn_up, &L::mlp_up},
    {ffn_up_b, &L::mlp_up_b},
    {ffn_gate, &L::mlp_gate},
    {ffn_gate_up, &L::mlp_gate_up},
    {ffn_down, &L::mlp_down},
    {ffn_down_b, &L::mlp_down_b},
    {ffn_post_norm, &L::mlp_post_norm},
    // Mixture of experts (the experts themselves: expert_roles below).
    {attn_sinks, &L::attn_sinks},
    {ffn_norm_post_attn, &L::mlp_norm_w},  // gpt-oss's pre-MLP norm
    {ffn_gate_inp, &L::moe_router},
    {ffn_gate_inp_b, &L::moe_router_b},
    {ffn_gate_inp_shexp, &L::shexp_gate_inp},
    {ffn_gate_shexp, &L::shexp_gate},
    {ffn_up_shexp, &L::shexp_up},
    {ffn_down_shexp, &L::shexp_down},
    // Hybrid: the gated attention's q|gate and the Gated DeltaNet mixer (out_proj: attn_out).
    {attn_q_gate, &L::attn_q},
    {ssm_qkv, &L::ssm_qkv},
    {ssm_gate, &L::ssm_gate},
    {ssm_beta, &L::ssm_beta},
    {ssm_alpha, &L::ssm_alpha},
    {ssm_conv1d, &L::ssm_conv1d},
    {ssm_dt, &L::ssm_dt},
    {ssm_a, &L::ssm_a},
    {ssm_norm, &L::ssm_norm},
    {ssm_out, &L::attn_out},
    {ssm_qkvz, &L::ssm_qkvz},
    {ssm_ba, &L::ssm_ba},
    // Gemma 4's per-layer embeddings and layer scalar.
    {per_layer_tok_embd, &W::ple_embd},
    {per_layer_model_proj, &W::ple_model_proj},
    {per_layer_proj_norm, &W::ple_proj_norm},
    {per_layer_inp_gate, &L::ple_gate},
    {per_layer_proj, &L::ple_proj},
    {per_layer_post_norm, &L::ple_post_norm},
    {layer_out_scale, &L::out_scale},
};

// The experts' tensors: E matrices (or vectors) per layer, bound by Binder::bind_experts (their
// stacked GGUF names and shapes: arch.h's gguf_tensor; find_gguf_tensor is null for gpt-oss's
// fused gate|up, which GGUF stores as two).
struct ExpertRole {
    Tensor tensor;
    std::vector<Matrix> Experts::* m;
    std::vector<Vector> Experts::* v;
    Dim out, in = Dim::C;
};
const ExpertRole expert_roles[] = {
    {ffn_gate_exps, &Experts::gate, nullptr, Dim::FE},
    {ffn_up_exps, &Experts::up, nullptr, Dim::FE},
    {ffn_down_exps, &Experts::down, nullptr, Dim::C, Dim::FE},
    {ffn_gate_exps_b, nullptr, &Experts::gate_b, Dim::FE},
    {ffn_up_exps_b, nullptr, &Experts::up_b, Dim::FE},
    {ffn_down_exps_b, nullptr, &Experts::down_b, Dim::C},
    {ffn_gate_up_exps, &Experts::gate_up, nullptr, Dim::FE2},
    {ffn_gate_up_exps_b, nullptr, &Experts::gate_up_b, Dim::FE2},
    {ffn_gate_up_exps_cat, &Experts::gate, nullptr, Dim::FE2},  // each expert's rows: gate, then up
};
const ExpertRole* expert_role_of(Tensor t) {
    for (const ExpertRole& r : expert_roles)
        if (r.tensor == t) return &r;
    return nullptr;
}

// Whether the architecture row names the experts' matrices both one tensor per expert ("{e}")
// and stacked (Qwen3-Next: its checkpoints, and transformers 5's fused gate_up_proj / down_proj).
bool hf_experts_both_ways(const ArchTraits& traits) {
    bool per = false, stacked = false;
    for (const HfName& n : traits.hf_names) {
        const ExpertRole* r = expert_role_of(n.tensor);
        if (!r || !r->m) continue;
        (std::string_view(n.name).find("{e}") != std::string_view::npos ? per : stacked) = true;
    }
    return per && stacked;
}
// The row's HF name of an expert role, stacked (no "{e}") or one tensor per expert.
const char* hf_expert_name(const ArchTraits& traits, Tensor t, bool stacked) {
    for (const HfName& n : traits.hf_names)
        if (n.tensor == t && (std::string_view(n.name).find("{e}") == std::string_view::npos) == stacked) return n.name;
    return "";
}

const Role& role_of(Tensor t) {
    for (const Role& r : roles)
        if (r.tensor == t) return r;
    throw std::logic_error("no role for a tensor");
}

// The file's name of tensor t and its layout: HF names come from the architecture's row.
struct Named {
    const char* name;
    Layout layout;
};
// A tensor of the row that the format does not store (Qwen3-Next's ssm_qkv in a checkpoint, which
// fuses it into in_proj_qkvz): a null name.
Named name_in(const ModelFile& file, const ArchTraits& traits, Tensor t) {
    if (file.format != "safetensors") return {gguf_tensor(t).name, Layout::Linear};
    for (const HfName& n : traits.hf_names)
        if (n.tensor == t) return {n.name, n.layout};
    if (is_either_way_tensor(t)) return {nullptr, Layout::Linear};
    throw ModelError(file.path.string() + ": no Hugging Face tensor name for a " + traits.name + " tensor");
}

// Whether the row names both ways of storing the Gated DeltaNet's input projection (arch.h).
bool either_way(const ArchTraits& traits) {
    return std::find(traits.tensors.begin(), traits.tensors.end(), Tensor::ssm_qkvz) != traits.tensors.end() &&
           std::find(traits.tensors.begin(), traits.tensors.end(), Tensor::ssm_qkv) != traits.tensors.end();
}

std::string shape_str(const std::vector<int64_t>& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

class Binder {
public:
    Binder(const ModelFile& f, const ModelConfig& c, std::deque<std::vector<float>>& converted)
        : file_(f), config_(c), converted_(converted) {
        if (f.format != "safetensors" && c.n_nextn > 0) {
            // A hybrid GGUF's MTP heads (blk.<n_layer>... after the blocks): a draft head normal
            // decoding does not run (llama.cpp skips it too); set aside, counted for journey info.
            for (const auto& [name, t] : f.tensors)
                for (int l = c.n_layer; l < c.n_layer + c.n_nextn; ++l)
                    if (name.starts_with("blk." + std::to_string(l) + ".")) {
                        used_.insert(name);
                        ++set_aside_;
                    }
            return;
        }
        if (f.format == "safetensors" && c.hf_wrapper.empty() && traits_of(c.arch).hybrid) {
            // A hybrid checkpoint of its own (Qwen3-Next): its MTP head (mtp.*) set aside, as above.
            const std::string_view mtp = traits_of(c.arch).hybrid->hf_mtp_prefix;
            for (const auto& [name, t] : f.tensors)
                if (name.starts_with(mtp)) {
                    used_.insert(name);
                    ++set_aside_;
                }
            return;
        }
        if (f.format != "safetensors" || c.hf_wrapper.empty()) return;
        wrapper_ = find_hf_wrapper(c.hf_wrapper);
        if (!wrapper_) throw std::logic_error("an unknown Hugging Face wrapper");
        // A wrapper's checkpoint: its text tensors by their text model names (only those), the
        // other parts' tensors set aside, counted for journey info.
        for (const auto& [name, t] : f.tensors) {
            bool unused = false;
            for (const char* p : wrapper_->unused) unused = unused || name.starts_with(p);
            if (unused) {
                used_.insert(name);
                ++set_aside_;
                continue;
            }
            for (const HfRename& r : wrapper_->renames)
                if (name.starts_with(r.from)) {
                    renamed_.emplace(r.to + name.substr(std::string_view(r.from).size()), name);
                    break;
                }
        }
    }

    int64_t set_aside() const { return set_aside_; }

    // HF GPT-2 checkpoints may prefix every name (hf_optional_prefix); a wrapper's checkpoint names
    // its text tensors with one of its prefixes.
    const TensorInfo* find(const std::string& name) {
        if (wrapper_) {
            auto it = renamed_.find(name);
            if (it == renamed_.end()) return nullptr;
            used_.insert(it->second);
            return file_.find(it->second);
        }
        for (std::string_view p : {std::string_view(), hf_optional_prefix})
            if (const TensorInfo* t = file_.find(std::string(p) + name)) {
                used_.insert(t->name);
                return t;
            }
        return nullptr;
    }

    // Binds tensor `name` of `role` into owner's field (`layer` >= 0: a block's). plus_one adds 1
    // to a vector (Gemma's HF norms hold w for a (1 + w) gain).
    // `shapes`: the config the shapes are read from (a layer's own, Gemma 4's layers differ).
    template <typename Owner>
    void bind(Owner& owner, const Role& role, const std::string& name, Layout layout, bool plus_one,
              const ModelConfig* shapes = nullptr) {
        const TensorInfo* t = find(name);
        if (!t) fail(name, wrapper_ ? "is missing (under a prefix of a " + config_.hf_wrapper + " checkpoint)" : "is missing");
        const GgufTensor& g = gguf_tensor(role.tensor);
        const ModelConfig& sc = shapes ? *shapes : config_;
        const int64_t out = size_of(g.out, sc), in = size_of(g.in, sc);
        if (auto* m = std::get_if<Matrix Owner::*>(&role.field)) {
            if (out == 1 && t->shape == std::vector<int64_t>{in}) {  // a one-row matrix stored 1-D (llama-quantize's [C])
                TensorInfo row = *t;
                row.shape = {1, in};
                owner.*(*m) = matrix(row, 1, in, layout);
                return;
            }
            owner.*(*m) = layout == Layout::Linear ? matrix(*t, out, in, layout) : matrix(*t, in, out, layout);
        } else if (auto* v = std::get_if<Vector Owner::*>(&role.field)) {
            if (role.tensor == Tensor::ssm_conv1d) {  // [CH, K] (GGUF) or [CH, 1, K] (HF Conv1d), as float
                if (t->shape != std::vector<int64_t>{out, in} && t->shape != std::vector<int64_t>{out, 1, in})
                    fail(t->name, "has shape " + shape_str(t->shape) + ", expected " + shape_str({out, in}));
                TensorInfo flat = *t;
                flat.shape = {out * in};
                owner.*(*v) = vector(flat, out * in, Transform::as_float);
            } else if (role.tensor == Tensor::ssm_a && file_.format == "safetensors") {
                owner.*(*v) = vector(*t, out, Transform::neg_exp);  // A_log -> A = -exp(A_log), as the converter
            } else {
                owner.*(*v) = vector(*t, out, plus_one ? Transform::plus_one : Transform::none);
            }
        }
    }

    // Any dtype; block-quantized ones only as Linear [out, in] (matmul reads them row by row).
    Matrix matrix(const TensorInfo& t, int64_t rows, int64_t cols, Layout layout) const {
        if (t.shape != std::vector<int64_t>{rows, cols})
            fail(t.name, "has shape " + shape_str(t.shape) + ", expected " + shape_str({rows, cols}));
        if (dtype_block(t.dtype) > 1 && layout != Layout::Linear)
            fail(t.name, "is " + std::string(dtype_name(t.dtype)) + " in the Conv1D layout, which is not supported");
        return Matrix{t.dtype, t.data, rows, cols, layout};
    }

    // How a vector is read: as stored, 1 + w (Gemma's and Qwen3.5's HF norms), -exp(w) (HF A_log),
    // or as stored but always a float copy (the conv taps: the mapping may not be float-aligned).
    enum class Transform { none, plus_one, neg_exp, as_float };
    Vector vector(const TensorInfo& t, int64_t n, bool plus_one = false) {
        return vector(t, n, plus_one ? Transform::plus_one : Transform::none);
    }
    Vector vector(const TensorInfo& t, int64_t n, Transform how) {
        if (t.shape != std::vector<int64_t>{n})
            fail(t.name, "has shape " + shape_str(t.shape) + ", expected " + shape_str({n}));
        if (dtype_block(t.dtype) > 1) fail(t.name, "is a quantized vector (" + std::string(dtype_name(t.dtype)) + "); norms and biases must be F32, F16 or BF16");
        if (t.dtype == DType::F32 && how == Transform::none) return Vector{reinterpret_cast<const float*>(t.data), n};
        auto& copy = converted_.emplace_back(static_cast<size_t>(n));
        to_float(copy.data(), t.dtype, t.data, n);
        for (float& x : copy) {
            if (how == Transform::plus_one) x += 1.0f;
            else if (how == Transform::neg_exp) x = -std::exp(x);
        }
        return Vector{copy.data(), n};
    }

    // Whether the file holds an HF name pattern's tensor of this layer (expert 0's for a
    // per-expert name), without counting it as used.
    bool present(const char* pattern, int layer) const {
        const std::string name = expert0(with_layer(pattern, layer));
        if (wrapper_) return renamed_.count(name) > 0;
        for (std::string_view p : {std::string_view(), hf_optional_prefix})
            if (file_.find(std::string(p) + name)) return true;
        return false;
    }
    static std::string expert0(std::string name) {
        const size_t at = name.find("{e}");
        return at == std::string::npos ? name : name.replace(at, 3, "0");
    }

    // ---- Mixture of experts: one layer's experts, E views per role, from per-expert tensors
    // (an HF name with "{e}") or from a stacked [E, out, in] tensor (GGUF; HF gpt-oss, whose
    // matrices are [E, in, out]). A role the format stores otherwise has no name there. A row
    // that names both ways (Qwen3-Next: one tensor per expert as its checkpoints, or fused as
    // transformers 5 saves them) takes the way the file stores; a role whose names are all
    // absent is left to the other way, and the end checks that one way gave every expert.
    void bind_experts(LayerWeights& lw, int layer, const ArchTraits& traits) {
        const int64_t E = config_.n_expert;
        const bool both_ways = file_.format == "safetensors" && hf_experts_both_ways(traits);
        bool cat = false;  // (both_ways) the layer's gate and up matrices fused in one tensor
        for (Tensor tensor : traits.tensors) {
            const ExpertRole* r = expert_role_of(tensor);
            if (!r) continue;
            const GgufTensor* g = find_gguf_tensor(r->tensor);
            const char* pattern = g ? g->name : nullptr;
            Layout layout = Layout::Linear;
            if (file_.format == "safetensors") {
                pattern = nullptr;
                for (const HfName& n : traits.hf_names) {
                    if (n.tensor != tensor) continue;
                    if (both_ways && pattern && present(pattern, layer)) break;  // the way the file stores
                    pattern = n.name, layout = n.layout;
                }
                if (both_ways && pattern && !present(pattern, layer)) continue;  // stored the other way, or missing
                cat = cat || (pattern && tensor == Tensor::ffn_gate_up_exps_cat);
            }
            if (!pattern) continue;
            const std::string name = with_layer(pattern, layer);
            const int64_t out = size_of(r->out, config_), in = size_of(r->in, config_);
            int64_t rows = layout == Layout::Linear ? out : in, cols = layout == Layout::Linear ? in : out;
            const size_t at = name.find("{e}");
            for (int64_t e = 0; e < E; ++e) {
                if (at != std::string::npos) {  // one tensor per expert
                    const std::string one = std::string(name).replace(at, 3, std::to_string(e));
                    const TensorInfo* t = find(one);
                    if (!t) fail(one, "is missing");
                    if (r->m) (lw.experts.*(r->m)).push_back(matrix(*t, rows, cols, layout));
                    else (lw.experts.*(r->v)).push_back(vector(*t, out));
                    continue;
                }
                const TensorInfo* t = find(name);
                if (!t) fail(name, "is missing");
                // gpt-oss's MXFP4 checkpoints store the experts [E, out, in] (Linear), where its
                // dequantized layout is [E, in, out].
                if (layout == Layout::Conv1D && dtype_block(t->dtype) > 1) {
                    layout = Layout::Linear;
                    rows = out, cols = in;
                }
                const std::vector<int64_t> want = r->m ? std::vector<int64_t>{E, rows, cols} : std::vector<int64_t>{E, out};
                if (t->shape != want) fail(t->name, "has shape " + shape_str(t->shape) + ", expected " + shape_str(want));
                if (r->m) {  // expert e's rows: whole rows of whole blocks, so an offset
                    if (dtype_block(t->dtype) > 1 && (layout != Layout::Linear || cols % dtype_block(t->dtype) != 0))
                        fail(t->name, "is " + std::string(dtype_name(t->dtype)) + " with rows that are not whole blocks");
                    const uint64_t bytes = dtype_bytes(t->dtype, uint64_t(rows * cols));
                    if (r->tensor == Tensor::ffn_gate_up_exps_cat) {  // [gate | up] rows: two views, no copy
                        const uint64_t half = bytes / 2;
                        lw.experts.gate.push_back(Matrix{t->dtype, t->data + uint64_t(e) * bytes, rows / 2, cols, layout});
                        lw.experts.up.push_back(Matrix{t->dtype, t->data + uint64_t(e) * bytes + half, rows / 2, cols, layout});
                        continue;
                    }
                    (lw.experts.*(r->m)).push_back(Matrix{t->dtype, t->data + uint64_t(e) * bytes, rows, cols, layout});
                } else {
                    if (dtype_block(t->dtype) > 1) fail(t->name, "is a quantized vector; biases must be F32, F16 or BF16");
                    const uint64_t bytes = dtype_bytes(t->dtype, uint64_t(out));
                    if (t->dtype == DType::F32) {
                        (lw.experts.*(r->v)).push_back(Vector{reinterpret_cast<const float*>(t->data + uint64_t(e) * bytes), out});
                    } else {
                        auto& copy = converted_.emplace_back(static_cast<size_t>(out));
                        to_float(copy.data(), t->dtype, t->data + uint64_t(e) * bytes, out);
                        (lw.experts.*(r->v)).push_back(Vector{copy.data(), out});
                    }
                }
            }
        }
        const Experts& x = lw.experts;
        const bool split = !x.gate.empty() && !x.up.empty(), fused = !x.gate_up.empty();
        const std::pair<decltype(&x.gate), Tensor> by_role[] = {
            {&x.gate, Tensor::ffn_gate_exps}, {&x.up, Tensor::ffn_up_exps}, {&x.down, Tensor::ffn_down_exps}};
        if (both_ways)
            for (const auto& [v, t] : by_role) {
                if (v->empty())  // named the way the layer's other experts are stored
                    fail(expert0(with_layer(hf_expert_name(traits, cat && t != Tensor::ffn_down_exps ? Tensor::ffn_gate_up_exps_cat : t, cat), layer)),
                         "is missing");
                if (int64_t(v->size()) != E)
                    fail(with_layer(hf_expert_name(traits, Tensor::ffn_gate_up_exps_cat, true), layer),
                         "stores experts the layer also stores one tensor per expert");
            }
        if (!lw.moe_router || x.down.empty() || split == fused)
            fail(with_layer(gguf_tensor(Tensor::ffn_gate_inp).name, layer), "and the experts' gate, up and down matrices must all be given");
    }
    // ---- end of mixture of experts

    // Every tensor of the file must have been bound: one the architecture does not name could
    // change the math (a bias, a norm, a scaling table) and would be silently ignored.
    void refuse_unused(const ArchTraits& traits) const {
        for (const auto& [name, t] : file_.tensors)
            if (!used_.count(name) && !hf_tensor_ignorable(name))
                fail(name, "is not part of the " + std::string(traits.name) +
                               " architecture (journey refuses rather than ignore it)");
    }

    [[noreturn]] void fail(const std::string& tensor, const std::string& what) const {
        throw ModelError(file_.path.string() + ": tensor '" + tensor + "' " + what);
    }

private:
    const ModelFile& file_;
    const ModelConfig& config_;
    std::deque<std::vector<float>>& converted_;
    std::set<std::string> used_;
    const HfWrapper* wrapper_ = nullptr;
    std::map<std::string, std::string> renamed_;  // text model name -> the checkpoint's name
    int64_t set_aside_ = 0;
};

}  // namespace

Weights Weights::bind(const ModelFile& file, const ModelConfig& config, bool in_place) {
    const ArchTraits& traits = traits_of(config.arch);
    const bool plus_one = traits.hf_norm_plus_one && file.format == "safetensors";
    Weights w;
    w.n_expert_used_ = config.n_expert_used;
    Binder b(file, config, w.converted_);
    // Every layer has tensors of its own: a layer count the file cannot hold is refused before
    // the per-layer views are allocated (a header may claim 2^30 layers).
    if (static_cast<size_t>(config.n_layer) > file.tensors.size())
        throw ModelError(file.path.string() + ": the configuration says " + std::to_string(config.n_layer) +
                         " layers but the file holds only " + std::to_string(file.tensors.size()) + " tensors");
    w.layers.resize(static_cast<size_t>(config.n_layer));
    // A tied Hugging Face checkpoint may store the shared matrix as lm_head.weight only
    // (transformers ties either way): the embedding is then read from it.
    const char* const out_hf = name_in(file, traits, Tensor::output).name;
    const bool lm_head_only = file.format == "safetensors" && config.tied_output &&
                              !b.find(name_in(file, traits, Tensor::tok_embd).name) && b.find(out_hf);
    std::vector<ModelConfig> views;  // each layer's shapes, when they differ (Gemma 4)
    if (config.varies_per_layer())
        for (int l = 0; l < config.n_layer; ++l) views.push_back(config.layer_view(l));
    for (Tensor t : traits.tensors) {
        if (expert_role_of(t)) continue;  // the experts: bind_experts, below
        const bool ple = t == Tensor::per_layer_tok_embd || t == Tensor::per_layer_model_proj || t == Tensor::per_layer_proj_norm ||
                         t == Tensor::per_layer_inp_gate || t == Tensor::per_layer_proj || t == Tensor::per_layer_post_norm;
        if (ple && config.n_embd_per_layer == 0) continue;  // Gemma 4 without per-layer embeddings
        const Role& role = role_of(t);
        auto [name, layout] = name_in(file, traits, t);
        if (t == Tensor::tok_embd && lm_head_only) name = out_hf;
        const bool norm = is_norm(t);
        const bool layer = std::holds_alternative<Matrix L::*>(role.field) || std::holds_alternative<Vector L::*>(role.field);
        if (!layer) {
            b.bind(w, role, name, layout, plus_one && norm);
            continue;
        }
        const bool optional = either_way(traits) && is_either_way_tensor(t);  // bound if the file has it (checked below)
        if (optional && !name) continue;
        for (int l = 0; l < config.n_layer; ++l) {
            // A hybrid's layer binds its kind's tensors: the mixer's or the attention's.
            if (!config.recurrent_layers.empty() &&
                (config.is_recurrent(l) ? is_attention_tensor(t) : is_recurrent_tensor(t)))
                continue;
            if (optional && !b.find(with_layer(name, l))) continue;
            b.bind(w.layers[static_cast<size_t>(l)], role, with_layer(name, l), layout, plus_one && norm,
                   views.empty() ? nullptr : &views[size_t(l)]);
        }
    }
    if (either_way(traits))  // each linear-attention layer: q|k|v and z apart, or fused, one whole way
        for (int l = 0; l < config.n_layer; ++l) {
            const LayerWeights& lw = w.layers[size_t(l)];
            const bool fused = bool(lw.ssm_qkvz), apart = lw.ssm_qkv && lw.ssm_gate, some = lw.ssm_qkv || lw.ssm_gate;
            if (!config.is_recurrent(l) || (fused ? !some : apart)) continue;
            const char* qkvz = name_in(file, traits, Tensor::ssm_qkvz).name;
            if (fused) b.fail(with_layer(qkvz, l), "is given beside the separate q|k|v and z projections (one way only)");
            const char* qkv = name_in(file, traits, Tensor::ssm_qkv).name;  // (null: the format fuses them)
            if (!qkv) b.fail(with_layer(qkvz, l), "is missing");
            b.fail(with_layer(lw.ssm_qkv ? name_in(file, traits, Tensor::ssm_gate).name : qkv, l),
                   "is missing (a linear-attention layer needs " + gguf_tensor_name(Tensor::ssm_qkv, l) + " and " +
                       gguf_tensor_name(Tensor::ssm_gate, l) + ", or the fused " + gguf_tensor_name(Tensor::ssm_qkvz, l) + ")");
        }
    if (traits.moe)  // mixture of experts: every layer's experts
        for (int l = 0; l < config.n_layer; ++l) b.bind_experts(w.layers[static_cast<size_t>(l)], l, traits);
    const std::string out_name = out_hf;
    if (lm_head_only) w.output = w.tok_embd;
    else if (const TensorInfo* out = b.find(out_name)) w.output = b.matrix(*out, config.n_vocab, config.n_embd, Layout::Linear);
    else if (config.tied_output) w.output = w.tok_embd;  // tied: logits = x · tok_embdᵀ
    else b.fail(out_name, "is missing (the config says the output is not tied to the token embedding)");
    // Llama 3's rope factors, as llama.cpp's converter stores them (HF: config.json's rope_scaling).
    if (config.position == PositionKind::rope && file.format != "safetensors") {
        const int64_t half = config.rot_dims() / 2;
        if (const TensorInfo* f = b.find(gguf_tensor(Tensor::rope_freqs).name)) w.rope_freqs = b.vector(*f, half);
        // Phi-3.5's longrope factors (HF: config.json's rope_scaling); present exactly with longrope.
        const TensorInfo* lf = b.find(gguf_tensor(Tensor::rope_factors_long).name);
        const TensorInfo* sf = b.find(gguf_tensor(Tensor::rope_factors_short).name);
        const bool longrope = config.rope_scaling == RopeScaling::longrope;
        if ((lf || sf) && !longrope)
            b.fail(lf ? lf->name : sf->name, "is given but the model's rope scaling is not longrope (journey refuses rather than ignore it)");
        if (longrope && !(lf && sf))
            b.fail(gguf_tensor(lf ? Tensor::rope_factors_short : Tensor::rope_factors_long).name, "is missing (rope.scaling.type longrope needs both factor tensors)");
        if (lf) w.rope_long = b.vector(*lf, half);
        if (sf) w.rope_short = b.vector(*sf, half);
    }
    b.refuse_unused(traits);
    w.copy_for_kernels(file, in_place);
    if ((w.set_aside = b.set_aside()) > 0)
        w.set_aside_what = config.hf_wrapper.empty() ? "MTP head" : find_hf_wrapper(config.hf_wrapper)->unused_what;
    return w;
}

size_t available_memory() {
    if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
        char line[256];
        unsigned long long kb = 0;
        bool found = false;
        while (!found && std::fgets(line, sizeof line, f)) found = std::sscanf(line, "MemAvailable: %llu kB", &kb) == 1;
        std::fclose(f);
        if (found) return size_t(kb) * 1024;
    }
    const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? size_t(pages) * size_t(page) : 0;
}

// The matrices one token reads, copied once at load into memory of our own, 2 MiB pages where
// the kernel gives them (MADV_HUGEPAGE); every reader then uses the copy. The file's mapping is
// 4 KiB pages: a token's step streams every matrix, and on 4 KiB pages the hardware prefetcher
// stops at each page's end and every page costs a TLB miss. A test program reading 16 matrices
// of 8192 x 2048 F16 (512 MiB, the one-token kernel, alternating 21:40 UTC 4 Dec, this Zen 5):
// one thread 27.8 GB/s on 4 KiB pages, 33.6-35.8 on 2 MiB; the plain read beside it 32-35 on
// both. Llama 3.2 1B, journey bench tg16 -t 2, alternating: F16 GGUF 19.1, 16.6, 12.4 tok/s in
// the mapping against 23.8, 19.3, 16.6 copied; BF16 directory 15.4, 12.0, 10.5 against 20.2,
// 16.7, 20.1. The bytes are read with pread (MappedFile::read), never through the mapping, whose
// pages are then not faulted in one by one: 2.4 GB took 0.16-0.6 s at load on two threads (2.3-2.8
// s, 4.5-6 s on one, when this VM's host must first back the memory: the kernel zeroing the new
// pages), where the mapping's first token costs its faults (~1.2 s). So only the commands that
// run many one-token steps copy (LoadOptions::mmap).
// What is copied, and how:
// - Q4_K and Q6_K regrouped 16 rows at a time for the one-token dot (blocks/dot.h), as llama.cpp
//   repacks Q4_K at load on x86: one pass over x then serves 16 rows. Several tokens' dots and
//   prompts read it too (dot_k.cpp, gemm.cpp), the embedding lookup the mapping; each expert of a
//   stacked 3-D tensor is its own matrix (moe_matrices), regrouped alone. Where the VNNI kernels
//   run, and Q4_K alone where the AVX2 ones do (below; the AVX2 kernels read either type
//   regrouped; the portable path reads the rows as stored, with the same bits). The regrouped copy takes the place of the plain copy (its mapping's pages let
//   go as below), so it does not double the memory either; with --mmap it is made all the same.
// - F16/BF16 Conv1D matrices (GPT-2's Hugging Face checkpoints) rewritten as Linear: the
//   one-token product of a Linear row streams it once, where the Conv1D product sweeps a slab of
//   rows over every output (GPT-2 small F16, journey bench tg64 -t 2 in the same rounds: the
//   directory 129-136 tok/s, the converter's GGUF, Linear, 185-188; 07:40 UTC 4 Dec). The bits
//   are moved, not converted, so the directory computes exactly what its GGUF does; on every
//   path, so fast and portable kernels still agree.
// - every other block matrix and the output projection (and the token embedding when it is the
//   output), byte for byte, each starting on a 64-byte line (a safetensors tensor may start at
//   any multiple of 8 bytes). Not with `in_place` (--mmap), nor when the copy would not fit in
//   the memory the machine has left (it says so); the regroupings and rewrites above always.
// Once copied, a matrix's pages of the mapping are let go (MADV_DONTNEED: the file's pages stay
// in the page cache; a read, such as an embedding's lookup, maps them again), so the copy does
// not double the memory (Llama 3.2 1B Q4_K_M, journey bench -p 64 -n 4: peak RSS 1269 MiB
// without, 824 with).
void Weights::copy_for_kernels(const ModelFile& file, bool in_place) {
    enum class Kind { rows16, transpose, copy };
    struct Job {
        Matrix* m;
        Kind kind;
        size_t bytes;
        std::byte* at = nullptr;
    };
    std::vector<Job> todo;
    // Q4_K and Q6_K regrouped where the VNNI kernels run, Q4_K alone where the AVX2 ones do: on
    // this AMD EPYC Zen 3 (no AVX-512) the 16-row AVX2 Q6_K kernel, 1.3x the rows' in cache,
    // made generation slower (Qwen3-30B-A3B shape Q4_K_M, its Q6_K output 255 MB of a token's
    // 460; tg32 -t 2, alternating, 22:34 UTC 7 Dec 2026, load 1.5: rows as stored 37.5, 37.3
    // tok/s; Q4_K regrouped 37.7, 34.7; Q4_K and Q6_K 33.6, 32.2).
    const bool vnni = quant_dot_fast_available(), avx2 = quant_dot_avx2_available();
    // A matrix a reader built in memory (ModelFile::owned: MXFP4 joined from *_blocks and
    // *_scales) is ours already.
    auto in_mapping = [&](const Matrix& m, size_t bytes) {
        for (const auto& f : file.mappings)
            if (f->data() && m.data >= f->data() && m.data + bytes <= f->data() + f->size()) return true;
        return false;
    };
    auto want = [&](Matrix& m) {
        if (!m) return;
        const size_t bytes = static_cast<size_t>(dtype_bytes(m.dtype, uint64_t(m.rows * m.cols)));
        if ((vnni || (avx2 && m.dtype == DType::Q4_K)) && can_pack_rows16(m)) todo.push_back({&m, Kind::rows16, rows16_bytes(m)});
        else if (m.layout == Layout::Conv1D && (m.dtype == DType::F16 || m.dtype == DType::BF16))
            todo.push_back({&m, Kind::transpose, bytes});
        else if (!in_place && in_mapping(m, bytes)) todo.push_back({&m, Kind::copy, bytes});
    };
    for (LayerWeights& l : layers) {
        for (Matrix* m : l.matrices()) want(*m);
        for (Matrix* m : l.moe_matrices()) want(*m);  // each expert's matrices, one by one
    }
    want(output);  // tied or not (a Q4_K table is looked up in the mapping, multiplied in the copy)
    auto line = [](size_t n) { return (n + 63) / 64 * 64; };
    auto total_of = [&] {
        size_t t = 0;
        for (const Job& j : todo) t += line(j.bytes);
        return t;
    };
    size_t total = total_of();
    const size_t reserve = size_t(256) << 20;  // left for the KV cache, activations, the rest
    if (const size_t avail = available_memory(); !in_place && avail > 0 && total + reserve > avail) {
        spdlog::warn("{}: copying the weights would take {} MiB with {} MiB available; reading them in place from the file",
                     file.path.string(), total >> 20, avail >> 20);
        std::erase_if(todo, [](const Job& j) { return j.kind == Kind::copy; });
        total = total_of();
        in_place = true;
    }
    size_t copied = 0;
    for (const Job& j : todo) copied += j.kind == Kind::copy ? j.bytes : 0;
    spdlog::debug("{}: weight matrices {}; {} MiB regrouped or rewritten", file.path.string(),
                  in_place ? std::string("read in place from the file") : fmt::format("copied at load ({} MiB)", copied >> 20),
                  (total - copied) >> 20);
    if (todo.empty()) return;
    void* p = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;  // no memory for the copy: the matrices as stored serve (the same math)
    ::madvise(p, total, MADV_HUGEPAGE);
    packed_.emplace_back(static_cast<std::byte*>(p), [total](std::byte* q) { ::munmap(q, total); });
    for (std::byte* next = packed_.back().get(); Job& j : todo) {
        j.at = next;
        next += line(j.bytes);
    }
    // Only within the file's own read-only mappings, never on memory of ours.
    auto mapping_of = [&](const Job& j) -> const MappedFile* {
        for (const auto& f : file.mappings)
            if (f->data() && j.m->data >= f->data() && j.m->data + j.bytes <= f->data() + f->size()) return f.get();
        return nullptr;
    };
    const size_t page = size_t(::sysconf(_SC_PAGESIZE));
    auto let_go = [&](const Job& j) {
        if (!mapping_of(j)) return;
        const auto b = reinterpret_cast<uintptr_t>(j.m->data), e = b + j.bytes;
        const uintptr_t first = (b + page - 1) / page * page, last = e / page * page;
        if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
    };
    // The threads share the work: each plain copy in n parts (whole lines), the rewrites whole.
    thread_pool().run([&](int i, int n) {
        for (size_t k = 0; k < todo.size(); ++k) {
            const Job& j = todo[k];
            if (j.kind == Kind::copy) {
                const size_t lines = line(j.bytes) / 64;
                const size_t b = std::min(j.bytes, lines * size_t(i) / size_t(n) * 64);
                const size_t e = std::min(j.bytes, lines * size_t(i + 1) / size_t(n) * 64);
                const MappedFile* f = mapping_of(j);
                if (!f || !f->read(size_t(j.m->data - f->data()) + b, j.at + b, e - b)) std::memcpy(j.at + b, j.m->data + b, e - b);
            } else if (k % size_t(n) == size_t(i)) {
                if (j.kind == Kind::rows16) pack_rows16(*j.m, j.at);
                else transpose16(j.m->data, j.m->rows, j.m->cols, j.at);
                let_go(j);
            }
        }
    });
    for (const Job& j : todo) {
        switch (j.kind) {
            case Kind::rows16: j.m->rows16 = j.at; break;
            case Kind::transpose: *j.m = Matrix{j.m->dtype, j.at, j.m->cols, j.m->rows, Layout::Linear}; break;
            case Kind::copy:
                let_go(j);
                if (tok_embd.data == j.m->data && tok_embd.dtype == j.m->dtype) tok_embd.data = j.at;  // tied
                j.m->data = j.at;
                break;
        }
    }
}

DType Weights::main_dtype() const {
    std::map<DType, uint64_t> bytes;
    for (const LayerWeights& l : layers) {
        for (const Matrix* m : l.matrices())
            if (*m) bytes[m->dtype] += dtype_bytes(m->dtype, uint64_t(m->rows * m->cols));
        for (const Matrix* m : l.moe_matrices()) bytes[m->dtype] += dtype_bytes(m->dtype, uint64_t(m->rows * m->cols));
    }
    DType best = tok_embd.dtype;
    uint64_t most = 0;
    for (const auto& [t, n] : bytes)
        if (n > most) best = t, most = n;
    return best;
}

std::vector<std::span<const std::byte>> Weights::token_reads() const {
    std::vector<std::span<const std::byte>> reads;
    auto add = [&](const Matrix& m) {
        if (m) reads.emplace_back(m.rows16 ? m.rows16 : m.data, dtype_bytes(m.dtype, uint64_t(m.rows * m.cols)));
    };
    for (const LayerWeights& l : layers) {
        for (const Matrix* m : l.matrices()) add(*m);
        // Mixture of experts: the router, and as many experts as a token uses (the first ones
        // stand for the routed ones: the same sizes).
        add(l.moe_router);
        const size_t k = l.experts.down.empty() ? 0 : size_t(n_expert_used_);
        for (const auto* list : {&l.experts.gate, &l.experts.up, &l.experts.down, &l.experts.gate_up})
            for (size_t e = 0; e < std::min(k, list->size()); ++e) add((*list)[e]);
    }
    add(output);
    return reads;
}

std::vector<Weights::NamedMatrix> Weights::named_matrices(const ModelConfig& config) const {
    const ArchTraits& traits = traits_of(config.arch);
    std::vector<NamedMatrix> out;
    for (int l = 0; l < int(layers.size()); ++l) {
        const LayerWeights& lw = layers[size_t(l)];
        for (Tensor t : traits.tensors) {
            if (!config.recurrent_layers.empty() && (config.is_recurrent(l) ? is_attention_tensor(t) : is_recurrent_tensor(t)))
                continue;
            if (const ExpertRole* r = expert_role_of(t)) {
                const GgufTensor* g = find_gguf_tensor(t);
                if (!r->m || !g) continue;
                const std::vector<Matrix>& list = lw.experts.*(r->m);
                for (size_t e = 0; e < list.size(); ++e)
                    out.push_back({&list[e], with_layer(g->name, l), int(e), int(list.size())});
                continue;
            }
            const Role& role = role_of(t);
            if (const auto* f = std::get_if<Matrix L::*>(&role.field))
                if (lw.*(*f)) out.push_back({&(lw.*(*f)), with_layer(gguf_tensor(t).name, l)});
        }
    }
    return out;
}

int64_t Weights::n_params() const {
    auto m = [](const Matrix& x) { return x.rows * x.cols; };
    auto v = [](const Vector& x) { return x.n; };
    int64_t n = m(tok_embd) + m(pos_embd) + v(final_norm_w) + v(final_norm_b) + m(ple_embd) + m(ple_model_proj) + v(ple_proj_norm);
    if (output.data != tok_embd.data) n += m(output);
    for (const LayerWeights& l : layers) {
        for (const Matrix* x : l.matrices()) n += m(*x);
        for (const Matrix* x : l.moe_matrices()) n += m(*x);
        n += v(l.attn_sinks) + v(l.moe_router_b);
        for (const auto* list : {&l.experts.gate_b, &l.experts.up_b, &l.experts.down_b, &l.experts.gate_up_b})
            for (const Vector& x : *list) n += v(x);
        for (const Vector* x : {&l.attn_norm_w, &l.attn_norm_b, &l.attn_qkv_b, &l.attn_q_b, &l.attn_k_b, &l.attn_v_b,
                                &l.attn_q_norm, &l.attn_k_norm, &l.attn_out_b, &l.attn_post_norm, &l.mlp_norm_w,
                                &l.mlp_norm_b, &l.mlp_up_b, &l.mlp_down_b, &l.mlp_post_norm, &l.ssm_dt, &l.ssm_a,
                                &l.ssm_norm, &l.ssm_conv1d, &l.ple_post_norm, &l.out_scale})
            n += v(*x);
    }
    return n;
}

int64_t Weights::n_active_params() const {
    int64_t unused = 0;
    for (const LayerWeights& l : layers) {
        const Experts& x = l.experts;
        const int64_t E = int64_t(x.down.size());
        if (E == 0) continue;
        int64_t all = 0;  // every expert of the layer (all of one size)
        for (const auto* list : {&x.gate, &x.up, &x.down, &x.gate_up})
            for (const Matrix& m : *list) all += m.rows * m.cols;
        for (const auto* list : {&x.gate_b, &x.up_b, &x.down_b, &x.gate_up_b})
            for (const Vector& v : *list) all += v.n;
        unused += all / E * (E - std::min<int64_t>(E, n_expert_used_));
    }
    return n_params() - unused;
}

}  // namespace journey
