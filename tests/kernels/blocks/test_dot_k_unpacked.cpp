// Rows of every block type but Q8_0/Q4_0 (test_dot.cpp) · quantized activations
// (blocks/dot.h: Q8_K for Q4_K, Q5_K, Q6_K, else Q8_0): the VNNI and AVX2 kernels against the portable ones (same bits), both
// against a double reference on the dequantized rows, and the threaded product on 1 and 2 threads.
#include <algorithm>
#include <utility>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "journey/formats/gguf_reader.h"
#include "journey/kernels/gemv.h"
#include "journey/kernels/kernels.h"
#include "journey/kernels/half.h"
#include "journey/kernels/blocks/dequantize.h"
#include "journey/kernels/blocks/dot.h"
#include "quant_blocks.h"

using namespace journey;

namespace {

constexpr float kMaxScale = 0.02f;  // |d| and |dmin| (or m) of the random blocks

// Where each type keeps its half-float scales in a block, and the largest integer its min
// is multiplied by (0: no min).
struct BlockFields {
    DType t;
    std::vector<size_t> halves;
    int max_min;
};
const std::vector<BlockFields> kBlockTypes = {
    {DType::Q4_K, {0, 2}, 63}, {DType::Q5_K, {0, 2}, 63}, {DType::Q6_K, {208}, 0},  {DType::Q2_K, {80, 82}, 15},
    {DType::Q3_K, {108}, 0},   {DType::IQ4_XS, {0}, 0},   {DType::IQ4_NL, {0}, 0},  {DType::Q4_1, {0, 2}, 1},
    {DType::Q5_0, {0}, 0},     {DType::Q5_1, {0, 2}, 1},
};

struct KRows {
    Matrix m;
    std::vector<std::byte> bytes;
    std::vector<float> values;  // dequantized (bit-exact reference, test_dequantize.cpp)
};

// Random blocks: every bit pattern of quants, scales and mins, with half-float scales of
// either sign up to kMaxScale.
KRows random_k_rows(const BlockFields& L, int64_t rows, int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> scale(-kMaxScale, kMaxScale);
    KRows r;
    const size_t row_bytes = dtype_bytes(L.t, uint64_t(n)), block_bytes = dtype_bytes(L.t, dtype_block(L.t));
    r.bytes.resize(row_bytes * size_t(rows));
    for (auto& b : r.bytes) b = std::byte(byte(rng));
    for (size_t b = 0; b < r.bytes.size() / block_bytes; ++b)
        for (size_t at : L.halves) {
            const uint16_t h = fp32_to_fp16(scale(rng));
            std::memcpy(r.bytes.data() + b * block_bytes + at, &h, 2);
        }
    r.values.resize(size_t(rows * n));
    for (int64_t i = 0; i < rows; ++i) dequantize_row(L.t, r.bytes.data() + size_t(i) * row_bytes, r.values.data() + i * n, n);
    r.m = Matrix{L.t, r.bytes.data(), rows, n, Layout::Linear};
    return r;
}

std::vector<float> random_k_activations(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 2.0f);
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = dist(rng);
    for (int j = 32; j < 64; ++j) x[size_t(j)] = 0.0f;  // one block of zeros: scale 0
    if (n >= 768)
        for (int j = 256; j < 512; ++j) x[size_t(j)] = 0.0f;  // and a whole Q8_K block of them
    return x;
}

using journey::test::PortableScope;

const std::vector<std::pair<int64_t, int64_t>> kKShapes = {{1, 256}, {5, 512}, {33, 768}, {3, 1792}, {4, 3072}};  // whole 256s (1792: seven super-blocks, an odd count)

}  // namespace

TEST_CASE("dot_rows, every other block type: AVX-512 VNNI and portable kernels give the same bits", "[quant][quant_dot][fast]") {
    INFO("VNNI kernel: " << (quant_dot_fast_available() ? "yes" : "no (both runs portable)"));
    for (const BlockFields& L : kBlockTypes)
    for (auto [rows, n] : kKShapes) {
        INFO(dtype_name(L.t) << ": " << rows << " rows of " << n);
        const KRows W = random_k_rows(L, rows, n, 7);
        QuantizedActivations xq;
        quantize_activations(random_k_activations(n, 11).data(), n, xq, activation_block(L.t));
        std::vector<float> fast(size_t(rows), -1.0f), port(size_t(rows), -2.0f);
        dot_rows(fast.data(), W.m, xq, 0, rows);
        {
            PortableScope p(true);
            dot_rows(port.data(), W.m, xq, 0, rows);
        }
        CHECK(std::memcmp(fast.data(), port.data(), fast.size() * 4) == 0);
    }
}

TEST_CASE("dot_rows, every other block type: the product of the dequantized weights and the quantized x", "[quant][quant_dot]") {
    for (bool portable : {false, true})
    for (const BlockFields& L : kBlockTypes) {
        PortableScope p(portable);
        for (auto [rows, n] : kKShapes) {
            INFO(dtype_name(L.t) << ": " << rows << " rows of " << n << ", portable forced: " << portable);
            const KRows W = random_k_rows(L, rows, n, 3);
            const std::vector<float> x = random_k_activations(n, 5);
            QuantizedActivations xq;
            quantize_activations(x.data(), n, xq, activation_block(L.t));
            std::vector<float> got(static_cast<size_t>(rows));
            dot_rows(got.data(), W.m, xq, 0, rows);
            for (int64_t r = 0; r < rows; ++r) {
                double exact = 0, mag = 0;
                for (int64_t i = 0; i < n; ++i) {
                    const double xi = double(xq.d[size_t(i / xq.block)]) * xq.q[size_t(i)];
                    exact += double(W.values[size_t(r * n + i)]) * xi;
                    // With a min, w = a + b (scale part, min part, |b| <= max_min · max|dmin|) is
                    // summed as a and b apart: bound by |a| + |b| <= |w| + 2 |b|.
                    const double parts = std::fabs(W.values[size_t(r * n + i)]) + 2.0 * L.max_min * kMaxScale;
                    mag += parts * std::fabs(xi);
                }
                // Integer sums and their scaling by S, M are exact; A·d_x rounds once, then each
                // lane takes 1 or 2 (with a min) fmas per pair of blocks (K-quants: one per
                // super-block, after rounding its int32 sum to float, and the min's 4 lanes
                // apart), then 4 levels of lane sums: relative 2^-24 each.
                const double tol = (2.0 * double(n) / 64 + 6) * 0x1p-24 * mag;
                CHECK(std::fabs(got[size_t(r)] - exact) <= tol);
            }
        }
    }
}

TEST_CASE("matmul: one-token products of every block type split over the pool without changing the result",
          "[quant][quant_dot]") {
    for (const BlockFields& L : kBlockTypes) {
        INFO(dtype_name(L.t));
        const int64_t rows = 301, n = 512;  // 301 / 8 rounded up to 16: 6 chunks of 48 and a remainder on 2 threads
        const KRows W = random_k_rows(L, rows, n, 13);
        const Matrix& m = W.m;
        const std::vector<float> x = random_k_activations(n, 17);
        std::vector<float> one(static_cast<size_t>(rows)), two(static_cast<size_t>(rows));
        set_num_threads(1);
        matmul(one.data(), x.data(), m, 1);
        set_num_threads(2);
        matmul(two.data(), x.data(), m, 1);
        set_num_threads(1);
        CHECK(std::memcmp(one.data(), two.data(), one.size() * 4) == 0);
    }
}

TEST_CASE("dot_rows, Q4_K and Q6_K regrouped 16 rows at a time (pack_rows16): the same bits as the rows as stored",
          "[quant][quant_dot][fast]") {
    INFO("VNNI kernel: " << (quant_dot_fast_available() ? "yes" : "no (both runs portable)"));
    for (size_t type : {size_t(0), size_t(2)})
    for (auto [rows, n] : std::vector<std::pair<int64_t, int64_t>>{{16, 256}, {48, 768}, {64, 2048}}) {
        const BlockFields& L = kBlockTypes[type];
        REQUIRE((L.t == DType::Q4_K || L.t == DType::Q6_K));
        INFO(dtype_name(L.t) << ", " << rows << " rows of " << n);
        const KRows W = random_k_rows(L, rows, n, 23);
        REQUIRE(can_pack_rows16(W.m));
        REQUIRE(rows16_bytes(W.m) == W.bytes.size());
        std::vector<std::byte> packed(rows16_bytes(W.m));
        pack_rows16(W.m, packed.data());
        // the same bytes, rearranged
        std::vector<std::byte> a = W.bytes, b = packed;
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        CHECK(a == b);
        Matrix P = W.m;
        P.rows16 = packed.data();
        QuantizedActivations xq;
        quantize_activations(random_k_activations(n, 29).data(), n, xq, activation_block(L.t));
        std::vector<float> port(static_cast<size_t>(rows));
        {
            PortableScope p(true);
            dot_rows(port.data(), W.m, xq, 0, rows);
        }
        // whole groups, and ranges that start and end inside one
        for (auto [r0, r1] : std::vector<std::pair<int64_t, int64_t>>{{0, rows}, {5, rows - 3}, {0, 16}, {3, 13}}) {
            INFO("rows " << r0 << " .. " << r1);
            std::vector<float> got(static_cast<size_t>(rows), -1.0f);
            dot_rows(got.data(), P, xq, r0, r1);
            CHECK(std::memcmp(got.data() + r0, port.data() + r0, size_t(r1 - r0) * 4) == 0);
        }
        std::vector<float> one(static_cast<size_t>(rows)), two(static_cast<size_t>(rows));
        const std::vector<float> x = random_k_activations(n, 31);
        set_num_threads(1);
        matmul(one.data(), x.data(), W.m, 1);
        set_num_threads(2);
        matmul(two.data(), x.data(), P, 1);
        set_num_threads(1);
        CHECK(std::memcmp(one.data(), two.data(), one.size() * 4) == 0);
    }
    const KRows odd = random_k_rows(kBlockTypes[0], 17, 256, 37);
    CHECK_FALSE(can_pack_rows16(odd.m));
    std::vector<std::byte> out(odd.bytes.size());
    CHECK_THROWS_AS(pack_rows16(odd.m, out.data()), std::invalid_argument);
    const KRows other = random_k_rows(kBlockTypes[1], 16, 256, 41);  // Q5_K: not regrouped
    CHECK_FALSE(can_pack_rows16(other.m));
    const KRows odd6 = random_k_rows(kBlockTypes[2], 24, 256, 43);
    CHECK_FALSE(can_pack_rows16(odd6.m));
}

TEST_CASE("dot_rows, IQ4_NL rows of an odd number of blocks: the direct kernel's half pair as the unpacked zero padding",
          "[quant][quant_dot][fast]") {
    INFO("VNNI kernel: " << (quant_dot_fast_available() ? "yes" : "no (both runs portable)"));
    const BlockFields& L = kBlockTypes[6];
    REQUIRE(L.t == DType::IQ4_NL);
    for (auto [rows, n] : std::vector<std::pair<int64_t, int64_t>>{{3, 96}, {5, 160}, {2, 224}}) {
        INFO(rows << " rows of " << n);
        const KRows W = random_k_rows(L, rows, n, 43);
        QuantizedActivations xq;
        quantize_activations(random_k_activations(n, 47).data(), n, xq, activation_block(L.t));
        std::vector<float> fast(size_t(rows), -1.0f), port(size_t(rows), -2.0f);
        dot_rows(fast.data(), W.m, xq, 0, rows);
        {
            PortableScope p(true);
            dot_rows(port.data(), W.m, xq, 0, rows);
        }
        CHECK(std::memcmp(fast.data(), port.data(), fast.size() * 4) == 0);
    }
}

namespace {

// The AVX2 kernels forced even on an AVX-512 host (force_avx2_kernels), for this file's cases.
struct KUnpackedAvx2Scope {
    KUnpackedAvx2Scope() { force_avx2_kernels(true); }
    ~KUnpackedAvx2Scope() { force_avx2_kernels(false); }
};

}  // namespace

TEST_CASE("dot_rows, K-quants and every other block type: AVX2 and portable kernels give the same bits",
          "[quant][quant_dot][fast][avx2]") {
    KUnpackedAvx2Scope avx2;
    if (!quant_dot_avx2_available()) {
        WARN("no AVX2 + FMA + F16C here: nothing to compare");
        return;
    }
    for (const BlockFields& L : kBlockTypes)
    for (auto [rows, n] : kKShapes) {
        INFO(dtype_name(L.t) << ": " << rows << " rows of " << n);
        const KRows W = random_k_rows(L, rows, n, 53);
        QuantizedActivations xq;
        quantize_activations(random_k_activations(n, 59).data(), n, xq, activation_block(L.t));
        std::vector<float> got(size_t(rows), -1.0f), port(size_t(rows), -2.0f);
        dot_rows(got.data(), W.m, xq, 0, rows);
        {
            PortableScope p(true);
            REQUIRE_FALSE(quant_dot_avx2_available());
            dot_rows(port.data(), W.m, xq, 0, rows);
        }
        CHECK(std::memcmp(got.data(), port.data(), got.size() * 4) == 0);
        // a range that starts and ends inside the matrix
        if (rows > 2) {
            std::vector<float> part(size_t(rows), -3.0f);
            dot_rows(part.data(), W.m, xq, 1, rows - 1);
            CHECK(std::memcmp(part.data() + 1, port.data() + 1, size_t(rows - 2) * 4) == 0);
        }
    }
}

namespace {

// Extreme rows: every byte `fill`, each block's f16 scales (L.halves) +kMaxScale or -kMaxScale/3
// by block parity; and x all +1 (pattern 0), all -1 (1) or alternating in pairs (2).
std::vector<std::byte> extreme_rows(const BlockFields& L, unsigned char fill, int64_t rows, int64_t n) {
    const size_t row_bytes = dtype_bytes(L.t, uint64_t(n)), block_bytes = dtype_bytes(L.t, dtype_block(L.t));
    std::vector<std::byte> bytes(row_bytes * size_t(rows), std::byte(fill));
    for (size_t b = 0; b < bytes.size() / block_bytes; ++b)
        for (size_t at : L.halves) {
            const uint16_t h = fp32_to_fp16(b % 2 ? kMaxScale : -kMaxScale / 3);
            std::memcpy(bytes.data() + b * block_bytes + at, &h, 2);
        }
    return bytes;
}
std::vector<float> extreme_x(int pattern, int64_t n) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = pattern == 0 ? 1.0f : pattern == 1 ? -1.0f : (i / 2 % 2 ? 1.0f : -1.0f);
    return x;
}

}  // namespace

// The integer sums at their extremes: every quant, scale and min at its largest (bytes 0xff) or
// at the sign boundaries (0x80, 0x7f: Q6_K's int8 scales -128 and 127, IQ4's -127), against x
// whose quants are all ±127 with one sign or alternating in pairs, so that every product of a
// vpmaddubsw pair is as large as it gets with one sign: the AVX2 kernels' int16 pair sums must not
// saturate, nor their int32 sums overflow.
TEST_CASE("dot_rows, block types at their extreme quants and scales: AVX2 and portable give the same bits",
          "[quant][quant_dot][fast][avx2]") {
    KUnpackedAvx2Scope avx2;
    if (!quant_dot_avx2_available()) {
        WARN("no AVX2 + FMA + F16C here: nothing to compare");
        return;
    }
    const int64_t rows = 3, n = 512;
    for (const BlockFields& L : kBlockTypes)
    for (unsigned char fill : {0xffu, 0x80u, 0x7fu, 0x55u})
    for (int xs = 0; xs < 3; ++xs) {
        INFO(dtype_name(L.t) << ": bytes " << int(fill) << ", x pattern " << xs);
        const std::vector<std::byte> bytes = extreme_rows(L, fill, rows, n);
        const Matrix W{L.t, bytes.data(), rows, n, Layout::Linear};
        std::vector<float> x = extreme_x(xs, n);
        QuantizedActivations xq;
        quantize_activations(x.data(), n, xq, activation_block(L.t));
        for (int64_t i = 0; i < n; ++i) REQUIRE(std::abs(int(xq.q[size_t(i)])) == 127);
        std::vector<float> got(size_t(rows), -1.0f), port(size_t(rows), -2.0f);
        dot_rows(got.data(), W, xq, 0, rows);
        {
            PortableScope p(true);
            dot_rows(port.data(), W, xq, 0, rows);
        }
        CHECK(std::memcmp(got.data(), port.data(), got.size() * 4) == 0);
    }
}

// Several tokens (dot_rows_tokens: --parallel, Q4_K prompts) of the K-quants on the AVX2 path
// (dot_rows_k_tokens_avx2: one row's super-block decoded once for up to 8 tokens, rows in groups
// of about 32 KiB): each token's row has the bits of the portable one-token dot, for 1..9 tokens
// (groups of 8, 4, 2 and 1), 3 super-blocks a row, 37 rows (one group) and 173 (3 or 4
// groups, the last partial), over the whole matrix and over rows 5 .. rows - 2.
TEST_CASE("dot_rows_tokens, K-quants on AVX2: each token the portable one-token bits", "[quant][quant_dot][fast][avx2]") {
    KUnpackedAvx2Scope avx2;
    for (size_t type : {size_t(0), size_t(1), size_t(2)})
    for (int64_t rows : {int64_t(37), int64_t(173)}) {
        const BlockFields& L = kBlockTypes[type];
        const int64_t n = 768;
        INFO(dtype_name(L.t) << ": " << rows << " rows");
        const KRows W = random_k_rows(L, rows, n, 61);
        for (int T = 1; T <= 9; ++T)
        for (auto [r0, r1] : {std::pair<int64_t, int64_t>{0, rows}, std::pair<int64_t, int64_t>{5, rows - 2}}) {
            std::vector<QuantizedActivations> xq(static_cast<size_t>(T));
            for (int t = 0; t < T; ++t) quantize_activations(random_k_activations(n, 67 + uint32_t(t)).data(), n, xq[size_t(t)], 256);
            std::vector<float> got(size_t(T * rows), -1.0f), port(size_t(T * rows), -1.0f);
            dot_rows_tokens(got.data(), rows, W.m, xq.data(), T, r0, r1);
            {
                PortableScope p(true);
                for (int t = 0; t < T; ++t) dot_rows(port.data() + t * rows, W.m, xq[size_t(t)], r0, r1);
            }
            INFO(T << " tokens, rows " << r0 << " .. " << r1);
            CHECK(std::memcmp(got.data(), port.data(), got.size() * 4) == 0);
        }
    }
}

// ---- Q4_K and Q6_K regrouped 16 rows (pack_rows16) on AVX2 ------------------------------------

namespace {

// W's rows r0 .. r1 regrouped (pack_rows16, into `packed`) and read by the AVX2 kernels: one
// token at a time (dot_rows) and every token at once (dot_rows_tokens: 4, 2, 1 tokens a group),
// against the portable one-token dots on the rows as stored. The regrouped matrix's rows as stored
// are a copy in which every row of a whole group of 16 inside r0 .. r1 is zeros, so that those
// rows can only come right from the regrouped bytes; rows outside r0 .. r1 stay untouched.
void check_k_rows16_avx2(const Matrix& W, const std::vector<QuantizedActivations>& xs, int64_t r0, int64_t r1) {
    const int T = int(xs.size());
    const int64_t rows = W.rows;
    const size_t row_bytes = dtype_bytes(W.dtype, uint64_t(W.cols));
    REQUIRE(can_pack_rows16(W));
    std::vector<std::byte> packed(rows16_bytes(W)), stored(W.data, W.data + row_bytes * size_t(rows));
    pack_rows16(W, packed.data());
    for (int64_t g = (r0 + 15) / 16 * 16; g + 16 <= r1; g += 16)
        std::fill(stored.begin() + std::ptrdiff_t(size_t(g) * row_bytes), stored.begin() + std::ptrdiff_t(size_t(g + 16) * row_bytes), std::byte{0});
    Matrix P{W.dtype, stored.data(), W.rows, W.cols, Layout::Linear};
    P.rows16 = packed.data();
    std::vector<float> port(size_t(T * rows), -1.0f), one(port), many(port);
    {
        PortableScope p(true);
        REQUIRE_FALSE(quant_dot_avx2_available());
        for (int t = 0; t < T; ++t) dot_rows(port.data() + t * rows, W, xs[size_t(t)], r0, r1);
    }
    REQUIRE(quant_dot_avx2_available());
    for (int t = 0; t < T; ++t) dot_rows(one.data() + t * rows, P, xs[size_t(t)], r0, r1);
    dot_rows_tokens(many.data(), rows, P, xs.data(), T, r0, r1);
    CHECK(std::memcmp(one.data(), port.data(), one.size() * 4) == 0);
    CHECK(std::memcmp(many.data(), port.data(), many.size() * 4) == 0);
}

std::vector<QuantizedActivations> k_rows16_tokens(int T, int64_t n, uint32_t seed) {
    std::vector<QuantizedActivations> xs(static_cast<size_t>(T));
    for (int t = 0; t < T; ++t) quantize_activations(random_k_activations(n, seed + uint32_t(t)).data(), n, xs[size_t(t)], 256);
    return xs;
}

}  // namespace

// Random rows, 1 to 7 super-blocks a row (1792: an odd count), 16 to 80 rows, over whole groups
// and over ranges that start and end inside one (odd counts of rows), 1..17 tokens.
TEST_CASE("dot_rows and dot_rows_tokens, Q4_K and Q6_K regrouped 16 rows on AVX2: the portable bits",
          "[quant][quant_dot][fast][avx2][rows16]") {
    KUnpackedAvx2Scope avx2;
    if (!quant_dot_avx2_available()) {
        WARN("no AVX2 + FMA + F16C here: nothing to compare");
        return;
    }
    for (size_t type : {size_t(0), size_t(2)})
    for (auto [rows, n] : std::vector<std::pair<int64_t, int64_t>>{{16, 256}, {48, 768}, {80, 1792}, {32, 3072}}) {
        const BlockFields& L = kBlockTypes[type];
        REQUIRE((L.t == DType::Q4_K || L.t == DType::Q6_K));
        const KRows W = random_k_rows(L, rows, n, 71);
        for (auto [r0, r1] : std::vector<std::pair<int64_t, int64_t>>{{0, rows}, {5, rows - 3}, {3, 13}, {0, 17}, {16, rows}, {1, rows}})
        for (int T : {1, 2, 3, 4, 5, 7, 8, 9, 16, 17}) {
            if (r1 > rows || r0 >= r1) continue;
            INFO(dtype_name(L.t) << ": " << rows << " rows of " << n << ", rows " << r0 << " .. " << r1 << ", " << T << " tokens");
            check_k_rows16_avx2(W.m, k_rows16_tokens(T, n, 73 + uint32_t(T)), r0, r1);
        }
    }
}

// The integer sums at their extremes (as the AVX2 test on rows as stored above): every quant,
// scale and min at its largest or at the sign boundaries, x's quants all ±127 one sign or
// alternating in pairs: the 16-row kernels' int16 sums (Q4_K over 8 words, Q6_K over 2) must not
// saturate or wrap.
TEST_CASE("dot_rows and dot_rows_tokens, Q4_K and Q6_K regrouped 16 rows on AVX2 at the extreme quants and scales: the portable bits",
          "[quant][quant_dot][fast][avx2][rows16]") {
    KUnpackedAvx2Scope avx2;
    if (!quant_dot_avx2_available()) {
        WARN("no AVX2 + FMA + F16C here: nothing to compare");
        return;
    }
    const int64_t rows = 32, n = 512;
    for (size_t type : {size_t(0), size_t(2)})
    for (unsigned char fill : {0xffu, 0x80u, 0x7fu, 0x55u, 0x00u})
    for (int pattern = 0; pattern < 3; ++pattern) {
        const BlockFields& L = kBlockTypes[type];
        INFO(dtype_name(L.t) << ": bytes " << int(fill) << ", x pattern " << pattern);
        const std::vector<std::byte> bytes = extreme_rows(L, fill, rows, n);
        const Matrix W{L.t, bytes.data(), rows, n, Layout::Linear};
        std::vector<QuantizedActivations> xs(5);
        for (auto& xq : xs) {
            quantize_activations(extreme_x(pattern, n).data(), n, xq, 256);
            for (int64_t i = 0; i < n; ++i) REQUIRE(std::abs(int(xq.q[size_t(i)])) == 127);
        }
        check_k_rows16_avx2(W, xs, 0, rows);
        check_k_rows16_avx2(W, xs, 7, rows - 1);
    }
}

// ---- Q2_K, Q3_K, IQ4_XS, IQ4_NL's direct AVX2 dots (blocks/dot_direct.cpp) -------------------

namespace {

// The four types' entries of kBlockTypes.
std::vector<BlockFields> direct_types() {
    std::vector<BlockFields> out;
    for (const BlockFields& L : kBlockTypes)
        if (L.t == DType::Q2_K || L.t == DType::Q3_K || L.t == DType::IQ4_XS || L.t == DType::IQ4_NL) out.push_back(L);
    REQUIRE(out.size() == 4);
    return out;
}

std::vector<QuantizedActivations> quantized_tokens32(int T, int64_t n, uint32_t seed) {
    std::vector<QuantizedActivations> xs(static_cast<size_t>(T));
    for (int t = 0; t < T; ++t) quantize_activations(random_k_activations(n, seed + uint32_t(t)).data(), n, xs[size_t(t)], 32);
    return xs;
}

// Every token of xs against W's rows r0 .. r1 on the AVX2 path, one token at a time (dot_rows)
// and all together (dot_rows_tokens: each super-block decoded once for 4, 2 or 1 tokens),
// against the portable one-token dots: the same bits; rows outside r0 .. r1 untouched.
void check_direct_avx2(const Matrix& W, const std::vector<QuantizedActivations>& xs, int64_t r0, int64_t r1) {
    const int T = int(xs.size());
    const int64_t rows = W.rows;
    std::vector<float> port(size_t(T * rows), -1.0f), one(port), many(port);
    {
        PortableScope p(true);
        REQUIRE_FALSE(quant_dot_avx2_available());
        for (int t = 0; t < T; ++t) dot_rows(port.data() + t * rows, W, xs[size_t(t)], r0, r1);
    }
    REQUIRE(quant_dot_avx2_available());
    for (int t = 0; t < T; ++t) dot_rows(one.data() + t * rows, W, xs[size_t(t)], r0, r1);
    dot_rows_tokens(many.data(), rows, W, xs.data(), T, r0, r1);
    CHECK(std::memcmp(one.data(), port.data(), one.size() * 4) == 0);
    CHECK(std::memcmp(many.data(), port.data(), many.size() * 4) == 0);
}

}  // namespace

TEST_CASE("dot_rows and dot_rows_tokens, Q2_K, Q3_K, IQ4_XS, IQ4_NL on AVX2: the portable bits (random rows)",
          "[quant][quant_dot][fast][avx2]") {
    KUnpackedAvx2Scope avx2;
    if (!quant_dot_avx2_available()) {
        WARN("no AVX2 + FMA + F16C here: nothing to compare");
        return;
    }
    for (const BlockFields& L : direct_types()) {
        auto shapes = kKShapes;
        if (L.t == DType::IQ4_NL) shapes.insert(shapes.end(), {{3, 96}, {5, 160}, {2, 224}, {4, 288}});  // odd block counts
        for (auto [rows, n] : shapes) {
            const KRows W = random_k_rows(L, rows, n, 71);
            for (int T : {1, 2, 3, 4, 5, 6, 7, 9}) {  // groups of 4, 2 and 1 tokens
                INFO(dtype_name(L.t) << ": " << rows << " rows of " << n << ", " << T << " tokens");
                const auto xs = quantized_tokens32(T, n, 73);
                check_direct_avx2(W.m, xs, 0, rows);
                if (rows > 2) check_direct_avx2(W.m, xs, 1, rows - 1);
            }
        }
        // more rows than one group of about 32 KiB (several tokens' passes), the last partial
        const int64_t n = 512, rows = 4 * 32768 / int64_t(dtype_bytes(L.t, uint64_t(n))) + 3;
        INFO(dtype_name(L.t) << ": " << rows << " rows of " << n);
        const KRows W = random_k_rows(L, rows, n, 79);
        check_direct_avx2(W.m, quantized_tokens32(7, n, 83), 2, rows);
    }
}

// Bytes of one value repeated (0xff: every quant, scale and min at its largest; 0x80, 0x7f, 0x55,
// 0x00) with scales of either sign, against x's quants all ±127 of one sign or alternating in
// pairs, and the same x negated as a second token: no int16 saturation, no int32 overflow.
TEST_CASE("dot_rows and dot_rows_tokens, Q2_K, Q3_K, IQ4_XS, IQ4_NL on AVX2 at the extreme quants and scales: the portable bits",
          "[quant][quant_dot][fast][avx2]") {
    KUnpackedAvx2Scope avx2;
    if (!quant_dot_avx2_available()) {
        WARN("no AVX2 + FMA + F16C here: nothing to compare");
        return;
    }
    const int64_t rows = 3, n = 512;
    for (const BlockFields& L : direct_types())
    for (unsigned char fill : {0xffu, 0x80u, 0x7fu, 0x55u, 0x00u})
    for (int pattern = 0; pattern < 3; ++pattern) {
        INFO(dtype_name(L.t) << ": bytes " << int(fill) << ", x pattern " << pattern);
        const std::vector<std::byte> bytes = extreme_rows(L, fill, rows, n);
        const Matrix W{L.t, bytes.data(), rows, n, Layout::Linear};
        std::vector<float> x = extreme_x(pattern, n);
        std::vector<QuantizedActivations> xs(2);
        quantize_activations(x.data(), n, xs[0], 32);
        for (int64_t i = 0; i < n; ++i) REQUIRE(std::abs(int(xs[0].q[size_t(i)])) == 127);
        for (float& v : x) v = -v;
        quantize_activations(x.data(), n, xs[1], 32);
        check_direct_avx2(W, xs, 0, rows);
    }
}

// Every tensor of these types in llama-quantize's files (tests/data/quant: the fixture's
// tinyllama-Q2_K, -Q3_K_M, -IQ4_XS, -IQ4_NL), whole.
TEST_CASE("dot_rows and dot_rows_tokens, Q2_K, Q3_K, IQ4_XS, IQ4_NL on AVX2: the portable bits on llama-quantize's tensors",
          "[quant][quant_dot][fast][avx2]") {
    KUnpackedAvx2Scope avx2;
    if (!quant_dot_avx2_available()) {
        WARN("no AVX2 + FMA + F16C here: nothing to compare");
        return;
    }
    std::set<DType> seen;
    for (const char* name : {"Q2_K", "Q3_K_M", "IQ4_XS", "IQ4_NL"}) {
        const ModelFile f = read_gguf(std::string(JOURNEY_TEST_DATA) + "/quant/tinyllama-" + name + ".gguf");
        for (const auto& [tensor, t] : f.tensors) {
            const bool direct = t.dtype == DType::Q2_K || t.dtype == DType::Q3_K || t.dtype == DType::IQ4_XS || t.dtype == DType::IQ4_NL;
            if (!direct || t.shape.size() != 2) continue;
            INFO(name << " " << tensor << " (" << dtype_name(t.dtype) << ", " << t.shape[0] << " x " << t.shape[1] << ")");
            const Matrix W{t.dtype, t.data, t.shape[0], t.shape[1], Layout::Linear};
            check_direct_avx2(W, quantized_tokens32(5, W.cols, 89), 0, W.rows);
            seen.insert(t.dtype);
        }
    }
    CHECK(seen.size() == 4);
}
