// A reasoning model's reply in two parts, its reasoning and its answer, as its chat format
// writes them:
// - think: `<think>reasoning</think>answer` (Qwen3, Qwen3.5, SmolLM3, DeepSeek-R1); the template
//   may open the block itself (the rendered prompt then ends with `<think>`);
// - harmony (gpt-oss): messages `<|channel|>analysis<|message|>…<|end|>` then
//   `<|start|>assistant<|channel|>final<|message|>…<|return|>`; the analysis channel is the
//   reasoning, final (and commentary meant for the user) the answer; a tool call (a header with
//   `to=`) is passed through to the answer untouched, markup included.
// A reply without that markup is all answer: no text is ever dropped.
#pragma once
#include <string>
#include <string_view>

namespace journey {

enum class ReasoningStyle { none, think, harmony };

// The style a chat template writes (from its source text).
ReasoningStyle reasoning_style_of_template(std::string_view template_source);
std::string_view reasoning_style_name(ReasoningStyle s);

// Splits a reply streamed piece by piece (markers may be cut across pieces: a piece that may
// begin one is held back until the next decides).
class ReplySplitter {
public:
    struct Parts {
        std::string reasoning, answer;
    };
    // `prompt`: the rendered prompt the reply continues (a think block it opens is open).
    ReplySplitter(ReasoningStyle style, std::string_view prompt);
    Parts feed(std::string_view piece);
    Parts finish();  // what was held back
    bool in_reasoning() const;

private:
    enum class State { answer_start, answer, think, header, body };
    void step(Parts& out, bool final);
    void emit(Parts& out, std::string_view text);

    ReasoningStyle style_;
    State state_;
    std::string pending_;  // text not yet decided
    std::string header_;   // harmony: the current message's header
    bool body_is_reasoning_ = false;
    bool body_is_tool_ = false;
    bool strip_ = false;  // think: the whitespace after </think> is not the answer's
};

}  // namespace journey
