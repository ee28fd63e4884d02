// The engine's pieces by hand: error positions, the bounds that keep an untrusted template
// from taking the process down, and input it must refuse rather than misread.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "journey/chat/jinja/template.h"

using namespace journey;
using nlohmann::ordered_json;

namespace {

std::string render(const std::string& src, const ordered_json& vars = ordered_json::object(), jinja::RenderOptions o = {}) {
    return jinja::Template(src, "t.jinja").render(vars, o);
}

}  // namespace

TEST_CASE("jinja errors name the template line and column", "[jinja]") {
    // Columns count characters from 1 on the line of the offending token.
    CHECK_THROWS_WITH(render("a\nb {{ x + }}"), "t.jinja:2:10: unexpected end of print statement");
    CHECK_THROWS_WITH(render("{% if x %}\n  {% frob %}\n{% endif %}"), "t.jinja:2:6: Encountered unknown tag 'frob'.");
    CHECK_THROWS_WITH(render("é {{ 'x' + 1 }}"), Catch::StartsWith("t.jinja:1:"));
    CHECK_THROWS_WITH(render("line\n  {{ raise_exception('no system role') }}"), "t.jinja:2:6: no system role");
    CHECK_THROWS_WITH(render("{{ x | nosuch }}"), "t.jinja:1:6: No filter named 'nosuch'.");
    CHECK_THROWS_WITH(render("{{ 'abc }}"), Catch::StartsWith("t.jinja:1:4: "));
    CHECK_THROWS_WITH(render("{% for x in y %}"), Catch::StartsWith("t.jinja:1:17: unexpected end of template"));
    CHECK_THROWS_AS(render("{{ messages[0].content }}", {{"messages", ordered_json::array()}}), jinja::TemplateError);
    CHECK_THROWS_WITH(render("\xff"), "t.jinja:1:1: invalid UTF-8");
}

TEST_CASE("jinja refuses what it does not implement instead of guessing", "[jinja]") {
    CHECK_THROWS_WITH(render("{% include 'x' %}"), Catch::Contains("unknown tag 'include'"));
    CHECK_THROWS_WITH(render("{% extends 'x' %}"), Catch::Contains("unknown tag 'extends'"));
    CHECK_THROWS_WITH(render("{% for x in y recursive %}{% endfor %}"), Catch::Contains("recursive loops are not supported"));
    CHECK_THROWS_WITH(render("{{ '%s' % 1 }}"), Catch::Contains("not supported"));
    CHECK_THROWS_WITH(render("{{ '\\N{DASH}' }}"), Catch::Contains("not supported"));
}

TEST_CASE("jinja bounds the work memory and stack of an untrusted template", "[jinja]") {
    // Deep nesting is refused when read, not by the stack.
    CHECK_THROWS_WITH(render("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}"), Catch::Contains("nested too deeply"));
    CHECK_THROWS_WITH(render("{{ " + std::string(3000, '[') + " }}"), Catch::StartsWith("t.jinja:1:"));
    std::string ifs;
    for (int i = 0; i < 1000; ++i) ifs += "{% if true %}";
    CHECK_THROWS_WITH(render(ifs), Catch::Contains("nested too deeply"));
    // Runaway macro recursion.
    CHECK_THROWS_WITH(render("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"), Catch::Contains("nested deeper than"));
    // Output size, including text built and thrown away.
    jinja::RenderOptions small;
    small.max_output_bytes = 1000;
    CHECK_THROWS_WITH(render("{% for i in range(100) %}{{ 'x' * 20 }}{% endfor %}", {}, small), Catch::Contains("output larger than 1000 bytes"));
    CHECK_THROWS_WITH(render("{{ 'x' * 1000000000000 }}"), Catch::Contains("too large"));
    // Work: loops inside loops (a smaller budget than the default keeps the test short).
    jinja::RenderOptions few;
    few.max_steps = 200000;
    CHECK_THROWS_WITH(render("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}", {}, few),
                      Catch::Contains("more than 200000 steps"));
    // Values nested through a namespace, and a namespace inside itself.
    CHECK_THROWS_WITH(render("{% set ns = namespace(x=[]) %}{% for i in range(1000) %}{% set ns.x = [ns.x] %}{% endfor %}"), Catch::Contains("nested deeper than"));
    CHECK_THROWS_WITH(render("{% set ns = namespace() %}{% set ns.me = ns %}"), Catch::Contains("namespace cannot be put"));
    CHECK_THROWS_WITH(render("{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", {}, small),
                      Catch::Contains("a string larger than 1000 bytes"));
    CHECK_THROWS_WITH(render("{% set ns = namespace(x=[1]) %}{% for i in range(40) %}{% set ns.x = ns.x + ns.x %}{% endfor %}"),
                      Catch::Contains("(a template is bounded)"));
    CHECK_THROWS_WITH(render("{% set ns = namespace(x=range(100000)|list) %}{% for i in range(100000) %}{{ ns.x | length }}{% endfor %}", {}, few),
                      Catch::Contains("steps"));
    CHECK_THROWS_WITH(render("{{ 9223372036854775807 + 1 }}"), Catch::Contains("integer overflow"));
    CHECK_THROWS_WITH(render("{{ 1 // 0 }}"), Catch::Contains("by zero"));
    // Integers beyond 64 bits, as a literal and as an attribute index (x.N; found by
    // fuzz_chat_template, where it escaped as std::out_of_range from stoll).
    CHECK_THROWS_WITH(render("{{ 99999999999999999999 }}"), "t.jinja:1:4: integer literal too large: 99999999999999999999");
    CHECK_THROWS_WITH(render("{{ x.99999999999999999999 }}"), "t.jinja:1:6: integer literal too large: 99999999999999999999");
    CHECK(render("{{ x.1 }}", {{"x", ordered_json::array({"a", "b"})}}) == "b");
}

TEST_CASE("jinja survives random templates", "[jinja]") {
    // Fragments of template syntax shuffled together: any outcome but a crash or a hang is fine.
    const char* pieces[] = {"{{", "}}", "{%", "%}", "{#", "#}", "-", "+", "if", "for", "x", "in", "endif", "endfor", "set",
                            "=", "(", ")", "[", "]", "{", "}", "'s'", "\"", "1", "2.5", "|", "trim", "is", "defined", ",", ":",
                            ".", "loop", "macro", "endmacro", "call", "caller", "~", "*", "**", "//", "not", "and", "\n", " ",
                            "namespace", "ns", "else", "elif", "messages", "range", "raw", "endraw", "é", "\\", "break"};
    std::mt19937 rng(18);
    const ordered_json vars = {{"messages", ordered_json::array({{{"role", "user"}, {"content", "hi"}}})}, {"x", 3}};
    jinja::RenderOptions o;
    o.max_steps = 100000;
    int ok = 0;
    for (int iter = 0; iter < 3000; ++iter) {
        std::string src;
        const int n = int(rng() % 40);
        for (int k = 0; k < n; ++k) src += pieces[rng() % (sizeof pieces / sizeof *pieces)];
        try {
            render(src, vars, o);
            ++ok;
        } catch (const jinja::TemplateError&) {
        }
    }
    CHECK(ok > 0);
}

TEST_CASE("strftime_now reads the clock it is given", "[jinja]") {
    jinja::RenderOptions o;
    o.now = jinja::parse_iso8601("2024-02-29T23:59:58");
    REQUIRE(o.now);
    CHECK(render("{{ strftime_now('%d %b %Y %H:%M:%S %A') }}", {}, o) == "29 Feb 2024 23:59:58 Thursday");
    CHECK_FALSE(jinja::parse_iso8601("2025-02-30T00:00:00"));
    CHECK_FALSE(jinja::parse_iso8601("yesterday"));
    CHECK(jinja::parse_iso8601("2025-01-15"));
}
