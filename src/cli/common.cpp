#include "common.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <unistd.h>

#include "escapes.h"
#include "journey/errors.h"

namespace journey::cli {

namespace {
bool g_quiet = false;
}  // namespace

bool quiet() { return g_quiet; }
void set_quiet(bool q) { g_quiet = q; }

void add_prompt_options(CLI::App* cmd, PromptSource& src, PromptFeatures features) {
    src.drop_newline = features.drop_newline;
    const std::string nl = features.drop_newline ? "; one final newline is dropped, as an editor adds it" : "";
    auto* p = cmd->add_option("-p,--prompt", src.text,
                              "Prompt text; escapes \\n \\t \\r \\\\ \\' \\\" \\xNN are processed as llama-cli does");
    auto* f = cmd->add_option("-f,--file", src.file, "Read the prompt from FILE ('-' = stdin), bytes as they are" + nl);
    auto* pos = cmd->add_option("prompt", src.positional,
                                "The prompt, when no -p or -f is given (default: stdin, bytes as they are" + nl + ")");
    cmd->add_flag("--no-escape", src.no_escape, "Take -p literally (no escape processing)");
    p->excludes(f)->excludes(pos);
    f->excludes(pos);
    if (features.ids) {
        auto* ids = cmd->add_option("--ids", src.ids,
                                    "The prompt as token ids (\"1 2 3\" or \"1,2,3\"; '-' = stdin), fed exactly as "
                                    "given: no tokenizer, no BOS added");
        ids->excludes(p)->excludes(f)->excludes(pos);
    }
}

std::string why(int err) {
    switch (err) {
        case ENOENT: return "no such file or directory";
        case EACCES: return "permission denied";
        case EISDIR: return "is a directory";
        default: return std::strerror(err);
    }
}

std::string read_file(const std::string& path, std::string_view flag, size_t max_bytes) {
    std::error_code ec;
    if (path != "-" && std::filesystem::is_directory(path, ec))
        throw InputError(std::string(flag) + " " + path + ": cannot read: is a directory");
    std::ifstream file;
    if (path != "-") {
        file.open(path, std::ios::binary);
        if (!file) throw InputError(std::string(flag) + " " + path + ": cannot read: " + why(errno));
    }
    std::istream& in = path == "-" ? std::cin : file;
    if (max_bytes == SIZE_MAX) {
        std::ostringstream ss;
        ss << in.rdbuf();  // one bulk copy; istreambuf_iterator goes a byte at a time
        return ss.str();
    }
    // Bounded: a device such as /dev/zero, or a file far beyond what the reader can use, stops
    // at max_bytes instead of taking all memory.
    std::string text;
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        text.append(buf, size_t(in.gcount()));
        if (text.size() > max_bytes)
            throw InputError(std::string(flag) + " " + (path == "-" ? std::string("stdin") : path) + ": larger than " +
                             std::to_string(max_bytes >> 20) + " MiB");
    }
    return text;
}

std::string read_prompt(const PromptSource& src) {
    if (!src.text.empty()) return src.no_escape ? src.text : process_escapes(src.text);
    if (!src.positional.empty()) return src.positional;
    std::string text;
    // A prompt is read up to 256 MiB (/dev/zero took 2 GB before the tokenizer saw it; 256 MiB
    // is days of scoring and far beyond any context).
    constexpr size_t kMaxPrompt = size_t{256} << 20;
    if (!src.file.empty()) {
        text = read_file(src.file, "--file", kMaxPrompt);
    } else {
        if (isatty(STDIN_FILENO))
            throw UsageError("no prompt: give -p TEXT, -f FILE, a PROMPT argument, or pipe text on stdin");
        text = read_file("-", "stdin", kMaxPrompt);
    }
    if (src.drop_newline && text.ends_with('\n')) {
        text.pop_back();
        if (text.ends_with('\r')) text.pop_back();
    }
    return text;
}

void out(std::string_view bytes) {
    if (bytes.empty()) return;
    if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() || std::fflush(stdout) != 0) {
        if (errno == EPIPE) throw BrokenPipe{};
        throw InputError("stdout: cannot write: " + why(errno));
    }
}

void out_line(std::string_view line) {
    std::string s(line);
    s += '\n';
    out(s);
}

namespace {
std::vector<std::string>& command_line_store() {
    static std::vector<std::string> args;
    return args;
}
}  // namespace

const std::vector<std::string>& command_line() { return command_line_store(); }
void set_command_line(int argc, const char* const* argv) { command_line_store().assign(argv, argv + argc); }

}  // namespace journey::cli
