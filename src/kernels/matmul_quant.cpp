#include "journey/kernels/matmul_quant.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "journey/kernels/gemv.h"
#include "journey/kernels/quant_dot.h"
#include "journey/kernels/quant.h"
#include "journey/kernels/thread_pool.h"
#include "quant_dot_k.h"

namespace journey {
namespace {

// Σ w[i]·x[i]: 16 lanes of fmas (lane l takes i ≡ l mod 16), then lane l += l+8, +4, +2, +1.
float dot_f32(const float* w, const float* x, int64_t n) {
    float acc[16] = {};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int l = 0; l < 16; ++l) acc[l] = std::fma(w[i + l], x[i + l], acc[l]);
    for (; i < n; ++i) acc[i % 16] = std::fma(w[i], x[i], acc[i % 16]);
    for (int s = 8; s >= 1; s /= 2)
        for (int l = 0; l < s; ++l) acc[l] += acc[l + s];
    return acc[0];
}

}  // namespace

bool has_integer_dot(DType t) { return t == DType::Q8_0 || t == DType::Q4_0 || has_k_dot(t); }


void matmul_quantized(float* out, const float* x, const Matrix& W, int T, bool prompt_kernels) {
    if (W.layout != Layout::Linear) throw std::logic_error("matmul: quantized weights must be Linear [out, in]");
    if (dtype_block(W.dtype) == 1) throw std::logic_error("matmul_quantized: not a block-quantized type");
    const int64_t n_in = W.cols, n_out = W.rows;
    const size_t row_bytes = dtype_bytes(W.dtype, static_cast<uint64_t>(n_in));
    if (T == 1 && !prompt_kernels && !has_integer_dot(W.dtype)) {
        // One token, a type without an integer kernel yet: each row dequantized exactly, then
        // dotted with the float x (16 lanes of fmas, lane l taking i = l mod 16, added
        // pairwise), so each output is the same on any thread count.
        const int64_t chunk = std::max<int64_t>(16, (64 << 10) / int64_t(row_bytes));
        std::atomic<int64_t> next{0};
        thread_pool().run([&](int, int) {
            thread_local std::vector<float> row;
            row.resize(size_t(n_in));
            for (int64_t r0; (r0 = next.fetch_add(chunk, std::memory_order_relaxed)) < n_out;)
                for (int64_t r = r0; r < std::min(n_out, r0 + chunk); ++r) {
                    dequantize_row(W.dtype, W.data + size_t(r) * row_bytes, row.data(), n_in);
                    out[r] = dot_f32(row.data(), x, n_in);
                }
        });
        return;
    }
    if (T == 1 && !prompt_kernels) {
        // One token, as llama.cpp does it: x is quantized to Q8_0 once, then each row · x is an
        // integer dot per block (quant_dot.h). The threads take ~64 KiB chunks of rows as
        // they come rather than fixed shares, so a worker that wakes late (perf at -t 2: ~20%
        // of the time in the scheduler's wake-up paths) or is preempted on a shared machine
        // leaves its rows to the others instead of stalling the product.
        thread_local QuantizedActivations scratch;  // the caller's; workers see it through xq
        quantize_activations(x, n_in, scratch);
        const QuantizedActivations* xq = &scratch;
        const int64_t chunk = std::max<int64_t>(16, (64 << 10) / int64_t(row_bytes)) / 4 * 4;  // ~64 KiB
        std::atomic<int64_t> next{0};
        thread_pool().run([&](int, int) {
            for (int64_t r0; (r0 = next.fetch_add(chunk, std::memory_order_relaxed)) < n_out;)
                dot_rows(out, W, *xq, r0, std::min(n_out, r0 + chunk));
        });
        return;
    }
    // A prompt: float x against the weights dequantized a 64-row panel at a time (gemm.cpp).
    gemm(out, x, W, T);
}

}  // namespace journey
