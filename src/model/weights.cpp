// Binding named tensors to the weight views, by architecture tables.
#include "journey/model/weights.h"

#include <span>
#include <string>
#include <variant>

#include "journey/kernels/convert.h"
#include "journey/errors.h"

namespace journey {
namespace {

// Symbolic sizes, resolved against the config.
enum class Dim { C, C3, F, V, Ctx, HD, KD };  // HD = n_head * head_dim, KD = n_kv_head * head_dim

int64_t size_of(Dim d, const ModelConfig& c) {
    switch (d) {
        case Dim::C: return c.n_embd;
        case Dim::C3: return 3 * int64_t{c.n_embd};
        case Dim::F: return c.n_ff;
        case Dim::V: return c.n_vocab;
        case Dim::Ctx: return c.n_ctx;
        case Dim::HD: return int64_t{c.n_head} * c.head_dim;
        case Dim::KD: return int64_t{c.n_kv_head} * c.head_dim;
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

// One naming scheme: global tensors, per-layer tensors ("{}" = layer index), the prefixes a
// checkpoint may put before every name, and the optional output (absent: tied to tok_embd).
struct Scheme {
    std::span<const Slot<Weights>> globals;
    std::span<const Slot<LayerWeights>> layer;
    std::span<const char* const> prefixes;
    const char* output;
};

const char* const no_prefix[] = {""};

// GPT-2, Hugging Face names (checkpoints may prefix them with "transformer."); Conv1D [in, out].
const Slot<Weights> hf_gpt2_globals[] = {
    {"wte.weight", &Weights::tok_embd, Dim::V, Dim::C},
    {"wpe.weight", &Weights::pos_embd, Dim::Ctx, Dim::C},
    {"ln_f.weight", &Weights::final_norm_w, Dim::C, Dim::C},
    {"ln_f.bias", &Weights::final_norm_b, Dim::C, Dim::C},
};
const Slot<LayerWeights> hf_gpt2_layer[] = {
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
const char* const hf_gpt2_prefixes[] = {"", "transformer."};
const Scheme hf_gpt2{hf_gpt2_globals, hf_gpt2_layer, hf_gpt2_prefixes, "lm_head.weight"};

// GPT-2, GGUF names (llama.cpp's convert script); Linear [out, in].
const Slot<Weights> gguf_gpt2_globals[] = {
    {"token_embd.weight", &Weights::tok_embd, Dim::V, Dim::C},
    {"position_embd.weight", &Weights::pos_embd, Dim::Ctx, Dim::C},
    {"output_norm.weight", &Weights::final_norm_w, Dim::C, Dim::C},
    {"output_norm.bias", &Weights::final_norm_b, Dim::C, Dim::C},
};
const Slot<LayerWeights> gguf_gpt2_layer[] = {
    {"blk.{}.attn_norm.weight", &LayerWeights::attn_norm_w, Dim::C, Dim::C},
    {"blk.{}.attn_norm.bias", &LayerWeights::attn_norm_b, Dim::C, Dim::C},
    {"blk.{}.attn_qkv.weight", &LayerWeights::attn_qkv, Dim::C3, Dim::C},
    {"blk.{}.attn_qkv.bias", &LayerWeights::attn_qkv_b, Dim::C3, Dim::C},
    {"blk.{}.attn_output.weight", &LayerWeights::attn_out, Dim::C, Dim::C},
    {"blk.{}.attn_output.bias", &LayerWeights::attn_out_b, Dim::C, Dim::C},
    {"blk.{}.ffn_norm.weight", &LayerWeights::mlp_norm_w, Dim::C, Dim::C},
    {"blk.{}.ffn_norm.bias", &LayerWeights::mlp_norm_b, Dim::C, Dim::C},
    {"blk.{}.ffn_up.weight", &LayerWeights::mlp_up, Dim::F, Dim::C},
    {"blk.{}.ffn_up.bias", &LayerWeights::mlp_up_b, Dim::F, Dim::C},
    {"blk.{}.ffn_down.weight", &LayerWeights::mlp_down, Dim::C, Dim::F},
    {"blk.{}.ffn_down.bias", &LayerWeights::mlp_down_b, Dim::C, Dim::C},
};
const Scheme gguf_gpt2{gguf_gpt2_globals, gguf_gpt2_layer, no_prefix, "output.weight"};

// Llama, GGUF names (also what the llama2.c reader produces); Linear [out, in].
const Slot<Weights> gguf_llama_globals[] = {
    {"token_embd.weight", &Weights::tok_embd, Dim::V, Dim::C},
    {"output_norm.weight", &Weights::final_norm_w, Dim::C, Dim::C},
};
const Slot<LayerWeights> gguf_llama_layer[] = {
    {"blk.{}.attn_norm.weight", &LayerWeights::attn_norm_w, Dim::C, Dim::C},
    {"blk.{}.attn_q.weight", &LayerWeights::attn_q, Dim::HD, Dim::C},
    {"blk.{}.attn_k.weight", &LayerWeights::attn_k, Dim::KD, Dim::C},
    {"blk.{}.attn_v.weight", &LayerWeights::attn_v, Dim::KD, Dim::C},
    {"blk.{}.attn_output.weight", &LayerWeights::attn_out, Dim::C, Dim::HD},
    {"blk.{}.ffn_norm.weight", &LayerWeights::mlp_norm_w, Dim::C, Dim::C},
    {"blk.{}.ffn_gate.weight", &LayerWeights::mlp_gate, Dim::F, Dim::C},
    {"blk.{}.ffn_up.weight", &LayerWeights::mlp_up, Dim::F, Dim::C},
    {"blk.{}.ffn_down.weight", &LayerWeights::mlp_down, Dim::C, Dim::F},
};
const Scheme gguf_llama{gguf_llama_globals, gguf_llama_layer, no_prefix, "output.weight"};

// Llama, Hugging Face names; Linear [out, in].
const Slot<Weights> hf_llama_globals[] = {
    {"model.embed_tokens.weight", &Weights::tok_embd, Dim::V, Dim::C},
    {"model.norm.weight", &Weights::final_norm_w, Dim::C, Dim::C},
};
const Slot<LayerWeights> hf_llama_layer[] = {
    {"model.layers.{}.input_layernorm.weight", &LayerWeights::attn_norm_w, Dim::C, Dim::C},
    {"model.layers.{}.self_attn.q_proj.weight", &LayerWeights::attn_q, Dim::HD, Dim::C},
    {"model.layers.{}.self_attn.k_proj.weight", &LayerWeights::attn_k, Dim::KD, Dim::C},
    {"model.layers.{}.self_attn.v_proj.weight", &LayerWeights::attn_v, Dim::KD, Dim::C},
    {"model.layers.{}.self_attn.o_proj.weight", &LayerWeights::attn_out, Dim::C, Dim::HD},
    {"model.layers.{}.post_attention_layernorm.weight", &LayerWeights::mlp_norm_w, Dim::C, Dim::C},
    {"model.layers.{}.mlp.gate_proj.weight", &LayerWeights::mlp_gate, Dim::F, Dim::C},
    {"model.layers.{}.mlp.up_proj.weight", &LayerWeights::mlp_up, Dim::F, Dim::C},
    {"model.layers.{}.mlp.down_proj.weight", &LayerWeights::mlp_down, Dim::C, Dim::F},
};
const Scheme hf_llama{hf_llama_globals, hf_llama_layer, no_prefix, "lm_head.weight"};

// Safetensors checkpoints use Hugging Face names; GGUF and llama2.c files use GGUF names.
const Scheme* scheme_for(const ModelFile& file, Arch arch) {
    const bool hf = file.format == "safetensors";
    switch (arch) {
        case Arch::gpt2: return hf ? &hf_gpt2 : &gguf_gpt2;
        case Arch::llama: return hf ? &hf_llama : &gguf_llama;
    }
    return nullptr;
}

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
    Binder(const ModelFile& f, const ModelConfig& c, const Scheme& scheme, std::deque<std::vector<float>>& converted)
        : file_(f), config_(c), scheme_(scheme), converted_(converted) {}

    const TensorInfo* find(const std::string& name) const {
        for (const char* p : scheme_.prefixes)
            if (const TensorInfo* t = file_.find(p + name)) return t;
        return nullptr;
    }

    template <typename Owner>
    void bind(Owner& owner, const Slot<Owner>& slot, int layer) {
        const std::string name = with_layer(slot.name, layer);
        const TensorInfo* t = find(name);
        if (!t) fail(name, "is missing");
        const int64_t rows = size_of(slot.rows, config_), cols = size_of(slot.cols, config_);
        if (auto* m = std::get_if<Matrix Owner::*>(&slot.field)) {
            owner.*(*m) = matrix(*t, rows, cols, slot.layout);
        } else {
            owner.*std::get<Vector Owner::*>(slot.field) = vector(*t, rows);
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

    Vector vector(const TensorInfo& t, int64_t n) {
        if (t.shape != std::vector<int64_t>{n})
            fail(t.name, "has shape " + shape_str(t.shape) + ", expected " + shape_str({n}));
        if (dtype_block(t.dtype) > 1) fail(t.name, "is a quantized vector (" + std::string(dtype_name(t.dtype)) + "); norms and biases must be F32, F16 or BF16");
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
    const Scheme& scheme_;
    std::deque<std::vector<float>>& converted_;
};

}  // namespace

Weights Weights::bind(const ModelFile& file, const ModelConfig& config) {
    const Scheme* scheme = scheme_for(file, config.arch);
    if (!scheme)
        throw ModelError(file.path.string() + ": no weight table for architecture " + std::string(arch_name(config.arch)));
    Weights w;
    Binder b(file, config, *scheme, w.converted_);
    // Every layer has tensors of its own: a layer count the file cannot hold is refused before
    // the per-layer views are allocated (a header may claim 2^30 layers).
    if (static_cast<size_t>(config.n_layer) > file.tensors.size())
        throw ModelError(file.path.string() + ": the configuration says " + std::to_string(config.n_layer) +
                         " layers but the file holds only " + std::to_string(file.tensors.size()) + " tensors");
    for (const auto& slot : scheme->globals) b.bind(w, slot, -1);
    w.layers.resize(static_cast<size_t>(config.n_layer));
    for (int l = 0; l < config.n_layer; ++l)
        for (const auto& slot : scheme->layer) b.bind(w.layers[static_cast<size_t>(l)], slot, l);
    if (const TensorInfo* out = b.find(scheme->output)) w.output = b.matrix(*out, config.n_vocab, config.n_embd, Layout::Linear);
    else if (config.tied_output) w.output = w.tok_embd;  // tied: logits = x · tok_embdᵀ
    else b.fail(scheme->output, "is missing (the config says the output is not tied to the token embedding)");
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
