// The embedded default model (models/default) against the training script's own PyTorch
// forward pass: models/default/expected.json holds, for held-out prompts, the token ids from the
// script's BPE and the float64 logits of the last position and per-token log-probabilities.
// An independent check of the tokenizer and the GPT-2 path on trained weights.
#include <algorithm>
#include <cmath>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "journey/model/model.h"
#include "journey/model/session.h"

using namespace journey;

TEST_CASE("default model: loads and matches the training script's PyTorch logits", "[default]") {
    const auto dir = default_model_path();
    REQUIRE(!dir.empty());
    auto model = Model::load(dir);
    std::ifstream in(dir / "expected.json");
    REQUIRE(in);
    const auto expected = nlohmann::json::parse(in);
    REQUIRE(expected["prompts"].size() >= 3);

    for (const auto& p : expected["prompts"]) {
        const std::string text = p["text"];
        INFO(text);
        const auto ids = p["ids"].get<std::vector<TokenId>>();
        CHECK(model->tokenizer().encode(text) == ids);

        Session s(*model);
        const auto all = s.eval(ids, LogitsFor::all);
        const size_t V = static_cast<size_t>(model->config().n_vocab);
        const auto last = p["last_logits"].get<std::vector<double>>();
        REQUIRE(last.size() == V);
        double max_diff = 0;
        const float* row = all.data() + (ids.size() - 1) * V;
        for (size_t i = 0; i < V; ++i) max_diff = std::max(max_diff, std::abs(row[i] - last[i]));
        CHECK(max_diff < 1e-4);

        const auto logprobs = p["logprobs"].get<std::vector<double>>();
        REQUIRE(logprobs.size() == ids.size() - 1);
        double max_lp_diff = 0;
        for (size_t t = 0; t + 1 < ids.size(); ++t) {
            const float* r = all.data() + t * V;
            const float mx = *std::max_element(r, r + V);
            double sum = 0;
            for (size_t i = 0; i < V; ++i) sum += std::exp(double(r[i]) - mx);
            const double lp = double(r[ids[t + 1]]) - mx - std::log(sum);
            max_lp_diff = std::max(max_lp_diff, std::abs(lp - logprobs[t]));
        }
        CHECK(max_lp_diff < 1e-4);
    }
}
