// The chat files of a Hugging Face model directory, read in one place for every command that
// needs them (chat, generate --chat, info, template, convert): which chat template the model
// has, the special tokens a template sees, and generation_config.json's end tokens.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace journey {

struct ChatFiles {
    // The chat template, in transformers' order: chat_template.jinja (a tokenizer loads it over
    // the config's entry); else tokenizer_config.json's chat_template, a string or a list of
    // named templates of which "default" is the one apply_chat_template uses; else
    // chat_template.json's chat_template (a processor's file, as llama.cpp's converter reads it).
    std::optional<std::string> chat_template;
    std::string template_source;  // the file (and key) it came from, for messages
    // The other templates of such a list, (name, template) in the file's order.
    std::vector<std::pair<std::string, std::string>> named_templates;
    // tokenizer_config.json as read (null when there is none): special tokens, add_*_token flags.
    nlohmann::json tokenizer_config;
    // generation_config.json's eos_token_id (an id or a list: Llama 3 Instruct has three), as
    // written: the caller checks them against its vocabulary.
    std::vector<int64_t> eos_token_ids;
    std::string generation_config;  // its path, for messages

    // A special token of tokenizer_config.json by type ("bos", "eos", "unk", "sep", "pad", "cls",
    // "mask"): "<s>" or an AddedToken {"content": "<s>", ...}; nullopt when absent.
    std::optional<std::string> special_token(std::string_view type) const;
};

// Throws ModelError naming the file: JSON that does not parse, a chat_template that is neither
// a string nor a list of {"name", "template"}, a list without "default", an eos_token_id that is
// neither an id nor a list of ids.
ChatFiles read_chat_files(const std::filesystem::path& dir);

// Chat templates are a few KiB; a bigger file is refused before it is read.
inline constexpr size_t kMaxTemplateBytes = 16u << 20;

// A template file named by the user (--chat-template FILE, journey template FILE). Throws
// ModelError when it cannot be read, is not a regular file (a FIFO, a device or a directory is
// never waited on or read) or is larger than kMaxTemplateBytes.
std::string read_chat_template_file(const std::filesystem::path& file);

}  // namespace journey
