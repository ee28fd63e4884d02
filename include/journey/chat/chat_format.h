// How a model wants a conversation written: its chat template, the special tokens the template
// sees, and every token that ends the assistant's turn.
#pragma once
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "journey/model/model.h"
#include "journey/chat/jinja/template.h"
#include "journey/chat/messages.h"
#include "journey/chat/reasoning.h"

namespace journey {

struct ChatFormat {
    // Where the template came from, in this order: --chat-template FILE; beside a Hugging Face
    // model, the directory's chat files (chat_files.h: chat_template.jinja, else
    // tokenizer_config.json's chat_template, else chat_template.json); in a GGUF file,
    // tokenizer.chat_template. Null when the model has none.
    std::shared_ptr<const jinja::Template> tmpl;
    std::string template_source;
    // The special tokens the template sees (tokenizer_config.json, else the tokenizer's own).
    std::optional<std::string> bos_token, eos_token, unk_token, pad_token;
    // Generation stops at any of these: generation_config.json's eos_token_id (an id or a list:
    // Llama 3 Instruct has three), the tokenizer's EOS, GGUF's eos/eot/eom token ids.
    // A harmony format (gpt-oss) ends a turn on <|return|> or <|call|>, never on <|end|>, which
    // closes the analysis message before the final one.
    std::vector<TokenId> end_tokens;
    // How the template writes a reasoning model's thinking (reasoning.h).
    ReasoningStyle reasoning = ReasoningStyle::none;
    // Variables the template sees beside the messages (enable_thinking, reasoning_effort, ...).
    nlohmann::ordered_json variables = nlohmann::ordered_json::object();
};

// Throws ModelError for a template that does not parse, a list of templates without
// "default", or an end token outside the vocabulary.
ChatFormat load_chat_format(const Model& model, const std::filesystem::path& template_override = {});

// The conversation rendered as the model's template writes it. Throws ModelError (no
// template; a template error, e.g. raise_exception) or InputError (messages).
std::string render_chat(const ChatFormat& f, const nlohmann::ordered_json& messages, bool add_generation_prompt,
                        const jinja::RenderOptions& options = {});

// The rendered text as token ids: special tokens recognised, and BOS first when the tokenizer
// wants one and the template did not write it (as llama.cpp does).
std::vector<TokenId> chat_prompt_ids(const Tokenizer& tok, const std::string& rendered);

}  // namespace journey
