// The Llama block against implementations we did not write: llama2.c's run.c (greedy text,
// byte for byte) and llama.cpp (top-10 next tokens) on the stories260K checkpoint; and the
// Hugging Face layout of the same weights, whose rotary pairs are (i, i + D/2).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "journey/model/model.h"
#include "journey/formats/safetensors_reader.h"
#include "journey/model/session.h"
#include "journey/text/spm_tokenizer.h"
#include "llama_hf_dir.h"

using namespace journey;
using namespace journey::test;

namespace {

nlohmann::json expected() {
    return nlohmann::json::parse(std::ifstream(data_dir() + "/reference/stories260K.expected.json"));
}

const Model& stories() {
    static auto m = Model::load(stories_bin(), LoadOptions{.tokenizer = true, .tokenizer_path = stories_tok()});
    return *m;
}

TokenId argmax(std::span<const float> logits) {
    return TokenId(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

// run.c's generate() at temperature 0: the prompt (with BOS) is fed one token at a time; from
// its last token on, the argmax is appended; `steps` positions are run, or fewer when the
// model predicts BOS. Returns every id, BOS first.
std::vector<TokenId> greedy(const Model& m, std::vector<TokenId> ids, int steps) {
    Session s(m);
    for (int pos = 0; pos < steps; ++pos) {
        const auto logits = s.eval(std::span(&ids[size_t(pos)], 1));
        if (size_t(pos) + 1 < ids.size()) continue;  // still forcing the prompt
        const TokenId next = argmax(logits);
        if (next == *m.tokenizer().bos_id()) break;
        ids.push_back(next);
    }
    return ids;
}

}  // namespace

TEST_CASE("stories260K: config from the llama2.c header", "[llama][reference]") {
    const ModelConfig& c = stories().config();
    CHECK(c.arch == Arch::llama);
    CHECK(c.norm == NormKind::rmsnorm);
    CHECK(c.position == PositionKind::rope);
    CHECK(c.rope_pairing == RopePairing::interleaved);
    CHECK(c.activation == ActivationKind::swiglu);
    CHECK(c.n_embd == 64);
    CHECK(c.n_layer == 5);
    CHECK(c.n_head == 8);
    CHECK(c.n_kv_head == 4);
    CHECK(c.head_dim == 8);
    CHECK(c.n_ff == 172);
    CHECK(c.n_vocab == 512);
    CHECK(c.n_ctx == 512);
    CHECK(stories().weights().output.data == stories().weights().tok_embd.data);  // shared classifier
}

TEST_CASE("stories260K: greedy text equals llama2.c's run.c, top-10 equals llama.cpp", "[llama][reference]") {
    const auto ref = expected();
    const int steps = ref["steps"];
    const Tokenizer& tok = stories().tokenizer();
    double worst_logprob = 0;
    for (const auto& cs : ref["cases"]) {
        const std::string text = cs["text"];
        INFO("case: " << text);
        std::vector<TokenId> ids = tok.encode(text);
        ids.insert(ids.begin(), *tok.bos_id());
        REQUIRE(ids == cs["ids"].get<std::vector<TokenId>>());

        const std::vector<TokenId> out = greedy(stories(), ids, steps);
        CHECK(tok.decode(out) == cs["runc_greedy_text"].get<std::string>());

        Session s(stories());
        const auto logits = s.eval(ids);
        std::vector<TokenId> order(logits.size());
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + 10, order.end(),
                          [&](TokenId a, TokenId b) { return logits[size_t(a)] > logits[size_t(b)]; });
        const double mx = logits[size_t(order[0])];
        double sum = 0;
        for (float x : logits) sum += std::exp(double(x) - mx);
        for (size_t i = 0; i < 10; ++i) {
            const auto& want = cs["top10_llama_cpp"][i];
            CHECK(order[i] == want["id"].get<TokenId>());
            const double lp = double(logits[size_t(order[i])]) - mx - std::log(sum);
            worst_logprob = std::max(worst_logprob, std::abs(lp - want["logprob"].get<double>()));
        }
    }
    // llama.cpp keeps keys and values in an F16 cache, so its log-probabilities carry errors of
    // order 1e-3; ours come from an F32 cache.
    WARN("max |logprob - llama.cpp| over the top-10s = " << worst_logprob);
    CHECK(worst_logprob < 1e-2);
}

TEST_CASE("stories260K: the KV cache token by token equals the whole prompt", "[llama][kv]") {
    const std::vector<TokenId> ids = expected()["cases"][3]["ids"];
    Session full(stories());
    const auto all = full.eval(ids, LogitsFor::all);
    const std::vector<float> want(all.begin(), all.end());
    Session step(stories());
    const size_t V = 512;
    float worst = 0;
    for (size_t t = 0; t < ids.size(); ++t) {
        const auto got = step.eval(std::span(&ids[t], 1));
        for (size_t v = 0; v < V; ++v) worst = std::max(worst, std::abs(got[v] - want[t * V + v]));
    }
    CHECK(worst < 1e-4f);
}

TEST_CASE("Hugging Face llama layout: half-split rotary gives the llama2.c logits", "[llama][hf]") {
    TempDir d;
    write_stories_hf_dir(d.path);
    const auto hf = Model::load(d.path, LoadOptions{.tokenizer = false});
    CHECK(hf->config().rope_pairing == RopePairing::half);
    CHECK(hf->file().format == "safetensors");
    // The same numbers in a different order: q·k sums over a permuted head dimension, and the
    // prompt's matrix products (BLAS) and one-token ones (our gemv) block their sums differently,
    // so the two layouts round differently by a few float steps of logits up to ~18 (seen: up to
    // 1.7e-5 relative). A wrong pairing gives differences of order 1 (checked below), so the
    // bound is 1e-4 relative to max(1, |logit|).
    float worst = 0, worst_rel = 0;
    const auto ref = expected();
    for (const auto& cs : ref["cases"]) {
        const std::vector<TokenId> ids = cs["ids"];
        Session a(stories()), b(*hf);
        const auto la = a.eval(ids, LogitsFor::all);
        const std::vector<float> want(la.begin(), la.end());
        const auto lb = b.eval(ids, LogitsFor::all);
        REQUIRE(lb.size() == want.size());
        for (size_t i = 0; i < want.size(); ++i) {
            worst = std::max(worst, std::abs(lb[i] - want[i]));
            worst_rel = std::max(worst_rel, std::abs(lb[i] - want[i]) / std::max(1.0f, std::abs(want[i])));
        }
    }
    WARN("max |logit(HF layout) - logit(llama2.c)| = " << worst << " (relative " << worst_rel << ")");
    CHECK(worst_rel < 1e-4f);

    // The pairing is what makes them agree: read the HF weights with GGUF's pairing and they differ.
    ModelConfig wrong = hf->config();
    wrong.rope_pairing = RopePairing::interleaved;
    Model mixed(read_safetensors(d / "model.safetensors"), wrong, nullptr);
    const std::vector<TokenId> ids = expected()["cases"][0]["ids"];
    Session a(stories()), b(mixed);
    const auto la = a.eval(ids);
    const std::vector<float> want(la.begin(), la.end());
    const auto lb = b.eval(ids);
    float diff = 0;
    for (size_t i = 0; i < want.size(); ++i) diff = std::max(diff, std::abs(lb[i] - want[i]));
    CHECK(diff > 1e-2f);
}
