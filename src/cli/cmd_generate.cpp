// journey generate: continue the prompt, as text (streamed), JSON Lines or one JSON object.
#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "batch.h"
#include "commands.h"
#include "common.h"
#include "generate_json.h"
#include "interrupt.h"
#include "journey/decode/generate.h"
#include "journey/errors.h"
#include "journey/chat/chat_format.h"
#include "journey/text/token_display.h"
#include "model_options.h"
#include "numeric_options.h"
#include "prompt_ids.h"
#include "sampling_options.h"

namespace journey::cli {
namespace {

struct GenerateCliOptions {
    ModelOptions model;
    PromptSource prompt;
    GenerateOptions gen;
    SeedOption seed;
    std::string format;           // text | jsonl | json; empty: text (or JSON lines with --batch)
    bool json = false;            // --json: --format json
    bool echo = false;            // text: print the prompt first; json: "text" starts with it
    bool logprobs = false;        // text mode: each token's logprob on stderr
    bool truncate = false;        // keep the last tokens of a long prompt, leaving room for -n
    BatchOptions batch;
    bool chat = false;            // --chat: the prompt is one user message in the model's chat template
    std::string chat_template;    // --chat-template FILE (with --chat)
};

// Text mode: the visible text on stdout as it is released; --logprobs adds a line per token on
// stderr, after the text when both streams are one terminal (so they do not interleave).
GenerateResult run_text(Session& session, const std::vector<TokenId>& ids, const GenerateCliOptions& o,
                        const std::string& prompt) {
    const bool terminal = isatty(STDOUT_FILENO);
    const bool hold_logprobs = terminal && isatty(STDERR_FILENO);
    if (o.echo) out(prompt);
    const Tokenizer& tok = session.model().tokenizer();
    std::string held;
    const GenerateResult r = generate(session, ids, o.gen, [&](const StepResult& s) {
        out(s.text);
        if (!o.logprobs) return;
        char buf[64];
        std::snprintf(buf, sizeof buf, "[logprob] %4d %6d %10.4f ", s.index, s.id, s.logprob);
        const std::string line = buf + visible_token(tok.token_bytes(s.id)) + "\n";
        if (hold_logprobs) held += line;
        else std::fputs(line.c_str(), stderr);
    });
    // The shell prompt starts on its own line; a pipe gets the bytes exactly.
    const std::string all = o.echo ? prompt + r.text : r.text;
    if (terminal && !all.empty() && !all.ends_with('\n')) out("\n");
    std::fputs(held.c_str(), stderr);
    return r;
}

// --format json (and --batch): the token objects (without "type") and the summary, as one object.
nlohmann::ordered_json run_json(Session& session, const std::vector<TokenId>& ids, const GenerateCliOptions& o,
                                const std::string& prompt, GenerateResult* result = nullptr) {
    const Tokenizer& tok = session.model().tokenizer();
    nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
    const GenerateResult r = generate(session, ids, o.gen, [&](const StepResult& s) {
        nlohmann::ordered_json t = step_json(tok, s);
        t.erase("type");
        tokens.push_back(std::move(t));
    });
    nlohmann::ordered_json j = done_json(session.model().source().string(), r, o.echo ? prompt + r.text : r.text);
    j.erase("type");
    j["tokens"] = std::move(tokens);
    if (result) *result = r;
    return j;
}

// Flags a mode would ignore are refused, never silently dropped.
void check_modes(const GenerateCliOptions& o) {
    if (!o.format.empty() && o.format != "text" && o.format != "jsonl" && o.format != "json")
        throw UsageError("--format: must be text, jsonl or json, got '" + o.format + "'");
    if (o.json && !o.format.empty() && o.format != "json")
        throw UsageError("--json: conflicts with --format " + o.format);
    if (!o.batch.file.empty() && o.prompt.given())
        throw UsageError("--batch: give either --batch or a prompt (-p, -f, PROMPT, --ids), not both");
    if (!o.batch.file.empty() && (o.format == "text" || o.format == "jsonl"))
        throw UsageError("--format " + o.format + ": --batch writes one JSON object per line (drop --format)");
    const bool text = o.batch.file.empty() && !o.json && (o.format.empty() || o.format == "text");
    if (text && o.gen.top_logprobs > 0)
        throw UsageError("--top-logprobs: text mode shows no alternatives (add --format jsonl or --json)");
    if (!text && o.logprobs)
        throw UsageError("--logprobs: JSON output always carries each token's logprob (drop --logprobs)");
}

// Text mode, when the context filled up: say so, and how to get more.
void explain_context_full(const GenerateResult& r, int n_ctx) {
    if (quiet()) return;
    std::fprintf(stderr,
                 "journey: generate: stopped: the context of %d tokens is full (%d prompt + %d generated); "
                 "-c N gives a larger context (up to the model's), and a shorter prompt leaves more room "
                 "(--truncate keeps the prompt's last tokens)\n",
                 n_ctx, r.prompt_tokens, r.completion_tokens);
}

// After an interrupt: the timings on stderr, then exit 128 + signal (130 for Ctrl-C).
[[noreturn]] void exit_interrupted(const GenerateResult* r) {
    if (r)
        std::fprintf(stderr, "journey: generate: interrupted after %d tokens; prompt %.1f ms, generation %.1f ms\n",
                     r->completion_tokens, r->prompt_ms, r->gen_ms);
    throw ExitCode{128 + interrupt_signal()};
}

void run_generate(GenerateCliOptions o) {
    check_modes(o);
    o.gen.sampler.seed = o.seed.resolve();  // validates every flag; one seed for the whole run
    validate(o.gen);
    const PromptInput input = o.batch.file.empty() ? read_prompt_input(o.prompt) : PromptInput{};
    BatchInput batch = open_batch(o.batch);
    auto model = load_model(o.model, Placement::copy);
    Batcher batcher;
    std::vector<std::unique_ptr<Session>> sessions = batch_sessions(*model, session_options(o.model), o.batch.parallel, batcher);
    Session& session = *sessions[0];
    // --truncate leaves room for -n tokens (at most half the context) after the prompt.
    const int n_ctx = session.n_ctx();
    const int room = std::min(o.gen.max_tokens < 0 ? n_ctx : o.gen.max_tokens, n_ctx / 2);
    const size_t limit = o.truncate ? size_t(n_ctx - room) : size_t(n_ctx);
    // --chat: the text is one user message in the model's chat template, ending at its end tokens.
    ChatFormat chat;
    if (o.chat) {
        chat = load_chat_format(*model, o.chat_template);
        o.gen.end_tokens = chat.end_tokens;
    }
    auto ids_of = [&](const PromptInput& in) {
        if (!o.chat || in.ids) return prompt_ids(*model, in, o.truncate, limit);
        const nlohmann::ordered_json messages = {{{"role", "user"}, {"content", in.text}}};
        PromptInput rendered;
        rendered.ids = chat_prompt_ids(model->tokenizer(), render_chat(chat, messages, true));
        return prompt_ids(*model, rendered, o.truncate, limit);
    };
    const std::vector<TokenId> ids = o.batch.file.empty() ? ids_of(input) : std::vector<TokenId>{};
    const std::string text = input.ids ? model->tokenizer().decode(ids) : input.text;

    install_interrupt_handlers();
    o.gen.interrupt = &interrupt_flag();
    // Everything that can fail before generation has; now the seed that repeats the run.
    if (!quiet())
        std::fprintf(stderr, "seed: %" PRIu64 " (--seed %" PRIu64 " repeats this run)\n", *o.gen.sampler.seed,
                     *o.gen.sampler.seed);

    if (!o.batch.file.empty()) {
        run_batch(
            batch,
            [&](const std::string& prompt, int worker) {
                return run_json(*sessions[size_t(worker)], ids_of(PromptInput{prompt, std::nullopt}), o, prompt);
            },
            o.batch.parallel > 1 ? &batcher : nullptr);
        if (interrupt_signal()) exit_interrupted(nullptr);
        return;
    }
    GenerateResult r;
    if (o.json || o.format == "json") {
        out_line(json_text(run_json(session, ids, o, text, &r)));
    } else if (o.format == "jsonl") {
        r = generate(session, ids, o.gen, [&](const StepResult& s) { out_line(json_text(step_json(model->tokenizer(), s))); });
        out_line(json_text(done_json(model->source().string(), r, o.echo ? text + r.text : r.text)));
    } else {
        r = run_text(session, ids, o, text);
        if (r.finish_reason == FinishReason::context) explain_context_full(r, n_ctx);
        spdlog::info("finish: {}; {} prompt + {} generated tokens; prompt {:.1f} ms, generation {:.1f} ms",
                     finish_reason_name(r.finish_reason), r.prompt_tokens, r.completion_tokens, r.prompt_ms, r.gen_ms);
    }
    if (r.finish_reason == FinishReason::interrupted) exit_interrupted(&r);
}

}  // namespace

void register_generate(CLI::App& app) {
    auto opts = std::make_shared<GenerateCliOptions>();
    CLI::App* cmd = app.add_subcommand(
        "generate",
        "Continue the prompt: sample tokens and stream the text. Ctrl-C (or SIGTERM) stops after the current "
        "token, flushes, writes the summary (finish_reason \"interrupted\") and exits 130 (143); a second Ctrl-C "
        "exits at once");
    add_model_options(cmd, opts->model);
    add_prompt_options(cmd, opts->prompt, {.ids = true, .drop_newline = true});
    cmd->add_option("-n,--max-tokens,--max-new-tokens", opts->gen.max_tokens,
                    "Generate at most N tokens (>= 0; -1 = until end of text or a full context)")
        ->check(integer_at_least(-1))
        ->capture_default_str();
    add_sampling_options(cmd, opts->gen.sampler, opts->seed);
    cmd->add_option("--stop", opts->gen.stop, "Stop when the text contains STR (repeatable; STR itself is not shown)");
    cmd->add_flag("--ignore-eos", opts->gen.ignore_eos, "Never sample the end-of-text token (keep going)");
    cmd->add_flag("--echo", opts->echo, "Print the prompt before the generated text");
    cmd->add_flag("--truncate", opts->truncate,
                  "Keep the last tokens of a prompt too long for the context, leaving room for -n tokens (at most "
                  "half the context)");
    cmd->add_option("--format", opts->format,
                    "Output: text (streamed; a final newline only on a terminal), jsonl (a line per token, then a "
                    "summary) or json (default: text)");
    cmd->add_flag("--json", opts->json, "Same as --format json");
    cmd->add_flag("--logprobs", opts->logprobs,
                  "Text mode: each token's logprob on stderr (after the text when stdout and stderr are one "
                  "terminal). A logprob is the log-softmax of the raw logits at temperature 1, before penalty "
                  "and truncation");
    cmd->add_option("--top-logprobs", opts->gen.top_logprobs, "Report the K most likely tokens at each step (jsonl/json)")
        ->check(integer_at_least(0))
        ->capture_default_str();
    add_batch_option(cmd, opts->batch);
    add_parallel_option(cmd, opts->batch);
    cmd->add_flag("--chat", opts->chat, "Write the prompt as one user message in the model's chat template; stop at its end tokens");
    cmd->add_option("--chat-template", opts->chat_template, "With --chat: a Jinja chat template instead of the model's");
    cmd->callback([opts] { run_generate(*opts); });
}

}  // namespace journey::cli
