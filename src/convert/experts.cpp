// Experts as llama.cpp's converter writes them:
// - one tensor per expert in the checkpoint (Qwen2/3-MoE: mlp.experts.E.{gate,up,down}_proj):
//   Qwen2MoeModel.modify_tensors holds a layer's experts until all of them are read, then writes
//   ffn_down_exps, ffn_gate_exps and ffn_up_exps, each the E matrices stacked in expert order
//   (OlmoeModel the same; Mixtral's block_sparse_moe.experts.E.w1/w2/w3: LlamaModel stacks them
//   as ffn_gate_exps, ffn_down_exps, ffn_up_exps: the order of the HF names, both);
// - gpt-oss in transformers' dequantized layout: gate_up_proj [E, C, 2F] (input-major, gate and
//   up interleaved along 2F) is split and transposed into ffn_gate_exps and ffn_up_exps [E, F, C],
//   its bias [E, 2F] into the two biases [E, F], and down_proj [E, F, C] transposed into
//   ffn_down_exps [E, C, F] (GptOssModel.modify_tensors);
// - gpt-oss's MXFP4 checkpoints (the safetensors reader joins *_blocks and *_scales into ggml's
//   MXFP4 blocks, [E, out, in]): the bytes as they are, gate_up's even rows ffn_gate_exps and its
//   odd ones ffn_up_exps (GptOssModel.generate_extra_tensors / repack_mxfp4). convert_hf.cpp
//   hands these over first: the converter writes them before every other tensor.
#include "experts.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "journey/errors.h"
#include "journey/kernels/to_float.h"

namespace journey {

namespace {

size_t esize(const TensorInfo& t) { return dtype_bytes(t.dtype, 1); }

}  // namespace

ExpertConverter::ExpertConverter(const ModelConfig& c, const ArchTraits& traits, const std::filesystem::path& weights,
                                 DType dense, Add add)
    : c_(c), weights_(weights), dense_(dense), add_(std::move(add)) {
    std::vector<const HfName*> per_expert;
    for (const HfName& n : traits.hf_names)
        if (std::string_view(n.name).find("{e}") != std::string_view::npos) per_expert.push_back(&n);
    per_expert_roles_ = per_expert.size();
    std::sort(per_expert.begin(), per_expert.end(), [](const HfName* a, const HfName* b) { return std::string_view(a->name) < b->name; });
    for (const HfName* n : per_expert) stack_order_.push_back(n->tensor);
}

void ExpertConverter::fail(const std::string& hf_name, const std::string& what) const {
    throw ModelError(weights_.string() + ": tensor '" + hf_name + "' " + what);
}

bool ExpertConverter::take(const HfName& hf, int layer, int expert, const std::string& hf_name, const TensorInfo& t) {
    const int64_t E = c_.n_expert;
    if (expert >= 0) {  // one tensor per expert: held until the layer's are all read
        if (E <= 0 || expert >= E)
            fail(hf_name, "is expert " + std::to_string(expert) + " of a model with " + std::to_string(E) + " experts");
        if (t.shape.size() != 2) fail(hf_name, "is not a matrix");
        Layer& l = layers_[layer];
        std::vector<const TensorInfo*>& slot = l.by_role[hf.tensor];
        slot.resize(size_t(E), nullptr);
        if (slot[size_t(expert)]) fail(hf_name, "is given twice");
        for (const TensorInfo* other : slot)
            if (other && other->shape != t.shape) fail(hf_name, "has another shape than the other experts' of its layer");
        slot[size_t(expert)] = &t;
        if (++l.count == per_expert_roles_ * size_t(E)) stack(layer);
        return true;
    }
    const TensorInfo* src = &t;
    if (t.dtype == DType::MXFP4) {
        if (hf.tensor != Tensor::ffn_gate_up_exps && hf.tensor != Tensor::ffn_down_exps)
            fail(hf_name, "is MXFP4, which llama.cpp's converter writes for the experts' matrices only");
        if (t.shape.size() != 3) fail(hf_name, "is not [experts, output, input]");
        if (hf.tensor == Tensor::ffn_down_exps) {
            add_(OutTensor{gguf_tensor_name(Tensor::ffn_down_exps, layer), t.shape, DType::MXFP4, t.data, {}});
            return true;
        }
        if (t.shape[1] % 2 != 0) fail(hf_name, "does not hold gate and up rows in pairs");
        const int64_t e = t.shape[0], f = t.shape[1] / 2;
        const size_t row = dtype_bytes(DType::MXFP4, uint64_t(t.shape[2]));
        for (int half = 0; half < 2; ++half) {
            auto& bytes = owned_.emplace_back(size_t(e * f) * row);
            for (int64_t r = 0; r < e * f; ++r)  // expert r / f's row 2 (r % f) + half
                std::memcpy(bytes.data() + size_t(r) * row, t.data + size_t(2 * r + half) * row, row);
            add_(OutTensor{gguf_tensor_name(half ? Tensor::ffn_up_exps : Tensor::ffn_gate_exps, layer), {e, f, t.shape[2]},
                           DType::MXFP4, bytes.data(), {}});
        }
        return true;
    }
    if (hf.tensor == Tensor::ffn_gate_up_exps || hf.tensor == Tensor::ffn_gate_up_exps_b) {
        const bool bias = hf.tensor == Tensor::ffn_gate_up_exps_b;
        if (t.shape.size() != (bias ? 2u : 3u) || t.shape.back() % 2 != 0)
            fail(hf_name, bias ? "is not [experts, 2 x width]" : "is not [experts, input, 2 x width]");
        const int64_t e = t.shape[0], f = t.shape.back() / 2, cin = bias ? 1 : t.shape[1];
        const size_t es = esize(t);
        for (int half = 0; half < 2; ++half) {
            const Tensor role = bias ? (half ? Tensor::ffn_up_exps_b : Tensor::ffn_gate_exps_b)
                                     : (half ? Tensor::ffn_up_exps : Tensor::ffn_gate_exps);
            OutTensor o{gguf_tensor_name(role, layer), bias ? std::vector<int64_t>{e, f} : std::vector<int64_t>{e, f, cin},
                        bias ? DType::F32 : dense_, nullptr, {}};
            if (bias)  // row x: x's [2F] entries at half, half + 2, ...
                o.row = [src, f, es, half](int64_t x, float* dst) {
                    for (int64_t j = 0; j < f; ++j) to_float(dst + j, src->dtype, src->data + size_t(x * 2 * f + 2 * j + half) * es, 1);
                };
            else  // row (x, j): column 2j + half of expert x's [C, 2F]
                o.row = [src, f, cin, es, half](int64_t r, float* dst) {
                    const int64_t x = r / f, j = r % f;
                    for (int64_t k = 0; k < cin; ++k)
                        to_float(dst + k, src->dtype, src->data + size_t((x * cin + k) * 2 * f + 2 * j + half) * es, 1);
                };
            add_(std::move(o));
        }
        return true;
    }
    if (hf.tensor == Tensor::ffn_gate_up_exps_cat) {  // Qwen2MoeModel: [E, 2F, C] split on dim -2: gate, then up
        if (t.shape.size() != 3 || t.shape[1] % 2 != 0) fail(hf_name, "is not [experts, 2 x width, input]");
        const int64_t e = t.shape[0], f = t.shape[1] / 2, cin = t.shape[2];
        const size_t es = esize(t);
        for (int half = 0; half < 2; ++half) {
            OutTensor o{gguf_tensor_name(half ? Tensor::ffn_up_exps : Tensor::ffn_gate_exps, layer), {e, f, cin}, dense_, nullptr, {}};
            o.row = [src, f, cin, es, half](int64_t r, float* dst) {  // expert r / f's row (half f + r % f)
                const int64_t x = r / f, j = r % f;
                to_float(dst, src->dtype, src->data + size_t((x * 2 * f + half * f + j) * cin) * es, cin);
            };
            add_(std::move(o));
        }
        return true;
    }
    if (hf.tensor == Tensor::ffn_down_exps && hf.layout == Layout::Conv1D) {  // [E, F, C] -> [E, C, F]
        if (t.shape.size() != 3) fail(hf_name, "is not [experts, width, output]");
        const int64_t e = t.shape[0], f = t.shape[1], cout = t.shape[2];
        const size_t es = esize(t);
        OutTensor o{gguf_tensor_name(Tensor::ffn_down_exps, layer), {e, cout, f}, dense_, nullptr, {}};
        o.row = [src, f, cout, es](int64_t r, float* dst) {
            const int64_t x = r / cout, i = r % cout;
            for (int64_t k = 0; k < f; ++k) to_float(dst + k, src->dtype, src->data + size_t((x * f + k) * cout + i) * es, 1);
        };
        add_(std::move(o));
        return true;
    }
    return false;
}

void ExpertConverter::stack(int layer) {
    Layer& l = layers_[layer];
    for (Tensor role : stack_order_) {
        const auto it = l.by_role.find(role);
        if (it == l.by_role.end()) continue;
        const std::vector<const TensorInfo*> parts = it->second;
        const int64_t rows = parts[0]->shape[0], cols = parts[0]->shape[1];
        OutTensor o{gguf_tensor_name(role, layer), {int64_t(parts.size()), rows, cols}, dense_, nullptr, {}};
        o.row = [parts, rows, cols](int64_t r, float* dst) {
            const TensorInfo* p = parts[size_t(r / rows)];
            to_float(dst, p->dtype, p->data + size_t((r % rows) * cols) * esize(*p), cols);
        };
        add_(std::move(o));
    }
    l.done = true;
}

void ExpertConverter::finish() const {
    for (const auto& [layer, l] : layers_) {
        if (l.done) continue;
        for (const auto& [role, slot] : l.by_role)
            for (size_t x = 0; x < slot.size(); ++x)
                if (!slot[x])
                    throw ModelError(weights_.string() + ": layer " + std::to_string(layer) + " has no " +
                                     gguf_tensor_name(role, layer) + " for expert " + std::to_string(x));
        throw ModelError(weights_.string() + ": layer " + std::to_string(layer) + " does not give every expert's gate, up and down matrices");
    }
}

}  // namespace journey
