#include "journey/model/unembed.h"

#include <stdexcept>
#include <vector>

#include "journey/kernels/kernels.h"

namespace journey {

void final_norm(const Model& m, const float* resid, int rows, float* out) {
    const ModelConfig& c = m.config();
    const Weights& w = m.weights();
    switch (c.norm) {
        case NormKind::layernorm:
            return layernorm(out, resid, w.final_norm_w.data, w.final_norm_b.data, rows, c.n_embd, c.norm_eps);
        case NormKind::rmsnorm:
            return rmsnorm(out, resid, w.final_norm_w.data, rows, c.n_embd, c.norm_eps);
    }
    throw std::logic_error("unknown norm kind");
}

void project_to_vocab(const Model& m, const float* normed, int rows, float* logits, bool each_alone) {
    if (each_alone) matmul_tokens(logits, normed, m.weights().output, rows);
    else matmul(logits, normed, m.weights().output, rows);
    if (const float ls = m.config().logit_scale; ls != 1.0f) {  // Granite: logits / logits_scaling (as llama.cpp: x (1 / it))
        const float inv = 1.0f / ls;
        for (int64_t i = 0; i < int64_t{rows} * m.config().n_vocab; ++i) logits[i] *= inv;
    }
    if (const float cap = m.config().final_softcap; cap > 0.0f)  // Gemma 2: cap * tanh(logits / cap)
        softcap(logits, int64_t{rows} * m.config().n_vocab, cap);
}

void unembed(const Model& m, const float* resid, int rows, float* logits) {
    std::vector<float> normed(static_cast<size_t>(rows) * static_cast<size_t>(m.config().n_embd));
    final_norm(m, resid, rows, normed.data());
    project_to_vocab(m, normed.data(), rows, logits);
}

}  // namespace journey
