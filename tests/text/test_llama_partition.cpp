// llama_cpp_partition finds llama.cpp's cuts from the occurrences (near-linear in the text);
// here it is checked against llama.cpp's own procedure (llama-vocab.cpp,
// tokenizer_st_partition, v0.5.0) written out literally: each special in turn, longest first,
// cuts every raw fragment at each of its occurrences, with its lstrip/rstrip.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "journey/text/llama_vocab_rules.h"

using journey::LlamaFragment;
using journey::LlamaSpecial;

namespace {

bool c_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

std::vector<LlamaFragment> literal_partition(std::string_view text, const std::vector<LlamaSpecial>& specials,
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
                if (s.rstrip)
                    while (begin < end && c_space(text[begin])) ++begin;
            }
            if (begin < end) next.push_back({-1, begin, end});
        }
        frags.swap(next);
    }
    return frags;
}

std::string show(std::string_view text, const std::vector<LlamaFragment>& frags) {
    std::string out;
    for (const LlamaFragment& f : frags)
        out += (f.token >= 0 ? "[" + std::to_string(f.token) + ":" : "(") + std::string(text.substr(f.begin, f.end - f.begin)) +
               (f.token >= 0 ? "]" : ")");
    return out;
}

}  // namespace

TEST_CASE("llama.cpp partition: the occurrence form cuts exactly as llama.cpp's token-by-token loop",
          "[tokenizer][spm]") {
    // A small alphabet makes overlaps, nested and repeated specials common.
    std::mt19937 rng(20261203);
    const std::string alphabet = "ab< >|\n";
    auto random_string = [&](size_t len) {
        std::string s;
        for (size_t i = 0; i < len; ++i) s.push_back(alphabet[rng() % alphabet.size()]);
        return s;
    };
    int cut_cases = 0;
    for (int round = 0; round < 3000; ++round) {
        std::vector<LlamaSpecial> specials;
        const int count = 1 + int(rng() % 6);
        for (int k = 0; k < count; ++k) {
            LlamaSpecial s{100 + k, random_string(1 + rng() % 4), rng() % 2 == 0};
            s.lstrip = rng() % 3 == 0;
            s.rstrip = rng() % 3 == 0;
            specials.push_back(s);
        }
        std::stable_sort(specials.begin(), specials.end(),
                         [](const LlamaSpecial& a, const LlamaSpecial& b) { return a.text.size() > b.text.size(); });
        const std::string text = random_string(rng() % 40);
        for (bool parse_special : {false, true}) {
            const auto fast = journey::llama_cpp_partition(text, specials, parse_special);
            const auto slow = literal_partition(text, specials, parse_special);
            INFO("text '" << text << "'");
            REQUIRE(show(text, fast) == show(text, slow));
            if (fast.size() > 1) ++cut_cases;
        }
    }
    CHECK(cut_cases > 1000);  // the random cases do exercise cutting
}
