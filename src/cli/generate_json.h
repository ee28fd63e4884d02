// The JSON shapes of `journey generate`: one object per token, and the closing summary.
// Shared by --format jsonl (streamed), --format json (one object) and --batch.
// Every number is finite: log-probabilities are floored, rates are 0 when nothing was timed.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "journey/decode/generate.h"
#include "journey/text/tokenizer.h"

namespace journey::cli {

// {"type":"token","index","id","token","bytes","logprob","top_logprobs":[{"id","token","bytes","logprob"}]}
nlohmann::ordered_json step_json(const Tokenizer& tok, const StepResult& step);

// {"type":"done","model","finish_reason","text","seed","usage":{"prompt_tokens","completion_tokens",
// "total_tokens"},"timings":{...}}; `text` is the text to report (the generated text, with the
// prompt first under --echo).
nlohmann::ordered_json done_json(const std::string& model, const GenerateResult& r, const std::string& text);

}  // namespace journey::cli
