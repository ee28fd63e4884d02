// journey bench, run as a user would, on the gpt2-tiny reference checkpoint (speed itself is
// not tested: only that the figures are there, on stdout, and progress is on stderr).
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_run.h"

using namespace journey::test;
using Catch::Matchers::Contains;

TEST_CASE("bench --json: one object with every figure", "[cli][bench]") {
    // -v: a log line per repetition (stderr is no terminal here, so no bar).
    auto r = run_journey({"bench", "-m", tiny, "-p", "8", "-n", "4", "-r", "2", "-t", "1", "--json", "-v"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    for (const char* key : {"model", "dtype", "threads", "pp_tok_s", "tg_tok_s", "load_ms", "peak_rss_mb"})
        CHECK(j.contains(key));
    CHECK(j["dtype"] == "F32");
    CHECK(j["threads"] == 1);
    CHECK(j["pp_tok_s"].get<double>() > 0);
    CHECK(j["tg_tok_s"].get<double>() > 0);
    CHECK(j["peak_rss_mb"].get<double>() > 0);
    CHECK_THAT(r.err, Contains("pp8 rep 2/2") && Contains("tg4 rep 1/2"));
}

TEST_CASE("bench: a table; -n 0 skips generation; too long a prompt is refused", "[cli][bench]") {
    auto r = run_journey({"bench", "-m", tiny, "-p", "4", "-n", "0", "-r", "1", "-t", "1"});
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("| pp4 |") && Contains("peak RSS"));
    CHECK(r.out.find("tg") == std::string::npos);
    auto bad = run_journey({"bench", "-m", tiny, "-p", "100000", "-r", "1"});
    CHECK(bad.exit_code == 3);
    CHECK_THAT(bad.err, Contains("context"));
}

TEST_CASE("bench: the bytes a token reads, and with --bandwidth the share of the read bandwidth", "[cli][bench]") {
    // GPT-2's block: c_attn C x 3C, attn c_proj C x C, c_fc C x 4C, mlp c_proj 4C x C (12 C^2),
    // then the output projection (the tied wte, V x C); F32. The embeddings' one row is not counted.
    std::ifstream f(tiny + "/config.json");
    const auto config = nlohmann::json::parse(f);
    const double C = config["n_embd"], L = config["n_layer"], V = config["vocab_size"];
    auto r = run_journey({"bench", "-m", tiny, "-p", "0", "-n", "4", "-r", "2", "-t", "2", "--json", "--bandwidth", "-v"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["token_bytes"].get<double>() == 4 * (L * 12 * C * C + V * C));
    CHECK(j["tg_weights_gb_s"].get<double>() == Approx(j["tg_tok_s"].get<double>() * j["token_bytes"].get<double>() / 1e9));
    CHECK(j["read_gb_s"].get<double>() > 0);
    CHECK(j["tg_read_share"].get<double>() > 0);
    CHECK_THAT(r.err, Contains("tg4 rep 2/2") && Contains("GB/s just before"));
    // Without --bandwidth there is no read and no share; the table says the GB/s of weights.
    auto t = run_journey({"bench", "-m", tiny, "-p", "0", "-n", "4", "-r", "1", "-t", "1"});
    REQUIRE(t.exit_code == 0);
    CHECK_THAT(t.out, Contains("MB of weights a token"));
    CHECK(t.out.find("read bandwidth") == std::string::npos);
}

TEST_CASE("weights: copied at load for generate and bench, in place for next; --mmap / --no-mmap say otherwise", "[cli][bench][mmap]") {
    auto placed = [](const std::vector<std::string>& args) {
        auto r = run_journey(args);
        INFO(r.err);
        CHECK(r.exit_code == 0);
        if (r.err.find("weight matrices copied at load") != std::string::npos) return std::string("copied");
        if (r.err.find("weight matrices read in place") != std::string::npos) return std::string("in place");
        return std::string("not said");
    };
    CHECK(placed({"generate", "-m", tiny, "-p", "hi", "-n", "2", "-v"}) == "copied");
    CHECK(placed({"generate", "-m", tiny, "-p", "hi", "-n", "2", "-v", "--mmap"}) == "in place");
    CHECK(placed({"next", "-m", tiny, "-p", "hi", "-v"}) == "in place");
    CHECK(placed({"next", "-m", tiny, "-p", "hi", "-v", "--no-mmap"}) == "copied");
    CHECK(placed({"bench", "-m", tiny, "-p", "0", "-n", "2", "-r", "1", "-v"}) == "copied");
    // bench --json says which, and the same figures come out either way
    for (const char* flag : {"--mmap", "--no-mmap"}) {
        auto r = run_journey({"bench", "-m", tiny, "-p", "0", "-n", "2", "-r", "1", "--json", flag});
        REQUIRE(r.exit_code == 0);
        const auto j = nlohmann::json::parse(r.out);
        CHECK(j["mmap"] == (std::string(flag) == "--mmap"));
        CHECK(j["huge_pages_mb"].get<double>() >= 0);
    }
    auto both = run_journey({"next", "-m", tiny, "-p", "hi", "--mmap", "--no-mmap"});
    CHECK(both.exit_code == 1);
    CHECK_THAT(both.err, Contains("--mmap") && Contains("--no-mmap"));
}

TEST_CASE("bench -d: the tests run after that many cached positions; the context bounds -d plus -p or -n", "[cli][bench]") {
    std::ifstream f(tiny + "/config.json");
    const int n_ctx = nlohmann::json::parse(f)["n_positions"];
    auto r = run_journey({"bench", "-m", tiny, "-p", "4", "-n", "4", "-d", std::to_string(n_ctx - 4), "-r", "1", "-t", "1", "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["n_depth"] == n_ctx - 4);
    CHECK(j["kv_type"] == "f32");
    // --kv-type reaches bench's own session (an F16 cache at depth: the one-token kernel reads it)
    auto h = run_journey({"bench", "-m", tiny, "-p", "0", "-n", "4", "-d", "16", "-r", "1", "-t", "1", "--json", "--kv-type", "f16"});
    REQUIRE(h.exit_code == 0);
    CHECK(nlohmann::json::parse(h.out)["kv_type"] == "f16");
    CHECK(j["tg_tok_s"].get<double>() > 0);
    auto t = run_journey({"bench", "-m", tiny, "-p", "4", "-n", "2", "-d", "8", "-r", "1", "-t", "1"});
    REQUIRE(t.exit_code == 0);
    CHECK_THAT(t.out, Contains("| pp4 @ d8 |") && Contains("| tg2 @ d8 |"));
    auto over = run_journey({"bench", "-m", tiny, "-p", "0", "-n", "4", "-d", std::to_string(n_ctx - 3), "-r", "1"});
    CHECK(over.exit_code == 3);
    CHECK_THAT(over.err, Contains("-d") && Contains("context of " + std::to_string(n_ctx)));
    CHECK(over.out.empty());
    auto negative = run_journey({"bench", "-m", tiny, "-d", "-1"});
    CHECK(negative.exit_code != 0);
    CHECK_THAT(negative.err, Contains("--n-depth"));
}
