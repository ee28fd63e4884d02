// The interactive side of journey chat: a line editor with history (libedit), streamed
// replies, /reset and /exit, Ctrl-C to stop a reply, Ctrl-D to end.
#pragma once
#include <nlohmann/json.hpp>

#include "journey/chat/chat_turns.h"
#include "reply_printer.h"

namespace journey::cli {

// `messages` holds what starts every conversation (the --system message, if any).
// The answer (not the reasoning) joins the conversation.
void run_chat_repl(ChatTurns& turns, const nlohmann::ordered_json& start, const GenerateOptions& gen, ReplyPrinter& printer);

}  // namespace journey::cli
