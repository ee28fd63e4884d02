// Blocks to floats: one function a type, following ggml's dequantize_row_* (the block structs of
// ggml-common.h; layouts in blocks/layout.h). Written as ggml writes it, product by product, so
// each value is the same float expression as ggml's, hence the same bits
// (tests/kernels/blocks/test_dequantize.cpp checks against rows dequantized by gguf-py and ggml). Then the
// row-level entries: dequantize_row (any dtype) and vec_dot, the scalar reference dot.
#include "journey/kernels/blocks/dequantize.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "journey/kernels/blocks/layout.h"
#include "journey/kernels/half.h"

namespace journey {
namespace {

// Q8_0: d, qs[32]                                   y = d * q
void q8_0(const unsigned char* b, float* y) {
    const float d = fp16_to_fp32(b);
    for (int j = 0; j < 32; ++j) y[j] = float(int8_t(b[2 + j])) * d;
}

// Q4_0: d, qs[16]                                   y = (nibble - 8) * d
void q4_0(const unsigned char* b, float* y) {
    const float d = fp16_to_fp32(b);
    const unsigned char* qs = b + 2;
    for (int j = 0; j < 16; ++j) {
        y[j] = float((qs[j] & 0x0f) - 8) * d;
        y[j + 16] = float((qs[j] >> 4) - 8) * d;
    }
}

// Q4_1: d, m, qs[16]                                y = nibble * d + m
void q4_1(const unsigned char* b, float* y) {
    const float d = fp16_to_fp32(b), m = fp16_to_fp32(b + 2);
    const unsigned char* qs = b + 4;
    for (int j = 0; j < 16; ++j) {
        y[j] = float(qs[j] & 0x0f) * d + m;
        y[j + 16] = float(qs[j] >> 4) * d + m;
    }
}

// Q5_0 / Q5_1: d, [m], qh (32 fifth bits, little-endian u32), qs[16]:
// element j < 16 is the low nibble of qs[j] with bit j of qh; element j + 16 the high nibble
// with bit j + 16.                                  Q5_0: y = (q - 16) * d; Q5_1: y = q * d + m
template <bool kMin>
void q5(const unsigned char* b, float* y) {
    const float d = fp16_to_fp32(b), m = kMin ? fp16_to_fp32(b + 2) : 0.0f;
    const unsigned char* p = b + (kMin ? 4 : 2);
    uint32_t qh;
    std::memcpy(&qh, p, 4);
    const unsigned char* qs = p + 4;
    for (int j = 0; j < 16; ++j) {
        const int x0 = (qs[j] & 0x0f) | int(((qh >> j) << 4) & 0x10);
        const int x1 = (qs[j] >> 4) | int((qh >> (j + 12)) & 0x10);
        if constexpr (kMin) {
            y[j] = float(x0) * d + m;
            y[j + 16] = float(x1) * d + m;
        } else {
            y[j] = float(x0 - 16) * d;
            y[j + 16] = float(x1 - 16) * d;
        }
    }
}

// Q2_K: scales[16] (low nibble scale, high nibble min, per 16 elements), qs[64] (2 bits),
// d, dmin. Per half of 128: byte l of qs (l < 32) holds elements l, l+32, l+64, l+96 in bits
// 0-1, 2-3, 4-5, 6-7.                               y = (d * sc) * q - (dmin * m)
void q2_k(const unsigned char* b, float* y) {
    const unsigned char* scales = b;
    const unsigned char* q = b + 16;
    const float d = fp16_to_fp32(b + 80), dmin = fp16_to_fp32(b + 82);
    int is = 0;
    for (int n = 0; n < 256; n += 128, q += 32) {
        for (int shift = 0; shift < 8; shift += 2) {
            for (int half = 0; half < 2; ++half) {
                const uint8_t sc = scales[is++];
                const float dl = d * float(sc & 0x0f), ml = dmin * float(sc >> 4);
                for (int l = 0; l < 16; ++l) *y++ = dl * float((q[l + 16 * half] >> shift) & 3) - ml;
            }
        }
    }
}

// Q3_K: hmask[32] (third bit, clear means -4), qs[64] (2 low bits, as Q2_K), scales[12]
// (16 6-bit scales), d.                             y = (d * (sc - 32)) * (q - (hbit ? 0 : 4))
void q3_k(const unsigned char* b, float* y) {
    const unsigned char* hm = b;
    const unsigned char* q = b + 32;
    int8_t scales[16];
    scales_q3_k(b + 96, scales);
    const float d_all = fp16_to_fp32(b + 108);
    int is = 0;
    uint8_t m = 1;
    for (int n = 0; n < 256; n += 128, q += 32) {
        for (int shift = 0; shift < 8; shift += 2, m = uint8_t(m << 1)) {
            for (int half = 0; half < 2; ++half) {
                const float dl = d_all * float(scales[is++] - 32);
                for (int l = 16 * half; l < 16 * half + 16; ++l)
                    *y++ = dl * float(((q[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4));
            }
        }
    }
}

// Q4_K: d, dmin, scales[12] (8 6-bit scales and mins, scale_min_k4), qs[128]. Per 64
// elements: byte l of qs holds element l in its low nibble, l + 32 in its high nibble.
//                                                   y = (d * sc) * q - (dmin * m)
// Q5_K: the same with qh[32] before qs: bit 2i of qh[l] is the fifth bit of element l of the
// i-th 64, bit 2i+1 of element l + 32.
template <bool kFive>
void q45_k(const unsigned char* b, float* y) {
    const float d = fp16_to_fp32(b), dmin = fp16_to_fp32(b + 2);
    const unsigned char* scales = b + 4;
    const unsigned char* qh = b + 16;
    const unsigned char* ql = b + (kFive ? 48 : 16);
    uint8_t u1 = 1, u2 = 2;
    for (int is = 0; is < 8; is += 2, ql += 32, u1 = uint8_t(u1 << 2), u2 = uint8_t(u2 << 2)) {
        uint8_t sc, m;
        scale_min_k4(is, scales, sc, m);
        const float d1 = d * float(sc), m1 = dmin * float(m);
        scale_min_k4(is + 1, scales, sc, m);
        const float d2 = d * float(sc), m2 = dmin * float(m);
        for (int l = 0; l < 32; ++l) *y++ = d1 * float((ql[l] & 0x0f) + (kFive && (qh[l] & u1) ? 16 : 0)) - m1;
        for (int l = 0; l < 32; ++l) *y++ = d2 * float((ql[l] >> 4) + (kFive && (qh[l] & u2) ? 16 : 0)) - m2;
    }
}

// Q6_K: ql[128] (low 4 bits), qh[64] (high 2 bits), scales[16] (int8, per 16 elements), d.
// Per 128 elements: element l (< 32) is ql[l] low | qh[l] bits 0-1, l+32 ql[l+32] low | bits
// 2-3, l+64 ql[l] high | bits 4-5, l+96 ql[l+32] high | bits 6-7.
//                                                   y = (d * sc) * (q - 32)
void q6_k(const unsigned char* b, float* y) {
    const unsigned char* ql = b;
    const unsigned char* qh = b + 128;
    const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
    const float d = fp16_to_fp32(b + 208);
    for (int n = 0; n < 256; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
        for (int l = 0; l < 32; ++l) {
            const int is = l / 16;
            const int q1 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
            const int q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
            const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l] = d * float(sc[is]) * float(q1);
            y[l + 32] = d * float(sc[is + 2]) * float(q2);
            y[l + 64] = d * float(sc[is + 4]) * float(q3);
            y[l + 96] = d * float(sc[is + 6]) * float(q4);
        }
    }
}

// IQ4_NL: d, qs[16] (as Q4_0)                       y = d * kIq4Values[nibble]
void iq4_nl(const unsigned char* b, float* y) {
    const float d = fp16_to_fp32(b);
    const unsigned char* qs = b + 2;
    for (int j = 0; j < 16; ++j) {
        y[j] = d * float(kIq4Values[qs[j] & 0x0f]);
        y[j + 16] = d * float(kIq4Values[qs[j] >> 4]);
    }
}

// IQ4_XS: d, scales_h (u16: 2 high bits per 32), scales_l[4] (a nibble per 32), qs[128] (16
// bytes per 32, as IQ4_NL).                         y = (d * (ls - 32)) * kIq4Values[nibble]
void iq4_xs(const unsigned char* b, float* y) {
    const float d = fp16_to_fp32(b);
    uint16_t scales_h;
    std::memcpy(&scales_h, b + 2, 2);
    const unsigned char* scales_l = b + 4;
    const unsigned char* qs = b + 8;
    for (int ib = 0; ib < 8; ++ib, y += 32, qs += 16) {
        const int ls = ((scales_l[ib / 2] >> 4 * (ib % 2)) & 0x0f) | (((scales_h >> 2 * ib) & 3) << 4);
        const float dl = d * float(ls - 32);
        for (int j = 0; j < 16; ++j) {
            y[j] = dl * float(kIq4Values[qs[j] & 0x0f]);
            y[j + 16] = dl * float(kIq4Values[qs[j] >> 4]);
        }
    }
}

}  // namespace

void scales_q3_k(const unsigned char* packed, int8_t* scales) {
    // ggml's unpacking: bytes 0-7 hold the low nibbles (scale j in byte j % 8, nibble j / 8),
    // bytes 8-11 the high 2 bits (scale j in byte 8 + j % 4, bits 2 (j / 4) .. 2 (j / 4) + 1).
    for (int j = 0; j < 16; ++j) {
        const int low = (packed[j % 8] >> (4 * (j / 8))) & 0x0f;
        const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
        scales[j] = int8_t(low | (high << 4));
    }
}

void dequantize_block(DType t, const unsigned char* src, float* dst) {
    switch (t) {
        case DType::Q8_0: return q8_0(src, dst);
        case DType::Q4_0: return q4_0(src, dst);
        case DType::Q4_1: return q4_1(src, dst);
        case DType::Q5_0: return q5<false>(src, dst);
        case DType::Q5_1: return q5<true>(src, dst);
        case DType::Q2_K: return q2_k(src, dst);
        case DType::Q3_K: return q3_k(src, dst);
        case DType::Q4_K: return q45_k<false>(src, dst);
        case DType::Q5_K: return q45_k<true>(src, dst);
        case DType::Q6_K: return q6_k(src, dst);
        case DType::IQ4_NL: return iq4_nl(src, dst);
        case DType::IQ4_XS: return iq4_xs(src, dst);
        case DType::F32:
        case DType::F16:
        case DType::BF16: break;
    }
    throw std::logic_error("dequantize_block: " + std::string(dtype_name(t)) + " is not a block type");
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
            for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(p + 2 * i);
            return;
        case DType::BF16:
            for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(load_u16(p + 2 * i));
            return;
        default: {  // block types, one block at a time (above)
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
            for (int64_t i = 0; i < n; ++i) sum += fp16_to_fp32(p + 2 * i) * x[i];
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
                sum += fp16_to_fp32(p) * block;
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
                sum += fp16_to_fp32(p) * block;
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

}  // namespace journey
