// The parsed template: expression and statement nodes, each with its source position.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "journey/chat/jinja/lexer.h"
#include "journey/chat/jinja/value.h"

namespace journey::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
    enum class Kind {
        literal,    // value
        name,       // name
        list,       // args: items
        tuple,      // args: items (a tuple is a list to the evaluator)
        dict,       // args: key, value, key, value, ...
        attr,       // args[0].name
        item,       // args[0][args[1]]
        slice,      // args[0][args[1]:args[2]:args[3]] (null parts are omitted)
        call,       // args[0](args[1..], kwargs)
        filter,     // args[0] | name(args[1..], kwargs)
        test,       // args[0] is [not] name(args[1..])
        unary,      // name in {"-", "+", "not"} applied to args[0]
        binary,     // args[0] name args[1]: + - * / // % ** ~ and or
        compare,    // args[0] ops[0] args[1] ops[1] args[2] ...: == != < <= > >= in "not in", chained
        cond,       // args[1] if args[0] else args[2] (args[2] may be null)
    } kind;
    SourcePos pos;
    Value value;
    std::string name;
    bool negated = false;  // "is not"
    int height = 1;        // 1 + the tallest child's: the parser bounds it (evaluation recurses on it)
    std::vector<std::string> ops;
    std::vector<ExprPtr> args;
    std::vector<std::pair<std::string, ExprPtr>> kwargs;
};

struct Node;
using Body = std::vector<std::unique_ptr<Node>>;

struct Node {
    enum class Kind {
        text,          // text
        output,        // {{ expr }}
        if_,           // branches: (cond, body)...; else_body
        for_,          // for targets in expr [if filter] ... [else else_body]
        set,           // targets = expr, or target.attr = expr (attr non-empty)
        set_block,     // {% set target %}body{% endset %}
        macro,         // {% macro name(params) %}body
        call_block,    // {% call(params) expr %}body: caller() renders body
        filter_block,  // {% filter expr %}body: expr is a filter chain over a placeholder
        break_,
        continue_,
        scope,         // a body rendered as it is ({% generation %})
    } kind;
    SourcePos pos;
    std::string text;
    std::string attr;
    std::vector<std::string> targets;
    ExprPtr expr, filter;
    std::vector<std::pair<ExprPtr, Body>> branches;
    Body body, else_body;
    std::vector<std::pair<std::string, ExprPtr>> params;  // macro / caller parameters and defaults
};

// Throws TemplateSyntaxError.
Body parse(const std::vector<Token>& tokens);

}  // namespace journey::jinja
