#include "journey/text/vocab_json.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>

#include <nlohmann/json.hpp>
#include <utf8proc.h>

#include "journey/errors.h"
#include "journey/formats/json_file.h"

namespace journey {
namespace {

using json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// The scanner: JSON (RFC 8259) for exactly the shape {"token": id, ...}. Each step returns false
// on anything it does not expect, and the caller then hands the whole text to nlohmann.

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void skip_space(const char*& p, const char* end) {
    while (p < end && is_space(*p)) ++p;
}

// ASCII bytes that a JSON string may hold as they are: not '"', '\\' or a control character.
constexpr std::array<bool, 256> plain_ascii = [] {
    std::array<bool, 256> t{};
    for (int c = 0x20; c < 0x80; ++c) t[c] = c != '"' && c != '\\';
    return t;
}();

// Moves p past the characters a JSON string may hold as they are, to the end of the text or a
// '"', '\\' or control character, and copies them to *out if out is given. False at UTF-8 that is
// not well-formed: an overlong form, a surrogate, a code point past U+10FFFF (what utf8proc
// accepts is what nlohmann's lexer accepts).
bool skip_plain(const char*& p, const char* end, char** out = nullptr) {
    for (;;) {
        const char* const run = p;
        while (p < end && plain_ascii[static_cast<unsigned char>(*p)]) ++p;
        if (out) *out = std::copy(run, p, *out);
        if (p == end || static_cast<unsigned char>(*p) < 0x80) return true;
        utf8proc_int32_t cp = 0;
        const utf8proc_ssize_t n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(p), end - p, &cp);
        if (n <= 0) return false;
        if (out) *out = std::copy_n(p, n, *out);
        p += n;
    }
}

// The four hex digits at p as a number, or -1.
int32_t hex4(const char* p, const char* end) {
    if (end - p < 4) return -1;
    int32_t v = 0;
    for (int i = 0; i < 4; ++i) {
        const char c = p[i];
        const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

// The escape at p (a backslash), written to w as UTF-8 and both moved past it. A \uXXXX in
// U+D800..U+DBFF must be followed by a \uXXXX in U+DC00..U+DFFF, and the two are one code point;
// a lone surrogate is an error (so says nlohmann). \u0000 is a zero byte in the token.
bool unescape(const char*& p, const char* end, char*& w) {
    if (end - p < 2) return false;
    const char c = p[1];
    p += 2;
    switch (c) {
        case '"': case '\\': case '/': *w++ = c; return true;
        case 'b': *w++ = '\b'; return true;
        case 'f': *w++ = '\f'; return true;
        case 'n': *w++ = '\n'; return true;
        case 'r': *w++ = '\r'; return true;
        case 't': *w++ = '\t'; return true;
        case 'u': break;
        default: return false;
    }
    int32_t cp = hex4(p, end);
    if (cp < 0 || (cp >= 0xDC00 && cp <= 0xDFFF)) return false;
    p += 4;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (end - p < 6 || p[0] != '\\' || p[1] != 'u') return false;
        const int32_t low = hex4(p + 2, end);
        if (low < 0xDC00 || low > 0xDFFF) return false;
        p += 6;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    w += utf8proc_encode_char(cp, reinterpret_cast<utf8proc_uint8_t*>(w));
    return true;
}

// A token id as vocab.json writes it: 0, or digits not starting with 0, at most 2^31 - 1. Any
// other number ("-0", "1.0", "1e3", "01", a larger one) is nlohmann's to accept or refuse: the
// caller wants a ',' or '}' next, so it gives up on a '.', 'e' or further digit.
bool scan_id(const char*& p, const char* end, TokenId& id) {
    if (p == end || *p < '0' || *p > '9') return false;
    int64_t v = 0;
    if (*p == '0') {
        ++p;
    } else {
        for (; p < end && *p >= '0' && *p <= '9'; ++p)
            if ((v = v * 10 + (*p - '0')) > INT32_MAX) return false;
    }
    id = static_cast<TokenId>(v);
    return true;
}

// ---------------------------------------------------------------------------------------------
// nlohmann's reading, as a stream of events: 50k tokens without building a JSON tree first.

class VocabReader : public nlohmann::json_sax<json> {
public:
    VocabReader(const std::string& file, std::vector<std::pair<std::string, TokenId>>& vocab)
        : file_(file), vocab_(vocab) {}

    bool start_object(std::size_t) override {
        if (++depth_ > 1) fail("a token's id is an object");
        return true;
    }
    bool end_object() override { return --depth_, true; }
    bool key(string_t& k) override { return key_ = std::move(k), true; }
    bool number_integer(number_integer_t v) override { return id(v); }
    bool number_unsigned(number_unsigned_t v) override {
        return id(v > static_cast<number_unsigned_t>(INT32_MAX) ? -1 : static_cast<int64_t>(v));
    }
    bool number_float(number_float_t, const string_t& s) override { return value_error(excerpt(s, 40)); }
    bool null() override { return value_error("null"); }
    bool boolean(bool) override { return value_error("a boolean"); }
    bool string(string_t& s) override { return value_error("\"" + excerpt(s, 40) + "\""); }
    bool binary(binary_t&) override { return value_error("binary"); }
    bool start_array(std::size_t) override { return value_error("an array"); }
    bool end_array() override { return true; }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
        throw ModelError(file_ + ": invalid JSON: " + excerpt(e.what(), 160));
    }

private:
    [[noreturn]] void fail(const std::string& what) const { throw ModelError(file_ + ": " + what); }
    bool value_error(const std::string& v) {
        if (depth_ == 0) fail("the vocabulary is not a JSON object of token -> id");
        fail("token \"" + excerpt(key_, 40) + "\" has id " + v + ", not an integer in [0, 2^31)");
    }
    bool id(int64_t v) {
        if (depth_ == 0) fail("the vocabulary is not a JSON object of token -> id");
        if (v < 0 || v > INT32_MAX)
            fail("token \"" + excerpt(key_, 40) + "\" has id " + std::to_string(v) + ", not an integer in [0, 2^31)");
        vocab_.emplace_back(std::move(key_), static_cast<TokenId>(v));
        return true;
    }
    const std::string& file_;
    std::vector<std::pair<std::string, TokenId>>& vocab_;
    std::string key_;
    int depth_ = 0;
};

}  // namespace

VocabJson::VocabJson(std::string_view text, const std::string& file) : text_(text) {
    if (!scan()) parse_with_nlohmann(file);
}

bool VocabJson::scan() {
    const char* p = text_.data();
    const char* const end = p + text_.size();
    tokens_.reserve(static_cast<size_t>(std::count(p, end, ':')));  // at least one per token
    skip_space(p, end);
    if (p == end || *p++ != '{') return false;
    skip_space(p, end);
    if (p < end && *p == '}') {
        ++p;
    } else {
        for (;;) {
            std::string_view token;
            TokenId id = 0;
            if (p == end || *p++ != '"' || !scan_string(p, end, token)) return false;
            skip_space(p, end);
            if (p == end || *p++ != ':') return false;
            skip_space(p, end);
            if (!scan_id(p, end, id)) return false;
            tokens_.emplace_back(token, id);
            skip_space(p, end);
            if (p == end) return false;
            if (*p == '}') {
                ++p;
                break;
            }
            if (*p++ != ',') return false;
            skip_space(p, end);
        }
    }
    skip_space(p, end);
    return p == end;
}

// The string from p (just past its opening quote) to its closing quote, which p ends past. A
// string without escapes is a view into the text; one with escapes is decoded into unescaped_,
// which is as long as the text: a decoded string is never longer than the escaped one, so all of
// them together fit.
bool VocabJson::scan_string(const char*& p, const char* end, std::string_view& out) {
    const char* const begin = p;
    if (!skip_plain(p, end) || p == end) return false;
    if (*p == '"') {  // the usual case: no escape
        out = {begin, static_cast<size_t>(p++ - begin)};
        return true;
    }
    if (!unescaped_) unescaped_ = std::make_unique_for_overwrite<char[]>(text_.size());
    char* const start = unescaped_.get() + unescaped_used_;
    char* w = std::copy(begin, p, start);
    while (*p == '\\')
        if (!unescape(p, end, w) || !skip_plain(p, end, &w) || p == end) return false;
    if (*p != '"') return false;  // a control character
    ++p;
    out = {start, static_cast<size_t>(w - start)};
    unescaped_used_ += out.size();
    return true;
}

void VocabJson::parse_with_nlohmann(const std::string& file) {
    read_by_nlohmann_ = true;
    VocabReader reader(file, owned_);
    json::sax_parse(text_.begin(), text_.end(), &reader);
    tokens_.assign(owned_.begin(), owned_.end());
}

}  // namespace journey
