// Run the journey executable as a user would, and capture what it printed.
#pragma once
#include <string>
#include <vector>

namespace journey::test {

struct RunResult {
    int exit_code = -1;
    std::string out;  // stdout
    std::string err;  // stderr
};

// args are passed without a shell; stdin_text is fed on stdin (stdin is /dev/null-like when empty
// unless feed_stdin is true).
RunResult run_journey(const std::vector<std::string>& args, const std::string& stdin_text = "",
                      bool feed_stdin = true);

// The tests' data: tests/data/, mirrored into the build (see tests/data/README.md).
inline std::string data_dir() { return JOURNEY_TEST_DATA; }

}  // namespace journey::test
