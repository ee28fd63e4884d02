// What a family's conversion adds to the generic one (convert_hf.cpp), as llama.cpp's
// convert_hf_to_gguf.py registers one class per family: the "<arch>." metadata keys in the order
// its converter writes them (set_gguf_parameters), and a change to a tensor's rows
// (modify_tensors: Llama's q/k permutation). Names, shapes and keys themselves come from the model
// stage's tables (arch.h, gguf_keys.h): a hook only says which, in what order, from which field.
// A family converts exactly when it has a hook.
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "journey/formats/gguf_writer.h"
#include "journey/formats/tensor.h"
#include "journey/model/config.h"
#include "journey/model/gguf_keys.h"

namespace journey {

// The directory being converted: its config.json as written (for the keys whose presence llama.cpp's
// converter tests) and the ModelConfig the runtime reads from it (for every value).
struct HfModel {
    const std::filesystem::path& dir;
    const std::filesystem::path& weights;  // model.safetensors[.index.json], for errors
    const nlohmann::json& json;
    const ModelConfig& config;
    uint32_t file_type;  // general.file_type of the dense conversion

    bool has(const char* key) const { return json.contains(key); }
    bool has_number(const char* key) const { return json.contains(key) && json[key].is_number(); }
    bool has_integer(const char* key) const { return json.contains(key) && json[key].is_number_integer(); }
    [[noreturn]] void refuse(const std::string& what) const;
};

// Writes "<arch>.<key>" through the key table.
class KeyWriter {
public:
    KeyWriter(GgufWriter& w, std::string arch) : w_(w), arch_(std::move(arch)) {}
    void u32(Key k, int64_t v) { w_.set_u32(key_of(arch_, k), uint32_t(v)); }
    void f32(Key k, float v) { w_.set_f32(key_of(arch_, k), v); }
    // The key's own ModelConfig field (gguf_keys.h), as u32 or f32.
    void field(Key k, const ModelConfig& c);
    void file_type(uint32_t ftype) { w_.set_u32("general.file_type", ftype); }
    GgufWriter& writer() { return w_; }
    const std::string& arch() const { return arch_; }

private:
    GgufWriter& w_;
    std::string arch_;
};

// One safetensors tensor as float rows of the output: a row permutation and/or a transpose;
// `plus_one` adds 1 (Gemma's norms).
struct Source {
    const TensorInfo* t = nullptr;
    bool transpose = false;                      // HF [in, out] (GPT-2's Conv1D) -> [out, in]
    std::function<int64_t(int64_t)> row_map;     // output row -> source row
    std::function<int64_t(int64_t)> col_map;     // output column -> source column (Qwen3.5's out_proj)
    bool plus_one = false;
    bool neg_exp = false;                        // -exp(w) (Qwen3.5's A_log -> A)
    // > 0: a 1-D tensor read in chunks of this many values, output chunk i from source chunk
    // row_map(i) (GPT-NeoX's per-head qkv bias).
    int64_t chunk = 0;
    std::vector<int64_t> shape;                  // output shape
};

struct ConverterHook {
    Arch arch;
    void (*set_gguf_parameters)(KeyWriter& w, const HfModel& hf);
    // Optional: changes tensor `t`'s source (hf_name names it in errors).
    void (*modify_tensor)(Tensor t, const std::string& hf_name, const HfModel& hf, Source& s) = nullptr;
    // Optional: keys after the tokenizer's (Gemma 2's add_space_prefix).
    void (*set_vocab_extra)(GgufWriter& w) = nullptr;
    // The hook writes YaRN rope scaling (TextModel.set_gguf_parameters' rope keys).
    bool yarn = false;
    // The hook writes linear rope scaling (TextModel.set_gguf_parameters' rope keys).
    bool linear = false;
    // Optional: renames a checkpoint tensor before it is matched against the family's HF names
    // (Qwen3.5's MTP head: mtp.layers.<i>.* -> model.layers.<n_layer + i>.*). Returns the GGUF
    // name itself for a tensor that has no role in the family's row (the MTP head's own
    // projection and norms), else "" (name matched as usual).
    std::string (*rename)(const HfModel& hf, std::string& name) = nullptr;
    // The family's multimodal wrapper checkpoint (arch.h's HfWrapper: Qwen3_5ForConditionalGeneration)
    // converts as its text model, as llama.cpp's converter does: text_config's keys over the top
    // level's, the text tensors renamed, the other parts' tensors (vision tower) left out.
    bool wrapper = false;
    // Optional: one checkpoint tensor written as several (Qwen3-Next's in_proj_qkvz as attn_qkv and
    // attn_gate): the parts' roles and sources, in the converter's order; empty: written as one.
    std::vector<std::pair<Tensor, Source>> (*split)(Tensor t, const std::string& hf_name, const HfModel& hf, const Source& s) = nullptr;
};

// The hook of a family, or nullptr when journey does not convert it.
const ConverterHook* converter_hook(Arch a);

}  // namespace journey
