// journey next: the model's distribution over the token that comes after the prompt.
#include <nlohmann/json.hpp>

#include "batch.h"
#include "commands.h"
#include "common.h"
#include "distribution_table.h"
#include "journey/decode/distribution.h"
#include "journey/errors.h"
#include "journey/model/session.h"
#include "journey/text/token_display.h"
#include "numeric_options.h"
#include "model_options.h"
#include "prompt_ids.h"

namespace journey::cli {
namespace {

struct NextOptions {
    ModelOptions model;
    PromptSource prompt;
    int rows = 10;         // --rows: how many of the most likely tokens to list
    bool json = false;     // one JSON object instead of a table
    bool truncate = false; // keep the last n_ctx tokens of a longer prompt instead of failing
    BatchOptions batch;     // --batch FILE: one prompt per line, one JSON line out per prompt
};

nlohmann::ordered_json next_json(const Model& m, const std::vector<TokenId>& ids, const Distribution& d) {
    const Tokenizer& tok = m.tokenizer();
    nlohmann::ordered_json j;
    j["model"] = m.source().string();
    j["prompt_tokens"] = nlohmann::ordered_json::array();
    for (TokenId id : ids) j["prompt_tokens"].push_back(token_json(tok, id));
    j["n_vocab"] = m.config().n_vocab;
    j["top"] = nlohmann::ordered_json::array();
    for (size_t i = 0; i < d.top.size(); ++i) {
        const Ranked& r = d.top[i];
        nlohmann::ordered_json row = {{"rank", i + 1}};
        row.update(token_json(tok, r.id));
        row["prob"] = r.prob;
        row["logprob"] = r.logprob;
        row["logit"] = r.logit;
        j["top"].push_back(std::move(row));
    }
    j["entropy"] = d.entropy;
    return j;
}

void print_table(const Model& m, const Distribution& d) {
    for (const std::string& line : distribution_table(m.tokenizer(), d)) out_line(line);
}

void run_next(const NextOptions& o) {
    if (!o.batch.file.empty() && o.prompt.given())
        throw UsageError("--batch: give either --batch or a prompt (-p, -f, PROMPT, --ids), not both");
    const PromptInput input = o.batch.file.empty() ? read_prompt_input(o.prompt) : PromptInput{};
    BatchInput batch = open_batch(o.batch);
    auto model = load_model(o.model, Placement::in_place);
    Batcher batcher;  // --parallel N: N records' prompts evaluated together
    std::vector<std::unique_ptr<Session>> sessions = batch_sessions(*model, session_options(o.model), o.batch.parallel, batcher);
    auto one = [&](const PromptInput& prompt, Session& session) {
        const std::vector<TokenId> ids = prompt_ids(*model, prompt, o.truncate, size_t(session.n_ctx()));
        session.reset();
        const auto logits = session.eval(ids);  // matrix-matrix over the prompt; last position's logits
        return std::pair(ids, distribution(logits, o.rows));
    };
    if (!o.batch.file.empty()) {
        run_batch(
            batch,
            [&](const std::string& prompt, int worker) {
                const auto [ids, d] = one(PromptInput{prompt, std::nullopt}, *sessions[size_t(worker)]);
                return next_json(*model, ids, d);
            },
            o.batch.parallel > 1 ? &batcher : nullptr);
        return;
    }
    const auto [ids, d] = one(input, *sessions[0]);
    if (o.json) out_line(json_text(next_json(*model, ids, d)));
    else print_table(*model, d);
}

}  // namespace

void register_next(CLI::App& app) {
    auto opts = std::make_shared<NextOptions>();
    CLI::App* cmd = app.add_subcommand("next", "Show the most likely next tokens after the prompt");
    add_model_options(cmd, opts->model);
    add_prompt_options(cmd, opts->prompt, {.ids = true, .drop_newline = true});
    add_rows_option(cmd, opts->rows, "How many of the most likely tokens to list");
    cmd->add_flag("--json", opts->json, "Print one JSON object");
    cmd->add_flag("--truncate", opts->truncate, "Keep the last n_ctx tokens of a longer prompt");
    add_batch_option(cmd, opts->batch);
    add_parallel_option(cmd, opts->batch);
    cmd->callback([opts] { run_next(*opts); });
}

}  // namespace journey::cli
