// journey trace: the journey of one token through the model, stage by stage (trace.h).
#include <cerrno>
#include <charconv>
#include <chrono>
#include <ctime>
#include <fstream>
#include <optional>

#include "commands.h"
#include "common.h"
#include "journey/errors.h"
#include "journey/formats/tensor.h"
#include "journey/model/arch.h"
#include "journey/trace/provenance.h"
#include "journey/trace/trace.h"
#include "journey/trace/trace_html.h"
#include "model_options.h"
#include "numeric_options.h"
#include "progress.h"
#include "provenance_json.h"
#include "prompt_ids.h"
#include "trace_text.h"

namespace journey::cli {
namespace {

struct TraceCliOptions {
    ModelOptions model;
    PromptSource prompt;
    std::string position = "-1";  // --pos: the traced token (negative: from the end), or "all"
    int rows = 10;            // --rows: tokens per lens and in the final distribution
    std::string target;       // --target: TOKEN or #ID; empty = the final top-1
    std::string format = "text";  // --format: text | json | jsonl
    bool json = false;        // --json: --format json
    std::string html;         // --html: also write a self-contained HTML page here
    bool truncate = false;    // --truncate: keep the last n_ctx tokens of a longer prompt
    bool attribute = false;   // --attribute: direct logit attribution of the target
    std::string contrast;     // --contrast: TOKEN or #ID; attribute target - contrast
};

constexpr size_t kMaxAllPositions = 1024;
constexpr double kMaxPatternCells = 250000;  // layers x heads x T(T+1)/2 weights in the page

// An integer flag given as text (so that --pos also takes "all"): UsageError naming the flag.
int parse_int_flag(const std::string& text, const char* flag) {
    int v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        throw UsageError(std::string(flag) + ": expected an integer or all, got '" + text + "'");
    return v;
}


void run_trace_cmd(const TraceCliOptions& o) {
    const PromptInput input = read_prompt_input(o.prompt);
    auto model = load_model(o.model, Placement::in_place);
    const Tokenizer& tok = model->tokenizer();
    TraceOptions opts;
    opts.session = session_options(o.model);
    const int n_ctx = opts.session.n_ctx > 0 ? opts.session.n_ctx : default_ctx(model->config());
    const std::vector<TokenId> ids = prompt_ids(*model, input, o.truncate, size_t(n_ctx));

    if (o.position == "all") {
        if (o.html.empty()) throw UsageError("--pos all: every position is for the page; add --html FILE");
        if (ids.size() > kMaxAllPositions)
            throw UsageError("--pos all: the prompt has " + std::to_string(ids.size()) + " tokens; at most " +
                             std::to_string(kMaxAllPositions) + " (the page keeps every position's numbers)");
        opts.all_positions = true;
        opts.position = -1;
    } else {
        opts.position = parse_int_flag(o.position, "--pos");
    }
    opts.top_k = o.rows;
    if (!o.target.empty()) opts.target = parse_target(tok, model->config().n_vocab, o.target);
    // Every head's whole pattern, while the page stays small (README: a 200-token trace of a 1B
    // model must fit in 2 MB); above the bound the page keeps the traced rows only and says so.
    const ModelConfig& cfg = model->config();
    const double pattern_cells = double(cfg.n_layer) * cfg.n_head * double(ids.size()) * double(ids.size() + 1) / 2;
    opts.full_patterns = !o.html.empty() && pattern_cells <= kMaxPatternCells;
    opts.attribute = o.attribute || !o.contrast.empty() || !o.html.empty();  // cheap: the page shows it
    if (!o.contrast.empty()) opts.contrast = parse_target(tok, model->config().n_vocab, o.contrast, "--contrast");
    // A long prompt takes a while: a bar by layers on a terminal, gone before the output.
    std::optional<Progress> bar(std::in_place, "trace", "layers");
    opts.progress = [&](int done, int total) { bar->update(size_t(done), size_t(total)); };
    const Trace tr = run_trace(*model, ids, opts);
    bar.reset();

    if (!o.html.empty()) {
        const std::string title = "journey trace: " + model->source().filename().string();
        nlohmann::json doc = trace_json(tr, tok, true);
        doc["provenance"] = provenance_json(*model);
        if (!opts.full_patterns)
            doc["full_patterns_omitted"] = "layers x heads x T(T+1)/2 = " + std::to_string(int64_t(pattern_cells)) +
                                           " weights, above the page's " + std::to_string(int64_t(kMaxPatternCells));
        write_html_page(o.html, trace_html(doc, title));
    }
    if (o.json || o.format == "json") {
        auto doc = trace_json(tr, tok);
        doc["model"] = model->source().string();
        out_line(json_text(doc));
    } else if (o.format == "jsonl") {
        auto lines = trace_jsonl(trace_json(tr, tok));
        lines.front()["model"] = model->source().string();  // the "tokens" stage says what ran
        for (const auto& line : lines) out_line(json_text(line));
    } else {
        std::string all;
        for (const std::string& line : trace_text(tr, tok)) all += line + '\n';
        out(all);
    }
}

}  // namespace

void register_trace(CLI::App& app) {
    auto opts = std::make_shared<TraceCliOptions>();
    CLI::App* cmd = app.add_subcommand("trace", "Follow one token through the model: attention, residuals, logit lens");
    add_model_options(cmd, opts->model);
    add_prompt_options(cmd, opts->prompt, {.ids = true, .drop_newline = true});
    cmd->add_option("--pos", opts->position,
                    "Position of the traced token (negative: from the end); all: every position, for --html's page")
        ->capture_default_str();
    add_rows_option(cmd, opts->rows, "Tokens listed per logit lens and for the final distribution");
    cmd->add_option("--target", opts->target, "Token whose rank the lens follows: TOKEN or #ID (default: final top-1)");
    cmd->add_option("--format", opts->format, "Output: text, json (one document) or jsonl (one line per stage)")
        ->check(CLI::IsMember({"text", "json", "jsonl"}))
        ->capture_default_str();
    cmd->add_flag("--json", opts->json, "Same as --format json");
    cmd->add_option("--html", opts->html, "Also write a self-contained HTML page of the trace to FILE");
    cmd->add_flag("--truncate", opts->truncate, "Keep the last n_ctx tokens of a longer prompt");
    cmd->add_flag("--attribute", opts->attribute,
                  "Direct logit attribution: each embedding, head and MLP's part of the target's logit");
    cmd->add_option("--contrast", opts->contrast,
                    "Attribute the logit difference target - TOKEN (TOKEN or #ID; implies --attribute)");
    cmd->callback([opts] { run_trace_cmd(*opts); });
}

}  // namespace journey::cli
