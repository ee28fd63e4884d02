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

std::vector<TokenId> ids_of(int n) {  // the len200 case's ids, repeated as needed
    const auto expect = nlohmann::json::parse(std::ifstream(dir() + "/expect.json"));
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
    const auto m = Model::load(qwen35_gguf(), LoadOptions{.tokenizer = false});
    for (int n : {1, 63, 64, 65, 200}) {
        INFO(n << " tokens");
        const std::vector<TokenId> ids = ids_of(n);
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
