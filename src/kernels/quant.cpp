// Scalar reference kernels for the weight number formats (see include/journey/kernels/quant.h).
#include "journey/kernels/quant.h"

#include "journey/kernels/convert.h"
#include "dequant_blocks.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace journey {

// ---- half and bfloat16 ----------------------------------------------------------------------

// One exact conversion for the whole project: the inline ones the kernels use (convert.h).
float fp16_to_fp32(uint16_t h) { return f16_to_f32(h); }

// Drop the low `shift` bits of q_full (shift >= 1), rounding to nearest, ties to even.
static uint32_t round_shift_even(uint32_t q_full, int shift) {
    const uint32_t q = shift >= 32 ? 0 : q_full >> shift;
    const uint64_t rem = q_full & ((uint64_t(1) << shift) - 1);
    const uint64_t half = uint64_t(1) << (shift - 1);
    return (rem > half || (rem == half && (q & 1))) ? q + 1 : q;
}

uint16_t fp32_to_fp16(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint16_t sign = uint16_t((x >> 16) & 0x8000);
    const uint32_t a = x & 0x7fffffff;
    if (a >= 0x7f800000) {  // inf or NaN (keep NaN a NaN, quiet)
        return a == 0x7f800000 ? uint16_t(sign | 0x7c00) : uint16_t(sign | 0x7e00 | ((a >> 13) & 0x3ff));
    }
    const int e = int(a >> 23);          // biased float exponent
    const uint32_t m = a & 0x7fffff;
    if (e >= 113) {                      // normal half range (may round up to infinity)
        const uint32_t q = (uint32_t(e - 112) << 10) | (m >> 13);
        const uint32_t rem = m & 0x1fff;
        const uint32_t r = (rem > 0x1000 || (rem == 0x1000 && (q & 1))) ? q + 1 : q;
        return r >= 0x7c00 ? uint16_t(sign | 0x7c00) : uint16_t(sign | r);
    }
    if (e < 101) return sign;            // below 2^-26: rounds to zero
    // subnormal half: value / 2^-24 = (m | implicit) * 2^(e - 126)
    return uint16_t(sign | round_shift_even(m | 0x800000, 126 - e));
}

float bf16_to_fp32(uint16_t b) { return bf16_to_f32(b); }

uint16_t fp32_to_bf16(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40);  // quiet NaN
    return uint16_t((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

// ---- reading blocks from possibly unaligned memory -------------------------------------------

static uint16_t load_u16(const unsigned char* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}

static void check_blocks(DType t, int64_t n) {
    const auto block = int64_t(dtype_block(t));
    if (n < 0 || n % block != 0)
        throw std::invalid_argument(std::string(dtype_name(t)) + ": row length " + std::to_string(n) +
                                    " is not a multiple of " + std::to_string(block));
}

// ---- dequantization --------------------------------------------------------------------------

void dequantize_row(DType t, const void* src, float* dst, int64_t n) {
    const auto* p = static_cast<const unsigned char*>(src);
    switch (t) {
        case DType::F32:
            std::memcpy(dst, p, size_t(n) * 4);
            return;
        case DType::F16:
            for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(load_u16(p + 2 * i));
            return;
        case DType::BF16:
            for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(load_u16(p + 2 * i));
            return;
        default: {  // block types, one block at a time (dequant_blocks.cpp)
            check_blocks(t, n);
            const auto block = int64_t(dtype_block(t));
            const size_t block_bytes = dtype_bytes(t, uint64_t(block));
            for (int64_t b = 0; b < n / block; ++b, p += block_bytes, dst += block) dequantize_block(t, p, dst);
            return;
        }
    }
}

// ---- dot products ----------------------------------------------------------------------------

float vec_dot(DType t, const void* row, const float* x, int64_t n) {
    const auto* p = static_cast<const unsigned char*>(row);
    float sum = 0.0f;
    switch (t) {
        case DType::F32:
            for (int64_t i = 0; i < n; ++i) {
                float w;
                std::memcpy(&w, p + 4 * i, 4);
                sum += w * x[i];
            }
            return sum;
        case DType::F16:
            for (int64_t i = 0; i < n; ++i) sum += fp16_to_fp32(load_u16(p + 2 * i)) * x[i];
            return sum;
        case DType::BF16:
            for (int64_t i = 0; i < n; ++i) sum += bf16_to_fp32(load_u16(p + 2 * i)) * x[i];
            return sum;
        case DType::Q8_0:
            check_blocks(t, n);
            for (int64_t b = 0; b < n / kQK; ++b, p += sizeof(BlockQ8_0), x += kQK) {
                const auto* q = reinterpret_cast<const int8_t*>(p + 2);
                float block = 0.0f;
                for (int j = 0; j < kQK; ++j) block += float(q[j]) * x[j];
                sum += fp16_to_fp32(load_u16(p)) * block;
            }
            return sum;
        case DType::Q4_0:
            check_blocks(t, n);
            for (int64_t b = 0; b < n / kQK; ++b, p += sizeof(BlockQ4_0), x += kQK) {
                const unsigned char* q = p + 2;
                float block = 0.0f;
                for (int j = 0; j < kQK / 2; ++j) {
                    block += float(int(q[j] & 0x0f) - 8) * x[j];
                    block += float(int(q[j] >> 4) - 8) * x[j + kQK / 2];
                }
                sum += fp16_to_fp32(load_u16(p)) * block;
            }
            return sum;
        default: {  // the other block types: each block dequantized, then multiplied in order
            check_blocks(t, n);
            const auto block = int64_t(dtype_block(t));
            const size_t block_bytes = dtype_bytes(t, uint64_t(block));
            float w[256];
            for (int64_t b = 0; b < n / block; ++b, p += block_bytes, x += block) {
                dequantize_block(t, p, w);
                for (int64_t j = 0; j < block; ++j) sum += w[j] * x[j];
            }
            return sum;
        }
    }
    return sum;
}

// ---- reference quantizers --------------------------------------------------------------------

void quantize_row_q8_0(const float* x, void* dst, int64_t n) {
    check_blocks(DType::Q8_0, n);
    auto* out = static_cast<unsigned char*>(dst);
    for (int64_t b = 0; b < n / kQK; ++b, x += kQK, out += sizeof(BlockQ8_0)) {
        float amax = 0.0f;  // largest magnitude in the block
        for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127.0f;
        const float inv = d != 0.0f ? 1.0f / d : 0.0f;
        const uint16_t dh = fp32_to_fp16(d);
        std::memcpy(out, &dh, 2);
        for (int j = 0; j < kQK; ++j) out[2 + j] = static_cast<unsigned char>(int8_t(std::round(x[j] * inv)));
    }
}

void quantize_row_q4_0(const float* x, void* dst, int64_t n) {
    check_blocks(DType::Q4_0, n);
    auto* out = static_cast<unsigned char*>(dst);
    for (int64_t b = 0; b < n / kQK; ++b, x += kQK, out += sizeof(BlockQ4_0)) {
        float amax = 0.0f, max = 0.0f;  // the element of largest magnitude, with its sign
        for (int j = 0; j < kQK; ++j) {
            if (std::fabs(x[j]) > amax) {
                amax = std::fabs(x[j]);
                max = x[j];
            }
        }
        const float d = max / -8.0f;  // so that max maps to quant 0 (value -8 * d)
        const float inv = d != 0.0f ? 1.0f / d : 0.0f;
        const uint16_t dh = fp32_to_fp16(d);
        std::memcpy(out, &dh, 2);
        auto q = [&](float v) { return std::min(15, int(int8_t(v * inv + 8.5f))); };
        for (int j = 0; j < kQK / 2; ++j)
            out[2 + j] = static_cast<unsigned char>(q(x[j]) | (q(x[j + kQK / 2]) << 4));
    }
}

}  // namespace journey
