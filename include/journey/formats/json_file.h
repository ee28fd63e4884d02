// JSON from untrusted files (config.json, tokenizer.json, a safetensors header...). Every reader
// goes through here, so that hostile text meets one set of checks:
//   - nesting deeper than kMaxJsonDepth is refused before any tree is built (a tree a million
//     levels deep overflows the stack of anything that walks it: copy, compare, dump, destroy);
//   - a value of the wrong type is the file's fault: ModelError naming the file and the key,
//     never nlohmann's type_error;
//   - what a message echoes from the file is cut to a short, escaped excerpt.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "journey/errors.h"

namespace journey {

inline constexpr int kMaxJsonDepth = 256;

// Parses `text`, read from `source` (named in every error). Throws ModelError for invalid JSON
// (with where it fails) and for nesting deeper than kMaxJsonDepth.
nlohmann::json parse_json(std::string_view text, const std::string& source);

// The whole file, which must be a regular file (a FIFO or a device is refused, never waited on).
nlohmann::json read_json_file(const std::filesystem::path& file);

// Refuses `text` when its arrays and objects nest deeper than kMaxJsonDepth (for readers that
// hand the text to nlohmann's SAX interface themselves).
void check_json_depth(std::string_view text, const std::string& source);

// excerpt() (errors.h) of a JSON value's compact text (invalid UTF-8 replaced).
std::string json_excerpt(const nlohmann::json& v, size_t max = 80);

// "a string", "a boolean", ... for messages.
std::string json_kind(const nlohmann::json& v);

namespace json_detail {
template <class T>
bool has_type(const nlohmann::json& v) {
    if constexpr (std::is_same_v<T, bool>) return v.is_boolean();
    else if constexpr (std::is_integral_v<T>) return v.is_number_integer();
    else if constexpr (std::is_floating_point_v<T>) return v.is_number();
    else if constexpr (std::is_convertible_v<T, std::string>) return v.is_string();
    else static_assert(sizeof(T) == 0, "json_value: bool, integer, floating point or string");
}
template <class T>
const char* kind_name() {
    if constexpr (std::is_same_v<T, bool>) return "a boolean";
    else if constexpr (std::is_integral_v<T>) return "an integer";
    else if constexpr (std::is_floating_point_v<T>) return "a number";
    else return "a string";
}
}  // namespace json_detail

// obj[key] as T, or `fallback` when the key is absent or null (Hugging Face writes null for
// "the default"). A value of another type (a number where a string belongs, "yes" for a boolean)
// throws ModelError naming `source` and the key. Integers are not range-checked here.
template <class T>
T json_value(const nlohmann::json& obj, const std::string& key, T fallback, const std::string& source) {
    if (!obj.is_object()) return fallback;
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return fallback;
    if (!json_detail::has_type<T>(*it))
        throw ModelError(source + ": \"" + key + "\" must be " + json_detail::kind_name<T>() + ", not " +
                         json_kind(*it) + " " + json_excerpt(*it, 40));
    return it->template get<T>();
}

}  // namespace journey
