// Every error is one line, `journey: <file or flag>: <what is wrong>`, CLI11's own included;
// files are recognised by content and the message says what was expected.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "cli_run.h"
#include "files.h"
#include "gguf_writer.h"

using namespace journey::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

// The one line journey printed on stderr; the test fails if there is more.
std::string error_line(const RunResult& r) {
    INFO(r.err);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    return r.err.substr(0, r.err.find('\n'));
}

}  // namespace

TEST_CASE("unknown subcommand: the nearest one and the list", "[cli][messages]") {
    auto r = run_journey({"gen", "-p", "hi"});
    CHECK(r.exit_code == 1);
    CHECK_THAT(error_line(r), StartsWith("journey: gen: unknown subcommand; did you mean generate? (subcommands: "
                                         "tokenize, detokenize, next,"));
    auto none = run_journey({});
    CHECK(none.exit_code == 1);
    CHECK_THAT(error_line(none), StartsWith("journey: no subcommand given (subcommands: "));
}

TEST_CASE("unknown flag: named first, the nearest suggested, --help pointed to", "[cli][messages]") {
    auto r = run_journey({"generate", "-m", gpt2, "--tmep", "0.5", "-p", "hi"});
    CHECK(r.exit_code == 1);
    CHECK(error_line(r) == "journey: --tmep: unknown flag for journey generate; did you mean --temp? (journey "
                           "generate --help lists its flags)");
    auto n = run_journey({"next", "-m", gpt2, "-p", "hi", "--stop", "x"});  // (next --sampler takes --temperature)
    CHECK_THAT(error_line(n), StartsWith("journey: --stop: unknown flag for journey next"));
}

TEST_CASE("numbers: the range in words, the value as given", "[cli][messages]") {
    CHECK(error_line(run_journey({"next", "-m", gpt2, "-p", "x", "--top-k", "0"})) ==
          "journey: --top-k: must be an integer ≥ 1, got 0");
    CHECK(error_line(run_journey({"next", "-m", gpt2, "-p", "x", "-t", "abc"})) ==
          "journey: -t/--threads: must be an integer ≥ 1, got abc");
    CHECK(error_line(run_journey({"generate", "-m", gpt2, "-p", "x", "--top-p", "2"})) ==
          "journey: --top-p: must be a number in (0, 1], got 2");
    CHECK(error_line(run_journey({"generate", "-m", gpt2, "-p", "x", "--temp", "hot"})) ==
          "journey: --temp: must be a number ≥ 0, got hot");
    CHECK(error_line(run_journey({"generate", "-m", gpt2, "-p"})) == "journey: --prompt: needs a value");
    CHECK(error_line(run_journey({"next", "-m", gpt2, "-p", "x", "-f", "y"})) ==
          "journey: --prompt: cannot be used with --file");
}

TEST_CASE("files are recognised by content and the message says what was expected", "[cli][messages][files]") {
    auto cfg = run_journey({"next", "-m", gpt2 + "/config.json", "-p", "hi"});
    CHECK(cfg.exit_code == 2);
    CHECK(error_line(cfg) == "journey: -m " + gpt2 + "/config.json: is a JSON file, not a model: pass the model "
                                                     "directory (" + gpt2 + ")");
    TempDir t;
    const std::string gguf = (t.path / "model.gguf").string();
    std::ofstream(gguf, std::ios::binary) << GgufBuilder().kv_str("general.architecture", "gpt2").build();
    auto tok = run_journey({"next", "-m", gpt2, "--tokenizer", gguf, "-p", "hi"});
    CHECK(tok.exit_code == 2);
    CHECK(error_line(tok) == "journey: --tokenizer " + gguf + ": is a GGUF model file, not a tokenizer (a GGUF "
                                                           "carries its own: pass it as -m)");

    // A whole llama2.c tokenizer made for a smaller vocabulary than the model's.
    const std::string small = (t.path / "tok3.bin").string();
    {
        std::ofstream f(small, std::ios::binary);
        const int32_t max_len = 8;
        f.write(reinterpret_cast<const char*>(&max_len), 4);
        for (int i = 0; i < 300; ++i) {
            const float score = 0;
            const std::string piece = i < 3 ? "<x>" : std::string(1, char(i % 256));
            const int32_t len = int32_t(piece.size());
            f.write(reinterpret_cast<const char*>(&score), 4);
            f.write(reinterpret_cast<const char*>(&len), 4);
            f.write(piece.data(), len);
        }
    }
    auto few = run_journey({"next", "-m", gpt2, "--tokenizer", small, "-p", "hi"});
    CHECK(few.exit_code == 2);
    CHECK_THAT(error_line(few), StartsWith("journey: " + small + ": not a usable llama2.c tokenizer: it has 300 "
                                           "tokens, the model 501"));
}

TEST_CASE("cannot read / cannot write say why", "[cli][messages][files]") {
    TempDir t;
    CHECK(error_line(run_journey({"next", "-m", gpt2, "-f", (t.path / "nope.txt").string()})) ==
          "journey: --file " + (t.path / "nope.txt").string() + ": cannot read: no such file or directory");
    CHECK(error_line(run_journey({"next", "-m", gpt2, "-f", t.path.string()})) ==
          "journey: --file " + t.path.string() + ": cannot read: is a directory");
    CHECK(error_line(run_journey({"generate", "-m", gpt2, "--batch", (t.path / "nope").string()})) ==
          "journey: --batch " + (t.path / "nope").string() + ": cannot read: no such file or directory");
    const std::string html = (t.path / "no-dir" / "t.html").string();
    CHECK(error_line(run_journey({"trace", "-m", gpt2, "-p", "hi", "--html", html})) ==
          "journey: --html " + html + ": cannot write: no such file or directory");
}

TEST_CASE("no seed line before an error that comes before generation", "[cli][messages]") {
    for (const auto& args : {std::vector<std::string>{"generate", "-m", "/nonexistent", "-p", "hi"},
                             std::vector<std::string>{"generate", "-m", gpt2, "-f", "/nonexistent"},
                             std::vector<std::string>{"generate", "-m", gpt2, "--ids", "9999"}}) {
        auto r = run_journey(args);
        CHECK(r.exit_code != 0);
        CHECK_THAT(r.err, !Contains("seed:"));
        CHECK_THAT(error_line(r), StartsWith("journey: "));
    }
}
