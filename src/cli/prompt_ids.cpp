#include "prompt_ids.h"

#include <algorithm>
#include <charconv>

#include "journey/errors.h"
#include "journey/text/prompt.h"

namespace journey::cli {

std::vector<TokenId> parse_id_list(std::string_view text, std::string_view flag) {
    std::vector<TokenId> ids;
    auto sep = [](char c) { return c == ' ' || c == ',' || c == '\n' || c == '\r' || c == '\t'; };
    std::string_view s = text;
    // A JSON array ("tokenize --json | jq -c .ids") is the same list between brackets.
    while (!s.empty() && sep(s.front())) s.remove_prefix(1);
    while (!s.empty() && sep(s.back())) s.remove_suffix(1);
    if (s.starts_with('[') && s.ends_with(']')) s = s.substr(1, s.size() - 2);
    size_t i = 0;
    while (i < s.size()) {
        if (sep(s[i])) { ++i; continue; }
        size_t j = i;
        while (j < s.size() && !sep(s[j])) ++j;
        const std::string_view word = s.substr(i, j - i);
        TokenId id = -1;
        const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), id);
        if (ec != std::errc() || end != word.data() + word.size() || id < 0)
            throw InputError(std::string(flag) + ": \"" + std::string(word) + "\" is not a token id (a non-negative integer)");
        ids.push_back(id);
        i = j;
    }
    return ids;
}

void check_ids(const std::vector<TokenId>& ids, int32_t n_vocab, std::string_view flag) {
    for (TokenId id : ids)
        if (id >= n_vocab)
            throw InputError(std::string(flag) + ": token id " + std::to_string(id) + " is out of the vocabulary [0, " +
                             std::to_string(n_vocab) + ")");
}

PromptInput read_prompt_input(const PromptSource& src) {
    if (src.ids.empty()) return {read_prompt(src), std::nullopt};
    const std::string list = src.ids == "-" ? read_file("-", "--ids") : src.ids;
    std::vector<TokenId> ids = parse_id_list(list, "--ids");
    if (ids.empty()) throw UsageError("--ids: no token ids given");
    return {std::string(), std::move(ids)};
}

namespace {

// The longest token of the vocabulary, in bytes: no token covers more of the text (a normalizer
// may shorten the text, hence the margin the caller leaves).
size_t longest_token(const Tokenizer& tok) {
    size_t longest = 1;
    for (TokenId id = 0; id < tok.n_vocab(); ++id) longest = std::max(longest, tok.token_bytes(id).size());
    return longest;
}

}  // namespace

std::vector<TokenId> prompt_ids(const Model& m, const PromptInput& in, bool truncate, size_t limit) {
    const size_t n_ctx = static_cast<size_t>(m.config().n_ctx);
    if (limit == 0 || limit > n_ctx) limit = n_ctx;
    const std::string limit_text = (limit == n_ctx ? "model's context of " : "context in use of ") + std::to_string(limit);
    // A text that cannot fit is refused before it is tokenized: a 100 MB prompt took 2.5 GB and a
    // minute to be told it exceeds a context of 4096 (--truncate still needs every id).
    if (!in.ids && !truncate && in.text.size() / 4 > limit) {
        const size_t longest = longest_token(m.tokenizer());
        if (in.text.size() / 4 / longest > limit)
            throw InputError("prompt: " + std::to_string(in.text.size()) + " bytes, more than the " + limit_text +
                             " tokens can hold (no token is longer than " + std::to_string(longest) +
                             " bytes; use --truncate to keep the last " + std::to_string(limit) + " tokens)");
    }
    std::vector<TokenId> ids;
    if (in.ids) {
        check_ids(*in.ids, m.config().n_vocab, "--ids");  // rows of the model (padding rows included)
        ids = *in.ids;
    } else {
        ids = encode_prompt(m.tokenizer(), in.text);  // BOS, or <|endoftext|> when empty
    }
    if (ids.size() > limit) {
        if (!truncate || limit == 0)
            throw InputError("prompt: " + std::to_string(ids.size()) + " tokens, longer than the " + limit_text +
                             " (use --truncate to keep the last " + std::to_string(limit) + ")");
        ids.erase(ids.begin(), ids.end() - static_cast<std::ptrdiff_t>(limit));
    }
    return ids;
}

}  // namespace journey::cli
