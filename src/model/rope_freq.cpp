#include "journey/model/rope_freq.h"

#include <cmath>
#include <numbers>

namespace journey {

std::vector<float> rope_inv_freq(const ModelConfig& c, const Vector& factors) {
    const int D = c.head_dim, half = D / 2;
    std::vector<float> f(static_cast<size_t>(half));
    for (int i = 0; i < half; ++i) {
        // HF: inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2) / dim))
        double inv = 1.0 / std::pow(double{c.rope_theta}, double(2 * i) / double(D));
        switch (c.rope_scaling) {
            case RopeScaling::none:
            case RopeScaling::dynamic: break;  // plain within max_position_embeddings
            case RopeScaling::linear: inv /= c.rope_factor; break;  // positions / factor
            case RopeScaling::llama3: {
                // HF _compute_llama3_parameters: long wavelengths are divided by factor, short
                // ones kept, and those between blended by where the wavelength falls.
                const double old_ctx = c.rope_original_ctx, lo = c.rope_low_freq_factor, hi = c.rope_high_freq_factor;
                const double wavelen = 2 * std::numbers::pi / inv;
                if (wavelen > old_ctx / lo) {
                    inv /= c.rope_factor;
                } else if (!(wavelen < old_ctx / hi)) {
                    const double smooth = (old_ctx / wavelen - lo) / (hi - lo);
                    inv = (1 - smooth) * inv / c.rope_factor + smooth * inv;
                }
                break;
            }
        }
        if (factors) inv /= factors.data[i];  // llama.cpp: theta / freq_factors[i]
        f[size_t(i)] = static_cast<float>(inv);
    }
    return f;
}

}  // namespace journey
