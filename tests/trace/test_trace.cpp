// The trace library on gpt2-tiny: it observes the one forward pass, so its final distribution
// is the model's (and the reference's), its last logit lens is the final distribution, its
// attention rows are distributions over the past, and its head norms are z_h · W_O by hand.
#include <cmath>
#include <fstream>
#include <map>
#include <numeric>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "gpt2_tiny.h"
#include "journey/errors.h"
#include "journey/model/model.h"
#include "journey/model/session.h"
#include "journey/trace/trace.h"
#include "journey/model/unembed.h"

using namespace journey;

namespace {

using test::gpt2_tiny;
using test::gpt2_tiny_expected;

std::vector<TokenId> case_ids(size_t i) { return gpt2_tiny_expected()["cases"][i]["ids"].get<std::vector<TokenId>>(); }


// Records copies of chosen intermediates.
struct Recorder : Observer {
    std::map<std::string, std::vector<float>> seen;
    void observe(const Intermediate& t) override {
        int64_t n = 1;
        for (int64_t d : t.dims) n *= d;
        seen[std::string(t.name) + std::to_string(t.layer)].assign(t.data, t.data + n);
    }
};

TraceOptions options(int position = -1, int top_k = 10, bool full_patterns = false) {
    TraceOptions o;
    o.position = position;
    o.top_k = top_k;
    o.full_patterns = full_patterns;
    return o;
}

}  // namespace

TEST_CASE("trace: final distribution matches the float64 reference's top 20", "[trace][reference]") {
    const nlohmann::json ref = gpt2_tiny_expected();
    for (const auto& cs : ref["cases"]) {
        INFO("case: " << cs["text"].get<std::string>());
        const auto ids = cs["ids"].get<std::vector<TokenId>>();
        const Trace tr = run_trace(gpt2_tiny(), ids, options(-1, 20));
        REQUIRE(tr.final.top.size() == 20);
        CHECK(tr.position == int(ids.size()) - 1);
        for (size_t i = 0; i < 20; ++i) {
            CHECK(tr.final.top[i].id == cs["top20"][i]["id"].get<TokenId>());
            CHECK(std::abs(tr.final.top[i].prob - cs["top20"][i]["prob"].get<double>()) < 1e-4);
        }
    }
}

TEST_CASE("trace: the last layer's logit lens is the final distribution, exactly", "[trace]") {
    const auto ids = case_ids(0);
    const Trace tr = run_trace(gpt2_tiny(), ids, options(-1, 20));
    const LensTrace& last = tr.layers.back().lens;
    REQUIRE(last.dist.top.size() == tr.final.top.size());
    for (size_t i = 0; i < tr.final.top.size(); ++i) {
        CHECK(last.dist.top[i].id == tr.final.top[i].id);
        CHECK(last.dist.top[i].prob == tr.final.top[i].prob);
    }
    CHECK(last.dist.entropy == tr.final.entropy);
    CHECK(last.kl_to_final == 0.0);
    CHECK(last.target_rank == 1);
    CHECK(tr.target == tr.final.top[0].id);
    // ... and the final distribution is what a plain eval (as `journey next` runs it) gives.
    Session s(gpt2_tiny());
    const auto logits = s.eval(ids);
    const Distribution d = distribution(logits, 20);
    for (size_t i = 0; i < d.top.size(); ++i) {
        CHECK(d.top[i].id == tr.final.top[i].id);
        CHECK(d.top[i].prob == tr.final.top[i].prob);
    }
}

TEST_CASE("trace: attention rows are distributions over the past", "[trace]") {
    const auto ids = case_ids(2);
    const int T = int(ids.size());
    const Trace tr = run_trace(gpt2_tiny(), ids, options(T / 2, 10, true));
    CHECK(tr.position == T / 2);
    for (const LayerTrace& l : tr.layers) {
        REQUIRE(l.heads.size() == 4);
        for (const HeadTrace& h : l.heads) {
            REQUIRE(h.pattern.size() == size_t(T));
            REQUIRE(h.full.size() == size_t(T * T));
            for (int q = 0; q < T; ++q) {
                double sum = 0;
                for (int k = 0; k < T; ++k) {
                    const float w = h.full[size_t(q * T + k)];
                    if (k > q) CHECK(w == 0.0f);
                    CHECK(w >= 0.0f);
                    sum += w;
                }
                CHECK(std::abs(sum - 1.0) < 1e-5);
            }
            for (int k = 0; k < T; ++k) CHECK(h.pattern[size_t(k)] == h.full[size_t(tr.position * T + k)]);
            CHECK(h.entropy >= 0);
            CHECK(h.entropy <= std::log(double(tr.position + 1)) + 1e-9);
            REQUIRE(h.top_keys.size() == 5);
            CHECK(h.pattern[size_t(h.top_keys[0])] >= h.pattern[size_t(h.top_keys[1])]);
            for (int k : h.top_keys) CHECK(k <= tr.position);
        }
    }
}

TEST_CASE("trace: head norms are z_h times W_O's rows of the head, by hand", "[trace]") {
    const auto ids = case_ids(1);
    const int T = int(ids.size()), pos = T - 2;
    Recorder rec;
    Session s(gpt2_tiny());
    s.set_observer(&rec);
    s.eval(ids);
    const Trace tr = run_trace(gpt2_tiny(), ids, options(pos));
    const ModelConfig& c = gpt2_tiny().config();
    const int H = c.n_head, D = c.head_dim, C = c.n_embd;
    for (int l = 0; l < c.n_layer; ++l) {
        const Matrix& W = gpt2_tiny().weights().layers[size_t(l)].attn_out;  // Conv1D, F32: [H*D, C]
        REQUIRE(W.layout == Layout::Conv1D);
        REQUIRE(W.dtype == DType::F32);
        const float* w = reinterpret_cast<const float*>(W.data);
        const std::vector<float>& z = rec.seen.at("attn_z" + std::to_string(l));
        const std::vector<float>& out = rec.seen.at("attn_out" + std::to_string(l));
        const float* bias = gpt2_tiny().weights().layers[size_t(l)].attn_out_b.data;
        std::vector<double> total(size_t(C), 0.0);
        for (int h = 0; h < H; ++h) {
            double norm2 = 0;
            for (int j = 0; j < C; ++j) {
                double v = 0;
                for (int d = 0; d < D; ++d) v += double(z[size_t(pos * H * D + h * D + d)]) * w[size_t((h * D + d) * C + j)];
                total[size_t(j)] += v;
                norm2 += v * v;
            }
            CHECK(std::abs(tr.layers[size_t(l)].heads[size_t(h)].out_norm - std::sqrt(norm2)) < 1e-4);
        }
        // The heads and the bias make up attn_out.
        for (int j = 0; j < C; ++j) CHECK(std::abs(total[size_t(j)] + bias[j] - out[size_t(pos * C + j)]) < 1e-4);
    }
}

TEST_CASE("trace: norms and the lens agree with a recorded forward pass", "[trace]") {
    const auto ids = case_ids(0);
    const int T = int(ids.size()), pos = 1, C = gpt2_tiny().config().n_embd, V = gpt2_tiny().config().n_vocab;
    Recorder rec;
    Session s(gpt2_tiny());
    s.set_observer(&rec);
    const auto all = s.eval(ids, LogitsFor::all);
    const std::vector<float> at_pos(all.begin() + int64_t{pos} * V, all.begin() + int64_t{pos + 1} * V);
    const Trace tr = run_trace(gpt2_tiny(), ids, options(pos - T));  // negative: from the end
    REQUIRE(tr.position == pos);
    auto norm = [&](const std::string& key) {
        const std::vector<float>& v = rec.seen.at(key);
        double s2 = 0;
        for (int j = 0; j < C; ++j) s2 += double(v[size_t(pos * C + j)]) * v[size_t(pos * C + j)];
        return std::sqrt(s2);
    };
    CHECK(tr.embedding.token_norm == Approx(norm("tok_embed-1")).epsilon(1e-9));
    CHECK(tr.embedding.position_norm.value() == Approx(norm("pos_embed-1")).epsilon(1e-9));
    CHECK(tr.embedding.sum_norm == Approx(norm("embed-1")).epsilon(1e-9));
    CHECK(tr.layers[0].resid_pre == tr.embedding.sum_norm);
    CHECK(tr.layers[1].resid_pre == tr.layers[0].resid_post);
    CHECK(tr.layers[1].mlp_out == Approx(norm("mlp_out1")).epsilon(1e-9));
    // Not the last position: the final distribution comes from the all-positions logits.
    const Distribution d = distribution(at_pos, 10);
    for (size_t i = 0; i < d.top.size(); ++i) {
        CHECK(d.top[i].id == tr.final.top[i].id);
        CHECK(d.top[i].prob == Approx(tr.final.top[i].prob).margin(1e-6));
    }
    CHECK(tr.layers.back().lens.kl_to_final < 1e-6);
}

TEST_CASE("trace: target, KL and JSON", "[trace]") {
    const auto ids = case_ids(0);
    const Tokenizer& tok = gpt2_tiny().tokenizer();
    const TokenId target = parse_target(tok, 50257, " Paris");
    CHECK(target == 6342);
    CHECK(parse_target(tok, 50257, "#9157") == 9157);
    CHECK_THROWS_AS(parse_target(tok, 50257, " Paris is"), UsageError);
    CHECK_THROWS_AS(parse_target(tok, 50257, "#50257"), UsageError);
    CHECK_THROWS_AS(parse_target(tok, 50257, "#12x"), UsageError);
    CHECK_THROWS_AS(resolve_position(5, 5), UsageError);
    CHECK_THROWS_AS(resolve_position(-6, 5), UsageError);
    CHECK(resolve_position(-5, 5) == 0);

    TraceOptions o;
    o.target = target;
    const Trace tr = run_trace(gpt2_tiny(), ids, o);
    CHECK(tr.target == target);
    for (const LayerTrace& l : tr.layers) {
        CHECK(l.lens.target_rank >= 1);
        CHECK(l.lens.target_prob > 0);
        CHECK(l.lens.kl_to_final >= 0);
        CHECK(std::isfinite(l.lens.kl_to_final));
    }
    const nlohmann::json j = trace_json(tr, tok);
    CHECK(j["target"]["id"] == target);
    CHECK(j["target"]["token"] == " Paris");
    CHECK(j["tokens"].size() == ids.size());
    CHECK(j["layers"].size() == 2);
    CHECK(j["layers"][0]["attn"]["heads"].size() == 4);
    CHECK(j["layers"][0]["attn"]["heads"][0]["top_keys"][0].contains("pos"));
    CHECK(!j["layers"][0]["attn"]["heads"][0].contains("full_pattern"));
    CHECK(j["embedding"]["position"] == "learned");
    const std::string text = j.dump();
    CHECK(text.find("null") == std::string::npos);  // nothing non-finite slipped in
    CHECK(trace_jsonl(j).size() == 2 + 3);
}

TEST_CASE("trace: a llama2.c model (stories260K)", "[trace][llama]") {
    const auto m = Model::load(journey::test::data_dir() + "/models/stories260K/stories260K.bin", {.tokenizer = false});
    const std::vector<TokenId> ids{1, 403, 407, 261, 378, 429};
    const Trace tr = run_trace(*m, ids, options(-1, 10, true));
    CHECK(!tr.embedding.position_norm);
    REQUIRE(tr.layers.size() == 5);
    for (const LayerTrace& l : tr.layers)
        for (const HeadTrace& h : l.heads) {
            const double sum = std::accumulate(h.pattern.begin(), h.pattern.end(), 0.0);
            CHECK(std::abs(sum - 1.0) < 1e-5);
        }
    CHECK(tr.layers.back().lens.kl_to_final == 0.0);
    Session s(*m);
    const Distribution d = distribution(s.eval(ids), 10);
    for (size_t i = 0; i < d.top.size(); ++i) CHECK(d.top[i].prob == tr.final.top[i].prob);
}
