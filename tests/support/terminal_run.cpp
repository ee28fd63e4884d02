#include "terminal_run.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

namespace journey::test {

namespace {

[[noreturn]] void exec_journey(const std::vector<std::string>& args) {
    std::vector<std::string> copy = args;
    std::string bin = JOURNEY_BIN;
    std::vector<char*> argv{bin.data()};
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
}

int exit_code_of(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace

TtyResult run_on_tty(const std::vector<std::string>& args) {
    int master = -1, slave = -1;
    TtyResult r;
    if (openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) return r;
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
        close(master);
        setsid();
        dup2(slave, 0);
        dup2(slave, 1);
        dup2(slave, 2);
        if (slave > 2) close(slave);
        exec_journey(args);
    }
    close(slave);
    char buf[4096];
    for (;;) {
        const ssize_t n = read(master, buf, sizeof buf);
        if (n <= 0) break;  // EIO once the child has closed the terminal
        r.screen.append(buf, size_t(n));
    }
    close(master);
    int status = 0;
    waitpid(pid, &status, 0);
    r.exit_code = exit_code_of(status);
    return r;
}

SignalResult run_and_signal(const std::vector<std::string>& args, int sig, int after_lines, bool twice) {
    SignalResult r;
    int out_pipe[2];
    if (pipe(out_pipe) != 0) return r;
    char err_tmpl[] = "/tmp/journey-signal-XXXXXX";
    const int err_fd = mkstemp(err_tmpl);
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
        close(out_pipe[0]);
        const int null_in = open("/dev/null", O_RDONLY);
        dup2(null_in, 0);
        dup2(out_pipe[1], 1);
        dup2(err_fd, 2);
        exec_journey(args);
    }
    close(out_pipe[1]);
    close(err_fd);
    int lines = 0;
    bool sent = false;
    auto send = [&] {
        kill(pid, sig);
        if (twice) kill(pid, sig);
        sent = true;
    };
    char buf[4096];
    for (;;) {
        pollfd p{out_pipe[0], POLLIN, 0};
        if (poll(&p, 1, 10) == 0) {
            // Nothing on stdout yet: with after_lines 0, signal once the seed line is out
            // (journey prints it after its handlers are in place).
            if (!sent && after_lines == 0) {
                std::ifstream err(err_tmpl, std::ios::binary);
                const std::string text(std::istreambuf_iterator<char>(err), {});
                if (text.find("seed:") != std::string::npos) send();
            }
            continue;
        }
        const ssize_t n = read(out_pipe[0], buf, sizeof buf);
        if (n <= 0) break;
        r.out.append(buf, size_t(n));
        for (ssize_t i = 0; i < n; ++i) lines += buf[i] == '\n';
        if (!sent && after_lines > 0 && lines >= after_lines) send();
    }
    close(out_pipe[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    r.exit_code = exit_code_of(status);
    std::ifstream err(err_tmpl, std::ios::binary);
    r.err.assign(std::istreambuf_iterator<char>(err), {});
    std::remove(err_tmpl);
    return r;
}

}  // namespace journey::test
