// Direct logit attribution on every family fixture (tests/data/models/<family>, both the HF
// directory and the converter's GGUFs, where the fixture has them): the parts plus the final norm's bias term add up to the
// logit the model computed in the pass (independently: its own matmul, not the attribution's
// sums), the heads plus the attention bias add up to the layer's attention part, and with
// --contrast the parts add up to the logit difference.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "journey/model/model.h"
#include "journey/model/session.h"
#include "journey/trace/trace.h"
#include "cli_run.h"
#include "family_fixtures.h"

using namespace journey;

namespace {

using test::fixture_in;
using test::kFixtures;
using test::Fixture;
const auto& kMoe = test::kMoeFamilies;
const auto& kGemmaHybrid = test::kGemmaHybridFamilies;

using test::dir_of;

struct Worst {
    double sum = 0, heads = 0, experts = 0;
};

// |a - b| relative to the size of the logit (at least 1).
double rel(double a, double b, double scale) { return std::abs(a - b) / std::max(1.0, std::abs(scale)); }

void check(const Model& m, const std::vector<TokenId>& ids, int pos, std::optional<TokenId> contrast, Worst& worst) {
    TraceOptions o;
    o.position = pos;
    o.attribute = true;
    o.contrast = contrast;
    const Trace tr = run_trace(m, ids, o);
    REQUIRE(tr.attribution);
    const Attribution& a = *tr.attribution;
    CHECK(a.target == tr.target);
    // The model's own logits at the position, from a plain eval (no observer): the value the
    // parts must add up to (before Gemma 2's final softcap: checked through the capped value).
    Session s(m);
    const auto all = s.eval(ids, LogitsFor::all);
    const size_t V = size_t(m.config().n_vocab);
    const float* row = all.data() + size_t(tr.position) * V;
    const double cap = m.config().final_softcap;  // Gemma 2: the logit before cap * tanh(x / cap)
    const auto raw = [&](TokenId id) { return cap > 0 ? cap * std::atanh(row[size_t(id)] / cap) : double(row[size_t(id)]); };
    const double want = raw(a.target) - (contrast ? raw(*contrast) : 0.0);
    CHECK(rel(a.logit, want, want) < (cap > 0 ? 1e-4 : 1e-5));
    // Parts + bias = logit.
    double sum = a.bias_term + a.token_embed + a.position_embed.value_or(0.0);
    for (const LayerAttribution& l : a.layers) {
        sum += l.attn + l.mlp + l.ple.value_or(0.0);
        // Gemma 4: every layer has its per-layer-input branch and its output scale; elsewhere none.
        const LayerWeights& lw = m.weights().layers[size_t(l.layer)];
        CHECK(l.ple.has_value() == bool(lw.ple_gate));
        CHECK(l.out_scale.has_value() == bool(lw.out_scale));
        const bool recurrent = m.config().is_recurrent(l.layer);  // a hybrid's Gated DeltaNet layer: its delta heads
        REQUIRE(l.heads.size() == size_t(recurrent ? m.config().ssm_v_heads : m.config().n_head));
        // A mixture of experts: each chosen expert's weighted part, the experts the trace's
        // routing names, in its order, adding up to the MLP's part (the pass's own sum).
        const LayerTrace& lt = tr.layers[size_t(l.layer)];
        REQUIRE(l.experts.size() == (lt.moe ? size_t(m.config().n_expert_used) : 0));
        if (lt.moe) {
            double experts = l.shared_expert.value_or(0.0);  // Qwen3.5-MoE: the shared expert, beside the routed ones
            for (size_t j = 0; j < l.experts.size(); ++j) {
                CHECK(l.experts[j].id == lt.moe->experts[j].id);
                CHECK(l.experts[j].weight == lt.moe->experts[j].weight);
                experts += l.experts[j].part;
            }
            CHECK(l.shared_expert.has_value() == bool(m.weights().layers[size_t(l.layer)].shexp_down));
            worst.experts = std::max(worst.experts, rel(experts, l.mlp, a.logit));
            CHECK(rel(experts, l.mlp, a.logit) < 1e-4);
        }
        double heads = l.attn_bias;
        for (double h : l.heads) heads += h;
        worst.heads = std::max(worst.heads, rel(heads, l.attn, a.logit));
        CHECK(rel(heads, l.attn, a.logit) < 1e-4);
    }
    CHECK(std::abs(sum - a.sum) < 1e-9 * std::max(1.0, std::abs(sum)));
    worst.sum = std::max(worst.sum, rel(a.sum, a.logit, a.logit));
    CHECK(rel(a.sum, a.logit, a.logit) < 1e-4);
    CHECK(a.position_embed.has_value() == (m.config().position == PositionKind::learned));
    CHECK((a.norm == NormKind::layernorm) == (a.bias_term != 0));
}

void check_attribution(const Fixture& fx) {
    const auto expect = nlohmann::json::parse(std::ifstream(dir_of(fx.family) + "/" + fx.expect));
    const auto ids = expect["cases"][0]["ids"].get<std::vector<TokenId>>();
    const std::vector<std::string> paths = test::fixture_paths(fx.family);
    REQUIRE(!paths.empty());
    for (const std::string& path : paths) {
        INFO(path);
        auto m = Model::load(path, LoadOptions{.tokenizer = false});
        Worst worst;
        check(*m, ids, -1, std::nullopt, worst);
        check(*m, ids, 3, std::nullopt, worst);
        check(*m, ids, -1, TokenId(7), worst);  // the logit difference against token 7
        if (std::getenv("JOURNEY_TEST_REPORT"))
            std::fprintf(stderr, "%-10s %-28s worst |sum - logit| %.2e, |heads - attn| %.2e, |experts - mlp| %.2e (relative)\n",
                         fx.family, std::filesystem::path(path).filename().c_str(), worst.sum, worst.heads, worst.experts);
    }
}

}  // namespace

// Split in three so that each case stays short; together they cover every fixture in kFixtures.
TEST_CASE("attribution: the parts add up to the logit on every dense family, HF and GGUF", "[trace][attribution]") {
    for (const Fixture& fx : kFixtures)
        if (!fixture_in(fx.family, kMoe) && !fixture_in(fx.family, kGemmaHybrid)) check_attribution(fx);
}

TEST_CASE("attribution: the parts add up to the logit on every mixture of experts, HF and GGUF", "[trace][attribution]") {
    for (const Fixture& fx : kFixtures)
        if (fixture_in(fx.family, kMoe)) check_attribution(fx);
}

TEST_CASE("attribution: the parts add up to the logit on Gemma 2/3/4 and the hybrids, HF and GGUF", "[trace][attribution]") {
    for (const Fixture& fx : kFixtures)
        if (fixture_in(fx.family, kGemmaHybrid)) check_attribution(fx);
}

TEST_CASE("attribution: a quantized output matrix is named, and the parts stay within 3e-3 of its logit", "[trace][attribution]") {
    // tests/data/quant: llama-quantize's tinyllama (tests/data/README.md). The model's product
    // rounds the activations to 8 bits; the parts add up to the float product.
    for (const char* q : {"Q4_K_M", "Q2_K", "IQ4_XS"}) {
        INFO(q);
        auto m = Model::load(std::string(JOURNEY_TEST_DATA) + "/quant/tinyllama-" + q + ".gguf", LoadOptions{.tokenizer = false});
        TraceOptions o;
        o.attribute = true;
        const std::vector<TokenId> ids{1, 45, 49, 173, 170, 300, 22};
        const Trace tr = run_trace(*m, ids, o);
        REQUIRE(tr.attribution);
        const Attribution& a = *tr.attribution;
        CHECK(a.quantized_output.has_value());
        CHECK(std::abs(a.sum - a.logit) < 3e-3 * std::max(1.0, std::abs(a.logit)));
    }
}

TEST_CASE("attribution: Gemma 4's per-layer inputs are parts and its layer scales are carried", "[trace][attribution]") {
    // The sum on the fixture is checked above; here, that the scales are in play (a fixture whose
    // scales were all 1 would not test them) and that each layer's carry is the product of the
    // scales from that layer on, read from the weights.
    auto m = Model::load(dir_of("gemma4") + "/gemma4-F32.gguf", LoadOptions{.tokenizer = false});
    TraceOptions o;
    o.attribute = true;
    const std::vector<TokenId> ids{2, 45, 49, 173};
    const Trace tr = run_trace(*m, ids, o);
    REQUIRE(tr.attribution);
    const Attribution& a = *tr.attribution;
    REQUIRE(!a.layers.empty());
    double product = 1;
    double unscaled = a.bias_term + a.token_embed / a.layers[0].carry;  // the parts without the scales they carry
    bool scaled = false;
    for (auto l = a.layers.rbegin(); l != a.layers.rend(); ++l) {
        const Vector& s = m->weights().layers[size_t(l->layer)].out_scale;
        REQUIRE(s);
        REQUIRE(l->ple);
        REQUIRE(l->out_scale);
        CHECK(*l->out_scale == double(s.data[0]));
        product *= double(s.data[0]);
        scaled = scaled || s.data[0] != 1.0f;
        CHECK(std::abs(l->carry - product) <= 1e-12 * std::abs(product));
        unscaled += (l->attn + l->mlp + *l->ple) / l->carry;
    }
    CHECK(scaled);
    CHECK(std::abs(a.sum - a.logit) < 1e-4 * std::max(1.0, std::abs(a.logit)));
    CHECK(std::abs(unscaled - a.logit) > 1e-3 * std::max(1.0, std::abs(a.logit)));  // the scales matter here
}
