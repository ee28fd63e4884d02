// The Jinja engine against Python's jinja2 in transformers' environment: every case of the
// real chat templates (tests/data/chat_templates, rendered by jinja2 3.1.2) and the engine's
// own cases (tests/data/jinja/engine_cases.json, rendered by Debian's python3-jinja2 3.1.6).
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "journey/chat/messages.h"
#include "journey/chat/jinja/template.h"

using namespace journey;
using nlohmann::ordered_json;

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

ordered_json load_fixture(const std::string& rel) { return ordered_json::parse(slurp(std::string(JOURNEY_TEST_DATA) + "/" + rel)); }

jinja::RenderOptions frozen_clock() {
    jinja::RenderOptions o;
    o.now = jinja::parse_iso8601("2025-01-15T10:30:00");
    return o;
}

}  // namespace

TEST_CASE("chat templates of real models render byte-identical to jinja2", "[jinja][chat_templates]") {
    const ordered_json cases = load_fixture("chat_templates/cases.json");
    REQUIRE(cases["cases"].size() == 100);
    int rendered = 0, errors = 0;
    for (const auto& c : cases["cases"]) {
        const std::string file = c["template_file"];
        INFO(c["template"].get<std::string>() << " / " << c["conversation"].get<std::string>()
             << " / add_generation_prompt=" << c["add_generation_prompt"]);
        const jinja::Template t(slurp(std::string(JOURNEY_TEST_DATA) + "/chat_templates/" + file), file);
        ordered_json vars = c["variables"];
        vars["messages"] = c["messages"];
        vars["add_generation_prompt"] = c["add_generation_prompt"];
        if (c.contains("rendered")) {
            CHECK(t.render(vars, frozen_clock()) == c["rendered"].get<std::string>());
            ++rendered;
        } else {
            // raise_exception: the template's own message, after file:line:col.
            const std::string msg = c["error"]["message"];
            CHECK_THROWS_WITH(t.render(vars, frozen_clock()), Catch::Contains(file + ":") && Catch::EndsWith(": " + msg));
            ++errors;
        }
    }
    CHECK(rendered == 98);
    CHECK(errors == 2);
}

TEST_CASE("the engine's cases render as jinja2 renders them", "[jinja]") {
    const ordered_json cases = load_fixture("jinja/engine_cases.json");
    REQUIRE(cases["cases"].size() > 100);
    for (const auto& c : cases["cases"]) {
        const std::string name = c["name"];
        INFO(name << ": " << c["template"].get<std::string>());
        if (c.contains("rendered")) {
            const jinja::Template t(c["template"].get<std::string>(), name);
            CHECK(t.render(c["variables"], frozen_clock()) == c["rendered"].get<std::string>());
            continue;
        }
        const auto& err = c["error"];
        // Jinja reports a syntax error's line: ours must name the same one.
        std::string where = name + ":";
        if (err.contains("line") && err["type"] == "TemplateSyntaxError") where += std::to_string(err["line"].get<int>()) + ":";
        auto run = [&] { jinja::Template(c["template"].get<std::string>(), name).render(c["variables"], frozen_clock()); };
        CHECK_THROWS_AS(run(), jinja::TemplateError);
        CHECK_THROWS_WITH(run(), Catch::StartsWith(where));
        if (err["type"] == "TemplateError" || err["type"] == "UndefinedError" || err["type"] == "TypeError" ||
            err["type"] == "OverflowError" || err["type"] == "SecurityError")
            CHECK_THROWS_WITH(run(), Catch::EndsWith(": " + err["message"].get<std::string>()));
    }
}
