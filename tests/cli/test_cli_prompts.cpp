// Prompts as llama-cli users give them: -p escapes, an editor's final newline, -f -, a
// positional prompt, and --ids. Model: the GPT-2 stand-in of tests/data/cli (llama.cpp's
// greedy tokens for its ids in gpt2.expect.json).
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"

using namespace journey::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

const nlohmann::json& expect() {
    static const nlohmann::json j =
        nlohmann::json::parse(std::ifstream(std::string(JOURNEY_TEST_DATA) + "/cli/gpt2.expect.json"));
    return j;
}

std::string ids_text(const nlohmann::json& ids, const char* sep = " ") {
    std::string s;
    for (const auto& id : ids) s += (s.empty() ? "" : sep) + std::to_string(id.get<int>());
    return s;
}

std::string tokenize(std::vector<std::string> args, const std::string& in = "") {
    args.insert(args.begin(), {"tokenize", "-m", gpt2});
    auto r = run_journey(args, in);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
}

}  // namespace

TEST_CASE("-p processes escapes as llama-cli; --no-escape, -f and stdin keep bytes", "[cli][prompt]") {
    CHECK(tokenize({"-p", "a\\nb\\tc\\\\d\\x41\\'\\\""}) == tokenize({}, "a\nb\tc\\dA'\""));
    CHECK(tokenize({"-p", "a\\rb"}) == tokenize({}, "a\rb"));
    CHECK(tokenize({"-p", "keep \\q and \\x4"}) == tokenize({}, "keep \\q and \\x4"));  // not escapes
    CHECK(tokenize({"--no-escape", "-p", "a\\nb"}) == tokenize({}, "a\\nb"));
    CHECK(tokenize({"-f", "-"}, "a\\nb") == tokenize({}, "a\\nb"));
    CHECK(tokenize({"-p", "a\\nb"}) != tokenize({}, "a\\nb"));
}

TEST_CASE("a positional prompt is the prompt; with -p it is refused", "[cli][prompt]") {
    CHECK(tokenize({"Hello world"}) == tokenize({"-p", "Hello world"}));
    auto r = run_journey({"next", "-m", gpt2, "-p", "a", "b"});
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, StartsWith("journey: "));
}

TEST_CASE("next/generate/trace drop one final newline of stdin or -f; tokenize/score keep it", "[cli][prompt]") {
    const auto plain = run_journey({"next", "-m", gpt2, "-p", "Hello there", "--json"});
    REQUIRE(plain.exit_code == 0);
    for (const std::string in : {"Hello there\n", "Hello there\r\n"}) {
        auto r = run_journey({"next", "-m", gpt2, "--json"}, in);
        CHECK(r.out == plain.out);
        auto f = run_journey({"next", "-m", gpt2, "-f", "-", "--json"}, in);
        CHECK(f.out == plain.out);
    }
    // Only one newline goes: a blank last line is part of the text.
    CHECK(run_journey({"next", "-m", gpt2, "--json"}, "Hello there\n\n").out != plain.out);
    auto g1 = run_journey({"generate", "-m", gpt2, "--temp", "0", "-n", "4", "--json", "-q"}, "Hello there\n");
    auto g2 = run_journey({"generate", "-m", gpt2, "--temp", "0", "-n", "4", "--json", "-q", "-p", "Hello there"});
    CHECK(nlohmann::json::parse(g1.out)["tokens"] == nlohmann::json::parse(g2.out)["tokens"]);
    auto t1 = run_journey({"trace", "-m", gpt2, "--json"}, "Hello there\n");
    auto t2 = run_journey({"trace", "-m", gpt2, "--json", "-p", "Hello there"});
    CHECK(t1.out == t2.out);

    CHECK(tokenize({}, "Hello there\n") != tokenize({"-p", "Hello there"}));
    auto s1 = run_journey({"score", "-m", gpt2, "--json"}, "Hello there\n");
    auto s2 = run_journey({"score", "-m", gpt2, "--json", "-p", "Hello there"});
    CHECK(nlohmann::json::parse(s1.out)["token_count"] == nlohmann::json::parse(s2.out)["token_count"].get<int>() + 1);
}

TEST_CASE("--ids: the prompt as token ids, exactly as given (llama.cpp's greedy tokens)", "[cli][prompt][ids]") {
    for (const auto& cs : expect()["cases"]) {
        if (cs["ids"].size() > 20) continue;  // the short case is enough here
        auto r = run_journey({"generate", "-m", gpt2, "--ids", ids_text(cs["ids"]), "-n", "16", "--temp", "0",
                              "--ignore-eos", "--json"});
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const auto j = nlohmann::json::parse(r.out);
        std::vector<int> got;
        for (const auto& t : j["tokens"]) got.push_back(t["id"]);
        CHECK(j["usage"]["prompt_tokens"] == cs["ids"].size());
        // Equal while llama.cpp's margins are clear of float noise (fixtures README).
        const auto greedy = cs["greedy16"].get<std::vector<int>>();
        const auto margins = cs["greedy16_margins"].get<std::vector<double>>();
        for (size_t i = 0; i < greedy.size() && margins[i] > 1e-2; ++i) CHECK(got[i] == greedy[i]);

        // The same ids with commas, from stdin, and for next (top-1 = llama.cpp's).
        auto c = run_journey({"generate", "-m", gpt2, "--ids", ids_text(cs["ids"], ","), "-n", "16", "--temp", "0",
                              "--ignore-eos", "--json"});
        CHECK(nlohmann::json::parse(c.out)["tokens"] == j["tokens"]);
        auto n = run_journey({"next", "-m", gpt2, "--ids", "-", "--json"}, ids_text(cs["ids"]) + "\n");
        INFO(n.err);
        REQUIRE(n.exit_code == 0);
        CHECK(nlohmann::json::parse(n.out)["top"][0]["id"] == cs["top20"][0]["id"]);
        auto s = run_journey({"score", "-m", gpt2, "--ids", ids_text(cs["ids"]), "--json"});
        CHECK(nlohmann::json::parse(s.out)["token_count"] == cs["ids"].size() - 1);
        auto t = run_journey({"trace", "-m", gpt2, "--ids", ids_text(cs["ids"]), "--json"});
        CHECK(nlohmann::json::parse(t.out)["tokens"].size() == cs["ids"].size());
    }
}

TEST_CASE("--ids outside the vocabulary or not numbers are refused", "[cli][prompt][ids]") {
    auto r = run_journey({"next", "-m", gpt2, "--ids", "1 501"});
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, StartsWith("journey: --ids: token id 501 is out of the vocabulary [0, 501)"));
    auto w = run_journey({"generate", "-m", gpt2, "--ids", "1 two"});
    CHECK(w.exit_code == 3);
    CHECK_THAT(w.err, StartsWith("journey: --ids: \"two\" is not a token id"));
    CHECK_THAT(w.err, !Contains("seed:"));
    CHECK(run_journey({"next", "-m", gpt2, "--ids", "1", "-p", "x"}).exit_code == 1);
}
