// matmul_tokens (several sequences' tokens at once, --parallel): every row has exactly the bits
// of matmul on that token alone, for every weight dtype and layout, on both kernel paths and
// every thread count.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "journey/kernels/gemv.h"
#include "journey/kernels/kernels.h"
#include "journey/kernels/blocks/dot.h"
#include "journey/kernels/blocks/quantize.h"
#include "journey/kernels/half.h"
#include "journey/kernels/thread_pool.h"

using namespace journey;

namespace {

// Weights of dtype t, [n_out, n_in] as stored (Conv1D: [n_in, n_out]), from a smooth pattern.
std::string make_weights(DType t, int64_t rows, int64_t cols) {
    std::vector<float> w(size_t(rows * cols));
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.37f * float(i)) * (1.0f + 0.01f * float(i % 7));
    std::string bytes(dtype_bytes(t, uint64_t(rows * cols)), '\0');
    for (int64_t r = 0; r < rows; ++r) {
        const float* src = w.data() + r * cols;
        std::byte* dst = reinterpret_cast<std::byte*>(bytes.data()) + r * int64_t(dtype_bytes(t, uint64_t(cols)));
        switch (t) {
            case DType::F32: std::memcpy(dst, src, size_t(cols) * 4); break;
            case DType::F16:
                for (int64_t i = 0; i < cols; ++i) {
                    const uint16_t h = fp32_to_fp16(src[i]);
                    std::memcpy(dst + 2 * i, &h, 2);
                }
                break;
            case DType::BF16:
                for (int64_t i = 0; i < cols; ++i) {
                    const uint16_t h = fp32_to_bf16(src[i]);
                    std::memcpy(dst + 2 * i, &h, 2);
                }
                break;
            default: quantize_row(t, src, dst, cols);
        }
    }
    return bytes;
}

}  // namespace

TEST_CASE("matmul_tokens: each row has the bits of the token alone", "[kernels][parallel]") {
    const int threads_before = num_threads();
    const int64_t n_out = 83, n_in = 512;  // rows not a multiple of any group; 2 K-quant blocks a row
    struct Case {
        DType t;
        Layout layout;
    };
    for (const Case& k : {Case{DType::F32, Layout::Linear}, Case{DType::F16, Layout::Linear}, Case{DType::BF16, Layout::Linear},
                          Case{DType::F32, Layout::Conv1D}, Case{DType::F16, Layout::Conv1D}, Case{DType::Q8_0, Layout::Linear},
                          Case{DType::Q4_0, Layout::Linear}, Case{DType::Q4_K, Layout::Linear}, Case{DType::Q5_K, Layout::Linear},
                          Case{DType::Q6_K, Layout::Linear}, Case{DType::Q2_K, Layout::Linear}, Case{DType::MXFP4, Layout::Linear}}) {
        INFO(dtype_name(k.t) << (k.layout == Layout::Conv1D ? " Conv1D" : " Linear"));
        const bool conv = k.layout == Layout::Conv1D;
        const std::string bytes = make_weights(k.t, conv ? n_in : n_out, conv ? n_out : n_in);
        const Matrix W{k.t, reinterpret_cast<const std::byte*>(bytes.data()), conv ? n_in : n_out, conv ? n_out : n_in, k.layout};
        for (bool portable : {false, true}) {
            force_portable_kernels(portable);
            for (int threads : {1, 2, 3}) {
                set_num_threads(threads);
                for (int T : {2, 5, 7}) {  // 7: the groups of 4, 2 and 1 tokens (Q6_K, Q8_0, Q4_0)
                    INFO("portable " << portable << ", threads " << threads << ", T " << T);
                    std::vector<float> x(size_t(T * n_in)), got(size_t(T * n_out)), alone(static_cast<size_t>(n_out));
                    for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.11f * float(i)) + 0.05f * float(i % 13);
                    matmul_tokens(got.data(), x.data(), W, T);
                    for (int t = 0; t < T; ++t) {
                        matmul(alone.data(), x.data() + t * n_in, W, 1);
                        CHECK(std::memcmp(alone.data(), got.data() + t * n_out, alone.size() * sizeof(float)) == 0);
                    }
                }
            }
        }
    }
    force_portable_kernels(false);
    set_num_threads(threads_before);
}

// Q4_K and Q6_K regrouped 16 rows (pack_rows16, as loaded): the several-token 16-row kernels
// decode each group's weights once for up to four tokens; every row keeps the bits of the token
// alone (T = 2..9 takes the groups of 4, 2 and 1).
TEST_CASE("matmul_tokens: Q4_K and Q6_K regrouped 16 rows, each row the bits of the token alone", "[kernels][parallel]") {
    const int threads_before = num_threads();
    const int64_t n_out = 80, n_in = 768;  // 5 groups of 16 rows, 3 super-blocks a row
    for (DType type : {DType::Q4_K, DType::Q6_K}) {
    const std::string bytes = make_weights(type, n_out, n_in);
    Matrix W{type, reinterpret_cast<const std::byte*>(bytes.data()), n_out, n_in, Layout::Linear};
    REQUIRE(can_pack_rows16(W));
    std::vector<std::byte> packed(rows16_bytes(W));
    pack_rows16(W, packed.data());
    W.rows16 = packed.data();
    for (bool portable : {false, true}) {
        force_portable_kernels(portable);
        for (int threads : {1, 2, 3}) {
            set_num_threads(threads);
            for (int T : {2, 3, 4, 7, 9}) {
                INFO(dtype_name(type) << ", portable " << portable << ", threads " << threads << ", T " << T);
                std::vector<float> x(size_t(T * n_in)), got(size_t(T * n_out)), alone(static_cast<size_t>(n_out));
                for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.13f * float(i)) + 0.07f * float(i % 11);
                matmul_tokens(got.data(), x.data(), W, T);
                for (int t = 0; t < T; ++t) {
                    matmul(alone.data(), x.data() + t * n_in, W, 1);
                    CHECK(std::memcmp(alone.data(), got.data() + t * n_out, alone.size() * sizeof(float)) == 0);
                }
            }
        }
    }
    }
    force_portable_kernels(false);
    set_num_threads(threads_before);
}

// The tiles of rows x tokens (Q8_0, Q4_0: 4 x 8; F16, BF16: 3 x 2, and their smaller edges):
// every row of every token has the bits of the portable kernel on that token alone (the
// definition), for counts of rows and tokens that leave every edge tile (T = 2 .. 17: every
// tile of 1 .. 8 tokens, alone and after whole tiles), an odd number of blocks a row (Q8_0's
// last pair half empty) and a row length that is no multiple of 64 (the F16 rows' last steps
// masked), with either stream shape; 403 rows: several runs of row groups for each thread
// (matmul_quantized_tokens' chunks), the last one short.
TEST_CASE("matmul_tokens: row x token tiles give the portable bits of each token alone", "[kernels][parallel]") {
    const int threads_before = num_threads();
    const int64_t n_in = 544;  // 17 blocks of 32; 8 x 64 + 32
    for (int64_t n_out : {23, 403})  // 23: 5 tiles of 4 rows and 3 more
    for (DType t : {DType::Q8_0, DType::Q4_0, DType::F16, DType::BF16}) {
        INFO("rows " << n_out);
        const std::string bytes = make_weights(t, n_out, n_in);
        const Matrix W{t, reinterpret_cast<const std::byte*>(bytes.data()), n_out, n_in, Layout::Linear};
        const int T_max = 17;
        std::vector<float> x(size_t(T_max * n_in)), want(size_t(T_max * n_out)), got(size_t(T_max * n_out));
        for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.07f * float(i)) + 0.03f * float(i % 17) - 0.2f;
        force_portable_kernels(true);
        set_num_threads(1);
        for (int k = 0; k < T_max; ++k) matmul(want.data() + k * n_out, x.data() + k * n_in, W, 1);
        force_portable_kernels(false);
        for (auto shape : {StreamShape::sequential, StreamShape::interleaved}) {
            force_stream_shape(shape);
            for (int threads : {1, 2}) {
                set_num_threads(threads);
                for (int T : {2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17}) {
                    INFO(dtype_name(t) << ", shape " << int(shape) << ", threads " << threads << ", T " << T);
                    std::fill(got.begin(), got.end(), 0.0f);
                    matmul_tokens(got.data(), x.data(), W, T);
                    CHECK(std::memcmp(want.data(), got.data(), size_t(T * n_out) * sizeof(float)) == 0);
                }
            }
        }
    }
    force_stream_shape(std::nullopt);
    set_num_threads(threads_before);
}

// The AVX2 several-token kernels, forced (as on a CPU without AVX-512): gemv_tokens' row x token
// tiles (F32, F16, BF16: each row's eight chains taken one at a time over chunks of 1024
// inputs, blocks of 12 rows) and dot_rows_tokens' (Q8_0, Q4_0, MXFP4: lo's blocks, then hi's,
// over chunks of 32 blocks). Every row of every token has the bits of the one-token kernels
// (AVX2 and portable alike) on that token alone, for T = 1 .. 21 (token tiles of 1 .. 4, and 5
// as 3 + 2; the quantized kernels' tiles of 8 tokens, one, two, and two then 5), row counts that leave tiles and single rows at a block's end (29 = 12 + 12 + 5
// rows; 7), row ranges that start inside the matrix, inputs that end in a second chunk and
// inside a step (1100 = 1024 + 64 + 12; 40) or after an odd number of blocks in a second chunk
// (1056 = 33 blocks; 32), and Q8_0 weights of -128 (|w| = 128, vpmaddubsw's largest unsigned
// operand).
TEST_CASE("gemv_tokens and dot_rows_tokens on the AVX2 kernels: each token the bits of the one-token kernels", "[kernels][parallel][avx2]") {
    const int threads_before = num_threads();
    struct Case {
        DType t;
        int64_t n_in;
    };
    for (const Case& k : {Case{DType::F32, 1100}, Case{DType::F16, 1100}, Case{DType::BF16, 1100}, Case{DType::F16, 40},
                          Case{DType::Q8_0, 1056}, Case{DType::Q4_0, 1056}, Case{DType::MXFP4, 1056}, Case{DType::Q8_0, 32}})
    for (int64_t n_out : {int64_t(29), int64_t(7)}) {
        INFO(dtype_name(k.t) << ", " << n_out << " rows of " << k.n_in);
        std::string bytes = make_weights(k.t, n_out, k.n_in);
        if (k.t == DType::Q8_0)  // some quants -128 (quantize_row never writes it; a file may)
            for (size_t b = 0; b < bytes.size() / 34; b += 3) bytes[b * 34 + 2 + b % 32] = char(0x80);
        const Matrix W{k.t, reinterpret_cast<const std::byte*>(bytes.data()), n_out, k.n_in, Layout::Linear};
        const bool quantized = dtype_block(k.t) > 1;
        const int T_max = 21;
        std::vector<float> x(size_t(T_max * k.n_in)), portable(size_t(T_max * n_out)), avx2(size_t(T_max * n_out));
        for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.05f * float(i)) * (1.0f + 0.2f * float(i % 5)) - 0.1f;
        set_num_threads(1);
        force_portable_kernels(true);
        for (int t = 0; t < T_max; ++t) matmul(portable.data() + t * n_out, x.data() + t * k.n_in, W, 1);
        force_portable_kernels(false);
        force_avx2_kernels(true);
        for (int t = 0; t < T_max; ++t) matmul(avx2.data() + t * n_out, x.data() + t * k.n_in, W, 1);
        CHECK(std::memcmp(portable.data(), avx2.data(), portable.size() * sizeof(float)) == 0);
        std::vector<QuantizedActivations> xs(static_cast<size_t>(T_max));
        if (quantized)
            for (int t = 0; t < T_max; ++t) quantize_activations(x.data() + t * k.n_in, k.n_in, xs[size_t(t)]);
        for (int T = 1; T <= T_max; ++T) {
            INFO("T " << T);
            std::vector<float> got(size_t(T * n_out), -1.0f);
            if (quantized) {  // rows 2 .. n_out, then 0 .. 2 (a range inside the matrix, a short one)
                dot_rows_tokens(got.data(), n_out, W, xs.data(), T, 2, n_out);
                dot_rows_tokens(got.data(), n_out, W, xs.data(), T, 0, 2);
            } else {
                gemv_tokens(got.data(), x.data(), W, T);
            }
            CHECK(std::memcmp(got.data(), portable.data(), got.size() * sizeof(float)) == 0);
            if (T < 2) continue;
            for (int threads : {1, 2}) {  // the whole product, split over the pool
                set_num_threads(threads);
                std::fill(got.begin(), got.end(), -1.0f);
                matmul_tokens(got.data(), x.data(), W, T);
                CHECK(std::memcmp(got.data(), portable.data(), got.size() * sizeof(float)) == 0);
            }
            set_num_threads(1);
        }
        force_avx2_kernels(false);
    }
    set_num_threads(threads_before);
}
