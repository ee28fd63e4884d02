// One hook through which every named intermediate of the forward pass passes.
// Session calls it only when set, so an unused observer costs one branch per intermediate.
//
// Names, in order, with dims (T = tokens in this eval, P = n_past before it, C, H, D, V):
//   tok_embed [T,C], pos_embed [T,C], embed [T,C]                        layer = -1
//   per layer: resid_pre [T,C], attn_pattern [H,T,P+T], attn_z [T,H,D],
//              attn_out [T,C], resid_mid [T,C], moe_logits [T,E] (a mixture of experts'
//              layer: the router logits, bias added, that chose each token's experts),
//              moe_expert_out [T,K,C] (each chosen expert's weighted output, in the order of
//              choice), moe_shared_out [T,C] (Qwen3.5-MoE: the shared expert's gated output),
//              mlp_out [T,C], ple_out [T,C] (Gemma 4: the per-layer-input branch added after
//              the MLP; then the residual is scaled by layer_output_scale), resid_post [T,C]
//   final_norm [T,C], logits [R,V] (R = 1, or T when all logits were asked for)   layer = -1
// Hybrid models (issue 35): a gated attention layer adds attn_gate [T,H,D] (sigmoid(gate), what
// z is multiplied by) after attn_pattern; a Gated DeltaNet layer has no attn_pattern but
//   ssm_beta [T,Hv], ssm_decay [T,Hv] (exp(g), the state's decay), ssm_state_norm [T,Hv] (each
//   head's state's Frobenius norm after the token), then attn_z [T,Hv,S] (the gated-normed output
//   before out_proj, bound as attn_out).
// (pos_embed only for learned positions.) Data is valid only during the call.
// product(W, x, rows): the input rows [rows, W.n_in()] of every matrix product a block makes
// (attention, MLP, router, each expert's products with that expert's rows only; not the
// linear-attention mixer's, not the logits), just before it: what an importance matrix sums.
//
// Intervention: the same hook, writable, at the sites an activation-patching experiment
// changes: embed, resid_pre, attn_z, attn_out, mlp_out, resid_post. It is called just before the
// observer sees the site, and the pass goes on with whatever it wrote (src/trace/patch.cpp).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

namespace journey {

struct Matrix;

struct Intermediate {
    std::string_view name;
    int layer;                     // block index, or -1 outside the blocks
    int n_past;                    // position of the first token of this eval
    const float* data;             // row-major
    std::span<const int64_t> dims; // outermost first
};

class Observer {
public:
    virtual ~Observer() = default;
    virtual void observe(const Intermediate& t) = 0;
    virtual void product(const Matrix& /*w*/, const float* /*x*/, int64_t /*rows*/) {}
};

class Intervention {
public:
    virtual ~Intervention() = default;
    // `data` is t.data, writable: rows [T, ...] of this eval (row i is position t.n_past + i).
    virtual void intervene(const Intermediate& t, float* data) = 0;
};

}  // namespace journey
