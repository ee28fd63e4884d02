#include "common.h"

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <unistd.h>

#include "journey/errors.h"

namespace journey::cli {

void add_prompt_options(CLI::App* cmd, PromptSource& src) {
    auto* p = cmd->add_option("-p,--prompt", src.text, "Prompt text (default: read stdin)");
    auto* f = cmd->add_option("-f,--file", src.file, "Read the prompt from FILE");
    p->excludes(f);
}

std::string read_prompt(const PromptSource& src) {
    if (!src.file.empty()) {
        std::ifstream in(src.file, std::ios::binary);
        if (!in) throw InputError("--file " + src.file + ": cannot read");
        std::ostringstream ss;
        ss << in.rdbuf();  // one bulk copy; istreambuf_iterator goes a byte at a time
        return ss.str();
    }
    if (!src.text.empty()) return src.text;
    if (isatty(STDIN_FILENO)) throw UsageError("no prompt: give -p TEXT, -f FILE, or pipe text on stdin");
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    return ss.str();
}

void out(std::string_view bytes) {
    if (bytes.empty()) return;
    if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() || std::fflush(stdout) != 0) {
        if (errno == EPIPE) throw BrokenPipe{};
        throw InputError("cannot write to stdout");
    }
}

void out_line(std::string_view line) {
    std::string s(line);
    s += '\n';
    out(s);
}

}  // namespace journey::cli
