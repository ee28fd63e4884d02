#include "reply_printer.h"

#include <cstdio>
#include <unistd.h>

#include "common.h"

namespace journey::cli {

ReplyPrinter::ReplyPrinter(ReasoningStyle style, bool show_reasoning, bool print)
    : style_(style), show_reasoning_(show_reasoning), print_(print), tty_(isatty(STDOUT_FILENO) != 0) {}

void ReplyPrinter::start(const std::string& prompt) {
    splitter_.emplace(style_, prompt);
    reasoning_.clear();
    answer_.clear();
    in_dim_ = false;
}

void ReplyPrinter::show(const ReplySplitter::Parts& p) {
    if (!p.reasoning.empty()) {
        reasoning_ += p.reasoning;
        if (print_ && show_reasoning_) {
            if (tty_ && !in_dim_) out("\x1b[2m"), in_dim_ = true;
            out(p.reasoning);
        }
    }
    if (!p.answer.empty()) {
        if (print_ && show_reasoning_ && !reasoning_.empty() && answer_.empty()) {
            if (in_dim_) out("\x1b[0m"), in_dim_ = false;
            out("\n\n");  // the reasoning, a blank line, the answer
        }
        answer_ += p.answer;
        if (print_) out(p.answer);
    }
}

void ReplyPrinter::piece(const std::string& text) {
    if (!splitter_) splitter_.emplace(style_, "");
    show(splitter_->feed(text));
}

void ReplyPrinter::finish() {
    if (splitter_) show(splitter_->finish());
    if (in_dim_) out("\x1b[0m"), in_dim_ = false;
    if (print_ && !show_reasoning_ && !reasoning_.empty())
        std::fprintf(stderr, "(%zu bytes of reasoning not shown: --show-reasoning shows them)\n", reasoning_.size());
}

}  // namespace journey::cli
