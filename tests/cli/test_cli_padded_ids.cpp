// --ids with a model's padding rows (issue 36): Qwen's vocab_size (512 here) exceeds its
// tokenizer (492 ids); ids in between are rows of the model. The Hugging Face directory and
// llama.cpp's GGUF of it (where they are [PAD…] tokens) must both accept them and agree.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"

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
