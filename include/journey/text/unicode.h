// Unicode facts the tokenizers need, over UTF-8 text: decoding one character, the White_Space
// property, general categories (from utf8proc), and what Rust's char methods answer, since
// Hugging Face tokenizers is written in Rust and its normalizers and pre-tokenizers ask them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace journey::unicode {

struct Char {
    int32_t cp;  // -1 for a byte that does not start valid UTF-8
    size_t len;  // bytes (1 for an invalid byte)
};

// The character at text[pos] (pos < text.size()).
Char char_at(std::string_view text, size_t pos);
// Whether the whole text is valid UTF-8 (RFC 3629: no overlong forms, surrogates, > U+10FFFF).
bool is_valid_utf8(std::string_view text);
// Appends cp as UTF-8.
void append_utf8(std::string& out, int32_t cp);

// The White_Space property (PropList.txt): Rust's char::is_whitespace, Oniguruma's \s.
bool is_white_space(int32_t cp);
bool is_letter(int32_t cp);   // L*: \p{L}
bool is_numeric(int32_t cp);  // N* (Nd, Nl, No): \p{N}, Rust's char::is_numeric
bool is_mark(int32_t cp);     // M* (Mn, Mc, Me)
// Rust's char::is_alphanumeric (Alphabetic || Numeric), with Alphabetic approximated by L*, Nl
// and the marks (utf8proc has no Other_Alphabetic); only single_word added tokens ask it.
bool is_alphanumeric(int32_t cp);
// Hugging Face's is_punc: ASCII punctuation or a P* category.
bool is_punctuation(int32_t cp);

}  // namespace journey::unicode
