// The Gated DeltaNet mixer (issue 35): the linear-attention layers of a hybrid family (Qwen3.5, Qwen3-Next),
// one block function beside forward's attention. Its memory is a fixed-size state per layer, not
// a KV cache: the conv's last K-1 inputs and one S x S matrix per value head.
#pragma once
#include <cstdint>

#include "journey/model/config.h"
#include "journey/model/weights.h"

namespace journey {

// One recurrent layer's memory (Session owns it): conv [K-1][CH] (the last inputs, oldest first)
// and ssm [Hv][S][S] (head h's state, row j = value index, column i = key index: o = state · q).
struct RecurrentState {
    float* conv;
    float* ssm;
};

// How the recurrence runs over several tokens: one token at a time (generation's form), or in
// chunks of kDeltaChunk tokens as matrix products (the gated delta rule's WY form, as
// flash-linear-attention and llama.cpp compute a prompt). The two agree within float rounding.
enum class DeltaForm { automatic, recurrent, chunked };  // automatic: recurrent for one token, else chunked
constexpr int kDeltaChunk = 64;

// What the mixer computed for the traced tokens (all null: nothing asked).
struct DeltaTrace {
    float* beta = nullptr;  // [T, Hv] sigmoid(b)
    float* gate = nullptr;  // [T, Hv] g = A * softplus(a + dt_bias) (the state decays by exp(g))
    float* state_norm = nullptr;  // [T, Hv] each head's state's Frobenius norm after the token
};

// out[T, Hv*S] = the mixer's output before out_proj, from xn[T, C] (the layer's normed input):
//   q|k|v = in_proj_qkv(xn) (or Qwen3-Next's in_proj_qkvz, grouped per key head, and likewise
//   its in_proj_ba for b and a) -> causal depthwise conv1d (K taps, state carried) -> SiLU;
//   q, k L2-normalised per head, q scaled by 1/sqrt(S); beta = sigmoid(in_proj_b(xn));
//   g = A * softplus(in_proj_a(xn) + dt_bias); per value head h (key head: c.ssm_v_tiled ?
//   h % Hk : h / (Hv/Hk)) and token: state = exp(g) state; state += beta (v - state k) kᵀ;
//   o = state q; out = rmsnorm(o) * norm_w * silu(in_proj_z(xn)) per head.
// Updates st. prompt: the prompt kernels for the projections.
void gated_delta_net(float* out, const float* xn, const LayerWeights& w, const ModelConfig& c, int T, bool prompt,
                     RecurrentState st, DeltaForm form = DeltaForm::automatic, const DeltaTrace& trace = {});

}  // namespace journey
