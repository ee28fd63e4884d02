// Each subcommand lives in its own cmd_*.cpp and registers itself on the app.
#pragma once
#include <CLI/CLI.hpp>

namespace journey::cli {

// void register_xxx(CLI::App& app);

}  // namespace journey::cli
