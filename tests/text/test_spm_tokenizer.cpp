// SentencePiece BPE: Llama-2's vocabulary against llama.cpp's ids, and llama2.c's tok512.bin
// against the ids in stories260K.expected.json.
#include <catch2/catch.hpp>

#include <fstream>

#include "cli_run.h"
#include "gguf_writer.h"
#include "journey/errors.h"
#include "journey/formats/gguf_reader.h"
#include "journey/text/spm_tokenizer.h"

using namespace journey;

namespace {

const std::string kData = journey::test::data_dir();

const ModelFile& llama_vocab() {
    static const ModelFile mf = read_gguf(kData + "/models/llama-spm-vocab/ggml-vocab-llama-spm.gguf");
    return mf;
}

const SpmTokenizer& tok512() {
    static const auto tok = SpmTokenizer::from_llama2c(kData + "/models/stories260K/tok512.bin");
    return *tok;
}

}  // namespace

TEST_CASE("spm: every llama.cpp case of the Llama-2 vocabulary", "[spm]") {
    const auto tok = load_tokenizer_from_gguf(llama_vocab());
    REQUIRE(tok->kind() == "llama-spm");
    CHECK(tok->n_vocab() == 32000);
    CHECK(tok->bos_id() == 1);
    CHECK(tok->eos_id() == 2);
    std::ifstream in(kData + "/tokenizer/llama_spm_cases.jsonl");
    REQUIRE(in);
    std::string line;
    int cases = 0;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        const auto c = nlohmann::json::parse(line);
        const std::string text = c["text"];
        const auto expected = c["ids"].get<std::vector<TokenId>>();
        INFO("case " << cases << ": " << c.dump());
        CHECK(tok->encode(text) == expected);
        CHECK(tok->decode(expected) == text);
        ++cases;
    }
    CHECK(cases >= 40);
}

TEST_CASE("spm: special tokens, bytes and decoding details", "[spm]") {
    const auto tok = SpmTokenizer::from_gguf(llama_vocab());
    CHECK(tok->add_bos());
    CHECK(tok->add_space_prefix());
    // "<s>" is BOS when special tokens are parsed; the text after it gets a space prefix again.
    CHECK(tok->encode("<s>Hello") == std::vector<TokenId>{1, 15043});
    CHECK(tok->encode("Hello<s>Hello") == std::vector<TokenId>{15043, 1, 15043});
    CHECK(tok->encode("<s>Hello", false) != std::vector<TokenId>{1, 15043});
    CHECK(tok->decode(std::vector<TokenId>{1, 15043, 3186, 2}) == "Hello world");
    CHECK(tok->token_bytes(15043) == " Hello");
    CHECK(tok->token_bytes(13) == "\n");    // <0x0A>
    CHECK(tok->token_bytes(1) == "");       // control
    CHECK(tok->token_bytes(0) == "\xe2\x96\x85");
    CHECK_THROWS_AS(tok->token_bytes(32000), InputError);
    CHECK_THROWS_AS(tok->token_bytes(-1), InputError);
    // Invalid UTF-8 falls back to bytes and decodes back exactly.
    const std::string junk = "a\xff\xfe b\xc3";
    CHECK(tok->decode(tok->encode(junk)) == junk);
}

TEST_CASE("spm: tok512.bin encodes the stories260K prompts as llama2.c does", "[spm]") {
    const SpmTokenizer& tok = tok512();
    CHECK(tok.n_vocab() == 512);
    CHECK(tok.token_bytes(1) == "");
    CHECK(tok.token_bytes(3 + 'A') == "A");
    nlohmann::json expected;
    std::ifstream(kData + "/reference/stories260K.expected.json") >> expected;
    int checked = 0;
    for (const auto& c : expected["cases"]) {
        if (!c.contains("ids")) continue;
        const std::string text = c["text"];
        std::vector<TokenId> ids = tok.encode(text);
        if (tok.add_bos()) ids.insert(ids.begin(), *tok.bos_id());
        CHECK(ids == c["ids"].get<std::vector<TokenId>>());
        CHECK(tok.decode(ids) == text);
        ++checked;
    }
    CHECK(checked > 0);
}

TEST_CASE("spm: tok512.bin round-trips text", "[spm]") {
    const SpmTokenizer& tok = tok512();
    for (const std::string text : {"Once upon a time, there was a little girl named Lily.", "  two  spaces ",
                                   "\"Hi!\" she said.\nThe end.", "caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\xa6\x99", ""}) {
        INFO(text);
        CHECK(tok.decode(tok.encode(text)) == text);
    }
    CHECK(tok.encode("").empty());
}

TEST_CASE("spm: inconsistent tokenizer data is refused naming the file", "[spm]") {
    using journey::test::GgufBuilder;
    auto refused = [](GgufBuilder b, const std::string& problem) {
        const auto path = journey::test::write_temp("tok.gguf", b.build());
        const auto mf = read_gguf(path);
        try {
            load_tokenizer_from_gguf(mf);
            FAIL("accepted a bad tokenizer");
        } catch (const ModelError& e) {
            INFO(e.what());
            CHECK(std::string(e.what()).find(path.string()) != std::string::npos);
            CHECK(std::string(e.what()).find(problem) != std::string::npos);
        }
    };
    auto base = [] {
        GgufBuilder b;
        b.kv_str("tokenizer.ggml.model", "llama").kv_strs("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a"});
        return b;
    };
    refused(GgufBuilder(), "tokenizer.ggml.model");
    refused(GgufBuilder().kv_str("tokenizer.ggml.model", "rwkv"), "unsupported tokenizer model 'rwkv'");
    refused(GgufBuilder().kv_str("tokenizer.ggml.model", "llama"), "is missing");
    refused(base().kv_f32s("tokenizer.ggml.scores", {0, 0}), "one score per token");
    refused(base().kv_i32s("tokenizer.ggml.token_type", {2, 3, 3, 9}), "unknown token type");
    refused(base().kv_i32s("tokenizer.ggml.token_type", {2, 3, 3, 6}), "<0xNN>");
    refused(base().kv_u32("tokenizer.ggml.bos_token_id", 4), "BOS token id 4");
    refused(base().kv_u32("tokenizer.ggml.add_bos_token", 1), "is not a bool");

    // A minimal valid one: unknown characters fall back to <unk> when there are no byte tokens.
    const auto mf = read_gguf(journey::test::write_temp("tok-ok.gguf", base().build()));
    const auto tok = load_tokenizer_from_gguf(mf);
    CHECK(tok->encode("a") == std::vector<TokenId>{0, 3});  // "▁" is unknown, "a" is a piece
    CHECK(tok->encode("ab") == std::vector<TokenId>{0, 3, 0});
}

TEST_CASE("spm: a damaged tokenizer.bin is refused naming the file", "[spm]") {
    journey::test::Bytes b;
    b.i32(8).f32(0.0f).i32(1000).raw("x", 1);
    const auto path = journey::test::write_temp("tokenizer.bin", b.buf);
    CHECK_THROWS_WITH(SpmTokenizer::from_llama2c(path), Catch::Contains(path.string()) && Catch::Contains("length 1000"));
    const auto few = journey::test::write_temp("few.bin", journey::test::Bytes().i32(8).f32(0).i32(1).raw("x", 1).buf);
    CHECK_THROWS_WITH(SpmTokenizer::from_llama2c(few), Catch::Contains("fewer than 259"));
}

TEST_CASE("gguf tokenizer: gpt2-tiny.gguf carries GPT-2's tokenizer", "[spm][gguf]") {
    const auto mf = read_gguf(kData + "/reference/gpt2-tiny.gguf");
    const auto tok = load_tokenizer_from_gguf(mf);
    CHECK(tok->kind() == "hf-bpe");
    CHECK(tok->n_vocab() == 50257);
    std::ifstream in(kData + "/tokenizer/gpt2_cases.jsonl");
    REQUIRE(in);
    std::string line;
    int cases = 0;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        const auto c = nlohmann::json::parse(line);
        INFO(c.dump());
        const auto ids = c["ids"].get<std::vector<TokenId>>();
        CHECK(tok->encode(c["text"].get<std::string>()) == ids);
        CHECK(tok->decode(ids) == c["text"].get<std::string>());
        ++cases;
    }
    CHECK(cases > 0);
}
