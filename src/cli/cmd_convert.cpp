// journey convert -m HF_DIR -o OUT.gguf [--type T]: a Hugging Face directory to a GGUF file in
// one step. At f32/f16/bf16 the file is what llama.cpp's convert_hf_to_gguf.py writes (same
// metadata, tokenizer, tensor names, order and bytes); at a quantized type it is what
// llama-quantize then makes of the F32 file (its tensor order, type choices and block bytes).
// Tensors are streamed one at a time from the mapped safetensors.
#include <cmath>
#include <algorithm>
#include <memory>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "convert_vocab.h"
#include "journey/errors.h"
#include "journey/formats/json_file.h"
#include "journey/formats/safetensors_reader.h"
#include "journey/kernels/convert.h"
#include "journey/model/arch.h"
#include "model_writer.h"
#include "quantize_plan.h"

namespace journey::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// GGUF tensor names of the roles in arch.h (llama.cpp's LLM_TENSOR_* names), "{}" = layer.
const char* gguf_name(Tensor t) {
    switch (t) {
        case Tensor::tok_embd: return "token_embd.weight";
        case Tensor::pos_embd: return "position_embd.weight";
        case Tensor::output_norm: return "output_norm.weight";
        case Tensor::output_norm_b: return "output_norm.bias";
        case Tensor::output: return "output.weight";
        case Tensor::rope_freqs: return "rope_freqs.weight";
        case Tensor::rope_factors_long: return "rope_factors_long.weight";  // longrope (convert refuses it today)
        case Tensor::rope_factors_short: return "rope_factors_short.weight";
        case Tensor::attn_norm: return "blk.{}.attn_norm.weight";
        case Tensor::attn_norm_b: return "blk.{}.attn_norm.bias";
        case Tensor::attn_qkv: return "blk.{}.attn_qkv.weight";
        case Tensor::attn_qkv_b: return "blk.{}.attn_qkv.bias";
        case Tensor::attn_q: return "blk.{}.attn_q.weight";
        case Tensor::attn_q_b: return "blk.{}.attn_q.bias";
        case Tensor::attn_k: return "blk.{}.attn_k.weight";
        case Tensor::attn_k_b: return "blk.{}.attn_k.bias";
        case Tensor::attn_v: return "blk.{}.attn_v.weight";
        case Tensor::attn_v_b: return "blk.{}.attn_v.bias";
        case Tensor::attn_q_norm: return "blk.{}.attn_q_norm.weight";
        case Tensor::attn_k_norm: return "blk.{}.attn_k_norm.weight";
        case Tensor::attn_out: return "blk.{}.attn_output.weight";
        case Tensor::attn_out_b: return "blk.{}.attn_output.bias";
        case Tensor::attn_post_norm: return "blk.{}.post_attention_norm.weight";
        case Tensor::ffn_norm: return "blk.{}.ffn_norm.weight";
        case Tensor::ffn_norm_b: return "blk.{}.ffn_norm.bias";
        case Tensor::ffn_up: return "blk.{}.ffn_up.weight";
        case Tensor::ffn_up_b: return "blk.{}.ffn_up.bias";
        case Tensor::ffn_gate: return "blk.{}.ffn_gate.weight";
        case Tensor::ffn_gate_up: return "blk.{}.ffn_up.weight";  // Phi-3: gate|up fused, as ffn_up
        case Tensor::ffn_down: return "blk.{}.ffn_down.weight";
        case Tensor::ffn_down_b: return "blk.{}.ffn_down.bias";
        case Tensor::ffn_post_norm: return "blk.{}.post_ffw_norm.weight";
        default: break;  // mixture of experts: not converted yet (issue 34)
    }
    return "";
}
bool is_norm(Tensor t) {
    using enum Tensor;
    return t == output_norm || t == attn_norm || t == attn_post_norm || t == ffn_norm || t == ffn_post_norm ||
           t == attn_q_norm || t == attn_k_norm;
}

// GPT-2's extra HF names with biases (arch.h names the weight; the bias follows its layout).
std::string with_layer(std::string pattern, int layer) {
    const auto at = pattern.find("{}");
    if (at != std::string::npos) pattern.replace(at, 2, std::to_string(layer));
    return pattern;
}

// The HF name's role and layer, from the architecture row's HF names.
struct Match {
    const HfName* hf = nullptr;
    int layer = -1;
};
Match match_hf(const ArchTraits& traits, const std::string& name) {
    for (const HfName& n : traits.hf_names) {
        const std::string p = n.name;
        const auto at = p.find("{}");
        if (at == std::string::npos) {
            if (p == name) return {&n, -1};
            continue;
        }
        const std::string pre = p.substr(0, at), post = p.substr(at + 2);
        if (name.size() <= pre.size() + post.size() || name.compare(0, pre.size(), pre) != 0 ||
            name.compare(name.size() - post.size(), post.size(), post) != 0)
            continue;
        const std::string mid = name.substr(pre.size(), name.size() - pre.size() - post.size());
        if (mid.empty() || mid.size() > 6 || mid.find_first_not_of("0123456789") != std::string::npos) continue;
        return {&n, std::stoi(mid)};
    }
    return {};
}

// ---- general.* naming, as gguf-py's Metadata heuristics derive it ------------------------------

std::vector<std::string> split(const std::string& s, char c) {
    std::vector<std::string> out;
    std::string cur;
    for (char ch : s) {
        if (ch == c) out.push_back(cur), cur.clear();
        else cur += ch;
    }
    out.push_back(cur);
    return out;
}

std::string id_to_title(const std::string& s) {
    std::string t = s;
    for (char& c : t)
        if (c == '-') c = ' ';
    std::string out;
    static const std::regex version(R"(^(v\d+(?:\.\d+)*|\d.*)$)");
    for (const std::string& w : split(t, ' ')) {
        if (w.empty()) continue;
        bool lower = false, upper = false;
        for (char c : w) lower |= bool(std::islower(static_cast<unsigned char>(c))), upper |= bool(std::isupper(static_cast<unsigned char>(c)));
        std::string word = w;
        if (lower && !upper && !std::regex_match(w, version)) {  // Python's str.title()
            bool start = true;
            for (char& c : word) {
                const bool alpha = std::isalpha(static_cast<unsigned char>(c));
                c = char(alpha ? (start ? std::toupper(static_cast<unsigned char>(c)) : std::tolower(static_cast<unsigned char>(c))) : c);
                start = !alpha;
            }
        }
        out += (out.empty() ? "" : " ") + word;
    }
    return out;
}

struct IdParts {
    std::string full, basename, finetune, version, size_label;
};
IdParts model_id_parts(const std::string& model_id, int64_t total_params) {
    IdParts r;
    std::string full = model_id;
    if (const auto slash = model_id.find('/'); slash != std::string::npos) full = model_id.substr(slash + 1);
    r.full = full;
    std::vector<std::string> parts;
    for (const std::string& p : split(full, '-'))
        if (!p.empty()) parts.push_back(p);
    std::vector<std::set<std::string>> types(parts.size());
    static const std::regex version(R"((v|iter)?\d+([.]\d+)*)", std::regex::icase);
    static const std::regex qtype(R"(i?q\d(_\w)*|b?fp?(16|32))", std::regex::icase);
    static const std::regex size(R"((([A]|\d+[x])?\d+([._]\d+)?[KMBT][\d]?|small|mini|medium|large|x?xl))", std::regex::icase);
    static const std::regex ft(R"(chat|instruct|vision|lora)", std::regex::icase);
    for (size_t i = 0; i < parts.size(); ++i) {
        std::string part = parts[i];
        if (std::regex_match(part, version)) types[i].insert("version");
        else if (std::regex_match(part, qtype)) {
            types[i].insert("type");
            for (char& c : parts[i]) c = char(std::toupper(static_cast<unsigned char>(c)));
        } else if (i > 0 && std::regex_match(part, size)) {
            for (char& c : part)
                if (c == '_') c = '.';
            if (std::isdigit(static_cast<unsigned char>(part.back()))) part = part.substr(0, part.size() - 2) + "." + part.back() + part[part.size() - 2];
            if (part.size() > 1 && std::isdigit(static_cast<unsigned char>(part[part.size() - 2])) && std::string("kmbt").find(part.back()) != std::string::npos)
                part.back() = char(std::toupper(static_cast<unsigned char>(part.back())));
            if (total_params != 0) {
                const auto scale = std::string(" KMBT").find(part.back());
                try {
                    if (scale != std::string::npos) {
                        const double label = std::stod(part.substr(0, part.size() - 1)) * std::pow(1000.0, double(scale));
                        if (total_params > 0 && std::fabs(label - double(total_params)) > double(7 * total_params / 8)) {
                            types[i].insert("finetune");
                            part.back() = char(std::tolower(static_cast<unsigned char>(part.back())));
                        }
                    }
                } catch (const std::exception&) {
                }
            }
            if (types[i].empty()) types[i].insert("size_label");
            parts[i] = part;
        } else if (i > 0 && std::regex_match(part, ft)) {
            types[i].insert("finetune");
        }
    }
    bool numeric_size = false;
    for (size_t i = 0; i < parts.size(); ++i)
        if (types[i].count("size_label"))
            for (char c : parts[i]) numeric_size |= bool(std::isdigit(static_cast<unsigned char>(c)));
    if (numeric_size)
        for (size_t i = 0; i < parts.size(); ++i)
            if (types[i].count("size_label")) {
                bool all_alpha = true;
                for (char c : parts[i]) all_alpha &= bool(std::isalpha(static_cast<unsigned char>(c)));
                if (all_alpha) types[i].erase("size_label");
            }
    bool at_start = true;
    for (size_t i = 0; i < parts.size(); ++i) {
        if (at_start && ((types[i].empty() && std::isalpha(static_cast<unsigned char>(parts[i][0]))) || types[i].count("version"))) {
            types[i].insert("basename");
        } else {
            at_start = false;
            if (types[i].empty()) types[i].insert("finetune");
        }
    }
    for (size_t k = parts.size(); k-- > 0;) {
        if (types[k].count("basename") && types[k].size() > 1) types[k].erase("basename");
        else break;
    }
    auto join = [&](const char* t, bool exclude_basename = false) {
        std::string s;
        std::set<std::string> seen;
        for (size_t i = 0; i < parts.size(); ++i)
            if (types[i].count(t) && !(exclude_basename && types[i].count("basename"))) {
                if (std::string(t) == "size_label" && !seen.insert(parts[i]).second) continue;
                s += (s.empty() ? "" : "-") + parts[i];
            }
        return s;
    };
    r.basename = join("basename");
    r.size_label = join("size_label");
    r.finetune = join("finetune");
    r.version = join("version", true);
    if (r.size_label.empty() && r.finetune.empty() && r.version.empty()) r.basename.clear();
    return r;
}

// gguf-py's size_label: the parameter count in 2 significant digits at least ("541K", "1.7M").
std::string size_label(int64_t n) {
    const double x = double(n);
    double scaled;
    const char* suffix;
    if (x > 1e12) scaled = x * 1e-12, suffix = "T";
    else if (x > 1e9) scaled = x * 1e-9, suffix = "B";
    else if (x > 1e6) scaled = x * 1e-6, suffix = "M";
    else scaled = x * 1e-3, suffix = "K";
    const std::string rounded = std::to_string(int64_t(std::nearbyint(scaled)));
    const int fix = std::max(2 - int(rounded.find_first_not_of('0') == std::string::npos ? 0 : rounded.size() - rounded.find_first_not_of('0')), 0);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f%s", fix, scaled, suffix);
    return buf;
}

// ---- the conversion ----------------------------------------------------------------------------

struct ConvertOptions {
    std::string model, out, type = "f16";
};

[[noreturn]] void bad_config(const fs::path& dir, const std::string& what) {
    throw ModelError((dir / "config.json").string() + ": " + what);
}

int64_t cfg_int(const json& c, const fs::path& dir, const char* key) {
    if (!c.contains(key) || !c[key].is_number_integer() || c[key].get<int64_t>() <= 0 || c[key].get<int64_t>() > (int64_t{1} << 31))
        bad_config(dir, std::string("'") + key + "' is missing or not a positive integer");
    return c[key].get<int64_t>();
}
std::optional<int64_t> cfg_opt_int(const json& c, const char* key) {
    if (c.contains(key) && c[key].is_number_integer()) return c[key].get<int64_t>();
    return std::nullopt;
}
std::optional<float> cfg_opt_f32(const json& c, const char* key) {
    if (c.contains(key) && c[key].is_number()) return float(c[key].get<double>());
    return std::nullopt;
}

// Tensor data of one safetensors tensor as float rows, with a row permutation and/or a
// transpose; `plus_one` adds 1 (Gemma's norms).
struct Source {
    const TensorInfo* t = nullptr;
    bool transpose = false;                      // HF [in, out] (GPT-2's Conv1D) -> [out, in]
    std::function<int64_t(int64_t)> row_map;     // output row -> source row
    bool plus_one = false;
    std::vector<int64_t> shape;                  // output shape
};

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
    auto map = s.row_map;
    const bool plus_one = s.plus_one;
    o.row = [t, cols, esize, map, plus_one](int64_t r, float* dst) {
        const int64_t src = map ? map(r) : r;
        to_float(dst, t->dtype, t->data + size_t(src * cols) * esize, cols);
        if (plus_one)
            for (int64_t c = 0; c < cols; ++c) dst[c] += 1.0f;
    };
    return o;
}

// Llama's q/k row order for llama.cpp's rope (LlamaModel.permute): within each head, rows
// (j*half + i) go to (2*i + j).
std::function<int64_t(int64_t)> llama_permute(int64_t rows, int64_t n_head) {
    const int64_t per_head = rows / n_head, half = per_head / 2;
    return [per_head, half](int64_t r) {
        const int64_t h = r / per_head, k = r % per_head, i = k / 2, j = k % 2;
        return h * per_head + j * half + i;
    };
}

void run(const ConvertOptions& opt) {
    std::string type = opt.type;
    for (char& c : type) c = char(std::tolower(static_cast<unsigned char>(c)));
    const QuantTarget* target = find_quant_target(type);
    if (!target) {
        std::string names = quant_target_names();
        for (char& c : names) c = char(std::tolower(static_cast<unsigned char>(c)));
        throw UsageError("--type: unknown type '" + excerpt(opt.type, 40) + "' (journey convert writes " + names + ")");
    }
    const fs::path dir = opt.model;
    if (!fs::is_directory(dir)) throw UsageError("-m: '" + dir.string() + "' is not a directory (journey convert reads a Hugging Face model directory)");
    if (!fs::is_regular_file(dir / "config.json")) throw ModelError(dir.string() + ": no config.json (not a Hugging Face model directory)");
    const json config = read_json_file(dir / "config.json");
    if (!config.is_object()) bad_config(dir, "is not a JSON object");
    const std::string model_type = config.value("model_type", json()).is_string() ? config["model_type"].get<std::string>() : "";
    const ArchTraits* traits = find_hf_arch(model_type);
    // Gemma 3 and GPT-NeoX run from their directories, but their GGUF keys (Gemma 3's sliding
    // layers, local rope base and scaling; GPT-NeoX's partial rotary and residual) are not written
    // here: a file without them would compute something else. Gemma 3's multimodal checkpoint
    // (model_type gemma3) is refused with its text model.
    // Mixture-of-experts families run but are not converted yet (issue 34).
    auto converts = [](const ArchTraits* t) { return t && t->arch != Arch::gemma3 && t->arch != Arch::gptneox && !t->moe; };
    if (!converts(traits)) {
        std::string names;
        for (const ArchTraits& t : arch_table())
            if (converts(&t))
                for (const char* n : t.hf_types) names += (names.empty() ? "" : ", ") + std::string(n);
        bad_config(dir, "model_type '" + excerpt(model_type, 40) + "' is not one journey converts (journey converts " + names + ")");
    }
    fs::path weights = dir / "model.safetensors";
    if (!fs::is_regular_file(weights)) weights = dir / "model.safetensors.index.json";
    if (!fs::is_regular_file(weights)) throw ModelError(dir.string() + ": no model.safetensors or model.safetensors.index.json");
    const ModelFile st = read_safetensors(weights);

    const std::string arch = traits->name;
    const Arch a = traits->arch;
    const bool quantized = dtype_block(target->base) > 1;
    // At a quantized type the F32 conversion is made first (in memory, as metadata and row
    // functions), then quantized as llama-quantize would.
    const DType dense = quantized ? DType::F32 : target->base;
    const uint32_t dense_ftype = quantized ? 0 : target->ftype;

    const int64_t n_layer = cfg_int(config, dir, a == Arch::gpt2 ? "n_layer" : "num_hidden_layers");
    const int64_t n_embd = cfg_int(config, dir, a == Arch::gpt2 ? "n_embd" : "hidden_size");
    const int64_t n_head = cfg_int(config, dir, a == Arch::gpt2 ? "n_head" : "num_attention_heads");
    const int64_t n_head_kv = a == Arch::gpt2 ? n_head : cfg_opt_int(config, "num_key_value_heads").value_or(n_head);
    const std::optional<int64_t> head_dim = cfg_opt_int(config, "head_dim");

    // ---- tensors -----------------------------------------------------------------------------
    std::vector<OutTensor> tensors;
    std::vector<std::string> unknown;
    int64_t total_params = 0;
    auto add = [&](const std::string& name, const Source& s, DType stored_hint) {
        // convert_hf_to_gguf's type rule: 1-D tensors, norms, learned positions and non-.weight
        // tensors stay F32; other weights take the output type.
        const bool keep_f32 = s.shape.size() <= 1 || name.ends_with("_norm.weight") || name == "position_embd.weight" ||
                              !name.ends_with(".weight");
        (void)stored_hint;
        tensors.push_back(make_out(name, keep_f32 ? DType::F32 : dense, s));
        int64_t n = 1;
        for (int64_t d : s.shape) n *= d;
        total_params += n;
    };
    // Llama 3's rope scaling: llama.cpp's converter stores the per-frequency factors.
    std::vector<float> rope_factors;
    const json rope = config.contains("rope_scaling") && config["rope_scaling"].is_object() ? config["rope_scaling"] : json::object();
    const std::string rope_type = rope.value("rope_type", rope.value("type", json(""))).is_string() ? rope.value("rope_type", rope.value("type", json(""))).get<std::string>() : "";
    if (!rope_type.empty() && rope_type != "llama3" && rope_type != "default")
        bad_config(dir, "rope_scaling type '" + excerpt(rope_type, 30) + "' is not one journey converts");
    if (rope_type == "llama3" && a == Arch::llama) {
        const float base = cfg_opt_f32(config, "rope_theta").value_or(10000.0f);
        const int64_t dim = head_dim.value_or(n_embd / n_head);
        const float factor = float(rope.value("factor", 8.0)), lo = float(rope.value("low_freq_factor", 1.0));
        const float hi = float(rope.value("high_freq_factor", 4.0));
        const float old_ctx = float(rope.value("original_max_position_embeddings", 8192.0));
        const float lo_wavelen = old_ctx / lo, hi_wavelen = old_ctx / hi;
        for (int64_t i = 0; i < dim; i += 2) {
            const float freq = 1.0f / std::pow(base, float(i) / float(dim));
            const float wavelen = float(2 * M_PI) / freq;
            if (wavelen < hi_wavelen) rope_factors.push_back(1.0f);
            else if (wavelen > lo_wavelen) rope_factors.push_back(factor);
            else {
                const float smooth = (old_ctx / wavelen - lo) / (hi - lo);
                rope_factors.push_back(1.0f / ((1.0f - smooth) / factor + smooth));
            }
        }
        auto data = std::make_shared<std::vector<float>>(rope_factors);
        OutTensor o{"rope_freqs.weight", {int64_t(rope_factors.size())}, DType::F32, nullptr, {}};
        o.row = [data](int64_t, float* dst) { std::copy(data->begin(), data->end(), dst); };
        tensors.push_back(o);
        total_params += int64_t(rope_factors.size());
    }
    for (const auto& [hf_name, t] : st.tensors) {
        std::string name = hf_name;
        if (a == Arch::gpt2 && name.rfind("transformer.", 0) == 0) name = name.substr(12);
        if (name.ends_with(".rotary_emb.inv_freq") || name.ends_with(".attn.bias") || name.ends_with(".attn.masked_bias")) continue;
        Source s;
        s.t = &t;
        s.shape = t.shape;
        std::string gguf;
        // GPT-2 biases are not rows of the table: ".weight" -> ".bias" of the same layer part.
        Match m = match_hf(*traits, name);
        if (!m.hf && a == Arch::gpt2 && name.ends_with(".bias")) {
            for (const HfName& n : traits->hf_names) {
                std::string p = n.name;
                if (!p.ends_with(".weight")) continue;
                p = p.substr(0, p.size() - 7) + ".bias";
                HfName tmp{n.tensor, nullptr, Layout::Linear};
                (void)tmp;
                const auto at = p.find("{}");
                if (at == std::string::npos) continue;
                const std::string pre = p.substr(0, at), post = p.substr(at + 2);
                if (name.size() > pre.size() + post.size() && name.starts_with(pre) && name.ends_with(post)) {
                    const std::string mid = name.substr(pre.size(), name.size() - pre.size() - post.size());
                    if (mid.find_first_not_of("0123456789") == std::string::npos) {
                        gguf = with_layer(gguf_name(n.tensor), std::stoi(mid));
                        gguf = gguf.substr(0, gguf.size() - 7) + ".bias";
                    }
                }
            }
        }
        if (m.hf && m.hf->tensor != Tensor::output &&
            std::find(traits->tensors.begin(), traits->tensors.end(), m.hf->tensor) == traits->tensors.end())
            m = {};  // a tensor this family's block does not read (e.g. a Llama q bias): refused below
        if (m.hf) {
            gguf = with_layer(gguf_name(m.hf->tensor), m.layer);
            if (m.hf->layout == Layout::Conv1D) {
                s.transpose = true;
                s.shape = {t.shape[1], t.shape[0]};
            }
            if (a == Arch::llama && (m.hf->tensor == Tensor::attn_q || m.hf->tensor == Tensor::attn_k)) {
                const int64_t heads = m.hf->tensor == Tensor::attn_q ? n_head : n_head_kv;
                if (t.shape.empty() || t.shape[0] % (2 * heads) != 0)
                    throw ModelError(weights.string() + ": tensor '" + hf_name + "' rows do not split into " + std::to_string(heads) + " heads");
                s.row_map = llama_permute(t.shape[0], heads);
            }
            s.plus_one = traits->hf_norm_plus_one && is_norm(m.hf->tensor);
            if (m.layer >= n_layer) throw ModelError(weights.string() + ": tensor '" + hf_name + "' is in layer " + std::to_string(m.layer) + " of a " + std::to_string(n_layer) + "-layer model");
        }
        if (gguf.empty()) {
            unknown.push_back(hf_name);
            continue;
        }
        add(gguf, s, t.dtype);
        // GPT-2 checkpoints have no lm_head: llama.cpp's converter leaves output tied.
    }
    if (!unknown.empty())
        throw ModelError(weights.string() + ": tensor '" + excerpt(unknown.front(), 60) + "' is not part of the " + arch +
                         " architecture (journey refuses rather than drop it)");
    if (tensors.empty()) throw ModelError(weights.string() + ": no tensors");

    // ---- metadata ------------------------------------------------------------------------------
    GgufWriter w;
    w.set_str("general.architecture", arch);
    w.set_str("general.type", "model");
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
    {
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
        w.set_str("general.size_label", id.size_label.empty() ? size_label(total_params) : id.size_label);
    }
    const std::string p = arch + ".";
    auto u32 = [&](const std::string& k, int64_t v) { w.set_u32(p + k, uint32_t(v)); };
    const float rms_eps = cfg_opt_f32(config, "rms_norm_eps").value_or(1e-6f);
    auto n_ctx = [&]() -> int64_t { return cfg_int(config, dir, "max_position_embeddings"); };
    auto rope_theta = [&]() { return cfg_opt_f32(config, "rope_theta"); };
    if (a == Arch::gpt2) {
        u32("block_count", n_layer);
        u32("context_length", cfg_int(config, dir, "n_ctx"));
        u32("embedding_length", n_embd);
        u32("feed_forward_length", cfg_opt_int(config, "n_inner").value_or(4 * n_embd));
        u32("attention.head_count", n_head);
        w.set_f32(p + "attention.layer_norm_epsilon", cfg_opt_f32(config, "layer_norm_epsilon").value_or(1e-5f));
        w.set_u32("general.file_type", dense_ftype);
    } else if (a == Arch::phi3) {
        if (!rope.empty() && rope_type != "default") bad_config(dir, "Phi-3 rope_scaling (LongRoPE) is not converted by journey");
        u32("context_length", n_ctx());
        u32("rope.scaling.original_context_length", cfg_opt_int(config, "original_max_position_embeddings").value_or(n_ctx()));
        u32("embedding_length", n_embd);
        u32("feed_forward_length", cfg_int(config, dir, "intermediate_size"));
        u32("block_count", n_layer);
        u32("attention.head_count", n_head);
        u32("attention.head_count_kv", n_head_kv);
        w.set_f32(p + "attention.layer_norm_rms_epsilon", rms_eps);
        const double rot = config.value("partial_rotary_factor", 1.0);
        u32("rope.dimension_count", int64_t(rot * double(n_embd)) / n_head);
        w.set_f32(p + "rope.freq_base", rope_theta().value_or(10000.0f));
        w.set_u32("general.file_type", dense_ftype);
        if (auto sw = cfg_opt_int(config, "sliding_window")) u32("attention.sliding_window", *sw);
    } else if (a == Arch::gemma2) {
        u32("context_length", n_ctx());
        u32("embedding_length", n_embd);
        u32("block_count", n_layer);
        u32("feed_forward_length", cfg_int(config, dir, "intermediate_size"));
        u32("attention.head_count", n_head);
        u32("attention.head_count_kv", n_head_kv);
        w.set_f32(p + "attention.layer_norm_rms_epsilon", rms_eps);
        u32("attention.key_length", cfg_int(config, dir, "head_dim"));
        u32("attention.value_length", cfg_int(config, dir, "head_dim"));
        w.set_u32("general.file_type", dense_ftype);
        if (auto v = cfg_opt_f32(config, "attn_logit_softcapping")) w.set_f32(p + "attn_logit_softcapping", *v);
        if (auto v = cfg_opt_f32(config, "final_logit_softcapping")) w.set_f32(p + "final_logit_softcapping", *v);
        if (auto sw = cfg_opt_int(config, "sliding_window")) u32("attention.sliding_window", *sw);
    } else {  // llama (Llama, Mistral, SmolLM), qwen2, qwen3: the converter's TextModel keys
        u32("block_count", n_layer);
        u32("context_length", n_ctx());
        u32("embedding_length", n_embd);
        u32("feed_forward_length", cfg_int(config, dir, "intermediate_size"));
        u32("attention.head_count", n_head);
        if (config.contains("num_key_value_heads")) u32("attention.head_count_kv", n_head_kv);
        if (auto th = rope_theta()) w.set_f32(p + "rope.freq_base", *th);
        w.set_f32(p + "attention.layer_norm_rms_epsilon", rms_eps);
        if (head_dim) {
            u32("attention.key_length", *head_dim);
            u32("attention.value_length", *head_dim);
        }
        w.set_u32("general.file_type", dense_ftype);
        if (a == Arch::llama) {
            u32("vocab_size", cfg_int(config, dir, "vocab_size"));
            u32("rope.dimension_count", head_dim.value_or(n_embd / n_head));
        }
        if (a == Arch::qwen2 || a == Arch::qwen3) {
            if (config.value("use_sliding_window", false)) bad_config(dir, "use_sliding_window is true (journey does not convert Qwen's sliding window)");
        }
    }
    w.set_u32("general.quantization_version", 2);
    convert_vocab(w, dir, model_type, config);
    if (a == Arch::gemma2) w.set_bool("tokenizer.ggml.add_space_prefix", false);  // Gemma2Model.set_vocab

    if (!quantized) {
        write_model(w, tensors, opt.out, "convert");
        return;
    }
    // llama-quantize of that F32 file: its key order, tensor order and type choices.
    w.remove("general.quantization_version");
    w.remove("general.file_type");
    w.set_u32("general.quantization_version", 2);
    w.set_u32("general.file_type", target->ftype);
    std::vector<PlanTensor> plan;
    for (const OutTensor& t : tensors) plan.push_back({t.name, t.shape, t.type});
    sort_like_llama_quantize(plan);
    const std::vector<DType> types = plan_types(*target, {arch, n_layer, n_head, n_head_kv}, plan);
    std::vector<OutTensor> ordered;
    for (size_t i = 0; i < plan.size(); ++i)
        for (const OutTensor& t : tensors)
            if (t.name == plan[i].name) {
                ordered.push_back(t);
                ordered.back().type = types[i];
            }
    write_model(w, ordered, opt.out, "convert");
}

}  // namespace

void register_convert(CLI::App& app) {
    auto opt = std::make_shared<ConvertOptions>();
    CLI::App* cmd = app.add_subcommand("convert", "Convert a Hugging Face model directory to a GGUF file (optionally quantized)");
    cmd->add_option("-m,--model", opt->model, "The Hugging Face directory (config.json, *.safetensors, tokenizer files)")->required();
    cmd->add_option("-o,--output", opt->out, "The GGUF file to write (written whole, then renamed into place)")->required();
    cmd->add_option("--type", opt->type,
                    "f32, f16, bf16 (as convert_hf_to_gguf.py), or q8_0, q4_0, q4_k_m, q5_k_m, q6_k, ... (then as llama-quantize)")
        ->capture_default_str();
    cmd->callback([opt] { run(*opt); });
}

}  // namespace journey::cli
