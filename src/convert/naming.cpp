// general.name, .basename, .finetune, .version and .size_label of a converted file, derived from
// the model id (config.json's _name_or_path, else the directory's name) and the parameter count
// as gguf-py's Metadata heuristics derive them.
#include "naming.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

namespace journey {
namespace {

std::vector<std::string> split(const std::string& s, char c) {
    std::vector<std::string> out;
    std::string cur;
    for (char ch : s) {
        if (ch == c) out.push_back(cur), cur.clear();
        else cur += ch;
    }
    out.push_back(cur);
    return out;
}

// The regular expressions gguf-py's heuristics use, as hand-written scans: std::regex recurses
// once per character and overflows the stack on a long name, and the names are the user's.
bool is_digit(char c) { return c >= '0' && c <= '9'; }
char lower(char c) { return char(std::tolower(static_cast<unsigned char>(c))); }
bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Skips \d+ at i; false if there is no digit.
bool digits(const std::string& s, size_t& i) {
    const size_t start = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    return i > start;
}

// ([.]\d+)* from i to the end.
bool dotted_tail(const std::string& s, size_t i) {
    while (i < s.size()) {
        if (s[i] != '.') return false;
        ++i;
        if (!digits(s, i)) return false;
    }
    return true;
}

// ^(v\d+(?:\.\d+)*|\d.*)$
bool title_version(const std::string& w) {
    if (!w.empty() && is_digit(w[0])) return w.find('\n') == std::string::npos;  // '.' stops at a newline
    size_t i = 1;
    return w.size() > 1 && w[0] == 'v' && digits(w, i) && dotted_tail(w, i);
}

// (v|iter)?\d+([.]\d+)* (case-insensitive, whole)
bool part_version(const std::string& p) {
    size_t i = 0;
    if (!p.empty() && lower(p[0]) == 'v') i = 1;
    else if (p.size() >= 4 && lower(p[0]) == 'i' && lower(p[1]) == 't' && lower(p[2]) == 'e' && lower(p[3]) == 'r') i = 4;
    return digits(p, i) && dotted_tail(p, i);
}

// i?q\d(_\w)*|b?fp?(16|32) (case-insensitive, whole)
bool part_qtype(const std::string& p) {
    size_t i = 0;
    if (i < p.size() && lower(p[i]) == 'i') ++i;
    if (i < p.size() && lower(p[i]) == 'q') {
        ++i;
        if (i < p.size() && is_digit(p[i])) {
            ++i;
            while (i + 1 < p.size() && p[i] == '_' && is_word(p[i + 1])) i += 2;
            if (i == p.size()) return true;
        }
    }
    i = 0;
    if (i < p.size() && lower(p[i]) == 'b') ++i;
    if (i < p.size() && lower(p[i]) == 'f') ++i;
    else return false;
    if (i < p.size() && lower(p[i]) == 'p') ++i;
    const std::string rest = p.substr(i);
    return rest == "16" || rest == "32";
}

// (([A]|\d+[x])?\d+([._]\d+)?[KMBT][\d]?|small|mini|medium|large|x?xl) (case-insensitive, whole)
bool part_size(const std::string& p) {
    std::string l;
    for (char c : p) l += lower(c);
    if (l == "small" || l == "mini" || l == "medium" || l == "large" || l == "xl" || l == "xxl") return true;
    size_t i = 0;
    if (!l.empty() && l[0] == 'a') i = 1;  // a digit cannot be 'a': the prefix is taken or fails
    else {
        size_t j = 0;
        if (digits(l, j) && j < l.size() && l[j] == 'x') i = j + 1;  // nor can the digits go on past 'x'
    }
    if (!digits(l, i)) return false;
    if (i < l.size() && (l[i] == '.' || l[i] == '_')) {
        size_t j = i + 1;
        if (digits(l, j)) i = j;  // else [KMBT] cannot match '.' or '_' either
        else return false;
    }
    if (i >= l.size() || std::string("kmbt").find(l[i]) == std::string::npos) return false;
    ++i;
    if (i < l.size() && is_digit(l[i])) ++i;
    return i == l.size();
}

// chat|instruct|vision|lora (case-insensitive, whole)
bool part_finetune(const std::string& p) {
    std::string l;
    for (char c : p) l += lower(c);
    return l == "chat" || l == "instruct" || l == "vision" || l == "lora";
}

}  // namespace

std::string id_to_title(const std::string& s) {
    std::string t = s;
    for (char& c : t)
        if (c == '-') c = ' ';
    std::string out;
    for (const std::string& w : split(t, ' ')) {
        if (w.empty()) continue;
        bool lower = false, upper = false;
        for (char c : w) lower |= bool(std::islower(static_cast<unsigned char>(c))), upper |= bool(std::isupper(static_cast<unsigned char>(c)));
        std::string word = w;
        if (lower && !upper && !title_version(w)) {  // Python's str.title()
            bool start = true;
            for (char& c : word) {
                const bool alpha = std::isalpha(static_cast<unsigned char>(c));
                c = char(alpha ? (start ? std::toupper(static_cast<unsigned char>(c)) : std::tolower(static_cast<unsigned char>(c))) : c);
                start = !alpha;
            }
        }
        out += (out.empty() ? "" : " ") + word;
    }
    return out;
}

IdParts model_id_parts(const std::string& model_id, int64_t total_params) {
    IdParts r;
    std::string full = model_id;
    if (const auto slash = model_id.find('/'); slash != std::string::npos) full = model_id.substr(slash + 1);
    r.full = full;
    std::vector<std::string> parts;
    for (const std::string& p : split(full, '-'))
        if (!p.empty()) parts.push_back(p);
    std::vector<std::set<std::string>> types(parts.size());
    for (size_t i = 0; i < parts.size(); ++i) {
        std::string part = parts[i];
        if (part_version(part)) types[i].insert("version");
        else if (part_qtype(part)) {
            types[i].insert("type");
            for (char& c : parts[i]) c = char(std::toupper(static_cast<unsigned char>(c)));
        } else if (i > 0 && part_size(part)) {
            for (char& c : part)
                if (c == '_') c = '.';
            if (std::isdigit(static_cast<unsigned char>(part.back()))) part = part.substr(0, part.size() - 2) + "." + part.back() + part[part.size() - 2];
            if (part.size() > 1 && std::isdigit(static_cast<unsigned char>(part[part.size() - 2])) && std::string("kmbt").find(part.back()) != std::string::npos)
                part.back() = char(std::toupper(static_cast<unsigned char>(part.back())));
            if (total_params != 0) {
                const auto scale = std::string(" KMBT").find(part.back());
                try {
                    if (scale != std::string::npos) {
                        const double label = std::stod(part.substr(0, part.size() - 1)) * std::pow(1000.0, double(scale));
                        if (total_params > 0 && std::fabs(label - double(total_params)) > double(7 * total_params / 8)) {
                            types[i].insert("finetune");
                            part.back() = char(std::tolower(static_cast<unsigned char>(part.back())));
                        }
                    }
                } catch (const std::exception&) {
                }
            }
            if (types[i].empty()) types[i].insert("size_label");
            parts[i] = part;
        } else if (i > 0 && part_finetune(part)) {
            types[i].insert("finetune");
        }
    }
    bool numeric_size = false;
    for (size_t i = 0; i < parts.size(); ++i)
        if (types[i].count("size_label"))
            for (char c : parts[i]) numeric_size |= bool(std::isdigit(static_cast<unsigned char>(c)));
    if (numeric_size)
        for (size_t i = 0; i < parts.size(); ++i)
            if (types[i].count("size_label")) {
                bool all_alpha = true;
                for (char c : parts[i]) all_alpha &= bool(std::isalpha(static_cast<unsigned char>(c)));
                if (all_alpha) types[i].erase("size_label");
            }
    bool at_start = true;
    for (size_t i = 0; i < parts.size(); ++i) {
        if (at_start && ((types[i].empty() && std::isalpha(static_cast<unsigned char>(parts[i][0]))) || types[i].count("version"))) {
            types[i].insert("basename");
        } else {
            at_start = false;
            if (types[i].empty()) types[i].insert("finetune");
        }
    }
    for (size_t k = parts.size(); k-- > 0;) {
        if (types[k].count("basename") && types[k].size() > 1) types[k].erase("basename");
        else break;
    }
    auto join = [&](const char* t, bool exclude_basename = false) {
        std::string s;
        std::set<std::string> seen;
        for (size_t i = 0; i < parts.size(); ++i)
            if (types[i].count(t) && !(exclude_basename && types[i].count("basename"))) {
                if (std::string(t) == "size_label" && !seen.insert(parts[i]).second) continue;
                s += (s.empty() ? "" : "-") + parts[i];
            }
        return s;
    };
    r.basename = join("basename");
    r.size_label = join("size_label");
    r.finetune = join("finetune");
    r.version = join("version", true);
    if (r.size_label.empty() && r.finetune.empty() && r.version.empty()) r.basename.clear();
    return r;
}

// gguf-py's size_label: the parameter count in 2 significant digits at least ("541K", "1.7M").
std::string size_label(int64_t n) {
    const double x = double(n);
    double scaled;
    const char* suffix;
    if (x > 1e12) scaled = x * 1e-12, suffix = "T";
    else if (x > 1e9) scaled = x * 1e-9, suffix = "B";
    else if (x > 1e6) scaled = x * 1e-6, suffix = "M";
    else scaled = x * 1e-3, suffix = "K";
    const std::string rounded = std::to_string(int64_t(std::nearbyint(scaled)));
    const int fix = std::max(2 - int(rounded.find_first_not_of('0') == std::string::npos ? 0 : rounded.size() - rounded.find_first_not_of('0')), 0);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f%s", fix, scaled, suffix);
    return buf;
}

}  // namespace journey
