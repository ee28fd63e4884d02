// One kernel per test, on tiny literal tensors with hand-computed answers.
#include <cmath>
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include "journey/kernels/half.h"
#include "journey/kernels/kernels.h"

using namespace journey;
using Approx = Catch::Detail::Approx;

namespace {

Matrix f32_matrix(const std::vector<float>& v, int64_t rows, int64_t cols, Layout layout) {
    return Matrix{DType::F32, reinterpret_cast<const std::byte*>(v.data()), rows, cols, layout};
}

uint16_t to_bf16(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return static_cast<uint16_t>(b >> 16);  // exact for the values used here
}

}  // namespace

TEST_CASE("layernorm normalises each row then applies gain and bias", "[kernels]") {
    // row [1, 2, 3, 4]: mean 2.5, biased var 1.25
    std::vector<float> x{1, 2, 3, 4, 5, 5, 5, 5}, w{1, 2, 1, 1}, b{0, 0, 1, -1}, out(8);
    layernorm(out.data(), x.data(), w.data(), b.data(), 2, 4, 0.0f);
    const float r = 1.0f / std::sqrt(1.25f);
    CHECK(out[0] == Approx(-1.5f * r));
    CHECK(out[1] == Approx(-0.5f * r * 2));
    CHECK(out[2] == Approx(0.5f * r + 1));
    CHECK(out[3] == Approx(1.5f * r - 1));
    // a constant row becomes the bias (eps keeps it finite)
    layernorm(out.data(), x.data(), w.data(), b.data(), 2, 4, 1e-5f);
    CHECK(out[4] == Approx(0.0f));
    CHECK(out[6] == Approx(1.0f));
    CHECK(out[7] == Approx(-1.0f));
}

TEST_CASE("gelu_new follows the tanh formula", "[kernels]") {
    std::vector<float> x{0.0f, 1.0f, -1.0f, 3.0f, -10.0f};
    gelu_new(x.data(), 5);
    CHECK(x[0] == 0.0f);
    CHECK(x[1] == Approx(0.8411920f).epsilon(1e-6));   // 0.5*(1+tanh(0.7978845608*(1.044715)))
    CHECK(x[2] == Approx(-0.1588080f).epsilon(1e-6));
    CHECK(x[3] == Approx(2.9963627f).epsilon(1e-6));
    CHECK(x[4] == Approx(0.0f).margin(1e-6));
}

TEST_CASE("softmax is shift-invariant and sums to one", "[kernels]") {
    std::vector<float> x{1, 2, 3}, y{1001, 1002, 1003};
    softmax(x.data(), 3);
    softmax(y.data(), 3);
    const double e = std::exp(1.0), s = 1 + e + e * e;
    CHECK(x[0] == Approx(1 / s));
    CHECK(x[2] == Approx(e * e / s));
    for (int i = 0; i < 3; ++i) CHECK(y[size_t(i)] == Approx(x[size_t(i)]));
}

TEST_CASE("add and add_bias", "[kernels]") {
    std::vector<float> x{1, 2, 3, 4}, a{10, 20, 30, 40}, b{100, 200};
    add(x.data(), a.data(), 4);
    CHECK(x == std::vector<float>{11, 22, 33, 44});
    add_bias(x.data(), b.data(), 2, 2);
    CHECK(x == std::vector<float>{111, 222, 133, 244});
}

TEST_CASE("matmul: Linear [out,in] and Conv1D [in,out] agree, for T = 1 and T > 1", "[kernels]") {
    // x [2, 3]; the map is y = x · M with M (in 3 -> out 2) = [[1,2],[3,4],[5,6]]
    std::vector<float> x{1, 0, -1, 2, 1, 0};
    std::vector<float> conv{1, 2, 3, 4, 5, 6};    // [in, out]
    std::vector<float> lin{1, 3, 5, 2, 4, 6};     // [out, in]
    const std::vector<float> want{-4, -4, 5, 8};  // [1,0,-1]·M, [2,1,0]·M
    for (Layout layout : {Layout::Conv1D, Layout::Linear}) {
        const Matrix W = layout == Layout::Conv1D ? f32_matrix(conv, 3, 2, layout) : f32_matrix(lin, 2, 3, layout);
        CHECK(W.n_in() == 3);
        CHECK(W.n_out() == 2);
        std::vector<float> y(4, 99.0f);
        matmul(y.data(), x.data(), W, 2);
        CHECK(y == want);
        std::vector<float> y1(2, 99.0f);
        matmul(y1.data(), x.data() + 3, W, 1);
        CHECK(y1 == std::vector<float>{5, 8});
    }
}

TEST_CASE("matmul reads F16 and BF16 weights in place", "[kernels]") {
    std::vector<float> x{1, 0, -1, 2, 1, 0};
    const std::vector<float> conv{1, 2, 3, 4, 5, 6};
    // F16 bit patterns of 1..6: exponent 15 (+ mantissa)
    std::vector<uint16_t> f16{0x3C00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600};
    std::vector<uint16_t> bf16;
    for (float f : conv) bf16.push_back(to_bf16(f));
    for (auto [dtype, bits] : {std::pair{DType::F16, &f16}, std::pair{DType::BF16, &bf16}}) {
        for (Layout layout : {Layout::Conv1D, Layout::Linear}) {
            // the same values 1..6, stored as F16/BF16, against the F32 path in the same layout
            Matrix W{dtype, reinterpret_cast<const std::byte*>(bits->data()), layout == Layout::Conv1D ? 3 : 2,
                     layout == Layout::Conv1D ? 2 : 3, layout};
            Matrix ref = f32_matrix(conv, W.rows, W.cols, layout);
            for (int T : {1, 2}) {
                std::vector<float> got(size_t(T) * size_t(W.n_out())), want(got.size());
                matmul(got.data(), x.data(), W, T);
                matmul(want.data(), x.data(), ref, T);
                CHECK(got == want);
            }
        }
    }
}

TEST_CASE("f16 and bf16 conversion", "[kernels]") {
    CHECK(fp16_to_fp32(0x3C00) == 1.0f);
    CHECK(fp16_to_fp32(0xC000) == -2.0f);
    CHECK(fp16_to_fp32(0x7BFF) == 65504.0f);
    CHECK(fp16_to_fp32(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
    CHECK(fp16_to_fp32(0x8000) == 0.0f);
    CHECK(std::isinf(fp16_to_fp32(0x7C00)));
    CHECK(std::isnan(fp16_to_fp32(0x7E00)));
    CHECK(bf16_to_fp32(0x3F80) == 1.0f);
    CHECK(bf16_to_fp32(0xC040) == -3.0f);
}

TEST_CASE("embedding_row converts one stored row", "[kernels]") {
    std::vector<float> e{1, 2, 3, 4, 5, 6};
    std::vector<float> out(3);
    embedding_row(out.data(), f32_matrix(e, 2, 3, Layout::Linear), 1);
    CHECK(out == std::vector<float>{4, 5, 6});
}

TEST_CASE("attention: causal mask, scaling, and grouped heads", "[kernels]") {
    // D = 1, one head, two tokens with no past. q = [1, 1], k = [0, ln 3 * sqrt(1)], v = [2, 6]
    const float l3 = std::log(3.0f);
    std::vector<float> q{1, 1}, k{0, l3}, v{2, 6}, z(2), pattern(4, -1.0f);
    attention(z.data(), pattern.data(), q.data(), k.data(), v.data(), 2, 0, 1, 1, 1);
    // token 0 sees only key 0; token 1 weights keys 1:3
    CHECK(pattern[0] == 1.0f);
    CHECK(pattern[1] == 0.0f);
    CHECK(pattern[2] == Approx(0.25f));
    CHECK(pattern[3] == Approx(0.75f));
    CHECK(z[0] == Approx(2.0f));
    CHECK(z[1] == Approx(0.25f * 2 + 0.75f * 6));

    // D = 4 scales by 1/2; with a past of 1, the new query at position 1 sees keys 0 and 1.
    // Two query heads share one key/value head (GQA).
    std::vector<float> q2{2 * l3, 0, 0, 0, /*head 1*/ 0, 0, 0, 0};
    std::vector<float> k2{0, 0, 0, 0, /*pos 1*/ 1, 0, 0, 0};
    std::vector<float> v2{1, 1, 1, 1, /*pos 1*/ 5, 5, 5, 5};
    std::vector<float> z2(8), p2(4);
    attention(z2.data(), p2.data(), q2.data(), k2.data(), v2.data(), 1, 1, 2, 1, 4);
    CHECK(p2[0] == Approx(0.25f));  // head 0: scores 0, l3 -> 1:3
    CHECK(p2[1] == Approx(0.75f));
    CHECK(p2[2] == Approx(0.5f));   // head 1: scores 0, 0
    CHECK(z2[0] == Approx(4.0f));
    CHECK(z2[4] == Approx(3.0f));
}

TEST_CASE("attention: one token over a long context (heads on the pool) matches a double reference on any -t", "[kernels]") {
    // 4 query heads sharing 2 key/value heads, D = 8, 299 cached positions + the new one.
    const int H = 4, Hkv = 2, D = 8, past = 299, L = past + 1;
    std::vector<float> q(H * D), k(static_cast<size_t>(L) * Hkv * D), v(k.size());
    for (size_t i = 0; i < q.size(); ++i) q[i] = std::sin(0.37f * static_cast<float>(i));
    for (size_t i = 0; i < k.size(); ++i) {
        k[i] = std::cos(0.11f * static_cast<float>(i));
        v[i] = std::sin(0.05f * static_cast<float>(i) + 1.0f);
    }
    auto run = [&](int threads, std::vector<float>& z, std::vector<float>& pattern) {
        journey::set_num_threads(threads);
        z.assign(H * D, 0.0f);
        pattern.assign(static_cast<size_t>(H) * L, -1.0f);
        attention(z.data(), pattern.data(), q.data(), k.data(), v.data(), 1, past, H, Hkv, D);
    };
    std::vector<float> z1, p1, z2, p2;
    run(1, z1, p1);
    run(2, z2, p2);
    journey::set_num_threads(1);
    CHECK(z1 == z2);
    CHECK(p1 == p2);
    for (int h = 0; h < H; ++h) {  // softmax(q·k / sqrt(D)) · v in double
        const int g = h / (H / Hkv);
        std::vector<double> w(L);
        double max = -1e300, sum = 0;
        for (int j = 0; j < L; ++j) {
            double s = 0;
            for (int d = 0; d < D; ++d) s += double(q[h * D + d]) * k[(static_cast<size_t>(j) * Hkv + g) * D + d];
            w[j] = s / std::sqrt(double(D));
            max = std::max(max, w[j]);
        }
        for (double& x : w) sum += (x = std::exp(x - max));
        for (int d = 0; d < D; ++d) {
            double z = 0;
            for (int j = 0; j < L; ++j) z += w[j] / sum * v[(static_cast<size_t>(j) * Hkv + g) * D + d];
            CHECK(z1[h * D + d] == Approx(z).margin(1e-5));
        }
        CHECK(p1[static_cast<size_t>(h) * L + L - 1] == Approx(w[L - 1] / sum).margin(1e-6));
    }
}

TEST_CASE("gelu_new over many elements (split over the pool) equals it one element at a time", "[kernels]") {
    std::vector<float> big(100003);
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 2001) / 200.0f - 5.0f;
    std::vector<float> one = big;
    journey::set_num_threads(2);
    journey::gelu_new(big.data(), static_cast<int64_t>(big.size()));
    journey::set_num_threads(1);
    for (float& v : one) journey::gelu_new(&v, 1);
    CHECK(big == one);
}
