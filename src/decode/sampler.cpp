// The sampler chain: small stages over {id, logit, p} candidates. See sampler.h for the order.
#include "journey/decode/sampler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <unordered_set>

#include "journey/errors.h"

namespace journey {

namespace {

constexpr float kMaxLogit = std::numeric_limits<float>::max();

// Logits stay finite so that differences and the sort order are always defined:
// NaN -> lowest, +-inf -> +-max.
float finite_logit(float x) {
    if (std::isnan(x)) return -kMaxLogit;
    return std::clamp(x, -kMaxLogit, kMaxLogit);
}

// Logit descending, then id ascending: a strict total order, so every sort is deterministic.
bool better(const Candidate& a, const Candidate& b) {
    if (a.logit != b.logit) return a.logit > b.logit;
    return a.id < b.id;
}

float max_logit(const Candidates& c) {
    float m = -kMaxLogit;
    for (const auto& x : c) m = std::max(m, x.logit);
    return m;
}

std::string show(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

}  // namespace

void validate(const SamplerOptions& o) {
    auto fail = [](const char* flag, const std::string& what) {
        throw UsageError(std::string(flag) + ": " + what);
    };
    if (!(o.temperature >= 0.0f) || std::isinf(o.temperature))
        fail("--temp", "must be a finite number >= 0 (0 = greedy), got " + show(o.temperature));
    if (o.top_k < 0) fail("--top-k", "must be >= 0 (0 = off), got " + std::to_string(o.top_k));
    if (!(o.top_p > 0.0f && o.top_p <= 1.0f))
        fail("--top-p", "must be in (0, 1] (1 = off), got " + show(o.top_p));
    if (!(o.min_p >= 0.0f && o.min_p <= 1.0f))
        fail("--min-p", "must be in [0, 1] (0 = off), got " + show(o.min_p));
    if (!(o.repeat_penalty > 0.0f) || std::isinf(o.repeat_penalty))
        fail("--repeat-penalty", "must be a finite number > 0 (1 = off), got " + show(o.repeat_penalty));
    if (o.repeat_last_n < -1)
        fail("--repeat-last-n", "must be >= -1 (0 = off, -1 = whole context), got " +
                                    std::to_string(o.repeat_last_n));
}

// ---- Stages ----

Candidates make_candidates(std::span<const float> logits) {
    Candidates c(logits.size());
    for (size_t i = 0; i < logits.size(); ++i)
        c[i] = {static_cast<TokenId>(i), finite_logit(logits[i]), 0.0f};
    return c;
}

void sort_candidates(Candidates& c) { std::sort(c.begin(), c.end(), better); }

void softmax(Candidates& c) {
    if (c.empty()) return;
    const double m = max_logit(c);
    double sum = 0.0;
    for (const auto& x : c) sum += std::exp(double(x.logit) - m);
    for (auto& x : c) x.p = float(std::exp(double(x.logit) - m) / sum);
}

void apply_repeat_penalty(Candidates& c, std::span<const TokenId> history, int last_n, float penalty) {
    if (penalty == 1.0f || last_n == 0 || history.empty()) return;
    if (last_n > 0 && size_t(last_n) < history.size()) history = history.last(size_t(last_n));
    const std::unordered_set<TokenId> seen(history.begin(), history.end());
    for (auto& x : c) {
        if (!seen.contains(x.id)) continue;
        x.logit = finite_logit(x.logit > 0.0f ? x.logit / penalty : x.logit * penalty);
    }
}

void apply_top_k(Candidates& c, int k) {
    if (k <= 0 || size_t(k) >= c.size()) {
        sort_candidates(c);
        return;
    }
    std::partial_sort(c.begin(), c.begin() + k, c.end(), better);
    c.resize(size_t(k));
}

void apply_top_p(Candidates& c, float top_p) {
    sort_candidates(c);
    softmax(c);
    if (top_p >= 1.0f) return;
    double cum = 0.0;
    size_t keep = c.size();
    for (size_t i = 0; i < c.size(); ++i) {
        cum += c[i].p;
        if (cum >= top_p) {
            keep = i + 1;
            break;
        }
    }
    c.resize(std::max<size_t>(keep, 1));
    softmax(c);
}

void apply_min_p(Candidates& c, float min_p) {
    if (min_p <= 0.0f || c.empty()) return;
    // p_i >= min_p * p_max  <=>  exp(logit_i - logit_max) >= min_p: no normalisation needed.
    const double m = max_logit(c);
    const double threshold = std::log(double(min_p));
    std::erase_if(c, [&](const Candidate& x) { return double(x.logit) - m < threshold; });
}

void apply_temperature(Candidates& c, float temperature) {
    if (c.empty()) return;
    if (temperature == 0.0f) {
        const Candidate best = *std::min_element(c.begin(), c.end(), better);
        c.assign(1, best);
        return;
    }
    for (auto& x : c) x.logit = finite_logit(x.logit / temperature);
}

double uniform_01(std::mt19937_64& rng) {
    return double(rng() >> 11) * 0x1.0p-53;  // 53 random bits: every value k / 2^53 equally likely
}

TokenId draw(Candidates& c, std::mt19937_64& rng) {
    if (c.empty()) throw InputError("sampler: no candidate token to draw from");
    softmax(c);
    const double u = uniform_01(rng);
    double cum = 0.0;
    for (const auto& x : c) {
        cum += x.p;
        if (u < cum) return x.id;
    }
    return c.back().id;  // u landed in the rounding gap above the last cumulative sum
}

// ---- The chain ----

namespace {

uint64_t effective_seed(const std::optional<uint64_t>& seed) {
    if (seed) return *seed;
    std::random_device rd;
    return (uint64_t(rd()) << 32) ^ uint64_t(rd());
}

}  // namespace

Sampler::Sampler(const SamplerOptions& opts) : opts_(opts), seed_(0) {
    validate(opts_);
    seed_ = effective_seed(opts_.seed);
    rng_.seed(seed_);
}

Candidates Sampler::candidates(std::span<const float> logits, std::span<const TokenId> history) const {
    Candidates c = make_candidates(logits);
    apply_repeat_penalty(c, history, opts_.repeat_last_n, opts_.repeat_penalty);
    apply_top_k(c, opts_.top_k);
    apply_top_p(c, opts_.top_p);
    apply_min_p(c, opts_.min_p);
    apply_temperature(c, opts_.temperature);
    softmax(c);
    return c;
}

TokenId Sampler::sample(std::span<const float> logits, std::span<const TokenId> history) {
    Candidates c = candidates(logits, history);
    return draw(c, rng_);
}

// ---- Reporting ----

std::vector<float> log_softmax(std::span<const float> logits) {
    std::vector<float> out(logits.size(), kLogprobFloor);
    if (logits.empty()) return out;
    // Same treatment of non-finite logits as the sampler: NaN and -inf end at the floor.
    double m = -kMaxLogit;
    for (float x : logits) m = std::max(m, double(finite_logit(x)));
    double sum = 0.0;
    for (float x : logits) sum += std::exp(double(finite_logit(x)) - m);
    const double log_z = m + std::log(sum);
    for (size_t i = 0; i < logits.size(); ++i)
        out[i] = float(std::max(double(finite_logit(logits[i])) - log_z, double(kLogprobFloor)));
    return out;
}

std::vector<TokenLogprob> top_logprobs(std::span<const float> logprobs, size_t k) {
    std::vector<TokenLogprob> all(logprobs.size());
    for (size_t i = 0; i < logprobs.size(); ++i) {
        const float lp = std::isnan(logprobs[i]) ? kLogprobFloor : logprobs[i];
        all[i] = {static_cast<TokenId>(i), lp};
    }
    k = std::min(k, all.size());
    std::partial_sort(all.begin(), all.begin() + ptrdiff_t(k), all.end(),
                      [](const TokenLogprob& a, const TokenLogprob& b) {
                          if (a.logprob != b.logprob) return a.logprob > b.logprob;
                          return a.id < b.id;
                      });
    all.resize(k);
    return all;
}

}  // namespace journey
