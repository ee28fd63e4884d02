// Every case of tests/data/tokenizer/gpt2_cases.jsonl (ids from Hugging Face tokenizers and
// llama.cpp) must give exactly its ids, and decode back to exactly its text.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "journey/text/bpe_tokenizer.h"
#include "journey/errors.h"
#include "journey/text/tokenizer_loader.h"

using namespace journey;

namespace {

const BpeTokenizer& gpt2_tokenizer() {
    static const auto tok = load_bpe_from_files(JOURNEY_SOURCE_DIR "/models/gpt2-tokenizer/vocab.json",
                                                JOURNEY_SOURCE_DIR "/models/gpt2-tokenizer/merges.txt");
    return *tok;
}

std::vector<nlohmann::json> gpt2_cases() {
    std::ifstream in(test::data_dir() + "/tokenizer/gpt2_cases.jsonl");
    REQUIRE(in);
    std::vector<nlohmann::json> cases;
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) cases.push_back(nlohmann::json::parse(line));
    return cases;
}

}  // namespace

TEST_CASE("GPT-2 BPE gives Hugging Face's ids on every shared case, and decodes back", "[tokenizer][gpt2]") {
    const auto cases = gpt2_cases();
    REQUIRE(cases.size() > 300);
    size_t with_ordinary = 0;
    for (const auto& c : cases) {
        const std::string text = c["text"].get<std::string>();
        const auto expected = c["ids"].get<std::vector<TokenId>>();
        INFO("case " << c.dump());
        CHECK(gpt2_tokenizer().encode(text) == expected);
        CHECK(gpt2_tokenizer().decode(expected) == text);
        if (c.contains("ids_ordinary")) {
            ++with_ordinary;
            const auto ordinary = c["ids_ordinary"].get<std::vector<TokenId>>();
            CHECK(gpt2_tokenizer().encode(text, /*parse_special=*/false) == ordinary);
            CHECK(gpt2_tokenizer().decode(ordinary) == text);
        }
    }
    CHECK(with_ordinary > 0);
}

TEST_CASE("GPT-2 BPE knows its special token", "[tokenizer][gpt2]") {
    CHECK(gpt2_tokenizer().n_vocab() == 50257);
    CHECK(gpt2_tokenizer().eos_id() == 50256);
    CHECK(gpt2_tokenizer().kind() == "gpt2-bpe");
    CHECK(gpt2_tokenizer().token_bytes(50256) == "<|endoftext|>");
}

TEST_CASE("Invalid UTF-8 is tokenized byte for byte and decodes back exactly", "[tokenizer][gpt2]") {
    const std::string samples[] = {
        std::string("\xff\xfe", 2), std::string("abc\x80 def", 8), std::string("\xe2\x82", 2),  // truncated
        std::string("x \xc3\x28 y", 6), std::string("\xed\xa0\x80", 3),                          // surrogate
        std::string("\0\0 \0", 4),
    };
    for (const auto& s : samples) {
        auto ids = gpt2_tokenizer().encode(s);
        CHECK(gpt2_tokenizer().decode(ids) == s);
    }
}

TEST_CASE("A partial UTF-8 token decodes to its exact bytes", "[tokenizer][gpt2]") {
    auto ids = gpt2_tokenizer().encode("🙂");  // U+1F642 is several tokens, none a whole character
    REQUIRE(ids.size() > 1);
    std::string joined;
    for (TokenId id : ids) joined += gpt2_tokenizer().token_bytes(id);
    CHECK(joined == "🙂");
    CHECK(gpt2_tokenizer().token_bytes(ids[0]).size() < 4);
}

TEST_CASE("Repeated words hit the cache and give the same ids", "[tokenizer][gpt2]") {
    std::string one = "The quick brown fox jumps over the lazy dog. ";
    std::string many;
    for (int i = 0; i < 50; ++i) many += one;
    auto a = gpt2_tokenizer().encode(one);
    auto b = gpt2_tokenizer().encode(many);
    REQUIRE(b.size() >= a.size() * 50 - 50);
    CHECK(gpt2_tokenizer().decode(b) == many);
    CHECK(std::vector<TokenId>(b.begin(), b.begin() + static_cast<long>(a.size()) - 1) ==
          std::vector<TokenId>(a.begin(), a.end() - 1));
}

TEST_CASE("Token ids outside the vocabulary are an input error", "[tokenizer][gpt2]") {
    CHECK_THROWS_AS(gpt2_tokenizer().token_bytes(-1), InputError);
    CHECK_THROWS_AS(gpt2_tokenizer().token_bytes(50257), InputError);
}
