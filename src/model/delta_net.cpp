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

#include "journey/kernels/kernels.h"
#include "journey/kernels/thread_pool.h"

namespace journey {
namespace {

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float silu(float x) { return x / (1.0f + std::exp(-x)); }
float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }  // ggml's threshold

float dot(const float* a, const float* b, int n) {
    float s = 0.0f;
    for (int i = 0; i < n; ++i) s += a[i] * b[i];
    return s;
}

// Causal depthwise conv1d over the channels, K taps, then SiLU: x[T, CH] in place. The inputs
// before the first token are the state's K-1 rows, which become the last K-1 inputs after it.
void causal_conv(float* x, int T, int64_t CH, int K, const float* taps, float* state) {
    const int64_t keep = K - 1;
    std::vector<float> in(static_cast<size_t>((keep + T) * CH));  // [K-1 + T][CH]: the state, then x
    std::memcpy(in.data(), state, sizeof(float) * static_cast<size_t>(keep * CH));
    std::memcpy(in.data() + keep * CH, x, sizeof(float) * static_cast<size_t>(int64_t{T} * CH));
    for (int t = 0; t < T; ++t)
        for (int64_t ch = 0; ch < CH; ++ch) {
            float s = 0.0f;  // llama.cpp's ssm_conv: taps in order, oldest input first
            for (int i = 0; i < K; ++i) s += in[static_cast<size_t>((t + i) * CH + ch)] * taps[ch * K + i];
            x[int64_t{t} * CH + ch] = silu(s);
        }
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

// One token at a time: state = exp(g) state; d = beta (v - state k); state += d kᵀ; o = state q.
void recurrent(const Head& h, int T, int S, float* state) {
    std::vector<float> d(static_cast<size_t>(S));
    for (int t = 0; t < T; ++t) {
        const float* q = h.q + t * h.stride;
        const float* k = h.k + t * h.stride;
        const float* v = h.v + t * h.stride;
        const float decay = std::exp(h.g[int64_t{t} * h.Hv]), beta = h.beta[int64_t{t} * h.Hv];
        float* o = h.o + t * h.ostride;
        for (int j = 0; j < S; ++j) {
            float* row = state + int64_t{j} * S;
            for (int i = 0; i < S; ++i) row[i] *= decay;
            d[size_t(j)] = (v[j] - dot(row, k, S)) * beta;
        }
        for (int j = 0; j < S; ++j) {
            float* row = state + int64_t{j} * S;
            for (int i = 0; i < S; ++i) row[i] += d[size_t(j)] * k[i];
            o[j] = dot(row, q, S);
        }
        if (h.state_norm) h.state_norm[int64_t{t} * h.Hv] = frobenius(state, S);
    }
}

// Chunks of n <= kDeltaChunk tokens. With G_t = exp(cumulative g within the chunk) and S0 the
// state at the chunk's start, the delta rule's new values u_s (state_s = g_s state_{s-1} + u_s k_sᵀ)
// solve the unit lower-triangular system u_s + sum_{r<s} beta_s (G_s/G_r)(k_s·k_r) u_r =
// beta_s v_s - beta_s G_s S0 k_s: forward substitution on [beta v | beta G k] gives W and Kcd,
// and u_s = W_s - S0 Kcd_s. Then o_t = G_t S0 q_t + sum_{s<=t} (G_t/G_s)(k_s·q_t) u_s, and the
// state at the chunk's end is G_n S0 + sum_s (G_n/G_s) u_s k_sᵀ.
void chunked(const Head& h, int T, int S, float* state) {
    const int CS = kDeltaChunk;
    const size_t SS = size_t(S);
    std::vector<float> gc(static_cast<size_t>(CS)), X(size_t(CS) * 2 * SS), U(size_t(CS) * SS), kq(size_t(CS) * CS);
    for (int t0 = 0; t0 < T; t0 += CS) {
        const int n = std::min(CS, T - t0);
        auto q = [&](int s) { return h.q + (t0 + s) * h.stride; };
        auto k = [&](int s) { return h.k + (t0 + s) * h.stride; };
        auto v = [&](int s) { return h.v + (t0 + s) * h.stride; };
        auto beta = [&](int s) { return h.beta[int64_t{t0 + s} * h.Hv]; };
        float acc = 0.0f;
        for (int s = 0; s < n; ++s) gc[size_t(s)] = acc += h.g[int64_t{t0 + s} * h.Hv];
        // X_s = [beta_s v_s | beta_s G_s k_s] - sum_{r<s} A_sr X_r, A_sr = beta_s (G_s/G_r)(k_s·k_r)
        for (int s = 0; s < n; ++s) {
            float* x = X.data() + size_t(s) * 2 * SS;
            const float b = beta(s), bg = b * std::exp(gc[size_t(s)]);
            for (int j = 0; j < S; ++j) x[j] = b * v(s)[j];
            for (int i = 0; i < S; ++i) x[SS + size_t(i)] = bg * k(s)[i];
            for (int r = 0; r < s; ++r) {
                const float a = b * std::exp(gc[size_t(s)] - gc[size_t(r)]) * dot(k(s), k(r), S);
                const float* xr = X.data() + size_t(r) * 2 * SS;
                for (size_t i = 0; i < 2 * SS; ++i) x[i] -= a * xr[i];
            }
            for (int r = 0; r <= s; ++r) kq[size_t(s) * CS + size_t(r)] = dot(k(r), q(s), S);
        }
        // u_s = W_s - S0 Kcd_s
        for (int s = 0; s < n; ++s) {
            const float* x = X.data() + size_t(s) * 2 * SS;
            float* u = U.data() + size_t(s) * SS;
            for (int j = 0; j < S; ++j) u[j] = x[j] - dot(state + int64_t{j} * S, x + SS, S);
        }
        // outputs, from the chunk's starting state
        for (int t = 0; t < n; ++t) {
            float* o = h.o + (t0 + t) * h.ostride;
            const float G = std::exp(gc[size_t(t)]);
            for (int j = 0; j < S; ++j) o[j] = G * dot(state + int64_t{j} * S, q(t), S);
            for (int s = 0; s <= t; ++s) {
                const float c = std::exp(gc[size_t(t)] - gc[size_t(s)]) * kq[size_t(t) * CS + size_t(s)];
                const float* u = U.data() + size_t(s) * SS;
                for (int j = 0; j < S; ++j) o[j] += c * u[j];
            }
        }
        // traced: the state after each token of the chunk, state_s = exp(g_s) state_{s-1} + u_s k_sᵀ
        // from the chunk's own u (its norm only; the pass goes on from the closed form below)
        if (h.state_norm) {
            std::vector<float> m(state, state + SS * SS);
            for (int s = 0; s < n; ++s) {
                const float decay = std::exp(h.g[int64_t{t0 + s} * h.Hv]);
                const float* u = U.data() + size_t(s) * SS;
                for (int j = 0; j < S; ++j)
                    for (int i = 0; i < S; ++i) {
                        float& x = m[size_t(j) * SS + size_t(i)];
                        x = x * decay + u[j] * k(s)[i];
                    }
                h.state_norm[int64_t{t0 + s} * h.Hv] = frobenius(m.data(), S);
            }
        }
        // the state at the chunk's end
        const float last = gc[size_t(n - 1)], Gn = std::exp(last);
        for (int j = 0; j < S; ++j) {
            float* row = state + int64_t{j} * S;
            for (int i = 0; i < S; ++i) row[i] *= Gn;
        }
        for (int s = 0; s < n; ++s) {
            const float c = std::exp(last - gc[size_t(s)]);
            const float* u = U.data() + size_t(s) * SS;
            const float* ks = k(s);
            for (int j = 0; j < S; ++j) {
                float* row = state + int64_t{j} * S;
                const float cu = c * u[j];
                for (int i = 0; i < S; ++i) row[i] += cu * ks[i];
            }
        }
    }
}

}  // namespace

void gated_delta_net(float* out, const float* xn, const LayerWeights& w, const ModelConfig& c, int T, bool prompt,
                     RecurrentState st, DeltaForm form, const DeltaTrace& trace) {
    const int Hk = c.ssm_k_heads, Hv = c.ssm_v_heads, S = c.ssm_head_dim, K = c.ssm_conv;
    const int64_t CH = c.ssm_channels(), VD = int64_t{Hv} * S;
    std::vector<float> qkv(static_cast<size_t>(T * CH)), z(static_cast<size_t>(T * VD));
    std::vector<float> beta(static_cast<size_t>(int64_t{T} * Hv)), g(static_cast<size_t>(int64_t{T} * Hv));
    const int R = Hv / Hk;  // value heads per key head
    if (w.ssm_qkvz) {  // Qwen3-Next: per key head [q (S) | k (S) | v (R S) | z (R S)] -> q | k | v and z
        const int64_t W = 2 * int64_t{S} + 2 * int64_t{R} * S;
        std::vector<float> f(static_cast<size_t>(int64_t{T} * Hk * W));
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
        std::vector<float> f(static_cast<size_t>(int64_t{T} * 2 * Hv));
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
