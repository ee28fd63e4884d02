// Mixtures of experts (issue 34) beyond llama.cpp's numbers (tests/model/test_families.cpp has
// those): the routing rules, the experts as slices of quantized stacked tensors, and
// determinism: a prompt's grouped expert products give the bits of any other split of the
// prompt and of any thread count, and stay within float rounding of the one-token path.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "journey/errors.h"
#include "journey/formats/gguf_reader.h"
#include "journey/kernels/kernels.h"
#include "journey/kernels/blocks/dequantize.h"
#include "journey/kernels/blocks/quantize.h"
#include "journey/model/model.h"
#include "journey/model/moe.h"
#include "journey/model/session.h"
#include "cli_run.h"
#include "log_softmax.h"

using namespace journey;

namespace {

using journey::test::dir_of;
using journey::test::gguf_of;

std::vector<TokenId> ids_of(const std::string& family, const char* name) {
    const auto expect = nlohmann::json::parse(std::ifstream(dir_of(family) + "/expect.json"));
    for (const auto& cs : expect["cases"])
        if (cs["name"] == name) return cs["ids"].get<std::vector<TokenId>>();
    return {};
}

// The F32 GGUF with its stacked expert matrices encoded as `type` (the other tensors as they
// are): every expert's rows whole blocks, so each expert is an offset into the 3-D tensor.
struct Quantized {
    std::vector<std::vector<std::byte>> owned;
    std::unique_ptr<Model> model;
};
Quantized with_experts_as(const std::string& family, DType type) {
    Quantized q;
    ModelFile f = read_gguf(gguf_of(family));
    for (auto& [name, t] : f.tensors) {
        if (name.find("_exps.weight") == std::string::npos) continue;
        REQUIRE(t.dtype == DType::F32);
        const int64_t cols = t.shape.back(), rows = t.shape[0] * t.shape[1];
        auto& bytes = q.owned.emplace_back(dtype_bytes(type, uint64_t(rows * cols)));
        const size_t row_bytes = dtype_bytes(type, uint64_t(cols));
        for (int64_t r = 0; r < rows; ++r)
            quantize_row(type, reinterpret_cast<const float*>(t.data) + r * cols, bytes.data() + size_t(r) * row_bytes, cols);
        t.dtype = type;
        t.data = bytes.data();
    }
    ModelConfig c = config_from_gguf(f);
    q.model = std::make_unique<Model>(std::move(f), c, nullptr);
    return q;
}

// The same experts' bytes decoded back to F32: what each expert slice should compute, up to x's rounding.
Quantized decoded(const Quantized& q, const std::string& family, DType type) {
    Quantized d;
    ModelFile f = read_gguf(gguf_of(family));
    size_t k = 0;
    for (auto& [name, t] : f.tensors) {
        if (name.find("_exps.weight") == std::string::npos) continue;
        const int64_t cols = t.shape.back(), rows = t.shape[0] * t.shape[1];
        auto& bytes = d.owned.emplace_back(size_t(rows * cols) * sizeof(float));
        const size_t row_bytes = dtype_bytes(type, uint64_t(cols));
        for (int64_t r = 0; r < rows; ++r)
            dequantize_row(type, q.owned[k].data() + size_t(r) * row_bytes, reinterpret_cast<float*>(bytes.data()) + r * cols, cols);
        ++k;
        t.data = bytes.data();
    }
    ModelConfig c = config_from_gguf(f);
    d.model = std::make_unique<Model>(std::move(f), c, nullptr);
    return d;
}

std::vector<float> prompt_logits(const Model& m, const std::vector<TokenId>& ids) {
    Session s(m);
    const auto all = s.eval(ids, LogitsFor::all);
    return {all.begin(), all.end()};
}

std::vector<float> step_logits(const Model& m, const std::vector<TokenId>& ids) {
    Session s(m);
    std::vector<float> out;
    for (const TokenId& id : ids) {
        const auto l = s.eval(std::span(&id, 1));
        out.insert(out.end(), l.begin(), l.end());
    }
    return out;
}

struct ThreadsBack {
    int n = num_threads();
    ~ThreadsBack() { set_num_threads(n); }
};

}  // namespace

TEST_CASE("moe: the routing rules of the families", "[moe]") {
    ModelConfig c;
    c.n_expert = 4;
    c.n_expert_used = 2;
    const float logits[4] = {1.0f, 3.0f, 2.0f, 3.0f};  // a tie: the lower id first
    int ids[2];
    float w[2];
    // softmax over all four, the two largest kept
    const double z = std::exp(1.0) + std::exp(3.0) + std::exp(2.0) + std::exp(3.0);
    c.moe_gating = MoeGating::softmax_topk;
    c.moe_norm_topk = false;
    moe_route(logits, c, ids, w);
    CHECK(ids[0] == 1);
    CHECK(ids[1] == 3);
    CHECK(w[0] == Approx(std::exp(3.0) / z).epsilon(1e-6));
    CHECK(w[1] == Approx(std::exp(3.0) / z).epsilon(1e-6));
    c.moe_norm_topk = true;  // renormalised: 1/2 each
    moe_route(logits, c, ids, w);
    CHECK(w[0] == Approx(0.5).epsilon(1e-6));
    CHECK(w[1] == Approx(0.5).epsilon(1e-6));
    // top-k of the logits, then a softmax over those: {3, 2} -> e / (e + 1), 1 / (e + 1)
    const float l2[4] = {1.0f, 3.0f, 2.0f, -5.0f};
    c.moe_gating = MoeGating::topk_softmax;
    moe_route(l2, c, ids, w);
    CHECK(ids[0] == 1);
    CHECK(ids[1] == 2);
    CHECK(w[0] == Approx(std::exp(1.0) / (std::exp(1.0) + 1)).epsilon(1e-6));
    CHECK(w[1] == Approx(1 / (std::exp(1.0) + 1)).epsilon(1e-6));
}

TEST_CASE("moe: thread counts give the same bits; prompt splits and the one-token path agree within float rounding",
          "[moe]") {
    ThreadsBack back;
    for (const char* family : {"qwen3moe", "gpt-oss"}) {
        for (const DType type : {DType::F32, DType::Q8_0, DType::Q4_0}) {
            INFO(family << " experts " << dtype_name(type));
            Quantized q;
            std::unique_ptr<Model> f32;
            const Model* m = nullptr;
            if (type == DType::F32) {
                f32 = Model::load(gguf_of(family), LoadOptions{.tokenizer = false});
                m = f32.get();
            } else {
                q = with_experts_as(family, type);
                m = q.model.get();
            }
            const std::vector<TokenId> ids = ids_of(family, "len200");
            REQUIRE(ids.size() == 200);
            const size_t V = size_t(m->config().n_vocab);
            set_num_threads(2);
            const std::vector<float> whole = prompt_logits(*m, ids);
            const std::vector<float> steps = step_logits(*m, ids);
            for (int t : {1, 3}) {  // the prompt's grouped products and the one-token ones: the same bits
                set_num_threads(t);
                CHECK(prompt_logits(*m, ids) == whole);
                CHECK(step_logits(*m, ids) == steps);
            }
            set_num_threads(2);
            // The prompt in three pieces: its last token within float rounding of the whole (the
            // attention's products block their sums by the prompt's length, as for dense models).
            Session s(*m);
            s.eval(std::span(ids.data(), 37));
            s.eval(std::span(ids.data() + 37, 100));
            const auto last = s.eval(std::span(ids.data() + 137, 63));
            float split = 0;
            for (size_t v = 0; v < V; ++v) split = std::max(split, std::abs(last[v] - whole[whole.size() - V + v]));
            CHECK(split < 1e-4f);
            // Token by token: float experts within float rounding of the prompt. Quantized experts
            // take the same integer dots in both (checked per layer below); the other products
            // (attention's) differ by float rounding, which this random model amplifies.
            if (type == DType::F32) {
                float worst = 0;
                for (size_t i = 0; i < steps.size(); ++i) worst = std::max(worst, std::abs(steps[i] - whole[i]));
                CHECK(worst < 1e-4f);
            }
        }
    }
}

TEST_CASE("moe: experts as slices of quantized stacked tensors", "[moe]") {
    for (const char* family : {"qwen3moe", "gpt-oss"}) {
        for (const DType type : {DType::Q8_0, DType::Q4_0}) {
            INFO(family << " experts " << dtype_name(type));
            Quantized q = with_experts_as(family, type);
            Quantized d = decoded(q, family, type);
            const ModelConfig& c = q.model->config();
            const int C = c.n_embd, T = 20;
            std::vector<float> x(size_t(T) * size_t(C)), whole(x.size()), one(static_cast<size_t>(C)), ref(static_cast<size_t>(C));
            for (int l = 0; l < c.n_layer; ++l) {
                for (int r = 0; r < T; ++r)
                    for (int i = 0; i < C; ++i) x[size_t(r * C + i)] = float(std::sin(0.37 * double(i + 1) * (r + 1) + l));
                const LayerWeights& w = q.model->weights().layers[size_t(l)];
                // A prompt's grouped expert products: each row the bits of that token alone
                // (through the prompt's kernels: the float router's sums are gemm's).
                moe_ffn(whole.data(), x.data(), w, c, T, true);
                for (int r = 0; r < T; ++r) {
                    INFO("layer " << l << " row " << r);
                    moe_ffn(one.data(), x.data() + r * C, w, c, 1, true);
                    CHECK(std::memcmp(one.data(), whole.data() + r * C, sizeof(float) * size_t(C)) == 0);
                    // Each chosen expert's slice, against the same experts decoded to F32: only x's
                    // Q8 rounding apart (a wrong slice: order 1).
                    moe_ffn(ref.data(), x.data() + r * C, d.model->weights().layers[size_t(l)], c, 1, true);
                    double num = 0, den = 0;
                    for (int i = 0; i < C; ++i) num += (one[size_t(i)] - ref[size_t(i)]) * (one[size_t(i)] - ref[size_t(i)]), den += ref[size_t(i)] * ref[size_t(i)];
                    CHECK(std::sqrt(num / den) < 2e-2);
                }
            }
        }
    }
}

TEST_CASE("moe: what journey does not run is refused by name", "[moe]") {
    const auto base = nlohmann::json::parse(std::ifstream(dir_of("qwen3moe") + "/hf/config.json"));
    auto refused = [](nlohmann::json j, const char* key, nlohmann::json v, const char* says) {
        j[key] = v;
        INFO(key);
        CHECK_THROWS_WITH(config_from_hf(j, "config.json"), Catch::Contains(says));
    };
    refused(base, "mlp_only_layers", {0}, "mlp_only_layers");
    refused(base, "decoder_sparse_step", 2, "decoder_sparse_step");
    refused(base, "num_experts_per_tok", 9, "experts used per token");
    const auto oss = nlohmann::json::parse(std::ifstream(dir_of("gpt-oss") + "/hf/config.json"));
    // MXFP4 experts are read (the checkpoint's *_blocks / *_scales); any other method is refused by name.
    auto mx = oss;
    mx["quantization_config"] = {{"quant_method", "mxfp4"}};
    CHECK_NOTHROW(config_from_hf(mx, "config.json"));
    refused(oss, "quantization_config", {{"quant_method", "gptq"}}, "quant_method 'gptq'");
    refused(base, "quantization_config", {{"quant_method", "mxfp4"}}, "quant_method 'mxfp4' is not supported for");
    refused(oss, "experts_per_token", 3, "experts_per_token");
    // norm_topk_prob false is a different model, and runs as one.
    auto j = base;
    j["norm_topk_prob"] = false;
    CHECK_FALSE(config_from_hf(j, "config.json").moe_norm_topk);
    CHECK(config_from_hf(base, "config.json").moe_norm_topk);
    // A GGUF without its expert counts.
    ModelFile f = read_gguf(gguf_of("qwen3moe"));
    f.metadata.erase("qwen3moe.expert_used_count");
    CHECK_THROWS_WITH(config_from_gguf(f), Catch::Contains("expert_used_count"));
}


TEST_CASE("moe: journey info shows the experts, those a token uses and its active parameters", "[moe][info]") {
    using namespace journey::test;
    const RunResult r = run_journey({"info", "-m", gguf_of("qwen3moe"), "--json"});
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["n_expert"] == 8);
    CHECK(j["n_expert_used"] == 2);
    CHECK(j["n_ff_exp"] == 64);
    CHECK(j["moe_routing"] == "softmax, then top-2 renormalised");
    // 2 layers of 8 experts x (gate + up + down) 3 x 128 x 64: 6 of 8 unused per token.
    CHECK(j["n_active_params"].get<int64_t>() == j["n_params"].get<int64_t>() - 2 * 6 * 3 * 128 * 64);
    const RunResult t = run_journey({"info", "-m", gguf_of("gpt-oss")});
    REQUIRE(t.exit_code == 0);
    CHECK_THAT(t.out, Catch::Contains("8 per layer, 2 per token (width 96; routing: top-2 logits, then softmax)"));
    CHECK_THAT(t.out, Catch::Contains("per token"));
}

TEST_CASE("moe: Mixtral's GGUF is llama with experts; OLMoE's norms span the projection; keys not run are refused", "[moe]") {
    namespace fs = std::filesystem;
    // llama.cpp's llama architecture with expert_count > 0 is Mixtral's row: renormalised top-k.
    const auto mixtral = Model::load(gguf_of("mixtral"), LoadOptions{.tokenizer = false});
    CHECK(mixtral->config().arch == Arch::mixtral);
    CHECK(mixtral->config().n_expert == 8);
    CHECK(mixtral->config().n_ff_exp == mixtral->config().n_ff);
    CHECK(mixtral->config().moe_norm_topk);
    const auto dense = Model::load(dir_of("mistral") + "/mistral-F32.gguf", LoadOptions{.tokenizer = false});
    CHECK(dense->config().arch == Arch::llama);
    // OLMoE: q/k norms as wide as the projections, top-k weights kept as the softmax gave them.
    const auto olmoe = Model::load(dir_of("olmoe") + "/hf", LoadOptions{.tokenizer = false});
    const ModelConfig& c = olmoe->config();
    CHECK_FALSE(c.moe_norm_topk);
    CHECK(olmoe->weights().layers[0].attn_q_norm.n == int64_t{c.n_head} * c.head_dim);
    CHECK(olmoe->weights().layers[0].attn_k_norm.n == int64_t{c.n_kv_head} * c.head_dim);
    // clip_qkv (transformers clamps q, k, v) is not run: refused by name.
    const fs::path dir = fs::temp_directory_path() / "journey-moe-olmoe-clip" / "hf";
    fs::create_directories(dir);
    for (const auto& e : fs::directory_iterator(dir_of("olmoe") + "/hf"))
        fs::copy_file(e.path(), dir / e.path().filename(), fs::copy_options::overwrite_existing);
    auto config = nlohmann::json::parse(std::ifstream(dir / "config.json"));
    config["clip_qkv"] = 8.0;
    std::ofstream(dir / "config.json") << config.dump();
    CHECK_THROWS_WITH(Model::load(dir, LoadOptions{.tokenizer = false}), Catch::Contains("\"clip_qkv\""));
    fs::remove_all(dir.parent_path());
}
