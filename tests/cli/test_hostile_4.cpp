// Hostile input, round 3 continued (issue 40): what the first pass left. Template values shared
// rather than copied, lists and strings bounded while they are built, prompts refused before
// they are tokenized, convert never writing a file journey would refuse, convert's JSON type
// errors named, tokenize's BOS, chat's slash commands. Each answer: one line on stderr, the exit
// code of its kind, bounded time and memory, nothing left behind.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "asan.h"
#include "cli_run.h"
#include "files.h"
#include "hostile.h"
#include "safetensors_writer.h"

using namespace journey::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::string kLlamaGguf = data_dir() + "/models/llama3/llama3-F32.gguf";

void check_refused4(const RunResult& r, int exit_code, const std::string& names, const std::string& problem) {
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == exit_code);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.size() < 1100);
    CHECK(r.err.find("json.exception") == std::string::npos);
    CHECK_THAT(r.err, Contains(names) && Contains(problem));
}

RunResult render_text(const TempDir& d, const std::string& text, long cpu_seconds = 10) {
    write_file(d / "t.jinja", text);
    return run_journey_limited({"template", (d / "t.jinja").string(), "--messages", (kHostile / "messages_one.json").string()},
                               kLimitMib, "", JOURNEY_TEST_ASAN ? 9 * cpu_seconds : cpu_seconds);
}

}  // namespace

TEST_CASE("hostile4: a 30 MB template string read 100,000 times is shared, not copied", "[hostile4]") {
    // Each lookup copied the string: 3 TB of copying for a template of one line.
    TempDir d;
    const RunResult r = render_text(d, "{%- set s = 'a' * 30000000 -%}{%- for i in range(100000) -%}{%- if s -%}{%- endif -%}"
                                  "{%- endfor -%}{{ s|length }}");
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "30000000");
}

TEST_CASE("hostile4: split, join and printing stop at their bound while they build", "[hostile4]") {
    TempDir d;
    // 15 million pieces: split made them all (2 GB, 15 s) before the list limit looked.
    check_refused4(render_text(d, "{{ ('a,' * 15000000).split(',')|length }}"), 2, "t.jinja", "split: a list of more than 1048576 items");
    check_refused4(render_text(d, "{{ ('a,' * 15000000).rsplit(',')|length }}"), 2, "t.jinja", "rsplit: a list of more than 1048576 items");
    check_refused4(render_text(d, "{{ ('a\\n' * 15000000).splitlines()|length }}"), 2, "t.jinja", "splitlines: a list of more than");
    // 10^6 items joined by 1000 bytes: 1.1 GB before the string limit looked.
    const RunResult j = render_text(d, "{{ (['x' * 100] * 1000000)|join('y' * 1000) }}");
    check_refused4(j, 2, "t.jinja", "join: a string of more than 67108864 bytes");
    CHECK(j.max_rss_kib < 512 * 1024);
    check_refused4(render_text(d, "{{ ('y' * 1000).join(['x' * 100] * 1000000) }}"), 2, "t.jinja", "join: a string of more than");
    // A list shared with itself 40 times, printed: each level's text was copied into its
    // parent's (11 s); now appended in place.
    check_refused4(render_text(d, "{%- set ns = namespace(l=[1]) -%}{%- for i in range(40) -%}{%- set ns.l = [ns.l, ns.l] -%}{%- endfor -%}"
                            "{{ ns.l }}"),
                  2, "t.jinja", "a value whose text is larger than 67108864 bytes");
    // rsplit and rfind search linearly, and give Python's answers.
    const RunResult ok = render_text(d, "{%- set s = 'a' * 1000000 -%}{{ s.rfind('a' * 5000 + 'b') }} {{ 'a,b,,c'.rsplit(',', 1) }} "
                                   "{{ 'a--b--c'.rsplit('--') }} {{ 'xyx'.rfind('x') }}");
    INFO(ok.err);
    CHECK(ok.exit_code == 0);
    CHECK(ok.out == "-1 ['a,b,', 'c'] ['a', 'b', 'c'] 2");  // python3: the same
}

TEST_CASE("hostile4: a prompt that cannot fit the context is refused before it is tokenized", "[hostile4]") {
    TempDir d;
    std::string text;
    for (int i = 0; i < 1700000; ++i) text += "hello ";
    write_file(d / "p.txt", text);
    // Tokenizing 10 MB first took 25x its size in memory and seconds, to say it does not fit.
    const RunResult r = run_journey_limited({"next", "-m", kLlamaGguf, "-f", (d / "p.txt").string()}, kLimitMib, "", kCpuSeconds);
    check_refused4(r, 3, "prompt: 10200000 bytes", "more than the context in use of 4096 tokens can hold");
    // Under AddressSanitizer freed blocks wait in its 256 MiB quarantine and every byte has a
    // shadow byte, so the peak is higher there without the program holding more.
    CHECK(r.max_rss_kib < (JOURNEY_TEST_ASAN ? 640 : 256) * 1024);
    // A prompt that never ends is read up to its bound.
    check_refused4(run_journey_limited({"next", "-m", kLlamaGguf, "-f", "/dev/zero"}, kLimitMib, "", kCpuSeconds), 3,
                  "--file /dev/zero", "larger than 256 MiB");
}

TEST_CASE("hostile4: convert never writes a file journey refuses to load", "[hostile4]") {
    // num_hidden_layers 10^9 with the tensors of 2 layers: the GGUF was written, and refused by
    // every command that loaded it. Now the file is loaded before it is renamed into place.
    TempDir d;
    const fs::path dir = llama_dir(d);
    nlohmann::json config = nlohmann::json::parse(slurp(dir / "config.json"));
    config["num_hidden_layers"] = 1000000000;
    write_file(dir / "config.json", config.dump());
    write_file(d / "out.gguf", "the previous output");
    const RunResult r = run_journey_limited({"convert", "-m", dir.string(), "-o", (d / "out.gguf").string(), "--type", "f32"},
                                            kLimitMib, "", kCpuSeconds);
    check_refused4(r, 2, "refusing to write " + (d / "out.gguf").string(), "a file journey could not load");
    CHECK(r.err.find(".tmp.") == std::string::npos);  // the loader's message names the output, not the temporary file
    CHECK(slurp(d / "out.gguf") == "the previous output");
    CHECK(listing(d.path) == std::vector<std::string>{"hf", "out.gguf"});
}

TEST_CASE("hostile4: a tokenizer file value of the wrong type names the file and the key", "[hostile4]") {
    // nlohmann's "[json.exception.type_error.302] type must be string, but is number" reached the user.
    TempDir d;
    const fs::path dir = llama_dir(d);
    nlohmann::json tok = nlohmann::json::parse(slurp(dir / "tokenizer.json"));
    const std::string original = tok.dump();
    auto convert = [&] {
        return run_journey_limited({"convert", "-m", dir.string(), "-o", (d / "out.gguf").string(), "--type", "f32"}, kLimitMib, "",
                                   kCpuSeconds);
    };
    tok["post_processor"] = {{"type", 7}};
    write_file(dir / "tokenizer.json", tok.dump());
    check_refused4(convert(), 2, "tokenizer.json", "\"type\" must be a string, not an integer 7");
    tok = nlohmann::json::parse(original);
    tok["added_tokens"] = nlohmann::json::array({{{"id", 5}, {"content", 5}}});
    write_file(dir / "tokenizer.json", tok.dump());
    check_refused4(convert(), 2, "tokenizer.json", "\"content\" must be a string, not an integer 5");
    CHECK(!fs::exists(d / "out.gguf"));
}

TEST_CASE("hostile4: tokenize puts the model's BOS first, as next feeds it; --no-bos leaves it out", "[hostile4]") {
    // The Llama 3 stand-in adds <|begin_of_text|> (id 500, its config's bos_token_id).
    const RunResult with = run_journey({"tokenize", "-m", kLlamaGguf, "-p", "hello", "--json"});
    const RunResult without = run_journey({"tokenize", "-m", kLlamaGguf, "-p", "hello", "--json", "--no-bos"});
    INFO(with.err << without.err);
    REQUIRE(with.exit_code == 0);
    REQUIRE(without.exit_code == 0);
    const auto a = nlohmann::json::parse(with.out), b = nlohmann::json::parse(without.out);
    CHECK(a["added"] == nlohmann::json::array({500}));
    CHECK(b["added"] == nlohmann::json::array());
    std::vector<int> ids = b["ids"].get<std::vector<int>>();
    ids.insert(ids.begin(), 500);
    CHECK(a["ids"].get<std::vector<int>>() == ids);
    // The ids are those next reads: its JSON's prompt ids.
    const RunResult n = run_journey({"next", "-m", kLlamaGguf, "-p", "hello", "--json"});
    REQUIRE(n.exit_code == 0);
    std::vector<int> seen;
    const auto next_doc = nlohmann::json::parse(n.out);
    for (const auto& t : next_doc["prompt_tokens"]) seen.push_back(t["id"].get<int>());
    CHECK(seen == a["ids"].get<std::vector<int>>());
    // A model-running flag means nothing to tokenize.
    const RunResult help = run_journey({"tokenize", "--help"});
    CHECK(help.out.find("--kv-type") == std::string::npos);
    CHECK(help.out.find("--threads") == std::string::npos);
    CHECK(help.out.find("--no-bos") != std::string::npos);
    CHECK(run_journey({"tokenize", "-m", kLlamaGguf, "-p", "x", "-t", "2"}).exit_code == 1);
}

TEST_CASE("hostile4: chat lists its commands on /help and never sends an unknown one to the model", "[hostile4][pty]") {
    TempDir d;
    const std::string err_file = (d / "stderr.txt").string();
    int master = -1;
    const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const int fd = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        execl(JOURNEY_BIN, JOURNEY_BIN, "-v", "chat", "-m", kLlamaGguf.c_str(), "-n", "4", static_cast<char*>(nullptr));
        _exit(127);
    }
    std::string screen;
    auto read_until = [&](const std::string& what, size_t from) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (screen.find(what, from) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
            pollfd p{master, POLLIN, 0};
            if (poll(&p, 1, 100) <= 0) continue;
            char buf[4096];
            const ssize_t n = read(master, buf, sizeof buf);
            if (n <= 0) break;
            screen.append(buf, size_t(n));
        }
        return screen.find(what, from);
    };
    auto type = [&](const std::string& s) { REQUIRE(write(master, s.data(), s.size()) == ssize_t(s.size())); };
    REQUIRE(read_until("> ", 0) != std::string::npos);
    size_t at = screen.size();
    type("/help\r");
    REQUIRE(read_until("> ", at) != std::string::npos);
    at = screen.size();
    type("/nonsense\r");
    REQUIRE(read_until("> ", at) != std::string::npos);
    type("/exit\r");
    int status = 0;
    for (int i = 0; i < 100 && waitpid(pid, &status, WNOHANG) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (waitpid(pid, &status, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    close(master);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    const std::string err = slurp(err_file);
    INFO(err);
    CHECK_THAT(err, Contains("/reset  start a new conversation") && Contains("/exit"));
    CHECK_THAT(err, Contains("unknown command /nonsense (/help lists them)"));
    CHECK(err.find("chat turn:") == std::string::npos);  // neither line reached the model
}

TEST_CASE("hostile4: a model path that is not UTF-8 still gives valid JSON", "[hostile4]") {
    // nlohmann's "[json.exception.type_error.316] invalid UTF-8 byte" ended the run (exit 3).
    TempDir d;
    const fs::path model = d / "\xff\xfe.gguf";
    fs::copy_file(kLlamaGguf, model);
    for (const std::vector<std::string>& cmd : {std::vector<std::string>{"info", "--json"}, {"next", "--json", "-p", "hi"},
                                                 {"tokenize", "--json", "-p", "hi"}}) {
        std::vector<std::string> args = {cmd[0], "-m", model.string()};
        args.insert(args.end(), cmd.begin() + 1, cmd.end());
        const RunResult r = run_journey(args);
        INFO(cmd[0] << ": " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(nlohmann::json::parse(r.out)["model"].get<std::string>().find("\xef\xbf\xbd") != std::string::npos);  // U+FFFD
    }
}
