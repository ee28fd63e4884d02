#include "prompt_ids.h"

#include "journey/errors.h"
#include "journey/text/prompt.h"

namespace journey::cli {

std::vector<TokenId> prompt_ids(const Model& m, const std::string& text, bool truncate, int ctx) {
    std::vector<TokenId> ids = encode_prompt(m.tokenizer(), text);  // BOS, or <|endoftext|> when empty
    const size_t n_ctx = static_cast<size_t>(ctx);
    if (ids.size() > n_ctx) {
        if (!truncate)
            throw InputError("prompt is " + std::to_string(ids.size()) + " tokens, longer than the context of " +
                             std::to_string(n_ctx) + " (use --truncate to keep the last " + std::to_string(n_ctx) + ")");
        ids.erase(ids.begin(), ids.end() - static_cast<std::ptrdiff_t>(n_ctx));
    }
    return ids;
}

}  // namespace journey::cli
