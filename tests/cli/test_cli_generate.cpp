// journey generate / score / --batch, run as a user would, on the gpt2-tiny reference checkpoint.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "gpt2_tiny.h"
#include "safetensors_writer.h"

using namespace journey::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

std::vector<nlohmann::json> json_lines(const std::string& s) {
    std::vector<nlohmann::json> v;
    std::istringstream in(s);
    for (std::string line; std::getline(in, line);) v.push_back(nlohmann::json::parse(line));
    return v;
}

}  // namespace

TEST_CASE("generate --format json: greedy ids equal the reference's", "[cli][generate][reference]") {
    for (const auto& cs : gpt2_tiny_expected()["cases"]) {
        auto r = run_journey({"generate", "-m", tiny, "-p", cs["text"].get<std::string>(), "-n", "16", "--temp", "0",
                              "--format", "json"});
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const auto j = nlohmann::json::parse(r.out);
        std::vector<int> ids;
        for (const auto& t : j["tokens"]) ids.push_back(t["id"]);
        CHECK(ids == cs["greedy"].get<std::vector<int>>());
        CHECK(j["finish_reason"] == "length");
        CHECK(j["usage"]["prompt_tokens"] == cs["ids"].size());
        CHECK(j["usage"]["completion_tokens"] == 16);
    }
}

TEST_CASE("generate --format jsonl: a line per token, then done", "[cli][generate]") {
    auto r = run_journey({"generate", "-m", tiny, "-p", "Hello", "-n", "5", "--seed", "7", "--top-logprobs", "3",
                          "--format", "jsonl"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto lines = json_lines(r.out);
    REQUIRE(lines.size() == 6);
    std::string text;
    for (int i = 0; i < 5; ++i) {
        const auto& t = lines[size_t(i)];
        CHECK(t["type"] == "token");
        CHECK(t["index"] == i);
        CHECK(t["id"].is_number_integer());
        CHECK(t["token"].is_string());
        CHECK(t["bytes"].is_array());
        CHECK(t["logprob"].is_number());
        CHECK(t["logprob"].get<double>() <= 0);
        REQUIRE(t["top_logprobs"].size() == 3);
        for (const auto& a : t["top_logprobs"])
            CHECK((a.contains("id") && a.contains("token") && a.contains("bytes") && a["logprob"].is_number()));
        for (int b : t["bytes"]) text += char(b);
    }
    const auto& d = lines[5];
    CHECK(d["type"] == "done");
    CHECK(d["finish_reason"] == "length");
    CHECK(d["text"] == text);
    CHECK(d["seed"] == 7);
    CHECK(d["usage"]["prompt_tokens"] == 1);
    CHECK(d["usage"]["completion_tokens"] == 5);
    for (const char* k : {"prompt_ms", "gen_ms", "gen_tok_per_s"}) CHECK(d["timings"][k].is_number());
    CHECK_THAT(r.err, Contains("seed: 7"));
    CHECK_THAT(r.out, !Contains("null") && !Contains("NaN") && !Contains("Infinity"));
}

TEST_CASE("generate: text mode prints only the text; --echo puts the prompt first", "[cli][generate]") {
    auto json = run_journey({"generate", "-m", tiny, "-p", "Hello", "-n", "6", "--temp", "0", "--format", "json"});
    REQUIRE(json.exit_code == 0);
    const std::string text = nlohmann::json::parse(json.out)["text"];
    auto r = run_journey({"generate", "-m", tiny, "-p", "Hello", "-n", "6", "--temp", "0"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == text);
    CHECK_THAT(r.err, Contains("seed: "));
    r = run_journey({"generate", "-m", tiny, "-p", "Hello", "-n", "6", "--temp", "0", "--echo"});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "Hello" + text);
}

TEST_CASE("generate --stop: a stop string spanning tokens is never printed", "[cli][generate][stop]") {
    auto json = run_journey({"generate", "-m", tiny, "-p", "The capital of France is", "-n", "16", "--temp", "0",
                             "--format", "json"});
    REQUIRE(json.exit_code == 0);
    const auto j = nlohmann::json::parse(json.out);
    const size_t first = j["tokens"][0]["bytes"].size();
    const std::string text = j["text"];
    const std::string stop = text.substr(first - 1, 2);  // last byte of token 0, first of token 1
    auto r = run_journey({"generate", "-m", tiny, "-p", "The capital of France is", "-n", "16", "--temp", "0",
                          "--stop", "zzzz", "--stop", stop});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == text.substr(0, first - 1));
    r = run_journey({"generate", "-m", tiny, "-p", "The capital of France is", "-n", "16", "--temp", "0", "--stop",
                     stop, "--format", "json"});
    CHECK(nlohmann::json::parse(r.out)["finish_reason"] == "stop");
}

TEST_CASE("generate: same seed and flags, same output, whatever -t", "[cli][generate][sampler]") {
    const std::vector<std::string> base = {"generate", "-m", tiny, "-p", "Once upon a time", "-n", "24",
                                           "--temp", "1.2", "--top-k", "0", "--seed", "42"};
    auto with_threads = [&](const char* t) {
        auto args = base;
        args.insert(args.end(), {"-t", t});
        return run_journey(args);
    };
    auto a = with_threads("1"), b = with_threads("2");
    REQUIRE(a.exit_code == 0);
    REQUIRE(b.exit_code == 0);
    CHECK(a.out == b.out);
    CHECK_FALSE(a.out.empty());
    CHECK_THAT(a.err, Contains("seed: 42"));
}

TEST_CASE("generate: an empty prompt is conditioned on <|endoftext|>", "[cli][generate]") {
    auto r = run_journey({"generate", "-m", tiny, "-n", "3", "--format", "json"}, "");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(nlohmann::json::parse(r.out)["usage"]["prompt_tokens"] == 1);
}

TEST_CASE("generate: a consumer closing the pipe early is a quiet exit 0", "[cli][generate][pipe]") {
    const std::string cmd = std::string("bash -c '") + JOURNEY_BIN + " generate -m " + tiny +
                            " -p Hello -n 120 --ignore-eos --temp 0 2>/tmp/journey-epipe.err | head -c 20 "
                            ">/dev/null; exit ${PIPESTATUS[0]}'";
    const int status = std::system(cmd.c_str());
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    std::ifstream err("/tmp/journey-epipe.err");
    std::string line, all;
    while (std::getline(err, line)) all += line + "\n";
    CHECK_THAT(all, !Contains("journey:"));
    std::remove("/tmp/journey-epipe.err");
}

TEST_CASE("generate: each bad flag exits 1 naming it", "[cli][generate][errors]") {
    const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
        {{"-n", "-2"}, "-n"},
        {{"--temp", "-0.5"}, "--temp"},
        {{"--top-p", "0"}, "--top-p"},
        {{"--top-p", "1.5"}, "--top-p"},
        {{"--top-k", "-1"}, "--top-k"},
        {{"--min-p", "1.5"}, "--min-p"},
        {{"--min-p", "-0.1"}, "--min-p"},
        {{"--format", "xml"}, "--format"},
        {{"--seed", "abc"}, "--seed"},
        {{"--seed", "-3"}, "--seed"},
        {{"--temp", "hot"}, "--temp"},
        {{"--top-logprobs", "-2"}, "--top-logprobs"},
        {{"--stop", ""}, "--stop"},
    };
    for (const auto& [flags, name] : bad) {
        std::vector<std::string> args = {"generate", "-m", tiny, "-p", "x"};
        args.insert(args.end(), flags.begin(), flags.end());
        auto r = run_journey(args);
        INFO(flags[0] << " " << flags[1] << ": " << r.err);
        CHECK(r.exit_code == 1);
        CHECK_THAT(r.err, Contains(name));
        CHECK(r.out.empty());
    }
}

TEST_CASE("score --json: logprobs equal the reference's prompt_token_logprobs", "[cli][score][reference]") {
    for (const auto& cs : gpt2_tiny_expected()["cases"]) {
        auto r = run_journey({"score", "-m", tiny, "--json", "-p", cs["text"].get<std::string>()});
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const auto j = nlohmann::json::parse(r.out);
        const auto want = cs["prompt_token_logprobs"].get<std::vector<double>>();
        CHECK(j["condition"]["id"] == cs["ids"][0]);
        REQUIRE(j["tokens"].size() == want.size());
        double sum = 0;
        for (size_t t = 0; t < want.size(); ++t) {
            CHECK(j["tokens"][t]["id"] == cs["ids"][t + 1]);
            CHECK(std::abs(j["tokens"][t]["logprob"].get<double>() - want[t]) < 1e-4);
            sum += want[t];
        }
        CHECK(j["token_count"] == want.size());
        CHECK(std::abs(j["sum_logprob"].get<double>() - sum) < 1e-3);
        CHECK(std::abs(j["mean_nll"].get<double>() + sum / double(want.size())) < 1e-4);
    }
}

TEST_CASE("score: text mode, --bos, and a text longer than the context", "[cli][score]") {
    auto r = run_journey({"score", "-m", tiny, "-p", "Hello world"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("perplexity") && Contains("(condition)") && Contains("995"));
    r = run_journey({"score", "-m", tiny, "--json", "--bos", "-p", "Hello world"});
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["condition"]["id"] == 50256);
    CHECK(j["token_count"] == 2);

    std::string text;
    for (int i = 0; i < 300; ++i) text += " hello";
    r = run_journey({"score", "-m", tiny, "--json"}, text);
    REQUIRE(r.exit_code == 0);
    j = nlohmann::json::parse(r.out);
    CHECK(j["token_count"] == 299);
    CHECK(j["windows"].get<int>() > 1);
    CHECK(std::isfinite(j["perplexity"].get<double>()));
}

TEST_CASE("--batch: one JSON line per prompt, in order; a bad line gets an error object", "[cli][batch]") {
    TempDir d;
    const auto file = (d / "prompts.txt").string();
    std::ofstream(file) << "Hello world\n{not json\n{\"prompt\": \"The capital of France is\"}\n\n";
    auto r = run_journey({"generate", "-m", tiny, "--batch", file, "-n", "4", "--temp", "0"});
    INFO(r.err);
    CHECK(r.exit_code == 3);  // every line is processed; a failed one makes the exit status 3
    CHECK_THAT(r.err, Contains("1 of 4"));
    const auto lines = json_lines(r.out);
    REQUIRE(lines.size() == 4);
    for (int i = 0; i < 4; ++i) CHECK(lines[size_t(i)]["line"] == i + 1);
    CHECK(lines[0]["tokens"].size() == 4);
    CHECK_THAT(lines[1]["error"].get<std::string>(), Contains("invalid JSON"));
    std::vector<int> ids;
    for (const auto& t : lines[2]["tokens"]) ids.push_back(t["id"]);
    const auto greedy = gpt2_tiny_expected()["cases"][0]["greedy"].get<std::vector<int>>();
    CHECK(ids == std::vector<int>(greedy.begin(), greedy.begin() + 4));
    CHECK(lines[3]["usage"]["prompt_tokens"] == 1);  // an empty line: an empty prompt

    r = run_journey({"score", "-m", tiny, "--batch", "-"}, "Hello world\n{\"prompt\": \"Hi\"}\n");
    REQUIRE(r.exit_code == 0);
    CHECK(json_lines(r.out).size() == 2);
    r = run_journey({"next", "-m", tiny, "--batch", "-"}, "Hello world\n{\"prompt\": 3}\n");
    CHECK(r.exit_code == 3);
    const auto next = json_lines(r.out);
    REQUIRE(next.size() == 2);
    CHECK(next[0]["top"].size() == 10);
    CHECK(next[1].contains("error"));
}
