// Non-owning, shape-checked views of a model's weights, bound by name from a ModelFile.
// Every view points into the read-only mapping (F32 matrices are used in place; F16/BF16
// matrices are read in place by the matmul kernel). Shapes are checked once, at bind time.
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <span>
#include <vector>

#include "journey/kernels/matrix.h"
#include "journey/model/config.h"
#include "journey/formats/model_file.h"
#include "journey/formats/tensor.h"

namespace journey {

// One layer's experts (mixture of experts: src/model/moe.cpp), n_expert of each that the layer
// has. A matrix is a tensor of its own (HF per-expert tensors) or one expert's slice of a stacked
// [E, out, in] tensor (GGUF ffn_*_exps, HF gpt-oss): whole rows, so a quantized slice is an offset.
// Fe = n_ff_exp.
struct Experts {
    std::vector<Matrix> gate, up, down;    // (C -> Fe), (C -> Fe), (Fe -> C)
    std::vector<Matrix> gate_up;           // (C -> 2Fe) HF gpt-oss: gate and up interleaved (g0 u0 g1 u1 ...)
    std::vector<Vector> gate_b, up_b, down_b, gate_up_b;  // gpt-oss's biases (gate_up_b interleaved too)
};

// One transformer block. C = n_embd, F = n_ff, H = n_head, Hkv = n_kv_head, D = head_dim.
// A field an architecture does not use stays empty; the forward pass applies the optional ones
// (biases, q/k norms, post-norms) exactly when they are bound.
struct LayerWeights {
    Vector attn_norm_w, attn_norm_b;  // (C)             gpt2 ln_1 / llama input_layernorm
    Matrix attn_qkv;                  // (C -> H*D + 2*Hkv*D)  gpt2 attn.c_attn, phi3 qkv_proj: fused q|k|v
    Vector attn_qkv_b;                // (H*D + 2*Hkv*D)
    Matrix attn_q, attn_k, attn_v;    // (C -> H*D), (C -> Hkv*D) x2   llama q/k/v_proj
    Vector attn_q_b, attn_k_b, attn_v_b;  // (H*D), (Hkv*D) x2     qwen2's biases
    Vector attn_q_norm, attn_k_norm;  // (D)             qwen3: RMSNorm of each head's q and k, before rope
    Matrix attn_out;                  // (H*D -> C)      gpt2 attn.c_proj / llama o_proj
    Vector attn_out_b;                // (C)
    Vector attn_post_norm;            // (C)             gemma2: RMSNorm of the attention output
    Vector mlp_norm_w, mlp_norm_b;    // (C)             gpt2 ln_2 / llama post_attention_layernorm
    Matrix mlp_up;                    // (C -> F)        gpt2 mlp.c_fc / llama up_proj
    Vector mlp_up_b;                  // (F)
    Matrix mlp_gate;                  // (C -> F)        llama gate_proj
    Matrix mlp_gate_up;               // (C -> 2F)       phi3 gate_up_proj: gate | up
    Matrix mlp_down;                  // (F -> C)        gpt2 mlp.c_proj / llama down_proj
    Vector mlp_down_b;                // (C)
    Vector mlp_post_norm;             // (C)             gemma2: RMSNorm of the MLP output
    // Mixture of experts: when the router is bound, the MLP is the experts (the mlp_* fields stay empty).
    Vector attn_sinks;                // (H)             gpt-oss: one logit per head in the softmax's denominator
    Matrix moe_router;                // (C -> E)        ffn_gate_inp / mlp.gate / mlp.router
    Vector moe_router_b;              // (E)             gpt-oss
    Experts experts;
    // A shared expert beside the routed ones (Qwen3.5-MoE; Fs = n_ff_shexp): its SwiGLU MLP and
    // the gate row whose sigmoid scales its output.
    Matrix shexp_gate_inp;            // (C -> 1)        mlp.shared_expert_gate / ffn_gate_inp_shexp
    Matrix shexp_gate, shexp_up;      // (C -> Fs)
    Matrix shexp_down;                // (Fs -> C)
    // Hybrid: a Gated DeltaNet layer (src/model/delta_net.cpp; Hk/Hv key/value heads of width S,
    // CH = 2*Hk*S + Hv*S conv channels). Its out_proj is attn_out (Hv*S -> C); a full-attention
    // layer with an output gate has attn_q (C -> 2*H*D): [q_h | gate_h] per head.
    Matrix ssm_qkv;                   // (C -> CH)       linear_attn.in_proj_qkv: q | k | v
    Matrix ssm_gate;                  // (C -> Hv*S)     in_proj_z: the gated norm's gate
    Matrix ssm_beta, ssm_alpha;       // (C -> Hv)       in_proj_b (beta = sigmoid), in_proj_a (decay)
    Vector ssm_conv1d;                // (CH * K)        conv1d taps, channel-major [CH][K], as float
    Vector ssm_dt, ssm_a;             // (Hv)            dt_bias; A = -exp(A_log) (GGUF stores A)
    Vector ssm_norm;                  // (S)             the gated RMSNorm's gain (plain, not 1 + w)
    // Qwen3-Next stores the projections fused, grouped per key head (R = Hv/Hk value heads each):
    Matrix ssm_qkvz;                  // (C -> CH + Hv*S) in_proj_qkvz: [q | k | v (R S) | z (R S)] per key head
    Matrix ssm_ba;                    // (C -> 2 Hv)     in_proj_ba / ssm_ba: [b (R) | a (R)] per key head
    // Gemma 4: the per-layer embedding's gate (C -> P), projection (P -> C) and post-norm (C);
    // the scalar the layer's output is multiplied by (1).
    Matrix ple_gate, ple_proj;
    Vector ple_post_norm, out_scale;

    // The router and every expert matrix (none in a dense block).
    std::vector<Matrix*> moe_matrices() {
        std::vector<Matrix*> v;
        if (moe_router) v.push_back(&moe_router);
        for (auto* list : {&experts.gate, &experts.up, &experts.down, &experts.gate_up})
            for (Matrix& m : *list) v.push_back(&m);
        return v;
    }
    std::vector<const Matrix*> moe_matrices() const {
        std::vector<const Matrix*> v;
        for (Matrix* m : const_cast<LayerWeights*>(this)->moe_matrices()) v.push_back(m);
        return v;
    }

    // Every matrix field (the unused ones empty), for what goes over all of them.
    std::array<Matrix*, 21> matrices() {
        return {&attn_qkv, &attn_q, &attn_k, &attn_v, &attn_out, &mlp_up, &mlp_gate, &mlp_gate_up, &mlp_down,
                &ssm_qkv, &ssm_gate, &ssm_beta, &ssm_alpha, &ssm_qkvz, &ssm_ba, &ple_gate, &ple_proj,
                &shexp_gate_inp, &shexp_gate, &shexp_up, &shexp_down};
    }
    std::array<const Matrix*, 21> matrices() const {
        return {&attn_qkv, &attn_q, &attn_k, &attn_v, &attn_out, &mlp_up, &mlp_gate, &mlp_gate_up, &mlp_down,
                &ssm_qkv, &ssm_gate, &ssm_beta, &ssm_alpha, &ssm_qkvz, &ssm_ba, &ple_gate, &ple_proj,
                &shexp_gate_inp, &shexp_gate, &shexp_up, &shexp_down};
    }
};

struct Weights {
    Matrix tok_embd;                  // (n_vocab, C) rows are token vectors   wte
    Matrix pos_embd;                  // (n_ctx, C)                            wpe (learned positions)
    std::vector<LayerWeights> layers; // n_layer
    Vector final_norm_w, final_norm_b;// (C)                                   ln_f
    Matrix output;                    // (C -> n_vocab), Linear; == tok_embd when tied
    Vector rope_freqs;                // (R/2) GGUF Llama 3: divisors of the rotary frequencies (R: rotated dims)
    Vector rope_long, rope_short;     // (R/2) GGUF longrope (Phi-3.5): divisors for long / short contexts
    // Gemma 4's per-layer embeddings: the table (n_vocab, L*P), the projection (C -> L*P) of the
    // scaled token embedding and the RMSNorm gain over each layer's P values.
    Matrix ple_embd, ple_model_proj;
    Vector ple_proj_norm;
    // Tensors of the parts of a wrapping checkpoint that journey does not run (Gemma 3's vision
    // tower and projector), deliberately not bound; and what they are.
    int64_t set_aside = 0;
    std::string set_aside_what;

    // Binds every tensor the architecture's row names; throws ModelError naming the file and
    // tensor when one is missing, has the wrong shape or an unsupported dtype, or when the file
    // holds a tensor the architecture does not name (it would be silently ignored).
    // `in_place`: the matrices one token reads stay in the file's mapping instead of being
    // copied into huge pages (copy_for_kernels, weights.cpp); the same math either way.
    static Weights bind(const ModelFile& file, const ModelConfig& config, bool in_place = false);

    int64_t n_params() const;  // counted from the bound views (tied output counted once)
    // Mixture of experts: the parameters one token uses (its n_expert_used experts of each layer,
    // not the others); n_params() for a dense model.
    int64_t n_active_params() const;
    // The type holding most of the blocks' matrix bytes (a Q4_K_M file: Q4_K, though its token
    // embedding may be Q6_K); the token embedding's for a model without blocks.
    DType main_dtype() const;
    // The matrices one token's step reads whole (each block's, and the output projection), as the
    // kernels read them (a regrouped or rewritten copy where there is one). The embeddings, of
    // which a token reads one row, and the vectors are left out.
    std::vector<std::span<const std::byte>> token_reads() const;

    // The blocks' matrices with their GGUF names (an expert: its stacked tensor's name, its index
    // and the experts' count), as llama.cpp names the weights of its products (imatrix).
    struct NamedMatrix {
        const Matrix* m;
        std::string name;
        int expert = 0, n_expert = 1;
    };
    std::vector<NamedMatrix> named_matrices(const ModelConfig& config) const;

private:
    int n_expert_used_ = 0;  // mixture of experts: the experts a token reads (token_reads, n_active_params)
    std::deque<std::vector<float>> converted_;  // F32 copies of small non-F32 vectors
    // Copies the kernels read instead of the mapping: Q4_K matrices regrouped 16 rows at a time
    // (Matrix::rows16), F16/BF16 Conv1D matrices rewritten as Linear, and (unless in_place) every
    // other matrix a token reads, byte for byte, in huge pages (weights.cpp).
    std::vector<std::shared_ptr<std::byte>> packed_;
    void copy_for_kernels(const ModelFile& file, bool in_place);
};

// The memory the kernel could still give us, in bytes (MemAvailable: free memory plus the page
// cache it can drop, which includes the model file's own pages); 0 if unknown.
size_t available_memory();

}  // namespace journey
