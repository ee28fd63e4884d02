// A loaded model: its file(s), configuration, bound weights and tokenizer, ready for Sessions.
#pragma once
#include <filesystem>
#include <memory>
#include <vector>

#include "journey/model/config.h"
#include "journey/formats/model_file.h"
#include "journey/text/tokenizer.h"
#include "journey/model/weights.h"

namespace journey {

struct LoadOptions {
    bool tokenizer = true;  // false: weights only (tokenizer() must not be called)
    // A tokenizer file to use instead of the one stored with the model: llama2.c's
    // tokenizer.bin (required for a llama2.c checkpoint, which stores none), or a tokenizer.json.
    std::filesystem::path tokenizer_path = {};
    // true: the weight matrices are read in place from the file's mapping (--mmap: the fastest
    // load, for a command that reads few weights). false: the matrices one token reads are copied
    // at load into huge pages, which the one-token kernels stream faster (Weights::bind).
    bool mmap = false;
};

class Model {
public:
    // `path` is one of
    //   a Hugging Face directory: config.json (model_type gpt2 or llama), model.safetensors or
    //     model.safetensors.index.json, tokenizer.json or vocab.json + merges.txt;
    //   a .safetensors file inside such a directory;
    //   a .gguf file (general.architecture gpt2 or llama; tokenizer from its metadata);
    //   a llama2.c checkpoint (.bin), with opts.tokenizer_path naming its tokenizer.bin.
    // Throws ModelError naming what is missing or broken.
    static std::unique_ptr<Model> load(const std::filesystem::path& path, const LoadOptions& opts = {});

    // Assemble from parts (other format readers, tests). Binds and checks the weights, and the
    // tokenizer's vocabulary against them when a tokenizer is given.
    Model(ModelFile file, ModelConfig config, std::unique_ptr<Tokenizer> tokenizer, bool mmap = false);
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;

    const ModelConfig& config() const { return config_; }
    // Layer l's shapes (head width, rotated dims, MLP width): config() unless they vary per layer (Gemma 4).
    const ModelConfig& layer_config(int layer) const {
        return layer_configs_.empty() ? config_ : layer_configs_[static_cast<size_t>(layer)];
    }
    const Weights& weights() const { return weights_; }
    const ModelFile& file() const { return file_; }
    const std::filesystem::path& source() const { return source_; }  // what the user named
    bool has_tokenizer() const { return tokenizer_ != nullptr; }
    const Tokenizer& tokenizer() const;  // throws ModelError when loaded without one
    int64_t n_params() const { return weights_.n_params(); }
    DType weight_dtype() const { return weights_.main_dtype(); }
    // The rotary inverse frequencies of layer `layer` in a context of n_ctx positions, [R/2] for
    // the R rotated dimensions (model/rope_freq.h): Gemma 3's sliding layers have their own;
    // longrope uses its long factors when n_ctx exceeds the original context (as llama.cpp).
    const float* rope_inv_freq(int layer, int n_ctx) const;
    // What cos and sin are multiplied by in that layer (yarn / longrope attention factor; else 1).
    float rope_mscale(int layer) const;

private:
    std::filesystem::path source_;
    ModelFile file_;
    ModelConfig config_;
    Weights weights_;
    std::unique_ptr<Tokenizer> tokenizer_;
    std::vector<ModelConfig> layer_configs_;  // per layer, when the shapes vary (Gemma 4); else empty
    std::vector<float> rope_inv_freq_;        // global layers (longrope: short factors)
    std::vector<float> rope_inv_freq_long_;   // longrope: long factors
    std::vector<float> rope_inv_freq_local_;  // Gemma 3's sliding layers

    bool local_rope(int layer) const;
};

// Where the model comes from when -m is not given: $JOURNEY_MODEL if set, else the one installed
// beside the binary (<exe>/../share/journey/models/default), else models/default in the source
// tree. Empty if none exists.
std::filesystem::path default_model_path();

}  // namespace journey
