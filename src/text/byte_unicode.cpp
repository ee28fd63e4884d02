#include "journey/text/byte_unicode.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include <utf8proc.h>

namespace journey {
namespace {

// bytes_to_unicode() of OpenAI's encoder.py: printable Latin-1 bytes stand for themselves,
// the other 68 bytes take the code points 256, 257, ... in byte order.
const std::array<uint32_t, 256>& byte_code_points() {
    static const std::array<uint32_t, 256> table = [] {
        std::array<uint32_t, 256> t{};
        uint32_t next = 256;
        for (uint32_t b = 0; b < 256; ++b) {
            bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            t[b] = printable ? b : next++;
        }
        return t;
    }();
    return table;
}

void append_utf8(std::string& out, uint32_t cp) {
    utf8proc_uint8_t buf[4];
    auto n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(cp), buf);
    out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(n));
}

}  // namespace

std::string bytes_to_unicode(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char b : bytes) append_utf8(out, byte_code_points()[b]);
    return out;
}

std::string unicode_to_bytes(std::string_view text) {
    std::string out(text.size(), '\0');
    out.resize(static_cast<size_t>(unicode_to_bytes(text, out.data()) - out.data()));
    return out;
}

namespace {

// Inverse map over the code points 0..323 that the table uses.
const std::array<int16_t, 324>& byte_of() {
    static const std::array<int16_t, 324> inv = [] {
        std::array<int16_t, 324> t;
        t.fill(-1);
        for (int b = 0; b < 256; ++b) t[byte_code_points()[b]] = static_cast<int16_t>(b);
        return t;
    }();
    return inv;
}

// One character of `text` at `pos` mapped back to its byte (-1 outside the map), its length in
// bytes (0 for bytes that are not UTF-8).
struct Mapped {
    int byte;
    size_t len;
};
Mapped map_back(std::string_view text, size_t pos) {
    const auto& inv = byte_of();
    utf8proc_int32_t cp = static_cast<unsigned char>(text[pos]);
    utf8proc_ssize_t n = 1;
    if (cp >= 0x80)
        n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + pos),
                             static_cast<utf8proc_ssize_t>(text.size() - pos), &cp);
    if (n <= 0) return {-1, 0};
    const int byte = cp < static_cast<utf8proc_int32_t>(inv.size()) ? inv[size_t(cp)] : -1;
    return {byte, static_cast<size_t>(n)};
}

}  // namespace

char* unicode_to_bytes(std::string_view text, char* w) {
    // Every character becomes one byte or stays as it is, so the bytes are never longer.
    for (size_t pos = 0; pos < text.size();) {
        const Mapped m = map_back(text, pos);
        if (m.len == 0) {  // not valid UTF-8: keep the byte
            *w++ = text[pos++];
            continue;
        }
        if (m.byte >= 0) *w++ = static_cast<char>(m.byte);
        else w = std::copy_n(text.data() + pos, m.len, w);
        pos += m.len;
    }
    return w;
}

char* byte_level_to_bytes(std::string_view text, char* w) {
    for (size_t pos = 0; pos < text.size();) {
        const Mapped m = map_back(text, pos);
        if (m.byte < 0) return nullptr;
        *w++ = static_cast<char>(m.byte);
        pos += m.len;
    }
    return w;
}

}  // namespace journey
