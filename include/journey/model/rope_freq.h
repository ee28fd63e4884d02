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

// Llama 3's rope scaling of one frequency (HF _compute_llama3_parameters), by its wavelength 2 pi /
// inv_freq: long wavelengths (above old_ctx / low) are divided by factor, short ones (below
// old_ctx / high) kept, and those between blended with the weight `smooth` of the kept one.
// Shared by the runtime (rope_inv_freq, in double) and the converter (GGUF's rope_freqs.weight
// divisors, in float, as llama.cpp's converter computes them).
enum class Llama3Band { keep, scale, blend };
template <typename T>
Llama3Band llama3_band(T wavelen, T old_ctx, T low, T high, T& smooth) {
    if (wavelen < old_ctx / high) return Llama3Band::keep;
    if (wavelen > old_ctx / low) return Llama3Band::scale;
    smooth = (old_ctx / wavelen - low) / (high - low);
    return Llama3Band::blend;
}

}  // namespace journey
