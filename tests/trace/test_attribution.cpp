// Direct logit attribution on every family fixture (tests/data/models/<family>, both the HF
// directory and the converter's GGUF): the parts plus the final norm's bias term add up to the
// logit the model computed in the pass (independently: its own matmul, not the attribution's
// sums), the heads plus the attention bias add up to the layer's attention part, and with
// --contrast the parts add up to the logit difference.
#include <cmath>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "journey/model/model.h"
#include "journey/model/session.h"
#include "journey/trace/trace.h"

using namespace journey;

namespace {

const char* const kFamilies[] = {"llama3", "qwen2",   "qwen3", "smollm2", "mistral",  "phi3",
                                 "gemma2", "gemma3",  "gpt2",  "gptneox", "qwen3moe", "gpt-oss"};

std::string dir_of(const std::string& family) { return std::string(JOURNEY_TEST_DATA) + "/models/" + family; }

struct Worst {
    double sum = 0, heads = 0;
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
        sum += l.attn + l.mlp;
        REQUIRE(l.heads.size() == size_t(m.config().n_head));
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

}  // namespace

TEST_CASE("attribution: the parts add up to the logit on every family, HF and GGUF", "[trace][attribution]") {
    for (const char* family : kFamilies) {
        const auto expect = nlohmann::json::parse(std::ifstream(dir_of(family) + "/expect.json"));
        const auto ids = expect["cases"][0]["ids"].get<std::vector<TokenId>>();
        for (const bool gguf : {false, true}) {
            const std::string path = gguf ? dir_of(family) + "/" + family + "-F32.gguf" : dir_of(family) + "/hf";
            INFO(path);
            auto m = Model::load(path, LoadOptions{.tokenizer = false});
            Worst worst;
            check(*m, ids, -1, std::nullopt, worst);
            check(*m, ids, 3, std::nullopt, worst);
            check(*m, ids, -1, TokenId(7), worst);  // the logit difference against token 7
            if (std::getenv("JOURNEY_TEST_REPORT"))
                std::fprintf(stderr, "%-8s %-4s worst |sum - logit| %.2e, |heads - attn| %.2e (relative)\n", family,
                             gguf ? "gguf" : "hf", worst.sum, worst.heads);
        }
    }
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
