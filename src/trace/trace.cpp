// TraceObserver: picks the traced position out of every named intermediate of one eval.
#include "journey/trace/trace.h"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "journey/decode/sampler.h"
#include "journey/errors.h"
#include "journey/kernels/kernels.h"
#include "journey/model/moe.h"
#include "journey/model/session.h"
#include "journey/model/unembed.h"
#include "trace_math.h"

namespace journey {
using trace_math::entropy_of;
using trace_math::inner_size;
using trace_math::l2_norm;

// The sampler's own stages pick and order the best (sampler.h), so the page sees what it sees.
SamplingTrace sampling_trace(std::span<const float> logits, int keep) {
    SamplingTrace s;
    s.n_vocab = static_cast<int>(logits.size());
    Candidates c = make_candidates(logits);
    apply_top_k(c, keep);
    s.top.reserve(c.size());
    std::vector<bool> in_top(logits.size(), false);
    for (const Candidate& x : c) {
        s.top.emplace_back(x.id, x.logit);
        in_top[static_cast<size_t>(x.id)] = true;
    }
    const Candidates all = make_candidates(logits);  // the same finite logits the sampler uses
    const double m = c.empty() ? 0.0 : double(c.front().logit);
    s.tail_max = -std::numeric_limits<float>::max();
    for (const Candidate& x : all) {
        if (in_top[static_cast<size_t>(x.id)]) continue;
        s.tail_exp_sum += std::exp(double(x.logit) - m);
        s.tail_max = std::max(s.tail_max, x.logit);
    }
    return s;
}

int resolve_position(int pos, int T) {
    const int p = pos < 0 ? pos + T : pos;
    if (p < 0 || p >= T)
        throw UsageError("--pos: " + std::to_string(pos) + " is outside the prompt's " + std::to_string(T) +
                         " tokens (use 0.." + std::to_string(T - 1) + ", or -1..-" + std::to_string(T) + " from the end)");
    return p;
}

TokenId parse_target(const Tokenizer& tok, int n_vocab, std::string_view spec, std::string_view flag) {
    if (spec.size() > 1 && spec[0] == '#') {
        TokenId id = -1;
        auto [end, ec] = std::from_chars(spec.data() + 1, spec.data() + spec.size(), id);
        if (ec != std::errc() || end != spec.data() + spec.size() || id < 0 || id >= n_vocab)
            throw UsageError(std::string(flag) + ": " + std::string(spec) + " is not a token id in 0.." + std::to_string(n_vocab - 1));
        return id;
    }
    const std::vector<TokenId> ids = tok.encode(spec);
    if (ids.size() != 1) {
        std::string list;
        for (TokenId id : ids) {
            if (!list.empty()) list += ' ';
            list += std::to_string(id);
        }
        throw UsageError(std::string(flag) + ": \"" + valid_utf8(spec) + "\" encodes to " + std::to_string(ids.size()) +
                         " tokens (" + list + "); give a single token, or #ID");
    }
    return ids[0];
}

TraceObserver::TraceObserver(const Model& m, std::span<const TokenId> tokens, const TraceOptions& opts)
    : model_(m), opts_(opts) {
    if (tokens.empty()) throw InputError("trace: no tokens to trace");
    const ModelConfig& c = m.config();
    trace_.tokens.assign(tokens.begin(), tokens.end());
    trace_.position = resolve_position(opts.position, static_cast<int>(tokens.size()));
    trace_.position_kind = c.position;
    trace_.layers.resize(static_cast<size_t>(c.n_layer));
    lens_logits_.resize(static_cast<size_t>(c.n_layer));
    if (opts.attribute) {
        rows_.attn_out.resize(static_cast<size_t>(c.n_layer));
        rows_.heads.resize(static_cast<size_t>(c.n_layer));
        rows_.mlp_out.resize(static_cast<size_t>(c.n_layer));
        rows_.experts.resize(static_cast<size_t>(c.n_layer));
        rows_.expert_ids.resize(static_cast<size_t>(c.n_layer));
        rows_.ple_out.resize(static_cast<size_t>(c.n_layer));
        rows_.shared.resize(static_cast<size_t>(c.n_layer));
    }
    for (int l = 0; l < c.n_layer; ++l) {
        LayerTrace& lt = trace_.layers[static_cast<size_t>(l)];
        lt.layer = l;
        if (c.is_recurrent(l)) {  // a hybrid's linear-attention layer: Gated DeltaNet heads
            lt.recurrent = true;
            lt.delta_heads.resize(static_cast<size_t>(c.ssm_v_heads));
            for (int h = 0; h < c.ssm_v_heads; ++h) lt.delta_heads[static_cast<size_t>(h)].head = h;
            continue;
        }
        lt.heads.resize(static_cast<size_t>(c.n_head));
        for (int h = 0; h < c.n_head; ++h) lt.heads[static_cast<size_t>(h)].head = h;
    }
}

std::span<const float> TraceObserver::row(const Intermediate& t) const {
    if (t.n_past != 0 || t.dims.empty() || t.dims[0] != static_cast<int64_t>(trace_.tokens.size()))
        throw std::logic_error("trace: expected one eval of the whole prompt, got " + std::string(t.name));
    const int64_t n = inner_size(t);
    return {t.data + trace_.position * n, static_cast<size_t>(n)};
}

LayerTrace& TraceObserver::layer(int l) {
    if (l < 0 || l >= static_cast<int>(trace_.layers.size())) throw std::logic_error("trace: layer out of range");
    return trace_.layers[static_cast<size_t>(l)];
}

void TraceObserver::record(std::vector<float>& to, const Intermediate& t) const {
    if (!opts_.attribute) return;
    const std::span<const float> r = row(t);
    to.assign(r.begin(), r.end());
}

void TraceObserver::observe(const Intermediate& t) {
    const std::string_view n = t.name;
    if (opts_.all_positions) observe_all(t);
    if (opts_.attribute) {  // the rows the attribution reads (attribution.h)
        const bool last_layer = t.layer == static_cast<int>(trace_.layers.size()) - 1;
        if (n == "tok_embed") record(rows_.tok_embed, t);
        else if (n == "pos_embed") record(rows_.pos_embed, t);
        else if (n == "attn_out") record(rows_.attn_out[size_t(layer(t.layer).layer)], t);
        else if (n == "mlp_out") record(rows_.mlp_out[size_t(layer(t.layer).layer)], t);
        else if (n == "moe_expert_out") record(rows_.experts[size_t(layer(t.layer).layer)], t);
        else if (n == "ple_out") record(rows_.ple_out[size_t(layer(t.layer).layer)], t);
        else if (n == "moe_shared_out") record(rows_.shared[size_t(layer(t.layer).layer)], t);
        else if (n == "resid_post" && last_layer) record(rows_.resid, t);
        else if (n == "final_norm" && model_.config().final_softcap > 0) record(final_normed_, t);
    }
    if (n == "tok_embed") trace_.embedding.token_norm = l2_norm(row(t));
    else if (n == "pos_embed") trace_.embedding.position_norm = l2_norm(row(t));
    else if (n == "embed") trace_.embedding.sum_norm = l2_norm(row(t));
    else if (n == "resid_pre") layer(t.layer).resid_pre = l2_norm(row(t));
    else if (n == "resid_mid") layer(t.layer).resid_mid = l2_norm(row(t));
    else if (n == "attn_out") layer(t.layer).attn_out = l2_norm(row(t));
    else if (n == "mlp_out") layer(t.layer).mlp_out = l2_norm(row(t));
    else if (n == "attn_pattern") observe_pattern(t);
    else if (n == "attn_z") observe_heads(t);
    else if (n == "moe_logits") observe_moe(t);
    else if (n == "ssm_beta" || n == "ssm_decay" || n == "ssm_state_norm") observe_delta(t);
    else if (n == "attn_gate") observe_gate(t);
    else if (n == "resid_post") {
        layer(t.layer).resid_post = l2_norm(row(t));
        observe_lens(t);
        if (opts_.progress) opts_.progress(t.layer + 1, static_cast<int>(trace_.layers.size()));
    } else if (n == "logits") {
        const int64_t R = t.dims[0], V = t.dims[1];
        const int64_t T = static_cast<int64_t>(trace_.tokens.size());
        if (R != T && !(R == 1 && trace_.position == T - 1))
            throw std::logic_error("trace: the eval did not compute logits at the traced position");
        const float* r = t.data + (R == 1 ? 0 : trace_.position) * V;
        final_logits_.assign(r, r + V);
    }
}

// attn_pattern [H, T, T]: the traced query's row of every head (and every row, if asked).
void TraceObserver::observe_pattern(const Intermediate& t) {
    LayerTrace& lt = layer(t.layer);
    const int64_t H = t.dims[0], T = t.dims[1], K = t.dims[2];
    if (t.n_past != 0 || T != K || T != static_cast<int64_t>(trace_.tokens.size()))
        throw std::logic_error("trace: expected one eval of the whole prompt");
    for (int64_t h = 0; h < H; ++h) {
        HeadTrace& ht = lt.heads[static_cast<size_t>(h)];
        const float* head = t.data + h * T * K;
        const float* r = head + trace_.position * K;
        ht.pattern.assign(r, r + K);
        ht.entropy = entropy_of(ht.pattern);
        ht.top_keys.resize(static_cast<size_t>(trace_.position + 1));  // the keys it may see
        std::iota(ht.top_keys.begin(), ht.top_keys.end(), 0);
        const size_t n = std::min(ht.top_keys.size(), static_cast<size_t>(std::max(opts_.top_keys, 0)));
        std::partial_sort(ht.top_keys.begin(), ht.top_keys.begin() + static_cast<std::ptrdiff_t>(n), ht.top_keys.end(),
                          [&](int a, int b) { return r[a] != r[b] ? r[a] > r[b] : a < b; });
        ht.top_keys.resize(n);
        if (opts_.full_patterns) ht.full.assign(head, head + T * K);
    }
}

// attn_z [T, H, D]: each head's contribution through the output projection (see trace.h).
void TraceObserver::observe_heads(const Intermediate& t) {
    LayerTrace& lt = layer(t.layer);
    const int64_t H = t.dims[1], D = t.dims[2], C = model_.config().n_embd;
    const std::span<const float> z = row(t);  // [H*D]
    std::vector<float> masked(static_cast<size_t>(H * H * D), 0.0f);  // [H, H*D] block-diagonal
    for (int64_t h = 0; h < H; ++h)
        std::copy(z.begin() + h * D, z.begin() + (h + 1) * D, masked.begin() + h * H * D + h * D);
    std::vector<float> contrib(static_cast<size_t>(H * C));  // [H, C]
    matmul(contrib.data(), masked.data(), model_.weights().layers[static_cast<size_t>(t.layer)].attn_out,
           static_cast<int>(H));
    for (int64_t h = 0; h < H; ++h) {
        const double norm = l2_norm({contrib.data() + h * C, static_cast<size_t>(C)});
        if (lt.recurrent) lt.delta_heads.at(static_cast<size_t>(h)).out_norm = norm;
        else lt.heads.at(static_cast<size_t>(h)).out_norm = norm;
    }
    if (opts_.attribute) rows_.heads[static_cast<size_t>(t.layer)] = std::move(contrib);
}

// moe_logits [T, E]: the traced token's experts, as the forward pass's moe_route chose them, and
// the entropy of the router's distribution over all experts.
void TraceObserver::observe_moe(const Intermediate& t) {
    const ModelConfig& c = model_.config();
    const std::span<const float> logits = row(t);
    const int K = c.n_expert_used;
    std::vector<int> ids(static_cast<size_t>(K));
    std::vector<float> weights(static_cast<size_t>(K));
    moe_route(logits.data(), c, ids.data(), weights.data());
    MoeTrace m;
    for (int j = 0; j < K; ++j) m.experts.push_back({ids[size_t(j)], weights[size_t(j)]});
    const double lse = log_sum_exp(logits);
    for (float v : logits) {
        const double lp = double(v) - lse;
        m.router_entropy -= std::exp(lp) * lp;
    }
    if (opts_.attribute) {
        auto& to = rows_.expert_ids[size_t(t.layer)];
        to.clear();
        for (const MoeTrace::Expert& e : m.experts) to.emplace_back(e.id, e.weight);
    }
    layer(t.layer).moe = std::move(m);
}

// ssm_beta / ssm_decay / ssm_state_norm [T, Hv]: a Gated DeltaNet layer's heads at the traced token.
void TraceObserver::observe_delta(const Intermediate& t) {
    LayerTrace& lt = layer(t.layer);
    const std::span<const float> r = row(t);
    if (r.size() != lt.delta_heads.size()) throw std::logic_error("trace: Gated DeltaNet heads differ from the model's");
    for (size_t h = 0; h < r.size(); ++h) {
        DeltaHeadTrace& d = lt.delta_heads[h];
        (t.name == "ssm_beta" ? d.beta : t.name == "ssm_decay" ? d.g : d.state_norm) = r[h];
    }
}

// attn_gate [T, H, D]: the gated attention's sigmoid(gate) at the traced token, per head and overall.
void TraceObserver::observe_gate(const Intermediate& t) {
    LayerTrace& lt = layer(t.layer);
    const int64_t H = t.dims[1], D = t.dims[2];
    const std::span<const float> r = row(t);
    double all = 0;
    for (int64_t h = 0; h < H; ++h) {
        double sum = 0;
        for (int64_t i = 0; i < D; ++i) sum += r[size_t(h * D + i)];
        lt.heads.at(size_t(h)).gate_mean = sum / double(D);
        all += sum;
    }
    lt.output_gate_mean = all / double(H * D);
}

// The target's logit before the final softcap (Gemma 2, 3, 4): the unembedding of the observed
// final norm output (times 1 / logits_scaling, as project_to_vocab), without the cap; otherwise
// the model's own logit.
double TraceObserver::raw_logit(TokenId id) const {
    if (final_normed_.empty()) return final_logits_[static_cast<size_t>(id)];
    std::vector<float> logits(static_cast<size_t>(model_.config().n_vocab));
    matmul(logits.data(), final_normed_.data(), model_.weights().output, 1);
    const float ls = model_.config().logit_scale;
    return ls != 1.0f ? logits[static_cast<size_t>(id)] * (1.0f / ls) : logits[static_cast<size_t>(id)];
}

// The logit lens: what the model would predict if the residual stream stopped after this layer.
void TraceObserver::observe_lens(const Intermediate& t) {
    std::vector<float>& logits = lens_logits_[static_cast<size_t>(t.layer)];
    logits.resize(static_cast<size_t>(model_.config().n_vocab));
    unembed(model_, row(t).data(), 1, logits.data());
}

Trace TraceObserver::finish() {
    if (final_logits_.empty()) throw std::logic_error("trace: finish() before the eval produced logits");
    const int V = model_.config().n_vocab;
    trace_.final = distribution(final_logits_, opts_.top_k);
    trace_.target = opts_.target ? *opts_.target : trace_.final.top.at(0).id;
    if (trace_.target < 0 || trace_.target >= V) throw UsageError("--target: token id outside the vocabulary");
    trace_.sampling = sampling_trace(final_logits_, kSamplingTop);
    const auto target_prob = [&](std::span<const float> logits) {
        return std::exp(double(logits[size_t(trace_.target)]) - log_sum_exp(logits));
    };
    trace_.final_target_rank = rank_of(final_logits_, trace_.target);
    trace_.final_target_prob = target_prob(final_logits_);
    for (size_t l = 0; l < trace_.layers.size(); ++l) {
        const std::vector<float>& logits = lens_logits_[l];
        if (logits.empty()) throw std::logic_error("trace: layer " + std::to_string(l) + " was not observed");
        LensTrace& lens = trace_.layers[l].lens;
        lens.dist = distribution(logits, opts_.top_k);
        lens.kl_to_final = kl_divergence(final_logits_, logits);
        lens.target_rank = rank_of(logits, trace_.target);
        lens.target_prob = target_prob(logits);
    }
    if (opts_.attribute) {
        if (opts_.contrast && (*opts_.contrast < 0 || *opts_.contrast >= V))
            throw UsageError("--contrast: token id outside the vocabulary");
        double logit = raw_logit(trace_.target);
        if (opts_.contrast) logit -= raw_logit(*opts_.contrast);
        trace_.attribution = attribute(model_, rows_, trace_.target, opts_.contrast, logit);
    }
    if (opts_.all_positions) finish_all();
    return std::move(trace_);
}

Trace run_trace(const Model& m, std::span<const TokenId> tokens, const TraceOptions& opts) {
    TraceObserver obs(m, tokens, opts);
    const bool last = resolve_position(opts.position, static_cast<int>(tokens.size())) == static_cast<int>(tokens.size()) - 1;
    Session session(m, opts.session);
    session.set_observer(&obs);
    session.eval(tokens, last && !opts.all_positions ? LogitsFor::last : LogitsFor::all);
    session.set_observer(nullptr);
    return obs.finish();
}

}  // namespace journey
