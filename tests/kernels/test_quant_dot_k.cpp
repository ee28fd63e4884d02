// K-quant rows (Q4_K, Q6_K) · Q8_0-quantized activations (quant_dot.h): the VNNI kernels against
// the portable ones (same bits), and both against a double reference on the dequantized rows.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "journey/kernels/gemv.h"
#include "journey/kernels/quant.h"
#include "journey/kernels/quant_dot.h"

using namespace journey;

namespace {

constexpr float kMaxScale = 0.02f;  // |d| and |dmin| of the random blocks

struct KRows {
    Matrix m;
    std::vector<std::byte> bytes;
    std::vector<float> values;  // dequantized (bit-exact reference, test_dequant.cpp)
};

// Random super-blocks: every bit pattern of quants, scales and mins, with half-float d (and
// dmin) of either sign up to kMaxScale.
KRows random_k_rows(DType t, int64_t rows, int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> scale(-kMaxScale, kMaxScale);
    KRows r;
    const size_t row_bytes = dtype_bytes(t, uint64_t(n)), block_bytes = dtype_bytes(t, 256);
    r.bytes.resize(row_bytes * size_t(rows));
    for (auto& b : r.bytes) b = std::byte(byte(rng));
    for (size_t b = 0; b < r.bytes.size() / block_bytes; ++b) {
        std::byte* blk = r.bytes.data() + b * block_bytes;
        const uint16_t d = fp32_to_fp16(scale(rng)), dmin = fp32_to_fp16(scale(rng));
        if (t == DType::Q4_K) {
            std::memcpy(blk, &d, 2);
            std::memcpy(blk + 2, &dmin, 2);
        } else {
            std::memcpy(blk + 208, &d, 2);
        }
    }
    r.values.resize(size_t(rows * n));
    for (int64_t i = 0; i < rows; ++i) dequantize_row(t, r.bytes.data() + size_t(i) * row_bytes, r.values.data() + i * n, n);
    r.m = Matrix{t, r.bytes.data(), rows, n, Layout::Linear};
    return r;
}

std::vector<float> random_activations(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 2.0f);
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = dist(rng);
    for (int j = 32; j < 64; ++j) x[size_t(j)] = 0.0f;  // one block of zeros: scale 0
    return x;
}

struct PortableScope {
    explicit PortableScope(bool on) { force_portable_kernels(on); }
    ~PortableScope() { force_portable_kernels(false); }
};

const std::vector<std::pair<int64_t, int64_t>> kShapes = {{1, 256}, {5, 512}, {33, 768}, {4, 3072}};

}  // namespace

TEST_CASE("dot_rows K-quants: AVX-512 VNNI and portable kernels give the same bits", "[quant][quant_dot][fast]") {
    INFO("VNNI kernel: " << (quant_dot_fast_available() ? "yes" : "no (both runs portable)"));
    for (DType t : {DType::Q4_K, DType::Q6_K})
    for (auto [rows, n] : kShapes) {
        INFO(dtype_name(t) << ": " << rows << " rows of " << n);
        const KRows W = random_k_rows(t, rows, n, 7);
        QuantizedActivations xq;
        quantize_activations(random_activations(n, 11).data(), n, xq);
        std::vector<float> fast(size_t(rows), -1.0f), port(size_t(rows), -2.0f);
        dot_rows(fast.data(), W.m, xq, 0, rows);
        {
            PortableScope p(true);
            dot_rows(port.data(), W.m, xq, 0, rows);
        }
        CHECK(std::memcmp(fast.data(), port.data(), fast.size() * 4) == 0);
    }
}

TEST_CASE("dot_rows K-quants: the product of the dequantized weights and the quantized x", "[quant][quant_dot]") {
    for (bool portable : {false, true})
    for (DType t : {DType::Q4_K, DType::Q6_K}) {
        PortableScope p(portable);
        for (auto [rows, n] : kShapes) {
            INFO(dtype_name(t) << ": " << rows << " rows of " << n << ", portable forced: " << portable);
            const KRows W = random_k_rows(t, rows, n, 3);
            const std::vector<float> x = random_activations(n, 5);
            QuantizedActivations xq;
            quantize_activations(x.data(), n, xq);
            std::vector<float> got(static_cast<size_t>(rows));
            dot_rows(got.data(), W.m, xq, 0, rows);
            for (int64_t r = 0; r < rows; ++r) {
                double exact = 0, mag = 0;
                for (int64_t i = 0; i < n; ++i) {
                    const double xi = double(xq.d[size_t(i / 32)]) * xq.q[size_t(i)];
                    exact += double(W.values[size_t(r * n + i)]) * xi;
                    // Q4_K's w = a - b (scale part, min part, |b| <= 63 dmin) is summed as a and
                    // b apart: bound by |a| + |b| <= |w| + 2 · 63 · max|dmin|.
                    const double parts = std::fabs(W.values[size_t(r * n + i)]) + (t == DType::Q4_K ? 2 * 63 * kMaxScale : 0);
                    mag += parts * std::fabs(xi);
                }
                // Integer sums and their scaling by sc, m are exact; d·d_x rounds once, then each
                // lane takes 1 (Q6_K) or 2 (Q4_K) fmas per pair of blocks, then 4 levels of lane
                // sums: relative 2^-24 each.
                const double tol = (2.0 * double(n) / 64 + 6) * 0x1p-24 * mag;
                CHECK(std::fabs(got[size_t(r)] - exact) <= tol);
            }
        }
    }
}
