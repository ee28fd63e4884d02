#include "journey/model/rope_freq.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace journey {

std::vector<float> rope_inv_freq(const ModelConfig& c, std::span<const float> factors, bool local) {
    const int D = local && c.n_rot_swa > 0 ? c.n_rot_swa : c.rot_dims(), half = D / 2;  // Gemma 4's sliding layers: their own
    const double base = local ? c.rope_local_theta : c.rope_theta;
    const RopeScaling scaling = local ? RopeScaling::none : c.rope_scaling;
    // yarn's blend band, as ggml_rope_yarn_corr_dims and transformers' find_correction_range
    // (truncated) compute it: the pairs that turn fewer than beta_slow .. more than beta_fast
    // times over the original context.
    auto corr_dim = [&](double rotations) {
        return D * std::log(c.rope_original_ctx / (rotations * 2 * std::numbers::pi)) / (2 * std::log(base));
    };
    // HF "truncate": false (gpt-oss) keeps the band's ends fractional.
    const double lo = corr_dim(c.rope_beta_fast), hi = corr_dim(c.rope_beta_slow);
    const double low = std::max(0.0, c.rope_yarn_truncate ? std::floor(lo) : lo);
    const double high = std::min(double(D - 1), c.rope_yarn_truncate ? std::ceil(hi) : hi);
    std::vector<float> f(static_cast<size_t>(half));
    for (int i = 0; i < half; ++i) {
        // HF: inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2) / dim))
        double inv = 1.0 / std::pow(base, double(2 * i) / double(D));
        switch (scaling) {
            case RopeScaling::none:
            case RopeScaling::dynamic:   // plain within max_position_embeddings
            case RopeScaling::longrope:  // the factors (below) do it
                break;
            case RopeScaling::linear: inv /= c.rope_factor; break;  // positions / factor
            case RopeScaling::llama3: {
                // HF _compute_llama3_parameters: long wavelengths are divided by factor, short
                // ones kept, and those between blended by where the wavelength falls.
                double smooth = 0;
                switch (llama3_band<double>(2 * std::numbers::pi / inv, c.rope_original_ctx, c.rope_low_freq_factor,
                                            c.rope_high_freq_factor, smooth)) {
                    case Llama3Band::keep: break;
                    case Llama3Band::scale: inv /= c.rope_factor; break;
                    case Llama3Band::blend: inv = (1 - smooth) * inv / c.rope_factor + smooth * inv; break;
                }
                break;
            }
            case RopeScaling::yarn: {
                // Pairs below the band keep their frequency (extrapolation), those above are
                // interpolated (/ factor), those inside are mixed linearly.
                const double y = (i - low) / std::max(0.001, high - low);
                const double keep = 1.0 - std::clamp(y, 0.0, 1.0);
                inv = inv / c.rope_factor * (1.0 - keep) + inv * keep;
                break;
            }
        }
        if (!factors.empty()) inv /= factors[size_t(i)];  // llama.cpp: theta / freq_factors[i]
        f[size_t(i)] = static_cast<float>(inv);
    }
    return f;
}

}  // namespace journey
