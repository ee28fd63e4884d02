// Generation: the prompt -> one token at a time, until a limit, a stop string, EOS or a full
// context. The loop is the library's; output is the caller's. Each token is handed to one
// per-step callback (like CTranslate2's GenerationStepResult) carrying both what a JSON writer
// wants (id, bytes, log-probabilities) and what a terminal wants (`text`: the bytes now safe to
// show), so text streaming and JSON output plug into the same loop.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "journey/decode/sampler.h"
#include "journey/model/session.h"

namespace journey {

// One options struct for the CLI (`journey generate`), the library and the tests.
struct GenerateOptions {
    int max_tokens = 128;            // -n: tokens to generate at most (>= 0); 0 = none; -1 = until
                                     // end of text or a full context
    SamplerOptions sampler;          // --temp, --top-k, ... --seed (see sampler.h for defaults)
    std::vector<std::string> stop;   // --stop: end when the text contains one; never shown
    bool ignore_eos = false;         // --ignore-eos: keep going past the end-of-text token
    int top_logprobs = 0;            // --top-logprobs: alternatives reported per step (>= 0)
    std::vector<TokenId> end_tokens; // more tokens that end generation as EOS does (a chat
                                     // model's end-of-turn tokens, see chat_format.h)
    bool keep_cache = false;         // continue the session: the prompt follows what it already
                                     // holds instead of a reset (a chat's next turn)
    // Set (from a signal handler, say) to stop after the current token: that step is the last,
    // with everything held back released, and finish_reason is `interrupted`. Null: never.
    const std::atomic<bool>* interrupt = nullptr;
};

// Throws UsageError naming the flag (-n, --top-logprobs, the sampler's flags, --stop).
void validate(const GenerateOptions& opts);

enum class FinishReason {
    length,   // max_tokens generated
    stop,     // a stop string appeared in the text
    eos,      // the model produced its end-of-text token
    context,  // the context (n_ctx) is full
    interrupted,  // GenerateOptions::interrupt was set
};
// The reason's name as the JSON output and the summary line spell it ("length", "stop", ...).
const char* finish_reason_name(FinishReason r);

struct StepResult {
    int index = 0;                  // 0 for the first generated token
    TokenId id = 0;
    std::string bytes;              // the token's exact bytes (may be part of a UTF-8 character)
    float logprob = 0;              // log-softmax of the raw logits (temperature 1, before any
                                    // truncation or penalty), floored at kLogprobFloor
    std::vector<TokenLogprob> top_logprobs;  // the top_logprobs most likely, same measure
    std::string text;               // visible text released by this step: stop strings held back
                                    // and never released, whole UTF-8 characters only; the last
                                    // step also carries whatever was still held back
    bool last = false;              // no step follows
};
using StepCallback = std::function<void(const StepResult&)>;

struct GenerateResult {
    FinishReason finish_reason = FinishReason::length;
    std::string text;               // all visible text: the concatenation of every step's `text`
    std::vector<TokenId> tokens;    // generated ids (an EOS that ended generation included)
    uint64_t seed = 0;              // the effective seed
    int prompt_tokens = 0;
    int completion_tokens = 0;
    double prompt_ms = 0;           // evaluating the prompt
    double gen_ms = 0;              // everything after: sampling and evaluating each new token
};

// Runs `prompt` (from encode_prompt(); must be non-empty and fit in the context) on a fresh
// `session` (reset first; with keep_cache, after what the session holds), then samples. An EOS token ends generation as a step of its own
// (text empty) unless ignore_eos. For SPM tokenizers the first generated piece loses its
// leading space when it directly follows a lone BOS, as llama2.c does (the text starts there).
// The callback may throw (e.g. a closed pipe); generation stops and the exception propagates.
GenerateResult generate(Session& session, std::span<const TokenId> prompt, const GenerateOptions& opts,
                        const StepCallback& on_step = {});

}  // namespace journey
