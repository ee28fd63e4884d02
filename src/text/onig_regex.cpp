#include "journey/text/onig_regex.h"

#include <memory>
#include <mutex>
#include <stdexcept>

#include <oniguruma.h>

#include "journey/errors.h"
#include "journey/text/unicode.h"

namespace journey {
namespace {

constexpr unsigned long kRetryLimitInMatch = 10'000'000;
constexpr unsigned long kRetryLimitInSearch = 100'000'000;

const OnigUChar* bytes(std::string_view s) { return reinterpret_cast<const OnigUChar*>(s.data()); }

void initialize_once() {
    static std::once_flag once;
    std::call_once(once, [] {
        OnigEncoding encodings[] = {ONIG_ENCODING_UTF8};
        onig_initialize(encodings, 1);
        // Explicit budgets (Oniguruma's default leaves the search unbounded): a tokenizer's
        // pattern is untrusted, and "(a|aa)+c" backtracks exponentially at every start.
        onig_set_retry_limit_in_match(kRetryLimitInMatch);
        onig_set_retry_limit_in_search(kRetryLimitInSearch);
    });
}

struct RegionFree {
    void operator()(OnigRegion* r) const { onig_region_free(r, 1); }
};

}  // namespace

OnigRegex::OnigRegex(std::string_view pattern) : pattern_(pattern) {
    initialize_once();
    regex_t* re = nullptr;
    OnigErrorInfo info{};
    const int rc = onig_new(&re, bytes(pattern), bytes(pattern) + pattern.size(), ONIG_OPTION_NONE, ONIG_ENCODING_UTF8,
                            ONIG_SYNTAX_DEFAULT, &info);
    if (rc != ONIG_NORMAL) {
        OnigUChar message[ONIG_MAX_ERROR_MESSAGE_LEN];
        onig_error_code_to_str(message, rc, &info);
        throw std::invalid_argument(reinterpret_cast<const char*>(message));
    }
    regex_ = re;
}

OnigRegex::~OnigRegex() { onig_free(static_cast<regex_t*>(regex_)); }

void OnigRegex::find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& matches) const {
    auto* re = static_cast<regex_t*>(regex_);
    const std::unique_ptr<OnigRegion, RegionFree> region(onig_region_new());
    const OnigUChar* const start = bytes(text);
    const OnigUChar* const end = start + text.size();
    size_t from = 0;
    bool matched_before = false;
    size_t last_match_end = 0;
    while (from <= text.size()) {
        const int at = onig_search(re, start, end, start + from, end, region.get(), ONIG_OPTION_NONE);
        if (at < 0) {
            if (at == ONIG_MISMATCH) break;
            if (at == ONIGERR_RETRY_LIMIT_IN_MATCH_OVER || at == ONIGERR_RETRY_LIMIT_IN_SEARCH_OVER)
                throw ModelError("the tokenizer's regular expression '" + excerpt(pattern_, 60) + "' backtracked more than " +
                                 std::to_string(at == ONIGERR_RETRY_LIMIT_IN_MATCH_OVER ? kRetryLimitInMatch : kRetryLimitInSearch) +
                                 " steps on this input (a pattern with nested quantifiers; refused rather than hang)");
            OnigUChar message[ONIG_MAX_ERROR_MESSAGE_LEN];
            onig_error_code_to_str(message, at);
            throw ModelError("the tokenizer's regular expression '" + excerpt(pattern_, 60) + "' failed: " +
                             reinterpret_cast<const char*>(message));
        }
        const auto b = static_cast<size_t>(region->beg[0]), e = static_cast<size_t>(region->end[0]);
        if (b == e && matched_before && last_match_end == e) {
            // An empty match where the last one ended: step over one character and search again.
            from += from < text.size() ? unicode::char_at(text, from).len : 1;
            continue;
        }
        from = e;
        matched_before = true;
        last_match_end = e;
        matches.emplace_back(b, e);
    }
}

}  // namespace journey
