// Which type each tensor of a model gets when it is quantized to a llama.cpp file type such as
// Q4_K_M: llama-quantize's rules (llama.cpp src/llama-quant.cpp, without an importance matrix),
// so that journey's files mix types the way llama.cpp's do.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "journey/convert/imatrix.h"
#include "journey/convert/model_writer.h"
#include "journey/formats/gguf_writer.h"
#include "journey/formats/tensor.h"

namespace journey {

// A llama.cpp file type (LLAMA_FTYPE_*): its name, its number (general.file_type) and the type
// most tensors get.
struct QuantTarget {
    std::string_view name;  // "Q4_K_M"
    uint32_t ftype;
    DType base;
};

// The target named (any case: "q4_k_m"), or nullptr.
const QuantTarget* find_quant_target(std::string_view name);
// "F32, F16, BF16, Q8_0, ...": for messages.
std::string quant_target_names();

// What the rules look at: the tensor's GGUF name, shape (outermost first) and the model's shape.
struct PlanTensor {
    std::string name;
    std::vector<int64_t> shape;
    DType type;  // as stored (kept when the tensor is not quantized)
};
struct PlanModel {
    std::string arch;  // GGUF general.architecture
    int64_t n_layer = 0, n_head = 0, n_head_kv = 0;
    int64_t n_expert = 0;  // mixtures of experts: llama-quantize's rules for 8 experts
    bool has_imatrix = false;  // quantize --imatrix (IQ3_XXS, Q4_0/Q5_0 choose differently)
};

// llama-quantize's tensor order: tensors outside the blocks first, then block by block, by name
// within each (it writes them in this order, and its per-layer counters run in it).
void sort_like_llama_quantize(std::vector<PlanTensor>& tensors);

// The type of each tensor (tensors in llama-quantize's order).
std::vector<DType> plan_types(const QuantTarget& target, const PlanModel& model, const std::vector<PlanTensor>& tensors);

// True when llama-quantize refuses to write tensor `name` as `type` in target's mix without an
// importance matrix (IQ1-IQ3_XXS blocks; Q2_K in Q2_K_S), the embedding and output excepted.
bool requires_imatrix(const QuantTarget& target, const std::string& name, DType type);

// The one planner of journey quantize (a GGUF file's tensors) and journey convert at a quantized
// type (the F32 conversion's tensors): the tensors in llama-quantize's order, each re-typed as it
// chooses. A tensor whose type changes is produced from its rows (`row`, no longer `raw`).
// With an importance
// matrix each re-typed tensor carries its weights (OutTensor::imatrix, when the matrix has its
// name); without one, a tensor that requires one is refused (UsageError) as llama-quantize does.
std::vector<OutTensor> plan_quantized(const std::vector<OutTensor>& tensors, const QuantTarget& target, const PlanModel& model,
                                      const Imatrix* imatrix = nullptr);

// llama-quantize's last two keys: general.quantization_version, then general.file_type of target
// (each removed first, so both end the metadata as llama-quantize leaves them).
void set_file_type(GgufWriter& w, const QuantTarget& target);

}  // namespace journey
