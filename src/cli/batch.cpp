#include "batch.h"

#include <algorithm>
#include <sstream>
#include <iostream>

#include "common.h"
#include "interrupt.h"
#include "progress.h"
#include "journey/errors.h"
#include "journey/formats/json_file.h"
#include "journey/text/tokenizer.h"

namespace journey::cli {

namespace {

// The prompt of one batch line; throws InputError when the line is unusable. Its answer goes out
// as JSON, which holds only UTF-8, so a line that is not UTF-8 is refused here, alone.
std::string prompt_of(const std::string& line) {
    if (valid_utf8(line) != line) throw InputError("the line is not valid UTF-8: \"" + excerpt(line, 40) + "\"");
    if (!line.starts_with('{')) return line;
    if (!json_depth_ok(line)) throw InputError("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number too large (1e400)
        throw InputError(std::string("invalid JSON: ") + excerpt(e.what(), 160));
    }
    if (!j.is_object() || !j.contains("prompt") || !j["prompt"].is_string())
        throw InputError("a JSON line needs a string \"prompt\"");
    return j["prompt"].get<std::string>();
}

}  // namespace

void add_batch_option(CLI::App* cmd, std::string& file) {
    cmd->add_option("--batch", file,
                    "Run every line of FILE ('-' = stdin) as a prompt: plain text, or JSON {\"prompt\": ...}; "
                    "one JSON line out per prompt");
}

BatchInput open_batch(const std::string& file) {
    return {file, file == "-" ? std::string() : read_file(file, "--batch")};
}

void run_batch(const BatchInput& input, const std::function<nlohmann::ordered_json(const std::string& prompt)>& one) {
    const std::string& file = input.file;
    const std::string& contents = input.contents;
    std::istringstream in_file(contents);
    std::istream& in = file == "-" ? std::cin : in_file;
    const size_t total = size_t(std::count(contents.begin(), contents.end(), '\n')) +
                         (contents.empty() || contents.ends_with('\n') ? 0 : 1);  // 0 for stdin: no bar
    Progress bar("batch", "prompts");
    int failed = 0, n = 0;
    std::string line;
    // After Ctrl-C the line in progress is finished and written whole; no new one starts.
    for (n = 1; !interrupt_flag().load() && std::getline(in, line); ++n) {
        if (line.ends_with('\r')) line.pop_back();
        nlohmann::ordered_json j;
        try {
            j = one(prompt_of(line));
        } catch (const InputError& e) {
            j = {{"error", e.what()}};
            ++failed;
        }
        nlohmann::ordered_json row = {{"line", n}};
        row.update(j);
        out_line(row.dump());
        bar.update(size_t(n), total);
    }
    if (failed > 0)
        throw InputError("--batch " + file + ": " + std::to_string(failed) + " of " + std::to_string(n - 1) +
                         " prompts failed (see their \"error\" lines)");
}

}  // namespace journey::cli
