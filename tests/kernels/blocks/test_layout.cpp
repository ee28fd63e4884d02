// Block formats on blocks built by hand from the GGUF specification (blocks/layout.h): bit-exact
// dequantization of Q8_0 / Q4_0, unaligned F16/BF16/F32 rows, and the encoders' round trip.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "journey/kernels/blocks/dequantize.h"
#include "journey/kernels/blocks/quantize.h"

using namespace journey;

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
