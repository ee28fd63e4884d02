// What a terminal sees (on a pseudo-terminal), and interruption by SIGINT/SIGTERM.
#include <csignal>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "terminal_run.h"

using namespace journey::test;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;

namespace {

std::vector<nlohmann::json> json_lines(const std::string& s, bool& all_complete) {
    std::vector<nlohmann::json> v;
    all_complete = s.empty() || s.ends_with('\n');
    std::istringstream in(s);
    for (std::string line; std::getline(in, line);) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded()) all_complete = false;
        else v.push_back(std::move(j));
    }
    return v;
}

}  // namespace

TEST_CASE("text mode ends with a newline on a terminal, not in a pipe", "[cli][terminal]") {
    const std::vector<std::string> args = {"generate", "-m", gpt2, "-p", "Hi", "-n", "5", "--temp", "0", "-q",
                                           "--ignore-eos"};
    const auto piped = run_journey(args);
    REQUIRE(piped.exit_code == 0);
    REQUIRE(!piped.out.ends_with('\n'));
    const auto tty = run_on_tty(args);
    CHECK(tty.exit_code == 0);
    std::string expected;  // the terminal turns \n into \r\n
    for (char c : piped.out + "\n") expected += c == '\n' ? std::string("\r\n") : std::string(1, c);
    CHECK(tty.screen == expected);
}

TEST_CASE("--logprobs on a terminal: after the text, not inside it", "[cli][terminal]") {
    const auto tty = run_on_tty({"generate", "-m", gpt2, "-p", "Hi", "-n", "4", "--temp", "0", "-q", "--ignore-eos",
                                 "--logprobs"});
    CHECK(tty.exit_code == 0);
    const auto piped = run_journey({"generate", "-m", gpt2, "-p", "Hi", "-n", "4", "--temp", "0", "-q", "--ignore-eos"});
    std::string text;
    for (char c : piped.out) text += c == '\n' ? std::string("\r\n") : std::string(1, c);
    // The whole text first, on its own line, then one [logprob] line per token.
    CHECK(tty.screen.starts_with(text + "\r\n[logprob]"));
    CHECK(std::count(tty.screen.begin(), tty.screen.end(), '[') == 4);
}

TEST_CASE("ignored flags are refused", "[cli][output]") {
    auto t = run_journey({"generate", "-m", gpt2, "-p", "Hi", "--top-logprobs", "3"});
    CHECK(t.exit_code == 1);
    CHECK_THAT(t.err, Contains("--top-logprobs: text mode shows no alternatives"));
    auto b = run_journey({"generate", "-m", gpt2, "--batch", "-", "--format", "text"}, "Hi\n");
    CHECK(b.exit_code == 1);
    CHECK_THAT(b.err, Contains("--format text: --batch writes one JSON object per line"));
    auto l = run_journey({"generate", "-m", gpt2, "-p", "Hi", "--json", "--logprobs"});
    CHECK(l.exit_code == 1);
}

TEST_CASE("SIGINT during generate --format jsonl: complete lines, a done record, exit 130", "[cli][signal]") {
    const auto r = run_and_signal({"generate", "-m", gpt2, "-p", "Hi", "-n", "-1", "--ignore-eos", "--format", "jsonl",
                                   "--seed", "1"},
                                  SIGINT, 3);
    CHECK(r.exit_code == 130);
    bool complete = false;
    const auto lines = json_lines(r.out, complete);
    CHECK(complete);
    REQUIRE(lines.size() >= 4);
    CHECK(lines.back()["type"] == "done");
    CHECK(lines.back()["finish_reason"] == "interrupted");
    CHECK(lines.back()["usage"]["completion_tokens"] == lines.size() - 1);
    CHECK_THAT(r.err, Contains("journey: generate: interrupted after"));
}

TEST_CASE("SIGTERM exits 143; --batch lines stay whole; a second signal exits at once", "[cli][signal]") {
    const auto t = run_and_signal({"generate", "-m", gpt2, "-p", "Hi", "-n", "-1", "--ignore-eos", "--json"}, SIGTERM, 0);
    CHECK(t.exit_code == 143);
    bool complete = false;
    const auto doc = json_lines(t.out, complete);
    CHECK(complete);
    REQUIRE(doc.size() == 1);
    CHECK(doc[0]["finish_reason"] == "interrupted");

    std::string prompts;
    for (int i = 0; i < 200; ++i) prompts += "Hello number " + std::to_string(i) + "\n";
    char tmpl[] = "/tmp/journey-batch-XXXXXX";
    const int fd = mkstemp(tmpl);
    REQUIRE(write(fd, prompts.data(), prompts.size()) == ssize_t(prompts.size()));
    close(fd);
    const auto b = run_and_signal({"generate", "-m", gpt2, "--batch", tmpl, "-n", "8", "-q"}, SIGINT, 2);
    std::remove(tmpl);
    CHECK(b.exit_code == 130);
    const auto rows = json_lines(b.out, complete);
    CHECK(complete);
    CHECK(rows.size() < 200);
    for (size_t i = 0; i < rows.size(); ++i) CHECK(rows[i]["line"] == i + 1);

    const auto twice = run_and_signal({"generate", "-m", gpt2, "-p", "Hi", "-n", "-1", "--ignore-eos"}, SIGINT, 0, true);
    CHECK(twice.exit_code == 130);
}
