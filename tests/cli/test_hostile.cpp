// Hostile files and inputs (issue 20): each is refused with the exit code of its kind (2 for a
// file, 1 for a flag), one line on stderr naming the file and the problem, no signal, and
// bounded memory: the CLI runs under a 2 GiB address-space limit. Small reproducers live in
// tests/data/hostile/; large ones (deep nesting, big arrays) are generated here.
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "cli_run.h"
#include "gguf_writer.h"
#include "hostile.h"
#include "journey/text/byte_unicode.h"
#include "safetensors_writer.h"

using namespace journey::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// A usable GPT-2 directory: C = 4, 2 heads, 1 layer, 8 positions; its vocabulary is the 256 byte
// tokens and <|endoftext|>, with no merges. Each test breaks one of its files.
struct ModelDir {
    TempDir dir;
    ModelDir() {
        const int64_t C = 4, F = 16, V = 257, N = 8;
        std::vector<FakeTensor> ts;
        auto add = [&](std::string name, std::vector<int64_t> shape) {
            int64_t n = 1;
            for (auto d : shape) n *= d;
            ts.push_back({name, "F32", shape, std::vector<float>(size_t(n), 0.01f), ""});
        };
        add("wte.weight", {V, C});
        add("wpe.weight", {N, C});
        for (const char* n : {"ln_1", "ln_2"}) add(std::string("h.0.") + n + ".weight", {C}), add(std::string("h.0.") + n + ".bias", {C});
        add("h.0.attn.c_attn.weight", {C, 3 * C});
        add("h.0.attn.c_attn.bias", {3 * C});
        add("h.0.attn.c_proj.weight", {C, C});
        add("h.0.attn.c_proj.bias", {C});
        add("h.0.mlp.c_fc.weight", {C, F});
        add("h.0.mlp.c_fc.bias", {F});
        add("h.0.mlp.c_proj.weight", {F, C});
        add("h.0.mlp.c_proj.bias", {C});
        add("ln_f.weight", {C});
        add("ln_f.bias", {C});
        write_safetensors(dir / "model.safetensors", ts);
        const nlohmann::json config = {{"model_type", "gpt2"}, {"vocab_size", V}, {"n_positions", N}, {"n_embd", C},
                                       {"n_layer", 1}, {"n_head", 2}, {"layer_norm_epsilon", 1e-5}};
        std::ofstream(dir / "config.json") << config.dump();
        nlohmann::json vocab = nlohmann::json::object();
        for (int b = 0; b < 256; ++b) vocab[journey::bytes_to_unicode(std::string(1, char(b)))] = b;
        vocab["<|endoftext|>"] = 256;
        std::ofstream(dir / "vocab.json") << vocab.dump();
        std::ofstream(dir / "merges.txt") << "#version: 0.2\n";
    }
    std::string path() const { return dir.path.string(); }
    fs::path operator/(const std::string& s) const { return dir / s; }
    void put(const std::string& name, const std::string& hostile_file) const {
        fs::copy_file(kHostile / hostile_file, dir / name, fs::copy_options::overwrite_existing);
    }
};

std::string nested(const std::string& open, const std::string& close, size_t depth, const std::string& inner = "1") {
    std::string s;
    s.reserve(depth * (open.size() + close.size()) + inner.size());
    for (size_t i = 0; i < depth; ++i) s += open;
    s += inner;
    for (size_t i = 0; i < depth; ++i) s += close;
    return s;
}

// The refusal every hostile input must get.
void check_refused(const RunResult& r, int exit_code, const std::string& names, const std::string& problem) {
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == exit_code);  // also: no signal (those show as 128 + N)
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.size() < 400);  // one short line, whatever the file held
    CHECK_THAT(r.err, Contains(names) && Contains(problem));
    CHECK(r.max_rss_kib < kLimitMib * 1024);
}

RunResult info(const std::string& model, const std::vector<std::string>& more = {}) {
    std::vector<std::string> args = {"info", "-m", model};
    args.insert(args.end(), more.begin(), more.end());
    return run_journey_limited(args, kLimitMib);
}

}  // namespace

TEST_CASE("hostile: the base model directory is usable", "[hostile]") {
    ModelDir m;
    auto r = info(m.path());
    INFO(r.err);
    CHECK(r.exit_code == 0);
}

TEST_CASE("hostile: JSON nested a million levels is refused before it is built", "[hostile]") {
    ModelDir m;
    write_file(m / "config.json", nested("[", "]", 1000000));
    check_refused(info(m.path()), 2, "config.json", "JSON nested deeper than 256 levels");

    // In a tokenizer.json: the normalizer, and the added tokens.
    write_file(m / "tokenizer.json", "{\"normalizer\": " + nested("{\"a\":", "}", 100000) + "}");
    check_refused(run_journey_limited({"tokenize", "--tokenizer-json", (m / "tokenizer.json").string(), "-p", "x"}, kLimitMib),
                  2, "tokenizer.json", "JSON nested deeper than 256 levels");
    write_file(m / "tokenizer.json", "{\"added_tokens\": [" + nested("[", "]", 100000) + "]}");
    check_refused(run_journey_limited({"tokenize", "--tokenizer-json", (m / "tokenizer.json").string(), "-p", "x"}, kLimitMib),
                  2, "tokenizer.json", "JSON nested deeper than 256 levels");

    // A safetensors header, and the sharded index.
    ModelDir w;
    write_safetensors(w / "model.safetensors", nested("{\"a\":", "}", 100000), "");
    check_refused(info(w.path()), 2, "model.safetensors", "JSON nested deeper than 256 levels");
    fs::remove(w / "model.safetensors");
    write_file(w / "model.safetensors.index.json", nested("[", "]", 300));
    check_refused(info(w.path()), 2, "model.safetensors.index.json", "JSON nested deeper than 256 levels");
}

TEST_CASE("hostile: nesting up to the limit is still read", "[hostile]") {
    ModelDir m;
    nlohmann::json config = nlohmann::json::parse(std::ifstream(m / "config.json"));
    config["deep"] = nlohmann::json::parse(nested("[", "]", 255));  // 256 levels with the top object
    write_file(m / "config.json", config.dump());
    auto r = info(m.path());
    INFO(r.err);
    CHECK(r.exit_code == 0);
}

TEST_CASE("hostile: a value of the wrong type names the file and the key", "[hostile]") {
    ModelDir m;
    m.put("config.json", "config_activation_number.json");
    check_refused(info(m.path()), 2, "config.json", "\"activation_function\" must be a string, not an integer 5");
    m.put("config.json", "config_tie_yes.json");
    check_refused(info(m.path()), 2, "config.json", "\"tie_word_embeddings\" must be a boolean, not a string");

    auto tokenize = [](const std::string& file) {
        return run_journey_limited({"tokenize", "--tokenizer-json", (kHostile / file).string(), "-p", "x"}, kLimitMib);
    };
    check_refused(tokenize("tokenizer_add_prefix_space_no.json"), 2, "tokenizer_add_prefix_space_no.json",
                  "\"add_prefix_space\" is not a boolean");
    check_refused(tokenize("tokenizer_special_number.json"), 2, "tokenizer_special_number.json",
                  "\"special\" must be a boolean, not an integer");
    // A root that is not an object (found by fuzz_tokenizer_json: a bare number reached
    // nlohmann's value() and its type_error escaped).
    check_refused(tokenize("tokenizer_root_number.json"), 2, "tokenizer_root_number.json", "not a JSON object");
}

TEST_CASE("hostile: configurations the math does not admit are refused", "[hostile]") {
    ModelDir m;
    m.put("config.json", "config_eps_1e30.json");
    check_refused(info(m.path()), 2, "config.json", "norm epsilon");
    m.put("config.json", "config_llama_theta_zero.json");
    check_refused(info(m.path()), 2, "config.json", "rope theta");
    m.put("config.json", "config_llama_theta_negative.json");
    check_refused(info(m.path()), 2, "config.json", "rope theta");
}

TEST_CASE("hostile: a layer count the file cannot hold allocates nothing", "[hostile]") {
    ModelDir m;
    m.put("config.json", "config_n_layer_2p30.json");
    check_refused(info(m.path()), 2, "model.safetensors", "1073741824 layers but the file holds only 16 tensors");
    m.put("config.json", "config_n_layer_5e6.json");
    check_refused(info(m.path()), 2, "model.safetensors", "5000000 layers but the file holds only 16 tensors");
}

TEST_CASE("hostile: a safetensors shape whose product overflows says so", "[hostile]") {
    ModelDir m;
    m.put("model.safetensors", "shape_overflow.safetensors");
    check_refused(info(m.path()), 2, "model.safetensors", "overflows");
}

TEST_CASE("hostile: a FIFO, a device or a directory is never waited on or read", "[hostile]") {
    ModelDir m;
    REQUIRE(mkfifo((m / "model.gguf").c_str(), 0600) == 0);
    check_refused(info((m / "model.gguf").string()), 2, "model.gguf", "a FIFO, not a regular file");
    fs::remove(m / "config.json");
    REQUIRE(mkfifo((m / "config.json").c_str(), 0600) == 0);
    check_refused(info(m.path()), 2, "config.json", "a FIFO, not a regular file");
    REQUIRE(mkfifo((m / "fifo.json").c_str(), 0600) == 0);
    check_refused(run_journey_limited({"tokenize", "--tokenizer-json", (m / "fifo.json").string(), "-p", "x"}, kLimitMib),
                  2, "fifo.json", "a FIFO, not a regular file");
    check_refused(run_journey_limited({"tokenize", "--tokenizer-json", "/dev/zero", "-p", "x"}, kLimitMib), 2,
                  "/dev/zero", "a device, not a regular file");
    check_refused(run_journey_limited({"tokenize", "--vocab", "/dev/zero", "--merges", "/dev/null", "-p", "x"}, kLimitMib),
                  2, "/dev/zero", "a device, not a regular file");
    check_refused(run_journey_limited({"tokenize", "--tokenizer-json", m.path(), "-p", "x"}, kLimitMib), 2, m.path(),
                  "a directory, not a regular file");
}

TEST_CASE("hostile: -t beyond a sane multiple of the cores is a usage error", "[hostile]") {
    ModelDir m;
    check_refused(info(m.path(), {"-t", "100000"}), 1, "-t 100000", "at most");
}

TEST_CASE("hostile: messages that echo input are cut short", "[hostile]") {
    ModelDir m;
    const std::string long_token(20000, 'a');
    write_file(m / "merges.txt", "#version: 0.2\n" + long_token + "\n");
    check_refused(run_journey_limited({"tokenize", "-m", m.path(), "-p", "x"}, kLimitMib), 2, "merges.txt:2",
                  "(20000 bytes)");
    write_file(m / "tokenizer.json",
          "{\"pre_tokenizer\": {\"type\": \"ByteLevel\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {\"" + long_token +
              "\": -1}, \"merges\": []}}");
    check_refused(run_journey_limited({"tokenize", "--tokenizer-json", (m / "tokenizer.json").string(), "-p", "x"}, kLimitMib),
                  2, "tokenizer.json", "(20000 bytes)");
    write_file(m / "tokenizer.json", "{\"model\": \"" + long_token + "\" x}");
    check_refused(run_journey_limited({"tokenize", "--tokenizer-json", (m / "tokenizer.json").string(), "-p", "x"}, kLimitMib),
                  2, "tokenizer.json", "invalid JSON");
}

TEST_CASE("hostile: a --batch line that is not UTF-8 gets an error object, the run goes on", "[hostile]") {
    ModelDir m;
    auto r = run_journey_limited({"next", "-m", m.path(), "--batch", "-", "--top-k", "1"}, kLimitMib, "a\n\xff\xfe b\nc\n");
    INFO(r.err);
    CHECK(r.exit_code == 3);  // some prompts failed
    std::vector<nlohmann::json> lines;
    std::istringstream out(r.out);
    for (std::string line; std::getline(out, line);) lines.push_back(nlohmann::json::parse(line));
    REQUIRE(lines.size() == 3);
    CHECK_FALSE(lines[0].contains("error"));
    CHECK_THAT(lines[1].value("error", ""), Contains("not valid UTF-8"));
    CHECK_FALSE(lines[2].contains("error"));
}

TEST_CASE("hostile: GGUF headers that claim more than the file holds", "[hostile]") {
    // A GPT-2 GGUF: C = 4, 1 layer, its tokenizer the 256 byte tokens, then the hostile key.
    auto gguf = [](uint32_t block_count, const std::function<void(GgufBuilder&)>& more) {
        GgufBuilder b;
        b.kv_str("general.architecture", "gpt2")
            .kv_u32("gpt2.embedding_length", 4)
            .kv_u32("gpt2.block_count", block_count)
            .kv_u32("gpt2.feed_forward_length", 16)
            .kv_u32("gpt2.context_length", 8)
            .kv_u32("gpt2.attention.head_count", 2)
            .kv_f32("gpt2.attention.layer_norm_epsilon", 1e-5f)
            .kv_str("tokenizer.ggml.model", "gpt2");
        std::vector<std::string> tokens;
        for (int c = 0; c < 256; ++c) tokens.push_back(journey::bytes_to_unicode(std::string(1, char(c))));
        b.kv_strs("tokenizer.ggml.tokens", tokens).kv_strs("tokenizer.ggml.merges", {});
        more(b);
        b.tensor_f32("token_embd.weight", {4, 256});
        return b.build();
    };
    const fs::path many_layers = write_temp("hostile_block_count.gguf", gguf(1u << 30, [](GgufBuilder&) {}));
    check_refused(info(many_layers.string()), 2, "hostile_block_count.gguf", "1073741824 layers but the file holds only");

    // 16 MB of u8 in one array: 16M JSON values (256 MB+) if it were expanded.
    journey::test::Bytes big;
    big.u32(uint32_t(journey::gguf::ValueType::UINT8)).u64(16u << 20);
    big.buf.append(16u << 20, '\1');
    const fs::path big_array = write_temp("hostile_array.gguf", gguf(1, [&](GgufBuilder& b) {
        b.kv_raw("big", journey::gguf::ValueType::ARRAY, big);
    }));
    check_refused(info(big_array.string()), 2, "hostile_array.gguf", "values in all");
}

namespace {

// A usable 1-layer Llama directory (C = 4, 2 heads, FFN 16) with ModelDir's byte-level tokenizer;
// config.json is the hostile file `config`.
struct LlamaDir {
    ModelDir base;  // for its vocab.json and merges.txt
    LlamaDir(const std::string& config) {
        const int64_t C = 4, F = 16, V = 257;
        std::vector<FakeTensor> ts;
        auto add = [&](std::string name, std::vector<int64_t> shape) {
            int64_t n = 1;
            for (auto d : shape) n *= d;
            ts.push_back({name, "F32", shape, std::vector<float>(size_t(n), 0.01f), ""});
        };
        add("model.embed_tokens.weight", {V, C});
        add("lm_head.weight", {V, C});
        add("model.norm.weight", {C});
        const std::string l = "model.layers.0.";
        add(l + "input_layernorm.weight", {C});
        add(l + "post_attention_layernorm.weight", {C});
        for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"}) add(l + "self_attn." + p + ".weight", {C, C});
        add(l + "mlp.gate_proj.weight", {F, C});
        add(l + "mlp.up_proj.weight", {F, C});
        add(l + "mlp.down_proj.weight", {C, F});
        write_safetensors(base / "model.safetensors", ts);
        base.put("config.json", config);
    }
    std::string path() const { return base.path(); }
};

nlohmann::json info_json(const std::string& model) {
    auto r = info(model, {"--json"});
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.max_rss_kib < kLimitMib * 1024);
    return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("hostile: a layer count of 10^9 in config.json or GGUF block_count allocates nothing", "[hostile]") {
    ModelDir m;
    m.put("config.json", "config_n_layer_1e9.json");
    check_refused(info(m.path()), 2, "model.safetensors", "1000000000 layers but the file holds only 16 tensors");
    check_refused(info((kHostile / "gguf_block_count_1e9.gguf").string()), 2, "gguf_block_count_1e9.gguf",
                  "1000000000 layers but the file holds only 1 tensors");
    check_refused(info((kHostile / "gguf_block_count_5e6.gguf").string()), 2, "gguf_block_count_5e6.gguf",
                  "5000000 layers but the file holds only 1 tensors");
}

TEST_CASE("hostile: a context of 2^26 positions in a header does not size the KV cache", "[hostile]") {
    // HF max_position_embeddings and GGUF context_length of 2^26: 2 GiB of cache per layer at
    // this width if reserved by the claim. The session takes the capped default instead, and a
    // prompt runs under the 2 GiB limit.
    LlamaDir hf("config_llama_ctx_2p26.json");
    const std::string gguf = (kHostile / "gguf_llama_ctx_2p26.gguf").string();
    for (const std::string& model : {hf.path(), gguf}) {
        INFO(model);
        const auto j = info_json(model);
        CHECK(j["n_ctx"] == 1 << 26);
        CHECK(j["ctx_in_use"] == 4096);
        auto r = run_journey_limited({"next", "-m", model, "-p", "ab", "--top-k", "1"}, kLimitMib);
        INFO("stderr: " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.max_rss_kib < kLimitMib * 1024);
    }
}

TEST_CASE("hostile: llama2.c headers whose seq_len x n_layers claim gigabytes", "[hostile]") {
    // 2^26 positions x 1 layer, and 2^16 positions x 4096 layers, over a 19 KB body.
    const std::string tok = std::string(JOURNEY_TEST_DATA) + "/models/stories260K/tok512.bin";
    check_refused(info((kHostile / "llama2c_seq_len_2p26.bin").string(), {"--tokenizer", tok}), 2,
                  "llama2c_seq_len_2p26.bin", "header values out of range");
    check_refused(info((kHostile / "llama2c_layers_seq_1e9.bin").string(), {"--tokenizer", tok}), 2,
                  "llama2c_layers_seq_1e9.bin", "truncated");
}

TEST_CASE("hostile: 30,000 control tokens and a 100 KB prompt: special-token matching stays linear", "[hostile]") {
    // Every token starts "<|ctrl_" and the prompt repeats that prefix 14,286 times before the last
    // token: matching each token at each position is 100 KB x 30,000 (minutes); a trie is
    // instant. The CPU limit (generous, for the sanitizer build too) turns the first into a failure.
    constexpr int kSpecials = 30000;
    constexpr long kCpuSeconds = 10;
    auto special = [](int i) {
        char b[32];
        std::snprintf(b, sizeof b, "<|ctrl_%05d|>", i);
        return std::string(b);
    };
    std::string prompt;
    while (prompt.size() < 100000) prompt += "<|ctrl_";
    prompt += special(kSpecials - 1);
    auto last_ids = [&](const RunResult& r) {
        INFO("stderr: " << r.err.substr(0, 400));
        CHECK(r.exit_code == 0);  // SIGXCPU would show as 152
        std::vector<long> ids;
        std::istringstream in(r.out);
        for (long id; in >> id;) ids.push_back(id);
        CHECK(ids.size() > 100000);
        return ids.empty() ? -1 : ids.back();
    };
    TempDir dir;

    // Byte-level BPE in GPT-2's form (BpeTokenizer): byte tokens 0-255, the specials from 256.
    nlohmann::json vocab = nlohmann::json::object();
    for (int b = 0; b < 256; ++b) vocab[journey::bytes_to_unicode(std::string(1, char(b)))] = b;
    nlohmann::json added = nlohmann::json::array();
    for (int i = 0; i < kSpecials; ++i) added.push_back({{"id", 256 + i}, {"content", special(i)}, {"special", true}});
    nlohmann::json gpt2 = {{"added_tokens", added},
                           {"normalizer", nullptr},
                           {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
                           {"decoder", {{"type", "ByteLevel"}}},
                           {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}}}};
    write_file(dir / "gpt2.json", gpt2.dump());
    CHECK(last_ids(run_journey_limited({"tokenize", "--tokenizer-json", (dir / "gpt2.json").string(), "-f", "-"},
                                       kLimitMib, prompt, kCpuSeconds)) == 256 + kSpecials - 1);

    // SentencePiece-style BPE with byte fallback (the tokenizer.json pipeline, HfTokenizer).
    nlohmann::json spm_vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        spm_vocab[name] = 3 + b;
    }
    spm_vocab["\xe2\x96\x81"] = 259;
    added = nlohmann::json::array();
    for (int i = 0; i < kSpecials; ++i) added.push_back({{"id", 260 + i}, {"content", special(i)}, {"special", true}});
    nlohmann::json spm = {
        {"added_tokens", added},
        {"normalizer", {{"type", "Sequence"}, {"normalizers", {{{"type", "Prepend"}, {"prepend", "\xe2\x96\x81"}},
                                                               {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\xe2\x96\x81"}}}}}},
        {"pre_tokenizer", nullptr},
        {"decoder", nullptr},
        {"model", {{"type", "BPE"}, {"unk_token", "<unk>"}, {"byte_fallback", true}, {"vocab", spm_vocab},
                   {"merges", nlohmann::json::array()}}}};
    write_file(dir / "spm.json", spm.dump());
    CHECK(last_ids(run_journey_limited({"tokenize", "--tokenizer-json", (dir / "spm.json").string(), "-f", "-"},
                                       kLimitMib, prompt, kCpuSeconds)) == 260 + kSpecials - 1);

    // A GGUF Llama whose SentencePiece vocabulary holds them as control tokens (SpmTokenizer).
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    std::vector<int32_t> types = {2, 3, 3};
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        tokens.push_back(name);
        types.push_back(6);
    }
    tokens.push_back("\xe2\x96\x81");
    types.push_back(1);
    for (int i = 0; i < kSpecials; ++i) tokens.push_back(special(i)), types.push_back(3);
    const uint64_t C = 4, F = 16, V = tokens.size();
    GgufBuilder b;
    b.kv_str("general.architecture", "llama")
        .kv_u32("llama.embedding_length", C)
        .kv_u32("llama.block_count", 1)
        .kv_u32("llama.feed_forward_length", F)
        .kv_u32("llama.context_length", 64)
        .kv_u32("llama.attention.head_count", 2)
        .kv_u32("llama.attention.head_count_kv", 2)
        .kv_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f)
        .kv_str("tokenizer.ggml.model", "llama")
        .kv_strs("tokenizer.ggml.tokens", tokens)
        .kv_f32s("tokenizer.ggml.scores", std::vector<float>(tokens.size(), 0.0f))
        .kv_i32s("tokenizer.ggml.token_type", types);
    b.tensor_f32("token_embd.weight", {C, V}).tensor_f32("output_norm.weight", {C});
    b.tensor_f32("blk.0.attn_norm.weight", {C}).tensor_f32("blk.0.ffn_norm.weight", {C});
    for (const char* t : {"attn_q", "attn_k", "attn_v", "attn_output"}) b.tensor_f32(std::string("blk.0.") + t + ".weight", {C, C});
    b.tensor_f32("blk.0.ffn_gate.weight", {C, F}).tensor_f32("blk.0.ffn_up.weight", {C, F}).tensor_f32("blk.0.ffn_down.weight", {F, C});
    write_file(dir / "controls.gguf", b.build());
    CHECK(last_ids(run_journey_limited({"tokenize", "-m", (dir / "controls.gguf").string(), "-f", "-"}, kLimitMib, prompt,
                                       kCpuSeconds)) == 260 + kSpecials - 1);
}

TEST_CASE("hostile: a number too large for a double is invalid JSON, not nlohmann's exception", "[hostile]") {
    // Found by fuzz_config_json ("1e363{..."): nlohmann throws out_of_range.406, not parse_error,
    // and it escaped the parse as "terminate called after throwing ...".
    ModelDir m;
    m.put("config.json", "config_number_overflow.json");
    check_refused(info(m.path()), 2, "config.json", "invalid JSON: number overflow parsing '1e400'");
    // The same in tokenizer_config.json, now read depth-limited like every other JSON file.
    ModelDir ok;
    fs::copy_file(kHostile / "config_number_overflow.json", ok / "tokenizer_config.json");
    auto chat = [&] { return run_journey_limited({"generate", "-m", ok.path(), "--chat", "-p", "x", "-n", "1"}, kLimitMib); };
    check_refused(chat(), 2, "tokenizer_config.json", "invalid JSON: number overflow parsing '1e400'");
    write_file(ok / "tokenizer_config.json", nested("{\"a\":", "}", 100000));
    check_refused(chat(), 2, "tokenizer_config.json", "JSON nested deeper than 256 levels");
    // In a safetensors header, and in a sharded checkpoint's index (found by fuzz_safetensors and
    // fuzz_safetensors_index as 41e308 and 5e308).
    ModelDir st;
    st.put("model.safetensors", "header_number_overflow.safetensors");
    check_refused(info(st.path()), 2, "model.safetensors header", "invalid JSON: number overflow parsing '1e400'");
    fs::remove(st / "model.safetensors");
    st.put("model.safetensors.index.json", "index_number_overflow.json");
    check_refused(info(st.path()), 2, "model.safetensors.index.json", "invalid JSON: number overflow parsing '1e400'");
    // In a tokenizer.json (found by fuzz_tokenizer_json as 131e308).
    check_refused(run_journey_limited({"tokenize", "--tokenizer-json", (kHostile / "tokenizer_number_overflow.json").string(),
                                       "-p", "x"}, kLimitMib),
                  2, "tokenizer_number_overflow.json", "invalid JSON: number overflow parsing '1e400'");
    // And a --batch line: that line's error object, the run goes on.
    fs::remove(ok / "tokenizer_config.json");
    auto r = run_journey_limited({"next", "-m", ok.path(), "--batch", "-", "--top-k", "1"}, kLimitMib,
                            "a\n{\"prompt\": \"b\", \"x\": 1e400}\nc\n");
    INFO(r.err);
    CHECK(r.exit_code == 3);
    std::vector<nlohmann::json> lines;
    std::istringstream out(r.out);
    for (std::string line; std::getline(out, line);) lines.push_back(nlohmann::json::parse(line));
    REQUIRE(lines.size() == 3);
    CHECK_THAT(lines[1].value("error", ""), Contains("number overflow"));
    CHECK_FALSE(lines[2].contains("error"));
}
