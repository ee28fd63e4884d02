// A model's chat format, gathered from the files beside it or its GGUF metadata.
#include "journey/model/chat_format.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "journey/errors.h"
#include "journey/formats/json_file.h"

namespace journey {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::optional<std::string> read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

json read_json(const fs::path& p) {
    auto text = read_text(p);
    if (!text) return nullptr;
    return parse_json(*text, p.string());  // depth-limited; a short excerpt of what is wrong
}

// A special token in tokenizer_config.json: "<s>" or {"content": "<s>", ...} (an AddedToken).
std::optional<std::string> special_token(const json& config, const char* key) {
    if (!config.is_object() || !config.contains(key)) return std::nullopt;
    const json& v = config[key];
    if (v.is_string()) return v.get<std::string>();
    if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
    return std::nullopt;
}

void add_end(ChatFormat& f, const Model& m, int64_t id, const std::string& from) {
    if (id < 0 || id >= m.config().n_vocab)
        throw ModelError(from + ": end token id " + std::to_string(id) + " is outside the vocabulary (" + std::to_string(m.config().n_vocab) + ")");
    if (std::find(f.end_tokens.begin(), f.end_tokens.end(), TokenId(id)) == f.end_tokens.end()) f.end_tokens.push_back(TokenId(id));
}

void set_template(ChatFormat& f, const std::string& source, const std::string& name) {
    f.tmpl = std::make_shared<const jinja::Template>(source, name);
    f.template_source = name;
}

// tokenizer_config.json's chat_template: a string, or [{"name", "template"}, ...] of which
// apply_chat_template uses "default" when no name is asked for.
void template_from_config(ChatFormat& f, const json& config, const fs::path& path) {
    if (!config.is_object() || !config.contains("chat_template") || config["chat_template"].is_null()) return;
    const json& t = config["chat_template"];
    const std::string name = path.string() + ": chat_template";
    if (t.is_string()) return set_template(f, t.get<std::string>(), name);
    if (!t.is_array()) throw ModelError(name + " is neither a string nor a list of named templates");
    std::string names;
    for (const json& e : t) {
        if (!e.is_object() || !e.contains("name") || !e["name"].is_string() || !e.contains("template") || !e["template"].is_string())
            throw ModelError(name + ": an entry is not {\"name\": ..., \"template\": ...}");
        if (e["name"] == "default") return set_template(f, e["template"].get<std::string>(), name + " (default)");
        names += (names.empty() ? "" : ", ") + e["name"].get<std::string>();
    }
    throw ModelError(name + ": no template named \"default\" (it has: " + names + ")");
}

void from_hf_dir(ChatFormat& f, const Model& m, const fs::path& dir) {
    const fs::path config_path = dir / "tokenizer_config.json";
    const json config = read_json(config_path);
    if (auto jinja_file = read_text(dir / "chat_template.jinja")) set_template(f, *jinja_file, (dir / "chat_template.jinja").string());
    else template_from_config(f, config, config_path);
    f.bos_token = special_token(config, "bos_token");
    f.eos_token = special_token(config, "eos_token");
    f.unk_token = special_token(config, "unk_token");
    f.pad_token = special_token(config, "pad_token");

    const fs::path gen_path = dir / "generation_config.json";
    const json gen = read_json(gen_path);
    if (gen.is_object() && gen.contains("eos_token_id")) {
        const json& e = gen["eos_token_id"];
        if (e.is_number_integer()) add_end(f, m, e.get<int64_t>(), gen_path.string());
        else if (e.is_array()) {
            for (const json& x : e) {
                if (!x.is_number_integer()) throw ModelError(gen_path.string() + ": eos_token_id holds a non-integer");
                add_end(f, m, x.get<int64_t>(), gen_path.string());
            }
        } else if (!e.is_null()) throw ModelError(gen_path.string() + ": eos_token_id is neither an id nor a list of ids");
    }
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
        auto text = read_text(template_override);
        if (!text) throw ModelError(template_override.string() + ": cannot read the chat template");
        set_template(f, *text, template_override.string());
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
    return f.tmpl->render(template_variables(v), options);
}

std::vector<TokenId> chat_prompt_ids(const Tokenizer& tok, const std::string& rendered) {
    std::vector<TokenId> ids = tok.encode(rendered, true);
    if (tok.add_bos() && tok.bos_id() && (ids.empty() || ids.front() != *tok.bos_id())) ids.insert(ids.begin(), *tok.bos_id());
    return ids;
}

}  // namespace journey
