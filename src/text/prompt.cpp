#include "journey/text/prompt.h"

#include "journey/errors.h"

namespace journey {

std::optional<TokenId> start_token(const Tokenizer& tok) {
    if (auto bos = tok.bos_id()) return bos;
    return tok.eos_id();
}

std::vector<TokenId> encode_prompt(const Tokenizer& tok, std::string_view text, bool parse_special) {
    if (tok.add_bos() && !tok.bos_id()) throw InputError("the tokenizer asks for BOS but has no BOS token");
    std::vector<TokenId> ids = tok.special_prefix();
    const std::vector<TokenId> text_ids = tok.encode(text, parse_special);
    ids.insert(ids.end(), text_ids.begin(), text_ids.end());
    if (ids.empty()) {
        const auto start = start_token(tok);
        if (!start) throw InputError("empty prompt, and the tokenizer has no start/end-of-text token to condition on");
        ids.push_back(*start);
    }
    return ids;
}

bool drops_first_space(const Tokenizer& tok, std::span<const TokenId> prompt) {
    return tok.add_bos() && prompt.size() == 1 && tok.bos_id() == prompt[0];
}

}  // namespace journey
