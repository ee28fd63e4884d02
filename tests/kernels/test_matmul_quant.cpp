// matmul on Q8_0 / Q4_0 weights equals matmul on the same weights dequantized to F32.
#include <cmath>

#include <catch2/catch.hpp>

#include "journey/kernels/gemv.h"
#include "journey/kernels/kernels.h"
#include "journey/kernels/quant.h"
#include "journey/kernels/quant_dot.h"

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
            if (t == DType::Q8_0) quantize_row_q8_0(w.data() + r * n_in, dst, n_in);
            else quantize_row_q4_0(w.data() + r * n_in, dst, n_in);
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
                // One token quantizes x to Q8_0 blocks too (quant_dot.h): the reference product
                // takes that rounded x (test_quant_dot.cpp bounds the difference).
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
