// Each stage of the tokenizer.json pipeline on its own, with the examples Hugging Face
// tokenizers' documentation and unit tests give for them (the expected pieces are theirs).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "journey/errors.h"
#include "journey/text/hf/added_tokens.h"
#include "journey/text/hf/decoder.h"
#include "journey/text/hf/normalizer.h"
#include "journey/text/hf/pre_tokenizer.h"

using namespace journey;
using json = nlohmann::json;
using Pieces = std::vector<std::string>;

namespace {

Pieces pre_tokenize(const json& j, const std::string& text) {
    const auto pre = make_pre_tokenizer(HfPart{"test.json", "pre_tokenizer", j});
    Pieces out;
    pre->split(text, true, [&](std::string_view p, bool) { out.emplace_back(p); });
    return out;
}

std::string normalize(const json& j, std::string text) {
    make_normalizer(HfPart{"test.json", "normalizer", j})->normalize(text);
    return text;
}

std::string decode(const json& j, std::vector<std::string> tokens) {
    make_decoder(HfPart{"test.json", "decoder", j})->decode_chain(tokens, false);
    std::string out;
    for (const auto& t : tokens) out += t;
    return out;
}

json split(const json& pattern, const char* behavior, bool invert = false) {
    return {{"type", "Split"}, {"pattern", pattern}, {"behavior", behavior}, {"invert", invert}};
}

}  // namespace

TEST_CASE("Split: every behavior, string and regex patterns, invert", "[hf-tokenizer][stages]") {
    const json space = {{"String", " "}};
    const std::string text = "How are you doing?";
    CHECK(pre_tokenize(split(space, "Removed"), text) == Pieces{"How", "are", "you", "doing?"});
    CHECK(pre_tokenize(split(space, "Isolated"), text) == Pieces{"How", " ", "are", " ", "you", " ", "doing?"});
    CHECK(pre_tokenize(split(space, "MergedWithPrevious"), text) == Pieces{"How ", "are ", "you ", "doing?"});
    CHECK(pre_tokenize(split(space, "MergedWithNext"), text) == Pieces{"How", " are", " you", " doing?"});
    CHECK(pre_tokenize(split({{"String", "-"}}, "Contiguous"), "the-final--countdown") ==
          Pieces{"the", "-", "final", "--", "countdown"});
    CHECK(pre_tokenize(split({{"Regex", "\\s+"}}, "Removed"), "How  are\tyou") == Pieces{"How", "are", "you"});
    CHECK(pre_tokenize(split({{"Regex", "\\w+"}}, "Removed", true), "Hey, man!") == Pieces{"Hey", "man"});
}

TEST_CASE("Digits, Punctuation, Whitespace, WhitespaceSplit, Metaspace, ByteLevel", "[hf-tokenizer][stages]") {
    CHECK(pre_tokenize({{"type", "Digits"}, {"individual_digits", true}}, "Hey 123 friend!") ==
          Pieces{"Hey ", "1", "2", "3", " friend!"});
    CHECK(pre_tokenize({{"type", "Digits"}, {"individual_digits", false}}, "Hey 123 friend!") == Pieces{"Hey ", "123", " friend!"});
    CHECK(pre_tokenize({{"type", "Punctuation"}}, "Hey friend!     How are you?!?") ==
          Pieces{"Hey friend", "!", "     How are you", "?", "!", "?"});
    CHECK(pre_tokenize({{"type", "Whitespace"}}, "How are you doing?") == Pieces{"How", "are", "you", "doing", "?"});
    CHECK(pre_tokenize({{"type", "WhitespaceSplit"}}, "Hey man!") == Pieces{"Hey", "man!"});
    const json meta = {{"type", "Metaspace"}, {"replacement", "\xe2\x96\x81"}, {"prepend_scheme", "always"}, {"split", true}};
    CHECK(pre_tokenize(meta, "Hey friend!") == Pieces{"\xe2\x96\x81Hey", "\xe2\x96\x81" "friend!"});
    CHECK(pre_tokenize({{"type", "ByteLevel"}, {"add_prefix_space", true}, {"use_regex", true}}, "Hello my friend") ==
          Pieces{" Hello", " my", " friend"});
}

TEST_CASE("normalizers", "[hf-tokenizer][stages]") {
    CHECK(normalize({{"type", "NFKC"}}, "\xef\xac\x81") == "fi");                       // ﬁ
    CHECK(normalize({{"type", "NFD"}}, "\xc3\xa9") == "e\xcc\x81");                     // é
    CHECK(normalize({{"type", "NFC"}}, "e\xcc\x81") == "\xc3\xa9");
    CHECK(normalize({{"type", "Lowercase"}}, "HeLLo \xc3\x89") == "hello \xc3\xa9");
    CHECK(normalize({{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}}, "  hi \n") == "hi");
    CHECK(normalize({{"type", "Sequence"}, {"normalizers", {{{"type", "NFD"}}, {{"type", "StripAccents"}}}}}, "caf\xc3\xa9") == "cafe");
    CHECK(normalize({{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "_"}}, "a b c") == "a_b_c");
    CHECK(normalize({{"type", "Replace"}, {"pattern", {{"Regex", "\\s+"}}}, {"content", " "}}, "a \t b") == "a b");
    CHECK(normalize({{"type", "Prepend"}, {"prepend", "_"}}, "a") == "_a");
    CHECK(normalize({{"type", "Prepend"}, {"prepend", "_"}}, "").empty());
}

TEST_CASE("decoders", "[hf-tokenizer][stages]") {
    CHECK(decode({{"type", "ByteFallback"}}, {"<0x61>", "<0x62>", "c"}) == "abc");
    CHECK(decode({{"type", "ByteLevel"}}, {"\xc4\xa0hello", "\xc4\xa0world"}) == " hello world");
    CHECK(decode({{"type", "Metaspace"}, {"replacement", "\xe2\x96\x81"}, {"prepend_scheme", "always"}},
                 {"\xe2\x96\x81Hey", "\xe2\x96\x81" "friend"}) == "Hey friend");
    const json llama = {{"type", "Sequence"},
                        {"decoders",
                         {{{"type", "Replace"}, {"pattern", {{"String", "\xe2\x96\x81"}}}, {"content", " "}},
                          {{"type", "ByteFallback"}},
                          {{"type", "Fuse"}},
                          {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
    CHECK(decode(llama, {"\xe2\x96\x81Hello", "<0xE4>", "<0xB8>", "<0xAD>", "\xe2\x96\x81" "a"}) == "Hello\xe4\xb8\xad a");
}

TEST_CASE("added tokens: leftmost-longest, lstrip, rstrip, single_word, special", "[hf-tokenizer][stages]") {
    auto cut = [](const AddedTokenMatcher& m, const std::string& text, bool parse_special = true) {
        std::vector<AddedTokenMatcher::Segment> segs;
        m.split(text, parse_special, segs);
        Pieces out;
        for (const auto& s : segs) out.push_back((s.token ? "#" : "") + text.substr(s.begin, s.end - s.begin));
        return out;
    };
    HfAddedToken mask{.id = 1, .content = "<mask>", .special = true, .lstrip = true, .rstrip = true};
    HfAddedToken ab{.id = 2, .content = "ab"}, abc{.id = 3, .content = "abc"};
    const AddedTokenMatcher m({mask, ab, abc});
    CHECK(cut(m, "I saw a <mask>  !") == Pieces{"I saw a", "# <mask>  ", "!"});
    CHECK(cut(m, "xabcab") == Pieces{"x", "#abc", "#ab"});
    CHECK(cut(m, "a <mask> b", false) == Pieces{"a <mask> b"});
    HfAddedToken word{.id = 4, .content = "yes", .single_word = true};
    const AddedTokenMatcher w({word});
    CHECK(cut(w, "yes, eyes yesno") == Pieces{"#yes", ", eyes yesno"});
}

TEST_CASE("unknown stage types are refused naming the part", "[hf-tokenizer][stages]") {
    CHECK_THROWS_WITH(pre_tokenize({{"type", "UnicodeScripts"}}, "a"),
                      Catch::StartsWith("test.json: pre_tokenizer: pre_tokenizer type \"UnicodeScripts\" is not supported"));
    CHECK_THROWS_AS(normalize({{"type", "Precompiled"}}, "a"), ModelError);
    CHECK_THROWS_AS(decode({{"type", "CTC"}}, {"a"}), ModelError);
}
