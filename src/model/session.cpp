#include "journey/model/session.h"

#include "journey/errors.h"

namespace journey {

Session::Session(const Model& model) : model_(model) {
    const ModelConfig& c = model.config();
    const size_t per_layer = static_cast<size_t>(c.n_ctx) * static_cast<size_t>(c.n_kv_head * c.head_dim);
    k_cache_.assign(per_layer * static_cast<size_t>(c.n_layer), 0.0f);
    v_cache_.assign(per_layer * static_cast<size_t>(c.n_layer), 0.0f);
}

int Session::n_ctx() const { return model_.config().n_ctx; }
int Session::n_vocab() const { return model_.config().n_vocab; }

std::span<const float> Session::eval(std::span<const TokenId> tokens, LogitsFor which) {
    if (tokens.empty()) throw InputError("nothing to evaluate: no tokens");
    const int64_t end = int64_t{n_past_} + static_cast<int64_t>(tokens.size());
    if (end > n_ctx())
        throw InputError("context full: " + std::to_string(n_past_) + " + " + std::to_string(tokens.size()) +
                         " tokens exceed the model's context of " + std::to_string(n_ctx()));
    for (TokenId id : tokens)
        if (id < 0 || id >= n_vocab())
            throw InputError("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                             std::to_string(n_vocab()) + ")");
    forward(tokens, which);
    n_past_ = static_cast<int>(end);
    return logits_;
}

}  // namespace journey
