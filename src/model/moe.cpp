// The mixture-of-experts MLP, as llama.cpp's build_moe_ffn computes it: router logits (+ bias),
// the family's gating (softmax then top-k, renormalised or not; or top-k then softmax), each
// chosen expert's SwiGLU (or gpt-oss's clamped one) with its biases, the outputs weighted and
// summed in the order of choice.
//
// Work: every token is routed first; then all the chosen experts' gate and up products run in
// one parallel loop (kernels' matmul_many, as llama.cpp's mul_mat_id), the activation, and the
// down products in a second loop: the threads split the experts' rows among them as they come.
// One token (generation) reads the router and its k experts' rows only, once (a slice of a
// stacked tensor is just an offset), its x quantized once for all of them. A prompt gathers each
// expert's tokens into one [n_e, C] matrix; quantized experts multiply each row as one token
// (integer dots, x quantized per row, each group of weight rows read once for the group's
// tokens), so a row has the bits of that token alone: the same for any batch split and thread
// count, prompt or generation. Float experts take the prompt kernels (gemm).
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
    LineVector<float> logits, xg, gate, up, yg;
    LineVector<float> sh_gate, sh_up, sh_y, sh_logit;  // the shared expert's
    std::vector<int> ids, offset, row_of;
    std::vector<Product> products;
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

// The shared expert (Qwen3.5-MoE, as llama.cpp's qwen35moe): out += sigmoid(x · g) * down(silu(gate(x)) * up(x)).
void shared_expert(float* out, const float* xn, const LayerWeights& w, const ModelConfig& c, int T, bool prompt, Observer* observer) {
    Scratch& s = scratch;
    const int C = c.n_embd, F = c.n_ff_shexp;
    grow(s.sh_gate, int64_t{T} * F);
    grow(s.sh_up, int64_t{T} * F);
    grow(s.sh_y, int64_t{T} * C);
    grow(s.sh_logit, T);
    for (const Matrix* m : {&w.shexp_gate, &w.shexp_up, &w.shexp_gate_inp})
        if (observer) observer->product(*m, xn, T);
    matmul(s.sh_gate.data(), xn, w.shexp_gate, T, prompt);
    matmul(s.sh_up.data(), xn, w.shexp_up, T, prompt);
    swiglu(s.sh_up.data(), s.sh_gate.data(), int64_t{T} * F);
    if (observer) observer->product(w.shexp_down, s.sh_up.data(), T);
    matmul(s.sh_y.data(), s.sh_up.data(), w.shexp_down, T, prompt);
    matmul(s.sh_logit.data(), xn, w.shexp_gate_inp, T, prompt);
    for (int t = 0; t < T; ++t) {
        const float g = 1.0f / (1.0f + std::exp(-s.sh_logit[size_t(t)]));
        const float* y = s.sh_y.data() + int64_t{t} * C;
        float* o = out + int64_t{t} * C;
        for (int d = 0; d < C; ++d) o[d] += y[d] * g;
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

    // Each expert over its tokens, all experts' products in one parallel loop (matmul_many):
    // y[slot] = weight * down(act(gate(x), up(x))). Rows are ordered by expert, then by slot:
    // expert e's n_e rows start at row[e]; slot i sits at row_of[i].
    s.offset.assign(size_t(E) + 1, 0);
    for (int e = 0; e < E; ++e) s.offset[size_t(e) + 1] = s.offset[size_t(e)] + int(s.groups[size_t(e)].size());
    s.row_of.resize(size_t(T) * size_t(K));
    for (int e = 0; e < E; ++e)
        for (size_t i = 0; i < s.groups[size_t(e)].size(); ++i) s.row_of[size_t(s.groups[size_t(e)][i])] = s.offset[size_t(e)] + int(i);
    const int64_t R = int64_t{T} * K;  // rows in all
    const bool fused = !x.gate_up.empty();
    // The experts' inputs: one token's x serves every expert (and is quantized once); a prompt's
    // rows are gathered per expert.
    auto x_of = [&](int e) { return T == 1 ? xn : s.xg.data() + int64_t{s.offset[size_t(e)]} * C; };
    if (T > 1) {
        grow(s.xg, R * C);
        for (int i = 0; i < T * K; ++i)
            std::memcpy(s.xg.data() + int64_t{s.row_of[size_t(i)]} * C, xn + int64_t{i / K} * C, sizeof(float) * size_t(C));
    }
    grow(s.gate, R * 2 * F);
    grow(s.up, R * F);
    grow(s.yg, R * C);
    s.products.clear();
    for (int e = 0; e < E; ++e) {
        const int n = int(s.groups[size_t(e)].size());
        if (n == 0) continue;
        const int64_t r0 = s.offset[size_t(e)];
        if (fused) {  // HF gpt-oss: [n, 2F], gate and up interleaved
            s.products.push_back({s.gate.data() + r0 * 2 * F, x_of(e), &x.gate_up[size_t(e)], n});
        } else {
            s.products.push_back({s.gate.data() + r0 * F, x_of(e), &x.gate[size_t(e)], n});
            s.products.push_back({s.up.data() + r0 * F, x_of(e), &x.up[size_t(e)], n});
        }
    }
    if (observer)  // llama-imatrix's sums: each expert's product sees its own tokens' rows
        for (const Product& p : s.products) observer->product(*p.W, p.x, p.T);
    matmul_many(s.products, prompt);
    for (int e = 0; e < E; ++e) {
        const int n = int(s.groups[size_t(e)].size());
        if (n == 0) continue;
        const int64_t r0 = s.offset[size_t(e)];
        float* gate = s.gate.data() + r0 * F;
        float* up = s.up.data() + r0 * F;
        if (fused) {
            float* gu = s.gate.data() + r0 * 2 * F;
            if (!x.gate_up_b.empty()) add_bias(gu, x.gate_up_b[size_t(e)].data, n, 2 * F);
            for (int64_t i = 0; i < int64_t{n} * F; ++i) {  // moving down, never over a value still to read
                const float gv = gu[2 * i], uv = gu[2 * i + 1];
                up[i] = uv;
                gu[i] = gv;
            }
            std::memmove(gate, gu, sizeof(float) * size_t(int64_t{n} * F));  // to this expert's place in the F-wide layout
        } else {
            if (!x.gate_b.empty()) add_bias(gate, x.gate_b[size_t(e)].data, n, F);
            if (!x.up_b.empty()) add_bias(up, x.up_b[size_t(e)].data, n, F);
        }
    }
    activate(s.up.data(), s.gate.data(), R * F, c);
    s.products.clear();
    for (int e = 0; e < E; ++e) {
        const int n = int(s.groups[size_t(e)].size());
        if (n == 0) continue;
        const int64_t r0 = s.offset[size_t(e)];
        s.products.push_back({s.yg.data() + r0 * C, s.up.data() + r0 * F, &x.down[size_t(e)], n});
    }
    if (observer)
        for (const Product& p : s.products) observer->product(*p.W, p.x, p.T);
    matmul_many(s.products, prompt);
    for (int e = 0; e < E; ++e) {
        const std::vector<int>& g = s.groups[size_t(e)];
        if (g.empty()) continue;
        const int64_t r0 = s.offset[size_t(e)];
        if (!x.down_b.empty()) add_bias(s.yg.data() + r0 * C, x.down_b[size_t(e)].data, int(g.size()), C);
        for (size_t i = 0; i < g.size(); ++i) {
            const float wt = s.weights[size_t(g[i])];
            float* y = s.yg.data() + (r0 + int64_t(i)) * C;
            for (int d = 0; d < C; ++d) y[d] *= wt;
        }
    }

    // Sum each token's experts in the order they were chosen (llama.cpp adds the views so).
    for (int t = 0; t < T; ++t) {
        float* o = out + int64_t{t} * C;
        std::memcpy(o, s.yg.data() + int64_t{s.row_of[size_t(t) * size_t(K)]} * C, sizeof(float) * size_t(C));
        for (int j = 1; j < K; ++j) {
            const float* y = s.yg.data() + int64_t{s.row_of[size_t(t) * size_t(K) + size_t(j)]} * C;
            for (int d = 0; d < C; ++d) o[d] += y[d];
        }
    }
    if (w.shexp_down) shared_expert(out, xn, w, c, T, prompt, observer);
}

const float* moe_last_router_logits() { return scratch.logits.data(); }

void moe_last_expert_rows(float* out, int T, const ModelConfig& c) {
    const int K = c.n_expert_used, C = c.n_embd;
    for (int i = 0; i < T * K; ++i)
        std::memcpy(out + int64_t{i} * C, scratch.yg.data() + int64_t{scratch.row_of[size_t(i)]} * C, sizeof(float) * size_t(C));
}

void moe_last_shared_rows(float* out, int T, const ModelConfig& c) {
    const Scratch& s = scratch;
    const int C = c.n_embd;
    for (int t = 0; t < T; ++t) {
        const float g = 1.0f / (1.0f + std::exp(-s.sh_logit[size_t(t)]));
        for (int d = 0; d < C; ++d) out[int64_t{t} * C + d] = s.sh_y[size_t(int64_t{t} * C + d)] * g;
    }
}

}  // namespace journey
