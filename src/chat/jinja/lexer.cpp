// Jinja's lexer, as configured by transformers (trim_blocks, lstrip_blocks): text and tags.
#include "journey/chat/jinja/lexer.h"

#include <algorithm>
#include <cstring>

#include "builtins.h"
#include "journey/errors.h"
#include "journey/chat/jinja/value.h"

namespace journey::jinja {

// Python's str.isspace(): what str.rstrip() and the regex \s strip around "{%-" and "-%}".
bool py_space(char32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

namespace {

// The code point that starts at s[i] and its length (valid UTF-8 is checked by the caller).
char32_t cp_at(std::string_view s, size_t i, size_t& len) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    len = std::min(len, s.size() - i);
    char32_t cp = len == 1 ? c : c & (0x3F >> (len - 1));
    for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    return cp;
}

std::string rstrip_space(std::string_view s) {
    size_t end = s.size();
    while (end > 0) {
        size_t start = end - 1;
        while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
        size_t len;
        if (!py_space(cp_at(s, start, len))) break;
        end = start;
    }
    return std::string(s.substr(0, end));
}

size_t skip_space(std::string_view s, size_t i) {
    size_t len;
    while (i < s.size() && py_space(cp_at(s, i, len))) i += len;
    return i;
}

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

class Lexer {
public:
    explicit Lexer(std::string_view raw) {
        // Only "\n", "\r\n" and "\r" break lines; keep_trailing_newline is off.
        for (size_t i = 0; i < raw.size(); ++i) {
            if (raw[i] == '\r') {
                src_ += '\n';
                if (i + 1 < raw.size() && raw[i + 1] == '\n') ++i;
            } else src_ += raw[i];
        }
        if (!src_.empty() && src_.back() == '\n') src_.pop_back();
        line_starts_.push_back(0);
        for (size_t i = 0; i < src_.size(); ++i)
            if (src_[i] == '\n') line_starts_.push_back(i + 1);
    }

    std::vector<Token> run() {
        size_t pos = 0;
        while (pos < src_.size()) {
            // The next tag start, or the end of the source.
            size_t tag = pos;
            while (true) {
                tag = src_.find('{', tag);
                if (tag == std::string::npos || tag + 1 >= src_.size()) { tag = std::string::npos; break; }
                const char c = src_[tag + 1];
                if (c == '{' || c == '%' || c == '#') break;
                ++tag;
            }
            if (tag == std::string::npos) {
                push_text(src_.substr(pos), pos);
                break;
            }
            const char kind = src_[tag + 1];
            const char sign = tag + 2 < src_.size() && (src_[tag + 2] == '-' || src_[tag + 2] == '+') ? src_[tag + 2] : 0;
            std::string text = src_.substr(pos, tag - pos);
            if (sign == '-') text = rstrip_space(text);
            else if (sign != '+' && kind != '{') {
                // lstrip_blocks: drop the spaces and tabs that open the tag's line.
                const size_t l_pos = text.rfind('\n') + 1;  // npos + 1 == 0
                const bool line_starting = pos == 0 || src_[pos - 1] == '\n';
                if ((l_pos > 0 || line_starting) && l_pos < text.size()) {
                    size_t e = skip_space(text, l_pos);
                    if (e == text.size()) text.resize(l_pos);
                }
            }
            push_text(text, pos);
            size_t after = tag + 2 + (sign ? 1 : 0);
            if (kind == '#') pos = comment(tag, after);
            else if (kind == '%' && raw_block(tag, after, pos)) continue;
            else pos = tag_body(kind == '{', tag, after);
        }
        out_.push_back({Token::end, "", at(src_.size())});
        return std::move(out_);
    }

private:
    std::string src_;
    std::vector<size_t> line_starts_;
    std::vector<Token> out_;

    // Tokens come in source order, so the column is counted on from the last position asked
    // for on the same line: rescanning from the line's start made one long line quadratic.
    mutable size_t last_off_ = 0;
    mutable size_t last_line_ = 0;
    mutable int last_col_ = 1;
    SourcePos at(size_t off) const {
        auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), off) - 1;
        const size_t line = size_t(it - line_starts_.begin());
        size_t from = *it;
        int col = 1;
        if (line == last_line_ && off >= last_off_ && last_off_ >= from) from = last_off_, col = last_col_;
        for (size_t i = from; i < off && i < src_.size(); ++i)
            if ((static_cast<unsigned char>(src_[i]) & 0xC0) != 0x80) ++col;
        last_off_ = off, last_line_ = line, last_col_ = col;
        return {int(line) + 1, col};
    }
    [[noreturn]] void fail(size_t off, const std::string& msg) const { throw TemplateSyntaxError{at(off), msg}; }

    void push_text(std::string text, size_t off) {
        if (!text.empty()) out_.push_back({Token::text, std::move(text), at(off)});
    }

    // After a block or comment end: "-%}" eats all whitespace, "+%}" none, "%}" one newline.
    size_t after_block_end(size_t end_pos, char sign) const {
        if (sign == '-') return skip_space(src_, end_pos);
        if (sign != '+' && end_pos < src_.size() && src_[end_pos] == '\n') return end_pos + 1;
        return end_pos;
    }

    size_t comment(size_t tag, size_t from) {
        const size_t close = src_.find("#}", from);
        if (close == std::string::npos) fail(tag, "Missing end of comment tag");
        const char sign = close > from && (src_[close - 1] == '-' || src_[close - 1] == '+') ? src_[close - 1] : 0;
        return after_block_end(close + 2, sign);
    }

    // "{% raw %}...{% endraw %}": the text between is output as it is.
    bool raw_block(size_t tag, size_t from, size_t& pos) {
        size_t i = skip_space(src_, from);
        if (src_.compare(i, 3, "raw") != 0 || (i + 3 < src_.size() && is_name_char(src_[i + 3]))) return false;
        i = skip_space(src_, i + 3);
        size_t body;
        if (src_.compare(i, 3, "-%}") == 0) body = skip_space(src_, i + 3);
        else if (src_.compare(i, 2, "%}") == 0) body = i + 2;
        else return false;
        for (size_t s = src_.find("{%", body); s != std::string::npos; s = src_.find("{%", s + 2)) {
            const char sign = s + 2 < src_.size() && (src_[s + 2] == '-' || src_[s + 2] == '+') ? src_[s + 2] : 0;
            size_t j = skip_space(src_, s + 2 + (sign ? 1 : 0));
            if (src_.compare(j, 6, "endraw") != 0) continue;
            j = skip_space(src_, j + 6);
            char end_sign = 0;
            if (j < src_.size() && (src_[j] == '-' || src_[j] == '+')) end_sign = src_[j++];
            if (src_.compare(j, 2, "%}") != 0) continue;
            std::string text = src_.substr(body, s - body);
            if (sign == '-') text = rstrip_space(text);
            else if (sign != '+') {
                const size_t l_pos = text.rfind('\n') + 1;
                if (l_pos > 0 && skip_space(text, l_pos) == text.size()) text.resize(l_pos);
            }
            push_text(text, body);
            pos = after_block_end(j + 2, end_sign);
            return true;
        }
        fail(tag, "Missing end of raw directive");
    }

    // The tokens inside {{ ... }} or {% ... %}; returns the offset after the closing tag.
    size_t tag_body(bool variable, size_t tag, size_t i) {
        out_.push_back({variable ? Token::var_begin : Token::block_begin, "", at(tag)});
        std::vector<char> balance;
        while (true) {
            i = skip_space(src_, i);
            if (i >= src_.size()) fail(tag, variable ? "unexpected end of template, expected '}}'" : "unexpected end of template, expected '%}'");
            if (balance.empty()) {
                const char* close = variable ? "}}" : "%}";
                char sign = 0;
                size_t j = i;
                if (src_[j] == '-' || (!variable && src_[j] == '+')) sign = src_[j++];
                if (src_.compare(j, 2, close) == 0) {
                    out_.push_back({variable ? Token::var_end : Token::block_end, "", at(i)});
                    if (variable) return sign == '-' ? skip_space(src_, j + 2) : j + 2;
                    return after_block_end(j + 2, sign);
                }
            }
            i = expression_token(i, balance);
        }
    }

    size_t expression_token(size_t i, std::vector<char>& balance) {
        const char c = src_[i];
        const SourcePos p = at(i);
        if (is_digit(c)) return number(i);
        if (is_name_start(c)) {
            size_t j = i;
            while (j < src_.size() && is_name_char(src_[j])) ++j;
            out_.push_back({Token::name, src_.substr(i, j - i), p});
            return j;
        }
        if (c == '\'' || c == '"') return string(i);
        static const char* ops[] = {"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[", "]",
                                    "(", ")", "{", "}", "<", ">", "=", ".", ":", "|", ",", ";"};
        for (const char* op : ops) {
            const size_t n = std::strlen(op);
            if (src_.compare(i, n, op) != 0) continue;
            if (n == 1 && (c == '(' || c == '[' || c == '{')) balance.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
            if (n == 1 && (c == ')' || c == ']' || c == '}')) {
                if (balance.empty()) fail(i, std::string("unexpected '") + c + "'");
                if (balance.back() != c) fail(i, std::string("unexpected '") + c + "', expected '" + balance.back() + "'");
                balance.pop_back();
            }
            out_.push_back({Token::op, op, p});
            return i + n;
        }
        size_t len;
        cp_at(src_, i, len);
        fail(i, "unexpected char '" + excerpt(src_.substr(i, len)) + "'");
    }

    // Digits with optional "_" between them.
    size_t digits(size_t i) const {
        while (i < src_.size() && (is_digit(src_[i]) || (src_[i] == '_' && i + 1 < src_.size() && is_digit(src_[i + 1])))) ++i;
        return i;
    }

    size_t number(size_t i) {
        const SourcePos p = at(i);
        size_t j = digits(i);
        bool is_float = false;
        const bool after_dot = i > 0 && src_[i - 1] == '.';  // "x.0.1" is two item lookups
        if (!after_dot && j + 1 < src_.size() && src_[j] == '.' && is_digit(src_[j + 1])) {
            j = digits(j + 1);
            is_float = true;
        }
        if (!after_dot && j < src_.size() && (src_[j] == 'e' || src_[j] == 'E')) {
            size_t k = j + 1;
            if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
            if (k < src_.size() && is_digit(src_[k])) {
                j = digits(k);
                is_float = true;
            }
        }
        std::string text = src_.substr(i, j - i);
        text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
        out_.push_back({is_float ? Token::floating : Token::integer, text, p});
        return j;
    }

    // A string literal, its escapes resolved as Python's "unicode-escape" codec does.
    size_t string(size_t i) {
        const char q = src_[i];
        std::u32string val;
        size_t j = i + 1;
        while (true) {
            if (j >= src_.size()) fail(i, "unexpected end of string");
            const char c = src_[j];
            if (c == q) break;
            size_t len;
            if (c != '\\') {
                val.push_back(cp_at(src_, j, len));
                j += len;
                continue;
            }
            if (j + 1 >= src_.size()) fail(i, "unexpected end of string");
            const char e = src_[j + 1];
            j += 2;
            switch (e) {
            case '\n': break;
            case '\\': val.push_back('\\'); break;
            case '\'': val.push_back('\''); break;
            case '"': val.push_back('"'); break;
            case 'a': val.push_back('\a'); break;
            case 'b': val.push_back('\b'); break;
            case 'f': val.push_back('\f'); break;
            case 'n': val.push_back('\n'); break;
            case 'r': val.push_back('\r'); break;
            case 't': val.push_back('\t'); break;
            case 'v': val.push_back('\v'); break;
            case 'x': case 'u': case 'U': {
                const int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                char32_t cp = 0;
                for (int k = 0; k < n; ++k) {
                    const int h = j < src_.size() ? hex_value(src_[j]) : -1;
                    if (h < 0) fail(i, std::string("truncated \\") + e + " escape in a string");
                    cp = cp * 16 + char32_t(h);
                    ++j;
                }
                if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) fail(i, "escape out of Unicode's range in a string");
                val.push_back(cp);
                break;
            }
            default:
                if (e >= '0' && e <= '7') {
                    char32_t cp = char32_t(e - '0');
                    for (int k = 0; k < 2 && j < src_.size() && src_[j] >= '0' && src_[j] <= '7'; ++k) cp = cp * 8 + char32_t(src_[j++] - '0');
                    val.push_back(cp);
                } else if (e == 'N') {
                    fail(i, "\\N{...} escapes are not supported");
                } else {  // Python keeps an unknown escape as it is
                    val.push_back('\\');
                    j -= 1;
                }
            }
        }
        out_.push_back({Token::string, utf8_encode(val), at(i)});
        return j + 1;
    }
};

}  // namespace

std::vector<Token> lex(std::string_view source) { return Lexer(source).run(); }

}  // namespace journey::jinja
