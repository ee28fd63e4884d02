// journey next / journey info on the other model formats: GGUF, llama2.c .bin + --tokenizer,
// and a Hugging Face llama directory.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "llama_hf_dir.h"

using namespace journey::test;
using Catch::Matchers::Contains;

TEST_CASE("info/next on gpt2-tiny.gguf", "[cli][gguf]") {
    const std::string gguf = data_dir() + "/reference/gpt2-tiny.gguf";
    auto r = run_journey({"info", "-m", gguf, "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["format"] == "gguf");
    CHECK(j["arch"] == "gpt2");
    CHECK(j["n_vocab"] == 50257);
    CHECK(j["tokenizer"] == "hf-bpe");

    r = run_journey({"next", "-m", gguf, "--json", "-p", "The capital of France is"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    j = nlohmann::json::parse(r.out);
    CHECK(j["top"][0]["id"] == 9157);  // as the directory checkpoint (test_cli_next)
}

TEST_CASE("info/next on a llama2.c checkpoint with --tokenizer", "[cli][llama2c]") {
    auto r = run_journey({"info", "-m", stories_bin(), "--tokenizer", stories_tok(), "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["format"] == "llama2.c");
    CHECK(j["arch"] == "llama");
    CHECK(j["n_kv_head"] == 4);
    CHECK(j["tokenizer"] == "llama-spm");
    CHECK(j["tied_output"] == true);

    // BOS comes first, as run.c; the reference's most likely next token after this prompt.
    r = run_journey({"next", "-m", stories_bin(), "--tokenizer", stories_tok(), "--json", "-p", "Once upon a time"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    j = nlohmann::json::parse(r.out);
    REQUIRE(j["prompt_tokens"].size() == 5);
    CHECK(j["prompt_tokens"][0]["id"] == 1);
    CHECK(j["top"][0]["id"] == 432);
    CHECK(j["top"][1]["id"] == 383);

    r = run_journey({"next", "-m", stories_bin(), "-p", "x"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("stories260K.bin") && Contains("tokenizer"));
}

TEST_CASE("info/next on a Hugging Face llama directory", "[cli][hf]") {
    TempDir d;
    write_stories_hf_dir(d.path);
    auto r = run_journey({"info", "-m", d.path.string(), "--tokenizer", stories_tok(), "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["format"] == "safetensors");
    CHECK(j["arch"] == "llama");

    r = run_journey({"next", "-m", d.path.string(), "--tokenizer", stories_tok(), "--json", "-p", "Once upon a time"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    j = nlohmann::json::parse(r.out);
    CHECK(j["top"][0]["id"] == 432);
}
