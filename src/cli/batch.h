// --batch FILE: many prompts, one model load. Each line of FILE ("-" = stdin) is a prompt:
// a JSON object {"prompt": "..."} when it starts with '{', else the line itself as plain text
// (an empty line is an empty prompt). One JSON line is written per prompt, in order, each with
// "line" (1-based). A line that cannot be used (invalid JSON, no "prompt" string) or a prompt
// that fails (InputError: too long, ...) gives {"line": N, "error": "..."} and the rest go on.
#pragma once
#include <functional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace journey::cli {

void add_batch_option(CLI::App* cmd, std::string& file);

// The batch file, read before the model loads (InputError saying why it cannot be read);
// stdin ("-") is streamed line by line instead.
struct BatchInput {
    std::string file;
    std::string contents;  // empty for stdin
};
BatchInput open_batch(const std::string& file);

// Runs `one` on every prompt and writes its JSON object (plus "line") per line. Every line is
// processed (after an interrupt, none is started); then, if any failed, throws InputError
// (exit 3) saying how many.
void run_batch(const BatchInput& input, const std::function<nlohmann::ordered_json(const std::string& prompt)>& one);

}  // namespace journey::cli
