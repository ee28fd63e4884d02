// The Gated DeltaNet mixer (delta_net.h), in reading order: projections, the causal conv, the
// gates, then the recurrence in one of its two forms, then the gated norm.
//
// Convention: T tokens, C = n_embd, Hk / Hv key / value heads, S = head width (keys and values
// alike), CH = 2*Hk*S + Hv*S conv channels (q | k | v), K = conv taps. A head's state is S x S,
// row j (value index) by column i (key index), so that o = state · q and state · k are row dots.
#include "journey/model/delta_net.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "journey/kernels/gemm_f32.h"
#include "journey/kernels/kernels.h"
#include "journey/kernels/thread_pool.h"

namespace journey {
namespace {

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float silu(float x) { return x / (1.0f + std::exp(-x)); }
float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }  // ggml's threshold

// The row loops below sum in 16 lanes so that they vectorise (a tail beyond a multiple of 16 in
// lane 0), then the lanes pairwise: l += l+8, +4, +2, +1.
float reduce16(float* a) {
    for (int s = 8; s >= 1; s /= 2)
        for (int l = 0; l < s; ++l) a[l] += a[l + s];
    return a[0];
}

float dot(const float* a, const float* b, int n) {
    float acc[16] = {};
    int i = 0;
    for (; i + 16 <= n; i += 16)
        for (int l = 0; l < 16; ++l) acc[l] += a[i + l] * b[i + l];
    for (; i < n; ++i) acc[0] += a[i] * b[i];
    return reduce16(acc);
}

// row *= decay; returns row · k (the decayed row's)
float scale_dot(float* row, float decay, const float* k, int n) {
    float acc[16] = {};
    int i = 0;
    for (; i + 16 <= n; i += 16)
        for (int l = 0; l < 16; ++l) acc[l] += (row[i + l] *= decay) * k[i + l];
    for (; i < n; ++i) acc[0] += (row[i] *= decay) * k[i];
    return reduce16(acc);
}

// row += d k; returns row · q (the updated row's)
float axpy_dot(float* row, float d, const float* k, const float* q, int n) {
    float acc[16] = {};
    int i = 0;
    for (; i + 16 <= n; i += 16)
        for (int l = 0; l < 16; ++l) acc[l] += (row[i + l] += d * k[i + l]) * q[i + l];
    for (; i < n; ++i) acc[0] += (row[i] += d * k[i]) * q[i];
    return reduce16(acc);
}

// n floats of scratch, grown only, one vector per thread and role: a prompt's buffers are
// megabytes, and fresh std::vectors of them in every layer were fresh pages, faulted in and zeroed
// (a fifth of a 512-token prompt's time on Qwen3.5-0.8B's shapes). Every element is written
// before it is read.
struct Scratch {
    float* p;
    size_t n;
    float* data() const { return p; }
    size_t size() const { return n; }
    float& operator[](size_t i) const { return p[i]; }
};
Scratch scratch(std::vector<float>& v, size_t n) {
    if (v.size() < n) v.resize(n);
    return {v.data(), n};
}

// Causal depthwise conv1d over the channels, K taps, then SiLU: x[T, CH] in place. The inputs
// before the first token are the state's K-1 rows, which become the last K-1 inputs after it.
// Channels in ranges, one per task (a channel's bits do not depend on the range).
void causal_conv(float* x, int T, int64_t CH, int K, const float* taps, float* state) {
    const int64_t keep = K - 1;
    thread_local std::vector<float> in_buf, tap_buf;
    const Scratch in = scratch(in_buf, static_cast<size_t>((keep + T) * CH));  // [K-1 + T][CH]: the state, then x
    const Scratch tap = scratch(tap_buf, static_cast<size_t>(K * CH));         // [K][CH]: taps[ch][i] transposed
    for (int64_t ch = 0; ch < CH; ++ch)
        for (int i = 0; i < K; ++i) tap[size_t(i * CH + ch)] = taps[ch * K + i];
    std::memcpy(in.data(), state, sizeof(float) * static_cast<size_t>(keep * CH));
    std::memcpy(in.data() + keep * CH, x, sizeof(float) * static_cast<size_t>(int64_t{T} * CH));
    auto range = [&](int64_t c0, int64_t c1) {
        for (int t = 0; t < T; ++t) {
            float* y = x + int64_t{t} * CH;
            for (int64_t ch = c0; ch < c1; ++ch) y[ch] = 0.0f;
            for (int i = 0; i < K; ++i) {  // llama.cpp's ssm_conv: taps in order, oldest input first
                const float* src = in.data() + (t + i) * CH;
                const float* w = tap.data() + i * CH;
                for (int64_t ch = c0; ch < c1; ++ch) y[ch] += src[ch] * w[ch];
            }
            for (int64_t ch = c0; ch < c1; ++ch) y[ch] = silu(y[ch]);
        }
    };
    if (T == 1) range(0, CH);
    else thread_pool().run([&](int i, int n) { range(CH * i / n / 16 * 16, i + 1 == n ? CH : CH * (i + 1) / n / 16 * 16); });
    std::memcpy(state, in.data() + int64_t{T} * CH, sizeof(float) * static_cast<size_t>(keep * CH));
}

// Each head's q and k rows scaled to unit length (x / sqrt(sum x^2 + eps), HF's l2norm), q also
// by 1/sqrt(S).
void l2_normalise(float* x, int64_t rows, int S, float eps, float scale) {
    for (int64_t r = 0; r < rows; ++r) {
        float* v = x + r * S;
        const float inv = scale / std::sqrt(dot(v, v, S) + eps);
        for (int i = 0; i < S; ++i) v[i] *= inv;
    }
}

// The per-head inputs of the recurrence: q, k, v rows with their strides, and g, beta per token.
struct Head {
    const float *q, *k, *v;  // token t's row at + t * stride
    int64_t stride;
    const float *g, *beta;   // token t's at + t * Hv
    int Hv;
    float* o;                // output row t at + t * ostride
    int64_t ostride;
    float* state_norm = nullptr;  // traced: the state's Frobenius norm after token t at + t * Hv
};

float frobenius(const float* state, int S) { return std::sqrt(dot(state, state, S * S)); }

// One token at a time: state = exp(g) state; d = beta (v - state k); state += d kᵀ; o = state q,
// one state row (value index j) at a time, each read twice while in L1.
void recurrent(const Head& h, int T, int S, float* state) {
    for (int t = 0; t < T; ++t) {
        const float* q = h.q + t * h.stride;
        const float* k = h.k + t * h.stride;
        const float* v = h.v + t * h.stride;
        const float decay = std::exp(h.g[int64_t{t} * h.Hv]), beta = h.beta[int64_t{t} * h.Hv];
        float* o = h.o + t * h.ostride;
        for (int j = 0; j < S; ++j) {
            float* row = state + int64_t{j} * S;
            const float d = (v[j] - scale_dot(row, decay, k, S)) * beta;
            o[j] = axpy_dot(row, d, k, q, S);
        }
        if (h.state_norm) h.state_norm[int64_t{t} * h.Hv] = frobenius(state, S);
    }
}

// Chunks of n <= kDeltaChunk tokens, as matrix products (gemm_f32, in this head's task). With
// G_t = exp(cumulative g within the chunk), D_ts = G_t/G_s (s <= t) and S0 the state at the
// chunk's start, the delta rule's new values u_s (state_s = g_s state_{s-1} + u_s k_sᵀ) solve the
// unit lower-triangular system u_s + sum_{r<s} A_sr u_r = beta_s v_s - beta_s G_s S0 k_s,
// A_sr = beta_s D_sr (k_s·k_r): with T = (I + A)^-1 (forward substitution on the n x n matrix),
// [W | Kcd] = T [beta v | beta G k] and U = W - Kcd S0ᵀ. Then the outputs
// O = diag(G) Q S0ᵀ + (D ∘ Q Kᵀ, lower triangle) U, and the state at the chunk's end
// G_n S0 + Uᵀ diag(D_ns) K. (llama.cpp's build_delta_net_chunking, in the same steps.)
void chunked(const Head& h, int T, int S, float* state) {
    const int CS = kDeltaChunk;
    const int64_t S2 = 2 * int64_t{S};
    const size_t CC = size_t(CS) * CS, CX = size_t(CS) * size_t(S2);
    std::vector<float> gc(static_cast<size_t>(CS)), D(CC), KK(CC), KQ(CC), Ti(CC), B(CX), X(CX);
    for (int t0 = 0; t0 < T; t0 += CS) {
        const int n = std::min(CS, T - t0);
        const float* Q = h.q + t0 * h.stride;
        const float* K = h.k + t0 * h.stride;
        const float* V = h.v + t0 * h.stride;
        float* O = h.o + t0 * h.ostride;
        auto beta = [&](int s) { return h.beta[int64_t{t0 + s} * h.Hv]; };
        float acc = 0.0f;
        for (int s = 0; s < n; ++s) gc[size_t(s)] = acc += h.g[int64_t{t0 + s} * h.Hv];
        for (int t = 0; t < n; ++t)
            for (int s = 0; s <= t; ++s) D[size_t(t * CS + s)] = std::exp(gc[size_t(t)] - gc[size_t(s)]);
        gemm_f32(false, true, n, n, S, 1.0f, K, h.stride, K, h.stride, 0.0f, KK.data(), CS);  // k_s · k_r
        gemm_f32(false, true, n, n, S, 1.0f, Q, h.stride, K, h.stride, 0.0f, KQ.data(), CS);  // q_t · k_s
        // T = (I + A)^-1: row s = e_s - sum_{r<s} A_sr T_r (T_r is zero beyond column r)
        for (int s = 0; s < n; ++s) {
            float* ts = Ti.data() + size_t(s) * CS;
            std::fill(ts, ts + n, 0.0f);
            ts[s] = 1.0f;
            const float b = beta(s);
            for (int r = 0; r < s; ++r) {
                const float a = b * D[size_t(s * CS + r)] * KK[size_t(s * CS + r)];
                const float* tr = Ti.data() + size_t(r) * CS;
                for (int col = 0; col <= r; ++col) ts[col] -= a * tr[col];
            }
        }
        // B = [beta v | beta G k]; X = T B = [W | Kcd]; U = W - Kcd S0ᵀ (in X's left half)
        for (int s = 0; s < n; ++s) {
            float* bs = B.data() + size_t(s) * size_t(S2);
            const float b = beta(s), bg = b * std::exp(gc[size_t(s)]);
            const float* vs = V + s * h.stride;
            const float* ks = K + s * h.stride;
            for (int j = 0; j < S; ++j) bs[j] = b * vs[j];
            for (int i = 0; i < S; ++i) bs[S + i] = bg * ks[i];
        }
        gemm_f32(false, false, n, int(S2), n, 1.0f, Ti.data(), CS, B.data(), S2, 0.0f, X.data(), S2);
        gemm_f32(false, true, n, S, S, -1.0f, X.data() + S, S2, state, S, 1.0f, X.data(), S2);
        // O = diag(G) Q S0ᵀ + (D ∘ Q Kᵀ) U, the mask's upper triangle zero
        gemm_f32(false, true, n, S, S, 1.0f, Q, h.stride, state, S, 0.0f, O, h.ostride);
        for (int t = 0; t < n; ++t) {
            float* ot = O + t * h.ostride;
            const float G = std::exp(gc[size_t(t)]);
            for (int j = 0; j < S; ++j) ot[j] *= G;
            float* m = KQ.data() + size_t(t) * CS;
            for (int s = 0; s <= t; ++s) m[s] *= D[size_t(t * CS + s)];
            std::fill(m + t + 1, m + n, 0.0f);
        }
        gemm_f32(false, false, n, S, n, 1.0f, KQ.data(), CS, X.data(), S2, 1.0f, O, h.ostride);
        // traced: the state after each token of the chunk, state_s = exp(g_s) state_{s-1} + u_s k_sᵀ
        // from the chunk's own u (its norm only; the pass goes on from the closed form below)
        if (h.state_norm) {
            std::vector<float> m(state, state + size_t(S) * size_t(S));
            for (int s = 0; s < n; ++s) {
                const float decay = std::exp(h.g[int64_t{t0 + s} * h.Hv]);
                const float* u = X.data() + size_t(s) * size_t(S2);
                const float* ks = K + s * h.stride;
                for (int j = 0; j < S; ++j)
                    for (int i = 0; i < S; ++i) {
                        float& x = m[size_t(j) * size_t(S) + size_t(i)];
                        x = x * decay + u[j] * ks[i];
                    }
                h.state_norm[int64_t{t0 + s} * h.Hv] = frobenius(m.data(), S);
            }
        }
        // the state at the chunk's end: G_n S0 + Uᵀ diag(D_ns) K
        for (int s = 0; s < n; ++s) {
            float* u = X.data() + size_t(s) * size_t(S2);
            const float c = D[size_t((n - 1) * CS + s)];
            for (int j = 0; j < S; ++j) u[j] *= c;
        }
        gemm_f32(true, false, S, S, n, 1.0f, X.data(), S2, K, h.stride, std::exp(gc[size_t(n - 1)]), state, S);
    }
}

}  // namespace

void gated_delta_net(float* out, const float* xn, const LayerWeights& w, const ModelConfig& c, int T, bool prompt,
                     RecurrentState st, DeltaForm form, const DeltaTrace& trace) {
    const int Hk = c.ssm_k_heads, Hv = c.ssm_v_heads, S = c.ssm_head_dim, K = c.ssm_conv;
    const int64_t CH = c.ssm_channels(), VD = int64_t{Hv} * S;
    thread_local std::vector<float> qkv_buf, z_buf, beta_buf, g_buf, f_buf;
    const Scratch qkv = scratch(qkv_buf, static_cast<size_t>(T * CH)), z = scratch(z_buf, static_cast<size_t>(T * VD));
    const Scratch beta = scratch(beta_buf, static_cast<size_t>(int64_t{T} * Hv)), g = scratch(g_buf, static_cast<size_t>(int64_t{T} * Hv));
    const int R = Hv / Hk;  // value heads per key head
    if (w.ssm_qkvz) {  // Qwen3-Next: per key head [q (S) | k (S) | v (R S) | z (R S)] -> q | k | v and z
        const int64_t W = 2 * int64_t{S} + 2 * int64_t{R} * S;
        const Scratch f = scratch(f_buf, static_cast<size_t>(int64_t{T} * Hk * W));
        matmul(f.data(), xn, w.ssm_qkvz, T, prompt);
        for (int t = 0; t < T; ++t)
            for (int kh = 0; kh < Hk; ++kh) {
                const float* src = f.data() + (int64_t{t} * Hk + kh) * W;
                float* row = qkv.data() + int64_t{t} * CH;
                std::memcpy(row + int64_t{kh} * S, src, sizeof(float) * size_t(S));
                std::memcpy(row + int64_t{Hk + kh} * S, src + S, sizeof(float) * size_t(S));
                std::memcpy(row + int64_t{2 * Hk} * S + int64_t{kh} * R * S, src + 2 * S, sizeof(float) * size_t(R * S));
                std::memcpy(z.data() + int64_t{t} * VD + int64_t{kh} * R * S, src + 2 * S + R * S, sizeof(float) * size_t(R * S));
            }
    } else {
        matmul(qkv.data(), xn, w.ssm_qkv, T, prompt);
        matmul(z.data(), xn, w.ssm_gate, T, prompt);
    }
    if (w.ssm_ba) {  // Qwen3-Next: per key head [b (R) | a (R)]
        const Scratch f = scratch(f_buf, static_cast<size_t>(int64_t{T} * 2 * Hv));
        matmul(f.data(), xn, w.ssm_ba, T, prompt);
        for (int64_t t = 0; t < T; ++t)
            for (int kh = 0; kh < Hk; ++kh)
                for (int i = 0; i < R; ++i) {
                    beta[size_t(t * Hv + kh * R + i)] = f[size_t(t * 2 * Hv + kh * 2 * R + i)];
                    g[size_t(t * Hv + kh * R + i)] = f[size_t(t * 2 * Hv + kh * 2 * R + R + i)];
                }
    } else {
        matmul(beta.data(), xn, w.ssm_beta, T, prompt);
        matmul(g.data(), xn, w.ssm_alpha, T, prompt);
    }
    causal_conv(qkv.data(), T, CH, K, w.ssm_conv1d.data, st.conv);
    for (int t = 0; t < T; ++t) {
        float* row = qkv.data() + int64_t{t} * CH;
        l2_normalise(row, Hk, S, c.norm_eps, 1.0f / std::sqrt(float(S)));  // q
        l2_normalise(row + int64_t{Hk} * S, Hk, S, c.norm_eps, 1.0f);       // k
        for (int h = 0; h < Hv; ++h) {
            float& b = beta[size_t(int64_t{t} * Hv + h)];
            float& a = g[size_t(int64_t{t} * Hv + h)];
            b = sigmoid(b);
            a = softplus(a + w.ssm_dt.data[h]) * w.ssm_a.data[h];
        }
    }
    if (trace.beta) std::memcpy(trace.beta, beta.data(), sizeof(float) * beta.size());
    if (trace.gate) std::memcpy(trace.gate, g.data(), sizeof(float) * g.size());

    // The recurrence, one value head per task (a head's bits do not depend on the thread count).
    const bool use_chunks = form == DeltaForm::chunked || (form == DeltaForm::automatic && T > 1);
    thread_pool().run([&](int i, int n) {
        for (int h = i; h < Hv; h += n) {
            const int kh = c.ssm_v_tiled ? h % Hk : h / R;
            const Head head{qkv.data() + int64_t{kh} * S, qkv.data() + int64_t{Hk + kh} * S,
                            qkv.data() + int64_t{2 * Hk} * S + int64_t{h} * S, CH, g.data() + h, beta.data() + h, Hv,
                            out + int64_t{h} * S, VD, trace.state_norm ? trace.state_norm + h : nullptr};
            float* state = st.ssm + int64_t{h} * S * S;
            if (use_chunks) chunked(head, T, S, state);
            else recurrent(head, T, S, state);
        }
    });

    // out = rmsnorm(o) * norm_w * silu(z), per head
    rmsnorm(out, out, w.ssm_norm.data, T * Hv, S, c.norm_eps);
    for (int64_t i = 0; i < int64_t{T} * VD; ++i) out[i] *= silu(z[size_t(i)]);
}

}  // namespace journey
