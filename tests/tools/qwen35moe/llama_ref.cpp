// llama.cpp's next-token log-probabilities and greedy continuation for a list of token ids, as
// the shared fixtures' tools/llama_ref.cpp made them (fixtures/README.md): CPU backend, the whole
// prompt in one llama_decode (n_ubatch 512), KV cache F32/F32, flash attention off, 2 threads,
// n_ctx = prompt + 16 rounded up to 256; log-softmax in double from the float logits; greedy =
// argmax, lowest id on ties, no stop on EOS; margin = logit(top1) - logit(top2).
// Usage: llama_ref MODEL.gguf "id id id ..."  -> one JSON object on stdout.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "llama.h"

static std::vector<double> log_softmax(const float* x, int n) {
    double mx = x[0];
    for (int i = 1; i < n; ++i) mx = std::max(mx, double(x[i]));
    double s = 0;
    for (int i = 0; i < n; ++i) s += std::exp(double(x[i]) - mx);
    const double lse = mx + std::log(s);
    std::vector<double> out(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) out[size_t(i)] = double(x[i]) - lse;
    return out;
}

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    std::vector<llama_token> ids;
    std::istringstream in(argv[2]);
    for (long v; in >> v;) ids.push_back(llama_token(v));
    llama_backend_init();
    llama_log_set([](ggml_log_level, const char*, void*) {}, nullptr);
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model* model = llama_model_load_from_file(argv[1], mp);
    if (!model) return 1;
    const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = uint32_t((ids.size() + 16 + 255) / 256 * 256);
    cp.n_batch = std::max<uint32_t>(cp.n_ctx, 512);
    cp.n_ubatch = 512;
    cp.n_threads = cp.n_threads_batch = 2;
    cp.type_k = cp.type_v = GGML_TYPE_F32;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    llama_context* ctx = llama_init_from_model(model, cp);
    if (!ctx) return 1;
    if (llama_decode(ctx, llama_batch_get_one(ids.data(), int32_t(ids.size()))) != 0) return 1;
    auto print_vec = [](const std::vector<double>& v) {
        std::printf("[");
        for (size_t i = 0; i < v.size(); ++i) std::printf("%s%.6f", i ? ", " : "", v[i]);
        std::printf("]");
    };
    std::vector<double> lp = log_softmax(llama_get_logits_ith(ctx, -1), n_vocab);
    std::vector<int> order(static_cast<size_t>(n_vocab));
    for (int i = 0; i < n_vocab; ++i) order[size_t(i)] = i;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return lp[size_t(a)] > lp[size_t(b)]; });
    std::printf("{\"top20\": [");
    for (int r = 0; r < 20; ++r) std::printf("%s{\"id\": %d, \"logprob\": %.6f}", r ? ", " : "", order[size_t(r)], lp[size_t(order[size_t(r)])]);
    std::printf("], \"logprobs_last_all\": ");
    print_vec(lp);
    std::vector<double> glp, margins;
    std::vector<int> greedy;
    for (int step = 0; step < 16; ++step) {
        const float* logits = llama_get_logits_ith(ctx, -1);
        const std::vector<double> l = log_softmax(logits, n_vocab);
        int best = 0;
        for (int i = 1; i < n_vocab; ++i)
            if (logits[i] > logits[best]) best = i;
        float second = -INFINITY;
        for (int i = 0; i < n_vocab; ++i)
            if (i != best) second = std::max(second, logits[i]);
        greedy.push_back(best);
        glp.push_back(l[size_t(best)]);
        margins.push_back(double(logits[best]) - double(second));
        llama_token t = best;
        if (llama_decode(ctx, llama_batch_get_one(&t, 1)) != 0) return 1;
    }
    std::printf(", \"greedy16\": [");
    for (size_t i = 0; i < greedy.size(); ++i) std::printf("%s%d", i ? ", " : "", greedy[i]);
    std::printf("], \"greedy16_logprobs\": ");
    print_vec(glp);
    std::printf(", \"greedy16_margins\": ");
    print_vec(margins);
    std::printf("}\n");
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
