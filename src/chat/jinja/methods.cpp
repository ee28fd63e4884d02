// Values as Python treats them in a sandboxed Jinja template: attribute and item access,
// slicing, iteration, operators, and the methods of str and dict.
#include <algorithm>
#include <climits>
#include <cmath>

#include <utf8proc.h>

#include "builtins.h"

namespace journey::jinja {

void fail_undefined(const Value& v) { throw RenderError(std::get<Undefined>(v.v).what); }

void check_built(const std::string& s, const char* what) {
    if (s.size() > kMaxBuiltString)
        throw RenderError(std::string(what) + ": a string of more than " + std::to_string(kMaxBuiltString) + " bytes (a template is bounded)");
}
void check_built_items(size_t n, const char* what) {
    if (n > kMaxBuiltItems)
        throw RenderError(std::string(what) + ": a list of more than " + std::to_string(kMaxBuiltItems) + " items (a template is bounded)");
}

// The last occurrence of `needle` in `hay`, or npos, in linear time (find_linear on the reversed
// texts; std::string::rfind compares at every position).
size_t rfind_linear(std::string_view hay, std::string_view needle) {
    if (needle.size() > hay.size()) return std::string::npos;
    const std::string rh(hay.rbegin(), hay.rend()), rn(needle.rbegin(), needle.rend());
    const size_t at = find_linear(rh, rn);
    return at == std::string::npos ? std::string::npos : hay.size() - at - needle.size();
}
void type_error(const std::string& m) { throw RenderError(m); }

Value arg(const Args& a, size_t idx, const char* name, Value def) {
    if (idx < a.pos.size()) return a.pos[idx];
    for (const auto& [k, v] : a.kw)
        if (k == name) return v;
    return def;
}

namespace {

std::u32string cps(const std::string& s) { return utf8_decode(s); }

std::string map_case(const std::string& s, utf8proc_int32_t (*f)(utf8proc_int32_t)) {
    std::u32string u = cps(s);
    for (char32_t& c : u) c = char32_t(f(utf8proc_int32_t(c)));
    return utf8_encode(u);
}

bool is_cased(char32_t c) {
    const auto cat = utf8proc_category(utf8proc_int32_t(c));
    return cat == UTF8PROC_CATEGORY_LU || cat == UTF8PROC_CATEGORY_LL || cat == UTF8PROC_CATEGORY_LT;
}

// Python's str.title(): a cased character after an uncased one is title-cased, others lowered.
std::string py_title(const std::string& s) {
    std::u32string u = cps(s);
    bool prev_cased = false;
    for (char32_t& c : u) {
        const bool cased = is_cased(c);
        if (cased) c = char32_t(prev_cased ? utf8proc_tolower(utf8proc_int32_t(c)) : utf8proc_totitle(utf8proc_int32_t(c)));
        prev_cased = cased;
    }
    return utf8_encode(u);
}

std::string py_capitalize(const std::string& s) {
    std::u32string u = cps(s);
    for (size_t i = 0; i < u.size(); ++i)
        u[i] = char32_t(i == 0 ? utf8proc_totitle(utf8proc_int32_t(u[i])) : utf8proc_tolower(utf8proc_int32_t(u[i])));
    return utf8_encode(u);
}

const std::string& need_str(const Value& v, const char* what) {
    if (!v.is_string()) type_error(std::string(what) + " arg must be str, not " + type_name(v));
    return v.str();
}

List py_split(const std::string& s, const Value& sep, int64_t maxsplit, bool from_right) {
    List out;
    if (sep.is_none() || sep.is_undefined()) {
        std::u32string u = cps(s);
        std::vector<std::u32string> words;
        if (!from_right) {
            size_t i = 0;
            while (true) {
                while (i < u.size() && py_space(u[i])) ++i;
                if (i >= u.size()) break;
                if (maxsplit >= 0 && int64_t(words.size()) == maxsplit) { words.push_back(u.substr(i)); break; }
                size_t j = i;
                while (j < u.size() && !py_space(u[j])) ++j;
                words.push_back(u.substr(i, j - i));
                check_built_items(words.size(), "split");
                i = j;
            }
        } else {
            size_t i = u.size();
            while (true) {
                while (i > 0 && py_space(u[i - 1])) --i;
                if (i == 0) break;
                if (maxsplit >= 0 && int64_t(words.size()) == maxsplit) { words.push_back(u.substr(0, i)); break; }
                size_t j = i;
                while (j > 0 && !py_space(u[j - 1])) --j;
                words.push_back(u.substr(j, i - j));
                check_built_items(words.size(), "rsplit");
                i = j;
            }
            std::reverse(words.begin(), words.end());
        }
        for (auto& w : words) out.emplace_back(utf8_encode(w));
        return out;
    }
    const std::string& d = need_str(sep, "split()");
    if (d.empty()) type_error("empty separator");
    std::vector<std::string> parts;
    if (!from_right) {
        size_t i = 0;
        while (true) {
            size_t j = (maxsplit >= 0 && int64_t(parts.size()) == maxsplit) ? std::string::npos : find_linear(s, d, i);
            if (j == std::string::npos) { parts.push_back(s.substr(i)); break; }
            parts.push_back(s.substr(i, j - i));
            check_built_items(parts.size(), "split");
            i = j + d.size();
        }
    } else {
        // From the right: split the reversed text at the reversed separator (one linear search).
        const std::string rs(s.rbegin(), s.rend()), rd(d.rbegin(), d.rend());
        size_t i = 0;
        while (true) {
            size_t j = (maxsplit >= 0 && int64_t(parts.size()) == maxsplit) ? std::string::npos : find_linear(rs, rd, i);
            if (j == std::string::npos) { parts.emplace_back(rs.rbegin(), rs.rend() - std::ptrdiff_t(i)); break; }
            parts.emplace_back(rs.rbegin() + std::ptrdiff_t(rs.size() - j), rs.rend() - std::ptrdiff_t(i));
            check_built_items(parts.size(), "rsplit");
            i = j + rd.size();
        }
        std::reverse(parts.begin(), parts.end());
    }
    for (auto& p : parts) out.emplace_back(std::move(p));
    return out;
}

// startswith/endswith take a string or a tuple of strings.
bool affix(const std::string& s, const Value& what, bool prefix) {
    auto one = [&](const Value& a) {
        const std::string& x = need_str(a, prefix ? "startswith" : "endswith");
        if (x.size() > s.size()) return false;
        return prefix ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0;
    };
    if (what.is_list()) return std::any_of(what.list().begin(), what.list().end(), one);
    return one(what);
}

int64_t int_arg(const Value& v, int64_t def) {
    if (v.is_undefined() || v.is_none()) return def;
    if (v.is_int()) return std::get<int64_t>(v.v);
    if (v.is_bool()) return std::get<bool>(v.v);
    type_error("'" + type_name(v) + "' object cannot be interpreted as an integer");
}

std::string py_replace(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
    // Bound the result before building it: at most one `to` per character, plus one.
    if (to.size() > from.size() && (s.size() + 1) * (to.size() - from.size()) > (size_t(1) << 28))
        if (uint64_t(count) > (size_t(1) << 28) / (to.size() - from.size())) throw RenderError("replace() result too large");
    std::string out;
    if (from.empty()) {  // Python inserts `to` around every character
        std::u32string u = cps(s);
        int64_t n = 0;
        for (char32_t c : u) {
            if (count < 0 || n < count) { out += to; ++n; }
            out += utf8_encode(std::u32string_view(&c, 1));
        }
        if (count < 0 || n < count) out += to;
        return out;
    }
    size_t i = 0;
    int64_t n = 0;
    while (true) {
        size_t j = (count >= 0 && n >= count) ? std::string::npos : s.find(from, i);
        if (j == std::string::npos) { out.append(s, i, std::string::npos); return out; }
        out.append(s, i, j - i);
        out += to;
        i = j + from.size();
        ++n;
    }
}

Value str_method(const std::string& s, const std::string& name, Args& a) {
    if (name == "strip" || name == "lstrip" || name == "rstrip")
        return py_strip(s, arg(a, 0, "chars"), name != "rstrip", name != "lstrip");
    if (name == "split" || name == "rsplit") return py_split(s, arg(a, 0, "sep"), int_arg(arg(a, 1, "maxsplit"), -1), name == "rsplit");
    if (name == "startswith" || name == "endswith") return affix(s, arg(a, 0, "prefix"), name == "startswith");
    if (name == "upper") return map_case(s, utf8proc_toupper);
    if (name == "lower") return map_case(s, utf8proc_tolower);
    if (name == "title") return py_title(s);
    if (name == "capitalize") return py_capitalize(s);
    if (name == "replace")
        return py_replace(s, need_str(arg(a, 0, "old"), "replace()"), need_str(arg(a, 1, "new"), "replace()"), int_arg(arg(a, 2, "count"), -1));
    if (name == "find" || name == "rfind" || name == "count") {
        const std::string x = need_str(arg(a, 0, "sub"), name.c_str());
        if (name == "count") {
            if (x.empty()) return int64_t(cps(s).size() + 1);
            int64_t n = 0;
            for (size_t i = find_linear(s, x); i != std::string::npos; i = find_linear(s, x, i + x.size())) ++n;
            return n;
        }
        const size_t at = name == "find" ? find_linear(s, x) : rfind_linear(s, x);
        return at == std::string::npos ? int64_t{-1} : int64_t(cps(s.substr(0, at)).size());
    }
    if (name == "join") {
        std::string out;
        bool first = true;
        for (const Value& v : iterate(arg(a, 0, "iterable"))) {
            if (!first) out += s;
            out += need_str(v, "sequence item");
            check_built(out, "join");
            first = false;
        }
        return out;
    }
    if (name == "splitlines") {
        List out;
        size_t i = 0;
        while (i < s.size()) {
            size_t j = s.find_first_of("\n\r", i);
            if (j == std::string::npos) { out.emplace_back(s.substr(i)); break; }
            out.emplace_back(s.substr(i, j - i));
            check_built_items(out.size(), "splitlines");
            i = j + (s[j] == '\r' && j + 1 < s.size() && s[j + 1] == '\n' ? 2 : 1);
        }
        return out;
    }
    auto all = [&](auto pred) {
        std::u32string u = cps(s);
        return !u.empty() && std::all_of(u.begin(), u.end(), pred);
    };
    auto cat = [](char32_t c) { return utf8proc_category(utf8proc_int32_t(c)); };
    if (name == "isspace") return all(py_space);
    if (name == "isdigit") return all([&](char32_t c) { return cat(c) == UTF8PROC_CATEGORY_ND; });
    if (name == "isalpha") return all([&](char32_t c) { auto k = cat(c); return k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LO; });
    if (name == "isalnum") return all([&](char32_t c) { auto k = cat(c); return (k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LO) || k == UTF8PROC_CATEGORY_ND || k == UTF8PROC_CATEGORY_NL || k == UTF8PROC_CATEGORY_NO; });
    if (name == "islower" || name == "isupper") {
        const bool lower = name == "islower";
        bool any = false;
        for (char32_t c : cps(s)) {
            if (!is_cased(c)) continue;
            any = true;
            if ((cat(c) == UTF8PROC_CATEGORY_LL) != lower) return false;
        }
        return any;
    }
    throw RenderError("'str object' has no attribute '" + name + "'");
}

bool is_str_method(const std::string& n) {
    static const char* names[] = {"strip", "lstrip", "rstrip", "split", "rsplit", "startswith", "endswith", "upper", "lower",
                                  "title", "capitalize", "replace", "find", "rfind", "count", "join", "splitlines",
                                  "isspace", "isdigit", "isalpha", "isalnum", "islower", "isupper"};
    return std::any_of(std::begin(names), std::end(names), [&](const char* x) { return n == x; });
}

Value bound(std::string name, std::function<Value(Args&)> fn) {
    return Value(std::make_shared<const Callable>(Callable{std::move(name), std::move(fn)}));
}

// Python's slice.indices(): start, stop and step for a sequence of length n.
void slice_indices(int64_t n, const Value& a, const Value& b, const Value& c, int64_t& start, int64_t& stop, int64_t& step) {
    step = int_arg(c, 1);
    if (step == 0) throw RenderError("slice step cannot be zero");
    auto fix = [&](const Value& v, int64_t def, int64_t lo, int64_t hi) {
        if (v.is_undefined() || v.is_none()) return def;
        int64_t x = int_arg(v, 0);
        if (x < 0) x = std::max(x + n, lo);
        return std::min(x, hi);
    };
    if (step > 0) {
        start = fix(a, 0, 0, n);
        stop = fix(b, n, 0, n);
    } else {
        start = fix(a, n - 1, -1, n - 1);
        stop = fix(b, -1, -1, n - 1);
    }
}

}  // namespace

std::string py_strip(const std::string& s, const Value& chars, bool left, bool right) {
    std::u32string u = cps(s);
    std::u32string set;
    const bool ws = chars.is_none() || chars.is_undefined();
    if (!ws) set = cps(need_str(chars, "strip"));
    auto strip_it = [&](char32_t c) { return ws ? py_space(c) : set.find(c) != std::u32string::npos; };
    size_t b = 0, e = u.size();
    if (left) while (b < e && strip_it(u[b])) ++b;
    if (right) while (e > b && strip_it(u[e - 1])) --e;
    return utf8_encode(std::u32string_view(u).substr(b, e - b));
}

Value get_attr(const Value& obj, const std::string& name) {
    if (obj.is_undefined()) fail_undefined(obj);
    if (obj.is_string()) {
        if (!is_str_method(name)) return Undefined{"'str object' has no attribute '" + name + "'"};
        const std::string s = obj.str();
        return bound(name, [s, name](Args& a) { return str_method(s, name, a); });
    }
    if (obj.is_dict()) {
        Value::DictPtr d = std::get<Value::DictPtr>(obj.v);
        if (!d->is_namespace) {
            if (name == "items" || name == "keys" || name == "values")
                return bound(name, [d, name](Args&) {
                    List out;
                    for (const auto& [k, v] : d->items()) {
                        if (name == "items") out.emplace_back(List{Value(k), v}, true);
                        else out.push_back(name == "keys" ? Value(k) : v);
                    }
                    return Value(std::move(out));
                });
            if (name == "get")
                return bound(name, [d](Args& a) {
                    const Value key = arg(a, 0, "key");
                    const Value* v = key.is_string() ? d->find(key.str()) : nullptr;
                    return v ? *v : arg(a, 1, "default", None{});
                });
            static const char* mutators[] = {"pop", "popitem", "setdefault", "update", "clear"};
            for (const char* m : mutators)
                if (name == m) throw RenderError("access to attribute '" + name + "' of 'dict' object is unsafe.");
        }
        if (const Value* v = d->find(name)) return *v;
        return Undefined{"'" + std::string(d->is_namespace ? "Namespace" : "dict object") + "' has no attribute '" + name + "'"};
    }
    if (obj.is_list()) {
        static const char* mutators[] = {"append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear"};
        for (const char* m : mutators)
            if (name == m) throw RenderError("access to attribute '" + name + "' of 'list' object is unsafe.");
    }
    return Undefined{"'" + type_name(obj) + " object' has no attribute '" + name + "'"};
}

Value get_item(const Value& obj, const Value& key) {
    if (obj.is_undefined()) fail_undefined(obj);
    if (obj.is_dict()) {
        if (key.is_string()) {
            if (const Value* v = obj.dict().find(key.str())) return *v;
            return get_attr(obj, key.str());
        }
        return Undefined{"'dict object' has no attribute " + repr(key)};
    }
    if (obj.is_list() || obj.is_string()) {
        if (!key.is_int() && !key.is_bool()) {
            if (key.is_string()) return get_attr(obj, key.str());
            type_error(std::string(obj.is_list() ? "list" : "string") + " indices must be integers or slices, not " + type_name(key));
        }
        int64_t i = int_arg(key, 0);
        if (obj.is_list()) {
            const int64_t n = int64_t(obj.list().size());
            if (i < 0) i += n;
            if (i < 0 || i >= n) return Undefined{"list object has no element " + std::to_string(int_arg(key, 0))};
            return obj.list()[size_t(i)];
        }
        std::u32string u = cps(obj.str());
        const int64_t n = int64_t(u.size());
        if (i < 0) i += n;
        if (i < 0 || i >= n) return Undefined{"str object has no element " + std::to_string(int_arg(key, 0))};
        return utf8_encode(std::u32string_view(u).substr(size_t(i), 1));
    }
    if (key.is_string()) return get_attr(obj, key.str());
    return Undefined{"'" + type_name(obj) + " object' has no attribute " + repr(key)};
}

Value slice(const Value& obj, const Value& a, const Value& b, const Value& c) {
    if (obj.is_undefined()) fail_undefined(obj);
    int64_t start, stop, step;
    if (obj.is_list()) {
        const List& l = obj.list();
        slice_indices(int64_t(l.size()), a, b, c, start, stop, step);
        List out;
        for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(l[size_t(i)]);
        return Value(std::move(out), obj.is_tuple());
    }
    if (obj.is_string()) {
        std::u32string u = cps(obj.str()), out;
        slice_indices(int64_t(u.size()), a, b, c, start, stop, step);
        for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(u[size_t(i)]);
        return utf8_encode(out);
    }
    type_error("'" + type_name(obj) + "' object is not subscriptable");
}

List iterate(const Value& v) {
    if (v.is_undefined()) return {};
    if (v.is_list()) return v.list();
    if (v.is_dict() && !v.dict().is_namespace) {
        List out;
        for (const auto& kv : v.dict().items()) out.emplace_back(kv.first);
        return out;
    }
    if (v.is_string()) {
        List out;
        for (char32_t c : cps(v.str())) out.emplace_back(utf8_encode(std::u32string_view(&c, 1)));
        return out;
    }
    type_error("'" + type_name(v) + "' object is not iterable");
}

int64_t length(const Value& v) {
    if (v.is_undefined()) return 0;
    if (v.is_string()) return int64_t(cps(v.str()).size());
    if (v.is_list()) return int64_t(v.list().size());
    if (v.is_dict() && !v.dict().is_namespace) return int64_t(v.dict().size());
    type_error("object of type '" + type_name(v) + "' has no len()");
}

namespace {

bool as_number(const Value& v, double& d, int64_t& i, bool& is_int) {
    if (v.is_bool()) { i = std::get<bool>(v.v); d = double(i); is_int = true; return true; }
    if (v.is_int()) { i = std::get<int64_t>(v.v); d = double(i); is_int = true; return true; }
    if (v.is_float()) { d = std::get<double>(v.v); is_int = false; return true; }
    return false;
}

[[noreturn]] void unsupported(const std::string& op, const Value& a, const Value& b) {
    if (a.is_undefined()) fail_undefined(a);
    if (b.is_undefined()) fail_undefined(b);
    type_error("unsupported operand type(s) for " + op + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
}

[[noreturn]] void overflow() { throw RenderError("integer overflow"); }

// Python's floor division and modulo (the result takes the divisor's sign).
int64_t floordiv(int64_t a, int64_t b) {
    if (a == INT64_MIN && b == -1) overflow();
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

// s * n, checking the size before building it.
std::string repeat(const std::string& s, int64_t n) {
    if (n <= 0 || s.empty()) return "";
    if (uint64_t(n) > (uint64_t(1) << 28) / s.size()) throw RenderError("string repetition too large");
    std::string out;
    out.reserve(s.size() * size_t(n));
    for (int64_t k = 0; k < n; ++k) out += s;
    return out;
}

}  // namespace

Value binary_op(const std::string& op, const Value& a, const Value& b) {
    if (op == "~") return to_str(a) + to_str(b);  // Undefined shows as ""
    double da = 0, db = 0;
    int64_t ia = 0, ib = 0;
    bool ai = false, bi = false;
    const bool num = as_number(a, da, ia, ai) && as_number(b, db, ib, bi);
    const bool ints = num && ai && bi;
    int64_t r;
    if (op == "+") {
        if (ints) { if (__builtin_add_overflow(ia, ib, &r)) overflow(); return r; }
        if (num) return da + db;
        if (a.is_string() && b.is_string()) return a.str() + b.str();
        if (a.is_list() && b.is_list()) {
            List out = a.list();
            out.insert(out.end(), b.list().begin(), b.list().end());
            return Value(std::move(out), a.is_tuple());
        }
        if (a.is_string() && !b.is_undefined()) type_error("can only concatenate str (not \"" + type_name(b) + "\") to str");
        unsupported(op, a, b);
    }
    if (op == "-") {
        if (ints) { if (__builtin_sub_overflow(ia, ib, &r)) overflow(); return r; }
        if (num) return da - db;
        unsupported(op, a, b);
    }
    if (op == "*") {
        if (ints) { if (__builtin_mul_overflow(ia, ib, &r)) overflow(); return r; }
        if (num) return da * db;
        int64_t n;
        bool n_int;
        double nd;
        if (a.is_string() && as_number(b, nd, n, n_int) && n_int) return repeat(a.str(), n);
        if (b.is_string() && as_number(a, nd, n, n_int) && n_int) return repeat(b.str(), n);
        if (a.is_list() && as_number(b, nd, n, n_int) && n_int) {
            if (n > 0 && !a.list().empty() && uint64_t(n) > (uint64_t(1) << 24) / a.list().size()) throw RenderError("list repetition too large");
            List out;
            for (int64_t k = 0; k < n; ++k) out.insert(out.end(), a.list().begin(), a.list().end());
            return Value(std::move(out), a.is_tuple());
        }
        unsupported(op, a, b);
    }
    if (op == "/") {
        if (!num) unsupported(op, a, b);
        if (db == 0) throw RenderError("division by zero");
        return da / db;
    }
    if (op == "//" || op == "%") {
        if (!num) {
            if (op == "%" && a.is_string()) throw RenderError("printf-style string formatting ('%') is not supported");
            unsupported(op, a, b);
        }
        if (ints) {
            if (ib == 0) throw RenderError(op == "%" ? "integer modulo by zero" : "integer division or modulo by zero");
            const int64_t q = floordiv(ia, ib);
            return op == "//" ? q : ia - q * ib;
        }
        if (db == 0) throw RenderError("float modulo");
        const double m = std::fmod(da, db);
        const double mod = (m != 0 && ((m < 0) != (db < 0))) ? m + db : m;
        return op == "//" ? std::floor((da - mod) / db + 0.0) : mod;
    }
    if (op == "**") {
        if (!num) unsupported(op, a, b);
        if (ints && ib >= 0) {
            int64_t result = 1, base = ia, e = ib;
            while (e > 0) {
                if (e & 1) { if (__builtin_mul_overflow(result, base, &result)) overflow(); }
                e >>= 1;
                if (e > 0 && __builtin_mul_overflow(base, base, &base)) overflow();
            }
            return result;
        }
        return std::pow(da, db);
    }
    throw RenderError("unknown operator " + op);
}

namespace {

// Python's ordering: numbers, strings (by code point: UTF-8 bytes sort the same), lists.
int order(const std::string& op, const Value& a, const Value& b) {
    double da, db;
    int64_t ia, ib;
    bool ai, bi;
    if (as_number(a, da, ia, ai) && as_number(b, db, ib, bi)) {
        if (ai && bi) return ia < ib ? -1 : ia > ib ? 1 : 0;
        return da < db ? -1 : da > db ? 1 : 0;
    }
    if (a.is_string() && b.is_string()) return a.str() < b.str() ? -1 : a.str() > b.str() ? 1 : 0;
    if (a.is_list() && b.is_list()) {
        const List &x = a.list(), &y = b.list();
        for (size_t k = 0; k < x.size() && k < y.size(); ++k)
            if (!equal(x[k], y[k])) return order(op, x[k], y[k]);
        return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
    }
    if (a.is_undefined()) fail_undefined(a);
    if (b.is_undefined()) fail_undefined(b);
    type_error("'" + op + "' not supported between instances of '" + type_name(a) + "' and '" + type_name(b) + "'");
}

}  // namespace

bool compare_op(const std::string& op, const Value& a, const Value& b) {
    if (op == "==") return equal(a, b);
    if (op == "!=") return !equal(a, b);
    if (op == "in" || op == "not in") {
        bool found;
        if (b.is_string()) {
            if (!a.is_string()) type_error("'in <string>' requires string as left operand, not " + type_name(a));
            found = find_linear(b.str(), a.str()) != std::string::npos;
        } else if (b.is_dict() && !b.dict().is_namespace) {
            found = a.is_string() && b.dict().find(a.str()) != nullptr;
        } else if (b.is_list()) {
            found = std::any_of(b.list().begin(), b.list().end(), [&](const Value& x) { return equal(a, x); });
        } else if (b.is_undefined()) {
            found = false;
        } else {
            type_error("argument of type '" + type_name(b) + "' is not iterable");
        }
        return op == "in" ? found : !found;
    }
    const int c = order(op, a, b);
    if (op == "<") return c < 0;
    if (op == "<=") return c <= 0;
    if (op == ">") return c > 0;
    return c >= 0;
}

size_t find_linear(std::string_view hay, std::string_view needle, size_t from) {
    if (from > hay.size()) return std::string_view::npos;
    if (needle.size() <= 16) return hay.find(needle, from);  // at most 16 comparisons a byte
    // Knuth-Morris-Pratt.
    std::vector<size_t> fail(needle.size(), 0);
    for (size_t i = 1, k = 0; i < needle.size(); ++i) {
        while (k > 0 && needle[i] != needle[k]) k = fail[k - 1];
        if (needle[i] == needle[k]) ++k;
        fail[i] = k;
    }
    for (size_t i = from, k = 0; i < hay.size(); ++i) {
        while (k > 0 && hay[i] != needle[k]) k = fail[k - 1];
        if (hay[i] == needle[k]) ++k;
        if (k == needle.size()) return i + 1 - k;
    }
    return std::string_view::npos;
}

}  // namespace journey::jinja
