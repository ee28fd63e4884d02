// Generation and scoring through the library, on the gpt2-tiny reference checkpoint: greedy
// continuations and per-token log-probabilities computed by minGPT (float64), not by us.
#include <cmath>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "gpt2_tiny.h"
#include "journey/errors.h"
#include "journey/decode/generate.h"
#include "journey/model/model.h"
#include "journey/text/prompt.h"
#include "journey/decode/score.h"
#include "journey/text/spm_tokenizer.h"

using namespace journey;

namespace {

using test::gpt2_tiny;
using test::gpt2_tiny_expected;
using test::ref_dir;

GenerateOptions greedy(int n) {
    GenerateOptions o;
    o.max_tokens = n;
    o.sampler.temperature = 0;
    return o;
}

}  // namespace

TEST_CASE("encode_prompt: BOS for SPM, <|endoftext|> for an empty GPT-2 prompt", "[generate][prompt]") {
    const Tokenizer& gpt2 = gpt2_tiny().tokenizer();
    CHECK_FALSE(gpt2.add_bos());
    CHECK(encode_prompt(gpt2, "") == std::vector<TokenId>{50256});
    CHECK(encode_prompt(gpt2, "Hello world") == std::vector<TokenId>{15496, 995});

    const auto spm = SpmTokenizer::from_llama2c(test::data_dir() + "/models/stories260K/tok512.bin");
    CHECK(spm->add_bos());
    CHECK(encode_prompt(*spm, "Once upon a time") == std::vector<TokenId>{1, 403, 407, 261, 378});
    CHECK(encode_prompt(*spm, "") == std::vector<TokenId>{1});

    // llama2.c drops the space prefix of the first piece only right after a lone BOS.
    CHECK(drops_first_space(*spm, std::vector<TokenId>{1}));
    CHECK_FALSE(drops_first_space(*spm, std::vector<TokenId>{1, 403}));
    CHECK_FALSE(drops_first_space(gpt2, std::vector<TokenId>{50256}));
}

TEST_CASE("generate: greedy continuations equal the reference's", "[generate][reference]") {
    Session session(gpt2_tiny());
    for (const auto& cs : gpt2_tiny_expected()["cases"]) {
        const auto ids = cs["ids"].get<std::vector<TokenId>>();
        const auto want = cs["greedy"].get<std::vector<TokenId>>();
        std::vector<TokenId> streamed;
        std::string streamed_text;
        const GenerateResult r = generate(session, ids, greedy(int(want.size())), [&](const StepResult& s) {
            CHECK(s.index == int(streamed.size()));
            CHECK(s.logprob <= 0);
            CHECK(s.top_logprobs.empty());
            streamed.push_back(s.id);
            streamed_text += s.text;
        });
        INFO(cs["text"]);
        CHECK(r.tokens == want);
        CHECK(streamed == want);
        CHECK(r.finish_reason == FinishReason::length);
        CHECK(r.prompt_tokens == int(ids.size()));
        CHECK(r.completion_tokens == int(want.size()));
        CHECK(r.text == streamed_text);
        CHECK(r.text == gpt2_tiny().tokenizer().decode(want));
    }
}

TEST_CASE("generate: the chosen token's logprob is the top alternative's under greedy", "[generate]") {
    Session session(gpt2_tiny());
    GenerateOptions o = greedy(3);
    o.top_logprobs = 5;
    const auto ids = gpt2_tiny_expected()["cases"][0]["ids"].get<std::vector<TokenId>>();
    generate(session, ids, o, [&](const StepResult& s) {
        REQUIRE(s.top_logprobs.size() == 5);
        CHECK(s.top_logprobs[0].id == s.id);
        CHECK(s.top_logprobs[0].logprob == s.logprob);
        CHECK(s.top_logprobs[1].logprob <= s.top_logprobs[0].logprob);
    });
    // The first step's logprob is the reference's top-1 logprob at the end of the prompt.
    std::vector<StepResult> steps;
    generate(session, ids, greedy(1), [&](const StepResult& s) { steps.push_back(s); });
    CHECK(std::abs(steps[0].logprob - gpt2_tiny_expected()["cases"][0]["top20"][0]["logprob"].get<double>()) < 1e-4);
}

TEST_CASE("generate: a stop string spanning two tokens ends the text before it", "[generate][stop]") {
    Session session(gpt2_tiny());
    const auto ids = gpt2_tiny_expected()["cases"][0]["ids"].get<std::vector<TokenId>>();
    const std::string first = gpt2_tiny().tokenizer().token_bytes(9157);  // the greedy tokens: 9157 9157 ...
    REQUIRE(first.size() >= 2);
    GenerateOptions o = greedy(16);
    o.stop = {{first.back(), first.front()}};  // the end of token 0 + the start of token 1
    std::string shown;
    const GenerateResult r = generate(session, ids, o, [&](const StepResult& s) { shown += s.text; });
    CHECK(r.finish_reason == FinishReason::stop);
    CHECK(r.completion_tokens == 2);
    CHECK(r.text == first.substr(0, first.size() - 1));
    CHECK(shown == r.text);
}

TEST_CASE("generate: the context limit and -n 0", "[generate]") {
    Session session(gpt2_tiny());
    std::vector<TokenId> ids(120, 13);  // 120 of n_ctx 128
    GenerateOptions o = greedy(100);
    o.ignore_eos = true;
    const GenerateResult r = generate(session, ids, o);
    CHECK(r.finish_reason == FinishReason::context);
    CHECK(r.completion_tokens == 9);  // the 9th token is sampled from position 127's logits
    const GenerateResult none = generate(session, ids, greedy(0));
    CHECK(none.finish_reason == FinishReason::length);
    CHECK(none.completion_tokens == 0);
    CHECK(none.text.empty());
    CHECK_THROWS_AS(generate(session, std::vector<TokenId>(129, 13), greedy(1)), InputError);
}

TEST_CASE("generate: bad options are usage errors naming the flag", "[generate]") {
    Session session(gpt2_tiny());
    const std::vector<TokenId> ids{13};
    GenerateOptions o = greedy(-2);  // -1 means "no limit"
    CHECK_THROWS_WITH(generate(session, ids, o), Catch::Matchers::Contains("-n"));
    o = greedy(1);
    o.top_logprobs = -1;
    CHECK_THROWS_WITH(generate(session, ids, o), Catch::Matchers::Contains("--top-logprobs"));
    o = greedy(1);
    o.stop = {""};
    CHECK_THROWS_WITH(generate(session, ids, o), Catch::Matchers::Contains("--stop"));
}

TEST_CASE("generate: the same seed gives the same tokens", "[generate][sampler]") {
    Session session(gpt2_tiny());
    GenerateOptions o;
    o.max_tokens = 12;
    o.sampler.temperature = 1.5f;
    o.sampler.seed = 1234;
    const std::vector<TokenId> ids{50256};
    const GenerateResult a = generate(session, ids, o);
    const GenerateResult b = generate(session, ids, o);
    CHECK(a.seed == 1234);
    CHECK(a.tokens == b.tokens);
}

TEST_CASE("score: per-token logprobs equal the reference's prompt_token_logprobs", "[score][reference]") {
    Session session(gpt2_tiny());
    for (const auto& cs : gpt2_tiny_expected()["cases"]) {
        const auto ids = cs["ids"].get<std::vector<TokenId>>();
        const auto want = cs["prompt_token_logprobs"].get<std::vector<double>>();
        const ScoreResult r = score(session, ids);
        REQUIRE(r.logprobs.size() == want.size());
        double sum = 0;
        for (size_t t = 0; t < want.size(); ++t) {
            CHECK(std::abs(r.logprobs[t] - want[t]) < 1e-4);
            sum += want[t];
        }
        CHECK(std::abs(r.sum_logprob - sum) < 1e-3);
        CHECK(std::abs(r.mean_nll + sum / double(want.size())) < 1e-4);
        CHECK(std::abs(r.perplexity - std::exp(-sum / double(want.size()))) < 1e-3 * r.perplexity);
        CHECK(r.windows == 1);
    }
}

TEST_CASE("score: a sliding window scores each token once with the context its window gives", "[score]") {
    Session session(gpt2_tiny());
    const auto& cs = gpt2_tiny_expected()["cases"][4];
    const auto ids = cs["ids"].get<std::vector<TokenId>>();  // 31 ids
    const auto want = cs["prompt_token_logprobs"].get<std::vector<double>>();
    const ScoreResult r = score(session, ids, {.window = 8, .stride = 3});
    REQUIRE(r.logprobs.size() == ids.size() - 1);
    CHECK(r.windows == 9);  // windows start at 0, 3, ..., 24; the last reaches id 30
    // The first window sees the text from its start: exactly the reference.
    for (size_t t = 0; t < 7; ++t) CHECK(std::abs(r.logprobs[t] - want[t]) < 1e-4);
    // ids[8] is scored in the window starting at 3, given ids[3..7]: as a fresh score of that span.
    const ScoreResult span = score(session, std::span(ids).subspan(3, 6));
    CHECK(std::abs(r.logprobs[7] - span.logprobs.back()) < 1e-5);
    for (double lp : r.logprobs) CHECK(std::isfinite(lp));

    CHECK_THROWS_AS(score(session, ids, {.window = 8, .stride = 8}), UsageError);
    CHECK_THROWS_AS(score(session, ids, {.window = 1000}), UsageError);
    const ScoreResult one = score(session, std::vector<TokenId>{50256});
    CHECK(one.logprobs.empty());
    CHECK(one.perplexity == 1);
}

// llama2.c's run.c on stories260K (temperature 0): the prompt, then the continuation, byte for
// byte, through the CLI. Runs once llama2.c checkpoints load (-m MODEL.bin --tokenizer tok.bin);
// until then the CLI refuses the flag or the file, and the test only warns.
TEST_CASE("generate: stories260K greedy text equals llama2.c's", "[generate][reference][llama]") {
    const std::string dir = test::data_dir() + "/models/stories260K";
    const auto ref = nlohmann::json::parse(std::ifstream(test::data_dir() + "/reference/stories260K.expected.json"));
    for (const auto& cs : ref["cases"]) {
        const std::string text = cs["text"];
        // run.c's steps count every position from BOS on; the prompt's own fill the first ones.
        const size_t n = ref["steps"].get<size_t>() - cs["ids"].size() + 1;
        auto r = test::run_journey({"generate", "-m", dir + "/stories260K.bin", "--tokenizer", dir + "/tok512.bin",
                                    "-p", text, "-n", std::to_string(n), "--temp", "0", "--echo"});
        INFO(text << "\n" << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(r.out == cs["runc_greedy_text"].get<std::string>());
    }
}
