// journey tokenize / detokenize as a user runs them: output, exit codes, JSON.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_run.h"

using journey::test::run_journey;

// GPT-2's own vocabulary, reached by path (without -m the default model's tokenizer is used).
static const std::string gpt2tok = JOURNEY_SOURCE_DIR "/models/gpt2-tokenizer";

TEST_CASE("tokenize prints ids on one line", "[cli][tokenize]") {
    auto r = run_journey({"tokenize", "-m", gpt2tok, "-p", "Hello world<|endoftext|>"});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "15496 995 50256\n");
    CHECK(r.err.empty());
}

TEST_CASE("tokenize reads stdin and files, and --no-special treats special tokens as text", "[cli][tokenize]") {
    auto r = run_journey({"tokenize", "-m", gpt2tok, "--no-special"}, "Hello<|endoftext|>World");
    CHECK(r.exit_code == 0);
    CHECK(r.out == "15496 27 91 437 1659 5239 91 29 10603\n");

    char tmpl[] = "/tmp/journey-cli-XXXXXX";
    std::filesystem::path dir = mkdtemp(tmpl);
    std::ofstream(dir / "in.txt") << "Hello world";
    auto f = run_journey({"tokenize", "-m", gpt2tok, "-f", (dir / "in.txt").string()});
    CHECK(f.out == "15496 995\n");
    auto missing = run_journey({"tokenize", "-m", gpt2tok, "-f", (dir / "nope.txt").string()});
    CHECK(missing.exit_code == 3);
    std::filesystem::remove_all(dir);
}

TEST_CASE("tokenize --json gives ids, tokens and exact bytes", "[cli][tokenize]") {
    auto r = run_journey({"tokenize", "-m", gpt2tok, "--json", "-p", "a 🙂"});
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    auto ids = j["ids"].get<std::vector<int>>();
    REQUIRE(j["tokens"].size() == ids.size());
    std::string bytes;
    for (size_t i = 0; i < ids.size(); ++i) {
        const auto& t = j["tokens"][i];
        CHECK(t["id"] == ids[i]);
        CHECK(t["token"].is_string());
        for (int b : t["bytes"]) bytes += static_cast<char>(b);
    }
    CHECK(bytes == "a 🙂");
    CHECK(j["tokens"][0]["token"] == "a");
}

TEST_CASE("detokenize writes the exact bytes, from arguments or stdin", "[cli][detokenize]") {
    auto r = run_journey({"detokenize", "-m", gpt2tok, "15496", "995", "50256"});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "Hello world<|endoftext|>");
    auto s = run_journey({"detokenize", "-m", gpt2tok}, "15496 995\n");
    CHECK(s.out == "Hello world");
    auto partial = run_journey({"detokenize", "-m", gpt2tok, "8582"});  // first bytes of a multi-byte character
    CHECK(partial.exit_code == 0);
    CHECK(partial.out.size() >= 1);
}

TEST_CASE("detokenize rejects an id out of range or not a number, naming it", "[cli][detokenize]") {
    auto r = run_journey({"detokenize", "-m", gpt2tok, "15496", "50257"});
    CHECK(r.exit_code == 3);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Contains("50257"));
    auto w = run_journey({"detokenize", "-m", gpt2tok}, "12 abc");
    CHECK(w.exit_code == 3);
    CHECK_THAT(w.err, Catch::Contains("abc"));
}

TEST_CASE("tokenizer options: explicit files, a model directory, and bad ones", "[cli][tokenize]") {
    const std::string dir = JOURNEY_SOURCE_DIR "/models/gpt2-tokenizer";
    auto files = run_journey({"tokenize", "--vocab", dir + "/vocab.json", "--merges", dir + "/merges.txt", "-p", "Hi"});
    CHECK(files.exit_code == 0);
    CHECK(files.out == "17250\n");
    auto model = run_journey({"tokenize", "-m", dir, "-p", "Hi"});
    CHECK(model.out == "17250\n");
    auto bad = run_journey({"tokenize", "-m", "/nonexistent", "-p", "Hi"});
    CHECK(bad.exit_code == 2);
    CHECK_THAT(bad.err, Catch::Contains("/nonexistent"));
    auto half = run_journey({"tokenize", "--vocab", dir + "/vocab.json", "-p", "Hi"});
    CHECK(half.exit_code == 1);
    auto clash = run_journey({"tokenize", "-m", dir, "--tokenizer-json", "x.json", "-p", "Hi"});
    CHECK(clash.exit_code == 1);
}
