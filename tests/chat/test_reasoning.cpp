// A reasoning model's reply split into reasoning and answer (chat/reasoning.h), against the
// formats as their model cards write them: Qwen3's <think> blocks and OpenAI's harmony
// messages (gpt-oss: analysis, final and commentary channels, tool calls).
#include <fstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "journey/chat/chat_format.h"
#include "journey/chat/reasoning.h"
#include "journey/model/model.h"

using namespace journey;
using namespace journey::test;

namespace {

struct Split {
    std::string reasoning, answer;
};

// The reply fed whole, and fed one byte at a time: markers cut anywhere give the same parts.
Split split_reasoning(ReasoningStyle style, const std::string& prompt, const std::string& reply) {
    Split whole, bytes;
    {
        ReplySplitter s(style, prompt);
        for (const auto& p : {s.feed(reply), s.finish()}) whole.reasoning += p.reasoning, whole.answer += p.answer;
    }
    {
        ReplySplitter s(style, prompt);
        for (char c : reply) {
            const auto p = s.feed(std::string(1, c));
            bytes.reasoning += p.reasoning, bytes.answer += p.answer;
        }
        const auto p = s.finish();
        bytes.reasoning += p.reasoning, bytes.answer += p.answer;
    }
    CHECK(whole.reasoning == bytes.reasoning);
    CHECK(whole.answer == bytes.answer);
    return whole;
}

}  // namespace

TEST_CASE("reasoning: the style of a template", "[chat][reasoning]") {
    CHECK(reasoning_style_of_template("{{ '<|start|>assistant<|channel|>final<|message|>' }}") == ReasoningStyle::harmony);
    CHECK(reasoning_style_of_template("{%- if enable_thinking %}<think>\n\n</think>{% endif %}") == ReasoningStyle::think);
    CHECK(reasoning_style_of_template("{{ '<|im_start|>assistant\n' }}") == ReasoningStyle::none);
}

TEST_CASE("reasoning: <think> blocks (Qwen3, SmolLM3, Qwen3.5)", "[chat][reasoning]") {
    // The template opened the block (Qwen3.5 thinking by default).
    Split s = split_reasoning(ReasoningStyle::think, "<|im_start|>assistant\n<think>\n", "The user greets.\n</think>\n\nHello!");
    CHECK(s.reasoning == "The user greets.\n");
    CHECK(s.answer == "Hello!");
    // The model opens it (Qwen3).
    s = split_reasoning(ReasoningStyle::think, "<|im_start|>assistant\n", "<think>\nhmm\n</think>\n\nHi <b>there</b>");
    CHECK(s.reasoning == "\nhmm\n");
    CHECK(s.answer == "Hi <b>there</b>");
    // enable_thinking false: the template wrote an empty block; a later <think> is text.
    s = split_reasoning(ReasoningStyle::think, "<|im_start|>assistant\n<think>\n\n</think>\n\n", "Sure: <think> is a tag.");
    CHECK(s.reasoning.empty());
    CHECK(s.answer == "Sure: <think> is a tag.");
    // Cut off while thinking: all of it is reasoning, nothing is lost.
    s = split_reasoning(ReasoningStyle::think, "<think>", "still going </thi");
    CHECK(s.reasoning == "still going </thi");
    CHECK(s.answer.empty());
}

TEST_CASE("reasoning: harmony messages (gpt-oss)", "[chat][reasoning]") {
    const std::string prompt = "<|start|>user<|message|>Weather in Paris?<|end|><|start|>assistant";
    Split s = split_reasoning(ReasoningStyle::harmony, prompt,
                    "<|channel|>analysis<|message|>User asks weather.<|end|><|start|>assistant<|channel|>final<|message|>It is sunny.");
    CHECK(s.reasoning == "User asks weather.");
    CHECK(s.answer == "It is sunny.");
    // A tool call passes through untouched, header and all.
    const std::string call = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>";
    s = split_reasoning(ReasoningStyle::harmony, prompt, "<|channel|>analysis<|message|>Need a tool.<|end|><|start|>assistant" + call);
    CHECK(s.reasoning == "Need a tool.");
    CHECK(s.answer == "<|start|>assistant" + call);
    // Commentary without a recipient is a preamble for the user.
    s = split_reasoning(ReasoningStyle::harmony, prompt, "<|channel|>commentary<|message|>Checking…<|end|>");
    CHECK(s.answer == "Checking…");
    // No harmony markup at all (an untrained model): all answer.
    s = split_reasoning(ReasoningStyle::harmony, prompt, "plain words, no <|message|");
    CHECK(s.reasoning.empty());
    CHECK(s.answer == "plain words, no <|message|");
}

TEST_CASE("chat: gpt-oss's harmony format ends a turn on <|return|> and <|call|>, not <|end|>", "[chat][reasoning]") {
    const std::string gguf = data_dir() + "/models/gpt-oss/gpt-oss-F32.gguf";
    const auto model = Model::load(gguf);
    const ChatFormat f = load_chat_format(*model);
    CHECK(f.reasoning == ReasoningStyle::harmony);
    const auto id = [&](const char* text) { return model->tokenizer().encode(text, true).at(0); };
    auto has = [&](TokenId t) { return std::find(f.end_tokens.begin(), f.end_tokens.end(), t) != f.end_tokens.end(); };
    CHECK(has(id("<|return|>")));
    CHECK(has(id("<|call|>")));
    CHECK_FALSE(has(id("<|end|>")));

    // --reasoning-effort reaches the template; --json carries the reasoning apart.
    const std::string messages = R"([{"role":"user","content":"Hi"}])";
    RunResult r = run_journey({"chat", "-m", gguf, "--messages", "-", "--show-prompt", "--reasoning-effort", "high"}, messages);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("Reasoning: high") != std::string::npos);
    r = run_journey({"chat", "-m", gguf, "--messages", "-", "--json", "-n", "8", "--seed", "3"}, messages);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto reply = nlohmann::json::parse(r.out);
    CHECK(reply.contains("reasoning_content"));
    CHECK(reply["usage"]["completion_tokens"].get<int>() <= 8);
}
