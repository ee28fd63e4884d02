// The values a chat template computes with: Python's as Jinja sees them, in a small variant.
// Lists and dicts are shared and immutable once built (the sandbox transformers renders in
// forbids mutating them); a namespace() is the one dict a template may change. Strings are
// shared too: a lookup, an argument or a list item copies a pointer, never the text (a 30 MB
// message read in a loop of 10^5 steps was 3 TB of copying).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace journey::jinja {

struct Value;
using List = std::vector<Value>;

// Lists and dicts nest at most this deep, so printing, comparing and freeing them cannot
// exhaust the stack whatever a template or its JSON input builds.
constexpr int kMaxNesting = 256;

// A name that was looked up and not found; it renders as "" and is false, but using it
// further (an attribute, arithmetic) fails with this description ("'x' is undefined").
struct Undefined {
    std::string what;
};
struct None {};

// Insertion-ordered string-keyed dict (Python 3.7+ order, which tojson and items() show).
class Dict {
public:
    bool is_namespace = false;
    const Value* find(std::string_view key) const;
    void set(const std::string& key, Value v);  // throws std::length_error past kMaxNesting
    const std::vector<std::pair<std::string, Value>>& items() const { return items_; }
    size_t size() const;  // defined below Value (clang needs Value complete here)
    int depth() const { return depth_; }

private:
    std::vector<std::pair<std::string, Value>> items_;
    std::unordered_map<std::string, size_t> index_;
    int depth_ = 1;
};

// A list with its nesting depth (1 + the deepest item), known when it is built.
struct SharedList {
    List items;
    int depth = 1;
    bool tuple = false;  // shows as (a, b) rather than [a, b]
};

// Positional and keyword arguments of a call.
struct Args {
    std::vector<Value> pos;
    std::vector<std::pair<std::string, Value>> kw;
};

// A global function, a bound string method, a macro or a loop's cycle().
struct Callable {
    std::string name;
    std::function<Value(Args&)> fn;
};

struct Value {
    using ListPtr = std::shared_ptr<const SharedList>;
    using DictPtr = std::shared_ptr<Dict>;
    using CallablePtr = std::shared_ptr<const Callable>;
    using StringPtr = std::shared_ptr<const std::string>;
    std::variant<Undefined, None, bool, int64_t, double, StringPtr, ListPtr, DictPtr, CallablePtr> v;

    Value() : v(Undefined{}) {}
    Value(None n) : v(n) {}
    Value(Undefined u) : v(std::move(u)) {}
    Value(bool b) : v(b) {}
    Value(int64_t i) : v(i) {}
    Value(int i) : v(int64_t{i}) {}
    Value(double d) : v(d) {}
    Value(std::string s) : v(std::make_shared<const std::string>(std::move(s))) {}
    Value(const char* s) : v(std::make_shared<const std::string>(s)) {}
    Value(List l, bool tuple = false);  // throws std::length_error past kMaxNesting
    Value(DictPtr d) : v(std::move(d)) {}
    Value(CallablePtr c) : v(std::move(c)) {}

    bool is_undefined() const { return std::holds_alternative<Undefined>(v); }
    bool is_none() const { return std::holds_alternative<None>(v); }
    bool is_bool() const { return std::holds_alternative<bool>(v); }
    bool is_int() const { return std::holds_alternative<int64_t>(v); }
    bool is_float() const { return std::holds_alternative<double>(v); }
    bool is_number() const { return is_int() || is_float(); }  // bool excluded, as Jinja's test
    bool is_string() const { return std::holds_alternative<StringPtr>(v); }
    bool is_list() const { return std::holds_alternative<ListPtr>(v); }
    bool is_dict() const { return std::holds_alternative<DictPtr>(v); }
    bool is_callable() const { return std::holds_alternative<CallablePtr>(v); }

    const std::string& str() const { return *std::get<StringPtr>(v); }
    const List& list() const { return std::get<ListPtr>(v)->items; }
    int depth() const;  // 0 for scalars
    bool is_tuple() const { return is_list() && std::get<ListPtr>(v)->tuple; }
    Dict& dict() const { return *std::get<DictPtr>(v); }
    const Callable& callable() const { return *std::get<CallablePtr>(v); }
};

inline size_t Dict::size() const { return items_.size(); }

// Python's truth value (Undefined is false).
bool truthy(const Value& v);
// Python's == between two values (1 == 1.0 == True; Undefined equals only Undefined).
bool equal(const Value& a, const Value& b);
// Python's str(): what {{ x }} prints. repr() is what a list shows of its items.
std::string to_str(const Value& v);
std::string repr(const Value& v);
// Python's float repr: shortest round-trip digits (1.0, 1e-05, 1e+16).
std::string float_repr(double d);
// "string", "int", "list", ... for error messages, named as Python would.
std::string type_name(const Value& v);

// JSON at the edges. from_json keeps object key order (ordered_json); to_json follows Python's
// json.dumps(x, ensure_ascii=False, indent=..., separators=..., sort_keys=...) as transformers'
// tojson does. to_json throws std::invalid_argument for a value JSON cannot hold.
Value from_json(const nlohmann::ordered_json& j);
struct JsonStyle {
    int indent = -1;  // < 0: one line
    bool ensure_ascii = false;
    std::string item_sep, key_sep;  // empty: Python's defaults for the indent
    bool sort_keys = false;
};
std::string to_json(const Value& v, const JsonStyle& style);

// Code-point views of UTF-8 text, for Python's len/slicing/indexing of strings.
std::u32string utf8_decode(std::string_view s);
std::string utf8_encode(std::u32string_view s);

}  // namespace journey::jinja
