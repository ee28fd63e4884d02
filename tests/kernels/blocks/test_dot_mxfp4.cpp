// MXFP4 rows (gpt-oss's experts) · Q8_0-quantized activations, the kernel of its own in
// blocks/dot.cpp (ggml_vec_dot_mxfp4_q8_0's arithmetic: per block of 32 the nibbles' doubled
// E2M1 values against x's int8 quants, an exact integer sum, then d_x · 2^(e-128)): the AVX-512
// VNNI and portable kernels give the same bits; the result is the scalar reference (vec_dot of
// blocks/dequantize.cpp, the row dequantized as ggml does, times x as quantized) within float
// rounding, and exact where the arithmetic has no rounding at all; several tokens at once
// (prompts, an expert's token group, --parallel) give each token's bits alone, on every thread count.
#include <cmath>
#include <cstring>
#include <random>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "journey/kernels/blocks/dequantize.h"
#include "journey/kernels/blocks/dot.h"
#include "journey/kernels/blocks/quantize.h"
#include "journey/kernels/gemv.h"
#include "journey/kernels/kernels.h"
#include "quant_blocks.h"

using namespace journey;

namespace {

constexpr size_t kBlock = 17;  // E8M0 exponent, 16 bytes of nibbles

struct Mxfp4Rows {
    Matrix m;
    std::vector<std::byte> bytes;
    std::vector<float> values;  // dequantized by the scalar reference
};

// Random nibbles; exponents either from lo to hi or (lo < 0) every one, 0 (subnormal scales)
// to 255 included.
Mxfp4Rows random_rows(int64_t rows, int64_t n, uint32_t seed, int lo = 116, int hi = 124) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(0, 255), exponent(lo < 0 ? 0 : lo, lo < 0 ? 255 : hi);
    Mxfp4Rows r;
    r.bytes.resize(dtype_bytes(DType::MXFP4, uint64_t(n)) * size_t(rows));
    for (auto& b : r.bytes) b = std::byte(byte(rng));
    for (size_t b = 0; b < r.bytes.size() / kBlock; ++b) r.bytes[b * kBlock] = std::byte(exponent(rng));
    r.values.resize(size_t(rows * n));
    const size_t row_bytes = dtype_bytes(DType::MXFP4, uint64_t(n));
    for (int64_t i = 0; i < rows; ++i) dequantize_row(DType::MXFP4, r.bytes.data() + size_t(i) * row_bytes, r.values.data() + i * n, n);
    r.m = Matrix{DType::MXFP4, r.bytes.data(), rows, n, Layout::Linear};
    return r;
}

std::vector<float> random_mxfp4_activations(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 2.0f);
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = dist(rng);
    if (n >= 64)
        for (int j = 32; j < 64; ++j) x[size_t(j)] = 0.0f;  // a block of zeros: d = 0
    return x;
}

using journey::test::PortableScope;

// Odd block counts (1, 3, 97: the last block alone), gpt-oss's width (2880: 90 blocks), and row
// counts that are not multiples of the 4-row groups.
const std::vector<std::pair<int64_t, int64_t>> kMxfp4Shapes = {{1, 32}, {5, 64}, {9, 96}, {7, 2880}, {6, 3104}};

}  // namespace

TEST_CASE("MXFP4 dot: AVX-512 VNNI, AVX2 and portable kernels give the same bits", "[quant][quant_dot][fast][mxfp4]") {
    INFO("kernels: " << kernel_isa() << ", VNNI kernel: " << (quant_dot_fast_available() ? "yes" : "no"));
    for (StreamShape shape : {StreamShape::interleaved, StreamShape::sequential})
    for (auto [rows, n] : kMxfp4Shapes) {
        force_stream_shape(shape);
        INFO(stream_shape_name() << ": " << rows << " rows of " << n);
        const Mxfp4Rows W = random_rows(rows, n, 7, -1);  // every exponent
        QuantizedActivations xq;
        quantize_activations(random_mxfp4_activations(n, 11).data(), n, xq);
        std::vector<float> fast(size_t(rows), -1.0f), port(size_t(rows), -2.0f), part(size_t(rows), -3.0f);
        dot_rows(fast.data(), W.m, xq, 0, rows);
        dot_rows(part.data(), W.m, xq, rows / 3, rows);  // other groupings of rows
        dot_rows(part.data(), W.m, xq, 0, rows / 3);
        {
            PortableScope p(true);
            dot_rows(port.data(), W.m, xq, 0, rows);
        }
        // the AVX2 kernel too where the CPU has it (on an AVX-512 machine, forced)
        std::vector<float> avx2(size_t(rows), -4.0f);
        force_avx2_kernels(true);
        const bool has_avx2 = std::string_view(kernel_isa()) == "avx2";
        dot_rows(avx2.data(), W.m, xq, 0, rows);
        force_avx2_kernels(false);
        force_stream_shape(std::nullopt);
        CHECK(std::memcmp(fast.data(), port.data(), fast.size() * 4) == 0);
        CHECK(std::memcmp(fast.data(), part.data(), fast.size() * 4) == 0);
        if (has_avx2) CHECK(std::memcmp(avx2.data(), port.data(), avx2.size() * 4) == 0);
    }
}

TEST_CASE("MXFP4 dot: the scalar reference's vec_dot within float rounding, exact without rounding", "[quant][quant_dot][mxfp4]") {
    for (bool portable : {false, true}) {
        PortableScope p(portable);
        for (auto [rows, n] : kMxfp4Shapes) {
            INFO(rows << " rows of " << n << ", portable forced: " << portable);
            const Mxfp4Rows W = random_rows(rows, n, 3);
            QuantizedActivations xq;
            quantize_activations(random_mxfp4_activations(n, 5).data(), n, xq);
            std::vector<float> xd(static_cast<size_t>(n));  // x as quantized, in float (exact: d · q)
            for (int64_t i = 0; i < n; ++i) xd[size_t(i)] = xq.d[size_t(i / 32)] * float(xq.q[size_t(i)]);
            std::vector<float> got(static_cast<size_t>(rows));
            dot_rows(got.data(), W.m, xq, 0, rows);
            const size_t row_bytes = dtype_bytes(DType::MXFP4, uint64_t(n));
            for (int64_t r = 0; r < rows; ++r) {
                const float ref = vec_dot(DType::MXFP4, W.bytes.data() + size_t(r) * row_bytes, xd.data(), n);
                double mag = 0;
                for (int64_t i = 0; i < n; ++i) mag += std::fabs(double(W.values[size_t(r * n + i)]) * xd[size_t(i)]);
                // Ours: exact block sums, d_w · d_x and each lane's fma round once (n/64 of them),
                // then 4 levels of lane sums; vec_dot: each of its n products and sums rounds once.
                const double tol = (double(n) / 64 + 6 + 2.0 * double(n)) * 0x1p-24 * mag;
                CHECK(std::fabs(double(got[size_t(r)]) - double(ref)) <= tol);
            }
        }
    }
    // x of small integers (max |x| = 127 per block: d = 1, q = x) and scales 2^(e-128) with
    // e = 126 .. 130: every product, scale and sum is exact, so both equal the exact sum.
    for (bool portable : {false, true}) {
        PortableScope p(portable);
        const int64_t rows = 5, n = 2880;
        const Mxfp4Rows W = random_rows(rows, n, 19, 126, 130);
        std::mt19937 rng(23);
        std::uniform_int_distribution<int> small(-127, 127);
        std::vector<float> x(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) x[size_t(i)] = i % 32 == 0 ? 127.0f : float(small(rng));
        QuantizedActivations xq;
        quantize_activations(x.data(), n, xq);
        for (int64_t i = 0; i < n; ++i) REQUIRE(float(xq.q[size_t(i)]) * xq.d[size_t(i / 32)] == x[size_t(i)]);
        std::vector<float> got(static_cast<size_t>(rows));
        dot_rows(got.data(), W.m, xq, 0, rows);
        for (int64_t r = 0; r < rows; ++r) {
            double exact = 0;
            for (int64_t i = 0; i < n; ++i) exact += double(W.values[size_t(r * n + i)]) * double(x[size_t(i)]);
            INFO("row " << r << ", portable forced: " << portable);
            CHECK(double(got[size_t(r)]) == exact);
            CHECK(double(vec_dot(DType::MXFP4, W.bytes.data() + size_t(r) * dtype_bytes(DType::MXFP4, uint64_t(n)), x.data(), n)) == exact);
        }
    }
}

TEST_CASE("MXFP4 dot: several tokens at once give each token's bits alone", "[quant][quant_dot][parallel][mxfp4]") {
    const int threads_before = num_threads();
    for (auto [rows, n] : std::vector<std::pair<int64_t, int64_t>>{{9, 96}, {37, 2880}, {6, 3104}}) {
        const Mxfp4Rows W = random_rows(rows, n, 31, -1);
        const int T = 9;  // the groups of 4 tokens and the one-token remainder
        std::vector<float> x(size_t(T * n));
        for (int t = 0; t < T; ++t) {
            const std::vector<float> xt = random_mxfp4_activations(n, 100 + uint32_t(t));
            std::copy(xt.begin(), xt.end(), x.begin() + t * n);
        }
        std::vector<QuantizedActivations> xs(static_cast<size_t>(T));
        for (int t = 0; t < T; ++t) quantize_activations(x.data() + t * n, n, xs[size_t(t)]);
        for (bool portable : {false, true}) {
            PortableScope p(portable);
            INFO(rows << " rows of " << n << ", portable forced: " << portable);
            std::vector<float> alone(size_t(T * rows));
            for (int t = 0; t < T; ++t) dot_rows(alone.data() + t * rows, W.m, xs[size_t(t)], 0, rows);
            for (int count : {1, 2, 4, 5, 9}) {  // dot_rows_tokens, on row ranges inside the matrix
                std::vector<float> got(size_t(T * rows), -1.0f);
                dot_rows_tokens(got.data(), rows, W.m, xs.data(), count, 1, rows);
                dot_rows_tokens(got.data(), rows, W.m, xs.data(), count, 0, 1);
                INFO(count << " tokens");
                CHECK(std::memcmp(got.data(), alone.data(), size_t(count * rows) * 4) == 0);
            }
            for (int threads : {1, 2, 3}) {  // a prompt's product, matmul_tokens and matmul_many
                set_num_threads(threads);
                INFO(threads << " threads");
                std::vector<float> one(static_cast<size_t>(rows)), prompt(size_t(T * rows)), tokens(size_t(T * rows)),
                    many(size_t(T * rows + 3 * rows));
                matmul(prompt.data(), x.data(), W.m, T);
                matmul_tokens(tokens.data(), x.data(), W.m, T);
                const std::vector<Product> ps = {{many.data(), x.data(), &W.m, T}, {many.data() + T * rows, x.data() + 2 * n, &W.m, 3}};
                matmul_many(ps);
                for (int t = 0; t < T; ++t) {
                    matmul(one.data(), x.data() + t * n, W.m, 1);
                    CHECK(std::memcmp(one.data(), alone.data() + t * rows, one.size() * 4) == 0);
                    CHECK(std::memcmp(one.data(), prompt.data() + t * rows, one.size() * 4) == 0);
                    CHECK(std::memcmp(one.data(), tokens.data() + t * rows, one.size() * 4) == 0);
                    CHECK(std::memcmp(one.data(), many.data() + t * rows, one.size() * 4) == 0);
                }
                for (int t = 0; t < 3; ++t)
                    CHECK(std::memcmp(alone.data() + (t + 2) * rows, many.data() + (T + t) * rows, size_t(rows) * 4) == 0);
            }
        }
    }
    set_num_threads(threads_before);
}
