// journey chat's reply on stdout: a reasoning model's answer, its reasoning only when asked
// (--show-reasoning: before the answer, dimmed on a terminal), as chat/reasoning.h splits it.
#pragma once
#include <optional>
#include <string>

#include "journey/chat/reasoning.h"

namespace journey::cli {

class ReplyPrinter {
public:
    ReplyPrinter(ReasoningStyle style, bool show_reasoning, bool print);
    // Starts a reply that continues `prompt`.
    void start(const std::string& prompt);
    void piece(const std::string& text);
    void finish();
    const std::string& reasoning() const { return reasoning_; }
    const std::string& answer() const { return answer_; }

private:
    void show(const ReplySplitter::Parts& p);

    ReasoningStyle style_;
    bool show_reasoning_, print_, tty_;
    std::optional<ReplySplitter> splitter_;
    std::string reasoning_, answer_;
    bool in_dim_ = false;
};

}  // namespace journey::cli
