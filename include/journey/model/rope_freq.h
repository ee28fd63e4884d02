// The rotary frequencies of a model: theta^(-2i/R) for each pair i < R/2 of the R rotated
// dimensions, stretched as the model says for long contexts (linear, Llama 3's per-band scaling,
// yarn's blend, or per-pair divisors: GGUF's rope_freqs.weight, longrope's factors).
#pragma once
#include <span>
#include <vector>

#include "journey/kernels/matrix.h"
#include "journey/model/config.h"

namespace journey {

// inv_freq[R/2]; `factors` divides each one (R/2 values) or is empty. `local`: Gemma 3's
// sliding layers, with their own base (rope_local_theta) and no scaling.
std::vector<float> rope_inv_freq(const ModelConfig& c, std::span<const float> factors, bool local = false);

}  // namespace journey
