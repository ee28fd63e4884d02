// journey's one-token and 8-token lattice, ternary, IQ4_XS, Q2_K, Q3_K and IQ4_NL dots (dot_rows, dot_rows_tokens), one core,
// 512 super-blocks in cache (64 rows of 2048, or N inputs a row), pseudo-random blocks: ns per
// super-block, the minimum of 30 repetitions. `journey_dot N portable`: the portable loops.
// Built and run by scripts/bench_iq_dot.sh beside ggml_dot.cpp (llama.cpp's vec_dot, same rows).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "journey/kernels/blocks/dot.h"
#include "journey/kernels/gemv.h"
#include "journey/kernels/half.h"

using namespace journey;

template <typename F>
double best_ns(F&& f, double per) {
    double best = 1e30;
    for (int rep = 0; rep < 30; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        best = std::min(best, std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / per);
    }
    return best;
}

int main(int argc, char** argv) {
    const int64_t n = argc > 1 ? std::atoll(argv[1]) : 2048, rows = 64 * 2048 / n;  // inputs a row (a multiple of 256); 512 super-blocks in all
    const bool portable = argc > 2 && std::string(argv[2]) == "portable";  // the portable loops (the definition) instead
    force_portable_kernels(portable);
    std::mt19937 rng(1);
    for (DType t : {DType::IQ2_XXS, DType::IQ2_XS, DType::IQ2_S, DType::IQ3_XXS, DType::IQ3_S, DType::TQ2_0, DType::TQ1_0, DType::IQ1_S, DType::IQ1_M,
                    DType::IQ4_XS, DType::Q2_K, DType::Q3_K, DType::IQ4_NL}) {
        // the f16 d (Q2_K: and dmin at 82), per super-block (IQ4_NL: per block of 32)
        const size_t d_at = t == DType::TQ2_0 ? 64 : t == DType::TQ1_0 ? 52 : t == DType::Q2_K ? 80 : t == DType::Q3_K ? 108 : 0;
        const size_t rb = dtype_bytes(t, n), bb = dtype_bytes(t, dtype_block(t));
        std::vector<unsigned char> w(rb * rows);
        for (auto& b : w) b = static_cast<unsigned char>(rng() & 255);
        for (size_t k = 0; k < w.size() / bb; ++k) {
            const uint16_t h = fp32_to_fp16(0.01f * float(int(rng() % 200) - 100) / 100.f);
            if (t == DType::IQ1_M) {  // the f16 d in the top nibbles of its four scale words
                const uint16_t v = h;
                for (int j = 0; j < 4; ++j) w[k * bb + 49 + 2 * j] = static_cast<unsigned char>((w[k * bb + 49 + 2 * j] & 0x0f) | (((v >> (4 * j)) & 0xf) << 4));
            } else {
                std::memcpy(&w[k * bb + d_at], &h, 2);
                if (t == DType::Q2_K) std::memcpy(&w[k * bb + 82], &h, 2);
            }
        }
        const Matrix W{t, reinterpret_cast<const std::byte*>(w.data()), rows, n, Layout::Linear};
        std::normal_distribution<float> nd;
        std::vector<float> x(n);
        std::vector<QuantizedActivations> xs(8);
        for (auto& q : xs) {
            for (auto& v : x) v = nd(rng);
            quantize_activations(x.data(), n, q, activation_block(t));
        }
        std::vector<float> o(8 * rows);
        const double one = best_ns([&] { for (int it = 0; it < 20; ++it) dot_rows(o.data(), W, xs[0], 0, rows); }, 20.0 * rows * n / 256);
        const double eight = best_ns([&] { for (int it = 0; it < 5; ++it) dot_rows_tokens(o.data(), rows, W, xs.data(), 8, 0, rows); },
                                     5.0 * 8 * rows * n / 256);
        std::printf("%s %s: %.1f ns per super-block, one token; %.1f per super-block and token, 8 tokens\n", portable ? "portable" : "journey ",
                    std::string(dtype_name(t)).c_str(), one, eight);
    }
}
