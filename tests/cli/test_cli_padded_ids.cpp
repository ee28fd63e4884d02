// --ids with a model's padding rows (issue 36): Qwen's vocab_size (512 here) exceeds its
// tokenizer (492 ids); ids in between are rows of the model. The Hugging Face directory and
// llama.cpp's GGUF of it (where they are [PAD…] tokens) must both accept them and agree.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "cli_run.h"
#include "gguf_writer.h"

using namespace journey::test;
using Catch::Matchers::Contains;

TEST_CASE("--ids: padding rows of the model are accepted from the directory and the GGUF alike", "[cli][ids]") {
    const std::string dir = data_dir() + "/models/qwen2/hf", gguf = data_dir() + "/models/qwen2/qwen2-F32.gguf";
    nlohmann::json from[2];
    int i = 0;
    for (const std::string& m : {dir, gguf}) {
        // The directory holds no tokenizer here: the fixture's tokenizer.json (492 ids) beside it.
        std::vector<std::string> tok;
        if (m == dir) tok = {"--tokenizer", data_dir() + "/models/qwen2/tokenizer.json"};
        auto with = [&](std::vector<std::string> a) { a.insert(a.end(), tok.begin(), tok.end()); return a; };
        const auto r = run_journey(with({"next", "-m", m, "--ids", "1 2 509", "--json", "--rows", "5"}));
        INFO(m << ": " << r.err);
        REQUIRE(r.exit_code == 0);
        from[i++] = nlohmann::json::parse(r.out);
        const auto s = run_journey(with({"score", "-m", m, "--ids", "1 509 2", "--json"}));
        INFO(s.err);
        REQUIRE(s.exit_code == 0);
        CHECK(nlohmann::json::parse(s.out)["tokens"][0]["id"] == 509);
        // Beyond the model's rows is still refused, naming the range.
        const auto bad = run_journey(with({"next", "-m", m, "--ids", "1 512"}));
        CHECK(bad.exit_code == 3);
        CHECK_THAT(bad.err, Contains("[0, 512)"));
    }
    REQUIRE(from[0]["top"].size() == 5);
    for (size_t k = 0; k < 5; ++k) {
        CHECK(from[0]["top"][k]["id"] == from[1]["top"][k]["id"]);
        CHECK(from[0]["top"][k]["logprob"].get<double>() == Approx(from[1]["top"][k]["logprob"].get<double>()).margin(1e-4));
    }
}

TEST_CASE("padding rows print as tokens without text from a directory whose tokenizer is vocab.json + merges.txt", "[cli][ids]") {
    // The qwen2 stand-in's weights (512 rows) beside a GPT-2-style vocab.json + merges.txt of its
    // 470 BPE ids: rows 470..511 have no token. A table of all 512 rows lists them (empty text, as
    // Hugging Face's decode gives them) instead of stopping with "not in the vocabulary".
    namespace fs = std::filesystem;
    const fs::path src = fs::path(data_dir()) / "models" / "qwen2";
    const fs::path dir = temp_dir() / "padded-rows-bpe";
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (const char* f : {"config.json", "model.safetensors"}) fs::copy_file(src / "hf" / f, dir / f);
    const auto tj = nlohmann::json::parse(std::ifstream(src / "tokenizer.json"));
    std::ofstream(dir / "vocab.json") << tj["model"]["vocab"].dump();
    std::ofstream merges(dir / "merges.txt");
    merges << "#version: 0.2\n";
    for (const auto& m : tj["model"]["merges"]) merges << m.get<std::string>() << "\n";
    merges.close();
    const auto r = run_journey({"next", "-m", dir.string(), "--ids", "1 2 509", "--json", "--rows", "512"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto top = nlohmann::json::parse(r.out)["top"];
    REQUIRE(top.size() == 512);
    int padding = 0;
    for (const auto& row : top)
        if (row["id"].get<int>() >= 470) {
            ++padding;
            CHECK(row["token"] == "");
        }
    CHECK(padding == 42);
    const auto text = run_journey({"next", "-m", dir.string(), "--ids", "1 2 509", "--rows", "512"});
    CHECK(text.exit_code == 0);
    fs::remove_all(dir);
}
