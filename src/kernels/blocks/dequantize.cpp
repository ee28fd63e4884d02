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
#include "iq_grids.h"

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


// ---- the importance-matrix types (IQ2, IQ3, IQ1), ternary TQ1_0 / TQ2_0, MXFP4 ------------------
// Grids and sign patterns: blocks/iq_grids.h. Each value is a grid byte times a sign (or, IQ1, a
// grid value plus a ±1/8 shift) times a scale per 16 or 32, written as ggml writes it.

float sign_of(uint8_t signs, int j) { return (signs >> j) & 1 ? -1.0f : 1.0f; }

// IQ2_XXS: d, then per 32 two u32: 4 grid indices (bytes), then 4 x 7 sign bits and a 4-bit
// scale u in the top nibble.                       y = (d * (0.5 + u) * 0.25) * grid * sign
void iq2_xxs(const unsigned char* b, float* y) {
    const float d = fp16_to_fp32(b);
    for (int ib = 0; ib < 8; ++ib) {
        const unsigned char* q = b + 2 + 8 * ib;
        const uint32_t aux = u32_at(q + 4);
        const float db = d * (0.5f + float(aux >> 28)) * 0.25f;
        for (int l = 0; l < 4; ++l, y += 8) {
            const uint64_t grid = kIq2xxsGrid[q[l]];
            const uint8_t signs = iq_signs((aux >> (7 * l)) & 127);
            for (int j = 0; j < 8; ++j) y[j] = db * float(grid_byte(grid, j)) * sign_of(signs, j);
        }
    }
}

// IQ2_XS: d, qs[32] u16 (9-bit grid index, 7 sign bits), scales[8] (a nibble per 16).
//                                                   y = (d * (0.5 + nibble) * 0.25) * grid * sign
void iq2_xs(const unsigned char* b, float* y) {
    const float d = fp16_to_fp32(b);
    const unsigned char* scales = b + 66;
    for (int ib = 0; ib < 8; ++ib) {
        const float db[2] = {d * (0.5f + float(scales[ib] & 0xf)) * 0.25f, d * (0.5f + float(scales[ib] >> 4)) * 0.25f};
        for (int l = 0; l < 4; ++l, y += 8) {
            const uint16_t q = u16_at(b + 2 + 2 * (4 * ib + l));
            const uint64_t grid = kIq2xsGrid[q & 511];
            const uint8_t signs = iq_signs(q >> 9);
            for (int j = 0; j < 8; ++j) y[j] = db[l / 2] * float(grid_byte(grid, j)) * sign_of(signs, j);
        }
    }
}

// IQ2_S: d, qs[32] (grid index low bytes), signs[32] (a byte per 8), qh[8] (2 high index bits
// per 8), scales[8] (a nibble per 16).              y = (d * (0.5 + nibble) * 0.25) * grid * sign
void iq2_s(const unsigned char* b, float* y) {
    const float d = fp16_to_fp32(b);
    const unsigned char* qs = b + 2;
    const unsigned char* signs = b + 34;
    const unsigned char* qh = b + 66;
    const unsigned char* scales = b + 74;
    for (int ib = 0; ib < 8; ++ib, qs += 4, signs += 4) {
        const float db[2] = {d * (0.5f + float(scales[ib] & 0xf)) * 0.25f, d * (0.5f + float(scales[ib] >> 4)) * 0.25f};
        for (int l = 0; l < 4; ++l, y += 8) {
            const uint64_t grid = kIq2sGrid[qs[l] | ((qh[ib] << (8 - 2 * l)) & 0x300)];
            for (int j = 0; j < 8; ++j) y[j] = db[l / 2] * float(grid_byte(grid, j)) * sign_of(signs[l], j);
        }
    }
}

// IQ3_XXS: d, qs[64] (a grid index per 4), then per 32 a u32: 4 x 7 sign bits and a 4-bit
// scale u.                                          y = (d * (0.5 + u) * 0.5) * grid * sign
void iq3_xxs(const unsigned char* b, float* y) {
    const float d = fp16_to_fp32(b);
    const unsigned char* qs = b + 2;
    for (int ib = 0; ib < 8; ++ib, qs += 8) {
        const uint32_t aux = u32_at(b + 66 + 4 * ib);
        const float db = d * (0.5f + float(aux >> 28)) * 0.5f;
        for (int l = 0; l < 4; ++l, y += 8) {
            const uint8_t signs = iq_signs((aux >> (7 * l)) & 127);
            const uint32_t g1 = kIq3xxsGrid[qs[2 * l]], g2 = kIq3xxsGrid[qs[2 * l + 1]];
            for (int j = 0; j < 4; ++j) {
                y[j] = db * float(grid_byte(g1, j)) * sign_of(signs, j);
                y[j + 4] = db * float(grid_byte(g2, j)) * sign_of(signs, j + 4);
            }
        }
    }
}

// IQ3_S: d, qs[64] (grid index low bytes, one per 4), qh[8] (the 9th index bits, one byte per
// 32), signs[32] (a byte per 8), scales[4] (a nibble per 32).   y = (d * (1 + 2 nibble)) * grid * sign
void iq3_s(const unsigned char* b, float* y) {
    const float d = fp16_to_fp32(b);
    const unsigned char* qs = b + 2;
    const unsigned char* qh = b + 66;
    const unsigned char* signs = b + 74;
    const unsigned char* scales = b + 106;
    for (int ib = 0; ib < 8; ++ib, qs += 8, signs += 4) {
        const float db = d * float(1 + 2 * ((scales[ib / 2] >> (4 * (ib % 2))) & 0xf));
        for (int l = 0; l < 4; ++l, y += 8) {
            const uint32_t g1 = kIq3sGrid[qs[2 * l] | ((qh[ib] << (8 - 2 * l)) & 256)];
            const uint32_t g2 = kIq3sGrid[qs[2 * l + 1] | ((qh[ib] << (7 - 2 * l)) & 256)];
            for (int j = 0; j < 4; ++j) {
                y[j] = db * float(grid_byte(g1, j)) * sign_of(signs[l], j);
                y[j + 4] = db * float(grid_byte(g2, j)) * sign_of(signs[l], j + 4);
            }
        }
    }
}

constexpr float kIq1Delta = 0.125f;  // IQ1S_DELTA = IQ1M_DELTA

// IQ1_S: d, qs[32] (grid index low bytes, one per 8), qh[8] u16 per 32: 4 x 3 high index bits,
// a 3-bit scale s (bits 12-14), the shift's sign (bit 15).
//                                                   y = (d * (2s + 1)) * (grid ± 1/8)
void iq1_s(const unsigned char* b, float* y) {
    const float d = fp16_to_fp32(b);
    const unsigned char* qs = b + 2;
    for (int ib = 0; ib < 8; ++ib, qs += 4) {
        const uint16_t qh = u16_at(b + 34 + 2 * ib);
        const float dl = d * float(2 * ((qh >> 12) & 7) + 1);
        const float delta = qh & 0x8000 ? -kIq1Delta : kIq1Delta;
        for (int l = 0; l < 4; ++l, y += 8) {
            const uint64_t grid = kIq1sGrid[qs[l] | (((qh >> (3 * l)) & 7) << 8)];
            for (int j = 0; j < 8; ++j) y[j] = dl * (float(int8_t(grid_byte(grid, j))) + delta);
        }
    }
}

// IQ1_M: qs[32] (grid index low bytes), qh[16] (per 8: 3 high index bits and the shift's sign,
// a nibble each), scales[8] = 4 u16: per 16 a 3-bit scale s (6 bits per 32), and the top nibble
// of each u16 together the f16 d.                  y = (d * (2s + 1)) * (grid ± 1/8)
void iq1_m(const unsigned char* b, float* y) {
    const unsigned char* qs = b;
    const unsigned char* qh = b + 32;
    uint16_t sc[4];
    std::memcpy(sc, b + 48, 8);
    const uint16_t half = uint16_t((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
    const float d = fp16_to_fp32(half);
    for (int ib = 0; ib < 8; ++ib, qs += 4, qh += 2) {
        const float dl1 = d * float(2 * ((sc[ib / 2] >> (6 * (ib % 2) + 0)) & 0x7) + 1);
        const float dl2 = d * float(2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 0x7) + 1);
        const int idx[4] = {qs[0] | ((qh[0] << 8) & 0x700), qs[1] | ((qh[0] << 4) & 0x700), qs[2] | ((qh[1] << 8) & 0x700),
                            qs[3] | ((qh[1] << 4) & 0x700)};
        const float delta[4] = {qh[0] & 0x08 ? -kIq1Delta : kIq1Delta, qh[0] & 0x80 ? -kIq1Delta : kIq1Delta,
                                qh[1] & 0x08 ? -kIq1Delta : kIq1Delta, qh[1] & 0x80 ? -kIq1Delta : kIq1Delta};
        for (int l = 0; l < 4; ++l, y += 8) {
            const uint64_t grid = kIq1sGrid[idx[l]];
            const float dl = l < 2 ? dl1 : dl2;
            for (int j = 0; j < 8; ++j) y[j] = dl * (float(int8_t(grid_byte(grid, j))) + delta[l]);
        }
    }
}

// TQ1_0's trit n (0..4) of a byte holding 5 (or 4) base-3 digits, most significant first, as a
// fixed-point fraction: ggml's ((uint8_t)(q * 3^n) * 3) >> 8, a value 0..2 standing for -1..1.
int trit(uint8_t q, int n) {
    static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
    return ((uint8_t(q * kPow3[n]) * 3) >> 8) - 1;
}

// TQ1_0: qs[48] (5 trits a byte), qh[4] (4 trits a byte), d. Elements: qs[m] trit n for
// element 32n + m (m < 32), qs[32 + m] trit n for 160 + 16n + m (m < 16), qh[j] trit n for 240
// + 4n + j.                                          y = trit * d
void tq1_0(const unsigned char* b, float* y) {
    const float d = fp16_to_fp32(b + 52);
    for (int n = 0; n < 5; ++n)
        for (int m = 0; m < 32; ++m) *y++ = float(trit(b[m], n)) * d;
    for (int n = 0; n < 5; ++n)
        for (int m = 0; m < 16; ++m) *y++ = float(trit(b[32 + m], n)) * d;
    for (int n = 0; n < 4; ++n)
        for (int j = 0; j < 4; ++j) *y++ = float(trit(b[48 + j], n)) * d;
}

// TQ2_0: qs[64] (2 bits a trit, stored + 1), d. Per 128: bits 2l of qs[32c + m] for element
// 128c' + 32l + m.                                  y = (q - 1) * d
void tq2_0(const unsigned char* b, float* y) {
    const float d = fp16_to_fp32(b + 64);
    for (int j = 0; j < 64; j += 32)
        for (int l = 0; l < 4; ++l)
            for (int m = 0; m < 32; ++m) *y++ = float(((b[j + m] >> (2 * l)) & 3) - 1) * d;
}

// MXFP4: e (E8M0 scale), qs[16] (as Q4_0: element j low nibble, j + 16 high nibble) indexing the
// doubled E2M1 values.                              y = value * 2^(e - 128)
void mxfp4(const unsigned char* b, float* y) {
    const float d = e8m0_half(b[0]);
    for (int j = 0; j < 16; ++j) {
        y[j] = float(kMxfp4Values[b[1 + j] & 0x0f]) * d;
        y[j + 16] = float(kMxfp4Values[b[1 + j] >> 4]) * d;
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
        case DType::IQ2_XXS: return iq2_xxs(src, dst);
        case DType::IQ2_XS: return iq2_xs(src, dst);
        case DType::IQ2_S: return iq2_s(src, dst);
        case DType::IQ3_XXS: return iq3_xxs(src, dst);
        case DType::IQ3_S: return iq3_s(src, dst);
        case DType::IQ1_S: return iq1_s(src, dst);
        case DType::IQ1_M: return iq1_m(src, dst);
        case DType::TQ1_0: return tq1_0(src, dst);
        case DType::TQ2_0: return tq2_0(src, dst);
        case DType::MXFP4: return mxfp4(src, dst);
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
            float w[256];  // the largest block
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
