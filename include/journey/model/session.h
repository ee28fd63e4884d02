// A conversation with a model: the KV cache and scratch buffers for one sequence.
// eval() runs new tokens at the next positions and returns their logits.
#pragma once
#include <span>
#include <vector>

#include "journey/model/model.h"
#include "journey/model/observer.h"
#include "journey/text/tokenizer.h"

namespace journey {

enum class LogitsFor { last, all };

class Session {
public:
    explicit Session(const Model& model);  // the model must outlive the session

    // Runs `tokens` at positions n_past() .. n_past()+T-1 and appends them to the cache.
    // Returns logits: [n_vocab] for the last token, or [T, n_vocab] with LogitsFor::all.
    // The span is valid until the next eval(). Throws InputError for an id outside the
    // vocabulary or when the context (n_ctx) would overflow; the cache is then unchanged.
    std::span<const float> eval(std::span<const TokenId> tokens, LogitsFor which = LogitsFor::last);

    int n_past() const { return n_past_; }
    int n_ctx() const;
    int n_vocab() const;
    void reset() { n_past_ = 0; }
    // Keep only the first n cached tokens (a chat turn whose prefix is already cached).
    void rewind(int n) { if (n >= 0 && n < n_past_) n_past_ = n; }
    void set_observer(Observer* o) { observer_ = o; }  // nullptr: none

    const Model& model() const { return model_; }

private:
    const Model& model_;
    int n_past_ = 0;
    Observer* observer_ = nullptr;
    std::vector<float> k_cache_, v_cache_;  // [n_layer][n_ctx][Hkv*D]
    std::vector<float> logits_;
    std::vector<float> work_;               // activations of one eval, carved per call

    void forward(std::span<const TokenId> tokens, LogitsFor which);
};

}  // namespace journey
