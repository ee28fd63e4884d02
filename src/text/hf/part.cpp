#include "journey/text/hf/part.h"

#include "journey/formats/json_file.h"

namespace journey {

using json = nlohmann::json;

// Cut short: a message may be asked to show a 20 KB value (json_file.h).
std::string HfPart::shown(const json& v) { return json_excerpt(v, 60); }

HfPart HfPart::at(const char* key) const {
    if (!j.is_object() || !j.contains(key)) fail(std::string("has no \"") + key + "\"");
    return {file, path + "." + key, j[key]};
}

HfPart HfPart::at(size_t index) const {
    if (!j.is_array() || index >= j.size()) fail("has no element " + std::to_string(index));
    return {file, path + "[" + std::to_string(index) + "]", j[index]};
}

std::string HfPart::type() const {
    if (!j.is_object()) fail("is not an object: " + shown(j));
    if (!j.contains("type") || !j["type"].is_string()) fail("has no string \"type\"");
    return j["type"].get<std::string>();
}

bool HfPart::boolean(const char* key, std::optional<bool> fallback) const {
    if (!has(key)) {
        if (fallback) return *fallback;
        fail(std::string("has no \"") + key + "\"");
    }
    if (!j[key].is_boolean()) fail(std::string("\"") + key + "\" is not a boolean: " + shown(j[key]));
    return j[key].get<bool>();
}

std::string HfPart::string(const char* key, std::optional<std::string> fallback) const {
    if (!has(key)) {
        if (fallback) return *fallback;
        fail(std::string("has no \"") + key + "\"");
    }
    if (!j[key].is_string()) fail(std::string("\"") + key + "\" is not a string: " + shown(j[key]));
    return j[key].get<std::string>();
}

int64_t HfPart::integer(const char* key, std::optional<int64_t> fallback) const {
    if (!has(key)) {
        if (fallback) return *fallback;
        fail(std::string("has no \"") + key + "\"");
    }
    if (!j[key].is_number_integer()) fail(std::string("\"") + key + "\" is not an integer: " + shown(j[key]));
    return j[key].get<int64_t>();
}

}  // namespace journey
