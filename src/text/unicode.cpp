#include "journey/text/unicode.h"

#include <utf8proc.h>

namespace journey::unicode {

Char char_at(std::string_view text, size_t pos) {
    const auto c = static_cast<unsigned char>(text[pos]);
    if (c < 0x80) return {c, 1};
    utf8proc_int32_t cp = -1;
    const auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + pos),
                                    static_cast<utf8proc_ssize_t>(text.size() - pos), &cp);
    if (n <= 0 || cp < 0) return {-1, 1};
    return {cp, static_cast<size_t>(n)};
}

bool is_valid_utf8(std::string_view text) {
    for (size_t pos = 0; pos < text.size();) {
        if (static_cast<unsigned char>(text[pos]) < 0x80) {
            ++pos;
            continue;
        }
        const Char ch = char_at(text, pos);
        if (ch.cp < 0) return false;
        pos += ch.len;
    }
    return true;
}

void append_utf8(std::string& out, int32_t cp) {
    utf8proc_uint8_t buf[4];
    const auto n = utf8proc_encode_char(cp, buf);
    out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

bool is_white_space(int32_t cp) {
    switch (cp) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20:
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029:
    case 0x202F: case 0x205F: case 0x3000:
        return true;
    default:
        return cp >= 0x2000 && cp <= 0x200A;
    }
}

namespace {
utf8proc_category_t category(int32_t cp) { return utf8proc_category(cp); }
}  // namespace

bool is_letter(int32_t cp) {
    const auto c = category(cp);
    return c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO;
}

bool is_numeric(int32_t cp) {
    const auto c = category(cp);
    return c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO;
}

bool is_mark(int32_t cp) {
    const auto c = category(cp);
    return c >= UTF8PROC_CATEGORY_MN && c <= UTF8PROC_CATEGORY_ME;
}

bool is_alphanumeric(int32_t cp) { return is_letter(cp) || is_numeric(cp) || is_mark(cp); }

bool is_punctuation(int32_t cp) {
    if (cp < 0x80) return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) || (cp >= 0x5B && cp <= 0x60) ||
                          (cp >= 0x7B && cp <= 0x7E);
    const auto c = category(cp);
    return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

}  // namespace journey::unicode
