// The forward pass against an implementation we did not write: minGPT's float64 GPT-2 run on
// the gpt2-tiny checkpoint (tests/data/reference). Logits within 1e-4, same top-20, same
// per-token log-probabilities; the KV cache (token by token) must agree with the full prompt.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <cstring>
#include <numeric>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "gpt2_tiny.h"
#include "safetensors_writer.h"
#include "journey/errors.h"
#include "journey/formats/safetensors_reader.h"
#include "journey/kernels/to_float.h"
#include "journey/kernels/blocks/dequantize.h"
#include "journey/kernels/blocks/quantize.h"
#include "journey/model/model.h"
#include "journey/model/session.h"

using namespace journey;

namespace {

using test::gpt2_tiny_expected;
using test::gpt2_tiny_weights;
using test::ref_dir;

std::vector<float> read_f32(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
    std::vector<float> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), v.size() * 4);
    return v;
}


float max_abs_diff(std::span<const float> a, std::span<const float> b) {
    float d = 0;
    for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
    return d;
}

// log_softmax(row)[id], in double.
double logprob(std::span<const float> row, int id) {
    const float mx = *std::max_element(row.begin(), row.end());
    double sum = 0;
    for (float x : row) sum += std::exp(double(x) - mx);
    return double(row[size_t(id)]) - mx - std::log(sum);
}

}  // namespace

TEST_CASE("gpt2-tiny: config and weights bind as described", "[gpt2][reference]") {
    const ModelConfig& c = gpt2_tiny_weights().config();
    CHECK(c.arch == Arch::gpt2);
    CHECK(c.n_layer == 2);
    CHECK(c.n_head == 4);
    CHECK(c.n_embd == 64);
    CHECK(c.n_ctx == 128);
    CHECK(c.n_vocab == 50257);
    CHECK(c.n_ff == 256);
    const Weights& w = gpt2_tiny_weights().weights();
    CHECK(w.output.data == w.tok_embd.data);  // tied
    CHECK(w.layers[0].attn_qkv.layout == Layout::Conv1D);
    // wte + wpe + per layer (2 LN + c_attn + c_proj + c_fc + c_proj with biases) + ln_f
    const int64_t C = 64, F = 256, per_layer = 4 * C + (C * 3 * C + 3 * C) + (C * C + C) + (C * F + F) + (F * C + C);
    CHECK(gpt2_tiny_weights().n_params() == 50257 * C + 128 * C + 2 * per_layer + 2 * C);
}

TEST_CASE("gpt2-tiny: logits match the float64 reference", "[gpt2][reference]") {
    const auto ref = gpt2_tiny_expected();
    float worst_logit = 0;
    double worst_logprob = 0;
    for (const auto& cs : ref["cases"]) {
        const std::vector<TokenId> ids = cs["ids"].get<std::vector<TokenId>>();
        INFO("case: " << cs["text"].get<std::string>());
        Session s(gpt2_tiny_weights());
        auto all = s.eval(ids, LogitsFor::all);
        const size_t V = 50257;
        REQUIRE(all.size() == ids.size() * V);
        auto last = all.subspan((ids.size() - 1) * V, V);

        const auto want = read_f32(ref_dir + "/" + cs["last_logits_file"].get<std::string>());
        REQUIRE(want.size() == V);
        const float d = max_abs_diff(last, want);
        worst_logit = std::max(worst_logit, d);
        CHECK(d < 1e-4f);

        std::vector<int> order(V);
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + 20, order.end(),
                          [&](int a, int b) { return last[size_t(a)] > last[size_t(b)]; });
        for (int i = 0; i < 20; ++i) CHECK(order[size_t(i)] == cs["top20"][size_t(i)]["id"].get<int>());

        const auto lps = cs["prompt_token_logprobs"].get<std::vector<double>>();
        REQUIRE(lps.size() == ids.size() - 1);
        for (size_t t = 0; t + 1 < ids.size(); ++t) {
            const double lp = logprob(all.subspan(t * V, V), ids[t + 1]);
            worst_logprob = std::max(worst_logprob, std::abs(lp - lps[t]));
            CHECK(std::abs(lp - lps[t]) < 1e-4);
        }
    }
    WARN("max |logit - reference| = " << worst_logit << ", max |logprob - reference| = " << worst_logprob);
}

TEST_CASE("gpt2-tiny: KV cache token by token equals the full prompt", "[gpt2][kv]") {
    const auto ref = gpt2_tiny_expected();
    const auto& cs = ref["cases"][2];
    const std::vector<TokenId> ids = cs["ids"].get<std::vector<TokenId>>();
    const size_t V = 50257;
    Session full(gpt2_tiny_weights());
    const auto all = full.eval(ids, LogitsFor::all);
    const std::vector<float> want(all.begin(), all.end());
    CHECK(full.n_past() == int(ids.size()));

    Session step(gpt2_tiny_weights());
    float worst = 0;
    for (size_t t = 0; t < ids.size(); ++t) {
        auto got = step.eval(std::span(&ids[t], 1));
        REQUIRE(got.size() == V);
        worst = std::max(worst, max_abs_diff(got, std::span(want).subspan(t * V, V)));
    }
    CHECK(worst < 1e-4f);

    // A prompt in two pieces, then reset and again: same last logits.
    step.reset();
    CHECK(step.n_past() == 0);
    step.eval(std::span(ids).first(10));
    auto got = step.eval(std::span(ids).subspan(10));
    CHECK(max_abs_diff(got, std::span(want).subspan((ids.size() - 1) * V, V)) < 1e-4f);
}

TEST_CASE("gpt2-tiny: eval rejects bad ids and context overflow", "[gpt2]") {
    Session s(gpt2_tiny_weights());
    std::vector<TokenId> bad{1, 50257};
    CHECK_THROWS_AS(s.eval(bad), InputError);
    std::vector<TokenId> neg{-1};
    CHECK_THROWS_AS(s.eval(neg), InputError);
    CHECK(s.n_past() == 0);
    std::vector<TokenId> long_prompt(129, 11);
    CHECK_THROWS_AS(s.eval(long_prompt), InputError);
    std::vector<TokenId> full(128, 11);
    s.eval(full);
    CHECK(s.n_past() == 128);
    std::vector<TokenId> one{11};
    CHECK_THROWS_AS(s.eval(one), InputError);
}

// GPT-2's Hugging Face checkpoints store their matrices Conv1D [in, out]; at F16/BF16 journey
// copies them at load into the Linear [out, in] layout its one-token product streams fastest
// (weights.cpp). The copy must move the file's bits exactly, and the model must then compute what
// the same numbers give at F32 in the Conv1D layout as stored (checked against minGPT above).
TEST_CASE("gpt2-tiny at F16 and BF16: Conv1D matrices read as Linear, bit for bit, same logits as their F32 values", "[gpt2][reference]") {
    const ModelFile f = read_safetensors(ref_dir + "/gpt2-tiny/model.safetensors");
    const auto ids = gpt2_tiny_expected()["cases"][0]["ids"].get<std::vector<TokenId>>();
    REQUIRE(ids.size() >= 4);
    for (DType dtype : {DType::F16, DType::BF16}) {
        INFO(dtype_name(dtype));
        test::TempDir half, wide;  // the matrices at dtype; the same numbers at F32
        std::map<std::string, std::string> stored;  // each matrix's bytes at dtype, as in the file
        std::vector<test::FakeTensor> th, tw;
        for (const auto& [name, t] : f.tensors) {
            std::vector<float> v(static_cast<size_t>(t.numel()));
            to_float(v.data(), t.dtype, t.data, t.numel());
            const bool matrix = name.starts_with("h.") && t.shape.size() == 2;
            if (!matrix) {
                th.push_back({name, "F32", t.shape, v, {}});
                tw.push_back({name, "F32", t.shape, v, {}});
                continue;
            }
            std::string raw(static_cast<size_t>(t.numel()) * 2, '\0');
            quantize_row(dtype, v.data(), raw.data(), t.numel());
            dequantize_row(dtype, reinterpret_cast<const std::byte*>(raw.data()), v.data(), t.numel());
            stored[name] = raw;
            th.push_back({name, dtype == DType::F16 ? "F16" : "BF16", t.shape, {}, raw});
            tw.push_back({name, "F32", t.shape, v, {}});
        }
        REQUIRE(stored.size() == 8);
        for (const test::TempDir* d : {&half, &wide})
            std::filesystem::copy_file(ref_dir + "/gpt2-tiny/config.json", *d / "config.json");
        test::write_safetensors(half / "model.safetensors", th);
        test::write_safetensors(wide / "model.safetensors", tw);
        const auto mh = Model::load(half.path, LoadOptions{.tokenizer = false});
        const auto mw = Model::load(wide.path, LoadOptions{.tokenizer = false});

        CHECK(mw->weights().layers[0].attn_qkv.layout == Layout::Conv1D);  // F32 stays as stored
        for (int l = 0; l < 2; ++l) {
            const LayerWeights& L = mh->weights().layers[size_t(l)];
            const std::pair<const Matrix*, const char*> ms[] = {{&L.attn_qkv, "attn.c_attn"}, {&L.attn_out, "attn.c_proj"},
                                                                 {&L.mlp_up, "mlp.c_fc"}, {&L.mlp_down, "mlp.c_proj"}};
            for (const auto& [m, what] : ms) {
                const std::string name = "h." + std::to_string(l) + "." + what + ".weight";
                INFO(name);
                const TensorInfo& t = f.tensors.at(name);
                const int64_t n_in = t.shape[0], n_out = t.shape[1];
                REQUIRE(m->layout == Layout::Linear);
                REQUIRE(m->dtype == dtype);
                REQUIRE((m->rows == n_out && m->cols == n_in));
                const std::string& raw = stored.at(name);
                int64_t differ = 0;
                for (int64_t i = 0; i < n_in; ++i)
                    for (int64_t o = 0; o < n_out; ++o)
                        differ += std::memcmp(m->data + 2 * (o * n_in + i), raw.data() + 2 * (i * n_out + o), 2) != 0;
                CHECK(differ == 0);
            }
        }

        // Token by token (the one-token product) and the whole prompt at once (the prompt gemm).
        Session sh(*mh), sw(*mw);
        float worst = 0;
        for (size_t t = 0; t < ids.size(); ++t) {
            const auto a = sw.eval(std::span(&ids[t], 1));
            const std::vector<float> want(a.begin(), a.end());
            worst = std::max(worst, max_abs_diff(sh.eval(std::span(&ids[t], 1)), want));
        }
        CHECK(worst < 1e-4f);
        Session ph(*mh), pw(*mw);
        const auto a = pw.eval(ids, LogitsFor::all);
        const std::vector<float> want(a.begin(), a.end());
        CHECK(max_abs_diff(ph.eval(ids, LogitsFor::all), want) < 1e-4f);
    }
}
