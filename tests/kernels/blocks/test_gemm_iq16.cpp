// Prompts of the importance-matrix types (blocks/gemm_iq16.h): x at 16 bits against the
// weights' decoded integers. The decoded integers times d_w are the dequantized values exactly
// (dequantize_row, itself bit-exact against ggml); x's rounding keeps every super-block's sum
// inside int32 (also on weights at their largest against flat x); the product equals an int64
// reference of the same integers with the same float step, bit for bit, on the AVX-512 VNNI and
// the portable kernel, whatever T, the split of the tokens and the thread count; and it lies
// within x's 16-bit rounding of the exact product of the dequantized weights. The AVX2 tile (6
// tokens x 16 rows in assembly, 1-5 token tails) and the AVX2 decoders give the portable bits for
// every token count 1-17, partial panels and weights and x at their extremes.
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "journey/kernels/blocks/dequantize.h"
#include "journey/kernels/blocks/dot.h"
#include "journey/kernels/blocks/gemm_iq16.h"
#include "journey/kernels/gemv.h"
#include "journey/kernels/half.h"
#include "journey/kernels/kernels.h"
#include "journey/kernels/thread_pool.h"
#include "quant_blocks.h"

using namespace journey;

namespace {

struct Type {
    DType t;
    int d_at;  // the f16 d's offset (-1: IQ1_M spreads it over its scale words)
};
const std::vector<Type> kIq16Types = {{DType::IQ2_XXS, 0}, {DType::IQ2_XS, 0}, {DType::IQ2_S, 0}, {DType::IQ3_XXS, 0},
                                  {DType::IQ3_S, 0},   {DType::IQ4_XS, 0}, {DType::IQ1_S, 0}, {DType::IQ1_M, -1},
                                  {DType::TQ1_0, 52},  {DType::TQ2_0, 64}};

// Random blocks (every index, sign and scale reachable) with small f16 d of either sign.
std::vector<unsigned char> random_rows(const Type& L, int64_t rows, int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> scale(-1.0f / 64, 1.0f / 64);
    const size_t nbytes = dtype_bytes(L.t, 256);
    std::vector<unsigned char> bytes(dtype_bytes(L.t, uint64_t(n)) * size_t(rows));
    for (auto& b : bytes) b = static_cast<unsigned char>(byte(rng));
    for (size_t b = 0; b < bytes.size() / nbytes; ++b) {
        unsigned char* o = bytes.data() + b * nbytes;
        const uint16_t h = fp32_to_fp16(scale(rng));
        if (L.d_at >= 0) std::memcpy(o + L.d_at, &h, 2);
        else
            for (int k = 0; k < 4; ++k) o[49 + 2 * k] = static_cast<unsigned char>((o[49 + 2 * k] & 0x0f) | (((h >> (4 * k)) & 0xf) << 4));
    }
    return bytes;
}

// Activations with a few large outliers (as a model's have), and a zero super-block.
std::vector<float> random_x(int64_t n, int T, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> x(size_t(n) * size_t(T));
    for (size_t i = 0; i < x.size(); ++i) x[i] = i % 97 == 5 ? 30.0f * dist(rng) : dist(rng);
    if (n >= 512)
        for (int j = 256; j < 512; ++j) x[size_t(j)] = 0.0f;
    return x;
}

using journey::test::PortableScope;

// Forces the AVX2 kernels (gemv.h: no VNNI, so matmul_iq16's AVX2 tile) for a test's scope.
struct Iq16Avx2Scope {
    explicit Iq16Avx2Scope(bool on) { force_avx2_kernels(on); }
    ~Iq16Avx2Scope() { force_avx2_kernels(false); }
};

// The definition, independently: int64 sums of the decoded integers, then the header's step.
std::vector<float> reference(DType t, const std::vector<unsigned char>& W, int64_t rows, int64_t n, const std::vector<float>& x, int T) {
    const int64_t nk = n / 256;
    const size_t bb = dtype_bytes(t, 256);
    std::vector<float> out(size_t(rows) * size_t(T));
    std::vector<int16_t> q(static_cast<size_t>(n));
    std::vector<float> dx(static_cast<size_t>(nk));
    int16_t w[256];
    for (int tok = 0; tok < T; ++tok) {
        iq16_quantize_x(t, x.data() + size_t(tok) * size_t(n), n, q.data(), dx.data());
        for (int64_t r = 0; r < rows; ++r) {
            float acc = 0.0f;
            for (int64_t k = 0; k < nk; ++k) {
                float dw;
                iq16_decode(t, reinterpret_cast<const std::byte*>(W.data() + (size_t(r * nk + k)) * bb), w, dw);
                int64_t isum = 0;
                for (int i = 0; i < 256; ++i) isum += int64_t(w[i]) * q[size_t(k * 256 + i)];
                REQUIRE(std::abs(isum) < (int64_t{1} << 31));
                acc = std::fma(float(isum), dw * dx[size_t(k)], acc);
            }
            out[size_t(tok) * size_t(rows) + size_t(r)] = acc;
        }
    }
    return out;
}

}  // namespace

TEST_CASE("iq16: decoded integers times d_w are the dequantized weights exactly", "[iquant][iq16]") {
    for (const Type& L : kIq16Types) {
        INFO(dtype_name(L.t));
        REQUIRE(has_iq16(L.t));
        const int64_t blocks = 64;
        const auto bytes = random_rows(L, blocks, 256, 3);
        std::vector<float> deq(256);
        int16_t w[256];
        int max_seen = 0;
        for (int64_t b = 0; b < blocks; ++b) {
            const unsigned char* blk = bytes.data() + size_t(b) * dtype_bytes(L.t, 256);
            dequantize_row(L.t, blk, deq.data(), 256);
            float dw;
            iq16_decode(L.t, reinterpret_cast<const std::byte*>(blk), w, dw);
            for (int i = 0; i < 256; ++i) {
                max_seen = std::max(max_seen, std::abs(int(w[i])));
                if (dw * float(w[i]) != deq[size_t(i)]) FAIL("block " << b << " element " << i << ": " << dw << " x " << w[i] << " != " << deq[size_t(i)]);
            }
        }
        CHECK(max_seen <= iq16_max_weight(L.t));
        CHECK(max_seen > iq16_max_weight(L.t) / 2);
    }
    CHECK_FALSE(has_iq16(DType::IQ4_NL));
    CHECK_FALSE(has_iq16(DType::Q4_K));
}

TEST_CASE("iq16: x's rounding keeps every super-block's integer sum inside int32", "[iquant][iq16]") {
    for (const Type& L : kIq16Types) {
        INFO(dtype_name(L.t));
        const int64_t W = iq16_max_weight(L.t);
        // flat (the worst case for the bound), Gaussian, one spike
        std::vector<float> x(3 * 256, 1.0f);
        std::mt19937 rng(5);
        std::normal_distribution<float> dist(0.0f, 1.0f);
        for (int i = 256; i < 512; ++i) x[size_t(i)] = dist(rng);
        for (int i = 512; i < 768; ++i) x[size_t(i)] = i == 600 ? -1e4f : 1e-3f;
        std::vector<int16_t> q(x.size());
        std::vector<float> dx(3);
        iq16_quantize_x(L.t, x.data(), int64_t(x.size()), q.data(), dx.data());
        for (int k = 0; k < 3; ++k) {
            int64_t sum = 0, amax = 0;
            for (int i = 0; i < 256; ++i) {
                sum += std::abs(int64_t(q[size_t(256 * k + i)]));
                amax = std::max<int64_t>(amax, std::abs(int64_t(q[size_t(256 * k + i)])));
                CHECK(std::abs(dx[size_t(k)] * float(q[size_t(256 * k + i)]) - x[size_t(256 * k + i)]) <= 0.5001f * dx[size_t(k)]);
            }
            CHECK(W * sum < (int64_t{1} << 31));
            CHECK(amax <= 32767);
            if (k == 2) CHECK(amax == 32767);  // a spike takes the full 16 bits
        }
    }
    // IQ4_XS weights at their largest (every scale 0 - 32, every value -127: w = 4064) against
    // flat x: the sum is as large as the bound allows, and exact.
    const int64_t rows = 3, n = 512;
    std::vector<unsigned char> W(dtype_bytes(DType::IQ4_XS, uint64_t(n)) * rows, 0);
    for (size_t b = 0; b < W.size() / 136; ++b) {
        const uint16_t h = fp32_to_fp16(1.0f / 1024);
        std::memcpy(W.data() + 136 * b, &h, 2);
    }
    const Matrix M{DType::IQ4_XS, reinterpret_cast<const std::byte*>(W.data()), rows, n, Layout::Linear};
    std::vector<float> x(size_t(n), 0.75f), got(rows);
    for (bool portable : {false, true}) {
        PortableScope p(portable);
        matmul_iq16(got.data(), x.data(), M, 1, quant_dot_fast_available());
        const double exact = double(n) * 4064.0 / 1024.0 * 0.75;
        for (float g : got) CHECK(std::abs(g - exact) < 1e-3 * exact);
        CHECK(got == reference(DType::IQ4_XS, W, rows, n, x, 1));
    }
}

TEST_CASE("iq16: AVX-512 VNNI, AVX2 and portable give the int64 reference's bits, whatever T, split and threads", "[iquant][iq16][fast]") {
    INFO("VNNI kernel: " << (quant_dot_fast_available() ? "yes" : "no (both runs portable)"));
    const int threads_before = num_threads();
    const int64_t rows = 70, n = 768;  // a panel and a partial one; 3 super-blocks
    const int T = 13;                   // two tiles of 6 and one token
    for (const Type& L : kIq16Types) {
        INFO(dtype_name(L.t));
        const auto bytes = random_rows(L, rows, n, 7);
        const Matrix M{L.t, reinterpret_cast<const std::byte*>(bytes.data()), rows, n, Layout::Linear};
        const auto x = random_x(n, T, 11);
        const auto want = reference(L.t, bytes, rows, n, x, T);
        for (int threads : {1, 2}) {
            set_num_threads(threads);
            // the automatic kernels, the AVX2 ones forced (where the CPU has AVX2: the AVX2 tile
            // even on a VNNI machine), the portable ones
            for (int mode : {0, 1, 2}) {
                const bool portable = mode == 2;
                Iq16Avx2Scope a(mode == 1);
                PortableScope p(portable);
                INFO("threads " << threads << ", " << (mode == 0 ? "automatic" : mode == 1 ? "AVX2 forced" : "portable") << ": " << kernel_isa());
                std::vector<float> got(size_t(rows) * T, -1.0f);
                matmul_iq16(got.data(), x.data(), M, T, quant_dot_fast_available());
                CHECK(std::memcmp(got.data(), want.data(), got.size() * 4) == 0);
                // the same tokens split 1 + 5 + 7
                std::vector<float> split(got.size(), -2.0f);
                int t0 = 0;
                for (int part : {1, 5, 7}) {
                    matmul_iq16(split.data() + size_t(t0) * rows, x.data() + size_t(t0) * n, M, part, quant_dot_fast_available());
                    t0 += part;
                }
                CHECK(std::memcmp(split.data(), want.data(), split.size() * 4) == 0);
            }
        }
        // within x's 16-bit rounding of the exact product of the dequantized weights
        std::vector<float> deq(size_t(rows * n));
        for (int64_t r = 0; r < rows; ++r) dequantize_row(L.t, bytes.data() + size_t(r) * dtype_bytes(L.t, uint64_t(n)), deq.data() + r * n, n);
        for (int t = 0; t < T; ++t)
            for (int64_t r = 0; r < rows; ++r) {
                double exact = 0, mag = 0;
                for (int64_t i = 0; i < n; ++i) {
                    exact += double(deq[size_t(r * n + i)]) * x[size_t(t * n + i)];
                    mag += std::abs(double(deq[size_t(r * n + i)]) * x[size_t(t * n + i)]);
                }
                CHECK(std::abs(want[size_t(t * rows + r)] - exact) <= 2e-4 * mag);
            }
    }
    set_num_threads(threads_before);
}

TEST_CASE("iq16: the AVX2 decoders give the portable decoder's integers and d_w", "[iquant][iq16][avx2]") {
    const bool cpu_avx2 = [] {
        Iq16Avx2Scope a(true);
        return std::string_view(kernel_isa()) == "avx2";
    }();
    if (!cpu_avx2) SUCCEED("no AVX2 on this CPU");
    else
        for (const Type& L : kIq16Types) {
            INFO(dtype_name(L.t));
            const size_t bb = dtype_bytes(L.t, 256);
            auto bytes = random_rows(L, 512, 256, 21);
            // and two blocks of all ones and all zeros (every index, sign and scale at its end)
            bytes.insert(bytes.end(), bb, 0xff);
            bytes.insert(bytes.end(), bb, 0x00);
            int checked = 0;
            for (size_t b = 0; b < bytes.size() / bb; ++b) {
                const auto* blk = reinterpret_cast<const std::byte*>(bytes.data() + b * bb);
                int16_t want[256], got[256];
                std::fill(got, got + 256, int16_t(-12345));
                float dw_want = 0.0f, dw_got = -1.0f;
                iq16_decode(L.t, blk, want, dw_want);
                if (!iq16_decode_avx2(L.t, blk, got, dw_got)) break;
                ++checked;
                if (std::memcmp(want, got, sizeof want) != 0 || std::memcmp(&dw_want, &dw_got, 4) != 0) FAIL("block " << b << " differs");
            }
            const bool has = L.t == DType::IQ2_XXS || L.t == DType::IQ3_S || L.t == DType::IQ4_XS || L.t == DType::TQ2_0;
            CHECK(checked == (has ? int(bytes.size() / bb) : 0));
        }
}

TEST_CASE("iq16: the AVX2 tile gives the portable bits for 1-17 tokens, partial panels and extreme values", "[iquant][iq16][avx2]") {
    const bool cpu_avx2 = [] {
        Iq16Avx2Scope a(true);
        return std::string_view(kernel_isa()) == "avx2";
    }();
    if (!cpu_avx2) {
        SUCCEED("no AVX2 on this CPU");
        return;
    }
    const int threads_before = num_threads();
    set_num_threads(1);
    const auto run = [](const Matrix& M, const std::vector<float>& x, int T, int mode) {
        Iq16Avx2Scope a(mode == 1);
        PortableScope p(mode == 2);
        std::vector<float> out(size_t(M.rows) * size_t(T), -3.0f);
        matmul_iq16(out.data(), x.data(), M, T, false);
        return out;
    };
    for (const Type& L : kIq16Types) {
        INFO(dtype_name(L.t));
        for (int64_t rows : {int64_t{5}, int64_t{83}}) {  // under a panel; a panel and 19 rows
            const int64_t n = 512;
            const auto bytes = random_rows(L, rows, n, uint32_t(31 + rows));
            const Matrix M{L.t, reinterpret_cast<const std::byte*>(bytes.data()), rows, n, Layout::Linear};
            const auto x = random_x(n, 17, 13);
            for (int T = 1; T <= 17; ++T) {
                INFO(rows << " rows, T " << T);
                const auto avx2 = run(M, x, T, 1), portable = run(M, x, T, 2);
                CHECK(std::memcmp(avx2.data(), portable.data(), avx2.size() * 4) == 0);
                if (T == 17) CHECK(avx2 == reference(L.t, bytes, rows, n, x, T));
            }
        }
    }
    // IQ4_XS weights at their largest (w = -32 · -127 = 4064 everywhere, d of either sign) against
    // x at full scale: flat, and alternating ±amax (each token's super-block sum at the int32 bound)
    const int64_t rows = 21, n = 512;
    std::vector<unsigned char> W(dtype_bytes(DType::IQ4_XS, uint64_t(n)) * rows, 0);
    for (size_t b = 0; b < W.size() / 136; ++b) {
        const uint16_t h = fp32_to_fp16(b % 3 == 0 ? -1.0f / 512 : 1.0f / 1024);
        std::memcpy(W.data() + 136 * b, &h, 2);
    }
    const Matrix M{DType::IQ4_XS, reinterpret_cast<const std::byte*>(W.data()), rows, n, Layout::Linear};
    std::vector<float> x(size_t(n) * 17);
    for (size_t i = 0; i < x.size(); ++i) x[i] = (i / size_t(n)) % 2 ? 3e4f : (i % 2 ? -1e-3f : 1e-3f) * float(1 + i % 7);
    for (int T = 1; T <= 17; ++T) {
        INFO("extreme, T " << T);
        const auto avx2 = run(M, x, T, 1), portable = run(M, x, T, 2);
        CHECK(std::memcmp(avx2.data(), portable.data(), avx2.size() * 4) == 0);
        CHECK(avx2 == reference(DType::IQ4_XS, W, rows, n, x, T));
    }
    set_num_threads(threads_before);
}
