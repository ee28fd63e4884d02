// A Hugging Face directory to a GGUF file in one step (journey convert). At f32/f16/bf16 the
// file is what llama.cpp's convert_hf_to_gguf.py writes (same metadata, tokenizer, tensor names,
// order and bytes); at a quantized type it is what llama-quantize then makes of the F32 file (its
// tensor order, type choices and block bytes). Tensors are streamed one at a time from the mapped
// safetensors. The values come from the ModelConfig the runtime reads (config_from_hf), the names
// and keys from the model stage's tables, and what a family adds from its hook (families.h).
#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "experts.h"
#include "families.h"
#include "journey/convert/convert.h"
#include "journey/formats/output_file.h"
#include "journey/convert/convert_vocab.h"
#include "journey/errors.h"
#include "journey/formats/json_file.h"
#include "journey/formats/safetensors_reader.h"
#include "journey/kernels/to_float.h"
#include "journey/model/arch.h"
#include "journey/model/rope_freq.h"
#include "naming.h"

namespace journey {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The HF name's role, layer and expert, from the architecture row's HF names ("{}" is the layer,
// "{e}" the expert of a checkpoint that stores one tensor per expert).
struct Match {
    const HfName* hf = nullptr;
    int layer = -1;
    int expert = -1;
};
// Reads the decimal number at name[i...] (1 to 6 digits) into out.
bool read_index(const std::string& name, size_t& i, int& out) {
    size_t j = i;
    while (j < name.size() && j - i < 7 && name[j] >= '0' && name[j] <= '9') ++j;
    if (j == i || j - i > 6) return false;
    out = std::stoi(name.substr(i, j - i));
    i = j;
    return true;
}
Match match_hf(const ArchTraits& traits, const std::string& name) {
    for (const HfName& n : traits.hf_names) {
        const std::string_view p = n.name;
        Match m{&n, -1, -1};
        size_t i = 0, k = 0;
        bool ok = true;
        while (ok && k < p.size()) {
            if (p.compare(k, 2, "{}") == 0) {
                ok = read_index(name, i, m.layer);
                k += 2;
            } else if (p.compare(k, 3, "{e}") == 0) {
                ok = read_index(name, i, m.expert);
                k += 3;
            } else {
                ok = i < name.size() && name[i] == p[k];
                ++i, ++k;
            }
        }
        if (ok && i == name.size()) return m;
    }
    return {};
}

[[noreturn]] void bad_config(const fs::path& dir, const std::string& what) {
    throw ModelError((dir / "config.json").string() + ": " + what);
}

// torch's float exp, as llama.cpp's converter computes -torch.exp(A_log): SLEEF's expf_u10 (ATen's
// vectorised exp, which torch uses however short the tensor), not the C library's expf, which
// rounds 1 value in 12 of a bf16 A_log a bit apart (checked on 30,000 values against torch 1.13:
// all the same bits; expf 2,613 apart).
float torch_expf(float d) {
    auto pow2i = [](int q) { return std::bit_cast<float>(uint32_t(q + 0x7f) << 23); };
    const int q = int(std::nearbyint(d * 1.442695040888963407359924681001892137426645954152985934135449406931f));
    float x = std::fma(float(q), -0.693145751953125f, d);
    x = std::fma(float(q), -1.428606765330187045e-06f, x);
    float u = 0.000198527617612853646278381f;
    for (float c : {0.00139304355252534151077271f, 0.00833336077630519866943359f, 0.0416664853692054748535156f,
                    0.166666671633720397949219f, 0.5f})
        u = std::fma(u, x, c);
    u = 1.0f + std::fma(x * x, u, x);
    u = u * pow2i(q >> 1) * pow2i(q - (q >> 1));
    return d < -104.0f ? 0.0f : u;
}

OutTensor make_out(const std::string& name, DType type, const Source& s) {
    OutTensor o{name, s.shape, type, nullptr, {}};
    const TensorInfo* t = s.t;
    const int64_t cols = s.shape.back();
    const size_t esize = dtype_bytes(t->dtype, 1);
    if (s.transpose) {
        const int64_t src_cols = t->shape.back();  // = output rows
        o.row = [t, cols, esize, src_cols](int64_t r, float* dst) {
            for (int64_t c = 0; c < cols; ++c) to_float(dst + c, t->dtype, t->data + size_t(c * src_cols + r) * esize, 1);
        };
        return o;
    }
    auto map = s.row_map, col_map = s.col_map;
    const bool plus_one = s.plus_one, neg_exp = s.neg_exp;
    auto finish = [cols, plus_one, neg_exp](float* dst) {
        if (plus_one)
            for (int64_t c = 0; c < cols; ++c) dst[c] += 1.0f;
        if (neg_exp)
            for (int64_t c = 0; c < cols; ++c) dst[c] = -torch_expf(dst[c]);
    };
    if (s.chunk > 0) {  // one row, its chunks moved
        const int64_t chunk = s.chunk;
        o.row = [t, cols, esize, map, chunk, finish](int64_t, float* dst) {
            for (int64_t i = 0; i < cols / chunk; ++i) to_float(dst + i * chunk, t->dtype, t->data + size_t(map(i) * chunk) * esize, chunk);
            finish(dst);
        };
        return o;
    }
    o.row = [t, cols, esize, map, col_map, finish](int64_t r, float* dst) {
        const int64_t src = map ? map(r) : r;
        if (col_map) {  // columns moved too: the row read whole, then permuted
            std::vector<float> row(static_cast<size_t>(cols));
            to_float(row.data(), t->dtype, t->data + size_t(src * cols) * esize, cols);
            for (int64_t c = 0; c < cols; ++c) dst[c] = row[size_t(col_map(c))];
        } else {
            to_float(dst, t->dtype, t->data + size_t(src * cols) * esize, cols);
        }
        finish(dst);
    };
    return o;
}

// Llama 3's rope scaling as llama.cpp's converter stores it: one divisor per frequency
// (rope_freqs.weight), computed in float from the bands of llama3_band.
std::vector<float> llama3_rope_factors(const ModelConfig& c) {
    std::vector<float> factors;
    const float base = c.rope_theta, factor = c.rope_factor, lo = c.rope_low_freq_factor, hi = c.rope_high_freq_factor;
    const float old_ctx = float(c.rope_original_ctx);
    const int64_t dim = c.head_dim;
    for (int64_t i = 0; i < dim; i += 2) {
        const float freq = 1.0f / std::pow(base, float(i) / float(dim));
        const float wavelen = float(2 * M_PI) / freq;
        float smooth = 0;
        switch (llama3_band<float>(wavelen, old_ctx, lo, hi, smooth)) {
            case Llama3Band::keep: factors.push_back(1.0f); break;
            case Llama3Band::scale: factors.push_back(factor); break;
            case Llama3Band::blend: factors.push_back(1.0f / ((1.0f - smooth) / factor + smooth)); break;
        }
    }
    return factors;
}

// general.sampling.*: generation_config.json's sampling defaults (an unreadable file is ignored,
// as the converter does).
void write_sampling(GgufWriter& w, const fs::path& dir) {
    if (fs::is_regular_file(dir / "generation_config.json")) {
        json g;
        try {
            g = read_json_file(dir / "generation_config.json");
        } catch (const Error&) {
            g = json::object();  // the converter ignores an unreadable generation_config.json
        }
        if (g.is_object()) {
            auto i32 = [&](const char* key, const char* gk) {
                if (g.contains(key) && g[key].is_number_integer()) w.set_i32(gk, int32_t(g[key].get<int64_t>()));
            };
            auto f32 = [&](const char* key, const char* gk) {
                if (g.contains(key) && g[key].is_number()) w.set_f32(gk, float(g[key].get<double>()));
            };
            if (g.contains("sequence") && g["sequence"].is_string()) w.set_str("general.sampling.sequence", g["sequence"].get<std::string>());
            i32("top_k", "general.sampling.top_k");
            f32("top_p", "general.sampling.top_p");
            f32("min_p", "general.sampling.min_p");
            f32("xtc_probability", "general.sampling.xtc_probability");
            f32("xtc_threshold", "general.sampling.xtc_threshold");
            f32("temperature", "general.sampling.temp");
            i32("penalty_last_n", "general.sampling.penalty_last_n");
            if (g.contains("penalty_repeat")) f32("penalty_repeat", "general.sampling.penalty_repeat");
            else f32("repetition_penalty", "general.sampling.penalty_repeat");
            i32("mirostat", "general.sampling.mirostat");
            f32("mirostat_tau", "general.sampling.mirostat_tau");
            f32("mirostat_eta", "general.sampling.mirostat_eta");
        }
    }
}

// general.name, .version, .finetune, .basename, .size_label.
// `label`: the size label when the name gives none (size_label_of).
void write_naming(GgufWriter& w, const fs::path& dir, const json& config, int64_t total_params, const std::string& label) {
    IdParts id;
    std::string name;
    const json nop_value = config.value("_name_or_path", json());
    const std::string nop = nop_value.is_string() ? nop_value.get<std::string>() : "";
    if (!nop.empty() && std::count(nop.begin(), nop.end(), '/') <= 1 && nop.find(' ') == std::string::npos) {
        id = model_id_parts(nop, total_params);
        name = id_to_title(id.full);
    }
    const IdParts from_dir = model_id_parts(fs::absolute(dir).lexically_normal().filename().string().empty()
                                                ? fs::absolute(dir).lexically_normal().parent_path().filename().string()
                                                : fs::absolute(dir).lexically_normal().filename().string(),
                                            total_params);
    if (name.empty()) name = id_to_title(from_dir.full);
    if (id.basename.empty()) id.basename = from_dir.basename;
    if (id.finetune.empty()) id.finetune = from_dir.finetune;
    if (id.version.empty()) id.version = from_dir.version;
    if (id.size_label.empty()) id.size_label = from_dir.size_label;
    w.set_str("general.name", name);
    if (!id.version.empty()) w.set_str("general.version", id.version);
    if (!id.finetune.empty()) w.set_str("general.finetune", id.finetune);
    if (!id.basename.empty()) w.set_str("general.basename", id.basename);
    w.set_str("general.size_label", id.size_label.empty() ? label : id.size_label);
}

void convert_dir(const fs::path& dir, const fs::path& out, const QuantTarget& target, const WriteProgress& progress);

}  // namespace

void convert_hf_dir(const fs::path& dir, const fs::path& out, const QuantTarget& target, const WriteProgress& progress) {
    try {
        convert_dir(dir, out, target, progress);
    } catch (const json::exception& e) {
        // Each reader checks the types it reads (json_value names the file and key); this is the
        // backstop, so that nlohmann's text never reaches the user.
        const std::string what = e.what();
        throw ModelError(dir.string() + ": a value in its JSON files has the wrong type (" +
                         excerpt(what.substr(what.find("] ") == std::string::npos ? 0 : what.find("] ") + 2), 80) + ")");
    }
}

namespace {

void convert_dir(const fs::path& dir, const fs::path& out, const QuantTarget& target, const WriteProgress& progress) {
    check_output_path(out, {dir});  // before any work: never the model's own files, a device or a FIFO
    if (!fs::is_regular_file(dir / "config.json")) throw ModelError(dir.string() + ": no config.json (not a Hugging Face model directory)");
    const json file_config = read_json_file(dir / "config.json");
    if (!file_config.is_object()) bad_config(dir, "is not a JSON object");
    const std::string model_type = file_config.value("model_type", json()).is_string() ? file_config["model_type"].get<std::string>() : "";
    const ArchTraits* traits = find_hf_arch(model_type);
    // A family converts when it has a converter hook; a multimodal wrapper (arch.h's HfWrapper)
    // when its text model's hook says so (Qwen3.5; Gemma 3's model_type gemma3 is refused).
    const HfWrapper* wrapper = find_hf_wrapper(model_type);
    if (wrapper && converter_hook(wrapper->arch) && converter_hook(wrapper->arch)->wrapper) traits = &traits_of(wrapper->arch);
    else wrapper = nullptr;
    const ConverterHook* hook = traits ? converter_hook(traits->arch) : nullptr;
    // The keys as llama.cpp's converter reads them: a wrapper's text_config over its top level.
    json config = file_config;
    if (wrapper && file_config.contains(wrapper->text_config) && file_config[wrapper->text_config].is_object())
        for (const auto& [k, v] : file_config[wrapper->text_config].items()) config[k] = v;
    if (!hook) {
        std::string names;
        for (const ArchTraits& t : arch_table())
            if (converter_hook(t.arch))
                for (const char* n : t.hf_types) names += (names.empty() ? "" : ", ") + std::string(n);
        if (const char* what = unsupported_family(model_type)) bad_config(dir, "model_type '" + model_type + "' is not one journey converts (" + what + ")");
        bad_config(dir, "model_type '" + excerpt(model_type, 40) + "' is not one journey converts (journey converts " + names + ")");
    }
    fs::path weights = dir / "model.safetensors";
    if (!fs::is_regular_file(weights)) weights = dir / "model.safetensors.index.json";
    if (!fs::is_regular_file(weights)) throw ModelError(dir.string() + ": no model.safetensors or model.safetensors.index.json");
    const ModelFile st = read_safetensors(weights);
    // Gemma3Model cuts the embedding to tokenizer.json's count when there is no tokenizer.model.
    if (traits->arch == Arch::gemma3 && !fs::is_regular_file(dir / "tokenizer.model"))
        throw ModelError(dir.string() + ": journey converts Gemma 3 with its tokenizer.model (none here)");

    const std::string arch = traits->name;
    const bool quantized = dtype_block(target.base) > 1;
    // At a quantized type the F32 conversion is made first (in memory, as metadata and row
    // functions), then quantized as llama-quantize would.
    const DType dense = quantized ? DType::F32 : target.base;
    uint32_t dense_ftype = quantized ? 0 : target.ftype;
    // MXFP4 experts (gpt-oss's checkpoints) stay MXFP4: the file is MOSTLY_MXFP4_MOE at any float
    // type, as the converter marks it (a quantized type would re-encode them: quantize that file).
    const bool mxfp4 = std::any_of(st.tensors.begin(), st.tensors.end(), [](const auto& kv) { return kv.second.dtype == DType::MXFP4; });
    if (mxfp4 && quantized)
        throw UsageError(dir.string() + ": its experts are MXFP4; journey converts it to F32, F16 or BF16 (not " +
                         std::string(target.name) + "; journey quantize that file)");
    if (mxfp4 && !quantized) dense_ftype = 38;  // LLAMA_FTYPE_MOSTLY_MXFP4_MOE

    // Rope scaling GGUF cannot carry as llama.cpp's converter writes it (llama3 becomes factors).
    const json rope = config.contains("rope_scaling") && config["rope_scaling"].is_object() ? config["rope_scaling"] : json::object();
    const json rope_type_value = rope.value("rope_type", rope.value("type", json("")));
    const std::string rope_type = rope_type_value.is_string() ? rope_type_value.get<std::string>() : "";
    if (!rope_type.empty() && rope_type != "llama3" && rope_type != "default" && rope_type != "yarn" && rope_type != "linear" &&
        rope_type != "longrope" && rope_type != "su")
        bad_config(dir, "rope_scaling type '" + excerpt(rope_type, 30) + "' is not one journey converts");
    // The values, as the runtime reads the directory.
    ModelConfig c = config_from_hf(file_config, (dir / "config.json").string());
    // _QwenMtpMixin: without mtp_num_hidden_layers (Qwen3-Next's config.json) the MTP head's layers
    // are counted from the checkpoint's mtp.layers.<i>.* names.
    if (hook->rename && c.n_nextn == 0)
        for (const auto& [name, t] : st.tensors) {
            size_t i = 11;  // "mtp.layers."
            int layer = -1;
            if (name.starts_with("mtp.layers.") && read_index(name, i, layer) && i < name.size() && name[i] == '.')
                c.n_nextn = std::max(c.n_nextn, layer + 1);
        }
    const HfModel hf{dir, weights, config, c, dense_ftype};
    // What the rope_scaling check above cannot see (transformers 5's rope_parameters).
    // Linear: TextModel's keys (the hooks that write them); longrope: Phi3MiniModel's factor tensors.
    if (c.rope_scaling != RopeScaling::none && c.rope_scaling != RopeScaling::yarn &&
        !(c.rope_scaling == RopeScaling::llama3 && c.arch == Arch::llama) && !(c.rope_scaling == RopeScaling::linear && hook->linear) &&
        !(c.rope_scaling == RopeScaling::longrope && c.arch == Arch::phi3))
        bad_config(dir, "rope scaling '" + std::string(rope_scaling_name(c.rope_scaling)) + "' is not one journey converts for " + arch);
    if (c.rope_scaling == RopeScaling::yarn) {
        if (!hook->yarn) bad_config(dir, "rope_scaling type 'yarn' is not one journey converts for " + arch);
        // GGUF has no key for transformers' "truncate": false; llama.cpp's converter drops it.
        if (!c.rope_yarn_truncate)
            spdlog::warn("{}: rope_scaling \"truncate\": false is not stored in GGUF: the file rounds the YaRN band's ends, as "
                         "llama.cpp computes it (logits differ slightly from the directory's)",
                         (dir / "config.json").string());
    }

    // ---- tensors -----------------------------------------------------------------------------
    std::vector<OutTensor> tensors;
    std::vector<std::string> unknown;
    // gguf-py's parameter count (GGUFWriter.get_total_parameter_count): an experts' tensor of 3
    // dimensions counts once per expert in the size label ("8x330K").
    int64_t total_params = 0, shared_params = 0, expert_params = 0, expert_sum = 0, expert_tensors = 0;
    auto add = [&](OutTensor o) {
        int64_t n = 1;
        for (int64_t d : o.shape) n *= d;
        total_params += n;
        if (o.name.find("_exps.") != std::string::npos && o.shape.size() >= 3 && o.shape[0] > 0) {
            expert_params += n / o.shape[0];
            expert_sum += o.shape[0];
            ++expert_tensors;
        } else {
            shared_params += n;
        }
        tensors.push_back(std::move(o));
    };
    ExpertConverter experts(c, *traits, weights, dense, add);
    // SmolLM3: llama.cpp has no key for its NoPE layers and skips rope on every 4th (its step).
    if (c.arch == Arch::smollm3)
        for (int l = 0; l < c.n_layer; ++l)
            if (c.rotates(l) != ((l + 1) % 4 != 0))
                bad_config(dir, "no_rope_layers other than every 4th layer cannot be stored in GGUF (llama.cpp fixes that step)");
    // Phi3MiniModel.generate_extra_tensors: the LongRoPE factors as tensors, before the others,
    // and its attention factor from the context ratio (not rope_scaling's attention_factor).
    std::optional<float> longrope_attn_factor;
    if (c.rope_scaling == RopeScaling::longrope && !c.rope_long_factors.empty()) {
        const double scale = double(c.n_ctx) / c.rope_original_ctx;
        longrope_attn_factor = float(scale > 1.0 ? std::sqrt(1.0 + std::log(scale) / std::log(double(c.rope_original_ctx))) : 1.0);
        for (const auto& [t, v] : {std::pair{Tensor::rope_factors_long, &c.rope_long_factors},
                                   std::pair{Tensor::rope_factors_short, &c.rope_short_factors}}) {
            auto data = std::make_shared<std::vector<float>>(*v);
            OutTensor o{gguf_tensor_name(t), {int64_t(data->size())}, DType::F32, nullptr, {}};
            o.row = [data](int64_t, float* dst) { std::copy(data->begin(), data->end(), dst); };
            add(std::move(o));
        }
    }
    // Gemma4Model.generate_extra_tensors: the full layers' proportional rope as divisors.
    if (c.arch == Arch::gemma4 && !c.rope_freq_factors.empty()) {
        auto data = std::make_shared<std::vector<float>>(c.rope_freq_factors);
        OutTensor o{gguf_tensor_name(Tensor::rope_freqs), {int64_t(data->size())}, DType::F32, nullptr, {}};
        o.row = [data](int64_t, float* dst) { std::copy(data->begin(), data->end(), dst); };
        add(std::move(o));
    }
    if (c.rope_scaling == RopeScaling::llama3 && c.arch == Arch::llama) {
        auto data = std::make_shared<std::vector<float>>(llama3_rope_factors(c));
        OutTensor o{gguf_tensor_name(Tensor::rope_freqs), {int64_t(data->size())}, DType::F32, nullptr, {}};
        o.row = [data](int64_t, float* dst) { std::copy(data->begin(), data->end(), dst); };
        add(std::move(o));
    }
    // A tied checkpoint storing the shared matrix as lm_head.weight only: written as the token
    // embedding, the file llama.cpp's converter makes of the checkpoint that stores it so.
    const HfName* hf_embd = nullptr;
    for (const HfName& n : traits->hf_names)
        if (n.tensor == Tensor::tok_embd) hf_embd = &n;
    bool has_embd = false, has_output = false;
    for (const auto& [hf_name, t] : st.tensors) {
        const std::string name = hf_name.starts_with(hf_optional_prefix) ? hf_name.substr(hf_optional_prefix.size()) : hf_name;
        const Match m = match_hf(*traits, name);
        has_embd = has_embd || (m.hf && m.hf->tensor == Tensor::tok_embd);
        has_output = has_output || (m.hf && m.hf->tensor == Tensor::output);
    }
    const bool lm_head_only = c.tied_output && !has_embd && has_output && hf_embd;
    // Two passes: the MXFP4 experts first (GptOssModel.generate_extra_tensors writes them before
    // the others), then the rest.
    for (const bool first : {true, false})
    for (const auto& [hf_name, t] : st.tensors) {
        if ((t.dtype == DType::MXFP4) != first) continue;
        std::string name = hf_name;
        if (name.starts_with(hf_optional_prefix)) name = name.substr(hf_optional_prefix.size());
        if (hf_tensor_ignorable(name)) continue;
        // A wrapper's text tensors by their text model's names; its other parts (vision) left out.
        std::string direct;  // a GGUF name the hook gives (a tensor with no role in the row)
        if (wrapper)
            for (const HfRename& r : wrapper->renames)
                if (name.starts_with(r.from)) {
                    name = r.to + name.substr(std::string_view(r.from).size());
                    break;
                }
        if (hook->rename) direct = hook->rename(hf, name);
        if (!direct.empty()) {
            Source s;
            s.t = &t;
            s.shape = t.shape;
            s.plus_one = traits->hf_norm_plus_one && direct.ends_with("norm.weight");  // (llama.cpp: its renamed *norm.weight)
            add(make_out(direct, s.shape.size() <= 1 ? DType::F32 : dense, s));
            continue;
        }
        if (wrapper) {
            bool unused = false;
            for (const char* p : wrapper->unused) unused = unused || name.starts_with(p);
            if (unused) continue;
        }
        Match m = match_hf(*traits, name);
        if (lm_head_only && m.hf && m.hf->tensor == Tensor::output) m.hf = hf_embd;
        if (m.hf && m.hf->tensor != Tensor::output &&
            std::find(traits->tensors.begin(), traits->tensors.end(), m.hf->tensor) == traits->tensors.end())
            m = {};  // a tensor this family's block does not read (e.g. a Llama q bias): refused below
        if (!m.hf) {
            unknown.push_back(hf_name);
            continue;
        }
        if (m.layer >= c.n_layer + (hook->rename ? c.n_nextn : 0))  // (MTP layers: after the blocks)
            throw ModelError(weights.string() + ": tensor '" + hf_name + "' is in layer " + std::to_string(m.layer) + " of a " +
                             std::to_string(c.n_layer) + "-layer model");
        if (experts.take(*m.hf, m.layer, m.expert, hf_name, t)) continue;
        Source s;
        s.t = &t;
        s.shape = t.shape;
        if (m.hf->layout == Layout::Conv1D) {
            s.transpose = true;
            s.shape = {t.shape[1], t.shape[0]};
        }
        if (hook->modify_tensor) hook->modify_tensor(m.hf->tensor, hf_name, hf, s);
        s.plus_one = traits->hf_norm_plus_one && is_norm(m.hf->tensor);
        if (hook->split) {  // one checkpoint tensor, several in the file (matrices: the output type)
            const auto parts = hook->split(m.hf->tensor, hf_name, hf, s);
            for (const auto& [part, ps] : parts) add(make_out(gguf_tensor_name(part, m.layer), dense, ps));
            if (!parts.empty()) continue;
        }
        // convert_hf_to_gguf's type rule: 1-D tensors, norms, learned positions and non-.weight
        // tensors stay F32; other weights take the output type.
        const std::string gguf = gguf_tensor_name(m.hf->tensor, m.layer);
        const bool keep_f32 = s.shape.size() <= 1 || is_norm(m.hf->tensor) || m.hf->tensor == Tensor::pos_embd ||
                              m.hf->tensor == Tensor::ssm_conv1d || m.hf->tensor == Tensor::ffn_gate_inp ||
                              m.hf->tensor == Tensor::ffn_gate_inp_shexp || !gguf.ends_with(".weight");
        add(make_out(gguf, keep_f32 ? DType::F32 : dense, s));
        // GPT-2 checkpoints have no lm_head: llama.cpp's converter leaves output tied.
    }
    if (!unknown.empty())
        throw ModelError(weights.string() + ": tensor '" + excerpt(unknown.front(), 60) + "' is not part of the " + arch +
                         " architecture (journey refuses rather than drop it)");
    if (tensors.empty()) throw ModelError(weights.string() + ": no tensors");
    experts.finish();
    // The vocabulary is padded to config.json's vocab_size: a size the embedding does not hold
    // (2^30) made the converter build a billion [PAD] tokens (19 GB) for a file journey refuses.
    for (const OutTensor& o : tensors)
        if (o.name == gguf_tensor_name(Tensor::tok_embd) && !o.shape.empty() && o.shape[0] != c.n_vocab)
            bad_config(dir, "vocab_size " + std::to_string(c.n_vocab) + " but the token embedding holds " +
                                std::to_string(o.shape[0]) + " rows");

    // ---- metadata ------------------------------------------------------------------------------
    GgufWriter w;
    w.set_str("general.architecture", arch);
    KeyWriter keys(w, arch);
    if (longrope_attn_factor) keys.f32(Key::rope_scaling_attn_factor, *longrope_attn_factor);
    w.set_str("general.type", "model");
    write_sampling(w, dir);
    const std::string label = expert_tensors > 0 ? std::to_string(expert_sum / expert_tensors) + "x" + size_label(shared_params + expert_params)
                                                 : size_label(total_params);
    write_naming(w, dir, config, total_params, label);
    hook->set_gguf_parameters(keys, hf);
    w.set_u32("general.quantization_version", 2);
    convert_vocab(w, dir, model_type, config);  // (a wrapper's: with text_config's vocab_size)
    if (hook->set_vocab_extra) hook->set_vocab_extra(w);

    if (!quantized) {
        write_model(w, tensors, out, progress);
        return;
    }
    // llama-quantize of that F32 file: its key order, tensor order and type choices.
    set_file_type(w, target);
    write_model(w, plan_quantized(tensors, target, {arch, c.n_layer + c.n_nextn, c.n_head, c.n_kv_head, c.n_expert}), out, progress);
}

}  // namespace

}  // namespace journey
