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
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <vector>

#include "journey/text/flat_map.h"
#include "journey/text/hf_part.h"
#include "journey/text/tokenizer.h"

namespace journey {

// model.vocab and model.merges as read straight from the file (tokenizer_json_reader.h), when
// `read`; otherwise the model reads them from its JSON part.
struct BpeTables {
    bool read = false;
    std::vector<std::pair<std::string, TokenId>> vocab;         // in file order
    std::vector<std::pair<std::string, std::string>> merges;  // in rank order
};

class HfBpeModel {
public:
    // part: tokenizer.json's "model". ModelError for a model type other than BPE (named), a merge
    // naming an unknown token, duplicate ids, an unk_token not in the vocabulary, dropout.
    // tables: model.vocab and model.merges already read (then the part's own are not used).
    HfBpeModel(const HfPart& part, bool byte_level, const BpeTables* tables = nullptr);
    HfBpeModel(const HfBpeModel&) = delete;
    HfBpeModel& operator=(const HfBpeModel&) = delete;

    // Buffers reused from piece to piece by one caller.
    struct Scratch {
        struct Symbol {
            TokenId id;
            int prev, next;  // live neighbours, -1 at the ends
        };
        struct Candidate {
            int32_t rank;
            int pos;
            TokenId merged;
            bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
        };
        std::vector<TokenId> ids;
        std::vector<Symbol> symbols;
        std::vector<Candidate> queue;
        std::vector<uint8_t> dead;  // symbol merged into its left neighbour
        std::string key;
    };

    // Appends the ids of one piece.
    void tokenize(std::string_view piece, std::vector<TokenId>& ids, Scratch& scratch) const;

    // The vocabulary's string for an id (nullptr when the model has no such id).
    const std::string* token(TokenId id) const;
    // The id of a vocabulary string.
    std::optional<TokenId> id_of(std::string_view token) const;
    // One past the largest id.
    size_t n_ids() const { return tokens_.size(); }

private:
    struct Merge {
        int32_t rank = 0;
        TokenId merged = 0;
    };
    static uint64_t pair_key(TokenId a, TokenId b) {
        return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
    }
    // The id of a string in the pieces' form (raw bytes when byte-level).
    const TokenId* find(std::string_view key) const { return (byte_level_ ? raw_ids_ : ids_).find(key); }
    void merge_all(Scratch& s) const;

    bool byte_level_;
    bool ignore_merges_ = false, byte_fallback_ = false, fuse_unk_ = false;
    std::optional<TokenId> unk_;
    std::string prefix_, suffix_;  // continuing_subword_prefix, end_of_word_suffix (pieces' form)
    std::vector<std::string> tokens_;                 // id -> vocabulary string
    std::vector<bool> present_;                       // id -> in the vocabulary
    FlatMap<std::string_view, TokenId, BytesHash> ids_;      // vocabulary string -> id
    std::string raw_;                                         // byte-level: every token's raw bytes
    FlatMap<std::string_view, TokenId, BytesHash> raw_ids_;  // byte-level: raw bytes -> id
    std::array<TokenId, 256> byte_tokens_{};          // <0xNN> ids (byte_fallback), -1 when missing
    FlatMap<uint64_t, Merge, IntHash> merges_;
};

}  // namespace journey
