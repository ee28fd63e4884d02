// GPT-2's vocab.json, {"token": id, ...}, read fast: a small scanner walks the one flat object
// such a file is, and the tokens are views into the file's text, not 50k separate strings.
// Whatever the scanner does not expect (any error, but also a byte-order mark or an id written
// "-0") is handed to nlohmann::json, so the tokens and the errors are always exactly nlohmann's.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "journey/text/bpe_tokenizer.h"

namespace journey {

class VocabJson {
public:
    // `text` is the file's content, which must outlive this object; `file` names it in errors
    // (ModelError: invalid JSON, a value that is not an id in [0, 2^31), or not an object at all).
    VocabJson(std::string_view text, const std::string& file);
    // The tokens point into this object, so it stays where it was made.
    VocabJson(const VocabJson&) = delete;
    VocabJson& operator=(const VocabJson&) = delete;

    // (token, id) in file order, duplicates included, as views into the text or this object.
    const BpeVocab& tokens() const { return tokens_; }
    // Whether nlohmann::json read the file because the scanner gave up on it (for tests).
    bool read_by_nlohmann() const { return read_by_nlohmann_; }

private:
    bool scan();  // the fast path; false when nlohmann must read the text
    bool scan_string(const char*& p, const char* end, std::string_view& out);
    void parse_with_nlohmann(const std::string& file);

    std::string_view text_;
    // Tokens that the file writes with escapes, decoded one after another. Allocated (as long as
    // the text, left uninitialised so that untouched pages cost nothing) at the first escape.
    std::unique_ptr<char[]> unescaped_;
    size_t unescaped_used_ = 0;
    std::vector<std::pair<std::string, TokenId>> owned_;  // the tokens, when nlohmann read them
    BpeVocab tokens_;
    bool read_by_nlohmann_ = false;
};

}  // namespace journey
