// journey next: the model's distribution over the token that comes after the prompt.
#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "distribution_table.h"
#include "journey/distribution.h"
#include "journey/session.h"
#include "journey/token_display.h"
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
};

void print_json(const Model& m, const std::vector<TokenId>& ids, const Distribution& d) {
    const Tokenizer& tok = m.tokenizer();
    nlohmann::json j;
    j["model"] = m.source().string();
    j["prompt_tokens"] = nlohmann::json::array();
    for (TokenId id : ids) {
        const std::string b = tok.token_bytes(id);
        j["prompt_tokens"].push_back({{"id", id}, {"token", valid_utf8(b)}, {"bytes", bytes_json(b)}});
    }
    j["n_vocab"] = m.config().n_vocab;
    j["top"] = nlohmann::json::array();
    for (size_t i = 0; i < d.top.size(); ++i) {
        const Ranked& r = d.top[i];
        const std::string b = tok.token_bytes(r.id);
        j["top"].push_back({{"rank", i + 1}, {"id", r.id}, {"token", valid_utf8(b)}, {"bytes", bytes_json(b)},
                            {"prob", r.prob}, {"logprob", r.logprob}, {"logit", r.logit}});
    }
    j["entropy"] = d.entropy;
    out_line(j.dump());
}

void print_table(const Model& m, const Distribution& d) {
    for (const std::string& line : distribution_table(m.tokenizer(), d)) out_line(line);
}

void run_next(const NextOptions& o) {
    const std::string text = read_prompt(o.prompt);
    auto model = load_model(o.model);
    const std::vector<TokenId> ids = prompt_ids(*model, text, o.truncate);
    Session session(*model);
    const auto logits = session.eval(ids);  // matrix-matrix over the prompt; last position's logits
    const Distribution d = distribution(logits, o.top_k);
    if (o.json) print_json(*model, ids, d);
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
    cmd->callback([opts] { run_next(*opts); });
}

}  // namespace journey::cli
