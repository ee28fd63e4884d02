// BPE merges, shared by both BPE tokenizers (BpeTokenizer, GPT-2's fast path; hf/bpe_model.h,
// any tokenizer.json BPE model): the vocabulary and merges as read from tokenizer.json or
// vocab.json + merges.txt, and the one merge engine both run.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "journey/text/tokenizer.h"

namespace journey {

// The vocabulary: (token, id) pairs. The tokens view the text they were read from (vocab.json,
// a parsed tokenizer.json), which must outlive only the tokenizer's constructor.
using BpeVocab = std::vector<std::pair<std::string_view, TokenId>>;

// One line of merges.txt or entry of tokenizer.json's "merges": views, like the vocabulary's
// tokens, into the text it was read from.
struct BpeMerge {
    std::string_view left, right;
    int line = 0;  // line in merges.txt (for error messages); 0 when not from a text file
};

// tokenizer.json's model.vocab {"token": id, ...} as (token, id) pairs, and model.merges ("a b"
// strings or ["a", "b"] pairs), as views into the JSON's strings. `file` names the source in errors.
BpeVocab parse_vocab_json(const nlohmann::json& vocab, const std::string& file);
std::vector<BpeMerge> parse_merges_json(const nlohmann::json& merges, const std::string& file);

// merges.txt as Hugging Face reads it: a line starting with "#version" is skipped, every other
// line must be two tokens separated by one space. The merges view `text`. `file` names the
// source in errors.
std::vector<BpeMerge> parse_merges_txt(std::string_view text, const std::string& file);

// What a merge table says of an adjacent pair: its rank, and the token it merges into.
struct BpeRank {
    int32_t rank;
    TokenId merged;
};

// The merge engine, as Hugging Face's Word::merge_all: a heap of (rank, position) candidates;
// the applicable merge of lowest rank is applied (leftmost first among equal ranks), again and
// again; a popped candidate whose pair has changed since it was queued is stale and skipped.
// Its buffers are reused from piece to piece by one caller.
struct BpeMerger {
    struct Symbol {
        TokenId id;
        int prev, next;  // live neighbours, -1 at the ends
    };
    struct Candidate {
        int32_t rank;
        int pos;  // index of the left symbol
        TokenId merged;
        bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
    };
    std::vector<TokenId> ids;  // the piece's first symbols: the caller fills them
    std::vector<Symbol> symbols;
    std::vector<Candidate> queue;
    std::vector<uint8_t> dead;  // symbol merged into its left neighbour

    // Merges `ids` and appends the result to `out`. find(left, right) -> std::optional<BpeRank>.
    template <class Find>
    void merge(std::vector<TokenId>& out, const Find& find) {
        const int n = int(ids.size());
        symbols.resize(size_t(n));
        for (int i = 0; i < n; ++i) symbols[size_t(i)] = {ids[size_t(i)], i - 1, i + 1 < n ? i + 1 : -1};
        queue.clear();
        auto consider = [&](int left) {
            const int right = symbols[size_t(left)].next;
            if (right < 0) return;
            if (const std::optional<BpeRank> m = find(symbols[size_t(left)].id, symbols[size_t(right)].id)) {
                queue.push_back({m->rank, left, m->merged});
                std::push_heap(queue.begin(), queue.end(), std::greater<>{});
            }
        };
        for (int i = 0; i + 1 < n; ++i) consider(i);
        dead.assign(size_t(n), 0);
        while (!queue.empty()) {
            std::pop_heap(queue.begin(), queue.end(), std::greater<>{});
            const Candidate c = queue.back();
            queue.pop_back();
            Symbol& left = symbols[size_t(c.pos)];
            if (dead[size_t(c.pos)] || left.next < 0) continue;
            const std::optional<BpeRank> m = find(left.id, symbols[size_t(left.next)].id);
            if (!m || m->merged != c.merged) continue;
            const int right = left.next;
            left.id = c.merged;
            dead[size_t(right)] = 1;
            left.next = symbols[size_t(right)].next;
            if (left.next >= 0) symbols[size_t(left.next)].prev = c.pos;
            if (left.prev >= 0) consider(left.prev);
            consider(c.pos);
        }
        for (int i = n ? 0 : -1; i >= 0; i = symbols[size_t(i)].next) out.push_back(symbols[size_t(i)].id);
    }
};

}  // namespace journey
