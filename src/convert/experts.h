// A mixture of experts' tensors as llama.cpp's converter writes them (convert_hf.cpp hands them
// here): the experts of a layer stacked [E, out, in] as ffn_{gate,up,down}_exps.
#pragma once
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "journey/convert/model_writer.h"
#include "journey/formats/tensor.h"
#include "journey/model/arch.h"
#include "journey/model/config.h"

namespace journey {

class ExpertConverter {
public:
    using Add = std::function<void(OutTensor)>;
    ExpertConverter(const ModelConfig& c, const ArchTraits& traits, const std::filesystem::path& weights, DType dense, Add add);

    // Takes the checkpoint tensor `hf_name` (role `hf.tensor`, in `layer`, of `expert` when the
    // checkpoint stores one tensor per expert, else -1) when it is an expert tensor that needs more
    // than a rename, and writes what it becomes (now, or once the layer's experts are all read).
    // False: the generic conversion writes it.
    bool take(const HfName& hf, int layer, int expert, const std::string& hf_name, const TensorInfo& t);
    // Throws when a layer's experts were not all given.
    void finish() const;

private:
    void stack(int layer);
    [[noreturn]] void fail(const std::string& hf_name, const std::string& what) const;

    const ModelConfig& c_;
    const std::filesystem::path& weights_;
    DType dense_;
    Add add_;
    size_t per_expert_roles_ = 0;  // the family's HF names with "{e}"
    // Those roles in the order the converter writes the stacks: by HF name (Qwen2MoeModel's
    // down_proj, gate_proj, up_proj; Mixtral's w1 (gate), w2 (down), w3 (up)).
    std::vector<Tensor> stack_order_;
    struct Layer {
        std::map<Tensor, std::vector<const TensorInfo*>> by_role;  // [role][expert]
        size_t count = 0;
        bool done = false;
    };
    std::map<int, Layer> layers_;
    std::deque<std::vector<std::byte>> owned_;  // MXFP4 gate and up rows, split from gate_up
};

}  // namespace journey
