// Number formats: exact half/bfloat16 conversions and bit-exact block dequantization on blocks
// built by hand from the GGUF specification.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "journey/kernels/half.h"
#include "journey/kernels/blocks/dequantize.h"
#include "journey/kernels/blocks/quantize.h"

using namespace journey;

TEST_CASE("fp16: widening is exact, including subnormals, inf and NaN", "[quant]") {
    CHECK(fp16_to_fp32(0x3c00) == 1.0f);
    CHECK(fp16_to_fp32(0xc000) == -2.0f);
    CHECK(fp16_to_fp32(0x7bff) == 65504.0f);
    CHECK(fp16_to_fp32(0x0400) == std::ldexp(1.0f, -14));     // smallest normal
    CHECK(fp16_to_fp32(0x0001) == std::ldexp(1.0f, -24));     // smallest subnormal
    CHECK(fp16_to_fp32(0x03ff) == std::ldexp(1023.0f, -24));  // largest subnormal
    CHECK(std::signbit(fp16_to_fp32(0x8000)));
    CHECK(fp16_to_fp32(0x7c00) == std::numeric_limits<float>::infinity());
    CHECK(std::isnan(fp16_to_fp32(0x7e00)));
    CHECK(fp16_to_fp32(0x3555) == 0.333251953125f);
}

TEST_CASE("fp16: narrowing rounds to nearest even", "[quant]") {
    CHECK(fp32_to_fp16(1.0f) == 0x3c00);
    CHECK(fp32_to_fp16(-2.0f) == 0xc000);
    CHECK(fp32_to_fp16(65504.0f) == 0x7bff);
    CHECK(fp32_to_fp16(65519.0f) == 0x7bff);
    CHECK(fp32_to_fp16(65520.0f) == 0x7c00);  // halfway to 65536: ties to even = inf
    CHECK(fp32_to_fp16(1e10f) == 0x7c00);
    CHECK(fp32_to_fp16(-std::numeric_limits<float>::infinity()) == 0xfc00);
    CHECK((fp32_to_fp16(std::numeric_limits<float>::quiet_NaN()) & 0x7c00) == 0x7c00);
    CHECK((fp32_to_fp16(std::numeric_limits<float>::quiet_NaN()) & 0x03ff) != 0);
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0); 1 + 3 * 2^-11 rounds up.
    CHECK(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);
    CHECK(fp32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);
    CHECK(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)) == 0x3c01);
    // subnormals
    CHECK(fp32_to_fp16(std::ldexp(1.0f, -24)) == 0x0001);
    CHECK(fp32_to_fp16(std::ldexp(1.0f, -25)) == 0x0000);          // tie to even: 0
    CHECK(fp32_to_fp16(std::ldexp(1.5f, -25)) == 0x0001);
    CHECK(fp32_to_fp16(std::ldexp(3.0f, -25)) == 0x0002);          // 1.5 ulp: tie to even 2
    CHECK(fp32_to_fp16(std::ldexp(1023.5f, -24)) == 0x0400);       // rounds up into the normals
    CHECK(fp32_to_fp16(-std::ldexp(1.0f, -30)) == 0x8000);
    // every half survives a round trip
    for (uint32_t h = 0; h < 0x10000; ++h) {
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue;  // NaNs
        if (fp32_to_fp16(fp16_to_fp32(uint16_t(h))) != h) FAIL("half " << h << " does not round-trip");
    }
}

TEST_CASE("bf16: conversions", "[quant]") {
    CHECK(bf16_to_fp32(0x3f80) == 1.0f);
    CHECK(bf16_to_fp32(0xc040) == -3.0f);
    CHECK(fp32_to_bf16(1.0f) == 0x3f80);
    CHECK(fp32_to_bf16(std::bit_cast<float>(0x3f808000u)) == 0x3f80);  // tie, even stays
    CHECK(fp32_to_bf16(std::bit_cast<float>(0x3f818000u)) == 0x3f82);  // tie, odd rounds up
    CHECK(fp32_to_bf16(std::bit_cast<float>(0x3f808001u)) == 0x3f81);
    CHECK(fp32_to_bf16(std::bit_cast<float>(0x00010000u)) == 0x0001);  // subnormal kept
    CHECK(std::isnan(bf16_to_fp32(fp32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
    CHECK(std::isnan(bf16_to_fp32(fp32_to_bf16(std::bit_cast<float>(0x7f800001u)))));  // NaN not inf
    CHECK(fp32_to_bf16(std::numeric_limits<float>::infinity()) == 0x7f80);
}

TEST_CASE("Q8_0: x = d * q, bit-exact on a hand-built block", "[quant]") {
    // One block: f16 d = 0.5 (0x3800), then q = -16 .. 15 as int8.
    unsigned char block[34];
    block[0] = 0x00;
    block[1] = 0x38;
    for (int i = 0; i < 32; ++i) block[2 + i] = static_cast<unsigned char>(int8_t(i - 16));
    float out[32];
    dequantize_row(DType::Q8_0, block, out, 32);
    for (int i = 0; i < 32; ++i) CHECK(out[i] == 0.5f * float(i - 16));

    std::vector<float> x(32);
    float expect = 0.0f;
    for (int i = 0; i < 32; ++i) {
        x[size_t(i)] = float(i % 3);
        expect += out[i] * x[size_t(i)];
    }
    CHECK(vec_dot(DType::Q8_0, block, x.data(), 32) == expect);  // small integers: exact
    CHECK_THROWS(dequantize_row(DType::Q8_0, block, out, 31));
}

TEST_CASE("Q4_0: low nibbles are elements 0..15, high nibbles 16..31, x = d * (q - 8)", "[quant]") {
    unsigned char block[18];
    block[0] = 0x00;  // d = -0.25 (0xb400)
    block[1] = 0xb4;
    for (int j = 0; j < 16; ++j) block[2 + j] = static_cast<unsigned char>((j & 0xf) | ((15 - j) << 4));
    float out[32];
    dequantize_row(DType::Q4_0, block, out, 32);
    for (int j = 0; j < 16; ++j) {
        CHECK(out[j] == -0.25f * float(j - 8));
        CHECK(out[16 + j] == -0.25f * float(15 - j - 8));
    }
    std::vector<float> ones(32, 1.0f);
    float sum = 0.0f;
    for (float v : out) sum += v;
    CHECK(vec_dot(DType::Q4_0, block, ones.data(), 32) == sum);
}

TEST_CASE("dequantize_row handles unaligned F16, BF16 and F32 rows", "[quant]") {
    unsigned char buf[1 + 3 * 4];
    const uint16_t h[3] = {0x3c00, 0xc000, 0x0001};
    std::memcpy(buf + 1, h, 6);
    float out[3];
    dequantize_row(DType::F16, buf + 1, out, 3);
    CHECK(out[0] == 1.0f);
    CHECK(out[1] == -2.0f);
    CHECK(out[2] == std::ldexp(1.0f, -24));
    const uint16_t b[2] = {0x3f80, 0x4040};
    std::memcpy(buf + 1, b, 4);
    dequantize_row(DType::BF16, buf + 1, out, 2);
    CHECK(out[0] == 1.0f);
    CHECK(out[1] == 3.0f);
    const float f[3] = {1.5f, -2.5f, 4.0f};
    std::memcpy(buf + 1, f, 12);
    dequantize_row(DType::F32, buf + 1, out, 3);
    CHECK(std::memcmp(out, f, 12) == 0);
    const float x[3] = {2.0f, 1.0f, 0.5f};
    CHECK(vec_dot(DType::F32, buf + 1, x, 3) == 2.5f);
}

TEST_CASE("reference quantizers reproduce their input within one step", "[quant]") {
    std::vector<float> x(64);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(float(i) * 0.7f) * (i < 32 ? 1.0f : 3.0f);
    std::vector<unsigned char> q8(2 * 34), q4(2 * 18);
    quantize_row(DType::Q8_0, x.data(), q8.data(), 64);
    quantize_row(DType::Q4_0, x.data(), q4.data(), 64);
    std::vector<float> y8(64), y4(64);
    dequantize_row(DType::Q8_0, q8.data(), y8.data(), 64);
    dequantize_row(DType::Q4_0, q4.data(), y4.data(), 64);
    for (size_t i = 0; i < 64; ++i) {
        const float scale = i < 32 ? 1.0f : 3.0f;
        CHECK(std::fabs(y8[i] - x[i]) <= scale / 127.0f);
        CHECK(std::fabs(y4[i] - x[i]) <= scale / 8.0f);
    }
    float dot = 0.0f;
    for (size_t i = 0; i < 64; ++i) dot += y8[i] * x[i];
    CHECK(vec_dot(DType::Q8_0, q8.data(), x.data(), 64) == Approx(dot).epsilon(1e-5));
}
