// Checks for numeric flags, run on the text before CLI11 converts it, so that a bad value reads
// "--top-k: must be an integer ≥ 1, got abc" instead of CLI11's conversion message or a range
// spelled with a 309-digit number.
#pragma once
#include <CLI/CLI.hpp>

namespace journey::cli {

CLI::Validator integer_at_least(long long min);
CLI::Validator number_at_least(double min);                       // x >= min
CLI::Validator number_above(double min);                          // x > min
CLI::Validator number_in(double lo, double hi, bool lo_open = false);  // [lo, hi] or (lo, hi]

// --rows N (>= 1): how many rows a table lists (next, trace). Its old spelling --top-k still
// works, hidden from --help: there --top-k meant rows, while generate's --top-k is the sampler's k.
// `old_top_k` false: --rows alone (the caller gives --top-k its meaning).
void add_rows_option(CLI::App* cmd, int& rows, const std::string& help, bool old_top_k = true);

}  // namespace journey::cli
