// journey quantize IN.gguf OUT.gguf TYPE: what llama-quantize does without an importance matrix.
// The metadata is copied with its types, general.file_type and general.quantization_version are
// set (moved to the end, as llama-quantize leaves them), the tensors are written in
// llama-quantize's order with its per-tensor type choice and its block encoders (same bytes).
#include <memory>

#include <spdlog/spdlog.h>

#include "commands.h"
#include "journey/errors.h"
#include "journey/formats/gguf_reader.h"
#include "journey/kernels/blocks/dequantize.h"
#include "journey/kernels/blocks/quantize.h"
#include "model_writer.h"
#include "quantize_plan.h"

namespace journey::cli {

// Shared with journey convert: the GGUF tensors of mf (a checked GGUF), re-typed for target.
std::vector<OutTensor> quantized_tensors(const ModelFile& mf, const QuantTarget& target);

namespace {

int64_t meta_int(const ModelFile& mf, const std::string& key, int64_t fallback) {
    auto it = mf.metadata.find(key);
    return it != mf.metadata.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

struct QuantizeOptions {
    std::string in, out, type;
};

void run(const QuantizeOptions& opt) {
    const QuantTarget* target = find_quant_target(opt.type);
    if (!target)
        throw UsageError("TYPE: unknown type '" + excerpt(opt.type, 40) + "' (journey quantize writes " +
                         quant_target_names() + ")");
    const ModelFile mf = read_gguf(opt.in);
    GgufWriter w;
    for (GgufKv& kv : read_gguf_kvs(opt.in)) w.set(std::move(kv));
    w.remove("general.quantization_version");
    w.remove("general.file_type");
    w.set_u32("general.quantization_version", 2);
    w.set_u32("general.file_type", target->ftype);
    const std::vector<OutTensor> tensors = quantized_tensors(mf, *target);
    write_model(w, tensors, opt.out, "quantize");
}

}  // namespace

std::vector<OutTensor> quantized_tensors(const ModelFile& mf, const QuantTarget& target) {
    std::vector<PlanTensor> plan;
    for (const auto& [name, t] : mf.tensors) plan.push_back({name, t.shape, t.dtype});
    sort_like_llama_quantize(plan);
    auto str = [&](const std::string& key) {
        auto it = mf.metadata.find(key);
        return it != mf.metadata.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    PlanModel model;
    model.arch = str("general.architecture");
    model.n_layer = meta_int(mf, model.arch + ".block_count", 0);
    model.n_head = meta_int(mf, model.arch + ".attention.head_count", 1);
    model.n_head_kv = meta_int(mf, model.arch + ".attention.head_count_kv", model.n_head);
    const std::vector<DType> types = plan_types(target, model, plan);

    std::vector<OutTensor> out;
    for (size_t i = 0; i < plan.size(); ++i) {
        const TensorInfo& t = *mf.find(plan[i].name);
        OutTensor o{t.name, t.shape, types[i], nullptr, {}};
        if (types[i] == t.dtype) {
            o.raw = t.data;
        } else {
            if (!can_quantize(types[i]))
                throw UsageError("tensor '" + t.name + "': journey cannot encode " + std::string(dtype_name(types[i])));
            const int64_t cols = t.shape.back();
            const size_t row_bytes = dtype_bytes(t.dtype, uint64_t(cols));
            const std::byte* data = t.data;
            const DType src = t.dtype;
            o.row = [data, src, cols, row_bytes](int64_t r, float* dst) {
                dequantize_row(src, data + size_t(r) * row_bytes, dst, cols);
            };
        }
        out.push_back(std::move(o));
    }
    return out;
}

void register_quantize(CLI::App& app) {
    auto opt = std::make_shared<QuantizeOptions>();
    CLI::App* cmd = app.add_subcommand("quantize", "Quantize a GGUF model to another type, as llama-quantize does");
    cmd->add_option("IN", opt->in, "The GGUF model to read")->required();
    cmd->add_option("OUT", opt->out, "The GGUF file to write (written whole, then renamed into place)")->required();
    cmd->add_option("TYPE", opt->type, "Q4_K_M, Q5_K_M, Q6_K, Q8_0, Q4_0, ... (" + quant_target_names() + ")")
        ->required();
    cmd->callback([opt] { run(*opt); });
}

}  // namespace journey::cli
