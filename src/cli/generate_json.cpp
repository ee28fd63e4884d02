#include "generate_json.h"

#include "journey/text/token_display.h"

namespace journey::cli {

nlohmann::ordered_json step_json(const Tokenizer& tok, const StepResult& step) {
    nlohmann::ordered_json j = {{"type", "token"}, {"index", step.index}};
    j.update(token_json(tok, step.id));
    j["logprob"] = step.logprob;
    j["top_logprobs"] = nlohmann::ordered_json::array();
    for (const TokenLogprob& t : step.top_logprobs) {
        nlohmann::ordered_json alt = token_json(tok, t.id);
        alt["logprob"] = t.logprob;
        j["top_logprobs"].push_back(alt);
    }
    return j;
}

nlohmann::ordered_json done_json(const std::string& model, const GenerateResult& r, const std::string& text) {
    const double rate = r.gen_ms > 0 ? r.completion_tokens / (r.gen_ms / 1000.0) : 0.0;
    return {{"type", "done"},
            {"model", model},
            {"finish_reason", finish_reason_name(r.finish_reason)},
            {"text", valid_utf8(text)},
            {"seed", r.seed},
            {"usage",
             {{"prompt_tokens", r.prompt_tokens},
              {"completion_tokens", r.completion_tokens},
              {"total_tokens", r.prompt_tokens + r.completion_tokens}}},
            {"timings", {{"prompt_ms", r.prompt_ms}, {"gen_ms", r.gen_ms}, {"gen_tok_per_s", rate}}}};
}

}  // namespace journey::cli
