// Scoring: how likely the model finds a text, token by token (teacher forcing).
//
// The ids are the model's input as encode_prompt() gives them. Every id after the first is
// scored: logprob[t] = log P(ids[t] | ids[..t-1]), log-softmax of the raw logits in double,
// floored at kLogprobFloor. The first id is the condition, not scored: for Llama/SPM it is BOS,
// so every token of the text is scored; for GPT-2 (no BOS) it is the text's first token, which
// matches Hugging Face's shifted-label loss and the reference's prompt_token_logprobs.
//
// Longer than the window: a sliding window. Windows of `window` ids start every `stride` ids;
// each id is scored once, in the first window that has it at a position > 0 after the ids an
// earlier window already scored, so it sees between window - stride and window - 1 ids of context.
#pragma once
#include <functional>
#include <span>
#include <vector>

#include "journey/model/session.h"

namespace journey {

struct ScoreOptions {
    int window = 0;  // ids per evaluation; 0 = the model's context (n_ctx); >= 2
    int stride = 0;  // how far the window moves; 0 = window / 2; in [1, window - 1]
    // Called after each evaluated chunk with the ids scored so far and the total (may be empty).
    std::function<void(size_t scored, size_t total)> progress;
};

struct ScoreResult {
    std::vector<TokenId> ids;       // what the model saw (ids[0] is the condition)
    std::vector<double> logprobs;   // logprobs[t] scores ids[t + 1]; ids.size() - 1 entries
    double sum_logprob = 0;         // sum of logprobs
    double mean_nll = 0;            // -sum / count; 0 when nothing was scored
    double perplexity = 1;          // exp(mean_nll); 1 when nothing was scored
    int windows = 0;                // evaluations (1 unless the text is longer than the window)
};

// Throws UsageError for bad window/stride, InputError for an empty `ids`.
ScoreResult score(Session& session, std::span<const TokenId> ids, const ScoreOptions& opts = {});

}  // namespace journey
