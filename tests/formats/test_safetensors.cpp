// Malformed weights and configs must fail at load with ModelError naming the file and tensor.
#include <cstring>
#include <functional>

#include <catch2/catch.hpp>

#include "journey/errors.h"
#include "journey/model/model.h"
#include "journey/formats/safetensors_reader.h"
#include "journey/kernels/gemv.h"
#include "journey/model/session.h"
#include "safetensors_writer.h"

using namespace journey;
using namespace journey::test;
using Catch::Matchers::Contains;
using Approx = Catch::Detail::Approx;

namespace {

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const ModelError& e) {
        return e.what();
    }
    return "(no ModelError)";
}

std::vector<float> ramp(int64_t n, float scale = 1.0f / 64) {
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float((i * 7) % 13 - 6) * scale;  // exact in F16/BF16
    return v;
}

// A tiny GPT-2: C = 4, 2 heads, 1 layer, 8 positions, vocab 10.
nlohmann::json tiny_config() {
    return {{"model_type", "gpt2"}, {"vocab_size", 10}, {"n_positions", 8}, {"n_embd", 4},
            {"n_layer", 1},         {"n_head", 2},      {"n_inner", nullptr}, {"activation_function", "gelu_new"},
            {"layer_norm_epsilon", 1e-5}};
}

std::vector<FakeTensor> tiny_tensors() {
    const int64_t C = 4, F = 16, V = 10, N = 8;
    std::vector<FakeTensor> ts;
    auto add = [&](std::string name, std::vector<int64_t> shape) {
        int64_t n = 1;
        for (auto d : shape) n *= d;
        ts.push_back({name, "F32", shape, ramp(n), ""});
    };
    add("wte.weight", {V, C});
    add("wpe.weight", {N, C});
    add("h.0.ln_1.weight", {C});
    add("h.0.ln_1.bias", {C});
    add("h.0.attn.c_attn.weight", {C, 3 * C});
    add("h.0.attn.c_attn.bias", {3 * C});
    add("h.0.attn.c_proj.weight", {C, C});
    add("h.0.attn.c_proj.bias", {C});
    add("h.0.ln_2.weight", {C});
    add("h.0.ln_2.bias", {C});
    add("h.0.mlp.c_fc.weight", {C, F});
    add("h.0.mlp.c_fc.bias", {F});
    add("h.0.mlp.c_proj.weight", {F, C});
    add("h.0.mlp.c_proj.bias", {C});
    add("ln_f.weight", {C});
    add("ln_f.bias", {C});
    return ts;
}

void write_model(const TempDir& d, const std::vector<FakeTensor>& ts, const nlohmann::json& config = tiny_config()) {
    std::ofstream(d / "config.json") << config.dump();
    write_safetensors(d / "model.safetensors", ts);
}

std::string as_half(const std::vector<float>& v, bool bf16);

}  // namespace

TEST_CASE("safetensors: a well-formed file is read", "[safetensors]") {
    TempDir d;
    write_safetensors(d / "w.safetensors", {{"a", "F32", {2, 3}, ramp(6), ""}, {"b", "F32", {}, {1.5f}, ""}});
    ModelFile mf = read_safetensors(d / "w.safetensors");
    CHECK(mf.format == "safetensors");
    REQUIRE(mf.tensors.size() == 2);  // __metadata__ skipped
    const TensorInfo* a = mf.find("a");
    REQUIRE(a);
    CHECK(a->shape == std::vector<int64_t>{2, 3});
    CHECK(a->nbytes == 24);
    CHECK(reinterpret_cast<const float*>(a->data)[1] == ramp(6)[1]);
    CHECK(mf.find("b")->numel() == 1);
}

TEST_CASE("safetensors: broken files are rejected naming file and tensor", "[safetensors][errors]") {
    TempDir d;
    const auto file = d / "bad.safetensors";
    const std::string data = f32_bytes(ramp(4));
    auto header = [](const std::string& name, const std::string& dtype, std::vector<int64_t> shape, uint64_t b, uint64_t e) {
        nlohmann::json h;
        h[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {b, e}}};
        return h;
    };
    auto expect = [&](const std::string& what) {
        const std::string msg = message_of([&] { read_safetensors(file); });
        CHECK_THAT(msg, Contains(file.string()));
        CHECK_THAT(msg, Contains(what));
    };

    SECTION("too short") {
        std::ofstream(file) << "abc";
        expect("too short");
    }
    SECTION("header length beyond the file") {
        write_safetensors(file, header("t", "F32", {4}, 0, 16).dump(), data, 1u << 20);
        expect("beyond the end of the file");
    }
    SECTION("header is not JSON") {
        write_safetensors(file, "{this is not json", data);
        expect("header: invalid JSON");
    }
    SECTION("offsets past the data") {
        write_safetensors(file, header("t", "F32", {8}, 0, 32).dump(), data);
        expect("tensor 't'");
    }
    SECTION("offsets reversed") {
        write_safetensors(file, header("t", "F32", {0}, 8, 4).dump(), data);
        expect("outside the data section");
    }
    SECTION("dtype x shape does not match the byte span") {
        write_safetensors(file, header("t", "F32", {3}, 0, 16).dump(), data);
        expect("need 12");
    }
    SECTION("unknown dtype") {
        write_safetensors(file, header("t", "I64", {2}, 0, 16).dump(), data);
        expect("unsupported dtype 'I64'");
    }
    SECTION("overlapping tensors") {
        auto h = header("a", "F32", {3}, 0, 12);
        h["b"] = {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {8, 16}}};
        write_safetensors(file, h.dump(), data);
        expect("overlap");
    }
    SECTION("missing data_offsets") {
        nlohmann::json h;
        h["t"] = {{"dtype", "F32"}, {"shape", {4}}};
        write_safetensors(file, h.dump(), data);
        expect("tensor 't'");
    }
    SECTION("missing file") {
        expect("cannot open");
    }
}

TEST_CASE("safetensors: sharded checkpoints are read through the index", "[safetensors]") {
    TempDir d;
    write_safetensors(d / "model-00001-of-00002.safetensors", {{"a", "F32", {2}, {1, 2}, ""}});
    write_safetensors(d / "model-00002-of-00002.safetensors", {{"b", "F32", {1}, {3}, ""}});
    nlohmann::json idx = {{"metadata", {}},
                          {"weight_map", {{"a", "model-00001-of-00002.safetensors"}, {"b", "model-00002-of-00002.safetensors"}}}};
    std::ofstream(d / "model.safetensors.index.json") << idx.dump();
    ModelFile mf = read_safetensors(d / "model.safetensors.index.json");
    CHECK(mf.tensors.size() == 2);
    CHECK(mf.mappings.size() == 2);
    CHECK(reinterpret_cast<const float*>(mf.find("b")->data)[0] == 3.0f);

    idx["weight_map"]["c"] = "model-00002-of-00002.safetensors";
    std::ofstream(d / "model.safetensors.index.json") << idx.dump();
    CHECK_THAT(message_of([&] { read_safetensors(d / "model.safetensors.index.json"); }), Contains("tensor 'c'"));
}

TEST_CASE("model: tensors missing or misshapen against the config", "[model][errors]") {
    TempDir d;
    auto ts = tiny_tensors();
    SECTION("a well-formed tiny model loads and runs") {
        write_model(d, ts);
        auto m = Model::load(d.path, {.tokenizer = false});
        CHECK(m->config().n_ff == 16);
        Session s(*m);
        std::vector<TokenId> ids{1, 2, 3};
        CHECK(s.eval(ids).size() == 10);
    }
    SECTION("with the transformer. prefix and an ignored attn.bias") {
        for (auto& t : ts) t.name = "transformer." + t.name;
        ts.push_back({"transformer.h.0.attn.bias", "F32", {1, 1, 8, 8}, std::vector<float>(64, 1.0f), ""});
        write_model(d, ts);
        CHECK_NOTHROW(Model::load(d.path, {.tokenizer = false}));
    }
    SECTION("missing tensor") {
        ts.erase(ts.begin() + 6);  // h.0.attn.c_proj.weight
        write_model(d, ts);
        const std::string msg = message_of([&] { Model::load(d.path, {.tokenizer = false}); });
        CHECK_THAT(msg, Contains("h.0.attn.c_proj.weight") && Contains("missing") && Contains("model.safetensors"));
    }
    SECTION("misshapen tensor") {
        ts[4].shape = {3 * 4, 4};  // c_attn stored [out, in] instead of Conv1D [in, out]
        write_model(d, ts);
        const std::string msg = message_of([&] { Model::load(d.path, {.tokenizer = false}); });
        CHECK_THAT(msg, Contains("h.0.attn.c_attn.weight") && Contains("[12, 4]") && Contains("expected [4, 12]"));
    }
    SECTION("n_embd not divisible by n_head") {
        auto c = tiny_config();
        c["n_head"] = 3;
        write_model(d, ts, c);
        const std::string msg = message_of([&] { Model::load(d.path, {.tokenizer = false}); });
        CHECK_THAT(msg, Contains("config.json") && Contains("not divisible"));
    }
    SECTION("unsupported model_type") {
        auto c = tiny_config();
        c["model_type"] = "bert";
        write_model(d, ts, c);
        CHECK_THAT(message_of([&] { Model::load(d.path, {.tokenizer = false}); }), Contains("config.json") && Contains("bert"));
    }
    SECTION("config.json is not JSON") {
        write_model(d, ts);
        std::ofstream(d / "config.json") << "{ nope";
        CHECK_THAT(message_of([&] { Model::load(d.path, {.tokenizer = false}); }), Contains("config.json") && Contains("JSON"));
    }
    SECTION("missing config.json") {
        write_safetensors(d / "model.safetensors", ts);
        CHECK_THAT(message_of([&] { Model::load(d.path, {.tokenizer = false}); }), Contains("no config.json"));
    }
    SECTION("missing weights") {
        std::ofstream(d / "config.json") << tiny_config().dump();
        CHECK_THAT(message_of([&] { Model::load(d.path, {.tokenizer = false}); }), Contains("no weights"));
    }
    SECTION("missing tokenizer") {
        write_model(d, ts);
        CHECK_THAT(message_of([&] { Model::load(d.path); }), Contains("no tokenizer"));
    }
    SECTION("missing directory") {
        CHECK_THAT(message_of([&] { Model::load(d / "nope"); }), Contains("nope"));
    }
}

namespace {

struct FakeTokenizer : Tokenizer {
    int32_t n = 0;
    explicit FakeTokenizer(int32_t n) : n(n) {}
    std::vector<TokenId> encode(std::string_view, bool) const override { return {}; }
    std::string token_bytes(TokenId) const override { return ""; }
    int32_t n_vocab() const override { return n; }
    std::string kind() const override { return "fake"; }
};

std::string as_half(const std::vector<float>& v, bool bf16) {
    std::string out;
    for (float f : v) {
        uint32_t b;
        std::memcpy(&b, &f, 4);
        uint16_t h;
        if (bf16) {
            h = uint16_t(b >> 16);
        } else {  // values from ramp(): normal and exact in half, or zero
            const uint32_t sign = (b >> 16) & 0x8000, exp = (b >> 23) & 0xff, mant = b & 0x7fffff;
            h = f == 0.0f ? uint16_t(sign) : uint16_t(sign | ((exp - 112) << 10) | (mant >> 13));
        }
        out.append(reinterpret_cast<const char*>(&h), 2);
    }
    return out;
}

}  // namespace

TEST_CASE("model: the tokenizer's vocabulary must fit the embedding rows", "[model][errors]") {
    TempDir d;
    write_model(d, tiny_tensors());
    auto file = read_safetensors(d / "model.safetensors");
    const ModelConfig c = config_from_hf(tiny_config(), "config.json");
    CHECK_THAT(message_of([&] { Model(std::move(file), c, std::make_unique<FakeTokenizer>(11)); }),
               Contains("11 tokens") && Contains("10 embedding rows"));
    auto file2 = read_safetensors(d / "model.safetensors");
    CHECK_NOTHROW(Model(std::move(file2), c, std::make_unique<FakeTokenizer>(8)));  // padded vocab is fine
}

TEST_CASE("model: F16 and BF16 checkpoints give the F32 logits", "[model][dtype]") {
    TempDir f32_dir;
    write_model(f32_dir, tiny_tensors());
    auto ref = Model::load(f32_dir.path, {.tokenizer = false});
    std::vector<TokenId> ids{3, 1, 4, 1, 5};
    Session s_ref(*ref);
    const auto want_span = s_ref.eval(ids, LogitsFor::all);
    const std::vector<float> want(want_span.begin(), want_span.end());
    for (bool bf16 : {false, true}) {
        TempDir d;
        auto ts = tiny_tensors();
        for (auto& t : ts) {
            t.raw = as_half(t.values, bf16);
            t.dtype = bf16 ? "BF16" : "F16";
        }
        write_model(d, ts);
        auto m = Model::load(d.path, {.tokenizer = false});
        CHECK(m->weight_dtype() == (bf16 ? DType::BF16 : DType::F16));
        Session s(*m);
        const auto got = s.eval(ids, LogitsFor::all);
        REQUIRE(got.size() == want.size());
        // The stored weights are exact here and every product is computed in float (the gemm
        // converts F16/BF16 weights exactly and keeps the activations in float): 1e-5.
        const double tol = 1e-5;
        double worst = 0;
        for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, double(std::fabs(got[i] - want[i])));
        INFO("bf16 " << bf16 << ": max |diff| " << worst << ", tolerance " << tol);
        CHECK(worst <= tol);
    }
}
