// Python's semantics for the values of a chat template: truth, equality, str/repr, JSON.
#include "journey/chat/jinja/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <utf8proc.h>

namespace journey::jinja {

const Value* Dict::find(std::string_view key) const {
    auto it = index_.find(std::string(key));
    return it == index_.end() ? nullptr : &items_[it->second].second;
}

Value::Value(List l, bool tuple) {
    int d = 1;
    for (const Value& x : l) {
        // Only a namespace can change after it is built, so keeping one out of containers
        // keeps every value a tree (no cycles to print or free).
        if (x.is_dict() && x.dict().is_namespace) throw std::invalid_argument("a namespace cannot be put in a list or dict");
        d = std::max(d, 1 + x.depth());
    }
    if (d > kMaxNesting) throw std::length_error("lists and dicts nested deeper than " + std::to_string(kMaxNesting) + " levels");
    v = std::make_shared<const SharedList>(SharedList{std::move(l), d, tuple});
}

int Value::depth() const {
    if (is_list()) return std::get<ListPtr>(v)->depth;
    if (is_dict()) return std::get<DictPtr>(v)->depth();
    return 0;
}

void Dict::set(const std::string& key, Value v) {
    if (v.is_dict() && v.dict().is_namespace) throw std::invalid_argument("a namespace cannot be put in a list or dict");
    const int d = 1 + v.depth();
    if (d > kMaxNesting) throw std::length_error("lists and dicts nested deeper than " + std::to_string(kMaxNesting) + " levels");
    depth_ = std::max(depth_, d);
    auto [it, added] = index_.emplace(key, items_.size());
    if (added) items_.emplace_back(key, std::move(v));
    else items_[it->second].second = std::move(v);
}

bool truthy(const Value& v) {
    return std::visit([](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Undefined> || std::is_same_v<T, None>) return false;
        else if constexpr (std::is_same_v<T, bool>) return x;
        else if constexpr (std::is_same_v<T, int64_t>) return x != 0;
        else if constexpr (std::is_same_v<T, double>) return x != 0.0;
        else if constexpr (std::is_same_v<T, Value::StringPtr>) return !x->empty();
        else if constexpr (std::is_same_v<T, Value::ListPtr>) return !x->items.empty();
        else if constexpr (std::is_same_v<T, Value::DictPtr>) return x->is_namespace || x->size() > 0;
        else return true;
    }, v.v);
}

namespace {
// Numbers as Python compares them: bool is an int.
bool numeric(const Value& v, double& d, int64_t& i, bool& is_int) {
    if (v.is_bool()) { i = std::get<bool>(v.v); is_int = true; d = double(i); return true; }
    if (v.is_int()) { i = std::get<int64_t>(v.v); is_int = true; d = double(i); return true; }
    if (v.is_float()) { d = std::get<double>(v.v); is_int = false; return true; }
    return false;
}
}  // namespace

bool equal(const Value& a, const Value& b) {
    double da, db; int64_t ia, ib; bool ai, bi;
    if (numeric(a, da, ia, ai) && numeric(b, db, ib, bi)) return ai && bi ? ia == ib : da == db;
    if (a.v.index() != b.v.index()) return false;
    if (a.is_undefined() || a.is_none()) return true;
    if (a.is_string()) return a.str() == b.str();
    if (a.is_list()) {
        const List &x = a.list(), &y = b.list();
        if (&x == &y) return true;  // the same list (Python compares items by identity first too)
        if (x.size() != y.size()) return false;
        for (size_t k = 0; k < x.size(); ++k)
            if (!equal(x[k], y[k])) return false;
        return true;
    }
    if (a.is_dict()) {
        const Dict &x = a.dict(), &y = b.dict();
        if (&x == &y) return true;
        if (x.is_namespace || y.is_namespace || x.size() != y.size()) return false;
        for (const auto& [k, val] : x.items()) {
            const Value* other = y.find(k);
            if (!other || !equal(val, *other)) return false;
        }
        return true;
    }
    return &a.callable() == &b.callable();
}

std::string float_repr(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
    // Shortest round-trip digits, then Python's layout: fixed for 1e-4 <= |d| < 1e16.
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    std::string s(buf, res.ptr);
    std::string sign;
    if (s[0] == '-') { sign = "-"; s.erase(0, 1); }
    const size_t e = s.find('e');
    std::string digits = s.substr(0, e);
    digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
    const int exp = std::stoi(s.substr(e + 1));
    const int n = int(digits.size());
    if (exp >= -4 && exp < 16) {
        std::string out;
        if (exp < 0) out = "0." + std::string(size_t(-exp - 1), '0') + digits;
        else if (exp + 1 >= n) out = digits + std::string(size_t(exp + 1 - n), '0') + ".0";
        else out = digits.substr(0, size_t(exp + 1)) + "." + digits.substr(size_t(exp + 1));
        return sign + out;
    }
    std::string mant = digits.substr(0, 1);
    if (n > 1) mant += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    return sign + mant + eb;
}

std::u32string utf8_decode(std::string_view s) {
    std::u32string out;
    out.reserve(s.size());
    size_t i = 0;
    while (i < s.size()) {
        utf8proc_int32_t cp;
        auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + i),
                                  utf8proc_ssize_t(s.size() - i), &cp);
        if (n <= 0) { cp = 0xFFFD; n = 1; }  // strings are checked at the edges; be safe anyway
        out.push_back(char32_t(cp));
        i += size_t(n);
    }
    return out;
}

std::string utf8_encode(std::u32string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char32_t c : s) {
        utf8proc_uint8_t buf[4];
        auto n = utf8proc_encode_char(utf8proc_int32_t(c), buf);
        out.append(reinterpret_cast<const char*>(buf), size_t(n));
    }
    return out;
}

namespace {

// Python's str.isprintable() for one code point.
bool printable(char32_t c) {
    if (c == ' ') return true;
    switch (utf8proc_category(utf8proc_int32_t(c))) {
    case UTF8PROC_CATEGORY_CC: case UTF8PROC_CATEGORY_CF: case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO: case UTF8PROC_CATEGORY_CN: case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP: case UTF8PROC_CATEGORY_ZS: return false;
    default: return true;
    }
}

std::string string_repr(const std::string& s) {
    const bool dq = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
    const char q = dq ? '"' : '\'';
    std::u32string out;
    out.push_back(char32_t(q));
    for (char32_t c : utf8_decode(s)) {
        char buf[16];
        if (c == char32_t(q) || c == '\\') { out.push_back('\\'); out.push_back(c); }
        else if (c == '\n') out += U"\\n";
        else if (c == '\r') out += U"\\r";
        else if (c == '\t') out += U"\\t";
        else if (printable(c)) out.push_back(c);
        else {
            if (c < 0x100) std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(c));
            else if (c < 0x10000) std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
            else std::snprintf(buf, sizeof buf, "\\U%08x", unsigned(c));
            for (const char* p = buf; *p; ++p) out.push_back(char32_t(*p));
        }
    }
    out.push_back(char32_t(q));
    return utf8_encode(out);
}

}  // namespace

namespace {
void repr_bound(const std::string& out) {
    if (out.size() > (64u << 20))
        throw std::length_error("a value whose text is larger than " + std::to_string(64u << 20) + " bytes (a template is bounded)");
}
}  // namespace

namespace {
// repr() of v appended to out: one copy of each byte however deep the nesting (building each
// level's text and then its parent's copied a 2^20-leaf list 40 times over).
void repr_into(const Value& v, std::string& out) {
    if (v.is_list()) {
        out += v.is_tuple() ? "(" : "[";
        for (size_t k = 0; k < v.list().size(); ++k) {
            if (k) out += ", ";
            repr_into(v.list()[k], out);
            repr_bound(out);
        }
        out += v.is_tuple() ? (v.list().size() == 1 ? ",)" : ")") : "]";
    } else if (v.is_dict() && !v.dict().is_namespace) {
        out += "{";
        bool first = true;
        for (const auto& [k, val] : v.dict().items()) {
            if (!first) out += ", ";
            out += string_repr(k);
            out += ": ";
            repr_into(val, out);
            repr_bound(out);
            first = false;
        }
        out += "}";
    } else {
        out += v.is_string() ? string_repr(v.str()) : to_str(v);
    }
}
}  // namespace

std::string repr(const Value& v) {
    if (v.is_string()) return string_repr(v.str());
    std::string out;
    repr_into(v, out);
    return out;
}

std::string to_str(const Value& v) {
    return std::visit([&](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Undefined>) return "";
        else if constexpr (std::is_same_v<T, None>) return "None";
        else if constexpr (std::is_same_v<T, bool>) return x ? "True" : "False";
        else if constexpr (std::is_same_v<T, int64_t>) return std::to_string(x);
        else if constexpr (std::is_same_v<T, double>) return float_repr(x);
        else if constexpr (std::is_same_v<T, Value::StringPtr>) return *x;
        else if constexpr (std::is_same_v<T, Value::DictPtr>) {
            if (!x->is_namespace) return repr(v);
            auto plain = std::make_shared<Dict>(*x);
            plain->is_namespace = false;
            return "<Namespace " + repr(Value(plain)) + ">";
        } else if constexpr (std::is_same_v<T, Value::CallablePtr>) return "<function " + x->name + ">";
        else return repr(v);
    }, v.v);
}

std::string type_name(const Value& v) {
    static const char* names[] = {"Undefined", "NoneType", "bool", "int", "float", "str", "list", "dict", "function"};
    if (v.is_dict() && v.dict().is_namespace) return "Namespace";
    return names[v.v.index()];
}

namespace {
Value from_json_at(const nlohmann::ordered_json& j, int depth);
}

Value from_json(const nlohmann::ordered_json& j) { return from_json_at(j, 0); }

namespace {
// Refused before recursing deeper: a value nested a million levels (a --var, a config's token)
// would otherwise exhaust the stack before the list or dict could say it is too deep.
Value from_json_at(const nlohmann::ordered_json& j, int depth) {
    using J = nlohmann::ordered_json::value_t;
    if ((j.is_array() || j.is_object()) && depth >= kMaxNesting)
        throw std::length_error("lists and dicts nested deeper than " + std::to_string(kMaxNesting) + " levels");
    switch (j.type()) {
    case J::null: return None{};
    case J::boolean: return j.get<bool>();
    case J::number_integer: return j.get<int64_t>();
    case J::number_unsigned:
        if (j.get<uint64_t>() > uint64_t(INT64_MAX)) throw std::invalid_argument("integer too large: " + j.dump());
        return int64_t(j.get<uint64_t>());
    case J::number_float: return j.get<double>();
    case J::string: return j.get<std::string>();
    case J::array: {
        List l;
        l.reserve(j.size());
        for (const auto& x : j) l.push_back(from_json_at(x, depth + 1));
        return l;
    }
    case J::object: {
        auto d = std::make_shared<Dict>();
        for (const auto& [k, x] : j.items()) d->set(k, from_json_at(x, depth + 1));
        return d;
    }
    default: throw std::invalid_argument("unsupported JSON value: " + j.dump());
    }
}
}  // namespace

namespace {

// Python's json string: the named escapes, \u00XX for other controls, and with ascii every
// code point past ASCII as \uXXXX (surrogate pairs beyond the BMP).
void json_string(std::string& out, const std::string& s, bool ascii) {
    out.push_back('"');
    char buf[16];
    for (char32_t c : utf8_decode(s)) {
        switch (c) {
        case '"': out += "\\\""; continue;
        case '\\': out += "\\\\"; continue;
        case '\n': out += "\\n"; continue;
        case '\r': out += "\\r"; continue;
        case '\t': out += "\\t"; continue;
        case '\b': out += "\\b"; continue;
        case '\f': out += "\\f"; continue;
        default: break;
        }
        if (c < 0x20 || (ascii && c >= 0x80 && c < 0x10000)) {
            std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
            out += buf;
        } else if (ascii && c >= 0x10000) {
            const unsigned v = unsigned(c) - 0x10000;
            std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
            out += buf;
        } else {
            out += utf8_encode(std::u32string_view(&c, 1));
        }
    }
    out.push_back('"');
}

// A value's text (tojson, str, repr) is bounded: a list shared with itself 40 times over
// ([l, l] in a loop) is small to hold and 2^40 items to print.
constexpr size_t kMaxValueText = 64u << 20;
void text_bound(const std::string& out) {
    if (out.size() > kMaxValueText)
        throw std::length_error("a value whose text is larger than " + std::to_string(kMaxValueText) + " bytes (a template is bounded)");
}

void json_value(std::string& out, const Value& v, const JsonStyle& st, int level) {
    const std::string item_sep = !st.item_sep.empty() ? st.item_sep : (st.indent >= 0 ? "," : ", ");
    const std::string key_sep = !st.key_sep.empty() ? st.key_sep : ": ";
    auto newline = [&](int lv) {
        if (st.indent < 0) return;
        out.push_back('\n');
        out.append(size_t(st.indent) * size_t(lv), ' ');
    };
    if (v.is_none()) out += "null";
    else if (v.is_bool()) out += std::get<bool>(v.v) ? "true" : "false";
    else if (v.is_int()) out += std::to_string(std::get<int64_t>(v.v));
    else if (v.is_float()) {
        const double d = std::get<double>(v.v);
        out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d < 0 ? "-Infinity" : "Infinity") : float_repr(d);
    } else if (v.is_string()) json_string(out, v.str(), st.ensure_ascii);
    else if (v.is_list()) {
        const List& l = v.list();
        if (l.empty()) { out += "[]"; return; }
        out.push_back('[');
        for (size_t k = 0; k < l.size(); ++k) {
            if (k) out += item_sep;
            newline(level + 1);
            json_value(out, l[k], st, level + 1);
            text_bound(out);
        }
        newline(level);
        out.push_back(']');
    } else if (v.is_dict() && !v.dict().is_namespace) {
        std::vector<const std::pair<std::string, Value>*> items;
        for (const auto& kv : v.dict().items()) items.push_back(&kv);
        if (st.sort_keys)
            std::sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
        if (items.empty()) { out += "{}"; return; }
        out.push_back('{');
        for (size_t k = 0; k < items.size(); ++k) {
            if (k) out += item_sep;
            newline(level + 1);
            json_string(out, items[k]->first, st.ensure_ascii);
            out += key_sep;
            json_value(out, items[k]->second, st, level + 1);
            text_bound(out);
        }
        newline(level);
        out.push_back('}');
    } else {
        throw std::invalid_argument("Object of type " + type_name(v) + " is not JSON serializable");
    }
}

}  // namespace

std::string to_json(const Value& v, const JsonStyle& style) {
    std::string out;
    json_value(out, v, style, 0);
    return out;
}

}  // namespace journey::jinja
