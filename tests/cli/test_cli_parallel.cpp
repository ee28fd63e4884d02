// --parallel N (issue 39): records generated together, every byte of the output exactly the
// one-at-a-time output (same tokens, logprobs and seeds per record), for sequences of different
// lengths that join and leave as they finish, on the default model (GPT-2 Conv1D F32), a
// quantized GGUF (Q4_K_M: the integer dots), an F16 KV cache, and a mixture of experts.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "cli_run.h"
#include "files.h"

using namespace journey::test;
using Catch::Matchers::Contains;

namespace {

namespace fs = std::filesystem;

// Prompts of different lengths (one token to a dozen), a JSON line, an empty line and a line
// that fails: the sequences start at different positions and end at different steps (stop
// strings), so they join and leave the batch at different times.
const char* const kParallelPrompts =
    "And the LORD spake unto Moses\n"
    "In\n"
    "{\"prompt\": \"And God said, Let there be light: and there was\"}\n"
    "\n"
    "{\"text\": 1}\n"
    "Blessed are\n"
    "And it came to pass, when the king heard\n"
    "The\n"
    "Then said he unto them, Go your way, eat the fat, and drink the sweet\n";

std::vector<std::string> gen(const std::string& file, std::vector<std::string> extra) {
    std::vector<std::string> a = {"-q", "generate", "--batch", file, "-n", "14", "--seed", "5", "--no-timings",
                                  "--stop", ",", "--top-logprobs", "2"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

std::string model_path(const std::string& rel) { return std::string(JOURNEY_TEST_DATA) + "/" + rel; }

struct ModelCase {
    const char* name;
    std::vector<std::string> args;
};

}  // namespace

TEST_CASE("--parallel N writes exactly the one-at-a-time output", "[cli][batch][parallel]") {
    TempDir d;
    const std::string in = d / "prompts.txt";
    std::ofstream(in) << kParallelPrompts;
    const ModelCase models[] = {
        {"default model, greedy", {}},
        {"default model, sampled", {"--temp", "0.9", "--top-k", "40"}},
        {"default model, F16 KV cache", {"--kv-type", "f16"}},
        {"Q4_K_M GGUF", {"-m", model_path("quant/tinyllama-Q4_K_M.gguf")}},
        {"Q6_K GGUF, sampled", {"-m", model_path("quant/tinyllama-Q6_K.gguf"), "--temp", "0.7"}},
        {"mixture of experts", {"-m", model_path("models/qwen3moe/qwen3moe-F32.gguf")}},
    };
    for (const ModelCase& m : models) {
        INFO(m.name);
        const auto one = run_journey(gen(in, m.args));
        INFO(one.err);
        REQUIRE(one.exit_code == 3);  // the {"text": 1} line fails, the others run
        REQUIRE(std::count(one.out.begin(), one.out.end(), '\n') == 9);
        for (const char* n : {"2", "4", "16"}) {
            auto args = gen(in, m.args);
            args.insert(args.end(), {"--parallel", n});
            const auto r = run_journey(args);
            INFO("--parallel " << n << "\n" << r.err);
            CHECK(r.exit_code == 3);
            CHECK(r.out == one.out);
        }
    }
}

TEST_CASE("--parallel: -np as in llama.cpp, the caches stated, refusals", "[cli][batch][parallel]") {
    TempDir d;
    const std::string in = d / "prompts.txt";
    std::ofstream(in) << "In the beginning\nBlessed are\n";
    auto r = run_journey({"generate", "--batch", in, "-n", "3", "-np", "2"});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Contains("parallel: 2 sequences x ") && Contains("KV cache 2 x "));
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 2);
    r = run_journey({"generate", "-p", "In the beginning", "-n", "3", "--parallel", "2"});
    CHECK(r.exit_code != 0);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains("--parallel: only with --batch FILE"));
    r = run_journey({"generate", "--batch", in, "-n", "3", "--parallel", "0"});
    CHECK(r.exit_code != 0);
    CHECK_THAT(r.err, Contains("--parallel"));
}

TEST_CASE("--parallel with -o --resume: a killed run's records are kept, the rest run together", "[cli][batch][parallel]") {
    TempDir d;
    const std::string in = d / "prompts.txt", out = d / "out.jsonl";
    std::ofstream(in) << kParallelPrompts;
    auto args = gen(in, {"-o", out});
    REQUIRE(run_journey(args).exit_code == 3);
    const std::string expected = slurp(out);
    REQUIRE(std::count(expected.begin(), expected.end(), '\n') == 9);
    // What a run killed in its fourth record leaves: three lines and a half.
    size_t cut = 0;
    for (int i = 0; i < 3; ++i) cut = expected.find('\n', cut) + 1;
    std::ofstream(out, std::ios::binary | std::ios::trunc) << expected.substr(0, cut + 15);
    args = gen(in, {"-o", out, "--resume", "--parallel", "3"});
    const auto r = run_journey(args);
    INFO(r.err);
    CHECK(r.exit_code == 3);
    CHECK(slurp(out) == expected);
}

// next and score: several records' prompts in one pass (Session::eval_prompts), every byte the
// one-at-a-time output; prompts of one token and long ones run as before, beside them.
TEST_CASE("next and score --parallel N write exactly the one-at-a-time output", "[cli][batch][parallel]") {
    TempDir d;
    const std::string in = d / "prompts.txt";
    std::ofstream(in) << kParallelPrompts;
    const ModelCase models[] = {
        {"default model", {}},
        {"default model, F16 KV cache", {"--kv-type", "f16"}},
        {"Q4_K_M GGUF", {"-m", model_path("quant/tinyllama-Q4_K_M.gguf")}},
        {"mixture of experts", {"-m", model_path("models/qwen3moe/qwen3moe-F32.gguf")}},
    };
    for (const char* command : {"next", "score"}) {
        for (const ModelCase& m : models) {
            INFO(command << ": " << m.name);
            std::vector<std::string> base = {"-q", command, "--batch", in, "--no-timings"};
            base.insert(base.end(), m.args.begin(), m.args.end());
            const auto one = run_journey(base);
            INFO(one.err);
            REQUIRE(one.exit_code == 3);  // the {"text": 1} line fails, the others run
            REQUIRE(std::count(one.out.begin(), one.out.end(), '\n') == 9);
            for (const char* n : {"3", "16"}) {
                auto args = base;
                args.insert(args.end(), {"--parallel", n});
                const auto r = run_journey(args);
                INFO("--parallel " << n << "\n" << r.err);
                CHECK(r.exit_code == 3);
                CHECK(r.out == one.out);
            }
        }
    }
}
