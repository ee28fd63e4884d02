#include "journey/chat/reasoning.h"

#include <algorithm>
#include <initializer_list>

namespace journey {
namespace {

constexpr std::string_view kThinkOpen = "<think>", kThinkClose = "</think>";
constexpr std::string_view kStart = "<|start|>", kChannel = "<|channel|>", kMessage = "<|message|>", kEnd = "<|end|>",
                           kReturn = "<|return|>", kCall = "<|call|>";
// A harmony header longer than this without <|message|> is not one: the text is the answer.
constexpr size_t kMaxHeader = 512;

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The length of the longest end of `s` that begins one of `markers` (and is not all of it).
size_t held_suffix(std::string_view s, std::initializer_list<std::string_view> markers) {
    size_t held = 0;
    for (std::string_view m : markers)
        for (size_t k = std::min(s.size(), m.size() - 1); k > held; --k)
            if (s.substr(s.size() - k) == m.substr(0, k)) {
                held = k;
                break;
            }
    return held;
}

std::string_view rstrip(std::string_view s) {
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

// The channel a harmony header names ("<|start|>assistant<|channel|>final" -> "final").
std::string_view channel_of(std::string_view header) {
    const size_t at = header.rfind(kChannel);
    if (at == std::string_view::npos) return {};
    std::string_view rest = header.substr(at + kChannel.size());
    size_t n = 0;
    while (n < rest.size() && !is_space(rest[n]) && rest[n] != '<') ++n;
    return rest.substr(0, n);
}

}  // namespace

ReasoningStyle reasoning_style_of_template(std::string_view source) {
    if (source.find("<|channel|>") != std::string_view::npos && source.find("<|message|>") != std::string_view::npos)
        return ReasoningStyle::harmony;
    if (source.find("<think>") != std::string_view::npos && source.find("</think>") != std::string_view::npos)
        return ReasoningStyle::think;
    return ReasoningStyle::none;
}

std::string_view reasoning_style_name(ReasoningStyle s) {
    switch (s) {
        case ReasoningStyle::think: return "think";
        case ReasoningStyle::harmony: return "harmony";
        default: return "none";
    }
}

ReplySplitter::ReplySplitter(ReasoningStyle style, std::string_view prompt) : style_(style), state_(State::answer) {
    const std::string_view end = rstrip(prompt);
    if (style == ReasoningStyle::think) {
        state_ = end.ends_with(kThinkOpen) ? State::think : State::answer_start;
    } else if (style == ReasoningStyle::harmony) {
        state_ = State::header;
        if (end.ends_with(kMessage)) {  // the template opened a message itself
            const size_t start = end.rfind(kStart);
            const std::string_view header = end.substr(start == std::string_view::npos ? 0 : start);
            state_ = State::body;
            body_is_reasoning_ = channel_of(header) == "analysis";
        }
    }
}

bool ReplySplitter::in_reasoning() const { return state_ == State::think || (state_ == State::body && body_is_reasoning_); }

void ReplySplitter::emit(Parts& out, std::string_view text) { (in_reasoning() ? out.reasoning : out.answer) += text; }

ReplySplitter::Parts ReplySplitter::feed(std::string_view piece) {
    Parts out;
    pending_ += piece;
    step(out, false);
    return out;
}

ReplySplitter::Parts ReplySplitter::finish() {
    Parts out;
    step(out, true);
    if (state_ == State::header) {  // a header never completed: it was text
        out.answer += header_;
        header_.clear();
    }
    emit(out, pending_);
    pending_.clear();
    return out;
}

void ReplySplitter::step(Parts& out, bool final) {
    while (!pending_.empty()) {
        switch (state_) {
            case State::answer:
                if (strip_) {  // the blank line after a think block
                    size_t i = 0;
                    while (i < pending_.size() && is_space(pending_[i])) ++i;
                    pending_.erase(0, i);
                    if (pending_.empty()) return;
                    strip_ = false;
                }
                out.answer += pending_;
                pending_.clear();
                return;
            case State::answer_start: {  // think: a reply may open its own block
                size_t i = 0;
                while (i < pending_.size() && is_space(pending_[i])) ++i;
                const std::string_view rest = std::string_view(pending_).substr(i);
                if (rest.starts_with(kThinkOpen)) {
                    pending_.erase(0, i + kThinkOpen.size());
                    state_ = State::think;
                    continue;
                }
                if (!final && kThinkOpen.starts_with(rest)) return;  // may still open one
                state_ = State::answer;
                continue;
            }
            case State::think: {
                const size_t at = pending_.find(kThinkClose);
                if (at == std::string::npos) {
                    const size_t keep = final ? 0 : held_suffix(pending_, {kThinkClose});
                    out.reasoning += pending_.substr(0, pending_.size() - keep);
                    pending_.erase(0, pending_.size() - keep);
                    return;
                }
                out.reasoning += pending_.substr(0, at);
                pending_.erase(0, at + kThinkClose.size());
                state_ = State::answer;
                strip_ = true;
                continue;
            }
            case State::header: {
                const size_t at = pending_.find(kMessage);
                if (at == std::string::npos) {
                    if (header_.size() + pending_.size() > kMaxHeader) {  // not harmony after all
                        out.answer += header_ + pending_;
                        header_.clear();
                        pending_.clear();
                        state_ = State::answer;
                    }
                    return;
                }
                header_ += pending_.substr(0, at);
                pending_.erase(0, at + kMessage.size());
                const std::string_view channel = channel_of(header_);
                body_is_tool_ = header_.find(" to=") != std::string::npos || header_.starts_with("to=");
                if (body_is_tool_) out.answer += header_ + std::string(kMessage);  // a tool call: passed through
                body_is_reasoning_ = !body_is_tool_ && channel == "analysis";
                header_.clear();
                state_ = State::body;
                continue;
            }
            case State::body: {
                size_t at = std::string::npos;
                std::string_view marker;
                for (std::string_view m : {kEnd, kReturn, kCall, kStart}) {
                    const size_t p = pending_.find(m);
                    if (p < at) at = p, marker = m;
                }
                if (at == std::string::npos) {
                    const size_t keep = final ? 0 : held_suffix(pending_, {kEnd, kReturn, kCall, kStart});
                    emit(out, std::string_view(pending_).substr(0, pending_.size() - keep));
                    pending_.erase(0, pending_.size() - keep);
                    return;
                }
                emit(out, std::string_view(pending_).substr(0, at + (body_is_tool_ && marker != kStart ? marker.size() : 0)));
                pending_.erase(0, at + (marker == kStart ? 0 : marker.size()));
                state_ = marker == kReturn || marker == kCall ? State::answer : State::header;
                continue;
            }
        }
    }
}

}  // namespace journey
