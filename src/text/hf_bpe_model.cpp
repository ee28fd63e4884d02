#include "journey/text/hf_bpe_model.h"

#include <algorithm>
#include <cstdio>

#include "journey/text/byte_unicode.h"
#include "journey/text/tokenizer_loader.h"
#include "journey/text/unicode.h"

namespace journey {
namespace {

// Whether every character of a vocabulary string is in GPT-2's byte-to-unicode map, i.e. the
// string can come out of the ByteLevel pre-tokenizer.
bool is_byte_level_text(std::string_view s) { return bytes_to_unicode(unicode_to_bytes(s)) == s; }

}  // namespace

HfBpeModel::HfBpeModel(const HfPart& part, bool byte_level, const BpeTables* tables) : byte_level_(byte_level) {
    const std::string type = part.type();
    if (type != "BPE")
        part.fail("model type \"" + type + "\" is not supported (journey knows BPE" +
                  (type == "WordPiece" || type == "Unigram" || type == "WordLevel" ? "; " + type + " is not implemented)" : ")"));
    if (part.has("dropout") && !(part.j["dropout"].is_number() && part.j["dropout"].get<double>() <= 0))
        part.fail("dropout " + HfPart::shown(part.j["dropout"]) + " is not supported (it makes encoding random)");
    ignore_merges_ = part.boolean("ignore_merges", false);
    byte_fallback_ = part.boolean("byte_fallback", false);
    fuse_unk_ = part.boolean("fuse_unk", false);
    prefix_ = part.string("continuing_subword_prefix", "");
    suffix_ = part.string("end_of_word_suffix", "");

    // The vocabulary, id -> string and back.
    const bool from_tables = tables && tables->read;
    static const nlohmann::json no_json;
    const HfPart vocab_part = from_tables ? HfPart{part.file, part.path + ".vocab", no_json} : part.at("vocab");
    BpeVocab vocab;
    if (from_tables) {
        vocab.reserve(tables->vocab.size());
        for (const auto& [text, id] : tables->vocab) vocab.emplace_back(text, id);
    } else {
        vocab = parse_vocab_json(vocab_part.j, part.file);
    }
    TokenId max_id = -1;
    for (const auto& [text, id] : vocab) max_id = std::max(max_id, id);
    // Gaps are allowed (a vocabulary cut down to what some texts use keeps its ids), within reason:
    // the id table costs 40 bytes an id.
    if (max_id >= 0 && static_cast<size_t>(max_id) > 2 * vocab.size() + (size_t(1) << 20))
        vocab_part.fail("id " + std::to_string(max_id) + " is far beyond the " + std::to_string(vocab.size()) + " tokens");
    tokens_.resize(static_cast<size_t>(max_id + 1));
    present_.assign(tokens_.size(), false);
    for (const auto& [text, id] : vocab) {
        if (present_[id])
            vocab_part.fail("id " + std::to_string(id) + " is used by both " + HfPart::shown(tokens_[id]) + " and " +
                            HfPart::shown(std::string(text)));
        tokens_[id] = text;
        present_[id] = true;
    }
    ids_ = decltype(ids_)(vocab.size());
    for (size_t id = 0; id < tokens_.size(); ++id)
        if (present_[id]) ids_.insert_or_assign(tokens_[id], TokenId(id));  // views tokens_, sized for good
    if (ids_.size() != vocab.size())  // only the file's own order can hold a key twice (a tree keeps one)
        vocab_part.fail("holds a token twice");

    if (byte_level_) {
        size_t total = 0;
        for (const std::string& t : tokens_) total += t.size();
        raw_.resize(total);
        raw_ids_ = decltype(raw_ids_)(vocab.size());
        char* w = raw_.data();
        for (size_t id = 0; id < tokens_.size(); ++id) {
            if (!present_[id] || !is_byte_level_text(tokens_[id])) continue;
            char* end = unicode_to_bytes(tokens_[id], w);
            raw_ids_.insert_or_assign(std::string_view(w, size_t(end - w)), TokenId(id));
            w = end;
        }
        auto to_raw = [&](std::string& s, const char* key) {
            if (!is_byte_level_text(s)) part.fail(std::string(key) + " " + HfPart::shown(s) + " is not byte-level text");
            s = unicode_to_bytes(s);
        };
        to_raw(prefix_, "continuing_subword_prefix");
        to_raw(suffix_, "end_of_word_suffix");
    }

    if (part.has("unk_token")) {
        const std::string unk = part.string("unk_token");
        const TokenId* id = ids_.find(unk);
        if (!id) part.fail("unk_token " + HfPart::shown(unk) + " is not in model.vocab");
        unk_ = *id;
    }
    byte_tokens_.fill(-1);
    if (byte_fallback_)
        for (int b = 0; b < 256; ++b) {
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", b);
            if (const TokenId* id = ids_.find(name)) byte_tokens_[size_t(b)] = *id;
        }

    // Merges in rank order; a repeated pair takes the later rank, as in HF.
    const HfPart merges_part = from_tables ? HfPart{part.file, part.path + ".merges", no_json} : part.at("merges");
    std::vector<BpeMerge> merges;
    if (from_tables) {
        merges.reserve(tables->merges.size());
        for (const auto& [left, right] : tables->merges) merges.push_back({left, right});
    } else {
        merges = parse_merges_json(merges_part.j, part.file);
    }
    merges_ = decltype(merges_)(merges.size());
    std::string joined;
    const std::string prefix_text = part.string("continuing_subword_prefix", "");  // vocabulary form
    for (size_t rank = 0; rank < merges.size(); ++rank) {
        const BpeMerge& m = merges[rank];
        auto lookup = [&](std::string_view s) {
            const TokenId* id = ids_.find(s);
            if (!id)
                HfPart{part.file, merges_part.path + "[" + std::to_string(rank) + "]", no_json}.fail("merge " + HfPart::shown(std::string(m.left) + " " + std::string(m.right)) +
                                          " names " + HfPart::shown(std::string(s)) + ", which is not in model.vocab");
            return *id;
        };
        // The right part loses its continuing_subword_prefix in the merged token (HF's rule).
        std::string_view right = m.right;
        if (!prefix_text.empty() && right.starts_with(prefix_text)) right.remove_prefix(prefix_text.size());
        joined.assign(m.left);
        joined += right;
        const TokenId l = lookup(m.left), r = lookup(m.right), merged = lookup(joined);
        merges_.insert_or_assign(pair_key(l, r), Merge{int32_t(rank), merged});
    }
}

const std::string* HfBpeModel::token(TokenId id) const {
    if (id < 0 || size_t(id) >= tokens_.size() || !present_[size_t(id)]) return nullptr;
    return &tokens_[size_t(id)];
}

std::optional<TokenId> HfBpeModel::id_of(std::string_view token) const {
    if (const TokenId* id = ids_.find(token)) return *id;
    return std::nullopt;
}

void HfBpeModel::tokenize(std::string_view piece, std::vector<TokenId>& out, Scratch& s) const {
    if (piece.empty()) return;
    if (ignore_merges_) {
        if (const TokenId* id = find(piece)) {
            out.push_back(*id);
            return;
        }
    }
    // The characters (bytes, when byte-level) as initial symbols.
    s.ids.clear();
    bool unk_waiting = false;  // an unknown token waits to be added (fuse_unk fuses a run)
    const bool plain = prefix_.empty() && suffix_.empty();
    for (size_t pos = 0; pos < piece.size();) {
        const size_t len = byte_level_ ? 1 : unicode::char_at(piece, pos).len;
        std::string_view key = piece.substr(pos, len);
        const bool first = pos == 0;
        pos += len;
        if (!plain) {
            s.key.clear();
            if (!first) s.key += prefix_;
            s.key += key;
            if (pos == piece.size()) s.key += suffix_;
            key = s.key;
        }
        if (const TokenId* id = find(key)) {
            if (unk_waiting) s.ids.push_back(*unk_), unk_waiting = false;
            s.ids.push_back(*id);
            continue;
        }
        if (byte_fallback_ && std::all_of(key.begin(), key.end(), [&](char c) { return byte_tokens_[uint8_t(c)] >= 0; })) {
            for (char c : key) s.ids.push_back(byte_tokens_[uint8_t(c)]);
            continue;
        }
        if (unk_) {
            if (unk_waiting && !fuse_unk_) s.ids.push_back(*unk_);
            unk_waiting = true;
        }
    }
    if (unk_waiting) s.ids.push_back(*unk_);
    merge_all(s);
    for (int i = s.symbols.empty() ? -1 : 0; i >= 0; i = s.symbols[size_t(i)].next) out.push_back(s.symbols[size_t(i)].id);
}

// HF's Word::merge_all: a queue of (rank, position) candidates; a popped candidate whose pair
// has changed since it was queued is stale and skipped.
void HfBpeModel::merge_all(Scratch& s) const {
    const int n = int(s.ids.size());
    s.symbols.resize(size_t(n));
    for (int i = 0; i < n; ++i) s.symbols[size_t(i)] = {s.ids[size_t(i)], i - 1, i + 1 < n ? i + 1 : -1};
    auto& queue = s.queue;
    queue.clear();
    auto consider = [&](int left) {
        const int right = s.symbols[size_t(left)].next;
        if (right < 0) return;
        if (const Merge* m = merges_.find(pair_key(s.symbols[size_t(left)].id, s.symbols[size_t(right)].id))) {
            queue.push_back({m->rank, left, m->merged});
            std::push_heap(queue.begin(), queue.end(), std::greater<>{});
        }
    };
    for (int i = 0; i + 1 < n; ++i) consider(i);
    s.dead.assign(size_t(n), 0);
    auto& dead = s.dead;
    while (!queue.empty()) {
        std::pop_heap(queue.begin(), queue.end(), std::greater<>{});
        const Scratch::Candidate c = queue.back();
        queue.pop_back();
        auto& left = s.symbols[size_t(c.pos)];
        if (dead[size_t(c.pos)] || left.next < 0) continue;
        const Merge* m = merges_.find(pair_key(left.id, s.symbols[size_t(left.next)].id));
        if (!m || m->merged != c.merged) continue;
        const int right = left.next;
        left.id = c.merged;
        dead[size_t(right)] = 1;
        left.next = s.symbols[size_t(right)].next;
        if (left.next >= 0) s.symbols[size_t(left.next)].prev = c.pos;
        if (left.prev >= 0) consider(left.prev);
        consider(c.pos);
    }
}

}  // namespace journey
