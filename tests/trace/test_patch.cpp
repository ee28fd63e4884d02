// Activation patching against what must hold whatever the model: patching nothing is the
// corrupted run, patching the whole first residual stream (every position) is the clean run,
// patching the final residual at the last position gives the clean logits, the final residual at
// any earlier position changes nothing, and neither does a patch at a position before the two
// prompts first differ (the activations there are the same in both runs). A whole patched run is
// bit for bit the clean or corrupted run; the grid's runs compute only the suffix from the cached
// prefix, whose float rounding differs from the one pass over the whole prompt (~1e-6 relative on
// most fixtures, ~5e-5 on Gemma 4): the grid is checked within 3x the model's own prefix-cache
// rounding, measured on the corrupted prompt without any patch (at least 2e-5).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "journey/errors.h"
#include "journey/model/model.h"
#include "journey/model/session.h"
#include "journey/trace/patch.h"
#include "family_fixtures.h"

using namespace journey;

namespace {

using test::dir_of;

std::vector<float> plain(const Model& m, const std::vector<TokenId>& ids) {
    Session s(m);
    const auto l = s.eval(ids);
    return {l.begin(), l.end()};
}

double tolerance = 2e-5;  // set per model by check_model
bool close_to(double a, double b) { return std::abs(a - b) <= tolerance * std::max(1e-3, std::abs(b)); }

void check_model(const Model& m, const std::vector<TokenId>& clean) {
    // The corrupted prompt: the same, with two tokens changed (the first differs at position 3).
    std::vector<TokenId> corrupted = clean;
    corrupted[3] = (corrupted[3] + 1) % 50;
    corrupted[5] = (corrupted[5] + 7) % 50;
    const int T = int(clean.size()), L = m.config().n_layer;
    const std::vector<float> want_clean = plain(m, clean), want_corrupted = plain(m, corrupted);
    REQUIRE(want_clean != want_corrupted);
    // The grid's tolerance: the model's own prefix-cache rounding, the largest logit difference
    // of the corrupted prompt evaluated whole and as [0, p) then [p, T) (p = 3, T - 1), times 3
    // (a probability's relative error is about its logit's absolute error), at least 2e-5.
    // Measured: ~2e-6 to 1.3e-5 on most fixtures, 4.3e-5 on Gemma 4.
    double split = 0;
    for (const int p : {3, T - 1}) {
        Session s(m);
        s.eval(std::span<const TokenId>(corrupted).first(size_t(p)));
        const auto l = s.eval(std::span<const TokenId>(corrupted).subspan(size_t(p)));
        for (size_t i = 0; i < l.size(); ++i) split = std::max(split, double(std::abs(l[i] - want_corrupted[i])));
    }
    tolerance = std::max(2e-5, 3 * split);
    if (std::getenv("JOURNEY_TEST_REPORT")) std::fprintf(stderr, "prefix-cache rounding %.2e, tolerance %.2e\n", split, tolerance);

    Activations from;
    CHECK(record_activations(m, clean, PatchSite::resid, from) == want_clean);
    REQUIRE(from.rows.size() == size_t(L + 1));
    std::vector<int> every(static_cast<size_t>(T), 0);
    std::iota(every.begin(), every.end(), 0);
    const int last[1] = {T - 1};
    CHECK(run_patched(m, corrupted, from, 0, {}) == want_corrupted);
    // Gemma 4's per-layer inputs are computed from the token ids beside the residual stream (and
    // read by every layer): the corrupted tokens' inputs stay, so the first residual is not the
    // whole state there. Elsewhere it is.
    if (m.config().n_embd_per_layer == 0) CHECK(run_patched(m, corrupted, from, 0, every) == want_clean);
    else CHECK(run_patched(m, corrupted, from, 0, every) != want_clean);
    CHECK(run_patched(m, corrupted, from, L, last) == want_clean);

    for (const PatchSite site : {PatchSite::resid, PatchSite::attn, PatchSite::mlp}) {
        INFO("site " << patch_site_name(site));
        PatchOptions o;
        o.site = site;
        const PatchResult r = run_patch(m, clean, corrupted, o);
        REQUIRE(r.rows == (site == PatchSite::resid ? L + 1 : L));
        CHECK(r.target == TokenId(std::max_element(want_clean.begin(), want_clean.end()) - want_clean.begin()));
        for (int row = 0; row < r.rows; ++row)
            for (int p = 0; p < 3; ++p) {  // before the prompts differ: nothing changes
                INFO("row " << row << " position " << p << " metric " << r.metric[size_t(row)][size_t(p)] << " corrupted " << r.corrupted);
                CHECK(close_to(r.metric[size_t(row)][size_t(p)], r.corrupted));
            }
        if (site == PatchSite::resid) {
            for (int p = 0; p < T - 1; ++p) {
                INFO("final residual, position " << p << ": " << r.metric[size_t(L)][size_t(p)] << " corrupted " << r.corrupted);
                CHECK(close_to(r.metric[size_t(L)][size_t(p)], r.corrupted));
            }
            CHECK(close_to(r.metric[size_t(L)][size_t(T - 1)], r.clean));
            CHECK(std::abs(r.restored[size_t(L)][size_t(T - 1)] - 1.0) < 1e-3);
        }
    }
    // Heads: all of a layer's z patched at once is its attention output patched (the projection
    // of the same rows); the grid's entries are the single-head patched runs.
    Activations z, out;
    record_activations(m, clean, PatchSite::head, z);
    record_activations(m, clean, PatchSite::attn, out);
    for (int l = 0; l < L; ++l) CHECK(run_patched(m, corrupted, z, l, every) == run_patched(m, corrupted, out, l, every));
    PatchOptions ho;
    ho.site = PatchSite::head;
    const PatchResult hr = run_patch(m, clean, corrupted, ho);
    REQUIRE(hr.columns == m.config().n_head);
    for (int l = 0; l < L; ++l)
        for (int h = 0; h < hr.columns; ++h) {
            const std::vector<float> lg = run_patched(m, corrupted, z, l, every, {}, h);
            const double p = std::exp(double(lg[size_t(hr.target)]) - std::log(std::accumulate(
                                 lg.begin(), lg.end(), 0.0, [](double a, float x) { return a + std::exp(double(x)); })));
            INFO("layer " << l << " head " << h << ": grid " << hr.metric[size_t(l)][size_t(h)] << " whole run " << p);
            CHECK(close_to(hr.metric[size_t(l)][size_t(h)], p));
        }
    // With a contrast the metric is the logit difference.
    PatchOptions o;
    o.target = 1;
    o.contrast = 2;
    const PatchResult r = run_patch(m, clean, corrupted, o);
    CHECK(r.clean == double(want_clean[1]) - double(want_clean[2]));
    CHECK(r.corrupted == double(want_corrupted[1]) - double(want_corrupted[2]));
}

// One model file per family: its F32 GGUF where the converter made one (the first, for
// rope-llama's three), its HF directory otherwise (granite, mistral3, olmo2, mistral-small).
void check_family(const test::Fixture& fx) {
    INFO(fx.family);
    const std::vector<std::string> paths = test::fixture_paths(fx.family);
    REQUIRE(!paths.empty());
    const std::string& path = paths.size() > 1 ? paths[1] : paths[0];  // the HF directory comes first
    INFO(path);
    auto m = Model::load(path, LoadOptions{.tokenizer = false});
    const auto expect = nlohmann::json::parse(std::ifstream(dir_of(fx.family) + "/" + fx.expect));
    check_model(*m, expect["cases"][0]["ids"].get<std::vector<TokenId>>());
}

// Split in four so that each case stays short; together they cover every fixture in kFixtures.
bool dense(const test::Fixture& fx) {
    return !test::fixture_in(fx.family, test::kMoeFamilies) && !test::fixture_in(fx.family, test::kGemmaHybridFamilies);
}

TEST_CASE("patch: the invariants of activation patching on every dense family, Llama to Phi-3.5", "[trace][patch]") {
    bool first_half = true;
    for (const test::Fixture& fx : test::kFixtures) {
        if (std::string_view(fx.family) == "phi4-mini") first_half = false;
        if (dense(fx) && first_half) check_family(fx);
    }
}

TEST_CASE("patch: the invariants of activation patching on every dense family, Phi-4-mini to GPT-NeoX and Mistral Small", "[trace][patch]") {
    bool second_half = false;
    for (const test::Fixture& fx : test::kFixtures) {
        if (std::string_view(fx.family) == "phi4-mini") second_half = true;
        if (dense(fx) && second_half) check_family(fx);
    }
}

TEST_CASE("patch: the invariants of activation patching on every mixture of experts", "[trace][patch]") {
    for (const test::Fixture& fx : test::kFixtures)
        if (test::fixture_in(fx.family, test::kMoeFamilies)) check_family(fx);
}

TEST_CASE("patch: the invariants of activation patching on Gemma 2/3/4 and the hybrids", "[trace][patch]") {
    for (const test::Fixture& fx : test::kFixtures)
        if (test::fixture_in(fx.family, test::kGemmaHybridFamilies)) check_family(fx);
}

}  // namespace

TEST_CASE("patch: prompts of different lengths are refused", "[trace][patch]") {
    auto m = Model::load(dir_of("llama3") + "/llama3-F32.gguf", LoadOptions{.tokenizer = false});
    const std::vector<TokenId> a{1, 2, 3}, b{1, 2};
    CHECK_THROWS_AS(run_patch(*m, a, b, {}), UsageError);
    CHECK_THROWS_AS(parse_patch_site("neuron"), UsageError);
}

TEST_CASE("journey patch: the grid as text and JSON; bad input is one line and a non-zero exit", "[trace][patch][cli]") {
    using journey::test::run_journey;
    const std::string gpt2 = std::string(JOURNEY_TEST_DATA) + "/cli/gpt2";
    auto r = run_journey({"patch", "-m", gpt2, "--json", "--clean-ids", "1 2 3 4", "--corrupted-ids", "1 2 9 4", "--site", "mlp"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto doc = nlohmann::json::parse(r.out);
    CHECK(doc["site"] == "mlp");
    CHECK(doc["rows"].size() == 2);  // gpt2's two layers
    CHECK(doc["rows"][0]["restored"].size() == 4);
    r = run_journey({"patch", "-m", gpt2, "--clean-ids", "1 2 3 4", "--corrupted-ids", "1 2 9"});
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("same number") != std::string::npos);
    r = run_journey({"patch", "-m", gpt2, "--clean-ids", "1 2 3 4"});
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("--corrupted") != std::string::npos);
    r = run_journey({"patch", "-m", gpt2, "--clean-ids", "1 2", "--corrupted-ids", "1 3", "--contrast", "#999999"});
    CHECK(r.exit_code != 0);
    CHECK(r.err.find("--contrast") != std::string::npos);
}
