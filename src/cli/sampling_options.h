// The sampler's flags (--temp ... --seed), shared by every subcommand that samples.
#pragma once
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "journey/decode/sampler.h"

namespace journey::cli {

// --seed is read as text so that a bad value is our UsageError naming the flag.
struct SeedOption {
    std::string text;  // empty: draw a random seed
    // The effective seed: the user's (UsageError unless a decimal integer in [0, 2^64)), or a random one.
    uint64_t resolve() const;
};

// Adds --temp --top-k --top-p --min-p --repeat-penalty --repeat-last-n --seed, defaults shown in --help.
void add_sampling_options(CLI::App* cmd, SamplerOptions& opts, SeedOption& seed);

}  // namespace journey::cli
