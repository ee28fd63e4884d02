// Pieces every subcommand shares: where the prompt comes from, and writing to stdout.
#pragma once
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace journey::cli {

// -p TEXT | -f FILE | stdin (when stdin is not a terminal).
struct PromptSource {
    std::string text;
    std::string file;
};
void add_prompt_options(CLI::App* cmd, PromptSource& src);
// Throws UsageError when none is given and stdin is a terminal, InputError if the file is unreadable.
std::string read_prompt(const PromptSource& src);

// Write to stdout and flush. A closed pipe (EPIPE) throws BrokenPipe, which main() turns
// into a quiet exit 0: `journey generate | head -c 20` is a normal way to stop.
struct BrokenPipe {};
void out(std::string_view bytes);
void out_line(std::string_view line);  // bytes + '\n'

}  // namespace journey::cli
