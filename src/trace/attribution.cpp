// Direct logit attribution from the recorded rows of one pass (attribution.h).
#include "journey/trace/attribution.h"

#include <cmath>
#include <span>
#include <stdexcept>

#include "journey/errors.h"
#include "journey/kernels/kernels.h"

namespace journey {
namespace {

double mean_of(std::span<const float> x) {
    double s = 0;
    for (float v : x) s += v;
    return x.empty() ? 0.0 : s / double(x.size());
}

// 1/rms(x) (RMSNorm) or 1/σ(x) (LayerNorm, biased variance), in double.
double frozen_scale(NormKind kind, std::span<const float> x, double eps) {
    const double mu = kind == NormKind::layernorm ? mean_of(x) : 0.0;
    double s = 0;
    for (float v : x) s += (double(v) - mu) * (double(v) - mu);
    return 1.0 / std::sqrt(s / double(x.size()) + eps);
}

// The unembedding row of `id`, in float.
std::vector<float> unembedding_row(const Model& m, TokenId id) {
    const Matrix& U = m.weights().output;
    if (U.layout != Layout::Linear)
        throw UsageError("--attribute: the output matrix is stored [in, out] (Conv1D); its rows cannot be read one by one");
    std::vector<float> row(static_cast<size_t>(U.cols));
    embedding_row(row.data(), U, id);
    return row;
}

// The linear map c -> part(c) through a norm frozen at a scale: scale · ((c - centre c) · g).
struct Frozen {
    NormKind kind;
    double scale;
    std::vector<double> g;  // w ⊙ u
    double g_sum = 0;       // Σ g, for LayerNorm's centring

    double operator()(std::span<const float> c) const {
        double dot = 0;
        for (size_t i = 0; i < g.size(); ++i) dot += double(c[i]) * g[i];
        if (kind == NormKind::layernorm) dot -= mean_of(c) * g_sum;
        return scale * dot;
    }
};

}  // namespace

Attribution attribute(const Model& m, const AttributionRows& rows, TokenId target, std::optional<TokenId> contrast,
                      double logit) {
    const ModelConfig& c = m.config();
    const Weights& w = m.weights();
    const size_t C = static_cast<size_t>(c.n_embd);
    if (rows.resid.size() != C || rows.attn_out.size() != size_t(c.n_layer) || rows.mlp_out.size() != size_t(c.n_layer))
        throw std::logic_error("attribution: the pass was not recorded");

    std::vector<float> u = unembedding_row(m, target);
    if (contrast) {
        const std::vector<float> v = unembedding_row(m, *contrast);
        for (size_t i = 0; i < C; ++i) u[i] -= v[i];
    }
    Attribution a;
    a.target = target;
    a.contrast = contrast;
    a.norm = c.norm;
    a.logit = logit;
    if (const DType t = w.output.dtype; t != DType::F32 && t != DType::F16 && t != DType::BF16)
        a.quantized_output = std::string(dtype_name(t));
    a.scale = frozen_scale(c.norm, rows.resid, c.norm_eps);
    // Granite's logits / logits_scaling is one more factor of the map.
    Frozen f{c.norm, a.scale / double(c.logit_scale), std::vector<double>(C)};
    for (size_t i = 0; i < C; ++i) {
        f.g[i] = double(w.final_norm_w.data[i]) * double(u[i]);
        f.g_sum += f.g[i];
    }
    if (c.norm == NormKind::layernorm && w.final_norm_b)
        for (size_t i = 0; i < C; ++i) a.bias_term += double(w.final_norm_b.data[i]) * double(u[i]) / double(c.logit_scale);

    // Gemma 4's layer output scales: a part written in layer l reaches the final residual times
    // s_l · s_{l+1} ⋯ (the embeddings: times every s). carry[l] is that product (1 without scales).
    std::vector<double> carry(size_t(c.n_layer) + 1, 1.0);
    for (int l = c.n_layer - 1; l >= 0; --l) {
        const LayerWeights& lw = w.layers[size_t(l)];
        carry[size_t(l)] = carry[size_t(l) + 1] * (lw.out_scale ? double(lw.out_scale.data[0]) : 1.0);
    }
    const auto carried = [&](int l) {  // the final map for the parts written in layer l (l = 0: also the embeddings)
        Frozen g = f;
        g.scale *= carry[size_t(l)];
        return g;
    };

    const Frozen f0 = carried(0);
    a.token_embed = f0(rows.tok_embed);
    a.sum = a.bias_term + a.token_embed;
    if (!rows.pos_embed.empty()) {
        a.position_embed = f0(rows.pos_embed);
        a.sum += *a.position_embed;
    }
    for (int l = 0; l < c.n_layer; ++l) {
        const int H = c.is_recurrent(l) ? c.ssm_v_heads : c.n_head;  // a hybrid's linear-attention layer: its delta heads
        const LayerWeights& lw = w.layers[static_cast<size_t>(l)];
        LayerAttribution la;
        la.layer = l;
        la.carry = carry[size_t(l)];
        if (lw.out_scale) la.out_scale = double(lw.out_scale.data[0]);
        const Frozen fl = carried(l);
        la.attn = fl(rows.attn_out[size_t(l)]);
        la.mlp = fl(rows.mlp_out[size_t(l)]);
        a.sum += la.attn + la.mlp;
        if (lw.ple_gate) {
            if (l >= int(rows.ple_out.size()) || rows.ple_out[size_t(l)].size() != C)
                throw std::logic_error("attribution: the per-layer-input branch was not recorded");
            la.ple = fl(rows.ple_out[size_t(l)]);
            a.sum += *la.ple;
        }
        if (l < int(rows.experts.size()) && !rows.experts[size_t(l)].empty()) {
            const std::vector<float>& ex = rows.experts[size_t(l)];
            const auto& ids = rows.expert_ids.at(size_t(l));
            if (ex.size() != ids.size() * C) throw std::logic_error("attribution: the experts' rows differ from their routing");
            for (size_t j = 0; j < ids.size(); ++j)
                la.experts.push_back({ids[j].first, ids[j].second, fl(std::span<const float>(ex.data() + j * C, C))});
            if (l < int(rows.shared.size()) && !rows.shared[size_t(l)].empty()) la.shared_expert = fl(rows.shared[size_t(l)]);
        }
        // Heads: each head's product, through the post-attention norm frozen at its scale on
        // the whole projection (the heads plus the bias), when there is one.
        const std::vector<float>& heads = rows.heads.empty() ? std::vector<float>{} : rows.heads[size_t(l)];
        if (heads.size() == size_t(H) * C) {
            std::vector<float> proj(C, 0.0f);  // Σ_h heads + b_O: the projection before a post-norm
            for (int h = 0; h < H; ++h)
                for (size_t i = 0; i < C; ++i) proj[i] += heads[size_t(h) * C + i];
            if (lw.attn_out_b)
                for (size_t i = 0; i < C; ++i) proj[i] += lw.attn_out_b.data[i];
            Frozen hf = fl;  // the final map, composed with the post-norm's frozen map
            hf.scale *= double(c.residual_scale);  // Granite: attn_out is the projection times residual_multiplier
            if (lw.attn_post_norm) {  // RMSNorm (Gemma); no family pairs it with a LayerNorm
                if (c.norm != NormKind::rmsnorm)
                    throw UsageError("--attribute: heads through a LayerNorm post-attention norm are not implemented");
                const double s = frozen_scale(c.norm, proj, c.norm_eps);
                for (size_t i = 0; i < C; ++i) hf.g[i] = fl.g[i] * s * double(lw.attn_post_norm.data[i]);
            }
            for (int h = 0; h < H; ++h)
                la.heads.push_back(hf(std::span<const float>(heads.data() + size_t(h) * C, C)));
            if (lw.attn_out_b) la.attn_bias = hf(std::span<const float>(lw.attn_out_b.data, C));
        }
        a.layers.push_back(std::move(la));
    }
    return a;
}

}  // namespace journey
