// Flags people type: one model and tokenizer everywhere, -s, --seed -1, -n -1, --truncate,
// -v/-q on either side of the subcommand, Hugging Face's names, next's --rows, --json.
#include <cstdlib>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"

using namespace journey::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

nlohmann::json json_of(const RunResult& r) {
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("tokenize and detokenize use the model the other subcommands use", "[cli][flags][tokenizer]") {
    // Without -m: the same model as next (the default), named in the JSON.
    const auto t = json_of(run_journey({"tokenize", "-p", " the LORD", "--json"}));
    const auto n = json_of(run_journey({"next", "-p", " the LORD", "--json"}));
    CHECK(t["model"] == n["model"]);
    std::vector<int> prompt;
    for (const auto& tok : n["prompt_tokens"]) prompt.push_back(tok["id"]);
    CHECK(t["ids"].get<std::vector<int>>() == prompt);

    // $JOURNEY_MODEL counts for tokenize too, and is named when it is wrong.
    setenv("JOURNEY_MODEL", gpt2.c_str(), 1);
    const auto e = json_of(run_journey({"tokenize", "-p", " the LORD", "--json"}));
    setenv("JOURNEY_MODEL", "/nonexistent/model", 1);
    const auto bad = run_journey({"tokenize", "-p", "x"});
    unsetenv("JOURNEY_MODEL");
    CHECK(e["model"] == gpt2);
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err, StartsWith("journey: $JOURNEY_MODEL: /nonexistent/model: no such file or directory"));

    // detokenize takes the ids as words, from stdin, or as one JSON array.
    const auto m = json_of(run_journey({"tokenize", "-m", gpt2, "-p", "Hello world", "--json"}));
    const std::string ids = m["ids"].dump();
    CHECK(run_journey({"detokenize", "-m", gpt2}, ids).out == "Hello world");
    CHECK(run_journey({"detokenize", "-m", gpt2, ids}).out == "Hello world");
    const auto d = json_of(run_journey({"detokenize", "-m", gpt2, "--json"}, ids));
    CHECK(d["text"] == "Hello world");
    CHECK(d["model"] == gpt2);
}

TEST_CASE("-s is --seed; --seed -1 and no seed draw one below 2^32", "[cli][flags][seed]") {
    const std::vector<std::string> base = {"generate", "-m", gpt2, "-p", "Hi", "-n", "6", "--json"};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = base;
        a.insert(a.end(), extra.begin(), extra.end());
        return json_of(run_journey(a));
    };
    CHECK(with({"-s", "7"})["tokens"] == with({"--seed", "7"})["tokens"]);
    for (const auto& extra : {std::vector<std::string>{"--seed", "-1"}, std::vector<std::string>{}}) {
        const auto j = with(extra);
        REQUIRE(j["seed"].is_number_unsigned());
        CHECK(j["seed"].get<uint64_t>() < (uint64_t(1) << 32));
        CHECK(with({"--seed", std::to_string(j["seed"].get<uint64_t>())})["tokens"] == j["tokens"]);
    }
    auto big = run_journey({"generate", "-m", gpt2, "-p", "Hi", "--seed", "4294967296"});
    CHECK(big.exit_code == 1);
    CHECK_THAT(big.err, StartsWith("journey: --seed: must be an integer in [0, 4294967295]"));
}

TEST_CASE("Hugging Face's names are aliases of llama.cpp's", "[cli][flags]") {
    auto a = run_journey({"generate", "-m", gpt2, "-p", "Hi", "--seed", "3", "--temp", "0.7", "-n", "5",
                          "--repeat-penalty", "1.3", "--json"});
    auto b = run_journey({"generate", "-m", gpt2, "-p", "Hi", "--seed", "3", "--temperature", "0.7",
                          "--max-new-tokens", "5", "--repetition-penalty", "1.3", "--json"});
    CHECK(json_of(a)["tokens"] == json_of(b)["tokens"]);
}

TEST_CASE("-n -1 runs to a full context; generate --truncate keeps room for -n", "[cli][flags][context]") {
    // 1000 ids of a 1024-token context: -n -1 stops when it is full, and says so in text mode.
    // 24 generated tokens fill it; the 25th is sampled from the last position's logits.
    std::string ids;
    for (int i = 0; i < 1000; ++i) ids += std::to_string(i % 400 + 50) + " ";
    const auto j = json_of(run_journey({"generate", "-m", gpt2, "--ids", ids, "-n", "-1", "--ignore-eos", "--json"}));
    CHECK(j["finish_reason"] == "context");
    CHECK(j["usage"]["completion_tokens"] == 25);
    CHECK(j["usage"]["total_tokens"] == 1025);
    auto t = run_journey({"generate", "-m", gpt2, "--ids", ids, "-n", "-1", "--ignore-eos"});
    CHECK(t.exit_code == 0);
    CHECK_THAT(t.err, Contains("journey: generate: stopped: the context of 1024 tokens is full (1000 prompt + 25 "
                               "generated)"));
    CHECK_THAT(t.err, Contains("-c N gives a larger context") && Contains("--truncate"));

    const std::string longer = ids + ids;
    auto refused = run_journey({"generate", "-m", gpt2, "--ids", longer, "-n", "8"});
    CHECK(refused.exit_code == 3);
    CHECK_THAT(refused.err, StartsWith("journey: prompt: 2000 tokens, longer than the model's context of 1024"));
    CHECK_THAT(refused.err, !Contains("seed:"));  // nothing was generated
    const auto cut = json_of(run_journey({"generate", "-m", gpt2, "--ids", longer, "-n", "8", "--truncate", "--ignore-eos", "--json"}));
    CHECK(cut["usage"]["prompt_tokens"] == 1016);
    CHECK(cut["finish_reason"] == "length");
}

TEST_CASE("-v and -q before or after the subcommand", "[cli][flags]") {
    for (const auto& args : {std::vector<std::string>{"-q", "generate", "-m", gpt2, "-p", "Hi", "-n", "2"},
                             std::vector<std::string>{"generate", "-m", gpt2, "-p", "Hi", "-n", "2", "-q"}}) {
        auto r = run_journey(args);
        CHECK(r.exit_code == 0);
        CHECK(r.err.empty());
    }
    for (const auto& args : {std::vector<std::string>{"-v", "generate", "-m", gpt2, "-p", "Hi", "-n", "2"},
                             std::vector<std::string>{"generate", "-m", gpt2, "-p", "Hi", "-n", "2", "--verbose"}}) {
        auto r = run_journey(args);
        CHECK(r.exit_code == 0);
        CHECK_THAT(r.err, Contains("[info] finish: length"));
    }
    auto q = run_journey({"generate", "-m", gpt2, "-p", "Hi", "--bogus", "-q"});
    CHECK(q.exit_code == 1);  // errors still print
    CHECK_THAT(q.err, StartsWith("journey: --bogus"));
}

TEST_CASE("next --rows lists rows (--top-k still works); --json on every data subcommand", "[cli][flags]") {
    const auto rows = json_of(run_journey({"next", "-m", gpt2, "-p", "Hi", "--rows", "3", "--json"}));
    const auto old = json_of(run_journey({"next", "-m", gpt2, "-p", "Hi", "--top-k", "3", "--json"}));
    CHECK(rows["top"].size() == 3);
    CHECK(rows == old);
    CHECK_THAT(run_journey({"next", "--help"}).out, !Contains("--top-k"));
    const auto tr = json_of(run_journey({"trace", "-m", gpt2, "-p", "Hi", "--rows", "2", "--json"}));
    CHECK(tr["final"]["top"].size() == 2);
    for (const auto& args : {std::vector<std::string>{"generate", "-p", "Hi", "-n", "2"},
                             std::vector<std::string>{"score", "-p", "Hi there"},
                             std::vector<std::string>{"info"},
                             std::vector<std::string>{"tokenize", "-p", "Hi"},
                             std::vector<std::string>{"detokenize", "1", "2"},
                             std::vector<std::string>{"bench", "-p", "4", "-n", "2", "-r", "1"}}) {
        std::vector<std::string> a = args;
        a.insert(a.end(), {"-m", gpt2, "--json"});
        CHECK(json_of(run_journey(a))["model"] == gpt2);
    }
}
