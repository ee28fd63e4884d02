#include "journey/text/token_display.h"

#include <cstdio>

#include "journey/text/tokenizer.h"

namespace journey {

std::string visible_token(std::string_view bytes) {
    std::string out;
    // Walk the original bytes; where valid_utf8 kept a multi-byte character, keep it too.
    for (size_t i = 0; i < bytes.size();) {
        const unsigned char c = static_cast<unsigned char>(bytes[i]);
        if (c >= 0x80) {
            size_t n = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
            std::string_view ch = bytes.substr(i, n);
            if (n > 1 && ch.size() == n && valid_utf8(ch) == ch) {
                out += ch;
                i += n;
                continue;
            }
        }
        char buf[8];
        switch (c) {
            case ' ': out += "\xE2\x90\xA3"; break;  // ␣
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            case '\\': out += "\\\\"; break;
            default:
                if (c < 0x20 || c >= 0x7f) {
                    std::snprintf(buf, sizeof buf, "\\x%02X", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);
                }
        }
        ++i;
    }
    return out;
}

nlohmann::json bytes_json(std::string_view bytes) {
    nlohmann::json a = nlohmann::json::array();
    for (char c : bytes) a.push_back(static_cast<unsigned char>(c));
    return a;
}

nlohmann::ordered_json token_json(const Tokenizer& tok, TokenId id) {
    const std::string b = tok.token_bytes(id);
    nlohmann::ordered_json j = {{"id", id}, {"token", valid_utf8(b)}, {"bytes", bytes_json(b)}};
    // BOS/EOS often have no bytes at all: say what they are, so an empty piece is not taken
    // for an empty token.
    if (id == tok.bos_id() || id == tok.eos_id()) j["special"] = true;
    return j;
}

}  // namespace journey
