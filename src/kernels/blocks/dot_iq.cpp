// One-token integer dots of the importance-matrix and ternary types (IQ2_XXS, IQ2_XS, IQ2_S,
// IQ3_XXS, IQ3_S, IQ1_S, IQ1_M, TQ1_0, TQ2_0) with x quantized as llama.cpp's Q8_K (blocks of
// 256), as llama.cpp's CPU backend multiplies them (ggml_vec_dot_iq*_q8_K).
//
// Each super-block of 256 is first unpacked into int8 weights q (a grid byte times its sign;
// IQ1: 8 · grid ± 1, the ±1/8 shift made an integer; TQ: the trit -1..1), an integer scale S per
// 4 elements (the type's 2u + 1 per 16 or 32; TQ: 1) and one float D (the f16 d times the type's
// constant: 1/8 for IQ2 and IQ1, 1/4 for IQ3_XXS, 1 for IQ3_S and TQ), so that w = D · S · q
// exactly as llama.cpp's dot reads it. Then, per super-block k with x's scale d_x:
//     isum = Σ_g S_g · Σ_{i in group g of 4} q_i · qx_i     (exact int32: |isum| < 2^26),
//     acc += float(isum) · (D · d_x),
// the row's dot being acc. llama.cpp computes the same integer sums (grouped per 32) and
// acc += (d · d_x) · isum, then scales by the constant: the same up to float rounding (the
// constants are powers of 2). The integer sum has no order, so the portable loop and the AVX-512
// VNNI one (|q| as unsigned bytes against x's quants with q's sign) give the same isum, and the
// float step is one shared statement: the same bits.
#include "dot_kinds.h"

#include <cstring>
#include <immintrin.h>

#include "journey/kernels/half.h"
#include "iq_grids.h"

namespace journey {
namespace {

struct SuperBlock {
    alignas(64) int8_t q[256];
    alignas(64) int32_t S[64];  // per group of 4 elements
    float D;
};

uint16_t u16_at(const unsigned char* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}

uint32_t u32_at(const unsigned char* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// Set the scale of the 16 or 32 elements from e0.
void scale(SuperBlock& u, int e0, int n, int32_t s) {
    for (int g = e0 / 4; g < (e0 + n) / 4; ++g) u.S[g] = s;
}

// 8 elements from a grid entry of 8 magnitudes and a sign byte.
void signed8(int8_t* q, uint64_t grid, uint8_t signs) {
    for (int j = 0; j < 8; ++j) q[j] = int8_t((signs >> j) & 1 ? -int(grid_byte(grid, j)) : int(grid_byte(grid, j)));
}

// 4 + 4 elements from two IQ3 grid entries of 4 magnitudes and a sign byte.
void signed44(int8_t* q, uint32_t g1, uint32_t g2, uint8_t signs) {
    signed8(q, uint64_t(g1) | uint64_t(g2) << 32, signs);
}

// The layouts are those of blocks/dequantize.cpp (one comment a type there).
void unpack(DType t, const unsigned char* b, SuperBlock& u) {
    int8_t* q = u.q;
    switch (t) {
        case DType::IQ2_XXS:
            u.D = fp16_to_fp32(b) * 0.125f;
            for (int ib = 0; ib < 8; ++ib) {
                const unsigned char* p = b + 2 + 8 * ib;
                const uint32_t aux = u32_at(p + 4);
                for (int l = 0; l < 4; ++l) signed8(q + 32 * ib + 8 * l, kIq2xxsGrid[p[l]], iq_signs((aux >> (7 * l)) & 127));
                scale(u, 32 * ib, 32, int32_t(2 * (aux >> 28) + 1));
            }
            return;
        case DType::IQ2_XS:
            u.D = fp16_to_fp32(b) * 0.125f;
            for (int ib = 0; ib < 8; ++ib) {
                for (int l = 0; l < 4; ++l) {
                    const uint16_t v = u16_at(b + 2 + 2 * (4 * ib + l));
                    signed8(q + 32 * ib + 8 * l, kIq2xsGrid[v & 511], iq_signs(v >> 9));
                }
                scale(u, 32 * ib, 16, 2 * (b[66 + ib] & 0xf) + 1);
                scale(u, 32 * ib + 16, 16, 2 * (b[66 + ib] >> 4) + 1);
            }
            return;
        case DType::IQ2_S:
            u.D = fp16_to_fp32(b) * 0.125f;
            for (int ib = 0; ib < 8; ++ib) {
                const unsigned char qh = b[66 + ib];
                for (int l = 0; l < 4; ++l)
                    signed8(q + 32 * ib + 8 * l, kIq2sGrid[b[2 + 4 * ib + l] | ((qh << (8 - 2 * l)) & 0x300)], b[34 + 4 * ib + l]);
                scale(u, 32 * ib, 16, 2 * (b[74 + ib] & 0xf) + 1);
                scale(u, 32 * ib + 16, 16, 2 * (b[74 + ib] >> 4) + 1);
            }
            return;
        case DType::IQ3_XXS:
            u.D = fp16_to_fp32(b) * 0.25f;
            for (int ib = 0; ib < 8; ++ib) {
                const unsigned char* qs = b + 2 + 8 * ib;
                const uint32_t aux = u32_at(b + 66 + 4 * ib);
                for (int l = 0; l < 4; ++l)
                    signed44(q + 32 * ib + 8 * l, kIq3xxsGrid[qs[2 * l]], kIq3xxsGrid[qs[2 * l + 1]], iq_signs((aux >> (7 * l)) & 127));
                scale(u, 32 * ib, 32, int32_t(2 * (aux >> 28) + 1));
            }
            return;
        case DType::IQ3_S:
            u.D = fp16_to_fp32(b);
            for (int ib = 0; ib < 8; ++ib) {
                const unsigned char* qs = b + 2 + 8 * ib;
                const unsigned char qh = b[66 + ib];
                for (int l = 0; l < 4; ++l)
                    signed44(q + 32 * ib + 8 * l, kIq3sGrid[qs[2 * l] | ((qh << (8 - 2 * l)) & 256)],
                             kIq3sGrid[qs[2 * l + 1] | ((qh << (7 - 2 * l)) & 256)], b[74 + 4 * ib + l]);
                scale(u, 32 * ib, 32, 1 + 2 * ((b[106 + ib / 2] >> (4 * (ib % 2))) & 0xf));
            }
            return;
        case DType::IQ1_S:
            u.D = fp16_to_fp32(b) * 0.125f;
            for (int ib = 0; ib < 8; ++ib) {
                const uint16_t qh = u16_at(b + 34 + 2 * ib);
                const int delta = qh & 0x8000 ? -1 : 1;
                for (int l = 0; l < 4; ++l) {
                    const uint64_t grid = kIq1sGrid[b[2 + 4 * ib + l] | (((qh >> (3 * l)) & 7) << 8)];
                    for (int j = 0; j < 8; ++j) q[32 * ib + 8 * l + j] = int8_t(8 * int8_t(grid_byte(grid, j)) + delta);
                }
                scale(u, 32 * ib, 32, 2 * ((qh >> 12) & 7) + 1);
            }
            return;
        case DType::IQ1_M: {
            uint16_t sc[4];
            std::memcpy(sc, b + 48, 8);
            u.D = fp16_to_fp32(uint16_t((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000))) * 0.125f;
            for (int ib = 0; ib < 8; ++ib) {
                const unsigned char* qs = b + 4 * ib;
                const unsigned char* qh = b + 32 + 2 * ib;
                for (int l = 0; l < 4; ++l) {
                    const int h = qh[l / 2] >> (4 * (l % 2));  // 3 index bits, then the shift's sign
                    const uint64_t grid = kIq1sGrid[qs[l] | ((h & 7) << 8)];
                    const int delta = h & 8 ? -1 : 1;
                    for (int j = 0; j < 8; ++j) q[32 * ib + 8 * l + j] = int8_t(8 * int8_t(grid_byte(grid, j)) + delta);
                }
                scale(u, 32 * ib, 16, 2 * ((sc[ib / 2] >> (6 * (ib % 2))) & 7) + 1);
                scale(u, 32 * ib + 16, 16, 2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 7) + 1);
            }
            return;
        }
        case DType::TQ1_0: {
            u.D = fp16_to_fp32(b + 52);
            static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
            auto trit = [](uint8_t v, int n) { return int8_t(((uint8_t(v * kPow3[n]) * 3) >> 8) - 1); };
            for (int n = 0; n < 5; ++n)
                for (int m = 0; m < 32; ++m) *q++ = trit(b[m], n);
            for (int n = 0; n < 5; ++n)
                for (int m = 0; m < 16; ++m) *q++ = trit(b[32 + m], n);
            for (int n = 0; n < 4; ++n)
                for (int j = 0; j < 4; ++j) *q++ = trit(b[48 + j], n);
            scale(u, 0, 256, 1);
            return;
        }
        case DType::TQ2_0:
            u.D = fp16_to_fp32(b + 64);
            for (int j = 0; j < 64; j += 32)
                for (int l = 0; l < 4; ++l)
                    for (int m = 0; m < 32; ++m) *q++ = int8_t(((b[j + m] >> (2 * l)) & 3) - 1);
            scale(u, 0, 256, 1);
            return;
        default: return;
    }
}

int32_t isum_portable(const SuperBlock& u, const int8_t* qx) {
    int32_t isum = 0;
    for (int g = 0; g < 64; ++g) {
        const int8_t* w = u.q + 4 * g;
        const int8_t* x = qx + 4 * g;
        isum += u.S[g] * (w[0] * x[0] + w[1] * x[1] + w[2] * x[2] + w[3] * x[3]);
    }
    return isum;
}

// vpdpbusd multiplies unsigned by signed bytes: |q| against qx with q's sign (Q8_K's quants are
// -127..127, so negating one cannot overflow).
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) int32_t isum_vnni(const SuperBlock& u, const int8_t* qx) {
    __m512i acc = _mm512_setzero_si512();
    for (int c = 0; c < 4; ++c) {
        const __m512i w = _mm512_load_si512(u.q + 64 * c);
        const __m512i x = _mm512_loadu_si512(qx + 64 * c);
        const __m512i xs = _mm512_mask_sub_epi8(x, _mm512_movepi8_mask(w), _mm512_setzero_si512(), x);
        const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_abs_epi8(w), xs);
        acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(dot, _mm512_load_si512(u.S + 16 * c)));
    }
    alignas(64) int32_t lanes[16];  // (not _mm512_reduce_add_epi32: GCC 12 warns falsely inside it)
    _mm512_store_si512(lanes, acc);
    int32_t isum = 0;
    for (int32_t v : lanes) isum += v;
    return isum;
}

}  // namespace

bool has_iq_dot(DType t) {
    switch (t) {
        case DType::IQ2_XXS: case DType::IQ2_XS: case DType::IQ2_S: case DType::IQ3_XXS: case DType::IQ3_S:
        case DType::IQ1_S: case DType::IQ1_M: case DType::TQ1_0: case DType::TQ2_0: return true;
        default: return false;
    }
}

void dot_rows_iq(float* out, const Matrix& W, const QuantizedActivations& x, int64_t r0, int64_t r1, bool fast) {
    const size_t block_bytes = dtype_bytes(W.dtype, 256), row_bytes = dtype_bytes(W.dtype, uint64_t(W.cols));
    const int64_t nb = W.cols / 256;
    SuperBlock u;
    for (int64_t r = r0; r < r1; ++r) {
        const auto* row = reinterpret_cast<const unsigned char*>(W.data + size_t(r) * row_bytes);
        float acc = 0.0f;
        for (int64_t k = 0; k < nb; ++k) {
            unpack(W.dtype, row + size_t(k) * block_bytes, u);
            const int8_t* qx = x.q.data() + 256 * k;
            const int32_t isum = fast ? isum_vnni(u, qx) : isum_portable(u, qx);
            acc += float(isum) * (u.D * x.d[size_t(k)]);
        }
        out[r] = acc;
    }
}

}  // namespace journey
