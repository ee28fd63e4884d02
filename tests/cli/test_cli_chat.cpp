// journey chat and the chat format on a tiny random Llama directory built here (no shared
// data): a chat template in tokenizer_config.json, three end tokens in generation_config.json.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "journey/text/tokenizer.h"
#include "hf_tokenizer_json.h"
#include "safetensors_writer.h"

using journey::test::run_journey;
using nlohmann::json;

namespace {

// Zephyr's layout with this vocabulary's own end token.
const char* kTemplate =
    "{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}</s>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}";

struct TinyChatModel {
    std::filesystem::path dir;
    TinyChatModel() {
        char t[] = "/tmp/journey-chat-XXXXXX";
        dir = mkdtemp(t);
        // Vocabulary: <unk> <s> </s>, the 256 byte pieces, "▁" and the letters (SentencePiece BPE).
        std::vector<std::string> pieces = {"<unk>", "<s>", "</s>"};
        std::vector<float> scores = {0, 0, 0};
        for (int b = 0; b < 256; ++b) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "<0x%02X>", b);
            pieces.push_back(buf);
            scores.push_back(0);
        }
        pieces.push_back("\xe2\x96\x81");
        scores.push_back(-1);
        for (char c = 'a'; c <= 'z'; ++c) {
            pieces.push_back(std::string(1, c));
            scores.push_back(-2);
        }
        const int V = int(pieces.size()), C = 32, F = 64, H = 2;
        std::ofstream(dir / "tokenizer.json") << journey::test::llama_tokenizer_json(pieces, scores).dump();
        std::mt19937 rng(18);
        std::normal_distribution<float> normal(0.0f, 0.5f);
        std::vector<journey::test::FakeTensor> ts;
        auto add = [&](const std::string& name, std::vector<int64_t> shape, bool ones = false) {
            size_t n = 1;
            for (int64_t d : shape) n *= size_t(d);
            std::vector<float> v(n);
            for (float& x : v) x = ones ? 1.0f : normal(rng);
            ts.push_back({name, "F32", shape, v, ""});
        };
        add("model.embed_tokens.weight", {V, C});
        add("model.norm.weight", {C}, true);
        add("lm_head.weight", {V, C});
        const std::string l = "model.layers.0.";
        add(l + "input_layernorm.weight", {C}, true);
        for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"}) add(l + "self_attn." + p + ".weight", {C, C});
        add(l + "post_attention_layernorm.weight", {C}, true);
        add(l + "mlp.gate_proj.weight", {F, C});
        add(l + "mlp.up_proj.weight", {F, C});
        add(l + "mlp.down_proj.weight", {C, F});
        journey::test::write_safetensors(dir / "model.safetensors", ts);
        std::ofstream(dir / "config.json") << json{{"model_type", "llama"}, {"architectures", {"LlamaForCausalLM"}},
                                                   {"hidden_size", C}, {"intermediate_size", F}, {"num_hidden_layers", 1},
                                                   {"num_attention_heads", H}, {"num_key_value_heads", H},
                                                   {"max_position_embeddings", 256}, {"vocab_size", V},
                                                   {"rms_norm_eps", 1e-5}, {"rope_theta", 10000.0}, {"hidden_act", "silu"},
                                                   {"tie_word_embeddings", false}}.dump();
        std::ofstream(dir / "tokenizer_config.json")
            << json{{"bos_token", "<s>"}, {"eos_token", {{"content", "</s>"}}}, {"chat_template", kTemplate}}.dump();
        // Three end tokens, as Llama 3 Instruct lists them (here: </s>, "z" and "q").
        std::ofstream(dir / "generation_config.json") << json{{"eos_token_id", {2, 260 + 25, 260 + 16}}}.dump();
    }
    ~TinyChatModel() { std::filesystem::remove_all(dir); }
    std::string path() const { return dir.string(); }
    std::string write(const std::string& name, const std::string& text) const {
        std::ofstream(dir / name) << text;
        return (dir / name).string();
    }
};

}  // namespace

TEST_CASE("chat --show-prompt renders the model's template and its ids", "[cli][chat]") {
    TinyChatModel m;
    const std::string msgs = m.write("m.json", R"([{"role": "user", "content": "hi"}])");
    auto r = run_journey({"chat", "-m", m.path(), "--messages", msgs, "--show-prompt", "--system", "be"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const std::string text = "<|system|>\nbe</s>\n<|user|>\nhi</s>\n<|assistant|>\n";
    REQUIRE(r.out.substr(0, text.size() + 1) == text + "\n");
    // The ids are the tokenizer's for that text (</s> recognised as the special token 2), BOS first.
    auto ids = run_journey({"tokenize", "--tokenizer-json", m.path() + "/tokenizer.json", "-p", text});
    INFO(ids.err);
    REQUIRE(ids.exit_code == 0);
    std::string line = r.out.substr(text.size() + 1);
    CHECK(line.rfind("1 ", 0) == 0);
    CHECK(line.find(" 2 ") != std::string::npos);

    // --chat-template overrides the model's.
    auto o = run_journey({"chat", "-m", m.path(), "--messages", msgs, "--show-prompt", "--json", "--chat-template",
                          m.write("t.jinja", "[{{ messages[0].content }}]")});
    REQUIRE(o.exit_code == 0);
    CHECK(json::parse(o.out)["prompt"] == "[hi]");
}

TEST_CASE("chat --messages writes the reply and stops at every end token", "[cli][chat]") {
    TinyChatModel m;
    const std::string msgs = m.write("m.json", R"([{"role": "user", "content": "hello"}])");
    auto r = run_journey({"chat", "-m", m.path(), "--messages", msgs, "--json", "--seed", "3", "-n", "40"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const json j = json::parse(r.out);
    CHECK(j["role"] == "assistant");
    const std::string content = j["content"];
    CHECK(j["usage"]["prompt_tokens"].get<int>() > 5);
    CHECK(j["usage"]["completion_tokens"].get<int>() <= 40);
    // Neither "z" nor "q" (end tokens from generation_config.json) can appear inside the reply.
    CHECK(content.find('z') == std::string::npos);
    CHECK(content.find('q') == std::string::npos);
    if (j["finish_reason"] == "eos") CHECK(j["usage"]["completion_tokens"].get<int>() >= 1);

    // Text mode from stdin gives the same reply for the same seed.
    auto t = run_journey({"chat", "-m", m.path(), "--messages", "-", "--seed", "3", "-n", "40"}, R"([{"role": "user", "content": "hello"}])");
    REQUIRE(t.exit_code == 0);
    CHECK(journey::valid_utf8(t.out) == content);  // JSON carries the text UTF-8-repaired

    auto info = run_journey({"info", "-m", m.path(), "--json"});
    REQUIRE(info.exit_code == 0);
    CHECK(json::parse(info.out)["end_tokens"] == json::array({2, 285, 276}));

    auto none = run_journey({"chat", "-m", m.path(), "--messages", m.write("bad.json", "{}")});
    CHECK(none.exit_code == 3);
    auto bad_tmpl = run_journey({"chat", "-m", m.path(), "--messages", msgs, "--chat-template", m.write("b.jinja", "{% if %}")});
    CHECK(bad_tmpl.exit_code == 2);
}

TEST_CASE("interactive chat on a terminal keeps the KV cache across turns", "[cli][chat][pty]") {
    TinyChatModel m;
    const std::string err_file = (m.dir / "stderr.txt").string();
    int master = -1;
    const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const int fd = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        execl(JOURNEY_BIN, JOURNEY_BIN, "-v", "chat", "-m", m.path().c_str(), "--seed", "5", "-n", "12", "--system", "be kind",
              static_cast<char*>(nullptr));
        _exit(127);
    }
    std::string screen;
    // Reads what the terminal shows until `what` appears (or a few seconds pass).
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
    type("hello there\r");
    REQUIRE(read_until("> ", at) != std::string::npos);
    at = screen.size();
    type("and again\r");
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

    std::ifstream in(err_file);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string err = ss.str();
    INFO(err);
    // "chat turn: N prompt tokens, R reused from the cache, E evaluated", once per turn.
    std::vector<std::array<int, 3>> turns;
    for (size_t p = err.find("chat turn: "); p != std::string::npos; p = err.find("chat turn: ", p + 1)) {
        std::array<int, 3> t{};
        REQUIRE(std::sscanf(err.c_str() + p, "chat turn: %d prompt tokens, %d reused from the cache, %d evaluated", &t[0], &t[1], &t[2]) == 3);
        turns.push_back(t);
    }
    REQUIRE(turns.size() == 2);
    CHECK(turns[0][1] == 0);
    CHECK(turns[0][2] == turns[0][0]);
    // The second turn reuses at least the whole first prompt and evaluates only the rest.
    CHECK(turns[1][1] >= turns[0][0]);
    CHECK(turns[1][2] == turns[1][0] - turns[1][1]);
    CHECK(turns[1][2] < turns[1][0] - turns[0][0] + 8);
}

TEST_CASE("generate --chat writes -p as one user message in the template", "[cli][chat]") {
    TinyChatModel m;
    const std::string msgs = m.write("m.json", R"([{"role": "user", "content": "hello"}])");
    auto c = run_journey({"chat", "-m", m.path(), "--messages", msgs, "--json", "--seed", "3", "-n", "20"});
    auto g = run_journey({"generate", "-m", m.path(), "--chat", "-p", "hello", "--seed", "3", "-n", "20", "--format", "json"});
    INFO(g.err);
    REQUIRE(c.exit_code == 0);
    REQUIRE(g.exit_code == 0);
    const json cj = json::parse(c.out), gj = json::parse(g.out);
    CHECK(gj["text"] == cj["content"]);
    CHECK(gj["finish_reason"] == cj["finish_reason"]);
}
