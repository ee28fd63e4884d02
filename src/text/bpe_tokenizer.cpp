#include "journey/text/bpe_tokenizer.h"

#include <algorithm>
#include <string_view>

#include "journey/text/byte_unicode.h"
#include "journey/errors.h"
#include "journey/text/pretokenize.h"

namespace journey {
namespace {

[[noreturn]] void throw_unknown_token(const BpeSources& sources, const BpeMerge& m, size_t rank, std::string_view token) {
    std::string where = m.line > 0 ? sources.merges + ":" + std::to_string(m.line) : sources.merges + ": merge " + std::to_string(rank);
    throw ModelError(where + ": merge \"" + excerpt(m.left, 40) + " " + excerpt(m.right, 40) + "\" names \"" +
                     excerpt(token, 40) + "\", which is not in the vocabulary");
}

}  // namespace

BpeTokenizer::BpeTokenizer(const BpeVocab& vocab, const std::vector<BpeMerge>& merges,
                           const std::vector<AddedToken>& added, const BpeSources& sources) {
    // The vocabulary: id -> raw bytes, and (byte-to-unicode string) -> id for resolving merges.
    TokenId max_id = -1;
    size_t text_size = 0;  // of every token and added token: the raw bytes are no longer
    for (const auto& [token, id] : vocab) {
        if (id < 0)
            throw ModelError(sources.vocab + ": token \"" + excerpt(token, 40) + "\" has negative id " + std::to_string(id));
        max_id = std::max(max_id, id);
        text_size += token.size();
    }
    for (const auto& a : added) {
        if (a.id < 0) throw ModelError(sources.vocab + ": added token \"" + excerpt(a.content, 40) + "\" has a negative id");
        max_id = std::max(max_id, a.id);
        text_size += a.content.size();
    }
    if (text_size > UINT32_MAX) throw ModelError(sources.vocab + ": the tokens hold more than 4 GiB of text");
    // Ids may leave gaps, but not so large that the id -> bytes table would not fit in memory.
    const size_t entries = vocab.size() + added.size();
    if (static_cast<size_t>(max_id) > 2 * entries + 1024)
        throw ModelError(sources.vocab + ": id " + std::to_string(max_id) + " is far beyond the " +
                         std::to_string(entries) + " tokens");
    span_of_.resize(static_cast<size_t>(max_id + 1));
    present_.assign(span_of_.size(), false);
    bytes_.resize(text_size);
    size_t used = 0;  // of bytes_
    auto set_bytes = [&](TokenId id, const char* end) {  // id's bytes were just written to bytes_[used, end)
        const size_t size = static_cast<size_t>(end - (bytes_.data() + used));
        span_of_[id] = {static_cast<uint32_t>(used), static_cast<uint32_t>(size)};
        used += size;
        present_[id] = true;
    };
    FlatMap<std::string_view, TokenId, BytesHash> id_of(vocab.size());
    for (const auto& [token, id] : vocab) {
        if (present_[id]) {
            const auto first = std::find_if(vocab.begin(), vocab.end(), [id = id](const auto& e) { return e.second == id; });
            throw ModelError(sources.vocab + ": id " + std::to_string(id) + " is used by both \"" +
                             excerpt(first->first, 40) + "\" and \"" + excerpt(token, 40) + "\"");
        }
        set_bytes(id, unicode_to_bytes(token, bytes_.data() + used));
        id_of.insert_or_assign(token, id);
    }

    // Every byte must have its own token, or some text could not be encoded at all.
    for (int b = 0; b < 256; ++b) {
        std::string name = bytes_to_unicode(std::string(1, static_cast<char>(b)));
        const TokenId* id = id_of.find(name);
        if (!id)
            throw ModelError(sources.vocab + ": no token for the byte " + std::to_string(b) + " (\"" + name +
                             "\"); a byte-level BPE vocabulary needs all 256");
        byte_token_[b] = *id;
    }

    // Merges in rank order. As in Hugging Face, a repeated merge takes the later rank.
    merges_ = decltype(merges_)(merges.size());  // sized once for all merges
    std::string joined;  // left + right: one buffer for every merge, only ever grown
    for (size_t rank = 0; rank < merges.size(); ++rank) {
        const BpeMerge& m = merges[rank];
        auto lookup = [&](std::string_view token) {
            const TokenId* id = id_of.find(token);
            if (!id) throw_unknown_token(sources, m, rank, token);
            return *id;
        };
        const size_t size = m.left.size() + m.right.size();
        if (joined.size() < size) joined.resize(size);
        std::copy(m.right.begin(), m.right.end(), std::copy(m.left.begin(), m.left.end(), joined.data()));
        TokenId left = lookup(m.left), right = lookup(m.right), merged = lookup({joined.data(), size});
        merges_.insert_or_assign(pair_key(left, right), Merge{static_cast<int32_t>(rank), merged});
    }

    // Added tokens stand for their content as written, and are matched before BPE.
    std::vector<HfAddedToken> all, plain;
    for (const AddedToken& a : added) {
        set_bytes(a.id, std::copy(a.content.begin(), a.content.end(), bytes_.data() + used));
        if (!a.content.empty()) {
            all.push_back({.id = a.id, .content = a.content});
            if (!a.special) plain.push_back(all.back());
        }
        if (a.content == "<|endoftext|>") eos_id_ = a.id;
    }
    added_all_ = AddedTokenMatcher(std::move(all));
    added_plain_ = AddedTokenMatcher(std::move(plain));
    if (!eos_id_) {
        if (const TokenId* id = id_of.find("<|endoftext|>")) eos_id_ = *id;
    }
    bytes_.resize(used);
}

std::string BpeTokenizer::token_bytes(TokenId id) const {
    if (id < 0 || id >= n_vocab() || !present_[id])
        throw InputError("token id " + std::to_string(id) + " is not in the vocabulary (" +
                         std::to_string(n_vocab()) + " ids)");
    return bytes_.substr(span_of_[id].offset, span_of_[id].size);
}

// Byte-level BPE on one piece: one symbol per byte, then the merges (BpeMerger).
void BpeTokenizer::encode_piece(std::string_view piece, std::vector<TokenId>& ids, BpeMerger& merger) const {
    merger.ids.resize(piece.size());
    for (size_t i = 0; i < piece.size(); ++i) merger.ids[i] = byte_token_[static_cast<unsigned char>(piece[i])];
    merger.merge(ids, [&](TokenId left, TokenId right) -> std::optional<BpeRank> {
        if (const Merge* m = merges_.find(pair_key(left, right))) return BpeRank{m->rank, m->merged};
        return std::nullopt;
    });
}

void BpeTokenizer::encode_ordinary(std::string_view text, PieceCache& seen, BpeMerger& merger, std::vector<TokenId>& ids) const {
    for (size_t pos = 0; pos < text.size();) {
        size_t end = gpt2_piece_end(text, pos);
        std::string_view piece = text.substr(pos, end - pos);
        pos = end;
        if (piece.size() == 1) {
            ids.push_back(byte_token_[static_cast<unsigned char>(piece[0])]);
            continue;
        }
        if (const IdSpan* known = seen.find(piece)) {
            size_t at = ids.size();
            ids.resize(at + known->count);
            std::copy_n(ids.begin() + static_cast<ptrdiff_t>(known->offset), known->count,
                        ids.begin() + static_cast<ptrdiff_t>(at));
            continue;
        }
        size_t at = ids.size();
        encode_piece(piece, ids, merger);
        seen.insert_or_assign(piece, IdSpan{at, ids.size() - at});
    }
}

std::vector<TokenId> BpeTokenizer::encode(std::string_view text, bool parse_special) const {
    std::vector<TokenId> ids;
    ids.reserve(text.size() / 3 + 1);
    PieceCache cache;
    BpeMerger merger;
    const AddedTokenMatcher& added = parse_special ? added_all_ : added_plain_;
    if (added.empty()) {
        encode_ordinary(text, cache, merger, ids);
        return ids;
    }
    std::vector<AddedTokenMatcher::Segment> segments;
    added.split(text, true, segments);
    for (const auto& s : segments) {
        if (s.token) ids.push_back(s.token->id);
        else encode_ordinary(text.substr(s.begin, s.end - s.begin), cache, merger, ids);
    }
    return ids;
}

}  // namespace journey
