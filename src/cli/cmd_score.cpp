// journey score: how likely the model finds a text, token by token (teacher forcing).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "batch.h"
#include "commands.h"
#include "common.h"
#include "journey/errors.h"
#include "journey/text/prompt.h"
#include "journey/decode/score.h"
#include "model_options.h"
#include "progress.h"
#include "prompt_ids.h"
#include "journey/text/token_display.h"

namespace journey::cli {
namespace {

struct ScoreCliOptions {
    ModelOptions model;
    PromptSource prompt;
    ScoreOptions score;
    bool bos = false;   // condition a GPT-2 text's first token on <|endoftext|> too
    bool json = false;
    BatchOptions batch;
};

// encode_prompt, plus --bos: the start token first for tokenizers that do not add one.
std::vector<TokenId> score_ids(const Tokenizer& tok, const std::string& text, bool bos) {
    std::vector<TokenId> ids = encode_prompt(tok, text);
    const auto start = start_token(tok);
    if (bos && !tok.add_bos() && !text.empty()) {
        if (!start) throw InputError("--bos: the tokenizer has no start/end-of-text token");
        ids.insert(ids.begin(), *start);
    }
    return ids;
}

nlohmann::ordered_json score_json(const Model& m, const ScoreResult& r) {
    const Tokenizer& tok = m.tokenizer();
    nlohmann::ordered_json j;
    j["model"] = m.source().string();
    j["condition"] = token_json(tok, r.ids[0]);
    j["tokens"] = nlohmann::ordered_json::array();
    for (size_t t = 0; t < r.logprobs.size(); ++t) {
        nlohmann::ordered_json e = token_json(tok, r.ids[t + 1]);
        e["logprob"] = r.logprobs[t];
        j["tokens"].push_back(std::move(e));
    }
    j["token_count"] = r.logprobs.size();
    j["sum_logprob"] = r.sum_logprob;
    j["mean_nll"] = r.mean_nll;
    j["perplexity"] = r.perplexity;
    j["windows"] = r.windows;
    return j;
}

void print_table(const Tokenizer& tok, const ScoreResult& r) {
    out_line("    logprob     id  token");
    char buf[96];
    std::snprintf(buf, sizeof buf, "%11s  %5d  ", "(condition)", r.ids[0]);
    out_line(buf + visible_token(tok.token_bytes(r.ids[0])));
    for (size_t t = 0; t < r.logprobs.size(); ++t) {
        std::snprintf(buf, sizeof buf, "%11.4f  %5d  ", r.logprobs[t], r.ids[t + 1]);
        out_line(buf + visible_token(tok.token_bytes(r.ids[t + 1])));
    }
    std::snprintf(buf, sizeof buf, "tokens %zu  sum %.4f  mean NLL %.4f  perplexity %.4f", r.logprobs.size(),
                  r.sum_logprob, r.mean_nll, r.perplexity);
    out_line(buf);
}

void run_score(const ScoreCliOptions& o) {
    if (!o.batch.file.empty() && o.prompt.given())
        throw UsageError("--batch: give either --batch or a text (-p, -f, TEXT, --ids), not both");
    if (!o.prompt.ids.empty() && o.bos) throw UsageError("--bos: --ids are scored exactly as given (put the id first)");
    const PromptInput input = o.batch.file.empty() ? read_prompt_input(o.prompt) : PromptInput{};
    BatchInput batch = open_batch(o.batch);
    auto model = load_model(o.model, Placement::in_place);
    const Tokenizer& tok = model->tokenizer();
    Batcher batcher;  // --parallel N: N records' windows evaluated together
    std::vector<std::unique_ptr<Session>> sessions = batch_sessions(*model, session_options(o.model), o.batch.parallel, batcher);
    Session& session = *sessions[0];
    if (!o.batch.file.empty()) {
        run_batch(
            batch,
            [&](const std::string& t, int worker) {
                return score_json(*model, score(*sessions[size_t(worker)], score_ids(tok, t, o.bos), o.score));
            },
            o.batch.parallel > 1 ? &batcher : nullptr);
        return;
    }
    if (input.ids) check_ids(*input.ids, model->config().n_vocab, "--ids");  // rows of the model
    // A long text takes a while: a bar on a terminal (score.h calls back per chunk).
    Progress bar("score", "tok");
    ScoreOptions with_bar = o.score;
    with_bar.progress = [&](size_t done, size_t total) { bar.update(done, total); };
    const ScoreResult r = score(session, input.ids ? *input.ids : score_ids(tok, input.text, o.bos), with_bar);
    if (o.json) out_line(json_text(score_json(*model, r)));
    else print_table(tok, r);
}

}  // namespace

void register_score(CLI::App& app) {
    auto opts = std::make_shared<ScoreCliOptions>();
    CLI::App* cmd = app.add_subcommand(
        "score",
        "Log-probability of each token of a text given the ones before it; sum, mean NLL, perplexity. "
        "The first token the model sees is the condition, not scored: BOS for Llama models; for GPT-2 the "
        "text's own first token (--bos conditions it on <|endoftext|> instead). A text longer than the "
        "window is scored with a sliding window, each token once");
    add_model_options(cmd, opts->model);
    add_prompt_options(cmd, opts->prompt, {.ids = true});
    cmd->add_flag("--json", opts->json, "Print one JSON object");
    cmd->add_flag("--bos", opts->bos, "GPT-2: put <|endoftext|> before the text, so its first token is scored too");
    cmd->add_option("--window", opts->score.window, "Tokens per evaluation (default 0 = the model's context)")
        ->capture_default_str();
    cmd->add_option("--stride", opts->score.stride, "How far the window slides (default 0 = half the window)")
        ->capture_default_str();
    add_batch_option(cmd, opts->batch);
    add_parallel_option(cmd, opts->batch);
    cmd->callback([opts] { run_score(*opts); });
}

}  // namespace journey::cli
