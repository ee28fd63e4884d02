// journey bench: prompt-processing and generation speed, load time and peak memory, in the
// manner of llama-bench. Figures go to stdout (a table, or one JSON object); progress to stderr.
#include <chrono>
#include <cstdio>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "commands.h"
#include "common.h"
#include "journey/decode/bench.h"
#include "journey/kernels/gemv.h"
#include "journey/kernels/kernels.h"
#include "model_options.h"
#include "progress.h"

namespace journey::cli {
namespace {

struct BenchCliOptions {
    ModelOptions model;
    BenchOptions bench;
    bool json = false;
};

void run_bench_cmd(const BenchCliOptions& o) {
    const auto t0 = std::chrono::steady_clock::now();
    auto model = load_model(o.model, Placement::copy);
    const bool in_place = weights_in_place(o.model, Placement::copy);
    const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    spdlog::info("bench: loaded {} in {:.1f} ms", model->source().string(), load_ms);
    // Progress: a bar on a terminal; with -v, one log line per repetition.
    const int runs = (o.bench.n_prompt > 0) + (o.bench.n_gen > 0);
    const size_t total = size_t(runs * o.bench.reps);  // one call per timed repetition
    size_t done = 0;
    Progress bar("bench", "runs");
    BenchOptions bench = o.bench;
    bench.kv_type = o.model.kv_type;
    const BenchResult r = run_bench(*model, bench, num_threads(), [&](const std::string& line) {
        spdlog::info("bench: {}", line);
        bar.update(++done, total);
    });
    const double rss_mb = double(peak_rss_bytes()) / (1024.0 * 1024.0);
    const double huge_mb = double(huge_page_bytes()) / (1024.0 * 1024.0);
    const std::string dtype(dtype_name(model->weight_dtype()));
    if (o.json) {
        nlohmann::json j = {{"model", model->source().string()}, {"dtype", dtype}, {"threads", num_threads()},
                            {"pp_tok_s", r.pp_tok_s}, {"tg_tok_s", r.tg_tok_s}, {"load_ms", load_ms},
                            {"peak_rss_mb", rss_mb}, {"pp_tok_s_cpu", r.pp_tok_s_cpu},
                            {"tg_tok_s_cpu", r.tg_tok_s_cpu},
                            {"kernels", std::string(kernel_isa()) + "/" + stream_shape_name()},
                            {"token_bytes", r.token_bytes}, {"mmap", in_place}, {"huge_pages_mb", huge_mb},
                            {"n_depth", o.bench.n_depth}, {"kv_type", kv_type_name(bench.kv_type)},
                            {"parallel", o.bench.n_parallel}};
        if (o.bench.n_gen > 0) j["tg_weights_gb_s"] = r.tg_weights_gb_s;
        if (r.read_gb_s > 0) {
            j["read_gb_s"] = r.read_gb_s;
            j["tg_read_share"] = r.tg_read_share;
        }
        out_line(json_text(j));
        return;
    }
    char buf[256];
    out_line("| model | dtype | threads | test | tok/s | tok/s by CPU time |");
    out_line("| --- | --- | ---: | --- | ---: | ---: |");
    const std::string name = model->source().filename().string();
    const std::string at = o.bench.n_depth > 0 ? " @ d" + std::to_string(o.bench.n_depth) : "";
    if (o.bench.n_prompt > 0) {
        std::snprintf(buf, sizeof buf, "| %s | %s | %d | pp%d%s | %.1f | %.1f |", name.c_str(), dtype.c_str(), num_threads(),
                      o.bench.n_prompt, at.c_str(), r.pp_tok_s, r.pp_tok_s_cpu);
        out_line(buf);
    }
    if (o.bench.n_gen > 0) {
        const std::string np = o.bench.n_parallel > 1 ? " x" + std::to_string(o.bench.n_parallel) : "";
        std::snprintf(buf, sizeof buf, "| %s | %s | %d | tg%d%s%s | %.1f | %.1f |", name.c_str(), dtype.c_str(), num_threads(),
                      o.bench.n_gen, np.c_str(), at.c_str(), r.tg_tok_s, r.tg_tok_s_cpu);
        out_line(buf);
    }
    std::snprintf(buf, sizeof buf, "load %.1f ms, peak RSS %.1f MiB", load_ms, rss_mb);
    out_line(buf);
    if (in_place) std::snprintf(buf, sizeof buf, "weights read in place from the file (--mmap)");
    else std::snprintf(buf, sizeof buf, "weights copied at load, %.0f MiB of them on huge pages", huge_mb);
    out_line(buf);
    if (o.bench.n_gen > 0 && r.token_bytes > 0) {
        std::snprintf(buf, sizeof buf, "tg reads %.1f MB of weights a token: %.1f GB/s", r.token_bytes / 1e6,
                      r.tg_weights_gb_s);
        out_line(buf);
    }
    if (r.read_gb_s > 0) {
        std::snprintf(buf, sizeof buf, "read bandwidth over the same weights: %.1f GB/s; tg at %.0f%% of it (medians)",
                      r.read_gb_s, 100 * r.tg_read_share);
        out_line(buf);
    }
}

}  // namespace

void register_bench(CLI::App& app) {
    auto opts = std::make_shared<BenchCliOptions>();
    CLI::App* cmd = app.add_subcommand("bench", "Measure prompt and generation speed, load time and peak memory");
    add_model_options(cmd, opts->model);
    cmd->add_option("-p,--n-prompt", opts->bench.n_prompt, "Prompt tokens processed in one eval (0: skip)")
        ->check(CLI::NonNegativeNumber)->capture_default_str();
    cmd->add_option("-n,--n-gen", opts->bench.n_gen, "Tokens generated one at a time (0: skip)")
        ->check(CLI::NonNegativeNumber)->capture_default_str();
    cmd->add_option("-d,--n-depth", opts->bench.n_depth,
                    "Tokens already in the cache when each test starts, as in llama-bench (a prompt evaluated once, untimed)")
        ->check(CLI::NonNegativeNumber)->capture_default_str();
    cmd->add_option("-r,--repetitions", opts->bench.reps, "Timed repetitions; the median is reported")
        ->check(CLI::PositiveNumber)->capture_default_str();
    cmd->add_option("--parallel", opts->bench.n_parallel,
                    "tg with N sequences generating together (-np N, as llama-batched-bench's -npl): their aggregate tok/s")
        ->check(CLI::Range(1, 256))->capture_default_str();
    cmd->add_flag("--bandwidth", opts->bench.bandwidth,
                  "Before each generation repetition, time a plain read of the same weights with the same threads, "
                  "and report generation's share of that read bandwidth");
    cmd->add_flag("--json", opts->json, "Print one JSON object");
    cmd->callback([opts] { run_bench_cmd(*opts); });
}

}  // namespace journey::cli
