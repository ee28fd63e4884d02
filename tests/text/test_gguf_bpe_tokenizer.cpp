// GGUF vocabularies through the GGUF path (tokenizer.ggml.*), as llama.cpp tokenizes them:
// byte-level BPE (tokenizer.ggml.pre chooses the pre-tokenizer) and SentencePiece. The BPE files
// are written here from stored vocabularies holding exactly the real files' tokens, merges, ids
// and types (llama-bpe, qwen2, starcoder, gpt-neox from tests/data/tokenizers/<family>/
// tokenizer.json, gpt-2 from GPT-2's vocab.json/merges.txt), with the real files' tokenizer keys;
// llama-spm's and phi-3's real files are stored. Then llama.cpp's test vectors (.inp texts, .out
// ids from the real Hugging Face tokenizers) and llama.cpp's own ids for the fixture corpus
// (ggml-vocab-cases) must come out.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "gguf_writer.h"
#include "cli_run.h"
#include "journey/errors.h"
#include "journey/formats/gguf_reader.h"
#include "journey/text/hf/tokenizer.h"
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
    const char* pre;     // nullptr: no tokenizer.ggml.pre key (gpt-neox's file has none)
    int32_t bos, eos;
    int32_t n_tokens = 0;  // pad the vocabulary with "[PADn]" user-defined tokens up to this
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
    for (size_t id = tokens.size(); id < size_t(v.n_tokens); ++id) put(id, "[PAD" + std::to_string(id) + "]", 4);
    std::vector<std::string> merges;
    for (const json& m : root["model"]["merges"])
        merges.push_back(m.is_string() ? m.get<std::string>() : m[0].get<std::string>() + " " + m[1].get<std::string>());
    test::GgufBuilder b;
    b.kv_str("general.architecture", "llama").kv_str("tokenizer.ggml.model", "gpt2");
    if (v.pre) b.kv_str("tokenizer.ggml.pre", v.pre);
    b.kv_strs("tokenizer.ggml.tokens", tokens)
        .kv_i32s("tokenizer.ggml.token_type", types)
        .kv_strs("tokenizer.ggml.merges", merges)
        .kv_u32("tokenizer.ggml.bos_token_id", uint32_t(v.bos))
        .kv_u32("tokenizer.ggml.eos_token_id", uint32_t(v.eos));
    if (!v.pre) b.kv_u32("tokenizer.ggml.unknown_token_id", 0);
    return test::write_temp(std::string("vocab-") + v.name + ".gguf", b.build()).string();
}

// ggml-vocab-gpt-2.gguf from GPT-2's vocab.json and merges.txt (the repository's models/gpt2-tokenizer,
// mirrored into test-data/reference/gpt2-tiny): the same 50257 tokens and 50000 merges (checked
// equal to the real file's), <|endoftext|> control, pre "gpt-2".
std::string gguf_gpt2(const std::string& pre = "gpt-2") {
    const json vocab = json::parse(read_text(JOURNEY_TEST_DATA "/reference/gpt2-tiny/vocab.json"));
    std::vector<std::string> tokens(vocab.size());
    std::vector<int32_t> types(vocab.size(), 1);
    for (const auto& [text, id] : vocab.items()) tokens.at(id.get<size_t>()) = text;
    types.at(50256) = 3;
    std::vector<std::string> merges;
    std::istringstream in(read_text(JOURNEY_TEST_DATA "/reference/gpt2-tiny/merges.txt"));
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && !line.starts_with("#version")) merges.push_back(line);
    test::GgufBuilder b;
    b.kv_str("general.architecture", "gpt2")
        .kv_str("tokenizer.ggml.model", "gpt2")
        .kv_str("tokenizer.ggml.pre", pre)
        .kv_strs("tokenizer.ggml.tokens", tokens)
        .kv_i32s("tokenizer.ggml.token_type", types)
        .kv_strs("tokenizer.ggml.merges", merges)
        .kv_u32("tokenizer.ggml.bos_token_id", 50256)
        .kv_u32("tokenizer.ggml.eos_token_id", 50256);
    return test::write_temp("vocab-gpt-2-" + pre + ".gguf", b.build()).string();
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

// The vectors (.inp/.out: the real Hugging Face tokenizer's ids, as llama.cpp's test-tokenizer-0
// checks them) and llama.cpp's own ids for the fixture corpus (with and without BOS/EOS and
// parse_special), through one GGUF vocabulary.
void check_gguf(const std::string& name, const std::string& gguf) {
    const auto tok = load_tokenizer_from_gguf(read_gguf(gguf));
    if (name != "gpt-neox") {  // llama.cpp has no vectors for it
        size_t n = 0, differ = 0;
        for (const auto& [text, ids] : vectors(name)) {
            ++n;
            if (tok->encode(text, /*parse_special=*/false) != ids && ++differ <= 3) {
                INFO(name << " .inp text " << json(text).dump());
                CHECK(tok->encode(text, false) == ids);
            }
        }
        CHECK(n > 30);
        INFO(name << ": " << differ << " of " << n << " .inp/.out vectors differ");
        CHECK(differ == 0);
    }
    const json cases = json::parse(read_text(JOURNEY_TEST_DATA "/tokenizers/ggml-vocab/" + name + ".json"))["cases"];
    CHECK(cases.size() > 300);
    size_t case_differ = 0;
    for (const json& c : cases) {
        const std::string text = c["text"];
        std::vector<TokenId> special = tok->special_prefix();
        const auto body = tok->encode(text, true);
        special.insert(special.end(), body.begin(), body.end());
        for (TokenId id : tok->special_suffix()) special.push_back(id);
        const bool ok = tok->encode(text, false) == c["ids"].get<std::vector<TokenId>>() &&
                        special == c["ids_special"].get<std::vector<TokenId>>();
        if (!ok && ++case_differ <= 3) {
            INFO(name << " case " << c.dump());
            CHECK(tok->encode(text, false) == c["ids"].get<std::vector<TokenId>>());
            CHECK(special == c["ids_special"].get<std::vector<TokenId>>());
        }
    }
    INFO(name << ": " << case_differ << " of " << cases.size() << " llama.cpp cases differ");
    CHECK(case_differ == 0);
}

}  // namespace

TEST_CASE("GGUF BPE vocabularies: llama.cpp's vectors and ids for every tokenizer.ggml.pre here", "[hf-tokenizer][gguf-vocab]") {
    for (const Vocab& v : {Vocab{"llama3", "llama-bpe", "llama-bpe", 128000, 128001}, Vocab{"qwen2", "qwen2", "qwen2", 151643, 151643},
                           Vocab{"starcoder", "starcoder", "starcoder", 0, 0}, Vocab{"gptneox", "gpt-neox", nullptr, 0, 0, 50432}}) {
        SECTION(v.name) { check_gguf(v.name, gguf_from_tokenizer_json(v)); }
    }
    SECTION("gpt-2") { check_gguf("gpt-2", gguf_gpt2()); }
}

// Every tokenizer.ggml.pre value llama.cpp maps to a regex set (one name per llama_vocab_pre_type,
// and a few aliases with flags of their own), on GPT-2's vocabulary: llama.cpp's own ids for the
// fixture corpus (gpt-2-pre-types.json: libllama v0.5.0 with the value written into
// ggml-vocab-gpt-2.gguf), with and without BOS/EOS and parse_special.
TEST_CASE("GGUF BPE: every tokenizer.ggml.pre value gives llama.cpp's ids", "[hf-tokenizer][gguf-vocab][gguf-pre]") {
    const json expected = json::parse(read_text(JOURNEY_TEST_DATA "/tokenizers/ggml-vocab/gpt-2-pre-types.json"))["pre"];
    const json cases = json::parse(read_text(JOURNEY_TEST_DATA "/tokenizers/ggml-vocab/gpt-2.json"))["cases"];
    REQUIRE(expected.size() >= 50);
    for (const auto& [pre, want] : expected.items()) {
        const auto tok = load_tokenizer_from_gguf(read_gguf(gguf_gpt2(pre)));
        REQUIRE(want["ids"].size() == cases.size());
        size_t differ = 0;
        for (size_t i = 0; i < cases.size(); ++i) {
            const std::string text = cases[i]["text"];
            const auto ids = tok->encode(text, false);
            std::vector<TokenId> special = tok->special_prefix();
            const auto body = tok->encode(text, true);
            special.insert(special.end(), body.begin(), body.end());
            for (TokenId id : tok->special_suffix()) special.push_back(id);
            if ((ids != want["ids"][i].get<std::vector<TokenId>>() || special != want["ids_special"][i].get<std::vector<TokenId>>()) &&
                ++differ <= 2) {
                INFO("pre " << pre << " text " << json(text).dump());
                CHECK(ids == want["ids"][i].get<std::vector<TokenId>>());
                CHECK(special == want["ids_special"][i].get<std::vector<TokenId>>());
            }
        }
        INFO("pre " << pre << ": " << differ << " of " << cases.size() << " texts differ");
        CHECK(differ == 0);
    }
}

TEST_CASE("GGUF BPE: pre-tokenizers llama.cpp splits by code of its own are refused naming them", "[hf-tokenizer][gguf-vocab][gguf-pre]") {
    for (const char* pre : {"kimi-k2", "afmoe", "tiny_aya", "superbpe", "gemma4", "sarvam-moe", "whitespace"}) {
        const std::string path = gguf_gpt2(pre);
        CHECK_THROWS_WITH(load_tokenizer_from_gguf(read_gguf(path)),
                          Catch::Contains(path) && Catch::Contains("tokenizer.ggml.pre \"" + std::string(pre) + "\" is not supported"));
    }
}

TEST_CASE("GGUF SentencePiece vocabularies: llama.cpp's vectors and ids (llama-spm, phi-3)", "[tokenizer][gguf-vocab]") {
    SECTION("llama-spm") { check_gguf("llama-spm", JOURNEY_TEST_DATA "/models/llama-spm-vocab/ggml-vocab-llama-spm.gguf"); }
    SECTION("phi-3") { check_gguf("phi-3", JOURNEY_TEST_DATA "/tokenizers/ggml-vocab/ggml-vocab-phi-3.gguf"); }
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

TEST_CASE("journey tokenize -m FILE.gguf (a vocabulary-only GGUF): llama.cpp's ids, and detokenize back", "[cli][gguf-vocab]") {
    // Phi-3's vocabulary (SentencePiece; <|end|> a control token whose following spaces
    // llama.cpp drops) and GPT-2's (byte-level BPE by tokenizer.ggml.pre).
    const json phi3 = json::parse(read_text(JOURNEY_TEST_DATA "/tokenizers/ggml-vocab/phi-3.json"))["cases"];
    const std::string phi3_gguf = JOURNEY_TEST_DATA "/tokenizers/ggml-vocab/ggml-vocab-phi-3.gguf";
    size_t checked = 0;
    for (const json& c : phi3) {
        const std::string text = c["text"];
        if (text.find("<|end|> ") == std::string::npos || checked++ == 2) continue;
        // tokenize prints the ids the model reads, BOS first: llama.cpp's ids_special exactly;
        // --no-bos the text's own ids (ids_special but its BOS).
        auto r = test::run_journey({"tokenize", "-m", phi3_gguf, "--json", "-p", text});
        REQUIRE(r.exit_code == 0);
        const auto with_special = c["ids_special"].get<std::vector<TokenId>>();
        REQUIRE(with_special.front() == 1);
        CHECK(json::parse(r.out)["ids"].get<std::vector<TokenId>>() == with_special);
        r = test::run_journey({"tokenize", "-m", phi3_gguf, "--json", "--no-bos", "-p", text});
        REQUIRE(r.exit_code == 0);
        CHECK(json::parse(r.out)["ids"].get<std::vector<TokenId>>() == std::vector<TokenId>(with_special.begin() + 1, with_special.end()));
        r = test::run_journey({"tokenize", "-m", phi3_gguf, "--no-special", "--no-bos", "--json", "-p", text});
        REQUIRE(r.exit_code == 0);
        CHECK(json::parse(r.out)["ids"] == c["ids"]);
    }
    CHECK(checked >= 2);
    const std::string gpt2 = gguf_gpt2();
    auto r = test::run_journey({"tokenize", "-m", gpt2, "--json", "-p", "Hello world, it's 2024!"});
    REQUIRE(r.exit_code == 0);
    CHECK(json::parse(r.out)["ids"] == json::array({15496, 995, 11, 340, 338, 48609, 0}));  // gpt-2.json's
    r = test::run_journey({"detokenize", "-m", gpt2, "15496", "995", "11", "340", "338", "48609", "0"});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "Hello world, it's 2024!");
}

TEST_CASE("GGUF SentencePiece: add_bos_token / add_eos_token decide the tokens around a text", "[tokenizer][gguf-vocab]") {
    ModelFile mf = read_gguf(JOURNEY_TEST_DATA "/models/llama-spm-vocab/ggml-vocab-llama-spm.gguf");
    auto tok = load_tokenizer_from_gguf(mf);  // the file: BOS 1 before, nothing after
    CHECK(tok->special_prefix() == std::vector<TokenId>{1});
    CHECK(tok->special_suffix().empty());
    mf.metadata["tokenizer.ggml.add_bos_token"] = false;
    mf.metadata["tokenizer.ggml.add_eos_token"] = true;
    tok = load_tokenizer_from_gguf(mf);
    CHECK(tok->special_prefix().empty());
    CHECK(tok->special_suffix() == std::vector<TokenId>{2});
    mf.metadata["tokenizer.ggml.eos_token_id"] = 7;
    CHECK(load_tokenizer_from_gguf(mf)->special_suffix() == std::vector<TokenId>{7});
}

TEST_CASE("GGUF BPE: BOS/EOS ids and add_bos/add_eos as llama.cpp sets them", "[hf-tokenizer][gguf-vocab]") {
    ModelFile mf = read_gguf(gguf_gpt2("gpt-2"));
    auto tok = load_tokenizer_from_gguf(mf);  // gpt-2: no BOS added
    CHECK(tok->special_prefix().empty());
    CHECK(tok->bos_id() == 50256);
    mf.metadata["tokenizer.ggml.add_bos_token"] = true;
    mf.metadata["tokenizer.ggml.add_eos_token"] = true;
    mf.metadata["tokenizer.ggml.eos_token_id"] = 13;
    tok = load_tokenizer_from_gguf(mf);
    CHECK(tok->special_prefix() == std::vector<TokenId>{50256});
    CHECK(tok->special_suffix() == std::vector<TokenId>{13});
    // Without the id keys llama.cpp uses 11 for both.
    mf.metadata.erase("tokenizer.ggml.bos_token_id");
    mf.metadata.erase("tokenizer.ggml.eos_token_id");
    tok = load_tokenizer_from_gguf(mf);
    CHECK(tok->special_prefix() == std::vector<TokenId>{11});
    CHECK(tok->special_suffix() == std::vector<TokenId>{11});
    // An id beyond the vocabulary is refused naming the key.
    mf.metadata["tokenizer.ggml.bos_token_id"] = 60000;
    CHECK_THROWS_WITH(load_tokenizer_from_gguf(mf), Catch::Contains("tokenizer.ggml.bos_token_id 60000 is not a token id"));
}
