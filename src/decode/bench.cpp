#include "journey/decode/bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include <sys/resource.h>

#include "journey/errors.h"
#include "journey/kernels/read_bandwidth.h"
#include "journey/model/session.h"

namespace journey {
namespace {

using Clock = std::chrono::steady_clock;

// Seconds of CPU time (user + system) this process has used, all threads.
double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    auto s = [](const timeval& t) { return double(t.tv_sec) + 1e-6 * double(t.tv_usec); };
    return s(u.ru_utime) + s(u.ru_stime);
}

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// A fixed pseudo-random sequence of ids (a linear congruential generator).
std::vector<TokenId> bench_tokens(int n, int n_vocab) {
    std::vector<TokenId> ids(static_cast<size_t>(n));
    uint32_t s = 12345;
    for (TokenId& id : ids) {
        s = s * 1664525u + 1013904223u;
        id = static_cast<TokenId>((s >> 8) % static_cast<uint32_t>(n_vocab));
    }
    return ids;
}

// Back to the first `depth` positions: an empty cache, or the depth prompt's, which stays valid.
void back_to(Session& s, int depth) {
    if (depth == 0) s.reset();
    else s.rewind(depth);
}

// Seconds for one prompt-processing run: all tokens in one eval, after `depth` cached positions.
double time_pp(Session& s, const std::vector<TokenId>& ids, int depth) {
    back_to(s, depth);
    const auto t0 = Clock::now();
    s.eval(ids);
    return seconds_since(t0);
}

// Seconds for one generation run: one token per eval, after `depth` cached positions.
double time_tg(Session& s, const std::vector<TokenId>& ids, int depth) {
    back_to(s, depth);
    const auto t0 = Clock::now();
    for (TokenId id : ids) s.eval(std::span<const TokenId>(&id, 1));
    return seconds_since(t0);
}

}  // namespace

BenchResult run_bench(const Model& model, const BenchOptions& o, int threads,
                      const std::function<void(const std::string&)>& progress) {
    const int n_ctx = model.config().n_ctx;
    if (o.n_depth < 0 || int64_t{o.n_depth} + std::max(o.n_prompt, o.n_gen) > n_ctx)
        throw InputError("bench: -d plus -p or -n must not exceed the model's context of " + std::to_string(n_ctx));
    auto say = [&](const std::string& line) { if (progress) progress(line); };
    if (o.n_parallel < 1) throw UsageError("--parallel: must be at least 1, got " + std::to_string(o.n_parallel));
    const SessionOptions so{.n_ctx = std::max(1, o.n_depth + std::max(o.n_prompt, o.n_gen)), .kv_type = o.kv_type};
    // tg with --parallel N: N sequences, each token's step one pass for all N (Session::eval_tokens).
    std::vector<std::unique_ptr<Session>> owned;
    std::vector<Session*> seqs;
    for (int i = 0; i < o.n_parallel; ++i) {
        owned.push_back(std::make_unique<Session>(model, so));
        seqs.push_back(owned.back().get());
    }
    Session& session = *seqs[0];
    if (o.n_depth > 0) {  // the depth prompt, once, untimed: each test rewinds to it
        for (Session* q : seqs) {
            q->eval(bench_tokens(o.n_depth, model.config().n_vocab));
            q->snapshot();  // a hybrid's recurrent state goes back only to a snapshot
        }
    }
    // Seconds for one generation run of every sequence together (aggregate: N tokens a step).
    auto time_tg_all = [&](Session&, const std::vector<TokenId>& ids, int depth) {
        for (Session* q : seqs) back_to(*q, depth);
        std::vector<TokenId> step(seqs.size());
        const auto t0 = Clock::now();
        for (TokenId id : ids) {
            std::fill(step.begin(), step.end(), id);
            Session::eval_tokens(seqs, step);
        }
        return seconds_since(t0);
    };
    BenchResult r;
    struct Test {
        const char* name;
        int n;
        double BenchResult::*wall;
        double BenchResult::*cpu;
        std::function<double(Session&, const std::vector<TokenId>&, int)> run;
        int per_step = 1;  // tokens a step: the sequences generating together
    };
    const Test tests[] = {{"pp", o.n_prompt, &BenchResult::pp_tok_s, &BenchResult::pp_tok_s_cpu, time_pp, 1},
                          {"tg", o.n_gen, &BenchResult::tg_tok_s, &BenchResult::tg_tok_s_cpu,
                           o.n_parallel > 1 ? decltype(Test::run)(time_tg_all) : decltype(Test::run)(time_tg), o.n_parallel}};
    const auto reads = model.weights().token_reads();
    for (const auto& m : reads) r.token_bytes += double(m.size());
    std::vector<double> read_rates, shares;
    for (const Test& t : tests) {
        if (t.n <= 0) continue;
        const bool gauge = o.bandwidth && std::string_view(t.name) == "tg" && o.n_parallel == 1 && r.token_bytes > 0;
        const std::vector<TokenId> ids = bench_tokens(t.n, model.config().n_vocab);
        t.run(session, ids, o.n_depth);  // warm-up: pages in the weights, sizes the buffers
        std::vector<double> rates, cpu_rates;
        for (int rep = 0; rep < std::max(1, o.reps); ++rep) {
            double read_s = 0;
            if (gauge) {  // the fastest of three reads
                for (int k = 0; k < 3; ++k) {
                    const auto t0 = Clock::now();
                    const uint64_t sum = read_all(reads);
                    const double s = seconds_since(t0);
                    asm volatile("" ::"r"(sum));
                    read_s = k == 0 ? s : std::min(read_s, s);
                }
                read_rates.push_back(r.token_bytes / read_s / 1e9);
            }
            const double cpu0 = cpu_seconds();
            const double s = t.run(session, ids, o.n_depth);
            rates.push_back(double(t.n) * t.per_step / s);
            cpu_rates.push_back(double(t.n) * t.per_step / ((cpu_seconds() - cpu0) / std::max(1, threads)));
            char buf[160];
            int len = std::snprintf(buf, sizeof buf, "%s%d rep %d/%d: %.1f tok/s (%.1f by CPU time)", t.name, t.n,
                                    rep + 1, o.reps, rates.back(), cpu_rates.back());
            if (gauge) {
                shares.push_back(read_s * t.n / s);  // (tokens/s x bytes) / (bytes / read_s)
                std::snprintf(buf + len, sizeof buf - size_t(len), "; read %.1f GB/s just before, tg at %.0f%% of it",
                              read_rates.back(), 100 * shares.back());
            }
            say(buf);
        }
        r.*t.wall = median(rates);
        r.*t.cpu = median(cpu_rates);
    }
    r.tg_weights_gb_s = r.tg_tok_s / o.n_parallel * r.token_bytes / 1e9;
    if (!read_rates.empty()) {
        r.read_gb_s = median(read_rates);
        r.tg_read_share = median(shares);
    }
    return r;
}

namespace {
// The value of `key` (a "Name:" line in kB) in a /proc file, in bytes; 0 when absent.
int64_t proc_kb_field(const char* path, const std::string& key) {
    std::ifstream f(path);
    std::string word;
    while (f >> word) {
        if (word == key) {
            int64_t kb = 0;
            f >> kb;
            return kb * 1024;
        }
        f.ignore(1 << 16, '\n');
    }
    return 0;
}
}  // namespace

int64_t peak_rss_bytes() { return proc_kb_field("/proc/self/status", "VmHWM:"); }
int64_t huge_page_bytes() { return proc_kb_field("/proc/self/smaps_rollup", "AnonHugePages:"); }

}  // namespace journey
