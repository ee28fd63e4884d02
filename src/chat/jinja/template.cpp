// A chat template read once (lexed, parsed, its filter and test names checked, as Jinja
// compiles it) and rendered with a conversation.
#include "journey/chat/jinja/template.h"

#include <cstdio>

#include <utf8proc.h>

#include "evaluator.h"
#include "journey/chat/jinja/ast.h"

namespace journey::jinja {
namespace {

std::string located(const std::string& name, SourcePos pos, const std::string& msg) {
    return name + ":" + std::to_string(pos.line) + ":" + std::to_string(pos.col) + ": " + msg;
}

// Unknown filters and tests are errors when the template is read, as Jinja compiles it:
// except inside an if statement or an inline if (a "soft" frame), where Jinja waits until
// one is called, so a template may guard a filter it is unsure of. Loops and macros start a
// new, strict frame again.
void check_names(const Expr& e, bool soft) {
    if (!soft && e.kind == Expr::Kind::filter && !is_filter(e.name)) throw TemplateSyntaxError{e.pos, "No filter named '" + e.name + "'."};
    if (!soft && e.kind == Expr::Kind::test && !is_test(e.name)) throw TemplateSyntaxError{e.pos, "No test named '" + e.name + "'."};
    soft = soft || e.kind == Expr::Kind::cond;
    for (const auto& a : e.args)
        if (a) check_names(*a, soft);
    for (const auto& [k, a] : e.kwargs) check_names(*a, soft);
}

void check_names(const Body& body, bool soft) {
    for (const auto& n : body) {
        switch (n->kind) {
        case Node::Kind::if_:
            for (const auto& [cond, b] : n->branches) {
                check_names(*cond, true);
                check_names(b, true);
            }
            check_names(n->else_body, true);
            break;
        case Node::Kind::scope: check_names(n->body, soft); break;
        default:  // the expression in the current frame; a body (loop, macro, block) in a new one
            if (n->expr) check_names(*n->expr, soft);
            if (n->filter) check_names(*n->filter, n->kind == Node::Kind::for_ ? false : soft);
            for (const auto& [p, def] : n->params)
                if (def) check_names(*def, false);
            check_names(n->body, false);
            check_names(n->else_body, false);
        }
    }
}

// The first invalid UTF-8 byte's line and column, if any (Python would not read the file).
std::optional<SourcePos> invalid_utf8(const std::string& s) {
    SourcePos pos;
    size_t i = 0;
    while (i < s.size()) {
        utf8proc_int32_t cp;
        const auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + i), utf8proc_ssize_t(s.size() - i), &cp);
        if (n <= 0) return pos;
        if (cp == '\n') { ++pos.line; pos.col = 1; }
        else ++pos.col;
        i += size_t(n);
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::tm> parse_iso8601(const std::string& text) {
    std::tm tm{};
    int y, mo, d, h = 0, mi = 0, s = 0;
    char sep = 'T', tail = 0;
    const int n = std::sscanf(text.c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d%c", &y, &mo, &d, &sep, &h, &mi, &s, &tail);
    const bool date_only = n == 3 && text.size() == 10;
    if (!date_only && (n != 7 || (sep != 'T' && sep != ' '))) return std::nullopt;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 60) return std::nullopt;
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    tm.tm_isdst = -1;
    // Fill in the weekday and day of the year (for %a, %A, %j) without moving to another zone.
    std::tm copy = tm;
    if (timegm(&copy) == -1 && y != 1969) return std::nullopt;
    if (copy.tm_mday != d || copy.tm_mon != mo - 1) return std::nullopt;  // 2025-02-30
    tm.tm_wday = copy.tm_wday;
    tm.tm_yday = copy.tm_yday;
    return tm;
}

Template::Template(const std::string& source, std::string name) : name_(std::move(name)) {
    if (auto bad = invalid_utf8(source)) throw TemplateError(located(name_, *bad, "invalid UTF-8"));
    try {
        body_ = std::make_unique<Body>(parse(lex(source)));
        check_names(*body_, false);
    } catch (const TemplateSyntaxError& e) {
        throw TemplateError(located(name_, e.pos, e.message));
    }
}

Template::~Template() = default;
Template::Template(Template&&) noexcept = default;

std::string Template::render(const nlohmann::ordered_json& vars, const RenderOptions& options) const {
    Globals globals;
    if (!vars.is_object() && !vars.is_null()) throw InputError(name_ + ": template variables must be a JSON object");
    for (const auto& [k, v] : vars.items()) {
        try {
            globals[k] = from_json(v);
        } catch (const std::exception& e) {
            throw InputError(name_ + ": variable '" + k + "': " + e.what());
        }
    }
    try {
        return Renderer(options, std::move(globals)).run(*body_);
    } catch (const RenderError& e) {
        throw TemplateError(located(name_, e.pos, e.what()));
    } catch (const std::length_error& e) {  // a bound met outside an expression (printing a value)
        throw TemplateError(name_ + ": " + e.what());
    } catch (const std::bad_alloc&) {
        throw TemplateError(name_ + ": rendering ran out of memory");
    }
}

}  // namespace journey::jinja
