#include "journey/text/pretokenize.h"

#include <array>
#include <cstdint>

#include <utf8proc.h>

#include "journey/text/unicode.h"

namespace journey {
namespace {

// The three classes of the regex, and everything else.
enum class CharClass : uint8_t { Letter, Number, Space, Other };

CharClass classify_code_point(uint32_t cp) {
    if (unicode::is_white_space(int32_t(cp))) return CharClass::Space;
    switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
        return CharClass::Letter;
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
        return CharClass::Number;
    default:
        return CharClass::Other;
    }
}

// ASCII fast path: the class of every byte below 0x80, the same as classify_code_point() gives
// (in ASCII, \p{L} is a-z A-Z, \p{N} is 0-9, and White_Space is 0x09-0x0D and the space).
constexpr std::array<CharClass, 128> ascii_classes = [] {
    std::array<CharClass, 128> t{};
    for (int c = 0; c < 128; ++c) {
        bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        bool space = (c >= 0x09 && c <= 0x0D) || c == ' ';
        t[c] = letter ? CharClass::Letter
             : (c >= '0' && c <= '9') ? CharClass::Number
             : space ? CharClass::Space
                     : CharClass::Other;
    }
    return t;
}();

struct Char {
    CharClass cls;
    size_t len;  // bytes
};

// The character starting at text[pos]. An invalid UTF-8 byte is one Other character.
inline Char char_at(std::string_view text, size_t pos) {
    auto c = static_cast<unsigned char>(text[pos]);
    if (c < 0x80) return {ascii_classes[c], 1};
    utf8proc_int32_t cp = -1;
    auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + pos),
                              static_cast<utf8proc_ssize_t>(text.size() - pos), &cp);
    if (n <= 0 || cp < 0) return {CharClass::Other, 1};
    return {classify_code_point(static_cast<uint32_t>(cp)), static_cast<size_t>(n)};
}

// End of the run of characters of class `cls` starting at pos.
size_t run_end(std::string_view text, size_t pos, CharClass cls) {
    while (pos < text.size()) {
        auto c = static_cast<unsigned char>(text[pos]);
        if (c < 0x80) {  // fast path
            if (ascii_classes[c] != cls) break;
            ++pos;
            continue;
        }
        Char ch = char_at(text, pos);
        if (ch.cls != cls) break;
        pos += ch.len;
    }
    return pos;
}

// 's|'t|'re|'ve|'m|'ll|'d at text[pos] == '\'': the length matched, or 0.
size_t contraction_len(std::string_view text, size_t pos) {
    std::string_view rest = text.substr(pos + 1);
    if (rest.empty()) return 0;
    char a = rest[0];
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if (rest.size() >= 2) {
        char b = rest[1];
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    }
    return 0;
}

// \s+(?!\S)|\s+ starting at pos: the whole run if it reaches the end of the text or is one
// character long, else the run without its last character (which then leads the next piece).
size_t white_space_end(std::string_view text, size_t pos) {
    size_t last_start = pos, end = pos;
    while (end < text.size()) {
        Char ch = char_at(text, end);
        if (ch.cls != CharClass::Space) break;
        last_start = end;
        end += ch.len;
    }
    if (end == text.size() || last_start == pos) return end;
    return last_start;
}

}  // namespace

size_t gpt2_piece_end(std::string_view text, size_t pos) {
    if (text[pos] == '\'') {
        if (size_t n = contraction_len(text, pos)) return pos + n;
    }
    Char first = char_at(text, pos);
    size_t body = pos;  // where the ` ?` prefix ends
    CharClass cls = first.cls;
    if (text[pos] == ' ' && pos + 1 < text.size()) {
        CharClass next = char_at(text, pos + 1).cls;
        if (next != CharClass::Space) {
            body = pos + 1;
            cls = next;
        }
    }
    if (cls == CharClass::Space) return white_space_end(text, pos);
    return run_end(text, body, cls);
}

std::vector<std::string_view> gpt2_pretokenize(std::string_view text) {
    std::vector<std::string_view> pieces;
    for (size_t pos = 0; pos < text.size();) {
        size_t end = gpt2_piece_end(text, pos);
        pieces.push_back(text.substr(pos, end - pos));
        pos = end;
    }
    return pieces;
}

}  // namespace journey
