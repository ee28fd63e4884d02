// journey chat: talk to an instruct model in its own chat template. From a script
// (--messages FILE.json: one reply, then exit), to debug a template (--show-prompt), or on a
// terminal (an interactive conversation, see chat_repl.cpp).
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "chat_repl.h"
#include "reply_printer.h"
#include "journey/chat/chat_turns.h"
#include "commands.h"
#include "common.h"
#include "journey/errors.h"
#include "journey/chat/chat_format.h"
#include "journey/chat/messages.h"
#include "model_options.h"
#include "sampling_options.h"

namespace journey::cli {
namespace {

struct ChatCliOptions {
    ModelOptions model;
    GenerateOptions gen;
    SeedOption seed;
    std::string messages;       // --messages FILE.json, "-" for stdin
    std::string system;         // --system TEXT: a system message first
    std::string chat_template;  // --chat-template FILE
    std::string now;            // --now ISO-8601: strftime_now's clock
    bool json = false;
    bool show_prompt = false;
    bool show_reasoning = false;
    std::optional<bool> think;      // --think / --no-think: the template's enable_thinking
    std::string reasoning_effort;   // --reasoning-effort: the template's reasoning_effort (gpt-oss)
};

nlohmann::ordered_json read_messages(const std::string& file) {
    return parse_messages(read_file(file, "--messages", kMaxMessagesBytes), file == "-" ? "stdin" : file);
}

// --system goes first unless the conversation already starts with a system message.
void add_system(nlohmann::ordered_json& messages, const std::string& system) {
    if (system.empty()) return;
    if (!messages.empty() && messages[0]["role"] == "system") return;
    messages.insert(messages.begin(), nlohmann::ordered_json{{"role", "system"}, {"content", system}});
}

// The rendered prompt and its ids: the text as it is, a newline, then the ids on one line.
void show_prompt(const Model& model, const ChatFormat& format, const nlohmann::ordered_json& messages,
                 const jinja::RenderOptions& ro, bool json) {
    const std::string text = render_chat(format, messages, true, ro);
    const std::vector<TokenId> ids = chat_prompt_ids(model.tokenizer(), text);
    if (json) {
        out_line(json_text(nlohmann::ordered_json{{"template", format.template_source}, {"prompt", valid_utf8(text)}, {"ids", ids}}));
        return;
    }
    std::string line;
    for (TokenId id : ids) line += (line.empty() ? "" : " ") + std::to_string(id);
    out(text);
    out_line("");
    out_line(line);
}

void run_chat(ChatCliOptions o) {
    o.gen.sampler.seed = o.seed.resolve();
    validate(o.gen);
    jinja::RenderOptions ro;
    if (!o.now.empty()) {
        ro.now = jinja::parse_iso8601(o.now);
        if (!ro.now) throw UsageError("--now " + o.now + ": expected an ISO-8601 time such as 2025-01-15T10:30:00");
    }
    const bool interactive = o.messages.empty() && !o.show_prompt;
    if (interactive && !isatty(STDIN_FILENO))
        throw UsageError("chat: stdin is not a terminal; give --messages FILE.json (or --messages - to read them from stdin)");
    nlohmann::ordered_json messages = o.messages.empty() ? nlohmann::ordered_json::array() : read_messages(o.messages);
    add_system(messages, o.system);

    auto model = load_model(o.model, Placement::copy);
    ChatFormat format = load_chat_format(*model, o.chat_template);
    if (o.think) format.variables["enable_thinking"] = *o.think;
    if (!o.reasoning_effort.empty()) format.variables["reasoning_effort"] = o.reasoning_effort;
    if (o.show_prompt) return show_prompt(*model, format, messages, ro, o.json);

    std::fprintf(stderr, "seed: %" PRIu64 " (--seed %" PRIu64 " repeats this run)\n", *o.gen.sampler.seed, *o.gen.sampler.seed);
    ChatTurns turns(*model, format, ro);
    ReplyPrinter printer(format.reasoning, o.show_reasoning, !o.json);
    if (interactive) return run_chat_repl(turns, messages, o.gen, printer);

    if (messages.empty() || messages.back()["role"] == "assistant")
        throw InputError("--messages: the conversation should end with the user's turn");
    bool started = false;
    printer.start("");
    const GenerateResult r = turns.reply(messages, o.gen, [&](const StepResult& s) {
        if (!started) printer.start(turns.prompt_text_last()), started = true;
        printer.piece(s.text);
    });
    printer.finish();
    if (!o.json) return;
    nlohmann::ordered_json reply{{"role", "assistant"}, {"content", valid_utf8(printer.answer())}};
    // A reasoning model's thinking, as OpenAI-compatible servers name it.
    if (format.reasoning != ReasoningStyle::none) reply["reasoning_content"] = valid_utf8(printer.reasoning());
    const nlohmann::ordered_json rest{
        {"finish_reason", finish_reason_name(r.finish_reason)},
        {"seed", r.seed},
        {"usage", {{"prompt_tokens", r.prompt_tokens}, {"completion_tokens", r.completion_tokens},
                   {"total_tokens", r.prompt_tokens + r.completion_tokens}, {"evaluated_prompt_tokens", turns.evaluated_last()}}},
    };
    for (const auto& [k, v] : rest.items()) reply[k] = v;
    out_line(json_text(reply));
}

}  // namespace

void register_chat(CLI::App& app) {
    auto o = std::make_shared<ChatCliOptions>();
    o->gen.max_tokens = 512;
    CLI::App* cmd = app.add_subcommand("chat", "Talk to an instruct model in its chat template (interactive, or --messages)");
    add_model_options(cmd, o->model);
    cmd->add_option("--messages", o->messages, "JSON array of {role, content}: write the assistant's reply and exit ('-': stdin)");
    cmd->add_option("--system", o->system, "A system message to start the conversation with");
    cmd->add_option("--chat-template", o->chat_template, "Jinja chat template instead of the model's");
    cmd->add_flag("--json", o->json, "--messages: one JSON object with the reply, finish reason and usage");
    cmd->add_flag("--show-prompt", o->show_prompt, "Print the rendered prompt (text, then its ids) and exit without running the model");
    cmd->add_flag("--show-reasoning", o->show_reasoning,
                  "Show a reasoning model's thinking (<think> block, harmony analysis channel) before its answer");
    auto* think = cmd->add_flag_function("--think", [o](int64_t) { o->think = true; }, "Ask the template to think (enable_thinking=true)");
    cmd->add_flag_function("--no-think", [o](int64_t) { o->think = false; }, "Ask the template not to think (enable_thinking=false)")
        ->excludes(think);
    cmd->add_option("--reasoning-effort", o->reasoning_effort, "The template's reasoning_effort (gpt-oss: low, medium, high)")
        ->check(CLI::IsMember({"low", "medium", "high"}));
    cmd->add_option("--now", o->now, "strftime_now's clock for the template, ISO-8601 (default: now)");
    cmd->add_option("-n,--max-tokens", o->gen.max_tokens, "A reply has at most N tokens")->capture_default_str();
    add_sampling_options(cmd, o->gen.sampler, o->seed);
    cmd->callback([o] { run_chat(*o); });
}

}  // namespace journey::cli
