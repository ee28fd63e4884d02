// The shape and the architecture facts of a model, independent of the file it came from.
// GPT-2 and Llama are two rows of the same description: the forward pass reads the kinds
// (norm, activation, position) instead of asking "is this GPT-2?".
#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "journey/kernels/matrix.h"  // RopePairing

namespace journey {

enum class Arch { gpt2, llama };
enum class NormKind { layernorm, rmsnorm };       // LayerNorm (weight + bias) or RMSNorm (weight)
enum class ActivationKind { gelu_new, swiglu };    // MLP: c_fc -> gelu_new -> c_proj, or SiLU(gate)*up
enum class PositionKind { learned, rope };         // added position embedding, or rotary

std::string_view arch_name(Arch a);

// What an architecture's block is made of: one row per architecture (src/model/config.cpp).
struct ArchTraits {
    Arch arch;
    const char* name;  // GGUF general.architecture, HF model_type
    NormKind norm;
    ActivationKind activation;
    PositionKind position;
};
// The row named `name`, or nullptr for an architecture journey does not know.
const ArchTraits* find_arch(std::string_view name);

struct ModelConfig;
// Sets c's arch and its norm, activation and position kinds from the row.
void apply_traits(ModelConfig& c, const ArchTraits& t);

struct ModelConfig {
    Arch arch = Arch::gpt2;
    int n_vocab = 0;     // rows of the token embedding / unembedding
    int n_ctx = 0;       // longest sequence (positions)
    int n_embd = 0;      // residual stream width C
    int n_layer = 0;
    int n_head = 0;      // query heads
    int n_kv_head = 0;   // key/value heads (== n_head without grouped-query attention)
    int head_dim = 0;    // per head; n_embd / n_head unless the checkpoint says otherwise
    int n_ff = 0;        // MLP hidden width
    float norm_eps = 1e-5f;
    float rope_theta = 10000.0f;
    RopePairing rope_pairing = RopePairing::none;
    bool tied_output = true;  // logits use the token embedding when there is no separate lm_head
    ActivationKind activation = ActivationKind::gelu_new;
    NormKind norm = NormKind::layernorm;
    PositionKind position = PositionKind::learned;

    // Throws ModelError naming `source` when the numbers cannot describe a working model.
    void validate(const std::string& source) const;
};

// From a Hugging Face config.json (model_type "gpt2" or "llama"). `source` names the file in
// errors. Llama checkpoints from HF pair rotary dimensions as (i, i + head_dim/2).
ModelConfig config_from_hf(const nlohmann::json& j, const std::string& source);

struct ModelFile;
// From GGUF-style metadata (a GGUF file, or a llama2.c checkpoint, whose reader uses the same
// keys): general.architecture, then <arch>.embedding_length, .block_count, .feed_forward_length,
// .context_length, .attention.head_count[_kv], .attention.layer_norm[_rms]_epsilon,
// .rope.freq_base, .rope.dimension_count. The vocabulary size is token_embd.weight's row count;
// the output is tied when there is no output.weight. Rotary pairs are (2i, 2i+1).
// Throws ModelError naming the file and the missing or wrong key.
ModelConfig config_from_gguf(const ModelFile& file);

}  // namespace journey
