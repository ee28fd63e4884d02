// Streaming UTF-8: emit whole characters, hold back a tail that may still complete.
#include "journey/text/utf8_stream.h"

#include <cstdint>

namespace journey {

namespace {

struct LeadInfo {
    size_t length;          // bytes in the whole character; 0 = this byte cannot start one
    uint8_t second_lo, second_hi;  // allowed range of the second byte (RFC 3629 table)
};

// RFC 3629: excludes overlong forms (C0, C1, E0 80..9F, F0 80..8F), surrogates (ED A0..BF)
// and code points above U+10FFFF (F4 90..BF, F5..FF).
LeadInfo lead_info(uint8_t b) {
    if (b < 0x80) return {1, 0, 0};
    if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
    if (b == 0xE0) return {3, 0xA0, 0xBF};
    if (b == 0xED) return {3, 0x80, 0x9F};
    if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
    if (b == 0xF0) return {4, 0x90, 0xBF};
    if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
    if (b == 0xF4) return {4, 0x80, 0x8F};
    return {0, 0, 0};  // continuation byte, C0, C1, F5..FF
}

}  // namespace

size_t utf8_complete_prefix(std::string_view s) {
    size_t i = 0;
    while (i < s.size()) {
        const LeadInfo lead = lead_info(uint8_t(s[i]));
        if (lead.length <= 1) {  // ASCII, or a byte that starts nothing: emit it alone
            ++i;
            continue;
        }
        // Count the bytes after the lead that continue the character validly.
        size_t n = 1;
        while (n < lead.length && i + n < s.size()) {
            const uint8_t b = uint8_t(s[i + n]);
            const bool ok = n == 1 ? (b >= lead.second_lo && b <= lead.second_hi) : (b >= 0x80 && b <= 0xBF);
            if (!ok) break;
            ++n;
        }
        if (n == lead.length) {
            i += n;  // a whole character
        } else if (i + n == s.size()) {
            return i;  // a valid beginning that ran out of bytes: it may still complete
        } else {
            i += n;  // broken by the byte at i + n: emit the dead prefix, re-examine that byte
        }
    }
    return i;
}

std::string Utf8Stream::feed(std::string_view bytes) {
    pending_.append(bytes);
    const size_t n = utf8_complete_prefix(pending_);
    std::string ready = pending_.substr(0, n);
    pending_.erase(0, n);
    return ready;
}

std::string Utf8Stream::flush() {
    std::string rest;
    rest.swap(pending_);
    return rest;
}

}  // namespace journey
