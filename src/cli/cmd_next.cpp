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
#include "model_options.h"
#include "prompt_ids.h"

namespace journey::cli {
namespace {

struct NextOptions {
    ModelOptions model;
    PromptSource prompt;
    int top_k = 10;        // how many of the most likely tokens to list
    bool json = false;     // one JSON object instead of a table
    bool truncate = false; // keep the last n_ctx tokens of a longer prompt instead of failing
    std::string batch;     // --batch FILE: one prompt per line, one JSON line out per prompt
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
        const std::string b = tok.token_bytes(r.id);
        j["top"].push_back({{"rank", i + 1}, {"id", r.id}, {"token", valid_utf8(b)}, {"bytes", bytes_json(b)},
                            {"prob", r.prob}, {"logprob", r.logprob}, {"logit", r.logit}});
    }
    j["entropy"] = d.entropy;
    return j;
}

void print_table(const Model& m, const Distribution& d) {
    for (const std::string& line : distribution_table(m.tokenizer(), d)) out_line(line);
}

void run_next(const NextOptions& o) {
    if (!o.batch.empty() && (!o.prompt.text.empty() || !o.prompt.file.empty()))
        throw UsageError("--batch: give either --batch or -p/-f, not both");
    const std::string text = o.batch.empty() ? read_prompt(o.prompt) : std::string();
    auto model = load_model(o.model);
    Session session(*model, session_options(o.model));
    auto one = [&](const std::string& prompt) {
        const std::vector<TokenId> ids = prompt_ids(*model, prompt, o.truncate, session.n_ctx());
        session.reset();
        const auto logits = session.eval(ids);  // matrix-matrix over the prompt; last position's logits
        return std::pair(ids, distribution(logits, o.top_k));
    };
    if (!o.batch.empty()) {
        run_batch(o.batch, [&](const std::string& prompt) {
            const auto [ids, d] = one(prompt);
            return next_json(*model, ids, d);
        });
        return;
    }
    const auto [ids, d] = one(text);
    if (o.json) out_line(next_json(*model, ids, d).dump());
    else print_table(*model, d);
}

}  // namespace

void register_next(CLI::App& app) {
    auto opts = std::make_shared<NextOptions>();
    CLI::App* cmd = app.add_subcommand("next", "Show the most likely next tokens after the prompt");
    add_model_options(cmd, opts->model);
    add_prompt_options(cmd, opts->prompt);
    cmd->add_option("--top-k", opts->top_k, "How many of the most likely tokens to list")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    cmd->add_flag("--json", opts->json, "Print one JSON object");
    cmd->add_flag("--truncate", opts->truncate, "Keep the last n_ctx tokens of a longer prompt");
    add_batch_option(cmd, opts->batch);
    cmd->callback([opts] { run_next(*opts); });
}

}  // namespace journey::cli
