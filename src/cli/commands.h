// Each subcommand lives in its own cmd_*.cpp and registers itself on the app.
#pragma once
#include <CLI/CLI.hpp>

namespace journey::cli {

void register_tokenize(CLI::App& app);    // text -> ids
void register_detokenize(CLI::App& app);  // ids -> bytes

}  // namespace journey::cli
