#include "sampling_options.h"

#include <charconv>
#include <random>

#include "journey/errors.h"

namespace journey::cli {

uint64_t SeedOption::resolve() const {
    if (text.empty()) {
        std::random_device rd;
        return (uint64_t(rd()) << 32) ^ uint64_t(rd());
    }
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size())
        throw UsageError("--seed: must be an integer in [0, 2^64), got '" + text + "'");
    return v;
}

void add_sampling_options(CLI::App* cmd, SamplerOptions& o, SeedOption& seed) {
    cmd->add_option("--temp", o.temperature, "Temperature (>= 0; 0 = greedy)")->capture_default_str();
    cmd->add_option("--top-k", o.top_k, "Keep the K most likely tokens (>= 0; 0 = off)")->capture_default_str();
    cmd->add_option("--top-p", o.top_p, "Keep the smallest set with probability >= P (in (0, 1]; 1 = off)")
        ->capture_default_str();
    cmd->add_option("--min-p", o.min_p, "Keep tokens with p >= M * p_max (in [0, 1]; 0 = off)")->capture_default_str();
    cmd->add_option("--repeat-penalty", o.repeat_penalty, "Penalise tokens seen recently (> 0; 1 = off)")
        ->capture_default_str();
    cmd->add_option("--repeat-last-n", o.repeat_last_n, "How many recent tokens the penalty looks at (0 = off, -1 = all)")
        ->capture_default_str();
    cmd->add_option("--seed", seed.text, "Random seed (default: a random one, reported on stderr)");
}

}  // namespace journey::cli
