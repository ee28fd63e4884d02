// Pieces every subcommand shares: where the prompt comes from, and writing to stdout.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace journey::cli {

// Where a prompt comes from: -p TEXT (escapes processed as llama-cli does, unless --no-escape),
// -f FILE ('-' = stdin), a positional PROMPT, or stdin when none is given and stdin is not a
// terminal; or, where the subcommand allows it, --ids (token ids given as they are).
struct PromptSource {
    std::string text;        // -p
    std::string file;        // -f
    std::string positional;  // PROMPT
    std::string ids;         // --ids "1 2 3" or "1,2,3"; '-' = stdin
    bool no_escape = false;  // --no-escape: -p taken literally
    bool drop_newline = false;  // one trailing \n (or \r\n) of -f/stdin text is dropped
    bool given() const { return !text.empty() || !file.empty() || !positional.empty() || !ids.empty(); }
};
struct PromptFeatures {
    bool ids = false;           // offer --ids
    bool drop_newline = false;  // next/generate/trace: an editor's final newline is not part of the prompt
};
void add_prompt_options(CLI::App* cmd, PromptSource& src, PromptFeatures features = {});

// The prompt's text. Throws UsageError when none is given and stdin is a terminal, InputError
// if the file cannot be read (saying why).
std::string read_prompt(const PromptSource& src);

// The whole of FILE ('-' = stdin); `flag` names where the path came from in the error. A file
// larger than max_bytes is refused (InputError) after reading at most max_bytes + 64 KiB.
std::string read_file(const std::string& path, std::string_view flag, size_t max_bytes = SIZE_MAX);

// "no such file or directory", "permission denied", "is a directory": why a path failed.
std::string why(int err);

// Write to stdout and flush. A closed pipe (EPIPE) throws BrokenPipe, which main() turns
// into a quiet exit 0: `journey generate | head -c 20` is a normal way to stop.
struct BrokenPipe {};
void out(std::string_view bytes);
void out_line(std::string_view line);  // bytes + '\n'

// What `journey --version` prints (defined in main.cpp, the one file that knows the revision),
// and the command line as typed (main() records it): the trace page's provenance block.
std::string version_text();
const std::vector<std::string>& command_line();
void set_command_line(int argc, const char* const* argv);

// -q: no seed line, no progress, no log lines (errors still print).
bool quiet();
void set_quiet(bool q);

// JSON output (--json, --batch lines): text that is not UTF-8 (a model path of Latin-1 bytes)
// becomes U+FFFD instead of nlohmann's type_error.316 ending the run.
template <class Json>
std::string json_text(const Json& j) {
    return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace journey::cli
