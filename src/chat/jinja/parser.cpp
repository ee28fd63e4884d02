// Tokens -> statements and expressions, with Jinja's grammar and operator precedence:
// if-else < or < and < not < comparisons < + - < ~ < * / // % < ** < unary -, + < filters,
// tests, calls, attribute and item access.
#include <algorithm>
#include <string>

#include "journey/chat/jinja/ast.h"

namespace journey::jinja {
namespace {

// Deeper nesting is refused, so a hostile template cannot exhaust the stack.
constexpr int kMaxParseDepth = 128;
// An expression tree taller than this is refused: chains such as "a + a + a ...", "a.b.c...",
// "x|f|f|f..." are read by loops, not recursion, but the tree they build is walked recursively
// (name checks, rendering, destruction), so its height is bounded as it is built.
constexpr int kMaxExprHeight = 256;

class Parser {
public:
    explicit Parser(const std::vector<Token>& t) : t_(t) {}

    Body parse_all() {
        Body body = parse_body({});
        if (cur().kind != Token::end) fail(cur().pos, "unexpected '" + cur().value + "'");
        return body;
    }

private:
    const std::vector<Token>& t_;
    size_t i_ = 0;
    int depth_ = 0;
    int loops_ = 0;  // for loops around the statement being read (break/continue need one)

    struct DepthGuard {
        Parser& p;
        explicit DepthGuard(Parser& p, SourcePos pos) : p(p) {
            if (++p.depth_ > kMaxParseDepth) p.fail(pos, "template nested too deeply (more than " + std::to_string(kMaxParseDepth) + " levels)");
        }
        ~DepthGuard() { --p.depth_; }
    };

    const Token& cur() const { return t_[i_]; }
    const Token& peek(size_t k = 1) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
    void next() { if (i_ + 1 < t_.size()) ++i_; }
    [[noreturn]] void fail(SourcePos pos, const std::string& msg) const { throw TemplateSyntaxError{pos, msg}; }
    // An integer token's value; one beyond 64 bits is a syntax error here (Python's are unbounded).
    int64_t integer_value(const Token& t) const {
        try {
            return int64_t(std::stoll(t.value));
        } catch (const std::exception&) {
            fail(t.pos, "integer literal too large: " + (t.value.size() > 40 ? t.value.substr(0, 40) + "..." : t.value));
        }
    }

    static std::string describe(const Token& t) {
        switch (t.kind) {
        case Token::end: return "end of template";
        case Token::block_end: return "end of statement block";
        case Token::var_end: return "end of print statement";
        case Token::string: return "string";
        default: return "'" + t.value + "'";
        }
    }
    bool is_op(const char* op) const { return cur().kind == Token::op && cur().value == op; }
    bool is_name(const char* n) const { return cur().kind == Token::name && cur().value == n; }
    bool skip_op(const char* op) { if (!is_op(op)) return false; next(); return true; }
    bool skip_name(const char* n) { if (!is_name(n)) return false; next(); return true; }
    void expect_op(const char* op) {
        if (!skip_op(op)) fail(cur().pos, std::string("expected '") + op + "', got " + describe(cur()));
    }
    std::string expect_name() {
        if (cur().kind != Token::name) fail(cur().pos, "expected a name, got " + describe(cur()));
        std::string n = cur().value;
        next();
        return n;
    }
    void expect_block_end() {
        if (cur().kind != Token::block_end) fail(cur().pos, "expected end of statement block, got " + describe(cur()));
        next();
    }

    static ExprPtr make(Expr::Kind k, SourcePos pos) {
        auto e = std::make_unique<Expr>();
        e->kind = k;
        e->pos = pos;
        return e;
    }
    ExprPtr make2(Expr::Kind k, SourcePos pos, std::string name, ExprPtr a, ExprPtr b) const {
        auto e = make(k, pos);
        e->name = std::move(name);
        e->args.push_back(std::move(a));
        e->args.push_back(std::move(b));
        return sealed(std::move(e));
    }
    // e with its children in place: its height computed, and refused when too tall.
    ExprPtr sealed(ExprPtr e) const {
        int h = 0;
        for (const auto& a : e->args)
            if (a) h = std::max(h, a->height);
        for (const auto& [k, a] : e->kwargs) h = std::max(h, a->height);
        e->height = h + 1;
        if (e->height > kMaxExprHeight)
            fail(e->pos, "expression nested too deeply (more than " + std::to_string(kMaxExprHeight) + " levels)");
        return e;
    }

    // ---- statements ----

    // Statements until a block whose tag is one of `ends` (left unconsumed, at its name).
    Body parse_body(std::initializer_list<const char*> ends) {
        Body body;
        while (true) {
            const Token& tk = cur();
            if (tk.kind == Token::end) {
                if (ends.size() == 0) return body;
                fail(tk.pos, std::string("unexpected end of template, expected '") + *ends.begin() + "'");
            }
            if (tk.kind == Token::text) {
                auto n = std::make_unique<Node>();
                n->kind = Node::Kind::text;
                n->pos = tk.pos;
                n->text = tk.value;
                body.push_back(std::move(n));
                next();
            } else if (tk.kind == Token::var_begin) {
                auto n = std::make_unique<Node>();
                n->kind = Node::Kind::output;
                n->pos = tk.pos;
                next();
                n->expr = parse_tuple(true);
                if (cur().kind != Token::var_end) fail(cur().pos, "expected end of print statement, got " + describe(cur()));
                next();
                body.push_back(std::move(n));
            } else if (tk.kind == Token::block_begin) {
                const Token& tag = peek();
                if (tag.kind == Token::name)
                    for (const char* e : ends)
                        if (tag.value == e) { next(); return body; }
                next();
                body.push_back(parse_statement());
            } else {
                fail(tk.pos, "unexpected " + describe(tk));
            }
        }
    }

    std::unique_ptr<Node> parse_statement() {
        const Token& tag = cur();
        if (tag.kind != Token::name) fail(tag.pos, "tag name expected");
        DepthGuard guard(*this, tag.pos);
        auto n = std::make_unique<Node>();
        n->pos = tag.pos;
        const std::string name = tag.value;
        next();
        if (name == "if") parse_if(*n);
        else if (name == "for") parse_for(*n);
        else if (name == "set") parse_set(*n);
        else if (name == "macro") parse_macro(*n);
        else if (name == "call") parse_call_block(*n);
        else if (name == "filter") parse_filter_block(*n);
        else if (name == "break" || name == "continue") {
            if (loops_ == 0) fail(tag.pos, "'" + name + "' outside of a for loop");
            n->kind = name == "break" ? Node::Kind::break_ : Node::Kind::continue_;
            expect_block_end();
        } else if (name == "generation") {
            n->kind = Node::Kind::scope;
            expect_block_end();
            n->body = parse_body({"endgeneration"});
            end_tag();
        } else {
            fail(tag.pos, "Encountered unknown tag '" + name + "'.");
        }
        return n;
    }

    // After parse_body stopped at an end tag's name: consume it and the block end.
    void end_tag() {
        next();
        expect_block_end();
    }

    void parse_if(Node& n) {
        n.kind = Node::Kind::if_;
        while (true) {
            ExprPtr cond = parse_tuple(true);
            expect_block_end();
            Body body = parse_body({"elif", "else", "endif"});
            n.branches.emplace_back(std::move(cond), std::move(body));
            if (skip_name("elif")) continue;
            if (skip_name("else")) {
                expect_block_end();
                n.else_body = parse_body({"endif"});
            }
            end_tag();
            return;
        }
    }

    std::vector<std::string> parse_targets() {
        std::vector<std::string> names;
        const bool paren = skip_op("(");
        do {
            names.push_back(expect_name());
        } while (skip_op(","));
        if (paren) expect_op(")");
        return names;
    }

    void parse_for(Node& n) {
        n.kind = Node::Kind::for_;
        n.targets = parse_targets();
        if (!skip_name("in")) fail(cur().pos, "expected 'in', got " + describe(cur()));
        n.expr = parse_tuple(false);
        if (skip_name("if")) n.filter = parse_tuple(true);
        if (is_name("recursive")) fail(cur().pos, "recursive loops are not supported");
        expect_block_end();
        ++loops_;
        n.body = parse_body({"endfor", "else"});
        --loops_;
        if (skip_name("else")) {
            expect_block_end();
            n.else_body = parse_body({"endfor"});
        }
        end_tag();
    }

    void parse_set(Node& n) {
        n.kind = Node::Kind::set;
        const std::string first = expect_name();
        if (skip_op(".")) {
            n.targets = {first};
            n.attr = expect_name();
        } else {
            n.targets = {first};
            while (skip_op(",")) n.targets.push_back(expect_name());
        }
        if (skip_op("=")) {
            n.expr = parse_tuple(true);
            expect_block_end();
            return;
        }
        if (!n.attr.empty() || n.targets.size() != 1) fail(cur().pos, "expected '=', got " + describe(cur()));
        n.kind = Node::Kind::set_block;
        if (is_op("|")) n.filter = parse_filter_chain(make(Expr::Kind::literal, cur().pos));
        expect_block_end();
        n.body = parse_body({"endset"});
        end_tag();
    }

    void parse_params(Node& n) {
        expect_op("(");
        while (!is_op(")")) {
            if (!n.params.empty()) expect_op(",");
            if (is_op(")")) break;
            std::string p = expect_name();
            ExprPtr def;
            if (skip_op("=")) def = parse_expression(true);
            n.params.emplace_back(std::move(p), std::move(def));
        }
        next();
    }

    void parse_macro(Node& n) {
        n.kind = Node::Kind::macro;
        n.text = expect_name();
        parse_params(n);
        expect_block_end();
        const int loops = loops_;
        loops_ = 0;  // a macro's body is not inside the loop it is defined in
        n.body = parse_body({"endmacro"});
        loops_ = loops;
        end_tag();
    }

    void parse_call_block(Node& n) {
        n.kind = Node::Kind::call_block;
        if (is_op("(")) parse_params(n);
        n.expr = parse_expression(true);
        if (n.expr->kind != Expr::Kind::call) fail(n.expr->pos, "expected a call");
        expect_block_end();
        n.body = parse_body({"endcall"});
        end_tag();
    }

    void parse_filter_block(Node& n) {
        n.kind = Node::Kind::filter_block;
        auto placeholder = make(Expr::Kind::literal, cur().pos);
        n.filter = parse_filter_chain(std::move(placeholder), false);
        expect_block_end();
        n.body = parse_body({"endfilter"});
        end_tag();
    }

    // ---- expressions ----

    // Comma-separated expressions form a tuple ("{{ a, b }}", "{% set x = 1, 2 %}").
    ExprPtr parse_tuple(bool with_condexpr) {
        const SourcePos pos = cur().pos;
        ExprPtr first = parse_expression(with_condexpr);
        if (!is_op(",")) return first;
        auto t = make(Expr::Kind::tuple, pos);
        t->args.push_back(std::move(first));
        while (skip_op(",")) {
            if (cur().kind == Token::block_end || cur().kind == Token::var_end || is_name("if")) break;
            t->args.push_back(parse_expression(with_condexpr));
        }
        return sealed(std::move(t));
    }

    ExprPtr parse_expression(bool with_condexpr) {
        DepthGuard guard(*this, cur().pos);
        return with_condexpr ? parse_condexpr() : parse_or();
    }

    ExprPtr parse_condexpr() {
        ExprPtr e = parse_or();
        while (is_name("if")) {
            const SourcePos pos = cur().pos;
            next();
            auto c = make(Expr::Kind::cond, pos);
            c->args.push_back(parse_or());
            c->args.push_back(std::move(e));
            c->args.push_back(skip_name("else") ? parse_expression(true) : nullptr);
            e = sealed(std::move(c));
        }
        return e;
    }

    ExprPtr parse_or() {
        ExprPtr e = parse_and();
        while (is_name("or")) {
            const SourcePos pos = cur().pos;
            next();
            e = make2(Expr::Kind::binary, pos, "or", std::move(e), parse_and());
        }
        return e;
    }

    ExprPtr parse_and() {
        ExprPtr e = parse_not();
        while (is_name("and")) {
            const SourcePos pos = cur().pos;
            next();
            e = make2(Expr::Kind::binary, pos, "and", std::move(e), parse_not());
        }
        return e;
    }

    ExprPtr parse_not() {
        if (is_name("not")) {
            DepthGuard guard(*this, cur().pos);
            auto e = make(Expr::Kind::unary, cur().pos);
            e->name = "not";
            next();
            e->args.push_back(parse_not());
            return sealed(std::move(e));
        }
        return parse_compare();
    }

    ExprPtr parse_compare() {
        const SourcePos pos = cur().pos;
        ExprPtr first = parse_math1();
        ExprPtr cmp;
        while (true) {
            std::string op;
            if (cur().kind == Token::op && (cur().value == "==" || cur().value == "!=" || cur().value == "<" ||
                                            cur().value == "<=" || cur().value == ">" || cur().value == ">=")) {
                op = cur().value;
                next();
            } else if (is_name("in")) {
                op = "in";
                next();
            } else if (is_name("not") && peek().kind == Token::name && peek().value == "in") {
                op = "not in";
                next();
                next();
            } else break;
            if (!cmp) {
                cmp = make(Expr::Kind::compare, pos);
                cmp->args.push_back(std::move(first));
            }
            cmp->ops.push_back(op);
            cmp->args.push_back(parse_math1());
        }
        return cmp ? sealed(std::move(cmp)) : std::move(first);
    }

    ExprPtr parse_math1() {
        ExprPtr e = parse_concat();
        while (is_op("+") || is_op("-")) {
            const Token& t = cur();
            next();
            e = make2(Expr::Kind::binary, t.pos, t.value, std::move(e), parse_concat());
        }
        return e;
    }

    ExprPtr parse_concat() {
        ExprPtr e = parse_math2();
        while (is_op("~")) {
            const SourcePos pos = cur().pos;
            next();
            e = make2(Expr::Kind::binary, pos, "~", std::move(e), parse_math2());
        }
        return e;
    }

    ExprPtr parse_math2() {
        ExprPtr e = parse_pow();
        while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
            const Token& t = cur();
            next();
            e = make2(Expr::Kind::binary, t.pos, t.value, std::move(e), parse_pow());
        }
        return e;
    }

    ExprPtr parse_pow() {
        ExprPtr e = parse_unary(true);
        while (is_op("**")) {
            const SourcePos pos = cur().pos;
            next();
            e = make2(Expr::Kind::binary, pos, "**", std::move(e), parse_unary(true));
        }
        return e;
    }

    ExprPtr parse_unary(bool with_filter) {
        DepthGuard guard(*this, cur().pos);
        ExprPtr e;
        if (is_op("-") || is_op("+")) {
            e = make(Expr::Kind::unary, cur().pos);
            e->name = cur().value;
            next();
            e->args.push_back(parse_unary(false));
            e = sealed(std::move(e));
        } else {
            e = parse_primary();
        }
        e = parse_postfix(std::move(e));
        if (with_filter) e = parse_filter_expr(std::move(e));
        return e;
    }

    ExprPtr parse_primary() {
        const Token& t = cur();
        ExprPtr e;
        switch (t.kind) {
        case Token::name:
            e = make(Expr::Kind::literal, t.pos);
            if (t.value == "true" || t.value == "True") e->value = true;
            else if (t.value == "false" || t.value == "False") e->value = false;
            else if (t.value == "none" || t.value == "None") e->value = None{};
            else {
                e->kind = Expr::Kind::name;
                e->name = t.value;
            }
            next();
            return e;
        case Token::string: {
            e = make(Expr::Kind::literal, t.pos);
            std::string s;
            while (cur().kind == Token::string) {  // adjacent literals concatenate
                s += cur().value;
                next();
            }
            e->value = std::move(s);
            return e;
        }
        case Token::integer:
            e = make(Expr::Kind::literal, t.pos);
            e->value = integer_value(t);
            next();
            return e;
        case Token::floating:
            e = make(Expr::Kind::literal, t.pos);
            e->value = std::strtod(t.value.c_str(), nullptr);
            next();
            return e;
        case Token::op:
            if (t.value == "(") return parse_parenthesized();
            if (t.value == "[") return parse_list();
            if (t.value == "{") return parse_dict();
            [[fallthrough]];
        default:
            fail(t.pos, "unexpected " + describe(t));
        }
    }

    ExprPtr parse_parenthesized() {
        const SourcePos pos = cur().pos;
        next();
        if (skip_op(")")) return make(Expr::Kind::tuple, pos);
        ExprPtr first = parse_expression(true);
        if (skip_op(")")) return first;
        auto t = make(Expr::Kind::tuple, pos);
        t->args.push_back(std::move(first));
        while (skip_op(",")) {
            if (is_op(")")) break;
            t->args.push_back(parse_expression(true));
        }
        expect_op(")");
        return sealed(std::move(t));
    }

    ExprPtr parse_list() {
        auto e = make(Expr::Kind::list, cur().pos);
        next();
        while (!is_op("]")) {
            if (!e->args.empty()) expect_op(",");
            if (is_op("]")) break;
            e->args.push_back(parse_expression(true));
        }
        next();
        return sealed(std::move(e));
    }

    ExprPtr parse_dict() {
        auto e = make(Expr::Kind::dict, cur().pos);
        next();
        while (!is_op("}")) {
            if (!e->args.empty()) expect_op(",");
            if (is_op("}")) break;
            e->args.push_back(parse_expression(true));
            expect_op(":");
            e->args.push_back(parse_expression(true));
        }
        next();
        return sealed(std::move(e));
    }

    ExprPtr parse_postfix(ExprPtr e) {
        while (true) {
            if (is_op(".")) {
                const SourcePos pos = cur().pos;
                next();
                if (cur().kind == Token::name) {
                    auto a = make(Expr::Kind::attr, pos);
                    a->name = cur().value;
                    a->args.push_back(std::move(e));
                    e = sealed(std::move(a));
                    next();
                } else if (cur().kind == Token::integer) {
                    auto idx = make(Expr::Kind::literal, cur().pos);
                    idx->value = integer_value(cur());  // x.0 (found by fuzz_chat_template: x.1111...1 threw out_of_range)
                    next();
                    e = make2(Expr::Kind::item, pos, "", std::move(e), std::move(idx));
                } else fail(cur().pos, "expected name or number");
            } else if (is_op("[")) {
                e = parse_subscript(std::move(e));
            } else if (is_op("(")) {
                e = parse_call(std::move(e));
            } else return e;
        }
    }

    ExprPtr parse_subscript(ExprPtr e) {
        const SourcePos pos = cur().pos;
        next();
        ExprPtr parts[3];
        bool is_slice = false;
        if (!is_op(":")) {
            parts[0] = parse_expression(true);
            if (!is_op(":")) {
                expect_op("]");
                return make2(Expr::Kind::item, pos, "", std::move(e), std::move(parts[0]));
            }
        }
        is_slice = true;
        next();  // the first ':'
        if (!is_op(":") && !is_op("]")) parts[1] = parse_expression(true);
        if (skip_op(":") && !is_op("]")) parts[2] = parse_expression(true);
        expect_op("]");
        auto s = make(Expr::Kind::slice, pos);
        s->args.push_back(std::move(e));
        for (auto& p : parts) s->args.push_back(std::move(p));
        (void)is_slice;
        return sealed(std::move(s));
    }

    void parse_args(Expr& e) {
        expect_op("(");
        for (size_t n = 0; !is_op(")"); ++n) {
            if (n > 0) {
                expect_op(",");
                if (is_op(")")) break;
            }
            if (cur().kind == Token::name && peek().kind == Token::op && peek().value == "=") {
                std::string k = cur().value;
                next();
                next();
                e.kwargs.emplace_back(std::move(k), parse_expression(true));
            } else {
                if (!e.kwargs.empty()) fail(cur().pos, "positional argument after keyword argument");
                e.args.push_back(parse_expression(true));
            }
        }
        next();
    }

    // e.args[0] is the callee or the filtered value; the call's arguments follow it.
    ExprPtr parse_call(ExprPtr callee) {
        auto c = make(Expr::Kind::call, callee->pos);  // errors point at what is called
        c->args.push_back(std::move(callee));
        parse_args(*c);
        return sealed(std::move(c));
    }

    std::string dotted_name() {
        std::string n = expect_name();
        while (is_op(".") && peek().kind == Token::name) {
            next();
            n += "." + expect_name();
        }
        return n;
    }

    ExprPtr parse_filter(ExprPtr e) {
        const SourcePos pos = cur().pos;
        next();  // '|'
        auto f = make(Expr::Kind::filter, pos);
        f->name = dotted_name();
        f->args.push_back(std::move(e));
        if (is_op("(")) parse_args(*f);
        return sealed(std::move(f));
    }

    // "x | f | g(1)" for {% filter %} and {% set x | f %} (the first '|' is optional there).
    ExprPtr parse_filter_chain(ExprPtr e, bool need_pipe = true) {
        if (!need_pipe && !is_op("|")) {
            auto f = make(Expr::Kind::filter, cur().pos);
            f->name = dotted_name();
            f->args.push_back(std::move(e));
            if (is_op("(")) parse_args(*f);
            e = sealed(std::move(f));
        }
        while (is_op("|")) e = parse_filter(std::move(e));
        return e;
    }

    ExprPtr parse_test(ExprPtr e) {
        const SourcePos pos = cur().pos;
        next();  // 'is'
        auto t = make(Expr::Kind::test, pos);
        t->negated = skip_name("not");
        t->name = dotted_name();
        t->args.push_back(std::move(e));
        const Token& n = cur();
        if (is_op("(")) {
            parse_args(*t);
        } else if ((n.kind == Token::name || n.kind == Token::string || n.kind == Token::integer ||
                    n.kind == Token::floating || is_op("(") || is_op("[") || is_op("{")) &&
                   !(n.kind == Token::name && (n.value == "else" || n.value == "or" || n.value == "and"))) {
            if (n.kind == Token::name && n.value == "is") fail(n.pos, "You cannot chain multiple tests with is");
            t->args.push_back(parse_postfix(parse_primary()));
        }
        return sealed(std::move(t));
    }

    ExprPtr parse_filter_expr(ExprPtr e) {
        while (true) {
            if (is_op("|")) e = parse_filter(std::move(e));
            else if (is_name("is")) e = parse_test(std::move(e));
            else if (is_op("(")) e = parse_call(std::move(e));
            else return e;
        }
    }
};

}  // namespace

Body parse(const std::vector<Token>& tokens) { return Parser(tokens).parse_all(); }

}  // namespace journey::jinja
