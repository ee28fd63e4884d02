// The AVX-512 kernels against the portable ones (forced with force_portable_kernels), on
// random matrices whose sizes leave tails in every loop.
#include <cmath>
#include <cstring>
#include <new>
#include <random>
#include <string_view>
#include <tuple>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "journey/kernels/gemv.h"
#include "journey/kernels/half.h"
#include "journey/kernels/blocks/dequantize.h"
#include "journey/kernels/blocks/quantize.h"
#include "journey/kernels/blocks/dot.h"
#include "journey/kernels/kernels.h"
#include "quant_blocks.h"

using namespace journey;

#include "asan.h"
#if JOURNEY_TEST_ASAN
#include <sanitizer/asan_interface.h>
#define JOURNEY_TEST_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define JOURNEY_TEST_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define JOURNEY_TEST_POISON(p, n) ((void)(p), (void)(n))
#define JOURNEY_TEST_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace {

// A random matrix stored as `dtype`, and its float values.
struct Stored {
    std::vector<std::byte> bytes;
    std::vector<float> values;  // what the stored numbers are, exactly
    Matrix m;
};

Stored random_matrix(DType dtype, int64_t rows, int64_t cols, Layout layout, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 0.5f);
    Stored s;
    const size_t n = static_cast<size_t>(rows * cols);
    s.values.resize(n);
    s.bytes.resize(n * (dtype == DType::F32 ? 4 : 2));
    for (size_t i = 0; i < n; ++i) {
        const float f = dist(rng);
        if (dtype == DType::F32) {
            s.values[i] = f;
            std::memcpy(s.bytes.data() + 4 * i, &f, 4);
        } else {
            const uint16_t h = dtype == DType::F16 ? fp32_to_fp16(f) : fp32_to_bf16(f);
            s.values[i] = dtype == DType::F16 ? fp16_to_fp32(h) : bf16_to_fp32(h);
            std::memcpy(s.bytes.data() + 2 * i, &h, 2);
        }
    }
    s.m = Matrix{dtype, s.bytes.data(), rows, cols, layout};
    return s;
}

std::vector<float> random_vector(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

// Restores the automatic choice when a test ends, even on failure.
using journey::test::PortableScope;

// Forces one stream shape (gemv.h) for a test's scope, then restores the automatic choice.
struct ShapeScope {
    explicit ShapeScope(StreamShape s) { force_stream_shape(s); }
    ~ShapeScope() { force_stream_shape(std::nullopt); }
};

// Forces the AVX2 kernels (gemv.h) for a test's scope, even where AVX-512 is present.
struct GemmAvx2Scope {
    explicit GemmAvx2Scope(bool on) { force_avx2_kernels(on); }
    ~GemmAvx2Scope() { force_avx2_kernels(false); }
};

// One prompt product three ways: the fast kernels on 1 and on 2 threads, and the portable ones;
// and, where the CPU has AVX2 (and FMA, F16C), the AVX2 kernels forced, on 1 and 2 threads
// (empty elsewhere). On a CPU without AVX-512 the fast ones are the AVX2 ones.
struct GemmRuns {
    std::vector<float> fast, two, port, avx2, avx2_two;
};
GemmRuns gemm_three_ways(const Matrix& W, const std::vector<float>& x, int T, int64_t n_out) {
    GemmRuns g{std::vector<float>(static_cast<size_t>(T * n_out)), {}, {}, {}, {}};
    g.two.resize(g.fast.size());
    g.port.resize(g.fast.size());
    set_num_threads(1);
    gemm(g.fast.data(), x.data(), W, T);
    set_num_threads(2);
    gemm(g.two.data(), x.data(), W, T);
    {
        GemmAvx2Scope a(true);
        if (std::string_view(kernel_isa()) == "avx2") {
            g.avx2.resize(g.fast.size());
            g.avx2_two.resize(g.fast.size());
            gemm(g.avx2_two.data(), x.data(), W, T);
            set_num_threads(1);
            gemm(g.avx2.data(), x.data(), W, T);
        }
    }
    set_num_threads(1);
    PortableScope p(true);
    gemm(g.port.data(), x.data(), W, T);
    return g;
}

}  // namespace

TEST_CASE("gemv: AVX-512 and portable kernels give the same bits", "[kernels][fast]") {
    INFO("kernels: " << kernel_isa());
    for (StreamShape shape : {StreamShape::interleaved, StreamShape::sequential})  // each CPU's shape
    for (DType dtype : {DType::F32, DType::F16, DType::BF16})
        for (Layout layout : {Layout::Conv1D, Layout::Linear})
            // (242 inputs: three whole steps of 64, then a tail of 50 over chains 0, 1, 2, 3)
            for (auto [n_in, n_out] : {std::pair<int64_t, int64_t>{37, 53}, {768, 100}, {64, 2304}, {5, 3}, {242, 21}}) {
                const int64_t rows = layout == Layout::Conv1D ? n_in : n_out, cols = layout == Layout::Conv1D ? n_out : n_in;
                const Stored W = random_matrix(dtype, rows, cols, layout, 7);
                const std::vector<float> x = random_vector(static_cast<size_t>(n_in), 11);
                std::vector<float> fast(static_cast<size_t>(n_out)), port(fast.size()), ref(fast.size());
                {
                    ShapeScope s(shape);
                    gemv(fast.data(), x.data(), W.m);
                }
                {
                    PortableScope p(true);
                    gemv(port.data(), x.data(), W.m);
                }
                // the AVX2 kernels too where the CPU has them (on an AVX-512 machine, forced)
                std::vector<float> avx2(fast.size(), -5.0f);
                force_avx2_kernels(true);
                const bool has_avx2 = std::string_view(kernel_isa()) == "avx2";
                gemv(avx2.data(), x.data(), W.m);
                force_avx2_kernels(false);
                INFO(stream_shape_name() << " " << dtype_name(dtype) << (layout == Layout::Conv1D ? " Conv1D " : " Linear ") << n_in << " -> " << n_out);
                CHECK(std::memcmp(fast.data(), port.data(), fast.size() * 4) == 0);
                if (has_avx2) CHECK(std::memcmp(avx2.data(), port.data(), avx2.size() * 4) == 0);
                // and both are the product, to float accuracy (double reference)
                for (int64_t o = 0; o < n_out; ++o) {
                    double want = 0, mag = 0;
                    for (int64_t i = 0; i < n_in; ++i) {
                        const float w = W.values[static_cast<size_t>(layout == Layout::Conv1D ? i * n_out + o : o * n_in + i)];
                        want += double(w) * x[static_cast<size_t>(i)];
                        mag += std::fabs(double(w) * x[static_cast<size_t>(i)]);
                    }
                    CHECK(std::fabs(fast[static_cast<size_t>(o)] - want) <= 1e-6 * mag + 1e-30);
                }
            }
}

// Safetensors places a tensor at any multiple of 8 bytes, so an F32 row may start anywhere in a
// cache line; the fast kernel then reads whole lines and shifts them into place (gemv.cpp). At
// every offset, for row lengths that end at every point of a line, the bits must be the
// portable kernel's, and nothing outside the matrix may be read: it sits at the very end of its
// allocation, and under AddressSanitizer the bytes before it are poisoned.
TEST_CASE("gemv: float rows starting anywhere in a cache line give the portable bits", "[kernels][fast]") {
    // Linear [n_out, n_in] and Conv1D [n_in, n_out]; Conv1D rows of 48 or 768 outputs are whole
    // lines apart (all at one offset), of 100 or 7 not; so are F16/BF16 Linear rows of 768 or 96
    // inputs (of 100 or 130 not)
    const std::tuple<Layout, int64_t, int64_t> shapes[] = {
        {Layout::Linear, 768, 7}, {Layout::Linear, 100, 7}, {Layout::Linear, 79, 7}, {Layout::Linear, 65, 7}, {Layout::Linear, 200, 7},
        {Layout::Linear, 96, 5}, {Layout::Linear, 130, 5}, {Layout::Linear, 93, 3},
        {Layout::Conv1D, 200, 48}, {Layout::Conv1D, 37, 768}, {Layout::Conv1D, 200, 100}, {Layout::Conv1D, 9, 7},
        {Layout::Linear, 5, 3}, {Layout::Linear, 20, 3}, {Layout::Conv1D, 3, 20}, {Layout::Conv1D, 17, 16}};  // rows shorter than a step
    for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    for (const auto& [layout, n_in, n_out] : shapes)
        for (size_t offset = 0; offset < 64; offset += 2) {
            const int64_t rows = layout == Layout::Conv1D ? n_in : n_out, cols = layout == Layout::Conv1D ? n_out : n_in;
            const Stored W = random_matrix(dtype, rows, cols, layout, 13);
            const std::vector<float> x = random_vector(static_cast<size_t>(n_in), 17);
            const size_t bytes = W.bytes.size();
            auto* block = static_cast<std::byte*>(::operator new(offset + bytes, std::align_val_t(64)));
            std::memcpy(block + offset, W.bytes.data(), bytes);
            JOURNEY_TEST_POISON(block, offset);
            const Matrix m{dtype, block + offset, rows, cols, layout};
            std::vector<float> fast(static_cast<size_t>(n_out)), port(fast.size());
            for (StreamShape shape : {StreamShape::interleaved, StreamShape::sequential}) {
                {
                    ShapeScope sc(shape);
                    gemv(fast.data(), x.data(), m);
                }
                {
                    PortableScope p(true);
                    gemv(port.data(), x.data(), m);
                }
                INFO(stream_shape_name() << " " << dtype_name(dtype) << (layout == Layout::Conv1D ? " Conv1D " : " Linear ") << n_in << " -> " << n_out << ", offset " << offset);
                CHECK(std::memcmp(fast.data(), port.data(), fast.size() * 4) == 0);
            }
            JOURNEY_TEST_UNPOISON(block, offset);
            ::operator delete(block, std::align_val_t(64));
        }
}

TEST_CASE("gemv splits over the pool without changing the result", "[kernels][fast]") {
    const Stored W = random_matrix(DType::BF16, 300, 777, Layout::Conv1D, 3);
    const std::vector<float> x = random_vector(300, 5);
    std::vector<float> one(777), two(777);
    set_num_threads(1);
    gemv(one.data(), x.data(), W.m);
    set_num_threads(2);
    gemv(two.data(), x.data(), W.m);
    set_num_threads(1);
    CHECK(one == two);
}

TEST_CASE("gemm: AVX-512 and portable kernels give the same bits, on any thread count", "[kernels][fast]") {
    INFO("kernels: " << kernel_isa());
    for (DType dtype : {DType::F32, DType::F16, DType::BF16})
        for (Layout layout : {Layout::Conv1D, Layout::Linear})
            // sizes with tails: n_in past the 128-input slices and 16-lane vectors, n_out past
            // the 64-column panels, T past the 6-token tiles
            // (and for AVX2's 16-column strips and 8 x 8 transposes: 100 = 64 + 2 x 16 + 4)
            for (auto [n_in, n_out, T] : {std::tuple<int64_t, int64_t, int>{37, 53, 7}, {300, 130, 13}, {129, 64, 6}, {5, 3, 2},
                                          {77, 100, 19}, {200, 45, 4}, {8, 17, 1}}) {
                const int64_t rows = layout == Layout::Conv1D ? n_in : n_out, cols = layout == Layout::Conv1D ? n_out : n_in;
                const Stored W = random_matrix(dtype, rows, cols, layout, 17);
                const std::vector<float> x = random_vector(static_cast<size_t>(T * n_in), 19);
                const auto [fast, two, port, avx2, avx2_two] = gemm_three_ways(W.m, x, T, n_out);
                INFO(stream_shape_name() << " " << dtype_name(dtype) << (layout == Layout::Conv1D ? " Conv1D " : " Linear ") << n_in << " -> " << n_out << ", T " << T);
                CHECK(std::memcmp(fast.data(), port.data(), fast.size() * 4) == 0);
                CHECK(std::memcmp(fast.data(), two.data(), fast.size() * 4) == 0);
                if (!avx2.empty()) {
                    CHECK(std::memcmp(avx2.data(), port.data(), fast.size() * 4) == 0);
                    CHECK(std::memcmp(avx2_two.data(), port.data(), fast.size() * 4) == 0);
                }
                // a chain of n_in fmas: each rounding at most 2^-24 of a partial sum <= sum |w x|
                size_t bad = 0;
                for (int t = 0; t < T; ++t)
                    for (int64_t o = 0; o < n_out; ++o) {
                        double want = 0, mag = 0;
                        for (int64_t i = 0; i < n_in; ++i) {
                            const double p = double(W.values[static_cast<size_t>(layout == Layout::Conv1D ? i * n_out + o : o * n_in + i)]) *
                                             x[static_cast<size_t>(t * n_in + i)];
                            want += p;
                            mag += std::fabs(p);
                        }
                        bad += std::fabs(fast[static_cast<size_t>(t * n_out + o)] - want) > double(n_in) * 0x1p-24 * mag + 1e-30;
                    }
                CHECK(bad == 0);
            }
}

TEST_CASE("gemm of quantized weights: fast == portable, and the product of the dequantized rows", "[kernels][fast][quant]") {
    // n_in past the fast path's 256-input chunks (288: one whole and a 32-input tail; 768:
    // three), n_out past the 64-column panels and their groups of 16 (70, 129, 40)
    using Case = std::tuple<DType, int64_t, int64_t, int>;
    for (auto [dtype, n_in, n_out, T] : {Case{DType::Q8_0, 64, 70, 7}, {DType::Q8_0, 160, 129, 3}, {DType::Q8_0, 288, 40, 7},
                                         {DType::Q4_0, 64, 70, 7}, {DType::Q4_0, 160, 129, 3}, {DType::Q5_0, 288, 70, 7},
                                         {DType::Q4_K, 256, 70, 7}, {DType::Q4_K, 768, 129, 3}, {DType::Q4_K, 512, 144, 5}, {DType::Q5_K, 512, 70, 7},
                                         {DType::Q6_K, 256, 70, 7}, {DType::Q6_K, 768, 40, 13}, {DType::Q6_K, 512, 144, 5}, {DType::Q3_K, 256, 70, 7}}) {
        const std::vector<float> f = random_vector(static_cast<size_t>(n_in * n_out), 23);
        const size_t row_bytes = dtype_bytes(dtype, static_cast<uint64_t>(n_in));
        std::vector<std::byte> bytes(row_bytes * static_cast<size_t>(n_out));
        std::vector<float> w(f.size());  // the dequantized values
        for (int64_t r = 0; r < n_out; ++r) {
            std::byte* row = bytes.data() + static_cast<size_t>(r) * row_bytes;
            quantize_row(dtype, f.data() + r * n_in, row, n_in);
            dequantize_row(dtype, row, w.data() + r * n_in, n_in);
        }
        const Matrix W{dtype, bytes.data(), n_out, n_in, Layout::Linear};
        const std::vector<float> x = random_vector(static_cast<size_t>(T * n_in), 29);
        const auto [fast, two, port, avx2, avx2_two] = gemm_three_ways(W, x, T, n_out);
        INFO(dtype_name(dtype) << " " << n_in << " -> " << n_out << ", T " << T << " (kernels: " << kernel_isa() << ")");
        CHECK(std::memcmp(fast.data(), port.data(), fast.size() * 4) == 0);
        CHECK(std::memcmp(fast.data(), two.data(), fast.size() * 4) == 0);
        if (!avx2.empty()) {
            CHECK(std::memcmp(avx2.data(), port.data(), fast.size() * 4) == 0);
            CHECK(std::memcmp(avx2_two.data(), port.data(), fast.size() * 4) == 0);
        }
        if (can_pack_rows16(W)) {  // Q4_K and Q6_K regrouped 16 rows (blocks/dot.h): prompts read the copy, same bits
            std::vector<std::byte> packed(rows16_bytes(W));
            pack_rows16(W, packed.data());
            Matrix P = W;
            P.rows16 = packed.data();
            const auto [pfast, ptwo, pport, pavx2, pavx2_two] = gemm_three_ways(P, x, T, n_out);
            CHECK(std::memcmp(fast.data(), pfast.data(), fast.size() * 4) == 0);
            CHECK(std::memcmp(fast.data(), ptwo.data(), fast.size() * 4) == 0);
            if (!pavx2.empty()) {
                CHECK(std::memcmp(pavx2.data(), port.data(), fast.size() * 4) == 0);
                CHECK(std::memcmp(pavx2_two.data(), port.data(), fast.size() * 4) == 0);
            }
        }
        size_t bad = 0;
        for (int t = 0; t < T; ++t)
            for (int64_t o = 0; o < n_out; ++o) {
                double want = 0, mag = 0;
                for (int64_t i = 0; i < n_in; ++i) {
                    const double p = double(w[static_cast<size_t>(o * n_in + i)]) * x[static_cast<size_t>(t * n_in + i)];
                    want += p;
                    mag += std::fabs(p);
                }
                bad += std::fabs(fast[static_cast<size_t>(t * n_out + o)] - want) > double(n_in) * 0x1p-24 * mag + 1e-30;
            }
        CHECK(bad == 0);
    }
}

TEST_CASE("fast kernels: one token's attention gives the portable bits and matches a double reference", "[fast][attention]") {
    INFO("kernels: " << kernel_isa());
    // Head sizes with and without a 16-lane tail, one and several groups of keys, windows and
    // soft-capping, contexts from one position (a lone key) to beyond the pool's threshold.
    struct Case {
        int H, Hkv, D, L;
        AttentionOptions o;
    };
    const Case cases[] = {{4, 4, 64, 1, {}},           {4, 4, 64, 7, {}},
                          {8, 2, 64, 300, {}},         {2, 1, 8, 37, {}},
                          {3, 3, 72, 41, {}},          {2, 2, 80, 258, {.scale = 0.1f}},
                          {4, 2, 128, 65, {.softcap = 5.0f}}, {2, 2, 256, 33, {.window = 9}},
                          {6, 3, 96, 300, {.window = 100}}};
    for (const Case& c : cases) {
        const size_t kv = static_cast<size_t>(c.L) * size_t(c.Hkv * c.D);
        const std::vector<float> q = random_vector(size_t(c.H * c.D), 11), k = random_vector(kv, 12),
                                 v = random_vector(kv, 13);
        auto run = [&](bool portable, int threads, std::vector<float>& z, std::vector<float>& p) {
            PortableScope scope(portable);
            set_num_threads(threads);
            z.assign(size_t(c.H * c.D), -7.0f);
            p.assign(size_t(c.H) * size_t(c.L), -7.0f);
            attention(z.data(), p.data(), q.data(), k.data(), v.data(), 1, c.L - 1, c.H, c.Hkv, c.D, c.o);
            set_num_threads(1);
        };
        std::vector<float> zf, pf, z2, p2, zp, pp;
        run(false, 1, zf, pf);
        run(false, 2, z2, p2);
        run(true, 1, zp, pp);
        std::vector<float> za, pa;  // the AVX2 kernels too where the CPU has them (forced on AVX-512)
        force_avx2_kernels(true);
        const bool has_avx2 = std::string_view(kernel_isa()) == "avx2";
        run(false, 1, za, pa);
        force_avx2_kernels(false);
        INFO("H " << c.H << " Hkv " << c.Hkv << " D " << c.D << " L " << c.L << " window " << c.o.window << " softcap "
                  << c.o.softcap);
        CHECK(std::memcmp(zf.data(), zp.data(), zf.size() * 4) == 0);
        CHECK(std::memcmp(pf.data(), pp.data(), pf.size() * 4) == 0);
        CHECK(std::memcmp(zf.data(), z2.data(), zf.size() * 4) == 0);
        CHECK(std::memcmp(pf.data(), p2.data(), pf.size() * 4) == 0);
        if (has_avx2) {
            CHECK(std::memcmp(za.data(), zp.data(), za.size() * 4) == 0);
            CHECK(std::memcmp(pa.data(), pp.data(), pa.size() * 4) == 0);
        }
        // An F16 cache read as it is stored: the bits of attention() on the cache converted to
        // float, on both paths.
        std::vector<uint16_t> k16(kv), v16(kv);
        std::vector<float> kc(kv), vc(kv);
        for (size_t i = 0; i < kv; ++i) {
            k16[i] = fp32_to_fp16(k[i]);
            v16[i] = fp32_to_fp16(v[i]);
            kc[i] = fp16_to_fp32(k16[i]);
            vc[i] = fp16_to_fp32(v16[i]);
        }
        for (bool portable : {false, true}) {
            PortableScope scope(portable);
            std::vector<float> zc(size_t(c.H * c.D)), pc(size_t(c.H) * size_t(c.L)), zh(zc.size(), -7.0f), ph(pc.size(), -7.0f);
            attention(zc.data(), pc.data(), q.data(), kc.data(), vc.data(), 1, c.L - 1, c.H, c.Hkv, c.D, c.o);
            attention_f16_cache(zh.data(), ph.data(), q.data(), k16.data(), v16.data(), c.L - 1, c.H, c.Hkv, c.D, c.o);
            INFO((portable ? "portable" : "fast") << " F16 cache");
            CHECK(std::memcmp(zc.data(), zh.data(), zc.size() * 4) == 0);
            CHECK(std::memcmp(pc.data(), ph.data(), pc.size() * 4) == 0);
        }
        // softmax(capped q·k · scale over the window) · v, in double
        const double scale = c.o.scale > 0 ? c.o.scale : 1.0 / std::sqrt(double(c.D));
        const int first = c.o.window > 0 ? std::max(0, c.L - c.o.window) : 0;
        double worst = 0;
        for (int h = 0; h < c.H; ++h) {
            const int g = h / (c.H / c.Hkv);
            std::vector<double> w(size_t(c.L), 0.0);
            double max = -1e300, sum = 0;
            for (int j = first; j < c.L; ++j) {
                double s = 0;
                for (int d = 0; d < c.D; ++d) s += double(q[size_t(h * c.D + d)]) * k[(size_t(j) * c.Hkv + g) * c.D + d];
                s *= scale;
                if (c.o.softcap > 0) s = c.o.softcap * std::tanh(s / c.o.softcap);
                max = std::max(max, w[size_t(j)] = s);
            }
            for (int j = first; j < c.L; ++j) sum += (w[size_t(j)] = std::exp(w[size_t(j)] - max));
            for (int j = 0; j < c.L; ++j) {
                const double expect = j < first ? 0.0 : w[size_t(j)] / sum;
                worst = std::max(worst, std::abs(pf[size_t(h) * c.L + j] - expect));
            }
            for (int d = 0; d < c.D; ++d) {
                double z = 0;
                for (int j = first; j < c.L; ++j) z += w[size_t(j)] / sum * v[(size_t(j) * c.Hkv + g) * c.D + d];
                worst = std::max(worst, std::abs(zf[size_t(h * c.D + d)] - z));
            }
        }
        CHECK(worst < 2e-5);
    }
}
