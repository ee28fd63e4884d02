// The README's example outputs (```console blocks, written by scripts/readme_examples.py) are
// what the binary prints today, with the default model: they cannot drift.
#include <fstream>
#include <iterator>
#include <sstream>

#include <catch2/catch.hpp>

#include "cli_run.h"

using namespace journey::test;

namespace {

struct Example {
    std::string command;
    std::string output;
};

// `journey a "b c" 'd'` -> {a, b c, d}: the quoting the README's commands use.
std::vector<std::string> shell_words(const std::string& s) {
    std::vector<std::string> words;
    std::string w;
    bool in_word = false;
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '"' || c == '\'') {
            const size_t end = s.find(c, i + 1);
            w += s.substr(i + 1, end - i - 1);
            i = end;
            in_word = true;
        } else if (c == ' ') {
            if (in_word) words.push_back(w);
            w.clear();
            in_word = false;
        } else {
            w += c;
            in_word = true;
        }
    }
    if (in_word) words.push_back(w);
    return words;
}

std::vector<Example> examples(const std::string& readme) {
    std::vector<Example> ex;
    std::istringstream in(readme);
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
        if (!inside) {
            inside = line == "```console";
            continue;
        }
        if (line == "```") {
            inside = false;
            continue;
        }
        if (line.starts_with("$ journey ")) ex.push_back({line.substr(2), ""});
        else if (!ex.empty()) ex.back().output += line + "\n";
    }
    for (Example& e : ex) {
        while (e.output.ends_with('\n')) e.output.pop_back();  // the separator line, and the block's end
    }
    return ex;
}

// The README is written by the Release build (g++). clang's code for the same float expressions
// (the sanitizer build) can round a printed last digit the other way (0.330061 vs 0.330060), so
// there the digits are compared as digits, not values; every other byte must still match.
std::string comparable(std::string s) {
#if defined(__clang__)
    for (char& c : s)
        if (c >= '0' && c <= '9') c = '#';
#endif
    return s;
}

}  // namespace

TEST_CASE("README examples are the binary's output", "[cli][readme]") {
    std::ifstream f(JOURNEY_SOURCE_DIR "/README.md", std::ios::binary);
    const std::string readme(std::istreambuf_iterator<char>(f), {});
    const auto ex = examples(readme);
    REQUIRE(ex.size() >= 3);  // quick start (generate, next) and trace
    for (const Example& e : ex) {
        std::vector<std::string> args = shell_words(e.command);
        args.erase(args.begin());  // "journey"
        const RunResult r = run_journey(args);
        INFO(e.command << "\n(rewrite the README's examples with scripts/readme_examples.py)");
        REQUIRE(r.exit_code == 0);
        std::string got = r.err + r.out;
        while (got.ends_with('\n')) got.pop_back();
        CHECK(comparable(got) == comparable(e.output));
    }
}
