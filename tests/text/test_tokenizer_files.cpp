// Tokenizer files: tokenizer.json in both merge formats, and every way a file can be unusable.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "journey/errors.h"
#include "journey/text/tokenizer_loader.h"
#include "files.h"

using namespace journey;
using journey::test::TempDir;  // a fresh temporary directory, removed with everything in it at the end of the test
namespace fs = std::filesystem;

namespace {

// A tiny byte-level vocabulary: the 256 byte tokens, then "ab" and "abc".
nlohmann::json tiny_vocab() {
    nlohmann::json v = nlohmann::json::object();
    // Byte-to-unicode form of each byte, as GPT-2's vocab.json writes it.
    int next = 256;
    for (int b = 0; b < 256; ++b) {
        bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        int cp = printable ? b : next++;
        std::string s;
        if (cp < 0x80) s += static_cast<char>(cp);
        else { s += static_cast<char>(0xC0 | (cp >> 6)); s += static_cast<char>(0x80 | (cp & 0x3F)); }
        v[s] = b;
    }
    v["ab"] = 256;
    v["abc"] = 257;
    v["<|endoftext|>"] = 258;
    return v;
}

std::string gpt2_dir() { return JOURNEY_SOURCE_DIR "/models/gpt2-tokenizer"; }

template <class F>
std::string model_error_of(F&& f) {
    try {
        f();
    } catch (const ModelError& e) {
        return e.what();
    }
    FAIL("no ModelError thrown");
    return "";
}

}  // namespace

TEST_CASE("vocab.json + merges.txt: a tiny vocabulary merges by rank", "[tokenizer][files]") {
    TempDir d;
    auto vocab = d.write("vocab.json", tiny_vocab().dump());
    auto merges = d.write("merges.txt", "#version: 0.2\na b\nab c\n");
    auto tok = load_bpe_from_files(vocab, merges);
    CHECK(tok->encode("abc") == std::vector<TokenId>{257});
    CHECK(tok->encode("abd") == std::vector<TokenId>{256, 'd'});
    CHECK(tok->encode("x<|endoftext|>") == std::vector<TokenId>{'x', 258});
    CHECK(tok->eos_id() == 258);
}

TEST_CASE("merges.txt without a #version line: its first line is a merge, as in Hugging Face", "[tokenizer][files]") {
    TempDir d;
    auto vocab = d.write("vocab.json", tiny_vocab().dump());
    auto merges = d.write("merges.txt", "a b\nab c");  // no final newline either
    CHECK(load_bpe_from_files(vocab, merges)->encode("abc") == std::vector<TokenId>{257});
    auto crlf = d.write("crlf.txt", "#version: 0.2\r\na b\r\nab c\r\n");  // Windows line ends
    CHECK(load_bpe_from_files(vocab, crlf)->encode("abc") == std::vector<TokenId>{257});
}

TEST_CASE("tokenizer.json gives GPT-2's ids with either merge format", "[tokenizer][files]") {
    auto reference = load_bpe_from_files(gpt2_dir() + "/vocab.json", gpt2_dir() + "/merges.txt");
    std::ifstream vin(gpt2_dir() + "/vocab.json");
    nlohmann::json vocab = nlohmann::json::parse(vin);
    std::ifstream min(gpt2_dir() + "/merges.txt");
    nlohmann::json as_strings = nlohmann::json::array(), as_pairs = nlohmann::json::array();
    std::string line;
    std::getline(min, line);  // #version
    while (std::getline(min, line)) {
        as_strings.push_back(line);
        auto sp = line.find(' ');
        as_pairs.push_back({line.substr(0, sp), line.substr(sp + 1)});
    }
    const std::string text = "Hello world<|endoftext|> it's 2024, naïve café!  \n\tOK";
    TempDir d;
    for (const auto& merges : {as_strings, as_pairs}) {
        nlohmann::json root = {
            {"version", "1.0"},
            {"added_tokens", {{{"id", 50256}, {"content", "<|endoftext|>"}, {"special", true}}}},
            {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
            {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}},
        };
        auto tok = load_bpe_from_tokenizer_json(d.write("tokenizer.json", root.dump()));
        CHECK(tok->encode(text) == reference->encode(text));
        CHECK(tok->encode(text, false) == reference->encode(text, false));
        CHECK(tok->eos_id() == 50256);
    }
    CHECK(load_tokenizer_dir(d.path.string())->encode(text) == reference->encode(text));
    CHECK(load_tokenizer_dir(gpt2_dir())->encode(text) == reference->encode(text));
}

TEST_CASE("unusable tokenizer files are model errors naming the file", "[tokenizer][files][errors]") {
    TempDir d;
    auto vocab = d.write("vocab.json", tiny_vocab().dump());
    auto merges = d.write("merges.txt", "#version: 0.2\na b\nab c\n");

    SECTION("missing file") {
        auto missing = (d.path / "nope.json").string();
        CHECK_THAT(model_error_of([&] { load_bpe_from_files(missing, merges); }), Catch::Contains(missing));
        CHECK_THAT(model_error_of([&] { load_bpe_from_files(vocab, missing); }), Catch::Contains(missing));
        CHECK_THAT(model_error_of([&] { load_bpe_from_tokenizer_json(missing); }), Catch::Contains(missing));
    }
    SECTION("invalid JSON") {
        auto bad = d.write("bad.json", "{\"a\": 1,");
        auto msg = model_error_of([&] { load_bpe_from_files(bad, merges); });
        CHECK_THAT(msg, Catch::Contains(bad) && Catch::Contains("invalid JSON"));
        CHECK_THAT(model_error_of([&] { load_bpe_from_tokenizer_json(bad); }), Catch::Contains(bad));
    }
    SECTION("a vocabulary id that is not an integer") {
        auto v = tiny_vocab();
        v["abc"] = "x";
        auto bad = d.write("v.json", v.dump());
        CHECK_THAT(model_error_of([&] { load_bpe_from_files(bad, merges); }), Catch::Contains(bad));
    }
    SECTION("duplicate ids in the vocabulary") {
        auto v = tiny_vocab();
        v["abc"] = 256;  // same id as "ab"
        auto bad = d.write("v.json", v.dump());
        auto msg = model_error_of([&] { load_bpe_from_files(bad, merges); });
        CHECK_THAT(msg, Catch::Contains(bad) && Catch::Contains("256"));
        CHECK_THAT(msg, Catch::Contains("\"ab\" and \"abc\""));  // both tokens, in file order
    }
    SECTION("a merge naming an unknown token, with its line") {
        auto bad = d.write("m.txt", "#version: 0.2\na b\nab zz\n");
        auto msg = model_error_of([&] { load_bpe_from_files(vocab, bad); });
        CHECK_THAT(msg, Catch::Contains(bad + ":3") && Catch::Contains("zz"));
    }
    SECTION("a merge whose result is not in the vocabulary") {
        auto bad = d.write("m.txt", "#version: 0.2\na b\nb c\n");
        auto msg = model_error_of([&] { load_bpe_from_files(vocab, bad); });
        CHECK_THAT(msg, Catch::Contains(bad + ":3") && Catch::Contains("\"bc\""));
    }
    SECTION("a merges line that is not two tokens") {
        auto bad = d.write("m.txt", "#version: 0.2\na b\nabc\n");
        CHECK_THAT(model_error_of([&] { load_bpe_from_files(vocab, bad); }), Catch::Contains(bad + ":3"));
        auto blank = d.write("m2.txt", "a b\n\nab c\n");
        CHECK_THAT(model_error_of([&] { load_bpe_from_files(vocab, blank); }), Catch::Contains(blank + ":2"));
    }
    SECTION("a missing #version line with a first line that is not a merge") {
        auto bad = d.write("m.txt", "version 0.2 here\na b\n");
        CHECK_THAT(model_error_of([&] { load_bpe_from_files(vocab, bad); }), Catch::Contains(bad + ":1"));
    }
    SECTION("a vocabulary without every byte") {
        auto v = tiny_vocab();
        v.erase("a");
        auto bad = d.write("v.json", v.dump());
        CHECK_THAT(model_error_of([&] { load_bpe_from_files(bad, merges); }), Catch::Contains(bad));
    }
    SECTION("tokenizer.json that is not a byte-level BPE") {
        nlohmann::json root = {{"model", {{"type", "WordPiece"}, {"vocab", tiny_vocab()}}}};
        auto bad = d.write("tokenizer.json", root.dump());
        CHECK_THAT(model_error_of([&] { load_bpe_from_tokenizer_json(bad); }), Catch::Contains(bad));
        nlohmann::json meta = {{"pre_tokenizer", {{"type", "Metaspace"}}},
                               {"model", {{"type", "BPE"}, {"vocab", tiny_vocab()}, {"merges", {"a b"}}}}};
        auto bad2 = d.write("t2.json", meta.dump());
        CHECK_THAT(model_error_of([&] { load_bpe_from_tokenizer_json(bad2); }), Catch::Contains("Metaspace"));
    }
    SECTION("a tokenizer.json merge naming an unknown token") {
        nlohmann::json root = {{"model", {{"type", "BPE"}, {"vocab", tiny_vocab()}, {"merges", {"a b", "q zz"}}}}};
        auto bad = d.write("tokenizer.json", root.dump());
        CHECK_THAT(model_error_of([&] { load_bpe_from_tokenizer_json(bad); }), Catch::Contains(bad) && Catch::Contains("zz"));
    }
    SECTION("a directory without tokenizer files") {
        TempDir empty;
        CHECK_THAT(model_error_of([&] { load_tokenizer_dir(empty.path.string()); }), Catch::Contains(empty.path.string()));
    }
}

TEST_CASE("the in-memory constructor takes a vocabulary and merges, as a GGUF reader has them", "[tokenizer][files]") {
    BpeVocab vocab;  // views into the JSON's keys
    const nlohmann::json tiny = tiny_vocab();
    for (const auto& [token, id] : tiny.items()) vocab.emplace_back(token, id.get<TokenId>());
    BpeTokenizer tok(vocab, {{"a", "b"}, {"ab", "c"}}, {{258, "<|endoftext|>", true}});
    CHECK(tok.encode("abcabc<|endoftext|>") == std::vector<TokenId>{257, 257, 258});
    CHECK(tok.encode("<|endoftext|>", false).size() > 1);
    CHECK_THROWS_AS(BpeTokenizer(vocab, {{"a", "zz"}}, {}), ModelError);
}
