#include "journey/kernels/gemm_f32.h"
#include "journey/kernels/kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <cstdlib>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <vector>

#include <cblas.h>

#include "journey/kernels/to_float.h"
#include "journey/kernels/blocks/matmul.h"
#include "journey/kernels/gemv.h"
#include "journey/kernels/thread_pool.h"

namespace journey {

// ---------------------------------------------------------------------------------------------
// Threads: our pool is the one owner. It runs gemv, gemm, the heads of a prompt's attention
// and long elementwise loops; OpenBLAS (only the attention's small products, from inside the
// pool's threads) is kept to one thread, so nothing ever runs more threads than -t.

void set_num_threads(int n) {
    if (n <= 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    blas_one_thread();
    resize_thread_pool(n);
}

// OpenBLAS's pthread build starts its workers when the library loads, and each spins ~0.1 s of
// CPU before it sleeps, stealing a core from the main thread in every short run (journey tokenize
// on 6.7 MB: wall 19-26 MB/s, CPU above wall). With one thread they are never used: stop them.
// blas_thread_shutdown_ is OpenBLAS's own (its fork handler calls it; a later multi-threaded call
// would start them again); weak, so a build without a thread server links too.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));
void blas_one_thread() {
    openblas_set_num_threads(1);
    if (blas_thread_shutdown_) blas_thread_shutdown_();
}

int num_threads() { return thread_pool().size(); }

void gemm_f32(bool ta, bool tb, int M, int N, int K, float alpha, const float* a, int64_t lda, const float* b,
              int64_t ldb, float beta, float* c, int64_t ldc) {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, a,
                static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

const char* blas_core_override() {
    if (std::getenv("OPENBLAS_CORETYPE")) return nullptr;
    if (std::string_view(openblas_get_corename()) != "Prescott") return nullptr;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
    return nullptr;
}

// ---------------------------------------------------------------------------------------------
// matmul.

// One token: our gemv streams the weights once at memory speed, in place, for every float dtype;
// quantized weights take integer dots on quantized x (matmul_quantized). A prompt: our gemm
// (src/kernels/gemm.cpp) for every dtype.
void matmul(float* out, const float* x, const Matrix& W, int T, bool prompt_kernels) {
    switch (W.dtype) {
        case DType::F32:
        case DType::F16:
        case DType::BF16: return T == 1 && !prompt_kernels ? gemv(out, x, W) : gemm(out, x, W, T);
        default: return matmul_quantized(out, x, W, T, prompt_kernels);  // block-quantized types
    }
}

void matmul_tokens(float* out, const float* x, const Matrix& W, int T) {
    if (T == 1) return matmul(out, x, W, 1);
    switch (W.dtype) {
        case DType::F32:
        case DType::F16:
        case DType::BF16: return gemv_tokens(out, x, W, T);
        default: return matmul_quantized_tokens(out, x, W, T);
    }
}

void matmul_many(std::span<const Product> products, bool prompt_kernels) {
    const bool quantized = std::all_of(products.begin(), products.end(), [](const Product& p) {
        return dtype_block(p.W->dtype) > 1 && p.W->layout == Layout::Linear;
    });
    if (quantized) return matmul_quantized_many(products);
    for (const Product& p : products) matmul(p.out, p.x, *p.W, p.T, prompt_kernels);  // float weights: one at a time
}

void embedding_row(float* out, const Matrix& E, int64_t row) {
    to_float(out, E.dtype, E.data + row * dtype_bytes(E.dtype, static_cast<uint64_t>(E.cols)), E.cols);
}

// ---------------------------------------------------------------------------------------------
// Elementwise and per-row kernels.

namespace {

// sum_i f(x[i]) in 16 partial sums (lane l takes i ≡ l mod 16), added pairwise at the end:
// written out so that the loop vectorizes without -ffast-math, and more accurate than one chain.
template <class F>
float sum16(const float* x, int n, F f) {
    float acc[16] = {};
    int i = 0;
    for (; i + 16 <= n; i += 16)
        for (int l = 0; l < 16; ++l) acc[l] += f(x[i + l]);
    for (; i < n; ++i) acc[i % 16] += f(x[i]);
    for (int s = 8; s >= 1; s /= 2)
        for (int l = 0; l < s; ++l) acc[l] += acc[l + s];
    return acc[0];
}

}  // namespace

void layernorm(float* out, const float* x, const float* w, const float* b, int T, int C, float eps) {
    for (int t = 0; t < T; ++t) {
        const float* xt = x + static_cast<int64_t>(t) * C;
        float* ot = out + static_cast<int64_t>(t) * C;
        const float mean = sum16(xt, C, [](float v) { return v; }) / static_cast<float>(C);
        const float var = sum16(xt, C, [mean](float v) { return (v - mean) * (v - mean); }) / static_cast<float>(C);
        const float rstd = 1.0f / std::sqrt(var + eps);
        for (int i = 0; i < C; ++i) ot[i] = (xt[i] - mean) * rstd * w[i] + b[i];
    }
}

// After llama2.c's run.c (quoted).
void rmsnorm(float* out, const float* x, const float* w, int T, int C, float eps) {
    for (int t = 0; t < T; ++t) {
        const float* xt = x + int64_t{t} * C;
        float* ot = out + int64_t{t} * C;
        // ss = sum(x²) / size; ss += eps; ss = 1 / sqrtf(ss); o[j] = weight[j] * (ss * x[j])
        float ss = 0.0f;
        for (int i = 0; i < C; ++i) ss += xt[i] * xt[i];
        ss = 1.0f / std::sqrt(ss / static_cast<float>(C) + eps);
        for (int i = 0; i < C; ++i) ot[i] = w[i] * (ss * xt[i]);
    }
}

void add_bias(float* x, const float* b, int T, int N) {
    for (int t = 0; t < T; ++t)
        for (int i = 0; i < N; ++i) x[static_cast<int64_t>(t) * N + i] += b[i];
}

void add(float* out, const float* a, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] += a[i];
}

namespace {

// e^x for x <= 88 (below -87.3 it returns 2^-126 scaled, i.e. ~1e-38 instead of denormals),
// within 2 ulp: x = n ln2 + r, |r| <= ln2/2, e^r by its degree-6 Taylor polynomial. Plain
// arithmetic so that loops calling it vectorize (std::exp does not), and the same bits on
// every path.
inline float fast_exp(float x) {
    x = std::min(88.0f, std::max(-87.3f, x));
    // n = x log2(e) rounded to nearest by the 1.5 * 2^23 trick: unlike std::floor, GCC
    // vectorizes it without -ffast-math (and it is exact for |x log2 e| < 2^22).
    const float n = (x * 1.44269504f + 12582912.0f) - 12582912.0f;
    const float r = (x - n * 0.693145752f) - n * 1.42860677e-6f;  // ln2 split hi + lo
    float p = 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, 4);
    return p * scale;
}

}  // namespace

void gelu_new(float* x, int64_t n) {
    // HF NewGELUActivation: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
    // computed as x * sigmoid(2u) = x / (1 + e^(-2u)), u = sqrt(2/pi) * (x + 0.044715 x^3),
    // since 0.5 (1 + tanh u) = sigmoid(2u); no cancellation, and it vectorizes.
    const float k2 = static_cast<float>(2 * std::sqrt(2.0 / std::numbers::pi));
    auto range = [x, k2](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
            const float v = x[i];
            x[i] = v / (1.0f + fast_exp(-k2 * (v + 0.044715f * v * v * v)));
        }
    };
    if (n < (1 << 15)) return range(0, n);  // one token's MLP: not worth waking a thread
    thread_pool().run([&](int i, int parts) { range(n * i / parts, n * (i + 1) / parts); });
}

void geglu_tanh(float* up, const float* gate, int64_t n) {
    // HF Gemma2MLP: act_fn(gate_proj(x)) * up_proj(x), act_fn = gelu_pytorch_tanh, the gelu_new formula.
    const float k2 = static_cast<float>(2 * std::sqrt(2.0 / std::numbers::pi));
    for (int64_t i = 0; i < n; ++i) {
        const float g = gate[i];
        up[i] *= g / (1.0f + fast_exp(-k2 * (g + 0.044715f * g * g * g)));
    }
}

void swiglu(float* up, const float* gate, int64_t n) {
    // llama2.c's run.c: F.silu(w1(x)) * w3(x)
    for (int64_t i = 0; i < n; ++i) {
        const float g = gate[i];
        up[i] *= g * (1.0f / (1.0f + std::exp(-g)));
    }
}

void softcap(float* x, int64_t n, float cap) {
    for (int64_t i = 0; i < n; ++i) x[i] = cap * std::tanh(x[i] / cap);
}

void softmax(float* x, int64_t n) {
    // The maximum and the sum (in double) in lanes, written out so that the loops vectorize.
    float top[16];
    std::fill(top, top + 16, -std::numeric_limits<float>::infinity());
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int l = 0; l < 16; ++l) top[l] = std::max(top[l], x[i + l]);
    for (; i < n; ++i) top[0] = std::max(top[0], x[i]);
    const float max = *std::max_element(top, top + 16);
    for (i = 0; i < n; ++i) x[i] = fast_exp(x[i] - max);
    double acc[8] = {};
    for (i = 0; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; ++l) acc[l] += x[i + l];
    for (; i < n; ++i) acc[0] += x[i];
    const float inv = static_cast<float>(1.0 / (((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]))));
    for (i = 0; i < n; ++i) x[i] *= inv;
}

}  // namespace journey
