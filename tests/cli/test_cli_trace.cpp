// journey trace, run as a user would, on the gpt2-tiny reference checkpoint.
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"

using namespace journey::test;
using Catch::Matchers::Contains;

namespace {

const std::string prompt = "The capital of France is";

size_t columns(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

}  // namespace

TEST_CASE("trace --format json: final top equals journey next's, exactly", "[cli][trace]") {
    auto t = run_journey({"trace", "-m", tiny, "-p", prompt, "--format", "json", "-t", "1"});
    INFO(t.err);
    REQUIRE(t.exit_code == 0);
    auto n = run_journey({"next", "-m", tiny, "-p", prompt, "--json", "-t", "1"});
    REQUIRE(n.exit_code == 0);
    const auto tj = nlohmann::json::parse(t.out), nj = nlohmann::json::parse(n.out);
    CHECK(tj["final"]["top"] == nj["top"]);
    CHECK(tj["final"]["entropy"] == nj["entropy"]);
    CHECK(tj["position"] == 4);
    CHECK(tj["tokens"].size() == 5);
    CHECK(tj["target"]["id"] == nj["top"][0]["id"]);
    const auto& last = tj["layers"].back()["lens"];
    for (size_t i = 0; i < 10; ++i) {
        CHECK(last["top"][i]["id"] == nj["top"][i]["id"]);
        CHECK(last["top"][i]["prob"] == nj["top"][i]["prob"]);
    }
    CHECK(last["target_rank"] == 1);
    CHECK(last["kl_to_final"] == 0.0);
    CHECK(t.out.find("NaN") == std::string::npos);
    CHECK(t.out.find("Infinity") == std::string::npos);
    CHECK(t.out.find("null") == std::string::npos);
}

TEST_CASE("trace --format jsonl: one line per stage", "[cli][trace]") {
    auto r = run_journey({"trace", "-m", tiny, "-p", prompt, "--format", "jsonl", "--pos", "2", "--target", "#6342"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::vector<nlohmann::json> lines;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
    REQUIRE(lines.size() == 2 + 2 + 1);
    CHECK(lines[0]["stage"] == "tokens");
    CHECK(lines[0]["position"] == 2);
    CHECK(lines[0]["target"]["token"] == " Paris");
    CHECK(lines[1]["stage"] == "embedding");
    CHECK(lines[2]["stage"] == "layer");
    CHECK(lines[2]["attn"]["heads"][0]["pattern"].size() == 5);
    CHECK(lines[2]["attn"]["heads"][0]["pattern"][3] == 0.0);  // the future is masked
    CHECK(lines[4]["stage"] == "final");
}

TEST_CASE("trace: the text view stays within 100 columns", "[cli][trace]") {
    std::string text;
    for (int i = 0; i < 6; ++i) text += " supercalifragilistic\n\t\xE2\x82\xAC";
    auto r = run_journey({"trace", "-m", tiny, "-p", text, "--top-k", "12"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("layer 1") && Contains("lens") && Contains("entropy") && Contains("rank"));
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
        INFO(line);
        CHECK(columns(line) <= 100);
    }
}

TEST_CASE("trace: bad positions and targets are usage errors", "[cli][trace]") {
    auto r = run_journey({"trace", "-m", tiny, "-p", prompt, "--pos", "5"});
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Contains("--pos"));
    r = run_journey({"trace", "-m", tiny, "-p", prompt, "--target", " Paris is"});
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Contains("--target") && Contains("2 tokens"));
    CHECK(run_journey({"trace", "-m", tiny, "-p", prompt, "--format", "xml"}).exit_code == 1);
    CHECK(run_journey({"trace", "-m", tiny, "-p", prompt, "--html", "/nonexistent-dir/x.html"}).exit_code == 3);
}
