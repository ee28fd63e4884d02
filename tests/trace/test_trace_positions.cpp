// --pos all on a mixture of experts (qwen3moe, gpt-oss) and the hybrid (qwen35): what the one pass
// keeps for every position matches tracing that position alone (TraceOptions::position), whose
// rows the trace reads from its own pass: norms, head entropies, each layer's lens, the final
// distribution.
#include <cmath>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "journey/model/model.h"
#include "journey/trace/trace.h"

using namespace journey;

namespace {
bool close(double a, double b) { return std::abs(a - b) <= 1e-4 * std::max(1.0, std::abs(b)); }
}  // namespace

TEST_CASE("trace --pos all: every position as traced alone, on MoE and hybrid fixtures", "[trace][positions]") {
    for (const char* family : {"qwen3moe", "gpt-oss", "qwen35"}) {
        INFO(family);
        const std::string dir = std::string(JOURNEY_TEST_DATA) + "/models/" + family;
        const auto expect = nlohmann::json::parse(std::ifstream(dir + "/expect.json"));
        const auto ids = expect["cases"][0]["ids"].get<std::vector<TokenId>>();
        auto m = Model::load(dir + "/" + family + "-F32.gguf", LoadOptions{.tokenizer = false});
        TraceOptions all;
        all.all_positions = true;
        const Trace tr = run_trace(*m, ids, all);
        REQUIRE(tr.positions.size() == ids.size());
        for (int p = 0; p < int(ids.size()); ++p) {
            INFO("position " << p);
            TraceOptions one;
            one.position = p;
            const Trace t1 = run_trace(*m, ids, one);
            const PositionTrace& P = tr.positions[size_t(p)];
            CHECK(P.target == t1.target);
            CHECK(close(P.final_target_prob, t1.final_target_prob));
            REQUIRE(P.final.top.size() == t1.final.top.size());
            for (size_t k = 0; k < P.final.top.size(); ++k) {
                CHECK(P.final.top[k].id == t1.final.top[k].id);
                CHECK(close(P.final.top[k].prob, t1.final.top[k].prob));
            }
            CHECK(close(P.embedding.sum_norm, t1.embedding.sum_norm));
            REQUIRE(P.layers.size() == t1.layers.size());
            for (size_t l = 0; l < P.layers.size(); ++l) {
                const LayerTrace &a = P.layers[l], &b = t1.layers[l];
                CHECK(close(a.resid_pre, b.resid_pre));
                CHECK(close(a.resid_mid, b.resid_mid));
                CHECK(close(a.resid_post, b.resid_post));
                CHECK(close(a.attn_out, b.attn_out));
                CHECK(close(a.mlp_out, b.mlp_out));
                CHECK(a.lens.target_rank == b.lens.target_rank);
                CHECK(close(a.lens.target_prob, b.lens.target_prob));
                CHECK(close(a.lens.kl_to_final, b.lens.kl_to_final));
                CHECK(a.lens.dist.top.at(0).id == b.lens.dist.top.at(0).id);
                CHECK(a.heads.size() == b.heads.size());  // a Gated DeltaNet layer: none
                for (size_t h = 0; h < a.heads.size() && h < b.heads.size(); ++h) CHECK(close(a.heads[h].entropy, b.heads[h].entropy));
            }
        }
    }
}
