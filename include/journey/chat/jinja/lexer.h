// Template source -> tokens, the way Jinja's lexer reads it in the environment transformers
// renders chat templates with: trim_blocks and lstrip_blocks on, "{%-"/"-%}" whitespace control,
// "\r\n" and "\r" read as "\n", and one trailing newline of the source dropped.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace journey::jinja {

struct SourcePos {
    int line = 1, col = 1;
};

// A template that cannot be read or rendered: file:line:col in what(), exit code 2 in the CLI.
struct TemplateSyntaxError {
    SourcePos pos;
    std::string message;
};

struct Token {
    enum Kind {
        text,         // raw output between tags
        var_begin,    // {{
        var_end,      // }}
        block_begin,  // {%
        block_end,    // %}
        name,         // identifiers and keywords (if, for, not, in, is, ...)
        string,       // a string literal, escapes already resolved
        integer,
        floating,
        op,           // + - * / // % ** ~ == != < <= > >= = ( ) [ ] { } , . : |
        end,
    } kind;
    std::string value;
    SourcePos pos;
};

// Throws TemplateSyntaxError.
std::vector<Token> lex(std::string_view source);

}  // namespace journey::jinja
