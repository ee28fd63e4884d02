// Rotary position embedding (kernels.h), after llama2.c's run.c (quoted), so greedy text can be
// compared with it byte for byte.
#include <cmath>
#include <vector>

#include "journey/kernels/kernels.h"

namespace journey {

void rope(float* x, int T, int n_heads, int D, int pos0, const float* inv_freq, RopePairing pairing, int R, float mscale) {
    const int half = (R > 0 ? R : D) / 2;
    // Second element of pair i, relative to the first; the first is at 2i or i.
    const bool interleaved = pairing == RopePairing::interleaved;
    for (int t = 0; t < T; ++t) {
        const float pos = static_cast<float>(pos0 + t);
        for (int i = 0; i < half; ++i) {
            const float angle = pos * inv_freq[i], c = std::cos(angle) * mscale, s = std::sin(angle) * mscale;
            const int a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
            for (int h = 0; h < n_heads; ++h) {
                float* v = x + (int64_t{t} * n_heads + h) * D;
                const float v0 = v[a], v1 = v[b];
                v[a] = v0 * c - v1 * s;
                v[b] = v0 * s + v1 * c;
            }
        }
    }
}

void rope(float* x, int T, int n_heads, int D, int pos0, float theta, RopePairing pairing) {
    std::vector<float> inv_freq(static_cast<size_t>(D / 2));
    // freq = 1.0f / powf(10000.0f, head_dim / (float)head_size), head_dim = 2i
    for (int i = 0; i < D / 2; ++i) inv_freq[size_t(i)] = 1.0f / std::pow(theta, static_cast<float>(2 * i) / static_cast<float>(D));
    rope(x, T, n_heads, D, pos0, inv_freq.data(), pairing);
}

}  // namespace journey
