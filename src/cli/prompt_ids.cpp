#include "prompt_ids.h"

#include "journey/errors.h"
#include "journey/spm_tokenizer.h"

namespace journey::cli {

std::vector<TokenId> prompt_ids(const Model& m, const std::string& text, bool truncate) {
    const Tokenizer& tok = m.tokenizer();
    std::vector<TokenId> ids = tok.encode(text);
    if (auto* spm = dynamic_cast<const SpmTokenizer*>(&tok); spm && spm->add_bos()) ids.insert(ids.begin(), *spm->bos_id());
    if (ids.empty()) {
        auto start = tok.bos_id() ? tok.bos_id() : tok.eos_id();
        if (!start) throw InputError("empty prompt, and the tokenizer has no start/end-of-text token to condition on");
        ids.push_back(*start);
    }
    const size_t n_ctx = static_cast<size_t>(m.config().n_ctx);
    if (ids.size() > n_ctx) {
        if (!truncate)
            throw InputError("prompt is " + std::to_string(ids.size()) + " tokens, longer than the model's context of " +
                             std::to_string(n_ctx) + " (use --truncate to keep the last " + std::to_string(n_ctx) + ")");
        ids.erase(ids.begin(), ids.end() - static_cast<std::ptrdiff_t>(n_ctx));
    }
    return ids;
}

}  // namespace journey::cli
