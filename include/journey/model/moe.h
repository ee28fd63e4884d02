// The mixture-of-experts MLP (issue 34): one FFN variant of the block, chosen by the layer having
// a router (weights.h LayerWeights::moe_router); the family's row says how it routes (arch.h
// MoeTraits, config.h ModelConfig::moe_*).
#pragma once
#include "journey/model/config.h"
#include "journey/model/observer.h"
#include "journey/model/weights.h"

namespace journey {

// One token's routing from its router logits [n_expert] (bias already added): the n_expert_used
// experts chosen, best first (ids; the lowest id first on ties), and their weights, as llama.cpp's
// build_moe_ffn computes them for the family's gating.
void moe_route(const float* logits, const ModelConfig& c, int* ids, float* weights);

// out[T, C] = for each token, the sum over its chosen experts (best first) of weight * expert(xn),
// expert(x) = down(act(gate(x), up(x))) with the experts' biases where bound. A token reads only
// its experts' rows. A prompt (prompt: the prompt kernels) routes every token first, then
// multiplies each expert's group of tokens as one matrix; a row gets the same bits in any group.
// observer (may be null) sees each product's input rows (Observer::product).
void moe_ffn(float* out, const float* xn, const LayerWeights& w, const ModelConfig& c, int T, bool prompt,
             Observer* observer = nullptr);

// The router logits [T, n_expert] (bias added) of the calling thread's last moe_ffn: what routed
// its tokens (forward hands them to the observer as moe_logits). Valid until the next moe_ffn.
const float* moe_last_router_logits();

// The weighted outputs of the calling thread's last moe_ffn, per token in the order of choice:
// out[T, n_expert_used, C], row (t, j) = weight_j * expert_j(xn_t), the very rows moe_ffn summed
// (forward hands them to the observer as moe_expert_out). Valid until the next moe_ffn.
void moe_last_expert_rows(float* out, int T, const ModelConfig& c);

// The shared expert's gated output of the calling thread's last moe_ffn (Qwen3.5-MoE):
// out[T, C], row t = sigmoid(xn_t · g) * shared(xn_t), what moe_ffn added after the routed experts
// (forward hands them to the observer as moe_shared_out). Only for a layer with a shared expert.
void moe_last_shared_rows(float* out, int T, const ModelConfig& c);

}  // namespace journey
