// Never a silent wrong answer: every config.json key, GGUF key and tensor that would change the
// math and that journey does not implement is refused by name (ModelError, exit 2), one test
// per refusal; and the ones it implements are read (rope scaling, sliding windows, soft-caps).
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

std::string family(const std::string& f) { return std::string(JOURNEY_TEST_DATA) + "/models/" + f; }

nlohmann::json hf_config(const std::string& f) { return nlohmann::json::parse(std::ifstream(family(f) + "/hf/config.json")); }

void refused(const nlohmann::json& j, const std::string& needle) {
    CHECK_THROWS_WITH(config_from_hf(j, "config.json"), Contains(needle));
}

void refused(const ModelFile& f, const std::string& needle) {
    CHECK_THROWS_WITH(config_from_gguf(f), Contains(needle));
}

ModelFile fixture_gguf(const std::string& f) { return read_gguf(family(f) + "/" + f + "-F32.gguf"); }

}  // namespace

TEST_CASE("arch refusals: rope_scaling types not implemented, or unknown, are named", "[arch][refuse]") {
    for (const char* type : {"yarn", "longrope"}) {
        auto j = hf_config("llama3");
        j["rope_scaling"] = {{"rope_type", type}, {"factor", 4.0}};
        refused(j, std::string("rope type \"") + type + "\" is not implemented");
    }
    auto j = hf_config("llama3");
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
    refused(j, "rope_parameters: rope type \"yarn\" is not implemented");
    j["rope_parameters"] = {{"full_attention", {{"rope_type", "default"}}}};  // Gemma 3's per-layer-type form
    refused(j, "rope_parameters without a rope_type");
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
    const auto b = rope_inv_freq(gc, w.rope_freqs);
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

    auto j = hf_config("gemma2");
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
    f.metadata["llama.rope.scaling.type"] = "yarn";
    f.metadata["llama.rope.scaling.factor"] = 4.0;
    refused(f, "'llama.rope.scaling.type' 'yarn' is not implemented");

    f = fixture_gguf("llama3");
    f.metadata["llama.rope.scaling.type"] = "linear";
    f.metadata["llama.rope.scaling.factor"] = 4.0;
    CHECK(config_from_gguf(f).rope_scaling == RopeScaling::linear);
    CHECK(config_from_gguf(f).rope_factor == 4.0f);

    f = fixture_gguf("llama3");
    f.metadata["llama.rope.scaling.yarn_log_multiplier"] = 0.1;
    refused(f, "'llama.rope.scaling.yarn_log_multiplier' is not supported");
    f = fixture_gguf("llama3");
    f.metadata["llama.expert_count"] = 8;
    refused(f, "'llama.expert_count' is not supported");
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
    f.metadata["general.architecture"] = "gemma3";
    refused(f, "architecture 'gemma3' is not supported");
}

TEST_CASE("arch: key_length != C/H is honoured as the head width", "[arch]") {
    const ModelConfig q = config_from_gguf(fixture_gguf("qwen3"));
    CHECK(q.head_dim == 64);
    CHECK(q.n_head * q.head_dim != q.n_embd);
    CHECK(config_from_gguf(fixture_gguf("gemma2")).head_dim == 48);
}

TEST_CASE("arch refusals: a tensor the architecture does not name", "[arch][refuse]") {
    ModelFile f = read_safetensors(family("llama3") + "/hf/model.safetensors");
    const ModelConfig c = config_from_hf(hf_config("llama3"), "config.json");
    CHECK_NOTHROW(Weights::bind(f, c));
    // A bias Llama does not have: binding would ignore it, so the file is refused by its name.
    TensorInfo bias = f.tensors.at("model.layers.0.self_attn.o_proj.weight");
    bias.name = "model.layers.0.self_attn.o_proj.bias";
    bias.shape = {c.n_embd};
    f.tensors[bias.name] = bias;
    CHECK_THROWS_WITH(Weights::bind(f, c), Contains("'model.layers.0.self_attn.o_proj.bias' is not part of the llama architecture"));

    ModelFile g = fixture_gguf("phi3");
    const ModelConfig pc = config_from_gguf(g);
    TensorInfo longrope = g.tensors.at("output_norm.weight");
    longrope.name = "rope_factors_long.weight";
    g.tensors[longrope.name] = longrope;
    CHECK_THROWS_WITH(Weights::bind(g, pc), Contains("'rope_factors_long.weight' is not part of the phi3 architecture"));
}

TEST_CASE("arch refusals: the command line exits 2 with one line naming the key", "[arch][refuse][cli]") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "journey-arch-refusal";
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy_file(family("llama3") + "/hf/model.safetensors", dir / "model.safetensors");
    auto j = hf_config("llama3");
    j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
    std::ofstream(dir / "config.json") << j.dump();
    const RunResult r = run_journey({"info", "-m", dir.string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("rope type \"yarn\" is not implemented"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    fs::remove_all(dir);
}
