// journey trace: the journey of one token through the model, stage by stage (trace.h).
#include <cerrno>
#include <fstream>
#include <optional>

#include "commands.h"
#include "common.h"
#include "journey/errors.h"
#include "journey/trace/trace.h"
#include "journey/trace/trace_html.h"
#include "model_options.h"
#include "numeric_options.h"
#include "progress.h"
#include "prompt_ids.h"
#include "trace_text.h"

namespace journey::cli {
namespace {

struct TraceCliOptions {
    ModelOptions model;
    PromptSource prompt;
    int position = -1;        // --pos: the traced token; negative counts from the end
    int rows = 10;            // --rows: tokens per lens and in the final distribution
    std::string target;       // --target: TOKEN or #ID; empty = the final top-1
    std::string format = "text";  // --format: text | json | jsonl
    bool json = false;        // --json: --format json
    std::string html;         // --html: also write a self-contained HTML page here
    bool truncate = false;    // --truncate: keep the last n_ctx tokens of a longer prompt
    bool attribute = false;   // --attribute: direct logit attribution of the target
    std::string contrast;     // --contrast: TOKEN or #ID; attribute target - contrast
};

void write_html(const std::string& path, const std::string& page) {
    std::ofstream f(path, std::ios::binary);
    if (!f) throw InputError("--html " + path + ": cannot write: " + why(errno));
    if (!(f << page) || !f.flush()) throw InputError("--html " + path + ": cannot write: " + why(errno));
}

void run_trace_cmd(const TraceCliOptions& o) {
    const PromptInput input = read_prompt_input(o.prompt);
    auto model = load_model(o.model, Placement::in_place);
    const Tokenizer& tok = model->tokenizer();
    TraceOptions opts;
    opts.session = session_options(o.model);
    const int n_ctx = opts.session.n_ctx > 0 ? opts.session.n_ctx : default_ctx(model->config());
    const std::vector<TokenId> ids = prompt_ids(*model, input, o.truncate, size_t(n_ctx));

    opts.position = o.position;
    opts.top_k = o.rows;
    if (!o.target.empty()) opts.target = parse_target(tok, model->config().n_vocab, o.target);
    opts.full_patterns = !o.html.empty();
    opts.attribute = o.attribute || !o.contrast.empty() || !o.html.empty();  // cheap: the page shows it
    if (!o.contrast.empty()) opts.contrast = parse_target(tok, model->config().n_vocab, o.contrast, "--contrast");
    // A long prompt takes a while: a bar by layers on a terminal, gone before the output.
    std::optional<Progress> bar(std::in_place, "trace", "layers");
    opts.progress = [&](int done, int total) { bar->update(size_t(done), size_t(total)); };
    const Trace tr = run_trace(*model, ids, opts);
    bar.reset();

    if (!o.html.empty()) {
        const std::string title = "journey trace: " + model->source().filename().string();
        write_html(o.html, trace_html(trace_json(tr, tok, true), title));
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
    cmd->add_option("--pos", opts->position, "Position of the traced token (negative: from the end)")
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
