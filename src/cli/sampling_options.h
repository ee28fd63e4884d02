// The sampler's flags (--temp ... --seed), shared by every subcommand that samples.
#pragma once
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "journey/decode/sampler.h"

namespace journey::cli {

// --seed is read as text so that a bad value is our UsageError naming the flag.
struct SeedOption {
    std::string text;  // empty or "-1": draw a random seed
    // The effective seed: the user's (UsageError unless an integer in [0, 2^32) or -1), or a
    // random one below 2^32, so that every JSON reader (jq, JavaScript) reads it back exactly.
    uint64_t resolve() const;
};

// Adds --temp --top-k --top-p --min-p --repeat-penalty --repeat-last-n -s/--seed, defaults shown
// in --help, with Hugging Face's names as aliases (--temperature, --repetition-penalty).
// Without `top_k`, --top-k is left to the caller (next, where it is also --rows' old spelling).
void add_sampling_options(CLI::App* cmd, SamplerOptions& opts, SeedOption& seed, bool top_k = true);

}  // namespace journey::cli
