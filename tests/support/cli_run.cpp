#include "cli_run.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sys/wait.h>
#include <unistd.h>

namespace journey::test {

static std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

RunResult run_journey(const std::vector<std::string>& args, const std::string& stdin_text, bool feed_stdin) {
    char dir_template[] = "/tmp/journey-test-XXXXXX";
    std::string dir = mkdtemp(dir_template);
    std::string in_path = dir + "/in", out_path = dir + "/out", err_path = dir + "/err";
    { std::ofstream(in_path, std::ios::binary) << stdin_text; }
    RunResult r;
    std::fflush(nullptr);  // or the child would flush a copy of our buffered output
    pid_t pid = fork();
    if (pid == 0) {
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
    waitpid(pid, &status, 0);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    std::remove(in_path.c_str());
    std::remove(out_path.c_str());
    std::remove(err_path.c_str());
    rmdir(dir.c_str());
    return r;
}

}  // namespace journey::test
