#include "numeric_options.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

namespace journey::cli {

namespace {

// "0", "0.5", "1.5"; no trailing zeros.
std::string short_number(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    return buf;
}

bool parse_number(const std::string& s, double& x) {
    if (s.empty()) return false;
    char* end = nullptr;
    x = std::strtod(s.c_str(), &end);
    return end == s.c_str() + s.size() && std::isfinite(x);
}

}  // namespace

CLI::Validator integer_at_least(long long min) {
    return CLI::Validator(
        [min](std::string& s) -> std::string {
            long long v = 0;
            const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
            if (ec == std::errc() && end == s.data() + s.size() && v >= min && v <= 2147483647) return {};
            return "must be an integer ≥ " + std::to_string(min) + ", got " + s;
        },
        "");
}

CLI::Validator number_at_least(double min) {
    return CLI::Validator(
        [min](std::string& s) -> std::string {
            double x = 0;
            if (parse_number(s, x) && x >= min) return {};
            return "must be a number ≥ " + short_number(min) + ", got " + s;
        },
        "");
}

CLI::Validator number_above(double min) {
    return CLI::Validator(
        [min](std::string& s) -> std::string {
            double x = 0;
            if (parse_number(s, x) && x > min) return {};
            return "must be a number > " + short_number(min) + ", got " + s;
        },
        "");
}

CLI::Validator number_in(double lo, double hi, bool lo_open) {
    return CLI::Validator(
        [=](std::string& s) -> std::string {
            double x = 0;
            if (parse_number(s, x) && (lo_open ? x > lo : x >= lo) && x <= hi) return {};
            return std::string("must be a number in ") + (lo_open ? "(" : "[") + short_number(lo) + ", " +
                   short_number(hi) + "], got " + s;
        },
        "");
}

void add_rows_option(CLI::App* cmd, int& rows, const std::string& help, bool old_top_k) {
    cmd->add_option("--rows", rows, help + " (>= 1)")->check(integer_at_least(1))->capture_default_str();
    if (!old_top_k) return;
    // A hidden option has no name in CLI11's messages, so its check names it.
    const CLI::Validator at_least_1 = integer_at_least(1);
    cmd->add_option("--top-k", rows, "Old spelling of --rows")
        ->check(CLI::Validator(
            [at_least_1](std::string& s) {
                const std::string m = at_least_1(s);
                return m.empty() ? m : "--top-k: " + m;
            },
            ""))
        ->group("");
}

}  // namespace journey::cli
