#include "journey/text/hf/bpe_model.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "journey/text/byte_unicode.h"
#include "journey/text/unicode.h"

namespace journey {
namespace {

// Lookups run in batches of this many: hashed and prefetched first, then done.
constexpr size_t kBatch = 16;

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

    // The vocabulary and merges as tables: read from the file already, or from the JSON part.
    const bool from_tables = tables && tables->read;
    static const nlohmann::json no_json;
    const HfPart vocab_part = from_tables ? HfPart{part.file, part.path + ".vocab", no_json} : part.at("vocab");
    const HfPart merges_part = from_tables ? HfPart{part.file, part.path + ".merges", no_json} : part.at("merges");
    BpeTables parsed;
    if (!from_tables) {
        bool fits = true;
        for (const auto& [text, id] : parse_vocab_json(vocab_part.j, part.file)) fits = fits && parsed.add_token(text, id);
        for (const BpeMerge& m : parse_merges_json(merges_part.j, part.file)) fits = fits && parsed.add_merge(m.left, m.right);
        if (!fits) part.fail("holds more than 4 GiB of text");
        tables = &parsed;
    }
    const size_t n_tokens = tables->n_tokens();

    // The vocabulary, id -> string and back.
    TokenId max_id = -1;
    for (const TokenId id : tables->vocab_ids) max_id = std::max(max_id, id);
    // Gaps are allowed (a vocabulary cut down to what some texts use keeps its ids), within reason.
    if (max_id >= 0 && static_cast<size_t>(max_id) > 2 * n_tokens + (size_t(1) << 20))
        vocab_part.fail("id " + std::to_string(max_id) + " is far beyond the " + std::to_string(n_tokens) + " tokens");
    // The strings in id order, in one arena: each id's length, then where it starts.
    const size_t n_ids = static_cast<size_t>(max_id + 1);
    present_.assign(n_ids, false);
    text_at_.assign(n_ids + 1, 0);
    for (size_t i = 0; i < n_tokens; ++i) {
        const TokenId id = tables->vocab_ids[i];
        if (present_[size_t(id)]) {
            size_t first = 0;
            while (tables->vocab_ids[first] != id) ++first;
            vocab_part.fail("id " + std::to_string(id) + " is used by both " + HfPart::shown(std::string(tables->token(first))) +
                            " and " + HfPart::shown(std::string(tables->token(i))));
        }
        present_[size_t(id)] = true;
        text_at_[size_t(id) + 1] = uint32_t(tables->token(i).size());
    }
    for (size_t id = 0; id < n_ids; ++id) text_at_[id + 1] += text_at_[id];  // at most the tables' 4 GiB
    text_.resize(tables->vocab_text.size());
    for (size_t i = 0; i < n_tokens; ++i) {
        const std::string_view t = tables->token(i);
        std::copy(t.begin(), t.end(), text_.data() + text_at_[size_t(tables->vocab_ids[i])]);
    }

    // Absent ids have empty strings: only ids that are present go in (an empty token may be one).
    std::vector<uint32_t> present_ids;
    present_ids.reserve(n_tokens);
    for (size_t id = 0; id < n_ids; ++id)
        if (present_[id]) present_ids.push_back(uint32_t(id));
    // string -> id, inserted in batches (the table is bigger than the cache).
    auto insert_all = [](IdMap& map, const std::vector<uint32_t>& ids, const auto& string_of) {
        uint64_t h[kBatch];
        for (size_t base = 0; base < ids.size(); base += kBatch) {
            const size_t m = std::min(kBatch, ids.size() - base);
            for (size_t i = 0; i < m; ++i) map.prefetch(h[i] = IdMap::hash(string_of(int32_t(ids[base + i]))));
            for (size_t i = 0; i < m; ++i) {
                const auto id = int32_t(ids[base + i]);
                map.insert_or_assign(string_of(id), id, h[i], string_of);
            }
        }
    };
    ids_ = IdMap(n_tokens);
    insert_all(ids_, present_ids, TextOf{this});
    if (ids_.size() != n_tokens)  // only the file's own order can hold a key twice (a tree keeps one)
        vocab_part.fail("holds a token twice");

    if (byte_level_) {
        raw_.resize(text_.size());
        raw_at_.assign(n_ids + 1, 0);
        std::vector<uint32_t> raw_ids;  // the ids whose text is byte-level text
        raw_ids.reserve(present_ids.size());
        char* w = raw_.data();
        for (size_t id = 0; id < n_ids; ++id) {
            char* end = present_[id] ? byte_level_to_bytes(text_of(id), w) : nullptr;
            if (end) raw_ids.push_back(uint32_t(id));
            else end = w;
            raw_at_[id + 1] = uint32_t(end - raw_.data());
            w = end;
        }
        raw_ids_ = IdMap(raw_ids.size());
        insert_all(raw_ids_, raw_ids, RawOf{this});
        auto to_raw = [&](std::string& s, const char* key) {
            std::string raw(s.size(), '\0');
            char* end = byte_level_to_bytes(s, raw.data());
            if (!end) part.fail(std::string(key) + " " + HfPart::shown(s) + " is not byte-level text");
            raw.resize(size_t(end - raw.data()));
            s = std::move(raw);
        };
        to_raw(prefix_, "continuing_subword_prefix");
        to_raw(suffix_, "end_of_word_suffix");
    }

    if (part.has("unk_token")) {
        const std::string unk = part.string("unk_token");
        const int32_t* id = ids_.find(unk, TextOf{this});
        if (!id) part.fail("unk_token " + HfPart::shown(unk) + " is not in model.vocab");
        unk_ = *id;
    }
    byte_tokens_.fill(-1);
    if (byte_fallback_)
        for (int b = 0; b < 256; ++b) {
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", b);
            if (const int32_t* id = ids_.find(name, TextOf{this})) byte_tokens_[size_t(b)] = *id;
        }

    // Merges in rank order; a repeated pair takes the later rank, as in HF.
    const size_t n_merges = tables->n_merges();
    auto merge_at = [&](size_t rank) { return std::pair{tables->merge_left(rank), tables->merge_right(rank)}; };
    merges_ = PairMap(n_merges);
    const std::string prefix_text = part.string("continuing_subword_prefix", "");  // vocabulary form
    // Most vocabularies were made by their merges: merge r made token r + 256 or so. The next
    // new token is tried first (one string compare, no hash lookup); the strings are distinct, so
    // an equal string is the token.
    size_t guess = 0;
    // A merge is prepared (its three strings hashed, their slots prefetched) kAhead merges before
    // it is looked up, and its merge-table slot prefetched kAhead merges before it is inserted:
    // the tables are bigger than the cache, and this overlaps their memory round trips.
    constexpr size_t kAhead = 16;
    struct Pending {
        std::string_view left, right, joined;
        uint64_t h_left = 0, h_right = 0, h_joined = 0;
        std::string own;  // the merged string, when it is not left and right side by side
    };
    struct Done {
        uint64_t key = 0;
        TokenId merged = 0;
    };
    Pending ahead[kAhead];
    Done done[kAhead];
    auto prepare = [&](size_t rank) {
        Pending& p = ahead[rank % kAhead];
        std::tie(p.left, p.right) = merge_at(rank);
        // The right part loses its continuing_subword_prefix in the merged token (HF's rule).
        std::string_view right = p.right;
        if (!prefix_text.empty() && right.starts_with(prefix_text)) right.remove_prefix(prefix_text.size());
        if (right.size() == p.right.size() && p.left.data() + p.left.size() == p.right.data()) {
            p.joined = std::string_view(p.left.data(), p.left.size() + p.right.size());  // the tables keep them so
        } else {
            p.own.assign(p.left);
            p.own += right;
            p.joined = p.own;
        }
        ids_.prefetch(p.h_left = IdMap::hash(p.left));
        ids_.prefetch(p.h_right = IdMap::hash(p.right));
        ids_.prefetch(p.h_joined = IdMap::hash(p.joined));
    };
    for (size_t rank = 0; rank < std::min(kAhead, n_merges); ++rank) prepare(rank);
    for (size_t rank = 0; rank < n_merges; ++rank) {
        const Pending& p = ahead[rank % kAhead];
        auto lookup = [&](std::string_view s, uint64_t h) {
            const int32_t* id = ids_.find(s, h, TextOf{this});
            if (!id)
                HfPart{part.file, merges_part.path + "[" + std::to_string(rank) + "]", no_json}.fail(
                    "merge " + HfPart::shown(std::string(p.left) + " " + std::string(p.right)) + " names " +
                    HfPart::shown(std::string(s)) + ", which is not in model.vocab");
            return *id;
        };
        const TokenId l = lookup(p.left, p.h_left), r = lookup(p.right, p.h_right);
        TokenId merged;
        while (guess < n_ids && !present_[guess]) ++guess;
        if (guess < n_ids && text_of(guess) == p.joined) merged = TokenId(guess++);
        else merged = lookup(p.joined, p.h_joined);
        Done& d = done[rank % kAhead];
        if (rank >= kAhead) merges_.insert_or_assign(d.key, int32_t(rank - kAhead), d.merged);
        d = Done{PairMap::key(l, r), merged};
        merges_.prefetch(d.key);
        if (rank + kAhead < n_merges) prepare(rank + kAhead);  // into the slot just used
    }
    for (size_t rank = n_merges > kAhead ? n_merges - kAhead : 0; rank < n_merges; ++rank)
        merges_.insert_or_assign(done[rank % kAhead].key, int32_t(rank), done[rank % kAhead].merged);
}

std::optional<std::string_view> HfBpeModel::token(TokenId id) const {
    if (id < 0 || size_t(id) >= present_.size() || !present_[size_t(id)]) return std::nullopt;
    return text_of(size_t(id));
}

std::optional<TokenId> HfBpeModel::id_of(std::string_view token) const {
    if (const int32_t* id = ids_.find(token, TextOf{this})) return *id;
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
    s.merge(out, [&](TokenId left, TokenId right) -> std::optional<BpeRank> {
        if (const PairMap::Entry* m = merges_.find(PairMap::key(left, right))) return BpeRank{m->a, m->b};
        return std::nullopt;
    });
}

}  // namespace journey
