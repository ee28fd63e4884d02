#include "journey/matmul_quant.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <cblas.h>

#include "journey/quant.h"

namespace journey {

void matmul_quantized(float* out, const float* x, const Matrix& W, int T) {
    if (W.layout != Layout::Linear) throw std::logic_error("matmul: quantized weights must be Linear [out, in]");
    const int64_t n_in = W.cols, n_out = W.rows;
    const size_t row_bytes = dtype_bytes(W.dtype, static_cast<uint64_t>(n_in));
    if (T == 1) {  // a matrix-vector product: out[r] = row r · x, straight from the blocks
        for (int64_t r = 0; r < n_out; ++r) out[r] = vec_dot(W.dtype, W.data + r * row_bytes, x, n_in);
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
