#include "sampling_options.h"

#include <charconv>
#include <random>

#include "journey/errors.h"
#include "numeric_options.h"

namespace journey::cli {

uint64_t SeedOption::resolve() const {
    if (text.empty() || text == "-1") return std::random_device{}();  // 32 bits
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v > 0xFFFFFFFFull)
        throw UsageError("--seed: must be an integer in [0, 4294967295], or -1 for a random one, got '" + text + "'");
    return v;
}

void add_sampling_options(CLI::App* cmd, SamplerOptions& o, SeedOption& seed, bool top_k) {
    cmd->add_option("--temp,--temperature", o.temperature, "Temperature (>= 0; 0 = greedy)")
        ->check(number_at_least(0))->capture_default_str();
    if (top_k)
        cmd->add_option("--top-k", o.top_k, "Sample among the K most likely tokens (>= 0; 0 = off)")
            ->check(integer_at_least(0))->capture_default_str();
    cmd->add_option("--top-p", o.top_p, "Keep the smallest set with probability >= P (in (0, 1]; 1 = off)")
        ->check(number_in(0, 1, true))->capture_default_str();
    cmd->add_option("--min-p", o.min_p, "Keep tokens with p >= M * p_max (in [0, 1]; 0 = off)")
        ->check(number_in(0, 1))->capture_default_str();
    cmd->add_option("--repeat-penalty,--repetition-penalty", o.repeat_penalty,
                    "Penalise tokens seen in the last --repeat-last-n (> 0; 1 = off)")
        ->check(number_above(0))->capture_default_str();
    cmd->add_option("--repeat-last-n", o.repeat_last_n, "How many recent tokens the penalty looks at (0 = off, -1 = all)")
        ->check(integer_at_least(-1))->capture_default_str();
    cmd->add_option("-s,--seed", seed.text, "Random seed, < 2^32 (default or -1: a random one, reported on stderr)");
}

}  // namespace journey::cli
