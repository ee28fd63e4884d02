#include "journey/decode/distribution.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "journey/decode/sampler.h"

namespace journey {

double log_sum_exp(std::span<const float> logits) {
    const double mx = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (float x : logits) sum += std::exp(double(x) - mx);
    return mx + std::log(sum);
}

Distribution distribution(std::span<const float> logits, int k) {
    const double log_z = log_sum_exp(logits);
    Distribution d;
    for (float x : logits) {
        const double p = std::exp(double(x) - log_z);
        if (p > 0) d.entropy -= p * (double(x) - log_z);
    }
    std::vector<TokenId> ids(logits.size());
    std::iota(ids.begin(), ids.end(), 0);
    const size_t n = std::min(ids.size(), static_cast<size_t>(std::max(k, 0)));
    std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n), ids.end(), [&](TokenId a, TokenId b) {
        const float la = logits[size_t(a)], lb = logits[size_t(b)];
        return la != lb ? la > lb : a < b;
    });
    for (size_t i = 0; i < n; ++i) {
        const float l = logits[size_t(ids[i])];
        const double lp = std::max(double(kLogprobFloor), double(l) - log_z);
        d.top.push_back({ids[i], l, std::exp(double(l) - log_z), lp});
    }
    return d;
}

int64_t rank_of(std::span<const float> logits, TokenId id) {
    const float t = logits[size_t(id)];
    int64_t ahead = 0;
    for (size_t i = 0; i < logits.size(); ++i)
        if (logits[i] > t || (logits[i] == t && TokenId(i) < id)) ++ahead;
    return ahead + 1;
}

double kl_divergence(std::span<const float> p_logits, std::span<const float> q_logits) {
    const double zp = log_sum_exp(p_logits), zq = log_sum_exp(q_logits);
    double kl = 0;
    for (size_t i = 0; i < p_logits.size(); ++i) {
        const double lp = double(p_logits[i]) - zp, lq = double(q_logits[i]) - zq;
        const double p = std::exp(lp);
        if (p > 0) kl += p * (lp - lq);
    }
    return std::max(0.0, kl);  // rounding can leave a tiny negative for identical rows
}

}  // namespace journey
