// Binding named tensors to the weight views, by architecture tables.
#include "journey/weights.h"

#include <string>
#include <variant>

#include "journey/convert.h"
#include "journey/errors.h"

namespace journey {
namespace {

// Symbolic sizes, resolved against the config.
enum class Dim { C, C3, F, V, Ctx };

int64_t size_of(Dim d, const ModelConfig& c) {
    switch (d) {
        case Dim::C: return c.n_embd;
        case Dim::C3: return 3 * int64_t{c.n_embd};
        case Dim::F: return c.n_ff;
        case Dim::V: return c.n_vocab;
        case Dim::Ctx: return c.n_ctx;
    }
    return 0;
}

// One row of an architecture's tensor table. `name` may contain "{}" for the layer index.
// A matrix has shape (rows, cols) as stored; a vector has shape (rows).
template <typename Owner>
struct Slot {
    const char* name;
    std::variant<Matrix Owner::*, Vector Owner::*> field;
    Dim rows;
    Dim cols;  // ignored for vectors
    Layout layout = Layout::Linear;
};

// GPT-2 (Hugging Face names; checkpoints may prefix them with "transformer.").
const Slot<Weights> gpt2_globals[] = {
    {"wte.weight", &Weights::tok_embd, Dim::V, Dim::C},
    {"wpe.weight", &Weights::pos_embd, Dim::Ctx, Dim::C},
    {"ln_f.weight", &Weights::final_norm_w, Dim::C, Dim::C},
    {"ln_f.bias", &Weights::final_norm_b, Dim::C, Dim::C},
};
const Slot<LayerWeights> gpt2_layer[] = {
    {"h.{}.ln_1.weight", &LayerWeights::attn_norm_w, Dim::C, Dim::C},
    {"h.{}.ln_1.bias", &LayerWeights::attn_norm_b, Dim::C, Dim::C},
    {"h.{}.attn.c_attn.weight", &LayerWeights::attn_qkv, Dim::C, Dim::C3, Layout::Conv1D},
    {"h.{}.attn.c_attn.bias", &LayerWeights::attn_qkv_b, Dim::C3, Dim::C},
    {"h.{}.attn.c_proj.weight", &LayerWeights::attn_out, Dim::C, Dim::C, Layout::Conv1D},
    {"h.{}.attn.c_proj.bias", &LayerWeights::attn_out_b, Dim::C, Dim::C},
    {"h.{}.ln_2.weight", &LayerWeights::mlp_norm_w, Dim::C, Dim::C},
    {"h.{}.ln_2.bias", &LayerWeights::mlp_norm_b, Dim::C, Dim::C},
    {"h.{}.mlp.c_fc.weight", &LayerWeights::mlp_up, Dim::C, Dim::F, Layout::Conv1D},
    {"h.{}.mlp.c_fc.bias", &LayerWeights::mlp_up_b, Dim::F, Dim::C},
    {"h.{}.mlp.c_proj.weight", &LayerWeights::mlp_down, Dim::F, Dim::C, Layout::Conv1D},
    {"h.{}.mlp.c_proj.bias", &LayerWeights::mlp_down_b, Dim::C, Dim::C},
};
const char* const gpt2_prefixes[] = {"", "transformer."};
const char* const gpt2_output = "lm_head.weight";  // optional: tied to wte when absent

std::string with_layer(std::string name, int layer) {
    auto at = name.find("{}");
    if (at != std::string::npos) name.replace(at, 2, std::to_string(layer));
    return name;
}

std::string shape_str(const std::vector<int64_t>& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

class Binder {
public:
    Binder(const ModelFile& f, const ModelConfig& c, std::deque<std::vector<float>>& converted)
        : file_(f), config_(c), converted_(converted) {}

    const TensorInfo* find(const std::string& name) const {
        for (const char* p : gpt2_prefixes)
            if (const TensorInfo* t = file_.find(p + name)) return t;
        return nullptr;
    }

    template <typename Owner>
    void bind(Owner& owner, const Slot<Owner>& slot, int layer) {
        const std::string name = with_layer(slot.name, layer);
        const TensorInfo* t = find(name);
        if (!t) fail(name, "is missing");
        if (t->dtype != DType::F32 && t->dtype != DType::F16 && t->dtype != DType::BF16)
            fail(t->name, "has dtype " + std::string(dtype_name(t->dtype)) + ", which is not supported yet");
        const int64_t rows = size_of(slot.rows, config_), cols = size_of(slot.cols, config_);
        if (auto* m = std::get_if<Matrix Owner::*>(&slot.field)) {
            owner.*(*m) = matrix(*t, rows, cols, slot.layout);
        } else {
            owner.*std::get<Vector Owner::*>(slot.field) = vector(*t, rows);
        }
    }

    Matrix matrix(const TensorInfo& t, int64_t rows, int64_t cols, Layout layout) const {
        if (t.shape != std::vector<int64_t>{rows, cols})
            fail(t.name, "has shape " + shape_str(t.shape) + ", expected " + shape_str({rows, cols}));
        return Matrix{t.dtype, t.data, rows, cols, layout};
    }

    Vector vector(const TensorInfo& t, int64_t n) {
        if (t.shape != std::vector<int64_t>{n})
            fail(t.name, "has shape " + shape_str(t.shape) + ", expected " + shape_str({n}));
        if (t.dtype == DType::F32) return Vector{reinterpret_cast<const float*>(t.data), n};
        auto& copy = converted_.emplace_back(static_cast<size_t>(n));
        to_float(copy.data(), t.dtype, t.data, n);
        return Vector{copy.data(), n};
    }

    [[noreturn]] void fail(const std::string& tensor, const std::string& what) const {
        throw ModelError(file_.path.string() + ": tensor '" + tensor + "' " + what);
    }

private:
    const ModelFile& file_;
    const ModelConfig& config_;
    std::deque<std::vector<float>>& converted_;
};

}  // namespace

Weights Weights::bind(const ModelFile& file, const ModelConfig& config) {
    if (config.arch != Arch::gpt2)
        throw ModelError(file.path.string() + ": no weight table for architecture " + std::string(arch_name(config.arch)));
    Weights w;
    Binder b(file, config, w.converted_);
    for (const auto& slot : gpt2_globals) b.bind(w, slot, -1);
    w.layers.resize(static_cast<size_t>(config.n_layer));
    for (int l = 0; l < config.n_layer; ++l)
        for (const auto& slot : gpt2_layer) b.bind(w.layers[static_cast<size_t>(l)], slot, l);
    if (const TensorInfo* out = b.find(gpt2_output)) w.output = b.matrix(*out, config.n_vocab, config.n_embd, Layout::Linear);
    else if (config.tied_output) w.output = w.tok_embd;  // tied: logits = x · wteᵀ
    else b.fail(gpt2_output, "is missing (config says the output is not tied to wte)");
    return w;
}

int64_t Weights::n_params() const {
    auto m = [](const Matrix& x) { return x.rows * x.cols; };
    auto v = [](const Vector& x) { return x.n; };
    int64_t n = m(tok_embd) + m(pos_embd) + v(final_norm_w) + v(final_norm_b);
    if (output.data != tok_embd.data) n += m(output);
    for (const LayerWeights& l : layers) {
        for (const Matrix* x : {&l.attn_qkv, &l.attn_q, &l.attn_k, &l.attn_v, &l.attn_out, &l.mlp_up, &l.mlp_gate, &l.mlp_down})
            n += m(*x);
        for (const Vector* x : {&l.attn_norm_w, &l.attn_norm_b, &l.attn_qkv_b, &l.attn_out_b, &l.mlp_norm_w,
                                &l.mlp_norm_b, &l.mlp_up_b, &l.mlp_down_b})
            n += v(*x);
    }
    return n;
}

}  // namespace journey
