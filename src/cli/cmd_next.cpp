// journey next: the model's distribution over the token that comes after the prompt.
#include <nlohmann/json.hpp>

#include "batch.h"
#include "commands.h"
#include "common.h"
#include "distribution_table.h"
#include "journey/decode/distribution.h"
#include "journey/decode/sampler.h"
#include "journey/errors.h"
#include "journey/model/session.h"
#include "journey/text/token_display.h"
#include "numeric_options.h"
#include "model_options.h"
#include "prompt_ids.h"
#include "sampling_options.h"

namespace journey::cli {
namespace {

struct NextOptions {
    ModelOptions model;
    PromptSource prompt;
    int rows = 10;         // --rows: how many of the most likely tokens to list
    bool json = false;     // one JSON object instead of a table
    bool truncate = false; // keep the last n_ctx tokens of a longer prompt instead of failing
    BatchOptions batch;     // --batch FILE: one prompt per line, one JSON line out per prompt
    bool sampler = false;   // --sampler: also the candidates generate's sampler draws from
    SamplerOptions sampling;  // --temp --top-k --top-p --min-p --repeat-penalty --repeat-last-n
    SeedOption seed;          // accepted for symmetry with generate; the candidates need none
    std::optional<int> top_k; // --top-k: the sampler's k with --sampler, else --rows' old spelling
};

// What `journey generate` would draw its first token from after this prompt: the survivors of
// the sampler chain (sampler.h) with the probabilities of the draw. The trace page's sampling
// panel recomputes the same numbers (tests/trace compares them).
nlohmann::ordered_json sampler_json(const Model& m, const SamplerOptions& so, std::span<const float> logits,
                                    std::span<const TokenId> history) {
    SamplerOptions o = so;
    o.seed = 0;  // no draw happens: the candidates do not depend on the seed
    const Candidates c = Sampler(o).candidates(logits, history);
    nlohmann::ordered_json j = {{"temperature", o.temperature}, {"top_k", o.top_k}, {"top_p", o.top_p},
                                {"min_p", o.min_p}, {"repeat_penalty", o.repeat_penalty},
                                {"repeat_last_n", o.repeat_last_n}};
    j["candidates"] = nlohmann::ordered_json::array();
    for (const Candidate& x : c) {
        nlohmann::ordered_json row = token_json(m.tokenizer(), x.id);
        row["p"] = x.p;
        row["logit"] = x.logit;
        j["candidates"].push_back(std::move(row));
    }
    return j;
}

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

void run_next(NextOptions o) {
    if (o.top_k) {
        if (o.sampler) o.sampling.top_k = *o.top_k;
        else if (*o.top_k < 1) throw UsageError("--top-k: must be an integer ≥ 1, got " + std::to_string(*o.top_k));
        else o.rows = *o.top_k;
    }
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
        std::optional<nlohmann::ordered_json> sampled;
        if (o.sampler) sampled = sampler_json(*model, o.sampling, logits, ids);
        return std::tuple(ids, distribution(logits, o.rows), std::move(sampled));
    };
    if (!o.batch.file.empty()) {
        run_batch(
            batch,
            [&](const std::string& prompt, int worker) {
                const auto [ids, d, sampled] = one(PromptInput{prompt, std::nullopt}, *sessions[size_t(worker)]);
                auto j = next_json(*model, ids, d);
                if (sampled) j["sampler"] = *sampled;
                return j;
            },
            o.batch.parallel > 1 ? &batcher : nullptr);
        return;
    }
    const auto [ids, d, sampled] = one(input, *sessions[0]);
    if (o.json) {
        auto j = next_json(*model, ids, d);
        if (sampled) j["sampler"] = *sampled;
        out_line(json_text(j));
        return;
    }
    print_table(*model, d);
    if (!sampled) return;
    const auto& c = (*sampled)["candidates"];
    out_line("");
    char head[160];
    std::snprintf(head, sizeof head, "sampler (--temp %g --top-k %d --top-p %g --min-p %g --repeat-penalty %g): %zu %s",
                  double(o.sampling.temperature), o.sampling.top_k, double(o.sampling.top_p), double(o.sampling.min_p),
                  double(o.sampling.repeat_penalty), c.size(), c.size() == 1 ? "candidate" : "candidates");
    out_line(head);
    out_line(" rank      prob     id  token");
    for (size_t i = 0; i < c.size() && i < size_t(std::max(o.rows, 0)); ++i) {
        char buf[64];
        const TokenId id = c[i]["id"].get<TokenId>();
        std::snprintf(buf, sizeof buf, "%5zu  %8.6f  %5d  ", i + 1, c[i]["p"].get<double>(), id);
        out_line(buf + visible_token(model->tokenizer().token_bytes(id)));
    }
}

}  // namespace

void register_next(CLI::App& app) {
    auto opts = std::make_shared<NextOptions>();
    CLI::App* cmd = app.add_subcommand("next", "Show the most likely next tokens after the prompt");
    add_model_options(cmd, opts->model);
    add_prompt_options(cmd, opts->prompt, {.ids = true, .drop_newline = true});
    add_rows_option(cmd, opts->rows, "How many of the most likely tokens to list", false);
    cmd->add_flag("--json", opts->json, "Print one JSON object");
    cmd->add_flag("--truncate", opts->truncate, "Keep the last n_ctx tokens of a longer prompt");
    add_batch_option(cmd, opts->batch);
    add_parallel_option(cmd, opts->batch);
    cmd->add_flag("--sampler", opts->sampler,
                  "Also list what generate's sampler would draw from, with generate's sampling flags "
                  "(temperature, top-k, top-p, min-p, repeat penalty)");
    add_sampling_options(cmd, opts->sampling, opts->seed, false);
    cmd->add_option("--top-k", opts->top_k,
                    "With --sampler: sample among the K most likely tokens (>= 0; 0 = off; default 40); "
                    "without: old spelling of --rows")
        ->check(integer_at_least(0))
        ->group("");  // hidden, as --rows' old spelling was
    cmd->callback([opts] { run_next(*opts); });
}

}  // namespace journey::cli
