// journey patch: activation patching, a clean and a corrupted prompt (trace/patch.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>
#include <optional>

#include "commands.h"
#include "common.h"
#include "escapes.h"
#include "journey/errors.h"
#include "journey/kernels/kernels.h"
#include "journey/model/weights.h"
#include "journey/text/token_display.h"
#include "journey/trace/patch.h"
#include "journey/trace/trace.h"
#include "journey/trace/trace_html.h"
#include "model_options.h"
#include "progress.h"
#include "provenance_json.h"
#include "prompt_ids.h"

namespace journey::cli {
namespace {

struct PatchCliOptions {
    ModelOptions model;
    std::string clean, corrupted;          // --clean / --corrupted: prompt text (escapes as -p)
    std::string clean_ids, corrupted_ids;  // --clean-ids / --corrupted-ids: the prompts as ids
    std::string site = "resid";            // --site: resid | attn | mlp
    std::string target, contrast;          // TOKEN or #ID
    bool json = false;
    std::string html;                      // --html FILE: also the grid as a self-contained page
};

PromptInput input_of(const std::string& text, const std::string& ids, const char* flag) {
    PromptInput in;
    if (!ids.empty()) in.ids = parse_id_list(ids, flag);
    else in.text = process_escapes(text);
    return in;
}

// `s` in `width` columns (one per code point), cut with "…" or padded on the left.
std::string column(const std::string& s, size_t width) {
    std::vector<size_t> starts;  // byte offset of each code point
    for (size_t i = 0; i < s.size(); ++i)
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) starts.push_back(i);
    if (starts.size() <= width) return std::string(width - starts.size(), ' ') + s;
    return s.substr(0, starts[width - 1]) + "\xE2\x80\xA6";
}

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

// Grid cells at once: one per thread (-t), each thread with its own session, as many as fit in
// half the memory free (said on stderr when fewer than -t, or 64 MiB or more); at most one per position of a layer x position grid.
int grid_threads(const Model& m, const PatchOptions& opts, int T) {
    int n = num_threads();
    if (opts.site != PatchSite::head) n = std::min(n, T);
    const PatchMemory pm = patch_memory(m, T, opts.session);
    const double mib = double(pm.bytes()) / (1024.0 * 1024.0);
    const double budget = double(available_memory()) / 2 / (1024.0 * 1024.0);
    std::string fewer;
    if (budget > 0 && n > 1 && mib * n > budget) {
        const int fit = std::max(1, int(budget / std::max(mib, 1e-9)));
        fewer = " (-t " + std::to_string(n) + "; half the free memory, " + std::to_string(long(budget)) + " MiB, fits " +
                std::to_string(fit) + ")";
        n = std::min(n, fit);
    }
    // Said when it matters: fewer cells than -t asks, or 64 MiB or more in all.
    if (!quiet() && (!fewer.empty() || mib * n >= 64)) {
        const int ctx = pm.session.n_ctx > 0 ? pm.session.n_ctx : default_ctx(m.config());
        std::fprintf(stderr, "patch: %d grid cell%s at a time%s, each thread a session of %d positions: %d x %.1f MiB%s\n", n,
                     n == 1 ? "" : "s", fewer.c_str(), ctx, n, mib,
                     pm.state_bytes > 0 ? " (KV cache, recurrent state and its snapshots)" : " of KV cache");
    }
    return n;
}

void run_patch_cmd(const PatchCliOptions& o) {
    if (o.clean.empty() == o.clean_ids.empty()) throw UsageError("patch: give the clean prompt: --clean TEXT or --clean-ids IDS");
    if (o.corrupted.empty() == o.corrupted_ids.empty())
        throw UsageError("patch: give the corrupted prompt: --corrupted TEXT or --corrupted-ids IDS");
    const PromptInput clean_in = input_of(o.clean, o.clean_ids, "--clean-ids");
    const PromptInput corrupted_in = input_of(o.corrupted, o.corrupted_ids, "--corrupted-ids");
    PatchOptions opts;
    opts.site = parse_patch_site(o.site);
    auto model = load_model(o.model, Placement::in_place);
    const Tokenizer& tok = model->tokenizer();
    opts.session = session_options(o.model);
    const int n_ctx = opts.session.n_ctx > 0 ? opts.session.n_ctx : default_ctx(model->config());
    const std::vector<TokenId> clean = prompt_ids(*model, clean_in, false, size_t(n_ctx));
    const std::vector<TokenId> corrupted = prompt_ids(*model, corrupted_in, false, size_t(n_ctx));
    const int V = model->config().n_vocab;
    if (!o.target.empty()) opts.target = parse_target(tok, V, o.target, "--target");
    if (!o.contrast.empty()) opts.contrast = parse_target(tok, V, o.contrast, "--contrast");

    opts.parallel = grid_threads(*model, opts, int(clean.size()));
    std::optional<Progress> bar(std::in_place, "patch", "cells");
    opts.progress = [&](int done, int total) { bar->update(size_t(done), size_t(total)); };
    const PatchResult r = run_patch(*model, clean, corrupted, opts);
    bar.reset();

    const std::string metric = r.contrast ? "logit_diff" : "prob";
    if (o.json || !o.html.empty()) {
        nlohmann::json toks = nlohmann::json::array();
        for (size_t i = 0; i < clean.size(); ++i)
            toks.push_back({{"pos", i}, {"clean", nlohmann::json(token_json(tok, clean[i]))}, {"corrupted", nlohmann::json(token_json(tok, corrupted[i]))}});
        nlohmann::json rows = nlohmann::json::array();
        const int L = model->config().n_layer;
        for (int row = 0; row < r.rows; ++row)
            rows.push_back({{"layer", row}, {"final", row == L}, {"metric", r.metric[size_t(row)]},
                            {"restored", r.restored[size_t(row)]}});
        nlohmann::json doc = {{"model", model->source().string()},
                              {"site", patch_site_name(r.site)},
                              {"metric", metric},
                              {"columns", r.site == PatchSite::head ? "head" : "position"},
                              {"target", nlohmann::json(token_json(tok, r.target))},
                              {"contrast", r.contrast ? nlohmann::json(token_json(tok, *r.contrast)) : nlohmann::json(nullptr)},
                              {"clean", r.clean},
                              {"corrupted", r.corrupted},
                              {"tokens", std::move(toks)},
                              {"rows", std::move(rows)}};
        if (!o.html.empty()) {
            nlohmann::json page = doc;
            page["provenance"] = provenance_json(*model);
            write_html_page(o.html, patch_html(page, "journey patch: " + model->source().filename().string()));
        }
        if (o.json) {
            out_line(json_text(doc));
            return;
        }
    }
    std::string all = "target \"" + visible_token(tok.token_bytes(r.target)) + "\" (id " + std::to_string(r.target) + ")";
    if (r.contrast)
        all += " - \"" + visible_token(tok.token_bytes(*r.contrast)) + "\" (id " + std::to_string(*r.contrast) + ")";
    all += "  " + metric + ": clean " + fmt("%.6g", r.clean) + ", corrupted " + fmt("%.6g", r.corrupted) + "\n";
    const bool heads = r.site == PatchSite::head;
    all += "restored fraction, (patched - corrupted) / (clean - corrupted), patching the clean run's " +
           std::string(heads ? "head output at every position, at (layer, head)," : std::string(patch_site_name(r.site)) + " at (layer, position)") +
           " into the corrupted run\n";
    std::string head = "layer  ";
    for (int h = 0; heads && h < r.columns; ++h) head += " " + column("h" + std::to_string(h), 7);
    for (size_t p = 0; !heads && p < clean.size(); ++p) {
        std::string t = visible_token(tok.token_bytes(clean[p]));
        if (clean[p] != corrupted[p]) t = "*" + t;
        head += " " + column(t, 7);
    }
    all += head + "\n";
    const int L = model->config().n_layer;
    for (int row = 0; row < r.rows; ++row) {
        std::string line = row == L ? "final  " : fmt("%-7.0f", double(row));
        for (double v : r.restored[size_t(row)]) line += " " + fmt("%7.3f", std::abs(v) < 5e-4 ? 0.0 : v);  // no "-0.000"
        all += line + "\n";
    }
    if (!heads) all += "(* marks the positions where the prompts differ)\n";
    out(all);
}

}  // namespace

void register_patch(CLI::App& app) {
    auto opts = std::make_shared<PatchCliOptions>();
    CLI::App* cmd = app.add_subcommand("patch", "Activation patching: how much of a clean run each layer and position restores");
    add_model_options(cmd, opts->model);
    cmd->add_option("--clean", opts->clean, "The clean prompt (escapes as -p)");
    cmd->add_option("--corrupted", opts->corrupted, "The corrupted prompt, the same number of tokens (escapes as -p)");
    cmd->add_option("--clean-ids", opts->clean_ids, "The clean prompt as token ids (\"1 2 3\" or \"1,2,3\")");
    cmd->add_option("--corrupted-ids", opts->corrupted_ids, "The corrupted prompt as token ids");
    cmd->add_option("--site", opts->site, "What is patched at each (layer, position): resid (residual stream entering the layer), attn or mlp output; "
                    "head: each head's output at every position, a layer x head grid")
        ->check(CLI::IsMember({"resid", "attn", "mlp", "head"}))
        ->capture_default_str();
    cmd->add_option("--target", opts->target, "Token whose probability is measured: TOKEN or #ID (default: the clean top-1)");
    cmd->add_option("--contrast", opts->contrast, "Measure the logit difference target - TOKEN instead (TOKEN or #ID)");
    cmd->add_flag("--json", opts->json, "One JSON document (docs/json.md)");
    cmd->add_option("--html", opts->html, "Also write the grid as a self-contained HTML page to FILE");
    cmd->callback([opts] { run_patch_cmd(*opts); });
}

}  // namespace journey::cli
