// Direct logit attribution: how much each part of the model wrote toward one token's logit
// (or the difference of two tokens' logits) at the traced position, from the one pass's values.
//
// The final residual is a sum: x = embed (+ position) + Σ_l attn_out_l + Σ_l mlp_out_l. The
// logit is final_norm(x) · u, with u the target's unembedding row (minus the contrast's row).
// The final norm is linear once its scale is frozen at its value on the whole of x (the usual
// linearisation, as TransformerLens does):
//   RMSNorm    x / rms(x) ⊙ w                 part(c) = (c · (w ⊙ u)) / rms(x)
//   LayerNorm  (x - mean x) / σ(x) ⊙ w + b    part(c) = ((c - mean c) · (w ⊙ u)) / σ(x),
//                                             plus one bias term b · u that belongs to no part
// so the parts plus the bias term are the logit, up to float rounding. A final softcap (Gemma 2)
// is left out: the parts sum to the logit before it.
//
// Heads: attn_out = Σ_h z_h · W_O[rows of h] + b_O, so each head's part is its own product (the
// trace computes it) and b_O is the layer's attention bias part. A post-attention norm (Gemma 2
// and 3) is linearised the same way, its scale frozen at its value on the whole attn_out.
// Mixture-of-experts MLPs: mlp_out = Σ_j weight_j · expert_j(x), so each chosen expert's weighted
// output (the pass's moe_expert_out rows) is its own part, and the experts add up to the MLP's part.
// A shared expert (Qwen3.5-MoE) adds sigmoid(x · g) · shared(x) after the routed experts: one more
// part of the layer (the pass's moe_shared_out row), so that experts + shared expert = mlp.
//
// Gemma 4: each block ends with resid = (resid + attn_out + mlp_out + ple_out) · s_l, ple_out the
// block's per-layer-input branch (post_norm(proj(gelu(gate(resid)) ⊙ per-layer input))) and s_l
// its layer_output_scale. The branch is one more part per layer. The scalar multiplies everything
// already in the stream, so the final residual is Σ over parts of part · Π_{k ≥ its layer} s_k
// (the embeddings carry every layer's scale): each part is reported as it arrives in the final
// residual, times that product (`LayerAttribution::carry`), and the parts still sum to the logit.
//
// Granite divides the logits by logits_scaling: the map includes that factor. A final softcap
// (Gemma 2, 3 and 4: cap · tanh(logit / cap)) is not linear in the parts: the attributed value is
// the logit before the cap, as the pass computed it (the unembedding of the final norm's output).
//
// A quantized output matrix: the model's logit is its quantized product, which rounds the
// activations to 8 bits (llama.cpp's way); the parts add up to the float product of the final
// norm's output with the dequantized row, ~1e-3 relative away (measured: 8e-4 for Q4_K_M, 1.9e-3
// for IQ4_XS on the tinyllama fixtures). `quantized_output` says so.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "journey/model/model.h"

namespace journey {

// The rows of the traced position the attribution reads, recorded by TraceObserver.
struct AttributionRows {
    std::vector<float> tok_embed, pos_embed;   // [C]; pos_embed empty for rotary positions
    std::vector<std::vector<float>> attn_out;  // [layer][C] as added to the residual
    std::vector<std::vector<float>> heads;     // [layer][H*C] z_h · W_O per head (no bias, no post-norm)
    std::vector<std::vector<float>> mlp_out;   // [layer][C] as added to the residual
    std::vector<std::vector<float>> experts;   // [layer][K*C] a MoE layer's weighted expert rows (else empty)
    std::vector<std::vector<std::pair<int, float>>> expert_ids;  // [layer][K] (expert, router weight)
    std::vector<std::vector<float>> shared;    // [layer][C] a shared expert's gated row (else empty)
    std::vector<std::vector<float>> ple_out;   // [layer][C] Gemma 4's per-layer-input branch (else empty)
    std::vector<float> resid;                  // [C] the final residual, the final norm's input
};

struct LayerAttribution {
    int layer = 0;
    double attn = 0;              // the whole attention output's part
    std::vector<double> heads;    // [H] each head's part
    double attn_bias = 0;         // b_O's part (0 without a bias)
    double mlp = 0;
    struct Expert {
        int id = 0;
        float weight = 0;  // the router's weight, included in part
        double part = 0;   // weight · expert(x), through the frozen final norm
    };
    std::vector<Expert> experts;  // a mixture of experts: the chosen ones in the order of choice (Σ part + shared = mlp)
    std::optional<double> shared_expert;  // Qwen3.5-MoE: the shared expert's gated part
    std::optional<double> ple;    // Gemma 4: the per-layer-input branch's part (ple_out)
    std::optional<double> out_scale;  // Gemma 4: this layer's layer_output_scale s_l
    double carry = 1;             // Π_{k >= layer} s_k: the factor every part of this layer includes (1 without scales)
};

struct Attribution {
    TokenId target = 0;
    std::optional<TokenId> contrast;   // the logit difference target - contrast when set
    NormKind norm = NormKind::rmsnorm;
    double scale = 0;         // 1/rms(x) or 1/σ(x): the final norm's frozen scale
    double bias_term = 0;     // LayerNorm's b · u (0 for RMSNorm)
    double logit = 0;         // the model's logit (difference), before any final softcap
    double sum = 0;           // Σ parts + bias_term: the linearised logit
    std::optional<std::string> quantized_output;  // the output matrix's type when it is quantized
    double token_embed = 0;   // the token embedding's part (Gemma's √C scale included; Gemma 4: times layers[0].carry)
    std::optional<double> position_embed;  // learned positions only
    std::vector<LayerAttribution> layers;
};

// The attribution of `logit` (the model's own value, which `sum` should match) to the recorded
// parts. Throws UsageError when the output matrix cannot be read by row.
Attribution attribute(const Model& m, const AttributionRows& rows, TokenId target, std::optional<TokenId> contrast,
                      double logit);

}  // namespace journey
