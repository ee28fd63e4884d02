// The importance-matrix (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S), ternary (TQ1_0,
// TQ2_0) and MXFP4 block types: dequantization bit-exact against gguf-py / ggml (rows of
// llama-quantize's files, and pseudo-random blocks that reach every grid entry: the lattice
// tables of blocks/iq_grids.cpp checked against gguf-py's own encoding of them), and the one-token
// dots (x as Q8_K; MXFP4: Q8_0) portable, AVX2 and AVX-512 VNNI bit-identical, all equal to the
// product of the dequantized row with the quantized x up to float rounding. Data:
// tests/data/README.md, "quant" (iquant_rows.json, scripts/make_iquant_data.py).
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "journey/formats/ggml_types.h"
#include "journey/kernels/blocks/dequantize.h"
#include "journey/kernels/blocks/dot.h"
#include "journey/kernels/gemv.h"
#include "journey/kernels/half.h"
#include "journey/kernels/kernels.h"
#include "journey/kernels/to_float.h"
#include "quant_blocks.h"

using namespace journey;

namespace {

const nlohmann::json& data() {
    static const auto j = nlohmann::json::parse(std::ifstream(std::string(JOURNEY_TEST_DATA) + "/quant/iquant_rows.json"));
    return j;
}

using journey::test::dtype_named;
using journey::test::from_hex;

// Where each type keeps its f16 scale (none: IQ1_M spreads it over its scales, MXFP4 has an
// E8M0 byte at 0).
struct Fields {
    DType t;
    int d_at;
};
const std::vector<Fields> kTypes = {
    {DType::IQ2_XXS, 0}, {DType::IQ2_XS, 0}, {DType::IQ2_S, 0},  {DType::IQ3_XXS, 0}, {DType::IQ3_S, 0},
    {DType::IQ1_S, 0},   {DType::IQ1_M, -1}, {DType::TQ1_0, 52}, {DType::TQ2_0, 64},  {DType::MXFP4, -1},
};

// The sweep's blocks (scripts/make_iquant_data.py states the rule).
std::vector<unsigned char> sweep_blocks(DType t, int d_at, int64_t blocks, uint64_t seed) {
    const size_t nbytes = dtype_bytes(t, dtype_block(t));
    std::vector<unsigned char> raw(nbytes * size_t(blocks));
    uint64_t x = seed;
    for (auto& b : raw) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        b = static_cast<unsigned char>(x >> 56);
    }
    for (int64_t b = 0; b < blocks; ++b) {
        unsigned char* o = raw.data() + size_t(b) * nbytes;
        if (d_at >= 0) {
            uint16_t v;
            std::memcpy(&v, o + d_at, 2);
            v = uint16_t(0x3000 | (v & 0x3ff));
            std::memcpy(o + d_at, &v, 2);
        }
        if (t == DType::IQ1_M) o[55] &= 0xbf;
    }
    return raw;
}

uint64_t fnv1a64(const void* p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 0x100000001b3ull;
    return h;
}

using journey::test::PortableScope;

// Random rows for the dots: the sweep's rule with small scales (f16 d of either sign up to
// 2^-6; MXFP4 e from 2^-12 to 2^-4; IQ1_M's spread d made small the same way).
struct Rows {
    Matrix m;
    std::vector<unsigned char> bytes;
    std::vector<float> values;
};
Rows random_rows(const Fields& L, int64_t rows, int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_real_distribution<float> scale(-1.0f / 64, 1.0f / 64);
    Rows r;
    const size_t nbytes = dtype_bytes(L.t, dtype_block(L.t));
    r.bytes.resize(dtype_bytes(L.t, uint64_t(n)) * size_t(rows));
    for (auto& b : r.bytes) b = static_cast<unsigned char>(byte(rng));
    for (size_t b = 0; b < r.bytes.size() / nbytes; ++b) {
        unsigned char* o = r.bytes.data() + b * nbytes;
        if (L.d_at >= 0) {
            const uint16_t h = fp32_to_fp16(scale(rng));
            std::memcpy(o + L.d_at, &h, 2);
        } else if (L.t == DType::MXFP4) {
            o[0] = static_cast<unsigned char>(116 + byte(rng) % 9);
        } else {  // IQ1_M: the top nibbles of its 4 scale words are the f16 d
            const uint16_t h = fp32_to_fp16(scale(rng));
            for (int k = 0; k < 4; ++k) o[49 + 2 * k] = static_cast<unsigned char>((o[49 + 2 * k] & 0x0f) | (((h >> (4 * k)) & 0xf) << 4));
        }
    }
    r.values.resize(size_t(rows * n));
    const size_t row_bytes = dtype_bytes(L.t, uint64_t(n));
    for (int64_t i = 0; i < rows; ++i) dequantize_row(L.t, r.bytes.data() + size_t(i) * row_bytes, r.values.data() + i * n, n);
    r.m = Matrix{L.t, reinterpret_cast<const std::byte*>(r.bytes.data()), rows, n, Layout::Linear};
    return r;
}

std::vector<float> random_activations(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 2.0f);
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = dist(rng);
    if (n >= 768)
        for (int j = 256; j < 512; ++j) x[size_t(j)] = 0.0f;  // a whole block of zeros: scale 0
    return x;
}

const std::vector<std::pair<int64_t, int64_t>> kShapes = {{1, 256}, {5, 512}, {33, 768}, {3, 1792}};

}  // namespace

TEST_CASE("iquant: the type table reads every importance-matrix, ternary and FP4 type with ggml's block sizes", "[iquant]") {
    // ggml-common.h's static_asserts: bytes per block
    const std::vector<std::tuple<uint32_t, std::string, uint32_t, uint32_t>> want = {
        {16, "IQ2_XXS", 256, 66}, {17, "IQ2_XS", 256, 74}, {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50},
        {21, "IQ3_S", 256, 110},  {22, "IQ2_S", 256, 82},  {29, "IQ1_M", 256, 56},   {34, "TQ1_0", 256, 54},
        {35, "TQ2_0", 256, 66},   {39, "MXFP4", 32, 17}};
    for (const auto& [id, name, block, bytes] : want) {
        INFO(name);
        const GgmlType* g = ggml_type(id);
        REQUIRE(g != nullptr);
        CHECK(g->name == name);
        REQUIRE(g->dtype.has_value());
        CHECK(dtype_block(*g->dtype) == block);
        CHECK(dtype_bytes(*g->dtype, block) == bytes);
        CHECK(dtype_bytes(*g->dtype, 3 * uint64_t(block)) == 3 * bytes);
        CHECK(dtype_bytes(*g->dtype, block + 1) == 0);  // not whole blocks
        CHECK(ggml_type_of(*g->dtype).id == id);
    }
    CHECK_FALSE(ggml_type(40)->dtype.has_value());  // NVFP4 is still refused by name
}

TEST_CASE("iquant: llama-quantize's rows dequantize bit-exactly as gguf-py and ggml do", "[iquant][dequant]") {
    std::set<std::string> types;
    for (const auto& row : data()["rows"]) {
        const std::string type = row["type"];
        INFO(row["file"].get<std::string>() << " " << row["tensor"].get<std::string>() << " " << type);
        const DType t = dtype_named(type);
        const std::vector<float> want = row["row0"].get<std::vector<float>>();
        const auto bytes = from_hex(row["blocks_hex"]);
        const auto n = int64_t(want.size());
        REQUIRE(bytes.size() == dtype_bytes(t, uint64_t(n)));
        std::vector<unsigned char> shifted(bytes.size() + 1);  // unaligned, as in a mapping
        std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
        std::vector<float> got(static_cast<size_t>(n));
        dequantize_row(t, shifted.data() + 1, got.data(), n);
        int mismatches = 0;
        for (int64_t i = 0; i < n; ++i)
            if (std::bit_cast<uint32_t>(got[size_t(i)]) != std::bit_cast<uint32_t>(want[size_t(i)]))
                if (++mismatches <= 3) UNSCOPED_INFO("element " << i << ": " << got[size_t(i)] << " != " << want[size_t(i)]);
        CHECK(mismatches == 0);
        std::vector<float> via(static_cast<size_t>(n));
        to_float(via.data(), t, reinterpret_cast<const std::byte*>(bytes.data()), n);
        CHECK(std::memcmp(via.data(), got.data(), via.size() * 4) == 0);
        types.insert(type);
    }
    CHECK(types == std::set<std::string>{"IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "TQ1_0", "TQ2_0", "MXFP4"});
}

TEST_CASE("iquant: every grid entry and sign pattern dequantizes as gguf-py's own tables give it", "[iquant][dequant]") {
    for (const auto& s : data()["sweeps"]) {
        const std::string type = s["type"];
        INFO(type << " (grid coverage of the sweep, per gguf-py: " << s["grid_coverage"] << ")");
        const DType t = dtype_named(type);
        int d_at = -1;
        for (const Fields& f : kTypes)
            if (f.t == t) d_at = f.d_at;
        const int64_t blocks = s["blocks"];
        const auto raw = sweep_blocks(t, d_at, blocks, s["seed"].get<uint64_t>());
        const int64_t n = blocks * int64_t(dtype_block(t));
        std::vector<float> got(static_cast<size_t>(n));
        dequantize_row(t, raw.data(), got.data(), n);
        char hex[17];
        std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a64(got.data(), got.size() * 4)));
        CHECK(std::string(hex) == s["fnv1a64"].get<std::string>());
    }
}

TEST_CASE("iquant: dots, AVX-512 VNNI and portable give the same bits", "[iquant][quant_dot][fast]") {
    INFO("VNNI kernel: " << (quant_dot_fast_available() ? "yes" : "no (both runs portable)"));
    for (const Fields& L : kTypes)
    for (auto [rows, n] : kShapes) {
        INFO(dtype_name(L.t) << ": " << rows << " rows of " << n);
        const Rows W = random_rows(L, rows, n, 7);
        QuantizedActivations xq;
        quantize_activations(random_activations(n, 11).data(), n, xq, activation_block(L.t));
        std::vector<float> fast(size_t(rows), -1.0f), port(size_t(rows), -2.0f);
        dot_rows(fast.data(), W.m, xq, 0, rows);
        {
            PortableScope p(true);
            dot_rows(port.data(), W.m, xq, 0, rows);
        }
        CHECK(std::memcmp(fast.data(), port.data(), fast.size() * 4) == 0);
    }
}

TEST_CASE("iquant: dots equal the dequantized row times x as llama.cpp quantizes it (Q8_K; MXFP4 Q8_0)", "[iquant][quant_dot]") {
    for (const Fields& L : kTypes)
        CHECK(activation_block(L.t) == (L.t == DType::MXFP4 ? 32 : 256));
    for (bool portable : {false, true})
    for (const Fields& L : kTypes) {
        PortableScope p(portable);
        for (auto [rows, n] : kShapes) {
            INFO(dtype_name(L.t) << ": " << rows << " rows of " << n << ", portable forced: " << portable);
            const Rows W = random_rows(L, rows, n, 3);
            const std::vector<float> x = random_activations(n, 5);
            QuantizedActivations xq;
            quantize_activations(x.data(), n, xq, activation_block(L.t));
            std::vector<float> got(static_cast<size_t>(rows));
            dot_rows(got.data(), W.m, xq, 0, rows);
            for (int64_t r = 0; r < rows; ++r) {
                double exact = 0, mag = 0;
                for (int64_t i = 0; i < n; ++i) {
                    const double xi = double(xq.d[size_t(i / xq.block)]) * xq.q[size_t(i)];
                    exact += double(W.values[size_t(r * n + i)]) * xi;
                    mag += std::fabs(W.values[size_t(r * n + i)] * xi);
                }
                // Integer sums are exact; per super-block float(isum), D·d_x, their product and
                // the sum each round once (MXFP4: the lanes of blocks/dot.h): relative 2^-24 each.
                const double tol = (2.0 * double(n) / 64 + 6) * 0x1p-24 * mag;
                CHECK(std::fabs(got[size_t(r)] - exact) <= tol);
            }
        }
    }
}

TEST_CASE("iquant: one-token products split over the pool without changing the result", "[iquant][quant_dot]") {
    for (const Fields& L : kTypes) {
        INFO(dtype_name(L.t));
        const int64_t rows = 301, n = 512;
        const Rows W = random_rows(L, rows, n, 13);
        const std::vector<float> x = random_activations(n, 17);
        std::vector<float> one(static_cast<size_t>(rows)), two(static_cast<size_t>(rows));
        set_num_threads(1);
        matmul(one.data(), x.data(), W.m, 1);
        set_num_threads(2);
        matmul(two.data(), x.data(), W.m, 1);
        set_num_threads(1);
        CHECK(std::memcmp(one.data(), two.data(), one.size() * 4) == 0);
    }
}

// Several tokens against one weight read (dot_rows_tokens: prompts and --parallel; the lattice
// and ternary types decode each super-block once for up to 16 tokens): every token's row has the bits of
// dot_rows on that token alone, on the fast and the portable path, which agree with each other.
TEST_CASE("iquant: several tokens at once give each token the bits of the token alone", "[iquant][quant_dot][fast]") {
    const int64_t rows = 7, n = 768;
    for (const Fields& L : kTypes) {
        const Rows W = random_rows(L, rows, n, 19);
        for (int T : {1, 2, 3, 5, 8, 16, 17}) {  // 17: one pass of 16 tokens and one of 1
            std::vector<QuantizedActivations> xs(static_cast<size_t>(T));
            for (int t = 0; t < T; ++t) quantize_activations(random_activations(n, 23 + uint32_t(t)).data(), n, xs[size_t(t)], activation_block(L.t));
            std::vector<float> paths[2];
            for (bool portable : {false, true}) {
                INFO(dtype_name(L.t) << ", " << T << " tokens, portable forced: " << portable);
                PortableScope p(portable);
                std::vector<float> many(size_t(T * rows), -1.0f), alone(size_t(rows), -2.0f);
                dot_rows_tokens(many.data(), rows, W.m, xs.data(), T, 1, rows);  // rows 1 .. 6
                for (int t = 0; t < T; ++t) {
                    dot_rows(alone.data(), W.m, xs[size_t(t)], 1, rows);
                    CHECK(std::memcmp(alone.data() + 1, many.data() + t * rows + 1, size_t(rows - 1) * 4) == 0);
                }
                paths[portable] = many;
            }
            INFO(dtype_name(L.t) << ", " << T << " tokens: fast against portable");
            CHECK(std::memcmp(paths[0].data(), paths[1].data(), paths[0].size() * 4) == 0);
        }
    }
}

// The dots against the scalar reference (vec_dot: each block dequantized, times float x): they
// differ by x's rounding to 8 bits (Q8_K: |x - d·q| <= |d|/2 per element) and float rounding.
TEST_CASE("iquant: dots within x's 8-bit rounding of the scalar reference vec_dot", "[iquant][quant_dot]") {
    for (bool portable : {false, true})
    for (const Fields& L : kTypes) {
        if (L.t == DType::MXFP4) continue;  // x per 32 (Q8_0): test_dot_k_unpacked.cpp's kind
        PortableScope p(portable);
        for (auto [rows, n] : kShapes) {
            INFO(dtype_name(L.t) << ": " << rows << " rows of " << n << ", portable forced: " << portable);
            const Rows W = random_rows(L, rows, n, 29);
            const std::vector<float> x = random_activations(n, 31);
            QuantizedActivations xq;
            quantize_activations(x.data(), n, xq, 256);
            std::vector<float> got(static_cast<size_t>(rows));
            dot_rows(got.data(), W.m, xq, 0, rows);
            const size_t row_bytes = dtype_bytes(L.t, uint64_t(n));
            for (int64_t r = 0; r < rows; ++r) {
                const float ref = vec_dot(L.t, W.bytes.data() + size_t(r) * row_bytes, x.data(), n);
                double rounding = 0, mag = 0;
                for (int64_t i = 0; i < n; ++i) {
                    const double w = std::fabs(double(W.values[size_t(r * n + i)]));
                    rounding += w * std::fabs(double(xq.d[size_t(i / 256)])) * 0.501;
                    mag += w * (std::fabs(double(x[size_t(i)])) + std::fabs(double(xq.d[size_t(i / 256)])));
                }
                CHECK(std::fabs(double(got[size_t(r)]) - double(ref)) <= rounding + (double(n) + 2.0 * double(n) / 64 + 6) * 0x1p-24 * mag);
            }
        }
    }
}

// Sequences decoded together (matmul_tokens: --parallel; the lattice and ternary types decode each
// super-block once for up to 16 tokens): each token's row has the bits of the token multiplied
// alone, on 1 and 2 threads.
TEST_CASE("iquant: tokens decoded together give each token the bits of its one-token product", "[iquant][quant_dot]") {
    const int64_t rows = 67, n = 512, T = 6;
    for (const Fields& L : kTypes) {
        const Rows W = random_rows(L, rows, n, 37);
        std::vector<float> x;
        for (int64_t k = 0; k < T; ++k) {
            const auto xt = random_activations(n, 41 + uint32_t(k));
            x.insert(x.end(), xt.begin(), xt.end());
        }
        for (int threads : {1, 2}) {
            INFO(dtype_name(L.t) << ", threads " << threads);
            set_num_threads(threads);
            std::vector<float> together(static_cast<size_t>(T * rows)), alone(static_cast<size_t>(rows));
            matmul_tokens(together.data(), x.data(), W.m, int(T));
            for (int64_t k = 0; k < T; ++k) {
                matmul(alone.data(), x.data() + k * n, W.m, 1);
                CHECK(std::memcmp(alone.data(), together.data() + k * rows, size_t(rows) * 4) == 0);
            }
        }
        set_num_threads(1);
    }
}

// ---- the AVX2 kernels (CPUs without AVX-512 VNNI; forced on an AVX-512 host too) -------------

namespace {

struct IqAvx2Scope {
    IqAvx2Scope() { force_avx2_kernels(true); }
    ~IqAvx2Scope() { force_avx2_kernels(false); }
};

// Every token of xs against W's rows r0 .. r1 on the AVX2 path, one token at a time (dot_rows)
// and all together (dot_rows_tokens: each super-block decoded once for 8, 4, 2 or 1 tokens),
// against the portable one-token dots: the same bits.
void check_avx2_bits(const Matrix& W, const std::vector<QuantizedActivations>& xs, int64_t r0, int64_t r1) {
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

std::vector<QuantizedActivations> quantized_tokens(int T, int64_t n, uint32_t seed) {
    std::vector<QuantizedActivations> xs(static_cast<size_t>(T));
    for (int t = 0; t < T; ++t) quantize_activations(random_activations(n, seed + uint32_t(t)).data(), n, xs[size_t(t)], 256);
    return xs;
}

bool avx2_here() {
    if (quant_dot_avx2_available()) return true;
    WARN("no AVX2 + FMA + F16C here: nothing to compare");
    return false;
}

}  // namespace

TEST_CASE("iquant: dots on AVX2, one token and several, give the portable bits (random rows)", "[iquant][quant_dot][fast][avx2]") {
    IqAvx2Scope avx2;
    if (!avx2_here()) return;
    for (const Fields& L : kTypes) {
        if (L.t == DType::MXFP4) continue;  // x per 32: test_dot_mxfp4.cpp
        for (auto [rows, n] : kShapes) {
            const Rows W = random_rows(L, rows, n, 43);
            for (int T : {1, 2, 3, 4, 7, 8, 9, 15}) {  // groups of 8, 4, 2 and 1 tokens
                INFO(dtype_name(L.t) << ": " << rows << " rows of " << n << ", " << T << " tokens");
                const auto xs = quantized_tokens(T, n, 47);
                check_avx2_bits(W.m, xs, 0, rows);
                if (rows > 2) check_avx2_bits(W.m, xs, 1, rows - 1);
            }
        }
        // more rows than one group of about 32 KiB (dot_rows_iq_avx2's passes), the last partial
        const int64_t rows = 4 * 32768 / int64_t(dtype_bytes(L.t, 512)) + 3, n = 512;
        INFO(dtype_name(L.t) << ": " << rows << " rows of " << n);
        const Rows W = random_rows(L, rows, n, 53);
        check_avx2_bits(W.m, quantized_tokens(11, n, 59), 2, rows);
    }
}

// Every grid entry and sign pattern (the sweep's blocks, as the dequantization test reads them),
// and the rows of llama-quantize's files.
TEST_CASE("iquant: dots on AVX2 give the portable bits on every grid entry and on llama-quantize's rows", "[iquant][quant_dot][fast][avx2]") {
    IqAvx2Scope avx2;
    if (!avx2_here()) return;
    for (const auto& s : data()["sweeps"]) {
        const std::string type = s["type"];
        const DType t = dtype_named(type);
        if (t == DType::MXFP4) continue;
        int d_at = -1;
        for (const Fields& f : kTypes)
            if (f.t == t) d_at = f.d_at;
        const int64_t blocks = s["blocks"].get<int64_t>() / 4 * 4, n = 1024;  // rows of 4 super-blocks
        INFO(type << ": " << blocks << " sweep blocks");
        REQUIRE(blocks >= 4);
        const auto raw = sweep_blocks(t, d_at, blocks, s["seed"].get<uint64_t>());
        const Matrix W{t, reinterpret_cast<const std::byte*>(raw.data()), blocks / 4, n, Layout::Linear};
        check_avx2_bits(W, quantized_tokens(5, n, 61), 0, W.rows);
    }
    std::set<std::string> types;
    for (const auto& row : data()["rows"]) {
        const std::string type = row["type"];
        const DType t = dtype_named(type);
        if (t == DType::MXFP4) continue;
        INFO(row["file"].get<std::string>() << " " << row["tensor"].get<std::string>() << " " << type);
        const auto bytes = from_hex(row["blocks_hex"]);
        const auto n = int64_t(row["row0"].size());
        REQUIRE(bytes.size() == dtype_bytes(t, uint64_t(n)));
        const Matrix W{t, reinterpret_cast<const std::byte*>(bytes.data()), 1, n, Layout::Linear};
        check_avx2_bits(W, quantized_tokens(3, n, 67), 0, 1);
        types.insert(type);
    }
    CHECK(types.size() == 9);
}

// The integer sums at their extremes: blocks of one byte repeated (0xff: the largest grid index,
// scale and ternary code 3 where it can be stored; 0x80, 0x7f, 0x55), against x's quants all
// ±127 with one sign or alternating in pairs, so that every vpmaddubsw pair is as large as it
// gets with one sign: no int16 saturation, no int32 overflow.
TEST_CASE("iquant: dots on AVX2 at the extreme quants and scales give the portable bits", "[iquant][quant_dot][fast][avx2]") {
    IqAvx2Scope avx2;
    if (!avx2_here()) return;
    const int64_t rows = 3, n = 512;
    for (const Fields& L : kTypes) {
        if (L.t == DType::MXFP4) continue;
        for (unsigned char fill : {0xffu, 0x80u, 0x7fu, 0x55u, 0x00u})
        for (int pattern = 0; pattern < 3; ++pattern) {
            INFO(dtype_name(L.t) << ": bytes " << int(fill) << ", x pattern " << pattern);
            const size_t block_bytes = dtype_bytes(L.t, 256);
            std::vector<unsigned char> bytes(dtype_bytes(L.t, uint64_t(n)) * rows, fill);
            for (size_t b = 0; b < bytes.size() / block_bytes; ++b)
                if (L.d_at >= 0) {
                    const uint16_t h = fp32_to_fp16(b % 2 ? 1.0f / 64 : -1.0f / 192);
                    std::memcpy(bytes.data() + b * block_bytes + L.d_at, &h, 2);
                }
            const Matrix W{L.t, reinterpret_cast<const std::byte*>(bytes.data()), rows, n, Layout::Linear};
            std::vector<float> x(static_cast<size_t>(n));
            for (int64_t i = 0; i < n; ++i) x[size_t(i)] = pattern == 0 ? 1.0f : pattern == 1 ? -1.0f : (i / 2 % 2 ? 1.0f : -1.0f);
            std::vector<QuantizedActivations> xs(2);
            quantize_activations(x.data(), n, xs[0], 256);
            for (int64_t i = 0; i < n; ++i) REQUIRE(std::abs(int(xs[0].q[size_t(i)])) == 127);
            for (float& v : x) v = -v;
            quantize_activations(x.data(), n, xs[1], 256);
            check_avx2_bits(W, xs, 0, rows);
        }
    }
}

// IQ2_XXS's and IQ3_S's own AVX2 kernels take their fields apart in vectors by position: IQ2_XXS
// the 7-bit sign index of group l of sub-block ib (its parity by a nibble table) and the scale
// of ib, IQ3_S the 9-bit grid index (its high bit from qh) of entry j of ib and the scale nibble
// of ib. Here every value of each field sits at every position somewhere (super-block k puts
// value k + position there), the other bytes random, against the portable dots on 1 .. 17 tokens
// (the decoded super-block shared by 8, 4, 2 and 1 of them) and on an odd number of rows.
TEST_CASE("iquant: IQ2_XXS and IQ3_S on AVX2 give the portable bits with every field value at every position", "[iquant][quant_dot][fast][avx2]") {
    IqAvx2Scope avx2;
    if (!avx2_here()) return;
    std::mt19937 rng(71);
    for (DType t : {DType::IQ2_XXS, DType::IQ3_S}) {
        const bool iq2 = t == DType::IQ2_XXS;
        const int64_t blocks = iq2 ? 128 : 512, n = 768;  // every sign index / every grid index, rows of 3 super-blocks
        const int64_t rows = blocks / 3 + 1;  // odd (43, 171); the last super-blocks repeat the first
        const size_t bb = dtype_bytes(t, 256);
        std::vector<unsigned char> bytes(bb * size_t(rows * 3));
        for (auto& v : bytes) v = static_cast<unsigned char>(rng());
        for (size_t k = 0; k < size_t(rows * 3); ++k) {
            unsigned char* b = bytes.data() + k * bb;
            const uint16_t h = fp32_to_fp16(k % 2 ? 1.0f / 128 : -1.0f / 320);
            std::memcpy(b, &h, 2);
            for (uint32_t ib = 0; ib < 8; ++ib) {
                const uint32_t u = uint32_t(k + ib) % 16;  // the scale field
                if (iq2) {
                    uint32_t aux = u << 28;
                    for (uint32_t l = 0; l < 4; ++l) aux |= (uint32_t(k + 4 * ib + l) % 128) << (7 * l);
                    std::memcpy(b + 2 + 8 * ib + 4, &aux, 4);
                } else {
                    unsigned char qh = 0;
                    for (uint32_t j = 0; j < 8; ++j) {
                        const uint32_t index = uint32_t(k + 8 * ib + j) % 512;
                        b[2 + 8 * ib + j] = static_cast<unsigned char>(index & 255);
                        qh = static_cast<unsigned char>(qh | ((index >> 8) << j));
                    }
                    b[66 + ib] = qh;
                    b[106 + ib / 2] = static_cast<unsigned char>((b[106 + ib / 2] & (ib % 2 ? 0x0f : 0xf0)) | (u << (4 * (ib % 2))));
                }
            }
        }
        const Matrix W{t, reinterpret_cast<const std::byte*>(bytes.data()), rows, n, Layout::Linear};
        for (int T = 1; T <= 17; ++T) {
            INFO(dtype_name(t) << ": " << rows << " rows of " << n << ", " << T << " tokens");
            check_avx2_bits(W, quantized_tokens(T, n, 73 + uint32_t(T)), 0, rows);
            check_avx2_bits(W, quantized_tokens(T, n, 97 + uint32_t(T)), 1, rows - 1);
        }
    }
}
