// Hybrid models (issue 35): Qwen3.5's Gated DeltaNet layers beside gated full attention, on the
// shared fixture's stand-in (tests/data/models/qwen35/, tests/data/README.md). Its agreement with
// llama.cpp's expect.json from both formats is in test_families.cpp (the families table); here:
// the recurrence's two forms agree, a session's memory (KV cache + recurrent state) goes back
// only to snapshots, and chat reuses a state across turns.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "journey/chat/chat_format.h"
#include "journey/chat/chat_turns.h"
#include "journey/errors.h"
#include "journey/formats/gguf_reader.h"
#include "journey/kernels/kernels.h"
#include "journey/model/model.h"
#include "journey/model/session.h"

using namespace journey;

namespace {

std::string dir() { return std::string(JOURNEY_TEST_DATA) + "/models/qwen35"; }
std::string qwen35_gguf() { return dir() + "/qwen35-F32.gguf"; }
// Qwen3-Next's stand-in (tests/data/models/qwen3next/): 2 key / 4 value heads, grouped
std::string next_dir() { return std::string(JOURNEY_TEST_DATA) + "/models/qwen3next"; }
std::string next_gguf() { return next_dir() + "/qwen3next-F32.gguf"; }

std::vector<TokenId> ids_of(int n, const std::string& from = dir()) {  // the len200 case's ids, repeated as needed
    const auto expect = nlohmann::json::parse(std::ifstream(from + "/expect.json"));
    const auto base = expect["cases"][1]["ids"].get<std::vector<TokenId>>();
    std::vector<TokenId> ids;
    while (int(ids.size()) < n) ids.push_back(base[ids.size() % base.size()]);
    return ids;
}

double max_diff(std::span<const float> a, std::span<const float> b) {
    REQUIRE(a.size() == b.size());
    double d = 0;
    for (size_t i = 0; i < a.size(); ++i) d = std::max(d, double(std::abs(a[i] - b[i])));
    return d;
}

}  // namespace

TEST_CASE("hybrid: the layer kinds, sizes and MTP head of the fixture, from both formats", "[hybrid]") {
    for (const std::string path : {qwen35_gguf(), dir() + "/hf"}) {
        INFO(path);
        const auto m = Model::load(path, LoadOptions{.tokenizer = false});
        const ModelConfig& c = m->config();
        CHECK(c.arch == Arch::qwen35);
        CHECK(c.n_layer == 4);  // the GGUF's block_count 5 counts the MTP head
        CHECK(c.recurrent_layers == std::vector<bool>{true, true, true, false});
        CHECK(c.ssm_k_heads == 4);
        CHECK(c.ssm_v_heads == 4);
        CHECK(c.ssm_head_dim == 32);
        CHECK(c.ssm_conv == 4);
        CHECK(c.attn_output_gate);
        CHECK(c.rot_dims() == 16);
        CHECK(c.rope_sections.size() >= 3);
        CHECK(m->weights().set_aside > 0);  // the MTP head (and, in HF, no vision tower in this stand-in)
        Session s(*m);
        CHECK(s.kv_bytes_per_token() == 1 * 2 * 64 * 4);                          // one attention layer
        CHECK(s.state_bytes() == 3 * (3 * 384 + 4 * 32 * 32) * int64_t(sizeof(float)));  // three recurrent layers
    }
}

TEST_CASE("hybrid: the chunked and the one-token forms of the recurrence agree", "[hybrid]") {
    // Qwen3.5's value heads one per key head; Qwen3-Next's two per key head (grouped)
    for (const auto& [gguf, from] : {std::pair{qwen35_gguf(), dir()}, std::pair{next_gguf(), next_dir()}}) {
        INFO(gguf);
        const auto m = Model::load(gguf, LoadOptions{.tokenizer = false});
        for (int n : {1, 63, 64, 65, 200}) {
            INFO(n << " tokens");
            const std::vector<TokenId> ids = ids_of(n, from);
            Session chunked(*m), recurrent(*m), stepped(*m);
            chunked.set_delta_form(DeltaForm::chunked);
            recurrent.set_delta_form(DeltaForm::recurrent);
            const auto a = chunked.eval(ids, LogitsFor::all);
            const std::vector<float> la(a.begin(), a.end());
            const auto b = recurrent.eval(ids, LogitsFor::all);
            CHECK(max_diff(la, b) < 2e-4);
            CHECK(max_diff(chunked.recurrent_state(), recurrent.recurrent_state()) < 1e-4);
            // token by token (generation's path) ends in the same state with the same last logits
            std::span<const float> last;
            for (TokenId id : ids) last = stepped.eval(std::span(&id, 1));
            CHECK(max_diff(std::span(la).last(size_t(m->config().n_vocab)), last) < 2e-4);
            CHECK(max_diff(chunked.recurrent_state(), stepped.recurrent_state()) < 1e-4);
            // not trivially: the state has moved
            double norm = 0;
            for (float x : chunked.recurrent_state()) norm += double(x) * x;
            CHECK(norm > 1e-3);
        }
    }
}

TEST_CASE("hybrid: Qwen3-Next from both formats: every 4th layer full, grouped value heads, fused projections", "[hybrid]") {
    for (const std::string path : {next_gguf(), next_dir() + "/hf"}) {
        INFO(path);
        const auto m = Model::load(path, LoadOptions{.tokenizer = false});
        const ModelConfig& c = m->config();
        CHECK(c.arch == Arch::qwen3next);
        CHECK(c.n_layer == 4);  // the GGUF's block_count 5 counts the MTP head
        CHECK(c.recurrent_layers == std::vector<bool>{true, true, true, false});  // no layer_types: full_attention_interval 4
        CHECK(c.ssm_k_heads == 2);
        CHECK(c.ssm_v_heads == 4);
        CHECK_FALSE(c.ssm_v_tiled);  // value heads 0, 1 read key head 0 in both formats
        CHECK(c.rot_dims() == 8);    // partial_rotary_factor 0.25 of 32
        CHECK(c.rope_sections.empty());
        CHECK(c.n_expert == 8);
        CHECK(c.n_ff_shexp == 32);
        CHECK(m->weights().set_aside > 0);  // the MTP head
        const bool hf = path.ends_with("/hf");
        const LayerWeights& l0 = m->weights().layers[0];
        CHECK(bool(l0.ssm_qkvz) == hf);  // in_proj_qkvz; the GGUF's attn_qkv and attn_gate
        CHECK(bool(l0.ssm_qkv) == !hf);
        CHECK(bool(l0.ssm_gate) == !hf);
        CHECK(bool(l0.ssm_ba));
    }
}

TEST_CASE("hybrid: an early qwen3next GGUF (the fused ssm_in) computes what the split one does", "[hybrid]") {
    // llama.cpp's first qwen3next converter stored in_proj_qkvz as it is, [q | k | v | z] per key
    // head (ssm_in), which its loader still reads: the split file's rows put back in that order.
    ModelFile f = read_gguf(next_gguf());
    const ModelConfig c = config_from_gguf(f);
    const int64_t Hk = c.ssm_k_heads, S = c.ssm_head_dim, R = c.ssm_v_heads / Hk, W = 2 * S + 2 * R * S, C = c.n_embd;
    ModelFile broken = read_gguf(next_gguf());
    for (int l = 0; l < c.n_layer; ++l) {
        if (!c.is_recurrent(l)) continue;
        const std::string b = "blk." + std::to_string(l) + ".";
        const auto* qkv = reinterpret_cast<const float*>(f.tensors.at(b + "attn_qkv.weight").data);
        const auto* z = reinterpret_cast<const float*>(f.tensors.at(b + "attn_gate.weight").data);
        auto fused = std::make_shared<std::vector<std::byte>>(size_t(Hk * W * C) * sizeof(float));
        float* out = reinterpret_cast<float*>(fused->data());
        auto rows = [&](const float* src, int64_t first, int64_t n) {
            std::copy(src + first * C, src + (first + n) * C, out);
            out += n * C;
        };
        for (int64_t kh = 0; kh < Hk; ++kh) {
            rows(qkv, kh * S, S);                       // q
            rows(qkv, Hk * S + kh * S, S);              // k
            rows(qkv, 2 * Hk * S + kh * R * S, R * S);  // v: this key head's R value heads
            rows(z, kh * R * S, R * S);                 // z
        }
        f.tensors.erase(b + "attn_qkv.weight");
        f.tensors.erase(b + "attn_gate.weight");
        f.tensors[b + "ssm_in.weight"] = TensorInfo{b + "ssm_in.weight", DType::F32, {Hk * W, C}, fused->data(), fused->size()};
        f.owned.push_back(fused);
        if (l == 1) broken.tensors.erase(b + "attn_gate.weight");
    }
    const Model legacy(std::move(f), c, nullptr);
    const auto split = Model::load(next_gguf(), LoadOptions{.tokenizer = false});
    const std::vector<TokenId> ids = ids_of(70, next_dir());
    Session a(legacy), b(*split);
    const auto la = a.eval(ids, LogitsFor::all);
    const std::vector<float> got(la.begin(), la.end());
    CHECK(max_diff(got, b.eval(ids, LogitsFor::all)) < 1e-5);
    CHECK(max_diff(a.recurrent_state(), b.recurrent_state()) < 1e-6);
    // half of the split way is refused by name
    CHECK_THROWS_WITH(Weights::bind(broken, c), Catch::Contains("blk.1.attn_gate.weight' is missing"));
}

TEST_CASE("hybrid: thread counts give the same bits, prompt and generation alike", "[hybrid]") {
    struct ThreadsBack {
        int n = num_threads();
        ~ThreadsBack() { set_num_threads(n); }
    } back;
    const auto m = Model::load(qwen35_gguf(), LoadOptions{.tokenizer = false});
    const std::vector<TokenId> ids = ids_of(70);
    std::vector<std::vector<float>> runs;
    for (int threads : {1, 2, 3}) {
        set_num_threads(threads);
        Session s(*m);
        const auto p = s.eval(ids, LogitsFor::all);
        std::vector<float> got(p.begin(), p.end());
        const auto g = s.eval(std::span(ids).first(1));
        got.insert(got.end(), g.begin(), g.end());
        runs.push_back(got);
    }
    CHECK(runs[0] == runs[1]);
    CHECK(runs[0] == runs[2]);
}

TEST_CASE("hybrid: a last layer that is linear attention narrows to the last token", "[hybrid]") {
    // The fixture's first three blocks alone (its attention block set aside with the MTP head):
    // every layer recurrent, so the pass narrows to the last token after a Gated DeltaNet layer.
    ModelFile f = read_gguf(qwen35_gguf());
    f.metadata["qwen35.nextn_predict_layers"] = 2;
    const ModelConfig c = config_from_gguf(f);
    REQUIRE(c.n_layer == 3);
    REQUIRE(c.n_recurrent() == 3);
    const Model m(std::move(f), c, nullptr);
    const std::vector<TokenId> ids = ids_of(20);
    Session all(m), last(m);
    const auto a = all.eval(ids, LogitsFor::all);
    const std::vector<float> row(a.end() - c.n_vocab, a.end());
    const auto l = last.eval(ids);
    // F32 products of one row and of many may round apart (BLAS; qwen3's F32 GGUF narrows 2e-6
    // apart too); the states, computed before the narrowing, are the same bits.
    CHECK(max_diff(row, l) < 1e-5);
    CHECK(max_diff(all.recurrent_state(), last.recurrent_state()) == 0);
}

TEST_CASE("hybrid: a state rewinds only to a snapshot, and the rest is evaluated again", "[hybrid]") {
    const auto m = Model::load(qwen35_gguf(), LoadOptions{.tokenizer = false});
    const std::vector<TokenId> ids = ids_of(40);
    Session fresh(*m);
    const auto want = fresh.eval(std::span(ids).first(30));
    const std::vector<float> expected(want.begin(), want.end());

    Session s(*m);
    s.eval(std::span(ids).first(10));
    s.snapshot();
    s.eval(std::span(ids).subspan(10, 30));
    CHECK(s.n_past() == 40);
    CHECK(s.rewind(25) == 10);  // the state at 25 is gone: back to the snapshot at 10
    CHECK(s.n_past() == 10);
    const auto got = s.eval(std::span(ids).subspan(10, 20));
    CHECK(max_diff(expected, got) < 2e-4);
    CHECK(s.rewind(5) == 0);  // no snapshot at or before 5: nothing kept
    CHECK(s.n_past() == 0);
    const auto again = s.eval(std::span(ids).first(30));
    CHECK(max_diff(expected, again) == 0);  // from nothing, the same pass as the fresh session
}

TEST_CASE("hybrid: chat reuses the recurrent state across turns and replies as a fresh run does", "[hybrid]") {
    const auto m = Model::load(qwen35_gguf());
    const ChatFormat format = load_chat_format(*m);
    REQUIRE(format.tmpl);
    GenerateOptions gen;
    gen.max_tokens = 6;
    gen.sampler.temperature = 0;
    gen.ignore_eos = true;
    nlohmann::ordered_json messages = nlohmann::ordered_json::array();
    messages.push_back({{"role", "user"}, {"content", "hello there"}});
    ChatTurns turns(*m, format, {});
    const GenerateResult first = turns.reply(messages, gen);
    CHECK(turns.evaluated_last() == turns.prompt_tokens_last());  // nothing to reuse yet
    messages.push_back({{"role", "assistant"}, {"content", first.text}});
    messages.push_back({{"role", "user"}, {"content", "and again"}});
    const GenerateResult second = turns.reply(messages, gen);
    INFO("second turn: " << turns.prompt_tokens_last() << " prompt tokens, " << turns.evaluated_last() << " evaluated");
    // The first turn's message is not evaluated again: the state was kept where it ends. (The
    // reply is not reused: Qwen3.5's template re-renders an earlier reply without its <think>.)
    const size_t first_message = chat_prompt_ids(m->tokenizer(), "<|im_start|>user\nhello there<|im_end|>\n").size();
    CHECK(first_message == 12);
    CHECK(turns.evaluated_last() == turns.prompt_tokens_last() - int(first_message));

    ChatTurns fresh(*m, format, {});
    const GenerateResult whole = fresh.reply(messages, gen);
    CHECK(fresh.evaluated_last() == fresh.prompt_tokens_last());
    CHECK(whole.tokens == second.tokens);
}

TEST_CASE("hybrid: what journey does not run is refused by name", "[hybrid]") {
    {  // a linear-attention kind journey does not implement
        auto j = nlohmann::json::parse(std::ifstream(dir() + "/hf/config.json"));
        j["text_config"]["layer_types"][0] = "mamba";
        CHECK_THROWS_WITH(config_from_hf(j, "config.json"), Catch::Contains("layer type \"mamba\""));
    }
    {  // a hybrid's keys in a family that has none
        ModelFile f = read_gguf(std::string(JOURNEY_TEST_DATA) + "/models/qwen3/qwen3-F32.gguf");
        f.metadata["qwen3.ssm.conv_kernel"] = 4;
        CHECK_THROWS_WITH(config_from_gguf(f), Catch::Contains("qwen3.ssm.conv_kernel"));
    }
}
