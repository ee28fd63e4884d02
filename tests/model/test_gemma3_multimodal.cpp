// Gemma 3's multimodal checkpoints (google/gemma-3-4b-it, 12b-it, 27b-it: model_type "gemma3",
// Gemma3ForConditionalGeneration) run as their text model. The stand-in is made here, at test
// time, from the text stand-in tests/data/models/gemma3 (tests/data/README.md): the same tensor
// bytes under the multimodal names (transformers 4.50's language_model.model.*, or later
// versions' model.language_model.*), its config.json keys nested under text_config with the keys
// google/gemma-3-4b-it leaves to Gemma3TextConfig's defaults omitted, and four tiny vision tower /
// projector tensors. Expected: llama.cpp's reference of the text stand-in (expect.json, same
// tolerance as the families test) and journey's own output on the text directory, bit for bit.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "log_softmax.h"
#include "cli_run.h"
#include "files.h"
#include "journey/errors.h"
#include "journey/model/config.h"
#include "journey/model/model.h"
#include "journey/model/session.h"

using namespace journey;
using namespace journey::test;
using nlohmann::json;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

std::string g3() { return std::string(JOURNEY_TEST_DATA) + "/models/gemma3"; }

// A safetensors file's header and data region.
struct St {
    json header;
    std::string data;
};

St read_st(const fs::path& p) {
    const std::string b = slurp(p);
    uint64_t n = 0;
    std::memcpy(&n, b.data(), 8);
    return {json::parse(b.substr(8, n)), b.substr(8 + n)};
}

void write_st(const fs::path& p, const St& st) {
    std::string h = st.header.dump();
    h.append((8 - h.size() % 8) % 8, ' ');  // the data region stays 8-byte aligned
    const uint64_t n = h.size();
    std::ofstream out(p, std::ios::binary);
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << h << st.data;
}

// Appends an F32 tensor of `shape` (values 0.01 i) to st.
void add_f32(St& st, const std::string& name, const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const size_t begin = st.data.size();
    for (int64_t i = 0; i < n; ++i) {
        const float v = 0.01f * float(i);
        st.data.append(reinterpret_cast<const char*>(&v), 4);
    }
    st.header[name] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {begin, st.data.size()}}};
}

// The text config's keys as google/gemma-3-4b-it's text_config keeps them: the others are
// Gemma3TextConfig's defaults there (and equal to them in the stand-in, which shrinks only these).
const char* const kept_text_keys[] = {"hidden_size", "intermediate_size", "model_type", "num_hidden_layers", "rope_scaling",
                                      "sliding_window", "num_attention_heads", "num_key_value_heads", "head_dim",
                                      "query_pre_attn_scalar", "vocab_size"};

struct Made {
    fs::path dir;
    ~Made() { fs::remove_all(dir); }
};

// The multimodal stand-in in a fresh directory; `layout` "4.50" or "5" chooses the tensor names;
// edit() may change its config.json and header before they are written.
std::unique_ptr<Made> make_multimodal(const std::string& layout, const std::function<void(json&, St&)>& edit = {}) {
    static int serial = 0;
    auto m = std::make_unique<Made>();
    m->dir = fs::temp_directory_path() / ("journey-gemma3mm-" + std::to_string(::getpid()) + "-" + std::to_string(serial++));
    fs::create_directories(m->dir);

    const json text = json::parse(std::ifstream(g3() + "/hf/config.json"));
    json tc = json::object();
    for (const char* k : kept_text_keys) tc[k] = text.at(k);
    json cfg = {{"architectures", {"Gemma3ForConditionalGeneration"}},
                {"boi_token_index", 255999},
                {"eoi_token_index", 256000},
                {"eos_token_id", {1, 106}},
                {"image_token_index", 262144},
                {"initializer_range", 0.02},
                {"mm_tokens_per_image", 256},
                {"model_type", "gemma3"},
                {"text_config", tc},
                {"torch_dtype", "bfloat16"},
                {"transformers_version", "4.50.0.dev0"},
                {"vision_config",
                 {{"hidden_size", 4}, {"image_size", 8}, {"intermediate_size", 8}, {"model_type", "siglip_vision_model"},
                  {"num_attention_heads", 1}, {"num_hidden_layers", 1}, {"patch_size", 4}, {"vision_use_head", false}}}};

    const St src = read_st(g3() + "/hf/model.safetensors");
    St st{json::object(), src.data};
    const std::string text_prefix = layout == "4.50" ? "language_model.model." : "model.language_model.";
    const std::string outer = layout == "4.50" ? "" : "model.";
    for (auto it = src.header.begin(); it != src.header.end(); ++it) {
        if (it.key() == "__metadata__") continue;
        REQUIRE(it.key().starts_with("model."));
        st.header[text_prefix + it.key().substr(6)] = it.value();
    }
    add_f32(st, outer + "vision_tower.vision_model.embeddings.patch_embedding.weight", {4, 3, 4, 4});
    add_f32(st, outer + "vision_tower.vision_model.post_layernorm.weight", {4});
    add_f32(st, outer + "multi_modal_projector.mm_input_projection_weight", {4, 32});
    add_f32(st, outer + "multi_modal_projector.mm_soft_emb_norm.weight", {4});
    if (edit) edit(cfg, st);
    std::ofstream(m->dir / "config.json") << cfg.dump(2);
    write_st(m->dir / "model.safetensors", st);
    return m;
}

std::unique_ptr<Model> load(const fs::path& p) { return Model::load(p, LoadOptions{.tokenizer = false}); }

}  // namespace

TEST_CASE("gemma3 multimodal: the text model of a Gemma3ForConditionalGeneration directory is llama.cpp's and the text directory's",
          "[arch][families][gemma3]") {
    const json expect = json::parse(std::ifstream(g3() + "/expect.json"));
    auto text = load(g3() + "/hf");
    for (const char* layout : {"4.50", "5"}) {
        INFO("layout " << layout);
        auto made = make_multimodal(layout);
        auto mm = load(made->dir);
        CHECK(mm->config().hf_wrapper == "gemma3");
        CHECK(mm->weights().set_aside == 4);
        double worst = 0;
        for (const auto& cs : expect["cases"]) {
            INFO("case " << cs["name"].get<std::string>());
            const auto ids = cs["ids"].get<std::vector<TokenId>>();
            Session a(*mm), b(*text);
            const auto la = a.eval(ids);
            const std::vector<float> got(la.begin(), la.end());
            const auto lb = b.eval(ids);
            // The same weights and the same config: the same numbers, not merely close ones.
            CHECK(got == std::vector<float>(lb.begin(), lb.end()));
            const auto lp = test::log_softmax(got);
            for (const auto& e : cs["top20"]) {
                const double d = std::abs(lp[size_t(e["id"].get<int>())] - e["logprob"].get<double>());
                worst = std::max(worst, d);
                CHECK(d <= 1e-2);  // the families test's gemma3 tolerance (llama.cpp's F16 GELU table)
            }
            std::vector<size_t> order(lp.size());
            for (size_t i = 0; i < order.size(); ++i) order[i] = i;
            std::partial_sort(order.begin(), order.begin() + 20, order.end(), [&](size_t x, size_t y) { return lp[x] > lp[y]; });
            for (size_t r = 0; r < 20; ++r) {  // ours outside llama.cpp's top 20: only a near-tie with its 20th
                bool found = false;
                for (const auto& e : cs["top20"]) found = found || e["id"].get<size_t>() == order[r];
                if (!found) CHECK(std::abs(lp[order[r]] - cs["top20"].back()["logprob"].get<double>()) <= 1e-2);
            }
        }
        if (std::getenv("JOURNEY_TEST_REPORT"))
            std::fprintf(stderr, "gemma3 multimodal (%s names) worst top-20 |dlogprob| %.2e\n", layout, worst);
    }
}

TEST_CASE("gemma3 multimodal: text_config is read with Gemma3TextConfig's defaults, as google/gemma-3-4b-it needs",
          "[arch][gemma3]") {
    // google/gemma-3-4b-it's config.json (transformers 4.50; vision_config abridged): most text
    // keys are left to Gemma3TextConfig's defaults.
    const json j = json::parse(R"({
      "architectures": ["Gemma3ForConditionalGeneration"], "boi_token_index": 255999, "eoi_token_index": 256000,
      "eos_token_id": [1, 106], "image_token_index": 262144, "initializer_range": 0.02, "mm_tokens_per_image": 256,
      "model_type": "gemma3",
      "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text", "num_hidden_layers": 34,
                      "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "sliding_window": 1024},
      "torch_dtype": "bfloat16", "transformers_version": "4.50.0.dev0",
      "vision_config": {"hidden_size": 1152, "image_size": 896, "model_type": "siglip_vision_model", "patch_size": 14}})");
    const ModelConfig c = config_from_hf(j, "config.json");
    CHECK(c.arch == Arch::gemma3);
    CHECK(c.hf_wrapper == "gemma3");
    CHECK(c.n_embd == 2560);
    CHECK(c.n_layer == 34);
    CHECK(c.n_ff == 10240);
    // Gemma3TextConfig's defaults (not Llama's: kv heads = heads, head_dim = C/H, scale 1/sqrt(D))
    CHECK(c.n_vocab == 262208);
    CHECK(c.n_ctx == 131072);
    CHECK(c.n_head == 8);
    CHECK(c.n_kv_head == 4);
    CHECK(c.head_dim == 256);
    CHECK(c.attn_scale == Approx(1.0 / 16));
    CHECK(c.norm_eps == Approx(1e-6));
    CHECK(c.rope_theta == 1000000.0f);
    CHECK(c.rope_local_theta == 10000.0f);
    CHECK(c.rope_scaling == RopeScaling::linear);
    CHECK(c.rope_factor == 8.0f);
    CHECK(c.tied_output);
    CHECK(c.final_softcap == 0.0f);
    CHECK(c.sliding_window == 1024);
    for (int l = 0; l < 34; ++l) CHECK(c.window_of(l) == ((l + 1) % 6 != 0 ? 1024 : 0));

    // The text model ties by text_config's tie_word_embeddings (transformers: get_text_config()), not the top level's.
    json untied_top = j;
    untied_top["tie_word_embeddings"] = false;
    CHECK(config_from_hf(untied_top, "config.json").tied_output);
    untied_top["text_config"]["tie_word_embeddings"] = false;
    CHECK_FALSE(config_from_hf(untied_top, "config.json").tied_output);

    // The same defaults for the text model's own config.json (model_type gemma3_text).
    json t = j["text_config"];
    const ModelConfig ct = config_from_hf(t, "config.json");
    CHECK(ct.hf_wrapper.empty());
    CHECK((ct.n_head == 8 && ct.n_kv_head == 4 && ct.head_dim == 256 && ct.n_vocab == 262208));
    // A key given overrides its default (gemma-3-27b-it: query_pre_attn_scalar 168, head_dim 128).
    t["query_pre_attn_scalar"] = 168;
    t["head_dim"] = 128;
    const ModelConfig c27 = config_from_hf(t, "config.json");
    CHECK(c27.attn_scale == Approx(1.0 / std::sqrt(168.0)));
    CHECK(c27.head_dim == 128);
}

TEST_CASE("gemma3 multimodal refusals: config and tensors that are not the text model and its vision parts",
          "[arch][gemma3][refuse]") {
    auto refused_load = [](const std::unique_ptr<Made>& m, const std::string& needle) {
        CHECK_THROWS_WITH(load(m->dir), Contains(needle));
    };
    // No text_config: transformers would build its default 2304-wide text model; refused by name.
    refused_load(make_multimodal("4.50", [](json& c, St&) { c.erase("text_config"); }),
                 "model_type \"gemma3\" needs a \"text_config\" object");
    refused_load(make_multimodal("4.50", [](json& c, St&) { c["text_config"]["model_type"] = "gemma2"; }),
                 "text_config: model_type \"gemma2\" is not supported in a \"gemma3\" checkpoint");
    // A key the text model refuses is refused inside text_config, named with it.
    refused_load(make_multimodal("4.50", [](json& c, St&) { c["text_config"]["attn_logit_softcapping"] = 50.0; }),
                 "text_config: \"attn_logit_softcapping\" is not supported for gemma3");
    // A text_config missing hidden_size takes transformers' default (2304), which the weights contradict.
    refused_load(make_multimodal("4.50", [](json& c, St&) { c["text_config"].erase("hidden_size"); }),
                 "tensor 'language_model.model.embed_tokens.weight' has shape [640, 32], expected [640, 2304]");
    // An unknown tensor beside the text model, under its prefix or outside any known part.
    refused_load(make_multimodal("4.50", [](json&, St& st) { add_f32(st, "language_model.model.layers.0.self_attn.q_proj.bias", {32}); }),
                 "tensor 'language_model.model.layers.0.self_attn.q_proj.bias' is not part of the gemma3 architecture");
    refused_load(make_multimodal("5", [](json&, St& st) { add_f32(st, "model.audio_tower.conv.weight", {4}); }),
                 "tensor 'model.audio_tower.conv.weight' is not part of the gemma3 architecture");
    // The text-only names in a multimodal checkpoint are not its text model's (transformers would
    // not load them either).
    refused_load(make_multimodal("4.50", [](json&, St& st) { add_f32(st, "model.norm.weight", {32}); }),
                 "tensor 'model.norm.weight' is not part of the gemma3 architecture");
    // A text tensor missing: named as the text model's, with the checkpoint's prefixes said.
    refused_load(make_multimodal("5", [](json&, St& st) { st.header.erase("model.language_model.norm.weight"); }),
                 "tensor 'model.norm.weight' is missing (under a prefix of a gemma3 checkpoint)");
    // An untied text model needs its lm_head; the checkpoint's (4.50: language_model.lm_head) is read.
    refused_load(make_multimodal("4.50", [](json& c, St&) { c["text_config"]["tie_word_embeddings"] = false; }),
                 "'lm_head.weight' is missing");
    for (const char* lm_head : {"language_model.lm_head.weight", "lm_head.weight"}) {
        auto untied = make_multimodal("4.50", [&](json& c, St& st) {
            c["text_config"]["tie_word_embeddings"] = false;
            add_f32(st, lm_head, {640, 32});
        });
        auto m = load(untied->dir);
        CHECK(m->weights().output.data != m->weights().tok_embd.data);
        CHECK(m->weights().output.rows == 640);
    }
}

TEST_CASE("gemma3 multimodal: journey info says the vision tower is not used; journey convert refuses it by name, converts the text model",
          "[arch][gemma3][info]") {
    // The stand-in's vocabulary: the Gemma 2 fixture's tokenizer files (tests/data/convert/gemma2).
    auto made = make_multimodal("5");
    for (const auto& e : fs::directory_iterator(std::string(JOURNEY_TEST_DATA) + "/convert/gemma2"))
        fs::copy_file(e.path(), made->dir / e.path().filename());
    RunResult r = run_journey({"info", "-m", made->dir.string(), "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const json j = json::parse(r.out);
    CHECK(j["arch"] == "gemma3");
    CHECK(j["notes"].dump().find("vision tower and projector: 4 tensors not used; text only") != std::string::npos);
    // generation_config.json's end tokens (these files' are Gemma 2's), as for a text model
    CHECK(j["end_tokens"] == json::parse(std::ifstream(made->dir / "generation_config.json"))["eos_token_id"]);
    // The answer of journey next: the text stand-in's (the same directory's tokenizer files).
    const std::string ids = "2,10,20,30,40";
    r = run_journey({"next", "-m", made->dir.string(), "--ids", ids, "--json", "-t", "1"});
    REQUIRE(r.exit_code == 0);
    const RunResult t = run_journey({"next", "-m", g3() + "/gemma3-F32.gguf", "--ids", ids, "--json", "-t", "1"});
    REQUIRE(t.exit_code == 0);
    CHECK(json::parse(r.out)["top"][0]["id"] == json::parse(t.out)["top"][0]["id"]);

    // journey convert refuses the multimodal checkpoint by name, no file; its text model converts
    // (issue 36; tests/model/test_dense_2025.cpp compares that file with llama.cpp's converter).
    const fs::path out = made->dir / "out.gguf";
    r = run_journey({"convert", "-m", made->dir.string(), "-o", out.string()});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("model_type 'gemma3' is not one journey converts"));
    CHECK_FALSE(fs::exists(out));
    json cfg = json::parse(std::ifstream(g3() + "/hf/config.json"));
    cfg.erase("rope_scaling");  // as google/gemma-3-1b-it
    std::ofstream(made->dir / "config.json") << cfg.dump();
    fs::copy_file(g3() + "/hf/model.safetensors", made->dir / "model.safetensors", fs::copy_options::overwrite_existing);
    r = run_journey({"convert", "-m", made->dir.string(), "-o", out.string(), "--type", "f32"});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    r = run_journey({"next", "-m", out.string(), "--ids", ids, "--json", "-t", "1"});
    REQUIRE(r.exit_code == 0);
    const RunResult d = run_journey({"next", "-m", made->dir.string(), "--ids", ids, "--json", "-t", "1"});
    REQUIRE(d.exit_code == 0);
    CHECK(json::parse(r.out)["top"][0]["id"] == json::parse(d.out)["top"][0]["id"]);
}
