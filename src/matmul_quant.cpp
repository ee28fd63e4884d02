#include "journey/matmul_quant.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <cblas.h>
#include <immintrin.h>

#include "journey/gemv.h"
#include "journey/quant.h"
#include "journey/thread_pool.h"

namespace journey {
namespace {

// One Q8_0 row · x with AVX-512: per block of 32, the int8 weights widened to float and
// multiplied with x in two 16-lane halves, the block sum scaled by the block's f16 scale.
// Same products as vec_dot, summed in a different order (agrees within float rounding). The
// zero-masked conversions spell out what the plain ones do without GCC 12's false warnings.
__attribute__((target("avx512f,avx512bw,avx512vl,f16c")))
float dot_q8_0_avx512(const std::byte* row, const float* x, int64_t n) {
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0; b < n / 32; ++b, row += sizeof(BlockQ8_0), x += 32) {
        uint16_t d16;
        std::memcpy(&d16, row, 2);
        const __m512 d = _mm512_set1_ps(_cvtsh_ss(d16));
        const __m128i q0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2));
        const __m128i q1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 18));
        const __m512 w0 = _mm512_maskz_cvtepi32_ps(0xFFFF, _mm512_maskz_cvtepi8_epi32(0xFFFF, q0));
        const __m512 w1 = _mm512_maskz_cvtepi32_ps(0xFFFF, _mm512_maskz_cvtepi8_epi32(0xFFFF, q1));
        const __m512 s = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x + 16), _mm512_mul_ps(w0, _mm512_loadu_ps(x)));
        acc = _mm512_fmadd_ps(s, d, acc);
    }
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, acc);
    float sum = 0.0f;
    for (float v : lanes) sum += v;
    return sum;
}

// out[r0:r1] = rows r0..r1 of W · x, straight from the blocks.
void gemv_quantized_range(float* out, const float* x, const Matrix& W, int64_t r0, int64_t r1) {
    const int64_t n_in = W.cols;
    const size_t row_bytes = dtype_bytes(W.dtype, static_cast<uint64_t>(n_in));
    const bool fast = W.dtype == DType::Q8_0 && std::string_view(kernel_isa()) != "portable";
    for (int64_t r = r0; r < r1; ++r) {
        const std::byte* row = W.data + r * row_bytes;
        out[r] = fast ? dot_q8_0_avx512(row, x, n_in) : vec_dot(W.dtype, row, x, n_in);
    }
}

}  // namespace

void matmul_quantized(float* out, const float* x, const Matrix& W, int T) {
    if (W.layout != Layout::Linear) throw std::logic_error("matmul: quantized weights must be Linear [out, in]");
    const int64_t n_in = W.cols, n_out = W.rows;
    const size_t row_bytes = dtype_bytes(W.dtype, static_cast<uint64_t>(n_in));
    if (T == 1) {  // a matrix-vector product, split by rows over the thread pool
        thread_pool().run([&](int i, int n) {
            const int64_t r0 = n_out * i / n, r1 = n_out * (i + 1) / n;
            gemv_quantized_range(out, x, W, r0, r1);
        });
        return;
    }
    // out[:, r0:r0+nr] = x · rowsᵀ, with rows r0 .. r0+nr dequantized into the scratch.
    constexpr int64_t block_rows = 64;
    thread_local std::vector<float> block;
    block.resize(static_cast<size_t>(block_rows * n_in));
    for (int64_t r0 = 0; r0 < n_out; r0 += block_rows) {
        const int64_t nr = std::min(block_rows, n_out - r0);
        for (int64_t r = 0; r < nr; ++r) dequantize_row(W.dtype, W.data + (r0 + r) * row_bytes, block.data() + r * n_in, n_in);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, static_cast<int>(nr), static_cast<int>(n_in), 1.0f, x,
                    static_cast<int>(n_in), block.data(), static_cast<int>(n_in), 0.0f, out + r0, static_cast<int>(n_out));
    }
}

}  // namespace journey
