// The last stage of the forward pass, as a function of its own: final norm, then the
// unembedding. Session::forward uses it for the logits, and the logit lens applies the very
// same code to the residual stream after any layer, so the last layer's lens is bit-for-bit
// the model's own distribution.
#pragma once
#include "journey/model/model.h"

namespace journey {

// out[rows, C] = final_norm(resid[rows, C]) (LayerNorm or RMSNorm, as the config says).
void final_norm(const Model& m, const float* resid, int rows, float* out);

// logits[rows, V] = normed[rows, C] · W_Uᵀ (the output matrix, tied to wte for GPT-2).
// each_alone: rows of different sequences, each with the bits it has alone (matmul_tokens).
void project_to_vocab(const Model& m, const float* normed, int rows, float* logits, bool each_alone = false);

// logits[rows, V] = project_to_vocab(final_norm(resid)): the logit lens on any residual rows.
void unembed(const Model& m, const float* resid, int rows, float* logits);

}  // namespace journey
