// A regular expression compiled by Oniguruma, the engine Hugging Face tokenizers compiles the
// Split pre-tokenizer's and the Replace normalizer's patterns with (through the Rust onig
// crate): UTF-8, the default (Oniguruma) syntax, no options. Matches are found as that crate's
// find_iter finds them: left to right, each search starting where the last match ended and
// seeing the whole text (so look-behind and look-ahead see past the search range), an empty
// match right after the previous match skipped by one character.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace journey {

class OnigRegex {
public:
    // Throws std::invalid_argument with Oniguruma's message for an invalid pattern.
    explicit OnigRegex(std::string_view pattern);
    ~OnigRegex();
    OnigRegex(const OnigRegex&) = delete;
    OnigRegex& operator=(const OnigRegex&) = delete;

    // Every match in text as (begin, end) byte offsets. text must be valid UTF-8. A pattern that
    // backtracks without bound (nested quantifiers) is stopped by a budget set explicitly (10^7
    // backtracking steps in one match, 10^8 in one search) with ModelError quoting the pattern.
    void find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& matches) const;

private:
    void* regex_ = nullptr;  // regex_t*
    std::string pattern_;
};

}  // namespace journey
