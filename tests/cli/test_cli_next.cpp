// journey next / journey info, run as a user would, on the gpt2-tiny reference checkpoint.
#include <cstdlib>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "safetensors_writer.h"

using namespace journey::test;
using Catch::Matchers::Contains;

TEST_CASE("next: the reference's most likely tokens, as a table", "[cli][next]") {
    auto r = run_journey({"next", "-m", tiny, "-p", "The capital of France is", "-t", "1"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("9157") && Contains("\xE2\x90\xA3proven") && Contains("entropy"));
    CHECK(r.err.empty());
}

TEST_CASE("next --json: ids, bytes, probabilities and entropy", "[cli][next]") {
    const auto ref = nlohmann::json::parse(std::ifstream(data_dir() + "/reference/gpt2-tiny.expected.json"));
    const auto& cs = ref["cases"][0];
    auto r = run_journey({"next", "-m", tiny, "--json", "--top-k", "20", "-p", cs["text"].get<std::string>()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["n_vocab"] == 50257);
    REQUIRE(j["prompt_tokens"].size() == cs["ids"].size());
    for (size_t i = 0; i < cs["ids"].size(); ++i) CHECK(j["prompt_tokens"][i]["id"] == cs["ids"][i]);
    CHECK(j["prompt_tokens"][1]["bytes"] == nlohmann::json({32, 99, 97, 112, 105, 116, 97, 108}));  // " capital"
    REQUIRE(j["top"].size() == 20);
    for (size_t i = 0; i < 20; ++i) {
        const auto& got = j["top"][i];
        const auto& want = cs["top20"][i];
        CHECK(got["rank"] == i + 1);
        CHECK(got["id"] == want["id"]);
        CHECK(std::abs(got["logit"].get<double>() - want["logit"].get<double>()) < 1e-4);
        CHECK(std::abs(got["logprob"].get<double>() - want["logprob"].get<double>()) < 1e-4);
        CHECK(std::abs(got["prob"].get<double>() - want["prob"].get<double>()) < 1e-5);
    }
    CHECK(j["entropy"].get<double>() > 0);
}

TEST_CASE("next: empty prompt conditions on <|endoftext|>", "[cli][next]") {
    auto r = run_journey({"next", "-m", tiny, "--json"}, "");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["prompt_tokens"].size() == 1);
    CHECK(j["prompt_tokens"][0]["id"] == 50256);
    CHECK(j["top"].size() == 10);
}

TEST_CASE("next: a prompt longer than the context fails unless --truncate", "[cli][next]") {
    std::string text;
    for (int i = 0; i < 200; ++i) text += " hello";
    auto r = run_journey({"next", "-m", tiny, "-p", text});
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Contains("200 tokens") && Contains("--truncate"));
    r = run_journey({"next", "-m", tiny, "-p", text, "--truncate", "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(nlohmann::json::parse(r.out)["prompt_tokens"].size() == 128);
}

TEST_CASE("next: bad flags are usage errors", "[cli][next]") {
    CHECK(run_journey({"next", "-m", tiny, "-p", "x", "--top-k", "0"}).exit_code == 1);
    CHECK(run_journey({"next", "-m", tiny, "-p", "x", "-t", "-2"}).exit_code == 1);
}

TEST_CASE("info: shape, dtype, parameters, tokenizer", "[cli][info]") {
    auto r = run_journey({"info", "-m", tiny});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("gpt2") && Contains("safetensors") && Contains("gpt2-bpe") && Contains("50257"));
    r = run_journey({"info", "-m", tiny, "--json"});
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["arch"] == "gpt2");
    CHECK(j["n_layer"] == 2);
    CHECK(j["n_head"] == 4);
    CHECK(j["n_embd"] == 64);
    CHECK(j["n_ctx"] == 128);
    CHECK(j["n_vocab"] == 50257);
    CHECK(j["dtype"] == "F32");
    CHECK(j["format"] == "safetensors");
    CHECK(j["tokenizer"] == "gpt2-bpe");
    CHECK(j["n_params"] == 3324736);
}

TEST_CASE("info: a quantization mix names every tensor type it holds", "[cli][info][iquant]") {
    // llama-quantize's IQ3_XXS file: the types it wrote, as the fixture lists them
    // (tests/data/quant/imatrix/expect.json, tensor_types)
    const std::string dir = std::string(JOURNEY_TEST_DATA) + "/quant/imatrix";
    const auto want = nlohmann::json::parse(std::ifstream(dir + "/expect.json"))["files"]["IQ3_XXS"]["tensor_types"];
    auto r = run_journey({"info", "-m", dir + "/tinyllama-IQ3_XXS.gguf", "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["dtype"] == "IQ3_XXS");
    nlohmann::json got = nlohmann::json::object();
    for (const auto& t : j["tensor_types"]) got[t["type"].get<std::string>()] = t["count"];
    CHECK(got == want);
    CHECK(j["tensor_types"][0]["type"] == "IQ3_XXS");  // most first
    r = run_journey({"info", "-m", dir + "/tinyllama-IQ3_XXS.gguf"});
    CHECK_THAT(r.out, Contains("IQ3_XXS 6, F32 5, IQ2_S 4, IQ3_S 3, Q4_K 2, Q5_K 1"));
}

TEST_CASE("info/next: unusable model files exit 2 naming the file", "[cli][errors]") {
    TempDir d;
    std::filesystem::copy_file(tiny + "/config.json", d / "config.json");
    std::filesystem::copy_file(tiny + "/vocab.json", d / "vocab.json");
    std::filesystem::copy_file(tiny + "/merges.txt", d / "merges.txt");
    write_safetensors(d / "model.safetensors", "{not json", "");
    auto r = run_journey({"info", "-m", d.path.string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains((d / "model.safetensors").string()) && Contains("JSON"));

    r = run_journey({"next", "-m", (d / "missing").string(), "-p", "x"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("missing"));

    std::filesystem::remove(d / "model.safetensors");
    r = run_journey({"next", "-m", d.path.string(), "-p", "x"});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("no weights"));
}
