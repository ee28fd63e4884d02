// journey template as a template author runs it: exact output, the clock, variables, errors.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "files.h"

using journey::test::data_dir;
using journey::test::run_journey;
using journey::test::TempDir;

namespace {

nlohmann::ordered_json fixture_case(const std::string& tmpl, const std::string& conversation, bool gen) {
    std::ifstream in(data_dir() + "/chat_templates/cases.json");
    const auto all = nlohmann::ordered_json::parse(in);
    for (const auto& c : all["cases"])
        if (c["template"] == tmpl && c["conversation"] == conversation && c["add_generation_prompt"] == gen) return c;
    FAIL("no fixture case " << tmpl << " " << conversation);
    return {};
}

}  // namespace

TEST_CASE("template renders a real chat template exactly, with the clock fixed", "[cli][template]") {
    TempDir dir;
    // Llama 3.2 puts today's date in its system header: strftime_now reads --now.
    const auto c = fixture_case("llama-3.2-3b-instruct", "user_assistant_user", true);
    const std::string messages = dir.write("m.json", c["messages"].dump());
    auto r = run_journey({"template", data_dir() + "/chat_templates/templates/llama-3.2-3b-instruct.jinja", "--messages", messages,
                          "--bos-token", c["variables"]["bos_token"], "--eos-token", c["variables"]["eos_token"],
                          "--add-generation-prompt", "--now", "2025-01-15T10:30:00"});
    CHECK(r.exit_code == 0);
    CHECK(r.out == c["rendered"].get<std::string>());  // no newline added
    CHECK(r.err.empty());

    // Messages on stdin, and a switch passed with --var (Qwen3's enable_thinking).
    const auto q = fixture_case("qwen3-0.6b", "user", true);
    std::vector<std::string> args = {"template", data_dir() + "/chat_templates/templates/qwen3-0.6b.jinja", "--messages", "-",
                                     "--add-generation-prompt"};
    for (const auto& [k, v] : q["variables"].items())
        if (k != "bos_token" && k != "eos_token") args.push_back("--var=" + k + "=" + v.dump());
        else args.insert(args.end(), {"--" + std::string(k == "bos_token" ? "bos-token" : "eos-token"), v.get<std::string>()});
    auto s = run_journey(args, q["messages"].dump());
    CHECK(s.exit_code == 0);
    CHECK(s.out == q["rendered"].get<std::string>());

    // A model directory: its template and special tokens, read as chat and convert read them
    // (convert/qwen3's tokenizer_config.json holds the same template and eos/pad tokens).
    auto d = run_journey({"template", data_dir() + "/convert/qwen3", "--messages", "-", "--add-generation-prompt",
                          "--var", "enable_thinking=false"},
                         q["messages"].dump());
    INFO(d.err);
    CHECK(d.exit_code == 0);
    CHECK(d.out == q["rendered"].get<std::string>());
    auto none = run_journey({"template", data_dir() + "/convert/gpt2", "--messages", "-"}, q["messages"].dump());
    CHECK(none.exit_code == 2);
    CHECK(none.err.find("no chat template") != std::string::npos);
}

TEST_CASE("template errors: one line naming file, line and column; exit 2 for the template", "[cli][template]") {
    TempDir dir;
    const std::string messages = dir.write("m.json", R"([{"role": "system", "content": "x"}, {"role": "user", "content": "hi"}])");
    const std::string gemma = data_dir() + "/chat_templates/templates/gemma-2-2b-it.jinja";
    auto r = run_journey({"template", gemma, "--messages", messages, "--bos-token", "<bos>"});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "journey: " + gemma + ":1:59: System role not supported\n");

    auto bad = run_journey({"template", dir.write("bad.jinja", "ok\n{% if x %}\n{{ x | frobnicate }}\n{% endif %}\n{% endfor %}"),
                            "--messages", messages});
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("bad.jinja:5:4: ") != std::string::npos);
    CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);

    auto not_messages = run_journey({"template", gemma, "--messages", dir.write("n.json", R"({"role": "user"})")});
    CHECK(not_messages.exit_code == 3);
    auto bad_now = run_journey({"template", gemma, "--messages", messages, "--now", "tomorrow"});
    CHECK(bad_now.exit_code == 1);
    auto bad_var = run_journey({"template", gemma, "--messages", messages, "--var", "x=not json"});
    CHECK(bad_var.exit_code == 1);
    auto missing = run_journey({"template", dir.path.string() + "/none.jinja", "--messages", messages});
    CHECK(missing.exit_code == 2);
}
