#include "journey/text/split_scanners.h"

#include <array>
#include <cstdint>

#include "journey/text/pretokenize.h"
#include "journey/text/unicode.h"

namespace journey {

const std::string_view kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
const std::string_view kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string_view kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string_view kLlama3CppPattern =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string_view kQwen2CppPattern =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

namespace {

// The classes the pattern tells apart. Newline is \r or \n (white space too).
enum class Cls : uint8_t { Letter, Number, Space, Newline, Other };

constexpr std::array<Cls, 128> ascii = [] {
    std::array<Cls, 128> t{};
    for (int c = 0; c < 128; ++c) {
        t[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ? Cls::Letter
             : c >= '0' && c <= '9'                             ? Cls::Number
             : c == '\r' || c == '\n'                           ? Cls::Newline
             : (c >= 0x09 && c <= 0x0D) || c == ' '             ? Cls::Space
                                                                : Cls::Other;
    }
    return t;
}();

struct Ch {
    Cls cls;
    size_t len;
};

inline Ch at(std::string_view text, size_t pos) {
    const auto c = static_cast<unsigned char>(text[pos]);
    if (c < 0x80) return {ascii[c], 1};
    const unicode::Char ch = unicode::char_at(text, pos);
    if (ch.cp < 0) return {Cls::Other, 1};  // a byte that is not UTF-8: one character of its own
    const Cls cls = unicode::is_white_space(ch.cp) ? Cls::Space
                  : unicode::is_letter(ch.cp)      ? Cls::Letter
                  : unicode::is_numeric(ch.cp)     ? Cls::Number
                                                   : Cls::Other;
    return {cls, ch.len};
}

bool is_space(Cls c) { return c == Cls::Space || c == Cls::Newline; }

// End of the run of characters from pos for which keep(class) holds; counts them into *n.
template <class Keep>
size_t run_end(std::string_view text, size_t pos, Keep keep, size_t max_chars = SIZE_MAX) {
    size_t n = 0;
    while (pos < text.size() && n < max_chars) {
        const Ch c = at(text, pos);
        if (!keep(c.cls)) break;
        pos += c.len;
        ++n;
    }
    return pos;
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d) at text[pos] == '\'': the length, or 0. Under (?i) Oniguruma
// folds "ſ" (U+017F) to "s"; llama.cpp's ASCII form ('[sS]|...) does not (fold_long_s false).
size_t contraction(std::string_view text, size_t pos, bool fold_long_s) {
    const std::string_view r = text.substr(pos + 1);
    auto low = [&](size_t i) { return i < r.size() ? char(r[i] | 0x20) : '\0'; };
    if (fold_long_s && r.starts_with("\xc5\xbf")) return 3;
    const char a = low(0);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    const char b = low(1);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    return 0;
}

// The Llama 3 / Qwen2 pattern at pos, its alternatives tried in order; max_digits 3 or 1.
size_t llama_like_end(std::string_view text, size_t pos, size_t max_digits, bool fold_long_s = true) {
    if (text[pos] == '\'')
        if (const size_t n = contraction(text, pos, fold_long_s)) return pos + n;
    const Ch c0 = at(text, pos);
    const size_t p1 = pos + c0.len;
    const Cls c1 = p1 < text.size() ? at(text, p1).cls : Cls::Other;
    const bool have_c1 = p1 < text.size();
    auto letters = [](Cls c) { return c == Cls::Letter; };
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (c0.cls == Cls::Letter) return run_end(text, pos, letters);
    if (c0.cls != Cls::Newline && c0.cls != Cls::Number && have_c1 && c1 == Cls::Letter) return run_end(text, p1, letters);
    // \p{N}{1,3} (Qwen2: \p{N})
    if (c0.cls == Cls::Number) return run_end(text, pos, [](Cls c) { return c == Cls::Number; }, max_digits);
    // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
    auto others = [](Cls c) { return c == Cls::Other; };
    auto newlines = [](Cls c) { return c == Cls::Newline; };
    if (c0.cls == Cls::Other) return run_end(text, run_end(text, pos, others), newlines);
    if (text[pos] == ' ' && have_c1 && c1 == Cls::Other) return run_end(text, run_end(text, p1, others), newlines);
    // White space from here on: W = the whole run.
    size_t end = pos, last_start = pos, after_newline = 0;
    while (end < text.size()) {
        const Ch c = at(text, end);
        if (!is_space(c.cls)) break;
        last_start = end;
        end += c.len;
        if (c.cls == Cls::Newline) after_newline = end;
    }
    if (after_newline) return after_newline;         // \s*[\r\n]+: up to the last newline of W
    if (end == text.size() || last_start == pos) return end;  // \s+(?!\S) at the end, or \s+
    return last_start;                                // \s+(?!\S): W but its last character
}

size_t llama3_end(std::string_view text, size_t pos) { return llama_like_end(text, pos, 3); }
size_t qwen2_end(std::string_view text, size_t pos) { return llama_like_end(text, pos, 1); }
size_t llama3_cpp_end(std::string_view text, size_t pos) { return llama_like_end(text, pos, 3, false); }
size_t qwen2_cpp_end(std::string_view text, size_t pos) { return llama_like_end(text, pos, 1, false); }

}  // namespace

size_t llama3_piece_end(std::string_view text, size_t pos) { return llama3_end(text, pos); }
size_t qwen2_piece_end(std::string_view text, size_t pos) { return qwen2_end(text, pos); }

PieceScanner scanner_for_pattern(std::string_view regex) {
    if (regex == kGpt2Pattern) return gpt2_piece_end;
    if (regex == kLlama3Pattern) return llama3_end;
    if (regex == kQwen2Pattern) return qwen2_end;
    if (regex == kLlama3CppPattern) return llama3_cpp_end;
    if (regex == kQwen2CppPattern) return qwen2_cpp_end;
    return nullptr;
}

}  // namespace journey
