#include "journey/model/session.h"

#include <cmath>

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
    // Every attention layer has a KV cache slot; a hybrid's recurrent layers a state slot instead;
    // a KV-shared layer (Gemma 4) reads its source layer's slot and has none of its own. A slot
    // holds n_ctx rows of that layer's Hkv x head width (Gemma 4's sliding layers: narrower).
    int n_kv = 0, n_rec = 0;
    int64_t at = 0, widest = 0;
    for (int l = 0; l < c.n_layer; ++l) {
        const int src = c.kv_source(l);
        const int64_t kd = int64_t{c.n_kv_head} * c.head_dim_of(l);
        if (c.is_recurrent(l)) {
            kv_slot_.push_back(-1);
            kv_at_.push_back(-1);
        } else if (src != l) {
            kv_slot_.push_back(kv_slot_[size_t(src)]);
            kv_at_.push_back(kv_at_[size_t(src)]);
        } else {
            kv_slot_.push_back(n_kv++);
            kv_at_.push_back(at);
            at += int64_t{n_ctx_} * kd;
            widest = std::max(widest, kd);
        }
        rec_slot_.push_back(c.is_recurrent(l) ? n_rec++ : -1);
    }
    if (n_rec == 0) rec_slot_.clear();
    conv_state_.assign(static_cast<size_t>(n_rec * c.conv_state_floats()), 0.0f);
    ssm_state_.assign(static_cast<size_t>(n_rec * c.ssm_state_floats()), 0.0f);
    const size_t per_layer = static_cast<size_t>(n_ctx_) * static_cast<size_t>(widest);
    const size_t all = static_cast<size_t>(at);
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

// NaN or Inf in the logits (weights that hold them, or values that overflow float) would be
// printed as "nan" probabilities or sampled as garbage: the pass stops with one line instead,
// naming the model and the position. The logits are only read, never changed.
void Session::check_finite(const std::vector<float>& logits, int start, size_t n_tokens) const {
    const size_t V = size_t(n_vocab());
    for (size_t i = 0; i < logits.size(); ++i) {
        if (std::isfinite(logits[i])) continue;
        const size_t rows = logits.size() / V;
        const size_t pos = size_t(start) + (n_tokens - rows) + i / V;
        throw ModelError(model_.source().string() + ": the model computed " + (std::isnan(logits[i]) ? "NaN" : "infinite") +
                         " logits at position " + std::to_string(pos) + " (its weights hold NaN or Inf, or overflow float)");
    }
}

void Session::clear_state() {
    std::fill(conv_state_.begin(), conv_state_.end(), 0.0f);
    std::fill(ssm_state_.begin(), ssm_state_.end(), 0.0f);
}

void Session::reset() {
    n_past_ = 0;
    clear_state();
}

int Session::rewind(int n) {
    if (n < 0 || n >= n_past_) return n_past_;
    if (!has_state()) return n_past_ = n;
    // The latest snapshot at or before n (later ones describe tokens being dropped).
    std::erase_if(snapshots_, [&](const Snapshot& s) { return s.n_past > n; });
    if (snapshots_.empty()) {
        reset();
        return 0;
    }
    const Snapshot& s = snapshots_.back();
    std::copy(s.conv.begin(), s.conv.end(), conv_state_.begin());
    std::copy(s.ssm.begin(), s.ssm.end(), ssm_state_.begin());
    return n_past_ = s.n_past;
}

void Session::snapshot() {
    if (!has_state()) return;
    std::erase_if(snapshots_, [&](const Snapshot& s) { return s.n_past >= n_past_; });
    if (snapshots_.size() >= size_t(kSnapshotsKept)) snapshots_.erase(snapshots_.begin());
    snapshots_.push_back({n_past_, {conv_state_.begin(), conv_state_.end()}, {ssm_state_.begin(), ssm_state_.end()}});
}

int64_t Session::kv_bytes_per_token() const {
    // Each layer with a cache slot of its own (KV-shared layers store nothing), at its head width.
    const ModelConfig& c = model_.config();
    int64_t values = 0;
    for (int l = 0; l < c.n_layer; ++l)
        if (kv_slot_[size_t(l)] >= 0 && c.kv_source(l) == l) values += 2 * int64_t{c.n_kv_head} * c.head_dim_of(l);
    return values * (kv_type_ == KvType::f32 ? 4 : 2);
}

int64_t Session::state_bytes() const {
    return static_cast<int64_t>(conv_state_.size() + ssm_state_.size()) * int64_t(sizeof(float));
}

std::span<const float> Session::eval(std::span<const TokenId> tokens, LogitsFor which) {
    if (batcher_) return batcher_->eval(*this, tokens, which);
    return eval_here(tokens, which);
}

std::vector<std::span<const float>> Session::eval_tokens(std::span<Session* const> sessions, std::span<const TokenId> tokens) {
    if (sessions.size() != tokens.size()) throw std::logic_error("eval_tokens: one token per session");
    std::vector<std::span<const float>> out;
    if (sessions.size() == 1 || sessions[0]->has_state()) {  // a hybrid's recurrent state: each alone
        for (size_t i = 0; i < sessions.size(); ++i) out.push_back(sessions[i]->eval_here(tokens.subspan(i, 1)));
        return out;
    }
    const std::vector<int> ones(sessions.size(), 1);
    check_together(sessions, tokens, ones);
    forward(sessions, tokens, LogitsFor::last, true);
    for (Session* q : sessions) q->check_finite(q->logits_, q->n_past_, 1);  // before any session moves on
    for (Session* q : sessions) {
        ++q->n_past_;
        out.emplace_back(q->logits_);
    }
    return out;
}

void Session::check_together(std::span<Session* const> sessions, std::span<const TokenId> tokens, std::span<const int> n) {
    size_t at = 0;
    for (size_t i = 0; i < sessions.size(); ++i) {
        const Session& q = *sessions[i];
        if (&q.model_ != &sessions[0]->model_ || q.n_ctx_ != sessions[0]->n_ctx_ || q.observer_ || q.intervention_)
            throw std::logic_error("eval_tokens: sessions of one model and context, without observers or interventions");
        for (size_t j = 0; j < i; ++j)
            if (sessions[j] == sessions[i]) throw std::logic_error("eval_tokens: a session twice");
        if (int64_t{q.n_past_} + n[i] > q.n_ctx_)
            throw InputError("context full: " + std::to_string(q.n_past_) + " + " + std::to_string(n[i]) +
                             " tokens exceed the context of " + std::to_string(q.n_ctx_));
        for (int k = 0; k < n[i]; ++k, ++at)
            if (tokens[at] < 0 || tokens[at] >= q.n_vocab())
                throw InputError("token id " + std::to_string(tokens[at]) + " is outside the vocabulary [0, " +
                                 std::to_string(q.n_vocab()) + ")");
    }
}

std::vector<std::span<const float>> Session::eval_prompts(std::span<Session* const> sessions,
                                                          std::span<const std::span<const TokenId>> prompts,
                                                          LogitsFor which) {
    if (sessions.size() != prompts.size()) throw std::logic_error("eval_prompts: one prompt per session");
    std::vector<std::span<const float>> out;
    if (sessions.size() == 1 || sessions[0]->has_state()) {  // a hybrid's recurrent state: each alone
        for (size_t i = 0; i < sessions.size(); ++i) out.push_back(sessions[i]->eval_here(prompts[i], which));
        return out;
    }
    std::vector<int> rows;
    std::vector<TokenId> tokens;
    for (const auto& p : prompts) {
        if (p.size() < 2) throw std::logic_error("eval_prompts: a prompt of one token is eval_tokens' work");
        rows.push_back(static_cast<int>(p.size()));
        tokens.insert(tokens.end(), p.begin(), p.end());
    }
    if (tokens.size() > size_t(kPromptPiece)) throw std::logic_error("eval_prompts: more than one piece of prompts");
    check_together(sessions, tokens, rows);
    forward(sessions, tokens, which, true, rows);
    for (size_t i = 0; i < sessions.size(); ++i)  // before any session moves on
        sessions[i]->check_finite(sessions[i]->logits_, sessions[i]->n_past_, prompts[i].size());
    for (size_t i = 0; i < sessions.size(); ++i) {
        sessions[i]->n_past_ += rows[i];
        out.emplace_back(sessions[i]->logits_);
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
        check_finite(logits_, start, tokens.size());
    } catch (...) {
        // The cache as it was (a recurrent state, which the failed pass may have advanced, goes
        // back to its latest snapshot at or before the start, or to nothing).
        if (has_state()) {
            n_past_ = std::max(n_past_, start + 1);
            rewind(start);
        } else {
            n_past_ = start;
        }
        throw;
    }
    return logits_;
}

}  // namespace journey
