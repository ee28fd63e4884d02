// Messages in, template variables out.
#include "journey/chat/messages.h"

#include "journey/errors.h"
#include "journey/formats/json_file.h"

namespace journey {

nlohmann::ordered_json parse_messages(std::string_view json_text, const std::string& source) {
    // Refused before any tree is built: a tree a million levels deep overflows the stack.
    if (!json_depth_ok(json_text)) throw InputError(source + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    nlohmann::ordered_json j;
    try {
        j = nlohmann::ordered_json::parse(json_text);
    } catch (const nlohmann::json::exception& e) {
        std::string_view what = e.what();
        if (const size_t id_end = what.find("] "); id_end != std::string_view::npos)
            what.remove_prefix(id_end + 2);  // "[json.exception.parse_error.101] " is nlohmann's, not the user's
        throw InputError(source + ": not JSON: " + excerpt(what, 160));
    }
    if (!j.is_array()) throw InputError(source + ": expected an array of messages [{\"role\": ..., \"content\": ...}, ...]");
    if (j.size() > kMaxMessages)
        throw InputError(source + ": more than " + std::to_string(kMaxMessages) + " messages");
    for (size_t i = 0; i < j.size(); ++i) {
        const auto& m = j[i];
        const std::string at = source + ": message " + std::to_string(i);
        if (!m.is_object()) throw InputError(at + ": not an object");
        if (!m.contains("role") || !m["role"].is_string()) throw InputError(at + ": no string \"role\"");
        if (!m.contains("content")) throw InputError(at + ": no \"content\"");
    }
    return j;
}

nlohmann::ordered_json template_variables(const ChatVariables& v) {
    nlohmann::ordered_json vars = nlohmann::ordered_json::object();
    vars["messages"] = v.messages;
    vars["tools"] = nullptr;
    vars["documents"] = nullptr;
    vars["add_generation_prompt"] = v.add_generation_prompt;
    if (v.bos_token) vars["bos_token"] = *v.bos_token;
    if (v.eos_token) vars["eos_token"] = *v.eos_token;
    if (v.unk_token) vars["unk_token"] = *v.unk_token;
    if (v.pad_token) vars["pad_token"] = *v.pad_token;
    for (const auto& [k, x] : v.extra.items()) vars[k] = x;
    return vars;
}

}  // namespace journey
