// journey: run transformer language models on the CPU, and watch a token's journey through them.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "commands.h"
#include "common.h"
#include "journey/errors.h"
#include "journey/kernels/kernels.h"

int main(int argc, char** argv) {
    // Give OpenBLAS the right kernels before any work (see blas_core_override); exec only
    // returns on failure, and then we simply run with what OpenBLAS chose.
    if (const char* core = journey::blas_core_override()) {
        setenv("OPENBLAS_CORETYPE", core, 1);
        execv("/proc/self/exe", argv);
    }
    // Data goes to stdout; every log line goes to stderr so pipes stay clean.
    spdlog::set_default_logger(spdlog::stderr_color_mt("journey"));
    spdlog::set_pattern("[%^%l%$] %v");
    std::signal(SIGPIPE, SIG_IGN);  // a closed pipe becomes EPIPE, handled as a quiet exit

    CLI::App app{"journey: run transformer language models on the CPU"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "journey 0.1.0");
    bool verbose = false;
    app.add_flag("-v,--verbose", verbose, "Log more detail to stderr");
    app.parse_complete_callback([&] { spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::warn); });

    // Subcommands, in the order of the token's journey.
    journey::cli::register_tokenize(app);
    journey::cli::register_detokenize(app);
    journey::cli::register_next(app);
    journey::cli::register_trace(app);
    journey::cli::register_generate(app);
    journey::cli::register_score(app);
    journey::cli::register_info(app);
    journey::cli::register_bench(app);
    journey::cli::register_template(app);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
        std::fprintf(stderr, "journey: %s\n", e.what());
        return 1;
    } catch (const journey::cli::BrokenPipe&) {
        return 0;
    } catch (const journey::Error& e) {
        std::fprintf(stderr, "journey: %s\n", e.what());
        return e.exit_code();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "journey: %s\n", e.what());
        return 3;
    }
    return 0;
}
