// Comparing log-probabilities over a reference's top-20 list (the quantized-model tests against
// llama.cpp): the k most likely ids, and how far two distributions lie apart on the list's ids.
#pragma once
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include <nlohmann/json.hpp>

#include "journey/text/tokenizer.h"

namespace journey::test {

// The k most likely ids of lp, most likely first (lowest id on ties).
inline std::vector<TokenId> top_ids(const std::vector<double>& lp, size_t k) {
    std::vector<TokenId> order(lp.size());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + long(k), order.end(),
                      [&](TokenId a, TokenId b) { return lp[size_t(a)] > lp[size_t(b)] || (lp[size_t(a)] == lp[size_t(b)] && a < b); });
    order.resize(k);
    return order;
}

// mean and max |a - b| over the ids of a top-20 list, and how many of those a's own top-20 holds
struct Distance {
    double mean = 0, max = 0;
    size_t overlap = 0;
};
inline Distance distance(const std::vector<double>& a, const std::vector<double>& b, const nlohmann::json& top20) {
    Distance d;
    const auto ours = top_ids(a, 20);
    for (const auto& e : top20) {
        const auto id = e["id"].get<size_t>();
        const double diff = std::abs(a[id] - b[id]);
        d.mean += diff / double(top20.size());
        d.max = std::max(d.max, diff);
        d.overlap += size_t(std::count(ours.begin(), ours.end(), TokenId(id)));
    }
    return d;
}

}  // namespace journey::test
