#include "journey/kernels.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <thread>
#include <vector>

#include <cblas.h>

#include "journey/convert.h"
#include "journey/matmul_quant.h"

namespace journey {

// ---------------------------------------------------------------------------------------------
// Threads: OpenBLAS owns them; our own loops stay single-threaded so the two never compete.

void set_num_threads(int n) {
    if (n <= 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    openblas_set_num_threads(n);
}

int num_threads() { return openblas_get_num_threads(); }

// ---------------------------------------------------------------------------------------------
// matmul: the only caller of BLAS.

namespace {

// F32 weights, used in place from the mapping.
void matmul_f32(float* out, const float* x, const Matrix& W, int T) {
    const auto* w = reinterpret_cast<const float*>(W.data);
    const int rows = static_cast<int>(W.rows), cols = static_cast<int>(W.cols);
    const int n_in = static_cast<int>(W.n_in()), n_out = static_cast<int>(W.n_out());
    if (W.layout == Layout::Linear) {  // W [out, in]: out = x · Wᵀ
        if (T == 1) cblas_sgemv(CblasRowMajor, CblasNoTrans, rows, cols, 1.0f, w, cols, x, 1, 0.0f, out, 1);
        else cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, n_out, n_in, 1.0f, x, n_in, w, cols, 0.0f, out, n_out);
    } else {  // W [in, out]: out = x · W
        if (T == 1) cblas_sgemv(CblasRowMajor, CblasTrans, rows, cols, 1.0f, w, cols, x, 1, 0.0f, out, 1);
        else cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, n_out, n_in, 1.0f, x, n_in, w, cols, 0.0f, out, n_out);
    }
}

// Other dtypes: convert a block of stored rows to float, then multiply that block with BLAS.
// Linear: a block of rows is a block of outputs.  Conv1D: a block of rows is a block of inputs,
// whose partial products accumulate into out.
void matmul_converted(float* out, const float* x, const Matrix& W, int T) {
    constexpr int64_t block_rows = 64;
    const int64_t cols = W.cols, n_in = W.n_in(), n_out = W.n_out();
    const size_t row_bytes = dtype_bytes(W.dtype, static_cast<uint64_t>(cols));
    thread_local std::vector<float> block;
    block.resize(static_cast<size_t>(block_rows * cols));
    if (W.layout == Layout::Conv1D) std::fill(out, out + T * n_out, 0.0f);
    for (int64_t r0 = 0; r0 < W.rows; r0 += block_rows) {
        const int64_t nr = std::min(block_rows, W.rows - r0);
        for (int64_t r = 0; r < nr; ++r)
            to_float(block.data() + r * cols, W.dtype, W.data + (r0 + r) * row_bytes, cols);
        const int m = static_cast<int>(nr), c = static_cast<int>(cols);
        if (W.layout == Layout::Linear)  // out[:, r0:r0+nr] = x · blockᵀ
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, m, c, 1.0f, x, static_cast<int>(n_in),
                        block.data(), c, 0.0f, out + r0, static_cast<int>(n_out));
        else  // out += x[:, r0:r0+nr] · block
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, c, m, 1.0f, x + r0, static_cast<int>(n_in),
                        block.data(), c, 1.0f, out, static_cast<int>(n_out));
    }
}

}  // namespace

void matmul(float* out, const float* x, const Matrix& W, int T) {
    switch (W.dtype) {
        case DType::F32: return matmul_f32(out, x, W, T);
        case DType::F16:
        case DType::BF16: return matmul_converted(out, x, W, T);
        case DType::Q8_0:
        case DType::Q4_0: return matmul_quantized(out, x, W, T);
    }
    throw std::logic_error("matmul: no kernel for " + std::string(dtype_name(W.dtype)));
}

void embedding_row(float* out, const Matrix& E, int64_t row) {
    to_float(out, E.dtype, E.data + row * dtype_bytes(E.dtype, static_cast<uint64_t>(E.cols)), E.cols);
}

// ---------------------------------------------------------------------------------------------
// Elementwise and per-row kernels.

void layernorm(float* out, const float* x, const float* w, const float* b, int T, int C, float eps) {
    for (int t = 0; t < T; ++t) {
        const float* xt = x + static_cast<int64_t>(t) * C;
        float* ot = out + static_cast<int64_t>(t) * C;
        float mean = 0.0f;
        for (int i = 0; i < C; ++i) mean += xt[i];
        mean /= C;
        float var = 0.0f;
        for (int i = 0; i < C; ++i) var += (xt[i] - mean) * (xt[i] - mean);
        var /= C;
        const float rstd = 1.0f / std::sqrt(var + eps);
        for (int i = 0; i < C; ++i) ot[i] = (xt[i] - mean) * rstd * w[i] + b[i];
    }
}

void add_bias(float* x, const float* b, int T, int N) {
    for (int t = 0; t < T; ++t)
        for (int i = 0; i < N; ++i) x[static_cast<int64_t>(t) * N + i] += b[i];
}

void add(float* out, const float* a, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] += a[i];
}

void gelu_new(float* x, int64_t n) {
    // HF NewGELUActivation: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
    const float k = static_cast<float>(std::sqrt(2.0 / std::numbers::pi));
    for (int64_t i = 0; i < n; ++i) {
        const float v = x[i];
        x[i] = 0.5f * v * (1.0f + std::tanh(k * (v + 0.044715f * v * v * v)));
    }
}

void softmax(float* x, int64_t n) {
    const float max = *std::max_element(x, x + n);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        x[i] = std::exp(x[i] - max);
        sum += x[i];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

// ---------------------------------------------------------------------------------------------
// Attention: softmax(q·kᵀ / sqrt(D) + causal mask) · v, one head at a time.

void attention(float* z, float* pattern, const float* q, const float* k, const float* v,
               int T, int n_past, int H, int Hkv, int D) {
    const int L = n_past + T;                  // keys visible to the last query
    const int64_t q_stride = int64_t{H} * D;   // floats per position in q and z
    const int64_t kv_stride = int64_t{Hkv} * D;
    const int group = H / Hkv;
    const float scale = 1.0f / std::sqrt(static_cast<float>(D));
    for (int h = 0; h < H; ++h) {
        const int64_t kv_off = int64_t{h / group} * D;
        for (int t = 0; t < T; ++t) {
            const float* qt = q + t * q_stride + int64_t{h} * D;
            float* p = pattern + (int64_t{h} * T + t) * L;
            const int visible = n_past + t + 1;  // keys 0 .. n_past+t
            for (int j = 0; j < visible; ++j) {
                const float* kj = k + j * kv_stride + kv_off;
                float s = 0.0f;
                for (int d = 0; d < D; ++d) s += qt[d] * kj[d];
                p[j] = s * scale;
            }
            softmax(p, visible);
            std::fill(p + visible, p + L, 0.0f);  // masked: the future
            float* zt = z + t * q_stride + int64_t{h} * D;
            std::fill(zt, zt + D, 0.0f);
            for (int j = 0; j < visible; ++j) {
                const float* vj = v + j * kv_stride + kv_off;
                for (int d = 0; d < D; ++d) zt[d] += p[j] * vj[d];
            }
        }
    }
}

}  // namespace journey
