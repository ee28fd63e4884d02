// journey template: render a chat template with a conversation, no model needed: for template
// authors, and for testing the Jinja engine on its own.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "common.h"
#include "journey/errors.h"
#include "journey/formats/json_file.h"
#include "journey/chat/chat_files.h"
#include "journey/chat/jinja/template.h"
#include "journey/chat/messages.h"

namespace journey::cli {
namespace {

struct TemplateOptions {
    std::string template_file;
    std::string messages_file;
    std::string bos, eos, now;
    bool bos_set = false, eos_set = false;
    bool add_generation_prompt = false;
    std::vector<std::string> vars;
};

void run_template(const TemplateOptions& o) {
    // A template file, or a model directory: its template and special tokens (chat_files.h).
    ChatVariables v;
    std::optional<jinja::Template> tmpl;
    if (std::filesystem::is_directory(o.template_file)) {
        const ChatFiles files = read_chat_files(o.template_file);
        if (!files.chat_template)
            throw ModelError(o.template_file + ": no chat template (chat_template.jinja, tokenizer_config.json's "
                             "chat_template or chat_template.json)");
        tmpl.emplace(*files.chat_template, files.template_source);
        v.bos_token = files.special_token("bos");
        v.eos_token = files.special_token("eos");
        v.unk_token = files.special_token("unk");
        v.pad_token = files.special_token("pad");
    } else {
        tmpl.emplace(read_chat_template_file(o.template_file), o.template_file);
    }
    v.messages = parse_messages(read_file(o.messages_file, "--messages", kMaxMessagesBytes), o.messages_file == "-" ? "stdin" : o.messages_file);
    v.add_generation_prompt = o.add_generation_prompt;
    if (o.bos_set) v.bos_token = o.bos;
    if (o.eos_set) v.eos_token = o.eos;
    for (const std::string& nv : o.vars) {
        const size_t eq = nv.find('=');
        if (eq == std::string::npos || eq == 0) throw UsageError("--var " + nv + ": expected NAME=JSON");
        // Checked before nlohmann builds the tree: copying or freeing one nested deeper recurses
        // once per level (a stack overflow at 30,000 levels under AddressSanitizer).
        if (!json_depth_ok(std::string_view(nv).substr(eq + 1)))
            throw InputError("--var: variable '" + nv.substr(0, eq) + "': JSON nested deeper than " +
                             std::to_string(kMaxJsonDepth) + " levels");
        try {
            v.extra[nv.substr(0, eq)] = nlohmann::ordered_json::parse(nv.substr(eq + 1));
        } catch (const nlohmann::json::exception&) {
            throw UsageError("--var " + nv + ": the value is not JSON (a string needs quotes: NAME='\"text\"')");
        }
    }
    jinja::RenderOptions ro;
    if (!o.now.empty()) {
        ro.now = jinja::parse_iso8601(o.now);
        if (!ro.now) throw UsageError("--now " + o.now + ": expected an ISO-8601 time such as 2025-01-15T10:30:00");
    }
    out(tmpl->render(template_variables(v), ro));
}

}  // namespace

void register_template(CLI::App& app) {
    auto o = std::make_shared<TemplateOptions>();
    CLI::App* cmd = app.add_subcommand("template", "Render a chat template with a conversation (no model needed)");
    cmd->add_option("TEMPLATE_FILE", o->template_file, "Jinja chat template, or a model directory (its chat files)")->required();
    cmd->add_option("--messages", o->messages_file, "JSON array of {role, content} messages ('-': stdin)")->required();
    cmd->add_option("--bos-token", o->bos, "bos_token as the template sees it (default: the directory's, else undefined)");
    cmd->add_option("--eos-token", o->eos, "eos_token as the template sees it (default: the directory's, else undefined)");
    cmd->add_flag("--add-generation-prompt", o->add_generation_prompt, "End with the assistant's turn header");
    cmd->add_option("--now", o->now, "strftime_now's clock, ISO-8601 local time (default: now)");
    cmd->add_option("--var", o->vars, "Another template variable, NAME=JSON (repeatable)");
    cmd->callback([o, cmd] {
        o->bos_set = cmd->count("--bos-token") > 0;
        o->eos_set = cmd->count("--eos-token") > 0;
        run_template(*o);
    });
}

}  // namespace journey::cli
