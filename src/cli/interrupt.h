// Ctrl-C (SIGINT) and SIGTERM during long work: the first asks the work to stop after the
// current step (the caller flushes, reports and exits 128 + signal); a second exits at once.
#pragma once
#include <atomic>

namespace journey::cli {

void install_interrupt_handlers();
const std::atomic<bool>& interrupt_flag();  // set by the first signal
int interrupt_signal();                     // that signal, 0 if none came

// Thrown to end the program with an exit code after output was flushed (main() returns it).
struct ExitCode {
    int code;
};

}  // namespace journey::cli
