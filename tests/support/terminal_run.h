// Running journey where a terminal or a signal matters: on a pseudo-terminal (stdout and
// stderr both a tty, as in an interactive shell), or with a signal sent mid-run.
#pragma once
#include <string>
#include <vector>

namespace journey::test {

struct TtyResult {
    int exit_code = -1;
    std::string screen;  // everything written to the terminal (stdout and stderr), \r\n as the tty gives it
};
// Runs journey with stdin, stdout and stderr on a new pseudo-terminal (openpty).
TtyResult run_on_tty(const std::vector<std::string>& args);

struct SignalResult {
    int exit_code = -1;  // 128 + signal for a death by signal
    std::string out, err;
};
// Runs journey with stdout on a pipe; once `after_lines` lines have come out (0: once stderr
// has the seed line), sends `sig` (and a second one when `twice`), then reads to the end.
SignalResult run_and_signal(const std::vector<std::string>& args, int sig, int after_lines, bool twice = false);

}  // namespace journey::test
