// Typed errors. The library throws; only main() maps them to messages and exit codes.
//   0 success, 1 bad usage, 2 unusable model or tokenizer file, 3 bad input or runtime failure.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>

namespace journey {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
    virtual int exit_code() const = 0;
};

// A flag or argument the user got wrong. Name the flag in the message.
class UsageError : public Error {
public:
    using Error::Error;
    int exit_code() const override { return 1; }
};

// A model, weights or tokenizer file we cannot use. Name the file (and line/tensor) in the message.
class ModelError : public Error {
public:
    using Error::Error;
    int exit_code() const override { return 2; }
};

// Bad input text/ids, or a failure while running.
class InputError : public Error {
public:
    using Error::Error;
    int exit_code() const override { return 3; }
};

// What a message echoes from a file or the input (a token, a merges line), cut to at most `max`
// bytes: printable text and valid UTF-8 as is, control and invalid bytes escaped (\n, \xNN), and
// "... (N bytes)" when cut, so that one line stays one short line whatever the input holds.
inline std::string excerpt(std::string_view s, size_t max = 80) {
    static const char hex[] = "0123456789abcdef";
    auto cont = [&](size_t i) { return i < s.size() && (static_cast<unsigned char>(s[i]) & 0xc0) == 0x80; };
    std::string out;
    size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        // The length of a well-formed UTF-8 sequence starting here (overlongs and surrogates
        // are let through: this is for display only), 0 for a byte to escape.
        size_t n = c >= 0x20 && c < 0x7f ? 1 : c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xf0 && c < 0xf5 ? 4 : 0;
        for (size_t k = 1; k < n; ++k)
            if (!cont(i + k)) n = 0;
        if (i + (n ? n : 1) > max) break;
        if (n) out.append(s.substr(i, n)), i += n;
        else if (c == '\n') out += "\\n", ++i;
        else if (c == '\t') out += "\\t", ++i;
        else out += {'\\', 'x', hex[c >> 4], hex[c & 15]}, ++i;
    }
    if (i < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
    return out;
}

}  // namespace journey
