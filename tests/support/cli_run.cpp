#include "cli_run.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

// Under AddressSanitizer an address-space limit would stop the shadow memory itself: the child's
// memory is bounded through ASan's own limits instead (asan.h).
#include "asan.h"
#include "files.h"

namespace journey::test {

namespace {

struct Spawned {
    int status = 0;
    long max_rss_kib = 0;
};

// Runs journey with args in a child of this process, its stdin from in_path (when feed_stdin),
// stdout and stderr into out_path and err_path, and waits for it.
// The resource limits a test may set for the journey it runs (hostile3: RLIMIT_FSIZE).
constexpr __rlimit_resource kPassedLimits[] = {RLIMIT_FSIZE, RLIMIT_NOFILE, RLIMIT_CORE, RLIMIT_STACK};

// env, when given, is the child's whole environment and cwd its working directory (the test
// process's, sent to the launcher below), limits its resource limits.
Spawned spawn_and_wait(const std::vector<std::string>& args, const std::string& in_path, const std::string& out_path,
                       const std::string& err_path, bool feed_stdin, long limit_mib, long cpu_seconds,
                       std::vector<std::string>* env = nullptr, const std::string& cwd = "", const rlimit* limits = nullptr) {
    std::fflush(nullptr);  // or the child would flush a copy of our buffered output
    pid_t pid = fork();
    if (pid == 0) {
        if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) _exit(127);
        if (limits)
            for (size_t i = 0; i < std::size(kPassedLimits); ++i) setrlimit(kPassedLimits[i], &limits[i]);
        if (env) {
            clearenv();
            for (auto& e : *env) putenv(e.data());
        }
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
    Spawned s;
    rusage usage{};
    if (pid > 0) wait4(pid, &s.status, 0, &usage);
    else s.status = 127 << 8;
    s.max_rss_kib = usage.ru_maxrss;
    return s;
}

// The launcher: a copy of this process forked before any test ran, while it was small, that
// forks and waits for every journey the tests run. A child's peak resident size (ru_maxrss)
// counts the memory it shared with its parent between fork and exec: forked from the test
// process itself, a journey that held 70 MiB measured the 650 MiB the suite had grown to under
// AddressSanitizer. Requests and answers go through two pipes.
bool write_all(int fd, const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
        const ssize_t k = ::write(fd, c, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        c += k, n -= size_t(k);
    }
    return true;
}
bool read_all(int fd, void* p, size_t n) {
    char* c = static_cast<char*>(p);
    while (n > 0) {
        const ssize_t k = ::read(fd, c, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        c += k, n -= size_t(k);
    }
    return true;
}
bool put(int fd, const std::string& s) {
    const uint64_t n = s.size();
    return write_all(fd, &n, 8) && write_all(fd, s.data(), s.size());
}
bool get(int fd, std::string& s) {
    uint64_t n = 0;
    if (!read_all(fd, &n, 8) || n > (uint64_t(1) << 30)) return false;
    s.resize(n);
    return read_all(fd, s.data(), n);
}

struct Launcher {
    int to = -1, from = -1;  // our ends: requests out, answers in
    pid_t pid = -1;
    std::mutex m;
    Launcher() {
        int req[2], ans[2];
        if (pipe2(req, O_CLOEXEC) != 0) return;
        if (pipe2(ans, O_CLOEXEC) != 0) {
            ::close(req[0]), ::close(req[1]);
            return;
        }
        const pid_t pid = fork();
        if (pid == 0) {
            ::close(req[1]), ::close(ans[0]);
            serve(req[0], ans[1]);
            _exit(0);  // never returns to the test runner, nor runs its exit handlers
        }
        ::close(req[0]), ::close(ans[1]);
        if (pid < 0) {
            ::close(req[1]), ::close(ans[0]);
            return;
        }
        to = req[1], from = ans[0];
        this->pid = pid;
    }
    // At the test process's exit: the launcher sees the end of its requests and ends; waited for,
    // so that its CPU time and its children's count in ours (scripts/test.sh reports them).
    ~Launcher() {
        if (to < 0) return;
        ::close(to), ::close(from);
        int status = 0;
        waitpid(pid, &status, 0);
    }
    // Until the test process closes its end (at its exit, however it ends).
    static void serve(int in, int out) {
        for (;;) {
            uint64_t n = 0;
            if (!read_all(in, &n, 8) || n > 100000) return;
            std::vector<std::string> args(n);
            std::string in_path, out_path, err_path, cwd;
            int64_t nums[3];  // feed_stdin, limit_mib, cpu_seconds
            for (auto& a : args)
                if (!get(in, a)) return;
            if (!get(in, in_path) || !get(in, out_path) || !get(in, err_path) || !read_all(in, nums, sizeof nums)) return;
            uint64_t m = 0;
            if (!get(in, cwd) || !read_all(in, &m, 8) || m > 100000) return;
            std::vector<std::string> env(m);
            for (auto& e : env)
                if (!get(in, e)) return;
            rlimit limits[std::size(kPassedLimits)];
            if (!read_all(in, limits, sizeof limits)) return;
            const Spawned s = spawn_and_wait(args, in_path, out_path, err_path, nums[0] != 0, long(nums[1]), long(nums[2]), &env, cwd, limits);
            const int64_t answer[2] = {s.status, s.max_rss_kib};
            if (!write_all(out, answer, sizeof answer)) return;
        }
    }
    std::optional<Spawned> run(const std::vector<std::string>& args, const std::string& in_path, const std::string& out_path,
                               const std::string& err_path, bool feed_stdin, long limit_mib, long cpu_seconds) {
        if (to < 0) return std::nullopt;
        std::lock_guard<std::mutex> lock(m);
        const uint64_t n = args.size();
        bool ok = write_all(to, &n, 8);
        for (const auto& a : args) ok = ok && put(to, a);
        const int64_t nums[3] = {feed_stdin ? 1 : 0, limit_mib, cpu_seconds};
        ok = ok && put(to, in_path) && put(to, out_path) && put(to, err_path) && write_all(to, nums, sizeof nums);
        // The test's working directory, environment and limits now, not the launcher's from before main.
        std::error_code ec;
        const std::string cwd = std::filesystem::current_path(ec).string();
        uint64_t m = 0;
        while (environ[m]) ++m;
        ok = ok && put(to, cwd) && write_all(to, &m, 8);
        for (uint64_t i = 0; i < m; ++i) ok = ok && put(to, environ[i]);
        rlimit limits[std::size(kPassedLimits)];
        for (size_t i = 0; i < std::size(kPassedLimits); ++i) getrlimit(kPassedLimits[i], &limits[i]);
        ok = ok && write_all(to, limits, sizeof limits);
        int64_t answer[2];
        if (!ok || !read_all(from, answer, sizeof answer)) return std::nullopt;
        return Spawned{int(answer[0]), long(answer[1])};
    }
};
// Started while the test program's static objects are built, before main.
Launcher launcher;

RunResult run(const std::vector<std::string>& args, const std::string& stdin_text, bool feed_stdin, long limit_mib,
              long cpu_seconds = 0) {
    char dir_template[] = "/tmp/journey-test-XXXXXX";
    std::string dir = mkdtemp(dir_template);
    std::string in_path = dir + "/in", out_path = dir + "/out", err_path = dir + "/err";
    { std::ofstream(in_path, std::ios::binary) << stdin_text; }
    RunResult r;
    std::optional<Spawned> s = launcher.run(args, in_path, out_path, err_path, feed_stdin, limit_mib, cpu_seconds);
    if (!s) s = spawn_and_wait(args, in_path, out_path, err_path, feed_stdin, limit_mib, cpu_seconds);  // no launcher
    r.max_rss_kib = s->max_rss_kib;
    r.exit_code = WIFEXITED(s->status) ? WEXITSTATUS(s->status) : 128 + WTERMSIG(s->status);
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
