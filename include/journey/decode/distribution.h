// Reading a row of logits as a probability distribution (temperature 1), in double:
// the k most likely tokens, the entropy, where a given token ranks, and how far two
// distributions are apart. `journey next` prints it; `journey trace` reads every layer's
// logit lens and the final logits through the same functions.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "journey/text/tokenizer.h"

namespace journey {

struct Ranked {
    TokenId id;
    float logit;
    double prob;
    double logprob;  // floored at kLogprobFloor (sampler.h), so JSON never sees -inf
};

struct Distribution {
    std::vector<Ranked> top;  // best first, ties -> lower id
    double entropy = 0;       // nats
};

// log Σ exp(logits), computed around the maximum.
double log_sum_exp(std::span<const float> logits);

// The k most likely tokens and the entropy.
Distribution distribution(std::span<const float> logits, int k);

// 1-based rank of `id` in the order distribution() uses (logit descending, ties -> lower id).
int64_t rank_of(std::span<const float> logits, TokenId id);

// KL(p || q) in nats, p and q given as logits over the same vocabulary. Finite for finite logits.
double kl_divergence(std::span<const float> p_logits, std::span<const float> q_logits);

}  // namespace journey
