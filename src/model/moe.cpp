// The mixture-of-experts MLP, as llama.cpp's build_moe_ffn computes it: router logits (+ bias),
// the family's gating (softmax then top-k, renormalised or not; or top-k then softmax), each
// chosen expert's SwiGLU (or gpt-oss's clamped one) with its biases, the outputs weighted and
// summed in the order of choice.
//
// Work: one token (generation) reads the router and its k experts' matrices only, each product
// the one-token kernel on the expert's rows (a slice of a stacked tensor is just an offset). A
// prompt routes all its tokens, then gathers each expert's tokens into one [n_e, C] matrix and
// multiplies it with the prompt kernels (llama.cpp's mul_mat_id), whose rows do not depend on
// which other rows share the product: the same bits for any batch split and thread count.
#include "journey/model/moe.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "journey/kernels/aligned.h"
#include "journey/kernels/kernels.h"

namespace journey {
namespace {

// Scratch of the calling thread (a forward pass runs on one thread; the products' workers only
// read it).
struct Scratch {
    LineVector<float> logits, xg, gate, up, ff, yg, slots;
    std::vector<int> ids;
    std::vector<float> weights;
    std::vector<std::vector<int>> groups;  // per expert: the slots (t * k + j) routed to it, in token order
};
thread_local Scratch scratch;

void grow(LineVector<float>& v, int64_t n) {
    if (v.size() < size_t(n)) v.resize(size_t(n));
}

// The experts' activation, in place over up[n] (gate[n] beside it).
void activate(float* up, const float* gate, int64_t n, const ModelConfig& c) {
    if (c.activation != ActivationKind::swiglu_oai) return swiglu(up, gate, n);  // silu(gate) * up
    // gpt-oss (llama.cpp's swiglu_oai): x = min(gate, limit), y = clamp(up, -limit, limit),
    // x * sigmoid(alpha x) * (y + 1)
    const float limit = c.swiglu_limit, alpha = c.swiglu_alpha;
    for (int64_t i = 0; i < n; ++i) {
        const float x = std::min(gate[i], limit);
        const float y = std::clamp(up[i], -limit, limit);
        up[i] = x / (1.0f + std::exp(-alpha * x)) * (y + 1.0f);
    }
}

}  // namespace

void moe_route(const float* logits, const ModelConfig& c, int* ids, float* weights) {
    const int E = c.n_expert, K = c.n_expert_used;
    std::vector<float> p(logits, logits + E);
    if (c.moe_gating == MoeGating::softmax_topk) softmax(p.data(), E);
    std::vector<int> order(static_cast<size_t>(E));
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + K, order.end(), [&](int a, int b) {
        return p[size_t(a)] > p[size_t(b)] || (p[size_t(a)] == p[size_t(b)] && a < b);
    });
    for (int j = 0; j < K; ++j) {
        ids[j] = order[size_t(j)];
        weights[j] = p[size_t(ids[j])];
    }
    if (c.moe_gating == MoeGating::topk_softmax) {
        softmax(weights, K);  // over the chosen logits
    } else if (c.moe_norm_topk) {
        float sum = 0.0f;
        for (int j = 0; j < K; ++j) sum += weights[j];
        sum = std::max(sum, 6.103515625e-5f);  // llama.cpp clamps the sum at this (F16's smallest normal)
        for (int j = 0; j < K; ++j) weights[j] /= sum;
    }
}

void moe_ffn(float* out, const float* xn, const LayerWeights& w, const ModelConfig& c, int T, bool prompt, Observer* observer) {
    const int E = c.n_expert, K = c.n_expert_used, C = c.n_embd, F = c.n_ff_exp;
    const Experts& x = w.experts;
    Scratch& s = scratch;

    // Route every token.
    grow(s.logits, int64_t{T} * E);
    if (observer) observer->product(w.moe_router, xn, T);
    matmul(s.logits.data(), xn, w.moe_router, T, prompt);
    if (w.moe_router_b) add_bias(s.logits.data(), w.moe_router_b.data, T, E);
    s.ids.resize(size_t(T) * size_t(K));
    s.weights.resize(size_t(T) * size_t(K));
    for (int t = 0; t < T; ++t)
        moe_route(s.logits.data() + int64_t{t} * E, c, s.ids.data() + size_t(t) * size_t(K), s.weights.data() + size_t(t) * size_t(K));
    s.groups.resize(size_t(E));
    for (auto& g : s.groups) g.clear();
    for (int i = 0; i < T * K; ++i) s.groups[size_t(s.ids[size_t(i)])].push_back(i);

    // Each expert over its tokens: y[slot] = weight * down(act(gate(x), up(x))).
    grow(s.slots, int64_t{T} * K * C);
    const bool fused = !x.gate_up.empty();
    for (int e = 0; e < E; ++e) {
        const std::vector<int>& g = s.groups[size_t(e)];
        const int n = static_cast<int>(g.size());
        if (n == 0) continue;
        const float* xe = xn;  // one token: its own row
        if (T > 1) {
            grow(s.xg, int64_t{n} * C);
            for (int i = 0; i < n; ++i)
                std::memcpy(s.xg.data() + int64_t{i} * C, xn + int64_t{g[size_t(i)] / K} * C, sizeof(float) * size_t(C));
            xe = s.xg.data();
        }
        grow(s.gate, int64_t{n} * 2 * F);
        grow(s.up, int64_t{n} * F);
        if (fused) {  // HF gpt-oss: [n, 2F], gate and up interleaved
            if (observer) observer->product(x.gate_up[size_t(e)], xe, n);
            matmul(s.gate.data(), xe, x.gate_up[size_t(e)], n, prompt);
            if (!x.gate_up_b.empty()) add_bias(s.gate.data(), x.gate_up_b[size_t(e)].data, n, 2 * F);
            for (int64_t i = 0; i < int64_t{n} * F; ++i) {  // moving down, never over a value still to read
                const float gv = s.gate[size_t(2 * i)], uv = s.gate[size_t(2 * i + 1)];
                s.up[size_t(i)] = uv;
                s.gate[size_t(i)] = gv;
            }
        } else {
            if (observer) {
                observer->product(x.gate[size_t(e)], xe, n);
                observer->product(x.up[size_t(e)], xe, n);
            }
            matmul(s.gate.data(), xe, x.gate[size_t(e)], n, prompt);
            matmul(s.up.data(), xe, x.up[size_t(e)], n, prompt);
            if (!x.gate_b.empty()) add_bias(s.gate.data(), x.gate_b[size_t(e)].data, n, F);
            if (!x.up_b.empty()) add_bias(s.up.data(), x.up_b[size_t(e)].data, n, F);
        }
        activate(s.up.data(), s.gate.data(), int64_t{n} * F, c);
        grow(s.yg, int64_t{n} * C);
        if (observer) observer->product(x.down[size_t(e)], s.up.data(), n);
        matmul(s.yg.data(), s.up.data(), x.down[size_t(e)], n, prompt);
        if (!x.down_b.empty()) add_bias(s.yg.data(), x.down_b[size_t(e)].data, n, C);
        for (int i = 0; i < n; ++i) {
            const int slot = g[size_t(i)];
            const float wt = s.weights[size_t(slot)];
            float* y = s.slots.data() + int64_t{slot} * C;
            const float* r = s.yg.data() + int64_t{i} * C;
            for (int d = 0; d < C; ++d) y[d] = r[d] * wt;
        }
    }

    // Sum each token's experts in the order they were chosen (llama.cpp adds the views so).
    for (int t = 0; t < T; ++t) {
        float* o = out + int64_t{t} * C;
        const float* y = s.slots.data() + int64_t{t} * K * C;
        std::memcpy(o, y, sizeof(float) * size_t(C));
        for (int j = 1; j < K; ++j)
            for (int d = 0; d < C; ++d) o[d] += y[int64_t{j} * C + d];
    }
}

}  // namespace journey
