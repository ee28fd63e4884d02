// Activation patching through the forward pass's Intervention hook (patch.h).
#include "journey/trace/patch.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "journey/decode/distribution.h"
#include "journey/errors.h"
#include "journey/kernels/thread_pool.h"

namespace journey {
namespace {

// The intermediate a site's row names: (name, layer).
struct SiteName {
    std::string_view name;
    int layer;
};

int rows_of(PatchSite site, int n_layer) { return site == PatchSite::resid ? n_layer + 1 : n_layer; }

SiteName site_name(PatchSite site, int row, int n_layer) {
    switch (site) {
        case PatchSite::resid: return row < n_layer ? SiteName{"resid_pre", row} : SiteName{"resid_post", n_layer - 1};
        case PatchSite::attn: return {"attn_out", row};
        case PatchSite::mlp: return {"mlp_out", row};
        case PatchSite::head: return {"attn_z", row};
    }
    return {"", -1};
}

// Which row of the site an intermediate is, or -1.
int row_of(PatchSite site, const Intermediate& t, int n_layer) {
    switch (site) {
        case PatchSite::resid:
            if (t.name == "resid_pre") return t.layer;
            if (t.name == "resid_post" && t.layer == n_layer - 1) return n_layer;
            return -1;
        case PatchSite::attn: return t.name == "attn_out" ? t.layer : -1;
        case PatchSite::mlp: return t.name == "mlp_out" ? t.layer : -1;
        case PatchSite::head: return t.name == "attn_z" ? t.layer : -1;
    }
    return -1;
}

// Copies every row of the site, [T, C] per layer, of one eval of the whole prompt.
struct Recorder : Observer {
    Activations& out;
    int n_layer;
    Recorder(Activations& o, int n) : out(o), n_layer(n) {}
    void observe(const Intermediate& t) override {
        const int r = row_of(out.site, t, n_layer);
        if (r < 0) return;
        int64_t width = 1;  // this intermediate's row, from its own dims (a head row: the layer's own shapes)
        for (size_t i = 1; i < t.dims.size(); ++i) width *= t.dims[i];
        out.C[size_t(r)] = int(width);
        out.D[size_t(r)] = out.site == PatchSite::head ? int(t.dims.back()) : 0;
        out.rows[size_t(r)].assign(t.data, t.data + size_t(out.T) * size_t(width));
    }
};

// Puts the recorded rows of one site row at the chosen positions in place of the pass's own.
struct Patcher : Intervention {
    const Activations& from;
    SiteName at;
    std::span<const int> positions;
    int head;  // -1: whole rows
    Patcher(const Activations& f, SiteName a, std::span<const int> p, int h = -1) : from(f), at(a), positions(p), head(h) {}
    void intervene(const Intermediate& t, float* data) override {
        if (t.name != at.name || t.layer != at.layer) return;
        const int row = at.name == "resid_post" ? int(from.rows.size()) - 1 : at.layer;
        const int64_t T = t.dims[0], C = from.C[size_t(row)], D = from.D[size_t(row)];
        for (int p : positions)
            if (p >= t.n_past && p < t.n_past + T) {
                std::span<const float> src = from.at(row, p);
                float* dst = data + (p - t.n_past) * C;
                if (head >= 0) {
                    src = src.subspan(size_t(head) * size_t(D), size_t(D));
                    dst += int64_t{head} * D;
                }
                std::memcpy(dst, src.data(), sizeof(float) * src.size());
            }
    }
};

// Back to the cached prefix [0, n) after a patched suffix: the KV cache is cut; a hybrid's
// recurrent state returns to the snapshot taken at n (Session::snapshot), which the caller took.
void back_to(Session& s, int n) {
    if (s.rewind(n) != n) throw std::logic_error("patch: the session could not return to position " + std::to_string(n));
}

double metric_of(std::span<const float> logits, TokenId target, std::optional<TokenId> contrast) {
    if (contrast) return double(logits[size_t(target)]) - double(logits[size_t(*contrast)]);
    return std::exp(double(logits[size_t(target)]) - log_sum_exp(logits));
}

}  // namespace

PatchSite parse_patch_site(std::string_view s) {
    if (s == "resid") return PatchSite::resid;
    if (s == "attn") return PatchSite::attn;
    if (s == "mlp") return PatchSite::mlp;
    if (s == "head") return PatchSite::head;
    throw UsageError("--site: \"" + std::string(s) + "\" is not a site (use resid, attn, mlp or head)");
}

std::string_view patch_site_name(PatchSite s) {
    switch (s) {
        case PatchSite::resid: return "resid";
        case PatchSite::attn: return "attn";
        case PatchSite::mlp: return "mlp";
        case PatchSite::head: return "head";
    }
    return "";
}

std::vector<float> record_activations(const Model& m, std::span<const TokenId> ids, PatchSite site, Activations& out,
                                      const SessionOptions& so) {
    const int L = m.config().n_layer;
    out.site = site;
    out.T = static_cast<int>(ids.size());
    out.C.assign(size_t(rows_of(site, L)), 0);
    out.D.assign(size_t(rows_of(site, L)), 0);
    out.rows.assign(size_t(rows_of(site, L)), {});
    Recorder rec(out, L);
    Session s(m, so);
    s.set_observer(&rec);
    const std::span<const float> logits = s.eval(ids);
    for (size_t r = 0; r < out.rows.size(); ++r)
        if (out.rows[r].empty()) throw std::logic_error("patch: the pass named no " + std::string(patch_site_name(site)) + " row " + std::to_string(r));
    return {logits.begin(), logits.end()};
}

std::vector<float> run_patched(const Model& m, std::span<const TokenId> ids, const Activations& from, int row,
                               std::span<const int> positions, const SessionOptions& so, int head) {
    Patcher p(from, site_name(from.site, row, m.config().n_layer), positions, head);
    Session s(m, so);
    s.set_intervention(&p);
    const std::span<const float> logits = s.eval(ids);
    return {logits.begin(), logits.end()};
}

PatchMemory patch_memory(const Model& m, int T, const SessionOptions& so) {
    PatchMemory pm;
    pm.session = so;
    const int ctx = so.n_ctx > 0 ? so.n_ctx : default_ctx(m.config());
    bool same_rope = true;  // the prompt's length picks the factors the context does
    for (int l = 0; l < m.config().n_layer; ++l) same_rope = same_rope && m.rope_inv_freq(l, T) == m.rope_inv_freq(l, ctx);
    if (T > 0 && T < ctx && same_rope) pm.session.n_ctx = T;
    const Session s(m, pm.session);
    pm.kv_bytes = s.kv_bytes_per_token() * s.n_ctx();
    pm.state_bytes = s.state_bytes() * (1 + Session::kSnapshotsKept);
    return pm;
}

namespace {

// Runs work(i) for i in [0, n): n == 1 here, with the thread pool; else on n threads (this one
// and n - 1 others), each running its passes alone. The first exception is rethrown here once
// every thread has stopped; `stop` tells the others to take no more cells.
template <class Work>
void on_threads(int n, std::atomic<bool>& stop, const Work& work) {
    if (n <= 1) return work(0);
    std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
    const auto one = [&](int i) {
        try {
            SerialScope serial;
            work(i);
        } catch (...) {
            errors[size_t(i)] = std::current_exception();
            stop = true;
        }
    };
    std::vector<std::thread> threads;
    for (int i = 1; i < n; ++i) threads.emplace_back(one, i);
    one(0);
    for (auto& t : threads) t.join();
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
}

}  // namespace

PatchResult run_patch(const Model& m, std::span<const TokenId> clean, std::span<const TokenId> corrupted,
                      const PatchOptions& opts) {
    if (clean.size() != corrupted.size())
        throw UsageError("patch: the clean prompt has " + std::to_string(clean.size()) + " tokens and the corrupted one " +
                         std::to_string(corrupted.size()) + "; patching needs the same number");
    if (clean.empty()) throw UsageError("patch: empty prompts");
    const int L = m.config().n_layer, T = static_cast<int>(clean.size()), V = m.config().n_vocab;
    PatchResult r;
    r.site = opts.site;
    r.T = T;
    r.rows = rows_of(opts.site, L);
    Activations from;
    const std::vector<float> clean_logits = record_activations(m, clean, opts.site, from, opts.session);
    r.target = opts.target ? *opts.target : TokenId(std::max_element(clean_logits.begin(), clean_logits.end()) - clean_logits.begin());
    r.contrast = opts.contrast;
    for (std::optional<TokenId> id : {std::optional(r.target), r.contrast})
        if (id && (*id < 0 || *id >= V)) throw UsageError("patch: token id " + std::to_string(*id) + " is outside the vocabulary");
    r.clean = metric_of(clean_logits, r.target, r.contrast);

    const SessionOptions so = patch_memory(m, T, opts.session).session;
    r.corrupted = metric_of(Session(m, so).eval(corrupted), r.target, r.contrast);
    const double span = r.clean - r.corrupted;
    const auto restored = [&](double v) { return span != 0 ? (v - r.corrupted) / span : 0.0; };
    const bool heads = opts.site == PatchSite::head;
    if (heads) {  // layer x head, each head at every position
        const int H = from.heads(0);
        for (int row = 0; row < r.rows; ++row)
            if (from.heads(row) != H)
                throw UsageError("--site head: layer " + std::to_string(row) + " has " + std::to_string(from.heads(row)) +
                                 " heads and layer 0 " + std::to_string(H) + "; the layer x head grid needs the same count");
        r.columns = H;
    } else {
        r.columns = T;
    }
    r.metric.assign(size_t(r.rows), std::vector<double>(size_t(r.columns)));
    r.restored = r.metric;

    // Cells are taken in order: head, (row, head) one at a time; else a position p with all its
    // rows (they share the cached prefix [0, p)). Each thread writes only its own cells.
    const int cells = r.rows * r.columns, units = heads ? cells : T;
    const int n = std::clamp(opts.parallel, 1, units);
    std::atomic<int> next{0};
    std::atomic<bool> stop{false};
    std::mutex progress_mutex;
    int done = 0;
    const auto take = [&] { return stop ? units : next.fetch_add(1); };
    const auto finished = [&](int k) {
        if (!opts.progress) return;
        const std::lock_guard<std::mutex> lock(progress_mutex);
        opts.progress(done += k, cells);
    };
    const auto cell = [&](Session& s, int row, int col, std::span<const int> at, int head, int from_pos) {
        Patcher patch(from, site_name(opts.site, row, L), at, head);
        s.set_intervention(&patch);
        const double v = metric_of(s.eval(corrupted.subspan(size_t(from_pos))), r.target, r.contrast);
        s.set_intervention(nullptr);
        back_to(s, from_pos);
        r.metric[size_t(row)][size_t(col)] = v;
        r.restored[size_t(row)][size_t(col)] = restored(v);
    };
    if (heads) {
        // Positions before the prompts first differ are the same in both runs: computed once per thread.
        int first = 0;
        while (first < T - 1 && clean[size_t(first)] == corrupted[size_t(first)]) ++first;
        std::vector<int> every(static_cast<size_t>(T), 0);
        for (int p = 0; p < T; ++p) every[size_t(p)] = p;
        on_threads(n, stop, [&](int) {
            Session s(m, so);
            if (first > 0) s.eval(corrupted.first(size_t(first)));
            s.snapshot();
            for (int c; (c = take()) < units;) {
                cell(s, c / r.columns, c % r.columns, every, c % r.columns, first);
                finished(1);
            }
        });
        return r;
    }
    on_threads(n, stop, [&](int) {
        Session s(m, so);
        for (int p; (p = take()) < units;) {
            // The cached prefix [0, p), a token at a time: the same bits whichever positions this thread took before.
            while (s.n_past() < p) s.eval(corrupted.subspan(size_t(s.n_past()), 1), LogitsFor::last);
            s.snapshot();
            const int at[1] = {p};
            for (int row = 0; row < r.rows; ++row) cell(s, row, p, at, -1, p);
            finished(r.rows);
        }
    });
    return r;
}

}  // namespace journey
