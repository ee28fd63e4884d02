// Each subcommand lives in its own cmd_*.cpp and registers itself on the app.
#pragma once
#include <CLI/CLI.hpp>

namespace journey::cli {

void register_tokenize(CLI::App& app);    // text -> ids
void register_detokenize(CLI::App& app);  // ids -> bytes
void register_next(CLI::App& app);        // prompt -> distribution of the next token
void register_info(CLI::App& app);        // what a model is
void register_bench(CLI::App& app);       // how fast a model runs

}  // namespace journey::cli
