// Never a silent wrong answer: every config.json key, GGUF key and tensor that would change the
// math and that journey does not implement is refused by name (ModelError, exit 2), one test
// per refusal; and the ones it implements are read (rope scaling, sliding windows, soft-caps).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "journey/errors.h"
#include "journey/formats/gguf_reader.h"
#include "journey/formats/safetensors_reader.h"
#include "journey/model/config.h"
#include "journey/model/rope_freq.h"
#include "journey/model/weights.h"

using namespace journey;
using namespace journey::test;
using Catch::Matchers::Contains;

namespace {

nlohmann::json hf_config(const std::string& f) { return nlohmann::json::parse(std::ifstream(dir_of(f) + "/hf/config.json")); }

void refused(const nlohmann::json& j, const std::string& needle) {
    CHECK_THROWS_WITH(config_from_hf(j, "config.json"), Contains(needle));
}

void refused(const ModelFile& f, const std::string& needle) {
    CHECK_THROWS_WITH(config_from_gguf(f), Contains(needle));
}

ModelFile fixture_gguf(const std::string& f) { return read_gguf(dir_of(f) + "/" + f + "-F32.gguf"); }

}  // namespace

TEST_CASE("arch refusals: rope_scaling types not implemented, or unknown, are named", "[arch][refuse]") {
    auto j = hf_config("llama3");
    // yarn's keys: an unknown one is refused; truncate false (transformers' unrounded band, as
    // gpt-oss's checkpoints ask) is honoured: the band's ends stay fractional.
    j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}, {"wobble", 1.0}};
    refused(j, "\"wobble\" of rope type yarn is not supported");
    j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}, {"truncate", false}, {"original_max_position_embeddings", 64}};
    {
        const ModelConfig c = config_from_hf(j, "config.json");
        CHECK_FALSE(c.rope_yarn_truncate);
        // transformers' _compute_yarn_parameters with truncate=False, in double
        const int D = c.rot_dims();
        const double base = c.rope_theta, pi = 3.14159265358979323846;
        auto corr = [&](double rot) { return D * std::log(64.0 / (rot * 2 * pi)) / (2 * std::log(base)); };
        const double low = std::max(0.0, corr(32.0)), high = std::min(double(D - 1), corr(1.0));
        const std::vector<float> f = rope_inv_freq(c, {});
        for (int i = 0; i < D / 2; ++i) {
            const double inv = 1.0 / std::pow(base, 2.0 * i / D);
            const double ramp = std::clamp((i - low) / (high - low), 0.0, 1.0);
            const double want = inv / 4.0 * ramp + inv * (1 - ramp);
            CHECK(f[size_t(i)] == Approx(want).epsilon(1e-6));
        }
    }
    j["rope_scaling"] = {{"rope_type", "longrope"}, {"long_factor", {1.0}}};
    refused(j, "\"short_factor\" must be a list of numbers");
    j["rope_scaling"] = {{"rope_type", "longrope"}, {"long_factor", {1.0, 2.0}}, {"short_factor", {1.0, 2.0}}};
    refused(j, "longrope long_factor and short_factor must hold 16 values each");
    j["rope_scaling"] = {{"type", "wobbly"}, {"factor", 2.0}};
    refused(j, "unknown rope type \"wobbly\"");
    j["rope_scaling"] = {{"rope_type", "linear"}};
    refused(j, "\"factor\"");
    // dynamic NTK rescales only beyond max_position_embeddings, which a session never reaches.
    j["rope_scaling"] = {{"rope_type", "dynamic"}, {"factor", 2.0}};
    const ModelConfig d = config_from_hf(j, "config.json");
    CHECK(d.rope_scaling == RopeScaling::dynamic);
    ModelConfig plain = d;
    plain.rope_scaling = RopeScaling::none;
    CHECK(rope_inv_freq(d, {}) == rope_inv_freq(plain, {}));
    j["rope_scaling"] = {{"rope_type", "dynamic"}, {"factor", 2.0}, {"original_max_position_embeddings", 4096}};
    refused(j, "dynamic with original_max_position_embeddings");
}

TEST_CASE("arch: rope_scaling linear and llama3, and transformers-5 rope_parameters, are read", "[arch][rope]") {
    auto j = hf_config("llama3");
    ModelConfig c = config_from_hf(j, "config.json");
    CHECK(c.rope_scaling == RopeScaling::llama3);
    CHECK(c.rope_factor == 32.0f);
    CHECK(c.rope_original_ctx == 8192);
    CHECK(c.rope_theta == 500000.0f);

    j["rope_scaling"] = {{"type", "linear"}, {"factor", 4.0}};
    c = config_from_hf(j, "config.json");
    CHECK(c.rope_scaling == RopeScaling::linear);
    // Linear scaling divides every frequency by the factor (HF: position_ids / factor).
    const auto scaled = rope_inv_freq(c, {});
    c.rope_scaling = RopeScaling::none;
    const auto plain = rope_inv_freq(c, {});
    for (size_t i = 0; i < plain.size(); ++i) CHECK(scaled[i] == Approx(plain[i] / 4.0f).epsilon(1e-6));

    // transformers 5: rope_parameters carries rope_theta and the type; rope_theta at the top is gone.
    j.erase("rope_scaling");
    j.erase("rope_theta");
    j["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 123456.0}};
    c = config_from_hf(j, "config.json");
    CHECK(c.rope_theta == 123456.0f);
    CHECK(c.rope_scaling == RopeScaling::none);
    j["rope_parameters"] = {{"rope_type", "yarn"}, {"rope_theta", 10000.0}, {"factor", 4.0}};
    c = config_from_hf(j, "config.json");
    CHECK(c.rope_scaling == RopeScaling::yarn);
    CHECK(c.rope_theta == 10000.0f);
    CHECK(c.rope_original_ctx == 131072);  // no original_max_position_embeddings: max_position_embeddings
    CHECK(c.rope_mscale == Approx(1.0 + 0.1 * std::log(4.0)));
    j["rope_parameters"] = {{"full_attention", {{"rope_type", "default"}}}};  // Gemma 3's per-layer-type form
    refused(j, "rope_parameters without a rope_type (per-layer-type rope parameters) is not supported for llama");
}

TEST_CASE("arch: llama3 frequencies from config.json equal the GGUF's rope_freqs.weight", "[arch][rope]") {
    // The converter precomputed llama.cpp's factors from the same rope_scaling: HF's formula
    // applied to the frequencies and llama.cpp's divisors must give the same table.
    const ModelConfig hf = config_from_hf(hf_config("llama3"), "config.json");
    const ModelFile f = fixture_gguf("llama3");
    const ModelConfig gc = config_from_gguf(f);
    const Weights w = Weights::bind(f, gc);
    REQUIRE(w.rope_freqs);
    const auto a = rope_inv_freq(hf, {});
    const auto b = rope_inv_freq(gc, std::span<const float>(w.rope_freqs.data, size_t(w.rope_freqs.n)));
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) CHECK(b[i] == Approx(a[i]).epsilon(1e-5));
}

TEST_CASE("arch refusals: config.json keys that change the math", "[arch][refuse]") {
    auto j = hf_config("qwen2");
    j["use_sliding_window"] = true;
    refused(j, "use_sliding_window");

    j = hf_config("llama3");
    j["attention_bias"] = true;
    refused(j, "\"attention_bias\": true is not supported for llama");
    j = hf_config("llama3");
    j["mlp_bias"] = true;
    refused(j, "\"mlp_bias\": true");
    j = hf_config("llama3");
    j["partial_rotary_factor"] = 0.5;
    refused(j, "partial_rotary_factor");
    j = hf_config("llama3");
    j["final_logit_softcapping"] = 30.0;
    refused(j, "\"final_logit_softcapping\" is not supported for llama");
    j = hf_config("llama3");
    j["hidden_act"] = "gelu";
    refused(j, "hidden_act \"gelu\" is not supported");
    j = hf_config("gemma2");
    j["hidden_activation"] = "gelu";
    refused(j, "hidden_activation \"gelu\"");
    j = hf_config("llama3");
    j["model_type"] = "falcon";
    refused(j, "model_type \"falcon\" is not supported");
}

TEST_CASE("arch: sliding windows and soft-caps are read, per layer", "[arch]") {
    const ModelConfig g = config_from_hf(hf_config("gemma2"), "config.json");
    CHECK(g.sliding_window == 64);
    CHECK(g.window_of(0) == 64);  // Gemma 2: even layers slide
    CHECK(g.window_of(1) == 0);
    CHECK(g.attn_softcap == 50.0f);
    CHECK(g.final_softcap == 30.0f);
    const ModelConfig gg = config_from_gguf(fixture_gguf("gemma2"));
    CHECK(gg.window_of(0) == 64);
    CHECK(gg.window_of(1) == 0);
    CHECK(gg.attn_softcap == 50.0f);

    // Keys a Gemma 2 config.json omits take Gemma2Config's defaults (soft-caps 50 and 30, window
    // 4096), as transformers runs it; an explicit null is none; query_pre_attn_scalar is required.
    auto j = hf_config("gemma2");
    j.erase("attn_logit_softcapping");
    j.erase("final_logit_softcapping");
    j.erase("sliding_window");
    const ModelConfig d = config_from_hf(j, "config.json");
    CHECK(d.attn_softcap == 50.0f);
    CHECK(d.final_softcap == 30.0f);
    CHECK(d.window_of(0) == 4096);
    j["attn_logit_softcapping"] = nullptr;
    CHECK(config_from_hf(j, "config.json").attn_softcap == 0.0f);
    j.erase("query_pre_attn_scalar");
    refused(j, "missing \"query_pre_attn_scalar\" (the attention scale of gemma2");
    j["query_pre_attn_scalar"] = 0;
    refused(j, "\"query_pre_attn_scalar\" must be a positive number");

    j = hf_config("gemma2");
    j["layer_types"] = {"full_attention", "sliding_attention"};
    const ModelConfig swapped = config_from_hf(j, "config.json");
    CHECK(swapped.window_of(0) == 0);
    CHECK(swapped.window_of(1) == 64);
    j["layer_types"] = {"full_attention", "chunked_attention"};
    refused(j, "unknown layer type \"chunked_attention\"");

    // Qwen2 writes a sliding_window it does not use (use_sliding_window false): no window.
    CHECK(config_from_hf(hf_config("qwen2"), "config.json").window_of(0) == 0);
    auto m = hf_config("mistral");
    m["sliding_window"] = 4096;  // Mistral v0.1: every layer
    CHECK(config_from_hf(m, "config.json").window_of(1) == 4096);
}

TEST_CASE("arch refusals: GGUF keys that change the math", "[arch][refuse]") {
    ModelFile f = fixture_gguf("llama3");
    f.metadata["llama.rope.scaling.type"] = "wobbly";
    f.metadata["llama.rope.scaling.factor"] = 4.0;
    refused(f, "'llama.rope.scaling.type' 'wobbly' is not implemented");
    f = fixture_gguf("llama3");
    f.metadata["llama.rope.scaling.type"] = "yarn";
    f.metadata["llama.rope.scaling.factor"] = 4.0;
    f.metadata["llama.rope.scaling.yarn_ext_factor"] = 0.5;
    refused(f, "'llama.rope.scaling.yarn_ext_factor' other than 1 is not supported");
    f = fixture_gguf("llama3");
    f.metadata["llama.rope.scaling.yarn_beta_fast"] = 16.0;
    refused(f, "'llama.rope.scaling.yarn_beta_fast' is given without rope.scaling.type yarn");
    f = fixture_gguf("llama3");
    f.metadata["llama.use_parallel_residual"] = true;
    refused(f, "'llama.use_parallel_residual' is not supported for llama");
    f = fixture_gguf("llama3");
    f.metadata["llama.rope.freq_base_swa"] = 10000.0;
    refused(f, "'llama.rope.freq_base_swa' is not supported for llama");
    f = fixture_gguf("gptneox");
    f.metadata.erase("gptneox.use_parallel_residual");
    refused(f, "'gptneox.use_parallel_residual' is missing");
    f = fixture_gguf("gemma3");
    f.metadata["gemma3.attn_logit_softcapping"] = 50.0;
    refused(f, "'gemma3.attn_logit_softcapping' is not supported for gemma3");

    f = fixture_gguf("llama3");
    f.metadata["llama.rope.scaling.type"] = "linear";
    f.metadata["llama.rope.scaling.factor"] = 4.0;
    CHECK(config_from_gguf(f).rope_scaling == RopeScaling::linear);
    CHECK(config_from_gguf(f).rope_factor == 4.0f);

    f = fixture_gguf("llama3");
    f.metadata["llama.rope.scaling.yarn_log_multiplier"] = 0.1;
    refused(f, "'llama.rope.scaling.yarn_log_multiplier' is not supported");
    f = fixture_gguf("llama3");
    // llama with experts is Mixtral's row (llama.cpp's llama, expert_count > 0): a dense file
    // given an expert count is read as Mixtral and refused for what it then lacks.
    f.metadata["llama.expert_count"] = 8;
    refused(f, "'llama.expert_used_count' is missing");
    f = fixture_gguf("llama3");
    f.metadata["llama.attention.value_length"] = 16;
    refused(f, "'llama.attention.value_length' differs");
    f = fixture_gguf("llama3");
    f.metadata["llama.rope.dimension_count"] = 16;
    refused(f, "partial rotary");
    f = fixture_gguf("llama3");
    f.metadata["llama.attn_logit_softcapping"] = 50.0;
    refused(f, "'llama.attn_logit_softcapping' is not supported for llama");
    f = fixture_gguf("llama3");
    f.metadata["llama.attention.sliding_window"] = 4096;
    refused(f, "'llama.attention.sliding_window' is not supported for llama");
    f = fixture_gguf("gemma2");
    f.metadata["general.architecture"] = "gemma3n";
    refused(f, "architecture 'gemma3n' is not supported");
}

TEST_CASE("arch: key_length != C/H is honoured as the head width", "[arch]") {
    const ModelConfig q = config_from_gguf(fixture_gguf("qwen3"));
    CHECK(q.head_dim == 64);
    CHECK(q.n_head * q.head_dim != q.n_embd);
    CHECK(config_from_gguf(fixture_gguf("gemma2")).head_dim == 48);
}

TEST_CASE("arch refusals: a tensor the architecture does not name", "[arch][refuse]") {
    ModelFile f = read_safetensors(dir_of("llama3") + "/hf/model.safetensors");
    const ModelConfig c = config_from_hf(hf_config("llama3"), "config.json");
    CHECK_NOTHROW(Weights::bind(f, c));
    // A bias Llama does not have: binding would ignore it, so the file is refused by its name.
    TensorInfo bias = f.tensors.at("model.layers.0.self_attn.o_proj.weight");
    bias.name = "model.layers.0.self_attn.o_proj.bias";
    bias.shape = {c.n_embd};
    f.tensors[bias.name] = bias;
    CHECK_THROWS_WITH(Weights::bind(f, c), Contains("'model.layers.0.self_attn.o_proj.bias' is not part of the llama architecture"));

    // Longrope factors on a family without them; on Phi-3 (whose converter writes no
    // rope.scaling.type) one factor tensor alone says longrope, and the other one is missing.
    ModelFile ll = fixture_gguf("llama3");
    TensorInfo factors = ll.tensors.at("rope_freqs.weight");
    factors.name = "rope_factors_long.weight";
    ll.tensors[factors.name] = factors;
    CHECK_THROWS_WITH(Weights::bind(ll, config_from_gguf(ll)), Contains("'rope_factors_long.weight' is given but the model's rope scaling is not longrope"));
    ModelFile g = fixture_gguf("phi3");
    TensorInfo longrope = g.tensors.at("output_norm.weight");
    longrope.name = "rope_factors_long.weight";
    longrope.shape = {16};
    g.tensors[longrope.name] = longrope;
    const ModelConfig pc = config_from_gguf(g);
    CHECK(pc.rope_scaling == RopeScaling::longrope);
    CHECK_THROWS_WITH(Weights::bind(g, pc), Contains("'rope_factors_short.weight' is missing"));

    // longrope needs both factor tensors.
    ModelFile p = fixture_gguf("phi35");
    const ModelConfig lc = config_from_gguf(p);
    CHECK(lc.rope_scaling == RopeScaling::longrope);
    p.tensors.erase("rope_factors_short.weight");
    CHECK_THROWS_WITH(Weights::bind(p, lc), Contains("'rope_factors_short.weight' is missing"));
}

TEST_CASE("arch refusals: the command line exits 2 with one line naming the key", "[arch][refuse][cli]") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "journey-arch-refusal";
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy_file(dir_of("llama3") + "/hf/model.safetensors", dir / "model.safetensors");
    auto j = hf_config("llama3");
    j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}, {"wobble", 1.0}};
    std::ofstream(dir / "config.json") << j.dump();
    const RunResult r = run_journey({"info", "-m", dir.string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("\"wobble\" of rope type yarn is not supported"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    fs::remove_all(dir);
}

TEST_CASE("arch: Gemma 3's layers, rope bases and scaling are read from config.json and GGUF alike", "[arch][gemma3]") {
    const ModelConfig h = config_from_hf(hf_config("gemma3"), "config.json");
    const ModelConfig g = config_from_gguf(fixture_gguf("gemma3"));
    for (const ModelConfig* c : {&h, &g}) {
        CHECK(c->arch == Arch::gemma3);
        CHECK(c->sliding_window == 48);
        for (int l = 0; l < 5; ++l) CHECK(c->window_of(l) == 48);  // pattern 6: every 6th layer is global
        CHECK(c->window_of(5) == 0);
        CHECK(c->rope_theta == 1000000.0f);
        CHECK(c->rope_local_theta == 10000.0f);
        CHECK(c->rope_scaling == RopeScaling::linear);
        CHECK(c->rope_factor == 8.0f);
        CHECK(c->attn_scale == Approx(1.0 / std::sqrt(16.0)));
        CHECK(c->embed_scale == Approx(std::sqrt(32.0)));
    }
    // The local layers' frequencies: their own base, unscaled; the global ones: theta, / factor.
    const auto local = rope_inv_freq(h, {}, true), global = rope_inv_freq(h, {});
    CHECK(local[1] == Approx(1.0 / std::pow(10000.0, 2.0 / 16)).epsilon(1e-6));
    CHECK(global[1] == Approx(1.0 / std::pow(1e6, 2.0 / 16) / 8).epsilon(1e-6));

    // transformers 5: one rope object per layer type.
    auto j = hf_config("gemma3");
    j.erase("rope_scaling");
    j.erase("rope_theta");
    j.erase("rope_local_base_freq");
    j["rope_parameters"] = {{"full_attention", {{"rope_type", "linear"}, {"factor", 8.0}, {"rope_theta", 1000000.0}}},
                            {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 10000.0}}}};
    const ModelConfig t5 = config_from_hf(j, "config.json");
    CHECK(t5.rope_scaling == RopeScaling::linear);
    CHECK(t5.rope_theta == 1000000.0f);
    CHECK(t5.rope_local_theta == 10000.0f);
    j["rope_parameters"]["sliding_attention"] = {{"rope_type", "linear"}, {"factor", 2.0}};
    refused(j, "rope scaling on sliding layers is not supported");

    j = hf_config("gemma3");
    j["layer_types"] = {"sliding_attention", "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention"};
    CHECK(config_from_hf(j, "config.json").window_of(1) == 0);
    CHECK(config_from_hf(j, "config.json").window_of(2) == 48);
}

TEST_CASE("arch refusals: Gemma 3 keys journey does not implement", "[arch][gemma3][refuse]") {
    auto j = hf_config("gemma3");
    j["attn_logit_softcapping"] = 50.0;
    refused(j, "\"attn_logit_softcapping\" is not supported for gemma3");
    j = hf_config("gemma3");
    j["model_type"] = "gemma3";  // the multimodal checkpoint keeps the text keys in text_config
    refused(j, "model_type \"gemma3\" needs a \"text_config\" object");
    j = hf_config("llama3");
    j["rope_local_base_freq"] = 10000.0;
    refused(j, "\"rope_local_base_freq\" is not supported for llama");
    j = hf_config("gemma3");
    j["use_bidirectional_attention"] = true;
    refused(j, "\"use_bidirectional_attention\": true is not supported for gemma3");
    j = hf_config("gemma3");
    j["hidden_activation"] = "silu";
    refused(j, "hidden_activation \"silu\" is not supported for gemma3");
}

TEST_CASE("arch: GPT-NeoX's partial rotary, parallel residual and fused per-head qkv are read", "[arch][gptneox]") {
    const ModelConfig h = config_from_hf(hf_config("gptneox"), "config.json");
    const ModelConfig g = config_from_gguf(fixture_gguf("gptneox"));
    for (const ModelConfig* c : {&h, &g}) {
        CHECK(c->arch == Arch::gptneox);
        CHECK(c->n_rot == 2);  // rotary_pct 0.25 of head_dim 8
        CHECK(c->head_dim == 8);
        CHECK(c->parallel_residual);
        CHECK(c->rope_pairing == RopePairing::half);
        CHECK(c->norm == NormKind::layernorm);
        CHECK(c->activation == ActivationKind::gelu_erf);
        CHECK_FALSE(c->tied_output);
    }
    CHECK(h.qkv_per_head);  // the HF checkpoint's layout; the converter de-interleaves it for GGUF
    CHECK_FALSE(g.qkv_per_head);
    auto j = hf_config("gptneox");
    j["use_parallel_residual"] = false;
    CHECK_FALSE(config_from_hf(j, "config.json").parallel_residual);
    // transformers 5: rotary_pct as rope_parameters' partial_rotary_factor.
    j = hf_config("gptneox");
    j.erase("rotary_pct");
    j.erase("rotary_emb_base");
    j["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 10000.0}, {"partial_rotary_factor", 0.5}};
    CHECK(config_from_hf(j, "config.json").n_rot == 4);
    j = hf_config("llama3");
    j["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 10000.0}, {"partial_rotary_factor", 0.5}};
    refused(j, "\"partial_rotary_factor\" of rope type default is not supported");
}

TEST_CASE("arch refusals: GPT-NeoX keys journey does not implement", "[arch][gptneox][refuse]") {
    auto j = hf_config("gptneox");
    j["hidden_act"] = "gelu_new";
    refused(j, "hidden_act \"gelu_new\" is not supported for gptneox");
    j = hf_config("gptneox");
    j["rotary_pct"] = 0.125;  // one dimension of 8: no pair to rotate
    refused(j, "rotary_pct gives 1 rotary dimensions");
    j = hf_config("gptneox");
    j["attention_bias"] = false;
    refused(j, "\"attention_bias\": false is not supported for gptneox");
    j = hf_config("gptneox");
    j["sliding_window"] = 128;
    refused(j, "\"sliding_window\" is not supported for gptneox");
    ModelFile f = fixture_gguf("gptneox");
    f.metadata["gptneox.rope.dimension_count"] = 3;
    refused(f, "partial rotary embedding is not supported");
}

TEST_CASE("arch: yarn and longrope from config.json equal their GGUF keys and tensors", "[arch][rope]") {
    // yarn: the same frequencies and attention factor from both files.
    const auto yj = nlohmann::json::parse(std::ifstream(dir_of("rope-llama") + "/config-yarn.json"));
    const ModelConfig yh = config_from_hf(yj, "config.json");
    const ModelConfig yg = config_from_gguf(read_gguf(dir_of("rope-llama") + "/rope-llama-yarn-F32.gguf"));
    CHECK(yh.rope_scaling == RopeScaling::yarn);
    CHECK(yg.rope_scaling == RopeScaling::yarn);
    CHECK(yh.rope_mscale == Approx(yg.rope_mscale));
    CHECK(yh.rope_mscale == Approx(1.0 + 0.1 * std::log(4.0)));
    CHECK(yh.rope_original_ctx == 8192);
    CHECK(yg.rope_original_ctx == 8192);
    const auto a = rope_inv_freq(yh, {}), b = rope_inv_freq(yg, {});
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).epsilon(1e-6));
    // The first pairs keep their frequency, the last ones are divided by the factor.
    ModelConfig plain = yh;
    plain.rope_scaling = RopeScaling::none;
    const auto p = rope_inv_freq(plain, {});
    CHECK(a.front() == p.front());
    CHECK(a.back() == Approx(p.back() / 4).epsilon(1e-6));

    // longrope: the HF factors are the GGUF tensors, and the attention factor is the converter's.
    const ModelConfig lh = config_from_hf(hf_config("phi35"), "config.json");
    ModelFile lf = fixture_gguf("phi35");
    const ModelConfig lg = config_from_gguf(lf);
    CHECK(lg.rope_scaling == RopeScaling::longrope);  // from the factor tensors, as the converter writes no type
    lf.metadata["phi3.rope.scaling.type"] = "longrope";
    CHECK(config_from_gguf(lf).rope_scaling == RopeScaling::longrope);
    CHECK(lh.rope_scaling == RopeScaling::longrope);
    CHECK(lh.rope_original_ctx == 512);
    CHECK(lg.rope_original_ctx == 512);
    CHECK(lh.rope_mscale == Approx(lg.rope_mscale).epsilon(1e-6));
    CHECK(lh.rope_mscale == Approx(std::sqrt(1 + std::log(32.0) / std::log(512.0))));
    const Weights w = Weights::bind(lf, lg);
    REQUIRE(w.rope_long.n == int64_t(lh.rope_long_factors.size()));
    for (size_t i = 0; i < lh.rope_long_factors.size(); ++i) {
        CHECK(w.rope_long.data[i] == lh.rope_long_factors[i]);
        CHECK(w.rope_short.data[i] == lh.rope_short_factors[i]);
    }
}
