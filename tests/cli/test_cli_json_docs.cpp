// docs/json.md lists every key the binary emits: each JSON output is run here, every key path
// (`a.b`, `a[].b`) collected, and looked up in the output's section of the page.
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"

using namespace journey::test;

namespace {

void key_paths(const nlohmann::json& j, const std::string& prefix, std::set<std::string>& out) {
    if (j.is_object()) {
        for (const auto& [k, v] : j.items()) {
            const std::string p = prefix.empty() ? k : prefix + "." + k;
            out.insert(p);
            key_paths(v, p, out);
        }
    } else if (j.is_array()) {
        for (const auto& v : j) key_paths(v, prefix + "[]", out);
    }
}

// The text of "## <title>" up to the next "## ".
std::string section(const std::string& doc, const std::string& title) {
    const size_t start = doc.find("\n## " + title + "\n");
    if (start == std::string::npos) return {};
    const size_t end = doc.find("\n## ", start + 4);
    return doc.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace

TEST_CASE("docs/json.md documents every key of every JSON output", "[cli][json][docs]") {
    std::ifstream f(JOURNEY_SOURCE_DIR "/docs/json.md", std::ios::binary);
    const std::string doc(std::istreambuf_iterator<char>(f), {});
    REQUIRE(!doc.empty());
    struct Output {
        std::string title;
        std::vector<std::string> args;
        std::string in;
    };
    const std::vector<Output> outputs = {
        {"tokenize --json", {"tokenize", "-m", gpt2, "--json", "-p", "Hi<|endoftext|>"}, ""},
        {"detokenize --json", {"detokenize", "-m", gpt2, "--json", "1", "500"}, ""},
        {"next --json", {"next", "-m", gpt2, "--json", "-p", "Hi"}, ""},
        {"next --json", {"next", "-m", gpt2, "--json", "-p", "Hi", "--sampler"}, ""},
        {"generate --format jsonl",
         {"generate", "-m", gpt2, "--format", "jsonl", "-p", "Hi", "-n", "3", "--top-logprobs", "2", "-q"}, ""},
        {"generate --json (or --format json)",
         {"generate", "-m", gpt2, "--json", "-p", "Hi", "-n", "3", "--top-logprobs", "2", "-q"}, ""},
        {"score --json", {"score", "-m", gpt2, "--json", "-p", "Hi there"}, ""},
        {"trace --json (or --format json)", {"trace", "-m", gpt2, "--json", "-p", "Hi there"}, ""},
        {"trace --format jsonl", {"trace", "-m", gpt2, "--format", "jsonl", "-p", "Hi there"}, ""},
        {"trace --json (or --format json)", {"trace", "-m", gpt2, "--json", "-p", "Hi there", "--contrast", "#5"}, ""},
        {"trace --format jsonl", {"trace", "-m", gpt2, "--format", "jsonl", "-p", "Hi there", "--attribute"}, ""},
        {"patch --json", {"patch", "-m", gpt2, "--json", "--clean", "Hi there", "--corrupted", "Hi where"}, ""},
        {"info --json", {"info", "-m", gpt2, "--json"}, ""},
        {"bench --json", {"bench", "-m", gpt2, "--json", "-p", "4", "-n", "2", "-r", "1", "--bandwidth"}, ""},
        {"--batch (next, generate, score)", {"next", "-m", gpt2, "--batch", "-"}, "Hi\n{\"prompt\": 3}\n"},
        {"chat --json",  // a reasoning model's (harmony) reply, reasoning_content included
         {"chat", "-m", std::string(JOURNEY_TEST_DATA) + "/models/gpt-oss/gpt-oss-F32.gguf", "--json", "--messages", "-", "-n", "3"},
         R"([{"role":"user","content":"Hi"}])"},
    };
    for (const Output& o : outputs) {
        const RunResult r = run_journey(o.args, o.in);
        INFO(o.title << ": " << r.err);
        REQUIRE((r.exit_code == 0 || o.title.starts_with("--batch")));
        const std::string sec = section(doc, o.title);
        REQUIRE(!sec.empty());
        // trace's JSON Lines are the document's parts: a stage's keys are documented at their
        // place in the document (a "layer" line is an element of `layers`).
        const bool trace_lines = o.title == "trace --format jsonl";
        std::set<std::string> paths;
        std::istringstream lines(r.out);
        for (std::string line; std::getline(lines, line);) {
            nlohmann::json j = nlohmann::json::parse(line);
            std::string prefix;
            if (trace_lines) {
                const std::string stage = j["stage"];
                prefix = stage == "layer" ? "layers[]" : stage == "tokens" ? "" : stage;
                j.erase("stage");
                paths.insert("stage");
            }
            key_paths(j, prefix, paths);
        }
        for (const std::string& p : paths) {
            // A batch line is the subcommand's own object plus `line`/`error`: those two are
            // this section's; the rest is documented under `next --json`.
            const std::string& where = o.title.starts_with("--batch") && p != "line" && p != "error"
                                           ? section(doc, "next --json")
                                       : trace_lines && p != "stage" ? section(doc, "trace --json (or --format json)")
                                                                     : sec;
            INFO(o.title << ": key " << p);
            CHECK(where.find("`" + p + "`") != std::string::npos);
        }
    }
}
