// The rotary frequencies of a model: theta^(-2i/D) for each pair i < D/2, stretched as the
// model says for long contexts (linear, Llama 3's per-band scaling, or GGUF's rope_freqs.weight).
#pragma once
#include <vector>

#include "journey/kernels/matrix.h"
#include "journey/model/config.h"

namespace journey {

// inv_freq[D/2]; `factors` is GGUF's rope_freqs.weight (D/2 divisors) or empty.
std::vector<float> rope_inv_freq(const ModelConfig& c, const Vector& factors);

}  // namespace journey
