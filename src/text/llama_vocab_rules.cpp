#include "journey/text/llama_vocab_rules.h"

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>

namespace journey {

bool llama_cpp_forces_control(std::string_view t) {
    static constexpr std::array<std::string_view, 61> texts = {
        // end of turn / generation
        "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
        "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
        "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
        "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>", "[e~[",
        // fill in the middle: prefix, suffix, middle, pad, repo, file separator
        "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\xef\xbd\x9c" "fim\xe2\x96\x81" "begin\xef\xbd\x9c>", "<PRE>",
        "\xe2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>",
        "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\xef\xbd\x9c" "fim\xe2\x96\x81hole\xef\xbd\x9c>", "<SUF>",
        "\xe2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>",
        "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\xef\xbd\x9c" "fim\xe2\x96\x81" "end\xef\xbd\x9c>", "<MID>",
        "\xe2\x96\x81<MID>", "<|code_middle|>", "<|middle|>",
        "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]",
        "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>", "<|file_sep|>",
    };
    return std::find(texts.begin(), texts.end(), t) != texts.end();
}

bool llama_cpp_forces_user_defined(std::string_view t) {
    return t == "<|channel|>" || t == "<|message|>" || t == "<|start|>" || t == "<|constrain|>";
}

namespace {
// C's isspace in the "C" locale, as llama.cpp calls it on each byte.
bool c_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
}  // namespace

std::vector<LlamaFragment> llama_cpp_partition(std::string_view text, const std::vector<LlamaSpecial>& specials,
                                               bool parse_special) {
    // llama.cpp takes each special token in turn (longest first) and cuts every raw fragment at
    // each of its occurrences, leftmost first. Done literally that costs tokens x text (a file
    // with 30,000 control tokens and a 100 KB prompt takes minutes), so the same result is
    // computed from the occurrences instead: a trie over the tokens' texts finds every
    // occurrence at every position; then, in llama.cpp's order (token priority, then position),
    // an occurrence is cut out if it lies wholly in text not yet cut (with the white space its
    // strip flags took). Cost: text x depth of the trie, plus the occurrences.
    const size_t n = text.size();
    std::vector<LlamaFragment> frags;
    if (n == 0) return frags;

    // The trie: children by (node << 8 | byte); the tokens whose text ends at each node.
    std::unordered_map<uint64_t, uint32_t> child;
    std::vector<std::vector<uint32_t>> ends(1);
    for (uint32_t k = 0; k < specials.size(); ++k) {
        const LlamaSpecial& s = specials[k];
        if (s.text.empty() || (!parse_special && s.control)) continue;
        uint32_t node = 0;
        for (unsigned char c : s.text) {
            auto [it, added] = child.try_emplace((uint64_t(node) << 8) | c, uint32_t(ends.size()));
            if (added) ends.emplace_back();
            node = it->second;
        }
        ends[node].push_back(k);
    }
    if (ends.size() == 1) return {{-1, 0, n}};

    struct Occurrence {
        uint32_t special;
        size_t pos;
    };
    std::vector<Occurrence> occ;
    for (size_t pos = 0; pos < n; ++pos) {
        uint32_t node = 0;
        for (size_t i = pos; i < n; ++i) {
            auto it = child.find((uint64_t(node) << 8) | static_cast<unsigned char>(text[i]));
            if (it == child.end()) break;
            node = it->second;
            for (uint32_t k : ends[node]) occ.push_back({k, pos});
        }
    }
    std::sort(occ.begin(), occ.end(), [](const Occurrence& a, const Occurrence& b) {
        return a.special != b.special ? a.special < b.special : a.pos < b.pos;
    });

    // What has been cut: [start, end) with the stripped white space, and the token inside it.
    struct Cut {
        size_t end, token_begin, token_end;
        int32_t id;
    };
    std::map<size_t, Cut> cuts;
    for (const Occurrence& o : occ) {
        const LlamaSpecial& s = specials[o.special];
        const size_t b = o.pos, e = o.pos + s.text.size();
        auto next = cuts.lower_bound(e);  // first cut starting at or after e
        size_t left_bound = 0;
        if (next != cuts.begin()) {
            const auto& prev = *std::prev(next);
            if (prev.second.end > b) continue;  // overlaps text already cut
            left_bound = prev.second.end;
        }
        const size_t right_bound = next == cuts.end() ? n : next->first;
        size_t start = b, end = e;
        if (s.lstrip)
            while (start > left_bound && c_space(text[start - 1])) --start;
        if (s.rstrip)
            while (end < right_bound && c_space(text[end])) ++end;
        cuts.emplace(start, Cut{end, b, e, s.id});
    }

    size_t at = 0;
    for (const auto& [start, cut] : cuts) {
        if (start > at) frags.push_back({-1, at, start});
        frags.push_back({cut.id, cut.token_begin, cut.token_end});
        at = cut.end;
    }
    if (at < n) frags.push_back({-1, at, n});
    return frags;
}

}  // namespace journey
