#include "journey/text/llama_vocab_rules.h"

#include <algorithm>
#include <array>

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
    std::vector<LlamaFragment> frags, next;
    if (!text.empty()) frags.push_back({-1, 0, text.size()});
    for (const LlamaSpecial& s : specials) {
        if (s.text.empty() || (!parse_special && s.control)) continue;
        next.clear();
        for (const LlamaFragment& f : frags) {
            if (f.token >= 0) {
                next.push_back(f);
                continue;
            }
            size_t begin = f.begin;
            const size_t end = f.end;
            while (begin < end) {
                const size_t match = text.substr(0, end).find(s.text, begin);
                if (match == std::string_view::npos) break;
                size_t left_end = match;
                if (s.lstrip)
                    while (left_end > begin && c_space(text[left_end - 1])) --left_end;
                if (left_end > begin) next.push_back({-1, begin, left_end});
                next.push_back({s.id, match, match + s.text.size()});
                begin = match + s.text.size();
                if (s.rstrip && begin < end)
                    while (begin < end && c_space(text[begin])) ++begin;
            }
            if (begin < end) next.push_back({-1, begin, end});
        }
        frags.swap(next);
    }
    return frags;
}

}  // namespace journey
