// SentencePiece-style BPE with scores: encoding by best-score merges, exact decoding.
// (Loading from GGUF metadata or llama2.c's tokenizer.bin lives in spm_tokenizer_files.cpp, from
// a Hugging Face tokenizer.json is HfTokenizer, hf/tokenizer.h.)
#include "journey/text/spm_tokenizer.h"

#include <algorithm>
#include <queue>

#include "journey/errors.h"
#include "journey/text/llama_vocab_rules.h"

namespace journey {

namespace {

constexpr std::string_view kSpace = "\xe2\x96\x81";    // U+2581 "▁", SentencePiece's space
constexpr std::string_view kUnknown = "\xe2\x96\x85";  // U+2585 "▅", llama.cpp's text for <unk>

// "<0xNN>" -> NN, or -1.
int parse_byte_token(std::string_view s) {
    if (s.size() != 6 || s.substr(0, 3) != "<0x" || s[5] != '>') return -1;
    auto hex = [](char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    const int hi = hex(s[3]), lo = hex(s[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

// Length of the UTF-8 character at s[i]: 1 for ASCII and for bytes that do not start a
// well-formed sequence (so invalid input falls back to single bytes, and a "▁" after a stray
// lead byte stays a space).
size_t utf8_char_len(std::string_view s, size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c >= 0xF8 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (n > s.size() - i) return 1;
    for (size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 1;
    return n;
}

std::string replace_all(std::string_view s, std::string_view from, std::string_view to) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        if (s.compare(i, from.size(), from) == 0) {
            out += to;
            i += from.size();
        } else {
            out += s[i++];
        }
    }
    return out;
}

}  // namespace

SpmTokenizer::SpmTokenizer(std::vector<std::string> tokens, std::vector<float> scores,
                           std::vector<TokenType> types, Options options, const std::string& source)
    : tokens_(std::move(tokens)), scores_(std::move(scores)), types_(std::move(types)), options_(options) {
    auto bad = [&](const std::string& problem) { throw ModelError(source + ": unusable tokenizer: " + problem); };
    const auto n = tokens_.size();
    if (n == 0) bad("no tokens");
    if (n > size_t(INT32_MAX)) bad("too many tokens");
    if (scores_.size() != n) bad(std::to_string(n) + " tokens but " + std::to_string(scores_.size()) + " scores");
    if (types_.size() != n) bad(std::to_string(n) + " tokens but " + std::to_string(types_.size()) + " token types");
    for (auto [name, id] : {std::pair{"BOS", options_.bos}, {"EOS", options_.eos}, {"unknown", options_.unk}})
        if (id < 0 || size_t(id) >= n) bad(std::string(name) + " token id " + std::to_string(id) + " is out of range");

    byte_tokens_.fill(options_.unk);
    std::array<bool, 256> seen{};
    for (size_t i = 0; i < n; ++i) {
        const TokenId id = TokenId(i);
        switch (types_[i]) {
            case TokenType::Byte: {
                const int b = parse_byte_token(tokens_[i]);
                if (b < 0) bad("byte token " + std::to_string(i) + " is not of the form <0xNN>");
                if (!seen[size_t(b)]) byte_tokens_[size_t(b)] = id;
                seen[size_t(b)] = true;
                break;
            }
            case TokenType::Control:
            case TokenType::Unknown:
                if (!tokens_[i].empty()) specials_.push_back({id, tokens_[i], true});
                break;
            case TokenType::UserDefined:
                if (!tokens_[i].empty()) specials_.push_back({id, tokens_[i], false});
                pieces_.emplace(tokens_[i], id);
                break;
            case TokenType::Normal:
            case TokenType::Unused:
            case TokenType::Undefined:
                pieces_.emplace(tokens_[i], id);  // the first of duplicate texts wins
                break;
        }
    }
    has_byte_tokens_ = std::all_of(seen.begin(), seen.end(), [](bool b) { return b; });
    // What llama.cpp overrides by text, and the per-model strip attributes.
    for (LlamaSpecial& sp : specials_) {
        if (llama_cpp_forces_control(sp.text)) sp.control = true;
        if (llama_cpp_forces_user_defined(sp.text)) sp.control = false;
        sp.lstrip = std::find(options_.lstrip.begin(), options_.lstrip.end(), sp.id) != options_.lstrip.end();
        sp.rstrip = std::find(options_.rstrip.begin(), options_.rstrip.end(), sp.id) != options_.rstrip.end();
    }
    std::stable_sort(specials_.begin(), specials_.end(),
                     [](const LlamaSpecial& a, const LlamaSpecial& b) { return a.text.size() > b.text.size(); });
}

std::optional<TokenId> SpmTokenizer::piece_id(std::string_view piece) const {
    auto it = pieces_.find(piece);
    if (it == pieces_.end()) return std::nullopt;
    return it->second;
}

std::vector<TokenId> SpmTokenizer::encode(std::string_view text, bool parse_special) const {
    std::vector<TokenId> out;
    bool after_special = true;  // the start of the text counts as "after a special token"
    size_t raw_start = 0;
    auto flush_raw = [&](size_t end) {
        if (end == raw_start) return;
        std::string raw = replace_all(text.substr(raw_start, end - raw_start), " ", kSpace);
        if (after_special && options_.add_space_prefix) raw.insert(0, kSpace);
        encode_raw(raw, out);
        after_special = false;
    };
    // Special tokens are cut out first (user-defined ones always, control ones when parsed), as
    // llama.cpp's tokenizer_st_partition does.
    for (const LlamaFragment& f : llama_cpp_partition(text, specials_, parse_special)) {
        if (f.token < 0) {
            raw_start = f.begin;
            flush_raw(f.end);
        } else {
            out.push_back(f.token);
            after_special = true;
        }
    }
    return out;
    return out;
}

// Merge the characters of one fragment (spaces already "▁") into pieces.
void SpmTokenizer::encode_raw(std::string_view text, std::vector<TokenId>& out) const {
    struct Symbol {
        int prev, next;
        size_t start, len;  // bytes of text; len 0 once merged into its left neighbour
    };
    std::vector<Symbol> sym;
    for (size_t i = 0; i < text.size();) {
        const size_t len = utf8_char_len(text, i);
        const int k = int(sym.size());
        sym.push_back({k - 1, k + 1, i, len});
        i += len;
    }
    if (sym.empty()) return;
    sym.back().next = -1;

    struct Bigram {
        float score;
        int left, right;
        size_t len;
    };
    // Highest score first; on equal scores the leftmost pair first.
    auto lower = [](const Bigram& a, const Bigram& b) {
        return a.score < b.score || (a.score == b.score && a.left > b.left);
    };
    std::priority_queue<Bigram, std::vector<Bigram>, decltype(lower)> queue(lower);
    auto try_pair = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        const size_t len = sym[size_t(left)].len + sym[size_t(right)].len;
        if (auto id = piece_id(text.substr(sym[size_t(left)].start, len)))
            queue.push({scores_[size_t(*id)], left, right, len});
    };
    for (size_t i = 1; i < sym.size(); ++i) try_pair(int(i) - 1, int(i));

    while (!queue.empty()) {
        const Bigram bg = queue.top();
        queue.pop();
        Symbol& l = sym[size_t(bg.left)];
        Symbol& r = sym[size_t(bg.right)];
        // Skip pairs made stale by an earlier merge of either side.
        if (l.len == 0 || r.len == 0 || l.len + r.len != bg.len) continue;
        l.len += r.len;
        r.len = 0;
        l.next = r.next;
        if (r.next >= 0) sym[size_t(r.next)].prev = bg.left;
        try_pair(l.prev, bg.left);
        try_pair(bg.left, l.next);
    }

    for (int i = 0; i >= 0; i = sym[size_t(i)].next) {
        const std::string_view piece = text.substr(sym[size_t(i)].start, sym[size_t(i)].len);
        const auto id = piece_id(piece);
        if (id) {
            out.push_back(*id);
        } else if (has_byte_tokens_) {
            for (unsigned char b : piece) out.push_back(byte_tokens_[b]);  // byte fallback
        } else {
            out.push_back(options_.unk);  // one <unk> per unknown character
        }
    }
}

std::string SpmTokenizer::token_bytes(TokenId id) const {
    if (id < 0 || size_t(id) >= tokens_.size())
        throw InputError("token id " + std::to_string(id) + " is out of range (vocabulary of " +
                         std::to_string(tokens_.size()) + ")");
    const std::string& text = tokens_[size_t(id)];
    switch (types_[size_t(id)]) {
        case TokenType::Byte: return std::string(1, char(parse_byte_token(text)));
        case TokenType::Control: return "";
        case TokenType::Unknown: return std::string(kUnknown);
        default: return replace_all(text, kSpace, " ");
    }
}

std::string SpmTokenizer::decode(std::span<const TokenId> ids) const {
    std::string out;
    bool strip_space = options_.add_space_prefix;  // encode added one at the start
    for (TokenId id : ids) {
        std::string piece = token_bytes(id);
        if (types_[size_t(id)] == TokenType::Control) {
            // ... and after each special token
            strip_space = options_.add_space_prefix;
            continue;
        }
        if (strip_space && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
        strip_space = false;
        out += piece;
    }
    return out;
}

}  // namespace journey
