// Run the journey executable as a user would, and capture what it printed.
#pragma once
#include <string>
#include <vector>

namespace journey::test {

struct RunResult {
    int exit_code = -1;
    std::string out;  // stdout
    std::string err;  // stderr
    long max_rss_kib = 0;  // the child's peak resident memory
};

// args are passed without a shell; stdin_text is fed on stdin (stdin is /dev/null-like when empty
// unless feed_stdin is true).
RunResult run_journey(const std::vector<std::string>& args, const std::string& stdin_text = "",
                      bool feed_stdin = true);

// The same with the child's address space limited to `limit_mib` (ulimit -v), so that a file
// whose header makes journey reserve gigabytes fails the test instead of the machine. Under
// AddressSanitizer, whose shadow memory needs terabytes of address space, the limit is ASan's
// own instead (hard_rss_limit_mb, max_allocation_size_mb).
// cpu_seconds > 0 also caps the child's CPU time (RLIMIT_CPU: SIGXCPU, exit 152), for inputs
// that must not make journey's work grow faster than their size.
RunResult run_journey_limited(const std::vector<std::string>& args, long limit_mib, const std::string& stdin_text = "",
                              long cpu_seconds = 0);

// The tests' data: tests/data/, mirrored into the build (see tests/data/README.md).
inline std::string data_dir() { return JOURNEY_TEST_DATA; }

// The models the CLI tests run most: the small GPT-2 directory of tests/data/cli, and the
// gpt2-tiny reference checkpoint.
inline const std::string gpt2 = data_dir() + "/cli/gpt2";
inline const std::string tiny = data_dir() + "/reference/gpt2-tiny";

// A family's directory of test models (tests/data/models/FAMILY), and its F32 GGUF there.
inline std::string dir_of(const std::string& family) { return data_dir() + "/models/" + family; }
inline std::string gguf_of(const std::string& family) { return dir_of(family) + "/" + family + "-F32.gguf"; }


}  // namespace journey::test
