// The last stage of the journey: logits -> the next token.
//
// A sampler is a chain of small stages over an array of candidates {id, logit, p}. Each stage
// is a plain function that narrows or reshapes the array; the chain runs them in the order of
// llama.cpp's default sampler chain:
//
//   repetition penalty -> top-k -> top-p -> min-p -> temperature -> softmax + seeded draw
//
// Truncation (top-k, top-p, min-p) therefore sees the distribution at temperature 1, and the
// temperature only reshapes the survivors. Temperature 0 is greedy: the argmax survives alone.
//
// Determinism: candidates are ordered by logit, descending, ties broken by the lower id; the
// draw uses std::mt19937_64 seeded with the effective seed and our own bits-to-double
// conversion, so the same seed gives the same tokens with any standard library. Every draw
// takes exactly one generator output, greedy or not: the stream advances one step per token.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "journey/text/tokenizer.h"

namespace journey {

// One shared set of options for the CLI, the library and the tests. Defaults follow llama.cpp.
struct SamplerOptions {
    float temperature = 0.8f;     // --temp: >= 0; 0 = greedy (argmax, ties -> lowest id)
    int top_k = 40;               // --top-k: >= 0; 0 = off (keep all)
    float top_p = 0.95f;          // --top-p: in (0, 1]; 1 = off
    float min_p = 0.05f;          // --min-p: in [0, 1]; keep p >= min_p * p_max; 0 = off
    float repeat_penalty = 1.0f;  // --repeat-penalty: > 0; 1 = off
    int repeat_last_n = 64;       // --repeat-last-n: tokens of context penalised; 0 = off, -1 = all
    std::optional<uint64_t> seed; // --seed: absent = a random seed (reported via Sampler::seed())
};

// Throws UsageError naming the offending flag ("--top-p: must be in (0, 1], got 1.5").
void validate(const SamplerOptions& opts);

struct Candidate {
    TokenId id;
    float logit;
    float p;  // valid after softmax(); 0 before
};
using Candidates = std::vector<Candidate>;

// ---- The stages, in chain order. Each keeps at least one candidate. ----

// Every token id 0..n-1 with its logit, p = 0, in id order.
Candidates make_candidates(std::span<const float> logits);
// Sort by logit descending, ties by lower id (the order every stage below relies on).
void sort_candidates(Candidates& c);
// Normalise p over the candidates (does not sort).
void softmax(Candidates& c);

// llama.cpp semantics: every distinct token among the last `last_n` of `history` (all of it
// when last_n < 0) has a positive logit divided by `penalty`, a negative one multiplied.
void apply_repeat_penalty(Candidates& c, std::span<const TokenId> history, int last_n, float penalty);
// Keep the k highest logits (k <= 0: keep all). Leaves the candidates sorted.
void apply_top_k(Candidates& c, int k);
// Keep the smallest highest-probability set whose cumulative p >= top_p (at least one).
// Leaves the candidates sorted with p normalised over the survivors.
void apply_top_p(Candidates& c, float top_p);
// Keep candidates with p >= min_p * p_max (p at the current logits; min_p <= 0: keep all).
void apply_min_p(Candidates& c, float min_p);
// Divide logits by temperature; temperature 0 keeps only the argmax (ties -> lowest id).
void apply_temperature(Candidates& c, float temperature);

// A double uniform in [0, 1) from the top 53 bits of one generator output.
double uniform_01(std::mt19937_64& rng);
// Softmax the candidates and draw one with exactly one generator output.
TokenId draw(Candidates& c, std::mt19937_64& rng);

// The chain, with its own seeded generator.
class Sampler {
public:
    // Validates the options (UsageError) and fixes the effective seed.
    explicit Sampler(const SamplerOptions& opts);

    // The seed actually used: the user's, or the random one drawn when none was given.
    uint64_t seed() const { return seed_; }
    const SamplerOptions& options() const { return opts_; }

    // Run every stage but the draw: the survivors, sorted, with p normalised (what a verbose
    // report or a test wants to see). `history` is the context so far, for the penalty.
    Candidates candidates(std::span<const float> logits, std::span<const TokenId> history) const;
    // The next token.
    TokenId sample(std::span<const float> logits, std::span<const TokenId> history);

private:
    SamplerOptions opts_;
    uint64_t seed_;
    std::mt19937_64 rng_;
};

// ---- Reporting: log-probabilities of the raw model logits, before any stage. ----

// Log-probabilities are never below this (log 0 would be -inf, which JSON cannot carry).
inline constexpr float kLogprobFloor = -9999.0f;

// log softmax at temperature 1, computed in double, floored at kLogprobFloor (NaN -> floor).
std::vector<float> log_softmax(std::span<const float> logits);

struct TokenLogprob {
    TokenId id;
    float logprob;
};
// The k most likely tokens of a log-probability vector, best first, ties -> lower id.
std::vector<TokenLogprob> top_logprobs(std::span<const float> logprobs, size_t k);

}  // namespace journey
