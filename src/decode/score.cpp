// Teacher-forced log-probabilities over a sliding window. See score.h.
#include "journey/decode/score.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "journey/errors.h"
#include "journey/decode/sampler.h"

namespace journey {

namespace {

// Evaluate at most this many ids at once, so [chunk, n_vocab] logits stay small.
constexpr size_t kChunk = 64;

// log P(id | row) in double, floored like every reported log-probability.
double logprob_of(std::span<const float> row, TokenId id) {
    const float mx = *std::max_element(row.begin(), row.end());
    double sum = 0;
    for (float x : row) sum += std::exp(double(x) - mx);
    const double lp = double(row[size_t(id)]) - mx - std::log(sum);
    return std::isfinite(lp) ? std::max(lp, double(kLogprobFloor)) : double(kLogprobFloor);
}

}  // namespace

ScoreResult score(Session& session, std::span<const TokenId> ids, const ScoreOptions& opts) {
    const size_t window = size_t(opts.window > 0 ? opts.window : session.n_ctx());
    if (window < 2 || window > size_t(session.n_ctx()))
        throw UsageError("--window: must be in [2, " + std::to_string(session.n_ctx()) + "], got " +
                         std::to_string(window));
    const size_t stride = opts.stride > 0 ? size_t(opts.stride) : window / 2;
    if (opts.stride < 0 || stride >= window)
        throw UsageError("--stride: must be in [1, window - 1], got " + std::to_string(opts.stride));
    if (ids.empty()) throw InputError("nothing to score: no tokens");

    ScoreResult r;
    r.ids.assign(ids.begin(), ids.end());
    const size_t n = ids.size();
    const size_t n_vocab = size_t(session.n_vocab());
    size_t next = 1;  // the next id to score
    for (size_t begin = 0; next < n; begin += stride) {
        const size_t end = std::min(begin + window, n);
        session.reset();
        ++r.windows;
        for (size_t c = begin; c < end; c += kChunk) {
            const size_t c_end = std::min(c + kChunk, end);
            const auto logits = session.eval(ids.subspan(c, c_end - c), LogitsFor::all);
            // Row j holds the distribution of the id after ids[c + j].
            for (size_t t = std::max(next, c + 1); t <= c_end && t < end; ++t) {
                r.logprobs.push_back(logprob_of(logits.subspan((t - 1 - c) * n_vocab, n_vocab), ids[t]));
                next = t + 1;
            }
            if (opts.progress) opts.progress(next - 1, n - 1);
        }
    }
    for (double lp : r.logprobs) r.sum_logprob += lp;
    if (!r.logprobs.empty()) {
        r.mean_nll = -r.sum_logprob / double(r.logprobs.size());
        r.perplexity = std::exp(r.mean_nll);
    }
    return r;
}

}  // namespace journey
