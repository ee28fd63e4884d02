// The forward pass, top to bottom: embed + position, then per block
// norm -> attention -> residual -> norm -> MLP -> residual, then final norm -> logits.
//
// Convention: T = tokens in this eval, P = n_past (positions already cached), C = n_embd,
// H / Hkv = query / key-value heads, D = head_dim, F = n_ff, V = n_vocab. Activations are
// row-major [T, C]. The KV cache of layer l holds [n_ctx, Hkv*D] for keys and for values
// (n_ctx: the session's context), as float or as F16.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "journey/kernels/kernels.h"
#include "journey/model/session.h"
#include "journey/model/unembed.h"
#include "journey/model/moe.h"
#include "journey/model/delta_net.h"

namespace journey {
namespace {

// Everything one block needs to know about this eval.
struct Pass {
    const ModelConfig& c;
    const Model& model;  // rotary frequencies per layer
    int n_ctx;           // the session's context (longrope picks its factors by it)
    Observer* observer;
    Intervention* intervention;  // activation patching (observer.h); null almost always
    int T, P;
    bool prompt;  // this eval has several tokens: products use the prompt kernels, even on one row
    bool tokens = false;  // rows of several sequences, one token each: each row as if alone (matmul_tokens)

    // The same pass over one block whose shapes are `layer` (Gemma 4's differ per layer).
    Pass with(const ModelConfig& layer) const {
        Pass p{layer, model, n_ctx, observer, intervention, T, P, prompt};
        p.tokens = tokens;
        return p;
    }

    // Hands a named intermediate to the observer; one branch when there is none.
    void notify(const char* name, int layer, const float* data, std::initializer_list<int64_t> dims) const {
        if (!observer) return;
        observer->observe({name, layer, P, data, std::span<const int64_t>(dims.begin(), dims.size())});
    }
    // A site an intervention may change before the observer sees it and the pass goes on.
    void site(const char* name, int layer, float* data, std::initializer_list<int64_t> dims) const {
        if (intervention)
            intervention->intervene({name, layer, P, data, std::span<const int64_t>(dims.begin(), dims.size())}, data);
        notify(name, layer, data, dims);
    }

    // A block's norm before attention or the MLP; a row without one (OLMo 2) passes x on as it is.
    void pre_norm(float* out, const float* x, const Vector& w, const Vector& b) const {
        if (w) return norm(out, x, w, b);
        std::memcpy(out, x, sizeof(float) * static_cast<size_t>(T) * static_cast<size_t>(c.n_embd));
    }

    // Granite: a residual branch times residual_multiplier before it is added.
    void residual_scale(float* y) const {
        if (c.residual_scale == 1.0f) return;
        for (int64_t i = 0; i < int64_t{T} * c.n_embd; ++i) y[i] *= c.residual_scale;
    }

    void norm(float* out, const float* x, const Vector& w, const Vector& b) const {
        switch (c.norm) {
            case NormKind::layernorm: return layernorm(out, x, w.data, b.data, T, c.n_embd, c.norm_eps);
            case NormKind::rmsnorm: return rmsnorm(out, x, w.data, T, c.n_embd, c.norm_eps);
        }
    }

    // y[T, n_out] = x · W + b (b may be empty).
    void linear(float* y, const float* x, const Matrix& W, const Vector& b) const {
        if (observer) observer->product(W, x, T);
        if (tokens) matmul_tokens(y, x, W, T);
        else matmul(y, x, W, T, prompt);
        if (b) add_bias(y, b.data, T, static_cast<int>(W.n_out()));
    }
};

// Scratch activations for one eval, carved from one buffer. Each buffer starts on a 64-byte line
// (of work_, a LineVector): the kernels read x with 64-byte loads, and one that spans two lines
// costs two.
struct Buffers {
    float *x, *xn, *qkv, *q, *z, *att, *proj, *ff, *gate, *x0, *k, *v, *qg;
    float *ple, *ple_row, *ple_gate, *ple_in;  // Gemma 4's per-layer embeddings: [T, L*P], one token's row, [T, P] x2
    static size_t floats(const ModelConfig& c, int T, int P) {
        size_t n = 0;
        Buffers sizing;
        sizing.carve(c, T, P, [&n](int64_t k) -> float* { n += rounded(k); return nullptr; });
        return n;
    }
    Buffers(float* p, const ModelConfig& c, int T, int P) {
        carve(c, T, P, [&p](int64_t k) { float* r = p; p += rounded(k); return r; });
    }

private:
    Buffers() = default;
    static size_t rounded(int64_t n) { return static_cast<size_t>((n + 15) / 16 * 16); }  // whole lines of floats
    // Every buffer from take(its floats), in order: floats() and the constructor share it.
    template <class Take>
    void carve(const ModelConfig& c, int T, int P, Take take) {
        const int64_t t = T, C = c.n_embd, HD = int64_t{c.n_head} * c.head_dim, F = c.n_ff;
        const int64_t kvd = int64_t{c.n_kv_head} * c.head_dim;
        x = take(t * C); xn = take(t * C); proj = take(t * C); x0 = take(t * C);  // x0: GPT-NeoX's parallel MLP input
        const int64_t SV = int64_t{c.ssm_v_heads} * c.ssm_head_dim;  // a hybrid's linear-attention output
        qkv = take(t * (HD + 2 * kvd)); q = take(t * HD); z = take(t * std::max(HD, SV));
        qg = take(c.attn_output_gate ? t * 2 * HD : 0);  // gated attention: [q_h | gate_h] per head
        k = take(t * kvd); v = take(t * kvd);  // several sequences: the new keys and values before their caches
        ff = take(t * F); gate = take(t * 2 * F);  // 2F: Phi-3's fused gate|up
        att = take(int64_t{c.n_head} * t * (P + T));
        const int64_t LP = int64_t{c.n_layer} * c.n_embd_per_layer, PL = c.n_embd_per_layer;
        ple = take(t * LP); ple_row = take(LP); ple_gate = take(t * PL); ple_in = take(t * PL);
    }
};

// One layer's keys and values as the attention reads them: float rows [0, P+T). With an F16
// cache they are a float copy of the stored halves, and the new rows are rounded to F16 (and
// stored) before the attention reads them, as llama.cpp's F16 cache does. One token (T = 1)
// reads the halves themselves (attention_f16_cache, the same bits): only its new row is
// written in float, so the cached rows are not converted every token.
struct KvLayer {
    float* k;
    float* v;
    KvHalf* k16 = nullptr;  // F16 storage of this layer, or null (F32: k and v are the cache)
    KvHalf* v16 = nullptr;
    int row0 = 0, T = 0, P = 0;  // the sequence's rows of this pass, and its cached positions

    void store_new(int P, int T, int64_t KD) const {
        if (!k16) return;
        for (int64_t i = P * KD; i < (P + T) * KD; ++i) {
            k16[i] = static_cast<KvHalf>(k[i]);
            v16[i] = static_cast<KvHalf>(v[i]);
            k[i] = static_cast<float>(k16[i]);
            v[i] = static_cast<float>(v16[i]);
        }
    }
};

// Rotates the first rot_dims() values of each head by position, cos and sin scaled by mscale
// (yarn / longrope attention factor): the kernel's rope with the model's facts.
void rotate(float* x, int T, int heads, const ModelConfig& c, int P, const float* inv_freq, float mscale) {
    rope(x, T, heads, c.head_dim, P, inv_freq, c.rope_pairing, c.rot_dims(), mscale);
}

// RMSNorm without a weight over rows of n values (Gemma 4's values), as llama.cpp's ggml_rms_norm.
void unit_rmsnorm(float* x, int64_t rows, int n, float eps) {
    for (int64_t r = 0; r < rows; ++r) {
        float* v = x + r * n;
        float ss = 0.0f;
        for (int i = 0; i < n; ++i) ss += v[i] * v[i];
        ss = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
        for (int i = 0; i < n; ++i) v[i] *= ss;
    }
}

// Attention sub-block, first half: the heads' output b.z = attn(norm(resid)). Writes this eval's
// keys/values into the cache.
void attention_heads(const Pass& s, const LayerWeights& w, int l, Buffers& b, std::span<const KvLayer> seqs) {
    const ModelConfig& c = s.c;
    const int T = s.T, H = c.n_head, Hkv = c.n_kv_head, D = c.head_dim;
    const int64_t HD = int64_t{H} * D, KD = int64_t{Hkv} * D;
    // A KV-shared layer (Gemma 4) computes queries only: its keys and values are those its
    // source layer stored in this pass and before (the same cache slot).
    const bool shares = c.kv_source(l) != l;
    // One sequence: keys and values go straight into its cache rows; several: into b.k, b.v,
    // then each sequence's rows into its own cache.
    const bool one = seqs.size() == 1;
    float* k_new = one ? seqs[0].k + seqs[0].P * KD : b.k;
    float* v_new = one ? seqs[0].v + seqs[0].P * KD : b.v;

    s.pre_norm(b.xn, b.x, w.attn_norm_w, w.attn_norm_b);
    // Queries, keys and values; GPT-2, Phi-3 and GPT-NeoX fuse them into one product: [q | k | v]
    // per row (HF GPT-NeoX: [q_h | k_h | v_h] per head, as its checkpoint stores the rows).
    if (w.attn_qkv) {
        s.linear(b.qkv, b.xn, w.attn_qkv, w.attn_qkv_b);
        const int64_t row = HD + 2 * KD;
        const size_t d = sizeof(float) * static_cast<size_t>(D);
        for (int t = 0; t < T; ++t) {
            const float* r = b.qkv + t * row;
            if (c.qkv_per_head) {
                for (int h = 0; h < H; ++h) {
                    std::memcpy(b.q + t * HD + h * D, r + 3 * h * D, d);
                    std::memcpy(k_new + t * KD + h * D, r + 3 * h * D + D, d);
                    std::memcpy(v_new + t * KD + h * D, r + 3 * h * D + 2 * D, d);
                }
                continue;
            }
            std::memcpy(b.q + t * HD, r, sizeof(float) * static_cast<size_t>(HD));
            std::memcpy(k_new + t * KD, r + HD, sizeof(float) * static_cast<size_t>(KD));
            std::memcpy(v_new + t * KD, r + HD + KD, sizeof(float) * static_cast<size_t>(KD));
        }
    } else {  // three projections (biases: Qwen2)
        if (c.attn_output_gate) {  // Qwen3.5: q_proj gives [q_h | gate_h] per head; the gates stay in b.qg
            s.linear(b.qg, b.xn, w.attn_q, {});
            for (int64_t r = 0; r < int64_t{T} * H; ++r)
                std::memcpy(b.q + r * D, b.qg + r * 2 * D, sizeof(float) * static_cast<size_t>(D));
        } else {
            s.linear(b.q, b.xn, w.attn_q, w.attn_q_b);
        }
        if (!shares) {
            s.linear(k_new, b.xn, w.attn_k, w.attn_k_b);
            s.linear(v_new, b.xn, w.attn_v, w.attn_v_b);
        }
    }
    if (w.attn_q_norm) {  // Qwen3, Gemma 3: RMSNorm over each head's D values of q and k, before rope;
        // OLMo 2, OLMoE: over each token's whole projection (the norm's width: H*D, Hkv*D)
        const int nq = int(w.attn_q_norm.n), nk = int(w.attn_k_norm.n);
        rmsnorm(b.q, b.q, w.attn_q_norm.data, int(int64_t{T} * HD / nq), nq, c.norm_eps);
        if (!shares) rmsnorm(k_new, k_new, w.attn_k_norm.data, int(int64_t{T} * KD / nk), nk, c.norm_eps);
    }
    if (c.v_norm && !shares) unit_rmsnorm(v_new, int64_t{T} * Hkv, D, c.norm_eps);  // Gemma 4: no weight
    const AttentionOptions ao{c.attn_scale, c.attn_softcap, c.window_of(l), w.attn_sinks.data};  // sinks: gpt-oss
    static_assert(sizeof(KvHalf) == sizeof(uint16_t));
    for (const KvLayer& kv : seqs) {  // each sequence over its own cache, at its own positions
        const int t0 = kv.row0, n = kv.T, P = kv.P;
        float* q = b.q + t0 * HD;
        float* k_rows = kv.k + P * KD;
        if (!one && !shares) {
            std::memcpy(k_rows, k_new + t0 * KD, sizeof(float) * static_cast<size_t>(n * KD));
            std::memcpy(kv.v + P * KD, v_new + t0 * KD, sizeof(float) * static_cast<size_t>(n * KD));
        }
        if (c.rotates(l)) {  // rotate queries and the new keys by their positions (SmolLM3's NoPE layers: not)
            const float* inv_freq = s.model.rope_inv_freq(l, s.n_ctx);
            const float mscale = s.model.rope_mscale(l);
            rotate(q, n, H, c, P, inv_freq, mscale);
            if (!shares) rotate(k_rows, n, Hkv, c, P, inv_freq, mscale);
        }
        if (c.attn_temp_scale != 0.0f)  // Ministral 3: each rotated query times its position's temperature
            for (int t = 0; t < n; ++t) {
                const float tq = c.attn_temp(P + t);
                for (int64_t i = t * HD; i < (t + 1) * HD; ++i) q[i] *= tq;
            }
        if (!shares) kv.store_new(P, n, KD);
        if (kv.k16 && n == 1)
            attention_f16_cache(b.z + t0 * HD, b.att, q, reinterpret_cast<const uint16_t*>(kv.k16),
                                reinterpret_cast<const uint16_t*>(kv.v16), P, H, Hkv, D, ao);
        else
            attention(b.z + t0 * HD, b.att, q, kv.k, kv.v, n, P, H, Hkv, D, ao);
    }
    s.notify("attn_pattern", l, b.att, {H, T, s.P + T});
    if (c.attn_output_gate) {  // z * sigmoid(gate), per head
        std::vector<float> seen(s.observer ? size_t(int64_t{T} * HD) : 0);  // traced: the gate values
        for (int64_t r = 0; r < int64_t{T} * H; ++r)
            for (int i = 0; i < D; ++i) {
                const float g = 1.0f / (1.0f + std::exp(-b.qg[r * 2 * D + D + i]));
                b.z[r * D + i] *= g;
                if (!seen.empty()) seen[size_t(r * D + i)] = g;
            }
        s.notify("attn_gate", l, seen.data(), {T, H, D});
    }
    s.site("attn_z", l, b.z, {T, H, D});
}

// Second half: resid += out_proj(z) (Gemma 2, OLMo 2: resid += post_norm(out_proj(z)); Granite:
// times residual_multiplier).
void attention_out(const Pass& s, const LayerWeights& w, int l, Buffers& b) {
    const int T = s.T, C = s.c.n_embd;

    s.linear(b.proj, b.z, w.attn_out, w.attn_out_b);
    if (w.attn_post_norm) s.norm(b.proj, b.proj, w.attn_post_norm, {});
    s.residual_scale(b.proj);
    s.site("attn_out", l, b.proj, {T, C});
    add(b.x, b.proj, int64_t{T} * C);
    s.notify("resid_mid", l, b.x, {T, C});
}

// The gated MLPs' two products: b.gate = gate(xn), b.ff = up(xn); Phi-3 computes them as one
// [T, 2F] product (gate | up per row), split here.
void gate_and_up(const Pass& s, const LayerWeights& w, Buffers& b) {
    const int T = s.T, F = s.c.n_ff;
    if (!w.mlp_gate_up) {
        s.linear(b.gate, b.xn, w.mlp_gate, {});
        s.linear(b.ff, b.xn, w.mlp_up, w.mlp_up_b);
        return;
    }
    s.linear(b.gate, b.xn, w.mlp_gate_up, {});
    for (int t = 0; t < T; ++t) {  // row t's halves: gate to gate[t] (moving down, never over a later row), up to ff[t]
        std::memcpy(b.ff + int64_t{t} * F, b.gate + int64_t{t} * 2 * F + F, sizeof(float) * static_cast<size_t>(F));
        std::memmove(b.gate + int64_t{t} * F, b.gate + int64_t{t} * 2 * F, sizeof(float) * static_cast<size_t>(F));
    }
}

// Gemma 4's per-layer inputs, once per pass: for each token and layer, P values:
// (rmsnorm_P(proj(x) / sqrt(C)) + ple_embd[token] * sqrt(P)) / sqrt(2), x the scaled embedding.
void per_layer_inputs(const Pass& s, const Weights& w, std::span<const TokenId> tokens, Buffers& b) {
    const ModelConfig& c = s.c;
    const int T = s.T, PL = c.n_embd_per_layer;
    const int64_t LP = int64_t{c.n_layer} * PL;
    s.linear(b.ple, b.x, w.ple_model_proj, {});
    const float proj_scale = 1.0f / std::sqrt(static_cast<float>(c.n_embd));
    for (int64_t i = 0; i < T * LP; ++i) b.ple[i] *= proj_scale;
    rmsnorm(b.ple, b.ple, w.ple_proj_norm.data, T * c.n_layer, PL, c.norm_eps);
    const float embd_scale = std::sqrt(static_cast<float>(PL)), half = 1.0f / std::sqrt(2.0f);
    for (int t = 0; t < T; ++t) {
        embedding_row(b.ple_row, w.ple_embd, tokens[static_cast<size_t>(t)]);
        float* r = b.ple + t * LP;
        for (int64_t i = 0; i < LP; ++i) r[i] = (r[i] + b.ple_row[i] * embd_scale) * half;
    }
    s.notify("per_layer_inputs", -1, b.ple, {T, c.n_layer, PL});
}

// The end of a layer after its MLP (Gemma 4): resid += post_norm(proj(gelu(gate(resid)) * the
// layer's per-layer input)), then resid *= the layer's scalar.
void layer_tail(const Pass& s, const LayerWeights& w, int l, Buffers& b) {
    const ModelConfig& c = s.c;
    const int T = s.T, C = c.n_embd, PL = c.n_embd_per_layer;
    if (w.ple_gate) {
        const int64_t LP = int64_t{c.n_layer} * PL;
        s.linear(b.ple_gate, b.x, w.ple_gate, {});
        for (int t = 0; t < T; ++t)
            std::memcpy(b.ple_in + int64_t{t} * PL, b.ple + t * LP + int64_t{l} * PL, sizeof(float) * size_t(PL));
        geglu_tanh(b.ple_in, b.ple_gate, int64_t{T} * PL);
        s.linear(b.proj, b.ple_in, w.ple_proj, {});
        s.norm(b.proj, b.proj, w.ple_post_norm, {});
        s.site("ple_out", l, b.proj, {T, C});
        add(b.x, b.proj, int64_t{T} * C);
    }
    if (w.out_scale)
        for (int64_t i = 0; i < int64_t{T} * C; ++i) b.x[i] *= w.out_scale.data[0];
}

// MLP sub-block: resid += down(act(up(norm(resid)))) (Gemma 2/3: then a post-norm; OLMo 2: the
// post-norm only; Granite: times residual_multiplier; GPT-NeoX's parallel residual: the norm reads
// the layer's input b.x0, not resid_mid).
void mlp_block(const Pass& s, const LayerWeights& w, int l, Buffers& b) {
    const ModelConfig& c = s.c;
    const int T = s.T, C = c.n_embd;
    const int64_t n = int64_t{T} * c.n_ff;
    s.pre_norm(b.xn, c.parallel_residual ? b.x0 : b.x, w.mlp_norm_w, w.mlp_norm_b);
    if (w.moe_router) {  // mixture of experts (moe.cpp): b.proj = the routed experts' weighted sum
        const int E = c.n_expert;
        const int K = c.n_expert_used;
        // Only for an observer: the router logits [T, E], the experts' rows [T, K, C] and the
        // shared expert's gated rows [T, C] (Qwen3.5-MoE).
        std::vector<float> routed, chosen, shared;
        const bool has_shared = bool(w.shexp_down);
        if (s.tokens) {  // several sequences' tokens: each as alone
            for (int t = 0; t < T; ++t) {
                moe_ffn(b.proj + int64_t{t} * C, b.xn + int64_t{t} * C, w, c, 1, false, s.observer);
                if (s.observer) {
                    routed.insert(routed.end(), moe_last_router_logits(), moe_last_router_logits() + E);
                    chosen.resize(size_t(t + 1) * size_t(K) * size_t(C));
                    moe_last_expert_rows(chosen.data() + int64_t{t} * K * C, 1, c);
                    if (has_shared) {
                        shared.resize(size_t(t + 1) * size_t(C));
                        moe_last_shared_rows(shared.data() + int64_t{t} * C, 1, c);
                    }
                }
            }
        } else {
            moe_ffn(b.proj, b.xn, w, c, T, s.prompt, s.observer);
            if (s.observer) {
                routed.assign(moe_last_router_logits(), moe_last_router_logits() + int64_t{T} * E);
                chosen.resize(size_t(T) * size_t(K) * size_t(C));
                moe_last_expert_rows(chosen.data(), T, c);
                if (has_shared) {
                    shared.resize(size_t(T) * size_t(C));
                    moe_last_shared_rows(shared.data(), T, c);
                }
            }
        }
        if (s.observer) {
            s.notify("moe_logits", l, routed.data(), {T, E});
            s.notify("moe_expert_out", l, chosen.data(), {T, K, C});
            if (has_shared) s.notify("moe_shared_out", l, shared.data(), {T, C});
        }
        s.residual_scale(b.proj);
        s.site("mlp_out", l, b.proj, {T, C});
        add(b.x, b.proj, int64_t{T} * C);
        layer_tail(s, w, l, b);
        s.site("resid_post", l, b.x, {T, C});
        return;
    }
    switch (c.activation) {
        case ActivationKind::gelu_new:
            s.linear(b.ff, b.xn, w.mlp_up, w.mlp_up_b);
            gelu_new(b.ff, n);
            break;
        case ActivationKind::gelu_erf:  // GPT-NeoX: transformers' "gelu", 0.5 x (1 + erf(x / sqrt 2))
            s.linear(b.ff, b.xn, w.mlp_up, w.mlp_up_b);
            for (int64_t i = 0; i < n; ++i) b.ff[i] = 0.5f * b.ff[i] * (1.0f + std::erf(b.ff[i] * float(std::numbers::sqrt2 / 2)));
            break;
        case ActivationKind::swiglu:  // ff = silu(gate(x)) * up(x)
            gate_and_up(s, w, b);
            swiglu(b.ff, b.gate, n);
            break;
        case ActivationKind::geglu_tanh:  // ff = gelu_tanh(gate(x)) * up(x)
            gate_and_up(s, w, b);
            geglu_tanh(b.ff, b.gate, n);
            break;
        case ActivationKind::swiglu_oai: throw std::logic_error("swiglu_oai outside a mixture of experts");
    }
    s.linear(b.proj, b.ff, w.mlp_down, w.mlp_down_b);
    if (w.mlp_post_norm) s.norm(b.proj, b.proj, w.mlp_post_norm, {});
    s.residual_scale(b.proj);
    s.site("mlp_out", l, b.proj, {T, C});
    add(b.x, b.proj, int64_t{T} * C);
    layer_tail(s, w, l, b);
    s.site("resid_post", l, b.x, {T, C});
}

}  // namespace

// One pass over the rows of one or several sessions: sessions[i] runs tokens[i] (several
// sessions: one token each, each row as if alone), or its next rows[i] tokens (several sessions'
// prompts: the prompt kernels, whose rows get the same bits in any product). Logits go to each
// session's logits_.
void Session::forward(std::span<Session* const> sessions, std::span<const TokenId> tokens, LogitsFor which, bool logits,
                      std::span<const int> rows_of) {
    Session& first = *sessions[0];
    const Model& model = first.model_;
    const ModelConfig& c = model.config();
    const Weights& w = model.weights();
    const bool many = sessions.size() > 1, prompts = many && !rows_of.empty();
    const int T = static_cast<int>(tokens.size()), C = c.n_embd, V = c.n_vocab;
    int P = first.n_past_;
    for (const Session* q : sessions) P = std::max(P, q->n_past_);  // sizes the attention's scratch
    // Each sequence's first row in this pass, and each row's position.
    std::vector<int> row0(sessions.size() + 1, 0), pos(static_cast<size_t>(T));
    for (size_t i = 0; i < sessions.size(); ++i) {
        const int n = many ? (prompts ? rows_of[i] : 1) : T;
        row0[i + 1] = row0[i] + n;
        for (int k = 0; k < n; ++k) pos[static_cast<size_t>(row0[i] + k)] = sessions[i]->n_past_ + k;
    }
    if (row0.back() != T) throw std::logic_error("forward: rows do not add up to the tokens");
    Pass s{c, model, first.n_ctx_, first.observer_, many ? nullptr : first.intervention_, T, P, (T > 1 && !many) || prompts};
    s.tokens = many && !prompts;
    LineVector<float>& work = first.work_;
    work.resize(Buffers::floats(c, T, P));
    Buffers b(work.data(), c, T, P);
    auto position = [&](int t) { return pos[static_cast<size_t>(t)]; };

    // Embedding: token vector, plus a position vector for learned positions (rotary ones act in attention).
    for (int t = 0; t < T; ++t) embedding_row(b.x + int64_t{t} * C, w.tok_embd, tokens[static_cast<size_t>(t)]);
    if (c.embed_scale != 1.0f)  // Gemma: x * sqrt(C)
        for (int64_t i = 0; i < int64_t{T} * C; ++i) b.x[i] *= c.embed_scale;
    s.notify("tok_embed", -1, b.x, {T, C});
    if (c.position == PositionKind::learned) {
        for (int t = 0; t < T; ++t) embedding_row(b.xn + int64_t{t} * C, w.pos_embd, position(t));
        s.notify("pos_embed", -1, b.xn, {T, C});
        add(b.x, b.xn, int64_t{T} * C);
    }
    s.site("embed", -1, b.x, {T, C});
    if (c.n_embd_per_layer > 0) per_layer_inputs(s, w, tokens, b);

    // The blocks. When only the last token's logits are wanted and nothing observes the pass, the
    // other tokens' rows of the last block after attention lead nowhere: the pass narrows to the
    // last token there (as llama.cpp does), saving about 1/n_layer of a prompt. Its row is still
    // computed by the prompt kernels, so it gets the same bits as in the full pass.
    const bool narrow = which == LogitsFor::last && !first.observer_ && !first.intervention_ && T > 1 && !many;
    std::vector<KvLayer> kvs(sessions.size());
    for (int l = 0; l < c.n_layer; ++l) {
        // The layer's own shapes (Gemma 4: head width, rotated dims, MLP width per layer).
        Pass ls = s.with(model.layer_config(l));
        ls.T = s.T;
        const int64_t KD = int64_t{c.n_kv_head} * ls.c.head_dim;
        ls.site("resid_pre", l, b.x, {T, C});
        const LayerWeights& lw = w.layers[static_cast<size_t>(l)];
        if (c.is_recurrent(l)) {  // a hybrid's linear-attention layer (delta_net.cpp): its state, not a cache
            const int slot = first.rec_slot_[static_cast<size_t>(l)];
            const RecurrentState st{first.conv_state_.data() + slot * c.conv_state_floats(), first.ssm_state_.data() + slot * c.ssm_state_floats()};
            ls.norm(b.xn, b.x, lw.attn_norm_w, lw.attn_norm_b);
            std::vector<float> seen(ls.observer ? size_t(3 * int64_t{T} * c.ssm_v_heads) : 0);  // traced: beta, g, state norms
            const int64_t TH = int64_t{T} * c.ssm_v_heads;
            const DeltaTrace dt = ls.observer ? DeltaTrace{seen.data(), seen.data() + TH, seen.data() + 2 * TH} : DeltaTrace{};
            gated_delta_net(b.z, b.xn, lw, c, T, ls.prompt, st, first.delta_form_, dt);
            if (ls.observer) {
                for (int64_t i = TH; i < 2 * TH; ++i) seen[size_t(i)] = std::exp(seen[size_t(i)]);  // g -> the decay exp(g)
                ls.notify("ssm_beta", l, seen.data(), {T, c.ssm_v_heads});
                ls.notify("ssm_decay", l, seen.data() + TH, {T, c.ssm_v_heads});
                ls.notify("ssm_state_norm", l, seen.data() + 2 * TH, {T, c.ssm_v_heads});
            }
            ls.site("attn_z", l, b.z, {T, c.ssm_v_heads, c.ssm_head_dim});
            if (narrow && l == c.n_layer - 1) {
                b.x += int64_t{T - 1} * C;
                b.z += int64_t{T - 1} * c.ssm_v_heads * c.ssm_head_dim;
                ls.T = s.T = 1;
            }
            attention_out(ls, lw, l, b);
            mlp_block(ls, lw, l, b);
            continue;
        }
        for (size_t i = 0; i < sessions.size(); ++i) {
            Session& q = *sessions[i];
            const int n = row0[i + 1] - row0[i], Pq = q.n_past_;
            const int64_t cache_layer = int64_t{q.n_ctx_} * KD;
            const int64_t kv_at = q.kv_at_[static_cast<size_t>(l)];
            // A KV-shared layer's new rows were stored by its source layer in this pass.
            const int64_t rows_cached = c.kv_source(l) == l ? Pq : Pq + n;
            KvLayer& kv = kvs[i];
            if (q.kv_type_ == KvType::f32) {
                kv = {q.k_cache_.data() + kv_at, q.v_cache_.data() + kv_at};
            } else {  // the cached positions as float, for this layer
                kv = {q.kv_scratch_.data(), q.kv_scratch_.data() + cache_layer, q.k16_.data() + kv_at,
                      q.v16_.data() + kv_at};
                for (int64_t e = 0; e < (n == 1 ? 0 : rows_cached * KD); ++e) {  // one token reads the halves
                    kv.k[e] = static_cast<float>(kv.k16[e]);
                    kv.v[e] = static_cast<float>(kv.v16[e]);
                }
            }
            kv.row0 = row0[i];
            kv.T = n;
            kv.P = Pq;
        }
        if (c.parallel_residual) std::memcpy(b.x0, b.x, sizeof(float) * static_cast<size_t>(ls.T) * static_cast<size_t>(C));
        attention_heads(ls, lw, l, b, kvs);
        if (narrow && l == c.n_layer - 1) {
            b.x += int64_t{T - 1} * C;
            b.x0 += int64_t{T - 1} * C;
            b.z += int64_t{T - 1} * c.n_head * ls.c.head_dim;
            b.ple += int64_t{T - 1} * c.n_layer * c.n_embd_per_layer;
            ls.T = s.T = 1;
        }
        attention_out(ls, lw, l, b);
        mlp_block(ls, lw, l, b);
    }

    if (!logits) return;  // a prompt's piece before its last (Session::eval)

    // Final norm, then unembedding (tied to wte for GPT-2): logits = ln_f(x) · Wᵀ.
    // The same two functions serve the logit lens (unembed.h).
    final_norm(model, b.x, s.T, b.xn);
    s.notify("final_norm", -1, b.xn, {s.T, C});
    if (prompts && which == LogitsFor::all) {  // each sequence's rows, as alone
        for (size_t i = 0; i < sessions.size(); ++i) {
            const int n = row0[i + 1] - row0[i];
            sessions[i]->logits_.resize(static_cast<size_t>(n) * static_cast<size_t>(V));
            project_to_vocab(model, b.xn + int64_t{row0[i]} * C, n, sessions[i]->logits_.data());
        }
        return;
    }
    if (many) {  // each sequence's (last) row, as if alone
        if (prompts)  // the last rows together
            for (size_t i = 0; i < sessions.size(); ++i)
                std::memmove(b.xn + int64_t(i) * C, b.xn + int64_t{row0[i + 1] - 1} * C, sizeof(float) * size_t(C));
        const int n = static_cast<int>(sessions.size());
        thread_local std::vector<float> rows;
        rows.resize(static_cast<size_t>(n) * static_cast<size_t>(V));
        project_to_vocab(model, b.xn, n, rows.data(), true);
        for (size_t i = 0; i < sessions.size(); ++i)
            sessions[i]->logits_.assign(rows.begin() + std::ptrdiff_t(i * size_t(V)), rows.begin() + std::ptrdiff_t((i + 1) * size_t(V)));
        return;
    }
    const int rows = which == LogitsFor::all ? T : 1;
    first.logits_.resize(static_cast<size_t>(rows) * static_cast<size_t>(V));
    project_to_vocab(model, b.xn + int64_t{s.T - rows} * C, rows, first.logits_.data());
    s.notify("logits", -1, first.logits_.data(), {rows, V});
}

}  // namespace journey
