// The GPT-2 pre-tokenizer, piece by piece, against what the regex gives in Hugging Face.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "journey/text/pretokenize.h"

using journey::gpt2_pretokenize;
using Pieces = std::vector<std::string>;

static Pieces split(const std::string& text) {
    Pieces out;
    for (auto p : gpt2_pretokenize(text)) out.emplace_back(p);
    return out;
}

TEST_CASE("pre-tokenizer: words take their leading space", "[pretokenize]") {
    CHECK(split("Hello world") == Pieces{"Hello", " world"});
    CHECK(split("") == Pieces{});
    CHECK(split("a") == Pieces{"a"});
}

TEST_CASE("pre-tokenizer: contractions are their own pieces, case-sensitive", "[pretokenize]") {
    CHECK(split("it's we're I've I'm you'll he'd don't") ==
          Pieces{"it", "'s", " we", "'re", " I", "'ve", " I", "'m", " you", "'ll", " he", "'d", " don", "'t"});
    CHECK(split("IT'S") == Pieces{"IT", "'", "S"});
    CHECK(split("'sa") == Pieces{"'s", "a"});
    CHECK(split("'") == Pieces{"'"});
    CHECK(split("?'s") == Pieces{"?'", "s"});
}

TEST_CASE("pre-tokenizer: letters, numbers and other characters form separate runs", "[pretokenize]") {
    CHECK(split("abc123def") == Pieces{"abc", "123", "def"});
    CHECK(split(" 2024 !!!?") == Pieces{" 2024", " !!!?"});
    CHECK(split("x+=1;") == Pieces{"x", "+=", "1", ";"});
    CHECK(split("Ⅻ½٣") == Pieces{"Ⅻ½٣"});           // Nl, No, Nd are all \p{N}
    CHECK(split("naïve café") == Pieces{"naïve", " café"});
    CHECK(split("東京2024") == Pieces{"東京", "2024"});
}

TEST_CASE("pre-tokenizer: a white-space run leaves its last space to the next word", "[pretokenize]") {
    CHECK(split("a   b") == Pieces{"a", "  ", " b"});
    CHECK(split("a\n\nb") == Pieces{"a", "\n", "\n", "b"});
    CHECK(split("a \nb") == Pieces{"a", " ", "\n", "b"});
    CHECK(split("a  ") == Pieces{"a", "  "});  // at the end the run stays whole
    CHECK(split("\tx") == Pieces{"\t", "x"});
    CHECK(split("  !") == Pieces{" ", " !"});
}

TEST_CASE("pre-tokenizer: white space is Unicode White_Space", "[pretokenize]") {
    CHECK(split("x \u0085y") == Pieces{"x", " ", "\u0085", "y"});     // U+0085 is white space
    CHECK(split("x \uFEFFy") == Pieces{"x", " \uFEFF", "y"});         // U+FEFF is not
    CHECK(split("a\u3000\u3000b") == Pieces{"a", "\u3000", "\u3000", "b"});
    CHECK(split("a\u00A0b") == Pieces{"a", "\u00A0", "b"});
}

TEST_CASE("pre-tokenizer: invalid UTF-8 bytes are other characters, never a crash", "[pretokenize]") {
    CHECK(split(std::string("a\xff\xfe b", 5)) == Pieces{"a", "\xff\xfe", " b"});
    CHECK(split(std::string(" \x80", 2)) == Pieces{" \x80"});
    CHECK(split(std::string("\xe2\x82", 2)) == Pieces{"\xe2\x82"});
}

TEST_CASE("pre-tokenizer: pieces always concatenate back to the text", "[pretokenize]") {
    std::string text = "Mixed 文字 and   spaces\t\n\r\n 123.45 ¿Qué? 🙂🙂 '\u2003x";
    std::string joined;
    for (const auto& p : split(text)) joined += p;
    CHECK(joined == text);
}
