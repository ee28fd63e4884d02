// tokenizer.json's BPE "model", as Hugging Face tokenizers runs it on each pre-tokenizer piece:
// with ignore_merges, a piece that is a token is that token; otherwise the piece is cut into
// characters (continuing_subword_prefix before all but the first, end_of_word_suffix after the
// last), a character without a token becomes its <0xNN> byte tokens (byte_fallback) or the
// unknown token (fused into one for a run when fuse_unk; dropped when there is no unk_token,
// as HF drops it), and then the adjacent pair of lowest merge rank is merged, again and again
// (leftmost first among equal ranks).
// For a byte-level vocabulary (ByteLevel pre-tokenizer) the pieces are raw bytes and the
// characters are bytes: the vocabulary is read back to raw bytes (GPT-2's byte-to-unicode map
// undone), and a token holding a character outside that map can only be an added token.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "journey/text/bpe_merges.h"
#include "journey/text/flat_map.h"
#include "journey/text/hf/part.h"
#include "journey/text/tokenizer.h"

namespace journey {

// model.vocab and model.merges as read straight from the file (tokenizer_json_reader.h), when
// `read`; otherwise the model reads them from its JSON part. The strings are packed in two
// arenas (no allocation per token or merge): token i is vocab_text up to vocab_ends[i] from the
// previous end, with id vocab_ids[i]; merge i is the parts 2i and 2i+1 of merge_text cut at
// merge_ends. Offsets are 32-bit: add_*() refuse (false) a table that would pass 4 GiB.
struct BpeTables {
    bool read = false;
    std::string vocab_text;
    std::vector<uint32_t> vocab_ends;
    std::vector<TokenId> vocab_ids;  // in file order
    std::string merge_text;
    std::vector<uint32_t> merge_ends;  // two a merge (left, right), in rank order

    bool add_token(std::string_view text, TokenId id) {
        if (!append(vocab_text, vocab_ends, text)) return false;
        vocab_ids.push_back(id);
        return true;
    }
    bool add_merge_part(std::string_view part) { return append(merge_text, merge_ends, part); }
    bool add_merge(std::string_view left, std::string_view right) {
        return add_merge_part(left) && add_merge_part(right);
    }
    size_t n_tokens() const { return vocab_ids.size(); }
    std::string_view token(size_t i) const { return cut(vocab_text, vocab_ends, i); }
    size_t n_merges() const { return merge_ends.size() / 2; }
    std::string_view merge_left(size_t i) const { return cut(merge_text, merge_ends, 2 * i); }
    std::string_view merge_right(size_t i) const { return cut(merge_text, merge_ends, 2 * i + 1); }

private:
    static bool append(std::string& text, std::vector<uint32_t>& ends, std::string_view s) {
        if (s.size() > UINT32_MAX - text.size()) return false;
        text += s;
        ends.push_back(uint32_t(text.size()));
        return true;
    }
    static std::string_view cut(const std::string& text, const std::vector<uint32_t>& ends, size_t i) {
        const uint32_t begin = i ? ends[i - 1] : 0;
        return std::string_view(text).substr(begin, ends[i] - begin);
    }
};

class HfBpeModel {
public:
    // part: tokenizer.json's "model". ModelError for a model type other than BPE (named), a merge
    // naming an unknown token, duplicate ids, an unk_token not in the vocabulary, dropout.
    // tables: model.vocab and model.merges already read (then the part's own are not used).
    HfBpeModel(const HfPart& part, bool byte_level, const BpeTables* tables = nullptr);
    HfBpeModel(const HfBpeModel&) = delete;
    HfBpeModel& operator=(const HfBpeModel&) = delete;

    // Buffers reused from piece to piece by one caller: the merge engine's (bpe_merges.h), and a key.
    struct Scratch : BpeMerger {
        std::string key;
    };

    // Appends the ids of one piece.
    void tokenize(std::string_view piece, std::vector<TokenId>& ids, Scratch& scratch) const;

    // The vocabulary's string for an id (nullopt when the model has no such id).
    std::optional<std::string_view> token(TokenId id) const;
    // The id of a vocabulary string.
    std::optional<TokenId> id_of(std::string_view token) const;
    // One past the largest id.
    size_t n_ids() const { return present_.size(); }

private:
    // The id of a string in the pieces' form (raw bytes when byte-level).
    const TokenId* find(std::string_view key) const {
        return byte_level_ ? raw_ids_.find(key, RawOf{this}) : ids_.find(key, TextOf{this});
    }
    std::string_view text_of(size_t id) const {
        return std::string_view(text_).substr(text_at_[id], text_at_[id + 1] - text_at_[id]);
    }
    // id -> its vocabulary string, its raw bytes (for the IdMaps).
    struct TextOf {
        const HfBpeModel* m;
        std::string_view operator()(int32_t id) const { return m->text_of(size_t(id)); }
    };
    struct RawOf {
        const HfBpeModel* m;
        std::string_view operator()(int32_t id) const {
            return std::string_view(m->raw_).substr(m->raw_at_[size_t(id)], m->raw_at_[size_t(id) + 1] - m->raw_at_[size_t(id)]);
        }
    };

    bool byte_level_;
    bool ignore_merges_ = false, byte_fallback_ = false, fuse_unk_ = false;
    std::optional<TokenId> unk_;
    std::string prefix_, suffix_;  // continuing_subword_prefix, end_of_word_suffix (pieces' form)
    std::string text_;                                // every token's vocabulary string, in id order
    std::vector<uint32_t> text_at_;                   // id -> its string: text_ from text_at_[id] to text_at_[id + 1]
    std::vector<bool> present_;                       // id -> in the vocabulary
    IdMap ids_;                                       // vocabulary string -> id
    std::string raw_;                                 // byte-level: the raw bytes of every byte-level token, in id order
    std::vector<uint32_t> raw_at_;                    // id -> its raw bytes in raw_ (empty when not byte-level)
    IdMap raw_ids_;                                   // byte-level: raw bytes -> id
    std::array<TokenId, 256> byte_tokens_{};          // <0xNN> ids (byte_fallback), -1 when missing
    PairMap merges_;  // (left id, right id) -> a: rank, b: merged id
};

}  // namespace journey
