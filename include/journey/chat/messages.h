// Conversations as chat templates see them: an OpenAI-style [{"role", "content"}, ...] array,
// and the variables transformers' apply_chat_template passes to the template.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace journey {

// A conversation's bounds: its file is read up to kMaxMessagesBytes, and holds at most
// kMaxMessages messages (each becomes a template value).
inline constexpr size_t kMaxMessagesBytes = 32u << 20;
inline constexpr size_t kMaxMessages = 100000;

// Parses and checks a messages array: every item an object with a string "role" and a
// "content" (string, null or anything a template may read, such as a list of parts); other
// keys (tool_calls, name, ...) are kept. Throws InputError naming `source`.
nlohmann::ordered_json parse_messages(std::string_view json_text, const std::string& source);

struct ChatVariables {
    nlohmann::ordered_json messages = nlohmann::ordered_json::array();
    bool add_generation_prompt = false;
    // The tokenizer's special tokens (special_tokens_map); unset ones stay undefined.
    std::optional<std::string> bos_token, eos_token, unk_token, pad_token;
    nlohmann::ordered_json extra = nlohmann::ordered_json::object();  // --var NAME=JSON, enable_thinking, ...
};

// {messages, tools: null, documents: null, add_generation_prompt, bos_token, ..., extra...}:
// what render(messages=..., tools=None, documents=None, add_generation_prompt=..., **special_tokens_map) sees.
nlohmann::ordered_json template_variables(const ChatVariables& v);

}  // namespace journey
