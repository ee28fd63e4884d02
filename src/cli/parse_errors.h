// CLI11's own errors, and the words before it parses, turned into journey's one-line messages:
// `journey: <flag or word>: <what is wrong>`, with the nearest name and where to read more.
#pragma once
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace journey::cli {

// Before parsing: `journey help [SUB]` (prints the help, returns exit code 0) and an unknown
// subcommand (returns the message to print and exit 1). nullopt: let CLI11 parse.
struct Prescan {
    int exit_code;
    std::string message;  // for stderr; empty when help went to stdout
};
std::optional<Prescan> prescan(CLI::App& app, int argc, char** argv);

// The message for a CLI11 parse error (without the "journey: " prefix).
std::string parse_error_message(const CLI::App& app, const CLI::ParseError& e);

}  // namespace journey::cli
