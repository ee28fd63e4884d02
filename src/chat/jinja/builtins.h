// What the evaluator calls on values: attribute and item access, Python's operators, string,
// dict and list methods, Jinja's filters and tests. Private to the jinja folder.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "journey/chat/jinja/lexer.h"
#include "journey/chat/jinja/value.h"

namespace journey::jinja {

// An error while rendering; the evaluator adds the position of the innermost expression.
struct RenderError : std::runtime_error {
    explicit RenderError(const std::string& m) : std::runtime_error(m) {}
    SourcePos pos;
    bool located = false;
};

// raise_exception(...) from the template: its message is shown as it is.
struct RaisedError : RenderError {
    using RenderError::RenderError;
};

// Argument `idx` (positional) or `name` (keyword) of a call, else `def` (filters and methods).
Value arg(const Args& a, size_t idx, const char* name, Value def = Undefined{});

[[noreturn]] void fail_undefined(const Value& v);  // throws the Undefined's description
[[noreturn]] void type_error(const std::string& m);

// obj.name (methods first, then items, as Jinja's getattr) and obj[key] (items first).
Value get_attr(const Value& obj, const std::string& name);
Value get_item(const Value& obj, const Value& key);
// obj[start:stop:step] on lists and strings (by code point); missing parts are Undefined.
Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step);

// The items a for loop, list() or join sees: list items, dict keys, string characters.
List iterate(const Value& v);
int64_t length(const Value& v);

Value binary_op(const std::string& op, const Value& a, const Value& b);
bool compare_op(const std::string& op, const Value& a, const Value& b);

// Whether Jinja knows the name (checked when a template is read, as Jinja compiles it).
bool is_filter(const std::string& name);
bool is_test(const std::string& name);
Value apply_filter(const std::string& name, const Value& v, Args& args);
bool apply_test(const std::string& name, const Value& v, Args& args);

// The first occurrence of `needle` in `hay` at or after `from`, or npos, in O(|hay| + |needle|)
// (std::string::find is O(|hay| x |needle|) on "aaa...ab" in "aaa...a": a template is untrusted).
size_t find_linear(std::string_view hay, std::string_view needle, size_t from = 0);

// The largest string a filter builds piece by piece (sum, join) before the evaluator sees it.
constexpr size_t kMaxBuiltString = 64u << 20;
// The most items a filter or method builds (split, splitlines) before the evaluator sees the list:
// counted as they are made, so a 30-million-piece split stops at this, not after.
constexpr size_t kMaxBuiltItems = 1u << 20;
// Throws RenderError naming `what` when a string being built passes kMaxBuiltString.
void check_built(const std::string& s, const char* what);
void check_built_items(size_t n, const char* what);

// Python's str.isspace() of one code point (lexer.cpp).
bool py_space(char32_t c);
// Python's str.strip/lstrip/rstrip.
std::string py_strip(const std::string& s, const Value& chars, bool left, bool right);

}  // namespace journey::jinja
