// GGUF reader: real files from other tools, synthetic valid files, and every kind of damage.
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <tuple>

#include "cli_run.h"
#include "gguf_writer.h"
#include "journey/errors.h"
#include "journey/formats/ggml_types.h"
#include "journey/formats/gguf_reader.h"

using namespace journey;
using journey::test::Bytes;
using journey::test::GgufBuilder;
using journey::test::GgufTensor;
using journey::test::write_temp;

namespace {

// read_gguf must throw a ModelError whose message names the file and contains `problem`.
void require_refused(const std::string& name, const std::string& bytes, const std::string& problem) {
    const auto path = write_temp(name, bytes);
    try {
        read_gguf(path);
        FAIL("accepted a malformed file: " << name);
    } catch (const ModelError& e) {
        const std::string msg = e.what();
        INFO(msg);
        CHECK(msg.find(path.string()) != std::string::npos);
        CHECK(msg.find(problem) != std::string::npos);
    }
}

GgufBuilder small_valid() {
    GgufBuilder b;
    b.kv_str("general.architecture", "llama").kv_u32("llama.block_count", 2);
    b.tensor_f32("a", {4, 3}).tensor_f32("b", {5}, 100.0f);
    return b;
}

float f32_at(const TensorInfo& t, size_t i) {
    float v;
    std::memcpy(&v, t.data + 4 * i, 4);
    return v;
}

}  // namespace

TEST_CASE("gguf: a synthetic v3 file round-trips metadata and tensors", "[gguf]") {
    GgufBuilder b = small_valid();
    b.kv_i32("i", -7).kv_f32("f", 0.5f).kv_bool("yes", true).kv_strs("tokens", {"x", "", "zz"});
    b.kv_raw("u64", gguf::ValueType::UINT64, Bytes().u64(1ull << 40));
    b.kv_raw("i64", gguf::ValueType::INT64, Bytes().u64(uint64_t(-5)));
    b.kv_raw("f64", gguf::ValueType::FLOAT64, Bytes().raw("\0\0\0\0\0\0\xf8\x3f", 8));  // 1.5
    b.kv_raw("u8", gguf::ValueType::UINT8, Bytes().u8(200));
    b.kv_raw("i16", gguf::ValueType::INT16, Bytes().raw("\xfe\xff", 2));
    // [[1, 2], []] : an array of arrays of u16
    b.kv_raw("nested", gguf::ValueType::ARRAY,
             Bytes().u32(uint32_t(gguf::ValueType::ARRAY)).u64(2)
                 .u32(uint32_t(gguf::ValueType::UINT16)).u64(2).raw("\x01\x00\x02\x00", 4)
                 .u32(uint32_t(gguf::ValueType::UINT16)).u64(0));
    const auto mf = read_gguf(write_temp("valid.gguf", b.build()));
    CHECK(mf.format == "gguf");
    CHECK(mf.metadata["general.architecture"] == "llama");
    CHECK(mf.metadata["llama.block_count"] == 2);
    CHECK(mf.metadata["i"] == -7);
    CHECK(mf.metadata["f"] == 0.5);
    CHECK(mf.metadata["yes"] == true);
    CHECK(mf.metadata["tokens"] == nlohmann::json({"x", "", "zz"}));
    CHECK(mf.metadata["u64"] == (1ull << 40));
    CHECK(mf.metadata["i64"] == -5);
    CHECK(mf.metadata["f64"] == 1.5);
    CHECK(mf.metadata["u8"] == 200);
    CHECK(mf.metadata["i16"] == -2);
    CHECK(mf.metadata["nested"] == nlohmann::json::parse("[[1, 2], []]"));

    REQUIRE(mf.tensors.size() == 2);
    const TensorInfo& a = mf.tensors.at("a");
    CHECK(a.shape == std::vector<int64_t>{3, 4});  // ne {4, 3}: rows of 4, outermost first
    CHECK(a.nbytes == 48);
    CHECK(f32_at(a, 5) == 5.0f);
    CHECK(reinterpret_cast<uintptr_t>(a.data) % 32 == 0);
    const TensorInfo& t = mf.tensors.at("b");
    CHECK(t.shape == std::vector<int64_t>{5});
    CHECK(f32_at(t, 4) == 104.0f);
}

TEST_CASE("gguf: version 2, custom alignment and quantized types are read", "[gguf]") {
    GgufBuilder b;
    b.version = 2;
    b.alignment = 64;
    b.kv_u32("general.alignment", 64);
    b.tensor({"q8", {64, 2}, gguf::kTypeQ8_0, std::string(4 * 34, '\x01'), std::nullopt});
    b.tensor({"q4", {32}, gguf::kTypeQ4_0, std::string(18, '\x02'), std::nullopt});
    b.tensor({"h", {3}, gguf::kTypeF16, std::string(6, '\0'), std::nullopt});
    b.tensor({"bf", {2, 2}, gguf::kTypeBF16, std::string(8, '\0'), std::nullopt});
    const auto mf = read_gguf(write_temp("v2.gguf", b.build()));
    CHECK(mf.tensors.at("q8").dtype == DType::Q8_0);
    CHECK(mf.tensors.at("q8").shape == std::vector<int64_t>{2, 64});
    CHECK(mf.tensors.at("q8").nbytes == 4 * 34);
    CHECK(mf.tensors.at("q4").dtype == DType::Q4_0);
    CHECK(mf.tensors.at("q4").nbytes == 18);
    CHECK(mf.tensors.at("h").dtype == DType::F16);
    CHECK(mf.tensors.at("bf").dtype == DType::BF16);
    for (const auto& [name, t] : mf.tensors)
        CHECK((t.data - mf.mappings[0]->data()) % 64 == 0);
}

TEST_CASE("gguf: malformed files are refused with a ModelError naming the file", "[gguf]") {
    const std::string valid = small_valid().build();
    REQUIRE_NOTHROW(read_gguf(write_temp("ok.gguf", valid)));

    SECTION("wrong magic") {
        GgufBuilder b = small_valid();
        b.magic = 0x4c4d4747;
        require_refused("magic.gguf", b.build(), "bad magic");
    }
    SECTION("empty file") { require_refused("empty.gguf", "", "truncated"); }
    SECTION("version 1 and future versions") {
        for (uint32_t v : {1u, 4u}) {
            GgufBuilder b = small_valid();
            b.version = v;
            require_refused("version.gguf", b.build(), "unsupported GGUF version " + std::to_string(v));
        }
    }
    SECTION("truncated anywhere") {
        for (size_t cut : {size_t(3), size_t(10), size_t(30), size_t(60), valid.size() - 100, valid.size() - 1})
            require_refused("cut.gguf", valid.substr(0, cut), "");
    }
    SECTION("string length beyond the file") {
        Bytes b;
        b.u32(gguf::kMagic).u32(3).u64(0).u64(1).u64(1ull << 62).raw("key and some more bytes", 23);
        require_refused("strlen.gguf", b.buf, "beyond the end of the file");
        Bytes v;  // a huge string value
        v.u32(gguf::kMagic).u32(3).u64(0).u64(1).str("k").u32(uint32_t(gguf::ValueType::STRING)).u64(~0ull);
        require_refused("strval.gguf", v.buf, "beyond the end of the file");
    }
    SECTION("array length beyond the file") {
        Bytes b;
        b.u32(gguf::kMagic).u32(3).u64(0).u64(1).str("arr").u32(uint32_t(gguf::ValueType::ARRAY))
            .u32(uint32_t(gguf::ValueType::UINT64)).u64(1ull << 60).u64(1);
        require_refused("arrlen.gguf", b.buf, "cannot fit");
        Bytes s;  // array of strings: each at least 8 bytes
        s.u32(gguf::kMagic).u32(3).u64(0).u64(1).str("arr").u32(uint32_t(gguf::ValueType::ARRAY))
            .u32(uint32_t(gguf::ValueType::STRING)).u64(100).str("x");
        require_refused("arrstr.gguf", s.buf, "cannot fit");
    }
    SECTION("counts larger than the file") {
        Bytes kv, tensors;
        kv.u32(gguf::kMagic).u32(3).u64(0).u64(~0ull);
        require_refused("nkv.gguf", kv.buf, "metadata count");
        tensors.u32(gguf::kMagic).u32(3).u64(1ull << 61).u64(0);
        require_refused("ntensors.gguf", tensors.buf, "tensor count");
    }
    SECTION("unknown value type and deep nesting") {
        Bytes b;
        b.u32(gguf::kMagic).u32(3).u64(0).u64(1).str("k").u32(13).u64(0);
        require_refused("vtype.gguf", b.buf, "unknown value type 13");
        Bytes deep;
        deep.u32(gguf::kMagic).u32(3).u64(0).u64(1).str("k").u32(uint32_t(gguf::ValueType::ARRAY));
        for (int i = 0; i < 100; ++i) deep.u32(uint32_t(gguf::ValueType::ARRAY)).u64(1);
        require_refused("deep.gguf", deep.buf, "nested too deeply");
    }
    SECTION("duplicate metadata keys and tensor names") {
        GgufBuilder k = small_valid();
        k.kv_u32("llama.block_count", 3);
        require_refused("dupkey.gguf", k.build(), "duplicate metadata key 'llama.block_count'");
        GgufBuilder t = small_valid();
        t.tensor_f32("a", {2});
        require_refused("dupname.gguf", t.build(), "duplicate tensor name 'a'");
    }
    SECTION("tensor offset out of bounds") {
        GgufBuilder b = small_valid();
        b.tensor({"far", {8}, gguf::kTypeF32, "", 1ull << 20});
        require_refused("offset.gguf", b.build(), "not within the file bounds");
        GgufBuilder w = small_valid();
        w.tensor({"wrap", {8}, gguf::kTypeF32, "", ~0ull - 31});  // offset + size wraps around
        require_refused("wrap.gguf", w.build(), "not within the file bounds");
        GgufBuilder big = small_valid();  // size runs past the end
        big.tensor({"big", {1000}, gguf::kTypeF32, std::string(64, '\0'), std::nullopt});
        require_refused("size.gguf", big.build(), "not within the file bounds");
    }
    SECTION("misaligned tensor offset") {
        GgufBuilder b = small_valid();
        b.tensor({"mis", {1}, gguf::kTypeF32, std::string(4, '\0'), 4});
        require_refused("misaligned.gguf", b.build(), "not a multiple of the alignment");
    }
    SECTION("bad alignment") {
        GgufBuilder b = small_valid();
        b.kv_u32("general.alignment", 24);
        require_refused("align.gguf", b.build(), "power of two");
    }
    SECTION("dimension products that overflow") {
        GgufBuilder b = small_valid();
        b.tensor({"huge", {1ull << 32, 1ull << 32, 1ull << 32}, gguf::kTypeF32, "", std::nullopt});
        require_refused("overflow.gguf", b.build(), "overflows");
        GgufBuilder n = small_valid();
        n.tensor({"neg", {~0ull}, gguf::kTypeF32, "", std::nullopt});
        require_refused("negdim.gguf", n.build(), "overflows");
        GgufBuilder s = small_valid();  // fits in int64 elements, not in bytes
        s.tensor({"bytes", {1ull << 62}, gguf::kTypeF32, "", std::nullopt});
        require_refused("bytes.gguf", s.build(), "overflows");
    }
    SECTION("too many dimensions") {
        GgufBuilder b = small_valid();
        b.tensor({"5d", {1, 1, 1, 1, 1}, gguf::kTypeF32, std::string(4, '\0'), std::nullopt});
        require_refused("dims.gguf", b.build(), "n_dims 5");
    }
    SECTION("a type number ggml never had") {
        GgufBuilder b = small_valid();
        b.tensor({"t", {32}, 99, std::string(22, '\0'), std::nullopt});
        require_refused("type.gguf", b.build(), "tensor 't': unknown ggml type number 99");
    }
    SECTION("quantized rows that are not whole blocks") {
        GgufBuilder b = small_valid();
        b.tensor({"q", {16, 2}, gguf::kTypeQ8_0, std::string(34, '\0'), std::nullopt});
        require_refused("block.gguf", b.build(), "tensor 'q': Q8_0 row length 16 is not a whole number of 32-element blocks");
        GgufBuilder k = small_valid();
        k.tensor({"k", {128, 2}, 12, std::string(144, '\0'), std::nullopt});
        require_refused("kblock.gguf", k.build(), "tensor 'k': Q4_K row length 128 is not a whole number of 256-element blocks");
    }
    SECTION("a byte size that disagrees with the type and shape") {
        // The writer lays out the bytes given: one Q8_0 block (34 bytes, padded to 64), then
        // "z"; the shape [64] says two blocks, 68 bytes, which run into "z".
        GgufBuilder b = small_valid();
        b.tensor({"q8", {64}, gguf::kTypeQ8_0, std::string(34, '\0'), std::nullopt}).tensor_f32("z", {16});
        require_refused("overlap.gguf", b.build(), "tensor 'q8': Q8_0 of shape [64] takes 68 bytes, but tensor 'z' starts 64 bytes after it");
    }
}

TEST_CASE("gguf: types journey does not compute with are refused by name, with a hint", "[gguf][quant]") {
    struct Case {
        uint32_t type;
        std::string name, hint;
    };
    const std::vector<Case> cases = {
        {40, "NVFP4", "requantize to Q4_K_M"},   {9, "Q8_1", "activations only"},
        {15, "Q8_K", "activations only"},        {4, "Q4_2", "removed from ggml"},
        {31, "Q4_0_4_4", "removed from ggml"},   {36, "IQ4_NL_4_4", "removed from ggml"},
        {24, "I8", "convert to F32"},            {28, "F64", "convert to F32"},
    };
    for (const Case& c : cases) {
        const GgmlType* g = ggml_type(c.type);
        REQUIRE(g);
        CHECK(g->name == c.name);
        CHECK(!g->dtype);
        GgufBuilder b = small_valid();
        b.tensor({"w", {256}, c.type, std::string(g->block_bytes * (256 / g->block), '\0'), std::nullopt});
        const auto path = write_temp("refused.gguf", b.build());
        try {
            read_gguf(path);
            FAIL("accepted type " << c.name);
        } catch (const ModelError& e) {
            const std::string msg = e.what();
            INFO(msg);
            CHECK(msg.find("tensor 'w': type " + c.name + " is ") != std::string::npos);
            CHECK(msg.find(c.hint) != std::string::npos);
            CHECK(msg.find("invalid") == std::string::npos);  // a valid file, not a broken one
        }
    }
}

TEST_CASE("gguf: the ggml type table has every type's block size and bytes", "[gguf][quant]") {
    // (number, name, elements per block, bytes per block) as ggml's type traits state them.
    const std::vector<std::tuple<uint32_t, std::string, uint32_t, uint32_t>> rows = {
        {0, "F32", 1, 4},       {1, "F16", 1, 2},        {2, "Q4_0", 32, 18},     {3, "Q4_1", 32, 20},
        {6, "Q5_0", 32, 22},    {7, "Q5_1", 32, 24},     {8, "Q8_0", 32, 34},     {9, "Q8_1", 32, 36},
        {10, "Q2_K", 256, 84},  {11, "Q3_K", 256, 110},  {12, "Q4_K", 256, 144},  {13, "Q5_K", 256, 176},
        {14, "Q6_K", 256, 210}, {15, "Q8_K", 256, 292},  {16, "IQ2_XXS", 256, 66}, {17, "IQ2_XS", 256, 74},
        {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50}, {20, "IQ4_NL", 32, 18},  {21, "IQ3_S", 256, 110},
        {22, "IQ2_S", 256, 82}, {23, "IQ4_XS", 256, 136}, {24, "I8", 1, 1},       {25, "I16", 1, 2},
        {26, "I32", 1, 4},      {27, "I64", 1, 8},       {28, "F64", 1, 8},       {29, "IQ1_M", 256, 56},
        {30, "BF16", 1, 2},     {34, "TQ1_0", 256, 54},  {35, "TQ2_0", 256, 66},  {39, "MXFP4", 32, 17},
    };
    for (const auto& [id, name, block, bytes] : rows) {
        const GgmlType* g = ggml_type(id);
        REQUIRE(g);
        CHECK(g->name == name);
        CHECK(g->block == block);
        CHECK(g->block_bytes == bytes);
        if (g->dtype) {  // the types journey reads: DType and table agree
            CHECK(dtype_name(*g->dtype) == name);
            CHECK(dtype_block(*g->dtype) == block);
            CHECK(dtype_bytes(*g->dtype, block) == bytes);
            CHECK(dtype_bytes(*g->dtype, block + 1) == (block == 1 ? 2 * bytes : 0));
        }
    }
    CHECK(ggml_type(41) == nullptr);
    int read = 0;
    for (uint32_t id = 0; id <= 40; ++id) read += ggml_type(id) && ggml_type(id)->dtype ? 1 : 0;
    // F32 F16 BF16, Q4_0 Q4_1 Q5_0 Q5_1 Q8_0, Q2_K..Q6_K, IQ4_NL IQ4_XS, IQ1_S IQ1_M IQ2_XXS IQ2_XS
    // IQ2_S IQ3_XXS IQ3_S, TQ1_0 TQ2_0, MXFP4
    CHECK(read == 25);
}

TEST_CASE("gguf: any single damaged byte gives a file or a ModelError, never a crash", "[gguf]") {
    GgufBuilder b = small_valid();
    b.kv_strs("tokens", {"ab", "c"});
    const std::string valid = b.build();
    const auto path = journey::test::temp_dir() / "mutated.gguf";
    int refused = 0;
    for (size_t i = 0; i < valid.size(); ++i) {
        for (unsigned char v : {0x00, 0x07, 0x80, 0xff}) {
            std::string bytes = valid;
            bytes[i] = char(v);
            write_temp("mutated.gguf", bytes);
            try {
                read_gguf(path);
            } catch (const ModelError& e) {
                ++refused;
                if (std::string(e.what()).find(path.string()) == std::string::npos) FAIL(e.what());
            }
        }
    }
    CHECK(refused > 0);
}

TEST_CASE("gguf: gpt2-tiny.gguf matches its config.json", "[gguf]") {
    const std::string dir = journey::test::data_dir() + "/reference/";
    const auto mf = read_gguf(dir + "gpt2-tiny.gguf");
    nlohmann::json config;
    std::ifstream(dir + "gpt2-tiny/config.json") >> config;
    const int64_t n_embd = config["n_embd"], n_vocab = config["vocab_size"], n_ctx = config["n_positions"];
    const int64_t n_layer = config["n_layer"];

    CHECK(mf.metadata["general.architecture"] == "gpt2");
    CHECK(mf.metadata["gpt2.embedding_length"] == n_embd);
    CHECK(mf.metadata["gpt2.block_count"] == n_layer);
    CHECK(mf.metadata["gpt2.attention.head_count"] == config["n_head"]);
    CHECK(mf.metadata["gpt2.context_length"] == n_ctx);
    CHECK(mf.metadata["gpt2.feed_forward_length"] == 4 * n_embd);
    CHECK(mf.metadata["gpt2.attention.layer_norm_epsilon"].get<double>() ==
          Approx(config["layer_norm_epsilon"].get<double>()));
    CHECK(mf.metadata["tokenizer.ggml.model"] == "gpt2");
    CHECK(mf.metadata["tokenizer.ggml.tokens"].size() == size_t(n_vocab));
    CHECK(mf.metadata["tokenizer.ggml.merges"].size() == 50000);
    CHECK(mf.metadata["tokenizer.ggml.tokens"][50256] == "<|endoftext|>");
    CHECK(mf.metadata["tokenizer.ggml.bos_token_id"] == config["bos_token_id"]);

    CHECK(mf.tensors.size() == size_t(5 + 12 * n_layer));
    auto shape = [&](const std::string& name) { return mf.tensors.at(name).shape; };
    using S = std::vector<int64_t>;
    CHECK(shape("token_embd.weight") == S{n_vocab, n_embd});
    CHECK(shape("position_embd.weight") == S{n_ctx, n_embd});
    CHECK(shape("output.weight") == S{n_vocab, n_embd});
    CHECK(shape("output_norm.weight") == S{n_embd});
    for (int64_t l = 0; l < n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        CHECK(shape(p + "attn_qkv.weight") == S{3 * n_embd, n_embd});
        CHECK(shape(p + "attn_qkv.bias") == S{3 * n_embd});
        CHECK(shape(p + "attn_output.weight") == S{n_embd, n_embd});
        CHECK(shape(p + "ffn_up.weight") == S{4 * n_embd, n_embd});
        CHECK(shape(p + "ffn_down.weight") == S{n_embd, 4 * n_embd});
        CHECK(shape(p + "attn_norm.bias") == S{n_embd});
    }
    for (const auto& [name, t] : mf.tensors) {
        CHECK(t.dtype == DType::F32);
        CHECK(t.nbytes == size_t(t.numel()) * 4);
    }
}

TEST_CASE("gguf: the Llama vocabulary file has no tensors and a full tokenizer", "[gguf]") {
    const auto mf = read_gguf(journey::test::data_dir() + "/models/llama-spm-vocab/ggml-vocab-llama-spm.gguf");
    CHECK(mf.tensors.empty());
    CHECK(mf.metadata["tokenizer.ggml.model"] == "llama");
    CHECK(mf.metadata["tokenizer.ggml.tokens"].size() == 32000);
    CHECK(mf.metadata["tokenizer.ggml.scores"].size() == 32000);
    CHECK(mf.metadata["tokenizer.ggml.token_type"][0] == 2);
}
