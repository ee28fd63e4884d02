// patch's grid in parallel (-t): the cells shared out among threads, each with its own session,
// give exactly the grid one thread computes, bit for bit, whatever the number of threads: on the
// default model (GPT-2, Conv1D F32), a quantized GGUF (Q4_K_M: the integer dots and the
// one-token products' lookahead), a hybrid (its recurrent state rewound to each thread's own
// snapshots), through the library and through the CLI's output bytes.
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "family_fixtures.h"
#include "journey/model/model.h"
#include "journey/trace/patch.h"

using namespace journey;

namespace {

PatchResult grid(const Model& m, const std::vector<TokenId>& clean, const std::vector<TokenId>& corrupted, PatchSite site,
                 int parallel) {
    PatchOptions o;
    o.site = site;
    o.parallel = parallel;
    int calls = 0, last = 0, total_seen = 0;
    bool ordered = true;
    o.progress = [&](int done, int total) {  // one thread at a time, counting every cell once (no Catch here: other threads)
        ++calls;
        ordered = ordered && done > last;
        last = done;
        total_seen = total;
    };
    PatchResult r = run_patch(m, clean, corrupted, o);
    CHECK(ordered);
    CHECK(last == r.rows * r.columns);
    CHECK(total_seen == r.rows * r.columns);
    CHECK(calls > 0);
    return r;
}

void check_parallel(const std::string& path, std::vector<TokenId> clean) {
    INFO(path);
    auto m = Model::load(path, LoadOptions{.tokenizer = false});
    clean.resize(std::min<size_t>(clean.size(), 9));
    std::vector<TokenId> corrupted = clean;
    corrupted[2] = (corrupted[2] + 5) % 50;
    corrupted[6] = (corrupted[6] + 3) % 50;
    for (const PatchSite site : {PatchSite::resid, PatchSite::mlp, PatchSite::head}) {
        INFO("site " << patch_site_name(site));
        const PatchResult one = grid(*m, clean, corrupted, site, 1);
        // A grid that changes nothing would pass trivially: the patches must move the metric.
        bool moved = false;
        for (const auto& row : one.metric)
            for (double v : row) moved = moved || v != one.corrupted;
        CHECK(moved);
        for (const int n : {2, 3}) {
            INFO(n << " threads");
            const PatchResult r = grid(*m, clean, corrupted, site, n);
            CHECK(r.target == one.target);
            CHECK(r.clean == one.clean);
            CHECK(r.corrupted == one.corrupted);
            CHECK(r.metric == one.metric);  // every cell, bit for bit
            CHECK(r.restored == one.restored);
        }
    }
}

std::vector<TokenId> fixture_ids(const std::string& family) {
    const auto expect = nlohmann::json::parse(std::ifstream(test::fixture_dir(family) + "/expect.json"));
    return expect["cases"][0]["ids"].get<std::vector<TokenId>>();
}

}  // namespace

TEST_CASE("patch: the grid run by 2 or 3 threads is the one-thread grid, bit for bit", "[trace][patch][parallel]") {
    check_parallel(std::string(JOURNEY_TEST_DATA) + "/quant/tinyllama-Q4_K_M.gguf", {1, 450, 96, 310, 278, 186, 338, 263, 243});
    const std::vector<std::string> hybrid = test::fixture_paths("qwen35");
    REQUIRE(!hybrid.empty());
    check_parallel(hybrid.back(), fixture_ids("qwen35"));
}

TEST_CASE("patch: each thread's session holds the prompt's positions only", "[trace][patch][parallel]") {
    auto m = Model::load(std::string(JOURNEY_TEST_DATA) + "/cli/gpt2", LoadOptions{.tokenizer = false});
    const PatchMemory pm = patch_memory(*m, 7);
    CHECK(pm.session.n_ctx == 7);
    CHECK(pm.kv_bytes == Session(*m, pm.session).kv_bytes_per_token() * 7);
    CHECK(pm.state_bytes == 0);
}

TEST_CASE("journey patch -t 1, -t 2 and -t 3 print the same bytes", "[trace][patch][parallel][cli]") {
    using journey::test::run_journey;
    struct Case {
        const char* name;
        std::vector<std::string> model;
        const char* clean;
        const char* corrupted;
    };
    const Case cases[] = {
        {"default model", {}, "3 17 250 9 41 6 1000 12", "3 17 250 9 77 6 1001 12"},
        {"Q4_K_M GGUF", {"-m", std::string(JOURNEY_TEST_DATA) + "/quant/tinyllama-Q4_K_M.gguf"},
         "1 450 96 310 278 186 338", "1 450 96 310 243 186 338"},
    };
    for (const Case& c : cases)
        for (const char* site : {"resid", "head"}) {
            INFO(c.name << ", --site " << site);
            std::string want;
            for (const char* t : {"1", "2", "3"}) {
                std::vector<std::string> args = {"patch", "--json", "--site", site, "--clean-ids", c.clean, "--corrupted-ids", c.corrupted, "-t", t};
                args.insert(args.end(), c.model.begin(), c.model.end());
                const auto r = run_journey(args);
                INFO("-t " << t << ": " << r.err);
                REQUIRE(r.exit_code == 0);
                // The memory line is said only when fewer cells than -t run or the sessions take 64 MiB
                // or more (cmd_patch.cpp); these prompts' sessions are far below, so nothing is said.
                CHECK(r.err.find("grid cell") == std::string::npos);
                if (want.empty()) want = r.out;
                else CHECK(r.out == want);
            }
            CHECK(nlohmann::json::parse(want)["rows"].size() > 1);
        }
}
