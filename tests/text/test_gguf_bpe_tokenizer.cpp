// GGUF byte-level BPE vocabularies: tokenizer.ggml.pre chooses the pre-tokenizer as llama.cpp
// does. The GGUF files are written here from the stored tokenizer.json of the same vocabulary
// (llama.cpp's ggml-vocab-{llama-bpe,qwen2,starcoder}.gguf, which the fixtures' tokenizer.json
// files were made from: same tokens, merges and ids), with the real files' tokenizer keys; then
// llama.cpp's test vectors (.inp texts, .out ids from the real Hugging Face tokenizers) and
// llama.cpp's own ids for the fixture corpus (ggml-vocab-cases) must come out.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "gguf_writer.h"
#include "journey/errors.h"
#include "journey/formats/gguf_reader.h"
#include "journey/text/hf_tokenizer.h"
#include "journey/text/spm_tokenizer.h"

using namespace journey;
using json = nlohmann::json;

namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct Vocab {
    const char* family;  // tests/data/tokenizers/<family>/tokenizer.json
    const char* name;    // ggml-vocab-<name>.gguf
    const char* pre;
    int32_t bos, eos;
};

// The GGUF llama.cpp's converter writes for a tokenizer.json: tokens by id, merges, types
// (special added tokens control, other added tokens user-defined).
std::string gguf_from_tokenizer_json(const Vocab& v) {
    const json root = json::parse(read_text(JOURNEY_TEST_DATA "/tokenizers/" + std::string(v.family) + "/tokenizer.json"));
    std::vector<std::string> tokens;
    std::vector<int32_t> types;
    auto put = [&](size_t id, const std::string& text, int32_t type) {
        if (tokens.size() <= id) tokens.resize(id + 1), types.resize(id + 1, 1);
        tokens[id] = text;
        types[id] = type;
    };
    for (const auto& [text, id] : root["model"]["vocab"].items()) put(id.get<size_t>(), text, 1);
    for (const json& a : root["added_tokens"]) put(a["id"].get<size_t>(), a["content"], a["special"].get<bool>() ? 3 : 4);
    std::vector<std::string> merges;
    for (const json& m : root["model"]["merges"])
        merges.push_back(m.is_string() ? m.get<std::string>() : m[0].get<std::string>() + " " + m[1].get<std::string>());
    test::GgufBuilder b;
    b.kv_str("general.architecture", "llama")
        .kv_str("tokenizer.ggml.model", "gpt2")
        .kv_str("tokenizer.ggml.pre", v.pre)
        .kv_strs("tokenizer.ggml.tokens", tokens)
        .kv_i32s("tokenizer.ggml.token_type", types)
        .kv_strs("tokenizer.ggml.merges", merges)
        .kv_u32("tokenizer.ggml.bos_token_id", uint32_t(v.bos))
        .kv_u32("tokenizer.ggml.eos_token_id", uint32_t(v.eos));
    return test::write_temp(std::string("vocab-") + v.name + ".gguf", b.build()).string();
}

// llama.cpp's .inp: texts separated by "\n__ggml_vocab_test__\n"; .out: one line of ids per text.
std::vector<std::pair<std::string, std::vector<TokenId>>> vectors(const std::string& name) {
    const std::string base = JOURNEY_TEST_DATA "/tokenizers/ggml-vocab/ggml-vocab-" + name + ".gguf";
    const std::string inp = read_text(base + ".inp"), sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> texts;
    for (size_t from = 0;;) {
        const size_t at = inp.find(sep, from);
        if (at == std::string::npos) break;
        texts.push_back(inp.substr(from, at - from));
        from = at + sep.size();
    }
    std::istringstream out(read_text(base + ".out"));
    std::vector<std::pair<std::string, std::vector<TokenId>>> result;
    std::string line;
    for (const std::string& t : texts) {
        REQUIRE(std::getline(out, line));
        std::istringstream ids(line);
        std::vector<TokenId> v;
        for (TokenId id; ids >> id;) v.push_back(id);
        result.emplace_back(t, v);
    }
    return result;
}

}  // namespace

TEST_CASE("GGUF BPE vocabularies: llama.cpp's vectors and ids for every tokenizer.ggml.pre here", "[hf-tokenizer][gguf-vocab]") {
    for (const Vocab& v : {Vocab{"llama3", "llama-bpe", "llama-bpe", 128000, 128001}, Vocab{"qwen2", "qwen2", "qwen2", 151643, 151643},
                           Vocab{"starcoder", "starcoder", "starcoder", 0, 0}}) {
        SECTION(v.name) {
            const auto tok = load_tokenizer_from_gguf(read_gguf(gguf_from_tokenizer_json(v)));
            size_t n = 0, differ = 0;
            for (const auto& [text, ids] : vectors(v.name)) {
                ++n;
                if (tok->encode(text, /*parse_special=*/false) != ids && ++differ <= 3) {
                    INFO(v.name << " .inp text " << json(text).dump());
                    CHECK(tok->encode(text, false) == ids);
                }
            }
            CHECK(n > 30);
            INFO(v.name << ": " << differ << " of " << n << " .inp/.out vectors differ");
            CHECK(differ == 0);

            const json cases = json::parse(read_text(JOURNEY_TEST_DATA "/tokenizers/ggml-vocab/" + std::string(v.name) + ".json"))["cases"];
            size_t case_differ = 0;
            for (const json& c : cases) {
                const std::string text = c["text"];
                std::vector<TokenId> special = tok->special_prefix();
                const auto body = tok->encode(text, true);
                special.insert(special.end(), body.begin(), body.end());
                const bool ok = tok->encode(text, false) == c["ids"].get<std::vector<TokenId>>() &&
                                special == c["ids_special"].get<std::vector<TokenId>>();
                if (!ok && ++case_differ <= 3) {
                    INFO(v.name << " case " << c.dump());
                    CHECK(tok->encode(text, false) == c["ids"].get<std::vector<TokenId>>());
                    CHECK(special == c["ids_special"].get<std::vector<TokenId>>());
                }
            }
            INFO(v.name << ": " << case_differ << " of " << cases.size() << " llama.cpp cases differ");
            CHECK(case_differ == 0);
        }
    }
}

TEST_CASE("GGUF BPE: an unknown tokenizer.ggml.pre is refused naming it", "[hf-tokenizer][gguf-vocab]") {
    test::GgufBuilder b;
    b.kv_str("general.architecture", "llama")
        .kv_str("tokenizer.ggml.model", "gpt2")
        .kv_str("tokenizer.ggml.pre", "no-such-pre")
        .kv_strs("tokenizer.ggml.tokens", {"a", "b"})
        .kv_strs("tokenizer.ggml.merges", {});
    const std::string path = test::write_temp("bad-pre.gguf", b.build()).string();
    CHECK_THROWS_WITH(load_tokenizer_from_gguf(read_gguf(path)),
                      Catch::Contains(path) && Catch::Contains("tokenizer.ggml.pre \"no-such-pre\""));
}
