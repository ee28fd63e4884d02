// Jinja's builtin filters and tests, as templates use them (tojson as transformers defines it).
#include "journey/text/html_escape.h"
#include <algorithm>
#include <optional>
#include <unordered_set>
#include <cmath>
#include <cstring>

#include <utf8proc.h>

#include "builtins.h"

namespace journey::jinja {
namespace {

std::string lower(const std::string& s) {
    std::u32string u = utf8_decode(s);
    for (char32_t& c : u) c = char32_t(utf8proc_tolower(utf8proc_int32_t(c)));
    return utf8_encode(u);
}

// Jinja's attribute getter: "a.b.0" looks up items then attributes, digits as indices.
Value attr_path(const Value& v, const std::string& path) {
    Value cur = v;
    size_t i = 0;
    while (true) {
        const size_t dot = path.find('.', i);
        const std::string part = path.substr(i, dot == std::string::npos ? std::string::npos : dot - i);
        const bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
        cur = digits && part.size() < 18 ? get_item(cur, int64_t(std::stoll(part))) : get_item(cur, part);
        if (dot == std::string::npos) return cur;
        i = dot + 1;
    }
}

// The comparison key of sort/unique/min/max: strings lowered unless case_sensitive.
// A string that is equal for two scalars exactly when Python's == holds, or nullopt for a list,
// a dict or a callable.
std::optional<std::string> scalar_hash_key(const Value& v) {
    if (v.is_string()) return "s" + v.str();
    if (v.is_none()) return std::string("N");
    if (v.is_undefined()) return std::string("U");
    if (v.is_bool()) return "i" + std::to_string(int(std::get<bool>(v.v)));
    if (v.is_int()) return "i" + std::to_string(std::get<int64_t>(v.v));
    if (v.is_float()) {
        const double d = std::get<double>(v.v);
        if (std::isnan(d)) return std::nullopt;  // nan != nan
        if (d == std::floor(d) && std::fabs(d) < 9.2e18) return "i" + std::to_string(int64_t(d));
        return "f" + float_repr(d);
    }
    return std::nullopt;
}

Value sort_key(const Value& v, bool case_sensitive) {
    return !case_sensitive && v.is_string() ? Value(lower(v.str())) : v;
}

List sorted(List items, bool reverse, bool case_sensitive, const Value& attribute) {
    std::vector<std::pair<Value, Value>> keyed;
    for (Value& v : items) {
        Value k = attribute.is_string() ? attr_path(v, attribute.str()) : v;
        keyed.emplace_back(sort_key(k, case_sensitive), std::move(v));
    }
    std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
        return reverse ? compare_op("<", b.first, a.first) : compare_op("<", a.first, b.first);
    });
    List out;
    for (auto& kv : keyed) out.push_back(std::move(kv.second));
    return out;
}

// Python's str.splitlines() (every line boundary Python knows), without the ends.
std::vector<std::u32string> splitlines(const std::u32string& u) {
    std::vector<std::u32string> lines;
    size_t i = 0, start = 0;
    while (i < u.size()) {
        const char32_t c = u[i];
        if (c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || (c >= 0x1C && c <= 0x1E) || c == 0x85 || c == 0x2028 || c == 0x2029) {
            lines.push_back(u.substr(start, i - start));
            i += (c == '\r' && i + 1 < u.size() && u[i + 1] == '\n') ? 2 : 1;
            start = i;
        } else ++i;
    }
    if (start < u.size()) lines.push_back(u.substr(start));
    return lines;
}

std::string indent(const std::string& s, const Value& width, bool first, bool blank) {
    const int64_t n = width.is_int() ? std::get<int64_t>(width.v) : 4;
    if (n > 4096) throw RenderError("indent wider than 4096");
    std::string ind = width.is_string() ? width.str() : std::string(size_t(std::max<int64_t>(0, n)), ' ');
    const std::u32string u32ind = utf8_decode(ind);
    auto lines = splitlines(utf8_decode(s + "\n"));
    std::u32string rv;
    if (blank) {
        for (size_t k = 0; k < lines.size(); ++k) rv += (k ? U"\n" + u32ind : U"") + lines[k];
    } else {
        rv = lines.empty() ? U"" : lines[0];
        for (size_t k = 1; k < lines.size(); ++k) rv += U"\n" + (lines[k].empty() ? U"" : u32ind) + lines[k];
    }
    if (first) rv = u32ind + rv;
    return utf8_encode(rv);
}

bool to_bool_arg(const Value& v) { return truthy(v); }

Value int_filter(const Value& v, const Value& def) {
    if (v.is_int()) return v;
    if (v.is_bool()) return int64_t(std::get<bool>(v.v));
    if (v.is_float()) {
        const double d = std::get<double>(v.v);
        if (std::isfinite(d) && std::fabs(d) < 9.2e18) return int64_t(d);
        return def;
    }
    if (v.is_string()) {
        std::string s = py_strip(v.str(), None{}, true, true);
        s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
        if (s.empty()) return def;
        char* end = nullptr;
        errno = 0;
        const long long i = std::strtoll(s.c_str(), &end, 10);
        if (*end == 0 && errno == 0) return int64_t(i);
        const double d = std::strtod(s.c_str(), &end);
        if (*end == 0 && std::isfinite(d) && std::fabs(d) < 9.2e18) return int64_t(d);
    }
    return def;
}

Value float_filter(const Value& v, const Value& def) {
    if (v.is_float()) return v;
    if (v.is_int()) return double(std::get<int64_t>(v.v));
    if (v.is_bool()) return double(std::get<bool>(v.v));
    if (v.is_string()) {
        const std::string s = py_strip(v.str(), None{}, true, true);
        char* end = nullptr;
        const double d = std::strtod(s.c_str(), &end);
        if (!s.empty() && *end == 0) return d;
    }
    return def;
}

// select/reject/selectattr/rejectattr: the test (default: truth) on each item or its attribute.
Value select(const Value& seq, Args& a, bool by_attr, bool keep) {
    size_t k = 0;
    std::string attribute;
    if (by_attr) attribute = to_str(arg(a, k++, "attribute"));
    const Value test = k < a.pos.size() ? a.pos[k] : Value();
    Args test_args;
    for (size_t j = k + 1; j < a.pos.size(); ++j) test_args.pos.push_back(a.pos[j]);
    List out;
    for (const Value& item : iterate(seq)) {
        const Value x = by_attr ? attr_path(item, attribute) : item;
        Args ta = test_args;
        const bool pass = test.is_undefined() ? truthy(x) : apply_test(to_str(test), x, ta);
        if (pass == keep) out.push_back(item);
    }
    return out;
}

Value map_filter(const Value& seq, Args& a) {
    List out;
    const Value attribute = arg(a, size_t(-1), "attribute");
    if (attribute.is_string() || attribute.is_int()) {
        const Value def = arg(a, size_t(-1), "default");
        for (const Value& item : iterate(seq)) {
            Value x = attr_path(item, to_str(attribute));
            out.push_back(x.is_undefined() && !def.is_undefined() ? def : x);
        }
        return out;
    }
    if (a.pos.empty()) throw RenderError("map requires a filter argument");
    const std::string name = to_str(a.pos[0]);
    for (const Value& item : iterate(seq)) {
        Args fa;
        fa.pos.assign(a.pos.begin() + 1, a.pos.end());
        fa.kw = a.kw;
        out.push_back(apply_filter(name, item, fa));
    }
    return out;
}

// Jinja's title filter: each word (after spaces, "-", and opening brackets) capitalized.
std::string jinja_title(const std::string& s) {
    std::u32string u = utf8_decode(s);
    bool start = true;
    for (char32_t& c : u) {
        const bool sep = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || py_space(c);
        if (sep) { start = true; continue; }
        c = char32_t(start ? utf8proc_toupper(utf8proc_int32_t(c)) : utf8proc_tolower(utf8proc_int32_t(c)));
        start = false;
    }
    return utf8_encode(u);
}

const char* const kFilters[] = {"abs", "attr", "capitalize", "center", "count", "d", "default", "dictsort", "e",
                                "escape", "first", "float", "indent", "int", "items", "join", "last", "length",
                                "list", "lower", "map", "max", "min", "reject", "rejectattr", "replace", "reverse",
                                "round", "safe", "select", "selectattr", "sort", "string", "sum", "title", "tojson",
                                "trim", "unique", "upper", "wordcount"};
const char* const kTests[] = {"boolean", "callable", "defined", "divisibleby", "eq", "equalto", "escaped", "even",
                              "false", "float", "ge", "gt", "in", "integer", "iterable", "le", "lower", "lt",
                              "mapping", "ne", "none", "number", "odd", "sameas", "sequence", "string", "true",
                              "undefined", "upper", "==", "!=", "<", "<=", ">", ">="};

}  // namespace

bool is_filter(const std::string& name) {
    return std::any_of(std::begin(kFilters), std::end(kFilters), [&](const char* f) { return name == f; });
}
bool is_test(const std::string& name) {
    return std::any_of(std::begin(kTests), std::end(kTests), [&](const char* t) { return name == t; });
}

Value apply_filter(const std::string& f, const Value& v, Args& a) {
    if (f == "default" || f == "d") {
        const bool boolean = to_bool_arg(arg(a, 1, "boolean", false));
        if (v.is_undefined() || (boolean && !truthy(v))) return arg(a, 0, "default_value", "");
        return v;
    }
    if (f == "length" || f == "count") return length(v);
    if (f == "string") return to_str(v);
    if (f == "safe") return v;
    if (f == "list") return iterate(v);
    if (f == "trim") return py_strip(to_str(v), arg(a, 0, "chars"), true, true);
    if (f == "lower") return lower(to_str(v));
    if (f == "upper") {
        std::u32string u = utf8_decode(to_str(v));
        for (char32_t& c : u) c = char32_t(utf8proc_toupper(utf8proc_int32_t(c)));
        return utf8_encode(u);
    }
    if (f == "capitalize") return get_attr(to_str(v), "capitalize").callable().fn(a);
    if (f == "title") return jinja_title(to_str(v));
    if (f == "replace") {
        Args ra;
        ra.pos = {arg(a, 0, "old"), arg(a, 1, "new")};
        const Value count = arg(a, 2, "count");
        if (!count.is_undefined()) ra.pos.push_back(count);
        return get_attr(to_str(v), "replace").callable().fn(ra);
    }
    if (f == "tojson") {
        // transformers: json.dumps(x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys)
        JsonStyle st;
        st.ensure_ascii = truthy(arg(a, 0, "ensure_ascii", false));
        const Value indent = arg(a, 1, "indent", None{});
        if (indent.is_int()) st.indent = int(std::clamp<int64_t>(std::get<int64_t>(indent.v), 0, 64));
        else if (!indent.is_none()) throw RenderError("tojson: indent must be an integer");
        const Value seps = arg(a, 2, "separators", None{});
        if (seps.is_list() && seps.list().size() == 2 && seps.list()[0].is_string() && seps.list()[1].is_string()) {
            st.item_sep = seps.list()[0].str();
            st.key_sep = seps.list()[1].str();
            if (st.item_sep.empty() || st.key_sep.empty()) throw RenderError("tojson: empty separators are not supported");
        } else if (!seps.is_none()) throw RenderError("tojson: separators must be a pair of strings");
        st.sort_keys = truthy(arg(a, 3, "sort_keys", false));
        try {
            return to_json(v, st);
        } catch (const std::invalid_argument& e) {
            if (v.is_undefined()) fail_undefined(v);
            throw RenderError(e.what());
        }
    }
    if (f == "items") {
        if (v.is_undefined()) return List{};
        if (!v.is_dict() || v.dict().is_namespace) throw RenderError("Can only get item pairs from a mapping.");
        List out;
        for (const auto& [k, x] : v.dict().items()) out.emplace_back(List{Value(k), x}, true);
        return out;
    }
    if (f == "join") {
        const Value attribute = arg(a, 1, "attribute");
        std::string sep = to_str(arg(a, 0, "d", "")), out;
        bool first = true;
        for (const Value& item : iterate(v)) {
            if (!first) out += sep;
            out += to_str(attribute.is_undefined() ? item : attr_path(item, to_str(attribute)));
            check_built(out, "join");
            first = false;
        }
        return out;
    }
    if (f == "first" || f == "last") {
        List items = iterate(v);
        if (items.empty()) return Undefined{"No " + f + " item, sequence was empty."};
        return f == "first" ? items.front() : items.back();
    }
    if (f == "reverse") {
        if (v.is_string()) {
            std::u32string u = utf8_decode(v.str());
            std::reverse(u.begin(), u.end());
            return utf8_encode(u);
        }
        List items = iterate(v);
        std::reverse(items.begin(), items.end());
        return items;
    }
    if (f == "select" || f == "reject") return select(v, a, false, f == "select");
    if (f == "selectattr" || f == "rejectattr") return select(v, a, true, f == "selectattr");
    if (f == "map") return map_filter(v, a);
    if (f == "int") return int_filter(v, arg(a, 0, "default", int64_t{0}));
    if (f == "float") return float_filter(v, arg(a, 0, "default", 0.0));
    if (f == "abs") {
        if (v.is_int()) { const int64_t i = std::get<int64_t>(v.v); if (i == INT64_MIN) throw RenderError("integer overflow"); return i < 0 ? -i : i; }
        if (v.is_float()) return std::fabs(std::get<double>(v.v));
        if (v.is_bool()) return int64_t(std::get<bool>(v.v));
        throw RenderError("bad operand type for abs(): '" + type_name(v) + "'");
    }
    if (f == "round") {
        const Value x = float_filter(v, Undefined{});
        if (x.is_undefined()) throw RenderError("round: not a number");
        const int64_t prec = int_filter(arg(a, 0, "precision", int64_t{0}), int64_t{0}).is_int() ? std::get<int64_t>(int_filter(arg(a, 0, "precision", int64_t{0}), int64_t{0}).v) : 0;
        const std::string method = to_str(arg(a, 1, "method", "common"));
        const double scale = std::pow(10.0, double(prec)), d = std::get<double>(x.v) * scale;
        double r;
        if (method == "common") r = std::nearbyint(d);  // Python's round(): half to even
        else if (method == "ceil") r = std::ceil(d);
        else if (method == "floor") r = std::floor(d);
        else throw RenderError("method must be 'common', 'ceil' or 'floor'");
        return r / scale;
    }
    if (f == "indent")
        return indent(to_str(v), arg(a, 0, "width", int64_t{4}), truthy(arg(a, 1, "first", false)), truthy(arg(a, 2, "blank", false)));
    if (f == "center") {
        const int64_t width = std::min<int64_t>(1 << 20, std::get<int64_t>(int_filter(arg(a, 0, "width", int64_t{80}), int64_t{80}).v));
        const std::u32string u = utf8_decode(to_str(v));
        if (int64_t(u.size()) >= width) return to_str(v);
        const int64_t pad = width - int64_t(u.size()), left = pad / 2 + (pad & width & 1);
        return std::string(size_t(left), ' ') + to_str(v) + std::string(size_t(pad - left), ' ');
    }
    if (f == "unique") {
        const bool cs = truthy(arg(a, 0, "case_sensitive", false));
        const Value attribute = arg(a, 1, "attribute");
        // Scalar keys are hashed by what Python's == compares (1 == 1.0 == True); others (lists,
        // dicts) are compared one by one, as before. Comparing every pair made it quadratic.
        List out, seen;
        std::unordered_set<std::string> seen_scalars;
        for (const Value& item : iterate(v)) {
            const Value key = sort_key(attribute.is_undefined() ? item : attr_path(item, to_str(attribute)), cs);
            if (const auto h = scalar_hash_key(key)) {
                if (!seen_scalars.insert(*h).second) continue;
            } else {
                if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return equal(s, key); })) continue;
                seen.push_back(key);
            }
            out.push_back(item);
        }
        return out;
    }
    if (f == "sort")
        return sorted(iterate(v), truthy(arg(a, 0, "reverse", false)), truthy(arg(a, 1, "case_sensitive", false)), arg(a, 2, "attribute"));
    if (f == "dictsort") {
        if (!v.is_dict()) throw RenderError("dictsort: expected a mapping");
        const bool cs = truthy(arg(a, 0, "case_sensitive", false));
        const std::string by = to_str(arg(a, 1, "by", "key"));
        const bool reverse = truthy(arg(a, 2, "reverse", false));
        List pairs;
        for (const auto& [k, x] : v.dict().items()) pairs.emplace_back(List{Value(k), x}, true);
        return sorted(std::move(pairs), reverse, cs, by == "value" ? Value("1") : Value("0"));
    }
    if (f == "min" || f == "max") {
        const bool cs = truthy(arg(a, 0, "case_sensitive", false));
        List items = sorted(iterate(v), f == "max", cs, arg(a, 1, "attribute"));
        if (items.empty()) return Undefined{"No aggregated item, sequence was empty."};
        return items.front();
    }
    if (f == "sum") {
        const Value attribute = arg(a, 0, "attribute");
        Value total = arg(a, 1, "start", int64_t{0});
        // Strings and lists are appended to one accumulator: a new total per item was quadratic.
        std::string text;
        List items;
        enum { other, string, list } kind = total.is_string() ? string : total.is_list() ? list : other;
        if (kind == string) text = total.str();
        if (kind == list) items = total.list();
        const bool tuple = total.is_tuple();
        for (const Value& item : iterate(v)) {
            const Value x = attribute.is_undefined() ? item : attr_path(item, to_str(attribute));
            if (kind == string && x.is_string()) {
                text += x.str();
                if (text.size() > kMaxBuiltString)
                    throw RenderError("sum: a string larger than " + std::to_string(kMaxBuiltString) + " bytes (a template is bounded)");
                continue;
            }
            if (kind == list && x.is_list()) {
                items.insert(items.end(), x.list().begin(), x.list().end());
                if (items.size() > (1u << 20)) throw RenderError("sum: a list of more than 1048576 items (a template is bounded)");
                continue;
            }
            if (kind == string) total = text, kind = other;
            if (kind == list) total = Value(items, tuple), kind = other;
            total = binary_op("+", total, x);
        }
        if (kind == string) return text;
        if (kind == list) return Value(std::move(items), tuple);
        return total;
    }
    if (f == "attr") return get_attr(v, to_str(arg(a, 0, "name")));
    if (f == "escape" || f == "e") return journey::html_escape(to_str(v));
    if (f == "wordcount") {
        int64_t n = 0;
        bool in_word = false;
        for (char32_t c : utf8_decode(to_str(v))) {
            const bool w = c == '_' || utf8proc_category(utf8proc_int32_t(c)) <= UTF8PROC_CATEGORY_NO;
            if (w && !in_word) ++n;
            in_word = w && utf8proc_category(utf8proc_int32_t(c)) != UTF8PROC_CATEGORY_CN;
        }
        return n;
    }
    throw RenderError("No filter named '" + f + "'.");
}

bool apply_test(const std::string& t, const Value& v, Args& a) {
    const Value other = arg(a, 0, "other");
    if (t == "defined") return !v.is_undefined();
    if (t == "undefined") return v.is_undefined();
    if (t == "none") return v.is_none();
    if (t == "string") return v.is_string();
    if (t == "mapping") return v.is_dict() && !v.dict().is_namespace;
    if (t == "iterable") return v.is_string() || v.is_list() || (v.is_dict() && !v.dict().is_namespace) || v.is_undefined();
    if (t == "sequence") return v.is_string() || v.is_list() || (v.is_dict() && !v.dict().is_namespace) || v.is_undefined();
    if (t == "number") return v.is_number() || v.is_bool();
    if (t == "integer") return v.is_int();
    if (t == "float") return v.is_float();
    if (t == "boolean") return v.is_bool();
    if (t == "true") return v.is_bool() && std::get<bool>(v.v);
    if (t == "false") return v.is_bool() && !std::get<bool>(v.v);
    if (t == "callable") return v.is_callable();
    if (t == "escaped") return false;
    if (t == "sameas") {
        if (v.is_none() || v.is_bool() || other.is_none() || other.is_bool()) return v.v.index() == other.v.index() && equal(v, other);
        if (v.is_list() && other.is_list()) return &v.list() == &other.list();
        if (v.is_dict() && other.is_dict()) return &v.dict() == &other.dict();
        return false;  // Python's identity of equal numbers and strings is an accident; say no
    }
    if (t == "odd" || t == "even" || t == "divisibleby") {
        const Value r = binary_op("%", v, t == "divisibleby" ? other : Value(int64_t{2}));
        return t == "odd" ? equal(r, int64_t{1}) : equal(r, int64_t{0});
    }
    if (t == "lower" || t == "upper") {
        Args none;
        return truthy(get_attr(to_str(v), t == "lower" ? "islower" : "isupper").callable().fn(none));
    }
    if (t == "in") return compare_op("in", v, other);
    static const std::pair<const char*, const char*> ops[] = {{"eq", "=="}, {"equalto", "=="}, {"==", "=="}, {"ne", "!="}, {"!=", "!="},
                                                              {"lt", "<"}, {"<", "<"}, {"le", "<="}, {"<=", "<="}, {"gt", ">"},
                                                              {">", ">"}, {"ge", ">="}, {">=", ">="}};
    for (const auto& [name, op] : ops)
        if (t == name) return compare_op(op, v, other);
    throw RenderError("No test named '" + t + "'.");
}

}  // namespace journey::jinja
