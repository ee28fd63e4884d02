// attention()'s options, one at a time on literal tensors: the sliding window, the soft-cap and
// the explicit scale; the prompt path (BLAS) and the one-token path must agree.
#include <algorithm>
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "journey/kernels/kernels.h"

using namespace journey;

TEST_CASE("attention: a window of 1 lets each query see only itself", "[arch][kernels]") {
    // T = 3 positions, one head of D = 2; v rows are distinct.
    const std::vector<float> q = {1, 0, 0, 1, 1, 1}, k = {1, 0, 0, 1, 1, 1}, v = {1, 2, 3, 4, 5, 6};
    std::vector<float> z(6), pattern(9);
    attention(z.data(), pattern.data(), q.data(), k.data(), v.data(), 3, 0, 1, 1, 2, {.window = 1});
    CHECK(z == v);
    CHECK(pattern == std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1});
}

TEST_CASE("attention: window 2 in a prompt equals window 2 one token at a time", "[arch][kernels]") {
    const int T = 5, D = 4;
    std::vector<float> q(T * D), k(T * D), v(T * D);
    for (int i = 0; i < T * D; ++i) {
        q[size_t(i)] = std::sin(0.7f * float(i));
        k[size_t(i)] = std::cos(0.3f * float(i));
        v[size_t(i)] = float(i % 7) - 3.0f;
    }
    const AttentionOptions o{.scale = 0.25f, .softcap = 2.0f, .window = 2};
    std::vector<float> z(T * D), pattern(T * T);
    attention(z.data(), pattern.data(), q.data(), k.data(), v.data(), T, 0, 1, 1, D, o);
    for (int t = 0; t < T; ++t) {
        std::vector<float> zt(D), pt(size_t(t + 1));
        attention(zt.data(), pt.data(), q.data() + t * D, k.data(), v.data(), 1, t, 1, 1, D, o);
        for (int d = 0; d < D; ++d) CHECK(zt[size_t(d)] == Approx(z[size_t(t * D + d)]).margin(1e-6));
        // By hand: the two visible keys, soft-capped scaled scores, softmax.
        const int first = std::max(0, t - 1);
        std::vector<double> s;
        for (int j = first; j <= t; ++j) {
            double dot = 0;
            for (int d = 0; d < D; ++d) dot += double(q[size_t(t * D + d)]) * k[size_t(j * D + d)];
            s.push_back(2.0 * std::tanh(dot * 0.25 / 2.0));
        }
        const double mx = *std::max_element(s.begin(), s.end());
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - mx));
        for (int j = 0; j <= t; ++j) {
            const double want = j < first ? 0.0 : s[size_t(j - first)] / sum;
            CHECK(pt[size_t(j)] == Approx(want).margin(1e-6));
        }
    }
}
