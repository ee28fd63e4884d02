// llama.cpp reference for journey's MoE stand-ins (as the shared fixtures' tools/llama_ref.cpp):
// CPU only, the whole prompt in one llama_decode (n_ubatch 512), KV cache F32/F32, flash
// attention off, 2 threads, n_ctx = prompt + 16 rounded up to 256; greedy = argmax (lowest id on
// ties), 16 tokens, no stop on EOS. Prints JSON: top20, greedy16, greedy16_logprobs,
// greedy16_margins, logprobs_last_all (log-softmax in double of llama.cpp's float logits).
// usage: llama_ref MODEL.gguf ID ID ID ...
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <numeric>
#include <vector>
#include "llama.h"

static std::vector<double> log_softmax(const float* l, int n) {
    double m = -INFINITY;
    for (int i = 0; i < n; ++i) m = std::max(m, double(l[i]));
    double s = 0;
    for (int i = 0; i < n; ++i) s += std::exp(double(l[i]) - m);
    std::vector<double> out(n);
    for (int i = 0; i < n; ++i) out[i] = double(l[i]) - m - std::log(s);
    return out;
}

int main(int argc, char** argv) {
    std::vector<llama_token> ids;
    for (int i = 2; i < argc; ++i) ids.push_back(std::atoi(argv[i]));
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model* model = llama_model_load_from_file(argv[1], mp);
    if (!model) return 1;
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (ids.size() + 16 + 255) / 256 * 256;
    cp.n_batch = cp.n_ctx;
    cp.n_ubatch = 512;
    cp.type_k = GGML_TYPE_F32;
    cp.type_v = GGML_TYPE_F32;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.n_threads = 2;
    cp.n_threads_batch = 2;
    llama_context* ctx = llama_init_from_model(model, cp);
    const int V = llama_vocab_n_tokens(llama_model_get_vocab(model));
    if (llama_decode(ctx, llama_batch_get_one(ids.data(), int(ids.size())))) return 2;
    std::vector<double> lp = log_softmax(llama_get_logits_ith(ctx, -1), V);
    std::printf("{\"n_vocab\": %d, \"top20\": [", V);
    std::vector<int> order(V);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return lp[a] > lp[b]; });
    for (int r = 0; r < 20; ++r) std::printf("%s{\"id\": %d, \"logprob\": %.9g}", r ? ", " : "", order[r], lp[order[r]]);
    std::printf("], \"logprobs_last_all\": [");
    for (int i = 0; i < V; ++i) std::printf("%s%.9g", i ? ", " : "", lp[i]);
    std::printf("]");
    std::vector<int> greedy;
    std::vector<double> glp, margins;
    const float* logits = llama_get_logits_ith(ctx, -1);
    for (int g = 0; g < 16; ++g) {
        int best = 0;
        for (int i = 1; i < V; ++i) if (logits[i] > logits[best]) best = i;
        float second = -INFINITY;
        for (int i = 0; i < V; ++i) if (i != best) second = std::max(second, logits[i]);
        std::vector<double> l = log_softmax(logits, V);
        greedy.push_back(best);
        glp.push_back(l[best]);
        margins.push_back(double(logits[best]) - double(second));
        llama_token t = best;
        if (llama_decode(ctx, llama_batch_get_one(&t, 1))) return 3;
        logits = llama_get_logits_ith(ctx, -1);
    }
    std::printf(", \"greedy16\": [");
    for (int i = 0; i < 16; ++i) std::printf("%s%d", i ? ", " : "", greedy[i]);
    std::printf("], \"greedy16_logprobs\": [");
    for (int i = 0; i < 16; ++i) std::printf("%s%.9g", i ? ", " : "", glp[i]);
    std::printf("], \"greedy16_margins\": [");
    for (int i = 0; i < 16; ++i) std::printf("%s%.9g", i ? ", " : "", margins[i]);
    std::printf("]}\n");
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
