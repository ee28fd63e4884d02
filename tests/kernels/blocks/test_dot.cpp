// Q8_0 / Q4_0 rows · Q8_0-quantized activations (blocks/dot.h): the activation quantizer, the
// VNNI kernels against the portable ones (same bits), and both against double references.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "journey/kernels/gemv.h"
#include "journey/kernels/kernels.h"
#include "journey/kernels/half.h"
#include "journey/kernels/blocks/layout.h"
#include "journey/kernels/blocks/dequantize.h"
#include "journey/kernels/blocks/dot.h"
#include "quant_blocks.h"

using namespace journey;

namespace {

struct DotRows {
    Matrix m;  // over bytes
    std::vector<std::byte> bytes;
    std::vector<float> values;  // dequantized, exactly what the blocks hold
    size_t row_bytes = 0;
};

// Q8_0 / Q4_0 rows of random bytes: every quant (Q8_0: -128 included) and scales of both signs.
DotRows random_rows(DType t, int64_t rows, int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> scale(-0.02f, 0.02f);
    DotRows r;
    r.row_bytes = dtype_bytes(t, uint64_t(n));
    r.bytes.resize(r.row_bytes * size_t(rows));
    const size_t block_bytes = t == DType::Q8_0 ? sizeof(BlockQ8_0) : sizeof(BlockQ4_0);
    for (size_t b = 0; b < r.bytes.size() / block_bytes; ++b) {
        std::byte* blk = r.bytes.data() + b * block_bytes;
        const uint16_t d = fp32_to_fp16(scale(rng));
        std::memcpy(blk, &d, 2);
        for (size_t j = 2; j < block_bytes; ++j) blk[j] = std::byte(byte(rng));
    }
    r.values.resize(size_t(rows * n));
    for (int64_t i = 0; i < rows; ++i) dequantize_row(t, r.bytes.data() + size_t(i) * r.row_bytes, r.values.data() + i * n, n);
    r.m = Matrix{t, r.bytes.data(), rows, n, Layout::Linear};
    return r;
}

std::vector<float> random_dot_activations(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 2.0f);
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = dist(rng);
    x[3] = 0.0f;  // and one block of zeros, whose scale is 0
    if (n >= 64)
        for (int j = 32; j < 64; ++j) x[size_t(j)] = 0.0f;
    return x;
}

float dequantized_x(const QuantizedActivations& xq, int64_t i) { return xq.d[size_t(i / kQK)] * float(xq.q[size_t(i)]); }

using journey::test::PortableScope;

const std::vector<std::pair<int64_t, int64_t>> kDotShapes = {{1, 32}, {5, 64}, {9, 96}, {70, 768}, {6, 3104}};

}  // namespace

TEST_CASE("quantize_activations: per block d = max|x|/127 and q = round(x/d)", "[quant][quant_dot]") {
    const std::vector<float> x = random_dot_activations(96, 1);
    QuantizedActivations xq;
    quantize_activations(x.data(), 96, xq);
    REQUIRE(xq.n == 96);
    CHECK(xq.d[1] == 0.0f);  // the zero block
    for (int64_t b = 0; b < 3; ++b) {
        float amax = 0.0f;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[size_t(b * 32 + j)]));
        CHECK(xq.d[size_t(b)] == amax / 127.0f);
        for (int j = 0; j < 32; ++j) {
            const int64_t i = b * 32 + j;
            CHECK(std::abs(int(xq.q[size_t(i)])) <= 127);
            if (std::fabs(x[size_t(i)]) == amax && amax > 0) CHECK(std::abs(int(xq.q[size_t(i)])) == 127);
            // rounding to nearest: within half a step (and a few float ulps of the division)
            CHECK(std::fabs(x[size_t(i)] - dequantized_x(xq, i)) <= xq.d[size_t(b)] * (0.5f + 1e-4f));
        }
    }
    // padded to whole pairs of blocks with zeros, which the kernels rely on
    CHECK(xq.q.size() == 128);
    for (size_t i = 96; i < 128; ++i) CHECK(xq.q[i] == 0);
    CHECK_THROWS_AS(quantize_activations(x.data(), 40, xq), std::invalid_argument);
    // tiny blocks (127 / max|x| beyond float range) still round to [-127, 127]; here
    // 127 / max|x| = 2^140 exactly, so x = k · 2^-141 is the tie k / 2, rounded to even
    std::vector<float> tiny(32, 0.0f);
    tiny[5] = -127 * 0x1p-140f;
    tiny[0] = 127 * 0x1p-141f;
    tiny[6] = 129 * 0x1p-141f;
    tiny[7] = -125 * 0x1p-141f;
    quantize_activations(tiny.data(), 32, xq);
    CHECK(xq.q[5] == -127);
    CHECK(xq.q[0] == 64);  // 63.5
    CHECK(xq.q[6] == 64);  // 64.5
    CHECK(xq.q[7] == -62);  // -62.5
}

TEST_CASE("quantize_activations, blocks of 256 (llama.cpp's Q8_K): d = -max/127 by the signed largest x", "[quant][quant_dot]") {
    std::vector<float> x = random_dot_activations(768, 3);
    for (int j = 256; j < 512; ++j) x[size_t(j)] = 0.0f;  // a zero block
    x[600] = -40.0f;                                       // block 2's largest |x|, negative
    x[700] = 40.0f;                                        // as large, later: the first one counts
    QuantizedActivations xq;
    quantize_activations(x.data(), 768, xq, 256);
    REQUIRE(xq.block == 256);
    REQUIRE(xq.q.size() == 768);
    REQUIRE(xq.d.size() == 3);
    CHECK(xq.d[1] == 0.0f);
    CHECK(xq.d[2] == 1.0f / (-127.0f / -40.0f));  // positive: the largest x was negative
    CHECK(xq.q[600] == -127);
    CHECK(xq.q[700] == 127);  // as large the other way
    for (int64_t b = 0; b < 3; ++b) {
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < 256; ++j)
            if (std::fabs(x[size_t(b * 256 + j)]) > amax) amax = std::fabs(x[size_t(b * 256 + j)]), max = x[size_t(b * 256 + j)];
        // d has the opposite sign of the block's signed largest x, which maps to -127
        if (amax > 0) CHECK(std::fabs(xq.d[size_t(b)] + max / 127.0f) <= 1e-6f * amax);
        for (int j = 0; j < 256; ++j) {
            const int64_t i = b * 256 + j;
            CHECK(std::abs(int(xq.q[size_t(i)])) <= 127);
            CHECK(std::fabs(x[size_t(i)] - xq.d[size_t(b)] * float(xq.q[size_t(i)])) <= std::fabs(xq.d[size_t(b)]) * (0.5f + 1e-4f));
        }
    }
    for (size_t g = 0; g < 48; ++g) {
        int s16 = 0, s32 = 0;
        for (size_t j = 0; j < 16; ++j) s16 += xq.q[16 * g + j];
        for (size_t j = 0; j < 32 && g < 24; ++j) s32 += xq.q[32 * g + j];
        CHECK(xq.sum16[g] == s16);
        if (g < 24) CHECK(xq.sum32[g] == s32);
    }
    // a non-finite value: that block's d is NaN and its quants zero
    x[10] = std::numeric_limits<float>::infinity();
    quantize_activations(x.data(), 768, xq, 256);
    CHECK(std::isnan(xq.d[0]));
    CHECK(std::all_of(xq.q.begin(), xq.q.begin() + 256, [](int8_t q) { return q == 0; }));
    CHECK(xq.d[2] == 1.0f / (-127.0f / -40.0f));
    CHECK_THROWS_AS(quantize_activations(x.data(), 512 + 32, xq, 256), std::invalid_argument);
    CHECK_THROWS_AS(quantize_activations(x.data(), 512, xq, 64), std::invalid_argument);
    // a K-quant row needs x in blocks of 256, the others in blocks of 32
    std::vector<std::byte> row(dtype_bytes(DType::Q4_K, 256));
    const Matrix W{DType::Q4_K, row.data(), 1, 256, Layout::Linear};
    float out = 0;
    quantize_activations(x.data() + 256, 256, xq, 32);
    CHECK_THROWS_AS(dot_rows(&out, W, xq, 0, 1), std::invalid_argument);
    quantize_activations(x.data() + 256, 256, xq, 256);
    dot_rows(&out, W, xq, 0, 1);
    CHECK(out == 0.0f);
}

TEST_CASE("dot_rows: AVX-512 VNNI, AVX2 and portable kernels give the same bits", "[quant][quant_dot][fast]") {
    INFO("kernels: " << kernel_isa() << ", VNNI kernel: " << (quant_dot_fast_available() ? "yes" : "no"));
    for (StreamShape shape : {StreamShape::interleaved, StreamShape::sequential})  // each CPU's shape
    for (DType t : {DType::Q8_0, DType::Q4_0})
    for (auto [rows, n] : kDotShapes) {
        force_stream_shape(shape);
        INFO(stream_shape_name() << " " << dtype_name(t) << ": " << rows << " rows of " << n);
        const DotRows W = random_rows(t, rows, n, 7);
        QuantizedActivations xq;
        quantize_activations(random_dot_activations(n, 11).data(), n, xq);
        std::vector<float> fast(size_t(rows), -1.0f), port(size_t(rows), -2.0f), part(size_t(rows), -3.0f);
        dot_rows(fast.data(), W.m, xq, 0, rows);
        dot_rows(part.data(), W.m, xq, rows / 3, rows);  // other groupings of rows
        dot_rows(part.data(), W.m, xq, 0, rows / 3);
        {
            PortableScope p(true);
            dot_rows(port.data(), W.m, xq, 0, rows);
        }
        // the AVX2 kernels too where the CPU has them (on an AVX-512 machine, forced)
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

TEST_CASE("dot_rows: the product of the dequantized weights and the quantized x", "[quant][quant_dot]") {
    for (bool portable : {false, true})
    for (DType t : {DType::Q8_0, DType::Q4_0}) {
        PortableScope p(portable);
        for (auto [rows, n] : kDotShapes) {
            INFO(dtype_name(t) << ": " << rows << " rows of " << n << ", portable forced: " << portable);
            const DotRows W = random_rows(t, rows, n, 3);
            const std::vector<float> x = random_dot_activations(n, 5);
            QuantizedActivations xq;
            quantize_activations(x.data(), n, xq);
            std::vector<float> got(static_cast<size_t>(rows));
            dot_rows(got.data(), W.m, xq, 0, rows);
            const int64_t nb = n / kQK;
            for (int64_t r = 0; r < rows; ++r) {
                double exact = 0, mag = 0, exact_x = 0, bound_x = 0;
                for (int64_t i = 0; i < n; ++i) {
                    const double w = W.values[size_t(r * n + i)], xi = dequantized_x(xq, i);
                    exact += w * xi;
                    mag += std::fabs(w * xi);
                    exact_x += w * x[size_t(i)];
                    // |x - d·q| <= d/2, plus the float ulps of x·127/amax, d and d·q (< 1e-4 d)
                    bound_x += std::fabs(w) * xq.d[size_t(i / kQK)] * (0.5 + 1e-4);
                }
                // Block sums are exact integers; the float part rounds d_w·d_x once, then each
                // of nb/2 fma per lane and 4 levels of lane sums round once: relative 2^-24 each.
                const double tol = (double(nb) / 2 + 6) * 0x1p-24 * mag;
                CHECK(std::fabs(got[size_t(r)] - exact) <= tol);
                // Against the unquantized x: the rounding of x to d·q moves each product
                // w·x by at most |w|·d/2, whatever the signs; the float error adds on top.
                CHECK(std::fabs(got[size_t(r)] - exact_x) <= bound_x + tol);
            }
        }
    }
}

TEST_CASE("dot_rows: refuses a matrix that does not fit x", "[quant][quant_dot]") {
    const DotRows W = random_rows(DType::Q8_0, 4, 64, 1);
    QuantizedActivations xq;
    quantize_activations(random_dot_activations(96, 1).data(), 96, xq);
    std::vector<float> out(4);
    CHECK_THROWS_AS(dot_rows(out.data(), W.m, xq, 0, 4), std::invalid_argument);  // 64 columns, x has 96
    quantize_activations(random_dot_activations(64, 1).data(), 64, xq);
    CHECK_THROWS_AS(dot_rows(out.data(), W.m, xq, 0, 5), std::invalid_argument);  // past the last row
    const Matrix f32{DType::F32, W.bytes.data(), 1, 64, Layout::Linear};
    CHECK_THROWS_AS(dot_rows(out.data(), f32, xq, 0, 1), std::invalid_argument);
}

TEST_CASE("dot_rows: a non-finite activation makes the outputs NaN", "[quant][quant_dot]") {
    const DType t = DType::Q8_0;
    const DotRows W = random_rows(t, 6, 64, 9);
    for (float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
        std::vector<float> x = random_dot_activations(64, 1);
        x[40] = bad;
        QuantizedActivations xq;
        quantize_activations(x.data(), 64, xq);
        for (bool portable : {false, true}) {
            PortableScope p(portable);
            std::vector<float> out(6);
            dot_rows(out.data(), W.m, xq, 0, 6);
            for (float o : out) CHECK(std::isnan(o));
        }
    }
}

TEST_CASE("matmul: one-token quantized products split over the pool without changing the result", "[quant][quant_dot]") {
  for (DType t : {DType::Q8_0, DType::Q4_0}) {
    const DotRows W = random_rows(t, 301, 96, 13);  // 75 groups of 4 and a remainder
    const Matrix& m = W.m;
    const std::vector<float> x = random_dot_activations(96, 17);
    std::vector<float> one(301), two(301);
    set_num_threads(1);
    matmul(one.data(), x.data(), m, 1);
    set_num_threads(2);
    matmul(two.data(), x.data(), m, 1);
    set_num_threads(1);
    CHECK(one == two);
  }
}

TEST_CASE("the kernels' operands start on a cache line: LineVector and the quantized activations", "[quant_dot][aligned]") {
    auto on_line = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; };
    for (size_t n : {1, 3, 17, 768, 3104, 100000}) {
        LineVector<float> f(n);
        LineVector<int8_t> b(n);
        CHECK(on_line(f.data()));
        CHECK(on_line(b.data()));
        f.resize(3 * n + 5);  // a reallocation keeps the alignment
        CHECK(on_line(f.data()));
    }
    for (int block : {32, 256})
        for (int64_t n : {256, 768, 3072}) {
            const std::vector<float> x = random_dot_activations(n, 7);
            QuantizedActivations xq;
            quantize_activations(x.data(), n, xq, block);
            CHECK(on_line(xq.q.data()));
            CHECK(on_line(xq.d.data()));
            if (block == 32) {
                CHECK(on_line(xq.d_lanes.data()));
                CHECK(on_line(xq.bias_q8_0.data()));
            } else {
                CHECK(on_line(xq.sum16.data()));
                CHECK(on_line(xq.sum32.data()));
            }
        }
}
