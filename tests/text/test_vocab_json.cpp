// vocab.json's scanner against nlohmann::json reading the same text: the same tokens in the same
// order, and an error exactly where nlohmann finds one (or a value that is not a token id).
#include <catch2/catch.hpp>

#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "journey/errors.h"
#include "journey/text/vocab_json.h"

using namespace journey;

namespace {

using Tokens = std::vector<std::pair<std::string, TokenId>>;

// What nlohmann makes of the text: the tokens in file order (the texts here have no duplicate
// keys), or nothing when it is not an object of ids in [0, 2^31), or not JSON at all.
std::optional<Tokens> nlohmann_tokens(const std::string& text) {
    nlohmann::ordered_json j;
    try {
        j = nlohmann::ordered_json::parse(text);
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
    if (!j.is_object()) return std::nullopt;
    Tokens out;
    for (const auto& [token, id] : j.items()) {
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) return std::nullopt;
        out.emplace_back(token, id.get<TokenId>());
    }
    return out;
}

Tokens tokens_of(const VocabJson& v) {
    Tokens out;
    for (const auto& [token, id] : v.tokens()) out.emplace_back(std::string(token), id);
    return out;
}

// The scanner's reading of text, or the ModelError it throws.
std::variant<Tokens, std::string> scanned(const std::string& text, bool* by_nlohmann = nullptr) {
    try {
        VocabJson v(text, "v.json");
        if (by_nlohmann) *by_nlohmann = v.read_by_nlohmann();
        return tokens_of(v);
    } catch (const ModelError& e) {
        return std::string(e.what());
    }
}

}  // namespace

TEST_CASE("vocab.json: escapes decode as nlohmann decodes them, without falling back", "[tokenizer][vocab-json]") {
    const std::string text =
        "{\"plain\": 0, \"a\\\"b\": 1, \"\\\\\": 2, \"\\/\": 3, \"\\b\\f\\n\\r\\t\": 4, \"\\u00e9\\u00E9\": 5,\n"
        " \"\\u0120the\": 6, \"\\ud83d\\ude00!\": 7, \"x\\u0000y\": 8, \"caf\xc3\xa9\": 9, \"\xf0\x9f\x98\x80\": 10,"
        "\t\"\": 2147483647 }\r\n";
    bool by_nlohmann = true;
    const auto got = scanned(text, &by_nlohmann);
    REQUIRE(std::holds_alternative<Tokens>(got));
    CHECK_FALSE(by_nlohmann);
    const Tokens expected = *nlohmann_tokens(text);
    CHECK(std::get<Tokens>(got) == expected);
    // Independent of nlohmann, too: the surrogate pair is U+1F600, \u0000 a zero byte.
    CHECK(expected[7].first == "\xf0\x9f\x98\x80!");
    CHECK(expected[8].first == std::string("x\0y", 3));
    CHECK(std::get<Tokens>(got)[8].first.size() == 3);
}

TEST_CASE("vocab.json: valid files the scanner does not expect are read by nlohmann", "[tokenizer][vocab-json]") {
    for (const std::string text : {"\xef\xbb\xbf{\"a\": 1}", "{\"a\": -0}", "{}", " {\"a\" : 1 , \"b\":2} "}) {
        INFO(text);
        const auto got = scanned(text);
        REQUIRE(std::holds_alternative<Tokens>(got));
        CHECK(std::get<Tokens>(got) == *nlohmann_tokens(text));
    }
    // A repeated token is kept twice, in file order (the tokenizer then decides).
    const auto twice = scanned("{\"a\": 1, \"a\": 2}");
    CHECK(std::get<Tokens>(twice) == Tokens{{"a", 1}, {"a", 2}});
}

TEST_CASE("vocab.json: malformed files are nlohmann's errors, naming the file", "[tokenizer][vocab-json][errors]") {
    struct Bad {
        std::string text, says;
    };
    const std::vector<Bad> bad = {
        {"", "invalid JSON"},
        {"{\"a\": 1,}", "invalid JSON"},
        {"{\"a\": 1", "invalid JSON"},
        {"{\"a\" 1}", "invalid JSON"},
        {"{\"a\": 1} x", "invalid JSON"},
        {"{\"a\": 01}", "invalid JSON"},
        {"{\"a\\x\": 1}", "invalid JSON"},
        {"{\"a\\u12\": 1}", "invalid JSON"},
        {"{\"\\ud83d\": 1}", "invalid JSON"},          // a high surrogate alone
        {"{\"\\ud83d\\u0041\": 1}", "invalid JSON"},   // ... followed by no low one
        {"{\"\\ude00\": 1}", "invalid JSON"},          // a low surrogate first
        {"{\"a\x01\": 1}", "invalid JSON"},            // a raw control character
        {"{\"\xc3\": 1}", "invalid JSON"},             // a truncated UTF-8 sequence
        {"{\"\xc0\xaf\": 1}", "invalid JSON"},         // an overlong one
        {"{\"\xed\xa0\x80\": 1}", "invalid JSON"},     // an encoded surrogate
        {"{\"\xf4\x90\x80\x80\": 1}", "invalid JSON"}, // past U+10FFFF
        {"{\"a\": 1.0}", "not an integer in [0, 2^31)"},
        {"{\"a\": -1}", "not an integer in [0, 2^31)"},
        {"{\"a\": 2147483648}", "not an integer in [0, 2^31)"},
        {"{\"a\": \"1\"}", "not an integer in [0, 2^31)"},
        {"{\"a\": {}}", "a token's id is an object"},
        {"[1, 2]", "not a JSON object"},
    };
    for (const Bad& b : bad) {
        INFO(b.text);
        const auto got = scanned(b.text);
        REQUIRE(std::holds_alternative<std::string>(got));
        CHECK_THAT(std::get<std::string>(got), Catch::StartsWith("v.json: ") && Catch::Contains(b.says));
        CHECK_FALSE(nlohmann_tokens(b.text));
    }
}

TEST_CASE("vocab.json: random tokens and ids read as nlohmann reads them", "[tokenizer][vocab-json]") {
    // Pieces of keys and values, valid and not, with every escape and UTF-8 edge case.
    const std::vector<std::string> key_pieces = {
        "a", "\xc4\xa0", "\\u0120", "\\u00e9", "\\u00E9", "\\ud83d\\ude00", "\\uD83D\\uDE00", "\\ud83d", "\\ude00",
        "\\udbff\\udfff", "\\ud83dx", "\\u12", "\\uzzzz", "\\x", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r",
        "\\t", "\\u0000", "\x01", "\x1f", "\x7f", " ", "\xc3\xa9", "\xc3", "\xc0\xaf", "\xe0\x80\x80",
        "\xed\x9f\xbf", "\xed\xa0\x80", "\xef\xbf\xbf", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf", "\xf4\x90\x80\x80",
        "\xf0\x8f\xbf\xbf", "\xf8\x88\x80\x80\x80", "\xff", "\"", "\\"};
    const std::vector<std::string> values = {"0", "7", "50256", "2147483647", "2147483648", "-0", "-1", "01", "1.0",
                                             "1e3", "\"x\"", "null", "true", "[]", "{}", "99999999999999999999"};
    const std::vector<std::string> spaces = {"", " ", "\n", "\t", "\r\n", "\xef\xbb\xbf", "x", ","};
    std::mt19937 rng(20240601);
    auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
    int scanner_read = 0, errors = 0;
    for (int i = 0; i < 4000; ++i) {
        std::string key;
        for (int k = 1 + int(rng() % 3); k > 0; --k) key += pick(key_pieces);
        // Mostly well-formed around the key, so that most texts reach the scanner's string code.
        const bool odd = rng() % 4 == 0;
        const std::string text = (odd ? pick(spaces) : "") + "{\"" + key + "\":" + (odd ? pick(spaces) : " ") +
                                 (odd || rng() % 2 ? pick(values) : "5") + ", \"z\": 1}" + (odd ? pick(spaces) : "");
        INFO(text);
        bool by_nlohmann = true;
        const auto got = scanned(text, &by_nlohmann);
        const auto expected = nlohmann_tokens(text);
        if (expected) {
            REQUIRE(std::holds_alternative<Tokens>(got));
            CHECK(std::get<Tokens>(got) == *expected);
            scanner_read += !by_nlohmann;
        } else {
            REQUIRE(std::holds_alternative<std::string>(got));
            CHECK_THAT(std::get<std::string>(got), Catch::StartsWith("v.json: "));
            ++errors;
        }
    }
    // Both outcomes are common: the comparison tests the scanner, not only the fallback.
    CHECK(scanner_read > 500);
    CHECK(errors > 500);
}

TEST_CASE("vocab.json: GPT-2's whole vocabulary reads as nlohmann reads it", "[tokenizer][vocab-json]") {
    std::ifstream in(JOURNEY_SOURCE_DIR "/models/gpt2-tokenizer/vocab.json", std::ios::binary);
    REQUIRE(in);
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string text = buf.str();
    const VocabJson v(text, "vocab.json");
    CHECK_FALSE(v.read_by_nlohmann());
    const Tokens got = tokens_of(v);
    CHECK(got.size() == 50257);
    CHECK(got == *nlohmann_tokens(text));
}
