// One reader of a model directory's chat files (chat_files.h).
#include "journey/chat/chat_files.h"

#include <fstream>
#include <sstream>

#include "journey/errors.h"
#include "journey/formats/json_file.h"
#include "journey/formats/mapped_file.h"

namespace journey {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A file of the directory, if it is there: one that is there but is not a regular file (a FIFO,
// a device, a directory of that name) is refused rather than skipped, never waited on or read.
bool there(const fs::path& p) {
    std::error_code ec;
    return fs::exists(p, ec);
}

json read_if(const fs::path& p) {
    return there(p) ? read_json_file(p) : json();
}

// tokenizer_config.json's chat_template: a string, or [{"name", "template"}, ...].
void template_from_config(ChatFiles& f, const json& config, const fs::path& path) {
    if (!config.is_object() || !config.contains("chat_template") || config["chat_template"].is_null()) return;
    const json& t = config["chat_template"];
    const std::string name = path.string() + ": chat_template";
    if (t.is_string()) {
        f.chat_template = t.get<std::string>();
        f.template_source = name;
        return;
    }
    if (!t.is_array()) throw ModelError(name + " is neither a string nor a list of named templates");
    std::string names;
    for (const json& e : t) {
        if (!e.is_object() || !e.contains("name") || !e["name"].is_string() || !e.contains("template") || !e["template"].is_string())
            throw ModelError(name + ": an entry is not {\"name\": ..., \"template\": ...}");
        const std::string n = e["name"].get<std::string>();
        if (n == "default" && !f.chat_template) {
            f.chat_template = e["template"].get<std::string>();
            f.template_source = name + " (default)";
        } else {
            f.named_templates.emplace_back(n, e["template"].get<std::string>());
        }
        names += (names.empty() ? "" : ", ") + n;
    }
    if (!f.chat_template) throw ModelError(name + ": no template named \"default\" (it has: " + names + ")");
}

}  // namespace

std::optional<std::string> ChatFiles::special_token(std::string_view type) const {
    const std::string key = std::string(type) + "_token";
    if (!tokenizer_config.is_object() || !tokenizer_config.contains(key)) return std::nullopt;
    const json& v = tokenizer_config[key];
    if (v.is_string()) return v.get<std::string>();
    if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
    return std::nullopt;
}

std::string read_chat_template_file(const fs::path& file) {
    std::error_code ec;
    if (!fs::exists(file, ec)) throw ModelError(file.string() + ": cannot read the chat template: no such file");
    const MappedFile f(file);  // refuses a FIFO, a device or a directory
    if (f.size() > kMaxTemplateBytes)
        throw ModelError(file.string() + ": a chat template larger than " + std::to_string(kMaxTemplateBytes >> 20) + " MiB");
    return std::string(reinterpret_cast<const char*>(f.data()), f.size());
}

ChatFiles read_chat_files(const fs::path& dir) {
    ChatFiles f;
    const fs::path config_path = dir / "tokenizer_config.json";
    f.tokenizer_config = read_if(config_path);
    if (const fs::path jinja = dir / "chat_template.jinja"; there(jinja)) {
        f.chat_template = read_chat_template_file(jinja);
        f.template_source = jinja.string();
    } else {
        template_from_config(f, f.tokenizer_config, config_path);
    }
    if (!f.chat_template) {
        const fs::path processor = dir / "chat_template.json";
        const json p = read_if(processor);
        if (p.is_object() && p.contains("chat_template") && p["chat_template"].is_string()) {
            f.chat_template = p["chat_template"].get<std::string>();
            f.template_source = processor.string() + ": chat_template";
        }
    }

    const fs::path gen_path = dir / "generation_config.json";
    f.generation_config = gen_path.string();
    const json gen = read_if(gen_path);
    if (gen.is_object() && gen.contains("eos_token_id")) {
        const json& e = gen["eos_token_id"];
        if (e.is_number_integer()) f.eos_token_ids.push_back(e.get<int64_t>());
        else if (e.is_array()) {
            for (const json& x : e) {
                if (!x.is_number_integer()) throw ModelError(gen_path.string() + ": eos_token_id holds a non-integer");
                f.eos_token_ids.push_back(x.get<int64_t>());
            }
        } else if (!e.is_null()) throw ModelError(gen_path.string() + ": eos_token_id is neither an id nor a list of ids");
    }
    return f;
}

}  // namespace journey
