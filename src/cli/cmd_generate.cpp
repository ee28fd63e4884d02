// journey generate: continue the prompt, as text (streamed), JSON Lines or one JSON object.
#include <cinttypes>
#include <cstdio>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "batch.h"
#include "commands.h"
#include "common.h"
#include "generate_json.h"
#include "journey/errors.h"
#include "journey/decode/generate.h"
#include "journey/text/prompt.h"
#include "model_options.h"
#include "sampling_options.h"
#include "journey/text/token_display.h"

namespace journey::cli {
namespace {

struct GenerateCliOptions {
    ModelOptions model;
    PromptSource prompt;
    GenerateOptions gen;
    SeedOption seed;
    std::string format = "text";  // text | jsonl | json
    bool echo = false;            // text: print the prompt first; json: "text" starts with it
    bool logprobs = false;        // text mode: each token's logprob on stderr
    std::string batch;
};

// Text mode: the visible text on stdout as it is released; --logprobs adds a line per token on stderr.
GenerateResult run_text(Session& session, const std::vector<TokenId>& ids, const GenerateCliOptions& o,
                        const std::string& prompt) {
    if (o.echo) out(prompt);
    const Tokenizer& tok = session.model().tokenizer();
    return generate(session, ids, o.gen, [&](const StepResult& s) {
        out(s.text);
        if (o.logprobs)
            std::fprintf(stderr, "[logprob] %4d %6d %10.4f %s\n", s.index, s.id, s.logprob,
                         visible_token(tok.token_bytes(s.id)).c_str());
    });
}

// --format json (and --batch): the token objects (without "type") and the summary, as one object.
nlohmann::ordered_json run_json(Session& session, const std::vector<TokenId>& ids, const GenerateCliOptions& o,
                                const std::string& prompt) {
    const Tokenizer& tok = session.model().tokenizer();
    nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
    const GenerateResult r = generate(session, ids, o.gen, [&](const StepResult& s) {
        nlohmann::ordered_json t = step_json(tok, s);
        t.erase("type");
        tokens.push_back(std::move(t));
    });
    nlohmann::ordered_json j = done_json(r, o.echo ? prompt + r.text : r.text);
    j.erase("type");
    j["tokens"] = std::move(tokens);
    return j;
}

void run_generate(GenerateCliOptions o) {
    if (o.format != "text" && o.format != "jsonl" && o.format != "json")
        throw UsageError("--format: must be text, jsonl or json, got '" + o.format + "'");
    if (!o.batch.empty() && (!o.prompt.text.empty() || !o.prompt.file.empty()))
        throw UsageError("--batch: give either --batch or -p/-f, not both");
    o.gen.sampler.seed = o.seed.resolve();  // validates every flag; one seed for the whole run
    validate(o.gen);
    std::fprintf(stderr, "seed: %" PRIu64 " (--seed %" PRIu64 " repeats this run)\n", *o.gen.sampler.seed,
                 *o.gen.sampler.seed);

    const std::string text = o.batch.empty() ? read_prompt(o.prompt) : std::string();
    auto model = load_model(o.model);
    Session session(*model, session_options(o.model));
    auto ids_of = [&](const std::string& prompt) { return encode_prompt(model->tokenizer(), prompt); };

    if (!o.batch.empty()) {
        run_batch(o.batch, [&](const std::string& prompt) { return run_json(session, ids_of(prompt), o, prompt); });
        return;
    }
    const std::vector<TokenId> ids = ids_of(text);
    if (o.format == "json") {
        out_line(run_json(session, ids, o, text).dump());
    } else if (o.format == "jsonl") {
        const GenerateResult r = generate(session, ids, o.gen, [&](const StepResult& s) {
            out_line(step_json(model->tokenizer(), s).dump());
        });
        out_line(done_json(r, o.echo ? text + r.text : r.text).dump());
    } else {
        const GenerateResult r = run_text(session, ids, o, text);
        spdlog::info("finish: {}; {} prompt + {} generated tokens; prompt {:.1f} ms, generation {:.1f} ms",
                     to_string(r.finish_reason), r.prompt_tokens, r.completion_tokens, r.prompt_ms, r.gen_ms);
    }
}

}  // namespace

void register_generate(CLI::App& app) {
    auto opts = std::make_shared<GenerateCliOptions>();
    CLI::App* cmd = app.add_subcommand("generate", "Continue the prompt: sample tokens and stream the text");
    add_model_options(cmd, opts->model);
    add_prompt_options(cmd, opts->prompt);
    cmd->add_option("-n,--max-tokens", opts->gen.max_tokens, "Generate at most N tokens (>= 0)")->capture_default_str();
    add_sampling_options(cmd, opts->gen.sampler, opts->seed);
    cmd->add_option("--stop", opts->gen.stop, "Stop when the text contains STR (repeatable; STR itself is not shown)");
    cmd->add_flag("--ignore-eos", opts->gen.ignore_eos, "Never sample the end-of-text token (keep going)");
    cmd->add_flag("--echo", opts->echo, "Print the prompt before the generated text");
    cmd->add_option("--format", opts->format, "Output: text (streamed), jsonl (a line per token, then a summary) or json")
        ->capture_default_str();
    cmd->add_flag("--logprobs", opts->logprobs,
                  "Text mode: each token's logprob on stderr (jsonl/json always carry it). A logprob is the "
                  "log-softmax of the raw logits at temperature 1, before penalty and truncation");
    cmd->add_option("--top-logprobs", opts->gen.top_logprobs, "Report the K most likely tokens at each step (jsonl/json)")
        ->capture_default_str();
    add_batch_option(cmd, opts->batch);
    cmd->callback([opts] { run_generate(*opts); });
}

}  // namespace journey::cli
