// A chat template (Jinja source from tokenizer_config.json or --chat-template FILE): parsed, then
// rendered with a fixed conversation as generate --chat and journey chat render it. A refusal
// (TemplateError, naming the template) is a correct answer; the render is bounded below the
// defaults so that one input stays well inside libFuzzer's -timeout under the sanitizers.
#include "fuzz_common.h"
#include "journey/chat/messages.h"
#include "journey/chat/jinja/template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace journey;
    static const nlohmann::ordered_json vars = [] {
        ChatVariables v;
        v.messages = parse_messages(R"([
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Hi <b>there</b> \u00e9\u65e5"},
            {"role": "assistant", "content": "Hello.", "tool_calls": [{"type": "function",
                "function": {"name": "f", "arguments": {"x": 1, "y": [true, null, 2.5]}}}]},
            {"role": "tool", "content": "{\"ok\": 1}"},
            {"role": "user", "content": [{"type": "text", "text": "and now?"}]}])",
                                    "fuzz conversation");
        v.add_generation_prompt = true;
        v.bos_token = "<s>";
        v.eos_token = "</s>";
        v.extra["enable_thinking"] = false;
        return template_variables(v);
    }();
    std::tm now{};
    now.tm_year = 125, now.tm_mon = 0, now.tm_mday = 15, now.tm_hour = 10, now.tm_min = 30;
    const jinja::RenderOptions options{.now = now, .max_output_bytes = 1u << 20, .max_steps = 200'000, .max_depth = 400};
    fuzz::refusal_ok([&] {
        const jinja::Template t(std::string(fuzz::as_text(data, size)), "chat_template.jinja");
        const std::string out = t.render(vars, options);
        fuzz::require(out.size() <= options.max_output_bytes, "the output stays within max_output_bytes");
    });
    return 0;
}
