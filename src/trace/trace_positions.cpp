// --pos all: the TraceObserver's second reading of the same single pass. Every row of every
// intermediate is reduced as it passes (norms, head entropies; not the heads' |out|, which would
// cost a [T*H, H*D] x W_O product per layer and a third of the page's size); the residual
// stream after each layer and the final logits are kept, and finish_all() reads every position's
// logit lens from them with one batched unembedding per layer and chunk of positions.
#include <algorithm>
#include <stdexcept>

#include "journey/decode/distribution.h"
#include "journey/model/unembed.h"
#include "journey/trace/trace.h"
#include "trace_math.h"

namespace journey {

using trace_math::entropy_of;
using trace_math::inner_size;
using trace_math::l2_norm;

void TraceObserver::observe_all(const Intermediate& t) {
    const std::string_view n = t.name;
    const size_t T = trace_.tokens.size();
    const size_t L = trace_.layers.size();
    if (trace_.positions.empty()) {
        trace_.positions.resize(T);
        for (PositionTrace& p : trace_.positions) {
            p.layers.resize(L);
            for (size_t l = 0; l < L; ++l) p.layers[l].layer = static_cast<int>(l);
        }
        all_resid_.resize(L);
    }
    const auto rows = [&](auto&& each) {  // each(position, row) over a [T, ...] intermediate
        if (t.n_past != 0 || t.dims.empty() || t.dims[0] != static_cast<int64_t>(T))
            throw std::logic_error("trace: expected one eval of the whole prompt, got " + std::string(t.name));
        const int64_t w = inner_size(t);
        for (size_t i = 0; i < T; ++i) each(trace_.positions[i], std::span<const float>(t.data + int64_t(i) * w, size_t(w)));
    };
    const auto at = [&](PositionTrace& p) -> LayerTrace& {
        if (t.layer < 0 || size_t(t.layer) >= L) throw std::logic_error("trace: layer out of range");
        return p.layers[size_t(t.layer)];
    };
    if (n == "tok_embed") rows([](PositionTrace& p, auto r) { p.embedding.token_norm = l2_norm(r); });
    else if (n == "pos_embed") rows([](PositionTrace& p, auto r) { p.embedding.position_norm = l2_norm(r); });
    else if (n == "embed") rows([](PositionTrace& p, auto r) { p.embedding.sum_norm = l2_norm(r); });
    else if (n == "resid_pre") rows([&](PositionTrace& p, auto r) { at(p).resid_pre = l2_norm(r); });
    else if (n == "resid_mid") rows([&](PositionTrace& p, auto r) { at(p).resid_mid = l2_norm(r); });
    else if (n == "attn_out") rows([&](PositionTrace& p, auto r) { at(p).attn_out = l2_norm(r); });
    else if (n == "mlp_out") rows([&](PositionTrace& p, auto r) { at(p).mlp_out = l2_norm(r); });
    else if (n == "resid_post") {
        rows([&](PositionTrace& p, auto r) { at(p).resid_post = l2_norm(r); });
        all_resid_[size_t(t.layer)].assign(t.data, t.data + int64_t(T) * inner_size(t));
    } else if (n == "attn_pattern") {  // [H, T, T]: every query's entropy, per head
        const int64_t H = t.dims[0], K = t.dims[2];
        if (t.n_past != 0 || t.dims[1] != static_cast<int64_t>(T) || K != static_cast<int64_t>(T))
            throw std::logic_error("trace: expected one eval of the whole prompt");
        for (size_t q = 0; q < T; ++q) {
            LayerTrace& lt = at(trace_.positions[q]);
            lt.heads.resize(size_t(H));
            for (int64_t h = 0; h < H; ++h) {
                lt.heads[size_t(h)].head = static_cast<int>(h);
                lt.heads[size_t(h)].entropy = entropy_of({t.data + (h * K + int64_t(q)) * K, size_t(q) + 1});
            }
        }
    } else if (n == "logits") {
        if (t.dims[0] != static_cast<int64_t>(T)) throw std::logic_error("trace --pos all: the eval kept one row of logits");
        all_logits_.assign(t.data, t.data + t.dims[0] * t.dims[1]);
    }
}

void TraceObserver::finish_all() {
    const size_t T = trace_.tokens.size(), L = trace_.layers.size();
    const size_t V = static_cast<size_t>(model_.config().n_vocab);
    if (all_logits_.size() != T * V) throw std::logic_error("trace --pos all: no logits for every position");
    const auto logits_at = [&](size_t p) { return std::span<const float>(all_logits_.data() + p * V, V); };
    for (size_t p = 0; p < T; ++p) {
        PositionTrace& pt = trace_.positions[p];
        pt.final = distribution(logits_at(p), opts_.top_k);
        pt.target = p == size_t(trace_.position) ? trace_.target : pt.final.top.at(0).id;
        pt.final_target_rank = rank_of(logits_at(p), pt.target);
        pt.final_target_prob = std::exp(double(logits_at(p)[size_t(pt.target)]) - log_sum_exp(logits_at(p)));
        pt.sampling = sampling_trace(logits_at(p), kSamplingTopAll);
    }
    constexpr size_t kChunk = 32;  // positions per unembedding: [32, V] floats at a time
    std::vector<float> lens(kChunk * V);
    for (size_t l = 0; l < L; ++l) {
        const std::vector<float>& resid = all_resid_[l];
        if (resid.empty()) throw std::logic_error("trace --pos all: layer " + std::to_string(l) + " was not observed");
        const size_t C = resid.size() / T;
        for (size_t p0 = 0; p0 < T; p0 += kChunk) {
            const size_t np = std::min(kChunk, T - p0);
            unembed(model_, resid.data() + p0 * C, static_cast<int>(np), lens.data());
            for (size_t i = 0; i < np; ++i) {
                PositionTrace& pt = trace_.positions[p0 + i];
                const std::span<const float> row(lens.data() + i * V, V);
                LensTrace& lt = pt.layers[l].lens;
                lt.dist = distribution(row, std::min(opts_.top_k, 3));
                lt.kl_to_final = kl_divergence(logits_at(p0 + i), row);
                lt.target_rank = rank_of(row, pt.target);
                lt.target_prob = std::exp(double(row[size_t(pt.target)]) - log_sum_exp(row));
            }
        }
        std::vector<float>().swap(all_resid_[l]);
    }
}

}  // namespace journey
