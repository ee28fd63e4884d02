// tokenizer.json's "added_tokens", found in the text before anything else runs, as Hugging Face
// tokenizers finds them: the leftmost match, the longest among those starting there, then on
// from its end (aho-corasick's LeftmostLongest). A trie over the tokens' bytes, entered only at
// bytes that start some token, keeps this linear in the text for any number of tokens.
// Flags as the library honours them: single_word (the match must not touch a word character on
// either side), lstrip / rstrip (the token also takes the white space before / after it), and
// special (skipped when special tokens are not parsed). Tokens with normalized=true are matched
// in the normalized text, the others in the raw text: two matchers.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "journey/text/flat_map.h"
#include "journey/text/tokenizer.h"

namespace journey {

struct HfAddedToken {
    TokenId id = 0;
    std::string content;
    bool special = false, lstrip = false, rstrip = false, single_word = false, normalized = false;
};

class AddedTokenMatcher {
public:
    AddedTokenMatcher() = default;
    explicit AddedTokenMatcher(std::vector<HfAddedToken> tokens);

    struct Segment {
        size_t begin, end;
        const HfAddedToken* token;  // nullptr: text between tokens
    };
    // text cut into tokens and the text between them (HF's split_with_indices), appended to out.
    void split(std::string_view text, bool parse_special, std::vector<Segment>& out) const;
    bool empty() const { return tokens_.empty(); }

private:
    // The longest token starting at pos: its index, or -1; len gets its length.
    int32_t longest_at(std::string_view text, size_t pos, size_t& len) const;

    std::vector<HfAddedToken> tokens_;
    std::array<bool, 256> starts_{};                    // bytes that begin some token
    FlatMap<uint64_t, uint32_t, IntHash> edges_;        // (node << 8 | byte) -> child node
    std::vector<int32_t> token_at_;                     // node -> index of the token ending there, or -1
};

}  // namespace journey
