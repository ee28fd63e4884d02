#include "journey/formats/json_file.h"

#include "journey/formats/mapped_file.h"

namespace journey {

namespace {

// How deep the arrays and objects of `text` nest, stopping once past `limit`. Strings are skipped
// as nlohmann's lexer skips them, so the count is exact for any text it accepts, and for the
// prefix it reads before refusing the rest (it stops at the first error): no tree it builds is
// deeper than what is counted here.
int nesting_depth(std::string_view text, int limit) {
    int depth = 0, deepest = 0;
    bool in_string = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char ch = text[i];
        if (in_string) {
            if (ch == '\\') ++i;
            else if (ch == '"') in_string = false;
            continue;
        }
        if (ch == '"') {
            in_string = true;
        } else if (ch == '[' || ch == '{') {
            if (++depth > deepest && (deepest = depth) > limit) break;
        } else if (ch == ']' || ch == '}') {
            if (--depth < 0) break;  // invalid: nlohmann stops here
        }
    }
    return deepest;
}

}  // namespace

bool json_depth_ok(std::string_view text) { return nesting_depth(text, kMaxJsonDepth) <= kMaxJsonDepth; }

nlohmann::json parse_json(std::string_view text, const std::string& source) {
    if (!json_depth_ok(text))
        throw ModelError(source + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        // A syntax error (parse_error), or a number too large for a double (out_of_range.406,
        // "number overflow parsing '1e363'"). nlohmann's message quotes the token it read last,
        // which may be a whole 20 KB string.
        std::string_view what = e.what();
        if (const size_t id_end = what.find("] "); id_end != std::string_view::npos)
            what.remove_prefix(id_end + 2);  // "[json.exception.parse_error.101] "
        throw ModelError(source + ": invalid JSON: " + excerpt(what, 120));
    }
}

nlohmann::json read_json_file(const std::filesystem::path& file) {
    const MappedFile map(file);
    return parse_json({reinterpret_cast<const char*>(map.data()), map.size()}, file.string());
}

std::string json_excerpt(const nlohmann::json& v, size_t max) {
    // dump() walks the tree; it is shallow by now (parse_json refused deeper ones).
    return excerpt(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), max);
}

std::string json_kind(const nlohmann::json& v) {
    switch (v.type()) {
        case nlohmann::json::value_t::null: return "null";
        case nlohmann::json::value_t::object: return "an object";
        case nlohmann::json::value_t::array: return "an array";
        case nlohmann::json::value_t::string: return "a string";
        case nlohmann::json::value_t::boolean: return "a boolean";
        case nlohmann::json::value_t::number_integer:
        case nlohmann::json::value_t::number_unsigned: return "an integer";
        case nlohmann::json::value_t::number_float: return "a number";
        default: return "binary data";
    }
}

}  // namespace journey
