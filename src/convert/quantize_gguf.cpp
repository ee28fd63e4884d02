// journey quantize: what llama-quantize does, with or without an importance matrix. The tensors are
// written in llama-quantize's order with its per-tensor type choice (plan_quantized) and its
// block encoders (same bytes); a tensor whose type does not change is copied as it is.
#include "journey/convert/convert.h"

#include <optional>

#include "journey/formats/gguf_reader.h"
#include "journey/formats/output_file.h"
#include "journey/kernels/blocks/dequantize.h"
#include "journey/model/gguf_keys.h"

namespace journey {
namespace {

int64_t meta_int(const ModelFile& mf, const std::string& key, int64_t fallback) {
    auto it = mf.metadata.find(key);
    return it != mf.metadata.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

// What llama-quantize's rules look at, from the file's metadata.
PlanModel plan_model_of(const ModelFile& mf) {
    auto it = mf.metadata.find("general.architecture");
    PlanModel model;
    model.arch = it != mf.metadata.end() && it->is_string() ? it->get<std::string>() : std::string();
    model.n_layer = meta_int(mf, key_of(model.arch, Key::block_count), 0);
    model.n_head = meta_int(mf, key_of(model.arch, Key::head_count), 1);
    model.n_head_kv = meta_int(mf, key_of(model.arch, Key::head_count_kv), model.n_head);
    model.n_expert = meta_int(mf, key_of(model.arch, Key::expert_count), 0);
    return model;
}

}  // namespace

void quantize_gguf(const std::filesystem::path& in, const std::filesystem::path& out, const QuantTarget& target,
                   const WriteProgress& progress, const std::filesystem::path& imatrix_path) {
    check_output_path(out, {in});  // before any work: never the input, a device or a FIFO
    std::optional<Imatrix> imatrix;
    if (!imatrix_path.empty()) imatrix = read_imatrix(imatrix_path);
    const ModelFile mf = read_gguf(in);
    GgufWriter w;
    for (GgufKv& kv : read_gguf_kvs(in)) w.set(std::move(kv));
    set_file_type(w, target);
    if (imatrix) {  // llama-quantize's kv overrides (strings cut at 127 bytes)
        w.set_str("quantize.imatrix.file", imatrix_path.string().substr(0, 127));
        if (!imatrix->datasets.empty()) w.set_str("quantize.imatrix.dataset", imatrix->datasets[0].substr(0, 127));
        w.set_u32("quantize.imatrix.entries_count", uint32_t(imatrix->entries.size()));
        if (imatrix->chunk_count > 0) w.set_u32("quantize.imatrix.chunks_count", uint32_t(imatrix->chunk_count));
    }
    // Every tensor as stored; plan_quantized keeps the bytes of those whose type stays.
    std::vector<OutTensor> tensors;
    for (const auto& entry : mf.tensors) {
        const auto& t = entry.second;  // a named reference: clang 14 cannot capture a structured binding
        OutTensor o{t.name, t.shape, t.dtype, t.data, {}};
        o.rows_in_parallel = true;  // dequantize_row reads the mapping only
        o.row = [&t](int64_t r, float* dst) {
            const int64_t cols = t.shape.back();
            dequantize_row(t.dtype, t.data + size_t(r) * dtype_bytes(t.dtype, uint64_t(cols)), dst, cols);
        };
        tensors.push_back(std::move(o));
    }
    write_model(w, plan_quantized(tensors, target, plan_model_of(mf), imatrix ? &*imatrix : nullptr), out, progress);
}

}  // namespace journey
