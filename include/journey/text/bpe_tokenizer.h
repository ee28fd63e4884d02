// GPT-2 byte-level BPE, exactly as Hugging Face tokenizers does it: the fast path for a
// tokenizer.json of GPT-2's own form (and vocab.json + merges.txt), running the same merge
// engine as hf/bpe_model.h (BpeMerger) with GPT-2's pre-tokenizer scanner and a piece cache:
//   text -> split on special tokens -> GPT-2 pre-tokenizer pieces -> bytes -> rank-ordered merges.
// Vocabulary strings are in GPT-2's byte-to-unicode form ("Ġ" is the byte 0x20); inside, every
// token is kept as the raw bytes it stands for, so BPE and decoding work on bytes directly.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "journey/text/bpe_merges.h"
#include "journey/text/flat_map.h"
#include "journey/text/hf/added_tokens.h"
#include "journey/text/tokenizer.h"

namespace journey {

// The vocabulary (BpeVocab) and merges (BpeMerge) are in byte-to-unicode form (bpe_merges.h).

// An entry of tokenizer.json's "added_tokens". Its content is plain text, not byte-to-unicode.
struct AddedToken {
    TokenId id;
    std::string content;
    bool special = true;  // special tokens are matched only when parse_special is on
};

// Where the vocabulary and merges came from, to name them in error messages.
struct BpeSources {
    std::string vocab = "<vocabulary>";
    std::string merges = "<merges>";
};

class BpeTokenizer : public Tokenizer {
public:
    // vocab: (token in byte-to-unicode form, id) pairs; merges in rank order (first = rank 0).
    // Throws ModelError for duplicate ids, a merge naming an unknown token, or a missing byte token.
    BpeTokenizer(const BpeVocab& vocab, const std::vector<BpeMerge>& merges, const std::vector<AddedToken>& added,
                 const BpeSources& sources = {});

    std::vector<TokenId> encode(std::string_view text, bool parse_special = true) const override;
    std::string token_bytes(TokenId id) const override;  // InputError if id is not in the vocabulary
    int32_t n_vocab() const override { return static_cast<int32_t>(span_of_.size()); }
    // GPT-2 has one special token, <|endoftext|>, both begins and ends a text.
    std::optional<TokenId> bos_id() const override { return eos_id_; }
    std::optional<TokenId> eos_id() const override { return eos_id_; }
    std::string kind() const override { return "gpt2-bpe"; }

private:
    struct Merge {
        int32_t rank = 0;
        TokenId merged = 0;
    };
    static uint64_t pair_key(TokenId a, TokenId b) {
        return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
    }
    // Appends the ids of one pre-tokenizer piece.
    void encode_piece(std::string_view piece, std::vector<TokenId>& ids, BpeMerger& merger) const;
    // The cache of one encode() call: a piece seen before -> where its ids already are in the output.
    struct IdSpan {
        size_t offset = 0, count = 0;
    };
    using PieceCache = FlatMap<std::string_view, IdSpan, BytesHash>;
    // Appends the ids of text that holds no added token.
    void encode_ordinary(std::string_view text, PieceCache& cache, BpeMerger& merger, std::vector<TokenId>& ids) const;

    struct Span {
        uint32_t offset = 0, size = 0;
    };
    std::string bytes_;                                // every token's raw bytes, one after another
    std::vector<Span> span_of_;                        // id -> its raw bytes in bytes_
    std::vector<bool> present_;                        // id -> is in the vocabulary
    std::array<TokenId, 256> byte_token_{};            // byte -> id of its one-byte token
    FlatMap<uint64_t, Merge, IntHash> merges_;         // (left id, right id) -> rank, merged id
    // The added tokens, matched in the text before BPE (leftmost, then longest) by a trie, so that
    // the work stays linear in the text however many there are: all of them, and the non-special ones.
    AddedTokenMatcher added_all_, added_plain_;
    std::optional<TokenId> eos_id_;
};

}  // namespace journey
