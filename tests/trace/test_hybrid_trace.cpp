// journey trace on a hybrid model (issue 35): the Gated DeltaNet layers as what they are (per
// head beta, the decay g, the state's norm, the contribution), the gated attention's output gate,
// on the qwen35 fixture (tests/data/models/qwen35/). The first token's values are checked against
// an independent computation from the GGUF's tensors: with a zero state, the conv sees only its
// last tap, and the state after one token is beta k̂ vᵀ, whose norm is beta |v| |k̂|.
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "journey/formats/gguf_reader.h"
#include "journey/kernels/to_float.h"
#include "journey/model/model.h"
#include "journey/text/tokenizer.h"
#include "journey/trace/trace.h"

using namespace journey;

namespace {

std::string qwen35_dir() { return std::string(JOURNEY_TEST_DATA) + "/models/qwen35"; }

std::vector<TokenId> prompt_ids() {
    const auto expect = nlohmann::json::parse(std::ifstream(qwen35_dir() + "/expect.json"));
    return expect["cases"][0]["ids"].get<std::vector<TokenId>>();
}

// A GGUF tensor as floats (row-major, outermost dimension first).
std::vector<float> floats(const ModelFile& f, const std::string& name) {
    const TensorInfo* t = f.find(name);
    REQUIRE(t);
    int64_t n = 1;
    for (int64_t d : t->shape) n *= d;
    std::vector<float> out(static_cast<size_t>(n));
    to_float(out.data(), t->dtype, t->data, n);
    return out;
}

struct FirstToken {
    std::vector<double> beta, g, state_norm;  // per value head
};

// Layer 0 at a sequence's first token, from the file's tensors alone.
FirstToken first_token(const ModelFile& f, TokenId tok) {
    const int C = 128, Hk = 4, Hv = 4, S = 32, K = 4;
    const double eps = 1e-6;  // qwen35.attention.layer_norm_rms_epsilon
    REQUIRE(std::abs(f.metadata["qwen35.attention.layer_norm_rms_epsilon"].get<double>() - eps) < 1e-9);
    const std::vector<float> embd = floats(f, "token_embd.weight"), norm = floats(f, "blk.0.attn_norm.weight"),
                             wqkv = floats(f, "blk.0.attn_qkv.weight"), conv = floats(f, "blk.0.ssm_conv1d.weight"),
                             wb = floats(f, "blk.0.ssm_beta.weight"), wa = floats(f, "blk.0.ssm_alpha.weight"),
                             dt = floats(f, "blk.0.ssm_dt.bias"), A = floats(f, "blk.0.ssm_a");
    std::vector<double> x(C), xn(C);
    double ss = 0;
    for (int i = 0; i < C; ++i) ss += (x[size_t(i)] = embd[size_t(tok) * C + size_t(i)]) * x[size_t(i)];
    const double inv = 1.0 / std::sqrt(ss / C + eps);
    for (int i = 0; i < C; ++i) xn[size_t(i)] = x[size_t(i)] * inv * norm[size_t(i)];
    auto row_dot = [&](const std::vector<float>& w, int r) {
        double s = 0;
        for (int i = 0; i < C; ++i) s += double(w[size_t(r) * C + size_t(i)]) * xn[size_t(i)];
        return s;
    };
    const int CH = 2 * Hk * S + Hv * S;
    std::vector<double> ch(static_cast<size_t>(CH));
    for (int c = 0; c < CH; ++c) {  // zero state: only the last tap sees an input; then SiLU
        const double v = row_dot(wqkv, c) * conv[size_t(c) * K + K - 1];
        ch[size_t(c)] = v / (1.0 + std::exp(-v));
    }
    FirstToken ft;
    for (int h = 0; h < Hv; ++h) {
        double kk = 0, vv = 0;
        for (int i = 0; i < S; ++i) kk += ch[size_t(Hk * S + h * S + i)] * ch[size_t(Hk * S + h * S + i)];
        for (int i = 0; i < S; ++i) vv += ch[size_t(2 * Hk * S + h * S + i)] * ch[size_t(2 * Hk * S + h * S + i)];
        const double k_len = std::sqrt(kk) / std::sqrt(kk + eps);  // |k̂| (L2-normalised with eps)
        const double beta = 1.0 / (1.0 + std::exp(-row_dot(wb, h)));
        const double a = row_dot(wa, h) + dt[size_t(h)];
        const double softplus = a > 20 ? a : std::log1p(std::exp(a));
        ft.beta.push_back(beta);
        ft.g.push_back(std::exp(softplus * A[size_t(h)]));
        ft.state_norm.push_back(beta * std::sqrt(vv) * k_len);
    }
    return ft;
}

}  // namespace

TEST_CASE("hybrid trace: Gated DeltaNet heads and the output gate, the first token as computed from the file", "[hybrid][trace]") {
    const std::string gguf = qwen35_dir() + "/qwen35-F32.gguf";
    const auto m = Model::load(gguf, LoadOptions{.tokenizer = false});
    const ModelFile f = read_gguf(gguf);
    const std::vector<TokenId> ids = prompt_ids();
    REQUIRE(ids.size() >= 2);
    const FirstToken want = first_token(f, ids[0]);

    // Position 0 of the whole prompt (the chunked form) and the prompt's first token alone (one
    // token at a time): both are the state after the first token.
    for (const bool alone : {false, true}) {
        INFO((alone ? "first token alone" : "position 0 of the prompt"));
        TraceOptions o;
        o.position = 0;
        const std::vector<TokenId> run = alone ? std::vector<TokenId>{ids[0]} : ids;
        const Trace tr = run_trace(*m, run, o);
        REQUIRE(tr.layers.size() == 4);
        const LayerTrace& l0 = tr.layers[0];
        REQUIRE(l0.recurrent);
        CHECK(l0.heads.empty());
        REQUIRE(l0.delta_heads.size() == 4);
        for (size_t h = 0; h < 4; ++h) {
            INFO("head " << h);
            CHECK(l0.delta_heads[h].beta == Approx(want.beta[h]).epsilon(1e-4));
            CHECK(l0.delta_heads[h].g == Approx(want.g[h]).epsilon(1e-4));
            CHECK(l0.delta_heads[h].state_norm == Approx(want.state_norm[h]).epsilon(1e-4));
            CHECK(l0.delta_heads[h].state_norm > 0);  // from a zero state
        }
    }

    // Every position: the gates in range, the states finite, the attention layer's gate a mean of sigmoids.
    for (int pos = 0; pos < int(ids.size()); ++pos) {
        INFO("position " << pos);
        TraceOptions o;
        o.position = pos;
        const Trace tr = run_trace(*m, ids, o);
        for (const LayerTrace& l : tr.layers) {
            INFO("layer " << l.layer);
            CHECK(l.recurrent == (l.layer < 3));
            if (l.recurrent) {
                CHECK(!l.output_gate_mean);
                for (const DeltaHeadTrace& d : l.delta_heads) {
                    CHECK((d.beta > 0 && d.beta < 1));
                    CHECK((d.g > 0 && d.g <= 1));
                    CHECK(std::isfinite(d.state_norm));
                    CHECK(d.state_norm > 0);
                    CHECK((std::isfinite(d.out_norm) && d.out_norm > 0));
                }
            } else {
                REQUIRE(l.output_gate_mean);
                CHECK((*l.output_gate_mean > 0 && *l.output_gate_mean < 1));
                double mean = 0;
                for (const HeadTrace& h : l.heads) {
                    REQUIRE(h.gate_mean);
                    mean += *h.gate_mean / double(l.heads.size());
                }
                CHECK(mean == Approx(*l.output_gate_mean).epsilon(1e-6));
            }
        }
    }
}

TEST_CASE("hybrid trace: the JSON names the mixer and its heads", "[hybrid][trace]") {
    const auto m = Model::load(qwen35_dir() + "/qwen35-F32.gguf");
    const Trace tr = run_trace(*m, prompt_ids(), TraceOptions{});
    const nlohmann::json j = trace_json(tr, m->tokenizer());
    const auto& l0 = j["layers"][0]["attn"];
    CHECK(l0["mixer"] == "gated_delta_net");
    CHECK(l0["heads"].empty());
    REQUIRE(l0["delta_heads"].size() == 4);
    for (const char* k : {"head", "beta", "g", "state_norm", "out_norm"}) CHECK(l0["delta_heads"][0].contains(k));
    const auto& l3 = j["layers"][3]["attn"];
    CHECK(!l3.contains("mixer"));
    CHECK(l3.contains("output_gate_mean"));
    CHECK(l3["heads"][0].contains("gate_mean"));
}
