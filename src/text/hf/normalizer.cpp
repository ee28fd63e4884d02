#include "journey/text/hf/normalizer.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <utility>
#include <vector>

#include <utf8proc.h>

#include "journey/errors.h"
#include "journey/text/onig_regex.h"
#include "journey/text/unicode.h"

namespace journey {
namespace normalizers {  // tokenizers.normalizers
namespace {

// A normalizer may lengthen the text (" " -> "▁" triples it) but not without bound: a
// Sequence of Replace("a" -> "aa") steps doubles it at each step.
[[noreturn]] void growth_refused(size_t from, size_t to) {
    throw ModelError("the tokenizer's normalizer would turn " + std::to_string(from) + " bytes into " + std::to_string(to) +
                     " (more than 8 times as many plus 1 MiB; refused)");
}
size_t growth_bound(size_t n) { return 8 * n + (1u << 20); }

// NFC, NFD, NFKC, NFKD, by utf8proc, of the parts of the text that can change. An ASCII
// character is in every normal form, has combining class 0 and never composes with what comes
// before it (no canonical or compatibility composition has an ASCII second character), so the
// text can be cut before any ASCII character and each part normalized alone (Unicode's
// "stable code point" boundary, UAX #15): ASCII runs are copied, and only a run of non-ASCII
// characters, with the one ASCII character before it (a starter that its marks may compose
// with), goes through utf8proc. English text is almost all copying. The test "Unicode
// normalization forms ... equal utf8proc's on the whole text" checks this on a generated corpus.
class UnicodeForm final : public Normalizer {
public:
    explicit UnicodeForm(int options) : options_(options) {}
    void normalize(std::string& text) const override {
        const auto ascii = [&](size_t i) { return static_cast<unsigned char>(text[i]) < 0x80; };
        size_t run = 0;  // the first non-ASCII byte
        while (run < text.size() && ascii(run)) ++run;
        if (run == text.size()) return;
        std::string out;
        out.reserve(text.size() + text.size() / 8);
        size_t copied = 0;  // text before this is in `out`
        while (run < text.size()) {
            size_t end = run;
            while (end < text.size() && !ascii(end)) ++end;
            const size_t begin = run > copied ? run - 1 : run;  // with the ASCII character before it
            out.append(text, copied, begin - copied);
            append_normalized(std::string_view(text).substr(begin, end - begin), out);
            copied = end;
            run = end;
            while (run < text.size() && ascii(run)) ++run;
        }
        out.append(text, copied, std::string::npos);
        text = std::move(out);
    }

private:
    void append_normalized(std::string_view s, std::string& out) const {
        utf8proc_uint8_t* mapped = nullptr;
        const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                                    static_cast<utf8proc_ssize_t>(s.size()), &mapped,
                                    static_cast<utf8proc_option_t>(options_));
        if (n < 0) throw std::runtime_error(std::string("Unicode normalization failed: ") + utf8proc_errmsg(n));
        out.append(reinterpret_cast<const char*>(mapped), static_cast<size_t>(n));
        std::free(mapped);
    }

    int options_;
};

// Rust's str::to_lowercase: per character, with its two context rules: U+0130 becomes "i̇",
// and a capital sigma ending a word (after a letter, not before one) becomes final "ς".
class Lowercase final : public Normalizer {
public:
    void normalize(std::string& text) const override {
        std::string out;
        out.reserve(text.size());
        int32_t prev = -1;
        for (size_t pos = 0; pos < text.size();) {
            const unicode::Char ch = unicode::char_at(text, pos);
            pos += ch.len;
            if (ch.cp < 0x80) {
                out += static_cast<char>(ch.cp >= 'A' && ch.cp <= 'Z' ? ch.cp + 32 : ch.cp);
            } else if (ch.cp == 0x130) {
                out += "i\xcc\x87";
            } else if (ch.cp == 0x3A3) {
                const bool next_letter = pos < text.size() && unicode::is_letter(unicode::char_at(text, pos).cp);
                unicode::append_utf8(out, prev >= 0 && unicode::is_letter(prev) && !next_letter ? 0x3C2 : 0x3C3);
            } else {
                unicode::append_utf8(out, utf8proc_tolower(ch.cp));
            }
            prev = ch.cp;
        }
        text = std::move(out);
    }
};

class Strip final : public Normalizer {
public:
    Strip(bool left, bool right) : left_(left), right_(right) {}
    void normalize(std::string& text) const override {
        size_t begin = 0, end = text.size();
        if (left_)
            while (begin < end) {
                const unicode::Char ch = unicode::char_at(text, begin);
                if (!unicode::is_white_space(ch.cp)) break;
                begin += ch.len;
            }
        if (right_) {
            size_t pos = begin, kept = begin;  // kept: end of the last non-space character
            while (pos < end) {
                const unicode::Char ch = unicode::char_at(text, pos);
                pos += ch.len;
                if (!unicode::is_white_space(ch.cp)) kept = pos;
            }
            end = kept;
        }
        text = text.substr(begin, end - begin);
    }

private:
    bool left_, right_;
};

// Drops combining marks (after NFD, the accents).
class StripAccents final : public Normalizer {
public:
    void normalize(std::string& text) const override {
        std::string out;
        out.reserve(text.size());
        for (size_t pos = 0; pos < text.size();) {
            const unicode::Char ch = unicode::char_at(text, pos);
            if (!unicode::is_mark(ch.cp)) out.append(text, pos, ch.len);
            pos += ch.len;
        }
        text = std::move(out);
    }
};

// Every match of a literal string or a regex, left to right, replaced by `content`.
class Replace final : public Normalizer {
public:
    Replace(std::string literal, std::unique_ptr<OnigRegex> regex, std::string content)
        : literal_(std::move(literal)), regex_(std::move(regex)), content_(std::move(content)) {}
    void normalize(std::string& text) const override {
        std::vector<std::pair<size_t, size_t>> matches;
        if (regex_) {
            regex_->find_all(text, matches);
        } else {
            for (size_t at = text.find(literal_); at != std::string::npos; at = text.find(literal_, at + literal_.size()))
                matches.emplace_back(at, at + literal_.size());
        }
        if (matches.empty()) return;
        size_t removed = 0;
        for (const auto& [b, e] : matches) removed += e - b;
        const size_t size = text.size() - removed + matches.size() * content_.size();
        if (size > growth_bound(text.size())) growth_refused(text.size(), size);
        std::string out;
        out.reserve(size);
        size_t from = 0;
        for (const auto& [b, e] : matches) {
            out.append(text, from, b - from);
            out += content_;
            from = e;
        }
        out.append(text, from);
        text = std::move(out);
    }

private:
    std::string literal_;
    std::unique_ptr<OnigRegex> regex_;
    std::string content_;
};

class Prepend final : public Normalizer {
public:
    explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
    void normalize(std::string& text) const override {
        if (!text.empty()) text.insert(0, prefix_);
    }

private:
    std::string prefix_;
};

class Sequence final : public Normalizer {
public:
    explicit Sequence(std::vector<std::unique_ptr<Normalizer>> steps) : steps_(std::move(steps)) {}
    void normalize(std::string& text) const override {
        const size_t n = text.size();
        for (const auto& s : steps_) {
            s->normalize(text);
            if (text.size() > growth_bound(n)) growth_refused(n, text.size());
        }
    }

private:
    std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace
}  // namespace normalizers

std::string read_pattern(const HfPart& part, std::unique_ptr<OnigRegex>& regex) {
    const HfPart pattern = part.at("pattern");
    if (pattern.has("Regex")) {
        const std::string source = pattern.string("Regex");
        try {
            regex = std::make_unique<OnigRegex>(source);
        } catch (const std::invalid_argument& e) {
            pattern.fail("invalid regex " + HfPart::shown(source) + ": " + e.what());
        }
        return {};
    }
    if (!pattern.has("String")) pattern.fail("is neither {\"String\": ...} nor {\"Regex\": ...}");
    std::string literal = pattern.string("String");
    if (literal.empty()) pattern.fail("an empty String pattern is not supported");
    return literal;
}

std::unique_ptr<Normalizer> make_normalizer(const HfPart& part) {
    using namespace normalizers;
    if (part.j.is_null()) return nullptr;
    const std::string type = part.type();
    if (type == "NFC") return std::make_unique<UnicodeForm>(UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    if (type == "NFD") return std::make_unique<UnicodeForm>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE);
    if (type == "NFKC") return std::make_unique<UnicodeForm>(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
    if (type == "NFKD") return std::make_unique<UnicodeForm>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
    if (type == "Lowercase") return std::make_unique<Lowercase>();
    if (type == "Strip") return std::make_unique<Strip>(part.boolean("strip_left", true), part.boolean("strip_right", true));
    if (type == "StripAccents") return std::make_unique<StripAccents>();
    if (type == "Prepend") return std::make_unique<Prepend>(part.string("prepend"));
    if (type == "Replace") {
        std::unique_ptr<OnigRegex> regex;
        std::string literal = read_pattern(part, regex);
        return std::make_unique<Replace>(std::move(literal), std::move(regex), part.string("content"));
    }
    if (type == "Sequence") {
        const HfPart list = part.at("normalizers");
        if (!list.j.is_array()) list.fail("is not an array");
        std::vector<std::unique_ptr<Normalizer>> steps;
        for (size_t i = 0; i < list.j.size(); ++i)
            if (auto n = make_normalizer(list.at(i))) steps.push_back(std::move(n));
        return std::make_unique<Sequence>(std::move(steps));
    }
    part.fail("normalizer type \"" + type + "\" is not supported (journey knows NFC, NFD, NFKC, NFKD, Lowercase, "
              "Strip, StripAccents, Replace, Prepend, Sequence)");
}

}  // namespace journey
