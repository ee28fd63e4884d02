// Corpus jobs (issue 39): --shard K/N, -o FILE --resume, and the GNU parallel recipe
// (scripts/shard_run.sh) give back exactly the one-process output, byte for byte.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "cli_run.h"
#include "files.h"

using namespace journey::test;
using Catch::Matchers::Contains;

namespace {

namespace fs = std::filesystem;

// Prompts of different lengths, a JSON line, an empty one and one that fails (not a "prompt").
const char* const kPrompts =
    "And the LORD spake unto Moses\n"
    "In the beginning\n"
    "{\"prompt\": \"And God said, Let there be light: and there was\"}\n"
    "\n"
    "{\"text\": 1}\n"
    "Blessed are\n"
    "And it came to pass, when the king heard\n";

std::vector<std::string> gen(const std::string& file) {
    return {"-q", "generate", "--batch", file, "-n", "6", "--seed", "11", "--no-timings"};
}

}  // namespace

TEST_CASE("--shard K/N splits a batch; the shards sorted by line are the one-process output", "[cli][batch][corpus]") {
    TempDir d;
    const std::string in = d / "prompts.txt";
    std::ofstream(in) << kPrompts;
    const auto whole = run_journey(gen(in));
    REQUIRE(whole.exit_code == 3);  // the {"text": 1} line fails, the others run
    std::string merged;
    std::vector<std::pair<int, std::string>> lines;
    for (int k = 1; k <= 3; ++k) {
        auto args = gen(in);
        args.insert(args.end(), {"--shard", std::to_string(k) + "/3"});
        const auto r = run_journey(args);
        std::istringstream s(r.out);
        for (std::string line; std::getline(s, line);) lines.emplace_back(std::stoi(line.substr(8)), line);
    }
    REQUIRE(lines.size() == 7);
    std::stable_sort(lines.begin(), lines.end(), [](auto& a, auto& b) { return a.first < b.first; });
    for (auto& [n, line] : lines) merged += line + "\n";
    CHECK(merged == whole.out);
}

TEST_CASE("-o FILE --resume: a killed run's half line is cut off and only the missing records run", "[cli][batch][corpus]") {
    TempDir d;
    const std::string in = d / "prompts.txt", out = d / "out.jsonl";
    std::ofstream(in) << kPrompts;
    auto args = gen(in);
    args.insert(args.end(), {"-o", out});
    const auto full = run_journey(args);
    REQUIRE(full.out.empty());  // the records go to the file
    const std::string expected = slurp(out);
    REQUIRE(std::count(expected.begin(), expected.end(), '\n') == 7);
    // What a run killed in the middle of its fourth record would leave: three lines and a half.
    size_t cut = 0;
    for (int i = 0; i < 3; ++i) cut = expected.find('\n', cut) + 1;
    std::ofstream(out, std::ios::binary | std::ios::trunc) << expected.substr(0, cut + 15);
    args = gen(in);
    args.insert(args.end(), {"-o", out, "--resume"});
    args.erase(args.begin());  // not -q: the summary line says what was skipped
    const auto r = run_journey(args);
    INFO(r.err);
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Contains("4 records") && Contains("3 already in"));
    CHECK(slurp(out) == expected);
    // Resuming a complete output runs nothing and changes nothing.
    const auto again = run_journey(args);
    CHECK_THAT(again.err, Contains("0 records"));
    CHECK(slurp(out) == expected);
}

TEST_CASE("corpus flags refuse what they cannot do, before anything is written", "[cli][batch][corpus]") {
    TempDir d;
    const std::string in = d / "prompts.txt";
    std::ofstream(in) << kPrompts;
    CHECK_THAT(run_journey({"generate", "-p", "x", "--shard", "1/2"}).err, Contains("--shard: only with --batch"));
    for (const char* bad : {"0/2", "3/2", "1/0", "a/b", "1"}) {
        const auto r = run_journey({"generate", "--batch", in, "--shard", bad});
        CHECK(r.exit_code == 1);
        CHECK_THAT(r.err, Contains("--shard: must be K/N"));
    }
    CHECK_THAT(run_journey({"generate", "--batch", in, "--resume"}).err, Contains("--resume: needs -o"));
    const auto self = run_journey({"generate", "--batch", in, "-o", in});
    CHECK_THAT(self.err, Contains("is the --batch input itself"));
    CHECK(slurp(in) == kPrompts);
    const std::string foreign = d / "notes.txt";
    std::ofstream(foreign) << "my notes\n";
    const auto r = run_journey({"generate", "--batch", in, "-o", foreign, "--resume"});
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Contains("not a record of a --batch run"));
    CHECK(slurp(foreign) == "my notes\n");
    // A model that cannot load leaves an existing output as it was.
    const std::string old = d / "old.jsonl";
    std::ofstream(old) << "{\"line\":1}\n";
    const auto bad_model = run_journey({"generate", "-m", d / "nothing", "--batch", in, "-o", old});
    CHECK(bad_model.exit_code != 0);
    CHECK(slurp(old) == "{\"line\":1}\n");
}

TEST_CASE("the GNU parallel recipe (scripts/shard_run.sh) merges 3 shards into the one-process output", "[cli][batch][corpus]") {
    if (std::system("command -v parallel >/dev/null 2>&1") != 0) {
        WARN("GNU parallel is not installed (apt-get install parallel): the recipe test is skipped");
        return;
    }
    TempDir d;
    const std::string in = d / "prompts.txt", out = d / "merged.jsonl";
    std::ofstream(in) << kPrompts;
    const auto whole = run_journey(gen(in));
    // The recipe, as the README gives it, through a shell (no sanitizer options to pass on: the
    // binary is the one under test, its environment inherited).
    std::string cmd = "cd '" + d.path.string() + "' && JOBS=3 bash '" JOURNEY_SOURCE_DIR "/scripts/shard_run.sh' '" + out +
                      "' '" JOURNEY_BIN "'";
    for (const auto& a : gen(in)) cmd += " '" + a + "'";
    cmd += " 2>/dev/null";
    // journey exits 3 for the failing line (an "error" record): the recipe takes it as complete.
    REQUIRE(std::system(cmd.c_str()) == 0);
    CHECK(slurp(out) == whole.out);
    CHECK_FALSE(fs::exists(d.path / "merged.jsonl.1"));  // the shards are merged and removed
}
