// journey: run transformer language models on the CPU, and watch a token's journey through them.
#include <csignal>
#include <cstdio>
#include <string_view>
#include <cstdlib>
#include <exception>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "commands.h"
#include "common.h"
#include "interrupt.h"
#include "parse_errors.h"
#include "journey/errors.h"
#include "journey/kernels/kernels.h"

namespace {
// An error is one line whatever it quotes (a template's raise_exception text, a file name with
// escapes, a megabyte-long name): control bytes escaped, and cut at 1000 bytes.
std::string one_line(const char* what) { return journey::excerpt(what, 1000); }
}  // namespace

std::string journey::cli::version_text() { return "journey " JOURNEY_VERSION " (git " JOURNEY_GIT_REVISION ")"; }

int main(int argc, char** argv) {
    journey::cli::set_command_line(argc, argv);
    // Give OpenBLAS the right kernels before any work (see blas_core_override); exec only
    // returns on failure, and then we simply run with what OpenBLAS chose.
    if (const char* core = journey::blas_core_override()) {
        setenv("OPENBLAS_CORETYPE", core, 1);
        execv("/proc/self/exe", argv);
    }
    journey::blas_one_thread();  // its idle workers would spin ~0.1 s of CPU
    // Data goes to stdout; every log line goes to stderr so pipes stay clean.
    spdlog::set_default_logger(spdlog::stderr_color_mt("journey"));
    spdlog::set_pattern("[%^%l%$] %v");
    std::signal(SIGPIPE, SIG_IGN);  // a closed pipe becomes EPIPE, handled as a quiet exit

    CLI::App app{"journey: run transformer language models on the CPU", "journey"};
    app.require_subcommand(1);
    app.set_version_flag("--version", journey::cli::version_text());
    // -v and -q also work after the subcommand: its unknown flags fall through to the app.
    app.fallthrough();
    bool verbose = false, quiet = false;
    app.add_flag("-v,--verbose", verbose, "Log more detail to stderr (before or after the subcommand)");
    app.add_flag("-q,--quiet", quiet, "No seed line, progress or log lines; errors still print");
    app.parse_complete_callback([&] {
        journey::cli::set_quiet(quiet);
        spdlog::set_level(verbose ? spdlog::level::debug : quiet ? spdlog::level::err : spdlog::level::warn);
    });
    app.footer("journey help SUBCOMMAND (or journey SUBCOMMAND --help) shows a subcommand's flags.");

    // Subcommands, in the order of the token's journey.
    journey::cli::register_tokenize(app);
    journey::cli::register_detokenize(app);
    journey::cli::register_next(app);
    journey::cli::register_trace(app);
    journey::cli::register_patch(app);
    journey::cli::register_generate(app);
    journey::cli::register_score(app);
    journey::cli::register_info(app);
    journey::cli::register_bench(app);
    journey::cli::register_template(app);
    journey::cli::register_chat(app);
    journey::cli::register_convert(app);
    journey::cli::register_quantize(app);
    journey::cli::register_imatrix(app);

    // llama.cpp's -np N is --parallel N (CLI11 reads one letter after a single dash: -n p).
    static char parallel_flag[] = "--parallel";
    for (int i = 1; i < argc; ++i)
        if (std::string_view(argv[i]) == "-np") argv[i] = parallel_flag;
    if (auto pre = journey::cli::prescan(app, argc, argv)) {
        if (!pre->message.empty()) std::fprintf(stderr, "journey: %s\n", pre->message.c_str());
        return pre->exit_code;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
        std::fprintf(stderr, "journey: %s\n", journey::cli::parse_error_message(app, e).c_str());
        return 1;
    } catch (const journey::cli::BrokenPipe&) {
        return 0;
    } catch (const journey::cli::ExitCode& e) {
        return e.code;
    } catch (const journey::Error& e) {
        std::fprintf(stderr, "journey: %s\n", one_line(e.what()).c_str());
        return e.exit_code();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "journey: %s\n", one_line(e.what()).c_str());
        return 3;
    }
    return 0;
}
