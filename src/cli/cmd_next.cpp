// journey next: the model's distribution over the token that comes after the prompt.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include <nlohmann/json.hpp>

#include "batch.h"
#include "commands.h"
#include "common.h"
#include "journey/errors.h"
#include "journey/prompt.h"
#include "journey/session.h"
#include "model_options.h"
#include "journey/token_display.h"

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

// log(0) would be -inf, which JSON cannot carry.
constexpr double kLogprobFloor = -9999.0;

struct Ranked {
    TokenId id;
    float logit;
    double prob, logprob;
};

// The distribution at temperature 1: log-sum-exp in double, the k best (ties: lower id), entropy.
struct Distribution {
    std::vector<Ranked> top;
    double entropy = 0;  // nats
};

Distribution distribution(std::span<const float> logits, int k) {
    const double mx = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (float x : logits) sum += std::exp(double(x) - mx);
    const double log_z = mx + std::log(sum);
    Distribution d;
    for (float x : logits) {
        const double p = std::exp(double(x) - log_z);
        if (p > 0) d.entropy -= p * (double(x) - log_z);
    }
    std::vector<TokenId> ids(logits.size());
    std::iota(ids.begin(), ids.end(), 0);
    const size_t n = std::min(ids.size(), static_cast<size_t>(k));
    std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n), ids.end(), [&](TokenId a, TokenId b) {
        const float la = logits[size_t(a)], lb = logits[size_t(b)];
        return la != lb ? la > lb : a < b;
    });
    for (size_t i = 0; i < n; ++i) {
        const float l = logits[size_t(ids[i])];
        const double lp = std::max(kLogprobFloor, double(l) - log_z);
        d.top.push_back({ids[i], l, std::exp(double(l) - log_z), lp});
    }
    return d;
}

// The ids the model sees (encode_prompt: BOS, or <|endoftext|> for an empty GPT-2 prompt),
// the last n_ctx with --truncate.
std::vector<TokenId> prompt_ids(const Model& m, const std::string& text, bool truncate) {
    std::vector<TokenId> ids = encode_prompt(m.tokenizer(), text);
    const size_t n_ctx = static_cast<size_t>(m.config().n_ctx);
    if (ids.size() > n_ctx) {
        if (!truncate)
            throw InputError("prompt is " + std::to_string(ids.size()) + " tokens, longer than the model's context of " +
                             std::to_string(n_ctx) + " (use --truncate to keep the last " + std::to_string(n_ctx) + ")");
        ids.erase(ids.begin(), ids.end() - static_cast<std::ptrdiff_t>(n_ctx));
    }
    return ids;
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
        const std::string b = tok.token_bytes(r.id);
        j["top"].push_back({{"rank", i + 1}, {"id", r.id}, {"token", valid_utf8(b)}, {"bytes", bytes_json(b)},
                            {"prob", r.prob}, {"logprob", r.logprob}, {"logit", r.logit}});
    }
    j["entropy"] = d.entropy;
    return j;
}

void print_table(const Model& m, const Distribution& d) {
    const Tokenizer& tok = m.tokenizer();
    out_line(" rank      prob    logprob     id  token");
    for (size_t i = 0; i < d.top.size(); ++i) {
        const Ranked& r = d.top[i];
        char buf[96];
        std::snprintf(buf, sizeof buf, "%5zu  %8.6f  %9.4f  %5d  ", i + 1, r.prob, r.logprob, r.id);
        out_line(buf + visible_token(tok.token_bytes(r.id)));
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "entropy %.4f nats", d.entropy);
    out_line(buf);
}

void run_next(const NextOptions& o) {
    if (!o.batch.empty() && (!o.prompt.text.empty() || !o.prompt.file.empty()))
        throw UsageError("--batch: give either --batch or -p/-f, not both");
    const std::string text = o.batch.empty() ? read_prompt(o.prompt) : std::string();
    auto model = load_model(o.model);
    Session session(*model);
    auto one = [&](const std::string& prompt) {
        const std::vector<TokenId> ids = prompt_ids(*model, prompt, o.truncate);
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
