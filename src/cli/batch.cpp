#include "batch.h"

#include <fstream>
#include <iostream>

#include "common.h"
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
    } catch (const nlohmann::json::parse_error& e) {
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

void run_batch(const std::string& file, const std::function<nlohmann::ordered_json(const std::string& prompt)>& one) {
    std::ifstream in_file;
    if (file != "-") {
        in_file.open(file, std::ios::binary);
        if (!in_file) throw InputError("--batch " + file + ": cannot read");
    }
    std::istream& in = file == "-" ? std::cin : in_file;
    int failed = 0, n = 0;
    std::string line;
    for (n = 1; std::getline(in, line); ++n) {
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
    }
    if (failed > 0)
        throw InputError("--batch " + file + ": " + std::to_string(failed) + " of " + std::to_string(n - 1) +
                         " prompts failed (see their \"error\" lines)");
}

}  // namespace journey::cli
