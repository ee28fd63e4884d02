// matmul on Q8_0 / Q4_0 weights equals matmul on the same weights dequantized to F32.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "journey/kernels/gemv.h"
#include "journey/kernels/kernels.h"
#include "journey/kernels/blocks/layout.h"
#include "journey/kernels/blocks/dequantize.h"
#include "journey/kernels/blocks/quantize.h"
#include "journey/kernels/blocks/dot.h"
#include "journey/kernels/thread_pool.h"

using namespace journey;

TEST_CASE("matmul: quantized Linear weights, one row and many rows", "[kernels][quant]") {
    const int64_t n_out = 70, n_in = 64;  // more rows than one scratch block, 2 blocks per row
    std::vector<float> w(size_t(n_out * n_in));
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.37f * float(i));
    for (DType t : {DType::Q8_0, DType::Q4_0}) {
        INFO(dtype_name(t));
        std::string q(dtype_bytes(t, uint64_t(n_out * n_in)), '\0');
        const size_t row_bytes = dtype_bytes(t, uint64_t(n_in));
        std::vector<float> deq(w.size());
        for (int64_t r = 0; r < n_out; ++r) {
            void* dst = q.data() + size_t(r) * row_bytes;
            quantize_row(t, w.data() + r * n_in, dst, n_in);
            dequantize_row(t, dst, deq.data() + r * n_in, n_in);
        }
        const Matrix Wq{t, reinterpret_cast<const std::byte*>(q.data()), n_out, n_in, Layout::Linear};
        const Matrix Wf{DType::F32, reinterpret_cast<const std::byte*>(deq.data()), n_out, n_in, Layout::Linear};
        // One token runs our row-dot kernels (integer dots with x quantized, VNNI where the
        // CPU has it), several tokens dequantize blocks of rows for sgemm; both, and the
        // forced portable path, agree.
        for (bool portable : {false, true}) {
            INFO("portable kernels forced: " << portable);
            force_portable_kernels(portable);
            for (int T : {1, 3}) {
                std::vector<float> x(size_t(T * n_in)), got(size_t(T * n_out)), want(size_t(T * n_out));
                for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.11f * float(i));
                matmul(got.data(), x.data(), Wq, T);
                // One token quantizes x to Q8_0 blocks too (blocks/dot.h): the reference product
                // takes that rounded x (test_dot.cpp bounds the difference).
                std::vector<float> x_ref = x;
                if (T == 1) {
                    QuantizedActivations xq;
                    quantize_activations(x.data(), n_in, xq);
                    for (int64_t i = 0; i < n_in; ++i) x_ref[size_t(i)] = xq.d[size_t(i / kQK)] * float(xq.q[size_t(i)]);
                }
                matmul(want.data(), x_ref.data(), Wf, T);
                for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-4));
            }
        }
        force_portable_kernels(false);
        std::vector<float> row(static_cast<size_t>(n_in));
        embedding_row(row.data(), Wq, 5);
        for (int64_t i = 0; i < n_in; ++i) CHECK(row[size_t(i)] == deq[size_t(5 * n_in + i)]);
    }
}

// Q4_K prompts are the one token's integer dots token by token (blocks/matmul.h): every row of a
// prompt's product has the bits of the same token multiplied alone, as stored and regrouped 16
// rows at a time, fast and portable, on 1 and 2 threads; and the one-token product is within
// the rounding of 8-bit activations of the dequantized weights times float x.
TEST_CASE("matmul: Q4_K prompts give each token the bits of its one-token product", "[kernels][quant]") {
    const int64_t n_out = 48, n_in = 512, T = 5;
    std::vector<float> w(size_t(n_out * n_in)), deq(w.size());
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.37f * float(i)) * (1.0f + 0.5f * std::cos(0.013f * float(i)));
    const size_t row_bytes = dtype_bytes(DType::Q4_K, uint64_t(n_in));
    std::string q(row_bytes * size_t(n_out), '\0');
    for (int64_t r = 0; r < n_out; ++r) {
        quantize_row(DType::Q4_K, w.data() + r * n_in, q.data() + size_t(r) * row_bytes, n_in);
        dequantize_row(DType::Q4_K, q.data() + size_t(r) * row_bytes, deq.data() + r * n_in, n_in);
    }
    Matrix W{DType::Q4_K, reinterpret_cast<const std::byte*>(q.data()), n_out, n_in, Layout::Linear};
    std::string packed(rows16_bytes(W), '\0');
    pack_rows16(W, reinterpret_cast<std::byte*>(packed.data()));
    std::vector<float> x(size_t(T * n_in));
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.11f * float(i)) - 0.2f;
    for (bool regrouped : {false, true})
        for (bool portable : {false, true})
            for (int threads : {1, 2}) {
                INFO("regrouped " << regrouped << ", portable " << portable << ", threads " << threads);
                W.rows16 = regrouped ? reinterpret_cast<const std::byte*>(packed.data()) : nullptr;
                force_portable_kernels(portable);
                resize_thread_pool(threads);
                std::vector<float> prompt(static_cast<size_t>(T * n_out)), alone(static_cast<size_t>(n_out));
                matmul(prompt.data(), x.data(), W, int(T));
                for (int64_t t = 0; t < T; ++t) {
                    matmul(alone.data(), x.data() + t * n_in, W, 1);
                    CHECK(std::memcmp(alone.data(), prompt.data() + t * n_out, size_t(n_out) * 4) == 0);
                    for (int64_t r = 0; r < n_out; ++r) {
                        double ref = 0, scale = 0;
                        for (int64_t i = 0; i < n_in; ++i) {
                            ref += double(deq[size_t(r * n_in + i)]) * double(x[size_t(t * n_in + i)]);
                            scale += std::abs(double(deq[size_t(r * n_in + i)]));
                        }
                        // x rounded to 8 bits per 256 (Q8_K): each |x - x̂| <= max|x| / 254 <= 1.2 / 254
                        CHECK(std::abs(double(alone[size_t(r)]) - ref) <= scale * 1.2 / 254 + 1e-4);
                    }
                }
            }
    force_portable_kernels(false);
    resize_thread_pool(1);
}
