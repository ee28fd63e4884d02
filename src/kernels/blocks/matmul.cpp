#include "journey/kernels/blocks/matmul.h"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <vector>

#include "journey/kernels/blocks/dot.h"
#include "journey/kernels/gemv.h"
#include "journey/kernels/lookahead.h"
#include "journey/kernels/thread_pool.h"

namespace journey {

// Every token's x quantized once, then groups of 16 rows, each read from memory once and then
// from cache for every token: row t has the bits of the token alone (dot_rows: any path, any
// thread count).
void matmul_quantized_tokens(float* out, const float* x, const Matrix& W, int T) {
    const int64_t n_in = W.cols, n_out = W.rows;
    thread_local std::vector<QuantizedActivations> tokens;
    if (tokens.size() < size_t(T)) tokens.resize(size_t(T));
    for (int t = 0; t < T; ++t) quantize_activations(x + size_t(t) * size_t(n_in), n_in, tokens[size_t(t)], activation_block(W.dtype));
    const QuantizedActivations* xs = tokens.data();  // the caller's (a worker's `tokens` is its own)
    const int64_t groups = (n_out + 15) / 16;
    std::atomic<int64_t> next{0};
    thread_pool().run([&](int, int) {
        for (int64_t g; (g = next.fetch_add(1, std::memory_order_relaxed)) < groups;) {
            const int64_t r0 = 16 * g, r1 = std::min(n_out, r0 + 16);
            for (int t = 0; t < T; ++t) dot_rows(out + size_t(t) * size_t(n_out), W, xs[t], r0, r1);
        }
    });
}

void matmul_quantized(float* out, const float* x, const Matrix& W, int T, bool prompt_kernels) {
    if (W.layout != Layout::Linear) throw std::logic_error("matmul: quantized weights must be Linear [out, in]");
    if (dtype_block(W.dtype) == 1) throw std::logic_error("matmul_quantized: not a block-quantized type");
    const int64_t n_in = W.cols, n_out = W.rows;
    if (T == 1 && !prompt_kernels) {
        // One token, as llama.cpp does it: x is quantized to Q8_0 (K-quants: Q8_K) once, then each row · x is an
        // integer dot per block (blocks/dot.h). The threads take a quarter of their share of the
        // rows at a time as they come rather than fixed shares, so a worker that wakes late (perf
        // at -t 2: ~20% of the time in the scheduler's wake-up paths) or is preempted on a shared
        // machine leaves its rows to the others instead of stalling the product. Chunks of ~64
        // KiB, as before, restarted the hardware's prefetching too often: Llama 3.2 1B tg32 -t 2,
        // alternating runs (about 04:10-04:20 UTC 4 Dec), Q4_K_M 29.7, 32.1 -> 35.0, 38.2 tok/s, Q6_K
        // 22.2, 24.1 -> 27.4, 28.6.
        thread_local QuantizedActivations scratch;  // the caller's; workers see it through xq
        quantize_activations(x, n_in, scratch, activation_block(W.dtype));
        const QuantizedActivations* xq = &scratch;
        const int threads = thread_pool().size();
        const int64_t chunk = quant_chunk(n_out, threads);
        const Matrix* after = note_product(W);
        std::atomic<int64_t> next{chunk * threads};  // thread i takes chunk i first (lookahead.h)
        thread_pool().run([&](int i, int n) {
            for (int64_t r0 = chunk * i; r0 < n_out; r0 = next.fetch_add(chunk, std::memory_order_relaxed))
                dot_rows(out, W, *xq, r0, std::min(n_out, r0 + chunk));
            warm_next(after, i, n);
        });
        return;
    }
    if (W.dtype == DType::Q4_K) {
        // Q4_K prompts as the one token's integer dots, token by token, each token's x quantized
        // to Q8_K once, as llama.cpp multiplies Q4_K prompts. A group of 16 rows is read from
        // memory once and then from cache for every token (16 rows of 2048 inputs: 18 KiB). The
        // float gemm on dequantized panels ran at 84-86% of the fma peak and llama.cpp's integer
        // prompts were ahead (pp512, Llama 3.2 1B Q4_K_M, -t 2: 105-108 tok/s against 150-165
        // this way, alternating, 08:52 UTC 4 Dec). A prompt's row then has the same bits as the
        // row computed alone (dot_rows: any path, any thread count).
        return matmul_quantized_tokens(out, x, W, T);
    }
    // A prompt: float x against the weights dequantized a 64-row panel at a time (gemm.cpp).
    gemm(out, x, W, T);
}

}  // namespace journey
