#include "chat_repl.h"

#include <atomic>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include <editline/readline.h>

#include "common.h"
#include "journey/errors.h"

namespace journey::cli {
namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) { g_interrupted = true; }
struct Interrupted {};

// SIGINT stops the reply (not the program) while one streams; the default comes back after.
struct SigintWhileReplying {
    struct sigaction old {};
    SigintWhileReplying() {
        g_interrupted = false;
        struct sigaction sa {};
        sa.sa_handler = on_sigint;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old);
    }
    ~SigintWhileReplying() { sigaction(SIGINT, &old, nullptr); }
};

constexpr const char* kCommands =
    "/help   this list\n"
    "/reset  start a new conversation\n"
    "/exit   end (also Ctrl-D); Ctrl-C stops a reply\n"
    "A line of one word after a slash is a command; any other line is your message.\n";

// "/word": a command (known or not), never a message. "/usr/bin is empty" is a message.
bool is_command_word(const std::string& line) {
    if (line.size() < 2 || line[0] != '/') return false;
    for (size_t i = 1; i < line.size(); ++i)
        if (!std::isalpha(static_cast<unsigned char>(line[i]))) return false;
    return true;
}

}  // namespace

void run_chat_repl(ChatTurns& turns, const nlohmann::ordered_json& start, const GenerateOptions& gen, ReplyPrinter& printer) {
    std::fprintf(stderr, "journey chat: /help lists commands, /reset starts over, /exit or Ctrl-D ends, Ctrl-C stops a reply\n");
    nlohmann::ordered_json messages = start;
    while (true) {
        char* raw = readline("> ");
        if (!raw) {  // Ctrl-D
            std::fprintf(stderr, "\n");
            return;
        }
        const std::string line(raw);
        std::free(raw);
        if (line.empty()) continue;
        add_history(line.c_str());
        if (line == "/exit") return;
        if (line == "/reset") {
            messages = start;
            turns.reset();
            std::fprintf(stderr, "(a new conversation)\n");
            continue;
        }
        if (line == "/help") {
            std::fprintf(stderr, "%s", kCommands);
            continue;
        }
        if (is_command_word(line)) {  // never sent to the model as a message
            std::fprintf(stderr, "journey chat: unknown command %s (/help lists them)\n", excerpt(line, 40).c_str());
            continue;
        }
        messages.push_back({{"role", "user"}, {"content", line}});
        FinishReason finish = FinishReason::length;
        bool started = false;
        printer.start("");  // an empty reply leaves nothing of the last one
        try {
            SigintWhileReplying sigint;
            const GenerateResult r = turns.reply(messages, gen, [&](const StepResult& s) {
                if (!started) printer.start(turns.prompt_text_last()), started = true;
                printer.piece(s.text);
                if (g_interrupted) throw Interrupted{};
            });
            finish = r.finish_reason;
            printer.finish();
        } catch (const Interrupted&) {
            printer.finish();
            out("\n");
            std::fprintf(stderr, "(stopped)\n");
            messages.push_back({{"role", "assistant"}, {"content", valid_utf8(printer.answer())}});
            continue;
        } catch (const InputError& e) {
            messages.erase(messages.end() - 1);
            std::fprintf(stderr, "%s: /reset to start a new conversation\n", e.what());
            continue;
        }
        out("\n");
        messages.push_back({{"role", "assistant"}, {"content", valid_utf8(printer.answer())}});
        if (finish == FinishReason::context)
            std::fprintf(stderr, "(the context of %d tokens is full: /reset to start a new conversation)\n", turns.n_ctx());
    }
}

}  // namespace journey::cli
