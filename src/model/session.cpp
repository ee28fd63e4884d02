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
    // Every attention layer has a KV cache slot; a hybrid's recurrent layers a state slot instead.
    int n_kv = 0, n_rec = 0;
    for (int l = 0; l < c.n_layer; ++l) {
        kv_slot_.push_back(c.is_recurrent(l) ? -1 : n_kv++);
        rec_slot_.push_back(c.is_recurrent(l) ? n_rec++ : -1);
    }
    if (n_rec == 0) rec_slot_.clear();
    conv_state_.assign(static_cast<size_t>(n_rec * c.conv_state_floats()), 0.0f);
    ssm_state_.assign(static_cast<size_t>(n_rec * c.ssm_state_floats()), 0.0f);
    const size_t per_layer = static_cast<size_t>(n_ctx_) * static_cast<size_t>(c.n_kv_head) * static_cast<size_t>(c.head_dim);
    const size_t all = per_layer * static_cast<size_t>(n_kv);
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
    constexpr size_t kKeep = 4;
    if (snapshots_.size() >= kKeep) snapshots_.erase(snapshots_.begin());
    snapshots_.push_back({n_past_, {conv_state_.begin(), conv_state_.end()}, {ssm_state_.begin(), ssm_state_.end()}});
}

int64_t Session::kv_bytes_per_token() const {
    const ModelConfig& c = model_.config();
    int64_t layers = 0;
    for (int slot : kv_slot_) layers += slot >= 0;
    return layers * 2 * c.n_kv_head * c.head_dim * (kv_type_ == KvType::f32 ? 4 : 2);
}

int64_t Session::state_bytes() const {
    return static_cast<int64_t>(conv_state_.size() + ssm_state_.size()) * int64_t(sizeof(float));
}

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
