#include "journey/model/session.h"

#include <algorithm>

#include "journey/errors.h"

namespace journey {

int default_ctx(const ModelConfig& c) { return std::min(c.n_ctx, kDefaultCtxCap); }

Session::Session(const Model& model, const SessionOptions& opts) : model_(model), kv_type_(opts.kv_type) {
    const ModelConfig& c = model.config();
    if (opts.n_ctx < 0) throw UsageError("-c/--ctx-size: must not be negative, got " + std::to_string(opts.n_ctx));
    if (opts.n_ctx > c.n_ctx)
        throw UsageError("-c/--ctx-size: " + std::to_string(opts.n_ctx) + " exceeds the model's context of " +
                         std::to_string(c.n_ctx));
    n_ctx_ = opts.n_ctx > 0 ? opts.n_ctx : default_ctx(c);
    const size_t per_layer = static_cast<size_t>(n_ctx_) * static_cast<size_t>(c.n_kv_head) * static_cast<size_t>(c.head_dim);
    const size_t all = per_layer * static_cast<size_t>(c.n_layer);
    if (kv_type_ == KvType::f32) {
        k_cache_.assign(all, 0.0f);
        v_cache_.assign(all, 0.0f);
    } else {
        k16_.assign(all, KvHalf{});
        v16_.assign(all, KvHalf{});
        kv_scratch_.assign(2 * per_layer, 0.0f);
    }
}
int Session::n_vocab() const { return model_.config().n_vocab; }

std::span<const float> Session::eval(std::span<const TokenId> tokens, LogitsFor which) {
    if (tokens.empty()) throw InputError("nothing to evaluate: no tokens");
    const int64_t end = int64_t{n_past_} + static_cast<int64_t>(tokens.size());
    if (end > n_ctx())
        throw InputError("context full: " + std::to_string(n_past_) + " + " + std::to_string(tokens.size()) +
                         " tokens exceed the context of " + std::to_string(n_ctx()));
    for (TokenId id : tokens)
        if (id < 0 || id >= n_vocab())
            throw InputError("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                             std::to_string(n_vocab()) + ")");
    forward(tokens, which);
    n_past_ = static_cast<int>(end);
    return logits_;
}

}  // namespace journey
