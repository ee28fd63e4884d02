#include "journey/model/session.h"

#include <algorithm>

#include <stdexcept>

#include "journey/errors.h"
#include "journey/model/batcher.h"

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
    if (batcher_) return batcher_->eval(*this, tokens, which);
    return eval_here(tokens, which);
}

std::vector<std::span<const float>> Session::eval_tokens(std::span<Session* const> sessions, std::span<const TokenId> tokens) {
    if (sessions.size() != tokens.size()) throw std::logic_error("eval_tokens: one token per session");
    std::vector<std::span<const float>> out;
    if (sessions.size() == 1) {
        out.push_back(sessions[0]->eval_here(tokens));
        return out;
    }
    for (size_t i = 0; i < sessions.size(); ++i) {
        const Session& q = *sessions[i];
        if (&q.model_ != &sessions[0]->model_ || q.n_ctx_ != sessions[0]->n_ctx_ || q.observer_)
            throw std::logic_error("eval_tokens: sessions of one model and context, without observers");
        for (size_t j = 0; j < i; ++j)
            if (sessions[j] == sessions[i]) throw std::logic_error("eval_tokens: a session twice");
        if (q.n_past_ + 1 > q.n_ctx_)
            throw InputError("context full: " + std::to_string(q.n_past_) + " + 1 tokens exceed the context of " +
                             std::to_string(q.n_ctx_));
        if (tokens[i] < 0 || tokens[i] >= q.n_vocab())
            throw InputError("token id " + std::to_string(tokens[i]) + " is outside the vocabulary [0, " +
                             std::to_string(q.n_vocab()) + ")");
    }
    forward(sessions, tokens, LogitsFor::last, true);
    for (Session* q : sessions) {
        ++q->n_past_;
        out.emplace_back(q->logits_);
    }
    return out;
}

std::span<const float> Session::eval_here(std::span<const TokenId> tokens, LogitsFor which) {
    if (tokens.empty()) throw InputError("nothing to evaluate: no tokens");
    const int64_t end = int64_t{n_past_} + static_cast<int64_t>(tokens.size());
    if (end > n_ctx())
        throw InputError("context full: " + std::to_string(n_past_) + " + " + std::to_string(tokens.size()) +
                         " tokens exceed the context of " + std::to_string(n_ctx()));
    for (TokenId id : tokens)
        if (id < 0 || id >= n_vocab())
            throw InputError("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                             std::to_string(n_vocab()) + ")");
    // A long prompt runs in pieces of at most kPromptPiece tokens when nothing observes the pass
    // (as llama.cpp's ubatches): one eval's scratch holds the heads' attention patterns, H x T x
    // (P + T) floats, which for 16384 tokens of Llama 3.2 1B would be 32 GiB; in pieces it is
    // at most H x 512 x n_ctx. Each piece appends its keys and values to the cache; only the
    // last computes logits (all pieces' rows with LogitsFor::all). An observer (trace) sees the
    // whole prompt in one pass.
    const int start = n_past_;
    const size_t piece = observer_ ? tokens.size() : size_t(kPromptPiece);
    try {
        std::vector<float> rows;  // LogitsFor::all over several pieces
        for (size_t at = 0; at < tokens.size(); at += piece) {
            const auto part = tokens.subspan(at, std::min(piece, tokens.size() - at));
            const bool last = at + part.size() == tokens.size();
            forward(part, which, last || which == LogitsFor::all);
            n_past_ += static_cast<int>(part.size());
            if (which == LogitsFor::all && !last) rows.insert(rows.end(), logits_.begin(), logits_.end());
        }
        if (!rows.empty()) {
            rows.insert(rows.end(), logits_.begin(), logits_.end());
            logits_ = std::move(rows);
        }
    } catch (...) {
        n_past_ = start;  // the cache as it was
        throw;
    }
    return logits_;
}

}  // namespace journey
