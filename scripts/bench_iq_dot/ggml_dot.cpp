// llama.cpp's own ggml_vec_dot_{iq*,tq*,q2_K,q3_K}_q8_K and ggml_vec_dot_iq4_nl_q8_0 on the rows of journey_dot.cpp (same seed and rule):
// ns per super-block, one token, one core, the minimum of 30 repetitions.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "ggml-cpu.h"
#include "ggml.h"

int main(int argc, char** argv) {
    ggml_cpu_init();
    const int64_t n = argc > 1 ? std::atoll(argv[1]) : 2048, rows = 64 * 2048 / n;  // inputs a row (a multiple of 256); 512 super-blocks in all
    std::mt19937 rng(1);
    for (ggml_type t : {GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S, GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ3_S, GGML_TYPE_TQ2_0,
                        GGML_TYPE_TQ1_0, GGML_TYPE_IQ1_S, GGML_TYPE_IQ1_M, GGML_TYPE_IQ4_XS, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_IQ4_NL}) {
        // the f16 d (Q2_K: and dmin at 82), per super-block (IQ4_NL: per block of 32)
        const size_t d_at = t == GGML_TYPE_TQ2_0 ? 64 : t == GGML_TYPE_TQ1_0 ? 52 : t == GGML_TYPE_Q2_K ? 80 : t == GGML_TYPE_Q3_K ? 108 : 0;
        const size_t rb = ggml_row_size(t, n), bb = ggml_row_size(t, ggml_blck_size(t));
        std::vector<unsigned char> w(rb * rows);
        for (auto& b : w) b = static_cast<unsigned char>(rng() & 255);
        for (size_t k = 0; k < w.size() / bb; ++k) {
            const ggml_fp16_t h = ggml_fp32_to_fp16(0.01f * float(int(rng() % 200) - 100) / 100.f);
            if (t == GGML_TYPE_IQ1_M) {  // the f16 d in the top nibbles of its four scale words
                const uint16_t v = h;
                for (int j = 0; j < 4; ++j) w[k * bb + 49 + 2 * j] = static_cast<unsigned char>((w[k * bb + 49 + 2 * j] & 0x0f) | (((v >> (4 * j)) & 0xf) << 4));
            } else {
                std::memcpy(&w[k * bb + d_at], &h, 2);
                if (t == GGML_TYPE_Q2_K) std::memcpy(&w[k * bb + 82], &h, 2);
            }
        }
        std::normal_distribution<float> nd;
        std::vector<float> x(n);
        for (auto& v : x) v = nd(rng);
        const auto* tr = ggml_get_type_traits_cpu(t);  // vec_dot_type: Q8_K for all of these but IQ4_NL (Q8_0)
        std::vector<char> xq(ggml_row_size(tr->vec_dot_type, n));
        ggml_get_type_traits_cpu(tr->vec_dot_type)->from_float(x.data(), xq.data(), n);
        std::vector<float> o(rows);
        double best = 1e30;
        for (int rep = 0; rep < 30; ++rep) {
            const auto t0 = std::chrono::steady_clock::now();
            for (int it = 0; it < 20; ++it)
                for (int64_t r = 0; r < rows; ++r) tr->vec_dot(int(n), &o[size_t(r)], 0, w.data() + size_t(r) * rb, 0, xq.data(), 0, 1);
            best = std::min(best, std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / (20.0 * rows * n / 256));
        }
        std::printf("ggml    %s: %.1f ns per super-block, one token\n", ggml_type_name(t), best);
    }
}
