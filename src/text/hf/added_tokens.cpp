#include "journey/text/hf/added_tokens.h"

#include <algorithm>

#include "journey/text/unicode.h"

namespace journey {
namespace {

// The last character of text[0, end) / the first of text[begin, ...) is a word character
// (Rust's is_alphanumeric or '_'): HF's ends_with_word / starts_with_word.
bool word_char(int32_t cp) { return cp == '_' || unicode::is_alphanumeric(cp); }

bool ends_with_word(std::string_view text, size_t end) {
    if (end == 0) return false;
    size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    return word_char(unicode::char_at(text, start).cp);
}

bool starts_with_word(std::string_view text, size_t begin) {
    return begin < text.size() && word_char(unicode::char_at(text, begin).cp);
}

// Where the white space that ends text[0, end) begins.
size_t white_space_start(std::string_view text, size_t end) {
    while (end > 0) {
        size_t start = end - 1;
        while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
        if (!unicode::is_white_space(unicode::char_at(text, start).cp)) break;
        end = start;
    }
    return end;
}

// Where the white space that starts text[begin, ...) ends.
size_t white_space_end(std::string_view text, size_t begin) {
    while (begin < text.size()) {
        const unicode::Char ch = unicode::char_at(text, begin);
        if (!unicode::is_white_space(ch.cp)) break;
        begin += ch.len;
    }
    return begin;
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<HfAddedToken> tokens) : tokens_(std::move(tokens)) {
    token_at_.push_back(-1);  // the root
    for (size_t k = 0; k < tokens_.size(); ++k) {
        const std::string& c = tokens_[k].content;
        if (c.empty()) continue;
        starts_[static_cast<unsigned char>(c[0])] = true;
        uint32_t node = 0;
        for (char ch : c) {
            const uint64_t key = uint64_t(node) << 8 | static_cast<unsigned char>(ch);
            if (const uint32_t* child = edges_.find(key)) {
                node = *child;
            } else {
                const auto fresh = static_cast<uint32_t>(token_at_.size());
                token_at_.push_back(-1);
                edges_.insert_or_assign(key, fresh);
                node = fresh;
            }
        }
        if (token_at_[node] < 0) token_at_[node] = static_cast<int32_t>(k);  // the first of duplicates
    }
}

int32_t AddedTokenMatcher::longest_at(std::string_view text, size_t pos, size_t& len) const {
    int32_t best = -1;
    uint32_t node = 0;
    for (size_t k = pos; k < text.size(); ++k) {
        const uint32_t* child = edges_.find(uint64_t(node) << 8 | static_cast<unsigned char>(text[k]));
        if (!child) break;
        node = *child;
        if (token_at_[node] >= 0) {
            best = token_at_[node];
            len = k + 1 - pos;
        }
    }
    return best;
}

void AddedTokenMatcher::split(std::string_view text, bool parse_special, std::vector<Segment>& out) const {
    size_t done = 0;  // end of what is already in out
    for (size_t pos = 0; pos < text.size();) {
        if (!starts_[static_cast<unsigned char>(text[pos])]) {
            ++pos;
            continue;
        }
        size_t len = 0;
        const int32_t k = longest_at(text, pos, len);
        if (k < 0) {
            ++pos;
            continue;
        }
        const HfAddedToken& t = tokens_[size_t(k)];
        size_t begin = pos, end = pos + len;
        pos = end;  // matching goes on after the match, whatever becomes of it
        if (t.special && !parse_special) continue;
        if (t.single_word && (ends_with_word(text, begin) || starts_with_word(text, end))) continue;
        if (t.lstrip) begin = std::max(white_space_start(text, begin), done);
        if (t.rstrip) end = white_space_end(text, end);
        begin = std::max(begin, done);  // HF's offsets may overlap here; the text is cut once
        if (end <= begin) continue;
        if (done < begin) out.push_back({done, begin, nullptr});
        out.push_back({begin, end, &t});
        done = end;
    }
    if (done < text.size()) out.push_back({done, text.size(), nullptr});
}

}  // namespace journey
