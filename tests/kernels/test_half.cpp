// Half floats (half.h): exact F16/BF16 widening, narrowing to nearest even.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "journey/kernels/half.h"

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
