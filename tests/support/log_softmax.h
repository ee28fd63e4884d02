// The tests' own log-softmax, in double: an expectation computed apart from the library's float
// code, for comparing next-token log-probabilities against references.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

namespace journey::test {

inline std::vector<double> log_softmax(std::span<const float> logits) {
    const double mx = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (float l : logits) sum += std::exp(double(l) - mx);
    std::vector<double> out(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) out[i] = double(logits[i]) - mx - std::log(sum);
    return out;
}

}  // namespace journey::test
