// A model's chat format, gathered from the files beside it or its GGUF metadata.
#include "journey/chat/chat_format.h"

#include <algorithm>

#include "journey/chat/chat_files.h"
#include "journey/errors.h"

namespace journey {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void add_end(ChatFormat& f, const Model& m, int64_t id, const std::string& from) {
    if (id < 0 || id >= m.config().n_vocab)
        throw ModelError(from + ": end token id " + std::to_string(id) + " is outside the vocabulary (" + std::to_string(m.config().n_vocab) + ")");
    if (std::find(f.end_tokens.begin(), f.end_tokens.end(), TokenId(id)) == f.end_tokens.end()) f.end_tokens.push_back(TokenId(id));
}

void set_template(ChatFormat& f, const std::string& source, const std::string& name) {
    f.tmpl = std::make_shared<const jinja::Template>(source, name);
    f.template_source = name;
    f.reasoning = reasoning_style_of_template(source);
}

// The id of a special token written as `text`, if the vocabulary has one.
std::optional<TokenId> special_id(const Tokenizer& tok, const std::string& text) {
    const std::vector<TokenId> ids = tok.encode(text, true);
    if (ids.size() == 1 && tok.token_bytes(ids[0]) == text) return ids[0];
    return std::nullopt;
}

// The files beside a Hugging Face model (chat_files.h).
void from_hf_dir(ChatFormat& f, const Model& m, const fs::path& dir) {
    const ChatFiles files = read_chat_files(dir);
    if (files.chat_template) set_template(f, *files.chat_template, files.template_source);
    f.bos_token = files.special_token("bos");
    f.eos_token = files.special_token("eos");
    f.unk_token = files.special_token("unk");
    f.pad_token = files.special_token("pad");
    for (const int64_t id : files.eos_token_ids) add_end(f, m, id, files.generation_config);
}

void from_gguf(ChatFormat& f, const Model& m) {
    const json& md = m.file().metadata;
    const std::string file = m.file().path.string();
    if (md.contains("tokenizer.chat_template")) {
        if (!md["tokenizer.chat_template"].is_string()) throw ModelError(file + ": tokenizer.chat_template is not a string");
        set_template(f, md["tokenizer.chat_template"].get<std::string>(), file + ": tokenizer.chat_template");
    }
    for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"}) {
        if (!md.contains(key)) continue;
        if (!md[key].is_number_integer()) throw ModelError(file + ": " + key + " is not an integer");
        add_end(f, m, md[key].get<int64_t>(), file + ": " + key);
    }
}

}  // namespace

ChatFormat load_chat_format(const Model& m, const fs::path& template_override) {
    ChatFormat f;
    const fs::path src = m.source();
    if (m.file().format == "gguf") from_gguf(f, m);
    else if (m.file().format == "safetensors") from_hf_dir(f, m, fs::is_directory(src) ? src : src.parent_path());
    const Tokenizer& tok = m.tokenizer();
    if (auto eos = tok.eos_id()) add_end(f, m, *eos, "the tokenizer's EOS");
    // The special tokens the template writes, from the tokenizer when no config names them.
    if (!f.bos_token && tok.bos_id()) f.bos_token = tok.token_bytes(*tok.bos_id());
    if (!f.eos_token && tok.eos_id()) f.eos_token = tok.token_bytes(*tok.eos_id());
    if (!template_override.empty()) {
        set_template(f, read_chat_template_file(template_override), template_override.string());
    }
    if (f.reasoning == ReasoningStyle::harmony) {
        for (const char* end : {"<|return|>", "<|call|>"})
            if (auto id = special_id(tok, end)) add_end(f, m, *id, "the harmony format's " + std::string(end));
        if (auto id = special_id(tok, "<|end|>")) std::erase(f.end_tokens, *id);
    }
    return f;
}

std::string render_chat(const ChatFormat& f, const nlohmann::ordered_json& messages, bool add_generation_prompt,
                        const jinja::RenderOptions& options) {
    if (!f.tmpl)
        throw ModelError("the model has no chat template (tokenizer_config.json chat_template, chat_template.jinja or "
                         "GGUF tokenizer.chat_template); give one with --chat-template FILE");
    ChatVariables v;
    v.messages = messages;
    v.add_generation_prompt = add_generation_prompt;
    v.bos_token = f.bos_token;
    v.eos_token = f.eos_token;
    v.unk_token = f.unk_token;
    v.pad_token = f.pad_token;
    v.extra = f.variables;
    return f.tmpl->render(template_variables(v), options);
}

std::vector<TokenId> chat_prompt_ids(const Tokenizer& tok, const std::string& rendered) {
    std::vector<TokenId> ids = tok.encode(rendered, true);
    if (tok.add_bos() && tok.bos_id() && (ids.empty() || ids.front() != *tok.bos_id())) ids.insert(ids.begin(), *tok.bos_id());
    return ids;
}

}  // namespace journey
