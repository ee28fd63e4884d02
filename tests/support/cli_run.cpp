#include "cli_run.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

// Under AddressSanitizer an address-space limit would stop the shadow memory itself: the child's
// memory is bounded through ASan's own limits instead (asan.h).
#include "asan.h"
#include "files.h"

namespace journey::test {

namespace {

RunResult run(const std::vector<std::string>& args, const std::string& stdin_text, bool feed_stdin, long limit_mib,
              long cpu_seconds = 0) {
    char dir_template[] = "/tmp/journey-test-XXXXXX";
    std::string dir = mkdtemp(dir_template);
    std::string in_path = dir + "/in", out_path = dir + "/out", err_path = dir + "/err";
    { std::ofstream(in_path, std::ios::binary) << stdin_text; }
    RunResult r;
    std::fflush(nullptr);  // or the child would flush a copy of our buffered output
    pid_t pid = fork();
    if (pid == 0) {
        if (limit_mib > 0) {
#if JOURNEY_TEST_ASAN
            const std::string mb = std::to_string(limit_mib);
            setenv("ASAN_OPTIONS", ("hard_rss_limit_mb=" + mb + ":max_allocation_size_mb=" + mb).c_str(), 1);
#else
            const rlimit lim{rlim_t(limit_mib) << 20, rlim_t(limit_mib) << 20};
            setrlimit(RLIMIT_AS, &lim);
#endif
        }
        if (cpu_seconds > 0) {
            const rlimit cpu{rlim_t(cpu_seconds), rlim_t(cpu_seconds)};
            setrlimit(RLIMIT_CPU, &cpu);
        }
        if (feed_stdin) freopen(in_path.c_str(), "rb", stdin);
        freopen(out_path.c_str(), "wb", stdout);
        freopen(err_path.c_str(), "wb", stderr);
        std::vector<char*> argv;
        std::string bin = JOURNEY_BIN;
        argv.push_back(bin.data());
        std::vector<std::string> copy = args;
        for (auto& a : copy) argv.push_back(a.data());
        argv.push_back(nullptr);
        execv(bin.c_str(), argv.data());
        _exit(127);
    }
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    r.max_rss_kib = usage.ru_maxrss;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    std::remove(in_path.c_str());
    std::remove(out_path.c_str());
    std::remove(err_path.c_str());
    rmdir(dir.c_str());
    return r;
}

}  // namespace

RunResult run_journey(const std::vector<std::string>& args, const std::string& stdin_text, bool feed_stdin) {
    return run(args, stdin_text, feed_stdin, 0);
}

RunResult run_journey_limited(const std::vector<std::string>& args, long limit_mib, const std::string& stdin_text,
                              long cpu_seconds) {
    return run(args, stdin_text, true, limit_mib, cpu_seconds);
}

}  // namespace journey::test
